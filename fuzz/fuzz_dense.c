/* Fuzz target: memory whatever the hit density (docs/architecture.md,
 * "Memory"). An input makes a few short patterns (A, AA, N, ... often
 * duplicated) and a text of up to 128 KiB that repeats a short unit, so
 * that nearly every position is a hit of every pattern, and runs the
 * runner on it with 1 to 3 threads, a chunk size, exact, k-mismatch or
 * k-edit matching, storing or counting. scripts/fuzz runs it under a limit
 * on every single allocation (32 MB) and on the resident set, which a
 * runner holding all the hits of a chunk (24 bytes each, up to two million
 * here) would pass.
 * The hits must come in order, with their text, and their number must be
 * the one a runner of one thread counts. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "seqmatch.h"

#define TEXT_MAX ((size_t)128 << 10)

typedef struct {
    uint64_t hits, record, start, end;
    uint32_t pattern;
    char strand;
    const uint8_t *text;
    size_t len;
} order_check;

static int on_hit(const sm_hit *h, void *ctx) {
    order_check *c = ctx;
    FUZZ_CHECK(h->end >= h->start && h->end <= c->len, "hit [%llu, %llu)", (unsigned long long)h->start,
               (unsigned long long)h->end);
    if (c->hits) {
        int later = h->start > c->start ||
                    (h->start == c->start &&
                     (h->end > c->end || (h->end == c->end && (h->pattern > c->pattern ||
                                                               (h->pattern == c->pattern && h->strand > c->strand)))));
        FUZZ_CHECK(later, "hits out of order at %llu", (unsigned long long)h->start);
    }
    FUZZ_CHECK(h->text && memcmp(h->text, c->text + h->start, (size_t)(h->end - h->start)) == 0, "a hit's text");
    c->hits++;
    c->start = h->start;
    c->end = h->end;
    c->pattern = h->pattern;
    c->strand = h->strand;
    return 0;
}

static int run(const sm_db *db, const uint8_t *text, size_t len, unsigned threads, size_t chunk, int count_only,
               uint64_t *total) {
    order_check c;
    memset(&c, 0, sizeof c);
    c.text = text;
    c.len = len;
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    ro.count_only = count_only;
    ro.on_hit = on_hit;
    ro.ctx = &c;
    sm_runner *r = NULL;
    sm_error err;
    if (sm_runner_create(db, &ro, &r, &err) != SM_OK) return -1;
    /* fed in pieces, as a reader feeds it */
    int rc = SM_OK;
    sm_runner_begin_record(r);
    for (size_t at = 0; at < len && rc == SM_OK; at += 65536)
        rc = sm_runner_feed(r, text + at, len - at < 65536 ? len - at : 65536);
    if (rc == SM_OK) rc = sm_runner_end_record(r);
    if (rc == SM_OK) rc = sm_runner_flush(r);
    FUZZ_CHECK(rc == SM_OK, "the runner failed: %d", rc);
    *total = sm_runner_total(r);
    if (!count_only) FUZZ_CHECK(c.hits == *total, "%llu hits delivered, %llu counted", (unsigned long long)c.hits,
                                (unsigned long long)*total);
    sm_runner_free(r);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    static const char *const pieces[] = {"A", "AA", "N", "AC", "ACA", "NN", "T", "AAAA"};
    uint8_t mode = data[0], sizes = data[1];
    unsigned npats = 1 + (data[2] & 7);
    data += 3;
    size -= 3;
    sm_pattern pats[8];
    char buf[8][16];
    for (unsigned i = 0; i < npats; i++) {
        uint8_t b = i < size ? data[i] : (uint8_t)i;
        snprintf(buf[i], sizeof buf[i], "%s%s", pieces[b & 7], (b & 8) ? pieces[(b >> 4) & 7] : "");
        pats[i].name = NULL;
        pats[i].seq = buf[i];
        pats[i].len = strlen(buf[i]);
    }
    size_t used = npats < size ? npats : size;
    data += used;
    size -= used;
    /* the text: a unit of up to 8 bases (A when none), repeated */
    char unit[8];
    size_t ulen = size < 8 ? size : 8;
    for (size_t i = 0; i < ulen; i++) unit[i] = "AAAACGTA"[data[i] & 7];
    if (ulen == 0) unit[ulen++] = 'A';
    size_t len = TEXT_MAX >> (sizes & 3);
    uint8_t *text = malloc(len);
    if (!text) return 0;
    for (size_t i = 0; i < len; i++) text[i] = (uint8_t)unit[i % ulen];

    sm_compile_options o;
    sm_compile_options_init(&o);
    o.strands = (mode & 1) ? SM_STRAND_BOTH : SM_STRAND_FORWARD;
    unsigned kind = (mode >> 1) & 3;
    uint32_t shortest = UINT32_MAX;
    for (unsigned i = 0; i < npats; i++)
        if (pats[i].len < shortest) shortest = (uint32_t)pats[i].len;
    if (kind == 1 && shortest > 1) o.match = SM_MATCH_MISMATCHES, o.max_errors = 1;
    if (kind == 2 && shortest > 1) o.match = SM_MATCH_EDITS, o.max_errors = 1;
    if (kind == 3 && shortest > 1) o.match = SM_MATCH_EDITS, o.max_errors = 1, o.report = SM_REPORT_ENDS;
    sm_db *db = NULL;
    sm_error err;
    if (sm_compile(pats, npats, &o, &db, &err) != SM_OK) {
        free(text);
        return 0;
    }
    static const size_t chunks[] = {0, 64, 1000, 4096, 65536, 1 << 20, 300, 0};
    unsigned threads = 1 + ((mode >> 3) & 3) % 3;
    size_t chunk = chunks[(sizes >> 2) & 7];
    int count_only = (mode >> 5) & 1;
    uint64_t total = 0, want = 0;
    if (run(db, text, len, threads, chunk, count_only, &total) == 0 &&
        run(db, text, len, 1, 0, 1, &want) == 0)
        FUZZ_CHECK(total == want, "%llu hits with %u threads and chunk %zu, %llu with one thread",
                   (unsigned long long)total, threads, chunk, (unsigned long long)want);
    sm_db_free(db);
    free(text);
    return 0;
}
