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
} sm_gpu_automaton;

/* A flagged transition into state at batch offset pos (just past the byte):
   the state (count mode: its visit counter), or past c1 the outputs that
   start before c1. */
SM_GPU_FN void sm_ac_gpu_report(const sm_gpu_scan_args *a, const sm_gpu_automaton *v, uint32_t state, uint32_t pos,
                                uint32_t c1, int count) {
    if (pos <= c1) {
        if (count) {
#ifdef __CUDACC__
            atomicAdd(&a->visits[state], 1u);
#else
            a->visits[state]++;
#endif
        } else {
            sm_gpu_emit(a, pos, state, 0, SM_GPU_HIT_STATE);
        }
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
