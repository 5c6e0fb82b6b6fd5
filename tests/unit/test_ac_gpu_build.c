/* The automaton built on the GPU (engines/automaton/build_gpu.h) gives the
 * very bytes of the CPU builders, for DNA and text dictionaries of every
 * shape: duplicates, keys that are prefixes or suffixes of others, one key,
 * long keys that share long prefixes, many short keys. Built twice: over the
 * CPU stand-in (test_ac_gpu_build_emulated), which runs the kernels' per-key
 * code, and over a real GPU, where both ways of running the steps (one
 * launch, one launch per step) are compared; skipped without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"
#include "engines/automaton/automaton.h"
#include "testutil.h"

#define SKIPPED 77
#ifdef SM_TEST_EMULATED_GPU
#define TEST_NAME "test_ac_gpu_build_emulated"
#else
#define TEST_NAME "test_ac_gpu_build"
#endif

typedef struct {
    uint8_t fold[256];
    uint8_t *storage;
    sm_ac_key *keys;
    size_t nkeys;
} key_set;

static void key_set_free(key_set *ks) {
    free(ks->storage);
    free(ks->keys);
    memset(ks, 0, sizeof *ks);
}

/* nkeys keys of 1..max_len symbols over `symbols`; shape 0: independent
   random keys with duplicates, prefixes and suffixes of earlier ones; shape
   1: every key a long shared stem with a random tail (deep levels of one
   node each after a wide fan-out). */
static void make_keys(tu_rng *rng, key_set *ks, const char *symbols, int dna, size_t nkeys, uint32_t max_len,
                      int shape) {
    memset(ks, 0, sizeof *ks);
    for (int b = 0; b < 256; b++) ks->fold[b] = (uint8_t)b;
    if (dna)
        for (int b = 'a'; b <= 'z'; b++) ks->fold[b] = (uint8_t)(b - 32);
    size_t nsym = strlen(symbols);
    ks->storage = malloc(nkeys * (size_t)max_len);
    ks->keys = calloc(nkeys, sizeof *ks->keys);
    uint32_t stem = shape == 1 && max_len >= 2 ? tu_rng_range(rng, 1, max_len / 2) : 0;
    uint32_t patterns = 0;
    for (size_t i = 0; i < nkeys; i++) {
        uint8_t *s = ks->storage + i * max_len;
        uint32_t len = tu_rng_range(rng, 1, max_len), output;
        const sm_ac_key *other = i ? &ks->keys[tu_rng_below(rng, (uint32_t)i)] : NULL;
        int kind = i && shape == 0 ? (int)tu_rng_below(rng, 8) : 0;
        if (kind == 1 || kind == 5) { /* the same string: another output, or the same */
            len = other->len;
            memcpy(s, other->seq, len);
        } else if (kind == 2) {
            len = tu_rng_range(rng, 1, other->len);
            memcpy(s, other->seq, len);
        } else if (kind == 3) {
            len = tu_rng_range(rng, 1, other->len);
            memcpy(s, other->seq + other->len - len, len);
        } else {
            for (uint32_t j = 0; j < len; j++) s[j] = (uint8_t)symbols[tu_rng_below(rng, (uint32_t)nsym)];
            if (shape == 1 && i && len > stem) memcpy(s, ks->storage, stem);
        }
        output = kind == 5 ? other->output : patterns++ * 2 + (dna ? tu_rng_below(rng, 2) : 0);
        ks->keys[i] = (sm_ac_key){s, len, output};
    }
    ks->nkeys = nkeys;
}

static int same_as_cpu(const key_set *ks, const char *what) {
    sm_buf cpu, gpu;
    sm_error err;
    memset(&cpu, 0, sizeof cpu);
    memset(&gpu, 0, sizeof gpu);
    int ok = 0;
    double ms[3];
    if (getenv("SM_TEST_VERBOSE")) fprintf(stderr, "%s\n", what);
    if (sm_ac_build(ks->keys, ks->nkeys, ks->fold, 2, 0, &cpu, &err) != SM_OK) {
        tu_check(0, "%s: the CPU build failed: %s", what, err.message);
    } else if (sm_ac_build_gpu(ks->keys, ks->nkeys, ks->fold, 0, 0, &gpu, ms, &err) != SM_OK) {
        tu_check(0, "%s: the GPU build failed: %s", what, err.message);
    } else {
        ok = cpu.len == gpu.len && memcmp(cpu.data, gpu.data, cpu.len) == 0;
        size_t at = 0;
        while (!ok && at < cpu.len && at < gpu.len && cpu.data[at] == gpu.data[at]) at++;
        tu_check(ok, "%s: %zu keys: GPU section differs from the CPU's (%zu / %zu bytes, first at %zu)", what,
                 ks->nkeys, gpu.len, cpu.len, at);
    }
    free(cpu.data);
    free(gpu.data);
    return ok;
}

static void rounds(tu_rng *rng, const char *steps) {
    static const char *text_symbols[] = {"ab", "abcxyz", "hello world", "\x01\x02\xff\x80zq"};
    char what[96];
    unsigned n = tu_scaled(40);
    for (unsigned r = 0; r < n; r++) {
        key_set ks;
        int dna = (int)tu_rng_below(rng, 2), shape = (int)tu_rng_below(rng, 2);
        size_t nkeys = tu_rng_range(rng, 1, r % 4 == 0 ? 2000 : 150);
        uint32_t max_len = tu_rng_range(rng, 1, r % 3 == 0 ? 300 : 24);
        make_keys(rng, &ks, dna ? "ACGT" : text_symbols[tu_rng_below(rng, 4)], dna, nkeys, max_len, shape);
        snprintf(what, sizeof what, "%s round %u (%s, shape %d, keys %zu, up to %u)", steps, r, dna ? "dna" : "text",
                 shape, nkeys, max_len);
        same_as_cpu(&ks, what);
        key_set_free(&ks);
    }
    /* a single key, and a single symbol */
    key_set ks;
    make_keys(rng, &ks, "ACGT", 1, 1, 500, 0);
    same_as_cpu(&ks, "one key");
    key_set_free(&ks);
    make_keys(rng, &ks, "A", 1, 3, 1, 0);
    same_as_cpu(&ks, "one symbol");
    key_set_free(&ks);
}

/* A database compiled for the GPU (backend SM_BACKEND_CUDA, the build left
   at the CPU) has its automaton built there unasked from
   SEQMATCH_GPU_BUILD_FROM key symbols, never below them or with "never", and
   its bytes are those of the database built on the CPU. */
static void planned_for_gpu(tu_rng *rng) {
    enum { NPAT = 120 };
    static char seqs[NPAT][64];
    sm_pattern pats[NPAT];
    uint64_t symbols = 0;
    for (int i = 0; i < NPAT; i++) {
        size_t len = tu_rng_range(rng, 12, 63);
        for (size_t j = 0; j < len; j++) seqs[i][j] = "ACGT"[tu_rng_below(rng, 4)];
        pats[i].name = NULL;
        pats[i].seq = seqs[i];
        pats[i].len = len;
        symbols += len;
    }
    static const struct { const char *from; int on_gpu; } cases[] = {
        {"never", 0}, {"1", 1}, {"0", 1}, {NULL, 0} /* the default: far more symbols */, {"huge", 0}};
    const void *first = NULL;
    size_t first_size = 0;
    sm_db *keep = NULL;
    char exact_from[32];
    snprintf(exact_from, sizeof exact_from, "%llu", (unsigned long long)symbols);
    for (size_t c = 0; c < sizeof cases / sizeof *cases + 2; c++) {
        /* the last two: a threshold of exactly the set's symbols (built there), and one more (not) */
        const char *from = c < sizeof cases / sizeof *cases ? cases[c].from : exact_from;
        int want_gpu = c < sizeof cases / sizeof *cases ? cases[c].on_gpu : 1;
        char one_more[32];
        if (c == sizeof cases / sizeof *cases + 1) {
            snprintf(one_more, sizeof one_more, "%llu", (unsigned long long)symbols + 1);
            from = one_more;
            want_gpu = 0;
        }
        if (from) setenv("SEQMATCH_GPU_BUILD_FROM", from, 1);
        else unsetenv("SEQMATCH_GPU_BUILD_FROM");
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.engine = SM_ENGINE_AUTOMATON;
        co.backend = SM_BACKEND_CUDA;
        co.strands = SM_STRAND_FORWARD; /* the keys are the patterns: as many symbols */
        sm_db *db = NULL;
        sm_error err;
        if (sm_compile(pats, NPAT, &co, &db, &err) != SM_OK) {
            tu_check(0, "compiled for the GPU (build from %s): %s", from ? from : "default", err.message);
            continue;
        }
        uint64_t on = 99;
        tu_check(sm_db_get(db, SM_DB_AUTOMATON_BUILT_ON, &on) == SM_OK &&
                     on == (want_gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU),
                 "build from %s symbols, %llu in the set: built on %s", from ? from : "the default",
                 (unsigned long long)symbols, on == SM_BACKEND_CUDA ? "the GPU" : "the CPU");
        size_t size;
        const void *bytes = sm_db_bytes(db, &size);
        if (!keep) {
            keep = db, first = bytes, first_size = size;
            continue;
        }
        tu_check(size == first_size && memcmp(bytes, first, size) == 0,
                 "build from %s: the database's bytes differ from the first's", from ? from : "the default");
        sm_db_free(db);
    }
    unsetenv("SEQMATCH_GPU_BUILD_FROM");
    sm_db_free(keep);
}

#ifndef SM_TEST_EMULATED_GPU
/* Larger dictionaries on a real GPU only: many groups of keys, deep keys. */
static void large(tu_rng *rng, const char *steps) {
    struct { size_t nkeys; uint32_t len; int shape; } sets[] = {{3000, 900, 1}, {20000, 31, 0}, {600, 3000, 0}};
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        key_set ks;
        make_keys(rng, &ks, "ACGT", 1, sets[s].nkeys, sets[s].len, sets[s].shape);
        char what[96];
        snprintf(what, sizeof what, "%s large set %zu", steps, s);
        same_as_cpu(&ks, what);
        key_set_free(&ks);
    }
}
#endif

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(20261129));
    if (sm_cuda_device_count() == 0) {
        key_set ks;
        sm_buf b;
        sm_error err;
        memset(&b, 0, sizeof b);
        make_keys(&rng, &ks, "ACGT", 1, 4, 8, 0);
        tu_check(sm_ac_build_gpu(ks.keys, ks.nkeys, ks.fold, 0, 0, &b, NULL, &err) == SM_ERR_DEVICE && b.len == 0,
                 "without a GPU the GPU build is refused, the section untouched");
        key_set_free(&ks);
        free(b.data);
        /* unasked, the build stays on the CPU */
        setenv("SEQMATCH_GPU_BUILD_FROM", "0", 1);
        sm_pattern p = {NULL, "ACGTTGCA", 8};
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.engine = SM_ENGINE_AUTOMATON;
        co.backend = SM_BACKEND_CUDA;
        sm_db *db = NULL;
        uint64_t on = 99;
        tu_check(sm_compile(&p, 1, &co, &db, &err) == SM_OK && sm_db_get(db, SM_DB_AUTOMATON_BUILT_ON, &on) == SM_OK &&
                     on == SM_BACKEND_CPU,
                 "compiled for the GPU without one: built on the CPU (%s)", db ? "" : err.message);
        sm_db_free(db);
        unsetenv("SEQMATCH_GPU_BUILD_FROM");
        tu_summary(TEST_NAME);
        printf(TEST_NAME ": no CUDA device: the comparison did not run (skipped)\n");
        return tu_failures() ? 1 : SKIPPED;
    }
    rounds(&rng, "one launch");
    planned_for_gpu(&rng);
#ifndef SM_TEST_EMULATED_GPU
    int full = tu_scaled(100) >= 100; /* not under the sanitizers' small scale */
    if (full) large(&rng, "one launch");
    setenv("SEQMATCH_AC_GPU_STEPS", "launches", 1);
    rounds(&rng, "launch per step");
    if (full) large(&rng, "launch per step");
#endif
    return tu_summary(TEST_NAME);
}
