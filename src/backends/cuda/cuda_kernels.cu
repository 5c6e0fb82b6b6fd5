/* The CUDA side of the GPU runner: the automaton kernel, and the device
 * memory and streams around it.
 *
 * The kernel is the CPU automaton scan spread over many threads: one thread
 * per chunk, one table lookup per byte. The text is read 16 bytes at a time.
 * When the transition table fits in a block's shared memory it is copied
 * there first (the 1000 8-mers of both strands need about 150 KB): lookups
 * from shared memory do not queue behind each other in L1 the way scattered
 * global loads do. Larger tables are read through the read-only cache and L2.
 *
 * Count mode adds one to a per-state visit counter for every flagged
 * transition (the host folds visits into per-pattern counts, as the CPU
 * runner does); hit mode appends (end, state) pairs. Near a chunk's end the
 * kernel checks each output's start itself (see cuda_device.h).
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"

extern "C" {
#include "backends/cuda/cuda_device.h"
}

#define TARGET_MASK 0x7fffffffu
#define OUT_FLAG 0x80000000u
#define BLOCK_THREADS 512

struct sm_cuda_tables {
    int device;
    int sms;
    size_t shared_limit;     /* bytes of shared memory one block may have */
    uint8_t *section;        /* device copy of the automaton section */
    uint32_t *lengths;       /* pattern lengths */
    uint16_t *compact;       /* 16-bit copy of the transitions (fewer than 2^15 states), or NULL */
    int prefer_wide;         /* SEQMATCH_CUDA_TABLE=32: the 32-bit shared table whenever it fits */
    uint32_t states, columns;
    uint64_t delta_off, out_index_off, out_list_off, class_of_off;
    uint32_t pattern_count;
};

struct sm_cuda_slot {
    sm_cuda_tables *t;
    cudaStream_t stream;
    int count_only;
    size_t text_cap, chunk_cap, hit_cap;
    uint8_t *host_text, *dev_text;
    sm_cuda_chunk *host_chunks, *dev_chunks;
    sm_cuda_hit *host_hits, *dev_hits;
    unsigned long long *host_nhits, *dev_nhits;
    uint32_t *host_visits, *dev_visits;
    unsigned long long *host_tail, *dev_tail;
    size_t len, nchunks;
};

struct kernel_args {
    const uint8_t *text;
    const sm_cuda_chunk *chunks;
    uint32_t nchunks;
    const uint32_t *delta, *out_index, *out_list, *lengths;
    const uint16_t *compact;
    uint32_t columns, delta_words;
    sm_cuda_hit *hits;
    unsigned long long hit_cap;
    unsigned long long *nhits;
    uint32_t *visits;
    unsigned long long *tail;
};

static int fail(char *msg, const char *what, cudaError_t e) {
    snprintf(msg, 256, "CUDA: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

#define CHECK(call, what)                          \
    do {                                           \
        cudaError_t e_ = (call);                   \
        if (e_ != cudaSuccess) return fail(msg, what, e_); \
    } while (0)

template <bool kCount>
__device__ __forceinline__ void report(const kernel_args &a, uint32_t state, uint32_t pos, uint32_t c1) {
    if (pos <= c1) {
        if (kCount) {
            atomicAdd(&a.visits[state], 1u);
        } else {
            unsigned long long i = atomicAdd(a.nhits, 1ull);
            if (i < a.hit_cap) a.hits[i] = sm_cuda_hit{pos, state};
        }
        return;
    }
    /* Past c1: only the outputs that start before c1 belong to this chunk. */
    uint32_t from = __ldg(&a.out_index[state]), to = __ldg(&a.out_index[state + 1]);
    for (uint32_t o = from; o < to; o++) {
        uint32_t id = __ldg(&a.out_list[o]);
        uint32_t len = __ldg(&a.lengths[id >> 1]);
        if (len > pos || pos - len >= c1) continue;
        if (kCount) {
            atomicAdd(&a.tail[id >> 1], 1ull);
        } else {
            unsigned long long i = atomicAdd(a.nhits, 1ull);
            if (i < a.hit_cap) a.hits[i] = sm_cuda_hit{pos, SM_CUDA_ONE_OUTPUT | id};
        }
    }
}

/* Where the kernel reads the transition table. */
enum { TABLE_GLOBAL = 0, TABLE_SHARED = 1, TABLE_SHARED16 = 2 };

/* One byte of class c: the next state, and a report when it is flagged. In
   the 32-bit tables an entry is the target's row offset (state * columns);
   in the 16-bit one the target's state index (a multiply per byte, half the
   shared memory). */
template <int kTable, bool kCount>
__device__ __forceinline__ void step(const kernel_args &a, const uint32_t *delta, const uint16_t *compact,
                                     uint32_t &s, uint32_t c, uint32_t pos, uint32_t c1) {
    if (kTable == TABLE_SHARED16) {
        uint32_t e = compact[s * a.columns + c];
        s = e & 0x7fffu;
        if (e & 0x8000u) report<kCount>(a, s, pos, c1);
    } else {
        uint32_t e = delta[s + c];
        s = e & TARGET_MASK;
        if (e & OUT_FLAG) report<kCount>(a, s / a.columns, pos, c1);
    }
}

template <int kTable, bool kCount>
__global__ void __launch_bounds__(BLOCK_THREADS) scan_kernel(kernel_args a, const uint16_t *class_of_global) {
    extern __shared__ uint32_t shared_table[];
    __shared__ uint32_t class_of[256];
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) class_of[i] = class_of_global[i];
    const uint32_t *delta = a.delta;
    const uint16_t *compact = reinterpret_cast<const uint16_t *>(shared_table);
    if (kTable == TABLE_SHARED) {
        for (uint32_t i = threadIdx.x; i < a.delta_words; i += blockDim.x) shared_table[i] = __ldg(&a.delta[i]);
        delta = shared_table;
    } else if (kTable == TABLE_SHARED16) {
        const uint32_t *words = reinterpret_cast<const uint32_t *>(a.compact);
        for (uint32_t i = threadIdx.x; i < (a.delta_words + 1) / 2; i += blockDim.x) shared_table[i] = __ldg(&words[i]);
    }
    __syncthreads();
    for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < a.nchunks; c += gridDim.x * blockDim.x) {
        const sm_cuda_chunk ch = a.chunks[c];
        uint32_t s = 0;
        uint32_t i = ch.c0;
        while (i < ch.end) {
            uint32_t base = i & ~15u;
            uint4 w = __ldg(reinterpret_cast<const uint4 *>(a.text + base));
            uint32_t words[4] = {w.x, w.y, w.z, w.w};
            uint32_t from = i - base, to = ch.end - base < 16u ? ch.end - base : 16u;
            if (from == 0 && to == 16) {
#pragma unroll
                for (int k = 0; k < 16; k++)
                    step<kTable, kCount>(a, delta, compact, s, class_of[(words[k >> 2] >> ((k & 3) * 8)) & 0xffu],
                                         base + k + 1, ch.c1);
            } else {
#pragma unroll
                for (int k = 0; k < 16; k++) {
                    if ((uint32_t)k < from || (uint32_t)k >= to) continue;
                    step<kTable, kCount>(a, delta, compact, s, class_of[(words[k >> 2] >> ((k & 3) * 8)) & 0xffu],
                                         base + k + 1, ch.c1);
                }
            }
            i = base + 16;
        }
    }
}

extern "C" int sm_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no driver" error */
        return 0;
    }
    return n;
}


extern "C" void sm_cuda_device_name(int device, char *name, size_t size) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        snprintf(name, size, "GPU %d", device);
        return;
    }
    snprintf(name, size, "%s (%d SMs, %.0f GiB)", p.name, p.multiProcessorCount,
             (double)p.totalGlobalMem / (1024.0 * 1024 * 1024));
}

extern "C" int sm_cuda_tables_open(int device, const sm_cuda_automaton *ac, sm_cuda_tables **out, char *msg) {
    *out = NULL;
    CHECK(cudaSetDevice(device), "selecting the device");
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, device), "reading the device's properties");
    sm_cuda_tables *t = (sm_cuda_tables *)calloc(1, sizeof *t);
    if (!t) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    t->device = device;
    t->sms = p.multiProcessorCount;
    t->shared_limit = p.sharedMemPerBlockOptin;
    t->states = ac->states;
    t->columns = ac->columns;
    t->delta_off = ac->delta_off;
    t->out_index_off = ac->out_index_off;
    t->out_list_off = ac->out_list_off;
    t->class_of_off = ac->class_of_off;
    t->pattern_count = ac->pattern_count;
    size_t npat = ac->pattern_count ? ac->pattern_count : 1;
    cudaError_t e = cudaMalloc(&t->section, ac->size);
    if (e == cudaSuccess) e = cudaMemcpy(t->section, ac->section, ac->size, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMalloc(&t->lengths, npat * sizeof(uint32_t));
    if (e == cudaSuccess && ac->pattern_count)
        e = cudaMemcpy(t->lengths, ac->lengths, ac->pattern_count * sizeof(uint32_t), cudaMemcpyHostToDevice);
    /* With fewer than 2^15 states every entry fits 16 bits (state index and
       flag): half the shared memory, so that larger tables fit in it (8000
       8-mers: 190 KB instead of 380) and smaller ones leave room for more blocks. */
    size_t words = (size_t)ac->states * ac->columns;
    if (e == cudaSuccess && ac->states < 0x8000u) {
        const uint32_t *delta = (const uint32_t *)(ac->section + ac->delta_off);
        uint16_t *host = (uint16_t *)malloc(words * sizeof *host + 2);
        if (host) {
            for (size_t i = 0; i < words; i++)
                host[i] = (uint16_t)((delta[i] & TARGET_MASK) / ac->columns | (delta[i] & OUT_FLAG ? 0x8000u : 0));
            host[words] = 0;
            e = cudaMalloc(&t->compact, words * sizeof *host + 2);
            if (e == cudaSuccess) e = cudaMemcpy(t->compact, host, words * sizeof *host + 2, cudaMemcpyHostToDevice);
            free(host);
        }
    }
    const char *choice = getenv("SEQMATCH_CUDA_TABLE");
    t->prefer_wide = choice && strcmp(choice, "32") == 0;
    if (e != cudaSuccess) {
        sm_cuda_tables_close(t);
        return fail(msg, "copying the automaton to the device", e);
    }
    *out = t;
    return 0;
}

extern "C" void sm_cuda_tables_close(sm_cuda_tables *t) {
    if (!t) return;
    cudaSetDevice(t->device);
    cudaFree(t->section);
    cudaFree(t->lengths);
    cudaFree(t->compact);
    free(t);
}

/* Hit buffers start at this many entries and double when a batch overflows. */
#define FIRST_HIT_CAP (1u << 20)

extern "C" int sm_cuda_slot_open(sm_cuda_tables *t, size_t text_cap, size_t chunk_cap, int count_only,
                                 sm_cuda_slot **out, char *msg) {
    *out = NULL;
    CHECK(cudaSetDevice(t->device), "selecting the device");
    sm_cuda_slot *s = (sm_cuda_slot *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    s->t = t;
    s->count_only = count_only;
    s->text_cap = text_cap;
    s->chunk_cap = chunk_cap;
    s->hit_cap = count_only ? 0 : FIRST_HIT_CAP;
    /* The kernel reads whole 16-byte words: pad the text. */
    size_t text_bytes = (text_cap + 15) / 16 * 16 + 16;
    cudaError_t e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaMallocHost(&s->host_text, text_bytes);
    if (e == cudaSuccess) e = cudaMalloc(&s->dev_text, text_bytes);
    if (e == cudaSuccess) e = cudaMallocHost(&s->host_chunks, chunk_cap * sizeof(sm_cuda_chunk));
    if (e == cudaSuccess) e = cudaMalloc(&s->dev_chunks, chunk_cap * sizeof(sm_cuda_chunk));
    if (e == cudaSuccess) e = cudaMallocHost(&s->host_nhits, sizeof(unsigned long long));
    if (e == cudaSuccess) e = cudaMalloc(&s->dev_nhits, sizeof(unsigned long long));
    if (count_only) {
        size_t pc = t->pattern_count ? t->pattern_count : 1;
        if (e == cudaSuccess) e = cudaMallocHost(&s->host_visits, t->states * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaMalloc(&s->dev_visits, t->states * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaMallocHost(&s->host_tail, pc * sizeof(unsigned long long));
        if (e == cudaSuccess) e = cudaMalloc(&s->dev_tail, pc * sizeof(unsigned long long));
    } else {
        if (e == cudaSuccess) e = cudaMallocHost(&s->host_hits, s->hit_cap * sizeof(sm_cuda_hit));
        if (e == cudaSuccess) e = cudaMalloc(&s->dev_hits, s->hit_cap * sizeof(sm_cuda_hit));
    }
    if (e == cudaSuccess) e = cudaMemset(s->dev_text, 0, text_bytes);
    if (e != cudaSuccess) {
        sm_cuda_slot_close(s);
        return fail(msg, "allocating batch buffers", e);
    }
    memset(s->host_text, 0, text_bytes);
    *out = s;
    return 0;
}

extern "C" void sm_cuda_slot_close(sm_cuda_slot *s) {
    if (!s) return;
    cudaSetDevice(s->t->device);
    if (s->stream) cudaStreamSynchronize(s->stream);
    cudaFreeHost(s->host_text);
    cudaFree(s->dev_text);
    cudaFreeHost(s->host_chunks);
    cudaFree(s->dev_chunks);
    cudaFreeHost(s->host_hits);
    cudaFree(s->dev_hits);
    cudaFreeHost(s->host_nhits);
    cudaFree(s->dev_nhits);
    cudaFreeHost(s->host_visits);
    cudaFree(s->dev_visits);
    cudaFreeHost(s->host_tail);
    cudaFree(s->dev_tail);
    if (s->stream) cudaStreamDestroy(s->stream);
    free(s);
}

extern "C" uint8_t *sm_cuda_slot_text(sm_cuda_slot *s) { return s->host_text; }
extern "C" sm_cuda_chunk *sm_cuda_slot_chunks(sm_cuda_slot *s) { return s->host_chunks; }

extern "C" size_t sm_cuda_tables_parallelism(const sm_cuda_tables *t) { return (size_t)t->sms * 2048u; }

static size_t delta_bytes(const sm_cuda_tables *t) { return (size_t)t->states * t->columns * sizeof(uint32_t); }

/* Queues the kernel for the slot's current batch on its stream. */
static int queue_kernel(sm_cuda_slot *s, char *msg) {
    const sm_cuda_tables *t = s->t;
    kernel_args a;
    a.text = s->dev_text;
    a.chunks = s->dev_chunks;
    a.nchunks = (uint32_t)s->nchunks;
    a.delta = (const uint32_t *)(t->section + t->delta_off);
    a.out_index = (const uint32_t *)(t->section + t->out_index_off);
    a.out_list = (const uint32_t *)(t->section + t->out_list_off);
    a.lengths = t->lengths;
    a.columns = t->columns;
    a.delta_words = t->states * t->columns;
    a.hits = s->dev_hits;
    a.hit_cap = s->hit_cap;
    a.nhits = s->dev_nhits;
    a.visits = s->dev_visits;
    a.tail = s->dev_tail;
    const uint16_t *class_of = (const uint16_t *)(t->section + t->class_of_off);
    if (!s->nchunks) return 0;
    a.compact = t->compact;
    /* The 16-bit table in shared memory when there is one and it fits, else
       the 32-bit one when it fits, else the table stays in global memory. */
    size_t wide = delta_bytes(t), narrow = (size_t)a.delta_words * 2 + 2;
    void (*kernel)(kernel_args, const uint16_t *);
    size_t shared = 0;
    if (t->compact && narrow <= t->shared_limit && !(t->prefer_wide && wide <= t->shared_limit)) {
        kernel = s->count_only ? scan_kernel<TABLE_SHARED16, true> : scan_kernel<TABLE_SHARED16, false>;
        shared = narrow;
    } else if (wide <= t->shared_limit) {
        kernel = s->count_only ? scan_kernel<TABLE_SHARED, true> : scan_kernel<TABLE_SHARED, false>;
        shared = wide;
    } else {
        kernel = s->count_only ? scan_kernel<TABLE_GLOBAL, true> : scan_kernel<TABLE_GLOBAL, false>;
    }
    int per_sm = 1;
    if (shared) {
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
              "raising the kernel's shared memory");
    }
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK_THREADS, shared),
          "sizing the grid");
    if (per_sm < 1) per_sm = 1;
    size_t blocks = (size_t)t->sms * (size_t)per_sm;
    size_t needed = (s->nchunks + BLOCK_THREADS - 1) / BLOCK_THREADS;
    if (blocks > needed) blocks = needed;
    kernel<<<(unsigned)blocks, BLOCK_THREADS, shared, s->stream>>>(a, class_of);
    CHECK(cudaGetLastError(), "starting the kernel");
    return 0;
}

extern "C" int sm_cuda_slot_launch(sm_cuda_slot *s, size_t len, size_t nchunks, char *msg) {
    CHECK(cudaSetDevice(s->t->device), "selecting the device");
    s->len = len;
    s->nchunks = nchunks;
    cudaStream_t st = s->stream;
    /* Whole 16-byte words, so that the kernel's last reads see copied bytes. */
    size_t copy = (len + 15) / 16 * 16;
    CHECK(cudaMemcpyAsync(s->dev_text, s->host_text, copy, cudaMemcpyHostToDevice, st), "copying text");
    CHECK(cudaMemcpyAsync(s->dev_chunks, s->host_chunks, nchunks * sizeof(sm_cuda_chunk), cudaMemcpyHostToDevice,
                          st),
          "copying chunks");
    CHECK(cudaMemsetAsync(s->dev_nhits, 0, sizeof(unsigned long long), st), "clearing the hit count");
    if (s->count_only) {
        CHECK(cudaMemsetAsync(s->dev_visits, 0, s->t->states * sizeof(uint32_t), st), "clearing visits");
        CHECK(cudaMemsetAsync(s->dev_tail, 0, (s->t->pattern_count ? s->t->pattern_count : 1) * 8, st),
              "clearing counts");
    }
    if (queue_kernel(s, msg) != 0) return -1;
    if (s->count_only) {
        CHECK(cudaMemcpyAsync(s->host_visits, s->dev_visits, s->t->states * sizeof(uint32_t),
                              cudaMemcpyDeviceToHost, st),
              "copying visits back");
        CHECK(cudaMemcpyAsync(s->host_tail, s->dev_tail, (s->t->pattern_count ? s->t->pattern_count : 1) * 8,
                              cudaMemcpyDeviceToHost, st),
              "copying counts back");
    } else {
        CHECK(cudaMemcpyAsync(s->host_nhits, s->dev_nhits, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
              "copying the hit count back");
    }
    return 0;
}

extern "C" int sm_cuda_slot_wait(sm_cuda_slot *s, sm_cuda_result *r, char *msg) {
    CHECK(cudaSetDevice(s->t->device), "selecting the device");
    CHECK(cudaStreamSynchronize(s->stream), "scanning a batch");
    memset(r, 0, sizeof *r);
    if (s->count_only) {
        r->visits = s->host_visits;
        r->tail_counts = (uint64_t *)s->host_tail;
        return 0;
    }
    size_t n = (size_t)*s->host_nhits;
    if (n > s->hit_cap) {
        /* More hits than room: grow both buffers and scan the batch again
           (its text and chunks are still on the device). */
        size_t cap = s->hit_cap;
        while (cap < n) cap *= 2;
        cudaFreeHost(s->host_hits);
        cudaFree(s->dev_hits);
        s->host_hits = NULL;
        s->dev_hits = NULL;
        s->hit_cap = 0;
        CHECK(cudaMallocHost(&s->host_hits, cap * sizeof(sm_cuda_hit)), "growing the hit buffer");
        CHECK(cudaMalloc(&s->dev_hits, cap * sizeof(sm_cuda_hit)), "growing the hit buffer");
        s->hit_cap = cap;
        CHECK(cudaMemsetAsync(s->dev_nhits, 0, sizeof(unsigned long long), s->stream), "clearing the hit count");
        if (queue_kernel(s, msg) != 0) return -1;
        CHECK(cudaStreamSynchronize(s->stream), "scanning a batch again");
    }
    if (n) {
        CHECK(cudaMemcpyAsync(s->host_hits, s->dev_hits, n * sizeof(sm_cuda_hit), cudaMemcpyDeviceToHost, s->stream),
              "copying hits back");
        CHECK(cudaStreamSynchronize(s->stream), "copying hits back");
    }
    r->hits = s->host_hits;
    r->nhits = n;
    return 0;
}

static int compare_floats(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

extern "C" int sm_cuda_slot_time_scan(sm_cuda_slot *s, int repeats, double *ms, char *msg) {
    CHECK(cudaSetDevice(s->t->device), "selecting the device");
    if (repeats < 1) repeats = 1;
    float *times = (float *)calloc((size_t)repeats, sizeof *times);
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start), "creating an event");
    CHECK(cudaEventCreate(&stop), "creating an event");
    for (int r = 0; r < repeats; r++) {
        /* The hit buffer is large enough after the first scan: nothing overflows. */
        CHECK(cudaMemsetAsync(s->dev_nhits, 0, sizeof(unsigned long long), s->stream), "clearing the hit count");
        CHECK(cudaEventRecord(start, s->stream), "recording an event");
        if (queue_kernel(s, msg) != 0) return -1;
        CHECK(cudaEventRecord(stop, s->stream), "recording an event");
        CHECK(cudaEventSynchronize(stop), "timing a scan");
        CHECK(cudaEventElapsedTime(&times[r], start, stop), "reading an event");
    }
    qsort(times, (size_t)repeats, sizeof *times, compare_floats);
    *ms = times[repeats / 2];
    free(times);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return 0;
}
