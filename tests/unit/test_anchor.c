/* Anchored runners (sm_runner_options.anchor) against the definitions in
 * include/seqmatch.h, computed here from the oracles: exact hits from
 * oracle_find kept when they start at 0 or end at n; k mismatches from the
 * first or last window; k edits from A(j) = edit(key, record[0, j)) and
 * E(s) = edit(key, record[s, n)) one by one. Random DNA (IUPAC, both
 * strands, --text-iupac) and text (ignore case), every report mode, one
 * and three threads, tiny and default chunks, records fed in pieces and in
 * place (sm_runner_feed_buffer), with counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx_oracle.h"
#include "oracle.h"
#include "testutil.h"

static tu_rng rng;

typedef struct {
    sm_compile_options opts;
    sm_pattern pats[6];
    char pat_buf[6][48];
    size_t npats;
    char *records[12];
    size_t record_len[12];
    size_t nrecords;
} acase;

static void key_of(const acase *c, size_t p, int reverse, char *key) {
    const sm_pattern *pat = &c->pats[p];
    if (c->opts.alphabet == SM_ALPHABET_DNA && reverse) {
        oracle_reverse_complement(pat->seq, pat->len, key);
        return;
    }
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
}

static int strand_searched(const acase *c, int reverse) {
    if (c->opts.alphabet == SM_ALPHABET_TEXT) return !reverse;
    return reverse ? c->opts.strands != SM_STRAND_FORWARD : c->opts.strands != SM_STRAND_REVERSE;
}

static void expected_hits(const acase *c, sm_anchor anchor, size_t r, tu_hits *out) {
    const char *text = c->records[r];
    size_t n = c->record_len[r];
    sm_alphabet a = c->opts.alphabet;
    unsigned flags = c->opts.flags;
    uint32_t k = c->opts.max_errors;
    if (c->opts.match == SM_MATCH_EXACT) {
        tu_hits all;
        tu_hits_init(&all);
        oracle_find(c->pats, c->npats, &c->opts, text, n, r, &all);
        for (size_t i = 0; i < all.n; i++) {
            const tu_hit *h = &all.items[i];
            if (anchor == SM_ANCHOR_START ? h->start == 0 : h->end == n)
                tu_hits_add(out, r, h->start, h->end, h->pattern, h->strand, 0);
        }
        tu_hits_free(&all);
        return;
    }
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = c->pats[p].len;
        for (int rev = 0; rev <= 1; rev++) {
            if (!strand_searched(c, rev)) continue;
            char key[48];
            key_of(c, p, rev, key);
            char strand = rev ? '-' : '+';
            if (c->opts.match == SM_MATCH_MISMATCHES) {
                if (m > n) continue;
                size_t at = anchor == SM_ANCHOR_START ? 0 : n - m;
                uint32_t mm = aoracle_mismatches(key, m, text + at, a, flags);
                if (mm <= k) tu_hits_add(out, r, at, at + m, (uint32_t)p, strand, mm);
                continue;
            }
            if (anchor == SM_ANCHOR_END) {
                if (n == 0) continue;
                uint32_t best = UINT32_MAX;
                size_t best_s = 0;
                for (size_t s = 0; s <= n; s++) {
                    uint32_t e = aoracle_edit(key, m, text + s, n - s, a, flags);
                    if (e <= best) best = e, best_s = s; /* the largest s of the least */
                }
                if (best <= k) tu_hits_add(out, r, best_s, n, (uint32_t)p, strand, best);
                continue;
            }
            /* the start: A(j) for j >= 1, every end or the best of each run */
            size_t j = 1;
            while (j <= n) {
                uint32_t d = aoracle_edit(key, m, text, j, a, flags);
                if (d > k) {
                    j++;
                    continue;
                }
                if (c->opts.report == SM_REPORT_ENDS) {
                    tu_hits_add(out, r, 0, j, (uint32_t)p, strand, d);
                    j++;
                    continue;
                }
                size_t best_j = j;
                uint32_t best = d;
                for (j++; j <= n; j++) {
                    uint32_t e = aoracle_edit(key, m, text, j, a, flags);
                    if (e > k) break;
                    if (e < best) best = e, best_j = j;
                }
                tu_hits_add(out, r, 0, best_j, (uint32_t)p, strand, best);
            }
        }
    }
}

/* Mutates a copy of src (len bytes) with up to e substitutions, insertions
   or deletions into dst; returns the new length. */
static size_t mutate(const char *src, size_t len, unsigned e, const char *alphabet, char *dst) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (e && tu_rng_chance(&rng, 15)) {
            e--;
            unsigned kind = tu_rng_below(&rng, 3);
            if (kind == 0) { dst[n++] = alphabet[tu_rng_below(&rng, (uint32_t)strlen(alphabet))]; continue; }
            if (kind == 1) continue;
            dst[n++] = alphabet[tu_rng_below(&rng, (uint32_t)strlen(alphabet))];
        }
        dst[n++] = src[i];
    }
    return n;
}

static void random_case(acase *c) {
    memset(c, 0, sizeof *c);
    sm_compile_options_init(&c->opts);
    int dna = tu_rng_chance(&rng, 70);
    c->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    unsigned kind = tu_rng_below(&rng, 3);
    c->opts.match = kind == 0 ? SM_MATCH_EXACT : kind == 1 ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
    c->opts.report = tu_rng_chance(&rng, 50) ? SM_REPORT_ENDS : SM_REPORT_BEST;
    if (dna) {
        c->opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        if (tu_rng_chance(&rng, 20)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
    } else if (tu_rng_chance(&rng, 30)) {
        c->opts.flags |= SM_FLAG_IGNORE_CASE;
    }
    const char *alphabet = dna ? "ACGTacgt" : "abAB";
    c->npats = 1 + tu_rng_below(&rng, 5);
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = 2 + tu_rng_below(&rng, 20);
        if (dna) tu_random_iupac(&rng, c->pat_buf[p], m, 10, 20);
        else tu_random_from(&rng, c->pat_buf[p], m, "abAB");
        c->pats[p].name = NULL;
        c->pats[p].seq = c->pat_buf[p];
        c->pats[p].len = m;
    }
    c->opts.max_errors = c->opts.match == SM_MATCH_EXACT ? 0 : 1 + tu_rng_below(&rng, 3);
    c->nrecords = 1 + tu_rng_below(&rng, 12);
    for (size_t r = 0; r < c->nrecords; r++) {
        size_t n = tu_rng_below(&rng, 120);
        char *rec = malloc(n + 2 * 48 + 1);
        if (dna) tu_random_iupac(&rng, rec, n, 3, 20);
        else tu_random_from(&rng, rec, n, "abAB");
        /* a pattern (mutated) at the start or the end, most of the time */
        if (tu_rng_chance(&rng, 75)) {
            size_t p = tu_rng_below(&rng, (uint32_t)c->npats);
            char concrete[48], planted[96];
            for (size_t i = 0; i < c->pats[p].len; i++) {
                char ch = c->pats[p].seq[i];
                concrete[i] = dna && !strchr("ACGTacgt", ch) ? "ACGT"[tu_rng_below(&rng, 4)] : ch;
            }
            size_t pl = mutate(concrete, c->pats[p].len, tu_rng_below(&rng, 3), alphabet, planted);
            if (dna && tu_rng_chance(&rng, 30)) {
                char rc[96];
                oracle_reverse_complement(planted, pl, rc);
                memcpy(planted, rc, pl);
            }
            if (pl > n) {
                char *grown = realloc(rec, pl + 2 * 48 + 1);
                rec = grown;
                if (dna) tu_random_iupac(&rng, rec + n, pl - n, 3, 20);
                else tu_random_from(&rng, rec + n, pl - n, "abAB");
                n = pl;
            }
            if (tu_rng_chance(&rng, 50)) memcpy(rec, planted, pl);
            else memcpy(rec + n - pl, planted, pl);
        }
        c->records[r] = rec;
        c->record_len[r] = n;
    }
}

static void free_case(acase *c) {
    for (size_t r = 0; r < c->nrecords; r++) free(c->records[r]);
}

typedef struct {
    tu_hits hits;
    uint64_t done;  /* record-done calls, which come in order */
    int order_ok;
} collector;

static int collect(const sm_hit *h, void *ctx) {
    collector *col = ctx;
    if (h->record != col->done) col->order_ok = 0;
    tu_hits_add(&col->hits, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    return 0;
}

static void record_done(uint64_t record, void *ctx) {
    collector *col = ctx;
    if (record != col->done) col->order_ok = 0;
    col->done++;
}

static void check_case(const acase *c) {
    char what[160];
    snprintf(what, sizeof what, "%s %s k=%u %s strands=%d flags=%u npats=%zu",
             c->opts.alphabet == SM_ALPHABET_DNA ? "dna" : "text",
             c->opts.match == SM_MATCH_EDITS ? "edits" : c->opts.match == SM_MATCH_EXACT ? "exact" : "mismatches",
             c->opts.max_errors, c->opts.report == SM_REPORT_ENDS ? "ends" : "best", (int)c->opts.strands,
             c->opts.flags, c->npats);
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(c->pats, c->npats, &c->opts, &db, &err) == SM_OK, "%s: compile: %s", what, err.message))
        return;
    for (sm_anchor anchor = SM_ANCHOR_START; anchor <= SM_ANCHOR_END; anchor++) {
        tu_hits want;
        tu_hits_init(&want);
        for (size_t r = 0; r < c->nrecords; r++) expected_hits(c, anchor, r, &want);
        tu_hits_sort(&want);
        uint64_t want_counts[6] = {0};
        oracle_count(&want, want_counts);
        for (int round = 0; round < 3; round++) {
            unsigned threads = round == 2 ? 3 : 1;
            size_t chunk = round == 0 ? 0 : 1 + tu_rng_below(&rng, 30);
            int count_only = tu_rng_chance(&rng, 25);
            int in_place = tu_rng_chance(&rng, 50);
            collector col;
            memset(&col, 0, sizeof col);
            tu_hits_init(&col.hits);
            col.order_ok = 1;
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            ro.threads = threads;
            ro.chunk_size = chunk;
            ro.count_only = count_only;
            ro.on_hit = collect;
            ro.on_record_done = record_done;
            ro.ctx = &col;
            ro.anchor = anchor;
            sm_runner *runner = NULL;
            char how[260];
            snprintf(how, sizeof how, "%s anchor %s t=%u chunk=%zu%s%s", what,
                     anchor == SM_ANCHOR_START ? "start" : "end", threads, chunk, count_only ? " count" : "",
                     in_place ? " in place" : "");
            if (!tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "%s: create: %s", how, err.message))
                continue;
            for (size_t r = 0; r < c->nrecords; r++) {
                sm_runner_begin_record(runner);
                size_t at = 0, n = c->record_len[r];
                while (at < n) {
                    size_t piece = 1 + tu_rng_below(&rng, 50);
                    if (piece > n - at) piece = n - at;
                    if (in_place) {
                        void *dst;
                        size_t room;
                        sm_runner_feed_buffer(runner, piece, &dst, &room);
                        memcpy(dst, c->records[r] + at, room);
                        sm_runner_feed_commit(runner, room);
                        piece = room;
                    } else {
                        sm_runner_feed(runner, c->records[r] + at, piece);
                    }
                    at += piece;
                }
                sm_runner_end_record(runner);
            }
            tu_check(sm_runner_flush(runner) == SM_OK, "%s: flush", how);
            if (count_only) {
                tu_check(col.hits.n == 0, "%s: hits delivered while counting", how);
            } else {
                tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
                tu_check(col.order_ok, "%s: a hit after its record was done", how);
            }
            tu_check(col.done == c->nrecords, "%s: %llu records done, want %zu", how, (unsigned long long)col.done,
                     c->nrecords);
            tu_check(sm_runner_total(runner) == want.n &&
                         memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof(uint64_t)) == 0,
                     "%s: total %llu, want %zu", how, (unsigned long long)sm_runner_total(runner), want.n);
            sm_runner_free(runner);
            tu_hits_free(&col.hits);
        }
        tu_hits_free(&want);
    }
    sm_db_free(db);
}

/* A long record: only its window is scanned, and its hits are right. */
static void test_long_record(void) {
    sm_pattern p = {"bc", "ACGTTGCA", 8};
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.strands = SM_STRAND_FORWARD;
    o.match = SM_MATCH_EDITS;
    o.max_errors = 1;
    sm_db *db;
    sm_compile(&p, 1, &o, &db, NULL);
    size_t n = (size_t)5 << 20;
    char *rec = malloc(n);
    for (size_t i = 0; i < n; i++) rec[i] = "ACGTTGCA"[i % 8];
    memcpy(rec, "ACTTGCA", 7);          /* one deletion at the start: [0, 7) */
    memcpy(rec + n - 8, "ACGTTGCA", 8); /* exact at the end */
    for (sm_anchor anchor = SM_ANCHOR_START; anchor <= SM_ANCHOR_END; anchor++) {
        collector col;
        memset(&col, 0, sizeof col);
        tu_hits_init(&col.hits);
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = 2;
        ro.on_hit = collect;
        ro.ctx = &col;
        ro.anchor = anchor;
        sm_runner *runner;
        sm_runner_create(db, &ro, &runner, NULL);
        sm_runner_begin_record(runner);
        sm_runner_feed(runner, rec, n);
        sm_runner_end_record(runner);
        sm_runner_flush(runner);
        if (anchor == SM_ANCHOR_START)
            tu_check(col.hits.n == 1 && col.hits.items[0].start == 0 && col.hits.items[0].end == 7 &&
                         col.hits.items[0].errors == 1,
                     "long record, start: one hit [0, 7) with 1 error (%zu hits)", col.hits.n);
        else
            tu_check(col.hits.n == 1 && col.hits.items[0].start == n - 8 && col.hits.items[0].end == n &&
                         col.hits.items[0].errors == 0,
                     "long record, end: one exact hit at the end (%zu hits)", col.hits.n);
        sm_runner_free(runner);
        tu_hits_free(&col.hits);
    }
    free(rec);
    sm_db_free(db);
}

/* A PAM with k edits is refused; with k mismatches it is filtered as usual. */
static void test_refusals(void) {
    sm_pattern p = {"g", "ACGTACGTAC", 10};
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.match = SM_MATCH_EDITS;
    o.max_errors = 1;
    o.pam = "NGG";
    sm_db *db;
    sm_compile(&p, 1, &o, &db, NULL);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.count_only = 1;
    ro.anchor = SM_ANCHOR_START;
    sm_runner *runner = NULL;
    sm_error err;
    tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_ERR_INVALID && !runner && strstr(err.message, "PAM"),
             "anchor with a PAM and edits refused");
    ro.anchor = (sm_anchor)7;
    sm_db_free(db);
    o.pam = NULL;
    sm_compile(&p, 1, &o, &db, NULL);
    tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_ERR_INVALID && !runner, "unknown anchor refused");
    sm_db_free(db);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(424242));
    unsigned rounds = tu_scaled(400);
    for (unsigned i = 0; i < rounds && tu_failures() < 20; i++) {
        acase c;
        random_case(&c);
        check_case(&c);
        free_case(&c);
    }
    test_long_record();
    test_refusals();
    return tu_summary("test_anchor");
}
