/* Measures the DFA membership engine: sequential simulation against the
 * speculative chunked run on 1 and 2 threads.
 *
 *   dfa_bench [--symbols N] [--reps R] [--bible FILE] [--panel FILE] [--only NAME]
 *             [--dfa DFA_FILE --text FILE]
 *
 * Cases: seed 003's 4-state DFA on N random ACGT symbols (generated in
 * memory), the same input through a 4-state permutation DFA (paths never
 * converge), a random 100-state DFA, a validating regular expression over
 * the Bible text (repeated to 100 MB), and the dictionary automaton of 1000
 * 8-mers taken from the panel ("ends with" mode). With --dfa and --text, the
 * "file" case: a DFA file run over a whole file read into memory first, the
 * engine's own rate that `seqmatch dfa` on the same file is measured against
 * (bench/run-feed.sh). Prints one line per
 * measurement: case, mode, threads, median MB/s, speedup over sequential.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seqmatch.h"
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

static int reps = 5;
static double last_min, last_max; /* the fastest and slowest run of the last measure() */

/* Median seconds of reps runs; mode 0 = sequential, else parallel on threads. */
static double measure(const sm_dfa_matcher *m, uint32_t start, const uint8_t *in, size_t len, int parallel,
                      unsigned threads, sm_dfa_chunk_policy policy, uint32_t *final_state) {
    double t[32];
    int n = reps < 32 ? reps : 32;
    for (int r = 0; r < n; r++) {
        double t0 = now();
        if (!parallel) {
            *final_state = sm_dfa_run(m, start, in, len);
        } else {
            sm_dfa_parallel_options po;
            sm_dfa_parallel_options_init(&po);
            po.threads = threads;
            po.chunks = threads < 2 ? 2 : threads;
            po.policy = policy;
            sm_error e;
            if (sm_dfa_run_parallel(m, start, in, len, &po, final_state, &e) != SM_OK) {
                fprintf(stderr, "dfa_bench: %s\n", e.message);
                exit(2);
            }
        }
        t[r] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, compare_double);
    last_min = t[0];
    last_max = t[n - 1];
    return t[n / 2];
}

static void run_case(const char *name, const sm_dfa *dfa, const uint8_t *in, size_t len) {
    sm_dfa_matcher *m = NULL;
    sm_error e;
    if (sm_dfa_matcher_create(dfa, NULL, &m, &e) != SM_OK) {
        fprintf(stderr, "dfa_bench: %s: %s\n", name, e.message);
        exit(2);
    }
    uint32_t start = sm_dfa_start(dfa), seq_state, state;
    double seq = measure(m, start, in, len, 0, 1, SM_DFA_CHUNKS_BALANCED, &seq_state);
    printf("%-14s %-22s threads=1  %8.0f MB/s  1.00x  (states %u, stride %u, final %u %s)  [runs %d, %.0f-%.0f MB/s]\n",
           name, "sequential", len / seq / 1e6, sm_dfa_state_count(dfa), sm_dfa_matcher_stride(m), seq_state,
           sm_dfa_is_accepting(dfa, seq_state) ? "accept" : "reject", reps < 32 ? reps : 32, len / last_max / 1e6,
           len / last_min / 1e6);
    static const struct {
        unsigned threads;
        sm_dfa_chunk_policy policy;
        const char *label;
    } modes[] = {{1, SM_DFA_CHUNKS_BALANCED, "parallel balanced"},
                 {2, SM_DFA_CHUNKS_BALANCED, "parallel balanced"},
                 {2, SM_DFA_CHUNKS_EQUAL, "parallel equal"}};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        double t = measure(m, start, in, len, 1, modes[i].threads, modes[i].policy, &state);
        printf("%-14s %-22s threads=%u  %8.0f MB/s  %4.2fx%s  [runs %d, %.0f-%.0f MB/s]\n", name, modes[i].label,
               modes[i].threads, len / t / 1e6, seq / t, state == seq_state ? "" : "  MISMATCH", reps < 32 ? reps : 32,
               len / last_max / 1e6, len / last_min / 1e6);
    }
    fflush(stdout);
    sm_dfa_matcher_free(m);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    uint8_t *buf = malloc((size_t)size + 1);
    *len = fread(buf, 1, (size_t)size, f);
    fclose(f);
    return buf;
}

static sm_dfa *dna_dfa(uint32_t states, const uint32_t *table, const uint64_t *accept, uint32_t start) {
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = SM_DFA_UNKNOWN;
    column_of['A'] = 0, column_of['C'] = 1, column_of['G'] = 2, column_of['T'] = 3;
    sm_dfa *d = NULL;
    sm_error e;
    if (sm_dfa_build(states, 4, start, table, accept, column_of, &d, &e) != SM_OK) {
        fprintf(stderr, "dfa_bench: %s\n", e.message);
        exit(2);
    }
    return d;
}

int main(int argc, char **argv) {
    size_t symbols = 1000000000;
    const char *bible = "kjv.txt", *panel = "panel.seq", *only = NULL, *dfa_file = NULL, *text_file = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--symbols") == 0) symbols = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--bible") == 0) bible = argv[i + 1];
        else if (strcmp(argv[i], "--panel") == 0) panel = argv[i + 1];
        else if (strcmp(argv[i], "--only") == 0) only = argv[i + 1];
        else if (strcmp(argv[i], "--dfa") == 0) dfa_file = argv[i + 1];
        else if (strcmp(argv[i], "--text") == 0) text_file = argv[i + 1];
    }
    if (reps < 1) reps = 1;
#define WANT(name) (!only || strstr(only, name))

    if (dfa_file && text_file) {
        sm_dfa *d = NULL;
        sm_error e;
        size_t len = 0;
        uint8_t *text = read_file(text_file, &len);
        if (!text || sm_dfa_read_file(dfa_file, &d, &e) != SM_OK) {
            fprintf(stderr, "dfa_bench: cannot read %s or %s\n", text_file, dfa_file);
            return 2;
        }
        run_case("file", d, text, len);
        sm_dfa_free(d);
        free(text);
        return 0;
    }

    /* Random ACGT symbols, four per random byte. */
    uint8_t *dna = NULL;
    if (WANT("seed4") || WANT("perm4") || WANT("random100")) {
        dna = malloc(symbols);
        if (!dna) return 2;
        size_t i = 0;
        for (; i + 32 <= symbols; i += 32) {
            uint64_t x = rng();
            for (int k = 0; k < 32; k++, x >>= 2) dna[i + k] = "ACGT"[x & 3];
        }
        for (; i < symbols; i++) dna[i] = "ACGT"[rng() & 3];
    }
    if (WANT("seed4")) {
        const uint32_t t[16] = {1, 0, 0, 0, 1, 2, 0, 0, 1, 0, 3, 0, 3, 3, 3, 3};
        const uint64_t acc = 12;
        sm_dfa *d = dna_dfa(4, t, &acc, 0);
        run_case("seed4", d, dna, symbols);
        sm_dfa_free(d);
    }
    if (WANT("perm4")) {
        uint32_t t[16];
        for (uint32_t s = 0; s < 4; s++)
            for (uint32_t c = 0; c < 4; c++) t[s * 4 + c] = (s + c + 1) % 4; /* a counter mod 4 */
        const uint64_t acc = 1;
        sm_dfa *d = dna_dfa(4, t, &acc, 0);
        run_case("perm4", d, dna, symbols);
        sm_dfa_free(d);
    }
    if (WANT("random100")) {
        uint32_t t[400];
        uint64_t acc[2] = {0, 0};
        for (int k = 0; k < 400; k++) t[k] = (uint32_t)(rng() % 100);
        for (int s = 0; s < 100; s++)
            if (rng() & 1) acc[s / 64] |= (uint64_t)1 << (s % 64);
        sm_dfa *d = dna_dfa(100, t, acc, 0);
        run_case("random100", d, dna, symbols < 200000000 ? symbols : 200000000);
        sm_dfa_free(d);
    }
    free(dna);

    if (WANT("bible")) {
        size_t len = 0;
        uint8_t *text = read_file(bible, &len);
        if (!text) {
            fprintf(stderr, "dfa_bench: cannot read %s\n", bible);
        } else {
            /* Every line a verse: reference, space, text. Repeated to about 100 MB. */
            const char *expr = "([1-3]?[A-Z][A-Za-z]*[0-9]+:[0-9]+ [^\\n]*\\n)*";
            size_t copies = 100000000 / len + 1;
            uint8_t *big = malloc(len * copies);
            for (size_t c = 0; c < copies; c++) memcpy(big + c * len, text, len);
            sm_dfa_regex_options ro;
            sm_dfa_regex_options_init(&ro);
            sm_dfa *d = NULL;
            sm_error e;
            if (sm_dfa_from_regex(expr, strlen(expr), &ro, &d, &e) != SM_OK) {
                fprintf(stderr, "dfa_bench: %s\n", e.message);
                return 2;
            }
            run_case("bible-regex", d, big, len * copies);
            sm_dfa_free(d);
            free(big);
            free(text);
        }
    }
    if (WANT("panel")) {
        size_t len = 0;
        uint8_t *seq = read_file(panel, &len);
        if (!seq) {
            fprintf(stderr, "dfa_bench: cannot read %s\n", panel);
        } else {
            /* 1000 8-mers of A/C/G/T from spread positions of the panel. */
            sm_pattern pats[1000];
            char kmers[1000][9];
            size_t got = 0;
            for (size_t tries = 0; got < 1000 && tries < 100000; tries++) {
                size_t at = (size_t)(rng() % (len - 8));
                int ok = 1;
                for (int k = 0; k < 8; k++) ok &= strchr("ACGT", seq[at + k]) != NULL && seq[at + k] != 0;
                if (!ok) continue;
                memcpy(kmers[got], seq + at, 8);
                kmers[got][8] = 0;
                pats[got] = (sm_pattern){NULL, kmers[got], 8};
                got++;
            }
            sm_compile_options co;
            sm_compile_options_init(&co);
            co.engine = SM_ENGINE_AUTOMATON;
            co.strands = SM_STRAND_FORWARD;
            sm_db *db = NULL;
            sm_dfa *d = NULL;
            sm_error e;
            if (sm_compile(pats, got, &co, &db, &e) != SM_OK || sm_dfa_from_db(db, SM_DFA_ENDS, &d, &e) != SM_OK) {
                fprintf(stderr, "dfa_bench: %s\n", e.message);
                return 2;
            }
            run_case("panel-ac1000", d, seq, len);
            sm_dfa_free(d);
            sm_db_free(db);
            free(seq);
        }
    }
    return 0;
}
