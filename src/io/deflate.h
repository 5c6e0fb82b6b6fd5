/* gzip members written in one call (the public side is
 * include/seqmatch_gzip.h), by ISA-L's igzip when the build has it, zlib
 * otherwise. */
#ifndef SM_IO_DEFLATE_H
#define SM_IO_DEFLATE_H

#include "seqmatch_gzip.h"

#endif /* SM_IO_DEFLATE_H */
