/* The reader's internal side: the public reader and pattern files are
 * include/seqmatch_reader.h. */
#ifndef SM_SEQIO_H
#define SM_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"
#include "seqmatch_reader.h"

/* A record's name (and a FASTA pattern's) is its header's first word: it
   ends at white space (space, \t, \n, \v, \f, \r) or a NUL byte; every other
   byte, control bytes included, belongs to it. */
static inline int sm_name_end(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0; }

/* Strips on another team's threads (threads of them, the caller's
   included) instead of starting its own: run(ctx, n, job, arg) runs
   job(arg, i) for i in [0, n) and returns when all have run (a runner's,
   through sm_runner_parallel_for, so that stripping and scanning share the
   cores). Called before the first read. */
void sm_reader_share_threads(sm_reader *reader, unsigned threads,
                             void (*run)(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg),
                             void *ctx);

#endif /* SM_SEQIO_H */
