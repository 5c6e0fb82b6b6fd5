/* The cost of one sm_scan call on a short read, in C: the baseline of the
 * Python package's per-call overhead (bench/python_overhead.py makes the
 * same reads and times db.scan on them).
 *   make -C bench scan_calls LIBDIR=../build
 *   bench/scan_calls READS LENGTH ROUNDS [mismatches|edits K] PATTERN...
 * Prints the microseconds per call (best of ROUNDS) and the hits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seqmatch.h"

/* xorshift64, as python_overhead.py */
static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int count_hit(const sm_hit *hit, void *ctx) {
    (void)hit;
    (*(uint64_t *)ctx)++;
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s READS LENGTH ROUNDS [mismatches|edits K] PATTERN...\n", argv[0]);
        return 2;
    }
    size_t reads = strtoul(argv[1], NULL, 10), length = strtoul(argv[2], NULL, 10);
    int rounds = atoi(argv[3]), first = 4;
    sm_compile_options o;
    sm_compile_options_init(&o);
    if (!strcmp(argv[4], "mismatches") || !strcmp(argv[4], "edits")) {
        o.match = !strcmp(argv[4], "edits") ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        o.max_errors = (uint32_t)atoi(argv[5]);
        first = 6;
    }
    size_t n = (size_t)(argc - first);
    sm_pattern *p = calloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (sm_pattern){NULL, argv[first + i], strlen(argv[first + i])};
    sm_db *db;
    sm_error err;
    if (sm_compile(p, n, &o, &db, &err) != SM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    char *text = malloc(reads * length);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < reads * length; i++) text[i] = "ACGT"[next(&s) >> 62];
    sm_scratch *scratch;
    sm_scratch_alloc(db, &scratch);
    double best = 1e30;
    uint64_t hits = 0;
    for (int r = 0; r < rounds; r++) {
        hits = 0;
        double t0 = now();
        for (size_t i = 0; i < reads; i++) sm_scan(db, scratch, text + i * length, length, count_hit, &hits);
        double t = now() - t0;
        if (t < best) best = t;
    }
    printf("c %.3f us/call %llu hits\n", best / (double)reads * 1e6, (unsigned long long)hits);
    sm_scratch_free(scratch);
    sm_db_free(db);
    free(text);
    free(p);
    return 0;
}
