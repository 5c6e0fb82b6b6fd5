/* Myers' bit-vectors on the GPU: the view of a Myers section and the work of
 * one item, in the C that both the kernels (myers_cuda.cu) and the CPU
 * stand-in (myers_gpu.c) compile (engines/gpu_part.h).
 *
 * The text is sliced as in seed 004: each chunk is cut into slices of about
 * `slice` owned bytes, and a slice is read from up to longest pattern + k
 * bytes before its first owned end (the runner's look-back), enough for
 * D(j) to be exact at every end it owns. The section's lanes (several short
 * keys packed in one 64-bit word, approx.h) are the patterns of a block:
 * a work item is (slice, lane), consecutive threads take consecutive lanes
 * of one slice, so that a warp reads each text byte once (a broadcast) and
 * every thread steps its own lane. Keys longer than 64 symbols are chains
 * of 64-bit blocks, one thread per block and a group of G threads (G a
 * power of two >= the blocks) per key: a block's horizontal delta out of
 * its top row depends on the delta entering below only through whether
 * that one is -1, so every thread computes both outcomes, the group
 * composes these maps with a prefix scan over shuffles (log2 G steps,
 * Chacón et al.'s thread cooperation) and each block then takes the delta
 * that really enters it. The stand-in runs a group's blocks in turn.
 *
 * Every end j with D(j) <= k becomes an end event (SM_GPU_HIT_END with the
 * distance), which the runner resolves into hits as the CPU's.
 */
#ifndef SM_MYERS_GPU_H
#define SM_MYERS_GPU_H

#include "engines/gpu_part.h"

typedef struct {
    uint32_t rows;           /* peq rows (text classes) */
    uint32_t lanes;          /* lanes of the section (a multiple of 8) */
    uint32_t used_lanes;     /* lanes holding keys (they come first) */
    uint32_t long_keys;
    uint32_t k;
    uint32_t group;          /* threads per long key: a power of two >= every long key's blocks, <= 32 */
    uint32_t slice;          /* owned bytes of a work item */
    uint32_t whole;          /* every used lane holds one key (width 64): no field masks */
    uint64_t lane_const_off, lane_info_off, fields_off, peq_off, long_off, long_peq_off, class_of_off;
} sm_gpu_myers;

/* The section's records (approx.h: sm_my_lane, sm_my_field, sm_my_long),
   as the kernels read them; myers_gpu.c checks that they agree. */
typedef struct {
    uint32_t width, fields, first_field, reserved;
    uint64_t bias;
} sm_my_gpu_lane;
typedef struct {
    uint32_t output, length;
} sm_my_gpu_field;
typedef struct {
    uint32_t output, length, blocks, k;
    uint64_t peq_at, state_at;
} sm_my_gpu_long;

/* Rows of the lane constants (myers.c): top bits F, not-start bits NS,
   score shift, initial Pv, initial score. */
#define SM_MY_GPU_F 0u
#define SM_MY_GPU_NS 1u
#define SM_MY_GPU_SH 2u
#define SM_MY_GPU_PV0 3u
#define SM_MY_GPU_SC0 4u

/* Slices a chunk is cut into (every chunk alike, from the longest). */
SM_GPU_HOSTDEV uint32_t sm_my_gpu_slices(const sm_gpu_scan_args *a, const sm_gpu_myers *v) {
    uint32_t n = (a->chunk_max + v->slice - 1) / v->slice;
    return n ? n : 1;
}

/* Part q of a chunk, with the look-back its ends need. */
SM_GPU_FN sm_gpu_chunk sm_my_gpu_slice(const sm_gpu_scan_args *a, uint32_t chunk, uint32_t q, uint32_t slices) {
    return sm_gpu_chunk_part(a->chunks[chunk], q, slices, 0, a->reach);
}

/* One column of a word of fields (myers_step.h: apx_myers_step_fields). */
SM_GPU_FN void sm_my_gpu_step(uint64_t *pv, uint64_t *mv, uint64_t eq, uint64_t nf, uint64_t ns, uint64_t *ph,
                              uint64_t *mh) {
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

/* The fields of a lane whose biased score has a clear top bit (hits): an
   end event each at end. */
SM_GPU_FN void sm_my_gpu_report(const sm_gpu_scan_args *a, const sm_gpu_myers *v, uint32_t l, uint64_t hits,
                                uint64_t sc, uint32_t end) {
    const sm_my_gpu_lane *ln = (const sm_my_gpu_lane *)(a->section + v->lane_info_off) + l;
    const sm_my_gpu_field *fields = (const sm_my_gpu_field *)(a->section + v->fields_off);
    const uint32_t width = SM_GPU_LDG(&ln->width), first = SM_GPU_LDG(&ln->first_field);
    const uint64_t bias = SM_GPU_LDG(&ln->bias);
    const uint64_t mask = width >= 64 ? ~0ull : ((1ull << width) - 1);
    while (hits) {
        uint32_t t = (uint32_t)SM_GPU_CTZ64(hits);
        uint32_t f = t / width;
        uint64_t value = (sc >> (f * width)) & mask;
        sm_gpu_emit(a, end, SM_GPU_LDG(&fields[first + f].output), (uint32_t)(value - bias), SM_GPU_HIT_END);
        hits &= hits - 1;
    }
}

/* The byte at batch offset i through the class map: the row of its peq. */
SM_GPU_FN uint32_t sm_my_gpu_row(const uint16_t *class_of, uint32_t byte) { return class_of[byte]; }

/* sm_my_gpu_scan_lane: lane l over slice ch, from the lane's start state at ch.from (D(i, 0) = i),
   every byte to ch.c1; ends in (ch.c0, ch.c1] are reported. peq rows are
   stride words apart (the section's, or a copy in shared memory). kWhole:
   the lane holds one key (width 64, F = bit 63). The text is read 16 bytes
   at a time. */
SM_GPU_FN void sm_my_gpu_scan_lane(const sm_gpu_scan_args *a, const sm_gpu_myers *v, const uint64_t *peq, uint32_t stride,
                              const uint16_t *class_of, sm_gpu_chunk ch, uint32_t l, int whole) {
    const uint64_t *lc = (const uint64_t *)(a->section + v->lane_const_off);
    const uint32_t lanes = v->lanes;
    const uint64_t F = whole ? 1ull << 63 : SM_GPU_LDG(&lc[SM_MY_GPU_F * lanes + l]);
    const uint64_t NS = whole ? ~1ull : SM_GPU_LDG(&lc[SM_MY_GPU_NS * lanes + l]);
    const uint32_t sh = whole ? 63u : (uint32_t)SM_GPU_LDG(&lc[SM_MY_GPU_SH * lanes + l]);
    const uint64_t NF = ~F;
    uint64_t Pv = SM_GPU_LDG(&lc[SM_MY_GPU_PV0 * lanes + l]), Mv = 0, SC = SM_GPU_LDG(&lc[SM_MY_GPU_SC0 * lanes + l]);
    const uint64_t *col = peq + l;
    for (uint32_t at = ch.from & ~15u; at < ch.c1; at += 16) {
        uint32_t w[4];
        sm_gpu_load16(a->text + at, w);
        const uint32_t lo = ch.from > at ? ch.from - at : 0, hi = ch.c1 - at < 16 ? ch.c1 - at : 16;
        SM_GPU_UNROLL
        for (uint32_t j = 0; j < 16; j++) {
            if (j < lo || j >= hi) continue;
            const uint32_t row = sm_my_gpu_row(class_of, (w[j >> 2] >> (8 * (j & 3))) & 0xffu);
            uint64_t Ph, Mh;
            sm_my_gpu_step(&Pv, &Mv, col[(size_t)row * stride], whole ? ~0ull : NF, whole ? ~0ull : NS, &Ph, &Mh);
            SC = SC - ((Mh & F) >> sh) + ((Ph & F) >> sh);
            const uint64_t hits = ~SC & F;
            if (hits && at + j >= ch.c0) sm_my_gpu_report(a, v, l, hits, SC, at + j + 1);
        }
    }
}

/* ------------------------------------------------------------ long keys */

/* One block's column with hin entering below (hin = -1: bit 0 of eq set
   for the addition's carry, Hyyrö's chaining); the delta leaving row top. */
SM_GPU_FN int sm_my_gpu_block(uint64_t *pv, uint64_t *mv, uint64_t eq, int hin, uint32_t top) {
    const uint64_t Pv = *pv, Mv = *mv, Xv = eq | Mv;
    if (hin < 0) eq |= 1u;
    const uint64_t Xh = (((eq & Pv) + Pv) ^ Pv) | eq;
    const uint64_t Ph = Mv | ~(Xh | Pv), Mh = Pv & Xh;
    const uint64_t Phs = (Ph << 1) | (uint64_t)(hin > 0), Mhs = (Mh << 1) | (uint64_t)(hin < 0);
    *pv = Mhs | ~(Xv | Phs);
    *mv = Phs & Xv;
    return (int)((Ph >> top) & 1u) - (int)((Mh >> top) & 1u);
}

/* A block's delta out of row top as a map of the delta entering it, which
   matters only by being -1 or not: (out for >= 0) + 1 | (out for -1) + 1 << 2. */
SM_GPU_FN uint32_t sm_my_gpu_map(uint64_t pv, uint64_t mv, uint64_t eq, uint32_t top) {
    uint64_t p0 = pv, m0 = mv, p1 = pv, m1 = mv;
    int out0 = sm_my_gpu_block(&p0, &m0, eq, 0, top), out1 = sm_my_gpu_block(&p1, &m1, eq, -1, top);
    return (uint32_t)(out0 + 1) | (uint32_t)(out1 + 1) << 2;
}

SM_GPU_FN int sm_my_gpu_apply(uint32_t map, int hin) { return (int)((hin < 0 ? map >> 2 : map) & 3u) - 1; }

/* upper after lower: x -> upper(lower(x)). */
SM_GPU_FN uint32_t sm_my_gpu_compose(uint32_t upper, uint32_t lower) {
    return (uint32_t)(sm_my_gpu_apply(upper, sm_my_gpu_apply(lower, 0)) + 1) |
           (uint32_t)(sm_my_gpu_apply(upper, sm_my_gpu_apply(lower, -1)) + 1) << 2;
}

/* The byte at batch offset i of the text. */
SM_GPU_FN uint32_t sm_my_gpu_byte(const sm_gpu_scan_args *a, uint32_t i) { return SM_GPU_LDG(&a->text[i]); }

#endif /* SM_MYERS_GPU_H */
