/* The CUDA side of an engine: what the runtime (cuda_device.cu) asks of
 * each engine's kernel file (src/engines/<engine>/<engine>_cuda.cu). One
 * table per section kind, found by the runtime when it opens a database. */
#ifndef SM_CUDA_ENGINE_CUH
#define SM_CUDA_ENGINE_CUH

#include <cuda_runtime.h>

#include "backends/cuda/cuda_scan.h"

/* Threads per block of every scan kernel. */
#define SM_CUDA_BLOCK 512

/* A section on one device. */
struct sm_cuda_gpu_section {
    sm_gpu_view view;
    uint8_t *dev;            /* the section's bytes on the device */
    size_t size;
    void *prepared;          /* what the engine made of it (NULL: nothing) */
    uint32_t visits;         /* count mode: visit counters it adds to (0: counts per pattern) */
    uint64_t fold_index_off; /* and the code -> outputs index they fold through */
    uint64_t fold_list_off;
};

/* One launch of a section's kernel over a batch. */
struct sm_cuda_launch {
    sm_cuda_scan_args args;  /* section, view and visits already pointing at this section */
    const sm_cuda_gpu_section *section;
    int sms;                 /* multiprocessors of the device */
    size_t shared_limit;     /* shared memory a block may have */
    cudaStream_t stream;
};

struct sm_cuda_engine {
    uint32_t kind;           /* SM_GPU_KIND_* */
    int warp_chunks;         /* 1: a chunk per warp, else a part of a chunk per thread */
    /* Fills visits and the fold offsets, and makes what the kernel needs
       besides the section (may be NULL). */
    int (*prepare)(sm_cuda_gpu_section *s, const sm_cuda_section *host, char *msg);
    void (*release)(sm_cuda_gpu_section *s);
    int (*launch)(const sm_cuda_launch *l, char *msg);
};

extern const sm_cuda_engine sm_cuda_engine_automaton;
extern const sm_cuda_engine sm_cuda_engine_kmer;
extern const sm_cuda_engine sm_cuda_engine_wumanber;
extern const sm_cuda_engine sm_cuda_engine_shiftand;

/* The grid for a kernel of `items` work items of `per_item` threads: as many
   blocks as fit on the device at once, no more than the work needs. */
int sm_cuda_grid(const void *kernel, size_t shared, size_t items, unsigned per_item, int sms, unsigned *blocks,
                 char *msg);
/* The same for blocks of `threads` threads. */
int sm_cuda_grid_threads(const void *kernel, size_t shared, size_t items, unsigned per_item, unsigned threads, int sms,
                         unsigned *blocks, char *msg);
int sm_cuda_fail(char *msg, const char *what, cudaError_t e);

#define SM_CUDA_CHECK(call, what)                                  \
    do {                                                           \
        cudaError_t e_ = (call);                                   \
        if (e_ != cudaSuccess) return sm_cuda_fail(msg, what, e_); \
    } while (0)

#endif /* SM_CUDA_ENGINE_CUH */
