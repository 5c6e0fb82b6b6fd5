/* sm_runner: records in, ordered hits out, over any backend (see
 * runner_internal.h). This file cuts the records fed into batches of owned
 * segments and moves the batches round the ring of buffers: fill one,
 * launch it, land and deliver the one the next fill needs, and copy the
 * open record's unscanned bytes (with the few before them that its hits
 * need) into it. */
#include <stdlib.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <unistd.h>

#include "core/engine_set.h"
#include "base/team.h"
#include "runner/runner_internal.h"
#include "runner/runner_part.h"
#include "runner/runner_variant.h"

/* Batch buffers larger than this start at this size and double up to their
   full size as bytes arrive, so that a large chunk size costs memory only
   for input that is there (a short file never needs threads x 4 chunks). */
#define BUF_START ((size_t)64 << 20)

void sm_runner_options_init(sm_runner_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

void sm_runner_add_counts(sm_runner *r, const uint64_t *counts) {
    for (uint32_t p = 0; p < r->pattern_count; p++) {
        r->counts[p] += counts[p];
        r->total += counts[p];
    }
}

static int add_segment(sm_runner *r, size_t buf_off, size_t scan_len, uint64_t pos0, uint64_t own_lo, uint64_t own_hi,
                       int last) {
    sm_batch *b = &r->batches[r->fill];
    if (b->nsegs == b->segs_cap) {
        size_t cap = b->segs_cap ? b->segs_cap * 2 : 256;
        sm_segment *p = realloc(b->segs, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        b->segs = p;
        b->segs_cap = cap;
    }
    sm_segment *s = &b->segs[b->nsegs++];
    memset(s, 0, sizeof *s);
    s->record = r->record_id;
    s->buf_off = buf_off;
    s->scan_len = scan_len;
    s->pos0 = pos0;
    s->own_lo = own_lo;
    s->own_hi = own_hi;
    s->last_of_record = last;
    s->start_limit = r->circ_limit;
    s->part_first_end = r->part_left_open ? r->part_floor + 1 : UINT64_MAX;
    s->part_left_first = (uint8_t)r->part_first_pending;
    r->part_first_pending = 0;
    s->part_right_open = (uint8_t)(last && r->part_right_open);
    return SM_OK;
}

/* Cuts one segment owning [own_from, own_from + own) of the open record. */
static int cut_one(sm_runner *r, size_t own, size_t ahead, int last) {
    size_t back = r->open_off - r->open_base;
    if (back > r->lookback) back = r->lookback;
    uint64_t own_lo = r->own_from, own_hi = last ? r->part_own_to : r->own_from + own;
    /* A part owns nothing before its floor: a segment all before it is not scanned. */
    if (own_lo < r->part_floor) own_lo = r->part_floor;
    int skip = !last && own_hi <= own_lo;
    /* Overlap-free segments own whatever they find: every hit ends inside. */
    if (r->geo.overlap_free) own_lo = 0, own_hi = UINT64_MAX;
    /* A circular record's appended head: exact and k-mismatch hits are owned
       by their start, which must lie in the record (edit hits, owned by
       their end, are dropped on delivery by start_limit). */
    if (!r->edits && own_hi > r->circ_limit) own_hi = r->circ_limit > own_lo ? r->circ_limit : own_lo;
    if (!skip &&
        add_segment(r, r->open_off - back, back + own + ahead, r->own_from - back, own_lo, own_hi, last) != SM_OK)
        return SM_ERR_NOMEM;
    r->open_off += own;
    r->own_from += own;
    return SM_OK;
}

/* Bytes a segment reads past the hits it owns: exact and k-mismatch hits
   start in it and run on for up to (longest pattern - 1) bytes; k-edit
   segments own ends and overlap-free ones read nothing past their end,
   unless exact sections beside the edits need the bytes. */
static size_t read_ahead(const sm_runner *r) {
    return (r->edits && !r->exact_beside) || r->geo.overlap_free ? 0 : r->overlap;
}

/* Gives the open record's buffered bytes to segments: whole chunks (with the
   bytes they read past their end) while the record goes on, everything at
   its end. With full, a buffer that holds no whole chunk of the record gives
   what it has, so that a record always moves on. */
static int cut_segments(sm_runner *r, int record_ends, int full) {
    size_t ahead = read_ahead(r);
    size_t avail = r->batches[r->fill].len - r->open_off;
    size_t chunk = r->chunk_now;
    int cut = 0;
    while (avail >= chunk + ahead && !(record_ends && avail <= chunk)) {
        if (cut_one(r, chunk, ahead, 0) != SM_OK) return SM_ERR_NOMEM;
        avail -= chunk;
        cut = 1;
    }
    if (!record_ends) {
        if (full && !cut && avail > ahead && cut_one(r, avail - ahead, ahead, 0) != SM_OK) return SM_ERR_NOMEM;
        return SM_OK;
    }
    while (avail > chunk) {
        if (cut_one(r, chunk, avail - chunk, 0) != SM_OK) return SM_ERR_NOMEM;
        avail -= chunk;
    }
    /* The last segment owns every remaining hit, even of an empty record. */
    return cut_one(r, avail, 0, 1);
}

/* Waits for a launched batch and delivers it; a failed or stopped runner
   still lands it (its buffer is needed) but delivers nothing. */
static int land_and_deliver(sm_runner *r, sm_batch *b) {
    int rc = r->backend->land(r->bd, b);
    if (rc != SM_OK && r->status == SM_OK) r->status = rc;
    if (r->status == SM_OK) {
        rc = sm_deliver_batch(r, b);
        if (rc != SM_OK) r->status = rc;
    }
    b->launched = 0;
    b->nsegs = 0;
    return r->status;
}

/* Makes b's buffer hold at least need bytes (at most buf_cap): doubling,
   so that bytes fed one piece at a time cost few reallocations. Only a
   buffer that no launched batch uses is grown. */
static int grow_buffer(sm_runner *r, sm_batch *b, size_t need) {
    if (need > r->geo.buf_cap) need = r->geo.buf_cap;
    if (need <= b->cap) return SM_OK;
    size_t cap = b->cap;
    while (cap < need) cap = cap > r->geo.buf_cap / 2 ? r->geo.buf_cap : cap * 2;
    uint8_t *p = r->backend->buffer(r->bd, b->index, cap);
    if (!p) return SM_ERR_NOMEM;
    b->buf = p;
    b->cap = cap;
    return SM_OK;
}

/* Puts the open record's unscanned bytes, and the keep_back bytes before
   them, at the start of batch `to`, which then takes the fed bytes. */
static int keep_tail(sm_runner *r, unsigned to) {
    sm_batch *from = &r->batches[r->fill], *dst = &r->batches[to];
    if (r->record_open) {
        size_t back = r->open_off - r->open_base;
        if (back > r->keep_back) back = r->keep_back;
        size_t start = r->open_off - back;
        size_t keep = from->len - start;
        if (dst != from && grow_buffer(r, dst, keep) != SM_OK) {
            /* the status is sticky from here on: leave a consistent empty buffer */
            dst->len = 0;
            r->open_off = r->open_base = 0;
            r->fill = to;
            return SM_ERR_NOMEM;
        }
        memmove(dst->buf, from->buf + start, keep);
        dst->len = keep;
        r->open_base = 0;
        r->open_off = back;
    } else {
        dst->len = 0;
        r->open_off = 0;
        r->open_base = 0;
    }
    r->fill = to;
    return SM_OK;
}

/* Launches the filling batch (when it has segments), then makes the next
   buffer of the ring free: lands and delivers what it holds. With wait,
   lands and delivers every launched batch, oldest first. The open record's
   unscanned bytes go on in the next buffer, even after a failure: a
   launched buffer must never take more segments. */
static int submit(sm_runner *r, int wait) {
    if (r->status != SM_OK) return r->status;
    unsigned n = r->geo.batches;
    sm_batch *b = &r->batches[r->fill];
    unsigned next = r->fill;
    if (b->nsegs > 0) {
        int rc = r->backend->launch(r->bd, b);
        if (rc != SM_OK) return r->status = rc;
        b->launched = 1;
        next = (r->fill + 1) % n;
    }
    b->early = 0; /* read by launch only */
    if (wait) {
        for (unsigned k = 1; k <= n; k++) {
            sm_batch *x = &r->batches[(r->fill + k) % n];
            if (x->launched) land_and_deliver(r, x);
        }
    } else if (r->batches[next].launched) {
        land_and_deliver(r, &r->batches[next]);
    }
    if (keep_tail(r, next) != SM_OK && r->status == SM_OK) r->status = SM_ERR_NOMEM;
    return r->status;
}

/* The least chunk: a segment reads its reach around what it owns, so a
   smaller one would read mostly bytes it does not own. */
#define CHUNK_MIN ((size_t)256)

void sm_runner_set_chunk(sm_runner *r, size_t chunk) {
    if (!r->geo.items_per_batch) return;
    size_t least = CHUNK_MIN;
    if (r->overlap + r->lookback > least) least = r->overlap + r->lookback;
    if (chunk < least) chunk = least;
    if (chunk > r->geo.chunk) chunk = r->geo.chunk;
    r->chunk_now = chunk;
    if (chunk == r->geo.chunk) {
        r->fill_limit = r->geo.buf_cap;
        return;
    }
    /* the geometry's own rule (a batch of items_per_batch chunks and the
       bytes around them), for the smaller chunk */
    size_t limit = chunk * r->geo.items_per_batch + r->overlap + r->keep_back + 1;
    r->fill_limit = limit < r->geo.buf_cap ? limit : r->geo.buf_cap;
}

void sm_runner_free(sm_runner *r) {
    if (!r) return;
    if (r->batches) {
        /* Launched batches must land before their buffers go. */
        for (unsigned k = 1; k <= r->geo.batches; k++) {
            sm_batch *b = &r->batches[(r->fill + k) % r->geo.batches];
            if (b->launched) {
                r->status = r->status == SM_OK ? SM_ERR_TERMINATED : r->status;
                r->backend->land(r->bd, b);
                b->launched = 0;
            }
        }
    }
    if (r->bd) r->backend->close(r->bd);
    sm_settle_close(r);
    sm_team_free(r->team);
    sm_anchor_close(r);
    sm_ends_close(r);
    sm_limits_close(r);
    sm_dense_close(r);
    sm_record_sums_close(r);
    if (r->batches)
        for (unsigned k = 0; k < r->geo.batches; k++) free(r->batches[k].segs);
    free(r->batches);
    sm_delivery_close(r);
    free(r->counts);
    free(r->head);
    free(r);
}

int sm_runner_create(const sm_db *db, const sm_runner_options *opts, sm_runner **out, sm_error *err) {
    return sm_runner_create_variant(db, opts, NULL, out, err);
}

int sm_runner_create_variant(const sm_db *db, const sm_runner_options *opts, const sm_variant *variant,
                             sm_runner **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "runner needs a place to store it");
    *out = NULL;
    if (!db || !opts) return sm_set_error(err, SM_ERR_INVALID, "runner needs a database and options");
    if (!opts->count_only && !opts->on_hit && !opts->on_record_summary)
        return sm_set_error(err, SM_ERR_INVALID, "runner needs a hit or record summary callback unless it only counts");
    const sm_backend_ops *backend = opts->backend == SM_BACKEND_CPU    ? &sm_backend_cpu
                                    : opts->backend == SM_BACKEND_CUDA ? &sm_backend_cuda
                                                                       : NULL;
    if (!backend) return sm_set_error(err, SM_ERR_INVALID, "unknown backend %d", (int)opts->backend);
    /* The overlap-free modes are never ignored: refused where they cannot run. */
    if (opts->overlap_free && opts->circular)
        return sm_set_error(err, SM_ERR_INVALID,
                            "--overlap-free and --overlap-free-prefix cannot be used with --circular (overlap-free "
                            "chunks read nothing past their end, a circular record's hits do)");
    if (opts->circular && opts->anchor != SM_ANCHOR_NONE)
        return sm_set_error(err, SM_ERR_INVALID,
                            "--circular and --anchor cannot be used together (a circular record has no start or "
                            "end to anchor at)");
    if (opts->overlap_free && opts->backend == SM_BACKEND_CUDA)
        return sm_set_error(err, SM_ERR_INVALID,
                            "--overlap-free and --overlap-free-prefix run on the CPU only (the GPU scans chunks "
                            "that overlap by the longest pattern - 1, with the same hits)");
    if (opts->overlap_free && !sm_db_is_dfa_only(db))
        return sm_set_error(err, SM_ERR_INVALID,
                            "--overlap-free and --overlap-free-prefix need an exact database whose patterns all use "
                            "the automaton (compile with --engine automaton)");
    sm_runner *r = calloc(1, sizeof *r);
    if (!r) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    const sm_db_header *h = sm_db_head(db);
    r->db = db;
    r->opt = *opts;
    r->variant = variant;
    r->backend = backend;
    /* anchored hits are chosen on delivery: the backend always returns hits */
    r->count_only = opts->count_only;
    if (opts->anchor != SM_ANCHOR_NONE) r->opt.count_only = 0;
    /* limits choose hits on delivery too */
    int limited = opts->max_hits_per_pattern || opts->max_hits_per_record || opts->fewest_errors;
    /* and partial edit hits meet the ordinary ones there (src/runner/ends.c) */
    if (limited || (opts->min_overlap && h->match == SM_MATCH_EDITS)) r->opt.count_only = 0;
    r->pattern_count = h->pattern_count;
    r->edits = h->match == SM_MATCH_EDITS;
    /* Exact sections beside k edits own hits by their start: every segment
       reads on past its owned ends for them. */
    for (uint32_t i = 0; r->edits && i < h->section_count; i++)
        if (!(sm_engine_for_kind(sm_db_sections(db)[i].kind)->matches & (1u << SM_MATCH_EDITS))) r->exact_beside = 1;
    r->overlap = sm_db_longest_hit(h) - 1; /* the longest site, with a DNA bulge */
    r->lookback = r->edits ? (size_t)sm_db_reach(h) : 0;
    r->circ_limit = UINT64_MAX;
    if (opts->circular) {
        /* Every hit starting in a record ends within this many bytes past it. */
        r->circ_reach = r->overlap + (r->edits ? h->max_errors : 0);
        r->head = malloc(r->circ_reach + 1);
        if (!r->head) {
            free(r);
            return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        }
    }
    r->counts = calloc(r->pattern_count ? r->pattern_count : 1, sizeof *r->counts);
    if (!r->counts) {
        free(r->head);
        free(r);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    if (opts->on_record_summary && !opts->count_only && sm_record_sums_open(r) != SM_OK) {
        sm_runner_free(r);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    if (opts->anchor != SM_ANCHOR_NONE) {
        int arc = sm_anchor_open(r, err);
        if (arc != SM_OK) {
            sm_runner_free(r);
            return arc;
        }
    }
    if (opts->min_overlap) {
        int erc = sm_ends_open(r, err);
        if (erc != SM_OK) {
            sm_runner_free(r);
            return erc;
        }
    }
    if (limited && sm_limits_open(r) != SM_OK) {
        sm_runner_free(r);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    /* One team for everything the runner does on host threads. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = opts->threads ? opts->threads : cores > 0 ? (unsigned)cores : 1;
    r->team = sm_team_new(threads);
    if (!r->team || sm_settle_open(r) != SM_OK) {
        sm_runner_free(r);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    int rc = backend->open(r, &r->geo, &r->bd, err);
    if (rc != SM_OK) {
        r->bd = NULL;
        sm_runner_free(r);
        return rc;
    }
    r->held_delivery = r->edits || r->geo.overlap_free;
    r->keep_back = r->geo.overlap_free ? h->max_length : r->lookback;
    r->chunk_now = r->geo.chunk;
    r->fill_limit = r->geo.buf_cap;
    r->batches = calloc(r->geo.batches, sizeof *r->batches);
    if (!r->batches || sm_delivery_open(r) != SM_OK) {
        sm_runner_free(r);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    size_t start = r->geo.buf_cap < BUF_START ? r->geo.buf_cap : BUF_START;
    if (r->geo.buf_start && r->geo.buf_start < start) start = r->geo.buf_start;
    for (unsigned k = 0; k < r->geo.batches; k++) {
        r->batches[k].index = k;
        r->batches[k].buf = backend->buffer(r->bd, k, start);
        r->batches[k].cap = start;
        if (!r->batches[k].buf) {
            sm_runner_free(r);
            return sm_set_error(err, SM_ERR_NOMEM, "out of memory for a batch buffer of %zu bytes", start);
        }
    }
    *out = r;
    return SM_OK;
}

/* A circular record's end: the circ_reach bytes that follow it round the
   circle fed again (its head, or for a record shorter than that the whole
   record as many turns as it takes), the segments cut from here on owning
   nothing past the record's length. */
static int append_head(sm_runner *r) {
    uint64_t n = r->record_len;
    if (n == 0) return SM_OK;
    r->circ_limit = n;
    r->appending = 1;
    /* head holds min(n, circ_reach) bytes: the whole record when shorter */
    int rc = SM_OK;
    for (size_t left = r->circ_reach; left > 0 && rc == SM_OK;) {
        size_t part = left < r->head_len ? left : r->head_len;
        rc = sm_runner_feed(r, r->head, part);
        left -= part;
    }
    r->appending = 0;
    return rc;
}

int sm_runner_end_record(sm_runner *r) {
    if (!r) return SM_ERR_INVALID;
    if (!r->record_open) return r->status;
    if (r->ends) sm_ends_end_record(r);
    if (r->anchor && r->status == SM_OK) {
        int rc = sm_anchor_end_record(r);
        if (rc != SM_OK) return rc;
    }
    if (r->opt.circular && append_head(r) != SM_OK) {
        r->circ_limit = UINT64_MAX;
        return r->status;
    }
    int cut = cut_segments(r, 1, 0);
    r->circ_limit = UINT64_MAX;
    r->part_floor = 0;
    r->part_own_to = UINT64_MAX;
    r->part_left_open = r->part_right_open = r->part_first_pending = 0;
    if (cut != SM_OK) return r->status = SM_ERR_NOMEM;
    r->record_open = 0;
    /* A batch with many small records also fills up by segment count. */
    if (r->batches[r->fill].nsegs >= r->geo.max_segments) return submit(r, 0);
    return r->status;
}

uint64_t sm_runner_begin_record(sm_runner *r) {
    if (!r) return UINT64_MAX;
    if (r->record_open) sm_runner_end_record(r);
    r->part_floor = 0;
    r->part_own_to = UINT64_MAX;
    r->part_left_open = r->part_right_open = r->part_first_pending = 0;
    r->record_open = 1;
    r->record_id = r->next_record++;
    r->open_off = r->batches[r->fill].len;
    r->open_base = r->batches[r->fill].len;
    r->own_from = 0;
    r->head_len = 0;
    r->record_len = 0;
    if (r->anchor && sm_anchor_begin_record(r) != SM_OK && r->status == SM_OK) r->status = SM_ERR_NOMEM;
    if (r->ends && sm_ends_begin_record(r) != SM_OK && r->status == SM_OK) r->status = SM_ERR_NOMEM;
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

/* Whether to launch before the buffer is full: the backend is idle (at the
   start, or when the caller is the slower side) and the batch is long
   enough, with something to cut. */
static int leave_early(sm_runner *r) {
    const sm_batch *b = &r->batches[r->fill];
    size_t early = r->geo.early_len < r->fill_limit ? r->geo.early_len : r->fill_limit;
    if (!r->geo.early_len || !r->backend->idle || b->len < early) return 0;
    if (b->nsegs == 0 && b->len - r->open_off < r->chunk_now + read_ahead(r)) return 0;
    if (!r->backend->idle(r->bd)) return 0;
    r->batches[r->fill].early = 1;
    return 1;
}

/* Circular records: the first circ_reach bytes of the record kept. */
static void note_fed(sm_runner *r, const uint8_t *data, size_t len) {
    if (r->appending || len == 0) return;
    r->record_len += len;
    if (r->head_len < r->circ_reach) {
        size_t n = r->circ_reach - r->head_len;
        if (n > len) n = len;
        memcpy(r->head + r->head_len, data, n);
        r->head_len += n;
    }
}

int sm_runner_feed(sm_runner *r, const void *data, size_t len) {
    if (!r || (!data && len)) return SM_ERR_INVALID;
    if (r->status != SM_OK) return r->status;
    if (!r->record_open) sm_runner_begin_record(r);
    if (!r->appending) r->bases += len; /* a circular record's head fed again is not the caller's */
    if (r->anchor) return r->status == SM_OK ? sm_anchor_feed(r, data, len) : r->status;
    if (r->opt.circular) note_fed(r, data, len);
    if (r->ends) sm_ends_feed(r, data, len);
    return sm_runner_feed_direct(r, data, len);
}

int sm_runner_feed_direct(sm_runner *r, const void *data, size_t len) {
    const uint8_t *p = data;
    if (r->status != SM_OK) return r->status;
    while (len > 0) {
        sm_batch *b = &r->batches[r->fill];
        int full = b->len >= r->fill_limit;
        if (full || leave_early(r)) {
            if (cut_segments(r, 0, full) != SM_OK) return r->status = SM_ERR_NOMEM;
            int rc = submit(r, 0);
            if (rc != SM_OK) return rc;
            continue;
        }
        if (b->len == b->cap && grow_buffer(r, b, b->len + len) != SM_OK) return r->status = SM_ERR_NOMEM;
        size_t n = (b->cap < r->fill_limit ? b->cap : r->fill_limit) - b->len;
        if (n > len) n = len;
        if (r->geo.batches > 1) copy_streaming(b->buf + b->len, p, n);
        else memcpy(b->buf + b->len, p, n);
        b->len += n;
        p += n;
        len -= n;
    }
    return SM_OK;
}

int sm_runner_feed_buffer(sm_runner *r, size_t want, void **dst, size_t *avail) {
    if (!r || !dst || !avail || want == 0) return SM_ERR_INVALID;
    *dst = NULL;
    *avail = 0;
    if (r->status != SM_OK) return r->status;
    if (!r->record_open) sm_runner_begin_record(r);
    if (r->anchor) {
        sm_anchor_stage(r, want, dst, avail);
        return r->status;
    }
    for (;;) {
        sm_batch *b = &r->batches[r->fill];
        int full = b->len >= r->fill_limit;
        if (full || leave_early(r)) {
            if (cut_segments(r, 0, full) != SM_OK) return r->status = SM_ERR_NOMEM;
            int rc = submit(r, 0);
            if (rc != SM_OK) return rc;
            continue;
        }
        if (b->len == b->cap && grow_buffer(r, b, b->len + want) != SM_OK) return r->status = SM_ERR_NOMEM;
        /* every buffer has SM_WRITE_SLACK writable bytes past its capacity */
        size_t room = (b->cap < r->fill_limit ? b->cap : r->fill_limit) - b->len;
        *dst = b->buf + b->len;
        *avail = room < want ? room : want;
        return SM_OK;
    }
}

int sm_runner_feed_commit(sm_runner *r, size_t len) {
    if (!r) return SM_ERR_INVALID;
    if (r->anchor) {
        if (r->status == SM_OK) r->bases += len;
        return r->status == SM_OK ? sm_anchor_commit(r, len) : r->status;
    }
    sm_batch *b = &r->batches[r->fill];
    if (len > b->cap - b->len) return SM_ERR_INVALID;
    r->bases += len;
    if (r->opt.circular) note_fed(r, b->buf + b->len, len);
    if (r->ends) sm_ends_feed(r, b->buf + b->len, len);
    b->len += len;
    return r->status;
}

int sm_runner_records_buffer(sm_runner *r, size_t need, void **dst, size_t *avail, size_t *max_records,
                             uint64_t *first) {
    if (!r || !dst || !avail || !max_records || !first) return SM_ERR_INVALID;
    *dst = NULL;
    *avail = *max_records = 0;
    if (r->anchor || r->opt.circular) return SM_ERR_INVALID;
    if (r->status != SM_OK) return r->status;
    if (r->record_open && sm_runner_end_record(r) != SM_OK) return r->status;
    size_t grow_for = need; /* SIZE_MAX: more than there is, the buffer doubles */
    for (;;) {
        sm_batch *b = &r->batches[r->fill];
        size_t limit = r->fill_limit < r->geo.buf_cap ? r->fill_limit : r->geo.buf_cap;
        /* no record is open: everything in the buffer is in segments */
        /* one segment spare: a record fed after them ends the batch at max_segments */
        if (b->len >= limit || b->nsegs + 1 >= r->geo.max_segments || (b->len > 0 && need > limit - b->len) ||
            leave_early(r)) {
            if (submit(r, 0) != SM_OK) return r->status;
            need = 0; /* the next buffer is as empty as it gets */
            continue;
        }
        /* a buffer grows as bytes arrive (doubling), never to its full size at once */
        if (b->cap < limit && (b->len == b->cap || grow_for > b->cap - b->len)) {
            size_t to = grow_for > limit - b->len ? b->cap + 1 : b->len + grow_for;
            if (grow_buffer(r, b, to > b->cap ? to : b->cap + 1) != SM_OK) return r->status = SM_ERR_NOMEM;
        }
        size_t room = (b->cap < limit ? b->cap : limit) - b->len;
        if (room == 0) return r->status = SM_ERR_NOMEM;
        r->records_base = b->len;
        *dst = b->buf + b->len;
        *avail = room;
        *max_records = r->geo.max_segments - b->nsegs - 1;
        *first = r->next_record;
        return SM_OK;
    }
}

int sm_runner_records_commit(sm_runner *r, size_t n, const size_t *offs, const size_t *lens) {
    if (!r || (n && (!offs || !lens)) || r->anchor || r->opt.circular || r->record_open) return SM_ERR_INVALID;
    if (r->status != SM_OK) return r->status;
    sm_batch *b = &r->batches[r->fill];
    size_t at = b->len;
    for (size_t i = 0; i < n; i++) {
        if (offs[i] > b->cap - r->records_base || r->records_base + offs[i] < at ||
            lens[i] > b->cap - r->records_base - offs[i])
            return SM_ERR_INVALID;
        at = r->records_base + offs[i] + lens[i];
    }
    /* begin, feed and end each record without a batch leaving in between:
       the bytes stay where they were written */
    r->part_floor = 0;
    r->part_own_to = UINT64_MAX;
    r->part_left_open = r->part_right_open = r->part_first_pending = 0;
    r->head_len = 0;
    for (size_t i = 0; i < n; i++) {
        r->record_open = 1;
        r->record_id = r->next_record++;
        r->bases += lens[i];
        r->open_off = r->open_base = r->records_base + offs[i];
        r->own_from = 0;
        r->record_len = 0;
        if (r->ends) {
            if (sm_ends_begin_record(r) != SM_OK) return r->status = SM_ERR_NOMEM;
            sm_ends_feed(r, b->buf + r->open_off, lens[i]);
            sm_ends_end_record(r);
        }
        b->len = r->records_base + offs[i] + lens[i];
        int cut = cut_segments(r, 1, 0);
        r->record_open = 0;
        if (cut != SM_OK) return r->status = SM_ERR_NOMEM;
    }
    return SM_OK;
}

typedef struct {
    void (*job)(void *arg, size_t i);
    void *arg;
} feeder_job;

static void run_feeder_job(void *arg, size_t i, unsigned tid) {
    (void)tid;
    const feeder_job *f = arg;
    f->job(f->arg, i);
}

int sm_runner_parallel_for(sm_runner *r, size_t n, void (*job)(void *arg, size_t i), void *arg) {
    if (!r || (n && !job)) return SM_ERR_INVALID;
    feeder_job f = {job, arg};
    sm_team_for(r->team, n, run_feeder_job, &f, 0);
    return SM_OK;
}

unsigned sm_runner_scan_threads(const sm_runner *r) { return r ? sm_team_threads(r->team) : 0; }

int sm_runner_flush(sm_runner *r) {
    if (!r) return SM_ERR_INVALID;
    if (r->status != SM_OK) return r->status;
    if (r->record_open && cut_segments(r, 0, 0) != SM_OK) return r->status = SM_ERR_NOMEM;
    return submit(r, 1);
}

/* ------------------------------------------------------------- parts */

void sm_runner_set_part_callbacks(sm_runner *r, sm_part_callbacks *cb) { r->part_cb = cb; }

uint64_t sm_runner_begin_part(sm_runner *r, uint64_t own_from, int left_open) {
    uint64_t id = sm_runner_begin_record(r);
    if (id == UINT64_MAX) return id;
    r->part_floor = own_from;
    r->part_left_open = left_open;
    /* A record split between parts: the merge places edit ends near the
       split, not exact hits beside them (not supported: refused). */
    if (left_open && r->exact_beside && r->status == SM_OK) r->status = SM_ERR_INVALID;
    r->part_first_pending = left_open && r->edits;
    /* a record's ends must be in one process */
    if (left_open && r->ends && r->status == SM_OK) r->status = SM_ERR_INVALID;
    return id;
}

int sm_runner_end_part(sm_runner *r, uint64_t own_to, int right_open) {
    if (!r) return SM_ERR_INVALID;
    if (!r->record_open) return r->status;
    r->part_own_to = own_to;
    r->part_right_open = right_open && r->edits;
    if (right_open && r->exact_beside && r->status == SM_OK) r->status = SM_ERR_INVALID;
    if (right_open && r->ends && r->status == SM_OK) r->status = SM_ERR_INVALID;
    return sm_runner_end_record(r);
}

uint64_t sm_runner_reach(const sm_runner *r) { return sm_db_reach(sm_db_head(r->db)); }

uint64_t sm_runner_part_overlap(const sm_runner *r) { return r->edits ? sm_runner_reach(r) : r->overlap; }

const uint64_t *sm_runner_counts(const sm_runner *r) { return r ? r->counts : NULL; }
uint64_t sm_runner_total(const sm_runner *r) { return r ? r->total : 0; }
const char *sm_runner_message(const sm_runner *r) {
    return r && atomic_load(&r->failure_said) == 2 ? r->failure : "";
}

void sm_runner_say_failure(sm_runner *r, const char *message) {
    int none = 0;
    /* 1 while the first failing thread writes, 2 once its words are whole */
    if (!atomic_compare_exchange_strong(&r->failure_said, &none, 1)) return;
    snprintf(r->failure, sizeof r->failure, "%s", message);
    atomic_store(&r->failure_said, 2);
}
uint64_t sm_runner_records(const sm_runner *r) { return r ? r->next_record : 0; }
uint64_t sm_runner_bases(const sm_runner *r) { return r ? r->bases : 0; }
const sm_db *sm_runner_db(const sm_runner *r) { return r->db; }
