/* The pigeonhole filter on the GPU (pigeonhole_gpu.h has the scheme): a
 * thread per slice of a chunk finds the pieces through the k-mer engine's
 * tables (the bitmap of the codes some piece ends with in shared memory
 * when it fits) or the automaton. Candidates go to a queue in the block's
 * shared memory and are verified a thread each after every stretch of the
 * slices; packed k-mismatch windows are compared on the spot, the keys read
 * from their end in shared memory. */
#include <stdio.h>

#include "backends/cuda/cuda_engine.cuh"
#include "engines/approx/pigeonhole_gpu.h"

#define PH_BLOCK 256
#define PH_QUEUE 2048
/* The bitmap of piece-ending codes goes to shared memory up to this size (7 bases: 2 KiB). */
#define PH_ANY_SHARED_MAX (32u * 1024u)
/* And the packed keys read from their end up to this size. */
#define PH_RKEYS_SHARED_MAX (64u * 1024u)

/* Shared memory: the any bitmap (kAnyShared), then the reversed keys (packed, when they fit). */
template <bool kAnyShared>
__device__ __forceinline__ const uint32_t *ph_any(const sm_gpu_scan_args &a, const sm_gpu_pigeonhole &v,
                                                  uint32_t *shm) {
    const uint32_t *any = (const uint32_t *)(a.section + v.seed_any_off);
    if (!kAnyShared) return any;
    uint32_t words = (uint32_t)((1ull << (2 * v.seed_max)) / 32);
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) shm[i] = __ldg(&any[i]);
    return shm;
}

template <bool kAnyShared>
__global__ void __launch_bounds__(PH_BLOCK) ph_queue_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t shm[];
    __shared__ sm_ph_gpu_cand cands[PH_QUEUE];
    __shared__ uint32_t count;
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&a.view, const sm_gpu_pigeonhole);
    const uint32_t *any = ph_any<kAnyShared>(a, v, shm);
    const sm_ph_gpu_tables *tables = (const sm_ph_gpu_tables *)a.extra;
    const uint32_t slices = sm_ph_gpu_slices(&a, &v);
    const uint32_t items = a.nchunks * slices;
    const uint32_t span_max = v.slice + (v.edits ? a.reach : v.max_key) + 16;
    sm_ph_gpu_queue queue = {cands, &count, PH_QUEUE};
    for (uint32_t base = blockIdx.x * blockDim.x; base < items; base += gridDim.x * blockDim.x) {
        const uint32_t item = base + threadIdx.x;
        sm_gpu_chunk ch = {0, 0, 0, 0};
        if (item < items) ch = sm_gpu_chunk_part(a.chunks[item / slices], item % slices, slices, a.tail, a.reach);
        uint32_t lo = 0, hi = 0;
        if (ch.c0 < ch.c1) sm_ph_gpu_span(&v, ch, &lo, &hi);
        sm_ph_gpu_scan_state st = {0, 0, 0};
        if (threadIdx.x == 0) count = 0;
        __syncthreads();
        for (uint32_t at = 0; at < span_max; at += SM_PH_GPU_EPOCH) {
            if (lo + at < hi) {
                uint32_t to = hi - (lo + at) < SM_PH_GPU_EPOCH ? hi : lo + at + SM_PH_GPU_EPOCH;
                sm_ph_gpu_scan(&a, &v, tables, any, ch, &queue, item, &st, lo + at, to);
            }
            __syncthreads();
            const uint32_t n = count < PH_QUEUE ? count : PH_QUEUE;
            for (uint32_t c = threadIdx.x; c < n; c += blockDim.x) {
                const sm_ph_gpu_cand x = cands[c];
                const sm_gpu_chunk xc =
                    sm_gpu_chunk_part(a.chunks[x.item / slices], x.item % slices, slices, a.tail, a.reach);
                sm_ph_gpu_verify(&a, &v, xc, x);
            }
            __syncthreads();
            if (threadIdx.x == 0) count = 0;
            __syncthreads();
        }
    }
}

template <bool kAnyShared, bool kKeysShared>
__global__ void __launch_bounds__(PH_BLOCK) ph_packed_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&a.view, const sm_gpu_pigeonhole);
    const uint32_t any_words = kAnyShared ? (uint32_t)((1ull << (2 * v.seed_max)) / 32) : 0;
    const uint32_t *any = ph_any<kAnyShared>(a, v, shm);
    const sm_ph_gpu_tables *tables = (const sm_ph_gpu_tables *)a.extra;
    const sm_ph_gpu_rkey *rkeys = (const sm_ph_gpu_rkey *)((const uint8_t *)tables + tables->rkeys_off);
    if (kKeysShared) {
        uint64_t *dst = reinterpret_cast<uint64_t *>(shm + ((any_words + 1) & ~1u));
        const uint64_t *src = (const uint64_t *)rkeys;
        for (uint32_t i = threadIdx.x; i < 3 * v.nkeys; i += blockDim.x) dst[i] = __ldg(&src[i]);
        rkeys = reinterpret_cast<const sm_ph_gpu_rkey *>(dst);
    }
    __syncthreads();
    const uint32_t slices = sm_ph_gpu_slices(&a, &v);
    const uint64_t items = (uint64_t)a.nchunks * slices;
    for (uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; item < items;
         item += (uint64_t)gridDim.x * blockDim.x) {
        const sm_gpu_chunk ch =
            sm_gpu_chunk_part(a.chunks[item / slices], (uint32_t)(item % slices), slices, a.tail, a.reach);
        if (ch.c0 < ch.c1) sm_ph_gpu_slice_packed(&a, &v, tables, rkeys, any, ch);
    }
}

static int ph_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_pigeonhole);
    size_t any = v.seeds ? (size_t)((1ull << (2 * v.seed_max)) / 8) : 0;
    bool any_shared = v.seeds && any >= 8 && any <= PH_ANY_SHARED_MAX;
    size_t shared = any_shared ? any : 0;
    void (*kernel)(sm_gpu_scan_args);
    if (v.packed) {
        size_t keys = (size_t)v.nkeys * sizeof(sm_ph_gpu_rkey);
        bool keys_shared = keys <= PH_RKEYS_SHARED_MAX;
        if (keys_shared) shared = (shared + 7) / 8 * 8 + keys;
        kernel = any_shared ? (keys_shared ? ph_packed_kernel<true, true> : ph_packed_kernel<true, false>)
                            : (keys_shared ? ph_packed_kernel<false, true> : ph_packed_kernel<false, false>);
    } else {
        kernel = any_shared ? ph_queue_kernel<true> : ph_queue_kernel<false>;
    }
    size_t items = (size_t)l->args.nchunks * sm_ph_gpu_slices(&l->args, &v);
    unsigned blocks;
    if (sm_cuda_grid_threads((const void *)kernel, shared, items, 1, PH_BLOCK, l->sms, &blocks, msg) != 0) return -1;
    kernel<<<blocks, PH_BLOCK, shared, l->stream>>>(l->args);
    return 0;
}

SM_CUDA_ENGINE(pigeonhole_engine, SM_SECTION_PIGEONHOLE, NULL, NULL, ph_launch)
