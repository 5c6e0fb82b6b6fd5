/* DFA membership engine: internals shared by its files. */
#ifndef SM_DFA_INTERNAL_H
#define SM_DFA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "seqmatch_dfa.h"

#define SM_DFA_BYTE_ORDER_MARK 0x01020304u
#define SM_DFA_ALIGN 64u
/* The last line of a dump: this, then the CRC-32 of the lines before it in
   8 lower-case hex digits (docs/dfa.md); the parser checks it when present. */
#define SM_DFA_CHECKSUM_LINE "# crc32 "

struct sm_dfa {
    uint8_t *bytes;            /* the flat block, SM_DFA_ALIGN aligned */
    size_t size;
    /* Views into bytes (derived from the layout's offsets). */
    const sm_dfa_layout *layout;
    const uint16_t *column_of;
    const uint64_t *accept;
    const uint32_t *table;
};

static inline int sm_dfa_bit(const uint64_t *bits, uint32_t i) { return (int)((bits[i >> 6] >> (i & 63)) & 1u); }
static inline void sm_dfa_set_bit(uint64_t *bits, uint32_t i) { bits[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline size_t sm_dfa_accept_words(uint32_t states) { return ((size_t)states + 63) / 64; }

/* The DFA with every state s renumbered to order[s] (a permutation of the
   states, or SM_DFA_NO_STATE for states to drop; kept states must be closed
   under transitions); keep is the number of kept states. */
int sm_dfa_renumber(const sm_dfa *dfa, const uint32_t *order, uint32_t keep, sm_dfa **out, sm_error *err);

/* The DFA of a dictionary automaton section (engines/automaton). */
int sm_dfa_from_ac_section(const uint8_t *section, sm_dfa_match mode, sm_dfa **dfa, sm_error *err);

/* For the multi-threaded runner: the true automaton state at the start of
   every chunk of text cut at cuts[0..chunks] (see sm_dfa_chunk_states),
   computed without overlap. matcher must come from
   sm_dfa_from_ac_section(section, SM_DFA_ENDS, ...). row_offsets[i] receives
   the automaton's own state value for chunk i (state * columns, as
   sm_ac_scan takes it); row_offsets[chunks] the state after the text. */
int sm_dfa_ac_chunk_states(const sm_dfa_matcher *matcher, const uint8_t *section, uint32_t state_row,
                           const uint8_t *text, const size_t *cuts, size_t chunks, unsigned threads,
                           uint32_t *row_offsets, sm_error *err);

/* Work run beside a parallel DFA run (sm_dfa_run_beside): the input loop
   reads the next block while the threads simulate the one before it. */
typedef struct {
    void (*task)(void *ctx);
    void *ctx;
    double seconds;       /* in: the task's expected time (0: unknown); out: its time this run */
    double byte_seconds;  /* in/out: one path's time per byte, as last measured (0: unknown) */
} sm_dfa_beside;

/* sm_dfa_run_parallel, with beside->task run once on the calling thread
   while the others simulate the chunks: the team hands out its tasks in
   order, the caller taking the first (the task, then the chunks), so that a
   reader's read callback stays on the caller's thread (sm_reader_open_fn).
   The last chunk, which the caller takes after the task, is shortened by
   the task's expected time. Without several threads, or with less than one
   minimal chunk of data, the task runs first and the data after. */
int sm_dfa_run_beside(const sm_dfa_matcher *m, uint32_t state, const void *data, size_t len,
                      const sm_dfa_parallel_options *opts, sm_dfa_beside *beside, uint32_t *final_state,
                      sm_error *err);

/* Tests: the input blocks of sm_dfa_scan_reader hold this many bytes (0:
   the usual 64 MiB), so that a small input crosses many (src/io/dfa_reader.c). */
void sm_dfa_scan_block_bytes(size_t bytes);

/* The matcher's run tables in plain form, for the GPU run (dfa_gpu.c): run
   states (the DFA's, then the error sink when unknown bytes are errors),
   merged columns, targets[states * columns] (malloc'd; NULL when out of
   memory), the column of every byte, and the sink (SM_DFA_NO_STATE if none). */
uint32_t *sm_dfa_matcher_plain(const sm_dfa_matcher *matcher, uint32_t *states, uint32_t *dfa_states, uint32_t *columns,
                               uint32_t *err_state, uint32_t column_of[256]);

/* Benchmarks and tests of the GPU run: the chunk plan (length, balanced
   ratio, chunks and maps of the last batch), and the time of the last batch
   run again on the device (median of repeats, milliseconds). */
void sm_dfa_gpu_plan_info(const sm_dfa_gpu *gpu, size_t *chunk_len, double *ratio, size_t *chunks, size_t *maps);
int sm_dfa_gpu_time_last(sm_dfa_gpu *gpu, int repeats, double *ms, sm_error *err);

#endif /* SM_DFA_INTERNAL_H */
