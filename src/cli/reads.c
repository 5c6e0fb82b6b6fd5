/* What filter and demux share: the library's record queue (sm_reads_*,
 * seqmatch_reader.h) over the targets, or the pair -1 / -2 in step, with
 * the command's progress line and messages. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct {
    const cli_reads_job *job;
    sm_progress *progress;
} reads_run;

static void on_input(void *ctx, const char *path) { sm_progress_begin_file(((reads_run *)ctx)->progress, path); }

static void on_progress(void *ctx, const sm_reader *reader, size_t bytes, uint64_t hits) {
    sm_progress_update(((reads_run *)ctx)->progress, reader, bytes, hits);
}

static void on_summary(void *ctx, sm_read_record *record, const sm_record_summary *summary) {
    const cli_reads_job *job = ((reads_run *)ctx)->job;
    job->on_summary(job->ctx, record, summary);
}

static int on_record(void *ctx, sm_read_record *record) {
    const cli_reads_job *job = ((reads_run *)ctx)->job;
    return job->on_record(job->ctx, record);
}

int cli_reads_run(cli_reads_job *job, const sm_db *db) {
    const cli_options *opts = job->opts;
    reads_run run = {.job = job};
    int show = opts->progress == CLI_PROGRESS_ON || (opts->progress == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO));
    sm_progress *progress = run.progress = sm_progress_new(stderr, show);

    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = opts->threads;
    ro.chunk_size = opts->chunk_size;
    ro.overlap_free = opts->overlap_free;
    ro.backend = opts->gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU;
    ro.anchor = opts->anchor;
    ro.min_overlap = opts->min_overlap;
    sm_reads_options o = {.format = opts->lines ? SM_INPUT_LINES : SM_INPUT_AUTO,
                          .reader_threads = cli_threads(opts->threads), .scan_mate = job->scan_mate, .end_window = job->end_window, .stats = job->stats, .ctx = &run,
                          .on_summary = job->on_summary ? on_summary : NULL, .on_record = on_record,
                          .on_input = on_input, .on_progress = on_progress};
    job->format = SM_INPUT_AUTO;
    sm_error err;
    int status = sm_reads_new(db, &ro, &o, &job->reads, &err);
    if (status != SM_OK) {
        cli_error("%s", err.message[0] ? err.message : sm_strerror(status));
        sm_progress_free(progress);
        return -1;
    }
    char *stdin_target[] = {"-"};
    char *const *targets = opts->read1 ? (char *const *)&opts->read1 : opts->target_count ? opts->targets : stdin_target;
    size_t count = opts->read1 || !opts->target_count ? 1 : opts->target_count;
    sm_progress_set_files(progress, targets, count);
    for (size_t i = 0; i < count && status == SM_OK; i++) status = sm_reads_run(job->reads, targets[i], opts->read2, &err);
    sm_progress_clear(progress);
    int failed = status != SM_OK && (status != SM_ERR_TERMINATED || err.message[0]);
    if (failed) cli_error("%s", err.message);
    else if (job->summary) job->summary(progress, job->ctx);
    job->format = sm_reads_format(job->reads);
    sm_reads_free(job->reads);
    job->reads = NULL;
    sm_progress_free(progress);
    return failed ? -1 : 0;
}
