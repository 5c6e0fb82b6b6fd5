/* Wu-Manber on the GPU: a thread per part of a chunk, the scan of wm_gpu.h.
 * The byte maps and, when it fits, the SHIFT table sit in the block's
 * shared memory; buckets, entries and key bytes are read through the
 * read-only cache (they are read only at a zero shift). */
#include <stdio.h>

#include "engines/cuda_engine.cuh"
#include "engines/wumanber/wm_gpu.h"

template <bool kShiftShared>
__global__ void __launch_bounds__(SM_CUDA_BLOCK) wm_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_wumanber &v = *SM_GPU_VIEW(&a.view, const sm_gpu_wumanber);
    const uint32_t *code = (const uint32_t *)(a.section + v.code_off);
    const uint32_t *fold = (const uint32_t *)(a.section + v.fold_off);
    for (uint32_t i = threadIdx.x; i < 64; i += blockDim.x) {
        shm[i] = __ldg(&code[i]);
        shm[64 + i] = __ldg(&fold[i]);
    }
    sm_wm_gpu_tables t;
    t.code = reinterpret_cast<const uint8_t *>(shm);
    t.fold = reinterpret_cast<const uint8_t *>(shm + 64);
    t.shift = a.section + v.shift_off;
    t.keys = a.section + v.keys_off;
    t.bucket = (const uint32_t *)(a.section + v.bucket_off);
    t.entry = (const sm_wm_gpu_entry *)(a.section + v.entry_off);
    if (kShiftShared) {
        const uint32_t *src = (const uint32_t *)t.shift;
        uint32_t words = ((1u << v.hash_bits) + 3) / 4;
        for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) shm[128 + i] = __ldg(&src[i]);
        t.shift = reinterpret_cast<const uint8_t *>(shm + 128);
    }
    __syncthreads();
    const uint32_t items = a.nchunks * a.parts;
    for (uint32_t item = blockIdx.x * blockDim.x + threadIdx.x; item < items; item += gridDim.x * blockDim.x) {
        const sm_gpu_chunk ch = sm_gpu_chunk_part(a.chunks[item / a.parts], item % a.parts, a.parts, a.tail, 0);
        if (ch.c0 < ch.c1) sm_wm_gpu_chunk(&a, &t, ch);
    }
}

static int wm_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_wumanber &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_wumanber);
    size_t shift = ((size_t)1 << v.hash_bits) + 3 & ~(size_t)3;
    bool shared_shift = 512 + shift <= SM_WM_GPU_SHIFT_SHARED_MAX;
    size_t shared = 512 + (shared_shift ? shift : 0);
    void (*kernel)(sm_gpu_scan_args) = shared_shift ? wm_kernel<true> : wm_kernel<false>;
    unsigned blocks;
    if (sm_cuda_grid((const void *)kernel, shared, (size_t)l->args.nchunks * l->args.parts, 1, l->sms, &blocks, msg) != 0)
        return -1;
    kernel<<<blocks, SM_CUDA_BLOCK, shared, l->stream>>>(l->args);
    return 0;
}

SM_CUDA_ENGINE(wumanber_engine, SM_SECTION_WUMANBER, NULL, NULL, wm_launch)
