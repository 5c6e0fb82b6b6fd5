/* Automaton build entry point: the alphabet mapping, the key order and the
 * exact state count shared by both builders, limit checks and the section
 * skeleton. */
#include <stdio.h>
#include <stdlib.h>

#include "engines/automaton/ac_private.h"


static int compare_keys(const void *pa, const void *pb) {
    const sm_ac_key *a = pa, *b = pb;
    uint32_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->seq, b->seq, n);
    if (c) return c;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    if (a->output != b->output) return a->output < b->output ? -1 : 1;
    return 0;
}

static uint32_t common_prefix(const sm_ac_key *a, const sm_ac_key *b) {
    uint32_t n = a->len < b->len ? a->len : b->len, i = 0;
    while (i < n && a->seq[i] == b->seq[i]) i++;
    return i;
}

static int make_plan(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256],
                     sm_ac_plan *plan, sm_error *err) {
    memset(plan, 0, sizeof *plan);
    if (nkeys >= (1u << 31))
        return sm_set_error(err, SM_ERR_LIMIT, "automaton: too many keys (%zu)", nkeys);
    uint8_t used[256] = {0};
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len == 0 || !keys[i].seq)
            return sm_set_error(err, SM_ERR_INVALID, "automaton: key %zu is empty", i);
        for (uint32_t j = 0; j < keys[i].len; j++) used[keys[i].seq[j]] = 1;
    }
    /* Classes follow byte order, so comparing keys bytewise orders them by
       class sequence, which is what breadth-first numbering needs. */
    uint32_t columns = 1;
    for (int b = 0; b < 256; b++)
        if (used[b]) plan->key_class[b] = (uint16_t)columns++;
    plan->columns = columns;
    for (int b = 0; b < 256; b++) plan->class_of[b] = plan->key_class[fold[b]];

    plan->nkeys = nkeys;
    plan->states = 1;
    if (nkeys == 0) return SM_OK;
    plan->sorted = malloc(nkeys * sizeof *plan->sorted);
    plan->lcp = malloc(nkeys * sizeof *plan->lcp);
    if (!plan->sorted || !plan->lcp) return sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory sorting keys");
    memcpy(plan->sorted, keys, nkeys * sizeof *keys);
    qsort(plan->sorted, nkeys, sizeof *plan->sorted, compare_keys);
    /* Every distinct non-empty key prefix is one trie node: key i adds those
       longer than its common prefix with key i - 1. */
    uint64_t states = 1;
    uint32_t max_depth = 0;
    for (size_t i = 0; i < nkeys; i++) {
        const sm_ac_key *k = &plan->sorted[i];
        plan->lcp[i] = i ? common_prefix(k, &plan->sorted[i - 1]) : 0;
        states += k->len - plan->lcp[i];
        if (k->len > max_depth) max_depth = k->len;
    }
    plan->states = states;
    plan->max_depth = max_depth;
    return SM_OK;
}

static int check_limits(const sm_ac_plan *plan, uint64_t out_total, uint64_t max_bytes, sm_error *err) {
    uint64_t entries = plan->states * plan->columns;
    if (entries >= SM_AC_MAX_ENTRIES)
        return sm_set_error(err, SM_ERR_LIMIT,
                          "automaton: %llu states x %u columns = %llu table entries, over the limit of 2^31",
                          (unsigned long long)plan->states, plan->columns, (unsigned long long)entries);
    if (out_total > UINT32_MAX)
        return sm_set_error(err, SM_ERR_LIMIT, "automaton: %llu output entries, over the limit of 2^32 - 1",
                          (unsigned long long)out_total);
    uint64_t need = sm_ac_layout_for(plan->states, plan->columns, out_total).size;
    if (max_bytes && need > max_bytes)
        return sm_set_error(err, SM_ERR_LIMIT, "automaton: needs %llu bytes (%llu states x %u columns), limit is %llu",
                          (unsigned long long)need, (unsigned long long)plan->states, plan->columns,
                          (unsigned long long)max_bytes);
    return SM_OK;
}

int sm_ac_begin_section(const sm_ac_plan *plan, sm_buf *section, size_t *base, sm_error *err) {
    sm_ac_layout l = sm_ac_layout_for(plan->states, plan->columns, 0);
    if (l.out_list_off > SIZE_MAX || sm_buf_reserve(section, (size_t)l.out_list_off) != SM_OK)
        return sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory for %llu bytes",
                          (unsigned long long)l.out_list_off);
    *base = section->len;
    uint8_t *s = section->data + *base;
    /* Zero everything but the transition table, which the builders fill
       entirely: padding must be deterministic for identical bytes. */
    memset(s, 0, (size_t)l.delta_off);
    uint64_t delta_end = l.delta_off + plan->states * plan->columns * 4u;
    memset(s + delta_end, 0, (size_t)(l.out_list_off - delta_end));
    sm_ac_header h;
    memset(&h, 0, sizeof h);
    h.columns = plan->columns;
    h.states = (uint32_t)plan->states;
    h.max_depth = plan->max_depth;
    h.delta_off = l.delta_off;
    h.out_index_off = l.out_index_off;
    h.out_list_off = l.out_list_off;
    memcpy(h.class_of, plan->class_of, sizeof h.class_of);
    memcpy(s, &h, sizeof h);
    section->len = *base + (size_t)l.out_list_off;
    return SM_OK;
}

int sm_ac_finish_section(const sm_ac_plan *plan, uint64_t out_total, uint64_t max_bytes,
                         sm_buf *section, size_t base, sm_error *err) {
    int rc = check_limits(plan, out_total, max_bytes, err);
    if (rc != SM_OK) return rc;
    sm_ac_layout l = sm_ac_layout_for(plan->states, plan->columns, out_total);
    size_t extra = (size_t)(l.size - l.out_list_off);
    if (sm_buf_reserve(section, extra) != SM_OK)
        return sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory for %llu bytes",
                          (unsigned long long)l.size);
    memset(section->data + section->len, 0, extra);
    section->len += extra;
    memcpy(section->data + base + offsetof(sm_ac_header, out_total), &out_total, sizeof out_total);
    return SM_OK;
}

/* threads: 0 serial, N level-synchronous on N threads; gpu >= 0: on that GPU. */
static int build_with(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], unsigned threads, int gpu,
                      uint64_t max_bytes, sm_buf *section, double ms[3], sm_error *err) {
    if ((!keys && nkeys) || !fold || !section)
        return sm_set_error(err, SM_ERR_INVALID, "automaton: invalid arguments");
    /* The section starts at the buffer's current end; its tables are written
       in place through uint32 pointers. */
    if (section->len % 8)
        return sm_set_error(err, SM_ERR_INVALID, "automaton: section start %zu is not 8-byte aligned", section->len);
    size_t start_len = section->len;
    sm_ac_plan plan;
    int rc = make_plan(keys, nkeys, fold, &plan, err);
    if (rc == SM_OK) rc = check_limits(&plan, 0, max_bytes, err);
    if (rc == SM_OK) {
        if (gpu >= 0)
            rc = sm_ac_build_on_gpu(&plan, gpu, max_bytes, section, ms, err);
        else if (threads == 0)
            rc = sm_ac_build_serial(keys, &plan, max_bytes, section, err);
        else
            rc = sm_ac_build_levels(&plan, threads, max_bytes, section, err);
    }
    free(plan.sorted);
    free(plan.lcp);
    if (rc != SM_OK) section->len = start_len;
    return rc;
}

int sm_ac_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], unsigned threads,
                uint64_t max_bytes, sm_buf *section, sm_error *err) {
    return build_with(keys, nkeys, fold, threads, -1, max_bytes, section, NULL, err);
}

int sm_ac_build_gpu(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], int device, uint64_t max_bytes,
                    sm_buf *section, double ms[3], sm_error *err) {
    if (device < 0) return sm_set_error(err, SM_ERR_INVALID, "automaton: no GPU %d", device);
    return build_with(keys, nkeys, fold, 0, device, max_bytes, section, ms, err);
}
