/* The CUDA side of the GPU runner: a database's sections on a device, the
 * batch buffers and streams, and the launch of every section's kernel (in
 * its engine's folder, registered under its section kind) over a batch. Count mode
 * folds each engine's visit counters into per-pattern counts on the device,
 * so a batch returns one count per pattern; hit mode returns hits, and a hit
 * buffer that overflows is grown and the batch, still on the device,
 * scanned again (every kernel counts the hits it could not store).
 */
#include <cuda_runtime.h>
#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"
#include "engines/cuda_engine.cuh"

struct sm_cuda_tables {
    int device;
    int sms;
    size_t shared_limit;     /* bytes of shared memory one block may have */
    uint32_t *lengths;       /* pattern lengths */
    uint32_t pattern_count, tail, reach;
    sm_cuda_gpu_section *sections;
    const sm_cuda_engine **engines;
    uint32_t nsections;
    int warp_chunks;         /* some kernel takes a chunk per warp */
};

struct sm_cuda_slot {
    sm_cuda_tables *t;
    cudaStream_t stream;
    int count_only;
    size_t text_cap, chunk_cap, hit_cap;
    size_t text_bytes;       /* what host_text and dev_text hold now (0: not yet allocated) */
    uint8_t *host_text, *dev_text;
    sm_gpu_chunk *host_chunks, *dev_chunks;
    sm_gpu_hit *host_hits, *dev_hits;
    unsigned long long *host_nhits, *dev_nhits;
    unsigned long long *host_counts, *dev_counts; /* count mode: per pattern */
    uint32_t **dev_visits;   /* count mode: per section, or NULL */
    size_t len, nchunks, chunk_len;
    size_t longest_chunk, chunk_max; /* the batch's chunks, measured once (scanned again, timed) */
};

int sm_cuda_fail(char *msg, const char *what, cudaError_t e) {
    snprintf(msg, 256, "CUDA: %s: %s", what, cudaGetErrorString(e));
    return -1;
}
#define CHECK SM_CUDA_CHECK

/* ------------------------------------------------------- kept buffers */

/* Batch buffers are kept for reuse, not freed: pinned host memory costs
   its size in time to make (about 0.7 s a GiB on an H200's host), cudaFree
   waits for the whole device, and both hold the driver's lock while every
   other thread waits to queue its copies. With a runner per reader (several
   readers in one process) the readers that opened or closed runners stalled
   the others' batches. Sizes are rounded up so that like requests share
   blocks; what is kept is bounded, and past that buffers are freed. */
#define KEEP_LIMIT ((size_t)1 << 30) /* bytes kept of each kind: host, each device */
#define KEEP_PLACES 65               /* host, devices 0-63 */

typedef struct kept_buffer {
    struct kept_buffer *next;
    void *p;
    size_t size;
    int where; /* -1: pinned host memory; else a device */
} kept_buffer;

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_buffer *kept_list;
static size_t kept_bytes[KEEP_PLACES];

static size_t kept_size(size_t n) { return n <= 4096 ? 4096 : (n + 65535) / 65536 * 65536; }
static size_t *kept_total(int where) { return &kept_bytes[where < 0 ? 0 : 1 + (where < 63 ? where : 63)]; }

/* At least n bytes of pinned host memory (where < 0) or of device where,
   which is the current device. */
cudaError_t sm_cuda_buffer_get(int where, size_t n, void **p) {
    size_t size = kept_size(n);
    pthread_mutex_lock(&kept_lock);
    for (kept_buffer **k = &kept_list; *k; k = &(*k)->next) {
        if ((*k)->where != where || (*k)->size != size) continue;
        kept_buffer *x = *k;
        *k = x->next;
        *kept_total(where) -= size;
        pthread_mutex_unlock(&kept_lock);
        *p = x->p;
        free(x);
        return cudaSuccess;
    }
    pthread_mutex_unlock(&kept_lock);
    *p = NULL;
    return where < 0 ? cudaMallocHost(p, size) : cudaMalloc(p, size);
}

/* Gives back what sm_cuda_buffer_get(where, n) gave (NULL: nothing); a device's
   buffer with that device current. */
void sm_cuda_buffer_put(int where, void *p, size_t n) {
    if (!p) return;
    size_t size = kept_size(n);
    kept_buffer *x = (kept_buffer *)malloc(sizeof *x);
    pthread_mutex_lock(&kept_lock);
    if (x && *kept_total(where) + size <= KEEP_LIMIT) {
        *x = (kept_buffer){kept_list, p, size, where};
        kept_list = x;
        *kept_total(where) += size;
        x = NULL;
        p = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
    free(x);
    if (where < 0) cudaFreeHost(p);
    else if (p) cudaFree(p);
}

/* What sm_cuda_slot_text asks for a batch buffer of bytes: whole 16-byte
   words (the kernels read them) and one more. */
static size_t text_bytes_for(size_t bytes) { return (bytes + 15) / 16 * 16 + 16; }

int sm_cuda_grid_threads(const void *kernel, size_t shared, size_t items, unsigned per_item, unsigned threads, int sms,
                         unsigned *blocks, char *msg) {
    int per_sm = 1;
    /* beyond 48 KB with the kernel's static shared memory counted in, a
       block must opt in */
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, kernel), "reading a kernel's attributes");
    if (shared + fa.sharedSizeBytes > 48 * 1024)
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
              "raising a kernel's shared memory");
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)threads, shared), "sizing the grid");
    if (per_sm < 1) per_sm = 1;
    size_t most = (size_t)sms * (size_t)per_sm;
    size_t needed = (items * per_item + threads - 1) / threads;
    if (needed < 1) needed = 1;
    *blocks = (unsigned)(most < needed ? most : needed);
    return 0;
}

int sm_cuda_grid(const void *kernel, size_t shared, size_t items, unsigned per_item, int sms, unsigned *blocks,
                 char *msg) {
    return sm_cuda_grid_threads(kernel, shared, items, per_item, SM_CUDA_BLOCK, sms, blocks, msg);
}

/* counts[pattern] += visits[code] for every output of every code. */
__global__ void fold_kernel(const uint32_t *visits, uint32_t n, const uint32_t *out_index, const uint32_t *out_list,
                            unsigned long long *counts) {
    for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < n; c += gridDim.x * blockDim.x) {
        uint32_t v = visits[c];
        if (!v) continue;
        for (uint32_t o = out_index[c]; o < out_index[c + 1]; o++) atomicAdd(&counts[out_list[o] >> 1], (unsigned long long)v);
    }
}

/* The kernels of the module, registered by their files as it loads. */
static sm_cuda_engine *registry;

void sm_cuda_register(sm_cuda_engine *e) {
    e->next = registry;
    registry = e;
}

static const sm_cuda_engine *engine_for(uint32_t kind) {
    for (const sm_cuda_engine *e = registry; e; e = e->next)
        if (e->kind == kind) return e;
    return NULL;
}

static sm_cuda_builder *builders;

void sm_cuda_register_builder(sm_cuda_builder *b) {
    b->next = builders;
    builders = b;
}

extern "C" int sm_cuda_section_build(uint32_t kind, int device, const void *input, double ms[3], char *msg) {
    for (const sm_cuda_builder *b = builders; b; b = b->next)
        if (b->kind == kind) return b->build(device, input, ms, msg);
    snprintf(msg, 256, "no GPU builder for sections of kind %u", kind);
    return -1;
}

extern "C" int sm_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no driver" error */
        return 0;
    }
    return n;
}

/* The driver starts with the first call above; a device's primary context
   (which every later call on it shares) with the first call that needs it.
   Contexts of several devices start at once, a thread each: one after
   another their starts add up. */
static void *start_context(void *arg) {
    int *d = (int *)arg;
    *d = cudaSetDevice(*d) == cudaSuccess && cudaFree(0) == cudaSuccess;
    return NULL;
}

extern "C" int sm_cuda_prepare(int device) {
    int n = sm_cuda_device_count();
    if (device >= n) return 0;
    int from = device < 0 ? 0 : device, to = device < 0 ? n : device + 1;
    if (to - from > 64) to = from + 64;
    if (to <= from) return 0;
    int ok[64];
    pthread_t threads[64];
    int started[64] = {0};
    for (int d = from; d < to; d++) {
        ok[d - from] = d;
        if (d > from) started[d - from] = pthread_create(&threads[d - from], NULL, start_context, &ok[d - from]) == 0;
    }
    start_context(&ok[0]);
    int count = ok[0];
    for (int d = from + 1; d < to; d++) {
        if (started[d - from]) pthread_join(threads[d - from], NULL);
        else start_context(&ok[d - from]);
        count += ok[d - from];
    }
    cudaGetLastError();
    return count;
}

extern "C" int sm_cuda_reserve(int device, size_t batch_bytes, unsigned count) {
    if (device < 0 || device >= sm_cuda_device_count()) return -1;
    if (count == 0) return 0;
    if (cudaSetDevice(device) != cudaSuccess) return -1;
    /* a slot's text buffer, as sm_cuda_slot_text asks for it (the runner's
       slack for direct writers past the batch included) */
    size_t bytes = text_bytes_for(batch_bytes + SM_CUDA_TEXT_SLACK);
    /* no more than can be kept: made and freed again, they would cost twice */
    if ((size_t)count > KEEP_LIMIT / kept_size(bytes)) count = (unsigned)(KEEP_LIMIT / kept_size(bytes));
    if (count == 0) return 0;
    void **host = (void **)calloc(count, sizeof *host), **dev = (void **)calloc(count, sizeof *dev);
    int rc = host && dev ? 0 : -1;
    /* taken all at once (so that kept ones count), then given back to be kept */
    for (unsigned i = 0; i < count && rc == 0; i++)
        if (sm_cuda_buffer_get(-1, bytes, &host[i]) != cudaSuccess || sm_cuda_buffer_get(device, bytes, &dev[i]) != cudaSuccess) rc = -1;
    for (unsigned i = 0; host && dev && i < count; i++) {
        sm_cuda_buffer_put(-1, host[i], bytes);
        sm_cuda_buffer_put(device, dev[i], bytes);
    }
    free(host);
    free(dev);
    cudaGetLastError();
    return rc;
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

extern "C" void sm_cuda_tables_close(sm_cuda_tables *t) {
    if (!t) return;
    cudaSetDevice(t->device);
    for (uint32_t i = 0; i < t->nsections; i++) {
        if (t->engines && t->engines[i] && t->engines[i]->release) t->engines[i]->release(&t->sections[i]);
        cudaFree(t->sections[i].dev);
        cudaFree(t->sections[i].extra);
    }
    cudaFree(t->lengths);
    free(t->sections);
    free(t->engines);
    free(t);
}

extern "C" int sm_cuda_tables_open(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg) {
    *out = NULL;
    CHECK(cudaSetDevice(device), "selecting the device");
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, device), "reading the device's properties");
    sm_cuda_tables *t = (sm_cuda_tables *)calloc(1, sizeof *t);
    if (t) t->sections = (sm_cuda_gpu_section *)calloc(db->nsections ? db->nsections : 1, sizeof *t->sections);
    if (t) t->engines = (const sm_cuda_engine **)calloc(db->nsections ? db->nsections : 1, sizeof *t->engines);
    if (!t || !t->sections || !t->engines) {
        if (t) free(t->sections);
        free(t);
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    t->device = device;
    t->sms = p.multiProcessorCount;
    t->shared_limit = p.sharedMemPerBlockOptin;
    t->pattern_count = db->pattern_count;
    t->tail = db->longest ? db->longest - 1 : 0;
    t->reach = db->reach;
    t->nsections = db->nsections;
    size_t npat = db->pattern_count ? db->pattern_count : 1;
    cudaError_t e = cudaMalloc(&t->lengths, npat * sizeof(uint32_t));
    if (e == cudaSuccess && db->pattern_count)
        e = cudaMemcpy(t->lengths, db->lengths, db->pattern_count * sizeof(uint32_t), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        sm_cuda_tables_close(t);
        return sm_cuda_fail(msg, "copying the pattern lengths to the device", e);
    }
    for (uint32_t i = 0; i < db->nsections; i++) {
        const sm_cuda_section *h = &db->sections[i];
        const sm_cuda_engine *eng = engine_for(h->view.kind);
        if (!eng) {
            snprintf(msg, 256, "no GPU kernel scans sections of kind %u", h->view.kind);
            sm_cuda_tables_close(t);
            return -1;
        }
        sm_cuda_gpu_section *s = &t->sections[i];
        s->view = h->view;
        s->index = i;
        s->size = h->size;
        e = cudaMalloc(&s->dev, h->size ? h->size : 1);
        if (e == cudaSuccess) e = cudaMemcpy(s->dev, h->bytes, h->size, cudaMemcpyHostToDevice);
        if (e == cudaSuccess && h->extra_size) e = cudaMalloc(&s->extra, h->extra_size);
        if (e == cudaSuccess && h->extra_size) e = cudaMemcpy(s->extra, h->extra, h->extra_size, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            sm_cuda_tables_close(t);
            return sm_cuda_fail(msg, "copying a section to the device", e);
        }
        if (eng->prepare && eng->prepare(s, h, msg) != 0) {
            sm_cuda_tables_close(t);
            return -1;
        }
        t->engines[i] = eng;
        t->warp_chunks |= (h->view.flags & SM_GPU_WARP_CHUNKS) != 0;
    }
    /* The copies above ran on the legacy stream, which the slots' non-blocking
       streams do not wait for: a busy GPU (another process on it) could start
       a batch's kernels before the tables had landed. */
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        sm_cuda_tables_close(t);
        return sm_cuda_fail(msg, "copying the database to the device", e);
    }
    *out = t;
    return 0;
}

static size_t resident_threads(const sm_cuda_tables *t) { return (size_t)t->sms * 2048u; }

extern "C" size_t sm_cuda_tables_chunk(const sm_cuda_tables *t, size_t text_cap, size_t tail) {
    return sm_gpu_chunk_for(resident_threads(t), t->warp_chunks, text_cap, tail);
}

/* Hit buffers start at this many entries and double when a batch overflows,
   up to MAX_HIT_CAP: a batch with more hits than that comes back marked
   overflowed, and the runner finds its hits on the host in pieces (memory
   stays bounded whatever the hit density). */
#define FIRST_HIT_CAP (1u << 16)
#define MAX_HIT_CAP (1u << 22)

extern "C" void sm_cuda_slot_close(sm_cuda_slot *s) {
    if (!s) return;
    cudaSetDevice(s->t->device);
    if (s->stream) cudaStreamSynchronize(s->stream);
    int d = s->t->device;
    size_t chunks = (s->chunk_cap ? s->chunk_cap : 1) * sizeof(sm_gpu_chunk);
    size_t counts = (s->t->pattern_count ? s->t->pattern_count : 1) * sizeof(unsigned long long);
    sm_cuda_buffer_put(-1, s->host_text, s->text_bytes);
    sm_cuda_buffer_put(d, s->dev_text, s->text_bytes);
    sm_cuda_buffer_put(-1, s->host_chunks, chunks);
    sm_cuda_buffer_put(d, s->dev_chunks, chunks);
    sm_cuda_buffer_put(-1, s->host_hits, s->hit_cap * sizeof(sm_gpu_hit));
    sm_cuda_buffer_put(d, s->dev_hits, s->hit_cap * sizeof(sm_gpu_hit));
    sm_cuda_buffer_put(-1, s->host_nhits, sizeof(unsigned long long));
    sm_cuda_buffer_put(d, s->dev_nhits, sizeof(unsigned long long));
    sm_cuda_buffer_put(-1, s->host_counts, counts);
    sm_cuda_buffer_put(d, s->dev_counts, counts);
    if (s->dev_visits)
        for (uint32_t i = 0; i < s->t->nsections; i++)
            sm_cuda_buffer_put(d, s->dev_visits[i], s->t->sections[i].view.visits * sizeof(uint32_t));
    free(s->dev_visits);
    if (s->stream) cudaStreamDestroy(s->stream);
    free(s);
}

extern "C" int sm_cuda_slot_open(sm_cuda_tables *t, size_t text_cap, size_t chunk_cap, int count_only,
                                 sm_cuda_slot **out, char *msg) {
    *out = NULL;
    CHECK(cudaSetDevice(t->device), "selecting the device");
    sm_cuda_slot *s = (sm_cuda_slot *)calloc(1, sizeof *s);
    if (s) s->dev_visits = (uint32_t **)calloc(t->nsections ? t->nsections : 1, sizeof *s->dev_visits);
    if (!s || !s->dev_visits) {
        free(s);
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    s->t = t;
    s->count_only = count_only;
    s->text_cap = text_cap;
    s->chunk_cap = chunk_cap;
    s->hit_cap = count_only ? 0 : FIRST_HIT_CAP;
    size_t npat = t->pattern_count ? t->pattern_count : 1;
    int d = t->device;
    size_t chunks = (chunk_cap ? chunk_cap : 1) * sizeof(sm_gpu_chunk);
    cudaError_t e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = sm_cuda_buffer_get(-1, chunks, (void **)&s->host_chunks);
    if (e == cudaSuccess) e = sm_cuda_buffer_get(d, chunks, (void **)&s->dev_chunks);
    if (e == cudaSuccess) e = sm_cuda_buffer_get(-1, sizeof(unsigned long long), (void **)&s->host_nhits);
    if (e == cudaSuccess) e = sm_cuda_buffer_get(d, sizeof(unsigned long long), (void **)&s->dev_nhits);
    if (count_only) {
        if (e == cudaSuccess) e = sm_cuda_buffer_get(-1, npat * sizeof(unsigned long long), (void **)&s->host_counts);
        if (e == cudaSuccess) e = sm_cuda_buffer_get(d, npat * sizeof(unsigned long long), (void **)&s->dev_counts);
        for (uint32_t i = 0; i < t->nsections && e == cudaSuccess; i++)
            if (t->sections[i].view.visits)
                e = sm_cuda_buffer_get(d, t->sections[i].view.visits * sizeof(uint32_t), (void **)&s->dev_visits[i]);
    } else {
        if (e == cudaSuccess) e = sm_cuda_buffer_get(-1, s->hit_cap * sizeof(sm_gpu_hit), (void **)&s->host_hits);
        if (e == cudaSuccess) e = sm_cuda_buffer_get(d, s->hit_cap * sizeof(sm_gpu_hit), (void **)&s->dev_hits);
    }
    if (e != cudaSuccess) {
        sm_cuda_slot_close(s);
        return sm_cuda_fail(msg, "allocating batch buffers", e);
    }
    s->chunk_len = 0;
    *out = s;
    return 0;
}

/* The text buffers are allocated when first asked for and grown on request:
   pinned memory costs its size in time at allocation (a short search should
   not pay for 64 MiB batches it never fills). */
extern "C" uint8_t *sm_cuda_slot_text(sm_cuda_slot *s, size_t bytes, char *msg) {
    if (bytes > s->text_cap) bytes = s->text_cap;
    /* Kernels read whole 16-byte words, warps whole tiles of 512 bytes
       (lanes past the end load nothing): pad to a word and one more. */
    size_t want = text_bytes_for(bytes);
    if (want <= s->text_bytes) return s->host_text;
    if (cudaSetDevice(s->t->device) != cudaSuccess) {
        sm_cuda_fail(msg, "selecting the device", cudaGetLastError());
        return NULL;
    }
    uint8_t *host = NULL, *dev = NULL;
    int d = s->t->device;
    cudaError_t e = sm_cuda_buffer_get(-1, want, (void **)&host);
    if (e == cudaSuccess) e = sm_cuda_buffer_get(d, want, (void **)&dev);
    /* on the slot's own stream, then waited for: a memset on the legacy
       stream is not ordered before the slot's first copy of text (under load
       it zeroed the first batch after it had landed) */
    if (e == cudaSuccess) e = cudaMemsetAsync(dev, 0, want, s->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess) {
        sm_cuda_buffer_put(-1, host, want);
        sm_cuda_buffer_put(d, dev, want);
        sm_cuda_fail(msg, "allocating a batch buffer", e);
        return NULL;
    }
    /* the bytes written so far go on in the larger buffer */
    if (s->text_bytes) memcpy(host, s->host_text, s->text_bytes);
    memset(host + s->text_bytes, 0, want - s->text_bytes);
    sm_cuda_buffer_put(-1, s->host_text, s->text_bytes);
    sm_cuda_buffer_put(d, s->dev_text, s->text_bytes);
    s->host_text = host;
    s->dev_text = dev;
    s->text_bytes = want;
    return host;
}
extern "C" sm_gpu_chunk *sm_cuda_slot_chunks(sm_cuda_slot *s) { return s->host_chunks; }

/* Queues every section's kernel for the slot's current batch, and in count
   mode the folds of their visit counters. */
static int queue_kernels(sm_cuda_slot *s, char *msg) {
    const sm_cuda_tables *t = s->t;
    if (!s->nchunks) return 0;
    /* Kernels of a chunk per thread cut each chunk into parts of about a
       thread's chunk, so that mixed databases keep every thread busy. */
    uint32_t parts = sm_gpu_parts(resident_threads(t), t->warp_chunks, s->text_cap, t->tail, s->longest_chunk);
    const size_t chunk_max = s->chunk_max;
    for (uint32_t i = 0; i < t->nsections; i++) {
        const sm_cuda_gpu_section *sec = &t->sections[i];
        sm_cuda_launch l;
        memset(&l, 0, sizeof l);
        l.args.text = s->dev_text;
        l.args.chunks = s->dev_chunks;
        l.args.nchunks = (uint32_t)s->nchunks;
        l.args.section_index = sec->index;
        l.args.section = sec->dev;
        l.args.lengths = t->lengths;
        l.args.count_only = s->count_only;
        l.args.hits = s->dev_hits;
        l.args.hit_cap = s->hit_cap;
        l.args.nhits = s->dev_nhits;
        l.args.counts = s->dev_counts;
        l.args.visits = s->dev_visits[i];
        l.args.tail = t->tail;
        l.args.reach = t->reach;
        l.args.extra = sec->extra;
        l.args.parts = sec->view.flags & SM_GPU_WARP_CHUNKS ? 1 : parts;
        l.args.chunk_max = (uint32_t)chunk_max;
        l.args.view = sec->view;
        l.section = sec;
        l.sms = t->sms;
        l.shared_limit = t->shared_limit;
        l.stream = s->stream;
        if (t->engines[i]->launch(&l, msg) != 0) return -1;
        CHECK(cudaGetLastError(), "starting a kernel");
        if (s->count_only && sec->view.visits) {
            unsigned blocks = (unsigned)((sec->view.visits + 255) / 256);
            if (blocks > (unsigned)t->sms * 8u) blocks = (unsigned)t->sms * 8u;
            fold_kernel<<<blocks, 256, 0, s->stream>>>(s->dev_visits[i], sec->view.visits,
                                                      (const uint32_t *)(sec->dev + sec->view.fold_index_off),
                                                      (const uint32_t *)(sec->dev + sec->view.fold_list_off),
                                                      s->dev_counts);
            CHECK(cudaGetLastError(), "starting the fold");
        }
    }
    return 0;
}

/* Zeroes the counters of a batch (count mode) or its hit count. */
static int clear_results(sm_cuda_slot *s, char *msg) {
    const sm_cuda_tables *t = s->t;
    CHECK(cudaMemsetAsync(s->dev_nhits, 0, sizeof(unsigned long long), s->stream), "clearing the hit count");
    if (!s->count_only) return 0;
    CHECK(cudaMemsetAsync(s->dev_counts, 0, (t->pattern_count ? t->pattern_count : 1) * 8, s->stream),
          "clearing counts");
    for (uint32_t i = 0; i < t->nsections; i++)
        if (t->sections[i].view.visits)
            CHECK(cudaMemsetAsync(s->dev_visits[i], 0, t->sections[i].view.visits * sizeof(uint32_t), s->stream),
                  "clearing visit counters");
    return 0;
}

extern "C" int sm_cuda_slot_launch(sm_cuda_slot *s, size_t len, size_t nchunks, char *msg) {
    CHECK(cudaSetDevice(s->t->device), "selecting the device");
    s->len = len;
    s->nchunks = nchunks;
    /* once a batch: a host loop over its chunks (about 0.3 ms for a full
       batch's 270,000) is not redone where the batch is scanned again */
    s->longest_chunk = s->chunk_max = 0;
    for (size_t i = 0; i < nchunks; i++) {
        size_t l = s->host_chunks[i].c1 - s->host_chunks[i].c0;
        if (i < 64 && l > s->longest_chunk) s->longest_chunk = l;
        if (l > s->chunk_max) s->chunk_max = l;
    }
    cudaStream_t st = s->stream;
    /* Whole 16-byte words, so that the kernels' last reads see copied bytes. */
    size_t copy = (len + 15) / 16 * 16;
    CHECK(cudaMemcpyAsync(s->dev_text, s->host_text, copy, cudaMemcpyHostToDevice, st), "copying text");
    CHECK(cudaMemcpyAsync(s->dev_chunks, s->host_chunks, nchunks * sizeof(sm_gpu_chunk), cudaMemcpyHostToDevice,
                          st),
          "copying chunks");
    if (clear_results(s, msg) != 0 || queue_kernels(s, msg) != 0) return -1;
    if (s->count_only)
        CHECK(cudaMemcpyAsync(s->host_counts, s->dev_counts, (s->t->pattern_count ? s->t->pattern_count : 1) * 8,
                              cudaMemcpyDeviceToHost, st),
              "copying counts back");
    else
        CHECK(cudaMemcpyAsync(s->host_nhits, s->dev_nhits, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
              "copying the hit count back");
    return 0;
}

extern "C" int sm_cuda_slot_wait(sm_cuda_slot *s, sm_cuda_result *r, char *msg) {
    CHECK(cudaSetDevice(s->t->device), "selecting the device");
    CHECK(cudaStreamSynchronize(s->stream), "scanning a batch");
    memset(r, 0, sizeof *r);
    if (s->count_only) {
        r->counts = s->host_counts;
        return 0;
    }
    size_t n = (size_t)*s->host_nhits;
    if (n > MAX_HIT_CAP) {
        r->overflow = 1;
        return 0;
    }
    if (n > s->hit_cap) {
        /* More hits than room: grow both buffers and scan the batch again
           (its text and chunks are still on the device). */
        size_t cap = s->hit_cap;
        while (cap < n) cap *= 2;
        if (cap > MAX_HIT_CAP) cap = MAX_HIT_CAP;
        sm_cuda_buffer_put(-1, s->host_hits, s->hit_cap * sizeof(sm_gpu_hit));
        sm_cuda_buffer_put(s->t->device, s->dev_hits, s->hit_cap * sizeof(sm_gpu_hit));
        s->host_hits = NULL;
        s->dev_hits = NULL;
        s->hit_cap = 0;
        CHECK(sm_cuda_buffer_get(-1, cap * sizeof(sm_gpu_hit), (void **)&s->host_hits), "growing the hit buffer");
        CHECK(sm_cuda_buffer_get(s->t->device, cap * sizeof(sm_gpu_hit), (void **)&s->dev_hits), "growing the hit buffer");
        s->hit_cap = cap;
        if (clear_results(s, msg) != 0 || queue_kernels(s, msg) != 0) return -1;
        CHECK(cudaMemcpyAsync(s->host_nhits, s->dev_nhits, sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                              s->stream),
              "copying the hit count back");
        CHECK(cudaStreamSynchronize(s->stream), "scanning a batch again");
        n = (size_t)*s->host_nhits;
        if (n > s->hit_cap) {
            snprintf(msg, 256, "a batch found %zu hits, then %zu", (size_t)s->hit_cap, n);
            return -1;
        }
    }
    if (n) {
        CHECK(cudaMemcpyAsync(s->host_hits, s->dev_hits, n * sizeof(sm_gpu_hit), cudaMemcpyDeviceToHost, s->stream),
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
    if (!times) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start), "creating an event");
    CHECK(cudaEventCreate(&stop), "creating an event");
    for (int r = 0; r < repeats; r++) {
        /* The hit buffer is large enough after the first scan: nothing overflows. */
        CHECK(cudaEventRecord(start, s->stream), "recording an event");
        if (clear_results(s, msg) != 0 || queue_kernels(s, msg) != 0) return -1;
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
