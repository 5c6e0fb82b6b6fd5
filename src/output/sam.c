/* Alignments in the hit output: the cigar column (tsv and jsonl) and
 * SAM (patterns as reads, records as references), or the same as BAM
 * (bam.c).
 *
 * SAM's header lists every reference (@SQ, with its length) before the
 * first alignment, but a record's length is known only once it has been
 * read, after its hits may have gone out. So the alignments go to an
 * unlinked temporary file, and the header (the records with hits, in input
 * order) is written before them when the search ends.
 *
 * Per pattern and record the hit with the fewest errors (the leftmost of
 * those: hits come in position order) is the primary alignment, the others
 * are secondary (flag 256). Which line is primary is known only at the
 * record's end, so the lines are written with their plain flag and the
 * primary lines' numbers kept; the copy at the end adds 256 to the others. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"

const char *sm_cigar_of_hit(sm_cigar_buffer *b, const sm_db *db, const sm_hit *hit, size_t *len) {
    for (;;) {
        size_t need = 0;
        int rc = sm_hit_cigar(db, hit, b->data, b->cap, &need);
        if (rc == SM_OK) {
            *len = need;
            return b->data;
        }
        if (rc != SM_ERR_LIMIT) break;
        size_t cap = need + 64;
        char *grown = realloc(b->data, cap);
        if (!grown) break;
        b->data = grown;
        b->cap = cap;
    }
    /* cannot happen for a hit the search gave; SAM's "unavailable" */
    *len = 1;
    return "*";
}

/* ------------------------------------------------------------------ SAM */

typedef struct {
    char *name;
    uint64_t length;
    int has_hits;
    int done;
} sam_record;

typedef struct {
    char *name;
    uint64_t length;
} sam_reference;

struct sm_sam {
    const sm_db *db;
    sm_writer body;          /* the alignments, in a temporary file */
    FILE *body_file;
    sm_cigar_buffer cigar;
    char *seq;                /* the pattern or its reverse complement */
    size_t seq_cap;
    /* records in flight: record first + i at records[head + i], i < count */
    sam_record *records;
    uint64_t first;
    size_t head, count, cap;
    /* the references of the header, in input order */
    sam_reference *refs;
    size_t nrefs, refs_cap;
    /* the best hit so far of each pattern in the record whose hits come now */
    uint32_t patterns;
    uint64_t hit_record;      /* that record + 1 (0: none yet) */
    uint64_t lines;           /* alignment lines written */
    uint32_t *best_errors;    /* per pattern */
    uint64_t *best_line;      /* per pattern: its line, + 1 (0: no hit in the record) */
    uint32_t *touched;        /* patterns with a hit in the record */
    size_t ntouched;
    char *command_line;       /* @PG's CL: */
    int bam;                  /* written as BAM at the end */
    uint64_t *primary;        /* the primary lines, ascending */
    size_t nprimary, primary_cap;
    int failed;               /* out of memory */
};

sm_sam *sm_sam_open(const sm_db *db, const char *command_line, int bam, sm_error *err) {
    sm_sam *s = calloc(1, sizeof *s);
    if (!s) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    s->db = db;
    s->bam = bam;
    sm_db_info info;
    sm_db_get_info(db, &info);
    uint32_t patterns = s->patterns = info.pattern_count;
    s->best_errors = malloc(((size_t)patterns + 1) * sizeof *s->best_errors);
    s->best_line = calloc((size_t)patterns + 1, sizeof *s->best_line);
    s->touched = malloc(((size_t)patterns + 1) * sizeof *s->touched);
    s->command_line = strdup(command_line ? command_line : "");
    if (!s->best_errors || !s->best_line || !s->touched || !s->command_line) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        free(s->command_line);
        free(s->best_errors);
        free(s->best_line);
        free(s->touched);
        free(s);
        return NULL;
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    int fd = -1;
    if (path) {
        snprintf(path, n, "%s/seqmatch-sam.XXXXXX", dir);
        fd = mkstemp(path);
    }
    if (fd < 0) {
        sm_set_error(err, SM_ERR_IO, "%s: cannot make a temporary file for the SAM alignments: %s", dir,
                     strerror(errno));
        free(path);
        free(s->command_line);
        free(s->best_errors);
        free(s->best_line);
        free(s->touched);
        free(s);
        return NULL;
    }
    unlink(path); /* gone with the process, whatever ends it */
    free(path);
    s->body_file = fdopen(fd, "w+");
    if (!s->body_file || sm_writer_init_file(&s->body, s->body_file) != 0) {
        if (s->body_file) fclose(s->body_file);
        else close(fd);
        free(s->command_line);
        free(s->best_errors);
        free(s->best_line);
        free(s->touched);
        free(s);
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return s;
}

void sm_sam_free(sm_sam *s) {
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) free(s->records[s->head + i].name);
    free(s->records);
    for (size_t i = 0; i < s->nrefs; i++) free(s->refs[i].name);
    free(s->refs);
    free(s->body.buf);
    if (s->body_file) fclose(s->body_file);
    free(s->cigar.data);
    free(s->seq);
    free(s->best_errors);
    free(s->best_line);
    free(s->touched);
    free(s->primary);
    free(s->command_line);
    free(s);
}

static sam_record *sam_record_of(sm_sam *s, uint64_t record) {
    if (record < s->first || record - s->first >= s->count) return NULL;
    return &s->records[s->head + (size_t)(record - s->first)];
}

int sm_sam_add_record(sm_sam *s, uint64_t record, const char *name) {
    if (s->count == 0) s->first = record, s->head = 0;
    if (record != s->first + s->count) return -1;
    if (s->head + s->count == s->cap) {
        if (s->head > 0) {
            memmove(s->records, s->records + s->head, s->count * sizeof *s->records);
            s->head = 0;
        } else {
            size_t cap = s->cap ? s->cap * 2 : 64;
            sam_record *grown = realloc(s->records, cap * sizeof *grown);
            if (!grown) return -1;
            s->records = grown;
            s->cap = cap;
        }
    }
    sam_record *r = &s->records[s->head + s->count];
    memset(r, 0, sizeof *r);
    r->name = strdup(name ? name : "");
    if (!r->name) return -1;
    s->count++;
    return 0;
}

void sm_sam_record_length(sm_sam *s, uint64_t record, uint64_t length) {
    sam_record *r = sam_record_of(s, record);
    if (r) r->length = length;
}

void sm_sam_record_done(sm_sam *s, uint64_t record) {
    sam_record *r = sam_record_of(s, record);
    if (!r) return;
    if (r->has_hits) {
        if (s->nrefs == s->refs_cap) {
            size_t cap = s->refs_cap ? s->refs_cap * 2 : 16;
            sam_reference *grown = realloc(s->refs, cap * sizeof *grown);
            if (!grown) {
                s->failed = 1;
                return;
            }
            s->refs = grown;
            s->refs_cap = cap;
        }
        s->refs[s->nrefs].name = r->name;
        s->refs[s->nrefs].length = r->length;
        s->nrefs++;
    } else {
        free(r->name);
    }
    r->name = NULL;
    r->done = 1;
    while (s->count > 0 && s->records[s->head].done) {
        s->head++;
        s->first++;
        s->count--;
    }
}

static void put_u64(sm_writer *w, uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    char out[24];
    for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    writer_put(w, out, (size_t)n);
}

static void put_str(sm_writer *w, const char *s) { writer_put(w, s, strlen(s)); }

/* SAM follows the reference: a '-' hit's CIGAR (given in the pattern's
   direction) reversed run by run, and the pattern reverse-complemented. */
static void put_reversed_cigar(sm_writer *w, const char *cigar, size_t len) {
    size_t end = len;
    while (end > 0) {
        size_t op = end - 1, start = op;
        while (start > 0 && cigar[start - 1] >= '0' && cigar[start - 1] <= '9') start--;
        writer_put(w, cigar + start, end - start);
        end = start;
    }
}

static const char *pattern_for_sam(sm_sam *s, uint32_t pattern, int reverse, size_t *len) {
    const char *seq = sm_db_pattern_seq(s->db, pattern, len);
    if (!seq || !reverse) return seq;
    if (*len > s->seq_cap) {
        char *grown = realloc(s->seq, *len);
        if (!grown) return NULL;
        s->seq = grown;
        s->seq_cap = *len;
    }
    static const char from[] = "ACGTRYSWKMBDHVN", to[] = "TGCAYRSWMKVHDBN";
    for (size_t i = 0; i < *len; i++) {
        const char *at = strchr(from, seq[*len - 1 - i]);
        s->seq[i] = at ? to[at - from] : 'N';
    }
    return s->seq;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The record whose hits came last is complete: its primary lines, in order. */
static void close_hit_record(sm_sam *s) {
    if (s->ntouched == 0) return;
    if (s->nprimary + s->ntouched > s->primary_cap) {
        size_t cap = s->primary_cap ? s->primary_cap * 2 : 256;
        while (cap < s->nprimary + s->ntouched) cap *= 2;
        uint64_t *grown = realloc(s->primary, cap * sizeof *grown);
        if (!grown) {
            s->failed = 1;
            return;
        }
        s->primary = grown;
        s->primary_cap = cap;
    }
    uint64_t *at = s->primary + s->nprimary;
    for (size_t i = 0; i < s->ntouched; i++) {
        at[i] = s->best_line[s->touched[i]] - 1;
        s->best_line[s->touched[i]] = 0;
    }
    qsort(at, s->ntouched, sizeof *at, compare_u64);
    s->nprimary += s->ntouched;
    s->ntouched = 0;
}

/* Hits come in (record, start, ...) order: the first with the fewest errors
   of a pattern in a record is its leftmost best. */
static void note_hit(sm_sam *s, const sm_hit *hit) {
    if (hit->record + 1 != s->hit_record) {
        close_hit_record(s);
        s->hit_record = hit->record + 1;
    }
    uint32_t p = hit->pattern;
    if (s->best_line[p] == 0) {
        s->touched[s->ntouched++] = p;
    } else if (hit->errors >= s->best_errors[p]) {
        s->lines++;
        return;
    }
    s->best_errors[p] = hit->errors;
    s->best_line[p] = ++s->lines;
}

void sm_sam_hit(sm_sam *s, const char *pattern_name, size_t pattern_name_len, const sm_hit *hit) {
    sam_record *r = sam_record_of(s, hit->record);
    if (!r || hit->pattern >= s->patterns) return;
    r->has_hits = 1;
    note_hit(s, hit);
    sm_writer *w = &s->body;
    int reverse = hit->strand == '-';
    writer_put(w, pattern_name, pattern_name_len);
    put_str(w, reverse ? "\t16\t" : "\t0\t");
    put_str(w, r->name);
    writer_put(w, "\t", 1);
    put_u64(w, hit->start + 1);
    put_str(w, "\t255\t");
    size_t cigar_len = 0;
    const char *cigar = sm_cigar_of_hit(&s->cigar, s->db, hit, &cigar_len);
    if (reverse) put_reversed_cigar(w, cigar, cigar_len);
    else writer_put(w, cigar, cigar_len);
    put_str(w, "\t*\t0\t0\t");
    size_t seq_len = 0;
    const char *seq = pattern_for_sam(s, hit->pattern, reverse, &seq_len);
    if (seq) writer_put(w, seq, seq_len);
    else s->failed = 1;
    put_str(w, "\t*\tNM:i:");
    put_u64(w, hit->errors);
    writer_put(w, "\n", 1);
}

/* Hands each alignment line to emit, with 256 added to the flag of every
   line that is not primary. Returns 0, -1 on a read error, or emit's
   non-zero. */
typedef int (*line_sink)(void *ctx, const char *line, size_t len);

static int copy_alignments(sm_sam *s, line_sink emit, void *ctx) {
    char *line = NULL, *fixed = NULL;
    size_t cap = 0, fixed_cap = 0, next = 0;
    ssize_t n;
    int status = 0;
    for (uint64_t i = 0; status == 0 && (n = getline(&line, &cap, s->body_file)) > 0; i++) {
        while (next < s->nprimary && s->primary[next] < i) next++;
        const char *tab = memchr(line, '\t', (size_t)n);
        /* QNAME, then the flag (0 or 16) */
        const char *flag = tab ? tab + 1 : NULL, *flag_end = flag ? memchr(flag, '\t', (size_t)(line + n - flag)) : NULL;
        if ((next < s->nprimary && s->primary[next] == i) || !flag_end) {
            status = emit(ctx, line, (size_t)n);
            continue;
        }
        if ((size_t)n + 24 > fixed_cap) {
            char *grown = realloc(fixed, (size_t)n + 64);
            if (!grown) {
                s->failed = 1;
                status = -1;
                break;
            }
            fixed = grown;
            fixed_cap = (size_t)n + 64;
        }
        size_t head = (size_t)(flag - line);
        memcpy(fixed, line, head);
        int digits = snprintf(fixed + head, 24, "%llu", strtoull(flag, NULL, 10) | 256ull);
        memcpy(fixed + head + (size_t)digits, flag_end, (size_t)(line + n - flag_end));
        status = emit(ctx, fixed, head + (size_t)digits + (size_t)(line + n - flag_end));
    }
    free(line);
    free(fixed);
    if (status) return status;
    return ferror(s->body_file) ? -1 : 0;
}

static int emit_text(void *ctx, const char *line, size_t len) {
    writer_put(ctx, line, len);
    return 0;
}

typedef struct {
    sm_bam *bam;
    sm_error *err;
} bam_sink;

static int emit_bam(void *ctx, const char *line, size_t len) {
    bam_sink *b = ctx;
    return sm_bam_line(b->bam, line, len, b->err) == SM_OK ? 0 : 1;
}

/* Sorted by reference (in @SQ order, the input's) and position. */
static void put_header(sm_sam *s, sm_writer *out) {
    put_str(out, "@HD\tVN:1.6\tSO:coordinate\n");
    for (size_t i = 0; i < s->nrefs; i++) {
        put_str(out, "@SQ\tSN:");
        put_str(out, s->refs[i].name);
        put_str(out, "\tLN:");
        put_u64(out, s->refs[i].length ? s->refs[i].length : 1);
        writer_put(out, "\n", 1);
    }
    put_str(out, "@PG\tID:seqmatch\tPN:seqmatch\tVN:" SM_VERSION_STRING "\tCL:");
    put_str(out, s->command_line);
    writer_put(out, "\n", 1);
}

/* The header's text in memory, for htslib. */
static char *header_text(sm_sam *s, size_t *len) {
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    if (!mem) return NULL;
    sm_writer w;
    int ok = sm_writer_init_file(&w, mem) == 0;
    if (ok) {
        put_header(s, &w);
        ok = writer_flush(&w) == 0;
        free(w.buf);
    }
    if (fclose(mem) != 0) ok = 0;
    if (!ok) {
        free(text);
        return NULL;
    }
    return text;
}

int sm_sam_finish(sm_sam *s, sm_writer *out, sm_error *err) {
    close_hit_record(s);
    if (s->failed) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    if (writer_flush(&s->body) != 0 || fflush(s->body_file) != 0)
        return sm_set_error(err, SM_ERR_IO, "the temporary SAM file: %s",
                            strerror(s->body.error ? s->body.error : errno));
    rewind(s->body_file);
    if (!s->bam) {
        put_header(s, out);
        if (copy_alignments(s, emit_text, out) != 0)
            return sm_set_error(err, SM_ERR_IO, "the temporary SAM file: %s", strerror(errno));
        return SM_OK;
    }
    size_t len = 0;
    char *text = header_text(s, &len);
    if (!text) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    bam_sink sink = {sm_bam_begin(out, text, len, err), err};
    free(text);
    if (!sink.bam) return err ? err->code : SM_ERR_IO;
    int copied = copy_alignments(s, emit_bam, &sink);
    if (copied != 0) {
        sm_bam_end(sink.bam, NULL);
        if (copied < 0)
            return s->failed ? sm_set_error(err, SM_ERR_NOMEM, "out of memory")
                             : sm_set_error(err, SM_ERR_IO, "the temporary SAM file: %s", strerror(errno));
        return err ? err->code : SM_ERR_IO;
    }
    return sm_bam_end(sink.bam, err);
}
