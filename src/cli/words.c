/* Clear words for input that is most likely a mistake: a protein file
 * searched as DNA, an error bound that makes every window a hit (at or
 * above a pattern's length, or its bases other than N), a terminal left
 * waiting for standard input. */
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
    size_t letters, other;
    char list[16];
    (void)ctx;
    if (!sm_seq_looks_like_protein(seq, len, &letters, &other, list)) return;
    if (strcmp(file, "-") == 0) file = "stdin";
    fprintf(stderr,
            "seqmatch: warning: %s: record '%s' looks like protein, not DNA (%zu of its first %zu letters are no "
            "nucleotide code: %s); DNA patterns match only A, C, G and T there (for protein patterns use "
            "--alphabet text)\n",
            file, record ? record : "", other, letters, list);
}

/* DNA symbols that say something: all but N, which matches every base. */
static size_t informative_bases(const sm_pattern *p) {
    size_t n = 0;
    for (size_t i = 0; i < p->len; i++) n += p->seq[i] != 'N' && p->seq[i] != 'n';
    return n;
}

int cli_check_error_bound(const sm_pattern_list *list, const sm_compile_options *o, const unsigned char *exact) {
    uint32_t k = o->match == SM_MATCH_EXACT ? 0 : o->max_errors;
    for (size_t i = 0; i < list->count; i++) {
        const sm_pattern *p = &list->items[i];
        if (p->len == 0 || (exact && exact[i])) continue; /* empty: sm_compile says so; exact: no errors */
        /* N matches any base: a pattern with no more than k other bases is a hit at every window too */
        size_t informative = o->alphabet == SM_ALPHABET_DNA ? informative_bases(p) : p->len;
        if (p->len > k && informative > k) continue;
        char shown[48];
        const char *name = p->name ? p->name : p->seq;
        size_t name_len = p->name ? strlen(p->name) : p->len;
        snprintf(shown, sizeof shown, "%.*s%s", (int)(name_len > 40 ? 40 : name_len), name,
                 name_len > 40 ? "..." : "");
        char where[600];
        const char *at = cli_pattern_where(list, i, where, sizeof where);
        if (p->len > k) {
            if (informative == 0)
                cli_error("%spattern '%s' is all N, which matches every base: every window of its length would be a "
                          "hit", at, shown);
            else
                cli_error("%spattern '%s' has %zu base%s other than N, and %s %u allows that many %s or more: N "
                          "matches every base, so every window of its length would be a hit; use %s %zu or less",
                          at, shown, informative, informative == 1 ? "" : "s",
                          o->match == SM_MATCH_MISMATCHES ? "-m" : "-k", k,
                          o->match == SM_MATCH_MISMATCHES ? "mismatches" : "edits",
                          o->match == SM_MATCH_MISMATCHES ? "-m" : "-k", informative - 1);
            return -1;
        }
        if (o->match == SM_MATCH_MISMATCHES)
            cli_error("%spattern '%s' has %zu symbol%s, and -m %u allows that many mismatches or more: every window "
                      "of its length would be a hit; use -m %zu or less%s",
                      at, shown, p->len, p->len == 1 ? "" : "s", o->max_errors, p->len - 1,
                      o->pam ? " (errors count in the guide, not the PAM)" : "");
        else
            cli_error("%spattern '%s' has %zu symbol%s, and -k %u allows that many edits or more: deleting the "
                      "whole pattern would make every position a hit; use -k %zu or less%s",
                      at, shown, p->len, p->len == 1 ? "" : "s", o->max_errors, p->len - 1,
                      o->pam ? " (errors count in the guide, not the PAM)" : "");
        return -1;
    }
    return 0;
}
