/* Ordered delivery of k-edit hits, shared by the runner (between segments,
 * deliver.c) and the merge of distributed shares (between parts,
 * dist/merge.c). A k-edit hit is owned by its end, so a later piece of a
 * record may deliver a hit that starts before an earlier piece's: hits are
 * held, in the order of sm_rawhit_cmp, until their owner knows that nothing
 * later starts before a bound, and then go out. A run of ends cut by a
 * border arrives from both sides and is joined into one run first.
 *
 * The held list does not own the hits' texts: the runner's point into its
 * batch (or a carry buffer), the merge's are its own copies. */
#ifndef SM_RUNNER_ORDERED_H
#define SM_RUNNER_ORDERED_H

#include "base/internal.h"

typedef struct {
    sm_rawhit hit;
    const uint8_t *text;
} sm_held_hit;

typedef struct {
    sm_held_hit *v;        /* in order, unless filled by sm_held_push and not yet sorted */
    size_t n, cap;
    sm_held_hit *spare;    /* the next list, built by sm_held_merge */
    size_t spare_cap;
} sm_held;

/* Where a hit goes out; non-zero stops the delivery and is returned. */
typedef int (*sm_held_emit)(void *ctx, const sm_rawhit *x, const uint8_t *text);

void sm_held_free(sm_held *h);

/* Appends a hit (the order is restored by sm_held_sort). SM_OK or SM_ERR_NOMEM. */
int sm_held_push(sm_held *h, const sm_rawhit *x, const uint8_t *text);
void sm_held_sort(sm_held *h);

/* Inserts a hit in order, after the equal ones. SM_OK or SM_ERR_NOMEM. */
int sm_held_add(sm_held *h, const sm_rawhit *x, const uint8_t *text);

/* Sends the held hits that start before bound, in order. */
int sm_held_release(sm_held *h, uint64_t bound, sm_held_emit emit, void *ctx);

/* Merges three ordered lists: the held hits, n hits whose text lies in
   base (at base's position pos0) and the hits of more (which is emptied);
   those that start before bound go out, the rest stay held in order. Ties
   go to the held hits, then to hits[]. */
int sm_held_merge(sm_held *h, const sm_rawhit *hits, size_t n, const uint8_t *base, uint64_t pos0, sm_held *more,
                  uint64_t bound, sm_held_emit emit, void *ctx);

/* If run continues prev across a border (same pattern and strand, prev
   touching the border on its right, run on its left, their ends adjacent),
   joins them into run: prev's first end, and prev's best when it is as good
   (the earlier part wins ties: leftmost best end). Returns 0 when run does
   not continue prev, 1 when joined with run's best, 2 with prev's. */
int sm_open_run_join(sm_open_run *run, const sm_open_run *prev);

#endif
