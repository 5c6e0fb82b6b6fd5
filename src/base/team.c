/* The thread team (team.h): workers that take a loop's tasks first, then
 * the team's standing work, and otherwise sleep. */
#include "base/team.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 1024u

typedef struct {
    struct sm_team *team;
    unsigned tid;
} worker_arg;

struct sm_team {
    unsigned threads;          /* the caller's included: the workers asked for */
    int asked;                 /* the workers were started (or tried): sm_team_start */
    pthread_t *ids;
    worker_arg *args;
    unsigned started;          /* workers running */
    pthread_mutex_t lock;
    pthread_cond_t wake, done, work_left;
    int stop;
    /* The loop in progress (job != NULL), under lock. */
    sm_team_job job;
    void *arg;
    size_t n, next, finished;
    unsigned limit, joined, generation;
    /* Standing work, under lock. */
    sm_team_work work;
    void *work_arg;
    unsigned in_work;          /* workers inside work() */
    unsigned wakes;            /* sm_team_wake calls, so that none is missed */
};

/* The team a thread is running a task of, and its index there: a loop
   started inside a task runs on that thread alone. */
static _Thread_local sm_team *current_team;
static _Thread_local unsigned current_tid;

static void run_task(sm_team *t, size_t i, unsigned tid) {
    sm_team *outer = current_team;
    unsigned outer_tid = current_tid;
    current_team = t;
    current_tid = tid;
    t->job(t->arg, i, tid);
    current_team = outer;
    current_tid = outer_tid;
}

static void *worker_main(void *p) {
    worker_arg *a = p;
    sm_team *t = a->team;
    unsigned joined_generation = 0;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        if (t->job && t->next < t->n && (joined_generation == t->generation || t->joined < t->limit)) {
            if (joined_generation != t->generation) {
                joined_generation = t->generation;
                t->joined++;
            }
            size_t i = t->next++;
            pthread_mutex_unlock(&t->lock);
            run_task(t, i, a->tid);
            pthread_mutex_lock(&t->lock);
            if (++t->finished == t->n) pthread_cond_broadcast(&t->done);
            continue;
        }
        if (t->work) {
            unsigned seen = t->wakes;
            sm_team_work work = t->work;
            void *arg = t->work_arg;
            t->in_work++;
            pthread_mutex_unlock(&t->lock);
            current_team = t;
            current_tid = a->tid;
            int did = work(arg, a->tid);
            current_team = NULL;
            pthread_mutex_lock(&t->lock);
            if (--t->in_work == 0) pthread_cond_broadcast(&t->work_left);
            if (did || seen != t->wakes) continue;
        }
        pthread_cond_wait(&t->wake, &t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

sm_team *sm_team_new(unsigned threads) {
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    sm_team *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    pthread_cond_init(&t->done, NULL);
    pthread_cond_init(&t->work_left, NULL);
    t->threads = threads;
    if (threads > 1) {
        t->ids = calloc(threads - 1, sizeof *t->ids);
        t->args = calloc(threads - 1, sizeof *t->args);
        if (!t->ids || !t->args) {
            sm_team_free(t);
            return NULL;
        }
        for (unsigned w = 0; w + 1 < threads; w++) t->args[w] = (worker_arg){t, w + 1};
    }
    return t;
}

/* The workers start with the first work that can use them: a short scan,
   one chunk of work, never pays for starting threads (docs/architecture.md,
   "Small inputs"). A worker that cannot start leaves its tasks to the others
   and the caller; tids stay below sm_team_threads. */
void sm_team_start(sm_team *t) {
    if (!t || t->threads == 1) return;
    pthread_mutex_lock(&t->lock);
    if (!t->asked) {
        t->asked = 1;
        for (unsigned w = 0; w + 1 < t->threads; w++) {
            if (pthread_create(&t->ids[w], NULL, worker_main, &t->args[w]) != 0) break;
            t->started++;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void sm_team_free(sm_team *t) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->lock);
    for (unsigned w = 0; w < t->started; w++) pthread_join(t->ids[w], NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->wake);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->work_left);
    free(t->ids);
    free(t->args);
    free(t);
}

unsigned sm_team_threads(const sm_team *t) { return t ? t->threads : 1; }

void sm_team_for(sm_team *t, size_t n, sm_team_job job, void *arg, unsigned limit) {
    if (n == 0) return;
    int inline_run = !t || t->threads == 1 || n == 1 || limit == 1 || current_team == t;
    if (!inline_run) sm_team_start(t);
    if (!inline_run) {
        pthread_mutex_lock(&t->lock);
        if (t->job) inline_run = 1; /* another thread's loop holds the team */
        if (inline_run) pthread_mutex_unlock(&t->lock);
    }
    if (inline_run) {
        unsigned tid = t && current_team == t ? current_tid : 0;
        for (size_t i = 0; i < n; i++) job(arg, i, tid);
        return;
    }
    t->job = job;
    t->arg = arg;
    t->n = n;
    t->next = 0;
    t->finished = 0;
    t->limit = limit ? limit : t->threads;
    t->joined = 1; /* the caller */
    t->generation++;
    pthread_cond_broadcast(&t->wake);
    while (t->next < n) {
        size_t i = t->next++;
        pthread_mutex_unlock(&t->lock);
        run_task(t, i, 0);
        pthread_mutex_lock(&t->lock);
        t->finished++;
    }
    while (t->finished < n) pthread_cond_wait(&t->done, &t->lock);
    t->job = NULL;
    t->arg = NULL;
    pthread_mutex_unlock(&t->lock);
}

void sm_team_serve(sm_team *t, sm_team_work work, void *arg) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->work = work;
    t->work_arg = arg;
    if (work) {
        t->wakes++;
        pthread_cond_broadcast(&t->wake);
    } else {
        while (t->in_work) pthread_cond_wait(&t->work_left, &t->lock);
    }
    pthread_mutex_unlock(&t->lock);
}

void sm_team_wake(sm_team *t) {
    if (!t || t->threads == 1) return;
    pthread_mutex_lock(&t->lock);
    t->wakes++;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------- the shared team */

static sm_team *shared_team;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_free(void) {
    sm_team_free(shared_team);
    shared_team = NULL;
}

static void shared_make(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    shared_team = sm_team_new(cores > 1 ? (unsigned)cores : 1);
    if (shared_team) atexit(shared_free);
}

sm_team *sm_team_shared(unsigned threads) {
    if (threads <= 1) return NULL;
    pthread_once(&shared_once, shared_make);
    return shared_team;
}
