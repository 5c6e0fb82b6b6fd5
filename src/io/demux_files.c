/* The files of seqmatch demux (include/seqmatch_output.h, sm_demux_files_*):
 * one per name (barcode or sample, and "unassigned") and mate, each with a
 * buffer in memory; a full buffer is appended to its file through an
 * sm_outdir (a small set of open descriptors, the least recently used
 * closed when another is needed). gzip output is a series of members, one
 * per buffer. Every file is written in a temporary folder inside the
 * output folder and moved to its name only when the run succeeded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "seqmatch_output.h"

/* Memory for the buffers of all files together, and each one's bounds. */
#define BUFFER_BUDGET ((size_t)256 << 20)
#define BUFFER_MIN ((size_t)64 << 10)
#define BUFFER_MAX ((size_t)1 << 20)

struct sm_demux_files;

typedef struct {
    char *path;         /* its name, made when the input's format is known */
    sm_record_out *out; /* its records, gathered in a buffer (compressed: a member each) */
    struct sm_demux_files *owner;
    size_t index;       /* name * 2 + mate: its temporary file's number (sm_outdir) */
} demux_file;

struct sm_demux_files {
    char *dir;
    char **names;
    size_t n;
    unsigned mates;
    int gzip, fastq;
    demux_file *file;   /* [n * 2] */
    sm_record_packer *packer;
    sm_outdir *temp;
    int error;          /* errno of a failed write; the path in failed_path */
    const char *failed_path;
};

/* The name of file (name, mate), for FASTQ records or not. */
static char *output_name(const sm_demux_files *f, size_t name, unsigned m, int fastq) {
    const char *mate = f->mates == 2 ? (m == 0 ? "_R1" : "_R2") : "";
    size_t n = strlen(f->dir) + strlen(f->names[name]) + 32;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s%s.%s%s", f->dir, f->names[name], mate, fastq ? "fastq" : "fasta", f->gzip ? ".gz" : "");
    return path;
}

static int make_path(sm_demux_files *f, demux_file *d) {
    if (!d->path) d->path = output_name(f, d->index / 2, (unsigned)(d->index % 2), f->fastq);
    return d->path ? 0 : -1;
}

/* Appends bytes to a file's temporary file (the first time: creating it). */
static int append(sm_demux_files *f, demux_file *d, const void *p, size_t n) {
    if (f->error) return -1;
    if (make_path(f, d) != 0) {
        f->error = ENOMEM, f->failed_path = f->dir;
        return -1;
    }
    size_t failed = 0;
    int e = sm_outdir_append(f->temp, d->index, p, n, &failed);
    if (!e) return 0;
    f->error = e;
    /* the last number is the folder's */
    f->failed_path = failed < f->n * 2 ? f->file[failed].path : f->dir;
    return -1;
}

/* A file's buffer out (sm_record_out's write). */
static int write_file(void *ctx, const void *data, size_t len) {
    demux_file *d = ctx;
    return append(d->owner, d, data, len);
}

void sm_demux_files_free(sm_demux_files *f) {
    if (!f) return;
    for (size_t i = 0; f->file && i < f->n * 2; i++) {
        free(f->file[i].path);
        sm_record_out_free(f->file[i].out);
    }
    for (size_t i = 0; f->names && i < f->n; i++) free(f->names[i]);
    sm_outdir_close(f->temp);
    sm_record_packer_free(f->packer);
    free(f->file);
    free(f->names);
    free(f->dir);
    free(f);
}

sm_demux_files *sm_demux_files_open(const char *dir, const char *const *names, size_t n, const sm_demux_files_options *o,
                                    sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    sm_demux_files *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = strdup(dir)) || !(f->names = calloc(n ? n : 1, sizeof *f->names)) ||
        !(f->file = calloc(n ? n * 2 : 1, sizeof *f->file))) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        sm_demux_files_free(f);
        return NULL;
    }
    f->n = n, f->mates = o->mates == 2 ? 2 : 1, f->gzip = o->gzip, f->fastq = 1;
    for (size_t i = 0; i < n; i++)
        if (!(f->names[i] = strdup(names[i]))) {
            sm_set_error(err, SM_ERR_NOMEM, "out of memory");
            sm_demux_files_free(f);
            return NULL;
        }
    /* Before anything is read or written: no file it may write (with either
       extension, the input's format being unknown yet) is an input or a
       folder or other file that is not a regular one. */
    for (size_t i = 0; i < n; i++)
        for (unsigned m = 0; m < f->mates; m++)
            for (int fastq = 0; fastq <= 1; fastq++) {
                char *path = output_name(f, i, m, fastq);
                int bad = !path || sm_output_check_file(path, o->inputs, o->ninputs, err) != SM_OK;
                if (!path) sm_set_error(err, SM_ERR_NOMEM, "out of memory");
                free(path);
                if (bad) {
                    sm_demux_files_free(f);
                    return NULL;
                }
            }
    if (!(f->temp = sm_outdir_open(dir, n * 2, 0, err))) {
        sm_demux_files_free(f);
        return NULL;
    }
    size_t cap = BUFFER_BUDGET / (n > 0 ? n * f->mates : 1);
    cap = cap < BUFFER_MIN ? BUFFER_MIN : cap > BUFFER_MAX ? BUFFER_MAX : cap;
    if (o->buffer_size) cap = o->buffer_size;
    if (f->gzip && !(f->packer = sm_record_packer_new(cap))) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        sm_demux_files_free(f);
        return NULL;
    }
    for (size_t i = 0; i < n * 2; i++) {
        f->file[i].owner = f, f->file[i].index = i;
        if (!(f->file[i].out = sm_record_out_new(f->packer, cap, write_file, &f->file[i]))) {
            sm_set_error(err, SM_ERR_NOMEM, "out of memory");
            sm_demux_files_free(f);
            return NULL;
        }
    }
    return f;
}

void sm_demux_files_format(sm_demux_files *f, int fastq) { f->fastq = fastq; }

int sm_demux_files_put(sm_demux_files *f, size_t name, unsigned mate, const void *record, size_t len) {
    demux_file *d = &f->file[name * 2 + mate];
    int rc = sm_record_out_put(d->out, record, len);
    if (rc == SM_ERR_NOMEM) f->error = ENOMEM, f->failed_path = d->path ? d->path : f->names[name];
    return rc == SM_OK ? 0 : -1;
}

/* A failure said as "PATH: REASON". */
static int failed(sm_demux_files *f, sm_error *err) {
    return sm_set_error(err, f->error == ENOMEM ? SM_ERR_NOMEM : SM_ERR_IO, "%s: %s", f->failed_path ? f->failed_path : f->dir,
                strerror(f->error));
}

int sm_demux_files_end(sm_demux_files *f, int ran, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    /* Every buffer out, and every file there (empty ones too). */
    for (size_t i = 0; ran && i < f->n && !f->error; i++)
        for (unsigned m = 0; m < f->mates && !f->error; m++) {
            demux_file *d = &f->file[i * 2 + m];
            /* a gzip file without a record gets an empty member, a plain one is made empty */
            int end = sm_record_out_end(d->out);
            if (end == SM_ERR_NOMEM) f->error = ENOMEM, f->failed_path = d->path ? d->path : f->names[i];
            if (end == SM_OK) append(f, d, "", 0);
        }
    size_t at = 0;
    int closed = sm_outdir_end(f->temp, &at);
    if (closed && !f->error) f->error = closed, f->failed_path = at < f->n * 2 ? f->file[at].path : f->dir;
    if (f->error > 0) return failed(f, err);
    for (size_t i = 0; ran && i < f->n * 2; i++)
        if (make_path(f, &f->file[i]) != 0) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    return SM_OK;
}

const char *sm_demux_files_path(const sm_demux_files *f, size_t name, unsigned mate) {
    const char *p = f->file[name * 2 + mate].path;
    return p ? p : "";
}

int sm_demux_files_commit(sm_demux_files *f, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    for (size_t i = 0; i < f->n; i++)
        for (unsigned m = 0; m < f->mates; m++) {
            demux_file *d = &f->file[i * 2 + m];
            int e = sm_outdir_commit(f->temp, d->index, d->path);
            if (e) return sm_set_error(err, SM_ERR_IO, "%s: %s", d->path, strerror(e));
        }
    sm_outdir_close(f->temp);
    f->temp = NULL;
    return SM_OK;
}
