/* The tables of the automaton's keys read from where they start on the GPU
 * (words_gpu.h), made from the section on the host. */
#include <stdlib.h>

#include "engines/automaton/automaton.h"
#include "engines/automaton/words_gpu.h"

#define MAX_STATES (1u << 20)

typedef struct {
    uint32_t window, state, length, pool_off;
} key_entry;

static int by_window(const void *x, const void *y) {
    const key_entry *a = x, *b = y;
    if (a->window != b->window) return a->window < b->window ? -1 : 1;
    return a->state < b->state ? -1 : a->state > b->state;
}

static uint64_t align16(uint64_t x) { return (x + 15u) & ~(uint64_t)15u; }

size_t sm_acw_build(const uint8_t *section, const sm_db_pattern *patterns, sm_acw_tables *head, void *buf) {
    const sm_ac_header *h = (const sm_ac_header *)section;
    if (!patterns || h->columns > 256 || h->states > MAX_STATES || h->states < 2) return 0;
    const uint32_t states = h->states, columns = h->columns;
    const uint32_t *delta = (const uint32_t *)(section + h->delta_off);
    const uint32_t *out_index = (const uint32_t *)(section + h->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h->out_list_off);
    uint32_t *depth = malloc((size_t)states * sizeof *depth);
    uint32_t *parent = malloc((size_t)states * sizeof *parent);
    uint8_t *symbol = malloc(states);
    key_entry *keys = NULL;
    size_t size = 0;
    if (!depth || !parent || !symbol) goto done;
    /* States are numbered breadth first: the first state whose transition
       reaches a state is its parent (a transition that is not a trie edge
       only reaches a state no deeper than its source, which was reached
       before). */
    for (uint32_t s = 0; s < states; s++) depth[s] = UINT32_MAX;
    depth[0] = 0;
    for (uint32_t s = 0; s < states; s++) {
        if (depth[s] == UINT32_MAX) goto done; /* not an automaton of this builder's shape */
        for (uint32_t c = 1; c < columns; c++) {
            uint32_t t = (delta[(size_t)s * columns + c] & ~SM_AC_OUT_FLAG) / columns;
            if (t == 0 || depth[t] != UINT32_MAX) continue;
            depth[t] = depth[s] + 1;
            parent[t] = s;
            symbol[t] = (uint8_t)c;
        }
    }
    /* A key: a state with outputs of its own depth (listed first). */
    uint32_t nkeys = 0;
    uint64_t pool = 0, nids = 0;
    for (uint32_t s = 1; s < states; s++) {
        uint32_t own = 0;
        for (uint32_t o = out_index[s]; o < out_index[s + 1] && patterns[out_list[o] >> 1].length == depth[s]; o++) own++;
        if (!own) continue;
        if (own > 0xffffu || depth[s] > 0xffffu) goto done; /* the key's lengths and ids fit 16 bits */
        nkeys++;
        pool += depth[s];
        nids += own;
    }
    if (!nkeys || nkeys > SM_ACW_MAX_KEYS || pool > (1u << 26)) goto done;
    keys = malloc((size_t)nkeys * sizeof *keys);
    uint8_t *classes = malloc(pool);
    if (!keys || !classes) {
        free(classes);
        goto done;
    }
    uint32_t n = 0;
    uint64_t at = 0;
    for (uint32_t s = 1; s < states; s++) {
        if (out_index[s] == out_index[s + 1] || patterns[out_list[out_index[s]] >> 1].length != depth[s]) continue;
        key_entry *k = &keys[n++];
        k->state = s;
        k->length = depth[s];
        k->pool_off = (uint32_t)at;
        for (uint32_t t = s, d = depth[s]; d > 0; t = parent[t]) classes[at + --d] = symbol[t];
        k->window = 0;
        for (uint32_t i = 0; i < 4 && i < k->length; i++) k->window |= (uint32_t)classes[at + i] << (8 * i);
        at += depth[s];
    }
    qsort(keys, nkeys, sizeof *keys, by_window);
    /* distinct windows, none with too many keys; how much of a text of
       evenly spread key classes they would pass */
    uint32_t windows = 0, lengths = 0;
    double pass = 0;
    for (uint32_t i = 0, run = 0; i < nkeys; i++) {
        run = i && keys[i].window == keys[i - 1].window ? run + 1 : 1;
        if (run > SM_ACW_BUCKET_KEYS) goto no_pool;
        if (run > 1) continue;
        uint32_t q = keys[i].length < 4 ? keys[i].length : 4;
        windows++;
        lengths |= 1u << (q - 1);
        double p = 1;
        for (uint32_t j = 0; j < q; j++) p /= columns - 1;
        pass += p;
    }
    if (pass > 1.0 / 4) goto no_pool;
    const uint32_t buckets_log2 = sm_log2_ceil(2ull * windows) < 4 ? 4 : sm_log2_ceil(2ull * windows);
    uint32_t filter_log2 = sm_log2_ceil(256ull * windows);
    /* at most 32 KiB: a block keeps room for its per-key counters beside it */
    filter_log2 = filter_log2 < 13 ? 13 : filter_log2 > 18 ? 18 : filter_log2;
    sm_acw_tables t;
    memset(&t, 0, sizeof t);
    t.filter_log2 = filter_log2;
    t.windows = lengths;
    t.buckets_log2 = buckets_log2;
    t.keys = nkeys;
    t.ids = (uint32_t)nids;
    t.filter_off = (uint32_t)align16(sizeof t);
    t.buckets_off = (uint32_t)align16(t.filter_off + ((uint64_t)1 << filter_log2) / 8);
    t.keys_off = (uint32_t)align16(t.buckets_off + ((uint64_t)8 << buckets_log2));
    t.pool_off = (uint32_t)align16(t.keys_off + (uint64_t)nkeys * sizeof(sm_acw_key));
    t.ids_off = (uint32_t)align16(t.pool_off + pool);
    size = (size_t)align16(t.ids_off + nids * 4);
    t.size = (uint32_t)size;
    for (int b = 0; b < 256; b++) t.class_of[b] = (uint8_t)h->class_of[b];
    if (head) *head = t;
    if (buf) {
        uint8_t *base = buf;
        memset(base, 0, size);
        memcpy(base, &t, sizeof t);
        uint32_t *filter = (uint32_t *)(base + t.filter_off);
        sm_acw_bucket *buckets = (sm_acw_bucket *)(base + t.buckets_off);
        sm_acw_key *out = (sm_acw_key *)(base + t.keys_off);
        uint32_t *ids = (uint32_t *)(base + t.ids_off);
        uint32_t id_at = 0;
        for (uint32_t i = 0; i < nkeys; i++) {
            const key_entry *k = &keys[i];
            memcpy(base + t.pool_off + k->pool_off, classes + k->pool_off, k->length);
            out[i].pool_off = k->pool_off;
            out[i].next = 0;
            for (uint32_t j = 4; j < 8 && j < k->length; j++) out[i].next |= (uint32_t)classes[k->pool_off + j] << (8 * (j - 4));
            out[i].length = (uint16_t)k->length;
            out[i].first_id = id_at;
            uint16_t own = 0;
            for (uint32_t o = out_index[k->state];
                 o < out_index[k->state + 1] && patterns[out_list[o] >> 1].length == k->length; o++)
                ids[id_at++] = out_list[o], own++;
            out[i].ids = own;
            if (i && k->window == keys[i - 1].window) continue;
            uint32_t b = sm_acw_filter_bit(k->window, filter_log2);
            filter[b >> 5] |= 1u << (b & 31);
            uint32_t run = 1;
            while (i + run < nkeys && keys[i + run].window == k->window) run++;
            uint32_t slot = sm_acw_bucket_home(k->window, buckets_log2);
            while (buckets[slot].window) slot = (slot + 1) & ((1u << buckets_log2) - 1);
            buckets[slot].window = k->window;
            buckets[slot].info = i << 10 | run;
        }
    }
no_pool:
    free(classes);
done:
    free(depth);
    free(parent);
    free(symbol);
    free(keys);
    return size;
}
