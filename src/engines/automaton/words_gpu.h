/* The automaton's keys looked for where they start, on the GPU: for a set
 * of words whose transition table is too large for a lookup per byte
 * through L2 to keep pace (automaton_gpu.c says from what size).
 *
 * The keys are the automaton's own: every state with an output of its own
 * depth is a key, its classes the path from the root (the states are
 * numbered breadth first, so a state's parent is the first state whose
 * transition reaches it). A text position can start a key only if its
 * first min(length, 4) classes are some key's: a filter of those windows in
 * shared memory (one bit each, hashed) rejects most positions with one or a
 * few lookups; a candidate's windows are looked up in a hash table of
 * buckets, and the bucket's keys compared: their next four classes at
 * once, any further ones class by class. A hit so found
 * starts at its position, so a chunk owns those starting in [c0, c1) and
 * reads up to its end, as the table's kernel does.
 *
 * Windows pack classes a byte each, the first in the low byte. Key classes
 * are never 0 (the class of every byte no key holds), so a key window of q
 * classes has exactly its low q bytes set, and a text window is cut at its
 * first class 0 and at the chunk's end.
 *
 * The tables (sm_acw_tables and what its offsets name) are the section's
 * GPU extra (engines/gpu_part.h), made on the host from the section
 * (automaton_gpu.c), read by the kernel (automaton_cuda.cu) and its CPU
 * stand-in with the functions below. */
#ifndef SM_AC_WORDS_GPU_H
#define SM_AC_WORDS_GPU_H

#include "engines/gpu_part.h"

#define SM_ACW_FILTER_HASH 0x9e3779b1u
#define SM_ACW_BUCKET_HASH 0x85ebca6bu
#define SM_ACW_BUCKET_KEYS 1023u  /* keys of one window at most */
#define SM_ACW_MAX_KEYS (1u << 22)

typedef struct {
    uint32_t filter_log2;  /* the filter's bits: 1 << filter_log2 */
    uint32_t windows;      /* bit q - 1: some key's window has q classes */
    uint32_t buckets_log2;
    uint32_t keys;
    uint32_t ids;
    uint32_t filter_off;   /* uint32[]: the filter, bit per hashed window */
    uint32_t buckets_off;  /* sm_acw_bucket[1 << buckets_log2] */
    uint32_t keys_off;     /* sm_acw_key[keys], a bucket's keys together */
    uint32_t pool_off;     /* uint8[]: each key's classes */
    uint32_t ids_off;      /* uint32[]: each key's output ids (pattern * 2 + reverse) */
    uint32_t size;         /* of the whole */
    uint32_t reserved;
    uint8_t class_of[256]; /* text byte -> class (the automaton's columns, < 256) */
} sm_acw_tables;

/* A window's keys: window 0 for an empty slot; info = first key << 10 | keys. */
typedef struct {
    uint32_t window, info;
} sm_acw_bucket;

typedef struct {
    uint32_t next;       /* its classes 4 to 7 (those it has), packed as a window */
    uint16_t length, ids;
    uint32_t first_id;   /* its ids in the id list */
    uint32_t pool_off;   /* all its classes in the pool (read for those past 8) */
} sm_acw_key;

/* The window of a key (or a text position) of length q <= 4. */
SM_GPU_FN uint32_t sm_acw_cut(uint32_t w, uint32_t q) { return q >= 4 ? w : w & ((1u << (8 * q)) - 1u); }

SM_GPU_FN uint32_t sm_acw_filter_bit(uint32_t w, uint32_t log2) { return (w * SM_ACW_FILTER_HASH) >> (32 - log2); }

SM_GPU_FN uint32_t sm_acw_bucket_home(uint32_t w, uint32_t log2) { return (w * SM_ACW_BUCKET_HASH) >> (32 - log2); }

/* The classes of a lane's 16 bytes at p (a 16-byte word w), four a word;
   bytes at or past end are class 0. */
SM_GPU_FN void sm_acw_classes(const uint8_t *class_of, const uint32_t w[4], uint32_t p, uint32_t end, uint32_t cw[4]) {
    SM_GPU_UNROLL
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t x = 0;
        SM_GPU_UNROLL
        for (uint32_t b = 0; b < 4; b++) {
            uint32_t c = class_of[(w[i] >> (8 * b)) & 0xffu];
            x |= (p + 4 * i + b < end ? c : 0u) << (8 * b);
        }
        cw[i] = x;
    }
}

/* The positions of a lane's piece at p that its chunk owns (bit j: p + j
   in [c0, c1)). */
SM_GPU_FN uint32_t sm_acw_owned(uint32_t p, sm_gpu_chunk ch) {
    uint32_t m = 0xffffu;
    if (p + 16 <= ch.c0 || p >= ch.c1) return 0;
    if (p < ch.c0) m &= 0xffffu << (ch.c0 - p);
    if (p + 16 > ch.c1) m &= (1u << (ch.c1 - p)) - 1u;
    return m & 0xffffu;
}

/* The four classes from byte j (< 20) of a lane's piece: cw[0..3] its
   own, cw[4..5] the next piece's first eight. */
SM_GPU_FN uint32_t sm_acw_window(const uint32_t cw[6], uint32_t j) {
    /* selects, not an index: a lane's words stay in registers for any j */
    const uint32_t i = j >> 2, s = (j & 3u) * 8;
    const uint32_t lo = i == 0 ? cw[0] : i == 1 ? cw[1] : i == 2 ? cw[2] : i == 3 ? cw[3] : cw[4];
    const uint32_t hi = i == 0 ? cw[1] : i == 1 ? cw[2] : i == 2 ? cw[3] : i == 3 ? cw[4] : cw[5];
#ifdef __CUDACC__
    return __funnelshift_r(lo, hi, s);
#else
    return s ? lo >> s | hi << (32 - s) : lo;
#endif
}

/* Positions of want (bit j: p + j) whose windows pass the filter: for each
   window length q the keys have, a lookup per position with no branch;
   passed[0] holds the positions that passed with q = 1 (bits 0-15) and 2
   (bits 16-31), passed[1] those of q = 3 and 4. Returns every position
   that passed with some q. */
SM_GPU_FN uint32_t sm_acw_candidates(const uint32_t *filter, uint32_t log2, uint32_t windows, const uint32_t cw[6],
                                     uint32_t want, uint32_t passed[2]) {
    passed[0] = passed[1] = 0;
    for (uint32_t q = 1; q <= 4; q++) {
        if (!((windows >> (q - 1)) & 1u)) continue;
        const uint32_t keep = q >= 4 ? ~0u : (1u << (8 * q)) - 1u;
        uint32_t pass = 0;
        SM_GPU_UNROLL
        for (uint32_t j = 0; j < 16; j++) {
            uint32_t b = sm_acw_filter_bit(sm_acw_window(cw, j) & keep, log2);
            pass |= ((filter[b >> 5] >> (b & 31u)) & 1u) << j;
        }
        passed[(q - 1) >> 1] |= (pass & want) << (16 * ((q - 1) & 1u));
    }
    return (passed[0] | passed[0] >> 16 | passed[1] | passed[1] >> 16) & 0xffffu;
}

/* The window lengths that passed at position j (bit q - 1). */
SM_GPU_FN uint32_t sm_acw_lengths_at(const uint32_t passed[2], uint32_t j) {
    return ((passed[0] >> j) & 1u) | ((passed[0] >> (16 + j)) & 1u) << 1 | ((passed[1] >> j) & 1u) << 2 |
           ((passed[1] >> (16 + j)) & 1u) << 3;
}

/* How many of a window's classes are set before its first class 0. */
SM_GPU_FN uint32_t sm_acw_span(uint32_t w) {
    /* the lowest byte flagged by (w - 0x01..) & ~w & 0x80.. is w's first 0 */
    const uint32_t zero = (w - 0x01010101u) & ~w & 0x80808080u;
#ifdef __CUDACC__
    return zero ? (uint32_t)(__ffs(zero) - 1) >> 3 : 4u;
#else
    return zero ? (uint32_t)__builtin_ctz(zero) >> 3 : 4u;
#endif
}

/* Every key that starts at batch offset p, whose first classes (cut at
   end) are w and next four w2, of a window length in lengths (bit q - 1:
   the filter passed it): each found is counted in counters[key] (count
   mode, when the caller keeps per-key counters) or reported with its
   outputs. The caller says where it keeps the byte map, the buckets and
   the keys (shared memory or the tables). */
SM_GPU_FN void sm_acw_verify(const sm_gpu_scan_args *a, const sm_acw_tables *t, const uint8_t *class_of,
                             const sm_acw_bucket *buckets, const sm_acw_key *keys, uint32_t p, uint32_t end, uint32_t w,
                             uint32_t w2, uint32_t lengths, uint32_t *counters) {
    const uint8_t *base = (const uint8_t *)t;
    const uint8_t *pool = base + t->pool_off;
    const uint32_t *ids = (const uint32_t *)(base + t->ids_off);
    const uint32_t mask = (1u << t->buckets_log2) - 1u;
    for (uint32_t q = sm_acw_span(w); q >= 1; q--) {
        if (!((lengths >> (q - 1)) & 1u)) continue;
        const uint32_t wq = sm_acw_cut(w, q);
        uint32_t info = 0;
        for (uint32_t at = sm_acw_bucket_home(wq, t->buckets_log2);; at = (at + 1) & mask) {
            const sm_acw_bucket b = buckets[at];
            if (b.window == 0) break;
            if (b.window == wq) {
                info = b.info;
                break;
            }
        }
        const uint32_t first = info >> 10, last = first + (info & 1023u);
        for (uint32_t k = first; k < last; k++) {
            const sm_acw_key key = keys[k];
            const uint32_t length = key.length;
            if (p + length > end) continue;
            if (length > 4 && (w2 ^ key.next) & sm_acw_cut(~0u, length - 4)) continue;
            uint32_t j = 8;
            while (j < length && class_of[a->text[p + j]] == SM_GPU_LDG(&pool[key.pool_off + j])) j++;
            if (j < length) continue;
            if (counters) {
#ifdef __CUDACC__
                atomicAdd(&counters[k], 1u);
#else
                counters[k]++;
#endif
                continue;
            }
            for (uint32_t i = 0; i < key.ids; i++) sm_gpu_output(a, p + length, SM_GPU_LDG(&ids[key.first_id + i]));
        }
    }
}

/* Adds count hits of key k to its patterns' counts (count mode). */
SM_GPU_FN void sm_acw_add_counts(const sm_gpu_scan_args *a, const sm_acw_tables *t, uint32_t k, uint32_t count) {
    const uint8_t *base = (const uint8_t *)t;
    const sm_acw_key *keys = (const sm_acw_key *)(base + t->keys_off);
    const uint32_t *ids = (const uint32_t *)(base + t->ids_off);
    const uint32_t from = SM_GPU_LDG(&keys[k].first_id), n = SM_GPU_LDG(&keys[k].ids);
    for (uint32_t i = 0; i < n; i++) {
#ifdef __CUDACC__
        atomicAdd(&a->counts[SM_GPU_LDG(&ids[from + i]) >> 1], (unsigned long long)count);
#else
        a->counts[ids[from + i] >> 1] += count;
#endif
    }
}

#ifndef __CUDACC__
#include "base/internal.h"

/* Builds the tables from an automaton section and its database's pattern
   table into buf (NULL: only sizes them), their header also into head when
   not NULL. Returns their size, or 0 when this way does not suit the set:
   more than 255 classes or 2^20 states, a window of more than
   SM_ACW_BUCKET_KEYS keys, or windows that would pass more than a quarter
   of a text of evenly spread classes. */
size_t sm_acw_build(const uint8_t *section, const sm_db_pattern *patterns, sm_acw_tables *head, void *buf);
#endif

#endif /* SM_AC_WORDS_GPU_H */
