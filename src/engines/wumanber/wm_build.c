/* Wu-Manber: choice of parameters and the build of the SHIFT, HASH and
   PREFIX tables. */
#include <stdio.h>
#include <stdlib.h>

#include "engines/wumanber/wm_private.h"

typedef struct {
    const uint8_t *seq;
    uint32_t len, output;
    uint32_t slot, prefix;
} wm_item;

static int compare_items(const void *pa, const void *pb) {
    const wm_item *a = pa, *b = pb;
    if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
    if (a->prefix != b->prefix) return a->prefix < b->prefix ? -1 : 1;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    int c = memcmp(a->seq, b->seq, a->len);
    if (c) return c;
    return a->output < b->output ? -1 : a->output > b->output;
}

/* Sorts items by compare_items: by slot with a counting pass (a million
   keys took most of a second through qsort alone), then each slot's few
   items. Returns 0, or -1 out of memory (items unchanged). */
static int sort_items(wm_item **items, size_t n, uint32_t hash_bits) {
    size_t slots = (size_t)1 << hash_bits;
    size_t *start = calloc(slots + 1, sizeof *start);
    wm_item *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!start || !sorted) {
        free(start);
        free(sorted);
        return -1;
    }
    const wm_item *in = *items;
    for (size_t i = 0; i < n; i++) start[in[i].slot + 1]++;
    for (size_t s = 0; s < slots; s++) start[s + 1] += start[s];
    for (size_t i = 0; i < n; i++) sorted[start[in[i].slot]++] = in[i];
    /* start[s] is now the end of slot s */
    size_t from = 0;
    for (size_t s = 0; s < slots; s++) {
        if (start[s] - from > 1) qsort(sorted + from, start[s] - from, sizeof *sorted, compare_items);
        from = start[s];
    }
    free(start);
    free(*items);
    *items = sorted;
    return 0;
}

/* The block length: the paper's rule B = ceil(log_c(2 M)) for c key symbols
   and M symbols in the keys' m-prefixes (so that a random block is in no
   key's prefix with probability about 1/2), at least 2, at most m. A block
   longer than the table can index directly (2^18 slots: 9 DNA symbols)
   only spreads the same blocks over the same slots by a hash, so B stops
   there, or at 3 (the paper's B) for alphabets of more than 64 symbols. */
static uint32_t choose_block(uint32_t symbols, uint32_t bits, uint64_t prefix_symbols, uint32_t m) {
    uint32_t b = 2;
    if (symbols >= 2) {
        double reach = 1;
        b = 0;
        while (reach < 2.0 * (double)prefix_symbols) {
            reach *= symbols;
            b++;
        }
        if (b < 2) b = 2;
    }
    uint32_t direct_max = SM_WM_AUTO_HASH_BITS / bits;
    if (direct_max < 3) direct_max = 3;
    if (b > direct_max) b = direct_max;
    if (b > SM_WM_MAX_BLOCK) b = SM_WM_MAX_BLOCK;
    if (b * bits > 64) b = 64 / bits;
    if (b > m) b = m;
    return b;
}

int sm_wm_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], const sm_wm_params *params,
                uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!keys || !fold || !section || nkeys == 0) return sm_set_error(err, SM_ERR_INVALID, "Wu-Manber: invalid arguments");
    if (section->len % 8)
        return sm_set_error(err, SM_ERR_INVALID, "Wu-Manber: section start %zu is not 8-byte aligned", section->len);
    if (nkeys > UINT32_MAX) return sm_set_error(err, SM_ERR_LIMIT, "Wu-Manber: too many keys (%zu)", nkeys);
    sm_wm_params p = {0, 0, 0};
    if (params) p = *params;

    /* Symbols, lengths. */
    uint8_t used[256] = {0};
    uint32_t m = UINT32_MAX, longest = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (!keys[i].seq || keys[i].len == 0) return sm_set_error(err, SM_ERR_INVALID, "Wu-Manber: empty key %zu", i);
        if (keys[i].len < m) m = keys[i].len;
        if (keys[i].len > longest) longest = keys[i].len;
        for (uint32_t j = 0; j < keys[i].len; j++) used[keys[i].seq[j]] = 1;
    }
    uint8_t code_of_symbol[256] = {0};
    uint32_t symbols = 0;
    for (int b = 0; b < 256; b++)
        if (used[b]) code_of_symbol[b] = (uint8_t)symbols++;
    uint32_t bits = symbols <= 2 ? 1 : sm_log2_ceil(symbols);

    uint32_t B = p.block ? p.block : choose_block(symbols, bits, (uint64_t)nkeys * m, m);
    uint32_t Bp = p.prefix ? p.prefix : (m < SM_WM_MAX_PREFIX ? m : SM_WM_MAX_PREFIX);
    if (B < 1 || B > SM_WM_MAX_BLOCK || B > m || B * bits > 64)
        return sm_set_error(err, SM_ERR_INVALID, "Wu-Manber: block length %u (shortest key %u, %u bits per symbol)", B, m,
                       bits);
    if (Bp < 1 || Bp > SM_WM_MAX_PREFIX || Bp > m)
        return sm_set_error(err, SM_ERR_INVALID, "Wu-Manber: prefix length %u (shortest key %u)", Bp, m);
    /* Direct indexing when the codes of a block fit the table; else a
       multiplicative hash into a table of about 8 slots per prefix block,
       at most 2^18 (256 KiB of shifts). */
    uint32_t hash_bits = p.hash_bits, direct = 0;
    if (!hash_bits) {
        if (B * bits <= SM_WM_AUTO_HASH_BITS) {
            hash_bits = B * bits;
        } else {
            uint64_t blocks = (uint64_t)nkeys * (m - B + 1);
            hash_bits = sm_log2_ceil(blocks * 8);
            if (hash_bits < 10) hash_bits = 10;
            if (hash_bits > SM_WM_AUTO_HASH_BITS) hash_bits = SM_WM_AUTO_HASH_BITS;
        }
    }
    if (hash_bits < 1 || hash_bits > SM_WM_MAX_HASH_BITS)
        return sm_set_error(err, SM_ERR_INVALID, "Wu-Manber: %u hash bits (1..%u)", hash_bits, SM_WM_MAX_HASH_BITS);
    direct = B * bits <= hash_bits;
    uint32_t default_shift = m - B + 1 < SM_WM_MAX_SHIFT ? m - B + 1 : SM_WM_MAX_SHIFT;

    /* Items: slot of the block ending the m-prefix, PREFIX; sorted, equal
       (key, output) pairs once. */
    wm_item *items = malloc(nkeys * sizeof *items);
    if (!items) return sm_set_error(err, SM_ERR_NOMEM, "Wu-Manber: out of memory for %zu keys", nkeys);
    for (size_t i = 0; i < nkeys; i++) {
        const uint8_t *s = keys[i].seq;
        uint64_t packed = 0;
        for (uint32_t j = m - B; j < m; j++) packed = packed << bits | code_of_symbol[s[j]];
        items[i].seq = s;
        items[i].len = keys[i].len;
        items[i].output = keys[i].output;
        items[i].slot = sm_wm_slot(packed, hash_bits, direct);
        uint32_t pre = 0;
        for (uint32_t j = 0; j < Bp; j++) pre |= (uint32_t)s[j] << (8 * j);
        items[i].prefix = pre;
    }
    if (sort_items(&items, nkeys, hash_bits) != 0) {
        free(items);
        return sm_set_error(err, SM_ERR_NOMEM, "Wu-Manber: out of memory for %zu keys", nkeys);
    }
    size_t n = 0;
    uint64_t key_bytes = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (n && compare_items(&items[n - 1], &items[i]) == 0) continue;
        int same_key = n && items[n - 1].len == items[i].len && items[n - 1].slot == items[i].slot &&
                       memcmp(items[n - 1].seq, items[i].seq, items[i].len) == 0;
        if (!same_key) key_bytes += items[i].len;
        items[n++] = items[i];
    }
    if (key_bytes > UINT32_MAX) {
        free(items);
        return sm_set_error(err, SM_ERR_LIMIT, "Wu-Manber: keys of %llu bytes (at most 2^32 - 1)",
                       (unsigned long long)key_bytes);
    }

    /* A few keys, none shorter than 3, not all nucleotides: the scan finds
       the windows worth checking with a SIMD prefilter on their first bytes
       instead of the SHIFT table, whose shifts such short keys keep small.
       Over DNA text three bytes hardly filter, hence no prefilter for keys
       of A, C, G, T only. */
    int nucleotides = 1;
    for (int b = 0; b < 256; b++)
        if (used[b] && b != 'A' && b != 'C' && b != 'G' && b != 'T') nucleotides = 0;
    int prefilter = n <= SM_WM_PREFILTER_BUILD_KEYS && m >= 3 && !nucleotides;
    sm_wm_layout l = sm_wm_layout_for(hash_bits, n, key_bytes, prefilter);
    if (max_bytes && l.size > max_bytes) {
        free(items);
        return sm_set_error(err, SM_ERR_LIMIT, "Wu-Manber: needs %llu bytes (%zu keys), limit is %llu",
                       (unsigned long long)l.size, n, (unsigned long long)max_bytes);
    }
    if (l.size > SIZE_MAX || sm_buf_reserve(section, (size_t)l.size) != SM_OK) {
        free(items);
        return sm_set_error(err, SM_ERR_NOMEM, "Wu-Manber: out of memory for %llu bytes", (unsigned long long)l.size);
    }
    uint8_t *s = section->data + section->len;
    memset(s, 0, (size_t)l.size);

    sm_wm_header h;
    memset(&h, 0, sizeof h);
    h.magic = SM_WM_MAGIC;
    h.block = B;
    h.prefix = Bp;
    h.shortest = m;
    h.longest = longest;
    h.bits = bits;
    h.hash_bits = hash_bits;
    h.direct = direct;
    h.default_shift = default_shift;
    h.symbols = symbols;
    h.nkeys = n;
    h.key_bytes = key_bytes;
    h.shift_off = l.shift_off;
    h.bucket_off = l.bucket_off;
    h.entry_off = l.entry_off;
    h.keys_off = l.keys_off;
    h.prefilter_off = l.prefilter_off;
    h.prefilter_bytes = prefilter ? 3 : 0;
    for (int b = 0; b < 256; b++) {
        h.fold[b] = fold[b];
        h.code[b] = code_of_symbol[fold[b]];
    }
    if (n == 1) h.single = (uint8_t)sm_wm_single_fields(items[0].seq, items[0].len, h.fold, h.anchor, h.anchor_bytes);
    memcpy(s, &h, sizeof h);

    uint64_t slots = 1ull << hash_bits;
    uint8_t *shift = s + l.shift_off;
    uint32_t *bucket = (uint32_t *)(s + l.bucket_off);
    sm_wm_entry *entry = (sm_wm_entry *)(s + l.entry_off);
    uint8_t *kb = s + l.keys_off;
    memset(shift, (int)default_shift, (size_t)slots);
    /* SHIFT: for the block ending at q (1-based, B <= q <= m) of each
       m-prefix, m - q. */
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k = items[i].seq;
        uint64_t packed = 0, mask = B * bits >= 64 ? ~0ull : (1ull << (B * bits)) - 1;
        for (uint32_t q = 1; q <= m; q++) {
            packed = (packed << bits | code_of_symbol[k[q - 1]]) & mask;
            if (q < B) continue;
            uint32_t d = m - q, slot = sm_wm_slot(packed, hash_bits, direct);
            if (d < shift[slot]) shift[slot] = (uint8_t)d;
        }
    }
    /* HASH (buckets) and PREFIX, with each distinct key's bytes once. */
    size_t next = 0;
    uint64_t off = 0;
    for (uint64_t slot = 0; slot <= slots; slot++) {
        while (next < n && items[next].slot < slot) next++;
        bucket[slot] = (uint32_t)next;
    }
    for (size_t i = 0; i < n; i++) {
        int same_key = i && items[i - 1].len == items[i].len && items[i - 1].slot == items[i].slot &&
                       memcmp(items[i - 1].seq, items[i].seq, items[i].len) == 0;
        if (same_key) {
            entry[i].key_off = entry[i - 1].key_off;
        } else {
            entry[i].key_off = (uint32_t)off;
            memcpy(kb + off, items[i].seq, items[i].len);
            off += items[i].len;
        }
        entry[i].prefix = items[i].prefix;
        entry[i].len = items[i].len;
        entry[i].output = items[i].output;
    }
    /* Prefilter: the entries in key order, cut into 8 buckets of
       neighbours (keys sharing first bytes share a bucket, which keeps the
       nibble masks tight); every text byte that folds to a key's byte j
       sets its bucket's bit in both nibble masks of j. */
    if (prefilter) {
        uint8_t *lo = s + l.prefilter_off, *hi = lo + 48;
        uint8_t *start = lo + SM_WM_PREFILTER_START, *member = lo + SM_WM_PREFILTER_MEMBER;
        uint8_t order[SM_WM_PREFILTER_MAX_KEYS];
        for (size_t i = 0; i < n; i++) order[i] = (uint8_t)i;
        for (size_t i = 1; i < n; i++) /* insertion sort: at most 32 keys */
            for (size_t j = i; j > 0; j--) {
                const wm_item *a = &items[order[j - 1]], *c = &items[order[j]];
                uint32_t len = a->len < c->len ? a->len : c->len;
                int cmp = memcmp(a->seq, c->seq, len);
                if (cmp < 0 || (cmp == 0 && a->len <= c->len)) break;
                uint8_t t = order[j - 1];
                order[j - 1] = order[j];
                order[j] = t;
            }
        for (uint32_t bk = 0; bk <= 8; bk++) start[bk] = (uint8_t)((bk * n + 7) / 8);
        for (uint32_t bk = 0; bk < 8; bk++)
            for (uint32_t r = start[bk]; r < start[bk + 1]; r++) {
                const uint8_t *k = items[order[r]].seq;
                member[r] = order[r];
                for (uint32_t j = 0; j < h.prefilter_bytes; j++)
                    for (int b = 0; b < 256; b++)
                        if (fold[b] == k[j]) {
                            lo[16 * j + (b & 15)] |= (uint8_t)(1u << bk);
                            hi[16 * j + (b >> 4)] |= (uint8_t)(1u << bk);
                        }
            }
    }
    free(items);
    section->len += (size_t)l.size;
    return SM_OK;
}

size_t sm_wm_state_words(const uint8_t *section) {
    const sm_wm_header *h = (const sm_wm_header *)section;
    /* Word 0: bytes of history; then room for the history and as many bytes
       of the next piece. */
    return 1 + ((uint64_t)2 * (h->longest - 1) + 7) / 8;
}

void sm_wm_state_reset(const uint8_t *section, uint64_t *state) {
    (void)section;
    state[0] = 0;
}

double sm_wm_mean_shift(const uint8_t *section) {
    const sm_wm_header *h = (const sm_wm_header *)section;
    const uint8_t *shift = section + h->shift_off;
    uint64_t slots = 1ull << h->hash_bits, sum = 0;
    for (uint64_t s = 0; s < slots; s++) sum += shift[s];
    return (double)sum / (double)slots;
}

void sm_wm_describe(const uint8_t *section, uint32_t *block, uint32_t *prefix, uint32_t *hash_bits,
                    uint32_t *shortest) {
    const sm_wm_header *h = (const sm_wm_header *)section;
    if (block) *block = h->block;
    if (prefix) *prefix = h->prefix;
    if (hash_bits) *hash_bits = h->hash_bits;
    if (shortest) *shortest = h->shortest;
}

int sm_wm_has_prefilter(const uint8_t *section) { return ((const sm_wm_header *)section)->prefilter_off != 0; }
