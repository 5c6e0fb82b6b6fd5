/* seqmatch: subcommand dispatch, --help and --version. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Prints a formatted message on stderr as one line: control bytes (a line
   break in a file name or pattern, a terminal escape sequence) are shown as
   \n, \r, \t or \xNN. */
static void put_message(const char *fmt, va_list ap) {
    char small[1024] = "";
    char *text = small;
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, copy);
    else
        text = small;
    va_end(copy);
    sm_put_escaped(text, stderr);
    if (text != small) free(text);
}

int cli_errors_muted;

void cli_error(const char *fmt, ...) {
    if (cli_errors_muted) return;
    va_list ap;
    fputs("seqmatch: ", stderr);
    va_start(ap, fmt);
    put_message(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *cli_command_name(cli_command command) {
    switch (command) {
    case CLI_COMMAND_COMPILE: return "compile";
    case CLI_COMMAND_FILTER: return "filter";
    case CLI_COMMAND_DEMUX: return "demux";
    case CLI_COMMAND_DFA: return "dfa";
    case CLI_COMMAND_MERGE: return "merge";
    case CLI_COMMAND_TRIM: return "trim";
    default: return "search";
    }
}

void cli_usage_error(cli_command command, const char *fmt, ...) {
    if (cli_errors_muted) return;
    va_list ap;
    fputs("seqmatch: ", stderr);
    va_start(ap, fmt);
    put_message(fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try 'seqmatch %s --help')\n", cli_command_name(command));
}

const char *cli_command_line = "seqmatch";

static int is_help(const char *arg) {
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static int is_version(const char *arg) {
    return strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0;
}

int cli_finish_stdout(void) {
    /* errno still tells why an earlier buffered write failed when the flush
       itself has nothing left to write */
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    int e = errno;
    if (e == EPIPE) return CLI_EXIT_ERROR;
    if (e != 0) cli_error("standard output: %s", strerror(e));
    else cli_error("standard output: write error");
    return CLI_EXIT_ERROR;
}

static int run_command(int argc, char **argv) {
    if (argc < 2) {
        cli_error("no command given; usage: seqmatch search|filter|demux|trim|compile|dfa|merge [options] "
                  "(try 'seqmatch --help')");
        return CLI_EXIT_ERROR;
    }
    const char *command = argv[1];
    if (is_help(command)) {
        cli_print_main_help(stdout);
        return cli_finish_stdout();
    }
    if (is_version(command)) {
        cli_print_version(stdout);
        return cli_finish_stdout();
    }
    if (strcmp(command, "help") == 0) {
        if (argc > 2 && strcmp(argv[2], "search") == 0)
            cli_print_search_help(stdout);
        else if (argc > 2 && strcmp(argv[2], "compile") == 0)
            cli_print_compile_help(stdout);
        else if (argc > 2 && strcmp(argv[2], "filter") == 0)
            cli_print_filter_help(stdout);
        else if (argc > 2 && strcmp(argv[2], "demux") == 0)
            cli_print_demux_help(stdout);
        else if (argc > 2 && strcmp(argv[2], "trim") == 0)
            cli_print_trim_help(stdout);
        else
            cli_print_main_help(stdout);
        return cli_finish_stdout();
    }
    if (strcmp(command, "search") == 0) return cli_search_main(argc - 1, argv + 1);
    if (strcmp(command, "compile") == 0) return cli_compile_main(argc - 1, argv + 1);
    if (strcmp(command, "dfa") == 0) return cli_dfa_main(argc - 1, argv + 1);
    if (strcmp(command, "filter") == 0) return cli_filter_main(argc - 1, argv + 1);
    if (strcmp(command, "demux") == 0) return cli_demux_main(argc - 1, argv + 1);
    if (strcmp(command, "merge") == 0) return cli_merge_main(argc - 1, argv + 1);
    if (strcmp(command, "trim") == 0) return cli_trim_main(argc - 1, argv + 1);
    /* Options first (seqmatch -e ACGT file.fa) mean search, as in grep. */
    if (command[0] == '-' && command[1] != '\0') return cli_search_main(argc, argv);
    cli_error("unknown command '%s'; the commands are 'search', 'filter', 'demux', 'trim', 'compile', 'dfa' and "
              "'merge' "
              "(try 'seqmatch --help')", command);
    return CLI_EXIT_ERROR;
}

int main(int argc, char **argv) {
    int status = cli_dist_init(&argc, &argv);
    if (status != 0) return status;
    char *line = sm_command_line(argc, argv, "seqmatch");
    if (line) cli_command_line = line;
    /* under MPI only search and dfa are spread; the other ranks sit the rest out */
    const char *c = argc >= 2 ? argv[1] : "";
    int spread = strcmp(c, "search") == 0 || strcmp(c, "dfa") == 0 ||
                 (c[0] == '-' && c[1] != '\0' && strcmp(c, "-h") != 0 && strcmp(c, "--help") != 0 &&
                  strcmp(c, "-V") != 0 && strcmp(c, "--version") != 0);
    if (cli_dist_rank_only() && !spread) return cli_dist_finish(0);
    return cli_dist_finish(run_command(argc, argv));
}
