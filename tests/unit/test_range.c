/* Byte ranges: a file cut into ranges (two at every cut point of small
 * files, more at random ones), each read by a ranged reader, must give
 * exactly the records and sequence bytes of the whole-file reader once the
 * parts are put together: FASTA (line widths, \r\n and lone \r, blank lines,
 * long headers, empty records, a byte-order mark), FASTQ (qualities that
 * start with '@' or '+'), text, lines, and BGZF of them cut at any
 * compressed byte. Neighbouring ranges must agree on what lies between
 * them; where a range starts wrong (wrapped FASTQ can fool the four-line
 * rule) the disagreement or a read error must be seen, never wrong bytes.
 * The bytes read past a cut must be the record's next bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/seqio.h"
#include "testutil.h"

static tu_rng rng;

typedef struct {
    char *name;
    uint8_t *seq;
    size_t len, cap;
} rec;

typedef struct {
    rec *v;
    size_t n, cap;
} recs;

static void recs_free(recs *r) {
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].name);
        free(r->v[i].seq);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

static rec *recs_add(recs *r, const char *name) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
    }
    rec *x = &r->v[r->n++];
    memset(x, 0, sizeof *x);
    x->name = strdup(name);
    return x;
}

static void rec_put(rec *x, const uint8_t *p, size_t n) {
    if (x->len + n > x->cap) {
        x->cap = (x->len + n) * 2 + 16;
        x->seq = realloc(x->seq, x->cap);
    }
    if (n) memcpy(x->seq + x->len, p, n);
    x->len += n;
}

static uint8_t piece[1 << 16];

/* The whole-file reader's records; 0, or -1 on an error. */
static int read_whole(const char *path, sm_input_format format, recs *out) {
    sm_reader *rd;
    sm_error err;
    if (sm_reader_open(path, format, &rd, &err) != SM_OK) return -1;
    const char *name;
    int rc;
    while ((rc = sm_reader_next_record(rd, &name, &err)) > 0) {
        rec *x = recs_add(out, name);
        size_t l;
        while ((rc = sm_reader_read_into(rd, piece, sizeof piece - 64, &l, &err)) > 0) rec_put(x, piece, l);
        if (rc < 0) break;
    }
    sm_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

/* A cut record's bytes read past its range end, to check once all parts are in. */
typedef struct {
    size_t record, at;
    uint8_t *bytes;
    size_t len;
} extra;

/* Reads the file as ranges [cuts[i], cuts[i + 1]) and puts the parts
   together. Returns 0 when the ranges agree (out filled), 1 when two
   neighbours disagree (an honest refusal), -1 on a reader error or a broken
   part (why says which). */
static int read_split(const char *path, sm_input_format format, unsigned threads, const uint64_t *cuts,
                      size_t ncuts, recs *out, char *why, size_t whysize) {
    extra extras[64];
    size_t nextras = 0;
    int have_prev = 0, status = 0;
    sm_range_info prev;
    memset(&prev, 0, sizeof prev);
    uint64_t lines_before = 0;
    size_t pathlen = strlen(path);
    for (size_t u = 0; u + 1 < ncuts && status == 0; u++) {
        if (cuts[u] == cuts[u + 1]) continue; /* no range is empty */
        sm_reader *rd;
        sm_error err;
        if (sm_reader_open_range(path, format, threads, cuts[u], cuts[u + 1], &rd, &err) != SM_OK) {
            snprintf(why, whysize, "range %zu open: %.300s", u, err.message);
            return -1;
        }
        const char *name;
        int rc;
        while ((rc = sm_reader_next_record(rd, &name, &err)) > 0) {
            rec *x;
            if (sm_reader_record_continued(rd)) {
                x = out->n ? &out->v[out->n - 1] : NULL;
            } else if (format == SM_INPUT_LINES) {
                /* PATH:N, N counted from the range's first line */
                unsigned long long n = strtoull(name + pathlen + 1, NULL, 10);
                char full[4096];
                snprintf(full, sizeof full, "%s:%llu", path, n + (unsigned long long)lines_before);
                x = recs_add(out, full);
            } else {
                x = recs_add(out, name);
            }
            size_t l, got = 0;
            while ((rc = sm_reader_read_into(rd, piece, sizeof piece - 64, &l, &err)) > 0) {
                if (!x) {
                    snprintf(why, whysize, "range %zu: sequence before any record", u);
                    sm_reader_close(rd);
                    return -1;
                }
                rec_put(x, piece, l);
                got += l;
            }
            if (rc < 0) break;
            if (sm_reader_record_cut(rd) && x && nextras < 64) {
                extra *e = &extras[nextras++];
                e->record = (size_t)(x - out->v);
                e->at = x->len;
                e->bytes = NULL;
                e->len = 0;
                while ((rc = sm_reader_read_extra(rd, piece, sizeof piece - 64, &l, &err)) > 0) {
                    e->bytes = realloc(e->bytes, e->len + l);
                    memcpy(e->bytes + e->len, piece, l);
                    e->len += l;
                }
                if (rc < 0) break;
            }
            (void)got;
        }
        if (rc < 0) {
            snprintf(why, whysize, "range %zu [%llu, %llu): %.300s", u, (unsigned long long)cuts[u],
                     (unsigned long long)cuts[u + 1], err.message);
            sm_reader_close(rd);
            status = -1;
            break;
        }
        sm_range_info info;
        sm_reader_range_info(rd, &info);
        sm_reader_close(rd);
        if (info.empty) continue;
        if (have_prev) {
            int agree = 1;
            if (format == SM_INPUT_FASTA && info.start_kind != SM_RANGE_LINE_START &&
                info.start_kind != prev.end_kind)
                agree = 0;
            if ((format == SM_INPUT_FASTQ || format == SM_INPUT_LINES) && prev.next_record != info.first_record)
                agree = 0;
            if (!agree) {
                snprintf(why, whysize, "ranges before and after %llu disagree", (unsigned long long)cuts[u]);
                status = 1;
            }
        }
        lines_before += info.lines;
        prev = info;
        have_prev = 1;
    }
    for (size_t i = 0; i < nextras; i++) {
        extra *e = &extras[i];
        if (status == 0) {
            const rec *x = &out->v[e->record];
            if (e->at + e->len != x->len || (e->len && memcmp(x->seq + e->at, e->bytes, e->len) != 0)) {
                snprintf(why, whysize, "bytes past the cut of record %zu at %zu differ", e->record, e->at);
                status = -1;
            }
        }
        free(e->bytes);
    }
    return status;
}

static int same(const recs *a, const recs *b, char *why, size_t whysize) {
    if (a->n != b->n) {
        snprintf(why, whysize, "%zu records, expected %zu", b->n, a->n);
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->v[i].name, b->v[i].name) != 0) {
            snprintf(why, whysize, "record %zu named '%s', expected '%s'", i, b->v[i].name, a->v[i].name);
            return 0;
        }
        if (a->v[i].len != b->v[i].len || (a->v[i].len && memcmp(a->v[i].seq, b->v[i].seq, a->v[i].len) != 0)) {
            snprintf(why, whysize, "record %zu ('%s'): %zu bytes, expected %zu", i, a->v[i].name, b->v[i].len,
                     a->v[i].len);
            return 0;
        }
    }
    return 1;
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

/* A BGZF block of data (at most 65536 bytes), as bgzip writes it. */
static size_t bgzf_block(const uint8_t *data, size_t n, uint8_t *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(2);
    static const uint8_t head[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0, 0};
    memcpy(out, head, 18);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n;
    z.next_out = out + 18;
    z.avail_out = 70000;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) exit(2);
    size_t clen = 70000 - z.avail_out;
    deflateEnd(&z);
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n);
    uint8_t *t = out + 18 + clen;
    for (int i = 0; i < 4; i++) t[i] = (uint8_t)(crc >> (8 * i)), t[4 + i] = (uint8_t)(n >> (8 * i));
    size_t bsize = 18 + clen + 8;
    out[16] = (uint8_t)((bsize - 1) & 0xff);
    out[17] = (uint8_t)((bsize - 1) >> 8);
    return bsize;
}

/* BGZF in blocks of 1..max_block bytes, an empty block among them at times
   (files joined with cat), and the end-of-file block. */
static size_t bgzf_of(const uint8_t *data, size_t n, size_t max_block, uint8_t *out) {
    size_t at = 0, len = 0;
    while (at < n) {
        size_t b = 1 + tu_rng_below(&rng, (uint32_t)max_block);
        if (b > n - at) b = n - at;
        len += bgzf_block(data + at, b, out + len);
        at += b;
        if (tu_rng_chance(&rng, 10)) len += bgzf_block(data, 0, out + len);
    }
    len += bgzf_block(data, 0, out + len);
    return len;
}

static const char *line_end(int style) { return style == 0 ? "\n" : style == 1 ? "\r\n" : "\r"; }

/* A small FASTA: headers with words (some long), lines of varied widths,
   blank lines, empty records; one line-end style or mixed. */
static size_t make_fasta(char *out) {
    size_t n = 0;
    int style = (int)tu_rng_below(&rng, 4); /* 3: mixed */
    if (tu_rng_chance(&rng, 10)) n += (size_t)sprintf(out + n, "\xef\xbb\xbf");
    if (tu_rng_chance(&rng, 15)) n += (size_t)sprintf(out + n, "%s", line_end(style % 3));
    unsigned records = 1 + tu_rng_below(&rng, 5);
    for (unsigned r = 0; r < records; r++) {
        int s = style == 3 ? (int)tu_rng_below(&rng, 3) : style;
        n += (size_t)sprintf(out + n, ">r%u", r);
        if (tu_rng_chance(&rng, 50)) {
            unsigned words = tu_rng_below(&rng, tu_rng_chance(&rng, 20) ? 40 : 4);
            for (unsigned w = 0; w < words; w++) n += (size_t)sprintf(out + n, " w%u", w);
        }
        n += (size_t)sprintf(out + n, "%s", line_end(s));
        size_t len = tu_rng_chance(&rng, 15) ? 0 : tu_rng_below(&rng, 150);
        unsigned width = 1 + tu_rng_below(&rng, tu_rng_chance(&rng, 30) ? 400 : 70);
        for (size_t i = 0; i < len; i++) {
            out[n++] = "ACGTNacgt"[tu_rng_below(&rng, 9)];
            if ((i + 1) % width == 0 || i + 1 == len) {
                n += (size_t)sprintf(out + n, "%s", line_end(style == 3 ? (int)tu_rng_below(&rng, 3) : s));
                if (tu_rng_chance(&rng, 5)) n += (size_t)sprintf(out + n, "%s", line_end(s));
            }
        }
    }
    return n;
}

/* A small FASTQ: qualities that start with '@' or '+' and contain them;
   with wrap, sequence and quality over several lines at times. */
static size_t make_fastq(char *out, int wrap) {
    size_t n = 0;
    int crlf = tu_rng_chance(&rng, 25);
    const char *nl = crlf ? "\r\n" : "\n";
    unsigned records = 1 + tu_rng_below(&rng, 8);
    for (unsigned r = 0; r < records; r++) {
        n += (size_t)sprintf(out + n, "@q%u%s%s", r, tu_rng_chance(&rng, 30) ? " extra" : "", nl);
        size_t len = tu_rng_below(&rng, 40);
        unsigned width = wrap && tu_rng_chance(&rng, 50) ? 1 + tu_rng_below(&rng, 20) : 1000;
        for (size_t i = 0; i < len; i++) {
            out[n++] = "ACGTN"[tu_rng_below(&rng, 5)];
            if ((i + 1) % width == 0 && i + 1 < len) n += (size_t)sprintf(out + n, "%s", nl);
        }
        n += (size_t)sprintf(out + n, "%s+%s%s", nl, tu_rng_chance(&rng, 30) ? "q" : "", nl);
        for (size_t i = 0; i < len; i++) {
            /* '@' and '+' often, first of all */
            out[n++] = tu_rng_chance(&rng, 30) ? "@+"[tu_rng_below(&rng, 2)] : (char)('!' + tu_rng_below(&rng, 94));
            if ((i + 1) % width == 0 && i + 1 < len) n += (size_t)sprintf(out + n, "%s", nl);
        }
        n += (size_t)sprintf(out + n, "%s", nl);
    }
    return n;
}

/* Text and lines: words, blank lines, every line-end style. */
static size_t make_lines(char *out) {
    size_t n = 0;
    unsigned lines = tu_rng_below(&rng, 30);
    for (unsigned l = 0; l < lines; l++) {
        unsigned len = tu_rng_below(&rng, tu_rng_chance(&rng, 20) ? 200 : 20);
        for (unsigned i = 0; i < len; i++) out[n++] = "abc >@+\t"[tu_rng_below(&rng, 8)];
        n += (size_t)sprintf(out + n, "%s", line_end((int)tu_rng_below(&rng, 3)));
    }
    if (tu_rng_chance(&rng, 30)) n += (size_t)sprintf(out + n, "last");
    return n;
}

typedef struct {
    unsigned files, splits, refusals;
} tally;

/* Every two-way cut of the file (or of its BGZF form), then random cuts
   into more ranges. */
static void check_file(const char *path, sm_input_format format, unsigned threads, uint64_t size, int may_refuse,
                       const char *what, tally *t) {
    recs whole = {0};
    /* an empty file is read whole by whoever holds its place, never as ranges */
    if (size == 0 || read_whole(path, format, &whole) != 0) {
        recs_free(&whole);
        return; /* a file the whole reader refuses is not this test's */
    }
    t->files++;
    char why[400];
    for (uint64_t b = 0; b <= size + 1 && tu_failures() < 20; b++) {
        uint64_t cuts[3] = {0, b, size};
        if (b > size) cuts[1] = size;
        recs parts = {0};
        why[0] = 0;
        int rc = read_split(path, format, threads, cuts, 3, &parts, why, sizeof why);
        t->splits++;
        if (rc != 0 && may_refuse) t->refusals++;
        else if (tu_check(rc == 0, "%s, cut at %llu: %s", what, (unsigned long long)b, why))
            tu_check(same(&whole, &parts, why, sizeof why), "%s, cut at %llu: %s", what, (unsigned long long)b, why);
        recs_free(&parts);
    }
    for (unsigned round = 0; round < 12 && tu_failures() < 20; round++) {
        uint64_t cuts[8];
        size_t n = 2 + tu_rng_below(&rng, 6);
        cuts[0] = 0;
        for (size_t i = 1; i < n; i++) cuts[i] = size ? tu_rng_below(&rng, (uint32_t)size + 1) : 0;
        cuts[n] = size;
        for (size_t i = 1; i < n; i++) /* sorted; equal cuts make empty ranges */
            for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
                uint64_t x = cuts[j];
                cuts[j] = cuts[j - 1];
                cuts[j - 1] = x;
            }
        recs parts = {0};
        why[0] = 0;
        int rc = read_split(path, format, threads, cuts, n + 1, &parts, why, sizeof why);
        t->splits++;
        if (rc != 0 && may_refuse) t->refusals++;
        else if (tu_check(rc == 0, "%s, %zu ranges: %s", what, n, why))
            tu_check(same(&whole, &parts, why, sizeof why), "%s, %zu ranges: %s", what, n, why);
        recs_free(&parts);
    }
    recs_free(&whole);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(2207));
    char dir[] = "/tmp/seqmatch-range.XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char plain[64], packed[64];
    snprintf(plain, sizeof plain, "%s/in", dir);
    snprintf(packed, sizeof packed, "%s/in.bgz", dir);
    static char data[1 << 16];
    static uint8_t bgz[1 << 18];
    tally t = {0, 0, 0};
    unsigned rounds = tu_scaled(10);
    for (unsigned round = 0; round < rounds && tu_failures() < 20; round++) {
        static const struct {
            int kind; /* 0 FASTA, 1 FASTQ, 2 wrapped FASTQ, 3 text, 4 lines */
            sm_input_format format;
            const char *name;
        } kinds[] = {{0, SM_INPUT_FASTA, "FASTA"},
                     {1, SM_INPUT_FASTQ, "FASTQ"},
                     {2, SM_INPUT_FASTQ, "wrapped FASTQ"},
                     {3, SM_INPUT_TEXT, "text"},
                     {4, SM_INPUT_LINES, "lines"}};
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            size_t n = kinds[k].kind == 0   ? make_fasta(data)
                       : kinds[k].kind <= 2 ? make_fastq(data, kinds[k].kind == 2)
                                            : make_lines(data);
            write_file(plain, data, n);
            char what[96];
            int may_refuse = kinds[k].kind == 2;
            snprintf(what, sizeof what, "%s round %u", kinds[k].name, round);
            check_file(plain, kinds[k].format, 1, n, may_refuse, what, &t);
            if (round % 2 == 0) {
                size_t bl = bgzf_of((const uint8_t *)data, n, 1 + tu_rng_below(&rng, 80), bgz);
                write_file(packed, bgz, bl);
                snprintf(what, sizeof what, "BGZF %s round %u", kinds[k].name, round);
                check_file(packed, kinds[k].format, round % 4 ? 1 : 3, bl, may_refuse, what, &t);
            }
        }
    }
    printf("%u files, %u ways of cutting them, %u refused (wrapped FASTQ)\n", t.files, t.splits, t.refusals);
    unlink(plain);
    unlink(packed);
    rmdir(dir);
    return tu_summary("test_range");
}
