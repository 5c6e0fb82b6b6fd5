/* Start recovery for k-edits end events, and the report-best fragments. */
#include "engines/approx/approx_common.h"

#include <stdlib.h>

/* Reading the text backwards from end against the reversed key turns
   "edit(key, text[end - c, end)) for every c" into one global alignment
   whose last row, column c, is that distance. The first c (largest start)
   where it equals the distance wins. */

/* Keys of up to 64 symbols: Myers' bit vectors in global mode (the top row
   grows by one per column, so +1 enters at the bottom of every column). */
static uint64_t es_start_bitparallel(const uint8_t *key, uint32_t m, sm_alphabet alphabet, unsigned flags,
                                     const uint8_t *text_end, uint64_t max_len, uint64_t end, uint32_t distance) {
    uint64_t eq_of[256];
    memset(eq_of, 0, sizeof eq_of);
    unsigned syms[64];
    for (uint32_t i = 0; i < m; i++) syms[i] = apx_key_symbol(key[m - 1 - i], alphabet, flags);
    for (unsigned b = 0; b < 256; b++) {
        unsigned c = apx_key_symbol((uint8_t)b, alphabet, flags);
        uint64_t eq = 0;
        for (uint32_t i = 0; i < m; i++)
            if (apx_class_matches(c, syms[i], alphabet, flags)) eq |= 1ull << i;
        eq_of[b] = eq;
    }
    const unsigned top = m - 1;
    uint64_t Pv = m == 64 ? ~0ull : ((1ull << m) - 1), Mv = 0;
    int64_t score = m;
    if (score == (int64_t)distance) return end;
    for (uint64_t c = 1; c <= max_len; c++) {
        const uint64_t Eq = eq_of[text_end[-(int64_t)c]];
        const uint64_t Xv = Eq | Mv;
        const uint64_t Xh = (((Eq & Pv) + Pv) ^ Pv) | Eq;
        uint64_t Ph = Mv | ~(Xh | Pv);
        uint64_t Mh = Pv & Xh;
        score += (int64_t)((Ph >> top) & 1u) - (int64_t)((Mh >> top) & 1u);
        Ph = (Ph << 1) | 1u;
        Mh <<= 1;
        Pv = Mh | ~(Xv | Ph);
        Mv = Ph & Xv;
        if (score == (int64_t)distance) return end - c;
    }
    return SM_START_UNKNOWN;
}

static uint64_t es_start_dp(const uint8_t *key, uint32_t m, sm_alphabet alphabet, unsigned flags,
                            const uint8_t *text_end, uint64_t max_len, uint64_t end, uint32_t distance) {
    uint32_t *col = malloc(((size_t)m + 1) * sizeof *col);
    unsigned *syms = malloc((size_t)m * sizeof *syms);
    uint64_t found = SM_START_UNKNOWN;
    if (!col || !syms) goto done;
    for (uint32_t i = 0; i < m; i++) syms[i] = apx_key_symbol(key[m - 1 - i], alphabet, flags);
    /* col[i] = edit(last i key symbols, last c text bytes) */
    for (uint32_t i = 0; i <= m; i++) col[i] = i;
    if (m == distance) { found = end; goto done; }
    for (uint64_t c = 1; c <= max_len; c++) {
        unsigned t = apx_key_symbol(text_end[-(int64_t)c], alphabet, flags);
        uint32_t diag = col[0];
        col[0] = (uint32_t)c;
        for (uint32_t i = 1; i <= m; i++) {
            uint32_t best = diag + (apx_class_matches(t, syms[i - 1], alphabet, flags) ? 0u : 1u);
            uint32_t up = col[i - 1] + 1, left = col[i] + 1;
            if (up < best) best = up;
            if (left < best) best = left;
            diag = col[i];
            col[i] = best;
        }
        if (col[m] == distance) { found = end - c; break; }
    }
done:
    free(col);
    free(syms);
    return found;
}

uint64_t sm_edit_start(const uint8_t *key, uint32_t m, sm_alphabet alphabet, unsigned flags, const uint8_t *text,
                       size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t distance) {
    if (!key || m == 0 || end < text_pos0 || end - text_pos0 > text_len || distance > m) return SM_START_UNKNOWN;
    /* edit >= |length - m|, so no start lies more than m + distance before end. */
    uint64_t max_len = end - text_pos0;
    uint64_t reach = (uint64_t)m + distance;
    if (max_len > reach) max_len = reach;
    const uint8_t *text_end = text + (end - text_pos0);
    if (m <= 64) return es_start_bitparallel(key, m, alphabet, flags, text_end, max_len, end, distance);
    return es_start_dp(key, m, alphabet, flags, text_end, max_len, end, distance);
}

/* ------------------------------------------------------------ report best */

void sm_best_begin(sm_best_builder *b, uint64_t range_first, uint64_t range_last) {
    memset(b, 0, sizeof *b);
    b->range_first = range_first;
    b->range_last = range_last;
}

static void best_close(sm_best_builder *b, sm_best_fragment *done) {
    b->run.touches_right = b->run.last_end == b->range_last;
    *done = b->run;
    b->open = 0;
}

int sm_best_push(sm_best_builder *b, uint64_t end, uint32_t distance, sm_best_fragment *done) {
    if (b->open && end == b->run.last_end + 1) {
        b->run.last_end = end;
        if (distance < b->run.best_distance) { /* strictly less: the leftmost end wins ties */
            b->run.best_end = end;
            b->run.best_distance = distance;
        }
        return 0;
    }
    int closed = 0;
    if (b->open) {
        best_close(b, done);
        closed = 1;
    }
    memset(&b->run, 0, sizeof b->run);
    b->run.first_end = b->run.last_end = b->run.best_end = end;
    b->run.best_distance = distance;
    b->run.touches_left = end == b->range_first;
    b->open = 1;
    return closed;
}

int sm_best_end(sm_best_builder *b, sm_best_fragment *done) {
    if (!b->open) return 0;
    best_close(b, done);
    return 1;
}

int sm_best_adjacent(const sm_best_fragment *a, const sm_best_fragment *b) {
    return a->touches_right && b->touches_left && b->first_end == a->last_end + 1;
}

void sm_best_merge(const sm_best_fragment *a, const sm_best_fragment *b, sm_best_fragment *out) {
    sm_best_fragment r;
    memset(&r, 0, sizeof r);
    r.first_end = a->first_end;
    r.last_end = b->last_end;
    if (b->best_distance < a->best_distance) {
        r.best_end = b->best_end;
        r.best_distance = b->best_distance;
    } else {
        r.best_end = a->best_end;
        r.best_distance = a->best_distance;
    }
    r.touches_left = a->touches_left;
    r.touches_right = b->touches_right;
    *out = r;
}
