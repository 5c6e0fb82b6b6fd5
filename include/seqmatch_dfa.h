/*
 * seqmatch DFA membership test — does a whole input belong to the language
 * of a deterministic finite automaton?
 *
 * A DFA comes from one of three places:
 *   - the text format described in docs/dfa.md (sm_dfa_parse);
 *   - a regular expression (sm_dfa_from_regex): the DFA accepts exactly the
 *     strings the expression matches as a whole (membership, not search);
 *   - a compiled pattern set (sm_dfa_from_db): "contains one of the patterns"
 *     or "ends with one of the patterns" (the dictionary automaton).
 *
 * Representation: one flat, immutable block of bytes (offsets, never
 * pointers; layout sm_dfa_layout below) so that it can be saved, memory-mapped
 * or copied to another device as it is. Input bytes go through a byte ->
 * column map; a byte whose column is SM_DFA_UNKNOWN is outside the alphabet.
 *
 * Running: an sm_dfa_matcher holds the tables derived for fast simulation
 * (compressed columns, several symbols per lookup for small DFAs, SIMD
 * choice). It is immutable once created and may be used by any number of
 * threads at once. The parallel run is the speculative chunked test: the
 * input is cut into chunks, every chunk but the first is simulated from all
 * states at once (the set of distinct current states collapses as paths
 * converge), and the per-chunk state maps are composed by a parallel prefix
 * scan. Results never depend on the thread count, chunk count or policy.
 *
 * Errors follow seqmatch.h: functions return an sm_status code and fill an
 * optional sm_error with a one-line message.
 */
#ifndef SEQMATCH_DFA_H
#define SEQMATCH_DFA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef SEQMATCH_EXPERIMENTAL
#error "seqmatch_dfa.h is experimental as a whole: define SEQMATCH_EXPERIMENTAL before including it (seqmatch.h, \"Stability\")"
#endif

#include "seqmatch_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SM_DFA_API __attribute__((visibility("default")))
#else
#define SM_DFA_API
#endif

/* Column of a byte outside the DFA's alphabet. */
#define SM_DFA_UNKNOWN 0xFFFFu
/* "No state": a run stopped at a byte outside the alphabet. */
#define SM_DFA_NO_STATE 0xFFFFFFFFu

#define SM_DFA_MAGIC "SMDFA\0\0\0"
#define SM_DFA_FORMAT_VERSION 1u

/* Most states a DFA may have (the table also stays below 2^31 entries). */
#define SM_DFA_MAX_STATES 0x7FFFFFFFu

/* Layout of the flat block (host byte order, 64-byte aligned sections):
     sm_dfa_layout
     column_of  uint16[256]                byte -> column, or SM_DFA_UNKNOWN
     accept     uint64[(states + 63) / 64] bit s set when state s accepts
     table      uint32[states * columns]   row-major: target of (state, column) */
typedef struct {
    char magic[8];          /* SM_DFA_MAGIC */
    uint32_t version;       /* SM_DFA_FORMAT_VERSION */
    uint32_t byte_order;    /* 0x01020304 as written */
    uint64_t size;          /* bytes of the whole block */
    uint32_t states;        /* >= 1 */
    uint32_t columns;       /* >= 1 */
    uint32_t start;
    uint32_t reserved;
    uint64_t column_of_off;
    uint64_t accept_off;
    uint64_t table_off;
} sm_dfa_layout; /* 64 bytes */

typedef struct sm_dfa sm_dfa;

/* ------------------------------------------------------------- building */

/* Builds a DFA from arrays (copied). table has states * columns entries, each
   < states; accept has (states + 63) / 64 words (NULL: no accepting state);
   column_of has 256 entries, each < columns or SM_DFA_UNKNOWN. */
SM_DFA_API int sm_dfa_build(uint32_t states, uint32_t columns, uint32_t start, const uint32_t *table,
                            const uint64_t *accept, const uint16_t column_of[256], sm_dfa **dfa,
                            sm_error *err);

/* Parses the text format (docs/dfa.md). source names the text in messages
   ("FILE: line N: ..."); may be NULL. */
SM_DFA_API int sm_dfa_parse(const char *text, size_t len, const char *source, sm_dfa **dfa,
                            sm_error *err);
/* Reads and parses a file ("-" is standard input). */
SM_DFA_API int sm_dfa_read_file(const char *path, sm_dfa **dfa, sm_error *err);

typedef struct {
    sm_alphabet alphabet;  /* TEXT: bytes; DNA: A C G T (U = T), case-insensitive, IUPAC letters */
    uint32_t max_states;   /* subset construction limit (0 = 100000) */
    int minimize;          /* non-zero: minimal DFA, states renumbered breadth-first */
} sm_dfa_regex_options;

SM_DFA_API void sm_dfa_regex_options_init(sm_dfa_regex_options *opts);

/* Compiles a regular expression (the subset in docs/dfa.md) into a DFA that
   accepts exactly the strings the whole expression matches. Fails with
   SM_ERR_PATTERN on a syntax error (naming the position) and SM_ERR_LIMIT
   when the DFA would need more than max_states states, or its construction
   more than 2048 x max_states steps (at least 2^24). */
SM_DFA_API int sm_dfa_from_regex(const char *expr, size_t len, const sm_dfa_regex_options *opts,
                                 sm_dfa **dfa, sm_error *err);

typedef enum {
    SM_DFA_CONTAINS = 0, /* accept when some pattern occurs anywhere in the input */
    SM_DFA_ENDS = 1      /* accept when the input ends with some pattern */
} sm_dfa_match;

/* The dictionary automaton of a database whose patterns all use the
   automaton engine (compile with SM_ENGINE_AUTOMATON), as a DFA over every
   byte value. ENDS keeps the automaton's states (state numbers and rows are
   the automaton's); CONTAINS adds one absorbing accepting state. */
SM_DFA_API int sm_dfa_from_db(const sm_db *db, sm_dfa_match mode, sm_dfa **dfa, sm_error *err);

/* The equivalent DFA with the fewest states: unreachable states dropped,
   equivalent states merged, states renumbered breadth-first from the start. */
SM_DFA_API int sm_dfa_minimize(const sm_dfa *dfa, sm_dfa **out, sm_error *err);

/* Writes the DFA in the text format. The alphabet line lists one printable
   symbol per column when every column has exactly one such byte, otherwise
   it is "bytes" (256 targets a row). Returns SM_OK or SM_ERR_IO. */
SM_DFA_API int sm_dfa_dump(const sm_dfa *dfa, FILE *out, sm_error *err);

SM_DFA_API void sm_dfa_free(sm_dfa *dfa);

/* The flat block (valid while dfa lives) and a DFA from such bytes (copied
   and checked: magic, version, byte order, every bound and target). */
SM_DFA_API const void *sm_dfa_bytes(const sm_dfa *dfa, size_t *size);
SM_DFA_API int sm_dfa_from_bytes(const void *bytes, size_t size, sm_dfa **dfa, sm_error *err);

/* ------------------------------------------------------------- access */

SM_DFA_API uint32_t sm_dfa_state_count(const sm_dfa *dfa);
SM_DFA_API uint32_t sm_dfa_column_count(const sm_dfa *dfa);
SM_DFA_API uint32_t sm_dfa_start(const sm_dfa *dfa);
SM_DFA_API int sm_dfa_is_accepting(const sm_dfa *dfa, uint32_t state);
/* Column of a byte, or SM_DFA_UNKNOWN. */
SM_DFA_API uint32_t sm_dfa_column_of(const sm_dfa *dfa, uint8_t byte);
SM_DFA_API uint32_t sm_dfa_target(const sm_dfa *dfa, uint32_t state, uint32_t column);
/* One step on a byte: the next state, or SM_DFA_NO_STATE for an unknown byte. */
SM_DFA_API uint32_t sm_dfa_next(const sm_dfa *dfa, uint32_t state, uint8_t byte);

/* ------------------------------------------------------------- running */

typedef enum {
    SM_DFA_SIMD_AUTO = 0,   /* AVX2 gathers where the CPU has them and they are fast */
    SM_DFA_SIMD_SCALAR = 1, /* never use SIMD */
    SM_DFA_SIMD_AVX2 = 2    /* AVX2 gathers whenever the CPU has AVX2 */
} sm_dfa_simd;

typedef struct {
    int skip_unknown;  /* non-zero: bytes outside the alphabet are ignored */
    sm_dfa_simd simd;
    unsigned stride;   /* symbols per table lookup, 1..4 (0 = chosen from the table size) */
} sm_dfa_matcher_options;

SM_DFA_API void sm_dfa_matcher_options_init(sm_dfa_matcher_options *opts);

typedef struct sm_dfa_matcher sm_dfa_matcher;

/* Prepares the run tables. dfa must outlive the matcher. */
SM_DFA_API int sm_dfa_matcher_create(const sm_dfa *dfa, const sm_dfa_matcher_options *opts,
                                     sm_dfa_matcher **matcher, sm_error *err);
SM_DFA_API void sm_dfa_matcher_free(sm_dfa_matcher *matcher);
/* Symbols per lookup and whether SIMD gathers are used (for reports). */
SM_DFA_API unsigned sm_dfa_matcher_stride(const sm_dfa_matcher *matcher);
SM_DFA_API int sm_dfa_matcher_uses_avx2(const sm_dfa_matcher *matcher);

/* Sequential simulation from state over data[0, len): the state reached, or
   SM_DFA_NO_STATE when a byte outside the alphabet occurs (and unknown bytes
   are not skipped). */
SM_DFA_API uint32_t sm_dfa_run(const sm_dfa_matcher *matcher, uint32_t state, const void *data,
                               size_t len);

/* Offset of the first byte outside the alphabet, or len when there is none. */
SM_DFA_API size_t sm_dfa_find_unknown(const sm_dfa_matcher *matcher, const void *data, size_t len);

typedef enum {
    SM_DFA_CHUNKS_BALANCED = 0, /* the first chunk first_chunk_ratio times longer than the others */
    SM_DFA_CHUNKS_EQUAL = 1     /* equal chunks */
} sm_dfa_chunk_policy;

typedef struct {
    unsigned threads;         /* 0 = all online cores */
    size_t chunks;            /* 0 = one per thread */
    sm_dfa_chunk_policy policy;
    double first_chunk_ratio; /* M of the balanced policy; 0 = measured on a sample of the input */
    size_t min_chunk;         /* shorter inputs use fewer chunks (0 = 64 KiB; 1 forces the chunk count) */
} sm_dfa_parallel_options;

SM_DFA_API void sm_dfa_parallel_options_init(sm_dfa_parallel_options *opts);

/* Cuts len symbols into chunks: cuts[0] = 0 <= cuts[1] <= ... <= cuts[chunks] = len.
   BALANCED: chunk 0 has about ratio * len / (ratio + chunks - 1) symbols and
   the others share the rest equally (ratio < 1 is taken as 1). */
SM_DFA_API void sm_dfa_chunk_cuts(size_t len, size_t chunks, sm_dfa_chunk_policy policy, double ratio,
                                  size_t *cuts);

/* Speculative parallel simulation; same result as sm_dfa_run. */
SM_DFA_API int sm_dfa_run_parallel(const sm_dfa_matcher *matcher, uint32_t state, const void *data,
                                   size_t len, const sm_dfa_parallel_options *opts, uint32_t *final_state,
                                   sm_error *err);

/* The state map of one chunk: map[s] = state reached from s over data[0, len)
   (SM_DFA_NO_STATE after an unknown byte), for every s < sm_dfa_state_count.
   The simulation runs from all states at once and keeps only the distinct
   current states. */
SM_DFA_API int sm_dfa_chunk_map(const sm_dfa_matcher *matcher, const void *data, size_t len, uint32_t *map,
                                sm_error *err);

/* The true state at the start of every chunk of data cut at cuts[0..chunks]
   (cuts[0] = 0, non-decreasing, cuts[chunks] = length), starting from state:
   states[i] for chunk i and states[chunks] = the final state
   (SM_DFA_NO_STATE from the first unknown byte on). Chunks are simulated in
   parallel without overlap and composed by a parallel prefix scan; only
   opts->threads is used. */
SM_DFA_API int sm_dfa_chunk_states(const sm_dfa_matcher *matcher, uint32_t state, const void *data,
                                   const size_t *cuts, size_t chunks, const sm_dfa_parallel_options *opts,
                                   uint32_t *states, sm_error *err);

/* ------------------------------------------------------------- on a GPU */

/* The membership test on an NVIDIA GPU (docs/dfa.md): inputs are gathered
   into batches (pinned host buffers, copied while the previous batch runs);
   every input's bytes in a batch are cut into chunks, each simulated by one
   GPU thread (from the input's state for its first chunk, from all states at
   once for the others), and the chunks' state maps are composed on the GPU
   by a parallel prefix scan. The state an input ends a batch in stays on the
   GPU for the next batch. Results are those of sm_dfa_run, delivered in
   input order from inside the calls below (on the calling thread). One
   sm_dfa_gpu serves one thread at a time. */
typedef struct sm_dfa_gpu sm_dfa_gpu;

typedef struct {
    int device;                 /* CUDA device number (default 0) */
    size_t batch_bytes;         /* input bytes per batch (0 = 64 MiB); two pinned buffers of this size */
    size_t chunk_bytes;         /* chunk length (0 = planned from the device and the DFA; mainly for tests) */
    sm_dfa_chunk_policy policy; /* an input's chunks: the first longer (default, seed 003) or all equal */
    double first_chunk_ratio;   /* M of the balanced policy; 0 = measured: lane steps on a sample */
    unsigned copy_threads;      /* threads copying large pieces into the pinned buffers (0 = up to 8) */
} sm_dfa_gpu_options;

typedef struct {
    uint64_t input;        /* 0, 1, 2, ... in the order the inputs were begun */
    uint32_t state;        /* the state reached, or SM_DFA_NO_STATE after a byte outside the alphabet */
    uint64_t unknown_at;   /* with SM_DFA_NO_STATE: offset in the input of the first such byte */
    uint8_t unknown_byte;  /* and that byte */
} sm_dfa_gpu_result;

/* Returns 0 to go on; non-zero stops: no later result is delivered and
   the calls below return SM_ERR_TERMINATED. */
typedef int (*sm_dfa_gpu_result_fn)(const sm_dfa_gpu_result *result, void *ctx);

SM_DFA_API void sm_dfa_gpu_options_init(sm_dfa_gpu_options *opts);

/* Copies the matcher's tables to the GPU (the matcher must outlive the
   result). Fails with SM_ERR_DEVICE when no GPU can be used (no device,
   a build without CUDA) or its memory is too small. on_result may be NULL. */
SM_DFA_API int sm_dfa_gpu_open(const sm_dfa_matcher *matcher, const sm_dfa_gpu_options *opts,
                               sm_dfa_gpu_result_fn on_result, void *ctx, sm_dfa_gpu **gpu, sm_error *err);
/* Starts the next input, from state. */
SM_DFA_API int sm_dfa_gpu_begin(sm_dfa_gpu *gpu, uint32_t state, sm_error *err);
/* Appends bytes to the input begun; may run batches and deliver results. */
SM_DFA_API int sm_dfa_gpu_feed(sm_dfa_gpu *gpu, const void *data, size_t len, sm_error *err);
/* Ends the input; its result comes with a later call. */
SM_DFA_API int sm_dfa_gpu_end(sm_dfa_gpu *gpu, sm_error *err);
/* Runs what is buffered and delivers every result due. */
SM_DFA_API int sm_dfa_gpu_flush(sm_dfa_gpu *gpu, sm_error *err);
/* Bytes at the start of the input begun that the GPU has finished and found
   free of bytes outside the alphabet (for callers that keep per-part
   information, such as record names, only until it is no longer needed). */
SM_DFA_API uint64_t sm_dfa_gpu_clean_bytes(const sm_dfa_gpu *gpu);
/* 1 when the GPU found a byte outside the alphabet in the input begun (its
   offset and value in *offset, *byte), else 0. */
SM_DFA_API int sm_dfa_gpu_unknown(const sm_dfa_gpu *gpu, uint64_t *offset, uint8_t *byte);
/* One input at once, as sm_dfa_run (earlier inputs' results are delivered first). */
SM_DFA_API int sm_dfa_gpu_run(sm_dfa_gpu *gpu, uint32_t state, const void *data, size_t len, uint32_t *final_state,
                              sm_error *err);
/* The GPU's name, for messages and reports. */
SM_DFA_API const char *sm_dfa_gpu_device_name(const sm_dfa_gpu *gpu);
SM_DFA_API void sm_dfa_gpu_free(sm_dfa_gpu *gpu);

#ifdef __cplusplus
}
#endif
#endif /* SEQMATCH_DFA_H */
