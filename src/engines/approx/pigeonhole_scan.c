/* The pigeonhole filter's scan: the state, the text in blocks with history
 * kept, and the pieces found through the seed tables or the embedded
 * automaton; each piece hit goes to verification (pigeonhole_verify.c). */
#include <stdlib.h>

#include "engines/approx/pigeonhole_private.h"
#include "engines/automaton/automaton.h"

int sm_ph_state_fits(const uint8_t *section, const sm_ph_state *st) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    return st && st->history >= h->history && st->nkeys >= h->nkeys && st->k >= h->k;
}

sm_ph_state *sm_ph_state_new(const uint8_t *section, const sm_cpu_features *cpu) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    sm_ph_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->popcnt = cpu->popcnt;
    st->history = h->history;
    st->nkeys = h->nkeys;
    st->k = h->k;
    st->buf_cap = h->history + PH_BLOCK;
    st->buf = malloc(st->buf_cap);
    st->codes = malloc((st->buf_cap / 32 + 4) * sizeof(uint64_t));
    st->invalid = malloc((st->buf_cap / 32 + 4) * sizeof(uint64_t));
    st->band = malloc(2 * (2 * (size_t)h->k + 1) * sizeof *st->band);
    for (int b = 0; b < 256; b++) {
        unsigned set = sm_nt_set[b] & 15u;
        st->code_of[b] = set == 1 ? 0 : set == 2 ? 1 : set == 4 ? 2 : set == 8 ? 3 : 4;
        st->pack_of[b] = st->code_of[b] > 3 ? (uint16_t)(1u << 8) : st->code_of[b];
    }
    st->pieces.own_hi = UINT64_MAX;
    if (!st->buf || !st->codes || !st->invalid || !st->band) {
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
    st->roll = 0;
    st->run = 0;
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

/* The pieces ending at the base just read (its end q_end), through the
   combined table when the last seed_max bases are all bases, else through
   the table of each piece length. */
static inline void position_hits(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t roll,
                                 uint32_t run, uint64_t q_end, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
    uint32_t max = h->seed_max;
    if (run >= max) {
        uint64_t code = roll >> (64 - 2 * max);
        const uint64_t *any = (const uint64_t *)(section + h->seed_any_off);
        if (!((any[code / 64] >> (code % 64)) & 1u)) return;
        if (h->seed_all_off) {
            const uint32_t *starts = (const uint32_t *)(section + h->seed_all_off);
            const sm_ph_seed *all = (const sm_ph_seed *)(section + h->seed_all_off + ph_seed_list_at(max));
            uint32_t c = h->alive_columns;
            const uint64_t *alive = h->alive_off ? (const uint64_t *)(section + h->alive_off) : NULL;
            /* alive_columns means nothing without the tables (a crafted header may hold anything) */
            uint64_t words = alive ? ((uint64_t)1 << (2 * c)) / 64 : 0;
            for (uint32_t e = starts[code], end = starts[code + 1]; e < end; e++) {
                const sm_ph_seed *sd = &all[e];
                if (alive && sd->offset > 0 && run >= sd->length + c) {
                    /* The bases before the piece are in the rolling code. */
                    uint64_t before = (roll >> (64 - 2 * (sd->length + c))) & ((words * 64) - 1);
                    if (!((alive[sd->piece * 2 * words + before / 64] >> (before % 64)) & 1u)) continue;
                }
                ph_hit_at(h, section, st, buf_pos0, seen, q_end - sd->length, sd->key, sd->offset, sd->piece,
                       sd->index, sink);
            }
            return;
        }
    }
    for (uint32_t L = 1; L <= max; L++) {
        if (!h->seed_off[L] || run < L) continue;
        uint64_t code = roll >> (64 - 2 * L);
        const uint64_t *present = (const uint64_t *)(section + h->seed_present_off[L]);
        if (!((present[code / 64] >> (code % 64)) & 1u)) continue;
        const uint32_t *starts = (const uint32_t *)(section + h->seed_off[L]);
        const uint32_t *ids = starts + ((size_t)1 << (2 * L)) + 1;
        for (uint32_t e = starts[code], end = starts[code + 1]; e < end; e++)
            ph_piece_hit(h, section, st, buf_pos0, seen, q_end - L, ids[e], sink);
    }
}

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
            roll = (roll >> 2) | ((uint64_t)c << 62);
            run += run < 32;
            position_hits(h, section, st, roll, run, pos0 + i + 1, buf_pos0, seen, sink);
        }
        unsigned code_shift = 64 - 2 * max;
        for (; i < last; i++) {
            unsigned c = st->code_of[text[i]];
            if (c > 3) {
                run = 0;
                continue;
            }
            roll = (roll >> 2) | ((uint64_t)c << 62);
            run += run < 32;
            uint64_t q_end = pos0 + i + 1;
            if (run < max) {
                position_hits(h, section, st, roll, run, q_end, buf_pos0, seen, sink);
                continue;
            }
            const sm_ph_slot *sl = &slot[2 * (roll >> code_shift)];
            uint32_t n0 =
                slot_mismatches(st, &sl[0], (size_t)(q_end - sl[0].back - buf_pos0), hw_popcount, all_bases);
            uint32_t n1 =
                slot_mismatches(st, &sl[1], (size_t)(q_end - sl[1].back - buf_pos0), hw_popcount, all_bases);
            if (((int)n0 <= sl[0].limit) | ((int)n1 <= sl[1].limit))
                position_hits(h, section, st, roll, run, q_end, buf_pos0, seen, sink);
        }
    }
    /* Most bases end no piece: the bitmap of the last seed_max bases says
       so without a call. */
    const uint64_t *any = (const uint64_t *)(section + h->seed_any_off);
    unsigned any_shift = 64 - 2 * max;
    for (; i < n; i++) {
        unsigned c = st->code_of[text[i]];
        if (c > 3) {
            run = 0;
            continue;
        }
        roll = (roll >> 2) | ((uint64_t)c << 62);
        run += run < 32;
        if (run >= max) {
            uint64_t code = roll >> any_shift;
            if (!((any[code / 64] >> (code % 64)) & 1u)) continue;
        }
        position_hits(h, section, st, roll, run, pos0 + i + 1, buf_pos0, seen, sink);
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

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
/* The same loop where the CPU counts bits in one instruction. */
__attribute__((target("popcnt"))) static void seed_scan_popcnt(const sm_ph_header *h, const uint8_t *section,
                                                               sm_ph_state *st, const uint8_t *text, size_t n,
                                                               uint64_t pos0, uint64_t buf_pos0, uint64_t seen,
                                                               sm_sink *sink) {
    if (st->all_bases) seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 1, 1);
    else seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 1, 0);
}
#define PH_HAVE_POPCNT_PATH 1
#endif

/* The pieces through the seed tables, on the best loop this CPU runs. */
static void seed_scan(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, const uint8_t *text, size_t n,
                      uint64_t pos0, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
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
        size_t n = len < PH_BLOCK ? len : PH_BLOCK;
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
        ph_finish_block(h, section, st, buf_pos0, seen, 0, sink);
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
    if (st->started) ph_finish_block(h, section, st, end_pos - st->hist_len, end_pos, 1, sink);
    sm_ph_state_reset(st);
}
