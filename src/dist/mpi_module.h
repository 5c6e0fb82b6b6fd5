/* The MPI module (libseqmatch-mpi.so): mpi.c, linked with the MPI library,
 * as a shared object of its own that the command loads (mpi_loader.c) only
 * when mpirun started it. So the command links no MPI library: a copied
 * binary runs where Open MPI is not installed, and `mpirun -np N seqmatch`
 * stays the command where it is.
 *
 * The module exports one function, SM_MPI_MODULE_ENTRY, that returns the
 * table below; abi and size let the command refuse a module of another
 * version. */
#ifndef SM_DIST_MPI_MODULE_H
#define SM_DIST_MPI_MODULE_H

#include "dist/mpi.h"

#define SM_MPI_MODULE_ABI 1
#define SM_MPI_MODULE_ENTRY "sm_mpi_module_entry"

typedef struct {
    uint32_t abi;   /* SM_MPI_MODULE_ABI */
    uint32_t size;  /* sizeof(sm_mpi_module) */
    sm_mpi *(*start)(int *argc, char ***argv);
    unsigned (*rank)(const sm_mpi *m);
    unsigned (*size_of)(const sm_mpi *m);
    unsigned (*local_rank)(const sm_mpi *m);
    unsigned (*local_size)(const sm_mpi *m);
    int (*share_bytes)(sm_mpi *m, void **data, size_t *len);
    int (*send)(sm_mpi *m, const uint8_t *data, size_t len);
    int (*send_end)(sm_mpi *m);
    int (*poll)(sm_mpi *m);
    int (*receive)(sm_mpi *m, unsigned from, int (*consume)(void *ctx, const uint8_t *data, size_t len), void *ctx);
    void (*stop_others)(sm_mpi *m);
    int (*finish)(sm_mpi *m, int status);
    void (*abort)(sm_mpi *m);
} sm_mpi_module;

typedef const sm_mpi_module *(*sm_mpi_module_entry_fn)(void);

#endif /* SM_DIST_MPI_MODULE_H */
