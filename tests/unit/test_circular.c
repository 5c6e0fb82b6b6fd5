/* Circular records (sm_runner_options.circular) against the oracles: a
 * record S of n bytes is searched as the linear text of its first n + w
 * bytes read round and round (S S S ..., any number of turns when n is
 * shorter than w), w = longest - 1 + k (k for edits only), and its hits
 * are those of that text that start before n. Exact, k mismatches and k edits (best
 * and ends), both strands, IUPAC codes, a PAM, text; records shorter than
 * the patterns, empty ones, and patterns planted across the end; the
 * runner on 1 and 3 threads with tiny chunks, bytes fed in pieces and
 * straight into its buffer, hits and counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx_oracle.h"
#include "engines/engine.h"
#include "runner/runner_variant.h"
#include "oracle.h"
#include "summary_check.h"
#include "testutil.h"

static tu_rng rng;

#define MAX_PATTERNS 6
#define MAX_RECORDS 4

typedef struct {
    sm_compile_options opts;
    sm_pattern pats[MAX_PATTERNS];
    char pat_buf[MAX_PATTERNS][80];
    size_t npats;
    char pam[4];
    char *records[MAX_RECORDS];
    size_t record_len[MAX_RECORDS];
    size_t nrecords;
} ccase;

/* The key of pattern p on a strand, as the engines compare it. */
static void key_of(const ccase *c, size_t p, int reverse, char *key) {
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

/* Every hit of the linear text[0, n) by the definitions, record r. */
static void linear_hits(const ccase *c, const char *text, size_t n, size_t r, tu_hits *out) {
    sm_match match = c->opts.max_errors == 0 ? SM_MATCH_EXACT : c->opts.match;
    if (c->opts.pam) {
        for (size_t p = 0; p < c->npats; p++)
            for (int rev = 0; rev <= 1; rev++) {
                if ((rev && c->opts.strands == SM_STRAND_FORWARD) || (!rev && c->opts.strands == SM_STRAND_REVERSE))
                    continue;
                aoracle_pam_hits(c->pats[p].seq, c->pats[p].len, c->opts.pam, strlen(c->opts.pam), rev, match,
                                 c->opts.max_errors, c->opts.report, text, n, c->opts.alphabet, c->opts.flags, r,
                                 (uint32_t)p, out);
            }
        return;
    }
    if (match == SM_MATCH_EXACT) {
        oracle_find(c->pats, c->npats, &c->opts, text, n, r, out);
        return;
    }
    uint32_t k = c->opts.max_errors;
    sm_alphabet a = c->opts.alphabet;
    unsigned flags = c->opts.flags;
    uint32_t *D = malloc((n + 1) * sizeof *D);
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = c->pats[p].len;
        for (int rev = 0; rev <= 1; rev++) {
            if (a == SM_ALPHABET_TEXT && rev) continue;
            if (a == SM_ALPHABET_DNA &&
                ((rev && c->opts.strands == SM_STRAND_FORWARD) || (!rev && c->opts.strands == SM_STRAND_REVERSE)))
                continue;
            char key[80];
            key_of(c, p, rev, key);
            char strand = rev ? '-' : '+';
            if (match == SM_MATCH_MISMATCHES) {
                for (size_t i = 0; i + m <= n; i++) {
                    uint32_t mm = aoracle_mismatches(key, m, text + i, a, flags);
                    if (mm <= k) tu_hits_add(out, r, i, i + m, (uint32_t)p, strand, mm);
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
                size_t best = j;
                if (c->opts.report == SM_REPORT_ENDS) {
                    j++;
                } else {
                    while (j <= n && D[j] <= k) {
                        if (D[j] < D[best]) best = j;
                        j++;
                    }
                }
                uint64_t s = aoracle_edit_start(key, m, text, best, D[best], 0, a, flags);
                tu_hits_add(out, r, s, best, (uint32_t)p, strand, D[best]);
            }
        }
    }
    free(D);
}

/* The longest site (pattern + PAM) and the circular reach of the case. */
static size_t reach_of(const ccase *c) {
    size_t longest = 0;
    for (size_t p = 0; p < c->npats; p++)
        if (c->pats[p].len > longest) longest = c->pats[p].len;
    if (c->opts.pam) longest += strlen(c->opts.pam);
    return longest - 1 + (c->opts.match == SM_MATCH_EDITS ? c->opts.max_errors : 0);
}

/* The oracle's circular hits of record r: the first n + w bytes of S S S
   ..., starts before n. */
static void circular_hits(const ccase *c, size_t r, tu_hits *out) {
    size_t n = c->record_len[r];
    if (n == 0) return;
    size_t w = reach_of(c);
    char *x = malloc(n + w + 1);
    for (size_t i = 0; i < n + w; i++) x[i] = c->records[r][i % n];
    tu_hits all;
    tu_hits_init(&all);
    linear_hits(c, x, n + w, r, &all);
    for (size_t i = 0; i < all.n; i++) {
        const tu_hit *h = &all.items[i];
        if (h->start < n) tu_hits_add(out, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    }
    tu_hits_free(&all);
    free(x);
}

typedef struct {
    tu_hits hits;
    const ccase *c;
    unsigned bad_text;
} collector;

/* Collects a hit and checks its text: the record read round its end. */
static int collect(const sm_hit *h, void *ctx) {
    collector *col = ctx;
    tu_hits_add(&col->hits, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    const char *rec = col->c->records[h->record];
    size_t n = col->c->record_len[h->record];
    for (uint64_t i = h->start; i < h->end; i++)
        if (!h->text || h->text[i - h->start] != rec[i % n]) {
            col->bad_text++;
            break;
        }
    return 0;
}

/* Feeds every record, in random pieces, through sm_runner_feed or straight
   into the runner's buffer. */
static int feed_all(const ccase *c, sm_runner *runner) {
    return tu_feed_records(runner, c->records, c->record_len, c->nrecords, &rng, 50);
}

static const char *describe(const ccase *c, char *buf, size_t size) {
    snprintf(buf, size, "%s %s k=%u %s strands=%d flags=%u npats=%zu%s%s",
             c->opts.alphabet == SM_ALPHABET_DNA ? "dna" : "text",
             c->opts.match == SM_MATCH_EDITS ? "edits" : c->opts.match == SM_MATCH_EXACT ? "exact" : "mismatches",
             c->opts.max_errors, c->opts.report == SM_REPORT_ENDS ? "ends" : "best", (int)c->opts.strands,
             c->opts.flags, c->npats, c->opts.pam ? " pam=" : "", c->opts.pam ? c->opts.pam : "");
    return buf;
}

static void check_case(const ccase *c) {
    char what[200];
    describe(c, what, sizeof what);
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(c->pats, c->npats, &c->opts, &db, &err) == SM_OK, "%s: compile: %s", what, err.message))
        return;
    tu_hits want;
    tu_hits_init(&want);
    for (size_t r = 0; r < c->nrecords; r++) circular_hits(c, r, &want);
    tu_hits_sort(&want);
    uint64_t want_counts[MAX_PATTERNS] = {0};
    oracle_count(&want, want_counts);

    static const size_t chunks[] = {1, 3, 17, 0};
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++) {
            /* hits, counts, record summaries (summed by the threads: circular
               starts, runs cut at segment and piece borders) */
            for (int mode = 0; mode <= 2; mode++) {
                int count_only = mode == 1;
                char how[300];
                snprintf(how, sizeof how, "%s, %u threads, chunk %zu, %s", what, threads, chunks[ci],
                         mode == 1 ? "counts" : mode == 2 ? "summaries" : "hits");
                collector col;
                memset(&col, 0, sizeof col);
                tu_hits_init(&col.hits);
                col.c = c;
                sm_runner_options ro;
                sm_runner_options_init(&ro);
                const sm_variant *rv = NULL; /* runner/runner_variant.h */
                ro.threads = threads;
                ro.chunk_size = chunks[ci];
                ro.count_only = count_only;
                ro.circular = 1;
                ro.on_hit = collect;
                ro.ctx = &col;
                sc_summaries sums;
                sc_init(&sums);
                if (mode == 2) {
                    ro.on_hit = NULL;
                    ro.on_record_summary = sc_collect;
                    ro.ctx = &sums;
                }
                /* now and then a bound of a few stored hits per work item:
                   dense segments, delivered in pieces */
                sm_variant tight;
                memset(&tight, 0, sizeof tight);
                tight.item_hits = 1 + tu_rng_below(&rng, 6);
                if (tu_rng_chance(&rng, 30)) rv = &tight;
                sm_runner *runner = NULL;
                if (tu_rng_chance(&rng, 30)) {
                    /* refused, never ignored */
                    ro.overlap_free = 1;
                    tu_check(sm_runner_create_variant(db, &ro, rv, &runner, &err) == SM_ERR_INVALID && runner == NULL &&
                                 strstr(err.message, "--circular"),
                             "%s: overlap_free with circular not refused", how);
                    ro.overlap_free = 0;
                }
                if (!tu_check(sm_runner_create_variant(db, &ro, rv, &runner, &err) == SM_OK, "%s: create: %s", how, err.message)) {
                    sc_free(&sums);
                    continue;
                }
                int rc = feed_all(c, runner);
                tu_check(rc == SM_OK, "%s: status %d", how, rc);
                char why[200];
                if (mode == 2)
                    tu_check(sc_check(&sums, &want, c->nrecords, (uint32_t)c->npats, why, sizeof why), "%s: %s", how,
                             why);
                else if (!count_only) {
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
    }
    tu_hits_free(&want);
    sm_db_free(db);
}

static void random_case(ccase *c, unsigned round) {
    memset(c, 0, sizeof *c);
    sm_compile_options_init(&c->opts);
    int dna = round % 4 != 3;
    c->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    unsigned kind = round % 3;
    c->opts.match = kind == 0 ? SM_MATCH_EXACT : kind == 1 ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
    c->opts.max_errors = kind == 0 ? 0 : 1 + tu_rng_below(&rng, 3);
    c->opts.report = tu_rng_chance(&rng, 50) ? SM_REPORT_ENDS : SM_REPORT_BEST;
    if (dna) {
        c->opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        if (tu_rng_chance(&rng, 15)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
        if (tu_rng_chance(&rng, 15)) {
            memcpy(c->pam, tu_rng_chance(&rng, 50) ? "NGG" : "TTN", 4);
            c->opts.pam = c->pam;
        }
    } else if (tu_rng_chance(&rng, 30)) {
        c->opts.flags |= SM_FLAG_IGNORE_CASE;
    }
    c->npats = 1 + tu_rng_below(&rng, MAX_PATTERNS);
    size_t max_len = tu_rng_chance(&rng, 20) ? 40 : 10;
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = 1 + tu_rng_below(&rng, (uint32_t)max_len);
        if (c->opts.max_errors >= m) m = c->opts.max_errors + 1;
        if (dna) tu_random_iupac(&rng, c->pat_buf[p], m, 10, 20);
        else tu_random_from(&rng, c->pat_buf[p], m, "abAB");
        c->pats[p].seq = c->pat_buf[p];
        c->pats[p].len = m;
    }
    c->nrecords = 1 + tu_rng_below(&rng, MAX_RECORDS);
    for (size_t r = 0; r < c->nrecords; r++) {
        size_t n = tu_rng_chance(&rng, 15) ? tu_rng_below(&rng, 4) : tu_rng_below(&rng, 300);
        c->records[r] = malloc(n + 90);
        if (dna) tu_random_iupac(&rng, c->records[r], n, 4, 20);
        else tu_random_from(&rng, c->records[r], n, "abAB");
        /* Patterns (with a PAM, G for its N) split over the record's end,
           and copies inside it. */
        for (int t = 0; t < 3 && n > 0; t++) {
            size_t p = tu_rng_below(&rng, (uint32_t)c->npats);
            char site[90];
            size_t m = c->pats[p].len;
            memcpy(site, c->pats[p].seq, m);
            if (c->opts.pam) {
                for (size_t i = 0; c->opts.pam[i]; i++) site[m++] = c->opts.pam[i] == 'N' ? 'G' : c->opts.pam[i];
            }
            if (m >= n) continue;
            if (t == 0) {
                size_t cut = 1 + tu_rng_below(&rng, (uint32_t)(m - 1 ? m - 1 : 1));
                if (cut >= m) cut = m - 1;
                memcpy(c->records[r] + n - cut, site, cut);
                memcpy(c->records[r], site + cut, m - cut);
            } else {
                memcpy(c->records[r] + tu_rng_below(&rng, (uint32_t)(n - m)), site, m);
            }
        }
        c->record_len[r] = n;
    }
}

static void free_case(ccase *c) {
    for (size_t r = 0; r < c->nrecords; r++) free(c->records[r]);
}

/* seqkit locate -c's example: a site over the end of a 16-base record, on
   both strands, with the coordinates written out. */
static void test_example(void) {
    static const char rec[] = "ACGGGGGGGGGTAAAA";
    sm_pattern p[2] = {{"fwd", "AAAAACG", 7}, {"rev", "CGTTTTT", 7}};
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(p, 2, &o, &db, &err) == SM_OK, "example: compile: %s", err.message)) return;
    for (int circular = 0; circular <= 1; circular++) {
        ccase c;
        memset(&c, 0, sizeof c);
        c.records[0] = (char *)rec;
        c.record_len[0] = 16;
        c.nrecords = 1;
        collector col;
        memset(&col, 0, sizeof col);
        tu_hits_init(&col.hits);
        col.c = &c;
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = 1;
        ro.circular = circular;
        ro.on_hit = collect;
        ro.ctx = &col;
        sm_runner *runner = NULL;
        if (sm_runner_create(db, &ro, &runner, &err) != SM_OK) continue;
        sm_runner_begin_record(runner);
        sm_runner_feed(runner, rec, 16);
        sm_runner_end_record(runner);
        sm_runner_flush(runner);
        tu_hits want;
        tu_hits_init(&want);
        if (circular) {
            /* AAAA + ACG: [12, 19) on '+' for AAAAACG, on '-' for CGTTTTT */
            tu_hits_add(&want, 0, 12, 19, 0, '+', 0);
            tu_hits_add(&want, 0, 12, 19, 1, '-', 0);
        }
        tu_check(tu_hits_equal(&want, &col.hits, circular ? "example circular" : "example linear"),
                 "example (circular %d)", circular);
        tu_check(col.bad_text == 0, "example: wrong hit text");
        tu_hits_free(&want);
        tu_hits_free(&col.hits);
        sm_runner_free(runner);
    }
    /* a circular record has no start or end to anchor at: refused, not ignored */
    for (int where = SM_ANCHOR_START; where <= SM_ANCHOR_END; where++) {
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.circular = 1;
        ro.anchor = (sm_anchor)where;
        ro.count_only = 1;
        sm_runner *runner = NULL;
        tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_ERR_INVALID && runner == NULL &&
                     strstr(err.message, "--anchor") != NULL,
                 "circular with anchor %d not refused", where);
    }
    sm_db_free(db);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0xC1C1EULL));
    test_example();
    unsigned rounds = tu_scaled(400);
    for (unsigned round = 0; round < rounds && tu_failures() < 10; round++) {
        ccase c;
        random_case(&c, round);
        check_case(&c);
        free_case(&c);
    }
    return tu_summary("test_circular");
}
