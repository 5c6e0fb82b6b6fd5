/* Section header and helpers shared by the k-mer table's builder, validator
   and scanner. */
#ifndef SM_KMER_PRIVATE_H
#define SM_KMER_PRIVATE_H

#include "engines/kmer/kmer.h"

#define SM_KT_MAGIC 0x31544d4bu /* "KMT1" */
#define SM_KT_BREAK 0xffu       /* code_of[] entry of a byte that is no key symbol */
#define SM_KT_STATE_WORDS 2     /* rolling code (2 bits per symbol), valid symbols (capped at k) */

typedef struct {
    uint32_t magic;
    uint32_t k;
    uint32_t mask;          /* 4^k - 1 */
    uint32_t symbols;       /* distinct key symbols, 1..4 */
    uint64_t words;         /* 64-bit words of the bitmap: ceil(4^k / 64) */
    uint64_t slots;         /* distinct keys (set bits) */
    uint64_t out_total;
    uint64_t bits_off, rank_off, out_index_off, out_list_off;
    uint8_t symbol[4];      /* key symbol of each code (0 when unused) */
    /* Byte -> code with two 16-byte shuffles, when the classes allow it:
       the code's bit (1 << code) is nib_lo[b & 15] & nib_hi[b >> 4], 0 for
       a breaking byte. nibble_ok is 1 when that holds for every byte. */
    uint32_t nibble_ok;
    uint8_t nib_lo[16], nib_hi[16];
    uint8_t reserved[16];
    uint8_t code_of[256];   /* text byte -> code 0..symbols-1, or SM_KT_BREAK */
} sm_kt_header;
_Static_assert(sizeof(sm_kt_header) % 64 == 0, "k-mer header keeps tables aligned");

static inline uint64_t sm_kt_align64(uint64_t x) { return (x + 63u) & ~(uint64_t)63u; }

static inline uint64_t sm_kt_words_for(uint32_t k) { return ((1ull << (2 * k)) + 63u) / 64u; }

typedef struct {
    uint64_t bits_off, rank_off, out_index_off, out_list_off, size;
} sm_kt_layout;

static inline sm_kt_layout sm_kt_layout_for(uint64_t words, uint64_t slots, uint64_t out_total) {
    sm_kt_layout l;
    l.bits_off = sm_kt_align64(sizeof(sm_kt_header));
    l.rank_off = sm_kt_align64(l.bits_off + words * 8u);
    l.out_index_off = sm_kt_align64(l.rank_off + words * 4u);
    l.out_list_off = sm_kt_align64(l.out_index_off + (slots + 1) * 4u);
    l.size = sm_kt_align64(l.out_list_off + out_total * 4u);
    return l;
}

/* Fills the shuffle tables for code_of; returns 1 when they map every byte
   exactly, else 0 (tables zeroed). */
static inline uint32_t sm_kt_nibble_map(const uint8_t code_of[256], uint8_t lo[16], uint8_t hi[16]) {
    memset(lo, 0, 16);
    memset(hi, 0, 16);
    for (int b = 0; b < 256; b++) {
        if (code_of[b] == SM_KT_BREAK) continue;
        lo[b & 15] |= (uint8_t)(1u << (code_of[b] & 3));
        hi[b >> 4] |= (uint8_t)(1u << (code_of[b] & 3));
    }
    for (int b = 0; b < 256; b++) {
        uint8_t want = code_of[b] == SM_KT_BREAK ? 0 : (uint8_t)(1u << (code_of[b] & 3));
        if ((lo[b & 15] & hi[b >> 4]) != want) {
            memset(lo, 0, 16);
            memset(hi, 0, 16);
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------- hash layout "KMH1" */

#define SM_KH_MAGIC 0x31484d4bu /* "KMH1" */
#define SM_KH_EMPTY 0xffffffffu /* slot of an empty table entry */
#define SM_KH_FILTER_MIN_LOG2 3  /* filter words: 8 (64 bytes) .. */
#define SM_KH_FILTER_MAX_LOG2 19 /* .. 2^19 (4 MiB) */
#define SM_KH_CAP_MAX_LOG2 40

/* Open-addressing entry: the key's 2-bit code and its slot (SM_KH_EMPTY and
   code 0 when the entry is free). */
typedef struct {
    uint64_t code;
    uint32_t slot;
    uint32_t pad; /* 0 */
} sm_kh_entry;

typedef struct {
    uint32_t magic;          /* SM_KH_MAGIC */
    uint32_t k;              /* SM_KT_DIRECT_MAX_K + 1 .. SM_KT_MAX_K */
    uint32_t symbols;        /* distinct key symbols, 1..4 */
    uint32_t cap_log2;       /* table entries: 1 << cap_log2, at least twice the slots */
    uint64_t mask;           /* 4^k - 1 (all ones for k = 32) */
    uint64_t slots;          /* distinct keys */
    uint64_t out_total;
    /* Hashes of a k-mer code: home entry (code * hash_mul) >> (64 - cap_log2);
       filter f = code * filter_mul, word f >> (64 - filter_log2) and two bits
       in it (below). Both multipliers are multiples of 2^(64 - 2k), so the
       scan may multiply a rolling code holding older symbols above 2k bits. */
    uint64_t hash_mul;
    uint64_t filter_mul;
    uint32_t filter_log2;    /* bits (f >> (58 - filter_log2)) & 63 and (f >> (52 - filter_log2)) & 63 */
    uint32_t reserved0;
    uint64_t filter_off, table_off, out_index_off, out_list_off;
    uint8_t symbol[4];       /* key symbol of each code (0 when unused) */
    uint32_t nibble_ok;      /* as in sm_kt_header */
    uint8_t nib_lo[16], nib_hi[16];
    uint8_t reserved[56];
    uint8_t code_of[256];    /* text byte -> code 0..symbols-1, or SM_KT_BREAK */
} sm_kh_header;
_Static_assert(sizeof(sm_kh_header) % 64 == 0, "k-mer hash header keeps tables aligned");
_Static_assert(sizeof(sm_kh_entry) == 16, "hash entries are 16 bytes");

typedef struct {
    uint64_t filter_off, table_off, out_index_off, out_list_off, size;
} sm_kh_layout;

static inline sm_kh_layout sm_kh_layout_for(uint32_t filter_log2, uint32_t cap_log2, uint64_t slots,
                                            uint64_t out_total) {
    sm_kh_layout l;
    l.filter_off = sm_kt_align64(sizeof(sm_kh_header));
    l.table_off = sm_kt_align64(l.filter_off + (8ull << filter_log2));
    l.out_index_off = sm_kt_align64(l.table_off + (16ull << cap_log2));
    l.out_list_off = sm_kt_align64(l.out_index_off + (slots + 1) * 4u);
    l.size = sm_kt_align64(l.out_list_off + out_total * 4u);
    return l;
}

static inline uint64_t sm_kh_mask(uint32_t k) { return k >= 32 ? ~0ull : (1ull << (2 * k)) - 1; }

/* The two filter bits of a code in its word, and the word's index. */
static inline uint64_t sm_kh_filter_bits(uint64_t f, uint32_t filter_log2) {
    return 1ull << ((f >> (58 - filter_log2)) & 63) | 1ull << ((f >> (52 - filter_log2)) & 63);
}

/* The key symbols in byte order (at most 4); their number, or 0 when the
   keys are not eligible. */
unsigned sm_kt_key_symbols(const sm_ac_key *keys, size_t nkeys, uint8_t symbol[4]);

int sm_kh_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], uint64_t max_bytes,
                const sm_kt_tuning *tuning, sm_buf *section, sm_error *err);
int sm_kh_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);
void sm_kh_scan(const uint8_t *section, const sm_kt_variant *var, uint64_t *state, const uint8_t *text, size_t len,
                uint64_t pos0, sm_sink *sink);
size_t sm_kh_slots(const uint8_t *section);
void sm_kh_fold_visits(const uint8_t *section, uint32_t *visits, uint64_t *counts);

#endif /* SM_KMER_PRIVATE_H */
