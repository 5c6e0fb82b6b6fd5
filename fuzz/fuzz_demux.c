/* Fuzz target: demux's output files (src/cli/demux.c, run in process as
 * `seqmatch demux` runs). An input makes a few barcodes, FASTA or FASTQ
 * records of their bases and some others, and options (-m/-k, --anchor,
 * --strand, --gzip, --min-overlap, a small --buffer-size so that files are appended to
 * several times), sometimes a bad last record; the folder already holds a
 * file of an output's name and one of another name.
 *
 * A run that fails must leave the folder as it was: both earlier files
 * unchanged, nothing else there (no temporary folder). A run that succeeds
 * must have put every record in exactly one output, byte for byte (the
 * earlier file of an output's name replaced, the other kept), every
 * barcode's file made, the summary's counts those of the files, and no
 * temporary folder left. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/cli.h"
#include "fuzz_support.h"

#define MAX_RECORDS 40

typedef struct {
    char *data;
    size_t len, cap;
} text;

static void put(text *t, const void *p, size_t n) {
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->data = realloc(t->data, t->cap);
        if (!t->data) abort();
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
    t->data[t->len] = 0;
}

static int write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A file's bytes (gunzipped when gz), appended to out. */
static int read_file(const char *path, text *out) {
    gzFile g = gzopen(path, "rb");
    if (!g) return -1;
    char buf[4096];
    int n;
    while ((n = gzread(g, buf, sizeof buf)) > 0) put(out, buf, (size_t)n);
    gzclose(g);
    return n < 0 ? -1 : 0;
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(path);
        else unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The records of a FASTA or FASTQ text written by this harness (each ends
   with \n, FASTQ four lines), as strings, sorted. */
static size_t split_records(const text *t, int fastq, char **out, size_t max) {
    size_t n = 0, at = 0;
    while (at < t->len && n < max) {
        size_t end = at, lines = 0;
        for (;;) {
            while (end < t->len && t->data[end] != '\n') end++;
            if (end < t->len) end++;
            lines++;
            if (end >= t->len) break;
            if (fastq ? lines == 4 : t->data[end] == '>') break;
        }
        out[n] = strndup(t->data + at, end - at);
        if (!out[n]) abort();
        n++;
        at = end;
    }
    qsort(out, n, sizeof *out, cmp_str);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    uint8_t opt = data[0], opt2 = data[1];
    unsigned nbc = 1 + (data[2] & 3);
    data += 3;
    size -= 3;
    int fastq = opt & 1, gzip = (opt >> 1) & 1, bad_last = (opt >> 2) & 1;
    static const char *const anchors[] = {"start", "end", "any"};
    const char *anchor = anchors[((opt >> 3) & 3) % 3];
    int errors = (opt >> 5) & 3; /* 0 exact, 1 -m 1, 2 -k 1, 3 exact */
    /* barcodes: 4 to 7 bases each */
    text bc = {0};
    char barcode[4][8];
    for (unsigned b = 0; b < nbc; b++) {
        unsigned len = 4 + (b < size ? data[b] & 3 : 0);
        for (unsigned i = 0; i < len; i++)
            barcode[b][i] = "ACGT"[(b + i < size ? data[b + i] >> 2 : i + b) & 3];
        barcode[b][len] = 0;
        char line[64];
        int n = snprintf(line, sizeof line, ">b%u\n%s\n", b, barcode[b]);
        put(&bc, line, (size_t)n);
    }
    size_t skip = nbc < size ? nbc : size;
    data += skip;
    size -= skip;
    /* records: a barcode (or none) at a place, then bases; one per 6 input bytes */
    text in = {0};
    size_t nrec = 0;
    for (size_t at = 0; at + 6 <= size && nrec < MAX_RECORDS; at += 6, nrec++) {
        const uint8_t *r = data + at;
        char seq[64];
        size_t len = 0;
        unsigned b = r[0] % (nbc + 1), where = r[1] % 3;
        for (unsigned i = 0; i < (r[2] & 7); i++) seq[len++] = "ACGTACGN"[(r[3] >> i) & 7];
        if (b < nbc && where != 2) {
            memcpy(seq + len, barcode[b], strlen(barcode[b]));
            if (r[4] & 1) seq[len + (r[4] >> 1) % strlen(barcode[b])] = 'T'; /* maybe one change */
            len += strlen(barcode[b]);
        }
        for (unsigned i = 0; i < (r[5] & 15); i++) seq[len++] = "ACGT"[(r[5] + i * r[4]) & 3];
        if (len == 0) seq[len++] = 'A';
        seq[len] = 0;
        char rec[200];
        int n = fastq ? snprintf(rec, sizeof rec, "@r%zu\n%s\n+\n%.*s\n", nrec, seq, (int)len,
                                 "IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII")
                      : snprintf(rec, sizeof rec, ">r%zu\n%s\n", nrec, seq);
        put(&in, rec, (size_t)n);
    }
    if (nrec == 0) { /* one record at least: the files' extension is then the input's */
        put(&in, fastq ? "@r0\nACGT\n+\nIIII\n" : ">r0\nACGT\n", fastq ? 17 : 10);
        nrec = 1;
    }
    if (bad_last) put(&in, fastq ? "@bad\nAC>GT\n+\nIIIII\n" : ">bad\nAC>GT\n", fastq ? 19 : 11);

    char dir[] = "/tmp/seqmatch-fuzz-demux-XXXXXX";
    if (!mkdtemp(dir)) {
        free(bc.data);
        free(in.data);
        return 0;
    }
    char bc_path[128], in_path[128], out_dir[128], summary[128], earlier[160], other[160];
    snprintf(bc_path, sizeof bc_path, "%s/bc.fa", dir);
    snprintf(in_path, sizeof in_path, "%s/in.%s", dir, fastq ? "fq" : "fa");
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    snprintf(summary, sizeof summary, "%s/summary", dir);
    snprintf(earlier, sizeof earlier, "%s/b0.%s%s", out_dir, fastq ? "fastq" : "fasta", gzip ? ".gz" : "");
    snprintf(other, sizeof other, "%s/notes.txt", out_dir);
    mkdir(out_dir, 0777);
    if (write_file(bc_path, bc.data, bc.len) != 0 || write_file(in_path, in.data ? in.data : "", in.len) != 0 ||
        write_file(earlier, "earlier\n", 8) != 0 || write_file(other, "other\n", 6) != 0) {
        remove_tree(dir);
        free(bc.data);
        free(in.data);
        return 0;
    }
    char buffer[16];
    snprintf(buffer, sizeof buffer, "%uK", 64u << (opt2 & 3));
    char *argv[24];
    int argc = 0;
    argv[argc++] = "demux";
    argv[argc++] = "-p";
    argv[argc++] = bc_path;
    argv[argc++] = "-o";
    argv[argc++] = out_dir;
    argv[argc++] = "--summary";
    argv[argc++] = summary;
    argv[argc++] = "--anchor";
    argv[argc++] = (char *)anchor;
    argv[argc++] = "--buffer-size";
    argv[argc++] = buffer;
    argv[argc++] = "-t";
    argv[argc++] = (opt2 & 4) ? "2" : "1";
    if (errors == 1) argv[argc++] = "-m", argv[argc++] = "1";
    if (errors == 2) argv[argc++] = "-k", argv[argc++] = "1";
    if (opt2 & 8) argv[argc++] = "--strand", argv[argc++] = "both";
    /* partial barcodes at record ends (refused, leaving the folder as it was, with --anchor start|end) */
    if (opt2 & 16) argv[argc++] = "--min-overlap", argv[argc++] = "2";
    if (gzip) argv[argc++] = "--gzip";
    argv[argc++] = in_path;
    argv[argc] = NULL;
    int status = cli_demux_main(argc, argv);

    /* what the folder holds now */
    DIR *d = opendir(out_dir);
    FUZZ_CHECK(d != NULL, "the output folder is gone");
    struct dirent *e;
    text all = {0};
    size_t files = 0;
    int earlier_kept = 0;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        FUZZ_CHECK(strncmp(e->d_name, ".seqmatch-tmp", 13) != 0, "a temporary folder left: %s", e->d_name);
        if (strcmp(e->d_name, "notes.txt") == 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", out_dir, e->d_name);
        text content = {0};
        FUZZ_CHECK(read_file(path, &content) == 0, "%s cannot be read", e->d_name);
        if (content.len == 8 && memcmp(content.data, "earlier\n", 8) == 0) earlier_kept = 1;
        else put(&all, content.data ? content.data : "", content.len);
        free(content.data);
        files++;
    }
    closedir(d);
    text notes = {0};
    FUZZ_CHECK(read_file(other, &notes) == 0 && notes.len == 6 && memcmp(notes.data, "other\n", 6) == 0,
               "a file of another name was changed");
    free(notes.data);
    if (status == CLI_EXIT_ERROR) {
        FUZZ_CHECK(files == 1 && earlier_kept, "a failed demux changed the folder (%zu files)", files);
    } else {
        FUZZ_CHECK(!bad_last, "a bad record was accepted");
        FUZZ_CHECK(!earlier_kept, "an earlier file of an output's name was not replaced");
        FUZZ_CHECK(files == nbc + 1, "%zu files for %u barcodes and unassigned", files, nbc);
        char *want[MAX_RECORDS], *got[MAX_RECORDS + 1];
        size_t nw = split_records(&in, fastq, want, MAX_RECORDS);
        size_t ng = split_records(&all, fastq, got, MAX_RECORDS + 1);
        FUZZ_CHECK(nw == ng, "%zu records in, %zu out", nw, ng);
        for (size_t i = 0; i < nw && i < ng; i++) FUZZ_CHECK(strcmp(want[i], got[i]) == 0, "record '%s' changed", want[i]);
        for (size_t i = 0; i < nw; i++) free(want[i]);
        for (size_t i = 0; i < ng; i++) free(got[i]);
        text sum = {0};
        FUZZ_CHECK(read_file(summary, &sum) == 0 && sum.data, "no summary");
        char line[64];
        snprintf(line, sizeof line, "\ntotal\t%zu\t", nrec);
        FUZZ_CHECK(strstr(sum.data, line) != NULL, "the summary's total is not %zu", nrec);
        free(sum.data);
    }
    free(all.data);
    remove_tree(dir);
    free(bc.data);
    free(in.data);
    return 0;
}
