/* The per-thread work of the GPU DFA run (see dfa_gpu_device.h), written
 * once for the CUDA kernels (dfa_cuda.cu) and for the CPU stand-in that the
 * tests link in their place (tests/emulated), so that the stand-in runs the
 * very code and plan the GPU runs.
 *
 * A chunk simulated from all states keeps lanes, the distinct current states
 * (premultiplied by the row width), and for every start state the lane it
 * follows. While more than four lanes are left they live in device memory
 * (entry k of an array at base[k * pitch], the chunks' entries side by side)
 * and are stepped eight at a time in registers over windows of groups;
 * after each window equal lanes are found (generation-stamped marks per
 * state) and, when enough of them merged, removed. The window doubles while
 * nothing is removed. Four lanes or fewer are stepped in registers, read 16
 * bytes at a time, until all four are equal; then one lane runs to the end.
 *
 * The scan composes maps SM_DFA_GPU_FAN at a time, level by level (up), then
 * hands each node's start state down to its children (down): the start
 * state of every map's chunk.
 */
#ifndef SM_DFA_GPU_STEPS_H
#define SM_DFA_GPU_STEPS_H

#include <stdint.h>

#include "engines/dfa/dfa_gpu_device.h"

#ifdef __CUDACC__
#define SMG_FN static __device__ __forceinline__
#define SMG_UNROLL _Pragma("unroll")
#else
#define SMG_FN static inline
#define SMG_UNROLL
#endif

typedef struct {
    const uint32_t *step, *step1, *code, *col1;
    uint32_t states, dfa_states, row, row_shift, row_inverse;
} smg_view;

/* Lanes of the chunks simulated from all states: arrays of `pitch` entries
   per element (element k of a chunk at base[k * pitch + chunk's map]). */
typedef struct {
    uint32_t *lanes, *owner, *mark, *slot;
    uint64_t pitch;
} smg_scratch;

#ifdef __CUDACC__
#define SMG_BYTE(text, at) __ldg((text) + (at))
/* (the word array is named `out`: a parameter named w would replace the .w of v_) */
#define SMG_LOAD16(text, at, out)                                              \
    do {                                                                       \
        uint4 v_ = __ldg(reinterpret_cast<const uint4 *>((text) + (at)));      \
        (out)[0] = v_.x, (out)[1] = v_.y, (out)[2] = v_.z, (out)[3] = v_.w;    \
    } while (0)
#else
#define SMG_BYTE(text, at) ((text)[at])
static inline uint32_t smg_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
#define SMG_LOAD16(text, at, out)                                              \
    do {                                                                       \
        (out)[0] = smg_le32((text) + (at)), (out)[1] = smg_le32((text) + (at) + 4); \
        (out)[2] = smg_le32((text) + (at) + 8), (out)[3] = smg_le32((text) + (at) + 12); \
    } while (0)
#endif

SMG_FN uint32_t smg_state(const smg_view *t, uint32_t v) { return (v >> t->row_shift) * t->row_inverse; }

/* Row indices of the 16 / S groups of a 16-byte block (bytes in order,
   little-endian words). */
SMG_FN void smg_groups16(const smg_view *t, uint32_t S, const uint32_t *w, uint32_t *g) {
    const uint32_t *c = t->code;
    SMG_UNROLL
    for (int k = 0; k < 4; k++) {
        uint32_t x = w[k];
        if (S == 4) {
            g[k] = c[x & 255] + c[256 + ((x >> 8) & 255)] + c[512 + ((x >> 16) & 255)] + c[768 + (x >> 24)];
        } else if (S == 2) {
            g[2 * k] = c[x & 255] + c[256 + ((x >> 8) & 255)];
            g[2 * k + 1] = c[(x >> 16) & 255] + c[256 + (x >> 24)];
        } else {
            g[4 * k] = c[x & 255];
            g[4 * k + 1] = c[(x >> 8) & 255];
            g[4 * k + 2] = c[(x >> 16) & 255];
            g[4 * k + 3] = c[x >> 24];
        }
    }
}

/* Row index of the group of S symbols at p (any alignment). */
SMG_FN uint32_t smg_group_at(const smg_view *t, uint32_t S, const uint8_t *text, uint64_t p) {
    uint32_t idx = 0;
    for (uint32_t k = 0; k < S; k++) idx += t->code[k * 256 + SMG_BYTE(text, p + k)];
    return idx;
}

SMG_FN uint32_t smg_step1(const smg_view *t, uint32_t v, uint8_t byte) { return t->step1[v + t->col1[byte]]; }

/* One lane over text[b, e). */
SMG_FN uint32_t smg_run1(const smg_view *t, uint32_t S, uint32_t v, const uint8_t *text, uint64_t b, uint64_t e) {
    for (; b < e && (b & 15); b++) v = smg_step1(t, v, SMG_BYTE(text, b));
    const uint32_t *T = t->step;
    for (; b + 32 <= e; b += 32) {
        uint32_t w[8], g[32];
        SMG_LOAD16(text, b, w);
        SMG_LOAD16(text, b + 16, w + 4);
        smg_groups16(t, S, w, g);
        smg_groups16(t, S, w + 4, g + 16 / S);
        SMG_UNROLL
        for (uint32_t k = 0; k < 32 / S; k++) v = T[v + g[k]];
    }
    if (b + 16 <= e) {
        uint32_t w[4], g[16];
        SMG_LOAD16(text, b, w);
        smg_groups16(t, S, w, g);
        SMG_UNROLL
        for (uint32_t k = 0; k < 16 / S; k++) v = T[v + g[k]];
        b += 16;
    }
    for (; b < e; b++) v = smg_step1(t, v, SMG_BYTE(text, b));
    return v;
}

/* Four lanes from b toward e, until all four are equal (checked every 32
   bytes); returns where they stopped (e when they did not meet). */
SMG_FN uint64_t smg_run4(const smg_view *t, uint32_t S, uint32_t *l, const uint8_t *text, uint64_t b, uint64_t e) {
    uint32_t l0 = l[0], l1 = l[1], l2 = l[2], l3 = l[3];
    for (; b < e && (b & 15); b++) {
        uint32_t c = t->col1[SMG_BYTE(text, b)];
        l0 = t->step1[l0 + c], l1 = t->step1[l1 + c], l2 = t->step1[l2 + c], l3 = t->step1[l3 + c];
    }
    const uint32_t *T = t->step;
    for (; b + 32 <= e && !(l0 == l1 && l0 == l2 && l0 == l3); b += 32) {
        uint32_t w[8], g[32];
        SMG_LOAD16(text, b, w);
        SMG_LOAD16(text, b + 16, w + 4);
        smg_groups16(t, S, w, g);
        smg_groups16(t, S, w + 4, g + 16 / S);
        SMG_UNROLL
        for (uint32_t k = 0; k < 32 / S; k++) {
            const uint32_t *r = T + g[k];
            l0 = r[l0], l1 = r[l1], l2 = r[l2], l3 = r[l3];
        }
    }
    if (!(l0 == l1 && l0 == l2 && l0 == l3)) {
        for (; b < e; b++) {
            uint32_t c = t->col1[SMG_BYTE(text, b)];
            l0 = t->step1[l0 + c], l1 = t->step1[l1 + c], l2 = t->step1[l2 + c], l3 = t->step1[l3 + c];
        }
    }
    l[0] = l0, l[1] = l1, l[2] = l2, l[3] = l3;
    return b;
}

#define SMG_FIRST_WINDOW 8u
#define SMG_MAX_WINDOW 1024u

/* The state map of text[b, e) from every DFA state: map[s] for every run
   state s (the sink, past the DFA's states, maps to itself). kMany: the DFA
   has more than four states (scratch is used). */
SMG_FN void smg_chunk_map(const smg_view *t, uint32_t S, int kMany, const uint8_t *text, uint64_t b, uint64_t e,
                          smg_scratch w, uint32_t *map) {
    const uint32_t n = t->dfa_states, R = t->row;
    const uint64_t P = w.pitch;
    uint32_t l[4];
    int owned = 0; /* owner[] in scratch (else start state s follows lane s) */
    uint64_t p = b;
    if (kMany && n > 4) {
        for (uint32_t j = 0; j < n; j++) {
            w.lanes[j * P] = j * R;
            w.owner[j * P] = j;
        }
        for (uint32_t st = 0; st < t->states; st++) w.mark[st * P] = 0;
        uint32_t a = n, gen = 0, window = SMG_FIRST_WINDOW;
        owned = 1;
        while (a > 4 && (e - p) / S > 0) {
            uint64_t groups = (e - p) / S;
            if (groups > window) groups = window;
            for (uint32_t j = 0; j < a; j += 8) {
                uint32_t r[8];
                SMG_UNROLL
                for (uint32_t k = 0; k < 8; k++) r[k] = j + k < a ? w.lanes[(j + k) * P] : 0;
                for (uint64_t q = 0; q < groups; q++) {
                    const uint32_t *row = t->step + smg_group_at(t, S, text, p + q * S);
                    SMG_UNROLL
                    for (uint32_t k = 0; k < 8; k++) r[k] = row[r[k]];
                }
                SMG_UNROLL
                for (uint32_t k = 0; k < 8; k++)
                    if (j + k < a) w.lanes[(j + k) * P] = r[k];
            }
            p += groups * S;
            gen++;
            uint32_t kept = 0;
            for (uint32_t j = 0; j < a; j++) {
                uint32_t st = smg_state(t, w.lanes[j * P]);
                if (w.mark[st * P] != gen) {
                    w.mark[st * P] = gen;
                    w.slot[st * P] = kept++;
                }
            }
            /* Removing lanes costs a pass over the start states: only when
               a quarter of them or all but four merged. */
            if (kept < a && (kept <= 4 || kept <= a - a / 4)) {
                for (uint32_t s = 0; s < n; s++)
                    w.owner[s * P] = w.slot[smg_state(t, w.lanes[w.owner[s * P] * P]) * P];
                for (uint32_t j = 0; j < a; j++) {
                    uint32_t v = w.lanes[j * P];
                    w.lanes[w.slot[smg_state(t, v) * P] * P] = v;
                }
                a = kept;
            } else if (window < SMG_MAX_WINDOW) {
                window *= 2;
            }
        }
        if (a > 4) {
            /* The chunk ended first: its last (fewer than S) symbols one at a time. */
            for (; p < e; p++) {
                uint32_t c = t->col1[SMG_BYTE(text, p)];
                for (uint32_t j = 0; j < a; j++) w.lanes[j * P] = t->step1[w.lanes[j * P] + c];
            }
            for (uint32_t s = 0; s < n; s++) map[s] = smg_state(t, w.lanes[w.owner[s * P] * P]);
            for (uint32_t st = n; st < t->states; st++) map[st] = st;
            return;
        }
        for (uint32_t k = 0; k < 4; k++) l[k] = w.lanes[(k < a ? k : 0) * P];
    } else {
        for (uint32_t k = 0; k < 4; k++) l[k] = (k < n ? k : 0) * R;
    }
    p = smg_run4(t, S, l, text, p, e);
    if (p < e) l[0] = l[1] = l[2] = l[3] = smg_run1(t, S, l[0], text, p, e);
    for (uint32_t s = 0; s < n; s++) {
        uint32_t o = owned ? w.owner[s * P] : s;
        map[s] = smg_state(t, o == 0 ? l[0] : o == 1 ? l[1] : o == 2 ? l[2] : l[3]);
    }
    for (uint32_t st = n; st < t->states; st++) map[st] = st;
}

/* Chunk c of the batch. */
SMG_FN void smg_chunk(const smg_view *t, uint32_t S, int kMany, const uint8_t *text, const sm_dfa_gpu_chunk *chunks,
                      const sm_dfa_gpu_segment *segments, uint64_t c, uint64_t nsegments, uint32_t *maps,
                      smg_scratch w, const uint32_t *carry_in, uint32_t *carry_out, uint32_t *finals) {
    const sm_dfa_gpu_chunk ch = chunks[c];
    const uint32_t states = t->states;
    if (ch.lead) {
        uint32_t from = segments[ch.segment].from;
        if (from == SM_DFA_GPU_CARRY) from = *carry_in;
        uint32_t st = smg_state(t, smg_run1(t, S, from * t->row, text, ch.begin, ch.end));
        if (ch.map == SM_DFA_GPU_NONE) {
            finals[ch.segment] = st;
            if (ch.segment + 1 == nsegments) *carry_out = st;
        } else {
            for (uint32_t s = 0; s < states; s++) maps[(uint64_t)ch.map * states + s] = st;
        }
        return;
    }
    smg_scratch mine = w;
    mine.lanes += ch.map, mine.owner += ch.map, mine.mark += ch.map, mine.slot += ch.map;
    smg_chunk_map(t, S, kMany, text, ch.begin, ch.end, mine, maps + (uint64_t)ch.map * states);
}

/* ------------------------------------------------------------- the scan */

/* Node counts of the scan tree over n maps: counts[0] = n, each level
   SM_DFA_GPU_FAN times fewer, down to one. Returns the number of levels above
   the maps (0 when n <= 1). */
#define SMG_MAX_LEVELS 16
static inline int smg_levels(uint64_t n, uint64_t *counts) {
    int levels = 0;
    counts[0] = n;
    while (counts[levels] > 1 && levels + 1 < SMG_MAX_LEVELS) {
        counts[levels + 1] = (counts[levels] + SM_DFA_GPU_FAN - 1) / SM_DFA_GPU_FAN;
        levels++;
    }
    return levels;
}

/* Offsets (in uint32 entries) of every level's maps and start states in the
   scan's two arrays, and the arrays' sizes. */
static inline int smg_layout(uint64_t n, uint32_t states, uint64_t *map_off, uint64_t *in_off, uint64_t *map_words,
                             uint64_t *in_words) {
    uint64_t counts[SMG_MAX_LEVELS];
    int levels = smg_levels(n, counts);
    uint64_t m = 0, s = 0;
    for (int l = 0; l <= levels; l++) {
        if (map_off) map_off[l] = m;
        if (in_off) in_off[l] = s;
        m += counts[l] * states;
        s += counts[l];
    }
    if (map_words) *map_words = m;
    if (in_words) *in_words = s;
    return levels;
}

/* Up: node g of the level above `maps` (count maps), for start state s. */
SMG_FN void smg_up(const uint32_t *maps, uint64_t count, uint32_t states, uint64_t g, uint32_t s, uint32_t *above) {
    uint64_t end = (g + 1) * SM_DFA_GPU_FAN < count ? (g + 1) * SM_DFA_GPU_FAN : count;
    uint32_t v = s;
    for (uint64_t j = g * SM_DFA_GPU_FAN; j < end; j++) v = maps[j * states + v];
    above[g * states + s] = v;
}

/* Down: the start states of node g's children, from g's. */
SMG_FN void smg_down(const uint32_t *maps, uint64_t count, uint32_t states, uint64_t g, const uint32_t *in_above,
                     uint32_t *in) {
    uint64_t end = (g + 1) * SM_DFA_GPU_FAN < count ? (g + 1) * SM_DFA_GPU_FAN : count;
    uint32_t v = in_above[g];
    for (uint64_t j = g * SM_DFA_GPU_FAN; j < end; j++) {
        in[j] = v;
        v = maps[j * states + v];
    }
}

/* The end state of segment i when it has several chunks. */
SMG_FN void smg_gather(const sm_dfa_gpu_segment *segments, uint64_t i, uint64_t nsegments, const uint32_t *maps,
                       const uint32_t *in, uint32_t states, uint32_t *finals, uint32_t *carry_out) {
    uint32_t last = segments[i].last_map;
    if (last == SM_DFA_GPU_NONE) return;
    uint32_t f = maps[(uint64_t)last * states + in[last]];
    finals[i] = f;
    if (i + 1 == nsegments) *carry_out = f;
}

#endif /* SM_DFA_GPU_STEPS_H */
