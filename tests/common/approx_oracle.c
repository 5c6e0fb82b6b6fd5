/* Approximate-search oracle; see approx_oracle.h. */
#include "approx_oracle.h"

#include <stdlib.h>

#include "oracle.h"

static int ao_match(char p, char t, sm_alphabet alphabet, unsigned flags) {
    return oracle_symbol_matches((unsigned char)p, (unsigned char)t, alphabet, flags);
}

uint32_t aoracle_mismatches(const char *key, size_t m, const char *text, sm_alphabet alphabet, unsigned flags) {
    uint32_t n = 0;
    for (size_t i = 0; i < m; i++)
        if (!ao_match(key[i], text[i], alphabet, flags)) n++;
    return n;
}

static uint32_t ao_min3(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t x = a < b ? a : b;
    return x < c ? x : c;
}

uint32_t aoracle_edit(const char *key, size_t m, const char *text, size_t n, sm_alphabet alphabet, unsigned flags) {
    /* Wagner-Fischer, one row of the text dimension at a time. */
    uint32_t *row = malloc((n + 1) * sizeof *row);
    if (!row) abort();
    for (size_t j = 0; j <= n; j++) row[j] = (uint32_t)j;
    for (size_t i = 1; i <= m; i++) {
        uint32_t diag = row[0];
        row[0] = (uint32_t)i;
        for (size_t j = 1; j <= n; j++) {
            uint32_t sub = diag + (ao_match(key[i - 1], text[j - 1], alphabet, flags) ? 0u : 1u);
            diag = row[j];
            row[j] = ao_min3(sub, row[j] + 1, row[j - 1] + 1);
        }
    }
    uint32_t d = row[n];
    free(row);
    return d;
}

uint32_t aoracle_D_by_definition(const char *key, size_t m, const char *text, size_t j, sm_alphabet alphabet,
                                 unsigned flags) {
    uint32_t best = UINT32_MAX;
    for (size_t s = 0; s <= j; s++) {
        uint32_t d = aoracle_edit(key, m, text + s, j - s, alphabet, flags);
        if (d < best) best = d;
    }
    return best;
}

int aoracle_D_all(const char *key, size_t m, const char *text, size_t n, sm_alphabet alphabet, unsigned flags,
                  uint32_t *D) {
    /* col[i] = least edit between key[0, i) and a substring ending at j. */
    uint32_t *col = malloc((m + 1) * sizeof *col);
    if (!col) return -1;
    for (size_t i = 0; i <= m; i++) col[i] = (uint32_t)i;
    D[0] = (uint32_t)m;
    for (size_t j = 1; j <= n; j++) {
        uint32_t diag = col[0];
        col[0] = 0;
        for (size_t i = 1; i <= m; i++) {
            uint32_t sub = diag + (ao_match(key[i - 1], text[j - 1], alphabet, flags) ? 0u : 1u);
            diag = col[i];
            col[i] = ao_min3(sub, col[i] + 1, col[i - 1] + 1);
        }
        D[j] = col[m];
    }
    free(col);
    return 0;
}

uint64_t aoracle_edit_start(const char *key, size_t m, const char *text, size_t j, uint32_t d, size_t lo,
                            sm_alphabet alphabet, unsigned flags) {
    for (size_t s = j + 1; s-- > lo;)
        if (aoracle_edit(key, m, text + s, j - s, alphabet, flags) == d) return s;
    return (uint64_t)-1;
}

/* ---------------------------------------------------------------- PAM */

/* Upper case, U as T: the letters compared; reverse complemented when asked. */
static int ao_key(const char *seq, size_t len, int reverse, char *out) {
    if (reverse) return oracle_reverse_complement(seq, len, out);
    for (size_t i = 0; i < len; i++) {
        char c = seq[i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 32);
        if (c == 'U') c = 'T';
        out[i] = c;
    }
    return 0;
}

int aoracle_pam_hits(const char *guide, size_t g, const char *pam, size_t q, int reverse, sm_match match,
                     uint32_t k, sm_report report, const char *text, size_t n, sm_alphabet alphabet, unsigned flags,
                     uint64_t record, uint32_t pattern, tu_hits *out) {
    char *G = malloc(g + 1), *Q = malloc(q + 1);
    uint32_t *Dp = malloc((n + 1) * sizeof *Dp);
    uint64_t *start = malloc((n + 1) * sizeof *start);
    if (!G || !Q || !Dp || !start) {
        free(G), free(Q), free(Dp), free(start);
        return -1;
    }
    /* '-': the key rc(G + Q) = rc(Q) + rc(G): G and Q stand for rc(G) and rc(Q). */
    ao_key(guide, g, reverse, G);
    ao_key(pam, q, reverse, Q);
    const size_t m = g + q;
    const char strand = reverse ? '-' : '+';
    if (match != SM_MATCH_EDITS || k == 0) {
        uint32_t limit = match == SM_MATCH_EXACT ? 0 : k;
        /* The window [i, i + m): PAM exact (at its end for '+', its start for
           '-'), at most limit mismatches in the guide. */
        for (size_t i = 0; i + m <= n; i++) {
            size_t at_pam = reverse ? i : i + g, at_guide = reverse ? i + q : i;
            if (aoracle_mismatches(Q, q, text + at_pam, alphabet, flags) != 0) continue;
            uint32_t mm = aoracle_mismatches(G, g, text + at_guide, alphabet, flags);
            if (mm <= limit) tu_hits_add(out, record, i, i + m, pattern, strand, mm);
        }
        free(G), free(Q), free(Dp), free(start);
        return 0;
    }
    const uint32_t INF = UINT32_MAX;
    if (!reverse) {
        /* D'(j) = D_G(j - q) when text[j - q, j) matches Q, else infinite;
           start = the largest s with edit(G, text[s, j - q)) = D'(j). */
        uint32_t *D = malloc((n + 1) * sizeof *D);
        if (!D || aoracle_D_all(G, g, text, n, alphabet, flags, D) != 0) abort();
        for (size_t j = 0; j <= n; j++) {
            Dp[j] = INF;
            if (j < q || aoracle_mismatches(Q, q, text + j - q, alphabet, flags) != 0) continue;
            Dp[j] = D[j - q];
            start[j] = aoracle_edit_start(G, g, text, j - q, Dp[j], 0, alphabet, flags);
        }
        free(D);
    } else {
        /* D'(j) = the least edit(G, text[s + q, j)) over the s where
           text[s, s + q) matches Q; start = the largest such s reaching it.
           Only s with j - q - s <= g + k can reach k or less. */
        for (size_t j = 0; j <= n; j++) {
            Dp[j] = INF;
            if (j < q) continue;
            size_t lo = j - q > g + k ? j - q - g - k : 0;
            for (size_t s = j - q + 1; s-- > lo;) {
                if (aoracle_mismatches(Q, q, text + s, alphabet, flags) != 0) continue;
                uint32_t d = aoracle_edit(G, g, text + s + q, j - q - s, alphabet, flags);
                if (d < Dp[j]) {
                    Dp[j] = d;
                    start[j] = s;
                }
            }
        }
    }
    /* Ends with D' <= k: every one, or the best of each run (leftmost on ties). */
    size_t j = 1;
    while (j <= n) {
        if (Dp[j] > k) {
            j++;
            continue;
        }
        if (report == SM_REPORT_ENDS) {
            tu_hits_add(out, record, start[j], j, pattern, strand, Dp[j]);
            j++;
            continue;
        }
        size_t best = j;
        while (j <= n && Dp[j] <= k) {
            if (Dp[j] < Dp[best]) best = j;
            j++;
        }
        tu_hits_add(out, record, start[best], best, pattern, strand, Dp[best]);
    }
    free(G), free(Q), free(Dp), free(start);
    return 0;
}

int aoracle_overlap_hits(const char *key, size_t m, const char *text, size_t n, uint32_t k, uint32_t min_overlap,
                         sm_alphabet alphabet, unsigned flags, uint64_t record, uint32_t pattern, char strand,
                         tu_hits *out) {
    /* best[a * (n + 1) + b]: the fewest mismatches of a part [a, b), or UINT32_MAX */
    size_t cells = (n + 1) * (n + 1);
    uint32_t *best = malloc((cells ? cells : 1) * sizeof *best);
    if (!best) return -1;
    for (size_t i = 0; i < cells; i++) best[i] = UINT32_MAX;
    for (long long s = -(long long)m + 1; s < (long long)n; s++) {
        long long a = s > 0 ? s : 0, b = s + (long long)m < (long long)n ? s + (long long)m : (long long)n;
        int inside = s >= 0 && s + (long long)m <= (long long)n;
        if (b <= a) continue;
        if (!inside && (min_overlap == 0 || b - a < (long long)min_overlap)) continue;
        uint32_t mm = aoracle_mismatches(key + (a - s), (size_t)(b - a), text + a, alphabet, flags);
        if (mm <= k && mm < best[a * (n + 1) + b]) best[a * (n + 1) + b] = mm;
    }
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b++)
            if (best[a * (n + 1) + b] != UINT32_MAX) tu_hits_add(out, record, a, b, pattern, strand, best[a * (n + 1) + b]);
    free(best);
    return out->out_of_memory ? -1 : 0;
}

/* One end j's least errors and the largest start reaching them. */
typedef struct {
    uint32_t d;
    uint64_t s;
} ao_end;

static void ao_take(ao_end *e, uint32_t d, uint64_t s) {
    if (d < e->d || (d == e->d && s > e->s)) e->d = d, e->s = s;
}

/* Ends with d <= k to out: every one (report ends) or the least of each run
   of consecutive ends, leftmost on ties. partial: 1 marks them. */
static void ao_runs(const ao_end *v, size_t n, uint32_t k, sm_report report, uint64_t record, uint32_t pattern,
                    char strand, tu_hits *out) {
    for (size_t j = 1; j <= n;) {
        if (v[j].d > k) {
            j++;
            continue;
        }
        size_t best = j++;
        if (report != SM_REPORT_ENDS)
            for (; j <= n && v[j].d <= k; j++)
                if (v[j].d < v[best].d) best = j;
        tu_hits_add(out, record, v[best].s, best, pattern, strand, v[best].d);
    }
}

int aoracle_edit_overlap_hits(const char *key, size_t m, const char *text, size_t n, uint32_t k, uint32_t min_overlap,
                              sm_report report, sm_alphabet alphabet, unsigned flags, uint64_t record, uint32_t pattern,
                              char strand, tu_hits *out, tu_hits *partials) {
    const uint32_t INF = UINT32_MAX;
    ao_end *whole = malloc((n + 1) * sizeof *whole), *part = malloc((n + 1) * sizeof *part);
    uint32_t *D = malloc((n + 1) * sizeof *D);
    if (!whole || !part || !D || aoracle_D_all(key, m, text, n, alphabet, flags, D) != 0) {
        free(whole), free(part), free(D);
        return -1;
    }
    for (size_t j = 0; j <= n; j++) {
        whole[j].d = D[j];
        whole[j].s = D[j] <= k ? aoracle_edit_start(key, m, text, j, D[j], 0, alphabet, flags) : 0;
        part[j].d = INF;
        part[j].s = 0;
        if (j == 0 || min_overlap == 0) continue;
        /* edit(P[a, b), text[s, j)) >= |(b - a) - (j - s)|: only lengths within k are tried */
#define AO_NEAR(x, y) ((x) + k >= (y) && (y) + k >= (x))
        /* a suffix P[a, m), a >= 1, off the start: s = 0 */
        for (size_t a = 1; a + min_overlap <= m; a++)
            if (AO_NEAR(m - a, j)) ao_take(&part[j], aoracle_edit(key + a, m - a, text, j, alphabet, flags), 0);
        if (j < n) continue;
        /* a prefix P[0, b), b < m, off the end: j = n, any s */
        for (size_t b = min_overlap; b < m; b++)
            for (size_t s = 0; s <= n; s++)
                if (AO_NEAR(b, n - s)) ao_take(&part[j], aoracle_edit(key, b, text + s, n - s, alphabet, flags), s);
        /* a middle part P[a, b), off both: s = 0, j = n */
        for (size_t a = 1; a < m; a++)
            for (size_t b = a + min_overlap; b < m; b++)
                if (AO_NEAR(b - a, n)) ao_take(&part[j], aoracle_edit(key + a, b - a, text, n, alphabet, flags), 0);
#undef AO_NEAR
    }
    tu_hits w, p;
    tu_hits_init(&w);
    tu_hits_init(&p);
    ao_runs(whole, n, k, report, record, pattern, strand, &w);
    ao_runs(part, n, k, report, record, pattern, strand, &p);
    /* a partial hit with an ordinary one's place: once, the fewer errors */
    for (size_t i = 0; i < p.n; i++) {
        tu_hit *x = &p.items[i];
        int dup = 0;
        for (size_t j = 0; j < w.n; j++) {
            tu_hit *y = &w.items[j];
            if (y->start != x->start || y->end != x->end) continue;
            dup = 1;
            if (x->errors < y->errors) {
                y->errors = x->errors;
                if (partials) tu_hits_add(partials, record, x->start, x->end, pattern, strand, x->errors);
            }
        }
        if (!dup) {
            tu_hits_add(&w, record, x->start, x->end, pattern, strand, x->errors);
            if (partials) tu_hits_add(partials, record, x->start, x->end, pattern, strand, x->errors);
        }
    }
    for (size_t i = 0; i < w.n; i++)
        tu_hits_add(out, record, w.items[i].start, w.items[i].end, pattern, strand, w.items[i].errors);
    int oom = w.out_of_memory || p.out_of_memory || out->out_of_memory || (partials && partials->out_of_memory);
    tu_hits_free(&w);
    tu_hits_free(&p);
    free(whole), free(part), free(D);
    return oom ? -1 : 0;
}
