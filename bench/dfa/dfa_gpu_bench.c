/* The GPU DFA run (sm_dfa_gpu) beside the CPU's speculative run on every
 * host core, on the same input in the same process, results checked equal.
 *
 *   dfa_gpu_bench [--symbols N] [--reps R] [--threads T] [--only NAME] [--dump DIR]
 *
 * Cases, on N random ACGT symbols generated in memory: seed 003's 4-state
 * DFA (seed4: accepts once ACG occurred), a 4-state counter whose paths
 * never meet (perm4) and a random 100-state DFA (random100). Per case, one
 * key=value line per measurement (GB = 10^9 bytes, medians of R runs):
 *   cpu_seq_GBps       sm_dfa_run, one thread
 *   cpu_par_GBps       sm_dfa_run_parallel on T threads (default: all cores)
 *   gpu_resident_GBps  the input already on the GPU as one batch: chunk
 *                      kernel, scan, gather and the end state back (device
 *                      events), balanced and equal chunks
 *   gpu_e2e_GBps       sm_dfa_gpu_run from host memory: copies into the
 *                      pinned buffers, transfers, kernels, in 64 MiB batches
 * --dump DIR also writes each case's DFA to DIR/NAME.dfa (for the command-line runs).
 * Exit status 2 when a final state differs from the sequential run's.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engines/dfa/dfa_internal.h"
#include "seqmatch_dfa.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, compare_double);
    return t[n / 2];
}

static int reps = 5, mismatches = 0;
static unsigned threads = 0;
static const char *dump_dir = NULL;

static void die(const char *what, const sm_error *e) {
    fprintf(stderr, "dfa_gpu_bench: %s: %s\n", what, e->message);
    exit(2);
}

static void check(const char *name, const char *what, uint32_t got, uint32_t want) {
    if (got != want) {
        printf("case=%s MISMATCH %s=%u want=%u\n", name, what, got, want);
        mismatches++;
    }
}

static void run_case(const char *name, const sm_dfa *dfa, const uint8_t *in, size_t len) {
    sm_dfa_matcher *m = NULL;
    sm_error e;
    if (sm_dfa_matcher_create(dfa, NULL, &m, &e) != SM_OK) die(name, &e);
    const uint32_t start = sm_dfa_start(dfa);
    if (dump_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.dfa", dump_dir, name);
        FILE *f = fopen(path, "w");
        if (!f || sm_dfa_dump(dfa, f, &e) != SM_OK || fclose(f) != 0) {
            fprintf(stderr, "dfa_gpu_bench: cannot write %s\n", path);
            exit(2);
        }
    }
    double t[64];
    int n = reps < 64 ? reps : 64;

    uint32_t want = 0;
    int seq_reps = n < 3 ? n : 3;
    for (int r = 0; r < seq_reps; r++) {
        double t0 = now();
        want = sm_dfa_run(m, start, in, len);
        t[r] = now() - t0;
    }
    double seq = median(t, seq_reps);
    printf("case=%s states=%u bytes=%zu final=%u %s cpu_seq_GBps=%.2f\n", name, sm_dfa_state_count(dfa), len, want,
           sm_dfa_is_accepting(dfa, want) ? "accept" : "reject", len / seq / 1e9);

    sm_dfa_parallel_options po;
    sm_dfa_parallel_options_init(&po);
    po.threads = threads;
    uint32_t got = 0;
    for (int r = 0; r < n; r++) {
        double t0 = now();
        if (sm_dfa_run_parallel(m, start, in, len, &po, &got, &e) != SM_OK) die(name, &e);
        t[r] = now() - t0;
        check(name, "cpu_par", got, want);
    }
    printf("case=%s cpu_par_threads=%u cpu_par_GBps=%.2f\n", name, threads, len / median(t, n) / 1e9);

    for (int policy = 0; policy < 2; policy++) {
        sm_dfa_gpu_options go;
        sm_dfa_gpu_options_init(&go);
        go.batch_bytes = len;
        go.policy = policy ? SM_DFA_CHUNKS_EQUAL : SM_DFA_CHUNKS_BALANCED;
        sm_dfa_gpu *g = NULL;
        double t0 = now();
        if (sm_dfa_gpu_open(m, &go, NULL, NULL, &g, &e) != SM_OK) die(name, &e);
        double t1 = now();
        if (sm_dfa_gpu_run(g, start, in, len, &got, &e) != SM_OK) die(name, &e);
        double t2 = now();
        check(name, "gpu_resident", got, want);
        double ms = 0;
        if (sm_dfa_gpu_time_last(g, n, &ms, &e) != SM_OK) die(name, &e);
        size_t chunk_len, chunks, maps;
        double ratio;
        sm_dfa_gpu_plan_info(g, &chunk_len, &ratio, &chunks, &maps);
        printf("case=%s gpu=\"%s\" policy=%s chunk_bytes=%zu chunks=%zu ratio=%.3f open_s=%.3f one_batch_s=%.3f "
               "gpu_resident_ms=%.3f gpu_resident_GBps=%.1f\n",
               name, sm_dfa_gpu_device_name(g), policy ? "equal" : "balanced", chunk_len, chunks, ratio, t1 - t0,
               t2 - t1, ms, len / (ms * 1e-3) / 1e9);
        sm_dfa_gpu_free(g);
    }

    sm_dfa_gpu_options go;
    sm_dfa_gpu_options_init(&go);
    sm_dfa_gpu *g = NULL;
    if (sm_dfa_gpu_open(m, &go, NULL, NULL, &g, &e) != SM_OK) die(name, &e);
    for (int r = 0; r < n; r++) {
        double t0 = now();
        if (sm_dfa_gpu_run(g, start, in, len, &got, &e) != SM_OK) die(name, &e);
        t[r] = now() - t0;
        check(name, "gpu_e2e", got, want);
    }
    printf("case=%s gpu_e2e_batch_MiB=64 gpu_e2e_GBps=%.2f\n", name, len / median(t, n) / 1e9);
    sm_dfa_gpu_free(g);
    fflush(stdout);
    sm_dfa_matcher_free(m);
}

static sm_dfa *dna_dfa(uint32_t states, const uint32_t *table, const uint64_t *accept) {
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = SM_DFA_UNKNOWN;
    column_of['A'] = 0, column_of['C'] = 1, column_of['G'] = 2, column_of['T'] = 3;
    sm_dfa *d = NULL;
    sm_error e;
    if (sm_dfa_build(states, 4, 0, table, accept, column_of, &d, &e) != SM_OK) die("build", &e);
    return d;
}

int main(int argc, char **argv) {
    size_t symbols = 1000000000;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--symbols") == 0) symbols = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0) threads = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0) only = argv[i + 1];
        else if (strcmp(argv[i], "--dump") == 0) dump_dir = argv[i + 1];
    }
    if (reps < 1) reps = 1;
    if (!threads) threads = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
#define WANT(name) (!only || strstr(only, name))
    uint8_t *dna = malloc(symbols);
    if (!dna) return 2;
    size_t i = 0;
    for (; i + 32 <= symbols; i += 32) {
        uint64_t x = rng();
        for (int k = 0; k < 32; k++, x >>= 2) dna[i + k] = "ACGT"[x & 3];
    }
    for (; i < symbols; i++) dna[i] = "ACGT"[rng() & 3];
    if (WANT("seed4")) {
        const uint32_t t[16] = {1, 0, 0, 0, 1, 2, 0, 0, 1, 0, 3, 0, 3, 3, 3, 3};
        const uint64_t acc = 12;
        sm_dfa *d = dna_dfa(4, t, &acc);
        run_case("seed4", d, dna, symbols);
        sm_dfa_free(d);
    }
    if (WANT("perm4")) {
        uint32_t t[16];
        for (uint32_t s = 0; s < 4; s++)
            for (uint32_t c = 0; c < 4; c++) t[s * 4 + c] = (s + c + 1) % 4;
        const uint64_t acc = 1;
        sm_dfa *d = dna_dfa(4, t, &acc);
        run_case("perm4", d, dna, symbols);
        sm_dfa_free(d);
    }
    if (WANT("random100")) {
        uint32_t t[400];
        uint64_t acc[2] = {0, 0};
        for (int k = 0; k < 400; k++) t[k] = (uint32_t)(rng() % 100);
        for (int s = 0; s < 100; s++)
            if (rng() & 1) acc[s / 64] |= (uint64_t)1 << (s % 64);
        sm_dfa *d = dna_dfa(100, t, acc);
        run_case("random100", d, dna, symbols);
        sm_dfa_free(d);
    }
    free(dna);
    return mismatches ? 2 : 0;
}
