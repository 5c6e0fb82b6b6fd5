/* The CUDA backend against the CPU runner: same hits, same order, same
 * counts and record ends, for every exact engine and every planner outcome
 * (the automaton, the k-mer table's direct and hash layouts, Wu-Manber,
 * Shift-And's dense and levels layouts, and databases of two sections):
 * random pattern sets (DNA with IUPAC codes, --text-iupac and both strands,
 * text with and without ignore-case), records of any length holding odd
 * bytes, tiny to default batch sizes (so records are cut across batches
 * everywhere), bytes fed in random pieces, flushes in the middle, a stop
 * asked by the callback, and batches with more hits than the first hit
 * buffer holds; circular records (hits over a record's end) in a third of
 * the rounds. Then large sets: 8-mers whose tables fit in shared memory
 * (1000) and do not (16000), on the automaton and the k-mer table, and a
 * word list whose automaton is read through L2.
 *
 * Without a GPU the refusals are checked (no device, approximate databases)
 * and the test reports itself skipped (exit 77): the differential part runs
 * on a machine with a GPU. Built as test_cuda_emulated (SM_TEST_EMULATED_GPU)
 * it links a CPU stand-in for the GPU side (tests/emulated), which runs the
 * kernels' own chunk code, and runs the differential part everywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "backends/cuda/cuda_device.h"
#include "testutil.h"

#define SKIPPED 77

typedef struct {
    tu_hits hits;
    uint64_t *done;
    size_t ndone, done_cap;
    uint64_t stop_after; /* stop when this many hits were seen (0: never) */
    uint64_t seen;
} collector;

static int collect(const sm_hit *hit, void *ctx) {
    collector *c = ctx;
    tu_hits_add(&c->hits, hit->record, hit->start, hit->end, hit->pattern, hit->strand, hit->errors);
    c->seen++;
    return c->stop_after && c->seen >= c->stop_after;
}

static void record_done(uint64_t record, void *ctx) {
    collector *c = ctx;
    if (c->ndone == c->done_cap) {
        c->done_cap = c->done_cap ? c->done_cap * 2 : 64;
        c->done = realloc(c->done, c->done_cap * sizeof *c->done);
    }
    c->done[c->ndone++] = record;
}

typedef struct {
    char **data;
    size_t *len;
    size_t n;
} records;

typedef struct {
    int status;
    uint64_t *counts;
    uint64_t total;
} run_result;

/* Circular records in the runs that follow (sm_runner_options.circular). */
static int circular_runs;
/* Partial matches at record ends (min_overlap, 0: off) and hit limits in the
   runs that follow. */
static uint32_t ends_min_overlap;
static int limit_runs;

/* Runs every record through a runner of the given backend, fed in pieces
   whose sizes come from a generator seeded alike for both backends. */
static run_result run(const sm_db *db, sm_backend backend, int count_only, size_t batch, const records *recs,
                      uint64_t feed_seed, collector *c) {
    run_result out = {0, NULL, 0};
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.backend = backend;
    /* the GPU's results are settled on the runner's team: 1 to 3 threads */
    o.threads = backend == SM_BACKEND_CUDA ? 1 + (unsigned)(feed_seed % 3) : 1;
    o.count_only = count_only;
    o.chunk_size = backend == SM_BACKEND_CUDA ? batch : 0;
    o.on_hit = collect;
    o.ctx = c;
    o.on_record_done = record_done;
    o.circular = circular_runs;
    o.min_overlap = ends_min_overlap;
    if (limit_runs) {
        o.max_hits_per_pattern = 2;
        o.max_hits_per_record = 7;
        o.fewest_errors = limit_runs > 1;
    }
    sm_runner *r = NULL;
    sm_error err;
    out.status = sm_runner_create(db, &o, &r, &err);
    if (out.status != SM_OK) {
        printf("runner: %s\n", err.message);
        return out;
    }
    tu_rng feed;
    tu_rng_seed(&feed, feed_seed);
    int status = SM_OK;
    for (size_t i = 0; i < recs->n && status == SM_OK; i++) {
        sm_runner_begin_record(r);
        size_t at = 0;
        while (at < recs->len[i] && status == SM_OK) {
            size_t n = 1 + tu_rng_below(&feed, 3000);
            if (n > recs->len[i] - at) n = recs->len[i] - at;
            status = sm_runner_feed(r, recs->data[i] + at, n);
            at += n;
            if (status == SM_OK && tu_rng_chance(&feed, 2)) status = sm_runner_flush(r);
        }
        if (status == SM_OK) status = sm_runner_end_record(r);
    }
    if (status == SM_OK) status = sm_runner_flush(r);
    out.status = status;
    sm_db_info info;
    sm_db_get_info(db, &info);
    out.counts = calloc(info.pattern_count ? info.pattern_count : 1, sizeof *out.counts);
    memcpy(out.counts, sm_runner_counts(r), info.pattern_count * sizeof *out.counts);
    out.total = sm_runner_total(r);
    sm_runner_free(r);
    return out;
}

static void collector_free(collector *c) {
    tu_hits_free(&c->hits);
    free(c->done);
    memset(c, 0, sizeof *c);
}

/* Compares the CUDA backend with the CPU runner on one database and input;
   returns the CPU's hits. */
static uint64_t compare(const sm_db *db, const records *recs, size_t batch, int count_only, uint64_t stop_after,
                    uint64_t feed_seed, const char *what) {
    collector cpu = {0}, gpu = {0};
    tu_hits_init(&cpu.hits);
    tu_hits_init(&gpu.hits);
    cpu.stop_after = gpu.stop_after = stop_after;
    run_result a = run(db, SM_BACKEND_CPU, count_only, batch, recs, feed_seed, &cpu);
    run_result b = run(db, SM_BACKEND_CUDA, count_only, batch, recs, feed_seed, &gpu);
    char label[256];
    snprintf(label, sizeof label, "%s (batch %zu, %s%s)", what, batch, count_only ? "counts" : "hits",
             stop_after ? ", stopped" : "");
    tu_check(a.status == b.status, "%s: status cpu %d gpu %d", label, a.status, b.status);
    if (a.status == SM_OK && b.status == SM_OK) {
        sm_db_info info;
        sm_db_get_info(db, &info);
        tu_check(a.total == b.total, "%s: total cpu %llu gpu %llu", label, (unsigned long long)a.total,
                 (unsigned long long)b.total);
        size_t diff = 0;
        for (uint32_t p = 0; p < info.pattern_count; p++) diff += a.counts[p] != b.counts[p];
        tu_check(diff == 0, "%s: %zu patterns counted differently", label, diff);
        tu_check(cpu.ndone == gpu.ndone && (cpu.ndone == 0 || !memcmp(cpu.done, gpu.done, cpu.ndone * 8)),
                 "%s: record ends differ (%zu vs %zu)", label, cpu.ndone, gpu.ndone);
    }
    if (!count_only) {
        /* A stop shows on the CPU runner within the batch; compare the shared prefix. */
        if (stop_after) {
            tu_check(gpu.hits.n <= stop_after, "%s: %zu hits delivered after the stop at %llu", label, gpu.hits.n,
                     (unsigned long long)stop_after);
            if (cpu.hits.n > stop_after) cpu.hits.n = stop_after;
        }
        tu_check(tu_hits_sorted(&gpu.hits), "%s: hits out of order", label);
        tu_check(tu_hits_equal(&cpu.hits, &gpu.hits, label), "%s: hits differ", label);
    }
    free(a.counts);
    free(b.counts);
    collector_free(&cpu);
    collector_free(&gpu);
    return a.total;
}

static sm_db *compile_opts(sm_pattern *pats, size_t n, sm_alphabet alphabet, sm_strands strands, unsigned flags,
                           sm_engine engine, int quiet) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.alphabet = alphabet;
    o.strands = strands;
    o.flags = flags;
    o.engine = engine;
    sm_db *db = NULL;
    sm_error err;
    if (sm_compile(pats, n, &o, &db, &err) != SM_OK) {
        if (!quiet) tu_check(0, "compile: %s", err.message);
        return NULL;
    }
    return db;
}

static sm_db *compile_set(sm_pattern *pats, size_t n, sm_alphabet alphabet, sm_strands strands, unsigned flags,
                          sm_engine engine) {
    return compile_opts(pats, n, alphabet, strands, flags, engine, 0);
}

/* The engines of a database, as "kmer+automaton", for messages. */
static const char *engines_of(const sm_db *db, char *buf, size_t size) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    buf[0] = 0;
    for (uint32_t i = 0; i < info.section_count; i++) {
        const char *name = sm_db_section_name(db, i, NULL, NULL);
        size_t at = strlen(buf);
        snprintf(buf + at, size - at, "%s%s", i ? "+" : "", name ? name : "?");
    }
    return buf;
}

static void free_records(records *r) {
    for (size_t i = 0; i < r->n; i++) free(r->data[i]);
    free(r->data);
    free(r->len);
}

/* Odd bytes the kernels' byte maps must treat as the CPU does: bytes next
   to the letters in the ASCII table, U, NUL and a high byte. */
static void sprinkle(tu_rng *rng, char *data, size_t len) {
    static const char odd[] = {'@', 'B', 'u', 'U', 'n', 'N', '\0', (char)0xc1, '[', '`', 'T' | 0x20};
    size_t n = len / 50 + 1;
    for (size_t i = 0; i < n && len; i++) data[tu_rng_below(rng, (uint32_t)len)] = odd[tu_rng_below(rng, sizeof odd)];
}

static void random_records(tu_rng *rng, records *r, int dna, size_t max_len) {
    r->n = 1 + tu_rng_below(rng, 12);
    r->data = calloc(r->n, sizeof *r->data);
    r->len = calloc(r->n, sizeof *r->len);
    for (size_t i = 0; i < r->n; i++) {
        size_t len = tu_rng_chance(rng, 15) ? 0 : tu_rng_below(rng, (uint32_t)max_len);
        r->len[i] = len;
        r->data[i] = malloc(len + 1);
        if (dna)
            tu_random_iupac(rng, r->data[i], len, 3, tu_rng_chance(rng, 50) ? 10 : 0);
        else
            tu_random_from(rng, r->data[i], len, "abAB c");
        if (tu_rng_chance(rng, 30)) sprinkle(rng, r->data[i], len);
    }
}

/* Patterns that occur: pieces of the records, mutated a little; all of
   length `fixed` (A/C/G/T only for DNA) when it is not 0. */
static sm_pattern *random_patterns(tu_rng *rng, const records *recs, size_t n, int dna, uint32_t fixed, char **store) {
    sm_pattern *p = calloc(n, sizeof *p);
    *store = malloc(n * 41);
    for (size_t i = 0; i < n; i++) {
        char *s = *store + i * 41;
        size_t len = fixed ? fixed : 1 + tu_rng_below(rng, tu_rng_chance(rng, 70) ? 8 : 40);
        const char *src = NULL;
        for (int tries = 0; tries < 4 && !src; tries++) {
            size_t k = tu_rng_below(rng, (uint32_t)recs->n);
            if (recs->len[k] >= len) src = recs->data[k] + tu_rng_below(rng, (uint32_t)(recs->len[k] - len + 1));
        }
        if (src && tu_rng_chance(rng, 80))
            memcpy(s, src, len);
        else if (dna)
            tu_random_dna(rng, s, len);
        else
            tu_random_from(rng, s, len, "abAB c");
        if (dna) {
            for (size_t j = 0; j < len; j++)
                if (!s[j] || !strchr("ACGTacgt", s[j])) s[j] = "ACGT"[tu_rng_below(rng, 4)];
            if (!fixed && tu_rng_chance(rng, 10)) s[tu_rng_below(rng, (uint32_t)len)] = "RYN"[tu_rng_below(rng, 3)];
        } else {
            for (size_t j = 0; j < len; j++)
                if (s[j] == 0) s[j] = 'a';
        }
        p[i].name = NULL;
        p[i].seq = s;
        p[i].len = len;
    }
    return p;
}

/* The engines of the registry that do a kind of matching and need no PAM,
   after auto (engines[0]); returns how many in all. */
static size_t engines_for(sm_match match, sm_engine *engines, size_t cap) {
    size_t n = 0;
    engines[n++] = SM_ENGINE_AUTO;
    for (size_t i = 0; i < sm_engine_count() && n < cap; i++) {
        sm_engine e = sm_engine_at(i);
        if ((sm_engine_matches(e) & (1u << match)) && !(sm_engine_traits(e) & SM_ENGINE_TRAIT_NEEDS_PAM))
            engines[n++] = e;
    }
    return n;
}

/* Whether the GPU runs every section of db (sm_db_section_gpu). */
static int gpu_runs(const sm_db *db) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    char why[256];
    for (uint32_t i = 0; i < info.section_count; i++)
        if (!sm_db_section_gpu(db, i, why, sizeof why)) return 0;
    return 1;
}

static void random_rounds(tu_rng *rng) {
    static const size_t batches[] = {64, 200, 1000, 4096, 65536, 0};
    sm_engine engines[32];
    size_t nengines = engines_for(SM_MATCH_EXACT, engines, 32);
    static const uint32_t kmer_lengths[] = {1, 3, 8, 11, 12, 13, 20, 31, 32};
    unsigned rounds = tu_scaled(60);
    for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
        int dna = tu_rng_chance(rng, 70);
        records recs;
        random_records(rng, &recs, dna, tu_rng_chance(rng, 50) ? 300 : 20000);
        sm_engine engine = engines[tu_rng_below(rng, (uint32_t)nengines)];
        unsigned flags = 0;
        if (!dna && tu_rng_chance(rng, 50)) flags |= SM_FLAG_IGNORE_CASE;
        if (dna && tu_rng_chance(rng, 15)) {
            flags |= SM_FLAG_TEXT_IUPAC;
            engine = tu_rng_chance(rng, 50) ? SM_ENGINE_AUTO : SM_ENGINE_SHIFTAND;
        }
        /* The k-mer table takes keys of one length; the planner may choose
           it for many of them. */
        uint32_t fixed = 0;
        if (engine == SM_ENGINE_KMER || (engine == SM_ENGINE_AUTO && tu_rng_chance(rng, 30)))
            fixed = kmer_lengths[tu_rng_below(rng, sizeof kmer_lengths / sizeof *kmer_lengths)];
        size_t n = 1 + tu_rng_below(rng, fixed && tu_rng_chance(rng, 50) ? 1500 : 60);
        char *store;
        sm_pattern *pats = random_patterns(rng, &recs, n, dna, fixed, &store);
        sm_strands strands = dna ? (sm_strands)tu_rng_below(rng, 3) : SM_STRAND_FORWARD;
        /* a forced engine may refuse the set (k-mer: too many symbols) */
        sm_db *db = compile_opts(pats, n, dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT, strands, flags, engine,
                                 engine != SM_ENGINE_AUTO);
        if (db && !gpu_runs(db)) {
            /* a forced engine the GPU cannot run: refused there (refusals()) */
            tu_check(engine != SM_ENGINE_AUTO, "round %u: auto planned an engine the GPU cannot run", round);
            sm_db_free(db);
            db = NULL;
        }
        if (db) {
            char what[160], names[64];
            snprintf(what, sizeof what, "round %u (%s%s%s, %zu patterns, %s, %zu records)", round, dna ? "dna" : "text",
                     flags & SM_FLAG_TEXT_IUPAC ? " text-iupac" : "", flags & SM_FLAG_IGNORE_CASE ? " -i" : "", n,
                     engines_of(db, names, sizeof names), recs.n);
            size_t batch = batches[tu_rng_below(rng, 6)];
            uint64_t feed_seed = tu_rng_next(rng);
            compare(db, &recs, batch, 0, 0, feed_seed, what);
            compare(db, &recs, batch, 1, 0, feed_seed, what);
            if (round % 5 == 0) compare(db, &recs, batch, 0, 1 + tu_rng_below(rng, 50), feed_seed, what);
            if (round % 3 == 0) {
                /* circular records: the hits over each record's end too */
                char circ[sizeof what + 16];
                snprintf(circ, sizeof circ, "%s circular", what);
                circular_runs = 1;
                compare(db, &recs, batch, 0, 0, feed_seed, circ);
                compare(db, &recs, batch, 1, 0, feed_seed, circ);
                circular_runs = 0;
            }
            if (round % 6 == 1) {
                /* partial matches at record ends, and hit limits */
                char ends[sizeof what + 32];
                snprintf(ends, sizeof ends, "%s min-overlap, limits %u", what, round % 4);
                ends_min_overlap = 1 + round / 6 % 3;
                limit_runs = (int)(round / 6 % 3);
                compare(db, &recs, batch, 0, 0, feed_seed, ends);
                compare(db, &recs, batch, 1, 0, feed_seed, ends);
                ends_min_overlap = 0;
                limit_runs = 0;
            }
            sm_db_free(db);
        }
        free(pats);
        free(store);
        free_records(&recs);
    }
}

/* Approximate patterns: pieces of the records (so that most occur), with a
   few substitutions, insertions and deletions; 1 to 300 symbols, mostly
   primer-sized, some longer than a 64-bit word; DNA ones with an IUPAC code
   now and then. */
static sm_pattern *approx_patterns(tu_rng *rng, const records *recs, size_t n, int dna, char **store) {
    sm_pattern *p = calloc(n, sizeof *p);
    *store = malloc(n * 320);
    for (size_t i = 0; i < n; i++) {
        char *s = *store + i * 320;
        uint32_t pick = tu_rng_below(rng, 100);
        size_t len = pick < 5 ? 1 + tu_rng_below(rng, 4) : pick < 75 ? 5 + tu_rng_below(rng, 26)
                   : pick < 90 ? 31 + tu_rng_below(rng, 34) : 65 + tu_rng_below(rng, 236);
        const char *src = NULL;
        for (int tries = 0; tries < 4 && !src; tries++) {
            size_t k = tu_rng_below(rng, (uint32_t)recs->n);
            if (recs->len[k] >= len) src = recs->data[k] + tu_rng_below(rng, (uint32_t)(recs->len[k] - len + 1));
        }
        if (src && tu_rng_chance(rng, 85)) memcpy(s, src, len);
        else if (dna) tu_random_dna(rng, s, len);
        else tu_random_from(rng, s, len, "abAB c");
        for (int e = tu_rng_below(rng, 3); e > 0 && len > 2; e--) {
            size_t at = tu_rng_below(rng, (uint32_t)len);
            uint32_t kind = tu_rng_below(rng, 3);
            if (kind == 0) s[at] = dna ? "ACGT"[tu_rng_below(rng, 4)] : "abc"[tu_rng_below(rng, 3)];
            else if (kind == 1 && len < 300) memmove(s + at + 1, s + at, len - at), len++; /* a base inserted (doubled) */
            else memmove(s + at, s + at + 1, len - at - 1), len--;
        }
        for (size_t j = 0; j < len; j++) {
            if (dna && (!s[j] || !strchr("ACGTacgt", s[j]))) s[j] = "ACGT"[tu_rng_below(rng, 4)];
            if (!dna && s[j] == 0) s[j] = 'a';
        }
        if (dna && tu_rng_chance(rng, 10)) s[tu_rng_below(rng, (uint32_t)len)] = "RYSWKMN"[tu_rng_below(rng, 7)];
        p[i].seq = s;
        p[i].len = len;
    }
    return p;
}

/* Every approximate engine the planners choose (for the CPU or the GPU) or
   that is forced, against the CPU runner: k 0..5 mismatches or edits,
   --report best and ends, a PAM, --text-iupac, both strands, text, small
   batches (runs of ends cut at batch and chunk borders), stops, circular
   records, and the stand-in's small hit buffer overflowing. */
static void approx_rounds(tu_rng *rng) {
    static const size_t batches[] = {64, 300, 1000, 4096, 65536, 0};
    unsigned rounds = tu_scaled(40);
    for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
        int dna = tu_rng_chance(rng, 75);
        records recs;
        random_records(rng, &recs, dna, tu_rng_chance(rng, 40) ? 400 : 12000);
        size_t n = 1 + tu_rng_below(rng, tu_rng_chance(rng, 20) ? 150 : 12);
        char *store;
        sm_pattern *pats = approx_patterns(rng, &recs, n, dna, &store);
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
        o.strands = dna ? (sm_strands)tu_rng_below(rng, 3) : SM_STRAND_FORWARD;
        o.match = tu_rng_chance(rng, 50) ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
        o.max_errors = tu_rng_below(rng, 6);
        o.report = tu_rng_chance(rng, 50) ? SM_REPORT_BEST : SM_REPORT_ENDS;
        /* auto in about half the rounds, else an engine of the registry
           that does this matching (those the GPU cannot run are skipped) */
        sm_engine engines[32];
        size_t nengines = engines_for(o.match, engines, 32);
        o.engine = tu_rng_chance(rng, 40) ? SM_ENGINE_AUTO : engines[tu_rng_below(rng, (uint32_t)nengines)];
        if (round % 2) o.backend = SM_BACKEND_CUDA; /* the GPU's plan */
        if (!dna && tu_rng_chance(rng, 50)) o.flags |= SM_FLAG_IGNORE_CASE;
        if (dna && tu_rng_chance(rng, 15)) o.flags |= SM_FLAG_TEXT_IUPAC;
        if (dna && tu_rng_chance(rng, 15)) o.pam = "NGG";
        sm_db *db = NULL;
        sm_error err;
        int rc = sm_compile(pats, n, &o, &db, &err);
        /* a forced engine may refuse the set (pigeonhole: pieces of patterns not longer than k) */
        tu_check(rc == SM_OK || o.engine != SM_ENGINE_AUTO, "approx round %u: compile: %s", round, err.message);
        if (db && !gpu_runs(db)) {
            /* A plan for the GPU runs there; a plan for the CPU may choose an
               engine with no GPU part (the guide engine, for a PAM), which the
               GPU refuses (refusals()). */
            tu_check(o.engine != SM_ENGINE_AUTO || o.backend != SM_BACKEND_CUDA,
                     "approx round %u: auto planned for the GPU an engine the GPU cannot run", round);
            sm_db_free(db);
            db = NULL;
        }
        if (db) {
            char what[200], names[64];
            snprintf(what, sizeof what, "approx round %u (%s%s, %zu patterns, %s %u%s%s, %s, %zu records)", round,
                     dna ? "dna" : "text", o.flags & SM_FLAG_TEXT_IUPAC ? " text-iupac" : "", n,
                     o.match == SM_MATCH_MISMATCHES ? "-m" : "-k", o.max_errors,
                     o.match == SM_MATCH_EDITS ? (o.report == SM_REPORT_ENDS ? " ends" : " best") : "",
                     o.pam ? " pam" : "", engines_of(db, names, sizeof names), recs.n);
            size_t batch = batches[tu_rng_below(rng, 6)];
            uint64_t feed_seed = tu_rng_next(rng);
            compare(db, &recs, batch, 0, 0, feed_seed, what);
            compare(db, &recs, batch, 1, 0, feed_seed, what);
            if (round % 5 == 0) compare(db, &recs, batch, 0, 1 + tu_rng_below(rng, 50), feed_seed, what);
            if (round % 4 == 0) {
                char circ[sizeof what + 16];
                snprintf(circ, sizeof circ, "%s circular", what);
                circular_runs = 1;
                compare(db, &recs, batch, 0, 0, feed_seed, circ);
                compare(db, &recs, batch, 1, 0, feed_seed, circ);
                circular_runs = 0;
            }
            if (round % 8 == 1 && !o.pam) {
                /* partial matches at record ends (N > k), and hit limits */
                char ends[sizeof what + 32];
                snprintf(ends, sizeof ends, "%s min-overlap, limits", what);
                ends_min_overlap = o.max_errors + 1 + round / 8 % 3;
                limit_runs = 1 + (int)(round / 8 % 2);
                compare(db, &recs, batch, 0, 0, feed_seed, ends);
                compare(db, &recs, batch, 1, 0, feed_seed, ends);
                ends_min_overlap = 0;
                limit_runs = 0;
            }
            sm_db_free(db);
        }
        free(pats);
        free(store);
        free_records(&recs);
    }
}

/* Exact patterns beside k mismatches (sm_compile_options.exact): a
   database of exact sections (automaton, k-mer table, Shift-And) and
   approximate ones (pigeonhole, mismatch counters), every section run on
   the GPU, against the CPU runner. */
static void exact_beside_rounds(tu_rng *rng) {
    static const size_t batches[] = {64, 300, 4096, 65536, 0};
    unsigned rounds = tu_scaled(12);
    for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
        int dna = tu_rng_chance(rng, 80);
        records recs;
        random_records(rng, &recs, dna, tu_rng_chance(rng, 40) ? 400 : 12000);
        size_t n = 2 + tu_rng_below(rng, tu_rng_chance(rng, 25) ? 150 : 12);
        char *store;
        sm_pattern *pats = approx_patterns(rng, &recs, n, dna, &store);
        unsigned char *exact = calloc(n, 1);
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
        o.strands = dna ? (sm_strands)tu_rng_below(rng, 3) : SM_STRAND_FORWARD;
        /* beside mismatches, or beside edits (whose segments own ends: the
           exact sections' hits across their borders) */
        o.match = round % 2 ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        o.max_errors = 1 + tu_rng_below(rng, 4);
        if (o.match == SM_MATCH_EDITS && tu_rng_chance(rng, 50)) o.report = SM_REPORT_ENDS;
        /* short barcodes exact, the others with errors (edits: longer than k) */
        for (size_t i = 0; i < n; i++) {
            exact[i] = pats[i].len <= 12 ? tu_rng_chance(rng, 70) : tu_rng_chance(rng, 10);
            if (pats[i].len <= o.max_errors) exact[i] = 1;
        }
        exact[tu_rng_below(rng, (uint32_t)n)] = 1;
        o.exact = exact;
        if (round % 3 != 2) o.backend = SM_BACKEND_CUDA; /* the GPU's plan */
        if (dna && tu_rng_chance(rng, 15)) o.flags |= SM_FLAG_TEXT_IUPAC;
        sm_db *db = NULL;
        sm_error err;
        int rc = sm_compile(pats, n, &o, &db, &err);
        tu_check(rc == SM_OK, "exact beside round %u: compile: %s", round, err.message);
        if (db) {
            char what[200], names[64];
            sm_db_info info;
            sm_db_get_info(db, &info);
            snprintf(what, sizeof what, "exact beside round %u (%s, %zu patterns, %u exact, -%c %u, %s, %zu records)",
                     round, dna ? "dna" : "text", n, info.pattern_count - info.approx_patterns,
                     o.match == SM_MATCH_EDITS ? 'k' : 'm', o.max_errors,
                     engines_of(db, names, sizeof names), recs.n);
            size_t batch = batches[tu_rng_below(rng, 5)];
            uint64_t feed_seed = tu_rng_next(rng);
            compare(db, &recs, batch, 0, 0, feed_seed, what);
            compare(db, &recs, batch, 1, 0, feed_seed, what);
            if (round % 4 == 1) compare(db, &recs, batch, 0, 1 + tu_rng_below(rng, 50), feed_seed, what);
            sm_db_free(db);
        }
        free(exact);
        free(pats);
        free(store);
        free_records(&recs);
    }
}

/* The pigeonhole filter whose seed tables hold pieces of 11 and 12 bases
   (the longest they take): keys of 22 to 24 bases cut for k = 1, of 33 to
   36 for k = 2, pieces of the records with a substitution now and then.
   Packed k-mismatch windows, windows of keys past 32 symbols or with an
   IUPAC code, and anchors of k edits; the GPU's description of the section
   must name the longest piece, so the rounds fail should the sets stop
   reaching those tables. */
static void long_piece_rounds(tu_rng *rng) {
    static const struct {
        sm_match match;
        uint32_t k, shortest, longest;
        int iupac;
        const char *names; /* in the GPU's description ("" : not checked) */
    } sets[] = {
        {SM_MATCH_MISMATCHES, 1, 22, 24, 0, "pieces up to 12 bases"},
        {SM_MATCH_MISMATCHES, 1, 22, 22, 0, "pieces up to 11 bases"},
        {SM_MATCH_MISMATCHES, 2, 33, 36, 0, "pieces up to 12 bases"},
        {SM_MATCH_MISMATCHES, 1, 22, 23, 1, ""},
        {SM_MATCH_EDITS, 1, 22, 24, 0, "pieces up to 12 bases"},
        {SM_MATCH_EDITS, 2, 33, 35, 0, "pieces up to 12 bases"},
    };
    static const size_t batches[] = {300, 4096, 65536, 0};
    unsigned rounds = tu_scaled(2) + 1;
    for (size_t set = 0; set < sizeof sets / sizeof *sets; set++) {
        for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
            records recs;
            random_records(rng, &recs, 1, 12000);
            size_t n = 1 + tu_rng_below(rng, round % 2 ? 300 : 40);
            char *store = malloc(n * 40);
            sm_pattern *pats = calloc(n, sizeof *pats);
            for (size_t i = 0; i < n; i++) {
                char *s = store + i * 40;
                /* the first of the longest length, so that the longest piece is there */
                uint32_t len = i == 0 ? sets[set].longest
                                      : sets[set].shortest + tu_rng_below(rng, sets[set].longest - sets[set].shortest + 1);
                const char *src = NULL;
                for (int tries = 0; tries < 4 && !src; tries++) {
                    size_t r = tu_rng_below(rng, (uint32_t)recs.n);
                    if (recs.len[r] >= len) src = recs.data[r] + tu_rng_below(rng, (uint32_t)(recs.len[r] - len + 1));
                }
                if (src && tu_rng_chance(rng, 85)) memcpy(s, src, len);
                else tu_random_dna(rng, s, len);
                for (uint32_t j = 0; j < len; j++)
                    if (!s[j] || !strchr("ACGTacgt", s[j])) s[j] = "ACGT"[tu_rng_below(rng, 4)];
                if (tu_rng_chance(rng, 30)) s[tu_rng_below(rng, len)] = "ACGT"[tu_rng_below(rng, 4)];
                if (sets[set].iupac && tu_rng_chance(rng, 30)) s[tu_rng_below(rng, len)] = "RY"[tu_rng_below(rng, 2)];
                pats[i].seq = s;
                pats[i].len = len;
            }
            sm_compile_options o;
            sm_compile_options_init(&o);
            o.strands = (sm_strands)tu_rng_below(rng, 3);
            o.match = sets[set].match;
            o.max_errors = sets[set].k;
            o.report = tu_rng_chance(rng, 50) ? SM_REPORT_BEST : SM_REPORT_ENDS;
            o.engine = SM_ENGINE_PIGEONHOLE;
            if (round % 2) o.backend = SM_BACKEND_CUDA;
            sm_db *db = NULL;
            sm_error err;
            char what[200], gpu[512] = "";
            snprintf(what, sizeof what, "long pieces, set %zu round %u (%zu patterns of %u-%u, %s %u%s)", set, round, n,
                     sets[set].shortest, sets[set].longest, o.match == SM_MATCH_MISMATCHES ? "-m" : "-k", o.max_errors,
                     o.match == SM_MATCH_EDITS ? (o.report == SM_REPORT_ENDS ? " ends" : " best") : "");
            if (sm_compile(pats, n, &o, &db, &err) != SM_OK) {
                tu_check(0, "%s: compile: %s", what, err.message);
            } else {
                sm_db_section_gpu(db, 0, gpu, sizeof gpu);
                tu_check(!*sets[set].names || strstr(gpu, sets[set].names) != NULL, "%s: the GPU runs '%s'", what, gpu);
                size_t batch = batches[tu_rng_below(rng, 4)];
                uint64_t feed_seed = tu_rng_next(rng);
                compare(db, &recs, batch, 0, 0, feed_seed, what);
                compare(db, &recs, batch, 1, 0, feed_seed, what);
                sm_db_free(db);
            }
            free(pats);
            free(store);
            free_records(&recs);
        }
    }
}

/* k edits of keys of one word over long records: the pigeonhole kernel's
   tiles (a block per 8 KB of a chunk; chunks shorter than 1 KB keep the
   slices): keys of 4 to 10 bases a piece taken from the records and
   mutated a little (an IUPAC code now and then), records with IUPAC codes,
   runs of N and lower case, batches whose chunks hold one tile, several or less.
   The GPU's description must name the tiles, so the rounds fail should
   such sets stop reaching them. */
static void tile_rounds(tu_rng *rng) {
    static const size_t batches[] = {4096, 65536, (size_t)1 << 20, 0};
    unsigned rounds = tu_scaled(2) + 2;
    for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
        records recs;
        recs.n = 2 + tu_rng_below(rng, 3);
        recs.data = calloc(recs.n, sizeof *recs.data);
        recs.len = calloc(recs.n, sizeof *recs.len);
        for (size_t i = 0; i < recs.n; i++) {
            size_t len = i == 0 ? 20000 + tu_rng_below(rng, 50000) : tu_rng_below(rng, 3000);
            recs.len[i] = len;
            recs.data[i] = malloc(len + 1);
            tu_random_iupac(rng, recs.data[i], len, 3, round % 2 ? 10 : 0);
            if (tu_rng_chance(rng, 50)) sprinkle(rng, recs.data[i], len);
        }
        const uint32_t k = 1 + tu_rng_below(rng, 3);
        size_t n = 1 + tu_rng_below(rng, round % 2 ? 150 : 20);
        /* pieces of one or two lengths, so that the combined table is built */
        const uint32_t piece = 4 + tu_rng_below(rng, 6);
        char *store = malloc(n * 64);
        sm_pattern *pats = calloc(n, sizeof *pats);
        for (size_t i = 0; i < n; i++) {
            char *x = store + i * 64;
            uint32_t len = piece * (k + 1) + tu_rng_below(rng, k + 1);
            size_t r = tu_rng_below(rng, (uint32_t)recs.n);
            if (recs.len[r] >= len && tu_rng_chance(rng, 90))
                memcpy(x, recs.data[r] + tu_rng_below(rng, (uint32_t)(recs.len[r] - len + 1)), len);
            else
                tu_random_dna(rng, x, len);
            for (uint32_t j = 0; j < len; j++)
                if (!x[j] || !strchr("ACGTacgt", x[j])) x[j] = "ACGT"[tu_rng_below(rng, 4)];
            for (uint32_t e = tu_rng_below(rng, k + 2); e > 0; e--) x[tu_rng_below(rng, len)] = "ACGT"[tu_rng_below(rng, 4)];
            if (tu_rng_chance(rng, 5)) x[tu_rng_below(rng, len)] = "RY"[tu_rng_below(rng, 2)];
            pats[i].seq = x;
            pats[i].len = len;
        }
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.strands = (sm_strands)tu_rng_below(rng, 3);
        o.match = SM_MATCH_EDITS;
        o.max_errors = k;
        o.report = tu_rng_chance(rng, 50) ? SM_REPORT_BEST : SM_REPORT_ENDS;
        o.engine = SM_ENGINE_PIGEONHOLE;
        o.backend = SM_BACKEND_CUDA;
        sm_db *db = NULL;
        sm_error err;
        char what[200], gpu[512] = "";
        snprintf(what, sizeof what, "tiles round %u (%zu patterns, -k %u %s, records of %zu..)", round, n, k,
                 o.report == SM_REPORT_ENDS ? "ends" : "best", recs.len[0]);
        if (sm_compile(pats, n, &o, &db, &err) != SM_OK) {
            tu_check(0, "%s: compile: %s", what, err.message);
        } else {
            sm_db_section_gpu(db, 0, gpu, sizeof gpu);
            tu_check(strstr(gpu, "tiles") != NULL, "%s: the GPU runs '%s'", what, gpu);
            size_t batch = batches[tu_rng_below(rng, 4)];
            uint64_t feed_seed = tu_rng_next(rng);
            compare(db, &recs, batch, 0, 0, feed_seed, what);
            compare(db, &recs, batch, 1, 0, feed_seed, what);
            sm_db_free(db);
        }
        free(pats);
        free(store);
        free_records(&recs);
    }
}

/* CRISPR guides with a PAM, mismatches and bulges (the guide engine's
   kernel): 3' and 5' PAMs with IUPAC codes, guides of one or two lengths
   taken beside PAMs of the records and mutated (IUPAC codes and N in some),
   records with N, lower case and odd bytes, --text-iupac, every strand
   choice, 0..4 mismatches and 0..2 bulges of each kind. */
static void guide_rounds(tu_rng *rng) {
    static const size_t batches[] = {300, 4096, 65536, (size_t)1 << 20, 0};
    static const char *const pams3[] = {"NGG", "NRG", "NNGRRT", "NAG"};
    static const char *const pams5[] = {"TTTV", "TYCV", "TTN"};
    unsigned rounds = tu_scaled(3) + 6, bulged = 0;
    uint64_t sites = 0, before = 0;
    for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
        records recs;
        random_records(rng, &recs, 1, round % 3 ? 3000 : 40000);
        for (size_t i = 0; i < recs.n && round % 4 == 1; i++)
            for (size_t j = 0; j < recs.len[i]; j++)
                if (tu_rng_chance(rng, 20)) recs.data[i][j] = (char)(recs.data[i][j] | 0x20);
        sm_compile_options o;
        sm_compile_options_init(&o);
        int five = tu_rng_chance(rng, 30);
        o.pam = five ? pams5[tu_rng_below(rng, 3)] : pams3[tu_rng_below(rng, 4)];
        o.pam_side = five ? SM_PAM_5PRIME : SM_PAM_3PRIME;
        o.match = SM_MATCH_MISMATCHES;
        o.max_errors = tu_rng_below(rng, 5);
        o.dna_bulges = tu_rng_below(rng, 3);
        o.rna_bulges = tu_rng_below(rng, 3);
        o.strands = (sm_strands)tu_rng_below(rng, 3);
        o.engine = SM_ENGINE_GUIDE;
        o.backend = SM_BACKEND_CUDA;
        if (tu_rng_chance(rng, 15)) o.flags |= SM_FLAG_TEXT_IUPAC;
        size_t q = strlen(o.pam), n = 2 + tu_rng_below(rng, round % 2 ? 60 : 8);
        uint32_t lengths[2] = {14 + tu_rng_below(rng, 10), 14 + tu_rng_below(rng, 19)};
        char *store = malloc(n * 64);
        sm_pattern *pats = calloc(n, sizeof *pats);
        for (size_t i = 0; i < n; i++) {
            /* the guides alone: the PAM comes from the options */
            char *g = store + i * 64;
            uint32_t L = lengths[i % 2];
            size_t r = tu_rng_below(rng, (uint32_t)recs.n);
            if (recs.len[r] >= L && tu_rng_chance(rng, 85))
                memcpy(g, recs.data[r] + tu_rng_below(rng, (uint32_t)(recs.len[r] - L + 1)), L);
            else
                tu_random_dna(rng, g, L);
            for (uint32_t j = 0; j < L; j++)
                if (!g[j] || !strchr("ACGTacgt", g[j])) g[j] = "ACGT"[tu_rng_below(rng, 4)];
            for (uint32_t e = tu_rng_below(rng, 3); e > 0; e--) g[tu_rng_below(rng, L)] = "ACGT"[tu_rng_below(rng, 4)];
            if (tu_rng_chance(rng, 8)) g[tu_rng_below(rng, L)] = "RYN"[tu_rng_below(rng, 3)];
            pats[i].seq = g;
            pats[i].len = L;
        }
        /* sites planted: a guide, a base changed, left out or put in, and its PAM made concrete */
        for (size_t t = 0; t < 3 * n && t < 40; t++) {
            size_t r = tu_rng_below(rng, (uint32_t)recs.n);
            char site[80];
            size_t len = 0, L = pats[t % n].len;
            const char *g = pats[t % n].seq;
            if (five)
                for (size_t i = 0; i < q; i++) site[len++] = o.pam[i] == 'N' ? 'C' : o.pam[i] == 'V' ? 'G' : o.pam[i] == 'Y' ? 'C' : o.pam[i];
            size_t skip = tu_rng_chance(rng, 25) ? 1 + tu_rng_below(rng, (uint32_t)L - 2) : L;
            size_t extra = tu_rng_chance(rng, 25) ? 1 + tu_rng_below(rng, (uint32_t)L - 2) : L;
            for (size_t i = 0; i < L; i++) {
                if (i == extra) site[len++] = "ACGT"[tu_rng_below(rng, 4)];
                if (i != skip) site[len++] = tu_rng_chance(rng, 4) ? "ACGT"[tu_rng_below(rng, 4)] : g[i];
            }
            if (!five)
                for (size_t i = 0; i < q; i++) site[len++] = o.pam[i] == 'N' ? 'A' : o.pam[i] == 'R' ? 'G' : o.pam[i];
            if (recs.len[r] < len) continue;
            memcpy(recs.data[r] + tu_rng_below(rng, (uint32_t)(recs.len[r] - len + 1)), site, len);
        }
        sm_db *db = NULL;
        sm_error err;
        char what[240];
        snprintf(what, sizeof what, "guide round %u (%zu guides of %u/%u, pam %s%s, -m %u, bulges %u/%u%s, strands %d)",
                 round, n, lengths[0], lengths[1], o.pam, five ? " 5'" : "", o.max_errors, o.dna_bulges, o.rna_bulges,
                 o.flags & SM_FLAG_TEXT_IUPAC ? ", text-iupac" : "", (int)o.strands);
        if (sm_compile(pats, n, &o, &db, &err) != SM_OK) {
            tu_check(0, "%s: compile: %s", what, err.message);
        } else {
            tu_check(gpu_runs(db), "%s: the GPU does not run it", what);
            size_t batch = batches[tu_rng_below(rng, 5)];
            uint64_t feed_seed = tu_rng_next(rng);
            sites += compare(db, &recs, batch, 0, 0, feed_seed, what);
            compare(db, &recs, batch, 1, 0, feed_seed, what);
            if (round % 3 == 0) compare(db, &recs, batch, 0, 1 + tu_rng_below(rng, 30), feed_seed, what);
            bulged += (o.dna_bulges || o.rna_bulges) && sites > before;
            before = sites;
            sm_db_free(db);
        }
        free(pats);
        free(store);
        free_records(&recs);
    }
    /* the rounds are worth something only when sites, bulged ones too, were found */
    tu_check(sites > 0 && bulged > 0, "guide rounds: %llu sites, %u rounds with bulges found sites",
             (unsigned long long)sites, bulged);
    printf("guide rounds: %llu sites over %u rounds, %u rounds with bulges found sites\n", (unsigned long long)sites,
           rounds, bulged);
}

/* Records of DNA for the large sets. */
static void long_records(tu_rng *rng, records *recs) {
    recs->n = 3;
    recs->data = calloc(3, sizeof *recs->data);
    recs->len = calloc(3, sizeof *recs->len);
    size_t sizes[3] = {(size_t)tu_scaled(100) * 150000, 12345, (size_t)tu_scaled(100) * 100000};
    for (size_t i = 0; i < 3; i++) {
        recs->len[i] = sizes[i];
        recs->data[i] = malloc(sizes[i]);
        tu_random_iupac(rng, recs->data[i], sizes[i], 1, 5);
    }
}

/* n distinct k-mers (k <= 8): a random odd multiplier permutes the codes. */
static sm_pattern *distinct_kmers(tu_rng *rng, size_t n, uint32_t k, char **store) {
    *store = malloc(n * k);
    sm_pattern *pats = calloc(n, sizeof *pats);
    uint32_t mul = (uint32_t)(tu_rng_next(rng) | 1), add = (uint32_t)tu_rng_next(rng);
    uint32_t mask = (1u << (2 * k)) - 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t code = (uint32_t)((i * mul + add) & mask);
        for (uint32_t j = 0; j < k; j++) (*store)[i * k + j] = "ACGT"[(code >> (2 * j)) & 3];
        pats[i].seq = *store + i * k;
        pats[i].len = k;
    }
    return pats;
}

/* n pieces of length k of the records (some with an IUPAC code when iupac). */
static sm_pattern *sampled(tu_rng *rng, const records *recs, size_t n, uint32_t k, int iupac, char **store) {
    *store = malloc(n * k);
    sm_pattern *pats = calloc(n, sizeof *pats);
    for (size_t i = 0; i < n; i++) {
        const char *src = recs->data[0] + tu_rng_below(rng, (uint32_t)(recs->len[0] - k));
        char *s = *store + i * k;
        for (uint32_t j = 0; j < k; j++) s[j] = src[j] && strchr("ACGTacgt", src[j]) ? src[j] : 'A';
        if (iupac) s[tu_rng_below(rng, k)] = "RYSWKMN"[tu_rng_below(rng, 7)];
        pats[i].seq = s;
        pats[i].len = k;
    }
    return pats;
}

static void run_large(const records *recs, sm_pattern *pats, size_t n, sm_strands strands, unsigned flags,
                      sm_engine engine, const char *what, int small_batches) {
    sm_db *db = compile_set(pats, n, SM_ALPHABET_DNA, strands, flags, engine);
    if (!db) return;
    char label[160], names[64];
    snprintf(label, sizeof label, "%s (%s)", what, engines_of(db, names, sizeof names));
    compare(db, recs, 0, 1, 0, 7, label);
    compare(db, recs, 0, 0, 0, 7, label);
    if (small_batches) compare(db, recs, 100000, 1, 0, 8, label);
    sm_db_free(db);
}

/* The k-mer hash layout looked up by a sampled m-mer (k of 27 to 31, sets
   whose filter is past shared memory): sampled keys of 31, 28 and 27 nt
   (the longest and shortest m-mers) on one and both strands, and beside
   longer keys, against the CPU at several batch sizes; then keys that all
   hold one 16-mer somewhere, so that the table crowds and the kernel
   filters per position, planted in the records. With a generator of its
   own: the rounds after draw as before. */
static void sampled_mmer_rounds(tu_rng *rng) {
    records recs;
    long_records(rng, &recs);
    /* past 32,768 slots the filter leaves shared memory; hits and counts
       each at a batch size of their own */
    static const struct {
        uint32_t k, keys;
        sm_strands strands;
        size_t hits_batch, counts_batch;
    } sets[] = {{31, 40000, SM_STRAND_FORWARD, 0, 65536},
                {28, 20000, SM_STRAND_BOTH, 100000, 0},
                {27, 40000, SM_STRAND_FORWARD, 100000, 67536}};
    uint64_t found = 0;
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        char *store, what[64], gpu[512] = "";
        sm_pattern *pats = sampled(rng, &recs, sets[i].keys, sets[i].k, 0, &store);
        snprintf(what, sizeof what, "%u %u-mers%s", sets[i].keys, sets[i].k,
                 sets[i].strands == SM_STRAND_BOTH ? ", both strands" : "");
        sm_db *db = compile_set(pats, sets[i].keys, SM_ALPHABET_DNA, sets[i].strands, 0, SM_ENGINE_KMER);
        if (db) {
            tu_check(sm_db_section_gpu(db, 0, gpu, sizeof gpu) && strstr(gpu, "one lookup per 16 positions"),
                     "%s: looked up by a sampled m-mer (%s)", what, gpu);
            found += compare(db, &recs, sets[i].hits_batch, 0, 0, 13, what);
            found += compare(db, &recs, sets[i].counts_batch, 1, 0, 14, what);
            sm_db_free(db);
        }
        free(pats);
        free(store);
    }
    tu_check(found > 0, "sampled m-mer rounds: no hits to compare");
    {
        /* beside longer keys (another section): chunks read past the
           k-mers' overlap, so a lane's k-mer ending before it may start
           past the chunk's owned bytes */
        char *store, *store2, gpu[512] = "";
        sm_pattern *kmers = sampled(rng, &recs, 40000, 31, 0, &store);
        sm_pattern *longer = sampled(rng, &recs, 4, 90, 0, &store2);
        sm_pattern *mixed = calloc(40004, sizeof *mixed);
        memcpy(mixed, kmers, 40000 * sizeof *kmers);
        memcpy(mixed + 40000, longer, 4 * sizeof *longer);
        sm_db *db = compile_set(mixed, 40004, SM_ALPHABET_DNA, SM_STRAND_FORWARD, 0, SM_ENGINE_AUTO);
        if (db) {
            int seen = 0;
            for (uint32_t i = 0; i < 4 && sm_db_section_gpu(db, i, gpu, sizeof gpu); i++)
                seen |= strstr(gpu, "one lookup per 16 positions") != NULL;
            tu_check(seen, "40000 31-mers and 4 90-mers: a section looked up by a sampled m-mer");
            compare(db, &recs, 0, 1, 0, 17, "40000 31-mers and 4 90-mers");
            compare(db, &recs, 100000, 0, 0, 18, "40000 31-mers and 4 90-mers");
            sm_db_free(db);
        }
        free(mixed);
        free(kmers);
        free(longer);
        free(store);
        free(store2);
    }
    static const char shared[] = "GATTACACATTAGGCA";
    const size_t n = 20000; /* both strands: 40,000 slots */
    char *store = malloc(n * 31);
    sm_pattern *pats = calloc(n, sizeof *pats);
    for (size_t i = 0; i < n; i++) {
        char *key = store + i * 31;
        tu_random_dna(rng, key, 31);
        memcpy(key + tu_rng_below(rng, 16), shared, 16);
        pats[i].seq = key;
        pats[i].len = 31;
    }
    for (size_t planted = 0; planted < 2000; planted++) {
        size_t r = tu_rng_below(rng, 3);
        if (recs.len[r] < 64) continue;
        memcpy(recs.data[r] + tu_rng_below(rng, (uint32_t)(recs.len[r] - 31)), pats[tu_rng_below(rng, (uint32_t)n)].seq, 31);
    }
    sm_db *db = compile_set(pats, n, SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_KMER);
    if (db) {
        uint64_t crowded = compare(db, &recs, 0, 0, 0, 15, "20000 31-mers sharing a 16-mer");
        tu_check(crowded >= 1000, "20000 31-mers sharing a 16-mer: %llu hits of about 2000 planted",
                 (unsigned long long)crowded);
        sm_db_free(db);
    }
    free(pats);
    free(store);
    free_records(&recs);
}

/* A word list whose automaton is read through L2: 2400 words of 1-10
   letters of both cases, many sharing stems and suffixes, over text of
   those letters, spaces and odd bytes with the words planted (and cut by
   record ends, and a record shorter than most words), case kept and
   ignored, on the automaton kernel. */
static void large_word_list(tu_rng *rng) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const size_t n = 2400;
    char *store = malloc(n * 12);
    sm_pattern *pats = calloc(n, sizeof *pats);
    for (size_t i = 0; i < n; i++) {
        char *w = store + i * 12;
        uint32_t len = i == 7 ? 1 : tu_rng_range(rng, 2, 10);
        uint32_t keep = i ? tu_rng_below(rng, 3) : 0; /* 1: a stem of an earlier word, 2: its suffix */
        const sm_pattern *other = i ? &pats[tu_rng_below(rng, (uint32_t)i)] : NULL;
        uint32_t from = keep ? tu_rng_range(rng, 1, (uint32_t)other->len) : 0;
        if (from > len) from = len;
        if (keep == 1) memcpy(w, other->seq, from);
        else if (keep == 2) memcpy(w, other->seq + other->len - from, from);
        for (uint32_t j = keep ? from : 0; j < len; j++) w[j] = letters[tu_rng_below(rng, 52)];
        pats[i].seq = w;
        pats[i].len = len;
    }
    records recs;
    recs.n = 3;
    recs.data = calloc(recs.n, sizeof *recs.data);
    recs.len = calloc(recs.n, sizeof *recs.len);
    for (size_t r = 0; r < recs.n; r++) {
        size_t len = r == 1 ? 777 : r == 2 ? 3 : (size_t)tu_scaled(100) * 20000;
        recs.len[r] = len;
        recs.data[r] = malloc(len);
        for (size_t i = 0; i < len; i++) {
            uint32_t x = tu_rng_below(rng, 64);
            recs.data[r][i] = x < 52 ? letters[x] : x < 62 ? ' ' : (char)(0x80 + x);
        }
        for (size_t planted = 0; len > 12 && planted < len / 40; planted++) {
            const sm_pattern *w = &pats[tu_rng_below(rng, (uint32_t)n)];
            size_t at = tu_rng_below(rng, (uint32_t)(len - w->len));
            memcpy(recs.data[r] + at, w->seq, w->len);
        }
    }
    /* words cut by record ends: a key must not run on into the next record */
    for (size_t r = 0; r + 1 < recs.n; r++) {
        const sm_pattern *w = &pats[0];
        for (size_t i = 0; i < n && w->len < 6; i++) w = &pats[i];
        size_t cut = w->len / 2;
        if (recs.len[r] < cut || recs.len[r + 1] < w->len - cut) continue;
        memcpy(recs.data[r] + recs.len[r] - cut, w->seq, cut);
        memcpy(recs.data[r + 1], w->seq + cut, w->len - cut);
    }
    /* 2400 words take about 9,900 states with case kept and 9,000 with case
       ignored. Packed in no more than 100 KiB they are not: the first rows
       in shared memory, the rest read through L2; counting, the first 8192
       states in shared memory, the others in device memory. As they are
       (150 and 161 KiB), the packed form with every counter beside it. The
       first 1400 words: the table packed in shared memory, and
       (SEQMATCH_CUDA_AC_PACKED=0) as a larger set's. */
    for (int way = 0; way < 8; way++) {
        unsigned flags = way & 1 ? SM_FLAG_IGNORE_CASE : 0;
        size_t words = way < 2 || way >= 6 ? n : 1400;
        int packed = way == 2 || way == 3 || way >= 6;
        if (way < 2) setenv("SEQMATCH_CUDA_AC_PACKED", "100", 1);
        if (way == 4 || way == 5) setenv("SEQMATCH_CUDA_AC_PACKED", "0", 1);
        sm_db *db = compile_set(pats, words, SM_ALPHABET_TEXT, SM_STRAND_FORWARD, flags, SM_ENGINE_AUTOMATON);
        if (db) {
            char gpu[256] = "", what[64];
            snprintf(what, sizeof what, "%zu words%s%s", words, flags ? " -i" : "",
                     packed ? "" : ", not packed");
            tu_check(sm_db_section_gpu(db, 0, gpu, sizeof gpu) &&
                         strstr(gpu, packed ? "in shared memory packed" : "read through L2"),
                     "%s: the automaton %s (%s)", what, packed ? "packed" : "read through L2", gpu);
            compare(db, &recs, 0, 1, 0, 11, what);
            compare(db, &recs, 0, 0, 0, 11, what);
            compare(db, &recs, 50000, 1, 0, 12, what);
            compare(db, &recs, 4096, 0, 0, 13, what);
            sm_db_free(db);
        }
        unsetenv("SEQMATCH_CUDA_AC_PACKED");
    }
    free_records(&recs);
    free(pats);
    free(store);
}

/* Large sets: 8-mers whose tables fit in shared memory (1000) and do not
   (16000), on the automaton and the k-mer table; the k-mer table's hash
   layout; Wu-Manber's long keys; Shift-And's levels over many groups; a
   k-mer group beside the automaton; and a batch denser in hits than the
   device's first hit buffer. */
static void large_sets(tu_rng *rng) {
    records recs;
    long_records(rng, &recs);
    static const size_t counts[2] = {1000, 16000};
    for (int k = 0; k < 2; k++) {
        char *store;
        sm_pattern *pats = distinct_kmers(rng, counts[k], 8, &store);
        char what[64];
        snprintf(what, sizeof what, "%zu 8-mers", counts[k]);
        run_large(&recs, pats, counts[k], SM_STRAND_BOTH, 0, SM_ENGINE_AUTOMATON, what, 1);
        run_large(&recs, pats, counts[k], SM_STRAND_BOTH, 0, SM_ENGINE_AUTO, what, 1);
        free(pats);
        free(store);
    }
    char *store;
    sm_pattern *pats = sampled(rng, &recs, 3000, 20, 0, &store);
    run_large(&recs, pats, 3000, SM_STRAND_BOTH, 0, SM_ENGINE_KMER, "3000 20-mers", 1);
    free(pats);
    free(store);
    /* enough keys for a filter larger than shared memory: the pre-filter */
    pats = sampled(rng, &recs, 40000, 21, 0, &store);
    run_large(&recs, pats, 40000, SM_STRAND_BOTH, 0, SM_ENGINE_KMER, "40000 21-mers", 0);
    free(pats);
    free(store);
    pats = sampled(rng, &recs, 500, 40, 0, &store);
    run_large(&recs, pats, 500, SM_STRAND_BOTH, 0, SM_ENGINE_WUMANBER, "500 40-mers", 1);
    free(pats);
    free(store);
    pats = sampled(rng, &recs, 300, 12, 1, &store);
    run_large(&recs, pats, 300, SM_STRAND_BOTH, SM_FLAG_TEXT_IUPAC, SM_ENGINE_AUTO, "300 IUPAC 12-mers, text-iupac",
              0);
    free(pats);
    free(store);
    /* mixed lengths: the 8-mers go to the k-mer table, the rest elsewhere */
    pats = distinct_kmers(rng, 4000, 8, &store);
    char *store2;
    sm_pattern *longer = sampled(rng, &recs, 6, 23, 0, &store2);
    sm_pattern *mixed = calloc(4006, sizeof *mixed);
    memcpy(mixed, pats, 4000 * sizeof *pats);
    memcpy(mixed + 4000, longer, 6 * sizeof *longer);
    run_large(&recs, mixed, 4006, SM_STRAND_FORWARD, 0, SM_ENGINE_AUTO, "4000 8-mers and 6 23-mers", 1);
    free(mixed);
    free(longer);
    free(store2);
    free(pats);
    free(store);
    free_records(&recs);

    /* One batch of 6 MB with a hit at about every position: more than the
       device's first buffer (2^20 hits) holds. */
    records dense;
    dense.n = 1;
    dense.len = calloc(1, sizeof *dense.len);
    dense.data = calloc(1, sizeof *dense.data);
    dense.len[0] = (size_t)tu_scaled(100) * 6000;
    dense.data[0] = malloc(dense.len[0]);
    tu_random_dna(rng, dense.data[0], dense.len[0]);
    pats = distinct_kmers(rng, 65536 / 4, 7, &store);
    sm_db *db = compile_set(pats, 65536 / 4, SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_AUTO);
    if (db) {
        compare(db, &dense, 8u << 20, 0, 0, 9, "dense 7-mers, one batch");
        sm_db_free(db);
    }
    free(pats);
    free(store);
    /* k-edit end events denser than the device's first buffer: short keys,
       every end (--report ends), then the best of each run. */
    pats = distinct_kmers(rng, 64, 8, &store);
    for (int report = 0; report < 2; report++) {
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.match = SM_MATCH_EDITS;
        o.max_errors = 2;
        o.report = report ? SM_REPORT_BEST : SM_REPORT_ENDS;
        o.backend = SM_BACKEND_CUDA;
        sm_error err;
        if (sm_compile(pats, 64, &o, &db, &err) == SM_OK) {
            compare(db, &dense, 8u << 20, 0, 0, 10, report ? "dense 8-mers -k 2, best" : "dense 8-mers -k 2, every end");
            compare(db, &dense, 8u << 20, 1, 0, 10, report ? "dense 8-mers -k 2, best" : "dense 8-mers -k 2, every end");
            sm_db_free(db);
        } else {
            tu_check(0, "compile dense 8-mers -k 2: %s", err.message);
        }
    }
    free(pats);
    free(store);
    free_records(&dense);
}

/* What holds with or without a GPU. */
/* Shared memory within 48 KB once a kernel's own static arrays are counted
   in: the launch must still opt in to more than 48 KB (it failed with
   "invalid argument" when only the dynamic bytes were compared with 48 KB).
   The automaton counting holds its 16-bit table and a counter per state in
   shared memory beside a 1 KB byte map: one DNA key of L symbols has L + 1
   states, so keys around the sizes that put the whole just over 48 KB. */
static void shared_edge_rounds(tu_rng *rng) {
    enum { LONGEST = 6000 };
    char *key = malloc(LONGEST);
    tu_random_dna(rng, key, LONGEST);
    sm_pattern p = {NULL, key, 64};
    uint32_t states = 0, columns = 0;
    sm_db *db = compile_set(&p, 1, SM_ALPHABET_DNA, SM_STRAND_FORWARD, 0, SM_ENGINE_AUTOMATON);
    int dfa = db && sm_db_section_dfa(db, 0, &states, &columns);
    sm_db_free(db);
    if (!tu_check(dfa && states == 65 && columns > 0, "one key of 64: %u states, %u columns", states, columns)) {
        free(key);
        return;
    }
    /* table (2 bytes an entry, 16-aligned) and counters: dynamic bytes of about 48 KB - 512 */
    uint32_t middle = (48 * 1024 - 512) / (2 * columns + 4);
    records recs;
    recs.n = 2;
    recs.len = calloc(2, sizeof *recs.len);
    recs.data = calloc(2, sizeof *recs.data);
    for (uint32_t len = middle - 40; len <= middle + 40 && len < LONGEST; len += 16) {
        for (size_t r = 0; r < 2; r++) {
            /* the key, its prefixes and random DNA */
            recs.len[r] = 3 * (size_t)len + 5000;
            recs.data[r] = malloc(recs.len[r]);
            tu_random_dna(rng, recs.data[r], recs.len[r]);
            memcpy(recs.data[r] + 100, key, len);
            memcpy(recs.data[r] + 200 + len, key, len / 2);
            memcpy(recs.data[r] + recs.len[r] - len, key, len);
        }
        p.len = len;
        db = compile_set(&p, 1, SM_ALPHABET_DNA, SM_STRAND_FORWARD, 0, SM_ENGINE_AUTOMATON);
        if (db) {
            char what[96];
            snprintf(what, sizeof what, "one key of %u (%u columns): shared memory near 48 KB", len, columns);
            tu_check(compare(db, &recs, 65536, 1, 0, len, what) == 4, "%s: four hits", what);
            compare(db, &recs, 65536, 0, 0, len, what);
            sm_db_free(db);
        }
        for (size_t r = 0; r < 2; r++) free(recs.data[r]);
    }
    free(recs.data);
    free(recs.len);
    free(key);
}

static void refusals(void) {
    sm_pattern pats[2] = {{NULL, "ACGTACGTAC", 10}, {NULL, "ACGTTT", 6}};
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.backend = SM_BACKEND_CUDA;
    o.count_only = 1;
    sm_runner *r = NULL;
    sm_error err;
    /* A database the GPU cannot run is refused in one line naming the
       engine, before any device is touched: the wavefront DP (forced). */
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.match = SM_MATCH_EDITS;
    co.max_errors = 1;
    co.engine = SM_ENGINE_WAVEFRONT;
    sm_db *wf = NULL;
    if (sm_compile(pats, 2, &co, &wf, &err) == SM_OK) {
        int rc = sm_runner_create(wf, &o, &r, &err);
        tu_check(rc == SM_ERR_INVALID && r == NULL, "wavefront database on the CUDA backend: status %d", rc);
        tu_check(strstr(err.message, "wavefront") != NULL && !strchr(err.message, '\n'),
                 "refusal names the engine in one line: %s", err.message);
        sm_db_free(wf);
    } else {
        tu_check(0, "compile --engine wavefront -k 1: %s", err.message);
    }
    /* Every engine of the registry, with its first kind of matching (and a
       PAM where it needs one): one the GPU cannot run (sm_db_section_gpu)
       is refused before any device is touched, every other is taken. */
    for (size_t i = 0; i <= sm_engine_count(); i++) {
        sm_engine engine = i < sm_engine_count() ? sm_engine_at(i) : SM_ENGINE_AUTO;
        unsigned matches = engine == SM_ENGINE_AUTO ? 1u : sm_engine_matches(engine);
        sm_compile_options_init(&co);
        co.engine = engine;
        co.match = (matches & 1u << SM_MATCH_EXACT) ? SM_MATCH_EXACT
                   : (matches & 1u << SM_MATCH_MISMATCHES) ? SM_MATCH_MISMATCHES
                                                          : SM_MATCH_EDITS;
        co.max_errors = co.match == SM_MATCH_EXACT ? 0 : 1;
        if (sm_engine_traits(engine) & SM_ENGINE_TRAIT_NEEDS_PAM) co.pam = "NGG";
        sm_db *db = NULL;
        if (sm_compile(pats, 2, &co, &db, &err) != SM_OK) {
            /* an engine with limits of its own may refuse these two patterns */
            tu_check(sm_engine_traits(engine) & SM_ENGINE_TRAIT_LIMITED, "compile engine %s: %s",
                     sm_engine_name(engine), err.message);
            continue;
        }
        if (!db) continue;
        o.backend = SM_BACKEND_CUDA;
        int rc = sm_runner_create(db, &o, &r, &err);
        if (!gpu_runs(db)) {
            tu_check(rc == SM_ERR_INVALID && r == NULL, "engine %s on the CUDA backend: status %d, not refused",
                     sm_engine_name(engine), rc);
            tu_check(strstr(err.message, sm_engine_name(engine)) != NULL && !strchr(err.message, '\n'),
                     "refusal names the engine in one line: %s", err.message);
        } else if (sm_cuda_device_count() == 0) {
            tu_check(rc == SM_ERR_DEVICE && r == NULL, "no GPU: status %d (expected %d)", rc, SM_ERR_DEVICE);
            tu_check(strlen(err.message) > 0, "no GPU: a message");
        } else {
            tu_check(rc == SM_OK, "engine %s on the CUDA backend: %s", sm_engine_name(engine), rc ? err.message : "");
            sm_runner_free(r);
        }
        o.backend = (sm_backend)7;
        rc = sm_runner_create(db, &o, &r, &err);
        tu_check(rc == SM_ERR_INVALID && r == NULL, "unknown backend: status %d", rc);
        sm_db_free(db);
    }
}

#ifdef SM_TEST_EMULATED_GPU
#define TEST_NAME "test_cuda_emulated"
#else
#define TEST_NAME "test_cuda"
#endif

/* ------------------------------------------------ BGZF on the GPU */

/* A BGZF block of data[0, n) (level 0: stored, -1: the gzip flags also say
   FNAME, which the inflater does not take) appended to out. */
static size_t bgzf_block(const uint8_t *data, size_t n, int level, uint8_t *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    tu_check(deflateInit2(&z, level < 0 ? 6 : level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
    uint8_t *payload = out + 18;
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)n;
    z.next_out = payload;
    z.avail_out = 65536 + 1024;
    tu_check(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    size_t plen = (size_t)z.total_out;
    deflateEnd(&z);
    const uint8_t head[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0, 0};
    memcpy(out, head, sizeof head);
    if (level < 0) out[3] |= 8;
    size_t bsize = 18 + plen + 8;
    out[16] = (uint8_t)((bsize - 1) & 0xff);
    out[17] = (uint8_t)((bsize - 1) >> 8);
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n), isize = (uint32_t)n;
    for (int i = 0; i < 4; i++) {
        out[18 + plen + i] = (uint8_t)(crc >> (8 * i));
        out[22 + plen + i] = (uint8_t)(isize >> (8 * i));
    }
    return bsize;
}

/* sm_cuda_inflate_run against zlib: runs of up to 300 blocks of FASTA-like,
   random and empty data at every level; then runs it must refuse (0, never
   1 with other bytes): a CRC, ISIZE or payload byte changed, a block cut
   short, a header with FNAME, too many blocks, too small an output. */
static void inflate_rounds(tu_rng *rng) {
    enum { MAX_BLOCKS = 128, RAW_CAP = 4 << 20, OUT_CAP = 4 << 20 };
    sm_cuda_inflater *f = NULL;
    char msg[256] = "";
    if (sm_cuda_inflate_open(0, MAX_BLOCKS, RAW_CAP, OUT_CAP, &f, msg) != 0) {
#ifdef SM_TEST_EMULATED_GPU
        tu_check(0, "sm_cuda_inflate_open: %s", msg);
#else
        printf(TEST_NAME ": BGZF inflated on the GPU not tested: %s\n", msg);
#endif
        return;
    }
    uint8_t *raw = malloc(RAW_CAP + 65536 * 2), *want = malloc(OUT_CAP + 65536), *got = malloc(OUT_CAP + 65536);
    uint8_t *data = malloc(65536);
    size_t *starts = malloc((MAX_BLOCKS + 8) * sizeof *starts);
    int rounds = (int)tu_scaled(40);
    for (int round = 0; round < rounds && raw && want && got && data && starts; round++) {
        size_t nblocks = 1 + tu_rng_below(rng, round % 5 == 0 ? MAX_BLOCKS + 4 : 40);
        size_t raw_len = 0, want_len = 0, b = 0;
        for (; b < nblocks; b++) {
            uint32_t kind = tu_rng_below(rng, 10);
            size_t n = kind == 0 ? 0 : kind < 3 ? 65536 - tu_rng_below(rng, 2) : 1 + tu_rng_below(rng, 65536);
            if (kind == 1 || kind == 9) {
                for (size_t i = 0; i < n; i++) data[i] = (uint8_t)tu_rng_below(rng, 256);
            } else {
                for (size_t i = 0; i < n; i++) data[i] = i % 61 == 60 ? '\n' : "ACGTacgtN>"[tu_rng_below(rng, kind == 2 ? 10 : 4)];
            }
            int level = (int)tu_rng_below(rng, 10);
            /* what does not compress is stored: a block holds 64 KiB at most (bgzip's 65280 bytes) */
            if ((level == 0 || kind == 1 || kind == 9) && n > 65280) n = 65280;
            if (want_len + n > OUT_CAP || raw_len + n + 1024 > RAW_CAP) break;
            starts[b] = raw_len;
            raw_len += bgzf_block(data, n, level, raw + raw_len);
            memcpy(want + want_len, data, n);
            want_len += n;
        }
        nblocks = b;
        size_t got_len = 0;
        int rc = sm_cuda_inflate_run(f, raw, raw_len, got, OUT_CAP, &got_len, msg);
        if (nblocks > MAX_BLOCKS) {
            tu_check(rc == 0, "inflate: %zu blocks (more than %d) taken: %d", nblocks, MAX_BLOCKS, rc);
            continue;
        }
        if (!tu_check(rc == 1 && got_len == want_len && memcmp(got, want, want_len) == 0,
                      "inflate round %d: %zu blocks, rc %d (%s), %zu bytes for %zu", round, nblocks, rc,
                      rc < 0 ? msg : "", got_len, want_len)) {
            for (size_t k = 0; k < nblocks; k++) { /* which blocks fail alone */
                size_t end = k + 1 < nblocks ? starts[k + 1] : raw_len;
                if (sm_cuda_inflate_run(f, raw + starts[k], end - starts[k], got, OUT_CAP, &got_len, msg) != 1)
                    printf("  block %zu: %zu bytes, deflate header 0x%02x, ISIZE %u\n", k, end - starts[k],
                           raw[starts[k] + 18], (unsigned)(raw[end - 4] | raw[end - 3] << 8 | raw[end - 2] << 16));
            }
            continue;
        }
        if (want_len > 1 && want_len <= 64)
            tu_check(sm_cuda_inflate_run(f, raw, raw_len, got, want_len - 1, &got_len, msg) == 0,
                     "inflate: an output too small taken");
        /* one block changed: a CRC or ISIZE byte, a payload byte, the length cut, FNAME */
        size_t victim = tu_rng_below(rng, (uint32_t)nblocks);
        size_t at = starts[victim], end = victim + 1 < nblocks ? starts[victim + 1] : raw_len;
        uint32_t how = tu_rng_below(rng, 4);
        size_t pos = how == 0 ? end - 8 + tu_rng_below(rng, 8) : at + 18 + tu_rng_below(rng, (uint32_t)(end - at - 26));
        size_t len = raw_len;
        uint8_t saved = raw[pos];
        if (how == 2) len = end - 1 - tu_rng_below(rng, (uint32_t)(end - at - 1));
        else if (how == 3) pos = at + 3, saved = raw[pos], raw[pos] |= 8;
        else raw[pos] ^= (uint8_t)(1 + tu_rng_below(rng, 255));
        memset(got, 0, want_len);
        rc = sm_cuda_inflate_run(f, raw, len, got, OUT_CAP, &got_len, msg);
        tu_check(rc == 0 || (rc == 1 && how == 1 && got_len == want_len && memcmp(got, want, want_len) == 0),
                 "inflate: block %zu of %zu changed (%u) and taken: rc %d (%s)", victim, nblocks, how, rc,
                 rc < 0 ? msg : "");
        raw[pos] = saved;
    }
    /* an end-of-file block alone */
    const uint8_t eof[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 27, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t got_len = 1;
    tu_check(sm_cuda_inflate_run(f, eof, sizeof eof, got, OUT_CAP, &got_len, msg) == 1 && got_len == 0,
             "inflate: the end-of-file block");
    sm_cuda_inflate_close(f);
    free(raw);
    free(want);
    free(got);
    free(data);
    free(starts);
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(20261123));
    refusals();
    int devices = sm_cuda_device_count();
    if (devices == 0) {
        tu_summary(TEST_NAME);
        printf(TEST_NAME ": no CUDA device: the differential part did not run (skipped)\n");
        return tu_failures() ? 1 : SKIPPED;
    }
    printf(TEST_NAME ": %d CUDA device(s)\n", devices);
    /* the contexts started ahead of the runners below: every device, one, none past the last */
    tu_check(sm_cuda_prepare(-1) == devices, "sm_cuda_prepare(-1)");
    tu_check(sm_cuda_prepare(devices - 1) == 1, "sm_cuda_prepare(last)");
    tu_check(sm_cuda_prepare(devices) == 0, "sm_cuda_prepare(past the last)");
    /* batch buffers made ahead and kept: the rounds below (batches of 64 KiB
       among others) take them, and those of every runner closed before */
    tu_check(sm_cuda_reserve(0, 65536, 4) == 0, "sm_cuda_reserve(0)");
    tu_check(sm_cuda_reserve(devices, 65536, 1) == -1, "sm_cuda_reserve(past the last)");
    tu_check(sm_cuda_reserve(-1, 65536, 1) == -1, "sm_cuda_reserve(-1)");
    /* first: a kernel's shared memory limit, once raised, stays for the
       process; with a generator of its own, so the rounds after it draw what
       they drew before */
    tu_rng edge;
    tu_rng_seed(&edge, 4811);
    shared_edge_rounds(&edge);
    random_rounds(&rng);
    approx_rounds(&rng);
    long_piece_rounds(&rng);
    tile_rounds(&rng);
    guide_rounds(&rng);
    exact_beside_rounds(&rng);
    large_sets(&rng);
    tu_rng own;
    tu_rng_seed(&own, 2731);
    sampled_mmer_rounds(&own);
    large_word_list(&rng);
    inflate_rounds(&rng);
    return tu_summary(TEST_NAME);
}
