/* Files read one after another into a runner whose hits go to a formatter
 * (include/seqmatch_output.h, sm_runner_scan_files): seqmatch search's
 * loop over its targets. Each file goes through sm_runner_scan_reader; the
 * next file's reader is opened while the current one is scanned. Public
 * calls only. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seqmatch_output.h"

#include "io/source.h"


int sm_check_input_files(char *const *paths, size_t count, sm_error *err) {
    for (size_t i = 0; i < count; i++) {
        const char *path = paths[i];
        if (strcmp(path, "-") == 0) continue;
        struct stat st;
        if (stat(path, &st) != 0) return sm_io_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
        if (S_ISDIR(st.st_mode)) return sm_io_error(err, SM_ERR_IO, "%s: %s", path, strerror(EISDIR));
        if (access(path, R_OK) != 0) return sm_io_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
    }
    return SM_OK;
}

void sm_scan_files_options_init(sm_scan_files_options *o) {
    memset(o, 0, sizeof *o);
    o->format = SM_INPUT_AUTO;
}

const char *sm_io_status_words(const sm_runner *runner, int status, char *buf, size_t size) {
    const char *said = runner ? sm_runner_message(runner) : "";
    if (status != SM_ERR_DEVICE || !said[0]) return sm_strerror(status);
    snprintf(buf, size, "%s (%s)", sm_strerror(status), said);
    return buf;
}

/* A status of the runner's as a message about what ("-": stdin). */
static int runner_failure(const sm_runner *r, const sm_scan_files_options *o, const char *what, int status,
                          sm_error *err) {
    if (strcmp(what, "-") == 0) what = "stdin";
    if (status == SM_ERR_NOMEM && o->nomem_hint)
        return sm_io_error(err, status, "%s: out of memory while scanning (%s)", what, o->nomem_hint);
    if (status == SM_ERR_NOMEM) return sm_io_error(err, status, "%s: out of memory while scanning", what);
    char words[320];
    return sm_io_error(err, status, "%s: %s", what, sm_io_status_words(r, status, words, sizeof words));
}

/* A stop asked by one of the runner's callbacks: the caller's limit (a
   stop), or its failure (reported by the caller). */
static int stop_is_limit(const sm_scan_files_options *o, int status) {
    return status == SM_ERR_TERMINATED && o->limit_reached && o->limit_reached(o->ctx);
}

typedef enum { SCAN_OK, SCAN_STOPPED_EARLY, SCAN_FAILED } scan_result;

/* One file's scan, as sm_runner_scan_reader's callbacks see it. */
typedef struct {
    const sm_scan_files_options *o;
    const char *path;
    sm_reader *reader;
    sm_runner *runner;
    const char *name;     /* the current record's */
    int checked;          /* the first sequence shown to on_first_sequence */
    int stopped;          /* the first hit (stop_at_first_hit) */
    int failed;           /* out of memory naming a record */
} file_scan;

static int scan_on_record(void *ctx, uint64_t record, const char *name) {
    file_scan *t = ctx;
    t->name = name;
    if (t->o->formatter && t->o->name_records && sm_formatter_add_record(t->o->formatter, record, name) != 0) {
        t->failed = 1;
        return 1;
    }
    return 0;
}

static int scan_on_sequence(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    (void)record;
    file_scan *t = ctx;
    if (!t->checked && len > 0) {
        t->checked = 1;
        t->o->on_first_sequence(t->o->ctx, t->path, t->name, data, len);
    }
    return 0;
}

static void scan_on_record_fed(void *ctx, uint64_t record, uint64_t length) {
    file_scan *t = ctx;
    if (t->o->formatter && t->o->name_records) sm_formatter_record_length(t->o->formatter, record, length);
}

static int scan_on_progress(void *ctx, size_t bytes, int record_ended) {
    file_scan *t = ctx;
    if (t->o->stop_at_first_hit && sm_runner_total(t->runner) > 0) {
        t->stopped = 1;
        return 1;
    }
    if (!record_ended && t->o->on_progress) t->o->on_progress(t->o->ctx, t->reader, bytes, sm_runner_total(t->runner));
    return 0;
}

/* A file's reader opened ahead: the next file's decompression (a thread of
   its own, or BGZF's workers) starts while the current one is scanned, so
   that many compressed files follow each other without a pause. Its error,
   if any, is reported when its turn comes. */
typedef struct {
    sm_reader *reader;
    int rc;
    sm_error err;
} opened_file;

static void open_file(const char *path, const sm_scan_files_options *o, opened_file *f) {
    memset(f, 0, sizeof *f);
    f->rc = sm_reader_open_threads(path, o->format, o->threads, &f->reader, &f->err);
}

/* Streams one file (opened by open_file) into the runner, and closes it. */
static scan_result scan_file(const char *path, opened_file *opened, sm_runner *runner, const sm_scan_files_options *o,
                             sm_error *err) {
    sm_reader *reader = opened->reader;
    int rc = opened->rc;
    opened->reader = NULL;
    if (rc != SM_OK) {
        if (opened->err.message[0]) sm_io_error(err, rc, "%s", opened->err.message);
        else sm_io_error(err, rc, "%s", sm_strerror(rc));
        return SCAN_FAILED;
    }
    if (o->on_file) o->on_file(o->ctx, path);

    file_scan t = {o, path, reader, runner, NULL, !o->on_first_sequence, 0, 0};
    sm_scan_reader_options scan = {.ctx = &t, .on_record = scan_on_record, .on_sequence = scan_on_sequence,
                                    .on_record_fed = scan_on_record_fed, .on_progress = scan_on_progress};
    err->message[0] = 0;
    int status = sm_runner_scan_reader(runner, reader, &scan, err);
    scan_result result = SCAN_OK;
    if (status == SM_ERR_TERMINATED) {
        if (t.failed) sm_io_error(err, SM_ERR_NOMEM, "out of memory");
        else if (t.stopped || stop_is_limit(o, status)) result = SCAN_STOPPED_EARLY;
        else sm_io_error(err, SM_ERR_TERMINATED, "%s", ""); /* the caller's failure: its to report */
        if (result != SCAN_STOPPED_EARLY) result = SCAN_FAILED;
    } else if (status != SM_OK) {
        /* bad input, between records or inside one, has its message */
        if (err->message[0]) err->code = status;
        else runner_failure(runner, o, path, status, err);
        result = SCAN_FAILED;
    }
    sm_reader_close(reader);
    return result;
}

int sm_runner_scan_files(sm_runner *runner, char *const *paths, size_t count, const sm_scan_files_options *o,
                         int *stopped, sm_error *err) {
    int stopped_early = o->start_stopped, failed = 0;
    *stopped = 0;
    memset(err, 0, sizeof *err);
    /* the counts seen at the end of the previous file, then this file's */
    uint64_t *file_counts = NULL;
    uint64_t counted = 0; /* the runner's total at the end of the previous file */
    if (o->counts_per_file && !(file_counts = calloc((size_t)o->pattern_count * 2 + 1, sizeof *file_counts)))
        return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    opened_file current, ahead;
    int have_ahead = 0;
    memset(&ahead, 0, sizeof ahead);
    for (size_t i = 0; i < count && !failed; i++) {
        const char *shown = strcmp(paths[i], "-") == 0 ? "stdin" : paths[i];
        if (o->formatter && o->show_file && sm_formatter_set_file(o->formatter, shown) != 0) {
            sm_io_error(err, SM_ERR_NOMEM, "out of memory");
            failed = 1;
            break;
        }
        if (!stopped_early) {
            if (have_ahead) current = ahead;
            else open_file(paths[i], o, &current);
            /* standard input is read once, when its turn comes */
            have_ahead = i + 1 < count && strcmp(paths[i + 1], "-") != 0;
            if (have_ahead) open_file(paths[i + 1], o, &ahead);
            scan_result r = scan_file(paths[i], &current, runner, o, err);
            if (r == SCAN_FAILED) failed = 1;
            if (r == SCAN_STOPPED_EARLY) stopped_early = 1;
            if (r == SCAN_OK && file_counts) {
                int status = sm_runner_flush(runner);
                if (stop_is_limit(o, status)) stopped_early = 1;
                else if (status == SM_ERR_TERMINATED) sm_io_error(err, status, "%s", ""), failed = 1;
                else if (status != SM_OK) runner_failure(runner, o, "scan", status, err), failed = 1;
            }
        }
        if (failed) break;
        if (!file_counts) {
            if (stopped_early) break;
            continue;
        }
        /* The file's counts (zero for files after a stop). */
        const uint64_t *now = sm_runner_counts(runner);
        uint64_t *seen = file_counts, *diff = file_counts + o->pattern_count;
        for (uint32_t p = 0; p < o->pattern_count; p++) {
            diff[p] = now[p] - seen[p];
            seen[p] = now[p];
        }
        sm_formatter_counts(o->formatter, diff, sm_runner_total(runner) - counted);
        counted = sm_runner_total(runner);
    }
    if (have_ahead) sm_reader_close(ahead.reader); /* a stop or a failure before its turn */
    free(file_counts);
    if (!failed && !stopped_early) {
        int status = sm_runner_flush(runner);
        if (status == SM_ERR_TERMINATED && !stop_is_limit(o, status)) sm_io_error(err, status, "%s", ""), failed = 1;
        else if (status != SM_OK && status != SM_ERR_TERMINATED) runner_failure(runner, o, "scan", status, err), failed = 1;
    }
    if (failed) return err->code ? err->code : SM_ERR_TERMINATED;
    *stopped = stopped_early;
    return SM_OK;
}
