/* Differential test of the public API against the oracle: every way of
 * compiling (engines, build threads, expansion limits) and of scanning
 * (block, count, stream in pieces, the threaded runner with small and large
 * chunks, databases round-tripped through bytes and files) must give exactly
 * the oracle's hits, in the documented order. Random inputs, plus a real
 * genome excerpt when the examples are present. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/internal.h"
#include "engines/engine.h"
#include "runner/runner_variant.h"
#include "oracle.h"
#include "summary_check.h"
#include "seqmatch.h"
#include "testutil.h"

static tu_rng rng;

/* ------------------------------------------------------------------ cases */

typedef struct {
    sm_compile_options opts;
    size_t n;
    sm_pattern *pats;
    char **pat_bufs;
    size_t nrec;
    char **recs;
    size_t *rec_len;
    char label[96];
} dcase;

static void dcase_free(dcase *c) {
    for (size_t i = 0; i < c->n; i++) free(c->pat_bufs[i]);
    for (size_t r = 0; r < c->nrec; r++) free(c->recs[r]);
    free(c->pats);
    free(c->pat_bufs);
    free(c->recs);
    free(c->rec_len);
    memset(c, 0, sizeof *c);
}

static void dcase_add_pattern(dcase *c, const char *seq, size_t len) {
    c->pats = realloc(c->pats, (c->n + 1) * sizeof *c->pats);
    c->pat_bufs = realloc(c->pat_bufs, (c->n + 1) * sizeof *c->pat_bufs);
    char *b = malloc(len ? len : 1);
    if (len) memcpy(b, seq, len);
    c->pat_bufs[c->n] = b;
    c->pats[c->n].name = NULL;
    c->pats[c->n].seq = b;
    c->pats[c->n].len = len;
    c->n++;
}

static char *dcase_add_record(dcase *c, size_t len) {
    c->recs = realloc(c->recs, (c->nrec + 1) * sizeof *c->recs);
    c->rec_len = realloc(c->rec_len, (c->nrec + 1) * sizeof *c->rec_len);
    c->recs[c->nrec] = malloc(len ? len : 1);
    c->rec_len[c->nrec] = len;
    return c->recs[c->nrec++];
}

/* Copies an occurrence of a random pattern (or its reverse complement) into
   rec, with the symbols made concrete (or left as codes for text IUPAC). */
static void plant(dcase *c, char *rec, size_t len) {
    if (c->n == 0) return;
    const sm_pattern *p = &c->pats[tu_rng_below(&rng, (uint32_t)c->n)];
    if (p->len == 0 || p->len > len) return;
    size_t at = tu_rng_below(&rng, (uint32_t)(len - p->len + 1));
    int dna = c->opts.alphabet == SM_ALPHABET_DNA;
    int rc = dna && tu_rng_chance(&rng, 50);
    for (size_t j = 0; j < p->len; j++) {
        unsigned char ch = (unsigned char)(rc ? oracle_complement((unsigned char)p->seq[p->len - 1 - j]) : p->seq[j]);
        if (dna) {
            unsigned set = oracle_nt_set(ch);
            if (set && !tu_rng_chance(&rng, (c->opts.flags & SM_FLAG_TEXT_IUPAC) ? 25 : 2)) {
                unsigned pick;
                do pick = 1u << tu_rng_below(&rng, 4);
                while (!(set & pick));
                ch = (unsigned char)(pick == 1 ? 'A' : pick == 2 ? 'C' : pick == 4 ? 'G' : 'T');
                if (ch == 'T' && tu_rng_chance(&rng, 5)) ch = 'U';
            }
            if (tu_rng_chance(&rng, 15)) ch = (unsigned char)(ch | 0x20);
        } else if ((c->opts.flags & SM_FLAG_IGNORE_CASE) && tu_rng_chance(&rng, 50)) {
            if (ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 32);
            else if (ch >= 'A' && ch <= 'Z') ch = (unsigned char)(ch + 32);
        }
        rec[at + j] = (char)ch;
    }
}

static const char *text_alphabets[] = {"ab", "abAB", "abcdeABCDE .\n", "xX\x00\xff\x80"};

static void random_pattern(dcase *c, unsigned iupac, const char *alpha, size_t alpha_len, size_t max_len) {
    size_t m;
    unsigned r = tu_rng_below(&rng, 10);
    if (r < 4) m = tu_rng_range(&rng, 1, 8);
    else if (r < 8) m = tu_rng_range(&rng, 9, 30);
    else m = tu_rng_range(&rng, 31, (uint32_t)max_len);
    char *b = malloc(m);
    if (c->opts.alphabet == SM_ALPHABET_DNA) {
        tu_random_iupac(&rng, b, m, iupac, tu_rng_chance(&rng, 20) ? 30 : 0);
        for (size_t j = 0; j < m; j++)
            if ((b[j] == 'T' || b[j] == 't') && tu_rng_chance(&rng, 3)) b[j] = b[j] == 'T' ? 'U' : 'u';
        if (m >= 2 && tu_rng_chance(&rng, 10)) { /* reverse-complement palindrome */
            size_t h = m / 2;
            oracle_reverse_complement(b, h, b + m - h);
            if (m % 2) b[h] = "NSW"[tu_rng_below(&rng, 3)];
        }
    } else {
        for (size_t j = 0; j < m; j++) b[j] = alpha[tu_rng_below(&rng, (uint32_t)alpha_len)];
    }
    dcase_add_pattern(c, b, m);
    free(b);
}

static void random_case(dcase *c, int dna, unsigned round) {
    memset(c, 0, sizeof *c);
    sm_compile_options_init(&c->opts);
    c->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    c->opts.strands = (sm_strands)tu_rng_below(&rng, 3);
    if (dna && tu_rng_chance(&rng, 25)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
    if (!dna && tu_rng_chance(&rng, 50)) c->opts.flags |= SM_FLAG_IGNORE_CASE;
    /* Small limits move IUPAC patterns from the automaton to Shift-And in auto mode. */
    static const uint32_t limits[] = {0, 1, 4, 64, 256, 100000};
    c->opts.max_expansion = limits[tu_rng_below(&rng, 6)];
    const char *alpha = text_alphabets[tu_rng_below(&rng, 4)];
    size_t alpha_len = alpha[0] == 'x' ? 5 : strlen(alpha);
    unsigned iupac = tu_rng_chance(&rng, 30) ? 0 : tu_rng_below(&rng, 40);
    size_t n = tu_rng_chance(&rng, 70) ? tu_rng_range(&rng, 1, 8) : tu_rng_range(&rng, 9, 40);
    size_t max_len = tu_rng_chance(&rng, 20) ? 150 : 40;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && tu_rng_chance(&rng, 10)) { /* a duplicate */
            const sm_pattern *p = &c->pats[tu_rng_below(&rng, (uint32_t)i)];
            char *b = malloc(p->len);
            memcpy(b, p->seq, p->len);
            dcase_add_pattern(c, b, p->len);
            free(b);
        } else {
            random_pattern(c, iupac, alpha, alpha_len, max_len);
        }
    }
    size_t nrec = tu_rng_chance(&rng, 30) ? 1 : tu_rng_range(&rng, 2, 6);
    for (size_t r = 0; r < nrec; r++) {
        size_t len;
        unsigned k = tu_rng_below(&rng, 10);
        if (k == 0) len = 0; /* empty records */
        else if (k < 3) len = tu_rng_range(&rng, 1, 20);
        else len = tu_rng_range(&rng, 20, 2500);
        char *rec = dcase_add_record(c, len);
        if (dna) {
            unsigned tiupac = tu_rng_chance(&rng, 50) ? 0 : tu_rng_below(&rng, 20);
            tu_random_iupac(&rng, rec, len, tiupac, tu_rng_below(&rng, 30));
            for (size_t j = 0; j < len; j++) {
                if (tu_rng_chance(&rng, 1)) rec[j] = "-*.XZ0\t"[tu_rng_below(&rng, 7)];
                else if ((rec[j] == 'T' || rec[j] == 't') && tu_rng_chance(&rng, 5)) rec[j] = rec[j] == 'T' ? 'U' : 'u';
            }
            if (len > 60 && tu_rng_chance(&rng, 30)) { /* low complexity: overlapping hits */
                size_t at = tu_rng_below(&rng, (uint32_t)(len - 50));
                char fill = "AaCNn"[tu_rng_below(&rng, 5)];
                memset(rec + at, fill, 50);
            }
        } else {
            for (size_t j = 0; j < len; j++) rec[j] = alpha[tu_rng_below(&rng, (uint32_t)alpha_len)];
        }
        unsigned plants = len ? tu_rng_below(&rng, 8) : 0;
        for (unsigned t = 0; t < plants; t++) plant(c, rec, len);
    }
    snprintf(c->label, sizeof c->label, "%s case %u", dna ? "dna" : "text", round);
}

static void print_case(const dcase *c) {
    char buf[700];
    printf("  options: alphabet %s strands %d flags %u max_expansion %u\n",
           c->opts.alphabet == SM_ALPHABET_DNA ? "dna" : "text", (int)c->opts.strands, c->opts.flags,
           c->opts.max_expansion);
    for (size_t i = 0; i < c->n && i < 12; i++)
        printf("  pattern %zu: %s\n", i, tu_excerpt(c->pats[i].seq, c->pats[i].len, 160, buf, sizeof buf));
    if (c->n > 12) printf("  ... %zu patterns\n", c->n);
    for (size_t r = 0; r < c->nrec && r < 6; r++)
        printf("  record %zu (%zu bytes): %s\n", r, c->rec_len[r], tu_excerpt(c->recs[r], c->rec_len[r], 300, buf, sizeof buf));
}

/* --------------------------------------------------------------- expected */

typedef struct {
    tu_hits *per_record; /* record number 0, as sm_scan reports */
    tu_hits all;         /* with record numbers, as the runner reports */
    uint64_t *counts;    /* per pattern, all records */
    uint64_t total;
} expected;

static void expected_make(const dcase *c, expected *e) {
    e->per_record = calloc(c->nrec ? c->nrec : 1, sizeof *e->per_record);
    tu_hits_init(&e->all);
    e->counts = calloc(c->n ? c->n : 1, sizeof *e->counts);
    e->total = 0;
    for (size_t r = 0; r < c->nrec; r++) {
        tu_hits_init(&e->per_record[r]);
        oracle_find(c->pats, c->n, &c->opts, c->recs[r], c->rec_len[r], 0, &e->per_record[r]);
        oracle_find(c->pats, c->n, &c->opts, c->recs[r], c->rec_len[r], r, &e->all);
        e->total += oracle_count(&e->per_record[r], e->counts);
    }
}

static void expected_free(const dcase *c, expected *e) {
    for (size_t r = 0; r < c->nrec; r++) tu_hits_free(&e->per_record[r]);
    free(e->per_record);
    tu_hits_free(&e->all);
    free(e->counts);
}

/* -------------------------------------------------------------- collector */

typedef struct {
    tu_hits hits;
    const dcase *c;
    const char *data; /* block scan: the scanned bytes, to check hit->text */
    size_t len;
    int text_required;
    unsigned bad_text;
    uint64_t next_done; /* runner: next record expected to finish */
    unsigned done_errors;
    size_t stop_after;  /* stop the scan after this many hits (0: never) */
    sc_summaries *sums; /* runner: record summaries instead of hits */
} collector;

static void collector_init(collector *col, const dcase *c) {
    memset(col, 0, sizeof *col);
    tu_hits_init(&col->hits);
    col->c = c;
}

static int collect(const sm_hit *h, void *ctx) {
    collector *col = ctx;
    tu_hits_add(&col->hits, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    const char *src = col->data;
    size_t srclen = col->len;
    if (!src && col->c && h->record < col->c->nrec) { /* runner: the record's bytes */
        src = col->c->recs[h->record];
        srclen = col->c->rec_len[h->record];
    }
    if (h->text) {
        if (!src || h->end > srclen || h->start > h->end ||
            memcmp(h->text, src + h->start, (size_t)(h->end - h->start)) != 0)
            col->bad_text++;
    } else if (col->text_required) {
        col->bad_text++;
    }
    if (h->record < col->next_done) col->done_errors++; /* a hit after its record was declared done */
    if (col->stop_after && col->hits.n >= col->stop_after) return 1;
    return 0;
}

static void record_done(uint64_t record, void *ctx) {
    collector *col = ctx;
    if (record != col->next_done) col->done_errors++;
    col->next_done = record + 1;
    if (col->sums && col->sums->n != record + 1) col->done_errors++; /* its summary first */
}

static int collect_summary(const sm_record_summary *summary, void *ctx) {
    collector *col = ctx;
    if (summary->record != col->next_done) col->done_errors++;
    return sc_collect(summary, col->sums);
}

/* ------------------------------------------------------------ the checks */

static int report_diff(const dcase *c, const char *how, const tu_hits *want, const tu_hits *got) {
    char what[320];
    snprintf(what, sizeof what, "%s: %s", c->label, how);
    if (tu_hits_equal(want, got, what)) return tu_check(1, "%s", what);
    tu_check(0, "%s: hits differ from the oracle", what);
    if (tu_failures() <= 10) print_case(c);
    return 0;
}

static size_t piece_size(int mode, size_t left) {
    size_t p;
    switch (mode) {
    case 0: p = left; break;
    case 1: p = 1; break;
    case 2: p = tu_rng_below(&rng, 17); break; /* including empty feeds */
    default: p = tu_rng_range(&rng, 1, 3000); break;
    }
    return p < left ? p : left;
}

static void check_block(const dcase *c, const sm_db *db, const expected *e, const char *how) {
    sm_scratch *scratch = NULL;
    if (!tu_check(sm_scratch_alloc(db, &scratch) == SM_OK, "%s: %s: scratch", c->label, how)) return;
    char label[160];
    for (size_t r = 0; r < c->nrec; r++) {
        collector col;
        collector_init(&col, c);
        col.data = c->recs[r];
        col.len = c->rec_len[r];
        col.text_required = 1;
        int rc = sm_scan(db, scratch, c->recs[r], c->rec_len[r], collect, &col);
        snprintf(label, sizeof label, "%s sm_scan record %zu", how, r);
        tu_check(rc == SM_OK, "%s: %s returned %d", c->label, label, rc);
        report_diff(c, label, &e->per_record[r], &col.hits);
        tu_check(col.bad_text == 0, "%s: %s: %u hits with wrong or missing text", c->label, label, col.bad_text);
        tu_hits_free(&col.hits);

        uint64_t *counts = calloc(c->n, sizeof *counts);
        uint64_t *want = calloc(c->n, sizeof *want);
        oracle_count(&e->per_record[r], want);
        rc = sm_count(db, scratch, c->recs[r], c->rec_len[r], counts);
        tu_check(rc == SM_OK && memcmp(counts, want, c->n * sizeof *counts) == 0, "%s: %s sm_count record %zu differs",
                 c->label, how, r);
        free(counts);
        free(want);
    }
    /* A callback that asks to stop: SM_ERR_TERMINATED and a prefix of the hits. */
    for (size_t r = 0; r < c->nrec; r++) {
        if (e->per_record[r].n < 2) continue;
        collector col;
        collector_init(&col, c);
        col.stop_after = 1 + tu_rng_below(&rng, (uint32_t)e->per_record[r].n - 1);
        int rc = sm_scan(db, scratch, c->recs[r], c->rec_len[r], collect, &col);
        int prefix = col.hits.n == col.stop_after;
        for (size_t i = 0; prefix && i < col.hits.n; i++) {
            const tu_hit *a = &col.hits.items[i], *b = &e->per_record[r].items[i];
            prefix = a->start == b->start && a->end == b->end && a->pattern == b->pattern && a->strand == b->strand;
        }
        tu_check(rc == SM_ERR_TERMINATED && prefix, "%s: %s: stopping after %zu hits gave status %d, %zu hits%s",
                 c->label, how, col.stop_after, rc, col.hits.n, prefix ? "" : " (not a prefix)");
        tu_hits_free(&col.hits);
        break;
    }
    sm_scratch_free(scratch);
}

static void check_stream(const dcase *c, const sm_db *db, const expected *e, const char *how) {
    sm_stream *st = NULL;
    if (!tu_check(sm_stream_open(db, &st) == SM_OK, "%s: %s: stream open", c->label, how)) return;
    char label[160];
    /* One stream for all records: sm_stream_end resets it. */
    for (size_t r = 0; r < c->nrec; r++) {
        int mode = (int)tu_rng_below(&rng, 4);
        collector col;
        collector_init(&col, c);
        size_t at = 0;
        int rc = SM_OK;
        do {
            size_t p = piece_size(mode, c->rec_len[r] - at);
            rc = sm_stream_feed(st, c->recs[r] + at, p, collect, &col);
            at += p;
        } while (rc == SM_OK && at < c->rec_len[r]);
        if (rc == SM_OK) rc = sm_stream_end(st, collect, &col);
        snprintf(label, sizeof label, "%s stream (piece mode %d) record %zu", how, mode, r);
        tu_check(rc == SM_OK, "%s: %s returned %d", c->label, label, rc);
        report_diff(c, label, &e->per_record[r], &col.hits);
        tu_check(col.bad_text == 0, "%s: %s: hits with wrong text", c->label, label);
        tu_hits_free(&col.hits);
    }
    sm_stream_free(st);
}

/* mode 0: hits; 1: count_only; 2: record summaries (no hit list: the
   threads sum runs and hits as they scan). */
static void check_runner(const dcase *c, const sm_db *db, const expected *e, const char *how, int mode) {
    int count_only = mode == 1;
    static const size_t chunks[] = {1, 2, 7, 64, 300, 4096, 0};
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    const sm_variant *rv = NULL; /* runner/runner_variant.h */
    ro.threads = tu_rng_range(&rng, 1, 8);
    ro.chunk_size = chunks[tu_rng_below(&rng, 7)];
    ro.count_only = count_only;
    /* A third of the runs bound the hits a work item stores to a few, so
       that segments come back dense and are delivered in pieces. */
    sm_variant tight;
    memset(&tight, 0, sizeof tight);
    if (tu_rng_below(&rng, 3) == 0) {
        tight.item_hits = 1 + tu_rng_below(&rng, 12);
        rv = &tight;
    }
    collector col;
    collector_init(&col, c);
    sc_summaries sums;
    sc_init(&sums);
    ro.on_hit = collect;
    if (mode == 2) {
        ro.on_hit = NULL;
        ro.on_record_summary = collect_summary;
        col.sums = &sums;
    }
    ro.ctx = &col;
    ro.on_record_done = record_done;
    char label[200];
    snprintf(label, sizeof label, "%s runner threads %u chunk %zu%s item hits %zu", how, ro.threads, ro.chunk_size,
             mode == 1 ? " count-only" : mode == 2 ? " summaries" : "", tight.item_hits);
    sm_runner *run = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (!tu_check(sm_runner_create_variant(db, &ro, rv, &run, &err) == SM_OK, "%s: %s: create: %s", c->label, label, err.message))
        return;
    int rc = SM_OK;
    for (size_t r = 0; r < c->nrec && rc == SM_OK; r++) {
        uint64_t num = sm_runner_begin_record(run);
        tu_check(num == r, "%s: %s: record numbered %llu, expected %zu", c->label, label, (unsigned long long)num, r);
        int mode = (int)tu_rng_below(&rng, 4);
        size_t at = 0;
        while (rc == SM_OK && at < c->rec_len[r]) {
            size_t p = piece_size(mode, c->rec_len[r] - at);
            rc = sm_runner_feed(run, c->recs[r] + at, p);
            at += p;
        }
        if (rc == SM_OK) rc = sm_runner_end_record(run);
        if (rc == SM_OK && tu_rng_chance(&rng, 20)) rc = sm_runner_flush(run);
    }
    if (rc == SM_OK) rc = sm_runner_flush(run);
    tu_check(rc == SM_OK, "%s: %s returned %d", c->label, label, rc);
    if (mode == 2) {
        char why[200];
        tu_check(col.hits.n == 0, "%s: %s: on_hit called %zu times", c->label, label, col.hits.n);
        if (!tu_check(sc_check(&sums, &e->all, c->nrec, (uint32_t)c->n, why, sizeof why), "%s: %s: %s", c->label,
                      label, why) &&
            tu_failures() <= 10)
            print_case(c);
    } else if (count_only) {
        tu_check(col.hits.n == 0, "%s: %s: on_hit called %zu times in count mode", c->label, label, col.hits.n);
    } else {
        report_diff(c, label, &e->all, &col.hits);
        tu_check(col.bad_text == 0, "%s: %s: %u hits with wrong text", c->label, label, col.bad_text);
    }
    tu_check(col.next_done == c->nrec && col.done_errors == 0,
             "%s: %s: record-done calls wrong (%llu of %zu records done, %u out of order or before their hits)",
             c->label, label, (unsigned long long)col.next_done, c->nrec, col.done_errors);
    const uint64_t *counts = sm_runner_counts(run);
    tu_check(counts && memcmp(counts, e->counts, c->n * sizeof *counts) == 0, "%s: %s: per-pattern counts differ",
             c->label, label);
    tu_check(sm_runner_total(run) == e->total, "%s: %s: total %llu, expected %llu", c->label, label,
             (unsigned long long)sm_runner_total(run), (unsigned long long)e->total);
    sm_runner_free(run);
    tu_hits_free(&col.hits);
    sc_free(&sums);
}

static void check_info(const dcase *c, const sm_db *db, sm_engine engine, const char *how) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    uint32_t minl = UINT32_MAX, maxl = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->pats[i].len < minl) minl = (uint32_t)c->pats[i].len;
        if (c->pats[i].len > maxl) maxl = (uint32_t)c->pats[i].len;
    }
    /* every pattern on an exact engine's section; a forced engine's all */
    uint32_t exact = 0, sections = 0;
    for (size_t i = 0; i < sm_engine_count(); i++)
        if (sm_engine_matches(sm_engine_at(i)) & (1u << SM_MATCH_EXACT))
            exact += sm_db_engine_patterns(db, sm_engine_at(i));
    for (uint32_t i = 0; i < info.section_count; i++) {
        uint32_t patterns = 0;
        tu_check(sm_db_section_name(db, i, &patterns, NULL) != NULL && sm_db_section_engine(db, i) != SM_ENGINE_AUTO,
                 "%s: %s: section %u has no engine", c->label, how, i);
        sections += patterns;
    }
    int ok = info.pattern_count == c->n && info.min_length == minl && info.max_length == maxl &&
             info.alphabet == c->opts.alphabet && exact == c->n && sections == c->n;
    if (engine != SM_ENGINE_AUTO) ok = ok && sm_db_engine_patterns(db, engine) == c->n;
    size_t size = 0;
    sm_db_bytes(db, &size);
    ok = ok && info.size == size;
    tu_check(ok, "%s: %s: sm_db_get_info disagrees (patterns %u, lengths %u..%u, %u on exact engines, %u on %s)",
             c->label, how, info.pattern_count, info.min_length, info.max_length, exact,
             sm_db_engine_patterns(db, engine), sm_engine_name(engine));
    for (size_t i = 0; i < c->n; i++) {
        size_t len = 0;
        const char *seq = sm_db_pattern_seq(db, (uint32_t)i, &len);
        int same = seq && len == c->pats[i].len;
        for (size_t j = 0; same && j < len; j++) {
            unsigned char want = (unsigned char)c->pats[i].seq[j];
            if (c->opts.alphabet == SM_ALPHABET_DNA) {
                if (want >= 'a' && want <= 'z') want = (unsigned char)(want - 32);
                if (want == 'U') want = 'T';
            }
            same = (unsigned char)seq[j] == want;
        }
        if (!tu_check(same, "%s: %s: sm_db_pattern_seq(%zu) differs", c->label, how, i)) break;
        const char *name = sm_db_pattern_name(db, (uint32_t)i);
        tu_check(name != NULL, "%s: %s: pattern %zu has no name", c->label, how, i);
    }
}

static void check_roundtrip(const dcase *c, const sm_db *db, const expected *e, const char *how) {
    size_t size = 0;
    const void *bytes = sm_db_bytes(db, &size);
    sm_db *copy = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    char label[160];
    snprintf(label, sizeof label, "%s from_bytes", how);
    if (tu_check(bytes && sm_db_from_bytes(bytes, size, &copy, &err) == SM_OK, "%s: %s: %s", c->label, label, err.message)) {
        size_t size2 = 0;
        const void *bytes2 = sm_db_bytes(copy, &size2);
        tu_check(size2 == size && memcmp(bytes, bytes2, size) == 0, "%s: %s: bytes changed", c->label, label);
        check_block(c, copy, e, label);
        sm_db_free(copy);
    }
    /* Damage anywhere, the header included, is caught by the checksum. */
    if (size > 256) {
        unsigned char *bad = malloc(size);
        memcpy(bad, bytes, size);
        size_t at = tu_rng_below(&rng, (uint32_t)size);
        bad[at] ^= (unsigned char)(1u << tu_rng_below(&rng, 8));
        copy = NULL;
        int rc = sm_db_from_bytes(bad, size, &copy, &err);
        tu_check(rc != SM_OK && copy == NULL, "%s: %s: a flipped bit at byte %zu was accepted", c->label, how, at);
        if (copy) sm_db_free(copy);
        /* Truncation too. */
        copy = NULL;
        rc = sm_db_from_bytes(bytes, size - 1 - tu_rng_below(&rng, (uint32_t)(size - 1)), &copy, &err);
        tu_check(rc != SM_OK && copy == NULL, "%s: %s: a truncated database was accepted", c->label, how);
        if (copy) sm_db_free(copy);
        free(bad);
    }
    /* Through a file. */
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/seqmatch_diff_%ld_%u.db", dir && *dir ? dir : "/tmp", (long)getpid(),
             tu_rng_below(&rng, 1000000));
    snprintf(label, sizeof label, "%s save/load", how);
    if (tu_check(sm_db_save(db, path, &err) == SM_OK, "%s: %s: save: %s", c->label, label, err.message)) {
        copy = NULL;
        if (tu_check(sm_db_load(path, &copy, &err) == SM_OK, "%s: %s: load: %s", c->label, label, err.message)) {
            size_t size2 = 0;
            const void *bytes2 = sm_db_bytes(copy, &size2);
            tu_check(size2 == size && memcmp(bytes, bytes2, size) == 0, "%s: %s: bytes changed", c->label, label);
            check_stream(c, copy, e, label);
            sm_db_free(copy);
        }
        unlink(path);
    }
}

/* Would the forced automaton refuse this set (IUPAC text, or a pattern
   expanding past the limit)? */
static int automaton_refuses(const dcase *c) {
    if (c->opts.alphabet != SM_ALPHABET_DNA) return 0;
    if (c->opts.flags & SM_FLAG_TEXT_IUPAC) return 1;
    double limit = c->opts.max_expansion ? c->opts.max_expansion : 256;
    for (size_t i = 0; i < c->n; i++) {
        double count = 1;
        for (size_t j = 0; j < c->pats[i].len; j++) {
            unsigned s = oracle_nt_set((unsigned char)c->pats[i].seq[j]);
            count *= (double)((s & 1) + ((s >> 1) & 1) + ((s >> 2) & 1) + ((s >> 3) & 1));
        }
        if (count > limit) return 1;
    }
    return 0;
}

/* Compiles one way and runs every check; returns the database bytes' size
   and copies them to *bytes_out for comparisons across build threads. */
/* The k-mer table takes patterns of one length up to 32 over at most four
   (folded) symbols, after IUPAC expansion; otherwise compiling must fail. */
static int kmer_refuses(const dcase *c) {
    if (automaton_refuses(c)) return 1;
    int seen[256] = {0}, symbols = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->pats[i].len != c->pats[0].len || c->pats[i].len > 32) return 1;
        if (c->opts.alphabet == SM_ALPHABET_DNA) continue;
        for (size_t j = 0; j < c->pats[i].len; j++) {
            unsigned char b = (unsigned char)c->pats[i].seq[j];
            if ((c->opts.flags & SM_FLAG_IGNORE_CASE) && b >= 'A' && b <= 'Z') b = (unsigned char)(b + 32);
            if (!seen[b]) seen[b] = 1, symbols++;
        }
    }
    return symbols > 4;
}

static void check_compiled(const dcase *c, const expected *e, sm_engine engine, unsigned build_threads, int full,
                           unsigned char **bytes_out, size_t *size_out) {
    sm_compile_options o = c->opts;
    o.engine = engine;
    o.build_threads = build_threads;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    char how[96];
    snprintf(how, sizeof how, "engine %s build_threads %u", sm_engine_name(engine), build_threads);
    int rc = sm_compile(c->pats, c->n, &o, &db, &err);
    if (engine == SM_ENGINE_KMER && kmer_refuses(c)) {
        tu_check(rc != SM_OK && db == NULL, "%s: %s: compiled although the k-mer table cannot take it", c->label, how);
        if (db) sm_db_free(db);
        return;
    }
    if ((engine == SM_ENGINE_AUTOMATON || engine == SM_ENGINE_WUMANBER) && automaton_refuses(c)) {
        tu_check(rc != SM_OK && db == NULL, "%s: %s: compiled although the automaton cannot take it", c->label, how);
        if (db) sm_db_free(db);
        return;
    }
    /* an engine with limits this test has no oracle for may refuse */
    int known = engine == SM_ENGINE_AUTO || engine == SM_ENGINE_KMER || engine == SM_ENGINE_AUTOMATON ||
                engine == SM_ENGINE_WUMANBER || engine == SM_ENGINE_SHIFTAND;
    if (rc == SM_ERR_INVALID && !known && (sm_engine_traits(engine) & SM_ENGINE_TRAIT_LIMITED)) return;
    if (!tu_check(rc == SM_OK && db != NULL, "%s: %s: compile failed (%d): %s", c->label, how, rc, err.message)) {
        if (tu_failures() <= 10) print_case(c);
        return;
    }
    check_block(c, db, e, how);
    check_stream(c, db, e, how);
    if (full) {
        check_info(c, db, engine, how);
        check_runner(c, db, e, how, 0);
        check_runner(c, db, e, how, 1);
        check_runner(c, db, e, how, 2);
        check_roundtrip(c, db, e, how);
    }
    if (bytes_out) {
        size_t size = 0;
        const void *bytes = sm_db_bytes(db, &size);
        *bytes_out = malloc(size);
        memcpy(*bytes_out, bytes, size);
        *size_out = size;
    }
    sm_db_free(db);
}

static void run_case(const dcase *c, int exhaustive) {
    expected e;
    expected_make(c, &e);
    /* auto and every exact engine of the registry */
    sm_engine engines[32] = {SM_ENGINE_AUTO};
    int nengines = 1;
    for (size_t i = 0; i < sm_engine_count() && nengines < 32; i++)
        if (sm_engine_matches(sm_engine_at(i)) & (1u << SM_MATCH_EXACT)) engines[nengines++] = sm_engine_at(i);
    static const unsigned threads[] = {0, 1, 2, 4};
    for (int ei = 0; ei < nengines; ei++) {
        unsigned char *serial = NULL;
        size_t serial_size = 0;
        for (int ti = 0; ti < 4; ti++) {
            /* Serial build always; the others exhaustively or one at random. */
            int run = ti == 0 || exhaustive || tu_rng_below(&rng, 3) + 1 == (unsigned)ti;
            if (!run) continue;
            unsigned char *bytes = NULL;
            size_t size = 0;
            check_compiled(c, &e, engines[ei], threads[ti], ti == 0 || exhaustive, &bytes, &size);
            if (ti == 0) {
                serial = bytes;
                serial_size = size;
            } else if (bytes && serial) {
                tu_check(size == serial_size && memcmp(bytes, serial, size) == 0,
                         "%s: engine %s: build_threads %u gives other bytes than the serial build", c->label,
                         sm_engine_name(engines[ei]), threads[ti]);
            }
            if (ti != 0) free(bytes);
        }
        free(serial);
    }
    expected_free(c, &e);
}

/* --------------------------------------------------------- invalid input */

static void test_invalid_patterns(void) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_db *db = (sm_db *)&o; /* must be reset to NULL on failure */
    sm_error err;
    sm_pattern ok = {"ok", "ACGT", 4};
    sm_pattern empty = {"empty", "", 0};
    sm_pattern pair[2] = {ok, empty};
    int rc = sm_compile(pair, 2, &o, &db, &err);
    tu_check(rc == SM_ERR_PATTERN && db == NULL, "an empty pattern gave status %d, expected SM_ERR_PATTERN", rc);
    static const char *bad[] = {"ACGX", "ACG-T", "AC GT", "E", "ACGT1", "ACG*", "J", "acgtz", "N\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int engine = 0; engine < 3; engine++) {
            o.engine = (sm_engine)engine;
            sm_pattern p = {NULL, bad[i], strlen(bad[i])};
            db = (sm_db *)&o;
            rc = sm_compile(&p, 1, &o, &db, &err);
            tu_check(rc == SM_ERR_PATTERN && db == NULL, "dna pattern '%s' (engine %d) gave status %d, expected SM_ERR_PATTERN",
                     bad[i], engine, rc);
        }
    }
    o.engine = SM_ENGINE_AUTO;
    db = (sm_db *)&o;
    rc = sm_compile(&ok, 0, &o, &db, &err);
    tu_check(rc != SM_OK && db == NULL, "an empty pattern set compiled");
    /* The text alphabet takes any byte, but still no empty pattern. */
    o.alphabet = SM_ALPHABET_TEXT;
    sm_pattern any = {NULL, "a-\x00\xff Z", 6};
    db = NULL;
    rc = sm_compile(&any, 1, &o, &db, &err);
    tu_check(rc == SM_OK && db != NULL, "text pattern with arbitrary bytes refused (%d)", rc);
    if (db) sm_db_free(db);
    db = (sm_db *)&o;
    rc = sm_compile(&empty, 1, &o, &db, &err);
    tu_check(rc == SM_ERR_PATTERN && db == NULL, "empty text pattern gave status %d", rc);
    /* Every lower-case IUPAC letter and U are valid. */
    o.alphabet = SM_ALPHABET_DNA;
    sm_pattern all = {NULL, "acgturyswkmbdhvnACGTURYSWKMBDHVN", 32};
    db = NULL;
    rc = sm_compile(&all, 1, &o, &db, &err);
    tu_check(rc == SM_OK, "all IUPAC letters refused (%d)", rc);
    if (db) sm_db_free(db);
}

/* ------------------------------------------------------------- real data */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Minimal FASTA: records' sequences with line breaks removed, names are the
   first word of the header. Enough for the bundled files. */
typedef struct {
    char *name;
    char *seq;
    size_t len;
} fasta_rec;

static size_t parse_fasta(const char *data, size_t len, fasta_rec **out) {
    size_t n = 0;
    fasta_rec *recs = NULL;
    size_t i = 0;
    while (i < len) {
        size_t eol = i;
        while (eol < len && data[eol] != '\n') eol++;
        size_t l = eol - i;
        if (l && data[i + l - 1] == '\r') l--;
        if (l && data[i] == '>') {
            recs = realloc(recs, (n + 1) * sizeof *recs);
            size_t w = 1;
            while (w < l && data[i + w] != ' ' && data[i + w] != '\t') w++;
            recs[n].name = malloc(w);
            memcpy(recs[n].name, data + i + 1, w - 1);
            recs[n].name[w - 1] = 0;
            recs[n].seq = malloc(len + 1);
            recs[n].len = 0;
            n++;
        } else if (n) {
            memcpy(recs[n - 1].seq + recs[n - 1].len, data + i, l);
            recs[n - 1].len += l;
        }
        i = eol + 1;
    }
    *out = recs;
    return n;
}

static void free_fasta(fasta_rec *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(r[i].name);
        free(r[i].seq);
    }
    free(r);
}

static void test_real(void) {
    size_t glen = 0, plen = 0;
    char *gdata = read_file("../examples/ecoli-excerpt.fa", &glen);
    char *pdata = read_file("../examples/patterns.fa", &plen);
    if (!gdata || !pdata) {
        printf("real data: examples not found, skipped\n");
        free(gdata);
        free(pdata);
        return;
    }
    fasta_rec *genome = NULL, *pats = NULL;
    size_t ng = parse_fasta(gdata, glen, &genome);
    size_t np = parse_fasta(pdata, plen, &pats);
    if (!tu_check(ng == 1 && np == 10 && genome[0].len == 80000, "real data: unexpected example files (%zu records, %zu patterns)", ng, np))
        goto done;

    /* 1. The bundled patterns: the counts documented with the example. */
    {
        dcase c;
        memset(&c, 0, sizeof c);
        sm_compile_options_init(&c.opts);
        snprintf(c.label, sizeof c.label, "real example patterns");
        for (size_t i = 0; i < np; i++) dcase_add_pattern(&c, pats[i].seq, pats[i].len);
        char *rec = dcase_add_record(&c, genome[0].len);
        memcpy(rec, genome[0].seq, genome[0].len);
        static const uint64_t documented[10] = {10, 28, 10, 24, 144, 18, 1, 1, 1, 1};
        expected e;
        expected_make(&c, &e);
        tu_check(memcmp(e.counts, documented, sizeof documented) == 0 && e.total == 238,
                 "real data: the oracle's counts differ from the documented ones (total %llu)", (unsigned long long)e.total);
        /* The documented primer sites. */
        static const struct { uint32_t pattern; uint64_t start; char strand; } sites[] = {
            {6, 336, '+'}, {7, 2779, '-'}, {8, 12162, '+'}, {9, 14059, '-'}};
        for (size_t s = 0; s < 4; s++) {
            int found = 0;
            for (size_t i = 0; i < e.all.n; i++)
                if (e.all.items[i].pattern == sites[s].pattern && e.all.items[i].start == sites[s].start &&
                    e.all.items[i].end == sites[s].start + 20 && e.all.items[i].strand == sites[s].strand)
                    found = 1;
            tu_check(found, "real data: primer %u not found at %llu", sites[s].pattern, (unsigned long long)sites[s].start);
        }
        expected_free(&c, &e);
        run_case(&c, 1);
        dcase_free(&c);
    }

    /* 2. Degenerate primers taken from the genome: IUPAC codes that keep
       the original base, some on the reverse strand, plus a few k-mers. */
    for (int round = 0; round < 2; round++) {
        dcase c;
        memset(&c, 0, sizeof c);
        sm_compile_options_init(&c.opts);
        if (round == 1) c.opts.flags |= SM_FLAG_TEXT_IUPAC;
        snprintf(c.label, sizeof c.label, "real degenerate primers%s", round ? " text-iupac" : "");
        for (int i = 0; i < 40; i++) {
            size_t m = i < 30 ? tu_rng_range(&rng, 18, 30) : tu_rng_range(&rng, 6, 10);
            size_t at = tu_rng_below(&rng, (uint32_t)(genome[0].len - m));
            char *p = malloc(m);
            memcpy(p, genome[0].seq + at, m);
            for (size_t j = 0; j < m; j++) {
                if (!tu_rng_chance(&rng, 15)) continue;
                unsigned set = oracle_nt_set((unsigned char)p[j]);
                static const char codes[] = "RYSWKMBDHVN";
                char code;
                do code = codes[tu_rng_below(&rng, 11)];
                while (!(oracle_nt_set((unsigned char)code) & set));
                p[j] = code;
            }
            if (tu_rng_chance(&rng, 40)) {
                char *rc = malloc(m);
                oracle_reverse_complement(p, m, rc);
                free(p);
                p = rc;
            }
            dcase_add_pattern(&c, p, m);
            free(p);
        }
        /* Two records: the excerpt cut in two, with a stretch of N and IUPAC codes. */
        size_t cut = 30000 + tu_rng_below(&rng, 20000);
        char *r0 = dcase_add_record(&c, cut);
        memcpy(r0, genome[0].seq, cut);
        char *r1 = dcase_add_record(&c, genome[0].len - cut);
        memcpy(r1, genome[0].seq + cut, genome[0].len - cut);
        memset(r1 + 100, 'N', 50);
        for (int k = 0; k < 40; k++) r1[200 + tu_rng_below(&rng, 1000)] = "RYNnk"[tu_rng_below(&rng, 5)];
        run_case(&c, 0);
        dcase_free(&c);
    }
done:
    free_fasta(genome, ng);
    free_fasta(pats, np);
    free(gdata);
    free(pdata);
}

/* ------------------------------------------------------------ hand cases */

static void test_hand_cases(void) {
    /* Overlapping hits, a palindrome on both strands, duplicates, a pattern
       longer than the text, and one that matches everywhere. */
    dcase c;
    memset(&c, 0, sizeof c);
    sm_compile_options_init(&c.opts);
    snprintf(c.label, sizeof c.label, "hand dna");
    const char *pats[] = {"AA", "AA", "GAATTC", "NNN", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "acgu", "W"};
    for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) dcase_add_pattern(&c, pats[i], strlen(pats[i]));
    const char *recs[] = {"AAAAAAGAATTCaaaaNAcgtACGU", "", "A", "gaattcgaattc"};
    for (size_t r = 0; r < 4; r++) memcpy(dcase_add_record(&c, strlen(recs[r])), recs[r], strlen(recs[r]));
    run_case(&c, 1);
    c.opts.flags = SM_FLAG_TEXT_IUPAC;
    snprintf(c.label, sizeof c.label, "hand dna text-iupac");
    run_case(&c, 0);
    dcase_free(&c);

    memset(&c, 0, sizeof c);
    sm_compile_options_init(&c.opts);
    c.opts.alphabet = SM_ALPHABET_TEXT;
    c.opts.flags = SM_FLAG_IGNORE_CASE;
    snprintf(c.label, sizeof c.label, "hand text ignore-case");
    const char *tp[] = {"the", "THE", "e t", "aaa", "Lord"};
    for (size_t i = 0; i < sizeof tp / sizeof *tp; i++) dcase_add_pattern(&c, tp[i], strlen(tp[i]));
    const char *tr[] = {"In the beginning God created THE heaven and the earth.", "aaaaaa", "LORD lord Lord"};
    for (size_t r = 0; r < 3; r++) memcpy(dcase_add_record(&c, strlen(tr[r])), tr[r], strlen(tr[r]));
    run_case(&c, 1);
    c.opts.flags = 0;
    snprintf(c.label, sizeof c.label, "hand text case-sensitive");
    run_case(&c, 0);
    dcase_free(&c);
}

/* Copies bytes, applies a change to the copy, reseals it and loads it: the
   status, and the message in err. */
static int load_changed(const void *bytes, size_t size, void (*change)(uint8_t *, size_t), sm_error *err) {
    uint8_t *copy = malloc(size);
    memcpy(copy, bytes, size);
    change(copy, size);
    sm_db_seal(copy, size);
    sm_db *db = NULL;
    int rc = sm_db_from_bytes(copy, size, &db, err);
    tu_check((rc == SM_OK) == (db != NULL), "a load returned %d with%s a database", rc, db ? "" : "out");
    sm_db_free(db);
    free(copy);
    return rc;
}

static void to_version_3(uint8_t *b, size_t n) { (void)n, ((sm_db_header *)b)->version = 3; }
static void to_version_5(uint8_t *b, size_t n) { (void)n, ((sm_db_header *)b)->version = 5; }
static void reserved_set(uint8_t *b, size_t n) { (void)n, ((sm_db_header *)b)->reserved[17] = 1; }
static sm_db_section *entry0(uint8_t *b) { return (sm_db_section *)(b + ((sm_db_header *)b)->directory_off); }
static void unknown_kind(uint8_t *b, size_t n) { (void)n, entry0(b)->kind = 200; }
static void entry_reserved(uint8_t *b, size_t n) { (void)n, entry0(b)->reserved = 1; }
static void entry_outside(uint8_t *b, size_t n) { entry0(b)->offset = n; }
static void entry_unaligned(uint8_t *b, size_t n) { (void)n, entry0(b)->offset += 8; }
static void no_sections(uint8_t *b, size_t n) { (void)n, ((sm_db_header *)b)->section_count = 0; }
static void too_many_sections(uint8_t *b, size_t n) { (void)n, ((sm_db_header *)b)->section_count = 65; }
static void pattern_no_section(uint8_t *b, size_t n) {
    (void)n;
    ((sm_db_pattern *)(b + ((sm_db_header *)b)->patterns_off))->section = 7;
}
/* An exact database called one of k mismatches with a PAM (beside k
   mismatches or edits without a PAM exact sections are allowed: the
   patterns compiled as exact). */
static void wrong_match(uint8_t *b, size_t n) {
    (void)n;
    ((sm_db_header *)b)->match = SM_MATCH_MISMATCHES;
    ((sm_db_header *)b)->max_errors = 1;
    ((sm_db_header *)b)->pam_length = 1;
}
static void pam_too_long(uint8_t *b, size_t n) { (void)n, ((sm_db_header *)b)->pam_length = 6; }
static void pam_on_text(uint8_t *b, size_t n) {
    (void)n;
    ((sm_db_header *)b)->pam_length = 1;
    ((sm_db_header *)b)->alphabet = SM_ALPHABET_TEXT;
    ((sm_db_header *)b)->strands = SM_STRAND_FORWARD;
}

/* The container of format 3 (docs/format.md): every rule a loader checks,
   each broken on its own in a database that is otherwise valid. */
static void test_format(void) {
    sm_pattern p[2] = {{"a", "GAATTC", 6}, {"b", "ACGTACGTAC", 10}};
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(p, 2, &o, &db, &err) == SM_OK, "format: compile: %s", err.message)) return;
    size_t size = 0;
    const void *bytes = sm_db_bytes(db, &size);
    const sm_db_header *h = bytes;
    tu_check(h->version == 4 && h->section_count >= 1 && h->directory_off >= 256, "format: header of a new database");
    static const struct {
        void (*change)(uint8_t *, size_t);
        int rc;
        const char *says;
    } cases[] = {
        {to_version_3, SM_ERR_VERSION, "recompile this database"},
        {to_version_5, SM_ERR_VERSION, "format version 5"},
        {reserved_set, SM_ERR_FORMAT, "reserved"},
        {unknown_kind, SM_ERR_VERSION, "kind 200"},
        {entry_reserved, SM_ERR_FORMAT, "reserved"},
        {entry_outside, SM_ERR_FORMAT, "out of bounds"},
        {entry_unaligned, SM_ERR_FORMAT, "out of bounds"},
        {no_sections, SM_ERR_FORMAT, "directory"},
        {too_many_sections, SM_ERR_FORMAT, "directory"},
        {pattern_no_section, SM_ERR_FORMAT, "names no section"},
        {wrong_match, SM_ERR_FORMAT, "kind of matching"},
        {pam_too_long, SM_ERR_FORMAT, "database PAM length 6 does not fit its patterns"},
        {pam_on_text, SM_ERR_FORMAT, "database PAM length 1 does not fit its patterns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memset(&err, 0, sizeof err);
        int rc = load_changed(bytes, size, cases[i].change, &err);
        tu_check(rc == cases[i].rc && strstr(err.message, cases[i].says), "format case %zu: status %d (%s)", i, rc,
                 err.message);
    }
    /* Truncated below the header: said so, not "bad magic". */
    sm_db *x = NULL;
    memset(&err, 0, sizeof err);
    tu_check(sm_db_from_bytes(bytes, 100, &x, &err) == SM_ERR_FORMAT && strstr(err.message, "truncated"),
             "format: a block of 100 bytes: %s", err.message);
    sm_db_free(db);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(20240607));
    test_format();
    test_invalid_patterns();
    test_hand_cases();
    test_real();
    for (unsigned round = 0; round < tu_scaled(60) && tu_failures() < 30; round++) {
        dcase c;
        random_case(&c, round % 3 != 2, round);
        run_case(&c, round % 10 == 0);
        dcase_free(&c);
    }
    return tu_summary("test_differential");
}
