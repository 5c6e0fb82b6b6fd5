/* Delivery of landed batches, segment by segment, in record order, on the
 * calling thread: the same for every backend.
 *
 * Exact and k-mismatch segments own the hits that start in them, so their
 * sorted hits go out as they come. k-edit hits are owned by their end and a
 * later segment's hit may start before an earlier one's, so hits are held
 * back until no later segment can precede them; a run of ends cut by a
 * segment border is joined with its continuation first (the earlier part
 * wins ties: leftmost best end). Overlap-free segments get the same held
 * delivery, for the hits found before their start. The held list and the
 * joining of runs are ordered.h's, which the merge of shares uses too. */
#include <stdlib.h>

#include "runner/ordered.h"
#include "runner/runner_internal.h"
#include "runner/runner_part.h"

/* A run waiting for its continuation, with its text. */
typedef struct {
    sm_open_run run;
    const uint8_t *text; /* of its best hit */
} held_run;

typedef struct sm_delivery {
    sm_held held;        /* in order */
    sm_held extra;       /* a segment's hits from joined runs and fixes, before they are merged */
    held_run *open_runs, *next_runs;
    size_t nopen, nnext, runs_cap;
    sm_buf carry;        /* texts of held hits and runs whose batch is gone */
} sm_delivery;

int sm_delivery_open(sm_runner *r) {
    r->delivery = calloc(1, sizeof *r->delivery);
    return r->delivery ? SM_OK : SM_ERR_NOMEM;
}

void sm_delivery_close(sm_runner *r) {
    sm_delivery *d = r->delivery;
    if (!d) return;
    sm_held_free(&d->held);
    sm_held_free(&d->extra);
    free(d->open_runs);
    free(d->next_runs);
    sm_buf_free(&d->carry);
    free(d);
    r->delivery = NULL;
}

int sm_runner_emit(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    if (r->limits) return sm_limits_take(r, record, x, text);
    return sm_runner_emit_out(r, record, x, text);
}

int sm_runner_emit_out(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    r->counts[x->pattern]++;
    r->total++;
    if (r->count_only) return SM_OK;
    if (r->sums) {
        sm_record_sums_hit(r, x);
        return SM_OK;
    }
    sm_hit h;
    h.record = record;
    h.start = x->start;
    h.end = x->end;
    h.pattern = x->pattern;
    h.strand = x->reverse ? '-' : '+';
    h.errors = x->errors;
    h.text = (const char *)text;
    /* pad 1: a partial hit (src/runner/ends.c) */
    int (*to)(const sm_hit *, void *) = x->pad && r->opt.on_partial_hit ? r->opt.on_partial_hit : r->opt.on_hit;
    return to(&h, r->opt.ctx) != 0 ? SM_ERR_TERMINATED : SM_OK;
}

/* Every hit a segment owns (none in a circular record's appended head past
   its length); an anchored runner keeps the anchored ones. */
static int emit(sm_runner *r, const sm_segment *s, const sm_rawhit *x, const uint8_t *text) {
    if (x->start >= s->start_limit) return SM_OK;
    if (r->anchor) return sm_anchor_take(r, s->record, x, text);
    if (r->ends) return sm_ends_take(r, s->record, x, text);
    return sm_runner_emit(r, s->record, x, text);
}

static int hold(sm_delivery *d, const sm_rawhit *x, const uint8_t *text) { return sm_held_push(&d->extra, x, text); }

static int push_run(sm_delivery *d, const sm_open_run *run, const uint8_t *text) {
    if (d->nnext == d->runs_cap) {
        size_t cap = d->runs_cap ? d->runs_cap * 2 : 64;
        held_run *a = realloc(d->open_runs, cap * sizeof *a);
        if (!a) return SM_ERR_NOMEM;
        d->open_runs = a;
        held_run *b = realloc(d->next_runs, cap * sizeof *b);
        if (!b) return SM_ERR_NOMEM;
        d->next_runs = b;
        d->runs_cap = cap;
    }
    d->next_runs[d->nnext].run = *run;
    d->next_runs[d->nnext].text = text;
    d->nnext++;
    return SM_OK;
}

/* A part's run whose best is final: one touching an open border of the part
   goes to the part callbacks (its neighbour part may go on with it), any
   other becomes a hit. */
static int settle_run(sm_runner *r, const sm_segment *s, const held_run *h, int touches_right);

static int hold_run_hit(sm_delivery *d, const held_run *h) {
    sm_rawhit x = {h->run.best_start, h->run.best_end, h->run.pattern, (uint16_t)h->run.best_distance,
                   h->run.reverse, 0};
    return hold(d, &x, h->text);
}

static int settle_run(sm_runner *r, const sm_segment *s, const held_run *h, int touches_right) {
    unsigned side = (h->run.first_end == s->part_first_end ? SM_PART_LEFT : 0) |
                    (touches_right && s->part_right_open ? SM_PART_RIGHT : 0);
    if (!side || !r->part_cb) return hold_run_hit(r->delivery, h);
    r->part_cb->border(s->record, &h->run, h->text, side, r->part_cb->ctx);
    return SM_OK;
}

typedef struct {
    sm_runner *r;
    const sm_segment *s;
} emit_ctx;

static int emit_held(void *ctx, const sm_rawhit *x, const uint8_t *text) {
    emit_ctx *e = ctx;
    return emit(e->r, e->s, x, text);
}

/* Joins the segment's border runs with the runs left open by the previous
   segment, holds its hits, and delivers the held hits that no later segment
   can precede. */
static int deliver_held(sm_runner *r, const sm_batch *b, const sm_segment *s) {
    sm_delivery *d = r->delivery;
    const uint8_t *base = b->buf + s->buf_off;
    d->nnext = 0;
    d->extra.n = 0;
    if (s->part_left_first && r->part_cb) {
        /* which runs touch the part's left border, before any of its hits */
        uint32_t few[64], *keys = s->nruns <= 64 ? few : malloc(s->nruns * sizeof *keys);
        if (!keys) return SM_ERR_NOMEM;
        size_t n = 0;
        for (size_t j = 0; j < s->nruns; j++)
            if (s->runs[j].touches_left && s->runs[j].first_end == s->part_first_end)
                keys[n++] = sm_output_id(s->runs[j].pattern, s->runs[j].reverse);
        r->part_cb->left_keys(s->record, keys, n, r->part_cb->ctx);
        if (keys != few) free(keys);
    }
    for (size_t j = 0; j < s->nruns; j++) {
        sm_open_run run = s->runs[j];
        const uint8_t *text = base + (run.best_start - s->pos0);
        for (size_t o = 0; o < d->nopen; o++) {
            held_run *prev = &d->open_runs[o];
            int joined = prev->run.pattern == UINT32_MAX ? 0 : sm_open_run_join(&run, &prev->run);
            if (!joined) continue;
            if (joined == 2) text = prev->text;
            prev->run.pattern = UINT32_MAX; /* continued */
            break;
        }
        int continues = run.touches_right && !s->last_of_record;
        int rc = continues ? push_run(d, &run, text) : settle_run(r, s, &(held_run){run, text}, run.touches_right);
        if (rc != SM_OK) return rc;
    }
    for (size_t o = 0; o < d->nopen; o++)
        if (d->open_runs[o].run.pattern != UINT32_MAX && settle_run(r, s, &d->open_runs[o], 0) != SM_OK)
            return SM_ERR_NOMEM;

    held_run *t = d->open_runs;
    d->open_runs = d->next_runs;
    d->next_runs = t;
    d->nopen = d->nnext;
    d->nnext = 0;

    for (size_t j = 0; j < s->nfixes; j++)
        if (hold(d, &s->fixes[j], sm_segment_text(base, s->pos0, s->fixes[j].start)) != SM_OK) return SM_ERR_NOMEM;
    sm_held_sort(&d->extra);
    /* Later segments own ends past own_hi, so their hits start after
       own_hi - reach; an open run's final best is its best so far or such a hit. */
    uint64_t limit = UINT64_MAX;
    if (!s->last_of_record) {
        uint64_t reach = sm_db_reach(sm_db_head(r->db));
        uint64_t owned_end = sm_segment_owned_end(s); /* later segments own ends past it */
        limit = owned_end + 1 > reach ? owned_end + 1 - reach : 0;
        for (size_t o = 0; o < d->nopen; o++)
            if (d->open_runs[o].run.best_start < limit) limit = d->open_runs[o].run.best_start;
    }
    /* Three sorted lists merged: the hits held before, the segment's own
       (sorted by its scan) and the few above. Those starting before limit
       are delivered, the rest held in order. */
    emit_ctx e = {r, s};
    int rc = sm_held_merge(&d->held, s->hits, s->nhits, base, s->pos0, &d->extra, limit, emit_held, &e);
    if (rc != SM_OK) return rc;
    if (s->last_of_record) d->carry.len = 0;
    return SM_OK;
}

/* Before the batch buffer is refilled: copies the texts of the hits and runs
   still held into the carry buffer. */
static int keep_held_texts(sm_delivery *d) {
    size_t need = 0;
    for (size_t i = 0; i < d->held.n; i++) need += d->held.v[i].hit.end - d->held.v[i].hit.start;
    for (size_t i = 0; i < d->nopen; i++) need += d->open_runs[i].run.best_end - d->open_runs[i].run.best_start;
    sm_buf fresh = {0};
    if (sm_buf_reserve(&fresh, need + 1) != SM_OK) return SM_ERR_NOMEM;
    for (size_t i = 0; i < d->held.n; i++) {
        size_t n = d->held.v[i].hit.end - d->held.v[i].hit.start;
        memcpy(fresh.data + fresh.len, d->held.v[i].text, n);
        d->held.v[i].text = fresh.data + fresh.len;
        fresh.len += n;
    }
    for (size_t i = 0; i < d->nopen; i++) {
        size_t n = d->open_runs[i].run.best_end - d->open_runs[i].run.best_start;
        memcpy(fresh.data + fresh.len, d->open_runs[i].text, n);
        d->open_runs[i].text = fresh.data + fresh.len;
        fresh.len += n;
    }
    sm_buf_free(&d->carry);
    d->carry = fresh;
    return SM_OK;
}

/* One segment's hits (or a piece of a dense one's), then its record's end. */
static int deliver_segment(sm_runner *r, const sm_batch *b, const sm_segment *s) {
    if (s->summed && r->sums) sm_record_sums_segment(r, s);
    /* Edit hits are stored even when only counted: runs must be joined first. */
    if (r->edits || (r->held_delivery && !r->opt.count_only)) {
        int rc = deliver_held(r, b, s);
        if (rc != SM_OK) return rc;
    } else {
        if (r->held_delivery)
            for (size_t j = 0; j < s->nfixes; j++) {
                r->counts[s->fixes[j].pattern]++;
                r->total++;
            }
        for (size_t j = 0; j < s->nhits; j++) {
            const sm_rawhit *x = &s->hits[j];
            int rc = emit(r, s, x, b->buf + s->buf_off + (x->start - s->pos0));
            if (rc != SM_OK) return rc;
        }
    }
    if (s->last_of_record && r->anchor) {
        int rc = sm_anchor_record_done(r, s->record);
        if (rc != SM_OK) return rc;
    }
    if (s->last_of_record && r->ends) {
        int rc = sm_ends_record_done(r, s->record);
        if (rc != SM_OK) return rc;
    }
    if (s->last_of_record && r->limits) {
        int rc = sm_limits_record_done(r, s->record);
        if (rc != SM_OK) return rc;
    }
    if (s->last_of_record && r->sums && !r->count_only) {
        int rc = sm_record_sums_done(r, s->record);
        if (rc != SM_OK) return rc;
    }
    if (s->last_of_record && r->opt.on_record_done) r->opt.on_record_done(s->record, r->opt.ctx);
    return SM_OK;
}

int sm_deliver_batch(sm_runner *r, const sm_batch *b) {
    for (size_t i = 0; i < b->nsegs; i++) {
        const sm_segment *s = &b->segs[i];
        int rc = s->dense ? sm_deliver_dense(r, b, s, deliver_segment) : deliver_segment(r, b, s);
        if (rc != SM_OK) return rc;
    }
    if (r->held_delivery && (r->delivery->held.n || r->delivery->nopen)) return keep_held_texts(r->delivery);
    return SM_OK;
}
