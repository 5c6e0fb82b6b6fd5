/* The pigeonhole filter's verification: the window of a piece hit compared
 * with its key (k mismatches), the anchored DPs on both sides of a piece
 * (k edits), and the end events held until no later anchor can lower them. */
#include <stdlib.h>

#include "engines/approx/pigeonhole_private.h"

/* Room for one more element in a doubling array; -1 when out of memory. */
static int grow(void **items, size_t n, size_t *cap, size_t elem, size_t first) {
    if (n < *cap) return 0;
    size_t next = *cap ? *cap * 2 : first;
    void *p = realloc(*items, next * elem);
    if (!p) return -1;
    *items = p;
    *cap = next;
    return 0;
}

int sm_ph_push_cand(sm_ph_state *st, uint64_t at, uint32_t key, uint32_t piece) {
    if (grow((void **)&st->cand, st->ncand, &st->cand_cap, sizeof *st->cand, 1024) != 0) return -1;
    ph_cand *c = &st->cand[st->ncand++];
    c->at = at;
    c->key = key;
    c->piece = piece;
    return 0;
}

static int push_event(sm_ph_state *st, uint64_t end, uint32_t key, uint32_t cost) {
    uint64_t h = (end * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)key * 0xc2b2ae3d27d4eb4full);
    ph_recent *r = &st->recent[(h >> 40) & (PH_RECENT - 1)];
    if (r->gen == st->gen && st->events[r->index].key == key && st->events[r->index].end == end) {
        if (cost < st->events[r->index].cost) st->events[r->index].cost = cost;
        return 0;
    }
    if (grow((void **)&st->events, st->nevents, &st->events_cap, sizeof *st->events, 256) != 0) return -1;
    r->gen = st->gen;
    r->index = (uint32_t)st->nevents;
    ph_event *e = &st->events[st->nevents++];
    e->end = end;
    e->key = key;
    e->cost = cost;
    return 0;
}


void sm_ph_verify_window(const sm_ph_header *h, const uint8_t *section, const sm_ph_key *key, uint32_t piece,
                         const uint8_t *t, uint64_t x, sm_sink *sink) {
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + key->first_piece;
    const uint64_t *peq = (const uint64_t *)(section + h->peq_off) + key->peq_at;
    uint32_t blocks = key->blocks, k = h->k, mism = 0;
    for (uint32_t p = 0; p <= k; p++) {
        if (p == piece) continue; /* exact by construction */
        uint32_t before = mism;
        for (uint32_t i = pc[p].offset, e = pc[p].offset + pc[p].length; i < e; i++) {
            uint64_t word = peq[(size_t)h->class_of[t[i]] * blocks + i / 64];
            if (!((word >> (i % 64)) & 1u) && ++mism > k) return;
        }
        if (p < piece && mism == before) return; /* piece p reports this window */
    }
    sm_sink_add(sink, x, x + key->length, key->output >> 1, (int)(key->output & 1u), mism);
}

/* Edit distance DP in a band |t - i| <= kk: rows i = key symbols from
   first, forwards (dir 1) or backwards (dir -1); columns t = text symbols
   from the anchor, text[t - 1] forwards or text[-t] backwards, at most
   avail of them. Both start at the anchor (D(0, t) = t, D(i, 0) = i);
   values above kk are kept as kk + 1. Leaves the last row in out[d],
   t = rows - kk + d, and returns its least value (kk + 1 when every cell
   of some row passed kk: the rest cannot come back). */
static uint32_t band_dp(const sm_ph_header *h, const sm_ph_key *key, const uint64_t *peq, uint32_t first, int dir,
                        uint32_t rows, const uint8_t *text, uint64_t avail, uint32_t kk, uint32_t *work,
                        uint32_t **out) {
    uint32_t width = 2 * kk + 1, dead = kk + 1, blocks = key->blocks;
    uint32_t *prev = work, *cur = work + width;
    uint32_t least = dead;
    for (uint32_t d = 0; d < width; d++) {
        int64_t t = (int64_t)d - kk;
        prev[d] = t >= 0 && (uint64_t)t <= avail ? (uint32_t)t : dead;
        if (prev[d] < least) least = prev[d];
    }
    for (uint32_t i = 1; i <= rows; i++) {
        uint32_t j = dir > 0 ? first + i - 1 : first - (i - 1);
        least = dead;
        for (uint32_t d = 0; d < width; d++) {
            int64_t t = (int64_t)i + d - kk;
            if (t < 0 || (uint64_t)t > avail) {
                cur[d] = dead;
                continue;
            }
            uint32_t v = d + 1 < width ? prev[d + 1] + 1 : dead;     /* key symbol unmatched */
            if (d > 0 && cur[d - 1] + 1 < v) v = cur[d - 1] + 1;     /* text symbol unmatched */
            if (t >= 1) {
                uint8_t byte = dir > 0 ? text[t - 1] : text[-t];
                uint64_t word = peq[(size_t)h->class_of[byte] * blocks + j / 64];
                uint32_t diag = prev[d] + (uint32_t)(((word >> (j % 64)) & 1u) ^ 1u);
                if (diag < v) v = diag;
            }
            if (v > dead) v = dead;
            cur[d] = v;
            if (v < least) least = v;
        }
        if (least > kk) return dead;
        uint32_t *swap = prev;
        prev = cur;
        cur = swap;
    }
    *out = prev;
    return least;
}

/* Anchored Myers for a piece of a one-block key: rows = the key symbols
   [lo, lo + rows) read in the word's order (eq words shifted right by lo),
   columns = text symbols from the anchor, text[t - 1] forwards or text[-t]
   backwards (dir), at most avail of them. D(0, t) = t and D(i, 0) = i.
   Ukkonen's cut-off tracks the last row y with D(y, t) <= kk and stops
   when there is none: no later cell can come back under kk. Calls back
   ends[t] = D(rows, t) for every column t with D(rows, t) <= kk through
   *ends (least is returned; kk + 1 when none). */
static uint32_t anchored_myers(const sm_ph_header *h, const uint64_t *peq, uint32_t lo, int dir, uint32_t rows,
                               const uint8_t *text, uint64_t avail, uint32_t kk, uint8_t *ends, int *died) {
    uint64_t mask = rows == 64 ? ~(uint64_t)0 : (((uint64_t)1 << rows) - 1);
    uint64_t columns = (uint64_t)rows + kk < avail ? (uint64_t)rows + kk : avail;
    ph_alive a = ph_alive_start(rows, kk);
    if (rows <= kk) ends[0] = (uint8_t)rows;
    for (uint64_t t = 1; t <= columns; t++) {
        uint8_t byte = dir > 0 ? text[t - 1] : text[-(int64_t)t];
        ph_alive_step(&a, (peq[h->class_of[byte]] >> lo) & mask, rows, kk);
        if (a.died) {
            if (died) *died = 1;
            return a.least;
        }
        if (a.y == rows) ends[t] = (uint8_t)a.score_y; /* then score_y is D(rows, t) */
    }
    return a.least;
}

void sm_ph_verify_anchor(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint32_t key_index,
                         uint32_t piece, uint64_t q, uint64_t buf_pos0, uint64_t limit, sm_sink *sink) {
    const sm_ph_key *key = (const sm_ph_key *)(section + h->keys_off) + key_index;
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + piece;
    const uint64_t *peq = (const uint64_t *)(section + h->peq_off) + key->peq_at;
    uint32_t k = h->k, *row;
    const uint8_t *at_q = st->buf + (q - buf_pos0);
    uint64_t floor = st->seq_start > buf_pos0 ? st->seq_start : buf_pos0;
    /* The key before the piece, against the text before q (free start). */
    uint32_t before = 0;
    uint8_t ends[64 + 256];
    int fast = key->blocks == 1 && k <= 255;
    uint32_t rest = key->length - pc->offset - pc->length;
    if (h->alive_off) {
        /* Most anchors die within the first few symbols on either side:
           the tables of the piece say so from those symbols alone. */
        uint32_t c = h->alive_columns;
        uint64_t words = ((uint64_t)1 << (2 * c)) / 64;
        const uint64_t *alive = (const uint64_t *)(section + h->alive_off) + (uint64_t)piece * 2 * words;
        if (pc->offset > 0 && q - floor >= c) {
            uint32_t code = 0, bad = 0;
            for (uint32_t j = 0; j < c; j++) { /* the base nearest the piece lowest */
                uint32_t v = st->code_of[at_q[-1 - (int64_t)j]];
                bad |= v;
                code |= (v & 3u) << (2 * j);
            }
            if (bad < 4 && !((alive[code / 64] >> (code % 64)) & 1u)) return;
        }
        if (rest > 0 && q + pc->length + c <= limit) {
            uint32_t code = 0, bad = 0;
            for (uint32_t j = 0; j < c; j++) {
                uint32_t v = st->code_of[at_q[pc->length + j]];
                bad |= v;
                code |= (v & 3u) << (2 * j);
            }
            if (bad < 4 && !((alive[words + code / 64] >> (code % 64)) & 1u)) return;
        }
    }
    if (pc->offset > 0) {
        if (fast) /* backwards: the reversed rows, key symbols o - 1 down to 0 */
            before = anchored_myers(h, peq + h->rows, key->length - pc->offset, -1, pc->offset, at_q, q - floor, k,
                                    ends, NULL);
        else
            before = band_dp(h, key, peq, pc->offset - 1, -1, pc->offset, at_q, q - floor, k, st->band, &row);
        if (before > k) return;
    }
    /* The key after the piece, against the text after it: every end. */
    uint64_t after_pos = q + pc->length;
    if (after_pos > limit) return;
    uint32_t kk = k - before;
    if (fast && rest > 0) {
        uint64_t avail = limit - after_pos;
        memset(ends, 0xff, (size_t)rest + kk + 1);
        if (anchored_myers(h, peq, pc->offset + pc->length, 1, rest, at_q + pc->length, avail, kk, ends, NULL) > kk)
            return;
        for (uint32_t t = 0; t <= rest + kk && t <= avail; t++)
            if (ends[t] <= kk && push_event(st, after_pos + t, key_index, before + ends[t]) != 0) sink->failed = 1;
        return;
    }
    if (band_dp(h, key, peq, pc->offset + pc->length, 1, rest, at_q + pc->length, limit - after_pos, kk, st->band,
                &row) > kk)
        return;
    for (uint32_t d = 0; d <= 2 * kk; d++) {
        int64_t t = (int64_t)rest + d - kk;
        if (t < 0 || row[d] > kk) continue;
        if (push_event(st, after_pos + (uint64_t)t, key_index, before + row[d]) != 0) sink->failed = 1;
    }
}

static int by_key_end_cost(const void *a, const void *b) {
    const ph_event *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->cost < y->cost ? -1 : x->cost > y->cost;
}

void sm_ph_finish_block(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                        uint64_t seen, int final, sm_sink *sink) {
    const sm_ph_key *keys = (const sm_ph_key *)(section + h->keys_off);
    const sm_ph_piece *pieces = (const sm_ph_piece *)(section + h->pieces_off);
    uint32_t k = h->k;
    size_t kept = 0;
    for (size_t i = 0; i < st->ncand; i++) {
        ph_cand c = st->cand[i];
        const sm_ph_key *key = &keys[c.key];
        if (h->match == SM_MATCH_MISMATCHES) {
            if (c.at + key->length > seen) {
                if (!final) st->cand[kept++] = c; /* at the end, a window past it holds no hit */
            } else if (key->packed) {
                ph_verify_packed(h, section, st, key, c.piece, (size_t)(c.at - buf_pos0), c.at, sink);
            } else {
                sm_ph_verify_window(h, section, key, c.piece, st->buf + (c.at - buf_pos0), c.at, sink);
            }
        } else {
            uint64_t last = c.at + key->length - pieces[c.piece].offset + k;
            if (last <= seen || final) sm_ph_verify_anchor(h, section, st, c.key, c.piece, c.at, buf_pos0, seen, sink);
            else st->cand[kept++] = c;
        }
    }
    st->ncand = kept;
    if (h->match == SM_MATCH_MISMATCHES || st->nevents == 0) return;
    /* Ends up to safe are final: anchors still waiting or still to come
       give ends after seen - 2k. Report each end once, at its least cost. */
    uint64_t safe = final ? seen : (seen > 2ull * k ? seen - 2ull * k : 0);
    qsort(st->events, st->nevents, sizeof *st->events, by_key_end_cost);
    kept = 0;
    for (size_t i = 0; i < st->nevents; i++) {
        ph_event e = st->events[i];
        if (i > 0 && e.key == st->events[i - 1].key && e.end == st->events[i - 1].end) continue;
        if (e.end > safe) {
            st->events[kept++] = e;
            continue;
        }
        const sm_ph_key *key = &keys[e.key];
        sm_approx_emit_end(sink, key->output >> 1, (int)(key->output & 1u), e.end, e.cost);
    }
    st->nevents = kept;
    ph_forget_recent(st);
}
