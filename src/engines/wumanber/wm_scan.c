/* Wu-Manber scan: the window loop (SHIFT, then HASH and PREFIX, then the
   keys), and the join of a piece with the bytes kept from earlier pieces. */
#include "engines/wumanber/wm_private.h"

typedef struct {
    const sm_wm_header *h;
    const uint8_t *code, *fold, *shift, *keys;
    const uint32_t *bucket;
    const sm_wm_entry *entry;
    uint32_t m, bits, hash_bits, prefix;
} wm_view;

#define WM_INLINE static inline __attribute__((always_inline))

/* Checks the keys of one bucket against the window starting at buf[s]:
   PREFIX first, then every byte. Reports keys that end inside buf and
   after end_min; base is the absolute position of buf[0]. */
__attribute__((noinline)) static void check_bucket(const wm_view *v, uint32_t slot, const uint8_t *buf, size_t n,
                                                   size_t s, size_t end_min, uint64_t base, sm_sink *sink) {
    const uint8_t *fold = v->fold;
    uint32_t pre = sm_wm_prefix_of(fold, buf + s, v->prefix);
    uint32_t last_off = UINT32_MAX, last_len = 0;
    int last_ok = 0;
    for (uint32_t e = v->bucket[slot], stop = v->bucket[slot + 1]; e < stop; e++) {
        const sm_wm_entry *x = &v->entry[e];
        if (x->prefix != pre) continue;
        size_t end = s + x->len;
        if (end > n || end <= end_min) continue;
        int ok;
        if (x->key_off == last_off && x->len == last_len) {
            ok = last_ok; /* the same key again, for another output */
        } else {
            const uint8_t *k = v->keys + x->key_off, *t = buf + s;
            ok = 1;
            for (uint32_t j = v->prefix; j < x->len; j++)
                if (fold[t[j]] != k[j]) {
                    ok = 0;
                    break;
                }
            last_off = x->key_off;
            last_len = x->len;
            last_ok = ok;
        }
        if (ok) sm_sink_add(sink, base + s, base + end, x->output >> 1, (int)(x->output & 1), 0);
    }
}

/* Windows starting in [s_lo, s_hi) of buf[0, n): the window ends at i
   (its last byte), the block is buf[i - B + 1 .. i]. B and direct are
   constants in each instance. */
WM_INLINE void scan_range(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, size_t s_hi, size_t end_min,
                          uint64_t base, sm_sink *sink, const uint32_t B, const int direct) {
    const uint32_t m = v->m, bits = v->bits, hash_bits = v->hash_bits;
    const uint8_t *code = v->code, *shift = v->shift;
    if (n < m || s_lo >= s_hi) return;
    size_t i = s_lo + m - 1;
    size_t stop = s_hi > n - m + 1 ? n : s_hi + m - 1; /* windows end before stop */
    while (i < stop) {
        const uint8_t *blk = buf + i + 1 - B;
        uint64_t packed = 0;
        for (uint32_t j = 0; j < B; j++) packed = packed << bits | code[blk[j]];
        uint32_t slot = direct ? (uint32_t)packed : sm_wm_slot(packed, hash_bits, 0);
        uint32_t sh = shift[slot];
        if (__builtin_expect(sh != 0, 1)) {
            i += sh;
            continue;
        }
        check_bucket(v, slot, buf, n, i + 1 - m, end_min, base, sink);
        i++;
    }
}

#define WM_CASE(b)                                                                        \
    case b:                                                                               \
        if (v->h->direct) scan_range(v, buf, n, s_lo, s_hi, end_min, base, sink, b, 1);  \
        else scan_range(v, buf, n, s_lo, s_hi, end_min, base, sink, b, 0);                \
        break;

static void scan_any(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, size_t s_hi, size_t end_min,
                     uint64_t base, sm_sink *sink) {
    switch (v->h->block) {
        WM_CASE(1)
        WM_CASE(2)
        WM_CASE(3)
        WM_CASE(4)
        WM_CASE(5)
        WM_CASE(6)
        WM_CASE(7)
        WM_CASE(8)
        WM_CASE(9)
        WM_CASE(10)
        WM_CASE(11)
        WM_CASE(12)
        WM_CASE(13)
        WM_CASE(14)
        WM_CASE(15)
        WM_CASE(16)
    default: break;
    }
}

void sm_wm_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    if (len == 0) return;
    const sm_wm_header *h = (const sm_wm_header *)section;
    wm_view v;
    v.h = h;
    v.code = h->code;
    v.fold = h->fold;
    v.shift = section + h->shift_off;
    v.bucket = (const uint32_t *)(section + h->bucket_off);
    v.entry = (const sm_wm_entry *)(section + h->entry_off);
    v.keys = section + h->keys_off;
    v.m = h->shortest;
    v.bits = h->bits;
    v.hash_bits = h->hash_bits;
    v.prefix = h->prefix;
    size_t keep_max = h->longest - 1;
    uint8_t *join = (uint8_t *)(state + 1); /* history, then the head of this piece */
    size_t hist = (size_t)state[0];
    if (hist > keep_max) hist = keep_max;
    /* Keys that start in the history end within its next longest - 1 bytes:
       scan the join for windows starting there, keys ending in this piece. */
    size_t head = len < keep_max ? len : keep_max;
    if (hist) {
        memcpy(join + hist, text, head);
        scan_any(&v, join, hist + head, 0, hist, hist, pos0 - hist, sink);
    }
    scan_any(&v, text, len, 0, len, 0, pos0, sink);
    /* Keep the last longest - 1 bytes. */
    size_t total = hist + len, keep = total < keep_max ? total : keep_max;
    if (len >= keep) memcpy(join, text + len - keep, keep);
    else memmove(join, join + hist + head - keep, keep); /* head == len here */
    state[0] = keep;
}
