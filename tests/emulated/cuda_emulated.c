/* A CPU stand-in for the GPU side of the CUDA runner (cuda_device.h), so
 * that the runner's host logic (batches, pieces cut across batches, chunk
 * ownership, results settled into hits, their order, counts, record ends,
 * stops, the hit buffer's overflow) and every kernel's own chunk logic are
 * tested on machines without a GPU. Each section runs its engine's
 * stand-in (the emulate operation of its GPU part, engines/engine.h): the
 * kernel's per-item code, item after item, for a device of 64 threads;
 * nothing here knows one engine from another. Test builds only
 * (test_cuda_emulated). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <zlib.h>

#include "backends/cuda/cuda_device.h"
#include "engines/engine.h"

#define THREADS 64u
/* A small first hit buffer, so that batches overflow it and are scanned
   again, and a small largest one, so that batches pass it and the runner
   finds their hits on the host. */
#define FIRST_HIT_CAP 16u
#define MAX_HIT_CAP 512u

/* SM_EMULATED_MAX_HITS: another largest hit buffer, so that a test can reach
   the host's own bound on a batch's expanded hits (cuda_backend.c) first. */
static unsigned long long max_hit_cap(void) {
    const char *v = getenv("SM_EMULATED_MAX_HITS");
    unsigned long long n = v && *v ? strtoull(v, NULL, 10) : 0;
    return n >= FIRST_HIT_CAP ? n : MAX_HIT_CAP;
}

typedef struct {
    sm_gpu_view view;
    const sm_gpu_part *part;
    uint8_t *bytes; /* a copy, as the device has one */
    size_t size;
    void *extra;    /* and of the extra bytes */
    void *prepared;
} emu_section;

struct sm_cuda_tables {
    emu_section *sections;
    uint32_t nsections;
    uint32_t *lengths;
    uint32_t pattern_count, tail, reach;
    int warp_chunks;
};

struct sm_cuda_slot {
    sm_cuda_tables *t;
    int count_only;
    size_t text_cap, text_bytes;
    uint8_t *text;
    sm_gpu_chunk *chunks;
    size_t len, nchunks;
    sm_gpu_hit *hits;
    unsigned long long hit_cap, nhits;
    unsigned long long *counts;
    uint32_t **visits;
    int launched;
};

int sm_cuda_device_count(void) { return 1; }
/* One device, index 0. SM_EMULATED_START_MS makes its start take that
   long, as a real GPU's does (tests of what overlaps the start). */
int sm_cuda_prepare(int device) {
    const char *ms = getenv("SM_EMULATED_START_MS");
    if (ms && *ms) nanosleep(&(struct timespec){atoi(ms) / 1000, (long)(atoi(ms) % 1000) * 1000000L}, NULL);
    return device <= 0 ? 1 : 0;
}
/* Nothing to keep: the stand-in's buffers are ordinary memory. */
int sm_cuda_reserve(int device, size_t batch_bytes, unsigned count) {
    (void)batch_bytes, (void)count;
    return device == 0 ? 0 : -1;
}
const char *sm_cuda_missing(void) { return NULL; }
void sm_cuda_device_name(int device, char *name, size_t size) { snprintf(name, size, "emulated GPU %d", device); }

void sm_cuda_tables_close(sm_cuda_tables *t) {
    if (!t) return;
    for (uint32_t i = 0; i < t->nsections; i++) {
        emu_section *s = &t->sections[i];
        if (s->prepared && s->part->emulate_release) s->part->emulate_release(s->prepared);
        free(s->bytes);
        free(s->extra);
    }
    free(t->sections);
    free(t->lengths);
    free(t);
}

int sm_cuda_tables_open(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg) {
    (void)device;
    sm_cuda_tables *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t) return snprintf(msg, 256, "out of memory"), -1;
    t->sections = calloc(db->nsections ? db->nsections : 1, sizeof *t->sections);
    t->lengths = malloc((db->pattern_count ? db->pattern_count : 1) * sizeof *t->lengths);
    if (!t->sections || !t->lengths) {
        sm_cuda_tables_close(t);
        return snprintf(msg, 256, "out of memory"), -1;
    }
    memcpy(t->lengths, db->lengths, db->pattern_count * sizeof *t->lengths);
    t->pattern_count = db->pattern_count;
    t->tail = db->longest ? db->longest - 1 : 0;
    t->reach = db->reach;
    t->nsections = db->nsections;
    for (uint32_t i = 0; i < db->nsections; i++) {
        emu_section *s = &t->sections[i];
        const sm_engine_ops *ops = sm_engine_for_kind(db->sections[i].view.kind);
        s->view = db->sections[i].view;
        s->size = db->sections[i].size;
        if (!ops || !ops->gpu || !ops->gpu->emulate) {
            snprintf(msg, 256, "no GPU kernel scans sections of kind %u", s->view.kind);
            sm_cuda_tables_close(t);
            return -1;
        }
        s->part = ops->gpu;
        /* 8-byte aligned, as cudaMalloc's memory is (more) */
        s->bytes = malloc(s->size ? s->size : 1);
        if (!s->bytes) {
            sm_cuda_tables_close(t);
            return snprintf(msg, 256, "out of memory"), -1;
        }
        memcpy(s->bytes, db->sections[i].bytes, s->size);
        if (db->sections[i].extra_size) {
            if (!(s->extra = malloc(db->sections[i].extra_size))) {
                sm_cuda_tables_close(t);
                return snprintf(msg, 256, "out of memory"), -1;
            }
            memcpy(s->extra, db->sections[i].extra, db->sections[i].extra_size);
        }
        if (s->part->emulate_prepare && !(s->prepared = s->part->emulate_prepare(&s->view, s->bytes))) {
            sm_cuda_tables_close(t);
            return snprintf(msg, 256, "out of memory"), -1;
        }
        if (s->view.flags & SM_GPU_WARP_CHUNKS) t->warp_chunks = 1;
    }
    *out = t;
    return 0;
}

size_t sm_cuda_tables_chunk(const sm_cuda_tables *t, size_t text_cap, size_t tail) {
    return sm_gpu_chunk_for(THREADS, t->warp_chunks, text_cap, tail);
}

void sm_cuda_slot_close(sm_cuda_slot *s) {
    if (!s) return;
    free(s->text);
    free(s->chunks);
    free(s->hits);
    free(s->counts);
    if (s->visits)
        for (uint32_t i = 0; i < s->t->nsections; i++) free(s->visits[i]);
    free(s->visits);
    free(s);
}

int sm_cuda_slot_open(sm_cuda_tables *t, size_t text_cap, size_t chunk_cap, int count_only, sm_cuda_slot **out,
                      char *msg) {
    sm_cuda_slot *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return snprintf(msg, 256, "out of memory"), -1;
    s->t = t;
    s->count_only = count_only;
    s->text_cap = text_cap;
    s->chunks = calloc(chunk_cap ? chunk_cap : 1, sizeof *s->chunks);
    s->counts = calloc(t->pattern_count + 1, sizeof *s->counts);
    s->visits = calloc(t->nsections ? t->nsections : 1, sizeof *s->visits);
    s->hit_cap = count_only ? 0 : FIRST_HIT_CAP;
    s->hits = calloc(s->hit_cap ? s->hit_cap : 1, sizeof *s->hits);
    if (!s->chunks || !s->counts || !s->visits || !s->hits) return snprintf(msg, 256, "out of memory"), -1;
    for (uint32_t i = 0; i < t->nsections; i++)
        if (t->sections[i].view.visits && !(s->visits[i] = calloc(t->sections[i].view.visits, sizeof(uint32_t))))
            return snprintf(msg, 256, "out of memory"), -1;
    return 0;
}

/* As the device's: allocated when first asked for, grown with its bytes kept. */
uint8_t *sm_cuda_slot_text(sm_cuda_slot *s, size_t bytes, char *msg) {
    if (bytes > s->text_cap) bytes = s->text_cap;
    /* padded as the device's: whole 16-byte words and one more */
    size_t want = (bytes + 15) / 16 * 16 + 16;
    if (want <= s->text_bytes) return s->text;
    /* a new block, not realloc: a caller holding the old pointer would read freed bytes under ASan */
    uint8_t *p = calloc(want, 1);
    if (!p) return snprintf(msg, 256, "out of memory"), NULL;
    if (s->text_bytes) memcpy(p, s->text, s->text_bytes);
    free(s->text);
    s->text = p;
    s->text_bytes = want;
    return p;
}
sm_gpu_chunk *sm_cuda_slot_chunks(sm_cuda_slot *s) { return s->chunks; }

/* Every section's kernel over the batch, then the folds (count mode). */
static int scan(sm_cuda_slot *s) {
    const sm_cuda_tables *t = s->t;
    s->nhits = 0;
    memset(s->counts, 0, (t->pattern_count + 1) * sizeof *s->counts);
    size_t longest_chunk = 0, chunk_max = 0;
    for (size_t c = 0; c < s->nchunks; c++) {
        const sm_gpu_chunk ch = s->chunks[c];
        /* the runner's side of the contract */
        if (ch.from > ch.c0 || ch.c0 > ch.c1 || ch.c1 > ch.end || ch.end > s->len) return -1;
        if (c < 64 && ch.c1 - ch.c0 > longest_chunk) longest_chunk = ch.c1 - ch.c0;
        if (ch.c1 - ch.c0 > chunk_max) chunk_max = ch.c1 - ch.c0;
    }
    uint32_t parts = sm_gpu_parts(THREADS, t->warp_chunks, s->text_cap, t->tail, longest_chunk);
    for (uint32_t i = 0; i < t->nsections; i++) {
        const emu_section *sec = &t->sections[i];
        sm_gpu_scan_args a;
        memset(&a, 0, sizeof a);
        a.text = s->text;
        a.chunks = s->chunks;
        a.nchunks = (uint32_t)s->nchunks;
        a.section_index = i;
        a.section = sec->bytes;
        a.lengths = t->lengths;
        a.count_only = s->count_only;
        a.hits = s->hits;
        a.hit_cap = s->hit_cap;
        a.nhits = &s->nhits;
        a.counts = s->counts;
        a.visits = s->visits[i];
        a.tail = t->tail;
        a.reach = t->reach;
        a.parts = sec->view.flags & SM_GPU_WARP_CHUNKS ? 1 : parts;
        a.chunk_max = (uint32_t)chunk_max;
        a.prepared = sec->prepared;
        a.extra = sec->extra;
        a.view = sec->view;
        if (a.visits) memset(a.visits, 0, sec->view.visits * sizeof *a.visits);
        sec->part->emulate(&a, THREADS);
        if (s->count_only && sec->view.visits) {
            /* the device's fold */
            const uint32_t *index = (const uint32_t *)(sec->bytes + sec->view.fold_index_off);
            const uint32_t *list = (const uint32_t *)(sec->bytes + sec->view.fold_list_off);
            for (uint32_t c = 0; c < sec->view.visits; c++)
                for (uint32_t o = index[c]; o < index[c + 1]; o++) s->counts[list[o] >> 1] += a.visits[c];
        }
    }
    return 0;
}

int sm_cuda_slot_launch(sm_cuda_slot *s, size_t len, size_t nchunks, char *msg) {
    if (s->launched) return snprintf(msg, 256, "slot launched twice without a wait"), -1;
    s->len = len;
    s->nchunks = nchunks;
    s->launched = 1;
    return 0;
}

/* SM_EMULATED_FAIL_WAIT=N: the N-th wait of the process fails as a GPU
   that met a bad access would, so that tests see its words reach the user. */
static int wait_fails(void) {
    static atomic_uint waits;
    const char *v = getenv("SM_EMULATED_FAIL_WAIT");
    unsigned n = atomic_fetch_add(&waits, 1u) + 1;
    return v && (unsigned)atoi(v) == n;
}

int sm_cuda_slot_wait(sm_cuda_slot *s, sm_cuda_result *r, char *msg) {
    if (!s->launched) return snprintf(msg, 256, "wait without a launch"), -1;
    s->launched = 0;
    if (wait_fails()) return snprintf(msg, 256, "CUDA: waiting for a batch: an illegal memory access was encountered (emulated)"), -1;
    /* Scanned at the wait, as late as a real GPU could finish: the host
       must not have touched the slot's text or chunks in between. */
    if (scan(s) != 0) return snprintf(msg, 256, "bad chunk table"), -1;
    memset(r, 0, sizeof *r);
    unsigned long long most = max_hit_cap();
    if (!s->count_only && s->nhits > most) {
        r->overflow = 1;
        return 0;
    }
    if (!s->count_only && s->nhits > s->hit_cap) {
        /* as the device: grow the buffer and scan the batch again */
        unsigned long long cap = s->hit_cap;
        while (cap < s->nhits) cap *= 2;
        if (cap > most) cap = most;
        sm_gpu_hit *p = realloc(s->hits, cap * sizeof *p);
        if (!p) return snprintf(msg, 256, "out of memory"), -1;
        s->hits = p;
        s->hit_cap = cap;
        unsigned long long before = s->nhits;
        if (scan(s) != 0) return snprintf(msg, 256, "bad chunk table"), -1;
        if (s->nhits != before) return snprintf(msg, 256, "a batch found %llu hits, then %llu", before, s->nhits), -1;
    }
    memset(r, 0, sizeof *r);
    r->hits = s->hits;
    r->nhits = (size_t)s->nhits;
    r->counts = s->counts;
    return 0;
}

int sm_cuda_slot_time_scan(sm_cuda_slot *s, int repeats, double *ms, char *msg) {
    (void)s, (void)repeats, (void)ms;
    return snprintf(msg, 256, "no timing on the emulated GPU"), -1;
}

/* A section built on the GPU: its engine's stand-in for the builder. */
int sm_cuda_section_build(uint32_t kind, int device, const void *input, double ms[3], char *msg) {
    (void)device;
    const sm_engine_ops *ops = sm_engine_for_kind(kind);
    if (!ops || !ops->gpu || !ops->gpu->emulate_build) {
        snprintf(msg, 256, "no GPU builder for sections of kind %u", kind);
        return -1;
    }
    return ops->gpu->emulate_build(input, ms, msg);
}

/* BGZF blocks "inflated on the GPU": zlib here, with the module's contract
   (every block to its ISIZE and CRC32, or 0 for the caller to inflate the
   run). SM_EMULATED_INFLATE=missing: no inflater, as without nvCOMP;
   =fail: every run returns 0; =corrupt: each A of a run's output becomes C
   and the run still returns 1, so that a test can tell the path was taken. */
struct sm_cuda_inflater {
    size_t max_blocks, max_raw, max_out;
};

static const char *inflate_mode(void) {
    const char *v = getenv("SM_EMULATED_INFLATE");
    return v ? v : "";
}

int sm_cuda_inflate_open(int device, size_t max_blocks, size_t max_raw, size_t max_out, sm_cuda_inflater **out,
                         char *msg) {
    *out = NULL;
    if (device != 0 || strcmp(inflate_mode(), "missing") == 0)
        return snprintf(msg, 256, "no inflater on the emulated GPU %d", device), -1;
    sm_cuda_inflater *f = calloc(1, sizeof *f);
    if (!f) return snprintf(msg, 256, "out of memory"), -1;
    *f = (sm_cuda_inflater){max_blocks, max_raw, max_out};
    *out = f;
    return 0;
}

static uint32_t emu_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int sm_cuda_inflate_run(sm_cuda_inflater *f, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                        size_t *out_len, char *msg) {
    (void)msg;
    *out_len = 0;
    if (strcmp(inflate_mode(), "fail") == 0 || raw_len > f->max_raw) return 0;
    size_t made = 0, blocks = 0;
    for (size_t at = 0; at < raw_len; blocks++) {
        const uint8_t *p = raw + at;
        size_t n = raw_len - at;
        if (blocks == f->max_blocks || n < 26 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || p[3] != 4) return 0;
        size_t xlen = (size_t)p[10] | (size_t)p[11] << 8, bsize = 0;
        for (size_t x = 12; x + 6 <= 12 + xlen && x + 6 <= n; x += 4 + ((size_t)p[x + 2] | (size_t)p[x + 3] << 8))
            if (p[x] == 'B' && p[x + 1] == 'C' && p[x + 2] == 2 && p[x + 3] == 0) {
                bsize = ((size_t)p[x + 4] | (size_t)p[x + 5] << 8) + 1;
                break;
            }
        if (bsize < 12 + xlen + 10 || bsize > n) return 0;
        uint32_t isize = emu_le32(p + bsize - 4);
        if (isize > 65536 || made + isize > cap || made + isize > f->max_out) return 0;
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, -15) != Z_OK) return 0;
        z.next_in = (Bytef *)(uintptr_t)(p + 12 + xlen);
        z.avail_in = (uInt)(bsize - 12 - xlen - 8);
        z.next_out = out + made;
        z.avail_out = (uInt)isize;
        int rc = inflate(&z, Z_FINISH);
        size_t got = isize - z.avail_out;
        inflateEnd(&z);
        if (rc != Z_STREAM_END || got != isize || crc32(0, out + made, (uInt)isize) != emu_le32(p + bsize - 8)) return 0;
        made += isize;
        at += bsize;
    }
    for (size_t i = 0; i < made && strcmp(inflate_mode(), "corrupt") == 0; i++)
        if ((out[i] | 0x20) == 'a') out[i] ^= 'A' ^ 'C';
    *out_len = made;
    return 1;
}

void sm_cuda_inflate_close(sm_cuda_inflater *f) { free(f); }
