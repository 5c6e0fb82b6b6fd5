/* The CUDA side of an engine: what the runtime (backends/cuda/cuda_device.cu) asks of
 * each engine's kernel file (src/engines/<engine>/<engine>_cuda.cu). Each
 * kernel file registers its table under its engine's section kind with
 * SM_CUDA_ENGINE when the GPU module is loaded; the runtime finds a
 * section's kernel there, so no list of engines is kept anywhere. */
#ifndef SM_CUDA_ENGINE_CUH
#define SM_CUDA_ENGINE_CUH

#include <cuda_runtime.h>

#include "engines/gpu_part.h"
#include "engines/section_kinds.h"

/* Threads per block of every scan kernel (unless a kernel says otherwise). */
#define SM_CUDA_BLOCK 512

/* A section on one device. */
struct sm_cuda_gpu_section {
    sm_gpu_view view;
    uint32_t index;          /* in the database's directory */
    uint8_t *dev;            /* the section's bytes on the device */
    size_t size;
    void *extra;             /* the extra bytes on the device, or NULL */
    void *prepared;          /* what the engine made of it (NULL: nothing) */
};

/* One launch of a section's kernel over a batch. */
struct sm_cuda_launch {
    sm_gpu_scan_args args;   /* section, view and visits already pointing at this section */
    const sm_cuda_gpu_section *section;
    int sms;                 /* multiprocessors of the device */
    size_t shared_limit;     /* shared memory a block may have */
    cudaStream_t stream;
};

struct sm_cuda_engine {
    uint32_t kind;           /* the engine's section kind (SM_SECTION_*) */
    /* Makes what the kernel needs besides the section (may be NULL). */
    int (*prepare)(sm_cuda_gpu_section *s, const sm_cuda_section *host, char *msg);
    void (*release)(sm_cuda_gpu_section *s);
    int (*launch)(const sm_cuda_launch *l, char *msg);
    sm_cuda_engine *next;    /* the registry's chain */
};

/* Adds an engine's kernel to the runtime's registry (at the module's load). */
void sm_cuda_register(sm_cuda_engine *engine);

#define SM_CUDA_ENGINE(name, kind, prepare, release, launch)                            \
    static sm_cuda_engine name = {kind, prepare, release, launch, NULL};             \
    __attribute__((constructor)) static void name##_register(void) { sm_cuda_register(&name); }

/* An engine that builds its section on the GPU (cuda_device.h,
   sm_cuda_section_build): input is the engine's own. */
struct sm_cuda_builder {
    uint32_t kind;
    int (*build)(int device, const void *input, double ms[3], char *msg);
    sm_cuda_builder *next;
};

void sm_cuda_register_builder(sm_cuda_builder *builder);

#define SM_CUDA_BUILDER(name, kind, build)                                              \
    static sm_cuda_builder name = {kind, build, NULL};                               \
    __attribute__((constructor)) static void name##_register(void) { sm_cuda_register_builder(&name); }

/* The grid for a kernel of `items` work items of `per_item` threads: as many
   blocks as fit on the device at once, no more than the work needs. */
int sm_cuda_grid(const void *kernel, size_t shared, size_t items, unsigned per_item, int sms, unsigned *blocks,
                 char *msg);
/* The same for blocks of `threads` threads. */
int sm_cuda_grid_threads(const void *kernel, size_t shared, size_t items, unsigned per_item, unsigned threads, int sms,
                         unsigned *blocks, char *msg);
int sm_cuda_fail(char *msg, const char *what, cudaError_t e);
/* Pinned host memory (where < 0) or memory of device where (current), kept
   for reuse when given back (cuda_device.cu): making and freeing either
   holds up every other thread's copies. */
cudaError_t sm_cuda_buffer_get(int where, size_t n, void **p);
void sm_cuda_buffer_put(int where, void *p, size_t n);

#define SM_CUDA_CHECK(call, what)                                  \
    do {                                                           \
        cudaError_t e_ = (call);                                   \
        if (e_ != cudaSuccess) return sm_cuda_fail(msg, what, e_); \
    } while (0)

#endif /* SM_CUDA_ENGINE_CUH */
