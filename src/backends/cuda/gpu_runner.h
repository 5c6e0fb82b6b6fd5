/* The CUDA backend behind sm_runner (SM_BACKEND_CUDA): records are packed
 * into batches, each batch is scanned on a GPU while the next one fills, and
 * hits come back in the CPU runner's order. */
#ifndef SM_GPU_RUNNER_H
#define SM_GPU_RUNNER_H

#include "core/internal.h"

typedef struct sm_gpu_runner sm_gpu_runner;

int sm_gpu_runner_create(const sm_db *db, const sm_runner_options *opts, sm_gpu_runner **out, sm_error *err);
uint64_t sm_gpu_runner_begin_record(sm_gpu_runner *g);
int sm_gpu_runner_feed(sm_gpu_runner *g, const void *data, size_t len);
int sm_gpu_runner_end_record(sm_gpu_runner *g);
int sm_gpu_runner_flush(sm_gpu_runner *g);
const uint64_t *sm_gpu_runner_counts(const sm_gpu_runner *g);
uint64_t sm_gpu_runner_total(const sm_gpu_runner *g);
void sm_gpu_runner_free(sm_gpu_runner *g);
/* Benchmarks: after a flush, scans the last batch again on its GPU (its text
   still there) `repeats` times; the median kernel time and the batch size. */
int sm_gpu_runner_time_last_batch(sm_gpu_runner *g, int repeats, double *ms, size_t *bytes);

#endif /* SM_GPU_RUNNER_H */
