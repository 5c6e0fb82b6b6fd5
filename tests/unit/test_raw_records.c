/* The reader's record bytes (sm_reader_keep_raw, sm_reader_record_raw):
 * random FASTA, FASTQ and line files in every layout the reader accepts
 * (wrapped lines, \r\n and lone \r, comments in headers, blank lines, no
 * final line end), read plain (in place), gzip-compressed (streamed, the
 * buffer growing for records longer than it) and through a pipe. Each
 * record's bytes must be exactly its stretch of the file, one after the
 * other, and the sequences read beside them must not change. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/seqio.h"
#include "testutil.h"

static tu_rng rng;

typedef struct {
    char *data;
    size_t len, cap;
} text;

static void put(text *t, const void *p, size_t n) {
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->data = realloc(t->data, t->cap);
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void puts_t(text *t, const char *s) { put(t, s, strlen(s)); }

/* What a file holds, and what the reader should give for it. */
typedef struct {
    text file;          /* the whole file */
    size_t first;       /* offset of the first record (after a BOM and blank lines) */
    size_t nrec;
    size_t starts[600]; /* offset of each record; starts[nrec] = file.len */
    text seqs[600];     /* each record's sequence, line ends removed */
    char names[600][32];
} sample;

static void sample_free(sample *s) {
    free(s->file.data);
    for (size_t i = 0; i < s->nrec; i++) free(s->seqs[i].data);
    memset(s, 0, sizeof *s);
}

static const char *line_end(void) {
    unsigned r = tu_rng_below(&rng, 10);
    return r < 7 ? "\n" : r < 9 ? "\r\n" : "\r";
}

/* A random FASTA or FASTQ file. long_record: one record of about 3 MiB. */
static void make_sequences(sample *s, int fastq, int long_record) {
    memset(s, 0, sizeof *s);
    if (tu_rng_chance(&rng, 20)) puts_t(&s->file, "\xef\xbb\xbf");
    if (tu_rng_chance(&rng, 20)) puts_t(&s->file, "\n\n");
    s->first = s->file.len;
    s->nrec = long_record ? 3 : 1 + tu_rng_below(&rng, 40);
    const char *eol = line_end(); /* one kind of line end per file, mostly */
    for (size_t i = 0; i < s->nrec; i++) {
        s->starts[i] = s->file.len;
        snprintf(s->names[i], sizeof s->names[i], "r%zu", i);
        put(&s->file, fastq ? "@" : ">", 1);
        puts_t(&s->file, s->names[i]);
        if (tu_rng_chance(&rng, 40)) puts_t(&s->file, " a comment\twith tab");
        if (tu_rng_chance(&rng, 5)) eol = line_end();
        puts_t(&s->file, eol);
        size_t n = long_record && i == 1 ? (3u << 20) + tu_rng_below(&rng, 1000) : tu_rng_below(&rng, 300);
        if (fastq && n == 0) n = 1;
        char *seq = malloc(n + 1);
        tu_random_iupac(&rng, seq, n, 5, 20);
        put(&s->seqs[i], seq, n);
        size_t width = tu_rng_chance(&rng, 50) ? n + 1 : 1 + tu_rng_below(&rng, 80);
        for (size_t at = 0; at < n; at += width) {
            size_t w = n - at < width ? n - at : width;
            put(&s->file, seq + at, w);
            puts_t(&s->file, eol);
        }
        if (n == 0 && tu_rng_chance(&rng, 50)) puts_t(&s->file, eol);
        if (fastq) {
            puts_t(&s->file, tu_rng_chance(&rng, 50) ? "+" : "+ again");
            puts_t(&s->file, eol);
            for (size_t j = 0; j < n; j++) seq[j] = (char)('!' + tu_rng_below(&rng, 60));
            size_t qw = tu_rng_chance(&rng, 70) ? n + 1 : width;
            for (size_t at = 0; at < n; at += qw) {
                size_t w = n - at < qw ? n - at : qw;
                put(&s->file, seq + at, w);
                puts_t(&s->file, eol);
            }
        }
        free(seq);
        if (tu_rng_chance(&rng, 15)) { /* blank lines belong to the record before them */
            puts_t(&s->file, eol);
            if (tu_rng_chance(&rng, 50)) puts_t(&s->file, "  \t");
            puts_t(&s->file, eol);
        }
    }
    /* sometimes no line end after the last line */
    size_t eol_len = strlen(eol);
    if (tu_rng_chance(&rng, 30) && s->file.len >= eol_len &&
        memcmp(s->file.data + s->file.len - eol_len, eol, eol_len) == 0 &&
        s->file.data[s->file.len - eol_len - 1] != '\n' && s->file.data[s->file.len - eol_len - 1] != '\r')
        s->file.len -= eol_len;
    s->starts[s->nrec] = s->file.len;
}

/* A random text file read as lines. */
static void make_lines(sample *s) {
    memset(s, 0, sizeof *s);
    s->nrec = 1 + tu_rng_below(&rng, 50);
    const char *eol = line_end(); /* one kind: a lone \r before an empty \n line would be one \r\n */
    for (size_t i = 0; i < s->nrec; i++) {
        s->starts[i] = s->file.len;
        size_t n = tu_rng_below(&rng, 40);
        char buf[64];
        tu_random_from(&rng, buf, n, "abc ACG\t>@+");
        put(&s->file, buf, n);
        put(&s->seqs[i], buf, n);
        if (i + 1 < s->nrec || tu_rng_chance(&rng, 70)) puts_t(&s->file, eol);
    }
    s->starts[s->nrec] = s->file.len;
}

static char *temp_path(const char *suffix) {
    char *p = malloc(64);
    snprintf(p, 64, "/tmp/sm_raw_XXXXXX");
    int fd = mkstemp(p);
    close(fd);
    unlink(p);
    strcat(p, suffix);
    return p;
}

static void write_plain(const char *path, const text *t) {
    FILE *f = fopen(path, "wb");
    fwrite(t->data, 1, t->len, f);
    fclose(f);
}

static void write_gzip(const char *path, const text *t) {
    gzFile g = gzopen(path, "wb1");
    if (t->len) gzwrite(g, t->data, (unsigned)t->len);
    gzclose(g);
}

/* Reads path with raw records kept and checks them against s. read_seq:
   how often the sequence is read before the bytes are asked for (percent);
   otherwise sm_reader_record_raw reads it. */
static void check_file(const char *path, const char *what, const sample *s, sm_input_format format, int want_stable) {
    sm_reader *r;
    sm_error err;
    if (!tu_check(sm_reader_open(path, format, &r, &err) == SM_OK, "%s: open: %s", what, err.message)) return;
    sm_reader_keep_raw(r);
    const char *name;
    size_t i = 0;
    int rc;
    text seq = {0};
    while ((rc = sm_reader_next_record(r, &name, &err)) == 1) {
        if (!tu_check(i < s->nrec, "%s: more records than written", what)) break;
        int read_seq = format == SM_INPUT_LINES || tu_rng_chance(&rng, 80);
        seq.len = 0;
        if (read_seq) {
            const uint8_t *d;
            size_t l;
            while ((rc = sm_reader_read(r, &d, &l, &err)) == 1) put(&seq, d, l);
            tu_check(rc == 0, "%s: read: %s", what, err.message);
            tu_check(seq.len == s->seqs[i].len && (seq.len == 0 || memcmp(seq.data, s->seqs[i].data, seq.len) == 0),
                     "%s: record %zu: sequence differs", what, i);
        }
        if (format != SM_INPUT_LINES) tu_check(strcmp(name, s->names[i]) == 0, "%s: record %zu: name %s", what, i, name);
        const uint8_t *raw;
        size_t len;
        int stable = -1;
        rc = sm_reader_record_raw(r, &raw, &len, &stable, &err);
        if (!tu_check(rc == 1, "%s: record %zu: raw: %s", what, i, err.message)) break;
        size_t want_len = s->starts[i + 1] - s->starts[i];
        char ex[80];
        tu_check(len == want_len && memcmp(raw, s->file.data + s->starts[i], len) == 0,
                 "%s: record %zu: %zu raw bytes '%s', want %zu", what, i, len,
                 tu_excerpt((const char *)raw, len, 30, ex, sizeof ex), want_len);
        tu_check(stable == want_stable, "%s: stable %d, want %d", what, stable, want_stable);
        /* a second call gives the same bytes */
        const uint8_t *again;
        size_t again_len;
        tu_check(sm_reader_record_raw(r, &again, &again_len, NULL, &err) == 1 && again_len == len &&
                     memcmp(again, s->file.data + s->starts[i], len) == 0,
                 "%s: record %zu: second call differs", what, i);
        i++;
    }
    tu_check(rc == 0, "%s: next: %s", what, rc < 0 ? err.message : "");
    tu_check(i == s->nrec, "%s: %zu records, want %zu", what, i, s->nrec);
    free(seq.data);
    sm_reader_close(r);
}

static void check_all_ways(const sample *s, sm_input_format format, const char *what) {
    char *plain = temp_path(".txt"), *gz = temp_path(".gz");
    write_plain(plain, &s->file);
    write_gzip(gz, &s->file);
    char label[96];
    snprintf(label, sizeof label, "%s plain", what);
    check_file(plain, label, s, format, 1);
    snprintf(label, sizeof label, "%s gzip", what);
    check_file(gz, label, s, format, 0);
    unlink(plain);
    unlink(gz);
    free(plain);
    free(gz);
}

/* Without sm_reader_keep_raw there are no bytes to give. */
static void test_not_kept(void) {
    sample s;
    make_sequences(&s, 0, 0);
    char *path = temp_path(".fa");
    write_plain(path, &s.file);
    sm_reader *r;
    sm_error err;
    sm_reader_open(path, SM_INPUT_AUTO, &r, &err);
    const char *name;
    const uint8_t *raw;
    size_t len;
    tu_check(sm_reader_next_record(r, &name, &err) == 1, "not kept: a record");
    tu_check(sm_reader_record_raw(r, &raw, &len, NULL, &err) < 0 && err.code == SM_ERR_INVALID,
             "not kept: refused");
    tu_check(sm_reader_format(r) == SM_INPUT_FASTA, "format detected");
    sm_reader_close(r);
    unlink(path);
    free(path);
    sample_free(&s);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(20261201));
    unsigned rounds = tu_scaled(60);
    for (unsigned round = 0; round < rounds; round++) {
        sample s;
        make_sequences(&s, round % 2, 0);
        check_all_ways(&s, SM_INPUT_AUTO, round % 2 ? "fastq" : "fasta");
        sample_free(&s);
        make_lines(&s);
        check_all_ways(&s, SM_INPUT_LINES, "lines");
        sample_free(&s);
    }
    for (int fastq = 0; fastq <= 1; fastq++) {
        sample s;
        make_sequences(&s, fastq, 1);
        check_all_ways(&s, SM_INPUT_AUTO, fastq ? "long fastq" : "long fasta");
        sample_free(&s);
    }
    test_not_kept();
    return tu_summary("test_raw_records");
}
