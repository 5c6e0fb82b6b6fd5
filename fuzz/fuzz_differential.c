/* Fuzz target: differential test of searching. Each input decodes to a
 * small pattern set, compile options (alphabet, strands, flags, exact / k
 * mismatches / k edits with k in 0..3, engine, report mode, expansion limit,
 * build threads), runner options (threads, chunk size, overlap-free mode,
 * count mode) and up to three records. The set is compiled and searched by
 * block scans, counts, streams fed in pieces and the threaded runner; every
 * result must equal the slow oracle of tests/common (oracle.c,
 * approx_oracle.c), or the process aborts.
 *
 * Input layout:
 *   byte 0  bit 0 alphabet (dna, text); bits 1-2 strands (both, +, -, both);
 *           bit 3 the flag (dna: IUPAC in the text; text: ignore case);
 *           bits 4-5 match (exact, mismatches, edits, exact); bits 6-7 k
 *   byte 1  bits 0-2 engine: 0 auto, e > 0 the e-th engine of the registry,
 *           by ascending id, that does the match kind and needs no PAM
 *           (auto when there is none). Ids never change and a new engine
 *           takes the next one, so an input that named an engine keeps
 *           naming it when engines are added; bit 3 report
 *           ends; bits 4-5 runner threads - 1; bits 6-7 build threads
 *   byte 2  runner chunk size (0: the default); also the feed piece size
 *   byte 3  bits 0-1 expansion limit (default, 1, 4, 16); bit 2 runner
 *           count mode; bits 3-4 overlap-free mode (3: none, and the
 *           Myers and mismatch engines cut every text that holds a slice
 *           per SIMD lane into lanes, in block scans and the runner);
 *           bits 5-7 patterns - 1
 *   then    patterns and records, separated by bytes >= 0xF8; bytes below
 *           0xF0 map onto a small alphabet (so that hits are common), bytes
 *           0xF0-0xF7 stand for themselves (symbols a dna set refuses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx_oracle.h"
#include "core/scan_internal.h"
#include "engines/approx/approx.h"
#include "engines/engine.h"
#include "runner/runner_variant.h"
#include "fuzz_support.h"
#include "oracle.h"
#include "testutil.h"

#define MAX_PATTERNS 8
#define MAX_PATTERN_LEN 24
#define MAX_RECORDS 3
#define MAX_RECORD_LEN 512

typedef struct {
    sm_compile_options opts;
    sm_pattern pats[MAX_PATTERNS];
    char pat_buf[MAX_PATTERNS][MAX_PATTERN_LEN];
    size_t npats;
    char rec_buf[MAX_RECORDS][MAX_RECORD_LEN];
    size_t rec_len[MAX_RECORDS];
    size_t nrecs;
    unsigned threads, count_only, piece;
    size_t chunk_size;
    int overlap_free;
    int lanes; /* an sm_lanes_mode for block scans and the runner */
} fuzz_case;

static char map_symbol(uint8_t b, int dna) {
    if (b >= 0xF0) return (char)b;
    static const char dna_symbols[] = "ACGTACGTACGTACGTacgtuURYSWKMBDHVNn";
    static const char text_symbols[] = "abababABAB\0\xe9\x7f xyz";
    return dna ? dna_symbols[b % (sizeof dna_symbols - 1)] : text_symbols[b % (sizeof text_symbols - 1)];
}

/* The engine field (see the layout above): the e-th engine by id among
   those of the registry that do the matching and need no PAM. */
static sm_engine engine_of_field(unsigned e, sm_match match) {
    if (e == 0) return SM_ENGINE_AUTO;
    size_t count = sm_engine_count();
    sm_engine last = SM_ENGINE_AUTO;
    for (unsigned found = 0;;) {
        sm_engine next = SM_ENGINE_AUTO; /* the least id above last that qualifies */
        for (size_t i = 0; i < count; i++) {
            sm_engine id = sm_engine_at(i);
            if (id > last && (next == SM_ENGINE_AUTO || id < next) && (sm_engine_matches(id) & (1u << match)) &&
                !(sm_engine_traits(id) & SM_ENGINE_TRAIT_NEEDS_PAM))
                next = id;
        }
        if (next == SM_ENGINE_AUTO || ++found == e) return next;
        last = next;
    }
}

/* Returns 0 when the input is too short to be a case. */
static int decode(const uint8_t *data, size_t size, fuzz_case *c) {
    if (size < 4) return 0;
    memset(c, 0, sizeof *c);
    sm_compile_options *o = &c->opts;
    sm_compile_options_init(o);
    int dna = !(data[0] & 1);
    o->alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    static const sm_strands strands[4] = {SM_STRAND_BOTH, SM_STRAND_FORWARD, SM_STRAND_REVERSE, SM_STRAND_BOTH};
    o->strands = strands[(data[0] >> 1) & 3];
    if (data[0] & 8) o->flags = dna ? SM_FLAG_TEXT_IUPAC : SM_FLAG_IGNORE_CASE;
    static const sm_match kinds[4] = {SM_MATCH_EXACT, SM_MATCH_MISMATCHES, SM_MATCH_EDITS, SM_MATCH_EXACT};
    o->match = kinds[(data[0] >> 4) & 3];
    o->max_errors = data[0] >> 6;
    /* k = 0 is exact matching whatever the kind: pick among exact engines */
    sm_match effective = o->max_errors == 0 ? SM_MATCH_EXACT : o->match;
    o->engine = engine_of_field(data[1] & 7, effective);
    o->report = (data[1] & 8) ? SM_REPORT_ENDS : SM_REPORT_BEST;
    c->threads = 1 + ((data[1] >> 4) & 3);
    o->build_threads = data[1] >> 6;
    c->chunk_size = data[2];
    c->piece = 1 + data[2] % 29;
    static const uint32_t expansion[4] = {0, 1, 4, 16};
    o->max_expansion = expansion[data[3] & 3];
    c->count_only = (data[3] >> 2) & 1;
    static const int overlap_free[4] = {0, SM_OVERLAP_FREE_SPECULATE, SM_OVERLAP_FREE_PREFIX, 0};
    c->overlap_free = overlap_free[(data[3] >> 3) & 3];
    c->lanes = ((data[3] >> 3) & 3) == 3 ? SM_LANES_ALWAYS : SM_LANES_AUTO;
    size_t want_patterns = 1 + (data[3] >> 5);

    /* Tokens: the patterns first, then the records. */
    size_t i = 4;
    while (i <= size && c->npats + c->nrecs < want_patterns + MAX_RECORDS) {
        size_t j = i;
        while (j < size && data[j] < 0xF8) j++;
        int is_pattern = c->npats < want_patterns;
        char *out = is_pattern ? c->pat_buf[c->npats] : c->rec_buf[c->nrecs];
        size_t cap = is_pattern ? MAX_PATTERN_LEN : MAX_RECORD_LEN, n = 0;
        for (size_t k = i; k < j && n < cap; k++) out[n++] = map_symbol(data[k], dna);
        if (is_pattern) {
            c->pats[c->npats].name = NULL;
            c->pats[c->npats].seq = out;
            c->pats[c->npats].len = n;
            c->npats++;
        } else {
            c->rec_len[c->nrecs++] = n;
        }
        if (j == size) break;
        i = j + 1;
    }
    return 1;
}

static void describe(const fuzz_case *c) {
    char buf[256];
    const sm_compile_options *o = &c->opts;
    fprintf(stderr, "case: %s strands=%d flags=%u match=%d k=%u engine=%s report=%s expansion=%u build_threads=%u\n",
            o->alphabet == SM_ALPHABET_DNA ? "dna" : "text", (int)o->strands, o->flags, (int)o->match, o->max_errors,
            sm_engine_name(o->engine), o->report == SM_REPORT_ENDS ? "ends" : "best", o->max_expansion, o->build_threads);
    fprintf(stderr, "      runner threads=%u chunk=%zu piece=%u count_only=%u overlap_free=%d lanes=%d\n", c->threads,
            c->chunk_size, c->piece, c->count_only, c->overlap_free, c->lanes);
    for (size_t p = 0; p < c->npats; p++)
        fprintf(stderr, "      pattern %zu: \"%s\"\n", p, tu_excerpt(c->pats[p].seq, c->pats[p].len, 80, buf, sizeof buf));
    for (size_t r = 0; r < c->nrecs; r++)
        fprintf(stderr, "      record %zu (%zu bytes): \"%s\"\n", r, c->rec_len[r],
                tu_excerpt(c->rec_buf[r], c->rec_len[r], 120, buf, sizeof buf));
}

#define CASE_CHECK(c, cond, ...)                                         \
    do {                                                                 \
        if (!(cond)) {                                                   \
            describe(c);                                                 \
            fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);                  \
        }                                                                \
    } while (0)

/* The hits of one record for approximate matching, from the definitions
   (as tests/unit/test_approx_search.c derives them). */
static void approx_expected(const fuzz_case *c, size_t r, tu_hits *out) {
    const sm_compile_options *o = &c->opts;
    const char *text = c->rec_buf[r];
    size_t n = c->rec_len[r];
    uint32_t k = o->max_errors;
    uint32_t D[MAX_RECORD_LEN + 1];
    for (size_t p = 0; p < c->npats; p++) {
        size_t m = c->pats[p].len;
        for (int rev = 0; rev <= 1; rev++) {
            if (o->alphabet == SM_ALPHABET_TEXT && rev) continue;
            if (o->alphabet == SM_ALPHABET_DNA &&
                ((rev && o->strands == SM_STRAND_FORWARD) || (!rev && o->strands == SM_STRAND_REVERSE)))
                continue;
            char key[MAX_PATTERN_LEN];
            if (rev) oracle_reverse_complement(c->pats[p].seq, m, key);
            else memcpy(key, c->pats[p].seq, m);
            char strand = rev ? '-' : '+';
            if (o->match == SM_MATCH_MISMATCHES) {
                for (size_t i = 0; i + m <= n; i++) {
                    uint32_t mm = aoracle_mismatches(key, m, text + i, o->alphabet, o->flags);
                    if (mm <= k) tu_hits_add(out, r, i, i + m, (uint32_t)p, strand, mm);
                }
                continue;
            }
            if (aoracle_D_all(key, m, text, n, o->alphabet, o->flags, D) != 0) abort();
            size_t j = 1;
            while (j <= n) {
                if (D[j] > k) {
                    j++;
                    continue;
                }
                size_t best = j;
                if (o->report == SM_REPORT_ENDS) {
                    j++;
                } else {
                    while (j <= n && D[j] <= k) {
                        if (D[j] < D[best]) best = j;
                        j++;
                    }
                }
                uint64_t s = aoracle_edit_start(key, m, text, best, D[best], 0, o->alphabet, o->flags);
                tu_hits_add(out, r, s, best, (uint32_t)p, strand, D[best]);
            }
        }
    }
}

typedef struct {
    tu_hits hits;
    uint64_t record; /* for block scans and streams, which do not number records */
    const fuzz_case *c;
    int use_record_field;
} collector;

static int collect(const sm_hit *h, void *ctx) {
    collector *col = ctx;
    uint64_t record = col->use_record_field ? h->record : col->record;
    if (h->text) {
        const fuzz_case *c = col->c;
        CASE_CHECK(c, record < c->nrecs && h->end <= c->rec_len[record] && h->start <= h->end &&
                          memcmp(h->text, c->rec_buf[record] + h->start, h->end - h->start) == 0,
                   "hit text is not the record's bytes [%llu, %llu)", (unsigned long long)h->start,
                   (unsigned long long)h->end);
    }
    tu_hits_add(&col->hits, record, h->start, h->end, h->pattern, h->strand, h->errors);
    return 0;
}

static void compare(const fuzz_case *c, const tu_hits *want, const tu_hits *got, const char *path) {
    if (!tu_hits_equal(want, got, path)) {
        fflush(stdout);
        describe(c);
        fuzz_fail(__FILE__, __LINE__, "%s: hits differ from the oracle", path);
    }
}

static void run_case(const fuzz_case *c) {
    const sm_compile_options *o = &c->opts;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_compile(c->pats, c->npats, o, &db, &err);
    if (!oracle_patterns_valid(c->pats, c->npats, o->alphabet)) {
        CASE_CHECK(c, rc == SM_ERR_PATTERN, "an invalid pattern set compiled (status %d)", rc);
        return;
    }
    if (rc != SM_OK) {
        /* Only some forced engines may refuse a valid set: the automaton
           (IUPAC text, too large an expansion), the k-mer table (lengths,
           alphabet), Wu-Manber (as the automaton) and the pigeonhole filter
           (patterns not longer than k, IUPAC text, pieces that expand too
           much). */
        int may_refuse = (sm_engine_traits(o->engine) & SM_ENGINE_TRAIT_LIMITED) != 0;
        CASE_CHECK(c, may_refuse && rc == SM_ERR_INVALID, "compile refused a valid set: %s", err.message);
        return;
    }

    tu_hits want;
    tu_hits_init(&want);
    int approx = o->max_errors > 0 && o->match != SM_MATCH_EXACT;
    for (size_t r = 0; r < c->nrecs; r++) {
        if (approx) approx_expected(c, r, &want);
        else if (oracle_find(c->pats, c->npats, o, c->rec_buf[r], c->rec_len[r], r, &want) != 0) abort();
    }
    tu_hits_sort(&want);
    uint64_t want_counts[MAX_PATTERNS] = {0};
    oracle_count(&want, want_counts);

    collector col;
    memset(&col, 0, sizeof col);
    tu_hits_init(&col.hits);
    col.c = c;

    /* Block scans and counts, record by record. */
    sm_scratch *scratch = NULL;
    sm_variant variant;
    memset(&variant, 0, sizeof variant);
    variant.text_lanes = c->lanes;
    CASE_CHECK(c, sm_scratch_alloc_variant(db, &variant, &scratch) == SM_OK, "scratch");
    uint64_t counts[MAX_PATTERNS] = {0};
    for (size_t r = 0; r < c->nrecs; r++) {
        col.record = r;
        CASE_CHECK(c, sm_scan(db, scratch, c->rec_buf[r], c->rec_len[r], collect, &col) == SM_OK, "sm_scan");
        CASE_CHECK(c, sm_count(db, scratch, c->rec_buf[r], c->rec_len[r], counts) == SM_OK, "sm_count");
    }
    sm_scratch_free(scratch);
    compare(c, &want, &col.hits, "block scan");
    CASE_CHECK(c, memcmp(counts, want_counts, sizeof counts) == 0, "sm_count differs from the oracle");

    /* Streams fed in pieces. */
    sm_stream *stream = NULL;
    CASE_CHECK(c, sm_stream_open(db, &stream) == SM_OK, "stream");
    tu_hits_clear(&col.hits);
    for (size_t r = 0; r < c->nrecs; r++) {
        col.record = r;
        for (size_t at = 0; at < c->rec_len[r]; at += c->piece) {
            size_t n = c->rec_len[r] - at < c->piece ? c->rec_len[r] - at : c->piece;
            CASE_CHECK(c, sm_stream_feed(stream, c->rec_buf[r] + at, n, collect, &col) == SM_OK, "stream feed");
        }
        CASE_CHECK(c, sm_stream_end(stream, collect, &col) == SM_OK, "stream end");
    }
    sm_stream_free(stream);
    compare(c, &want, &col.hits, "stream");

    /* The runner: threads, chunk size, overlap-free mode, count mode. */
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    const sm_variant *rv = NULL; /* runner/runner_variant.h */
    ro.threads = c->threads;
    ro.chunk_size = c->chunk_size;
    ro.count_only = (int)c->count_only;
    ro.overlap_free = c->overlap_free;
    rv = &variant;
    ro.on_hit = collect;
    ro.ctx = &col;
    col.use_record_field = 1;
    tu_hits_clear(&col.hits);
    sm_runner *runner = NULL;
    if (ro.overlap_free) {
        /* The overlap-free modes run on exact databases the automaton scans
           alone, and are refused for every other one. */
        sm_db_info info;
        sm_db_get_info(db, &info);
        /* the database's match kind: edits with k = 0 compile to an exact database */
        int automaton_only = info.match == SM_MATCH_EXACT && info.section_count == 1 && sm_db_section_dfa(db, 0, NULL, NULL);
        int rc = sm_runner_create_variant(db, &ro, rv, &runner, &err);
        CASE_CHECK(c, automaton_only ? rc == SM_OK : rc == SM_ERR_INVALID && runner == NULL,
                   "overlap-free runner: status %d (%s)", rc, rc ? err.message : "");
        if (rc != SM_OK) ro.overlap_free = 0;
    }
    if (!runner)
        CASE_CHECK(c, sm_runner_create_variant(db, &ro, rv, &runner, &err) == SM_OK, "runner: %s", err.message);
    for (size_t r = 0; r < c->nrecs; r++) {
        CASE_CHECK(c, sm_runner_begin_record(runner) == r, "record number");
        for (size_t at = 0; at < c->rec_len[r]; at += c->piece) {
            size_t n = c->rec_len[r] - at < c->piece ? c->rec_len[r] - at : c->piece;
            CASE_CHECK(c, sm_runner_feed(runner, c->rec_buf[r] + at, n) == SM_OK, "runner feed");
        }
        CASE_CHECK(c, sm_runner_end_record(runner) == SM_OK, "runner end record");
    }
    CASE_CHECK(c, sm_runner_flush(runner) == SM_OK, "runner flush");
    CASE_CHECK(c, memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof *want_counts) == 0,
               "runner counts differ from the oracle");
    CASE_CHECK(c, sm_runner_total(runner) == want.n, "runner total %llu, oracle %zu",
               (unsigned long long)sm_runner_total(runner), want.n);
    sm_runner_free(runner);
    if (c->count_only) CASE_CHECK(c, col.hits.n == 0, "count mode delivered hits");
    else compare(c, &want, &col.hits, "runner");

    tu_hits_free(&col.hits);
    tu_hits_free(&want);
    sm_db_free(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_case c;
    if (!decode(data, size, &c)) return 0;
    run_case(&c);
    return 0;
}
