/* The engine interface: what every engine of src/engines/ offers the core,
 * the runner and the backends, as one table of operations.
 *
 * An engine owns one kind of database section (a flat block of bytes,
 * offsets only, 64-byte aligned tables). It builds the section from keys,
 * checks a section read from elsewhere before anything trusts it, keeps a
 * per-thread scan state, and scans pieces of one sequence with that state
 * carried between calls, reporting hits to a sink (src/base/internal.h).
 *
 * Nothing outside src/engines/ calls an engine's own functions: the core
 * finds the engine of a section through the registry (sm_engine_for_kind)
 * and calls its operations. Adding an engine is a new folder under
 * src/engines/, one line in registry.c, its section in docs/format.md and,
 * if the planner should choose it, a rule in core/plan.c (docs/architecture.md,
 * "Adding an engine").
 */
#ifndef SM_ENGINE_H
#define SM_ENGINE_H

#include "base/cpu.h"
#include "base/internal.h"
#include "engines/gpu_part.h"
#include "engines/section_kinds.h"

/* Build tuning that tests ask for (sm_compile_tuned); zero: none. */
typedef struct {
    unsigned kmer_filter_log2; /* k-mer hash layout: filter of 2^this words (3..19) */
    int kmer_collide;          /* k-mer hash layout: every key on one home entry */
} sm_build_tuning;

/* What a builder gets. Keys are sm_ac_key: normalised concrete strings for
   the exact engines (IUPAC expanded, fold[] applied), IUPAC strings for the
   others, each with its output id (pattern * 2 + reverse). */
typedef struct {
    const sm_ac_key *keys;
    size_t nkeys;
    sm_alphabet alphabet;
    unsigned flags;            /* SM_FLAG_* */
    sm_match match;
    uint32_t k;                /* errors, 0 for exact engines */
    const uint8_t *fold;       /* exact engines: text byte -> normalised byte */
    unsigned build_threads;
    uint64_t max_bytes;        /* 0 = no limit */
    const sm_build_tuning *tuning; /* NULL: none */
    /* k mismatches with a PAM (the guide engine): the PAM's symbols at
       each key's PAM end (sm_db_pam_first says which), and the bulges. */
    uint32_t pam_length;
    sm_pam_side pam_side;
    uint32_t dna_bulges, rna_bulges;
    /* The automaton: SM_BACKEND_CUDA builds it on the first GPU; with the
       CPU asked and gpu_planned (the GPU will scan), a large one is built
       there all the same when a GPU is there. */
    sm_backend build_backend;
    int gpu_planned;
    sm_build_report_info *report; /* what was done, for --explain (NULL: not wanted) */
} sm_build_input;

/* What a validator gets besides the bytes. */
typedef struct {
    uint32_t outputs;          /* output ids must be below this (2 * patterns) */
    sm_match match;
    const sm_db_pattern *patterns; /* the pattern table, already checked */
    uint32_t pattern_count;
    const sm_db_header *header;    /* the database's settings, already checked */
} sm_validate_input;

/* A section as scans see it. */
typedef struct {
    const uint8_t *bytes;
    uint64_t size;
    const sm_db_pattern *patterns; /* the database's pattern table: lengths */
} sm_section;

/* Which variant of a scan loop a state runs: chosen once, when the state is
   made, from the CPU's features (probed once, src/base/cpu.c) and from
   forcing that tests and benchmarks ask for through the scratch or runner.
   Zero everywhere: the best the CPU runs. */
typedef struct sm_variant {
    sm_simd_level max_level;   /* highest SIMD level to use (SM_SIMD_AUTO: the CPU's) */
    int kmer_way;              /* k-mer direct table: 0 auto, 1 byte loads, 2 AVX2 gathers, 3 AVX-512 */
    int no_prefilter;          /* Wu-Manber: 1 scans with the SHIFT loop even where a prefilter exists */
    size_t item_hits;          /* runner, CPU threads: the bound on a work item's stored hits (0: chunk / 64) */
    int text_lanes;            /* Myers, mismatch: an sm_lanes_mode (0 auto, 1 never, 2 whenever a text
                                  holds a slice per SIMD lane: lane borders in tests) */
} sm_variant;

/* A fresh state for a variant. */
typedef struct {
    const sm_cpu_features *cpu; /* the CPU, capped at variant->max_level */
    const sm_variant *variant;
} sm_state_env;

/* Where a DFA engine's tables lie in its section (offsets from the section
   start), for code that reads them elsewhere, e.g. a GPU kernel:
   delta uint32[states * columns] (target * columns, SM_DFA_OUT_FLAG set
   when the target has outputs), out_index uint32[states + 1], out_list
   uint32[] (output ids), class_of uint16[256] (text byte -> column). */
#define SM_DFA_OUT_FLAG 0x80000000u
typedef struct {
    uint32_t states, columns;
    uint64_t delta_off, out_index_off, out_list_off, class_of_off;
} sm_dfa_tables;

/* An engine's GPU part: the host side of its kernel (engines/gpu_part.h
   says what its folder holds). The kernel itself is found by the GPU
   module under the engine's section kind. */
typedef struct sm_gpu_part {
    /* The view of a section for the kernel; returns 0, or -1 with a
       one-line reason in why[256] when this section cannot run there. */
    int (*view)(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *view, char *why);
    /* What the GPU runs for that view, in words (--explain). */
    void (*describe)(const sm_gpu_view *view, char *buf, size_t size);
    /* Bytes the kernel reads beside the section (sm_gpu_scan_args.extra),
       made on the host: their size (buf NULL), or written to buf (their
       size again; anything else: memory ran out). NULL: none. */
    size_t (*extra)(const sm_section *s, const sm_gpu_view *view, void *buf);
    /* The CPU stand-in for the kernel (tests/emulated): what its launch
       makes beside the section (NULL: nothing; may be NULL), then the scan
       of a batch (a->prepared set) by the kernel's own per-item code, item
       after item, as a device of `threads` resident threads would cut it. */
    void *(*emulate_prepare)(const sm_gpu_view *view, const uint8_t *section);
    void (*emulate_release)(void *prepared);
    void (*emulate)(const sm_gpu_scan_args *a, uint32_t threads);
    /* The stand-in for the engine's GPU builder, for an engine that builds
       its section on the GPU (SM_CUDA_BUILDER): the same input and result
       as sm_cuda_section_build's. NULL: none. */
    int (*emulate_build)(const void *input, double ms[3], char *msg);
} sm_gpu_part;

typedef struct sm_engine_ops {
    uint32_t kind;             /* SM_SECTION_* */
    const char *name;          /* as --engine spells it */
    sm_engine engine;          /* the public id */
    unsigned matches;          /* bit (1 << sm_match) for each kind of matching it does */
    unsigned traits;           /* SM_ENGINE_TRAIT_* (include/seqmatch.h) */

    /* Compile side. build appends the section to *section (whose length is a
       multiple of 8). validate never reads outside [bytes, bytes + size). */
    int (*build)(const sm_build_input *in, sm_buf *section, sm_error *err);
    int (*validate)(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err);

    /* Per-thread state: made for a section and an environment, reset to the
       start of a sequence, freed. fits says whether a state made for another
       section of this kind can serve this one (scratch reuse across
       databases). */
    void *(*state_new)(const sm_section *s, const sm_state_env *env);
    void (*state_reset)(const sm_section *s, void *state);
    void (*state_free)(void *state);
    int (*state_fits)(const sm_section *s, const void *state);

    /* Scans text[0, len), whose first byte is at absolute position pos0, from
       the state (updated); hits go to sink (ownership by start, or by end for
       edit end events). In count mode the sink's visits, when not NULL, are
       this engine's counters (visit_counters of them). */
    void (*scan)(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink);
    /* Ends a scanned stretch whose last byte is at end_pos - 1: engines that
       hold results back report them. NULL when nothing is ever held. */
    void (*finish)(const sm_section *s, void *state, uint64_t end_pos, sm_sink *sink);

    /* Approximate engines: what a scanned stretch's raw results become.
       resolve (k edits) turns the end events in sink->hits[from, sink->n)
       into hits: every end, or per run of ends its best, with its start;
       runs touching the stretch's first or last owned end (first_end,
       last_end) go to borders when not NULL, to be joined with the
       neighbours'; text[0, len) at pos0 holds what starts need. filter
       (k mismatches) drops the windows whose PAM does not match exactly.
       Both use per-thread tables (results_new, results_free) and leave the
       hits sorted. NULL for engines whose hits are final. */
    void *(*results_new)(void);
    void (*results_free)(void *results);
    int (*resolve)(const sm_db *db, void *results, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                   uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders);
    void (*filter)(const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text, size_t len, uint64_t pos0);

    /* Count mode: how many visit counters the scan may add to instead of
       counting per pattern (0: none, or NULL), and how to fold them into
       per-pattern counts (zeroing them). */
    size_t (*visit_counters)(const sm_section *s);
    void (*fold_visits)(const sm_section *s, uint32_t *visits, uint64_t *counts);

    /* Engines whose state is one DFA state (the automaton): read and set it,
       for the overlap-free chunking that starts chunks in their true state.
       NULL elsewhere. */
    uint32_t (*dfa_state)(const void *state);
    void (*set_dfa_state)(void *state, uint32_t dfa_state);
    /* And the true state at every chunk start of a text, found in parallel
       by simulating each chunk from all states and composing the maps (a
       chunker, made once, holds what that needs): text[cuts[i], cuts[i+1])
       is chunk i, chunk 0 starts in `first`; states[i] is the state at
       chunk i's start, states[chunks] the state after the last. */
    void (*dfa_tables)(const sm_section *s, sm_dfa_tables *tables);
    /* The output ids of DFA state q: *ids[0 .. returned count). */
    uint32_t (*dfa_outputs)(const sm_section *s, uint32_t q, const uint32_t **ids);
    void *(*chunker_new)(const sm_section *s, sm_error *err);
    void (*chunker_free)(void *chunker);
    int (*chunk_states)(void *chunker, uint32_t first, const uint8_t *text, const size_t *cuts, size_t chunks,
                        unsigned threads, uint32_t *states, sm_error *err);

    /* The engine's GPU part (its kernel's host side), or NULL: the GPU does
       not run it. */
    const sm_gpu_part *gpu;
} sm_engine_ops;

/* The registry (src/engines/registry.c): the engine of a section kind, or
   NULL for a kind this build does not know; the engine for a public id. */
const sm_engine_ops *sm_engine_for_kind(uint32_t kind);
const sm_engine_ops *sm_engine_for_id(sm_engine engine);
/* Every engine, for listings and tests: *count entries. */
const sm_engine_ops *const *sm_engine_all(size_t *count);

/* Each engine's table is defined in its own folder and named only by the
   registry (registry.c declares them), but for the automaton's, whose GPU
   view the pigeonhole filter's piece automaton reuses. */
extern const sm_engine_ops sm_engine_automaton;

/* The state of the engines whose state is plain words (shared by their
   ops): the words, zeroed when made, and the loop variant chosen then. */
typedef struct {
    uint64_t *words;
    size_t nwords;
    sm_simd_level level;  /* the SIMD level the scan runs at */
    int choice;           /* an engine's own choice of loop (k-mer way, prefilter) */
} sm_word_state;

/* NULL when out of memory. level is the environment's CPU level. */
sm_word_state *sm_word_state_new(size_t nwords, const sm_state_env *env);
void sm_word_state_free(void *state);
/* A state of at least nwords words. */
int sm_word_state_fits(const void *state, size_t nwords);

#endif /* SM_ENGINE_H */
