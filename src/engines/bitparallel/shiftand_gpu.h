/* Shift-And on the GPU: the scan of one chunk (dense layout) or of one
 * group of 64 keys over one chunk (levels layout) by one thread, in the C
 * that both the kernel (shiftand_cuda.cu) and the CPU stand-in for the
 * kernels (shiftand_gpu.c) compile (engines/gpu_part.h says why).
 *
 * Both start from the empty state at c0, so they see exactly the keys that
 * start at or after c0, and keep those that start before c1. Levels: the
 * groups are independent (key r only ever sets bit r % 64 of group r / 64),
 * so a thread steps the first eight levels of one group in registers, as
 * the CPU's window does, and a key that has matched its first eight symbols
 * is compared symbol by symbol with the bytes after them (its later levels'
 * masks) instead of being carried level by level.
 */
#ifndef SM_SHIFTAND_GPU_H
#define SM_SHIFTAND_GPU_H

#include "engines/gpu_part.h"

/* Shift-And (shiftand.h has the two layouts): dense, one 64-bit word;
   levels, level j of group g in word j * group_words + g of a mask row. */
typedef struct {
    uint32_t levels_layout;  /* 0 dense, 1 levels */
    uint32_t rows, row_stride, group_words;
    uint32_t final_count, levels, first_final, pad;
    uint64_t masks_off;      /* uint64[rows * row_stride], row 0 all zero */
    uint64_t starts_off;     /* dense: uint64 */
    uint64_t finals_off;     /* uint64[row_stride] */
    uint64_t final_base_off; /* dense: uint32 */
    uint64_t out_index_off, out_list_off;
    uint64_t class_of_off;   /* uint16[256]: byte -> mask row */
} sm_gpu_shiftand;

/* The mask rows sit in a block's shared memory up to this size. */
#define SM_SA_GPU_MASKS_SHARED_MAX (96u * 1024u)

#define SM_SA_GPU_WINDOW 8u

/* Every output of key r, for a hit ending at end (batch offset). */
SM_GPU_FN void sm_sa_gpu_report(const sm_gpu_scan_args *a, const uint32_t *out_index, const uint32_t *out_list,
                                uint32_t r, uint32_t end, uint32_t c1) {
    uint32_t last = SM_GPU_LDG(&out_index[r + 1]);
    for (uint32_t o = SM_GPU_LDG(&out_index[r]); o < last; o++) {
        uint32_t id = SM_GPU_LDG(&out_list[o]);
        uint32_t len = SM_GPU_LDG(&a->lengths[id >> 1]);
        if (len > end || end - len >= c1) continue;
        sm_gpu_output(a, end, id);
    }
}

/* Dense: masks[row * stride] are the rows' only words. */
SM_GPU_FN void sm_sa_gpu_dense(const sm_gpu_scan_args *a, const uint64_t *masks, uint32_t stride,
                               const uint16_t *class_of, sm_gpu_chunk ch) {
    const sm_gpu_shiftand *v = SM_GPU_VIEW(&a->view, const sm_gpu_shiftand);
    const uint8_t *sec = a->section;
    const uint64_t starts = *(const uint64_t *)(sec + v->starts_off);
    const uint64_t finals = *(const uint64_t *)(sec + v->finals_off);
    const uint32_t base = *(const uint32_t *)(sec + v->final_base_off);
    const uint32_t *out_index = (const uint32_t *)(sec + v->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(sec + v->out_list_off);
    uint64_t d = 0;
    for (uint32_t at = ch.c0 & ~15u; at < ch.end; at += 16) {
        uint32_t w[4];
        sm_gpu_load16(a->text + at, w);
        SM_GPU_UNROLL
        for (uint32_t j = 0; j < 16; j++) {
            uint32_t i = at + j;
            if (i < ch.c0 || i >= ch.end) continue;
            uint32_t row = class_of[(w[j >> 2] >> (8 * (j & 3))) & 0xffu];
            d = ((d << 1) | starts) & masks[(uint64_t)row * stride];
            uint64_t hits = d & finals;
            while (hits) {
                uint32_t b = (uint32_t)SM_GPU_CTZ64(hits);
                hits &= hits - 1;
                uint32_t r = base + (uint32_t)SM_GPU_POPC64(finals & ((1ull << b) - 1));
                sm_sa_gpu_report(a, out_index, out_list, r, i + 1, ch.c1);
            }
        }
    }
}

/* Levels, group g: win[row * win_stride + j * G + g] is level j < 8 of a
   row (a copy, or the section's rows with win_stride = row_stride). */
SM_GPU_FN void sm_sa_gpu_group(const sm_gpu_scan_args *a, const uint64_t *win, uint32_t win_stride,
                               const uint16_t *class_of, sm_gpu_chunk ch, uint32_t g) {
    const sm_gpu_shiftand *v = SM_GPU_VIEW(&a->view, const sm_gpu_shiftand);
    const uint8_t *sec = a->section;
    const uint32_t G = v->group_words, stride = v->row_stride;
    const uint64_t *masks = (const uint64_t *)(sec + v->masks_off);
    const uint64_t *F = (const uint64_t *)(sec + v->finals_off);
    const uint32_t *out_index = (const uint32_t *)(sec + v->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(sec + v->out_list_off);
    uint64_t f[SM_SA_GPU_WINDOW], d[SM_SA_GPU_WINDOW];
    SM_GPU_UNROLL
    for (uint32_t j = 0; j < SM_SA_GPU_WINDOW; j++) {
        f[j] = SM_GPU_LDG(&F[j * G + g]);
        d[j] = 0;
    }
    const int window_finals = v->first_final < SM_SA_GPU_WINDOW;
    const int deep = v->levels > SM_SA_GPU_WINDOW;
    for (uint32_t at = ch.c0 & ~15u; at < ch.end; at += 16) {
        uint32_t w[4];
        sm_gpu_load16(a->text + at, w);
        SM_GPU_UNROLL
        for (uint32_t q = 0; q < 16; q++) {
            uint32_t i = at + q;
            if (i < ch.c0 || i >= ch.end) continue;
            const uint64_t *M = win + (uint64_t)class_of[(w[q >> 2] >> (8 * (q & 3))) & 0xffu] * win_stride + g;
            SM_GPU_UNROLL
            for (uint32_t j = SM_SA_GPU_WINDOW - 1; j > 0; j--) d[j] = d[j - 1] & M[j * G];
            d[0] = M[0];
            if (window_finals) {
                uint64_t any = 0;
                SM_GPU_UNROLL
                for (uint32_t j = 0; j < SM_SA_GPU_WINDOW; j++) any |= d[j] & f[j];
                if (any) {
                    SM_GPU_UNROLL
                    for (uint32_t j = 0; j < SM_SA_GPU_WINDOW; j++) {
                        uint64_t hits = d[j] & f[j];
                        while (hits) {
                            uint32_t b = (uint32_t)SM_GPU_CTZ64(hits);
                            hits &= hits - 1;
                            sm_sa_gpu_report(a, out_index, out_list, g * 64 + b, i + 1, ch.c1);
                        }
                    }
                }
            }
            uint64_t longer = deep ? d[SM_SA_GPU_WINDOW - 1] & ~f[SM_SA_GPU_WINDOW - 1] : 0;
            while (longer) {
                /* key r matched its first 8 symbols, at i - 7 .. i */
                uint32_t b = (uint32_t)SM_GPU_CTZ64(longer);
                longer &= longer - 1;
                uint32_t r = g * 64 + b;
                uint32_t len = SM_GPU_LDG(&a->lengths[SM_GPU_LDG(&out_list[SM_GPU_LDG(&out_index[r])]) >> 1]);
                if (i - 7 >= ch.c1 || len > ch.end - (i - 7)) continue;
                uint32_t j = SM_SA_GPU_WINDOW;
                for (; j < len; j++) {
                    uint32_t row = class_of[SM_GPU_LDG(&a->text[i - 7 + j])];
                    if (!((SM_GPU_LDG(&masks[(uint64_t)row * stride + (uint64_t)j * G + g]) >> b) & 1u)) break;
                }
                if (j == len) sm_sa_gpu_report(a, out_index, out_list, r, i - 7 + len, ch.c1);
            }
        }
    }
}

#endif /* SM_SHIFTAND_GPU_H */
