/* The alignment of a hit (sm_hit_cigar): the pattern against the hit's
 * text, in the pattern's orientation, as a CIGAR string.
 *
 * Exact and k-mismatch hits are windows of the pattern's length, compared
 * symbol by symbol. A k-edit hit's text is at edit distance `errors` from
 * the pattern (the start is chosen so: include/seqmatch.h), so a global
 * alignment of that cost exists, and every cell of its path lies within
 * `errors` of the diagonal (each step off it is an insertion or deletion):
 * the DP runs in that band only. With a PAM the PAM part matches its text
 * exactly and the guide is aligned to the rest. */
#include <stdlib.h>

#include "base/internal.h"

/* The 4-bit set of A C G T swapped to its complement. */
static uint8_t complement_set(uint8_t set) {
    return (uint8_t)(((set & 1) << 3) | ((set & 2) << 1) | ((set & 4) >> 1) | ((set & 8) >> 3));
}

typedef struct {
    int dna;
    int text_iupac;
    int fold_case;
    const uint8_t *pattern; /* dna: sets; text: bytes */
    const uint8_t *text;    /* in the pattern's orientation, the same forms */
} align_input;

static int symbols_match(const align_input *in, size_t i, size_t j) {
    uint8_t p = in->pattern[i], t = in->text[j];
    if (in->dna) {
        if (in->text_iupac) return (p & t) != 0;
        /* a text symbol matches only as one of A, C, G, T */
        return t && !(t & (t - 1)) && (p & t);
    }
    if (in->fold_case) {
        if (p >= 'A' && p <= 'Z') p = (uint8_t)(p + 32);
        if (t >= 'A' && t <= 'Z') t = (uint8_t)(t + 32);
    }
    return p == t;
}

/* Operations, one per column, built backwards. */
typedef struct {
    char *ops;
    size_t n, cap;
} op_list;

static int op_push(op_list *l, char op) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char *p = realloc(l->ops, cap);
        if (!p) return -1;
        l->ops = p;
        l->cap = cap;
    }
    l->ops[l->n++] = op;
    return 0;
}

#define BAND_INF UINT32_MAX

/* Global alignment of pattern[0, m) with text[0, n) at cost e, in the band
   |i - j| <= e; the operations appended backwards to ops. Returns 0, -1 when
   out of memory, 1 when no alignment costs e or less (*cost the least). */
static int align_band(const align_input *in, size_t m, size_t n, uint32_t e, op_list *ops, uint32_t *cost) {
    size_t width = 2 * (size_t)e + 1;
    /* cell (i, j) at row i, column j - i + e; its value and the step into it */
    uint32_t *value = malloc((m + 1) * width * sizeof *value);
    uint8_t *from = malloc((m + 1) * width);
    if (!value || !from) {
        free(value);
        free(from);
        return -1;
    }
    for (size_t i = 0; i <= m; i++) {
        for (size_t c = 0; c < width; c++) {
            size_t cell = i * width + c;
            value[cell] = BAND_INF;
            from[cell] = 0;
            if (c + i < e) continue; /* j < 0 */
            size_t j = c + i - e;
            if (j > n) continue;
            if (i == 0 && j == 0) {
                value[cell] = 0;
                continue;
            }
            uint32_t best = BAND_INF;
            uint8_t step = 0;
            /* diagonal: '=' or 'X' (preferred on ties, so gaps go left) */
            if (i > 0 && j > 0 && value[(i - 1) * width + c] != BAND_INF) {
                int same = symbols_match(in, i - 1, j - 1);
                best = value[(i - 1) * width + c] + (same ? 0 : 1);
                step = same ? '=' : 'X';
            }
            /* 'I': a pattern symbol with no text symbol, from (i - 1, j) */
            if (i > 0 && c + 1 < width && value[(i - 1) * width + c + 1] != BAND_INF &&
                value[(i - 1) * width + c + 1] + 1 < best) {
                best = value[(i - 1) * width + c + 1] + 1;
                step = 'I';
            }
            /* 'D': a text symbol with no pattern symbol, from (i, j - 1) */
            if (j > 0 && c > 0 && value[i * width + c - 1] != BAND_INF && value[i * width + c - 1] + 1 < best) {
                best = value[i * width + c - 1] + 1;
                step = 'D';
            }
            value[cell] = best;
            from[cell] = step;
        }
    }
    int rc = 1;
    *cost = BAND_INF;
    if (n + e >= m && m + e >= n) {
        size_t c = n + e - m;
        *cost = value[m * width + c];
        if (*cost <= e) {
            rc = 0;
            size_t i = m;
            while (rc == 0 && (i > 0 || c != e)) {
                char step = (char)from[i * width + c];
                if (op_push(ops, step) != 0) rc = -1;
                if (step == '=' || step == 'X') i--;
                else if (step == 'I') i--, c++;
                else c--;
            }
        }
    }
    free(value);
    free(from);
    return rc;
}

int sm_hit_cigar(const sm_db *db, const sm_hit *hit, char *buf, size_t cap, size_t *len) {
    if (len) *len = 0;
    if (!db || !hit || !hit->text || hit->end < hit->start) return SM_ERR_INVALID;
    const sm_db_header *h = sm_db_head(db);
    size_t m = 0;
    const char *seq = sm_db_pattern_seq(db, hit->pattern, &m);
    if (!seq || m == 0) return SM_ERR_INVALID;
    size_t n = (size_t)(hit->end - hit->start);
    int reverse = hit->strand == '-';
    if (reverse && h->alphabet != SM_ALPHABET_DNA) return SM_ERR_INVALID;

    align_input in;
    in.dna = h->alphabet == SM_ALPHABET_DNA;
    in.text_iupac = (h->flags & SM_FLAG_TEXT_IUPAC) != 0;
    in.fold_case = (h->flags & SM_FLAG_IGNORE_CASE) != 0;
    uint8_t *forms = malloc(m + n + 1);
    if (!forms) return SM_ERR_NOMEM;
    uint8_t *p = forms, *t = forms + m;
    const uint8_t *raw = (const uint8_t *)hit->text;
    for (size_t i = 0; i < m; i++) p[i] = in.dna ? sm_nt_set[(uint8_t)seq[i]] : (uint8_t)seq[i];
    for (size_t j = 0; j < n; j++) {
        if (!in.dna) t[j] = raw[j];
        else t[j] = reverse ? complement_set(sm_nt_set[raw[n - 1 - j]]) : sm_nt_set[raw[j]];
    }
    in.pattern = p;
    in.text = t;

    op_list ops = {NULL, 0, 0};
    int status = SM_OK;
    uint32_t errors = hit->errors, counted = 0;
    if (h->match == SM_MATCH_MISMATCHES && h->pam_length && n != m) {
        /* a site with a bulge: its rows (sm_hit_site) read column by column */
        sm_site site;
        char *rows = malloc(2 * (n + m + 1));
        if (!rows) status = SM_ERR_NOMEM;
        else if ((status = sm_hit_site(db, hit, &site, rows, rows + n + m + 1, n + m + 1)) == SM_OK)
            for (size_t c = strlen(rows); status == SM_OK && c-- > 0;) {
                char g = rows[c], d = rows[n + m + 1 + c];
                char op = g == '-' ? 'D' : d == '-' ? 'I' : d >= 'a' && d <= 'z' ? 'X' : '=';
                if (op_push(&ops, op) != 0) status = SM_ERR_NOMEM;
            }
        free(rows);
    } else if (h->match != SM_MATCH_EDITS) {
        /* a window of the pattern's length */
        if (n != m) status = SM_ERR_INVALID;
        for (size_t i = m; status == SM_OK && i-- > 0;) {
            int same = symbols_match(&in, i, i);
            counted += !same;
            if (op_push(&ops, same ? '=' : 'X') != 0) status = SM_ERR_NOMEM;
        }
        if (status == SM_OK && counted != errors) status = SM_ERR_INVALID;
    } else {
        /* the PAM (its last q symbols, or its first q for a 5' PAM) exact
           against the text's, the guide aligned to the rest */
        size_t q = h->pam_length;
        int five = h->pam_side == SM_PAM_5PRIME;
        if (q >= m || q > n) status = SM_ERR_INVALID;
        for (size_t i = 0; status == SM_OK && i < q; i++)
            if (!(five ? symbols_match(&in, i, i) : symbols_match(&in, m - 1 - i, n - 1 - i))) status = SM_ERR_INVALID;
        for (size_t i = 0; status == SM_OK && !five && i < q; i++)
            if (op_push(&ops, '=') != 0) status = SM_ERR_NOMEM;
        uint32_t cost = 0;
        if (status == SM_OK) {
            if (five) {
                in.pattern += q;
                in.text += q;
            }
            int rc = align_band(&in, m - q, n - q, errors, &ops, &cost);
            if (rc < 0) status = SM_ERR_NOMEM;
            else if (rc > 0 || cost != errors) status = SM_ERR_INVALID;
        }
        for (size_t i = 0; status == SM_OK && five && i < q; i++)
            if (op_push(&ops, '=') != 0) status = SM_ERR_NOMEM;
    }
    free(forms);

    /* Run lengths, read forwards (the list was built from the end). */
    size_t need = 0;
    char *out = buf;
    for (size_t k = ops.n; status == SM_OK && k > 0;) {
        char op = ops.ops[k - 1];
        size_t run = 0;
        while (k > 0 && ops.ops[k - 1] == op) run++, k--;
        char digits[24];
        int nd = 0;
        do digits[nd++] = (char)('0' + run % 10);
        while ((run /= 10) > 0);
        for (int d = nd; d-- > 0;) {
            if (buf && need + 1 < cap) out[need] = digits[d];
            need++;
        }
        if (buf && need + 1 < cap) out[need] = op;
        need++;
    }
    free(ops.ops);
    if (status != SM_OK) return status;
    if (len) *len = need;
    if (!buf || need + 1 > cap) return SM_ERR_LIMIT;
    buf[need] = '\0';
    return SM_OK;
}
