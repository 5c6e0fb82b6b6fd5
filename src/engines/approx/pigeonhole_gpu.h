/* The pigeonhole filter on the GPU: the view of a pigeonhole section and the
 * work of one thread, in the C that both the kernel (pigeonhole_cuda.cu)
 * and the CPU stand-in (pigeonhole_gpu.c) compile (engines/gpu_part.h).
 *
 * A thread takes a slice of a chunk and finds the pieces in it as the CPU
 * scan does, through the exact engines' tables the section holds: the
 * k-mer engine's direct tables over the pieces (a rolling code of the last
 * bases, the bitmap of codes some piece ends with, then the combined table
 * whose entries name each piece's place in its key, or the table of each
 * piece length after a non-base), or the dictionary automaton over the
 * pieces. Each piece hit is verified on the spot with the CPU's code:
 *  - k mismatches: the window it implies, compared symbol by symbol
 *    through the key's match rows, reported by its first exact piece only;
 *    a slice owns the windows that start in it and reads on to the chunk's
 *    end;
 *  - k edits: after the death tables, Myers' search over the text window
 *    that holds every alignment through the anchor (keys of one word), or
 *    the anchored band DPs of 2k + 1 cells on both sides of the piece
 *    (longer keys), every end found reported as an end event with its
 *    cost; a slice owns the ends in it and reads from
 *    longest pattern + k before it, which holds every anchor of an
 *    alignment ending there (and a cost over k for any that starts
 *    earlier). An end found through several anchors comes several times;
 *    the runner keeps its least cost, which is D(end).
 */
#ifndef SM_PIGEONHOLE_GPU_H
#define SM_PIGEONHOLE_GPU_H

#include "engines/automaton/automaton_gpu.h"
#include "engines/gpu_part.h"
#include "engines/kmer/kmer_gpu.h"

/* Longest piece of the seed tables (pigeonhole.h: SM_PH_SEED_MAX). */
#define SM_PH_GPU_SEED_MAX 12
/* k edits through the band DP: the band's cells per row kept in registers. */
#define SM_PH_GPU_BAND_K 15

typedef struct {
    uint32_t match;          /* sm_match: 1 mismatches, 2 edits */
    uint32_t k, nkeys, npieces, rows, max_key;
    uint32_t seeds;          /* 1: seed tables, 0: the automaton */
    uint32_t seed_max;
    uint32_t has_all;        /* the combined table is there */
    uint32_t alive_columns;  /* death tables (0: none) */
    uint32_t slice;          /* owned bytes of a thread */
    uint32_t edits;
    uint32_t packed;         /* k mismatches, every key packed (<= 32 symbols, bases or N): windows compared packed */
    uint32_t one_word;       /* k edits, every key of one word (<= 64 symbols): no band DPs */
    uint64_t keys_off, pieces_off, lengths_off, peq_off, class_of_off, seed_any_off, seed_list_off, alive_off;
} sm_gpu_pigeonhole;

/* The section's records (pigeonhole.h), as the kernel reads them;
   pigeonhole_gpu.c checks that they agree. */
typedef struct {
    uint32_t output, length, blocks, first_piece;
    uint64_t peq_at;
    uint64_t code, care, lanes;
    uint32_t packed, reserved;
} sm_ph_gpu_key;
typedef struct {
    uint32_t key, offset, length, index;
} sm_ph_gpu_piece;
typedef struct {
    uint32_t key, offset, piece;
    uint16_t length, index;
} sm_ph_gpu_seed;

/* A packed key read from its end: symbol m - 1 - j at bits 2j (the order
   of a rolling code, newest lowest), as sm_ph_key.code, care and lanes. */
typedef struct {
    uint64_t code, care, lanes;
} sm_ph_gpu_rkey;

/* What the kernel gets besides the section: the views of the tables it
   embeds (offsets in them from the section's start), then (packed) every
   key reversed. */
typedef struct {
    sm_gpu_kmer len[SM_PH_GPU_SEED_MAX + 1]; /* k = 0: no piece of that length */
    sm_gpu_kmer all;
    sm_gpu_automaton ac;
    uint64_t rkeys_off;      /* sm_ph_gpu_rkey[nkeys] from the start of these tables (0: none) */
} sm_ph_gpu_tables;

/* The combined table as a thread reads it (shared memory or the
   section): the bitmap of the codes some piece ends with, the table's own
   bitmap and rank, and its output index (entry for entry beside the seed
   list). */
typedef struct {
    const uint32_t *any, *bits, *rank, *out_index;
} sm_ph_gpu_combined;

SM_GPU_HOSTDEV sm_ph_gpu_combined sm_ph_gpu_combined_of(const uint8_t *section, const sm_gpu_pigeonhole *v,
                                                        const sm_ph_gpu_tables *tb) {
    sm_ph_gpu_combined c;
    c.any = (const uint32_t *)(section + v->seed_any_off);
    c.bits = (const uint32_t *)(section + tb->all.bits_off);
    c.rank = (const uint32_t *)(section + tb->all.rank_off);
    c.out_index = (const uint32_t *)(section + tb->all.out_index_off);
    return c;
}

/* Slices a chunk is cut into (every chunk alike, from the longest). */
SM_GPU_HOSTDEV uint32_t sm_ph_gpu_slices(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v) {
    uint32_t n = (a->chunk_max + v->slice - 1) / v->slice;
    return n ? n : 1;
}

/* 2-bit code of a base (A C G T: 0 1 2 3), 4 for anything else (sm_nt_set
   of one base), from the peq class map's dna sets. */
SM_GPU_FN uint32_t sm_ph_gpu_code(uint32_t byte) {
    uint32_t u = byte & 0xdfu;
    return u == 'A' ? 0u : u == 'C' ? 1u : u == 'G' ? 2u : (u == 'T' || u == 'U') ? 3u : 4u;
}

SM_GPU_FN uint64_t sm_ph_gpu_peq(const uint8_t *section, const sm_gpu_pigeonhole *v, const sm_ph_gpu_key *key,
                                 uint32_t byte, uint32_t word) {
    const uint16_t *class_of = (const uint16_t *)(section + v->class_of_off);
    const uint64_t *peq = (const uint64_t *)(section + v->peq_off) + SM_GPU_LDG(&key->peq_at);
    return SM_GPU_LDG(&peq[(size_t)SM_GPU_LDG(&class_of[byte]) * SM_GPU_LDG(&key->blocks) + word]);
}

/* ------------------------------------------------------- k mismatches */

/* The window at x of the key, found through piece `piece` (exact): its
   mismatches, unless an earlier piece is exact too (that one reports it)
   or they pass k (sm_ph_verify_window). */
SM_GPU_FN void sm_ph_gpu_window(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_key *key,
                                uint32_t piece, uint32_t x) {
    const sm_ph_gpu_piece *pc = (const sm_ph_gpu_piece *)(a->section + v->pieces_off) + SM_GPU_LDG(&key->first_piece);
    const uint32_t k = v->k;
    uint32_t mism = 0;
    for (uint32_t p = 0; p <= k; p++) {
        if (p == piece) continue;
        uint32_t before = mism;
        const uint32_t off = SM_GPU_LDG(&pc[p].offset), end = off + SM_GPU_LDG(&pc[p].length);
        for (uint32_t i = off; i < end; i++) {
            uint64_t word = sm_ph_gpu_peq(a->section, v, key, SM_GPU_LDG(&a->text[x + i]), i / 64);
            if (!((word >> (i % 64)) & 1u) && ++mism > k) return;
        }
        if (p < piece && mism == before) return;
    }
    sm_gpu_emit(a, x + SM_GPU_LDG(&key->length), SM_GPU_LDG(&key->output), mism, SM_GPU_HIT_OUTPUT);
}

/* The same for packed keys, from the last 64 symbols read (lo: the newest
   32, two bits each, newest lowest; bad: 01 where a symbol is no base):
   the window ends d symbols before the newest. */
SM_GPU_FN void sm_ph_gpu_window_packed(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_key *key,
                                       const sm_ph_gpu_rkey *rkey, uint32_t m, uint32_t piece, uint32_t x, uint64_t lo,
                                       uint64_t hi, uint64_t bad_lo, uint64_t bad_hi, uint32_t d) {
    uint64_t text = lo, bad = bad_lo;
    if (d) {
        text = (lo >> (2 * d)) | (hi << (64 - 2 * d));
        bad = (bad_lo >> (2 * d)) | (bad_hi << (64 - 2 * d));
    }
    const uint64_t diff = text ^ rkey->code;
    const uint64_t mism = ((diff | (diff >> 1)) & rkey->care) | (bad & rkey->lanes);
    const uint32_t count = (uint32_t)SM_GPU_POPC64(mism);
    if (count > v->k) return;
    const sm_ph_gpu_piece *pc = (const sm_ph_gpu_piece *)(a->section + v->pieces_off) + SM_GPU_LDG(&key->first_piece);
    for (uint32_t p = 0; p < piece; p++) {
        const uint32_t off = SM_GPU_LDG(&pc[p].offset), len = SM_GPU_LDG(&pc[p].length);
        const uint64_t lanes = (len == 32 ? ~0ull : ((1ull << (2 * len)) - 1)) << (2 * (m - off - len));
        if (!(mism & lanes)) return; /* piece p reports this window */
    }
    sm_gpu_emit(a, x + m, SM_GPU_LDG(&key->output), count, SM_GPU_HIT_OUTPUT);
}

/* A piece found at q, to verify: the seed list entry that named it (or
   the piece, with SM_PH_GPU_PIECE; or with SM_PH_GPU_CODE, the code of the
   max bases ending at q, whose pieces the combined table lists), and the
   work item (slice) it belongs to. */
#define SM_PH_GPU_PIECE 0x80000000u
#define SM_PH_GPU_CODE 0x40000000u
typedef struct {
    uint32_t q, entry, item;
} sm_ph_gpu_cand;

/* Where a thread puts what it finds: a block's queue in shared memory, so
   that the block then verifies the candidates a thread each (a long chain
   of dependent loads per candidate no longer holds up the other threads of
   a warp); NULL, or a full queue: verified on the spot. The anchors of
   one-word keys that pass the death tables wait in a second such queue
   (entry: the piece) for the window searches, which then run a thread
   each with the same work on every thread. */
typedef struct {
    sm_ph_gpu_cand *slots;
    uint32_t *count;
    uint32_t cap;
} sm_ph_gpu_queue;

/* Puts c in the queue; 0 when it is full (the caller verifies it itself). */
SM_GPU_FN int sm_ph_gpu_push(const sm_ph_gpu_queue *queue, sm_ph_gpu_cand c) {
#ifdef __CUDACC__
    uint32_t at = atomicAdd(queue->count, 1u);
#else
    uint32_t at = (*queue->count)++;
#endif
    if (at >= queue->cap) return 0;
    queue->slots[at] = c;
    return 1;
}

/* A tile's bases as its scan packed them (tiles, below): two bits a
   position from `first` (A C G T: 0 1 2 3), 32 a word, and a bit a
   position set where the byte is a base. */
typedef struct sm_ph_gpu_tile {
    const uint64_t *codes;
    const uint32_t *valid;
    uint32_t first;
} sm_ph_gpu_tile;

/* The n <= 16 bases of the tile from position at on, the first lowest;
   their base bits in *valid, the first lowest. */
SM_GPU_FN uint32_t sm_ph_gpu_tile_bases(const sm_ph_gpu_tile *t, uint32_t at, uint32_t n, uint32_t *valid) {
    const uint32_t o = at - t->first, w = o >> 5, b = o & 31u;
    uint64_t codes = t->codes[w] >> (2 * b);
    uint64_t bits = t->valid[w] >> b;
    if (b + n > 32) {
        codes |= t->codes[w + 1] << (64 - 2 * b);
        bits |= (uint64_t)t->valid[w + 1] << (32 - b);
    }
    *valid = (uint32_t)(bits & ((1u << n) - 1));
    return (uint32_t)(codes & ((1ull << (2 * n)) - 1));
}

/* The n two-bit groups of x in reverse order (the first becomes the last). */
SM_GPU_FN uint32_t sm_ph_gpu_reverse_groups(uint32_t x, uint32_t n) {
#ifdef __CUDACC__
    uint32_t r = __brev(x);
#else
    uint32_t r = 0;
    for (uint32_t i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
#endif
    r >>= 32 - 2 * n;
    return ((r >> 1) & 0x55555555u) | ((r & 0x55555555u) << 1);
}

/* ------------------------------------------------------------ k edits */

/* One Myers column of a key of up to W bits (W = 32 or 64): the
   vertical deltas pv, mv and the score of the last row move by the match
   word eq (search form: row 0 is 0 in every column). */
#define SM_PH_GPU_MYERS_COLUMN(T, pv, mv, score, eq, top)                 \
    do {                                                                  \
        const T xv_ = (eq) | (mv);                                        \
        const T xh_ = ((((eq) & (pv)) + (pv)) ^ (pv)) | (eq);             \
        T ph_ = (mv) | ~(xh_ | (pv));                                     \
        T mh_ = (pv) & xh_;                                               \
        (score) += (uint32_t)((ph_ & (top)) != 0) - (uint32_t)((mh_ & (top)) != 0); \
        ph_ <<= 1;                                                        \
        mh_ <<= 1;                                                        \
        (pv) = mh_ | ~(xv_ | ph_);                                        \
        (mv) = ph_ & xv_;                                                 \
    } while (0)

/* k edits, keys of one word, an anchor that passed the death tables: every
   alignment through the piece at q lies in the text window [q - offset - k,
   q - offset + m + k) (the key's symbols before the piece take at most k
   more or fewer text symbols), so Myers' search over that window, from its
   first byte on, gives each end an alignment cost that is at most the
   anchored one and is itself a real alignment's: every owned end j with
   D(j) <= k is reported with D(j) through the anchor of its optimal
   alignment, and the runner keeps each end's least cost. The window is
   clipped to [ch.from, ch.c1) as the anchored DPs were: the look-back holds
   every alignment of an owned end. One step costs the same on every
   thread, so a warp's candidates take the same time whatever their text.
   rows: the key's forward match words by class (the section's or a copy in
   shared memory), class_of: the byte classes. */
SM_GPU_FN void sm_ph_gpu_window_edits(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_key *key,
                                      const uint64_t *rows, const uint16_t *class_of, uint32_t offset, uint32_t q,
                                      sm_gpu_chunk ch) {
    const uint32_t k = v->k, m = SM_GPU_LDG(&key->length), output = SM_GPU_LDG(&key->output);
    const uint32_t w0 = q - ch.from >= offset + k ? q - offset - k : ch.from;
    uint32_t w1 = q - offset + m + k;
    if (w1 > ch.c1) w1 = ch.c1;
    uint32_t score = m;
    if (m <= 32) {
        const uint32_t top = 1u << (m - 1);
        uint32_t pv = ~0u, mv = 0;
        for (uint32_t i = w0; i < w1; i++) {
            const uint32_t eq = (uint32_t)rows[class_of[SM_GPU_LDG(&a->text[i])]];
            SM_PH_GPU_MYERS_COLUMN(uint32_t, pv, mv, score, eq, top);
            if (score <= k && i >= ch.c0) sm_gpu_emit(a, i + 1, output, score, SM_GPU_HIT_END);
        }
        return;
    }
    const uint64_t top = 1ull << (m - 1);
    uint64_t pv = ~0ull, mv = 0;
    for (uint32_t i = w0; i < w1; i++) {
        const uint64_t eq = rows[class_of[SM_GPU_LDG(&a->text[i])]];
        SM_PH_GPU_MYERS_COLUMN(uint64_t, pv, mv, score, eq, top);
        if (score <= k && i >= ch.c0) sm_gpu_emit(a, i + 1, output, score, SM_GPU_HIT_END);
    }
}

/* The band DP of pigeonhole_verify.c (band_dp) for keys of several words:
   rows i = key symbols from first, forwards or backwards; columns t = text
   from the anchor; values above kk kept as kk + 1. Leaves the last row in
   row[d] (t = rows - kk + d) and returns its least value. */
SM_GPU_FN uint32_t sm_ph_gpu_band(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_key *key,
                                  uint32_t first, int dir, uint32_t rows, uint32_t at, uint32_t avail, uint32_t kk,
                                  uint32_t *row) {
    const uint32_t width = 2 * kk + 1, dead = kk + 1;
    uint32_t prev[2 * SM_PH_GPU_BAND_K + 1], cur[2 * SM_PH_GPU_BAND_K + 1];
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
            uint32_t val = d + 1 < width ? prev[d + 1] + 1 : dead;
            if (d > 0 && cur[d - 1] + 1 < val) val = cur[d - 1] + 1;
            if (t >= 1) {
                uint32_t byte = SM_GPU_LDG(&a->text[dir > 0 ? at + (uint32_t)t - 1 : at - (uint32_t)t]);
                uint64_t word = sm_ph_gpu_peq(a->section, v, key, byte, j / 64);
                uint32_t diag = prev[d] + (uint32_t)(((word >> (j % 64)) & 1u) ^ 1u);
                if (diag < val) val = diag;
            }
            if (val > dead) val = dead;
            cur[d] = val;
            if (val < least) least = val;
        }
        if (least > kk) return dead;
        for (uint32_t d = 0; d < width; d++) prev[d] = cur[d];
    }
    for (uint32_t d = 0; d < width; d++) row[d] = prev[d];
    return least;
}

/* The anchor of piece `piece` (of key `key_index`) at q, text from ch.from
   (look-back) to ch.c1: after the death tables, the window search (keys of
   one word; queued in `later` when there is one with room, item naming the
   slice) or the band DPs on both sides (sm_ph_verify_anchor). */
SM_GPU_FN void sm_ph_gpu_anchor(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, uint32_t key_index,
                                uint32_t piece, uint32_t q, sm_gpu_chunk ch, uint32_t item,
                                const sm_ph_gpu_queue *later, const struct sm_ph_gpu_tile *tile) {
    const sm_ph_gpu_key *key = (const sm_ph_gpu_key *)(a->section + v->keys_off) + key_index;
    const sm_ph_gpu_piece *pc = (const sm_ph_gpu_piece *)(a->section + v->pieces_off) + piece;
    const uint64_t *peq = (const uint64_t *)(a->section + v->peq_off) + SM_GPU_LDG(&key->peq_at);
    const uint32_t k = v->k, length = SM_GPU_LDG(&key->length), blocks = SM_GPU_LDG(&key->blocks);
    const uint32_t offset = SM_GPU_LDG(&pc->offset), plen = SM_GPU_LDG(&pc->length);
    const uint32_t rest = length - offset - plen, floor = ch.from, limit = ch.c1;
    if (v->alive_columns) {
        /* most anchors die within a few symbols on either side */
        const uint32_t c = v->alive_columns;
        const uint64_t words = (1ull << (2 * c)) / 64;
        const uint64_t *alive = (const uint64_t *)(a->section + v->alive_off) + (uint64_t)piece * 2 * words;
        const uint32_t all = (1u << c) - 1;
        if (offset > 0 && q - floor >= c) {
            uint32_t code = 0, bad = 0;
            if (tile) {
                /* the c bases before q, the nearest lowest */
                uint32_t valid;
                code = sm_ph_gpu_reverse_groups(sm_ph_gpu_tile_bases(tile, q - c, c, &valid), c);
                bad = valid == all ? 0u : 4u;
            } else {
                for (uint32_t j = 0; j < c; j++) {
                    uint32_t x = sm_ph_gpu_code(SM_GPU_LDG(&a->text[q - 1 - j]));
                    bad |= x;
                    code |= (x & 3u) << (2 * j);
                }
            }
            if (bad < 4 && !((SM_GPU_LDG(&alive[code / 64]) >> (code % 64)) & 1u)) return;
        }
        if (rest > 0 && q + plen + c <= limit) {
            uint32_t code = 0, bad = 0;
            if (tile) {
                uint32_t valid;
                code = sm_ph_gpu_tile_bases(tile, q + plen, c, &valid);
                bad = valid == all ? 0u : 4u;
            } else {
                for (uint32_t j = 0; j < c; j++) {
                    uint32_t x = sm_ph_gpu_code(SM_GPU_LDG(&a->text[q + plen + j]));
                    bad |= x;
                    code |= (x & 3u) << (2 * j);
                }
            }
            if (bad < 4 && !((SM_GPU_LDG(&alive[words + code / 64]) >> (code % 64)) & 1u)) return;
        }
    }
    if (q + plen > limit) return; /* every end through it lies past the slice */
    if (tile || blocks == 1) {
        sm_ph_gpu_cand c;
        c.q = q;
        c.entry = piece;
        c.item = item;
        if (later && sm_ph_gpu_push(later, c)) return;
        sm_ph_gpu_window_edits(a, v, key, peq, (const uint16_t *)(a->section + v->class_of_off), offset, q, ch);
        return;
    }
    uint32_t before = 0, row[2 * SM_PH_GPU_BAND_K + 1];
    if (offset > 0) {
        before = sm_ph_gpu_band(a, v, key, offset - 1, -1, offset, q, q - floor, k, row);
        if (before > k) return;
    }
    const uint32_t after = q + plen;
    const uint32_t kk = k - before;
    if (sm_ph_gpu_band(a, v, key, offset + plen, 1, rest, after, limit - after, kk, row) > kk) return;
    const uint32_t output = SM_GPU_LDG(&key->output);
    for (uint32_t d = 0; d <= 2 * kk; d++) {
        int64_t t = (int64_t)rest + d - kk;
        if (t < 0 || row[d] > kk) continue;
        uint32_t end = after + (uint32_t)t;
        if (end - 1 >= ch.c0 && end - 1 < ch.c1) sm_gpu_emit(a, end, output, before + row[d], SM_GPU_HIT_END);
    }
}

/* A queued anchor (sm_ph_gpu_anchor's `later`) of slice ch: its window
   search, the key's match words from rows (nkeys * v->rows words, key
   after key; NULL: the section's) and the byte classes from class_of. */
SM_GPU_FN void sm_ph_gpu_window_queued(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, sm_ph_gpu_cand c,
                                       sm_gpu_chunk ch, const uint64_t *rows, const uint16_t *class_of) {
    const sm_ph_gpu_piece *pc = (const sm_ph_gpu_piece *)(a->section + v->pieces_off) + c.entry;
    const uint32_t key_index = SM_GPU_LDG(&pc->key);
    const sm_ph_gpu_key *key = (const sm_ph_gpu_key *)(a->section + v->keys_off) + key_index;
    const uint64_t *r = rows ? rows + (size_t)key_index * v->rows
                             : (const uint64_t *)(a->section + v->peq_off) + SM_GPU_LDG(&key->peq_at);
    sm_ph_gpu_window_edits(a, v, key, r, class_of, SM_GPU_LDG(&pc->offset), c.q, ch);
}

/* ---------------------------------------------------------- the scan */

/* A piece of key_index at place `offset` (its index among the key's
   pieces `index`, number `piece` in the section) found at q. */
SM_GPU_FN void sm_ph_gpu_hit(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, sm_gpu_chunk ch, uint32_t q,
                             uint32_t key_index, uint32_t offset, uint32_t piece, uint32_t index, uint32_t item,
                             const sm_ph_gpu_queue *later, const struct sm_ph_gpu_tile *tile) {
    if (!v->edits) {
        if (q < ch.c0 + offset) return; /* the window starts before the slice: another thread's */
        const sm_ph_gpu_key *key = (const sm_ph_gpu_key *)(a->section + v->keys_off) + key_index;
        uint32_t x = q - offset;
        if (x >= ch.c1 || x + SM_GPU_LDG(&key->length) > ch.end) return;
        sm_ph_gpu_window(a, v, key, index, x);
        return;
    }
    sm_ph_gpu_anchor(a, v, key_index, piece, q, ch, item, later, tile);
}

/* Verifies a candidate of slice ch (anchors that pass the death tables
   to `later` when given). */
SM_GPU_FN void sm_ph_gpu_verify(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_combined *cb,
                                sm_gpu_chunk ch, sm_ph_gpu_cand c, const sm_ph_gpu_queue *later, const struct sm_ph_gpu_tile *tile) {
    if (c.entry & SM_PH_GPU_CODE) {
        /* every piece ending at c.q that the combined table lists under the code */
        const uint32_t code = c.entry & ~SM_PH_GPU_CODE;
        const uint32_t slot = sm_kt_gpu_slot(cb->bits, cb->rank, code);
        const sm_ph_gpu_seed *list = (const sm_ph_gpu_seed *)(a->section + v->seed_list_off);
        for (uint32_t e = cb->out_index[slot], end = cb->out_index[slot + 1]; e < end; e++) {
            const sm_ph_gpu_seed *x = &list[e];
            sm_ph_gpu_hit(a, v, ch, c.q - SM_GPU_LDG(&x->length), SM_GPU_LDG(&x->key), SM_GPU_LDG(&x->offset),
                          SM_GPU_LDG(&x->piece), SM_GPU_LDG(&x->index), c.item, later, tile);
        }
        return;
    }
    if (c.entry & SM_PH_GPU_PIECE) {
        const uint32_t piece = c.entry & ~SM_PH_GPU_PIECE;
        const sm_ph_gpu_piece *pc = (const sm_ph_gpu_piece *)(a->section + v->pieces_off) + piece;
        sm_ph_gpu_hit(a, v, ch, c.q, SM_GPU_LDG(&pc->key), SM_GPU_LDG(&pc->offset), piece, SM_GPU_LDG(&pc->index),
                      c.item, later, tile);
        return;
    }
    const sm_ph_gpu_seed *x = (const sm_ph_gpu_seed *)(a->section + v->seed_list_off) + c.entry;
    sm_ph_gpu_hit(a, v, ch, c.q, SM_GPU_LDG(&x->key), SM_GPU_LDG(&x->offset), SM_GPU_LDG(&x->piece),
                  SM_GPU_LDG(&x->index), c.item, later, tile);
}

/* A candidate: queued (queue), or verified at once, its anchors to
   `later` (or searched at once when NULL). */
SM_GPU_FN void sm_ph_gpu_found(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_combined *cb,
                               sm_gpu_chunk ch, const sm_ph_gpu_queue *queue, const sm_ph_gpu_queue *later,
                               uint32_t q, uint32_t entry, uint32_t item, const struct sm_ph_gpu_tile *tile) {
    sm_ph_gpu_cand c;
    c.q = q;
    c.entry = entry;
    c.item = item;
    if (queue && sm_ph_gpu_push(queue, c)) return;
    sm_ph_gpu_verify(a, v, cb, ch, c, later, tile);
}

/* Every piece ending just past batch offset i (the base at i, the rolling
   code of the last `run` bases in roll, newest lowest). */
SM_GPU_FN void sm_ph_gpu_position(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_tables *tb,
                                  const sm_ph_gpu_combined *cb, sm_gpu_chunk ch, const sm_ph_gpu_queue *queue,
                                  const sm_ph_gpu_queue *later, uint32_t item, uint64_t roll, uint32_t run,
                                  uint32_t i, const struct sm_ph_gpu_tile *tile) {
    const uint32_t max = v->seed_max;
    if (run >= max) {
        uint32_t code = (uint32_t)(roll & ((1ull << (2 * max)) - 1));
        if (!((cb->any[code >> 5] >> (code & 31)) & 1u)) return;
        if (v->has_all) {
            /* the table is read when the candidate is verified */
            sm_ph_gpu_found(a, v, cb, ch, queue, later, i + 1, SM_PH_GPU_CODE | code, item, tile);
            return;
        }
    }
    for (uint32_t L = 1; L <= max; L++) {
        const sm_gpu_kmer *t = &tb->len[L];
        if (!t->k || run < L) continue;
        const uint8_t *base = a->section;
        uint32_t code = (uint32_t)(roll & ((1ull << (2 * L)) - 1));
        const uint32_t *bits = (const uint32_t *)(base + t->bits_off);
        if (!sm_kt_gpu_test(bits, code)) continue;
        uint32_t slot = sm_kt_gpu_slot(bits, (const uint32_t *)(base + t->rank_off), code);
        const uint32_t *out_index = (const uint32_t *)(base + t->out_index_off);
        const uint32_t *out_list = (const uint32_t *)(base + t->out_list_off);
        for (uint32_t e = SM_GPU_LDG(&out_index[slot]), end = SM_GPU_LDG(&out_index[slot + 1]); e < end; e++)
            sm_ph_gpu_found(a, v, cb, ch, queue, later, i + 1 - L, SM_PH_GPU_PIECE | (SM_GPU_LDG(&out_list[e]) >> 1), item,
                            tile);
    }
}

/* k mismatches with packed keys: the symbols are read max_key - 1 ahead of
   the pieces' ends, so that every window a piece implies is among the last
   64 symbols read and is compared in a few word operations. Symbols past
   the chunk's bytes are no bases. */
SM_GPU_FN void sm_ph_gpu_slice_packed(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v,
                                      const sm_ph_gpu_tables *tb, const sm_ph_gpu_rkey *rkeys,
                                      const sm_ph_gpu_combined *cb, sm_gpu_chunk ch) {
    const uint32_t lo = ch.c0, D = v->max_key - 1, max = v->seed_max;
    uint32_t hi = ch.c1 + v->max_key - 1;
    if (hi > ch.end) hi = ch.end;
    const sm_ph_gpu_key *keys = (const sm_ph_gpu_key *)(a->section + v->keys_off);
    const sm_ph_gpu_seed *list = (const sm_ph_gpu_seed *)(a->section + v->seed_list_off);
    const uint32_t *any = cb->any, *bits = cb->bits, *rank = cb->rank, *out_index = cb->out_index;
    const uint64_t piece_mask = (1ull << (2 * max)) - 1;
    uint64_t c_lo = 0, c_hi = 0, b_lo = 0x5555555555555555ull, b_hi = 0x5555555555555555ull;
    for (uint32_t at = lo & ~15u; at < hi + D; at += 16) {
        uint32_t w[4] = {0, 0, 0, 0};
        if (at < ch.end) sm_gpu_load16(a->text + at, w);
        for (uint32_t j = 0; j < 16; j++) {
            const uint32_t i = at + j;
            if (i < lo) continue;
            if (i >= hi + D) break;
            uint32_t c = i < ch.end ? sm_ph_gpu_code((w[j >> 2] >> (8 * (j & 3))) & 0xffu) : 4u;
            c_hi = (c_hi << 2) | (c_lo >> 62);
            c_lo = (c_lo << 2) | (c & 3u);
            b_hi = (b_hi << 2) | (b_lo >> 62);
            b_lo = (b_lo << 2) | (uint64_t)(c > 3);
            if (i < lo + D) continue;
            /* the piece ends at e = i - D: its bases at lanes D .. D + L - 1 */
            const uint32_t e = i - D;
            if (e >= hi) continue;
            const uint64_t code_w = D ? (c_lo >> (2 * D)) | (c_hi << (64 - 2 * D)) : c_lo;
            const uint64_t bad_w = D ? (b_lo >> (2 * D)) | (b_hi << (64 - 2 * D)) : b_lo;
            if (bad_w & piece_mask) continue; /* fewer than max bases: the per-length tables */
            const uint32_t code = (uint32_t)(code_w & piece_mask);
            if (!((any[code >> 5] >> (code & 31)) & 1u)) continue;
            const uint32_t slot = sm_kt_gpu_slot(bits, rank, code);
            for (uint32_t x = out_index[slot], end = out_index[slot + 1]; x < end; x++) {
                const sm_ph_gpu_seed *sd = &list[x];
                const uint32_t key = SM_GPU_LDG(&sd->key), offset = SM_GPU_LDG(&sd->offset);
                const uint32_t len = SM_GPU_LDG(&sd->length);
                const uint32_t q = e + 1 - len;
                if (q < ch.c0 + offset) continue;
                const sm_ph_gpu_rkey *rk = &rkeys[key];
                const uint32_t start = q - offset, m = (uint32_t)SM_GPU_POPC64(rk->lanes);
                if (start >= ch.c1 || start + m > ch.end) continue;
                /* the window's last symbol is start + m - 1, i - (start + m - 1) symbols back */
                sm_ph_gpu_window_packed(a, v, &keys[key], rk, m, SM_GPU_LDG(&sd->index), start, c_lo, c_hi, b_lo, b_hi,
                                        i - (start + m - 1));
            }
        }
    }
    /* Those shorter pieces, in a second pass over the few positions after a non-base. */
    uint64_t roll = 0;
    uint32_t run = 0;
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t c = sm_ph_gpu_code(SM_GPU_LDG(&a->text[i]));
        if (c > 3) {
            run = 0;
            continue;
        }
        roll = roll << 2 | c;
        run += run < 32;
        if (run >= max) continue;
        /* fewer than max bases end here: every piece of length <= run */
        const sm_ph_gpu_piece *pieces = (const sm_ph_gpu_piece *)(a->section + v->pieces_off);
        for (uint32_t L = 1; L <= run; L++) {
            const sm_gpu_kmer *lt = &tb->len[L];
            if (!lt->k) continue;
            uint32_t lc = (uint32_t)(roll & ((1ull << (2 * L)) - 1));
            const uint32_t *lbits = (const uint32_t *)(a->section + lt->bits_off);
            if (!sm_kt_gpu_test(lbits, lc)) continue;
            uint32_t slot = sm_kt_gpu_slot(lbits, (const uint32_t *)(a->section + lt->rank_off), lc);
            const uint32_t *oi = (const uint32_t *)(a->section + lt->out_index_off);
            const uint32_t *ol = (const uint32_t *)(a->section + lt->out_list_off);
            for (uint32_t x = SM_GPU_LDG(&oi[slot]), end = SM_GPU_LDG(&oi[slot + 1]); x < end; x++) {
                uint32_t piece = SM_GPU_LDG(&ol[x]) >> 1;
                const sm_ph_gpu_piece *pc = &pieces[piece];
                sm_ph_gpu_hit(a, v, ch, i + 1 - L, SM_GPU_LDG(&pc->key), SM_GPU_LDG(&pc->offset), piece,
                              SM_GPU_LDG(&pc->index), 0, NULL, NULL);
            }
        }
    }
}

/* Where a thread's slice is read: from where its hits' pieces may start
   to where they may end. Mismatches: pieces of windows starting in
   [c0, c1) lie in [c0, c1 + longest - 1); edits: anchors of ends in
   [c0, c1) in [from, c1). */
SM_GPU_FN void sm_ph_gpu_span(const sm_gpu_pigeonhole *v, sm_gpu_chunk ch, uint32_t *lo, uint32_t *hi) {
    *lo = v->edits ? ch.from : ch.c0;
    *hi = v->edits ? ch.c1 : ch.c1 + v->max_key - 1;
    if (*hi > ch.end && !v->edits) *hi = ch.end;
}

/* Bytes of a slice read between two verifications of the block's queue. */
#define SM_PH_GPU_EPOCH 64u

/* The scan's state between pieces of a slice read in turn. */
typedef struct {
    uint64_t roll;           /* seed tables: the codes of the last bases */
    uint32_t run;
    uint32_t state;          /* the automaton: its state (a row offset) */
} sm_ph_gpu_scan_state;

/* Text [from, to) of slice ch (within its span; from the span's start with
   a zero state), through the seed tables or the automaton. */
SM_GPU_FN void sm_ph_gpu_scan(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_tables *tb,
                              const sm_ph_gpu_combined *cb, sm_gpu_chunk ch, const sm_ph_gpu_queue *queue,
                              uint32_t item, sm_ph_gpu_scan_state *st, uint32_t from, uint32_t to) {
    if (v->seeds) {
        uint64_t roll = st->roll;
        uint32_t run = st->run;
        for (uint32_t at = from & ~15u; at < to; at += 16) {
            uint32_t w[4];
            sm_gpu_load16(a->text + at, w);
            for (uint32_t j = 0; j < 16; j++) {
                uint32_t i = at + j;
                if (i < from || i >= to) continue;
                uint32_t c = sm_ph_gpu_code((w[j >> 2] >> (8 * (j & 3))) & 0xffu);
                if (c > 3) {
                    run = 0;
                    continue;
                }
                roll = roll << 2 | c;
                run += run < 32;
                sm_ph_gpu_position(a, v, tb, cb, ch, queue, NULL, item, roll, run, i, NULL);
            }
        }
        st->roll = roll;
        st->run = run;
        return;
    }
    /* the automaton over the pieces (output id piece * 2), from its root at the span's start */
    const sm_gpu_automaton *ac = &tb->ac;
    const uint32_t *delta = (const uint32_t *)(a->section + ac->delta_off);
    const uint32_t *out_index = (const uint32_t *)(a->section + ac->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(a->section + ac->out_list_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + ac->class_of_off);
    const uint32_t *lengths = (const uint32_t *)(a->section + v->lengths_off); /* sm_db_pattern: 6 words each */
    uint32_t s = st->state;
    for (uint32_t i = from; i < to; i++) {
        uint32_t e = SM_GPU_LDG(&delta[s + SM_GPU_LDG(&class_of[SM_GPU_LDG(&a->text[i])])]);
        s = e & ~SM_GPU_DFA_FLAG;
        if (!(e & SM_GPU_DFA_FLAG)) continue;
        uint32_t state = s / ac->columns;
        for (uint32_t o = SM_GPU_LDG(&out_index[state]), end = SM_GPU_LDG(&out_index[state + 1]); o < end; o++) {
            uint32_t piece = SM_GPU_LDG(&out_list[o]) >> 1;
            uint32_t len = SM_GPU_LDG(&lengths[6 * piece + 4]);
            sm_ph_gpu_found(a, v, cb, ch, queue, NULL, i + 1 - len, SM_PH_GPU_PIECE | piece, item, NULL);
        }
    }
    st->state = s;
}

/* ---------------------------------------------------------- tiles */

/* k edits through the combined table, keys of one word, long chunks: a
   block takes a tile of a chunk (SM_PH_GPU_TILE owned bytes and its
   look-back; sm_gpu_chunk_part), its threads mark the positions where a
   piece may end in a bitmap and pack the tile's bases (32 positions a
   thread, 16-byte loads, consecutive threads on consecutive text), the
   block ranks the marked positions, lists them and verifies them a thread
   each (the codes before each from the packed bases, the combined table's
   list, the death tables from the packed bases), then searches the anchors
   that pass a thread each. Each stage gives every thread the same kind of
   work; the slices' scan held a thread's whole verification beside its
   serial byte loop. */
#define SM_PH_GPU_TILE 8064u
/* Bits of a tile's bitmap: 32 a thread of a block of 256. The span (tile,
   look-back, the bitmap's first word aligned down) must fit. */
#define SM_PH_GPU_TILE_BITS 8192u
/* Chunks at least this long go in tiles (shorter ones, e.g. reads, a
   slice a thread). */
#define SM_PH_GPU_TILE_MIN 1024u

SM_GPU_HOSTDEV int sm_ph_gpu_tiled(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v) {
    return v->edits && v->seeds && v->has_all && v->one_word && a->chunk_max >= SM_PH_GPU_TILE_MIN &&
           SM_PH_GPU_TILE + a->reach + 31u <= SM_PH_GPU_TILE_BITS;
}

/* Tiles a chunk is cut into (every chunk alike, from the longest). */
SM_GPU_HOSTDEV uint32_t sm_ph_gpu_tile_parts(const sm_gpu_scan_args *a) {
    uint32_t n = (a->chunk_max + SM_PH_GPU_TILE - 1) / SM_PH_GPU_TILE;
    return n ? n : 1;
}

/* The byte -> base code table of the tiles' scan (sm_ph_gpu_code). */
SM_GPU_FN void sm_ph_gpu_code_table(uint8_t *table, uint32_t from, uint32_t step) {
    for (uint32_t b = from; b < 256; b += step) table[b] = (uint8_t)sm_ph_gpu_code(b);
}

/* The positions i of [p, p + 32) within [lo, hi) (p a multiple of 32)
   where the slice scan started at lo would look a piece up, as bits i - p:
   the last max bases form a code some piece ends with, or fewer than max
   bases follow a non-base or lo (the tables of each length). Also the
   positions' bases packed (sm_ph_gpu_tile), through code_of (the byte ->
   code table). */
SM_GPU_FN uint32_t sm_ph_gpu_tile_word(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v,
                                       const sm_ph_gpu_combined *cb, const uint8_t *code_of, uint32_t lo,
                                       uint32_t hi, uint32_t p, uint64_t *codes, uint32_t *valid) {
    uint32_t w[12] = {0, 0, 0, 0};
    if (p >= 16) sm_gpu_load16(a->text + p - 16, w);
    sm_gpu_load16(a->text + p, w + 4);
    sm_gpu_load16(a->text + p + 16, w + 8);
    const uint32_t max = v->seed_max, mask = (1u << (2 * max)) - 1;
    uint32_t roll = 0, run = 0, bits = 0, ok = 0;
    uint64_t packed = 0;
    /* from the longest piece's length - 1 bytes before p (more bases
       before those change neither the code nor whether run reaches max) */
    SM_GPU_UNROLL
    for (uint32_t j = 16 - (SM_PH_GPU_SEED_MAX - 1); j < 48; j++) {
        const uint32_t c = code_of[(w[j >> 2] >> (8 * (j & 3))) & 0xffu];
        if (j >= 16) {
            packed |= (uint64_t)(c & 3u) << (2 * (j - 16));
            ok |= (uint32_t)(c < 4) << (j - 16);
        }
        if (p + j < lo + 16) continue; /* before lo: the scan starts there */
        if (c > 3) {
            run = 0;
            continue;
        }
        roll = ((roll << 2) | c) & mask;
        run += run < max;
        if (j >= 16 && p + j - 16 < hi && (run < max || ((cb->any[roll >> 5] >> (roll & 31)) & 1u)))
            bits |= 1u << (j - 16);
    }
    *codes = packed;
    *valid = ok;
    return bits;
}

/* A marked position i of a tile ch scanned from lo (its bases in tile):
   the pieces ending just past it, verified at once; anchors to `later`
   (searched at once when it is full). */
SM_GPU_FN void sm_ph_gpu_tile_candidate(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v,
                                        const sm_ph_gpu_tables *tb, const sm_ph_gpu_combined *cb, sm_gpu_chunk ch,
                                        const sm_ph_gpu_tile *tile, uint32_t lo, uint32_t i,
                                        const sm_ph_gpu_queue *later) {
    const uint32_t max = v->seed_max;
    const uint32_t from = i - lo >= max - 1 ? i - (max - 1) : lo, n = i - from + 1;
    uint32_t valid;
    const uint32_t codes = sm_ph_gpu_tile_bases(tile, from, n, &valid);
    /* the bases since the last non-base, the newest lowest (the scan's roll) */
    uint32_t run = 0;
    while (run < n && ((valid >> (n - 1 - run)) & 1u)) run++;
    if (run) sm_ph_gpu_position(a, v, tb, cb, ch, NULL, later, 0, sm_ph_gpu_reverse_groups(codes, n), run, i, tile);
}

#endif /* SM_PIGEONHOLE_GPU_H */
