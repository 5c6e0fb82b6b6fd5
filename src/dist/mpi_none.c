/* A build without MPI: no launcher support (mpi.h). */
#include <stdlib.h>

#include "dist/mpi.h"

int sm_mpi_built(void) { return 0; }

unsigned sm_mpi_launched_size(void) {
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (!v) v = getenv("PMI_SIZE");
    if (!v) v = getenv("PMIX_SIZE");
    return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

sm_mpi *sm_mpi_start(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return NULL;
}
unsigned sm_mpi_rank(const sm_mpi *m) { (void)m; return 0; }
unsigned sm_mpi_size(const sm_mpi *m) { (void)m; return 1; }
unsigned sm_mpi_local_rank(const sm_mpi *m) { (void)m; return 0; }
unsigned sm_mpi_local_size(const sm_mpi *m) { (void)m; return 1; }
int sm_mpi_share_bytes(sm_mpi *m, void **data, size_t *len) { (void)m; (void)data; (void)len; return -1; }
int sm_mpi_send(sm_mpi *m, const uint8_t *data, size_t len) { (void)m; (void)data; (void)len; return -1; }
int sm_mpi_send_end(sm_mpi *m) { (void)m; return -1; }
int sm_mpi_poll(sm_mpi *m) { (void)m; return 0; }
int sm_mpi_receive(sm_mpi *m, unsigned from, int (*consume)(void *, const uint8_t *, size_t), void *ctx) {
    (void)m; (void)from; (void)consume; (void)ctx;
    return -1;
}
void sm_mpi_stop_others(sm_mpi *m) { (void)m; }
int sm_mpi_finish(sm_mpi *m, int status) { (void)m; return status; }
void sm_mpi_abort(sm_mpi *m) { (void)m; exit(2); }
