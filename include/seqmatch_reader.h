/*
 * seqmatch_reader.h — reading targets: FASTA, FASTQ and raw text, plain or
 * compressed, from a file, standard input or a caller's byte stream, whole
 * or one byte range of a file; and feeding what is read into a runner.
 *
 * Part of libseqmatch (shared and static); include after or instead of
 * seqmatch.h (it includes it). A minimal search:
 *
 *     sm_reader *reader;
 *     sm_error err;
 *     if (sm_reader_open("reads.fq.gz", SM_INPUT_AUTO, &reader, &err) != SM_OK) ...
 *     int status = sm_runner_scan_reader(runner, reader, NULL, &err);
 *     if (status == SM_OK) status = sm_runner_flush(runner);
 *     sm_reader_close(reader);
 *
 * Compression is found from the content, whatever the name: gzip (one or
 * many members), BGZF and, when the library was built with libzstd, zstd.
 * Other compressed formats (bzip2, xz, ...) are refused with a message that
 * names them. Memory stays bounded whatever the record or line length:
 * sequences are handed out in pieces.
 *
 * Every function that can fail returns SM_OK (0) or 1 on success as
 * documented, and otherwise a non-zero status with err (when not NULL)
 * filled: err->code is the status (an SM_ERR_* code, e.g. SM_ERR_FORMAT for
 * bad input, SM_ERR_IO for a failed read) and err->message one line that
 * names the file and the record, line or byte offset, e.g. "reads.fq: line
 * 12 (record 'r3'): quality length 99 differs from sequence length 100".
 * A reader is used by one thread at a time.
 */
#ifndef SEQMATCH_READER_H
#define SEQMATCH_READER_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* What a reader reads. A record's name is its header's first word: it ends
   at white space (space, \t, \n, \v, \f, \r) or a NUL byte. */
typedef enum {
    SM_INPUT_AUTO = 0,  /* FASTA if the first non-blank byte is '>', FASTQ if '@', else an error */
    SM_INPUT_FASTA,
    SM_INPUT_FASTQ,
    SM_INPUT_TEXT,      /* raw bytes; the whole file is one record named after the path */
    SM_INPUT_LINES      /* raw bytes; each line (without its \n or \r\n) is one record named PATH:LINE */
} sm_input_format;

typedef struct sm_reader sm_reader;

/* Opens path ("-" is standard input, left open by sm_reader_close). */
int sm_reader_open(const char *path, sm_input_format format, sm_reader **reader, sm_error *err);

/* The same, with up to threads threads decompressing and stripping (1: none
   besides the caller's; gzip and zstd inflate ahead on a thread of their
   own from 2, BGZF blocks on that many). A plain regular file is read in
   place (memory-mapped), whatever threads. */
int sm_reader_open_threads(const char *path, sm_input_format format, unsigned threads, sm_reader **reader,
                           sm_error *err);

/* The same over a caller's byte stream instead of a file (a socket, a
   language binding's file object; for a file descriptor, a read(2) loop):
   read(ctx, buf, cap, err) writes up to cap bytes to buf and returns how
   many (> 0), 0 at the end, or -1 with err filled; it is called on the
   caller's thread only. Compressed data is detected and decoded as from a
   file. name stands for the path in messages (and names a text record). */
int sm_reader_open_fn(const char *name, sm_input_format format,
                      long (*read)(void *ctx, void *buf, size_t cap, sm_error *err), void *ctx, sm_reader **reader,
                      sm_error *err);

/* Moves to the next record. Returns 1 and sets *name (NUL-terminated, valid
   until the next call), 0 when there are no more records, or a negative
   value with err filled. */
int sm_reader_next_record(sm_reader *reader, const char **name, sm_error *err);

/* Hands out the next piece of the current record's sequence (line breaks and
   \r removed, bytes otherwise as in the file). Returns 1 with *data / *len
   set (valid until the next call), 0 at the end of the record, or a negative
   value with err filled (e.g. a byte no sequence has, a quality length that
   differs, a truncated gzip stream). */
int sm_reader_read(sm_reader *reader, const uint8_t **data, size_t *len, sm_error *err);

/* The same as sm_reader_read, written to dst instead (up to cap bytes, *len
   set). dst must have 64 writable bytes past cap (the vector loops write
   whole vectors); sm_runner_feed_buffer's space has them. */
int sm_reader_read_into(sm_reader *reader, uint8_t *dst, size_t cap, size_t *len, sm_error *err);

/* The format being read: SM_INPUT_FASTA or SM_INPUT_FASTQ once AUTO has
   looked at the first byte, else the format asked for. */
sm_input_format sm_reader_format(const sm_reader *reader);

/* Keeps every record's bytes as they are in the input (FASTA, FASTQ and
   lines; not text), for sm_reader_record_raw. Call before the first record.
   A plain file is read in place, so this costs nothing there; compressed or
   piped input then holds the whole current record in memory. */
void sm_reader_keep_raw(sm_reader *reader);

/* The current record's bytes as in the (decompressed) input: its header
   line, sequence lines and (FASTQ) '+' and quality lines with their line
   ends, and the blank lines after it, up to the next record's header or the
   end of the input; in lines mode the line with its line end. The rest of
   the sequence is read first if it has not been. Returns 1 with *data /
   *len set (valid until the next call on the reader; *stable, when not
   NULL, says whether they stay valid until sm_reader_close), or a negative
   value with err filled. */
int sm_reader_record_raw(sm_reader *reader, const uint8_t **data, size_t *len, int *stable, sm_error *err);

/* Bytes of the underlying (possibly compressed) file consumed so far, and
   the file size (0 when unknown, e.g. a pipe): for progress bars. */
void sm_reader_progress(const sm_reader *reader, uint64_t *done, uint64_t *total);

void sm_reader_close(sm_reader *reader);

/* What the reader decompresses, for messages and --version: "plain,
   gzip/BGZF and zstd files" (or without zstd when built without libzstd). */
const char *sm_reader_compressions(void);
/* The library that inflates gzip in this build: "isa-l" or "zlib". */
const char *sm_reader_gzip_library(void);

/* ------------------------------------------------------------ byte ranges
 *
 * One share of a file, for a process or thread of many that read one file
 * together: a plain file read in place or a BGZF file (its blocks starting
 * in the range). The reader finds the record boundaries near the range's
 * ends by itself:
 *   - FASTA and text: records are cut at the range end. The range's first
 *     record may be the rest of one begun before it
 *     (sm_reader_record_continued: its name is not known here); its last is
 *     cut at the range end (sm_reader_record_cut), and sm_reader_read_extra
 *     reads on past the end for the bytes the next range's first hits need
 *     before them. Whether the range starts in a header or in sequence is
 *     read from the line it starts in (at most 1 MiB back; a longer line is
 *     taken for sequence); sm_range_info says what was assumed, for the
 *     caller to check against the range before.
 *   - FASTQ and lines: whole records, those that start in the range; the
 *     first is found by the four-line rule (a line starting with '@' that
 *     reads as a whole record followed by another header or the end), so a
 *     quality line starting with '@' is never taken for a header.
 * format must be FASTA, FASTQ, TEXT or LINES (not AUTO); begin and end are
 * file offsets (compressed bytes for BGZF). Error messages name the byte
 * offset instead of the line (lines before the range are not counted). */
int sm_reader_open_range(const char *path, sm_input_format format, unsigned threads, uint64_t begin, uint64_t end,
                         sm_reader **reader, sm_error *err);
/* The current record began before the range (its name is ""; text: the path). */
int sm_reader_record_continued(const sm_reader *reader);
/* The current record's sequence stopped at the range end (reads return 0;
   still 1 once sm_reader_read_extra has begun). */
int sm_reader_record_cut(const sm_reader *reader);
/* After a cut: the record's next bytes past the range end, as
   sm_reader_read_into (0 when the record ends); the range has no more
   records afterwards. */
int sm_reader_read_extra(sm_reader *reader, uint8_t *dst, size_t cap, size_t *len, sm_error *err);

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental (seqmatch.h, "Stability"), to the end of the pattern files:
   structs whose fields the caller reads. */
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

/* ---------------------------------------------------------- pattern files
 *
 * A pattern set read from files (and added to by hand), ready for
 * sm_compile: items[0, count) are the patterns. The list owns its strings.
 * Each pattern's origin, for messages: the file it was read from (NULL: added
 * with sm_pattern_list_add) and the line it starts on. Start from a
 * zero-filled list; sm_pattern_list_free releases it (and leaves it empty). */
typedef struct {
    sm_pattern *items;
    size_t count, cap;
    const char **file;    /* [count]: an entry of files, or NULL */
    uint64_t *line;       /* [count] */
    char **files;         /* the names of the files read, owned */
    size_t nfiles;
} sm_pattern_list;

/* Appends one pattern (copies name and seq). name NULL: the sequence is the
   name. Returns SM_OK or SM_ERR_NOMEM. */
int sm_pattern_list_add(sm_pattern_list *list, const char *name, const char *seq, size_t len);

/* Reads a pattern file (compressed as the reader allows): FASTA when the
   first non-blank byte is '>' (name = header's first word, sequence lines
   joined), otherwise one pattern per line (name = the line's text, a NUL
   byte in it written \0; blank lines skipped). Lines end with \n, \r\n or
   \r; a leading UTF-8 byte-order mark is skipped. An empty FASTA record is
   an error naming file and line; so are a pattern over 16 MiB
   (SM_ERR_LIMIT), binary data in the first 4 KiB and a compressed format
   the reader does not read. The same as sm_pattern_list_read_alphabet with
   SM_ALPHABET_TEXT. */
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

/* What the regular file path holds, from its first 4 KiB (decompressed;
   after a byte-order mark and white space): SM_INPUT_FASTA ('>'),
   SM_INPUT_FASTQ ('@') or SM_INPUT_TEXT; SM_INPUT_AUTO when it cannot say
   (standard input, a pipe, an empty or unreadable file). */
sm_input_format sm_reader_sniff(const char *path);
/* Whether a DNA record's start looks like protein: of its first 4096 bytes'
   letters (at least 20 of them: *letters) 10 % or more (*other) are no
   nucleotide code (A C G T U and IUPAC, either case); list gets up to six
   of those letters, upper case, space-separated, in the order first seen. */
int sm_seq_looks_like_protein(const uint8_t *seq, size_t len, size_t *letters, size_t *other, char list[16]);
/* 1 when record (of file, "-" standard input) looks like protein by
   sm_seq_looks_like_protein, with the warning for buf (cap bytes); else 0. */
int sm_protein_warning(const char *file, const char *record, const uint8_t *seq, size_t len, char *buf, size_t cap);
/* The alphabet inputs hold, as search and dfa decide without --alphabet:
   FASTA or FASTQ files DNA, other files text; standard input and pipes
   (which cannot be looked at twice) text, or DNA with per_record. Files of
   both kinds: SM_ERR_INVALID with a message. */
int sm_files_alphabet(char *const *paths, size_t count, int per_record, sm_alphabet *alphabet, sm_error *err);
/* A typical record length for sm_compile_options.typical_record: 150 (short
   reads) for a FASTQ name (.fq, .fastq; .gz, .zst, .bgz) or a regular file
   whose first byte is '@', else 0 (long records; standard input and pipes
   are not read). */
uint32_t sm_file_typical_record(const char *path);
/* The regular files' total size, or 0 when one is not a regular file
   ("-", a pipe) or missing. */
uint64_t sm_files_size(char *const *paths, size_t count);
/* Whether some pattern holds a letter that is no DNA or IUPAC code (E F I L
   P Q ...: protein, words). */
int sm_pattern_list_has_non_dna(const sm_pattern_list *list);
/* Where pattern i of list came from, as a message prefix: "FILE: line L: ",
   or "" for one added by hand; buf holds at least 600 bytes. */
const char *sm_pattern_list_where(const sm_pattern_list *list, size_t i, char *buf, size_t cap);
/* SM_ERR_INVALID with a message (where the pattern came from, and the bound
   to use) when o's -m or -k is at least a pattern's length, or its bases
   other than N, for which every window or position would be a hit (exact:
   NULL, or a flag per pattern that takes no errors); else SM_OK. */
int sm_pattern_list_check_errors(const sm_pattern_list *list, const sm_compile_options *o, const unsigned char *exact,
                                 sm_error *err);
/* Appends one source of patterns to list: a pattern file (is_file, read as
   sm_pattern_list_read_alphabet) or one pattern written out (text). *exact
   (NULL until a source is exact_source) gets a flag per pattern: 1 for those
   of an exact source (compile's sm_compile_options.exact). note (note_cap
   bytes, "" when none) gets a warning for a pattern over 1 Mbp from a file:
   most likely the target given to -p. SM_OK, or an error with its message. */
int sm_pattern_list_add_source(sm_pattern_list *list, int is_file, const char *text, sm_alphabet alphabet,
                               int exact_source, unsigned char **exact, char *note, size_t note_cap, sm_error *err);
/* sm_compile's error (status, err) about list's patterns compiled with o,
   said in full in err->message: where the pattern it names came from, and,
   for DNA patterns holding letters that are no IUPAC code, how to search
   protein or text. */
void sm_pattern_list_explain(const sm_pattern_list *list, const sm_compile_options *o, int status, sm_error *err);
#endif /* SEQMATCH_EXPERIMENTAL */

/* ------------------------------------------------ from a reader to a runner */

typedef struct sm_scan_reader_options sm_scan_reader_options;

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental (seqmatch.h, "Stability"): the layout of the options below;
   the stable calls take NULL for none. */

/* A record as the record callbacks below see it (valid during the call). */
typedef struct {
    uint64_t number;    /* the runner's record number; UINT64_MAX for a mate that is not fed */
    unsigned mate;      /* 1, or 2 for a record of opts->mate */
    sm_reader *reader;  /* the reader it is read from (sm_reader_record_raw, ...) */
    const char *name;   /* as sm_reader_next_record gave it */
    uint64_t length;    /* sequence bytes fed so far (past_cut's not counted) */
    int continued;      /* byte ranges: it began before the range (sm_reader_record_continued) */
    int cut;            /* byte ranges: its sequence stopped at the range end (known once it is read) */
} sm_scan_record;

/* Which mates of a pair are fed to the runner (sm_scan_reader_options.scan_mates). */
enum { SM_SCAN_MATE_1 = 1, SM_SCAN_MATE_2 = 2 };

/* What sm_runner_scan_reader tells its caller while it reads; every field may
   be 0 / NULL. Callbacks run on the calling thread; those that return int
   stop the scan when they return non-zero (sm_runner_scan_reader then
   returns SM_ERR_TERMINATED and leaves err as it was: the caller knows why).
   Start from sm_scan_reader_options_init. */
struct sm_scan_reader_options {
    /* sizeof(sm_scan_reader_options) as the caller was compiled
       (sm_scan_reader_options_init sets it): the library reads no field
       past it. 0: the fields up to past_cut only. */
    size_t size;
    void *ctx;
    /* A record began: its number in the runner (sm_runner_begin_record's)
       and its name (valid until the next record begins). */
    int (*on_record)(void *ctx, uint64_t record, const char *name);
    /* A piece of the record's sequence, read and about to be fed (data
       valid during the call only); a stop leaves the piece unfed. */
    int (*on_sequence)(void *ctx, uint64_t record, const uint8_t *data, size_t len);
    /* The record's whole sequence (length bytes) has been fed; called
       before sm_runner_end_record, so before its hits are all delivered. */
    void (*on_record_fed)(void *ctx, uint64_t record, uint64_t length);
    /* After each piece fed (bytes of it, record_ended 0) and after each
       record's end (bytes 0, record_ended 1), once the runner took them
       without failing. */
    int (*on_progress)(void *ctx, size_t bytes, int record_ended);
    /* Bytes asked of the reader at a time (0: 64 MiB): large enough that
       the calls cost nothing, small enough that a stop is seen soon. */
    size_t piece;
    /* Byte ranges: a record cut at the range end (sm_reader_record_cut) is
       fed on past the end with up to this many bytes more
       (sm_reader_read_extra), what the hits that start before the end may
       reach into; those bytes are not counted in the record's length and
       are not shown to on_sequence or on_progress. 0: none. */
    uint64_t past_cut;

    /* ---- Records one at a time. Any of the fields below (set) makes the
       scan read and feed records one at a time: no batches of whole
       records, and the reader keeps its own threads. */

    /* Paired reads: a second reader read in step with reader, record for
       record; its records are mate 2 (a pair's mates are fed as two
       records, mate 1's first). A fed mate's record ends when the next fed
       one begins or when the pair is read, so the pair's last fed record
       ends after on_record_read has seen both mates. */
    sm_reader *mate;
    /* With mate: which mates are fed (SM_SCAN_MATE_* bits; 0: both). A mate
       not fed is still read past, and seen by on_record_begin and
       on_record_read with number UINT64_MAX. */
    unsigned scan_mates;
    /* With mate: both readers are at their next record (pair counts from 0
       in each call); a name is NULL when its reader has no more records.
       If one has ended and this returns 0, the scan fails with
       SM_ERR_FORMAT. */
    int (*on_pair)(void *ctx, uint64_t pair, const char *name, const char *mate_name);
    /* A record began (after on_record), or, for a mate not fed, is
       reached. */
    int (*on_record_begin)(void *ctx, const sm_scan_record *record);
    /* The record's sequence is read (and fed, with on_record_fed called),
       before its record ends in the runner: where a caller that keeps whole
       records takes its bytes (sm_reader_record_raw). */
    int (*on_record_read)(void *ctx, const sm_scan_record *record);
    /* Instead of sm_runner_begin_record and sm_runner_end_record, for a
       caller that begins and ends records its own way (the parts of
       records split between processes): begin_record sets *number and
       returns 0 (non-zero stops); end_record returns what the runner's
       end returned. record->cut and ->length are final in end_record. */
    int (*begin_record)(void *ctx, sm_runner *runner, const sm_scan_record *record, uint64_t *number);
    int (*end_record)(void *ctx, sm_runner *runner, const sm_scan_record *record);
    /* 1: a stop asked by on_progress can be resumed (an iterator that hands
       out what is ready): the next sm_runner_scan_reader call on the same
       runner and reader, with resumable set, goes on where this one
       stopped, in the middle of the record if it stopped there (the reader
       keeps where). Other stops end the scan. Not with mate
       (SM_ERR_INVALID). */
    int resumable;
};

/* Zero-fills opts and sets its size. */
void sm_scan_reader_options_init(sm_scan_reader_options *opts);
#endif /* SEQMATCH_EXPERIMENTAL */

/* Reads every record of reader into runner (sm_runner_begin_record, the
   sequence written straight into the runner's batch, sm_runner_end_record),
   until the reader's end; the runner is not flushed. When the runner has
   more than one host thread, the reader has not read yet and records are
   not read one at a time (opts), the reader strips on the runner's threads
   (sm_runner_parallel_for) instead of its own and whole records may be
   stripped into the runner many at a time. opts may be NULL.
   This is the library's one loop from a reader to a runner: seqmatch
   search, filter and demux, the MPI and --shard shares and the Python
   package all read through it (opts says how).
   Returns SM_OK at the end of the input; SM_ERR_TERMINATED when a callback
   of opts or of the runner (sm_hit_fn) asked to stop; a runner's failure
   (SM_ERR_NOMEM, SM_ERR_DEVICE, ...) with err->code set and err->message
   empty; or a reader's failure (bad input, a failed read) with err->message
   naming the file and the place. */
int sm_runner_scan_reader(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, sm_error *err);

/* One record's sequence, for a caller that begins and ends the runner's
   records itself (sm_runner_scan_reader's options cover paired files,
   whole records' bytes and parts of records): feeds the rest of
   reader's current record (after sm_reader_next_record) into the runner's
   current record (after sm_runner_begin_record, whose number is record),
   calling opts' on_sequence and on_progress (record_ended 0) per piece;
   *length (when not NULL) is set to the bytes fed. The caller ends the
   record. Returns as sm_runner_scan_reader. */
int sm_runner_feed_reader(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, uint64_t record,
                          uint64_t *length, sm_error *err);

/* ---------------------------------- records with their bytes and their hits */

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental: for commands that keep or route whole records (seqmatch
   filter, demux). Records are read with their bytes as read, scanned on a
   runner, and handed back in input order once all their hits are in. */

/* One record, or a pair of mates read in step. */
typedef struct {
    unsigned mates;        /* 1, or 2 for a pair */
    const uint8_t *raw[2]; /* each mate's bytes as read (sm_reader_record_raw): valid during on_record */
    size_t raw_len[2];
    uint64_t hits;         /* hits in its scanned mates */
    uint64_t user[4];      /* the caller's, 0 when the record is read */
    unsigned summary_mate; /* during on_summary: the scanned mate (1, 2) or, with
                              end_window, the record's start (1) or end (2) */
} sm_read_record;

/* For an on_summary that routes a record to the closest of several groups
   of patterns (seqmatch demux's barcodes; group_of[pattern], e.g. from
   sm_db_name_groups): keeps in record->user, over its summaries, user[0] =
   the fewest errors + 1 (0: no hit yet), user[1] = the first pattern with
   them (in summary order), user[2] = 1 when a pattern of another group has
   as few (a tie; the order of the patterns does not matter). */
void sm_read_record_closest_group(sm_read_record *record, const sm_record_summary *summary,
                                  const uint32_t *group_of);

typedef struct {
    sm_input_format format;  /* SM_INPUT_AUTO (FASTA or FASTQ, every input the same) or SM_INPUT_LINES */
    unsigned reader_threads; /* as sm_reader_open_threads */
    unsigned scan_mate;      /* pairs: scan only mate 1 or 2 (0: both) */
    /* Single records, for a runner anchored at the start (SM_ANCHOR_START):
       also the reverse complement (IUPAC, upper case) of each record's last
       end_window sequence bytes is scanned, as a second runner record whose
       summary comes with summary_mate 2 (a barcode at the record's end, as
       the reverse complement of the patterns sought there). 0: off; pairs
       (sm_reads_run with path2) ignore it. */
    size_t end_window;
    /* NULL, or a report (seqmatch_output.h) that gets the records (pairs)
       read and their bases, both mates ("reads", "bases": "input"), and each
       pattern's scanned records with a hit ("patterns": "records"; a pair's
       mates apart). */
    struct sm_stats *stats;
    void *ctx;
    /* Each scanned record's summary, in record order (with pairs, each
       scanned mate's), before its on_record. */
    void (*on_summary)(void *ctx, sm_read_record *record, const sm_record_summary *summary);
    /* A record whose hits are all in, in input order. Non-zero stops the
       scan: sm_reads_run returns SM_ERR_TERMINATED with err->message empty. */
    int (*on_record)(void *ctx, sm_read_record *record);
    /* An input's readers are open (path: the first mate's). */
    void (*on_input)(void *ctx, const char *path);
    /* After each piece of sequence fed: the reader it came from, its bytes,
       the runner's hits so far. */
    void (*on_progress)(void *ctx, const sm_reader *reader, size_t bytes, uint64_t hits);
} sm_reads_options;

typedef struct sm_reads sm_reads;

/* A runner for db (runner_options, NULL for the defaults; its callbacks and
   ctx are replaced) that reports to opts (copied). */
int sm_reads_new(const sm_db *db, const sm_runner_options *runner_options, const sm_reads_options *opts,
                 sm_reads **reads, sm_error *err);
/* Reads path1 (and path2 in step with it: mates, "NAME/1" and "NAME/2" or
   equal names) to its end, calling opts' callbacks; "-" is standard input.
   Returns SM_OK, SM_ERR_TERMINATED when on_record stopped it, or an error
   with err->message saying what and where. */
int sm_reads_run(sm_reads *reads, const char *path1, const char *path2, sm_error *err);
/* The format of the first input read (SM_INPUT_AUTO before any). */
sm_input_format sm_reads_format(const sm_reads *reads);
void sm_reads_free(sm_reads *reads);
#endif /* SEQMATCH_EXPERIMENTAL */

/* ------------------------------------------- barcode pairs (dual indexes) */

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental: seqmatch demux by barcode pairs. A table names a sample by
   a pair of barcodes, one line each: sample<TAB>barcode1<TAB>barcode2
   (IUPAC codes, either case; blank lines and lines starting with '#'
   skipped; a first line whose barcodes are no IUPAC sequences is a header,
   skipped; spaces around fields and a CR before the line end dropped). A
   sample may have several lines; one pair naming two samples is an error.
   Each distinct barcode1 and barcode2 becomes one pattern: barcode1s
   first, then barcode2s (sm_barcode_pairs_compile). On a record (or pair)
   each end takes its barcode with the fewest errors; two of one end
   equally close make it ambiguous.
   Single reads in both orientations (sm_barcode_pairs_orientations): a
   read is the construct as given (barcode1 at its start, barcode2 at its
   end) or its reverse complement (barcode2's pattern at the start,
   barcode1's reverse complement at the end); each orientation takes its
   ends' closest barcodes, and the one whose two ends have the fewest
   errors in all is the read's; two orientations equally close make it
   ambiguous unless they name the same sample. */
typedef struct sm_barcode_pairs sm_barcode_pairs;

/* Why a record is not assigned (sm_barcode_pair_match.why). */
enum { SM_PAIR_ASSIGNED = 0, SM_PAIR_NO_HIT = 1, SM_PAIR_AMBIGUOUS = 2, SM_PAIR_UNLISTED = 3 };

typedef struct {
    size_t sample;      /* the sample's number (SIZE_MAX: not assigned) */
    int why;            /* SM_PAIR_* */
    size_t length[2];   /* each end's barcode length (0: none found) */
    uint32_t errors[2]; /* each end's errors */
    uint32_t pattern[2]; /* assigned: the patterns found in mate 1 and mate 2, or at a single read's start and end */
    int reversed;        /* assigned: the read is the construct's reverse complement (barcode2 at its start) */
} sm_barcode_pair_match;

/* Parses a table (text of len bytes; what names it in messages). Returns
   SM_OK with *pairs set, or with *pairs NULL when the first line holds two
   fields (a list of single barcodes: sm_pattern_list_read_alphabet reads
   it); or SM_ERR_FORMAT / SM_ERR_NOMEM with err->message naming the line. */
int sm_barcode_pairs_parse(const char *text, size_t len, const char *what, sm_barcode_pairs **pairs, sm_error *err);
/* As sm_barcode_pairs_parse, the file path (plain text, up to 256 MiB). */
int sm_barcode_pairs_read(const char *path, sm_barcode_pairs **pairs, sm_error *err);
size_t sm_barcode_pairs_samples(const sm_barcode_pairs *pairs);
const char *sm_barcode_pairs_sample(const sm_barcode_pairs *pairs, size_t sample);
/* Compiles the distinct barcodes (opts' match, k, alphabet DNA; forward
   strand); barcode2s as their reverse complements when rc_second (single
   reads scanned with end_window: a barcode2 as it reads at the record's end
   is its reverse complement at the start of the window scanned). */
int sm_barcode_pairs_compile(const sm_barcode_pairs *pairs, const sm_compile_options *opts, int rc_second, sm_db **db,
                             sm_error *err);
/* Single reads (scanned with end_window): both orientations when both is
   non-zero (default: the construct as given only). */
void sm_barcode_pairs_orientations(sm_barcode_pairs *pairs, int both);
/* An on_summary for sm_reads (the record's summary_mate says which end, 1
   or 2): keeps each end's closest barcode in record->user[0] and user[1]
   (and, in both orientations, the reverse orientation's in user[2] and
   user[3]). */
void sm_barcode_pairs_summary(const sm_barcode_pairs *pairs, sm_read_record *record, const sm_record_summary *summary);
/* The sample a record's summaries name. */
void sm_barcode_pairs_assign(const sm_barcode_pairs *pairs, const sm_read_record *record, sm_barcode_pair_match *match);
void sm_barcode_pairs_free(sm_barcode_pairs *pairs);

/* One record as read (FASTA or FASTQ bytes) with tag appended to its
   header line (after a space, before the line end) and without its first
   head and last tail symbols (as sm_trim_record; 0 and 0 keep them). tag
   may be NULL. *out (of *cap bytes) grows with realloc. */
int sm_record_rewrite(const uint8_t *raw, size_t len, const char *tag, uint64_t head, uint64_t tail, uint8_t **out,
                      size_t *out_len, size_t *cap);
/* The record's first (from_end 0) or last (1) n sequence symbols, as read
   (from_end | 2: their reverse complement, case kept), into buf (n + 1
   bytes, NUL-terminated; fewer when the record is shorter). Returns how
   many. */
size_t sm_record_seq_end(const uint8_t *raw, size_t len, int from_end, size_t n, char *buf);
/* The record's sequence length (its lines joined; FASTQ up to the '+' line). */
uint64_t sm_record_seq_length(const uint8_t *raw, size_t len);
/* The symbols a barcode (pattern of db, a demux database) covers at the
   record's start (at_end 0) or end (1), what demux --trim cuts and
   --barcode-tag shows: for exact and -m matching the pattern's length; for
   -k the span of its best anchored alignment there (with the first j
   symbols, or the last j): the fewest edits (the record's fewest, as the
   anchored runner reports them), then the most matched symbols (a last
   barcode base that differs is a substitution, not a deletion), then the
   longest (docs/demux.md). strand 0: the pattern as compiled, on the
   forward strand; 1: its reverse complement; -1: whichever of the two
   aligns better (the same order, then +). 0 when there is no alignment
   within k (or no memory). */
size_t sm_barcode_span(const sm_db *db, uint32_t pattern, int strand, const uint8_t *raw, size_t len, int at_end);
#endif /* SEQMATCH_EXPERIMENTAL */

/* ------------------------------------------------------- adapter trimming */

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental: seqmatch trim. Each read (or each mate of a pair) is cut at
   the hit of one adapter, chosen from the hits search reports for the
   adapters on the read's forward strand (exact or -m mismatches or -k
   edits; with the runner's min_overlap, adapters that run off the read's
   start or end, docs/trim.md):
   - a 3' adapter (SM_TRIM_BACK): the hit and everything after it go; a hit
     that runs off the read's start does not count (the adapter begins
     inside the read); anchored ('SEQ$'), only a whole hit at the read's end;
   - a 5' adapter (SM_TRIM_FRONT): the hit and everything before it go; a
     hit that runs off the read's end does not count; anchored ('^SEQ'),
     only a whole hit at the read's start;
   - a linked adapter (SM_TRIM_LINKED, 'FIRST...SECOND'): FIRST as a 5'
     adapter, then SECOND as a 3' adapter in what follows FIRST's hit (in
     the whole read when FIRST is not found); ^FIRST and SECOND$ anchor the
     parts. Given with -a (SM_TRIM_BACK), an anchored part is required and
     one that is not is cut when found; given with -g, both are required.
   A read shorter than an adapter that lies wholly inside one of its
   placements counts for either kind (it is cut to nothing).
   Which hit: of each adapter its leftmost (smallest start; then fewest
   errors, then shortest), a 5' hit running off the read's start only when
   there is no other; of the adapters, the one whose hit scores most
   (symbols inside minus twice the errors: matches minus errors, linked: of
   both parts), then fewest errors, then the one given first. One adapter
   is removed per read (cutadapt's default --times 1). */
typedef enum { SM_TRIM_BACK = 1, SM_TRIM_FRONT = 2, SM_TRIM_LINKED = 3 } sm_trim_kind;

typedef struct {
    sm_trim_kind kind;
    uint32_t pattern;          /* its pattern in the database; LINKED: FIRST */
    uint32_t second;           /* LINKED: SECOND's pattern */
    uint32_t length, second_length; /* symbols of the patterns */
    uint8_t anchored;          /* BACK: '$'; FRONT and FIRST: '^' */
    uint8_t second_anchored;   /* LINKED: SECOND ends in '$' */
    uint8_t required, second_required; /* LINKED: the part must be found */
    uint8_t mate;              /* pairs: only for mate 1 or 2 (cutadapt's -a / -A); 0: every read */
} sm_trim_adapter;

/* The adapters and the patterns to compile for them (pattern i of
   patterns.items is database pattern i). Start from a zero-filled set. */
typedef struct {
    sm_trim_adapter *adapters;
    size_t count;
    sm_pattern_list patterns;
} sm_trim_set;

/* Adds an adapter as cutadapt (5.2) writes it: kind SM_TRIM_BACK for -a
   (SEQ, SEQ$ or [^]FIRST...SECOND[$]), SM_TRIM_FRONT for -g (SEQ, ^SEQ or
   [^]FIRST...SECOND[$]). Returns SM_OK, or SM_ERR_INVALID / SM_ERR_NOMEM with a message
   naming the adapter. */
int sm_trim_set_add(sm_trim_set *set, const char *text, sm_trim_kind kind, sm_error *err);
void sm_trim_set_free(sm_trim_set *set);

/* What is kept of a read: [start, end); adapter -1 when none matched. */
typedef struct {
    uint64_t start, end;
    int64_t adapter;
    uint32_t errors;
} sm_trim_cut;

/* The cut of one read of length bytes from its hits (any order; '-' hits
   are ignored, and hits of other records must be left out by the caller),
   found with min_overlap as the runner's (0: every hit is whole); mate 1
   or 2 (a single read is mate 1): the adapters for it. */
void sm_trim_decide(const sm_trim_set *set, unsigned mate, uint32_t min_overlap, const sm_hit *hits, size_t count,
                    uint64_t length, sm_trim_cut *cut);
/* As sm_trim_decide, with partial[i] 1 where hits[i] came as a partial hit
   (the runner's on_partial_hit) and 0 where it did not: with k edits a
   whole hit may be shorter than its pattern, so the hits' lengths cannot
   tell (sm_trimmer decides so). partial NULL: as sm_trim_decide. */
void sm_trim_decide_partial(const sm_trim_set *set, unsigned mate, uint32_t min_overlap, const sm_hit *hits,
                            const uint8_t *partial, size_t count, uint64_t length, sm_trim_cut *cut);

/* One read or pair, trimmed: each mate's record rewritten (header and '+'
   line as read, sequence and quality cut in step on one line each). */
typedef struct {
    unsigned mates;
    const uint8_t *bytes[2];
    size_t len[2];
    uint64_t length[2];        /* each mate's length before trimming */
    sm_trim_cut cut[2];
    int kept;                  /* 0: shorter than minimum_length (a pair: either mate), or discarded */
} sm_trimmed_record;

/* Which reads are kept besides minimum_length (sm_trim_options.discard),
   as cutadapt's --discard-untrimmed and --discard-trimmed: a read (pair)
   that no adapter cut, or that one cut. With pairs, a pair is dropped when
   any of its mates that has adapters (sm_trim_adapter.mate) is untrimmed,
   or trimmed. */
enum { SM_TRIM_KEEP_ALL = 0, SM_TRIM_DISCARD_UNTRIMMED = 1, SM_TRIM_DISCARD_TRIMMED = 2 };

typedef struct {
    const sm_trim_set *set;
    uint64_t minimum_length;   /* reads shorter after trimming are not kept */
    int discard;               /* SM_TRIM_KEEP_ALL or SM_TRIM_DISCARD_* */
    unsigned reader_threads;   /* as sm_reader_open_threads */
    void *ctx;
    /* Every read (pair) in input order, kept or not. Non-zero stops. */
    int (*on_record)(void *ctx, const sm_trimmed_record *record);
    void (*on_input)(void *ctx, const char *path);
    void (*on_progress)(void *ctx, const sm_reader *reader, size_t bytes, uint64_t trimmed);
    /* Where the kept reads go (mate 1 or the single reads, mate 2; NULL:
       nowhere), written by the trimmer in order, runs of them from its
       buffer at once (seqmatch_output.h's sm_record_file); a failed write
       stops the run (SM_ERR_TERMINATED, the file says why). */
    struct sm_record_file *out[2];
} sm_trim_options;

typedef struct {
    uint64_t records;          /* reads, or pairs */
    uint64_t reads;            /* mates read */
    uint64_t trimmed;          /* mates an adapter cut */
    uint64_t kept;             /* records (pairs) kept */
    uint64_t bases_in, bases_kept;
} sm_trim_stats;

typedef struct sm_trimmer sm_trimmer;

/* One record as read (FASTA or FASTQ bytes, sm_read_record's raw) written
   as sm_trimmer writes it, without its first head and last tail symbols
   (the qualities in step; a record shorter than both loses all): e.g. a
   barcode at the read's start. *out (of *cap bytes, grown with realloc;
   NULL and 0 at first) receives *out_len bytes. Returns SM_OK, SM_ERR_FORMAT
   for bytes that are no record, or SM_ERR_NOMEM. */
int sm_trim_record(const uint8_t *raw, size_t len, uint64_t head, uint64_t tail, uint8_t **out, size_t *out_len,
                   size_t *cap);

/* A trimmer for db (compiled from set's patterns, forward strand) on a
   runner with runner_options (NULL: defaults; min_overlap, threads,
   chunk_size and backend are used; callbacks replaced; anchors, hit limits
   and counting refused with SM_ERR_INVALID). */
int sm_trimmer_new(const sm_db *db, const sm_runner_options *runner_options, const sm_trim_options *opts,
                   sm_trimmer **trimmer, sm_error *err);
/* Reads path1 (FASTA or FASTQ; with path2, mates in step as sm_reads_run)
   to its end. Returns SM_OK, SM_ERR_TERMINATED when on_record stopped it,
   or an error with err->message saying what and where. */
int sm_trimmer_run(sm_trimmer *trimmer, const char *path1, const char *path2, sm_error *err);
void sm_trimmer_stats(const sm_trimmer *trimmer, sm_trim_stats *stats);
void sm_trimmer_free(sm_trimmer *trimmer);
#endif /* SEQMATCH_EXPERIMENTAL */

/* --------------------------------------------------- in-silico PCR products */

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental: seqmatch amplicon (docs/amplicon.md). A primer pair is a
   forward and a reverse primer, each written 5' to 3' (IUPAC codes
   allowed). Its sites in a record are search's hits (exact, -m mismatches
   or -k edits, each primer on its own) of both primers on both strands:
   - a product on the + strand: a forward site F (forward primer, strand +)
     and a reverse site R (reverse primer, strand -: its reverse complement
     on the forward text) with R.start >= F.start; it covers
     [F.start, R.end);
   - a product on the - strand: the same on the reverse complement of the
     record: a forward site F (forward primer, strand -) and a reverse site
     R (reverse primer, strand +) with F.end >= R.end; it covers
     [R.start, F.end) in forward coordinates, its sequence read on the -
     strand;
   - its size is end - start; only products with min_size <= size <=
     max_size are reported.
   Every such combination of a forward and a reverse site is a product (as
   PCR makes every one of them). With longest (seqkit amplicon's rule), each
   record, pair and strand has at most one candidate: the first forward
   site and the last reverse site on that strand (read 5' to 3' on it), if
   in that order; the size window then keeps it or not.
   Products come in (record, start, end, pair, strand) order. */
typedef struct {
    char *name;
    char *forward, *reverse; /* 5' to 3', as given */
} sm_amplicon_pair;

/* Start from a zero-filled set. Pair i's forward primer is pattern 2i of
   patterns (named NAME/forward) and its reverse primer pattern 2i + 1
   (NAME/reverse): compile them with both strands. */
typedef struct {
    sm_amplicon_pair *pairs;
    size_t count, cap;
    sm_pattern_list patterns;
} sm_amplicon_set;

/* Adds a pair (strings copied): SM_OK, or SM_ERR_INVALID with a message for
   an empty name or primer, or a primer symbol that is no IUPAC code. */
int sm_amplicon_set_add(sm_amplicon_set *set, const char *name, const char *forward, const char *reverse,
                        sm_error *err);
/* Reads pairs from a table: one pair per line, name, forward and reverse
   primer separated by tabs (spaces around them dropped); blank lines and
   lines starting with '#' skipped; anything else an error naming the file
   and line. */
int sm_amplicon_set_read(sm_amplicon_set *set, const char *path, sm_error *err);
void sm_amplicon_set_free(sm_amplicon_set *set);

typedef struct {
    uint64_t start, end;   /* forward coordinates, [start, end) */
    uint32_t pair;
    char strand;           /* '+' or '-' */
    uint32_t forward_errors, reverse_errors;
} sm_amplicon;

typedef struct {
    uint64_t min_size, max_size;
    int longest;           /* seqkit's rule: at most one per record, pair and strand */
} sm_amplicon_rule;

/* The products of one record from its hits of a set's patterns (pairs
   pairs; every hit of the record, in the runner's order), appended to
   *out (grown as needed; *count, *cap as for a vector). SM_OK or
   SM_ERR_NOMEM. */
int sm_amplicon_products(const sm_amplicon_rule *rule, size_t pairs, const sm_hit *hits, size_t n,
                         sm_amplicon **out, size_t *count, size_t *cap);

typedef enum { SM_AMPLICON_TSV = 0, SM_AMPLICON_BED = 1, SM_AMPLICON_FASTA = 2 } sm_amplicon_format;
/* "tsv", "bed" or "fasta": SM_OK, or SM_ERR_INVALID. */
int sm_amplicon_format_from_name(const char *name, sm_amplicon_format *format);

#ifndef SM_WRITER_DECLARED /* declared by seqmatch_output.h and seqmatch_reader.h: once, for C99 */
#define SM_WRITER_DECLARED
typedef struct sm_writer sm_writer;
#endif
#ifndef SM_PROGRESS_DECLARED /* declared by seqmatch_output.h and seqmatch_reader.h: once, for C99 */
#define SM_PROGRESS_DECLARED
typedef struct sm_progress sm_progress;
#endif

/* What sm_amplicon_finder writes and whom it tells:
   - TSV: a header line (with header; written with the first product, or
     once the first file is read whole, never before an input is refused),
     then per product: [file] record,
     start, end, strand, pair, size, forward errors, reverse errors and,
     with sequence, the product's sequence (read on its strand);
   - BED: record, start, end, pair (FILE:PAIR with show_file), a score of
     1000 x (primer symbols - errors) / primer symbols, strand;
   - FASTA: '>PAIR::[FILE:]RECORD:START-END(STRAND)', its errors, then the
     sequence on one line. */
typedef struct {
    const sm_amplicon_set *set;
    sm_amplicon_rule rule;
    sm_amplicon_format format;
    int header, sequence, show_file;
    sm_writer *out;
    unsigned reader_threads;   /* as sm_reader_open_threads */
    sm_progress *progress;     /* told of each file and piece read, products as its count (NULL: none) */
    /* NULL, or a report (seqmatch_output.h) that gets, at the end of each
       file read: "records" "input" and "with_product", "bases" "input",
       "products" "total", "plus", "minus", and per pair (list "pairs", in
       the set's order) "products", "plus", "minus" (docs/stats-json.md). */
    struct sm_stats *stats;
} sm_amplicon_options;

typedef struct {
    uint64_t records, products;
} sm_amplicon_stats;

typedef struct sm_amplicon_finder sm_amplicon_finder;

/* A runner for db (compiled from set->patterns, both strands) with
   runner_options (NULL: the defaults; callbacks replaced; anchors, limits,
   counting, partial matches and circular records refused with
   SM_ERR_INVALID). */
int sm_amplicon_finder_new(const sm_db *db, const sm_runner_options *runner_options,
                           const sm_amplicon_options *opts, sm_amplicon_finder **finder, sm_error *err);
/* Reads path (FASTA or FASTQ, compressed as the reader allows; "-" standard
   input) to its end and writes its products. SM_OK, or an error with
   err->message saying what and where. */
int sm_amplicon_finder_run(sm_amplicon_finder *finder, const char *path, sm_error *err);
void sm_amplicon_finder_stats(const sm_amplicon_finder *finder, sm_amplicon_stats *stats);
void sm_amplicon_finder_free(sm_amplicon_finder *finder);
#endif /* SEQMATCH_EXPERIMENTAL */

/* ---------------------------------------------------- a DFA over a reader */

#ifdef SEQMATCH_EXPERIMENTAL
/* Experimental, as the DFA header they take their types from. */
#include "seqmatch_dfa.h"

/* Where sm_dfa_load takes a DFA from: the first of dfa_path, regex,
   patterns_path that is set. */
typedef struct {
    const char *dfa_path;      /* a DFA file (sm_dfa_read_file) */
    const char *regex;         /* a regular expression (sm_dfa_from_regex; max_states, 0: its default) */
    const char *patterns_path; /* a pattern file (sm_pattern_list_read_alphabet), compiled with strands and
                                  ignore_case (text only), made a DFA by match (sm_dfa_from_db) */
    sm_alphabet alphabet;      /* of the regex and the pattern file */
    sm_strands strands;
    int ignore_case;
    sm_dfa_match match;
    uint32_t max_states;
    int minimize;              /* 1: minimal DFA, 0: as built, -1: minimal for a regex only */
} sm_dfa_source;

/* The DFA src names, as seqmatch dfa makes it. A pattern file's errors
   name the file (and the line of a pattern the compiler refused). Returns
   SM_OK, or an error with err filled and *dfa NULL. */
int sm_dfa_load(const sm_dfa_source *src, sm_dfa **dfa, sm_error *err);

/* How sm_dfa_scan_reader runs a reader's input through a DFA. */
typedef struct {
    const sm_dfa_parallel_options *parallel;  /* NULL: the defaults */
    /* 1: every FASTA/FASTQ record is one input (the state starts over at
       each); 0: the whole reader is one input (its records' sequences
       joined, or a text reader's bytes) */
    int per_record;
    /* 1: the reader reads FASTA/FASTQ (offsets in messages are within the
       record, which they name); 0: raw bytes */
    int dna;
    const char *name;  /* the input in messages (its path, "standard input") */
    /* The state reached: once per record with per_record (record: its
       name), else once at the end (record NULL). Returns 0, or non-zero to
       stop (sm_dfa_scan_reader then returns SM_ERR_TERMINATED). */
    int (*on_result)(void *ctx, const char *record, uint32_t state);
    void *ctx;
} sm_dfa_reader_options;

/* Runs the reader's input through matcher's DFA (sm_dfa_run_parallel, in
   blocks of up to 64 MiB, the next read while the threads run one; a mapped
   file's large pieces where they lie), as
   seqmatch dfa does. A byte outside the DFA's alphabet (matcher without
   skip_unknown) is an error (SM_ERR_PATTERN) naming the input, the record
   and the byte's offset. Returns SM_OK, SM_ERR_TERMINATED, or an error
   with err filled. */
int sm_dfa_scan_reader(const sm_dfa *dfa, const sm_dfa_matcher *matcher, sm_reader *reader,
                       const sm_dfa_reader_options *opts, sm_error *err);
/* sm_dfa_scan_reader over the files paths in turn (FASTA/FASTQ with
   opts->dna, else raw bytes; "-" standard input, "standard input" in
   messages; opts->name is not used), each read on reader_threads threads
   (as sm_reader_open_threads). The results come through opts->on_result, whose record is
   the record's name with per_record, else the file's name with
   label_inputs, else NULL. Stops at the first input that cannot be opened
   or scanned (its error in err), after the results of those before it. */
int sm_dfa_scan_files(const sm_dfa *dfa, const sm_dfa_matcher *matcher, char *const *paths, size_t count,
                      unsigned reader_threads, int label_inputs, const sm_dfa_reader_options *opts, sm_error *err);
/* The same on the GPU (sm_dfa_gpu_*), over the files paths (FASTA/FASTQ
   with opts->dna, else raw bytes; "-" standard input, "standard input" in
   messages; opts->name is not used), each read on reader_threads threads
   while the GPU runs the ones before. The results come in input order
   through opts->on_result, whose record is the record's name with
   per_record, else the file's name with label_inputs, else NULL. An input
   that cannot be read fails after the results of those before it. */
int sm_dfa_gpu_scan_files(const sm_dfa *dfa, const sm_dfa_matcher *matcher, const sm_dfa_gpu_options *gpu_options,
                          char *const *paths, size_t count, unsigned reader_threads, int label_inputs,
                          const sm_dfa_reader_options *opts, sm_error *err);
#endif /* SEQMATCH_EXPERIMENTAL */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_READER_H */
