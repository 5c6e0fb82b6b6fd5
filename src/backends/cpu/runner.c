/* The CPU backend: records are appended to a batch buffer and cut into
 * segments; a long record gives several segments that overlap by
 * (longest pattern - 1) bytes, each owning the hits that start inside it, so
 * every hit is counted once. Consecutive segments are grouped into work items
 * of about one chunk; worker threads scan the items of a batch in parallel,
 * then the calling thread delivers the hits segment by segment, in order.
 * Memory: the batch buffer (threads x 4 chunks + overlap) plus the hits of
 * one batch, whatever the record sizes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/internal.h"

#define DEFAULT_CHUNK (1u << 20)
#define ITEMS_PER_THREAD 4

typedef struct {
    uint64_t record;
    size_t buf_off;     /* first byte scanned, in the batch buffer */
    size_t scan_len;    /* bytes scanned (owned part + overlap) */
    uint64_t pos0;      /* record coordinate of buf_off */
    uint64_t own_hi;    /* owns hits starting in [pos0, own_hi) */
    int last_of_record; /* deliver on_record_done after this segment */
    size_t hit_lo, hit_hi; /* its hits in the item's sink */
} segment;

typedef struct {
    size_t seg_lo, seg_hi;
    sm_sink sink;
} work_item;

typedef struct sm_worker {
    struct sm_runner *runner;
    pthread_t thread;
    sm_engine_state state;
    uint64_t *counts; /* count mode: per pattern */
} worker;

struct sm_runner {
    const sm_db *db;
    sm_runner_options opt;
    unsigned threads;
    size_t chunk;
    size_t overlap;
    uint32_t pattern_count;

    uint8_t *buf;
    size_t buf_len, buf_cap;

    segment *segs;
    size_t nsegs, segs_cap;
    work_item *items;
    size_t nitems, items_cap;

    /* The open record: its bytes from own_from on are at buf[open_off ...]. */
    int record_open;
    uint64_t record_id;   /* current or next record number */
    uint64_t next_record;
    size_t open_off;      /* buffer offset of record coordinate own_from */
    uint64_t own_from;    /* first record coordinate not yet given to a segment */

    worker *workers;
    pthread_mutex_t lock;
    pthread_cond_t work_ready, work_done;
    uint64_t generation;  /* bumped per batch */
    size_t next_item;     /* next item to take (under lock) */
    unsigned busy;        /* workers still scanning this batch */
    int shutting_down;
    int threads_started;

    uint64_t *counts;
    uint64_t total;
    int status;           /* sticky: SM_ERR_TERMINATED or SM_ERR_NOMEM */
};

void sm_runner_options_init(sm_runner_options *opts) {
    memset(opts, 0, sizeof *opts);
}

static void scan_item(sm_runner *r, worker *w, work_item *it) {
    sm_sink *sink = &it->sink;
    sink->n = 0;
    sink->failed = 0;
    sink->counts = r->opt.count_only ? w->counts : NULL;
    for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
        segment *s = &r->segs[i];
        sink->own_lo = s->pos0;
        sink->own_hi = s->own_hi;
        s->hit_lo = sink->n;
        sm_engine_state_reset(r->db, &w->state);
        sm_scan_engines(r->db, &w->state, r->buf + s->buf_off, s->scan_len, s->pos0, sink);
        s->hit_hi = sink->n;
        if (!sink->counts) sm_sort_hits(sink->hits + s->hit_lo, s->hit_hi - s->hit_lo);
    }
}

/* Takes items until none is left; used by workers and the calling thread. */
static void drain_items(sm_runner *r, worker *w) {
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t i = r->next_item < r->nitems ? r->next_item++ : SIZE_MAX;
        pthread_mutex_unlock(&r->lock);
        if (i == SIZE_MAX) return;
        scan_item(r, w, &r->items[i]);
    }
}

static void *worker_main(void *arg) {
    worker *w = arg;
    sm_runner *r = w->runner;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        while (r->generation == seen && !r->shutting_down) pthread_cond_wait(&r->work_ready, &r->lock);
        if (r->shutting_down) {
            pthread_mutex_unlock(&r->lock);
            return NULL;
        }
        seen = r->generation;
        pthread_mutex_unlock(&r->lock);
        drain_items(r, w);
        pthread_mutex_lock(&r->lock);
        if (--r->busy == 0) pthread_cond_signal(&r->work_done);
        pthread_mutex_unlock(&r->lock);
    }
}

static int add_segment(sm_runner *r, size_t buf_off, size_t scan_len, uint64_t pos0, uint64_t own_hi, int last) {
    if (r->nsegs == r->segs_cap) {
        size_t cap = r->segs_cap ? r->segs_cap * 2 : 256;
        segment *p = realloc(r->segs, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        r->segs = p;
        r->segs_cap = cap;
    }
    segment *s = &r->segs[r->nsegs++];
    s->record = r->record_id;
    s->buf_off = buf_off;
    s->scan_len = scan_len;
    s->pos0 = pos0;
    s->own_hi = own_hi;
    s->last_of_record = last;
    s->hit_lo = s->hit_hi = 0;
    return SM_OK;
}

/* Gives the open record's buffered bytes to segments: whole chunks (with their
   overlap available) while the record goes on, everything at its end. */
static int cut_segments(sm_runner *r, int record_ends) {
    size_t avail = r->buf_len - r->open_off;
    while (avail >= r->chunk + r->overlap && !(record_ends && avail <= r->chunk)) {
        if (add_segment(r, r->open_off, r->chunk + r->overlap, r->own_from, r->own_from + r->chunk, 0) != SM_OK)
            return SM_ERR_NOMEM;
        r->open_off += r->chunk;
        r->own_from += r->chunk;
        avail -= r->chunk;
    }
    if (!record_ends) return SM_OK;
    while (avail > r->chunk) {
        if (add_segment(r, r->open_off, avail, r->own_from, r->own_from + r->chunk, 0) != SM_OK)
            return SM_ERR_NOMEM;
        r->open_off += r->chunk;
        r->own_from += r->chunk;
        avail -= r->chunk;
    }
    /* The last segment owns every remaining start, even of an empty record. */
    if (add_segment(r, r->open_off, avail, r->own_from, UINT64_MAX, 1) != SM_OK) return SM_ERR_NOMEM;
    r->open_off += avail;
    r->own_from += avail;
    return SM_OK;
}

static int group_items(sm_runner *r) {
    r->nitems = 0;
    size_t i = 0;
    while (i < r->nsegs) {
        if (r->nitems == r->items_cap) {
            size_t cap = r->items_cap ? r->items_cap * 2 : 64;
            work_item *p = realloc(r->items, cap * sizeof *p);
            if (!p) return SM_ERR_NOMEM;
            memset(p + r->items_cap, 0, (cap - r->items_cap) * sizeof *p);
            r->items = p;
            r->items_cap = cap;
        }
        work_item *it = &r->items[r->nitems++];
        it->seg_lo = i;
        size_t bytes = 0;
        do {
            bytes += r->segs[i].scan_len;
            i++;
        } while (i < r->nsegs && bytes + r->segs[i].scan_len <= r->chunk);
        it->seg_hi = i;
    }
    return SM_OK;
}

static int deliver_batch(sm_runner *r) {
    sm_hit h;
    for (size_t k = 0; k < r->nitems; k++) {
        work_item *it = &r->items[k];
        if (it->sink.failed) return SM_ERR_NOMEM;
        for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
            segment *s = &r->segs[i];
            if (!r->opt.count_only) {
                for (size_t j = s->hit_lo; j < s->hit_hi; j++) {
                    const sm_rawhit *x = &it->sink.hits[j];
                    r->counts[x->pattern]++;
                    r->total++;
                    h.record = s->record;
                    h.start = x->start;
                    h.end = x->end;
                    h.pattern = x->pattern;
                    h.strand = x->reverse ? '-' : '+';
                    h.errors = x->errors;
                    h.text = (const char *)r->buf + s->buf_off + (x->start - s->pos0);
                    if (r->opt.on_hit && r->opt.on_hit(&h, r->opt.ctx) != 0) return SM_ERR_TERMINATED;
                }
            }
            if (s->last_of_record && r->opt.on_record_done) r->opt.on_record_done(s->record, r->opt.ctx);
        }
    }
    return SM_OK;
}

/* Scans every segment cut so far, delivers, and keeps only the open record's
   unscanned bytes in the buffer. */
static int run_batch(sm_runner *r) {
    if (r->status != SM_OK) return r->status;
    if (r->nsegs > 0) {
        if (group_items(r) != SM_OK) return r->status = SM_ERR_NOMEM;
        pthread_mutex_lock(&r->lock);
        r->next_item = 0;
        r->busy = r->threads - 1;
        r->generation++;
        pthread_cond_broadcast(&r->work_ready);
        pthread_mutex_unlock(&r->lock);
        drain_items(r, &r->workers[0]);
        pthread_mutex_lock(&r->lock);
        while (r->busy > 0) pthread_cond_wait(&r->work_done, &r->lock);
        pthread_mutex_unlock(&r->lock);
        if (r->opt.count_only) {
            for (unsigned t = 0; t < r->threads; t++) {
                uint64_t *c = r->workers[t].counts;
                for (uint32_t p = 0; p < r->pattern_count; p++) {
                    r->counts[p] += c[p];
                    r->total += c[p];
                    c[p] = 0;
                }
            }
        }
        int rc = deliver_batch(r);
        r->nsegs = 0;
        if (rc != SM_OK) return r->status = rc;
    }
    if (r->record_open) {
        size_t keep = r->buf_len - r->open_off;
        memmove(r->buf, r->buf + r->open_off, keep);
        r->buf_len = keep;
        r->open_off = 0;
    } else {
        r->buf_len = 0;
        r->open_off = 0;
    }
    return SM_OK;
}

static unsigned online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void sm_runner_free(sm_runner *r) {
    if (!r) return;
    if (r->threads_started) {
        pthread_mutex_lock(&r->lock);
        r->shutting_down = 1;
        pthread_cond_broadcast(&r->work_ready);
        pthread_mutex_unlock(&r->lock);
        for (unsigned t = 1; t < r->threads; t++) pthread_join(r->workers[t].thread, NULL);
    }
    if (r->workers) {
        for (unsigned t = 0; t < r->threads; t++) {
            sm_engine_state_free(&r->workers[t].state);
            free(r->workers[t].counts);
        }
    }
    for (size_t i = 0; i < r->items_cap; i++) free(r->items[i].sink.hits);
    free(r->items);
    free(r->segs);
    free(r->buf);
    free(r->workers);
    free(r->counts);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->work_ready);
    pthread_cond_destroy(&r->work_done);
    free(r);
}

int sm_runner_create(const sm_db *db, const sm_runner_options *opts, sm_runner **out, sm_error *err) {
    *out = NULL;
    if (!db || !opts) return sm_set_error(err, SM_ERR_INVALID, "runner needs a database and options");
    if (!opts->count_only && !opts->on_hit)
        return sm_set_error(err, SM_ERR_INVALID, "runner needs a hit callback unless it only counts");
    sm_runner *r = calloc(1, sizeof *r);
    if (!r) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->work_ready, NULL);
    pthread_cond_init(&r->work_done, NULL);
    r->db = db;
    r->opt = *opts;
    r->threads = opts->threads ? opts->threads : online_cores();
    if (r->threads > 1024) r->threads = 1024;
    r->chunk = opts->chunk_size ? opts->chunk_size : DEFAULT_CHUNK;
    const sm_db_header *h = sm_db_head(db);
    r->overlap = h->max_length - 1;
    r->pattern_count = h->pattern_count;
    /* Room for several items per thread, and always for one chunk plus its overlap. */
    size_t batch = r->chunk * ITEMS_PER_THREAD * r->threads;
    if (batch / ITEMS_PER_THREAD / r->threads != r->chunk) batch = SIZE_MAX / 4;
    r->buf_cap = batch + r->overlap + 1;
    r->buf = malloc(r->buf_cap);
    r->counts = calloc(r->pattern_count, sizeof *r->counts);
    r->workers = calloc(r->threads, sizeof *r->workers);
    if (!r->buf || !r->counts || !r->workers) {
        sm_runner_free(r);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory for a batch buffer of %zu bytes", r->buf_cap);
    }
    for (unsigned t = 0; t < r->threads; t++) {
        worker *w = &r->workers[t];
        w->runner = r;
        if (sm_engine_state_init(db, &w->state) != SM_OK ||
            !(w->counts = calloc(r->pattern_count, sizeof *w->counts))) {
            sm_runner_free(r);
            return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        }
    }
    for (unsigned t = 1; t < r->threads; t++) {
        if (pthread_create(&r->workers[t].thread, NULL, worker_main, &r->workers[t]) != 0) {
            r->threads_started = 1;
            unsigned started = t;
            r->threads = started; /* join only those that exist */
            sm_runner_free(r);
            return sm_set_error(err, SM_ERR_NOMEM, "cannot start thread %u", t);
        }
    }
    r->threads_started = 1;
    *out = r;
    return SM_OK;
}

int sm_runner_end_record(sm_runner *r) {
    if (!r->record_open) return r->status;
    if (cut_segments(r, 1) != SM_OK) return r->status = SM_ERR_NOMEM;
    r->record_open = 0;
    /* A batch with many small records also fills up by segment count. */
    if (r->nsegs >= 65536) return run_batch(r);
    return r->status;
}

uint64_t sm_runner_begin_record(sm_runner *r) {
    if (r->record_open) sm_runner_end_record(r);
    r->record_open = 1;
    r->record_id = r->next_record++;
    r->open_off = r->buf_len;
    r->own_from = 0;
    return r->record_id;
}

int sm_runner_feed(sm_runner *r, const void *data, size_t len) {
    const uint8_t *p = data;
    if (r->status != SM_OK) return r->status;
    if (!r->record_open) sm_runner_begin_record(r);
    while (len > 0) {
        if (r->buf_len == r->buf_cap) {
            if (cut_segments(r, 0) != SM_OK) return r->status = SM_ERR_NOMEM;
            int rc = run_batch(r);
            if (rc != SM_OK) return rc;
            continue;
        }
        size_t n = r->buf_cap - r->buf_len;
        if (n > len) n = len;
        memcpy(r->buf + r->buf_len, p, n);
        r->buf_len += n;
        p += n;
        len -= n;
    }
    return SM_OK;
}

int sm_runner_flush(sm_runner *r) {
    if (r->status != SM_OK) return r->status;
    if (r->record_open && cut_segments(r, 0) != SM_OK) return r->status = SM_ERR_NOMEM;
    return run_batch(r);
}

const uint64_t *sm_runner_counts(const sm_runner *r) { return r->counts; }
uint64_t sm_runner_total(const sm_runner *r) { return r->total; }
