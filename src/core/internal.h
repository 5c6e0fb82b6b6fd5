/* Internal structures shared by the core, the engines and the backends.
 *
 * A database is one flat, 64-byte aligned block of bytes:
 *
 *   sm_db_header                      fixed 256 bytes, at offset 0
 *   sm_db_pattern[pattern_count]      per pattern: name, sequence, length
 *   strings                           names and sequences, NUL-terminated
 *   automaton section (optional)      sm_ac_header + tables (src/engines/automaton)
 *   shiftand section (optional)       sm_sa_header + tables (src/engines/bitparallel)
 *   approx, k-mer and Wu-Manber sections (optional), likewise
 *
 * Every reference inside the block is a byte offset (from the block start for
 * the header, from the section start inside a section), so the block can be
 * written to a file, memory-mapped or copied to another device as it is.
 * Integers are stored in the host's byte order; the header records that
 * order and loading on a host with the other order is refused.
 */
#ifndef SM_INTERNAL_H
#define SM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "seqmatch.h"

#define SM_DB_MAGIC "SEQMATCH"
#define SM_DB_FORMAT_VERSION 2u /* 2: the Wu-Manber section */
#define SM_DB_BYTE_ORDER_MARK 0x01020304u
#define SM_DB_ALIGN 64u

typedef struct {
    char magic[8];          /* "SEQMATCH" */
    uint32_t version;       /* SM_DB_FORMAT_VERSION */
    uint32_t byte_order;    /* SM_DB_BYTE_ORDER_MARK as written by the builder */
    uint64_t size;          /* bytes of the whole block */
    uint32_t checksum;      /* CRC-32 (zlib) of bytes [sizeof header, size) */
    uint32_t alphabet;      /* sm_alphabet */
    uint32_t strands;       /* sm_strands (SM_STRAND_FORWARD for text) */
    uint32_t flags;         /* SM_FLAG_* */
    uint32_t pattern_count;
    uint32_t min_length, max_length;
    uint32_t automaton_patterns, shiftand_patterns;
    uint32_t reserved0;
    uint64_t patterns_off;  /* sm_db_pattern[pattern_count] */
    uint64_t strings_off, strings_size;
    uint64_t automaton_off, automaton_size; /* 0, 0 when absent */
    uint64_t shiftand_off, shiftand_size;   /* 0, 0 when absent */
    uint32_t match;         /* sm_match */
    uint32_t max_errors;    /* k (0 for exact) */
    uint32_t report;        /* sm_report */
    uint32_t approx_patterns;
    uint32_t approx_engine; /* SM_PATTERN_MISMATCH / _MYERS / _WAVEFRONT, or 0 */
    uint32_t reserved1;
    uint64_t approx_off, approx_size;       /* 0, 0 when absent */
    uint64_t kmer_off, kmer_size;           /* 0, 0 when absent */
    uint32_t kmer_patterns;
    uint32_t reserved2;
    uint64_t wumanber_off, wumanber_size;   /* 0, 0 when absent */
    uint32_t wumanber_patterns;
    uint32_t reserved3;
    uint8_t reserved[256 - 208];
} sm_db_header;
_Static_assert(sizeof(sm_db_header) == 256, "the database header is 256 bytes");

/* Which engine scans a pattern. */
enum {
    SM_PATTERN_AUTOMATON = 1,
    SM_PATTERN_SHIFTAND = 2,
    SM_PATTERN_MISMATCH = 3,
    SM_PATTERN_MYERS = 4,
    SM_PATTERN_WAVEFRONT = 5,
    SM_PATTERN_KMER = 6,
    SM_PATTERN_PIGEONHOLE = 7,
    SM_PATTERN_WUMANBER = 8
};

/* Bytes of text a scan must see before the first end it reports exactly, and
   after the last start it owns: the longest pattern plus the error budget. */
static inline uint64_t sm_db_reach(const sm_db_header *h) { return (uint64_t)h->max_length + h->max_errors; }

typedef struct {
    uint64_t name_off;   /* into strings, NUL-terminated */
    uint64_t seq_off;    /* into strings, NUL-terminated; dna: upper case, U as T */
    uint32_t length;
    uint32_t engine;     /* SM_PATTERN_* */
} sm_db_pattern;

struct sm_db {
    uint8_t *bytes;      /* the block, SM_DB_ALIGN aligned */
    size_t size;
    int mapped;          /* bytes is a read-only mapping of a saved file (sm_db_load) */
};

static inline const sm_db_header *sm_db_head(const sm_db *db) {
    return (const sm_db_header *)db->bytes;
}

const sm_db_pattern *sm_db_patterns(const sm_db *db);
const uint8_t *sm_db_automaton(const sm_db *db); /* section start, or NULL */
const uint8_t *sm_db_shiftand(const sm_db *db);  /* section start, or NULL */
const uint8_t *sm_db_approx(const sm_db *db);    /* section start, or NULL */
const uint8_t *sm_db_kmer(const sm_db *db);      /* section start, or NULL */
const uint8_t *sm_db_wumanber(const sm_db *db);  /* section start, or NULL */
/* Exact matching with every pattern in the automaton (no other section):
   what overlap-free chunking and the CUDA backend scan. */
int sm_db_automaton_only(const sm_db *db);
/* Sets the size and checksum of a freshly assembled block. */
void sm_db_seal(uint8_t *bytes, uint64_t size);

/* An output id names a (pattern, strand) pair: pattern * 2 + (strand == '-'). */
static inline uint32_t sm_output_id(uint32_t pattern, int reverse) { return pattern * 2u + (reverse ? 1u : 0u); }

/* ------------------------------------------------------------- hit sinks */

typedef struct {
    uint64_t start, end;
    uint32_t pattern;
    uint16_t errors;
    uint8_t reverse;     /* 0 '+', 1 '-' */
    uint8_t pad;
} sm_rawhit;

/* Where an engine puts hits. Engines report only hits whose start lies in
   [own_lo, own_hi) (absolute coordinates) so that overlapping chunks count
   every hit once. In count mode (counts != NULL) hits are only counted. */
typedef struct {
    sm_rawhit *hits;
    size_t n, cap;
    uint64_t *counts;    /* per pattern, or NULL to store hits */
    uint64_t own_lo, own_hi;
    int failed;          /* allocation failed while storing */
    /* Count mode, optional: per automaton state, how often it was reached by
       an owned hit. Cheaper than per-pattern counting for dense hits; the
       owner folds it into counts (sm_ac_fold_visits). */
    uint32_t *ac_visits;
    uint32_t *kt_visits; /* count mode, optional: per distinct k-mer of the k-mer engine */
} sm_sink;

int sm_sink_grow(sm_sink *sink);  /* doubles capacity; sets failed on error */

static inline void sm_sink_add(sm_sink *sink, uint64_t start, uint64_t end, uint32_t pattern,
                               int reverse, unsigned errors) {
    if (start < sink->own_lo || start >= sink->own_hi) return;
    if (sink->counts) { sink->counts[pattern]++; return; }
    if (sink->n == sink->cap && sm_sink_grow(sink) != 0) return;
    sm_rawhit *h = &sink->hits[sink->n++];
    h->start = start; h->end = end; h->pattern = pattern;
    h->errors = (uint16_t)errors; h->reverse = (uint8_t)(reverse != 0); h->pad = 0;
}

/* Sorts hits in the deterministic order (start, end, pattern, strand). */
void sm_sort_hits(sm_rawhit *hits, size_t n);

/* --------------------------------------------------------------- alphabet */

/* 4-bit nucleotide set of a byte: A=1 C=2 G=4 T/U=8, IUPAC codes their union,
   anything else 0. Case-insensitive. */
extern const uint8_t sm_nt_set[256];
/* Byte normalisation the exact engines apply to the text before their class
   maps: dna upper case with U as T; text lower case under SM_FLAG_IGNORE_CASE. */
void sm_text_fold(int dna, unsigned flags, uint8_t fold[256]);
/* IUPAC complement of an upper-case letter (A<->T, R<->Y, N->N, ...); 0 if none. */
extern const uint8_t sm_nt_complement[256];

/* ------------------------------------------------------ automaton engine */

/* Bytes that the automaton builders receive: one concrete string per key,
   already normalised (dna: upper-case ACGT only; text: raw, or lower-cased
   when case is ignored), each with the output id it reports. */
typedef struct {
    const uint8_t *seq;
    uint32_t len;
    uint32_t output;
} sm_ac_key;

/* Growable byte buffer used to assemble sections. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
} sm_buf;
int sm_buf_reserve(sm_buf *b, size_t extra);
int sm_buf_append(sm_buf *b, const void *p, size_t n);
int sm_buf_align(sm_buf *b, size_t align); /* pads with zero bytes */
void sm_buf_free(sm_buf *b);

/* ---------------------------------------------------------------- errors */

/* Fills err (when not NULL) with code and a printf-style message; returns code. */
int sm_set_error(sm_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* --------------------------------------------------------- engine states */

/* The scan state of every engine for one position of one sequence. */
typedef struct {
    uint32_t automaton;     /* automaton state (0 = root) */
    uint64_t *shiftand;     /* sm_sa_state_words() words, or NULL */
    size_t shiftand_words;
    uint64_t *approx;       /* the approximate engine's state words, or NULL */
    size_t approx_words;
    uint32_t *ac_visits;    /* count mode: per automaton state (allocated on first use) */
    uint64_t *kmer;         /* the k-mer engine's state words, or NULL */
    size_t kmer_words;
    uint32_t *kt_visits;    /* count mode: per distinct k-mer (allocated on first use) */
    struct sm_ph_state *pigeonhole; /* the pigeonhole filter's state, or NULL */
    uint64_t *wumanber;     /* the Wu-Manber engine's state words (kept bytes), or NULL */
    size_t wumanber_words;
} sm_engine_state;

int sm_engine_state_init(const sm_db *db, sm_engine_state *state);  /* allocates */
void sm_engine_state_reset(const sm_db *db, sm_engine_state *state); /* back to the start state */
void sm_engine_state_free(sm_engine_state *state);
/* Count mode: the automaton visit counters of state (NULL without an
   automaton, or when out of memory). sm_fold_visits adds them to counts. */
uint32_t *sm_engine_state_visits(const sm_db *db, sm_engine_state *state);
uint32_t *sm_engine_state_kmer_visits(const sm_db *db, sm_engine_state *state);
void sm_fold_visits(const sm_db *db, sm_engine_state *state, uint64_t *counts);

/* Runs every engine of db over text[0, len), whose first byte is at absolute
   position pos0, from *state (updated); hits go to sink. */
void sm_scan_engines(const sm_db *db, sm_engine_state *state, const uint8_t *text, size_t len,
                     uint64_t pos0, sm_sink *sink);
/* Ends a scanned stretch whose last byte is at end_pos - 1: engines that hold
   results back (the wavefront) report them. */
void sm_finish_engines(const sm_db *db, sm_engine_state *state, uint64_t end_pos, sm_sink *sink);

/* ------------------------------------------------------------ k edits */

/* A run of ends of one (pattern, strand) cut at a segment border, waiting to
   be joined with its neighbour's part; best_start already recovered. */
typedef struct {
    uint64_t first_end, last_end, best_end, best_start;
    uint32_t pattern, best_distance;
    uint8_t reverse, touches_left, touches_right, pad;
} sm_open_run;

typedef struct {
    sm_open_run *runs;
    size_t n, cap;
} sm_run_list;

/* Turns the end events in sink->hits[from, sink->n) of one segment into hits:
   with SM_REPORT_ENDS every event becomes a hit; with SM_REPORT_BEST each run
   of ends gives its best end, except runs that touch the segment's first or
   last owned end (first_end, last_end), which go to borders (when not NULL)
   to be joined with the neighbouring segments. Starts are recovered from
   text[0, len) at absolute position pos0. Hits replace the events in the
   sink, sorted. Returns SM_OK or SM_ERR_NOMEM. */
int sm_edits_resolve(const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                     uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders);
int sm_run_list_push(sm_run_list *list, const sm_open_run *run);

/* The database a runner scans with. */
const sm_db *sm_runner_db(const sm_runner *runner);

/* Aligned allocation helpers (64-byte alignment for tables). */
void *sm_aligned_alloc(size_t size);
void sm_aligned_free(void *p);

#endif /* SM_INTERNAL_H */
