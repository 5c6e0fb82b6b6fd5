/* One search spread over several processes (the API is
 * include/seqmatch_dist.h): plan.c cuts the input, scan.c is a share's
 * side, stream.c and wire.h the result stream, merge.c the merge, shard.c
 * shard files, mpi_loader.c the MPI module's loader (mpi.c the module). */
#ifndef SM_DIST_H
#define SM_DIST_H

#include "seqmatch_dist.h"
#include "io/seqio.h"

#endif /* SM_DIST_H */
