/* Reading targets (FASTA, FASTQ, raw text; plain, gzip or BGZF; files or
 * stdin) and pattern files.
 *
 * Not part of the library's API: the command-line tool, the tests and the
 * Python package compile it in; it is not installed and may change. The
 * library (include/seqmatch.h) takes sequences as bytes. Memory stays bounded whatever the record or line
 * length: sequences are handed out in pieces.
 *
 * Error messages are one line and name the file and the record, line or byte
 * offset, e.g. "reads.fq: line 12 (record 'r3'): quality length 99 differs
 * from sequence length 100".
 */
#ifndef SM_SEQIO_H
#define SM_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"

/* A record's name (and a FASTA pattern's) is its header's first word: it
   ends at white space (space, \t, \n, \v, \f, \r) or a NUL byte; every other
   byte, control bytes included, belongs to it. */
static inline int sm_name_end(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0; }

typedef enum {
    SM_INPUT_AUTO = 0,  /* FASTA if the first non-blank byte is '>', FASTQ if '@', else an error */
    SM_INPUT_FASTA,
    SM_INPUT_FASTQ,
    SM_INPUT_TEXT,      /* raw bytes; the whole file is one record named after the path */
    SM_INPUT_LINES      /* raw bytes; each line (without its \n or \r\n) is one record named PATH:LINE */
} sm_input_format;

typedef struct sm_reader sm_reader;

/* Opens path ("-" is standard input). gzip and BGZF are detected from the
   content, whatever the name. */
int sm_reader_open(const char *path, sm_input_format format, sm_reader **reader, sm_error *err);
/* The same, with up to threads threads decompressing (1: none besides the
   caller's; gzip and zstd inflate ahead on a thread of their own from 2,
   BGZF blocks on that many). A plain regular file is read in place
   (memory-mapped), whatever threads. */
int sm_reader_open_threads(const char *path, sm_input_format format, unsigned threads, sm_reader **reader,
                           sm_error *err);

/* The same over a caller's byte stream instead of a file: read(ctx, buf,
   cap, err) writes up to cap bytes and returns how many (> 0), 0 at the
   end, or -1 with err filled; it is called on the caller's thread only.
   name stands for the path in messages (and names a text record). */
int sm_reader_open_fn(const char *name, sm_input_format format, long (*read)(void *ctx, void *buf, size_t cap, sm_error *err),
                      void *ctx, sm_reader **reader, sm_error *err);

/* Moves to the next record. Returns 1 and sets *name (the header's first
   word, NUL-terminated, valid until the next call), 0 when there are no more
   records, or a negative value with err filled. */
int sm_reader_next_record(sm_reader *reader, const char **name, sm_error *err);

/* Hands out the next piece of the current record's sequence (line breaks and
   \r removed, bytes otherwise as in the file). Returns 1 with *data / *len
   set (valid until the next call), 0 at the end of the record, or a negative
   value with err filled (e.g. a non-sequence byte, a quality length that
   differs, a truncated gzip stream). */
int sm_reader_read(sm_reader *reader, const uint8_t **data, size_t *len, sm_error *err);

/* The same as sm_reader_read, written to dst instead (up to cap bytes,
   *len set): FASTA and FASTQ sequence is stripped straight into it. dst
   must have 64 writable bytes past cap (the vector loops write whole
   vectors). */
int sm_reader_read_into(sm_reader *reader, uint8_t *dst, size_t cap, size_t *len, sm_error *err);

/* The format being read: SM_INPUT_FASTA or SM_INPUT_FASTQ once AUTO has
   looked at the first byte, else the format asked for. */
sm_input_format sm_reader_format(const sm_reader *reader);

/* Keeps every record's bytes as they are in the input (FASTA, FASTQ and
   lines; not text), for sm_reader_record_raw. Call before the first record.
   A plain file is read in place, so this costs nothing there; compressed or
   piped input then holds the whole current record in memory, the buffer
   growing for a record longer than it (1 MiB). */
void sm_reader_keep_raw(sm_reader *reader);

/* The current record's bytes as in the (decompressed) input: its header
   line, sequence lines and (FASTQ) '+' and quality lines with their line
   ends, and the blank lines after it, up to the next record's header or
   the end of the input; in lines mode the line with its line end. The rest
   of the sequence is read first if it has not been. The last record of a
   file may end without a line end. Returns 1 with *data / *len set (valid
   until the next call on the reader; *stable, when not NULL, says whether
   they stay valid until sm_reader_close: a file read in place), or a
   negative value with err filled. */
int sm_reader_record_raw(sm_reader *reader, const uint8_t **data, size_t *len, int *stable, sm_error *err);


/* ------------------------------------------------------------ byte ranges
 *
 * One share of a file for a rank or shard: a plain file read in place or a
 * BGZF file (its blocks starting in the range), never one before it. The
 * reader finds the record boundaries near the range's ends by itself:
 *   - FASTA and text: records are cut at the range end. The range's first
 *     record may be the rest of one begun before it
 *     (sm_reader_record_continued: its name is not known here); its last is
 *     cut at the range end (sm_reader_record_cut), and
 *     sm_reader_read_extra reads on past the end for the bytes the next
 *     range's first hits need before them. Whether the range starts in a
 *     header or in sequence is read from the line it starts in (at most
 *     1 MiB back; a longer line is taken for sequence), and checked against
 *     the range before by whoever puts the shares together.
 *   - FASTQ and lines: whole records, those that start in the range; the
 *     first is found by the four-line rule (a line starting with '@' that
 *     reads as a whole record followed by another header or the end), so
 *     a quality line starting with '@' is never taken for a header.
 * format must be FASTA, FASTQ, TEXT or LINES (no AUTO); begin and end are
 * file offsets (compressed bytes for BGZF). Error messages name the byte
 * offset instead of the line (lines before the range are not counted). */
int sm_reader_open_range(const char *path, sm_input_format format, unsigned threads, uint64_t begin, uint64_t end,
                         sm_reader **reader, sm_error *err);
/* The current record began before the range (its name is ""; text: the path). */
int sm_reader_record_continued(const sm_reader *reader);
/* The current record's sequence stopped at the range end (reads return 0). */
int sm_reader_record_cut(const sm_reader *reader);
/* After a cut: the record's next bytes past the range end, as
   sm_reader_read_into (0 when the record ends); the range has no more
   records afterwards. */
int sm_reader_read_extra(sm_reader *reader, uint8_t *dst, size_t cap, size_t *len, sm_error *err);

enum { SM_RANGE_LINE_START = 0, SM_RANGE_IN_HEADER = 1, SM_RANGE_IN_SEQUENCE = 2 };

/* What two neighbouring ranges must agree on, valid once the range is read. */
typedef struct {
    int empty;              /* BGZF: no block starts in the range */
    int start_kind;         /* FASTA: SM_RANGE_* where the range starts (as found from the line it starts in) */
    int end_kind;           /* FASTA: SM_RANGE_* at the range end, as read (LINE_START: no claim) */
    uint64_t first_record;  /* FASTQ, lines: bytes from the range start to its first record */
    uint64_t next_record;   /* FASTQ, lines: bytes from the range end to the record after its last
                               (UINT64_MAX: not known) */
    uint64_t lines;         /* lines: records (lines) read, the first numbered 1 in names */
} sm_range_info;

void sm_reader_range_info(const sm_reader *reader, sm_range_info *info);

/* Bytes of the underlying (possibly compressed) file consumed so far, and the
   file size (0 when unknown, e.g. a pipe): for progress bars. */
void sm_reader_progress(const sm_reader *reader, uint64_t *done, uint64_t *total);

/* Strips on another team's threads (threads of them, the caller's
   included) instead of starting its own: run(ctx, n, job, arg) runs
   job(arg, i) for i in [0, n) and returns when all have run (a runner's,
   through sm_runner_parallel_for, so that stripping and scanning share the
   cores). Called before the first read. */
void sm_reader_share_threads(sm_reader *reader, unsigned threads,
                             void (*run)(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg),
                             void *ctx);

void sm_reader_close(sm_reader *reader);

/* A pattern set read from files or the command line; owns its strings.
   Each pattern's origin, for messages: the file it was read from (NULL:
   given on the command line) and the line it starts on. */
typedef struct {
    sm_pattern *items;
    size_t count, cap;
    const char **file;    /* [count]: an entry of files, or NULL */
    uint64_t *line;       /* [count] */
    char **files;         /* the names of the files read, owned */
    size_t nfiles;
} sm_pattern_list;

/* Appends one pattern (copies name and seq). name NULL: the sequence is the name. */
int sm_pattern_list_add(sm_pattern_list *list, const char *name, const char *seq, size_t len);

/* Reads a pattern file (gzip allowed): FASTA when the first non-blank byte is
   '>' (name = header's first word, sequence lines joined), otherwise one
   pattern per line (name = the line's text, a NUL byte in it written \0;
   blank lines skipped). Lines end with \n, \r\n or \r; a leading UTF-8
   byte-order mark is skipped. An empty FASTA record is an error naming file
   and line; so are a pattern over 16 MiB (SM_ERR_LIMIT), binary data in the
   first 4 KiB and a compressed format the source does not read.
   Reads as sm_pattern_list_read_alphabet with SM_ALPHABET_TEXT. */
int sm_pattern_list_read(sm_pattern_list *list, const char *path, sm_error *err);

/* As sm_pattern_list_read, and tables of two columns, name and sequence
   (primer lists as spreadsheets write them):
   - a file named *.tsv or *.csv (also .gz): columns split by tabs, or by
     commas;
   - for SM_ALPHABET_DNA, also a file whose first line holds a tab, or else
     a comma or a semicolon (none of them a DNA symbol).
   A field may be in double quotes ("" is a quote in it); spaces around
   fields are dropped, and for DNA spaces inside the sequence. A first row
   whose sequence is no pattern is a header, skipped: for DNA one with two or
   more letters that are no IUPAC code ("sequence", "Seq"), for text one
   whose sequence column is named sequence, seq or pattern. A row of one
   field is a pattern named after itself; an empty sequence, or a third
   column that is not empty, is an error naming file and line.
   For SM_ALPHABET_DNA a FASTQ file (a first line starting with '@', a third
   with '+') is refused with a message that says how patterns are given. */
int sm_pattern_list_read_alphabet(sm_pattern_list *list, const char *path, sm_alphabet alphabet, sm_error *err);

void sm_pattern_list_free(sm_pattern_list *list);

#endif /* SM_SEQIO_H */
