/* Wu-Manber: checks on a section read from outside. */
#include <stdarg.h>
#include <stdio.h>

#include <string.h>

#include "engines/wumanber/wm_private.h"

static int bad(sm_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int bad(sm_error *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(err->message, sizeof err->message, "Wu-Manber section: ");
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
        err->code = SM_ERR_FORMAT;
    }
    return SM_ERR_FORMAT;
}


int sm_wm_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
    if (!section || size < sizeof(sm_wm_header)) return bad(err, "truncated (%zu bytes)", size);
    if ((uintptr_t)section % 8) {
        if (err) {
            snprintf(err->message, sizeof err->message, "Wu-Manber section is not 8-byte aligned in memory");
            err->code = SM_ERR_INVALID;
        }
        return SM_ERR_INVALID;
    }
    sm_wm_header h;
    memcpy(&h, section, sizeof h);
    if (h.magic != SM_WM_MAGIC) return bad(err, "bad magic");
    if (h.shortest < 1 || h.longest < h.shortest || h.longest > UINT32_MAX / 2)
        return bad(err, "key lengths %u..%u", h.shortest, h.longest);
    if (h.bits < 1 || h.bits > 8 || h.symbols < 1 || h.symbols > 256 || (h.symbols > 1 && (1u << h.bits) < h.symbols))
        return bad(err, "%u symbols in %u bits", h.symbols, h.bits);
    if (h.block < 1 || h.block > SM_WM_MAX_BLOCK || h.block > h.shortest || h.block * h.bits > 64)
        return bad(err, "block length %u", h.block);
    if (h.prefix < 1 || h.prefix > SM_WM_MAX_PREFIX || h.prefix > h.shortest)
        return bad(err, "prefix length %u", h.prefix);
    if (h.hash_bits < 1 || h.hash_bits > SM_WM_MAX_HASH_BITS || h.direct != (h.block * h.bits <= h.hash_bits))
        return bad(err, "%u hash bits", h.hash_bits);
    uint32_t want_shift = h.shortest - h.block + 1;
    if (want_shift > SM_WM_MAX_SHIFT) want_shift = SM_WM_MAX_SHIFT;
    if (h.default_shift != want_shift) return bad(err, "default shift %u", h.default_shift);
    for (int b = 0; b < 256; b++)
        if (h.code[b] >= h.symbols) return bad(err, "byte %d has code %u of %u", b, h.code[b], h.symbols);
    if (h.nkeys < 1 || h.nkeys > UINT32_MAX || h.key_bytes > UINT32_MAX) return bad(err, "bad key count or size");
    uint64_t slots = 1ull << h.hash_bits;
    int prefilter = h.prefilter_off != 0;
    if (prefilter && (h.prefilter_bytes < 1 || h.prefilter_bytes > 3 || h.prefilter_bytes > h.shortest ||
                      h.nkeys > SM_WM_PREFILTER_MAX_KEYS))
        return bad(err, "prefilter of %u bytes for %llu keys", h.prefilter_bytes, (unsigned long long)h.nkeys);
    if (!prefilter && h.prefilter_bytes != 0) return bad(err, "prefilter bytes without a prefilter");
    sm_wm_layout l = sm_wm_layout_for(h.hash_bits, h.nkeys, h.key_bytes, prefilter);
    if (h.shift_off != l.shift_off || h.bucket_off != l.bucket_off || h.entry_off != l.entry_off ||
        h.keys_off != l.keys_off || h.prefilter_off != l.prefilter_off || !sm_fits(h.keys_off, h.key_bytes, size) ||
        size < l.size)
        return bad(err, "tables out of bounds");

    const uint8_t *shift = section + h.shift_off;
    const uint32_t *bucket = (const uint32_t *)(section + h.bucket_off);
    const sm_wm_entry *entry = (const sm_wm_entry *)(section + h.entry_off);
    const uint8_t *keys = section + h.keys_off;
    for (uint64_t s = 0; s < slots; s++)
        if (shift[s] > h.default_shift) return bad(err, "shift %u over %u", shift[s], h.default_shift);
    if (bucket[0] != 0 || bucket[slots] != h.nkeys) return bad(err, "buckets do not span the keys");
    uint32_t min_len = UINT32_MAX, max_len = 0;
    for (uint64_t s = 0; s < slots; s++) {
        if (bucket[s] > bucket[s + 1]) return bad(err, "bucket %llu out of order", (unsigned long long)s);
        for (uint32_t e = bucket[s]; e < bucket[s + 1]; e++) {
            const sm_wm_entry *x = &entry[e];
            if (x->len < h.shortest || x->len > h.longest || !sm_fits(x->key_off, x->len, h.key_bytes))
                return bad(err, "key %u out of bounds", e);
            if (x->len < min_len) min_len = x->len;
            if (x->len > max_len) max_len = x->len;
            if (x->output >= n_outputs) return bad(err, "output id %u out of range (%u outputs)", x->output, n_outputs);
            const uint8_t *k = keys + x->key_off;
            uint32_t pre = 0;
            for (uint32_t j = 0; j < h.prefix; j++) pre |= (uint32_t)k[j] << (8 * j);
            /* A key must sit in the bucket of its block, which must not be
               skipped, and carry its own prefix: else hits would be lost. */
            uint64_t packed = 0;
            for (uint32_t j = h.shortest - h.block; j < h.shortest; j++) packed = packed << h.bits | h.code[k[j]];
            if (sm_wm_slot(packed, h.hash_bits, h.direct) != s || shift[s] != 0 || pre != x->prefix)
                return bad(err, "key %u is not where a scan looks for it", e);
        }
    }
    /* The prefilter's buckets hold every key, and every text byte that
       folds to a key's first bytes passes its bucket: else the scan would
       skip the key. */
    if (prefilter) {
        const uint8_t *pf = section + h.prefilter_off;
        const uint8_t *start = pf + SM_WM_PREFILTER_START, *member = pf + SM_WM_PREFILTER_MEMBER;
        uint8_t seen[SM_WM_PREFILTER_MAX_KEYS] = {0};
        if (start[0] != 0 || start[8] != h.nkeys) return bad(err, "prefilter buckets do not span the keys");
        for (uint32_t bk = 0; bk < 8; bk++) /* all before any member is read */
            if (start[bk] > start[bk + 1]) return bad(err, "prefilter bucket %u out of order", bk);
        for (uint32_t bk = 0; bk < 8; bk++) {
            for (uint32_t r = start[bk]; r < start[bk + 1]; r++) {
                if (member[r] >= h.nkeys) return bad(err, "prefilter member %u out of range", member[r]);
                seen[member[r]] = 1;
                const uint8_t *k = keys + entry[member[r]].key_off;
                for (uint32_t j = 0; j < h.prefilter_bytes; j++)
                    for (int b = 0; b < 256; b++)
                        if (h.fold[b] == k[j] && !(sm_wm_prefilter_buckets(pf, j, (uint8_t)b) & (1u << bk)))
                            return bad(err, "key %u does not pass its prefilter bucket", member[r]);
            }
        }
        for (uint64_t e = 0; e < h.nkeys; e++)
            if (!seen[e]) return bad(err, "key %llu is in no prefilter bucket", (unsigned long long)e);
    }
    /* The single-key anchors let the scan pass over every window whose
       anchor bytes are not those: they must be the ones the key gives. */
    if (h.single) {
        uint8_t anchor[3], bytes[3][2];
        if (h.single != 1 || h.nkeys != 1 ||
            !sm_wm_single_fields(keys + entry[0].key_off, entry[0].len, h.fold, anchor, bytes) ||
            memcmp(anchor, h.anchor, sizeof anchor) != 0 || memcmp(bytes, h.anchor_bytes, sizeof bytes) != 0)
            return bad(err, "single-key anchors that are not the key's");
    }
    /* The lengths are the keys' own, so the scan state (longest - 1 bytes
       twice) is bounded by the section's size. */
    if (min_len != h.shortest || max_len != h.longest)
        return bad(err, "key lengths %u..%u, header says %u..%u", min_len, max_len, h.shortest, h.longest);
    return SM_OK;
}
