/* Pattern lists and pattern files.
 *
 * A pattern file is FASTA when its first non-blank byte is '>', otherwise one
 * pattern per line. Symbols are not checked here: the compiler does that for
 * the chosen alphabet.
 *   - FASTA: name = header's first word (an empty one makes the sequence the
 *     name); sequence lines are joined with \r, spaces and tabs removed; a
 *     record whose sequence is empty is an error naming its header line.
 *   - Lines: the line without its \n or \r\n is both name and sequence; lines
 *     of only spaces, tabs and \r are skipped.
 * An empty file adds nothing and is not an error.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/seqio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/source.h"

#define PATTERN_READ_CAP (256u << 10)

int sm_pattern_list_add(sm_pattern_list *list, const char *name, const char *seq, size_t len) {
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        sm_pattern *items = realloc(list->items, cap * sizeof *items);
        if (!items) return SM_ERR_NOMEM;
        list->items = items;
        list->cap = cap;
    }
    size_t name_len = name ? strlen(name) : len;
    if (len > SIZE_MAX / 2 - name_len - 2) return SM_ERR_NOMEM;
    /* one block: sequence, NUL, name, NUL; freed through .seq */
    char *block = malloc(len + name_len + 2);
    if (!block) return SM_ERR_NOMEM;
    if (len) memcpy(block, seq, len);
    block[len] = '\0';
    if (name_len) memcpy(block + len + 1, name ? name : seq, name_len);
    block[len + 1 + name_len] = '\0';
    sm_pattern *p = &list->items[list->count++];
    p->seq = block;
    p->len = len;
    p->name = block + len + 1;
    return SM_OK;
}

void sm_pattern_list_free(sm_pattern_list *list) {
    if (!list) return;
    for (size_t i = 0; i < list->count; i++) free((void *)list->items[i].seq);
    free(list->items);
    list->items = NULL;
    list->count = list->cap = 0;
}

/* ------------------------------------------------------------ line input */

typedef struct {
    sm_source *src;
    char *buf;
    size_t pos, end;
    int eof;
    char *line; /* current line, NUL-terminated, without \n or trailing \r */
    size_t len, cap;
    uint64_t number;
} line_input;

static int grow(char **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    char *q = realloc(*p, c);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Returns 1 with the next line, 0 at the end of input, or an sm_status < 0
   negated (with err filled). */
static int next_line(line_input *in, sm_error *err) {
    in->len = 0;
    int got = 0;
    for (;;) {
        if (in->pos == in->end) {
            if (in->eof) break;
            long n = sm_io_source_read(in->src, in->buf, PATTERN_READ_CAP, err);
            if (n < 0) return -err->code;
            if (n == 0) {
                in->eof = 1;
                break;
            }
            in->pos = 0;
            in->end = (size_t)n;
        }
        got = 1;
        const char *p = in->buf + in->pos;
        size_t avail = in->end - in->pos;
        const char *nl = memchr(p, '\n', avail);
        size_t seg = nl ? (size_t)(nl - p) : avail;
        if (grow(&in->line, &in->cap, in->len + seg + 1) < 0) {
            sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", sm_io_source_name(in->src));
            return -SM_ERR_NOMEM;
        }
        memcpy(in->line + in->len, p, seg);
        in->len += seg;
        in->pos += seg + (nl != NULL);
        if (nl) break;
    }
    if (!got) return 0;
    in->number++;
    if (in->len && in->line[in->len - 1] == '\r') in->len--;
    in->line[in->len] = '\0';
    return 1;
}

static int is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

/* ----------------------------------------------------------- the reader */

/* A line is its pattern's name too. Names are C strings, so a NUL byte in
   the line shows as \0 in the name rather than cutting it short. */
static int add_line_pattern(sm_pattern_list *list, const char *s, size_t n) {
    if (!memchr(s, '\0', n)) return sm_pattern_list_add(list, NULL, s, n);
    char *name = malloc(2 * n + 1);
    if (!name) return SM_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0') name[k++] = '\\';
        name[k++] = s[i] == '\0' ? '0' : s[i];
    }
    name[k] = '\0';
    int rc = sm_pattern_list_add(list, name, s, n);
    free(name);
    return rc;
}

typedef struct {
    char *name, *seq;
    size_t name_cap, seq_len, seq_cap;
    uint64_t header_line;
    int open;
} fasta_pattern;

static int fasta_flush(fasta_pattern *fp, sm_pattern_list *list, const char *shown,
                       sm_error *err) {
    if (!fp->open) return SM_OK;
    fp->open = 0;
    if (fp->seq_len == 0)
        return sm_io_error(err, SM_ERR_PATTERN, "%s: line %llu: pattern '%.100s' is empty", shown,
                           (unsigned long long)fp->header_line, fp->name);
    int rc = sm_pattern_list_add(list, fp->name[0] ? fp->name : NULL, fp->seq, fp->seq_len);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s: out of memory", shown);
    return SM_OK;
}

int sm_pattern_list_read(sm_pattern_list *list, const char *path, sm_error *err) {
    sm_error local;
    if (!err) err = &local;
    line_input in = {0};
    int rc = sm_io_source_open(path, &in.src, err);
    if (rc != SM_OK) return rc;
    const char *shown = sm_io_source_name(in.src);
    size_t first = list->count;
    fasta_pattern fp = {0};
    int fasta = -1; /* undecided until the first non-blank line */
    in.buf = malloc(PATTERN_READ_CAP);
    if (!in.buf) {
        rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
        goto done;
    }
    for (;;) {
        int got = next_line(&in, err);
        if (got < 0) {
            rc = -got;
            goto done;
        }
        if (got == 0) break;
        const char *s = in.line;
        size_t n = in.len;
        if (fasta < 0) {
            if (is_blank(s, n)) continue;
            size_t i = 0;
            while (s[i] == ' ' || s[i] == '\t') i++;
            fasta = s[i] == '>';
        }
        if (!fasta) {
            if (is_blank(s, n)) continue;
            rc = add_line_pattern(list, s, n);
            if (rc != SM_OK) {
                sm_io_error(err, rc, "%s: out of memory", shown);
                goto done;
            }
            continue;
        }
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i < n && s[i] == '>') {
            rc = fasta_flush(&fp, list, shown, err);
            if (rc != SM_OK) goto done;
            size_t a = i + 1, b = a;
            while (b < n && (unsigned char)s[b] > ' ') b++;
            if (grow(&fp.name, &fp.name_cap, b - a + 1) < 0) {
                rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
                goto done;
            }
            memcpy(fp.name, s + a, b - a);
            fp.name[b - a] = '\0';
            fp.seq_len = 0;
            fp.header_line = in.number;
            fp.open = 1;
            continue;
        }
        if (grow(&fp.seq, &fp.seq_cap, fp.seq_len + n + 1) < 0) {
            rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
            goto done;
        }
        for (size_t j = 0; j < n; j++) {
            char c = s[j];
            fp.seq[fp.seq_len] = c;
            fp.seq_len += c != ' ' && c != '\t' && c != '\r';
        }
    }
    rc = fasta_flush(&fp, list, shown, err);
done:
    if (rc != SM_OK)
        while (list->count > first) free((void *)list->items[--list->count].seq);
    free(fp.name);
    free(fp.seq);
    free(in.line);
    free(in.buf);
    sm_io_source_close(in.src);
    return rc;
}
