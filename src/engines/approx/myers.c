/* Myers' bit-vector k-edits search for many keys; see approx.h for the
 * packing, the layout and the cut-off. */
#include "engines/approx/approx_common.h"

#include <stdlib.h>

#include "engines/approx/lanes.h"
#include "engines/approx/myers_step.h"

#define MY_WORD 64u
#define MY_TEXT_BLOCK 1024u

enum { MY_F = 0, MY_NS = 1, MY_SH = 2, MY_PV0 = 3, MY_SC0 = 4, MY_CONSTS = 5 };

/* Smallest field width >= len whose biased score fits: 2^(W-1) - 1 >= min(k, W). */
static uint32_t my_field_width(uint32_t len, uint32_t k) {
    for (uint32_t w = len; w < MY_WORD; w++) {
        uint64_t kk = k < w ? k : w;
        if (((uint64_t)1 << (w - 1)) - 1 >= kk) return w;
    }
    return MY_WORD;
}

static uint64_t my_bias(uint32_t width, uint32_t k) {
    uint64_t kk = k < width ? k : width;
    return (((uint64_t)1 << (width - 1)) - 1) - kk;
}

static uint64_t my_field_mask(uint32_t width) { return width >= 64 ? ~0ull : ((1ull << width) - 1); }

typedef struct {
    uint32_t len;
    uint32_t index;
} my_order;

static int my_order_cmp(const void *a, const void *b) {
    const my_order *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

/* Lane constants derived from the lane's fields (also used to validate). */
static void my_lane_consts(const sm_my_lane *ln, const sm_my_field *fields, uint64_t c[MY_CONSTS]) {
    c[MY_F] = 0;
    c[MY_NS] = ~0ull;
    c[MY_SH] = ln->width ? ln->width - 1 : 0;
    c[MY_PV0] = 0;
    c[MY_SC0] = 0;
    for (uint32_t f = 0; f < ln->fields; f++) {
        uint32_t base = f * ln->width;
        uint32_t m = fields[ln->first_field + f].length;
        c[MY_F] |= 1ull << (base + ln->width - 1);
        c[MY_NS] &= ~(1ull << base);
        c[MY_PV0] |= my_field_mask(m) << (base + ln->width - m);
        c[MY_SC0] |= (ln->bias + m) << base;
    }
}

int sm_my_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!section) {
        sm_set_error(err, SM_ERR_INVALID, "myers: no section buffer");
        return SM_ERR_INVALID;
    }
    int rc = sm_apx_check_keys("myers", keys, nkeys, alphabet, flags, err);
    if (rc != SM_OK) return rc;
    apx_classes cls;
    sm_apx_classes_build(keys, nkeys, alphabet, flags, &cls);

    my_order *order = malloc(nkeys * sizeof *order);
    uint32_t *lane_of = malloc(nkeys * sizeof *lane_of);
    uint32_t *lane_width = NULL;
    uint8_t *blob = NULL;
    if (!order || !lane_of) goto nomem;

    /* Short keys, longest first, fill lanes greedily: a lane's width is set
       by its first key and it takes floor(64 / width) keys. */
    size_t nshort = 0, nlong = 0;
    uint64_t long_blocks = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len <= MY_WORD) {
            order[nshort].len = keys[i].len;
            order[nshort].index = (uint32_t)i;
            nshort++;
        } else {
            nlong++;
            long_blocks += (keys[i].len + MY_WORD - 1) / MY_WORD;
        }
    }
    qsort(order, nshort, sizeof *order, my_order_cmp);
    uint32_t used_lanes = 0;
    lane_width = malloc((nshort ? nshort : 1) * sizeof *lane_width);
    if (!lane_width) goto nomem;
    for (size_t i = 0; i < nshort;) {
        uint32_t width = my_field_width(order[i].len, k);
        uint32_t per = MY_WORD / width, taken = 0;
        for (; taken < per && i < nshort; taken++, i++) lane_of[i] = used_lanes;
        /* A key alone in its lane takes the whole word: the pad bits below it
           make the field masks no-ops, so the lane can run the unmasked step. */
        lane_width[used_lanes++] = taken == 1 ? MY_WORD : width;
    }
    uint32_t lanes = (uint32_t)apx_round_up(used_lanes, 8);
    uint64_t rows = cls.rows;
    if ((uint64_t)rows * lanes > UINT32_MAX / 2) {
        sm_set_error(err, SM_ERR_LIMIT, "myers: %u lanes are too many", lanes);
        free(order);
        free(lane_of);
        free(lane_width);
        return SM_ERR_LIMIT;
    }
    uint64_t state_words = 3ull * lanes + nlong + 3 * long_blocks;

    uint64_t off = apx_round_up(sizeof(sm_my_header), APX_ALIGN);
    uint64_t lane_const_off = off;
    off = apx_round_up(off + (uint64_t)MY_CONSTS * lanes * 8u, APX_ALIGN);
    uint64_t lane_info_off = off;
    off = apx_round_up(off + (uint64_t)lanes * sizeof(sm_my_lane), APX_ALIGN);
    uint64_t fields_off = off;
    off = apx_round_up(off + (uint64_t)nshort * sizeof(sm_my_field), APX_ALIGN);
    uint64_t peq_off = off;
    off = apx_round_up(off + rows * lanes * 8u, APX_ALIGN);
    uint64_t long_off = off;
    off = apx_round_up(off + (uint64_t)nlong * sizeof(sm_my_long), APX_ALIGN);
    uint64_t long_peq_off = off;
    off = apx_round_up(off + rows * long_blocks * 8u, APX_ALIGN);
    uint64_t total = off;
    if ((max_bytes && total > max_bytes) || total > SIZE_MAX / 2) {
        sm_set_error(err, SM_ERR_LIMIT, "myers: the section would need %llu bytes (limit %llu)",
                      (unsigned long long)total, (unsigned long long)max_bytes);
        free(order);
        free(lane_of);
        free(lane_width);
        return SM_ERR_LIMIT;
    }
    blob = calloc(1, (size_t)total);
    if (!blob) goto nomem;

    sm_my_header *h = (sm_my_header *)blob;
    h->rows = cls.rows;
    h->lanes = lanes;
    h->fields = (uint32_t)nshort;
    h->long_keys = (uint32_t)nlong;
    h->nkeys = (uint32_t)nkeys;
    h->k = k;
    h->long_peq_words = rows * long_blocks;
    h->state_words = state_words;
    h->lane_const_off = lane_const_off;
    h->lane_info_off = lane_info_off;
    h->fields_off = fields_off;
    h->peq_off = peq_off;
    h->long_off = long_off;
    h->long_peq_off = long_peq_off;
    memcpy(h->class_of, cls.class_of, sizeof h->class_of);

    uint64_t *lc = (uint64_t *)(blob + lane_const_off);
    sm_my_lane *info = (sm_my_lane *)(blob + lane_info_off);
    sm_my_field *fields = (sm_my_field *)(blob + fields_off);
    uint64_t *peq = (uint64_t *)(blob + peq_off);
    for (size_t i = 0; i < nshort; i++) {
        sm_my_lane *ln = &info[lane_of[i]];
        if (ln->fields == 0) {
            ln->width = lane_width[lane_of[i]];
            ln->first_field = (uint32_t)i;
            ln->bias = my_bias(ln->width, k);
        }
        const sm_ac_key *key = &keys[order[i].index];
        uint32_t base = ln->fields * ln->width;
        uint32_t pad = ln->width - key->len;
        fields[i].output = key->output;
        fields[i].length = key->len;
        ln->fields++;
        uint64_t *col = peq + lane_of[i];
        /* The pad bits below the key match every class: they behave as the DP's top row. */
        for (uint32_t r = 0; r < cls.rows; r++) col[(size_t)r * lanes] |= ((1ull << pad) - 1) << base;
        for (uint32_t p = 0; p < key->len; p++) {
            unsigned sym = sm_apx_key_symbol(key->seq[p], alphabet, flags);
            for (uint32_t r = 0; r < cls.rows; r++)
                if (!cls.row_never_matches[r] && sm_apx_class_matches(cls.row_value[r], sym, alphabet, flags))
                    col[(size_t)r * lanes] |= 1ull << (base + pad + p);
        }
    }
    for (uint32_t l = 0; l < lanes; l++) {
        uint64_t c[MY_CONSTS];
        my_lane_consts(&info[l], fields, c);
        for (unsigned j = 0; j < MY_CONSTS; j++) lc[(size_t)j * lanes + l] = c[j];
    }

    sm_my_long *lk = (sm_my_long *)(blob + long_off);
    uint64_t *lpeq = (uint64_t *)(blob + long_peq_off);
    uint64_t peq_at = 0, state_at = 3ull * lanes;
    size_t li = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len <= MY_WORD) continue;
        sm_my_long *key = &lk[li++];
        uint32_t blocks = (keys[i].len + MY_WORD - 1) / MY_WORD;
        key->output = keys[i].output;
        key->length = keys[i].len;
        key->blocks = blocks;
        key->k = k < keys[i].len ? k : keys[i].len;
        key->peq_at = peq_at;
        key->state_at = state_at;
        for (uint32_t p = 0; p < keys[i].len; p++) {
            unsigned sym = sm_apx_key_symbol(keys[i].seq[p], alphabet, flags);
            for (uint32_t r = 0; r < cls.rows; r++)
                if (!cls.row_never_matches[r] && sm_apx_class_matches(cls.row_value[r], sym, alphabet, flags))
                    lpeq[peq_at + (uint64_t)r * blocks + p / MY_WORD] |= 1ull << (p % MY_WORD);
        }
        peq_at += rows * blocks;
        state_at += 1 + 3ull * blocks;
    }

    rc = sm_buf_append(section, blob, (size_t)total) == 0 ? SM_OK : SM_ERR_NOMEM;
    if (rc != SM_OK) sm_set_error(err, rc, "myers: out of memory");
    free(blob);
    free(order);
    free(lane_of);
    free(lane_width);
    return rc;
nomem:
    sm_set_error(err, SM_ERR_NOMEM, "myers: out of memory");
    free(blob);
    free(order);
    free(lane_of);
    free(lane_width);
    return SM_ERR_NOMEM;
}

int sm_my_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
#define MY_BAD(...) do { sm_set_error(err, SM_ERR_FORMAT, __VA_ARGS__); return SM_ERR_FORMAT; } while (0)
    if (!section || size < sizeof(sm_my_header) || ((uintptr_t)section % 8u) != 0)
        MY_BAD("myers section: truncated (%zu bytes)", size);
    sm_my_header h;
    memcpy(&h, section, sizeof h);
    if (h.rows == 0 || h.rows > 257) MY_BAD("myers section: bad row count %u", h.rows);
    if (h.lanes % 8u != 0 || h.fields > h.nkeys || (uint64_t)h.fields + h.long_keys != h.nkeys || h.nkeys == 0)
        MY_BAD("myers section: bad key counts");
    if ((uint64_t)h.rows * h.lanes > UINT32_MAX / 2) MY_BAD("myers section: too many lanes");
    for (unsigned b = 0; b < 256; b++)
        if (h.class_of[b] >= h.rows) MY_BAD("myers section: byte %u maps to row %u", b, h.class_of[b]);
    uint64_t hs = sizeof(sm_my_header);
    if (!sm_apx_table_fits(h.lane_const_off, (uint64_t)MY_CONSTS * h.lanes, 8, hs, size) ||
        !sm_apx_table_fits(h.lane_info_off, h.lanes, sizeof(sm_my_lane), hs, size) ||
        !sm_apx_table_fits(h.fields_off, h.fields, sizeof(sm_my_field), hs, size) ||
        !sm_apx_table_fits(h.peq_off, (uint64_t)h.rows * h.lanes, 8, hs, size) ||
        !sm_apx_table_fits(h.long_off, h.long_keys, sizeof(sm_my_long), hs, size) ||
        !sm_apx_table_fits(h.long_peq_off, h.long_peq_words, 8, hs, size))
        MY_BAD("myers section: a table lies outside the section");
    const uint64_t *lc = (const uint64_t *)(section + h.lane_const_off);
    const sm_my_lane *info = (const sm_my_lane *)(section + h.lane_info_off);
    const sm_my_field *fields = (const sm_my_field *)(section + h.fields_off);
    uint32_t next_field = 0;
    for (uint32_t l = 0; l < h.lanes; l++) {
        const sm_my_lane *ln = &info[l];
        if (ln->fields == 0) {
            if (ln->width != 0) MY_BAD("myers section: empty lane %u has a width", l);
        } else {
            if (ln->width == 0 || ln->width > MY_WORD || (uint64_t)ln->fields * ln->width > MY_WORD ||
                ln->first_field != next_field || ln->fields > h.fields - next_field)
                MY_BAD("myers section: bad lane %u", l);
            if (ln->width != my_field_width(ln->width, h.k) || ln->bias != my_bias(ln->width, h.k))
                MY_BAD("myers section: lane %u has a bad score bias", l);
            for (uint32_t f = 0; f < ln->fields; f++) {
                const sm_my_field *fd = &fields[ln->first_field + f];
                if (fd->length == 0 || fd->length > ln->width) MY_BAD("myers section: bad field in lane %u", l);
                if (fd->output >= n_outputs) MY_BAD("myers section: output %u out of range", fd->output);
            }
            next_field += ln->fields;
        }
        uint64_t c[MY_CONSTS];
        my_lane_consts(ln, fields, c);
        for (unsigned j = 0; j < MY_CONSTS; j++)
            if (lc[(size_t)j * h.lanes + l] != c[j]) MY_BAD("myers section: lane %u constants disagree", l);
    }
    if (next_field != h.fields) MY_BAD("myers section: %u of %u fields in lanes", next_field, h.fields);
    const sm_my_long *lk = (const sm_my_long *)(section + h.long_off);
    uint64_t peq_at = 0, state_at = 3ull * h.lanes;
    for (uint32_t i = 0; i < h.long_keys; i++) {
        const sm_my_long *key = &lk[i];
        if (key->length <= MY_WORD || key->blocks != (key->length + MY_WORD - 1) / MY_WORD ||
            key->k != (h.k < key->length ? h.k : key->length))
            MY_BAD("myers section: bad long key %u", i);
        if (key->output >= n_outputs) MY_BAD("myers section: output %u out of range", key->output);
        if (key->peq_at != peq_at || key->state_at != state_at) MY_BAD("myers section: long key %u misplaced", i);
        peq_at += (uint64_t)h.rows * key->blocks;
        state_at += 1 + 3ull * key->blocks;
    }
    if (peq_at != h.long_peq_words || state_at != h.state_words) MY_BAD("myers section: bad long key tables");
#undef MY_BAD
    return SM_OK;
}

size_t sm_my_state_words(const uint8_t *section) {
    const sm_my_header *h = (const sm_my_header *)section;
    return (size_t)(h->state_words ? h->state_words : 1);
}

void sm_my_state_reset(const uint8_t *section, uint64_t *state) {
    const sm_my_header *h = (const sm_my_header *)section;
    const uint64_t *lc = (const uint64_t *)(section + h->lane_const_off);
    uint32_t lanes = h->lanes;
    /* Column 0: D[i][0] = i, so every vertical delta is +1 and the score is m. */
    for (uint32_t l = 0; l < lanes; l++) {
        state[l] = lc[(size_t)MY_PV0 * lanes + l];
        state[lanes + l] = 0;
        state[2 * (size_t)lanes + l] = lc[(size_t)MY_SC0 * lanes + l];
    }
    const sm_my_long *lk = (const sm_my_long *)(section + h->long_off);
    for (uint32_t i = 0; i < h->long_keys; i++) {
        const sm_my_long *key = &lk[i];
        uint64_t *st = state + key->state_at;
        uint32_t nb = key->blocks;
        uint64_t *P = st + 1, *M = P + nb;
        int64_t *score = (int64_t *)(M + nb);
        /* Rows <= k are active in column 0: blocks up to the one holding row k. */
        uint64_t y = key->k == 0 ? 0 : (key->k - 1) / MY_WORD;
        if (y > nb - 1) y = nb - 1;
        st[0] = y;
        for (uint32_t b = 0; b < nb; b++) {
            P[b] = ~0ull;
            M[b] = 0;
            uint64_t rows_to = (uint64_t)(b + 1) * MY_WORD;
            score[b] = (int64_t)(rows_to < key->length ? rows_to : key->length);
        }
    }
}

/* ------------------------------------------------------------ hit reports */

typedef struct {
    const sm_my_lane *info;
    const sm_my_field *fields;
    sm_sink *sink;
} my_reporter;

/* Cold path: every field of lane l whose biased score has a clear top bit. */
static void my_report_lane(const my_reporter *r, uint32_t l, uint64_t hits, uint64_t sc, uint64_t end) {
    const sm_my_lane *ln = &r->info[l];
    const uint64_t mask = my_field_mask(ln->width);
    while (hits) {
        unsigned t = APX_CTZ(hits);
        uint32_t f = t / ln->width;
        uint64_t v = (sc >> (f * ln->width)) & mask;
        uint32_t id = r->fields[ln->first_field + f].output;
        sm_approx_emit_end(r->sink, id >> 1, (int)(id & 1u), end, (unsigned)(v - ln->bias));
        hits &= hits - 1;
    }
}

/* ------------------------------------------------------- short keys: scalar */

static void my_short_scalar(const sm_my_header *h, const uint64_t *lc, const uint64_t *peq, uint64_t *state,
                            const uint32_t *rowoff, size_t n, uint64_t end0, const my_reporter *rep) {
    const uint32_t lanes = h->lanes;
    for (uint32_t l = 0; l < lanes; l++) {
        if (rep->info[l].fields == 0) continue;
        const uint64_t F = lc[(size_t)MY_F * lanes + l], NS = lc[(size_t)MY_NS * lanes + l];
        const unsigned sh = (unsigned)lc[(size_t)MY_SH * lanes + l];
        const uint64_t NF = ~F;
        uint64_t Pv = state[l], Mv = state[lanes + l], SC = state[2 * (size_t)lanes + l];
        const uint64_t *col = peq + l;
        for (size_t i = 0; i < n; i++) {
            uint64_t Ph, Mh;
            apx_myers_step_fields(&Pv, &Mv, col[rowoff[i]], NF, NS, &Ph, &Mh);
            SC = SC - ((Mh & F) >> sh) + ((Ph & F) >> sh);
            const uint64_t hits = ~SC & F;
            if (APX_UNLIKELY(hits != 0)) my_report_lane(rep, l, hits, SC, end0 + i);
        }
        state[l] = Pv;
        state[lanes + l] = Mv;
        state[2 * (size_t)lanes + l] = SC;
    }
}

/* --------------------------------------------------------- short keys: AVX2 */

#ifdef APX_HAVE_AVX2
/* The step on four lanes, then their packed scores from the top bit of
   each field (SH: the field width - 1). */
#define MY_AVX2_STEP(Eq, Pv, Mv, SC, F, NF, NS, SH)                                                   \
    do {                                                                                               \
        __m256i Ph_, Mh_;                                                                              \
        apx_myers_step_fields_avx2(Eq, &Pv, &Mv, NF, NS, &Ph_, &Mh_);                                  \
        SC = _mm256_add_epi64(_mm256_sub_epi64(SC, _mm256_srlv_epi64(_mm256_and_si256(Mh_, F), SH)),      \
                              _mm256_srlv_epi64(_mm256_and_si256(Ph_, F), SH));                        \
    } while (0)

__attribute__((target("avx2"))) static void my_report_vec(const my_reporter *rep, uint32_t l0, __m256i SC,
                                                          __m256i F, uint64_t end) {
    uint64_t sc[4], f[4];
    _mm256_storeu_si256((__m256i *)sc, SC);
    _mm256_storeu_si256((__m256i *)f, F);
    for (unsigned j = 0; j < 4; j++) {
        uint64_t hits = ~sc[j] & f[j];
        if (hits) my_report_lane(rep, l0 + j, hits, sc[j], end);
    }
}

/* Lanes holding one key each (width 64): no field masks, constant shifts. */
#define MY_AVX2_STEP_WHOLE(Eq, Pv, Mv, SC)                                                             \
    do {                                                                                               \
        __m256i Ph_, Mh_;                                                                              \
        apx_myers_step_avx2(Eq, &Pv, &Mv, &Ph_, &Mh_);                                                 \
        SC = _mm256_add_epi64(_mm256_sub_epi64(SC, _mm256_srli_epi64(Mh_, 63)), _mm256_srli_epi64(Ph_, 63)); \
    } while (0)

/* Two groups of four lanes per pass: two independent dependency chains keep
   the vector units busy while one waits on its addition. */
__attribute__((target("avx2"))) static void my_short_avx2(const sm_my_header *h, const uint64_t *lc,
                                                          const uint64_t *peq, uint64_t *state,
                                                          const uint32_t *rowoff, size_t n, uint64_t end0,
                                                          const my_reporter *rep) {
    const uint32_t lanes = h->lanes;
    const __m256i ones = _mm256_set1_epi64x(-1);
    for (uint32_t l = 0; l < lanes; l += 8) {
        if (rep->info[l].fields == 0) break; /* lanes are filled in order */
#define MY_LD(j, o) _mm256_loadu_si256((const __m256i *)(lc + (size_t)(j) * lanes + l + (o)))
        const __m256i FA = MY_LD(MY_F, 0), FB = MY_LD(MY_F, 4);
        const __m256i NSA = MY_LD(MY_NS, 0), NSB = MY_LD(MY_NS, 4);
        const __m256i SHA = MY_LD(MY_SH, 0), SHB = MY_LD(MY_SH, 4);
#undef MY_LD
        const __m256i NFA = _mm256_xor_si256(FA, ones), NFB = _mm256_xor_si256(FB, ones);
        __m256i PvA = _mm256_loadu_si256((const __m256i *)(state + l));
        __m256i PvB = _mm256_loadu_si256((const __m256i *)(state + l + 4));
        __m256i MvA = _mm256_loadu_si256((const __m256i *)(state + lanes + l));
        __m256i MvB = _mm256_loadu_si256((const __m256i *)(state + lanes + l + 4));
        __m256i SCA = _mm256_loadu_si256((const __m256i *)(state + 2 * (size_t)lanes + l));
        __m256i SCB = _mm256_loadu_si256((const __m256i *)(state + 2 * (size_t)lanes + l + 4));
        const uint64_t *col = peq + l;
        int whole = 1;
        for (uint32_t j = l; j < l + 8; j++) whole &= rep->info[j].width == MY_WORD || rep->info[j].fields == 0;
#define MY_AVX2_LOOP(STEP_A, STEP_B)                                                                  \
        for (size_t i = 0; i < n; i++) {                                                              \
            const uint64_t *row = col + rowoff[i];                                                    \
            const __m256i EqA = _mm256_loadu_si256((const __m256i *)row);                             \
            const __m256i EqB = _mm256_loadu_si256((const __m256i *)(row + 4));                       \
            STEP_A;                                                                                   \
            STEP_B;                                                                                   \
            const __m256i hit = _mm256_or_si256(_mm256_andnot_si256(SCA, FA), _mm256_andnot_si256(SCB, FB)); \
            if (APX_UNLIKELY(!_mm256_testz_si256(hit, hit))) {                                        \
                my_report_vec(rep, l, SCA, FA, end0 + i);                                             \
                my_report_vec(rep, l + 4, SCB, FB, end0 + i);                                         \
            }                                                                                         \
        }
        if (whole) {
            MY_AVX2_LOOP(MY_AVX2_STEP_WHOLE(EqA, PvA, MvA, SCA), MY_AVX2_STEP_WHOLE(EqB, PvB, MvB, SCB))
        } else {
            MY_AVX2_LOOP(MY_AVX2_STEP(EqA, PvA, MvA, SCA, FA, NFA, NSA, SHA),
                         MY_AVX2_STEP(EqB, PvB, MvB, SCB, FB, NFB, NSB, SHB))
        }
#undef MY_AVX2_LOOP
        _mm256_storeu_si256((__m256i *)(state + l), PvA);
        _mm256_storeu_si256((__m256i *)(state + l + 4), PvB);
        _mm256_storeu_si256((__m256i *)(state + lanes + l), MvA);
        _mm256_storeu_si256((__m256i *)(state + lanes + l + 4), MvB);
        _mm256_storeu_si256((__m256i *)(state + 2 * (size_t)lanes + l), SCA);
        _mm256_storeu_si256((__m256i *)(state + 2 * (size_t)lanes + l + 4), SCB);
    }
}
#endif

/* ------------------------------------------------------ short keys: AVX-512 */

#ifdef APX_HAVE_AVX2
#define MY_AVX512_STEP(Eq, Pv, Mv, SC, F, NF, NS, SH)                                                 \
    do {                                                                                               \
        __m512i Ph_, Mh_;                                                                              \
        apx_myers_step_fields_avx512(Eq, &Pv, &Mv, NF, NS, &Ph_, &Mh_);                                \
        SC = _mm512_add_epi64(_mm512_sub_epi64(SC, _mm512_srlv_epi64(_mm512_and_si512(Mh_, F), SH)),      \
                              _mm512_srlv_epi64(_mm512_and_si512(Ph_, F), SH));                        \
    } while (0)

#define MY_AVX512_STEP_WHOLE(Eq, Pv, Mv, SC)                                                           \
    do {                                                                                               \
        __m512i Ph_, Mh_;                                                                              \
        apx_myers_step_avx512(Eq, &Pv, &Mv, &Ph_, &Mh_);                                               \
        SC = _mm512_add_epi64(_mm512_sub_epi64(SC, _mm512_srli_epi64(Mh_, 63)), _mm512_srli_epi64(Ph_, 63)); \
    } while (0)

__attribute__((target("avx512f"))) static void my_report_vec512(const my_reporter *rep, uint32_t l0, __m512i SC,
                                                                __m512i F, uint64_t end) {
    uint64_t sc[8], f[8];
    _mm512_storeu_si512((void *)sc, SC);
    _mm512_storeu_si512((void *)f, F);
    for (unsigned j = 0; j < 8; j++) {
        uint64_t hits = ~sc[j] & f[j];
        if (hits) my_report_lane(rep, l0 + j, hits, sc[j], end);
    }
}

/* One group of eight lanes per pass (the lane count is a multiple of 8). */
__attribute__((target("avx512f"))) static void my_short_avx512(const sm_my_header *h, const uint64_t *lc,
                                                              const uint64_t *peq, uint64_t *state,
                                                              const uint32_t *rowoff, size_t n, uint64_t end0,
                                                              const my_reporter *rep) {
    const uint32_t lanes = h->lanes;
    for (uint32_t l = 0; l < lanes; l += 8) {
        if (rep->info[l].fields == 0) break; /* lanes are filled in order */
        const __m512i F = _mm512_loadu_si512((const void *)(lc + (size_t)MY_F * lanes + l));
        const __m512i NS = _mm512_loadu_si512((const void *)(lc + (size_t)MY_NS * lanes + l));
        const __m512i SH = _mm512_loadu_si512((const void *)(lc + (size_t)MY_SH * lanes + l));
        const __m512i NF = _mm512_xor_si512(F, _mm512_set1_epi64(-1));
        __m512i Pv = _mm512_loadu_si512((const void *)(state + l));
        __m512i Mv = _mm512_loadu_si512((const void *)(state + lanes + l));
        __m512i SC = _mm512_loadu_si512((const void *)(state + 2 * (size_t)lanes + l));
        const uint64_t *col = peq + l;
        int whole = 1;
        for (uint32_t j = l; j < l + 8; j++) whole &= rep->info[j].width == MY_WORD || rep->info[j].fields == 0;
#define MY_AVX512_LOOP(STEP)                                                                            \
        for (size_t i = 0; i < n; i++) {                                                                \
            const __m512i Eq = _mm512_loadu_si512((const void *)(col + rowoff[i]));                     \
            STEP;                                                                                       \
            if (APX_UNLIKELY(_mm512_test_epi64_mask(_mm512_andnot_si512(SC, F), F) != 0))               \
                my_report_vec512(rep, l, SC, F, end0 + i);                                              \
        }
        if (whole) {
            MY_AVX512_LOOP(MY_AVX512_STEP_WHOLE(Eq, Pv, Mv, SC))
        } else {
            MY_AVX512_LOOP(MY_AVX512_STEP(Eq, Pv, Mv, SC, F, NF, NS, SH))
        }
#undef MY_AVX512_LOOP
        _mm512_storeu_si512((void *)(state + l), Pv);
        _mm512_storeu_si512((void *)(state + lanes + l), Mv);
        _mm512_storeu_si512((void *)(state + 2 * (size_t)lanes + l), SC);
    }
}
#endif

/* ------------------------------------------------------------- long keys */

static void my_long_scan(const sm_my_long *key, const uint64_t *peq, const uint16_t *class_of, uint64_t *st,
                         const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    const uint32_t nb = key->blocks, last = nb - 1;
    const unsigned top_last = (key->length - 1) % MY_WORD;
    const int64_t k = key->k;
    const int64_t h_last = (int64_t)key->length - (int64_t)last * MY_WORD;
    uint64_t *P = st + 1, *M = P + nb;
    int64_t *score = (int64_t *)(M + nb);
    uint32_t y = (uint32_t)st[0];
    const uint32_t id = key->output;
    for (size_t i = 0; i < len; i++) {
        const uint64_t *eq = peq + (size_t)class_of[text[i]] * nb;
        int carry = apx_myers_blocks(P, M, eq, y, last, top_last, 0, score);
        /* Ukkonen's cut-off: the next block may hold a cell <= k only when the
           bottom of this one was at k in the previous column and the first
           cell below it gains a match or a smaller neighbour above. */
        if (y < last && score[y] - carry <= k && ((eq[y + 1] & 1u) || carry < 0)) {
            y++;
            P[y] = ~0ull;
            M[y] = 0;
            int c2 = apx_myers_block(&P[y], &M[y], eq[y], carry, y == last ? top_last : MY_WORD - 1);
            score[y] = score[y - 1] - carry + (y == last ? h_last : (int64_t)MY_WORD) + c2;
        } else {
            while (y > 0 && score[y] >= k + (y == last ? h_last : (int64_t)MY_WORD)) y--;
        }
        if (y == last && score[y] <= k) sm_approx_emit_end(sink, id >> 1, (int)(id & 1u), pos0 + i + 1, (unsigned)score[y]);
    }
    st[0] = y;
}

/* ------------------------------------------------------------------ scan */

void sm_my_scan_mode(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path, sm_lanes_mode lanes) {
    const sm_my_header *h = (const sm_my_header *)section;
    /* The short keys over the text in lanes first (when that pays), then
       over what the lanes left with the carried state. */
    const sm_approx_path lane_path = path;
    const size_t done = h->lanes ? sm_my_lanes_scan(section, state, text, len, pos0, sink, path, lanes) : 0;
    const uint8_t *rest = text + done;
    const size_t nrest = len - done;
    const uint64_t rest0 = pos0 + done;
    /* One pass of a vector step costs about as much as one lane of the scalar
       step, so a single lane runs faster alone. */
    if (path == SM_APPROX_AUTO && h->lanes == 8 && ((const sm_my_lane *)(section + h->lane_info_off))[1].fields == 0)
        path = SM_APPROX_SCALAR;
    path = sm_apx_resolve_path(path, SM_APPROX_AVX512);
    if (h->lanes) {
        const uint64_t *lc = (const uint64_t *)(section + h->lane_const_off);
        const uint64_t *peq = (const uint64_t *)(section + h->peq_off);
        my_reporter rep = {(const sm_my_lane *)(section + h->lane_info_off),
                           (const sm_my_field *)(section + h->fields_off), sink};
        uint32_t rowoff[MY_TEXT_BLOCK];
        for (size_t at = 0; at < nrest; at += MY_TEXT_BLOCK) {
            size_t n = nrest - at < MY_TEXT_BLOCK ? nrest - at : MY_TEXT_BLOCK;
            for (size_t i = 0; i < n; i++) rowoff[i] = (uint32_t)h->class_of[rest[at + i]] * h->lanes;
#ifdef APX_HAVE_AVX2
            if (path == SM_APPROX_AVX512) {
                my_short_avx512(h, lc, peq, state, rowoff, n, rest0 + at + 1, &rep);
                continue;
            }
            if (path == SM_APPROX_AVX2) {
                my_short_avx2(h, lc, peq, state, rowoff, n, rest0 + at + 1, &rep);
                continue;
            }
#endif
            my_short_scalar(h, lc, peq, state, rowoff, n, rest0 + at + 1, &rep);
        }
    }
    const sm_my_long *lk = (const sm_my_long *)(section + h->long_off);
    const uint64_t *lpeq = (const uint64_t *)(section + h->long_peq_off);
    for (uint32_t i = 0; i < h->long_keys; i++) {
        uint64_t *st = state + lk[i].state_at;
        const size_t ldone = sm_my_long_lanes_scan(section, i, st, text, len, pos0, sink, lane_path, lanes);
        my_long_scan(&lk[i], lpeq + lk[i].peq_at, h->class_of, st, text + ldone, len - ldone, pos0 + ldone, sink);
    }
}

void sm_my_scan_path(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path) {
    sm_my_scan_mode(section, state, text, len, pos0, sink, path, SM_LANES_AUTO);
}

void sm_my_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    sm_my_scan_path(section, state, text, len, pos0, sink, SM_APPROX_AUTO);
}
