/* The runner: the layer every backend shares (CPU threads, CUDA, MPI ranks
 * through them), and the interface a backend implements.
 *
 * The shared layer (runner.c, deliver.c) takes the records fed to an
 * sm_runner and packs them into batches: each batch is a text buffer with
 * the segments cut from it, every segment owning a stretch of one record so
 * that each hit is found exactly once:
 *   - exact and k-mismatch hits have a fixed length: a segment owns the hits
 *     that start inside it and reads (longest pattern - 1) bytes past it;
 *   - k-edit hits are found at their end: a segment owns the ends inside it
 *     and reads (longest pattern + k) bytes before it (the look-back);
 *   - overlap-free segments (exact, DFA-only databases on the CPU) read
 *     nothing past their end and own every hit they find; the backend finds
 *     the hits that start before them.
 * Batches go round a ring of buffers: one is filled while the others are
 * scanned by the backend; they land in launch order and are delivered in
 * order, segment by segment, on the calling thread (deliver.c: held hits,
 * runs of edit ends joined across segment borders, record-done calls,
 * counts). A backend only scans: it gets a launched batch and, when asked to
 * land it, leaves each segment's results (hits in record coordinates,
 * sorted; k edits: runs cut at its borders) in the segment.
 */
#ifndef SM_RUNNER_INTERNAL_H
#define SM_RUNNER_INTERNAL_H

#include <stdatomic.h>

#include "core/engine_set.h"
#include "base/internal.h"

typedef struct {
    uint64_t record;
    size_t buf_off;          /* first byte scanned, in the batch buffer */
    size_t scan_len;         /* bytes scanned */
    uint64_t pos0;           /* record coordinate of buf_off */
    uint64_t own_lo, own_hi; /* owns hits starting (edits: ending) in [own_lo, own_hi); exact sections of
                                an edit database: hits starting there */
    int last_of_record;      /* on_record_done after this segment */
    uint64_t start_limit;    /* circular records: hits starting here or later are dropped */
    /* Parts of records (runner_part.h), k edits: runs that touch the part's
       borders go to the part callbacks instead of becoming hits. */
    uint64_t part_first_end; /* the part's first owned end when its left is open, else UINT64_MAX */
    uint8_t part_left_first; /* the first segment of a part whose left is open: reports the keys of its runs there */
    uint8_t part_right_open; /* the last segment of a part whose right is open */
    uint32_t start_state;    /* overlap-free: the DFA state at buf_off (backend) */
    /* Its hits passed the backend's bound (geometry.item_hits): it returns
       none, and delivery scans it again in pieces (dense.c). */
    uint8_t dense;
    /* Summed by the thread that scanned it (summary.c): its owned hits are
       counted (sum_hits; per pattern in the backend's counts) and, for
       record summaries, each pattern's least errors are in sums; hits holds
       none, runs the runs of edit ends cut at its borders as always. */
    uint8_t summed;
    uint64_t sum_hits;
    const sm_pattern_errors *sums;
    size_t nsums;
    /* Results, valid from landing until the batch is refilled. */
    const sm_rawhit *hits;   /* owned hits, sorted, record coordinates */
    size_t nhits;
    const sm_open_run *runs; /* k edits, --report best: runs touching its borders */
    size_t nruns;
    const sm_rawhit *fixes;  /* overlap-free: hits starting before it, found afterwards */
    size_t nfixes;
} sm_segment;

typedef struct sm_batch {
    unsigned index;          /* in the ring */
    uint8_t *buf;            /* text, from the backend */
    size_t len;
    size_t cap;              /* bytes of buf: grows to the geometry's buf_cap as bytes arrive */
    sm_segment *segs;
    size_t nsegs, segs_cap;
    int launched;            /* launched, not yet delivered */
    int early;               /* leaving before it is full, with more input to come (leave_early) */
} sm_batch;

/* What a backend tells the shared layer when it opens. */
typedef struct {
    unsigned batches;        /* buffers in the ring (>= 1) */
    size_t chunk;            /* owned bytes per segment of a long record */
    size_t buf_cap;          /* bytes per buffer (at least chunk + reach) */
    size_t buf_start;        /* a buffer's first size (0: buf_cap, at most 64 MiB); buffers grow by doubling */
    size_t max_segments;     /* a batch with this many segments is launched */
    size_t early_len;        /* a batch this long may leave early when the backend is idle (0: never) */
    int overlap_free;        /* segments read nothing past their end (see above) */
    unsigned host_threads;   /* host threads that scan (0: the scan runs elsewhere) */
    /* Bounded hits (0, 0: the backend stores what it finds): a work item
       stores at most item_hits hits, and a batch holds items_per_batch items
       of one chunk. The shared layer then shrinks the chunk where hits are
       dense (sm_runner_set_chunk) so that items fit, and scans a segment
       that did not fit again in pieces on delivery (dense.c). */
    size_t item_hits;
    size_t items_per_batch;
} sm_backend_geometry;

struct sm_team;

/* Bytes writable past a buffer's capacity: direct writers store whole vectors. */
#define SM_WRITE_SLACK 64

typedef struct sm_backend_ops {
    const char *name;
    /* Opens for runner r (r->db, r->opt and the reach fields are set) and
       fills *geo; returns SM_OK or an error (err filled). */
    int (*open)(sm_runner *r, sm_backend_geometry *geo, void **backend, sm_error *err);
    void (*close)(void *backend);
    /* The text buffer of ring entry index (pinned memory for a GPU), of at
       least bytes bytes (at most the geometry's buf_cap) and SM_WRITE_SLACK
       writable bytes after them (sm_runner_feed_buffer), or NULL. Called
       again for the same index with more bytes, it grows the buffer,
       keeping its contents; it is never called for a launched batch. */
    uint8_t *(*buffer)(void *backend, unsigned index, size_t bytes);
    /* Starts scanning b; may return before it is done. */
    int (*launch)(void *backend, sm_batch *b);
    /* Waits for b (the oldest launched) and fills its segments' results;
       counts found without hits (count mode) go to sm_runner_add_counts. */
    int (*land)(void *backend, sm_batch *b);
    /* 1 when the backend has nothing to do, so a batch may leave before it
       is full (see geometry.early_len); NULL: never. */
    int (*idle)(void *backend);
} sm_backend_ops;

/* The database a runner scans with. */
const sm_db *sm_runner_db(const sm_runner *runner);

extern const sm_backend_ops sm_backend_cpu;
extern const sm_backend_ops sm_backend_cuda;

/* The runner's state shared by the layer and the backends. */
struct sm_runner {
    const sm_db *db;
    sm_runner_options opt;
    /* Tests and benchmarks: the engines' scan loops to use (NULL: the best
       the CPU runs; runner/runner_variant.h). */
    const struct sm_variant *variant;
    const sm_backend_ops *backend;
    void *bd;                /* the backend's own state */
    sm_backend_geometry geo;
    /* The runner's thread team (base/team.h), made before the backend opens:
       the CPU backend scans on it, every backend settles raw results on it
       (settle.c), and feeders' jobs run on it (sm_runner_parallel_for). */
    struct sm_team *team;
    struct sm_settle *settle;
    uint32_t pattern_count;
    int edits;               /* k edits: end ownership, look-back, run joining */
    int exact_beside;        /* k edits with exact sections: segments read overlap bytes past their end too */
    size_t overlap;          /* longest pattern - 1: bytes a segment reads past its end */
    size_t lookback;         /* k edits: bytes read before a segment's first owned byte */
    size_t keep_back;        /* bytes kept before the open record's unscanned bytes */
    int held_delivery;       /* hits of a segment may start before the previous one's */

    sm_batch *batches;       /* the ring */
    unsigned fill;           /* the batch taking fed bytes */
    /* The chunk segments are cut at, and the bytes a batch is launched at:
       geo.chunk and geo.buf_cap, smaller where hits are dense. */
    size_t chunk_now, fill_limit;
    struct sm_dense *dense;  /* dense.c: the caller's engines for dense segments */

    /* The open record: its bytes from own_from on are at fill->buf[open_off ...],
       and up to keep_back bytes before them from fill->buf[open_base] on. */
    int record_open;
    uint64_t record_id;
    uint64_t next_record;
    size_t open_off, open_base;
    uint64_t own_from;
    size_t records_base;     /* sm_runner_records_buffer's place in the filling batch */

    /* Circular records (sm_runner_options.circular): the open record's first
       circ_reach bytes, copied as they are fed, and its length; they are
       fed again at its end, with circ_limit (the record's length) capping
       what the segments cut from then on own. */
    uint8_t *head;
    size_t head_len, circ_reach;
    uint64_t record_len;
    uint64_t circ_limit;     /* UINT64_MAX when no head is being appended */
    int appending;
    /* Anchored hits only (anchor.c); NULL without sm_runner_options.anchor.
       The backends then always return hits (opt.count_only is cleared) and
       count_only keeps what the caller asked. */
    struct sm_anchor_state *anchor;
    int count_only;
    /* Partial matches at record ends (ends.c) and hit limits (limits.c);
       NULL without sm_runner_options.min_overlap, or without any limit
       (the backends then always return hits, as for anchors). */
    struct sm_ends_state *ends;
    struct sm_limits *limits;
    /* The open record as a part of one split between processes (runner_part.h). */
    uint64_t part_floor;     /* first owned coordinate */
    uint64_t part_own_to;    /* owned end of its last segment (UINT64_MAX: the record's end) */
    int part_left_open, part_right_open, part_first_pending;
    struct sm_part_callbacks *part_cb;

    /* Record summaries (sm_runner_options.on_record_summary; summary.c),
       NULL without. */
    struct sm_record_sums *sums;
    /* Delivery (deliver.c). */
    struct sm_delivery *delivery;
    uint64_t *counts;
    uint64_t total;
    uint64_t bases;          /* sequence bytes the caller fed (sm_runner_bases) */
    int status;              /* sticky: SM_ERR_TERMINATED, SM_ERR_NOMEM, SM_ERR_DEVICE */
    /* The backend's words for its first failure (a GPU's error), "" before
       one: sm_runner_message. failure_said: taken by the first failing thread. */
    atomic_int failure_said;
    char failure[256];
};

/* Keeps a backend's words for its failure (the first only; any thread). */
void sm_runner_say_failure(sm_runner *r, const char *message);

/* Count mode: adds a backend's per-pattern counts (pattern_count entries). */
void sm_runner_add_counts(sm_runner *r, const uint64_t *counts);

/* Appends bytes of the open record to the filling batch (no anchor). */
int sm_runner_feed_direct(sm_runner *r, const void *data, size_t len);

/* anchor.c: anchored runners. The open record's bytes go to the anchor
   state first, which feeds the batch only the first (longest + k) bytes,
   or at the record's end the last ones; delivery hands it every hit and it
   emits the anchored ones. */
int sm_anchor_open(sm_runner *r, sm_error *err);
void sm_anchor_close(sm_runner *r);
int sm_anchor_begin_record(sm_runner *r);
int sm_anchor_feed(sm_runner *r, const void *data, size_t len);
/* Where up to *avail bytes of the open record may be written (64 more
   writable after them), then sm_anchor_feed of that place. */
void sm_anchor_stage(sm_runner *r, size_t want, void **dst, size_t *avail);
int sm_anchor_commit(sm_runner *r, size_t len);
int sm_anchor_end_record(sm_runner *r);
/* A hit of the record being delivered, found in its window. */
int sm_anchor_take(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text);
/* That record's last segment has been delivered: emits its held anchored hits. */
int sm_anchor_record_done(sm_runner *r, uint64_t record);

/* settle.c: raw results (k-edit end events, k-mismatch windows to filter
   for a PAM, hits) into the hits a segment owns, sorted, with the runs
   that touch its borders, for every backend, on the runner's threads.
   sink->hits[from, sink->n) are segment s's results in record coordinates
   and text its scanned bytes (b->buf + s->buf_off); tid is the team
   thread's index (base/team.h). SM_OK or SM_ERR_NOMEM. */
int sm_settle_open(sm_runner *r);
void sm_settle_close(sm_runner *r);
int sm_runner_settle(sm_runner *r, unsigned tid, const sm_segment *s, const uint8_t *text, sm_sink *sink, size_t from,
                     sm_run_list *borders);
/* A landed batch's raw results of segment i: hits[0, n) in record
   coordinates, settled in place (settling only drops and rewrites), and its
   border runs. */
typedef struct {
    sm_rawhit *hits;
    size_t n;
    sm_run_list runs;
} sm_settle_piece;
/* Settles every segment of b from pieces[i] on the team and leaves the
   results in the segments (hits, nhits, runs, nruns). */
int sm_runner_settle_batch(sm_runner *r, sm_batch *b, sm_settle_piece *pieces);

/* Sets the chunk the next segments are cut at (clamped to [the least the
   backend's reach allows, geo.chunk]) and the batch length that goes with
   it; the backend calls it while landing, on the calling thread. */
void sm_runner_set_chunk(sm_runner *r, size_t chunk);

/* dense.c: a dense segment's hits, scanned again in pieces that fit
   geo.item_hits on the calling thread, each piece delivered as a segment
   of its own through deliver. */
int sm_deliver_dense(sm_runner *r, const sm_batch *b, const sm_segment *s,
                     int (*deliver)(sm_runner *r, const sm_batch *b, const sm_segment *s));
void sm_dense_close(sm_runner *r);
/* The piece of segment s owning [a, e) (the last piece: to its end),
   scanned with engines into sink (at most limit hits; 0: no bound) and
   settled, its border runs in borders: p is s cut to the piece, with its
   results. SM_OK, SM_ERR_NOMEM, or SM_ERR_LIMIT when its hits passed limit. */
int sm_scan_piece(sm_runner *r, sm_engine_set *engines, sm_sink *sink, sm_run_list *borders, const sm_batch *b,
                  const sm_segment *s, uint64_t a, uint64_t e, int last, size_t limit, sm_segment *p);

/* summary.c: hits summed instead of stored.
   Per pattern, the least errors of a stretch's hits. */
typedef struct {
    uint32_t *least;         /* per pattern: least errors + 1; 0 = no hit */
    uint32_t *touched;       /* the patterns with a hit (each once) */
    size_t ntouched;
} sm_least_errors;
typedef struct {
    sm_pattern_errors *v;
    size_t n, cap;
} sm_pattern_errors_list;
/* A scanning thread's state for summing segments (sm_sum_segment). */
typedef struct {
    sm_sink sink;            /* one piece's raw results: at most the limit */
    sm_run_list borders;     /* a piece's border runs */
    sm_run_list open, next;  /* runs cut at piece borders, waiting for the next piece */
    sm_least_errors least;   /* record summaries only */
    uint64_t piece;          /* the piece length to try next */
    uint64_t hits;
} sm_summer;
int sm_summer_init(sm_summer *z, const sm_runner *r);
void sm_summer_free(sm_summer *z);
/* Sums segment s of b on a scanning thread (engines, z its own): scanned
   in pieces of at most limit raw hits, the runs of edit ends cut at piece
   borders joined, each owned hit counted into counts (per pattern) and, for
   record summaries, its least errors appended to sums (patterns
   ascending); the runs cut at the segment's borders go to runs for
   delivery. *hits gets the hits counted. SM_OK or SM_ERR_NOMEM. */
int sm_sum_segment(sm_runner *r, sm_summer *z, sm_engine_set *engines, const sm_batch *b, const sm_segment *s,
                   size_t limit, uint64_t *counts, sm_run_list *runs, sm_pattern_errors_list *sums, uint64_t *hits);
/* Delivery side (record summaries). */
int sm_record_sums_open(sm_runner *r);
void sm_record_sums_close(sm_runner *r);
void sm_record_sums_hit(sm_runner *r, const sm_rawhit *x);
void sm_record_sums_segment(sm_runner *r, const sm_segment *s);
/* The record's last segment was delivered: calls on_record_summary. */
int sm_record_sums_done(sm_runner *r, uint64_t record);

/* deliver.c: the delivery of landed batches, in order. */
int sm_delivery_open(sm_runner *r);
void sm_delivery_close(sm_runner *r);
int sm_deliver_batch(sm_runner *r, const sm_batch *b);
/* Counts one hit and hands it to the caller (unless only counting). */
int sm_runner_emit(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text);
/* The same past the hit limits: counted, summed or handed to on_hit. */
int sm_runner_emit_out(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text);

/* Partial matches at record ends (ends.c): the first and last longest
   pattern - 1 bytes of each record kept as fed; delivery hands each record's
   hits to sm_ends_take (in order) and its end to sm_ends_record_done, which
   merge the partial hits in. */
int sm_ends_open(sm_runner *r, sm_error *err);
void sm_ends_close(sm_runner *r);
int sm_ends_begin_record(sm_runner *r);
void sm_ends_feed(sm_runner *r, const void *data, size_t len);
void sm_ends_end_record(sm_runner *r);
int sm_ends_take(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text);
int sm_ends_record_done(sm_runner *r, uint64_t record);

/* Hit limits (limits.c): every hit passes sm_limits_take on its way out,
   and each record's end sm_limits_record_done. */
int sm_limits_open(sm_runner *r);
void sm_limits_close(sm_runner *r);
int sm_limits_take(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text);
int sm_limits_record_done(sm_runner *r, uint64_t record);

/* The bytes of a hit that starts at `start` in a segment whose scanned text
   begins at base (record coordinate pos0); overlap-free hits may start before. */
/* Where a segment's owned ends stop: its end, or (k edits beside exact
   sections, whose hits it reads on for) its owned range's. */
static inline uint64_t sm_segment_owned_end(const sm_segment *s) {
    uint64_t end = s->pos0 + s->scan_len;
    return s->own_hi < end ? s->own_hi : end;
}

static inline const uint8_t *sm_segment_text(const uint8_t *base, uint64_t pos0, uint64_t start) {
    return start >= pos0 ? base + (start - pos0) : base - (pos0 - start);
}

#endif /* SM_RUNNER_INTERNAL_H */
