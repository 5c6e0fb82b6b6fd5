/* What a GPU search pays before its first byte, step by step: loading
 * seqmatch's GPU module (dlopen of libseqmatch-cuda.so, as the library
 * does), the driver's start (the first runtime call), the device's context,
 * pinned and device buffers of a short search (1 MiB) and of a long one
 * (64 MiB), the first kernel launch (the module's code loaded on the
 * device) and the context's end. Each step timed once, in order, as a
 * search meets them; run it several times for medians (bench/run-gpu.sh).
 *
 *   nvcc -O2 -arch=sm_90 -o gpu_start gpu_start.cu -ldl
 *   ./gpu_start [--leave] [path/to/libseqmatch-cuda.so]
 *
 * --leave returns from main without freeing or resetting anything, for the
 * process's whole wall time measured from outside (what exit costs then).
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double last;
static void step(const char *what, cudaError_t e) {
    double t = now();
    printf("%-44s %8.1f ms%s%s\n", what, (t - last) * 1e3, e == cudaSuccess ? "" : "  error: ",
           e == cudaSuccess ? "" : cudaGetErrorString(e));
    last = now();
}

__global__ void touch(unsigned char *p) { p[threadIdx.x] = 1; }

int main(int argc, char **argv) {
    double start = now();
    last = start;
    int leave = argc > 1 && strcmp(argv[1], "--leave") == 0;
    if (leave) argc--, argv++;
    if (argc > 1) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        step("dlopen of the GPU module", h ? cudaSuccess : cudaErrorUnknown);
        if (!h) fprintf(stderr, "%s\n", dlerror());
    }
    int n = 0;
    step("driver start (cudaGetDeviceCount)", cudaGetDeviceCount(&n));
    cudaDeviceProp p;
    step("device properties", cudaGetDeviceProperties(&p, 0));
    step("cudaSetDevice(0)", cudaSetDevice(0));
    step("context (cudaFree(0))", cudaFree(0));
    cudaStream_t st;
    step("a non-blocking stream", cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    void *h1, *d1, *h64, *d64;
    step("cudaMallocHost 1 MiB", cudaMallocHost(&h1, 1 << 20));
    step("cudaMalloc 1 MiB", cudaMalloc(&d1, 1 << 20));
    step("cudaMallocHost 64 MiB", cudaMallocHost(&h64, 64 << 20));
    memset(h64, 0, 64 << 20);
    step("memset of it on the host", cudaSuccess);
    step("cudaMalloc 64 MiB", cudaMalloc(&d64, 64 << 20));
    step("copy 64 MiB to the device", cudaMemcpyAsync(d64, h64, 64 << 20, cudaMemcpyHostToDevice, st));
    step("... and wait", cudaStreamSynchronize(st));
    touch<<<1, 32, 0, st>>>((unsigned char *)d1);
    step("first kernel launch", cudaGetLastError());
    step("... and wait", cudaStreamSynchronize(st));
    touch<<<1, 32, 0, st>>>((unsigned char *)d1);
    cudaStreamSynchronize(st);
    step("second kernel launch and wait", cudaGetLastError());
    if (leave) {
        printf("%-44s %8.1f ms (left to exit)\n", "total", (now() - start) * 1e3);
        return 0;
    }
    cudaFreeHost(h64);
    step("cudaFreeHost 64 MiB", cudaSuccess);
    cudaFree(d64);
    cudaFreeHost(h1);
    cudaFree(d1);
    cudaStreamDestroy(st);
    step("the rest freed", cudaSuccess);
    step("cudaDeviceReset", cudaDeviceReset());
    printf("%-44s %8.1f ms (%d device(s), %s)\n", "total", (now() - start) * 1e3, n, n ? p.name : "-");
    return 0;
}
