/* Declarations shared by the files of the seqmatch command-line tool. */
#ifndef SM_CLI_H
#define SM_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "seqmatch.h"
#include "seqmatch_dfa.h"
#include "seqmatch_gzip.h"
#include "seqmatch_output.h"
#include "seqmatch_reader.h"

/* Exit status: search and dfa as grep (0 some hit, 1 none); the read
   commands (filter, demux) 0 whenever they ran; every command 2 on error. */
enum { CLI_EXIT_HIT = 0, CLI_EXIT_NO_HIT = 1, CLI_EXIT_ERROR = 2, CLI_EXIT_RAN = 0 };

/* What a parse step asks the caller to do next. */
enum { CLI_PARSE_OK = 0, CLI_PARSE_HELP = 1, CLI_PARSE_ERROR = 2 };

typedef enum {
    CLI_COMMAND_SEARCH = 1, CLI_COMMAND_COMPILE = 2, CLI_COMMAND_FILTER = 3, CLI_COMMAND_DEMUX = 4,
    CLI_COMMAND_DFA = 5, CLI_COMMAND_MERGE = 6, CLI_COMMAND_TRIM = 7, CLI_COMMAND_AMPLICON = 8
} cli_command;

typedef enum { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF } cli_progress_mode;

/* Whether hits name their file: with more than one target (auto), always
   (-H) or never (--no-filename); the last of these options wins, as in grep. */
typedef enum { CLI_FILENAME_AUTO, CLI_FILENAME_ON, CLI_FILENAME_OFF } cli_filename_mode;

/* One pattern source, in command-line order: a file (-p, --exact-patterns)
   or a literal (-e); exact: its patterns take no errors beside -m. */
typedef struct {
    int is_file;
    const char *text;
    int exact;
    int adapter;  /* trim: SM_TRIM_BACK (-a, -A) or SM_TRIM_FRONT (-g, -G) */
    int mate;     /* trim: 2 for -A and -G (mate 2), else 1; amplicon: 1 -F, 2 -R */
} cli_pattern_source;

/* Everything the command line can say, for both commands. */
typedef struct {
    cli_command command;

    cli_pattern_source *sources;
    size_t source_count;
    const char *database_path;      /* -d */

    sm_compile_options compile;
    int alphabet_given;
    int build_threads_given;
    /* The first compile option seen, to name it when -d refuses it. */
    const char *first_compile_option;

    int lines;                      /* --lines */
    sm_output_format format;
    const char *output_path;        /* -o */
    unsigned threads;               /* 0 = all online cores */
    size_t chunk_size;              /* 0 = the runner's default */
    int overlap_free;               /* --overlap-free */
    int gpu;                        /* --gpu: scan on the CUDA backend */
    int quiet;
    uint64_t max_hits;              /* --max-hits: stop after this many hits */
    int max_hits_given;
    int header;
    cli_filename_mode filename;     /* -H / --no-filename */
    cli_progress_mode progress;
    unsigned shard_index, shard_count; /* --shard I/N (count 0: none) */
    int explain;                    /* compile --explain */
    int dump_dfa;                   /* compile --dump-dfa */
    int cigar;                      /* --cigar: an alignment column (tsv, jsonl) */
    int circular;                   /* --circular: hits over a record's end too */
    int site;                       /* --site: a guide site's bulge and aligned rows (tsv, jsonl) */
    const char *profile_path;       /* --profile FILE: sites per guide and class, beside the hits */
    uint32_t min_overlap;           /* --min-overlap N: partial matches at record ends (0: off) */
    uint32_t max_hits_per_pattern;  /* --max-hits-per-pattern N (0: no limit) */
    uint32_t max_hits_per_record;   /* --max-hits-per-record N (0: no limit) */
    int fewest_errors;              /* --fewest-errors */
    int min_overlap_given;
    uint64_t minimum_length;        /* trim --minimum-length */
    int discard;                    /* trim --discard-untrimmed / --discard-trimmed (SM_TRIM_DISCARD_*) */
    uint64_t min_size, max_size;    /* amplicon --min-size, --max-size; --longest, --sequence, --format: */
    int longest, sequence; const char *amplicon_format;

    char **targets;
    size_t target_count;

    /* Reads (filter, demux; --anchor for search too). */
    sm_anchor anchor;               /* --anchor */
    int anchor_given;
    int invert;                     /* filter -v */
    const char *matched_path;       /* filter --matched */
    const char *unmatched_path;     /* filter --unmatched */
    const char *read1, *read2;      /* -1 / -2: paired files */
    int gzip;                       /* demux --gzip */
    int trim_barcode;               /* demux --trim */
    const char *summary_path;       /* demux --summary */
    unsigned barcode_read;          /* demux --barcode-read (1 or 2; 0 = not given) */
    const char *barcodes_path;      /* demux --barcodes (a table of pairs, or as -p) */
    int rc_barcode2, barcode_tag;   /* demux --rc-barcode2, --barcode-tag */
    const char *stats_path;         /* --stats-json (search, filter, demux, trim, amplicon) */
    const char *columns;            /* search --columns */
    int strand_given;               /* --strand (demux defaults to +) */
    int report_given;               /* --report */
    size_t buffer_size;             /* demux --buffer-size: bytes buffered per file (0: the default) */
} cli_options;

/* ------------------------------------------------------------- messages */

/* Set on MPI ranks other than 0 while every rank would print the same
   message (usage errors): rank 0 prints it. */
extern int cli_errors_muted;

/* Prints "seqmatch: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints "seqmatch: MESSAGE" and a hint to run the command's --help. */
void cli_usage_error(cli_command command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

const char *cli_command_name(cli_command command);

/* The command line as given (SAM's @PG CL:, sm_command_line), set by main. */
extern const char *cli_command_line;

/* Flushes standard output (help, --explain, dumps). Returns 0, or prints
   "standard output: REASON" (nothing for a reader that went away) and
   returns CLI_EXIT_ERROR. */
int cli_finish_stdout(void);

/* ------------------------------------------------------------- options */

/* Every option of every command: one table in options.c (its name, short
   name, whether it takes a value and the commands it is for) drives the
   parsing of all of them. */
typedef enum {
    OPT_PATTERNS, OPT_PATTERN, OPT_EXACT_PATTERNS, OPT_DATABASE,
    OPT_ALPHABET, OPT_LINES, OPT_STRAND, OPT_IGNORE_CASE, OPT_TEXT_IUPAC, OPT_ENGINE,
    OPT_BUILD_THREADS, OPT_BUILD_BACKEND, OPT_MAX_MEMORY, OPT_MISMATCHES, OPT_EDITS, OPT_REPORT, OPT_PAM,
    OPT_FORMAT, OPT_OUTPUT, OPT_THREADS, OPT_CHUNK_SIZE, OPT_OVERLAP_FREE, OPT_OVERLAP_FREE_PREFIX, OPT_GPU, OPT_QUIET, OPT_NO_HEADER,
    OPT_MAX_HITS, OPT_WITH_FILENAME, OPT_NO_FILENAME, OPT_SHARD,
    OPT_PROGRESS, OPT_NO_PROGRESS, OPT_EXPLAIN, OPT_DUMP_DFA, OPT_HELP, OPT_VERSION,
    OPT_CIRCULAR, OPT_CIGAR, OPT_ANCHOR, OPT_INVERT, OPT_MATCHED, OPT_UNMATCHED, OPT_READ1, OPT_READ2, OPT_GZIP,
    OPT_SUMMARY, OPT_BARCODE_READ, OPT_BUFFER_SIZE, OPT_PAM5, OPT_DNA_BULGES, OPT_RNA_BULGES, OPT_SITE, OPT_PROFILE,
    OPT_MIN_OVERLAP, OPT_MAX_HITS_PER_PATTERN, OPT_MAX_HITS_PER_RECORD, OPT_FEWEST_ERRORS,
    OPT_ADAPTER, OPT_FRONT, OPT_ADAPTER2, OPT_FRONT2, OPT_MINIMUM_LENGTH, OPT_TRIM_BARCODE, OPT_BARCODES, OPT_RC_BARCODE2,
    OPT_BARCODE_TAG, OPT_STATS_JSON, OPT_COLUMNS, OPT_DISCARD_UNTRIMMED, OPT_DISCARD_TRIMMED, OPT_FORWARD, OPT_REVERSE,
    OPT_MIN_SIZE, OPT_MAX_SIZE, OPT_LONGEST, OPT_SEQUENCE,
    /* dfa's own */
    OPT_DFA, OPT_FROM_PATTERNS, OPT_REGEX, OPT_MATCH, OPT_MAX_STATES, OPT_MINIMIZE, OPT_NO_MINIMIZE, OPT_DUMP,
    OPT_SKIP_UNKNOWN, OPT_PER_RECORD, OPT_CHUNKS, OPT_POLICY, OPT_FIRST_CHUNK_RATIO, OPT_SIMD, OPT_GPU_BATCH
} cli_option_id;

/* dfa's options (its own struct: dfa.c); those only dfa takes are applied
   from the table by cli_apply_dfa_option. */
typedef struct {
    const char *dfa_path, *patterns_path, *regex;
    int sources;
    sm_dfa_match match;
    int match_given;
    sm_alphabet alphabet;
    int alphabet_given;
    sm_strands strands;
    int ignore_case;
    uint32_t max_states;
    int minimize;          /* -1: the default for the source */
    int skip_unknown;
    int per_record;
    int dump;
    const char *output;
    unsigned shard_index, shard_count; /* --shard I/N */
    sm_dfa_parallel_options parallel;
    sm_dfa_simd simd;
    int simd_given, chunks_given;
    int gpu;
    uint64_t gpu_batch;    /* 0: the library's default */
    char **inputs;
    size_t input_count;
} cli_dfa_options;

/* Applies a dfa-only option whose table entry says how its value is taken
   (a flag, a count, a size, a choice) to *o: returns a CLI_PARSE_* value
   (the refusal printed), or -1 for an option dfa's switch takes. */
int cli_apply_dfa_option(cli_dfa_options *o, cli_option_id id, const char *shown, const char *value);

/* Called for each option in command-line order: shown is the option as the
   user spelled it (-t or --threads), value NULL for a flag. Returns a
   CLI_PARSE_* value (CLI_PARSE_HELP and CLI_PARSE_ERROR stop the parse). */
typedef int (*cli_option_fn)(void *ctx, cli_option_id id, const char *shown, const char *value);
/* Called for each operand (file, '-' for standard input). Returns 0 or -1
   after a message. */
typedef int (*cli_operand_fn)(void *ctx, char *arg);

/* The one command-line grammar: --name VALUE, --name=VALUE, -x VALUE,
   -xVALUE, grouped flags (-qi), '--' to end the options, '-' an operand.
   Options the command does not take are refused with a usage message.
   Returns a CLI_PARSE_* value. */
int cli_parse_argv(cli_command command, int argc, char **argv, cli_option_fn option, cli_operand_fn operand,
                   void *ctx);

/* Parses argv (argv[0] is the command name) into *opts. Returns a
   CLI_PARSE_* value; on CLI_PARSE_ERROR a message has been printed. */
int cli_parse_options(cli_command command, int argc, char **argv, cli_options *opts);
void cli_options_free(cli_options *opts);

/* Number of online cores (at least 1). */
unsigned cli_online_cores(void);

/* ------------------------------------------------------------- help */

void cli_print_main_help(FILE *out);
void cli_print_search_help(FILE *out);
void cli_print_compile_help(FILE *out);
void cli_print_version(FILE *out);

/* ------------------------------------------------------------- commands */

/* Builds the database the options describe (-d, or -p / -e compiled).
   Returns 0, or prints a message and returns CLI_EXIT_ERROR. */
int cli_load_database(const cli_options *opts, sm_db **db);

int cli_search_main(int argc, char **argv);
/* seqmatch filter: the records with a hit (or without). */
int cli_filter_main(int argc, char **argv);
/* seqmatch demux: each record to the file of its barcode. */
int cli_demux_main(int argc, char **argv);
void cli_print_filter_help(FILE *out);
void cli_print_demux_help(FILE *out);
/* seqmatch trim: each read cut at its adapter. */
int cli_trim_main(int argc, char **argv);
void cli_print_trim_help(FILE *out);
/* seqmatch amplicon: in-silico PCR products of primer pairs. */
int cli_amplicon_main(int argc, char **argv);
void cli_print_amplicon_help(FILE *out);
/* A command's --help (the main help for one without its own). */
void cli_print_help(cli_command command, FILE *out);
/* seqmatch merge: shard files back into one output. */
int cli_merge_main(int argc, char **argv);
int cli_compile_main(int argc, char **argv);
/* seqmatch dfa: does each input belong to the language of a DFA? */
int cli_dfa_main(int argc, char **argv);

/* ------------------------------------------------------------- output */

/* Output files (-o) are the library's sm_outfile (include/seqmatch_output.h):
   never an input, never half written under their name. These print the
   library's message and return -1 (NULL) on failure. */
int cli_check_output(const char *output, const char *const *inputs, size_t count);
sm_outfile *cli_outfile_open(const char *path);
/* --stats-json: the report with the command's inputs (*stats NULL without
   the option); then written (NULL: nothing). 0, or -1 (said). */
int cli_stats_open(const cli_options *opts, sm_stats **stats);
int cli_stats_write(const sm_stats *stats, const char *path);

/* Hit output (-o, --profile, shard files): the library's buffered writer
   (include/seqmatch_output.h) over standard output or an output file. */
typedef struct {
    sm_writer *w;              /* sm_writer_open's */
    const char *display_name;  /* for messages: the path, or "standard output" */
    int error;                 /* the errno of a failed write or close */
    sm_deflater *gzip;         /* FILE.gz: what the writer writes out, as gzip members through zbuf */
    char *zbuf;
    size_t zcap;
} cli_writer;

/* Opens path for writing (NULL or "-" = standard output), as gzip when its
   name ends in .gz. Returns 0 or prints a message and returns -1. */
int cli_writer_open(cli_writer *w, const char *path);
/* The same for a shard file, never compressed ('seqmatch merge' reads it as
   written). */
int cli_writer_open_shard(cli_writer *w, const char *path);
/* Flushes and closes; an output file is kept only with keep (the command
   succeeded). Returns 0 or -1 with w->error set. */
int cli_writer_close(cli_writer *w, int keep);
/* Prints the writer's error unless it is a broken pipe. */
void cli_writer_report(const cli_writer *w);
/* Whether a write failed (0 for a writer never opened). */
static inline int cli_writer_failed(const cli_writer *w) { return w->w ? sm_writer_error(w->w) != 0 : w->error != 0; }

/* ------------------------------------------------------------- clear words */

/* On a terminal: says that standard input is being read (no target given). */
void cli_note_stdin_terminal(void);
/* Warns when the start of a DNA target's record looks like protein (as an
   sm_scan_files_options.on_first_sequence, ctx NULL). */
void cli_check_protein(void *ctx, const char *file, const char *record, const uint8_t *seq, size_t len);
/* Refuses (message printed, -1) -m or -k at least a pattern's length, for
   which every window or position would be a hit (exact: NULL, or a flag per
   pattern that takes no errors). */
/* Prints a library error for trim and amplicon, which read FASTA and FASTQ
   only: without the reader's hint of --alphabet text, not theirs. */
void cli_error_sequences_only(const char *message);
int cli_check_error_bound(const sm_pattern_list *list, const sm_compile_options *o, const unsigned char *exact);

/* --------------------------------------------------- records of reads */

/* A read command's run (reads.c): the library's record queue with the
   command's callbacks (sm_reads_options'), its progress line and messages. */
typedef struct {
    const cli_options *opts;
    unsigned scan_mate;       /* demux: scan only mate 1 or 2 of each pair (0: both) */
    size_t end_window;        /* demux by pairs: sm_reads_options' */
    sm_stats *stats;          /* --stats-json: the report, or NULL */
    void (*on_summary)(void *ctx, sm_read_record *record, const sm_record_summary *summary); /* or NULL */
    int (*on_record)(void *ctx, sm_read_record *record);
    /* At the end of a run that did not fail: the closing line
       (sm_progress_summary), or NULL. */
    void (*summary)(sm_progress *progress, void *ctx);
    void *ctx;
    sm_reads *reads;          /* during the run */
    sm_input_format format;   /* after it: the first input's (SM_INPUT_AUTO: none read) */
} cli_reads_job;

/* Reads the targets (or the pair opts->read1 / opts->read2 in step), scans
   them with db on a runner made from opts, and calls on_summary and
   on_record in record order. Returns 0, or -1 after printing a message. */
int cli_reads_run(cli_reads_job *job, const sm_db *db);

/* The files a read command reads (paired files, targets, pattern files,
   the database; at most 64), which no output may be. Returns the count. */
size_t cli_read_inputs(const cli_options *opts, const char *inputs[64]);
/* Closes records written as read (kept only with keep): 0, or -1 after
   saying what failed (nothing for a reader that went away: | head). */
int cli_close_records(sm_record_file *out, int keep);

/* Checks the options every read command shares: returns 0, or prints a
   usage message and returns -1. */
int cli_check_read_options(cli_options *opts);

/* ------------------------------------------------------------- progress */

/* The progress line (standard error a terminal, or --progress) is the
   library's sm_progress; its closing line starts "seqmatch: ". */
#define CLI_PROGRESS_PREFIX "seqmatch: "

/* Threads for a --threads value (0: every online core). */
unsigned cli_threads(unsigned asked);

/* ------------------------------------------------------------- dist */

/* Started by an MPI launcher (mpirun): MPI is started here, ranks other
   than 0 print nothing on standard output. Returns 0 or an exit status. */
int cli_dist_init(int *argc, char ***argv);
/* The job's exit status (rank 0's, on every rank) and MPI's end. */
int cli_dist_finish(int status);
/* An MPI rank other than 0: commands that are not spread leave it idle. */
int cli_dist_rank_only(void);
/* MPI started, or --shard given. */
int cli_dist_active(const cli_options *opts);
/* search spread over the ranks, as one shard, or (local) as that many
   shares of this process; check: the command's checks of its output and
   targets (0 or printed and -1), on rank 0 only. */
int cli_dist_search(const cli_options *opts, char *const *targets, size_t count, int show_file,
                    int (*check)(const cli_options *, char *const *, size_t), unsigned local);

typedef struct {
    const sm_dfa *dfa;
    const sm_dfa_matcher *matcher;
    char **inputs;
    size_t input_count;
    int dna, per_record, skip_unknown;
    const sm_dfa_parallel_options *parallel;
    const char *output;
    unsigned shard_index, shard_count;
} cli_dist_dfa_job;

/* dfa spread over the ranks or as one shard. */
int cli_dist_dfa(const cli_dist_dfa_job *job);
/* MPI: rank 0's DFA (*dfa, or NULL when it failed) to every rank. Returns
   0, or -1 when rank 0 failed. */
int cli_dist_share_dfa(sm_dfa **dfa);
/* Whether this process is MPI rank 0 (or not under MPI), and whether MPI runs. */
int cli_dist_rank0(void);
int cli_dist_mpi(void);

#endif /* SM_CLI_H */
