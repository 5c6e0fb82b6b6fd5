/* One small team of threads, reused for every parallel step of a search
 * (as minimap2's kthread.c: kt_for): a runner owns one (src/runner), and
 * its scanning, the settling of raw results into hits, and the reader's
 * stripping all run on it; code with no runner (the DFA's chunk
 * composition, copies into pinned memory, stripping outside a search) uses
 * one process-wide team.
 *
 * A team of T threads is T - 1 workers and the thread that calls
 * sm_team_for, which takes tasks too. Tasks are handed out in increasing
 * order as threads become free. Besides such loops a team may serve one
 * standing source of work (the CPU backend's scan items), which its idle
 * workers poll after any loop's tasks: a loop started while they scan is
 * taken before their next item, so the text a feeder prepares is ready
 * sooner and no second team competes for the cores.
 */
#ifndef SM_TEAM_H
#define SM_TEAM_H

#include <stddef.h>

typedef struct sm_team sm_team;

/* A team of `threads` threads (the caller of sm_team_for included); fewer
   run when threads cannot be started. The workers start with the first loop
   of several tasks or sm_team_start. NULL when out of memory. */
sm_team *sm_team_new(unsigned threads);
/* Starts the workers now (once; later calls do nothing): before standing
   work that the caller alone should not do. */
void sm_team_start(sm_team *team);
/* Stops and joins the workers (no loop or standing work may be running). */
void sm_team_free(sm_team *team);
/* Threads of the team, the caller's included (at least 1). */
unsigned sm_team_threads(const sm_team *team);

/* Runs job(arg, i, tid) for every i in [0, n) on the caller and the
   workers; returns when all have run. tid is the running thread's index in
   the team: 0 for the caller, 1 .. threads - 1 for the workers, so that a
   job may keep per-thread tables. At most `limit` threads take part (0: all).
   A loop started from inside a job, or while another thread's loop runs,
   runs on the calling thread alone (with that thread's tid, or 0). */
typedef void (*sm_team_job)(void *arg, size_t i, unsigned tid);
void sm_team_for(sm_team *team, size_t n, sm_team_job job, void *arg, unsigned limit);

/* Standing work: idle workers call work(arg, tid), which returns 1 when it
   did something and 0 when there was nothing to do (the worker then sleeps
   until sm_team_wake). NULL stops it; returns once no worker is inside the
   previous one. */
typedef int (*sm_team_work)(void *arg, unsigned tid);
void sm_team_serve(sm_team *team, sm_team_work work, void *arg);
/* New standing work may be there: sleeping workers poll again. */
void sm_team_wake(sm_team *team);

/* The process-wide team, with at least min(threads, online cores) threads
   when it could be started (made on first use, joined at exit). */
sm_team *sm_team_shared(unsigned threads);

#endif /* SM_TEAM_H */
