/* Parallel prefix computation (scan) over an array of fixed-size elements
 * with any associative operator, and the small thread helper it runs on.
 *
 * The scan is the blocked three-phase scheme: every thread scans its own
 * block, the block totals are combined in order, and every block but the
 * first folds the total of the blocks before it into its elements. The
 * operator is called only in ways that respect element order, so it need be
 * associative but not commutative, and it needs no identity element.
 */
#ifndef SM_PREFIX_H
#define SM_PREFIX_H

#include <stddef.h>

/* out = left (+) right, where left stands for the earlier elements. out never
   overlaps left or right. */
typedef void (*sm_prefix_op)(void *out, const void *left, const void *right, void *ctx);

/* Inclusive scan in place: items[i] becomes items[0] (+) items[1] (+) ... (+) items[i].
   threads <= 1 scans sequentially. Returns SM_OK or SM_ERR_NOMEM (items
   unchanged when no element has been combined yet). */
int sm_prefix_scan(void *items, size_t count, size_t size, sm_prefix_op op, void *ctx, unsigned threads);

/* Runs task(i, ctx) for every i < tasks on up to threads threads (the caller's
   included), handing out tasks in increasing order as threads become free.
   Returns SM_OK, or SM_ERR_NOMEM when not even one extra thread could be
   started (every task has then run on the calling thread). */
int sm_parallel_for(size_t tasks, unsigned threads, void (*task)(size_t index, void *ctx), void *ctx);

#endif /* SM_PREFIX_H */
