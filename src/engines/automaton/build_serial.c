/* Serial builder: the classic construction. Keys go into a dense trie
 * (nodes numbered in insertion order); a breadth-first queue then renumbers
 * the nodes, computes failure links, completes every row from the failure
 * state's row and merges output sets. */
#include <stdlib.h>

#include "engines/automaton/ac_private.h"

static int compare_u64(const void *pa, const void *pb) {
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* First index in pairs[0..n) whose node (high half) is >= node. */
static size_t lower_bound_node(const uint64_t *pairs, size_t n, uint32_t node) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uint32_t)(pairs[mid] >> 32) < node) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int sm_ac_build_serial(const sm_ac_key *keys, const sm_ac_plan *plan, uint64_t max_bytes,
                       sm_buf *section, sm_error *err) {
    const uint32_t C = plan->columns;
    const uint32_t N = (uint32_t)plan->states;
    const size_t nkeys = plan->nkeys;
    int rc = SM_OK;
    uint32_t *trie = calloc((size_t)N * C, sizeof *trie);
    uint32_t *own_count = calloc(N, sizeof *own_count);
    uint64_t *pairs = malloc((nkeys ? nkeys : 1) * sizeof *pairs);
    uint32_t *queue = malloc((size_t)N * sizeof *queue);
    uint32_t *fail = malloc((size_t)N * sizeof *fail);
    if (!trie || !own_count || !pairs || !queue || !fail) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory for a trie of %u states", N);
        goto done;
    }

    uint32_t nodes = 1;
    for (size_t i = 0; i < nkeys; i++) {
        uint32_t v = 0;
        for (uint32_t j = 0; j < keys[i].len; j++) {
            uint32_t *slot = &trie[(size_t)v * C + plan->key_class[keys[i].seq[j]]];
            if (!*slot) {
                if (nodes == N) { /* cannot happen: the plan counted these keys */
                    rc = sm_set_error(err, SM_ERR_INVALID, "automaton: keys changed during the build");
                    goto done;
                }
                *slot = nodes++;
            }
            v = *slot;
        }
        pairs[i] = (uint64_t)v << 32 | keys[i].output;
    }
    /* Own outputs of a node: its keys' ids, ascending, without repeats. */
    qsort(pairs, nkeys, sizeof *pairs, compare_u64);
    size_t npairs = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (npairs && pairs[npairs - 1] == pairs[i]) continue;
        pairs[npairs++] = pairs[i];
        own_count[pairs[i] >> 32]++;
    }

    size_t base;
    rc = sm_ac_begin_section(plan, section, &base, err);
    if (rc != SM_OK) goto done;
    sm_ac_layout layout = sm_ac_layout_for(N, C, 0);
    uint32_t *delta = (uint32_t *)(section->data + base + layout.delta_off);
    uint32_t *count = (uint32_t *)(section->data + base + layout.out_index_off);

    /* Breadth-first pass. queue[s] is the trie node that became state s;
       count[s] temporarily holds the size of s's output set. */
    uint32_t head = 0, tail = 1;
    queue[0] = 0;
    fail[0] = 0;
    count[0] = 0;
    while (head < tail) {
        uint32_t s = head++;
        const uint32_t *children = &trie[(size_t)queue[s] * C];
        uint32_t *row = &delta[(size_t)s * C];
        const uint32_t *fail_row = s ? &delta[(size_t)fail[s] * C] : NULL;
        for (uint32_t c = 0; c < C; c++) {
            uint32_t via_fail = fail_row ? fail_row[c] : 0;
            if (!children[c]) {
                row[c] = via_fail;
                continue;
            }
            uint32_t child = tail++;
            queue[child] = children[c];
            fail[child] = (via_fail & SM_AC_TARGET_MASK) / C;
            count[child] = own_count[children[c]] + ((via_fail & SM_AC_OUT_FLAG) ? count[fail[child]] : 0);
            row[c] = child * C | (count[child] ? SM_AC_OUT_FLAG : 0);
        }
    }

    uint64_t total = 0;
    for (uint32_t s = 0; s < N; s++) total += count[s];
    rc = sm_ac_finish_section(plan, total, max_bytes, section, base, err);
    if (rc != SM_OK) goto done;
    uint32_t *out_index = (uint32_t *)(section->data + base + layout.out_index_off);
    uint32_t *out_list = (uint32_t *)(section->data + base + layout.out_list_off);
    uint32_t at = 0;
    for (uint32_t s = 0; s < N; s++) {
        uint32_t n = out_index[s];
        out_index[s] = at;
        at += n;
    }
    out_index[N] = at;
    /* A state's list: its own ids, then its failure state's list, which lies
       earlier in breadth-first order and is therefore already complete. */
    for (uint32_t s = 1; s < N; s++) {
        uint32_t p = out_index[s];
        if (p == out_index[s + 1]) continue;
        uint32_t node = queue[s];
        if (own_count[node]) {
            size_t i = lower_bound_node(pairs, npairs, node);
            for (uint32_t k = 0; k < own_count[node]; k++) out_list[p++] = (uint32_t)pairs[i + k];
        }
        uint32_t f = fail[s];
        for (uint32_t i = out_index[f]; i < out_index[f + 1]; i++) out_list[p++] = out_list[i];
    }

done:
    free(trie);
    free(own_count);
    free(pairs);
    free(queue);
    free(fail);
    return rc;
}
