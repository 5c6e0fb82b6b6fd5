/* Barcode pairs (include/seqmatch_reader.h, sm_barcode_pairs_*): the table
 * of seqmatch demux's dual indexes, its patterns, the choice of a record's
 * sample, and records rewritten with their barcodes in the header.
 *
 * Each end (barcode1, barcode2) has its distinct sequences; a pattern is
 * one of them. On a record, user[e] holds end e's closest barcode:
 * bits 0-31 its index, bits 32-62 errors + 1 (0: none yet), bit 63 a tie. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_reader.h"
#include "base/internal.h"
#include "io/source.h"

#define TIE ((uint64_t)1 << 63)
#define MAX_TABLE ((size_t)256 << 20)

typedef struct {
    uint32_t bc[2];
    uint32_t sample;
} pair_row;

struct sm_barcode_pairs {
    char **sample;
    size_t nsamples;
    char **seq[2]; /* each end's distinct barcodes, upper case */
    size_t nseq[2];
    pair_row *pair; /* sorted by (bc[0], bc[1]) once parsed */
    size_t npairs;
    int both;       /* single reads in both orientations */
};

void sm_barcode_pairs_orientations(sm_barcode_pairs *p, int both) { p->both = both != 0; }

void sm_barcode_pairs_free(sm_barcode_pairs *p) {
    if (!p) return;
    for (size_t i = 0; i < p->nsamples; i++) free(p->sample[i]);
    for (int e = 0; e < 2; e++) {
        for (size_t i = 0; i < p->nseq[e]; i++) free(p->seq[e][i]);
        free(p->seq[e]);
    }
    free(p->sample);
    free(p->pair);
    free(p);
}

size_t sm_barcode_pairs_samples(const sm_barcode_pairs *p) { return p->nsamples; }

const char *sm_barcode_pairs_sample(const sm_barcode_pairs *p, size_t i) { return i < p->nsamples ? p->sample[i] : NULL; }

static int is_iupac(int c) { return c && strchr("ACGTURYSWKMBDHVNacgturyswkmbdhvn", c) != NULL; }

static int all_iupac(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!is_iupac((unsigned char)*s)) return 0;
    return 1;
}

/* The index of s in list (n entries), added when missing; SIZE_MAX: out of memory. */
static size_t intern(char ***list, size_t *n, const char *s) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0) return i;
    if ((*n & (*n - 1)) == 0) { /* grow at powers of two */
        char **grown = realloc(*list, (*n ? *n * 2 : 1) * sizeof *grown);
        if (!grown) return SIZE_MAX;
        *list = grown;
    }
    char *copy = malloc(strlen(s) + 1);
    if (!copy) return SIZE_MAX;
    strcpy(copy, s);
    (*list)[*n] = copy;
    return (*n)++;
}

static int by_barcodes(const void *a, const void *b) {
    const pair_row *x = a, *y = b;
    if (x->bc[0] != y->bc[0]) return x->bc[0] < y->bc[0] ? -1 : 1;
    if (x->bc[1] != y->bc[1]) return x->bc[1] < y->bc[1] ? -1 : 1;
    return 0;
}

/* Splits one line (no line end) into up to 4 trimmed fields, in place. Returns the field count. */
static size_t split_fields(char *line, char *field[4]) {
    size_t n = 0;
    char *s = line;
    for (;;) {
        char *tab = strchr(s, '\t');
        if (tab) *tab = '\0';
        while (*s == ' ') s++;
        size_t len = strlen(s);
        while (len > 0 && s[len - 1] == ' ') s[--len] = '\0';
        if (n < 4) field[n] = s;
        n++;
        if (!tab) break;
        s = tab + 1;
    }
    return n;
}

int sm_barcode_pairs_parse(const char *text, size_t len, const char *what, sm_barcode_pairs **out, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    *out = NULL;
    sm_barcode_pairs *p = calloc(1, sizeof *p);
    char *line = malloc(len + 1);
    size_t cap = 0;
    int rc = SM_OK, first = 1;
    if (!p || !line) {
        rc = sm_io_error(err, SM_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t at = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) at = 3;
    for (uint64_t number = 1; at < len; number++) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        memcpy(line, text + at, n);
        at += n + (nl != NULL);
        if (n > 0 && line[n - 1] == '\r') n--;
        line[n] = '\0';
        if (memchr(line, '\0', n)) {
            rc = sm_io_error(err, SM_ERR_FORMAT, "%s line %llu: a NUL byte", what, (unsigned long long)number);
            goto done;
        }
        size_t blank = strspn(line, " \t");
        if (line[blank] == '\0' || line[blank] == '#') continue;
        char *field[4];
        size_t fields = split_fields(line, field);
        if (first && fields == 2) goto done; /* single barcodes: *out stays NULL */
        if (fields != 3) {
            rc = sm_io_error(err, SM_ERR_FORMAT,
                             "%s line %llu: %zu fields; a table of barcode pairs has three (sample, barcode1, "
                             "barcode2) separated by tabs",
                             what, (unsigned long long)number, fields);
            goto done;
        }
        int header = first && !(all_iupac(field[1]) && all_iupac(field[2]));
        first = 0;
        if (header) continue;
        for (int f = 0; f < 3; f++)
            if (!*field[f]) {
                rc = sm_io_error(err, SM_ERR_FORMAT, "%s line %llu: the %s is empty", what, (unsigned long long)number,
                                 f == 0 ? "sample name" : f == 1 ? "barcode1" : "barcode2");
                goto done;
            }
        for (int f = 1; f < 3; f++) {
            for (char *c = field[f]; *c; c++) {
                if (!is_iupac((unsigned char)*c)) {
                    rc = sm_io_error(err, SM_ERR_FORMAT, "%s line %llu: barcode%d '%s' holds '%c', no IUPAC code", what,
                                     (unsigned long long)number, f, field[f], *c);
                    goto done;
                }
                if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
            }
        }
        if (p->npairs == cap) {
            cap = cap ? cap * 2 : 64;
            pair_row *grown = realloc(p->pair, cap * sizeof *grown);
            if (!grown) {
                rc = sm_io_error(err, SM_ERR_NOMEM, "out of memory");
                goto done;
            }
            p->pair = grown;
        }
        size_t s = intern(&p->sample, &p->nsamples, field[0]);
        size_t b0 = intern(&p->seq[0], &p->nseq[0], field[1]);
        size_t b1 = intern(&p->seq[1], &p->nseq[1], field[2]);
        if (s == SIZE_MAX || b0 == SIZE_MAX || b1 == SIZE_MAX) {
            rc = sm_io_error(err, SM_ERR_NOMEM, "out of memory");
            goto done;
        }
        p->pair[p->npairs++] = (pair_row){{(uint32_t)b0, (uint32_t)b1}, (uint32_t)s};
    }
    if (p->npairs == 0) {
        rc = sm_io_error(err, SM_ERR_FORMAT, "%s: no barcode pairs in it", what);
        goto done;
    }
    qsort(p->pair, p->npairs, sizeof *p->pair, by_barcodes);
    size_t kept = 0;
    for (size_t i = 0; i < p->npairs; i++) {
        if (kept > 0 && by_barcodes(&p->pair[kept - 1], &p->pair[i]) == 0) {
            const pair_row *a = &p->pair[kept - 1], *b = &p->pair[i];
            if (a->sample == b->sample) continue; /* the same line twice */
            rc = sm_io_error(err, SM_ERR_FORMAT, "%s: barcodes %s+%s name two samples, %s and %s", what,
                             p->seq[0][a->bc[0]], p->seq[1][a->bc[1]], p->sample[a->sample], p->sample[b->sample]);
            goto done;
        }
        p->pair[kept++] = p->pair[i];
    }
    p->npairs = kept;
done:
    free(line);
    if (rc != SM_OK || p->npairs == 0) sm_barcode_pairs_free(p);
    else *out = p;
    return rc;
}

int sm_barcode_pairs_read(const char *path, sm_barcode_pairs **out, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return sm_io_error(err, SM_ERR_IO, "%s: cannot open it", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = SM_OK;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = cap <= MAX_TABLE ? realloc(text, cap) : NULL;
            if (!grown) {
                rc = sm_io_error(err, cap > MAX_TABLE ? SM_ERR_LIMIT : SM_ERR_NOMEM, "%s: %s", path,
                                 cap > MAX_TABLE ? "larger than 256 MiB" : "out of memory");
                break;
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = sm_io_error(err, SM_ERR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (rc == SM_OK) rc = sm_barcode_pairs_parse(text ? text : "", len, path, out, err);
    free(text);
    return rc;
}

int sm_barcode_pairs_compile(const sm_barcode_pairs *p, const sm_compile_options *opts, int rc_second, sm_db **db,
                             sm_error *err) {
    size_t n = p->nseq[0] + p->nseq[1];
    sm_pattern *items = calloc(n, sizeof *items);
    char **rc = calloc(p->nseq[1] ? p->nseq[1] : 1, sizeof *rc);
    int status = SM_OK;
    if (!items || !rc) status = SM_ERR_NOMEM;
    for (size_t i = 0; status == SM_OK && i < n; i++) {
        int e = i >= p->nseq[0];
        size_t j = e ? i - p->nseq[0] : i;
        const char *s = p->seq[e][j];
        size_t m = strlen(s);
        if (e && rc_second) {
            if (!(rc[j] = malloc(m + 1))) {
                status = SM_ERR_NOMEM;
                break;
            }
            for (size_t k = 0; k < m; k++) {
                int c = (unsigned char)s[m - 1 - k];
                rc[j][k] = (char)(c == 'U' ? 'A' : sm_nt_complement[c]);
            }
            rc[j][m] = '\0';
            s = rc[j];
        }
        items[i] = (sm_pattern){s, s, m};
    }
    if (status == SM_OK) {
        sm_compile_options co = *opts;
        co.alphabet = SM_ALPHABET_DNA;
        co.strands = SM_STRAND_FORWARD;
        co.exact = NULL;
        status = sm_compile(items, n, &co, db, err);
    } else {
        sm_io_error(err, status, "out of memory");
    }
    for (size_t j = 0; j < p->nseq[1]; j++) free(rc[j]);
    free(rc);
    free(items);
    return status;
}

/* A summary of the read's start (window 0) or end (1): a barcode of end e
   (0 barcode1, 1 barcode2) there is in the construct's orientation when
   e == window (user[window]), else in the reverse one (user[2 + window]). */
void sm_barcode_pairs_summary(const sm_barcode_pairs *p, sm_read_record *r, const sm_record_summary *summary) {
    unsigned window = r->summary_mate == 2;
    for (size_t i = 0; i < summary->npatterns; i++) {
        uint32_t pattern = summary->patterns[i].pattern;
        unsigned e = pattern >= p->nseq[0];
        if (e != window && !p->both) continue; /* the other end's barcode */
        uint64_t *slot = &r->user[(e != window ? 2 : 0) + window];
        uint64_t index = pattern - (e ? p->nseq[0] : 0), errors = (uint64_t)summary->patterns[i].errors + 1;
        uint64_t held = (*slot >> 32) & 0x7fffffffu;
        if (held == 0 || errors < held) *slot = errors << 32 | index;
        else if (errors == held && index != (*slot & 0xffffffffu)) *slot |= TIE;
    }
}

/* One orientation: slot[e] holds end e's closest barcode. */
static void assign_one(const sm_barcode_pairs *p, const uint64_t slot[2], sm_barcode_pair_match *m, uint32_t *total) {
    memset(m, 0, sizeof *m);
    m->sample = SIZE_MAX;
    int tie = 0, missing = 0;
    pair_row key = {{0, 0}, 0};
    *total = 0;
    for (int e = 0; e < 2; e++) {
        uint64_t held = (slot[e] >> 32) & 0x7fffffffu;
        if (held == 0) {
            missing = 1;
            continue;
        }
        tie |= (slot[e] & TIE) != 0;
        key.bc[e] = (uint32_t)(slot[e] & 0xffffffffu);
        m->errors[e] = (uint32_t)(held - 1);
        *total += m->errors[e];
        m->length[e] = strlen(p->seq[e][key.bc[e]]);
        m->pattern[e] = (uint32_t)(e ? p->nseq[0] : 0) + key.bc[e];
    }
    if (missing || tie) {
        m->why = missing ? SM_PAIR_NO_HIT : SM_PAIR_AMBIGUOUS;
        return;
    }
    const pair_row *found = bsearch(&key, p->pair, p->npairs, sizeof *p->pair, by_barcodes);
    if (!found) {
        m->why = SM_PAIR_UNLISTED;
        return;
    }
    m->sample = found->sample;
    m->why = SM_PAIR_ASSIGNED;
}

void sm_barcode_pairs_assign(const sm_barcode_pairs *p, const sm_read_record *r, sm_barcode_pair_match *m) {
    uint32_t total, reverse_total;
    assign_one(p, r->user, m, &total);
    if (!p->both) return;
    sm_barcode_pair_match rm;
    const uint64_t reverse_slots[2] = {r->user[3], r->user[2]}; /* barcode1 at the end, barcode2 at the start */
    assign_one(p, reverse_slots, &rm, &reverse_total);
    rm.reversed = 1;
    uint32_t first = rm.pattern[0]; /* patterns by window: barcode2's at the start */
    rm.pattern[0] = rm.pattern[1], rm.pattern[1] = first;
    if (rm.why == SM_PAIR_NO_HIT) return;
    if (m->why == SM_PAIR_NO_HIT || reverse_total < total) {
        *m = rm;
    } else if (reverse_total == total && !(m->why == SM_PAIR_ASSIGNED && rm.why == SM_PAIR_ASSIGNED &&
                                           m->sample == rm.sample)) {
        memset(m, 0, sizeof *m); /* equally close both ways */
        m->sample = SIZE_MAX;
        m->why = SM_PAIR_AMBIGUOUS;
    }
}

/* ------------------------------------------------------ record rewrite */

/* The line at *at (without its '\n', with a '\r' if any); *at moves past it. */
static const uint8_t *line_at(const uint8_t *raw, size_t len, size_t *at, size_t *n) {
    const uint8_t *start = raw + *at;
    const uint8_t *nl = memchr(start, '\n', len - *at);
    *n = nl ? (size_t)(nl - start) : len - *at;
    *at += *n + (nl != NULL);
    return start;
}

uint64_t sm_record_seq_length(const uint8_t *raw, size_t len) {
    int fastq = len > 0 && raw[0] == '@';
    size_t at = 0, n;
    uint64_t length = 0;
    line_at(raw, len, &at, &n);
    while (at < len) {
        const uint8_t *line = line_at(raw, len, &at, &n);
        if (fastq && n > 0 && line[0] == '+') break;
        for (size_t i = 0; i < n; i++) length += line[i] != '\r'; /* as sm_trim_record counts */
    }
    return length;
}

size_t sm_record_seq_end(const uint8_t *raw, size_t len, int from_end, size_t n, char *buf) {
    int fastq = len > 0 && raw[0] == '@', reverse = from_end & 2;
    size_t at = 0, line_len, got = 0;
    buf[0] = '\0';
    from_end &= 1;
    if (n == 0) return 0;
    /* from the end: the symbols from (length - n) on, found in one more pass */
    uint64_t length = from_end ? sm_record_seq_length(raw, len) : 0, skip = length > n ? length - n : 0, seen = 0;
    line_at(raw, len, &at, &line_len);
    while (at < len && got < n) {
        const uint8_t *line = line_at(raw, len, &at, &line_len);
        if (fastq && line_len > 0 && line[0] == '+') break;
        for (size_t i = 0; i < line_len && got < n; i++)
            if (line[i] != '\r' && seen++ >= skip) buf[got++] = (char)line[i];
    }
    buf[got] = '\0';
    for (size_t i = 0; reverse && 2 * i + 1 < got; i++) { /* reversed, then each symbol complemented */
        char c = buf[i];
        buf[i] = buf[got - 1 - i], buf[got - 1 - i] = c;
    }
    for (size_t i = 0; reverse && i < got; i++) {
        int c = (unsigned char)buf[i], lower = c >= 'a' && c <= 'z';
        int up = lower ? c - 32 : c, comp = sm_nt_complement[up] ? sm_nt_complement[up] : up;
        buf[i] = (char)(lower ? comp + 32 : comp);
    }
    return got;
}

int sm_record_rewrite(const uint8_t *raw, size_t len, const char *tag, uint64_t head, uint64_t tail, uint8_t **out,
                      size_t *out_len, size_t *cap) {
    const uint8_t *body = raw;
    size_t body_len = len;
    if (head || tail) {
        int rc = sm_trim_record(raw, len, head, tail, out, out_len, cap);
        if (rc != SM_OK) return rc;
        if (!tag) return SM_OK;
        /* the tag goes into the cut record: move it aside first */
        uint8_t *copy = malloc(*out_len ? *out_len : 1);
        if (!copy) return SM_ERR_NOMEM;
        memcpy(copy, *out, *out_len);
        rc = sm_record_rewrite(copy, *out_len, tag, 0, 0, out, out_len, cap);
        free(copy);
        return rc;
    }
    size_t at = 0, n;
    line_at(raw, len, &at, &n);
    size_t header = n > 0 && raw[n - 1] == '\r' ? n - 1 : n; /* the header without its line end */
    size_t tag_len = tag ? strlen(tag) + 1 : 0, need = len + tag_len;
    if (*cap < need) {
        uint8_t *grown = realloc(*out, need);
        if (!grown) return SM_ERR_NOMEM;
        *out = grown, *cap = need;
    }
    memcpy(*out, body, header);
    if (tag) {
        (*out)[header] = ' ';
        memcpy(*out + header + 1, tag, tag_len - 1);
    }
    memcpy(*out + header + tag_len, body + header, body_len - header);
    *out_len = need;
    return SM_OK;
}

/* ------------------------------------------------------ barcode spans */

/* The best alignment of key (nucleotide sets, in alignment order) against
   a prefix of text (sets): the fewest edits, then the most matches, then
   the longest prefix (*span). Returns its cost, one additive number that
   orders the first two: an edit costs m + 1 (more than all matches), a
   match -1; cost = (m + 1) edits - matches. */
static int64_t prefix_alignment(const uint8_t *key, size_t m, const uint8_t *text, size_t n, int64_t *col,
                                size_t *span) {
    const int64_t edit = (int64_t)m + 1;
    for (size_t i = 0; i <= m; i++) col[i] = (int64_t)i * edit;
    int64_t best = col[m];
    *span = 0;
    for (size_t j = 1; j <= n; j++) {
        int64_t diag = col[0];
        col[0] = (int64_t)j * edit;
        for (size_t i = 1; i <= m; i++) {
            int64_t up = col[i], v = diag + ((key[i - 1] & text[j - 1]) ? -1 : edit);
            if (up + edit < v) v = up + edit;
            if (col[i - 1] + edit < v) v = col[i - 1] + edit;
            diag = up;
            col[i] = v;
        }
        if (col[m] <= best) best = col[m], *span = j; /* equal: the longer */
    }
    return best;
}

static uint8_t complement_set(uint8_t set) { /* A<->T, C<->G */
    return (uint8_t)(((set & sm_nt_set['A']) ? sm_nt_set['T'] : 0) | ((set & sm_nt_set['T']) ? sm_nt_set['A'] : 0) |
                     ((set & sm_nt_set['C']) ? sm_nt_set['G'] : 0) | ((set & sm_nt_set['G']) ? sm_nt_set['C'] : 0));
}

size_t sm_barcode_span(const sm_db *db, uint32_t pattern, int strand, const uint8_t *raw, size_t len, int at_end) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    size_t m, span = 0, best_span = 0;
    const char *seq = sm_db_pattern_seq(db, pattern, &m);
    if (!seq || info.match != SM_MATCH_EDITS) return seq ? m : 0;
    size_t w = m + info.max_errors; /* A(j) > k past m + k */
    uint8_t *key = malloc(m + 2 * (w + 1)), *text = key ? key + m : NULL, *sets = key ? text + w + 1 : NULL;
    int64_t *col = malloc((m + 1) * sizeof *col), best = INT64_MAX;
    if (!key || !col) goto done;
    size_t n = sm_record_seq_end(raw, len, at_end, w, (char *)text);
    for (size_t j = 0; j < n; j++) { /* read away from the anchored end */
        uint8_t t = sm_nt_set[text[at_end ? n - 1 - j : j]];
        sets[j] = (info.flags & SM_FLAG_TEXT_IUPAC) || !(t & (t - 1)) ? t : 0; /* N matches nothing */
    }
    for (int s = 0; s < 2; s++) {
        if (strand >= 0 ? s != strand : (s ? info.strands == SM_STRAND_FORWARD : info.strands == SM_STRAND_REVERSE))
            continue;
        /* the key as it reads on the forward strand (s: reverse complemented), from the anchored end */
        for (size_t i = 0; i < m; i++) {
            uint8_t c = sm_nt_set[(uint8_t)seq[(at_end != s) ? m - 1 - i : i]];
            key[i] = s ? complement_set(c) : c;
        }
        int64_t cost = prefix_alignment(key, m, sets, n, col, &span);
        if (cost < best || (cost == best && span > best_span)) best = cost, best_span = span;
    }
done:
    free(key);
    free(col);
    /* cost = (m + 1) edits - matches, 0 <= matches <= m */
    return best != INT64_MAX && (best + (int64_t)m) / ((int64_t)m + 1) <= (int64_t)info.max_errors ? best_span : 0;
}
