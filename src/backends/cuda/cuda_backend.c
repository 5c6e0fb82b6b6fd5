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
 * The GPU runs every exact engine: each section of the database is copied
 * to each GPU as it is, with its engine's view of it (gpu_view), and its
 * kernel (in the engine's folder) scans every batch. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_scan.h"
#include "core/engine_set.h"
#include "runner/runner_internal.h"

_Static_assert(SM_GPU_KIND_AUTOMATON == SM_SECTION_AUTOMATON && SM_GPU_KIND_SHIFTAND == SM_SECTION_SHIFTAND &&
                   SM_GPU_KIND_KMER == SM_SECTION_KMER && SM_GPU_KIND_WUMANBER == SM_SECTION_WUMANBER,
               "the GPU's section kinds are the file format's");

#define DEFAULT_BATCH ((size_t)64 << 20)
#define MAX_BATCH ((size_t)1 << 31) /* batch offsets are 32-bit */
#define MAX_PIECES ((size_t)1 << 20)

typedef struct {
    sm_cuda_slot *dev;
    uint8_t *text;
    sm_cuda_chunk *chunks;
    sm_rawhit *hits;
    size_t hits_cap;
} slot;

typedef struct {
    sm_runner *runner;
    const sm_engine_ops *ops;  /* the automaton, when the database has one: its states come back as hits */
    sm_section section;
    size_t tail;               /* longest pattern - 1 */
    int ndev;
    sm_cuda_tables **tables;
    slot *slots;
    unsigned nslots;
    size_t text_cap, chunk_cap, piece_cap, chunk_len;
    uint64_t *counts;          /* count mode: a batch's per-pattern counts */
    int last_launched;         /* slot index, -1 before the first launch */
} sm_cuda;

static void cuda_close(void *backend) {
    sm_cuda *g = backend;
    if (!g) return;
    if (g->slots) {
        for (unsigned i = 0; i < g->nslots; i++) {
            sm_cuda_slot_close(g->slots[i].dev);
            free(g->slots[i].hits);
        }
    }
    if (g->tables)
        for (int d = 0; d < g->ndev; d++) sm_cuda_tables_close(g->tables[d]);
    free(g->tables);
    free(g->slots);
    free(g->counts);
    free(g);
}

/* Refuses databases with a section no GPU kernel scans (the approximate
   engines), naming the engine. */
static int gpu_scans(const sm_db *db, sm_error *err) {
    const sm_db_header *h = sm_db_head(db);
    for (uint32_t i = 0; i < h->section_count; i++) {
        const sm_engine_ops *ops = sm_engine_for_kind(sm_db_sections(db)[i].kind);
        if (!ops || !ops->gpu_view)
            return sm_set_error(err, SM_ERR_INVALID,
                                "the CUDA backend scans exact databases; engine %s (%s) runs on the CPU only "
                                "(search without --gpu)",
                                ops ? ops->name : "unknown",
                                h->match == SM_MATCH_MISMATCHES ? "k mismatches"
                                : h->match == SM_MATCH_EDITS    ? "k edits"
                                                                : "exact");
    }
    return SM_OK;
}

static int cuda_open(sm_runner *r, sm_backend_geometry *geo, void **out, sm_error *err) {
    *out = NULL;
    const sm_db *db = r->db;
    const sm_db_header *h = sm_db_head(db);
    int rc = gpu_scans(db, err);
    if (rc != SM_OK) return rc;
    int ndev = sm_cuda_device_count();
    if (ndev <= 0) {
        const char *missing = sm_cuda_missing();
        return sm_set_error(err, SM_ERR_DEVICE, "%s", missing ? missing : "no usable GPU: the CUDA runtime sees no device");
    }
    int first = 0;
    if (r->opt.gpu_device > 0) {
        /* one GPU of those visible (an MPI rank's) */
        if (r->opt.gpu_device > ndev)
            return sm_set_error(err, SM_ERR_DEVICE, "GPU %d asked for, but the CUDA runtime sees %d",
                                r->opt.gpu_device - 1, ndev);
        first = r->opt.gpu_device - 1;
        ndev = 1;
    }
    sm_cuda *g = calloc(1, sizeof *g);
    if (!g) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    g->runner = r;
    g->last_launched = -1;
    g->tail = h->max_length ? h->max_length - 1 : 0;
    g->ndev = ndev;
    g->nslots = 2u * (unsigned)ndev;
    size_t cap = r->opt.chunk_size ? r->opt.chunk_size : DEFAULT_BATCH;
    if (cap < 4 * g->tail + 64) cap = 4 * g->tail + 64;
    if (cap > MAX_BATCH - 64) cap = MAX_BATCH - 64;
    g->text_cap = cap;
    g->piece_cap = cap / 8 < 64 ? 64 : cap / 8 > MAX_PIECES ? MAX_PIECES : cap / 8;
    uint32_t nsec = h->section_count;
    uint32_t *lengths = malloc((r->pattern_count ? r->pattern_count : 1) * sizeof *lengths);
    sm_cuda_section *sections = calloc(nsec ? nsec : 1, sizeof *sections);
    g->tables = calloc((size_t)ndev, sizeof *g->tables);
    g->slots = calloc(g->nslots, sizeof *g->slots);
    g->counts = calloc(r->pattern_count ? r->pattern_count : 1, sizeof *g->counts);
    if (!lengths || !sections || !g->tables || !g->slots || !g->counts) rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    char msg[256];
    for (uint32_t p = 0; rc == SM_OK && p < r->pattern_count; p++) lengths[p] = sm_db_patterns(db)[p].length;
    for (uint32_t i = 0; rc == SM_OK && i < nsec; i++) {
        const sm_db_section *e = &sm_db_sections(db)[i];
        const sm_engine_ops *ops = sm_engine_for_kind(e->kind);
        sm_section sec = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
        ops->gpu_view(&sec, &sections[i].view);
        sections[i].bytes = sec.bytes;
        sections[i].size = (size_t)sec.size;
        if (ops->dfa_outputs) {
            g->ops = ops;
            g->section = sec;
        }
    }
    sm_cuda_database cdb = {sections, nsec, lengths, r->pattern_count, h->max_length};
    for (int d = 0; d < ndev && rc == SM_OK; d++)
        if (sm_cuda_tables_open(first + d, &cdb, &g->tables[d], msg) != 0)
            rc = sm_set_error(err, SM_ERR_DEVICE, "GPU %d: %s", first + d, msg);
    free(lengths);
    free(sections);
    if (rc == SM_OK) {
        g->chunk_len = sm_cuda_tables_chunk(g->tables[0], g->text_cap, g->tail);
        if (g->chunk_len < 16) g->chunk_len = 16;
        g->chunk_cap = g->text_cap / g->chunk_len + g->piece_cap + 1;
    }
    for (unsigned i = 0; i < g->nslots && rc == SM_OK; i++) {
        slot *s = &g->slots[i];
        unsigned d = i % (unsigned)ndev;
        /* the text buffer has SM_WRITE_SLACK bytes past the batch for direct writers */
        if (sm_cuda_slot_open(g->tables[d], g->text_cap + SM_WRITE_SLACK, g->chunk_cap, r->opt.count_only, &s->dev,
                              msg) != 0) {
            rc = sm_set_error(err, SM_ERR_DEVICE, "GPU %u: %s", (unsigned)first + d, msg);
            break;
        }
        s->text = sm_cuda_slot_text(s->dev);
        s->chunks = sm_cuda_slot_chunks(s->dev);
    }
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
    *out = g;
    return SM_OK;
}

static uint8_t *cuda_buffer(void *backend, unsigned index, size_t bytes) {
    sm_cuda *g = backend;
    (void)bytes; /* text_cap, as the slots were opened */
    return g->slots[index].text;
}

/* The owned range of a segment in batch offsets. */
static void owned(const sm_segment *s, size_t *lo, size_t *hi) {
    *lo = s->buf_off + (size_t)(s->own_lo - s->pos0);
    /* the last segment of a record owns to its end, of a part to the part's owned end */
    *hi = s->own_hi - s->pos0 > s->scan_len ? s->buf_off + s->scan_len : s->buf_off + (size_t)(s->own_hi - s->pos0);
}

/* Cuts the segments' owned ranges into chunks and launches the batch. */
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
            sm_cuda_chunk *c = &s->chunks[nchunks++];
            c->c0 = (uint32_t)c0;
            c->c1 = (uint32_t)c1;
            c->end = (uint32_t)(end < stop ? end : stop);
        }
    }
    char msg[256];
    if (sm_cuda_slot_launch(s->dev, b->len, nchunks, msg) != 0) return SM_ERR_DEVICE;
    g->last_launched = (int)b->index;
    return SM_OK;
}

/* Hit mode: the hits (one output, or an automaton state and all its
   outputs) expanded in batch offsets, sorted (segments lie in record
   order, so batch order is delivery order) and handed to the segments in
   record coordinates. */
static uint32_t outputs_of(const sm_cuda *g, uint32_t code, uint32_t *one, const uint32_t **ids) {
    if (code & SM_CUDA_ONE_OUTPUT) {
        *one = code & ~SM_CUDA_ONE_OUTPUT;
        *ids = one;
        return 1;
    }
    if (!g->ops) return 0; /* a state without an automaton: cannot happen */
    return g->ops->dfa_outputs(&g->section, code, ids);
}

static int hand_out(sm_cuda *g, slot *s, sm_batch *b, const sm_cuda_result *res) {
    const sm_db_pattern *patterns = sm_db_patterns(g->runner->db);
    size_t need = 0;
    for (size_t i = 0; i < res->nhits; i++) {
        uint32_t one;
        const uint32_t *ids;
        need += outputs_of(g, res->hits[i].code, &one, &ids);
    }
    if (need > s->hits_cap) {
        sm_rawhit *p = realloc(s->hits, need * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        s->hits = p;
        s->hits_cap = need;
    }
    size_t n = 0;
    for (size_t i = 0; i < res->nhits; i++) {
        uint32_t end = res->hits[i].end, one;
        const uint32_t *ids;
        uint32_t count = outputs_of(g, res->hits[i].code, &one, &ids);
        for (uint32_t o = 0; o < count; o++) {
            uint32_t id = ids[o];
            uint32_t len = patterns[id >> 1].length;
            if (len > end) continue; /* only a crafted database gets here */
            sm_rawhit *h = &s->hits[n++];
            h->start = end - len;
            h->end = end;
            h->pattern = id >> 1;
            h->errors = 0;
            h->reverse = (uint8_t)(id & 1);
            h->pad = 0;
        }
    }
    sm_sort_hits(s->hits, n);
    size_t next = 0;
    for (size_t i = 0; i < b->nsegs; i++) {
        sm_segment *seg = &b->segs[i];
        size_t lo, hi;
        owned(seg, &lo, &hi);
        while (next < n && s->hits[next].start < lo) next++; /* outside every owned range: cannot happen */
        size_t first = next;
        for (; next < n && s->hits[next].start < hi; next++) {
            sm_rawhit *x = &s->hits[next];
            x->start = seg->pos0 + (x->start - seg->buf_off);
            x->end = seg->pos0 + (x->end - seg->buf_off);
        }
        seg->hits = s->hits + first;
        seg->nhits = next - first;
    }
    return SM_OK;
}

static int cuda_land(void *backend, sm_batch *b) {
    sm_cuda *g = backend;
    sm_runner *r = g->runner;
    slot *s = &g->slots[b->index];
    sm_cuda_result res;
    char msg[256];
    if (sm_cuda_slot_wait(s->dev, &res, msg) != 0) return SM_ERR_DEVICE;
    if (r->status != SM_OK) return r->status; /* stopped: drain without delivering */
    if (r->opt.count_only) {
        for (uint32_t p = 0; p < r->pattern_count; p++) g->counts[p] = (uint64_t)res.counts[p];
        sm_runner_add_counts(r, g->counts);
        for (size_t i = 0; i < b->nsegs; i++) b->segs[i].nhits = 0;
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
    const sm_db_section *e = &sm_db_sections(db)[index];
    const sm_engine_ops *ops = sm_engine_for_kind(e->kind);
    if (!ops || !ops->gpu_view || !ops->gpu_describe) return NULL;
    sm_section sec = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
    sm_gpu_view v;
    ops->gpu_view(&sec, &v);
    ops->gpu_describe(&v, buf, size);
    return buf;
}
