/* Wu-Manber on the GPU: the scan of one chunk by one thread, in the C that
 * both the kernel (wm_cuda.cu) and the CPU stand-in for the kernels
 * (tests/emulated) compile (src/backends/cuda/cuda_scan.h says why).
 *
 * The window of m = shortest key bytes starts at c0 and moves by the SHIFT
 * of its last B bytes, as on the CPU; a zero shift compares the keys of the
 * block's bucket with the window's start. Only windows that start before c1
 * are looked at (the chunk owns the hits starting in [c0, c1)), and a key
 * must end by the chunk's `end`. Every key occurrence starting at s is seen
 * when the window ending at s + m - 1 is, which the shifts never jump over.
 */
#ifndef SM_WM_GPU_H
#define SM_WM_GPU_H

#include "backends/cuda/cuda_scan.h"

typedef struct {
    uint32_t prefix, len, output, key_off;
} sm_wm_gpu_entry;

/* Where the kernel reads each table (shared memory or the section). */
typedef struct {
    const uint8_t *shift, *code, *fold, *keys;
    const uint32_t *bucket;
    const sm_wm_gpu_entry *entry;
} sm_wm_gpu_tables;

SM_GPU_FN void sm_wm_gpu_chunk(const sm_cuda_scan_args *a, const sm_wm_gpu_tables *t, sm_cuda_chunk ch) {
    const sm_gpu_wumanber *v = &a->view.u.wumanber;
    const uint8_t *text = a->text;
    const uint32_t m = v->shortest, B = v->block, bits = v->bits;
    if (ch.end < ch.c0 + m) return;
    for (uint32_t i = ch.c0 + m - 1; i < ch.end;) {
        uint32_t s = i + 1 - m;
        if (s >= ch.c1) break;
        uint64_t packed = 0;
        for (uint32_t j = i + 1 - B; j <= i; j++) packed = packed << bits | t->code[SM_GPU_LDG(&text[j])];
        uint32_t slot = v->direct ? (uint32_t)packed
                                  : (uint32_t)((packed * 0x9E3779B97F4A7C15ull) >> (64 - v->hash_bits));
        uint32_t sh = t->shift[slot];
        if (sh) {
            i += sh;
            continue;
        }
        uint32_t pre = 0;
        for (uint32_t j = 0; j < v->prefix; j++) pre |= (uint32_t)t->fold[SM_GPU_LDG(&text[s + j])] << (8 * j);
        uint32_t last = SM_GPU_LDG(&t->bucket[slot + 1]);
        for (uint32_t e = SM_GPU_LDG(&t->bucket[slot]); e < last; e++) {
            sm_wm_gpu_entry x = t->entry[e];
            if (x.prefix != pre || x.len > ch.end - s) continue;
            uint32_t j = v->prefix;
            while (j < x.len && t->fold[SM_GPU_LDG(&text[s + j])] == SM_GPU_LDG(&t->keys[x.key_off + j])) j++;
            if (j == x.len) sm_cuda_output(a, s + x.len, x.output);
        }
        i++;
    }
}

#endif /* SM_WM_GPU_H */
