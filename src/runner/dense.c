/* Dense segments: a backend with bounded hits (geometry.item_hits) stores
 * at most that many hits per work item. A segment whose hits passed the
 * bound comes back with none and `dense` set; delivery scans it again here,
 * on the calling thread, in pieces of its owned range small enough that
 * each piece's hits fit the bound, and hands each piece to the ordinary
 * delivery as a segment of its own. So memory stays bounded by the chunk
 * size and the thread count whatever the hit density: a piece that
 * overflows is halved and scanned again, one that holds few hits lets the
 * next piece grow; a piece of one owned byte has no bound (its hits are at
 * most the database's outputs at one position).
 *
 * A piece owns what its segment would own inside [a, e): exact and
 * k-mismatch hits that start there (its text runs on to e + longest - 1,
 * within the segment's), k-edit ends there (its text starts up to the
 * reach before a). Runs of edit ends cut at piece borders are joined on
 * delivery as at segment borders. Overlap-free segments never come here:
 * the backend does not bound them. */
#include <stdlib.h>

#include "core/engine_set.h"
#include "runner/runner_internal.h"

typedef struct sm_dense {
    sm_engine_set engines;
    sm_sink sink;
    sm_run_list borders;
} sm_dense;

void sm_dense_close(sm_runner *r) {
    sm_dense *d = r->dense;
    if (!d) return;
    sm_engine_set_free(&d->engines);
    free(d->sink.hits);
    free(d->borders.runs);
    free(d);
    r->dense = NULL;
}

static int dense_open(sm_runner *r) {
    if (r->dense) return SM_OK;
    sm_dense *d = calloc(1, sizeof *d);
    if (!d) return SM_ERR_NOMEM;
    if (sm_engine_set_init(&d->engines, r->db, r->variant) != SM_OK) {
        free(d);
        return SM_ERR_NOMEM;
    }
    r->dense = d;
    return SM_OK;
}

int sm_scan_piece(sm_runner *r, sm_engine_set *engines, sm_sink *sink, sm_run_list *borders, const sm_batch *b,
                  const sm_segment *s, uint64_t a, uint64_t e, int last, size_t limit, sm_segment *p) {
    uint64_t seg_end = s->pos0 + s->scan_len;
    *p = *s;
    p->dense = 0;
    uint64_t from = a, to;
    if (r->edits) {
        from = a - s->pos0 > r->lookback ? a - r->lookback : s->pos0;
        to = e;
        if (r->exact_beside) to = e + r->overlap < seg_end ? e + r->overlap : seg_end;
    } else {
        to = e + r->overlap < seg_end ? e + r->overlap : seg_end;
    }
    if (last) to = seg_end;
    p->pos0 = from;
    p->buf_off = s->buf_off + (size_t)(from - s->pos0);
    p->scan_len = (size_t)(to - from);
    p->own_lo = a;
    p->own_hi = last ? s->own_hi : e;
    p->last_of_record = last && s->last_of_record;
    p->part_left_first = a == s->own_lo ? s->part_left_first : 0;
    p->part_right_open = last ? s->part_right_open : 0;

    sink->n = 0;
    sink->counts = NULL;
    sink->failed = 0;
    sink->overflow = 0;
    sink->limit = limit;
    sink->own_lo = p->own_lo;
    sink->own_hi = p->own_hi;
    borders->n = 0;
    const uint8_t *text = b->buf + p->buf_off;
    sm_engine_set_reset(engines);
    sm_engine_set_scan(engines, text, p->scan_len, p->pos0, sink);
    sm_engine_set_finish(engines, p->pos0 + p->scan_len, sink);
    if (sink->failed) return SM_ERR_NOMEM;
    if (sink->overflow) return SM_ERR_LIMIT;
    if (sink->n && sm_engine_set_hits(engines, r->db, sink, 0, text, p->scan_len, p->pos0, p->own_lo + 1,
                                      sm_segment_owned_end(p), borders) != SM_OK)
        return SM_ERR_NOMEM;
    p->hits = sink->hits;
    p->nhits = sink->n;
    p->runs = borders->runs;
    p->nruns = borders->n;
    p->fixes = NULL;
    p->nfixes = 0;
    return SM_OK;
}

int sm_deliver_dense(sm_runner *r, const sm_batch *b, const sm_segment *s,
                     int (*deliver)(sm_runner *r, const sm_batch *b, const sm_segment *s)) {
    if (dense_open(r) != SM_OK) return SM_ERR_NOMEM;
    size_t limit = r->geo.item_hits;
    /* The owned range the scanned text can hold hits of. */
    uint64_t seg_end = s->pos0 + s->scan_len;
    uint64_t lo = s->own_lo, hi = s->own_hi < seg_end ? s->own_hi : seg_end;
    if (lo > hi) lo = hi;
    uint64_t piece = (hi - lo) / 16 + 1;
    uint64_t a = lo;
    do {
        uint64_t e = hi - a > piece ? a + piece : hi;
        int last = e == hi;
        sm_segment p;
        sm_dense *d = r->dense;
        int rc = sm_scan_piece(r, &d->engines, &d->sink, &d->borders, b, s, a, e, last, e - a > 1 ? limit : 0, &p);
        if (rc == SM_ERR_LIMIT) {
            piece = (e - a) / 2 > 0 ? (e - a) / 2 : 1;
            continue;
        }
        if (rc != SM_OK) return rc;
        rc = deliver(r, b, &p);
        if (rc != SM_OK) return rc;
        if (p.nhits < limit / 4) piece *= 2;
        a = e;
    } while (a < hi);
    return SM_OK;
}
