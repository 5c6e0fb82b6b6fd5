/* k mismatches on the GPU: the view of a mismatch section and the work of
 * one thread, in the C that both the kernel (kmismatch_cuda.cu) and the CPU
 * stand-in (kmismatch_gpu.c) compile (engines/gpu_part.h).
 *
 * Bit-sliced counting across windows: a block takes a tile of a chunk and
 * lays its text out as one bit plane per text class (bit i of a plane set
 * when byte i is of that class). A thread takes 32 consecutive windows and
 * every key in turn: for each key symbol it ORs the planes of the classes
 * the symbol matches, shifted by the symbol's place (one funnel shift per
 * plane), and adds the 32 mismatch bits to 32 counters kept as B bit planes
 * (B = bits of k) with a sticky overflow plane, each counter starting at
 * 2^B - 1 - k so that it overflows exactly when the mismatches pass k, as
 * the CPU engine's counters do along the keys (approx.h). A key stops as
 * soon as every one of the 32 windows has overflowed, which on DNA takes a
 * few symbols. With a PAM the windows whose PAM symbols do not all match
 * are dropped before counting (the host's PAM filter would drop them).
 */
#ifndef SM_KMISMATCH_GPU_H
#define SM_KMISMATCH_GPU_H

#include "engines/gpu_part.h"

typedef struct {
    uint32_t rows, stride, nkeys, k;
    uint32_t planes;         /* counter bit planes B */
    uint32_t max_key;
    uint32_t pam;            /* PAM symbols at each key's 3' end (reverse keys: at their start) */
    uint32_t tile;           /* window starts per block and tile (32 per thread) */
    uint32_t pam5;           /* 1: the PAM on the 5' side (forward keys: at their start) */
    uint32_t reserved;
    uint64_t bits;           /* key symbols in all */
    uint64_t mismatch_off, keys_off, class_of_off;
} sm_gpu_mismatch;

/* The section's key records (approx.h: sm_km_key). */
typedef struct {
    uint32_t output, length;
} sm_km_gpu_key;

/* What the kernel gets besides the section (built by sm_km_gpu_symbols):
   first[key], the index of its first symbol, then per symbol the rows it
   matches, a bit mask (rows <= 32) or SM_KM_GPU_ROW | the one row (text
   with more classes: a key byte matches its own class only; 0: none). */
#define SM_KM_GPU_ROW 0x80000000u
#define SM_KM_GPU_THREADS 128u

SM_GPU_HOSTDEV uint64_t sm_km_gpu_prepared_words(const sm_gpu_mismatch *v) { return (uint64_t)v->nkeys + v->bits; }

/* Builds the kernel's table from the section (host side). */
static inline void sm_km_gpu_symbols(const sm_gpu_mismatch *v, const uint8_t *section, uint32_t *out) {
    const uint64_t *mism = (const uint64_t *)(section + v->mismatch_off);
    const sm_km_gpu_key *keys = (const sm_km_gpu_key *)(section + v->keys_off);
    uint32_t *first = out, *desc = out + v->nkeys;
    uint64_t bit = 0;
    for (uint32_t i = 0; i < v->nkeys; i++) {
        first[i] = (uint32_t)bit;
        for (uint32_t p = 0; p < keys[i].length; p++, bit++) {
            uint32_t d = 0;
            for (uint32_t r = 0; r < v->rows; r++) {
                int matches = !((mism[(uint64_t)r * v->stride + (bit >> 6)] >> (bit & 63)) & 1u);
                if (!matches) continue;
                if (v->rows <= 32) d |= 1u << r;
                else d = SM_KM_GPU_ROW | r;
            }
            desc[bit] = d;
        }
    }
}

/* Words of 32 bits per plane, for a tile and the longest key. */
SM_GPU_HOSTDEV uint32_t sm_km_gpu_words(const sm_gpu_mismatch *v) { return (v->tile + v->max_key + 63) / 32 + 1; }

/* Tiles a chunk is cut into (every chunk alike, from the longest). */
SM_GPU_HOSTDEV uint32_t sm_km_gpu_tiles(const sm_gpu_scan_args *a, const sm_gpu_mismatch *v) {
    uint32_t n = (a->chunk_max + v->tile - 1) / v->tile;
    return n ? n : 1;
}

/* Bits [at, at + 32) of a plane (words of 32 bits). */
SM_GPU_FN uint32_t sm_km_gpu_bits(const uint32_t *plane, uint32_t at) {
    uint32_t w = at >> 5, s = at & 31u;
#ifdef __CUDACC__
    return __funnelshift_r(plane[w], plane[w + 1], s);
#else
    return s ? (plane[w] >> s) | (plane[w + 1] << (32 - s)) : plane[w];
#endif
}

/* The 32 windows' match bits of a key symbol at tile offset at. */
SM_GPU_FN uint32_t sm_km_gpu_match(const uint32_t *planes, uint32_t words, uint32_t desc, uint32_t at) {
    if (desc & SM_KM_GPU_ROW) return sm_km_gpu_bits(planes + (size_t)(desc & ~SM_KM_GPU_ROW) * words, at);
    uint32_t m = 0;
    while (desc) {
        uint32_t r = (uint32_t)SM_GPU_CTZ64(desc);
        desc &= desc - 1;
        m |= sm_km_gpu_bits(planes + (size_t)r * words, at);
    }
    return m;
}

/* A tile's planes: the classes of text[t0, t0 + span) (bytes outside the
   chunk's [c0, end) have none), words of 32 bits per row, zeroed first. The
   kernel builds them with shared-memory atomics; this is the stand-in's. */
SM_GPU_FN void sm_km_gpu_plane_bit(uint32_t *planes, uint32_t words, uint32_t row, uint32_t i) {
#ifdef __CUDACC__
    atomicOr(&planes[(size_t)row * words + (i >> 5)], 1u << (i & 31));
#else
    planes[(size_t)row * words + (i >> 5)] |= 1u << (i & 31);
#endif
}

/* Thread t of a tile starting at t0: its 32 windows (starts t0 + 32 t ..)
   against every key; hits owned by the chunk (start in [c0, c1), end by
   ch.end) are reported with their mismatches. */
SM_GPU_FN void sm_km_gpu_windows(const sm_gpu_scan_args *a, const sm_gpu_mismatch *v, const uint32_t *planes,
                                 uint32_t words, const uint32_t *prepared, sm_gpu_chunk ch, uint32_t t0, uint32_t t) {
    const sm_km_gpu_key *keys = (const sm_km_gpu_key *)(a->section + v->keys_off);
    const uint32_t *first = prepared, *desc = prepared + v->nkeys;
    const uint32_t s = t0 + 32 * t, B = v->planes;
    if (s >= ch.c1) return;
    const uint32_t init = (uint32_t)((1ull << B) - 1 - v->k);
    for (uint32_t i = 0; i < v->nkeys; i++) {
        const uint32_t m = SM_GPU_LDG(&keys[i].length), id = SM_GPU_LDG(&keys[i].output);
        /* windows that start in [c0, c1) and end by ch.end */
        if (ch.end < m) continue;
        uint32_t lo = ch.c0 > s ? ch.c0 - s : 0;
        uint32_t last = ch.end - m + 1 < ch.c1 ? ch.end - m + 1 : ch.c1; /* starts below this */
        if (last <= s + lo) continue;
        uint32_t hi = last - s < 32 ? last - s : 32;
        uint32_t alive = (hi >= 32 ? ~0u : (1u << hi) - 1) & ~((1u << lo) - 1);
        const uint32_t *d = desc + SM_GPU_LDG(&first[i]);
        uint32_t g0 = 0, g1 = m;
        if (v->pam) {
            /* the PAM must match exactly: at the end of a forward key, at the start of a reverse one
               (the other way round for a 5' PAM) */
            uint32_t q = v->pam < m ? v->pam : 0;
            uint32_t first = (id & 1u) != v->pam5;
            uint32_t p0 = first ? 0 : m - q;
            for (uint32_t p = p0; p < p0 + q && alive; p++)
                alive &= sm_km_gpu_match(planes, words, SM_GPU_LDG(&d[p]), s - t0 + p);
            if (first) g0 = q;
            else g1 = m - q;
        }
        if (!alive) continue;
        uint32_t c[16], over = ~alive;
        SM_GPU_UNROLL
        for (uint32_t b = 0; b < 16; b++) c[b] = (init >> b) & 1u ? ~0u : 0u;
        for (uint32_t p = g0; p < g1 && over != ~0u; p++) {
            uint32_t carry = ~sm_km_gpu_match(planes, words, SM_GPU_LDG(&d[p]), s - t0 + p);
            SM_GPU_UNROLL
            for (uint32_t b = 0; b < 16; b++) {
                if (b < B) {
                    uint32_t next = c[b] & carry;
                    c[b] ^= carry;
                    carry = next;
                }
            }
            over |= carry;
        }
        uint32_t hits = ~over;
        while (hits) {
            uint32_t w = (uint32_t)SM_GPU_CTZ64(hits);
            hits &= hits - 1;
            uint32_t value = 0;
            SM_GPU_UNROLL
            for (uint32_t b = 0; b < 16; b++)
                if (b < B) value |= ((c[b] >> w) & 1u) << b;
            sm_gpu_emit(a, s + w + m, id, value - init, SM_GPU_HIT_OUTPUT);
        }
    }
}

#endif /* SM_KMISMATCH_GPU_H */
