/*
 * seqmatch_gzip.h — writing gzip: blocks of output compressed as
 * independent gzip members, which any gzip reader reads back as one file
 * (seqmatch filter and demux write their record files so, a block at a
 * time, on several threads).
 *
 * Part of libseqmatch (shared and static). Members are written by ISA-L's
 * igzip when the library was built with it, by zlib otherwise
 * (sm_deflater_library says which).
 */
#ifndef SEQMATCH_GZIP_H
#define SEQMATCH_GZIP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct sm_deflater sm_deflater;

/* A compressor, used by one thread at a time; NULL when out of memory. */
sm_deflater *sm_deflater_new(void);
void sm_deflater_free(sm_deflater *deflater);

/* Bytes of output that always hold the member of n input bytes. */
size_t sm_gzip_bound(size_t n);

/* Writes in[0, n) as one gzip member to out (cap >= sm_gzip_bound(n)).
   Returns the bytes written, or 0 on failure (out of memory). */
size_t sm_gzip_member(sm_deflater *deflater, const void *in, size_t n, void *out, size_t cap);

/* The library that writes gzip: "isa-l" or "zlib". */
const char *sm_deflater_library(void);

#ifdef SEQMATCH_EXPERIMENTAL
/* Whether seqmatch writes a file of this name as gzip: its name ends in
   .gz (records, hits and reports alike). */
int sm_gzip_by_name(const char *path);
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_GZIP_H */
