/* What the reader tests (test_feed, test_records) compare: everything a
 * reader gave, joined into one text, with the status it ended with; teams
 * for sm_reader_share_threads that run the jobs on the caller; test files. */
#ifndef SM_TEST_READING_H
#define SM_TEST_READING_H

#include <stddef.h>

#include "seqmatch.h"

typedef struct {
    char *text;   /* "name\tSEQUENCE\n" per record, NUL-terminated */
    size_t len, cap;
    int rc;
    sm_error err;
} tu_reading;

/* Appends n bytes (exits on a failed allocation). */
void tu_reading_put(tu_reading *r, const void *p, size_t n);

/* Teams that run the jobs on the caller, in order or last first (the
   result must not depend on the order), counting their calls in *ctx
   (an unsigned). */
void tu_run_forwards(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg);
void tu_run_backwards(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg);

/* Writes n bytes to path (exits on failure). */
void tu_write_file(const char *path, const void *p, size_t n);

#endif /* SM_TEST_READING_H */
