/* The CPU backend's state, shared by its files: its workers on the runner's
 * thread team and work items (cpu_backend.c) and the overlap-free modes (overlap_free.c). */
#ifndef SM_CPU_BACKEND_H
#define SM_CPU_BACKEND_H

#include <pthread.h>

#include "core/engine_set.h"
#include "runner/runner_internal.h"

/* Where one segment's results lie in its item. */
typedef struct {
    size_t hit_lo, hit_hi;  /* its hits in the item's sink */
    size_t run_lo, run_hi;  /* k edits: its border runs in the item's list */
    size_t fix_lo, fix_hi;  /* speculation: hits found by the re-scan */
    uint32_t end_state;     /* overlap-free: the state its scan ended in */
    int dense;              /* its hits passed the item's bound: none kept */
    size_t sum_lo, sum_hi;  /* summed (c->summed): its least errors in the item's list */
    uint64_t sum_hits;      /* and its hits */
} cpu_seg;

typedef struct {
    size_t seg_lo, seg_hi;
    sm_sink sink;
    sm_run_list borders;
    int failed;
    size_t bytes;           /* scanned */
    size_t most_hits;       /* the most hits one of its segments stored */
    int dense;              /* one of its segments passed the bound */
    sm_pattern_errors_list sums; /* summed, record summaries: its segments' least errors */
} cpu_item;

/* The backend's side of one ring buffer. */
typedef struct {
    sm_batch *batch;
    uint8_t *buf;
    cpu_seg *res;
    size_t res_cap;
    cpu_item *items;
    size_t nitems, items_cap;
    size_t next_item;       /* next item to take (under lock) */
    size_t items_done;      /* items scanned (under lock) */
    unsigned holders;       /* threads holding visits of this batch not yet folded (under lock) */
} cpu_batch;

typedef struct cpu_backend cpu_backend;

typedef struct {
    cpu_backend *cpu;
    unsigned tid;           /* its thread in the runner's team (0: the calling thread) */
    sm_engine_set engines;
    uint64_t *counts[2];    /* count mode: per pattern, per ring buffer */
    cpu_batch *holding;     /* count mode: the batch its unfolded visits belong to (under lock) */
    sm_summer summer;       /* c->summed */
} cpu_worker;

struct cpu_backend {
    sm_runner *runner;
    unsigned threads;
    size_t chunk;
    int tally;              /* count mode: threads count into their own counters */
    /* Hits summed by the threads, none stored (src/runner/summary.c): counting
       where tally cannot (edit runs, PAM, circular edits) and record
       summaries; item_hits then bounds one piece's raw results per thread. */
    int summed;
    size_t item_hits;       /* most hits an item stores (0: no bound) */
    int overlap_free, speculate;
    cpu_batch batches[2];
    cpu_batch *flight;      /* the older batch launched and not yet landed (under lock) */
    cpu_batch *queued;      /* launched behind it (under lock) */
    cpu_worker *workers;    /* one per thread of the runner's team; workers[0] is the calling thread */
    pthread_mutex_t lock;
    pthread_cond_t work_done;

    /* Overlap-free (overlap_free.c). */
    void *chunker;          /* prefix mode: the DFA engine's chunk composer */
    sm_engine_set spec[2];  /* speculation: the true and the speculative run */
    uint32_t carry_state;   /* the DFA state where the last batch left its open record */
    sm_sink fixes;          /* speculation: hits that start before their segment */
    size_t *cuts;
    uint32_t *states;
    size_t cuts_cap;
};

int sm_cpu_overlap_free_open(cpu_backend *c, sm_error *err);
void sm_cpu_overlap_free_close(cpu_backend *c);
/* Prefix mode, before launch: every segment's true start state. */
int sm_cpu_start_states(cpu_backend *c, sm_batch *b);
/* Speculation, after landing: the hits the root start missed, as fixes. */
int sm_cpu_verify_speculation(cpu_backend *c, sm_batch *b);

#endif /* SM_CPU_BACKEND_H */
