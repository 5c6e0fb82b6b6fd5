/* K-mer table: eligibility, build, validation and the small accessors. */
#include <stdio.h>
#include <stdlib.h>

#include "engines/kmer/kmer_private.h"

/* The key symbols in byte order (at most 4); returns their number, or 0 when
   the keys are not eligible. */
unsigned sm_kt_key_symbols(const sm_ac_key *keys, size_t nkeys, uint8_t symbol[4]) {
    if (!keys || nkeys == 0 || !keys[0].seq) return 0;
    uint32_t k = keys[0].len;
    if (k < 1 || k > SM_KT_MAX_K) return 0;
    /* Compares against the symbols seen so far (unused entries repeat the
       first), no table stores: this runs over every key byte. */
    uint8_t s0 = keys[0].seq[0], s1 = s0, s2 = s0, s3 = s0;
    unsigned n = 1;
    const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
    for (size_t i = 0; i < nkeys; i++) {
        const uint8_t *seq = keys[i].seq;
        if (keys[i].len != k || !seq) return 0;
        if (k >= 8) {
            /* 8 bytes at a time (the last word overlapping): a byte of
               x ^ (s * ones) is zero where x holds s. */
            int all = 1;
            for (uint32_t j = 0; all && j < k; j += 8) {
                uint64_t x, nz = ~0ull;
                memcpy(&x, seq + (j + 8 <= k ? j : k - 8), 8);
                const uint8_t sym[4] = {s0, s1, s2, s3};
                for (int q = 0; q < 4; q++) {
                    uint64_t t = x ^ (sym[q] * ones);
                    nz &= ((t & low7) + low7) | t; /* high bit: byte != s */
                }
                all = (nz & ~low7) == 0;
            }
            if (all) continue;
        }
        for (uint32_t j = 0; j < k; j++) {
            uint8_t b = seq[j];
            if (__builtin_expect((b == s0) | (b == s1) | (b == s2) | (b == s3), 1)) continue;
            if (n == 4) return 0;
            if (n == 1) s1 = b;
            else if (n == 2) s2 = b;
            else s3 = b;
            n++;
        }
    }
    uint8_t all[4] = {s0, s1, s2, s3};
    for (unsigned i = 1; i < n; i++) /* byte order */
        for (unsigned j = i; j > 0 && all[j - 1] > all[j]; j--) {
            uint8_t t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
        }
    memcpy(symbol, all, n);
    return n;
}

int sm_kt_eligible(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256]) {
    uint8_t symbol[4];
    return fold != NULL && sm_kt_key_symbols(keys, nkeys, symbol) != 0;
}

static int compare_u64(const void *pa, const void *pb) {
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

int sm_kt_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], uint64_t max_bytes,
                const sm_kt_tuning *tuning, sm_buf *section,
                sm_error *err) {
    if (!keys || !fold || !section) return sm_set_error(err, SM_ERR_INVALID, "k-mer table: invalid arguments");
    if (section->len % 8)
        return sm_set_error(err, SM_ERR_INVALID, "k-mer table: section start %zu is not 8-byte aligned", section->len);
    uint8_t symbol[4] = {0};
    unsigned nsym = sm_kt_key_symbols(keys, nkeys, symbol);
    if (!nsym)
        return sm_set_error(err, SM_ERR_INVALID,
                       "k-mer table: keys must share one length of 1..%d over at most 4 symbols", SM_KT_MAX_K);
    uint32_t k = keys[0].len;
    if (k > SM_KT_DIRECT_MAX_K) return sm_kh_build(keys, nkeys, fold, max_bytes, tuning, section, err);
    uint8_t code_of_symbol[256], code_of[256];
    memset(code_of_symbol, SM_KT_BREAK, sizeof code_of_symbol);
    for (unsigned c = 0; c < nsym; c++) code_of_symbol[symbol[c]] = (uint8_t)c;
    for (int b = 0; b < 256; b++) code_of[b] = code_of_symbol[fold[b]];

    uint64_t *pairs = malloc(nkeys * sizeof *pairs);
    if (!pairs) return sm_set_error(err, SM_ERR_NOMEM, "k-mer table: out of memory for %zu keys", nkeys);
    for (size_t i = 0; i < nkeys; i++) {
        uint64_t code = 0;
        for (uint32_t j = 0; j < k; j++) code = code << 2 | code_of_symbol[keys[i].seq[j]];
        pairs[i] = code << 32 | keys[i].output;
    }
    int rc = sm_kt_build_codes(pairs, nkeys, k, code_of, symbol, nsym, max_bytes, section, err);
    free(pairs);
    return rc;
}

int sm_kt_build_codes(uint64_t *pairs, size_t npairs_in, uint32_t k, const uint8_t code_of[256],
                      const uint8_t *symbol, unsigned nsym, uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!pairs || !code_of || !symbol || !section || k < 1 || k > SM_KT_DIRECT_MAX_K || nsym < 1 || nsym > 4 ||
        npairs_in == 0 || npairs_in > UINT32_MAX)
        return sm_set_error(err, SM_ERR_INVALID, "k-mer table: invalid arguments");
    if (section->len % 8)
        return sm_set_error(err, SM_ERR_INVALID, "k-mer table: section start %zu is not 8-byte aligned", section->len);
    /* Sorted: equal codes form one slot, equal pairs count once. */
    qsort(pairs, npairs_in, sizeof *pairs, compare_u64);
    size_t npairs = 0, slots = 0;
    for (size_t i = 0; i < npairs_in; i++) {
        if (npairs && pairs[npairs - 1] == pairs[i]) continue;
        if (!npairs || pairs[npairs - 1] >> 32 != pairs[i] >> 32) slots++;
        pairs[npairs++] = pairs[i];
    }

    uint64_t words = sm_kt_words_for(k);
    sm_kt_layout l = sm_kt_layout_for(words, slots, npairs);
    if (max_bytes && l.size > max_bytes)
        return sm_set_error(err, SM_ERR_LIMIT, "k-mer table: needs %llu bytes (k = %u, %zu distinct keys), limit is %llu",
                       (unsigned long long)l.size, k, slots, (unsigned long long)max_bytes);
    if (l.size > SIZE_MAX || sm_buf_reserve(section, (size_t)l.size) != SM_OK)
        return sm_set_error(err, SM_ERR_NOMEM, "k-mer table: out of memory for %llu bytes", (unsigned long long)l.size);
    uint8_t *s = section->data + section->len;
    memset(s, 0, (size_t)l.size);

    sm_kt_header h;
    memset(&h, 0, sizeof h);
    h.magic = SM_KT_MAGIC;
    h.k = k;
    h.mask = (uint32_t)((1ull << (2 * k)) - 1);
    h.symbols = nsym;
    h.words = words;
    h.slots = slots;
    h.out_total = npairs;
    h.bits_off = l.bits_off;
    h.rank_off = l.rank_off;
    h.out_index_off = l.out_index_off;
    h.out_list_off = l.out_list_off;
    memcpy(h.symbol, symbol, nsym);
    memcpy(h.code_of, code_of, sizeof h.code_of);
    h.nibble_ok = sm_kt_nibble_map(h.code_of, h.nib_lo, h.nib_hi);
    memcpy(s, &h, sizeof h);

    uint64_t *bits = (uint64_t *)(s + l.bits_off);
    uint32_t *rank = (uint32_t *)(s + l.rank_off);
    uint32_t *out_index = (uint32_t *)(s + l.out_index_off);
    uint32_t *out_list = (uint32_t *)(s + l.out_list_off);
    size_t slot = 0;
    for (size_t i = 0; i < npairs; i++) {
        uint64_t code = pairs[i] >> 32;
        if (i == 0 || pairs[i - 1] >> 32 != code) {
            bits[code >> 6] |= 1ull << (code & 63);
            out_index[slot++] = (uint32_t)i;
        }
        out_list[i] = (uint32_t)pairs[i];
    }
    out_index[slots] = (uint32_t)npairs;
    uint32_t before = 0;
    for (uint64_t w = 0; w < words; w++) {
        rank[w] = before;
        before += (uint32_t)__builtin_popcountll(bits[w]);
    }
    section->len += (size_t)l.size;
    return SM_OK;
}

void sm_kt_view_of(const uint8_t *section, sm_kt_view *v) {
    const sm_kt_header *h = (const sm_kt_header *)section;
    v->bits = (const uint64_t *)(section + h->bits_off);
    v->rank = (const uint32_t *)(section + h->rank_off);
    v->out_index = (const uint32_t *)(section + h->out_index_off);
    v->out_list = (const uint32_t *)(section + h->out_list_off);
    v->k = h->k;
    v->slots = (uint32_t)h->slots;
}

uint32_t sm_kt_direct_k(const uint8_t *section, size_t size) {
    if (!section || size < sizeof(sm_kt_header)) return 0;
    const sm_kt_header *h = (const sm_kt_header *)section;
    return h->magic == SM_KT_MAGIC ? h->k : 0;
}


int sm_kt_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
    const int bad = SM_ERR_FORMAT;
    if (!section || size < sizeof(sm_kt_header))
        return sm_set_error(err, bad, "k-mer section truncated (%zu bytes)", size);
    if ((uintptr_t)section % 8)
        return sm_set_error(err, SM_ERR_INVALID, "k-mer section is not 8-byte aligned in memory");
    uint32_t magic;
    memcpy(&magic, section, sizeof magic);
    if (magic == SM_KH_MAGIC) return sm_kh_validate(section, size, n_outputs, err);
    sm_kt_header h;
    memcpy(&h, section, sizeof h);
    if (h.magic != SM_KT_MAGIC) return sm_set_error(err, bad, "k-mer section: bad magic");
    if (h.k < 1 || h.k > SM_KT_DIRECT_MAX_K)
        return sm_set_error(err, bad, "k-mer section: k = %u (must be 1..%d)", h.k, SM_KT_DIRECT_MAX_K);
    if (h.mask != (uint32_t)((1ull << (2 * h.k)) - 1) || h.words != sm_kt_words_for(h.k))
        return sm_set_error(err, bad, "k-mer section: mask or bitmap size does not match k = %u", h.k);
    if (h.symbols < 1 || h.symbols > 4) return sm_set_error(err, bad, "k-mer section: %u symbols", h.symbols);
    for (int b = 0; b < 256; b++)
        if (h.code_of[b] != SM_KT_BREAK && h.code_of[b] >= h.symbols)
            return sm_set_error(err, bad, "k-mer section: byte %d maps to code %u of %u", b, h.code_of[b], h.symbols);
    uint8_t lo[16], hi[16];
    uint32_t ok = sm_kt_nibble_map(h.code_of, lo, hi);
    if (h.nibble_ok != ok || (ok && (memcmp(lo, h.nib_lo, 16) || memcmp(hi, h.nib_hi, 16))))
        return sm_set_error(err, bad, "k-mer section: shuffle tables do not match the byte map");
    if (h.slots > (1ull << (2 * h.k)) || h.slots < 1 || h.out_total < h.slots || h.out_total > UINT32_MAX)
        return sm_set_error(err, bad, "k-mer section: bad slot or output count");
    if (h.bits_off < sizeof h || h.bits_off % SM_DB_ALIGN || h.rank_off % SM_DB_ALIGN ||
        h.out_index_off % SM_DB_ALIGN || h.out_list_off % SM_DB_ALIGN || !sm_fits(h.bits_off, h.words * 8, size) ||
        h.rank_off < h.bits_off + h.words * 8 || !sm_fits(h.rank_off, h.words * 4, size) ||
        h.out_index_off < h.rank_off + h.words * 4 || !sm_fits(h.out_index_off, (h.slots + 1) * 4, size) ||
        h.out_list_off < h.out_index_off + (h.slots + 1) * 4 || !sm_fits(h.out_list_off, h.out_total * 4, size))
        return sm_set_error(err, bad, "k-mer section: tables out of bounds");
    if (size < sm_kt_layout_for(h.words, h.slots, h.out_total).size)
        return sm_set_error(err, bad, "k-mer section truncated (%zu bytes)", size);

    const uint64_t *bits = (const uint64_t *)(section + h.bits_off);
    const uint32_t *rank = (const uint32_t *)(section + h.rank_off);
    const uint32_t *out_index = (const uint32_t *)(section + h.out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h.out_list_off);
    if (h.k < 3 && (bits[0] >> (1u << (2 * h.k))) != 0)
        return sm_set_error(err, bad, "k-mer section: bitmap bits beyond 4^k set");
    uint64_t before = 0;
    for (uint64_t w = 0; w < h.words; w++) {
        if (rank[w] != before) return sm_set_error(err, bad, "k-mer section: rank table wrong at word %llu", (unsigned long long)w);
        before += (uint64_t)__builtin_popcountll(bits[w]);
    }
    if (before != h.slots) return sm_set_error(err, bad, "k-mer section: %llu keys in the bitmap, %llu slots",
                                          (unsigned long long)before, (unsigned long long)h.slots);
    if (out_index[0] != 0 || out_index[h.slots] != h.out_total)
        return sm_set_error(err, bad, "k-mer section: output index does not span the output list");
    for (uint64_t s = 0; s < h.slots; s++)
        if (out_index[s] >= out_index[s + 1])
            return sm_set_error(err, bad, "k-mer section: slot %llu has no outputs", (unsigned long long)s);
    for (uint64_t i = 0; i < h.out_total; i++)
        if (out_list[i] >= n_outputs)
            return sm_set_error(err, bad, "k-mer section: output id %u out of range (%u outputs)", out_list[i], n_outputs);
    return SM_OK;
}

size_t sm_kt_state_words(const uint8_t *section) {
    (void)section;
    return SM_KT_STATE_WORDS;
}

void sm_kt_state_reset(const uint8_t *section, uint64_t *state) {
    (void)section;
    for (int i = 0; i < SM_KT_STATE_WORDS; i++) state[i] = 0;
}

size_t sm_kt_visit_counters(const uint8_t *section) {
    const sm_kt_header *h = (const sm_kt_header *)section;
    if (h->magic == SM_KH_MAGIC) return sm_kh_slots(section);
    return h->k <= SM_KT_CODE_VISITS_MAX_K ? (size_t)1 << (2 * h->k) : (size_t)h->slots;
}

void sm_kt_fold_visits(const uint8_t *section, uint32_t *visits, uint64_t *counts) {
    if (((const sm_kt_header *)section)->magic == SM_KH_MAGIC) {
        sm_kh_fold_visits(section, visits, counts);
        return;
    }
    const sm_kt_header *h = (const sm_kt_header *)section;
    const uint32_t *out_index = (const uint32_t *)(section + h->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h->out_list_off);
    if (h->k <= SM_KT_CODE_VISITS_MAX_K) {
        /* One counter per code: the keys' codes are the set bits, their
           slots numbered in code order. */
        const uint64_t *bits = (const uint64_t *)(section + h->bits_off);
        uint32_t s = 0;
        for (uint64_t w = 0; w < h->words; w++) {
            for (uint64_t x = bits[w]; x; x &= x - 1, s++) {
                uint64_t code = w * 64 + (uint64_t)__builtin_ctzll(x);
                uint32_t n = visits[code];
                if (!n) continue;
                visits[code] = 0;
                for (uint32_t i = out_index[s]; i < out_index[s + 1]; i++) counts[out_list[i] >> 1] += n;
            }
        }
        return;
    }
    for (uint64_t s = 0; s < h->slots; s++) {
        uint32_t n = visits[s];
        if (!n) continue;
        visits[s] = 0;
        for (uint32_t i = out_index[s]; i < out_index[s + 1]; i++) counts[out_list[i] >> 1] += n;
    }
}
