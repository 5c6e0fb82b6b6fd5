/* The MPI module's one exported function: the table of mpi.c's functions,
 * for the command's loader (mpi_module.h). */
#include "dist/mpi_module.h"

static const sm_mpi_module module = {
    .abi = SM_MPI_MODULE_ABI,
    .size = sizeof(sm_mpi_module),
    .start = sm_mpi_start,
    .rank = sm_mpi_rank,
    .size_of = sm_mpi_size,
    .local_rank = sm_mpi_local_rank,
    .local_size = sm_mpi_local_size,
    .share_bytes = sm_mpi_share_bytes,
    .send = sm_mpi_send,
    .send_end = sm_mpi_send_end,
    .poll = sm_mpi_poll,
    .receive = sm_mpi_receive,
    .stop_others = sm_mpi_stop_others,
    .finish = sm_mpi_finish,
    .abort = sm_mpi_abort,
};

__attribute__((visibility("default"))) const sm_mpi_module *sm_mpi_module_entry(void);
const sm_mpi_module *sm_mpi_module_entry(void) { return &module; }
