/* sm_hit_cigar: the alignment of every hit of random searches (exact, k
 * mismatches, k edits best and ends, both strands, IUPAC codes in patterns
 * and text, --text-iupac, a PAM, text with and without ignore-case), checked
 * by applying it: walking the pattern (with its PAM) against the hit's text,
 * reverse-complemented for '-', every '=' must be a match and every 'X' a
 * mismatch by the oracle's rules, the pattern and the text span must be used
 * up exactly, X + I + D must be the hit's errors, and a PAM must sit on '='.
 * Then the hand-worked examples and the refusals (no text, a short buffer,
 * a hit with the wrong error count). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx_oracle.h"
#include "oracle.h"
#include "testutil.h"

static tu_rng rng;
static unsigned long total_hits;

typedef struct {
    sm_compile_options opts;
    sm_pattern pats[6];
    char pat_buf[6][80];
    size_t npats;
    char pam[4];
    const sm_db *db;
    unsigned hits, bad;
    char what[200];
} cigar_case;

/* The pattern as the CIGAR reads it: as given, with its PAM. */
static size_t site_of(const cigar_case *c, uint32_t p, char *out) {
    size_t m = c->pats[p].len;
    memcpy(out, c->pats[p].seq, m);
    if (c->opts.pam) {
        size_t q = strlen(c->opts.pam);
        memcpy(out + m, c->opts.pam, q);
        m += q;
    }
    return m;
}

/* Applies a CIGAR; returns NULL when it holds, else what is wrong. */
static const char *apply(const cigar_case *c, const sm_hit *hit, const char *cigar) {
    char site[90];
    size_t m = site_of(c, hit->pattern, site);
    size_t n = (size_t)(hit->end - hit->start);
    char *text = malloc(n + 1);
    if (hit->strand == '-') {
        if (oracle_reverse_complement(hit->text, n, text) != 0) {
            free(text);
            return "text not a nucleotide code";
        }
    } else {
        memcpy(text, hit->text, n);
    }
    size_t i = 0, j = 0;
    unsigned errors = 0, mismatches = 0, gaps = 0;
    const char *why = NULL;
    for (const char *s = cigar; *s && !why;) {
        size_t run = 0;
        if (*s < '1' || *s > '9') why = "a run without a length";
        while (*s >= '0' && *s <= '9') run = run * 10 + (size_t)(*s++ - '0');
        char op = *s ? *s++ : 0;
        for (size_t r = 0; r < run && !why; r++) {
            if (op == '=' || op == 'X') {
                if (i >= m || j >= n) {
                    why = "runs past the pattern or text";
                    break;
                }
                int same = oracle_symbol_matches((unsigned char)site[i], (unsigned char)text[j], c->opts.alphabet,
                                                 c->opts.flags);
                if (same != (op == '=')) why = op == '=' ? "'=' on a mismatch" : "'X' on a match";
                if (op == 'X') errors++, mismatches++;
                i++, j++;
            } else if (op == 'I') {
                if (i >= m) why = "'I' past the pattern";
                i++, errors++, gaps++;
            } else if (op == 'D') {
                if (j >= n) why = "'D' past the text";
                j++, errors++, gaps++;
            } else {
                why = "an unknown operation";
            }
        }
    }
    if (!why && (i != m || j != n)) why = "does not use up the pattern and the text";
    if (!why && errors != hit->errors) why = "X + I + D differs from the hit's errors";
    if (!why && c->opts.match != SM_MATCH_EDITS && gaps) why = "a gap in a mismatch or exact hit";
    if (!why && c->opts.pam) {
        /* the PAM: the last q operations are '=' */
        size_t q = strlen(c->opts.pam), len = strlen(cigar);
        size_t tail = 0;
        for (size_t k = len; k > 0 && cigar[k - 1] == '='; ) {
            k--;
            size_t run = 0, scale = 1;
            while (k > 0 && cigar[k - 1] >= '0' && cigar[k - 1] <= '9') run += (size_t)(cigar[--k] - '0') * scale, scale *= 10;
            tail += run;
        }
        if (tail < q) why = "the PAM is not on '='";
    }
    free(text);
    return why;
}

static int check_hit(const sm_hit *hit, void *ctx) {
    cigar_case *c = ctx;
    char buf[400];
    size_t len = 0;
    int rc = sm_hit_cigar(c->db, hit, buf, sizeof buf, &len);
    c->hits++;
    const char *why = rc != SM_OK ? "sm_hit_cigar failed" : len != strlen(buf) ? "wrong length" : apply(c, hit, buf);
    if (why) {
        c->bad++;
        if (c->bad <= 3) {
            char ex[80];
            tu_check(0, "%s: hit %llu-%llu p%u %c e%u '%s': %s (cigar %s, rc %d)", c->what,
                     (unsigned long long)hit->start, (unsigned long long)hit->end, hit->pattern, hit->strand,
                     hit->errors, tu_excerpt(hit->text, (size_t)(hit->end - hit->start), 60, ex, sizeof ex), why,
                     rc == SM_OK ? buf : "-", rc);
        }
    }
    return 0;
}

static void random_round(unsigned round) {
    cigar_case c;
    memset(&c, 0, sizeof c);
    sm_compile_options_init(&c.opts);
    int dna = round % 4 != 3;
    c.opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    unsigned kind = round % 3;
    c.opts.match = kind == 0 ? SM_MATCH_EXACT : kind == 1 ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
    c.opts.max_errors = kind == 0 ? 0 : 1 + tu_rng_below(&rng, 4);
    c.opts.report = tu_rng_chance(&rng, 50) ? SM_REPORT_ENDS : SM_REPORT_BEST;
    if (dna) {
        c.opts.strands = (sm_strands)tu_rng_below(&rng, 3);
        if (tu_rng_chance(&rng, 20)) c.opts.flags |= SM_FLAG_TEXT_IUPAC;
        if (tu_rng_chance(&rng, 20)) {
            memcpy(c.pam, tu_rng_chance(&rng, 50) ? "NGG" : "TTV", 4);
            c.opts.pam = c.pam;
        }
    } else if (tu_rng_chance(&rng, 40)) {
        c.opts.flags |= SM_FLAG_IGNORE_CASE;
    }
    c.npats = 1 + tu_rng_below(&rng, 6);
    size_t max_len = tu_rng_chance(&rng, 25) ? 70 : 14;
    for (size_t p = 0; p < c.npats; p++) {
        size_t m = c.opts.max_errors + 1 + tu_rng_below(&rng, (uint32_t)max_len);
        if (m > 75) m = 75;
        if (dna) tu_random_iupac(&rng, c.pat_buf[p], m, 10, 20);
        else tu_random_from(&rng, c.pat_buf[p], m, "abcAB");
        c.pats[p].seq = c.pat_buf[p];
        c.pats[p].len = m;
    }
    snprintf(c.what, sizeof c.what, "round %u: %s %s k=%u %s strands=%d flags=%u%s%s", round, dna ? "dna" : "text",
             kind == 0 ? "exact" : kind == 1 ? "mismatches" : "edits", c.opts.max_errors,
             c.opts.report == SM_REPORT_ENDS ? "ends" : "best", (int)c.opts.strands, c.opts.flags,
             c.opts.pam ? " pam " : "", c.opts.pam ? c.opts.pam : "");
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(c.pats, c.npats, &c.opts, &db, &err) == SM_OK, "%s: compile: %s", c.what, err.message))
        return;
    c.db = db;
    sm_scratch *scratch = NULL;
    sm_scratch_alloc(db, &scratch);
    size_t n = 200 + tu_rng_below(&rng, 2000);
    char *text = malloc(n);
    if (dna) tu_random_iupac(&rng, text, n, 3, 20);
    else tu_random_from(&rng, text, n, "abcAB");
    /* Copies of the sites with a few random changes, so that hits are many. */
    for (int t = 0; t < 30; t++) {
        char site[90];
        size_t m = site_of(&c, tu_rng_below(&rng, (uint32_t)c.npats), site);
        if (dna && c.opts.pam)
            for (size_t i = m - strlen(c.opts.pam); i < m; i++) site[i] = site[i] == 'N' ? 'G' : site[i] == 'V' ? 'C' : site[i];
        for (unsigned e = tu_rng_below(&rng, c.opts.max_errors + 2); e > 0; e--) {
            size_t at = tu_rng_below(&rng, (uint32_t)m);
            unsigned what = tu_rng_below(&rng, c.opts.match == SM_MATCH_EDITS ? 3 : 1);
            if (what == 0) site[at] = dna ? "ACGT"[tu_rng_below(&rng, 4)] : "abcAB"[tu_rng_below(&rng, 5)];
            else if (what == 1 && m > 2) memmove(site + at, site + at + 1, --m - at);
            else if (m < 85) memmove(site + at + 1, site + at, m++ - at), site[at] = dna ? 'A' : 'a';
        }
        if (dna)
            for (size_t i = 0; i < m; i++)
                if (!strchr("ACGTacgt", site[i])) site[i] = "ACGT"[tu_rng_below(&rng, 4)];
        if (dna && tu_rng_chance(&rng, 40)) {
            char rc[90];
            oracle_reverse_complement(site, m, rc);
            memcpy(site, rc, m);
        }
        if (m < n) memcpy(text + tu_rng_below(&rng, (uint32_t)(n - m)), site, m);
    }
    sm_scan(db, scratch, text, n, check_hit, &c);
    tu_check(c.bad == 0, "%s: %u of %u hits with a wrong CIGAR", c.what, c.bad, c.hits);
    total_hits += c.hits;
    free(text);
    sm_scratch_free(scratch);
    sm_db_free(db);
}

typedef struct {
    const sm_db *db;
    char cigars[8][64];
    size_t n;
} example_hits;

static int collect_cigar(const sm_hit *hit, void *ctx) {
    example_hits *e = ctx;
    if (e->n < 8 && sm_hit_cigar(e->db, hit, e->cigars[e->n], sizeof e->cigars[0], NULL) != SM_OK)
        strcpy(e->cigars[e->n], "?");
    e->n++;
    return 0;
}

/* One search, its CIGARs joined by spaces. */
static void expect_cigars(const char *pattern, const char *text, sm_match match, uint32_t k, sm_strands strands,
                          const char *pam, const char *want) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.match = match;
    o.max_errors = k;
    o.strands = strands;
    o.pam = pam;
    sm_pattern p = {NULL, pattern, strlen(pattern)};
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_OK, "example %s: compile: %s", pattern, err.message)) return;
    sm_scratch *s = NULL;
    sm_scratch_alloc(db, &s);
    example_hits e;
    memset(&e, 0, sizeof e);
    e.db = db;
    sm_scan(db, s, text, strlen(text), collect_cigar, &e);
    char got[600] = "";
    for (size_t i = 0; i < e.n && i < 8; i++) {
        if (i) strcat(got, " ");
        strcat(got, e.cigars[i]);
    }
    tu_check(strcmp(got, want) == 0, "example %s in %s: cigars '%s', want '%s'", pattern, text, got, want);
    sm_scratch_free(s);
    sm_db_free(db);
}

static void test_examples(void) {
    /* a mismatch in the middle; the same on '-' reads the pattern 5' to 3' */
    expect_cigars("ACGTAC", "TTACGAACTT", SM_MATCH_MISMATCHES, 1, SM_STRAND_FORWARD, NULL, "3=1X2=");
    expect_cigars("ACGTAC", "AAGTTCGTAA", SM_MATCH_MISMATCHES, 1, SM_STRAND_REVERSE, NULL, "3=1X2=");
    /* one text base more than the pattern: D; one less: I */
    expect_cigars("ACGTTGCA", "GGACGTATGCAGG", SM_MATCH_EDITS, 1, SM_STRAND_FORWARD, NULL, "4=1D4=");
    expect_cigars("ACGTTGCA", "GGACGTGCAGG", SM_MATCH_EDITS, 1, SM_STRAND_FORWARD, NULL, "3=1I4=");
    /* on '-' the reverse complement of the text: TGCATACGT -> ACGTATGCA */
    expect_cigars("ACGTTGCA", "CCTGCATACGTCC", SM_MATCH_EDITS, 1, SM_STRAND_REVERSE, NULL, "4=1D4=");
    /* IUPAC: N matches any base, a text N matches nothing */
    expect_cigars("ACNNT", "GGACGNTGG", SM_MATCH_MISMATCHES, 1, SM_STRAND_FORWARD, NULL, "3=1X1=");
    /* a PAM: the guide's mismatch, the PAM on '=' */
    expect_cigars("ACGTACGTAC", "TTACGAACGTACTGGTT", SM_MATCH_MISMATCHES, 1, SM_STRAND_FORWARD, "NGG", "3=1X9=");
    expect_cigars("ACGTACGTAC", "TTACGTACTACTGGTT", SM_MATCH_EDITS, 1, SM_STRAND_FORWARD, "NGG", "6=1I6=");
    expect_cigars("GAATTC", "AGAATTCA", SM_MATCH_EXACT, 0, SM_STRAND_BOTH, NULL, "6= 6=");
}

static int first_hit(const sm_hit *hit, void *ctx) {
    *(sm_hit *)ctx = *hit;
    return 1;
}

static void test_refusals(void) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.match = SM_MATCH_EDITS;
    o.max_errors = 2;
    o.strands = SM_STRAND_FORWARD;
    sm_pattern p = {NULL, "ACGTTGCA", 8};
    sm_db *db = NULL;
    sm_error err;
    if (sm_compile(&p, 1, &o, &db, &err) != SM_OK) return;
    sm_scratch *s = NULL;
    sm_scratch_alloc(db, &s);
    static const char text[] = "GGACGTATGCAGG";
    sm_hit hit;
    memset(&hit, 0, sizeof hit);
    sm_scan(db, s, text, strlen(text), first_hit, &hit);
    hit.text = text + hit.start; /* valid after the scan: it points into text */
    char buf[64];
    size_t len = 0;
    tu_check(sm_hit_cigar(db, &hit, buf, sizeof buf, &len) == SM_OK && strcmp(buf, "4=1D4=") == 0 && len == 6,
             "refusals: the hit itself (%s)", buf);
    tu_check(sm_hit_cigar(db, &hit, buf, 4, &len) == SM_ERR_LIMIT && len == 6, "refusals: short buffer");
    tu_check(sm_hit_cigar(db, &hit, NULL, 0, &len) == SM_ERR_LIMIT && len == 6, "refusals: length only");
    sm_hit wrong = hit;
    wrong.errors = 0;
    tu_check(sm_hit_cigar(db, &wrong, buf, sizeof buf, &len) == SM_ERR_INVALID, "refusals: too few errors");
    wrong = hit;
    wrong.text = NULL;
    tu_check(sm_hit_cigar(db, &wrong, buf, sizeof buf, &len) == SM_ERR_INVALID, "refusals: no text");
    wrong = hit;
    wrong.pattern = 5;
    tu_check(sm_hit_cigar(db, &wrong, buf, sizeof buf, &len) == SM_ERR_INVALID, "refusals: pattern out of range");
    tu_check(sm_hit_cigar(NULL, &hit, buf, sizeof buf, &len) == SM_ERR_INVALID, "refusals: no database");
    sm_scratch_free(s);
    sm_db_free(db);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0xC16A7ULL));
    test_examples();
    test_refusals();
    unsigned rounds = tu_scaled(600);
    for (unsigned round = 0; round < rounds && tu_failures() < 10; round++) random_round(round);
    tu_check(total_hits > rounds * 5ul, "only %lu hits in %u rounds", total_hits, rounds);
    printf("%lu hits checked\n", total_hits);
    return tu_summary("test_cigar");
}
