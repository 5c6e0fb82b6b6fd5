/* Internal to src/io: many whole FASTA or FASTQ records of a mapped file
 * parsed and stripped on a team's threads at once (records.c), for the
 * reader's sm_reader_read_records. Only input the serial reader would read
 * without a word is taken: a record holding anything else (a \r, a bad
 * byte, a truncated FASTQ record) and everything after it are left to the
 * serial reader, which stays the reference for every message. */
#ifndef SM_IO_RECORDS_H
#define SM_IO_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "io/strip.h"

typedef struct sm_records_parser sm_records_parser;

sm_records_parser *sm_records_parser_new(void);
void sm_records_parser_free(sm_records_parser *ps);

typedef struct {
    /* in */
    const uint8_t *p;     /* the window: p[0] starts a line (not after a \r) */
    size_t n;             /* bytes from p to the input's end (64 zero bytes readable after) */
    size_t window;        /* raw bytes to look at (at most n); dst has room for them */
    int fastq;            /* else FASTA */
    size_t name_max;      /* longer names are the serial reader's (its message) */
    uint8_t *dst;         /* sequence bytes go here, a record's at its raw offset or before */
    size_t max_records;
    unsigned threads;
    sm_parallel_for_fn run; /* the team (NULL: the caller alone) */
    void *run_ctx;
    /* out */
    size_t records;       /* taken */
    const size_t *offs;   /* where each one's sequence is in dst (increasing, apart by the bytes dropped) */
    const size_t *lens;
    const char *const *names;
    size_t used;          /* raw bytes consumed: p[used] starts the next record (or is the input's end) */
    uint64_t lines;       /* \n in p[0, used) */
    size_t need;          /* records == 0: SIZE_MAX when a longer window (more room) might take the first record */
} sm_records_job;

/* Parses, places and strips; returns the records taken (job->records). */
size_t sm_records_parse(sm_records_parser *ps, sm_records_job *job);

#endif /* SM_IO_RECORDS_H */
