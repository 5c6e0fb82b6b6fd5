/* The MPI side of a distributed search (declared in include/seqmatch_dist.h):
 * mpi.c implements it on the MPI library in a module of its own
 * (libseqmatch-mpi.so, mpi_module.h), and mpi_loader.c loads that module
 * when an MPI launcher started the process. */
#ifndef SM_DIST_MPI_H
#define SM_DIST_MPI_H

#include "seqmatch_dist.h"

#endif /* SM_DIST_MPI_H */
