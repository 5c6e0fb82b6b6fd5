/* seqmatch: subcommand dispatch, --help and --version. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

void cli_error(const char *fmt, ...) {
    va_list ap;
    fputs("seqmatch: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *cli_command_name(cli_command command) {
    return command == CLI_COMMAND_COMPILE ? "compile" : "search";
}

void cli_usage_error(cli_command command, const char *fmt, ...) {
    va_list ap;
    fputs("seqmatch: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try 'seqmatch %s --help')\n", cli_command_name(command));
}

static int is_help(const char *arg) {
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static int is_version(const char *arg) {
    return strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0;
}

/* Help and version go to standard output; a failed write there is an error. */
static int finish_stdout(void) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("standard output: write error");
        return CLI_EXIT_ERROR;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        cli_error("no command given; usage: seqmatch search|compile|dfa [options] "
                  "(try 'seqmatch --help')");
        return CLI_EXIT_ERROR;
    }
    const char *command = argv[1];
    if (is_help(command)) {
        cli_print_main_help(stdout);
        return finish_stdout();
    }
    if (is_version(command)) {
        cli_print_version(stdout);
        return finish_stdout();
    }
    if (strcmp(command, "help") == 0) {
        if (argc > 2 && strcmp(argv[2], "search") == 0)
            cli_print_search_help(stdout);
        else if (argc > 2 && strcmp(argv[2], "compile") == 0)
            cli_print_compile_help(stdout);
        else
            cli_print_main_help(stdout);
        return finish_stdout();
    }
    if (strcmp(command, "search") == 0) return cli_search_main(argc - 1, argv + 1);
    if (strcmp(command, "compile") == 0) return cli_compile_main(argc - 1, argv + 1);
    if (strcmp(command, "dfa") == 0) return cli_dfa_main(argc - 1, argv + 1);
    /* Options first (seqmatch -e ACGT file.fa) mean search, as in grep. */
    if (command[0] == '-' && command[1] != '\0') return cli_search_main(argc, argv);
    cli_error("unknown command '%s'; the commands are 'search', 'compile' and 'dfa' "
              "(try 'seqmatch --help')", command);
    return CLI_EXIT_ERROR;
}
