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

#endif /* SM_KMER_PRIVATE_H */
