/* K-mer table scan.
 *
 * Short texts (and hosts without SSSE3 and POPCNT) take a plain loop: one
 * rolling code, one bitmap test per byte. Longer texts go block by block,
 * each block in passes with no dependency from one position to the next:
 *   1. bytes -> 2-bit codes with two nibble shuffles (or a table), and a
 *      bitmap of breaking bytes;
 *   2. for every position the 4-symbol code x4 (4 shifted loads), then the
 *      k-mer code from x4 at i, i - 4 and i - 8, and the bit selector of the
 *      code inside its bitmap byte;
 *   3. one byte load per position from the bitmap (the only scalar pass);
 *   4. hit bits from those bytes and the selectors, cleared where a
 *      breaking byte lies among the last k;
 *   5. a walk over the set hit bits: count (per distinct k-mer, or per
 *      pattern) or report.
 * On CPUs with AVX-512 (F, BW, VBMI2), passes 1 to 4 (and 5 when counting)
 * run in 512-bit registers, 64 positions per step, the bitmap tested by
 * 16-lane gathers (prepare512). Elsewhere, when asked, passes 3 and 4 are
 * one AVX2 gather per 8 positions (gather_hits). In count mode with k <= 8
 * and dense keys, the SSSE3 passes 3 to 5 give way to a per-code histogram
 * (count_codes).
 * The PAD codes and the break bits before a block carry the last symbols of
 * the previous block (or of the previous call, through the state).
 */

#include <stdlib.h>

#include "engines/kmer/kmer_private.h"

typedef struct {
    sm_kt_view t; /* the tables, as other engines read them too */
    const uint8_t *code_of;
    const sm_kt_header *h;
    uint32_t k, mask;
} kt_view;

static inline uint32_t slot_of(const kt_view *v, uint32_t m) { return sm_kt_slot(&v->t, m); }

/* Every output of code m for a hit ending at end, through the sink. */
__attribute__((noinline)) static void deliver(const kt_view *v, uint32_t m, uint64_t end, sm_sink *sink) {
    uint32_t s = slot_of(v, m);
    for (uint32_t i = v->t.out_index[s]; i < v->t.out_index[s + 1]; i++) {
        uint32_t id = v->t.out_list[i];
        sm_sink_add(sink, end - v->k, end, id >> 1, (int)(id & 1), 0);
    }
}

/* Advances state over text[from, len) without reporting. */
static void advance_state(const kt_view *v, uint64_t *state, const uint8_t *text, size_t from, size_t len) {
    uint64_t code = state[0], valid = state[1];
    for (size_t i = from; i < len; i++) {
        uint8_t c = v->code_of[text[i]];
        if (c == SM_KT_BREAK) {
            code <<= 2;
            valid = 0;
        } else {
            code = code << 2 | c;
            if (valid < v->k) valid++;
        }
    }
    state[0] = code;
    state[1] = valid;
}

static void scan_plain(const kt_view *v, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                       sm_sink *sink) {
    uint64_t code = state[0], valid = state[1];
    const uint32_t k = v->k, mask = v->mask;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = v->code_of[text[i]];
        if (c == SM_KT_BREAK) {
            code <<= 2;
            valid = 0;
            continue;
        }
        code = code << 2 | c;
        if (valid < k) valid++;
        uint32_t m = (uint32_t)code & mask;
        if (valid >= k && sm_kt_has(&v->t, m)) deliver(v, m, pos0 + i + 1, sink);
    }
    state[0] = code;
    state[1] = valid;
}

/* ------------------------------------------------------------- blocks */

#if defined(__x86_64__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <immintrin.h>
#define SM_KT_BLOCKS 1

#define BLK 1024u /* positions per block, a multiple of 64 */
_Static_assert(BLK == SM_KT_FIND_BLOCK, "sm_kt_find hands on whole blocks");

typedef struct {
    union {                                /* k-mer code ending at block position i */
        _Alignas(64) uint32_t codes[BLK + 16];
        uint16_t codes16[BLK + 16];         /* k <= 8 */
    };
    _Alignas(64) uint8_t bsel[BLK + 16];   /* 1 << (code & 7): the code's bit in its bitmap byte */
    _Alignas(64) uint8_t hb[BLK + 16];     /* the code's bitmap byte */
    uint64_t brk[1 + BLK / 64];            /* brk[1 + w]: breaking bytes of word w; brk[0]: the word before */
    uint64_t hit[BLK / 64];
    _Alignas(64) uint32_t found[BLK + 16]; /* prepare512 counting: the codes of the block's hits */
    __m128i c4_prev, x2s_prev, x4_prev;    /* of the 16 positions before the block */
} kt_block;

#define KT_INLINE static inline __attribute__((always_inline))

/* x4 of 16 positions from their codes c (and c4 = c << 2) and those of the
   16 positions before them (c4_prev; x2s_prev: x2 << 4 of those positions). */
__attribute__((target("ssse3"))) KT_INLINE __m128i four_codes(__m128i c, __m128i c4, __m128i c4_prev,
                                                            __m128i *x2s_prev) {
    const __m128i shl4 = _mm_setr_epi8(0, 16, 32, 48, 64, 80, 96, 112, (char)128, (char)144, (char)160, (char)176,
                                       (char)192, (char)208, (char)224, (char)240);
    __m128i x2 = _mm_or_si128(_mm_alignr_epi8(c4, c4_prev, 15), c); /* c[i - 1] << 2 | c[i] */
    __m128i x2s = _mm_shuffle_epi8(shl4, x2);
    __m128i x4 = _mm_or_si128(_mm_alignr_epi8(x2s, *x2s_prev, 14), x2);
    *x2s_prev = x2s;
    return x4;
}

/* Passes 1 to 4 for n bytes of text (positions up to the next multiple of
   16 are filled too; the caller ignores them). narrow: k <= 8, 16-bit codes.
   probe 0: passes 1 and 2 only (codes and break bits, for the histogram). */
__attribute__((target("ssse3"))) KT_INLINE void prepare(const kt_view *v, const uint8_t *text, size_t n, kt_block *b,
                                                      const int narrow, const int probe) {
    const __m128i lo = _mm_loadu_si128((const __m128i *)v->h->nib_lo);
    const __m128i hi = _mm_loadu_si128((const __m128i *)v->h->nib_hi);
    const __m128i to_code = _mm_setr_epi8(0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0);
    const __m128i to_code4 = _mm_setr_epi8(0, 0, 4, 0, 8, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0);
    const __m128i nib = _mm_set1_epi8(15), zero = _mm_setzero_si128();
    const __m128i mask = narrow ? _mm_set1_epi16((short)v->mask) : _mm_set1_epi32((int)v->mask);
    const __m128i low3 = _mm_set1_epi8((char)(v->mask & 7));
    const __m128i pow2 = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0);
    const int nibbles = v->h->nibble_ok != 0;
    __m128i c4_prev = b->c4_prev, x2s_prev = b->x2s_prev, x4_prev = b->x4_prev;
    const uint8_t *bytes = (const uint8_t *)v->t.bits;
    size_t n16 = (n + 15) & ~(size_t)15;
    for (size_t w = 0; w * 64 < n16; w++) {
        uint64_t word = 0;
        for (size_t q = 0; q < 4 && w * 64 + q * 16 < n16; q++) {
            size_t i = w * 64 + q * 16;
            __m128i c, c4;
            unsigned breaks;
            if (nibbles) {
                __m128i x;
                if (i + 16 <= n) {
                    x = _mm_loadu_si128((const __m128i *)(text + i));
                } else {
                    uint8_t tmp[16] = {0};
                    memcpy(tmp, text + i, n - i);
                    x = _mm_loadu_si128((const __m128i *)tmp);
                }
                __m128i bits = _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(x, nib)),
                                             _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(x, 4), nib)));
                c = _mm_shuffle_epi8(to_code, bits);
                c4 = _mm_shuffle_epi8(to_code4, bits);
                breaks = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(bits, zero));
            } else {
                uint8_t tmp[16];
                breaks = 0;
                for (unsigned j = 0; j < 16; j++) {
                    uint8_t code = i + j < n ? v->code_of[text[i + j]] : 0;
                    tmp[j] = code & 3;
                    breaks |= (unsigned)(code == SM_KT_BREAK) << j;
                }
                c = _mm_loadu_si128((const __m128i *)tmp);
                c4 = _mm_slli_epi16(c, 2); /* codes are 0..3: no bit crosses bytes */
            }
            word |= (uint64_t)breaks << (q * 16);
            __m128i x4 = four_codes(c, c4, c4_prev, &x2s_prev);
            c4_prev = c4;
            __m128i a4 = _mm_alignr_epi8(x4, x4_prev, 12);
            __m128i l16 = _mm_unpacklo_epi8(x4, a4), h16 = _mm_unpackhi_epi8(x4, a4); /* x4[i] | x4[i - 4] << 8 */
            if (narrow) {
                __m128i *out = (__m128i *)(b->codes16 + i);
                _mm_store_si128(out, _mm_and_si128(l16, mask));
                _mm_store_si128(out + 1, _mm_and_si128(h16, mask));
            } else {
                __m128i a8 = _mm_alignr_epi8(x4, x4_prev, 8);
                __m128i l8 = _mm_unpacklo_epi8(a8, zero), h8 = _mm_unpackhi_epi8(a8, zero);
                __m128i *out = (__m128i *)(b->codes + i);
                _mm_store_si128(out, _mm_and_si128(_mm_unpacklo_epi16(l16, l8), mask));
                _mm_store_si128(out + 1, _mm_and_si128(_mm_unpackhi_epi16(l16, l8), mask));
                _mm_store_si128(out + 2, _mm_and_si128(_mm_unpacklo_epi16(h16, h8), mask));
                _mm_store_si128(out + 3, _mm_and_si128(_mm_unpackhi_epi16(h16, h8), mask));
            }
            if (probe) _mm_store_si128((__m128i *)(b->bsel + i), _mm_shuffle_epi8(pow2, _mm_and_si128(x4, low3)));
            x4_prev = x4;
        }
        b->brk[1 + w] = word;
        if (!probe) continue;
        /* Pass 3: the bitmap byte of every code. */
        size_t end = w * 64 + 64 < n16 ? w * 64 + 64 : n16;
        for (size_t i = w * 64; i < end; i += 4) {
            uint32_t h0, h1, h2, h3;
            if (narrow) {
                uint64_t c;
                memcpy(&c, b->codes16 + i, 8);
                h0 = bytes[(uint16_t)c >> 3];
                h1 = bytes[(uint32_t)c >> 19];
                h2 = bytes[(uint16_t)(c >> 32) >> 3];
                h3 = bytes[c >> 51];
            } else {
                uint64_t c01, c23;
                memcpy(&c01, b->codes + i, 8);
                memcpy(&c23, b->codes + i + 2, 8);
                h0 = bytes[(uint32_t)c01 >> 3];
                h1 = bytes[c01 >> 35];
                h2 = bytes[(uint32_t)c23 >> 3];
                h3 = bytes[c23 >> 35];
            }
            uint32_t four = h0 | h1 << 8 | h2 << 16 | h3 << 24;
            memcpy(b->hb + i, &four, 4);
        }
        /* Pass 4: hit bits. */
        word = 0;
        for (size_t q = 0; q < 4 && w * 64 + q * 16 < n16; q++) {
            size_t i = w * 64 + q * 16;
            __m128i t = _mm_and_si128(_mm_load_si128((const __m128i *)(b->hb + i)),
                                      _mm_load_si128((const __m128i *)(b->bsel + i)));
            word |= (uint64_t)(uint16_t)~_mm_movemask_epi8(_mm_cmpeq_epi8(t, zero)) << (q * 16);
        }
        b->hit[w] = word;
    }
    b->c4_prev = c4_prev;
    b->x2s_prev = x2s_prev;
    b->x4_prev = x4_prev;
}

_Static_assert(SM_KT_CODE_VISITS_MAX_K == 8, "narrow blocks (k <= 8) are those with one visit counter per code");

/* The code ending at block position i; perm: as prepare512 stores them,
   32-bit, position 4j + q of each 64 at 16q + j. */
KT_INLINE uint32_t code_at(const kt_block *b, size_t i, const int narrow, const int perm) {
    if (perm) return b->codes[(i & ~(size_t)63) | (i & 3) << 4 | (i & 63) >> 2];
    return narrow ? b->codes16[i] : b->codes[i];
}

/* How a block's hits are taken: through the sink (0), per pattern (1), or
   per distinct k-mer in visits (2), the last two only in count mode for
   blocks whose every k-mer start the sink owns. */
KT_INLINE int block_mode(const sm_sink *sink, size_t n, uint64_t end0, uint32_t k) {
    if (!sink->counts || end0 + n - 1 < k) return 0;
    uint64_t lo = end0 >= k ? end0 - k : 0, hi = end0 + n - 1 - k;
    if (lo < sink->own_lo || hi >= sink->own_hi) return 0;
    return sink->visits ? 2 : 1;
}

/* Positions of word w of the block with a breaking byte among their last k. */
KT_INLINE uint64_t broken_in_word(const kt_block *b, size_t w, uint32_t k) {
    uint64_t cur = b->brk[1 + w], prev = b->brk[w], brk = cur;
    if (__builtin_expect(cur != 0 || (k > 1 && prev >> (65 - k) != 0), 0))
        for (uint32_t s = 1; s < k; s++) brk |= cur << s | prev >> (64 - s);
    return brk;
}

KT_INLINE uint64_t first_bits(size_t n, size_t w) { return n - w * 64 < 64 ? (1ull << (n - w * 64)) - 1 : ~0ull; }

/* Pass 5 for n positions whose first ends at absolute position end0. */
KT_INLINE void walk_hits(const kt_view *v, const kt_block *b, size_t n, uint64_t end0, sm_sink *sink, int mode,
                         const int narrow, const int perm) {
    const uint32_t k = v->k;
    for (size_t w = 0; w * 64 < n; w++) {
        uint64_t hits = b->hit[w] & ~broken_in_word(b, w, k) & first_bits(n, w);
        size_t base = w * 64;
        if (mode == 2) {
            /* one counter per code when narrow (k <= SM_KT_CODE_VISITS_MAX_K), else per slot */
            uint32_t *visits = sink->visits;
            while (hits) {
                unsigned i = (unsigned)__builtin_ctzll(hits);
                hits &= hits - 1;
                uint32_t m = code_at(b, base + i, narrow, perm);
                visits[narrow ? m : slot_of(v, m)]++;
            }
        } else if (mode == 1) {
            uint64_t *counts = sink->counts;
            while (hits) {
                unsigned i = (unsigned)__builtin_ctzll(hits);
                hits &= hits - 1;
                uint32_t s = slot_of(v, code_at(b, base + i, narrow, perm));
                for (uint32_t o = v->t.out_index[s]; o < v->t.out_index[s + 1]; o++) counts[v->t.out_list[o] >> 1]++;
            }
        } else {
            while (hits) {
                unsigned i = (unsigned)__builtin_ctzll(hits);
                hits &= hits - 1;
                deliver(v, code_at(b, base + i, narrow, perm), end0 + base + i, sink);
            }
        }
    }
}

/* Count mode with k <= 8: kt_visits has one counter per code (4^k), and
   every position adds 1 to its code's counter, pattern or not, with no
   bitmap test and no rank: a dense set (the 16000 8-mers hit at a third of
   all positions) costs what a sparse one does. Positions with a break among
   their last k take their 1 back. Counters of codes that are no key are
   never read (sm_kt_fold_visits reads and zeroes the keys' only). */
KT_INLINE void count_codes(const kt_block *b, size_t n, uint32_t k, uint32_t *visits) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t c0, c1;
        memcpy(&c0, b->codes16 + i, 8);
        memcpy(&c1, b->codes16 + i + 4, 8);
        visits[(uint16_t)c0]++;
        visits[(uint16_t)c1]++;
        visits[(uint16_t)(c0 >> 16)]++;
        visits[(uint16_t)(c1 >> 16)]++;
        visits[(uint16_t)(c0 >> 32)]++;
        visits[(uint16_t)(c1 >> 32)]++;
        visits[c0 >> 48]++;
        visits[c1 >> 48]++;
    }
    for (; i < n; i++) visits[b->codes16[i]]++;
    for (size_t w = 0; w * 64 < n; w++) {
        uint64_t broken = broken_in_word(b, w, k) & first_bits(n, w);
        while (broken) {
            unsigned j = (unsigned)__builtin_ctzll(broken);
            broken &= broken - 1;
            visits[b->codes16[w * 64 + j]]--;
        }
    }
}

/* Passes 3 and 4 with AVX2 gathers: for 8 positions at a time, the 32-bit
   bitmap words of their codes in one gather, then each code's bit. */
__attribute__((target("avx2"), noinline)) static void gather_hits(const kt_view *v, kt_block *b, size_t n,
                                                                const int narrow) {
    const int *words = (const int *)v->t.bits;
    const __m256i low5 = _mm256_set1_epi32(31), one = _mm256_set1_epi32(1);
    size_t n16 = (n + 15) & ~(size_t)15; /* prepare's codes end here; past it lies anything */
    for (size_t w = 0; w * 64 < n; w++) {
        uint64_t word = 0;
        for (unsigned q = 0; q < 8 && w * 64 + q * 8 < n16; q++) {
            size_t i = w * 64 + q * 8;
            __m256i c = narrow ? _mm256_cvtepu16_epi32(_mm_load_si128((const __m128i *)(b->codes16 + i)))
                               : _mm256_load_si256((const __m256i *)(b->codes + i));
            __m256i x = _mm256_i32gather_epi32(words, _mm256_srli_epi32(c, 5), 4);
            __m256i bit = _mm256_and_si256(_mm256_srlv_epi32(x, _mm256_and_si256(c, low5)), one);
            word |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(bit, 31))) << (q * 8);
        }
        b->hit[w] = word;
    }
}

/* Passes 1 to 4 (and 5 when counting) with AVX-512 (F, BW, VBMI2) for n
   bytes, 64 positions per step, every step in registers:
   - qword lanes roll the codes: a concatenating shift (vpshldq) brings in
     the symbols of the lane before, so x2 = c | c[i - 1] << 2 and x4 =
     x2 | x2[i - 2] << 4 take one shift each;
   - the k-mer codes are formed in dword lanes: vector q holds the positions
     4j + q (j = 0..15) of the step, so that no byte shuffle is needed; the
     hit bits return to position order by pdep, the codes are stored in that
     order (code_at's perm);
   - the bitmap is tested by 16-lane gathers and rotates.
   With visits (count mode 2, narrow) the codes of the valid hits are packed
   into found and counted in one tight loop, with no bit walk, and no codes
   or hit words are stored. It carries the same state as prepare (c4_prev,
   x2s_prev, x4_prev). Needs nibble_ok. */
__attribute__((target("avx512f,avx512bw,avx512vbmi2,avx2,popcnt,bmi,bmi2"), noinline)) static void
prepare512(const kt_view *v, const uint8_t *text, size_t n, kt_block *b, const int narrow, uint32_t *visits) {
    const __m512i lo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)v->h->nib_lo));
    const __m512i hi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)v->h->nib_hi));
    const __m512i to_code = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0));
    const __m512i nib = _mm512_set1_epi8(15), mask = _mm512_set1_epi32((int)v->mask);
    const __m512i low8 = _mm512_set1_epi32(0xff), low16 = _mm512_set1_epi32(0xffff), one = _mm512_set1_epi32(1);
    const int *words = (const int *)v->t.bits;
    const uint64_t every4 = 0x1111111111111111ull;
    /* The previous 16 positions sit in the last lane of each prev vector. */
    __m512i c_prev = _mm512_inserti32x4(_mm512_setzero_si512(),
                                        _mm_and_si128(_mm_srli_epi16(b->c4_prev, 2), _mm_set1_epi8(3)), 3);
    __m512i x2_prev = _mm512_inserti32x4(_mm512_setzero_si512(),
                                         _mm_and_si128(_mm_srli_epi16(b->x2s_prev, 4), _mm_set1_epi8(15)), 3);
    __m512i x4_prev = _mm512_inserti32x4(_mm512_setzero_si512(), b->x4_prev, 3);
    size_t nfound = 0;
    for (size_t w = 0; w * 64 < n; w++) {
        size_t i = w * 64;
        __m512i x = i + 64 <= n ? _mm512_loadu_si512(text + i)
                                : _mm512_maskz_loadu_epi8((__mmask64)(~0ull >> (64 - (n - i))), text + i);
        __m512i bits = _mm512_and_si512(_mm512_shuffle_epi8(lo, _mm512_and_si512(x, nib)),
                                        _mm512_shuffle_epi8(hi, _mm512_and_si512(_mm512_srli_epi16(x, 4), nib)));
        __m512i c = _mm512_shuffle_epi8(to_code, bits);
        b->brk[1 + w] = (uint64_t)_mm512_testn_epi8_mask(bits, bits);
        /* Symbols are 2 bits, pairs 4: no shift below carries into the
           next byte. alignr_epi64(a, prev, 7): qword l holds qword l - 1. */
        __m512i x2 = _mm512_or_si512(c, _mm512_shldi_epi64(c, _mm512_alignr_epi64(c, c_prev, 7), 10));
        __m512i x4 = _mm512_or_si512(x2, _mm512_shldi_epi64(x2, _mm512_alignr_epi64(x2, x2_prev, 7), 20));
        __m512i x4a = _mm512_alignr_epi32(x4, x4_prev, 15); /* dword j: dword j - 1, 4 positions before */
        __m512i x4b = _mm512_alignr_epi32(x4, x4_prev, 14);
        c_prev = c;
        x2_prev = x2;
        x4_prev = x4;
        uint64_t hits = 0, valid = visits ? ~broken_in_word(b, w, v->k) & first_bits(n, w) : 0;
        for (unsigned q = 0; q < 4; q++) {
            /* x4[i] | x4[i - 4] << 8 (| x4[i - 8] << 16) for i = 4j + q */
            __m512i a = _mm512_srli_epi32(x4, 8 * q);
            __m512i pa = q == 0 ? _mm512_slli_epi32(x4a, 8) : _mm512_srli_epi32(x4a, 8 * q - 8);
            __m512i d = _mm512_ternarylogic_epi32(a, pa, low8, 0xe4); /* low8 ? a : pa, bit by bit */
            if (!narrow) {
                __m512i pb = q < 2 ? _mm512_slli_epi32(x4b, 16 - 8 * q) : _mm512_srli_epi32(x4b, 8 * q - 16);
                d = _mm512_ternarylogic_epi32(d, pb, low16, 0xe4);
            }
            d = _mm512_and_si512(d, mask);
            __m512i word = _mm512_i32gather_epi32(_mm512_srli_epi32(d, 5), words, 4);
            __mmask16 m = _mm512_test_epi32_mask(_mm512_rorv_epi32(word, d), one); /* rotate counts are mod 32 */
            if (visits) {
                m &= (__mmask16)_pext_u64(valid, every4 << q);
                _mm512_storeu_si512(b->found + nfound, _mm512_maskz_compress_epi32(m, d));
                nfound += (size_t)__builtin_popcount(m);
            } else {
                _mm512_store_si512(b->codes + i + q * 16, d);
                hits |= _pdep_u64(m, every4 << q);
            }
        }
        if (!visits) b->hit[w] = hits;
    }
    b->c4_prev = _mm_slli_epi16(_mm512_extracti32x4_epi32(c_prev, 3), 2);
    b->x2s_prev = _mm_slli_epi16(_mm512_extracti32x4_epi32(x2_prev, 3), 4);
    b->x4_prev = _mm512_extracti32x4_epi32(x4_prev, 3);
    for (size_t j = 0; j < nfound; j++) visits[b->found[j]]++;
}

/* How passes 1 to 4 run: SSSE3 with byte loads from the bitmap, SSSE3 with
   AVX2 gathers, or AVX-512 throughout. */
enum { KT_BYTES = SM_KT_WAY_BYTES, KT_GATHER = SM_KT_WAY_GATHER, KT_AVX512 = SM_KT_WAY_AVX512 };

/* Passes 1 to 5 of one block. */
__attribute__((target("ssse3,popcnt"))) KT_INLINE void block_hits(const kt_view *v, kt_block *b, const uint8_t *text,
                                                                  size_t n, uint64_t end0, sm_sink *sink, int mode,
                                                                  const int narrow, const int way) {
    if (way == KT_AVX512) {
        if (mode == 2 && narrow) {
            prepare512(v, text, n, b, 1, sink->visits); /* counts the hits itself */
            return;
        }
        prepare512(v, text, n, b, narrow, NULL);
        walk_hits(v, b, n, end0, sink, mode, narrow, 1);
        return;
    }
    prepare(v, text, n, b, narrow, way == KT_BYTES);
    if (way == KT_GATHER) gather_hits(v, b, n, narrow);
    walk_hits(v, b, n, end0, sink, mode, narrow, 0);
}

/* The codes and break bits before a block from the state (the 32 symbols
   of the rolling code, oldest first; the valid symbols). */
__attribute__((target("ssse3"))) KT_INLINE void block_start(kt_block *b, const uint64_t *state) {
    uint8_t before[32];
    for (unsigned j = 0; j < 32; j++) before[j] = (uint8_t)((state[0] >> (2 * (31 - j))) & 3);
    __m128i ca = _mm_loadu_si128((const __m128i *)before), cb = _mm_loadu_si128((const __m128i *)(before + 16));
    __m128i c4a = _mm_slli_epi16(ca, 2), c4b = _mm_slli_epi16(cb, 2), x2s = _mm_setzero_si128();
    (void)four_codes(ca, c4a, _mm_setzero_si128(), &x2s);
    b->x4_prev = four_codes(cb, c4b, c4a, &x2s);
    b->c4_prev = c4b;
    b->x2s_prev = x2s;
    b->brk[0] = state[1] >= 64 ? 0 : ~0ull >> state[1];
}

__attribute__((target("ssse3,popcnt"))) KT_INLINE void scan_blocks(const kt_view *v, uint64_t *state,
                                                                   const uint8_t *text, size_t len, uint64_t pos0,
                                                                   sm_sink *sink, const int way) {
    kt_block block, *b = &block;
    block_start(b, state);
    /* Counting every code beats testing the bitmap once the keys are dense
       (more than 1/8 of the codes); the AVX-512 path counts only its hits
       and beats the histogram even then (docs/architecture.md, "The k-mer
       table"). */
    const int histogram = way != KT_AVX512 && v->k <= SM_KT_CODE_VISITS_MAX_K &&
                          v->h->slots * 8 > (uint64_t)v->mask + 1;
    for (size_t off = 0; off < len; off += BLK) {
        size_t n = len - off < BLK ? len - off : BLK;
        int mode = block_mode(sink, n, pos0 + off + 1, v->k);
        if (mode == 2 && histogram) {
            prepare(v, text + off, n, b, 1, 0);
            count_codes(b, n, v->k, sink->visits);
        } else if (v->k <= SM_KT_CODE_VISITS_MAX_K) { /* narrow: 16-bit codes */
            block_hits(v, b, text + off, n, pos0 + off + 1, sink, mode, 1, way);
        } else {
            block_hits(v, b, text + off, n, pos0 + off + 1, sink, mode, 0, way);
        }
        b->brk[0] = b->brk[BLK / 64];
    }
    advance_state(v, state, text, len > 32 ? len - 32 : 0, len);
}

/* sm_kt_find's blocks: passes 1 to 4, then each position's hit bit with
   the breaks among its last k cleared, handed to fn. */
__attribute__((target("ssse3,popcnt"))) KT_INLINE void find_blocks(const kt_view *v, uint64_t *state,
                                                                   const uint8_t *text, size_t len, sm_kt_found_fn fn,
                                                                   void *ctx, const int way) {
    kt_block block, *b = &block;
    block_start(b, state);
    uint64_t hits[BLK / 64];
    const int narrow = v->k <= SM_KT_CODE_VISITS_MAX_K;
    for (size_t off = 0; off < len; off += BLK) {
        size_t n = len - off < BLK ? len - off : BLK;
        if (way == KT_AVX512) {
            prepare512(v, text + off, n, b, narrow, NULL);
        } else {
            prepare(v, text + off, n, b, narrow, way == KT_BYTES);
            if (way == KT_GATHER) gather_hits(v, b, n, narrow);
        }
        for (size_t w = 0; w * 64 < n; w++) hits[w] = b->hit[w] & ~broken_in_word(b, w, v->k) & first_bits(n, w);
        sm_kt_found f = {n, hits, b->brk + 1, narrow ? (const void *)b->codes16 : (const void *)b->codes, narrow,
                         way == KT_AVX512};
        fn(ctx, off, &f);
        b->brk[0] = b->brk[BLK / 64];
    }
    advance_state(v, state, text, len > 32 ? len - 32 : 0, len);
}

/* How the AVX2 path runs passes 1 to 4: the variant's way (KT_BYTES,
   KT_GATHER or KT_AVX512), stepping down to gathers where the nibble map
   does not hold. */
static int scan_way(const kt_view *v, const sm_kt_variant *var) {
    int g = var->way;
    if (g == KT_AVX512 && !v->h->nibble_ok) g = KT_GATHER;
    return g;
}

/* The same code twice: with SSSE3 and POPCNT, and with AVX2 (three-operand
   encodings, BMI2 shifts; bitmap tests by gathers or AVX-512 where they
   pay), chosen at run time. */
__attribute__((target("ssse3,popcnt"))) static void scan_blocks_ssse3(const kt_view *v, uint64_t *state,
                                                                      const uint8_t *text, size_t len, uint64_t pos0,
                                                                      sm_sink *sink) {
    scan_blocks(v, state, text, len, pos0, sink, KT_BYTES);
}

__attribute__((target("avx2,popcnt,bmi,bmi2"))) static void scan_blocks_avx2(const kt_view *v, uint64_t *state,
                                                                             const uint8_t *text, size_t len,
                                                                             uint64_t pos0, sm_sink *sink,
                                                                             const sm_kt_variant *var) {
    switch (scan_way(v, var)) {
    case KT_AVX512: scan_blocks(v, state, text, len, pos0, sink, KT_AVX512); break;
    case KT_GATHER: scan_blocks(v, state, text, len, pos0, sink, KT_GATHER); break;
    default: scan_blocks(v, state, text, len, pos0, sink, KT_BYTES); break;
    }
}

__attribute__((target("ssse3,popcnt"))) static void find_blocks_ssse3(const kt_view *v, uint64_t *state,
                                                                      const uint8_t *text, size_t len,
                                                                      sm_kt_found_fn fn, void *ctx) {
    find_blocks(v, state, text, len, fn, ctx, KT_BYTES);
}

__attribute__((target("avx2,popcnt,bmi,bmi2"))) static void find_blocks_avx2(const kt_view *v, uint64_t *state,
                                                                             const uint8_t *text, size_t len,
                                                                             sm_kt_found_fn fn, void *ctx,
                                                                             const sm_kt_variant *var) {
    switch (scan_way(v, var)) {
    case KT_AVX512: find_blocks(v, state, text, len, fn, ctx, KT_AVX512); break;
    case KT_GATHER: find_blocks(v, state, text, len, fn, ctx, KT_GATHER); break;
    default: find_blocks(v, state, text, len, fn, ctx, KT_BYTES); break;
    }
}

#endif

/* The way the AVX2 path tests the bitmap, for a CPU: the AVX-512 path
   where the CPU has it; AVX2 gathers on CPUs with AVX-512 F but not the
   rest; byte loads elsewhere, where gathers lose (bench/results/history.md, "The
   k-mer engine with AVX-512"). */
void sm_kt_choose(const sm_cpu_features *cpu, int forced_way, sm_kt_variant *var) {
    int avx512 = cpu->avx512f && cpu->avx512bw && cpu->avx512vbmi2;
    int way = forced_way >= 0 ? forced_way : cpu->kmer_way >= 0 ? cpu->kmer_way
              : avx512 ? SM_KT_WAY_AVX512 : cpu->avx512f ? SM_KT_WAY_GATHER : SM_KT_WAY_BYTES;
    if (way > SM_KT_WAY_AVX512) way = SM_KT_WAY_AVX512;
    if (way == SM_KT_WAY_AVX512 && !avx512) way = SM_KT_WAY_GATHER;
    var->way = way;
    var->level = !cpu->ssse3 || !cpu->popcnt ? 0 : cpu->avx2 && cpu->bmi && cpu->bmi2 ? 2 : 1;
    var->hash_fast = cpu->ssse3 && cpu->bmi && cpu->bmi2;
    var->hash_wide = way == SM_KT_WAY_AVX512 && avx512 && cpu->avx512dq && cpu->avx512vl && cpu->avx512vbmi;
}

void sm_kt_scan(const uint8_t *section, const sm_kt_variant *var, uint64_t *state, const uint8_t *text, size_t len,
                uint64_t pos0, sm_sink *sink) {
    const sm_kt_header *h = (const sm_kt_header *)section;
    if (h->magic == SM_KH_MAGIC) {
        sm_kh_scan(section, var, state, text, len, pos0, sink);
        return;
    }
    kt_view v;
    v.h = h;
    sm_kt_view_of(section, &v.t);
    v.code_of = h->code_of;
    v.k = h->k;
    v.mask = h->mask;
    if (state[1] > v.k) state[1] = v.k;
#ifdef SM_KT_BLOCKS
    int level = len >= 64 ? var->level : 0;
    if (level == 2) {
        scan_blocks_avx2(&v, state, text, len, pos0, sink, var);
        return;
    }
    if (level == 1) {
        scan_blocks_ssse3(&v, state, text, len, pos0, sink);
        return;
    }
#endif
    scan_plain(&v, state, text, len, pos0, sink);
}

/* sm_kt_find without the block passes: one rolling code, a byte at a time. */
static void find_plain(const kt_view *v, uint64_t *state, const uint8_t *text, size_t len, sm_kt_found_fn fn,
                       void *ctx) {
    uint32_t codes[SM_KT_FIND_BLOCK];
    uint64_t hits[SM_KT_FIND_BLOCK / 64], breaks[SM_KT_FIND_BLOCK / 64];
    uint64_t code = state[0], valid = state[1];
    for (size_t off = 0; off < len; off += SM_KT_FIND_BLOCK) {
        size_t n = len - off < SM_KT_FIND_BLOCK ? len - off : SM_KT_FIND_BLOCK;
        memset(hits, 0, sizeof hits);
        memset(breaks, 0, sizeof breaks);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = v->code_of[text[off + i]];
            if (c == SM_KT_BREAK) {
                code <<= 2;
                valid = 0;
                breaks[i / 64] |= 1ull << (i % 64);
            } else {
                code = code << 2 | c;
                if (valid < v->k) valid++;
            }
            codes[i] = (uint32_t)code & v->mask;
            if (valid >= v->k && sm_kt_has(&v->t, codes[i])) hits[i / 64] |= 1ull << (i % 64);
        }
        sm_kt_found f = {n, hits, breaks, codes, 0, 0};
        fn(ctx, off, &f);
    }
    state[0] = code;
    state[1] = valid;
}

void sm_kt_find(const uint8_t *section, const sm_kt_variant *var, uint64_t *state, const uint8_t *text, size_t len,
                sm_kt_found_fn fn, void *ctx) {
    const sm_kt_header *h = (const sm_kt_header *)section;
    kt_view v;
    v.h = h;
    sm_kt_view_of(section, &v.t);
    v.code_of = h->code_of;
    v.k = h->k;
    v.mask = h->mask;
    if (state[1] > v.k) state[1] = v.k;
#ifdef SM_KT_BLOCKS
    if (var->level == 2) {
        find_blocks_avx2(&v, state, text, len, fn, ctx, var);
        return;
    }
    if (var->level == 1) {
        find_blocks_ssse3(&v, state, text, len, fn, ctx);
        return;
    }
#else
    (void)var;
#endif
    find_plain(&v, state, text, len, fn, ctx);
}
