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

typedef struct {
    sm_formatter *formatter;   /* NULL when nothing is printed per hit */
    cli_writer *writer;
    uint64_t hits_written;
    uint64_t max_hits;          /* --max-hits, UINT64_MAX when not given */
    int limit_reached;          /* the scan stopped after max_hits hits */
    int dna;                    /* targets read as DNA: warn when one looks like protein */
    sm_formatter *profile;     /* --profile FILE, beside the hits; NULL without */
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

/* Whether a runner status means the scan stopped at --max-hits (rather than
   on broken output, which is reported when the writer closes). */
static int scan_stopped_by_limit(const search_context *ctx, int status) {
    return status == SM_ERR_TERMINATED && ctx->limit_reached;
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
    for (size_t i = 0; i < count; i++) {
        const char *path = targets[i];
        if (strcmp(path, "-") == 0) continue;
        struct stat st;
        if (stat(path, &st) != 0) {
            cli_error("%s: %s", path, strerror(errno));
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            cli_error("%s: %s", path, strerror(EISDIR));
            return -1;
        }
        if (access(path, R_OK) != 0) {
            cli_error("%s: %s", path, strerror(errno));
            return -1;
        }
    }
    return 0;
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

static void report_status(const char *what, int status) {
    if (strcmp(what, "-") == 0) what = "stdin";
    if (status == SM_ERR_NOMEM) cli_error("%s: out of memory while scanning (%s)", what, NOMEM_HINT);
    else cli_error("%s: %s", what, sm_strerror(status));
}

typedef enum { SCAN_OK, SCAN_STOPPED_EARLY, SCAN_FAILED } scan_result;

/* One target's scan, as sm_runner_scan_reader's callbacks see it. */
typedef struct {
    search_context *search;
    const char *path;
    sm_reader *reader;
    sm_runner *runner;
    cli_progress *progress;
    const char *name;     /* the current record's */
    int checked;          /* the file's first bytes, for the protein warning */
    int stop_at_first_hit;
    int stopped;          /* a callback stopped the scan: the first hit, or a failure */
    int failed;
} target_scan;

static int scan_on_record(void *ctx, uint64_t record, const char *name) {
    target_scan *t = ctx;
    t->name = name;
    if (t->search->formatter && sm_formatter_add_record(t->search->formatter, record, name) != 0) {
        cli_progress_clear(t->progress);
        cli_error("out of memory");
        t->failed = 1;
        return 1;
    }
    return 0;
}

static int scan_on_sequence(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    (void)record;
    target_scan *t = ctx;
    if (!t->checked && len > 0) {
        cli_progress_clear(t->progress);
        t->checked = 1;
        cli_check_protein(t->path, t->name, data, len);
    }
    return 0;
}

static void scan_on_record_fed(void *ctx, uint64_t record, uint64_t length) {
    target_scan *t = ctx;
    if (t->search->formatter) sm_formatter_record_length(t->search->formatter, record, length);
}

static int scan_on_progress(void *ctx, size_t bytes, int record_ended) {
    target_scan *t = ctx;
    if (t->stop_at_first_hit && sm_runner_total(t->runner) > 0) {
        t->stopped = 1;
        return 1;
    }
    if (!record_ended) cli_progress_update(t->progress, t->reader, bytes, sm_runner_total(t->runner));
    return 0;
}

/* A target's reader opened ahead: the next file's decompression (a thread
   of its own, or BGZF's workers) starts while the current one is scanned,
   so that many compressed files follow each other without a pause. Its
   error, if any, is reported when its turn comes, as before. */
typedef struct {
    sm_reader *reader;
    int rc;
    sm_error err;
} opened_target;

static void open_target(const char *path, sm_input_format format, unsigned threads, opened_target *o) {
    memset(o, 0, sizeof *o);
    o->rc = sm_reader_open_threads(path, format, threads, &o->reader, &o->err);
}

/* Streams one target (opened by open_target) into the runner, and closes it. */
static scan_result scan_target(const char *path, opened_target *opened, sm_runner *runner, search_context *ctx,
                               int stop_at_first_hit, cli_progress *progress) {
    sm_error err = opened->err;
    sm_reader *reader = opened->reader;
    int rc = opened->rc;
    opened->reader = NULL;
    if (rc != SM_OK) {
        cli_progress_clear(progress);
        cli_error("%s", err.message[0] ? err.message : sm_strerror(rc));
        return SCAN_FAILED;
    }
    cli_progress_begin_file(progress, path);

    target_scan t = {ctx, path, reader, runner, progress, NULL, !ctx->dna, stop_at_first_hit, 0, 0};
    sm_scan_reader_options scan = {.ctx = &t, .on_record = scan_on_record, .on_sequence = scan_on_sequence,
                                    .on_record_fed = scan_on_record_fed, .on_progress = scan_on_progress};
    int status = sm_runner_scan_reader(runner, reader, &scan, &err);
    scan_result result = SCAN_OK;
    if (status == SM_ERR_TERMINATED) {
        result = t.failed ? SCAN_FAILED : t.stopped || ctx->limit_reached ? SCAN_STOPPED_EARLY : SCAN_FAILED;
    } else if (status != SM_OK) {
        cli_progress_clear(progress);
        if (err.message[0]) cli_error("%s", err.message); /* bad input, between records or inside one */
        else report_status(path, status);
        result = SCAN_FAILED;
    }
    sm_reader_close(reader);
    return result;
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

/* The targets' total size, or 0 when some size is unknown (a pipe). */
static uint64_t targets_size(char *const *targets, size_t count) {
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (strcmp(targets[i], "-") == 0 || stat(targets[i], &st) != 0 || !S_ISREG(st.st_mode)) return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

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
    cli_writer writer, profile_writer;
    int profile_open = 0;
    memset(&profile_writer, 0, sizeof profile_writer);
    int writer_open = 0;
    memset(&writer, 0, sizeof writer);
    cli_progress progress;
    cli_progress_init(&progress, 0);

    char *stdin_target[] = {"-"};
    char *const *targets = opts.target_count ? opts.targets : stdin_target;
    size_t target_count = opts.target_count ? opts.target_count : 1;
    /* With several targets every hit names its file, and counts are per file. */
    int show_file = opts.filename == CLI_FILENAME_ON || (opts.filename == CLI_FILENAME_AUTO && target_count > 1);
    uint64_t *file_counts = NULL;

    if (cli_dist_active(&opts) && (opts.circular || opts.anchor != SM_ANCHOR_NONE || opts.cigar || opts.site ||
                                   opts.profile_path || opts.format == SM_FORMAT_SAM || opts.format == SM_FORMAT_BAM ||
                                   opts.format == SM_FORMAT_RECORDS || opts.format == SM_FORMAT_PROFILE ||
                                   opts.format == SM_FORMAT_PROFILE_JSONL ||
                                   opts.compile.dna_bulges || opts.compile.rna_bulges)) {
        /* these need a whole record in one process (its head, its ends, its length, its hits together),
           or the database (sites' alignments, profiles) */
        cli_error("--circular, --anchor, --cigar, --site, --profile, bulges, --format sam/bam, records and profile "
                  "run in one process (not under mpirun or with --shard)");
        cli_options_free(&opts);
        return CLI_EXIT_ERROR;
    }
    if (cli_dist_active(&opts) && (opts.min_overlap || opts.max_hits_per_pattern || opts.max_hits_per_record ||
                                   opts.fewest_errors)) {
        /* a record's ends and all its hits must be in one process */
        cli_error("--min-overlap, --max-hits-per-pattern, --max-hits-per-record and --fewest-errors run in one "
                  "process (not under mpirun or with --shard)");
        cli_options_free(&opts);
        return CLI_EXIT_ERROR;
    }
    if (opts.min_overlap && (opts.cigar || opts.format == SM_FORMAT_SAM || opts.format == SM_FORMAT_BAM)) {
        /* a partial hit aligns only part of its pattern: no CIGAR of the whole pattern */
        cli_error("--min-overlap cannot be used with --cigar or --format %s", opts.format == SM_FORMAT_BAM ? "bam" : "sam");
        cli_options_free(&opts);
        return CLI_EXIT_ERROR;
    }
    if (cli_dist_active(&opts)) {
        /* MPI ranks or --shard: src/dist, with the same output */
        exit_status = cli_dist_search(&opts, targets, target_count, show_file, check_search_inputs);
        cli_options_free(&opts);
        return exit_status;
    }

    pthread_t cuda_start;
    static const int every_device = -1;
    int cuda_starting = opts.gpu && pthread_create(&cuda_start, NULL, start_cuda, (void *)&every_device) == 0;
    if (check_search_output(&opts, targets, target_count) != 0) goto cleanup;
    if (check_targets(targets, target_count) != 0) goto cleanup;
    if (cli_load_database(&opts, &db) != 0) goto cleanup;

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
                          info.alphabet == SM_ALPHABET_DNA, NULL};
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
        uint64_t size = targets_size(targets, target_count);
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
        if (sam_or_bam && sm_formatter_start_sam(formatter, cli_command_line(), &err) != SM_OK) {
            cli_error("%s", err.message);
            goto cleanup;
        }
        sm_formatter_begin(formatter);
        if (!count_only && opts.format != SM_FORMAT_COUNT) ctx.formatter = formatter;
        if (!count_only) ctx.profile = profile;
        int show = opts.progress == CLI_PROGRESS_ON ||
                   (opts.progress == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO));
        cli_progress_init(&progress, show);
        cli_progress_set_files(&progress, targets, target_count);
        /* The bar only gets in the way of output to the same terminal. */
        if (show && isatty(fileno(writer.file))) {
            sm_writer_set_before_write(writer.w, cli_progress_before_write, &progress);
        }
    }

    /* Counts per file: the runner is flushed after each file (its counts
       run one batch behind the bytes fed), and the file's block printed. */
    int per_file_counts = show_file && opts.format == SM_FORMAT_COUNT && formatter;
    uint64_t counted = 0; /* the runner's total at the end of the previous file */
    /* the counts seen at the end of the previous file, then this file's */
    if (per_file_counts && !(file_counts = calloc((size_t)info.pattern_count * 2, sizeof *file_counts))) {
        cli_error("out of memory");
        goto cleanup;
    }

    if (opts.target_count == 0) cli_note_stdin_terminal();

    /* --max-hits 0: nothing to look for (as grep -m 0). */
    int failed = 0, stopped_early = opts.max_hits_given && opts.max_hits == 0;
    opened_target current, ahead;
    int have_ahead = 0;
    memset(&ahead, 0, sizeof ahead);
    for (size_t i = 0; i < target_count && !failed; i++) {
        const char *shown = strcmp(targets[i], "-") == 0 ? "stdin" : targets[i];
        if (formatter && show_file && sm_formatter_set_file(formatter, shown) != 0) {
            cli_error("out of memory");
            failed = 1;
            break;
        }
        if (!stopped_early) {
            unsigned threads = cli_threads(opts.threads);
            if (have_ahead) current = ahead;
            else open_target(targets[i], input_format, threads, &current);
            /* standard input is read once, when its turn comes */
            have_ahead = i + 1 < target_count && strcmp(targets[i + 1], "-") != 0;
            if (have_ahead) open_target(targets[i + 1], input_format, threads, &ahead);
            scan_result r = scan_target(targets[i], &current, runner, &ctx, opts.quiet, &progress);
            if (r == SCAN_FAILED) failed = 1;
            if (r == SCAN_STOPPED_EARLY) stopped_early = 1;
            if (r == SCAN_OK && per_file_counts) {
                status = sm_runner_flush(runner);
                if (scan_stopped_by_limit(&ctx, status)) stopped_early = 1;
                else if (status != SM_OK) {
                    if (status != SM_ERR_TERMINATED) {
                        cli_progress_clear(&progress);
                        report_status("scan", status);
                    }
                    failed = 1;
                }
            }
        }
        if (failed) break;
        if (!per_file_counts) {
            if (stopped_early) break;
            continue;
        }
        /* The file's counts (zero for files after a stop at --max-hits). */
        const uint64_t *now = sm_runner_counts(runner);
        uint64_t *seen = file_counts, *diff = file_counts + info.pattern_count;
        for (uint32_t p = 0; p < info.pattern_count; p++) {
            diff[p] = now[p] - seen[p];
            seen[p] = now[p];
        }
        sm_formatter_counts(formatter, diff, sm_runner_total(runner) - counted);
        counted = sm_runner_total(runner);
    }
    if (have_ahead) sm_reader_close(ahead.reader); /* a stop or a failure before its turn */
    if (!failed && !stopped_early) {
        status = sm_runner_flush(runner);
        if (status != SM_OK && !scan_stopped_by_limit(&ctx, status)) {
            if (status != SM_ERR_TERMINATED) {
                cli_progress_clear(&progress);
                report_status("scan", status);
            }
            failed = 1;
        }
    }
    cli_progress_clear(&progress);

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
    if (failed) exit_status = CLI_EXIT_ERROR;
    else exit_status = total > 0 ? CLI_EXIT_HIT : CLI_EXIT_NO_HIT;
    if (!failed) {
        char hits[32];
        cli_progress_summary(&progress, "%s hit%s of %u pattern%s%s", cli_thousands(total, hits, sizeof hits),
                             total == 1 ? "" : "s", info.pattern_count, info.pattern_count == 1 ? "" : "s",
                             stopped_early ? " (stopped at --max-hits)" : "");
    }

cleanup:
    /* the CUDA runtime must not be torn down while it starts */
    if (cuda_starting) pthread_join(cuda_start, NULL);
    free(file_counts);
    cli_progress_clear(&progress);
    if (runner) sm_runner_free(runner);
    if (writer_open) cli_writer_close(&writer, 0);
    if (profile_open) cli_writer_close(&profile_writer, 0);
    sm_formatter_free(formatter);
    sm_formatter_free(profile);
    if (db) sm_db_free(db);
    cli_options_free(&opts);
    return exit_status;
}
