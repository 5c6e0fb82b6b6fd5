/* k mismatches with the text in lanes (lanes.h): each key's bit-sliced
 * counters in an element of its own (key symbol i at bit i, the window's
 * count at the key's last bit), over slices of the text side by side. The
 * carried state stays the section's (one long bit vector per plane): slice
 * 0 starts from it and the last slice's counters go back into it.
 *
 * A slice started w = longest key - 1 bytes before the windows it owns (by
 * their last byte) has loaded every such window's counter from its first
 * byte; counters of windows that began before the slice start overflowed,
 * as after a reset, so they are never reported. */
#include "engines/approx/lanes.h"

typedef struct {
    apx_lanes g;
    uint64_t offset;      /* a counter's start value 2^B - 1 - k */
    unsigned valid;       /* elements of a register in use */
    uint64_t pos0;
    sm_sink *sink;
    uint32_t output[16];  /* per key */
    uint32_t length[16];
    struct {
        uint32_t plane[4][2][16]; /* counter planes, the overflow plane last */
        uint32_t final[16];       /* each element's key's last bit */
    } e32 __attribute__((aligned(64)));
    struct {
        uint64_t plane[4][2][8];
        uint64_t final[8];
    } e64 __attribute__((aligned(64)));
    uint32_t tab32[32] __attribute__((aligned(64)));
    uint64_t tab64[16] __attribute__((aligned(64)));
} km_lanes;

#define KM_LANES_MAX_PLANES 3u

/* Cold path: the windows of the elements set in hits (register r, step i
   of every slice), counter values in value. */
static void km_lanes_report(const km_lanes *L, unsigned r, size_t i, unsigned hits, const uint64_t *value) {
    const apx_lanes *g = &L->g;
    while (hits) {
        unsigned e = APX_CTZ(hits);
        hits &= hits - 1;
        unsigned s = apx_lanes_slice(g, r, e);
        if (s >= g->slices || !apx_lanes_owns(g, s, i)) continue;
        unsigned q = e % g->keys;
        uint64_t end = L->pos0 + (uint64_t)g->base[s] + i + 1;
        uint32_t id = L->output[q];
        sm_sink_add(L->sink, end - L->length[q], end, id >> 1, (int)(id & 1u), (unsigned)(value[e] - L->offset));
    }
}

#ifdef APX_HAVE_AVX2
#include <immintrin.h>

/* ------------------------------------------------------------- AVX-512 */

#define KL_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#define KL_V __m512i
#define KL_LOAD(p) _mm512_load_si512((const void *)(p))
#define KL_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#define KL_FETCH_STEPS APX_LANES_BLOCK
#define KL_FETCH(i0) apx_lanes_block512(g, text, i0, Z)
#define KL_LAYOUT(i0) apx_lanes_layout512(g, Z[(i0) / 8 % 8], Z[8 + (i0) / 8 % 8], idx)
#define KM_PLANE(sh, f, x) _mm512_ternarylogic_epi64(sh, f, x, 0x56) /* (a | b) ^ c */
#define KM_CARRY(sh, f, x) _mm512_ternarylogic_epi64(sh, f, x, 0xa8) /* (a | b) & c */
#define KM_OR _mm512_or_si512

#define KL_ELEM uint32_t
#define KL_STATE e32
#define KM_SHL1(x) _mm512_slli_epi32(x, 1)
#define KM_SET_BIT0(b) _mm512_set1_epi32((int)(b))
#define KM_CLEAR(O, F) ((unsigned)_mm512_testn_epi32_mask(O, F))
#define KL_TABLES                                                                                      \
    const __m512i T0 = _mm512_load_si512((const void *)L->tab32), T1 = _mm512_load_si512((const void *)(L->tab32 + 16)); \
    uint8_t idx[2 * APX_LANES_GROUP * 16] __attribute__((aligned(64)));                       \
    __m512i Z[16];
#define KL_EQ(r, t)                                                                                    \
    _mm512_permutex2var_epi32(                                                                         \
        T0, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(idx + ((r) * APX_LANES_GROUP + (t)) * 16))), T1)
#define KM_PREFIX km_lanes512_32
#include "engines/approx/kmismatch_lanes_set.h"
#undef KM_PREFIX
#include "engines/approx/lanes_element_end.h"
#undef KL_EQ

#define KL_ELEM uint64_t
#define KL_STATE e64
#define KM_SHL1(x) _mm512_slli_epi64(x, 1)
#define KM_SET_BIT0(b) _mm512_set1_epi64((long long)(b))
#define KM_CLEAR(O, F) ((unsigned)_mm512_testn_epi64_mask(O, F))
#define KL_TABLES                                                                                      \
    const __m512i T0 = _mm512_load_si512((const void *)L->tab64), T1 = _mm512_load_si512((const void *)(L->tab64 + 8)); \
    uint8_t idx[2 * APX_LANES_GROUP * 8] __attribute__((aligned(64)));                        \
    __m512i Z[16];
#define KL_EQ(r, t)                                                                                    \
    _mm512_permutex2var_epi64(                                                                         \
        T0, _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(idx + ((r) * APX_LANES_GROUP + (t)) * 8))), T1)
#define KM_PREFIX km_lanes512_64
#include "engines/approx/kmismatch_lanes_set.h"
#undef KM_PREFIX
#include "engines/approx/lanes_element_end.h"
#include "engines/approx/lanes_level_end.h"

/* ---------------------------------------------------------------- AVX2 */

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
#define KM_PLANE(sh, f, x) _mm256_xor_si256(_mm256_or_si256(sh, f), x)
#define KM_CARRY(sh, f, x) _mm256_and_si256(_mm256_or_si256(sh, f), x)
#define KM_OR _mm256_or_si256

#define KL_ELEM uint32_t
#define KL_STATE e32
#define KM_SHL1(x) _mm256_slli_epi32(x, 1)
#define KM_SET_BIT0(b) _mm256_set1_epi32((int)(b))
#define KM_CLEAR(O, F)                                                                                 \
    ((unsigned)_mm256_movemask_ps(                                                                     \
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(O, F), _mm256_setzero_si256()))))
#define KL_TABLES                                                                                      \
    const __m256i T0 = _mm256_load_si256((const __m256i *)L->tab32);                                  \
    const __m256i T1 = _mm256_load_si256((const __m256i *)(L->tab32 + 8));                             \
    const __m128i SH[2] = {_mm_load_si128((const __m128i *)g->shuf[0]), _mm_load_si128((const __m128i *)g->shuf[1])}; \
    const __m128i SP[2] = {_mm_load_si128((const __m128i *)g->spat[0]), _mm_load_si128((const __m128i *)g->spat[1])}; \
    uint8_t cls[APX_LANES_GROUP * 16] __attribute__((aligned(16)));
#define KM_PREFIX km_lanes256_32
#include "engines/approx/kmismatch_lanes_set.h"
#undef KM_PREFIX
#include "engines/approx/lanes_element_end.h"

#define KL_ELEM uint64_t
#define KL_STATE e64
#define KM_SHL1(x) _mm256_slli_epi64(x, 1)
#define KM_SET_BIT0(b) _mm256_set1_epi64x((long long)(b))
#define KM_CLEAR(O, F)                                                                                 \
    ((unsigned)_mm256_movemask_pd(                                                                     \
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(O, F), _mm256_setzero_si256()))))
#define KL_TABLES                                                                                      \
    const __m256i T0 = _mm256_load_si256((const __m256i *)L->tab64);                                   \
    const __m256i T1 = _mm256_load_si256((const __m256i *)(L->tab64 + 4));                             \
    const __m128i SH[2] = {_mm_load_si128((const __m128i *)g->shuf[0]), _mm_load_si128((const __m128i *)g->shuf[1])}; \
    const __m128i SP[2] = {_mm_load_si128((const __m128i *)g->spat[0]), _mm_load_si128((const __m128i *)g->spat[1])}; \
    uint8_t cls[APX_LANES_GROUP * 16] __attribute__((aligned(16)));
#define KM_PREFIX km_lanes256_64
#include "engines/approx/kmismatch_lanes_set.h"
#undef KM_PREFIX
#include "engines/approx/lanes_element_end.h"
#include "engines/approx/lanes_level_end.h"

#endif /* APX_HAVE_AVX2 */

/* --------------------------------------------------------------- driver */

static uint64_t low_bits(uint32_t n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

/* Bits [off, off + m) of a bit vector of nwords words (m <= 64). */
static uint64_t get_bits(const uint64_t *words, size_t nwords, uint64_t off, uint32_t m) {
    size_t w = (size_t)(off >> 6);
    unsigned b = (unsigned)(off & 63);
    uint64_t v = words[w] >> b;
    if (b && b + m > 64 && w + 1 < nwords) v |= words[w + 1] << (64 - b);
    return v & low_bits(m);
}

static void put_bits(uint64_t *words, uint64_t off, uint32_t m, uint64_t v) {
    size_t w = (size_t)(off >> 6);
    unsigned b = (unsigned)(off & 63);
    v &= low_bits(m);
    uint64_t mask = low_bits(m) << b;
    words[w] = (words[w] & ~mask) | (v << b);
    if (b + m > 64) {
        unsigned rest = b + m - 64;
        words[w + 1] = (words[w + 1] & ~low_bits(rest)) | (v >> (64 - b));
    }
}

size_t sm_km_lanes_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                        sm_sink *sink, sm_approx_path path, sm_lanes_mode mode) {
    const sm_km_header *h = (const sm_km_header *)section;
    if (mode == SM_LANES_OFF || h->nkeys > 16 || h->max_key > 64 || h->planes > KM_LANES_MAX_PLANES) return 0;
    const apx_lanes_isa isa = sm_apx_lanes_isa_for(path);
    if (isa == APX_LANES_NONE) return 0;
    const uint32_t Q = h->nkeys;
    const size_t warm = h->max_key - 1;
    if (len < (size_t)2 * warm + 2 || (mode == SM_LANES_AUTO && len < 16 * APX_LANES_AUTO_LEAST)) return 0;
    km_lanes L;
    if (!sm_apx_lanes_begin(&L.g, isa, Q, h->max_key)) return 0;
    if (len / L.g.slices < (mode == SM_LANES_AUTO ? 2 * warm : warm)) return 0;

    const sm_km_key *info = (const sm_km_key *)(section + h->keys_off);
    const uint64_t *mism = (const uint64_t *)(section + h->mismatch_off);
    uint64_t off[16];
    for (uint32_t q = 0, bit = 0; q < Q; q++) {
        off[q] = bit;
        bit += info[q].length;
        L.output[q] = info[q].output;
        L.length[q] = info[q].length;
    }
    /* Mismatch words per row: key symbol i at bit i of its element. */
    uint64_t table[APX_LANES_MAX_TABLE] = {0};
    for (uint32_t row = 0; row < h->rows; row++) {
        uint64_t words[16];
        for (uint32_t q = 0; q < Q; q++) words[q] = get_bits(mism + (size_t)row * h->stride, h->words, off[q], L.length[q]);
        if (sm_apx_lanes_class(&L.g, row, words, table) < 0) return 0;
    }
    if (!sm_apx_lanes_cut(&L.g, h->class_of, len, warm, mode)) return 0;

    const unsigned NP = h->planes;
    L.offset = (((uint64_t)1 << NP) - 1) - h->k;
    L.pos0 = pos0;
    L.sink = sink;
    L.valid = (unsigned)low_bits(L.g.per_reg * Q);
    for (unsigned c = 0; c < APX_LANES_MAX_TABLE; c++) {
        L.tab32[c] = (uint32_t)table[c];
        if (c < 16) L.tab64[c] = table[c];
    }
    const size_t pw = (size_t)h->words + 1;
    const uint64_t *D = state + 1;
    const uint64_t ones = low_bits(L.g.width);
    memset(&L.e32, 0, sizeof L.e32);
    memset(&L.e64, 0, sizeof L.e64);
    for (unsigned e = 0; e < 16; e++) {
        uint64_t f = e < L.g.elems && e / Q < L.g.per_reg ? 1ull << (L.length[e % Q] - 1) : 0;
        L.e32.final[e] = (uint32_t)f;
        if (e < 8) L.e64.final[e] = f;
    }
    /* Counters: slice 0 from the carried state, the others as after a reset
       (every counter overflowed). */
    for (unsigned r = 0; r < L.g.regs; r++)
        for (unsigned e = 0; e < L.g.elems; e++) {
            unsigned s = apx_lanes_slice(&L.g, r, e);
            if (s >= L.g.slices) continue;
            uint32_t q = e % Q;
            for (unsigned p = 0; p <= NP; p++) {
                uint64_t v = s == 0 ? get_bits(D + p * pw, h->words, off[q], L.length[q]) : p == NP ? ones : 0;
                if (L.g.width == 32) L.e32.plane[p][r][e] = (uint32_t)v;
                else L.e64.plane[p][r][e] = v;
            }
        }
#ifdef APX_HAVE_AVX2
    const int two = L.g.regs == 2;
    if (isa == APX_LANES_AVX512) (L.g.width == 32 ? km_lanes512_32_fns : km_lanes512_64_fns)[two][NP](&L, text);
    else (L.g.width == 32 ? km_lanes256_32_fns : km_lanes256_64_fns)[two][NP](&L, text);
#endif
    /* The last slice's counters go on in the carried state. */
    const unsigned last = L.g.slices - 1, r = last / L.g.per_reg, e0 = (last % L.g.per_reg) * Q;
    uint64_t *W = state + 1;
    for (uint32_t q = 0; q < Q; q++)
        for (unsigned p = 0; p <= NP; p++) {
            uint64_t v = L.g.width == 32 ? L.e32.plane[p][r][e0 + q] : L.e64.plane[p][r][e0 + q];
            put_bits(W + p * pw, off[q], L.length[q], v);
        }
    return (size_t)L.g.slices * L.g.stride;
}
