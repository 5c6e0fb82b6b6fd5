/* Output files (-o): the library's sm_outfile with the command's messages,
 * and the hit writer over one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_check_output(const char *output, const char *const *inputs, size_t count) {
    sm_error err;
    if (sm_output_check(output, inputs, count, &err) == SM_OK) return 0;
    cli_error("%s", err.message);
    return -1;
}

sm_outfile *cli_outfile_open(const char *path) {
    sm_error err;
    sm_outfile *o = sm_outfile_open(path, &err);
    if (!o) cli_error("%s", err.message);
    return o;
}

/* ------------------------------------------------------ hit output writer */

int cli_writer_open(cli_writer *w, const char *path) {
    memset(w, 0, sizeof *w);
    w->display_name = !path || strcmp(path, "-") == 0 ? "standard output" : path;
    sm_error err;
    if ((w->w = sm_writer_open(path, &err))) return 0;
    cli_error("%s", err.message);
    return -1;
}

int cli_writer_close(cli_writer *w, int keep) {
    if (!w->w) return w->error ? -1 : 0;
    w->error = sm_writer_close(w->w, keep);
    w->w = NULL;
    return w->error ? -1 : 0;
}

void cli_writer_report(const cli_writer *w) {
    /* A reader that went away (| head) is not an error worth a message. */
    int error = w->error ? w->error : w->w ? sm_writer_error(w->w) : 0;
    if (error && error != EPIPE) cli_error("%s: %s", w->display_name, strerror(error));
}
