/*
 * seqmatch_output.h — hits written as text: TSV, BED, JSON lines, counts,
 * SAM (with CIGAR), one line per record, and per-guide site profiles, the
 * formats of `seqmatch search --format`, through a buffered writer.
 *
 * Part of libseqmatch (shared and static). A sketch:
 *
 *     sm_writer *w = sm_writer_new(stdout);
 *     sm_formatter *f = sm_formatter_new(SM_FORMAT_TSV, 1, 0, db, w, &err);
 *     sm_formatter_begin(f);
 *     // runner callbacks: on_record -> sm_formatter_add_record,
 *     //                   on_hit -> sm_formatter_hit,
 *     //                   on_record_done -> sm_formatter_record_done
 *     sm_formatter_end(f, &err);     // then sm_formatter_free
 *     sm_writer_flush(w);            // then sm_writer_free
 *
 * Records are the runner's: numbered 0, 1, 2... in the order they are read,
 * their hits delivered in record order (sm_runner_options' callbacks give
 * exactly that). Names are formatted once (escaped for TSV and BED, quoted
 * for JSON), so a hit costs a few copies into the writer's buffer.
 *
 * TSV columns: [file] record pattern strand start end errors matched
 * [cigar] [bulge bulge_size guide_aligned site_aligned]; BED: record start
 * end [FILE:]pattern score strand, the score 1000 x (length - errors) /
 * length; counts: [file] pattern count, then [file] "total" count. The
 * tab, line breaks and backslash in TSV/BED fields are written \t \n \r \\;
 * JSON strings escape control characters and bytes that are not UTF-8 as
 * \u00XX.
 */
#ifndef SEQMATCH_OUTPUT_H
#define SEQMATCH_OUTPUT_H

/* New in this version, so experimental as a whole (docs/api.md): its calls
   may change in a minor version. */
#ifndef SEQMATCH_EXPERIMENTAL
#error "seqmatch_output.h is experimental as a whole: define SEQMATCH_EXPERIMENTAL before including it (seqmatch.h, \"Stability\")"
#endif

#include <stdint.h>
#include <stdio.h>

#include "seqmatch.h"
#include "seqmatch_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* The formats; the values are kept in shard files (sm_dist_settings.format). */
typedef enum {
    SM_FORMAT_TSV = 0,
    SM_FORMAT_BED = 1,
    SM_FORMAT_JSONL = 2,
    SM_FORMAT_COUNT = 3,         /* sm_formatter_counts only */
    SM_FORMAT_SAM = 4,           /* after sm_formatter_start_sam */
    SM_FORMAT_RECORDS = 5,       /* a line per record: [file] record, hits, the patterns hit */
    SM_FORMAT_PROFILE = 6,       /* per pattern its sites by class (bulge kind and size x errors), TSV */
    SM_FORMAT_PROFILE_JSONL = 7, /* the same as JSON lines */
    SM_FORMAT_BAM = 8            /* SAM's alignments as BAM (BGZF), through htslib loaded at run time */
} sm_output_format;

/* ----------------------------------------------------------------- writer */

/* A 1 MiB buffer in front of a FILE, written out with one fwrite when full.
   After the first failed write every later write is dropped and
   sm_writer_error keeps its errno. */
#ifndef SM_WRITER_DECLARED /* declared by seqmatch_output.h and seqmatch_reader.h: once, for C99 */
#define SM_WRITER_DECLARED
typedef struct sm_writer sm_writer;
#endif

/* Writes to file (not closed by sm_writer_free), which is made unbuffered:
   this buffer is the only one. NULL when out of memory. */
sm_writer *sm_writer_new(FILE *file);
/* Frees the buffer; what was not flushed is lost. */
void sm_writer_free(sm_writer *w);
/* Returns 0, or the errno of the first failed write. */
int sm_writer_write(sm_writer *w, const void *data, size_t len);
/* Writes out the buffer (fflush of the FILE is the caller's). Returns 0 or
   the errno of the first failed write. */
int sm_writer_flush(sm_writer *w);
int sm_writer_error(const sm_writer *w);
/* fn(ctx) is called before bytes reach the file (e.g. to clear a progress
   line from a terminal). */
void sm_writer_set_before_write(sm_writer *w, void (*fn)(void *ctx), void *ctx);
/* From now on what the writer writes out (a full buffer, or a large piece)
   goes to sink(ctx, data, len) in place of its FILE, e.g. to compress it
   (seqmatch_gzip.h) on its way there; sink returns 0 or an errno, which then
   stays the writer's error. */
void sm_writer_set_sink(sm_writer *w, int (*sink)(void *ctx, const void *data, size_t len), void *ctx);

/* ------------------------------------------------------------- formatter */

typedef struct sm_formatter sm_formatter;

/* A formatter of db's hits in format, with a header line when header (TSV:
   with the first hit, or at the end when none came; records and profile:
   at once), naming each hit's file when show_file (a first column in TSV,
   counts and records, a "file" key in JSON, FILE:PATTERN as the BED name).
   NULL with err filled when out of memory, or for a profile with too many
   classes. */
sm_formatter *sm_formatter_new(sm_output_format format, int header, int show_file, const sm_db *db, sm_writer *w,
                               sm_error *err);
/* The same without a database, from the pattern names (TSV, BED, JSON,
   counts, records); dna: hit texts never need escaping. */
sm_formatter *sm_formatter_new_named(sm_output_format format, int header, int show_file, const char *const *names,
                                     uint32_t count, int dna, sm_writer *w, sm_error *err);
void sm_formatter_free(sm_formatter *f);

/* TSV and JSON: every hit gets a cigar column (sm_hit_cigar; "*" when none). */
void sm_formatter_set_cigar(sm_formatter *f);
/* TSV and JSON: the columns of a guide site, bulge, bulge_size and the two
   aligned rows (sm_hit_site; '.' when the hit has none). */
void sm_formatter_set_site(sm_formatter *f);
/* --columns: the TSV columns by name, comma-separated, in the order given
   (file record pattern strand start end length errors matched cigar; cigar
   after sm_formatter_set_cigar); the header names them. SM_ERR_INVALID with
   err saying why (an unknown name: the valid ones listed; not TSV). */
int sm_formatter_set_columns(sm_formatter *f, const char *list, sm_error *err);
/* SAM (patterns as reads, the records with hits as references): the
   alignments go to an unlinked temporary file in $TMPDIR (/tmp) until
   sm_formatter_end writes the header (its @PG line's CL: the command_line
   given, which is copied) and them. For SM_FORMAT_BAM the same header and
   alignments are written as BAM, through htslib (libhts.so.3) loaded at
   that end: an error there when it is not installed. Returns SM_OK or an
   error (err filled). */
int sm_formatter_start_sam(sm_formatter *f, const char *command_line, sm_error *err);

/* Writes the header line of the formats that have one at the start. */
void sm_formatter_begin(sm_formatter *f);
/* The file whose records come next (show_file). Returns 0, or -1 when out
   of memory. */
int sm_formatter_set_file(sm_formatter *f, const char *name);
/* A record's name (with the file set last); records come numbered in order.
   Returns 0, or -1 when out of memory or out of order. */
int sm_formatter_add_record(sm_formatter *f, uint64_t record, const char *name);
/* A record's length, once read (SAM's @SQ lines). */
void sm_formatter_record_length(sm_formatter *f, uint64_t record, uint64_t length);
/* A record whose hits have all come (its name is forgotten). */
void sm_formatter_record_done(sm_formatter *f, uint64_t record);
/* One hit. Returns 0, or the errno of the writer's first failed write (the
   caller may stop scanning). */
int sm_formatter_hit(sm_formatter *f, const sm_hit *hit);
/* SM_FORMAT_RECORDS: a record's hits in summary, as its hits one by one
   would give (sm_runner_options.on_record_summary). Returns as
   sm_formatter_hit. */
int sm_formatter_record_summary(sm_formatter *f, const sm_record_summary *summary);
/* The counts per pattern and the total (SM_FORMAT_COUNT): of the file set
   last when files are shown. */
void sm_formatter_counts(sm_formatter *f, const uint64_t *counts, uint64_t total);
/* The search succeeded: writes what waits for its end (the TSV header when
   no hit came, a profile, SAM's header and alignments). Returns SM_OK or
   an error (err filled). */
int sm_formatter_end(sm_formatter *f, sm_error *err);

/* ------------------------------------------- records written as read */

/* Records' bytes as they were read (seqmatch filter and demux), handed to
   write(ctx, data, len) (0, or non-zero when the write failed): a line end
   is put between a record that ends without one and the next; with block
   > 0 the bytes are gathered in blocks of that size first, and with a
   packer each block becomes one gzip member (a series every gzip reader
   reads as one file). Outputs may share one packer (the deflater and the
   buffer of a member of up to its block size), one at a time. */
typedef struct sm_record_packer sm_record_packer;
sm_record_packer *sm_record_packer_new(size_t block);
void sm_record_packer_free(sm_record_packer *packer);

typedef struct sm_record_out sm_record_out;
/* packer NULL: plain (block 0: every record written at once). NULL when
   out of memory. */
sm_record_out *sm_record_out_new(sm_record_packer *packer, size_t block,
                                 int (*write)(void *ctx, const void *data, size_t len), void *ctx);
/* One record. SM_OK, SM_ERR_IO (a write failed) or SM_ERR_NOMEM. */
int sm_record_out_put(sm_record_out *out, const void *record, size_t len);
/* Records already compressed by the caller (gzip members holding
   whole records, each ending its line), written as they are after what is
   gathered (flushed as its own member): a gzip out only. */
int sm_record_out_put_packed(sm_record_out *out, const void *members, size_t len, uint64_t records);
/* What is gathered (a gzip output without a record gets an empty member). */
int sm_record_out_end(sm_record_out *out);
uint64_t sm_record_out_records(const sm_record_out *out);
void sm_record_out_free(sm_record_out *out);

/* Records written as read (sm_record_out) to a file by name or standard
   output (sm_writer_open: the file takes its name only when kept), as
   gzip members of 1 MiB of records when the name ends in .gz (seqmatch
   filter's outputs). */
typedef struct sm_record_file sm_record_file;
/* NULL with err filled. */
sm_record_file *sm_record_file_open(const char *path, sm_error *err);
/* One record (or several, one after the other). Returns 0, or non-zero
   once a write or the compression has failed (later records are lost:
   scanning on is pointless). */
int sm_record_file_put(sm_record_file *f, const void *record, size_t len);
/* Whether f compresses (sm_record_file_put_packed then takes gzip members
   of its records), and those members, as sm_record_out_put_packed. */
int sm_record_file_gzip(const sm_record_file *f);
int sm_record_file_put_packed(sm_record_file *f, const void *members, size_t len, uint64_t records);
/* Ends, closes and frees f (NULL: nothing); the file keeps its name only
   with keep and nothing failed. Returns SM_OK, SM_ERR_NOMEM ("NAME: out of
   memory while compressing") or SM_ERR_IO ("NAME: REASON", NAME the path
   or "standard output"); *write_errno (may be NULL) gets the errno of a
   failed write, close or rename (EPIPE: the reader went away), else 0. */
int sm_record_file_close(sm_record_file *f, int keep, int *write_errno, sm_error *err);

/* ------------------------------------------------------- output files */

/* An output file that is never half written under its name: a regular file
   (or a name not there yet) is written to a temporary file beside it
   (NAME.tmp-XXXXXX, an existing file's permissions kept, a symbolic link's
   target replaced), renamed over the name by sm_outfile_close with keep and
   removed otherwise, and also when SIGINT, SIGTERM or SIGHUP ends the
   process (a handler that only unlinks is installed while such a file or
   an sm_outdir is open; a signal ignored on entry stays ignored). A device
   or FIFO, or a file in a folder that may not be written, is written in
   place. At most 8 open at once. */
typedef struct sm_outfile sm_outfile;

/* SM_ERR_INVALID ("output OUT is also an input", with " (IN)" when the
   names differ) when output is the same regular file as one of the inputs
   (NULL and "-" skipped, links and other names of it found); else SM_OK. */
int sm_output_check(const char *output, const char *const *inputs, size_t count, sm_error *err);
/* The same, and SM_ERR_INVALID ("OUT: Is a directory", "OUT: not a regular
   file") for an existing output that is no regular file (seqmatch demux's
   files, which are renamed into place). */
int sm_output_check_file(const char *output, const char *const *inputs, size_t count, sm_error *err);

/* Values as seqmatch's command line takes them; each returns 0, or -1 when
   text is not one (*value untouched). A count: decimal digits only, at most
   max. A size: a count with an optional K, M, G or T (powers of 1024),
   optionally followed by iB or B ("64K", "64KiB", "1g", "100b"). A share:
   "I/N" with I < N <= 2^20. */
int sm_parse_count(const char *text, unsigned long long max, unsigned long long *value);
int sm_parse_size(const char *text, uint64_t *value);
int sm_parse_share(const char *text, unsigned *index, unsigned *count);
/* argv[0 .. argc) as one line a POSIX shell would split back into them
   (program instead of argv[0]; an argument with a blank or a shell character
   in single quotes; tabs and line ends as spaces), as SAM's @PG CL holds
   it. malloc'd (NULL: out of memory). */
char *sm_command_line(int argc, char *const *argv, const char *program);
/* name with its first '#' replaced by the digit mate ("r_#.fq", 2 ->
   "r_2.fq"; a name without '#' as it is). malloc'd (NULL: out of memory). */
char *sm_mate_path(const char *name, unsigned mate);
/* Why name cannot be a plain file name in a folder ("is empty", "is not a
   file name" for . and .., "holds a '/'", "holds a control byte"), or NULL
   when it can. */
const char *sm_file_name_problem(const char *name);
/* Writes text to out on one line: a line break, carriage return or tab as
   \n, \r, \t, other control bytes (a terminal escape sequence) as \xNN. */
void sm_put_escaped(const char *text, FILE *out);
/* Opens path for writing. NULL with err filled ("PATH: REASON"). */
sm_outfile *sm_outfile_open(const char *path, sm_error *err);
FILE *sm_outfile_file(const sm_outfile *o);
/* Closes and frees o (NULL: nothing): with keep the file takes its name,
   without it what was written is removed (a file written in place stays).
   Returns 0, or the errno of a failed write, close or rename. */
int sm_outfile_close(sm_outfile *o, int keep);

/* Many output files in one folder (seqmatch demux): files 0, 1, ... written
   in a temporary folder made inside it, through at most max_open file
   descriptors at once (the least recently used closed when another is
   needed), and moved to their names one by one by sm_outdir_commit;
   sm_outdir_close (or SIGINT, SIGTERM, SIGHUP) removes what is left and
   the folder. One at a time. */
typedef struct sm_outdir sm_outdir;
/* The folder dir (made when missing) and in it the temporary one for files
   0 .. files - 1; max_open 0: from the descriptor limit (RLIMIT_NOFILE less
   32, at most 1024, at least 8). NULL with err filled ("DIR: REASON"). */
sm_outdir *sm_outdir_open(const char *dir, size_t files, unsigned max_open, sm_error *err);
/* Appends len bytes to file i, which the first call creates (also with len
   0; a later len 0 does nothing). Returns 0 or an errno, *failed (may be
   NULL) then the file that failed (files: the folder; a descriptor closed
   to make room counts, its failure said after i's own). */
int sm_outdir_append(sm_outdir *t, size_t i, const void *data, size_t len, size_t *failed);
/* Closes every open descriptor: 0, or the first failure's errno (*failed). */
int sm_outdir_end(sm_outdir *t, size_t *failed);
/* File i's temporary name (malloc'd), or NULL when out of memory. */
char *sm_outdir_name(const sm_outdir *t, size_t i);
/* Moves file i over final (an existing file's permissions kept). Returns 0
   or an errno. */
int sm_outdir_commit(sm_outdir *t, size_t i, const char *final);
/* Closes what is open, removes what is left and the temporary folder, and
   dir too when sm_outdir_open made it and nothing was committed (a failed
   run leaves no folder behind); frees t. */
void sm_outdir_close(sm_outdir *t);

/* A run's report, one JSON object (--stats-json; docs/stats-json.md): the
   schema "seqmatch-stats", its version (fields added keep it; a field
   renamed, removed or changed in meaning raises it), the command, its
   command line and inputs, then groups of counters (sm_stats_add: "reads",
   "bases", "hits", ...) and lists of named items (sm_stats_item:
   "patterns", "samples"), in the order first given, and the same numbers
   as MultiQC custom content (id, section_name, plot_type, data). Out of
   memory is said by sm_stats_write. */
#define SM_STATS_VERSION 1
typedef struct sm_stats sm_stats;
sm_stats *sm_stats_new(const char *command, const char *command_line);
void sm_stats_input(sm_stats *stats, const char *path);
/* group.key += value (stats NULL: nothing) */
void sm_stats_add(sm_stats *stats, const char *group, const char *key, uint64_t value);
/* list's item name: key += value, or key = text */
void sm_stats_item(sm_stats *stats, const char *list, const char *name, const char *key, uint64_t value);
void sm_stats_item_text(sm_stats *stats, const char *list, const char *name, const char *key, const char *text);
/* Written beside path and renamed over it: SM_OK, or err ("PATH: REASON"). */
int sm_stats_write(const sm_stats *stats, const char *path, sm_error *err);
void sm_stats_free(sm_stats *stats);

/* The files of seqmatch demux: one per name (names[i], e.g. each barcode or
   sample and "unassigned") and mate, DIR/NAME.fastq, or NAME_R1 / NAME_R2
   with two mates (.fasta for FASTA records, .gz with gzip), written as
   records through a buffer each (gzip: a member per buffer) into an
   sm_outdir, moved to their names by sm_demux_files_commit. */
typedef struct sm_demux_files sm_demux_files;
typedef struct {
    unsigned mates;             /* 1, or 2 for pairs */
    int gzip;
    size_t buffer_size;         /* bytes per file (0: 256 MiB shared by all, 64 KiB to 1 MiB each) */
    const char *const *inputs;  /* no output may be one of them (sm_output_check_file) */
    size_t ninputs;
} sm_demux_files_options;
/* Checks every name the files may take (both extensions) and opens the
   folder; NULL with err filled ("PATH: REASON"). */
sm_demux_files *sm_demux_files_open(const char *dir, const char *const *names, size_t n, const sm_demux_files_options *opts,
                                    sm_error *err);
/* The records' format, which names the files (FASTQ until told). */
void sm_demux_files_format(sm_demux_files *files, int fastq);
/* One record to file (name, mate 0 or 1): 0, or -1 after a failure that
   sm_demux_files_end reports. */
int sm_demux_files_put(sm_demux_files *files, size_t name, unsigned mate, const void *record, size_t len);
/* After the run (ran 0: it failed; nothing more is written): every buffer
   out, every file made (empty ones too), the descriptors closed. SM_OK, or
   the first failure with err ("PATH: REASON"). */
int sm_demux_files_end(sm_demux_files *files, int ran, sm_error *err);
/* File (name, mate)'s final path after sm_demux_files_end ("" before). */
const char *sm_demux_files_path(const sm_demux_files *files, size_t name, unsigned mate);
/* Moves every file to its name; the temporary folder goes. */
int sm_demux_files_commit(sm_demux_files *files, sm_error *err);
/* Removes what was not committed. */
void sm_demux_files_free(sm_demux_files *files);

/* A writer over a file by name (an sm_outfile: the name gets the file only
   from sm_writer_close with keep) or over standard output (path NULL or
   "-"). NULL with err filled ("PATH: REASON", or out of memory). */
sm_writer *sm_writer_open(const char *path, sm_error *err);
FILE *sm_writer_file(const sm_writer *w);
/* Flushes, closes what sm_writer_open opened (standard output is flushed,
   not closed) and frees w (NULL: nothing); the file takes its name only
   with keep and no failed write. Returns 0, or the errno of the first
   failed write, flush, close or rename. */
int sm_writer_close(sm_writer *w, int keep);

/* ------------------------------------------------ files into a formatter */

/* Refuses (SM_ERR_IO, "PATH: REASON") the first path that cannot be read:
   missing, a folder, or not readable ("-" skipped). */
int sm_check_input_files(char *const *paths, size_t count, sm_error *err);

/* What sm_runner_scan_files does besides reading; zero (the _init) is
   nothing. Callbacks run on the calling thread. */
typedef struct sm_scan_files_options {
    sm_input_format format;     /* every file's (SM_INPUT_AUTO: each says) */
    unsigned threads;           /* decompression threads, as sm_reader_open_threads */
    /* The formatter: each file named in it (show_file) and its counts
       (counts_per_file); with name_records also each record named
       (sm_formatter_add_record) and measured (sm_formatter_record_length),
       which hits formatted one by one need. NULL: no formatter. */
    sm_formatter *formatter;
    int name_records;
    int show_file;              /* sm_formatter_set_file before each file ("-" as "stdin") */
    /* SM_FORMAT_COUNT per file: the runner flushed after each file and the
       file's counts (of pattern_count patterns) given to the formatter;
       files after a stop get zero counts. */
    int counts_per_file;
    uint32_t pattern_count;
    int stop_at_first_hit;      /* stop (a success) once the runner has a hit */
    int start_stopped;          /* read nothing (a limit of 0 hits) */
    /* Added in parentheses to "PATH: out of memory while scanning". */
    const char *nomem_hint;
    void *ctx;
    /* Whether a stop asked by one of the runner's callbacks (its status
       SM_ERR_TERMINATED) was the caller's limit, a success; otherwise it is
       a failure the caller reports. NULL: always a failure. */
    int (*limit_reached)(void *ctx);
    void (*on_file)(void *ctx, const char *path);  /* a file opened, before its first byte */
    /* As the reader goes: the sequence bytes of the piece just fed, the hits so far. */
    void (*on_progress)(void *ctx, const sm_reader *reader, size_t bytes, uint64_t hits);
    /* Each file's first piece of sequence (a check of what it holds). */
    void (*on_first_sequence)(void *ctx, const char *path, const char *record, const uint8_t *data, size_t len);
} sm_scan_files_options;

void sm_scan_files_options_init(sm_scan_files_options *opts);

/* Reads paths ("-": standard input) one after another into runner, the
   next one opened (its decompression started) while the current one is
   scanned, then flushes the runner; *stopped says whether the reading
   stopped early (stop_at_first_hit, start_stopped, or the caller's limit;
   a limit reached in the last flush is not early). Returns SM_OK, or the
   failure with err filled: a file that cannot be opened or read, the
   runner's status ("PATH: ..." or "scan: ..."), out of memory, or
   SM_ERR_TERMINATED with an empty message when a callback of the caller's
   stopped the runner without its limit (the caller says why). */
int sm_runner_scan_files(sm_runner *runner, char *const *paths, size_t count, const sm_scan_files_options *opts,
                         int *stopped, sm_error *err);

/* ---------------------------------------------------------- progress line */

/* A progress line of a scan of files on out (a terminal's standard error):
   the file (long names keep their end), "file N of M", percent of the file
   (or MB read, when its size is unknown), MB/s of sequence, the hits so
   far and the time left, redrawn in place at most five times a second;
   and a closing summary line. Nothing is written unless enabled. Every
   call takes NULL (does nothing). */
#ifndef SM_PROGRESS_DECLARED /* declared by seqmatch_output.h and seqmatch_reader.h: once, for C99 */
#define SM_PROGRESS_DECLARED
typedef struct sm_progress sm_progress;
#endif
/* NULL when out of memory. */
sm_progress *sm_progress_new(FILE *out, int enabled);
void sm_progress_free(sm_progress *p);
/* The files to come ("-": standard input), whose sizes give the time left. */
void sm_progress_set_files(sm_progress *p, char *const *paths, size_t count);
void sm_progress_begin_file(sm_progress *p, const char *name);
/* bytes more sequence of the current file scanned (reader's position gives
   the percent), hits so far (sm_runner_scan_files' on_progress). */
void sm_progress_update(sm_progress *p, const sm_reader *reader, size_t bytes, uint64_t hits);
/* Removes the line from the terminal (before other output there). */
void sm_progress_clear(sm_progress *p);
/* sm_progress_clear(ctx), as sm_writer_set_before_write's fn. */
void sm_progress_before_write(void *ctx);
/* "PREFIXWHAT; N files, X MB of sequence in S s (R MB/s)" and a line end. */
void sm_progress_summary(sm_progress *p, const char *prefix, const char *what);

/* What commands report (src/io/report.c): a record (pair) written, reads
   and bases "output"; a search's records and bases "input", its hits and
   each pattern's (from the runner's counts; names from its database); a
   trim run's reads, bases and trimmed reads. */
void sm_stats_record_out(sm_stats *stats, const sm_read_record *record);
void sm_stats_search(sm_stats *stats, const sm_db *db, const sm_runner *runner, const sm_progress *progress);
void sm_stats_trim(sm_stats *stats, const sm_trim_stats *trim);
/* Bytes of sequence that sm_progress_update was told of (also when not shown). */
uint64_t sm_progress_bytes(const sm_progress *p);
/* 1234567 as "1,234,567" in buf. */
const char *sm_thousands(uint64_t value, char *buf, size_t size);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_OUTPUT_H */
