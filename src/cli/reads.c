/* What filter and demux share: read records (or pairs of mates in step)
 * with their bytes as read, scan them on a runner, and hand each record's
 * hits and then the record itself to the command, in order.
 *
 * The runner delivers a record's hits and its record-done call some time
 * after the record was fed (a batch or two later), so each record waits in
 * a queue with its bytes: a pointer into the file when the reader reads it
 * in place (a plain file, valid until the reader closes: the runner is
 * flushed at the end of every input), else a copy in an arena that the
 * queue empties as records are decided. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Bytes of a record asked of the reader at a time (as search). */
#define FEED_PIECE ((size_t)64 << 20)

typedef struct {
    cli_reads_job *job;
    sm_runner *runner;
    cli_read_entry *queue; /* ring: oldest first */
    size_t head, count, cap;
    uint8_t *arena;        /* copies of records' bytes, oldest first */
    size_t arena_lo, arena_hi, arena_cap; /* [lo, hi) in use (offsets into arena) */
    int stop;              /* on_done asked to stop */
    cli_progress progress;
} reads_state;

static cli_read_entry *entry_at(reads_state *s, size_t i) { return &s->queue[(s->head + i) % s->cap]; }

static cli_read_entry *push_entry(reads_state *s) {
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        cli_read_entry *q = malloc(cap * sizeof *q);
        if (!q) return NULL;
        for (size_t i = 0; i < s->count; i++) q[i] = *entry_at(s, i);
        free(s->queue);
        s->queue = q;
        s->head = 0;
        s->cap = cap;
    }
    cli_read_entry *e = entry_at(s, s->count++);
    memset(e, 0, sizeof *e);
    e->best_errors = UINT32_MAX;
    return e;
}

/* Copies a record's bytes to the arena; returns their offset, or SIZE_MAX. */
static size_t arena_add(reads_state *s, const uint8_t *data, size_t len) {
    if (s->arena_cap - s->arena_hi < len) {
        /* move what is in use to the front, then grow if that is not enough */
        size_t used = s->arena_hi - s->arena_lo;
        if (s->arena_lo > 0) {
            memmove(s->arena, s->arena + s->arena_lo, used);
            for (size_t i = 0; i < s->count; i++) {
                cli_read_entry *e = entry_at(s, i);
                for (unsigned m = 0; m < e->mates; m++)
                    if (!e->raw[m] && e->raw_len[m]) e->raw_at[m] -= s->arena_lo;
            }
            s->arena_lo = 0;
            s->arena_hi = used;
        }
        if (s->arena_cap - s->arena_hi < len) {
            size_t cap = s->arena_cap ? s->arena_cap : (size_t)1 << 20;
            while (cap - s->arena_hi < len) cap *= 2;
            uint8_t *p = realloc(s->arena, cap);
            if (!p) return SIZE_MAX;
            s->arena = p;
            s->arena_cap = cap;
        }
    }
    memcpy(s->arena + s->arena_hi, data, len);
    s->arena_hi += len;
    return s->arena_hi - len;
}

/* The entry a runner record belongs to: the oldest, normally. */
static cli_read_entry *entry_of(reads_state *s, uint64_t record) {
    for (size_t i = 0; i < s->count; i++) {
        cli_read_entry *e = entry_at(s, i);
        if (e->records && record >= e->first_record && record - e->first_record < e->records) return e;
    }
    return NULL;
}

static int on_hit(const sm_hit *hit, void *ctx) {
    reads_state *s = ctx;
    cli_read_entry *e = entry_of(s, hit->record);
    if (e) s->job->on_hit(e, hit, s->job->ctx);
    return s->stop;
}

static int on_summary(const sm_record_summary *summary, void *ctx) {
    reads_state *s = ctx;
    cli_read_entry *e = entry_of(s, summary->record);
    if (e) s->job->on_summary(e, summary, s->job->ctx);
    return s->stop;
}

static void on_record_done(uint64_t record, void *ctx) {
    reads_state *s = ctx;
    if (s->count == 0) return;
    cli_read_entry *e = entry_at(s, 0);
    if (!e->records || record < e->first_record || record - e->first_record >= e->records) return;
    if (++e->done < e->records) return;
    size_t arena_end = s->arena_lo;
    for (unsigned m = 0; m < e->mates; m++)
        if (!e->raw[m]) {
            e->raw[m] = s->arena + e->raw_at[m];
            if (e->raw_len[m]) arena_end = e->raw_at[m] + e->raw_len[m];
        }
    s->job->entries++;
    if (!s->stop && s->job->on_done(e, s->job->ctx) != 0) s->stop = 1;
    s->arena_lo = arena_end;
    if (s->arena_lo == s->arena_hi) s->arena_lo = s->arena_hi = 0;
    s->head = (s->head + 1) % s->cap;
    s->count--;
}

/* "r7/1" and "r7/2" are one pair. */
static size_t pair_name_length(const char *name) {
    size_t n = strlen(name);
    if (n >= 2 && name[n - 2] == '/' && (name[n - 1] == '1' || name[n - 1] == '2')) n -= 2;
    return n;
}

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "stdin" : path; }

static void report_runner(const char *what, int status) {
    if (status == SM_ERR_NOMEM) cli_error("%s: out of memory while scanning", what);
    else cli_error("%s: %s", what, sm_strerror(status));
}

/* A piece of the current record was fed. */
typedef struct {
    reads_state *state;
    sm_reader *reader;
} feed_context;

static int on_piece_fed(void *ctx, size_t bytes, int record_ended) {
    (void)record_ended;
    feed_context *f = ctx;
    cli_progress_update(&f->state->progress, f->reader, bytes, sm_runner_total(f->state->runner));
    return 0;
}

/* Feeds the current record of reader to the runner (record: its number).
   Returns 0, 1 when the scan stopped (on_done asked), -1 after a message. */
static int feed_record(reads_state *s, sm_reader *reader, const char *path, uint64_t record) {
    sm_error err;
    feed_context f = {s, reader};
    sm_scan_reader_options opts = {.ctx = &f, .on_progress = on_piece_fed, .piece = FEED_PIECE};
    int status = sm_runner_feed_reader(s->runner, reader, &opts, record, NULL, &err);
    if (status == SM_OK) return 0;
    if (status == SM_ERR_TERMINATED && s->stop) return 1;
    cli_progress_clear(&s->progress);
    if (err.message[0]) cli_error("%s", err.message); /* bad input */
    else report_runner(shown(path), status);
    return -1;
}

/* Keeps mate m's bytes with entry e. Returns 0 or -1. */
static int keep_raw(reads_state *s, cli_read_entry *e, unsigned m, sm_reader *reader) {
    const uint8_t *data;
    size_t len;
    int stable;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (sm_reader_record_raw(reader, &data, &len, &stable, &err) < 0) {
        cli_progress_clear(&s->progress);
        cli_error("%s", err.message[0] ? err.message : "read error");
        return -1;
    }
    e->raw_len[m] = len;
    if (stable) {
        e->raw[m] = data;
        return 0;
    }
    size_t at = arena_add(s, data, len);
    if (at == SIZE_MAX) {
        cli_error("out of memory");
        return -1;
    }
    e->raw[m] = NULL;
    e->raw_at[m] = at;
    return 0;
}

static int end_record(reads_state *s, const char *path) {
    int status = sm_runner_end_record(s->runner);
    if (status == SM_ERR_TERMINATED && s->stop) return 1;
    if (status != SM_OK) {
        cli_progress_clear(&s->progress);
        report_runner(shown(path), status);
        return -1;
    }
    return 0;
}

static int open_reader(reads_state *s, const char *path, sm_reader **reader) {
    const cli_options *opts = s->job->opts;
    sm_error err;
    memset(&err, 0, sizeof err);
    sm_input_format format = opts->lines ? SM_INPUT_LINES : SM_INPUT_AUTO;
    int rc = sm_reader_open_threads(path, format, cli_threads(opts->threads), reader, &err);
    if (rc != SM_OK) {
        cli_progress_clear(&s->progress);
        cli_error("%s", err.message[0] ? err.message : sm_strerror(rc));
        return -1;
    }
    sm_reader_keep_raw(*reader);
    sm_input_format got = sm_reader_format(*reader);
    if (s->job->format == SM_INPUT_AUTO) {
        s->job->format = got;
    } else if (got != s->job->format) {
        cli_error("%s: %s, but the input before it is %s; give inputs of one format", shown(path),
                  got == SM_INPUT_FASTQ ? "FASTQ" : "FASTA", s->job->format == SM_INPUT_FASTQ ? "FASTQ" : "FASTA");
        sm_reader_close(*reader);
        *reader = NULL;
        return -1;
    }
    return 0;
}

/* Reads one input (a file, or a pair of files in step) to its end. Returns
   0, 1 when stopped, -1 after a message. */
static int run_input(reads_state *s, const char *path1, const char *path2) {
    cli_reads_job *job = s->job;
    sm_reader *readers[2] = {NULL, NULL};
    const char *paths[2] = {path1, path2};
    unsigned mates = path2 ? 2 : 1;
    int rc = 0;
    for (unsigned m = 0; m < mates && rc == 0; m++) rc = open_reader(s, paths[m], &readers[m]);
    if (rc == 0) cli_progress_begin_file(&s->progress, path1);
    uint64_t pair = 0;
    while (rc == 0) {
        const char *names[2] = {NULL, NULL};
        int more[2] = {0, 0};
        sm_error err;
        memset(&err, 0, sizeof err);
        for (unsigned m = 0; m < mates; m++) {
            more[m] = sm_reader_next_record(readers[m], &names[m], &err);
            if (more[m] < 0) break;
        }
        if (more[0] < 0 || (mates == 2 && more[1] < 0)) {
            cli_progress_clear(&s->progress);
            cli_error("%s", err.message[0] ? err.message : "read error");
            rc = -1;
            break;
        }
        if (mates == 2 && more[0] != more[1]) {
            cli_progress_clear(&s->progress);
            cli_error("%s has more records than %s (%llu); paired files must hold the same reads in the same order",
                      shown(paths[more[0] ? 0 : 1]), shown(paths[more[0] ? 1 : 0]), (unsigned long long)pair);
            rc = -1;
            break;
        }
        if (!more[0]) break;
        if (mates == 2) {
            size_t n0 = pair_name_length(names[0]), n1 = pair_name_length(names[1]);
            if (n0 != n1 || memcmp(names[0], names[1], n0) != 0) {
                cli_progress_clear(&s->progress);
                cli_error("reads out of step: record %llu is '%s' in %s but '%s' in %s", (unsigned long long)pair + 1,
                          names[0], shown(paths[0]), names[1], shown(paths[1]));
                rc = -1;
                break;
            }
        }
        pair++;
        cli_read_entry *e = push_entry(s);
        if (!e) {
            cli_error("out of memory");
            rc = -1;
            break;
        }
        e->mates = mates;
        /* A record-done call may come as a record ends: every mate's bytes
           are kept before the last scanned mate ends. */
        int open = 0;
        const char *open_path = NULL;
        for (unsigned m = 0; m < mates && rc == 0; m++) {
            int scanned = job->scan_mate == 0 || job->scan_mate == m + 1 || mates == 1;
            if (!scanned) {
                rc = keep_raw(s, e, m, readers[m]);
                continue;
            }
            if (open) rc = end_record(s, open_path);
            if (rc != 0) break;
            uint64_t id = sm_runner_begin_record(s->runner);
            if (e->records == 0) e->first_record = id;
            e->records++;
            rc = feed_record(s, readers[m], paths[m], id);
            if (rc == 0) rc = keep_raw(s, e, m, readers[m]);
            open = 1;
            open_path = paths[m];
        }
        if (rc == 0 && open) rc = end_record(s, open_path);
    }
    if (rc == 0) {
        int status = sm_runner_flush(s->runner);
        if (status == SM_ERR_TERMINATED && s->stop) rc = 1;
        else if (status != SM_OK) {
            cli_progress_clear(&s->progress);
            report_runner("scan", status);
            rc = -1;
        }
    }
    for (unsigned m = 0; m < mates; m++) sm_reader_close(readers[m]);
    return rc;
}

int cli_reads_run(cli_reads_job *job, const sm_db *db) {
    const cli_options *opts = job->opts;
    reads_state s;
    memset(&s, 0, sizeof s);
    s.job = job;
    job->format = SM_INPUT_AUTO;
    int show = opts->progress == CLI_PROGRESS_ON || (opts->progress == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO));
    cli_progress_init(&s.progress, show);

    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = opts->threads;
    ro.chunk_size = opts->chunk_size;
    ro.overlap_free = opts->overlap_free;
    ro.backend = opts->gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU;
    ro.anchor = opts->anchor;
    ro.min_overlap = opts->min_overlap;
    /* a command that needs only each record's summary gets no hit list */
    if (job->on_summary) ro.on_record_summary = on_summary;
    else ro.on_hit = on_hit;
    ro.on_record_done = on_record_done;
    ro.ctx = &s;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status = sm_runner_create(db, &ro, &s.runner, &err);
    if (status != SM_OK) {
        cli_error("%s", err.message[0] ? err.message : sm_strerror(status));
        return -1;
    }
    int rc = 0;
    char *stdin_target[] = {"-"};
    if (opts->read1) {
        cli_progress_set_files(&s.progress, (char *const *)&opts->read1, 1);
        rc = run_input(&s, opts->read1, opts->read2);
    } else if (opts->target_count == 0) {
        cli_progress_set_files(&s.progress, stdin_target, 1);
        rc = run_input(&s, "-", NULL);
    } else {
        cli_progress_set_files(&s.progress, opts->targets, opts->target_count);
        for (size_t i = 0; i < opts->target_count && rc == 0; i++) rc = run_input(&s, opts->targets[i], NULL);
    }
    cli_progress_clear(&s.progress);
    if (rc >= 0 && job->summary) job->summary(&s.progress, job->ctx);
    sm_runner_free(s.runner);
    free(s.queue);
    free(s.arena);
    return rc < 0 ? -1 : 0;
}
