/* What the benchmark tools read: a whole file (a regular file or a pipe),
 * and pattern files of one pattern per line (a '\r' before a line's end
 * dropped, empty lines skipped); the tools' usual start, PATTERNS and
 * TARGET read and the patterns compiled. A failure ends the tool with
 * "TOOL: WHAT: WHY" and status 2. */
#ifndef SM_BENCH_INPUT_H
#define SM_BENCH_INPUT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"

static inline void bench_fail(const char *tool, const char *what, const char *why) {
    fprintf(stderr, "%s: %s: %s\n", tool, what, why);
    exit(2);
}

static inline char *bench_read_file(const char *tool, const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) bench_fail(tool, path, strerror(errno));
    size_t cap = 1 << 20, n = 0, got;
    char *buf = malloc(cap);
    if (!buf) bench_fail(tool, path, "out of memory");
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) bench_fail(tool, path, "out of memory");
            buf = bigger;
        }
    }
    if (ferror(f)) bench_fail(tool, path, "read error");
    fclose(f);
    *len = n;
    return buf;
}

/* The lines of text as patterns (pointing into text), *count of them. */
static inline sm_pattern *bench_patterns(const char *tool, const char *text, size_t len, size_t *count) {
    size_t cap = 1024, n = 0;
    sm_pattern *pats = malloc(cap * sizeof *pats);
    if (!pats) bench_fail(tool, "patterns", "out of memory");
    for (const char *line = text; line < text + len;) {
        const char *eol = memchr(line, '\n', (size_t)(text + len - line));
        if (!eol) eol = text + len;
        size_t l = (size_t)(eol - line);
        if (l && line[l - 1] == '\r') l--;
        if (l) {
            if (n == cap) {
                sm_pattern *bigger = realloc(pats, (cap *= 2) * sizeof *pats);
                if (!bigger) bench_fail(tool, "patterns", "out of memory");
                pats = bigger;
            }
            pats[n].name = NULL;
            pats[n].seq = line;
            pats[n].len = l;
            n++;
        }
        line = eol + 1;
    }
    *count = n;
    return pats;
}

/* A tool's two files: the patterns (pointing into pattern_text) and the
   target, read whole. */
typedef struct {
    char *pattern_text;
    sm_pattern *patterns;
    size_t count;
    char *text;
    size_t len;
} bench_inputs;

static inline void bench_inputs_read(const char *tool, const char *patterns, const char *target, bench_inputs *in) {
    size_t plen;
    in->pattern_text = bench_read_file(tool, patterns, &plen);
    in->text = bench_read_file(tool, target, &in->len);
    in->patterns = bench_patterns(tool, in->pattern_text, plen, &in->count);
}

static inline void bench_inputs_free(bench_inputs *in) {
    free(in->patterns);
    free(in->pattern_text);
    free(in->text);
}

static inline sm_db *bench_compile(const char *tool, const bench_inputs *in, const sm_compile_options *co) {
    sm_db *db;
    sm_error err;
    if (sm_compile(in->patterns, in->count, co, &db, &err) != SM_OK) bench_fail(tool, "compile", err.message);
    return db;
}

#endif /* SM_BENCH_INPUT_H */
