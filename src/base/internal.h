/* Internal structures shared by the core, the engines and the backends.
 *
 * A database is one flat, 64-byte aligned block of bytes (docs/format.md is
 * the normative description):
 *
 *   sm_db_header                      fixed 256 bytes, at offset 0
 *   sm_db_section[section_count]      the section directory
 *   sm_db_pattern[pattern_count]      per pattern: name, sequence, length, section
 *   strings                           names and sequences, NUL-terminated
 *   sections                          each engine's tables (src/engines/<engine>/)
 *
 * Every reference inside the block is a byte offset (from the block start for
 * the header, the directory and the pattern table, from the section start
 * inside a section), so the block can be written to a file, memory-mapped or
 * copied to another device as it is. Integers are stored in the host's byte
 * order; the header records that order and loading on a host with the other
 * order is refused.
 */
#ifndef SM_INTERNAL_H
#define SM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "seqmatch.h"

#define SM_DB_MAGIC "SEQMATCH"
#define SM_DB_FORMAT_VERSION 4u /* 3: the section directory; 4: pigeonhole pieces of up to 12 bases, with probes */
#define SM_DB_BYTE_ORDER_MARK 0x01020304u
#define SM_DB_ALIGN 64u
/* A database lists at most this many sections (a sanity bound for loading). */
#define SM_DB_MAX_SECTIONS 64u

typedef struct {
    char magic[8];          /* "SEQMATCH" */
    uint32_t version;       /* SM_DB_FORMAT_VERSION */
    uint32_t byte_order;    /* SM_DB_BYTE_ORDER_MARK as written by the builder */
    uint64_t size;          /* bytes of the whole block */
    uint32_t checksum;      /* CRC-32 (zlib) of the whole block, this field read as zero */
    uint32_t alphabet;      /* sm_alphabet */
    uint32_t strands;       /* sm_strands (SM_STRAND_FORWARD for text) */
    uint32_t flags;         /* SM_FLAG_* */
    uint32_t pattern_count;
    uint32_t min_length, max_length;
    uint32_t match;         /* sm_match */
    uint32_t max_errors;    /* k (0 for exact) */
    uint32_t report;        /* sm_report */
    uint64_t patterns_off;  /* sm_db_pattern[pattern_count] */
    uint64_t strings_off, strings_size;
    uint64_t directory_off; /* sm_db_section[section_count] */
    uint32_t section_count;
    uint32_t pam_length;    /* symbols at each pattern's PAM end that must match exactly (0: none) */
    uint32_t pam_side;      /* sm_pam_side: that end, 3' (0) or 5' (1) */
    uint32_t dna_bulges, rna_bulges; /* k mismatches with a PAM: the longest bulges (0: none) */
    uint8_t reserved[256 - 116]; /* zero */
} sm_db_header;
_Static_assert(sizeof(sm_db_header) == 256, "the database header is 256 bytes");

/* One entry of the section directory. */
typedef struct {
    uint32_t kind;          /* SM_SECTION_* (src/engines/engine.h) */
    uint32_t patterns;      /* patterns whose section is this one */
    uint64_t offset;        /* from the block start, a multiple of SM_DB_ALIGN */
    uint64_t size;
    uint64_t reserved;      /* zero */
} sm_db_section;
_Static_assert(sizeof(sm_db_section) == 32, "a directory entry is 32 bytes");

/* Bytes of text a scan must see before the first end it reports exactly, and
   after the last start it owns: the longest pattern plus the error budget. */
static inline uint64_t sm_db_reach(const sm_db_header *h) { return (uint64_t)h->max_length + h->max_errors; }

/* The longest hit a database gives without edits: its longest pattern, and
   the longest DNA bulge a site may add. */
static inline uint32_t sm_db_longest_hit(const sm_db_header *h) { return h->max_length + h->dna_bulges; }

/* Does the PAM of (pattern, strand) lie at the start of its key (the
   pattern as the engines search it, reverse complemented for '-')? */
static inline int sm_db_pam_first(const sm_db_header *h, int reverse) {
    return (h->pam_side == SM_PAM_5PRIME) != (reverse != 0);
}

typedef struct {
    uint64_t name_off;   /* into strings, NUL-terminated */
    uint64_t seq_off;    /* into strings, NUL-terminated; dna: upper case, U as T */
    uint32_t length;
    uint32_t section;    /* index in the section directory of the section that scans it */
} sm_db_pattern;

/* What --explain says of a database's build (engines/engine.h fills it). */
typedef struct {
    int automaton_on_gpu;
    double gpu_ms[3]; /* keys in, kernels, tables back */
} sm_build_report_info;

struct sm_db {
    uint8_t *bytes;      /* the block, SM_DB_ALIGN aligned */
    size_t size;
    int mapped;          /* bytes is a read-only mapping of a saved file (sm_db_load) */
    /* compiled in this process (not saved with it; zero when loaded): how
       long, and where the automaton was built */
    double build_seconds;
    sm_build_report_info built;
};

static inline const sm_db_header *sm_db_head(const sm_db *db) {
    return (const sm_db_header *)db->bytes;
}

const sm_db_pattern *sm_db_patterns(const sm_db *db);
/* The section directory: section_count entries. */
const sm_db_section *sm_db_sections(const sm_db *db);
/* The first section of a kind (its bytes, and its size in *size), or NULL. */
const uint8_t *sm_db_section_of_kind(const sm_db *db, uint32_t kind, uint64_t *size);
/* Patterns scanned by sections of a kind. */
uint32_t sm_db_patterns_of_kind(const sm_db *db, uint32_t kind);
/* Is [off, off + len) inside [0, size), with no overflow? Every validator
   checks its tables with it. */
static inline int sm_fits(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

/* The least b with 2^b >= x (table sizes). */
static inline uint32_t sm_log2_ceil(uint64_t x) {
    uint32_t b = 0;
    while ((1ull << b) < x) b++;
    return b;
}

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

/* The order hits go out in, within a record: by start, end, pattern, strand.
   Negative, zero or positive, as for qsort. */
static inline int sm_rawhit_cmp(const sm_rawhit *a, const sm_rawhit *b) {
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pattern != b->pattern) return a->pattern < b->pattern ? -1 : 1;
    return (int)a->reverse - (int)b->reverse;
}

/* Where an engine puts hits. Engines report only hits whose start lies in
   [own_lo, own_hi) (absolute coordinates) so that overlapping chunks count
   every hit once. In count mode (counts != NULL) hits are only counted. */
typedef struct {
    sm_rawhit *hits;
    size_t n, cap;
    uint64_t *counts;    /* per pattern, or NULL to store hits */
    uint64_t own_lo, own_hi;
    int failed;          /* allocation failed while storing: nothing more is stored */
    /* Most hits to store (0: no bound). A sink at its bound stores no more
       and says so in overflow; its owner scans the text again in smaller
       pieces (the runner's dense segments, src/runner/dense.c). */
    size_t limit;
    int overflow;
    /* Count mode, optional: the counters of the engine being run (per
       automaton state, per k-mer code or slot), cheaper than per-pattern
       counting for dense hits; the owner folds them into counts through the
       engine's fold_visits. Set per engine by the caller. */
    uint32_t *visits;
} sm_sink;

/* Doubles the capacity, up to limit; -1 once failed or overflow is set
   (at once, so that a scan that goes on after a failure costs no more
   allocation attempts). */
int sm_sink_grow(sm_sink *sink);

/* The start of a k-edit end event: not known yet (resolved into a hit later). */
#define SM_START_UNKNOWN UINT64_MAX

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
/* Sorts k-edit end events by (pattern, strand, end). */
void sm_sort_events(sm_rawhit *events, size_t n);

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

/* A pattern as messages show it: its name, or without one its sequence cut
   to 40 bytes with "..." (a NUL byte written \0, so that the message stays
   one C string); buf holds SM_SHOWN_SIZE bytes. */
#define SM_SHOWN_SIZE 84
const char *sm_pattern_shown(const char *name, const char *seq, size_t len, char buf[SM_SHOWN_SIZE]);

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

int sm_run_list_push(sm_run_list *list, const sm_open_run *run);

/* Must hits be stored and filtered (k mismatches or edits with a PAM)? */
static inline int sm_db_filters_pam(const sm_db_header *h) { return h->pam_length > 0 && h->match != SM_MATCH_EXACT; }

/* Aligned allocation helpers (64-byte alignment for tables). */
void *sm_aligned_alloc(size_t size);
void sm_aligned_free(void *p);
/* Asks for transparent huge pages over the 2 MiB pages inside [p, p + size). */
void sm_advise_huge_pages(void *p, size_t size);

#endif /* SM_INTERNAL_H */
