/* seqmatch: subcommand dispatch, --help and --version. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Prints "seqmatch: ", a formatted message and tail on stderr as one line
   written at once: control bytes (a line break in a file name or pattern, a
   terminal escape sequence) are shown as \n, \r, \t or \xNN. stderr is
   unbuffered, and a line written a byte at a time reached mpirun's
   forwarding only in part before a failing rank's MPI_Abort ended the job. */
static void put_line(const char *tail, const char *fmt, va_list ap) {
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
    char *line = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&line, &len);
    if (!out) out = stderr; /* no memory: written as it comes */
    fputs("seqmatch: ", out);
    sm_put_escaped(text, out);
    fputs(tail, out);
    fputc('\n', out);
    if (out != stderr && fclose(out) == 0) fwrite(line, 1, len, stderr);
    free(line);
    if (text != small) free(text);
}

int cli_errors_muted;

void cli_error(const char *fmt, ...) {
    if (cli_errors_muted) return;
    va_list ap;
    va_start(ap, fmt);
    put_line("", fmt, ap);
    va_end(ap);
}

/* Every subcommand: its name, its entry point and its help (NULL: the main help). */
static const struct { cli_command id; const char *name; int (*run)(int, char **); void (*help)(FILE *); } commands[] = {
    {CLI_COMMAND_SEARCH, "search", cli_search_main, cli_print_search_help},
    {CLI_COMMAND_COMPILE, "compile", cli_compile_main, cli_print_compile_help},
    {CLI_COMMAND_FILTER, "filter", cli_filter_main, cli_print_filter_help},
    {CLI_COMMAND_DEMUX, "demux", cli_demux_main, cli_print_demux_help},
    {CLI_COMMAND_TRIM, "trim", cli_trim_main, cli_print_trim_help},
    {CLI_COMMAND_AMPLICON, "amplicon", cli_amplicon_main, cli_print_amplicon_help},
    {CLI_COMMAND_DFA, "dfa", cli_dfa_main, NULL},
    {CLI_COMMAND_MERGE, "merge", cli_merge_main, NULL},
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

const char *cli_command_name(cli_command command) {
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (commands[i].id == command) return commands[i].name;
    return "search";
}

void cli_print_help(cli_command command, FILE *out) {
    size_t i = 0;
    while (i < COMMAND_COUNT && !(commands[i].id == command && commands[i].help)) i++;
    (i < COMMAND_COUNT ? commands[i].help : cli_print_main_help)(out);
}

void cli_usage_error(cli_command command, const char *fmt, ...) {
    if (cli_errors_muted) return;
    char tail[64];
    snprintf(tail, sizeof tail, " (try 'seqmatch %s --help')", cli_command_name(command));
    va_list ap;
    va_start(ap, fmt);
    put_line(tail, fmt, ap);
    va_end(ap);
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
        cli_error("no command given; usage: seqmatch search|filter|demux|trim|amplicon|compile|dfa|merge "
                  "[options] (try 'seqmatch --help')");
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
        cli_command which = (cli_command)0; /* none: the main help */
        for (size_t i = 0; i < COMMAND_COUNT && argc > 2; i++)
            if (strcmp(argv[2], commands[i].name) == 0) which = commands[i].id;
        cli_print_help(which, stdout);
        return cli_finish_stdout();
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(command, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    /* Options first (seqmatch -e ACGT file.fa) mean search, as in grep. */
    if (command[0] == '-' && command[1] != '\0') return cli_search_main(argc, argv);
    cli_error("unknown command '%s'; the commands are 'search', 'filter', 'demux', 'trim', 'amplicon', "
              "'compile', 'dfa' and 'merge' (try 'seqmatch --help')", command);
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
