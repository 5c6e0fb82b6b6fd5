/* The GPU module (libseqmatch-cuda.so): the CUDA side of the runner
 * (cuda_device.cu, every engine's kernel and the DFA run's dfa_cuda.cu, with
 * the CUDA runtime linked in statically) built as a
 * shared object of its own, which the library loads at run time
 * (cuda_loader.c) the first time a GPU is asked for. So the library and
 * the programs linked with it need neither the CUDA toolkit nor its runtime
 * to link, statically or not, and run on machines without either; a machine
 * with a GPU needs the module (installed beside the library) and the
 * driver.
 *
 * The module exports one function, SM_CUDA_MODULE_ENTRY, that returns the
 * table below; abi and size let a library refuse a module of another
 * version instead of calling through a table of another shape. */
#ifndef SM_CUDA_MODULE_H
#define SM_CUDA_MODULE_H

#include "backends/cuda/cuda_device.h"
#include "engines/dfa/dfa_gpu_device.h"

#define SM_CUDA_MODULE_ABI 6
#define SM_CUDA_MODULE_ENTRY "sm_cuda_module_entry"

typedef struct {
    uint32_t abi;   /* SM_CUDA_MODULE_ABI */
    uint32_t size;  /* sizeof(sm_cuda_module) */
    int (*device_count)(void);
    int (*prepare)(int device);
    int (*reserve)(int device, size_t batch_bytes, unsigned count);
    void (*device_name)(int device, char *name, size_t size);
    /* the runner's exact engines (cuda_device.h) */
    int (*tables_open)(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg);
    void (*tables_close)(sm_cuda_tables *tables);
    size_t (*tables_chunk)(const sm_cuda_tables *tables, size_t text_cap, size_t tail);
    int (*slot_open)(sm_cuda_tables *tables, size_t text_cap, size_t chunk_cap, int count_only, sm_cuda_slot **out,
                     char *msg);
    void (*slot_close)(sm_cuda_slot *slot);
    uint8_t *(*slot_text)(sm_cuda_slot *slot, size_t bytes, char *msg);
    sm_gpu_chunk *(*slot_chunks)(sm_cuda_slot *slot);
    int (*slot_launch)(sm_cuda_slot *slot, size_t len, size_t nchunks, char *msg);
    int (*slot_wait)(sm_cuda_slot *slot, sm_cuda_result *result, char *msg);
    int (*slot_time_scan)(sm_cuda_slot *slot, int repeats, double *ms, char *msg);
    /* the DFA membership test (dfa_gpu_device.h) */
    int (*dfa_device)(int device, sm_dfa_gpu_device_info *info, char *msg);
    int (*dfa_open)(int device, const sm_dfa_gpu_tables *tables, size_t text_cap, size_t chunk_cap,
                    size_t segment_cap, size_t map_cap, sm_dfa_cuda **out, char *msg);
    void (*dfa_close)(sm_dfa_cuda *d);
    uint8_t *(*dfa_text)(sm_dfa_cuda *d, unsigned slot);
    sm_dfa_gpu_chunk *(*dfa_chunks)(sm_dfa_cuda *d, unsigned slot);
    sm_dfa_gpu_segment *(*dfa_segments)(sm_dfa_cuda *d, unsigned slot);
    int (*dfa_launch)(sm_dfa_cuda *d, unsigned slot, const sm_dfa_gpu_batch *batch, char *msg);
    int (*dfa_wait)(sm_dfa_cuda *d, unsigned slot, const uint32_t **finals, char *msg);
    int (*dfa_time)(sm_dfa_cuda *d, unsigned slot, int repeats, double *ms, char *msg);
    /* sections built on the GPU (cuda_device.h) */
    int (*section_build)(uint32_t kind, int device, const void *input, double ms[3], char *msg);
    /* BGZF blocks inflated on the GPU (cuda_device.h) */
    int (*inflate_open)(int device, size_t max_blocks, size_t max_raw, size_t max_out, sm_cuda_inflater **out,
                        char *msg);
    int (*inflate_run)(sm_cuda_inflater *f, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                       size_t *out_len, char *msg);
    void (*inflate_close)(sm_cuda_inflater *f);
} sm_cuda_module;

typedef const sm_cuda_module *(*sm_cuda_module_entry_fn)(void);

#endif /* SM_CUDA_MODULE_H */
