/* Shift-And on the GPU: a thread per part of a chunk (dense layout) or per
 * group of 64 keys and part of a chunk (levels layout), the scan of
 * shiftand_gpu.h. The byte map and, when they fit, the mask rows (dense)
 * or the first eight levels of every row (levels) sit in the block's shared
 * memory. */
#include <stdio.h>

#include "engines/cuda_engine.cuh"
#include "engines/bitparallel/shiftand_gpu.h"

/* Shared memory: class_of (128 words), then the mask words. */
template <bool kLevels, bool kMasksShared>
__global__ void __launch_bounds__(SM_CUDA_BLOCK) sa_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_shiftand &v = *SM_GPU_VIEW(&a.view, const sm_gpu_shiftand);
    const uint32_t *cls = (const uint32_t *)(a.section + v.class_of_off);
    for (uint32_t i = threadIdx.x; i < 128; i += blockDim.x) shm[i] = __ldg(&cls[i]);
    const uint16_t *class_of = reinterpret_cast<const uint16_t *>(shm);
    const uint64_t *masks = (const uint64_t *)(a.section + v.masks_off);
    uint32_t stride = v.row_stride;
    const uint32_t G = v.group_words, win = SM_SA_GPU_WINDOW * G;
    if (kMasksShared) {
        uint64_t *dst = reinterpret_cast<uint64_t *>(shm + 128);
        uint32_t per_row = kLevels ? win : 1;
        for (uint32_t i = threadIdx.x; i < v.rows * per_row; i += blockDim.x)
            dst[i] = __ldg(&masks[(uint64_t)(i / per_row) * stride + i % per_row]);
        masks = dst;
        stride = per_row;
    }
    __syncthreads();
    const uint32_t groups = kLevels ? G : 1;
    const uint64_t items = (uint64_t)a.nchunks * a.parts * groups;
    for (uint64_t item = blockIdx.x * blockDim.x + threadIdx.x; item < items; item += gridDim.x * blockDim.x) {
        uint32_t g = (uint32_t)(item % groups), c = (uint32_t)(item / groups);
        const sm_gpu_chunk ch = sm_gpu_chunk_part(a.chunks[c / a.parts], c % a.parts, a.parts, a.tail, 0);
        if (ch.c0 >= ch.c1) continue;
        if (kLevels) sm_sa_gpu_group(&a, masks, stride, class_of, ch, g);
        else sm_sa_gpu_dense(&a, masks, stride, class_of, ch);
    }
}

static int sa_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_shiftand &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_shiftand);
    bool levels = v.levels_layout;
    size_t per_row = levels ? SM_SA_GPU_WINDOW * v.group_words : 1;
    size_t masks = (size_t)v.rows * per_row * 8;
    bool shared_masks = 512 + masks <= SM_SA_GPU_MASKS_SHARED_MAX;
    size_t shared = 512 + (shared_masks ? masks : 0);
    void (*kernel)(sm_gpu_scan_args) = levels ? (shared_masks ? sa_kernel<true, true> : sa_kernel<true, false>)
                                               : (shared_masks ? sa_kernel<false, true> : sa_kernel<false, false>);
    unsigned blocks;
    size_t items = (size_t)l->args.nchunks * l->args.parts * (levels ? v.group_words : 1);
    if (sm_cuda_grid((const void *)kernel, shared, items, 1, l->sms, &blocks, msg) != 0) return -1;
    kernel<<<blocks, SM_CUDA_BLOCK, shared, l->stream>>>(l->args);
    return 0;
}

SM_CUDA_ENGINE(shiftand_engine, SM_SECTION_SHIFTAND, NULL, NULL, sa_launch)
