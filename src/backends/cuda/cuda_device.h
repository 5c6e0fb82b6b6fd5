/* The narrow interface between the CUDA runner (cuda_backend.c, plain C)
 * and the code that talks to the GPU: cuda_kernels.cu in the GPU module,
 * reached through the loader (cuda_loader.c, cuda_module.h), or cuda_none.c
 * in a build without CUDA.
 *
 * One batch is a run of text bytes and a table of chunks. A chunk owns the
 * hits that start in [c0, c1) (batch offsets) and is scanned from the
 * automaton's root at c0 up to `end` (at most c1 + longest pattern - 1, never
 * past its record's bytes in the batch): from the root at c0 the automaton
 * reports exactly the hits that start at or after c0. A flagged transition
 * ending at or before c1 owns every output of its state; one past c1 only
 * the outputs that start before c1, which the kernel picks itself.
 */
#ifndef SM_CUDA_DEVICE_H
#define SM_CUDA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t c0, c1, end;
} sm_cuda_chunk;

/* A hit as the kernel reports it: `end` is the batch offset just past its last
   byte; code is an automaton state (every output of it is a hit) or, with
   SM_CUDA_ONE_OUTPUT set, one output id (pattern * 2 + reverse). */
#define SM_CUDA_ONE_OUTPUT 0x80000000u
typedef struct {
    uint32_t end, code;
} sm_cuda_hit;

/* What a finished batch left on the host (pinned memory, valid until the
   slot is launched again). Count mode: visits per automaton state, and
   per-pattern counts of the hits found past a chunk's c1. Hit mode: hits. */
typedef struct {
    const sm_cuda_hit *hits;
    size_t nhits;
    uint32_t *visits;
    uint64_t *tail_counts;
} sm_cuda_result;

typedef struct sm_cuda_tables sm_cuda_tables; /* an automaton on one GPU */
typedef struct sm_cuda_slot sm_cuda_slot;     /* one batch's buffers on one GPU */

int sm_cuda_device_count(void);
/* NULL when the GPU side is there (devices or not), else why it is not: a
   build without CUDA, a GPU module that cannot be loaded. */
const char *sm_cuda_missing(void);
/* Name and memory of a device, for messages and benchmarks. */
void sm_cuda_device_name(int device, char *name, size_t size);

/* Every function below returns 0 or -1 with a message in msg[256]. */

/* Where the tables lie in an automaton section (src/engines/automaton), so
   that the CUDA side needs none of the C headers. */
typedef struct {
    const uint8_t *section;
    size_t size;
    uint32_t states, columns;
    uint64_t delta_off, out_index_off, out_list_off;
    uint64_t class_of_off;   /* uint16[256]: text byte -> column */
    const uint32_t *lengths; /* pattern lengths */
    uint32_t pattern_count;
} sm_cuda_automaton;

/* Copies the automaton section and the pattern lengths to the device. */
int sm_cuda_tables_open(int device, const sm_cuda_automaton *automaton, sm_cuda_tables **out, char *msg);
void sm_cuda_tables_close(sm_cuda_tables *tables);

/* Buffers for batches of up to text_cap bytes and chunk_cap chunks. */
int sm_cuda_slot_open(sm_cuda_tables *tables, size_t text_cap, size_t chunk_cap, int count_only,
                      sm_cuda_slot **out, char *msg);
void sm_cuda_slot_close(sm_cuda_slot *slot);
/* Host (pinned) arrays the caller fills before a launch. */
uint8_t *sm_cuda_slot_text(sm_cuda_slot *slot);
sm_cuda_chunk *sm_cuda_slot_chunks(sm_cuda_slot *slot);
/* Starts copying and scanning text[0, len) with chunks[0, nchunks); returns at once. */
int sm_cuda_slot_launch(sm_cuda_slot *slot, size_t len, size_t nchunks, char *msg);
/* Waits for the batch and fills *result. */
int sm_cuda_slot_wait(sm_cuda_slot *slot, sm_cuda_result *result, char *msg);
/* Benchmarks: scans the batch last launched (and waited for), still on the
   device, `repeats` more times; *ms is the median kernel time of one scan. */
int sm_cuda_slot_time_scan(sm_cuda_slot *slot, int repeats, double *ms, char *msg);
/* Threads the device runs at once: the runner sizes chunks so that a full
   batch keeps them all busy. */
size_t sm_cuda_tables_parallelism(const sm_cuda_tables *tables);

#endif /* SM_CUDA_DEVICE_H */
