/* Hit output (include/seqmatch_output.h): a 1 MiB buffer in front of the
 * file, and the hit formats.
 *
 * Names are formatted (escaped, quoted) once per pattern and once per record
 * so that a hit costs a few memcpy calls and three number conversions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

#define WRITER_BUFFER_SIZE (1u << 20)

/* ------------------------------------------------------------- writer */

int sm_writer_init_file(sm_writer *w, FILE *file) {
    memset(w, 0, sizeof *w);
    w->buf = malloc(WRITER_BUFFER_SIZE);
    if (!w->buf) return -1;
    w->file = file;
    w->cap = WRITER_BUFFER_SIZE;
    return 0;
}

sm_writer *sm_writer_new(FILE *file) {
    sm_writer *w = malloc(sizeof *w);
    if (!w) return NULL;
    if (sm_writer_init_file(w, file) != 0) {
        free(w);
        return NULL;
    }
    /* Our buffer is the only one: stdio's would just add a copy. */
    setvbuf(file, NULL, _IONBF, 0);
    return w;
}

void sm_writer_free(sm_writer *w) {
    if (!w) return;
    free(w->buf);
    free(w);
}

void sm_writer_set_sink(sm_writer *w, int (*sink)(void *ctx, const void *data, size_t len), void *ctx) {
    w->sink = sink;
    w->sink_ctx = ctx;
}

void sm_writer_set_before_write(sm_writer *w, void (*fn)(void *ctx), void *ctx) {
    w->before_write = fn;
    w->before_write_ctx = ctx;
}

static void write_out(sm_writer *w, const void *data, size_t len) {
    if (w->error || len == 0) return;
    if (w->before_write) w->before_write(w->before_write_ctx);
    if (w->sink) {
        w->error = w->sink(w->sink_ctx, data, len);
        return;
    }
    errno = 0;
    if (fwrite(data, 1, len, w->file) != len) w->error = errno ? errno : EIO;
}

int sm_writer_flush(sm_writer *w) {
    write_out(w, w->buf, w->len);
    w->len = 0;
    return w->error;
}

int sm_writer_error(const sm_writer *w) { return w->error; }

void sm_writer_write_slow(sm_writer *w, const void *data, size_t len) {
    if (w->error) return;
    sm_writer_flush(w);
    if (len >= w->cap) {
        write_out(w, data, len);
    } else {
        memcpy(w->buf, data, len);
        w->len = len;
    }
}

int sm_writer_write(sm_writer *w, const void *data, size_t len) {
    /* a large piece (trim's runs of records) goes out as it is, after what
       is gathered: not copied into the buffer first */
    if (len >= w->cap / 4) {
        sm_writer_flush(w);
        write_out(w, data, len);
    } else {
        writer_put(w, data, len);
    }
    return w->error;
}

/* Appends a number. */
/* BED's score: 0 to 1000, higher for better hits (shaded darker by genome
   browsers): 1000 x (length - errors) / length of the hit, rounded down, so
   exact hits score 1000 and each error costs its share of the hit. */
static inline uint64_t bed_score(const sm_hit *hit) {
    uint64_t len = hit->end - hit->start;
    if (hit->errors == 0) return 1000;
    if (len <= hit->errors) return 0;
    return 1000 * (len - hit->errors) / len;
}

static inline void write_u64(sm_writer *w, uint64_t value) {
    char digits[20];
    int n = 0;
    do {
        digits[19 - n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    writer_put(w, digits + 20 - n, (size_t)n);
}

static inline void write_char(sm_writer *w, char c) {
    if (w->len < w->cap) w->buf[w->len++] = c;
    else sm_writer_write_slow(w, &c, 1);
}

/* ------------------------------------------------------------- escaping */

/* Growable string used while preparing names. */
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} text_builder;

static void builder_add(text_builder *b, const void *data, size_t len) {
    if (b->failed) return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->len + len + 1) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

static int tsv_needs_escape(unsigned char c) {
    return c == '\t' || c == '\n' || c == '\r' || c == '\\';
}

/* TSV and BED fields cannot hold a tab or line break: those (and the
   backslash that introduces them) are written as \t \n \r \\. */
static void tsv_escape(const unsigned char *s, size_t len, void (*add)(void *, const void *, size_t),
                       void *sink) {
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        if (!tsv_needs_escape(s[i])) continue;
        add(sink, s + run, i - run);
        const char *escape = s[i] == '\t' ? "\\t" : s[i] == '\n' ? "\\n" : s[i] == '\r' ? "\\r" : "\\\\";
        add(sink, escape, 2);
        run = i + 1;
    }
    add(sink, s + run, len - run);
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when invalid. */
static size_t utf8_sequence_length(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;  /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (avail < need) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < need; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return need;
}

/* JSON string contents: quote, backslash and control characters escaped
   (control characters as \u00XX); a byte that is not valid UTF-8 is written
   as \u00XX too, so every line stays valid JSON. */
static void json_escape(const unsigned char *s, size_t len, void (*add)(void *, const void *, size_t),
                        void *sink) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0, i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t n = utf8_sequence_length(s + i, len - i);
            if (n > 0) {
                i += n;
                continue;
            }
        }
        add(sink, s + run, i - run);
        if (c == '"') add(sink, "\\\"", 2);
        else if (c == '\\') add(sink, "\\\\", 2);
        else {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            add(sink, u, 6);
        }
        i++;
        run = i;
    }
    add(sink, s + run, len - run);
}

static void builder_sink(void *sink, const void *data, size_t len) {
    builder_add(sink, data, len);
}

static void writer_sink(void *sink, const void *data, size_t len) {
    writer_put(sink, data, len);
}

/* ------------------------------------------------------------- formatter */

struct sm_formatter {
    sm_output_format format;
    int header;
    int header_pending;       /* tsv: the header goes out with the first hit or at the end */
    const sm_db *db;
    int cigar;                /* --cigar */
    sm_cigar_buffer cigar_buf;
    sm_sam *sam;             /* --format sam */
    int site;                 /* --site */
    char *site_rows;          /* the two rows of sm_hit_site, site_cap bytes each */
    size_t site_cap;
    sm_profile *profile;     /* --format profile, profile-jsonl */
    sm_writer *w;
    int plain_texts;          /* dna: hit texts never need escaping */
    uint32_t pattern_count;
    char **pattern_names;     /* formatted for the output format */
    size_t *pattern_name_lens;
    /* Names of the records in flight, a ring indexed by record number. */
    char **record_names;
    size_t *record_name_lens;
    size_t *record_files;             /* index into file_names */
    uint64_t first_record;
    size_t record_count, record_cap;  /* record_cap is a power of two */
    /* Files named in the output (show_file): every target, in order. */
    int show_file;
    char **file_names;                /* formatted for the output format */
    size_t *file_name_lens;
    size_t file_count, file_cap;
    /* --format records: the hits of the record being delivered. */
    uint64_t rec_hits;
    uint32_t *rec_patterns;           /* the patterns hit, each once */
    size_t rec_npatterns;
    uint64_t *rec_seen;               /* per pattern: record + 1 when listed */
    /* --columns: the TSV columns chosen, in order (0: the default row). */
    unsigned char column[32];
    size_t ncolumns;
};

/* The TSV columns --columns may choose, in the default row's order. */
enum { COL_FILE, COL_RECORD, COL_PATTERN, COL_STRAND, COL_START, COL_END, COL_LENGTH, COL_ERRORS, COL_MATCHED,
       COL_CIGAR, COL_COUNT };
static const char *const column_names[COL_COUNT] = {"file", "record", "pattern", "strand", "start", "end", "length",
                                                    "errors", "matched", "cigar"};

int sm_formatter_set_columns(sm_formatter *f, const char *list, sm_error *err) {
    static const char valid[] = "file, record, pattern, strand, start, end, length, errors, matched, cigar";
    f->ncolumns = 0;
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        int c = 0;
        while (c < COL_COUNT && !(strlen(column_names[c]) == n && strncmp(p, column_names[c], n) == 0)) c++;
        if (c == COL_COUNT) {
            f->ncolumns = 0;
            return sm_set_error(err, SM_ERR_INVALID, "--columns: '%.*s' is not a column; the columns are %s", (int)n, p,
                                valid);
        }
        if (f->ncolumns == sizeof f->column) {
            f->ncolumns = 0;
            return sm_set_error(err, SM_ERR_INVALID, "--columns: more than %zu columns", sizeof f->column);
        }
        if (c == COL_CIGAR && !f->cigar) {
            f->ncolumns = 0;
            return sm_set_error(err, SM_ERR_INVALID, "--columns: the cigar column needs --cigar");
        }
        f->column[f->ncolumns++] = (unsigned char)c;
        if (!p[n]) break;
        p += n + 1;
    }
    if (f->format != SM_FORMAT_TSV) {
        f->ncolumns = 0;
        return sm_set_error(err, SM_ERR_INVALID, "--columns chooses the columns of --format tsv");
    }
    return SM_OK;
}

static void write_columns_header(sm_formatter *f);
static void write_columns(sm_formatter *f, const sm_hit *hit);

/* Formats a name for the output: escaped for TSV/BED, quoted JSON for jsonl. */
static char *format_name(sm_output_format format, const char *name, size_t *len) {
    text_builder b = {NULL, 0, 0, 0};
    size_t n = strlen(name);
    if (format == SM_FORMAT_JSONL || format == SM_FORMAT_PROFILE_JSONL) {
        builder_add(&b, "\"", 1);
        json_escape((const unsigned char *)name, n, builder_sink, &b);
        builder_add(&b, "\"", 1);
    } else {
        builder_add(&b, "", 0);
        tsv_escape((const unsigned char *)name, n, builder_sink, &b);
    }
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

sm_formatter *sm_formatter_new_named(sm_output_format format, int header, int show_file, const char *const *names,
                                     uint32_t count, int dna, sm_writer *w, sm_error *err) {
    sm_formatter *f = calloc(1, sizeof *f);
    if (!f) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->format = format;
    f->header = header;
    f->show_file = show_file;
    f->w = w;
    f->pattern_count = count;
    f->plain_texts = dna;
    size_t n = count ? count : 1;
    f->pattern_names = calloc(n, sizeof *f->pattern_names);
    f->pattern_name_lens = calloc(n, sizeof *f->pattern_name_lens);
    f->record_cap = 64;
    f->record_names = calloc(f->record_cap, sizeof *f->record_names);
    f->record_name_lens = calloc(f->record_cap, sizeof *f->record_name_lens);
    f->record_files = calloc(f->record_cap, sizeof *f->record_files);
    if (format == SM_FORMAT_RECORDS) {
        f->rec_patterns = malloc(n * sizeof *f->rec_patterns);
        f->rec_seen = calloc(n, sizeof *f->rec_seen);
    }
    if (!f->pattern_names || !f->pattern_name_lens || !f->record_names || !f->record_name_lens || !f->record_files ||
        (format == SM_FORMAT_RECORDS && (!f->rec_patterns || !f->rec_seen))) {
        sm_formatter_free(f);
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < count; i++) {
        const char *name = names[i];
        f->pattern_names[i] = format_name(format, name ? name : "", &f->pattern_name_lens[i]);
        if (!f->pattern_names[i]) {
            sm_formatter_free(f);
            sm_set_error(err, SM_ERR_NOMEM, "out of memory");
            return NULL;
        }
    }
    return f;
}

sm_formatter *sm_formatter_new(sm_output_format format, int header, int show_file, const sm_db *db, sm_writer *w,
                               sm_error *err) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    const char **names = calloc(info.pattern_count ? info.pattern_count : 1, sizeof *names);
    if (!names) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < info.pattern_count; i++) names[i] = sm_db_pattern_name(db, i);
    sm_formatter *f = sm_formatter_new_named(format, header, show_file, names, info.pattern_count,
                                             info.alphabet == SM_ALPHABET_DNA, w, err);
    free(names);
    if (f) f->db = db; /* for cigars, sites, sam and profiles */
    if (f && (format == SM_FORMAT_PROFILE || format == SM_FORMAT_PROFILE_JSONL) &&
        !(f->profile = sm_profile_create(db, err))) {
        sm_formatter_free(f);
        return NULL;
    }
    return f;
}

void sm_formatter_free(sm_formatter *f) {
    if (!f) return;
    if (f->pattern_names)
        for (uint32_t i = 0; i < f->pattern_count; i++) free(f->pattern_names[i]);
    free(f->pattern_names);
    free(f->pattern_name_lens);
    if (f->record_names)
        for (size_t i = 0; i < f->record_cap; i++) free(f->record_names[i]);
    free(f->record_names);
    free(f->record_name_lens);
    free(f->record_files);
    if (f->file_names)
        for (size_t i = 0; i < f->file_count; i++) free(f->file_names[i]);
    free(f->file_names);
    free(f->file_name_lens);
    free(f->cigar_buf.data);
    free(f->site_rows);
    sm_profile_free(f->profile);
    sm_sam_free(f->sam);
    free(f->rec_patterns);
    free(f->rec_seen);
    free(f);
}

void sm_formatter_set_cigar(sm_formatter *f) { f->cigar = 1; }

void sm_formatter_set_site(sm_formatter *f) {
    sm_db_info info;
    sm_db_get_info(f->db, &info);
    f->site_cap = (size_t)info.max_length + SM_MAX_BULGE + 1;
    f->site_rows = malloc(2 * f->site_cap);
    f->site = f->site_rows != NULL;
}

/* --site's columns of a hit: bulge kind, size, the guide's row and the
   site's row ('.' for all four when the hit has no site alignment). */
static void write_site(sm_formatter *f, const sm_hit *hit, int json) {
    static const char *const kinds[] = {"none", "DNA", "RNA"};
    sm_writer *w = f->w;
    sm_site site;
    char *guide = f->site_rows, *dna = f->site_rows + f->site_cap;
    int ok = sm_hit_site(f->db, hit, &site, guide, dna, f->site_cap) == SM_OK;
    const char *kind = ok ? kinds[site.bulge] : ".";
    if (!ok) guide[0] = dna[0] = '.', guide[1] = dna[1] = '\0';
    if (json) {
        writer_put(w, "\",\"bulge\":\"", 11);
        writer_put(w, kind, strlen(kind));
        writer_put(w, "\",\"bulge_size\":", 15);
        write_u64(w, ok ? site.bulge_size : 0);
        writer_put(w, ",\"guide_aligned\":\"", 18);
        writer_put(w, guide, strlen(guide));
        writer_put(w, "\",\"site_aligned\":\"", 18);
        writer_put(w, dna, strlen(dna));
        return;
    }
    write_char(w, '\t');
    writer_put(w, kind, strlen(kind));
    write_char(w, '\t');
    if (ok) write_u64(w, site.bulge_size);
    else write_char(w, '.');
    write_char(w, '\t');
    writer_put(w, guide, strlen(guide));
    write_char(w, '\t');
    writer_put(w, dna, strlen(dna));
}

int sm_formatter_start_sam(sm_formatter *f, const char *command_line, sm_error *err) {
    if (!f->db) return sm_set_error(err, SM_ERR_INVALID, "SAM output needs the database");
    f->sam = sm_sam_open(f->db, command_line, f->format == SM_FORMAT_BAM, err);
    return f->sam ? SM_OK : err ? err->code : SM_ERR_NOMEM;
}

void sm_formatter_record_length(sm_formatter *f, uint64_t record, uint64_t length) {
    if (f->sam) sm_sam_record_length(f->sam, record, length);
}

int sm_formatter_set_file(sm_formatter *f, const char *name) {
    if (f->file_count == f->file_cap) {
        size_t cap = f->file_cap ? f->file_cap * 2 : 8;
        char **names = realloc(f->file_names, cap * sizeof *names);
        if (!names) return -1;
        f->file_names = names;
        size_t *lens = realloc(f->file_name_lens, cap * sizeof *lens);
        if (!lens) return -1;
        f->file_name_lens = lens;
        f->file_cap = cap;
    }
    char *formatted = format_name(f->format, name, &f->file_name_lens[f->file_count]);
    if (!formatted) return -1;
    f->file_names[f->file_count++] = formatted;
    return 0;
}

/* The formatted name of the file set last, or of a record's file. */
static const char *file_name(const sm_formatter *f, size_t file, size_t *len) {
    if (file < f->file_count) {
        *len = f->file_name_lens[file];
        return f->file_names[file];
    }
    *len = f->format == SM_FORMAT_JSONL ? 2 : 0;
    return "\"\"";
}

static void write_header(sm_formatter *f) {
    if (f->ncolumns) {
        f->header_pending = 0;
        write_columns_header(f);
        return;
    }
    static const char tsv_header[] = "#record\tpattern\tstrand\tstart\tend\terrors\tmatched";
    static const char tsv_file_header[] = "#file\trecord\tpattern\tstrand\tstart\tend\terrors\tmatched";
    f->header_pending = 0;
    if (f->show_file) writer_put(f->w, tsv_file_header, sizeof tsv_file_header - 1);
    else writer_put(f->w, tsv_header, sizeof tsv_header - 1);
    if (f->cigar) writer_put(f->w, "\tcigar", 6);
    static const char site_header[] = "\tbulge\tbulge_size\tguide_aligned\tsite_aligned";
    if (f->site) writer_put(f->w, site_header, sizeof site_header - 1);
    write_char(f->w, '\n');
}

/* The header waits for the first hit (or the end of a search that did not
   fail), so that a search failing at once prints only its message. */
void sm_formatter_begin(sm_formatter *f) {
    static const char records_header[] = "#record\thits\tpatterns\n";
    static const char records_file_header[] = "#file\trecord\thits\tpatterns\n";
    f->header_pending = f->format == SM_FORMAT_TSV && f->header;
    if (f->format == SM_FORMAT_RECORDS && f->header) {
        if (f->show_file) writer_put(f->w, records_file_header, sizeof records_file_header - 1);
        else writer_put(f->w, records_header, sizeof records_header - 1);
    }
}

int sm_formatter_end(sm_formatter *f, sm_error *err) {
    if (f->profile)
        sm_profile_write(f->profile, f->w, f->format == SM_FORMAT_PROFILE_JSONL, f->header, f->pattern_names,
                          f->pattern_name_lens);
    if (f->header_pending) write_header(f);
    return f->sam ? sm_sam_finish(f->sam, f->w, err) : SM_OK;
}

static int grow_records(sm_formatter *f) {
    size_t cap = f->record_cap * 2;
    char **names = calloc(cap, sizeof *names);
    size_t *lens = calloc(cap, sizeof *lens);
    size_t *files = calloc(cap, sizeof *files);
    if (!names || !lens || !files) {
        free(names);
        free(lens);
        free(files);
        return -1;
    }
    for (size_t i = 0; i < f->record_count; i++) {
        uint64_t record = f->first_record + i;
        names[record & (cap - 1)] = f->record_names[record & (f->record_cap - 1)];
        lens[record & (cap - 1)] = f->record_name_lens[record & (f->record_cap - 1)];
        files[record & (cap - 1)] = f->record_files[record & (f->record_cap - 1)];
    }
    free(f->record_names);
    free(f->record_name_lens);
    free(f->record_files);
    f->record_names = names;
    f->record_name_lens = lens;
    f->record_files = files;
    f->record_cap = cap;
    return 0;
}

int sm_formatter_add_record(sm_formatter *f, uint64_t record, const char *name) {
    if (f->record_count == 0) f->first_record = record;
    if (record != f->first_record + f->record_count) return -1;  /* runner numbers in order */
    if (f->record_count == f->record_cap && grow_records(f) != 0) return -1;
    size_t slot = (size_t)(record & (f->record_cap - 1));
    f->record_names[slot] = format_name(f->format, name ? name : "", &f->record_name_lens[slot]);
    if (!f->record_names[slot]) return -1;
    f->record_files[slot] = f->file_count ? f->file_count - 1 : 0;
    f->record_count++;
    if (f->sam && sm_sam_add_record(f->sam, record, name) != 0) return -1;
    return 0;
}

static const char *record_name(const sm_formatter *f, uint64_t record, size_t *len);
static const char *record_file(const sm_formatter *f, uint64_t record, size_t *len);
static void write_record_line(sm_formatter *f, uint64_t record);

void sm_formatter_record_done(sm_formatter *f, uint64_t record) {
    if (f->sam) sm_sam_record_done(f->sam, record);
    if (record < f->first_record || record - f->first_record >= f->record_count) return;
    if (f->format == SM_FORMAT_RECORDS) write_record_line(f, record);
    size_t mask = f->record_cap - 1;
    free(f->record_names[record & mask]);
    f->record_names[record & mask] = NULL;
    /* Records normally finish in order; a gap waits for its predecessors. */
    while (f->record_count > 0 && f->record_names[f->first_record & mask] == NULL) {
        f->first_record++;
        f->record_count--;
    }
}

static const char *record_name(const sm_formatter *f, uint64_t record, size_t *len) {
    if (record >= f->first_record && record - f->first_record < f->record_count) {
        size_t slot = (size_t)(record & (f->record_cap - 1));
        if (f->record_names[slot]) {
            *len = f->record_name_lens[slot];
            return f->record_names[slot];
        }
    }
    *len = f->format == SM_FORMAT_JSONL ? 2 : 0;
    return "\"\"";
}

/* The formatted file name of a record (show_file). */
static const char *record_file(const sm_formatter *f, uint64_t record, size_t *len) {
    size_t file = SIZE_MAX;
    if (record >= f->first_record && record - f->first_record < f->record_count)
        file = f->record_files[record & (f->record_cap - 1)];
    return file_name(f, file, len);
}

static void write_tsv_text(sm_writer *w, const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++) {
        if (tsv_needs_escape(s[i])) {
            tsv_escape(s, len, writer_sink, w);
            return;
        }
    }
    writer_put(w, text, len);
}

/* Field by field, escaping as needed; for rows that may not fit the buffer
   or whose text has bytes to escape. */
static void write_hit_fields(sm_formatter *f, const sm_hit *hit) {
    sm_writer *w = f->w;
    size_t record_len = 0;
    const char *record = record_name(f, hit->record, &record_len);
    const char *pattern = "";
    size_t pattern_len = 0;
    if (hit->pattern < f->pattern_count) {
        pattern = f->pattern_names[hit->pattern];
        pattern_len = f->pattern_name_lens[hit->pattern];
    }
    size_t text_len = hit->text ? (size_t)(hit->end - hit->start) : 0;
    size_t file_len = 0;
    const char *file = f->show_file ? record_file(f, hit->record, &file_len) : NULL;

    switch (f->format) {
    case SM_FORMAT_TSV:
        if (file) {
            writer_put(w, file, file_len);
            write_char(w, '\t');
        }
        writer_put(w, record, record_len);
        write_char(w, '\t');
        writer_put(w, pattern, pattern_len);
        write_char(w, '\t');
        write_char(w, hit->strand);
        write_char(w, '\t');
        write_u64(w, hit->start);
        write_char(w, '\t');
        write_u64(w, hit->end);
        write_char(w, '\t');
        write_u64(w, hit->errors);
        write_char(w, '\t');
        if (hit->text) write_tsv_text(w, hit->text, text_len);
        if (f->cigar) {
            size_t cigar_len;
            const char *cigar = sm_cigar_of_hit(&f->cigar_buf, f->db, hit, &cigar_len);
            write_char(w, '\t');
            writer_put(w, cigar, cigar_len);
        }
        if (f->site) write_site(f, hit, 0);
        write_char(w, '\n');
        break;
    case SM_FORMAT_BED:
        writer_put(w, record, record_len);
        write_char(w, '\t');
        write_u64(w, hit->start);
        write_char(w, '\t');
        write_u64(w, hit->end);
        write_char(w, '\t');
        if (file) {
            writer_put(w, file, file_len);
            write_char(w, ':');
        }
        writer_put(w, pattern, pattern_len);
        write_char(w, '\t');
        write_u64(w, bed_score(hit));
        write_char(w, '\t');
        write_char(w, hit->strand);
        write_char(w, '\n');
        break;
    case SM_FORMAT_JSONL:
        if (file) {
            writer_put(w, "{\"file\":", 8);
            writer_put(w, file, file_len);
            writer_put(w, ",\"record\":", 10);
        } else {
            writer_put(w, "{\"record\":", 10);
        }
        writer_put(w, record, record_len);
        writer_put(w, ",\"pattern\":", 11);
        writer_put(w, pattern, pattern_len);
        writer_put(w, ",\"strand\":\"", 11);
        write_char(w, hit->strand);
        writer_put(w, "\",\"start\":", 10);
        write_u64(w, hit->start);
        writer_put(w, ",\"end\":", 7);
        write_u64(w, hit->end);
        writer_put(w, ",\"errors\":", 10);
        write_u64(w, hit->errors);
        writer_put(w, ",\"matched\":\"", 12);
        if (hit->text) json_escape((const unsigned char *)hit->text, text_len, writer_sink, w);
        if (f->cigar) {
            size_t cigar_len;
            const char *cigar = sm_cigar_of_hit(&f->cigar_buf, f->db, hit, &cigar_len);
            writer_put(w, "\",\"cigar\":\"", 11);
            writer_put(w, cigar, cigar_len);
        }
        if (f->site) write_site(f, hit, 1);
        writer_put(w, "\"}\n", 3);
        break;
    case SM_FORMAT_COUNT:
    case SM_FORMAT_SAM:
    case SM_FORMAT_BAM:
    case SM_FORMAT_RECORDS:
    case SM_FORMAT_PROFILE:
    case SM_FORMAT_PROFILE_JSONL:
        break;
    }
}

static inline char *put_bytes(char *p, const void *data, size_t len) {
    memcpy(p, data, len);
    return p + len;
}

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits, two at a time from the end: half the divisions of the
   digit-by-digit loop, which matters at millions of rows. */
static inline char *put_u64(char *p, uint64_t value) {
    unsigned digits = 1;
    for (uint64_t limit = 10; digits < 20 && value >= limit; limit *= 10) digits++;
    char *end = p + digits, *q = end;
    while (value >= 100) {
        unsigned pair = (unsigned)(value % 100);
        value /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * pair, 2);
    }
    if (value >= 10) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * value, 2);
    } else {
        *--q = (char)('0' + value);
    }
    return end;
}

/* True when every byte can go into any format as it is. */
static int text_is_plain(const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\') return 0;
    return 1;
}

/* The hot path: one bounds check per row, then straight stores into the
   buffer. DNA hit texts are sequence letters, so they are never escaped. */
static int by_index(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* --format records: one line per record, once its hits are all in:
   [file] record, the number of hits, the patterns hit (in pattern order,
   each once, comma-separated; '.' for none). */
static void write_record_line(sm_formatter *f, uint64_t record) {
    sm_writer *w = f->w;
    size_t len;
    if (f->show_file) {
        const char *file = record_file(f, record, &len);
        writer_put(w, file, len);
        write_char(w, '\t');
    }
    const char *name = record_name(f, record, &len);
    writer_put(w, name, len);
    write_char(w, '\t');
    write_u64(w, f->rec_hits);
    write_char(w, '\t');
    if (f->rec_npatterns > 1) qsort(f->rec_patterns, f->rec_npatterns, sizeof *f->rec_patterns, by_index);
    for (size_t i = 0; i < f->rec_npatterns; i++) {
        if (i) write_char(w, ',');
        writer_put(w, f->pattern_names[f->rec_patterns[i]], f->pattern_name_lens[f->rec_patterns[i]]);
    }
    if (f->rec_npatterns == 0) write_char(w, '.');
    write_char(w, '\n');
    f->rec_hits = 0;
    f->rec_npatterns = 0;
}

int sm_formatter_record_summary(sm_formatter *f, const sm_record_summary *summary) {
    if (f->format != SM_FORMAT_RECORDS) return f->w->error;
    f->rec_hits += summary->hits;
    for (size_t i = 0; i < summary->npatterns; i++) {
        uint32_t p = summary->patterns[i].pattern;
        if (p < f->pattern_count && f->rec_seen[p] != summary->record + 1) {
            f->rec_seen[p] = summary->record + 1;
            f->rec_patterns[f->rec_npatterns++] = p;
        }
    }
    return f->w->error;
}

static void write_columns_header(sm_formatter *f) {
    for (size_t i = 0; i < f->ncolumns; i++) {
        write_char(f->w, i ? '\t' : '#');
        writer_put(f->w, column_names[f->column[i]], strlen(column_names[f->column[i]]));
    }
    write_char(f->w, '\n');
}

static void write_columns(sm_formatter *f, const sm_hit *hit) {
    sm_writer *w = f->w;
    for (size_t i = 0; i < f->ncolumns; i++) {
        size_t len = 0;
        const char *s = NULL;
        if (i) write_char(w, '\t');
        switch (f->column[i]) {
        case COL_FILE: s = f->show_file ? record_file(f, hit->record, &len) : ""; break;
        case COL_RECORD: s = record_name(f, hit->record, &len); break;
        case COL_PATTERN:
            if (hit->pattern < f->pattern_count) s = f->pattern_names[hit->pattern], len = f->pattern_name_lens[hit->pattern];
            break;
        case COL_STRAND: write_char(w, hit->strand); break;
        case COL_START: write_u64(w, hit->start); break;
        case COL_END: write_u64(w, hit->end); break;
        case COL_LENGTH: write_u64(w, hit->end - hit->start); break;
        case COL_ERRORS: write_u64(w, hit->errors); break;
        case COL_MATCHED: if (hit->text) write_tsv_text(w, hit->text, (size_t)(hit->end - hit->start)); break;
        case COL_CIGAR: s = sm_cigar_of_hit(&f->cigar_buf, f->db, hit, &len); break;
        }
        if (s) writer_put(w, s, len);
    }
    write_char(w, '\n');
}

int sm_formatter_hit(sm_formatter *f, const sm_hit *hit) {
    sm_writer *w = f->w;
    if (f->header_pending) write_header(f);
    if (f->sam) {
        if (hit->pattern < f->pattern_count)
            sm_sam_hit(f->sam, f->pattern_names[hit->pattern], f->pattern_name_lens[hit->pattern], hit);
        return w->error;
    }
    if (f->profile) {
        sm_profile_add(f->profile, hit);
        return w->error;
    }
    if (f->format == SM_FORMAT_RECORDS) {
        f->rec_hits++;
        if (hit->pattern < f->pattern_count && f->rec_seen[hit->pattern] != hit->record + 1) {
            f->rec_seen[hit->pattern] = hit->record + 1;
            f->rec_patterns[f->rec_npatterns++] = hit->pattern;
        }
        return w->error;
    }
    if (f->ncolumns) {
        write_columns(f, hit);
        return w->error;
    }
    size_t record_len = 0;
    const char *record = record_name(f, hit->record, &record_len);
    if (f->cigar || f->site || hit->pattern >= f->pattern_count || (hit->text && !f->plain_texts &&
                                            !text_is_plain(hit->text, (size_t)(hit->end - hit->start)))) {
        write_hit_fields(f, hit);
        return w->error;
    }
    const char *pattern = f->pattern_names[hit->pattern];
    size_t pattern_len = f->pattern_name_lens[hit->pattern];
    size_t text_len = hit->text ? (size_t)(hit->end - hit->start) : 0;
    size_t file_len = 0;
    const char *file = f->show_file ? record_file(f, hit->record, &file_len) : NULL;
    size_t bound = file_len + record_len + pattern_len + text_len + 3 * 20 + 96;
    if (w->cap - w->len < bound) {
        writer_flush(w);
        if (w->cap < bound) {
            write_hit_fields(f, hit);
            return w->error;
        }
    }
    char *p = w->buf + w->len;
    switch (f->format) {
    case SM_FORMAT_TSV:
        if (file) {
            p = put_bytes(p, file, file_len);
            *p++ = '\t';
        }
        p = put_bytes(p, record, record_len);
        *p++ = '\t';
        p = put_bytes(p, pattern, pattern_len);
        *p++ = '\t';
        *p++ = hit->strand;
        *p++ = '\t';
        p = put_u64(p, hit->start);
        *p++ = '\t';
        p = put_u64(p, hit->end);
        *p++ = '\t';
        p = put_u64(p, hit->errors);
        *p++ = '\t';
        p = put_bytes(p, hit->text ? hit->text : "", text_len);
        *p++ = '\n';
        break;
    case SM_FORMAT_BED:
        p = put_bytes(p, record, record_len);
        *p++ = '\t';
        p = put_u64(p, hit->start);
        *p++ = '\t';
        p = put_u64(p, hit->end);
        *p++ = '\t';
        if (file) {
            p = put_bytes(p, file, file_len);
            *p++ = ':';
        }
        p = put_bytes(p, pattern, pattern_len);
        *p++ = '\t';
        p = put_u64(p, bed_score(hit));
        *p++ = '\t';
        *p++ = hit->strand;
        *p++ = '\n';
        break;
    case SM_FORMAT_JSONL:
        if (file) {
            p = put_bytes(p, "{\"file\":", 8);
            p = put_bytes(p, file, file_len);
            p = put_bytes(p, ",\"record\":", 10);
        } else {
            p = put_bytes(p, "{\"record\":", 10);
        }
        p = put_bytes(p, record, record_len);
        p = put_bytes(p, ",\"pattern\":", 11);
        p = put_bytes(p, pattern, pattern_len);
        p = put_bytes(p, ",\"strand\":\"", 11);
        *p++ = hit->strand;
        p = put_bytes(p, "\",\"start\":", 10);
        p = put_u64(p, hit->start);
        p = put_bytes(p, ",\"end\":", 7);
        p = put_u64(p, hit->end);
        p = put_bytes(p, ",\"errors\":", 10);
        p = put_u64(p, hit->errors);
        p = put_bytes(p, ",\"matched\":\"", 12);
        p = put_bytes(p, hit->text ? hit->text : "", text_len);
        p = put_bytes(p, "\"}\n", 3);
        break;
    case SM_FORMAT_COUNT:
    case SM_FORMAT_SAM:
    case SM_FORMAT_BAM:
    case SM_FORMAT_RECORDS:
    case SM_FORMAT_PROFILE:
    case SM_FORMAT_PROFILE_JSONL:
        break;
    }
    w->len = (size_t)(p - w->buf);
    return w->error;
}

void sm_formatter_counts(sm_formatter *f, const uint64_t *counts, uint64_t total) {
    sm_writer *w = f->w;
    size_t file_len = 0;
    const char *file = f->show_file ? file_name(f, f->file_count ? f->file_count - 1 : SIZE_MAX, &file_len) : NULL;
    for (uint32_t i = 0; i < f->pattern_count; i++) {
        if (file) {
            writer_put(w, file, file_len);
            write_char(w, '\t');
        }
        writer_put(w, f->pattern_names[i], f->pattern_name_lens[i]);
        write_char(w, '\t');
        write_u64(w, counts ? counts[i] : 0);
        write_char(w, '\n');
    }
    if (file) {
        writer_put(w, file, file_len);
        write_char(w, '\t');
    }
    writer_put(w, "total\t", 6);
    write_u64(w, total);
    write_char(w, '\n');
}
