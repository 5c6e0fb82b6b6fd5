/* The CUDA backend (SM_BACKEND_CUDA), host side, plain C: batches of the
 * shared layer (src/runner/runner_internal.h) are scanned on the GPUs.
 *
 * The ring has two buffers per GPU, in the pinned memory the GPU copies
 * from; buffer i goes to GPU i % GPUs, so one fills while the others are
 * copied and scanned, and batches land in launch order. The shared layer
 * cuts each record into one segment per batch (the chunk is the batch),
 * owning the starts of all but its last (longest pattern - 1) bytes when
 * the record goes on, and carries those bytes to the next batch. Here each
 * segment's owned range is cut into GPU chunks (cuda_device.h) sized so
 * that a full batch keeps every GPU thread busy; the hits come back in
 * batch offsets and are handed to the segments in record coordinates.
 *
 * Each section of the database is copied to each GPU as it is, with its
 * engine's view of it (the engine's GPU part, engines/engine.h), and its
 * kernel (in the engine's folder) scans every batch. Exact and k-mismatch
 * hits are owned by their start; k-edit end events by their last byte,
 * each chunk reading from the longest pattern + k bytes before it. What
 * comes back (hits, automaton states, end events) is expanded, handed to
 * the segments in record coordinates and settled into hits by the runner
 * on its thread team (settle.c: end events resolved, PAM windows
 * filtered), as the CPU backend's are. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_device.h"
#include "core/engine_set.h"
#include "runner/runner_internal.h"

_Static_assert(SM_CUDA_TEXT_SLACK == SM_WRITE_SLACK, "the GPU module's batch buffers are sized as the runner asks");

#define DEFAULT_BATCH ((size_t)64 << 20)
#define MAX_BATCH ((size_t)1 << 31) /* batch offsets are 32-bit */
#define MAX_PIECES ((size_t)1 << 20)
/* A batch buffer's first size: a short search allocates no more pinned
   memory than this per buffer (the first growth takes the whole batch);
   batches of up to four times this are made whole at once. */
#define FIRST_BATCH ((size_t)1 << 20)
/* Hits per piece when the host finds an overflowed batch's hits (dense.c). */
#define HOST_PIECE_HITS ((size_t)1 << 16)
/* A batch's hits expanded on the host (an automaton state stands for all its
   outputs) at most: past this the batch counts as overflowed too. */
#define HOST_BATCH_HITS ((size_t)1 << 22)

typedef struct {
    sm_cuda_slot *dev;
    sm_gpu_chunk *chunks;
    sm_rawhit *hits;
    sm_rawhit *sorted;         /* the radix sort's other half (hits_cap entries) */
    size_t hits_cap;
    sm_settle_piece *pieces;   /* per segment: its results, settled */
    size_t pieces_cap;
} slot;

typedef struct {
    sm_runner *runner;
    sm_section *sections;      /* the database's, for the outputs of automaton states */
    const sm_engine_ops **ops;
    uint32_t nsections;
    int device_counts;         /* count mode: the GPU counts every hit itself */
    size_t tail;               /* longest pattern - 1 */
    size_t reach;              /* k edits: what a chunk reads before its first owned end */
    int ndev;
    sm_cuda_tables **tables;
    slot *slots;
    unsigned nslots;
    size_t text_cap, chunk_cap, piece_cap, chunk_len;
    uint64_t *counts;          /* count mode: a batch's per-pattern counts */
    int last_launched;         /* slot index, -1 before the first launch */
} sm_cuda;

/* ------------------------------------------------------- several GPUs */

/* What each GPU does at open and close: its context's start, the copies of
   the database and the allocations take a GPU a few hundred milliseconds,
   which GPUs opened one after another would add up. Each runs on a thread
   of its own (the first on the caller's). */
typedef struct {
    sm_cuda *g;
    int device;                 /* the runtime's index */
    unsigned d;                 /* and the backend's: slots d, d + ndev, ... */
    const sm_cuda_database *cdb;
    int step;                   /* 0: tables, 1: slots, 2: close */
    int failed;
    char msg[256];
} device_job;

static void *device_step(void *arg) {
    device_job *j = arg;
    sm_cuda *g = j->g;
    if (j->step == 0) {
        j->failed = sm_cuda_tables_open(j->device, j->cdb, &g->tables[j->d], j->msg) != 0;
    } else if (j->step == 1) {
        for (unsigned i = j->d; i < g->nslots && !j->failed; i += (unsigned)g->ndev)
            j->failed = sm_cuda_slot_open(g->tables[j->d], g->text_cap + SM_WRITE_SLACK, g->chunk_cap,
                                          g->device_counts, &g->slots[i].dev, j->msg) != 0;
    } else {
        for (unsigned i = j->d; i < g->nslots; i += (unsigned)g->ndev) sm_cuda_slot_close(g->slots[i].dev);
        sm_cuda_tables_close(g->tables[j->d]);
    }
    return NULL;
}

/* Runs one step on every GPU at once; the first failure's message in msg. */
static int every_device(sm_cuda *g, int first, const sm_cuda_database *cdb, int step, char *msg) {
    device_job jobs[64];
    pthread_t threads[64];
    int started[64] = {0};
    unsigned n = (unsigned)g->ndev < 64 ? (unsigned)g->ndev : 64;
    for (unsigned d = 0; d < n; d++) {
        jobs[d] = (device_job){g, first + (int)d, d, cdb, step, 0, ""};
        if (d > 0) started[d] = pthread_create(&threads[d], NULL, device_step, &jobs[d]) == 0;
    }
    if (n) device_step(&jobs[0]);
    for (unsigned d = 1; d < n; d++) {
        if (started[d]) pthread_join(threads[d], NULL);
        else device_step(&jobs[d]); /* no thread: here, after the others */
    }
    for (unsigned d = 0; d < n; d++)
        if (jobs[d].failed) {
            snprintf(msg, 256, "GPU %d: %s", jobs[d].device, jobs[d].msg);
            return -1;
        }
    return 0;
}

static void cuda_close(void *backend) {
    sm_cuda *g = backend;
    if (!g) return;
    if (g->tables && g->slots) every_device(g, 0, NULL, 2, (char[256]){0});
    if (g->slots) {
        for (unsigned i = 0; i < g->nslots; i++) {
            free(g->slots[i].hits);
            free(g->slots[i].sorted);
            for (size_t k = 0; k < g->slots[i].pieces_cap; k++) free(g->slots[i].pieces[k].runs.runs);
            free(g->slots[i].pieces);
        }
    }
    free(g->tables);
    free(g->slots);
    free(g->counts);
    free(g->sections);
    free(g->ops);
    free(g);
}

/* The views of every section, or a one-line refusal naming the engine and why. */
static int gpu_views(const sm_db *db, sm_cuda_section *sections, sm_error *err) {
    const sm_db_header *h = sm_db_head(db);
    sm_gpu_db gdb = {h->match,     h->max_errors, h->max_length, h->pam_length, h->alphabet,
                     h->flags,     h->pam_side,   h->dna_bulges, h->rna_bulges};
    for (uint32_t i = 0; i < h->section_count; i++) {
        const sm_db_section *e = &sm_db_sections(db)[i];
        const sm_engine_ops *ops = sm_engine_for_kind(e->kind);
        sm_section sec = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
        char why[256] = "";
        if (!ops || !ops->gpu)
            return sm_set_error(err, SM_ERR_INVALID, "--gpu: engine %s has no GPU kernel (search without --gpu)",
                                ops ? ops->name : "unknown");
        if (ops->gpu->view(&sec, &gdb, &sections[i].view, why) != 0)
            return sm_set_error(err, SM_ERR_INVALID, "--gpu: %s (search without --gpu)", why);
        sections[i].bytes = sec.bytes;
        sections[i].size = (size_t)sec.size;
        if (ops->gpu->extra) {
            size_t n = ops->gpu->extra(&sec, &sections[i].view, NULL);
            void *p = n ? malloc(n) : NULL;
            if (n && !p) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
            sections[i].extra = p;
            sections[i].extra_size = n;
            if (p && ops->gpu->extra(&sec, &sections[i].view, p) != n)
                return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        }
    }
    return SM_OK;
}

static void free_sections(sm_cuda_section *sections, uint32_t n) {
    for (uint32_t i = 0; sections && i < n; i++) free((void *)sections[i].extra);
    free(sections);
}

static int cuda_open(sm_runner *r, sm_backend_geometry *geo, void **out, sm_error *err) {
    *out = NULL;
    const sm_db *db = r->db;
    const sm_db_header *h = sm_db_head(db);
    uint32_t nsec = h->section_count;
    sm_cuda_section *sections = calloc(nsec ? nsec : 1, sizeof *sections);
    if (!sections) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    int rc = gpu_views(db, sections, err);
    if (rc != SM_OK) {
        free_sections(sections, nsec);
        return rc;
    }
    int ndev = sm_cuda_device_count();
    if (ndev <= 0) {
        const char *missing = sm_cuda_missing();
        free_sections(sections, nsec);
        return sm_set_error(err, SM_ERR_DEVICE, "%s", missing ? missing : "no usable GPU: the CUDA runtime sees no device");
    }
    if (ndev > 64) ndev = 64; /* every_device's bound */
    int first = 0;
    if (r->opt.gpu_device > 0) {
        /* one GPU of those visible (an MPI rank's) */
        if (r->opt.gpu_device > ndev) {
            free_sections(sections, nsec);
            return sm_set_error(err, SM_ERR_DEVICE, "GPU %d asked for, but the CUDA runtime sees %d",
                                r->opt.gpu_device - 1, ndev);
        }
        first = r->opt.gpu_device - 1;
        ndev = 1;
    }
    sm_cuda *g = calloc(1, sizeof *g);
    if (!g) {
        free_sections(sections, nsec);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    g->runner = r;
    g->last_launched = -1;
    g->tail = sm_db_longest_hit(h) ? sm_db_longest_hit(h) - 1 : 0;
    g->reach = r->edits ? r->lookback : 0;
    g->nsections = nsec;
    /* The GPU counts only hits that are final as found: not end events to
       join into runs, repeated ends, PAM windows to filter, or a circular
       record's edit hits (kept by their start, known on delivery). */
    g->device_counts = r->opt.count_only && !sm_db_filters_pam(h) && !(r->opt.circular && r->edits);
    for (uint32_t i = 0; i < nsec; i++)
        if (sections[i].view.results == SM_GPU_RESULTS_ENDS_REPEATED ||
            (sections[i].view.results == SM_GPU_RESULTS_ENDS && h->report != SM_REPORT_ENDS))
            g->device_counts = 0;
    g->ndev = ndev;
    g->nslots = 2u * (unsigned)ndev;
    size_t cap = r->opt.chunk_size ? r->opt.chunk_size : DEFAULT_BATCH;
    if (cap < 4 * g->tail + 64) cap = 4 * g->tail + 64;
    if (cap > MAX_BATCH - 64) cap = MAX_BATCH - 64;
    g->text_cap = cap;
    g->piece_cap = cap / 8 < 64 ? 64 : cap / 8 > MAX_PIECES ? MAX_PIECES : cap / 8;
    uint32_t *lengths = malloc((r->pattern_count ? r->pattern_count : 1) * sizeof *lengths);
    g->tables = calloc((size_t)ndev, sizeof *g->tables);
    g->slots = calloc(g->nslots, sizeof *g->slots);
    g->counts = calloc(r->pattern_count ? r->pattern_count : 1, sizeof *g->counts);
    g->sections = calloc(nsec ? nsec : 1, sizeof *g->sections);
    g->ops = calloc(nsec ? nsec : 1, sizeof *g->ops);
    if (!lengths || !g->tables || !g->slots || !g->counts || !g->sections || !g->ops)
        rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    char msg[256];
    for (uint32_t p = 0; rc == SM_OK && p < r->pattern_count; p++) lengths[p] = sm_db_patterns(db)[p].length;
    for (uint32_t i = 0; rc == SM_OK && i < nsec; i++) {
        const sm_db_section *e = &sm_db_sections(db)[i];
        g->ops[i] = sm_engine_for_kind(e->kind);
        g->sections[i] = (sm_section){db->bytes + e->offset, e->size, sm_db_patterns(db)};
    }
    sm_cuda_database cdb = {sections, nsec, lengths, r->pattern_count, sm_db_longest_hit(h), (uint32_t)g->reach};
    if (rc == SM_OK && every_device(g, first, &cdb, 0, msg) != 0) rc = sm_set_error(err, SM_ERR_DEVICE, "%s", msg);
    free(lengths);
    free_sections(sections, nsec);
    if (rc == SM_OK) {
        g->chunk_len = sm_cuda_tables_chunk(g->tables[0], g->text_cap, g->tail);
        if (g->chunk_len < 16) g->chunk_len = 16;
        g->chunk_cap = g->text_cap / g->chunk_len + g->piece_cap + 1;
    }
    /* the text buffer has SM_WRITE_SLACK bytes past the batch for direct writers */
    if (rc == SM_OK && every_device(g, first, &cdb, 1, msg) != 0) rc = sm_set_error(err, SM_ERR_DEVICE, "%s", msg);
    for (unsigned i = 0; i < g->nslots && rc == SM_OK; i++) g->slots[i].chunks = sm_cuda_slot_chunks(g->slots[i].dev);
    if (rc != SM_OK) {
        cuda_close(g);
        return rc;
    }
    geo->batches = g->nslots;
    geo->chunk = g->text_cap;
    geo->buf_cap = g->text_cap;
    geo->max_segments = g->piece_cap;
    geo->early_len = 0;
    geo->overlap_free = 0;
    geo->buf_start = g->text_cap > 4 * FIRST_BATCH ? FIRST_BATCH : g->text_cap;
    /* bounded hits: a batch past the largest hit buffer is scanned again
       on the host in pieces (cuda_land), none of its hits kept here */
    geo->item_hits = HOST_PIECE_HITS;
    *out = g;
    return SM_OK;
}

static uint8_t *cuda_buffer(void *backend, unsigned index, size_t bytes) {
    sm_cuda *g = backend;
    char msg[256];
    /* past the first size, the whole batch at once: one more allocation, not one per doubling */
    if (bytes > FIRST_BATCH || g->text_cap <= 4 * FIRST_BATCH) bytes = g->text_cap;
    /* the text buffer has SM_WRITE_SLACK bytes past the batch for direct writers */
    return sm_cuda_slot_text(g->slots[index].dev, bytes + SM_WRITE_SLACK, msg);
}

/* The owned range of a segment in batch offsets. */
static void owned(const sm_segment *s, size_t *lo, size_t *hi) {
    *lo = s->buf_off + (size_t)(s->own_lo - s->pos0);
    /* the last segment of a record owns to its end, of a part to the part's owned end */
    *hi = s->own_hi - s->pos0 > s->scan_len ? s->buf_off + s->scan_len : s->buf_off + (size_t)(s->own_hi - s->pos0);
}

/* Cuts the segments' owned ranges into chunks and launches the batch. A
   chunk reads from `from` (end events: up to reach bytes back, within its
   segment) to `end` (hits: up to tail bytes on, within its segment). */
static int cuda_launch(void *backend, sm_batch *b) {
    sm_cuda *g = backend;
    slot *s = &g->slots[b->index];
    size_t nchunks = 0;
    for (size_t i = 0; i < b->nsegs; i++) {
        const sm_segment *seg = &b->segs[i];
        size_t lo, hi, stop = seg->buf_off + seg->scan_len;
        owned(seg, &lo, &hi);
        for (size_t c0 = lo; c0 < hi; c0 += g->chunk_len) {
            size_t c1 = hi - c0 > g->chunk_len ? c0 + g->chunk_len : hi;
            size_t end = c1 + g->tail;
            sm_gpu_chunk *c = &s->chunks[nchunks++];
            c->from = (uint32_t)(c0 - seg->buf_off > g->reach ? c0 - g->reach : seg->buf_off);
            c->c0 = (uint32_t)c0;
            c->c1 = (uint32_t)c1;
            c->end = (uint32_t)(end < stop ? end : stop);
        }
    }
    char msg[256];
    if (sm_cuda_slot_launch(s->dev, b->len, nchunks, msg) != 0) {
        sm_runner_say_failure(g->runner, msg);
        return SM_ERR_DEVICE;
    }
    g->last_launched = (int)b->index;
    return SM_OK;
}

/* The outputs a record stands for: itself, or every output of an automaton state. */
static uint32_t outputs_of(const sm_cuda *g, const sm_gpu_hit *x, uint32_t *one, const uint32_t **ids) {
    if (x->kind != SM_GPU_HIT_STATE) {
        *one = x->code;
        *ids = one;
        return 1;
    }
    if (x->section >= g->nsections || !g->ops[x->section]->dfa_outputs) return 0; /* cannot happen */
    return g->ops[x->section]->dfa_outputs(&g->sections[x->section], x->code, ids);
}

/* Where a hit is owned: its start, or an end event's last byte. */
static uint64_t owner(const sm_rawhit *x) { return x->start != SM_START_UNKNOWN ? x->start : x->end - 1; }

/* The n hits at s->hits in the order of where they are owned (batch
   offsets, below 2^31), stably: a radix sort, 11 bits a pass, a pass
   skipped when every hit has the same digit there. The GPU returns a
   batch's hits in no order; qsort of a batch's thousands of guide sites
   took most of the time the host spent landing batches. */
static void sort_by_owner(slot *s, size_t n) {
    sm_rawhit *from = s->hits, *to = s->sorted;
    for (unsigned shift = 0; shift < 33; shift += 11) {
        uint32_t count[2048] = {0};
        for (size_t i = 0; i < n; i++) count[(owner(&from[i]) >> shift) & 2047]++;
        if (count[(owner(&from[0]) >> shift) & 2047] == n) continue; /* one digit: already in order */
        uint32_t at = 0;
        for (unsigned d = 0; d < 2048; d++) {
            uint32_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) to[count[(owner(&from[i]) >> shift) & 2047]++] = from[i];
        sm_rawhit *t = from;
        from = to;
        to = t;
    }
    if (from != s->hits) memcpy(s->hits, from, n * sizeof *from);
}

/* Hit mode: the records expanded in batch offsets, laid out by where they
   are owned (segments lie in record order, so batch order is delivery
   order), handed to the segments in record coordinates and settled into
   hits on the runner's team. */
static int hand_out(sm_cuda *g, slot *s, sm_batch *b, const sm_cuda_result *res) {
    const sm_db_pattern *patterns = sm_db_patterns(g->runner->db);
    size_t need = 0;
    for (size_t i = 0; i < res->nhits && !res->overflow; i++) {
        uint32_t one;
        const uint32_t *ids;
        need += outputs_of(g, &res->hits[i], &one, &ids);
    }
    int overflow = res->overflow || need > HOST_BATCH_HITS;
    for (size_t i = 0; i < b->nsegs; i++) b->segs[i].dense = (uint8_t)overflow;
    if (overflow) {
        /* more hits than the largest hit buffer: delivery scans each segment
           again on the host, in pieces whose hits fit (src/runner/dense.c) */
        for (size_t i = 0; i < b->nsegs; i++) {
            b->segs[i].hits = NULL;
            b->segs[i].nhits = 0;
            b->segs[i].runs = NULL;
            b->segs[i].nruns = 0;
        }
        return SM_OK;
    }
    if (need > s->hits_cap) {
        sm_rawhit *p = realloc(s->hits, need * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        s->hits = p;
        p = realloc(s->sorted, need * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        s->sorted = p;
        s->hits_cap = need;
    }
    if (b->nsegs > s->pieces_cap) {
        sm_settle_piece *p = realloc(s->pieces, b->nsegs * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        memset(p + s->pieces_cap, 0, (b->nsegs - s->pieces_cap) * sizeof *p);
        s->pieces = p;
        s->pieces_cap = b->nsegs;
    }
    size_t n = 0;
    for (size_t i = 0; i < res->nhits; i++) {
        const sm_gpu_hit *r = &res->hits[i];
        uint32_t one;
        const uint32_t *ids;
        uint32_t count = outputs_of(g, r, &one, &ids);
        for (uint32_t o = 0; o < count; o++) {
            uint32_t id = ids[o];
            if (id >> 1 >= g->runner->pattern_count || r->end == 0) continue; /* only a crafted database gets here */
            uint32_t len = patterns[id >> 1].length, errors = r->errors;
            if (r->kind == SM_GPU_HIT_SITE) {
                /* a site with a bulge spans more or fewer symbols than its pattern */
                len += (uint32_t)((int32_t)(errors >> 8) - SM_GPU_SITE_DELTA_BIAS);
                errors &= 0xffu;
            }
            if (r->kind != SM_GPU_HIT_END && len > r->end) continue;
            sm_rawhit *h = &s->hits[n++];
            h->start = r->kind == SM_GPU_HIT_END ? SM_START_UNKNOWN : r->end - len;
            h->end = r->end;
            h->pattern = id >> 1;
            h->errors = errors;
            h->reverse = (uint8_t)(id & 1);
            h->pad = 0;
        }
    }
    if (n > 1) sort_by_owner(s, n);
    size_t next = 0;
    for (size_t i = 0; i < b->nsegs; i++) {
        sm_segment *seg = &b->segs[i];
        size_t lo, hi;
        owned(seg, &lo, &hi);
        while (next < n && owner(&s->hits[next]) < lo) next++; /* outside every owned range: cannot happen */
        size_t first = next;
        for (; next < n && owner(&s->hits[next]) < hi; next++) {
            sm_rawhit *x = &s->hits[next];
            if (x->start != SM_START_UNKNOWN) x->start = seg->pos0 + (x->start - seg->buf_off);
            x->end = seg->pos0 + (x->end - seg->buf_off);
        }
        s->pieces[i].hits = s->hits + first;
        s->pieces[i].n = next - first;
    }
    return sm_runner_settle_batch(g->runner, b, s->pieces);
}

static int cuda_land(void *backend, sm_batch *b) {
    sm_cuda *g = backend;
    sm_runner *r = g->runner;
    slot *s = &g->slots[b->index];
    sm_cuda_result res;
    char msg[256];
    if (sm_cuda_slot_wait(s->dev, &res, msg) != 0) {
        sm_runner_say_failure(r, msg);
        return SM_ERR_DEVICE;
    }
    if (r->status != SM_OK) return r->status; /* stopped: drain without delivering */
    if (g->device_counts) {
        for (uint32_t p = 0; p < r->pattern_count; p++) g->counts[p] = (uint64_t)res.counts[p];
        sm_runner_add_counts(r, g->counts);
        for (size_t i = 0; i < b->nsegs; i++) b->segs[i].nhits = 0, b->segs[i].nruns = 0;
        return SM_OK;
    }
    return hand_out(g, s, b, &res);
}

int sm_cuda_time_last_batch(sm_runner *r, int repeats, double *ms, size_t *bytes) {
    sm_cuda *g = r && r->backend == &sm_backend_cuda ? r->bd : NULL;
    if (!g || g->last_launched < 0) return SM_ERR_INVALID;
    slot *s = &g->slots[g->last_launched];
    if (r->batches[g->last_launched].launched) return SM_ERR_INVALID;
    char msg[256];
    *bytes = r->batches[g->last_launched].len;
    return sm_cuda_slot_time_scan(s->dev, repeats, ms, msg) == 0 ? SM_OK : SM_ERR_DEVICE;
}

const sm_backend_ops sm_backend_cuda = {
    .name = "cuda",
    .open = cuda_open,
    .close = cuda_close,
    .buffer = cuda_buffer,
    .launch = cuda_launch,
    .land = cuda_land,
    .idle = NULL,
};

const char *sm_db_section_gpu(const sm_db *db, uint32_t index, char *buf, size_t size) {
    if (!db || !buf || size == 0 || index >= sm_db_head(db)->section_count) return NULL;
    buf[0] = 0;
    const sm_db_header *h = sm_db_head(db);
    const sm_db_section *e = &sm_db_sections(db)[index];
    const sm_engine_ops *ops = sm_engine_for_kind(e->kind);
    if (!ops || !ops->gpu) return NULL;
    sm_section sec = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
    sm_gpu_db gdb = {h->match,     h->max_errors, h->max_length, h->pam_length, h->alphabet,
                     h->flags,     h->pam_side,   h->dna_bulges, h->rna_bulges};
    sm_gpu_view v;
    char why[256] = "";
    if (ops->gpu->view(&sec, &gdb, &v, why) != 0) {
        snprintf(buf, size, "%s", why);
        return NULL;
    }
    ops->gpu->describe(&v, buf, size);
    return buf;
}

/* ------------------------------------------------- BGZF on the GPU */

/* Inflated bytes a job of a GPU-inflated BGZF file holds: 256 full blocks.
   nvCOMP inflates a block on one SM at tens of MB/s, so the GPU needs
   thousands of blocks in flight (a reader's job, and the other readers');
   and a run's fixed costs (two copies, three kernels, a wait) want it large. */
#define GPU_INFLATE_JOB ((size_t)16 << 20)
#define GPU_INFLATE_BLOCKS 256

typedef struct {
    sm_io_bgzf_decoder dec;
    sm_cuda_inflater *inflater;
    int broken; /* a device error: the jobs after it inflate on the CPU */
} gpu_decoder;

static int gpu_decode(void *ctx, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap, size_t *out_len) {
    gpu_decoder *g = ctx;
    char msg[256];
    if (g->broken) return 0;
    int rc = sm_cuda_inflate_run(g->inflater, raw, raw_len, out, cap, out_len, msg);
    if (rc < 0) g->broken = 1; /* the scan on the same GPU reports the device's failure */
    return rc == 1;
}

sm_io_bgzf_decoder *sm_cuda_bgzf_decoder_new(int device, char *msg) {
    const char *env = getenv("SEQMATCH_GPU_INFLATE");
    size_t job = GPU_INFLATE_JOB;
    if (env && *env) {
        /* a job's bytes (K or M after the number; 0: BGZF inflates on the CPU) */
        char *unit;
        unsigned long long n = strtoull(env, &unit, 10);
        n <<= *unit == 'K' || *unit == 'k' ? 10 : *unit == 'M' || *unit == 'm' ? 20 : 0;
        if (n == 0) {
            snprintf(msg, 256, "SEQMATCH_GPU_INFLATE is 0");
            return NULL;
        }
        job = n < 65536 ? 65536 : n > ((size_t)64 << 20) ? (size_t)64 << 20 : (size_t)n;
    }
    gpu_decoder *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(msg, 256, "out of memory");
        return NULL;
    }
    /* Compressed bytes up to half the job's inflated (sequence compresses
       three- to fourfold; a job of data that does not is cut shorter), and
       blocks up to four a full block's worth (blocks of small records). */
    size_t blocks = job / 65536 * 4 > GPU_INFLATE_BLOCKS ? job / 65536 * 4 : GPU_INFLATE_BLOCKS;
    g->dec = (sm_io_bgzf_decoder){gpu_decode, g, job, blocks, job / 2};
    if (sm_cuda_inflate_open(device, blocks, job / 2, job, &g->inflater, msg) != 0) {
        free(g);
        return NULL;
    }
    return &g->dec;
}

void sm_cuda_bgzf_decoder_free(sm_io_bgzf_decoder *decoder) {
    if (!decoder) return;
    gpu_decoder *g = decoder->ctx;
    sm_cuda_inflate_close(g->inflater);
    free(g);
}
