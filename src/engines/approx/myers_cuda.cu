/* Myers' bit-vectors on the GPU (myers_gpu.h has the scheme): a thread per
 * lane and slice for the keys of up to 64 symbols, the lanes' match table
 * and the byte map in shared memory; a group of threads per long key and
 * slice, one 64-bit block each, the horizontal carries between blocks
 * resolved by a prefix scan of warp shuffles. */
#include <stdio.h>

#include "engines/cuda_engine.cuh"
#include "engines/approx/myers_gpu.h"

#define MY_BLOCK 256
/* The lanes' match table sits in shared memory up to this size. */
#define MY_PEQ_SHARED_MAX (96u * 1024u)

template <bool kWhole, bool kPeqShared>
__global__ void __launch_bounds__(MY_BLOCK) my_short_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint64_t peq_shared[];
    __shared__ uint16_t class_of[256];
    const sm_gpu_myers &v = *SM_GPU_VIEW(&a.view, const sm_gpu_myers);
    const uint16_t *class_global = (const uint16_t *)(a.section + v.class_of_off);
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) class_of[i] = class_global[i];
    const uint64_t *peq = (const uint64_t *)(a.section + v.peq_off);
    uint32_t stride = v.lanes;
    const uint32_t L = v.used_lanes;
    if (kPeqShared) {
        for (uint32_t i = threadIdx.x; i < v.rows * L; i += blockDim.x)
            peq_shared[i] = __ldg(&peq[(size_t)(i / L) * v.lanes + i % L]);
        peq = peq_shared;
        stride = L;
    }
    __syncthreads();
    const uint32_t slices = sm_my_gpu_slices(&a, &v);
    const uint64_t items = (uint64_t)a.nchunks * slices * L;
    for (uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; item < items;
         item += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t l = (uint32_t)(item % L);
        const uint64_t rest = item / L;
        const sm_gpu_chunk ch = sm_my_gpu_slice(&a, (uint32_t)(rest / slices), (uint32_t)(rest % slices), slices);
        if (ch.c0 >= ch.c1) continue;
        sm_my_gpu_scan_lane(&a, &v, peq, stride, class_of, ch, l, kWhole);
    }
}

/* A warp per (slice, batch of 32 / G long keys): every thread of the warp
   walks the same bytes, so the shuffles always see the whole warp. */
__global__ void __launch_bounds__(MY_BLOCK) my_long_kernel(sm_gpu_scan_args a) {
    __shared__ uint16_t class_of[256];
    const sm_gpu_myers &v = *SM_GPU_VIEW(&a.view, const sm_gpu_myers);
    const uint16_t *class_global = (const uint16_t *)(a.section + v.class_of_off);
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) class_of[i] = class_global[i];
    __syncthreads();
    const sm_my_gpu_long *keys = (const sm_my_gpu_long *)(a.section + v.long_off);
    const uint64_t *long_peq = (const uint64_t *)(a.section + v.long_peq_off);
    const uint32_t G = v.group, per_warp = 32 / G, batches = (v.long_keys + per_warp - 1) / per_warp;
    const uint32_t slices = sm_my_gpu_slices(&a, &v);
    const uint32_t lane = threadIdx.x & 31, g = lane / G, b = lane % G;
    const uint64_t warps = (uint64_t)a.nchunks * slices * batches;
    const uint64_t stride = (uint64_t)gridDim.x * (blockDim.x / 32);
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; w < warps; w += stride) {
        const uint32_t kb = (uint32_t)(w % batches);
        const uint64_t rest = w / batches;
        const sm_gpu_chunk ch = sm_my_gpu_slice(&a, (uint32_t)(rest / slices), (uint32_t)(rest % slices), slices);
        if (ch.c0 >= ch.c1) continue; /* the whole warp alike */
        const uint32_t key = kb * per_warp + g;
        const bool has_key = key < v.long_keys;
        const uint32_t nb = has_key ? __ldg(&keys[key].blocks) : 0, length = has_key ? __ldg(&keys[key].length) : 0;
        const uint32_t output = has_key ? __ldg(&keys[key].output) : 0, kk = has_key ? __ldg(&keys[key].k) : 0;
        const bool mine = b < nb, last = has_key && b == nb - 1;
        const uint32_t top = last ? (length - 1) % 64 : 63u;
        const uint64_t *peq = long_peq + (has_key ? __ldg(&keys[key].peq_at) : 0);
        uint64_t P = ~0ull, M = 0;
        int score = (int)length;
        for (uint32_t i = ch.from; i < ch.c1; i++) {
            const uint32_t row = class_of[__ldg(&a.text[i])];
            const uint64_t eq = mine ? __ldg(&peq[(size_t)row * nb + b]) : 0;
            uint32_t m = sm_my_gpu_map(P, M, eq, top);
            for (uint32_t d = 1; d < G; d <<= 1) {
                uint32_t lower = __shfl_up_sync(0xffffffffu, m, d, G);
                if (b >= d) m = sm_my_gpu_compose(m, lower);
            }
            const uint32_t below = __shfl_up_sync(0xffffffffu, m, 1, G);
            const int hin = b == 0 ? 0 : sm_my_gpu_apply(below, 0);
            const int out = sm_my_gpu_block(&P, &M, eq, hin, top);
            if (last) {
                score += out;
                if (score <= (int)kk && i >= ch.c0) sm_gpu_emit(&a, i + 1, output, (uint32_t)score, SM_GPU_HIT_END);
            }
        }
    }
}

static int my_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_myers &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_myers);
    if (v.used_lanes) {
        size_t peq = (size_t)v.rows * v.used_lanes * 8;
        bool shared = peq <= MY_PEQ_SHARED_MAX && peq <= l->shared_limit;
        void (*kernel)(sm_gpu_scan_args) = v.whole ? (shared ? my_short_kernel<true, true> : my_short_kernel<true, false>)
                                                   : (shared ? my_short_kernel<false, true> : my_short_kernel<false, false>);
        size_t items = (size_t)l->args.nchunks * sm_my_gpu_slices(&l->args, &v) * v.used_lanes;
        unsigned blocks;
        if (sm_cuda_grid_threads((const void *)kernel, shared ? peq : 0, items, 1, MY_BLOCK, l->sms, &blocks, msg) != 0)
            return -1;
        kernel<<<blocks, MY_BLOCK, shared ? peq : 0, l->stream>>>(l->args);
        SM_CUDA_CHECK(cudaGetLastError(), "starting the Myers kernel");
    }
    if (v.long_keys) {
        uint32_t per_warp = 32 / v.group;
        size_t warps = (size_t)l->args.nchunks * sm_my_gpu_slices(&l->args, &v) * ((v.long_keys + per_warp - 1) / per_warp);
        unsigned blocks;
        if (sm_cuda_grid_threads((const void *)my_long_kernel, 0, warps, 32, MY_BLOCK, l->sms, &blocks, msg) != 0)
            return -1;
        my_long_kernel<<<blocks, MY_BLOCK, 0, l->stream>>>(l->args);
    }
    return 0;
}

SM_CUDA_ENGINE(myers_engine, SM_SECTION_MYERS, NULL, NULL, my_launch)
