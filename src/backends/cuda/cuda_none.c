/* The GPU side of a build without CUDA, and of the static archive of a build
 * with it (SM_CUDA_STATIC_ARCHIVE: the GPU module is loaded by
 * libseqmatch.so and the command only): no device is ever visible, so the
 * CUDA runner refuses to start (SM_ERR_DEVICE) with the reason, and nothing
 * below is reached. */
#include <stdio.h>

#include "seqmatch.h" /* sm_cuda_device_count is public */
#include "backends/cuda/cuda_device.h"

int sm_cuda_device_count(void) { return 0; }
int sm_cuda_prepare(int device) {
    (void)device;
    return 0;
}
int sm_cuda_reserve(int device, size_t batch_bytes, unsigned count) {
    (void)device, (void)batch_bytes, (void)count;
    return -1;
}
#ifdef SM_CUDA_STATIC_ARCHIVE
#define MISSING                                                                                                   \
    "the static libseqmatch.a cannot use a GPU: link libseqmatch.so (pkg-config --libs seqmatch, without --static), " \
    "which loads the GPU module"
#else
#define MISSING "this seqmatch was built without CUDA (nvcc was not found)"
#endif

const char *sm_cuda_missing(void) { return MISSING; }

void sm_cuda_device_name(int device, char *name, size_t size) { snprintf(name, size, "GPU %d", device); }

static int unavailable(char *msg) {
    snprintf(msg, 256, "%s", MISSING);
    return -1;
}

int sm_cuda_tables_open(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg) {
    (void)device, (void)db;
    *out = NULL;
    return unavailable(msg);
}

void sm_cuda_tables_close(sm_cuda_tables *tables) { (void)tables; }

size_t sm_cuda_tables_chunk(const sm_cuda_tables *tables, size_t text_cap, size_t tail) {
    (void)tables, (void)tail;
    return text_cap;
}

int sm_cuda_slot_open(sm_cuda_tables *tables, size_t text_cap, size_t chunk_cap, int count_only,
                      sm_cuda_slot **out, char *msg) {
    (void)tables, (void)text_cap, (void)chunk_cap, (void)count_only;
    *out = NULL;
    return unavailable(msg);
}

void sm_cuda_slot_close(sm_cuda_slot *slot) { (void)slot; }
uint8_t *sm_cuda_slot_text(sm_cuda_slot *slot, size_t bytes, char *msg) {
    (void)slot, (void)bytes;
    unavailable(msg);
    return NULL;
}
sm_gpu_chunk *sm_cuda_slot_chunks(sm_cuda_slot *slot) { (void)slot; return NULL; }

int sm_cuda_slot_launch(sm_cuda_slot *slot, size_t len, size_t nchunks, char *msg) {
    (void)slot, (void)len, (void)nchunks;
    return unavailable(msg);
}

int sm_cuda_slot_wait(sm_cuda_slot *slot, sm_cuda_result *result, char *msg) {
    (void)slot, (void)result;
    return unavailable(msg);
}

int sm_cuda_slot_time_scan(sm_cuda_slot *slot, int repeats, double *ms, char *msg) {
    (void)slot, (void)repeats, (void)ms;
    return unavailable(msg);
}

int sm_cuda_section_build(uint32_t kind, int device, const void *input, double ms[3], char *msg) {
    (void)kind, (void)device, (void)input, (void)ms;
    return unavailable(msg);
}

int sm_cuda_inflate_open(int device, size_t max_blocks, size_t max_raw, size_t max_out, sm_cuda_inflater **out,
                         char *msg) {
    (void)device, (void)max_blocks, (void)max_raw, (void)max_out;
    *out = NULL;
    return unavailable(msg);
}

int sm_cuda_inflate_run(sm_cuda_inflater *f, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                        size_t *out_len, char *msg) {
    (void)f, (void)raw, (void)raw_len, (void)out, (void)cap;
    *out_len = 0;
    return unavailable(msg);
}

void sm_cuda_inflate_close(sm_cuda_inflater *f) { (void)f; }
