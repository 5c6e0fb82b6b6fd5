/* The automaton on the GPU: its view and the scan of one chunk (or part of
 * one) by one thread, in the C that both the kernel (automaton_cuda.cu) and
 * the CPU stand-in (automaton_gpu.c) compile (engines/gpu_part.h).
 *
 * From the root at c0 the automaton sees exactly the hits that start at or
 * after c0: a flagged transition ending at or before c1 owns every output
 * of its state (reported as the state, which the host expands), one past
 * c1 only the outputs that start before c1, which the thread checks. */
#ifndef SM_AUTOMATON_GPU_H
#define SM_AUTOMATON_GPU_H

#include "engines/gpu_part.h"

/* A complete DFA; delta entries are target * columns with SM_GPU_DFA_FLAG
   set when the target has outputs. */
#define SM_GPU_DFA_FLAG 0x80000000u
/* A text set's table past shared memory keeps this many of its first rows
   there, 16-bit (automaton_cuda.cu). */
#define SM_AC_GPU_SPLIT_ROWS 64u
typedef struct {
    uint32_t states, columns;
    uint64_t delta_off;      /* uint32[states * columns] */
    uint64_t out_index_off;  /* uint32[states + 1] */
    uint64_t out_list_off;   /* uint32[]: output ids (pattern * 2 + reverse) */
    uint64_t class_of_off;   /* uint16[256]: text byte -> column */
    uint32_t packed_rows;    /* the packed form (below): its whole rows, 0 when not used */
    uint32_t packed_bytes;   /* and its size */
} sm_gpu_automaton;

/* The packed form of a text set's table past shared memory, small enough
   to lie in shared memory whole: some rows whole, 16-bit, and for every
   state a record of the whole row its own row differs from in at most two
   entries, and those entries (its children, mostly, over its failure
   state's row; ac_packed.c builds it and checks it against the table).
   The records lie as two arrays, so that a step's first load is 4 bytes
   wide and its second one 16-bit entry from wherever it lies:
     heads[s] (32-bit): whole row | class a << 16 | class b << 24
     entries[2s], entries[2s + 1] (16-bit): entry a, entry b
   A class SM_AC_GPU_PACKED_NONE is none. An entry is the 16-bit table's:
   state | 0x8000 when flagged. At most SM_AC_GPU_PACKED_BUDGET bytes, so
   that beside it a block's shared memory holds the visit counters of a
   set that packs that far (2000 Bible words: 8,616 states, an image of
   168 KiB, 34 KiB of counters; an H100's or H200's block takes 227 KiB;
   automaton_cuda.cu). */
#define SM_AC_GPU_PACKED_EXCEPTIONS 2u
#define SM_AC_GPU_PACKED_NONE 0xffu
#define SM_AC_GPU_PACKED_BUDGET (180u * 1024u)

typedef struct {
    uint32_t heads_off, entries_off, bytes;
} sm_ac_gpu_packed_layout;

SM_GPU_HOSTDEV sm_ac_gpu_packed_layout sm_ac_gpu_packed_layout_of(uint32_t rows, uint32_t columns, uint32_t states) {
    sm_ac_gpu_packed_layout l;
    l.heads_off = (rows * columns * 2u + 3u) & ~3u;
    l.entries_off = l.heads_off + states * 4u;
    l.bytes = (l.entries_off + states * 4u + 15u) & ~15u;
    return l;
}

/* State s's entry for class c: its head, then one 16-bit load, of the
   whole row's entry or of one of its own (no branch). heads and entries
   lie in the image that starts at whole. */
SM_GPU_HOSTDEV uint32_t sm_ac_gpu_packed_entry(const uint16_t *whole, const uint32_t *heads, const uint16_t *entries,
                                               uint32_t columns, uint32_t s, uint32_t c) {
    const uint32_t head = heads[s];
    const uint16_t *at = whole + (head & 0xffffu) * columns + c;
    at = c == (head >> 16 & 0xffu) ? entries + 2u * s : at;
    at = c == head >> 24 ? entries + 2u * s + 1u : at;
    return *at;
}

/* A flagged transition into state at batch offset pos (just past the byte)
   at or before c1, which owns every output of the state: its visit counter
   in device memory (count mode), or the state as a hit. */
SM_GPU_FN void sm_ac_gpu_report_owned(const sm_gpu_scan_args *a, uint32_t state, uint32_t pos, int count) {
    if (count) {
#ifdef __CUDACC__
        atomicAdd(&a->visits[state], 1u);
#else
        a->visits[state]++;
#endif
    } else {
        sm_gpu_emit(a, pos, state, 0, SM_GPU_HIT_STATE);
    }
}

/* A flagged transition into state at batch offset pos: as above, or past c1
   the outputs that start before c1. */
SM_GPU_FN void sm_ac_gpu_report(const sm_gpu_scan_args *a, const sm_gpu_automaton *v, uint32_t state, uint32_t pos,
                                uint32_t c1, int count) {
    if (pos <= c1) {
        sm_ac_gpu_report_owned(a, state, pos, count);
        return;
    }
    const uint32_t *out_index = (const uint32_t *)(a->section + v->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(a->section + v->out_list_off);
    uint32_t from = SM_GPU_LDG(&out_index[state]), to = SM_GPU_LDG(&out_index[state + 1]);
    for (uint32_t o = from; o < to; o++) {
        uint32_t id = SM_GPU_LDG(&out_list[o]);
        uint32_t len = SM_GPU_LDG(&a->lengths[id >> 1]);
        if (len > pos || pos - len >= c1) continue;
        sm_gpu_output(a, pos, id);
    }
}

#endif /* SM_AUTOMATON_GPU_H */
