/* What the files of the hit output (include/seqmatch_output.h) share: the
 * writer's buffer, written inline on the hot path, and the SAM and profile
 * parts of the formatter. */
#ifndef SM_OUTPUT_INTERNAL_H
#define SM_OUTPUT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/internal.h"
#include "seqmatch_output.h"

struct sm_writer {
    FILE *file;
    char *buf;
    size_t len, cap;
    int error;
    void (*before_write)(void *ctx);
    void *before_write_ctx;
    struct sm_outfile *outfile; /* sm_writer_open's file, closed by sm_writer_close; NULL: none */
    int (*sink)(void *ctx, const void *data, size_t len); /* sm_writer_set_sink: in place of the FILE */
    void *sink_ctx;
};

void sm_writer_write_slow(sm_writer *w, const void *data, size_t len);

static inline void writer_put(sm_writer *w, const void *data, size_t len) {
    if (w->cap - w->len >= len) {
        memcpy(w->buf + w->len, data, len);
        w->len += len;
    } else {
        sm_writer_write_slow(w, data, len);
    }
}

static inline int writer_flush(sm_writer *w) { return sm_writer_flush(w); }

/* The writer of a temporary file (SAM's alignments). */
int sm_writer_init_file(sm_writer *w, FILE *file);

typedef struct {
    char *data;
    size_t cap;
} sm_cigar_buffer;

/* The CIGAR of a hit (sm_hit_cigar) in b, its length in *len; "*" when there
   is none. */
const char *sm_cigar_of_hit(sm_cigar_buffer *b, const sm_db *db, const sm_hit *hit, size_t *len);

/* Profiles: per pattern, its hits counted by class, (bulge kind, bulge
   size) x errors. */
typedef struct sm_profile sm_profile;
/* NULL when out of memory or when the classes would be too many (err filled). */
sm_profile *sm_profile_create(const sm_db *db, sm_error *err);
void sm_profile_add(sm_profile *p, const sm_hit *hit);
/* One line per pattern, names as the formatter formatted them: tsv after a
   '#' header (with header), or JSON lines. */
void sm_profile_write(const sm_profile *p, sm_writer *w, int jsonl, int header, char *const *names,
                      const size_t *name_lens);
void sm_profile_free(sm_profile *p);

/* SAM: patterns as reads, the records with hits as references. */
typedef struct sm_sam sm_sam;
/* bam: the same alignments written as BAM at the end (bam.c). */
sm_sam *sm_sam_open(const sm_db *db, const char *command_line, int bam, sm_error *err);
void sm_sam_free(sm_sam *s);
int sm_sam_add_record(sm_sam *s, uint64_t record, const char *name);
void sm_sam_record_length(sm_sam *s, uint64_t record, uint64_t length);
void sm_sam_record_done(sm_sam *s, uint64_t record);
void sm_sam_hit(sm_sam *s, const char *pattern_name, size_t pattern_name_len, const sm_hit *hit);
/* Writes the header, then the alignments, to out. */
int sm_sam_finish(sm_sam *s, sm_writer *out, sm_error *err);

/* BAM through htslib, loaded at the first call (bam.c): the SAM header's
   text, then each alignment line (a line end or none), then the end, which
   frees it (and with err, reports a failure to finish the file). */
typedef struct sm_bam sm_bam;
/* htslib's functions names[0 .. n) into syms, found at run time: 0, or -1
   with the reason in why (src/backends/htslib_open.c in libseqmatch.so and
   the command; htslib_none.c in libseqmatch.a, which loads nothing). */
int sm_htslib_load(const char *const *names, size_t n, void **syms, char *why, size_t why_size);
sm_bam *sm_bam_begin(sm_writer *out, const char *header, size_t header_len, sm_error *err);
int sm_bam_line(sm_bam *b, const char *line, size_t len, sm_error *err);
int sm_bam_end(sm_bam *b, sm_error *err);

#endif /* SM_OUTPUT_INTERNAL_H */
