/* Files read one after another into a runner and its formatter
 * (sm_runner_scan_files, sm_check_input_files; seqmatch_output.h), through
 * the installed headers only, linked against libseqmatch.so and
 * libseqmatch.a. Three random FASTA/FASTQ files with planted sites: the
 * hits and the counts per file equal those of each file scanned alone with
 * sm_runner_scan_reader (the oracle), at 1, 2 and 4 threads and chunk sizes
 * small enough to cut records; TSV names each hit's file; a stop at the
 * first hit, a start stopped (zero counts per file, no file opened), the
 * caller's limit (a stop) and a callback's stop without it (a failure with
 * an empty message); a missing file in the middle, its message; the first
 * sequence of each file shown once; a protein-looking record start
 * (sm_seq_looks_like_protein) told from DNA. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <seqmatch_output.h>

#include "check.h"

static char dir[] = "/tmp/sm_scan_files_XXXXXX";
static char paths[4][64];
static const char *const sites[] = {"GAATTC", "GGATCC"};

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void write_file(const char *path, int fastq, int records) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    for (int r = 0; r < records; r++) {
        size_t len = 50 + next() % 400;
        char *seq = malloc(len + 1);
        for (size_t i = 0; i < len; i++) seq[i] = "ACGT"[next() % 4];
        for (int k = 0; k < 3; k++) {
            const char *s = sites[next() % 2];
            size_t at = next() % (len - 6);
            memcpy(seq + at, s, 6);
        }
        seq[len] = 0;
        if (fastq) {
            fprintf(f, "@r%d\n%s\n+\n", r, seq);
            for (size_t i = 0; i < len; i++) fputc('I', f);
            fputc('\n', f);
        } else {
            fprintf(f, ">r%d\n%s\n", r, seq);
        }
        free(seq);
    }
    fclose(f);
}

typedef struct {
    sm_formatter *f;
    uint64_t hits, limit;
    int limit_reached;
    unsigned files_opened, first_sequences;
    char first_records[4][16];
} ctx_t;

static int on_hit(const sm_hit *hit, void *c) {
    ctx_t *s = c;
    if (s->f) sm_formatter_hit(s->f, hit);
    if (++s->hits >= s->limit) {
        s->limit_reached = 1;
        return 1;
    }
    return 0;
}

static void on_record_done(uint64_t record, void *c) {
    ctx_t *s = c;
    if (s->f) sm_formatter_record_done(s->f, record);
}

static int limit_reached(void *c) { return ((ctx_t *)c)->limit_reached; }
static void on_file(void *c, const char *path) {
    (void)path;
    ((ctx_t *)c)->files_opened++;
}
static void on_first(void *c, const char *path, const char *record, const uint8_t *data, size_t len) {
    ctx_t *s = c;
    (void)path, (void)data, (void)len;
    if (s->first_sequences < 4) snprintf(s->first_records[s->first_sequences], 16, "%s", record);
    s->first_sequences++;
}

static sm_runner *runner_for(const sm_db *db, ctx_t *s, unsigned threads, size_t chunk, int count_only) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    ro.count_only = count_only;
    ro.on_hit = on_hit;
    ro.on_record_done = on_record_done;
    ro.ctx = s;
    sm_runner *runner = NULL;
    sm_error err;
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
    return runner;
}

/* The oracle: file i scanned alone, its counts per pattern. */
static void counts_alone(const sm_db *db, const char *path, uint64_t counts[2]) {
    ctx_t s = {NULL, 0, UINT64_MAX, 0, 0, 0, {{0}}};
    sm_runner *runner = runner_for(db, &s, 1, 0, 1);
    sm_reader *reader = NULL;
    sm_error err;
    counts[0] = counts[1] = 0;
    if (!runner || sm_reader_open(path, SM_INPUT_AUTO, &reader, &err) != SM_OK) return;
    CHECK(sm_runner_scan_reader(runner, reader, NULL, &err) == SM_OK, "oracle scan");
    CHECK(sm_runner_flush(runner) == SM_OK, "oracle flush");
    counts[0] = sm_runner_counts(runner)[0];
    counts[1] = sm_runner_counts(runner)[1];
    sm_reader_close(reader);
    sm_runner_free(runner);
}

/* The formatted output of a scan of the three files (read back). */
static char *scan_three(const sm_db *db, sm_output_format format, unsigned threads, size_t chunk,
                        sm_scan_files_options *so, ctx_t *s, int *status, int *stopped, sm_error *err) {
    FILE *out = tmpfile(); /* not a memory stream: the writer makes its FILE unbuffered */
    if (!out) return NULL;
    sm_writer *w = sm_writer_new(out);
    s->f = sm_formatter_new(format, 0, 1, db, w, err);
    sm_formatter_begin(s->f);
    sm_runner *runner = runner_for(db, s, threads, chunk, format == SM_FORMAT_COUNT);
    so->formatter = s->f;
    so->name_records = format != SM_FORMAT_COUNT;
    so->show_file = 1;
    so->pattern_count = 2;
    so->ctx = s;
    char *list[3] = {paths[0], paths[1], paths[2]};
    *status = sm_runner_scan_files(runner, list, 3, so, stopped, err);
    sm_error end;
    if (*status == SM_OK) sm_formatter_end(s->f, &end);
    sm_writer_flush(w);
    sm_runner_free(runner);
    sm_formatter_free(s->f);
    sm_writer_free(w);
    long n = ftell(out);
    char *text = calloc((size_t)n + 1, 1);
    rewind(out);
    if (text && fread(text, 1, (size_t)n, out) != (size_t)n) text[0] = 0;
    fclose(out);
    return text;
}

static unsigned lines_starting(const char *text, const char *prefix) {
    unsigned n = 0;
    size_t k = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, k) == 0) n++;
    return n;
}

int main(void) {
    if (!mkdtemp(dir)) return 2;
    for (int i = 0; i < 4; i++) snprintf(paths[i], sizeof paths[i], "%s/f%d.%s", dir, i, i == 1 ? "fq" : "fa");
    write_file(paths[0], 0, 300);
    write_file(paths[1], 1, 200);
    write_file(paths[2], 0, 250);
    sm_pattern patterns[2];
    memset(patterns, 0, sizeof patterns);
    patterns[0].seq = sites[0], patterns[0].len = 6, patterns[0].name = "EcoRI";
    patterns[1].seq = sites[1], patterns[1].len = 6, patterns[1].name = "BamHI";
    sm_compile_options co;
    sm_compile_options_init(&co);
    sm_db *db = NULL;
    sm_error err;
    if (sm_compile(patterns, 2, &co, &db, &err) != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        return 1;
    }
    uint64_t want[3][2], total = 0;
    for (int i = 0; i < 3; i++) {
        counts_alone(db, paths[i], want[i]);
        total += want[i][0] + want[i][1];
    }
    CHECK(total > 1000, "only %llu sites", (unsigned long long)total);

    static const unsigned threads[] = {1, 2, 4};
    static const size_t chunks[] = {0, 4096, 65536};
    for (int t = 0; t < 3; t++)
        for (int c = 0; c < 3; c++) {
            /* counts per file */
            ctx_t s = {NULL, 0, UINT64_MAX, 0, 0, 0, {{0}}};
            sm_scan_files_options so;
            sm_scan_files_options_init(&so);
            so.counts_per_file = 1;
            so.on_file = on_file;
            so.on_first_sequence = on_first;
            int status, stopped;
            char *text = scan_three(db, SM_FORMAT_COUNT, threads[t], chunks[c], &so, &s, &status, &stopped, &err);
            CHECK(status == SM_OK && !stopped, "counts: %d %s", status, err.message);
            for (int i = 0; i < 3; i++) {
                char line[2048];
                snprintf(line, sizeof line, "%s\tEcoRI\t%llu\n%s\tBamHI\t%llu\n%s\ttotal\t%llu\n", paths[i],
                         (unsigned long long)want[i][0], paths[i], (unsigned long long)want[i][1], paths[i],
                         (unsigned long long)(want[i][0] + want[i][1]));
                CHECK(text && strstr(text, line), "t%u c%zu: file %d's counts, want\n%sin\n%s", threads[t], chunks[c],
                      i, line, text ? text : "");
            }
            CHECK(s.files_opened == 3 && s.first_sequences == 3, "files %u, first sequences %u", s.files_opened,
                  s.first_sequences);
            CHECK(strcmp(s.first_records[1], "r0") == 0, "file 2's first record '%s'", s.first_records[1]);
            free(text);
            /* every hit, named with its file */
            ctx_t h = {NULL, 0, UINT64_MAX, 0, 0, 0, {{0}}};
            sm_scan_files_options_init(&so);
            text = scan_three(db, SM_FORMAT_TSV, threads[t], chunks[c], &so, &h, &status, &stopped, &err);
            CHECK(status == SM_OK && !stopped, "tsv: %d %s", status, err.message);
            for (int i = 0; i < 3; i++) {
                char prefix[600];
                snprintf(prefix, sizeof prefix, "%s\tr", paths[i]);
                CHECK(lines_starting(text, prefix) == want[i][0] + want[i][1], "file %d: %u lines, want %llu", i,
                      lines_starting(text, prefix), (unsigned long long)(want[i][0] + want[i][1]));
            }
            free(text);
        }

    /* the first hit stops the reading: a success, one file opened */
    ctx_t s = {NULL, 0, UINT64_MAX, 0, 0, 0, {{0}}};
    sm_scan_files_options so;
    sm_scan_files_options_init(&so);
    so.stop_at_first_hit = 1;
    so.on_file = on_file;
    int status, stopped;
    /* (small batches: the runner's total grows while the first file is read) */
    free(scan_three(db, SM_FORMAT_COUNT, 1, 4096, &so, &s, &status, &stopped, &err));
    CHECK(status == SM_OK && stopped && s.files_opened == 1, "first hit: %d %d %u", status, stopped, s.files_opened);

    /* started stopped: no file opened, zero counts for each */
    ctx_t z = {NULL, 0, UINT64_MAX, 0, 0, 0, {{0}}};
    sm_scan_files_options_init(&so);
    so.start_stopped = 1;
    so.counts_per_file = 1;
    so.on_file = on_file;
    char *text = scan_three(db, SM_FORMAT_COUNT, 2, 0, &so, &z, &status, &stopped, &err);
    CHECK(status == SM_OK && stopped && z.files_opened == 0, "start stopped: %d %d %u", status, stopped,
          z.files_opened);
    CHECK(lines_starting(text, paths[2]) == 3 && strstr(text, "\ttotal\t0\n"), "zero counts:\n%s", text);
    free(text);

    /* the caller's limit: a stop; without the limit callback: a failure with no message */
    for (int with_limit = 0; with_limit <= 1; with_limit++) {
        ctx_t l = {NULL, 0, 7, 0, 0, 0, {{0}}};
        sm_scan_files_options_init(&so);
        if (with_limit) so.limit_reached = limit_reached;
        text = scan_three(db, SM_FORMAT_TSV, 2, 4096, &so, &l, &status, &stopped, &err);
        if (with_limit) CHECK(status == SM_OK && stopped == 1, "limit: %d %d %s", status, stopped, err.message);
        else CHECK(status == SM_ERR_TERMINATED && err.message[0] == 0, "no limit: %d '%s'", status, err.message);
        CHECK(l.hits == 7, "%llu hits delivered", (unsigned long long)l.hits);
        free(text);
    }

    /* a missing file in the middle */
    snprintf(paths[3], sizeof paths[3], "%s", paths[1]);
    snprintf(paths[1], sizeof paths[1], "%s/missing.fa", dir);
    ctx_t m = {NULL, 0, UINT64_MAX, 0, 0, 0, {{0}}};
    sm_scan_files_options_init(&so);
    so.on_file = on_file;
    free(scan_three(db, SM_FORMAT_TSV, 2, 0, &so, &m, &status, &stopped, &err));
    char message[256];
    snprintf(message, sizeof message, "%s: %s", paths[1], strerror(ENOENT));
    CHECK(status == SM_ERR_IO && strstr(err.message, paths[1]) && m.files_opened == 1, "missing: %d '%s' %u", status,
          err.message, m.files_opened);

    /* the check before any output */
    char *list[4] = {paths[0], "-", paths[3], paths[1]};
    CHECK(sm_check_input_files(list, 3, &err) == SM_OK, "readable files refused: %s", err.message);
    CHECK(sm_check_input_files(list, 4, &err) == SM_ERR_IO && strcmp(err.message, message) == 0, "missing: '%s'",
          err.message);
    char *folder[1] = {dir};
    snprintf(message, sizeof message, "%s: %s", dir, strerror(EISDIR));
    CHECK(sm_check_input_files(folder, 1, &err) == SM_ERR_IO && strcmp(err.message, message) == 0, "folder: '%s'",
          err.message);

    /* protein or DNA: letters that are no nucleotide code */
    size_t letters = 0, other = 0;
    char seen[16];
    const char *protein = "MKVLAAGIVGLLLAAQPAMAmkvlaagivgEFX12";
    CHECK(sm_seq_looks_like_protein((const uint8_t *)protein, strlen(protein), &letters, &other, seen) == 1 &&
              letters == 33 && other == 12 && strcmp(seen, "L I Q P E F") == 0,
          "protein: %zu %zu '%s'", letters, other, seen);
    const char *dna = "ACGTNRYKMacgtnnnnACGTACGTACGTGGGCCCAAATTT";
    CHECK(sm_seq_looks_like_protein((const uint8_t *)dna, strlen(dna), &letters, &other, seen) == 0 && other == 0,
          "dna: %zu", other);
    CHECK(sm_seq_looks_like_protein((const uint8_t *)"LLLLLLLLLL", 10, &letters, &other, seen) == 0,
          "10 letters are too few");
    char *late = malloc(5000);
    memset(late, 'A', 4096);
    memset(late + 4096, 'L', 904);
    CHECK(sm_seq_looks_like_protein((const uint8_t *)late, 5000, &letters, &other, seen) == 0 && letters == 4096,
          "past the first 4096 bytes: %zu letters", letters);
    free(late);

    sm_db_free(db);
    for (int i = 0; i < 4; i++) remove(paths[i]);
    remove(dir);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
