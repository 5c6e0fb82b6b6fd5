/* Section header and helpers shared by the Wu-Manber builder, validator and
   scanner. */
#ifndef SM_WM_PRIVATE_H
#define SM_WM_PRIVATE_H

#include "engines/wumanber/wumanber.h"

#define SM_WM_MAGIC 0x314d4d57u /* "WMM1" */
#define SM_WM_MAX_BLOCK 16u
#define SM_WM_MAX_PREFIX 4u
#define SM_WM_MAX_HASH_BITS 20u
#define SM_WM_AUTO_HASH_BITS 18u /* 256 KiB of shifts: half the L2 of a current core */
#define SM_WM_MAX_SHIFT 255u

typedef struct {
    uint32_t magic;
    uint32_t block;         /* B */
    uint32_t prefix;        /* B' */
    uint32_t shortest;      /* m: length of the shortest key (window length) */
    uint32_t longest;
    uint32_t bits;          /* bits of a symbol code, 1..8 */
    uint32_t hash_bits;     /* the tables have 2^hash_bits entries */
    uint32_t direct;        /* 1: the hash is the codes themselves (block * bits <= hash_bits) */
    uint32_t default_shift; /* min(m - B + 1, SM_WM_MAX_SHIFT) */
    uint32_t symbols;       /* distinct key symbols */
    uint64_t nkeys;         /* entries */
    uint64_t key_bytes;
    uint64_t shift_off, bucket_off, entry_off, keys_off;
    /* SIMD prefilter (0 when absent; older sections have zeros here): the
       nibble masks of the keys' first prefilter_bytes bytes, lo[j][16] then
       hi[j][16] for j = 0..2, one bit per bucket of keys; then the buckets:
       start[9] and member[32], entry indices (uint8). A key of bucket b can
       start at s only if b's bit is set in lo[j][t[s + j] & 15] &
       hi[j][t[s + j] >> 4] for every j. */
    uint64_t prefilter_off;
    uint32_t prefilter_bytes; /* 1..3, at most shortest; 0 when absent */
    /* One key of 8 to 255 bytes (0 otherwise; older sections: zeros): its
       windows can be found 16 or 32 at a time by comparing the text at
       three key places (anchor: first, middle, last) with the text bytes
       that fold to the key's byte there (two, or one twice). */
    uint8_t single;
    uint8_t anchor[3];
    uint8_t anchor_bytes[3][2];
    uint8_t reserved[18];
    uint8_t code[256];      /* text byte -> symbol code (0 for bytes no key uses) */
    uint8_t fold[256];      /* text byte -> the byte keys are compared with */
} sm_wm_header;
_Static_assert(sizeof(sm_wm_header) % 64 == 0, "Wu-Manber header keeps tables aligned");

typedef struct {
    uint32_t prefix;  /* the first B' key bytes, first in the lowest byte */
    uint32_t len;
    uint32_t output;  /* pattern * 2 + reverse */
    uint32_t key_off; /* into keys */
} sm_wm_entry;

static inline uint64_t sm_wm_align64(uint64_t x) { return (x + 63u) & ~(uint64_t)63u; }

/* The text bytes that fold to key byte k (at most two, in bytes); returns
   how many there are (0 to 256). */
static inline int sm_wm_fold_class(const uint8_t fold[256], uint8_t k, uint8_t bytes[2]) {
    int count = 0;
    for (int b = 0; b < 256; b++)
        if (fold[b] == k) {
            if (count < 2) bytes[count] = (uint8_t)b;
            count++;
        }
    return count;
}

/* The single-key fields for key[0, len): 1 when the key has them (8 to 255
   bytes, one of them at least with one or two text bytes folding to it),
   else 0 with the fields zero. The anchors are the first such place, the
   last, and the one nearest the middle (T, which U and u fold to in DNA,
   is passed over). */
static inline int sm_wm_single_fields(const uint8_t *key, uint32_t len, const uint8_t fold[256], uint8_t *anchor,
                                      uint8_t (*anchor_bytes)[2]) {
    for (int j = 0; j < 3; j++) anchor[j] = anchor_bytes[j][0] = anchor_bytes[j][1] = 0;
    if (len < 8 || len > 255) return 0;
    int ok[255];
    uint8_t cls[255][2];
    for (uint32_t i = 0; i < len; i++) {
        int c = sm_wm_fold_class(fold, key[i], cls[i]);
        ok[i] = c >= 1 && c <= 2;
        if (c == 1) cls[i][1] = cls[i][0];
    }
    int first = -1, last = -1, mid = -1;
    for (int i = 0; i < (int)len && first < 0; i++)
        if (ok[i]) first = i;
    if (first < 0) return 0;
    for (int i = (int)len - 1; last < 0; i--)
        if (ok[i]) last = i;
    for (int d = 0; mid < 0; d++) {
        int lo = (int)len / 2 - d, hi = (int)len / 2 + d;
        if (lo >= 0 && ok[lo]) mid = lo;
        else if (hi < (int)len && ok[hi]) mid = hi;
    }
    const int at[3] = {first, mid, last};
    for (int j = 0; j < 3; j++) {
        anchor[j] = (uint8_t)at[j];
        anchor_bytes[j][0] = cls[at[j]][0];
        anchor_bytes[j][1] = cls[at[j]][1];
    }
    return 1;
}

#define SM_WM_PREFILTER_MAX_KEYS 32u /* 8 buckets of at most 4 keys */
#define SM_WM_PREFILTER_SIZE 137u     /* lo[3][16], hi[3][16], start[9], member[32] */
#define SM_WM_PREFILTER_START 96u
#define SM_WM_PREFILTER_MEMBER 105u

typedef struct {
    uint64_t shift_off, bucket_off, entry_off, keys_off, prefilter_off, size;
} sm_wm_layout;

/* The buckets that text byte t lets through at key byte j (0..2). */
static inline unsigned sm_wm_prefilter_buckets(const uint8_t *pf, uint32_t j, uint8_t t) {
    return pf[16 * j + (t & 15)] & pf[48 + 16 * j + (t >> 4)];
}

static inline sm_wm_layout sm_wm_layout_for(uint32_t hash_bits, uint64_t nkeys, uint64_t key_bytes, int prefilter) {
    sm_wm_layout l;
    uint64_t slots = 1ull << hash_bits;
    l.shift_off = sm_wm_align64(sizeof(sm_wm_header));
    l.bucket_off = sm_wm_align64(l.shift_off + slots);
    l.entry_off = sm_wm_align64(l.bucket_off + (slots + 1) * 4u);
    l.keys_off = sm_wm_align64(l.entry_off + nkeys * sizeof(sm_wm_entry));
    l.size = sm_wm_align64(l.keys_off + key_bytes);
    l.prefilter_off = prefilter ? l.size : 0;
    if (prefilter) l.size = sm_wm_align64(l.size + SM_WM_PREFILTER_SIZE);
    return l;
}

/* The table slot of a block whose codes, oldest first, are packed into
   `packed` (bits per code). */
static inline uint32_t sm_wm_slot(uint64_t packed, uint32_t hash_bits, uint32_t direct) {
    if (direct) return (uint32_t)packed;
    return (uint32_t)((packed * 0x9E3779B97F4A7C15ull) >> (64 - hash_bits));
}

/* Slot of the block of B bytes ending just before p (already folded bytes
   go through code[]). */
static inline uint32_t sm_wm_block_slot(const sm_wm_header *h, const uint8_t *block) {
    uint64_t packed = 0;
    for (uint32_t j = 0; j < h->block; j++) packed = packed << h->bits | h->code[block[j]];
    return sm_wm_slot(packed, h->hash_bits, h->direct);
}

/* PREFIX of B' bytes (through fold[]). */
static inline uint32_t sm_wm_prefix_of(const uint8_t fold[256], const uint8_t *p, uint32_t n) {
    uint32_t v = 0;
    for (uint32_t j = 0; j < n; j++) v |= (uint32_t)fold[p[j]] << (8 * j);
    return v;
}

#endif /* SM_WM_PRIVATE_H */
