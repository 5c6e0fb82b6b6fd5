/* k-mismatches with bit-sliced counters; see approx.h for the layout. */
#include "engines/approx/lanes.h"

#include <stdlib.h>

#ifdef APX_HAVE_AVX2
#include <immintrin.h>
#endif

#define KM_ROW_ALIGN_WORDS 8u

static uint32_t km_planes_for(uint32_t k) {
    uint32_t b = 0;
    while (b < 32 && ((uint64_t)1 << b) < (uint64_t)k + 1) b++;
    return b;
}

int sm_km_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!section) {
        sm_set_error(err, SM_ERR_INVALID, "k-mismatches: no section buffer");
        return SM_ERR_INVALID;
    }
    int rc = sm_apx_check_keys("k-mismatches", keys, nkeys, alphabet, flags, err);
    if (rc != SM_OK) return rc;

    uint64_t bits = 0;
    uint32_t max_key = 0;
    for (size_t i = 0; i < nkeys; i++) {
        bits += keys[i].len;
        if (keys[i].len > max_key) max_key = keys[i].len;
    }
    uint64_t words64 = (bits + 63) / 64;
    if (words64 > UINT32_MAX - KM_ROW_ALIGN_WORDS) {
        sm_set_error(err, SM_ERR_LIMIT, "k-mismatches: %llu bit-vector words are too many",
                      (unsigned long long)words64);
        return SM_ERR_LIMIT;
    }
    uint32_t words = (uint32_t)words64;
    uint32_t stride = (uint32_t)apx_round_up(words, KM_ROW_ALIGN_WORDS);
    uint32_t keff = k < max_key ? k : max_key;

    apx_classes cls;
    sm_apx_classes_build(keys, nkeys, alphabet, flags, &cls);

    uint64_t off = apx_round_up(sizeof(sm_km_header), APX_ALIGN);
    uint64_t mismatch_off = off;
    off = apx_round_up(off + (uint64_t)cls.rows * stride * 8u, APX_ALIGN);
    uint64_t starts_off = off;
    off = apx_round_up(off + (uint64_t)stride * 8u, APX_ALIGN);
    uint64_t finals_off = off;
    off = apx_round_up(off + (uint64_t)stride * 8u, APX_ALIGN);
    uint64_t final_base_off = off;
    off = apx_round_up(off + (uint64_t)words * 4u, APX_ALIGN);
    uint64_t keys_off = off;
    off = apx_round_up(off + (uint64_t)nkeys * sizeof(sm_km_key), APX_ALIGN);
    uint64_t total = off;
    if ((max_bytes && total > max_bytes) || total > SIZE_MAX / 2) {
        sm_set_error(err, SM_ERR_LIMIT, "k-mismatches: the section would need %llu bytes (limit %llu)",
                      (unsigned long long)total, (unsigned long long)max_bytes);
        return SM_ERR_LIMIT;
    }
    uint8_t *blob = calloc(1, (size_t)total);
    if (!blob) {
        sm_set_error(err, SM_ERR_NOMEM, "k-mismatches: out of memory");
        return SM_ERR_NOMEM;
    }
    sm_km_header *h = (sm_km_header *)blob;
    h->words = words;
    h->stride = stride;
    h->rows = cls.rows;
    h->nkeys = (uint32_t)nkeys;
    h->k = keff;
    h->planes = km_planes_for(keff);
    h->bits = bits;
    h->max_key = max_key;
    h->mismatch_off = mismatch_off;
    h->starts_off = starts_off;
    h->finals_off = finals_off;
    h->final_base_off = final_base_off;
    h->keys_off = keys_off;
    memcpy(h->class_of, cls.class_of, sizeof h->class_of);

    uint64_t *mism = (uint64_t *)(blob + mismatch_off);
    uint64_t *starts = (uint64_t *)(blob + starts_off);
    uint64_t *finals = (uint64_t *)(blob + finals_off);
    uint32_t *final_base = (uint32_t *)(blob + final_base_off);
    sm_km_key *info = (sm_km_key *)(blob + keys_off);

    uint64_t bit = 0;
    for (size_t i = 0; i < nkeys; i++) {
        starts[bit >> 6] |= 1ull << (bit & 63);
        for (uint32_t p = 0; p < keys[i].len; p++, bit++) {
            unsigned sym = sm_apx_key_symbol(keys[i].seq[p], alphabet, flags);
            uint64_t m = 1ull << (bit & 63);
            for (uint32_t r = 0; r < cls.rows; r++)
                if (cls.row_never_matches[r] || !sm_apx_class_matches(cls.row_value[r], sym, alphabet, flags))
                    mism[(uint64_t)r * stride + (bit >> 6)] |= m;
        }
        finals[(bit - 1) >> 6] |= 1ull << ((bit - 1) & 63);
        info[i].output = keys[i].output;
        info[i].length = keys[i].len;
    }
    uint32_t seen = 0;
    for (uint32_t w = 0; w < words; w++) {
        final_base[w] = seen;
        seen += APX_POPCOUNT(finals[w]);
    }
    rc = sm_buf_append(section, blob, (size_t)total) == 0 ? SM_OK : SM_ERR_NOMEM;
    if (rc != SM_OK) sm_set_error(err, rc, "k-mismatches: out of memory");
    free(blob);
    return rc;
}

int sm_km_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
#define KM_BAD(...) do { sm_set_error(err, SM_ERR_FORMAT, __VA_ARGS__); return SM_ERR_FORMAT; } while (0)
    if (!section || size < sizeof(sm_km_header) || ((uintptr_t)section % 8u) != 0)
        KM_BAD("k-mismatches section: truncated (%zu bytes)", size);
    sm_km_header h;
    memcpy(&h, section, sizeof h);
    if (h.words == 0 || h.bits == 0 || (h.bits + 63) / 64 != h.words)
        KM_BAD("k-mismatches section: bad bit count %llu for %u words", (unsigned long long)h.bits, h.words);
    if (h.stride < h.words || h.stride % KM_ROW_ALIGN_WORDS != 0) KM_BAD("k-mismatches section: bad stride");
    if (h.rows == 0 || h.rows > 257) KM_BAD("k-mismatches section: bad row count %u", h.rows);
    if (h.nkeys == 0 || h.nkeys > h.bits) KM_BAD("k-mismatches section: bad key count %u", h.nkeys);
    if (h.max_key == 0 || h.max_key > h.bits || h.k > h.max_key || h.planes != km_planes_for(h.k))
        KM_BAD("k-mismatches section: bad bound or planes");
    for (unsigned b = 0; b < 256; b++)
        if (h.class_of[b] >= h.rows) KM_BAD("k-mismatches section: byte %u maps to row %u", b, h.class_of[b]);
    uint64_t hs = sizeof(sm_km_header);
    if (!sm_apx_table_fits(h.mismatch_off, (uint64_t)h.rows * h.stride, 8, hs, size) ||
        !sm_apx_table_fits(h.starts_off, h.stride, 8, hs, size) ||
        !sm_apx_table_fits(h.finals_off, h.stride, 8, hs, size) ||
        !sm_apx_table_fits(h.final_base_off, h.words, 4, hs, size) ||
        !sm_apx_table_fits(h.keys_off, h.nkeys, sizeof(sm_km_key), hs, size))
        KM_BAD("k-mismatches section: a table lies outside the section");
    const uint64_t *starts = (const uint64_t *)(section + h.starts_off);
    const uint64_t *finals = (const uint64_t *)(section + h.finals_off);
    const uint32_t *final_base = (const uint32_t *)(section + h.final_base_off);
    const sm_km_key *info = (const sm_km_key *)(section + h.keys_off);
    /* The key lengths must tile the vector exactly as the start and final bits say. */
    uint64_t bit = 0;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < h.nkeys; i++) {
        if (info[i].output >= n_outputs) KM_BAD("k-mismatches section: output %u out of range", info[i].output);
        if (info[i].length == 0 || info[i].length > h.max_key || info[i].length > h.bits - bit)
            KM_BAD("k-mismatches section: key %u has a bad length", i);
        if (!((starts[bit >> 6] >> (bit & 63)) & 1u)) KM_BAD("k-mismatches section: key %u has no start bit", i);
        bit += info[i].length;
        if (!((finals[(bit - 1) >> 6] >> ((bit - 1) & 63)) & 1u))
            KM_BAD("k-mismatches section: key %u has no final bit", i);
    }
    if (bit != h.bits) KM_BAD("k-mismatches section: keys cover %llu of %llu bits", (unsigned long long)bit,
                              (unsigned long long)h.bits);
    uint32_t starts_seen = 0;
    for (uint32_t w = 0; w < h.words; w++) {
        if (final_base[w] != seen) KM_BAD("k-mismatches section: bad final index at word %u", w);
        seen += APX_POPCOUNT(finals[w]);
        starts_seen += APX_POPCOUNT(starts[w]);
    }
    for (uint32_t w = h.words; w < h.stride; w++)
        if (finals[w] || starts[w]) KM_BAD("k-mismatches section: bits past the vector");
    if (seen != h.nkeys || starts_seen != h.nkeys) KM_BAD("k-mismatches section: start/final bits do not match keys");
#undef KM_BAD
    return SM_OK;
}

size_t sm_km_state_words(const uint8_t *section) {
    const sm_km_header *h = (const sm_km_header *)section;
    /* planes + overflow, each with one leading zero word for the carry of word 0 */
    return (size_t)(h->planes + 1) * ((size_t)h->words + 1);
}

void sm_km_state_reset(const uint8_t *section, uint64_t *state) {
    const sm_km_header *h = (const sm_km_header *)section;
    size_t pw = (size_t)h->words + 1;
    memset(state, 0, sm_km_state_words(section) * sizeof *state);
    /* Every counter starts overflowed: no window is complete before m bytes. */
    uint64_t *over = state + (size_t)h->planes * pw;
    for (size_t w = 1; w < pw; w++) over[w] = ~0ull;
}

typedef struct {
    const uint64_t *finals;
    const uint32_t *final_base;
    const sm_km_key *info;
    uint32_t planes;
    size_t plane_words;
    uint64_t offset;  /* counter start value 2^B - 1 - k */
    sm_sink *sink;
} km_reporter;

/* Cold path: report the windows ending at end whose final bits are set in hits
   (word w); D points at plane 0's word 0 of the state. */
static void km_report_word(const km_reporter *r, const uint64_t *P, uint32_t w, uint64_t hits, uint64_t end) {
    const uint64_t fw = r->finals[w];
    while (hits) {
        unsigned b = APX_CTZ(hits);
        uint32_t rank = r->final_base[w] + APX_POPCOUNT(fw & ((1ull << b) - 1));
        uint64_t value = 0;
        for (uint32_t p = 0; p < r->planes; p++) value |= ((P[p * r->plane_words + w] >> b) & 1u) << p;
        const sm_km_key *key = &r->info[rank];
        uint32_t id = key->output;
        sm_sink_add(r->sink, end - key->length, end, id >> 1, (int)(id & 1u), (unsigned)(value - r->offset));
        hits &= hits - 1;
    }
}

/* One text byte: every plane shifts by one position (high word to low so
   that word w - 1 still holds the previous value), key starts load the
   counter's start value, then the mismatch vector is added with a ripple
   carry; a carry out of the top plane sets the sticky overflow plane. */
#define KM_MULTI_BODY                                                                                 \
    for (size_t i = 0; i < len; i++) {                                                                \
        const uint64_t *X = mism + (size_t)class_of[text[i]] * stride;                               \
        for (uint32_t p = 0; p <= planes; p++) {                                                      \
            uint64_t *P = D + (size_t)p * pw;                                                         \
            const uint64_t fill = (p < planes && ((offset >> p) & 1u)) ? ~0ull : 0;                   \
            for (size_t w = words; w-- > 0;)                                                          \
                P[w] = (((P[w] << 1) | (P[(ptrdiff_t)w - 1] >> 63)) & ~S[w]) | (S[w] & fill);         \
        }                                                                                             \
        uint64_t *O = D + (size_t)planes * pw;                                                        \
        uint64_t acc = 0;                                                                             \
        for (size_t w = 0; w < words; w++) {                                                          \
            uint64_t c = X[w];                                                                        \
            for (uint32_t p = 0; p < planes; p++) {                                                   \
                uint64_t *P = D + (size_t)p * pw;                                                     \
                uint64_t t = P[w] & c;                                                                \
                P[w] ^= c;                                                                            \
                c = t;                                                                                \
            }                                                                                         \
            O[w] |= c;                                                                                \
            acc |= ~O[w] & F[w];                                                                      \
        }                                                                                             \
        if (APX_UNLIKELY(acc != 0)) {                                                                 \
            for (uint32_t w = 0; w < words; w++) {                                                    \
                uint64_t hw = ~O[w] & F[w];                                                           \
                if (hw) km_report_word(rep, D, w, hw, pos0 + i + 1);                                  \
            }                                                                                         \
        }                                                                                             \
    }

/* The same step for a fixed plane count, fused into one pass over the words
   (high to low) so every plane word is loaded and stored once per byte and
   the compiler can vectorise across words. */
#define KM_FUSED_BODY(NP)                                                                             \
    for (size_t i = 0; i < len; i++) {                                                                \
        const uint64_t *X = mism + (size_t)class_of[text[i]] * stride;                                \
        uint64_t *O = D + (size_t)(NP) * pw;                                                          \
        uint64_t acc = 0;                                                                             \
        for (size_t w = words; w-- > 0;) {                                                            \
            const uint64_t s = S[w], ns = ~s;                                                         \
            uint64_t c = X[w];                                                                        \
            _Pragma("GCC unroll 4")                                                                   \
            for (int p = 0; p < (NP); p++) {                                                          \
                uint64_t *P = D + (size_t)p * pw;                                                     \
                const uint64_t v = (((P[w] << 1) | (P[(ptrdiff_t)w - 1] >> 63)) & ns) | (s & fill[p]); \
                P[w] = v ^ c;                                                                         \
                c &= v;                                                                               \
            }                                                                                         \
            const uint64_t o = ((((O[w] << 1) | (O[(ptrdiff_t)w - 1] >> 63)) & ns)) | c;              \
            O[w] = o;                                                                                 \
            acc |= ~o & F[w];                                                                         \
        }                                                                                             \
        if (APX_UNLIKELY(acc != 0)) {                                                                 \
            for (uint32_t w = 0; w < words; w++) {                                                    \
                uint64_t hw = ~O[w] & F[w];                                                           \
                if (hw) km_report_word(rep, D, w, hw, pos0 + i + 1);                                  \
            }                                                                                         \
        }                                                                                             \
    }

#define KM_FUSED_FN(NAME, NP, ATTR)                                                                   \
    ATTR static void NAME(const uint16_t *class_of, const uint64_t *restrict mism, uint32_t stride,   \
                          const uint64_t *restrict S, const uint64_t *restrict F, uint32_t words,     \
                          uint64_t offset, uint64_t *restrict D, size_t pw, const uint8_t *restrict text, \
                          size_t len, uint64_t pos0, const km_reporter *rep) {                        \
        uint64_t fill[(NP) + 1];                                                                      \
        for (int p = 0; p < (NP); p++) fill[p] = ((offset >> p) & 1u) ? ~0ull : 0;                    \
        KM_FUSED_BODY(NP)                                                                             \
    }

#define KM_NO_ATTR
KM_FUSED_FN(km_fused0, 0, KM_NO_ATTR)
KM_FUSED_FN(km_fused1, 1, KM_NO_ATTR)
KM_FUSED_FN(km_fused2, 2, KM_NO_ATTR)
KM_FUSED_FN(km_fused3, 3, KM_NO_ATTR)
#ifdef APX_HAVE_AVX2
#define KM_AVX2_MAX_PLANES 7u
/* The fused step with explicit AVX2, four words per vector from the top
   down: the vector at w reads words w - 1 .. w + 2 before the next (lower)
   vector rewrites w - 1; the lowest words % 4 words run scalar last. */
__attribute__((target("avx2"))) static void km_fused_avx2(
    const uint16_t *class_of, const uint64_t *restrict mism, uint32_t stride, const uint64_t *restrict S,
    const uint64_t *restrict F, uint32_t words, uint32_t planes, uint64_t offset, uint64_t *restrict D, size_t pw,
    const uint8_t *restrict text, size_t len, uint64_t pos0, const km_reporter *rep) {
    const __m256i ones = _mm256_set1_epi64x(-1);
    __m256i fillv[KM_AVX2_MAX_PLANES];
    uint64_t fill[KM_AVX2_MAX_PLANES];
    for (uint32_t p = 0; p < planes; p++) {
        fill[p] = ((offset >> p) & 1u) ? ~0ull : 0;
        fillv[p] = _mm256_set1_epi64x((long long)fill[p]);
    }
    uint64_t *O = D + (size_t)planes * pw;
    const size_t low = words & 3u;
    for (size_t i = 0; i < len; i++) {
        const uint64_t *X = mism + (size_t)class_of[text[i]] * stride;
        __m256i accv = _mm256_setzero_si256();
        for (size_t w = words; w >= low + 4;) {
            w -= 4;
            const __m256i sv = _mm256_loadu_si256((const __m256i *)(S + w));
            const __m256i nsv = _mm256_xor_si256(sv, ones);
            __m256i c = _mm256_loadu_si256((const __m256i *)(X + w));
            for (uint32_t p = 0; p < planes; p++) {
                uint64_t *P = D + (size_t)p * pw;
                const __m256i cur = _mm256_loadu_si256((const __m256i *)(P + w));
                const __m256i prv = _mm256_loadu_si256((const __m256i *)(P + w - 1));
                const __m256i v = _mm256_or_si256(
                    _mm256_and_si256(_mm256_or_si256(_mm256_slli_epi64(cur, 1), _mm256_srli_epi64(prv, 63)), nsv),
                    _mm256_and_si256(sv, fillv[p]));
                _mm256_storeu_si256((__m256i *)(P + w), _mm256_xor_si256(v, c));
                c = _mm256_and_si256(c, v);
            }
            const __m256i cur = _mm256_loadu_si256((const __m256i *)(O + w));
            const __m256i prv = _mm256_loadu_si256((const __m256i *)(O + w - 1));
            const __m256i o = _mm256_or_si256(
                _mm256_and_si256(_mm256_or_si256(_mm256_slli_epi64(cur, 1), _mm256_srli_epi64(prv, 63)), nsv), c);
            _mm256_storeu_si256((__m256i *)(O + w), o);
            accv = _mm256_or_si256(accv, _mm256_andnot_si256(o, _mm256_loadu_si256((const __m256i *)(F + w))));
        }
        uint64_t acc = 0;
        for (size_t w = low; w-- > 0;) {
            const uint64_t sw = S[w], ns = ~sw;
            uint64_t c = X[w];
            for (uint32_t p = 0; p < planes; p++) {
                uint64_t *P = D + (size_t)p * pw;
                const uint64_t v = (((P[w] << 1) | (P[(ptrdiff_t)w - 1] >> 63)) & ns) | (sw & fill[p]);
                P[w] = v ^ c;
                c &= v;
            }
            const uint64_t o = (((O[w] << 1) | (O[(ptrdiff_t)w - 1] >> 63)) & ns) | c;
            O[w] = o;
            acc |= ~o & F[w];
        }
        if (APX_UNLIKELY(acc != 0 || !_mm256_testz_si256(accv, accv))) {
            for (uint32_t w = 0; w < words; w++) {
                uint64_t hw = ~O[w] & F[w];
                if (hw) km_report_word(rep, D, w, hw, pos0 + i + 1);
            }
        }
    }
}
#endif

typedef void (*km_fused_fn)(const uint16_t *, const uint64_t *, uint32_t, const uint64_t *, const uint64_t *,
                            uint32_t, uint64_t, uint64_t *, size_t, const uint8_t *, size_t, uint64_t,
                            const km_reporter *);

static void km_scan_multi(const uint16_t *class_of, const uint64_t *restrict mism, uint32_t stride,
                          const uint64_t *restrict S, const uint64_t *restrict F, uint32_t words, uint32_t planes,
                          uint64_t offset, uint64_t *restrict D, size_t pw, const uint8_t *restrict text, size_t len,
                          uint64_t pos0, const km_reporter *rep) {
    KM_MULTI_BODY
}

#ifdef APX_HAVE_AVX2
__attribute__((target("avx2"))) static void km_scan_multi_avx2(
    const uint16_t *class_of, const uint64_t *restrict mism, uint32_t stride, const uint64_t *restrict S,
    const uint64_t *restrict F, uint32_t words, uint32_t planes, uint64_t offset, uint64_t *restrict D, size_t pw,
    const uint8_t *restrict text, size_t len, uint64_t pos0, const km_reporter *rep) {
    KM_MULTI_BODY
}
#endif

/* All keys in one word: the planes live in registers. */
#define KM_ONE_WORD_MAX_PLANES 8u
static void km_scan_one_word(const uint16_t *class_of, const uint64_t *mism, uint32_t stride, uint64_t s,
                             uint64_t f, uint32_t planes, uint64_t offset, uint64_t *D, size_t pw,
                             const uint8_t *text, size_t len, uint64_t pos0, const km_reporter *rep) {
    uint64_t P[KM_ONE_WORD_MAX_PLANES + 1];
    uint64_t fill[KM_ONE_WORD_MAX_PLANES];
    for (uint32_t p = 0; p <= planes; p++) P[p] = D[p * pw];
    for (uint32_t p = 0; p < planes; p++) fill[p] = ((offset >> p) & 1u) ? s : 0;
    const uint64_t ns = ~s;
    for (size_t i = 0; i < len; i++) {
        uint64_t c = mism[(size_t)class_of[text[i]] * stride];
        for (uint32_t p = 0; p < planes; p++) {
            uint64_t v = ((P[p] << 1) & ns) | fill[p];
            P[p] = v ^ c;
            c &= v;
        }
        P[planes] = ((P[planes] << 1) & ns) | c;
        uint64_t hits = ~P[planes] & f;
        if (APX_UNLIKELY(hits != 0)) {
            for (uint32_t p = 0; p <= planes; p++) D[p * pw] = P[p];
            km_report_word(rep, D, 0, hits, pos0 + i + 1);
        }
    }
    for (uint32_t p = 0; p <= planes; p++) D[p * pw] = P[p];
}

/* The keys over text[0, len) one byte at a time, every key at each. */
static void km_scan_bytes(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                          sm_sink *sink, sm_approx_path path) {
    const sm_km_header *h = (const sm_km_header *)section;
    const uint64_t *mism = (const uint64_t *)(section + h->mismatch_off);
    const uint64_t *S = (const uint64_t *)(section + h->starts_off);
    const uint64_t *F = (const uint64_t *)(section + h->finals_off);
    const size_t pw = (size_t)h->words + 1;
    const uint64_t offset = (((uint64_t)1 << h->planes) - 1) - h->k;
    km_reporter rep = {F, (const uint32_t *)(section + h->final_base_off), (const sm_km_key *)(section + h->keys_off),
                       h->planes, pw, offset, sink};
    uint64_t *D = state + 1;
    if (h->words == 1 && h->planes <= KM_ONE_WORD_MAX_PLANES) {
        km_scan_one_word(h->class_of, mism, h->stride, S[0], F[0], h->planes, offset, D, pw, text, len, pos0, &rep);
        return;
    }
    path = sm_apx_resolve_path(path, SM_APPROX_AVX2);
#ifdef APX_HAVE_AVX2
    if (path == SM_APPROX_AVX2 && h->planes <= KM_AVX2_MAX_PLANES) {
        km_fused_avx2(h->class_of, mism, h->stride, S, F, h->words, h->planes, offset, D, pw, text, len, pos0, &rep);
        return;
    }
#endif
    if (h->planes <= 3) {
        static const km_fused_fn plain[4] = {km_fused0, km_fused1, km_fused2, km_fused3};
        plain[h->planes](h->class_of, mism, h->stride, S, F, h->words, offset, D, pw, text, len, pos0, &rep);
        return;
    }
#ifdef APX_HAVE_AVX2
    if (path == SM_APPROX_AVX2) {
        km_scan_multi_avx2(h->class_of, mism, h->stride, S, F, h->words, h->planes, offset, D, pw, text, len, pos0,
                           &rep);
        return;
    }
#endif
    km_scan_multi(h->class_of, mism, h->stride, S, F, h->words, h->planes, offset, D, pw, text, len, pos0, &rep);
}

void sm_km_scan_mode(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path, sm_lanes_mode lanes) {
    /* In lanes first (when that pays), then what the lanes left. */
    const size_t done = sm_km_lanes_scan(section, state, text, len, pos0, sink, path, lanes);
    if (done < len) km_scan_bytes(section, state, text + done, len - done, pos0 + done, sink, path);
}

void sm_km_scan_path(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path) {
    sm_km_scan_mode(section, state, text, len, pos0, sink, path, SM_LANES_AUTO);
}

void sm_km_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    sm_km_scan_path(section, state, text, len, pos0, sink, SM_APPROX_AUTO);
}
