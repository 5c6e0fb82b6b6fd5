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

#include "io/seqio.h"
#include "range_check.h"
#include "testutil.h"

static tu_rng rng;

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
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
    range_recs whole = {0};
    /* an empty file is read whole by whoever holds its place, never as ranges */
    if (size == 0 || range_read_whole(path, format, &whole) != 0) {
        range_recs_free(&whole);
        return; /* a file the whole reader refuses is not this test's */
    }
    t->files++;
    char why[400];
    for (uint64_t b = 0; b <= size + 1 && tu_failures() < 20; b++) {
        uint64_t cuts[3] = {0, b, size};
        if (b > size) cuts[1] = size;
        int rc = range_compare(path, format, threads, cuts, 3, &whole, why, sizeof why);
        t->splits++;
        if (rc == RANGE_REFUSED && may_refuse) t->refusals++;
        else tu_check(rc == RANGE_SAME, "%s, cut at %llu: %s", what, (unsigned long long)b, why);
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
        int rc = range_compare(path, format, threads, cuts, n + 1, &whole, why, sizeof why);
        t->splits++;
        if (rc == RANGE_REFUSED && may_refuse) t->refusals++;
        else tu_check(rc == RANGE_SAME, "%s, %zu ranges: %s", what, n, why);
    }
    range_recs_free(&whole);
}

/* The records (and, with keep_raw, every record's bytes as read, joined)
   of a whole-file reader with threads; 0, or -1 on an error. */
static int read_threads(const char *path, sm_input_format format, unsigned threads, int keep_raw, range_recs *out,
                        uint8_t **raw, size_t *raw_len, sm_error *e) {
    sm_reader *rd;
    sm_error err;
    err.message[0] = '\0';
    if (sm_reader_open_threads(path, format, threads, &rd, &err) != SM_OK) return *e = err, -1;
    if (keep_raw) sm_reader_keep_raw(rd);
    static uint8_t piece[1 << 16];
    size_t cap = 0;
    if (keep_raw) *raw_len = 0;
    const char *name;
    int rc;
    while ((rc = sm_reader_next_record(rd, &name, &err)) > 0) {
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 64;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
            if (!out->v) exit(2);
        }
        range_rec *x = &out->v[out->n++];
        memset(x, 0, sizeof *x);
        x->name = strdup(name);
        size_t l;
        while ((rc = sm_reader_read_into(rd, piece, sizeof piece - 64, &l, &err)) > 0) {
            if (x->len + l > x->cap) {
                x->cap = 2 * (x->len + l);
                x->seq = realloc(x->seq, x->cap);
                if (!x->seq) exit(2);
            }
            memcpy(x->seq + x->len, piece, l);
            x->len += l;
        }
        if (rc < 0) break;
        if (keep_raw) {
            const uint8_t *d;
            int stable;
            if ((rc = sm_reader_record_raw(rd, &d, &l, &stable, &err)) < 0) break;
            if (*raw_len + l > cap) {
                cap = 2 * (*raw_len + l);
                *raw = realloc(*raw, cap);
                if (!*raw) exit(2);
            }
            memcpy(*raw + *raw_len, d, l);
            *raw_len += l;
        }
    }
    sm_reader_close(rd);
    *e = err;
    return rc < 0 ? -1 : 0;
}

/* The BGZF file at packed read at 1, 2 and 3 threads must fail, with a
   message holding needle (NULL: any). */
static void expect_refused(const char *packed, const char *needle, const char *what) {
    for (unsigned threads = 1; threads <= 3; threads++) {
        range_recs got = {0};
        uint8_t *raw = NULL;
        size_t raw_len = 0;
        sm_error e;
        int rc = read_threads(packed, SM_INPUT_FASTQ, threads, 0, &got, &raw, &raw_len, &e);
        tu_check(rc == -1 && (!needle || strstr(e.message, needle)), "BGZF with %s, %u threads: %s", what, threads,
                 rc ? e.message : "no error");
        free(raw);
        range_recs_free(&got);
    }
}

/* The size of the BGZF block at bgz + at (bgzip's: its BC field first). */
static size_t block_size_at(const uint8_t *bgz, size_t at) {
    return ((size_t)bgz[at + 16] | (size_t)bgz[at + 17] << 8) + 1;
}

/* BGZF inflated by worker threads, whose buffers the reader takes in place
   of a copy: some MiB of FASTQ in blocks of every size, with reads up to
   past 64 KiB among short ones, so that records, and the bytes the reader
   keeps, lie across the workers' jobs (each about 1 MiB) both ways. Read
   with 2 and 3 threads, and with 1 (blocks decoded on the reader's thread,
   each in one call when it fits), with and without the raw records, it must
   give the plain file's records, and its bytes; a block's CRC or length
   wrong, an error that says so (a block decoded in one call must check its
   trailer as the stream decoder does); bytes after a block's member inside
   its size, an error too. */
static void test_bgzf_threads(const char *plain, const char *packed) {
    size_t want = 5u << 20, n = 0;
    char *data = malloc(want + 500000);
    if (!data) exit(2);
    for (unsigned i = 0; n < want; i++) {
        size_t len = tu_rng_below(&rng, 12) == 0 ? tu_rng_below(&rng, 200000) : 20 + tu_rng_below(&rng, 300);
        n += (size_t)sprintf(data + n, "@r%u\n", i);
        for (size_t j = 0; j < len; j++) data[n++] = "ACGT"[tu_rng_below(&rng, 4)];
        memcpy(data + n, "\n+\n", 3);
        n += 3;
        for (size_t j = 0; j < len; j++) data[n++] = (char)('!' + tu_rng_below(&rng, 40));
        data[n++] = '\n';
    }
    write_file(plain, data, n);
    uint8_t *bgz = malloc(range_bgzf_bound(n));
    if (!bgz) exit(2);
    size_t size = range_bgzf_of(&rng, (const uint8_t *)data, n, 65280, bgz);
    tu_check(size > 0, "BGZF of %zu bytes", n);
    write_file(packed, bgz, size);
    range_recs whole = {0};
    tu_check(range_read_whole(plain, SM_INPUT_FASTQ, &whole) == 0, "the plain file read");
    for (unsigned threads = 1; threads <= 3; threads++)
        for (int keep_raw = 0; keep_raw < 2; keep_raw++) {
            range_recs got = {0};
            uint8_t *raw = NULL;
            size_t raw_len = 0;
            char why[400] = "";
            sm_error e;
            int rc = read_threads(packed, SM_INPUT_FASTQ, threads, keep_raw, &got, &raw, &raw_len, &e);
            tu_check(rc == 0 && range_same(&whole, &got, why, sizeof why), "BGZF, %u threads, raw %d: %s", threads,
                     keep_raw, rc ? "read error" : why);
            if (keep_raw)
                tu_check(raw_len == n && memcmp(raw, data, n) == 0, "BGZF, %u threads: raw records differ", threads);
            free(raw);
            range_recs_free(&got);
        }
    /* the middle block's CRC, then its length, off by one bit */
    size_t at = 0, mid = 0, blocks = 0;
    for (; at + 18 <= size; blocks++) at += block_size_at(bgz, at);
    for (at = 0; mid < blocks / 2; mid++) at += block_size_at(bgz, at);
    size_t end = at + block_size_at(bgz, at);
    for (int field = 0; field < 2; field++) {
        size_t flip = end - (field ? 4 : 8);
        bgz[flip] ^= 1;
        write_file(packed, bgz, size);
        bgz[flip] ^= 1;
        expect_refused(packed, "corrupt compressed data (incorrect data check)", field ? "a wrong length" : "a wrong CRC");
    }
    /* a byte after the middle block's member, counted in its size */
    uint8_t *junk = malloc(size + 1);
    if (!junk) exit(2);
    memcpy(junk, bgz, end);
    junk[end] = 'x';
    memcpy(junk + end + 1, bgz + end, size - end);
    size_t bsize = block_size_at(bgz, at) + 1;
    junk[at + 16] = (uint8_t)((bsize - 1) & 0xff);
    junk[at + 17] = (uint8_t)((bsize - 1) >> 8);
    write_file(packed, junk, size + 1);
    expect_refused(packed, NULL, "a byte after a block's member");
    free(junk);
    range_recs_free(&whole);
    free(bgz);
    free(data);
}

/* A byte-order mark at the start of a BGZF file read on three threads:
   the first block, inflated ahead, came in a buffer of its own, and the
   mark was looked for at that buffer's start instead of its data's (a
   fuzzed input: "not FASTA", or range 0 refused). Blocks of 1 to 12
   bytes, so that the mark and the first header spread over several; read
   whole on 1 and 3 threads, then as ranges cut everywhere on 1 or 3 (a
   range that starts inside the mark once took its rest for sequence where
   the rest lay in blocks past the range's end). */
static void test_bom_bgzf_threads(const char *plain, const char *packed, uint8_t *bgz, tally *t) {
    static const char fasta[] = "\xef\xbb\xbf>a x\r\nACGTN\r\nGT\r\n>b\nGG\n";
    const size_t n = sizeof fasta - 1;
    write_file(plain, fasta, n);
    range_recs want = {0};
    tu_check(range_read_whole(plain, SM_INPUT_FASTA, &want) == 0 && want.n == 2, "the plain file read");
    for (size_t max_block = 1; max_block <= 12; max_block++) {
        size_t bl = range_bgzf_of(&rng, (const uint8_t *)fasta, n, max_block, bgz);
        tu_check(bl > 0, "BGZF of %zu bytes", n);
        write_file(packed, bgz, bl);
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            range_recs got = {0};
            char why[400] = "";
            sm_error e;
            int rc = read_threads(packed, SM_INPUT_FASTA, threads, 0, &got, NULL, NULL, &e);
            tu_check(rc == 0 && range_same(&want, &got, why, sizeof why),
                     "byte-order mark, BGZF blocks of %zu, %u threads: %s", max_block, threads,
                     rc ? e.message : why);
            range_recs_free(&got);
        }
        /* ranges on one thread or three, block sizes taking turns */
        unsigned threads = max_block % 2 ? 1 : 3;
        char what[96];
        snprintf(what, sizeof what, "byte-order mark, BGZF blocks of %zu, ranges on %u threads", max_block, threads);
        check_file(packed, SM_INPUT_FASTA, threads, bl, 0, what, t);
    }
    range_recs_free(&want);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(2207));
    char dir[] = "/tmp/seqmatch-range.XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char plain[64], packed[64];
    snprintf(plain, sizeof plain, "%s/in", dir);
    snprintf(packed, sizeof packed, "%s/in.bgz", dir);
    static char data[1 << 16];
    uint8_t *bgz = malloc(range_bgzf_bound(sizeof data));
    if (!bgz) return 2;
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
                size_t bl = range_bgzf_of(&rng, (const uint8_t *)data, n, 1 + tu_rng_below(&rng, 80), bgz);
                if (!bl) return 2;
                write_file(packed, bgz, bl);
                snprintf(what, sizeof what, "BGZF %s round %u", kinds[k].name, round);
                check_file(packed, kinds[k].format, round % 4 ? 1 : 3, bl, may_refuse, what, &t);
            }
        }
    }
    test_bom_bgzf_threads(plain, packed, bgz, &t);
    printf("%u files, %u ways of cutting them, %u refused (wrapped FASTQ)\n", t.files, t.splits, t.refusals);
    free(bgz);
    test_bgzf_threads(plain, packed);
    unlink(plain);
    unlink(packed);
    rmdir(dir);
    return tu_summary("test_range");
}
