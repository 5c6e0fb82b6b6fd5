/* Wu-Manber on the GPU: the scan of one chunk by one thread, in the C that
 * both the kernel (wm_cuda.cu) and the CPU stand-in for the kernels
 * (wm_gpu.c) compile (engines/gpu_part.h says why).
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

#include "engines/gpu_part.h"

/* Wu-Manber: a window of `shortest` bytes; its last `block` bytes, through
   code[] (bits each), index shift[] (directly, or by the multiplicative
   hash of the section); a zero shift lists the entries of bucket
   [bucket[slot], bucket[slot + 1]), each compared byte by byte through
   fold[] with the window's start. */
typedef struct {
    uint32_t block, bits, hash_bits, direct;
    uint32_t shortest, longest, prefix, pad;
    uint64_t nkeys;
    uint64_t shift_off;      /* uint8[1 << hash_bits] */
    uint64_t bucket_off;     /* uint32[(1 << hash_bits) + 1] */
    uint64_t entry_off;      /* {uint32 prefix, len, output, key_off}[nkeys] */
    uint64_t keys_off;       /* key bytes */
    uint64_t code_off;       /* uint8[256] */
    uint64_t fold_off;       /* uint8[256] */
} sm_gpu_wumanber;

/* The SHIFT table sits in a block's shared memory up to this size. */
#define SM_WM_GPU_SHIFT_SHARED_MAX (128u * 1024u)

typedef struct {
    uint32_t prefix, len, output, key_off;
} sm_wm_gpu_entry;

/* Where the kernel reads each table (shared memory or the section). */
typedef struct {
    const uint8_t *shift, *code, *fold, *keys;
    const uint32_t *bucket;
    const sm_wm_gpu_entry *entry;
} sm_wm_gpu_tables;

SM_GPU_FN void sm_wm_gpu_chunk(const sm_gpu_scan_args *a, const sm_wm_gpu_tables *t, sm_gpu_chunk ch) {
    const sm_gpu_wumanber *v = SM_GPU_VIEW(&a->view, const sm_gpu_wumanber);
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
            if (j == x.len) sm_gpu_output(a, s + x.len, x.output);
        }
        i++;
    }
}

#endif /* SM_WM_GPU_H */
