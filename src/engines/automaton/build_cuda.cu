/* The automaton built on the GPU (build_gpu.h says how): the keys copied
 * once, the nodes numbered by one count and one scan, the steps run, the
 * output lists made, the tables copied into the host's section.
 *
 * The steps run in one cooperative launch when every group of 32 keys fits
 * on the device at once (a warp each): a warp walks its keys' depths and
 * waits only when a row it reads, of depth e, is not complete yet, that is
 * until every warp has ended step e + 1 (each warp publishes the last step
 * it ended). With random long keys the rows read are shallow, so the warps
 * rarely wait on each other, and 9000 levels cost 9000 short steps, not
 * 9000 launches. Larger key sets (many short keys: few levels) take one
 * launch per step. SEQMATCH_AC_GPU_STEPS=launches forces the latter (tests). */
#include <cuda_runtime.h>
#include <pthread.h>
#include <cub/device/device_scan.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engines/cuda_engine.cuh"
#include "engines/automaton/build_gpu.h"

#define WALK_BLOCK 32u

/* Warp-wide maximum and minimum (__reduce_*_sync needs sm_80; the module
   is built from sm_75). The whole warp calls them. */
__device__ __forceinline__ uint32_t warp_max(uint32_t v) {
    for (int o = 16; o > 0; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ uint32_t warp_min(uint32_t v) {
    for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Per group and depth, the nodes its keys make there. */
__global__ void count_kernel(sm_ac_gpu_keys k, uint32_t groups, uint32_t *counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, g = i / SM_AC_GPU_GROUP;
    if (g >= groups) return;
    uint32_t lcp = i < k.nkeys ? k.lcp[i] : 0, len = i < k.nkeys ? k.len[i] : 0;
    uint32_t top = warp_max(len);
    for (uint32_t d = 1; d <= top; d++) {
        uint32_t b = __ballot_sync(0xffffffffu, i < k.nkeys && lcp < d && d <= len);
        if ((threadIdx.x & 31u) == 0) counts[(size_t)d * groups + g] = __popc(b);
    }
}

/* One key's share of step d, its numbers found by ballots (the whole warp
   calls it). fail_previous: fail() * columns of the key's node of depth
   d - 1 when the caller knows it (one launch), else read here. Returns the
   number of the node the key makes (0: none) and its fail() in *made_fail. */
template <bool kKnown>
__device__ __forceinline__ uint32_t key_step(const sm_ac_gpu_keys &k, const sm_ac_gpu_arrays &a, uint32_t i,
                                             uint32_t d, uint32_t lcp, uint32_t len, uint32_t g,
                                             uint32_t fail_previous, uint32_t *made_fail) {
    uint32_t lane = threadIdx.x & 31u, lower = (1u << lane) - 1u;
    bool had = i < k.nkeys && lcp < d - 1 && d - 1 <= len, makes = i < k.nkeys && lcp < d && d <= len;
    uint32_t b_had = __ballot_sync(0xffffffffu, had), b_makes = __ballot_sync(0xffffffffu, makes);
    uint32_t previous = had ? 1 + a.first[(size_t)(d - 1) * a.groups + g] + __popc(b_had & lower) : 0;
    if (!kKnown && had) fail_previous = __ldcg(&a.fail[previous]);
    if (d == 1 && i == 0) sm_ac_gpu_fill(&k, &a, 0, 0);
    if (had) sm_ac_gpu_fill(&k, &a, previous, fail_previous);
    if (!makes) return 0;
    uint32_t n = 1 + a.first[(size_t)d * a.groups + g] + __popc(b_makes & lower);
    uint32_t p = sm_ac_gpu_parent(&k, &a, i, d, previous);
    uint32_t fail_p = had ? fail_previous : p ? __ldcg(&a.fail[p]) : 0u;
    *made_fail = sm_ac_gpu_make(&k, &a, i, d, n, p, fail_p);
    return n;
}

__global__ void step_kernel(sm_ac_gpu_keys k, sm_ac_gpu_arrays a, uint32_t d) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, g = i / SM_AC_GPU_GROUP, made_fail;
    uint32_t lcp = i < k.nkeys ? k.lcp[i] : 0, len = i < k.nkeys ? k.len[i] : 0;
    key_step<false>(k, a, i, d, lcp, len, g, 0, &made_fail);
}

/* The depth of state s > 0: the last depth whose first node is at or before it. */
__device__ uint32_t depth_of(const sm_ac_gpu_keys &k, const sm_ac_gpu_arrays &a, uint32_t s) {
    uint32_t lo = 1, hi = k.max_depth;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (1 + a.first[(size_t)mid * a.groups] <= s) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The last step every group has ended (the whole warp calls it). */
__device__ uint32_t slowest(const volatile uint32_t *ended, uint32_t groups) {
    uint32_t m = 0xffffffffu;
    for (uint32_t j = threadIdx.x & 31u; j < groups; j += 32) m = min(m, ended[j]);
    return warp_min(m);
}

/* Spins before a walk gives up (a stalled build is reported, never hung). */
#define WALK_PATIENCE (1u << 26)

/* Every step in one launch: a warp per group (all resident: a cooperative
   launch), each waiting only for the rows it reads. ended[g]: the last step
   group g has ended (all ones once it has ended them all). stalled: set to
   the step where a wait gave up. */
__global__ void walk_kernel(sm_ac_gpu_keys k, sm_ac_gpu_arrays a, uint32_t *ended_steps, uint32_t *stalled) {
    volatile uint32_t *ended = ended_steps;
    volatile uint32_t *stop = stalled;
    const uint32_t g = blockIdx.x, i = g * SM_AC_GPU_GROUP + (threadIdx.x & 31u);
    const uint32_t lcp = i < k.nkeys ? k.lcp[i] : 0, len = i < k.nkeys ? k.len[i] : 0;
    const uint32_t top = warp_max(len);
    uint32_t all_ended = 0;  /* a step every group has ended */
    uint32_t last_fail = 0;  /* fail() * columns of this key's last node */
    uint32_t last_fd = 0;    /* its depth, or more (fail(child) is at most one deeper than fail(parent)) */
    for (uint32_t d = 1; d <= top + 1; d++) {
        const bool had = i < k.nkeys && lcp < d - 1 && d - 1 <= len;
        const bool makes = i < k.nkeys && lcp < d && d <= len;
        const bool other_parent = makes && d >= 2 && d - 1 == lcp;
        /* Step d reads the row of fail(last) (its fill, and its next node's
           when last is the parent), or for a key's first node the row of
           fail(p), p made by an earlier key at step d - 1; a row of depth e
           is complete once every group has ended step e + 1. */
        uint32_t need = 0, parent_fd = 0, patience = WALK_PATIENCE;
        if (other_parent) {
            const uint32_t up_group = k.up[i] / SM_AC_GPU_GROUP;
            while (ended[up_group] < d - 1 && --patience) __nanosleep(32);
            __threadfence(); /* what that group wrote before it said so */
            uint32_t f = __ldcg(&a.fail[sm_ac_gpu_number(&k, &a, k.up[i], d - 1)]) / k.columns;
            parent_fd = f ? depth_of(k, a, f) : 0;
            need = parent_fd + 1;
        }
        if (had) {
            if (last_fd + 1 > all_ended) last_fd = last_fail ? depth_of(k, a, last_fail / k.columns) : 0;
            need = max(need, last_fd + 1);
            parent_fd = last_fd;
        }
        need = warp_max(need);
        if (need > all_ended) {
            do {
                all_ended = slowest(ended, gridDim.x);
                if (need > all_ended) __nanosleep(32);
            } while (need > all_ended && --patience);
            __threadfence();
        }
        if (__any_sync(0xffffffffu, patience == 0) || *stop) {
            if ((threadIdx.x & 31u) == 0) *stop = d;
            break;
        }
        uint32_t made_fail = 0;
        if (key_step<true>(k, a, i, d, lcp, len, g, last_fail, &made_fail)) {
            last_fail = made_fail;
            last_fd = d == 1 ? 0 : parent_fd + 1;
        }
        __syncwarp();
        __threadfence();
        if ((threadIdx.x & 31u) == 0) ended[g] = d;
    }
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) ended[g] = 0xffffffffu;
}

__global__ void total_kernel(const uint32_t *count, uint32_t states, unsigned long long *total) {
    unsigned long long sum = 0;
    for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < states; s += gridDim.x * blockDim.x) sum += count[s];
    for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31u) == 0 && sum) atomicAdd(total, sum);
}

__global__ void outputs_kernel(sm_ac_gpu_keys k, sm_ac_gpu_arrays a, const uint32_t *out_index, uint32_t *out_list) {
    for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < k.states; s += gridDim.x * blockDim.x)
        if (a.count[s]) sm_ac_gpu_outputs(&k, &a, s, out_index[s], out_list);
}

namespace {
struct device_build {
    void *pool[32] = {};
    int used = 0;
    ~device_build() {
        for (int i = 0; i < used; i++) cudaFree(pool[i]);
    }
    template <typename T> cudaError_t get(T **p, size_t count) {
        if (used == (int)(sizeof pool / sizeof *pool)) return cudaErrorMemoryAllocation;
        cudaError_t e = cudaMalloc((void **)p, count * sizeof(T) + 16);
        if (e == cudaSuccess) pool[used++] = *p;
        return e;
    }
};

/* The copy back: a copy from the device into ordinary (pageable) host
   memory crawls on some hosts (1.6 GB/s measured on an H200's), so the
   tables come back through two pinned buffers, kept for the process, while
   host threads move the previous piece on into the section. */
#define STAGE_BYTES ((size_t)32 << 20)
#define MOVERS 8

static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *stage[2];

typedef struct {
    uint8_t *to;
    const uint8_t *from;
    size_t len;
} move_part;

static void *move_part_run(void *p) {
    move_part *m = (move_part *)p;
    memcpy(m->to, m->from, m->len);
    return NULL;
}

static void move_piece(uint8_t *to, const uint8_t *from, size_t len) {
    pthread_t t[MOVERS];
    move_part parts[MOVERS];
    unsigned made = 0, n = len < ((size_t)4 << 20) ? 1 : MOVERS;
    for (unsigned j = 0; j < n; j++) {
        size_t a = len * j / n, b = len * (j + 1) / n;
        parts[j] = {to + a, from + a, b - a};
        if (j + 1 < n && pthread_create(&t[made], NULL, move_part_run, &parts[j]) == 0) made++;
        else move_part_run(&parts[j]);
    }
    for (unsigned j = 0; j < made; j++) pthread_join(t[j], NULL);
}

typedef struct {
    uint8_t *to;
    const uint8_t *from;
    size_t len;
} copy_region;

static int copy_back(const copy_region *regions, int nregions, char *msg) {
    pthread_mutex_lock(&stage_lock); /* one copy back at a time uses the buffers */
    cudaError_t e = cudaSuccess;
    for (int j = 0; j < 2 && e == cudaSuccess; j++)
        if (!stage[j]) e = cudaHostAlloc((void **)&stage[j], STAGE_BYTES, cudaHostAllocDefault);
    if (e != cudaSuccess) { /* no pinned memory: the slow way */
        pthread_mutex_unlock(&stage_lock);
        cudaGetLastError();
        for (int r = 0; r < nregions; r++)
            if (regions[r].len && (e = cudaMemcpy(regions[r].to, regions[r].from, regions[r].len,
                                                  cudaMemcpyDeviceToHost)) != cudaSuccess)
                return sm_cuda_fail(msg, "copying the automaton back", e);
        return 0;
    }
    cudaStream_t stream = 0;
    cudaEvent_t done[2] = {0, 0};
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    for (int j = 0; j < 2 && e == cudaSuccess; j++) e = cudaEventCreateWithFlags(&done[j], cudaEventDisableTiming);
    /* pieces in order: piece i goes through buffer i % 2 */
    struct { uint8_t *to; const uint8_t *from; size_t len; } inflight[2] = {};
    int piece = 0;
    for (int r = 0; r < nregions && e == cudaSuccess; r++)
        for (size_t at = 0; at < regions[r].len && e == cudaSuccess; at += STAGE_BYTES) {
            int slot = piece & 1;
            if (inflight[slot].len) { /* the buffer's previous piece, moved on first */
                e = cudaEventSynchronize(done[slot]);
                if (e != cudaSuccess) break;
                move_piece(inflight[slot].to, stage[slot], inflight[slot].len);
            }
            size_t len = regions[r].len - at < STAGE_BYTES ? regions[r].len - at : STAGE_BYTES;
            e = cudaMemcpyAsync(stage[slot], regions[r].from + at, len, cudaMemcpyDeviceToHost, stream);
            if (e == cudaSuccess) e = cudaEventRecord(done[slot], stream);
            inflight[slot].to = regions[r].to + at;
            inflight[slot].from = regions[r].from + at;
            inflight[slot].len = len;
            piece++;
        }
    for (int k = 0; k < 2 && e == cudaSuccess; k++) {
        int slot = (piece + k) & 1;
        if (!inflight[slot].len) continue;
        e = cudaEventSynchronize(done[slot]);
        if (e == cudaSuccess) move_piece(inflight[slot].to, stage[slot], inflight[slot].len);
    }
    for (int j = 0; j < 2; j++)
        if (done[j]) cudaEventDestroy(done[j]);
    if (stream) cudaStreamDestroy(stream);
    pthread_mutex_unlock(&stage_lock);
    return e == cudaSuccess ? 0 : sm_cuda_fail(msg, "copying the automaton back", e);
}
} // namespace

#define TRY(call, what)                                                                                           \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) return sm_cuda_fail(msg, what, e_);                                                \
    } while (0)

/* The build (sm_cuda_section_build for SM_SECTION_AUTOMATON; input: an sm_ac_gpu_build). */
static int ac_build(int device, const void *input, double ms[3], char *msg) {
    const sm_ac_gpu_keys *keys = &((const sm_ac_gpu_build *)input)->keys;
    const sm_ac_gpu_sink *sink = &((const sm_ac_gpu_build *)input)->sink;
    ms[0] = ms[1] = ms[2] = 0;
    TRY(cudaSetDevice(device), "choosing the device");
    const uint32_t nkeys = keys->nkeys, states = keys->states, C = keys->columns;
    const uint32_t groups = (nkeys + SM_AC_GPU_GROUP - 1) / SM_AC_GPU_GROUP;
    const size_t levels = (size_t)keys->max_depth + 2;
    if (levels * groups > (1u << 28)) {
        snprintf(msg, 256, "the GPU builder's level table (%zu depths x %u key groups) is too large", levels, groups);
        return -1;
    }
    uint64_t symbols = nkeys ? keys->start[nkeys - 1] + keys->len[nkeys - 1] : 0;
    device_build b;
    sm_ac_gpu_keys k = *keys;
    sm_ac_gpu_arrays a;
    memset(&a, 0, sizeof a);
    a.groups = groups;
    uint8_t *d_symbols;
    uint64_t *d_start;
    uint32_t *d_len, *d_lcp, *d_up, *d_output, *d_first, *d_ended, *d_stalled, *d_out_index, *d_out_list;
    unsigned long long *d_total;
    double t0 = now_ms();
    TRY(b.get(&d_symbols, symbols), "allocating the keys");
    TRY(b.get(&d_start, nkeys), "allocating the keys");
    TRY(b.get(&d_len, nkeys), "allocating the keys");
    TRY(b.get(&d_lcp, nkeys), "allocating the keys");
    TRY(b.get(&d_up, nkeys), "allocating the keys");
    TRY(b.get(&d_output, nkeys), "allocating the keys");
    TRY(b.get(&d_first, levels * groups), "allocating the level table");
    TRY(b.get(&d_ended, groups), "allocating the level table");
    TRY(b.get(&d_stalled, 1), "allocating the level table");
    TRY(b.get(&a.delta, (size_t)states * C), "allocating the transition table");
    TRY(b.get(&a.count, states), "allocating the automaton");
    TRY(b.get(&a.dict, states), "allocating the automaton");
    TRY(b.get(&a.fail, states), "allocating the automaton");
    TRY(b.get(&a.own_key, states), "allocating the automaton");
    TRY(b.get(&d_out_index, (size_t)states + 1), "allocating the automaton");
    TRY(b.get(&d_total, 1), "allocating the automaton");
    TRY(cudaMemcpy(d_symbols, keys->symbols, symbols, cudaMemcpyHostToDevice), "copying the keys");
    TRY(cudaMemcpy(d_start, keys->start, nkeys * sizeof *d_start, cudaMemcpyHostToDevice), "copying the keys");
    TRY(cudaMemcpy(d_len, keys->len, nkeys * 4, cudaMemcpyHostToDevice), "copying the keys");
    TRY(cudaMemcpy(d_lcp, keys->lcp, nkeys * 4, cudaMemcpyHostToDevice), "copying the keys");
    TRY(cudaMemcpy(d_up, keys->up, nkeys * 4, cudaMemcpyHostToDevice), "copying the keys");
    TRY(cudaMemcpy(d_output, keys->output, nkeys * 4, cudaMemcpyHostToDevice), "copying the keys");
    double t1 = now_ms();
    ms[0] = t1 - t0;
    k.symbols = d_symbols;
    k.start = d_start;
    k.len = d_len;
    k.lcp = d_lcp;
    k.up = d_up;
    k.output = d_output;

    /* Numbers: per-group counts per depth, then one exclusive scan. */
    uint32_t *d_counts;
    TRY(b.get(&d_counts, levels * groups), "allocating the level table");
    TRY(cudaMemset(d_counts, 0, levels * groups * 4), "clearing the level table");
    TRY(cudaMemset(a.delta, 0xff, (size_t)states * C * 4), "clearing the transition table");
    TRY(cudaMemset(a.count, 0, (size_t)states * 4), "clearing the automaton");
    TRY(cudaMemset(a.dict, 0, (size_t)states * 4), "clearing the automaton");
    TRY(cudaMemset(a.fail, 0, (size_t)states * 4), "clearing the automaton");
    TRY(cudaMemset(d_ended, 0, (size_t)groups * 4), "clearing the level table");
    TRY(cudaMemset(d_stalled, 0, 4), "clearing the level table");
    TRY(cudaMemset(d_total, 0, 8), "clearing the automaton");
    const unsigned threads = 256, key_blocks = (groups * SM_AC_GPU_GROUP + threads - 1) / threads;
    if (nkeys) count_kernel<<<key_blocks, threads>>>(k, groups, d_counts);
    size_t scan_bytes = 0, need = 0;
    cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, d_counts, d_first, (int)(levels * groups));
    cub::DeviceScan::ExclusiveSum(nullptr, need, a.count, d_out_index, (int)states);
    if (need > scan_bytes) scan_bytes = need;
    void *d_scan;
    TRY(b.get((uint8_t **)&d_scan, scan_bytes), "allocating the scan");
    TRY(cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, d_counts, d_first, (int)(levels * groups)),
        "numbering the nodes");
    a.first = d_first;

    /* The steps. */
    const char *force = getenv("SEQMATCH_AC_GPU_STEPS");
    bool launches = force && strcmp(force, "launches") == 0;
    if (!launches && nkeys) {
        int per_sm = 0, sms = 0;
        TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, walk_kernel, WALK_BLOCK, 0), "sizing the build");
        TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "sizing the build");
        int coop = 0;
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device);
        launches = !coop || (uint64_t)per_sm * sms < groups;
    }
    if (nkeys && launches) {
        for (uint32_t d = 1; d <= keys->max_depth + 1; d++) step_kernel<<<key_blocks, threads>>>(k, a, d);
        TRY(cudaGetLastError(), "running the build's steps");
    } else if (nkeys) {
        void *args[] = {&k, &a, &d_ended, &d_stalled};
        TRY(cudaLaunchCooperativeKernel((const void *)walk_kernel, groups, WALK_BLOCK, args, 0, 0),
            "running the build's steps");
        uint32_t stalled = 0;
        TRY(cudaMemcpy(&stalled, d_stalled, 4, cudaMemcpyDeviceToHost), "running the build's steps");
        if (stalled) {
            snprintf(msg, 256, "the build's steps stalled at depth %u", stalled);
            return -1;
        }
    }
    /* Output lists. */
    total_kernel<<<264, 256>>>(a.count, states, d_total);
    TRY(cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, a.count, d_out_index, (int)states), "counting outputs");
    unsigned long long total = 0;
    TRY(cudaMemcpy(&total, d_total, 8, cudaMemcpyDeviceToHost), "running the build");
    double t2 = now_ms();
    if (total > 0xffffffffull) {
        snprintf(msg, 256, "automaton: %llu output entries, over the limit of 2^32 - 1", total);
        return -1;
    }
    TRY(b.get(&d_out_list, total ? total : 1), "allocating the output lists");
    uint32_t total32 = (uint32_t)total;
    TRY(cudaMemcpy(d_out_index + states, &total32, 4, cudaMemcpyHostToDevice), "counting outputs");
    outputs_kernel<<<1024, 256>>>(k, a, d_out_index, d_out_list);
    TRY(cudaDeviceSynchronize(), "filling the output lists");
    double t3 = now_ms();
    ms[1] = t3 - t1;
    uint8_t *section = sink->room(sink->ctx, total, msg);
    if (!section) return -1;
    double t4 = now_ms();
    const copy_region regions[3] = {
        {section + sink->delta_off, (const uint8_t *)a.delta, (size_t)states * C * 4},
        {section + sink->out_index_off, (const uint8_t *)d_out_index, ((size_t)states + 1) * 4},
        {section + sink->out_list_off, (const uint8_t *)d_out_list, (size_t)total * 4}};
    if (copy_back(regions, 3, msg) != 0) return -1;
    ms[2] = now_ms() - t4;
    return 0;
}

SM_CUDA_BUILDER(automaton_builder, SM_SECTION_AUTOMATON, ac_build)
