/* The library's side of the GPU module (cuda_module.h): loads
 * libseqmatch-cuda.so the first time a GPU is asked for and forwards the
 * cuda_device.h and dfa_gpu_device.h calls to it.
 *
 * The module is looked for (module_open.h), in order: at
 * $SEQMATCH_CUDA_MODULE (a path); in the folder of the library or program
 * this code is part of, and in that folder's ../LIBDIR (the command in bin/,
 * the module in lib/); in the installed LIBDIR; by its name alone (the
 * dynamic loader's search: LD_LIBRARY_PATH, the system folders). A
 * program's folder is that of its real file (/proc/self/exe, symbolic links
 * followed), not of argv[0], which is a bare name when the program was
 * found through PATH.
 *
 * Only libseqmatch.so and the command have it: the static archive has
 * cuda_none.c in its place (see CMakeLists.txt). A build without nvcc has
 * it too, with no module of its own (SM_CUDA_BUILT 0): it then looks only
 * at $SEQMATCH_CUDA_MODULE and beside itself, where a module built
 * elsewhere (or the tests' CPU stand-in) may be put. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h" /* sm_cuda_device_count is public */
#include "backends/cuda/cuda_module.h"
#include "backends/module_open.h"

#ifndef SM_CUDA_MODULE_FILE
#define SM_CUDA_MODULE_FILE "libseqmatch-cuda.so"
#endif
#ifndef SM_CUDA_BUILT
#define SM_CUDA_BUILT 1
#endif

static const sm_cuda_module *module;
static char missing[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_module(void) {
    char error[256] = "";
    void *handle = sm_module_open(SM_CUDA_MODULE_FILE, "SEQMATCH_CUDA_MODULE", SM_INSTALL_LIBDIR,
                                  SM_INSTALL_FULL_LIBDIR, SM_CUDA_BUILT, RTLD_NOW | RTLD_LOCAL, error, sizeof error);
    const char *env = getenv("SEQMATCH_CUDA_MODULE");
    if (!handle && !SM_CUDA_BUILT && !(env && *env)) {
        snprintf(missing, sizeof missing, "this seqmatch was built without CUDA (nvcc was not found)");
        return;
    }
    if (!handle) {
        snprintf(missing, sizeof missing, "the GPU module " SM_CUDA_MODULE_FILE " could not be loaded (%s)", error);
        return;
    }
    sm_cuda_module_entry_fn entry = (sm_cuda_module_entry_fn)(uintptr_t)dlsym(handle, SM_CUDA_MODULE_ENTRY);
    const sm_cuda_module *m = entry ? entry() : NULL;
    if (!m || m->abi != SM_CUDA_MODULE_ABI || m->size != sizeof(sm_cuda_module)) {
        snprintf(missing, sizeof missing,
                 "the GPU module " SM_CUDA_MODULE_FILE " found is of another version than this library");
        return; /* left loaded: unloading a CUDA runtime is not safe */
    }
    module = m;
}

static const sm_cuda_module *gpu(void) {
    pthread_once(&load_once, load_module);
    return module;
}

static int unavailable(char *msg) {
    snprintf(msg, 256, "%.250s", sm_cuda_missing());
    return -1;
}

const char *sm_cuda_missing(void) { return gpu() ? NULL : missing; }

int sm_cuda_device_count(void) { return gpu() ? module->device_count() : 0; }
int sm_cuda_prepare(int device) { return gpu() ? module->prepare(device) : 0; }
int sm_cuda_reserve(int device, size_t batch_bytes, unsigned count) {
    return gpu() ? module->reserve(device, batch_bytes, count) : -1;
}

void sm_cuda_device_name(int device, char *name, size_t size) {
    if (gpu()) module->device_name(device, name, size);
    else snprintf(name, size, "GPU %d", device);
}

int sm_cuda_tables_open(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg) {
    *out = NULL;
    return gpu() ? module->tables_open(device, db, out, msg) : unavailable(msg);
}

void sm_cuda_tables_close(sm_cuda_tables *tables) {
    if (tables && gpu()) module->tables_close(tables);
}

size_t sm_cuda_tables_chunk(const sm_cuda_tables *tables, size_t text_cap, size_t tail) {
    return gpu() ? module->tables_chunk(tables, text_cap, tail) : text_cap;
}

int sm_cuda_slot_open(sm_cuda_tables *tables, size_t text_cap, size_t chunk_cap, int count_only, sm_cuda_slot **out,
                      char *msg) {
    *out = NULL;
    return gpu() ? module->slot_open(tables, text_cap, chunk_cap, count_only, out, msg) : unavailable(msg);
}

void sm_cuda_slot_close(sm_cuda_slot *slot) {
    if (slot && gpu()) module->slot_close(slot);
}

uint8_t *sm_cuda_slot_text(sm_cuda_slot *slot, size_t bytes, char *msg) {
    if (!gpu()) {
        unavailable(msg);
        return NULL;
    }
    return module->slot_text(slot, bytes, msg);
}

sm_gpu_chunk *sm_cuda_slot_chunks(sm_cuda_slot *slot) { return gpu() ? module->slot_chunks(slot) : NULL; }

int sm_cuda_slot_launch(sm_cuda_slot *slot, size_t len, size_t nchunks, char *msg) {
    return gpu() ? module->slot_launch(slot, len, nchunks, msg) : unavailable(msg);
}

int sm_cuda_slot_wait(sm_cuda_slot *slot, sm_cuda_result *result, char *msg) {
    return gpu() ? module->slot_wait(slot, result, msg) : unavailable(msg);
}

int sm_cuda_slot_time_scan(sm_cuda_slot *slot, int repeats, double *ms, char *msg) {
    return gpu() ? module->slot_time_scan(slot, repeats, ms, msg) : unavailable(msg);
}

int sm_dfa_cuda_device(int device, sm_dfa_gpu_device_info *info, char *msg) {
    return gpu() ? module->dfa_device(device, info, msg) : unavailable(msg);
}

int sm_dfa_cuda_open(int device, const sm_dfa_gpu_tables *tables, size_t text_cap, size_t chunk_cap,
                     size_t segment_cap, size_t map_cap, sm_dfa_cuda **out, char *msg) {
    *out = NULL;
    return gpu() ? module->dfa_open(device, tables, text_cap, chunk_cap, segment_cap, map_cap, out, msg)
                 : unavailable(msg);
}

void sm_dfa_cuda_close(sm_dfa_cuda *d) {
    if (d && gpu()) module->dfa_close(d);
}

uint8_t *sm_dfa_cuda_text(sm_dfa_cuda *d, unsigned slot) { return gpu() ? module->dfa_text(d, slot) : NULL; }

sm_dfa_gpu_chunk *sm_dfa_cuda_chunks(sm_dfa_cuda *d, unsigned slot) {
    return gpu() ? module->dfa_chunks(d, slot) : NULL;
}

sm_dfa_gpu_segment *sm_dfa_cuda_segments(sm_dfa_cuda *d, unsigned slot) {
    return gpu() ? module->dfa_segments(d, slot) : NULL;
}

int sm_dfa_cuda_launch(sm_dfa_cuda *d, unsigned slot, const sm_dfa_gpu_batch *batch, char *msg) {
    return gpu() ? module->dfa_launch(d, slot, batch, msg) : unavailable(msg);
}

int sm_dfa_cuda_wait(sm_dfa_cuda *d, unsigned slot, const uint32_t **finals, char *msg) {
    *finals = NULL;
    return gpu() ? module->dfa_wait(d, slot, finals, msg) : unavailable(msg);
}

int sm_dfa_cuda_time(sm_dfa_cuda *d, unsigned slot, int repeats, double *ms, char *msg) {
    return gpu() ? module->dfa_time(d, slot, repeats, ms, msg) : unavailable(msg);
}

int sm_cuda_section_build(uint32_t kind, int device, const void *input, double ms[3], char *msg) {
    return gpu() ? module->section_build(kind, device, input, ms, msg) : unavailable(msg);
}

int sm_cuda_inflate_open(int device, size_t max_blocks, size_t max_raw, size_t max_out, sm_cuda_inflater **out,
                         char *msg) {
    *out = NULL;
    return gpu() ? module->inflate_open(device, max_blocks, max_raw, max_out, out, msg) : unavailable(msg);
}

int sm_cuda_inflate_run(sm_cuda_inflater *f, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                        size_t *out_len, char *msg) {
    *out_len = 0;
    return gpu() ? module->inflate_run(f, raw, raw_len, out, cap, out_len, msg) : unavailable(msg);
}

void sm_cuda_inflate_close(sm_cuda_inflater *f) {
    if (f && gpu()) module->inflate_close(f);
}
