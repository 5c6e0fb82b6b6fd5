/* The MPI side of a distributed search (mpi.h), on any MPI library: the
 * MPI module, libseqmatch-mpi.so (mpi_module.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/mpi.h"

enum { TAG_DATA = 1, TAG_END = 2, TAG_CTRL = 3 };

/* A stream goes to rank 0 in messages of at most this many bytes ... */
#define CHUNK ((size_t)1 << 20)
/* ... at most this many in flight per rank (SEQMATCH_MPI_BUFFER in MiB
   changes it): the bytes a rank may be ahead of rank 0. */
#define WINDOW 64u

struct sm_mpi {
    int rank, size, local_rank, local_size;
    unsigned window;
    uint8_t **bufs;
    MPI_Request *reqs;
    int *done;            /* MPI_Testsome's indices */
    MPI_Request ctrl;     /* rank > 0: rank 0's one control message */
    char ctrl_byte;
    int ctrl_done, stopped;
    char *ctrl_sent;      /* rank 0: per rank */
    uint8_t *rbuf;        /* rank 0: a received chunk */
    int rcap;
};

#ifdef OPEN_MPI
/* Open MPI with every rank on this host (mpirun's local size is the
   world's): its "cm" message layer serves networks such as Omni-Path and
   libfabric's providers, and probing for them took 0.2 s of every rank's
   MPI_Init on hosts without them (docs/scaling.md). Left out unless the
   user chose a layer; set OMPI_MCA_pml (cm, say) to choose. Must run
   before MPI_Init, which reads the environment. */
static void skip_network_layers_on_one_host(void) {
    const char *world = getenv("OMPI_COMM_WORLD_SIZE"), *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!world || !local || strcmp(world, local) != 0) return;
    if (getenv("OMPI_MCA_pml") || getenv("OMPI_MCA_mtl")) return;
    setenv("OMPI_MCA_pml", "^cm", 0);
}
#endif

sm_mpi *sm_mpi_start(int *argc, char ***argv) {
    int provided = 0;
#ifdef OPEN_MPI
    skip_network_layers_on_one_host();
#endif
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "seqmatch: MPI could not start\n");
        return NULL;
    }
    sm_mpi *m = calloc(1, sizeof *m);
    if (!m) {
        fprintf(stderr, "seqmatch: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
        return NULL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_rank(local, &m->local_rank);
        MPI_Comm_size(local, &m->local_size);
        MPI_Comm_free(&local);
    } else {
        m->local_rank = 0;
        m->local_size = 1;
    }
    m->window = WINDOW;
    const char *w = getenv("SEQMATCH_MPI_BUFFER");
    if (w && strtoul(w, NULL, 10) > 0) m->window = (unsigned)strtoul(w, NULL, 10);
    m->bufs = calloc(m->window, sizeof *m->bufs);
    m->reqs = malloc(m->window * sizeof *m->reqs);
    m->done = malloc(m->window * sizeof *m->done);
    m->ctrl_sent = calloc((size_t)m->size, 1);
    if (!m->bufs || !m->reqs || !m->done || !m->ctrl_sent) {
        fprintf(stderr, "seqmatch: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (unsigned i = 0; i < m->window; i++) m->reqs[i] = MPI_REQUEST_NULL;
    m->ctrl = MPI_REQUEST_NULL;
    if (m->rank > 0) MPI_Irecv(&m->ctrl_byte, 1, MPI_CHAR, 0, TAG_CTRL, MPI_COMM_WORLD, &m->ctrl);
    return m;
}

unsigned sm_mpi_rank(const sm_mpi *m) { return (unsigned)m->rank; }
unsigned sm_mpi_size(const sm_mpi *m) { return (unsigned)m->size; }
unsigned sm_mpi_local_rank(const sm_mpi *m) { return (unsigned)m->local_rank; }
unsigned sm_mpi_local_size(const sm_mpi *m) { return (unsigned)m->local_size; }

int sm_mpi_share_bytes(sm_mpi *m, void **data, size_t *len) {
    uint64_t n = m->rank == 0 ? (uint64_t)*len : 0;
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (m->rank != 0) {
        *data = NULL;
        *len = 0;
        if (n == 0) return 0;
        *data = malloc((size_t)n);
        if (!*data) {
            fprintf(stderr, "seqmatch: out of memory for %llu bytes from rank 0\n", (unsigned long long)n);
            sm_mpi_abort(m);
        }
        *len = (size_t)n;
    }
    for (uint64_t at = 0; at < n;) {
        int piece = n - at > (1u << 30) ? 1 << 30 : (int)(n - at);
        MPI_Bcast((uint8_t *)*data + at, piece, MPI_BYTE, 0, MPI_COMM_WORLD);
        at += (uint64_t)piece;
    }
    return 0;
}

int sm_mpi_poll(sm_mpi *m) {
    if (m->rank == 0) return 0;
    int done = 0;
    /* progress for the sends in flight (buffers stay until they complete) */
    MPI_Testsome((int)m->window, m->reqs, &done, m->done, MPI_STATUSES_IGNORE);
    if (!m->ctrl_done) {
        int flag = 0;
        MPI_Test(&m->ctrl, &flag, MPI_STATUS_IGNORE);
        if (flag) m->ctrl_done = m->stopped = 1;
    }
    return m->stopped;
}

int sm_mpi_send(sm_mpi *m, const uint8_t *data, size_t len) {
    while (len > 0) {
        size_t n = len < CHUNK ? len : CHUNK;
        int slot = -1;
        for (unsigned i = 0; i < m->window && slot < 0; i++)
            if (m->reqs[i] == MPI_REQUEST_NULL) slot = (int)i;
        if (slot < 0) MPI_Waitany((int)m->window, m->reqs, &slot, MPI_STATUS_IGNORE); /* rank 0 is behind */
        if (!m->bufs[slot] && !(m->bufs[slot] = malloc(CHUNK))) return -1;
        memcpy(m->bufs[slot], data, n);
        MPI_Isend(m->bufs[slot], (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &m->reqs[slot]);
        data += n;
        len -= n;
    }
    return 0;
}

int sm_mpi_send_end(sm_mpi *m) {
    MPI_Waitall((int)m->window, m->reqs, MPI_STATUSES_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_END, MPI_COMM_WORLD);
    return 0;
}

int sm_mpi_receive(sm_mpi *m, unsigned from, int (*consume)(void *, const uint8_t *, size_t), void *ctx) {
    for (;;) {
        MPI_Status st;
        MPI_Probe((int)from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n > m->rcap) {
            uint8_t *p = realloc(m->rbuf, (size_t)n);
            if (!p) return -1;
            m->rbuf = p;
            m->rcap = n;
        }
        MPI_Recv(m->rbuf, n, MPI_BYTE, (int)from, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (st.MPI_TAG == TAG_END) return 0;
        if (consume(ctx, m->rbuf, (size_t)n) != 0) return -1;
    }
}

static void send_ctrl(sm_mpi *m, int to) {
    if (m->ctrl_sent[to]) return;
    char c = 1;
    MPI_Send(&c, 1, MPI_CHAR, to, TAG_CTRL, MPI_COMM_WORLD);
    m->ctrl_sent[to] = 1;
}

void sm_mpi_stop_others(sm_mpi *m) {
    if (m->rank != 0) return;
    for (int r = 1; r < m->size; r++) send_ctrl(m, r);
}

int sm_mpi_finish(sm_mpi *m, int status) {
    if (m->rank == 0) {
        sm_mpi_stop_others(m);
    } else {
        MPI_Waitall((int)m->window, m->reqs, MPI_STATUSES_IGNORE);
        if (!m->ctrl_done) MPI_Wait(&m->ctrl, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (unsigned i = 0; i < m->window; i++) free(m->bufs[i]);
    free(m->bufs);
    free(m->reqs);
    free(m->done);
    free(m->ctrl_sent);
    free(m->rbuf);
    free(m);
    MPI_Finalize();
    return status;
}

void sm_mpi_abort(sm_mpi *m) {
    (void)m;
    fflush(stdout);
    fflush(stderr);
    /* a moment for mpirun to take the rank's last message before the
       abort tears the job down */
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}
