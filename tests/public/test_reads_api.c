/* The record queue (sm_reads_*, include/seqmatch_reader.h) through the
 * installed headers only: every record handed back once, in input order,
 * with its bytes exactly as written and its hit count equal to sm_scan of
 * its sequence (the oracle), for single files and pairs of mates read in
 * step (both mates scanned, or one), FASTA and FASTQ, plain (bytes read in
 * place) and gzip (bytes copied), on 1 to 4 threads and several chunk
 * sizes; a stop asked by the caller; mates out of step, pair files of
 * different lengths, inputs of two formats and a missing file refused with
 * their messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <seqmatch_output.h>
#include <seqmatch_reader.h>

#include "check.h"

#define RECORDS 300
#define MATES_RECORDS RECORDS
#include "mates.h"

static char dir[] = "/tmp/sm_reads_api_XXXXXX";
static const sm_db *db;


static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

/* Random records with the patterns' sites (N among them); FASTA wrapped at 60. */
static const mates_shape shape = {11, 0, 400, "ACGTGAATTCGGATCCACGTN", "comment"};
#define make_records(fasta) mates_make(db, &shape, fasta)

static void write_mate(const char *path, int m, int gzip) {
    if (gzip) {
        gzFile g = gzopen(path, "wb");
        for (int r = 0; r < RECORDS; r++) gzwrite(g, text[m][r], (unsigned)strlen(text[m][r]));
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        for (int r = 0; r < RECORDS; r++) fputs(text[m][r], f);
        fclose(f);
    }
}

typedef struct {
    int next, summaries, stop_at, mates, scan_mate;
    const char *what;
} seen;

static void on_summary(void *ctx, sm_read_record *record, const sm_record_summary *summary) {
    seen *s = ctx;
    s->summaries++;
    record->user[0] += summary->hits;
}

static int on_record(void *ctx, sm_read_record *rec) {
    seen *s = ctx;
    int r = s->next++;
    if (r >= RECORDS) {
        CHECK(0, "%s: record %d too many", s->what, r);
        return 1;
    }
    CHECK(rec->mates == (unsigned)s->mates, "%s: record %d has %u mates", s->what, r, rec->mates);
    uint64_t hits = 0;
    for (int m = 0; m < s->mates; m++) {
        size_t n = strlen(text[m][r]);
        CHECK(rec->raw_len[m] == n && memcmp(rec->raw[m], text[m][r], n) == 0, "%s: record %d mate %d: bytes",
              s->what, r, m + 1);
        if (s->scan_mate == 0 || s->scan_mate == m + 1) hits += want_hits[m][r];
    }
    CHECK(rec->hits == hits && rec->user[0] == hits, "%s: record %d: %llu hits (summaries %llu), want %llu", s->what,
          r, (unsigned long long)rec->hits, (unsigned long long)rec->user[0], (unsigned long long)hits);
    return s->stop_at && s->next == s->stop_at;
}

static sm_reads *reads_for(unsigned threads, size_t chunk, seen *s) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    sm_reads_options o = {.format = SM_INPUT_AUTO, .reader_threads = threads, .scan_mate = (unsigned)s->scan_mate,
                          .ctx = s, .on_summary = on_summary, .on_record = on_record};
    sm_reads *reads = NULL;
    sm_error err;
    CHECK(sm_reads_new(db, &ro, &o, &reads, &err) == SM_OK, "sm_reads_new: %s", err.message);
    return reads;
}

static void run_files(int fasta) {
    make_records(fasta);
    const char *ext = fasta ? "fa" : "fq";
    char plain[2][256], gz[2][256], name[64];
    for (int m = 0; m < 2; m++) {
        snprintf(name, sizeof name, "m%d.%s", m + 1, ext);
        path_of(plain[m], sizeof plain[m], name);
        write_mate(plain[m], m, 0);
        snprintf(name, sizeof name, "m%d.%s.gz", m + 1, ext);
        path_of(gz[m], sizeof gz[m], name);
        write_mate(gz[m], m, 1);
    }
    static const size_t chunks[] = {64, 1000, 0};
    for (unsigned threads = 1; threads <= 4; threads++)
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
            for (int gzip = 0; gzip <= 1; gzip++)
                for (int mates = 1; mates <= 2; mates++)
                    for (int scan_mate = 0; scan_mate <= (mates == 2 ? 2 : 0); scan_mate++) {
                        char what[128];
                        snprintf(what, sizeof what, "%s %s threads %u chunk %zu mates %d scan %d", ext,
                                 gzip ? "gzip" : "plain", threads, chunks[c], mates, scan_mate);
                        seen s = {.mates = mates, .scan_mate = scan_mate, .what = what};
                        sm_reads *reads = reads_for(threads, chunks[c], &s);
                        if (!reads) continue;
                        char(*paths)[256] = gzip ? gz : plain;
                        sm_error err;
                        int rc = sm_reads_run(reads, paths[0], mates == 2 ? paths[1] : NULL, &err);
                        CHECK(rc == SM_OK, "%s: %d %s", what, rc, err.message);
                        CHECK(s.next == RECORDS, "%s: %d records", what, s.next);
                        int scanned = mates == 2 && scan_mate == 0 ? 2 : 1;
                        CHECK(s.summaries == RECORDS * scanned, "%s: %d summaries", what, s.summaries);
                        CHECK(sm_reads_format(reads) == (fasta ? SM_INPUT_FASTA : SM_INPUT_FASTQ), "%s: format", what);
                        sm_reads_free(reads);
                    }

    /* the caller stops: nothing after, no message */
    seen s = {.mates = 1, .stop_at = 5, .what = "stop"};
    sm_reads *reads = reads_for(2, 64, &s);
    sm_error err;
    CHECK(sm_reads_run(reads, gz[0], NULL, &err) == SM_ERR_TERMINATED && !err.message[0] && s.next == 5,
          "stop: %d records, '%s'", s.next, err.message);
    sm_reads_free(reads);
}

static int has(const char *message, const char *part) { return strstr(message, part) != NULL; }

static void refusals(void) {
    make_records(0);
    char m1[256], other[256], shorter[256], fasta[256], missing[256];
    path_of(m1, sizeof m1, "e1.fq");
    write_mate(m1, 0, 0);
    path_of(shorter, sizeof shorter, "e3.fq");
    FILE *f = fopen(shorter, "wb");
    for (int r = 0; r < 10; r++) fputs(text[1][r], f);
    fclose(f);
    path_of(other, sizeof other, "e2.fq");
    free(text[1][2]);
    text[1][2] = dup_n("@renamed/2\nACGT\n+\nIIII\n", 23);
    write_mate(other, 1, 0);
    path_of(fasta, sizeof fasta, "e.fa");
    f = fopen(fasta, "wb");
    fputs(">a\nACGT\n", f);
    fclose(f);
    path_of(missing, sizeof missing, "missing.fq");

    seen s = {.mates = 2, .what = "refusals"};
    sm_reads *reads = reads_for(2, 0, &s);
    sm_error err;
    int rc = sm_reads_run(reads, m1, other, &err);
    CHECK(rc != SM_OK && rc != SM_ERR_TERMINATED && has(err.message, "reads out of step: record 3 is '2/1'") &&
              has(err.message, "'renamed/2'"), "out of step: %d %s", rc, err.message);
    sm_reads_free(reads);
    s.next = 0;
    reads = reads_for(1, 0, &s);
    rc = sm_reads_run(reads, m1, shorter, &err);
    CHECK(rc != SM_OK && has(err.message, "has more records than") && has(err.message, "(10)"), "lengths: %s",
          err.message);
    sm_reads_free(reads);
    s.next = 0;
    s.mates = 1;
    reads = reads_for(1, 0, &s);
    CHECK(sm_reads_run(reads, m1, NULL, &err) == SM_OK, "first: %s", err.message);
    rc = sm_reads_run(reads, fasta, NULL, &err);
    CHECK(rc != SM_OK && has(err.message, "FASTA, but the input before it is FASTQ"), "formats: %s", err.message);
    rc = sm_reads_run(reads, missing, NULL, &err);
    CHECK(rc == SM_ERR_IO && has(err.message, "missing.fq"), "missing: %d %s", rc, err.message);
    sm_reads_free(reads);
}

/* sm_record_out: the bytes as put, a line end only between records, in
   blocks and gzip members of any size. */
typedef struct {
    uint8_t data[4096];
    size_t len;
    int writes;
} sink;

static int to_sink(void *ctx, const void *data, size_t len) {
    sink *k = ctx;
    memcpy(k->data + k->len, data, len);
    k->len += len;
    k->writes++;
    return 0;
}

static void record_outputs(void) {
    static const char *records[] = {">a\nACGT\n", ">b\nAC", ">c\r\nGG\r\n", ">d\nTT"};
    static const char want[] = ">a\nACGT\n>b\nAC\n>c\r\nGG\r\n>d\nTT";
    static const size_t blocks[] = {0, 1, 3, 7, 64};
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
        for (int gzip = 0; gzip <= (blocks[b] ? 1 : 0); gzip++) {
            sink k = {{0}, 0, 0};
            sm_record_packer *packer = gzip ? sm_record_packer_new(blocks[b]) : NULL;
            sm_record_out *o = sm_record_out_new(packer, blocks[b], to_sink, &k);
            for (int r = 0; r < 4; r++) CHECK(sm_record_out_put(o, records[r], strlen(records[r])) == SM_OK, "put");
            CHECK(sm_record_out_end(o) == SM_OK && sm_record_out_records(o) == 4, "end");
            uint8_t plain[4096];
            size_t n = k.len;
            if (gzip) {
                z_stream z;
                memset(&z, 0, sizeof z);
                inflateInit2(&z, 31);
                z.next_in = k.data, z.avail_in = (unsigned)k.len, z.next_out = plain, z.avail_out = sizeof plain;
                int members = 0;
                while (z.avail_in > 0 && inflate(&z, Z_NO_FLUSH) == Z_STREAM_END) members++, inflateReset(&z);
                n = sizeof plain - z.avail_out;
                inflateEnd(&z);
                CHECK(members == k.writes, "block %zu: %d members, %d writes", blocks[b], members, k.writes);
            } else {
                memcpy(plain, k.data, n);
            }
            CHECK(n == strlen(want) && memcmp(plain, want, n) == 0, "block %zu gzip %d: %.*s", blocks[b], gzip,
                  (int)n, (const char *)plain);
            sm_record_out_free(o);
            sm_record_packer_free(packer);
        }
    /* no record: nothing, or one empty gzip member */
    sink k = {{0}, 0, 0};
    sm_record_packer *packer = sm_record_packer_new(16);
    sm_record_out *o = sm_record_out_new(packer, 16, to_sink, &k);
    CHECK(sm_record_out_end(o) == SM_OK && k.writes == 1 && k.len >= 18 && k.data[0] == 0x1f, "empty gzip");
    sm_record_out_free(o);
    sm_record_packer_free(packer);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_pattern p[] = {{"EcoRI", "GAATTC", 6}, {"BamHI", "GGATCC", 6}, {"N", "ACGTN", 5}};
    sm_db *compiled = NULL;
    sm_error err;
    if (sm_compile(p, 3, &o, &compiled, &err) != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        return 1;
    }
    db = compiled;
    run_files(0);
    run_files(1);
    refusals();
    record_outputs();
    sm_db_free(compiled);
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < RECORDS; r++) {
            free(text[m][r]);
            free(seq[m][r]);
        }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) failures++;
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
