/* The CPU backend: the runner's thread team (base/team.h) scans the
 * segments of launched batches (src/runner/runner_internal.h has the shared
 * layer that cuts and delivers them), as the team's standing work.
 *
 * Consecutive segments are grouped into work items of about one chunk; the
 * worker threads take the items of the older launched batch first, then of
 * the one behind it. The calling thread lands a batch by scanning with the
 * workers until it is done, so no thread waits on another's last item, and
 * then delivers it while the workers go on with the next. With one thread
 * the ring has one buffer and the caller scans each batch when it lands.
 *
 * A feeder's jobs (the reader stripping line breaks, sm_runner_parallel_for)
 * run on the same team, taken before any item: the text the workers will
 * scan next is ready sooner, and no second team competes for the cores.
 * Each segment's raw results are settled into hits (edit ends resolved,
 * PAM windows filtered) by the runner's settle step on the thread that
 * scanned it.
 *
 * Counting: each thread counts into its own counters per ring buffer, and
 * its automaton or k-mer visits are folded into them whenever it moves to
 * the other buffer or runs out of work, so a batch's counts are complete
 * when it is done.
 *
 * Overlap-free (exact, DFA-only databases): segments read nothing past
 * their end; either every segment starts in its true DFA state, found
 * first by the engine's chunk composition (prefix mode, overlap_free.c), or
 * it starts at the root and its first bytes are scanned again from the true
 * state afterwards (speculation). */
#include <pthread.h>
#include <stdlib.h>

#include "backends/cpu/cpu_backend.h"
#include "core/engine_set.h"
#include "base/team.h"

#define DEFAULT_CHUNK (1u << 20)
#define ITEMS_PER_THREAD 4
/* Counting: every batch ends with work over every pattern's counters, so
   with many patterns the default chunk grows to COUNT_CHUNK_PER_PATTERN
   bytes per pattern, up to COUNT_CHUNK_MAX (bench/results/history.md,
   "Throughput against the number of patterns"). */
#define COUNT_CHUNK_PER_PATTERN 4u
#define COUNT_CHUNK_MAX (8u << 20)
/* A batch with this many segments (many small records) leaves. */
#define MAX_SEGMENTS 65536
/* Buffers from this size on ask for huge pages. */
#define BUFFER_HUGE_MIN ((size_t)4 << 20)
/* The least bound on an item's stored hits (384 KiB). */
#define ITEM_HITS_MIN ((size_t)16384)

/* Sums one item's segments (c->summed): their hits counted and summed on
   this thread in pieces, none stored (src/runner/summary.c). */
static void sum_item(cpu_backend *c, sm_batch *b, cpu_worker *w, cpu_batch *cb, cpu_item *it) {
    sm_runner *r = c->runner;
    it->sums.n = 0;
    for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
        sm_segment *s = &b->segs[i];
        cpu_seg *x = &cb->res[i];
        x->hit_lo = x->hit_hi = 0;
        x->run_lo = it->borders.n;
        x->sum_lo = it->sums.n;
        x->sum_hits = 0;
        x->dense = 0;
        it->bytes += s->scan_len;
        if (!it->failed &&
            sm_sum_segment(r, &w->summer, &w->engines, b, s, c->item_hits, w->counts[b->index], &it->borders,
                           r->sums ? &it->sums : NULL, &x->sum_hits) != SM_OK)
            it->failed = 1;
        x->run_hi = it->borders.n;
        x->sum_hi = it->sums.n;
    }
}

/* Scans one item: every segment from its start state, resolving edit ends. */
static void scan_item(cpu_backend *c, cpu_batch *cb, sm_batch *b, cpu_worker *w, cpu_item *it) {
    sm_runner *r = c->runner;
    sm_sink *sink = &it->sink;
    sink->n = 0;
    sink->failed = 0;
    sink->overflow = 0;
    sink->limit = c->item_hits;
    it->failed = 0;
    it->borders.n = 0;
    it->bytes = 0;
    it->most_hits = 0;
    it->dense = 0;
    /* Threads count only where every hit found is a hit reported (c->tally). */
    sink->counts = c->tally ? w->counts[b->index] : NULL;
    if (c->summed) {
        sum_item(c, b, w, cb, it);
        return;
    }
    for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
        sm_segment *s = &b->segs[i];
        cpu_seg *x = &cb->res[i];
        const uint8_t *text = b->buf + s->buf_off;
        sink->own_lo = s->own_lo;
        sink->own_hi = s->own_hi;
        x->hit_lo = sink->n;
        x->run_lo = it->borders.n;
        x->dense = 0;
        it->bytes += s->scan_len;
        if (sink->failed) {
            /* out of memory: the batch fails, the rest is not scanned */
            x->hit_hi = sink->n;
            x->run_hi = it->borders.n;
            continue;
        }
        sm_engine_set_reset(&w->engines);
        const sm_engine_slot *dfa = c->overlap_free ? sm_engine_set_dfa(&w->engines) : NULL;
        if (dfa) dfa->ops->set_dfa_state(dfa->state, s->start_state);
        sm_engine_set_scan(&w->engines, text, s->scan_len, s->pos0, sink);
        if (dfa) x->end_state = dfa->ops->dfa_state(dfa->state);
        sm_engine_set_finish(&w->engines, s->pos0 + s->scan_len, sink);
        if (sink->overflow) {
            /* Too many hits for the bound: none kept, delivery scans the
               segment again in pieces (src/runner/dense.c). */
            x->dense = 1;
            it->dense = 1;
            sink->n = x->hit_lo;
            sink->overflow = 0;
            x->hit_hi = sink->n;
            x->run_hi = it->borders.n;
            continue;
        }
        if (sink->n - x->hit_lo > it->most_hits) it->most_hits = sink->n - x->hit_lo;
        /* Stored results become hits (edit ends resolved, PAM windows
           filtered, sorted); counted ones are final. */
        if (!sink->counts && !sink->failed && sink->n > x->hit_lo &&
            sm_runner_settle(r, w->tid, s, text, sink, x->hit_lo, &it->borders) != SM_OK)
            it->failed = 1;
        x->hit_hi = sink->n;
        x->run_hi = it->borders.n;
    }
}

/* The next item to scan, the older batch's first (lock held), or NULL. */
static cpu_batch *take_item(cpu_backend *c, size_t *item) {
    cpu_batch *order[2] = {c->flight, c->queued};
    for (int k = 0; k < 2; k++) {
        cpu_batch *b = order[k];
        if (b && b->next_item < b->nitems) {
            *item = b->next_item++;
            return b;
        }
    }
    return NULL;
}

static int batch_done(const cpu_batch *b) { return b->items_done == b->nitems && b->holders == 0; }

/* Adds the thread's visits to the counters of the batch they belong to
   (lock held on entry and exit, released while folding). */
static void fold_held(cpu_backend *c, cpu_worker *w) {
    cpu_batch *b = w->holding;
    pthread_mutex_unlock(&c->lock);
    sm_engine_set_fold(&w->engines, w->counts[b->batch->index]);
    pthread_mutex_lock(&c->lock);
    w->holding = NULL;
    if (--b->holders == 0 && batch_done(b)) pthread_cond_broadcast(&c->work_done);
}

/* Scans item i of b for thread w (lock held on entry and exit). */
static void run_item(cpu_backend *c, cpu_worker *w, cpu_batch *b, size_t i) {
    if (w->holding && w->holding != b) fold_held(c, w);
    if (c->tally && !w->holding) {
        w->holding = b;
        b->holders++;
    }
    pthread_mutex_unlock(&c->lock);
    scan_item(c, b, b->batch, w, &b->items[i]);
    pthread_mutex_lock(&c->lock);
    if (b->items[i].sink.failed || b->items[i].failed) {
        /* out of memory: the batch fails, its items not taken are skipped */
        b->items_done += b->nitems - b->next_item;
        b->next_item = b->nitems;
    }
    if (++b->items_done == b->nitems && batch_done(b)) pthread_cond_broadcast(&c->work_done);
}

/* The team's standing work: one item, or a fold of held visits; 0 when
   there is nothing to do. */
static int cpu_serve(void *arg, unsigned tid) {
    cpu_backend *c = arg;
    cpu_worker *w = &c->workers[tid < c->threads ? tid : 0];
    int did = 1;
    pthread_mutex_lock(&c->lock);
    size_t i;
    cpu_batch *b = take_item(c, &i);
    if (b) run_item(c, w, b, i);
    else if (w->holding) fold_held(c, w); /* before sleeping: its batch may be waited for */
    else did = 0;
    pthread_mutex_unlock(&c->lock);
    return did;
}

static int group_items(cpu_backend *c, cpu_batch *cb) {
    const sm_batch *b = cb->batch;
    cb->nitems = 0;
    if (b->nsegs > cb->res_cap) {
        cpu_seg *p = realloc(cb->res, b->nsegs * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        cb->res = p;
        cb->res_cap = b->nsegs;
    }
    size_t i = 0;
    while (i < b->nsegs) {
        if (cb->nitems == cb->items_cap) {
            size_t cap = cb->items_cap ? cb->items_cap * 2 : 64;
            cpu_item *p = realloc(cb->items, cap * sizeof *p);
            if (!p) return SM_ERR_NOMEM;
            memset(p + cb->items_cap, 0, (cap - cb->items_cap) * sizeof *p);
            cb->items = p;
            cb->items_cap = cap;
        }
        cpu_item *it = &cb->items[cb->nitems++];
        it->seg_lo = i;
        size_t bytes = 0;
        do {
            bytes += b->segs[i].scan_len;
            i++;
        } while (i < b->nsegs && bytes + b->segs[i].scan_len <= c->runner->chunk_now);
        it->seg_hi = i;
    }
    return SM_OK;
}

/* Hands batch b to the workers, behind the batch in flight if there is one;
   it stays in flight until it lands. Prefix-mode start states need the
   previous batch's end state, which sm_cpu_start_states carries forward, so
   they are found before launch. */
static int cpu_launch(void *backend, sm_batch *b) {
    cpu_backend *c = backend;
    cpu_batch *cb = &c->batches[b->index];
    cb->batch = b;
    if (c->overlap_free && !c->speculate && sm_cpu_start_states(c, b) != SM_OK) return SM_ERR_NOMEM;
    if (group_items(c, cb) != SM_OK) return SM_ERR_NOMEM;
    /* one item and nothing in flight: the caller scans it when it lands,
       unless the batch leaves early (input goes on: the workers scan it
       while the caller reads what follows) */
    if (c->threads > 1 && (cb->nitems > 1 || c->flight || b->early)) sm_team_start(c->runner->team);
    pthread_mutex_lock(&c->lock);
    cb->next_item = 0;
    cb->items_done = 0;
    cb->holders = 0;
    if (c->flight) c->queued = cb;
    else c->flight = cb;
    pthread_mutex_unlock(&c->lock);
    sm_team_wake(c->runner->team);
    return SM_OK;
}

/* Bounded hits: the chunk the next segments are cut at, from the densest
   item of the batch just landed: about half the bound per item (an item
   that passed it counts as 8 times the bound), growing back by doubling
   where hits are few. */
static void adapt_chunk(cpu_backend *c, const cpu_batch *cb) {
    sm_runner *r = c->runner;
    double density = 0; /* hits per byte */
    for (size_t k = 0; k < cb->nitems; k++) {
        const cpu_item *it = &cb->items[k];
        if (!it->bytes) continue;
        size_t hits = it->dense ? 8 * c->item_hits : it->most_hits;
        double d = (double)hits / (double)it->bytes;
        if (d > density) density = d;
    }
    size_t now = r->chunk_now, want = now;
    if (density > 0 && (double)now * density > (double)c->item_hits / 2)
        want = (size_t)((double)c->item_hits / 2 / density);
    else if ((double)now * density < (double)c->item_hits / 8)
        want = now * 2;
    if (want != now) sm_runner_set_chunk(r, want);
}

/* Lays the scanned results of b into its segments for delivery. */
static int publish(cpu_backend *c, cpu_batch *cb) {
    sm_batch *b = cb->batch;
    for (size_t k = 0; k < cb->nitems; k++) {
        const cpu_item *it = &cb->items[k];
        if (it->sink.failed || it->failed) return SM_ERR_NOMEM;
        for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
            sm_segment *s = &b->segs[i];
            const cpu_seg *x = &cb->res[i];
            s->hits = it->sink.hits ? it->sink.hits + x->hit_lo : NULL;
            s->nhits = x->hit_hi - x->hit_lo;
            s->runs = it->borders.runs ? it->borders.runs + x->run_lo : NULL;
            s->nruns = x->run_hi - x->run_lo;
            s->dense = (uint8_t)x->dense;
            s->summed = (uint8_t)c->summed;
            s->sum_hits = x->sum_hits;
            s->sums = c->summed && it->sums.v ? it->sums.v + x->sum_lo : NULL;
            s->nsums = c->summed ? x->sum_hi - x->sum_lo : 0;
        }
    }
    if (c->item_hits && !c->summed) adapt_chunk(c, cb);
    return c->speculate ? sm_cpu_verify_speculation(c, b) : SM_OK;
}

/* Scans with the workers until b, the older batch in flight, is done
   (taking items of the one behind it when the older has none left), then
   adds the threads' counters of its buffer: no thread counts into them
   again before the buffer is refilled and launched. A runner that failed or
   stopped skips the items not yet taken. */
static int cpu_land(void *backend, sm_batch *b) {
    cpu_backend *c = backend;
    sm_runner *r = c->runner;
    cpu_worker *w = &c->workers[0];
    cpu_batch *cb = &c->batches[b->index];
    pthread_mutex_lock(&c->lock);
    if (r->status != SM_OK) {
        cb->items_done += cb->nitems - cb->next_item;
        cb->next_item = cb->nitems;
    }
    while (!batch_done(cb)) {
        size_t i;
        cpu_batch *next = take_item(c, &i);
        if (next) run_item(c, w, next, i);
        else if (w->holding) fold_held(c, w);
        else pthread_cond_wait(&c->work_done, &c->lock);
    }
    c->flight = c->queued;
    c->queued = NULL;
    pthread_mutex_unlock(&c->lock);
    if (c->tally || c->summed) {
        for (unsigned t = 0; t < c->threads; t++) {
            uint64_t *counts = c->workers[t].counts[b->index];
            sm_runner_add_counts(r, counts);
            memset(counts, 0, r->pattern_count * sizeof *counts);
        }
    }
    if (r->status != SM_OK) return r->status;
    return publish(c, cb);
}

/* Idle: every launched batch is done (not only taken: a batch launched while
   the last items are still scanned would be small, and the caller would
   scan it itself). */
static int cpu_idle(void *backend) {
    cpu_backend *c = backend;
    if (c->threads == 1) return 0;
    if (!c->flight) return 1;
    pthread_mutex_lock(&c->lock);
    int idle = !c->queued && batch_done(c->flight);
    pthread_mutex_unlock(&c->lock);
    return idle;
}

static uint8_t *cpu_buffer(void *backend, unsigned index, size_t bytes) {
    cpu_backend *c = backend;
    uint8_t *p = realloc(c->batches[index].buf, bytes + SM_WRITE_SLACK);
    if (!p) return NULL;
    c->batches[index].buf = p;
    /* a large buffer is written once per batch by the reader: its first
       filling costs a page fault per 4 KiB on the thread that feeds */
    if (bytes >= BUFFER_HUGE_MIN) sm_advise_huge_pages(p, bytes + SM_WRITE_SLACK);
    return p;
}

static void cpu_close(void *backend) {
    cpu_backend *c = backend;
    if (!c) return;
    /* no worker of the team scans for it from here on */
    sm_team_serve(c->runner->team, NULL, NULL);
    if (c->workers) {
        for (unsigned t = 0; t < c->threads; t++) {
            sm_engine_set_free(&c->workers[t].engines);
            sm_summer_free(&c->workers[t].summer);
            free(c->workers[t].counts[0]);
            free(c->workers[t].counts[1]);
        }
    }
    for (int k = 0; k < 2; k++) {
        cpu_batch *b = &c->batches[k];
        for (size_t i = 0; i < b->items_cap; i++) {
            free(b->items[i].sink.hits);
            free(b->items[i].borders.runs);
            free(b->items[i].sums.v);
        }
        free(b->items);
        free(b->res);
        free(b->buf);
    }
    sm_cpu_overlap_free_close(c);
    free(c->workers);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->work_done);
    free(c);
}

static int cpu_open(sm_runner *r, sm_backend_geometry *geo, void **out, sm_error *err) {
    *out = NULL;
    cpu_backend *c = calloc(1, sizeof *c);
    if (!c) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->work_done, NULL);
    c->runner = r;
    const sm_db *db = r->db;
    const sm_runner_options *opts = &r->opt;
    const sm_db_header *h = sm_db_head(db);
    c->threads = sm_team_threads(r->team);
    c->chunk = opts->chunk_size ? opts->chunk_size : DEFAULT_CHUNK;
    if (!opts->chunk_size && opts->count_only && !r->edits) {
        uint64_t want = (uint64_t)r->pattern_count * COUNT_CHUNK_PER_PATTERN;
        if (want > c->chunk) c->chunk = want < COUNT_CHUNK_MAX ? (size_t)want : COUNT_CHUNK_MAX;
    }
    c->overlap_free = opts->overlap_free && sm_db_is_dfa_only(db);
    c->speculate = c->overlap_free && opts->overlap_free != SM_OVERLAP_FREE_PREFIX;
    /* Counting needs no starts: every edit end is one hit with --report ends.
       Runs (--report best) must be joined, and PAM hits filtered, first. */
    c->tally = opts->count_only && (!r->edits || h->report == SM_REPORT_ENDS) && !sm_db_filters_pam(h);
    /* A circular record's edit hits are kept by their start, known on delivery. */
    if (opts->circular && r->edits) c->tally = 0;
    /* Where threads cannot count as they scan, they sum (src/runner/summary.c),
       as they do for record summaries; anchored runners choose their hits on
       delivery, and overlap-free segments own hits found before them. */
    c->summed = !c->tally && !c->overlap_free && !r->anchor && !r->limits && !(r->ends && r->edits) &&
                (opts->count_only || r->sums);
    size_t keep_back = c->overlap_free ? h->max_length : r->lookback;
    /* Room for several items per thread, and always for one chunk plus what it reads around it. */
    size_t batch = c->chunk * ITEMS_PER_THREAD * c->threads;
    if (batch / ITEMS_PER_THREAD / c->threads != c->chunk) batch = SIZE_MAX / 4;
    geo->batches = c->threads > 1 ? 2 : 1; /* the second is filled while workers scan the first */
    geo->chunk = c->chunk;
    geo->buf_cap = batch + r->overlap + keep_back + 1;
    geo->max_segments = MAX_SEGMENTS;
    /* About a chunk per worker (from batch, already kept from overflowing). */
    geo->early_len = c->threads > 1 ? batch / ITEMS_PER_THREAD / c->threads * (c->threads - 1) + r->overlap + keep_back : 0;
    geo->overlap_free = c->overlap_free;
    geo->host_threads = c->threads;
    /* Stored hits are bounded (docs/architecture.md, "Memory"): an item
       keeps at most chunk / 64 of them (24 bytes each: 3/8 of its text),
       and at least ITEM_HITS_MIN. Threads that count store none, and
       overlap-free segments own what they find before their start too,
       which pieces cannot split. */
    if (!c->tally && !c->overlap_free) {
        c->item_hits = c->chunk / 64 > ITEM_HITS_MIN ? c->chunk / 64 : ITEM_HITS_MIN;
        if (r->variant && r->variant->item_hits) c->item_hits = r->variant->item_hits;
        /* Summing threads keep no hit past a piece: no chunk to shrink, no
           dense segment to deliver. */
        if (!c->summed) {
            geo->item_hits = c->item_hits;
            geo->items_per_batch = (size_t)ITEMS_PER_THREAD * c->threads;
        }
    }
    c->workers = calloc(c->threads, sizeof *c->workers);
    int rc = c->workers ? SM_OK : sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    if (rc == SM_OK && c->overlap_free) rc = sm_cpu_overlap_free_open(c, err);
    for (unsigned t = 0; rc == SM_OK && t < c->threads; t++) {
        cpu_worker *w = &c->workers[t];
        w->cpu = c;
        w->tid = t;
        if (sm_engine_set_init(&w->engines, db, r->variant) != SM_OK || sm_summer_init(&w->summer, r) != SM_OK ||
            (c->tally && sm_engine_set_counting(&w->engines) != SM_OK) ||
            !(w->counts[0] = calloc(r->pattern_count, sizeof *w->counts[0])) ||
            (c->threads > 1 && !(w->counts[1] = calloc(r->pattern_count, sizeof *w->counts[1]))))
            rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    if (rc != SM_OK) {
        cpu_close(c);
        return rc;
    }
    if (c->threads > 1) sm_team_serve(r->team, cpu_serve, c);
    *out = c;
    return SM_OK;
}

const sm_backend_ops sm_backend_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .buffer = cpu_buffer,
    .launch = cpu_launch,
    .land = cpu_land,
    .idle = cpu_idle,
};
