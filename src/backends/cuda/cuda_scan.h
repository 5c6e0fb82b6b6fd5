/* What every GPU kernel of an exact engine shares with the others, and with
 * the CPU stand-in for the kernels (tests/emulated/cuda_emulated.c): the
 * arguments of a scan of one batch, and the way a kernel reports what it
 * finds. Each engine's scan of one chunk is written once, in its folder
 * (kmer_gpu.h, wm_gpu.h, shiftand_gpu.h), in the C that both CUDA and a C
 * compiler read; the kernel (*_cuda.cu) runs it on the GPU and the stand-in
 * runs the very same code on the CPU, so that the chunk and ownership logic
 * the tests check without a GPU is the kernels' own.
 *
 * Ownership (cuda_device.h): a chunk owns the hits that start in [c0, c1)
 * and reads up to `end`; scanning from its start state at c0, an engine
 * sees exactly the hits that start at or after c0, and keeps those that
 * start before c1.
 */
#ifndef SM_CUDA_SCAN_H
#define SM_CUDA_SCAN_H

#include <stdint.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"
#include "engines/gpu_view.h"

#ifdef __CUDACC__
#define SM_GPU_FN __device__ __forceinline__
#define SM_GPU_HOSTDEV __host__ __device__ __forceinline__
#define SM_GPU_LDG(p) __ldg(p)
#define SM_GPU_POPC(x) __popc(x)
#define SM_GPU_POPC64(x) __popcll(x)
#define SM_GPU_CTZ64(x) (__ffsll((long long)(x)) - 1)
#define SM_GPU_UNROLL _Pragma("unroll")
#else
#define SM_GPU_FN static inline
#define SM_GPU_HOSTDEV static inline
#define SM_GPU_LDG(p) (*(p))
#define SM_GPU_POPC(x) __builtin_popcount(x)
#define SM_GPU_POPC64(x) __builtin_popcountll(x)
#define SM_GPU_CTZ64(x) __builtin_ctzll(x)
#define SM_GPU_UNROLL
#endif

/* The 16 bytes at p (16-byte aligned) as four little-endian words. */
SM_GPU_FN void sm_gpu_load16(const uint8_t *p, uint32_t w[4]) {
#ifdef __CUDACC__
    uint4 v = __ldg((const uint4 *)p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
    memcpy(w, p, 16);
#endif
}

/* Where the kernels keep their tables: in a block's shared memory up to
   these sizes (room left for a second block on a multiprocessor), else
   read through the caches. A Hopper block may have 227 KiB. */
#define SM_CUDA_HOPPER_SHARED (227u * 1024u)
#define SM_CUDA_KMER_SHARED_MAX (96u * 1024u)
#define SM_CUDA_WM_SHIFT_SHARED_MAX (128u * 1024u)
#define SM_CUDA_SA_MASKS_SHARED_MAX (96u * 1024u)

/* One batch for one section's kernel. */
typedef struct {
    const uint8_t *text;          /* the batch, padded to whole 16-byte words and 16 more */
    const sm_cuda_chunk *chunks;
    uint32_t nchunks;
    const uint8_t *section;       /* the section, as the database holds it */
    const uint32_t *lengths;      /* pattern lengths */
    int count_only;
    sm_cuda_hit *hits;            /* hit mode: room for hit_cap; *nhits counts every hit, */
    unsigned long long hit_cap;   /* also those past the room (the batch is scanned again) */
    unsigned long long *nhits;
    unsigned long long *counts;   /* count mode: per pattern */
    uint32_t *visits;             /* count mode: per automaton state or k-mer slot, or NULL */
    uint32_t tail;                /* longest pattern - 1 */
    uint32_t parts;               /* kernels of a chunk per thread: each chunk cut into this many */
    sm_gpu_view view;
} sm_cuda_scan_args;

/* Part q of parts of a chunk, for the kernels that give a thread less than
   a chunk: owns its share of [c0, c1) and reads up to tail bytes past it,
   never past the chunk's end. */
SM_GPU_FN sm_cuda_chunk sm_cuda_part(sm_cuda_chunk ch, uint32_t q, uint32_t parts, uint32_t tail) {
    if (parts <= 1) return ch;
    uint32_t len = ch.c1 - ch.c0, share = (len + parts - 1) / parts;
    share = (share + 15u) & ~15u;
    sm_cuda_chunk out;
    uint32_t lo = (uint64_t)q * share < len ? q * share : len;
    uint32_t hi = (uint64_t)lo + share < len ? lo + share : len;
    out.c0 = ch.c0 + lo;
    out.c1 = ch.c0 + hi;
    uint64_t end = (uint64_t)out.c1 + tail;
    out.end = end < ch.end ? (uint32_t)end : ch.end;
    if (out.end < out.c1) out.end = out.c1;
    return out;
}

/* How a batch is cut, from the device's resident threads (threads) and
   the longest pattern - 1 (tail). A thread's chunk: a full batch over every
   thread, and several tails long. With a kernel that takes a chunk per warp
   in the database, chunks are cut for warps (four rounds of every resident
   warp in a full batch, at least two tiles of 512 bytes), and the kernels
   of a chunk per thread cut each chunk into parts of about a thread's
   chunk (at most 64). */
SM_GPU_HOSTDEV size_t sm_cuda_thread_chunk(size_t threads, size_t text_cap, size_t tail) {
    size_t len = text_cap / (threads ? threads : 1);
    if (len < 4 * tail) len = 4 * tail;
    return len < 16 ? 16 : len;
}

SM_GPU_HOSTDEV size_t sm_cuda_chunk_for(size_t threads, int warp_chunks, size_t text_cap, size_t tail) {
    if (!warp_chunks) return sm_cuda_thread_chunk(threads, text_cap, tail);
    size_t warps = threads / 32 ? threads / 32 : 1;
    size_t len = text_cap / (4 * warps);
    if (len < 1024) len = 1024;
    if (len < 4 * tail) len = 4 * tail;
    return len;
}

SM_GPU_HOSTDEV uint32_t sm_cuda_parts(size_t threads, int warp_chunks, size_t text_cap, size_t tail, size_t longest_chunk) {
    if (!warp_chunks) return 1;
    size_t parts = longest_chunk / sm_cuda_thread_chunk(threads, text_cap, tail);
    return parts < 1 ? 1 : parts > 64 ? 64 : (uint32_t)parts;
}

/* Reports one output id for a hit ending at batch offset end (hit mode),
   or counts it (count mode). */
#ifdef __CUDACC__
__device__ __forceinline__ void sm_cuda_output(const sm_cuda_scan_args *a, uint32_t end, uint32_t id) {
    if (a->count_only) {
        atomicAdd(&a->counts[id >> 1], 1ull);
        return;
    }
    unsigned long long i = atomicAdd(a->nhits, 1ull);
    if (i < a->hit_cap) a->hits[i] = sm_cuda_hit{end, SM_CUDA_ONE_OUTPUT | id};
}
#else
void sm_cuda_output(const sm_cuda_scan_args *a, uint32_t end, uint32_t id);
#endif

#endif /* SM_CUDA_SCAN_H */
