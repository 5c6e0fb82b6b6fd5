/* The command's side of the MPI module (mpi_module.h): under an MPI
 * launcher it loads libseqmatch-mpi.so and forwards mpi.h's calls to it;
 * otherwise nothing of MPI is touched, so the command needs no MPI library
 * to start.
 *
 * The module is looked for (module_open.h) at $SEQMATCH_MPI_MODULE, beside
 * the command's real file and in its ../LIBDIR, in the installed LIBDIR,
 * then by name; a build without MPI (SM_MPI_BUILT 0) has no module of its
 * own and looks at the variable and beside itself only. */
#define _GNU_SOURCE
#ifndef SM_MPI_STATIC_ARCHIVE
#include <dlfcn.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef SM_MPI_STATIC_ARCHIVE
#include "backends/module_open.h"
#endif
#include "dist/mpi_module.h"

#ifndef SM_MPI_MODULE_FILE
#define SM_MPI_MODULE_FILE "libseqmatch-mpi.so"
#endif
#ifndef SM_MPI_BUILT
#define SM_MPI_BUILT 0
#endif

static const sm_mpi_module *module;
static int tried;
static char missing[512];

/* Loads the module once (the command's main thread, before any other). */
static const sm_mpi_module *mpi(void) {
    if (tried) return module;
    tried = 1;
#ifdef SM_MPI_STATIC_ARCHIVE
    /* no dlopen in the static archive (as for the GPU module) */
    snprintf(missing, sizeof missing, "the static libseqmatch.a cannot load the MPI module: link libseqmatch.so");
    return NULL;
#else
    char error[256] = "";
    /* global: Open MPI's own plugins look for the MPI library's symbols */
    void *handle = sm_module_open(SM_MPI_MODULE_FILE, "SEQMATCH_MPI_MODULE", SM_INSTALL_LIBDIR, SM_INSTALL_FULL_LIBDIR,
                                  SM_MPI_BUILT, RTLD_NOW | RTLD_GLOBAL, error, sizeof error);
    const char *env = getenv("SEQMATCH_MPI_MODULE");
    if (!handle && !SM_MPI_BUILT && !(env && *env)) {
        snprintf(missing, sizeof missing, "this seqmatch was built without MPI");
        return NULL;
    }
    if (!handle) {
        snprintf(missing, sizeof missing, "the MPI module " SM_MPI_MODULE_FILE " could not be loaded (%s)", error);
        return NULL;
    }
    sm_mpi_module_entry_fn entry = (sm_mpi_module_entry_fn)(uintptr_t)dlsym(handle, SM_MPI_MODULE_ENTRY);
    const sm_mpi_module *m = entry ? entry() : NULL;
    if (!m || m->abi != SM_MPI_MODULE_ABI || m->size != sizeof(sm_mpi_module)) {
        snprintf(missing, sizeof missing, "the MPI module " SM_MPI_MODULE_FILE " found is of another version than "
                 "this seqmatch");
        return NULL;
    }
    module = m;
    return module;
#endif
}

int sm_mpi_built(void) { return mpi() != NULL; }

const char *sm_mpi_missing(void) { return mpi() ? NULL : missing; }

unsigned sm_mpi_launched_size(void) {
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (!v) v = getenv("PMI_SIZE");
    if (v) return (unsigned)strtoul(v, NULL, 10);
    return getenv("PMIX_RANK") ? 1u : 0u;
}

sm_mpi *sm_mpi_start(int *argc, char ***argv) { return mpi() ? module->start(argc, argv) : NULL; }
unsigned sm_mpi_rank(const sm_mpi *m) { return module ? module->rank(m) : 0; }
unsigned sm_mpi_size(const sm_mpi *m) { return module ? module->size_of(m) : 1; }
unsigned sm_mpi_local_rank(const sm_mpi *m) { return module ? module->local_rank(m) : 0; }
unsigned sm_mpi_local_size(const sm_mpi *m) { return module ? module->local_size(m) : 1; }
int sm_mpi_share_bytes(sm_mpi *m, void **data, size_t *len) { return module ? module->share_bytes(m, data, len) : -1; }
int sm_mpi_send(sm_mpi *m, const uint8_t *data, size_t len) { return module ? module->send(m, data, len) : -1; }
int sm_mpi_send_end(sm_mpi *m) { return module ? module->send_end(m) : -1; }
int sm_mpi_poll(sm_mpi *m) { return module ? module->poll(m) : 0; }
int sm_mpi_receive(sm_mpi *m, unsigned from, int (*consume)(void *, const uint8_t *, size_t), void *ctx) {
    return module ? module->receive(m, from, consume, ctx) : -1;
}
void sm_mpi_stop_others(sm_mpi *m) {
    if (module) module->stop_others(m);
}
int sm_mpi_finish(sm_mpi *m, int status) { return module ? module->finish(m, status) : status; }
void sm_mpi_abort(sm_mpi *m) {
    if (module) module->abort(m);
    exit(2);
}
