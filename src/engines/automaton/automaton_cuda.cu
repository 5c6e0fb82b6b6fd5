/* The automaton on the GPU: the CPU scan spread over many threads, one
 * thread per chunk (or part of one), one table lookup per byte, the text
 * read 16 bytes at a time, the next 16 asked for before these are walked.
 *
 * When the transition table fits in a block's shared memory it is copied
 * there first: lookups from shared memory do not queue behind each other in
 * L1 the way scattered global loads do. With fewer than 2^15 states every
 * entry fits 16 bits (state index and output flag): half the room, so that
 * larger tables fit (8000 8-mers: 190 KB instead of 380) and smaller ones
 * leave room for more blocks. A text set's larger table lies there packed
 * when that fits (automaton_gpu.h); others are read through the read-only
 * cache and L2.
 *
 * Count mode adds one to a per-state visit counter for every flagged
 * transition (folded into per-pattern counts on the device), in the block's
 * shared memory when the counters are few enough (so that the states of
 * frequent words do not queue on one counter in L2); hit mode
 * appends (end, state) records, which the host expands. Past a chunk's c1
 * the kernel checks each output's start itself (automaton_gpu.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/cuda_engine.cuh"
#include "engines/automaton/automaton_gpu.h"

#define TARGET_MASK 0x7fffffffu

/* Where the kernel reads the transition table: all of it in device memory
   (through L1 and L2), all of it in the block's shared memory (32- or
   16-bit), the first rows in shared memory and the rest, 16-bit, in device
   memory, or all of it in shared memory in the packed form
   (automaton_gpu.h). */
enum { TABLE_GLOBAL = 0, TABLE_SHARED = 1, TABLE_SHARED16 = 2, TABLE_SPLIT16 = 3, TABLE_PACKED16 = 4 };

struct ac_prepared {
    uint16_t *compact;       /* 16-bit copy of the transitions (fewer than 2^15 states), or NULL */
    int prefer_wide;         /* SEQMATCH_CUDA_TABLE=32: the 32-bit shared table whenever it fits */
    int visits_global;       /* SEQMATCH_CUDA_VISITS=global: visit counters in device memory (benchmarks) */
    int split_rows;          /* SEQMATCH_CUDA_AC_SPLIT=R: the rows a 16-bit table past shared memory keeps
                                there (benchmarks; -1: the rule below) */
};

/* The rare report out of line: past c1, the outputs checked one by one
   (sm_ac_gpu_report). Inlined at each of the sixteen unrolled steps it
   spread a kernel over 240 KB of code, and the walk waited on instruction
   fetch (bench/results/history.md, "Word lists on the GPU: the rare report
   out of line"). The kernel's arguments are __grid_constant__ so that it
   can take their address without a copy in local memory. */
static __device__ __noinline__ void ac_report_rare(const sm_gpu_scan_args *a, uint32_t state, uint32_t pos,
                                                   uint32_t c1, bool count) {
    sm_ac_gpu_report(a, SM_GPU_VIEW(&a->view, const sm_gpu_automaton), state, pos, c1, count);
}

/* One byte of class c: the next state, and a report when it is flagged. In
   the 32-bit tables an entry is the target's row offset (state * columns);
   in the 16-bit one the target's state index. */
template <int kTable, bool kCount, bool kVisitsShared, bool kPlainCount = false>
__device__ __forceinline__ void step(const sm_gpu_scan_args &a, const uint32_t *delta, const uint16_t *compact,
                                     const uint16_t *compact_far, const uint32_t *heads, const uint16_t *entries,
                                     uint32_t split_rows, uint32_t *visits, uint32_t shared_states, uint32_t columns,
                                     uint32_t &s, uint32_t c, uint32_t pos, uint32_t c1) {
    uint32_t e, state;
    bool flagged;
    if (kTable == TABLE_PACKED16) {
        e = sm_ac_gpu_packed_entry(compact, heads, entries, columns, s, c);
        s = state = e & 0x7fffu;
        flagged = e > 0x7fffu; /* e is 16-bit: one compare */
    } else if (kTable == TABLE_SHARED16 || kTable == TABLE_SPLIT16) {
        const uint32_t at = s * columns + c;
        /* one load through a generic address, shared or device memory
           lane by lane: no branch for the warp to part and join on */
        e = kTable == TABLE_SHARED16 ? compact[at] : (s < split_rows ? compact : compact_far)[at];
        s = state = e & 0x7fffu;
        flagged = e > 0x7fffu;
    } else {
        e = delta[s + c];
        s = e & TARGET_MASK;
        flagged = e & SM_GPU_DFA_FLAG;
        state = flagged ? s / columns : 0;
    }
    if (kPlainCount) {
        /* every counter in shared memory and no step past c1: one add,
           none of the checks below for the warp to part on */
        if (flagged) atomicAdd(&visits[state], 1u);
        return;
    }
    if (!flagged) return;
    if (pos > c1) ac_report_rare(&a, state, pos, c1, kCount);
    else if (kVisitsShared && state < shared_states) atomicAdd(&visits[state], 1u);
    else sm_ac_gpu_report_owned(&a, state, pos, kCount);
}

/* kVisitsShared (count mode): the visit counters of the first shared_states
   states in the block's shared memory past the table (at byte visits_off),
   added to the device's when the block ends, so that the states of frequent
   words do not queue on one counter in L2; any further states count in
   device memory. split_rows: the rows kept in shared memory (TABLE_SPLIT16)
   or kept whole in the packed form (TABLE_PACKED16, whose image
   compact_global then is). Registers: 40 with the text read ahead, three
   blocks a multiprocessor. The packed kernel runs one block of 1024
   threads a multiprocessor: its image lies there once instead of once for
   each of two blocks, which leaves room for every state's counter beside
   it (bench/results/history.md, "Word lists on the GPU: one block a
   multiprocessor"); it may take 64 registers. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define AC_BLOCKS_PER_SM 2 /* Turing holds 1024 threads a multiprocessor */
#else
#define AC_BLOCKS_PER_SM 3
#endif
#define AC_PACKED_THREADS 1024
template <int kTable, bool kCount, bool kVisitsShared = false>
__global__ void __launch_bounds__(kTable == TABLE_PACKED16 ? AC_PACKED_THREADS : SM_CUDA_BLOCK,
                                  kTable == TABLE_PACKED16 ? 1 : AC_BLOCKS_PER_SM)
    ac_kernel(const __grid_constant__ sm_gpu_scan_args a, const uint16_t *compact_global, uint32_t visits_off,
              uint32_t shared_states, uint32_t split_rows) {
    extern __shared__ uint32_t shared_table[];
    uint32_t *visits = shared_table + visits_off / 4;
    __shared__ uint32_t class_of[256];
    const sm_gpu_automaton &v = *SM_GPU_VIEW(&a.view, const sm_gpu_automaton);
    const uint16_t *class_of_global = (const uint16_t *)(a.section + v.class_of_off);
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) class_of[i] = class_of_global[i];
    const uint32_t words = v.states * v.columns, columns = v.columns;
    const uint32_t *delta = (const uint32_t *)(a.section + v.delta_off);
    const uint16_t *compact = reinterpret_cast<const uint16_t *>(shared_table);
    if (kTable == TABLE_SHARED) {
        for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) shared_table[i] = __ldg(&delta[i]);
        delta = shared_table;
    } else if (kTable == TABLE_SHARED16 || kTable == TABLE_SPLIT16) {
        const uint32_t *pairs = reinterpret_cast<const uint32_t *>(compact_global);
        const uint32_t held = kTable == TABLE_SHARED16 ? words : split_rows * columns;
        for (uint32_t i = threadIdx.x; i < (held + 1) / 2; i += blockDim.x) shared_table[i] = __ldg(&pairs[i]);
    } else if (kTable == TABLE_PACKED16) {
        const uint4 *image = reinterpret_cast<const uint4 *>(compact_global);
        uint4 *to = reinterpret_cast<uint4 *>(shared_table);
        for (uint32_t i = threadIdx.x; i < v.packed_bytes / 16; i += blockDim.x) to[i] = __ldg(&image[i]);
    }
    const sm_ac_gpu_packed_layout packed = sm_ac_gpu_packed_layout_of(split_rows, columns, v.states);
    const uint32_t *heads = shared_table + packed.heads_off / 4;
    const uint16_t *entries = compact + packed.entries_off / 2;
    if (kVisitsShared)
        for (uint32_t i = threadIdx.x; i < shared_states; i += blockDim.x) visits[i] = 0;
    __syncthreads();
    /* count mode's common case: every counter in shared memory, so that a
       group of 16 bytes wholly before c1 adds at each flagged step without
       the checks of the rare ones (bench/results/history.md, "Word lists on
       the GPU: one block a multiprocessor") */
    const bool plain_count = kVisitsShared && shared_states >= v.states;
    const uint32_t items = a.nchunks * a.parts;
    for (uint32_t item = blockIdx.x * blockDim.x + threadIdx.x; item < items; item += gridDim.x * blockDim.x) {
        const sm_gpu_chunk ch = sm_gpu_chunk_part(a.chunks[item / a.parts], item % a.parts, a.parts, a.tail, 0);
        if (ch.c0 >= ch.c1) continue;
        uint32_t s = 0;
        uint32_t i = ch.c0;
        /* the next 16 bytes are asked for before these are walked, so that
           the walk hides their wait on device memory */
        uint4 ahead = __ldg(reinterpret_cast<const uint4 *>(a.text + (i & ~15u)));
        while (i < ch.end) {
            uint32_t base = i & ~15u;
            const uint4 w = ahead;
            if (base + 16 < ch.end) ahead = __ldg(reinterpret_cast<const uint4 *>(a.text + base + 16));
            uint32_t words4[4] = {w.x, w.y, w.z, w.w};
            uint32_t from = i - base, to = ch.end - base < 16u ? ch.end - base : 16u;
            if (kVisitsShared && plain_count && from == 0 && to == 16 && base + 16 <= ch.c1) {
#pragma unroll
                for (int k = 0; k < 16; k++)
                    step<kTable, kCount, kVisitsShared, true>(
                        a, delta, compact, compact_global, heads, entries, split_rows, visits, shared_states, columns,
                        s, class_of[__byte_perm(words4[k >> 2], 0, 0x4440u | (k & 3))], base + k + 1, ch.c1);
            } else if (from == 0 && to == 16) {
#pragma unroll
                for (int k = 0; k < 16; k++)
                    step<kTable, kCount, kVisitsShared>(a, delta, compact, compact_global, heads, entries, split_rows,
                                                        visits, shared_states, columns, s,
                                                        class_of[__byte_perm(words4[k >> 2], 0, 0x4440u | (k & 3))],
                                                        base + k + 1, ch.c1);
            } else {
#pragma unroll
                for (int k = 0; k < 16; k++) {
                    if ((uint32_t)k < from || (uint32_t)k >= to) continue;
                    step<kTable, kCount, kVisitsShared>(a, delta, compact, compact_global, heads, entries, split_rows,
                                                        visits, shared_states, columns, s,
                                                        class_of[__byte_perm(words4[k >> 2], 0, 0x4440u | (k & 3))],
                                                        base + k + 1, ch.c1);
                }
            }
            i = base + 16;
        }
    }
    if (kVisitsShared) {
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < shared_states; i += blockDim.x)
            if (visits[i]) atomicAdd(&a.visits[i], visits[i]);
    }
}

static int ac_prepare(sm_cuda_gpu_section *s, const sm_cuda_section *host, char *msg) {
    const sm_gpu_automaton &v = *SM_GPU_VIEW(&s->view, sm_gpu_automaton);
    ac_prepared *p = (ac_prepared *)calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    s->prepared = p;
    const char *choice = getenv("SEQMATCH_CUDA_TABLE");
    p->prefer_wide = choice && strcmp(choice, "32") == 0;
    const char *visits = getenv("SEQMATCH_CUDA_VISITS");
    p->visits_global = visits && strcmp(visits, "global") == 0;
    const char *split = getenv("SEQMATCH_CUDA_AC_SPLIT");
    p->split_rows = split && *split ? atoi(split) : -1;
    if (v.states >= 0x8000u) return 0;
    size_t words = (size_t)v.states * v.columns;
    const uint32_t *delta = (const uint32_t *)(host->bytes + v.delta_off);
    uint16_t *tmp = (uint16_t *)malloc(words * sizeof *tmp + 2);
    if (!tmp) return 0; /* the 32-bit table will do */
    for (size_t i = 0; i < words; i++)
        tmp[i] = (uint16_t)((delta[i] & TARGET_MASK) / v.columns | (delta[i] & SM_GPU_DFA_FLAG ? 0x8000u : 0));
    tmp[words] = 0;
    cudaError_t e = cudaMalloc(&p->compact, words * sizeof *tmp + 2);
    if (e == cudaSuccess) e = cudaMemcpy(p->compact, tmp, words * sizeof *tmp + 2, cudaMemcpyHostToDevice);
    free(tmp);
    if (e != cudaSuccess) return sm_cuda_fail(msg, "copying the automaton to the device", e);
    return 0;
}

static void ac_release(sm_cuda_gpu_section *s) {
    ac_prepared *p = (ac_prepared *)s->prepared;
    if (!p) return;
    cudaFree(p->compact);
    free(p);
    s->prepared = NULL;
}

static int ac_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_automaton &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_automaton);
    const ac_prepared *p = (const ac_prepared *)l->section->prepared;
    size_t words = (size_t)v.states * v.columns, wide = words * 4, narrow = words * 2 + 2;
    void (*kernel)(sm_gpu_scan_args, const uint16_t *, uint32_t, uint32_t, uint32_t);
    size_t shared = 0;
    bool count = l->args.count_only;
    int table;
    if (p->compact && narrow <= l->shared_limit && !(p->prefer_wide && wide <= l->shared_limit)) {
        table = TABLE_SHARED16;
        shared = narrow;
    } else if (wide <= l->shared_limit) {
        table = TABLE_SHARED;
        shared = wide;
    } else {
        table = TABLE_GLOBAL;
    }
    /* A text set's table past shared memory lies there whole in the
       packed form where that fits (some rows whole, each state one of them
       with up to two entries of its own: no lane waits on L2;
       bench/results/history.md, "Word lists on the GPU: the table packed
       in shared memory"). Else it keeps its first rows there (numbered
       breadth first: the states nearest the root, where most lanes are at
       most steps) and the rest, 16-bit, read through L2: fewer lanes of a
       warp then read memory at once ("Word lists on the GPU: the first
       rows in shared memory"). A DNA set's few columns keep L1's room. */
    uint32_t split_rows = 0;
    const uint16_t *image = p->compact;
    if (v.packed_rows && !l->args.extra) {
        snprintf(msg, 256, "the automaton's packed table is not on the device");
        return -1;
    }
    if (table == TABLE_GLOBAL && v.packed_rows && v.packed_bytes + 2048 <= l->shared_limit) {
        table = TABLE_PACKED16;
        shared = v.packed_bytes;
        split_rows = v.packed_rows;
        image = reinterpret_cast<const uint16_t *>(l->args.extra); /* the packed form (automaton_gpu.c) */
    } else if (table == TABLE_GLOBAL && p->compact) {
        const int rows = p->split_rows >= 0 ? p->split_rows : v.columns >= 16 ? (int)SM_AC_GPU_SPLIT_ROWS : 0;
        const size_t fit = l->shared_limit > 2048 ? (l->shared_limit - 2048) / (v.columns * 2u) : 0;
        split_rows = (uint32_t)rows < v.states ? (uint32_t)rows : v.states;
        if (split_rows > fit) split_rows = (uint32_t)fit;
        if (split_rows) {
            table = TABLE_SPLIT16;
            shared = ((size_t)split_rows * v.columns * 2 + 3) & ~(size_t)3;
        }
    }
    /* at most 32 KiB of counters: more takes L1's room from a table read
       through it (bench/results/history.md, "Dense sets on the GPU"). A
       text set's table read through L2 with more states keeps counters for
       the first 8192 (numbered breadth first: the shallow states, which the
       frequent words' hits visit) and counts the others in device memory;
       a DNA set's (a few columns, hits sparser) counts them all there, as
       L1 serves its table better without them ("Word lists on the GPU:
       counters past 8192 states"). Beside the packed form (no table in
       L1) every counter that fits. */
    uint32_t visits_off = (uint32_t)((shared + 15) & ~(size_t)15);
    size_t room = visits_off + 2048 <= l->shared_limit ? (l->shared_limit - 2048 - visits_off) / 4 : 0;
    size_t shared_states = v.states < 8192u || table == TABLE_PACKED16 ? v.states : 8192u;
    if (shared_states > room) shared_states = room;
    bool visits_shared = count && !p->visits_global && shared_states > 0 &&
                         (shared_states == v.states ||
                          ((table == TABLE_GLOBAL || table == TABLE_SPLIT16 || table == TABLE_PACKED16) &&
                           v.columns >= 16));
    if (visits_shared) shared = visits_off + shared_states * 4;
#define AC_PICK(T)                                                                                      \
    kernel = !count ? ac_kernel<T, false> : visits_shared ? ac_kernel<T, true, true> : ac_kernel<T, true>
    if (table == TABLE_SHARED16) AC_PICK(TABLE_SHARED16);
    else if (table == TABLE_SHARED) AC_PICK(TABLE_SHARED);
    else if (table == TABLE_SPLIT16) AC_PICK(TABLE_SPLIT16);
    else if (table == TABLE_PACKED16) AC_PICK(TABLE_PACKED16);
    else AC_PICK(TABLE_GLOBAL);
#undef AC_PICK
    const unsigned threads = table == TABLE_PACKED16 ? AC_PACKED_THREADS : SM_CUDA_BLOCK;
    unsigned blocks;
    if (sm_cuda_grid_threads((const void *)kernel, shared, (size_t)l->args.nchunks * l->args.parts, 1, threads, l->sms,
                             &blocks, msg) != 0)
        return -1;
    kernel<<<blocks, threads, shared, l->stream>>>(l->args, image, visits_off, (uint32_t)shared_states, split_rows);
    return 0;
}

SM_CUDA_ENGINE(automaton_engine, SM_SECTION_AUTOMATON, ac_prepare, ac_release, ac_launch)
