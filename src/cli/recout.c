/* Record outputs of filter: the records' bytes as read, to a file or
 * standard output, plain or gzip. gzip output is a series of independent
 * members, one per MiB of records, each written in one call (io/deflate.c):
 * every gzip reader reads the series as one file. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "seqmatch_gzip.h"

#define GZIP_BLOCK ((size_t)1 << 20)

struct cli_recout {
    cli_writer w;
    int gzip;
    sm_deflater *deflater;
    uint8_t *block;   /* gzip: records waiting to be compressed */
    size_t block_len;
    uint8_t *packed;  /* a compressed member */
    size_t packed_cap;
    int failed;       /* compression failed (out of memory) */
    int owes_newline; /* the last record ended without a line end: the next needs one */
    uint64_t records;
};

int cli_gzip_name(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
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
    o->gzip = cli_gzip_name(path);
    if (o->gzip) {
        o->deflater = sm_deflater_new();
        o->block = malloc(GZIP_BLOCK);
        o->packed_cap = sm_gzip_bound(GZIP_BLOCK);
        o->packed = malloc(o->packed_cap);
        if (!o->deflater || !o->block || !o->packed) {
            cli_error("out of memory");
            cli_recout_close(o, 0);
            return NULL;
        }
    }
    return o;
}

/* Compresses the waiting records into one member and writes it. */
static void pack(cli_recout *o) {
    if (o->block_len == 0 || o->failed) return;
    size_t n = sm_gzip_member(o->deflater, o->block, o->block_len, o->packed, o->packed_cap);
    o->block_len = 0;
    if (n == 0) {
        o->failed = 1;
        return;
    }
    sm_writer_write(o->w.w, o->packed, n);
}

static void put_bytes(cli_recout *o, const uint8_t *p, size_t len) {
    if (!o->gzip) {
        sm_writer_write(o->w.w, p, len);
        return;
    }
    while (len > 0) {
        size_t room = GZIP_BLOCK - o->block_len;
        size_t n = len < room ? len : room;
        memcpy(o->block + o->block_len, p, n);
        o->block_len += n;
        p += n;
        len -= n;
        if (o->block_len == GZIP_BLOCK) pack(o);
    }
}

void cli_recout_put(cli_recout *o, const void *data, size_t len) {
    const uint8_t *p = data;
    o->records++;
    /* The last record of a file may end without a line end: the output
       keeps it so (the input's bytes exactly) unless a record follows. */
    if (o->owes_newline && len > 0) put_bytes(o, (const uint8_t *)"\n", 1);
    put_bytes(o, p, len);
    if (len > 0) o->owes_newline = p[len - 1] != '\n' && p[len - 1] != '\r';
}

int cli_recout_failed(const cli_recout *o) { return o->failed || cli_writer_failed(&o->w); }

uint64_t cli_recout_records(const cli_recout *o) { return o->records; }

int cli_recout_close(cli_recout *o, int keep) {
    if (!o) return 0;
    int rc = 0;
    if (o->gzip && keep) {
        /* an output with no record is still a gzip file */
        if (o->block_len > 0 || o->records == 0) {
            size_t n = sm_gzip_member(o->deflater, o->block, o->block_len, o->packed, o->packed_cap);
            if (n == 0) o->failed = 1;
            else sm_writer_write(o->w.w, o->packed, n);
            o->block_len = 0;
        }
    }
    if (o->failed) {
        cli_error("%s: out of memory while compressing", o->w.display_name);
        keep = 0;
        rc = -1;
    }
    if (cli_writer_close(&o->w, keep) != 0) {
        cli_writer_report(&o->w);
        rc = -1;
    }
    sm_deflater_free(o->deflater);
    free(o->block);
    free(o->packed);
    free(o);
    return rc;
}
