/* The pigeonhole filter's scan: the state, the text in blocks with history
 * kept, and the pieces found through the seed tables or the embedded
 * automaton; each piece hit goes to verification (pigeonhole_verify.c). */
#include <stdlib.h>

#include "engines/approx/pigeonhole_private.h"
#include "engines/automaton/automaton.h"
#include "engines/kmer/kmer.h"

int sm_ph_state_fits(const uint8_t *section, const sm_ph_state *st) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    return st && st->history >= h->history && st->nkeys >= h->nkeys && st->k >= h->k;
}

sm_ph_state *sm_ph_state_new(const uint8_t *section, const sm_cpu_features *cpu) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    sm_ph_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->popcnt = cpu->popcnt;
    sm_kt_choose(cpu, -1, &st->kvar);
    st->history = h->history;
    st->nkeys = h->nkeys;
    st->k = h->k;
    st->buf_cap = h->history + PH_BLOCK;
    st->buf = malloc(st->buf_cap);
    st->codes = malloc((st->buf_cap / 32 + 4) * sizeof(uint64_t));
    st->invalid = malloc((st->buf_cap / 32 + 4) * sizeof(uint64_t));
    st->band = malloc(2 * (2 * (size_t)h->k + 1) * sizeof *st->band);
    st->recent = calloc(PH_RECENT, sizeof *st->recent);
    st->gen = 1;
    st->block = PH_BLOCK_MIN; /* grows where ends are few */
    for (int b = 0; b < 256; b++) {
        unsigned set = sm_nt_set[b] & 15u;
        st->code_of[b] = set == 1 ? 0 : set == 2 ? 1 : set == 4 ? 2 : set == 8 ? 3 : 4;
        st->pack_of[b] = st->code_of[b] > 3 ? (uint16_t)(1u << 8) : st->code_of[b];
    }
    st->pieces.own_hi = UINT64_MAX;
    if (!st->buf || !st->codes || !st->invalid || !st->band || !st->recent) {
        sm_ph_state_free(st);
        return NULL;
    }
    return st;
}

void sm_ph_state_free(sm_ph_state *st) {
    if (!st) return;
    free(st->buf);
    free(st->pieces.hits);
    free(st->cand);
    free(st->events);
    free(st->recent);
    free(st->band);
    free(st->codes);
    free(st->invalid);
    free(st);
}

void sm_ph_state_reset(sm_ph_state *st) {
    st->automaton = 0;
    st->started = 0;
    st->hist_len = 0;
    st->ncand = 0;
    st->nevents = 0;
    ph_forget_recent(st);
    st->roll = 0;
    st->run = 0;
    st->kt_state[0] = st->kt_state[1] = 0;
}

/* Packs buf[0, n) two bits per symbol for verify_packed: four symbols make
   one byte of codes and one of invalid lanes, from a table giving a byte's
   code in bits 0-1 and its invalid flag in bit 8. */
static void pack_buffer(sm_ph_state *st, size_t n) {
    uint8_t *codes = (uint8_t *)st->codes, *invalid = (uint8_t *)st->invalid;
    const uint16_t *pk = st->pack_of;
    const uint8_t *b = st->buf;
    size_t bytes = (n + 3) / 4, full = n / 4;
    unsigned any_invalid = 0;
    for (size_t o = 0; o < full; o++, b += 4) {
        unsigned v = pk[b[0]] | (unsigned)pk[b[1]] << 2 | (unsigned)pk[b[2]] << 4 | (unsigned)pk[b[3]] << 6;
        codes[o] = (uint8_t)v;
        invalid[o] = (uint8_t)(v >> 8);
        any_invalid |= v;
    }
    if (full < bytes) {
        unsigned v = 0;
        for (size_t j = 0; j < n - full * 4; j++) v |= (unsigned)pk[b[j]] << (2 * j);
        codes[full] = (uint8_t)v;
        invalid[full] = (uint8_t)(v >> 8);
        any_invalid |= v;
    }
    st->all_bases = (any_invalid >> 8) == 0;
    /* Zero the bytes an unaligned 8-byte read past the end may touch. */
    memset(codes + bytes, 0, 16);
    memset(invalid + bytes, 0, 16);
}

/* The seed tables as the scan reads them, found once per call. */
typedef struct {
    const uint64_t *any;             /* codes of max bases some suffix of which is a piece */
    sm_kt_view all;                  /* the combined table (bits NULL: none) */
    const sm_ph_seed *list;          /* beside the combined table's output list */
    sm_kt_view len[SM_PH_SEED_MAX + 1]; /* the table of each piece length (bits NULL: none) */
    const sm_ph_probe *probe[SM_PH_SEED_MAX + 1]; /* beside each one's output list */
    const uint64_t *alive;           /* death tables, NULL when none */
    uint64_t alive_words;
    uint32_t alive_columns, max;
} ph_seeds;

static void seeds_of(const sm_ph_header *h, const uint8_t *section, ph_seeds *sd) {
    memset(sd, 0, sizeof *sd);
    sd->any = (const uint64_t *)(section + h->seed_any_off);
    if (h->seed_all_size) sm_kt_view_of(section + h->seed_all_off, &sd->all);
    sd->list = (const sm_ph_seed *)(section + h->seed_list_off);
    for (uint32_t L = 1; L <= h->seed_max; L++)
        if (h->seed_off[L]) {
            sm_kt_view_of(section + h->seed_off[L], &sd->len[L]);
            sd->probe[L] = (const sm_ph_probe *)(section + h->seed_probe_off[L]);
        }
    /* alive_columns means nothing without the tables (a crafted header may hold anything) */
    if (h->alive_off) {
        sd->alive = (const uint64_t *)(section + h->alive_off);
        sd->alive_columns = h->alive_columns;
        sd->alive_words = ((uint64_t)1 << (2 * h->alive_columns)) / 64;
    }
    sd->max = h->seed_max;
}

static inline uint64_t code_mask(uint32_t bases) { return ((uint64_t)1 << (2 * bases)) - 1; }

/* The pieces ending at the base just read (its end q_end), through the
   combined table when the last seed_max symbols are all bases, else through
   the table of each piece length. roll holds the codes of the last bases,
   the newest lowest, as the k-mer tables read them. */
static PH_ALWAYS_INLINE void position_hits_body(const sm_ph_header *h, const uint8_t *section, const ph_seeds *sd,
                                                sm_ph_state *st, uint64_t roll, uint32_t run, uint64_t q_end,
                                                uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
    uint32_t max = sd->max;
    if (run >= max) {
        uint64_t code = roll & code_mask(max);
        if (!((sd->any[code / 64] >> (code % 64)) & 1u)) return;
        if (sd->all.bits) {
            uint32_t slot = sm_kt_slot(&sd->all, code), c = sd->alive_columns;
            for (uint32_t e = sd->all.out_index[slot], end = sd->all.out_index[slot + 1]; e < end; e++) {
                const sm_ph_seed *x = &sd->list[e];
                if (sd->alive && x->offset > 0 && run >= x->length + c) {
                    /* The bases before the piece are in the rolling code. */
                    uint64_t before = (roll >> (2 * x->length)) & code_mask(c);
                    if (!((sd->alive[x->piece * 2 * sd->alive_words + before / 64] >> (before % 64)) & 1u)) continue;
                }
                ph_hit_at(h, section, st, buf_pos0, seen, q_end - x->length, x->key, x->offset, x->piece, x->index,
                          sink);
            }
            return;
        }
    }
    for (uint32_t L = 1; L <= max; L++) {
        if (!sd->len[L].bits || run < L) continue;
        uint64_t code = roll & code_mask(L);
        if (!sm_kt_has(&sd->len[L], code)) continue;
        uint32_t slot = sm_kt_slot(&sd->len[L], code);
        const sm_ph_probe *pr = sd->probe[L] + sd->len[L].out_index[slot];
        const sm_ph_probe *end = sd->probe[L] + sd->len[L].out_index[slot + 1];
        for (; pr < end; pr++) ph_probe_hit(h, section, st, buf_pos0, seen, q_end - L, pr, sink);
    }
}

/* Out of line, once with the CPU's popcount (the table's slot is a rank)
   and once without. */
static void position_hits(const sm_ph_header *h, const uint8_t *section, const ph_seeds *sd, sm_ph_state *st,
                          uint64_t roll, uint32_t run, uint64_t q_end, uint64_t buf_pos0, uint64_t seen,
                          sm_sink *sink) {
    position_hits_body(h, section, sd, st, roll, run, q_end, buf_pos0, seen, sink);
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define PH_HAVE_POPCNT_PATH 1
__attribute__((target("popcnt"))) static void position_hits_popcnt(const sm_ph_header *h, const uint8_t *section,
                                                                   const ph_seeds *sd, sm_ph_state *st, uint64_t roll,
                                                                   uint32_t run, uint64_t q_end, uint64_t buf_pos0,
                                                                   uint64_t seen, sm_sink *sink) {
    position_hits_body(h, section, sd, st, roll, run, q_end, buf_pos0, seen, sink);
}
#define POSITION_HITS(hw) (hw ? position_hits_popcnt : position_hits)
#else
#define POSITION_HITS(hw) position_hits
#endif

/* Mismatches left in a slot's window ending... at q_end - back: the packed
   text against its key, summed over the 01 lanes. */
static inline uint32_t slot_mismatches(const sm_ph_state *st, const sm_ph_slot *sl, size_t at, int hw_popcount,
                                       int all_bases) {
    unsigned shift = (unsigned)(at % 4) * 2;
    uint64_t text = ph_load_le64((const uint8_t *)st->codes + at / 4) >> shift;
    /* A buffer of bases only needs no look at the invalid lanes. */
    uint64_t bad = all_bases ? 0 : ph_load_le64((const uint8_t *)st->invalid + at / 4) >> shift;
    uint64_t diff = text ^ sl->code;
    uint64_t mism = ((diff | (diff >> 1)) & sl->care) | (bad & sl->lanes);
    return ph_lane_count(mism, hw_popcount);
}

/* The pieces through the seed tables: at each base, the codes of the last
   bases index the pieces that end there. */
static PH_ALWAYS_INLINE void seed_scan_body(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st,
                                            const uint8_t *text, size_t n, uint64_t pos0, uint64_t buf_pos0,
                                            uint64_t seen, sm_sink *sink, int hw_popcount, int all_bases) {
    ph_seeds seeds, *sd = &seeds;
    seeds_of(h, section, sd);
    uint64_t roll = st->roll;
    uint32_t run = st->run, max = h->seed_max;
    size_t i = 0;
    if (h->seed_slots_off) {
        /* k mismatches, short packed keys: both slots of a code are checked
           without a branch; only a hit, a code with more pieces, a window
           that may reach outside the text seen or a recent non-base goes
           the general way. Inside [first, last) every window lies in buf. */
        const sm_ph_slot *slot = (const sm_ph_slot *)(section + h->seed_slots_off);
        uint64_t floor = st->seq_start > buf_pos0 ? st->seq_start : buf_pos0;
        size_t first = floor + h->max_key > pos0 ? (size_t)(floor + h->max_key - pos0) : 0;
        size_t last = n > h->max_key ? n - h->max_key : 0;
        for (; i < first && i < n; i++) {
            unsigned c = st->code_of[text[i]];
            if (c > 3) {
                run = 0;
                continue;
            }
            roll = (roll << 2) | c;
            run += run < 32;
            POSITION_HITS(hw_popcount)(h, section, sd, st, roll, run, pos0 + i + 1, buf_pos0, seen, sink);
        }
        const uint64_t mask = code_mask(max);
        for (; i < last; i++) {
            unsigned c = st->code_of[text[i]];
            if (c > 3) {
                run = 0;
                continue;
            }
            roll = (roll << 2) | c;
            run += run < 32;
            uint64_t q_end = pos0 + i + 1;
            if (run < max) {
                POSITION_HITS(hw_popcount)(h, section, sd, st, roll, run, q_end, buf_pos0, seen, sink);
                continue;
            }
            const sm_ph_slot *sl = &slot[2 * (roll & mask)];
            uint32_t n0 =
                slot_mismatches(st, &sl[0], (size_t)(q_end - sl[0].back - buf_pos0), hw_popcount, all_bases);
            uint32_t n1 =
                slot_mismatches(st, &sl[1], (size_t)(q_end - sl[1].back - buf_pos0), hw_popcount, all_bases);
            if (((int)n0 <= sl[0].limit) | ((int)n1 <= sl[1].limit))
                POSITION_HITS(hw_popcount)(h, section, sd, st, roll, run, q_end, buf_pos0, seen, sink);
        }
    }
    /* Most bases end no piece: the bitmap of the last seed_max bases says
       so without a call. */
    const uint64_t *any = sd->any, any_mask = code_mask(max);
    for (; i < n; i++) {
        unsigned c = st->code_of[text[i]];
        if (c > 3) {
            run = 0;
            continue;
        }
        roll = (roll << 2) | c;
        run += run < 32;
        if (run >= max) {
            uint64_t code = roll & any_mask;
            if (!((any[code / 64] >> (code % 64)) & 1u)) continue;
        }
        POSITION_HITS(hw_popcount)(h, section, sd, st, roll, run, pos0 + i + 1, buf_pos0, seen, sink);
    }
    (void)hw_popcount;
    (void)all_bases;
    st->roll = roll;
    st->run = run;
}

static void seed_scan_plain(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, const uint8_t *text,
                            size_t n, uint64_t pos0, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
    if (st->all_bases) seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 0, 1);
    else seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 0, 0);
}

#ifdef PH_HAVE_POPCNT_PATH
/* The same loop where the CPU counts bits in one instruction. */
__attribute__((target("popcnt"))) static void seed_scan_popcnt(const sm_ph_header *h, const uint8_t *section,
                                                               sm_ph_state *st, const uint8_t *text, size_t n,
                                                               uint64_t pos0, uint64_t buf_pos0, uint64_t seen,
                                                               sm_sink *sink) {
    if (st->all_bases) seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 1, 1);
    else seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 1, 0);
}
#endif

/* ------------------------------------------- pieces through the k-mer scan */

/* Where the combined table serves every base that ends seed_max bases (and
   no slots take the bases first), the k-mer engine's own block passes find
   those positions (sm_kt_find); the few positions after a non-base or the
   sequence start, where only shorter pieces can end, are looked up here. */
typedef struct {
    const sm_ph_header *h;
    const uint8_t *section;
    const ph_seeds *sd;
    sm_ph_state *st;
    const uint8_t *text;
    uint64_t pos0, buf_pos0, seen;
    sm_sink *sink;
} found_ctx;

/* Positions from `from` on while fewer than max bases lead up to them,
   after run bases whose codes are in roll. */
static PH_ALWAYS_INLINE void found_heads(const found_ctx *x, const uint8_t *t, size_t from, size_t n, uint32_t run,
                                         uint64_t roll, uint64_t q0, int hw) {
    const uint32_t max = x->sd->max;
    for (size_t p = from; p < n; p++) {
        unsigned c = x->st->code_of[t[p]];
        if (c > 3 || ++run >= max) return; /* a break starts its own; the block passes take the rest */
        roll = (roll << 2) | c;
        POSITION_HITS(hw)(x->h, x->section, x->sd, x->st, roll, run, q0 + p, x->buf_pos0, x->seen, x->sink);
    }
}

/* A base ending seed_max bases whose code has pieces: the combined table's
   entries; the bases before the piece, for the death table, from buf. */
static PH_ALWAYS_INLINE void found_hit(const found_ctx *x, uint64_t code, uint64_t q_end) {
    const ph_seeds *sd = x->sd;
    sm_ph_state *st = x->st;
    uint32_t slot = sm_kt_slot(&sd->all, code), c = sd->alive_columns;
    uint64_t floor = st->seq_start > x->buf_pos0 ? st->seq_start : x->buf_pos0;
    for (uint32_t e = sd->all.out_index[slot], end = sd->all.out_index[slot + 1]; e < end; e++) {
        const sm_ph_seed *s = &sd->list[e];
        uint64_t q = q_end - s->length;
        if (sd->alive && s->offset > 0 && q >= floor + c) {
            const uint8_t *before = st->buf + (q - x->buf_pos0);
            uint32_t bcode = 0, bad = 0;
            for (uint32_t j = 0; j < c; j++) { /* the base nearest the piece lowest */
                uint32_t v = st->code_of[before[-1 - (int64_t)j]];
                bad |= v;
                bcode |= (v & 3u) << (2 * j);
            }
            if (bad < 4 && !((sd->alive[s->piece * 2 * sd->alive_words + bcode / 64] >> (bcode % 64)) & 1u)) continue;
        }
        ph_hit_at(x->h, x->section, st, x->buf_pos0, x->seen, q, s->key, s->offset, s->piece, s->index, x->sink);
    }
}

static PH_ALWAYS_INLINE void found_body(void *vctx, size_t off, const sm_kt_found *f, int hw) {
    const found_ctx *x = vctx;
    sm_ph_state *st = x->st;
    const uint8_t *t = x->text + off;
    size_t n = f->n, words = (n + 63) / 64;
    uint64_t q0 = x->pos0 + off + 1; /* the end of the base at block position 0 */
    int64_t last_break = -1;
    found_heads(x, t, 0, n, st->run, st->roll, q0, hw);
    for (size_t w = 0; w < words; w++) {
        uint64_t brk = f->breaks[w] & (n - w * 64 < 64 ? ((uint64_t)1 << (n - w * 64)) - 1 : ~(uint64_t)0);
        for (; brk; brk &= brk - 1) {
            size_t b = w * 64 + (size_t)APX_CTZ(brk);
            found_heads(x, t, b + 1, n, 0, 0, q0, hw);
            last_break = (int64_t)b;
        }
        for (uint64_t hits = f->hits[w]; hits; hits &= hits - 1) {
            size_t i = w * 64 + (size_t)APX_CTZ(hits);
            found_hit(x, sm_kt_found_code(f, i), q0 + i);
        }
    }
    /* The bases the next block's first positions follow. */
    uint32_t run = last_break < 0 ? st->run + (uint32_t)(n < 32 ? n : 32) : (uint32_t)(n - 1 - (size_t)last_break);
    st->run = run < 32 ? run : 32;
    uint64_t roll = n < 32 ? st->roll : 0;
    for (size_t p = n < 32 ? 0 : n - 32; p < n; p++) roll = (roll << 2) | (st->code_of[t[p]] & 3u);
    st->roll = roll;
}

static void found_plain(void *vctx, size_t off, const sm_kt_found *f) { found_body(vctx, off, f, 0); }

#ifdef PH_HAVE_POPCNT_PATH
__attribute__((target("popcnt"))) static void found_popcnt(void *vctx, size_t off, const sm_kt_found *f) {
    found_body(vctx, off, f, 1);
}
#endif

/* The pieces through the seed tables, on the best loop this CPU runs. */
static void seed_scan(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, const uint8_t *text, size_t n,
                      uint64_t pos0, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
    if (h->seed_all_size && !h->seed_slots_off) {
        ph_seeds sd;
        seeds_of(h, section, &sd);
        found_ctx x = {h, section, &sd, st, text, pos0, buf_pos0, seen, sink};
        sm_kt_found_fn fn = found_plain;
#ifdef PH_HAVE_POPCNT_PATH
        if (st->popcnt) fn = found_popcnt;
#endif
        sm_kt_find(section + h->seed_all_off, &st->kvar, st->kt_state, text, n, fn, &x);
        return;
    }
#ifdef PH_HAVE_POPCNT_PATH
    if (st->popcnt) {
        seed_scan_popcnt(h, section, st, text, n, pos0, buf_pos0, seen, sink);
        return;
    }
#endif
    seed_scan_plain(h, section, st, text, n, pos0, buf_pos0, seen, sink);
}

void sm_ph_scan(const uint8_t *section, sm_ph_state *st, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    const sm_db_pattern *lengths = (const sm_db_pattern *)(section + h->lengths_off);
    if (!st->started) {
        st->started = 1;
        st->seq_start = pos0;
        st->hist_len = 0;
    }
    while (len > 0) {
        size_t n = len < st->block ? len : st->block;
        memcpy(st->buf + st->hist_len, text, n);
        uint64_t seen = pos0 + n, buf_pos0 = pos0 - st->hist_len;
        if (h->seeds) {
            if (h->match == SM_MATCH_MISMATCHES) pack_buffer(st, st->hist_len + n);
            seed_scan(h, section, st, text, n, pos0, buf_pos0, seen, sink);
        } else {
            st->pieces.n = 0;
            sm_ac_scan(section + h->ac_off, lengths, &st->automaton, text, n, pos0, &st->pieces);
            if (st->pieces.failed) {
                sink->failed = 1;
                st->pieces.failed = 0;
            }
            for (size_t i = 0; i < st->pieces.n; i++)
                ph_piece_hit(h, section, st, buf_pos0, seen, st->pieces.hits[i].start, st->pieces.hits[i].pattern, sink);
        }
        size_t crowd = st->nevents;
        sm_ph_finish_block(h, section, st, buf_pos0, seen, 0, sink);
        if (crowd > PH_EVENTS_CROWDED && st->block > PH_BLOCK_MIN) st->block /= 2;
        else if (crowd < PH_EVENTS_CROWDED / 4 && st->block < PH_BLOCK) st->block *= 2;
        size_t total = st->hist_len + n, keep = total < h->history ? total : h->history;
        memmove(st->buf, st->buf + total - keep, keep);
        st->hist_len = keep;
        text += n;
        len -= n;
        pos0 = seen;
    }
}

void sm_ph_finish(const uint8_t *section, sm_ph_state *st, uint64_t end_pos, sm_sink *sink) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    if (st->started) sm_ph_finish_block(h, section, st, end_pos - st->hist_len, end_pos, 1, sink);
    sm_ph_state_reset(st);
}
