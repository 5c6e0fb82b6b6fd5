/* Throughput of the approximate engines in GCUPS (cells = key length x text
 * bytes x keys) on random DNA and, when given, a sequence file (raw bases,
 * no headers). Not part of the build; compile by hand from the repository
 * root against a built library (the engines call into the core):
 *
 *   cc -std=c11 -O3 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -o approx_bench \
 *      bench/approx_bench.c build/libseqmatch.a -lz -lpthread -lm
 *   ./approx_bench [megabytes of text, default 8] [sequence file]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engines/approx/approx.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void random_dna(uint8_t *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)"ACGT"[rng_next() & 3];
}

typedef struct {
    sm_ac_key *keys;
    uint8_t *bytes;
    size_t n;
} key_set;

/* n random keys of length m; when text is given, half of them are cut from it
   so that the search has something to find. */
static key_set make_keys(size_t n, uint32_t m, const uint8_t *text, size_t len) {
    key_set ks;
    ks.n = n;
    ks.keys = calloc(n, sizeof *ks.keys);
    ks.bytes = malloc(n * m);
    if (!ks.keys || !ks.bytes) abort();
    for (size_t i = 0; i < n; i++) {
        uint8_t *k = ks.bytes + i * m;
        if (text && len > m && (i & 1)) memcpy(k, text + rng_next() % (len - m), m);
        else random_dna(k, m);
        ks.keys[i].seq = k;
        ks.keys[i].len = m;
        ks.keys[i].output = (uint32_t)(i * 2);
    }
    return ks;
}

static void free_keys(key_set *ks) { free(ks->keys); free(ks->bytes); }

enum { KM, MY, WF };

/* Scans text once with the engine; prints GCUPS and the events found. */
static void run(const char *label, int engine, sm_approx_path path, const key_set *ks, uint32_t k, const uint8_t *text,
                size_t len) {
    sm_buf sec;
    memset(&sec, 0, sizeof sec);
    sm_error err;
    int rc = engine == KM ? sm_km_build(ks->keys, ks->n, SM_ALPHABET_DNA, 0, k, 0, &sec, &err)
             : engine == MY ? sm_my_build(ks->keys, ks->n, SM_ALPHABET_DNA, 0, k, 0, &sec, &err)
                            : sm_wf_build(ks->keys, ks->n, SM_ALPHABET_DNA, 0, k, 0, &sec, &err);
    if (rc != SM_OK) { fprintf(stderr, "%s: %s\n", label, err.message); exit(1); }
    size_t words = engine == KM ? sm_km_state_words(sec.data) : engine == MY ? sm_my_state_words(sec.data)
                                                                             : sm_wf_state_words(sec.data);
    uint64_t *st = malloc(words * sizeof *st);
    uint64_t *counts = calloc(ks->n, sizeof *counts);
    if (!st || !counts) abort();
    sm_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.counts = counts;
    sink.own_hi = UINT64_MAX;
    double t0 = now();
    if (engine == KM) {
        sm_km_state_reset(sec.data, st);
        sm_km_scan_path(sec.data, st, text, len, 0, &sink, path);
    } else if (engine == MY) {
        sm_my_state_reset(sec.data, st);
        sm_my_scan_path(sec.data, st, text, len, 0, &sink, path);
    } else {
        sm_wf_state_reset(sec.data, st);
        sm_wf_scan_path(sec.data, st, text, len, 0, &sink, path);
        sm_wf_finish(sec.data, st, len, &sink);
    }
    double dt = now() - t0;
    uint64_t hits = 0, cells = 0;
    for (size_t i = 0; i < ks->n; i++) { hits += counts[i]; cells += (uint64_t)ks->keys[i].len * len; }
    printf("%-44s %-6s %8.2f GCUPS %9.1f MB/s  %10llu events  (%.3f s)\n", label,
           path == SM_APPROX_AVX512 ? "avx512" : path == SM_APPROX_AVX2 ? "avx2" : "scalar", (double)cells / dt * 1e-9, (double)len / dt * 1e-6,
           (unsigned long long)hits, dt);
    free(st);
    free(counts);
    sm_buf_free(&sec);
}

/* The textbook one-pattern Myers loop (m <= 64), for comparison. */
static void textbook_myers(const uint8_t *key, uint32_t m, uint32_t k, const uint8_t *text, size_t len) {
    uint64_t peq[256];
    memset(peq, 0, sizeof peq);
    for (uint32_t i = 0; i < m; i++) peq[key[i]] |= 1ull << i;
    uint64_t Pv = ~0ull, Mv = 0, hits = 0;
    int64_t score = m;
    const uint64_t top = 1ull << (m - 1);
    double t0 = now();
    for (size_t j = 0; j < len; j++) {
        uint64_t Eq = peq[text[j]];
        uint64_t Xv = Eq | Mv;
        uint64_t Xh = (((Eq & Pv) + Pv) ^ Pv) | Eq;
        uint64_t Ph = Mv | ~(Xh | Pv);
        uint64_t Mh = Pv & Xh;
        if (Ph & top) score++;
        else if (Mh & top) score--;
        Ph <<= 1;
        Mh <<= 1;
        Pv = Mh | ~(Xv | Ph);
        Mv = Ph & Xv;
        if (score <= (int64_t)k) hits++;
    }
    double dt = now() - t0;
    printf("%-44s %-6s %8.2f GCUPS %9.1f MB/s  %10llu events  (%.3f s)\n", "textbook Myers, 1 key m=20 k=2", "scalar",
           (double)m * len / dt * 1e-9, (double)len / dt * 1e-6, (unsigned long long)hits, dt);
}

static void suite(const char *name, const uint8_t *text, size_t len) {
    printf("\n== %s: %.1f MB\n", name, (double)len * 1e-6);
    sm_approx_path paths[3] = {SM_APPROX_SCALAR, SM_APPROX_AVX2, SM_APPROX_AVX512};
    int np = sm_approx_path_supported(SM_APPROX_AVX2) ? 2 : 1;
    int npm = sm_approx_path_supported(SM_APPROX_AVX512) ? 3 : np; /* Myers has an AVX-512 kernel */
    key_set one20 = make_keys(1, 20, text, len);
    textbook_myers(one20.keys[0].seq, 20, 2, text, len);
    for (int p = 0; p < np; p++) run("myers, 1 key m=20 k=2", MY, paths[p], &one20, 2, text, len);
    key_set k64 = make_keys(64, 64, text, len);
    for (int p = 0; p < npm; p++) run("myers, 64 keys m=64 k=4", MY, paths[p], &k64, 4, text, len);
    key_set k20 = make_keys(192, 20, text, len);
    for (int p = 0; p < npm; p++) run("myers, 192 keys m=20 k=2 (3 per lane)", MY, paths[p], &k20, 2, text, len);
    key_set k300 = make_keys(8, 300, text, len);
    run("myers, 8 keys m=300 k=10 (blocks, cut-off)", MY, SM_APPROX_SCALAR, &k300, 10, text, len);
    key_set w64 = make_keys(8, 64, text, len);
    for (int p = 0; p < np; p++) run("wavefront, 8 keys m=64 k=4 (byte cells)", WF, paths[p], &w64, 4, text, len);
    for (int p = 0; p < np; p++) run("wavefront, 8 keys m=300 k=10", WF, paths[p], &k300, 10, text, len);
    key_set crispr = make_keys(200, 23, text, len);
    for (size_t i = 0; i < crispr.n; i++) memcpy(crispr.bytes + i * 23 + 20, "NGG", 3);
    for (int p = 0; p < np; p++) run("k-mismatches, 200 keys m=23 k=4 (guide+NGG)", KM, paths[p], &crispr, 4, text, len);
    key_set one23 = make_keys(2, 23, text, len);
    run("k-mismatches, 2 keys m=23 k=4 (one word)", KM, SM_APPROX_SCALAR, &one23, 4, text, len);
    free_keys(&one20);
    free_keys(&k64);
    free_keys(&k20);
    free_keys(&k300);
    free_keys(&w64);
    free_keys(&crispr);
    free_keys(&one23);
}

int main(int argc, char **argv) {
    size_t mb = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 8;
    if (mb == 0) mb = 8;
    size_t len = mb << 20;
    uint8_t *text = malloc(len);
    if (!text) return 1;
    random_dna(text, len);
    suite("random DNA", text, len);
    if (argc > 2) {
        FILE *f = fopen(argv[2], "rb");
        if (!f) { perror(argv[2]); return 1; }
        size_t got = fread(text, 1, len, f);
        fclose(f);
        suite(argv[2], text, got);
    }
    free(text);
    return 0;
}
