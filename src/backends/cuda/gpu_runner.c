/* The CUDA runner: the host side of SM_BACKEND_CUDA.
 *
 * Fed bytes are copied into the pinned text buffer of the slot being filled;
 * each record's bytes there form a piece. When the buffer is full (or holds
 * too many pieces, or on flush) the slot is launched on its GPU and filling
 * moves to the next slot, two per GPU, taken in turn, so that one fills
 * while the other is scanned and batches land in launch order.
 *
 * Ownership is by start, as in the CPU runner. A piece cut at a batch's end
 * owns the starts of all but its last (longest pattern - 1) bytes; those
 * bytes are copied to the front of the next batch, where the record's next
 * piece starts and owns from its first byte. A piece no longer than that
 * tail moves to the next batch whole. Each owned range is cut into chunks
 * (cuda_device.h) sized so that a full batch keeps every GPU thread busy.
 */
#include <stddef.h>
#include <stdlib.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/gpu_runner.h"
#include "core/engine_set.h"
#include "engines/automaton/automaton.h"

#define DEFAULT_BATCH ((size_t)64 << 20)
#define MAX_BATCH ((size_t)1 << 31) /* batch offsets are 32-bit */
#define MAX_PIECES ((size_t)1 << 20)

typedef struct {
    uint64_t record;
    uint64_t pos;       /* record coordinate of the piece's first byte */
    uint32_t off, len;  /* where its bytes lie in the batch */
    uint32_t own;       /* hits starting in its first `own` bytes are its own */
    int last;           /* the record ends with this piece */
} piece;

typedef struct {
    sm_cuda_slot *dev;
    uint8_t *text;
    sm_cuda_chunk *chunks;
    piece *pieces;
    size_t npieces, pieces_cap;
    size_t len;
    int busy;           /* launched and not yet delivered */
} slot;

struct sm_gpu_runner {
    const sm_db *db;
    sm_runner_options opt;
    const uint8_t *section;
    const sm_db_pattern *patterns;
    uint32_t pattern_count;
    size_t tail;        /* longest pattern - 1: bytes a cut piece hands on */
    int ndev;
    sm_cuda_tables **tables;
    slot *slots;
    unsigned nslots, fill;
    size_t text_cap, chunk_cap, piece_cap, chunk_len;

    int record_open, piece_open; /* piece_open: the fill slot's last piece is the open record's */
    uint64_t record_id, next_record, record_pos;

    sm_rawhit *hits;
    size_t hits_cap;
    uint64_t *counts;
    uint64_t total;
    int status;
    int last_launched;  /* slot index, -1 before the first launch */
};

static int device_failed(sm_gpu_runner *g) { return g->status = SM_ERR_DEVICE; }

int sm_gpu_runner_create(const sm_db *db, const sm_runner_options *opts, sm_gpu_runner **out, sm_error *err) {
    *out = NULL;
    const sm_db_header *h = sm_db_head(db);
    if (!sm_db_is_dfa_only(db) || sm_db_sections(db)[0].kind != SM_SECTION_AUTOMATON)
        return sm_set_error(err, SM_ERR_INVALID,
                            "the CUDA backend scans exact databases whose patterns all use the automaton "
                            "(compile with --engine automaton; IUPAC patterns must expand to at most "
                            "--max-expansion strings)");
    int ndev = sm_cuda_device_count();
    if (ndev <= 0)
        return sm_set_error(err, SM_ERR_DEVICE, "%s",
                            sm_cuda_built() ? "no usable GPU: the CUDA runtime sees no device"
                                            : "this seqmatch was built without CUDA (nvcc was not found)");
    sm_gpu_runner *g = calloc(1, sizeof *g);
    if (!g) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    g->db = db;
    g->opt = *opts;
    g->last_launched = -1;
    uint64_t section_size = 0;
    g->section = sm_db_section_of_kind(db, SM_SECTION_AUTOMATON, &section_size);
    g->patterns = sm_db_patterns(db);
    g->pattern_count = h->pattern_count;
    g->tail = h->max_length ? h->max_length - 1 : 0;
    g->ndev = ndev;
    g->nslots = 2u * (unsigned)ndev;
    size_t cap = opts->chunk_size ? opts->chunk_size : DEFAULT_BATCH;
    if (cap < 4 * g->tail + 64) cap = 4 * g->tail + 64;
    if (cap > MAX_BATCH - 64) cap = MAX_BATCH - 64;
    g->text_cap = cap;
    g->piece_cap = cap / 8 < 64 ? 64 : cap / 8 > MAX_PIECES ? MAX_PIECES : cap / 8;
    g->counts = calloc(g->pattern_count ? g->pattern_count : 1, sizeof *g->counts);
    uint32_t *lengths = malloc((g->pattern_count ? g->pattern_count : 1) * sizeof *lengths);
    g->tables = calloc((size_t)ndev, sizeof *g->tables);
    g->slots = calloc(g->nslots, sizeof *g->slots);
    int rc = SM_OK;
    if (!g->counts || !lengths || !g->tables || !g->slots) rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    char msg[256];
    for (uint32_t p = 0; rc == SM_OK && p < g->pattern_count; p++) lengths[p] = g->patterns[p].length;
    const sm_ac_header *ah = (const sm_ac_header *)g->section;
    sm_cuda_automaton ac = {g->section, (size_t)section_size, ah->states, ah->columns, ah->delta_off,
                            ah->out_index_off, ah->out_list_off, offsetof(sm_ac_header, class_of), lengths,
                            g->pattern_count};
    for (int d = 0; d < ndev && rc == SM_OK; d++)
        if (sm_cuda_tables_open(d, &ac, &g->tables[d], msg) != 0)
            rc = sm_set_error(err, SM_ERR_DEVICE, "GPU %d: %s", d, msg);
    free(lengths);
    if (rc == SM_OK) {
        /* A full batch spreads over every thread of a GPU, each chunk a few
           tails long at least, so that the re-read tails stay small. */
        size_t threads = sm_cuda_tables_parallelism(g->tables[0]);
        size_t len = g->text_cap / (threads ? threads : 1);
        if (len < 4 * g->tail) len = 4 * g->tail;
        g->chunk_len = len < 16 ? 16 : len;
        g->chunk_cap = g->text_cap / g->chunk_len + g->piece_cap + 1;
    }
    for (unsigned i = 0; i < g->nslots && rc == SM_OK; i++) {
        slot *s = &g->slots[i];
        unsigned d = i % (unsigned)ndev;
        if (sm_cuda_slot_open(g->tables[d], g->text_cap, g->chunk_cap, opts->count_only, &s->dev, msg) != 0) {
            rc = sm_set_error(err, SM_ERR_DEVICE, "GPU %u: %s", d, msg);
            break;
        }
        s->text = sm_cuda_slot_text(s->dev);
        s->chunks = sm_cuda_slot_chunks(s->dev);
    }
    if (rc != SM_OK) {
        sm_gpu_runner_free(g);
        return rc;
    }
    *out = g;
    return SM_OK;
}

/* Appends a piece of the current record at the fill slot's end. */
static piece *add_piece(sm_gpu_runner *g) {
    slot *s = &g->slots[g->fill];
    if (s->npieces == s->pieces_cap) {
        size_t cap = s->pieces_cap ? s->pieces_cap * 2 : 256;
        piece *p = realloc(s->pieces, cap * sizeof *p);
        if (!p) return NULL;
        s->pieces = p;
        s->pieces_cap = cap;
    }
    piece *p = &s->pieces[s->npieces++];
    p->record = g->record_id;
    p->pos = g->record_pos;
    p->off = (uint32_t)s->len;
    p->len = 0;
    p->own = 0;
    p->last = 0;
    g->piece_open = 1;
    return p;
}

static int deliver(sm_gpu_runner *g, slot *s, const sm_cuda_result *res);

/* Waits for a launched slot and delivers its hits and record ends. */
static int land(sm_gpu_runner *g, slot *s) {
    if (!s->busy) return g->status;
    s->busy = 0;
    sm_cuda_result res;
    char msg[256];
    if (sm_cuda_slot_wait(s->dev, &res, msg) != 0) return device_failed(g);
    if (g->status != SM_OK) return g->status; /* stopped: drain without delivering */
    int rc = deliver(g, s, &res);
    if (rc != SM_OK) g->status = rc;
    return g->status;
}

static int deliver(sm_gpu_runner *g, slot *s, const sm_cuda_result *res) {
    size_t n = 0;
    if (g->opt.count_only) {
        sm_ac_fold_visits(g->section, res->visits, g->counts);
        uint64_t total = 0;
        for (uint32_t p = 0; p < g->pattern_count; p++) {
            g->counts[p] += res->tail_counts[p];
            total += g->counts[p];
        }
        g->total = total;
    } else {
        /* Expand (end, state) pairs into hits in batch offsets and sort them:
           pieces lie in record order, so batch order is delivery order. */
        const sm_ac_header *ah = (const sm_ac_header *)g->section;
        const uint32_t *out_index = (const uint32_t *)(g->section + ah->out_index_off);
        const uint32_t *out_list = (const uint32_t *)(g->section + ah->out_list_off);
        size_t need = 0;
        for (size_t i = 0; i < res->nhits; i++) {
            uint32_t code = res->hits[i].code;
            need += code & SM_CUDA_ONE_OUTPUT ? 1 : out_index[code + 1] - out_index[code];
        }
        if (need > g->hits_cap) {
            sm_rawhit *p = realloc(g->hits, need * sizeof *p);
            if (!p) return SM_ERR_NOMEM;
            g->hits = p;
            g->hits_cap = need;
        }
        for (size_t i = 0; i < res->nhits; i++) {
            uint32_t end = res->hits[i].end, code = res->hits[i].code;
            uint32_t from, to;
            if (code & SM_CUDA_ONE_OUTPUT) {
                from = 0, to = 1;
            } else {
                from = out_index[code], to = out_index[code + 1];
            }
            for (uint32_t o = from; o < to; o++) {
                uint32_t id = code & SM_CUDA_ONE_OUTPUT ? code & ~SM_CUDA_ONE_OUTPUT : out_list[o];
                uint32_t len = g->patterns[id >> 1].length;
                if (len > end) continue; /* only a crafted database gets here */
                sm_rawhit *h = &g->hits[n++];
                h->start = end - len;
                h->end = end;
                h->pattern = id >> 1;
                h->errors = 0;
                h->reverse = (uint8_t)(id & 1);
                h->pad = 0;
            }
        }
        sm_sort_hits(g->hits, n);
    }
    size_t next = 0;
    for (size_t i = 0; i < s->npieces; i++) {
        const piece *p = &s->pieces[i];
        if (!g->opt.count_only) {
            uint64_t own_end = (uint64_t)p->off + p->own;
            for (; next < n && g->hits[next].start < own_end; next++) {
                const sm_rawhit *x = &g->hits[next];
                if (x->start < p->off) continue; /* outside every owned range: cannot happen */
                g->counts[x->pattern]++;
                g->total++;
                sm_hit hit;
                hit.record = p->record;
                hit.start = p->pos + (x->start - p->off);
                hit.end = p->pos + (x->end - p->off);
                hit.pattern = x->pattern;
                hit.strand = x->reverse ? '-' : '+';
                hit.errors = 0;
                hit.text = (const char *)s->text + x->start;
                if (g->opt.on_hit(&hit, g->opt.ctx) != 0) return SM_ERR_TERMINATED;
            }
        }
        if (p->last && g->opt.on_record_done) g->opt.on_record_done(p->record, g->opt.ctx);
    }
    return SM_OK;
}

/* Cuts the owned ranges of the fill slot into chunks and launches it. */
static int launch(sm_gpu_runner *g, slot *s) {
    size_t nchunks = 0;
    for (size_t i = 0; i < s->npieces; i++) {
        const piece *p = &s->pieces[i];
        uint32_t own_end = p->off + p->own, stop = p->off + p->len;
        for (uint32_t c0 = p->off; c0 < own_end; c0 += (uint32_t)g->chunk_len) {
            uint32_t c1 = own_end - c0 > g->chunk_len ? c0 + (uint32_t)g->chunk_len : own_end;
            uint64_t end = (uint64_t)c1 + g->tail;
            sm_cuda_chunk *c = &s->chunks[nchunks++];
            c->c0 = c0;
            c->c1 = c1;
            c->end = end < stop ? (uint32_t)end : stop;
        }
    }
    char msg[256];
    if (sm_cuda_slot_launch(s->dev, s->len, nchunks, msg) != 0) return device_failed(g);
    s->busy = 1;
    g->last_launched = (int)(s - g->slots);
    return SM_OK;
}

/* Launches the fill slot and moves filling to the next one, carrying the
   open record's tail. */
static int cut(sm_gpu_runner *g) {
    slot *s = &g->slots[g->fill];
    const uint8_t *carry = NULL;
    size_t carry_len = 0;
    uint64_t carry_pos = 0;
    if (g->piece_open) {
        piece *p = &s->pieces[s->npieces - 1];
        if (p->len > g->tail) {
            carry_len = g->tail;
            p->own = p->len - (uint32_t)g->tail;
        } else {
            carry_len = p->len;
            if (s->npieces == 1) return g->status; /* nothing else to launch */
            s->npieces--;
        }
        carry = s->text + p->off + p->len - carry_len;
        carry_pos = g->record_pos - carry_len;
        g->piece_open = 0;
    }
    if (s->npieces && launch(g, s) != SM_OK) return g->status;
    g->fill = (g->fill + 1) % g->nslots;
    slot *t = &g->slots[g->fill];
    if (land(g, t) != SM_OK) return g->status;
    t->len = 0;
    t->npieces = 0;
    if (carry) {
        uint64_t pos = g->record_pos;
        g->record_pos = carry_pos;
        piece *p = add_piece(g);
        g->record_pos = pos;
        if (!p) return g->status = SM_ERR_NOMEM;
        memcpy(t->text, carry, carry_len);
        p->len = (uint32_t)carry_len;
        t->len = carry_len;
    }
    return g->status;
}

uint64_t sm_gpu_runner_begin_record(sm_gpu_runner *g) {
    if (g->record_open) sm_gpu_runner_end_record(g);
    g->record_open = 1;
    g->piece_open = 0;
    g->record_id = g->next_record++;
    g->record_pos = 0;
    return g->record_id;
}

int sm_gpu_runner_feed(sm_gpu_runner *g, const void *data, size_t len) {
    const uint8_t *bytes = data;
    if (g->status != SM_OK) return g->status;
    if (!g->record_open) sm_gpu_runner_begin_record(g);
    while (len) {
        slot *s = &g->slots[g->fill];
        if (s->len == g->text_cap || (!g->piece_open && s->npieces == g->piece_cap)) {
            if (cut(g) != SM_OK) return g->status;
            continue;
        }
        if (!g->piece_open && !add_piece(g)) return g->status = SM_ERR_NOMEM;
        piece *p = &s->pieces[s->npieces - 1];
        size_t n = g->text_cap - s->len < len ? g->text_cap - s->len : len;
        memcpy(s->text + s->len, bytes, n);
        s->len += n;
        p->len += (uint32_t)n;
        g->record_pos += n;
        bytes += n;
        len -= n;
    }
    return g->status;
}

int sm_gpu_runner_end_record(sm_gpu_runner *g) {
    if (!g->record_open || g->status != SM_OK) return g->status;
    slot *s = &g->slots[g->fill];
    if (!g->piece_open) {
        if (s->npieces == g->piece_cap && cut(g) != SM_OK) return g->status;
        if (!add_piece(g)) return g->status = SM_ERR_NOMEM;
        s = &g->slots[g->fill];
    }
    piece *p = &s->pieces[s->npieces - 1];
    p->own = p->len;
    p->last = 1;
    g->piece_open = 0;
    g->record_open = 0;
    if (s->npieces == g->piece_cap) return cut(g);
    return g->status;
}

int sm_gpu_runner_flush(sm_gpu_runner *g) {
    if (g->status != SM_OK) return g->status;
    slot *s = &g->slots[g->fill];
    if (s->npieces && cut(g) != SM_OK) return g->status;
    /* Land every launched slot, oldest first: the ones after fill in turn. */
    for (unsigned k = 1; k <= g->nslots; k++)
        if (land(g, &g->slots[(g->fill + k) % g->nslots]) != SM_OK) return g->status;
    return g->status;
}

const uint64_t *sm_gpu_runner_counts(const sm_gpu_runner *g) { return g->counts; }
uint64_t sm_gpu_runner_total(const sm_gpu_runner *g) { return g->total; }

void sm_gpu_runner_free(sm_gpu_runner *g) {
    if (!g) return;
    if (g->slots) {
        for (unsigned i = 0; i < g->nslots; i++) {
            slot *s = &g->slots[i];
            if (s->busy) {
                sm_cuda_result res;
                char msg[256];
                sm_cuda_slot_wait(s->dev, &res, msg);
            }
            sm_cuda_slot_close(s->dev);
            free(s->pieces);
        }
    }
    if (g->tables)
        for (int d = 0; d < g->ndev; d++) sm_cuda_tables_close(g->tables[d]);
    free(g->tables);
    free(g->slots);
    free(g->hits);
    free(g->counts);
    free(g);
}

int sm_gpu_runner_time_last_batch(sm_gpu_runner *g, int repeats, double *ms, size_t *bytes) {
    if (g->last_launched < 0) return SM_ERR_INVALID;
    slot *s = &g->slots[g->last_launched];
    if (s->busy) return SM_ERR_INVALID;
    char msg[256];
    *bytes = s->len;
    return sm_cuda_slot_time_scan(s->dev, repeats, ms, msg) == 0 ? SM_OK : SM_ERR_DEVICE;
}
