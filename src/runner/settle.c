/* Raw results into hits, for every backend (runner_internal.h): what a
 * scan finds of a segment (k-edit end events, k-mismatch windows that a
 * PAM must filter, hits) becomes the hits it owns, sorted, and the runs of
 * edit ends that touch its borders, which delivery joins with the
 * neighbours' (deliver.c). The CPU backend settles each segment on the
 * thread that scanned it; backends that scan elsewhere (the GPU) settle a
 * landed batch here, a segment per task on the runner's team. Each team
 * thread has its own tables (start recovery caches). */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/engine_set.h"
#include "base/team.h"
#include "runner/runner_internal.h"

typedef struct sm_settle {
    sm_results *per_thread;  /* one per team thread */
    unsigned threads;
} sm_settle;

int sm_settle_open(sm_runner *r) {
    unsigned n = sm_team_threads(r->team);
    sm_settle *st = calloc(1, sizeof *st);
    if (st) st->per_thread = calloc(n, sizeof *st->per_thread);
    if (!st || !st->per_thread) {
        free(st);
        return SM_ERR_NOMEM;
    }
    st->threads = n;
    r->settle = st;
    return SM_OK;
}

void sm_settle_close(sm_runner *r) {
    sm_settle *st = r->settle;
    if (!st) return;
    for (unsigned t = 0; t < st->threads; t++) sm_results_free(&st->per_thread[t]);
    free(st->per_thread);
    free(st);
    r->settle = NULL;
}

int sm_runner_settle(sm_runner *r, unsigned tid, const sm_segment *s, const uint8_t *text, sm_sink *sink, size_t from,
                     sm_run_list *borders) {
    sm_results *res = &r->settle->per_thread[tid < r->settle->threads ? tid : 0];
    /* A segment's first owned end is own_lo + 1 (edits own ends by their last byte). */
    return sm_results_settle(res, r->db, sink, from, text, s->scan_len, s->pos0, s->own_lo + 1, sm_segment_owned_end(s),
                             borders);
}

typedef struct {
    sm_runner *r;
    sm_batch *b;
    sm_settle_piece *pieces;
    atomic_int failed;
} batch_job;

static void settle_one(void *arg, size_t i, unsigned tid) {
    batch_job *j = arg;
    sm_segment *s = &j->b->segs[i];
    sm_settle_piece *p = &j->pieces[i];
    p->runs.n = 0;
    if (p->n) {
        sm_sink sink;
        memset(&sink, 0, sizeof sink);
        sink.hits = p->hits;
        sink.n = p->n;
        sink.cap = p->n;
        if (sm_runner_settle(j->r, tid, s, j->b->buf + s->buf_off, &sink, 0, &p->runs) != SM_OK) atomic_store(&j->failed, 1);
        p->n = sink.n;
    }
    s->hits = p->hits;
    s->nhits = p->n;
    s->runs = p->runs.runs;
    s->nruns = p->runs.n;
}

int sm_runner_settle_batch(sm_runner *r, sm_batch *b, sm_settle_piece *pieces) {
    batch_job j = {r, b, pieces, 0};
    sm_team_for(r->team, b->nsegs, settle_one, &j, 0);
    return atomic_load(&j.failed) ? SM_ERR_NOMEM : SM_OK;
}
