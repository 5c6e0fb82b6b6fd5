/* A deliberately plain reference for approximate search, to check seqmatch's
 * output in the approximate-search benchmark (bench/run-approx.sh). It shares
 * no code with the library: k mismatches by comparing every window, k edits by
 * the textbook column-by-column dynamic programme (Sellers), with Ukkonen's
 * cut-off (rows whose value exceeds k are not computed) as its only trick.
 *
 * usage: dp_oracle (-m K | -k K) [--report ends|best] [--strand both|+]
 *                  [--text] [--lines] PATTERNS TARGET
 *
 *   PATTERNS  FASTA (name = header's first word) or one pattern per line
 *   TARGET    FASTA (records named by the header's first word; line breaks
 *             removed), or with --text the whole file as one record named
 *             "text" (--lines: each line a record named "text:LINE", from 1)
 *
 * Prints one TSV row per hit: record, pattern, strand, start, end, errors,
 * in the order (record, strand, pattern, end) -- sort it to compare.
 * Semantics (those of docs and MISSION): 0-based half-open coordinates;
 * dna: case-insensitive, pattern IUPAC codes match the bases of their set,
 * a text byte other than A/C/G/T (after upper-casing, U = T) matches nothing;
 * reverse-strand hits are hits of the reverse complement pattern on the
 * forward text. Edits: D(j) = least edit distance of the pattern to a
 * substring ending at j; start = the largest s with edit(P, T[s,j)) = D(j);
 * "ends" reports every j with D(j) <= k, "best" the j with the least D in
 * each maximal run of consecutive such j (leftmost on ties).
 * --text: raw bytes, case-sensitive, one strand.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *name;
    unsigned char *seq;
    size_t len;
} rec;

typedef struct {
    rec *v;
    size_t n, cap;
} recs;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "dp_oracle: out of memory\n");
        exit(2);
    }
    return q;
}

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *b = xrealloc(NULL, cap);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    *len = n;
    return b;
}

static void push(recs *rs, char *name, unsigned char *seq, size_t len) {
    if (rs->n == rs->cap) rs->v = xrealloc(rs->v, (rs->cap = rs->cap ? 2 * rs->cap : 64) * sizeof(rec));
    rs->v[rs->n].name = name;
    rs->v[rs->n].seq = seq;
    rs->v[rs->n].len = len;
    rs->n++;
}

static char *dupn(const unsigned char *s, size_t n) {
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* FASTA records (or, when the file does not start with '>', one pattern per
   line named after itself). Sequence lines are joined, CR/LF removed. */
static recs read_fasta_or_lines(const char *path, int as_patterns) {
    size_t n;
    unsigned char *b = slurp(path, &n);
    recs rs = {0};
    size_t i = 0;
    if (n == 0 || b[0] != '>') {
        if (!as_patterns) {
            fprintf(stderr, "dp_oracle: %s: not FASTA\n", path);
            exit(2);
        }
        while (i < n) {
            size_t e = i;
            while (e < n && b[e] != '\n') e++;
            size_t l = e;
            if (l > i && b[l - 1] == '\r') l--;
            if (l > i) {
                char *s = dupn(b + i, l - i);
                push(&rs, s, (unsigned char *)s, l - i);
            }
            i = e + 1;
        }
        return rs;
    }
    while (i < n) {
        /* header */
        size_t e = i + 1;
        while (e < n && b[e] != '\n') e++;
        size_t w = i + 1;
        while (w < e && !isspace(b[w])) w++;
        char *name = dupn(b + i + 1, w - i - 1);
        i = e + 1;
        size_t cap = 1024, len = 0;
        unsigned char *s = xrealloc(NULL, cap);
        while (i < n && b[i] != '>') {
            e = i;
            while (e < n && b[e] != '\n') e++;
            for (size_t j = i; j < e; j++) {
                if (b[j] == '\r') continue;
                if (len == cap) s = xrealloc(s, cap *= 2);
                s[len++] = b[j];
            }
            i = e + 1;
        }
        push(&rs, name, s, len);
    }
    free(b);
    return rs;
}

/* dna: 4-bit base sets; the text maps to one bit (A C G T) or 0 */
static unsigned char dna_set(unsigned char c) {
    switch (toupper(c)) {
    case 'A': return 1;
    case 'C': return 2;
    case 'G': return 4;
    case 'T': case 'U': return 8;
    case 'R': return 1 | 4;
    case 'Y': return 2 | 8;
    case 'S': return 2 | 4;
    case 'W': return 1 | 8;
    case 'K': return 4 | 8;
    case 'M': return 1 | 2;
    case 'B': return 2 | 4 | 8;
    case 'D': return 1 | 4 | 8;
    case 'H': return 1 | 2 | 8;
    case 'V': return 1 | 2 | 4;
    case 'N': return 15;
    default: return 0;
    }
}
static unsigned char text_bit(unsigned char c) {
    switch (toupper(c)) {
    case 'A': return 1;
    case 'C': return 2;
    case 'G': return 4;
    case 'T': case 'U': return 8;
    default: return 0;
    }
}
/* complement of a base set: swap A<->T and C<->G bits */
static unsigned char set_complement(unsigned char s) {
    return (unsigned char)(((s & 1) << 3) | ((s & 8) >> 3) | ((s & 2) << 1) | ((s & 4) >> 1));
}

static int text_mode = 0;
static long k_max = 0;
static int edits = 0, report_best = 0;

static const char *cur_rec, *cur_pat;
static char cur_strand;
static unsigned long long nhits = 0;

static void out(size_t s, size_t e, long err) {
    printf("%s\t%s\t%c\t%zu\t%zu\t%ld\n", cur_rec, cur_pat, cur_strand, s, e, err);
    nhits++;
}

/* pattern symbols p[0..m): in dna mode base sets, in text mode bytes;
   text t[0..n): in dna mode text bits, in text mode bytes */
static inline int eq(unsigned char p, unsigned char t) { return text_mode ? p == t : (p & t) != 0; }

static void mismatches(const unsigned char *p, size_t m, const unsigned char *t, size_t n) {
    if (n < m) return;
    for (size_t i = 0; i + m <= n; i++) {
        long e = 0;
        for (size_t j = 0; j < m && e <= k_max; j++) e += !eq(p[j], t[i + j]);
        if (e <= k_max) out(i, i + m, e);
    }
}

static long *Dc, *Sc; /* one column: D[i], S[i] for rows i = 0..m */

/* Column j holds D[i][j] (the least edit distance of p[0,i) to a substring of
   t ending at j) and S[i][j] (the largest start of such a substring), exact
   for the rows up to `last`, the last row whose value is <= k; the rows below
   it are known to exceed k (Ukkonen) and are not computed. */
static void edit_search(const unsigned char *p, size_t m, const unsigned char *t, size_t n) {
    long inf = k_max + 1;
    size_t last = m < (size_t)k_max ? m : (size_t)k_max;
    for (size_t i = 0; i <= last; i++) { Dc[i] = (long)i; Sc[i] = 0; }
    int in_run = 0; /* a pending run of ends for --report best */
    long run_d = 0;
    size_t run_s = 0, run_e = 0;
    for (size_t j = 1; j <= n; j++) {
        unsigned char c = t[j - 1];
        long diag_d = Dc[0], diag_s = Sc[0]; /* D[i-1][j-1] */
        Dc[0] = 0;
        Sc[0] = (long)j;
        size_t lim = last + 1 < m ? last + 1 : m, new_last = 0;
        for (size_t i = 1; i <= lim; i++) {
            long left_d = i <= last ? Dc[i] : inf, left_s = Sc[i]; /* D[i][j-1] */
            long d = diag_d + !eq(p[i - 1], c), s = diag_s;
            long v = Dc[i - 1] + 1; /* D[i-1][j] + 1 */
            if (v < d || (v == d && Sc[i - 1] > s)) { d = v; s = Sc[i - 1]; }
            v = left_d + 1;
            if (v < d || (v == d && left_s > s)) { d = v; s = left_s; }
            if (d > inf) d = inf;
            diag_d = left_d;
            diag_s = left_s;
            Dc[i] = d;
            Sc[i] = s;
            if (d <= k_max) new_last = i;
        }
        last = new_last;
        if (last == m) {
            long dm = Dc[m];
            if (!report_best) out((size_t)Sc[m], j, dm);
            else if (!in_run) { in_run = 1; run_d = dm; run_s = (size_t)Sc[m]; run_e = j; }
            else if (dm < run_d) { run_d = dm; run_s = (size_t)Sc[m]; run_e = j; }
        } else if (in_run) {
            out(run_s, run_e, run_d);
            in_run = 0;
        }
    }
    if (in_run) out(run_s, run_e, run_d);
}

int main(int argc, char **argv) {
    int both = 1, lines = 0, have_k = 0;
    int a = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        const char *o = argv[a];
        if (!strcmp(o, "-m") && a + 1 < argc) { k_max = atol(argv[++a]); edits = 0; have_k = 1; }
        else if (!strcmp(o, "-k") && a + 1 < argc) { k_max = atol(argv[++a]); edits = 1; have_k = 1; }
        else if (!strcmp(o, "--report") && a + 1 < argc) report_best = !strcmp(argv[++a], "best");
        else if (!strcmp(o, "--strand") && a + 1 < argc) both = strcmp(argv[++a], "+") != 0;
        else if (!strcmp(o, "--text")) text_mode = 1;
        else if (!strcmp(o, "--lines")) text_mode = lines = 1;
        else { fprintf(stderr, "dp_oracle: unknown option %s\n", o); return 2; }
    }
    if (!have_k || argc - a != 2 || k_max < 0) {
        fprintf(stderr, "usage: dp_oracle (-m K | -k K) [--report ends|best] [--strand both|+] [--text] [--lines] "
                        "PATTERNS TARGET\n");
        return 2;
    }
    if (text_mode) both = 0;
    recs pats = read_fasta_or_lines(argv[a], 1);
    recs tgt = {0};
    if (text_mode) {
        size_t n;
        unsigned char *b = slurp(argv[a + 1], &n);
        if (!lines) push(&tgt, "text", b, n);
        else {
            size_t i = 0, line = 1;
            while (i < n) {
                size_t e = i;
                while (e < n && b[e] != '\n') e++;
                char name[64];
                snprintf(name, sizeof name, "text:%zu", line++);
                push(&tgt, dupn((unsigned char *)name, strlen(name)), b + i, e - i);
                i = e + 1;
            }
        }
    } else {
        tgt = read_fasta_or_lines(argv[a + 1], 0);
        for (size_t r = 0; r < tgt.n; r++)
            for (size_t i = 0; i < tgt.v[r].len; i++) tgt.v[r].seq[i] = text_bit(tgt.v[r].seq[i]);
    }
    size_t maxm = 0;
    for (size_t q = 0; q < pats.n; q++) if (pats.v[q].len > maxm) maxm = pats.v[q].len;
    Dc = xrealloc(NULL, (maxm + 2) * sizeof *Dc);
    Sc = xrealloc(NULL, (maxm + 2) * sizeof *Sc);
    unsigned char *fw = xrealloc(NULL, maxm + 1), *rc = xrealloc(NULL, maxm + 1);
    for (size_t r = 0; r < tgt.n; r++) {
        cur_rec = tgt.v[r].name;
        for (int strand = 0; strand < (both ? 2 : 1); strand++) {
            cur_strand = strand ? '-' : '+';
            for (size_t q = 0; q < pats.n; q++) {
                size_t m = pats.v[q].len;
                if (m == 0) { fprintf(stderr, "dp_oracle: empty pattern\n"); return 2; }
                for (size_t i = 0; i < m; i++) {
                    unsigned char c = pats.v[q].seq[i];
                    fw[i] = text_mode ? c : dna_set(c);
                }
                const unsigned char *p = fw;
                if (strand) {
                    for (size_t i = 0; i < m; i++) rc[i] = set_complement(fw[m - 1 - i]);
                    p = rc;
                }
                cur_pat = pats.v[q].name;
                if (edits) edit_search(p, m, tgt.v[r].seq, tgt.v[r].len);
                else mismatches(p, m, tgt.v[r].seq, tgt.v[r].len);
            }
        }
    }
    fprintf(stderr, "dp_oracle: %llu hits\n", nhits);
    return nhits ? 0 : 1;
}
