/* Building a database from the command line, and the compile command. */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Prints a library error; the library's messages already name the file,
   pattern or line, so only the status name is added when they are empty. */
static void report_library_error(const sm_error *err, int status) {
    if (err->message[0]) cli_error("%s", err->message);
    else cli_error("%s", sm_strerror(status));
}

/* Reads every source; *exact gets a flag per pattern (its source's
   --exact-patterns), or stays NULL when no source is exact. */
static int read_patterns(const cli_options *opts, sm_pattern_list *list, unsigned char **exact) {
    *exact = NULL;
    for (size_t i = 0; i < opts->source_count; i++) {
        const cli_pattern_source *source = &opts->sources[i];
        sm_error err;
        char note[512];
        int status = sm_pattern_list_add_source(list, source->is_file, source->text, opts->compile.alphabet,
                                                source->exact, exact, note, sizeof note, &err);
        if (note[0]) fprintf(stderr, "seqmatch: warning: %s\n", note);
        if (status != SM_OK) {
            report_library_error(&err, status);
            return -1;
        }
    }
    if (list->count == 0) {
        /* Only pattern files can be empty: every -e adds one pattern. */
        if (opts->source_count == 1)
            cli_error("%s: no patterns in the file", opts->sources[0].text);
        else
            cli_error("no patterns in the pattern files");
        return -1;
    }
    return 0;
}

/* What the inputs' records are like, for the approximate planner's cost
   model: text lines (--lines) and FASTQ reads are short (their engines run
   byte by byte, not in SIMD lanes); genomes are long (0). The first target
   decides: a FASTQ name (.fq, .fastq, compressed or not) or a regular file
   whose first byte is '@'. */
#define LINE_RECORD_BYTES 100u

static uint32_t typical_record(const cli_options *opts) {
    if (opts->lines) return LINE_RECORD_BYTES;
    return opts->target_count ? sm_file_typical_record(opts->targets[0]) : 0;
}

int cli_load_database(const cli_options *opts, sm_db **db) {
    sm_error err;
    memset(&err, 0, sizeof err);
    *db = NULL;
    if (opts->database_path) {
        int status = sm_db_load(opts->database_path, db, &err);
        if (status != SM_OK) {
            report_library_error(&err, status);
            return CLI_EXIT_ERROR;
        }
        return 0;
    }
    sm_pattern_list list;
    memset(&list, 0, sizeof list);
    unsigned char *exact = NULL;
    if (read_patterns(opts, &list, &exact) != 0 || cli_check_error_bound(&list, &opts->compile, exact) != 0) {
        free(exact);
        sm_pattern_list_free(&list);
        return CLI_EXIT_ERROR;
    }
    sm_compile_options co = opts->compile;
    if (co.match != SM_MATCH_EXACT) co.typical_record = typical_record(opts);
    co.exact = exact;
    int status = sm_compile(list.items, list.count, &co, db, &err);
    free(exact);
    if (status != SM_OK) {
        sm_pattern_list_explain(&list, &opts->compile, status, &err);
        cli_error("%s", err.message);
    }
    sm_pattern_list_free(&list);
    if (status != SM_OK) {
        *db = NULL;
        return CLI_EXIT_ERROR;
    }
    /* a forced approximate engine far slower than auto's choice still runs */
    char note[512];
    if (opts->compile.engine != SM_ENGINE_AUTO && opts->compile.match != SM_MATCH_EXACT &&
        opts->compile.backend != SM_BACKEND_CUDA && !cli_errors_muted &&
        sm_db_engine_slowdown(*db, opts->compile.engine, co.typical_record, note, sizeof note))
        fprintf(stderr, "seqmatch: warning: %s\n", note);
    return 0;
}

/* As sm_db_save, through the CLI's output file: a regular file is written
   beside its name and renamed over it, a device or FIFO written in place,
   and an interrupted write leaves nothing behind. */
static int save_database(const sm_db *db, const char *path) {
    sm_outfile *out = cli_outfile_open(path);
    if (!out) return -1;
    size_t size = 0;
    const void *bytes = sm_db_bytes(db, &size);
    errno = 0;
    int e = fwrite(bytes, 1, size, sm_outfile_file(out)) == size ? 0 : errno ? errno : EIO;
    int closed = sm_outfile_close(out, !e);
    if (!e) e = closed;
    if (e) cli_error("%s: %s", path, strerror(e));
    return e ? -1 : 0;
}

int cli_compile_main(int argc, char **argv) {
    cli_options opts;
    int parsed = cli_parse_options(CLI_COMMAND_COMPILE, argc, argv, &opts);
    if (parsed != CLI_PARSE_OK) {
        cli_options_free(&opts);
        if (parsed == CLI_PARSE_HELP) return cli_finish_stdout();
        return CLI_EXIT_ERROR;
    }

    sm_db *db = NULL;
    const char **inputs = calloc(opts.source_count + 1, sizeof *inputs);
    size_t n = 0;
    for (size_t i = 0; inputs && i < opts.source_count; i++)
        if (opts.sources[i].is_file) inputs[n++] = opts.sources[i].text;
    int rc = inputs && cli_check_output(opts.output_path, inputs, n) == 0 ? 0 : CLI_EXIT_ERROR;
    if (!inputs) cli_error("out of memory");
    free(inputs);
    if (rc == 0) rc = cli_load_database(&opts, &db);
    if (rc == 0 && opts.output_path && save_database(db, opts.output_path) != 0) rc = CLI_EXIT_ERROR;
    if (rc == 0 && opts.explain) {
        sm_db_explain(db, stdout, (opts.compile.engine != SM_ENGINE_AUTO ? SM_EXPLAIN_FORCED : 0u) |
                                      (opts.gpu ? SM_EXPLAIN_GPU : 0u));
        if (cli_finish_stdout() != 0) rc = CLI_EXIT_ERROR;
    }
    if (rc == 0 && opts.dump_dfa) {
        /* The automaton that accepts the texts ending with a pattern (A*X). */
        sm_error err;
        memset(&err, 0, sizeof err);
        sm_dfa *dfa = NULL;
        int status = sm_dfa_from_db(db, SM_DFA_ENDS, &dfa, &err);
        if (status == SM_OK) status = sm_dfa_dump(dfa, stdout, &err);
        sm_dfa_free(dfa);
        if (status == SM_ERR_IO && ferror(stdout)) {
            /* a failed write: say why (nothing for a reader that went away) */
            cli_finish_stdout();
            rc = CLI_EXIT_ERROR;
        } else if (status != SM_OK) {
            report_library_error(&err, status);
            rc = CLI_EXIT_ERROR;
        } else if (cli_finish_stdout() != 0) {
            rc = CLI_EXIT_ERROR;
        }
    }
    if (db) sm_db_free(db);
    cli_options_free(&opts);
    return rc;
}
