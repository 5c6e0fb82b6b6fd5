/* The CUDA backend's extras beyond the backend interface. */
#ifndef SM_CUDA_BACKEND_H
#define SM_CUDA_BACKEND_H

#include "seqmatch.h"

/* Benchmarks: after a flush, scans the last batch again on its GPU (its
   text still there) `repeats` times; the median kernel time and the batch
   size. SM_ERR_INVALID when r is not a CUDA runner or nothing was launched. */
int sm_cuda_time_last_batch(sm_runner *r, int repeats, double *ms, size_t *bytes);

#endif /* SM_CUDA_BACKEND_H */
