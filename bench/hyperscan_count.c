/* hyperscan_count: count every occurrence of many literal patterns with Hyperscan.
 *
 * usage: hyperscan_count [-r REPEATS] [-i] [-x] [-s CHUNK] PATTERNS TARGET
 *
 * PATTERNS: one literal per line (bytes taken as they are; a trailing '\r' is dropped,
 *           empty lines are skipped). Duplicate lines are distinct patterns.
 * TARGET:   any file, scanned as one block of raw bytes (e.g. panel.seq).
 *
 * The literals are compiled with hs_compile_lit_multi in block mode with no flags
 * (no HS_FLAG_SOM_LEFTMOST, no HS_FLAG_SINGLEMATCH), so the match callback is called once
 * per (pattern, end offset): every occurrence, overlapping ones included.
 * -i compiles them caseless (HS_FLAG_CASELESS).
 * -x compiles them as expressions instead (hs_compile_multi, every byte written as \xHH),
 *    which must give the same count; for comparing the two compilers' speed.
 * -s CHUNK uses stream mode instead of block mode: the target is written into one stream
 *    CHUNK bytes at a time (same matches, same count; matches across chunk ends are found).
 *
 * Output (one line, tab-separated key=value), e.g.
 *   patterns=1000 bytes=110628947 count=123 compile_s=0.01 scan_s=1.40 scan_MBps=79.0 ...
 * scan_s is the median wall time over REPEATS scans (default 1) and excludes reading the
 * files and compiling; scan_cpu_s is the same for the process's CPU time (steadier than wall
 * time on a busy machine); MB = 10^6 bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <hs.h> /* pkg-config libhs puts the hs/ directory on the include path */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static void die(const char *what, const char *why) {
    fprintf(stderr, "hyperscan_count: %s: %s\n", what, why);
    exit(2);
}

/* Read a whole file into memory; *len gets its size. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path, strerror(errno));
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    if (!buf) die(path, "out of memory");
    for (;;) {
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) die(path, "out of memory");
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) die(path, "read error");
    fclose(f);
    *len = n;
    return buf;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx) {
    (void)id; (void)from; (void)to; (void)flags;
    ++*(uint64_t *)ctx;
    return 0; /* keep scanning */
}

int main(int argc, char **argv) {
    int repeats = 1, as_regex = 0;
    size_t chunk = 0; /* 0: block mode */
    unsigned int flags = 0;
    int a = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        if (!strcmp(argv[a], "-r") && a + 1 < argc) {
            repeats = atoi(argv[++a]);
            if (repeats < 1) die("-r", "needs a positive number");
        } else if (!strcmp(argv[a], "-s") && a + 1 < argc) {
            chunk = strtoull(argv[++a], NULL, 10);
            if (chunk == 0) die("-s", "needs a positive number of bytes");
        } else if (!strcmp(argv[a], "-x")) {
            as_regex = 1;
        } else if (!strcmp(argv[a], "-i")) {
            flags |= HS_FLAG_CASELESS;
        } else {
            die(argv[a], "unknown option (usage: hyperscan_count [-r N] [-i] [-x] [-s CHUNK] PATTERNS TARGET)");
        }
    }
    if (argc - a != 2) die("usage", "hyperscan_count [-r N] [-i] PATTERNS TARGET");

    size_t plen, tlen;
    char *ptext = read_file(argv[a], &plen);
    char *text = read_file(argv[a + 1], &tlen);
    if (tlen > UINT32_MAX) die(argv[a + 1], "larger than 4 GiB (hs_scan takes a 32-bit length)");

    /* Split the pattern file into lines. */
    size_t cap = 1024, np = 0;
    const char **lits = malloc(cap * sizeof *lits);
    size_t *lens = malloc(cap * sizeof *lens);
    if (!lits || !lens) die("patterns", "out of memory");
    for (size_t i = 0; i < plen;) {
        size_t j = i;
        while (j < plen && ptext[j] != '\n') j++;
        size_t e = j;
        if (e > i && ptext[e - 1] == '\r') e--;
        if (e > i) {
            if (np == cap) {
                cap *= 2;
                lits = realloc(lits, cap * sizeof *lits);
                lens = realloc(lens, cap * sizeof *lens);
                if (!lits || !lens) die("patterns", "out of memory");
            }
            lits[np] = ptext + i;
            lens[np] = e - i;
            np++;
        }
        i = j + 1;
    }
    if (np == 0) die(argv[a], "no patterns");

    unsigned int *ids = malloc(np * sizeof *ids);
    unsigned int *fl = malloc(np * sizeof *fl);
    if (!ids || !fl) die("patterns", "out of memory");
    for (size_t i = 0; i < np; i++) {
        ids[i] = (unsigned int)i;
        fl[i] = flags;
    }

    hs_database_t *db = NULL;
    hs_compile_error_t *cerr = NULL;
    double t0 = now_s();
    hs_error_t err;
    unsigned int mode = chunk ? HS_MODE_STREAM : HS_MODE_BLOCK;
    if (as_regex) {
        char **exprs = malloc(np * sizeof *exprs);
        if (!exprs) die("patterns", "out of memory");
        for (size_t i = 0; i < np; i++) {
            exprs[i] = malloc(4 * lens[i] + 1);
            if (!exprs[i]) die("patterns", "out of memory");
            for (size_t k = 0; k < lens[i]; k++)
                snprintf(exprs[i] + 4 * k, 5, "\\x%02x", (unsigned char)lits[i][k]);
        }
        err = hs_compile_multi((const char *const *)exprs, fl, ids, (unsigned int)np, mode, NULL,
                               &db, &cerr);
        for (size_t i = 0; i < np; i++) free(exprs[i]);
        free(exprs);
    } else {
        err = hs_compile_lit_multi(lits, fl, ids, lens, (unsigned int)np, mode, NULL, &db,
                                   &cerr);
    }
    if (err != HS_SUCCESS) {
        fprintf(stderr, "hyperscan_count: compile failed (pattern %d): %s\n", cerr->expression,
                cerr->message);
        hs_free_compile_error(cerr);
        return 2;
    }
    double compile_s = now_s() - t0;

    hs_scratch_t *scratch = NULL;
    if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) die("hs_alloc_scratch", "failed");
    size_t dbsize = 0;
    hs_database_size(db, &dbsize);

    double *times = malloc(2 * (size_t)repeats * sizeof *times);
    double *cpus = times + repeats;
    if (!times) die("scan", "out of memory");
    uint64_t count = 0;
    for (int r = 0; r < repeats; r++) {
        uint64_t c = 0;
        double s = now_s(), cs = cpu_s();
        if (!chunk) {
            if (hs_scan(db, text, (unsigned int)tlen, 0, scratch, on_match, &c) != HS_SUCCESS)
                die("hs_scan", "failed");
        } else {
            hs_stream_t *st = NULL;
            if (hs_open_stream(db, 0, &st) != HS_SUCCESS) die("hs_open_stream", "failed");
            for (size_t off = 0; off < tlen; off += chunk) {
                size_t n = tlen - off < chunk ? tlen - off : chunk;
                hs_error_t e = hs_scan_stream(st, text + off, (unsigned int)n, 0, scratch,
                                              on_match, &c);
                if (e != HS_SUCCESS) {
                    fprintf(stderr, "hyperscan_count: hs_scan_stream failed (error %d)\n", e);
                    return 2;
                }
            }
            if (hs_close_stream(st, scratch, on_match, &c) != HS_SUCCESS)
                die("hs_close_stream", "failed");
        }
        times[r] = now_s() - s;
        cpus[r] = cpu_s() - cs;
        if (r > 0 && c != count) die("hs_scan", "count differs between repeats");
        count = c;
    }
    qsort(times, (size_t)repeats, sizeof *times, cmp_double);
    qsort(cpus, (size_t)repeats, sizeof *cpus, cmp_double);
    double med = repeats % 2 ? times[repeats / 2]
                             : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]);
    double cmed = repeats % 2 ? cpus[repeats / 2]
                              : 0.5 * (cpus[repeats / 2 - 1] + cpus[repeats / 2]);

    printf("patterns=%zu\tbytes=%zu\tcount=%llu\tcompile_s=%.4f\tdb_bytes=%zu\t"
           "scan_s=%.4f\tscan_min_s=%.4f\tscan_MBps=%.1f\tscan_cpu_s=%.4f\tscan_cpu_MBps=%.1f\t"
           "repeats=%d\tmode=%s\tchunk=%zu\thyperscan=%s\n",
           np, tlen, (unsigned long long)count, compile_s, dbsize, med, times[0],
           (double)tlen / med / 1e6, cmed, (double)tlen / cmed / 1e6, repeats, as_regex ? "expressions" : "literals", chunk,
           hs_version());

    hs_free_scratch(scratch);
    hs_free_database(db);
    free(times);
    free(ids);
    free(fl);
    free(lits);
    free(lens);
    free(ptext);
    free(text);
    return 0;
}
