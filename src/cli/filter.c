/* seqmatch filter: the records (or pairs of mates) that hold a hit, or
 * those that do not, written exactly as they were read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void cli_print_filter_help(FILE *out) {
    fputs(
        "Usage: seqmatch filter [options] (-p FILE | -e PATTERN | -d DB)... [TARGET...]\n"
        "       seqmatch filter [options] (-p FILE | -e PATTERN | -d DB)... -1 R1 -2 R2\n"
        "\n"
        "Writes the records (FASTA, FASTQ, or lines of text with --lines) that hold\n"
        "a hit of any pattern - or, with -v, those that hold none - byte for byte as\n"
        "they were read: header comments, line wrapping and \\r\\n line ends stay. A\n"
        "hit is what 'seqmatch search' would report with the same options (exact,\n"
        "-m mismatches, -k edits, IUPAC codes, both strands, --pam, --anchor).\n"
        "Targets may be gzip, BGZF or zstd; '-' or no TARGET reads standard input.\n"
        "\n"
        "Output:\n"
        "  -o, --output FILE     the records chosen (with a hit; without one under -v);\n"
        "                        default standard output; gzip when FILE ends in .gz\n"
        "  -v, --invert          choose the records without a hit\n"
        "  --matched FILE        also (or instead, without -o) write the records with a hit\n"
        "  --unmatched FILE      ... and those without one: both together split the input\n"
        "\n"
        "Paired reads:\n"
        "  -1, --read1 FILE      mate 1 of each pair; -2, --read2 FILE mate 2, in the same\n"
        "  -2, --read2 FILE      order (names may end in /1 and /2). A pair is chosen or\n"
        "                        dropped whole: it has a hit when either mate has one.\n"
        "                        Every output name then holds a '#', replaced by 1 and 2\n"
        "                        for the two mates' files (clean_#.fq.gz)\n"
        "\n"
        "Patterns and matching: every option of 'seqmatch search' (-p, -e, -d,\n"
        "--alphabet, --lines, --strand, -m, -k, --report, --pam, --text-iupac, -i,\n"
        "--engine, --max-memory) and\n"
        "  --anchor start|end|any  hits only at the start or the end of a record\n"
        "                        (default any); only the first or last (longest pattern\n"
        "                        + k) bases are searched then\n"
        "  --min-overlap N       also a pattern that runs off a record's start or end\n"
        "                        with at least N symbols inside (a read ending in its\n"
        "                        adapter's first bases; cutadapt's -O)\n"
        "\n"
        "Performance: -t, --threads N (default all cores), --chunk-size, --gpu.\n"
        "--progress / --no-progress: a progress line and a closing summary (records\n"
        "with a hit, time, speed) on standard error; by default on a terminal only.\n"
        "--stats-json FILE: a JSON report (reads and bases in and out, per pattern).\n"
        "\n"
        "Examples:\n"
        "  # reads that carry an adapter, and the rest, split in one pass\n"
        "  seqmatch filter -p adapters.fa -m 1 --matched dirty.fq.gz --unmatched clean.fq.gz reads.fq.gz\n"
        "  # drop read pairs with a PhiX k-mer in either mate\n"
        "  seqmatch filter -v -p phix_kmers.txt -1 r1.fq.gz -2 r2.fq.gz -o clean_#.fq.gz\n"
        "  # reads that start with a primer, up to 2 edits\n"
        "  seqmatch filter -e GTGCCAGCMGCCGCGGTAA --anchor start -k 2 --strand + reads.fq > 16s.fq\n"
        "  # lines of a log that mention a word (as grep -F)\n"
        "  seqmatch filter --lines -e timeout server.log\n"
        "\n"
        "Exit status: 0 when it ran, whatever it kept (no record chosen is a result, as\n"
        "for cutadapt, BBDuk and seqkit), 2 on error.\n",
        out);
}

/* filter's outputs: chosen (-o), matched, unmatched; two of each with pairs. */
enum { OUT_CHOSEN, OUT_MATCHED, OUT_UNMATCHED, OUT_KINDS };

typedef struct {
    sm_record_file *out[OUT_KINDS][2];  /* records as read, gzip when named .gz */
    int invert, pairs;
    uint64_t chosen, matched, entries;
    sm_stats *stats;                    /* --stats-json */
} filter_state;

static int filter_record(void *ctx, sm_read_record *e) {
    filter_state *f = ctx;
    int hit = e->hits > 0;
    f->matched += hit;
    f->entries++;
    int failed = 0;
    for (int kind = 0; kind < OUT_KINDS; kind++) {
        int wanted = kind == OUT_CHOSEN ? hit != f->invert : kind == OUT_MATCHED ? hit : !hit;
        if (!wanted || !f->out[kind][0]) continue;
        if (kind == OUT_CHOSEN) f->chosen++, sm_stats_record_out(f->stats, e);
        for (unsigned m = 0; m < e->mates; m++) {
            failed |= sm_record_file_put(f->out[kind][m], e->raw[m], e->raw_len[m]);
        }
    }
    /* a broken output ends the scan; the close says why */
    return failed ? -1 : 0;
}

static void filter_summary(sm_progress *progress, void *ctx) {
    const filter_state *f = ctx;
    char kept[32], all[32], what[160];
    snprintf(what, sizeof what, "%s of %s %s with a hit (%.1f %%)", sm_thousands(f->matched, kept, sizeof kept),
             sm_thousands(f->entries, all, sizeof all), f->pairs ? "pairs" : "records",
             f->entries ? 100.0 * (double)f->matched / (double)f->entries : 0.0);
    sm_progress_summary(progress, CLI_PROGRESS_PREFIX, what);
}

/* Closes an output (kept only with keep): 0, or -1 after saying what failed
   (nothing for a reader that went away: | head). */
int cli_close_records(sm_record_file *out, int keep) {
    int write_errno = 0;
    sm_error err;
    int rc = sm_record_file_close(out, keep, &write_errno, &err);
    if (rc != SM_OK && !(rc == SM_ERR_IO && write_errno == EPIPE)) cli_error("%s", err.message);
    return rc == SM_OK ? 0 : -1;
}

size_t cli_read_inputs(const cli_options *opts, const char *inputs[64]) {
    size_t n = 0;
    if (opts->read1) inputs[n++] = opts->read1, inputs[n++] = opts->read2;
    for (size_t i = 0; i < opts->target_count && n < 48; i++) inputs[n++] = opts->targets[i];
    for (size_t i = 0; i < opts->source_count && n < 56; i++)
        if (opts->sources[i].is_file) inputs[n++] = opts->sources[i].text;
    if (opts->database_path) inputs[n++] = opts->database_path;
    return n;
}

int cli_check_read_options(cli_options *opts) {
    cli_command cmd = opts->command;
    if ((opts->read1 != NULL) != (opts->read2 != NULL)) {
        cli_usage_error(cmd, "paired reads need both -1 FILE and -2 FILE");
        return -1;
    }
    if (opts->read1 && opts->target_count > 0) {
        cli_usage_error(cmd, "give paired files with -1 and -2 only, not also as targets ('%s')", opts->targets[0]);
        return -1;
    }
    if (opts->read1 && opts->lines) {
        cli_usage_error(cmd, "--lines reads text; paired files are FASTA or FASTQ");
        return -1;
    }
    if (opts->read1 && strcmp(opts->read1, "-") == 0 && strcmp(opts->read2, "-") == 0) {
        cli_usage_error(cmd, "standard input cannot hold both mates");
        return -1;
    }
    return 0;
}

int cli_filter_main(int argc, char **argv) {
    cli_options opts;
    int parsed = cli_parse_options(CLI_COMMAND_FILTER, argc, argv, &opts);
    if (parsed != CLI_PARSE_OK) {
        cli_options_free(&opts);
        return parsed == CLI_PARSE_HELP ? cli_finish_stdout() : CLI_EXIT_ERROR;
    }
    int exit_status = CLI_EXIT_ERROR;
    sm_db *db = NULL;
    filter_state f;
    memset(&f, 0, sizeof f);
    f.invert = opts.invert;
    char *names[OUT_KINDS][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
    int paired = opts.read1 != NULL;
    unsigned mates = paired ? 2 : 1;
    if (cli_check_read_options(&opts) != 0) goto cleanup;

    /* The outputs: -o (standard output when no other is named). */
    const char *given[OUT_KINDS] = {opts.output_path, opts.matched_path, opts.unmatched_path};
    if (!given[OUT_CHOSEN] && !given[OUT_MATCHED] && !given[OUT_UNMATCHED]) given[OUT_CHOSEN] = "-";
    for (int kind = 0; kind < OUT_KINDS; kind++) {
        if (!given[kind]) continue;
        if (paired && (!strchr(given[kind], '#') || strcmp(given[kind], "-") == 0)) {
            if (strcmp(given[kind], "-") == 0)
                cli_usage_error(CLI_COMMAND_FILTER, "paired reads need named outputs: -o, --matched or "
                                "--unmatched, each with a '#' for the mate (out_#.fq)");
            else
                cli_usage_error(CLI_COMMAND_FILTER, "%s: a paired output name needs a '#', replaced by 1 and 2 "
                                "(out_#.fq)", given[kind]);
            goto cleanup;
        }
        for (unsigned m = 0; m < mates; m++) {
            names[kind][m] = paired ? sm_mate_path(given[kind], m + 1) : strdup(given[kind]);
            if (!names[kind][m]) {
                cli_error("out of memory");
                goto cleanup;
            }
        }
    }
    /* No output may be an input, or another output. */
    {
        const char *inputs[64];
        size_t n = cli_read_inputs(&opts, inputs);
        for (int kind = 0; kind < OUT_KINDS; kind++)
            for (unsigned m = 0; m < mates; m++) {
                if (!names[kind][m]) continue;
                if (cli_check_output(names[kind][m], inputs, n) != 0) goto cleanup;
                for (int k2 = 0; k2 < OUT_KINDS; k2++)
                    for (unsigned m2 = 0; m2 < mates; m2++)
                        if ((k2 != kind || m2 != m) && names[k2][m2] && strcmp(names[k2][m2], "-") != 0 &&
                            strcmp(names[k2][m2], names[kind][m]) == 0) {
                            cli_usage_error(CLI_COMMAND_FILTER, "%s is named for two outputs", names[kind][m]);
                            goto cleanup;
                        }
            }
    }
    if (cli_stats_open(&opts, &f.stats) != 0 || cli_load_database(&opts, &db) != 0) goto cleanup;
    sm_db_info info;
    sm_db_get_info(db, &info);
    sm_error err;
    if (info.alphabet == SM_ALPHABET_TEXT && !opts.lines) {
        cli_usage_error(CLI_COMMAND_FILTER, "filter writes records: with --alphabet text give --lines (each line a "
                        "record)");
        goto cleanup;
    }
    if (info.alphabet == SM_ALPHABET_DNA && opts.lines) {
        cli_usage_error(CLI_COMMAND_FILTER, "--lines needs a text database; %s was compiled for dna",
                        opts.database_path ? opts.database_path : "it");
        goto cleanup;
    }
    for (int kind = 0; kind < OUT_KINDS; kind++)
        for (unsigned m = 0; m < mates; m++)
            if (names[kind][m] && !(f.out[kind][m] = sm_record_file_open(names[kind][m], &err))) {
                cli_error("%s", err.message);
                goto cleanup;
            }

    cli_reads_job job;
    memset(&job, 0, sizeof job);
    job.opts = &opts;
    job.on_record = filter_record;
    job.summary = filter_summary;
    job.ctx = &f;
    job.stats = f.stats;
    f.pairs = paired;
    int rc = cli_reads_run(&job, db);
    /* a broken output stopped the scan: its close reports it */
    int write_failed = 0;
    for (int kind = 0; kind < OUT_KINDS; kind++)
        for (unsigned m = 0; m < mates; m++) {
            if (!f.out[kind][m]) continue;
            if (cli_close_records(f.out[kind][m], rc == 0) != 0) write_failed = 1;
            f.out[kind][m] = NULL;
        }
    sm_stats_add(f.stats, "reads", "matched", f.matched);
    if (rc != 0 || write_failed || cli_stats_write(f.stats, opts.stats_path) != 0) goto cleanup;
    /* a read command succeeds whatever it kept, so that a clean sample passes set -e and workflow managers */
    exit_status = CLI_EXIT_RAN;

cleanup:
    for (int kind = 0; kind < OUT_KINDS; kind++)
        for (unsigned m = 0; m < mates; m++) {
            if (f.out[kind][m]) cli_close_records(f.out[kind][m], 0);
            free(names[kind][m]);
        }
    sm_stats_free(f.stats);
    if (db) sm_db_free(db);
    cli_options_free(&opts);
    return exit_status;
}
