/* The stable part of the API alone (no SEQMATCH_EXPERIMENTAL: the build
 * removes the tree's definition for this file): every header but the
 * experimental ones compiles without it; the compile and runner settings'
 * parameters keep their bounds, refuse what is out of them and read back what
 * was set; databases compiled with them give the hits of a direct oracle
 * (exact and k mismatches, both strands) through sm_scan and through a runner
 * made with settings, whose records, bases and counts are the run's; sm_db_get
 * answers every attribute and refuses others. */
#include <seqmatch.h>
#include <seqmatch_gzip.h>
#include <seqmatch_reader.h>

#include <stdlib.h>
#include <string.h>

#include "check.h"

#ifdef SEQMATCH_EXPERIMENTAL
#error "this test must see the stable part only"
#endif

typedef struct {
    uint64_t start, end;
    uint32_t pattern;
    char strand;
} hit;

typedef struct {
    hit *h;
    size_t n, cap;
} hits;

static void push(hits *l, uint64_t start, uint64_t end, uint32_t pattern, char strand) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->h = realloc(l->h, l->cap * sizeof *l->h);
        if (!l->h) abort();
    }
    l->h[l->n++] = (hit){start, end, pattern, strand};
}

static int collect(const sm_hit *h, void *ctx) {
    push(ctx, h->start, h->end, h->pattern, h->strand);
    return 0;
}

static char complement(char c) { return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A'; }

/* Every window with at most k mismatches against a pattern ('+') or its
   reverse complement ('-'), in (start, end, pattern, strand) order. */
static void oracle(const char *text, size_t n, char **pats, size_t np, size_t m, unsigned k, int both, hits *out) {
    char *rc = malloc(m);
    for (size_t i = 0; i + m <= n; i++)
        for (uint32_t p = 0; p < np; p++) {
            for (size_t j = 0; j < m; j++) rc[j] = complement(pats[p][m - 1 - j]);
            for (int s = 0; s < (both ? 2 : 1); s++) {
                const char *key = s ? rc : pats[p];
                unsigned miss = 0;
                for (size_t j = 0; j < m && miss <= k; j++) miss += text[i + j] != key[j];
                if (miss <= k) push(out, i, i + m, p, s ? '-' : '+');
            }
        }
    free(rc);
}

static int same(const hits *a, const hits *b) {
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->h[i].start != b->h[i].start || a->h[i].end != b->h[i].end || a->h[i].pattern != b->h[i].pattern ||
            a->h[i].strand != b->h[i].strand)
            return 0;
    return 1;
}

static void bounds_and_values(void) {
    for (int param = 0; param <= 17; param++) {
        int64_t lo = -1, hi = -1, v = -1;
        int known = param >= 1 && param <= 16;
        CHECK((sm_compile_param_bounds((sm_compile_param)param, &lo, &hi) == SM_OK) == known, "cparam %d", param);
        sm_compile_params *p = sm_compile_params_new();
        CHECK(p != NULL, "params");
        if (!known) {
            CHECK(sm_compile_params_set(p, (sm_compile_param)param, 0) == SM_ERR_INVALID, "cparam %d set", param);
            CHECK(sm_compile_params_get(p, (sm_compile_param)param, &v) == SM_ERR_INVALID, "cparam %d get", param);
            sm_compile_params_free(p);
            continue;
        }
        int64_t before;
        CHECK(sm_compile_params_get(p, (sm_compile_param)param, &before) == SM_OK, "cparam %d default", param);
        CHECK(before >= lo && before <= hi, "cparam %d default %lld out of bounds", param, (long long)before);
        CHECK(sm_compile_params_set(p, (sm_compile_param)param, lo - 1) == SM_ERR_INVALID, "cparam %d below", param);
        if (hi < INT64_MAX)
            CHECK(sm_compile_params_set(p, (sm_compile_param)param, hi + 1) == SM_ERR_INVALID, "cparam %d above", param);
        CHECK(sm_compile_params_get(p, (sm_compile_param)param, &v) == SM_OK && v == before, "cparam %d changed",
              param);
        for (int end = 0; end < 2; end++) {
            int64_t want = end ? hi : lo;
            CHECK(sm_compile_params_set(p, (sm_compile_param)param, want) == SM_OK, "cparam %d set %lld", param,
                  (long long)want);
            CHECK(sm_compile_params_get(p, (sm_compile_param)param, &v) == SM_OK && v == want, "cparam %d read back",
                  param);
        }
        sm_compile_params_free(p);
    }
    int64_t lo, hi;
    CHECK(sm_compile_param_bounds(SM_CPARAM_DNA_BULGES, &lo, &hi) == SM_OK && lo == 0 && hi == SM_MAX_BULGE,
          "bulge bounds");
    CHECK(sm_compile_param_bounds(SM_CPARAM_MATCH, &lo, &hi) == SM_OK && hi == SM_MATCH_EDITS, "match bounds");
    for (size_t i = 0; i < sm_engine_count(); i++) {
        sm_compile_params *p = sm_compile_params_new();
        CHECK(sm_compile_params_set(p, SM_CPARAM_ENGINE, sm_engine_at(i)) == SM_OK, "engine %s",
              sm_engine_name(sm_engine_at(i)));
        sm_compile_params_free(p);
    }
    for (int param = 0; param <= SM_RPARAM_FEWEST_ERRORS + 1; param++) {
        int64_t v = -1, before;
        int known = param >= SM_RPARAM_THREADS && param <= SM_RPARAM_FEWEST_ERRORS;
        CHECK((sm_runner_param_bounds((sm_runner_param)param, &lo, &hi) == SM_OK) == known, "rparam %d", param);
        sm_runner_params *p = sm_runner_params_new();
        CHECK(p != NULL, "runner params");
        if (!known) {
            CHECK(sm_runner_params_set(p, (sm_runner_param)param, 0) == SM_ERR_INVALID, "rparam %d set", param);
            sm_runner_params_free(p);
            continue;
        }
        CHECK(sm_runner_params_get(p, (sm_runner_param)param, &before) == SM_OK && before >= lo && before <= hi,
              "rparam %d default", param);
        CHECK(sm_runner_params_set(p, (sm_runner_param)param, lo - 1) == SM_ERR_INVALID, "rparam %d below", param);
        if (hi < INT64_MAX)
            CHECK(sm_runner_params_set(p, (sm_runner_param)param, hi + 1) == SM_ERR_INVALID, "rparam %d above", param);
        CHECK(sm_runner_params_get(p, (sm_runner_param)param, &v) == SM_OK && v == before, "rparam %d changed", param);
        CHECK(sm_runner_params_set(p, (sm_runner_param)param, hi) == SM_OK &&
                  sm_runner_params_get(p, (sm_runner_param)param, &v) == SM_OK && v == hi,
              "rparam %d read back", param);
        sm_runner_params_free(p);
    }
    CHECK(sm_runner_param_bounds(SM_RPARAM_ANCHOR, &lo, &hi) == SM_OK && hi == SM_ANCHOR_END, "anchor bounds");
}

static void searches(void) {
    uint64_t state = 29;
    const size_t n = 20000, np = 12, m = 9;
    char *text = malloc(n);
    char *pats[12];
    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        text[i] = "ACGT"[state >> 62];
    }
    for (size_t p = 0; p < np; p++) {
        pats[p] = malloc(m);
        size_t at = (p * 1543) % (n - m);
        memcpy(pats[p], text + at, m); /* each occurs at least once */
        if (p % 3 == 0) pats[p][p % m] = pats[p][p % m] == 'A' ? 'C' : 'A';
    }
    sm_pattern patterns[12];
    for (size_t p = 0; p < np; p++) patterns[p] = (sm_pattern){NULL, pats[p], m};
    for (int round = 0; round < 3; round++) {
        unsigned k = round == 0 ? 0 : round == 1 ? 1 : 2;
        int both = round != 2;
        sm_compile_params *cp = sm_compile_params_new();
        if (k) {
            CHECK(sm_compile_params_set(cp, SM_CPARAM_MATCH, SM_MATCH_MISMATCHES) == SM_OK, "match");
            CHECK(sm_compile_params_set(cp, SM_CPARAM_MAX_ERRORS, k) == SM_OK, "k");
        }
        if (!both) CHECK(sm_compile_params_set(cp, SM_CPARAM_STRANDS, SM_STRAND_FORWARD) == SM_OK, "strands");
        sm_db *db = NULL;
        sm_error err;
        CHECK(sm_compile_with_params(patterns, np, round == 0 ? NULL : cp, &db, &err) == SM_OK, "compile: %s",
              err.message);
        sm_compile_params_free(cp);
        if (!db) continue;
        uint64_t v;
        CHECK(sm_db_get(db, SM_DB_PATTERN_COUNT, &v) == SM_OK && v == np, "pattern count");
        CHECK(sm_db_get(db, SM_DB_MAX_ERRORS, &v) == SM_OK && v == k, "max errors");
        CHECK(sm_db_get(db, SM_DB_MATCH, &v) == SM_OK && v == (k ? SM_MATCH_MISMATCHES : SM_MATCH_EXACT), "match");
        CHECK(sm_db_get(db, SM_DB_STRANDS, &v) == SM_OK && v == (both ? SM_STRAND_BOTH : SM_STRAND_FORWARD), "strands");
        CHECK(sm_db_get(db, SM_DB_MIN_LENGTH, &v) == SM_OK && v == m, "min length");
        CHECK(sm_db_get(db, SM_DB_SIZE, &v) == SM_OK && v > 0, "size");
        for (int attr = 1; attr <= 21; attr++) CHECK(sm_db_get(db, (sm_db_attr)attr, &v) == SM_OK, "attr %d", attr);
        CHECK(sm_db_get(db, (sm_db_attr)0, &v) == SM_ERR_INVALID && v == 0, "attr 0");
        CHECK(sm_db_get(db, (sm_db_attr)22, &v) == SM_ERR_INVALID, "attr 22");
        /* compiled here: its build took some time, the automaton (if any) built on the CPU */
        CHECK(sm_db_get(db, SM_DB_BUILD_US, &v) == SM_OK && v > 0, "build time");
        CHECK(sm_db_get(db, SM_DB_AUTOMATON_BUILT_ON, &v) == SM_OK && v == SM_BACKEND_CPU, "built on the CPU");
        hits want = {0}, scanned = {0}, run = {0};
        oracle(text, n, pats, np, m, k, both, &want);
        CHECK(want.n > 0, "oracle");
        sm_scratch *scratch = NULL;
        CHECK(sm_scratch_alloc(db, &scratch) == SM_OK, "scratch");
        CHECK(sm_scan(db, scratch, text, n, collect, &scanned) == SM_OK, "scan");
        CHECK(same(&want, &scanned), "round %d: sm_scan gave %zu hits, the oracle %zu", round, scanned.n, want.n);
        sm_scratch_free(scratch);
        sm_runner_params *rp = sm_runner_params_new();
        CHECK(sm_runner_params_set(rp, SM_RPARAM_THREADS, 2) == SM_OK, "threads");
        CHECK(sm_runner_params_set(rp, SM_RPARAM_CHUNK_SIZE, 1000) == SM_OK, "chunk");
        sm_runner_params_set_on_hit(rp, collect);
        sm_runner_params_set_context(rp, &run);
        sm_runner *runner = NULL;
        CHECK(sm_runner_create_with_params(db, rp, &runner, &err) == SM_OK, "runner: %s", err.message);
        sm_runner_params_free(rp); /* copied by the runner */
        if (runner) {
            sm_runner_begin_record(runner);
            for (size_t at = 0; at < n; at += 777) sm_runner_feed(runner, text + at, n - at < 777 ? n - at : 777);
            CHECK(sm_runner_end_record(runner) == SM_OK && sm_runner_flush(runner) == SM_OK, "runner run");
            CHECK(same(&want, &run), "round %d: the runner gave %zu hits, the oracle %zu", round, run.n, want.n);
            CHECK(sm_runner_total(runner) == want.n, "runner total");
            /* a run's numbers: records, bases fed, hits per pattern adding up to the total */
            uint64_t per_pattern = 0;
            for (size_t p = 0; p < np; p++) per_pattern += sm_runner_counts(runner)[p];
            CHECK(sm_runner_records(runner) == 1 && sm_runner_bases(runner) == n && per_pattern == want.n,
                  "records %llu, bases %llu of %zu, hits %llu", (unsigned long long)sm_runner_records(runner),
                  (unsigned long long)sm_runner_bases(runner), n, (unsigned long long)per_pattern);
            sm_runner_free(runner);
        }
        /* counting: the runner with count_only set */
        rp = sm_runner_params_new();
        CHECK(sm_runner_params_set(rp, SM_RPARAM_COUNT_ONLY, 1) == SM_OK, "count only");
        CHECK(sm_runner_create_with_params(db, rp, &runner, &err) == SM_OK, "counting runner: %s", err.message);
        sm_runner_params_free(rp);
        if (runner) {
            /* two records: the text written in place (sm_runner_feed_buffer), then an empty one */
            sm_runner_begin_record(runner);
            for (size_t at = 0; at < n;) {
                void *dst = NULL;
                size_t room = 0;
                CHECK(sm_runner_feed_buffer(runner, n - at, &dst, &room) == SM_OK && room > 0, "feed buffer");
                if (room == 0) break;
                memcpy(dst, text + at, room);
                CHECK(sm_runner_feed_commit(runner, room) == SM_OK, "feed commit");
                at += room;
            }
            sm_runner_end_record(runner);
            sm_runner_begin_record(runner);
            sm_runner_end_record(runner);
            CHECK(sm_runner_flush(runner) == SM_OK && sm_runner_total(runner) == want.n, "counted %llu, want %zu",
                  (unsigned long long)sm_runner_total(runner), want.n);
            CHECK(sm_runner_records(runner) == 2 && sm_runner_bases(runner) == n, "counting: records %llu, bases %llu",
                  (unsigned long long)sm_runner_records(runner), (unsigned long long)sm_runner_bases(runner));
            CHECK(strcmp(sm_runner_message(runner), "") == 0, "no failure, no words: '%s'", sm_runner_message(runner));
            sm_runner_free(runner);
        }
        CHECK(sm_runner_bases(NULL) == 0 && sm_runner_records(NULL) == 0, "numbers of no runner");
        CHECK(strcmp(sm_runner_message(NULL), "") == 0, "the words of no runner");
        free(want.h), free(scanned.h), free(run.h);
        sm_db_free(db);
    }
    /* exact flags must be one per pattern; a PAM is kept */
    sm_compile_params *cp = sm_compile_params_new();
    unsigned char flags[12] = {1};
    CHECK(sm_compile_params_set(cp, SM_CPARAM_MATCH, SM_MATCH_MISMATCHES) == SM_OK &&
              sm_compile_params_set(cp, SM_CPARAM_MAX_ERRORS, 1) == SM_OK &&
              sm_compile_params_set_exact(cp, flags, np - 1) == SM_OK,
          "exact flags");
    sm_db *db = NULL;
    sm_error err;
    CHECK(sm_compile_with_params(patterns, np, cp, &db, &err) == SM_ERR_INVALID && db == NULL, "exact count refused");
    CHECK(sm_compile_params_set_exact(cp, flags, np) == SM_OK, "exact flags");
    CHECK(sm_compile_with_params(patterns, np, cp, &db, &err) == SM_OK, "exact beside: %s", err.message);
    sm_db_free(db);
    CHECK(sm_compile_params_set_exact(cp, NULL, 0) == SM_OK && sm_compile_params_set_pam(cp, "NGG") == SM_OK, "pam");
    CHECK(sm_compile_with_params(patterns, np, cp, &db, &err) == SM_OK, "pam: %s", err.message);
    uint64_t v = 0;
    CHECK(db && sm_db_get(db, SM_DB_PAM_LENGTH, &v) == SM_OK && v == 3, "pam length %llu", (unsigned long long)v);
    sm_db_free(db);
    sm_compile_params_free(cp);
    for (size_t p = 0; p < np; p++) free(pats[p]);
    free(text);
}

int main(void) {
    CHECK(strcmp(sm_version(), SM_VERSION_STRING) == 0, "version");
    bounds_and_values();
    searches();
    /* the stable reader and gzip calls are declared (linked, not run here) */
    int (*open_fn)(const char *, sm_input_format, sm_reader **, sm_error *) = sm_reader_open;
    size_t (*bound_fn)(size_t) = sm_gzip_bound;
    CHECK(open_fn != NULL && bound_fn(10) > 10, "reader and gzip");
    if (failures) fprintf(stderr, "test_stable_api: %d failures\n", failures);
    return failures != 0;
}
