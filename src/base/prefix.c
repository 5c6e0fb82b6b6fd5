/* Parallel prefix scan, and a parallel-for on the process-wide thread team. */
#include "base/prefix.h"
#include "base/team.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"

/* ------------------------------------------------------------ parallel for */

typedef struct {
    void (*task)(size_t, void *);
    void *ctx;
} for_job;

static void for_task(void *arg, size_t i, unsigned tid) {
    (void)tid;
    const for_job *j = arg;
    j->task(i, j->ctx);
}

/* On the process-wide team (base/team.h), at most `threads` of its threads. */
int sm_parallel_for(size_t tasks, unsigned threads, void (*task)(size_t, void *), void *ctx) {
    if (tasks == 0) return SM_OK;
    if (threads > tasks) threads = (unsigned)tasks;
    for_job j = {task, ctx};
    sm_team *team = threads > 1 ? sm_team_shared(threads) : NULL;
    sm_team_for(team, tasks, for_task, &j, threads);
    return team || threads <= 1 ? SM_OK : SM_ERR_NOMEM;
}

/* ------------------------------------------------------------------ scan */

typedef struct {
    unsigned char *items;
    size_t count, size;
    sm_prefix_op op;
    void *ctx;
    size_t blocks;
    size_t *block_lo;       /* blocks + 1 bounds */
    unsigned char *carry;   /* per block: total of all earlier blocks */
    unsigned char *temp;    /* per block: one element of scratch */
} scan_job;

/* Sequential inclusive scan of items[lo, hi), each element after the first
   combined with the one before it. */
static void scan_range(scan_job *job, size_t lo, size_t hi, unsigned char *temp) {
    const size_t size = job->size;
    for (size_t i = lo + 1; i < hi; i++) {
        unsigned char *cur = job->items + i * size;
        job->op(temp, cur - size, cur, job->ctx);
        memcpy(cur, temp, size);
    }
}

static void scan_block_task(size_t b, void *arg) {
    scan_job *job = arg;
    scan_range(job, job->block_lo[b], job->block_lo[b + 1], job->temp + b * job->size);
}

/* Folds the carry of block b = task + 1 into each of its elements. */
static void fold_block_task(size_t task, void *arg) {
    scan_job *job = arg;
    const size_t b = task + 1;
    const size_t size = job->size;
    const unsigned char *carry = job->carry + b * size;
    unsigned char *temp = job->temp + b * size;
    /* The last element already holds the block total; it is folded as well. */
    for (size_t i = job->block_lo[b]; i < job->block_lo[b + 1]; i++) {
        unsigned char *cur = job->items + i * size;
        job->op(temp, carry, cur, job->ctx);
        memcpy(cur, temp, size);
    }
}

int sm_prefix_scan(void *items, size_t count, size_t size, sm_prefix_op op, void *ctx, unsigned threads) {
    if (count < 2 || size == 0) return SM_OK;
    scan_job job;
    memset(&job, 0, sizeof job);
    job.items = items;
    job.count = count;
    job.size = size;
    job.op = op;
    job.ctx = ctx;
    /* Two elements a block at least, or the extra pass costs more than it saves. */
    size_t blocks = threads > 1 ? threads : 1;
    if (blocks > count / 2) blocks = count / 2;
    if (blocks < 1) blocks = 1;
    job.blocks = blocks;
    job.temp = malloc(blocks * size);
    job.block_lo = malloc((blocks + 1) * sizeof *job.block_lo);
    job.carry = blocks > 1 ? malloc(blocks * size) : NULL;
    if (!job.temp || !job.block_lo || (blocks > 1 && !job.carry)) {
        free(job.temp);
        free(job.block_lo);
        free(job.carry);
        return SM_ERR_NOMEM;
    }
    if (blocks == 1) {
        scan_range(&job, 0, count, job.temp);
    } else {
        /* Block 0 skips the folding pass, so it gets a larger share. */
        size_t first = count * 2 / (blocks + 1);
        if (first < 1) first = 1;
        job.block_lo[0] = 0;
        job.block_lo[1] = first;
        for (size_t b = 2; b <= blocks; b++)
            job.block_lo[b] = first + (count - first) * (b - 1) / (blocks - 1);
        sm_parallel_for(blocks, threads, scan_block_task, &job);
        /* carry[b] = total of blocks 0..b-1, in order. */
        memcpy(job.carry + size, job.items + (job.block_lo[1] - 1) * size, size);
        for (size_t b = 2; b < blocks; b++)
            op(job.carry + b * size, job.carry + (b - 1) * size, job.items + (job.block_lo[b] - 1) * size, ctx);
        sm_parallel_for(blocks - 1, threads, fold_block_task, &job);
    }
    free(job.temp);
    free(job.block_lo);
    free(job.carry);
    return SM_OK;
}
