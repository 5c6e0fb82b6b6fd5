/* Records with their bytes as read and their hits, in order
 * (include/seqmatch_reader.h, sm_reads_*): the loop of seqmatch filter and
 * demux. Records (or pairs of mates read in step) are fed to a runner and
 * wait in a queue until the runner has delivered their hits.
 *
 * The runner delivers a record's summary and its record-done call some time
 * after the record was fed (a batch or two later), so each record waits
 * with its bytes: a pointer into the file when the reader reads it in place
 * (valid until the reader closes: the runner is flushed at the end of every
 * input), else a copy in an arena that the queue empties as records go. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_reader.h"
#include "io/source.h"

/* Bytes of a record asked of the reader at a time. */
#define FEED_PIECE ((size_t)64 << 20)
/* What the steps below return when on_record asked to stop (errors are SM_ERR_*). */
#define STOPPED (-1)

typedef struct {
    sm_read_record rec;
    uint64_t first_record; /* runner record of the first scanned mate */
    unsigned records;      /* runner records it spans (mates scanned) */
    unsigned done;         /* of them delivered */
    size_t raw_at[2];      /* in the arena when not stable (rec.raw[] NULL until delivered) */
} queued;

struct sm_reads {
    sm_reads_options o;
    sm_runner *runner;
    sm_input_format format; /* of the first input read */
    queued *queue;          /* ring: oldest first */
    size_t head, count, cap;
    uint8_t *arena;         /* copies of records' bytes, oldest first */
    size_t arena_lo, arena_hi, arena_cap; /* [lo, hi) in use */
    int stop;               /* on_record asked to stop */
    const sm_reader *reader; /* the one being fed, for on_progress */
};

static int fail_read(sm_error *err, const sm_error *from, int code) {
    return sm_io_error(err, code ? code : SM_ERR_IO, "%s", from->message[0] ? from->message : "read error");
}

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "stdin" : path; }

static int fail_runner(sm_error *err, const char *what, int status) {
    if (status == SM_ERR_NOMEM) return sm_io_error(err, status, "%s: out of memory while scanning", what);
    return sm_io_error(err, status, "%s: %s", what, sm_strerror(status));
}

static queued *entry_at(sm_reads *s, size_t i) { return &s->queue[(s->head + i) % s->cap]; }

static queued *push_entry(sm_reads *s) {
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        queued *q = malloc(cap * sizeof *q);
        if (!q) return NULL;
        for (size_t i = 0; i < s->count; i++) q[i] = *entry_at(s, i);
        free(s->queue);
        s->queue = q;
        s->head = 0;
        s->cap = cap;
    }
    queued *e = entry_at(s, s->count++);
    memset(e, 0, sizeof *e);
    return e;
}

/* Copies a record's bytes to the arena; returns their offset, or SIZE_MAX. */
static size_t arena_add(sm_reads *s, const uint8_t *data, size_t len) {
    if (s->arena_cap - s->arena_hi < len) {
        /* move what is in use to the front, then grow if that is not enough */
        size_t used = s->arena_hi - s->arena_lo;
        if (s->arena_lo > 0) {
            memmove(s->arena, s->arena + s->arena_lo, used);
            for (size_t i = 0; i < s->count; i++) {
                queued *e = entry_at(s, i);
                for (unsigned m = 0; m < e->rec.mates; m++)
                    if (!e->rec.raw[m] && e->rec.raw_len[m]) e->raw_at[m] -= s->arena_lo;
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
static queued *entry_of(sm_reads *s, uint64_t record) {
    for (size_t i = 0; i < s->count; i++) {
        queued *e = entry_at(s, i);
        if (e->records && record >= e->first_record && record - e->first_record < e->records) return e;
    }
    return NULL;
}

static int on_summary(const sm_record_summary *summary, void *ctx) {
    sm_reads *s = ctx;
    queued *e = entry_of(s, summary->record);
    if (e) {
        e->rec.hits += summary->hits;
        if (s->o.on_summary) s->o.on_summary(s->o.ctx, &e->rec, summary);
    }
    return s->stop;
}

static void on_record_done(uint64_t record, void *ctx) {
    sm_reads *s = ctx;
    if (s->count == 0) return;
    queued *e = entry_at(s, 0);
    if (!e->records || record < e->first_record || record - e->first_record >= e->records) return;
    if (++e->done < e->records) return;
    size_t arena_end = s->arena_lo;
    for (unsigned m = 0; m < e->rec.mates; m++)
        if (!e->rec.raw[m]) {
            e->rec.raw[m] = s->arena + e->raw_at[m];
            if (e->rec.raw_len[m]) arena_end = e->raw_at[m] + e->rec.raw_len[m];
        }
    if (!s->stop && s->o.on_record && s->o.on_record(s->o.ctx, &e->rec) != 0) s->stop = 1;
    s->arena_lo = arena_end;
    if (s->arena_lo == s->arena_hi) s->arena_lo = s->arena_hi = 0;
    s->head = (s->head + 1) % s->cap;
    s->count--;
}

int sm_reads_new(const sm_db *db, const sm_runner_options *runner_options, const sm_reads_options *opts,
                 sm_reads **reads, sm_error *err) {
    *reads = NULL;
    memset(err, 0, sizeof *err);
    sm_reads *s = calloc(1, sizeof *s);
    if (!s) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    s->o = *opts;
    s->format = SM_INPUT_AUTO;
    sm_runner_options ro;
    if (runner_options) ro = *runner_options;
    else sm_runner_options_init(&ro);
    ro.on_hit = NULL; /* only each record's summary: no hit list */
    ro.on_record_summary = on_summary;
    ro.on_record_done = on_record_done;
    ro.ctx = s;
    int status = sm_runner_create(db, &ro, &s->runner, err);
    if (status != SM_OK) {
        free(s);
        return status;
    }
    *reads = s;
    return SM_OK;
}

sm_input_format sm_reads_format(const sm_reads *reads) { return reads->format; }


void sm_reads_free(sm_reads *reads) {
    if (!reads) return;
    sm_runner_free(reads->runner);
    free(reads->queue);
    free(reads->arena);
    free(reads);
}

static int on_piece_fed(void *ctx, size_t bytes, int record_ended) {
    (void)record_ended;
    sm_reads *s = ctx;
    if (s->o.on_progress) s->o.on_progress(s->o.ctx, s->reader, bytes, sm_runner_total(s->runner));
    return 0;
}

/* Feeds the current record of reader to the runner (record: its number).
   Returns 0, STOPPED, or an error. */
static int feed_record(sm_reads *s, sm_reader *reader, const char *path, uint64_t record, sm_error *err) {
    sm_error e;
    e.code = 0, e.message[0] = '\0'; /* what is read of it below; a memset per record costs
                                      as much as the record's queue entry */
    sm_scan_reader_options opts = {.ctx = s, .on_progress = on_piece_fed, .piece = FEED_PIECE};
    s->reader = reader;
    int status = sm_runner_feed_reader(s->runner, reader, &opts, record, NULL, &e);
    if (status == SM_OK) return 0;
    if (status == SM_ERR_TERMINATED && s->stop) return STOPPED;
    if (e.message[0]) return sm_io_error(err, status, "%s", e.message); /* bad input */
    return fail_runner(err, shown(path), status);
}

/* Keeps mate m's bytes with entry e. */
static int keep_raw(sm_reads *s, queued *e, unsigned m, sm_reader *reader, sm_error *err) {
    const uint8_t *data;
    size_t len;
    int stable;
    sm_error e2;
    e2.code = 0, e2.message[0] = '\0';
    int rc = sm_reader_record_raw(reader, &data, &len, &stable, &e2);
    if (rc < 0) return fail_read(err, &e2, e2.code);
    e->rec.raw_len[m] = len;
    if (stable) {
        e->rec.raw[m] = data;
        return 0;
    }
    size_t at = arena_add(s, data, len);
    if (at == SIZE_MAX) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    e->rec.raw[m] = NULL;
    e->raw_at[m] = at;
    return 0;
}

static int end_record(sm_reads *s, const char *path, sm_error *err) {
    int status = sm_runner_end_record(s->runner);
    if (status == SM_ERR_TERMINATED && s->stop) return STOPPED;
    return status == SM_OK ? 0 : fail_runner(err, shown(path), status);
}

static const char *format_name(sm_input_format f) { return f == SM_INPUT_FASTQ ? "FASTQ" : "FASTA"; }

static int open_reader(sm_reads *s, const char *path, sm_reader **reader, sm_error *err) {
    sm_error e;
    e.code = 0, e.message[0] = '\0';
    int rc = sm_reader_open_threads(path, s->o.format, s->o.reader_threads, reader, &e);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s", e.message[0] ? e.message : sm_strerror(rc));
    sm_reader_keep_raw(*reader);
    sm_input_format got = sm_reader_format(*reader);
    if (s->format == SM_INPUT_AUTO) {
        s->format = got;
    } else if (got != s->format) {
        sm_reader_close(*reader);
        *reader = NULL;
        return sm_io_error(err, SM_ERR_INVALID, "%s: %s, but the input before it is %s; give inputs of one format",
                    shown(path), format_name(got), format_name(s->format));
    }
    return 0;
}

/* "r7/1" and "r7/2" are one pair. */
static size_t pair_name_length(const char *name) {
    size_t n = strlen(name);
    if (n >= 2 && name[n - 2] == '/' && (name[n - 1] == '1' || name[n - 1] == '2')) n -= 2;
    return n;
}

/* Reads the next record of each reader (*more: 1 a record or pair, 0 the end). */
static int next_pair(sm_reader **readers, const char **paths, unsigned mates, uint64_t pair, int *more_out,
                     sm_error *err) {
    const char *names[2] = {NULL, NULL};
    int more[2] = {0, 0};
    sm_error e;
    e.code = 0, e.message[0] = '\0';
    for (unsigned m = 0; m < mates; m++)
        if ((more[m] = sm_reader_next_record(readers[m], &names[m], &e)) < 0)
            return fail_read(err, &e, e.code);
    if (mates == 2 && more[0] != more[1])
        return sm_io_error(err, SM_ERR_FORMAT,
                    "%s has more records than %s (%llu); paired files must hold the same reads in the same order",
                    shown(paths[more[0] ? 0 : 1]), shown(paths[more[0] ? 1 : 0]), (unsigned long long)pair);
    if (mates == 2 && more[0]) {
        size_t n0 = pair_name_length(names[0]), n1 = pair_name_length(names[1]);
        if (n0 != n1 || memcmp(names[0], names[1], n0) != 0)
            return sm_io_error(err, SM_ERR_FORMAT, "reads out of step: record %llu is '%s' in %s but '%s' in %s",
                        (unsigned long long)pair + 1, names[0], shown(paths[0]), names[1], shown(paths[1]));
    }
    *more_out = more[0];
    return 0;
}

/* One record (pair): every mate's bytes are kept before the last scanned
   mate ends, as its record-done call may come as it ends. */
static int scan_pair(sm_reads *s, sm_reader **readers, const char **paths, unsigned mates, sm_error *err) {
    queued *e = push_entry(s);
    if (!e) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    e->rec.mates = mates;
    int rc = 0;
    const char *open_path = NULL;
    for (unsigned m = 0; m < mates && rc == 0; m++) {
        if (mates == 2 && s->o.scan_mate != 0 && s->o.scan_mate != m + 1) {
            rc = keep_raw(s, e, m, readers[m], err);
            continue;
        }
        if (open_path && (rc = end_record(s, open_path, err)) != 0) break;
        uint64_t id = sm_runner_begin_record(s->runner);
        if (e->records++ == 0) e->first_record = id;
        rc = feed_record(s, readers[m], paths[m], id, err);
        if (rc == 0) rc = keep_raw(s, e, m, readers[m], err);
        open_path = paths[m];
    }
    if (rc == 0 && open_path) rc = end_record(s, open_path, err);
    return rc;
}

int sm_reads_run(sm_reads *s, const char *path1, const char *path2, sm_error *err) {
    memset(err, 0, sizeof *err);
    sm_reader *readers[2] = {NULL, NULL};
    const char *paths[2] = {path1, path2};
    unsigned mates = path2 ? 2 : 1;
    int rc = 0;
    for (unsigned m = 0; m < mates && rc == 0; m++) rc = open_reader(s, paths[m], &readers[m], err);
    if (rc == 0 && s->o.on_input) s->o.on_input(s->o.ctx, path1);
    for (uint64_t pair = 0; rc == 0; pair++) {
        int more = 0;
        rc = next_pair(readers, paths, mates, pair, &more, err);
        if (rc != 0 || !more) break;
        rc = scan_pair(s, readers, paths, mates, err);
    }
    if (rc == 0) {
        int status = sm_runner_flush(s->runner);
        if (status == SM_ERR_TERMINATED && s->stop) rc = STOPPED;
        else if (status != SM_OK) rc = fail_runner(err, "scan", status);
    }
    for (unsigned m = 0; m < mates; m++) sm_reader_close(readers[m]);
    return rc == STOPPED ? SM_ERR_TERMINATED : rc;
}
