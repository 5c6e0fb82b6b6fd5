/* Myers' search with the text in lanes (lanes.h): the short keys of a
 * Myers section, each in an element of its own, over slices of the text
 * side by side. The carried state stays the section's (lanes of packed
 * fields): slice 0 starts from it and the last slice's columns go back
 * into it, so a scan may use lanes for one call and not the next.
 *
 * A fresh column started w = m + min(k, m) - 1 bytes before an end gives
 * that end's distance exactly whenever it is at most k (the alignment of a
 * distance d <= k spans at most m + d bytes, all read), and a larger one
 * never falls to k or below (a fresh column only forgets alignments); so
 * each slice reports exactly the end events the one-stream scan reports
 * for the ends it owns. */
#include "engines/approx/lanes.h"
#include "engines/approx/myers_step.h"

typedef struct {
    apx_lanes g;
    uint32_t k;
    unsigned valid;       /* elements of a register in use */
    uint64_t pos0;
    sm_sink *sink;
    uint32_t output[16];  /* per key */
    uint32_t length[16];
    struct {
        uint32_t pv[2][16], mv[2][16], sc[2][16];
    } e32 __attribute__((aligned(64)));
    struct {
        uint64_t pv[2][8], mv[2][8], sc[2][8];
    } e64 __attribute__((aligned(64)));
    uint32_t tab32[32] __attribute__((aligned(64)));
    uint64_t tab64[16] __attribute__((aligned(64)));
} my_lanes;

/* Cold path: the end events of the elements set in hits (register r, step
   i of every slice), scores in d. */
static void my_lanes_report(const my_lanes *L, unsigned r, size_t i, unsigned hits, const uint64_t *d) {
    const apx_lanes *g = &L->g;
    while (hits) {
        unsigned e = APX_CTZ(hits);
        hits &= hits - 1;
        unsigned s = apx_lanes_slice(g, r, e);
        if (s >= g->slices || !apx_lanes_owns(g, s, i)) continue;
        uint32_t id = L->output[e % g->keys];
        sm_approx_emit_end(L->sink, id >> 1, (int)(id & 1u), L->pos0 + (uint64_t)g->base[s] + i + 1, (unsigned)d[e]);
    }
}

/* A key longer than 64 symbols in lanes: one element per slice in each of
   its blocks' registers (two registers), columns in memory. */
typedef struct {
    apx_lanes g;
    uint32_t k, blocks, top_last, y;
    int64_t h_last;      /* rows in the last block */
    unsigned valid;
    uint32_t output;
    uint64_t pos0;
    sm_sink *sink;
    void *P, *M, *SC;    /* [block * 2 + register] vectors */
    uint64_t *tab;       /* match words: [block * APX_LONG_TAB + class] */
} my_long_lanes;

#define APX_LONG_TAB 16u

static void my_lanes_report_long(const my_long_lanes *L, unsigned r, size_t i, unsigned hits, const uint64_t *d) {
    const apx_lanes *g = &L->g;
    while (hits) {
        unsigned e = APX_CTZ(hits);
        hits &= hits - 1;
        unsigned s = apx_lanes_slice(g, r, e);
        if (s >= g->slices || !apx_lanes_owns(g, s, i)) continue;
        sm_approx_emit_end(L->sink, L->output >> 1, (int)(L->output & 1u), L->pos0 + (uint64_t)g->base[s] + i + 1,
                           (unsigned)d[e]);
    }
}

#ifdef APX_HAVE_AVX2

/* ------------------------------------------------------------- AVX-512 */

#define KL512_STEP(W, Eq, Pv, Mv, Ph, Mh)                                                              \
    do {                                                                                               \
        const __m512i Xv_ = _mm512_or_si512(Eq, Mv);                                                   \
        const __m512i Xh_ = _mm512_ternarylogic_epi64(_mm512_add_epi##W(_mm512_and_si512(Eq, Pv), Pv), Pv, Eq, \
                                                      APX_TL_A_XOR_B_OR_C);                            \
        Ph = _mm512_ternarylogic_epi64(Mv, Xh_, Pv, APX_TL_A_OR_NOT_B_OR_C);                           \
        Mh = _mm512_and_si512(Pv, Xh_);                                                                \
        const __m512i Phs_ = _mm512_slli_epi##W(Ph, 1), Mhs_ = _mm512_slli_epi##W(Mh, 1);              \
        Pv = _mm512_ternarylogic_epi64(Mhs_, Xv_, Phs_, APX_TL_A_OR_NOT_B_OR_C);                       \
        Mv = _mm512_and_si512(Phs_, Xv_);                                                              \
    } while (0)

#define KL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#define KL_V __m512i
#define KL_LOAD(p) _mm512_load_si512((const void *)(p))
#define KL_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#define KL_FETCH_STEPS APX_LANES_BLOCK
#define KL_FETCH(i0) apx_lanes_block512(g, text, i0, Z)
#define KL_LAYOUT(i0) apx_lanes_layout512(g, Z[(i0) / 8 % 8], Z[8 + (i0) / 8 % 8], idx)

#define KL_ELEM uint32_t
#define KL_STATE e32
#define KL_SET1(x) _mm512_set1_epi32((int)(x))
#define KL_STEP(Eq, Pv, Mv, Ph, Mh) KL512_STEP(32, Eq, Pv, Mv, Ph, Mh)
#define KL_ADD _mm512_add_epi32
#define KL_SUB _mm512_sub_epi32
#define KL_SRLTOP(x) _mm512_srli_epi32(x, 31)
#define KL_HITS(SC, K) ((unsigned)_mm512_cmple_epu32_mask(SC, K))
#define KL_TABLES                                                                                      \
    const __m512i T0 = _mm512_load_si512((const void *)L->tab32), T1 = _mm512_load_si512((const void *)(L->tab32 + 16)); \
    uint8_t idx[2 * APX_LANES_GROUP * 16] __attribute__((aligned(64)));                       \
    __m512i Z[16];
#define KL_EQ(r, t)                                                                                    \
    _mm512_permutex2var_epi32(                                                                         \
        T0, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(idx + ((r) * APX_LANES_GROUP + (t)) * 16))), T1)
#define KL_NR 1
#define KL_NAME my_lanes512_32_1
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#define KL_NR 2
#define KL_NAME my_lanes512_32_2
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#undef KL_TARGET
#define KL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")))
#define KL_POPCNT _mm512_popcnt_epi32
#define KL_NR 1
#define KL_NAME my_lazy512_32_1
#include "engines/approx/myers_lanes_lazy_kernel.h"
#undef KL_NR
#undef KL_NAME
#define KL_NR 2
#define KL_NAME my_lazy512_32_2
#include "engines/approx/myers_lanes_lazy_kernel.h"
#undef KL_NR
#undef KL_NAME
#undef KL_POPCNT
#undef KL_TARGET
#define KL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#include "engines/approx/lanes_element_end.h"
#undef KL_EQ

#define KL_ELEM uint64_t
#define KL_STATE e64
#define KL_SET1(x) _mm512_set1_epi64((long long)(x))
#define KL_STEP(Eq, Pv, Mv, Ph, Mh) KL512_STEP(64, Eq, Pv, Mv, Ph, Mh)
#define KL_ADD _mm512_add_epi64
#define KL_SUB _mm512_sub_epi64
#define KL_SRLTOP(x) _mm512_srli_epi64(x, 63)
#define KL_HITS(SC, K) ((unsigned)_mm512_cmple_epu64_mask(SC, K))
#define KL_TABLES                                                                                      \
    const __m512i T0 = _mm512_load_si512((const void *)L->tab64), T1 = _mm512_load_si512((const void *)(L->tab64 + 8)); \
    uint8_t idx[2 * APX_LANES_GROUP * 8] __attribute__((aligned(64)));                        \
    __m512i Z[16];
#define KL_EQ(r, t)                                                                                    \
    _mm512_permutex2var_epi64(                                                                         \
        T0, _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(idx + ((r) * APX_LANES_GROUP + (t)) * 8))), T1)
#define KL_NR 1
#define KL_NAME my_lanes512_64_1
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#define KL_NR 2
#define KL_NAME my_lanes512_64_2
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#undef KL_TARGET
#define KL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")))
#define KL_POPCNT _mm512_popcnt_epi64
#define KL_NR 1
#define KL_NAME my_lazy512_64_1
#include "engines/approx/myers_lanes_lazy_kernel.h"
#undef KL_NR
#undef KL_NAME
#define KL_NR 2
#define KL_NAME my_lazy512_64_2
#include "engines/approx/myers_lanes_lazy_kernel.h"
#undef KL_NR
#undef KL_NAME
#undef KL_POPCNT
#undef KL_TARGET
#define KL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#undef KL_TABLES
#define KL_TABLES                                                                                      \
    uint8_t idx[2 * APX_LANES_GROUP * 8] __attribute__((aligned(64)));                                 \
    __m512i Z[16];
#define KLL_EQ(b, r, t)                                                                                \
    _mm512_permutex2var_epi64(                                                                         \
        _mm512_load_si512((const void *)(L->tab + (size_t)(b) * APX_LONG_TAB)),                         \
        _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(idx + ((r) * APX_LANES_GROUP + (t)) * 8))), \
        _mm512_load_si512((const void *)(L->tab + (size_t)(b) * APX_LONG_TAB + 8)))
#define KLL_AND _mm512_and_si512
#define KLL_OR _mm512_or_si512
#define KLL_XOR _mm512_xor_si512
#define KLL_NOT(x) _mm512_ternarylogic_epi64(x, x, x, 0x55)
#define KLL_SHL1(x) _mm512_slli_epi64(x, 1)
#define KLL_SRL(x, n) _mm512_srl_epi64(x, _mm_cvtsi32_si128((int)(n)))
#define KLL_LE(a, K) ((unsigned)_mm512_cmple_epi64_mask(a, K))
#define KLL_ONE _mm512_set1_epi64(1)
#define KLL_NAME my_long_lanes512
#include "engines/approx/myers_lanes_long_kernel.h"
#include "engines/approx/lanes_element_end.h"
#include "engines/approx/lanes_level_end.h"

/* ---------------------------------------------------------------- AVX2 */

#define KL256_STEP(W, Eq, Pv, Mv, Ph, Mh)                                                              \
    do {                                                                                               \
        const __m256i ones_ = _mm256_set1_epi32(-1);                                                   \
        const __m256i Xv_ = _mm256_or_si256(Eq, Mv);                                                   \
        const __m256i Xh_ =                                                                            \
            _mm256_or_si256(_mm256_xor_si256(_mm256_add_epi##W(_mm256_and_si256(Eq, Pv), Pv), Pv), Eq); \
        Ph = _mm256_or_si256(Mv, _mm256_xor_si256(_mm256_or_si256(Xh_, Pv), ones_));                   \
        Mh = _mm256_and_si256(Pv, Xh_);                                                                \
        const __m256i Phs_ = _mm256_slli_epi##W(Ph, 1), Mhs_ = _mm256_slli_epi##W(Mh, 1);              \
        Pv = _mm256_or_si256(Mhs_, _mm256_xor_si256(_mm256_or_si256(Xv_, Phs_), ones_));               \
        Mv = _mm256_and_si256(Phs_, Xv_);                                                              \
    } while (0)

#define KL_TARGET __attribute__((target("avx2")))
#define KL_V __m256i
#define KL_LOAD(p) _mm256_load_si256((const __m256i *)(p))
#define KL_STORE(p, v) _mm256_storeu_si256((__m256i *)(p), v)
#define KL_FETCH_STEPS APX_LANES_GROUP
#define KL_FETCH(i0) ((void)0)
#define KL_LAYOUT(i0) apx_lanes_classes(g, text, i0, cls)
#define KL_EQ(r, t)                                                                                    \
    apx_lanes_eq256(_mm_add_epi8(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(cls + (t) * 16)), SH[r]), SP[r]), \
                   T0, T1)

#define KL_ELEM uint32_t
#define KL_STATE e32
#define KL_SET1(x) _mm256_set1_epi32((int)(x))
#define KL_STEP(Eq, Pv, Mv, Ph, Mh) KL256_STEP(32, Eq, Pv, Mv, Ph, Mh)
#define KL_ADD _mm256_add_epi32
#define KL_SUB _mm256_sub_epi32
#define KL_SRLTOP(x) _mm256_srli_epi32(x, 31)
#define KL_HITS(SC, K) (~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(SC, K))) & 0xffu)
#define KL_TABLES                                                                                      \
    const __m256i T0 = _mm256_load_si256((const __m256i *)L->tab32);                                  \
    const __m256i T1 = _mm256_load_si256((const __m256i *)(L->tab32 + 8));                             \
    const __m128i SH[2] = {_mm_load_si128((const __m128i *)g->shuf[0]), _mm_load_si128((const __m128i *)g->shuf[1])}; \
    const __m128i SP[2] = {_mm_load_si128((const __m128i *)g->spat[0]), _mm_load_si128((const __m128i *)g->spat[1])}; \
    uint8_t cls[APX_LANES_GROUP * 16] __attribute__((aligned(16)));
#define KL_NR 1
#define KL_NAME my_lanes256_32_1
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#define KL_NR 2
#define KL_NAME my_lanes256_32_2
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#include "engines/approx/lanes_element_end.h"

#define KL_ELEM uint64_t
#define KL_STATE e64
#define KL_SET1(x) _mm256_set1_epi64x((long long)(x))
#define KL_STEP(Eq, Pv, Mv, Ph, Mh) KL256_STEP(64, Eq, Pv, Mv, Ph, Mh)
#define KL_ADD _mm256_add_epi64
#define KL_SUB _mm256_sub_epi64
#define KL_SRLTOP(x) _mm256_srli_epi64(x, 63)
#define KL_HITS(SC, K) (~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(SC, K))) & 0xfu)
#define KL_TABLES                                                                                      \
    const __m256i T0 = _mm256_load_si256((const __m256i *)L->tab64);                                   \
    const __m256i T1 = _mm256_load_si256((const __m256i *)(L->tab64 + 4));                             \
    const __m128i SH[2] = {_mm_load_si128((const __m128i *)g->shuf[0]), _mm_load_si128((const __m128i *)g->shuf[1])}; \
    const __m128i SP[2] = {_mm_load_si128((const __m128i *)g->spat[0]), _mm_load_si128((const __m128i *)g->spat[1])}; \
    uint8_t cls[APX_LANES_GROUP * 16] __attribute__((aligned(16)));
#define KL_NR 1
#define KL_NAME my_lanes256_64_1
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#define KL_NR 2
#define KL_NAME my_lanes256_64_2
#include "engines/approx/myers_lanes_kernel.h"
#undef KL_NR
#undef KL_NAME
#undef KL_TABLES
#define KL_TABLES                                                                                      \
    const __m128i SH[2] = {_mm_load_si128((const __m128i *)g->shuf[0]), _mm_load_si128((const __m128i *)g->shuf[1])}; \
    const __m128i SP[2] = {_mm_load_si128((const __m128i *)g->spat[0]), _mm_load_si128((const __m128i *)g->spat[1])}; \
    uint8_t cls[APX_LANES_GROUP * 16] __attribute__((aligned(16)));
#define KLL_EQ(b, r, t)                                                                                \
    apx_lanes_eq256(_mm_add_epi8(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(cls + (t) * 16)), SH[r]), SP[r]), \
                   _mm256_load_si256((const __m256i *)(L->tab + (size_t)(b) * APX_LONG_TAB)),                   \
                   _mm256_load_si256((const __m256i *)(L->tab + (size_t)(b) * APX_LONG_TAB + 4)))
#define KLL_AND _mm256_and_si256
#define KLL_OR _mm256_or_si256
#define KLL_XOR _mm256_xor_si256
#define KLL_NOT(x) _mm256_xor_si256(x, _mm256_set1_epi64x(-1))
#define KLL_SHL1(x) _mm256_slli_epi64(x, 1)
#define KLL_SRL(x, n) _mm256_srl_epi64(x, _mm_cvtsi32_si128((int)(n)))
#define KLL_LE(a, K) (~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(a, K))) & 0xfu)
#define KLL_ONE _mm256_set1_epi64x(1)
#define KLL_NAME my_long_lanes256
#include "engines/approx/myers_lanes_long_kernel.h"
#include "engines/approx/lanes_element_end.h"
#include "engines/approx/lanes_level_end.h"

#endif /* APX_HAVE_AVX2 */

/* --------------------------------------------------------------- driver */

static uint64_t low_bits(uint32_t n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

/* Where key q of the short keys sits in the carried state: lane, field base,
   field width and the lane's score bias. */
typedef struct {
    uint32_t lane, base, width;
    uint64_t bias;
} my_field_at;

size_t sm_my_lanes_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                        sm_sink *sink, sm_approx_path path, sm_lanes_mode mode) {
    const sm_my_header *h = (const sm_my_header *)section;
    if (mode == SM_LANES_OFF || h->fields == 0 || h->fields > 16) return 0;
    const apx_lanes_isa isa = sm_apx_lanes_isa_for(path);
    if (isa == APX_LANES_NONE) return 0;
    const sm_my_lane *info = (const sm_my_lane *)(section + h->lane_info_off);
    const sm_my_field *fields = (const sm_my_field *)(section + h->fields_off);
    const uint32_t Q = h->fields, lanes = h->lanes;
    uint32_t max_len = 0;
    size_t warm = 0;
    for (uint32_t q = 0; q < Q; q++) {
        uint32_t m = fields[q].length;
        size_t w = (size_t)m + (h->k < m ? h->k : m) - 1;
        if (m > max_len) max_len = m;
        if (w > warm) warm = w;
    }
    /* Cheap refusals before any table is built. */
    if (max_len > 64 || len < (size_t)2 * warm || (mode == SM_LANES_AUTO && len < 16 * APX_LANES_AUTO_LEAST)) return 0;
    my_lanes L;
    if (!sm_apx_lanes_begin(&L.g, isa, Q, max_len)) return 0;
    if (len / L.g.slices < (mode == SM_LANES_AUTO ? 2 * warm : warm)) return 0;

    my_field_at at[16];
    for (uint32_t l = 0, q = 0; l < lanes && q < Q; l++)
        for (uint32_t f = 0; f < info[l].fields; f++, q++) {
            at[q].lane = l;
            at[q].base = f * info[l].width;
            at[q].width = info[l].width;
            at[q].bias = info[l].bias;
        }
    const uint32_t E = L.g.width;
    /* Match words per row: the key's bits at the top of its element, the pad
       below matching every class. */
    const uint64_t *peq = (const uint64_t *)(section + h->peq_off);
    uint64_t table[APX_LANES_MAX_TABLE] = {0};
    for (uint32_t row = 0; row < h->rows; row++) {
        uint64_t words[16];
        for (uint32_t q = 0; q < Q; q++) {
            uint32_t m = fields[q].length, pad = at[q].width - m;
            uint64_t bits = (peq[(size_t)row * lanes + at[q].lane] >> (at[q].base + pad)) & low_bits(m);
            words[q] = (bits << (E - m)) | low_bits(E - m);
        }
        if (sm_apx_lanes_class(&L.g, row, words, table) < 0) return 0;
    }
    if (!sm_apx_lanes_cut(&L.g, h->class_of, len, warm, mode)) return 0;

    L.k = h->k;
    L.pos0 = pos0;
    L.sink = sink;
    L.valid = (unsigned)low_bits(L.g.per_reg * Q);
    for (uint32_t q = 0; q < Q; q++) {
        L.output[q] = fields[q].output;
        L.length[q] = fields[q].length;
    }
    for (unsigned c = 0; c < APX_LANES_MAX_TABLE; c++) {
        L.tab32[c] = (uint32_t)table[c];
        if (c < 16) L.tab64[c] = table[c];
    }
    /* Columns: slice 0 from the carried state, the others fresh (D(i, j) = i). */
    for (unsigned r = 0; r < 2; r++)
        for (unsigned e = 0; e < 16; e++) {
            unsigned s = r < L.g.regs && e < L.g.elems ? apx_lanes_slice(&L.g, r, e) : APX_LANES_MAX_SLICES;
            uint64_t pv = 0, mv = 0, sc = 0;
            if (s < L.g.slices) {
                uint32_t q = e % Q, m = fields[q].length, shift = at[q].base + at[q].width - m;
                if (s == 0) {
                    const my_field_at *a = &at[q];
                    pv = (state[a->lane] >> shift) & low_bits(m);
                    mv = (state[lanes + a->lane] >> shift) & low_bits(m);
                    sc = ((state[2 * (size_t)lanes + a->lane] >> a->base) & low_bits(a->width)) - a->bias;
                } else {
                    pv = low_bits(m);
                    sc = m;
                }
                pv <<= E - m;
                mv <<= E - m;
            }
            if (e < 16) {
                L.e32.pv[r][e] = (uint32_t)pv;
                L.e32.mv[r][e] = (uint32_t)mv;
                L.e32.sc[r][e] = (uint32_t)sc;
            }
            if (e < 8) {
                L.e64.pv[r][e] = pv;
                L.e64.mv[r][e] = mv;
                L.e64.sc[r][e] = sc;
            }
        }
#ifdef APX_HAVE_AVX2
    const int two = L.g.regs == 2;
    /* Scores read four steps at a time where ends are rare: random text
       keeps a key's score near half its length, far above 2k + 4. */
    uint32_t shortest = 64;
    for (uint32_t q = 0; q < Q; q++)
        if (fields[q].length < shortest) shortest = fields[q].length;
    const int lazy = sm_cpu()->avx512vpopcntdq && 2 * (uint64_t)h->k + 4 < shortest;
    if (isa == APX_LANES_AVX512 && lazy) {
        if (E == 32) (two ? my_lazy512_32_2 : my_lazy512_32_1)(&L, text);
        else (two ? my_lazy512_64_2 : my_lazy512_64_1)(&L, text);
    } else if (isa == APX_LANES_AVX512) {
        if (E == 32) (two ? my_lanes512_32_2 : my_lanes512_32_1)(&L, text);
        else (two ? my_lanes512_64_2 : my_lanes512_64_1)(&L, text);
    } else {
        if (E == 32) (two ? my_lanes256_32_2 : my_lanes256_32_1)(&L, text);
        else (two ? my_lanes256_64_2 : my_lanes256_64_1)(&L, text);
    }
#endif
    /* The last slice's columns go on in the carried state. */
    const unsigned last = L.g.slices - 1, r = last / L.g.per_reg, e0 = (last % L.g.per_reg) * Q;
    for (uint32_t q = 0; q < Q; q++) {
        const my_field_at *a = &at[q];
        uint32_t m = fields[q].length, shift = a->base + a->width - m, e = e0 + q;
        uint64_t pv = E == 32 ? L.e32.pv[r][e] : L.e64.pv[r][e];
        uint64_t mv = E == 32 ? L.e32.mv[r][e] : L.e64.mv[r][e];
        uint64_t sc = E == 32 ? L.e32.sc[r][e] : L.e64.sc[r][e];
        pv >>= E - m;
        mv >>= E - m;
        uint64_t field = low_bits(a->width) << a->base;
        state[a->lane] = (state[a->lane] & ~field) | (pv << shift);
        state[lanes + a->lane] = (state[lanes + a->lane] & ~field) | (mv << shift);
        state[2 * (size_t)lanes + a->lane] = (state[2 * (size_t)lanes + a->lane] & ~field) | ((a->bias + sc) << a->base);
    }
    return (size_t)L.g.slices * L.g.stride;
}

/* ---------------------------------------------------------- long keys */

#include <stdlib.h>

size_t sm_my_long_lanes_scan(const uint8_t *section, uint32_t key_index, uint64_t *st, const uint8_t *text,
                             size_t len, uint64_t pos0, sm_sink *sink, sm_approx_path path, sm_lanes_mode mode) {
    const sm_my_header *h = (const sm_my_header *)section;
    const sm_my_long *key = (const sm_my_long *)(section + h->long_off) + key_index;
    if (mode == SM_LANES_OFF) return 0;
    const apx_lanes_isa isa = sm_apx_lanes_isa_for(path);
    const uint32_t m = key->length, nb = key->blocks, last = nb - 1;
    const size_t warm = (size_t)m + key->k - 1;
    if (isa == APX_LANES_NONE || len < 2 * warm || (mode == SM_LANES_AUTO && len < 16 * APX_LANES_AUTO_LEAST)) return 0;
    my_long_lanes L;
    memset(&L, 0, sizeof L);
    if (!sm_apx_lanes_begin(&L.g, isa, 1, 64)) return 0;
    if (len / L.g.slices < (mode == SM_LANES_AUTO ? 2 * warm : warm)) return 0;
    /* Classes: rows whose match words agree in every block. */
    const uint64_t *peq = (const uint64_t *)(section + h->long_peq_off) + key->peq_at;
    const unsigned cap = isa == APX_LANES_AVX512 ? 16 : 8;
    uint32_t rep[16];
    for (uint32_t row = 0; row < h->rows; row++) {
        unsigned c = 0;
        while (c < L.g.classes && memcmp(peq + (size_t)row * nb, peq + (size_t)rep[c] * nb, nb * sizeof *peq) != 0) c++;
        if (c == L.g.classes) {
            if (c == cap) return 0;
            rep[L.g.classes++] = row;
        }
        L.g.row_class[row] = (uint16_t)c;
    }
    if (!sm_apx_lanes_cut(&L.g, h->class_of, len, warm, mode)) return 0;

    const size_t vs = (size_t)L.g.elems * 8; /* bytes of a vector */
    const size_t cells = (size_t)nb * 2 * vs;
    uint8_t *mem = aligned_alloc(64, 3 * cells + (size_t)nb * APX_LONG_TAB * 8);
    if (!mem) return 0;
    L.P = mem;
    L.M = mem + cells;
    L.SC = mem + 2 * cells;
    L.tab = (uint64_t *)(mem + 3 * cells);
    for (uint32_t b = 0; b < nb; b++)
        for (unsigned c = 0; c < APX_LONG_TAB; c++)
            L.tab[(size_t)b * APX_LONG_TAB + c] = c < L.g.classes ? peq[(size_t)rep[c] * nb + b] : 0;
    L.k = key->k;
    L.blocks = nb;
    L.top_last = (m - 1) % 64;
    L.h_last = (int64_t)m - (int64_t)last * 64;
    L.valid = (unsigned)((1u << L.g.per_reg) - 1);
    L.output = key->output;
    L.pos0 = pos0;
    L.sink = sink;
    /* Columns: slice 0 from the carried state (blocks past its cut-off as a
       fresh block would be: an upper bound), the others as after a reset. */
    const uint64_t *sP = st + 1, *sM = sP + nb;
    const int64_t *sS = (const int64_t *)(sM + nb);
    uint32_t y_fresh = key->k == 0 ? 0 : (key->k - 1) / 64;
    if (y_fresh > last) y_fresh = last;
    uint32_t y_carried = (uint32_t)st[0];
    L.y = y_carried > y_fresh ? y_carried : y_fresh;
    for (unsigned r = 0; r < 2; r++)
        for (unsigned e = 0; e < L.g.elems; e++) {
            unsigned s = apx_lanes_slice(&L.g, r, e);
            int carried = s == 0;
            int64_t below = 0;
            for (uint32_t b = 0; b < nb; b++) {
                uint64_t pv = ~0ull, mv = 0;
                int64_t sc = below + (b == last ? L.h_last : 64);
                if (carried && b <= y_carried) {
                    pv = sP[b];
                    mv = sM[b];
                    sc = sS[b];
                }
                size_t at = (size_t)(2 * b + r) * vs + (size_t)e * 8;
                memcpy((uint8_t *)L.P + at, &pv, 8);
                memcpy((uint8_t *)L.M + at, &mv, 8);
                memcpy((uint8_t *)L.SC + at, &sc, 8);
                below = sc;
            }
        }
#ifdef APX_HAVE_AVX2
    if (isa == APX_LANES_AVX512) my_long_lanes512(&L, text);
    else my_long_lanes256(&L, text);
#endif
    /* The last slice's column goes on in the carried state. */
    const unsigned lastslice = L.g.slices - 1, r = lastslice / L.g.per_reg, e = lastslice % L.g.per_reg;
    uint64_t *dP = st + 1, *dM = dP + nb;
    int64_t *dS = (int64_t *)(dM + nb);
    st[0] = L.y;
    for (uint32_t b = 0; b < nb; b++) {
        size_t at = (size_t)(2 * b + r) * vs + (size_t)e * 8;
        memcpy(&dP[b], (uint8_t *)L.P + at, 8);
        memcpy(&dM[b], (uint8_t *)L.M + at, 8);
        memcpy(&dS[b], (uint8_t *)L.SC + at, 8);
    }
    free(mem);
    return (size_t)L.g.slices * L.g.stride;
}
