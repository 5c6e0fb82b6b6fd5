/* The anti-diagonal wavefront DP for k-edits; see approx.h. */
#include "engines/approx/approx_common.h"

#include <stdlib.h>

#ifdef APX_HAVE_AVX2
#include <immintrin.h>
#endif

#define WF_TEXT_BLOCK 4096u
/* Slack after every array a vector loop reads, so that the last partial
   vector of a diagonal stays inside the allocation. */
#define WF_SLACK 32u

/* State: word 0 counts the bytes consumed since the reset; then a class
   buffer (the last max_key classes, followed by room for one block); then
   per key a parity word and two diagonals of length + 1 cells. */
static uint64_t wf_buffer_bytes(uint32_t max_key) {
    return (uint64_t)max_key + (max_key > WF_TEXT_BLOCK ? max_key : WF_TEXT_BLOCK) + WF_SLACK;
}
static uint64_t wf_diag_words(uint32_t length, uint32_t cell_bytes) {
    return ((uint64_t)(length + 1) * cell_bytes + WF_SLACK + 7) / 8;
}
static uint64_t wf_buffer_at(void) { return 1; }

int sm_wf_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!section) {
        sm_set_error(err, SM_ERR_INVALID, "wavefront: no section buffer");
        return SM_ERR_INVALID;
    }
    int rc = sm_apx_check_keys("wavefront", keys, nkeys, alphabet, flags, err);
    if (rc != SM_OK) return rc;
    uint64_t syms_bytes = 0;
    uint32_t max_key = 0;
    for (size_t i = 0; i < nkeys; i++) {
        syms_bytes += keys[i].len;
        if (keys[i].len > max_key) max_key = keys[i].len;
    }
    uint64_t off = apx_round_up(sizeof(sm_wf_header), APX_ALIGN);
    uint64_t keys_off = off;
    off = apx_round_up(off + (uint64_t)nkeys * sizeof(sm_wf_key), APX_ALIGN);
    uint64_t syms_off = off;
    off = apx_round_up(off + syms_bytes + WF_SLACK, APX_ALIGN);
    uint64_t total = off;
    if ((max_bytes && total > max_bytes) || total > SIZE_MAX / 2) {
        sm_set_error(err, SM_ERR_LIMIT, "wavefront: the section would need %llu bytes (limit %llu)",
                      (unsigned long long)total, (unsigned long long)max_bytes);
        return SM_ERR_LIMIT;
    }
    uint8_t *blob = calloc(1, (size_t)total);
    if (!blob) {
        sm_set_error(err, SM_ERR_NOMEM, "wavefront: out of memory");
        return SM_ERR_NOMEM;
    }
    sm_wf_header *h = (sm_wf_header *)blob;
    h->nkeys = (uint32_t)nkeys;
    h->k = k;
    h->max_key = max_key;
    h->alphabet = (uint32_t)alphabet;
    h->syms_bytes = syms_bytes;
    h->keys_off = keys_off;
    h->syms_off = syms_off;
    for (unsigned b = 0; b < 256; b++) {
        unsigned c = sm_apx_key_symbol((uint8_t)b, alphabet, flags);
        if (alphabet == SM_ALPHABET_DNA && !sm_apx_class_matches(c, 15u, alphabet, flags)) c = 0;
        h->text_class[b] = (uint8_t)c;
    }
    sm_wf_key *wk = (sm_wf_key *)(blob + keys_off);
    uint8_t *syms = blob + syms_off;
    uint64_t syms_at = 0;
    uint64_t state_at = wf_buffer_at() + (wf_buffer_bytes(max_key) + 7) / 8;
    for (size_t i = 0; i < nkeys; i++) {
        uint32_t m = keys[i].len;
        wk[i].output = keys[i].output;
        wk[i].length = m;
        wk[i].cap = (k < m ? k : m) + 1;
        wk[i].cell_bytes = wk[i].cap <= 255 ? 1 : 4;
        wk[i].syms_at = syms_at;
        wk[i].state_at = state_at;
        for (uint32_t p = 0; p < m; p++)
            syms[syms_at + p] = (uint8_t)sm_apx_key_symbol(keys[i].seq[m - 1 - p], alphabet, flags);
        syms_at += m;
        state_at += 1 + 2 * wf_diag_words(m, wk[i].cell_bytes);
    }
    h->state_words = state_at;
    rc = sm_buf_append(section, blob, (size_t)total) == 0 ? SM_OK : SM_ERR_NOMEM;
    if (rc != SM_OK) sm_set_error(err, rc, "wavefront: out of memory");
    free(blob);
    return rc;
}

int sm_wf_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
#define WF_BAD(...) do { sm_set_error(err, SM_ERR_FORMAT, __VA_ARGS__); return SM_ERR_FORMAT; } while (0)
    if (!section || size < sizeof(sm_wf_header) || ((uintptr_t)section % 8u) != 0)
        WF_BAD("wavefront section: truncated (%zu bytes)", size);
    sm_wf_header h;
    memcpy(&h, section, sizeof h);
    if (h.nkeys == 0 || h.max_key == 0 || (h.alphabet != SM_ALPHABET_DNA && h.alphabet != SM_ALPHABET_TEXT))
        WF_BAD("wavefront section: bad header");
    uint64_t hs = sizeof(sm_wf_header);
    if (!sm_apx_table_fits(h.keys_off, h.nkeys, sizeof(sm_wf_key), hs, size) ||
        !sm_apx_table_fits(h.syms_off, h.syms_bytes + WF_SLACK, 1, hs, size))
        WF_BAD("wavefront section: a table lies outside the section");
    if (h.alphabet == SM_ALPHABET_DNA)
        for (unsigned b = 0; b < 256; b++)
            if (h.text_class[b] > 15) WF_BAD("wavefront section: bad class of byte %u", b);
    const sm_wf_key *wk = (const sm_wf_key *)(section + h.keys_off);
    const uint8_t *syms = section + h.syms_off;
    uint64_t syms_at = 0;
    uint64_t state_at = wf_buffer_at() + (wf_buffer_bytes(h.max_key) + 7) / 8;
    uint32_t longest = 0;
    for (uint32_t i = 0; i < h.nkeys; i++) {
        const sm_wf_key *key = &wk[i];
        if (key->output >= n_outputs) WF_BAD("wavefront section: output %u out of range", key->output);
        if (key->length == 0 || key->length > h.max_key || key->cap != (h.k < key->length ? h.k : key->length) + 1 ||
            key->cell_bytes != (key->cap <= 255 ? 1u : 4u))
            WF_BAD("wavefront section: bad key %u", i);
        if (key->syms_at != syms_at || key->state_at != state_at) WF_BAD("wavefront section: key %u misplaced", i);
        if (h.alphabet == SM_ALPHABET_DNA)
            for (uint32_t p = 0; p < key->length; p++)
                if (syms[syms_at + p] == 0 || syms[syms_at + p] > 15) WF_BAD("wavefront section: bad symbol in key %u", i);
        if (key->length > longest) longest = key->length;
        syms_at += key->length;
        state_at += 1 + 2 * wf_diag_words(key->length, key->cell_bytes);
    }
    if (syms_at != h.syms_bytes || state_at != h.state_words || longest != h.max_key)
        WF_BAD("wavefront section: key tables disagree with the header");
#undef WF_BAD
    return SM_OK;
}

size_t sm_wf_state_words(const uint8_t *section) { return (size_t)((const sm_wf_header *)section)->state_words; }

/* Diagonals 0 and 1 hold only cells of column <= 0, whose value is their row:
   cell r (row m - r) starts at min(m - r, cap). */
static void wf_key_reset(const sm_wf_key *key, uint64_t *st) {
    const uint32_t m = key->length;
    st[0] = 0;
    uint64_t aw = wf_diag_words(m, key->cell_bytes);
    for (int a = 0; a < 2; a++) {
        void *arr = st + 1 + a * aw;
        for (uint32_t r = 0; r <= m; r++) {
            uint32_t v = m - r < key->cap ? m - r : key->cap;
            if (key->cell_bytes == 1) ((uint8_t *)arr)[r] = (uint8_t)v;
            else ((uint32_t *)arr)[r] = v;
        }
    }
}

void sm_wf_state_reset(const uint8_t *section, uint64_t *state) {
    const sm_wf_header *h = (const sm_wf_header *)section;
    memset(state, 0, (size_t)h->state_words * sizeof *state);
    const sm_wf_key *wk = (const sm_wf_key *)(section + h->keys_off);
    for (uint32_t i = 0; i < h->nkeys; i++) wf_key_reset(&wk[i], state + wk[i].state_at);
}

/* One key over n text classes. tb[i] is the class of the i-th new byte and
   tb[i - m + 1 .. i] the window its diagonal needs; c0 bytes were consumed
   before. Ends after max_end (relative) are not reported (they lie past the
   sequence when flushing). The diagonal d - 2 is overwritten in place by
   diagonal d: cell r reads cell r + 1 of it before anything writes there. */
#define WF_RUN_FN(NAME, TYPE, MISMATCH, ATTR)                                                         \
    ATTR static void NAME(const sm_wf_key *key, const uint8_t *restrict P, uint64_t *st,              \
                          const uint8_t *restrict tb, size_t n, uint64_t c0, uint64_t p0,             \
                          uint64_t max_end, sm_sink *sink) {                                          \
        const uint32_t m = key->length;                                                               \
        const TYPE cap = (TYPE)key->cap;                                                              \
        const uint64_t aw = wf_diag_words(m, key->cell_bytes);                                        \
        TYPE *arr[2] = {(TYPE *)(st + 1), (TYPE *)(st + 1 + aw)};                                     \
        uint64_t parity = st[0];                                                                      \
        const uint32_t id = key->output;                                                              \
        for (size_t i = 0; i < n; i++) {                                                              \
            TYPE *restrict nw = arr[parity ^ 1u];                                                     \
            const TYPE *restrict cur = arr[parity];                                                   \
            const uint8_t *restrict T = tb + i + 1 - m;                                               \
            for (uint32_t r = 0; r < m; r++) {                                                        \
                TYPE mis = (TYPE)(MISMATCH);                                                          \
                TYPE a = (TYPE)(nw[r + 1] + mis);                                                     \
                TYPE b = (TYPE)((cur[r] < cur[r + 1] ? cur[r] : cur[r + 1]) + 1);                     \
                TYPE v = a < b ? a : b;                                                               \
                nw[r] = v < cap ? v : cap;                                                            \
            }                                                                                         \
            parity ^= 1u;                                                                             \
            const uint64_t c = c0 + i + 1;                                                            \
            if (APX_UNLIKELY(c < m)) {                                                                \
                for (uint32_t r = 0; r < m - c; r++) nw[r] = (TYPE)(m - r < key->cap ? m - r : key->cap); \
                continue;                                                                             \
            }                                                                                         \
            if (nw[0] < cap && c + 1 - m <= max_end)                                                  \
                sm_approx_emit_end(sink, id >> 1, (int)(id & 1u), p0 + i + 2 - m, (unsigned)nw[0]);   \
        }                                                                                             \
        st[0] = parity;                                                                               \
    }

#define WF_MIS_DNA ((P[r] & T[r]) == 0)
#define WF_MIS_TEXT (P[r] != T[r])
#define WF_NO_ATTR

WF_RUN_FN(wf_run_u8_dna, uint8_t, WF_MIS_DNA, WF_NO_ATTR)
WF_RUN_FN(wf_run_u8_text, uint8_t, WF_MIS_TEXT, WF_NO_ATTR)
WF_RUN_FN(wf_run_u32_dna, uint32_t, WF_MIS_DNA, WF_NO_ATTR)
WF_RUN_FN(wf_run_u32_text, uint32_t, WF_MIS_TEXT, WF_NO_ATTR)
#ifdef APX_HAVE_AVX2
#define WF_AVX2_ATTR __attribute__((target("avx2")))
WF_RUN_FN(wf_run_u32_dna_avx2, uint32_t, WF_MIS_DNA, WF_AVX2_ATTR)
WF_RUN_FN(wf_run_u32_text_avx2, uint32_t, WF_MIS_TEXT, WF_AVX2_ATTR)
#endif

#ifdef APX_HAVE_AVX2
/* Byte cells with explicit AVX2: 32 cells per instruction, saturating adds,
   and the last partial vector blended with the cells it must not change
   (row 0 and the slack after it). */
static const uint8_t wf_lane_mask[64] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

#define WF_AVX2_U8_FN(NAME, MISMATCH)                                                                 \
    __attribute__((target("avx2"))) static void NAME(const sm_wf_key *key, const uint8_t *restrict P,  \
                                                     uint64_t *st, const uint8_t *restrict tb, size_t n, \
                                                     uint64_t c0, uint64_t p0, uint64_t max_end,         \
                                                     sm_sink *sink) {                                    \
        const uint32_t m = key->length;                                                               \
        const uint64_t aw = wf_diag_words(m, 1);                                                      \
        uint8_t *arr[2] = {(uint8_t *)(st + 1), (uint8_t *)(st + 1 + aw)};                            \
        uint64_t parity = st[0];                                                                      \
        const uint32_t id = key->output;                                                              \
        const __m256i one = _mm256_set1_epi8(1), zero = _mm256_setzero_si256();                      \
        const __m256i cap = _mm256_set1_epi8((char)key->cap);                                         \
        const uint32_t full = m & ~31u;                                                               \
        const __m256i tail = _mm256_loadu_si256((const __m256i *)(wf_lane_mask + 32 - (m - full)));  \
        (void)zero;                                                                                   \
        for (size_t i = 0; i < n; i++) {                                                              \
            uint8_t *nw = arr[parity ^ 1u];                                                           \
            const uint8_t *cur = arr[parity];                                                         \
            const uint8_t *T = tb + i + 1 - m;                                                        \
            for (uint32_t r = 0; r < m; r += 32) {                                                    \
                const __m256i p = _mm256_loadu_si256((const __m256i *)(P + r));                       \
                const __m256i t = _mm256_loadu_si256((const __m256i *)(T + r));                       \
                const __m256i mis = MISMATCH;                                                         \
                const __m256i a = _mm256_adds_epu8(_mm256_loadu_si256((const __m256i *)(nw + r + 1)), mis); \
                const __m256i b = _mm256_adds_epu8(                                                   \
                    _mm256_min_epu8(_mm256_loadu_si256((const __m256i *)(cur + r)),                   \
                                    _mm256_loadu_si256((const __m256i *)(cur + r + 1))),              \
                    one);                                                                             \
                __m256i v = _mm256_min_epu8(_mm256_min_epu8(a, b), cap);                              \
                if (r == full)                                                                        \
                    v = _mm256_blendv_epi8(_mm256_loadu_si256((const __m256i *)(nw + r)), v, tail);   \
                _mm256_storeu_si256((__m256i *)(nw + r), v);                                          \
            }                                                                                         \
            parity ^= 1u;                                                                             \
            const uint64_t c = c0 + i + 1;                                                            \
            if (APX_UNLIKELY(c < m)) {                                                                \
                for (uint32_t r = 0; r < m - c; r++) nw[r] = (uint8_t)(m - r < key->cap ? m - r : key->cap); \
                continue;                                                                             \
            }                                                                                         \
            if (nw[0] < key->cap && c + 1 - m <= max_end)                                             \
                sm_approx_emit_end(sink, id >> 1, (int)(id & 1u), p0 + i + 2 - m, (unsigned)nw[0]);   \
        }                                                                                             \
        st[0] = parity;                                                                               \
    }

/* dna: mismatch where the sets do not meet; text: where the bytes differ. */
WF_AVX2_U8_FN(wf_run_u8_dna_avx2, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(p, t), zero), one))
WF_AVX2_U8_FN(wf_run_u8_text_avx2, _mm256_andnot_si256(_mm256_cmpeq_epi8(p, t), one))
#endif

typedef void (*wf_run_fn)(const sm_wf_key *, const uint8_t *, uint64_t *, const uint8_t *, size_t, uint64_t,
                          uint64_t, uint64_t, sm_sink *);

static wf_run_fn wf_pick(const sm_wf_header *h, const sm_wf_key *key, sm_approx_path path) {
    const int dna = h->alphabet == SM_ALPHABET_DNA, narrow = key->cell_bytes == 1;
#ifdef APX_HAVE_AVX2
    if (path == SM_APPROX_AVX2) {
        if (narrow) return dna ? wf_run_u8_dna_avx2 : wf_run_u8_text_avx2;
        return dna ? wf_run_u32_dna_avx2 : wf_run_u32_text_avx2;
    }
#else
    (void)path;
#endif
    if (narrow) return dna ? wf_run_u8_dna : wf_run_u8_text;
    return dna ? wf_run_u32_dna : wf_run_u32_text;
}

static sm_approx_path wf_resolve(sm_approx_path path) { return sm_apx_resolve_path(path, SM_APPROX_AVX2); }

void sm_wf_scan_path(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path) {
    const sm_wf_header *h = (const sm_wf_header *)section;
    const sm_wf_key *wk = (const sm_wf_key *)(section + h->keys_off);
    const uint8_t *syms = section + h->syms_off;
    const uint32_t H = h->max_key;
    uint8_t *buf = (uint8_t *)(state + wf_buffer_at());
    uint64_t consumed = state[0];
    path = wf_resolve(path);
    for (size_t at = 0; at < len; at += WF_TEXT_BLOCK) {
        size_t n = len - at < WF_TEXT_BLOCK ? len - at : WF_TEXT_BLOCK;
        for (size_t i = 0; i < n; i++) buf[H + i] = h->text_class[text[at + i]];
        for (uint32_t j = 0; j < h->nkeys; j++)
            wf_pick(h, &wk[j], path)(&wk[j], syms + wk[j].syms_at, state + wk[j].state_at, buf + H, n, consumed,
                                     pos0 + at, UINT64_MAX, sink);
        consumed += n;
        memmove(buf, buf + n, H);
    }
    state[0] = consumed;
}

void sm_wf_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    sm_wf_scan_path(section, state, text, len, pos0, sink, SM_APPROX_AUTO);
}

void sm_wf_finish(const uint8_t *section, uint64_t *state, uint64_t end_pos, sm_sink *sink) {
    const sm_wf_header *h = (const sm_wf_header *)section;
    const sm_wf_key *wk = (const sm_wf_key *)(section + h->keys_off);
    const uint8_t *syms = section + h->syms_off;
    const uint32_t H = h->max_key;
    uint8_t *buf = (uint8_t *)(state + wf_buffer_at());
    const uint64_t consumed = state[0];
    sm_approx_path path = wf_resolve(SM_APPROX_AUTO);
    /* The m - 1 diagonals after the last byte complete the held-back ends;
       their cells past the sequence read filler classes and are not reported. */
    memset(buf + H, 0, H);
    for (uint32_t j = 0; j < h->nkeys; j++)
        if (wk[j].length > 1)
            wf_pick(h, &wk[j], path)(&wk[j], syms + wk[j].syms_at, state + wk[j].state_at, buf + H,
                                     wk[j].length - 1, consumed, end_pos, consumed, sink);
    sm_wf_state_reset(section, state);
}
