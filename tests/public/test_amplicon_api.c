/* In-silico PCR (sm_amplicon_*, include/seqmatch_reader.h) through the
 * installed headers only, against an oracle written from the definition
 * (docs/amplicon.md): every window of every primer compared symbol by
 * symbol (IUPAC sets, N and other codes in the text as mismatches unless
 * --text-iupac, lower case), the sites of each pair on each strand, every
 * forward site with every reverse site that starts at or after it (the -
 * strand mirrored), the size window; seqkit's rule (--longest) the same
 * way. Random records with planted products (mutated primers, both
 * strands, nested and overlapping, shorter than the primers), several
 * pairs, 1 to 3 threads and small chunks, the TSV with sequences compared
 * byte for byte, and the run report's numbers (records, bases, products per
 * pair and strand). -k: the pairing of sm_scan's hits against a pairing by
 * brute force. Refusals and the primer table's errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seqmatch_output.h>
#include <seqmatch_reader.h>

#include "check.h"
#include "oracle.h"

static char dir[] = "/tmp/sm_amplicon_api_XXXXXX";
static long products_seen, minus_seen, reports_checked;

static char complement(char c) {
    static const char from[] = "ACGTURYSWKMBDHVNacgturyswkmbdhvn", to[] = "TGCAAYRSWMKVHDBNtgcaayrswmkvhdbn";
    const char *at = c ? strchr(from, c) : NULL;
    return at ? to[at - from] : c;
}

static void revcomp(const char *s, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) out[i] = complement(s[n - 1 - i]);
    out[n] = '\0';
}

/* MISSION.md: a pattern symbol matches a text symbol that is A, C, G or T in its set
   (with text_iupac, any text code whose set meets it). */
static int matches(char pattern, char text, int text_iupac) {
    unsigned t = base_set(text), p = base_set(pattern);
    if (!text_iupac && t != 1 && t != 2 && t != 4 && t != 8) return 0;
    return (t & p) != 0;
}

typedef struct {
    unsigned long long start, end;
    unsigned errors;
} site;

/* Every window of pattern p (length m) in text[0, n) with at most k mismatches. */
static size_t windows(const char *text, size_t n, const char *p, size_t m, unsigned k, int text_iupac, site *out) {
    size_t count = 0;
    for (size_t i = 0; i + m <= n; i++) {
        unsigned e = 0;
        for (size_t j = 0; j < m && e <= k; j++) e += !matches(p[j], text[i + j], text_iupac);
        if (e <= k) out[count++] = (site){i, i + m, e};
    }
    return count;
}

typedef struct {
    unsigned long long start, end;
    unsigned pair;
    char strand;
    unsigned fe, re;
} product;

static int by_place(const void *pa, const void *pb) {
    const product *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pair != b->pair) return a->pair < b->pair ? -1 : 1;
    return (a->strand == '-') - (b->strand == '-');
}

/* The definition, by brute force: on '+' forward sites f (forward primer) and reverse
   sites r (the reverse primer's reverse complement) with r.start >= f.start make
   [f.start, r.end); on '-' forward sites f (the forward primer's reverse complement)
   and reverse sites r (the reverse primer) with f.end >= r.end make [r.start, f.end).
   longest: only the first f and last r read 5' to 3' on the strand. */
static size_t pair_brute(unsigned pair, char strand, const site *f, size_t nf, const site *r, size_t nr,
                         unsigned long long lo, unsigned long long hi, int longest, product *out) {
    size_t count = 0;
    if (longest && nf && nr) {
        size_t bf = 0, br = 0;
        for (size_t i = 0; i < nf; i++)
            if (strand == '+' ? f[i].start < f[bf].start : f[i].end > f[bf].end) bf = i;
        for (size_t i = 0; i < nr; i++)
            if (strand == '+' ? r[i].start >= r[br].start : r[i].end < r[br].end) br = i;
        f += bf, r += br, nf = nr = 1;
    }
    for (size_t i = 0; i < nf; i++)
        for (size_t j = 0; j < nr; j++) {
            product p = {0, 0, pair, strand, f[i].errors, r[j].errors};
            if (strand == '+' && r[j].start >= f[i].start) p.start = f[i].start, p.end = r[j].end;
            else if (strand == '-' && f[i].end >= r[j].end) p.start = r[j].start, p.end = f[i].end;
            else continue;
            if (p.end - p.start >= lo && p.end - p.start <= hi) out[count++] = p;
        }
    return count;
}

typedef struct {
    char name[16], fwd[24], rev[24];
} test_pair;

static void random_primer(char *p, size_t m) {
    static const char acgt[] = "ACGT", iupac[] = "RYSWKMBDHVN";
    for (size_t i = 0; i < m; i++) p[i] = rnd(10) ? acgt[rnd(4)] : iupac[rnd(11)];
    p[m] = '\0';
}

/* A concrete instance of primer p (each code one of its bases), with e symbols changed. */
static void instance(const char *p, size_t m, unsigned e, char *out) {
    for (size_t i = 0; i < m; i++) {
        unsigned s = base_set(p[i]), pick;
        do pick = rnd(4);
        while (!(s & (1u << pick)));
        out[i] = "ACGT"[pick];
    }
    for (unsigned i = 0; i < e; i++) out[rnd((unsigned)m)] = "ACGTN"[rnd(5)];
    out[m] = '\0';
}

static void run_round(int round) {
    int text_iupac = round % 5 == 4;
    unsigned k = round % 3; /* 0, 1 or 2 mismatches */
    int longest = round % 4 == 3;
    size_t npairs = 1 + rnd(3);
    test_pair pairs[3];
    sm_amplicon_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    for (size_t i = 0; i < npairs; i++) {
        snprintf(pairs[i].name, sizeof pairs[i].name, "p%u", (unsigned)i % 3u); /* i < 3 */
        size_t lf = k + 4 + rnd(8), lr = k + 4 + rnd(8);
        random_primer(pairs[i].fwd, lf);
        random_primer(pairs[i].rev, lr);
        if (i == 2) strcpy(pairs[i].rev, pairs[i].fwd); /* one primer for both sides */
        CHECK(sm_amplicon_set_add(&set, pairs[i].name, pairs[i].fwd, pairs[i].rev, &err) == SM_OK, "add: %s",
              err.message);
    }
    /* records: random text, planted products on both strands, some very short */
    size_t nrec = 1 + rnd(5);
    char path[256];
    snprintf(path, sizeof path, "%s/t%d.fa", dir, round);
    FILE *fa = fopen(path, "w");
    char *texts[5];
    size_t lens[5];
    for (size_t r = 0; r < nrec; r++) {
        size_t n = rnd(6) == 0 ? rnd(8) : 20 + rnd(400);
        char *t = malloc(n + 1);
        for (size_t i = 0; i < n; i++) {
            unsigned x = rnd(60);
            t[i] = x == 0 ? 'N' : x == 1 ? "RYKM"[rnd(4)] : x < 6 ? "acgt"[rnd(4)] : "ACGT"[rnd(4)];
        }
        t[n] = '\0';
        unsigned plants = n > 40 ? 1 + rnd(4) : 0;
        for (unsigned pl = 0; pl < plants; pl++) {
            const test_pair *tp = &pairs[rnd((unsigned)npairs)];
            size_t lf = strlen(tp->fwd), lr = strlen(tp->rev), gap = rnd(3) == 0 ? 0 : rnd(60);
            char prod[200], f[32], rv[32], rrc[32];
            instance(tp->fwd, lf, rnd(k + 2), f);
            instance(tp->rev, lr, rnd(k + 2), rv);
            revcomp(rv, lr, rrc);
            size_t plen = 0;
            memcpy(prod, f, lf), plen = lf;
            for (size_t i = 0; i < gap; i++) prod[plen++] = "ACGT"[rnd(4)];
            memcpy(prod + plen, rrc, lr), plen += lr;
            if (plen > n) continue;
            size_t at = rnd((unsigned)(n - plen + 1));
            if (rnd(2)) {
                char rc[200];
                revcomp(prod, plen, rc);
                memcpy(t + at, rc, plen);
            } else {
                memcpy(t + at, prod, plen);
            }
        }
        texts[r] = t;
        lens[r] = n;
        fprintf(fa, ">rec%zu desc\n", r);
        for (size_t i = 0; i < n; i += 50) fprintf(fa, "%.*s\n", (int)(n - i < 50 ? n - i : 50), t + i);
    }
    fclose(fa);

    unsigned long long lo = rnd(3) ? 1 : 5 + rnd(30), hi = rnd(3) ? 10000 : lo + rnd(100);
    if (round % 7 == 6) lo = hi = 20 + rnd(40); /* the window's edges */
    /* the oracle's TSV */
    size_t cap = 1 << 16, used = 0;
    char *want = malloc(cap);
    used += (size_t)snprintf(want, cap, "#record\tstart\tend\tstrand\tpair\tsize\tforward_errors\treverse_errors\t"
                                        "sequence\n");
    size_t per_pair[3][2] = {{0}}, with_product = 0, bases = 0; /* the report's numbers */
    for (size_t r = 0; r < nrec; r++) {
        size_t n = lens[r];
        bases += n;
        product *ps = NULL;
        size_t pcap = 0;
        site *s[4];
        size_t ns[4];
        for (int j = 0; j < 4; j++) s[j] = malloc(sizeof(site) * (n + 1));
        size_t np = 0;
        for (size_t pi = 0; pi < npairs; pi++) {
            char frc[32], rrc[32];
            size_t lf = strlen(pairs[pi].fwd), lr = strlen(pairs[pi].rev);
            revcomp(pairs[pi].fwd, lf, frc);
            revcomp(pairs[pi].rev, lr, rrc);
            ns[0] = windows(texts[r], n, pairs[pi].fwd, lf, k, text_iupac, s[0]); /* forward primer + */
            ns[1] = windows(texts[r], n, rrc, lr, k, text_iupac, s[1]);           /* reverse primer - */
            ns[2] = windows(texts[r], n, frc, lf, k, text_iupac, s[2]);           /* forward primer - */
            ns[3] = windows(texts[r], n, pairs[pi].rev, lr, k, text_iupac, s[3]); /* reverse primer + */
            size_t most = np + ns[0] * ns[1] + ns[2] * ns[3] + 1;
            if (most > pcap) ps = realloc(ps, (pcap = most) * sizeof *ps);
            np += pair_brute((unsigned)pi, '+', s[0], ns[0], s[1], ns[1], lo, hi, longest, ps + np);
            np += pair_brute((unsigned)pi, '-', s[2], ns[2], s[3], ns[3], lo, hi, longest, ps + np);
        }
        qsort(ps, np, sizeof *ps, by_place);
        with_product += np > 0;
        for (size_t i = 0; i < np; i++) per_pair[ps[i].pair][ps[i].strand == '-']++;
        for (size_t i = 0; i < np; i++) {
            size_t len = (size_t)(ps[i].end - ps[i].start);
            if (used + len + 200 > cap) {
                while (used + len + 200 > cap) cap *= 2;
                want = realloc(want, cap);
            }
            used += (size_t)snprintf(want + used, cap - used, "rec%zu\t%llu\t%llu\t%c\t%s\t%zu\t%u\t%u\t", r,
                                     ps[i].start, ps[i].end, ps[i].strand, pairs[ps[i].pair].name, len, ps[i].fe,
                                     ps[i].re);
            if (ps[i].strand == '+') memcpy(want + used, texts[r] + ps[i].start, len);
            else revcomp(texts[r] + ps[i].start, len, want + used);
            used += len;
            want[used++] = '\n';
            products_seen++;
            minus_seen += ps[i].strand == '-';
        }
        want[used] = '\0';
        for (int j = 0; j < 4; j++) free(s[j]);
        free(ps);
    }

    sm_compile_options co;
    sm_compile_options_init(&co);
    co.match = k ? SM_MATCH_MISMATCHES : SM_MATCH_EXACT;
    co.max_errors = k;
    if (text_iupac) co.flags |= SM_FLAG_TEXT_IUPAC;
    sm_db *db = NULL;
    CHECK(sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err) == SM_OK, "compile: %s", err.message);
    char *got = NULL;
    size_t got_len = 0;
    FILE *mem = tmpfile(); /* read back below (the writer makes its file unbuffered) */
    sm_writer *w = sm_writer_new(mem);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = 1 + rnd(3);
    ro.chunk_size = rnd(2) ? 0 : 32 + rnd(100);
    sm_amplicon_options ao = {.set = &set, .rule = {lo, hi, longest}, .format = SM_AMPLICON_TSV, .header = 1,
                              .sequence = 1, .out = w, .reader_threads = 1,
                              .stats = rnd(2) ? sm_stats_new("amplicon", "test") : NULL};
    sm_amplicon_finder *finder = NULL;
    CHECK(db && sm_amplicon_finder_new(db, &ro, &ao, &finder, &err) == SM_OK, "finder: %s", err.message);
    if (finder) {
        CHECK(sm_amplicon_finder_run(finder, path, &err) == SM_OK, "run: %s", err.message);
        sm_amplicon_stats st;
        sm_amplicon_finder_stats(finder, &st);
        CHECK(st.records == nrec, "round %d: %llu records of %zu", round, (unsigned long long)st.records, nrec);
    }
    if (finder && ao.stats) { /* the report: records, bases, products per pair and strand as the oracle's */
        char report[300], text[8192], line[200];
        snprintf(report, sizeof report, "%s/report%d.json", dir, round);
        CHECK(sm_stats_write(ao.stats, report, &err) == SM_OK, "report: %s", err.message);
        FILE *rf = fopen(report, "r");
        size_t tl = rf ? fread(text, 1, sizeof text - 1, rf) : 0;
        text[tl] = '\0';
        if (rf) fclose(rf);
        size_t plus = 0, minus = 0;
        for (size_t i = 0; i < npairs; i++) {
            plus += per_pair[i][0], minus += per_pair[i][1];
            snprintf(line, sizeof line, "{\"name\": \"%s\", \"products\": %zu, \"plus\": %zu, \"minus\": %zu}",
                     pairs[i].name, per_pair[i][0] + per_pair[i][1], per_pair[i][0], per_pair[i][1]);
            CHECK(strstr(text, line), "round %d: the report lacks %s:\n%s", round, line, text);
        }
        snprintf(line, sizeof line, "\"records\": {\n    \"input\": %zu,\n    \"with_product\": %zu\n  }", nrec,
                 with_product);
        CHECK(strstr(text, line), "round %d: the report lacks %s:\n%s", round, line, text);
        snprintf(line, sizeof line, "\"bases\": {\n    \"input\": %zu\n  }", bases);
        CHECK(strstr(text, line), "round %d: the report lacks %s:\n%s", round, line, text);
        snprintf(line, sizeof line, "\"products\": {\n    \"total\": %zu,\n    \"plus\": %zu,\n    \"minus\": %zu\n  }",
                 plus + minus, plus, minus);
        CHECK(strstr(text, line), "round %d: the report lacks %s:\n%s", round, line, text);
        reports_checked++;
    }
    sm_stats_free(ao.stats);
    sm_writer_flush(w);
    sm_writer_free(w);
    got_len = (size_t)ftell(mem);
    got = calloc(1, got_len + 1);
    rewind(mem);
    if (fread(got, 1, got_len, mem) != got_len) failures++;
    fclose(mem);
    CHECK(got && strcmp(got, want) == 0, "round %d (k %u, lo %llu, hi %llu, longest %d, iupac %d, %u threads, "
          "chunk %zu): got\n%s\nwant\n%s", round, k, lo, hi, longest, text_iupac, ro.threads, ro.chunk_size,
          got ? got : "", want);
    free(got);
    free(want);
    sm_amplicon_finder_free(finder);
    if (db) sm_db_free(db);
    sm_amplicon_set_free(&set);
    for (size_t r = 0; r < nrec; r++) free(texts[r]);
}

typedef struct {
    sm_hit *hits;
    size_t n;
} hit_list;

static int keep_hit(const sm_hit *hit, void *ctx) {
    hit_list *l = ctx;
    l->hits[l->n++] = *hit;
    return 0;
}

/* -k: sm_amplicon_products over sm_scan's hits equals the pairing by brute force of the same hits. */
static void edit_rounds(int rounds) {
    for (int round = 0; round < rounds; round++) {
        char f[16], r[16], t[300];
        random_primer(f, 6 + rnd(5));
        random_primer(r, 6 + rnd(5));
        size_t n = 100 + rnd(200);
        for (size_t i = 0; i < n; i++) t[i] = "ACGT"[rnd(4)];
        for (int pl = 0; pl < 3; pl++) {
            char x[16], xr[16];
            const char *which = rnd(2) ? f : r;
            instance(which, strlen(which), 1, x);
            size_t m = strlen(x);
            if (rnd(2)) revcomp(x, m, xr), memcpy(x, xr, m);
            memcpy(t + rnd((unsigned)(n - m)), x, m);
        }
        sm_amplicon_set set;
        memset(&set, 0, sizeof set);
        sm_error err;
        sm_amplicon_set_add(&set, "e", f, r, &err);
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.match = SM_MATCH_EDITS;
        co.max_errors = 1 + rnd(2);
        sm_db *db = NULL;
        if (sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err) != SM_OK) {
            CHECK(0, "compile -k: %s", err.message);
            sm_amplicon_set_free(&set);
            continue;
        }
        sm_scratch *scratch = NULL;
        sm_scratch_alloc(db, &scratch);
        sm_hit hits[4096];
        hit_list l = {hits, 0};
        sm_scan(db, scratch, t, n, keep_hit, &l);
        site s[4][4096];
        size_t ns[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < l.n; i++) {
            int slot = hits[i].pattern == 0 ? (hits[i].strand == '+' ? 0 : 2) : (hits[i].strand == '-' ? 1 : 3);
            s[slot][ns[slot]++] = (site){hits[i].start, hits[i].end, hits[i].errors};
        }
        int longest = rnd(2);
        sm_amplicon_rule rule = {1, 150, longest};
        product want[20000];
        size_t nw = pair_brute(0, '+', s[0], ns[0], s[1], ns[1], 1, 150, longest, want);
        nw += pair_brute(0, '-', s[2], ns[2], s[3], ns[3], 1, 150, longest, want + nw);
        qsort(want, nw, sizeof *want, by_place);
        sm_amplicon *got = NULL;
        size_t count = 0, cap = 0;
        CHECK(sm_amplicon_products(&rule, 1, hits, l.n, &got, &count, &cap) == SM_OK, "products");
        CHECK(count == nw, "-k round %d: %zu products, want %zu", round, count, nw);
        for (size_t i = 0; i < count && i < nw; i++)
            CHECK(got[i].start == want[i].start && got[i].end == want[i].end && got[i].strand == want[i].strand &&
                      got[i].forward_errors == want[i].fe && got[i].reverse_errors == want[i].re,
                  "-k round %d product %zu: %llu-%llu %c, want %llu-%llu %c", round, i,
                  (unsigned long long)got[i].start, (unsigned long long)got[i].end, got[i].strand, want[i].start,
                  want[i].end, want[i].strand);
        products_seen += (long)count;
        free(got);
        sm_scratch_free(scratch);
        sm_db_free(db);
        sm_amplicon_set_free(&set);
    }
}

static void write_file(const char *name, const char *text, char *path) {
    snprintf(path, 256, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void table_and_refusals(void) {
    char path[256];
    sm_amplicon_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    write_file("ok.tsv", "# name forward reverse\n\n16S\tGTGYCAGCMGCCGCGGTAA\tGGACTACNVGGGTWTCTAAT\r\n"
                         " x \t ACGT \tTTTT\n", path);
    CHECK(sm_amplicon_set_read(&set, path, &err) == SM_OK && set.count == 2, "table: %s", err.message);
    CHECK(set.count == 2 && strcmp(set.pairs[1].name, "x") == 0 && strcmp(set.pairs[1].forward, "ACGT") == 0 &&
              set.patterns.count == 4 && strcmp(set.patterns.items[1].name, "16S/reverse") == 0,
          "table fields");
    sm_amplicon_set_free(&set);
    static const struct {
        const char *text, *message;
    } bad[] = {{"a\tACGT\n", "line 1: want name<TAB>forward<TAB>reverse, got two fields"},
               {"#c\na\tACGT\tTT\textra\n", "line 2: want name<TAB>forward<TAB>reverse, got more than three"},
               {"a\tACGT\tTTXT\n", "line 1: primer pair 'a': reverse primer 'TTXT': 'X' is no DNA or IUPAC"},
               {"a\t\tTT\n", "line 1: primer pair 'a': empty forward primer"},
               {"# nothing\n", "no primer pair in it"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file("bad.tsv", bad[i].text, path);
        CHECK(sm_amplicon_set_read(&set, path, &err) != SM_OK && strstr(err.message, bad[i].message),
              "bad table %zu: '%s'", i, err.message);
        sm_amplicon_set_free(&set);
    }
    sm_amplicon_format fmt;
    CHECK(sm_amplicon_format_from_name("fasta", &fmt) == SM_OK && fmt == SM_AMPLICON_FASTA, "fasta");
    CHECK(sm_amplicon_format_from_name("sam", &fmt) == SM_ERR_INVALID, "sam refused");
    /* one strand, or a runner that would change the hits: refused */
    sm_amplicon_set_add(&set, "a", "ACGTAC", "GGTTCA", &err);
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.strands = SM_STRAND_FORWARD;
    sm_db *db = NULL;
    sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err);
    sm_writer *w = sm_writer_new(stdout);
    sm_amplicon_options ao = {.set = &set, .rule = {1, 100, 0}, .out = w};
    sm_amplicon_finder *finder = NULL;
    CHECK(sm_amplicon_finder_new(db, NULL, &ao, &finder, &err) == SM_ERR_INVALID && !finder &&
              strstr(err.message, "both strands"), "one strand: '%s'", err.message);
    sm_db_free(db);
    co.strands = SM_STRAND_BOTH;
    sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.min_overlap = 3;
    CHECK(sm_amplicon_finder_new(db, &ro, &ao, &finder, &err) == SM_ERR_INVALID && !finder, "min_overlap refused");
    ao.rule.min_size = 200;
    CHECK(sm_amplicon_finder_new(db, NULL, &ao, &finder, &err) == SM_ERR_INVALID && !finder, "min above max");
    ao.rule.min_size = 1;
    CHECK(sm_amplicon_finder_new(db, NULL, &ao, &finder, &err) == SM_OK && finder, "finder");
    CHECK(finder && sm_amplicon_finder_run(finder, "/nonexistent/x.fa", &err) != SM_OK &&
              strstr(err.message, "/nonexistent/x.fa"), "missing file: '%s'", err.message);
    sm_amplicon_finder_free(finder);
    sm_writer_free(w);
    sm_db_free(db);
    sm_amplicon_set_free(&set);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    int rounds = test_rounds(80);
    table_and_refusals();
    for (int round = 0; round < rounds && failures < 10; round++) run_round(round);
    edit_rounds(rounds / 2);
    CHECK(rounds < 40 || (products_seen > rounds && minus_seen > 0), "too few products: %ld (%ld on -)",
          products_seen, minus_seen);
    CHECK(rounds < 40 || reports_checked >= rounds / 4, "only %ld reports checked", reports_checked);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) failures++;
    if (failures) fprintf(stderr, "test_amplicon_api: %d failures\n", failures);
    return failures ? 1 : 0;
}
