/*
 * seqmatch — what compiling and scanning share: the version, errors, the
 * kinds of matching and engines, and the compiled database (sm_db): its
 * queries, bytes, files. Included by seqmatch_compile.h and
 * seqmatch_runtime.h; seqmatch.h includes them all and states the
 * semantics. Stable and experimental parts: seqmatch.h, "Stability".
 */
#ifndef SEQMATCH_COMMON_H
#define SEQMATCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* The shared library exports exactly the functions declared in include/. */

#define SM_VERSION_MAJOR 0
#define SM_VERSION_MINOR 1
#define SM_VERSION_PATCH 0
#define SM_VERSION_STRING "0.1.0"

/* Version of the library actually linked (may differ from the header). */
const char *sm_version(void);

/* ---------------------------------------------------------------- errors */

typedef enum {
    SM_OK = 0,
    SM_ERR_NOMEM = 1,      /* allocation failed */
    SM_ERR_INVALID = 2,    /* bad argument or option combination */
    SM_ERR_PATTERN = 3,    /* a pattern is empty or has a symbol the alphabet forbids, or none was given */
    SM_ERR_IO = 4,         /* reading or writing a file failed */
    SM_ERR_FORMAT = 5,     /* a saved database is corrupt, truncated or not a database */
    SM_ERR_VERSION = 6,    /* a saved database has another format version or byte order */
    SM_ERR_LIMIT = 7,      /* the database would exceed a size limit */
    SM_ERR_TERMINATED = 8, /* a callback asked the scan to stop (not a failure) */
    SM_ERR_DEVICE = 9      /* no usable GPU, or the GPU runtime failed */
} sm_status;

/* Detailed error: a status code and a one-line message. */
typedef struct {
    int code;
    char message[512];
} sm_error;

/* A static, human-readable name for a status code. */
const char *sm_strerror(int code);

/* ------------------------------------------------------ kinds of matching */

typedef enum { SM_ALPHABET_DNA = 0, SM_ALPHABET_TEXT = 1 } sm_alphabet;

typedef enum {
    SM_STRAND_BOTH = 0,    /* dna default */
    SM_STRAND_FORWARD = 1, /* '+' only */
    SM_STRAND_REVERSE = 2  /* '-' only */
} sm_strands;

typedef enum {
    SM_ENGINE_AUTO = 0,      /* the planner decides per pattern */
    SM_ENGINE_AUTOMATON = 1, /* exact: dictionary automaton (Aho-Corasick DFA) for every pattern */
    SM_ENGINE_SHIFTAND = 2,  /* exact: bit-parallel Shift-And for every pattern */
    SM_ENGINE_MISMATCH = 3,  /* k mismatches: bit-sliced mismatch counters */
    SM_ENGINE_MYERS = 4,     /* k edits: Myers bit-vectors (SIMD across patterns) */
    SM_ENGINE_WAVEFRONT = 5, /* k edits: anti-diagonal wavefront DP (the reference) */
    SM_ENGINE_KMER = 6,      /* exact: k-mer table (one length <= 32, at most 4 symbols) */
    SM_ENGINE_PIGEONHOLE = 7, /* k mismatches or edits: k + 1 exact pieces per pattern, then verification */
    SM_ENGINE_WUMANBER = 8,   /* exact: Wu-Manber block shifts (SHIFT/HASH/PREFIX), then verification;
                                 the planner picks it for long patterns whose mean shift is large */
    SM_ENGINE_GUIDE = 9       /* k mismatches with a PAM, and bulges: every PAM occurrence, exact
                                 pieces of the guides beside it, then verification */
} sm_engine;

/* The engines this library has, from its registry (src/engines/registry.c),
   in the order the command lists them: sm_engine_at(i) for i below
   sm_engine_count() (SM_ENGINE_AUTO past the end). An engine added later
   gets the next free id; ids and names never change. */
size_t sm_engine_count(void);
sm_engine sm_engine_at(size_t index);
/* The name --engine gives it ("auto", "automaton", ...); NULL for an id
   this library does not have. */
const char *sm_engine_name(sm_engine engine);
/* The engine of a name (or "auto"): SM_OK, or SM_ERR_INVALID. */
int sm_engine_from_name(const char *name, sm_engine *engine);
/* The kinds of matching it does: bit (1u << sm_match) each; 0 for AUTO or
   an unknown id. */
unsigned sm_engine_matches(sm_engine engine);
/* What else is true of it, SM_ENGINE_TRAIT_* bits. */
#define SM_ENGINE_TRAIT_NEEDS_PAM 1u /* compiles only with a PAM (sm_compile_options.pam) */
#define SM_ENGINE_TRAIT_BULGES 2u    /* finds sites with bulges (dna_bulges, rna_bulges) */
#define SM_ENGINE_TRAIT_LIMITED 4u   /* forced, it refuses some valid pattern sets (its own limits on
                                        lengths, symbols or expansions); the others take any set of
                                        their kind of matching */
unsigned sm_engine_traits(sm_engine engine);

/* Which side of the guide the PAM sits on (sm_compile_options.pam_side). */
typedef enum {
    SM_PAM_3PRIME = 0,       /* Cas9: guide + PAM (NGG) */
    SM_PAM_5PRIME = 1        /* Cas12a: PAM + guide (TTTV) */
} sm_pam_side;

typedef enum {
    SM_MATCH_EXACT = 0,
    SM_MATCH_MISMATCHES = 1, /* Hamming distance <= max_errors */
    SM_MATCH_EDITS = 2       /* Levenshtein distance <= max_errors */
} sm_match;

typedef enum {
    SM_REPORT_BEST = 0,      /* k edits: one hit per run of ends (default) */
    SM_REPORT_ENDS = 1       /* k edits: every end j with D(j) <= k */
} sm_report;

#define SM_FLAG_IGNORE_CASE 1u /* text alphabet: ASCII letters match either case */
#define SM_FLAG_TEXT_IUPAC 2u  /* dna alphabet: IUPAC codes in the text match by set intersection */

/* Where scans run (sm_runner_options.backend), and which backend a
   database's engines are chosen for (sm_compile_options.backend). */
typedef enum {
    SM_BACKEND_CPU = 0,   /* threads of this machine (default) */
    SM_BACKEND_CUDA = 1   /* every visible NVIDIA GPU; exact databases (every
                             exact engine has a GPU kernel) */
} sm_backend;

/* The longest bulge of either kind (sm_compile_options.dna_bulges). */
#define SM_MAX_BULGE 8u

/* ------------------------------------------------------------- database */

/* A compiled pattern set (seqmatch_compile.h makes one): immutable, shared
   read-only by any number of threads. */
typedef struct sm_db sm_db;

void sm_db_free(sm_db *db);

/* ------------------------------------------------------- database access */

/* What sm_db_get answers: one value per attribute, as a uint64_t (an enum
   as its value). An attribute added later takes the next number; a number
   is never reused. */
typedef enum {
    SM_DB_ALPHABET = 1,        /* sm_alphabet */
    SM_DB_STRANDS = 2,         /* sm_strands */
    SM_DB_FLAGS = 3,           /* SM_FLAG_* */
    SM_DB_PATTERN_COUNT = 4,
    SM_DB_MIN_LENGTH = 5,      /* pattern lengths in symbols */
    SM_DB_MAX_LENGTH = 6,
    SM_DB_SIZE = 7,            /* bytes of the serialized database */
    SM_DB_MATCH = 8,           /* sm_match */
    SM_DB_MAX_ERRORS = 9,
    SM_DB_REPORT = 10,         /* sm_report */
    SM_DB_APPROX_PATTERNS = 11, /* patterns scanned by an engine that does not do exact matching */
    SM_DB_APPROX_ENGINE = 12,  /* the first such section's engine, else SM_ENGINE_AUTO */
    SM_DB_SECTION_COUNT = 13,  /* engine sections (sm_db_section_*) */
    SM_DB_PAM_LENGTH = 14,     /* symbols of each pattern that must match exactly at its PAM end */
    SM_DB_PAM_SIDE = 15,       /* sm_pam_side: that end */
    SM_DB_DNA_BULGES = 16,     /* the longest bulges a site may have */
    SM_DB_RNA_BULGES = 17,
    /* How it was built, when compiled by this process (0 for a loaded
       database): microseconds in all; the sm_backend the automaton was
       built on; its GPU build's kernels and copies (keys in, tables back),
       in microseconds. */
    SM_DB_BUILD_US = 18,
    SM_DB_AUTOMATON_BUILT_ON = 19,
    SM_DB_GPU_BUILD_KERNELS_US = 20,
    SM_DB_GPU_BUILD_COPIES_US = 21
} sm_db_attr;

/* One attribute of db into *value: SM_OK, or SM_ERR_INVALID for an
   attribute this library does not know (*value then 0). */
int sm_db_get(const sm_db *db, sm_db_attr attr, uint64_t *value);

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental: every attribute at once, in a struct whose layout may
   change in a minor version (sm_db_get is the stable form). */
typedef struct {
    sm_alphabet alphabet;
    sm_strands strands;
    unsigned flags;
    uint32_t pattern_count;
    uint32_t min_length, max_length; /* pattern lengths in symbols */
    uint64_t size;                   /* bytes of the serialized database */
    sm_match match;
    uint32_t max_errors;
    sm_report report;
    uint32_t approx_patterns;        /* patterns scanned by an engine that does not do exact matching */
    sm_engine approx_engine;         /* the first such section's engine, else AUTO */
    uint32_t section_count;          /* engine sections in the database (sm_db_section_*) */
    uint32_t pam_length;             /* symbols of each pattern that must match exactly at its PAM end */
    sm_pam_side pam_side;            /* that end */
    uint32_t dna_bulges, rna_bulges; /* the longest bulges a site may have */
} sm_db_info;

void sm_db_get_info(const sm_db *db, sm_db_info *info);
#endif /* SEQMATCH_EXPERIMENTAL */
/* The engine of section index (< section_count) as --engine names it
   ("automaton", "kmer", ...), with the patterns it scans and its bytes;
   NULL for an index out of range. */
const char *sm_db_section_name(const sm_db *db, uint32_t index, uint32_t *patterns, uint64_t *bytes);
/* The engine of section index; SM_ENGINE_AUTO for an index out of range. */
sm_engine sm_db_section_engine(const sm_db *db, uint32_t index);
/* Whether section index is one DFA (the automaton: a state per trie node,
   a column per symbol class), with its states and columns; 0 otherwise. */
int sm_db_section_dfa(const sm_db *db, uint32_t index, uint32_t *states, uint32_t *columns);
/* How many patterns the sections of an engine scan (0 when it has none). */
uint32_t sm_db_engine_patterns(const sm_db *db, sm_engine engine);
/* What the CUDA backend runs for section index (< section_count): its
   kernel and where its tables sit on a Hopper GPU, written to buf (size
   bytes); NULL for a section the GPU cannot scan (buf then says why, or is
   empty) or an index out of range. */
const char *sm_db_section_gpu(const sm_db *db, uint32_t index, char *buf, size_t size);
const char *sm_db_pattern_name(const sm_db *db, uint32_t index);
/* The pattern as given (dna: upper case, U as T), with its PAM when the
   database has one (the whole site); length in *len. */
const char *sm_db_pattern_seq(const sm_db *db, uint32_t index, size_t *len);

/* The database as bytes (the same bytes sm_db_save writes). Valid while db lives. */
const void *sm_db_bytes(const sm_db *db, size_t *size);
/* Builds a database from bytes (copied); checks magic, version, byte order,
   checksum and every table bound. */
int sm_db_from_bytes(const void *bytes, size_t size, sm_db **db, sm_error *err);
/* Saves the database to path. A regular file is written beside it and
   renamed over it, so a failed save leaves an earlier file as it was; a
   device or FIFO is written in place and never removed. */
int sm_db_save(const sm_db *db, const char *path, sm_error *err);
/* Loads a saved database. The 256-byte header is read and checked first (the
   wrong file is refused without reading on); a regular file is then mapped
   read-only rather than copied (sm_db_free unmaps it), a pipe read up to the
   size the header gives. Checks as sm_db_from_bytes; messages name path. */
int sm_db_load(const char *path, sm_db **db, sm_error *err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_COMMON_H */
