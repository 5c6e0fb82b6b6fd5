/* The pigeonhole filter on the GPU (pigeonhole_gpu.h has the scheme): a
 * thread per slice of a chunk finds the pieces through the k-mer engine's
 * tables (the bitmap of the codes some piece ends with in shared memory
 * when it fits) or the automaton, and verifies each on the spot. */
#include <stdio.h>

#include "backends/cuda/cuda_engine.cuh"
#include "engines/approx/pigeonhole_gpu.h"

#define PH_BLOCK 256
/* The bitmap of piece-ending codes goes to shared memory up to this size (7 bases: 2 KiB). */
#define PH_ANY_SHARED_MAX (64u * 1024u)

template <bool kAnyShared>
__global__ void __launch_bounds__(PH_BLOCK) ph_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t any_shared[];
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&a.view, const sm_gpu_pigeonhole);
    const uint32_t *any = (const uint32_t *)(a.section + v.seed_any_off);
    if (kAnyShared) {
        uint32_t words = (uint32_t)((1ull << (2 * v.seed_max)) / 32);
        for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) any_shared[i] = __ldg(&any[i]);
        any = any_shared;
        __syncthreads();
    }
    const sm_ph_gpu_tables *tables = (const sm_ph_gpu_tables *)a.extra;
    const uint32_t slices = sm_ph_gpu_slices(&a, &v);
    const uint64_t items = (uint64_t)a.nchunks * slices;
    for (uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; item < items;
         item += (uint64_t)gridDim.x * blockDim.x) {
        const sm_gpu_chunk ch =
            sm_gpu_chunk_part(a.chunks[item / slices], (uint32_t)(item % slices), slices, a.tail, a.reach);
        if (ch.c0 < ch.c1) sm_ph_gpu_slice(&a, &v, tables, any, ch);
    }
}

static int ph_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_pigeonhole);
    size_t any = v.seeds ? (size_t)((1ull << (2 * v.seed_max)) / 8) : 0;
    bool shared = v.seeds && any >= 4 && any <= PH_ANY_SHARED_MAX;
    void (*kernel)(sm_gpu_scan_args) = shared ? ph_kernel<true> : ph_kernel<false>;
    size_t items = (size_t)l->args.nchunks * sm_ph_gpu_slices(&l->args, &v);
    unsigned blocks;
    if (sm_cuda_grid_threads((const void *)kernel, shared ? any : 0, items, 1, PH_BLOCK, l->sms, &blocks, msg) != 0)
        return -1;
    kernel<<<blocks, PH_BLOCK, shared ? any : 0, l->stream>>>(l->args);
    return 0;
}

SM_CUDA_ENGINE(pigeonhole_engine, SM_SECTION_PIGEONHOLE, NULL, NULL, ph_launch)
