/* seqmatch trim: each read (or pair) cut at its adapter; the choice and the
 * rewriting are the library's (sm_trimmer_*, seqmatch_reader.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

void cli_print_trim_help(FILE *out) {
    fputs(
        "Usage: seqmatch trim [options] (-a ADAPTER | -g ADAPTER)... [-o OUT] [TARGET...]\n"
        "       seqmatch trim [options] (-a|-g|-A|-G ADAPTER)... -1 R1 -2 R2 -o OUT_#.fq\n"
        "\n"
        "Cuts each read (FASTA or FASTQ; gzip, BGZF or zstd) at the hit of its adapter\n"
        "and writes it, qualities cut in step, header and '+' lines as read. Several\n"
        "TARGETs are read one after another as single reads; mates take -1 and -2.\n"
        "Adapters as cutadapt writes them, searched on the read as sequenced (forward\n"
        "strand):\n"
        "  -a, --adapter SEQ     3' adapter: the hit and everything after it go; SEQ$\n"
        "                        only at the read's end; FIRST...SECOND a linked adapter:\n"
        "                        FIRST as a 5' adapter, then SECOND as a 3' adapter after\n"
        "                        it; ^FIRST and SECOND$ anchor a part and make it required\n"
        "  -g, --front SEQ       5' adapter: the hit and everything before it go; ^SEQ\n"
        "                        only at the read's start; FIRST...SECOND linked, both\n"
        "                        parts required\n"
        "  --min-overlap N       an adapter may run off the read's end (3') or start (5')\n"
        "                        with at least N bases inside (default 3, or k + 1 with\n"
        "                        -m k or -k k; 0: whole adapters only); cutadapt's -O\n"
        "  -m, --mismatches K    up to K substitutions (in the part inside the read)\n"
        "  -k, --edits K         up to K edits (in the part inside the read)\n"
        "  --text-iupac          N and IUPAC codes in reads match the adapter's bases\n"
        "  --minimum-length N    drop reads shorter than N after trimming (a pair when\n"
        "                        either mate is)\n"
        "  --discard-untrimmed   drop the reads no adapter cut (a pair when a mate with\n"
        "                        adapters is not cut); --discard-trimmed: those cut\n"
        "Which hit: of each adapter the leftmost; of several adapters the one whose hit\n"
        "has the most matches minus errors (then the fewest errors, then the first\n"
        "given). One adapter is cut from each read (docs/trim.md).\n"
        "\n"
        "Output and input:\n"
        "  -o, --output FILE     the trimmed reads (default standard output); gzip when\n"
        "                        FILE ends in .gz\n"
        "  -1, --read1 FILE      mates in step with -2, --read2 FILE: each mate is cut\n"
        "  -2, --read2 FILE      at its own hit; -o then names both files with a '#'\n"
        "                        (trimmed_#.fq.gz: 1 and 2). As in cutadapt, -a and -g\n"
        "                        are mate 1's adapters and\n"
        "  -A, --adapter2 SEQ    mate 2's 3' adapters,\n"
        "  -G, --front2 SEQ      mate 2's 5' adapters\n"
        "\n"
        "Performance: -t, --threads N (default all cores), --chunk-size, --engine,\n"
        "--build-threads, --max-memory. --progress / --no-progress: a progress line and\n"
        "a closing summary (reads trimmed, kept) on standard error. --help, --version.\n"
        "--stats-json FILE: a JSON report (reads and bases in and out, reads trimmed).\n"
        "\n"
        "Examples:\n"
        "  seqmatch trim -a AGATCGGAAGAGC -m 1 --minimum-length 20 -o clean.fq.gz reads.fq.gz\n"
        "  seqmatch trim -a AGATCGGAAGAGC -A AGATCGGAAGAGC -1 r1.fq.gz -2 r2.fq.gz -o trimmed_#.fq.gz\n"
        "  seqmatch trim -a ^GTGCCAGCMGCCGCGGTAA...ATTAGAWACCCBNGTAGTCC reads.fq > amplicons.fq\n"
        "\n"
        "Exit status: 0 when it ran, whatever it trimmed, 2 on error.\n",
        out);
}

typedef struct {
    sm_record_file *out[2];
    sm_progress *progress;
} trim_state;

static void on_input(void *ctx, const char *path) { sm_progress_begin_file(((trim_state *)ctx)->progress, path); }

static void on_progress(void *ctx, const sm_reader *reader, size_t bytes, uint64_t trimmed) {
    sm_progress_update(((trim_state *)ctx)->progress, reader, bytes, trimmed);
}

/* The combinations trim cannot take, each refused in one line. */
static int check_trim_options(cli_options *o) {
    uint32_t k = o->compile.max_errors;
    if (!o->min_overlap_given) o->min_overlap = k >= 3 ? k + 1 : 3;
    if (o->min_overlap > 0 && o->min_overlap <= k) {
        cli_usage_error(CLI_COMMAND_TRIM, "--min-overlap %u with %s %u: every read end would match; give more "
                        "than %u", o->min_overlap, o->compile.match == SM_MATCH_EDITS ? "-k" : "-m", k, k);
        return -1;
    }
    for (size_t i = 0; i < o->source_count && !o->read1; i++)
        if (o->sources[i].mate == 2) {
            cli_usage_error(CLI_COMMAND_TRIM, "-A and -G are mate 2's adapters: give paired files with -1 and -2");
            return -1;
        }
    if (o->read1 && (!o->output_path || !strchr(o->output_path, '#'))) {
        cli_usage_error(CLI_COMMAND_TRIM, "paired reads need -o with a '#' for the mate (trimmed_#.fq)");
        return -1;
    }
    return cli_check_read_options(o);
}

int cli_trim_main(int argc, char **argv) {
    cli_options opts;
    int parsed = cli_parse_options(CLI_COMMAND_TRIM, argc, argv, &opts);
    if (parsed != CLI_PARSE_OK) {
        cli_options_free(&opts);
        return parsed == CLI_PARSE_HELP ? cli_finish_stdout() : CLI_EXIT_ERROR;
    }
    int status = CLI_EXIT_ERROR, paired = opts.read1 != NULL;
    sm_trim_set set;
    memset(&set, 0, sizeof set);
    sm_db *db = NULL;
    sm_trimmer *trimmer = NULL;
    trim_state s;
    memset(&s, 0, sizeof s);
    char *names[2] = {NULL, NULL};
    sm_stats *stats = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (check_trim_options(&opts) != 0) goto done;
    for (size_t i = 0; i < opts.source_count; i++) {
        if (sm_trim_set_add(&set, opts.sources[i].text, opts.sources[i].adapter, &err) != SM_OK) goto failed;
        set.adapters[set.count - 1].mate = (uint8_t)opts.sources[i].mate; /* -a/-g mate 1 (or single reads), -A/-G 2 */
    }
    /* an error bound at an adapter's length would cut every read at its first base, as search refuses */
    if (cli_check_error_bound(&set.patterns, &opts.compile, NULL) != 0) goto done;
    opts.compile.strands = SM_STRAND_FORWARD;
    opts.compile.typical_record = sm_file_typical_record(paired ? opts.read1 : opts.target_count ? opts.targets[0] : "-");
    if (sm_compile(set.patterns.items, set.patterns.count, &opts.compile, &db, &err) != SM_OK) goto failed;

    const char *inputs[64];
    size_t ninputs = cli_read_inputs(&opts, inputs);
    if (cli_stats_open(&opts, &stats) != 0) goto done;
    for (unsigned m = 0; m < (paired ? 2u : 1u); m++) {
        const char *given = opts.output_path ? opts.output_path : "-";
        if (!(names[m] = paired ? sm_mate_path(given, m + 1) : strdup(given))) goto failed;
        if (cli_check_output(names[m], inputs, ninputs) != 0) goto done;
        if (!(s.out[m] = sm_record_file_open(names[m], &err))) goto failed;
    }
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = opts.threads;
    ro.chunk_size = opts.chunk_size;
    ro.min_overlap = opts.min_overlap;
    sm_trim_options to = {.set = &set, .minimum_length = opts.minimum_length, .discard = opts.discard,
                          .reader_threads = cli_threads(opts.threads), .ctx = &s, .out = {s.out[0], s.out[1]},
                          .on_input = on_input, .on_progress = on_progress};
    if (sm_trimmer_new(db, &ro, &to, &trimmer, &err) != SM_OK) goto failed;
    if (!(s.progress = sm_progress_new(stderr, opts.progress == CLI_PROGRESS_ON ||
                                                     (opts.progress == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO)))))
        goto failed;
    char *stdin_target[] = {"-"};
    char *const *targets = paired ? (char *const *)&opts.read1 : opts.target_count ? opts.targets : stdin_target;
    size_t count = paired || !opts.target_count ? 1 : opts.target_count;
    sm_progress_set_files(s.progress, targets, count);
    int rc = SM_OK;
    for (size_t i = 0; i < count && rc == SM_OK; i++) rc = sm_trimmer_run(trimmer, targets[i], opts.read2, &err);
    sm_progress_clear(s.progress);
    int write_failed = 0;
    for (unsigned m = 0; m < 2; m++) {
        if (s.out[m] && cli_close_records(s.out[m], rc == SM_OK) != 0) write_failed = 1;
        s.out[m] = NULL;
    }
    if (rc != SM_OK && err.message[0]) goto failed;
    if (rc != SM_OK || write_failed) goto done;
    sm_trim_stats st;
    sm_trimmer_stats(trimmer, &st);
    char a[32], b[32], c[32], what[160];
    snprintf(what, sizeof what, "%s reads, %s trimmed, %s %s kept", sm_thousands(st.reads, a, sizeof a),
             sm_thousands(st.trimmed, b, sizeof b), sm_thousands(st.kept, c, sizeof c), paired ? "pairs" : "reads");
    sm_progress_summary(s.progress, CLI_PROGRESS_PREFIX, what);
    sm_stats_trim(stats, &st);
    if (cli_stats_write(stats, opts.stats_path) != 0) goto done;
    status = CLI_EXIT_RAN;
    goto done;
failed:
    cli_error_sequences_only(err.message[0] ? err.message : "out of memory");
done:
    for (unsigned m = 0; m < 2; m++) {
        if (s.out[m]) cli_close_records(s.out[m], 0);
        free(names[m]);
    }
    sm_progress_free(s.progress);
    sm_stats_free(stats);
    sm_trimmer_free(trimmer);
    if (db) sm_db_free(db);
    sm_trim_set_free(&set);
    cli_options_free(&opts);
    return status;
}
