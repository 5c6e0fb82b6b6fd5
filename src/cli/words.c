/* Clear words for input that is most likely a mistake: a protein file
 * searched as DNA, an error bound that makes every window a hit (at or
 * above a pattern's length, or its bases other than N), a terminal left
 * waiting for standard input; the reader's hint of --alphabet text left out
 * for the commands that read only sequences. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

void cli_note_stdin_terminal(void) {
    if (!isatty(STDIN_FILENO)) return;
    fputs("seqmatch: reading standard input (no file given); type or paste the sequences and end with Ctrl-D,\n"
          "seqmatch: or name the files after the options (--help shows how)\n",
          stderr);
}

void cli_check_protein(void *ctx, const char *file, const char *record, const uint8_t *seq, size_t len) {
    char note[700];
    (void)ctx;
    if (sm_protein_warning(file, record, seq, len, note, sizeof note)) fprintf(stderr, "seqmatch: warning: %s\n", note);
}

int cli_check_error_bound(const sm_pattern_list *list, const sm_compile_options *o, const unsigned char *exact) {
    sm_error err;
    if (sm_pattern_list_check_errors(list, o, exact, &err) == SM_OK) return 0;
    cli_error("%s", err.message);
    return -1;
}

void cli_error_sequences_only(const char *message) {
    static const char hint[] = "; use --alphabet text for plain text";
    const char *at = strstr(message, hint);
    if (at) cli_error("%.*s%s", (int)(at - message), message, at + sizeof hint - 1);
    else cli_error("%s", message);
}
