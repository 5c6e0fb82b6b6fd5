/* Record outputs of filter: the library's records-as-read writer
 * (sm_record_out, seqmatch_output.h) into an output file or standard
 * output, gzip (members of 1 MiB of records) when the name ends in .gz. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define GZIP_BLOCK ((size_t)1 << 20)

struct cli_recout {
    cli_writer w;
    sm_record_packer *packer;
    sm_record_out *out;
    int failed; /* compression failed (out of memory) */
};

int cli_gzip_name(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int write_out(void *ctx, const void *data, size_t len) {
    cli_recout *o = ctx;
    sm_writer_write(o->w.w, data, len);
    return 0; /* a failed write is seen by cli_recout_failed */
}

cli_recout *cli_recout_open(const char *path) {
    cli_recout *o = calloc(1, sizeof *o);
    if (!o) {
        cli_error("out of memory");
        return NULL;
    }
    if (cli_writer_open(&o->w, path) != 0) {
        free(o);
        return NULL;
    }
    int gzip = cli_gzip_name(path);
    if ((gzip && !(o->packer = sm_record_packer_new(GZIP_BLOCK))) ||
        !(o->out = sm_record_out_new(o->packer, gzip ? GZIP_BLOCK : 0, write_out, o))) {
        cli_error("out of memory");
        cli_recout_close(o, 0);
        return NULL;
    }
    return o;
}

void cli_recout_put(cli_recout *o, const void *data, size_t len) {
    if (sm_record_out_put(o->out, data, len) == SM_ERR_NOMEM) o->failed = 1;
}

int cli_recout_failed(const cli_recout *o) { return o->failed || cli_writer_failed(&o->w); }

int cli_recout_close(cli_recout *o, int keep) {
    if (!o) return 0;
    int rc = 0;
    if (keep && !o->failed && sm_record_out_end(o->out) == SM_ERR_NOMEM) o->failed = 1;
    if (o->failed) {
        cli_error("%s: out of memory while compressing", o->w.display_name);
        keep = 0;
        rc = -1;
    }
    if (cli_writer_close(&o->w, keep) != 0) {
        cli_writer_report(&o->w);
        rc = -1;
    }
    sm_record_out_free(o->out);
    sm_record_packer_free(o->packer);
    free(o);
    return rc;
}
