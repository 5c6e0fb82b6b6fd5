/* The GPU side of the DFA run in a build without CUDA, and in the static
 * archive of a build with it (the GPU module is loaded by libseqmatch.so and
 * the command only): no device is ever usable, so sm_dfa_gpu_open refuses
 * to start with cuda_none.c's reason and nothing else is reached. */
#include <stdio.h>

#include "backends/cuda/cuda_device.h"

#include "engines/dfa/dfa_gpu_device.h"

static int unavailable(char *msg) {
    snprintf(msg, 256, "%.250s", sm_cuda_missing());
    return -1;
}

int sm_dfa_cuda_device(int device, sm_dfa_gpu_device_info *info, char *msg) {
    (void)device, (void)info;
    return unavailable(msg);
}

int sm_dfa_cuda_open(int device, const sm_dfa_gpu_tables *tables, size_t text_cap, size_t chunk_cap,
                     size_t segment_cap, size_t map_cap, sm_dfa_cuda **out, char *msg) {
    (void)device, (void)tables, (void)text_cap, (void)chunk_cap, (void)segment_cap, (void)map_cap;
    *out = NULL;
    return unavailable(msg);
}

void sm_dfa_cuda_close(sm_dfa_cuda *d) { (void)d; }
uint8_t *sm_dfa_cuda_text(sm_dfa_cuda *d, unsigned slot) { (void)d, (void)slot; return NULL; }
sm_dfa_gpu_chunk *sm_dfa_cuda_chunks(sm_dfa_cuda *d, unsigned slot) { (void)d, (void)slot; return NULL; }
sm_dfa_gpu_segment *sm_dfa_cuda_segments(sm_dfa_cuda *d, unsigned slot) { (void)d, (void)slot; return NULL; }

int sm_dfa_cuda_launch(sm_dfa_cuda *d, unsigned slot, const sm_dfa_gpu_batch *batch, char *msg) {
    (void)d, (void)slot, (void)batch;
    return unavailable(msg);
}

int sm_dfa_cuda_wait(sm_dfa_cuda *d, unsigned slot, const uint32_t **finals, char *msg) {
    (void)d, (void)slot;
    *finals = NULL;
    return unavailable(msg);
}

int sm_dfa_cuda_time(sm_dfa_cuda *d, unsigned slot, int repeats, double *ms, char *msg) {
    (void)d, (void)slot, (void)repeats, (void)ms;
    return unavailable(msg);
}
