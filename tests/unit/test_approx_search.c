/* k mismatches and k edits through the public API — block scans, counts,
 * streams in pieces, the threaded runner with small chunks (and with many
 * batches in flight over long records, exact matching too), every
 * approximate engine — against hits derived straight from the definitions
 * (tests/common/approx_oracle). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "approx_oracle.h"
#include "core/scan_internal.h"
#include "engines/approx/approx.h"
#include "engines/engine.h"
#include "runner/runner_variant.h"
#include "runner/runner_part.h"
#include "oracle.h"
#include "summary_check.h"
#include "testutil.h"

static tu_rng rng;

typedef struct {
    sm_compile_options opts;
    sm_pattern pats[8];
    char pat_buf[8][160];
    size_t npats;
    char *records[3];
    size_t record_len[3];
    size_t nrecords;
    unsigned char exact[8];  /* opts.exact's flags: those patterns take no mismatches */
} acase;

/* The key of pattern p on a strand, as the engines compare it. */
static void key_of(const acase *c, size_t p, int reverse, char *key) {
    const sm_pattern *pat = &c->pats[p];
    if (c->opts.alphabet == SM_ALPHABET_DNA) {
        if (reverse) {
            oracle_reverse_complement(pat->seq, pat->len, key);
        } else {
            for (size_t i = 0; i < pat->len; i++) {
                char ch = pat->seq[i];
                if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 32);
                if (ch == 'U') ch = 'T';
                key[i] = ch;
            }
        }
    } else {
        for (size_t i = 0; i < pat->len; i++) {
            char ch = pat->seq[i];
            if ((c->opts.flags & SM_FLAG_IGNORE_CASE) && ch >= 'A' && ch <= 'Z') ch = (char)(ch + 32);
            key[i] = ch;
        }
    }
}

static void expected_hits(const acase *c, size_t r, tu_hits *out) {
    const char *text = c->records[r];
    size_t n = c->record_len[r];
    if (c->opts.pam) {
        /* A PAM: the definitions in include/seqmatch.h, brute force. */
        for (size_t p = 0; p < c->npats; p++)
            for (int rev = 0; rev <= 1; rev++) {
                if ((rev && c->opts.strands == SM_STRAND_FORWARD) || (!rev && c->opts.strands == SM_STRAND_REVERSE))
                    continue;
                sm_match match = c->opts.max_errors == 0 ? SM_MATCH_EXACT : c->opts.match;
                aoracle_pam_hits(c->pats[p].seq, c->pats[p].len, c->opts.pam, strlen(c->opts.pam), rev, match,
                                 c->opts.max_errors, c->opts.report, text, n, c->opts.alphabet, c->opts.flags, r,
                                 (uint32_t)p, out);
            }
        return;
    }
    uint32_t k = c->opts.max_errors;
    unsigned flags = c->opts.flags;
    sm_alphabet a = c->opts.alphabet;
    uint32_t *D = malloc((n + 1) * sizeof *D);
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = c->pats[p].len;
        for (int rev = 0; rev <= 1; rev++) {
            if (a == SM_ALPHABET_TEXT && rev) continue;
            if (a == SM_ALPHABET_DNA && ((rev && c->opts.strands == SM_STRAND_FORWARD) ||
                                         (!rev && c->opts.strands == SM_STRAND_REVERSE)))
                continue;
            char key[160];
            key_of(c, p, rev, key);
            char strand = rev ? '-' : '+';
            if (c->opts.match == SM_MATCH_MISMATCHES || (c->opts.exact && c->opts.exact[p])) {
                /* an exact pattern (beside mismatches or edits): every window without a mismatch */
                uint32_t kp = c->opts.exact && c->opts.exact[p] ? 0 : k;
                for (size_t i = 0; i + m <= n; i++) {
                    uint32_t mm = aoracle_mismatches(key, m, text + i, a, flags);
                    if (mm <= kp) tu_hits_add(out, r, i, i + m, (uint32_t)p, strand, mm);
                }
                continue;
            }
            aoracle_D_all(key, m, text, n, a, flags, D);
            size_t j = 1;
            while (j <= n) {
                if (D[j] > k) {
                    j++;
                    continue;
                }
                if (c->opts.report == SM_REPORT_ENDS) {
                    uint64_t s = aoracle_edit_start(key, m, text, j, D[j], 0, a, flags);
                    tu_hits_add(out, r, s, j, (uint32_t)p, strand, D[j]);
                    j++;
                    continue;
                }
                size_t best = j;
                while (j <= n && D[j] <= k) {
                    if (D[j] < D[best]) best = j;
                    j++;
                }
                uint64_t s = aoracle_edit_start(key, m, text, best, D[best], 0, a, flags);
                tu_hits_add(out, r, s, best, (uint32_t)p, strand, D[best]);
            }
        }
    }
    free(D);
}

static void random_case(acase *c, unsigned round) {
    memset(c, 0, sizeof *c);
    sm_compile_options_init(&c->opts);
    int dna = round % 3 != 2;
    c->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    c->opts.match = tu_rng_chance(&rng, 50) ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
    c->opts.report = tu_rng_chance(&rng, 50) ? SM_REPORT_ENDS : SM_REPORT_BEST;
    if (dna) {
        c->opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        if (tu_rng_chance(&rng, 20)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
    } else if (tu_rng_chance(&rng, 30)) {
        c->opts.flags |= SM_FLAG_IGNORE_CASE;
    }
    c->npats = 1 + tu_rng_below(&rng, 5);
    size_t max_len = tu_rng_chance(&rng, 20) ? 60 : 12;
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = 1 + tu_rng_below(&rng, (uint32_t)max_len);
        if (dna) tu_random_iupac(&rng, c->pat_buf[p], m, 15, 20);
        else tu_random_from(&rng, c->pat_buf[p], m, "abAB");
        c->pats[p].name = NULL;
        c->pats[p].seq = c->pat_buf[p];
        c->pats[p].len = m;
    }
    c->opts.max_errors = 1 + tu_rng_below(&rng, 4);
    c->nrecords = 1 + tu_rng_below(&rng, 3);
    for (size_t r = 0; r < c->nrecords; r++) {
        size_t n = tu_rng_below(&rng, 400);
        c->records[r] = malloc(n + 1);
        if (dna) tu_random_iupac(&rng, c->records[r], n, 5, 20);
        else tu_random_from(&rng, c->records[r], n, "abAB");
        /* Plant copies of patterns so that runs and hits are common. */
        for (int t = 0; t < 4 && n > 0; t++) {
            size_t p = tu_rng_below(&rng, (uint32_t)c->npats);
            size_t m = c->pats[p].len;
            if (m < n) memcpy(c->records[r] + tu_rng_below(&rng, (uint32_t)(n - m)), c->pats[p].seq, m);
        }
        c->record_len[r] = n;
    }
}

static void free_case(acase *c) {
    for (size_t r = 0; r < c->nrecords; r++) free(c->records[r]);
}

typedef struct {
    tu_hits hits;
    uint64_t record;
} collector;

static int collect(const sm_hit *h, void *ctx) {
    collector *col = ctx;
    tu_hits_add(&col->hits, h->record ? h->record : col->record, h->start, h->end, h->pattern, h->strand,
                h->errors);
    return 0;
}

static const char *describe(const acase *c, char *buf, size_t size) {
    unsigned exact = 0;
    for (size_t p = 0; c->opts.exact && p < c->npats; p++) exact += c->exact[p] != 0;
    snprintf(buf, size, "%s %s k=%u %s strands=%d flags=%u npats=%zu (%u exact)%s%s",
             c->opts.alphabet == SM_ALPHABET_DNA ? "dna" : "text",
             c->opts.match == SM_MATCH_EDITS ? "edits" : c->opts.match == SM_MATCH_EXACT ? "exact" : "mismatches",
             c->opts.max_errors, c->opts.report == SM_REPORT_ENDS ? "ends" : "best", (int)c->opts.strands,
             c->opts.flags, c->npats, exact, c->opts.pam ? " pam=" : "", c->opts.pam ? c->opts.pam : "");
    return buf;
}

static void check_case_chunks(const acase *c, sm_engine engine, const size_t *chunks, size_t nchunks,
                              size_t max_piece);

static void check_case(const acase *c, sm_engine engine) {
    static const size_t chunks[] = {1, 3, 17, 64, 0};
    check_case_chunks(c, engine, chunks, sizeof chunks / sizeof chunks[0], 40);
}

static void check_case_chunks(const acase *c, sm_engine engine, const size_t *chunks, size_t nchunks,
                              size_t max_piece) {
    char what[160];
    describe(c, what, sizeof what);
    sm_compile_options o = c->opts;
    o.engine = engine;
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(c->pats, c->npats, &o, &db, &err) == SM_OK, "%s: compile: %s", what, err.message))
        return;
    tu_hits want;
    tu_hits_init(&want);
    for (size_t r = 0; r < c->nrecords; r++) expected_hits(c, r, &want);
    tu_hits_sort(&want);

    /* Block scans and counts, record by record. */
    sm_scratch *scratch = NULL;
    sm_scratch_alloc(db, &scratch);
    collector col;
    tu_hits_init(&col.hits);
    uint64_t counts[8] = {0}, want_counts[8] = {0};
    for (size_t r = 0; r < c->nrecords; r++) {
        col.record = r;
        sm_scan(db, scratch, c->records[r], c->record_len[r], collect, &col);
        sm_count(db, scratch, c->records[r], c->record_len[r], counts);
    }
    oracle_count(&want, want_counts);
    char how[200];
    snprintf(how, sizeof how, "%s engine %d block", what, (int)engine);
    tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
    tu_check(memcmp(counts, want_counts, sizeof counts) == 0, "%s: counts differ", how);

    /* Streams in random pieces. */
    sm_stream *st = NULL;
    sm_stream_open(db, &st);
    tu_hits_clear(&col.hits);
    for (size_t r = 0; r < c->nrecords; r++) {
        col.record = r;
        size_t at = 0, n = c->record_len[r];
        while (at < n) {
            size_t piece = 1 + tu_rng_below(&rng, (uint32_t)max_piece);
            if (piece > n - at) piece = n - at;
            sm_stream_feed(st, c->records[r] + at, piece, collect, &col);
            at += piece;
        }
        sm_stream_end(st, collect, &col);
    }
    sm_stream_free(st);
    snprintf(how, sizeof how, "%s engine %d stream", what, (int)engine);
    tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);

    /* Text lanes wherever a text holds a slice per SIMD lane (Myers and
       mismatch engines), block scans and counts. */
    sm_variant lanes;
    memset(&lanes, 0, sizeof lanes);
    lanes.text_lanes = SM_LANES_ALWAYS;
    sm_scratch *lane_scratch = NULL;
    if (sm_scratch_alloc_variant(db, &lanes, &lane_scratch) == SM_OK) {
        tu_hits_clear(&col.hits);
        uint64_t lane_counts[8] = {0};
        for (size_t r = 0; r < c->nrecords; r++) {
            col.record = r;
            sm_scan(db, lane_scratch, c->records[r], c->record_len[r], collect, &col);
            sm_count(db, lane_scratch, c->records[r], c->record_len[r], lane_counts);
        }
        snprintf(how, sizeof how, "%s engine %d block, text lanes", what, (int)engine);
        tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
        tu_check(memcmp(lane_counts, want_counts, sizeof lane_counts) == 0, "%s: counts differ", how);
        sm_scratch_free(lane_scratch);
    }

    /* The runner: threads and chunk sizes, with and without text lanes. */
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        for (size_t ci = 0; ci < 2 * nchunks; ci++) {
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            const sm_variant *rv = NULL; /* runner/runner_variant.h */
            ro.threads = threads;
            ro.chunk_size = chunks[ci % nchunks];
            if (ci >= nchunks) rv = &lanes;
            ro.on_hit = collect;
            ro.ctx = &col;
            /* every other chunk size with a bound of a few stored hits per
               work item: dense segments, delivered in pieces */
            sm_variant tight;
            memset(&tight, 0, sizeof tight);
            tight.item_hits = 1 + ci % 5;
            if (ci % 2) rv = &tight;
            col.record = 0;
            tu_hits_clear(&col.hits);
            sm_runner *runner = NULL;
            if (sm_runner_create_variant(db, &ro, rv, &runner, &err) != SM_OK) continue;
            for (size_t r = 0; r < c->nrecords; r++) {
                sm_runner_begin_record(runner);
                size_t at = 0, n = c->record_len[r];
                while (at < n) {
                    size_t piece = 1 + tu_rng_below(&rng, (uint32_t)(max_piece * 5 / 2));
                    if (piece > n - at) piece = n - at;
                    sm_runner_feed(runner, c->records[r] + at, piece);
                    at += piece;
                }
                sm_runner_end_record(runner);
            }
            sm_runner_flush(runner);
            uint64_t total = sm_runner_total(runner);
            sm_runner_free(runner);
            snprintf(how, sizeof how, "%s engine %d runner t=%u chunk=%zu%s", what, (int)engine, threads,
                     chunks[ci % nchunks], ci >= nchunks ? " lanes" : "");
            tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
            tu_check(total == want.n, "%s: total %llu, want %zu", how, (unsigned long long)total, want.n);
        }
    }
    /* Count mode of the runner: the same per-pattern counts. */
    {
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = 2;
        ro.chunk_size = 7;
        ro.count_only = 1;
        sm_runner *runner = NULL;
        if (sm_runner_create(db, &ro, &runner, &err) == SM_OK) {
            for (size_t r = 0; r < c->nrecords; r++) {
                sm_runner_begin_record(runner);
                sm_runner_feed(runner, c->records[r], c->record_len[r]);
                sm_runner_end_record(runner);
            }
            sm_runner_flush(runner);
            snprintf(how, sizeof how, "%s engine %d runner count-only", what, (int)engine);
            tu_check(memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof(uint64_t)) == 0 &&
                         sm_runner_total(runner) == want.n,
                     "%s: counts differ", how);
            sm_runner_free(runner);
        }
    }
    /* Threads that sum the hits instead of storing them (counts of runs and
       PAM hits, record summaries): 1 to 8 threads, small chunks, and half the
       time a few raw hits per piece, so that runs are cut at piece borders
       inside a segment as well as at segment borders. */
    for (int summaries = 0; summaries <= 1; summaries++) {
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        const sm_variant *rv = NULL; /* runner/runner_variant.h */
        ro.threads = tu_rng_range(&rng, 1, 8);
        ro.chunk_size = chunks[tu_rng_below(&rng, (uint32_t)nchunks)];
        sm_variant tight;
        memset(&tight, 0, sizeof tight);
        if (tu_rng_chance(&rng, 50)) {
            tight.item_hits = 1 + tu_rng_below(&rng, 6);
            rv = &tight;
        }
        sc_summaries sums;
        sc_init(&sums);
        if (summaries) {
            ro.on_record_summary = sc_collect;
            ro.ctx = &sums;
        } else {
            ro.count_only = 1;
        }
        sm_runner *runner = NULL;
        if (sm_runner_create_variant(db, &ro, rv, &runner, &err) == SM_OK) {
            int rc = SM_OK;
            for (size_t r = 0; r < c->nrecords && rc == SM_OK; r++) {
                sm_runner_begin_record(runner);
                size_t at = 0, n = c->record_len[r];
                while (rc == SM_OK && at < n) {
                    size_t piece = 1 + tu_rng_below(&rng, (uint32_t)(max_piece * 5 / 2));
                    if (piece > n - at) piece = n - at;
                    rc = sm_runner_feed(runner, c->records[r] + at, piece);
                    at += piece;
                }
                if (rc == SM_OK) rc = sm_runner_end_record(runner);
            }
            if (rc == SM_OK) rc = sm_runner_flush(runner);
            char label[400], why[200];
            snprintf(label, sizeof label, "%s engine %d runner summed (%s) t=%u chunk=%zu item hits %zu", what,
                     (int)engine, summaries ? "summaries" : "count-only", ro.threads, ro.chunk_size, tight.item_hits);
            tu_check(rc == SM_OK && memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof(uint64_t)) == 0 &&
                         sm_runner_total(runner) == want.n,
                     "%s: status %d, counts differ", label, rc);
            if (summaries)
                tu_check(sc_check(&sums, &want, c->nrecords, (uint32_t)c->npats, why, sizeof why), "%s: %s", label,
                         why);
            sm_runner_free(runner);
        }
        sc_free(&sums);
    }
    tu_hits_free(&col.hits);
    tu_hits_free(&want);
    sm_scratch_free(scratch);
    sm_db_free(db);
}

/* Threads of this process (Linux's /proc/self/status), 0 where unknown. */
static unsigned process_threads(void) {
    FILE *f = fopen("/proc/self/status", "r");
    unsigned n = 0;
    if (!f) return 0;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %u", &n) == 1) break;
    fclose(f);
    return n;
}

/* A batch that leaves before it is full, the workers idle and input going
   on, starts the workers even with one work item: the second thread scans
   it while the caller feeds what follows (it used to wait for the next
   full batch of several items). An input of one chunk starts none. Counts
   as one thread's. */
static void test_early_batch_starts_workers(void) {
    if (process_threads() == 0) return; /* no /proc: nothing to observe */
    sm_pattern p = {"p", "GTGCCAGCAGCCGCGGTAAT", 20};
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.match = SM_MATCH_EDITS;
    o.max_errors = 2;
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_OK, "early batch: compile: %s", err.message)) return;
    const size_t chunk = 4096, piece = 256;
    for (int chunks = 1; chunks <= 3; chunks += 2) {
        size_t n = chunk * (size_t)chunks;
        char *text = malloc(n);
        for (size_t i = 0; i < n; i++) text[i] = "ACGT"[tu_rng_below(&rng, 4)];
        memcpy(text + n / 2, "GTGCCAGCAGCCGCGGTAAT", 20);
        uint64_t counts[2] = {0, 0};
        unsigned threads_fed[2] = {0, 0};
        for (unsigned t = 1; t <= 2; t++) {
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            ro.threads = t;
            ro.chunk_size = chunk;
            ro.count_only = 1;
            sm_runner *runner = NULL;
            if (!tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "early batch: runner: %s", err.message))
                continue;
            unsigned before = process_threads();
            sm_runner_begin_record(runner);
            for (size_t i = 0; i < n; i += piece) sm_runner_feed(runner, text + i, n - i < piece ? n - i : piece);
            threads_fed[t - 1] = process_threads() - before; /* workers started before the end of input */
            sm_runner_end_record(runner);
            sm_runner_flush(runner);
            counts[t - 1] = sm_runner_counts(runner)[0];
            if (chunks == 1) tu_check(process_threads() == before, "early batch: one chunk started a worker");
            sm_runner_free(runner);
        }
        tu_check(counts[0] == counts[1] && counts[0] >= 1, "early batch, %d chunks: counts %llu (1 thread) %llu (2)",
                 chunks, (unsigned long long)counts[0], (unsigned long long)counts[1]);
        tu_check(threads_fed[0] == 0, "early batch, %d chunks: one thread started workers", chunks);
        tu_check(threads_fed[1] == (chunks > 1 ? 1u : 0u),
                 "early batch, %d chunks: %u workers running before the input ended, want %u", chunks, threads_fed[1],
                 chunks > 1 ? 1u : 0u);
        free(text);
    }
    sm_db_free(db);
}

/* Seed 001's worked example: pattern cacd in text bcbacddc. */
static void test_seed_example(void) {
    sm_pattern p = {"cacd", "cacd", 4};
    const char *text = "bcbacddc";
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.alphabet = SM_ALPHABET_TEXT;
    o.match = SM_MATCH_EDITS;
    o.max_errors = 2;
    o.report = SM_REPORT_ENDS;
    sm_db *db = NULL;
    sm_compile(&p, 1, &o, &db, NULL);
    sm_scratch *s = NULL;
    sm_scratch_alloc(db, &s);
    collector col;
    tu_hits_init(&col.hits);
    col.record = 0;
    sm_scan(db, s, text, 8, collect, &col);
    /* The seed numbers text positions from 1 and reports the position of the
       last matched symbol: 5, 6 and 7, which are exclusive ends 5, 6, 7 here. */
    int ok = col.hits.n == 3 && col.hits.items[0].end == 5 && col.hits.items[1].end == 6 && col.hits.items[2].end == 7;
    tu_check(ok, "seed 001 k-differences example: want ends 5 6 7, got %zu hits", col.hits.n);
    sm_db_free(db);
    o.match = SM_MATCH_MISMATCHES;
    sm_compile(&p, 1, &o, &db, NULL);
    tu_hits_clear(&col.hits);
    sm_scan(db, s, text, 8, collect, &col);
    tu_check(col.hits.n == 1 && col.hits.items[0].end == 6 && col.hits.items[0].errors == 1,
             "seed 001 k-mismatches example: want one window ending at 6");
    sm_db_free(db);
    sm_scratch_free(s);
    tu_hits_free(&col.hits);
}

/* A CRISPR guide with an NGG PAM and up to 4 mismatches, both strands. */
static void test_guide_pam(void) {
    const char *guide = "GACGCATAAAGATGAGACGCNGG";
    char text[200];
    tu_random_dna(&rng, text, sizeof text);
    memcpy(text + 20, "GACGCATTAAGATGAGACGCTGG", 23);  /* 1 mismatch, PAM TGG */
    memcpy(text + 80, "GACGCATAAAGATGAGACGCTGA", 23);  /* PAM broken: 1 mismatch at G */
    sm_pattern p = {"guide", guide, 23};
    acase c;
    memset(&c, 0, sizeof c);
    sm_compile_options_init(&c.opts);
    c.opts.match = SM_MATCH_MISMATCHES;
    c.opts.max_errors = 4;
    c.pats[0] = p;
    c.npats = 1;
    c.records[0] = text;
    c.record_len[0] = sizeof text;
    c.nrecords = 1;
    check_case(&c, SM_ENGINE_AUTO);
}

/* Copies pattern seq into text at, with up to edits random substitutions,
   insertions and deletions (or substitutions only). */
static void plant_mutated(char *text, size_t n, size_t at, const char *seq, size_t m, unsigned edits,
                          int substitutions_only, const char *alphabet) {
    char buf[256];
    size_t len = m < 200 ? m : 200;
    memcpy(buf, seq, len);
    for (unsigned e = 0; e < edits && len > 1; e++) {
        size_t i = tu_rng_below(&rng, (uint32_t)len);
        unsigned kind = substitutions_only ? 0 : tu_rng_below(&rng, 3);
        char sym = alphabet[tu_rng_below(&rng, (uint32_t)strlen(alphabet))];
        if (kind == 0) {
            buf[i] = sym;
        } else if (kind == 1 && len < sizeof buf - 1) {
            memmove(buf + i + 1, buf + i, len - i);
            buf[i] = sym;
            len++;
        } else {
            memmove(buf + i, buf + i + 1, len - i - 1);
            len--;
        }
    }
    if (at + len <= n) memcpy(text + at, buf, len);
}

/* The pigeonhole filter (forced) against the oracle: longer patterns, k up
   to 5, records past the engine's 64 KiB blocks with mutated copies planted
   across block borders, and both of its piece finders (seed tables for dna,
   the automaton for text and long pieces). */
static void test_pigeonhole(void) {
    static const size_t chunks[] = {1000, 65536 + 7, 0};
    unsigned compiled = 0;
    for (unsigned round = 0; round < tu_scaled(24) && tu_failures() < 10; round++) {
        acase c;
        memset(&c, 0, sizeof c);
        sm_compile_options_init(&c.opts);
        int dna = round % 4 != 3;
        const char *alphabet = dna ? "ACGT" : "abcd";
        c.opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
        c.opts.match = round % 2 ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        c.opts.report = tu_rng_chance(&rng, 50) ? SM_REPORT_ENDS : SM_REPORT_BEST;
        if (dna) c.opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        c.opts.max_errors = 1 + tu_rng_below(&rng, 5);
        c.npats = 1 + tu_rng_below(&rng, 6);
        for (size_t p = 0; p < c.npats; p++) {
            /* Mostly 12..40 symbols; some past 64 (the multi-word DP). */
            size_t m = tu_rng_chance(&rng, 15) ? 65 + tu_rng_below(&rng, 60) : 12 + tu_rng_below(&rng, 29);
            if (m > sizeof c.pat_buf[p]) m = sizeof c.pat_buf[p];
            if (dna) tu_random_iupac(&rng, c.pat_buf[p], m, 5, 20);
            else tu_random_from(&rng, c.pat_buf[p], m, alphabet);
            c.pats[p].seq = c.pat_buf[p];
            c.pats[p].len = m;
        }
        c.nrecords = 1 + tu_rng_below(&rng, 2);
        for (size_t r = 0; r < c.nrecords; r++) {
            size_t n = round < 8 ? 2000 + tu_rng_below(&rng, 3000) : 65536 * 2 + tu_rng_below(&rng, 20000);
            c.records[r] = malloc(n + 1);
            if (dna) tu_random_iupac(&rng, c.records[r], n, 3, 10);
            else tu_random_from(&rng, c.records[r], n, alphabet);
            for (int t = 0; t < 40; t++) {
                size_t p = tu_rng_below(&rng, (uint32_t)c.npats);
                size_t m = c.pats[p].len;
                size_t at = tu_rng_below(&rng, (uint32_t)(n - m));
                /* Half of them straddle a block border or the record's ends. */
                if (t % 2 && n > 65536 + m) at = 65536 - tu_rng_below(&rng, (uint32_t)m + 4);
                if (t % 7 == 0) at = t % 14 ? 0 : n - m;
                plant_mutated(c.records[r], n, at, c.pats[p].seq, m, tu_rng_below(&rng, c.opts.max_errors + 2),
                              c.opts.match == SM_MATCH_MISMATCHES, alphabet);
            }
            c.record_len[r] = n;
        }
        sm_compile_options o = c.opts;
        o.engine = SM_ENGINE_PIGEONHOLE;
        sm_db *db = NULL;
        if (sm_compile(c.pats, c.npats, &o, &db, NULL) == SM_OK) {
            sm_db_free(db);
            check_case_chunks(&c, SM_ENGINE_PIGEONHOLE, chunks, sizeof chunks / sizeof chunks[0], 30000);
            compiled++;
        }
        free_case(&c);
    }
    unsigned rounds = tu_scaled(24);
    tu_check(compiled * 3 >= rounds * 2, "pigeonhole: only %u of %u cases compiled", compiled, rounds);
}

/* The threaded runner with many batches over one record: long records fed
   in small pieces, two or three threads and small chunks, so that the caller
   fills one batch buffer while the workers scan the other and the open
   record's unscanned bytes move between the buffers hundreds of times. Every
   hit with its text, record-done calls, counts, and a callback that stops
   half-way, for exact (plain and overlap-free), k-mismatch and k-edit
   databases. */
typedef struct {
    tu_hits hits;
    const acase *c;
    size_t stop_after; /* 0: never */
    unsigned bad_text;
    uint64_t next_done;
    unsigned done_errors;
} pipe_collector;

static int pipe_collect(const sm_hit *h, void *ctx) {
    pipe_collector *col = ctx;
    const acase *c = col->c;
    tu_hits_add(&col->hits, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    if (h->record >= c->nrecords || h->start > h->end || h->end > c->record_len[h->record] || !h->text ||
        memcmp(h->text, c->records[h->record] + h->start, (size_t)(h->end - h->start)) != 0)
        col->bad_text++;
    if (h->record < col->next_done) col->done_errors++; /* after its record was declared done */
    return col->stop_after && col->hits.n >= col->stop_after;
}

static void pipe_done(uint64_t record, void *ctx) {
    pipe_collector *col = ctx;
    if (record != col->next_done) col->done_errors++;
    col->next_done = record + 1;
}

/* Feeds every record in random pieces; returns the first status that is not SM_OK, or flush's. */
static int pipe_feed_all(const acase *c, sm_runner *runner) {
    int rc = SM_OK;
    for (size_t r = 0; r < c->nrecords && rc == SM_OK; r++) {
        sm_runner_begin_record(runner);
        size_t at = 0, n = c->record_len[r];
        while (at < n && rc == SM_OK) {
            size_t piece = tu_rng_chance(&rng, 10) ? 0 : 1 + tu_rng_below(&rng, 300);
            if (piece > n - at) piece = n - at;
            rc = sm_runner_feed(runner, c->records[r] + at, piece);
            at += piece;
        }
        if (rc == SM_OK) rc = sm_runner_end_record(runner);
    }
    if (rc == SM_OK) rc = sm_runner_flush(runner);
    return rc;
}

static void check_pipeline(const acase *c, int overlap_free, const char *what) {
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(c->pats, c->npats, &c->opts, &db, &err) == SM_OK, "%s: compile: %s", what, err.message))
        return;
    tu_hits want;
    tu_hits_init(&want);
    for (size_t r = 0; r < c->nrecords; r++) {
        if (c->opts.match == SM_MATCH_EXACT) oracle_find(c->pats, c->npats, &c->opts, c->records[r], c->record_len[r], r, &want);
        else expected_hits(c, r, &want);
    }
    tu_hits_sort(&want);
    uint64_t want_counts[8] = {0};
    oracle_count(&want, want_counts);
    tu_check(want.n > 50, "%s: only %zu hits planted", what, want.n);
    static const size_t chunks[] = {5, 64, 1000};
    for (unsigned threads = 2; threads <= 3; threads++) {
        for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++) {
            for (int mode = 0; mode < 3; mode++) { /* hits, counts, stop half-way */
                char how[240];
                snprintf(how, sizeof how, "%s overlap-free %d threads %u chunk %zu %s", what, overlap_free, threads,
                         chunks[ci], mode == 0 ? "hits" : mode == 1 ? "counts" : "stop");
                pipe_collector col;
                memset(&col, 0, sizeof col);
                tu_hits_init(&col.hits);
                col.c = c;
                col.stop_after = mode == 2 ? want.n / 2 : 0;
                sm_runner_options ro;
                sm_runner_options_init(&ro);
                ro.threads = threads;
                ro.chunk_size = chunks[ci];
                ro.count_only = mode == 1;
                ro.overlap_free = overlap_free;
                ro.on_hit = pipe_collect;
                ro.ctx = &col;
                ro.on_record_done = pipe_done;
                sm_runner *runner = NULL;
                if (!tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "%s: create: %s", how, err.message))
                    continue;
                int rc = pipe_feed_all(c, runner);
                if (mode == 2) {
                    int prefix = col.hits.n == col.stop_after;
                    for (size_t i = 0; prefix && i < col.hits.n; i++) {
                        const tu_hit *a = &col.hits.items[i], *b = &want.items[i];
                        prefix = a->record == b->record && a->start == b->start && a->end == b->end &&
                                 a->pattern == b->pattern && a->strand == b->strand && a->errors == b->errors;
                    }
                    tu_check(rc == SM_ERR_TERMINATED && prefix, "%s: status %d, %zu hits of %zu wanted%s", how, rc,
                             col.hits.n, col.stop_after, prefix ? "" : " (not the first ones)");
                    /* Sticky, whatever is called next (a batch may still be in flight). */
                    int ended = sm_runner_end_record(runner);
                    sm_runner_begin_record(runner);
                    rc = sm_runner_feed(runner, c->records[0], c->record_len[0]);
                    tu_check(ended == SM_ERR_TERMINATED && rc == SM_ERR_TERMINATED &&
                                 sm_runner_end_record(runner) == SM_ERR_TERMINATED &&
                                 sm_runner_flush(runner) == SM_ERR_TERMINATED && col.hits.n == col.stop_after,
                             "%s: after the stop: status %d, %zu hits", how, rc, col.hits.n);
                } else {
                    tu_check(rc == SM_OK, "%s: status %d", how, rc);
                    if (mode == 0) tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
                    else tu_check(col.hits.n == 0, "%s: on_hit called in count mode", how);
                    tu_check(memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof(uint64_t)) == 0 &&
                                 sm_runner_total(runner) == want.n,
                             "%s: counts differ (total %llu, want %zu)", how,
                             (unsigned long long)sm_runner_total(runner), want.n);
                    tu_check(col.next_done == c->nrecords, "%s: %llu of %zu records done", how,
                             (unsigned long long)col.next_done, c->nrecords);
                }
                tu_check(col.bad_text == 0 && col.done_errors == 0, "%s: %u hits with wrong text, %u record-done errors",
                         how, col.bad_text, col.done_errors);
                sm_runner_free(runner);
                tu_hits_free(&col.hits);
            }
        }
    }
    tu_hits_free(&want);
    sm_db_free(db);
}

static void test_runner_pipeline(void) {
    acase c;
    memset(&c, 0, sizeof c);
    sm_compile_options_init(&c.opts);
    c.npats = 5;
    for (size_t p = 0; p < c.npats; p++) {
        size_t m = 8 + tu_rng_below(&rng, 13);
        tu_random_from(&rng, c.pat_buf[p], m, "ACGT");
        c.pats[p].name = NULL;
        c.pats[p].seq = c.pat_buf[p];
        c.pats[p].len = m;
    }
    static const size_t lengths[3] = {60000, 17, 25000};
    c.nrecords = 3;
    for (size_t r = 0; r < c.nrecords; r++) {
        size_t n = lengths[r];
        c.records[r] = malloc(n);
        tu_random_from(&rng, c.records[r], n, "ACGT");
        for (size_t t = 0; n > 100 && t < n / 300; t++) {
            size_t p = tu_rng_below(&rng, (uint32_t)c.npats);
            plant_mutated(c.records[r], n, tu_rng_below(&rng, (uint32_t)(n - 30)), c.pats[p].seq, c.pats[p].len,
                          tu_rng_below(&rng, 3), 0, "ACGT");
        }
        c.record_len[r] = n;
    }
    c.opts.match = SM_MATCH_EXACT;
    check_pipeline(&c, 0, "pipeline exact");
    c.opts.engine = SM_ENGINE_AUTOMATON;
    check_pipeline(&c, SM_OVERLAP_FREE_SPECULATE, "pipeline exact automaton");
    check_pipeline(&c, SM_OVERLAP_FREE_PREFIX, "pipeline exact automaton");
    c.opts.engine = SM_ENGINE_AUTO;
    c.opts.max_errors = 2;
    c.opts.match = SM_MATCH_MISMATCHES;
    check_pipeline(&c, 0, "pipeline mismatches k=2");
    c.opts.match = SM_MATCH_EDITS;
    check_pipeline(&c, 0, "pipeline edits k=2 best");
    c.opts.report = SM_REPORT_ENDS;
    check_pipeline(&c, 0, "pipeline edits k=2 ends");
    free_case(&c);
}

/* One scratch used with several k-edit databases in turn: its start
   recovery tables (built per key on first use) must follow the database,
   including one with the same number of patterns and other keys. Dense
   ends, both report modes, keys over 64 symbols (the banded DP) too. */
static void test_scratch_reuse(void) {
    char text[3000];
    tu_random_dna(&rng, text, sizeof text);
    static const size_t lengths[3][2] = {{12, 20}, {20, 12}, {70, 90}};
    char seqs[3][2][100];
    sm_db *dbs[3][2] = {{NULL}};
    for (int d = 0; d < 3; d++) {
        sm_pattern p[2];
        for (int i = 0; i < 2; i++) {
            size_t m = lengths[d][i];
            /* a pattern copied from the text (exact ends) and a mutated one */
            memcpy(seqs[d][i], text + tu_rng_below(&rng, (uint32_t)(sizeof text - m)), m);
            if (i) plant_mutated(seqs[d][i], m, 0, seqs[d][i], m, 2, 0, "ACGTN");
            p[i].name = NULL;
            p[i].seq = seqs[d][i];
            p[i].len = m;
        }
        for (int rep = 0; rep < 2; rep++) {
            sm_compile_options o;
            sm_compile_options_init(&o);
            o.match = SM_MATCH_EDITS;
            o.max_errors = 3;
            o.report = rep ? SM_REPORT_BEST : SM_REPORT_ENDS;
            tu_check(sm_compile(p, 2, &o, &dbs[d][rep], NULL) == SM_OK, "scratch reuse: compile %d", d);
        }
    }
    sm_scratch *shared = NULL;
    sm_scratch_alloc(dbs[2][0], &shared);
    static const int order[] = {0, 1, 2, 1, 0, 2, 0};
    for (size_t t = 0; t < sizeof order / sizeof *order; t++) {
        for (int rep = 0; rep < 2; rep++) {
            sm_db *db = dbs[order[t]][rep];
            if (!db) continue;
            sm_scratch *fresh = NULL;
            sm_scratch_alloc(db, &fresh);
            collector want, got;
            tu_hits_init(&want.hits);
            tu_hits_init(&got.hits);
            want.record = got.record = 0;
            sm_scan(db, fresh, text, sizeof text, collect, &want);
            sm_scan(db, shared, text, sizeof text, collect, &got);
            tu_check(want.hits.n > 0, "scratch reuse: no hit for database %d", order[t]);
            char how[80];
            snprintf(how, sizeof how, "scratch reuse: database %d, report %s", order[t], rep ? "best" : "ends");
            tu_check(tu_hits_equal(&want.hits, &got.hits, how), "%s", how);
            sm_scratch_free(fresh);
            tu_hits_free(&want.hits);
            tu_hits_free(&got.hits);
        }
    }
    sm_scratch_free(shared);
    for (int d = 0; d < 3; d++)
        for (int rep = 0; rep < 2; rep++) sm_db_free(dbs[d][rep]);
}

/* --pam against the definitions (tests/common/approx_oracle.c): guides of
   1 to 24 nt, IUPAC PAMs, exact matching, k mismatches and k edits in both
   report modes, each strand setting, text IUPAC codes, every engine that
   can be forced for the kind, through block scans, counts, streams and the
   runner with several threads and small chunks. Sites are planted with
   their PAM (a concrete instance), with a broken PAM and with errors in
   the guide, on both strands. */
static void test_pam(void) {
    static const char *const pams[] = {"NGG", "NAG", "NRG", "TTTV", "GG", "N", "nngrrt", "NGGNG"};
    static const sm_engine exact_engines[] = {SM_ENGINE_AUTO, SM_ENGINE_AUTOMATON, SM_ENGINE_SHIFTAND, SM_ENGINE_KMER,
                                              SM_ENGINE_WUMANBER};
    static const sm_engine mismatch_engines[] = {SM_ENGINE_AUTO, SM_ENGINE_MISMATCH, SM_ENGINE_PIGEONHOLE};
    static const sm_engine edit_engines[] = {SM_ENGINE_AUTO, SM_ENGINE_MYERS, SM_ENGINE_WAVEFRONT, SM_ENGINE_PIGEONHOLE};
    static const size_t chunks[] = {1, 5, 29, 0};
    unsigned cases = 0, forced = 0;
    for (unsigned round = 0; round < tu_scaled(60) && tu_failures() < 10; round++) {
        acase c;
        memset(&c, 0, sizeof c);
        sm_compile_options_init(&c.opts);
        c.opts.pam = pams[round % (sizeof pams / sizeof *pams)];
        unsigned kind = round % 4; /* exact, mismatches, edits ends, edits best */
        c.opts.match = kind == 0 ? SM_MATCH_EXACT : kind == 1 ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
        c.opts.report = kind == 2 ? SM_REPORT_ENDS : SM_REPORT_BEST;
        c.opts.max_errors = kind == 0 ? 0 : tu_rng_below(&rng, 4) + (tu_rng_chance(&rng, 80) ? 1 : 0);
        c.opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        if (tu_rng_chance(&rng, 15)) c.opts.flags |= SM_FLAG_TEXT_IUPAC;
        size_t q = strlen(c.opts.pam);
        /* now and then one guide over 64 nt (the banded DP), on a short text */
        int long_guide = round % 20 == 7;
        c.npats = long_guide ? 1 : 1 + tu_rng_below(&rng, 3);
        for (size_t p = 0; p < c.npats; p++) {
            size_t g = long_guide ? 65 + tu_rng_below(&rng, 12)
                       : tu_rng_chance(&rng, 10) ? 1 + tu_rng_below(&rng, 3) : 8 + tu_rng_below(&rng, 17);
            tu_random_iupac(&rng, c.pat_buf[p], g, 5, 20);
            c.pats[p].name = NULL;
            c.pats[p].seq = c.pat_buf[p];
            c.pats[p].len = g;
        }
        c.nrecords = 1 + tu_rng_below(&rng, 2);
        for (size_t r = 0; r < c.nrecords; r++) {
            size_t n = long_guide ? 100 + tu_rng_below(&rng, 80) : 60 + tu_rng_below(&rng, 500);
            c.records[r] = malloc(n + 1);
            tu_random_iupac(&rng, c.records[r], n, 3, 10);
            for (int t = 0; t < 8; t++) {
                size_t p = tu_rng_below(&rng, (uint32_t)c.npats), g = c.pats[p].len, m = g + q;
                if (m + 2 >= n) continue;
                /* guide + a concrete PAM (broken now and then), on either strand, with errors */
                char site[128];
                memcpy(site, c.pats[p].seq, g);
                for (size_t i = 0; i < q; i++) {
                    static const char bases[] = "ACGT";
                    char b = bases[tu_rng_below(&rng, 4)];
                    if (!tu_rng_chance(&rng, 15))
                        while (!oracle_symbol_matches((unsigned char)c.opts.pam[i], (unsigned char)b, SM_ALPHABET_DNA, 0))
                            b = bases[tu_rng_below(&rng, 4)];
                    site[g + i] = b;
                }
                for (size_t i = 0; i < g; i++) /* a concrete guide, so that the copy can match */
                    if (!oracle_symbol_matches((unsigned char)site[i], 'A', SM_ALPHABET_DNA, 0) &&
                        !oracle_symbol_matches((unsigned char)site[i], 'C', SM_ALPHABET_DNA, 0) &&
                        !oracle_symbol_matches((unsigned char)site[i], 'G', SM_ALPHABET_DNA, 0))
                        site[i] = 'T';
                    else if (oracle_nt_set((unsigned char)site[i]) & 1) site[i] = 'A';
                    else if (oracle_nt_set((unsigned char)site[i]) & 2) site[i] = 'C';
                    else if (oracle_nt_set((unsigned char)site[i]) & 4) site[i] = 'G';
                if (tu_rng_chance(&rng, 50)) {
                    char rc[128];
                    oracle_reverse_complement(site, m, rc);
                    memcpy(site, rc, m);
                }
                size_t at = tu_rng_below(&rng, (uint32_t)(n - m));
                if (t == 0) at = 0;
                if (t == 1) at = n - m;
                plant_mutated(c.records[r], n, at, site, m, tu_rng_below(&rng, c.opts.max_errors + 2),
                              c.opts.match != SM_MATCH_EDITS, "ACGT");
            }
            c.record_len[r] = n;
        }
        const sm_engine *engines = kind == 0 ? exact_engines : kind == 1 ? mismatch_engines : edit_engines;
        size_t nengines = kind == 0   ? sizeof exact_engines / sizeof *exact_engines
                          : kind == 1 ? sizeof mismatch_engines / sizeof *mismatch_engines
                                      : sizeof edit_engines / sizeof *edit_engines;
        for (size_t e = 0; e < nengines; e++) {
            sm_compile_options o = c.opts;
            o.engine = engines[e];
            sm_db *db = NULL;
            /* a forced engine may not take the set (k-mer table: one length, four symbols) */
            if (sm_compile(c.pats, c.npats, &o, &db, NULL) != SM_OK) {
                tu_check(engines[e] != SM_ENGINE_AUTO, "pam: compile refused: %s", c.opts.pam);
                continue;
            }
            sm_db_info info;
            sm_db_get_info(db, &info);
            size_t len = 0;
            const char *site = sm_db_pattern_seq(db, 0, &len);
            tu_check(info.pam_length == q && len == c.pats[0].len + q && strncasecmp(site + c.pats[0].len, c.opts.pam, q) == 0,
                     "pam: the database holds guide + PAM (length %zu, pam_length %u)", len, info.pam_length);
            sm_db_free(db);
            check_case_chunks(&c, engines[e], chunks, sizeof chunks / sizeof *chunks, 40);
            forced += engines[e] != SM_ENGINE_AUTO;
        }
        cases++;
        free_case(&c);
    }
    printf("pam: %u cases, %u with a forced engine\n", cases, forced);
    tu_check(forced >= cases, "pam: only %u forced-engine runs in %u cases", forced, cases);
}

/* A degenerate pattern with -k 1 --report ends hits at every end: N^(m-1) A
   at end j is exact when the base before j is A (start j - m), else one
   deletion (start j - m + 1); its reverse complement T N^(m-1) likewise with
   the base at j - m. Each start is recovered from per-thread tables of the
   key (the bit-vector pass up to 64 symbols, a band of the DP past that,
   none for an exact end), so 30 kbp take well under a second where they
   took seconds per 10 kbp. (The command refuses such a pattern, whose one
   base -k 1 may edit away; the library takes it.) */
static void test_dense_ends(void) {
    const size_t n = 30000;
    char *text = malloc(n);
    char *key = malloc(301);
    if (!tu_check(text && key, "dense ends: out of memory")) goto done;
    for (size_t i = 0; i < n; i++) text[i] = "ACGT"[tu_rng_below(&rng, 4)];
    static const size_t lengths[] = {20, 300};
    for (size_t li = 0; li < 2; li++) {
        size_t m = lengths[li];
        memset(key, 'N', m - 1);
        key[m - 1] = 'A';
        sm_pattern p = {"P", key, m};
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.match = SM_MATCH_EDITS;
        o.max_errors = 1;
        o.report = SM_REPORT_ENDS;
        sm_db *db = NULL;
        sm_error err;
        if (!tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_OK, "dense ends %zu: compile: %s", m, err.message))
            continue;
        tu_hits want;
        tu_hits_init(&want);
        for (size_t j = m - 1; j <= n; j++) {
            int fa = j >= m && text[j - 1] == 'A', ft = j >= m && text[j - m] == 'T';
            tu_hits_add(&want, 0, fa ? j - m : j - m + 1, j, 0, '+', fa ? 0 : 1);
            tu_hits_add(&want, 0, ft ? j - m : j - m + 1, j, 0, '-', ft ? 0 : 1);
        }
        tu_hits_sort(&want);
        for (int count = 0; count <= 1; count++) {
            tu_hits got;
            tu_hits_init(&got);
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            ro.threads = 2;
            ro.chunk_size = 4096;
            ro.count_only = count;
            ro.on_hit = tu_hits_collect;
            ro.ctx = &got;
            sm_runner *runner = NULL;
            if (tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "dense ends %zu: runner: %s", m,
                         err.message)) {
                sm_runner_begin_record(runner);
                int rc = sm_runner_feed(runner, text, n);
                if (rc == SM_OK) rc = sm_runner_end_record(runner);
                if (rc == SM_OK) rc = sm_runner_flush(runner);
                char what[64];
                snprintf(what, sizeof what, "dense ends, %zu nt%s", m, count ? ", count" : "");
                tu_check(rc == SM_OK, "%s: status %d", what, rc);
                if (!count) tu_check(tu_hits_equal(&want, &got, what), "%s", what);
                tu_check(sm_runner_total(runner) == want.n, "%s: %llu hits counted, want %zu", what,
                         (unsigned long long)sm_runner_total(runner), want.n);
                sm_runner_free(runner);
            }
            tu_hits_free(&got);
        }
        tu_hits_free(&want);
        sm_db_free(db);
    }
done:
    free(text);
    free(key);
}

/* Exact patterns beside k mismatches or k edits (sm_compile_options.exact:
   barcodes beside primers): the exact sections and the approximate ones
   together, planned for the CPU and for the GPU, against the definitions
   (exact hits across segment borders of edit databases: those segments own
   ends, the exact sections' hits by their start); a PAM refused. */
static void test_exact_beside(void) {
    for (unsigned round = 0; round < tu_scaled(40) && tu_failures() < 10; round++) {
        acase c;
        random_case(&c, round);
        const int edits = round % 4 == 3; /* the edit definitions cost more: a round in four */
        c.opts.match = edits ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        for (size_t p = 0; p < c.npats; p++) c.exact[p] = (unsigned char)tu_rng_chance(&rng, 50);
        c.exact[tu_rng_below(&rng, (uint32_t)c.npats)] = 1;
        /* k edits: an approximate pattern of at most k symbols would match
           everywhere, the empty text too (engines and definitions part
           there); such a one is exact here */
        for (size_t p = 0; edits && p < c.npats; p++)
            if (c.pats[p].len <= c.opts.max_errors) c.exact[p] = 1;
        c.opts.exact = c.exact;
        if (round % 2) c.opts.backend = SM_BACKEND_CUDA; /* the GPU's plan */
        /* the exact ones may be as short as k */
        for (size_t p = 0; p < c.npats; p++)
            if (c.exact[p] && c.pats[p].len > 1 && tu_rng_chance(&rng, 30))
                c.pats[p].len = 1 + tu_rng_below(&rng, c.opts.max_errors < c.pats[p].len ? c.opts.max_errors : (uint32_t)c.pats[p].len - 1);
        sm_db *db = NULL;
        sm_error err;
        int rc = sm_compile(c.pats, c.npats, &c.opts, &db, &err);
        if (rc == SM_OK) {
            sm_db_info info;
            sm_db_get_info(db, &info);
            unsigned exact = 0;
            for (size_t p = 0; p < c.npats; p++) exact += c.exact[p];
            tu_check(info.pattern_count - info.approx_patterns == exact, "round %u: %u exact patterns, %u in exact sections",
                     round, exact, info.pattern_count - info.approx_patterns);
            /* saved and read back: a loader takes exact sections beside mismatches and edits */
            size_t size = 0;
            const void *bytes = sm_db_bytes(db, &size);
            sm_db *back = NULL;
            tu_check(sm_db_from_bytes(bytes, size, &back, &err) == SM_OK, "round %u: read back: %s", round, err.message);
            sm_db_free(back);
            sm_db_free(db);
            check_case(&c, SM_ENGINE_AUTO);
            c.opts.engine = SM_ENGINE_PIGEONHOLE;
            if (sm_compile(c.pats, c.npats, &c.opts, &db, NULL) == SM_OK) {
                sm_db_free(db);
                check_case(&c, SM_ENGINE_PIGEONHOLE);
            }
            check_case(&c, edits ? SM_ENGINE_MYERS : SM_ENGINE_MISMATCH);
        } else {
            tu_check(0, "round %u: compile: %s", round, err.message);
        }
        free_case(&c);
    }
    acase c;
    random_case(&c, 0);
    c.exact[0] = 1;
    c.opts.exact = c.exact;
    sm_db *db = NULL;
    sm_error err;
    /* beside k edits, a record split between parts (MPI) is refused */
    c.opts.match = SM_MATCH_EDITS;
    c.opts.max_errors = 1;
    for (size_t p = 1; p < c.npats; p++) c.exact[p] = c.pats[p].len <= 1;
    if (tu_check(sm_compile(c.pats, c.npats, &c.opts, &db, &err) == SM_OK, "beside edits: compile: %s", err.message)) {
        for (int side = 0; side < 2; side++) {
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            ro.count_only = 1;
            sm_runner *runner = NULL;
            if (!tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "beside edits: runner: %s", err.message))
                continue;
            sm_runner_begin_part(runner, 0, side == 0);
            int rc = sm_runner_feed(runner, "ACGTACGT", 8);
            if (rc == SM_OK) rc = sm_runner_end_part(runner, 4, side == 1);
            if (rc == SM_OK) rc = sm_runner_flush(runner);
            tu_check(rc == SM_ERR_INVALID, "beside edits: a part open on the %s: status %d", side ? "right" : "left", rc);
            sm_runner_free(runner);
        }
        sm_db_free(db);
        db = NULL;
    }
    c.opts.match = SM_MATCH_MISMATCHES;
    c.opts.alphabet = SM_ALPHABET_DNA;
    c.opts.pam = "NGG";
    tu_check(sm_compile(c.pats, c.npats, &c.opts, &db, &err) == SM_ERR_INVALID && strstr(err.message, "PAM"),
             "exact patterns with a PAM: refused (%s)", err.message);
    c.opts.pam = NULL;
    c.opts.max_errors = 0; /* every pattern exact: the flags change nothing */
    tu_check(sm_compile(c.pats, c.npats, &c.opts, &db, &err) == SM_OK, "k = 0 with exact flags: %s", err.message);
    sm_db_free(db);
    free_case(&c);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(77));
    test_exact_beside();
    test_dense_ends();
    test_seed_example();
    test_guide_pam();
    test_scratch_reuse();
    test_pam();
    test_pigeonhole();
    test_runner_pipeline();
    test_early_batch_starts_workers();
    for (unsigned round = 0; round < tu_scaled(150) && tu_failures() < 10; round++) {
        acase c;
        random_case(&c, round);
        check_case(&c, SM_ENGINE_AUTO);
        if (c.opts.match == SM_MATCH_EDITS) check_case(&c, SM_ENGINE_WAVEFRONT);
        /* The pigeonhole filter where it applies (patterns longer than k,
           no IUPAC text, pieces of bounded expansion). */
        sm_compile_options o = c.opts;
        o.engine = SM_ENGINE_PIGEONHOLE;
        sm_db *db = NULL;
        if (sm_compile(c.pats, c.npats, &o, &db, NULL) == SM_OK) {
            sm_db_free(db);
            check_case(&c, SM_ENGINE_PIGEONHOLE);
        }
        free_case(&c);
    }
    return tu_summary("test_approx_search");
}
