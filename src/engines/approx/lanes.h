/* Text lanes: one scan call's text cut into slices that run side by side,
 * one slice per group of SIMD elements (seed 004's text slicing, on the
 * lanes of an AVX2 or AVX-512 register instead of GPU threads). The Myers
 * and k-mismatch engines use it when they hold few keys: then a register
 * of keys alone would leave most of its elements idle, while a register of
 * slices keeps them all busy.
 *
 * Layout. Every key sits in its own element of E = 32 or 64 bits (E >= the
 * key's length); a register of R = width / E elements holds S_r = R / Q
 * slices of the Q keys (element e: slice e / Q, key e % Q). One or two
 * registers run at once (two dependency chains), S slices in all, at most
 * 16.
 *
 * Slices. The call's text [0, len) is cut at multiples of the stride P:
 * slice s owns the positions [sP, (s + 1)P) (as last bytes of a window or
 * ends of an edit match) and starts scanning w bytes earlier (w: what a
 * fresh column needs to be exact there: longest key + k - 1 for edits,
 * longest key - 1 for mismatches), so every slice runs L = P + w steps.
 * Slice 0 continues the state carried from the previous call and starts at
 * 0; the last slice's state is carried on. What is left past S * P (less
 * than S + 8 bytes per slice) runs through the engine's ordinary loop.
 *
 * Steps are taken eight at a time: for each slice eight text bytes are
 * read, mapped to their class (a byte map), and laid out as the index of
 * every element's match word in a small table (class * Q + key), which one
 * permute per step turns into the match words. With AVX-512 VBMI the eight
 * bytes of every slice come in by one gather, the byte map is two 128-entry
 * byte permutes, and the layout one byte permute per register; with AVX2
 * the byte map is a scalar table and the layout a byte shuffle per step.
 */
#ifndef SM_APPROX_LANES_H
#define SM_APPROX_LANES_H

#include "engines/approx/approx_common.h"

#define APX_LANES_MAX_SLICES 16u
#define APX_LANES_GROUP 8u       /* steps prepared at once */
#define APX_LANES_MAX_TABLE 32u  /* match words a permute can pick from */
#define APX_LANES_AUTO_LEAST 48u /* AUTO: the least stride, whatever the warm-up */

typedef enum { APX_LANES_NONE = 0, APX_LANES_AVX2 = 1, APX_LANES_AVX512 = 2 } apx_lanes_isa;

typedef struct {
    apx_lanes_isa isa;
    unsigned width;     /* E: 32 or 64 */
    unsigned elems;     /* R: elements per register */
    unsigned keys;      /* Q */
    unsigned per_reg;   /* S_r: slices per register */
    unsigned regs;      /* 1 or 2 */
    unsigned slices;    /* S = regs * per_reg */
    unsigned classes;   /* distinct match-word rows */
    unsigned mult;      /* index bytes per element (2: AVX2 with 64-bit elements, as dword pairs) */
    unsigned ibytes;    /* index bytes per register and step */
    size_t warm;        /* w */
    size_t stride;      /* P */
    size_t steps;       /* L = P + w, a multiple of APX_LANES_GROUP */
    int64_t base[APX_LANES_MAX_SLICES]; /* slice s scans text[base[s], base[s] + steps) */
    uint16_t row_class[258];            /* engine row -> class (APX_LANES_MAX_TABLE: not yet seen) */
    uint8_t cmap[256];                  /* text byte -> class * keys * mult */
    /* Where each index byte of a register's step comes from: AVX-512, for
       register r and each of the 64-byte quarters of its eight steps, the
       byte of the two classified gathers (slice * 8 + step within the
       group) and the key part added to it; AVX2, the slice byte of the
       step's 16 classified bytes (one per slice) and the key part. */
    uint8_t perm[2][2][64] __attribute__((aligned(64)));
    uint8_t qpat[2][64] __attribute__((aligned(64)));
    uint8_t shuf[2][16] __attribute__((aligned(16)));
    uint8_t spat[2][16] __attribute__((aligned(16)));
} apx_lanes;

/* The instruction set text lanes run on for a kernel path and this CPU
   (AVX-512 needs BW and VBMI), or NONE. */
apx_lanes_isa sm_apx_lanes_isa_for(sm_approx_path path);

/* Starts a geometry for keys of at most max_len symbols (NONE when the keys
   do not fit the elements or a register would hold fewer than two
   slices). Classes are added with sm_apx_lanes_class, then sm_apx_lanes_cut. */
int sm_apx_lanes_begin(apx_lanes *g, apx_lanes_isa isa, unsigned keys, unsigned max_len);

/* The class of an engine row whose match words over the keys are words[0,
   keys) (a row equal to an earlier one shares its class); returns the class,
   or -1 when the permute table is full. table[class * keys + q] receives
   the words of a new class. */
int sm_apx_lanes_class(apx_lanes *g, unsigned row, const uint64_t *words, uint64_t *table);

/* Sets the byte map from the engine's byte -> row map, and cuts a text of
   len bytes with warm-up w: 0 when it is too short for lanes under mode
   (AUTO: each slice at least two warm-ups and APX_LANES_AUTO_LEAST bytes
   long; ALWAYS: whenever every slice holds w bytes). */
int sm_apx_lanes_cut(apx_lanes *g, const uint16_t *class_of, size_t len, size_t warm, sm_lanes_mode mode);
/* The stride P that sm_apx_lanes_cut would choose (0: no lanes). */
size_t sm_apx_lanes_stride(const apx_lanes *g, size_t len, size_t warm, sm_lanes_mode mode);

/* The slice and key of element e of register r (slice >= slices: unused). */
static inline unsigned apx_lanes_slice(const apx_lanes *g, unsigned r, unsigned e) {
    unsigned local = e / g->keys;
    return local < g->per_reg ? r * g->per_reg + local : APX_LANES_MAX_SLICES;
}

/* Does slice s own the window or end whose last byte it read at step i? */
static inline int apx_lanes_owns(const apx_lanes *g, unsigned s, size_t i) {
    return s == 0 ? i < g->stride : i >= g->warm;
}

/* The engines' lane scans: the short keys over text[0, returned) (0: no
   lanes), the carried state moved to the end of that. */
size_t sm_my_lanes_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                        sm_sink *sink, sm_approx_path path, sm_lanes_mode mode);
/* A key longer than 64 symbols (long key key_index of a Myers section, its
   state st) block-wise in lanes. */
size_t sm_my_long_lanes_scan(const uint8_t *section, uint32_t key_index, uint64_t *st, const uint8_t *text,
                             size_t len, uint64_t pos0, sm_sink *sink, sm_approx_path path, sm_lanes_mode mode);
size_t sm_km_lanes_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                        sm_sink *sink, sm_approx_path path, sm_lanes_mode mode);

#ifdef APX_HAVE_AVX2
#include <immintrin.h>

#define APX_LANES_BLOCK 64u  /* steps read at once (AVX-512) */

/* AVX-512: steps i0 .. i0 + 63 of every slice, 64 bytes loaded per slice
   and transposed as 8 x 8 quadwords: z[k] holds steps i0 + 8k .. i0 + 8k + 7
   of slices 0..7 (byte s * 8 + t), z[8 + k] those of slices 8..15. The last
   block of a cut may be short: its bytes are copied out first (no read past
   the slices), the rest zero. */
__attribute__((target("avx512f"), always_inline)) static inline void
apx_lanes_block512(const apx_lanes *g, const uint8_t *text, size_t i0, __m512i *z) {
    static const int64_t l1[2][8] = {{0, 8, 1, 9, 2, 10, 3, 11}, {4, 12, 5, 13, 6, 14, 7, 15}};
    static const int64_t l2[2][8] = {{0, 1, 8, 9, 2, 3, 10, 11}, {4, 5, 12, 13, 6, 7, 14, 15}};
    static const int64_t l3[2][8] = {{0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}};
    const __m512i p1a = _mm512_loadu_si512((const void *)l1[0]), p1b = _mm512_loadu_si512((const void *)l1[1]);
    const __m512i p2a = _mm512_loadu_si512((const void *)l2[0]), p2b = _mm512_loadu_si512((const void *)l2[1]);
    const __m512i p3a = _mm512_loadu_si512((const void *)l3[0]), p3b = _mm512_loadu_si512((const void *)l3[1]);
    const size_t have = g->steps - i0;
    uint8_t pad[APX_LANES_MAX_SLICES][APX_LANES_BLOCK];
    for (unsigned half = 0; half * 8 < g->slices; half++) {
        __m512i a[8], b[8], c[8];
        for (unsigned s = 0; s < 8; s++) {
            unsigned slice = half * 8 + s < g->slices ? half * 8 + s : 0;
            const uint8_t *at = text + g->base[slice] + i0;
            if (have < APX_LANES_BLOCK) {
                memset(pad[s], 0, APX_LANES_BLOCK);
                memcpy(pad[s], at, have);
                at = pad[s];
            } else {
                _mm_prefetch((const char *)at + 4 * APX_LANES_BLOCK, _MM_HINT_T0);
            }
            a[s] = _mm512_loadu_si512((const void *)at);
        }
        for (unsigned i = 0; i < 4; i++) {
            b[2 * i] = _mm512_permutex2var_epi64(a[2 * i], p1a, a[2 * i + 1]);
            b[2 * i + 1] = _mm512_permutex2var_epi64(a[2 * i], p1b, a[2 * i + 1]);
        }
        for (unsigned q = 0; q < 2; q++)
            for (unsigned h = 0; h < 2; h++) {
                c[q * 4 + 2 * h] = _mm512_permutex2var_epi64(b[4 * q + h], p2a, b[4 * q + 2 + h]);
                c[q * 4 + 2 * h + 1] = _mm512_permutex2var_epi64(b[4 * q + h], p2b, b[4 * q + 2 + h]);
            }
        for (unsigned j = 0; j < 4; j++) {
            z[half * 8 + 2 * j] = _mm512_permutex2var_epi64(c[j], p3a, c[4 + j]);
            z[half * 8 + 2 * j + 1] = _mm512_permutex2var_epi64(c[j], p3b, c[4 + j]);
        }
    }
    if (g->slices <= 8)
        for (unsigned k = 0; k < 8; k++) z[8 + k] = z[k];
}

/* AVX-512: the index bytes of a group of eight steps (z0: slices 0..7, z1:
   8..15) for every register into
   idx (regs * 8 * ibytes bytes: register r, step t at (r * 8 + t) * ibytes). */
__attribute__((target("avx512f,avx512bw,avx512vbmi"), always_inline)) static inline void
apx_lanes_layout512(const apx_lanes *g, __m512i z0, __m512i z1, uint8_t *idx) {
    const __m512i lo0 = _mm512_loadu_si512((const void *)(g->cmap)), lo1 = _mm512_loadu_si512((const void *)(g->cmap + 64));
    const __m512i hi0 = _mm512_loadu_si512((const void *)(g->cmap + 128)), hi1 = _mm512_loadu_si512((const void *)(g->cmap + 192));
#define APX_CLASSIFY(z)                                                                                \
    _mm512_mask_blend_epi8(_mm512_movepi8_mask(z), _mm512_permutex2var_epi8(lo0, z, lo1),                \
                           _mm512_permutex2var_epi8(hi0, z, hi1))
    const __m512i c0 = APX_CLASSIFY(z0), c1 = g->slices > 8 ? APX_CLASSIFY(z1) : c0;
#undef APX_CLASSIFY
    const unsigned quarters = g->ibytes * APX_LANES_GROUP / 64;
    for (unsigned r = 0; r < g->regs; r++)
        for (unsigned h = 0; h < quarters; h++) {
            const __m512i p = _mm512_load_si512((const void *)g->perm[r][h]);
            const __m512i q = _mm512_load_si512((const void *)g->qpat[r]);
            _mm512_storeu_si512((void *)(idx + ((size_t)r * APX_LANES_GROUP * g->ibytes) + (size_t)h * 64),
                                _mm512_add_epi8(_mm512_permutex2var_epi8(c0, p, c1), q));
        }
}

/* AVX2: the match words of the index bytes b (dwords, two tables of eight),
   for the kernels of both engines. */
__attribute__((target("avx2"), always_inline)) static inline __m256i apx_lanes_eq256(__m128i b, __m256i T0,
                                                                                     __m256i T1) {
    const __m256i ix = _mm256_cvtepu8_epi32(b);
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(T0, ix)),
                                                _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(T1, ix)),
                                                _mm256_castsi256_ps(_mm256_slli_epi32(ix, 28))));
}
#endif

/* AVX2 (and any CPU): the classes of steps i0 .. i0 + 7, cls[t * 16 + s]. */
static inline void apx_lanes_classes(const apx_lanes *g, const uint8_t *text, size_t i0, uint8_t *cls) {
    for (unsigned s = 0; s < g->slices; s++) {
        const uint8_t *p = text + g->base[s] + i0;
        for (unsigned t = 0; t < APX_LANES_GROUP; t++) cls[t * 16 + s] = g->cmap[p[t]];
    }
}

#endif /* SM_APPROX_LANES_H */
