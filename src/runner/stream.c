/* Streams: one sequence fed in pieces, on the calling thread. A stream is
 * the runner with the CPU backend and one thread, which already carries
 * state across pieces, keeps the text a hit needs and resolves runs of
 * edit ends across its segments. */
#include <stdlib.h>

#include "runner/runner_internal.h"

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
    if (!out) return SM_ERR_INVALID;
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
