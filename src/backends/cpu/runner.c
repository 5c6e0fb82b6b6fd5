/* The CPU backend: records are appended to a batch buffer and cut into
 * segments, each owning a stretch of the record so that every hit is counted
 * once:
 *   - exact and k-mismatch hits have a fixed length: a segment owns the hits
 *     that start inside it and reads (longest pattern - 1) bytes past its end;
 *   - k-edit hits are found at their end: a segment owns the ends inside it
 *     and starts reading (longest pattern + k) bytes before its start, enough
 *     for every distance it reports to be exact. Runs of ends cut by a
 *     segment border are joined on delivery, and since a hit of a later
 *     segment may start before a hit of an earlier one, delivery holds hits
 *     back until no later segment can precede them.
 * Consecutive segments are grouped into work items of about one chunk;
 * worker threads scan the items of a batch in parallel, then the calling
 * thread delivers the hits segment by segment, in order.
 *
 * Batches are double-buffered so that the caller's own work (reading,
 * parsing, copying into the buffer, delivery) overlaps the scan: while the
 * workers scan one batch, the caller fills the other. When that one is full,
 * the caller launches it behind the batch in flight, helps scan until the
 * older batch is done (taking items of the newer one once the older has
 * none left, so that no thread waits on another's last item), delivers it
 * while the workers go on, copies the open record's unscanned bytes (and the
 * few before them that hits need) into the buffer just delivered, and
 * returns. A batch also leaves before it is full when the workers are idle
 * and it has a chunk for each of them: at the start, or when the caller is
 * slower than the scan. Batches are delivered in the order
 * they were launched; a buffer is refilled only once its hits are delivered
 * and the texts still held are copied out. When only counting, a thread's
 * counters are kept per buffer and its automaton or k-mer visits are folded
 * into them whenever it moves to the other buffer or runs out of work, so
 * a batch's counts are complete when it is. With one thread the caller
 * scans each batch as soon as it is launched, in a single buffer. Memory:
 * two batch buffers (threads x 4 chunks + reach each, grown to that as bytes
 * arrive) plus the hits of two batches, whatever the record sizes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/internal.h"
#include "backends/cuda/gpu_runner.h"
#include "engines/automaton/automaton.h"
#include "engines/dfa/dfa_internal.h"

#define DEFAULT_CHUNK (1u << 20)
#define ITEMS_PER_THREAD 4
/* Counting: every batch ends with work over every pattern's counters (the
   threads' counters folded and added up), so with many patterns the default
   chunk grows to COUNT_CHUNK_PER_PATTERN bytes per pattern, up to
   COUNT_CHUNK_MAX, to keep that work a small share of the scan: 10^6 31-mers
   over the panel, one thread 1.11 -> 1.00 s with 4 MiB chunks (medians of 5
   runs, alternating; two threads 0.75 s either way). */
#define COUNT_CHUNK_PER_PATTERN 4u
#define COUNT_CHUNK_MAX (8u << 20)
/* Batch buffers larger than this start at this size and double up to their
   full size as bytes arrive, so that a large chunk size costs memory only
   for input that is there (a short file never needs threads x 4 chunks). */
#define BUF_START ((size_t)64 << 20)

typedef struct {
    uint64_t record;
    size_t buf_off;     /* first byte scanned, in the batch buffer */
    size_t scan_len;    /* bytes scanned */
    uint64_t pos0;      /* record coordinate of buf_off */
    uint64_t own_lo, own_hi; /* owns hits starting (edits: ending) in [own_lo, own_hi) */
    int last_of_record; /* deliver on_record_done after this segment */
    size_t hit_lo, hit_hi; /* its hits in the item's sink */
    size_t run_lo, run_hi; /* k edits: its runs cut at a border, in the item's list */
    uint32_t start_state;  /* overlap-free: the automaton state at buf_off */
    uint32_t end_state;    /* overlap-free: the state its scan ended in */
    size_t fix_lo, fix_hi; /* speculative overlap-free: hits found by the re-scan, in the runner's list */
} segment;

typedef struct {
    size_t seg_lo, seg_hi;
    sm_sink sink;
    sm_run_list borders;
    int failed;
} work_item;

/* k edits: a hit held back, or a run waiting for its continuation. */
typedef struct {
    sm_rawhit hit;
    const uint8_t *text;
} held_hit;

typedef struct {
    sm_open_run run;
    const uint8_t *text; /* of its best hit */
} held_run;

/* A batch buffer with the segments cut from it and their work items. */
typedef struct {
    uint8_t *buf;
    size_t buf_len;
    size_t buf_alloc;     /* bytes allocated: grows to the runner's buf_cap as bytes arrive */
    segment *segs;
    size_t nsegs, segs_cap;
    work_item *items;
    size_t nitems, items_cap;
    size_t next_item;     /* next item to take (under lock) */
    size_t items_done;    /* items scanned (under lock) */
    unsigned holders;     /* threads holding visits of this batch not yet folded (under lock) */
    unsigned index;       /* 0 or 1: which counters of a thread it counts into */
} batch;

typedef struct sm_worker {
    struct sm_runner *runner;
    pthread_t thread;
    sm_engine_state state;
    uint64_t *counts[2]; /* count mode: per pattern, per batch buffer */
    batch *holding;      /* count mode: the batch its unfolded visits belong to (under lock) */
} worker;

struct sm_runner {
    const sm_db *db;
    sm_gpu_runner *gpu;   /* SM_BACKEND_CUDA: every call goes there */
    sm_runner_options opt;
    unsigned threads;
    size_t chunk;
    size_t overlap;
    uint32_t pattern_count;
    int edits;            /* k edits: end ownership, lookback, run joining */
    size_t lookback;      /* bytes read before a segment's first owned byte */
    int overlap_free;     /* exact automaton: no overlap, true start states */
    int held_delivery;    /* hits of a segment may start before the previous one's */
    size_t keep_back;     /* bytes kept before own_from for the matched text */
    sm_dfa *ac_dfa;       /* overlap-free: the automaton as a DFA, and its matcher */
    sm_dfa_matcher *ac_matcher;
    uint32_t carry_row;   /* overlap-free: automaton row offset at own_from */
    int speculate;        /* overlap-free by speculation from the root, verified afterwards */
    sm_sink fixes;        /* hits that start before their segment, found by the re-scans */
    size_t *cuts;
    uint32_t *rows;
    size_t cuts_cap;

    batch batches[2];     /* the second only with worker threads */
    batch *fill;          /* takes the fed bytes and the segments cut */
    batch *flight;        /* the older batch launched and not yet landed, or NULL (under lock) */
    batch *queued;        /* launched behind it, or NULL (under lock) */
    size_t buf_cap;       /* of each buffer */
    size_t early_len;     /* bytes that make a batch worth launching to idle workers */

    /* The open record: its bytes from own_from on are at fill->buf[open_off ...],
       and up to lookback bytes before them from fill->buf[open_base] on. */
    int record_open;
    uint64_t record_id;   /* current or next record number */
    uint64_t next_record;
    size_t open_off;      /* buffer offset of record coordinate own_from */
    size_t open_base;     /* buffer offset of the open record's first kept byte */
    uint64_t own_from;    /* first record coordinate not yet given to a segment */

    /* k edits, delivery side (current record only). */
    held_hit *held;
    size_t nheld, held_cap;
    held_run *open_runs, *next_runs;
    size_t nopen, nnext, runs_cap;
    sm_buf carry;         /* texts of held hits and runs whose batch is gone */

    worker *workers;
    pthread_mutex_t lock;
    pthread_cond_t work_ready, work_done;
    int tally;            /* count mode: threads count into their own counters */
    int shutting_down;
    int threads_started;

    uint64_t *counts;
    uint64_t total;
    int status;           /* sticky: SM_ERR_TERMINATED or SM_ERR_NOMEM */
};

void sm_runner_options_init(sm_runner_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

static void scan_item(sm_runner *r, batch *b, worker *w, work_item *it) {
    sm_sink *sink = &it->sink;
    sink->n = 0;
    sink->failed = 0;
    it->failed = 0;
    it->borders.n = 0;
    /* Runs of edit ends are counted once joined, so edits always store. */
    sink->counts = r->tally ? w->counts[b->index] : NULL;
    sink->ac_visits = sink->counts ? sm_engine_state_visits(r->db, &w->state) : NULL;
    sink->kt_visits = sink->counts ? sm_engine_state_kmer_visits(r->db, &w->state) : NULL;
    for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
        segment *s = &b->segs[i];
        const uint8_t *text = b->buf + s->buf_off;
        sink->own_lo = s->own_lo;
        sink->own_hi = s->own_hi;
        s->hit_lo = sink->n;
        s->run_lo = it->borders.n;
        sm_engine_state_reset(r->db, &w->state);
        w->state.automaton = s->start_state;
        sm_scan_engines(r->db, &w->state, text, s->scan_len, s->pos0, sink);
        s->end_state = w->state.automaton;
        sm_finish_engines(r->db, &w->state, s->pos0 + s->scan_len, sink);
        if (r->edits && !sink->failed) {
            uint64_t last_end = s->pos0 + s->scan_len;
            if (sm_edits_resolve(r->db, sink, s->hit_lo, text, s->scan_len, s->pos0, s->own_lo + 1, last_end,
                                 &it->borders) != SM_OK)
                it->failed = 1;
        } else if (!sink->counts && sink->n > s->hit_lo) {
            /* only with hits: sink->hits is still NULL before the first */
            sm_sort_hits(sink->hits + s->hit_lo, sink->n - s->hit_lo);
        }
        s->hit_hi = sink->n;
        s->run_hi = it->borders.n;
    }
}

/* The next item to scan, the older batch's first (lock held), or NULL. */
static batch *take_item(sm_runner *r, size_t *item) {
    batch *order[2] = {r->flight, r->queued};
    for (int k = 0; k < 2; k++) {
        batch *b = order[k];
        if (b && b->next_item < b->nitems) {
            *item = b->next_item++;
            return b;
        }
    }
    return NULL;
}

static int batch_done(const batch *b) {
    return b->items_done == b->nitems && b->holders == 0;
}

/* Adds the thread's visits to the counters of the batch they belong to
   (lock held on entry and exit, released while folding). */
static void fold_held(sm_runner *r, worker *w) {
    batch *b = w->holding;
    pthread_mutex_unlock(&r->lock);
    sm_fold_visits(r->db, &w->state, w->counts[b->index]);
    pthread_mutex_lock(&r->lock);
    w->holding = NULL;
    if (--b->holders == 0 && batch_done(b)) pthread_cond_broadcast(&r->work_done);
}

/* Scans item i of b for thread w (lock held on entry and exit). */
static void run_item(sm_runner *r, worker *w, batch *b, size_t i) {
    if (w->holding && w->holding != b) fold_held(r, w);
    if (r->tally && !w->holding) {
        w->holding = b;
        b->holders++;
    }
    pthread_mutex_unlock(&r->lock);
    scan_item(r, b, w, &b->items[i]);
    pthread_mutex_lock(&r->lock);
    if (++b->items_done == b->nitems && batch_done(b)) pthread_cond_broadcast(&r->work_done);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    sm_runner *r = w->runner;
    pthread_mutex_lock(&r->lock);
    while (!r->shutting_down) {
        size_t i;
        batch *b = take_item(r, &i);
        if (b) run_item(r, w, b, i);
        else if (w->holding) fold_held(r, w); /* before sleeping: its batch may be waited for */
        else pthread_cond_wait(&r->work_ready, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static int add_segment(sm_runner *r, size_t buf_off, size_t scan_len, uint64_t pos0, uint64_t own_lo, uint64_t own_hi,
                       int last) {
    batch *b = r->fill;
    if (b->nsegs == b->segs_cap) {
        size_t cap = b->segs_cap ? b->segs_cap * 2 : 256;
        segment *p = realloc(b->segs, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        b->segs = p;
        b->segs_cap = cap;
    }
    segment *s = &b->segs[b->nsegs++];
    s->record = r->record_id;
    s->buf_off = buf_off;
    s->scan_len = scan_len;
    s->pos0 = pos0;
    s->own_lo = own_lo;
    s->own_hi = own_hi;
    s->last_of_record = last;
    s->hit_lo = s->hit_hi = 0;
    s->run_lo = s->run_hi = 0;
    s->start_state = 0;
    s->end_state = 0;
    s->fix_lo = s->fix_hi = 0;
    return SM_OK;
}

/* Cuts one segment owning [own_from, own_from + own) of the open record. */
static int cut_one(sm_runner *r, size_t own, size_t ahead, int last) {
    size_t back = r->open_off - r->open_base;
    if (back > r->lookback) back = r->lookback;
    uint64_t own_lo = r->own_from, own_hi = last ? UINT64_MAX : r->own_from + own;
    /* Overlap-free segments own whatever they find: every hit ends inside. */
    if (r->overlap_free) own_lo = 0, own_hi = UINT64_MAX;
    if (add_segment(r, r->open_off - back, back + own + ahead, r->own_from - back, own_lo, own_hi, last) != SM_OK)
        return SM_ERR_NOMEM;
    r->open_off += own;
    r->own_from += own;
    return SM_OK;
}

/* Bytes a segment reads past the hits it owns: exact and k-mismatch hits
   start in it and run on for up to (longest pattern - 1) bytes; k-edit
   segments own ends and overlap-free ones read nothing past their end. */
static size_t read_ahead(const sm_runner *r) { return r->edits || r->overlap_free ? 0 : r->overlap; }

/* Gives the open record's buffered bytes to segments: whole chunks (with the
   bytes they read past their end) while the record goes on, everything at
   its end. */
static int cut_segments(sm_runner *r, int record_ends) {
    size_t ahead = read_ahead(r);
    size_t avail = r->fill->buf_len - r->open_off;
    while (avail >= r->chunk + ahead && !(record_ends && avail <= r->chunk)) {
        if (cut_one(r, r->chunk, ahead, 0) != SM_OK) return SM_ERR_NOMEM;
        avail -= r->chunk;
    }
    if (!record_ends) return SM_OK;
    while (avail > r->chunk) {
        if (cut_one(r, r->chunk, avail - r->chunk, 0) != SM_OK) return SM_ERR_NOMEM;
        avail -= r->chunk;
    }
    /* The last segment owns every remaining hit, even of an empty record. */
    return cut_one(r, avail, 0, 1);
}

static int group_items(sm_runner *r, batch *b) {
    b->nitems = 0;
    size_t i = 0;
    while (i < b->nsegs) {
        if (b->nitems == b->items_cap) {
            size_t cap = b->items_cap ? b->items_cap * 2 : 64;
            work_item *p = realloc(b->items, cap * sizeof *p);
            if (!p) return SM_ERR_NOMEM;
            memset(p + b->items_cap, 0, (cap - b->items_cap) * sizeof *p);
            b->items = p;
            b->items_cap = cap;
        }
        work_item *it = &b->items[b->nitems++];
        it->seg_lo = i;
        size_t bytes = 0;
        do {
            bytes += b->segs[i].scan_len;
            i++;
        } while (i < b->nsegs && bytes + b->segs[i].scan_len <= r->chunk);
        it->seg_hi = i;
    }
    return SM_OK;
}

static int emit(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    r->counts[x->pattern]++;
    r->total++;
    if (r->opt.count_only) return SM_OK;
    sm_hit h;
    h.record = record;
    h.start = x->start;
    h.end = x->end;
    h.pattern = x->pattern;
    h.strand = x->reverse ? '-' : '+';
    h.errors = x->errors;
    h.text = (const char *)text;
    return r->opt.on_hit(&h, r->opt.ctx) != 0 ? SM_ERR_TERMINATED : SM_OK;
}

/* The matched bytes of a hit at start in a segment whose text begins at
   base (record position pos0); overlap-free hits may start before it. */
static const uint8_t *text_at(const uint8_t *base, uint64_t pos0, uint64_t start) {
    return start >= pos0 ? base + (start - pos0) : base - (pos0 - start);
}

static int hold(sm_runner *r, const sm_rawhit *x, const uint8_t *text) {
    if (r->nheld == r->held_cap) {
        size_t cap = r->held_cap ? r->held_cap * 2 : 256;
        held_hit *p = realloc(r->held, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        r->held = p;
        r->held_cap = cap;
    }
    r->held[r->nheld].hit = *x;
    r->held[r->nheld].text = text;
    r->nheld++;
    return SM_OK;
}

static int push_run(sm_runner *r, const sm_open_run *run, const uint8_t *text) {
    if (r->nnext == r->runs_cap) {
        size_t cap = r->runs_cap ? r->runs_cap * 2 : 64;
        held_run *a = realloc(r->open_runs, cap * sizeof *a);
        if (!a) return SM_ERR_NOMEM;
        r->open_runs = a;
        held_run *b = realloc(r->next_runs, cap * sizeof *b);
        if (!b) return SM_ERR_NOMEM;
        r->next_runs = b;
        r->runs_cap = cap;
    }
    r->next_runs[r->nnext].run = *run;
    r->next_runs[r->nnext].text = text;
    r->nnext++;
    return SM_OK;
}

static int hold_run_hit(sm_runner *r, const held_run *h) {
    sm_rawhit x = {h->run.best_start, h->run.best_end, h->run.pattern, (uint16_t)h->run.best_distance,
                   h->run.reverse, 0};
    return hold(r, &x, h->text);
}

static int held_before(const void *pa, const void *pb) {
    const sm_rawhit *a = &((const held_hit *)pa)->hit, *b = &((const held_hit *)pb)->hit;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pattern != b->pattern) return a->pattern < b->pattern ? -1 : 1;
    return (int)a->reverse - (int)b->reverse;
}

static int same_key(const sm_open_run *a, const sm_open_run *b) {
    return a->pattern == b->pattern && a->reverse == b->reverse;
}

/* k edits: joins the segment's border runs with the runs left open by the
   previous segment, holds its hits, and delivers the held hits that no later
   segment can precede. */
static int deliver_edits(sm_runner *r, const batch *b, const work_item *it, const segment *s) {
    const uint8_t *base = b->buf + s->buf_off;
    r->nnext = 0;
    for (size_t j = s->run_lo; j < s->run_hi; j++) {
        sm_open_run run = it->borders.runs[j];
        const uint8_t *text = base + (run.best_start - s->pos0);
        for (size_t o = 0; o < r->nopen; o++) {
            held_run *prev = &r->open_runs[o];
            if (prev->run.pattern == UINT32_MAX || !same_key(&prev->run, &run) || !run.touches_left ||
                !prev->run.touches_right || prev->run.last_end + 1 != run.first_end)
                continue;
            /* One run: the earlier part wins ties (leftmost best end). */
            if (prev->run.best_distance <= run.best_distance) {
                run.best_end = prev->run.best_end;
                run.best_start = prev->run.best_start;
                run.best_distance = prev->run.best_distance;
                text = prev->text;
            }
            run.first_end = prev->run.first_end;
            prev->run.pattern = UINT32_MAX; /* continued */
            break;
        }
        int continues = run.touches_right && !s->last_of_record;
        int rc = continues ? push_run(r, &run, text) : hold_run_hit(r, &(held_run){run, text});
        if (rc != SM_OK) return rc;
    }
    for (size_t o = 0; o < r->nopen; o++)
        if (r->open_runs[o].run.pattern != UINT32_MAX && hold_run_hit(r, &r->open_runs[o]) != SM_OK)
            return SM_ERR_NOMEM;
    held_run *t = r->open_runs;
    r->open_runs = r->next_runs;
    r->next_runs = t;
    r->nopen = r->nnext;
    r->nnext = 0;

    for (size_t j = s->hit_lo; j < s->hit_hi; j++) {
        const sm_rawhit *x = &it->sink.hits[j];
        if (hold(r, x, text_at(base, s->pos0, x->start)) != SM_OK) return SM_ERR_NOMEM;
    }
    for (size_t j = s->fix_lo; j < s->fix_hi; j++) {
        const sm_rawhit *x = &r->fixes.hits[j];
        if (hold(r, x, text_at(base, s->pos0, x->start)) != SM_OK) return SM_ERR_NOMEM;
    }
    if (r->nheld > 1) qsort(r->held, r->nheld, sizeof *r->held, held_before);
    /* Later segments own ends past own_hi, so their hits start after
       own_hi - reach; an open run's final best is its best so far or such a hit. */
    uint64_t limit = UINT64_MAX;
    if (!s->last_of_record) {
        uint64_t reach = sm_db_reach(sm_db_head(r->db));
        uint64_t owned_end = s->pos0 + s->scan_len; /* later segments own ends past it */
        limit = owned_end + 1 > reach ? owned_end + 1 - reach : 0;
        for (size_t o = 0; o < r->nopen; o++)
            if (r->open_runs[o].run.best_start < limit) limit = r->open_runs[o].run.best_start;
    }
    size_t ready = 0;
    while (ready < r->nheld && r->held[ready].hit.start < limit) {
        int rc = emit(r, s->record, &r->held[ready].hit, r->held[ready].text);
        ready++;
        if (rc != SM_OK) return rc;
    }
    if (ready > 0 && ready < r->nheld) memmove(r->held, r->held + ready, (r->nheld - ready) * sizeof *r->held);
    r->nheld -= ready;
    if (s->last_of_record) r->carry.len = 0;
    return SM_OK;
}

/* Before the batch buffer is refilled: copies the texts of the hits and runs
   still held into the carry buffer. */
static int keep_held_texts(sm_runner *r) {
    size_t need = 0;
    for (size_t i = 0; i < r->nheld; i++) need += r->held[i].hit.end - r->held[i].hit.start;
    for (size_t i = 0; i < r->nopen; i++) need += r->open_runs[i].run.best_end - r->open_runs[i].run.best_start;
    sm_buf fresh = {0};
    if (sm_buf_reserve(&fresh, need + 1) != SM_OK) return SM_ERR_NOMEM;
    for (size_t i = 0; i < r->nheld; i++) {
        size_t n = r->held[i].hit.end - r->held[i].hit.start;
        memcpy(fresh.data + fresh.len, r->held[i].text, n);
        r->held[i].text = fresh.data + fresh.len;
        fresh.len += n;
    }
    for (size_t i = 0; i < r->nopen; i++) {
        size_t n = r->open_runs[i].run.best_end - r->open_runs[i].run.best_start;
        memcpy(fresh.data + fresh.len, r->open_runs[i].text, n);
        r->open_runs[i].text = fresh.data + fresh.len;
        fresh.len += n;
    }
    sm_buf_free(&r->carry);
    r->carry = fresh;
    return SM_OK;
}

static int deliver_batch(sm_runner *r, const batch *b) {
    for (size_t k = 0; k < b->nitems; k++) {
        const work_item *it = &b->items[k];
        if (it->sink.failed || it->failed) return SM_ERR_NOMEM;
        for (size_t i = it->seg_lo; i < it->seg_hi; i++) {
            const segment *s = &b->segs[i];
            /* Edit hits are stored even when only counted: runs must be joined first. */
            if (r->edits || (r->held_delivery && !r->opt.count_only)) {
                int rc = deliver_edits(r, b, it, s);
                if (rc != SM_OK) return rc;
            } else if (!r->opt.count_only) {
                for (size_t j = s->hit_lo; j < s->hit_hi; j++) {
                    const sm_rawhit *x = &it->sink.hits[j];
                    int rc = emit(r, s->record, x, b->buf + s->buf_off + (x->start - s->pos0));
                    if (rc != SM_OK) return rc;
                }
            }
            if (s->last_of_record && r->opt.on_record_done) r->opt.on_record_done(s->record, r->opt.ctx);
        }
    }
    if (r->held_delivery && (r->nheld || r->nopen)) return keep_held_texts(r);
    return SM_OK;
}

/* Speculative overlap-free: every segment was scanned from the root, which
   finds exactly its hits that start inside it. Its true start state is the
   true end state of the segment before; from there the automaton is run
   again, in step with a run from the root, until both are in the same state
   (for the dictionary automaton at most the longest pattern's length later,
   usually much sooner): the hits of that re-scan that start before the
   segment are the ones the speculation missed. Past that point the runs
   agree, so the segment's end state is exact. */
static int verify_speculation(sm_runner *r, batch *b) {
    const uint8_t *section = sm_db_automaton(r->db);
    const sm_db_pattern *patterns = sm_db_patterns(r->db);
    r->fixes.n = 0;
    r->fixes.failed = 0;
    r->fixes.counts = NULL;
    sm_sink none = {0};
    none.own_lo = 1, none.own_hi = 0; /* owns nothing */
    for (size_t i = 0; i < b->nsegs; i++) {
        segment *s = &b->segs[i];
        uint32_t truth = s->pos0 == 0 ? 0 : r->carry_row;
        s->fix_lo = r->fixes.n;
        uint32_t end = s->end_state;
        if (truth != 0) {
            uint32_t a = truth, root = 0; /* root: the speculative run */
            size_t k = 0;
            r->fixes.own_lo = 0;
            r->fixes.own_hi = s->pos0;
            const uint8_t *text = b->buf + s->buf_off;
            while (k < s->scan_len && a != root) {
                sm_ac_scan(section, patterns, &a, text + k, 1, s->pos0 + k, &r->fixes);
                sm_ac_scan(section, patterns, &root, text + k, 1, s->pos0 + k, &none);
                k++;
            }
            if (a != root) end = a; /* never met: the re-scan covered the whole segment */
        }
        s->fix_hi = r->fixes.n;
        if (r->fixes.failed) return SM_ERR_NOMEM;
        if (r->opt.count_only)
            for (size_t j = s->fix_lo; j < s->fix_hi; j++) {
                r->counts[r->fixes.hits[j].pattern]++;
                r->total++;
            }
        r->carry_row = end;
    }
    return SM_OK;
}

/* Overlap-free: the true automaton state at the start of every segment,
   record by record. A record's first segment starts at the root; one that
   goes on from the previous batch starts where that batch left it. */
static int start_states(sm_runner *r, batch *b) {
    const uint8_t *section = sm_db_automaton(r->db);
    uint32_t columns = ((const sm_ac_header *)section)->columns;
    segment *segs = b->segs;
    size_t i = 0;
    while (i < b->nsegs) {
        size_t j = i + 1;
        while (j < b->nsegs && segs[j].record == segs[i].record) j++;
        size_t chunks = j - i;
        if (chunks + 1 > r->cuts_cap) {
            size_t cap = (chunks + 1) * 2;
            size_t *c = realloc(r->cuts, cap * sizeof *c);
            if (!c) return SM_ERR_NOMEM;
            r->cuts = c;
            uint32_t *w = realloc(r->rows, cap * sizeof *w);
            if (!w) return SM_ERR_NOMEM;
            r->rows = w;
            r->cuts_cap = cap;
        }
        size_t base = segs[i].buf_off;
        for (size_t k = 0; k < chunks; k++) r->cuts[k] = segs[i + k].buf_off - base;
        r->cuts[chunks] = segs[j - 1].buf_off + segs[j - 1].scan_len - base;
        uint32_t first_row = segs[i].pos0 == 0 ? 0 : r->carry_row;
        if (sm_dfa_ac_chunk_states(r->ac_matcher, section, first_row, b->buf + base, r->cuts, chunks, r->threads,
                                   r->rows, NULL) != SM_OK)
            return SM_ERR_NOMEM;
        for (size_t k = 0; k < chunks; k++) segs[i + k].start_state = r->rows[k] / columns;
        r->carry_row = r->rows[chunks];
        i = j;
    }
    return SM_OK;
}

/* Hands the filling batch to the workers, behind the batch in flight if
   there is one; it stays in flight until land(). Its start states (prefix
   mode) need the previous batch's end state, which start_states itself
   carries forward, so they are found before launch. */
static int launch(sm_runner *r) {
    batch *b = r->fill;
    if (r->overlap_free && !r->speculate && start_states(r, b) != SM_OK) return SM_ERR_NOMEM;
    if (group_items(r, b) != SM_OK) return SM_ERR_NOMEM;
    pthread_mutex_lock(&r->lock);
    b->next_item = 0;
    b->items_done = 0;
    b->holders = 0;
    if (r->flight) r->queued = b;
    else r->flight = b;
    pthread_cond_broadcast(&r->work_ready);
    pthread_mutex_unlock(&r->lock);
    return SM_OK;
}

/* Scans with the workers until the older batch in flight is done (taking
   items of the one behind it when the older has none left), then folds the
   threads' counters of its buffer: no thread counts into them again before
   the buffer is refilled and launched. */
static batch *land(sm_runner *r) {
    worker *w = &r->workers[0];
    pthread_mutex_lock(&r->lock);
    batch *b = r->flight;
    while (!batch_done(b)) {
        size_t i;
        batch *next = take_item(r, &i);
        if (next) run_item(r, w, next, i);
        else if (w->holding) fold_held(r, w);
        else pthread_cond_wait(&r->work_done, &r->lock);
    }
    r->flight = r->queued;
    r->queued = NULL;
    pthread_mutex_unlock(&r->lock);
    if (r->tally) {
        for (unsigned t = 0; t < r->threads; t++) {
            uint64_t *c = r->workers[t].counts[b->index];
            for (uint32_t p = 0; p < r->pattern_count; p++) {
                r->counts[p] += c[p];
                r->total += c[p];
                c[p] = 0;
            }
        }
    }
    return b;
}

/* Verifies and delivers a batch that has landed; the next may be in flight. */
static int deliver_landed(sm_runner *r, batch *b) {
    int rc = r->speculate ? verify_speculation(r, b) : SM_OK;
    if (rc == SM_OK) rc = deliver_batch(r, b);
    b->nsegs = 0;
    b->nitems = 0;
    return rc;
}

/* Makes b's buffer hold at least need bytes (at most buf_cap): doubling,
   so that bytes fed one piece at a time cost few reallocations. Only a
   buffer that no batch in flight uses is grown. */
static int grow_buffer(sm_runner *r, batch *b, size_t need) {
    if (need > r->buf_cap) need = r->buf_cap;
    if (need <= b->buf_alloc) return SM_OK;
    size_t alloc = b->buf_alloc;
    while (alloc < need) alloc = alloc > r->buf_cap / 2 ? r->buf_cap : alloc * 2;
    uint8_t *p = realloc(b->buf, alloc);
    if (!p) return SM_ERR_NOMEM;
    b->buf = p;
    b->buf_alloc = alloc;
    return SM_OK;
}

/* Puts the open record's unscanned bytes, and the keep_back bytes before
   them, at the start of the buffer to, which then takes the fed bytes: the
   filling one itself, or with a batch in flight in it, the other (free:
   its batch was delivered). */
static int keep_tail(sm_runner *r, batch *to) {
    batch *from = r->fill;
    if (r->record_open) {
        size_t back = r->open_off - r->open_base;
        if (back > r->keep_back) back = r->keep_back;
        size_t start = r->open_off - back;
        size_t keep = from->buf_len - start;
        if (grow_buffer(r, to, keep) != SM_OK) {
            /* the status is sticky from here on: leave a consistent empty buffer */
            to->buf_len = 0;
            r->open_off = r->open_base = 0;
            r->fill = to;
            return SM_ERR_NOMEM;
        }
        memmove(to->buf, from->buf + start, keep);
        to->buf_len = keep;
        r->open_base = 0;
        r->open_off = back;
    } else {
        to->buf_len = 0;
        r->open_off = 0;
        r->open_base = 0;
    }
    r->fill = to;
    return SM_OK;
}

/* Scans every segment cut so far: launches the filling batch, lands the
   one in flight before it and delivers it while the workers scan; with wait
   (or no worker thread to leave it to) scans and delivers the new one too.
   The open record's unscanned bytes go on in a free buffer, even after a
   failed delivery: the buffer in flight must never take more segments. */
static int submit(sm_runner *r, int wait) {
    if (r->status != SM_OK) return r->status;
    int older = r->flight != NULL;
    if (r->fill->nsegs > 0 && launch(r) != SM_OK) return r->status = SM_ERR_NOMEM;
    int rc = older ? deliver_landed(r, land(r)) : SM_OK;
    if (rc == SM_OK && r->flight && (wait || r->threads == 1)) rc = deliver_landed(r, land(r));
    int kept = keep_tail(r, r->flight ? &r->batches[r->fill == &r->batches[0]] : r->fill);
    return r->status = rc != SM_OK ? rc : kept;
}

static unsigned online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void sm_runner_free(sm_runner *r) {
    if (!r) return;
    if (r->gpu) {
        sm_gpu_runner_free(r->gpu);
        free(r);
        return;
    }
    if (r->flight) {
        /* Workers may still be scanning: skip the items not yet taken and wait. */
        pthread_mutex_lock(&r->lock);
        batch *in_flight[2] = {r->flight, r->queued};
        for (int k = 0; k < 2; k++) {
            batch *b = in_flight[k];
            if (!b) continue;
            b->items_done += b->nitems - b->next_item;
            b->next_item = b->nitems;
        }
        if (r->workers[0].holding) fold_held(r, &r->workers[0]);
        for (int k = 0; k < 2; k++)
            while (in_flight[k] && !batch_done(in_flight[k])) pthread_cond_wait(&r->work_done, &r->lock);
        r->flight = r->queued = NULL;
        pthread_mutex_unlock(&r->lock);
    }
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
            free(r->workers[t].counts[0]);
            free(r->workers[t].counts[1]);
        }
    }
    for (int k = 0; k < 2; k++) {
        batch *b = &r->batches[k];
        for (size_t i = 0; i < b->items_cap; i++) {
            free(b->items[i].sink.hits);
            free(b->items[i].borders.runs);
        }
        free(b->items);
        free(b->segs);
        free(b->buf);
    }
    free(r->cuts);
    free(r->rows);
    free(r->fixes.hits);
    sm_dfa_matcher_free(r->ac_matcher);
    sm_dfa_free(r->ac_dfa);
    free(r->held);
    free(r->open_runs);
    free(r->next_runs);
    sm_buf_free(&r->carry);
    free(r->workers);
    free(r->counts);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->work_ready);
    pthread_cond_destroy(&r->work_done);
    free(r);
}

int sm_runner_create(const sm_db *db, const sm_runner_options *opts, sm_runner **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "no place to store the runner");
    *out = NULL;
    if (!db || !opts) return sm_set_error(err, SM_ERR_INVALID, "runner needs a database and options");
    if (!opts->count_only && !opts->on_hit)
        return sm_set_error(err, SM_ERR_INVALID, "runner needs a hit callback unless it only counts");
    if (opts->backend == SM_BACKEND_CUDA) {
        sm_runner *r = calloc(1, sizeof *r);
        if (!r) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        r->db = db;
        int rc = sm_gpu_runner_create(db, opts, &r->gpu, err);
        if (rc != SM_OK) {
            free(r);
            return rc;
        }
        *out = r;
        return SM_OK;
    }
    if (opts->backend != SM_BACKEND_CPU) return sm_set_error(err, SM_ERR_INVALID, "unknown backend %d", (int)opts->backend);
    sm_runner *r = calloc(1, sizeof *r);
    if (!r) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->work_ready, NULL);
    pthread_cond_init(&r->work_done, NULL);
    r->db = db;
    r->opt = *opts;
    r->threads = opts->threads ? opts->threads : online_cores();
    if (r->threads > 1024) r->threads = 1024;
    const sm_db_header *h = sm_db_head(db);
    r->overlap = h->max_length - 1;
    r->pattern_count = h->pattern_count;
    r->edits = h->match == SM_MATCH_EDITS;
    r->chunk = opts->chunk_size ? opts->chunk_size : DEFAULT_CHUNK;
    if (!opts->chunk_size && opts->count_only && !r->edits) {
        uint64_t want = (uint64_t)r->pattern_count * COUNT_CHUNK_PER_PATTERN;
        if (want > r->chunk) r->chunk = want < COUNT_CHUNK_MAX ? (size_t)want : COUNT_CHUNK_MAX;
    }
    r->lookback = r->edits ? (size_t)sm_db_reach(h) : 0;
    r->overlap_free = opts->overlap_free && sm_db_automaton_only(db);
    r->speculate = r->overlap_free && opts->overlap_free != SM_OVERLAP_FREE_PREFIX;
    if (r->overlap_free && !r->speculate) {
        if (sm_dfa_from_ac_section(sm_db_automaton(db), SM_DFA_ENDS, &r->ac_dfa, err) != SM_OK ||
            sm_dfa_matcher_create(r->ac_dfa, NULL, &r->ac_matcher, err) != SM_OK) {
            sm_runner_free(r);
            return err ? err->code : SM_ERR_NOMEM;
        }
    }
    r->held_delivery = r->edits || r->overlap_free;
    r->keep_back = r->overlap_free ? h->max_length : r->lookback;
    /* Room for several items per thread, and always for one chunk plus what it reads around it. */
    size_t batch = r->chunk * ITEMS_PER_THREAD * r->threads;
    if (batch / ITEMS_PER_THREAD / r->threads != r->chunk) batch = SIZE_MAX / 4;
    r->buf_cap = batch + r->overlap + r->keep_back + 1;
    /* About a chunk per worker (from batch, already kept from overflowing). */
    r->early_len = batch / ITEMS_PER_THREAD / r->threads * (r->threads - 1) + r->overlap + r->keep_back;
    r->tally = r->opt.count_only && !r->edits;
    r->fill = &r->batches[0];
    r->batches[1].index = 1;
    size_t start = r->buf_cap < BUF_START ? r->buf_cap : BUF_START;
    r->batches[0].buf = malloc(start);
    r->batches[0].buf_alloc = start;
    /* The second buffer is filled while workers scan the first. */
    if (r->threads > 1) r->batches[1].buf = malloc(start), r->batches[1].buf_alloc = start;
    r->counts = calloc(r->pattern_count, sizeof *r->counts);
    r->workers = calloc(r->threads, sizeof *r->workers);
    if (!r->batches[0].buf || (r->threads > 1 && !r->batches[1].buf) || !r->counts || !r->workers) {
        sm_runner_free(r); /* r is gone: the message uses start */
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory for a batch buffer of %zu bytes", start);
    }
    for (unsigned t = 0; t < r->threads; t++) {
        worker *w = &r->workers[t];
        w->runner = r;
        if (sm_engine_state_init(db, &w->state) != SM_OK ||
            !(w->counts[0] = calloc(r->pattern_count, sizeof *w->counts[0])) ||
            (r->threads > 1 && !(w->counts[1] = calloc(r->pattern_count, sizeof *w->counts[1])))) {
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
    if (!r) return SM_ERR_INVALID;
    if (r->gpu) return sm_gpu_runner_end_record(r->gpu);
    if (!r->record_open) return r->status;
    if (cut_segments(r, 1) != SM_OK) return r->status = SM_ERR_NOMEM;
    r->record_open = 0;
    /* A batch with many small records also fills up by segment count. */
    if (r->fill->nsegs >= 65536) return submit(r, 0);
    return r->status;
}

uint64_t sm_runner_begin_record(sm_runner *r) {
    if (!r) return UINT64_MAX;
    if (r->gpu) return sm_gpu_runner_begin_record(r->gpu);
    if (r->record_open) sm_runner_end_record(r);
    r->record_open = 1;
    r->record_id = r->next_record++;
    r->open_off = r->fill->buf_len;
    r->open_base = r->fill->buf_len;
    r->own_from = 0;
    return r->record_id;
}

#if defined(__x86_64__)
/* With worker threads another core scans the buffer next, so its lines are
   written around the caches instead of being fetched for ownership first. */
static void copy_streaming(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t head = (size_t)(-(uintptr_t)dst & 15);
    if (n < 4096 || head >= n) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(dst, src, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i)), b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32)), d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    _mm_sfence();
    memcpy(dst + i, src + i, n - i);
}
#else
#define copy_streaming memcpy
#endif

/* Whether to launch before the buffer is full: the workers are idle (at the
   start, or when the caller is the slower side) and the batch has about a
   chunk for each of them, with something to cut. */
static int workers_want_more(sm_runner *r) {
    if (r->threads == 1) return 0;
    const batch *b = r->fill;
    if (b->buf_len < r->early_len) return 0;
    if (b->nsegs == 0 && b->buf_len - r->open_off < r->chunk + read_ahead(r)) return 0;
    if (!r->flight) return 1;
    pthread_mutex_lock(&r->lock);
    /* Done, not only taken: a batch launched while the last items are
       still scanned would be small, and the caller would scan it itself. */
    int idle = !r->queued && batch_done(r->flight);
    pthread_mutex_unlock(&r->lock);
    return idle;
}

int sm_runner_feed(sm_runner *r, const void *data, size_t len) {
    if (!r || (!data && len)) return SM_ERR_INVALID;
    if (r->gpu) return sm_gpu_runner_feed(r->gpu, data, len);
    const uint8_t *p = data;
    if (r->status != SM_OK) return r->status;
    if (!r->record_open) sm_runner_begin_record(r);
    while (len > 0) {
        batch *b = r->fill;
        if (b->buf_len == r->buf_cap || workers_want_more(r)) {
            if (cut_segments(r, 0) != SM_OK) return r->status = SM_ERR_NOMEM;
            int rc = submit(r, 0);
            if (rc != SM_OK) return rc;
            continue;
        }
        if (b->buf_len == b->buf_alloc && grow_buffer(r, b, b->buf_len + len) != SM_OK)
            return r->status = SM_ERR_NOMEM;
        size_t n = b->buf_alloc - b->buf_len;
        if (n > len) n = len;
        if (r->threads > 1) copy_streaming(b->buf + b->buf_len, p, n);
        else memcpy(b->buf + b->buf_len, p, n);
        b->buf_len += n;
        p += n;
        len -= n;
    }
    return SM_OK;
}

int sm_runner_flush(sm_runner *r) {
    if (!r) return SM_ERR_INVALID;
    if (r->gpu) return sm_gpu_runner_flush(r->gpu);
    if (r->status != SM_OK) return r->status;
    if (r->record_open && cut_segments(r, 0) != SM_OK) return r->status = SM_ERR_NOMEM;
    return submit(r, 1);
}

const uint64_t *sm_runner_counts(const sm_runner *r) { return !r ? NULL : r->gpu ? sm_gpu_runner_counts(r->gpu) : r->counts; }
const sm_db *sm_runner_db(const sm_runner *r) { return r->db; }
uint64_t sm_runner_total(const sm_runner *r) { return !r ? 0 : r->gpu ? sm_gpu_runner_total(r->gpu) : r->total; }
