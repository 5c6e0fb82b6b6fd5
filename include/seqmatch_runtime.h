/*
 * seqmatch — scanning a database (sm_db, seqmatch_common.h): hits, block
 * scans, streams and the multi-threaded runner on the CPU or GPUs. The
 * semantics are in seqmatch.h, which includes this header.
 *
 * A runner's settings live in an opaque sm_runner_params (numbered
 * parameters with bounds, and callbacks set one by one); the struct form
 * (sm_runner_options) is experimental (seqmatch.h, "Stability").
 */
#ifndef SEQMATCH_RUNTIME_H
#define SEQMATCH_RUNTIME_H

#include "seqmatch_common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* -------------------------------------------------------------------- hits */

typedef struct {
    uint64_t record;    /* record number (sm_runner); 0 for sm_scan and streams */
    uint64_t start;     /* 0-based, inclusive */
    uint64_t end;       /* exclusive */
    uint32_t pattern;   /* index of the pattern in the compiled set */
    char strand;        /* '+' or '-' */
    uint32_t errors;    /* 0 for exact matching */
    const char *text;   /* the matched bytes (end - start of them), or NULL in streams */
} sm_hit;

/* Return 0 to continue, non-zero to stop the scan (it then returns SM_ERR_TERMINATED).
   The hit and its text are valid during the call only: copy what is kept. */
typedef int (*sm_hit_fn)(const sm_hit *hit, void *ctx);

/* The alignment of a hit of db (hit->text needed) as a CIGAR string of SAM's
   operations: '=' a pattern symbol that matches its text symbol (by the
   database's rules: IUPAC sets, --text-iupac, case), 'X' one that does not,
   'I' a pattern symbol with no text symbol, 'D' a text symbol with no
   pattern symbol. It reads the pattern 5' to 3' as compiled (its PAM
   included): for a '+' hit against the text, for a '-' hit against the
   reverse complement of the text (so a '-' CIGAR read backwards is SAM's,
   which follows the reference). The counts hold: = + X + I is the pattern's
   length, = + X + D is end - start, X + I + D is hit->errors; exact and
   k-mismatch hits have only '=' and 'X'; of the alignments with that many
   errors, the one with its gaps furthest left. Writes the NUL-terminated
   string to buf (cap bytes) and its length (without the NUL) to *len (may be
   NULL). Returns SM_OK; SM_ERR_LIMIT when cap is too small (*len then says
   how long it is); SM_ERR_INVALID for a hit db cannot have given (no text,
   a pattern index out of range, no alignment with hit->errors errors);
   SM_ERR_NOMEM. Costs O(m) for exact and mismatch hits, O(m * errors)
   for edit hits. */
int sm_hit_cigar(const sm_db *db, const sm_hit *hit, char *buf, size_t cap, size_t *len);

/* The alignment of a site of a database with a PAM, exact or with k
   mismatches (sm_compile_options.pam; bulges or not): the best one, as the
   semantics above choose it. */
typedef enum { SM_BULGE_NONE = 0, SM_BULGE_DNA = 1, SM_BULGE_RNA = 2 } sm_bulge;
typedef struct {
    sm_bulge bulge;          /* its kind */
    uint32_t bulge_size;     /* 0 without a bulge */
    uint32_t bulge_at;       /* guide symbols between the bulge and the PAM */
    uint32_t mismatches;     /* = hit->errors */
} sm_site;

/* The alignment of hit (hit->text needed), a site of db, into *site, and
   when guide and dna are not NULL the two rows as off-target tools print
   them, 5' to 3' on the site's strand (for '-' the reverse complement of
   the text), PAM included, each NUL-terminated in cap bytes: guide, the
   pattern with '-' at the text bases of a DNA bulge; dna, the text with
   its mismatched bases in lower case (the others in upper case) and '-'
   at the guide symbols of an RNA bulge. Both rows have the same length,
   at most pattern length + SM_MAX_BULGE. Returns SM_OK; SM_ERR_LIMIT when
   cap is too small; SM_ERR_INVALID for a database without a PAM or with
   k edits, or a hit it cannot have given. */
int sm_hit_site(const sm_db *db, const sm_hit *hit, sm_site *site, char *guide, char *dna, size_t cap);

/* ------------------------------------------------------------ block scan */

typedef struct sm_scratch sm_scratch;

/* Per-thread working memory for db (or any database with the same engines). */
int sm_scratch_alloc(const sm_db *db, sm_scratch **scratch);
void sm_scratch_free(sm_scratch *scratch);

/* Scans one whole sequence. Returns SM_OK, SM_ERR_TERMINATED or SM_ERR_NOMEM;
   SM_ERR_INVALID for a NULL scratch or on_hit, or NULL data with len > 0. */
int sm_scan(const sm_db *db, sm_scratch *scratch, const void *data, size_t len,
            sm_hit_fn on_hit, void *ctx);

/* Counts the hits of one sequence per pattern: counts[i] += hits of pattern i
   (both strands). counts has as many entries as db has patterns
   (sm_db_get(db, SM_DB_PATTERN_COUNT, &n)). */
int sm_count(const sm_db *db, sm_scratch *scratch, const void *data, size_t len,
             uint64_t *counts);

/* ------------------------------------------------------------ streaming */

/* A stream scans one sequence fed in pieces of any size; the hits are the same
   as one sm_scan of the concatenation, in the same order. Hits are delivered
   as soon as they are final, so some come during a later feed or at the end. */
typedef struct sm_stream sm_stream;

int sm_stream_open(const sm_db *db, sm_stream **stream);
int sm_stream_feed(sm_stream *stream, const void *data, size_t len, sm_hit_fn on_hit, void *ctx);
/* Ends the sequence: delivers the remaining hits and resets the stream for the next sequence. */
int sm_stream_end(sm_stream *stream, sm_hit_fn on_hit, void *ctx);
void sm_stream_free(sm_stream *stream);

/* ------------------------------------------------- multi-threaded runner */

/* The CPU backend: scans a series of records on several threads. Long records
   are cut into chunks overlapping by (longest pattern - 1), each hit counted
   once; many short records are spread over the threads. Hits arrive on the
   calling thread in (record, start, end, pattern, strand) order, whatever the
   thread count or chunk size. Memory is bounded by two batch buffers of
   threads x 4 chunks each (one with one thread: the caller fills one while
   the workers scan the other) plus the hits of those two batches, bounded
   per work item whatever the hit density (none with count_only or
   on_record_summary: see there), whatever the record size. With several threads a stop asked by the callback, and
   the counts, show one batch later than the bytes fed. */
typedef struct sm_runner sm_runner;

/* A record's hits in summary (sm_runner_options.on_record_summary): how
   many, and each pattern that has one with the least errors of its hits
   (patterns ascending; strands together). */
typedef struct {
    uint32_t pattern;
    uint32_t errors;
} sm_pattern_errors;

typedef struct {
    uint64_t record;
    uint64_t hits;
    const sm_pattern_errors *patterns; /* valid during the call */
    size_t npatterns;
} sm_record_summary;

#define SM_OVERLAP_FREE_SPECULATE 1
#define SM_OVERLAP_FREE_PREFIX 2

/* Where a runner's hits must lie in their record (sm_runner_options.anchor). */
typedef enum {
    SM_ANCHOR_NONE = 0,  /* anywhere (default) */
    SM_ANCHOR_START = 1, /* at the record's start: a barcode or primer that begins a read */
    SM_ANCHOR_END = 2    /* at the record's end */
} sm_anchor;

/* ------------------------------------------------------- runner settings */

typedef struct sm_runner_params sm_runner_params;

/* The numbered settings (int64_t values; an enum as its value). Defaults:
   every online core, 1 MiB work items, hits (not counts), no overlap-free
   mode, the CPU backend, every GPU, linear records, no anchor. Each means
   what the sm_runner_options field of its name says (the experimental
   struct form below; docs/api.md). A number is never reused. */
typedef enum {
    SM_RPARAM_THREADS = 1,      /* 0 = all online cores (CPU backend) */
    SM_RPARAM_CHUNK_SIZE = 2,   /* bytes per work item (0 = 1 MiB; CUDA: per batch, 0 = 64 MiB) */
    SM_RPARAM_COUNT_ONLY = 3,   /* 1: count hits per pattern; no hit callback */
    SM_RPARAM_OVERLAP_FREE = 4, /* 0, SM_OVERLAP_FREE_SPECULATE or SM_OVERLAP_FREE_PREFIX */
    SM_RPARAM_BACKEND = 5,      /* sm_backend */
    SM_RPARAM_GPU_DEVICE = 6,   /* CUDA: 0 = every visible GPU; d + 1 = GPU d only */
    SM_RPARAM_CIRCULAR = 7,     /* 1: every record is a circle */
    SM_RPARAM_ANCHOR = 8,       /* sm_anchor */
    SM_RPARAM_MIN_OVERLAP = 9,  /* 0: off; N: partial matches at record ends, N symbols inside at least */
    SM_RPARAM_MAX_HITS_PER_PATTERN = 10, /* 0: no limit; N: each pattern's first N hits in each record */
    SM_RPARAM_MAX_HITS_PER_RECORD = 11,  /* 0: no limit; N: each record's first N hits */
    SM_RPARAM_FEWEST_ERRORS = 12         /* 1: each pattern's hits with its fewest errors in each record */
} sm_runner_param;

/* New settings with the defaults and no callbacks; NULL when out of memory. */
sm_runner_params *sm_runner_params_new(void);
void sm_runner_params_free(sm_runner_params *params);
/* As for the compile settings: bounds, set (SM_ERR_INVALID, nothing
   changed, for an unknown parameter or a value out of bounds), get. */
int sm_runner_param_bounds(sm_runner_param param, int64_t *lower, int64_t *upper);
int sm_runner_params_set(sm_runner_params *params, sm_runner_param param, int64_t value);
int sm_runner_params_get(const sm_runner_params *params, sm_runner_param param, int64_t *value);
/* The callbacks (each may be NULL) and the context every one of them gets:
   on_hit per hit; on_record_done once every hit of a record has been
   delivered; on_record_summary per record instead of hits (then on_hit is
   not called). All run on the calling thread, as sm_runner_options says. */
void sm_runner_params_set_context(sm_runner_params *params, void *ctx);
void sm_runner_params_set_on_hit(sm_runner_params *params, sm_hit_fn on_hit);
void sm_runner_params_set_on_record_done(sm_runner_params *params, void (*on_record_done)(uint64_t record, void *ctx));
void sm_runner_params_set_on_record_summary(sm_runner_params *params,
                                            int (*on_record_summary)(const sm_record_summary *summary, void *ctx));

/* A runner for db with these settings (copied: params may be freed after);
   SM_ERR_INVALID when db or params is NULL. */
int sm_runner_create_with_params(const sm_db *db, const sm_runner_params *params, sm_runner **runner,
                                 sm_error *err);

#ifdef SEQMATCH_EXPERIMENTAL
/* ------------------------------------------ experimental: the struct form */

typedef struct {
    unsigned threads;     /* 0 = all online cores (CPU backend) */
    size_t chunk_size;    /* bytes per work item (0 = 1 MiB; counting, 4 bytes per
                             pattern when more, up to 8 MiB); CUDA: bytes per
                             batch (0 = 64 MiB); mainly for tests */
    int count_only;       /* count hits per pattern; on_hit is not called */
    /* Exact automaton-only databases: scan chunks with no overlap. With
       SM_OVERLAP_FREE_PREFIX each chunk starts from its true automaton state,
       found first by simulating every chunk from all states and composing the
       state maps with a parallel prefix scan (two passes). With
       SM_OVERLAP_FREE_SPECULATE (or any other non-zero value) every chunk is
       scanned from the root at once, and afterwards only its first symbols
       are scanned again from the true state, until both runs meet. Same
       hits in every mode. sm_runner_create refuses it (SM_ERR_INVALID) for
       other databases and on the CUDA backend. */
    int overlap_free;
    sm_hit_fn on_hit;
    void *ctx;
    /* Called (on the calling thread) once every hit of a record has been
       delivered; may be NULL. */
    void (*on_record_done)(uint64_t record, void *ctx);
    /* SM_BACKEND_CUDA: batches of records go to the GPUs in turn (two pinned
       buffers per GPU: one filled while the other is scanned); the same hits,
       order, counts and callbacks as the CPU backend. threads is ignored;
       overlap_free is refused. sm_runner_create fails with SM_ERR_DEVICE
       when no GPU can be used and SM_ERR_INVALID for other databases. */
    sm_backend backend;
    /* SM_BACKEND_CUDA: 0 = every visible GPU; d + 1 = GPU d only (one MPI
       rank per GPU). */
    int gpu_device;
    /* Circular records (plasmids, bacterial chromosomes): a record of n bytes
       is a circle, searched as the text of its bytes read round and round
       for n + w bytes, w = longest pattern - 1 + k (k for edits, else 0),
       and the hits that start in it (start < n) are reported: the linear
       ones and those that run over its end, whose end is then past n (end =
       start + the hit's length; a hit may wrap any number of turns round a
       record shorter than it, e.g. CAC at [1, 4) in the record AC). Exact,
       mismatches and edits, every backend; refused with overlap_free. */
    int circular;
    /* Only the hits anchored at each record's start or end. Exact and
       k-mismatch hits: those that start at 0 (SM_ANCHOR_START) or end at
       the record's length n (SM_ANCHOR_END). k edits, at the start: with
       A(j) = edit(pattern, record[0, j)), the hits [0, j) with errors A(j)
       for every j >= 1 with A(j) <= k (SM_REPORT_ENDS), or for the j of
       least A in each run of consecutive such j, leftmost on ties
       (SM_REPORT_BEST); at the end, in either mode, one hit [s, n) whose
       errors are the least edit(pattern, record[s, n)) over s (that is
       D(n)), s the largest that reaches it. A '-' hit is one of the
       pattern's reverse complement, in forward coordinates, as always.
       Only the first (or last) longest pattern + k bytes of each record are
       scanned, so an anchored search costs little more than reading.
       Counts count the anchored hits. Refused (SM_ERR_INVALID) for a
       database with a PAM and k edits, and with circular. */
    sm_anchor anchor;
    /* Per-record summaries instead of hits (filters, per-record tables): when
       set, on_hit is not called and this is, on the calling thread, once for
       every record (with or without hits), before its on_record_done; the
       same hits summed as on_hit would have seen, so counts and anchors are
       unchanged. Returning non-zero stops the run (SM_ERR_TERMINATED). The
       CPU backend then keeps no hit list: each thread sums a segment's hits
       as it scans (in pieces of a bounded number of hits) and delivery gets
       the sums and the runs of edit ends cut at segment borders; the GPU
       backend and overlap-free runners sum on delivery. Counting runners
       (count_only) sum in the threads the same way. */
    int (*on_record_summary)(const sm_record_summary *summary, void *ctx);
    /* Partial matches at record ends (0: off): a pattern of m symbols may
       also be placed so that it runs off a record's start or end (or both,
       round a record shorter than it), when at least min_overlap of its
       symbols lie inside; the symbols outside are free, mismatches are
       counted in the part inside (at most k), and the hit is that part: a
       pattern suffix at [0, L), a prefix at [n - L, n) (for '-' hits, of the
       reverse complement, as always). Where several placements give the same
       part (a record shorter than the pattern), it is reported once, with
       the fewest errors. k edits: a part P[a, b) of at least min_overlap
       symbols, not the whole pattern, aligned with at most k edits to
       record[s, j), where a > 0 needs s = 0 and b < m needs j = n; P(j), the
       least edits of such an alignment ending at j, is reported as D(j) is
       (SM_REPORT_ENDS: every j with P(j) <= k; SM_REPORT_BEST: the least of
       each run of consecutive such j, leftmost on ties), as the hit [s, j)
       with s the largest that reaches P(j) (so [0, j) for j < n); a partial
       hit with the place, pattern and strand of an ordinary hit is reported
       once, with the fewer errors. Every backend; refused (SM_ERR_INVALID)
       with a PAM, circular, anchor, a value of k or less, and for records
       split between processes. */
    uint32_t min_overlap;
    /* Hit limits (0: none), applied to the hits in output order, so the
       same whatever the backend or thread count: in each record, at most
       max_hits_per_pattern hits of each pattern (both strands together) and
       max_hits_per_record hits in all, the first ones. With fewest_errors,
       only each pattern's hits with the fewest errors in the record go on
       (a record's hits are then held until it ends). Counts and summaries
       count the hits kept. */
    uint32_t max_hits_per_pattern;
    uint32_t max_hits_per_record;
    int fewest_errors;
    /* With min_overlap: where set, the partial hits (those that run off a
       record's start or end) are given here instead of to on_hit, in the
       same order among the others (adapter trimming tells them apart); a
       partial edit hit with an ordinary one's place then goes out too,
       after it, not in its place. */
    int (*on_partial_hit)(const sm_hit *hit, void *ctx);
    /* With min_overlap, exact and mismatches: per pattern, the record ends
       its partial hits are wanted at (SM_ENDS_START: [0, j) with j < n,
       SM_ENDS_END: [s, n) with s > 0; a part over the whole record [0, n)
       when either is set; 0: none), copied when the runner is made; NULL:
       both for every pattern. The others are not looked for (a 3' adapter
       needs only the read's end). k edits look at both: the runs of ends
       need every partial alignment. */
    const uint8_t *min_overlap_sides;
} sm_runner_options;

enum { SM_ENDS_START = 1, SM_ENDS_END = 2 };

void sm_runner_options_init(sm_runner_options *opts);
int sm_runner_create(const sm_db *db, const sm_runner_options *opts, sm_runner **runner,
                     sm_error *err);
#endif /* SEQMATCH_EXPERIMENTAL */

/* Starts a record, ending the one still open (as sm_runner_end_record);
   returns its number (0, 1, 2, ... in order of calls). */
uint64_t sm_runner_begin_record(sm_runner *runner);
/* Appends sequence bytes to the current record. May run a batch and call callbacks. */
int sm_runner_feed(sm_runner *runner, const void *data, size_t len);
/* Feeding without a copy: *dst points where up to *avail bytes (at most
   want, at least 1) of the current record may be written, with 64 more
   writable bytes after them for writers that store whole vectors; then
   sm_runner_feed_commit says how many were. May run a batch and call
   callbacks, as sm_runner_feed does. */
int sm_runner_feed_buffer(sm_runner *runner, size_t want, void **dst, size_t *avail);
int sm_runner_feed_commit(sm_runner *runner, size_t len);
#ifdef SEQMATCH_EXPERIMENTAL
/* Many whole records written in place at once (a reader that strips them
   on the runner's threads): ends any open record; *dst points where up to
   *avail bytes may be written, holding at most *max_records records, the
   first to be numbered *first. With need > *avail, a batch holding records
   leaves first (need SIZE_MAX: the buffer also grows). Then
   sm_runner_records_commit takes n records (in all at most *max_records),
   record i's sequence at *dst + offs[i], lens[i] bytes (offsets increasing,
   records apart; the bytes between them are never read): it runs no batch
   and calls no callback, so that the caller may name them, a commit at a
   time, before any of their hits is delivered. SM_ERR_INVALID for anchored
   and circular runners (feed those a record at a time). */
int sm_runner_records_buffer(sm_runner *runner, size_t need, void **dst, size_t *avail, size_t *max_records,
                             uint64_t *first);
int sm_runner_records_commit(sm_runner *runner, size_t n, const size_t *offs, const size_t *lens);
#endif /* SEQMATCH_EXPERIMENTAL */
/* Runs job(arg, i) for every i in [0, n) on the runner's host threads (its
   one thread team: the CPU backend scans on it, every backend turns raw
   results into hits on it) and the caller's, before any scan work they have
   left, and returns when all have run. A feeder that prepares text on
   several threads (stripping line breaks, decompressing) shares the
   runner's threads this way instead of starting as many again. Jobs must
   not call the runner. */
int sm_runner_parallel_for(sm_runner *runner, size_t n, void (*job)(void *arg, size_t i), void *arg);
/* The runner's host threads (sm_runner_options.threads, or every core). */
unsigned sm_runner_scan_threads(const sm_runner *runner);
/* Ends the current record: its hits are delivered by a later batch or by
   sm_runner_flush. */
int sm_runner_end_record(sm_runner *runner);
/* Scans everything pending and delivers all its hits and record-done calls,
   of the records ended: a record still open stays open (hits may still
   cross the bytes it has so far, so its hits wait for its end), and a
   runner freed with a record open drops that record's hits. End the last
   record before the last flush. */
int sm_runner_flush(sm_runner *runner);
/* Per-pattern hit counts so far (pattern_count entries), and their sum. */
const uint64_t *sm_runner_counts(const sm_runner *runner);
uint64_t sm_runner_total(const sm_runner *runner);
/* After a call failed with SM_ERR_DEVICE: what the GPU said, in words (the
   CUDA runtime's error and the step that met it); "" when nothing more than
   the status is known. */
const char *sm_runner_message(const sm_runner *runner);
/* Records begun so far (sm_runner_begin_record's and the many-records path's). */
uint64_t sm_runner_records(const sm_runner *runner);
/* Sequence bytes fed so far (sm_runner_feed's, sm_runner_feed_commit's and
   the many-records path's), what a run report calls its bases: with the
   records and the counts above, a run's numbers without a report. */
uint64_t sm_runner_bases(const sm_runner *runner);
void sm_runner_free(sm_runner *runner);

/* GPUs the CUDA backend can use: 0 when the library was built without CUDA
   or no device is visible. */
int sm_cuda_device_count(void);

/* Starts the CUDA driver and a device's context ahead of a GPU runner
   (device: its index, or -1 for every visible device, started at once), so
   that a runner created later does not wait for them (about a quarter of a
   second on a large GPU): a program may call it on a thread of its own
   while patterns compile. Returns the devices started (0 without CUDA or a
   device). */
int sm_cuda_prepare(int device);

#ifdef SEQMATCH_EXPERIMENTAL
/* Makes `buffers` batch buffers of batch_bytes (a GPU runner's chunk_size)
   in pinned host memory and on device (its index), kept for GPU runners
   about to open there: pinned memory costs its size in time to make (about
   0.7 s a GiB), and made while other runners' batches are in flight it
   holds them up. The buffers of GPU runners that close are kept for later
   ones as well (up to 1 GiB of each kind: no more are made here). Returns 0,
   or -1 (no such GPU, no memory): runners then make their own. */
int sm_cuda_reserve(int device, size_t batch_bytes, unsigned buffers);
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_RUNTIME_H */
