/* Values as a command line writes them and names made from them
 * (include/seqmatch_output.h): counts, sizes with K/M/G/T suffixes, a
 * share I/N, a command line quoted for a shell (SAM's @PG CL), a mate's
 * file name from a name with '#'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_output.h"

int sm_parse_count(const char *text, unsigned long long max, unsigned long long *value) {
    if (text[0] < '0' || text[0] > '9') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || v > max) return -1;
    *value = v;
    return 0;
}

int sm_parse_size(const char *text, uint64_t *value) {
    if (text[0] < '0' || text[0] > '9') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0) return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift != 0 && (*end == 'i' || *end == 'I')) {
        end++;
        if (*end != 'b' && *end != 'B') return -1;
    }
    if (*end == 'b' || *end == 'B') end++;
    if (*end != '\0') return -1;
    if (shift != 0 && v > (UINT64_MAX >> shift)) return -1;
    *value = (uint64_t)v << shift;
    return 0;
}

int sm_parse_share(const char *text, unsigned *index, unsigned *count) {
    unsigned long long i, n;
    const char *slash = strchr(text, '/');
    if (!slash || slash == text || slash - text > 20) return -1;
    char head[24];
    memcpy(head, text, (size_t)(slash - text));
    head[slash - text] = 0;
    if (sm_parse_count(head, 1u << 20, &i) != 0 || sm_parse_count(slash + 1, 1u << 20, &n) != 0 || n == 0 || i >= n)
        return -1;
    *index = (unsigned)i;
    *count = (unsigned)n;
    return 0;
}

char *sm_command_line(int argc, char *const *argv, const char *program) {
    size_t n = 1;
    for (int i = 0; i < argc; i++) n += 3 + 4 * strlen(i == 0 ? program : argv[i]);
    char *line = malloc(n), *p = line;
    if (!line) return NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = i == 0 ? program : argv[i];
        int quote = !*a || strpbrk(a, " \t\n\r'\"\\$`*?[]{}()<>|&;#~!") != NULL;
        if (i) *p++ = ' ';
        if (quote) *p++ = '\'';
        for (; *a; a++) {
            char c = *a == '\t' || *a == '\n' || *a == '\r' ? ' ' : *a;
            if (c == '\'' && quote) {
                memcpy(p, "'\\''", 4); /* ' ends the quote, \' is the quote, ' reopens it */
                p += 4;
            } else {
                *p++ = c;
            }
        }
        if (quote) *p++ = '\'';
    }
    *p = '\0';
    return line;
}

char *sm_mate_path(const char *name, unsigned mate) {
    size_t n = strlen(name);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    memcpy(out, name, n + 1);
    char *hash = strchr(out, '#');
    if (hash) *hash = (char)('0' + mate);
    return out;
}

const char *sm_file_name_problem(const char *name) {
    if (!name[0]) return "is empty";
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return "is not a file name";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p == '/') return "holds a '/'";
        if (*p < 0x20 || *p == 0x7f) return "holds a control byte";
    }
    return NULL;
}

void sm_put_escaped(const char *text, FILE *out) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n') fputs("\\n", out);
        else if (*p == '\r') fputs("\\r", out);
        else if (*p == '\t') fputs("\\t", out);
        else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\x%02X", *p);
        else fputc(*p, out);
    }
}
