/* Internal to src/io: FASTA sequence lines stripped on several threads,
 * for a mapped file's long records (strip.c). The serial reader remains the
 * reference: a window holding anything but sequence bytes, blanks and \n
 * line ends (a \r, a bad byte) is left to it. */
#ifndef SM_IO_STRIP_H
#define SM_IO_STRIP_H

#include <stddef.h>
#include <stdint.h>

#include "base/cpu.h"

typedef struct sm_strip_pool sm_strip_pool;

/* 1 when this CPU runs the stripping loops (AVX-512 BW; VBMI2 is used where present). */
int sm_strip_available(void);
/* Blocks run on the process-wide thread team (base/team.h), at most threads
   of its threads; NULL when threads < 2. */
sm_strip_pool *sm_strip_pool_new(unsigned threads);
/* Runs job(arg, i) for i in [0, n) on some team's threads and returns when all have run. */
typedef void (*sm_parallel_for_fn)(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg);
/* A pool without threads of its own: its blocks run through run(ctx, ...),
   a team of threads (as many as threads, the caller's included). */
sm_strip_pool *sm_strip_pool_shared(unsigned threads, sm_parallel_for_fn run, void *ctx);
void sm_strip_pool_free(sm_strip_pool *pool);

typedef struct {
    size_t used;     /* raw bytes consumed: to the marker, or the whole window */
    size_t kept;     /* bytes written to out */
    size_t lines;    /* \n line ends in the bytes used */
    size_t last_eol; /* offset just past the last of them (0: none) */
    int marker;      /* the window's bytes stopped at a marker starting a line */
} sm_strip_result;

/* Strips p[0, n): sequence bytes (letters, '-', '.', '*') to out, blanks
   and \n dropped, up to the first marker that starts a line (line_start:
   whether p[0] starts one). Returns 1 with *res filled, or 0 when the
   window holds a byte the serial reader must see, or the CPU lacks the
   loops (out untouched then). */
int sm_strip_window(sm_strip_pool *pool, const uint8_t *p, size_t n, uint8_t marker, int line_start, uint8_t *out,
                    sm_strip_result *res);

/* memcpy(out, p, n) on the pool's threads. */
void sm_strip_copy(sm_strip_pool *pool, uint8_t *out, const uint8_t *p, size_t n);

#endif /* SM_IO_STRIP_H */
