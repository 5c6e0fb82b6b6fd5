/* seqmatch filter and demux against an oracle: random FASTA, FASTQ and
 * line files in every layout the reader accepts (wrapped lines, \r\n,
 * header comments, blank lines, no final line end; plain or gzip; single
 * or paired), random patterns with IUPAC codes, exact / k mismatches /
 * k edits, both strands or one, anchored or not. Which records have a hit,
 * and which barcode is closest, is computed here from the definitions
 * (tests/common's oracles: no library code), the expected files are the
 * records' bytes as generated, and the command's files must equal them
 * byte for byte.
 *
 * usage: reads_oracle SEQMATCH_BINARY */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "approx_oracle.h"
#include "oracle.h"
#include "testutil.h"

static tu_rng rng;
static const char *seqmatch;
static char dir[64];

typedef struct {
    char *data;
    size_t len, cap;
} text;

static void put(text *t, const void *p, size_t n) {
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->data = realloc(t->data, t->cap);
    }
    if (n) memcpy(t->data + t->len, p, n);
    t->len += n;
    t->data[t->len] = '\0';
}
static void puts_t(text *t, const char *s) { put(t, s, strlen(s)); }

#define MAX_RECORDS 80
#define MAX_PATTERNS 8

typedef struct {
    text file;
    size_t nrec;
    size_t start[MAX_RECORDS + 1]; /* record i is file[start[i], start[i+1]) */
    text seq[MAX_RECORDS];
} reads_file;

typedef struct {
    int lines;       /* text lines, not DNA records */
    int fastq;
    sm_match match;
    uint32_t k;
    sm_strands strands;
    sm_anchor anchor;
    unsigned flags;  /* SM_FLAG_TEXT_IUPAC, SM_FLAG_IGNORE_CASE */
    size_t npats;
    char pats[MAX_PATTERNS][24];
    size_t plen[MAX_PATTERNS];
    char names[MAX_PATTERNS][16];
} setup;

static void reads_free(reads_file *f) {
    free(f->file.data);
    for (size_t i = 0; i < f->nrec; i++) free(f->seq[i].data);
    memset(f, 0, sizeof *f);
}

static const char *line_end(void) {
    unsigned r = tu_rng_below(&rng, 10);
    return r < 7 ? "\n" : r < 9 ? "\r\n" : "\r";
}

/* A sequence for a record: random, with a pattern (concrete, sometimes
   mutated, sometimes reverse complemented) planted at the start, the end
   or inside. */
static void make_sequence(const setup *s, text *out) {
    size_t n = tu_rng_below(&rng, 70);
    char buf[160];
    if (s->lines) tu_random_from(&rng, buf, n, "abcAB ");
    else tu_random_iupac(&rng, buf, n, 2, 20);
    put(out, buf, n);
    if (!tu_rng_chance(&rng, 70) || s->npats == 0) return;
    size_t p = tu_rng_below(&rng, (uint32_t)s->npats);
    char planted[48];
    size_t m = s->plen[p], pl = 0;
    for (size_t i = 0; i < m; i++) {
        char c = s->pats[p][i];
        if (!s->lines && !strchr("ACGTacgt", c)) c = "ACGT"[tu_rng_below(&rng, 4)];
        unsigned e = tu_rng_below(&rng, 100);
        if (e < 6) continue; /* deletion */
        if (e < 12) c = s->lines ? 'z' : "ACGT"[tu_rng_below(&rng, 4)];
        planted[pl++] = c;
        if (e >= 12 && e < 16) planted[pl++] = s->lines ? 'y' : 'A'; /* insertion */
    }
    if (!s->lines && tu_rng_chance(&rng, 30)) {
        char rc[48];
        oracle_reverse_complement(planted, pl, rc);
        memcpy(planted, rc, pl);
    }
    text t = {0};
    unsigned where = tu_rng_below(&rng, 3);
    size_t cut = where == 0 ? 0 : where == 1 ? out->len : tu_rng_below(&rng, (uint32_t)out->len + 1);
    put(&t, out->data, cut);
    put(&t, planted, pl);
    put(&t, out->data + cut, out->len - cut);
    free(out->data);
    *out = t;
}

/* Writes records (names[i] + suffix) into f; seqs given (pairs share
   nothing but names) or made. */
static void make_file(const setup *s, reads_file *f, size_t nrec, const char *suffix) {
    memset(f, 0, sizeof *f);
    f->nrec = nrec;
    const char *eol = line_end();
    if (!s->lines && tu_rng_chance(&rng, 10)) puts_t(&f->file, "\n");
    for (size_t i = 0; i < nrec; i++) {
        make_sequence(s, &f->seq[i]);
        /* a blank line after a record is its own: start[i] was set as the
           record before ended */
        if (i == 0) f->start[0] = f->file.len;
        if (s->lines) {
            put(&f->file, f->seq[i].data, f->seq[i].len);
            /* an empty last line exists only with its line end */
            if (i + 1 < nrec || f->seq[i].len == 0 || tu_rng_chance(&rng, 60)) puts_t(&f->file, eol);
            f->start[i + 1] = f->file.len;
            continue;
        }
        char head[64];
        snprintf(head, sizeof head, "%cr%zu%s", s->fastq ? '@' : '>', i, suffix);
        puts_t(&f->file, head);
        if (tu_rng_chance(&rng, 30)) puts_t(&f->file, " comment x=1");
        puts_t(&f->file, eol);
        size_t n = f->seq[i].len, width = tu_rng_chance(&rng, 60) ? n + 1 : 1 + tu_rng_below(&rng, 30);
        for (size_t at = 0; at < n; at += width) {
            put(&f->file, f->seq[i].data + at, n - at < width ? n - at : width);
            puts_t(&f->file, eol);
        }
        if (s->fastq) {
            puts_t(&f->file, "+");
            puts_t(&f->file, eol);
            for (size_t j = 0; j < n; j++) put(&f->file, "I", 1);
            puts_t(&f->file, eol);
        }
        if (tu_rng_chance(&rng, 10)) puts_t(&f->file, eol);
        f->start[i + 1] = f->file.len;
    }
    /* no line end after the last line, sometimes */
    size_t el = strlen(eol);
    if (!s->lines && nrec > 0 && tu_rng_chance(&rng, 20) && f->file.len > el + 1 &&
        memcmp(f->file.data + f->file.len - el, eol, el) == 0 && f->file.data[f->file.len - el - 1] != '\n' &&
        f->file.data[f->file.len - el - 1] != '\r') {
        f->file.len -= el;
        f->start[nrec] = f->file.len;
    }
}

/* The key of pattern p on a strand, as compared. */
static void key_of(const setup *s, size_t p, int reverse, char *key) {
    if (!s->lines && reverse) {
        oracle_reverse_complement(s->pats[p], s->plen[p], key);
        return;
    }
    for (size_t i = 0; i < s->plen[p]; i++) {
        char c = s->pats[p][i];
        if (!s->lines && c >= 'a' && c <= 'z') c = (char)(c - 32);
        if (s->lines && (s->flags & SM_FLAG_IGNORE_CASE) && c >= 'A' && c <= 'Z') c = (char)(c + 32);
        key[i] = c;
    }
}

/* The fewest errors of pattern p's hits in a sequence (any strand
   searched), or UINT32_MAX when it has none: from the definitions. */
static uint32_t least_errors(const setup *s, size_t p, const char *t, size_t n) {
    sm_alphabet a = s->lines ? SM_ALPHABET_TEXT : SM_ALPHABET_DNA;
    uint32_t best = UINT32_MAX, k = s->k;
    size_t m = s->plen[p];
    for (int rev = 0; rev <= 1; rev++) {
        if (s->lines ? rev : rev ? s->strands == SM_STRAND_FORWARD : s->strands == SM_STRAND_REVERSE) continue;
        char key[24];
        key_of(s, p, rev, key);
        uint32_t least = UINT32_MAX;
        if (s->match != SM_MATCH_EDITS) {
            for (size_t i = 0; i + m <= n; i++) {
                if (s->anchor == SM_ANCHOR_START && i != 0) break;
                if (s->anchor == SM_ANCHOR_END && i + m != n) continue;
                uint32_t e = aoracle_mismatches(key, m, t + i, a, s->flags);
                if (e < least) least = e;
            }
        } else if (n > 0) {
            if (s->anchor == SM_ANCHOR_START) {
                for (size_t j = 1; j <= n; j++) {
                    uint32_t e = aoracle_edit(key, m, t, j, a, s->flags);
                    if (e < least) least = e;
                }
            } else if (s->anchor == SM_ANCHOR_END) {
                for (size_t st = 0; st <= n; st++) {
                    uint32_t e = aoracle_edit(key, m, t + st, n - st, a, s->flags);
                    if (e < least) least = e;
                }
            } else {
                for (size_t j = 1; j <= n; j++) {
                    uint32_t e = aoracle_D_by_definition(key, m, t, j, a, s->flags);
                    if (e < least) least = e;
                }
            }
        }
        if (least <= k && least < best) best = least;
    }
    return best;
}

static void write_file(const char *path, const text *t, int gz) {
    if (gz) {
        gzFile g = gzopen(path, "wb1");
        if (t->len) gzwrite(g, t->data, (unsigned)t->len);
        gzclose(g);
        return;
    }
    FILE *f = fopen(path, "wb");
    fwrite(t->data, 1, t->len, f);
    fclose(f);
}

static int read_file(const char *path, text *out) {
    out->len = 0;
    gzFile g = gzopen(path, "rb"); /* reads plain files too */
    if (!g) return -1;
    char buf[65536];
    int n;
    while ((n = gzread(g, buf, sizeof buf)) > 0) put(out, buf, (size_t)n);
    gzclose(g);
    if (!out->data) put(out, "", 0);
    return 0;
}

/* The record's bytes as the command writes them: as read, and a line end
   before it when the record written before it (the last of an input)
   ended without one; none added at the end. */
static void add_record(text *out, const reads_file *f, size_t i) {
    size_t a = f->start[i], b = f->start[i + 1];
    if (b > a && out->len > 0 && out->data[out->len - 1] != '\n' && out->data[out->len - 1] != '\r')
        put(out, "\n", 1);
    put(out, f->file.data + a, b - a);
}

static int run(const char *args, int *status) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s/err", seqmatch, args, dir);
    int rc = system(cmd);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return *status;
}

static void show_err(void) {
    char path[128];
    snprintf(path, sizeof path, "%s/err", dir);
    text t = {0};
    if (read_file(path, &t) == 0 && t.len) fprintf(stderr, "    stderr: %.300s\n", t.data);
    free(t.data);
}

static int same_file(const char *what, const char *path, const text *want) {
    text got = {0};
    int ok = read_file(path, &got) == 0 && got.len == want->len &&
             (got.len == 0 || memcmp(got.data, want->data, got.len) == 0);
    if (!ok) {
        char a[80], b[80];
        tu_check(0, "%s: %s differs (%zu bytes, want %zu)\n    got  '%s'\n    want '%s'", what, path, got.len,
                 want->len, tu_excerpt(got.data ? got.data : "", got.len, 60, a, sizeof a),
                 tu_excerpt(want->data ? want->data : "", want->len, 60, b, sizeof b));
        show_err();
    } else {
        tu_check(1, "%s", what);
    }
    free(got.data);
    return ok;
}

static void random_setup(setup *s, int demux) {
    memset(s, 0, sizeof *s);
    s->lines = !demux && tu_rng_chance(&rng, 15);
    s->fastq = !s->lines && tu_rng_chance(&rng, 60);
    unsigned kind = tu_rng_below(&rng, 3);
    s->match = kind == 0 ? SM_MATCH_EXACT : kind == 1 ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
    s->k = s->match == SM_MATCH_EXACT ? 0 : 1 + tu_rng_below(&rng, 2);
    s->strands = demux && tu_rng_chance(&rng, 60) ? SM_STRAND_FORWARD : (sm_strands)tu_rng_below(&rng, 3);
    unsigned an = tu_rng_below(&rng, 4);
    s->anchor = an == 0 ? SM_ANCHOR_START : an == 1 ? SM_ANCHOR_END : SM_ANCHOR_NONE;
    if (s->lines && tu_rng_chance(&rng, 40)) s->flags |= SM_FLAG_IGNORE_CASE;
    if (!s->lines && tu_rng_chance(&rng, 15)) s->flags |= SM_FLAG_TEXT_IUPAC;
    s->npats = 1 + tu_rng_below(&rng, demux ? 6 : 4);
    for (size_t p = 0; p < s->npats; p++) {
        size_t m = 4 + tu_rng_below(&rng, 9);
        if (s->lines) tu_random_from(&rng, s->pats[p], m, "abcAB");
        else tu_random_iupac(&rng, s->pats[p], m, 8, 20);
        s->plen[p] = m;
        /* demux: now and then two patterns under one barcode name */
        if (demux && p > 0 && tu_rng_chance(&rng, 15)) memcpy(s->names[p], s->names[p - 1], sizeof s->names[p]);
        else snprintf(s->names[p], sizeof s->names[p], "bc%u", (unsigned)p);
    }
}

static void options_of(const setup *s, char *buf, size_t size) {
    snprintf(buf, size, "-p %s/pats.fa %s%s%s%s%s%s -t %u --chunk-size %u", dir,
             s->lines ? "--lines --alphabet text " : "",
             s->match == SM_MATCH_MISMATCHES ? (s->k == 1 ? "-m 1 " : "-m 2 ")
             : s->match == SM_MATCH_EDITS    ? (s->k == 1 ? "-k 1 " : "-k 2 ")
                                             : "",
             s->lines ? "" : s->strands == SM_STRAND_FORWARD ? "--strand + " : s->strands == SM_STRAND_REVERSE ? "--strand - " : "--strand both ",
             s->anchor == SM_ANCHOR_START ? "--anchor start " : s->anchor == SM_ANCHOR_END ? "--anchor end " : "--anchor any ",
             s->flags & SM_FLAG_IGNORE_CASE ? "-i " : "", s->flags & SM_FLAG_TEXT_IUPAC ? "--text-iupac " : "",
             1 + tu_rng_below(&rng, 3), 16 + tu_rng_below(&rng, 200));
}

static void write_patterns(const setup *s) {
    text t = {0};
    for (size_t p = 0; p < s->npats; p++) {
        puts_t(&t, ">");
        puts_t(&t, s->names[p]);
        puts_t(&t, "\n");
        put(&t, s->pats[p], s->plen[p]);
        puts_t(&t, "\n");
    }
    char path[128];
    snprintf(path, sizeof path, "%s/pats.fa", dir);
    write_file(path, &t, 0);
    free(t.data);
}

static void filter_round(unsigned round) {
    setup s;
    random_setup(&s, 0);
    int paired = !s.lines && tu_rng_chance(&rng, 35);
    int gz_in = tu_rng_chance(&rng, 30), gz_out = tu_rng_chance(&rng, 30);
    size_t nrec = tu_rng_below(&rng, MAX_RECORDS);
    reads_file f[2];
    make_file(&s, &f[0], nrec, paired ? "/1" : "");
    if (paired) make_file(&s, &f[1], nrec, "/2");
    write_patterns(&s);
    char in[2][128];
    for (int m = 0; m < 1 + paired; m++) {
        snprintf(in[m], sizeof in[m], "%s/in%d.%s%s", dir, m + 1, s.lines ? "txt" : s.fastq ? "fq" : "fa",
                 gz_in ? ".gz" : "");
        write_file(in[m], &f[m].file, gz_in);
    }
    /* what each record (pair) is */
    text want_match[2] = {{0}}, want_other[2] = {{0}};
    for (size_t i = 0; i < nrec; i++) {
        int hit = 0;
        for (int m = 0; m < 1 + paired && !hit; m++)
            for (size_t p = 0; p < s.npats && !hit; p++)
                hit = least_errors(&s, p, f[m].seq[i].data, f[m].seq[i].len) != UINT32_MAX;
        for (int m = 0; m < 1 + paired; m++) add_record(hit ? &want_match[m] : &want_other[m], &f[m], i);
    }
    char opts[512], args[1400], what[1600];
    options_of(&s, opts, sizeof opts);
    const char *ext = gz_out ? ".gz" : "";
    int status;
    if (paired) {
        snprintf(args, sizeof args, "filter %s -1 %s -2 %s --matched %s/m_#.out%s --unmatched %s/u_#.out%s", opts,
                 in[0], in[1], dir, ext, dir, ext);
    } else if (tu_rng_chance(&rng, 50)) {
        snprintf(args, sizeof args, "filter %s %s %s -o %s/m_1.out%s", opts, tu_rng_chance(&rng, 50) ? "-v" : "",
                 in[0], dir, ext);
    } else {
        snprintf(args, sizeof args, "filter %s %s --matched %s/m_1.out%s --unmatched %s/u_1.out%s", opts, in[0], dir,
                 ext, dir, ext);
    }
    int inverted = strstr(args, " -v ") != NULL;
    snprintf(what, sizeof what, "round %u: seqmatch %s", round, args);
    run(args, &status);
    int want_status = 0; /* a read command that ran exits 0, whatever it kept */
    if (!tu_check(status == want_status, "%s: exit %d, want %d", what, status, want_status)) show_err();
    for (int m = 0; m < 1 + paired; m++) {
        char path[160];
        snprintf(path, sizeof path, "%s/m_%d.out%s", dir, m + 1, ext);
        same_file(what, path, inverted ? &want_other[m] : &want_match[m]);
        if (strstr(args, "--unmatched")) {
            snprintf(path, sizeof path, "%s/u_%d.out%s", dir, m + 1, ext);
            same_file(what, path, &want_other[m]);
        }
        free(want_match[m].data);
        free(want_other[m].data);
        reads_free(&f[m]);
        if (!paired) break;
    }
}

static void demux_round(unsigned round) {
    setup s;
    random_setup(&s, 1);
    int paired = tu_rng_chance(&rng, 35);
    unsigned barcode_read = paired && tu_rng_chance(&rng, 40) ? 2 : 1;
    int gz_in = tu_rng_chance(&rng, 30), gz_out = tu_rng_chance(&rng, 40);
    size_t nrec = 1 + tu_rng_below(&rng, MAX_RECORDS - 1); /* the file names tell FASTA from FASTQ */
    reads_file f[2];
    make_file(&s, &f[0], nrec, paired ? "/1" : "");
    if (paired) make_file(&s, &f[1], nrec, "/2");
    write_patterns(&s);
    char in[2][128];
    for (int m = 0; m < 1 + paired; m++) {
        snprintf(in[m], sizeof in[m], "%s/in%d.%s%s", dir, m + 1, s.fastq ? "fq" : "fa", gz_in ? ".gz" : "");
        write_file(in[m], &f[m].file, gz_in);
    }
    /* barcodes: one per distinct name, in order */
    size_t nbc = 0, bc_of[MAX_PATTERNS];
    for (size_t p = 0; p < s.npats; p++) {
        bc_of[p] = nbc;
        if (p > 0 && strcmp(s.names[p], s.names[p - 1]) == 0) bc_of[p] = bc_of[p - 1];
        else nbc++;
    }
    text want[MAX_PATTERNS + 1][2];
    memset(want, 0, sizeof want);
    for (size_t i = 0; i < nrec; i++) {
        const reads_file *bf = &f[paired ? barcode_read - 1 : 0];
        uint32_t best = UINT32_MAX;
        size_t choice = nbc;
        int tie = 0;
        for (size_t p = 0; p < s.npats; p++) {
            uint32_t e = least_errors(&s, p, bf->seq[i].data, bf->seq[i].len);
            if (e == UINT32_MAX) continue;
            if (e < best) best = e, choice = bc_of[p], tie = 0;
            else if (e == best && bc_of[p] != choice) tie = 1;
        }
        size_t to = best == UINT32_MAX || tie ? nbc : choice;
        for (int m = 0; m < 1 + paired; m++) add_record(&want[to][m], &f[m], i);
    }
    char opts[512], args[1400], what[1600], out[128];
    options_of(&s, opts, sizeof opts);
    snprintf(out, sizeof out, "%s/dm%u", dir, round);
    if (paired)
        snprintf(args, sizeof args, "demux %s --barcode-read %u -o %s %s -1 %s -2 %s --summary %s/summary", opts,
                 barcode_read, out, gz_out ? "--gzip" : "", in[0], in[1], dir);
    else
        snprintf(args, sizeof args, "demux %s -o %s %s %s --summary %s/summary", opts, out, gz_out ? "--gzip" : "",
                 in[0], dir);
    snprintf(what, sizeof what, "round %u: seqmatch %s", round, args);
    int status;
    run(args, &status);
    /* 0 whenever it ran, whatever it assigned */
    if (!tu_check(status == 0, "%s: exit %d, want 0", what, status)) show_err();
    const char *ext = s.fastq ? "fastq" : "fasta";
    for (size_t b = 0; b <= nbc; b++) {
        const char *name = "unassigned";
        for (size_t p = 0; p < s.npats; p++)
            if (bc_of[p] == b) {
                name = s.names[p];
                break;
            }
        for (int m = 0; m < 1 + paired; m++) {
            char path[256];
            snprintf(path, sizeof path, "%s/%s%s.%s%s", out, name, paired ? (m ? "_R2" : "_R1") : "", ext,
                     gz_out ? ".gz" : "");
            same_file(what, path, &want[b][m]);
            free(want[b][m].data);
        }
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", out);
    if (system(cmd) != 0) tu_check(0, "rm");
    for (int m = 0; m < 1 + paired; m++) reads_free(&f[m]);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SEQMATCH_BINARY\n", argv[0]);
        return 2;
    }
    seqmatch = argv[1];
    snprintf(dir, sizeof dir, "/tmp/sm_reads_XXXXXX");
    if (!mkdtemp(dir)) return 2;
    tu_rng_seed(&rng, tu_seed_from_env(777));
    unsigned rounds = tu_scaled(60);
    for (unsigned r = 0; r < rounds && tu_failures() < 10; r++) {
        filter_round(r);
        demux_round(r);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 2;
    return tu_summary("reads_oracle");
}
