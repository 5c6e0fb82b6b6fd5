/* The automaton's GPU part, host side (engines/gpu_part.h): its view, its
 * description, and the CPU stand-in for its kernel (automaton_cuda.cu). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "engines/automaton/ac_packed.h"
#include "engines/automaton/automaton.h"
#include "engines/automaton/automaton_gpu.h"
#include "engines/automaton/build_gpu.h"
#include "engines/engine.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_automaton), "the automaton's view fits a GPU view");

static int ac_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *v, char *why) {
    (void)db, (void)why;
    const sm_ac_header *h = (const sm_ac_header *)s->bytes;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_AUTOMATON;
    v->results = SM_GPU_RESULTS_HITS;
    v->visits = h->states;
    v->fold_index_off = h->out_index_off;
    v->fold_list_off = h->out_list_off;
    sm_gpu_automaton *a = SM_GPU_VIEW(v, sm_gpu_automaton);
    a->states = h->states;
    a->columns = h->columns;
    a->delta_off = h->delta_off;
    a->out_index_off = h->out_index_off;
    a->out_list_off = h->out_list_off;
    a->class_of_off = offsetof(sm_ac_header, class_of);
    /* a text set's 16-bit table past shared memory lies there packed when
       that fits (automaton_cuda.cu); SEQMATCH_CUDA_AC_PACKED=KIB sets the
       room it may take for benchmarks (0: not packed) */
    uint64_t words = (uint64_t)h->states * h->columns;
    const char *budget_env = getenv("SEQMATCH_CUDA_AC_PACKED");
    uint32_t budget = budget_env && *budget_env ? (uint32_t)strtoul(budget_env, NULL, 10) * 1024u
                                                : SM_AC_GPU_PACKED_BUDGET;
    sm_ac_packed packed;
    if (h->states < 0x8000u && h->columns >= 16 && words * 2 + 2 > SM_GPU_SHARED_MAX && budget &&
        sm_ac_packed_build((const uint32_t *)(s->bytes + h->delta_off), h->states, h->columns, budget, 0,
                           &packed) == 0) {
        a->packed_rows = packed.rows;
        a->packed_bytes = packed.bytes;
    }
    return 0;
}

static void ac_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_automaton *x = SM_GPU_VIEW(v, const sm_gpu_automaton);
    uint64_t words = (uint64_t)x->states * x->columns;
    int narrow = x->states < 0x8000u && words * 2 + 2 <= SM_GPU_SHARED_MAX;
    int wide = words * 4 <= SM_GPU_SHARED_MAX;
    /* as automaton_cuda.cu's launch chooses */
    int split = !narrow && !wide && x->states < 0x8000u && x->columns >= 16;
    char a[32], b[32];
    sm_gpu_size_text(narrow || split ? words * 2 : words * 4, a, sizeof a);
    sm_gpu_size_text(x->packed_bytes, b, sizeof b);
    if (x->packed_rows)
        snprintf(buf, size,
                 "automaton, a thread per chunk; transition table %s (16-bit entries) in shared memory packed to %s: "
                 "%u rows whole, each state one of them with up to %u entries of its own",
                 a, b, x->packed_rows, SM_AC_GPU_PACKED_EXCEPTIONS);
    else if (split)
        snprintf(buf, size,
                 "automaton, a thread per chunk; transition table %s (16-bit entries), its first %u rows in shared "
                 "memory, the rest read through L2",
                 a, SM_AC_GPU_SPLIT_ROWS);
    else
        snprintf(buf, size, "automaton, a thread per chunk; transition table %s (%s entries) %s", a,
                 narrow ? "16-bit" : "32-bit", narrow || wide ? "in shared memory" : "read through L2");
}

/* The packed form's image (the view's packed_rows), which the kernel copies
   into shared memory: the bytes the runtime copies beside the section. 0 on
   writing it: memory ran out. */
static size_t ac_gpu_extra(const sm_section *s, const sm_gpu_view *view, void *buf) {
    const sm_gpu_automaton *a = SM_GPU_VIEW(view, const sm_gpu_automaton);
    if (!a->packed_rows || !buf) return a->packed_bytes;
    const sm_ac_header *h = (const sm_ac_header *)s->bytes;
    sm_ac_packed packed;
    if (sm_ac_packed_build((const uint32_t *)(s->bytes + h->delta_off), a->states, a->columns, a->packed_bytes, 1,
                           &packed) != 0)
        return 0;
    memcpy(buf, packed.image, packed.bytes);
    free(packed.image);
    return packed.bytes;
}

/* The kernel's loop for one part of a chunk, a byte at a time. */
static void ac_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_automaton *v = SM_GPU_VIEW(&a->view, const sm_gpu_automaton);
    const uint32_t *delta = (const uint32_t *)(a->section + v->delta_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    /* the packed form, read as the kernel reads it */
    const uint8_t *packed = v->packed_rows ? a->extra : NULL;
    if (v->packed_rows && !packed) {
        fprintf(stderr, "automaton stand-in: the packed table was not copied beside the section\n");
        abort();
    }
    const uint16_t *whole = (const uint16_t *)packed;
    const sm_ac_gpu_packed_layout lay = sm_ac_gpu_packed_layout_of(v->packed_rows, v->columns, v->states);
    const uint32_t *heads = packed ? (const uint32_t *)(packed + lay.heads_off) : NULL;
    const uint16_t *entries = packed ? (const uint16_t *)(packed + lay.entries_off) : NULL;
    for (uint32_t item = 0; item < a->nchunks * a->parts; item++) {
        sm_gpu_chunk ch = sm_gpu_chunk_part(a->chunks[item / a->parts], item % a->parts, a->parts, a->tail, 0);
        if (ch.c0 >= ch.c1) continue;
        uint32_t at = 0;
        for (uint32_t i = ch.c0; i < ch.end; i++) {
            uint32_t column = class_of[a->text[i]], e;
            if (packed) {
                uint32_t entry = sm_ac_gpu_packed_entry(whole, heads, entries, v->columns, at / v->columns, column);
                e = (entry & 0x7fffu) * v->columns | (entry & 0x8000u ? SM_GPU_DFA_FLAG : 0);
            } else {
                e = delta[at + column];
            }
            at = e & ~SM_GPU_DFA_FLAG;
            if (e & SM_GPU_DFA_FLAG) sm_ac_gpu_report(a, v, at / v->columns, i + 1, ch.c1, a->count_only);
        }
    }
}

const sm_gpu_part sm_ac_gpu_part = {
    .view = ac_gpu_view,
    .describe = ac_gpu_describe,
    .extra = ac_gpu_extra,
    .emulate = ac_gpu_emulate,
    .emulate_build = sm_ac_gpu_build_emulate,
};
