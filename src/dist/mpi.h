/* The MPI side of a distributed search, behind a narrow interface: mpi.c
 * implements it on the MPI library in a module of its own
 * (libseqmatch-mpi.so, mpi_module.h), and the command's mpi_loader.c loads
 * that module when an MPI launcher started it.
 *
 * Rank 0 merges and writes; rank r > 0 sends its result stream to rank 0
 * in chunks, at most a window of them in flight (back-pressure: a rank whose
 * results rank 0 has not taken yet waits). Rank 0 sends every other rank
 * exactly one control message: early to stop (--max-hits reached, -q
 * found), or after the last stream. A rank that fails prints its message
 * and aborts the job (exit status 2). */
#ifndef SM_DIST_MPI_H
#define SM_DIST_MPI_H

#include <stddef.h>
#include <stdint.h>

typedef struct sm_mpi sm_mpi;

/* 1 when the MPI module is there (loaded on the first call), else 0 with
   the reason from sm_mpi_missing. */
int sm_mpi_built(void);
const char *sm_mpi_missing(void);
/* Ranks the launcher says this process is one of (0: not started by an MPI
   launcher; read from the environment, before any MPI call). */
unsigned sm_mpi_launched_size(void);
/* Starts MPI; NULL when it cannot (a message printed). */
sm_mpi *sm_mpi_start(int *argc, char ***argv);
unsigned sm_mpi_rank(const sm_mpi *m);
unsigned sm_mpi_size(const sm_mpi *m);
/* Ranks on this node and this rank's place among them. */
unsigned sm_mpi_local_rank(const sm_mpi *m);
unsigned sm_mpi_local_size(const sm_mpi *m);
/* Rank 0's bytes to every rank: rank 0 passes *data and *len (0: it
   failed), the others get a malloc'd copy (NULL, 0: rank 0 failed). */
int sm_mpi_share_bytes(sm_mpi *m, void **data, size_t *len);
/* Rank r > 0: a chunk of its stream to rank 0 (copied; waits while the
   window is full), then the end. */
int sm_mpi_send(sm_mpi *m, const uint8_t *data, size_t len);
int sm_mpi_send_end(sm_mpi *m);
/* Rank r > 0: progress for the sends in flight; 1 once rank 0 said stop. */
int sm_mpi_poll(sm_mpi *m);
/* Rank 0: rank from's stream, chunk by chunk, until its end. consume
   returns 0, or -1 to fail. */
int sm_mpi_receive(sm_mpi *m, unsigned from, int (*consume)(void *ctx, const uint8_t *data, size_t len), void *ctx);
/* Rank 0: tells every other rank to stop (once). */
void sm_mpi_stop_others(sm_mpi *m);
/* Ends the job with the exit status rank 0 gives; returns it on every rank. */
int sm_mpi_finish(sm_mpi *m, int status);
/* Ends the job at once with exit status 2 (after this rank's message). */
void sm_mpi_abort(sm_mpi *m);

#endif /* SM_DIST_MPI_H */
