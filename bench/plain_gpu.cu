/* Baselines for bench/gpu_rate, on the GPU: seed 002's basic data-parallel
 * Aho-Corasick, and the device's memory read rate.
 *
 * The plain kernel follows the seed's basic strategy (its Algorithm 6, with
 * the supply function folded into a complete DFA, as the seed's other
 * GPU versions do): the state transition table (states x columns of the
 * alphabet, 4-byte entries) and the text in global memory, the text cut
 * into one sub-chunk per thread, each read byte by byte from m - 1 bytes
 * before it, and the matches counted per thread. Here each thread counts
 * the matches that end in its own sub-chunk, so that the total is exact.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#define FLAG 0x80000000u

__global__ void plain_ac_kernel(const uint8_t *text, uint64_t n, uint64_t per_thread, const uint32_t *delta,
                                const uint16_t *class_of, const uint32_t *outputs, uint32_t columns, uint32_t overlap,
                                unsigned long long *total) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t lo = t * per_thread;
    if (lo >= n) return;
    uint64_t hi = lo + per_thread < n ? lo + per_thread : n;
    uint64_t i = lo > overlap ? lo - overlap : 0;
    uint32_t s = 0;
    unsigned long long count = 0;
    for (; i < hi; i++) {
        uint32_t e = delta[s + class_of[text[i]]];
        s = e & ~FLAG;
        if ((e & FLAG) && i >= lo) count += outputs[s / columns];
    }
    atomicAdd(total, count);
}

__global__ void read_kernel(const uint4 *p, uint64_t n16, unsigned long long *sink) {
    uint32_t acc = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += (uint64_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcs(&p[i]);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) atomicAdd(sink, 1ull); /* keeps the loads */
}

static float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

/* The plain kernel over text[0, n) (already on the device) with per_thread
   bytes per thread: the median kernel time of `repeats` runs, and the count. */
extern "C" int plain_ac_time(const uint8_t *dev_text, uint64_t n, uint64_t per_thread, const uint32_t *delta,
                             uint32_t states, uint32_t columns, const uint16_t *class_of, const uint32_t *outputs,
                             uint32_t overlap, int repeats, double *ms, unsigned long long *count) {
    uint32_t *d_delta, *d_out;
    uint16_t *d_class;
    unsigned long long *d_total;
    size_t words = (size_t)states * columns;
    if (cudaMalloc(&d_delta, words * 4) != cudaSuccess || cudaMalloc(&d_out, (size_t)states * 4) != cudaSuccess ||
        cudaMalloc(&d_class, 512) != cudaSuccess || cudaMalloc(&d_total, 8) != cudaSuccess)
        return -1;
    cudaMemcpy(d_delta, delta, words * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(d_out, outputs, (size_t)states * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(d_class, class_of, 512, cudaMemcpyHostToDevice);
    uint64_t threads = (n + per_thread - 1) / per_thread;
    unsigned blocks = (unsigned)((threads + 255) / 256);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float best[64];
    if (repeats > 64) repeats = 64;
    for (int r = 0; r < repeats; r++) {
        cudaMemset(d_total, 0, 8);
        cudaEventRecord(a);
        plain_ac_kernel<<<blocks, 256>>>(dev_text, n, per_thread, d_delta, d_class, d_out, columns, overlap, d_total);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        best[r] = elapsed(a, b);
    }
    cudaMemcpy(count, d_total, 8, cudaMemcpyDeviceToHost);
    for (int i = 1; i < repeats; i++)
        for (int j = i; j > 0 && best[j - 1] > best[j]; j--) {
            float x = best[j];
            best[j] = best[j - 1];
            best[j - 1] = x;
        }
    *ms = best[repeats / 2];
    cudaFree(d_delta);
    cudaFree(d_out);
    cudaFree(d_class);
    cudaFree(d_total);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Copies text to the device (the caller frees *dev with plain_free). */
extern "C" int plain_upload(const void *text, uint64_t n, uint8_t **dev) {
    if (cudaMalloc(dev, n + 16) != cudaSuccess) return -1;
    return cudaMemcpy(*dev, text, n, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
}

extern "C" void plain_free(uint8_t *dev) { cudaFree(dev); }

/* The device's read rate over n bytes at dev: GB/s, median of repeats. */
extern "C" double device_read_rate(const uint8_t *dev, uint64_t n, int repeats) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    unsigned long long *sink;
    cudaMalloc(&sink, 8);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float t[64];
    if (repeats > 64) repeats = 64;
    for (int r = 0; r < repeats; r++) {
        cudaEventRecord(a);
        read_kernel<<<sms * 8, 512>>>((const uint4 *)dev, n / 16, sink);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        t[r] = elapsed(a, b);
    }
    for (int i = 1; i < repeats; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            float x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    cudaFree(sink);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return (double)(n / 16 * 16) / (t[repeats / 2] * 1e-3) / 1e9;
}
