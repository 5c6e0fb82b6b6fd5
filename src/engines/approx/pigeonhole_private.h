/* What the pigeonhole filter's files share: the plan walk (planning and
 * building), the anchored one-word DP (death tables and verification), the
 * scan state, and the verification the scan calls per piece hit (inline
 * where it runs once per hit, out of line where it is long).
 *
 *   pigeonhole_plan.c      cutting keys into pieces; the planner's figures
 *   pigeonhole_build.c     the section: keys, pieces, peq, seed tables or
 *                          the embedded automaton, death tables
 *   pigeonhole_validate.c  checking a section read from elsewhere
 *   pigeonhole_scan.c      the state, blocks of text, finding the pieces
 *   pigeonhole_verify.c    windows (k mismatches), anchors and held end
 *                          events (k edits)
 */
#ifndef SM_PIGEONHOLE_PRIVATE_H
#define SM_PIGEONHOLE_PRIVATE_H

#include <string.h>

#include "engines/approx/approx_common.h"
#include "engines/approx/myers_step.h"
#include "engines/approx/pigeonhole.h"
#include "engines/kmer/kmer.h"

#define PH_MAX_PIECE_EXPANSION 256u
/* Text bytes per block: bounds the piece hits held at once. A state starts
   at PH_BLOCK_MIN and doubles its blocks up to PH_BLOCK while k-edit ends
   are few; where they crowd (more than PH_EVENTS_CROWDED in a block: dense
   hits, many keys alike) the blocks halve again, so that the ends held at
   once stay about as many. */
#define PH_BLOCK ((size_t)1 << 16)
#define PH_BLOCK_MIN ((size_t)1 << 10)
#define PH_EVENTS_CROWDED ((size_t)1 << 16)
/* Slots of the table that finds an end pushed again in the same block. */
#define PH_RECENT 4096u
/* Most entries of the combined seed table (4 bytes each). */
#define PH_SEED_ALL_MAX ((uint64_t)1 << 22)

#if defined(__GNUC__) || defined(__clang__)
#define PH_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PH_ALWAYS_INLINE inline
#endif

/* ------------------------------------------------------------ piece plans */

/* Concrete strings of a piece (dna: the product of its symbols' base
   counts, stopping once past PH_MAX_PIECE_EXPANSION; text: 1). */
uint64_t sm_ph_piece_expansions(const uint8_t *seq, uint32_t len, sm_alphabet alphabet);

/* Walks every key's plan; calls back per piece. Returns the least piece bits
   (0 when a key is too short or a piece expands too much, -1 out of memory). */
typedef void (*ph_piece_fn)(void *ctx, size_t key, uint32_t index, uint32_t offset, uint32_t length, double bits);
double sm_ph_walk_plans(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k, uint32_t max_expansion,
                        ph_piece_fn fn, void *ctx);

/* ---------------------------------------------------- anchored one-word DP */

/* The anchored Myers state of one side of a piece after some columns (see
   ph_anchored_myers): the vertical deltas, Ukkonen's last active row y and
   its value, the least value of the last row so far; died once no row is
   at most the bound. */
typedef struct {
    uint64_t pv, mv;
    uint32_t y, score_y, least;
    int died;
} ph_alive;

/* The state before any column: D(i, 0) = i, so rows up to kk are active. */
static inline ph_alive ph_alive_start(uint32_t rows, uint32_t kk) {
    uint32_t y = rows < kk ? rows : kk;
    ph_alive a = {~(uint64_t)0, 0, y, y, rows <= kk ? rows : kk + 1, 0};
    return a;
}

/* One column of the anchored DP with the match word eq: Myers' step in
   anchored form (row 0 grows by one per column), then Ukkonen's last
   active row y and its value; died once no row is at most kk. */
static inline void ph_alive_step(ph_alive *a, uint64_t eq, uint32_t rows, uint32_t kk) {
    uint64_t ph, mh;
    apx_myers_step(&a->pv, &a->mv, eq, +1, &ph, &mh);
    /* Row y moves by the delta entering it: bit y - 1 of the column's, or
       row 0's own +1. */
    ph = (ph << 1) | 1u;
    mh <<= 1;
    uint64_t ybit = (uint64_t)1 << a->y;
    a->score_y += (uint32_t)((ph & ybit) != 0) - (uint32_t)((mh & ybit) != 0);
    if (a->y < rows) {
        uint32_t next = a->score_y + (uint32_t)((a->pv & ybit) != 0) - (uint32_t)((a->mv & ybit) != 0);
        if (next <= kk) {
            a->y++;
            a->score_y = next;
        }
    }
    while (a->score_y > kk) {
        if (a->y == 0) {
            a->died = 1;
            return;
        }
        a->y--;
        a->score_y -= (uint32_t)((a->pv >> a->y) & 1u) - (uint32_t)((a->mv >> a->y) & 1u);
    }
    if (a->y == rows && a->score_y < a->least) a->least = a->score_y;
}

/* ------------------------------------------------------------------ state */

/* A piece hit waiting for the text after it: a window at x (k mismatches)
   or an anchor at q (k edits), of one key through one of its pieces. */
typedef struct {
    uint64_t at;
    uint32_t key, piece;
} ph_cand;

/* k edits: an end of a key with the cost of an alignment through an exact
   piece; the least over the anchors of an end is D(end). */
typedef struct {
    uint64_t end;
    uint32_t key, cost;
} ph_event;

/* An event of the current block (index into events) by a hash of its key
   and end, valid while gen is the state's: an end that the neighbouring
   anchors push again keeps one event with the least cost. */
typedef struct {
    uint32_t gen, index;
} ph_recent;

struct sm_ph_state {
    uint32_t automaton;
    int started;
    uint64_t seq_start;      /* first position of the sequence */
    uint8_t *buf;            /* kept history, then the current block */
    size_t buf_cap, hist_len;
    sm_sink pieces;          /* automaton: piece hits of the current block */
    ph_cand *cand;           /* hits whose text is not all here yet */
    size_t ncand, cand_cap;
    ph_event *events;        /* k edits: ends not final yet */
    size_t nevents, events_cap;
    ph_recent *recent;       /* k edits: PH_RECENT slots */
    uint32_t gen;
    size_t block;            /* text bytes per block (PH_BLOCK_MIN to PH_BLOCK) */
    uint32_t *band;          /* k edits: two rows of the banded DP */
    uint32_t history, max_blocks, nkeys, k; /* what the buffers were sized for */
    /* Seed tables: the rolling 2-bit codes of the last bases (the newest
       lowest, as the k-mer tables read them), how many of them are bases,
       and buf packed two bits per symbol (codes, and 01 lanes where buf
       holds no base). */
    uint64_t roll;
    uint32_t run;
    uint8_t code_of[256];    /* 0-3 for a base letter, 4 otherwise */
    uint16_t pack_of[256];   /* its code, and 1 << 8 when it is not a base */
    int all_bases;           /* the packed buffer holds bases only */
    uint64_t *codes, *invalid;
    int popcnt;              /* the seed loop counts bits in one instruction */
    uint64_t kt_state[2];    /* the k-mer engine's block passes over the combined table */
    sm_kt_variant kvar;      /* and the way they run on this CPU */
};

/* The events moved or went: the slots that name them are stale. */
static inline void ph_forget_recent(sm_ph_state *st) {
    if (++st->gen == 0) {
        memset(st->recent, 0, PH_RECENT * sizeof *st->recent);
        st->gen = 1;
    }
}

/* A piece's probe (the build writes it, the validator checks it). */
void sm_ph_probe_fill(sm_ph_probe *pr, const sm_ph_piece *pc, const sm_ph_key *keys, uint32_t piece);

/* ----------------------------------------------------------- verification */

/* k mismatches: the window at x of key, found through its piece; reported
   unless an earlier piece of the key is also exact there. t = text at x. */
void sm_ph_verify_window(const sm_ph_header *h, const uint8_t *section, const sm_ph_key *key, uint32_t piece,
                         const uint8_t *t, uint64_t x, sm_sink *sink);
/* k edits: the ends of alignments of key that hold piece exactly at q, each
   with its least cost, into st->events. The text is buf from buf_pos0 up to
   limit. */
void sm_ph_verify_anchor(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint32_t key_index,
                         uint32_t piece, uint64_t q, uint64_t buf_pos0, uint64_t limit, sm_sink *sink);
/* A hit whose text is not all here yet; -1 when out of memory. */
int sm_ph_push_cand(sm_ph_state *st, uint64_t at, uint32_t key, uint32_t piece);
/* Verifies what waited for the text up to seen; buf holds [buf_pos0, seen).
   At the end of the sequence (final) everything left is decided. */
void sm_ph_finish_block(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                        uint64_t seen, int final, sm_sink *sink);

/* Set lanes of a mismatch word (each 2-bit lane 0 or 1): one popcnt where
   the caller runs on a CPU that has it, else sums by fields (the build
   assumes no popcnt instruction). */
static inline uint32_t ph_lane_count(uint64_t mism, int hw_popcount) {
#if defined(__GNUC__) || defined(__clang__)
    if (hw_popcount) return (uint32_t)__builtin_popcountll(mism);
#endif
    (void)hw_popcount;
    uint64_t sum = (mism & 0x3333333333333333ull) + ((mism >> 2) & 0x3333333333333333ull);
    sum = (sum + (sum >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((sum * 0x0101010101010101ull) >> 56);
}

/* Eight bytes as a little-endian number (symbol 4i of a packed byte array
   in the low bits, whatever the host's order). */
static inline uint64_t ph_load_le64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
#endif
}

/* sm_ph_verify_window for a packed key: buf index at of x in the packed text. */
static inline void ph_verify_packed(const sm_ph_header *h, const uint8_t *section, const sm_ph_state *st,
                                    const sm_ph_key *key, uint32_t piece, size_t at, uint64_t x, sm_sink *sink) {
    /* The byte holding symbol at, then at most 6 bits shifted out: 29
       symbols from one load, the rest from the next. */
    const uint8_t *cb = (const uint8_t *)st->codes + at / 4, *ib = (const uint8_t *)st->invalid + at / 4;
    unsigned shift = (unsigned)(at % 4) * 2;
    uint64_t text = ph_load_le64(cb) >> shift, bad = ph_load_le64(ib) >> shift;
    if (key->length > 29 && shift) {
        text |= ph_load_le64(cb + 8) << (64 - shift);
        bad |= ph_load_le64(ib + 8) << (64 - shift);
    }
    uint64_t diff = text ^ key->code;
    uint64_t mism = ((diff | (diff >> 1)) & key->care) | (bad & key->lanes);
    unsigned count = ph_lane_count(mism, 0);
    if (count > h->k) return;
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + key->first_piece;
    for (uint32_t p = 0; p < piece; p++) {
        uint64_t lanes = (pc[p].length == 32 ? ~(uint64_t)0 : (((uint64_t)1 << (2 * pc[p].length)) - 1))
                         << (2 * pc[p].offset);
        if (!(mism & lanes)) return; /* piece p reports this window */
    }
    sm_sink_add(sink, x, x + key->length, key->output >> 1, (int)(key->output & 1u), count);
}

/* One piece hit at q: a window or an anchor to verify, now when its text
   is all here, else when it comes. */
static inline void ph_hit_at(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                             uint64_t seen, uint64_t q, uint32_t key_index, uint32_t offset, uint32_t piece,
                             uint32_t index, sm_sink *sink) {
    const sm_ph_key *key = (const sm_ph_key *)(section + h->keys_off) + key_index;
    if (h->match == SM_MATCH_MISMATCHES) {
        if (q < st->seq_start + offset) return; /* the window would begin before the sequence */
        uint64_t x = q - offset;
        if (x + key->length <= seen) {
            if (key->packed) ph_verify_packed(h, section, st, key, index, (size_t)(x - buf_pos0), x, sink);
            else sm_ph_verify_window(h, section, key, index, st->buf + (x - buf_pos0), x, sink);
        } else if (sm_ph_push_cand(st, x, key_index, index) != 0) {
            sink->failed = 1;
        }
        return;
    }
    /* A piece cannot start before the sequence; only a crafted database whose
       automaton disagrees with its piece lengths reports one. */
    if (q < st->seq_start) return;
    /* The latest end an alignment through the anchor can have. */
    uint64_t last = q + key->length - offset + h->k;
    if (last <= seen) sm_ph_verify_anchor(h, section, st, key_index, piece, q, buf_pos0, seen, sink);
    else if (sm_ph_push_cand(st, q, key_index, piece) != 0) sink->failed = 1;
}

/* A piece hit at q through its probe: a packed key's window is checked
   from the probe alone while the text is here (k mismatches). */
static inline void ph_probe_hit(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                                uint64_t seen, uint64_t q, const sm_ph_probe *pr, sm_sink *sink) {
    if (h->match != SM_MATCH_MISMATCHES || !pr->lanes || q < st->seq_start + pr->offset ||
        q - pr->offset + pr->key_length > seen) {
        ph_hit_at(h, section, st, buf_pos0, seen, q, pr->key, pr->offset, pr->piece, pr->index, sink);
        return;
    }
    uint64_t x = q - pr->offset;
    size_t at = (size_t)(x - buf_pos0);
    const uint8_t *cb = (const uint8_t *)st->codes + at / 4, *ib = (const uint8_t *)st->invalid + at / 4;
    unsigned shift = (unsigned)(at % 4) * 2;
    uint64_t text = ph_load_le64(cb) >> shift;
    uint64_t bad = st->all_bases ? 0 : ph_load_le64(ib) >> shift;
    if (pr->key_length > 29 && shift) {
        text |= ph_load_le64(cb + 8) << (64 - shift);
        if (!st->all_bases) bad |= ph_load_le64(ib + 8) << (64 - shift);
    }
    uint64_t diff = text ^ pr->code;
    uint64_t mism = ((diff | (diff >> 1)) & pr->care) | (bad & pr->lanes);
    if (ph_lane_count(mism, 0) > h->k) return;
    const sm_ph_key *key = (const sm_ph_key *)(section + h->keys_off) + pr->key;
    ph_verify_packed(h, section, st, key, pr->index, at, x, sink);
}

static inline void ph_piece_hit(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                                uint64_t seen, uint64_t q, uint32_t piece, sm_sink *sink) {
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + piece;
    ph_hit_at(h, section, st, buf_pos0, seen, q, pc->key, pc->offset, piece, pc->index, sink);
}

#endif /* SM_PIGEONHOLE_PRIVATE_H */
