/* gzip members written in one call, by ISA-L's igzip when the build has it
 * (zlib otherwise): record outputs (seqmatch filter, demux) compress blocks
 * of their output as independent members, which any gzip reader reads as
 * one file. */
#ifndef SM_IO_DEFLATE_H
#define SM_IO_DEFLATE_H

#include <stddef.h>

typedef struct sm_deflater sm_deflater;

/* A compressor for one thread at a time; NULL when out of memory. */
sm_deflater *sm_deflater_new(void);
void sm_deflater_free(sm_deflater *d);

/* Bytes of output that always hold the member of n input bytes. */
size_t sm_gzip_bound(size_t n);

/* Writes in[0, n) as one gzip member to out (cap >= sm_gzip_bound(n)).
   Returns the bytes written, or 0 on failure (out of memory). */
size_t sm_gzip_member(sm_deflater *d, const void *in, size_t n, void *out, size_t cap);

/* The library that writes gzip ("isa-l" or "zlib"). */
const char *sm_deflater_library(void);

#endif /* SM_IO_DEFLATE_H */
