/* Several readers in one process (include/seqmatch_dist.h,
 * sm_dist_run_local): the targets are cut into shares as for MPI ranks
 * (plan.c), a few per reader, and the readers' threads take the shares in
 * order, each with a runner of its own (its own reader and inflater, its
 * own batches, and with the CUDA backend its own pinned buffers and streams
 * on its GPU). Nothing is shared between the readers but the queues below,
 * so that they scale as independent copies do; the caller's thread merges
 * the shares' result streams in share order, as rank 0 merges ranks, so the
 * output is the one process's, byte for byte.
 *
 * With the CUDA backend the GPU's start (its driver and contexts, about a
 * quarter of a second) is hidden for exact matching: until the GPU is ready
 * the readers scan their shares on the CPU, and take the GPU from their
 * next share on. Mismatches and edits cost the CPU far more than the start,
 * and one reader's batches keep a GPU busy: there a reader per GPU waits
 * for it, with the threads shared among the readers. The
 * output waits for the start's outcome, so that a GPU that cannot start
 * still fails before anything is printed.
 *
 * A share ahead of the merge keeps its stream in memory up to
 * QUEUE_LIMIT bytes and then waits for its turn (results are usually few:
 * counts, or hits far fewer than bytes read). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"
#include "seqmatch_dist.h"
#include "seqmatch_output.h"
#include "dist/dist.h"
#include "dist/wire.h"
#include "backends/cuda/cuda_backend.h"

#define STREAM_BUFFER ((size_t)1 << 20)
#define QUEUE_LIMIT ((size_t)256 << 20)
/* Below this many bytes to split, one reader keeps up with the scan. */
#define LOCAL_MIN_BYTES ((uint64_t)256 << 20)
/* Threads from which an exact scan of a plain file on the CPU takes readers. */
#define LOCAL_CPU_READERS_MIN 8
/* A reader's batch on a GPU when none is asked for: each reader's two
   pinned buffers cost their allocation (about 0.7 s a GiB), and many small
   batches in flight keep the GPU fed as well as a few large ones. */
#define LOCAL_GPU_BATCH ((size_t)2 << 20)
/* A share's readers per GPU for mismatches and edits, and their batch: a
   share's reader feeds a record at a time, where a process's one reader
   hands its team many records at once; smaller batches cost the guides'
   kernels their fixed costs more often (docs/scaling.md, "The feed"). */
#define SHARE_GPU_READERS 4
#define SHARE_GPU_BATCH ((size_t)64 << 20)
/* Shares per reader: the readers that finish early take more, and a reader
   on the CPU moves to the GPU soon after it starts. */
#define SHARES_PER_READER 4
/* Exact sets under the CUDA backend: readers scanning on the CPU when the
   GPU is ready move to it at their next share, sooner with smaller ones. */
#define GPU_SHARES_PER_READER 8

typedef struct chunk {
    struct chunk *next;
    size_t len;
    uint8_t data[];
} chunk;

typedef struct local_job local_job;

typedef struct {
    local_job *job;
    unsigned index;
    sm_dist_plan plan;
    sm_dist_out out;
    sm_dist_share *share;
    /* under job->lock */
    chunk *head, *tail;
    size_t queued;
    int ended;
    int failed;
    int done;              /* it stopped with enough: -q found something, --max-hits */
    sm_error err;
} local_share;

/* A reader: a thread taking shares in order, with its runner. */
typedef struct {
    local_job *job;
    unsigned index;
    pthread_t thread;
    int started;
    sm_runner *runner;
    int on_gpu;
    int device;           /* its GPU's index, when on_gpu */
    sm_io_bgzf_decoder *inflater; /* BGZF inflated on its GPU (made once, when a share first needs it) */
    int inflater_tried;
    sm_dist_share *share; /* the share its runner serves now */
    /* the share's callbacks, called with the share it serves */
    int (*on_hit)(const sm_hit *hit, void *ctx);
    void (*on_record_done)(uint64_t record, void *ctx);
} reader;

enum { GPU_STARTING = 0, GPU_READY = 1, GPU_FAILED = -1 };

struct local_job {
    const sm_dist_settings *set;
    const sm_dist_plan *outer; /* a share's units cut for its readers; NULL: the targets */
    sm_dist_share *relay;  /* that share: the shares' streams go into its stream, one after another */
    sm_dist_target *info;  /* the targets, looked at once for every share's plan */
    const sm_db *db;
    sm_runner_options ro;
    char *const *targets;
    sm_input_format format;
    unsigned n;            /* shares */
    local_share *shares;
    unsigned nreaders;
    reader *readers;
    unsigned next;         /* atomic: the next share a reader takes */
    int gpu;               /* the CUDA backend asked for */
    int bgzf;              /* a target is a BGZF file read in ranges */
    int cpu_first;         /* exact matching: readers scan on the CPU while the GPU starts */
    unsigned runner_threads; /* each reader's runner's */
    int gpus;
    int gpu_state;         /* atomic: GPU_STARTING, _READY, _FAILED */
    pthread_t gpu_start;
    int gpu_starting;
    pthread_mutex_t lock;
    pthread_cond_t more;   /* the merge waits for the current share, or for the GPU */
    pthread_cond_t turn;   /* shares ahead wait for room */
    unsigned current;
    int stop;              /* atomic: the merge has enough, or failed: the readers stop */
    int opened;            /* local_open made the lock and the shares */
};

static int set_error(sm_error *e, int code, const char *message) {
    e->code = code;
    snprintf(e->message, sizeof e->message, "%s", message);
    return -1;
}

static int stopping(local_job *j) { return __atomic_load_n(&j->stop, __ATOMIC_ACQUIRE); }
static int gpu_state(local_job *j) { return __atomic_load_n(&j->gpu_state, __ATOMIC_ACQUIRE); }

/* A share's stream: queued for the merge (a share ahead waits for room). */
static int to_queue(void *ctx, const uint8_t *data, size_t len) {
    local_share *sh = ctx;
    local_job *j = sh->job;
    chunk *c = malloc(sizeof *c + len);
    if (!c) return -1;
    c->next = NULL;
    c->len = len;
    memcpy(c->data, data, len);
    pthread_mutex_lock(&j->lock);
    while (!stopping(j) && j->current != sh->index && sh->queued && sh->queued + len > QUEUE_LIMIT)
        pthread_cond_wait(&j->turn, &j->lock);
    /* a relay takes the share it relays to its end, stopped or not, so that
       the stream it writes ends as a stream should */
    int stop = stopping(j) && !(j->relay && j->current == sh->index);
    if (!stop) {
        if (sh->tail) sh->tail->next = c;
        else sh->head = c;
        sh->tail = c;
        sh->queued += len;
        if (j->current == sh->index) pthread_cond_signal(&j->more);
    }
    pthread_mutex_unlock(&j->lock);
    if (stop) free(c);
    return stop ? -1 : 0; /* stopped: the share's writes fail, so it ends soon */
}

/* Between pieces of input: a share stops once the merge needs no more. */
static void poll_stop(void *ctx) {
    local_share *sh = ctx;
    if (stopping(sh->job)) sm_dist_share_stop(sh->share);
}

static void share_failed(local_share *sh, const sm_error *e, const char *fallback) {
    if (sh->failed) return;
    sh->failed = 1;
    if (e && e->message[0]) sh->err = *e;
    else snprintf(sh->err.message, sizeof sh->err.message, "%s", fallback);
    if (!sh->err.code) sh->err.code = SM_ERR_IO;
}

static int reader_hit(const sm_hit *hit, void *ctx) {
    reader *r = ctx;
    return r->on_hit(hit, r->share);
}

static void reader_record_done(uint64_t record, void *ctx) {
    reader *r = ctx;
    r->on_record_done(record, r->share);
}

/* Whether reader i has its BGZF inflated on its GPU: for exact sets the
   first few per GPU, the others inflating on their own threads. On sixteen
   cores, four GPU inflaters beside ten CPU ones beat fourteen of either:
   each GPU inflater costs its pinned buffers at the start, and a reader
   waiting on the GPU leaves its core idle. Mismatches and edits keep the
   GPU busy: their readers inflate on their share of the threads. */
#define GPU_INFLATERS_PER_GPU 4
static int reader_inflates_on_gpu(const local_job *j, unsigned i) {
    unsigned gpus = j->gpus > 1 && j->ro.gpu_device <= 0 ? (unsigned)j->gpus : 1;
    return j->cpu_first && i < GPU_INFLATERS_PER_GPU * gpus;
}

/* The GPU reader i scans on: the one asked for, or the GPUs dealt round. */
static int reader_device(const local_job *j, unsigned i) {
    if (j->ro.gpu_device > 0) return j->ro.gpu_device - 1;
    return j->gpus > 1 ? (int)(i % (unsigned)j->gpus) : 0;
}

/* A reader's runner: the shares' callbacks through the reader, one thread,
   on the GPU (share-independent, dealt round the GPUs) or the CPU. */
static int make_runner(reader *r, sm_dist_share *any, int on_gpu, sm_error *e) {
    local_job *j = r->job;
    sm_runner_options ro = j->ro;
    sm_dist_share_runner_options(any, &ro);
    r->on_hit = ro.on_hit;
    r->on_record_done = ro.on_record_done;
    ro.on_hit = reader_hit;
    ro.on_record_done = reader_record_done;
    ro.ctx = r;
    ro.threads = j->runner_threads;
    ro.backend = on_gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU;
    if (on_gpu) {
        r->device = reader_device(j, r->index);
        ro.gpu_device = r->device + 1;
        if (!ro.chunk_size) ro.chunk_size = j->cpu_first ? LOCAL_GPU_BATCH : j->relay ? SHARE_GPU_BATCH : 0;
    }
    r->on_gpu = on_gpu;
    return sm_runner_create(j->db, &ro, &r->runner, e);
}

/* The plan, stream and share of share sh (its runner comes from a reader). */
static int open_share(local_share *sh, sm_error *e) {
    local_job *j = sh->job;
    int rc = j->outer ? sm_dist_plan_within(j->outer, j->info, j->n, sh->index, &sh->plan, e)
                      : sm_dist_plan_cut(j->targets, j->set->target_count, j->info, j->n, sh->index, &sh->plan, e);
    if (rc != SM_OK) return -1;
    if (sm_dist_out_init(&sh->out, STREAM_BUFFER, to_queue, sh) != SM_OK ||
        sm_dist_share_new(j->set, &sh->out, j->runner_threads, &sh->share) != SM_OK) {
        return set_error(e, SM_ERR_NOMEM, "out of memory");
    }
    sm_dist_share_set_poll(sh->share, poll_stop, sh);
    return 0;
}

/* A failed share's read error as one reader of the whole file words it (a
   reader of a byte range counts no lines): its files read again from their
   start, only when a share failed. */
static void exact_error(local_share *sh) {
    local_job *j = sh->job;
    for (size_t u = 0; u < sh->plan.count; u++) {
        if (sh->plan.units[u].whole) continue; /* read as one reader reads it */
        const char *path = j->targets[sh->plan.units[u].target], *name;
        sm_reader *rd;
        sm_error e;
        memset(&e, 0, sizeof e);
        if (sm_reader_open(path, j->format, &rd, &e) != SM_OK) continue;
        int rc;
        while ((rc = sm_reader_next_record(rd, &name, &e)) == 1) {
            const uint8_t *data;
            size_t len;
            while ((rc = sm_reader_read(rd, &data, &len, &e)) == 1) {
            }
            if (rc < 0) break;
        }
        sm_reader_close(rd);
        if (rc < 0 && e.message[0]) {
            sh->err = e;
            return;
        }
    }
}

/* One share on reader r's runner (made, or moved to the GPU, first). */
static void run_share(reader *r, local_share *sh) {
    local_job *j = r->job;
    sm_error e;
    memset(&e, 0, sizeof e);
    /* the GPU once it started (or failed to: its runner then says why);
       mismatches and edits, which cost the CPU far more, wait for it */
    if (j->gpu && !j->cpu_first) {
        pthread_mutex_lock(&j->lock);
        while (gpu_state(j) == GPU_STARTING) pthread_cond_wait(&j->more, &j->lock);
        pthread_mutex_unlock(&j->lock);
    }
    int on_gpu = j->gpu && gpu_state(j) != GPU_STARTING;
    if (r->runner && on_gpu && !r->on_gpu) {
        sm_runner_free(r->runner);
        r->runner = NULL;
    }
    int ok = r->runner || make_runner(r, sh->share, on_gpu, &e) == SM_OK;
    if (!ok) {
        r->runner = NULL;
        share_failed(sh, &e, "cannot start the scan");
    } else {
        /* BGZF on the GPU the scan is on, where nvCOMP is at hand (else
           inflated on this reader's thread, as on the CPU) */
        if (r->on_gpu && j->bgzf && !r->inflater_tried && reader_inflates_on_gpu(j, r->index)) {
            char msg[256];
            r->inflater_tried = 1;
            r->inflater = sm_cuda_bgzf_decoder_new(r->device, msg);
        }
        sm_dist_share_set_decoder(sh->share, r->on_gpu ? r->inflater : NULL);
        r->share = sh->share;
        sm_dist_share_set_runner(sh->share, r->runner);
        if (sm_dist_share_run(sh->share, j->targets, &sh->plan, j->format, &e) != 0) {
            share_failed(sh, &e, "the share failed");
            /* what it found before the failure still goes out, as one process's would */
            sm_dist_out_flush(&sh->out);
            /* (a relay's share words it as any share reading a range does) */
            if (!stopping(j) && !j->relay) exact_error(sh);
        }
        sh->done = sm_dist_share_done(sh->share); /* (reads the runner's counts: before it serves another share) */
        /* a runner stopped on the way is not used again */
        if (sm_runner_flush(r->runner) != SM_OK) {
            sm_runner_free(r->runner);
            r->runner = NULL;
        }
    }
    pthread_mutex_lock(&j->lock);
    sh->ended = 1;
    pthread_cond_broadcast(&j->more);
    pthread_mutex_unlock(&j->lock);
}

static void *run_reader(void *arg) {
    reader *r = arg;
    local_job *j = r->job;
    for (;;) {
        unsigned k = __atomic_fetch_add(&j->next, 1, __ATOMIC_ACQ_REL);
        if (k >= j->n) break;
        local_share *sh = &j->shares[k];
        if (stopping(j)) {
            share_failed(sh, NULL, "stopped");
            pthread_mutex_lock(&j->lock);
            sh->ended = 1;
            pthread_cond_broadcast(&j->more);
            pthread_mutex_unlock(&j->lock);
            continue;
        }
        run_share(r, sh);
    }
    /* let go here, beside the other readers, not one after another on the merge's thread */
    if (r->runner) sm_runner_free(r->runner);
    r->runner = NULL;
    return NULL;
}

static void *start_gpu(void *arg) {
    local_job *j = arg;
    /* one GPU asked for (an MPI rank's): only it started */
    int one = j->ro.gpu_device > 0 ? j->ro.gpu_device - 1 : -1;
    int state = sm_cuda_prepare(one) > 0 ? GPU_READY : GPU_FAILED;
    if (j->cpu_first) j->gpus = sm_cuda_device_count(); /* read by readers only once the state says ready */
    if (state == GPU_READY && (j->cpu_first || j->relay)) {
        /* every reader's two batch buffers made here while the readers scan
           on the CPU: made by each reader as it moved to the GPU, they held
           the driver while the readers already there waited to queue their
           batches (a tenth of a second a reader) */
        unsigned gpus = j->gpus > 1 && one < 0 ? (unsigned)j->gpus : 1;
        size_t batch = j->ro.chunk_size ? j->ro.chunk_size : j->cpu_first ? LOCAL_GPU_BATCH : SHARE_GPU_BATCH;
        for (unsigned d = 0; d < gpus; d++)
            (void)sm_cuda_reserve(one >= 0 ? one : (int)d, batch, 2 * ((j->nreaders + gpus - 1 - d) / gpus));
        /* and their BGZF inflaters, for the same reason (the readers see them once the state is ready) */
        for (unsigned i = 0; j->bgzf && i < j->nreaders && reader_inflates_on_gpu(j, i); i++) {
            char msg[256];
            j->readers[i].inflater = sm_cuda_bgzf_decoder_new(reader_device(j, i), msg);
            j->readers[i].inflater_tried = 1;
            if (!j->readers[i].inflater) break; /* no nvCOMP: none will do better */
        }
    }
    pthread_mutex_lock(&j->lock);
    __atomic_store_n(&j->gpu_state, state, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&j->more);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

static void stop_all(local_job *j) {
    pthread_mutex_lock(&j->lock);
    __atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&j->turn);
    pthread_mutex_unlock(&j->lock);
}

/* A relay's stream takes a share's bytes as they came. */
static int relay_bytes(local_job *j, const uint8_t *data, size_t len) {
    sm_dist_out *o = sm_dist_share_stream(j->relay);
    if (wire_reserve(o, len) != 0) return -1;
    memcpy(o->buf + o->len, data, len);
    o->len += len;
    return 0;
}

/* The relay's share polled (MPI progress, a stop from rank 0): whether it was stopped. */
static int relay_stopped(local_job *j) {
    sm_dist_share_poll(j->relay);
    return sm_dist_share_stopped(j->relay);
}

/* Waits for share sh's next bytes or its end (the lock held); a relay
   polls its share meanwhile, and stops the readers once it is stopped. */
#define RELAY_POLL_NS 20000000L
static void wait_share(local_job *j, local_share *sh, int *enough) {
    while (!sh->head && !sh->ended) {
        if (!j->relay) {
            pthread_cond_wait(&j->more, &j->lock);
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += RELAY_POLL_NS;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        if (pthread_cond_timedwait(&j->more, &j->lock, &until) == 0 || *enough) continue;
        pthread_mutex_unlock(&j->lock);
        if (relay_stopped(j)) {
            *enough = 1;
            stop_all(j);
        }
        pthread_mutex_lock(&j->lock);
    }
}

/* Takes share k's stream as it comes, to its end: into the merge m, or
   with a relay into its share's stream. Returns 0 to go on, 1 when no later
   share is needed (the merge has enough; the relay was stopped, or the
   share stopped with enough), -1 on failure (err: the merge's, the
   stream's or the share's). */
static int take_share(local_job *j, unsigned k, sm_dist_merge *m, sm_error *err) {
    local_share *sh = &j->shares[k];
    int failed = 0, enough = 0;
    pthread_mutex_lock(&j->lock);
    j->current = k;
    pthread_cond_broadcast(&j->turn);
    for (;;) {
        wait_share(j, sh, &enough);
        chunk *c = sh->head;
        int ended = sh->ended && !c;
        sh->head = sh->tail = NULL;
        sh->queued = 0;
        if (ended) break;
        pthread_mutex_unlock(&j->lock);
        pthread_cond_broadcast(&j->turn);
        while (c) {
            chunk *next = c->next;
            /* a relay passes on the whole share even when stopped: its stream must end whole */
            if (!failed && m && !enough) failed = sm_dist_merge_feed(m, c->data, c->len, err) != 0;
            else if (!failed && !m) failed = relay_bytes(j, c->data, c->len) != 0;
            free(c);
            c = next;
        }
        if (!enough && (m ? sm_dist_merge_done(m) : relay_stopped(j))) enough = 1;
        if (failed || enough) stop_all(j);
        pthread_mutex_lock(&j->lock);
    }
    int share_failed_ = sh->failed, share_done = sh->done;
    pthread_mutex_unlock(&j->lock);
    if (failed && !m) set_error(err, SM_ERR_IO, "the result stream could not be written");
    if (failed) return -1;
    if (m && enough) return 1;
    if (share_failed_) {
        *err = sh->err;
        stop_all(j);
        return -1;
    }
    if (m) return sm_dist_merge_share_end(m, err) != 0 ? (stop_all(j), -1) : 0;
    if (enough || share_done) {
        stop_all(j);
        return 1;
    }
    return 0;
}

/* Every share's stream in order (into m, or the relay's stream, each after
   the first announced there); stops the readers on a failure. */
static int take_shares(local_job *j, sm_dist_merge *m, sm_error *err) {
    for (unsigned k = 0; k < j->n; k++) {
        int got = take_share(j, k, m, err);
        if (got != 0) return got < 0 ? -1 : 0;
        if (!m && k + 1 < j->n) wire_mark(sm_dist_share_stream(j->relay), MSG_NEXT);
    }
    return 0;
}

/* Each target's first piece of sequence, as one reader hands it out, to
   the caller's check (sm_scan_files_options.on_first_sequence). */
static void first_sequences(local_job *j, const sm_scan_files_options *files) {
    for (size_t i = 0; files && files->on_first_sequence && i < j->set->target_count; i++) {
        const char *name;
        sm_reader *rd;
        sm_error e;
        if (sm_reader_open(j->targets[i], j->format, &rd, &e) != SM_OK) continue;
        int found = 0;
        while (!found && sm_reader_next_record(rd, &name, &e) == 1) {
            const uint8_t *data;
            size_t len;
            while (!found && sm_reader_read(rd, &data, &len, &e) == 1)
                if (len) found = 1, files->on_first_sequence(files->ctx, j->targets[i], name, data, len);
        }
        sm_reader_close(rd);
    }
}

/* Readers for `split` bytes that can be cut (bgzf: some of them BGZF), or 0
   when one reader serves as well; asked: SEQMATCH_READERS=N (N readers
   whatever the rest, 0 or 1: none), or -1. */
static unsigned readers_for(unsigned threads, long asked, uint64_t split, int bgzf, int gpu, int exact, int share) {
    if (asked >= 0) threads = asked > 1024 ? 1024 : (unsigned)asked;
    if (threads < 2) return 0;
    /* A BGZF file, and any file for the GPU, gain from readers of their own;
       on the CPU an exact set over a plain file too once there are many
       cores (sixteen: 13 % faster than one reader with the team's threads),
       while on a few the team's many records at once do as well.
       Mismatches and edits keep a GPU busy with one reader's plain file;
       of BGZF one reader strips too little for two GPUs (a reader per GPU
       then, each inflating on its share of the threads). */
    int plain_cpu_gains = exact && threads >= LOCAL_CPU_READERS_MIN;
    if (asked < 0 && share && gpu && !exact && !bgzf)
        return split < LOCAL_MIN_BYTES ? 0 : threads < SHARE_GPU_READERS ? threads : SHARE_GPU_READERS;
    if (asked < 0 && (split < LOCAL_MIN_BYTES || (!gpu && !bgzf && !plain_cpu_gains) || (gpu && !exact && !bgzf)))
        return 0;
    /* Two cores left to the GPU's start (the driver and contexts: CPU work
       that sixteen readers on sixteen cores slowed by half) and the merge. */
    if (asked < 0 && gpu && threads > 4) threads -= 2;
    return threads;
}

static long readers_asked(void) {
    const char *forced = getenv("SEQMATCH_READERS");
    return forced && *forced ? strtol(forced, NULL, 10) : -1;
}

/* The targets' descriptions (with a plan only its units' targets, each in
   one unit), or NULL when one of them is standard input, a pipe or a
   device: one reader. */
static sm_dist_target *cuttable(char *const *targets, size_t count, const sm_dist_plan *plan) {
    sm_dist_target *info = calloc(count ? count : 1, sizeof *info);
    sm_error e;
    int ok = info != NULL;
    for (size_t k = 0; ok && k < (plan ? plan->count : count); k++) {
        size_t i = plan ? plan->units[k].target : k;
        ok = sm_dist_targets_describe(&targets[i], 1, &info[i], &e) == SM_OK && strcmp(targets[i], "-") != 0 &&
             !(info[i].large && !info[i].size);
    }
    if (!ok) free(info);
    return ok ? info : NULL;
}

unsigned sm_dist_local_shares(char *const *targets, size_t count, unsigned threads, int gpu, int exact) {
    long asked = readers_asked();
    if (asked == 0 || asked == 1 || (asked < 0 && threads < 2)) return 0;
    sm_dist_target *info = cuttable(targets, count, NULL);
    if (!info) return 0;
    uint64_t split = 0;
    int bgzf = 0;
    for (size_t i = 0; i < count; i++) {
        if (info[i].rangeable) split += info[i].size;
        if (info[i].rangeable == 2) bgzf = 1;
    }
    free(info);
    return readers_for(threads, asked, split, bgzf, gpu, exact, 0);
}

unsigned sm_dist_share_readers(const sm_dist_plan *plan, char *const *targets, size_t count, unsigned threads,
                               int gpu, int exact) {
    long asked = readers_asked();
    if (asked == 0 || asked == 1 || (asked < 0 && threads < 2)) return 0;
    sm_dist_target *info = cuttable(targets, count, plan);
    if (!info) return 0;
    int bgzf = 0;
    uint64_t split = sm_dist_plan_bytes(plan, info, &bgzf);
    free(info);
    return readers_for(threads, asked, split, bgzf, gpu, exact, 1);
}

/* With the CUDA backend: waits for the GPU's start; a GPU that cannot
   start fails here, before any output, with its runner's message. */
static int gpu_started(local_job *j, sm_error *err) {
    if (!j->gpu) return 0;
    pthread_mutex_lock(&j->lock);
    while (gpu_state(j) == GPU_STARTING) pthread_cond_wait(&j->more, &j->lock);
    pthread_mutex_unlock(&j->lock);
    if (gpu_state(j) == GPU_READY) return 0;
    sm_runner_options ro = j->ro;
    sm_runner *runner = NULL;
    sm_dist_share_runner_options(j->shares[0].share, &ro);
    ro.threads = 1;
    if (sm_runner_create(j->db, &ro, &runner, err) == SM_OK) {
        sm_runner_free(runner); /* cannot happen: the start failed */
        set_error(err, SM_ERR_DEVICE, "the GPU did not start");
    }
    return -1;
}

/* The job's readers and shares (its settings, targets and format set,
   and for a relay its share and plan): the GPU's start begun, the shares
   cut and opened. Returns 0, or -1 (err; local_close still frees). */
static int local_open(local_job *j, const sm_db *db, const sm_runner_options *opts, unsigned readers, sm_error *err) {
    if (readers == 0) readers = 1;
    j->db = db;
    j->ro = *opts;
    j->gpu = opts->backend == SM_BACKEND_CUDA;
    uint64_t match = SM_MATCH_EXACT;
    j->cpu_first = sm_db_get(db, SM_DB_MATCH, &match) == SM_OK && match == SM_MATCH_EXACT;
    j->runner_threads = 1;
    /* Exact matching learns the GPUs on the start's thread: the driver's own
       start (about 0.1 s) would otherwise come before the readers'. */
    if (j->gpu && !j->cpu_first) j->gpus = sm_cuda_device_count();
    if (j->gpu && !j->cpu_first) {
        /* mismatches and edits keep a GPU busy with one reader's batches:
           a reader per GPU, the threads shared among them, full batches */
        unsigned per_gpu = j->gpus > 1 && opts->gpu_device <= 0 ? (unsigned)j->gpus : 1;
        if (j->relay) per_gpu *= SHARE_GPU_READERS;
        unsigned threads = opts->threads ? opts->threads : readers;
        if (readers > per_gpu) readers = per_gpu;
        j->runner_threads = threads / readers ? threads / readers : 1;
    }
    j->nreaders = readers;
    j->n = readers * (j->gpu && j->cpu_first ? GPU_SHARES_PER_READER : SHARES_PER_READER);
    j->shares = calloc(j->n, sizeof *j->shares);
    j->readers = calloc(readers, sizeof *j->readers);
    j->info = calloc(j->set->target_count ? j->set->target_count : 1, sizeof *j->info);
    if (!j->shares || !j->readers || !j->info) {
        free(j->shares);
        free(j->readers);
        free(j->info);
        j->shares = NULL, j->readers = NULL, j->info = NULL;
        return set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->more, NULL);
    pthread_cond_init(&j->turn, NULL);
    j->opened = 1;
    /* (what the targets are, before the GPU's start: it makes BGZF inflaters) */
    if (sm_dist_targets_describe(j->targets, j->set->target_count, j->info, err) != SM_OK) return -1;
    for (size_t i = 0; i < j->set->target_count; i++) j->bgzf |= j->info[i].rangeable == 2;
    if (j->gpu) {
        j->gpu_starting = pthread_create(&j->gpu_start, NULL, start_gpu, j) == 0;
        if (!j->gpu_starting) start_gpu(j);
    }
    for (unsigned k = 0; k < j->n; k++) {
        j->shares[k].job = j;
        j->shares[k].index = k;
    }
    for (unsigned k = 0; k < j->n; k++)
        if (open_share(&j->shares[k], err) != 0) return -1;
    for (unsigned i = 0; i < readers; i++) {
        j->readers[i].job = j;
        j->readers[i].index = i;
    }
    return 0;
}

/* The readers' threads started (reader 0's runner may be made already). */
static int start_readers(local_job *j, sm_error *err) {
    for (unsigned i = 0; i < j->nreaders; i++) {
        reader *r = &j->readers[i];
        r->started = pthread_create(&r->thread, NULL, run_reader, r) == 0;
        if (!r->started) return set_error(err, SM_ERR_NOMEM, "cannot start a reader thread");
    }
    return 0;
}

/* After the streams were taken (or a failure): the readers and the GPU's
   start joined, everything freed. */
static void local_close(local_job *j) {
    if (!j->opened) return;
    for (unsigned i = 0; i < j->nreaders; i++) {
        reader *r = &j->readers[i];
        if (r->started) pthread_join(r->thread, NULL);
        if (r->runner) sm_runner_free(r->runner);
    }
    if (j->gpu_starting) pthread_join(j->gpu_start, NULL);
    /* (the start's thread may make a reader's inflater after the reader has ended) */
    for (unsigned i = 0; i < j->nreaders; i++) sm_cuda_bgzf_decoder_free(j->readers[i].inflater);
    for (unsigned k = 0; k < j->n; k++) {
        local_share *sh = &j->shares[k];
        for (chunk *c = sh->head; c;) {
            chunk *next = c->next;
            free(c);
            c = next;
        }
        sm_dist_share_free(sh->share);
        sm_dist_out_free(&sh->out);
        sm_dist_plan_free(&sh->plan);
    }
    pthread_cond_destroy(&j->turn);
    pthread_cond_destroy(&j->more);
    pthread_mutex_destroy(&j->lock);
    free(j->shares);
    free(j->readers);
    free(j->info);
}

int sm_dist_run_local(sm_dist_settings *set, const sm_db *db, const sm_runner_options *opts, char *const *targets,
                      sm_input_format format, unsigned readers, const sm_scan_files_options *files,
                      const sm_dist_sink *sink, sm_error *err) {
    memset(err, 0, sizeof *err);
    local_job job;
    memset(&job, 0, sizeof job);
    local_job *j = &job;
    j->set = set;
    j->targets = targets;
    j->format = format;
    sm_dist_merge *merge = NULL;
    int rc = local_open(j, db, opts, readers, err);
    /* the settings take what the merge needs (the reach of k edits) from a runner: the first reader's */
    if (rc == 0 && make_runner(&j->readers[0], j->shares[0].share, 0, err) != SM_OK) rc = -1;
    if (rc == 0) sm_dist_settings_fill(set, j->readers[0].runner);
    if (rc == 0 && sm_dist_merge_new(set, sink, &merge) != SM_OK) rc = set_error(err, SM_ERR_NOMEM, "out of memory");
    if (rc == 0) rc = start_readers(j, err);
    if (rc == 0) rc = gpu_started(j, err);
    if (rc == 0) first_sequences(j, files);
    if (rc == 0) rc = take_shares(j, merge, err);
    if (rc != 0) stop_all(j);
    /* every share has ended: the output's end goes out while the readers let go of their runners */
    if (rc == 0) rc = sm_dist_merge_finish(merge, err);
    local_close(j);
    sm_dist_merge_free(merge);
    return rc;
}

int sm_dist_share_run_readers(sm_dist_share *share, const sm_db *db, const sm_runner_options *opts,
                              char *const *targets, const sm_dist_plan *plan, sm_input_format format,
                              unsigned readers, sm_error *err) {
    memset(err, 0, sizeof *err);
    local_job job;
    memset(&job, 0, sizeof job);
    local_job *j = &job;
    j->set = sm_dist_share_settings(share);
    j->targets = targets;
    j->format = format;
    j->outer = plan;
    j->relay = share;
    int rc = j->set->max_hits == 0 ? 0 : local_open(j, db, opts, readers, err);
    if (rc == 0 && j->opened) rc = start_readers(j, err);
    if (rc == 0 && j->opened) rc = gpu_started(j, err);
    if (rc == 0 && j->opened) rc = take_shares(j, NULL, err);
    if (rc != 0 && j->opened) stop_all(j);
    local_close(j);
    sm_dist_out *o = sm_dist_share_stream(share);
    if (rc == 0 && !j->opened) {
        /* --max-hits 0: nothing to look for, as one reader's share */
        wire_mark(o, MSG_END);
    }
    if (rc == 0 && (sm_dist_out_flush(o) != 0 || o->failed))
        rc = set_error(err, SM_ERR_IO, "the result stream could not be written");
    return rc;
}
