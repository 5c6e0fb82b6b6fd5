/* Records written as they were read (include/seqmatch_output.h,
 * sm_record_out_*): the outputs of seqmatch filter and demux. A record
 * that ends without a line end gets one only when another record follows
 * it, so a file's last record keeps the input's bytes exactly. gzip output
 * is a series of independent members, one per block: every gzip reader
 * reads the series as one file. Public calls only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_gzip.h"
#include "seqmatch_output.h"

struct sm_record_packer {
    sm_deflater *deflater;
    uint8_t *packed;
    size_t cap;
};

struct sm_record_out {
    sm_record_packer *packer;  /* NULL: plain */
    size_t block;
    int (*write)(void *ctx, const void *data, size_t len);
    void *ctx;
    uint8_t *buf;              /* the block being gathered, made at the first byte */
    size_t len;
    int owes_newline;
    uint64_t records;
};

sm_record_packer *sm_record_packer_new(size_t block) {
    sm_record_packer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->deflater = sm_deflater_new();
    p->cap = sm_gzip_bound(block);
    p->packed = malloc(p->cap);
    if (!p->deflater || !p->packed) {
        sm_record_packer_free(p);
        return NULL;
    }
    return p;
}

void sm_record_packer_free(sm_record_packer *p) {
    if (!p) return;
    sm_deflater_free(p->deflater);
    free(p->packed);
    free(p);
}

sm_record_out *sm_record_out_new(sm_record_packer *packer, size_t block,
                                 int (*write)(void *ctx, const void *data, size_t len), void *ctx) {
    sm_record_out *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->packer = packer;
    o->block = block;
    o->write = write;
    o->ctx = ctx;
    return o;
}

/* The gathered bytes out: as they are, or as one member. */
static int flush_block(sm_record_out *o, int always) {
    if (o->len == 0 && !always) return SM_OK;
    size_t n = o->len;
    o->len = 0;
    if (!o->packer) return o->write(o->ctx, o->buf, n) == 0 ? SM_OK : SM_ERR_IO;
    size_t packed = sm_gzip_member(o->packer->deflater, n ? o->buf : (const uint8_t *)"", n, o->packer->packed,
                                   o->packer->cap);
    if (packed == 0) return SM_ERR_NOMEM;
    return o->write(o->ctx, o->packer->packed, packed) == 0 ? SM_OK : SM_ERR_IO;
}

static int put_bytes(sm_record_out *o, const uint8_t *p, size_t n) {
    if (o->block == 0) return n == 0 || o->write(o->ctx, p, n) == 0 ? SM_OK : SM_ERR_IO;
    if (!o->buf && n > 0 && !(o->buf = malloc(o->block))) return SM_ERR_NOMEM;
    while (n > 0) {
        if (o->len == o->block) {
            int rc = flush_block(o, 0);
            if (rc != SM_OK) return rc;
        }
        size_t take = n < o->block - o->len ? n : o->block - o->len;
        memcpy(o->buf + o->len, p, take);
        o->len += take;
        p += take;
        n -= take;
    }
    return SM_OK;
}

int sm_record_out_put(sm_record_out *o, const void *record, size_t len) {
    const uint8_t *p = record;
    o->records++;
    int rc = SM_OK;
    if (o->owes_newline && len > 0) rc = put_bytes(o, (const uint8_t *)"\n", 1);
    if (len > 0) o->owes_newline = p[len - 1] != '\n' && p[len - 1] != '\r';
    return rc == SM_OK ? put_bytes(o, p, len) : rc;
}

int sm_record_out_put_packed(sm_record_out *o, const void *members, size_t len, uint64_t records) {
    if (!o->packer) return SM_ERR_INVALID;
    int rc = flush_block(o, 0);
    if (rc != SM_OK || len == 0) return rc;
    o->records += records;
    o->owes_newline = 0;
    return o->write(o->ctx, members, len) == 0 ? SM_OK : SM_ERR_IO;
}

int sm_record_out_end(sm_record_out *o) {
    /* a gzip output with no record is still a gzip file: one empty member */
    return flush_block(o, o->packer && o->records == 0);
}

uint64_t sm_record_out_records(const sm_record_out *o) { return o->records; }

void sm_record_out_free(sm_record_out *o) {
    if (!o) return;
    free(o->buf);
    free(o);
}

/* ------------------------------------------ records into a file by name */

#define GZIP_BLOCK ((size_t)1 << 20)

struct sm_record_file {
    sm_writer *w;
    sm_record_packer *packer;
    sm_record_out *out;
    const char *name;  /* for messages: the path, or "standard output" */
    int failed;        /* compression failed (out of memory) */
};

static int write_file(void *ctx, const void *data, size_t len) {
    sm_record_file *f = ctx;
    sm_writer_write(f->w, data, len);
    return 0; /* a failed write is seen by sm_record_file_put */
}

sm_record_file *sm_record_file_open(const char *path, sm_error *err) {
    sm_record_file *f = calloc(1, sizeof *f);
    if (!f) {
        err->code = SM_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    f->name = !path || strcmp(path, "-") == 0 ? "standard output" : path;
    if (!(f->w = sm_writer_open(path, err))) {
        free(f);
        return NULL;
    }
    int gzip = sm_gzip_by_name(path);
    if ((gzip && !(f->packer = sm_record_packer_new(GZIP_BLOCK))) ||
        !(f->out = sm_record_out_new(f->packer, gzip ? GZIP_BLOCK : 0, write_file, f))) {
        sm_record_file_close(f, 0, NULL, err);
        err->code = SM_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    return f;
}

int sm_record_file_put(sm_record_file *f, const void *record, size_t len) {
    if (sm_record_out_put(f->out, record, len) == SM_ERR_NOMEM) f->failed = 1;
    return f->failed || sm_writer_error(f->w) != 0;
}

int sm_record_file_gzip(const sm_record_file *f) { return f->packer != NULL; }

int sm_record_file_put_packed(sm_record_file *f, const void *members, size_t len, uint64_t records) {
    if (sm_record_out_put_packed(f->out, members, len, records) == SM_ERR_NOMEM) f->failed = 1;
    return f->failed || sm_writer_error(f->w) != 0;
}

int sm_record_file_close(sm_record_file *f, int keep, int *write_errno, sm_error *err) {
    if (write_errno) *write_errno = 0;
    if (!f) return SM_OK;
    int rc = SM_OK;
    if (keep && !f->failed && sm_record_out_end(f->out) == SM_ERR_NOMEM) f->failed = 1;
    if (f->failed) {
        rc = err->code = SM_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "%s: out of memory while compressing", f->name);
        keep = 0;
    }
    int e = sm_writer_close(f->w, keep);
    if (e && rc == SM_OK) {
        rc = err->code = SM_ERR_IO;
        snprintf(err->message, sizeof err->message, "%s: %s", f->name, strerror(e));
    }
    if (write_errno) *write_errno = e;
    sm_record_out_free(f->out);
    sm_record_packer_free(f->packer);
    free(f);
    return rc;
}
