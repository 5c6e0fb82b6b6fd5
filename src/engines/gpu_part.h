/* The GPU side of an engine, as every engine's kernel and the runtimes that
 * launch it share it: the view of a section (the engine's parameters and
 * where its tables lie), a batch of text cut into chunks, the one record
 * every kernel reports results in, and the arguments of a scan.
 *
 * An engine's GPU part is all in its own folder (docs/architecture.md,
 * "Adding a GPU kernel"):
 *   <engine>_gpu.h   its view (a struct that fits sm_gpu_view.words) and the
 *                    scan of one work item, in the C that both nvcc and a C
 *                    compiler read (SM_GPU_FN below);
 *   <engine>_gpu.c   the host side of its sm_gpu_part (engines/engine.h):
 *                    the view of a section, a description for --explain,
 *                    and the scan of a whole batch on the CPU, item after
 *                    item, with the very code of the kernel, for the CPU
 *                    stand-in that tests every kernel's chunk logic without
 *                    a GPU (tests/emulated);
 *   <engine>_cuda.cu the kernel and its launch, registered with the GPU
 *                    module by SM_CUDA_ENGINE (engines/cuda_engine.cuh)
 *                    under the engine's section kind: no list names it.
 *
 * Plain C types only: this header is read by the engines (C), the CUDA
 * runner's host side (C), the kernels (CUDA C++) and the stand-in (C).
 */
#ifndef SM_GPU_PART_H
#define SM_GPU_PART_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* A block of a GPU (Hopper) may have this much shared memory. */
#define SM_GPU_SHARED_MAX (227u * 1024u)

/* ---------------------------------------------------------------- views */

/* What a kernel needs to know of a section besides its bytes (which go to
   the device as they are). The first fields are read by the runtimes; the
   engine's own view (its *_gpu.h) lies in words, filled and read through
   SM_GPU_VIEW. */
#define SM_GPU_VIEW_WORDS 30
typedef struct {
    uint32_t kind;           /* SM_SECTION_* of the engine */
    uint32_t flags;          /* SM_GPU_WARP_CHUNKS ... */
    uint32_t results;        /* SM_GPU_RESULTS_*: what its records are */
    uint32_t visits;         /* count mode: visit counters it adds to (0: it counts per pattern) */
    uint64_t fold_index_off; /* the code -> outputs index the visits are folded through */
    uint64_t fold_list_off;
    uint64_t words[SM_GPU_VIEW_WORDS];
} sm_gpu_view;

/* The engine's view in a sm_gpu_view (type must fit, SM_GPU_VIEW_FITS). */
#define SM_GPU_VIEW(view, type) ((type *)(void *)(view)->words)
#define SM_GPU_VIEW_FITS(type) (sizeof(type) <= sizeof(((sm_gpu_view *)0)->words))

/* flags: the kernel gives a chunk to a warp (else a part of a chunk to a
   thread); the kernel reads edit end ends, looking back from `from`. */
#define SM_GPU_WARP_CHUNKS 1u
#define SM_GPU_ENDS_OWNED 2u

/* results: final hits (counted on the device in count mode); k-edit end
   events, one per end; end events of which an end may come several times
   (the least distance counts: never counted on the device). */
#define SM_GPU_RESULTS_HITS 0u
#define SM_GPU_RESULTS_ENDS 1u
#define SM_GPU_RESULTS_ENDS_REPEATED 2u

/* What the database says that a view may need besides its section. */
typedef struct {
    uint32_t match;          /* sm_match */
    uint32_t max_errors;
    uint32_t max_length;
    uint32_t pam_length;     /* the PAM's symbols at each pattern's PAM end (0: none) */
    uint32_t alphabet, flags;
    uint32_t pam_side;       /* sm_pam_side: that end */
    uint32_t dna_bulges, rna_bulges;
} sm_gpu_db;

/* ---------------------------------------------------------------- batches */

/* A chunk of a batch (offsets into the batch's text). Hits a chunk owns:
   those that start in [c0, c1), read from c0 up to end (at most c1 +
   longest pattern - 1, never past its record); k-edit end events whose last
   byte lies in [c0, c1), read from `from` (at most longest pattern + k
   before c0, never before its record) up to c1. */
typedef struct {
    uint32_t from, c0, c1, end;
} sm_gpu_chunk;

/* The one record every kernel reports in. kind: SM_GPU_HIT_OUTPUT, code is
   an output id (pattern * 2 + reverse) and the hit starts at end - its
   pattern's length; SM_GPU_HIT_STATE, code is a DFA state of the section
   (every output of it is a hit); SM_GPU_HIT_END, a k-edit end event of
   output code with D(end) = errors. section: the database section that
   reported it. SM_GPU_HIT_SITE, a site of output code that ends at end
   and spans its pattern's length + delta (a bulge: delta symbols more or
   fewer), with errors = mismatches | (delta + SM_GPU_SITE_DELTA_BIAS) << 8. */
#define SM_GPU_HIT_OUTPUT 0u
#define SM_GPU_HIT_STATE 1u
#define SM_GPU_HIT_END 2u
#define SM_GPU_HIT_SITE 3u
#define SM_GPU_SITE_DELTA_BIAS 128
typedef struct {
    uint32_t end, code;
    uint16_t errors;
    uint8_t kind, section;
} sm_gpu_hit;

/* One batch for one section's kernel. */
typedef struct {
    const uint8_t *text;          /* the batch, padded to whole 16-byte words and 16 more */
    const sm_gpu_chunk *chunks;
    uint32_t nchunks;
    uint32_t section_index;       /* in the database's directory */
    const uint8_t *section;       /* the section, as the database holds it */
    const uint32_t *lengths;      /* pattern lengths */
    int count_only;
    sm_gpu_hit *hits;             /* hit mode: room for hit_cap; *nhits counts every hit, */
    unsigned long long hit_cap;   /* also those past the room (the batch is scanned again) */
    unsigned long long *nhits;
    unsigned long long *counts;   /* count mode: per pattern */
    uint32_t *visits;             /* count mode: per automaton state or k-mer slot, or NULL */
    uint32_t tail;                /* longest pattern - 1 */
    uint32_t reach;               /* k edits: longest pattern + k (what a chunk reads before c0) */
    uint32_t parts;               /* kernels of a chunk per thread: each chunk cut into this many */
    uint32_t chunk_max;           /* the longest chunk's owned bytes (c1 - c0) */
    const void *prepared;         /* what the engine made of its section beside it (device or stand-in), or NULL */
    const void *extra;            /* the bytes its GPU part's extra operation gave, on the device, or NULL */
    sm_gpu_view view;
} sm_gpu_scan_args;

/* The 16 bytes at p (16-byte aligned) as four little-endian words. */
SM_GPU_FN void sm_gpu_load16(const uint8_t *p, uint32_t w[4]) {
#ifdef __CUDACC__
    uint4 v = __ldg((const uint4 *)p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
    memcpy(w, p, 16);
#endif
}

/* Reports a record (hit mode), or counts a hit of output id in count mode
   (only engines whose results are final hits or unique end events count). */
#ifdef __CUDACC__
__device__ __forceinline__ void sm_gpu_emit(const sm_gpu_scan_args *a, uint32_t end, uint32_t code, uint32_t errors,
                                            uint32_t kind) {
    if (a->count_only) {
        atomicAdd(&a->counts[code >> 1], 1ull);
        return;
    }
    unsigned long long i = atomicAdd(a->nhits, 1ull);
    if (i < a->hit_cap) {
        sm_gpu_hit h;
        h.end = end;
        h.code = code;
        h.errors = (uint16_t)errors;
        h.kind = (uint8_t)kind;
        h.section = (uint8_t)a->section_index;
        a->hits[i] = h;
    }
}
#else
/* The stand-in's (engines/gpu_part.c): one thread at a time. */
void sm_gpu_emit(const sm_gpu_scan_args *a, uint32_t end, uint32_t code, uint32_t errors, uint32_t kind);
#endif

/* One output id for an exact hit ending at batch offset end. */
SM_GPU_FN void sm_gpu_output(const sm_gpu_scan_args *a, uint32_t end, uint32_t id) {
    sm_gpu_emit(a, end, id, 0, SM_GPU_HIT_OUTPUT);
}

/* ---------------------------------------------------------------- geometry */

/* Part q of parts of a chunk, for the kernels that give a thread less than
   a chunk: owns its share of [c0, c1), reads up to tail bytes past it (never
   past the chunk's end) or, for end events, from reach bytes before it
   (never before the chunk's from). */
SM_GPU_HOSTDEV sm_gpu_chunk sm_gpu_chunk_part(sm_gpu_chunk ch, uint32_t q, uint32_t parts, uint32_t tail,
                                              uint32_t reach) {
    if (parts <= 1) return ch;
    uint32_t len = ch.c1 - ch.c0, share = (len + parts - 1) / parts;
    share = (share + 15u) & ~15u;
    sm_gpu_chunk out;
    uint32_t lo = (uint64_t)q * share < len ? q * share : len;
    uint32_t hi = (uint64_t)lo + share < len ? lo + share : len;
    out.c0 = ch.c0 + lo;
    out.c1 = ch.c0 + hi;
    uint64_t end = (uint64_t)out.c1 + tail;
    out.end = end < ch.end ? (uint32_t)end : ch.end;
    if (out.end < out.c1) out.end = out.c1;
    out.from = out.c0 - ch.from > reach ? out.c0 - reach : ch.from;
    return out;
}

/* How a batch is cut, from the device's resident threads (threads) and
   the longest pattern - 1 (tail). A thread's chunk: a full batch over every
   thread, and several tails long. With a kernel that takes a chunk per warp
   in the database, chunks are cut for warps (four rounds of every resident
   warp in a full batch, at least two tiles of 512 bytes), and the kernels
   of a chunk per thread cut each chunk into parts of about a thread's
   chunk (at most 64). */
SM_GPU_HOSTDEV size_t sm_gpu_thread_chunk(size_t threads, size_t text_cap, size_t tail) {
    size_t len = text_cap / (threads ? threads : 1);
    if (len < 4 * tail) len = 4 * tail;
    return len < 16 ? 16 : len;
}

SM_GPU_HOSTDEV size_t sm_gpu_chunk_for(size_t threads, int warp_chunks, size_t text_cap, size_t tail) {
    if (!warp_chunks) return sm_gpu_thread_chunk(threads, text_cap, tail);
    size_t warps = threads / 32 ? threads / 32 : 1;
    size_t len = text_cap / (4 * warps);
    if (len < 1024) len = 1024;
    if (len < 4 * tail) len = 4 * tail;
    return len;
}

SM_GPU_HOSTDEV uint32_t sm_gpu_parts(size_t threads, int warp_chunks, size_t text_cap, size_t tail,
                                     size_t longest_chunk) {
    if (!warp_chunks) return 1;
    size_t parts = longest_chunk / sm_gpu_thread_chunk(threads, text_cap, tail);
    return parts < 1 ? 1 : parts > 64 ? 64 : (uint32_t)parts;
}

/* One section of a database as the GPU runtime (backends/cuda) copies it
   and an engine's kernel (engines/cuda_engine.cuh) prepares it: its engine's
   view (kind, parameters, table offsets) and its bytes, copied to the device as they are. */
typedef struct {
    sm_gpu_view view;
    const uint8_t *bytes;
    size_t size;
    const void *extra;       /* what the engine's GPU part made beside it (extra_size bytes), or NULL */
    size_t extra_size;
} sm_cuda_section;

/* Builds a section of kind `kind` on GPU `device` with the builder its
   engine registered in the GPU module (engines/cuda_engine.cuh,
   SM_CUDA_BUILDER), from the engine's own input; ms[3]: the build's copies
   in, kernels and copies back, in milliseconds. 0, or -1 with the reason in
   msg[256]. Provided by the GPU side (backends/cuda: the loader, or
   cuda_none.c without CUDA; the tests' stand-in). */
#ifdef __cplusplus
extern "C"
#endif
int sm_cuda_section_build(uint32_t kind, int device, const void *input, double ms[3], char *msg);

#ifndef __CUDACC__
#include <stdio.h>

/* Sizes for the engines' GPU descriptions: "8 KiB", "2.0 MiB". */
static inline void sm_gpu_size_text(uint64_t bytes, char *buf, size_t size) {
    if (bytes < (1u << 20)) snprintf(buf, size, "%llu KiB", (unsigned long long)((bytes + 1023) / 1024));
    else snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
}
#endif

#endif /* SM_GPU_PART_H */
