/* The CPU stand-in for the automaton's GPU builder (build_gpu.h; the GPU
 * part's emulate_build, which tests/emulated runs in the GPU's place): the
 * same per-key code as the kernels, one step after another, with the keys of
 * a step taken last to first (the device takes them in any order), so that
 * a test compares its tables with the CPU builders' byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/automaton/build_gpu.h"

int sm_ac_gpu_build_emulate(const void *input, double ms[3], char *msg) {
    const sm_ac_gpu_keys *k = &((const sm_ac_gpu_build *)input)->keys;
    const sm_ac_gpu_sink *sink = &((const sm_ac_gpu_build *)input)->sink;
    ms[0] = ms[1] = ms[2] = 0;
    const uint32_t n = k->nkeys, C = k->columns, S = k->states;
    const uint32_t groups = (n + SM_AC_GPU_GROUP - 1) / SM_AC_GPU_GROUP;
    const size_t levels = (size_t)k->max_depth + 2;
    sm_ac_gpu_arrays a;
    memset(&a, 0, sizeof a);
    a.groups = groups;
    uint32_t *first = calloc(levels * (groups ? groups : 1), 4);
    a.delta = malloc((size_t)S * C * 4);
    a.count = calloc(S, 4);
    a.dict = calloc(S, 4);
    a.fail = calloc(S, 4);
    a.own_key = calloc(S, 4);
    uint32_t *out_index = malloc(((size_t)S + 1) * 4), *out_list = NULL;
    int rc = -1;
    if (!first || !a.delta || !a.count || !a.dict || !a.fail || !a.own_key || !out_index) {
        snprintf(msg, 256, "out of memory");
        goto done;
    }
    memset(a.delta, 0xff, (size_t)S * C * 4);
    /* numbers: counts per depth and group, then an exclusive sum */
    for (size_t d = 1; d < levels; d++)
        for (uint32_t i = 0; i < n; i++) first[d * groups + i / SM_AC_GPU_GROUP] += (uint32_t)sm_ac_gpu_makes(k, i, (uint32_t)d);
    uint32_t sum = 0;
    for (size_t x = 0; x < levels * groups; x++) {
        uint32_t c = first[x];
        first[x] = sum;
        sum += c;
    }
    if (sum + 1 != S) {
        snprintf(msg, 256, "the keys make %u states, not %u", sum + 1, S);
        goto done;
    }
    a.first = first;
    for (uint32_t d = 1; n && d <= k->max_depth + 1; d++)
        for (uint32_t i = n; i-- > 0;) {
            uint32_t previous = sm_ac_gpu_makes(k, i, d - 1) ? sm_ac_gpu_number(k, &a, i, d - 1) : 0;
            if (d == 1 && i == 0) sm_ac_gpu_fill(k, &a, 0, 0);
            if (previous) sm_ac_gpu_fill(k, &a, previous, a.fail[previous]);
            if (sm_ac_gpu_makes(k, i, d)) {
                uint32_t p = sm_ac_gpu_parent(k, &a, i, d, previous);
                sm_ac_gpu_make(k, &a, i, d, sm_ac_gpu_number(k, &a, i, d), p, a.fail[p]);
            }
        }
    if (n == 0) sm_ac_gpu_fill(k, &a, 0, 0);
    uint64_t total = 0;
    for (uint32_t s = 0; s < S; s++) {
        out_index[s] = (uint32_t)total;
        total += a.count[s];
    }
    if (total > 0xffffffffull) {
        snprintf(msg, 256, "automaton: %llu output entries, over the limit of 2^32 - 1", (unsigned long long)total);
        goto done;
    }
    out_index[S] = (uint32_t)total;
    out_list = malloc(total ? total * 4 : 4);
    if (!out_list) {
        snprintf(msg, 256, "out of memory");
        goto done;
    }
    for (uint32_t s = 0; s < S; s++)
        if (a.count[s]) sm_ac_gpu_outputs(k, &a, s, out_index[s], out_list);
    uint8_t *section = sink->room(sink->ctx, total, msg);
    if (!section) goto done;
    memcpy(section + sink->delta_off, a.delta, (size_t)S * C * 4);
    memcpy(section + sink->out_index_off, out_index, ((size_t)S + 1) * 4);
    if (total) memcpy(section + sink->out_list_off, out_list, total * 4);
    rc = 0;
done:
    free(first);
    free(a.delta);
    free(a.count);
    free(a.dict);
    free(a.fail);
    free(a.own_key);
    free(out_index);
    free(out_list);
    return rc;
}
