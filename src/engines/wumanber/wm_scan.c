/* Wu-Manber scan: the window loop (SHIFT, then HASH and PREFIX, then the
   keys) or, where the section has one, the SIMD prefilter on the keys'
   first bytes; and the join of a piece with the bytes kept from earlier
   pieces. */
#include "engines/wumanber/wm_private.h"

typedef struct {
    const sm_wm_header *h;
    const uint8_t *code, *fold, *shift, *keys;
    const uint8_t *prefilter; /* NULL: none, or not used */
    int identity;             /* fold[b] == b for every byte */
    const uint32_t *bucket;
    const sm_wm_entry *entry;
    uint32_t m, bits, hash_bits, prefix, prefilter_bytes;
    int simd;                 /* the prefilter loop: 2 AVX2, 1 SSSE3, 0 plain */
    int single;               /* the single-key loop (h->single, the prefilter allowed) */
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

/* The buckets whose keys may start at t (scalar form of the prefilter). */
static inline unsigned buckets_at(const uint8_t *pf, uint32_t nb, const uint8_t *t) {
    unsigned m = 0xff;
    for (uint32_t j = 0; j < nb; j++) m &= sm_wm_prefilter_buckets(pf, j, t[j]);
    return m;
}

/* The keys of the buckets in mask against the window starting at buf[s];
   reports those that end inside buf and after end_min. */
WM_INLINE void verify(const wm_view *v, const uint8_t *buf, size_t n, size_t s, unsigned mask, size_t end_min,
                      uint64_t base, sm_sink *sink) {
    const uint8_t *start = v->prefilter + SM_WM_PREFILTER_START, *member = v->prefilter + SM_WM_PREFILTER_MEMBER;
    const uint8_t *fold = v->fold, *t = buf + s;
    while (mask) {
        unsigned b = (unsigned)__builtin_ctz(mask);
        mask &= mask - 1;
        for (uint32_t r = start[b]; r < start[b + 1]; r++) {
            const sm_wm_entry *x = &v->entry[member[r]];
            size_t end = s + x->len;
            if (end > n || end <= end_min) continue;
            const uint8_t *k = v->keys + x->key_off;
            uint32_t j = 0;
            if (v->identity && s + 8 <= n) {
                /* 8 bytes at once; reading 8 key bytes stays inside the
                   section, whose prefilter follows the keys */
                uint64_t a, c;
                memcpy(&a, t, 8);
                memcpy(&c, k, 8);
                uint64_t diff = a ^ c;
                if (x->len < 8) diff &= (1ull << (8 * x->len)) - 1;
                if (diff) continue;
                j = x->len < 8 ? x->len : 8;
            }
            while (j < x->len && fold[t[j]] == k[j]) j++;
            if (j == x->len) sm_sink_add(sink, base + s, base + end, x->output >> 1, (int)(x->output & 1), 0);
        }
    }
}

static void scan_prefiltered_plain(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, size_t s_end,
                                   size_t end_min, uint64_t base, sm_sink *sink) {
    for (size_t s = s_lo; s < s_end; s++) {
        unsigned mask = buckets_at(v->prefilter, v->prefilter_bytes, buf + s);
        if (mask) verify(v, buf, n, s, mask, end_min, base, sink);
    }
}

#if defined(__x86_64__)
#include <immintrin.h>
/* Windows starting in [s_lo, s_end) (each fits buf[0, n)), WIDTH at a
   time: per first byte, two nibble lookups into 8 bucket bits, as in
   Hyperscan's Teddy. Compiled for SSSE3 (16) and for AVX2 (32). */
#define WM_TEDDY(NAME, TARGET, VEC, WIDTH, LOADU, SET1, AND, SHUF, SRLI16, CMPEQ, MOVEMASK, STOREU, BCAST)   \
    __attribute__((target(TARGET))) static void NAME(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, \
                                                     size_t s_end, size_t end_min, uint64_t base, sm_sink *sink) { \
        const uint8_t *pf = v->prefilter;                                                                    \
        const uint32_t nb = v->prefilter_bytes;                                                              \
        const VEC nib = SET1(15), zero = SET1(0);                                                            \
        VEC lo[3], hi[3];                                                                                    \
        for (uint32_t j = 0; j < 3; j++) { /* unused bytes pass every bucket */                               \
            lo[j] = j < nb ? BCAST(pf + 16 * j) : SET1(-1);                                                 \
            hi[j] = j < nb ? BCAST(pf + 48 + 16 * j) : SET1(-1);                                            \
        }                                                                                                    \
        size_t s = s_lo;                                                                                     \
        uint8_t masks[WIDTH];                                                                                \
        /* the loads reach byte s + WIDTH - 1 + 2 */                                                         \
        for (; s + WIDTH <= s_end && s + WIDTH + 2 <= n; s += WIDTH) {                                       \
            VEC m = SET1(-1);                                                                                \
            for (uint32_t j = 0; j < 3; j++) {                                                               \
                VEC t = LOADU(buf + s + j);                                                                  \
                m = AND(m, AND(SHUF(lo[j], AND(t, nib)), SHUF(hi[j], AND(SRLI16(t, 4), nib))));              \
            }                                                                                                \
            uint32_t cand = ~(uint32_t)MOVEMASK(CMPEQ(m, zero));                                             \
            if (WIDTH < 32) cand &= (1u << (WIDTH & 31)) - 1;                                                \
            if (!cand) continue;                                                                             \
            STOREU(masks, m);                                                                                \
            while (cand) {                                                                                   \
                unsigned i = (unsigned)__builtin_ctz(cand);                                                  \
                cand &= cand - 1;                                                                            \
                verify(v, buf, n, s + i, masks[i], end_min, base, sink);                                     \
            }                                                                                                \
        }                                                                                                    \
        scan_prefiltered_plain(v, buf, n, s, s_end, end_min, base, sink);                                    \
    }

#define LOADU128(p) _mm_loadu_si128((const __m128i *)(p))
#define STOREU128(p, x) _mm_storeu_si128((__m128i *)(p), x)
#define LOADU256(p) _mm256_loadu_si256((const __m256i *)(p))
#define STOREU256(p, x) _mm256_storeu_si256((__m256i *)(p), x)
#define BCAST256(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p)))
WM_TEDDY(teddy_ssse3, "ssse3", __m128i, 16, LOADU128, _mm_set1_epi8, _mm_and_si128, _mm_shuffle_epi8, _mm_srli_epi16,
         _mm_cmpeq_epi8, _mm_movemask_epi8, STOREU128, LOADU128)
WM_TEDDY(teddy_avx2, "avx2", __m256i, 32, LOADU256, _mm256_set1_epi8, _mm256_and_si256, _mm256_shuffle_epi8,
         _mm256_srli_epi16, _mm256_cmpeq_epi8, _mm256_movemask_epi8, STOREU256, BCAST256)
#endif

/* Windows starting in [s_lo, s_hi) found by the prefilter. */
static void scan_prefiltered(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, size_t s_hi, size_t end_min,
                             uint64_t base, sm_sink *sink) {
    if (n < v->m) return;
    size_t s_end = s_hi < n - v->m + 1 ? s_hi : n - v->m + 1;
    if (s_lo >= s_end) return;
#if defined(__x86_64__)
    if (v->simd >= 2) {
        teddy_avx2(v, buf, n, s_lo, s_end, end_min, base, sink);
        return;
    }
    if (v->simd == 1) {
        teddy_ssse3(v, buf, n, s_lo, s_end, end_min, base, sink);
        return;
    }
#endif
    scan_prefiltered_plain(v, buf, n, s_lo, s_end, end_min, base, sink);
}

/* One key (h->single): windows starting in [s_lo, s_end), WIDTH at a
   time (s_end - s_lo >= WIDTH), those whose three anchor bytes are among
   the key's compared whole; the last vector overlaps the one before
   instead of reading past the text. Compiled for SSE2 (16) and AVX2 (32). */
#define WM_SINGLE(NAME, TARGET, VEC, WIDTH, LOADU, SET1, OR, AND, CMPEQ, MOVEMASK)                              \
    TARGET static void NAME(const wm_view *v, const uint8_t *buf, size_t s_lo, size_t s_end, size_t end_min,     \
                            uint64_t base, sm_sink *sink) {                                                      \
        const sm_wm_header *h = v->h;                                                                            \
        const sm_wm_entry *x = &v->entry[0];                                                                     \
        const uint8_t *key = v->keys + x->key_off, *fold = v->fold;                                              \
        const uint32_t len = x->len;                                                                             \
        VEC a[3], b[3];                                                                                          \
        for (int j = 0; j < 3; j++) {                                                                            \
            a[j] = SET1((char)h->anchor_bytes[j][0]);                                                            \
            b[j] = SET1((char)h->anchor_bytes[j][1]);                                                            \
        }                                                                                                        \
        for (size_t s = s_lo;; s += WIDTH) {                                                                     \
            unsigned skip = 0;                                                                                   \
            if (s + WIDTH > s_end) {                                                                             \
                skip = (unsigned)(s - (s_end - WIDTH));                                                          \
                s = s_end - WIDTH;                                                                               \
            }                                                                                                    \
            VEC m = SET1(-1);                                                                                    \
            for (int j = 0; j < 3; j++) {                                                                        \
                VEC t = LOADU(buf + s + h->anchor[j]);                                                           \
                m = AND(m, OR(CMPEQ(t, a[j]), CMPEQ(t, b[j])));                                                  \
            }                                                                                                    \
            uint32_t cand = (uint32_t)MOVEMASK(m) >> skip << skip;                                               \
            while (cand) {                                                                                       \
                size_t w = s + (unsigned)__builtin_ctz(cand);                                                    \
                cand &= cand - 1;                                                                                \
                const uint8_t *t = buf + w;                                                                      \
                uint32_t j = 0;                                                                                  \
                while (j < len && fold[t[j]] == key[j]) j++;                                                     \
                if (j == len && w + len > end_min)                                                               \
                    sm_sink_add(sink, base + w, base + w + len, x->output >> 1, (int)(x->output & 1), 0);        \
            }                                                                                                    \
            if (s + WIDTH == s_end) return;                                                                      \
        }                                                                                                        \
    }

#if defined(__x86_64__)
WM_SINGLE(single_sse2, , __m128i, 16, LOADU128, _mm_set1_epi8, _mm_or_si128, _mm_and_si128, _mm_cmpeq_epi8,
          _mm_movemask_epi8)
WM_SINGLE(single_avx2, __attribute__((target("avx2"))), __m256i, 32, LOADU256, _mm256_set1_epi8, _mm256_or_si256,
          _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_movemask_epi8)
#endif

/* The single-key loop where it applies: returns 1 when it scanned. */
static int scan_single(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, size_t s_hi, size_t end_min,
                       uint64_t base, sm_sink *sink) {
#if defined(__x86_64__)
    if (!v->single || v->simd < 1 || n < v->m) return 0;
    size_t s_end = s_hi < n - v->m + 1 ? s_hi : n - v->m + 1;
    if (s_lo >= s_end) return 1;
    if (v->simd >= 2 && s_end - s_lo >= 32) {
        single_avx2(v, buf, s_lo, s_end, end_min, base, sink);
        return 1;
    }
    if (s_end - s_lo >= 16) {
        single_sse2(v, buf, s_lo, s_end, end_min, base, sink);
        return 1;
    }
#else
    (void)v, (void)buf, (void)n, (void)s_lo, (void)s_hi, (void)end_min, (void)base, (void)sink;
#endif
    return 0;
}

static void scan_any(const wm_view *v, const uint8_t *buf, size_t n, size_t s_lo, size_t s_hi, size_t end_min,
                     uint64_t base, sm_sink *sink) {
    if (v->prefilter) {
        scan_prefiltered(v, buf, n, s_lo, s_hi, end_min, base, sink);
        return;
    }
    if (scan_single(v, buf, n, s_lo, s_hi, end_min, base, sink)) return;
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
                sm_sink *sink, int simd, int prefilter) {
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
    v.prefilter = h->prefilter_off && prefilter ? section + h->prefilter_off : NULL;
    v.simd = simd;
    v.prefilter_bytes = h->prefilter_bytes;
    v.identity = 0;
    v.single = h->single && prefilter && !v.prefilter;
    if (v.prefilter) {
        int b = 0;
        while (b < 256 && h->fold[b] == b) b++;
        v.identity = b == 256;
    }
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
