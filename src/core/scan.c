/* Scanning one sequence: block scans and counting. Hits are collected from
 * every engine into a sink, sorted into the deterministic order and then
 * handed to the callback. */
#include <stdlib.h>

#include "core/engine_set.h"
#include "core/internal.h"
#include "core/scan_internal.h"

struct sm_scratch {
    sm_engine_set set;
    sm_sink sink;
};

int sm_scratch_alloc_variant(const sm_db *db, const sm_variant *variant, sm_scratch **out) {
    if (!out) return SM_ERR_INVALID;
    *out = NULL;
    if (!db) return SM_ERR_INVALID;
    sm_scratch *s = calloc(1, sizeof *s);
    if (!s) return SM_ERR_NOMEM;
    if (sm_engine_set_init(&s->set, db, variant) != SM_OK) {
        free(s);
        return SM_ERR_NOMEM;
    }
    *out = s;
    return SM_OK;
}

int sm_scratch_alloc(const sm_db *db, sm_scratch **out) { return sm_scratch_alloc_variant(db, NULL, out); }

void sm_scratch_free(sm_scratch *s) {
    if (!s) return;
    sm_engine_set_free(&s->set);
    free(s->sink.hits);
    free(s);
}

static int deliver(const sm_rawhit *hits, size_t n, const uint8_t *text, uint64_t text_pos0, uint64_t record,
                   sm_hit_fn on_hit, void *ctx) {
    sm_hit h;
    h.record = record;
    for (size_t i = 0; i < n; i++) {
        h.start = hits[i].start;
        h.end = hits[i].end;
        h.pattern = hits[i].pattern;
        h.strand = hits[i].reverse ? '-' : '+';
        h.errors = hits[i].errors;
        h.text = text ? (const char *)text + (hits[i].start - text_pos0) : NULL;
        if (on_hit(&h, ctx) != 0) return SM_ERR_TERMINATED;
    }
    return SM_OK;
}

int sm_scan(const sm_db *db, sm_scratch *s, const void *data, size_t len, sm_hit_fn on_hit, void *ctx) {
    if (!db || !s || (!data && len) || !on_hit) return SM_ERR_INVALID;
    if (sm_engine_set_bind(&s->set, db) != SM_OK) return SM_ERR_NOMEM;
    s->sink.n = 0;
    s->sink.counts = NULL;
    s->sink.failed = 0;
    s->sink.own_lo = 0;
    s->sink.own_hi = UINT64_MAX;
    sm_engine_set_scan(&s->set, data, len, 0, &s->sink);
    sm_engine_set_finish(&s->set, len, &s->sink);
    if (s->sink.failed) return SM_ERR_NOMEM;
    if (sm_db_head(db)->match == SM_MATCH_EDITS) {
        if (sm_edits_resolve(db, &s->sink, 0, data, len, 0, 1, len, NULL) != SM_OK) return SM_ERR_NOMEM;
    } else {
        sm_sort_hits(s->sink.hits, s->sink.n);
    }
    return deliver(s->sink.hits, s->sink.n, data, 0, 0, on_hit, ctx);
}

static int count_hit(const sm_hit *hit, void *ctx) {
    ((uint64_t *)ctx)[hit->pattern]++;
    return 0;
}

int sm_count(const sm_db *db, sm_scratch *s, const void *data, size_t len, uint64_t *counts) {
    if (!db || !s || (!data && len) || !counts) return SM_ERR_INVALID;
    /* Runs of edit ends must be resolved to be counted as they are reported. */
    if (sm_db_head(db)->match == SM_MATCH_EDITS && sm_db_head(db)->report == SM_REPORT_BEST)
        return sm_scan(db, s, data, len, count_hit, counts);
    if (sm_engine_set_bind(&s->set, db) != SM_OK || sm_engine_set_counting(&s->set) != SM_OK) return SM_ERR_NOMEM;
    sm_sink sink = {0};
    sink.counts = counts;
    sink.own_hi = UINT64_MAX;
    /* Pieces of at most 1 GiB keep the 32-bit visit counters from overflowing. */
    const uint8_t *text = data;
    size_t done = 0;
    do {
        size_t piece = len - done > ((size_t)1 << 30) ? (size_t)1 << 30 : len - done;
        sm_engine_set_scan(&s->set, text + done, piece, done, &sink);
        sm_engine_set_fold(&s->set, counts);
        done += piece;
    } while (done < len);
    sm_engine_set_finish(&s->set, len, &sink);
    return SM_OK;
}

/* A stream is the CPU backend on the calling thread: the runner already
   carries state across pieces, keeps the text a hit needs and resolves runs
   of edit ends across its segments. */
struct sm_stream {
    sm_runner *runner;
    sm_hit_fn on_hit;
    void *ctx;
    int stopped;
};

static int stream_forward(const sm_hit *hit, void *ctx) {
    sm_stream *st = ctx;
    sm_hit h = *hit;
    h.record = 0;
    h.text = NULL; /* documented: streams do not keep the text */
    return st->on_hit(&h, st->ctx);
}

int sm_stream_open(const sm_db *db, sm_stream **out) {
    *out = NULL;
    if (!db) return SM_ERR_INVALID;
    sm_stream *st = calloc(1, sizeof *st);
    if (!st) return SM_ERR_NOMEM;
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.threads = 1;
    o.on_hit = stream_forward;
    o.ctx = st;
    if (sm_runner_create(db, &o, &st->runner, NULL) != SM_OK) {
        free(st);
        return SM_ERR_NOMEM;
    }
    *out = st;
    return SM_OK;
}

int sm_stream_feed(sm_stream *st, const void *data, size_t len, sm_hit_fn on_hit, void *ctx) {
    if (!st || (!data && len) || !on_hit) return SM_ERR_INVALID;
    if (st->stopped) return SM_ERR_TERMINATED;
    st->on_hit = on_hit;
    st->ctx = ctx;
    int rc = sm_runner_feed(st->runner, data, len);
    if (rc == SM_ERR_TERMINATED) st->stopped = 1;
    return rc;
}

int sm_stream_end(sm_stream *st, sm_hit_fn on_hit, void *ctx) {
    if (!st || !on_hit) return SM_ERR_INVALID;
    st->on_hit = on_hit;
    st->ctx = ctx;
    int rc = st->stopped ? SM_ERR_TERMINATED : sm_runner_end_record(st->runner);
    if (rc == SM_OK) rc = sm_runner_flush(st->runner);
    if (rc != SM_OK) {
        /* Start the next sequence afresh even after a stop. */
        sm_runner *fresh = NULL;
        const sm_db *db = sm_runner_db(st->runner);
        sm_runner_options o;
        sm_runner_options_init(&o);
        o.threads = 1;
        o.on_hit = stream_forward;
        o.ctx = st;
        if (sm_runner_create(db, &o, &fresh, NULL) == SM_OK) {
            sm_runner_free(st->runner);
            st->runner = fresh;
        }
    }
    st->stopped = 0;
    return rc;
}

void sm_stream_free(sm_stream *st) {
    if (!st) return;
    sm_runner_free(st->runner);
    free(st);
}
