/* The search command: read targets piece by piece into the runner and
 * print its hits in the order it delivers them. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "seqmatch_dist.h"

typedef struct {
    sm_formatter *formatter;   /* NULL when nothing is printed per hit */
    cli_writer *writer;
    uint64_t hits_written;
    uint64_t max_hits;          /* --max-hits, UINT64_MAX when not given */
    int limit_reached;          /* the scan stopped after max_hits hits */
    int dna;                    /* targets read as DNA: warn when one looks like protein */
    sm_formatter *profile;     /* --profile FILE, beside the hits; NULL without */
    sm_progress *progress;
} search_context;

static int deliver_hit(const sm_hit *hit, void *ctx) {
    search_context *s = ctx;
    int broken = s->formatter ? sm_formatter_hit(s->formatter, hit) : 0;
    if (s->profile) sm_formatter_hit(s->profile, hit);
    s->hits_written++;
    if (s->hits_written >= s->max_hits) {
        s->limit_reached = 1;
        return 1;
    }
    /* Once the output is broken there is no point in scanning on. */
    return broken ? 1 : 0;
}

/* --format records: a record's hits in summary (no hit list held). */
static int record_summary(const sm_record_summary *summary, void *ctx) {
    search_context *s = ctx;
    int broken = s->formatter ? sm_formatter_record_summary(s->formatter, summary) : 0;
    s->hits_written += summary->hits;
    return broken ? 1 : 0;
}

static void record_done(uint64_t record, void *ctx) {
    search_context *s = ctx;
    if (s->formatter) sm_formatter_record_done(s->formatter, record);
}

/* Fails early, before any output, on targets that cannot be read. */
static int check_targets(char *const *targets, size_t count) {
    sm_error err;
    if (sm_check_input_files(targets, count, &err) == SM_OK) return 0;
    cli_error("%s", err.message);
    return -1;
}

/* The scan's memory is mostly its batch buffers, which --chunk-size and the
   thread count size: an out-of-memory message says so. */
static const char NOMEM_HINT[] = "the batch buffers grow to 8 x --chunk-size per thread, the hits they hold to 3 x; "
                                 "a smaller --chunk-size or fewer threads (-t) need less";

/* -o must not name an input: a target, a pattern file or the database. */
static int check_search_output(const cli_options *opts, char *const *targets, size_t count) {
    if (!opts->output_path && !opts->profile_path) return 0;
    const char **inputs = calloc(count + opts->source_count + 1, sizeof *inputs);
    if (!inputs) {
        cli_error("out of memory");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) inputs[n++] = targets[i];
    for (size_t i = 0; i < opts->source_count; i++)
        if (opts->sources[i].is_file) inputs[n++] = opts->sources[i].text;
    if (opts->database_path) inputs[n++] = opts->database_path;
    int rc = (opts->output_path && cli_check_output(opts->output_path, inputs, n) != 0) ||
                     (opts->profile_path && cli_check_output(opts->profile_path, inputs, n) != 0)
                 ? -1
                 : 0;
    free(inputs);
    return rc;
}

/* Rank 0's (or a shard's) checks before a spread search. */
static int check_search_inputs(const cli_options *opts, char *const *targets, size_t count) {
    return check_search_output(opts, targets, count) != 0 || check_targets(targets, count) != 0 ? -1 : 0;
}

/* The scan's callbacks of the command's own: the hit limit, the progress
   line, the protein warning. */
static int limit_reached(void *ctx) { return ((search_context *)ctx)->limit_reached; }

static void on_file(void *ctx, const char *path) { sm_progress_begin_file(((search_context *)ctx)->progress, path); }

static void on_progress(void *ctx, const sm_reader *reader, size_t bytes, uint64_t hits) {
    sm_progress_update(((search_context *)ctx)->progress, reader, bytes, hits);
}

static void on_first_sequence(void *ctx, const char *path, const char *record, const uint8_t *data, size_t len) {
    sm_progress_clear(((search_context *)ctx)->progress);
    cli_check_protein(NULL, path, record, data, len);
}

/* --gpu: the CUDA driver and the devices' contexts start on a thread of
   their own while the patterns compile and the targets are checked, so that
   a runner made later finds them ready (their start costs about a quarter
   of a second, docs/benchmarks.md). */
static void *start_cuda(void *arg) {
    (void)sm_cuda_prepare(*(const int *)arg);
    return NULL;
}

/* Inputs under this many bytes in all are a job the GPU does not win: one
   batch, and the GPU's start costs more than the CPU's scan of it. */
#define GPU_SMALL_JOB ((uint64_t)64 << 20)

int cli_search_main(int argc, char **argv) {
    cli_options opts;
    int parsed = cli_parse_options(CLI_COMMAND_SEARCH, argc, argv, &opts);
    if (parsed != CLI_PARSE_OK) {
        cli_options_free(&opts);
        if (parsed == CLI_PARSE_HELP) return cli_finish_stdout();
        return CLI_EXIT_ERROR;
    }

    int exit_status = CLI_EXIT_ERROR;
    sm_db *db = NULL;
    sm_runner *runner = NULL;
    sm_formatter *formatter = NULL, *profile = NULL;
    sm_stats *stats = NULL; /* --stats-json */
    cli_writer writer, profile_writer;
    int profile_open = 0;
    memset(&profile_writer, 0, sizeof profile_writer);
    int writer_open = 0;
    memset(&writer, 0, sizeof writer);
    sm_progress *progress = NULL;

    char *stdin_target[] = {"-"};
    char *const *targets = opts.target_count ? opts.targets : stdin_target;
    size_t target_count = opts.target_count ? opts.target_count : 1;
    /* With several targets every hit names its file, and counts are per file. */
    int show_file = opts.filename == CLI_FILENAME_ON || (opts.filename == CLI_FILENAME_AUTO && target_count > 1) ||
                    (opts.columns && strstr(opts.columns, "file"));

    /* these need a whole record in one process (its head, its ends, its length, its hits together),
       or the database (sites' alignments, profiles), or every count (the report, the columns) */
    int one_process = opts.circular || opts.anchor != SM_ANCHOR_NONE || opts.cigar || opts.site || opts.profile_path ||
                      opts.format == SM_FORMAT_SAM || opts.format == SM_FORMAT_BAM || opts.format == SM_FORMAT_RECORDS ||
                      opts.format == SM_FORMAT_PROFILE || opts.format == SM_FORMAT_PROFILE_JSONL ||
                      opts.compile.dna_bulges || opts.compile.rna_bulges || opts.min_overlap ||
                      opts.max_hits_per_pattern || opts.max_hits_per_record || opts.fewest_errors || opts.stats_path ||
                      opts.columns;
    if (cli_dist_active(&opts) && one_process) {
        cli_error("--circular, --anchor, --cigar, --site, --profile, bulges, --format sam/bam, records and profile, "
                  "--min-overlap, --max-hits-per-pattern, --max-hits-per-record, --fewest-errors, --stats-json and "
                  "--columns run in one process (not under mpirun or with --shard)");
        cli_options_free(&opts);
        return CLI_EXIT_ERROR;
    }
    if (opts.min_overlap && (opts.cigar || opts.format == SM_FORMAT_SAM || opts.format == SM_FORMAT_BAM)) {
        /* a partial hit aligns only part of its pattern: no CIGAR of the whole pattern */
        cli_error("--min-overlap cannot be used with --cigar or --format %s", opts.format == SM_FORMAT_BAM ? "bam" : "sam");
        cli_options_free(&opts);
        return CLI_EXIT_ERROR;
    }
    /* large files read by several readers at once, each with a runner of its own (src/dist/local.c); not
       while a progress bar is shown, which follows one reader */
    int bar = opts.progress == CLI_PROGRESS_ON || (opts.progress == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO));
    unsigned local = cli_dist_active(&opts) || one_process || bar ? 0
                     : sm_dist_local_shares(targets, target_count, cli_threads(opts.threads), opts.gpu,
                                            opts.compile.match == SM_MATCH_EXACT);
    if (cli_dist_active(&opts) || local) {
        /* MPI ranks, --shard, or readers of this process: src/dist, with the same output */
        exit_status = cli_dist_search(&opts, targets, target_count, show_file, check_search_inputs, local);
        cli_options_free(&opts);
        return exit_status;
    }

    pthread_t cuda_start;
    static const int every_device = -1;
    int cuda_starting = opts.gpu && pthread_create(&cuda_start, NULL, start_cuda, (void *)&every_device) == 0;
    if (check_search_output(&opts, targets, target_count) != 0) goto cleanup;
    if (check_targets(targets, target_count) != 0) goto cleanup;
    if (cli_stats_open(&opts, &stats) != 0 || cli_load_database(&opts, &db) != 0) goto cleanup;

    sm_db_info info;
    sm_db_get_info(db, &info);
    sm_input_format input_format = SM_INPUT_AUTO;
    if (info.alphabet == SM_ALPHABET_TEXT) {
        input_format = opts.lines ? SM_INPUT_LINES : SM_INPUT_TEXT;
    } else if (opts.lines) {
        cli_usage_error(CLI_COMMAND_SEARCH, "--lines needs a text database; %s was compiled "
                        "for dna", opts.database_path);
        goto cleanup;
    }
    /* a guide site's columns: asked for, or a search with bulges */
    int site = opts.site || ((info.dna_bulges || info.rna_bulges) &&
                             (opts.format == SM_FORMAT_TSV || opts.format == SM_FORMAT_JSONL));
    if (site && (!info.pam_length || info.match == SM_MATCH_EDITS)) {
        cli_usage_error(CLI_COMMAND_SEARCH, "--site is for guides with a PAM (--pam or --pam5) and -m");
        goto cleanup;
    }
    const int sam_or_bam = opts.format == SM_FORMAT_SAM || opts.format == SM_FORMAT_BAM;
    if (sam_or_bam && info.alphabet != SM_ALPHABET_DNA) {
        cli_usage_error(CLI_COMMAND_SEARCH, "--format %s is for dna; %s was compiled for text",
                        opts.format == SM_FORMAT_BAM ? "bam" : "sam", opts.database_path);
        goto cleanup;
    }
    if (opts.format == SM_FORMAT_BAM && !opts.output_path && isatty(STDOUT_FILENO)) {
        cli_usage_error(CLI_COMMAND_SEARCH, "--format bam is binary: give -o FILE.bam, or pipe it (| samtools view)");
        goto cleanup;
    }

    /* --max-hits needs every hit through the callback to stop at the limit;
       the runner still counts the hits it delivers. */
    int count_only = opts.quiet || (opts.format == SM_FORMAT_COUNT && !opts.max_hits_given && !opts.profile_path);
    /* The runner first: a backend that cannot start (no GPU) fails before any output. */
    search_context ctx = {NULL, &writer, 0, opts.max_hits_given ? opts.max_hits : UINT64_MAX, 0,
                          info.alphabet == SM_ALPHABET_DNA, NULL, NULL};
    sm_runner_options runner_opts;
    sm_runner_options_init(&runner_opts);
    runner_opts.threads = opts.threads;
    runner_opts.chunk_size = opts.chunk_size;
    runner_opts.overlap_free = opts.overlap_free;
    runner_opts.backend = opts.gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU;
    runner_opts.anchor = opts.anchor;
    runner_opts.count_only = count_only;
    runner_opts.on_hit = deliver_hit;
    if (opts.format == SM_FORMAT_RECORDS && !count_only && !opts.max_hits_given && !opts.profile_path) {
        runner_opts.on_hit = NULL;
        runner_opts.on_record_summary = record_summary;
    }
    runner_opts.ctx = &ctx;
    runner_opts.on_record_done = record_done;
    runner_opts.circular = opts.circular;
    runner_opts.min_overlap = opts.min_overlap;
    runner_opts.max_hits_per_pattern = opts.max_hits_per_pattern;
    runner_opts.max_hits_per_record = opts.max_hits_per_record;
    runner_opts.fewest_errors = opts.fewest_errors;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status = sm_runner_create(db, &runner_opts, &runner, &err);
    if (status != SM_OK) {
        const char *message = err.message[0] ? err.message : sm_strerror(status);
        if (status == SM_ERR_NOMEM) cli_error("%s (%s)", message, NOMEM_HINT);
        else cli_error("%s", message);
        goto cleanup;
    }

    if (opts.gpu) {
        uint64_t size = sm_files_size(targets, target_count);
        if (size && size < GPU_SMALL_JOB)
            fprintf(stderr,
                    "seqmatch: note: %llu bytes of targets are too few for the GPU to win; the CPU (without --gpu) is "
                    "likely faster\n",
                    (unsigned long long)size);
    }

    if (!opts.quiet) {
        if (cli_writer_open(&writer, opts.output_path) != 0) goto cleanup;
        writer_open = 1;
        sm_error err;
        formatter = sm_formatter_new(opts.format, opts.header, show_file, db, writer.w, &err);
        if (!formatter) {
            cli_error("%s", err.message);
            goto cleanup;
        }
        if (opts.cigar) sm_formatter_set_cigar(formatter);
        if (site) sm_formatter_set_site(formatter);
        if (opts.columns && sm_formatter_set_columns(formatter, opts.columns, &err) != SM_OK) {
            cli_error("%s", err.message);
            goto cleanup;
        }
        if (opts.profile_path) {
            /* the profile as JSON lines when the file's name says so */
            size_t n = strlen(opts.profile_path);
            int jsonl = (n >= 6 && strcmp(opts.profile_path + n - 6, ".jsonl") == 0) ||
                        (n >= 5 && strcmp(opts.profile_path + n - 5, ".json") == 0);
            if (cli_writer_open(&profile_writer, opts.profile_path) != 0) goto cleanup;
            profile_open = 1;
            profile = sm_formatter_new(jsonl ? SM_FORMAT_PROFILE_JSONL : SM_FORMAT_PROFILE, 1, 0, db,
                                       profile_writer.w, &err);
            if (!profile) {
                cli_error("%s", err.message);
                goto cleanup;
            }
            sm_formatter_begin(profile);
        }
        if (sam_or_bam && sm_formatter_start_sam(formatter, cli_command_line, &err) != SM_OK) {
            cli_error("%s", err.message);
            goto cleanup;
        }
        sm_formatter_begin(formatter);
        if (!count_only && opts.format != SM_FORMAT_COUNT) ctx.formatter = formatter;
        if (!count_only) ctx.profile = profile;
        int show = bar;
        ctx.progress = progress = sm_progress_new(stderr, show);
        sm_progress_set_files(progress, targets, target_count);
        /* The bar only gets in the way of output to the same terminal. */
        if (show && isatty(fileno(sm_writer_file(writer.w)))) {
            sm_writer_set_before_write(writer.w, sm_progress_before_write, progress);
        }
    }

    /* Counts per file: the runner is flushed after each file (its counts
       run one batch behind the bytes fed), and the file's block printed. */
    int per_file_counts = show_file && opts.format == SM_FORMAT_COUNT && formatter;
    if (opts.target_count == 0) cli_note_stdin_terminal();
    sm_scan_files_options scan;
    sm_scan_files_options_init(&scan);
    scan.format = input_format;
    scan.threads = cli_threads(opts.threads);
    scan.formatter = formatter;
    scan.name_records = ctx.formatter != NULL; /* hits formatted one by one */
    scan.show_file = show_file;
    scan.counts_per_file = per_file_counts;
    scan.pattern_count = info.pattern_count;
    scan.stop_at_first_hit = opts.quiet;
    scan.start_stopped = opts.max_hits_given && opts.max_hits == 0; /* --max-hits 0: as grep -m 0 */
    scan.nomem_hint = NOMEM_HINT;
    scan.ctx = &ctx;
    scan.limit_reached = limit_reached;
    scan.on_file = on_file;
    scan.on_progress = on_progress;
    if (ctx.dna) scan.on_first_sequence = on_first_sequence;
    int stopped_early = 0;
    int failed = sm_runner_scan_files(runner, targets, target_count, &scan, &stopped_early, &err) != SM_OK;
    sm_progress_clear(progress);
    if (failed && err.message[0]) cli_error("%s", err.message);

    uint64_t total = count_only || opts.format == SM_FORMAT_COUNT ? sm_runner_total(runner)
                                                                    : ctx.hits_written;
    if (!failed && opts.format == SM_FORMAT_COUNT && formatter && !per_file_counts)
        sm_formatter_counts(formatter, sm_runner_counts(runner), total);
    sm_error end_err;
    if (!failed && ((formatter && sm_formatter_end(formatter, &end_err) != SM_OK) ||
                    (profile && sm_formatter_end(profile, &end_err) != SM_OK))) {
        cli_error("%s", end_err.message);
        failed = 1;
    }
    if (profile_open) {
        profile_open = 0;
        if (cli_writer_close(&profile_writer, !failed) != 0) {
            cli_writer_report(&profile_writer);
            failed = 1;
        }
    }

    if (writer_open) {
        writer_open = 0;
        /* exit status 1 (no hit) is a success: the file holds the header or the zero counts */
        if (cli_writer_close(&writer, !failed) != 0) {
            cli_writer_report(&writer);
            failed = 1;
        }
    }
    if (!failed) sm_stats_search(stats, db, runner, progress);
    if (failed || cli_stats_write(stats, opts.stats_path) != 0) exit_status = CLI_EXIT_ERROR;
    else exit_status = total > 0 ? CLI_EXIT_HIT : CLI_EXIT_NO_HIT;
    if (!failed) {
        char hits[32], what[160];
        snprintf(what, sizeof what, "%s hit%s of %u pattern%s%s", sm_thousands(total, hits, sizeof hits),
                 total == 1 ? "" : "s", info.pattern_count, info.pattern_count == 1 ? "" : "s",
                 stopped_early ? " (stopped at --max-hits)" : "");
        sm_progress_summary(progress, CLI_PROGRESS_PREFIX, what);
    }

cleanup:
    /* the CUDA runtime must not be torn down while it starts */
    if (cuda_starting) pthread_join(cuda_start, NULL);
    sm_progress_clear(progress);
    if (runner) sm_runner_free(runner);
    if (writer_open) cli_writer_close(&writer, 0);
    if (profile_open) cli_writer_close(&profile_writer, 0);
    sm_formatter_free(formatter);
    sm_formatter_free(profile);
    sm_progress_free(progress); /* after the writers: their hook clears it */
    sm_stats_free(stats);
    if (db) sm_db_free(db);
    cli_options_free(&opts);
    return exit_status;
}
