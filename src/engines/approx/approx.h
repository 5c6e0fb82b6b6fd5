/* Approximate search engines: k-mismatches (Hamming), Myers bit-vector
 * k-edits, the anti-diagonal wavefront DP (the reference k-edits engine),
 * start recovery for edit hits and the report-best run reduction.
 *
 * Keys are sm_ac_key, as for the other engines: dna keys are upper-case
 * IUPAC strings (already reverse-complemented for output ids with the reverse
 * bit); text keys are raw bytes, lower-cased under SM_FLAG_IGNORE_CASE.
 * A text byte's class is, for dna, its nucleotide set (sm_nt_set): it matches
 * a pattern symbol when the sets intersect and the text set is one of A C G T,
 * or any non-empty set under SM_FLAG_TEXT_IUPAC; for text, its byte value
 * (folded under SM_FLAG_IGNORE_CASE) must equal the pattern byte.
 *
 * Each engine has the life cycle of the Shift-And engine: build a flat
 * section (offsets, no pointers, 64-byte aligned tables), validate a section
 * read from elsewhere, size and reset a per-thread state of uint64_t words,
 * scan pieces of one sequence with the state carried between calls and
 * absolute positions counted from pos0.
 *
 * k-edits semantics. D(j) is the least edit distance between the key and any
 * substring of the scanned sequence ending at j (exclusive), for ends
 * j = 1 .. n (an empty match ending at 0 is never reported). The k-edits
 * engines report END EVENTS: every j with D(j) <= k, with its distance and no
 * start (SM_START_UNKNOWN). Starts come from sm_edit_start(); the runs of
 * consecutive ends that --report best reduces come from the fragment helpers
 * below. Since D(j) <= m always, k >= m makes every end an event.
 *
 * Parallel prefix. sm_best_merge() is associative, so best-run fragments
 * cut at chunk borders can be joined in any grouping: a pass over the
 * chunks in order, or the CPU backend's generic scan (sm_prefix_scan) when
 * a run spans many chunks. These engines have no scan of their own.
 */
#ifndef SM_APPROX_H
#define SM_APPROX_H

#include "base/cpu.h"
#include "base/internal.h"

/* --------------------------------------------------------------- end events */

/* Records an end event of (pattern, strand) at absolute end with distance.
   An end event is owned by the chunk whose [own_lo, own_hi) holds its last
   byte (end - 1), the end-based counterpart of the sink's start ownership.
   In count mode it is counted per pattern (the count of --report ends). */
static inline void sm_approx_emit_end(sm_sink *sink, uint32_t pattern, int reverse, uint64_t end,
                                      unsigned distance) {
    if (end == 0 || end - 1 < sink->own_lo || end - 1 >= sink->own_hi) return;
    if (sink->counts) { sink->counts[pattern]++; return; }
    if (sink->n == sink->cap && sm_sink_grow(sink) != 0) return;
    sm_rawhit *h = &sink->hits[sink->n++];
    h->start = SM_START_UNKNOWN; h->end = end; h->pattern = pattern;
    h->errors = (uint16_t)distance; h->reverse = (uint8_t)(reverse != 0); h->pad = 0;
}

/* Which instruction set a bit-parallel or DP kernel runs on. AUTO picks the
   best one the running CPU has; the others force a path (for tests and
   benchmarks) and fall back to the next lower one the CPU has. Only the
   Myers engine has an AVX-512 kernel; the others run AVX2 for it. */
typedef enum { SM_APPROX_AUTO = 0, SM_APPROX_SCALAR = 1, SM_APPROX_AVX2 = 2, SM_APPROX_AVX512 = 3 } sm_approx_path;

/* Whether a scan of the Myers or k-mismatch engine may cut its text into
   slices that run side by side in SIMD lanes (src/engines/approx/lanes.h):
   AUTO where that pays (few keys, a long enough text), OFF never, ALWAYS
   whenever the text holds a slice per lane (tests: lane borders in short
   texts). The hits are the same in every mode. */
typedef enum { SM_LANES_AUTO = 0, SM_LANES_OFF = 1, SM_LANES_ALWAYS = 2 } sm_lanes_mode;

/* 1 when the running CPU (and this build) can run path. */
int sm_approx_path_supported(sm_approx_path path);
/* The path AUTO resolves to on this CPU. */
sm_approx_path sm_approx_best_path(void);
/* The highest path a CPU with these features runs (a scan state's choice). */
sm_approx_path sm_approx_path_for(const sm_cpu_features *cpu);

/* ------------------------------------------------------ k-mismatches engine */

/* Every window [i, i + m) of a key with at most k mismatched symbols, reported
 * as sm_sink_add(sink, i, i + m, pattern, reverse, mismatches).
 *
 * Bit-sliced counters: all keys lie end to end in one long bit vector (bit p
 * of a key = its position p). For each position the state holds a counter of
 * the mismatches of the key prefix ending there, kept as B bit planes plus a
 * sticky overflow plane; B = ceil(log2(k + 1)). A key start is loaded with
 * 2^B - 1 - k, so the counter overflows exactly when the mismatches pass k.
 * One text byte shifts every plane by one position (across words) and adds
 * the byte's mismatch vector with a ripple carry over the planes. A window is
 * a hit when the overflow bit at the key's last position is clear.
 *
 *   sm_km_header
 *   mismatch   uint64[rows * stride]: bit set where the key symbol does NOT match the class
 *   starts     uint64[stride], finals uint64[stride]
 *   final_base uint32[words]: finals in the words before this one
 *   key_info   sm_km_key[nkeys], in final-bit order
 */
typedef struct {
    uint32_t output;
    uint32_t length;
} sm_km_key;

typedef struct {
    uint32_t words;       /* 64-bit words of the bit vector */
    uint32_t stride;      /* words per mismatch row, >= words, a multiple of 8 */
    uint32_t rows;        /* mismatch rows; class_of[] < rows */
    uint32_t nkeys;
    uint32_t k;           /* the bound, clamped to the longest key */
    uint32_t planes;      /* counter bit planes B (the overflow plane comes on top) */
    uint64_t bits;        /* used bits */
    uint32_t max_key;
    uint32_t reserved;
    uint64_t mismatch_off, starts_off, finals_off, final_base_off, keys_off;
    uint16_t class_of[256];
} sm_km_header;

int sm_km_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                uint64_t max_bytes, sm_buf *section, sm_error *err);
int sm_km_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);
size_t sm_km_state_words(const uint8_t *section);
/* Back to the start of a sequence: no window is complete yet. */
void sm_km_state_reset(const uint8_t *section, uint64_t *state);
void sm_km_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink);
void sm_km_scan_path(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path);
void sm_km_scan_mode(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path, sm_lanes_mode lanes);

/* ------------------------------------------------------ Myers k-edits engine */

/* Myers' bit-vector algorithm (vertical/horizontal delta vectors Pv Mv Ph Mh)
 * reporting every end j with D(j) <= k through sm_approx_emit_end.
 *
 * Keys of up to 64 symbols are packed into 64-bit lanes: a lane holds
 * floor(64 / W) fields of width W, W >= its longest key (and large enough to
 * hold the biased score below). A key of length m < W sits in the top m bits
 * of its field; the W - m bits below it match every class and start with
 * zero vertical deltas, so they act as the DP's top row. Fields stay apart
 * because the addition sees Pv with the fields' top bits cleared (no carry
 * leaves a field) and the shifted Ph/Mh lose the bit entering a field. The
 * score of every field is kept packed in a second word, biased by
 * 2^(W-1) - 1 - k, so D(j) <= k exactly when the field's top bit is clear:
 * one AND-NOT and one test per step finds every hit of the lane. A key
 * alone in its lane gets W = 64: its field masks are then no-ops, and groups
 * of such lanes run a step without them.
 * Lanes run eight at a time in AVX-512 registers or four at a time in AVX2
 * registers (runtime dispatch), or one at a time in the scalar path.
 *
 * Longer keys run on 64-bit blocks chained by horizontal deltas with
 * Ukkonen's cut-off: only blocks up to the last one that can hold a cell
 * <= k are computed.
 *
 *   sm_my_header
 *   lane_const  uint64[5][lanes]: top bits F, not-start-bits NS, score shift,
 *               initial Pv, initial score word
 *   lane_info   sm_my_lane[lanes]
 *   fields      sm_my_field[fields]
 *   peq         uint64[rows][lanes]: match bits of each lane per class
 *   long_keys   sm_my_long[long_keys]
 *   long_peq    uint64[...]: per long key rows * blocks words, row-major
 */
typedef struct {
    uint32_t width;       /* field width W (0 for an unused lane) */
    uint32_t fields;      /* fields in use */
    uint32_t first_field; /* index of its first sm_my_field */
    uint32_t reserved;
    uint64_t bias;        /* 2^(W-1) - 1 - min(k, W) */
} sm_my_lane;

typedef struct {
    uint32_t output;
    uint32_t length;
} sm_my_field;

typedef struct {
    uint32_t output;
    uint32_t length;
    uint32_t blocks;
    uint32_t k;           /* min(k, length) */
    uint64_t peq_at;      /* word index into long_peq */
    uint64_t state_at;    /* word index into the scan state */
} sm_my_long;

typedef struct {
    uint32_t rows;
    uint32_t lanes;        /* a multiple of 8 (0 when there is no short key) */
    uint32_t fields;
    uint32_t long_keys;
    uint32_t nkeys;
    uint32_t k;
    uint64_t long_peq_words;
    uint64_t state_words;
    uint64_t lane_const_off, lane_info_off, fields_off, peq_off, long_off, long_peq_off;
    uint16_t class_of[256];
} sm_my_header;

int sm_my_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                uint64_t max_bytes, sm_buf *section, sm_error *err);
int sm_my_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);
size_t sm_my_state_words(const uint8_t *section);
void sm_my_state_reset(const uint8_t *section, uint64_t *state);
/* End events are final when reported: nothing is held back. */
void sm_my_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink);
void sm_my_scan_path(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path);
void sm_my_scan_mode(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path, sm_lanes_mode lanes);

/* ------------------------------------------------------ wavefront DP engine */

/* The edit-distance table computed one anti-diagonal at a time: the cells
 * (i, d - i) of diagonal d depend only on diagonals d - 1 and d - 2, so a
 * whole diagonal is one independent vector loop. Rows are stored in reverse
 * (r = m - i) and the key reversed, so the text symbols a diagonal needs are
 * the last m bytes in their natural order. Cell values saturate at k + 1
 * (exact below), in bytes when k + 1 <= 255 and 32-bit words otherwise.
 *
 * Row m of diagonal d is column d - m: an end is known m - 1 bytes after
 * its last byte was read. sm_wf_finish() delivers the ends held back at the
 * end of a sequence.
 *
 *   sm_wf_header
 *   keys   sm_wf_key[nkeys]
 *   syms   uint8: each key's symbols, reversed (dna: nucleotide sets; text: folded bytes)
 */
typedef struct {
    uint32_t output;
    uint32_t length;
    uint32_t cap;         /* min(k, length) + 1: the saturation value */
    uint32_t cell_bytes;  /* 1 or 4 */
    uint64_t syms_at;     /* byte offset into syms */
    uint64_t state_at;    /* word index into the scan state */
} sm_wf_key;

typedef struct {
    uint32_t nkeys;
    uint32_t k;
    uint32_t max_key;
    uint32_t alphabet;
    uint64_t syms_bytes;
    uint64_t state_words;
    uint64_t keys_off, syms_off;
    uint8_t text_class[256]; /* dna: matchable nucleotide set (0: matches nothing); text: folded byte */
} sm_wf_header;

int sm_wf_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                uint64_t max_bytes, sm_buf *section, sm_error *err);
int sm_wf_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);
size_t sm_wf_state_words(const uint8_t *section);
void sm_wf_state_reset(const uint8_t *section, uint64_t *state);
void sm_wf_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink);
void sm_wf_scan_path(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                     sm_sink *sink, sm_approx_path path);
/* Ends the sequence whose last byte is at end_pos - 1: reports the ends still
   held back and resets the state. */
void sm_wf_finish(const uint8_t *section, uint64_t *state, uint64_t end_pos, sm_sink *sink);

/* ---------------------------------------------------------- start recovery */

/* The largest s with edit(key, text[s, end)) == distance, where text[0]
   is at absolute position text_pos0 (the sequence start, or any position at
   least m + distance before end), end <= text_pos0 + text_len, and distance
   is D(end) as the engines report it. key is in the engines' key form; dna
   keys may hold IUPAC codes and text classes follow flags as above. Returns
   SM_START_UNKNOWN when no such s exists (distance is not D(end)). Builds its
   tables for this one call; scans use an sm_edit_cache. */
uint64_t sm_edit_start(const uint8_t *key, uint32_t m, sm_alphabet alphabet, unsigned flags, const uint8_t *text,
                       size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t distance);

/* Per-thread tables for start recovery, built once per (pattern, strand) of
   the database in use (a cache moved to another database starts afresh). */
typedef struct sm_edit_cache sm_edit_cache;
/* The engines' resolve and filter operations (src/engines/engine.h):
   resolve.c turns k-edit end events into hits, with a PAM constrained
   first; pam.c drops k-mismatch windows whose PAM does not match. */
int sm_edits_resolve(const sm_db *db, sm_edit_cache *cache, sm_sink *sink, size_t from, const uint8_t *text,
                     size_t len, uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders);
void sm_pam_filter_windows(const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                           uint64_t pos0);
sm_edit_cache *sm_edit_cache_new(void);
void sm_edit_cache_free(sm_edit_cache *cache);
/* sm_edit_start for the key of (pattern, strand) of db (no PAM): *start is
   the start or SM_START_UNKNOWN. Returns SM_OK or SM_ERR_NOMEM. */
int sm_edit_cache_start(sm_edit_cache *cache, const sm_db *db, uint32_t pattern, int reverse, const uint8_t *text,
                        size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t distance, uint64_t *start);
/* With a PAM of q symbols: the constrained distance D'(end) of (pattern,
   strand) when it is at most limit, and its start (include/seqmatch.h gives
   the definitions); otherwise *distance > limit and *start unknown. Forward:
   the PAM must match text[end - q, end) and D' = the least edit(guide,
   text[s, end - q)). Reverse (key rc(PAM) + rc(guide)): D' = the least
   edit(rc(guide), text[s + q, end)) over the s where text[s, s + q) matches
   rc(PAM). Start: the largest s reaching D'. text must hold the
   m + limit bytes before end, or the sequence start. */
int sm_edit_cache_pam(sm_edit_cache *cache, const sm_db *db, uint32_t pattern, int reverse, const uint8_t *text,
                      size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t limit, uint32_t *distance,
                      uint64_t *start);

/* ---------------------------------------------------------- report best */

/* A run of consecutive ends j, j + 1, ... with D <= k of one (pattern,
   strand), as seen by one chunk whose possible ends are [range_first,
   range_last]. touches_left / touches_right say that the run reaches an edge
   of that range and may continue into the neighbouring chunk. */
typedef struct {
    uint64_t first_end, last_end;
    uint64_t best_end;     /* least distance, leftmost on ties */
    uint32_t best_distance;
    uint8_t touches_left, touches_right;
    uint16_t reserved;
} sm_best_fragment;

/* Folds a sorted stream of end events into fragments. */
typedef struct {
    uint64_t range_first, range_last;
    sm_best_fragment run;
    int open;
} sm_best_builder;

void sm_best_begin(sm_best_builder *b, uint64_t range_first, uint64_t range_last);
/* Adds the next end event (ends strictly increasing, inside the range).
   Returns 1 and fills *done when this event closed the previous run. */
int sm_best_push(sm_best_builder *b, uint64_t end, uint32_t distance, sm_best_fragment *done);
/* Closes the last run; returns 1 and fills *done when there was one. */
int sm_best_end(sm_best_builder *b, sm_best_fragment *done);

/* Do a (earlier) and b (later) belong to one run: a touches the right edge of
   its range, b the left edge of its, and b starts at the end after a's last? */
int sm_best_adjacent(const sm_best_fragment *a, const sm_best_fragment *b);
/* out = the run a followed by b (requires sm_best_adjacent(a, b)). */
void sm_best_merge(const sm_best_fragment *a, const sm_best_fragment *b, sm_best_fragment *out);

#endif /* SM_APPROX_H */
