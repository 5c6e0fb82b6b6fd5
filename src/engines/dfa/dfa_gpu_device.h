/* The narrow interface between the GPU DFA run's host side (dfa_gpu.c, plain
 * C) and the code that talks to the GPU (dfa_cuda.cu; dfa_cuda_none.c in a
 * build without CUDA; tests/emulated/dfa_cuda_emulated.c in the tests).
 *
 * A batch is a run of input bytes cut into segments (one per input, or per
 * part of an input, that lies in the batch) and the segments into chunks.
 * A segment's first chunk (its lead) is simulated from the segment's start
 * state; every other chunk from all states at once, giving a state map. A
 * segment of several chunks owns a run of consecutive maps, the first being
 * its lead's (a constant map: the state the lead ends in); the maps of the
 * whole batch are composed by a parallel prefix scan, so that the constant
 * maps restart the composition at every segment. The batch's result is the
 * state every segment ends in. The last segment's end state is carried to
 * the next batch on the device (a segment may start from it), so batches
 * follow each other without the host in between.
 */
#ifndef SM_DFA_GPU_DEVICE_H
#define SM_DFA_GPU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#define SM_DFA_GPU_NONE 0xFFFFFFFFu
/* Segment start: the state the previous batch's last segment ended in. */
#define SM_DFA_GPU_CARRY 0xFFFFFFFFu
/* Maps composed per node of the scan tree. */
#define SM_DFA_GPU_FAN 32u

typedef struct {
    uint64_t begin, end; /* batch offsets */
    uint32_t segment;
    uint32_t map;        /* its state map, or SM_DFA_GPU_NONE for a segment of one chunk */
    uint32_t lead;       /* 1: the segment's first chunk, simulated from its start state */
    uint32_t reserved;
} sm_dfa_gpu_chunk;

typedef struct {
    uint32_t from;       /* run state at the start, or SM_DFA_GPU_CARRY */
    uint32_t last_map;   /* its last chunk's map, or SM_DFA_GPU_NONE (one chunk) */
} sm_dfa_gpu_segment;

typedef struct {
    size_t len, nchunks, nsegments, nmaps;
} sm_dfa_gpu_batch;

/* The run tables (built by dfa_gpu.c from the matcher). States are
   premultiplied by row: a step is step[v + group index]. */
typedef struct {
    uint32_t states;      /* run states: the DFA's, then the error sink when there is one */
    uint32_t dfa_states;  /* chunks are simulated from these (the sink maps to itself) */
    uint32_t stride;      /* symbols per lookup: 1, 2 or 4 */
    uint32_t row;         /* merged columns ^ stride */
    uint32_t row_shift, row_inverse; /* state = ((v >> row_shift) * row_inverse) mod 2^32 */
    const uint32_t *step;  /* [states * row]: target of a group of stride symbols, times row */
    const uint32_t *step1; /* [states * row]: target of one symbol (the first columns of a row), times row */
    const uint32_t *code;  /* [stride][256]: byte -> its column's share of the group index */
    const uint32_t *col1;  /* [256]: byte -> column */
} sm_dfa_gpu_tables;

typedef struct {
    char name[128];
    size_t parallelism;   /* threads the device runs at once */
    size_t free_memory;
} sm_dfa_gpu_device_info;

typedef struct sm_dfa_cuda sm_dfa_cuda;

/* Every function returning int returns 0, or -1 with a message in msg[256]. */

int sm_dfa_cuda_device(int device, sm_dfa_gpu_device_info *info, char *msg);

/* Copies the tables to the device and allocates two slots (batch buffers,
   pinned on the host) of text_cap bytes, chunk_cap chunks and segment_cap
   segments, and the maps and lanes for up to map_cap maps. */
int sm_dfa_cuda_open(int device, const sm_dfa_gpu_tables *tables, size_t text_cap, size_t chunk_cap,
                     size_t segment_cap, size_t map_cap, sm_dfa_cuda **out, char *msg);
void sm_dfa_cuda_close(sm_dfa_cuda *d);

/* A slot's host arrays, filled before its launch. */
uint8_t *sm_dfa_cuda_text(sm_dfa_cuda *d, unsigned slot);
sm_dfa_gpu_chunk *sm_dfa_cuda_chunks(sm_dfa_cuda *d, unsigned slot);
sm_dfa_gpu_segment *sm_dfa_cuda_segments(sm_dfa_cuda *d, unsigned slot);

/* Starts the batch in the slot; returns at once. Batches run in launch
   order; a slot is launched again only after it was waited for. */
int sm_dfa_cuda_launch(sm_dfa_cuda *d, unsigned slot, const sm_dfa_gpu_batch *batch, char *msg);
/* Waits for the slot's batch; *finals: the run state each segment ended in
   (valid until the slot is launched again). */
int sm_dfa_cuda_wait(sm_dfa_cuda *d, unsigned slot, const uint32_t **finals, char *msg);
/* Benchmarks: runs the slot's last batch (waited for, still on the device)
   `repeats` more times; *ms is the median time of one, from the first
   kernel to the end states back in host memory. */
int sm_dfa_cuda_time(sm_dfa_cuda *d, unsigned slot, int repeats, double *ms, char *msg);

#endif /* SM_DFA_GPU_DEVICE_H */
