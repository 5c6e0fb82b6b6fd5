/* Output files (-o): the library's sm_outfile with the command's messages,
 * and the hit writer over one. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Whether a file could be written at path: one that exists and may be
   written, or a new one in a folder that exists and takes it. Asked before
   the run, so that a report or summary written at its end is not refused
   after the work (and the run's other outputs thrown away with it). */
static int check_writable(const char *path) {
    if (!path || strcmp(path, "-") == 0 || access(path, W_OK) == 0) return 0;
    int e = errno;
    if (e == ENOENT) {
        char *copy = strdup(path);
        if (!copy) {
            cli_error("out of memory");
            return -1;
        }
        int ok = access(dirname(copy), W_OK | X_OK) == 0;
        e = errno;
        free(copy);
        if (ok) return 0;
    }
    cli_error("%s: %s", path, strerror(e));
    return -1;
}

int cli_check_output(const char *output, const char *const *inputs, size_t count) {
    sm_error err;
    if (sm_output_check(output, inputs, count, &err) != SM_OK) {
        cli_error("%s", err.message);
        return -1;
    }
    return check_writable(output);
}

int cli_stats_open(const cli_options *opts, sm_stats **stats) {
    const char *inputs[64];
    *stats = NULL;
    if (!opts->stats_path) return 0;
    if (cli_check_output(opts->stats_path, inputs, cli_read_inputs(opts, inputs)) != 0) return -1;
    if (!(*stats = sm_stats_new(cli_command_name(opts->command), cli_command_line))) {
        cli_error("out of memory");
        return -1;
    }
    for (size_t i = 0; i < 2 && opts->read1; i++) sm_stats_input(*stats, i ? opts->read2 : opts->read1);
    for (size_t i = 0; i < opts->target_count; i++) sm_stats_input(*stats, opts->targets[i]);
    if (!opts->read1 && !opts->target_count) sm_stats_input(*stats, "-");
    return 0;
}

int cli_stats_write(const sm_stats *stats, const char *path) {
    sm_error err;
    int failed = stats && sm_stats_write(stats, path, &err) != SM_OK;
    if (failed) cli_error("%s", err.message);
    return failed ? -1 : 0;
}

sm_outfile *cli_outfile_open(const char *path) {
    sm_error err;
    sm_outfile *o = sm_outfile_open(path, &err);
    if (!o) cli_error("%s", err.message);
    return o;
}

/* ------------------------------------------------------ hit output writer */

/* Pieces compressed at once: the writer's buffer (1 MiB), a member each,
   which any gzip reader reads back as one file. */
#define GZIP_PIECE ((size_t)1 << 20)

static int gzip_sink(void *ctx, const void *data, size_t len) {
    cli_writer *w = ctx;
    FILE *file = sm_writer_file(w->w);
    for (const char *p = data; len > 0;) {
        size_t n = len < GZIP_PIECE ? len : GZIP_PIECE;
        size_t z = sm_gzip_member(w->gzip, p, n, w->zbuf, w->zcap);
        if (z == 0) return ENOMEM;
        errno = 0;
        if (fwrite(w->zbuf, 1, z, file) != z) return errno ? errno : EIO;
        p += n;
        len -= n;
    }
    return 0;
}

static int writer_open(cli_writer *w, const char *path, int gzip_by_name) {
    memset(w, 0, sizeof *w);
    w->display_name = !path || strcmp(path, "-") == 0 ? "standard output" : path;
    sm_error err;
    if (!(w->w = sm_writer_open(path, &err))) {
        cli_error("%s", err.message);
        return -1;
    }
    /* FILE.gz is written as gzip, as filter and trim write their records */
    if (gzip_by_name && sm_gzip_by_name(path)) {
        w->zcap = sm_gzip_bound(GZIP_PIECE);
        if (!(w->gzip = sm_deflater_new()) || !(w->zbuf = malloc(w->zcap))) {
            cli_writer_close(w, 0);
            cli_error("out of memory");
            return -1;
        }
        sm_writer_set_sink(w->w, gzip_sink, w);
    }
    return 0;
}

int cli_writer_open(cli_writer *w, const char *path) { return writer_open(w, path, 1); }

int cli_writer_open_shard(cli_writer *w, const char *path) { return writer_open(w, path, 0); }

int cli_writer_close(cli_writer *w, int keep) {
    if (w->w) {
        w->error = sm_writer_close(w->w, keep);
        w->w = NULL;
    }
    sm_deflater_free(w->gzip);
    free(w->zbuf);
    w->gzip = NULL;
    w->zbuf = NULL;
    return w->error ? -1 : 0;
}

void cli_writer_report(const cli_writer *w) {
    /* A reader that went away (| head) is not an error worth a message. */
    int error = w->error ? w->error : w->w ? sm_writer_error(w->w) : 0;
    if (error && error != EPIPE) cli_error("%s: %s", w->display_name, strerror(error));
}
