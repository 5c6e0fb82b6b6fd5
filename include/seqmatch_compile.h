/*
 * seqmatch — compiling: patterns into a database (sm_db, seqmatch_common.h).
 * The semantics are in seqmatch.h, which includes this header.
 *
 * Options live in an opaque sm_compile_params (zstd's ZSTD_CCtx_setParameter
 * is the model): each setting is a numbered parameter set with
 * sm_compile_params_set and checked against sm_compile_param_bounds, so a
 * new setting is a new number and a program built against an older header
 * keeps its meaning and its ABI. The struct form (sm_compile_options) is
 * experimental: its layout grows with features (seqmatch.h, "Stability").
 */
#ifndef SEQMATCH_COMPILE_H
#define SEQMATCH_COMPILE_H

#include "seqmatch_common.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* One pattern. name is NUL-terminated (may be NULL: the sequence is the name);
   seq has len bytes and need not be NUL-terminated. */
typedef struct {
    const char *name;
    const char *seq;
    size_t len;
} sm_pattern;

/* ------------------------------------------------------ compile settings */

typedef struct sm_compile_params sm_compile_params;

/* The numbered settings; each value is an int64_t (an enum as its value).
   Defaults: dna, both strands, no flags, engine auto, serial build, exact,
   report best, PAM on the 3' side, CPU backend, long records; 0 elsewhere.
   A number is never reused. */
typedef enum {
    SM_CPARAM_ALPHABET = 1,       /* sm_alphabet */
    SM_CPARAM_STRANDS = 2,        /* sm_strands; ignored for SM_ALPHABET_TEXT (always forward) */
    SM_CPARAM_FLAGS = 3,          /* SM_FLAG_* */
    SM_CPARAM_ENGINE = 4,         /* sm_engine: SM_ENGINE_AUTO or one the registry has */
    SM_CPARAM_BUILD_THREADS = 5,  /* automaton builder: 0 = serial BFS, N = level-synchronous with N threads */
    SM_CPARAM_MAX_EXPANSION = 6,  /* IUPAC patterns expanding to more concrete strings go to Shift-And (0 = 256) */
    SM_CPARAM_MAX_MEMORY = 7,     /* refuse to build a database larger than this many bytes (0 = no limit) */
    SM_CPARAM_MATCH = 8,          /* sm_match */
    SM_CPARAM_MAX_ERRORS = 9,     /* k for mismatches and edits; 0 means exact */
    SM_CPARAM_REPORT = 10,        /* sm_report (edits only) */
    SM_CPARAM_PAM_SIDE = 11,      /* sm_pam_side (the PAM itself: sm_compile_params_set_pam) */
    SM_CPARAM_DNA_BULGES = 12,    /* k mismatches with a PAM: the longest DNA bulge (0..SM_MAX_BULGE) */
    SM_CPARAM_RNA_BULGES = 13,    /* the longest RNA bulge (0..SM_MAX_BULGE) */
    SM_CPARAM_BACKEND = 14,       /* sm_backend the planner chooses engines for */
    SM_CPARAM_TYPICAL_RECORD = 15, /* bytes per input record for the cost model (0: long) */
    SM_CPARAM_BUILD_BACKEND = 16   /* sm_backend: where the automaton is built (CPU default; CUDA: the first GPU) */
} sm_compile_param;

/* New settings with the defaults; NULL when out of memory. */
sm_compile_params *sm_compile_params_new(void);
void sm_compile_params_free(sm_compile_params *params);
/* The values a parameter takes, [*lower, *upper]: SM_OK, or SM_ERR_INVALID
   for a parameter this library does not know. The bounds say what can be
   stored; sm_compile_with_params checks how the settings combine. */
int sm_compile_param_bounds(sm_compile_param param, int64_t *lower, int64_t *upper);
/* Sets one parameter: SM_OK, or SM_ERR_INVALID (nothing changed) for an
   unknown parameter or a value out of its bounds. */
int sm_compile_params_set(sm_compile_params *params, sm_compile_param param, int64_t value);
/* Reads one back: SM_OK, or SM_ERR_INVALID for an unknown parameter. */
int sm_compile_params_get(const sm_compile_params *params, sm_compile_param param, int64_t *value);
/* dna only: a PAM (IUPAC letters, NUL-terminated; copied) beside every
   pattern, which must match exactly; NULL: none (seqmatch.h, "PAM").
   SM_OK or SM_ERR_NOMEM. */
int sm_compile_params_set_pam(sm_compile_params *params, const char *pam);
/* k mismatches or edits: one flag per pattern (n of them, copied); a
   pattern whose flag is nonzero is found exactly, the others with up to
   max_errors errors. NULL: none. sm_compile_with_params refuses a count
   other than its own pattern count. SM_OK or SM_ERR_NOMEM. */
int sm_compile_params_set_exact(sm_compile_params *params, const unsigned char *flags, size_t n);

/* Compiles n patterns into a new database. On failure returns a status,
   leaves *db NULL and, when err is not NULL, fills it (naming the pattern).
   params NULL: the defaults. */
int sm_compile_with_params(const sm_pattern *patterns, size_t n, const sm_compile_params *params, sm_db **db,
                           sm_error *err);

#ifdef SEQMATCH_EXPERIMENTAL
/* ------------------------------------------ experimental: the struct form */

typedef struct {
    sm_alphabet alphabet;
    sm_strands strands;      /* ignored for SM_ALPHABET_TEXT (always forward) */
    unsigned flags;          /* SM_FLAG_* */
    sm_engine engine;
    unsigned build_threads;  /* automaton builder: 0 = serial BFS, N >= 1 = level-synchronous with N threads */
    uint32_t max_expansion;  /* IUPAC patterns expanding to more concrete strings go to Shift-And (0 = 256) */
    uint64_t max_memory;     /* refuse to build a database larger than this many bytes (0 = no limit) */
    sm_match match;          /* exact (default), mismatches or edits */
    uint32_t max_errors;     /* k for mismatches and edits; 0 means exact */
    sm_report report;        /* edits only */
    /* dna only: a PAM (IUPAC letters, NUL-terminated) appended to the 3' end
       of every pattern, which must match exactly: errors are counted in the
       pattern (the guide) only (the semantics above). NULL = none. */
    const char *pam;
    sm_pam_side pam_side;    /* where the PAM sits (default 3') */
    /* k mismatches with a PAM: the longest DNA and RNA bulge a site may
       have (at most SM_MAX_BULGE each; 0: none); one bulge per site (the
       semantics above). max_errors 0 with a bulge allowed is a search
       with bulges and no mismatch. */
    uint32_t dna_bulges, rna_bulges;
    /* The backend the planner chooses the exact engines for (engine auto):
       SM_BACKEND_CUDA follows the GPU kernels' measured rates
       (docs/architecture.md, "The planner on the GPU"). Any database runs
       on either backend; this only picks the faster engines. */
    sm_backend backend;
    /* The inputs' records, for the approximate planner's cost model: about
       this many bytes each (0: long, as genomes are). Records too short to
       cut into SIMD lanes (reads, text lines) make the direct engines of one
       or a few patterns slower (docs/architecture.md, "Choosing an
       approximate engine"); exact, a few patterns over short records
       take Wu-Manber where it skips enough. */
    uint32_t typical_record;
    /* k mismatches or k edits: NULL, or one flag per pattern (the n given
       to sm_compile); a pattern whose flag is nonzero is found exactly
       (errors 0, every occurrence), the others with up to max_errors
       mismatches or edits, as a primer panel whose short barcodes must
       match exactly. The database then holds exact sections beside the
       approximate ones and every backend runs them all. Refused with a
       PAM. */
    const unsigned char *exact;
    /* Where the dictionary automaton is built: SM_BACKEND_CPU (default:
       build_threads), or SM_BACKEND_CUDA, the first GPU, byte for byte the
       same (refused with SM_ERR_DEVICE without one; docs/architecture.md,
       "The automaton built on the GPU"). With backend SM_BACKEND_CUDA and
       this left at the CPU, an automaton of 96 Mi key symbols or more is
       built on the GPU when one is there (the CPU's build otherwise). */
    sm_backend build_backend;
} sm_compile_options;

/* Fills *opts with the defaults: dna, both strands, auto engine, serial build. */
void sm_compile_options_init(sm_compile_options *opts);

/* Compiles n patterns into a new database. On failure returns a status,
   leaves *db NULL and, when err is not NULL, fills it (naming the pattern). */
int sm_compile(const sm_pattern *patterns, size_t n, const sm_compile_options *opts,
               sm_db **db, sm_error *err);

/* ------------------------------------------------- approximate planning */

/* What the planner estimates for one approximate engine: the scan's time
   per text byte on one thread of the CPU it runs on, from a cost model
   fitted to benchmark runs (docs/architecture.md, "Choosing an approximate
   engine"). */
typedef struct {
    int usable;          /* 0: the engine cannot take these patterns */
    double ns_per_byte;  /* the estimate */
    double terms[8];     /* the model's inputs, as the documentation lists them */
    char basis[120];     /* what the estimate counts, in words */
} sm_engine_estimate;

typedef struct {
    sm_engine choice;    /* what --engine auto takes (never the wavefront DP) */
    sm_engine_estimate mismatch, myers, wavefront, pigeonhole;
} sm_approx_estimates;

/* The estimates for the patterns of a k-mismatch or k-edit database (its
   k, strands, alphabet and flags; whichever engine it holds), for records
   of about typical_record bytes (0: long; see sm_compile_options). Returns
   SM_OK, or SM_ERR_INVALID for exact matching; SM_ERR_NOMEM. */
int sm_db_approx_estimates(const sm_db *db, uint32_t typical_record, sm_approx_estimates *est);

/* ------------------------------------------------------- the plan, in words */

#define SM_EXPLAIN_FORCED 1u /* the engine was named by the caller, not chosen by the planner */
#define SM_EXPLAIN_GPU 2u    /* the database was planned for the GPU (SM_BACKEND_CUDA) */

/* Writes to out, one "name  value" line each, what db holds and why (the
   text of `seqmatch compile --explain`): alphabet and strands, pattern
   count and lengths, PAM and bulges, the matching, the engines and the
   planner's reasons or (approximate matching on the CPU) its cost
   estimates, the automaton's size, what each section would run on the GPU
   and the database's size. flags: SM_EXPLAIN_*. Returns SM_OK, or SM_ERR_IO
   when out is in error afterwards. */
int sm_db_explain(const sm_db *db, FILE *out, unsigned flags);

/* Whether the planner estimates engine (an approximate one, named by the
   caller) at least 10 times slower on db than the engine it would choose
   itself, for records of about typical_record bytes (as
   sm_db_approx_estimates). Returns 1 and writes a one-line note without a
   line end to buf (size bytes, cut to fit; buf NULL: none) naming both
   engines, their estimates and the ratio; else 0 (also for an exact
   database, an engine that cannot take the patterns or auto's own). */
int sm_db_engine_slowdown(const sm_db *db, sm_engine engine, uint32_t typical_record, char *buf, size_t size);

/* The patterns grouped by name (a NULL name counts as ""), as seqmatch
   demux makes one sample of the patterns of one name: group_of (the
   caller's, one per pattern) gets each pattern's group, numbered from 0 in
   the order the names first come; *groups the number of groups. Returns
   SM_OK or SM_ERR_NOMEM. */
int sm_db_name_groups(const sm_db *db, uint32_t *group_of, uint32_t *groups);
#endif /* SEQMATCH_EXPERIMENTAL */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_COMPILE_H */
