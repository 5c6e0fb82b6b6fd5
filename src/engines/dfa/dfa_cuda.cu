/* The CUDA side of the GPU DFA run (dfa_gpu_device.h): device memory, two
 * streams and the kernels around the per-thread code of dfa_gpu_steps.h.
 *
 * A batch is copied on one stream and run on the other: the chunk kernel
 * (one thread per chunk, the tables in shared memory when they fit, a
 * persistent grid), the scan's up and down kernels level by level, the
 * gather of the segments' end states, and their copy back. Batches follow
 * each other on the run stream, so the state carried from one to the next
 * never leaves the device; the copy of the next batch overlaps the run of
 * the last.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "engines/dfa/dfa_gpu_device.h"
}
#include "engines/dfa/dfa_gpu_steps.h"

#define CHUNK_THREADS 256
#define SCAN_THREADS 256
/* Step tables up to this size are copied into every block's shared memory
   (with the byte codes, under the 48 KB a block has without opting in). */
#define SHARED_STEP_BYTES (40u * 1024u)

struct slot {
    uint8_t *host_text, *dev_text;
    sm_dfa_gpu_chunk *host_chunks, *dev_chunks;
    sm_dfa_gpu_segment *host_segments, *dev_segments;
    uint32_t *host_finals, *dev_finals;
    cudaEvent_t copied, done;
    sm_dfa_gpu_batch batch;
    uint32_t *carry_in, *carry_out;
    int launched;
};

struct sm_dfa_cuda {
    int device, sms;
    cudaStream_t run, copy;
    uint32_t states, dfa_states, stride, row, row_shift, row_inverse;
    uint64_t step_words;
    uint32_t *step, *step1, *code, *col1;
    int step_shared;
    size_t shared_bytes;
    uint64_t map_cap;
    uint32_t *maps, *in;
    smg_scratch scratch;
    uint32_t *carry; /* two words: batch b reads carry[(b + 1) & 1] and writes carry[b & 1] */
    uint64_t launches;
    size_t text_cap, chunk_cap, segment_cap;
    slot slots[2];
};

static int fail(char *msg, const char *what, cudaError_t e) {
    snprintf(msg, 256, "CUDA: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

#define CHECK(call, what)                                   \
    do {                                                    \
        cudaError_t e_ = (call);                            \
        if (e_ != cudaSuccess) return fail(msg, what, e_);  \
    } while (0)

struct chunk_args {
    const uint8_t *text;
    const sm_dfa_gpu_chunk *chunks;
    const sm_dfa_gpu_segment *segments;
    uint64_t nchunks, nsegments;
    uint32_t *maps;
    smg_scratch scratch;
    const uint32_t *carry_in;
    uint32_t *carry_out, *finals;
    const uint32_t *step, *step1, *code, *col1;
    uint32_t states, dfa_states, row, row_shift, row_inverse;
    uint64_t step_words;
};

template <int S, bool kShared, bool kMany>
__global__ void __launch_bounds__(CHUNK_THREADS) chunk_kernel(chunk_args a) {
    extern __shared__ uint32_t shared[];
    uint32_t *code = shared, *col1 = shared + S * 256, *step = shared + (S + 1) * 256;
    for (uint32_t i = threadIdx.x; i < S * 256; i += blockDim.x) code[i] = a.code[i];
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) col1[i] = a.col1[i];
    if (kShared)
        for (uint32_t i = threadIdx.x; i < a.step_words; i += blockDim.x) step[i] = __ldg(&a.step[i]);
    __syncthreads();
    smg_view t;
    t.step = kShared ? step : a.step;
    t.step1 = S == 1 ? t.step : a.step1;
    t.code = code;
    t.col1 = col1;
    t.states = a.states, t.dfa_states = a.dfa_states, t.row = a.row;
    t.row_shift = a.row_shift, t.row_inverse = a.row_inverse;
    for (uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; c < a.nchunks;
         c += (uint64_t)gridDim.x * blockDim.x)
        smg_chunk(&t, S, kMany, a.text, a.chunks, a.segments, c, a.nsegments, a.maps, a.scratch, a.carry_in,
                  a.carry_out, a.finals);
}

typedef void (*chunk_kernel_fn)(chunk_args);

template <int S>
static chunk_kernel_fn pick_kernel(bool shared, bool many) {
    if (shared) return many ? chunk_kernel<S, true, true> : chunk_kernel<S, true, false>;
    return many ? chunk_kernel<S, false, true> : chunk_kernel<S, false, false>;
}

static chunk_kernel_fn kernel_for(const sm_dfa_cuda *d) {
    bool many = d->dfa_states > 4;
    bool shared = d->step_shared != 0;
    if (d->stride == 4) return pick_kernel<4>(shared, many);
    if (d->stride == 2) return pick_kernel<2>(shared, many);
    return pick_kernel<1>(shared, many);
}

__global__ void up_kernel(const uint32_t *maps, uint64_t count, uint32_t states, uint64_t nodes, uint32_t *above) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nodes * states) return;
    smg_up(maps, count, states, i / states, (uint32_t)(i % states), above);
}

__global__ void down_kernel(const uint32_t *maps, uint64_t count, uint32_t states, uint64_t nodes,
                            const uint32_t *in_above, uint32_t *in) {
    uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g < nodes) smg_down(maps, count, states, g, in_above, in);
}

__global__ void gather_kernel(const sm_dfa_gpu_segment *segments, uint64_t nsegments, const uint32_t *maps,
                              const uint32_t *in, uint32_t states, uint32_t *finals, uint32_t *carry_out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nsegments) smg_gather(segments, i, nsegments, maps, in, states, finals, carry_out);
}

static unsigned blocks_for(uint64_t threads, unsigned per_block) {
    return (unsigned)((threads + per_block - 1) / per_block);
}

extern "C" int sm_dfa_cuda_device(int device, sm_dfa_gpu_device_info *info, char *msg) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError(); /* clear the sticky "no driver" error */
        snprintf(msg, 256, "no usable GPU: the CUDA runtime sees no device");
        return -1;
    }
    if (device < 0 || device >= n) {
        snprintf(msg, 256, "GPU %d does not exist (%d visible)", device, n);
        return -1;
    }
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, device), "reading the device's properties");
    CHECK(cudaSetDevice(device), "selecting the device");
    size_t free_bytes = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total), "reading the free memory");
    snprintf(info->name, sizeof info->name, "%s (%d SMs, %.0f GiB)", p.name, p.multiProcessorCount,
             (double)p.totalGlobalMem / (1024.0 * 1024 * 1024));
    info->parallelism = (size_t)p.multiProcessorCount * (size_t)p.maxThreadsPerMultiProcessor;
    info->free_memory = free_bytes;
    return 0;
}

extern "C" void sm_dfa_cuda_close(sm_dfa_cuda *d) {
    if (!d) return;
    cudaSetDevice(d->device);
    if (d->run) cudaStreamSynchronize(d->run);
    if (d->copy) cudaStreamSynchronize(d->copy);
    for (int i = 0; i < 2; i++) {
        slot *s = &d->slots[i];
        cudaFreeHost(s->host_text);
        cudaFreeHost(s->host_chunks);
        cudaFreeHost(s->host_segments);
        cudaFreeHost(s->host_finals);
        cudaFree(s->dev_text);
        cudaFree(s->dev_chunks);
        cudaFree(s->dev_segments);
        cudaFree(s->dev_finals);
        if (s->copied) cudaEventDestroy(s->copied);
        if (s->done) cudaEventDestroy(s->done);
    }
    cudaFree(d->step);
    if (d->step1 != d->step) cudaFree(d->step1);
    cudaFree(d->code);
    cudaFree(d->col1);
    cudaFree(d->maps);
    cudaFree(d->in);
    cudaFree(d->scratch.lanes);
    cudaFree(d->carry);
    if (d->run) cudaStreamDestroy(d->run);
    if (d->copy) cudaStreamDestroy(d->copy);
    free(d);
}

static int open_device(sm_dfa_cuda *d, const sm_dfa_gpu_tables *t, size_t text_cap, size_t chunk_cap,
                       size_t segment_cap, size_t map_cap, char *msg) {
    CHECK(cudaSetDevice(d->device), "selecting the device");
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, d->device), "reading the device's properties");
    d->sms = p.multiProcessorCount;
    CHECK(cudaStreamCreateWithFlags(&d->run, cudaStreamNonBlocking), "creating a stream");
    CHECK(cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking), "creating a stream");
    d->states = t->states, d->dfa_states = t->dfa_states, d->stride = t->stride, d->row = t->row;
    d->row_shift = t->row_shift, d->row_inverse = t->row_inverse;
    d->step_words = (uint64_t)t->states * t->row;
    size_t table_bytes = (size_t)d->step_words * sizeof(uint32_t);
    CHECK(cudaMalloc(&d->step, table_bytes), "allocating the transition table");
    CHECK(cudaMemcpy(d->step, t->step, table_bytes, cudaMemcpyHostToDevice), "copying the transition table");
    if (t->stride == 1) {
        d->step1 = d->step;
    } else {
        CHECK(cudaMalloc(&d->step1, table_bytes), "allocating the transition table");
        CHECK(cudaMemcpy(d->step1, t->step1, table_bytes, cudaMemcpyHostToDevice), "copying the transition table");
    }
    CHECK(cudaMalloc(&d->code, (size_t)t->stride * 256 * sizeof(uint32_t)), "allocating the byte codes");
    CHECK(cudaMemcpy(d->code, t->code, (size_t)t->stride * 256 * sizeof(uint32_t), cudaMemcpyHostToDevice),
          "copying the byte codes");
    CHECK(cudaMalloc(&d->col1, 256 * sizeof(uint32_t)), "allocating the byte codes");
    CHECK(cudaMemcpy(d->col1, t->col1, 256 * sizeof(uint32_t), cudaMemcpyHostToDevice), "copying the byte codes");
    d->step_shared = table_bytes <= SHARED_STEP_BYTES;
    d->shared_bytes = ((size_t)t->stride + 1) * 256 * sizeof(uint32_t) + (d->step_shared ? table_bytes : 0);

    d->map_cap = map_cap;
    uint64_t map_words = 0, in_words = 0;
    smg_layout(map_cap, t->states, NULL, NULL, &map_words, &in_words);
    CHECK(cudaMalloc(&d->maps, (size_t)map_words * sizeof(uint32_t)), "allocating the state maps");
    CHECK(cudaMalloc(&d->in, (size_t)in_words * sizeof(uint32_t)), "allocating the scan");
    d->scratch.pitch = map_cap;
    if (t->dfa_states > 4) {
        size_t words = (size_t)t->states * map_cap;
        CHECK(cudaMalloc(&d->scratch.lanes, 4 * words * sizeof(uint32_t)), "allocating the chunks' lanes");
        d->scratch.owner = d->scratch.lanes + words;
        d->scratch.mark = d->scratch.owner + words;
        d->scratch.slot = d->scratch.mark + words;
    }
    CHECK(cudaMalloc(&d->carry, 2 * sizeof(uint32_t)), "allocating the carried state");
    CHECK(cudaMemset(d->carry, 0, 2 * sizeof(uint32_t)), "clearing the carried state");
    d->text_cap = text_cap, d->chunk_cap = chunk_cap, d->segment_cap = segment_cap;
    for (int i = 0; i < 2; i++) {
        slot *s = &d->slots[i];
        CHECK(cudaHostAlloc(&s->host_text, text_cap ? text_cap : 1, cudaHostAllocDefault), "allocating pinned memory");
        CHECK(cudaHostAlloc(&s->host_chunks, chunk_cap * sizeof(sm_dfa_gpu_chunk), cudaHostAllocDefault),
              "allocating pinned memory");
        CHECK(cudaHostAlloc(&s->host_segments, segment_cap * sizeof(sm_dfa_gpu_segment), cudaHostAllocDefault),
              "allocating pinned memory");
        CHECK(cudaHostAlloc(&s->host_finals, segment_cap * sizeof(uint32_t), cudaHostAllocDefault),
              "allocating pinned memory");
        CHECK(cudaMalloc(&s->dev_text, text_cap ? text_cap : 1), "allocating the batch buffer");
        CHECK(cudaMalloc(&s->dev_chunks, chunk_cap * sizeof(sm_dfa_gpu_chunk)), "allocating the chunk table");
        CHECK(cudaMalloc(&s->dev_segments, segment_cap * sizeof(sm_dfa_gpu_segment)), "allocating the segments");
        CHECK(cudaMalloc(&s->dev_finals, segment_cap * sizeof(uint32_t)), "allocating the end states");
        CHECK(cudaEventCreateWithFlags(&s->copied, cudaEventDisableTiming), "creating an event");
        CHECK(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming), "creating an event");
    }
    return 0;
}

extern "C" int sm_dfa_cuda_open(int device, const sm_dfa_gpu_tables *t, size_t text_cap, size_t chunk_cap,
                                size_t segment_cap, size_t map_cap, sm_dfa_cuda **out, char *msg) {
    *out = NULL;
    sm_dfa_cuda *d = (sm_dfa_cuda *)calloc(1, sizeof *d);
    if (!d) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    d->device = device;
    /* the tables were copied and the carried state cleared on the legacy
       stream, which the non-blocking streams do not wait for */
    cudaError_t e = cudaSuccess;
    if (open_device(d, t, text_cap, chunk_cap, segment_cap, map_cap, msg) != 0 ||
        ((e = cudaDeviceSynchronize()) != cudaSuccess && fail(msg, "setting up the device", e) != 0)) {
        sm_dfa_cuda_close(d);
        return -1;
    }
    *out = d;
    return 0;
}

extern "C" uint8_t *sm_dfa_cuda_text(sm_dfa_cuda *d, unsigned i) { return d->slots[i].host_text; }
extern "C" sm_dfa_gpu_chunk *sm_dfa_cuda_chunks(sm_dfa_cuda *d, unsigned i) { return d->slots[i].host_chunks; }
extern "C" sm_dfa_gpu_segment *sm_dfa_cuda_segments(sm_dfa_cuda *d, unsigned i) { return d->slots[i].host_segments; }

/* The batch's kernels and the copy of its end states, on the run stream. */
static int run_batch(sm_dfa_cuda *d, slot *s, char *msg) {
    const sm_dfa_gpu_batch *b = &s->batch;
    if (b->nchunks) {
        chunk_args a;
        a.text = s->dev_text, a.chunks = s->dev_chunks, a.segments = s->dev_segments;
        a.nchunks = b->nchunks, a.nsegments = b->nsegments;
        a.maps = d->maps, a.scratch = d->scratch;
        a.carry_in = s->carry_in, a.carry_out = s->carry_out, a.finals = s->dev_finals;
        a.step = d->step, a.step1 = d->step1, a.code = d->code, a.col1 = d->col1;
        a.states = d->states, a.dfa_states = d->dfa_states, a.row = d->row;
        a.row_shift = d->row_shift, a.row_inverse = d->row_inverse, a.step_words = d->step_words;
        chunk_kernel_fn k = kernel_for(d);
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, CHUNK_THREADS, d->shared_bytes),
              "sizing the chunk kernel");
        if (per_sm < 1) per_sm = 1;
        unsigned grid = blocks_for(b->nchunks, CHUNK_THREADS);
        if (grid > (unsigned)(per_sm * d->sms)) grid = (unsigned)(per_sm * d->sms);
        k<<<grid, CHUNK_THREADS, d->shared_bytes, d->run>>>(a);
        CHECK(cudaGetLastError(), "starting the chunk kernel");
    }
    if (b->nmaps) {
        uint64_t counts[SMG_MAX_LEVELS], map_off[SMG_MAX_LEVELS], in_off[SMG_MAX_LEVELS];
        int levels = smg_levels(b->nmaps, counts);
        smg_layout(b->nmaps, d->states, map_off, in_off, NULL, NULL);
        for (int l = 0; l < levels; l++) {
            uint64_t threads = counts[l + 1] * d->states;
            up_kernel<<<blocks_for(threads, SCAN_THREADS), SCAN_THREADS, 0, d->run>>>(
                d->maps + map_off[l], counts[l], d->states, counts[l + 1], d->maps + map_off[l + 1]);
        }
        CHECK(cudaMemsetAsync(d->in + in_off[levels], 0, sizeof(uint32_t), d->run), "starting the scan");
        for (int l = levels - 1; l >= 0; l--)
            down_kernel<<<blocks_for(counts[l + 1], SCAN_THREADS), SCAN_THREADS, 0, d->run>>>(
                d->maps + map_off[l], counts[l], d->states, counts[l + 1], d->in + in_off[l + 1], d->in + in_off[l]);
        gather_kernel<<<blocks_for(b->nsegments, SCAN_THREADS), SCAN_THREADS, 0, d->run>>>(
            s->dev_segments, b->nsegments, d->maps, d->in, d->states, s->dev_finals, s->carry_out);
        CHECK(cudaGetLastError(), "starting the scan");
    }
    CHECK(cudaMemcpyAsync(s->host_finals, s->dev_finals, b->nsegments * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                          d->run),
          "copying the end states back");
    return 0;
}

extern "C" int sm_dfa_cuda_launch(sm_dfa_cuda *d, unsigned i, const sm_dfa_gpu_batch *b, char *msg) {
    slot *s = &d->slots[i];
    if (b->len > d->text_cap || b->nchunks > d->chunk_cap || b->nsegments > d->segment_cap || b->nmaps > d->map_cap) {
        snprintf(msg, 256, "a batch over the slot's capacity");
        return -1;
    }
    CHECK(cudaSetDevice(d->device), "selecting the device");
    s->batch = *b;
    s->carry_in = d->carry + ((d->launches + 1) & 1);
    s->carry_out = d->carry + (d->launches & 1);
    d->launches++;
    CHECK(cudaMemcpyAsync(s->dev_text, s->host_text, b->len, cudaMemcpyHostToDevice, d->copy), "copying a batch");
    CHECK(cudaMemcpyAsync(s->dev_chunks, s->host_chunks, b->nchunks * sizeof(sm_dfa_gpu_chunk),
                          cudaMemcpyHostToDevice, d->copy),
          "copying the chunk table");
    CHECK(cudaMemcpyAsync(s->dev_segments, s->host_segments, b->nsegments * sizeof(sm_dfa_gpu_segment),
                          cudaMemcpyHostToDevice, d->copy),
          "copying the segments");
    CHECK(cudaEventRecord(s->copied, d->copy), "recording an event");
    CHECK(cudaStreamWaitEvent(d->run, s->copied, 0), "ordering the streams");
    if (run_batch(d, s, msg) != 0) return -1;
    CHECK(cudaEventRecord(s->done, d->run), "recording an event");
    s->launched = 1;
    return 0;
}

extern "C" int sm_dfa_cuda_wait(sm_dfa_cuda *d, unsigned i, const uint32_t **finals, char *msg) {
    slot *s = &d->slots[i];
    *finals = NULL;
    if (!s->launched) {
        snprintf(msg, 256, "no batch in this slot");
        return -1;
    }
    CHECK(cudaEventSynchronize(s->done), "running a batch");
    CHECK(cudaGetLastError(), "running a batch");
    s->launched = 0;
    *finals = s->host_finals;
    return 0;
}

static int compare_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

extern "C" int sm_dfa_cuda_time(sm_dfa_cuda *d, unsigned i, int repeats, double *ms, char *msg) {
    slot *s = &d->slots[i];
    msg[0] = 0;
    CHECK(cudaSetDevice(d->device), "selecting the device");
    if (repeats < 1) repeats = 1;
    if (repeats > 99) repeats = 99;
    float t[99];
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start), "creating an event");
    CHECK(cudaEventCreate(&stop), "creating an event");
    int rc = 0;
    for (int r = 0; r < repeats && rc == 0; r++) {
        if (cudaEventRecord(start, d->run) != cudaSuccess || run_batch(d, s, msg) != 0 ||
            cudaEventRecord(stop, d->run) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
            cudaEventElapsedTime(&t[r], start, stop) != cudaSuccess) {
            if (!msg[0]) fail(msg, "timing a batch", cudaGetLastError());
            rc = -1;
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (rc) return rc;
    qsort(t, (size_t)repeats, sizeof *t, compare_float);
    *ms = t[repeats / 2];
    return 0;
}
