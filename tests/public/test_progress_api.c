/* The progress line of a scan of files (sm_progress_*, sm_thousands;
 * seqmatch_output.h), through the installed headers only, linked against
 * libseqmatch.so and libseqmatch.a: numbers with thousands separators; a
 * disabled line writes nothing; an enabled one draws the file, "file N of
 * M", the percent, the speed and the hits (after its redraw interval),
 * clears itself, and ends with the summary line; NULL is taken. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <seqmatch_output.h>

#include "check.h"

static char *read_back(FILE *f) {
    long n = ftell(f);
    char *text = calloc((size_t)n + 1, 1);
    rewind(f);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) text[0] = 0;
    return text;
}

int main(void) {
    char buf[32];
    CHECK(strcmp(sm_thousands(0, buf, sizeof buf), "0") == 0, "0: %s", buf);
    CHECK(strcmp(sm_thousands(999, buf, sizeof buf), "999") == 0, "999: %s", buf);
    CHECK(strcmp(sm_thousands(1000, buf, sizeof buf), "1,000") == 0, "1000: %s", buf);
    CHECK(strcmp(sm_thousands(1234567, buf, sizeof buf), "1,234,567") == 0, "1234567: %s", buf);
    CHECK(strcmp(sm_thousands(UINT64_MAX, buf, sizeof buf), "18,446,744,073,709,551,615") == 0, "max: %s", buf);

    char dir[] = "/tmp/sm_progress_XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char a[64], b[64];
    snprintf(a, sizeof a, "%s/a.fa", dir);
    snprintf(b, sizeof b, "%s/b.fa", dir);
    FILE *f = fopen(a, "w");
    if (!f) return 2;
    fputs(">r\n", f);
    for (int i = 0; i < 2000; i++) fputs("ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTAC\n", f);
    fclose(f);
    f = fopen(b, "w");
    if (!f) return 2;
    fputs(">s\nACGT\n", f);
    fclose(f);
    char *paths[2] = {a, b};

    /* disabled: nothing written */
    FILE *out = tmpfile();
    sm_progress *p = sm_progress_new(out, 0);
    CHECK(p != NULL, "new");
    sm_progress_set_files(p, paths, 2);
    sm_progress_begin_file(p, a);
    sm_progress_update(p, NULL, 100, 1);
    sm_progress_clear(p);
    sm_progress_summary(p, "x: ", "done");
    fflush(out);
    CHECK(ftell(out) == 0, "a disabled line wrote %ld bytes", ftell(out));
    sm_progress_free(p);
    fclose(out);

    /* enabled */
    out = tmpfile();
    p = sm_progress_new(out, 1);
    sm_progress_set_files(p, paths, 2);
    sm_progress_begin_file(p, a);
    sm_reader *reader = NULL;
    sm_error err;
    CHECK(sm_reader_open(a, SM_INPUT_AUTO, &reader, &err) == SM_OK, "open: %s", err.message);
    const char *name;
    const uint8_t *data;
    size_t len;
    while (sm_reader_next_record(reader, &name, &err) == 1)
        while (sm_reader_read(reader, &data, &len, &err) == 1) continue;
    struct timespec pause = {0, 250 * 1000 * 1000};
    nanosleep(&pause, NULL); /* past the redraw interval */
    sm_progress_update(p, reader, 100000, 1234);
    fflush(out);
    char *text = read_back(out);
    CHECK(text && text[0] == '\r' && strstr(text, "a.fa"), "the line: '%s'", text ? text : "");
    CHECK(text && strstr(text, "file 1 of 2"), "file 1 of 2: '%s'", text ? text : "");
    CHECK(text && strstr(text, "100.0%"), "percent: '%s'", text ? text : "");
    CHECK(text && strstr(text, "MB/s  1,234 hits"), "speed and hits: '%s'", text ? text : "");
    free(text);
    fseek(out, 0, SEEK_END);
    long before = ftell(out);
    sm_progress_clear(p);
    sm_progress_clear(p); /* once drawn, cleared once */
    fflush(out);
    CHECK(ftell(out) - before == 4, "the clear wrote %ld bytes", ftell(out) - before);
    sm_progress_begin_file(p, b);
    sm_progress_summary(p, "x: ", "1,234 hits");
    fflush(out);
    text = read_back(out);
    const char *last = text ? strstr(text, "x: ") : NULL;
    static const char head[] = "x: 1,234 hits; 2 files, 0.1 MB of sequence in ";
    CHECK(last && strncmp(last, head, sizeof head - 1) == 0 &&
              strstr(last, " MB/s)\n"), "summary: '%s'", last ? last : "");
    free(text);
    sm_reader_close(reader);
    sm_progress_free(p);
    fclose(out);

    /* NULL is taken */
    sm_progress_set_files(NULL, paths, 2);
    sm_progress_begin_file(NULL, a);
    sm_progress_update(NULL, NULL, 1, 1);
    sm_progress_clear(NULL);
    sm_progress_before_write(NULL);
    sm_progress_summary(NULL, "x: ", "y");
    sm_progress_free(NULL);

    remove(a);
    remove(b);
    remove(dir);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
