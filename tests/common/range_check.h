/* Byte ranges read and put together, shared by the range test and the
 * range fuzz target: a file cut into ranges, each read by a ranged reader
 * (sm_reader_open_range), must give the records and sequence bytes of the
 * whole-file reader once the parts are joined; neighbouring ranges must
 * agree on what lies between them, and where they do not (a range that
 * started wrong) the refusal must be seen, never wrong bytes. Also a small
 * BGZF writer, for files to cut at any compressed byte. */
#ifndef SM_RANGE_CHECK_H
#define SM_RANGE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "io/seqio.h"
#include "testutil.h"

typedef struct {
    char *name;
    uint8_t *seq;
    size_t len, cap;
} range_rec;

typedef struct {
    range_rec *v;
    size_t n, cap;
} range_recs;

void range_recs_free(range_recs *r);

/* The whole-file reader's records; 0, or -1 on an error. */
int range_read_whole(const char *path, sm_input_format format, range_recs *out);

/* Reads the file as ranges [cuts[i], cuts[i + 1]) (sorted; equal cuts make
   empty ranges, skipped) and puts the parts together. Returns 0 when the
   ranges agree (out filled), 1 when two neighbours disagree (an honest
   refusal), -1 on a reader error or a broken part (why says which). */
int range_read_split(const char *path, sm_input_format format, unsigned threads, const uint64_t *cuts,
                     size_t ncuts, range_recs *out, char *why, size_t whysize);

/* 1 when b has a's records, names and bytes; else 0 with why filled. */
int range_same(const range_recs *a, const range_recs *b, char *why, size_t whysize);

enum { RANGE_SAME = 0, RANGE_REFUSED = 1, RANGE_WRONG = -1 };

/* range_read_split compared with whole (the file's range_read_whole):
   RANGE_SAME, RANGE_REFUSED (the ranges disagreed or one failed to read),
   or RANGE_WRONG (they agreed on records other than the whole file's);
   why says what for the last two. */
int range_compare(const char *path, sm_input_format format, unsigned threads, const uint64_t *cuts, size_t ncuts,
                  const range_recs *whole, char *why, size_t whysize);

/* Most bytes range_bgzf_block writes: 26 + the compressed data. */
#define RANGE_BGZF_BLOCK_MAX 70026

/* A BGZF block of data (at most 65280 bytes, so that the block stays within
   64 KiB), as bgzip writes it, into out
   (RANGE_BGZF_BLOCK_MAX bytes free). Returns its size, 0 on a zlib failure. */
size_t range_bgzf_block(const uint8_t *data, size_t n, uint8_t *out);

/* Room range_bgzf_of needs for n bytes of data. */
size_t range_bgzf_bound(size_t n);

/* BGZF in blocks of 1..max_block bytes (max_block <= 65280), an empty block
   among them at times (files joined with cat), and the end-of-file block;
   the sizes are drawn from rng. Returns the size written to out
   (range_bgzf_bound(n) bytes), 0 on a zlib failure. */
size_t range_bgzf_of(tu_rng *rng, const uint8_t *data, size_t n, size_t max_block, uint8_t *out);

#endif /* SM_RANGE_CHECK_H */
