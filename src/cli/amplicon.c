/* seqmatch amplicon: in-silico PCR; the pairing and the output are the
 * library's (sm_amplicon_*, seqmatch_reader.h). */
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"

void cli_print_amplicon_help(FILE *out) {
    fputs(
        "Usage: seqmatch amplicon [options] (-p PAIRS.tsv | -F FWD -R REV) [TARGET...]\n"
        "\n"
        "In-silico PCR: the products of primer pairs in FASTA or FASTQ records (gzip,\n"
        "BGZF or zstd; no TARGET reads standard input). Every primer of every pair is\n"
        "searched in one pass, on both strands.\n"
        "  -p, --patterns FILE   primer pairs, one a line: name<TAB>forward<TAB>reverse\n"
        "                        (5' to 3', IUPAC codes allowed; '#' lines skipped)\n"
        "  -F, --forward SEQ     one pair on the command line (named 'amplicon') with\n"
        "  -R, --reverse SEQ     its reverse primer\n"
        "  -m, --mismatches K    up to K mismatches in each primer; -k, --edits K edits\n"
        "  --text-iupac          N and IUPAC codes in targets match the primers' bases\n"
        "  --min-size N          products of at least N bases (default 1) and\n"
        "  --max-size N          at most N bases (default 10000)\n"
        "What a product is: a forward primer site F on a strand and, downstream of it on\n"
        "that strand, a reverse primer site R (the reverse primer's reverse complement):\n"
        "R starts at or after F's start, the product runs from F's first base to R's last\n"
        "and its size is within --min-size..--max-size. Every such pair of sites is a\n"
        "product (nested and overlapping ones too); on the - strand the same holds on the\n"
        "reverse complement, reported in forward coordinates with strand '-'.\n"
        "  --longest             seqkit amplicon's rule instead: per record, pair and\n"
        "                        strand only the first F with the last R (if in that\n"
        "                        order), then the size window (docs/amplicon.md)\n"
        "\n"
        "Output (-o, --output FILE, gzip for FILE.gz; default standard output), 0-based\n"
        "half-open:\n"
        "  --format tsv          record, start, end, strand, pair, size, forward_errors,\n"
        "                        reverse_errors (a '#' header; --no-header without it);\n"
        "                        --sequence adds the product, read on its strand\n"
        "  --format bed          record, start, end, pair, score (1000 x primer bases\n"
        "                        matched / primer bases), strand\n"
        "  --format fasta        >PAIR::RECORD:START-END(STRAND), sequence on one line\n"
        "  -H, --with-filename   name the file in each product (the default with several\n"
        "                        targets); --no-filename never. In (record, start, end,\n"
        "                        pair, strand) order\n"
        "  --stats-json FILE     a JSON report: records, bases, products per pair\n"
        "Performance: -t, --threads N (default all cores), --chunk-size, --engine,\n"
        "--build-threads, --max-memory; --progress / --no-progress. --help, --version.\n"
        "Example: seqmatch amplicon -F GTGYCAGCMGCCGCGGTAA -R GGACTACNVGGGTWTCTAAT g.fa\n"
        "Exit status: 0 when a product was found, 1 when none, 2 on error.\n",
        out);
}

int cli_amplicon_main(int argc, char **argv) {
    cli_options opts;
    int parsed = cli_parse_options(CLI_COMMAND_AMPLICON, argc, argv, &opts);
    if (parsed != CLI_PARSE_OK) {
        cli_options_free(&opts);
        return parsed == CLI_PARSE_HELP ? cli_finish_stdout() : CLI_EXIT_ERROR;
    }
    int status = CLI_EXIT_ERROR;
    sm_amplicon_set set = {0};
    sm_db *db = NULL;
    sm_amplicon_finder *finder = NULL;
    sm_progress *progress = NULL;
    cli_writer writer = {0};
    sm_error err = {0};
    const char *primer[3] = {NULL, NULL, NULL}; /* -F, -R */
    sm_amplicon_options ao = {.set = &set, .header = opts.header, .sequence = opts.sequence,
                              .rule = {opts.min_size ? opts.min_size : 1, opts.max_size ? opts.max_size : 10000,
                                       opts.longest}, .reader_threads = cli_threads(opts.threads)};
    for (size_t i = 0; i < opts.source_count; i++) {
        if (!opts.sources[i].is_file) primer[opts.sources[i].mate] = opts.sources[i].text;
        else if (sm_amplicon_set_read(&set, opts.sources[i].text, &err) != SM_OK) goto failed;
    }
    if (opts.amplicon_format && sm_amplicon_format_from_name(opts.amplicon_format, &ao.format) != SM_OK) {
        cli_usage_error(CLI_COMMAND_AMPLICON, "--format: '%s' is not tsv, bed or fasta", opts.amplicon_format);
        goto done;
    }
    if (!primer[1] != !primer[2] || ao.rule.min_size > ao.rule.max_size || (opts.sequence && ao.format)) {
        cli_usage_error(CLI_COMMAND_AMPLICON, "%s", !primer[1] != !primer[2] ? "-F and -R go together (one pair)"
                        : opts.sequence ? "--sequence adds a column to tsv (fasta is the sequences)"
                                        : "--min-size is above --max-size");
        goto done;
    }
    if (primer[1] && sm_amplicon_set_add(&set, "amplicon", primer[1], primer[2], &err) != SM_OK) goto failed;
    if (cli_check_error_bound(&set.patterns, &opts.compile, NULL) != 0) goto done;
    opts.compile.strands = SM_STRAND_BOTH;
    if (sm_compile(set.patterns.items, set.patterns.count, &opts.compile, &db, &err) != SM_OK) goto failed;
    char *stdin_target[] = {"-"}, *const *targets = opts.target_count ? opts.targets : stdin_target;
    size_t count = opts.target_count ? opts.target_count : 1;
    ao.show_file = opts.filename == CLI_FILENAME_ON || (opts.filename == CLI_FILENAME_AUTO && count > 1);
    if (cli_check_output(opts.output_path, (const char *const *)targets, count) != 0 ||
        cli_stats_open(&opts, &ao.stats) != 0 || cli_writer_open(&writer, opts.output_path) != 0)
        goto done;
    ao.out = writer.w;
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = opts.threads;
    ro.chunk_size = opts.chunk_size;
    if (!(ao.progress = progress = sm_progress_new(stderr, opts.progress == CLI_PROGRESS_ON ||
                                                    (opts.progress == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO)))))
        goto failed;
    sm_progress_set_files(progress, targets, count);
    if (sm_amplicon_finder_new(db, &ro, &ao, &finder, &err) != SM_OK) goto failed;
    int rc = SM_OK;
    for (size_t i = 0; i < count && rc == SM_OK; i++) rc = sm_amplicon_finder_run(finder, targets[i], &err);
    sm_progress_clear(progress);
    if (rc != SM_OK && !cli_writer_failed(&writer)) goto failed;
    sm_amplicon_stats st;
    sm_amplicon_finder_stats(finder, &st);
    char a[32], b[32], what[96];
    snprintf(what, sizeof what, "%s records, %s products", sm_thousands(st.records, a, sizeof a),
             sm_thousands(st.products, b, sizeof b));
    sm_progress_summary(progress, CLI_PROGRESS_PREFIX, what);
    if (rc == SM_OK && cli_stats_write(ao.stats, opts.stats_path) != 0) goto done;
    status = rc != SM_OK ? CLI_EXIT_ERROR : st.products ? CLI_EXIT_HIT : CLI_EXIT_NO_HIT;
    goto done;
failed:
    cli_error_sequences_only(err.message[0] ? err.message : "out of memory");
done:
    if (writer.w && cli_writer_close(&writer, status != CLI_EXIT_ERROR) != 0) {
        cli_writer_report(&writer);
        status = CLI_EXIT_ERROR;
    }
    sm_progress_free(progress);
    sm_stats_free(ao.stats);
    sm_amplicon_finder_free(finder);
    if (db) sm_db_free(db);
    sm_amplicon_set_free(&set);
    cli_options_free(&opts);
    return status;
}
