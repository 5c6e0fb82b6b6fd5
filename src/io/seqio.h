/* The reader's internal side (the public reader is include/seqmatch_reader.h)
 * and pattern files.
 *
 * Pattern files are not part of the library's API: the command-line tool,
 * the tests and the Python package use them; they may change.
 */
#ifndef SM_SEQIO_H
#define SM_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"
#include "seqmatch_reader.h"

/* A record's name (and a FASTA pattern's) is its header's first word: it
   ends at white space (space, \t, \n, \v, \f, \r) or a NUL byte; every other
   byte, control bytes included, belongs to it. */
static inline int sm_name_end(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0; }

/* Strips on another team's threads (threads of them, the caller's
   included) instead of starting its own: run(ctx, n, job, arg) runs
   job(arg, i) for i in [0, n) and returns when all have run (a runner's,
   through sm_runner_parallel_for, so that stripping and scanning share the
   cores). Called before the first read. */
void sm_reader_share_threads(sm_reader *reader, unsigned threads,
                             void (*run)(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg),
                             void *ctx);

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
