/* Partial matches at record ends (sm_runner_options.min_overlap) and the hit
 * limits (max_hits_per_pattern, max_hits_per_record, fewest_errors) against
 * the oracle written from the definitions (tests/common/approx_oracle.c:
 * every placement of every key, overhanging ones included).
 *
 * Random rounds: exact and k mismatches, DNA (both strands, one strand,
 * IUPAC codes in patterns and, with --text-iupac, in the text; N and lower
 * case in the text) and text (case folded or not); every engine that takes
 * the kind of matching; records shorter than the patterns, empty ones, and
 * pattern prefixes and suffixes (and their reverse complements) planted at
 * the records' ends; the runner on 1 and 3 threads with tiny chunks, bytes
 * fed in pieces, straight into its buffer or many records at once; hits (and
 * their texts), counts and record summaries. Then the refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx_oracle.h"
#include "oracle.h"
#include "runner/runner_variant.h"
#include "summary_check.h"
#include "testutil.h"

static tu_rng rng;

#define MAX_PATTERNS 5
#define MAX_RECORDS 6

typedef struct {
    sm_compile_options opts;
    sm_pattern pats[MAX_PATTERNS];
    char pat_buf[MAX_PATTERNS][48];
    size_t npats;
    char *records[MAX_RECORDS];
    size_t record_len[MAX_RECORDS];
    size_t nrecords;
    uint32_t min_overlap;
    uint32_t per_pattern, per_record;
    int fewest;
    int use_sides;             /* min_overlap_sides (exact and mismatches) */
    uint8_t sides[MAX_PATTERNS];
} ecase;

static void key_of(const ecase *c, size_t p, int reverse, char *key) {
    const sm_pattern *pat = &c->pats[p];
    for (size_t i = 0; i < pat->len; i++) {
        char ch = pat->seq[i];
        if (c->opts.alphabet == SM_ALPHABET_DNA) {
            if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 32);
            if (ch == 'U') ch = 'T';
        } else if ((c->opts.flags & SM_FLAG_IGNORE_CASE) && ch >= 'A' && ch <= 'Z') {
            ch = (char)(ch + 32);
        }
        key[i] = ch;
    }
    if (reverse) oracle_reverse_complement(pat->seq, pat->len, key);
}

/* The oracle's hits of every record, partial ones included, then the limits. */
static void expected_hits(const ecase *c, tu_hits *out) {
    uint32_t k = c->opts.match == SM_MATCH_EXACT ? 0 : c->opts.max_errors;
    tu_hits all;
    tu_hits_init(&all);
    for (size_t r = 0; r < c->nrecords; r++)
        for (size_t p = 0; p < c->npats; p++)
            for (int rev = 0; rev <= 1; rev++) {
                if (c->opts.alphabet == SM_ALPHABET_TEXT && rev) continue;
                if (c->opts.alphabet == SM_ALPHABET_DNA &&
                    ((rev && c->opts.strands == SM_STRAND_FORWARD) || (!rev && c->opts.strands == SM_STRAND_REVERSE)))
                    continue;
                char key[48];
                key_of(c, p, rev, key);
                if (c->opts.match == SM_MATCH_EDITS)
                    aoracle_edit_overlap_hits(key, c->pats[p].len, c->records[r], c->record_len[r], k, c->min_overlap,
                                              c->opts.report, c->opts.alphabet, c->opts.flags, r, (uint32_t)p,
                                              rev ? '-' : '+', &all, NULL);
                else {
                    size_t from = all.n, to = from;
                    aoracle_overlap_hits(key, c->pats[p].len, c->records[r], c->record_len[r], k, c->min_overlap,
                                         c->opts.alphabet, c->opts.flags, r, (uint32_t)p, rev ? '-' : '+', &all);
                    /* the sides asked for: a partial hit (shorter than the pattern) at the
                       start [0, j < n), at the end [s > 0, n), or over the whole record */
                    for (size_t i = from; i < all.n && c->use_sides; i++) {
                        const tu_hit *h = &all.items[i];
                        int partial = h->end - h->start < c->pats[p].len, n = (int)c->record_len[r];
                        unsigned side = h->start == 0 && (int)h->end == n ? 3u : h->start == 0 ? 1u : 2u;
                        if (!partial || (c->sides[p] & side)) all.items[to++] = *h;
                    }
                    if (c->use_sides) all.n = to;
                }
            }
    tu_hits_sort(&all);
    /* the limits, record by record, in output order */
    for (size_t i = 0; i < all.n;) {
        size_t j = i;
        while (j < all.n && all.items[j].record == all.items[i].record) j++;
        uint32_t least[MAX_PATTERNS], per[MAX_PATTERNS] = {0}, total = 0;
        for (size_t p = 0; p < MAX_PATTERNS; p++) least[p] = UINT32_MAX;
        for (size_t x = i; x < j; x++)
            if (all.items[x].errors < least[all.items[x].pattern]) least[all.items[x].pattern] = all.items[x].errors;
        for (size_t x = i; x < j; x++) {
            const tu_hit *h = &all.items[x];
            if (c->fewest && h->errors != least[h->pattern]) continue;
            if (c->per_pattern && per[h->pattern] >= c->per_pattern) continue;
            if (c->per_record && total >= c->per_record) continue;
            per[h->pattern]++;
            total++;
            tu_hits_add(out, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
        }
        i = j;
    }
    tu_hits_free(&all);
}

typedef struct {
    tu_hits hits;
    const ecase *c;
    unsigned bad_text;
} collector;

static int collect(const sm_hit *h, void *ctx) {
    collector *col = ctx;
    tu_hits_add(&col->hits, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    const char *rec = col->c->records[h->record];
    if (!h->text || h->end > col->c->record_len[h->record] || memcmp(h->text, rec + h->start, h->end - h->start) != 0)
        col->bad_text++;
    return 0;
}

/* Feeds every record in random pieces (sm_runner_feed or its buffer), or
   all of them at once through the many-records path. */
static int feed_all(const ecase *c, sm_runner *runner, int at_once) {
    int rc = SM_OK;
    if (at_once) {
        size_t offs[MAX_RECORDS], lens[MAX_RECORDS], total = 0;
        for (size_t r = 0; r < c->nrecords; r++) total += c->record_len[r] + 3;
        void *dst;
        size_t avail, max_records;
        uint64_t first;
        rc = sm_runner_records_buffer(runner, total, &dst, &avail, &max_records, &first);
        if (rc == SM_OK && avail >= total && max_records >= c->nrecords) {
            size_t at = 0;
            for (size_t r = 0; r < c->nrecords; r++) {
                at += 3; /* bytes between records are never read */
                memset((char *)dst + at - 3, 'A', 3);
                memcpy((char *)dst + at, c->records[r], c->record_len[r]);
                offs[r] = at;
                lens[r] = c->record_len[r];
                at += c->record_len[r];
            }
            rc = sm_runner_records_commit(runner, c->nrecords, offs, lens);
            return rc == SM_OK ? sm_runner_flush(runner) : rc;
        }
        if (rc != SM_OK) return rc;
    }
    return tu_feed_records(runner, c->records, c->record_len, c->nrecords, &rng, 40);
}

static const char *describe(const ecase *c, const char *engine, char *buf, size_t size) {
    snprintf(buf, size, "%s %s k=%u%s strands=%d flags=%u npats=%zu N=%u limits %u/%u%s engine %s",
             c->opts.alphabet == SM_ALPHABET_DNA ? "dna" : "text",
             c->opts.match == SM_MATCH_EXACT ? "exact" : c->opts.match == SM_MATCH_EDITS ? "edits" : "mismatches",
             c->opts.max_errors, c->opts.report == SM_REPORT_ENDS ? " ends" : "", (int)c->opts.strands,
             c->opts.flags, c->npats, c->min_overlap, c->per_pattern, c->per_record, c->fewest ? " fewest" : "",
             engine);
    return buf;
}

/* The engines that take the case's kind of matching, and auto. */
static size_t engines_for(const ecase *c, sm_engine *out) {
    size_t n = 0;
    out[n++] = SM_ENGINE_AUTO;
    sm_match kind = c->opts.match == SM_MATCH_EXACT || c->opts.max_errors == 0 ? SM_MATCH_EXACT : c->opts.match;
    for (size_t i = 0; i < sm_engine_count() && n < 16; i++)
        if (sm_engine_matches(sm_engine_at(i)) & (1u << kind)) out[n++] = sm_engine_at(i);
    return n;
}

static void check_case(const ecase *c) {
    tu_hits want;
    tu_hits_init(&want);
    expected_hits(c, &want);
    uint64_t want_counts[MAX_PATTERNS] = {0};
    oracle_count(&want, want_counts);
    sm_engine engines[16];
    size_t nengines = engines_for(c, engines);
    /* one engine per round beside auto keeps the test cheap; every engine over the rounds */
    sm_engine engine = engines[tu_rng_below(&rng, (uint32_t)nengines)];
    sm_compile_options o = c->opts;
    o.engine = engine;
    char what[300];
    describe(c, sm_engine_name(engine) ? sm_engine_name(engine) : "auto", what, sizeof what);
    sm_db *db = NULL;
    sm_error err;
    int crc = sm_compile(c->pats, c->npats, &o, &db, &err);
    if (crc != SM_OK) {
        /* a forced engine may refuse what it cannot hold (text IUPAC, expansions) */
        tu_check(engine != SM_ENGINE_AUTO, "%s: compile: %s", what, err.message);
        tu_hits_free(&want);
        return;
    }
    static const size_t chunks[] = {1, 5, 23, 0};
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        size_t ci = tu_rng_below(&rng, 4);
        for (int mode = 0; mode <= 2; mode++) {
            int at_once = tu_rng_chance(&rng, 30);
            char how[400];
            snprintf(how, sizeof how, "%s, %u threads, chunk %zu, %s%s", what, threads, chunks[ci],
                     mode == 1 ? "counts" : mode == 2 ? "summaries" : "hits", at_once ? ", records at once" : "");
            collector col;
            memset(&col, 0, sizeof col);
            tu_hits_init(&col.hits);
            col.c = c;
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            ro.threads = threads;
            ro.chunk_size = chunks[ci];
            ro.count_only = mode == 1;
            ro.min_overlap = c->min_overlap;
            ro.max_hits_per_pattern = c->per_pattern;
            ro.max_hits_per_record = c->per_record;
            ro.fewest_errors = c->fewest;
            if (c->use_sides) ro.min_overlap_sides = c->sides;
            ro.on_hit = collect;
            ro.ctx = &col;
            sc_summaries sums;
            sc_init(&sums);
            if (mode == 2) {
                ro.on_hit = NULL;
                ro.on_record_summary = sc_collect;
                ro.ctx = &sums;
            }
            sm_variant tight;
            memset(&tight, 0, sizeof tight);
            tight.item_hits = 1 + tu_rng_below(&rng, 6);
            const sm_variant *rv = tu_rng_chance(&rng, 30) ? &tight : NULL;
            sm_runner *runner = NULL;
            if (!tu_check(sm_runner_create_variant(db, &ro, rv, &runner, &err) == SM_OK, "%s: create: %s", how,
                          err.message)) {
                sc_free(&sums);
                tu_hits_free(&col.hits);
                continue;
            }
            int rc = feed_all(c, runner, at_once);
            tu_check(rc == SM_OK, "%s: status %d", how, rc);
            char why[200];
            if (mode == 2)
                tu_check(sc_check(&sums, &want, c->nrecords, (uint32_t)c->npats, why, sizeof why), "%s: %s", how, why);
            else if (mode == 0) {
                tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
                tu_check(col.bad_text == 0, "%s: %u hits with the wrong text", how, col.bad_text);
            }
            tu_check(memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof(uint64_t)) == 0 &&
                         sm_runner_total(runner) == want.n,
                     "%s: counts differ (total %llu, want %zu)", how, (unsigned long long)sm_runner_total(runner),
                     want.n);
            sm_runner_free(runner);
            tu_hits_free(&col.hits);
            sc_free(&sums);
        }
    }
    tu_hits_free(&want);
    sm_db_free(db);
}

static void random_case(ecase *c, unsigned round) {
    memset(c, 0, sizeof *c);
    sm_compile_options_init(&c->opts);
    int dna = round % 4 != 3;
    c->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    /* rounds of exact, mismatches, exact, mismatches, edits (k 1 or 2) */
    int mism = round % 5 == 1 || round % 5 == 3, edits = round % 5 == 4;
    c->opts.match = edits ? SM_MATCH_EDITS : mism ? SM_MATCH_MISMATCHES : SM_MATCH_EXACT;
    c->opts.max_errors = edits ? 1 + tu_rng_below(&rng, 2) : mism ? tu_rng_below(&rng, 3) : 0;
    if (edits && tu_rng_chance(&rng, 40)) c->opts.report = SM_REPORT_ENDS;
    if (dna) {
        c->opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        if (tu_rng_chance(&rng, 15)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
    } else if (tu_rng_chance(&rng, 30)) {
        c->opts.flags |= SM_FLAG_IGNORE_CASE;
    }
    uint32_t k = c->opts.max_errors;
    /* limits in a third of the rounds; partial matches in nearly all */
    c->min_overlap = tu_rng_chance(&rng, 90) ? k + 1 + tu_rng_below(&rng, 4) : 0;
    if (tu_rng_chance(&rng, 33)) {
        c->per_pattern = tu_rng_chance(&rng, 50) ? 1 + tu_rng_below(&rng, 3) : 0;
        c->per_record = tu_rng_chance(&rng, 50) ? 1 + tu_rng_below(&rng, 4) : 0;
        c->fewest = tu_rng_chance(&rng, 50);
    }
    c->npats = 1 + tu_rng_below(&rng, MAX_PATTERNS);
    if (!edits && tu_rng_chance(&rng, 30)) {
        c->use_sides = 1;
        for (size_t p = 0; p < MAX_PATTERNS; p++) c->sides[p] = (uint8_t)tu_rng_below(&rng, 4);
    }
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = 1 + tu_rng_below(&rng, tu_rng_chance(&rng, 20) ? 40 : 14);
        if (k >= m) m = k + 1;
        if (dna) tu_random_iupac(&rng, c->pat_buf[p], m, 8, 20);
        else tu_random_from(&rng, c->pat_buf[p], m, "abAB");
        c->pats[p].seq = c->pat_buf[p];
        c->pats[p].len = m;
    }
    c->nrecords = 1 + tu_rng_below(&rng, MAX_RECORDS);
    for (size_t r = 0; r < c->nrecords; r++) {
        size_t n = tu_rng_chance(&rng, 25) ? tu_rng_below(&rng, 12) : tu_rng_below(&rng, 200);
        c->records[r] = malloc(n + 1);
        if (dna) tu_random_iupac(&rng, c->records[r], n, 4, 20);
        else tu_random_from(&rng, c->records[r], n, "abAB");
        /* a pattern's suffix at the start and a prefix at the end, on
           either strand (for '-' the reverse complement's) */
        for (int t = 0; t < 2 && n > 0; t++) {
            size_t p = tu_rng_below(&rng, (uint32_t)c->npats), m = c->pats[p].len;
            char key[48];
            key_of(c, p, dna && tu_rng_chance(&rng, 50), key);
            for (size_t i = 0; i < m; i++)
                if (dna && (oracle_nt_set((unsigned char)key[i]) & (oracle_nt_set((unsigned char)key[i]) - 1)))
                    key[i] = "ACGT"[__builtin_ctz(oracle_nt_set((unsigned char)key[i]))];
            if (c->opts.match == SM_MATCH_EDITS && m > 1 && tu_rng_chance(&rng, 50)) {
                /* one symbol of it deleted (an edit the partial alignment must bridge) */
                size_t at = tu_rng_below(&rng, (uint32_t)m);
                memmove(key + at, key + at + 1, m - at - 1);
                m--;
            }
            size_t cut = 1 + tu_rng_below(&rng, (uint32_t)m);
            if (cut > n) cut = n;
            if (t == 0) memcpy(c->records[r], key + m - cut, cut);
            else memcpy(c->records[r] + n - cut, key, cut);
        }
        c->record_len[r] = n;
    }
}

static void free_case(ecase *c) {
    for (size_t r = 0; r < c->nrecords; r++) free(c->records[r]);
}

/* A read ending in the TruSeq adapter's first 5 bases, and one starting with
   its reverse complement's last 5: the same partial hit on both strands, with
   the coordinates written out. */
static void test_example(void) {
    static const char rec[] = "TTTTTTTTTTAGATC";          /* AGATC = adapter[0, 5) at [10, 15) */
    static const char rec2[] = "GATCTTTTTTTTTTT";         /* rc(adapter) = GCTCTTCCGATCT: GATCT at [0, 5) */
    sm_pattern p[1] = {{"adapter", "AGATCGGAAGAGC", 13}};
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(p, 1, &o, &db, &err) == SM_OK, "example: compile: %s", err.message)) return;
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    tu_hits got;
    tu_hits_init(&got);
    ro.threads = 1;
    ro.min_overlap = 3;
    ro.on_hit = tu_hits_collect;
    ro.ctx = &got;
    sm_runner *runner = NULL;
    if (tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "example: create: %s", err.message)) {
        sm_runner_begin_record(runner);
        sm_runner_feed(runner, rec, 15);
        sm_runner_end_record(runner);
        sm_runner_begin_record(runner);
        sm_runner_feed(runner, rec2, 15);
        sm_runner_end_record(runner);
        sm_runner_flush(runner);
        tu_hits want;
        tu_hits_init(&want);
        tu_hits_add(&want, 0, 10, 15, 0, '+', 0);
        tu_hits_add(&want, 1, 0, 5, 0, '-', 0);
        tu_check(tu_hits_equal(&want, &got, "example"), "example: the adapter's partial hits at both ends");
        tu_hits_free(&want);
        sm_runner_free(runner);
    }
    tu_hits_free(&got);
    /* refusals: one line each, never ignored */
    struct {
        int circular, anchor;
        uint32_t n;
        const char *word;
    } bad[] = {{1, 0, 3, "--circular"}, {0, SM_ANCHOR_START, 3, "--anchor"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sm_runner_options_init(&ro);
        ro.count_only = 1;
        ro.circular = bad[i].circular;
        ro.anchor = (sm_anchor)bad[i].anchor;
        ro.min_overlap = bad[i].n;
        runner = NULL;
        tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_ERR_INVALID && runner == NULL &&
                     strstr(err.message, bad[i].word) && !strchr(err.message, '\n'),
                 "min_overlap with %s not refused", bad[i].word);
    }
    sm_db_free(db);
    /* N at or below k, and k edits */
    o.match = SM_MATCH_MISMATCHES;
    o.max_errors = 2;
    if (tu_check(sm_compile(p, 1, &o, &db, &err) == SM_OK, "example -m 2: compile: %s", err.message)) {
        sm_runner_options_init(&ro);
        ro.count_only = 1;
        ro.min_overlap = 2;
        runner = NULL;
        tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_ERR_INVALID && strstr(err.message, "every record end"),
                 "min_overlap 2 with -m 2 not refused");
        sm_db_free(db);
    }
    o.match = SM_MATCH_EDITS;
    if (tu_check(sm_compile(p, 1, &o, &db, &err) == SM_OK, "example -k 2: compile: %s", err.message)) {
        sm_runner_options_init(&ro);
        ro.count_only = 1;
        ro.min_overlap = 2;
        runner = NULL;
        tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_ERR_INVALID && strstr(err.message, "every record end"),
                 "min_overlap 2 with -k 2 not refused");
        sm_db_free(db);
    }
    /* the numbered settings */
    sm_runner_params *params = sm_runner_params_new();
    int64_t v = 0;
    tu_check(params && sm_runner_params_set(params, SM_RPARAM_MIN_OVERLAP, 3) == SM_OK &&
                 sm_runner_params_get(params, SM_RPARAM_MIN_OVERLAP, &v) == SM_OK && v == 3 &&
                 sm_runner_params_set(params, SM_RPARAM_FEWEST_ERRORS, 2) == SM_ERR_INVALID &&
                 sm_runner_params_set(params, SM_RPARAM_MAX_HITS_PER_PATTERN, 7) == SM_OK &&
                 sm_runner_params_get(params, SM_RPARAM_MAX_HITS_PER_PATTERN, &v) == SM_OK && v == 7 &&
                 sm_runner_params_set(params, SM_RPARAM_MAX_HITS_PER_RECORD, 9) == SM_OK &&
                 sm_runner_params_get(params, SM_RPARAM_MAX_HITS_PER_RECORD, &v) == SM_OK && v == 9,
             "runner params: min_overlap and limits");
    sm_runner_params_free(params);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0xE2D5ULL));
    test_example();
    unsigned rounds = tu_scaled(300);
    for (unsigned round = 0; round < rounds && tu_failures() < 10; round++) {
        ecase c;
        random_case(&c, round);
        check_case(&c);
        free_case(&c);
    }
    return tu_summary("test_ends");
}
