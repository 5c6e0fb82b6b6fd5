/* k mismatches on the GPU (kmismatch_gpu.h has the scheme): a block per
 * tile of a chunk, the tile's text as class planes in shared memory, a
 * thread per 32 windows counting every key's mismatches in bit slices. */
#include <stdio.h>
#include <stdlib.h>

#include "engines/cuda_engine.cuh"
#include "engines/approx/kmismatch_gpu.h"

__global__ void __launch_bounds__(SM_KM_GPU_THREADS) km_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t planes[];
    __shared__ uint16_t class_of[256];
    const sm_gpu_mismatch &v = *SM_GPU_VIEW(&a.view, const sm_gpu_mismatch);
    const uint16_t *class_global = (const uint16_t *)(a.section + v.class_of_off);
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) class_of[i] = class_global[i];
    const uint32_t words = sm_km_gpu_words(&v), tiles = sm_km_gpu_tiles(&a, &v), span = 32 * words - 32;
    const uint32_t *prepared = (const uint32_t *)a.prepared;
    for (uint32_t tile = blockIdx.x; tile < a.nchunks * tiles; tile += gridDim.x) {
        const sm_gpu_chunk ch = a.chunks[tile / tiles];
        const uint32_t t0 = ch.c0 + (tile % tiles) * v.tile;
        if (t0 >= ch.c1) continue; /* the whole block alike */
        __syncthreads(); /* the previous tile's threads are done with the planes */
        for (uint32_t i = threadIdx.x; i < v.rows * words; i += blockDim.x) planes[i] = 0;
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < span && t0 + i < ch.end; i += blockDim.x)
            sm_km_gpu_plane_bit(planes, words, class_of[__ldg(&a.text[t0 + i])], i);
        __syncthreads();
        sm_km_gpu_windows(&a, &v, planes, words, prepared, ch, t0, threadIdx.x);
    }
}

static int km_prepare(sm_cuda_gpu_section *s, const sm_cuda_section *host, char *msg) {
    const sm_gpu_mismatch &v = *SM_GPU_VIEW(&s->view, const sm_gpu_mismatch);
    size_t bytes = sm_km_gpu_prepared_words(&v) * sizeof(uint32_t);
    uint32_t *table = (uint32_t *)malloc(bytes ? bytes : 4);
    if (!table) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    sm_km_gpu_symbols(&v, host->bytes, table);
    void *dev = NULL;
    cudaError_t e = cudaMalloc(&dev, bytes ? bytes : 4);
    if (e == cudaSuccess) e = cudaMemcpy(dev, table, bytes, cudaMemcpyHostToDevice);
    free(table);
    s->prepared = dev;
    if (e != cudaSuccess) return sm_cuda_fail(msg, "copying the mismatch tables to the device", e);
    return 0;
}

static void km_release(sm_cuda_gpu_section *s) {
    cudaFree(s->prepared);
    s->prepared = NULL;
}

static int km_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_mismatch &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_mismatch);
    size_t shared = (size_t)v.rows * sm_km_gpu_words(&v) * 4;
    size_t tiles = (size_t)l->args.nchunks * sm_km_gpu_tiles(&l->args, &v);
    unsigned blocks;
    if (sm_cuda_grid_threads((const void *)km_kernel, shared, tiles, SM_KM_GPU_THREADS, SM_KM_GPU_THREADS, l->sms,
                             &blocks, msg) != 0)
        return -1;
    sm_gpu_scan_args args = l->args;
    args.prepared = l->section->prepared;
    km_kernel<<<blocks, SM_KM_GPU_THREADS, shared, l->stream>>>(args);
    return 0;
}

SM_CUDA_ENGINE(mismatch_engine, SM_SECTION_MISMATCH, km_prepare, km_release, km_launch)
