/* CRISPR guides on the GPU (guide_gpu.h has the scheme): a warp per chunk,
 * its PAMs found 32 positions at a time, the text around each packed once
 * by the warp's ballots into a window in shared memory, every key of the
 * PAM's side a lane. */
#include "engines/cuda_engine.cuh"
#include "engines/guide/guide_gpu.h"

#define GD_WARPS 8u

__global__ void __launch_bounds__(GD_WARPS * 32) gd_kernel(sm_gpu_scan_args a) {
    __shared__ uint8_t text_set[256], code_of[256];
    __shared__ uint64_t windows[GD_WARPS][2][SM_GD_GPU_WINDOW_WORDS + 1];
    const sm_gpu_guide &v = *SM_GPU_VIEW(&a.view, const sm_gpu_guide);
    const sm_gd_gpu_tables *tb = (const sm_gd_gpu_tables *)a.extra;
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) {
        text_set[i] = tb->text_set[i];
        code_of[i] = tb->code_of[i];
    }
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    uint64_t *codes = windows[warp][0], *bads = windows[warp][1];
    const int64_t reach = sm_gd_gpu_reach(&v);
    for (uint32_t c = blockIdx.x * GD_WARPS + warp; c < a.nchunks; c += gridDim.x * GD_WARPS) {
        const sm_gpu_chunk ch = a.chunks[c];
        const uint32_t end = sm_gd_gpu_pam_end(&v, ch);
        for (uint32_t p0 = ch.c0; p0 < end; p0 += 32) {
            const uint32_t p = p0 + lane;
            const int right = p < end && p < ch.c1 && sm_gd_gpu_pam_at(&a, &v, text_set, 0, p);
            const int left = p < end && sm_gd_gpu_pam_at(&a, &v, text_set, 1, p);
            const uint32_t rights = __ballot_sync(~0u, right), lefts = __ballot_sync(~0u, left);
            for (uint32_t bits = rights | lefts; bits; bits &= bits - 1) {
                const uint32_t j = (uint32_t)__ffs((int)bits) - 1, at = p0 + j;
                const int64_t first = (int64_t)at - reach;
                __syncwarp(); /* the last PAM's lanes are done with the window */
                for (uint32_t w = 0; w < SM_GD_GPU_WINDOW_WORDS; w++) {
                    uint32_t no;
                    const uint32_t code = sm_gd_gpu_symbol(&a, code_of, ch.c0, ch.end, first + 32 * w + lane, &no);
                    const uint32_t low = __ballot_sync(~0u, code & 1u), high = __ballot_sync(~0u, code >> 1),
                                   bad = __ballot_sync(~0u, no);
                    if (lane == w) {
                        codes[w] = sm_gd_gpu_spread(low) | sm_gd_gpu_spread(high) << 1;
                        bads[w] = sm_gd_gpu_spread(bad);
                    }
                }
                if (lane == SM_GD_GPU_WINDOW_WORDS) {
                    codes[lane] = 0;
                    bads[lane] = SM_GD_LANES;
                }
                __syncwarp();
                for (uint32_t side = 0; side < 2; side++) {
                    if (!(((side ? lefts : rights) >> j) & 1u)) continue;
                    const sm_gd_gpu_key *keys = tb->keys + v.side_first[side];
                    for (uint32_t i = lane; i < v.side_keys[side]; i += 32)
                        sm_gd_gpu_key_at(&a, &v, &keys[i], codes, bads, first, text_set, ch, at, side);
                }
            }
        }
    }
}

static int gd_launch(const sm_cuda_launch *l, char *msg) {
    unsigned blocks;
    if (sm_cuda_grid_threads((const void *)gd_kernel, 0, l->args.nchunks, 32, GD_WARPS * 32, l->sms, &blocks, msg) != 0)
        return -1;
    gd_kernel<<<blocks, GD_WARPS * 32, 0, l->stream>>>(l->args);
    return 0;
}

SM_CUDA_ENGINE(guide_engine, SM_SECTION_GUIDE, NULL, NULL, gd_launch)
