/* Myers' bit-vector step, written once for every engine that runs it: the
 * Myers engine (keys packed in lanes, scalar and SIMD; long keys in blocks)
 * and the pigeonhole filter's anchored DPs; start recovery's global DP is
 * the same step with +1 entering below (hin = +1).
 *
 * The DP column of a key is kept as its vertical deltas, bit i of pv (mv)
 * set when D(i + 1, j) - D(i, j) is +1 (-1). A text symbol whose match word
 * is eq (bit i set when key symbol i matches it) moves the column one step;
 * the horizontal deltas of the new column, ph and mh (bit i: row i + 1
 * went up or down by one against the previous column), are what a caller
 * reads a score from: the score of row r + 1 moves by bit r of ph minus
 * bit r of mh.
 *
 * What enters below bit 0 is the horizontal delta of row 0, the caller's
 * choice:
 *   0   searching: row 0 is 0 in every column (an occurrence may start
 *       anywhere);
 *   +1  global or anchored: row 0 is the column index, D(0, j) = j;
 *   -1  the block above has gone down at its top row; the step also
 *       continues the addition's carry then (Hyyrö's block chaining).
 * A key longer than 64 symbols is a chain of such words, bottom to top:
 * the delta leaving one block's top row enters the next (apx_myers_block).
 *
 * Every function is inline and each returns the deltas before they are
 * shifted, so a caller adds its own bookkeeping (scores, cut-offs) and the
 * compiler keeps everything in registers.
 */
#ifndef SM_MYERS_STEP_H
#define SM_MYERS_STEP_H

#include <stdint.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define APX_MYERS_SIMD 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define APX_MYERS_INLINE static inline __attribute__((always_inline))
#else
#define APX_MYERS_INLINE static inline
#endif

/* One column of one 64-bit word; hin enters below bit 0 (see above).
   Leaves the new vertical deltas in *pv, *mv and the column's horizontal
   deltas, unshifted, in *ph, *mh. */
APX_MYERS_INLINE void apx_myers_step(uint64_t *pv, uint64_t *mv, uint64_t eq, int hin, uint64_t *ph, uint64_t *mh) {
    const uint64_t Pv = *pv, Mv = *mv, Xv = eq | Mv;
    if (hin < 0) eq |= 1u; /* the carry of the block below */
    const uint64_t Xh = (((eq & Pv) + Pv) ^ Pv) | eq;
    const uint64_t Ph = Mv | ~(Xh | Pv), Mh = Pv & Xh;
    *ph = Ph;
    *mh = Mh;
    const uint64_t Phs = (Ph << 1) | (uint64_t)(hin > 0), Mhs = (Mh << 1) | (uint64_t)(hin < 0);
    *pv = Mhs | ~(Xv | Phs);
    *mv = Phs & Xv;
}

/* The score change of row bit + 1 in a column with deltas ph, mh. */
APX_MYERS_INLINE int apx_myers_delta(uint64_t ph, uint64_t mh, unsigned bit) {
    return (int)((ph >> bit) & 1u) - (int)((mh >> bit) & 1u);
}

/* One 64-bit block of a long key's column: hin is the delta leaving the
   block below (0 or +1 for the first block, as above); returns the one
   leaving this block's row top. */
APX_MYERS_INLINE int apx_myers_block(uint64_t *pv, uint64_t *mv, uint64_t eq, int hin, unsigned top) {
    uint64_t ph, mh;
    apx_myers_step(pv, mv, eq, hin, &ph, &mh);
    return apx_myers_delta(ph, mh, top);
}

/* One column of a key in 64-bit blocks, blocks 0 .. upto chained by their
   horizontal deltas (bottom up); hin enters block 0, top_last is the top
   row of block last (the key's last symbol), every other block's is 63.
   score[b], the value of block b's top row, moves with it. Returns the
   delta leaving block upto. */
APX_MYERS_INLINE int apx_myers_blocks(uint64_t *P, uint64_t *M, const uint64_t *eq, uint32_t upto, uint32_t last,
                                      unsigned top_last, int hin, int64_t *score) {
    int carry = hin;
    for (uint32_t b = 0; b <= upto; b++) {
        carry = apx_myers_block(&P[b], &M[b], eq[b], carry, b == last ? top_last : 63u);
        score[b] += carry;
    }
    return carry;
}

/* Several short keys in one word, each in its own field (the Myers engine's
   lanes): searching (nothing enters a field's bottom row), nf clears the
   top bit of every field so that no carry leaves one, ns clears the bottom
   bit of every field so that no shifted delta enters one. */
APX_MYERS_INLINE void apx_myers_step_fields(uint64_t *pv, uint64_t *mv, uint64_t eq, uint64_t nf, uint64_t ns,
                                            uint64_t *ph, uint64_t *mh) {
    const uint64_t Pv = *pv, Mv = *mv, Xv = eq | Mv;
    const uint64_t Pm = Pv & nf;
    const uint64_t Xh = (((eq & Pm) + Pm) ^ Pm) | eq;
    const uint64_t Ph = Mv | ~(Xh | Pv), Mh = Pv & Xh;
    *ph = Ph;
    *mh = Mh;
    const uint64_t Phs = (Ph << 1) & ns, Mhs = (Mh << 1) & ns;
    *pv = Mhs | ~(Xv | Phs);
    *mv = Phs & Xv;
}

#ifdef APX_MYERS_SIMD
/* The same steps on four (AVX2) or eight (AVX-512) words at once, for
   searching (hin 0): the whole-word step and the step with fields. */

__attribute__((target("avx2"), always_inline)) static inline void
apx_myers_step_avx2(__m256i eq, __m256i *pv, __m256i *mv, __m256i *ph, __m256i *mh) {
    const __m256i ones = _mm256_set1_epi64x(-1);
    const __m256i Pv = *pv, Mv = *mv, Xv = _mm256_or_si256(eq, Mv);
    const __m256i Xh = _mm256_or_si256(_mm256_xor_si256(_mm256_add_epi64(_mm256_and_si256(eq, Pv), Pv), Pv), eq);
    const __m256i Ph = _mm256_or_si256(Mv, _mm256_xor_si256(_mm256_or_si256(Xh, Pv), ones));
    const __m256i Mh = _mm256_and_si256(Pv, Xh);
    *ph = Ph;
    *mh = Mh;
    const __m256i Phs = _mm256_slli_epi64(Ph, 1), Mhs = _mm256_slli_epi64(Mh, 1);
    *pv = _mm256_or_si256(Mhs, _mm256_xor_si256(_mm256_or_si256(Xv, Phs), ones));
    *mv = _mm256_and_si256(Phs, Xv);
}

__attribute__((target("avx2"), always_inline)) static inline void
apx_myers_step_fields_avx2(__m256i eq, __m256i *pv, __m256i *mv, __m256i nf, __m256i ns, __m256i *ph, __m256i *mh) {
    const __m256i ones = _mm256_set1_epi64x(-1);
    const __m256i Pv = *pv, Mv = *mv, Xv = _mm256_or_si256(eq, Mv);
    const __m256i Pm = _mm256_and_si256(Pv, nf);
    const __m256i Xh = _mm256_or_si256(_mm256_xor_si256(_mm256_add_epi64(_mm256_and_si256(eq, Pm), Pm), Pm), eq);
    const __m256i Ph = _mm256_or_si256(Mv, _mm256_xor_si256(_mm256_or_si256(Xh, Pv), ones));
    const __m256i Mh = _mm256_and_si256(Pv, Xh);
    *ph = Ph;
    *mh = Mh;
    const __m256i Phs = _mm256_and_si256(_mm256_slli_epi64(Ph, 1), ns);
    const __m256i Mhs = _mm256_and_si256(_mm256_slli_epi64(Mh, 1), ns);
    *pv = _mm256_or_si256(Mhs, _mm256_xor_si256(_mm256_or_si256(Xv, Phs), ones));
    *mv = _mm256_and_si256(Phs, Xv);
}

/* Ternary-logic truth tables over (a, b, c) = (0xf0, 0xcc, 0xaa). */
#define APX_TL_A_OR_NOT_B_OR_C 0xf1 /* a | ~(b | c) */
#define APX_TL_A_XOR_B_OR_C 0xbe    /* (a ^ b) | c */

__attribute__((target("avx512f"), always_inline)) static inline void
apx_myers_step_avx512(__m512i eq, __m512i *pv, __m512i *mv, __m512i *ph, __m512i *mh) {
    const __m512i Pv = *pv, Mv = *mv, Xv = _mm512_or_si512(eq, Mv);
    const __m512i Xh = _mm512_ternarylogic_epi64(_mm512_add_epi64(_mm512_and_si512(eq, Pv), Pv), Pv, eq,
                                                 APX_TL_A_XOR_B_OR_C);
    const __m512i Ph = _mm512_ternarylogic_epi64(Mv, Xh, Pv, APX_TL_A_OR_NOT_B_OR_C);
    const __m512i Mh = _mm512_and_si512(Pv, Xh);
    *ph = Ph;
    *mh = Mh;
    const __m512i Phs = _mm512_slli_epi64(Ph, 1), Mhs = _mm512_slli_epi64(Mh, 1);
    *pv = _mm512_ternarylogic_epi64(Mhs, Xv, Phs, APX_TL_A_OR_NOT_B_OR_C);
    *mv = _mm512_and_si512(Phs, Xv);
}

__attribute__((target("avx512f"), always_inline)) static inline void
apx_myers_step_fields_avx512(__m512i eq, __m512i *pv, __m512i *mv, __m512i nf, __m512i ns, __m512i *ph,
                             __m512i *mh) {
    const __m512i Pv = *pv, Mv = *mv, Xv = _mm512_or_si512(eq, Mv);
    const __m512i Pm = _mm512_and_si512(Pv, nf);
    const __m512i Xh = _mm512_ternarylogic_epi64(_mm512_add_epi64(_mm512_and_si512(eq, Pm), Pm), Pm, eq,
                                                 APX_TL_A_XOR_B_OR_C);
    const __m512i Ph = _mm512_ternarylogic_epi64(Mv, Xh, Pv, APX_TL_A_OR_NOT_B_OR_C);
    const __m512i Mh = _mm512_and_si512(Pv, Xh);
    *ph = Ph;
    *mh = Mh;
    const __m512i Phs = _mm512_and_si512(_mm512_slli_epi64(Ph, 1), ns);
    const __m512i Mhs = _mm512_and_si512(_mm512_slli_epi64(Mh, 1), ns);
    *pv = _mm512_ternarylogic_epi64(Mhs, Xv, Phs, APX_TL_A_OR_NOT_B_OR_C);
    *mv = _mm512_and_si512(Phs, Xv);
}
#endif /* APX_MYERS_SIMD */

#endif /* SM_MYERS_STEP_H */
