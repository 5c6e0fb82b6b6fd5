/* Demultiplexing by barcode pairs (sm_barcode_pairs_*, sm_reads'
 * end_window, include/seqmatch_reader.h) through the installed headers
 * only, against an oracle written from the rule (docs/demux.md): each end's
 * barcode is the one with the fewest mismatches (IUPAC rules) at its place
 * (paired: mate 1's and mate 2's start, or end; single reads: barcode1 at
 * the start, barcode2 at the end as given or as its reverse complement),
 * within k; two barcodes of one end equally close, or none, or a pair not
 * in the table leave the record unassigned. Random paired and single reads
 * with planted, mutated barcodes (ambiguity made likely by close barcode
 * sets), N and lower case, 1 to 3 threads, small chunks; the table's
 * parser (headers, comments, CRLF, refusals); the header tag and the cut. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seqmatch_reader.h>

#include "check.h"
#include "oracle.h"

static char dir[] = "/tmp/sm_demux_pairs_XXXXXX";
static long outcomes[4]; /* reads assigned, without a hit, ambiguous, unlisted */
static long spans_checked; /* assigned reads of -k rounds */
static long reversed_checked; /* reads assigned in the reverse orientation */

/* ---------------------------------------------------------------- oracle */

static char complement(char c) {
    static const char from[] = "ACGTRYSWKMBDHVN", to[] = "TGCAYRSWMKVHDBN";
    const char *p = strchr(from, c & ~0x20);
    return p ? to[p - from] : 'N';
}

/* Mismatches of barcode b against s[at, at + m) (a text symbol other than
   A C G T matches nothing), or -1 when it does not fit. */
static int mismatches(const char *s, long n, long at, const char *b) {
    long m = (long)strlen(b);
    if (at < 0 || at + m > n) return -1;
    int e = 0;
    for (long i = 0; i < m; i++) {
        unsigned t = base_set(s[at + i]);
        e += !((t == 1 || t == 2 || t == 4 || t == 8) && (base_set(b[i]) & t));
    }
    return e;
}

static void reverse_complement(char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n / 2; i++) {
        char c = s[i];
        s[i] = s[n - 1 - i], s[n - 1 - i] = c;
    }
    for (size_t i = 0; i < n; i++) s[i] = complement(s[i]);
}

static int text_matches(char t, char b) {
    unsigned ts = base_set(t);
    return (ts == 1 || ts == 2 || ts == 4 || ts == 8) && (base_set(b) & ts);
}

/* An alignment's edits and matches; a better one has fewer edits, then more matches. */
typedef struct {
    int edits, matches;
} score;

static int better(score a, score b) { return a.edits < b.edits || (a.edits == b.edits && a.matches > b.matches); }

/* The best alignment of barcode b (m) with all of t (n), by the book. */
static score align(const char *b, long m, const char *t, long n) {
    score d[24][64];
    for (long i = 0; i <= m; i++) d[i][0] = (score){(int)i, 0};
    for (long j = 0; j <= n; j++) d[0][j] = (score){(int)j, 0};
    for (long i = 1; i <= m; i++)
        for (long j = 1; j <= n; j++) {
            int same = text_matches(t[j - 1], b[i - 1]);
            score v = {d[i - 1][j - 1].edits + !same, d[i - 1][j - 1].matches + same};
            score del = {d[i - 1][j].edits + 1, d[i - 1][j].matches}, ins = {d[i][j - 1].edits + 1, d[i][j - 1].matches};
            if (better(del, v)) v = del;
            if (better(ins, v)) v = ins;
            d[i][j] = v;
        }
    return d[m][n];
}

/* Errors of barcode b at the start (or end) of s, -1 when it does not fit;
   *span: the symbols it covers. Edits: the best alignment over every prefix
   (or suffix) of s, the longest of equally good ones. */
static int place_errors(const char *s, int from_end, const char *b, int edits, long *span) {
    long n = (long)strlen(s), m = (long)strlen(b);
    *span = m;
    if (!edits) return mismatches(s, n, from_end ? n - m : 0, b);
    score best = {1 << 20, 0};
    for (long j = 0; j <= n; j++) {
        score x = align(b, m, s + (from_end ? n - j : 0), j);
        if (!better(best, x)) best = x, *span = j;
    }
    return best.edits;
}

/* The closest of nb barcodes at one place: its index, -1 none, -2 a tie;
   *errors and *span its errors and the symbols it covers. */
static int closest(const char *s, int from_end, char bc[][16], const int *listed, int nb, int k, int rc, int edits,
                   int *errors, long *span) {
    int best = -1, best_e = k + 1, tie = 0;
    for (int i = 0; i < nb; i++) {
        if (!listed[i]) continue; /* in no line of the table: not sought */
        char b[16];
        long m = (long)strlen(bc[i]), covers;
        for (long j = 0; j < m; j++) b[j] = rc ? complement(bc[i][m - 1 - j]) : bc[i][j];
        b[m] = '\0';
        int e = place_errors(s, from_end, b, edits, &covers);
        if (e < 0 || e > k) continue;
        if (e < best_e) best = i, best_e = e, tie = 0, *span = covers;
        else if (e == best_e) tie = 1;
    }
    *errors = best_e;
    return tie ? -2 : best;
}

/* ---------------------------------------------------------------- rounds */

#define MAX_READS 60

typedef struct {
    const sm_barcode_pairs *pairs;
    const sm_db *db;
    int paired, end;
    long got[MAX_READS]; /* sample, or -1 no hit, -2 ambiguous, -3 unlisted */
    size_t span[MAX_READS][2]; /* assigned: what each barcode covers (sm_barcode_span) */
    int n;
} run_state;

static void on_summary(void *ctx, sm_read_record *r, const sm_record_summary *s) {
    sm_barcode_pairs_summary(((run_state *)ctx)->pairs, r, s);
}

static int on_record(void *ctx, sm_read_record *r) {
    run_state *st = ctx;
    sm_barcode_pair_match m;
    sm_barcode_pairs_assign(st->pairs, r, &m);
    if (st->n < MAX_READS)
        st->got[st->n] = m.why == SM_PAIR_ASSIGNED ? (long)m.sample : m.why == SM_PAIR_NO_HIT ? -1
                         : m.why == SM_PAIR_AMBIGUOUS ? -2 : -3;
    for (int e = 0; st->n < MAX_READS && m.why == SM_PAIR_ASSIGNED && e < 2; e++) {
        unsigned mate = st->paired ? (unsigned)e : 0; /* single reads: barcode2 at the end, reverse complemented */
        st->span[st->n][e] = sm_barcode_span(st->db, m.pattern[e], !st->paired && e, r->raw[mate], r->raw_len[mate],
                                             st->paired ? st->end : e);
    }
    st->n++;
    return 0;
}

static void random_barcode(char *b, unsigned len) {
    for (unsigned i = 0; i < len; i++) b[i] = "ACGT"[rnd(4)];
    if (rnd(6) == 0) b[rnd(len)] = "NRY"[rnd(3)];
    b[len] = '\0';
}

static void put_random(char *s, unsigned n) {
    for (unsigned i = 0; i < n; i++) s[i] = rnd(30) == 0 ? 'N' : "ACGT"[rnd(4)];
}

static void run_round(int round) {
    int paired = rnd(2), k = (int)rnd(3), rc = !paired && rnd(2), end = paired && rnd(2), edits = k && rnd(2);
    int both = !paired && rnd(2); /* single reads in both orientations */
    int nb[2] = {1 + (int)rnd(5), 1 + (int)rnd(5)};
    char bc[2][8][16];
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < nb[e]; i++) {
            if (i > 0 && rnd(3) == 0) { /* a close one: one or two symbols apart (ties) */
                memcpy(bc[e][i], bc[e][rnd((unsigned)i)], sizeof bc[e][i]);
                for (unsigned c = 1 + rnd(2); c > 0; c--) bc[e][i][rnd((unsigned)strlen(bc[e][i]))] = "ACGT"[rnd(4)];
            } else {
                random_barcode(bc[e][i], 5 + rnd(6));
            }
            for (int x = 0; x < i; x++)
                if (strcmp(bc[e][x], bc[e][i]) == 0) { /* each end's barcodes distinct */
                    i--;
                    break;
                }
        }
    /* the table: some pairs, samples S0.., a sample sometimes given two pairs */
    char table[4096] = "sample\tindex1\tindex2\r\n# a comment\n\n";
    int sample_of[8][8], nsamples = 0, listed[2][8] = {{0}};
    for (int i = 0; i < nb[0]; i++)
        for (int j = 0; j < nb[1]; j++) sample_of[i][j] = -1;
    for (int i = 0; i < nb[0]; i++)
        for (int j = 0; j < nb[1]; j++) {
            if (rnd(4) == 0) continue;
            int s = nsamples > 0 && rnd(5) == 0 ? (int)rnd((unsigned)nsamples) : nsamples++;
            sample_of[i][j] = s;
            listed[0][i] = listed[1][j] = 1;
            char line[300];
            snprintf(line, sizeof line, "S%d\t%s\t%s\n", s, bc[0][i], bc[1][j]);
            strcat(table, line);
        }
    if (nsamples == 0) {
        sample_of[0][0] = 0, nsamples = 1, listed[0][0] = listed[1][0] = 1;
        char line[300];
        snprintf(line, sizeof line, "S0\t%s\t%s\n", bc[0][0], bc[1][0]);
        strcat(table, line);
    }
    sm_barcode_pairs *pairs = NULL;
    sm_error err;
    CHECK(sm_barcode_pairs_parse(table, strlen(table), "table", &pairs, &err) == SM_OK && pairs, "parse: %s",
          err.message);
    if (!pairs) return;
    /* sample names as the table gives them in order: S<first use> */
    int sample_number[64];
    for (size_t i = 0; i < sm_barcode_pairs_samples(pairs); i++)
        sample_number[i] = atoi(sm_barcode_pairs_sample(pairs, i) + 1);

    if (both) sm_barcode_pairs_orientations(pairs, 1);
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.match = edits ? SM_MATCH_EDITS : k ? SM_MATCH_MISMATCHES : SM_MATCH_EXACT;
    co.max_errors = (uint32_t)k;
    sm_db *db = NULL;
    CHECK(sm_barcode_pairs_compile(pairs, &co, !paired && !rc, &db, &err) == SM_OK, "compile: %s", err.message);
    if (!db) {
        sm_barcode_pairs_free(pairs);
        return;
    }

    /* reads */
    int nreads = (int)rnd(MAX_READS);
    char path[2][300];
    FILE *f[2] = {NULL, NULL};
    char seqs[MAX_READS][2][64];
    for (int m = 0; m < 1 + paired; m++) {
        snprintf(path[m], sizeof path[m], "%s/r%d_%d.fq", dir, round, m + 1);
        f[m] = fopen(path[m], "w");
    }
    for (int r = 0; r < nreads; r++) {
        for (int m = 0; m < 1 + paired; m++) {
            char *s = seqs[r][m];
            unsigned len = rnd(40);
            put_random(s, len);
            s[len] = '\0';
            /* plant barcodes: paired, one per mate at the anchor; single, both ends */
            for (int e = 0; e < 2; e++) {
                if ((paired && e != m) || rnd(6) == 0) continue;
                const char *b = bc[e][rnd((unsigned)nb[e])];
                long bl = (long)strlen(b);
                char planted[24];
                for (long j = 0; j < bl; j++) {
                    char c = !paired && e == 1 && rc ? complement(b[bl - 1 - j]) : b[j];
                    planted[j] = base_set(c) == 15 || (base_set(c) & (base_set(c) - 1)) ? "ACGT"[rnd(4)] : c;
                }
                for (unsigned c = rnd(4); c > 0 && rnd(2); c--) planted[rnd((unsigned)bl)] = "ACGTN"[rnd(5)];
                for (unsigned c = edits ? rnd(3) : 0; c > 0; c--) { /* a symbol inserted or deleted */
                    long at = (long)rnd((unsigned)bl);
                    memmove(planted + at + (bl < 14), planted + at + (bl >= 14), (size_t)(bl - at - (bl >= 14)));
                    if (bl < 14) planted[at] = "ACGT"[rnd(4)], bl++;
                    else bl--;
                    if (rnd(2)) break;
                }
                int at_end = paired ? end : e == 1;
                long n = (long)strlen(s);
                if (n < bl) {
                    memcpy(s, planted, (size_t)bl);
                    s[bl] = '\0';
                } else {
                    memcpy(s + (at_end ? n - bl : 0), planted, (size_t)bl);
                }
            }
            if (both && rnd(2)) reverse_complement(s); /* the construct read from its other end */
            for (char *c = s; *c; c++)
                if (rnd(8) == 0) *c = (char)(*c | 0x20);
            fprintf(f[m], "@read%d%s\n%s\n+\n", r, paired ? (m ? "/2" : "/1") : "", s);
            for (size_t i = 0; i < strlen(s); i++) fputc('I', f[m]);
            fputc('\n', f[m]);
        }
    }
    for (int m = 0; m < 1 + paired; m++) fclose(f[m]);

    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = 1 + rnd(3);
    ro.chunk_size = rnd(2) ? 0 : 16 + rnd(64);
    ro.anchor = end ? SM_ANCHOR_END : SM_ANCHOR_START;
    sm_db_info info;
    sm_db_get_info(db, &info);
    run_state st;
    memset(&st, 0, sizeof st);
    st.pairs = pairs, st.db = db, st.paired = paired, st.end = end;
    /* (pairs ignore end_window: given half the time) */
    sm_reads_options o = {.format = SM_INPUT_AUTO, .reader_threads = 1, .scan_mate = 0,
                          .end_window = paired && rnd(2) ? 0 : info.max_length + info.max_errors, .ctx = &st,
                          .on_summary = on_summary, .on_record = on_record};
    sm_reads *reads = NULL;
    CHECK(sm_reads_new(db, &ro, &o, &reads, &err) == SM_OK, "sm_reads_new: %s", err.message);
    if (reads) {
        CHECK(sm_reads_run(reads, path[0], paired ? path[1] : NULL, &err) == SM_OK, "run: %s", err.message);
        sm_reads_free(reads);
    }
    CHECK(st.n == nreads, "round %d: %d records back of %d", round, st.n, nreads);
    for (int r = 0; r < nreads && r < st.n; r++) {
        /* each orientation (the read as given; in both, its reverse complement too): each end's
           closest barcode, the outcome, the errors of both ends, what each window's barcode covers */
        long want = -1, span[2] = {0, 0};
        int total = 0;
        for (int o = 0; o <= both; o++) {
            int got[2], errors[2];
            long covers[2] = {0, 0}, out;
            char x[64];
            strcpy(x, seqs[r][0]);
            if (o) reverse_complement(x);
            for (int e = 0; e < 2; e++) {
                const char *s = paired ? seqs[r][e] : x;
                got[e] = closest(s, paired ? end : e, bc[e], listed[e], nb[e], k, !paired && e == 1 && rc, edits,
                                 &errors[e], &covers[e]);
            }
            if (got[0] == -1 || got[1] == -1) out = -1;
            else if (got[0] == -2 || got[1] == -2) out = -2;
            else out = sample_of[got[0]][got[1]] >= 0 ? sample_of[got[0]][got[1]] : -3;
            if (o == 0 || out == -1) {
                if (o == 0) want = out, total = errors[0] + errors[1], span[0] = covers[0], span[1] = covers[1];
                continue;
            }
            if (want == -1 || errors[0] + errors[1] < total) /* reversed: barcode2 covers the start */
                want = out, span[0] = covers[1], span[1] = covers[0], reversed_checked += out >= 0;
            else if (errors[0] + errors[1] == total && !(want >= 0 && out == want)) want = -2;
        }
        outcomes[want >= 0 ? 0 : -want]++;
        long got_sample = st.got[r] >= 0 ? sample_number[st.got[r]] : st.got[r];
        CHECK(got_sample == want, "round %d (%s, %c %d, %s%s%s, %u threads) read %d: got %ld, want %ld (%s / %s)",
              round, paired ? "paired" : "single", edits ? 'k' : 'm', k, end ? "end" : "start", rc ? ", rc" : "",
              both ? ", both" : "", ro.threads, r,
              got_sample, want, seqs[r][0], paired ? seqs[r][1] : "");
        for (int e = 0; want >= 0 && got_sample == want && e < 2; e++)
            CHECK((long)st.span[r][e] == span[e], "round %d (%s, %c %d) read %d: barcode%d covers %zu, want %ld (%s / %s)",
                  round, paired ? "paired" : "single", edits ? 'k' : 'm', k, r, e + 1, st.span[r][e], span[e], seqs[r][0],
                  paired ? seqs[r][1] : "");
        spans_checked += want >= 0 && edits;
    }
    sm_db_free(db);
    sm_barcode_pairs_free(pairs);
}

/* ----------------------------------------------------- table and records */

static void table_cases(void) {
    sm_barcode_pairs *p = NULL;
    sm_error err;
    const char *single = "A\tACGT\nB\tGGCC\n";
    CHECK(sm_barcode_pairs_parse(single, strlen(single), "t", &p, &err) == SM_OK && !p, "two columns: no pairs");
    const char *ok = "\xEF\xBB\xBF# pairs\nsample\ti7\ti5\r\n s1 \tacgt\tGGCC\ns2\tACGT\tTTAA\ns1\tCCCC\tGGGG\ns1\tacgt\tggcc\n";
    CHECK(sm_barcode_pairs_parse(ok, strlen(ok), "t", &p, &err) == SM_OK && p, "parse: %s", err.message);
    if (p) {
        CHECK(sm_barcode_pairs_samples(p) == 2 && strcmp(sm_barcode_pairs_sample(p, 0), "s1") == 0 &&
                  strcmp(sm_barcode_pairs_sample(p, 1), "s2") == 0, "samples");
        sm_barcode_pairs_free(p);
    }
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"a\tACGT\tGG\nb\tACGT\n", "line 2: 2 fields"},
        {"a\tACGT\tGG\tx\n", "line 1: 4 fields"},
        {"a\tACGT\tGG\nb\tACGT\tGG\n", "name two samples"},
        {"a\tACGT\tGG\nb\tAC-T\tGG\n", "line 2: barcode1 'AC-T' holds '-'"},
        {"a\tACGT\tGG\n\tAC\tGG\n", "line 2: the sample name is empty"},
        {"a\tACGT\tGG\nb\tAC\t\n", "line 2: the barcode2 is empty"},
        {"# nothing\n", "no barcode pairs"},
        {"", "no barcode pairs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = NULL;
        int rc = sm_barcode_pairs_parse(bad[i].text, strlen(bad[i].text), "t", &p, &err);
        CHECK(rc != SM_OK && !p && strstr(err.message, bad[i].says), "bad table %zu: %d '%s'", i, rc, err.message);
    }
    /* records: the ends as read, the tag, the cut */
    const char *fq = "@r1 x\r\nACGTAAcc\r\n+\r\nABCDEFGH\r\n";
    char buf[16];
    CHECK(sm_record_seq_end((const uint8_t *)fq, strlen(fq), 0, 3, buf) == 3 && strcmp(buf, "ACG") == 0, "start");
    CHECK(sm_record_seq_end((const uint8_t *)fq, strlen(fq), 1, 3, buf) == 3 && strcmp(buf, "Acc") == 0, "end: %s", buf);
    CHECK(sm_record_seq_end((const uint8_t *)fq, strlen(fq), 1, 12, buf) == 8, "short");
    CHECK(sm_record_seq_end((const uint8_t *)fq, strlen(fq), 1, 0, buf) == 0 && !buf[0], "none from the end");
    CHECK(sm_record_seq_end((const uint8_t *)fq, strlen(fq), 0, 0, buf) == 0 && !buf[0], "none from the start");
    const char *fa = ">r2\nACG\nTTA\n";
    CHECK(sm_record_seq_end((const uint8_t *)fa, strlen(fa), 1, 4, buf) == 4 && strcmp(buf, "GTTA") == 0, "wrapped");
    uint8_t *out = NULL;
    size_t len = 0, cap = 0;
    CHECK(sm_record_rewrite((const uint8_t *)fq, strlen(fq), "BC:Z:ACG-Acc", 3, 2, &out, &len, &cap) == SM_OK &&
              len == strlen("@r1 x BC:Z:ACG-Acc\r\nTAA\r\n+\r\nDEF\r\n") &&
              memcmp(out, "@r1 x BC:Z:ACG-Acc\r\nTAA\r\n+\r\nDEF\r\n", len) == 0,
          "rewrite: %.*s", (int)len, (const char *)out);
    CHECK(sm_record_rewrite((const uint8_t *)fa, strlen(fa), "BC:Z:A", 0, 0, &out, &len, &cap) == SM_OK &&
              len == strlen(">r2 BC:Z:A\nACG\nTTA\n") && memcmp(out, ">r2 BC:Z:A\nACG\nTTA\n", len) == 0,
          "rewrite fasta: %.*s", (int)len, (const char *)out);
    CHECK(sm_record_rewrite((const uint8_t *)fa, strlen(fa), NULL, 1, 0, &out, &len, &cap) == SM_OK &&
              memcmp(out, ">r2\nCGTTA\n", len) == 0, "cut fasta: %.*s", (int)len, (const char *)out);
    free(out);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    int rounds = test_rounds(80);
    table_cases();
    for (int round = 0; round < rounds && failures < 20; round++) run_round(round);
    CHECK(outcomes[0] > rounds && outcomes[1] > 0 && outcomes[2] > 0 && outcomes[3] > 0,
          "the rounds reach too few cases: %ld assigned, %ld without a hit, %ld ambiguous, %ld unlisted", outcomes[0],
          outcomes[1], outcomes[2], outcomes[3]);
    CHECK(rounds < 40 || spans_checked > rounds / 4, "only %ld reads of -k rounds assigned", spans_checked);
    CHECK(rounds < 40 || reversed_checked > rounds / 8, "only %ld reads assigned in the reverse orientation",
          reversed_checked);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) failures++;
    if (failures) fprintf(stderr, "test_demux_pairs: %d failures\n", failures);
    return failures ? 1 : 0;
}
