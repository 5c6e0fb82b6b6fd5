/* Internal to src/io: a byte source that hides decompression.
 *
 * Plain, gzip, multi-member gzip and BGZF files (and standard input) all read
 * the same way. Everything that knows about the compression library lives in
 * source.c, so that it can be replaced without touching the parsers.
 */
#ifndef SM_IO_SOURCE_H
#define SM_IO_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"

typedef struct sm_source sm_source;

/* Opens path ("-" is standard input, which stays open after closing).
   threads: how many threads may decompress (1: on the caller's thread
   only; more: gzip and zstd inflate on a thread of their own, BGZF blocks
   on that many). Returns SM_OK or an error status with err filled ("PATH:
   reason"). */
int sm_io_source_open(const char *path, unsigned threads, sm_source **source, sm_error *err);

/* BGZF inflated somewhere other than the source's threads (a GPU):
   decode(ctx, raw, raw_len, out, cap, &out_len) inflates a job, a run of
   whole blocks (at most max_blocks of them, max_raw bytes, job_bytes
   inflated), into out; returns 1 with out[0, out_len) made, or 0 when it
   did not make them all: the source then inflates the job itself, so that
   the bytes and any error are as without it. One thread of the source calls
   it, ahead of the reader. */
typedef struct {
    int (*decode)(void *ctx, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap, size_t *out_len);
    void *ctx;
    size_t job_bytes, max_blocks, max_raw;
} sm_io_bgzf_decoder;

/* sm_io_source_open, a BGZF file's jobs given to decoder (NULL: as
   sm_io_source_open); other inputs are read as without it. */
int sm_io_source_open_decoder(const char *path, unsigned threads, const sm_io_bgzf_decoder *decoder,
                              sm_source **source, sm_error *err);

/* A source over a caller's byte stream (the Python package's file
   objects): fn(ctx, buf, cap, err) writes up to cap bytes to buf and
   returns how many (> 0), 0 at the end, or -1 with err filled. Compressed
   data is detected and decoded as from a file, on the calling thread.
   name is used in messages. */
typedef long (*sm_io_read_fn)(void *ctx, void *buf, size_t cap, sm_error *err);
int sm_io_source_open_fn(const char *name, sm_io_read_fn fn, void *ctx, sm_source **source, sm_error *err);

/* A plain regular file not read from yet: the whole file, mapped, with at
   least 64 zero bytes readable after it (*len bytes of data); returns 1,
   or 0 when the source is anything else. The reader then works on the
   mapping and tells progress with sm_io_source_mapped_done. */
int sm_io_source_map(sm_source *source, const uint8_t **data, size_t *len);
void sm_io_source_mapped_done(sm_source *source, size_t consumed);

/* Reads up to cap decompressed bytes into buf. Returns the count (> 0),
   0 at the end of the data, or -1 with err filled. A compressed stream that
   ends early is an error, never a silent end. */
long sm_io_source_read(sm_source *source, void *buf, size_t cap, sm_error *err);

/* BGZF inflated by worker threads: the next block job's bytes taken whole
   in place of a copy. *buf holds *cap bytes and pad more after them, with
   [from, *end) to keep. On success (1) *buf is the job's buffer (*cap, and
   pad bytes after it, initialised), holding the kept bytes and then the
   job's at [*start, *end); the old buffer is the source's. 0: nothing done
   (another source, a job begun or failed, too much to keep): read as usual. */
int sm_io_source_swap(sm_source *source, uint8_t **buf, size_t *cap, size_t pad, size_t from, size_t *start,
                      size_t *end);
#define SM_IO_SWAP_KEEP ((size_t)64 << 10) /* the most bytes sm_io_source_swap keeps */

/* 1 when the next bytes are a BGZF job not begun, which a read would split
   and sm_io_source_swap (keeping at most SM_IO_SWAP_KEEP) takes whole. */
int sm_io_source_job_next(const sm_source *source);

/* The name used in messages: the path, or "stdin" for "-". */
const char *sm_io_source_name(const sm_source *source);

/* Raw (compressed) bytes consumed so far and the file size (0 if unknown). */
void sm_io_source_progress(const sm_source *source, uint64_t *done, uint64_t *total);

void sm_io_source_close(sm_source *source);

/* Byte ranges (one rank's or shard's share of a file).
   sm_io_source_rangeable: 1 for a plain file read in place, 2 for a BGZF
   file read in place, 0 otherwise (a pipe, plain gzip, zstd): only these
   can be read from the middle. */
int sm_io_source_rangeable(const sm_source *source);
/* The file size (0 when not a regular file). */
uint64_t sm_io_source_size(const sm_source *source);
/* BGZF: the first block boundary at or after offset (the file size when
   none); a boundary is a block whose chain of sizes lands on more blocks or
   on the file's end. */
int sm_io_bgzf_boundary_at_or_after(const sm_source *source, uint64_t offset, uint64_t *block, sm_error *err);
/* BGZF, before the first read: decompress only the blocks in [begin, end)
   (boundaries); reading then ends at end, as at the end of the input,
   until sm_io_source_extend lets it go on to the file's end. */
int sm_io_source_limit(sm_source *source, uint64_t begin, uint64_t end, sm_error *err);
void sm_io_source_extend(sm_source *source);
/* BGZF: the decompressed bytes before boundary block, block by block
   backwards until they hold a line end or want bytes, or the file's start
   (*from_start then); in *data (malloc'd, the caller frees). */
int sm_io_bgzf_data_before(const sm_source *source, uint64_t block, size_t want, uint8_t **data, size_t *len,
                           int *from_start, sm_error *err);

/* What the source reads, for messages: "plain and gzip/BGZF files". */
extern const char sm_io_source_reads[];

/* When head (the first n bytes a source gave) starts with the magic number
   of a compressed format the source does not decompress, fills err with a
   message naming it and the way out ("FILE: bzip2-compressed; ...") and
   returns SM_ERR_FORMAT; otherwise returns SM_OK. gzip read back as gzip is
   a file compressed twice. */
int sm_io_check_compression(const char *shown, const uint8_t *head, size_t n, sm_error *err);

/* The library that inflates gzip ("isa-l" or "zlib"). */
const char *sm_inflater_gzip_library(void);

/* A runner's failing status in words: the status's own, and what the GPU
   said when it failed (sm_runner_message); in buf when that is needed. */
const char *sm_io_status_words(const sm_runner *runner, int status, char *buf, size_t size);

/* Fills err (when not NULL) with code and a formatted one-line message;
   returns code. */
int sm_io_error(sm_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* SM_IO_SOURCE_H */
