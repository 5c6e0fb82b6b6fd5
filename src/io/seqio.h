/* The reader's internal side: the public reader and pattern files are
 * include/seqmatch_reader.h. */
#ifndef SM_SEQIO_H
#define SM_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"
#include "seqmatch_reader.h"
#include "io/source.h"

/* A record's name (and a FASTA pattern's) is its header's first word: it
   ends at white space (space, \t, \n, \v, \f, \r) or a NUL byte; every other
   byte, control bytes included, belongs to it. */
static inline int sm_name_end(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0; }

/* sm_reader_open_range with a BGZF file's blocks inflated by decoder
   (source.h; NULL: as sm_reader_open_range). */
int sm_reader_open_range_decoder(const char *path, sm_input_format format, unsigned threads, uint64_t begin,
                                 uint64_t end, const sm_io_bgzf_decoder *decoder, sm_reader **reader, sm_error *err);

/* Where a resumable sm_runner_scan_reader stopped inside a record (open
   0: between records), kept with the reader it reads. */
typedef struct {
    int open;
    uint64_t record;  /* the runner's number */
    uint64_t length;  /* bytes fed so far */
    const char *name; /* the reader's, valid until its next record */
    int continued;
} sm_reader_resume;
sm_reader_resume *sm_reader_resume_point(sm_reader *reader);

/* Strips on another team's threads (threads of them, the caller's
   included) instead of starting its own: run(ctx, n, job, arg) runs
   job(arg, i) for i in [0, n) and returns when all have run (a runner's,
   through sm_runner_parallel_for, so that stripping and scanning share the
   cores). Called before the first read. */
void sm_reader_share_threads(sm_reader *reader, unsigned threads,
                             void (*run)(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg),
                             void *ctx);

/* Many whole records at once, for a reader on a mapped plain FASTQ file
   (FASTA: from three threads) that strips on a team
   (sm_reader_share_threads), between records: at most max_records of them from the next room bytes of the
   file, parsed and each record's sequence stripped on the team's threads
   into dst (room bytes) at offs[i] (increasing; record i's bytes lie at
   most at its own offset in the file, so gaps are left where line ends and
   headers were), lens[i] bytes. Returns 1 with out->n (>= 1) records, their
   places, lengths and names (valid until the next call); the reader is
   then past them, as if each had been read. Returns 0 when it takes none:
   the caller reads the next record the usual way (sm_reader_next_record),
   which also reports whatever stopped this one; out->need is then SIZE_MAX
   when more room might take the next record, else 0. Never fails. */
typedef struct {
    size_t n;
    const size_t *offs;
    const size_t *lens;
    const char *const *names;
    size_t need;
} sm_reader_records;
int sm_reader_read_records(sm_reader *reader, uint8_t *dst, size_t room, size_t max_records, sm_reader_records *out);

/* Whole plain FASTQ records parsed by the caller (seqmatch trim's workers):
   the reader's bytes from its position, which is a record's first byte at
   a line start (not after a \r), between records, on an unranged FASTQ
   reader. sm_reader_window_get gives at least want bytes when the input holds
   them (fewer when a buffered reader's buffer holds fewer: at most its
   size), read on as needed; returns 0 when the reader is not at such a
   place or reading failed (the next sm_reader_next_record says why).
   p[0, n) stays valid until the next call on the reader, or while it is
   open when stable (a mapped file); ends: the input ends at p + n; line:
   the line number of p[0]. sm_reader_window_take then moves the reader
   past used bytes (whole records ending in \n, holding lines line ends,
   no \r among them), as if they had been read. */
typedef struct {
    const uint8_t *p;
    size_t n;
    int ends, stable;
    uint64_t line;
} sm_reader_window;
int sm_reader_window_get(sm_reader *reader, size_t want, sm_reader_window *window);
void sm_reader_window_take(sm_reader *reader, size_t used, uint64_t lines);
/* After sm_reader_window_take, a reader that is not mapped: the buffer that
   held the window goes to the caller (*buf, its size *cap), so the taken
   bytes stay where they are, and the reader goes on in the caller's former
   buffer (*buf, *cap bytes, grown when smaller), the bytes not yet taken
   copied into it. Returns 0, or -1 when nothing was swapped (mapped, or
   out of memory). */
int sm_reader_window_swap(sm_reader *reader, uint8_t **buf, size_t *cap);

/* The name the reader's messages give its input. */
const char *sm_reader_shown(const sm_reader *reader);

/* Numbers the lines of a reader that has read nothing yet from line (a
   reader over some of a file's records, for messages naming the file's
   lines). */
void sm_reader_first_line(sm_reader *reader, uint64_t line);

#endif /* SM_SEQIO_H */
