/* The CPU backend's state, shared by its files: the thread team and work
 * items (cpu_backend.c) and the overlap-free modes (overlap_free.c). */
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
} cpu_seg;

typedef struct {
    size_t seg_lo, seg_hi;
    sm_sink sink;
    sm_run_list borders;
    int failed;
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
    pthread_t thread;
    sm_engine_set engines;
    uint64_t *counts[2];    /* count mode: per pattern, per ring buffer */
    cpu_batch *holding;     /* count mode: the batch its unfolded visits belong to (under lock) */
} cpu_worker;

struct cpu_backend {
    sm_runner *runner;
    unsigned threads;
    size_t chunk;
    int tally;              /* count mode: threads count into their own counters */
    int overlap_free, speculate;
    cpu_batch batches[2];
    cpu_batch *flight;      /* the older batch launched and not yet landed (under lock) */
    cpu_batch *queued;      /* launched behind it (under lock) */
    cpu_worker *workers;    /* workers[0] is the calling thread */
    pthread_mutex_t lock;
    pthread_cond_t work_ready, work_done;
    int shutting_down;
    unsigned threads_started;
    int team_asked;          /* the worker threads were started (or tried): see start_team */
    /* A feeder's jobs (parallel_for), taken before any item (under lock). */
    void (*job)(void *arg, size_t i);
    void *job_arg;
    size_t jobs, jobs_taken, jobs_done;
    pthread_cond_t jobs_finished;

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
