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
#include <cub/device/device_scan.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engines/cuda_engine.cuh"
#include "engines/automaton/build_gpu.h"

#define WALK_BLOCK 32u

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
    uint32_t top = __reduce_max_sync(0xffffffffu, len);
    for (uint32_t d = 1; d <= top; d++) {
        uint32_t b = __ballot_sync(0xffffffffu, i < k.nkeys && lcp < d && d <= len);
        if ((threadIdx.x & 31u) == 0) counts[(size_t)d * groups + g] = __popc(b);
    }
}

/* One key's share of step d, its numbers found by ballots (the whole warp
   calls it); returns the number of the node the key makes, or 0. */
__device__ __forceinline__ uint32_t key_step(const sm_ac_gpu_keys &k, const sm_ac_gpu_arrays &a, uint32_t i,
                                             uint32_t d, uint32_t lcp, uint32_t len, uint32_t g) {
    uint32_t lane = threadIdx.x & 31u, lower = (1u << lane) - 1u;
    bool had = i < k.nkeys && lcp < d - 1 && d - 1 <= len, makes = i < k.nkeys && lcp < d && d <= len;
    uint32_t b_had = __ballot_sync(0xffffffffu, had), b_makes = __ballot_sync(0xffffffffu, makes);
    uint32_t previous = had ? 1 + a.first[(size_t)(d - 1) * a.groups + g] + __popc(b_had & lower) : 0;
    if (d == 1 && i == 0) sm_ac_gpu_fill(&k, &a, 0);
    if (had) sm_ac_gpu_fill(&k, &a, previous);
    if (!makes) return 0;
    uint32_t n = 1 + a.first[(size_t)d * a.groups + g] + __popc(b_makes & lower);
    sm_ac_gpu_make(&k, &a, i, d, n, sm_ac_gpu_parent(&k, &a, i, d, previous));
    return n;
}

__global__ void step_kernel(sm_ac_gpu_keys k, sm_ac_gpu_arrays a, uint32_t d) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, g = i / SM_AC_GPU_GROUP;
    uint32_t lcp = i < k.nkeys ? k.lcp[i] : 0, len = i < k.nkeys ? k.len[i] : 0;
    key_step(k, a, i, d, lcp, len, g);
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

/* The depth of fail(s) for a state s > 0. */
__device__ uint32_t fail_depth_of(const sm_ac_gpu_keys &k, const sm_ac_gpu_arrays &a, uint32_t s) {
    uint32_t f = __ldcg(&a.fail[s]) / k.columns;
    return f ? depth_of(k, a, f) : 0;
}

/* The last step every group has ended (the whole warp calls it). */
__device__ uint32_t slowest(const volatile uint32_t *ended, uint32_t groups) {
    uint32_t m = 0xffffffffu;
    for (uint32_t j = threadIdx.x & 31u; j < groups; j += 32) m = min(m, ended[j]);
    return __reduce_min_sync(0xffffffffu, m);
}

/* Every step in one launch: a warp per group (all resident: a cooperative
   launch), each waiting only for the rows it reads. ended[g]: the last step
   group g has ended (all ones once it has ended them all). */
__global__ void walk_kernel(sm_ac_gpu_keys k, sm_ac_gpu_arrays a, uint32_t *ended_steps) {
    volatile uint32_t *ended = ended_steps;
    const uint32_t g = blockIdx.x, i = g * SM_AC_GPU_GROUP + (threadIdx.x & 31u);
    const uint32_t lcp = i < k.nkeys ? k.lcp[i] : 0, len = i < k.nkeys ? k.len[i] : 0;
    const uint32_t top = __reduce_max_sync(0xffffffffu, len);
    uint32_t all_ended = 0;  /* a step every group has ended */
    uint32_t last = 0;       /* this key's last node */
    uint32_t last_fd = 0;    /* depth of fail(last), or more (fail(child) is at most one deeper than fail(parent)) */
    for (uint32_t d = 1; d <= top + 1; d++) {
        const bool had = i < k.nkeys && lcp < d - 1 && d - 1 <= len;
        const bool makes = i < k.nkeys && lcp < d && d <= len;
        const bool own_parent = makes && d >= 2 && d - 1 > lcp, other_parent = makes && d >= 2 && d - 1 == lcp;
        /* Step d reads the row of fail(last) (the fill, and the next node
           when last is its parent) or of fail(p) for a first node's parent
           p, which an earlier key made at step d - 1; a row of depth e is
           complete once every group has ended step e + 1. */
        uint32_t need = 0, parent_fd = 0;
        if (other_parent) {
            const uint32_t up_group = k.up[i] / SM_AC_GPU_GROUP;
            while (ended[up_group] < d - 1) __nanosleep(32);
            __threadfence(); /* what that group wrote before it said so */
            parent_fd = fail_depth_of(k, a, sm_ac_gpu_number(&k, &a, k.up[i], d - 1));
            need = parent_fd + 1;
        }
        if (had || own_parent) {
            if (last_fd + 1 > all_ended) last_fd = fail_depth_of(k, a, last);
            need = max(need, last_fd + 1);
            parent_fd = last_fd;
        }
        need = __reduce_max_sync(0xffffffffu, need);
        if (need > all_ended) {
            do {
                all_ended = slowest(ended, gridDim.x);
                if (need > all_ended) __nanosleep(32);
            } while (need > all_ended);
            __threadfence();
        }
        const uint32_t made = key_step(k, a, i, d, lcp, len, g);
        if (made) {
            last = made;
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
    void *pool[16] = {};
    int used = 0;
    ~device_build() {
        for (int i = 0; i < used; i++) cudaFree(pool[i]);
    }
    template <typename T> cudaError_t get(T **p, size_t count) {
        cudaError_t e = cudaMalloc((void **)p, count * sizeof(T) + 16);
        if (e == cudaSuccess) pool[used++] = *p;
        return e;
    }
};
} // namespace

#define TRY(call, what)                                                                                           \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) return sm_cuda_fail(msg, what, e_);                                                \
    } while (0)

extern "C" int sm_ac_cuda_build(int device, const sm_ac_gpu_keys *keys, const sm_ac_gpu_sink *sink,
                                sm_ac_gpu_times *times, char *msg) {
    memset(times, 0, sizeof *times);
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
    uint32_t *d_len, *d_lcp, *d_up, *d_output, *d_first, *d_ended, *d_out_index, *d_out_list;
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
    times->copy_in_ms = t1 - t0;
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
        void *args[] = {&k, &a, &d_ended};
        TRY(cudaLaunchCooperativeKernel((const void *)walk_kernel, groups, WALK_BLOCK, args, 0, 0),
            "running the build's steps");
        times->one_launch = 1;
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
    times->kernels_ms = (t2 - t1) + (t3 - t2);
    uint8_t *section = sink->room(sink->ctx, total, msg);
    if (!section) return -1;
    double t4 = now_ms();
    TRY(cudaMemcpy(section + sink->delta_off, a.delta, (size_t)states * C * 4, cudaMemcpyDeviceToHost),
        "copying the automaton back");
    TRY(cudaMemcpy(section + sink->out_index_off, d_out_index, ((size_t)states + 1) * 4, cudaMemcpyDeviceToHost),
        "copying the automaton back");
    if (total)
        TRY(cudaMemcpy(section + sink->out_list_off, d_out_list, total * 4, cudaMemcpyDeviceToHost),
            "copying the automaton back");
    times->copy_out_ms = now_ms() - t4;
    return 0;
}
