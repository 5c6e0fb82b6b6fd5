/* edlib driver for the approximate-search benchmark (bench/run-approx.sh).
 *
 * usage: edlib_count -k K [--strand both|+] [--text] [-v] PATTERNS TARGET
 *
 *   PATTERNS  FASTA (name = header's first word) or one pattern per line
 *   TARGET    FASTA (records named by the header's first word, line breaks
 *             removed, upper-cased), or with --text the whole file as one
 *             record of raw bytes ("text"), searched on one strand
 *
 * For every pattern, every record and every strand (the reverse strand is the
 * reverse complement of the pattern against the forward record, as seqmatch
 * defines it) it makes ONE call edlibAlign(pattern, record, EDLIB_MODE_HW,
 * EDLIB_TASK_DISTANCE, k = K). edlib computes the least edit distance of the
 * pattern to any substring of the record (-1 if above K) and every end
 * position that reaches it -- not every end with distance <= K, which is what
 * seqmatch --report ends prints; so its work is comparable (one full
 * bit-parallel pass over the record) but its output is smaller.
 *
 * Prints to stdout, with -v, one row per call that found something:
 *   record, pattern, strand, best distance, number of best ends, first end+1
 * and always a last line:
 *   calls=N found=N ends=N cells=M scan_s=S scan_cpu_s=S
 * where found = calls with distance <= K, ends = their best end positions,
 * cells = pattern length x record length summed over the calls, and scan_s /
 * scan_cpu_s the wall / process CPU seconds spent inside edlibAlign alone.
 * DNA bytes other than A/C/G/T stay as they are: edlib compares bytes, so a
 * text N or IUPAC code never equals a pattern base (as in seqmatch). Patterns
 * must be plain A/C/G/T here (no IUPAC codes).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <edlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    char *name;
    char *seq;
    size_t len;
} rec;

typedef struct {
    rec *v;
    size_t n, cap;
} recs;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "edlib_count: out of memory\n");
        exit(2);
    }
    return q;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 20, n = 0, r;
    char *b = xrealloc(NULL, cap);
    while ((r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    *len = n;
    return b;
}

static void push(recs *rs, char *name, char *seq, size_t len) {
    if (rs->n == rs->cap) rs->v = xrealloc(rs->v, (rs->cap = rs->cap ? 2 * rs->cap : 64) * sizeof(rec));
    rs->v[rs->n].name = name;
    rs->v[rs->n].seq = seq;
    rs->v[rs->n].len = len;
    rs->n++;
}

static char *dupn(const char *s, size_t n) {
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static recs read_records(const char *path, int as_patterns) {
    size_t n, i = 0;
    char *b = slurp(path, &n);
    recs rs = {0};
    if (n == 0 || b[0] != '>') {
        if (!as_patterns) {
            fprintf(stderr, "edlib_count: %s: not FASTA\n", path);
            exit(2);
        }
        while (i < n) {
            size_t e = i;
            while (e < n && b[e] != '\n') e++;
            size_t l = e;
            if (l > i && b[l - 1] == '\r') l--;
            if (l > i) {
                char *s = dupn(b + i, l - i);
                push(&rs, s, s, l - i);
            }
            i = e + 1;
        }
        return rs;
    }
    while (i < n) {
        size_t e = i + 1, w = i + 1;
        while (e < n && b[e] != '\n') e++;
        while (w < e && !isspace((unsigned char)b[w])) w++;
        char *name = dupn(b + i + 1, w - i - 1);
        i = e + 1;
        size_t cap = 1024, len = 0;
        char *s = xrealloc(NULL, cap);
        while (i < n && b[i] != '>') {
            e = i;
            while (e < n && b[e] != '\n') e++;
            for (size_t j = i; j < e; j++) {
                if (b[j] == '\r') continue;
                if (len == cap) s = xrealloc(s, cap *= 2);
                s[len++] = (char)toupper((unsigned char)b[j]);
            }
            i = e + 1;
        }
        push(&rs, name, s, len);
    }
    free(b);
    return rs;
}

static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char comp(char c) {
    switch (c) {
    case 'A': return 'T';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'T': return 'A';
    default: return c;
    }
}

int main(int argc, char **argv) {
    int both = 1, text = 0, verbose = 0, a = 1;
    long k = -1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        if (!strcmp(argv[a], "-k") && a + 1 < argc) k = atol(argv[++a]);
        else if (!strcmp(argv[a], "--strand") && a + 1 < argc) both = strcmp(argv[++a], "+") != 0;
        else if (!strcmp(argv[a], "--text")) text = 1;
        else if (!strcmp(argv[a], "-v")) verbose = 1;
        else {
            fprintf(stderr, "edlib_count: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (k < 0 || argc - a != 2) {
        fprintf(stderr, "usage: edlib_count -k K [--strand both|+] [--text] [-v] PATTERNS TARGET\n");
        return 2;
    }
    recs pats = read_records(argv[a], 1), tgt = {0};
    if (text) {
        size_t n;
        char *b = slurp(argv[a + 1], &n);
        push(&tgt, "text", b, n);
        both = 0;
    } else {
        tgt = read_records(argv[a + 1], 0);
    }
    for (size_t r = 0; r < tgt.n; r++)
        if (tgt.v[r].len > 2147483647u) {
            fprintf(stderr, "edlib_count: record %s longer than 2^31-1\n", tgt.v[r].name);
            return 2;
        }
    EdlibAlignConfig cfg = edlibNewAlignConfig((int)k, EDLIB_MODE_HW, EDLIB_TASK_DISTANCE, NULL, 0);
    unsigned long long calls = 0, found = 0, ends = 0;
    double cells = 0, scan = 0, scan_cpu = 0;
    for (size_t q = 0; q < pats.n; q++) {
        size_t m = pats.v[q].len;
        char *fw = xrealloc(NULL, m + 1), *rc = xrealloc(NULL, m + 1);
        for (size_t i = 0; i < m; i++) fw[i] = text ? pats.v[q].seq[i] : (char)toupper((unsigned char)pats.v[q].seq[i]);
        for (size_t i = 0; i < m; i++) rc[i] = comp(fw[m - 1 - i]);
        for (size_t r = 0; r < tgt.n; r++) {
            for (int s = 0; s < (both ? 2 : 1); s++) {
                double w0 = wall(), c0 = cpu();
                EdlibAlignResult res = edlibAlign(s ? rc : fw, (int)m, tgt.v[r].seq, (int)tgt.v[r].len, cfg);
                scan += wall() - w0;
                scan_cpu += cpu() - c0;
                calls++;
                cells += (double)m * (double)tgt.v[r].len;
                if (res.status != EDLIB_STATUS_OK) {
                    fprintf(stderr, "edlib_count: edlibAlign failed\n");
                    return 2;
                }
                if (res.editDistance >= 0) {
                    found++;
                    ends += (unsigned long long)res.numLocations;
                    if (verbose)
                        printf("%s\t%s\t%c\t%d\t%d\t%d\n", tgt.v[r].name, pats.v[q].name, s ? '-' : '+',
                               res.editDistance, res.numLocations, res.endLocations[0] + 1);
                }
                edlibFreeAlignResult(res);
            }
        }
        free(fw);
        free(rc);
    }
    printf("calls=%llu found=%llu ends=%llu cells=%.0f scan_s=%.4f scan_cpu_s=%.4f\n", calls, found, ends, cells, scan,
           scan_cpu);
    return 0;
}
