/* Parts of records: a record whose bytes are split between processes (MPI
 * ranks, --shard), each scanning one part with its own runner, the parts put
 * together by whoever merges their results.
 *
 * A part is fed like a record, in its own coordinates (0 at its first
 * byte). It owns the hits that start (k edits: end) in [own_from, own_to):
 *   - exact and k mismatches: own_from 0; own_to the part's length without
 *     the (longest pattern - 1) bytes fed past it for the hits that start in
 *     it, when the record goes on;
 *   - k edits: own_from the database's reach when the part continues a
 *     record (those first bytes are the look-back of its first ends, whose
 *     hits the part before owns), own_to everything fed.
 * With k edits and --report best a run of ends cut by a part's open border
 * cannot be judged by one part: it goes to border() instead of becoming a
 * hit, and the part whose left is open first reports, in left_keys(), for
 * which (pattern, strand) a run touches its left border, so that the merge
 * knows at once which runs of the part before go on.
 */
#ifndef SM_RUNNER_PART_H
#define SM_RUNNER_PART_H

#include "base/internal.h"

enum { SM_PART_LEFT = 1, SM_PART_RIGHT = 2 };

typedef struct sm_part_callbacks {
    /* A run touching the part's open left border, right border or both
       (side: SM_PART_* bits), its best end resolved; text: its best hit's
       bytes (valid during the call). Called in the delivery order of its
       best hit, on the calling thread. */
    void (*border)(uint64_t record, const sm_open_run *run, const uint8_t *text, unsigned side, void *ctx);
    /* The output ids (pattern * 2 + reverse) of the runs that touch the
       left border of a part whose left is open, before any hit of the part. */
    void (*left_keys)(uint64_t record, const uint32_t *keys, size_t n, void *ctx);
    void *ctx;
} sm_part_callbacks;

/* Sets the callbacks (kept by pointer) before the first part; NULL: none. */
void sm_runner_set_part_callbacks(sm_runner *runner, sm_part_callbacks *cb);
/* Starts a part (a record as sm_runner_begin_record otherwise): hits owned
   from own_from on; left_open: the record began in an earlier part. */
uint64_t sm_runner_begin_part(sm_runner *runner, uint64_t own_from, int left_open);
/* Ends it: owned up to own_to (UINT64_MAX: the record ends); right_open:
   the record may go on in a later part. */
int sm_runner_end_part(sm_runner *runner, uint64_t own_to, int right_open);
/* The database's reach: the look-back of a k-edit part that continues a record. */
uint64_t sm_runner_reach(const sm_runner *runner);
/* Bytes fed past a part's owned end for the hits that start in it (exact
   and k mismatches: longest pattern - 1; k edits: the reach). */
uint64_t sm_runner_part_overlap(const sm_runner *runner);

#endif /* SM_RUNNER_PART_H */
