/* BAM output (--format bam) through htslib, loaded when first asked for
 * (src/backends/htslib_open.c: libhts.so.3, the SONAME of every htslib
 * since 1.10), so the library and the command link nothing more, and only
 * a program that writes BAM needs htslib installed; libseqmatch.a loads
 * nothing at run time (htslib_none.c). sam.c makes the SAM text (the header, then each
 * alignment line); htslib's own SAM parser turns each line into a record
 * and its BGZF writer compresses them, so the BAM encoding is htslib's,
 * not ours. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"

/* htslib's kstring_t, the one structure its calls below take by value of
   its fields (unchanged since htslib began). */
typedef struct {
    size_t l, m;
    char *s;
} hts_kstring;

/* The htslib calls used, as its sam.h and bgzf.h declare them (the types
   are opaque here). */
typedef struct {
    void *(*sam_hdr_parse)(size_t len, const char *text);
    void (*sam_hdr_destroy)(void *header);
    void *(*bgzf_dopen)(int fd, const char *mode);
    int (*bgzf_close)(void *file);
    int (*bam_hdr_write)(void *file, const void *header);
    void *(*bam_init1)(void);
    void (*bam_destroy1)(void *record);
    int (*sam_parse1)(hts_kstring *line, void *header, void *record);
    int (*bam_write1)(void *file, const void *record);
} hts_calls;

struct sm_bam {
    hts_calls hts;
    void *header, *file, *record;
    hts_kstring line;
    uint64_t lines;
};

static int load_htslib(hts_calls *c, sm_error *err) {
    static const char *const names[] = {"sam_hdr_parse", "sam_hdr_destroy", "bgzf_dopen",   "bgzf_close", "bam_hdr_write",
                                        "bam_init1",     "bam_destroy1",    "sam_parse1",   "bam_write1"};
    void **slots[] = {(void **)&c->sam_hdr_parse, (void **)&c->sam_hdr_destroy, (void **)&c->bgzf_dopen,
                      (void **)&c->bgzf_close,    (void **)&c->bam_hdr_write,   (void **)&c->bam_init1,
                      (void **)&c->bam_destroy1,  (void **)&c->sam_parse1,      (void **)&c->bam_write1};
    void *found[sizeof names / sizeof *names];
    char why[256];
    if (sm_htslib_load(names, sizeof names / sizeof *names, found, why, sizeof why) != 0)
        return sm_set_error(err, SM_ERR_INVALID, "--format bam: %s", why);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) memcpy(slots[i], &found[i], sizeof found[i]);
    return SM_OK;
}

sm_bam *sm_bam_begin(sm_writer *out, const char *header, size_t header_len, sm_error *err) {
    sm_bam *b = calloc(1, sizeof *b);
    if (!b) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (load_htslib(&b->hts, err) != SM_OK) {
        free(b);
        return NULL;
    }
    b->header = b->hts.sam_hdr_parse(header_len, header);
    if (!b->header) {
        sm_set_error(err, SM_ERR_INVALID,
                     "--format bam: htslib refused the header (two target records with one name?); --format sam "
                     "writes it as text");
        free(b);
        return NULL;
    }
    /* the BGZF blocks go straight to the output's file, after what its buffer holds */
    int fd = -1;
    if (sm_writer_flush(out) != 0 || fflush(out->file) != 0 || (fd = dup(fileno(out->file))) < 0) {
        sm_set_error(err, SM_ERR_IO, "%s", strerror(out->error ? out->error : errno));
    } else if (!(b->file = b->hts.bgzf_dopen(fd, "w"))) {
        close(fd);
        sm_set_error(err, SM_ERR_IO, "--format bam: htslib could not start the BGZF output");
    } else if (b->hts.bam_hdr_write(b->file, b->header) < 0) {
        sm_set_error(err, SM_ERR_IO, "writing the BAM header: %s", strerror(errno ? errno : EIO));
    } else if (!(b->record = b->hts.bam_init1())) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    } else {
        return b;
    }
    sm_bam_end(b, NULL);
    return NULL;
}

int sm_bam_line(sm_bam *b, const char *line, size_t len, sm_error *err) {
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (len + 1 > b->line.m) {
        size_t cap = len + 256;
        char *grown = realloc(b->line.s, cap);
        if (!grown) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        b->line.s = grown;
        b->line.m = cap;
    }
    memcpy(b->line.s, line, len);
    b->line.s[len] = '\0';
    b->line.l = len;
    b->lines++;
    if (b->hts.sam_parse1(&b->line, b->header, b->record) < 0)
        return sm_set_error(err, SM_ERR_INVALID, "--format bam: htslib refused alignment %llu",
                            (unsigned long long)b->lines);
    if (b->hts.bam_write1(b->file, b->record) < 0)
        return sm_set_error(err, SM_ERR_IO, "writing BAM: %s", strerror(errno ? errno : EIO));
    return SM_OK;
}

int sm_bam_end(sm_bam *b, sm_error *err) {
    int status = SM_OK;
    if (!b) return status;
    if (b->record) b->hts.bam_destroy1(b->record);
    /* closing writes the last block and the end-of-file marker */
    if (b->file && b->hts.bgzf_close(b->file) != 0 && err)
        status = sm_set_error(err, SM_ERR_IO, "writing BAM: %s", strerror(errno ? errno : EIO));
    if (b->header) b->hts.sam_hdr_destroy(b->header);
    free(b->line.s);
    free(b);
    return status;
}
