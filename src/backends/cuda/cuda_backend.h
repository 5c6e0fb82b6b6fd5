/* The CUDA backend's extras beyond the backend interface. */
#ifndef SM_CUDA_BACKEND_H
#define SM_CUDA_BACKEND_H

#include "seqmatch.h"
#include "io/source.h"

/* Benchmarks: after a flush, scans the last batch again on its GPU (its
   text still there) `repeats` times; the median kernel time and the batch
   size. SM_ERR_INVALID when r is not a CUDA runner or nothing was launched. */
int sm_cuda_time_last_batch(sm_runner *r, int repeats, double *ms, size_t *bytes);

/* A decoder of BGZF jobs (io/source.h) inflating on GPU device through
   nvCOMP, or NULL (why in msg[256]) where the GPU module, the device or
   nvCOMP cannot be had, or $SEQMATCH_GPU_INFLATE is 0. For one source at a
   time. */
sm_io_bgzf_decoder *sm_cuda_bgzf_decoder_new(int device, char *msg);
void sm_cuda_bgzf_decoder_free(sm_io_bgzf_decoder *decoder);

#endif /* SM_CUDA_BACKEND_H */
