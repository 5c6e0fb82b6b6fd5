/* The narrow interface between the CUDA runner (cuda_backend.c, plain C)
 * and the code that talks to the GPU: cuda_device.cu and the engines'
 * kernels in the GPU module, reached through the loader (cuda_loader.c,
 * cuda_module.h), or cuda_none.c in a build without CUDA.
 *
 * The GPU holds a copy of every section of a database and runs each
 * section's kernel (in the engine's folder, engines/gpu_part.h) over a
 * batch. One batch is a run of text bytes and a table of chunks
 * (sm_gpu_chunk): a chunk owns the hits that start in [c0, c1) (batch
 * offsets) and is scanned from its engine's start state at c0 up to `end`;
 * k-edit end events are owned by their last byte and read from `from`.
 */
#ifndef SM_CUDA_DEVICE_H
#define SM_CUDA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "engines/gpu_part.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a finished batch left on the host (pinned memory, valid until the
   slot is launched again): count mode, the per-pattern counts (folded on the
   device); hit mode, the hits, in no order. */
typedef struct {
    const sm_gpu_hit *hits;
    size_t nhits;
    const unsigned long long *counts;
    /* hit mode: the batch found more hits than the largest hit buffer holds
       (hits NULL, nhits 0); its segments' hits are to be found elsewhere */
    int overflow;
} sm_cuda_result;

typedef struct {
    const sm_cuda_section *sections;
    uint32_t nsections;
    const uint32_t *lengths; /* pattern lengths */
    uint32_t pattern_count;
    uint32_t longest;        /* longest pattern */
    uint32_t reach;          /* k edits: longest pattern + k (0 otherwise) */
} sm_cuda_database;

typedef struct sm_cuda_tables sm_cuda_tables; /* a database on one GPU */
typedef struct sm_cuda_slot sm_cuda_slot;     /* one batch's buffers on one GPU */

int sm_cuda_device_count(void);
/* Starts the driver and a device's context (-1: every device) ahead of a runner (seqmatch.h). */
int sm_cuda_prepare(int device);
/* sm_cuda_reserve (seqmatch_runtime.h); the bytes a runner asks past its
   batch for direct writers (SM_WRITE_SLACK, checked equal in cuda_backend.c) */
int sm_cuda_reserve(int device, size_t batch_bytes, unsigned buffers);
#define SM_CUDA_TEXT_SLACK 64
/* NULL when the GPU side is there (devices or not), else why it is not: a
   build without CUDA, a GPU module that cannot be loaded. */
const char *sm_cuda_missing(void);
/* Name and memory of a device, for messages and benchmarks. */
void sm_cuda_device_name(int device, char *name, size_t size);

/* Every function below returns 0 or -1 with a message in msg[256]. */

/* Copies the sections and the pattern lengths to the device; refuses a
   section kind no kernel of the module scans. */
int sm_cuda_tables_open(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg);
void sm_cuda_tables_close(sm_cuda_tables *tables);
/* The chunk length the kernels want for batches of text_cap bytes: every
   GPU thread (or warp, for kernels that give a chunk to a warp) busy in a
   full batch, and chunks several tails long. */
size_t sm_cuda_tables_chunk(const sm_cuda_tables *tables, size_t text_cap, size_t tail);

/* Buffers for batches of up to text_cap bytes and chunk_cap chunks. */
int sm_cuda_slot_open(sm_cuda_tables *tables, size_t text_cap, size_t chunk_cap, int count_only,
                      sm_cuda_slot **out, char *msg);
void sm_cuda_slot_close(sm_cuda_slot *slot);
/* Host (pinned) arrays the caller fills before a launch. The text buffer
   holds at least bytes (at most text_cap): it is allocated on the first
   call and grown, its bytes kept, when a call asks for more; NULL with a
   message when that fails. */
uint8_t *sm_cuda_slot_text(sm_cuda_slot *slot, size_t bytes, char *msg);
sm_gpu_chunk *sm_cuda_slot_chunks(sm_cuda_slot *slot);
/* Starts copying and scanning text[0, len) with chunks[0, nchunks); returns at once. */
int sm_cuda_slot_launch(sm_cuda_slot *slot, size_t len, size_t nchunks, char *msg);
/* Waits for the batch and fills *result. */
int sm_cuda_slot_wait(sm_cuda_slot *slot, sm_cuda_result *result, char *msg);
/* Benchmarks: scans the batch last launched (and waited for), still on the
   device, `repeats` more times; *ms is the median kernel time of one scan. */
int sm_cuda_slot_time_scan(sm_cuda_slot *slot, int repeats, double *ms, char *msg);

/* BGZF blocks inflated on a GPU by NVIDIA's nvCOMP, which the module loads
   at run time (SM_NVCOMP_FILE: at $SEQMATCH_NVCOMP, beside the module, then
   by name). An inflater takes runs of whole BGZF blocks of up to max_blocks
   blocks, max_raw bytes and max_out bytes inflated; it is used by one
   thread at a time. sm_cuda_inflate_open returns -1 with msg when nvCOMP
   or the device cannot be had. */
#define SM_NVCOMP_FILE "libnvcomp.so.6"
typedef struct sm_cuda_inflater sm_cuda_inflater;
int sm_cuda_inflate_open(int device, size_t max_blocks, size_t max_raw, size_t max_out, sm_cuda_inflater **out,
                         char *msg);
/* Inflates the blocks of raw[0, raw_len) into out (cap bytes; *out_len
   made). Returns 1 when every block inflated to its ISIZE and matched its
   CRC32; 0 when any did not, or the run is not one the inflater takes (a
   header other than BGZF's, too many blocks or bytes): the caller inflates
   the run itself and words the error; -1 on a device error (msg). */
int sm_cuda_inflate_run(sm_cuda_inflater *f, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                        size_t *out_len, char *msg);
void sm_cuda_inflate_close(sm_cuda_inflater *f);

#ifdef __cplusplus
}
#endif

#endif /* SM_CUDA_DEVICE_H */
