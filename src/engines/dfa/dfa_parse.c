/* The DFA text format (docs/dfa.md):
 *
 *   # comment                      '#' starting a word comments out the rest of the line
 *   alphabet ACGT                  distinct printable symbols, in column order, or "bytes"
 *   states 4
 *   start 0
 *   accept 2 3                     zero or more states; the line may repeat
 *   0 1 0 0 0                      a state, then its target for every column
 *
 * Header lines come before the rows; rows may come in any order but every
 * state needs exactly one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engines/dfa/dfa_internal.h"

#define MAX_WORDS_SHOWN 40

typedef struct {
    const char *source;
    sm_error *err;
    size_t line;
} parse_ctx;

static int parse_fail(parse_ctx *pc, const char *fmt, const char *detail, unsigned long long a,
                      unsigned long long b) {
    char what[400];
    snprintf(what, sizeof what, fmt, detail, a, b);
    if (pc->line)
        return sm_set_error(pc->err, SM_ERR_FORMAT, "%s%sline %zu: %s", pc->source ? pc->source : "",
                            pc->source ? ": " : "", pc->line, what);
    return sm_set_error(pc->err, SM_ERR_FORMAT, "%s%s%s", pc->source ? pc->source : "", pc->source ? ": " : "",
                        what);
}

/* A word of the current line: [start, end). */
typedef struct {
    const char *start;
    size_t len;
} word;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Splits [p, end) into words, stopping at a comment; returns the count (at
   most cap are stored, the rest only counted). */
static size_t split_words(const char *p, const char *end, word *words, size_t cap) {
    size_t n = 0;
    while (p < end) {
        while (p < end && is_blank(*p)) p++;
        if (p == end || *p == '#') break;
        const char *s = p;
        while (p < end && !is_blank(*p)) p++;
        if (n < cap) {
            words[n].start = s;
            words[n].len = (size_t)(p - s);
        }
        n++;
    }
    return n;
}

/* A decimal number below limit; returns 0 on success. */
static int parse_number(const word *w, uint64_t limit, uint64_t *out) {
    if (w->len == 0 || w->len > 19) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < w->len; i++) {
        char c = w->start[i];
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (uint64_t)(c - '0');
    }
    if (v >= limit) return -1;
    *out = v;
    return 0;
}

static void show_word(const word *w, char *buf, size_t size) {
    size_t n = w->len < MAX_WORDS_SHOWN ? w->len : MAX_WORDS_SHOWN;
    snprintf(buf, size, "%.*s%s", (int)n, w->start, w->len > n ? "..." : "");
}

static int word_is(const word *w, const char *s) { return w->len == strlen(s) && memcmp(w->start, s, w->len) == 0; }

/* A dump ends with its checksum line (SM_DFA_CHECKSUM_LINE): when the last
   line is one, the lines before it must have that CRC-32. Returns SM_OK or
   the error (the file was changed after seqmatch wrote it). */
static int check_checksum_line(const char *text, size_t len, const char *source, sm_error *err) {
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) end--;
    size_t start = end;
    while (start > 0 && text[start - 1] != '\n' && text[start - 1] != '\r') start--;
    const size_t prefix = sizeof SM_DFA_CHECKSUM_LINE - 1;
    if (end - start != prefix + 8 || memcmp(text + start, SM_DFA_CHECKSUM_LINE, prefix) != 0) return SM_OK;
    uint32_t want = 0;
    for (size_t i = start + prefix; i < end; i++) {
        char c = text[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return SM_OK; /* a comment of another kind */
        want = want << 4 | (uint32_t)v;
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t at = 0; at < start;) {
        uInt part = start - at > 0x40000000u ? 0x40000000u : (uInt)(start - at);
        crc = crc32(crc, (const Bytef *)text + at, part);
        at += part;
    }
    if ((uint32_t)crc == want) return SM_OK;
    size_t line = 1;
    for (size_t i = 0; i < start; i++) line += text[i] == '\n';
    return sm_set_error(err, SM_ERR_FORMAT,
                        "%s%sline %zu: the checksum does not match the lines above it (crc32 %08lx): the file was "
                        "changed after seqmatch wrote it; remove that line to read it as it is",
                        source ? source : "", source ? ": " : "", line, (unsigned long)crc);
}

int sm_dfa_parse(const char *text, size_t len, const char *source, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    if (!text && len) return sm_set_error(err, SM_ERR_INVALID, "dfa: no text given");
    if (!text) text = "";
    {
        int crc_rc = check_checksum_line(text, len, source, err);
        if (crc_rc != SM_OK) return crc_rc;
    }
    parse_ctx pc = {source, err, 0};
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = SM_DFA_UNKNOWN;
    uint32_t columns = 0, states = 0, start = 0;
    int have_alphabet = 0, have_states = 0, have_start = 0;
    size_t alphabet_line = 0;
    uint32_t *table = NULL;
    uint64_t *accept = NULL;
    size_t *row_line = NULL; /* line of each state's row, 0 = none yet */
    /* Accept lines may come before "states": their numbers wait here. */
    uint64_t *pending = NULL;
    size_t *pending_line = NULL;
    size_t pending_n = 0, pending_cap = 0;
    word *words = NULL;
    size_t words_cap = 0;
    char shown[64];
    int rc = SM_OK;

    const char *p = text, *end = text + len;
    while (p < end && rc == SM_OK) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        pc.line++;
        size_t nw = split_words(p, eol, words, words_cap);
        if (nw > words_cap) {
            size_t cap = words_cap ? words_cap : 16;
            while (cap < nw) cap *= 2;
            word *grown = realloc(words, cap * sizeof *grown);
            if (!grown) {
                rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory");
                break;
            }
            words = grown;
            words_cap = cap;
            split_words(p, eol, words, words_cap);
        }
        p = eol < end ? eol + 1 : end;
        if (nw == 0) continue;
        const word *w0 = &words[0];
        if (word_is(w0, "alphabet")) {
            if (have_alphabet) {
                rc = parse_fail(&pc, "%sa second 'alphabet' line (the first is line %llu)", "", alphabet_line, 0);
                break;
            }
            if (nw != 2) {
                rc = parse_fail(&pc, "%s'alphabet' takes one word: the symbols, or 'bytes'", "", 0, 0);
                break;
            }
            have_alphabet = 1;
            alphabet_line = pc.line;
            const word *a = &words[1];
            if (word_is(a, "bytes")) {
                for (int b = 0; b < 256; b++) column_of[b] = (uint16_t)b;
                columns = 256;
                continue;
            }
            for (size_t i = 0; i < a->len; i++) {
                uint8_t c = (uint8_t)a->start[i];
                if (c < 0x21 || c > 0x7E) {
                    rc = parse_fail(&pc, "%salphabet symbol %llu is byte 0x%02llX, not a printable ASCII symbol", "",
                                    i + 1, c);
                    break;
                }
                if (column_of[c] != SM_DFA_UNKNOWN) {
                    char sym[2] = {(char)c, 0};
                    rc = parse_fail(&pc, "symbol '%s' appears twice in the alphabet (columns %llu and %llu)", sym,
                                    column_of[c] + 1ull, i + 1);
                    break;
                }
                column_of[c] = (uint16_t)columns++;
            }
        } else if (word_is(w0, "states") || word_is(w0, "start")) {
            int is_states = w0->len == 6;
            if (is_states ? have_states : have_start) {
                rc = parse_fail(&pc, "a second '%s' line", is_states ? "states" : "start", 0, 0);
                break;
            }
            uint64_t v;
            if (nw != 2 || parse_number(&words[1], is_states ? (uint64_t)SM_DFA_MAX_STATES + 1 : UINT32_MAX, &v) != 0 ||
                (is_states && v == 0)) {
                rc = parse_fail(&pc, is_states ? "%s'states' takes one number, at least 1" :
                                                 "%s'start' takes one state number", "", 0, 0);
                break;
            }
            if (is_states) {
                if (!have_alphabet) {
                    rc = parse_fail(&pc, "%s'states' must follow the 'alphabet' line", "", 0, 0);
                    break;
                }
                if (v * columns > 0x7FFFFFFFu) {
                    rc = parse_fail(&pc, "%s%llu states x %llu columns is over the limit of 2^31 transitions", "", v,
                                    columns);
                    break;
                }
                /* Rows follow the 'states' line, each at least "S T ... T\n": refuse a
                   count the rest of the text cannot hold before allocating for it, so
                   that a few bytes cannot ask for gigabytes (small tables keep the
                   precise "state N has no row" message). */
                uint64_t shortest_rows = v * (2 * (uint64_t)columns + 2) - 1;
                if (v * columns > (1u << 20) && shortest_rows > (uint64_t)(end - p)) {
                    rc = parse_fail(&pc, "%s%llu states x %llu columns: the rest of the text is too short to hold "
                                    "a row for every state", "", v, columns);
                    break;
                }
                states = (uint32_t)v;
                have_states = 1;
                table = malloc((size_t)states * columns * sizeof *table);
                accept = calloc(sm_dfa_accept_words(states), sizeof *accept);
                row_line = calloc(states, sizeof *row_line);
                if (!table || !accept || !row_line) {
                    rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for %u states", states);
                    break;
                }
            } else {
                start = (uint32_t)v;
                have_start = 1;
                if (have_states && start >= states) {
                    rc = parse_fail(&pc, "%sstart state %llu out of range (states 0..%llu)", "", start, states - 1ull);
                    break;
                }
            }
        } else if (word_is(w0, "accept")) {
            for (size_t i = 1; i < nw && rc == SM_OK; i++) {
                uint64_t v;
                if (parse_number(&words[i], UINT32_MAX, &v) != 0) {
                    show_word(&words[i], shown, sizeof shown);
                    rc = parse_fail(&pc, "'%s' is not a state number", shown, 0, 0);
                    break;
                }
                if (have_states && v >= states) {
                    rc = parse_fail(&pc, "%saccepting state %llu out of range (states 0..%llu)", "", v, states - 1ull);
                    break;
                }
                if (pending_n == pending_cap) {
                    size_t cap = pending_cap ? pending_cap * 2 : 64;
                    uint64_t *g1 = realloc(pending, cap * sizeof *g1);
                    if (g1) pending = g1;
                    size_t *g2 = realloc(pending_line, cap * sizeof *g2);
                    if (g2) pending_line = g2;
                    if (!g1 || !g2) {
                        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory");
                        break;
                    }
                    pending_cap = cap;
                }
                pending[pending_n] = v;
                pending_line[pending_n++] = pc.line;
            }
        } else if (w0->start[0] >= '0' && w0->start[0] <= '9') {
            if (!have_states) {
                rc = parse_fail(&pc, "%sa transition row before the 'alphabet' and 'states' lines", "", 0, 0);
                break;
            }
            uint64_t s;
            if (parse_number(w0, UINT32_MAX, &s) != 0 || s >= states) {
                show_word(w0, shown, sizeof shown);
                rc = parse_fail(&pc, "row for state '%s': not a state number below %llu", shown, states, 0);
                break;
            }
            if (row_line[s]) {
                rc = parse_fail(&pc, "%sa second row for state %llu (the first is line %llu)", "", s, row_line[s]);
                break;
            }
            if (nw - 1 != columns) {
                rc = parse_fail(&pc, "%sstate %llu has %llu targets", "", s, nw - 1ull);
                if (err) {
                    size_t used = strlen(err->message);
                    snprintf(err->message + used, sizeof err->message - used, "; the alphabet has %u columns",
                             columns);
                }
                break;
            }
            row_line[s] = pc.line;
            for (uint32_t c = 0; c < columns; c++) {
                uint64_t t;
                if (parse_number(&words[c + 1], UINT32_MAX, &t) != 0) {
                    show_word(&words[c + 1], shown, sizeof shown);
                    rc = parse_fail(&pc, "target '%s' in column %llu is not a state number", shown, c + 1ull, 0);
                    break;
                }
                if (t >= states) {
                    rc = parse_fail(&pc, "%starget %llu in column %llu is out of range", "", t, c + 1ull);
                    if (err) {
                        size_t used = strlen(err->message);
                        snprintf(err->message + used, sizeof err->message - used, " (states 0..%u)", states - 1);
                    }
                    break;
                }
                table[(size_t)s * columns + c] = (uint32_t)t;
            }
        } else {
            show_word(w0, shown, sizeof shown);
            rc = parse_fail(&pc, "unknown line starting '%s' (expected alphabet, states, start, accept or a row)",
                            shown, 0, 0);
        }
    }
    if (rc == SM_OK) {
        pc.line = 0;
        if (!have_alphabet) rc = parse_fail(&pc, "%sno 'alphabet' line", "", 0, 0);
        else if (columns == 0) rc = parse_fail(&pc, "%sthe alphabet is empty", "", 0, 0);
        else if (!have_states) rc = parse_fail(&pc, "%sno 'states' line", "", 0, 0);
        else if (!have_start) rc = parse_fail(&pc, "%sno 'start' line", "", 0, 0);
        else if (start >= states)
            rc = parse_fail(&pc, "%sstart state %llu out of range (states 0..%llu)", "", start, states - 1ull);
    }
    for (size_t i = 0; i < pending_n && rc == SM_OK; i++) {
        if (pending[i] >= states) {
            pc.line = pending_line[i];
            rc = parse_fail(&pc, "%saccepting state %llu out of range (states 0..%llu)", "", pending[i],
                            states - 1ull);
            break;
        }
        sm_dfa_set_bit(accept, (uint32_t)pending[i]);
    }
    if (rc == SM_OK) {
        for (uint32_t s = 0; s < states; s++)
            if (!row_line[s]) {
                uint32_t missing = 0;
                for (uint32_t t = s; t < states; t++) missing += !row_line[t];
                pc.line = 0;
                rc = parse_fail(&pc, "%sstate %llu has no row (%llu rows missing)", "", s, missing);
                break;
            }
    }
    if (rc == SM_OK) rc = sm_dfa_build(states, columns, start, table, accept, column_of, out, err);
    free(table);
    free(accept);
    free(row_line);
    free(pending);
    free(pending_line);
    free(words);
    return rc;
}

/* A DFA file is read whole but checked as it arrives, so that the wrong
   file is refused after its first lines rather than at its end (/dev/zero,
   a binary file, an endless line or stream): a NUL byte, a line longer than
   DFA_LINE_MAX (a row of 256 ten-digit targets takes under 3 KiB), or a line
   the format cannot have where it is. */
#define DFA_LINE_MAX ((size_t)1 << 20)
#define DFA_READ_STEP ((size_t)64 << 10)

/* Whether the line [p, p + n) may come here: blank or a comment, a keyword
   line, or a row once a 'states' line has been seen (*seen_states). */
static int line_may_come(const char *p, size_t n, int *seen_states) {
    word w;
    if (split_words(p, p + n, &w, 1) == 0) return 1;
    if (word_is(&w, "states")) {
        *seen_states = 1;
        return 1;
    }
    if (word_is(&w, "alphabet") || word_is(&w, "start") || word_is(&w, "accept")) return 1;
    return *seen_states && w.start[0] >= '0' && w.start[0] <= '9';
}

int sm_dfa_read_file(const char *path, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    if (!path) return sm_set_error(err, SM_ERR_INVALID, "dfa: no file given");
    int is_stdin = strcmp(path, "-") == 0;
    const char *shown = is_stdin ? "standard input" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) return sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    size_t line_at = 0, line = 1, stop = 0; /* stop: the end of a line that cannot come */
    int seen_states = 0;
    int rc = SM_OK;
    while (rc == SM_OK && !stop) {
        if (cap - len < DFA_READ_STEP) {
            size_t grown_cap = cap ? cap * 2 : DFA_READ_STEP;
            char *grown = realloc(buf, grown_cap);
            if (!grown) {
                rc = sm_set_error(err, SM_ERR_NOMEM, "%s: out of memory reading the DFA", shown);
                break;
            }
            buf = grown;
            cap = grown_cap;
        }
        size_t got = fread(buf + len, 1, DFA_READ_STEP, f);
        if (got == 0) {
            if (ferror(f)) rc = sm_set_error(err, SM_ERR_IO, "%s: read error", shown);
            break;
        }
        len += got;
        /* the lines completed by these bytes, then the one still open */
        for (;;) {
            const char *nl = memchr(buf + line_at, '\n', len - line_at);
            size_t line_end = nl ? (size_t)(nl - buf) : len;
            if (memchr(buf + line_at, 0, line_end - line_at)) {
                rc = sm_set_error(err, SM_ERR_FORMAT, "%s: line %zu: a NUL byte; not a DFA in the text format",
                                  shown, line);
                break;
            }
            if (!nl) {
                if (len - line_at > DFA_LINE_MAX)
                    rc = sm_set_error(err, SM_ERR_FORMAT,
                                      "%s: line %zu is longer than %zu bytes; not a DFA in the text format", shown,
                                      line, DFA_LINE_MAX);
                break;
            }
            if (!line_may_come(buf + line_at, line_end - line_at, &seen_states)) {
                stop = line_end + 1;
                break;
            }
            line_at = line_end + 1;
            line++;
        }
    }
    if (!is_stdin) fclose(f);
    if (rc == SM_OK) {
        /* with stop, the parser names what is wrong with that line */
        rc = sm_dfa_parse(buf ? buf : "", stop ? stop : len, shown, out, err);
        if (rc == SM_OK && stop) {
            sm_dfa_free(*out);
            *out = NULL;
            rc = sm_set_error(err, SM_ERR_FORMAT, "%s: line %zu: not a line of the DFA text format", shown, line);
        }
    }
    free(buf);
    return rc;
}
