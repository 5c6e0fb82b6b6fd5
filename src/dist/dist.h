/* One search spread over several processes (the API is
 * include/seqmatch_dist.h): plan.c cuts the input, scan.c is a share's
 * side, stream.c and wire.h the result stream, merge.c the merge, shard.c
 * shard files, mpi_loader.c the MPI module's loader (mpi.c the module). */
#ifndef SM_DIST_H
#define SM_DIST_H

#include "seqmatch_dist.h"
#include "io/seqio.h"

/* What the plan needs of a target (plan.c). */
typedef struct {
    uint64_t size;   /* bytes in the byte space */
    int rangeable;   /* split by bytes: 1 a plain file, 2 BGZF, 0 not */
    int large;       /* read whole although not empty (or of unknown size): worth a warning */
} sm_dist_target;

/* info[i] for each target (sm_dist_plan_make's first half, for a caller
   that cuts several shares' plans from one look at the files). */
int sm_dist_targets_describe(char *const *targets, size_t count, sm_dist_target *info, sm_error *err);
/* sm_dist_plan_make from the targets' descriptions. */
int sm_dist_plan_cut(char *const *targets, size_t count, const sm_dist_target *info, unsigned shares,
                     unsigned share, sm_dist_plan *plan, sm_error *err);

/* Part `part` of `parts` of an outer plan's units (a share cut for several
   readers): the units laid end to end, cut as sm_dist_plan_cut cuts the
   targets (a whole unit to the part its first byte falls in), so that the
   parts in order are the outer plan. info: the targets' descriptions. */
int sm_dist_plan_within(const sm_dist_plan *outer, const sm_dist_target *info, unsigned parts, unsigned part,
                        sm_dist_plan *plan, sm_error *err);
/* Bytes of the plan's ranged units (those that can be cut); *bgzf set when
   one is of a BGZF file (bgzf may be NULL). */
uint64_t sm_dist_plan_bytes(const sm_dist_plan *plan, const sm_dist_target *info, int *bgzf);

/* The share's side for a share read by several readers (local.c): its
   stream, its poll hook (called when set), whether it was stopped,
   whether it is done (stopped, or -q found something), its settings. */
sm_dist_out *sm_dist_share_stream(sm_dist_share *share);
void sm_dist_share_poll(sm_dist_share *share);
int sm_dist_share_stopped(const sm_dist_share *share);
int sm_dist_share_done(const sm_dist_share *share);
const sm_dist_settings *sm_dist_share_settings(const sm_dist_share *share);

/* A share's byte ranges of BGZF files inflated by decoder (NULL: by the
   share's reader threads), until set again. */
void sm_dist_share_set_decoder(sm_dist_share *share, const sm_io_bgzf_decoder *decoder);

#endif /* SM_DIST_H */
