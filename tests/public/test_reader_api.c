/* The public reader (include/seqmatch_reader.h) and sm_runner_scan_reader,
 * through the installed headers only, linked against libseqmatch.so and
 * libseqmatch.a: plain and gzip files, a caller's byte stream in small
 * pieces, FASTQ errors, text and lines, byte ranges, and a runner fed by the
 * reader against sm_scan of each record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <seqmatch_reader.h>

#include "check.h"


static char dir[] = "/tmp/sm_reader_api_XXXXXX";

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

static void write_file(const char *path, const char *data, int gzip) {
    if (gzip) {
        gzFile g = gzopen(path, "wb");
        gzwrite(g, data, (unsigned)strlen(data));
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(data, 1, strlen(data), f);
        fclose(f);
    }
}

/* Reads every record as "name=sequence;" into out. Returns the reader's last status. */
static int read_all(sm_reader *r, char *out, size_t cap, sm_error *err) {
    size_t at = 0;
    out[0] = '\0';
    const char *name;
    int more;
    while ((more = sm_reader_next_record(r, &name, err)) == 1) {
        at += (size_t)snprintf(out + at, cap - at, "%s=", name);
        const uint8_t *data;
        size_t len;
        int piece;
        while ((piece = sm_reader_read(r, &data, &len, err)) == 1) {
            memcpy(out + at, data, len);
            at += len;
        }
        if (piece < 0) return piece;
        at += (size_t)snprintf(out + at, cap - at, ";");
    }
    return more;
}

static const char fasta[] = ">chr1 first one\r\nACGTN\r\nacgt\r\n\n>chr2\nGAATTCGGATCC\nGAATTC\n>empty\n";
static const char fasta_read[] = "chr1=ACGTNacgt;chr2=GAATTCGGATCCGAATTC;empty=;";

static void test_files(void) {
    char plain[256], gz[256], out[4096];
    path_of(plain, sizeof plain, "a.fa");
    path_of(gz, sizeof gz, "a.fa.gz");
    write_file(plain, fasta, 0);
    write_file(gz, fasta, 1);
    const char *paths[] = {plain, gz};
    for (int i = 0; i < 2; i++) {
        for (unsigned threads = 1; threads <= 2; threads++) {
            sm_reader *r = NULL;
            sm_error err;
            int rc = sm_reader_open_threads(paths[i], SM_INPUT_AUTO, threads, &r, &err);
            CHECK(rc == SM_OK, "open %s: %s", paths[i], err.message);
            if (rc != SM_OK) continue;
            CHECK(read_all(r, out, sizeof out, &err) == 0, "read %s: %s", paths[i], err.message);
            CHECK(strcmp(out, fasta_read) == 0, "%s read as %s", paths[i], out);
            CHECK(sm_reader_format(r) == SM_INPUT_FASTA, "format of %s", paths[i]);
            uint64_t done = 0, total = 0;
            sm_reader_progress(r, &done, &total);
            CHECK(total > 0 && done == total, "progress %llu of %llu", (unsigned long long)done,
                  (unsigned long long)total);
            sm_reader_close(r);
        }
    }
    sm_reader *r = NULL;
    sm_error err;
    CHECK(sm_reader_open(plain, SM_INPUT_TEXT, &r, &err) == SM_OK, "open text");
    CHECK(read_all(r, out, sizeof out, &err) == 0, "read text");
    char want[4096];
    snprintf(want, sizeof want, "%s=%s;", plain, fasta);
    /* text: every byte as in the file */
    CHECK(strcmp(out, want) == 0, "text read as %s", out);
    sm_reader_close(r);
    CHECK(sm_reader_open(plain, SM_INPUT_LINES, &r, &err) == SM_OK, "open lines");
    const char *name;
    int lines = 0;
    while (sm_reader_next_record(r, &name, &err) == 1) {
        lines++;
        char expect[300];
        snprintf(expect, sizeof expect, "%s:%d", plain, lines);
        CHECK(strcmp(name, expect) == 0, "line named %s", name);
    }
    CHECK(lines == 8, "%d lines", lines);
    sm_reader_close(r);
    char missing[256];
    path_of(missing, sizeof missing, "missing.fa");
    CHECK(sm_reader_open(missing, SM_INPUT_AUTO, &r, &err) != SM_OK && strstr(err.message, "missing.fa"),
          "a missing file: %s", err.message);
}

typedef struct {
    const char *data;
    size_t len, at, step;
} stream;

static long read_stream(void *ctx, void *buf, size_t cap, sm_error *err) {
    (void)err;
    stream *s = ctx;
    size_t n = s->len - s->at;
    if (n > s->step) n = s->step;
    if (n > cap) n = cap;
    memcpy(buf, s->data + s->at, n);
    s->at += n;
    return (long)n;
}

static void test_stream(void) {
    static const char fastq[] = "@r1 x\nACGT\n+\nIIII\n@r2\nGGATCCA\n+r2\n@IIIIII\n";
    char out[1024];
    for (size_t step = 1; step <= 7; step += 3) {
        stream s = {fastq, strlen(fastq), 0, step};
        sm_reader *r = NULL;
        sm_error err;
        CHECK(sm_reader_open_fn("mem.fq", SM_INPUT_AUTO, read_stream, &s, &r, &err) == SM_OK, "open_fn");
        CHECK(read_all(r, out, sizeof out, &err) == 0, "read stream: %s", err.message);
        CHECK(strcmp(out, "r1=ACGT;r2=GGATCCA;") == 0, "stream read as %s", out);
        CHECK(sm_reader_format(r) == SM_INPUT_FASTQ, "stream format");
        sm_reader_close(r);
    }
    static const char bad[] = "@r1\nACGT\n+\nIII\n";
    stream s = {bad, strlen(bad), 0, 4096};
    sm_reader *r = NULL;
    sm_error err;
    CHECK(sm_reader_open_fn("bad.fq", SM_INPUT_FASTQ, read_stream, &s, &r, &err) == SM_OK, "open bad");
    int rc = read_all(r, out, sizeof out, &err);
    CHECK(rc < 0 && err.code != SM_OK && strstr(err.message, "bad.fq") && strstr(err.message, "r1"),
          "a short quality line: %d %s", rc, err.message);
    sm_reader_close(r);
}

/* Two ranges of a FASTQ file read every record once. */
static void test_ranges(void) {
    char path[256], all[4096] = "", out[4096];
    path_of(path, sizeof path, "r.fq");
    char text[4096];
    size_t at = 0;
    for (int i = 0; i < 20; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "@q%d\nACGTACGTAC\n+\n@IIIIIIIII\n", i);
    write_file(path, text, 0);
    for (int i = 0; i < 20; i++) snprintf(all + strlen(all), sizeof all - strlen(all), "q%d=ACGTACGTAC;", i);
    for (uint64_t cut = 1; cut < at; cut += 37) {
        char joined[4096] = "";
        for (int half = 0; half < 2; half++) {
            sm_reader *r = NULL;
            sm_error err;
            int rc = sm_reader_open_range(path, SM_INPUT_FASTQ, 1, half ? cut : 0, half ? at : cut, &r, &err);
            CHECK(rc == SM_OK, "open range: %s", err.message);
            if (rc != SM_OK) continue;
            CHECK(read_all(r, out, sizeof out, &err) == 0, "read range: %s", err.message);
            strcat(joined, out);
            sm_range_info info;
            sm_reader_range_info(r, &info);
            sm_reader_close(r);
        }
        CHECK(strcmp(joined, all) == 0, "cut at %llu: %s", (unsigned long long)cut, joined);
    }
}

typedef struct {
    char hits[8192];
    size_t at;
    int records, pieces, fed, stop_after;
    uint64_t bytes;
} seen;

static int on_hit(const sm_hit *hit, void *ctx) {
    seen *s = ctx;
    s->at += (size_t)snprintf(s->hits + s->at, sizeof s->hits - s->at, "%llu %llu %u %c;",
                              (unsigned long long)hit->start, (unsigned long long)hit->end, hit->pattern, hit->strand);
    return 0;
}

static void on_record_done(uint64_t record, void *ctx) {
    seen *s = ctx;
    s->at += (size_t)snprintf(s->hits + s->at, sizeof s->hits - s->at, "done %llu;", (unsigned long long)record);
}

/* A runner whose hits and record ends are written into got. */
static sm_runner *runner_for(const sm_db *db, unsigned threads, size_t chunk, seen *got) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    ro.on_hit = on_hit;
    ro.on_record_done = on_record_done;
    ro.ctx = got;
    sm_runner *runner = NULL;
    sm_error err;
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
    return runner;
}

static int on_record(void *ctx, uint64_t record, const char *name) {
    seen *s = ctx;
    CHECK(record == (uint64_t)s->records, "record %llu named %s", (unsigned long long)record, name);
    s->records++;
    return 0;
}

static int on_sequence(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    (void)record;
    (void)data;
    seen *s = ctx;
    s->pieces++;
    s->bytes += len;
    return 0;
}

static void on_record_fed(void *ctx, uint64_t record, uint64_t length) {
    (void)record;
    (void)length;
    seen *s = ctx;
    s->fed++;
}

static int on_progress(void *ctx, size_t bytes, int record_ended) {
    (void)bytes;
    seen *s = ctx;
    return record_ended && s->stop_after && s->fed >= s->stop_after;
}

static void test_scan_reader(void) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_pattern p[] = {{"EcoRI", "GAATTC", 6}, {"BamHI", "GGATCC", 6}, {"N", "ACGTN", 5}};
    sm_db *db = NULL;
    sm_error err;
    CHECK(sm_compile(p, 3, &o, &db, &err) == SM_OK, "compile: %s", err.message);
    if (!db) return;
    char path[256];
    path_of(path, sizeof path, "scan.fa.gz");
    char text[8192];
    size_t at = 0;
    unsigned seed = 7;
    for (int rec = 0; rec < 12; rec++) {
        at += (size_t)snprintf(text + at, sizeof text - at, ">s%d\n", rec);
        for (int i = 0; i < 40 * rec; i++) {
            seed = seed * 1103515245u + 12345u;
            text[at++] = "ACGTGAATTCGGATCCN"[(seed >> 16) % 17];
            if (i % 60 == 59) text[at++] = '\n';
        }
        text[at++] = '\n';
    }
    text[at] = '\0';
    write_file(path, text, 1);

    /* the oracle: each record read whole, then sm_scan */
    seen want = {0};
    sm_scratch *scratch = NULL;
    CHECK(sm_scratch_alloc(db, &scratch) == SM_OK, "scratch");
    sm_reader *r = NULL;
    CHECK(sm_reader_open(path, SM_INPUT_AUTO, &r, &err) == SM_OK, "open: %s", err.message);
    const char *name;
    uint64_t record = 0;
    while (sm_reader_next_record(r, &name, &err) == 1) {
        char seq[4096];
        size_t len = 0, piece;
        const uint8_t *data;
        while (sm_reader_read(r, &data, &piece, &err) == 1) {
            memcpy(seq + len, data, piece);
            len += piece;
        }
        sm_scan(db, scratch, seq, len, on_hit, &want);
        on_record_done(record++, &want);
    }
    sm_reader_close(r);
    sm_scratch_free(scratch);

    for (unsigned threads = 1; threads <= 2; threads++) {
        seen got = {0};
        sm_runner *runner = runner_for(db, threads, 64, &got);
        CHECK(sm_reader_open(path, SM_INPUT_AUTO, &r, &err) == SM_OK, "open: %s", err.message);
        sm_scan_reader_options so = {.ctx = &got, .on_record = on_record, .on_sequence = on_sequence,
                                     .on_record_fed = on_record_fed, .on_progress = on_progress, .piece = 7};
        int rc = sm_runner_scan_reader(runner, r, &so, &err);
        CHECK(rc == SM_OK, "scan_reader: %d %s", rc, err.message);
        CHECK(sm_runner_flush(runner) == SM_OK, "flush");
        CHECK(strcmp(got.hits, want.hits) == 0, "threads %u: hits\n%s\nwant\n%s", threads, got.hits, want.hits);
        CHECK(got.records == 12 && got.fed == 12, "records %d fed %d", got.records, got.fed);
        CHECK(got.pieces > 12 && got.bytes == 40 * 66, "pieces %d bytes %llu", got.pieces,
              (unsigned long long)got.bytes);
        sm_reader_close(r);
        sm_runner_free(runner);
    }

    /* record by record: sm_runner_feed_reader between the caller's begin and end */
    {
        seen got = {0};
        sm_runner *runner = runner_for(db, 2, 100, &got);
        CHECK(sm_reader_open(path, SM_INPUT_AUTO, &r, &err) == SM_OK, "open: %s", err.message);
        sm_scan_reader_options so = {.ctx = &got, .on_sequence = on_sequence, .piece = 5};
        uint64_t total = 0;
        while (sm_reader_next_record(r, &name, &err) == 1) {
            uint64_t id = sm_runner_begin_record(runner), length = 0;
            CHECK(sm_runner_feed_reader(runner, r, &so, id, &length, &err) == SM_OK, "feed_reader: %s", err.message);
            total += length;
            CHECK(sm_runner_end_record(runner) == SM_OK, "end_record");
        }
        CHECK(sm_runner_flush(runner) == SM_OK, "flush");
        CHECK(strcmp(got.hits, want.hits) == 0, "feed_reader: hits\n%s\nwant\n%s", got.hits, want.hits);
        CHECK(total == 40 * 66 && got.bytes == total, "fed %llu", (unsigned long long)total);
        sm_reader_close(r);
        sm_runner_free(runner);
    }

    /* a callback stops the scan; then a reader's failure */
    seen got = {0};
    got.stop_after = 3;
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.on_hit = on_hit;
    ro.ctx = &got;
    sm_runner *runner = NULL;
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner");
    CHECK(sm_reader_open(path, SM_INPUT_AUTO, &r, &err) == SM_OK, "open");
    sm_scan_reader_options so = {.ctx = &got, .on_record = on_record, .on_record_fed = on_record_fed,
                                 .on_progress = on_progress};
    CHECK(sm_runner_scan_reader(runner, r, &so, &err) == SM_ERR_TERMINATED && got.records == 3,
          "stopped after %d records", got.records);
    sm_reader_close(r);
    sm_runner_free(runner);
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner");
    static const char bad[] = ">ok\nACGT\n>bad\nAC\x01GT\n";
    stream s = {bad, strlen(bad), 0, 4096};
    CHECK(sm_reader_open_fn("bad.fa", SM_INPUT_AUTO, read_stream, &s, &r, &err) == SM_OK, "open bad");
    int rc = sm_runner_scan_reader(runner, r, NULL, &err);
    CHECK(rc != SM_OK && rc != SM_ERR_TERMINATED && err.code == rc && strstr(err.message, "bad.fa"),
          "bad input: %d %s", rc, err.message);
    sm_reader_close(r);
    sm_runner_free(runner);
    sm_db_free(db);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    test_files();
    test_stream();
    test_ranges();
    test_scan_reader();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) failures++;
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_reader_api: ok\n");
    return failures ? 1 : 0;
}
