/* The automaton built on a GPU (seed 000: one trie level at a time on a
 * many-core device), byte-identical to the CPU builders.
 *
 * With the keys sorted (ac_private.h's plan), key i makes the trie nodes of
 * depths lcp(i) + 1 .. len(i), where lcp(i) is its common prefix with key
 * i - 1; and breadth-first numbering gives node (i, d) the number
 * 1 + (nodes above depth d) + (keys before i that make a node at depth d).
 * Keys are taken 32 at a time (a warp on the device, a lane per key), so a
 * node's number is 1 + first[d][group] (an exclusive scan of the per-group
 * counts, made once) plus its rank in the group (a ballot on the device).
 *
 * Step d (1 .. max depth + 1) does, for every key at once:
 *   - the fill of the key's node m of depth d - 1: every column of m's row
 *     not taken by a child becomes the same column of fail(m)'s row (zero
 *     at the root), by a compare-and-swap from SM_AC_GPU_EMPTY, so that it
 *     never overwrites a child's entry, written before or after it;
 *   - the making of the key's node n of depth d under its parent p:
 *     fail(n) = delta(fail(p), c), its output count and nearest terminal
 *     suffix as the CPU builders make them, and the child's entry in p's row.
 * Both read only rows of depth d - 2 or less, complete once step d - 1 has
 * ended everywhere, and counts of depth d - 1 or less. So the steps run as
 * one launch each, or in one launch where every group waits only for the
 * rows it reads (build_cuda.cu). The output lists come last, as in
 * build_levels.c.
 *
 * This file holds the per-key code both the kernels and the CPU stand-in
 * (tests/emulated) run, so that the stand-in checks the GPU's logic. */
#ifndef SM_AC_BUILD_GPU_H
#define SM_AC_BUILD_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gpu_part.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SM_AC_GPU_EMPTY 0xFFFFFFFFu  /* a row entry not yet written (never a real entry) */
#define SM_AC_GPU_OUT 0x80000000u    /* an entry whose target has outputs */
#define SM_AC_GPU_MASK 0x7fffffffu
#define SM_AC_GPU_OWN 0x80000000u    /* dict[]: the state ends a key itself */
#define SM_AC_GPU_GROUP 32u          /* keys per group (a warp) */

/* The keys as the device gets them, in the plan's sorted order. */
typedef struct {
    const uint8_t *symbols;    /* every key's bytes, one after another */
    const uint64_t *start;     /* where key i's bytes start */
    const uint32_t *len;
    const uint32_t *lcp;       /* common prefix with key i - 1 (0 for key 0) */
    const uint32_t *up;        /* the key that made key i's node of depth lcp(i) (when lcp(i) > 0) */
    const uint32_t *output;
    uint32_t nkeys, columns, states, max_depth;
    uint16_t key_class[256];   /* key byte -> column */
} sm_ac_gpu_keys;

/* The build's arrays (device memory on the GPU). */
typedef struct {
    const uint32_t *first;     /* [(max_depth + 2) * groups]: nodes before a group's nodes of a depth, root aside */
    uint32_t groups;
    uint32_t *delta;           /* [states * columns] */
    uint32_t *count;           /* [states] output count (the section's out_index before its scan) */
    uint32_t *dict;            /* [states] SM_AC_GPU_OWN | nearest proper suffix that ends a key */
    uint32_t *fail;            /* [states] fail(s) * columns */
    uint32_t *own_key;         /* [states] the first key ending at s (with SM_AC_GPU_OWN) */
} sm_ac_gpu_arrays;

/* Does key i make a node of depth d? */
SM_GPU_FN int sm_ac_gpu_makes(const sm_ac_gpu_keys *k, uint32_t i, uint32_t d) {
    return i < k->nkeys && d >= 1 && k->lcp[i] < d && d <= k->len[i];
}

/* The number of key i's node of depth d, found by counting the group's
   earlier keys (the device uses a ballot instead; the parent of a key's
   first node uses this too). */
SM_GPU_FN uint32_t sm_ac_gpu_number(const sm_ac_gpu_keys *k, const sm_ac_gpu_arrays *a, uint32_t i, uint32_t d) {
    uint32_t g = i / SM_AC_GPU_GROUP, n = 1 + SM_GPU_LDG(&a->first[(size_t)d * a->groups + g]);
    for (uint32_t j = g * SM_AC_GPU_GROUP; j < i; j++) n += (uint32_t)sm_ac_gpu_makes(k, j, d);
    return n;
}

/* The parent of key i's node of depth d: its own node of depth d - 1, or,
   for its first node, the node of an earlier key (the root at depth 1). */
SM_GPU_FN uint32_t sm_ac_gpu_parent(const sm_ac_gpu_keys *k, const sm_ac_gpu_arrays *a, uint32_t i, uint32_t d,
                                    uint32_t own_previous) {
    if (d - 1 > k->lcp[i]) return own_previous;
    if (d == 1) return 0;
    return sm_ac_gpu_number(k, a, k->up[i], d - 1);
}

/* Entries of a row are written by its fill and by its children, in any
   order: the fill only where nothing was written, a child always. Data
   that other warps write is read from L2, past this SM's L1. */
#ifdef __CUDACC__
#define SM_AC_GPU_CAS(p, v) atomicCAS((p), SM_AC_GPU_EMPTY, (v))
#define SM_AC_GPU_PUT(p, v) atomicExch((p), (v))
#define SM_AC_GPU_LOAD(p) __ldcg(p)
#else
#define SM_AC_GPU_CAS(p, v) (*(p) == SM_AC_GPU_EMPTY ? (void)(*(p) = (v)) : (void)0)
#define SM_AC_GPU_PUT(p, v) (void)(*(p) = (v))
#define SM_AC_GPU_LOAD(p) (*(p))
#endif

/* The fill of state m's row (m of depth d - 1 at step d); fail_m is
   fail(m) * columns. The row read eight entries at a time before they are
   written, so that the reads wait on memory once, not once per column. */
SM_GPU_FN void sm_ac_gpu_fill(const sm_ac_gpu_keys *k, const sm_ac_gpu_arrays *a, uint32_t m, uint32_t fail_m) {
    uint32_t *row = &a->delta[(size_t)m * k->columns];
    const uint32_t *from = &a->delta[fail_m];
    for (uint32_t x0 = 0; x0 < k->columns; x0 += 8) {
        uint32_t v[8];
        for (uint32_t j = 0; j < 8; j++) v[j] = m && x0 + j < k->columns ? SM_AC_GPU_LOAD(&from[x0 + j]) : 0u;
        for (uint32_t j = 0; j < 8 && x0 + j < k->columns; j++) SM_AC_GPU_CAS(&row[x0 + j], v[j]);
    }
}

/* Distinct outputs of the keys ending at key i's node of depth len(i):
   key i and the copies of its string after it, sorted by output. */
SM_GPU_FN uint32_t sm_ac_gpu_own_outputs(const sm_ac_gpu_keys *k, uint32_t i) {
    uint32_t n = 1, d = k->len[i];
    for (uint32_t j = i + 1; j < k->nkeys && k->lcp[j] == d && k->len[j] == d; j++)
        n += k->output[j] != k->output[j - 1];
    return n;
}

/* The making of node n, key i's node of depth d, under parent p, whose
   fail(p) * columns is fail_p; returns fail(n) * columns. */
SM_GPU_FN uint32_t sm_ac_gpu_make(const sm_ac_gpu_keys *k, const sm_ac_gpu_arrays *a, uint32_t i, uint32_t d,
                                  uint32_t n, uint32_t p, uint32_t fail_p) {
    const uint32_t C = k->columns;
    uint32_t c = k->key_class[k->symbols[k->start[i] + d - 1]];
    uint32_t via = d == 1 ? 0u : SM_AC_GPU_LOAD(&a->delta[fail_p + c]);
    uint32_t own = k->len[i] == d ? sm_ac_gpu_own_outputs(k, i) : 0;
    uint32_t outputs = own, link = 0;
    if (via & SM_AC_GPU_OUT) {
        uint32_t f = (via & SM_AC_GPU_MASK) / C;
        uint32_t fd = SM_AC_GPU_LOAD(&a->dict[f]);
        outputs += SM_AC_GPU_LOAD(&a->count[f]);
        link = (fd & SM_AC_GPU_OWN) ? f : fd;
    }
    a->fail[n] = via & SM_AC_GPU_MASK;
    a->count[n] = outputs;
    a->dict[n] = link | (own ? SM_AC_GPU_OWN : 0u);
    if (own) a->own_key[n] = i;
    SM_AC_GPU_PUT(&a->delta[(size_t)p * C + c], n * C | (outputs ? SM_AC_GPU_OUT : 0u));
    return via & SM_AC_GPU_MASK;
}

/* The output ids of state s, written from out_list[at]: its own keys' (if
   it ends keys), then those of each terminal suffix, nearest first (the
   order build_levels.c writes). */
SM_GPU_FN void sm_ac_gpu_outputs(const sm_ac_gpu_keys *k, const sm_ac_gpu_arrays *a, uint32_t s, uint32_t at,
                                 uint32_t *out_list) {
    uint32_t t = s, first = 1;
    while (first || t) {
        uint32_t dt = a->dict[t];
        if (!first || (dt & SM_AC_GPU_OWN)) {
            uint32_t i = a->own_key[t], d = k->len[i];
            out_list[at++] = k->output[i];
            for (uint32_t j = i + 1; j < k->nkeys && k->lcp[j] == d && k->len[j] == d; j++)
                if (k->output[j] != k->output[j - 1]) out_list[at++] = k->output[j];
        }
        first = 0;
        t = dt & ~SM_AC_GPU_OWN;
    }
}

/* Where the built tables go: the host's section, written by the GPU side
   once the output lists' size is known (the section may move when it grows
   for them). */
typedef struct {
    void *ctx;
    /* Makes room for total output ids; returns the section's first byte
       (delta at delta_off etc.), or NULL with the reason in msg[256]. */
    uint8_t *(*room)(void *ctx, uint64_t total, char *msg);
    uint64_t delta_off, out_index_off, out_list_off;
} sm_ac_gpu_sink;

/* What the GPU builder gets: sm_cuda_section_build's input for
   SM_SECTION_AUTOMATON (backends/cuda/cuda_device.h). */
typedef struct {
    sm_ac_gpu_keys keys;
    sm_ac_gpu_sink sink;
} sm_ac_gpu_build;

/* The same build on the CPU, step after step (the GPU part's stand-in,
   engines/engine.h: emulate_build), for the tests without a GPU. */
int sm_ac_gpu_build_emulate(const void *input, double ms[3], char *msg);

#ifdef __cplusplus
}
#endif

#endif /* SM_AC_BUILD_GPU_H */
