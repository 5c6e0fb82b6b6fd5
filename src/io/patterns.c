/* Pattern lists and pattern files.
 *
 * A pattern file is FASTA when its first non-blank byte is '>', otherwise one
 * pattern per line. Symbols are not checked here: the compiler does that for
 * the chosen alphabet.
 *   - Lines end with \n, \r\n or a lone \r; a UTF-8 byte-order mark at the
 *     start of the file is skipped.
 *   - FASTA: name = header's first word (an empty one makes the sequence the
 *     name); sequence lines are joined with spaces and tabs removed; a
 *     record whose sequence is empty is an error naming its header line.
 *   - Lines: the line without its line end is both name and sequence; lines
 *     of only spaces and tabs are skipped.
 *   - Tables (seqio.h says when): name and sequence on each line, split by
 *     a tab, a comma or a semicolon, fields possibly in double quotes.
 * An empty file adds nothing and is not an error.
 *
 * Absurd input is refused early, with memory kept small: a pattern (a line,
 * or a FASTA record's joined sequence) longer than PATTERN_MAX bytes, a file
 * whose first 4 KiB look binary (many control bytes: /dev/zero, an
 * executable, random data), and data compressed in a format the source does
 * not read.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/seqio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/source.h"

#define PATTERN_READ_CAP (256u << 10)
/* The longest pattern read from a file: far beyond any primer, probe or
   read-length pattern, and small enough that refusing an endless line costs
   little memory. */
#define PATTERN_MAX ((size_t)16 << 20)
/* Binary data: more than BINARY_CONTROL_MAX control bytes (NUL and the other
   bytes below 0x20 but tab and line ends, and 0x7F) among the first
   BINARY_SAMPLE bytes. Text patterns may hold a few; random data has about
   450, /dev/zero 4096. Shorter files are not judged. */
#define BINARY_SAMPLE 4096u
#define BINARY_CONTROL_MAX 256u

int sm_pattern_list_add(sm_pattern_list *list, const char *name, const char *seq, size_t len) {
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        sm_pattern *items = realloc(list->items, cap * sizeof *items);
        if (!items) return SM_ERR_NOMEM;
        list->items = items;
        const char **file = realloc(list->file, cap * sizeof *file);
        if (!file) return SM_ERR_NOMEM;
        list->file = file;
        uint64_t *line = realloc(list->line, cap * sizeof *line);
        if (!line) return SM_ERR_NOMEM;
        list->line = line;
        list->cap = cap;
    }
    list->file[list->count] = NULL;
    list->line[list->count] = 0;
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
    for (size_t i = 0; i < list->nfiles; i++) free(list->files[i]);
    free(list->items);
    free(list->file);
    free(list->line);
    free(list->files);
    list->items = NULL;
    list->file = NULL;
    list->line = NULL;
    list->files = NULL;
    list->count = list->cap = list->nfiles = 0;
}

/* ------------------------------------------------------------ line input */

typedef struct {
    sm_source *src;
    char *buf;
    size_t pos, end;
    int eof;
    int after_cr; /* the last line ended with \r: a \n next completes that line end */
    char *line;   /* current line, NUL-terminated, without its line end */
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

static int too_long(sm_error *err, const char *shown, uint64_t line) {
    return sm_io_error(err, SM_ERR_LIMIT, "%s: line %llu: a pattern longer than %zu bytes (16 MiB); is it a pattern file?",
                       shown, (unsigned long long)line, PATTERN_MAX);
}

/* The first block of the file: compressed data seqmatch does not read, a
   byte-order mark (skipped), or binary data. Returns SM_OK or the error. */
static int check_start(line_input *in, sm_error *err) {
    const char *shown = sm_io_source_name(in->src);
    const uint8_t *p = (const uint8_t *)in->buf;
    if (in->end >= 8 && memcmp(p, "SEQMATCH", 8) == 0)
        return sm_io_error(err, SM_ERR_FORMAT,
                           "%s is a pattern database (made by seqmatch compile), not a pattern file: search it with "
                           "-d %s",
                           shown, shown);
    int rc = sm_io_check_compression(shown, p, in->end, err);
    if (rc != SM_OK) return rc;
    if (in->end >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) in->pos = 3;
    if (in->end < BINARY_SAMPLE) return SM_OK;
    unsigned control = 0;
    for (size_t i = 0; i < BINARY_SAMPLE; i++) {
        uint8_t c = p[i];
        control += (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') || c == 0x7f;
    }
    if (control > BINARY_CONTROL_MAX)
        return sm_io_error(err, SM_ERR_FORMAT,
                           "%s: binary data (%u of the first %u bytes are control bytes); not a pattern file",
                           shown, control, BINARY_SAMPLE);
    return SM_OK;
}

/* Returns 1 with the next line, 0 at the end of input, or an sm_status < 0
   negated (with err filled). */
static int next_line(line_input *in, sm_error *err) {
    in->len = 0;
    int got = 0;
    for (;;) {
        if (in->pos == in->end) {
            if (in->eof) break;
            int first = in->number == 0 && !in->after_cr && in->end == 0;
            long n = sm_io_source_read(in->src, in->buf, PATTERN_READ_CAP, err);
            if (n < 0) return -err->code;
            if (n == 0) {
                in->eof = 1;
                break;
            }
            in->pos = 0;
            in->end = (size_t)n;
            if (first) {
                int rc = check_start(in, err);
                if (rc != SM_OK) return -rc;
                continue;
            }
        }
        if (in->after_cr) {
            in->after_cr = 0;
            if (in->buf[in->pos] == '\n') {
                in->pos++; /* the \n of a \r\n */
                continue;
            }
        }
        got = 1;
        const char *p = in->buf + in->pos;
        size_t avail = in->end - in->pos;
        const char *nl = memchr(p, '\n', avail);
        const char *cr = memchr(p, '\r', nl ? (size_t)(nl - p) : avail);
        if (cr) nl = cr;
        size_t seg = nl ? (size_t)(nl - p) : avail;
        if (seg > PATTERN_MAX - in->len) return -too_long(err, sm_io_source_name(in->src), in->number + 1);
        if (grow(&in->line, &in->cap, in->len + seg + 1) < 0) {
            sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", sm_io_source_name(in->src));
            return -SM_ERR_NOMEM;
        }
        memcpy(in->line + in->len, p, seg);
        in->len += seg;
        in->pos += seg + (nl != NULL);
        if (nl) {
            in->after_cr = *nl == '\r';
            break;
        }
    }
    if (!got) return 0;
    in->number++;
    in->line[in->len] = '\0';
    return 1;
}

static int is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
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

static int fasta_flush(fasta_pattern *fp, sm_pattern_list *list, const char *shown, const char *file,
                       sm_error *err) {
    if (!fp->open) return SM_OK;
    fp->open = 0;
    if (fp->seq_len == 0)
        return sm_io_error(err, SM_ERR_PATTERN, "%s: line %llu: pattern '%.100s' is empty", shown,
                           (unsigned long long)fp->header_line, fp->name);
    int rc = sm_pattern_list_add(list, fp->name[0] ? fp->name : NULL, fp->seq, fp->seq_len);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s: out of memory", shown);
    list->file[list->count - 1] = file;
    list->line[list->count - 1] = fp->header_line;
    return SM_OK;
}

/* ---------------------------------------------------------- tables */

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The separator a file's name says (.tsv, .csv, also gzip'd), or 0. */
static char table_by_name(const char *path) {
    if (ends_with(path, ".tsv") || ends_with(path, ".tsv.gz") || ends_with(path, ".TSV")) return '\t';
    if (ends_with(path, ".csv") || ends_with(path, ".csv.gz") || ends_with(path, ".CSV")) return ',';
    return 0;
}

/* DNA: a first line with a tab, a comma or a semicolon is a table row. */
static char table_by_content(const char *s, size_t n) {
    if (memchr(s, '\t', n)) return '\t';
    if (memchr(s, ',', n)) return ',';
    if (memchr(s, ';', n)) return ';';
    return 0;
}

static int is_iupac_letter(char c) {
    return c && strchr("ACGTURYSWKMBDHVNacgturyswkmbdhvn", c) != NULL;
}

/* A table's first row is a header when its sequence is no pattern. */
static int is_header(const char *seq, size_t n, int dna) {
    if (dna) {
        unsigned other = 0;
        for (size_t i = 0; i < n; i++)
            other += ((seq[i] >= 'A' && seq[i] <= 'Z') || (seq[i] >= 'a' && seq[i] <= 'z')) && !is_iupac_letter(seq[i]);
        return other >= 2;
    }
    static const char *const names[] = {"sequence", "seq", "pattern"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == n && strncasecmp(seq, names[i], n) == 0) return 1;
    return 0;
}

typedef struct {
    char *text;   /* the fields, each NUL-terminated, one after the other */
    size_t cap;
    size_t start[3], len[3];
    unsigned count;
} table_row;

/* Splits line s into at most three fields (a third means too many). Returns
   SM_OK or an error naming the line. */
static int split_row(table_row *row, const char *s, size_t n, char sep, const char *shown, uint64_t line,
                     sm_error *err) {
    if (grow(&row->text, &row->cap, n + 4) < 0) return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
    size_t out = 0, i = 0;
    row->count = 0;
    for (;;) {
        while (i < n && (s[i] == ' ' || (s[i] == '\t' && sep != '\t'))) i++;
        size_t begin = out;
        if (i < n && s[i] == '"') {
            for (i++;; i++) {
                if (i == n)
                    return sm_io_error(err, SM_ERR_FORMAT, "%s: line %llu: a quoted field without its closing quote",
                                       shown, (unsigned long long)line);
                if (s[i] == '"') {
                    if (i + 1 < n && s[i + 1] == '"') row->text[out++] = s[++i];
                    else break;
                } else {
                    row->text[out++] = s[i];
                }
            }
            i++;
            while (i < n && (s[i] == ' ' || (s[i] == '\t' && sep != '\t'))) i++;
            if (i < n && s[i] != sep)
                return sm_io_error(err, SM_ERR_FORMAT, "%s: line %llu: text after a closing quote", shown,
                                   (unsigned long long)line);
        } else {
            while (i < n && s[i] != sep) row->text[out++] = s[i++];
            while (out > begin && (row->text[out - 1] == ' ' || row->text[out - 1] == '\t')) out--;
        }
        if (row->count < 3) {
            row->start[row->count] = begin;
            row->len[row->count] = out - begin;
            row->count++;
        }
        row->text[out++] = '\0';
        if (i >= n) break;
        i++; /* the separator */
    }
    /* empty fields at the end (a spreadsheet's trailing separators) do not count */
    while (row->count > 2 && row->len[row->count - 1] == 0) row->count--;
    if (row->count > 2)
        return sm_io_error(err, SM_ERR_FORMAT,
                           "%s: line %llu: more than two columns; a pattern table has two, name and sequence "
                           "(name%ssequence)",
                           shown, (unsigned long long)line, sep == '\t' ? "<TAB>" : sep == ',' ? "," : ";");
    return SM_OK;
}

/* One table row as a pattern; the first may be a header (skipped). */
static int add_table_row(sm_pattern_list *list, table_row *row, int dna, int first, const char *shown,
                         uint64_t line, sm_error *err) {
    const char *name = row->text + row->start[0];
    size_t name_len = row->len[0];
    char *seq = row->text + row->start[row->count - 1];
    size_t seq_len = row->len[row->count - 1];
    if (first && row->count == 2 && is_header(seq, seq_len, dna)) return SM_OK;
    if (dna) { /* spaces inside a sequence, as FASTA's sequence lines drop them */
        size_t k = 0;
        for (size_t j = 0; j < seq_len; j++)
            if (seq[j] != ' ' && seq[j] != '\t') seq[k++] = seq[j];
        seq_len = k;
    }
    if (seq_len == 0)
        return sm_io_error(err, SM_ERR_PATTERN, "%s: line %llu: pattern '%.100s' has no sequence", shown,
                           (unsigned long long)line, name);
    int rc = sm_pattern_list_add(list, row->count == 2 && name_len > 0 ? name : NULL, seq, seq_len);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s: out of memory", shown);
    return SM_OK;
}

int sm_pattern_list_read(sm_pattern_list *list, const char *path, sm_error *err) {
    return sm_pattern_list_read_alphabet(list, path, SM_ALPHABET_TEXT, err);
}

int sm_pattern_list_read_alphabet(sm_pattern_list *list, const char *path, sm_alphabet alphabet, sm_error *err) {
    sm_error local;
    if (!err) err = &local;
    if (!list || !path) return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_pattern_list_read");
    int dna = alphabet == SM_ALPHABET_DNA;
    char sep = table_by_name(path);
    table_row row = {0};
    uint64_t first_line = 0; /* the first non-blank line's number */
    int fastq_suspect = 0;
    line_input in = {0};
    int rc = sm_io_source_open(path, 1, &in.src, err);
    if (rc != SM_OK) return rc;
    const char *shown = sm_io_source_name(in.src);
    size_t first = list->count;
    /* the file's name, for the messages about its patterns */
    char **files = realloc(list->files, (list->nfiles + 1) * sizeof *files);
    char *file = files ? strdup(shown) : NULL;
    if (files) list->files = files;
    if (!file) {
        rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
        if (list->nfiles == 0) {
            free(list->files);
            list->files = NULL;
        }
        sm_io_source_close(in.src);
        return rc;
    }
    list->files[list->nfiles++] = file;
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
            first_line = in.number;
            fastq_suspect = dna && s[i] == '@';
            if (!fasta && !sep && dna) sep = table_by_content(s, n);
        }
        if (fastq_suspect && in.number == first_line + 2 && n > 0 && s[0] == '+') {
            rc = sm_io_error(err, SM_ERR_FORMAT,
                             "%s: this is FASTQ (reads: '@' header, sequence, '+', qualities), not a pattern file; "
                             "patterns are FASTA, one per line, or a table of name and sequence (TSV or CSV); reads "
                             "to search go after the options, as targets",
                             shown);
            goto done;
        }
        if (!fasta && sep) {
            if (is_blank(s, n)) continue;
            size_t rows_before = list->count;
            rc = split_row(&row, s, n, sep, shown, in.number, err);
            if (rc == SM_OK) rc = add_table_row(list, &row, dna, in.number == first_line, shown, in.number, err);
            if (rc != SM_OK) goto done;
            if (list->count > rows_before) { /* not the header row */
                list->file[list->count - 1] = file;
                list->line[list->count - 1] = in.number;
            }
            continue;
        }
        if (!fasta) {
            if (is_blank(s, n)) continue;
            rc = add_line_pattern(list, s, n);
            if (rc != SM_OK) {
                sm_io_error(err, rc, "%s: out of memory", shown);
                goto done;
            }
            list->file[list->count - 1] = file;
            list->line[list->count - 1] = in.number;
            continue;
        }
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i < n && s[i] == '>') {
            rc = fasta_flush(&fp, list, shown, file, err);
            if (rc != SM_OK) goto done;
            size_t a = i + 1, b = a;
            while (b < n && !sm_name_end((unsigned char)s[b])) b++;
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
        if (fp.seq_len + n > PATTERN_MAX) {
            /* counts the blanks still to be dropped: at most a line more */
            size_t kept = 0;
            for (size_t j = 0; j < n; j++) kept += s[j] != ' ' && s[j] != '\t';
            if (fp.seq_len + kept > PATTERN_MAX) {
                rc = sm_io_error(err, SM_ERR_LIMIT, "%s: line %llu: pattern '%.100s' is longer than %zu bytes (16 MiB)",
                                 shown, (unsigned long long)fp.header_line, fp.name, PATTERN_MAX);
                goto done;
            }
        }
        if (grow(&fp.seq, &fp.seq_cap, fp.seq_len + n + 1) < 0) {
            rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
            goto done;
        }
        for (size_t j = 0; j < n; j++) {
            char c = s[j];
            fp.seq[fp.seq_len] = c;
            fp.seq_len += c != ' ' && c != '\t';
        }
    }
    rc = fasta_flush(&fp, list, shown, file, err);
done:
    if (rc != SM_OK) {
        while (list->count > first) free((void *)list->items[--list->count].seq);
        /* nothing of the file stays: neither its patterns nor its name */
        free(list->files[--list->nfiles]);
        if (list->nfiles == 0) {
            free(list->files);
            list->files = NULL;
        }
    }
    free(fp.name);
    free(fp.seq);
    free(row.text);
    free(in.line);
    free(in.buf);
    sm_io_source_close(in.src);
    return rc;
}
