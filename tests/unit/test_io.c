/* Tests for the target reader and pattern files: formats, line endings,
 * piece reassembly, gzip, error messages with their line numbers. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/seqio.h"
#include "io/source.h"

static int passed, failed;

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (cond)                                                                 \
            passed++;                                                             \
        else {                                                                    \
            failed++;                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                         \
    } while (0)

#define CHECK_STR(got, want)                                                            \
    do {                                                                                \
        const char *g_ = (got), *w_ = (want);                                           \
        if (strcmp(g_, w_) == 0)                                                        \
            passed++;                                                                   \
        else {                                                                          \
            failed++;                                                                   \
            fprintf(stderr, "%s:%d: got \"%s\"\n    want \"%s\"\n", __FILE__, __LINE__, g_, \
                    w_);                                                                \
        }                                                                               \
    } while (0)

/* ------------------------------------------------------------- helpers */

typedef struct {
    char text[4096];  /* "name=seq|" per record (sequence cut at 64 bytes) */
    int rc;           /* open status (> 0), read/next error (-1) or 0 */
    sm_error err;
    size_t records;
    size_t max_piece;
    size_t pieces;
} collected;

/* Reads every record of path; big sequences go to *big (when not NULL,
   the first record's whole sequence, malloc'd). */
static void collect(const char *path, sm_input_format format, collected *c, char **big,
                    size_t *big_len) {
    memset(c, 0, sizeof *c);
    sm_reader *r;
    int rc = sm_reader_open(path, format, &r, &c->err);
    if (rc != SM_OK) {
        c->rc = rc;
        return;
    }
    size_t used = 0, cap = 0;
    char *whole = NULL;
    const char *name;
    while ((rc = sm_reader_next_record(r, &name, &c->err)) > 0) {
        size_t at = strlen(c->text);
        snprintf(c->text + at, sizeof c->text - at, "%s=", name);
        size_t seq_shown = 0;
        const uint8_t *d;
        size_t l;
        while ((rc = sm_reader_read(r, &d, &l, &c->err)) > 0) {
            CHECK(l > 0);
            c->pieces++;
            if (l > c->max_piece) c->max_piece = l;
            if (big && c->records == 0) {
                if (used + l > cap) {
                    cap = (used + l) * 2;
                    whole = realloc(whole, cap);
                }
                memcpy(whole + used, d, l);
                used += l;
            }
            size_t take = seq_shown < 64 ? 64 - seq_shown : 0;
            if (take > l) take = l;
            at = strlen(c->text);
            if (at + take + 2 < sizeof c->text) {
                memcpy(c->text + at, d, take);
                c->text[at + take] = '\0';
            }
            seq_shown += take;
        }
        if (rc < 0) break;
        at = strlen(c->text);
        snprintf(c->text + at, sizeof c->text - at, "|");
        c->records++;
    }
    c->rc = rc < 0 ? -1 : 0;
    if (big) {
        *big = whole;
        *big_len = used;
    } else {
        free(whole);
    }
    sm_reader_close(r);
}

static void expect_records(const char *path, sm_input_format format, const char *want) {
    collected c;
    collect(path, format, &c, NULL, NULL);
    if (c.rc != 0) fprintf(stderr, "unexpected error: %s\n", c.err.message);
    CHECK(c.rc == 0);
    CHECK_STR(c.text, want);
}

static void expect_error(const char *path, sm_input_format format, int code, const char *msg) {
    collected c;
    collect(path, format, &c, NULL, NULL);
    CHECK(c.rc != 0);
    CHECK(c.err.code == code);
    CHECK_STR(c.err.message, msg);
}

static char *temp_path(void) {
    static char paths[32][64];
    static int n;
    char *p = paths[n++ % 32];
    strcpy(p, "/tmp/sm_test_io_XXXXXX");
    int fd = mkstemp(p);
    if (fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    close(fd);
    return p;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

/* Appends one gzip member holding data (mode "wb" or "ab"). */
static void write_gzip_member(const char *path, const char *mode, const void *data, size_t len) {
    gzFile g = gzopen(path, mode);
    if (!g) {
        perror(path);
        exit(2);
    }
    if (len && gzwrite(g, data, (unsigned)len) != (int)len) exit(2);
    if (gzclose(g) != Z_OK) exit(2);
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static char *random_dna(size_t n) {
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) s[i] = "ACGT"[rng() & 3];
    s[n] = '\0';
    return s;
}

/* ---------------------------------------------------------------- FASTA */

static void test_fasta_small(void) {
    expect_records("data/io/multi.fa", SM_INPUT_AUTO,
                   "seq1=ACGTACGTACGTACGTacgtnnRYK|empty_rec=|seq3=ACGTAC--..**|");
    expect_records("data/io/multi.fa", SM_INPUT_FASTA,
                   "seq1=ACGTACGTACGTACGTacgtnnRYK|empty_rec=|seq3=ACGTAC--..**|");
    expect_records("data/io/crlf.fa", SM_INPUT_AUTO, "r1=ACGTTT|r2=GG|");
    expect_records("data/io/nonl.fa", SM_INPUT_AUTO, "a=ACG|b=TTT|");
    expect_records("data/io/blank.fa", SM_INPUT_AUTO, "");
    expect_records("data/io/empty.txt", SM_INPUT_AUTO, "");
    expect_records("data/io/empty.txt", SM_INPUT_FASTA, "");
    expect_records("data/io/empty.txt", SM_INPUT_FASTQ, "");
}

static void test_fasta_errors(void) {
    expect_error("data/io/gt_in_seq.fa", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/gt_in_seq.fa: line 3, column 3 (record 'a'): unexpected byte 0x3E ('>') "
                 "in sequence");
    expect_error("data/io/nul.fa", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/nul.fa: line 3, column 3 (record 'a'): unexpected byte 0x00 in sequence");
    expect_error("data/io/digit.fa", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/digit.fa: line 2, column 5 (record 'a'): unexpected byte 0x31 ('1') in "
                 "sequence");
    expect_error("data/io/garbage.bin", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/garbage.bin: not FASTA or FASTQ (first byte 0x89); use --alphabet text "
                 "for plain text");
    expect_error("data/io/before.fa", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/before.fa: not FASTA or FASTQ (first byte 0x41); use --alphabet text for "
                 "plain text");
    expect_error("data/io/before.fa", SM_INPUT_FASTA, SM_ERR_FORMAT,
                 "data/io/before.fa: line 1, column 1: expected a FASTA header ('>'), found byte "
                 "0x41 ('A')");
    expect_error("data/io/garbage.bin", SM_INPUT_FASTA, SM_ERR_FORMAT,
                 "data/io/garbage.bin: line 1, column 1: expected a FASTA header ('>'), found byte "
                 "0x89");
    expect_error("data/io/reads.fq", SM_INPUT_FASTA, SM_ERR_FORMAT,
                 "data/io/reads.fq: line 1, column 1: expected a FASTA header ('>'), found byte "
                 "0x40 ('@')");
    /* non-ASCII inside a line, after a valid piece of the record */
    const char *p = temp_path();
    const char bad[] = ">x y\nACGTACGTACGTACGTACGT\nACGT\xc3\xa9GG\n";
    write_file(p, bad, sizeof bad - 1);
    collected c;
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == -1 && c.err.code == SM_ERR_FORMAT);
    CHECK(strstr(c.err.message,
                 ": line 3, column 5 (record 'x'): unexpected byte 0xC3 in sequence") != NULL);

    const char indented[] = "\n  >x\nAC\n";
    write_file(p, indented, sizeof indented - 1);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == -1 && c.records == 0);
    CHECK(strstr(c.err.message, ": line 2, column 3: a header must start its line") != NULL);
    unlink(p);
}

static void test_files(void) {
    expect_error("data/io/no_such_file.fa", SM_INPUT_AUTO, SM_ERR_IO,
                 "data/io/no_such_file.fa: No such file or directory");
    expect_error("data/io", SM_INPUT_AUTO, SM_ERR_IO, "data/io: Is a directory");
    expect_error("data/io", SM_INPUT_TEXT, SM_ERR_IO, "data/io: Is a directory");

    /* progress: a plain file read to the end is consumed completely */
    sm_reader *r;
    sm_error e;
    CHECK(sm_reader_open("data/io/multi.fa", SM_INPUT_AUTO, &r, &e) == SM_OK);
    const char *name;
    while (sm_reader_next_record(r, &name, &e) > 0) {
    }
    uint64_t done, total;
    sm_reader_progress(r, &done, &total);
    CHECK(total == (uint64_t)file_size("data/io/multi.fa"));
    CHECK(done == total);
    sm_reader_close(r);
}

/* Skipping records without reading them, and sticky errors. */
static void test_skip_and_sticky(void) {
    sm_reader *r;
    sm_error e;
    const char *name;
    const uint8_t *d;
    size_t l;
    CHECK(sm_reader_open("data/io/multi.fa", SM_INPUT_AUTO, &r, &e) == SM_OK);
    CHECK(sm_reader_next_record(r, &name, &e) == 1);
    CHECK_STR(name, "seq1");
    CHECK(sm_reader_next_record(r, &name, &e) == 1);
    CHECK_STR(name, "empty_rec");
    CHECK(sm_reader_read(r, &d, &l, &e) == 0);
    CHECK(sm_reader_next_record(r, &name, &e) == 1);
    CHECK_STR(name, "seq3");
    CHECK(sm_reader_next_record(r, &name, &e) == 0);
    CHECK(sm_reader_next_record(r, &name, &e) == 0);
    sm_reader_close(r);

    /* skipping a FASTQ record still checks its quality */
    CHECK(sm_reader_open("data/io/badqual.fq", SM_INPUT_AUTO, &r, &e) == SM_OK);
    CHECK(sm_reader_next_record(r, &name, &e) == 1);
    CHECK(sm_reader_next_record(r, &name, &e) == 1);
    CHECK_STR(name, "r2");
    CHECK(sm_reader_next_record(r, &name, &e) < 0);
    CHECK(strstr(e.message, "line 8") != NULL);
    memset(&e, 0, sizeof e);
    CHECK(sm_reader_read(r, &d, &l, &e) < 0);
    CHECK(e.code == SM_ERR_FORMAT && strstr(e.message, "line 8") != NULL);
    CHECK(sm_reader_next_record(r, &name, &e) < 0);
    sm_reader_close(r);
}

/* Big records: pieces are bounded and reassemble to the sequence. */
static void test_big_records(void) {
    const size_t single = 5u << 20, multi = 3u << 20;
    char *s1 = random_dna(single), *s2 = random_dna(multi);
    const char *p = temp_path();
    FILE *f = fopen(p, "wb");
    fprintf(f, ">big single line\n");
    fwrite(s1, 1, single, f);
    fprintf(f, "\n>second\n");
    fclose(f);
    collected c;
    char *got;
    size_t got_len;
    collect(p, SM_INPUT_AUTO, &c, &got, &got_len);
    CHECK(c.rc == 0);
    CHECK(c.records == 2);
    CHECK(got_len == single && memcmp(got, s1, single) == 0);
    CHECK(c.max_piece <= (1u << 20));
    CHECK(c.pieces >= single / (1u << 20));
    free(got);

    /* multi-line with CRLF and odd line widths */
    f = fopen(p, "wb");
    fprintf(f, ">ml\r\n");
    for (size_t i = 0; i < multi;) {
        size_t w = 1 + (size_t)(rng() % 97);
        if (w > multi - i) w = multi - i;
        fwrite(s2 + i, 1, w, f);
        fputs(i % 3 ? "\n" : "\r\n", f);
        i += w;
    }
    fprintf(f, ">tail x\nAC\n");
    fclose(f);
    collect(p, SM_INPUT_AUTO, &c, &got, &got_len);
    CHECK(c.rc == 0);
    CHECK(c.records == 2);
    CHECK(got_len == multi && memcmp(got, s2, multi) == 0);
    CHECK(strstr(c.text, "|tail=AC|") != NULL);
    free(got);

    /* the same through gzip */
    FILE *in = fopen(p, "rb");
    size_t n = (size_t)file_size(p);
    char *raw = malloc(n);
    CHECK(fread(raw, 1, n, in) == n);
    fclose(in);
    const char *gz = temp_path();
    write_gzip_member(gz, "wb", raw, n);
    collect(gz, SM_INPUT_AUTO, &c, &got, &got_len);
    CHECK(c.rc == 0);
    CHECK(got_len == multi && memcmp(got, s2, multi) == 0);
    free(got);

    /* a truncated gzip stream is an error, wherever it is cut */
    long gz_size = file_size(gz);
    long cuts[] = {gz_size / 2, gz_size - 4, gz_size - 1};
    for (int k = 0; k < 3; k++) {
        CHECK(truncate(gz, cuts[k]) == 0);
        collect(gz, SM_INPUT_AUTO, &c, NULL, NULL);
        CHECK(c.rc == -1);
        CHECK(c.err.code == SM_ERR_FORMAT);
        CHECK(strstr(c.err.message, "truncated") != NULL);
        collect(gz, SM_INPUT_TEXT, &c, NULL, NULL);
        CHECK(c.rc == -1 && strstr(c.err.message, "truncated") != NULL);
    }

    /* corrupt compressed data */
    write_gzip_member(gz, "wb", raw, n);
    f = fopen(gz, "r+b");
    fseek(f, gz_size / 2, SEEK_SET);
    for (int k = 0; k < 64; k++) fputc(0x55 + k, f);
    fclose(f);
    collect(gz, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc != 0 && c.err.code == SM_ERR_FORMAT);

    /* a long header description streams; an over-long name is refused */
    size_t desc = 3u << 20;
    f = fopen(p, "wb");
    fputs(">a ", f);
    for (size_t i = 0; i < desc; i++) fputc('d', f);
    fputs("\nACGT\n>", f);
    for (size_t i = 0; i < (1u << 20) + 10; i++) fputc('n', f);
    fputs("\nAC\n", f);
    fclose(f);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == -1);
    CHECK(c.records == 1);
    CHECK(strncmp(c.text, "a=ACGT|", 7) == 0);
    CHECK(strstr(c.err.message, "line 3: record name longer than") != NULL);

    unlink(p);
    unlink(gz);
    free(raw);
    free(s1);
    free(s2);
}

static void test_gzip_members(void) {
    const char *gz = temp_path();
    const char a[] = ">a desc\nACG", b[] = "T\nTT\n>b\nGG\n";
    write_gzip_member(gz, "wb", a, sizeof a - 1);
    write_gzip_member(gz, "ab", b, sizeof b - 1);
    /* BGZF ends with an empty member */
    write_gzip_member(gz, "ab", "", 0);
    expect_records(gz, SM_INPUT_AUTO, "a=ACGTTT|b=GG|");
    char want[256];
    snprintf(want, sizeof want, "%s:1=>a desc|%s:2=ACGT|%s:3=TT|%s:4=>b|%s:5=GG|", gz, gz, gz,
             gz, gz);
    expect_records(gz, SM_INPUT_LINES, want);
    unlink(gz);
}

/* ---------------------------------------------------------------- FASTQ */

static void test_fastq(void) {
    expect_records("data/io/reads.fq", SM_INPUT_AUTO, "r1=ACGTN|r2=acgt|r3=|");
    expect_records("data/io/reads.fq", SM_INPUT_FASTQ, "r1=ACGTN|r2=acgt|r3=|");
    expect_records("data/io/crlf.fq", SM_INPUT_AUTO, "r1=ACGT|");
    expect_error("data/io/badqual.fq", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/badqual.fq: line 8 (record 'r2'): quality length 4 differs from "
                 "sequence length 5");
    /* sequence lines go on up to a '+' line (multi-line FASTQ): IIII is more sequence */
    expect_error("data/io/noplus.fq", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/noplus.fq: line 8 (record 'r2'): unexpected end of file (missing '+' line)");
    expect_error("data/io/truncated.fq", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/truncated.fq: line 7 (record 'r2'): unexpected end of file (missing '+' "
                 "line)");
    expect_error("data/io/noqual.fq", SM_INPUT_AUTO, SM_ERR_FORMAT,
                 "data/io/noqual.fq: line 4 (record 'r1'): unexpected end of file (missing "
                 "quality line)");
    expect_error("data/io/multi.fa", SM_INPUT_FASTQ, SM_ERR_FORMAT,
                 "data/io/multi.fa: line 3, column 1: expected a FASTQ header ('@'), found byte "
                 "0x3E ('>')");

    const char *p = temp_path();
    const char *cut[][2] = {
        {"@r1\nAC\n+\nII\n@r2",
         ": line 6 (record 'r2'): unexpected end of file (missing sequence line)"},
        {"@r1\nAC\n+\nII\n@r2\n",
         ": line 6 (record 'r2'): unexpected end of file (missing sequence line)"},
        {"@r1\nAC\n+\nII\n@r2\nAC",
         ": line 7 (record 'r2'): unexpected end of file (missing '+' line)"},
        {"@r1\nAC\n+\nII\n@r2\n\n",
         ": line 7 (record 'r2'): unexpected end of file (missing '+' line)"},
        {"@r1\nAC\n+", ": line 4 (record 'r1'): unexpected end of file (missing quality line)"},
        {"@r1\nAC\n+\nI",
         ": line 4 (record 'r1'): quality length 1 differs from sequence length 2"},
    };
    collected c;
    for (size_t k = 0; k < sizeof cut / sizeof cut[0]; k++) {
        write_file(p, cut[k][0], strlen(cut[k][0]));
        collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
        CHECK(c.rc == -1 && c.err.code == SM_ERR_FORMAT);
        if (!strstr(c.err.message, cut[k][1])) {
            fprintf(stderr, "case %zu: %s\n", k, c.err.message);
            CHECK(0);
        }
    }
    const char empty_last[] = "@r1\nAC\n+\nII\n@r2\n\n+";
    write_file(p, empty_last, sizeof empty_last - 1);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == 0 && c.records == 2);

    const char extra[] = "@r1\nACGT\n+\nIIII\nACGT\n";
    write_file(p, extra, sizeof extra - 1);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == -1 && c.records == 1);
    CHECK(strstr(c.err.message, ": line 5, column 1: expected a FASTQ header ('@')") != NULL);

    const char badq[] = "@r1\nACGT\n+\nII I\n";
    write_file(p, badq, sizeof badq - 1);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == -1);
    CHECK(strstr(c.err.message,
                 ": line 4, column 3 (record 'r1'): unexpected byte 0x20 in quality") != NULL);

    /* a long read streams in pieces */
    size_t n = 3u << 20;
    char *s = random_dna(n);
    FILE *f = fopen(p, "wb");
    fprintf(f, "@long\n%s\n+long\n", s);
    for (size_t i = 0; i < n; i++) fputc('I', f);
    fputs("\n@short\nAC\n+\n##", f);
    fclose(f);
    char *got;
    size_t got_len;
    collect(p, SM_INPUT_AUTO, &c, &got, &got_len);
    CHECK(c.rc == 0 && c.records == 2);
    CHECK(got_len == n && memcmp(got, s, n) == 0);
    CHECK(strstr(c.text, "|short=AC|") != NULL);
    free(got);
    free(s);
    unlink(p);
}

/* ------------------------------------------------------- text and lines */

static void test_text_and_lines(void) {
    expect_records("data/io/text.txt", SM_INPUT_TEXT,
                   "data/io/text.txt=Hello\r\n  world\n\nlast line no newline|");
    expect_records("data/io/text.txt", SM_INPUT_LINES,
                   "data/io/text.txt:1=Hello|data/io/text.txt:2=  world|data/io/text.txt:3=|"
                   "data/io/text.txt:4=last line no newline|");
    expect_records("data/io/empty.txt", SM_INPUT_LINES, "");
    expect_records("data/io/empty.txt", SM_INPUT_TEXT, "data/io/empty.txt=|");
    /* text mode keeps everything, NUL and '>' included */
    expect_records("data/io/nul.fa", SM_INPUT_LINES,
                   "data/io/nul.fa:1=>a|data/io/nul.fa:2=ACGT|data/io/nul.fa:3=AC|");

    const char *p = temp_path();
    /* a lone \r ends a line too */
    const char crlf[] = "a\r\n\r\nb\rc\r";
    write_file(p, crlf, sizeof crlf - 1);
    collected c;
    collect(p, SM_INPUT_LINES, &c, NULL, NULL);
    CHECK(c.rc == 0 && c.records == 4);
    char want[256];
    snprintf(want, sizeof want, "%s:1=a|%s:2=|%s:3=b|%s:4=c|", p, p, p, p);
    CHECK_STR(c.text, want);

    /* a \r that lands on the input buffer's end, then more lines */
    size_t n = (1u << 20) - 1;
    char *big = malloc(n + 8);
    memset(big, 'x', n);
    memcpy(big + n, "\r\nb\r\n", 5);
    write_file(p, big, n + 5);
    char *got;
    size_t got_len;
    collect(p, SM_INPUT_LINES, &c, &got, &got_len);
    CHECK(c.rc == 0 && c.records == 2);
    CHECK(got_len == n && memcmp(got, big, n) == 0);
    snprintf(want, sizeof want, "|%s:2=b|", p);
    CHECK(strstr(c.text, want) != NULL);
    free(got);

    /* text through gzip, several members */
    write_gzip_member(p, "wb", "Hello ", 6);
    write_gzip_member(p, "ab", "world\n", 6);
    collect(p, SM_INPUT_TEXT, &c, NULL, NULL);
    snprintf(want, sizeof want, "%s=Hello world\n|", p);
    CHECK(c.rc == 0);
    CHECK_STR(c.text, want);
    free(big);
    unlink(p);
}

/* ------------------------------------------------------------- patterns */

static void test_patterns(void) {
    sm_pattern_list list = {0};
    sm_error e;
    CHECK(sm_pattern_list_read(&list, "data/io/patterns.txt", &e) == SM_OK);
    CHECK(list.count == 4);
    if (list.count == 4) {
        CHECK_STR(list.items[0].name, "ACGT");
        CHECK(list.items[0].len == 4 && memcmp(list.items[0].seq, "ACGT", 4) == 0);
        CHECK_STR(list.items[1].name, "GGCC");
        CHECK_STR(list.items[2].name, "TTTT AA");
        CHECK(list.items[2].len == 7);
        CHECK_STR(list.items[3].name, "NNN");
    }
    CHECK(sm_pattern_list_read(&list, "data/io/patterns.fa", &e) == SM_OK);
    CHECK(list.count == 6);
    if (list.count == 6) {
        CHECK_STR(list.items[4].name, "p1");
        CHECK(list.items[4].len == 6 && memcmp(list.items[4].seq, "ACGTAC", 6) == 0);
        CHECK_STR(list.items[5].name, "p2");
        CHECK(list.items[5].len == 3 && memcmp(list.items[5].seq, "GGG", 3) == 0);
    }
    /* a failing file adds nothing */
    CHECK(sm_pattern_list_read(&list, "data/io/patterns_empty.fa", &e) == SM_ERR_PATTERN);
    CHECK_STR(e.message, "data/io/patterns_empty.fa: line 3: pattern 'p2' is empty");
    CHECK(list.count == 6);
    CHECK(sm_pattern_list_read(&list, "data/io/missing.txt", &e) == SM_ERR_IO);
    CHECK_STR(e.message, "data/io/missing.txt: No such file or directory");
    CHECK(sm_pattern_list_read(&list, "data/io", &e) == SM_ERR_IO);
    CHECK(sm_pattern_list_read(&list, "data/io/empty.txt", &e) == SM_OK);
    CHECK(list.count == 6);

    /* gzip pattern file, and a last record that is empty */
    const char *p = temp_path();
    const char fa[] = ">x\nAC\nGT\n";
    write_gzip_member(p, "wb", fa, sizeof fa - 1);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_OK);
    CHECK(list.count == 7 && strcmp(list.items[6].name, "x") == 0 && list.items[6].len == 4);
    const char fa_empty_last[] = ">x\nAC\n>y\n\n";
    write_file(p, fa_empty_last, sizeof fa_empty_last - 1);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_ERR_PATTERN);
    CHECK(strstr(e.message, ": line 3: pattern 'y' is empty") != NULL);
    CHECK(list.count == 7);

    CHECK(sm_pattern_list_add(&list, NULL, "ACG", 3) == SM_OK);
    CHECK(sm_pattern_list_add(&list, "named", "TT", 2) == SM_OK);
    CHECK(list.count == 9);
    CHECK_STR(list.items[7].name, "ACG");
    CHECK_STR(list.items[8].name, "named");
    sm_pattern_list_free(&list);
    CHECK(list.count == 0 && list.items == NULL);
    unlink(p);
}

/* ------------------------------------------- line ends, BOM, compression */

/* Writes content to a fresh file and expects its records, or its error
   message (the part after the file name). */
static void records_of(const char *content, size_t len, sm_input_format format, const char *want) {
    const char *p = temp_path();
    write_file(p, content, len);
    collected c;
    collect(p, format, &c, NULL, NULL);
    if (c.rc != 0) fprintf(stderr, "unexpected error: %s\n", c.err.message);
    CHECK(c.rc == 0);
    CHECK_STR(c.text, want);
    unlink(p);
}

static void error_of(const char *content, size_t len, sm_input_format format, const char *want) {
    const char *p = temp_path();
    write_file(p, content, len);
    collected c;
    collect(p, format, &c, NULL, NULL);
    CHECK(c.rc != 0 && c.err.code == SM_ERR_FORMAT);
    size_t n = strlen(p);
    CHECK(strncmp(c.err.message, p, n) == 0);
    CHECK_STR(c.err.message + (strncmp(c.err.message, p, n) == 0 ? n : 0), want);
    unlink(p);
}

#define RECORDS(lit, format, want) records_of(lit, sizeof lit - 1, format, want)
#define ERROR_OF(lit, format, want) error_of(lit, sizeof lit - 1, format, want)

static void test_line_ends(void) {
    /* classic Mac OS: \r alone ends lines; a \r then '>' starts a record */
    RECORDS(">a desc\rGAATTC\rAC\r>b\rGG\r", SM_INPUT_AUTO, "a=GAATTCAC|b=GG|");
    RECORDS(">a\nACGT\r>b\nGG\n", SM_INPUT_AUTO, "a=ACGT|b=GG|");
    RECORDS(">a\r\nAC\r\r\nGT\n\r>b\rG", SM_INPUT_FASTA, "a=ACGT|b=G|");
    /* line numbers count \r, \r\n and \n once each */
    ERROR_OF(">a\rAC\rA1\r", SM_INPUT_AUTO, ": line 3, column 2 (record 'a'): unexpected byte 0x31 ('1') in sequence");
    ERROR_OF(">a\r\nAC\r\nA1\r\n", SM_INPUT_AUTO,
             ": line 3, column 2 (record 'a'): unexpected byte 0x31 ('1') in sequence");
    ERROR_OF(">a\r\r\nA1\n", SM_INPUT_AUTO, ": line 3, column 2 (record 'a'): unexpected byte 0x31 ('1') in sequence");
    ERROR_OF(">a\rAC>\r", SM_INPUT_AUTO, ": line 2, column 3 (record 'a'): unexpected byte 0x3E ('>') in sequence");
    /* FASTQ and lines */
    RECORDS("@r1\rACGT\r+\rIIII\r@r2\rAC\r+r2\rII", SM_INPUT_AUTO, "r1=ACGT|r2=AC|");
    RECORDS("@r1\r\nAC\r\n+\r\nII\r\n@r2\r\n\r\n+\r\n\r\n", SM_INPUT_AUTO, "r1=AC|r2=|");
    ERROR_OF("@r1\rACGT\r+\rIII\r", SM_INPUT_AUTO, ": line 4 (record 'r1'): quality length 3 differs from sequence length 4");
    const char lines[] = "a\rb\r\nc\n\rd";
    const char *p = temp_path();
    write_file(p, lines, sizeof lines - 1);
    collected c;
    collect(p, SM_INPUT_LINES, &c, NULL, NULL);
    char want[512];
    snprintf(want, sizeof want, "%s:1=a|%s:2=b|%s:3=c|%s:4=|%s:5=d|", p, p, p, p, p);
    CHECK(c.rc == 0);
    CHECK_STR(c.text, want);
    /* a \r\n split by the input buffer's end is one line end */
    size_t n = (1u << 20) - 1;
    char *big = malloc(n + 8);
    memset(big, 'x', n);
    memcpy(big + n, "\r\nb\r\n", 5);
    write_file(p, big, n + 5);
    collect(p, SM_INPUT_LINES, &c, NULL, NULL);
    snprintf(want, sizeof want, "|%s:2=b|", p);
    CHECK(c.rc == 0 && c.records == 2 && strstr(c.text, want) != NULL);
    big[0] = '>';
    big[1] = '\r';
    memcpy(big + n, "\r\n>b\r\n", 6);
    write_file(p, big, n + 6);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    CHECK(c.rc == 0 && c.records == 2 && strstr(c.text, "|b=|") != NULL);
    free(big);
    /* text mode keeps every byte */
    write_file(p, lines, sizeof lines - 1);
    collect(p, SM_INPUT_TEXT, &c, NULL, NULL);
    snprintf(want, sizeof want, "%s=%s|", p, lines);
    CHECK_STR(c.text, want);
    unlink(p);
}

static void test_fastq_multiline(void) {
    /* sequence and quality wrapped; quality lines may start with '@' */
    RECORDS("@r1 x\nACGTAC\nGTAC\n+\nIIIII\n@IIII\n@r2\nACGT\n+r2\n@III\n@r3\n\n+\n\n", SM_INPUT_AUTO,
            "r1=ACGTACGTAC|r2=ACGT|r3=|");
    RECORDS("@r1\nAC\nGT\n\nAC\n+\nIII\n\nIII\n", SM_INPUT_FASTQ, "r1=ACGTAC|");
    /* a short quality before the next header: counted, and named as short */
    ERROR_OF("@r1\nACGTAC\n+\nIIII\n@r2\nACGT\n+\nIIII\n", SM_INPUT_AUTO,
             ": line 4 (record 'r1'): quality length 4 differs from sequence length 6");
    ERROR_OF("@r1\nACGTAC\n+\nIIII\nIIII\n", SM_INPUT_AUTO,
             ": line 4 (record 'r1'): quality length 8 differs from sequence length 6");
    ERROR_OF("@r1\nACGTAC\n+\nIIII\n", SM_INPUT_AUTO,
             ": line 4 (record 'r1'): quality length 4 differs from sequence length 6");
    ERROR_OF("@r1\nAC+GT\n+\nIIII\n", SM_INPUT_AUTO,
             ": line 2, column 3 (record 'r1'): unexpected byte 0x2B ('+') in sequence");
    ERROR_OF("@r1\nACGT\nAC\n", SM_INPUT_AUTO, ": line 4 (record 'r1'): unexpected end of file (missing '+' line)");
    ERROR_OF("@r1\nACGT\nAC", SM_INPUT_AUTO, ": line 4 (record 'r1'): unexpected end of file (missing '+' line)");
    ERROR_OF("@r1\nAC\n+\nII\nII\n", SM_INPUT_AUTO, ": line 5, column 1: expected a FASTQ header ('@'), found byte 0x49 ('I')");
    /* long wrapped records stream in pieces */
    size_t n = 3u << 20, width = 61;
    char *s = random_dna(n);
    const char *p = temp_path();
    FILE *f = fopen(p, "wb");
    fputs("@long\n", f);
    for (size_t i = 0; i < n; i += width) {
        fwrite(s + i, 1, n - i < width ? n - i : width, f);
        fputc('\n', f);
    }
    fputs("+\n", f);
    for (size_t i = 0; i < n; i += 77) {
        for (size_t j = i; j < n && j < i + 77; j++) fputc(j == i ? '@' : 'I', f);
        fputs("\r\n", f);
    }
    fputs("@short\nAC\n+\n##", f);
    fclose(f);
    collected c;
    char *got;
    size_t got_len;
    collect(p, SM_INPUT_AUTO, &c, &got, &got_len);
    CHECK(c.rc == 0 && c.records == 2);
    CHECK(got_len == n && memcmp(got, s, n) == 0);
    CHECK(strstr(c.text, "|short=AC|") != NULL);
    free(got);
    free(s);
    unlink(p);
}

static void test_bom_and_compression(void) {
    RECORDS("\xef\xbb\xbf>a\nGAATTC\n", SM_INPUT_AUTO, "a=GAATTC|");
    RECORDS("\xef\xbb\xbf>a\nGAATTC\n", SM_INPUT_FASTA, "a=GAATTC|");
    RECORDS("\xef\xbb\xbf\n\n@r\nAC\n+\nII\n", SM_INPUT_AUTO, "r=AC|");
    ERROR_OF("\xef\xbb\xbf>a\nAC1\n", SM_INPUT_AUTO,
             ": line 2, column 3 (record 'a'): unexpected byte 0x31 ('1') in sequence");
    ERROR_OF("\xef\xbb\xbf x\n", SM_INPUT_AUTO, ": not FASTA or FASTQ (first byte 0x78); use --alphabet text for plain text");
    /* a byte-order mark elsewhere is not skipped */
    ERROR_OF(">a\n\xef\xbb\xbf" "AC\n", SM_INPUT_AUTO, ": line 2, column 1 (record 'a'): unexpected byte 0xEF in sequence");
    /* text keeps it */
    const char *p = temp_path();
    write_file(p, "\xef\xbb\xbfx", 4);
    collected c;
    collect(p, SM_INPUT_TEXT, &c, NULL, NULL);
    char want[512];
    snprintf(want, sizeof want, "%s=\xef\xbb\xbfx|", p);
    CHECK_STR(c.text, want);

    static const struct {
        const char *bytes;
        size_t len;
        const char *name, *tool;
    } packed[] = {
        {"BZh91AY&SY", 10, "bzip2-compressed", "bzip2"},
        {"\xfd" "7zXZ\0\0\4", 8, "xz-compressed", "xz"},
    };
    for (size_t k = 0; k < sizeof packed / sizeof packed[0]; k++) {
        write_file(p, packed[k].bytes, packed[k].len);
        snprintf(want, sizeof want,
                 "%s: %s; seqmatch reads %s (decompress it first, e.g. %s -dc %s | seqmatch ...)", p,
                 packed[k].name, sm_io_source_reads, packed[k].tool, p);
        sm_input_format formats[] = {SM_INPUT_AUTO, SM_INPUT_FASTA, SM_INPUT_FASTQ};
        for (int f = 0; f < 3; f++) {
            collect(p, formats[f], &c, NULL, NULL);
            CHECK(c.rc == SM_ERR_FORMAT);
            CHECK_STR(c.err.message, want);
        }
        sm_pattern_list list = {0};
        sm_error e;
        CHECK(sm_pattern_list_read(&list, p, &e) == SM_ERR_FORMAT);
        CHECK_STR(e.message, want);
        /* text is bytes: searched as they are */
        collect(p, SM_INPUT_TEXT, &c, NULL, NULL);
        CHECK(c.rc == 0);
    }
    /* gzip inside gzip */
    unsigned char inner[64];
    const char *q = temp_path();
    write_gzip_member(q, "wb", ">a\nAC\n", 6);
    FILE *f = fopen(q, "rb");
    size_t inner_len = fread(inner, 1, sizeof inner, f);
    fclose(f);
    write_gzip_member(p, "wb", inner, inner_len);
    collect(p, SM_INPUT_AUTO, &c, NULL, NULL);
    snprintf(want, sizeof want,
             "%s: gzip-compressed twice; seqmatch reads %s (decompress it first, e.g. gzip -dc %s | seqmatch ...)", p,
             sm_io_source_reads, p);
    CHECK(c.rc == SM_ERR_FORMAT);
    CHECK_STR(c.err.message, want);
    unlink(q);
    unlink(p);
}

static void test_pattern_files_hostile(void) {
    sm_pattern_list list = {0};
    sm_error e;
    const char *p = temp_path();
    /* byte-order mark and lone \r line ends, both kinds of file */
    const char listed[] = "\xef\xbb\xbf" "ACGT\rGG\r\nTT\n\r\rCC";
    write_file(p, listed, sizeof listed - 1);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_OK);
    CHECK(list.count == 4);
    if (list.count == 4) {
        CHECK_STR(list.items[0].name, "ACGT");
        CHECK(list.items[0].len == 4);
        CHECK_STR(list.items[1].name, "GG");
        CHECK_STR(list.items[2].name, "TT");
        CHECK_STR(list.items[3].name, "CC");
    }
    sm_pattern_list_free(&list);
    const char fasta[] = "\xef\xbb\xbf>p1 x\rAC\rGT\r>p2\r\nGG\r\n";
    write_file(p, fasta, sizeof fasta - 1);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_OK);
    CHECK(list.count == 2);
    if (list.count == 2) {
        CHECK_STR(list.items[0].name, "p1");
        CHECK(list.items[0].len == 4 && memcmp(list.items[0].seq, "ACGT", 4) == 0);
        CHECK_STR(list.items[1].name, "p2");
        CHECK(list.items[1].len == 2);
    }
    sm_pattern_list_free(&list);
    const char empty_cr[] = ">p1\r>p2\rAC\r";
    write_file(p, empty_cr, sizeof empty_cr - 1);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_ERR_PATTERN);
    CHECK(strstr(e.message, ": line 1: pattern 'p1' is empty") != NULL);

    /* binary data is refused from its first 4 KiB; a few control bytes are text */
    char *bin = calloc(1, 8192);
    write_file(p, bin, 8192);
    char want[512];
    snprintf(want, sizeof want, "%s: binary data (4096 of the first 4096 bytes are control bytes); not a pattern file", p);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_ERR_FORMAT);
    CHECK_STR(e.message, want);
    for (size_t i = 0; i < 8192; i++) bin[i] = i % 64 == 63 ? '\n' : i % 32 == 5 ? '\0' : 'a';
    write_file(p, bin, 8192);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_OK && list.count == 128);
    CHECK(list.items[0].len == 63 && list.items[0].seq[5] == '\0');
    sm_pattern_list_free(&list);
    free(bin);

    /* a pattern over 16 MiB, as one line or as a FASTA record */
    size_t big = ((size_t)16 << 20) + 1;
    char *line = malloc(big + 16);
    memset(line, 'A', big);
    line[big] = '\n';
    write_file(p, line, big + 1);
    snprintf(want, sizeof want, "%s: line 1: a pattern longer than 16777216 bytes (16 MiB); is it a pattern file?", p);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_ERR_LIMIT);
    CHECK_STR(e.message, want);
    /* exactly 16 MiB is a pattern */
    memset(line, 'C', big);
    line[big - 1] = '\n';
    write_file(p, line, big);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_OK && list.count == 1 && list.items[0].len == big - 1);
    sm_pattern_list_free(&list);
    free(line);
    /* a FASTA record of 16 MiB + 1 symbols in lines of 999 */
    size_t lines = big / 999 + 1, size = 3 + big + lines;
    line = malloc(size);
    memcpy(line, ">x\n", 3);
    size_t at = 3;
    for (size_t left = big; left;) {
        size_t w = left < 999 ? left : 999;
        memset(line + at, 'G', w);
        line[at + w] = '\n';
        at += w + 1;
        left -= w;
    }
    write_file(p, line, at);
    snprintf(want, sizeof want, "%s: line 1: pattern 'x' is longer than 16777216 bytes (16 MiB)", p);
    CHECK(sm_pattern_list_read(&list, p, &e) == SM_ERR_LIMIT);
    CHECK_STR(e.message, want);
    CHECK(list.count == 0);
    free(line);
    unlink(p);
}

/* ------------------------------------------------- a caller's stream */

/* The bytes of a stream handed out in pieces of 1 to max_piece bytes; an
   error after fail_at bytes when fail_at is not SIZE_MAX. */
typedef struct {
    const uint8_t *data;
    size_t len, at, max_piece, fail_at;
} stream_bytes;

static long stream_read(void *ctx, void *buf, size_t cap, sm_error *err) {
    stream_bytes *s = ctx;
    if (s->at >= s->fail_at) return sm_io_error(err, SM_ERR_IO, "stream: broken"), -1;
    size_t n = 1 + (size_t)(rng() % s->max_piece);
    if (n > cap) n = cap;
    if (n > s->len - s->at) n = s->len - s->at;
    if (s->fail_at != SIZE_MAX && n > s->fail_at - s->at) n = s->fail_at - s->at;
    memcpy(buf, s->data + s->at, n);
    s->at += n;
    return (long)n;
}

static uint8_t *read_whole(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
    *len = 0;
    if (data) *len = fread(data, 1, (size_t)n, f);
    fclose(f);
    return data;
}

/* The records of a reader over a stream, as collect gives those of a path. */
static void collect_stream(stream_bytes *s, sm_input_format format, collected *c) {
    memset(c, 0, sizeof *c);
    sm_reader *r;
    int rc = sm_reader_open_fn("stream", format, stream_read, s, &r, &c->err);
    if (rc != SM_OK) {
        c->rc = rc;
        return;
    }
    const char *name;
    while ((rc = sm_reader_next_record(r, &name, &c->err)) > 0) {
        size_t at = strlen(c->text);
        snprintf(c->text + at, sizeof c->text - at, "%s=", name);
        size_t shown = 0;
        const uint8_t *d;
        size_t l;
        while ((rc = sm_reader_read(r, &d, &l, &c->err)) > 0) {
            size_t take = shown < 64 ? 64 - shown : 0;
            if (take > l) take = l;
            at = strlen(c->text);
            if (at + take + 2 < sizeof c->text) {
                memcpy(c->text + at, d, take);
                c->text[at + take] = '\0';
            }
            shown += take;
        }
        if (rc < 0) break;
        at = strlen(c->text);
        snprintf(c->text + at, sizeof c->text - at, "|");
        c->records++;
    }
    c->rc = rc < 0 ? -1 : 0;
    sm_reader_close(r);
}

/* sm_reader_open_fn: the records of a stream handed out in pieces of any
   size, plain and gzip, are those of the same bytes read as a file; the
   stream's error is the reader's. */
static void test_read_fn(void) {
    const char *files[] = {"data/io/multi.fa", "data/io/badqual.fq"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t len;
        uint8_t *data = read_whole(files[f], &len);
        CHECK(data != NULL);
        if (!data) continue;
        collected want, got;
        collect(files[f], SM_INPUT_AUTO, &want, NULL, NULL);
        const char *gz = temp_path();
        write_gzip_member(gz, "wb", data, len);
        size_t gz_len = 0;
        uint8_t *gz_data = read_whole(gz, &gz_len);
        for (size_t max_piece = 1; max_piece <= 4096; max_piece *= 8) {
            stream_bytes s = {data, len, 0, max_piece, SIZE_MAX};
            collect_stream(&s, SM_INPUT_AUTO, &got);
            CHECK(got.rc == want.rc);
            CHECK_STR(got.text, want.text);
            stream_bytes z = {gz_data, gz_len, 0, max_piece, SIZE_MAX};
            collect_stream(&z, SM_INPUT_AUTO, &got);
            CHECK(got.rc == want.rc);
            CHECK_STR(got.text, want.text);
        }
        stream_bytes broken = {data, len, 0, 7, len / 2};
        collect_stream(&broken, SM_INPUT_AUTO, &got);
        CHECK(got.rc != 0 && got.err.code == SM_ERR_IO);
        CHECK_STR(got.err.message, "stream: broken");
        unlink(gz);
        free(gz_data);
        free(data);
    }
    /* a text stream is one record named after the stream */
    const char text[] = "any bytes\n\x01 at all";
    stream_bytes t = {(const uint8_t *)text, sizeof text - 1, 0, 3, SIZE_MAX};
    collected got;
    collect_stream(&t, SM_INPUT_TEXT, &got);
    CHECK(got.rc == 0 && got.records == 1);
    CHECK(strncmp(got.text, "stream=any bytes\n\x01 at all|", sizeof got.text) == 0);
}

int main(void) {
    test_fasta_small();
    test_fasta_errors();
    test_files();
    test_skip_and_sticky();
    test_big_records();
    test_gzip_members();
    test_fastq();
    test_text_and_lines();
    test_patterns();
    test_line_ends();
    test_fastq_multiline();
    test_bom_and_compression();
    test_pattern_files_hostile();
    test_read_fn();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
