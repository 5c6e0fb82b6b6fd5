/* Hits summed instead of stored, for runners whose caller needs no hit:
 * counting (count_only) and record summaries (on_record_summary).
 *
 * A scanning thread sums each segment it scans (sm_sum_segment): the
 * segment is scanned in pieces whose raw results fit a bound (a piece that
 * passes it is halved, one with few hits lets the next grow, one owned
 * byte has no bound), each piece's results are settled (edit ends into
 * runs, PAM windows filtered), its owned hits counted per pattern into the
 * thread's counters and, for record summaries, folded into each pattern's
 * least errors. Runs of edit ends cut at piece borders are joined here as
 * delivery joins them at segment borders (the earlier part wins ties); a
 * joined run is a hit of the segment unless it touches one of the
 * segment's own borders, and those go to delivery with the segment, which
 * joins them with its neighbours' and counts (or sums) the hits they end
 * in. A circular record's appended head counts only the hits that start
 * in the record (start_limit), on either side.
 *
 * So nothing a thread holds grows with the hits: one piece's raw results,
 * and per segment its border runs (at most two per pattern and strand) and
 * its patterns' least errors (at most one per pattern).
 *
 * Delivery (sm_record_sums_*) adds the segments' sums and the hits it
 * emits itself (joined runs, anchored hits, other backends' hits) per
 * record and hands each record's summary to the caller before its
 * record-done call. */
#include <stdlib.h>

#include "runner/ordered.h"
#include "runner/runner_internal.h"

/* ---------------------------------------------------- least errors */

static int least_init(sm_least_errors *t, uint32_t patterns) {
    size_t n = patterns ? patterns : 1;
    t->least = calloc(n, sizeof *t->least);
    t->touched = malloc(n * sizeof *t->touched);
    t->ntouched = 0;
    return t->least && t->touched ? SM_OK : SM_ERR_NOMEM;
}

static void least_free(sm_least_errors *t) {
    free(t->least);
    free(t->touched);
    t->least = t->touched = NULL;
}

static inline void least_add(sm_least_errors *t, uint32_t pattern, uint32_t errors) {
    uint32_t *l = &t->least[pattern];
    if (*l == 0) t->touched[t->ntouched++] = pattern;
    if (*l == 0 || errors + 1 < *l) *l = errors + 1;
}

static int by_pattern(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Appends the touched patterns, ascending, with their least errors to out
   and clears t. */
static int least_take(sm_least_errors *t, sm_pattern_errors_list *out) {
    if (out->cap - out->n < t->ntouched) {
        size_t cap = out->cap ? out->cap : 64;
        while (cap - out->n < t->ntouched) cap *= 2;
        sm_pattern_errors *v = realloc(out->v, cap * sizeof *v);
        if (!v) return SM_ERR_NOMEM;
        out->v = v;
        out->cap = cap;
    }
    if (t->ntouched > 1) qsort(t->touched, t->ntouched, sizeof *t->touched, by_pattern);
    for (size_t i = 0; i < t->ntouched; i++) {
        uint32_t p = t->touched[i];
        out->v[out->n].pattern = p;
        out->v[out->n].errors = t->least[p] - 1;
        out->n++;
        t->least[p] = 0;
    }
    t->ntouched = 0;
    return SM_OK;
}

/* ------------------------------------------------ scanning threads */

int sm_summer_init(sm_summer *z, const sm_runner *r) {
    memset(z, 0, sizeof *z);
    z->piece = UINT64_MAX;
    if (!r->sums) return SM_OK; /* counting only */
    return least_init(&z->least, r->pattern_count);
}

void sm_summer_free(sm_summer *z) {
    free(z->sink.hits);
    free(z->borders.runs);
    free(z->open.runs);
    free(z->next.runs);
    least_free(&z->least);
}

typedef struct {
    sm_summer *z;
    const sm_segment *s;
    uint64_t *counts;
} summing;

static inline void take(summing *m, uint64_t start, uint32_t pattern, uint32_t errors) {
    if (start >= m->s->start_limit) return;
    m->counts[pattern]++;
    m->z->hits++;
    if (m->z->least.least) least_add(&m->z->least, pattern, errors);
}

static void take_run(summing *m, const sm_open_run *run) {
    take(m, run->best_start, run->pattern, run->best_distance);
}

/* A run that touches one of the segment's borders: delivery joins it. */
static int pass_on(sm_run_list *runs, const sm_open_run *run) {
    return sm_run_list_push(runs, run);
}

/* The runs of a piece (the segment's first and/or last piece, or one in
   between), joined with those the previous piece left open. */
static int join_piece_runs(summing *m, const sm_segment *p, int first, int last, sm_run_list *runs) {
    sm_summer *z = m->z;
    z->next.n = 0;
    for (size_t j = 0; j < p->nruns; j++) {
        sm_open_run run = p->runs[j];
        if (!first) {
            int joined = 0;
            for (size_t o = 0; run.touches_left && o < z->open.n; o++) {
                sm_open_run *prev = &z->open.runs[o];
                if (prev->pattern == UINT32_MAX || !sm_open_run_join(&run, prev)) continue;
                run.touches_left = prev->touches_left; /* the segment's left border */
                prev->pattern = UINT32_MAX;            /* continued */
                joined = 1;
                break;
            }
            if (!joined) run.touches_left = 0; /* it touched only the piece's border */
        }
        int rc = SM_OK;
        if (run.touches_right && !last) rc = sm_run_list_push(&z->next, &run);
        else if (run.touches_left || run.touches_right) rc = pass_on(runs, &run);
        else take_run(m, &run);
        if (rc != SM_OK) return rc;
    }
    /* Runs of the previous piece that this one did not continue end there. */
    for (size_t o = 0; o < z->open.n; o++) {
        sm_open_run *prev = &z->open.runs[o];
        if (prev->pattern == UINT32_MAX) continue;
        prev->touches_right = 0;
        if (prev->touches_left) {
            if (pass_on(runs, prev) != SM_OK) return SM_ERR_NOMEM;
        } else {
            take_run(m, prev);
        }
    }
    sm_run_list t = z->open;
    z->open = z->next;
    z->next = t;
    z->next.n = 0;
    return SM_OK;
}

int sm_sum_segment(sm_runner *r, sm_summer *z, sm_engine_set *engines, const sm_batch *b, const sm_segment *s,
                   size_t limit, uint64_t *counts, sm_run_list *runs, sm_pattern_errors_list *sums, uint64_t *hits) {
    summing m = {z, s, counts};
    z->hits = 0;
    z->open.n = 0;
    z->least.ntouched = 0;
    /* The owned range the scanned text can hold hits of. */
    uint64_t seg_end = s->pos0 + s->scan_len;
    uint64_t lo = s->own_lo, hi = s->own_hi < seg_end ? s->own_hi : seg_end;
    if (lo > hi) lo = hi;
    uint64_t piece = z->piece;
    uint64_t a = lo;
    int rc = SM_OK;
    do {
        uint64_t e = hi - a > piece ? a + piece : hi;
        int last = e == hi, first = a == lo;
        sm_segment p;
        rc = sm_scan_piece(r, engines, &z->sink, &z->borders, b, s, a, e, last, e - a > 1 ? limit : 0, &p);
        if (rc == SM_ERR_LIMIT) {
            piece = (e - a) / 2 > 0 ? (e - a) / 2 : 1;
            rc = SM_OK;
            continue;
        }
        if (rc != SM_OK) break;
        for (size_t j = 0; j < p.nhits; j++) take(&m, p.hits[j].start, p.hits[j].pattern, p.hits[j].errors);
        rc = join_piece_runs(&m, &p, first, last, runs);
        if (rc != SM_OK) break;
        if (p.nhits < limit / 4 && piece <= UINT64_MAX / 2) piece *= 2;
        a = e;
    } while (a < hi);
    /* The next segment starts from the length that fitted here. */
    z->piece = piece;
    /* What a piece held is not kept past it (a dense stretch's bound). */
    if (z->sink.cap > limit * 2 && limit) {
        free(z->sink.hits);
        z->sink.hits = NULL;
        z->sink.cap = 0;
    }
    *hits = z->hits;
    if (rc == SM_OK && sums && z->least.least) rc = least_take(&z->least, sums);
    if (rc != SM_OK) {
        /* forget what was half summed */
        for (size_t i = 0; z->least.least && i < z->least.ntouched; i++) z->least.least[z->least.touched[i]] = 0;
        z->least.ntouched = 0;
    }
    return rc;
}

/* ----------------------------------------------------- delivery */

typedef struct sm_record_sums {
    sm_least_errors least;
    sm_pattern_errors_list out;
    uint64_t hits;
} sm_record_sums;

int sm_record_sums_open(sm_runner *r) {
    sm_record_sums *d = calloc(1, sizeof *d);
    if (!d) return SM_ERR_NOMEM;
    r->sums = d;
    return least_init(&d->least, r->pattern_count);
}

void sm_record_sums_close(sm_runner *r) {
    sm_record_sums *d = r->sums;
    if (!d) return;
    least_free(&d->least);
    free(d->out.v);
    free(d);
    r->sums = NULL;
}

void sm_record_sums_hit(sm_runner *r, const sm_rawhit *x) {
    sm_record_sums *d = r->sums;
    d->hits++;
    if (x->pattern < r->pattern_count) least_add(&d->least, x->pattern, x->errors);
}

void sm_record_sums_segment(sm_runner *r, const sm_segment *s) {
    sm_record_sums *d = r->sums;
    d->hits += s->sum_hits;
    for (size_t i = 0; i < s->nsums; i++)
        if (s->sums[i].pattern < r->pattern_count) least_add(&d->least, s->sums[i].pattern, s->sums[i].errors);
}

int sm_record_sums_done(sm_runner *r, uint64_t record) {
    sm_record_sums *d = r->sums;
    d->out.n = 0;
    if (least_take(&d->least, &d->out) != SM_OK) return SM_ERR_NOMEM;
    sm_record_summary summary = {record, d->hits, d->out.v, d->out.n};
    d->hits = 0;
    return r->opt.on_record_summary(&summary, r->opt.ctx) != 0 ? SM_ERR_TERMINATED : SM_OK;
}
