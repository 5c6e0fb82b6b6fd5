/* CRISPR guides with an exact PAM, k mismatches and DNA/RNA bulges, against
 * the site oracle written from the definition (tests/common/guide_oracle.c):
 * every limit combination up to 4 mismatches and 2 bulges of each kind, a
 * PAM on either side (IUPAC PAMs: NRG, TTTV, NNGRRT, ...), both strands,
 * sites at record ends, N and IUPAC codes in the text and the guides; block
 * scans, streams fed in pieces, counts, and the runner cut into small
 * segments on several threads. Every hit's alignment (sm_hit_site, the
 * CIGAR) is checked against the oracle's. A 5' PAM with the other engines
 * (mismatches and edits) is checked against the 3' PAM of the reverse
 * complements, which the definition makes the same search on the other
 * strand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx_oracle.h"
#include "guide_oracle.h"
#include "oracle.h"
#include "testutil.h"

static tu_rng rng;

static const char *const pams3[] = {"NGG", "NRG", "NNGRRT", "GG", "NAG", "N", "nGg"};
static const char *const pams5[] = {"TTTV", "TTTN", "TYCV", "T", "TTN"};

#define MAX_PATS 6
#define MAX_RECORDS 4

typedef struct {
    sm_compile_options opts;
    char *seqs[MAX_PATS];
    sm_pattern pats[MAX_PATS];
    size_t npats;
    char *records[MAX_RECORDS];
    size_t lens[MAX_RECORDS], nrecords;
} gcase;

static void free_case(gcase *c) {
    for (size_t i = 0; i < c->npats; i++) free(c->seqs[i]);
    for (size_t i = 0; i < c->nrecords; i++) free(c->records[i]);
}

static char random_base(void) { return "ACGT"[tu_rng_below(&rng, 4)]; }

/* A concrete string a pattern letter stands for. */
static char concrete(char c) {
    unsigned set = oracle_nt_set((unsigned char)c);
    for (;;) {
        unsigned b = tu_rng_below(&rng, 4);
        if (set & (1u << b)) return "ACGT"[b];
    }
}

/* A site of guide g planted at text[at]: a mutated copy with a bulge of
   the limits (sometimes over them), on a random strand. Returns its length. */
static size_t plant(const gcase *c, const char *g, size_t L, char *out) {
    char proto[96], site[128];
    size_t n = 0;
    uint32_t dna = c->opts.dna_bulges, rna = c->opts.rna_bulges;
    int kind = tu_rng_below(&rng, 3); /* none, DNA, RNA */
    uint32_t b = kind == 1 ? tu_rng_range(&rng, 1, dna + 1) : kind == 2 ? tu_rng_range(&rng, 1, rna + 1) : 0;
    size_t at = L > 2 ? tu_rng_range(&rng, 1, (uint32_t)L - 1) : 1;
    for (size_t i = 0; i < L; i++) {
        if (kind == 1 && i == at)
            for (uint32_t x = 0; x < b; x++) proto[n++] = random_base();
        if (kind == 2 && i >= at && i < at + b) continue;
        proto[n++] = concrete(g[i]);
    }
    uint32_t muts = tu_rng_below(&rng, c->opts.max_errors + 2);
    for (uint32_t i = 0; i < muts && n; i++) proto[tu_rng_below(&rng, (uint32_t)n)] = random_base();
    const char *pam = c->opts.pam;
    size_t q = strlen(pam), len = 0;
    if (c->opts.pam_side == SM_PAM_5PRIME)
        for (size_t i = 0; i < q; i++) site[len++] = concrete(pam[i]);
    memcpy(site + len, proto, n);
    len += n;
    if (c->opts.pam_side != SM_PAM_5PRIME)
        for (size_t i = 0; i < q; i++) site[len++] = concrete(pam[i]);
    if (tu_rng_chance(&rng, 50)) oracle_reverse_complement(site, len, out);
    else memcpy(out, site, len);
    return len;
}

static void random_case(gcase *c, uint32_t k, uint32_t dna, uint32_t rna, int five) {
    memset(c, 0, sizeof *c);
    sm_compile_options_init(&c->opts);
    c->opts.match = SM_MATCH_MISMATCHES;
    c->opts.max_errors = k;
    c->opts.dna_bulges = dna;
    c->opts.rna_bulges = rna;
    c->opts.pam_side = five ? SM_PAM_5PRIME : SM_PAM_3PRIME;
    c->opts.pam = five ? pams5[tu_rng_below(&rng, sizeof pams5 / sizeof *pams5)]
                       : pams3[tu_rng_below(&rng, sizeof pams3 / sizeof *pams3)];
    if (tu_rng_chance(&rng, 8)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
    unsigned s = tu_rng_below(&rng, 10);
    c->opts.strands = s == 0 ? SM_STRAND_FORWARD : s == 1 ? SM_STRAND_REVERSE : SM_STRAND_BOTH;
    c->npats = tu_rng_range(&rng, 1, MAX_PATS);
    /* one length for most sets (one group per side), several for some */
    uint32_t L0 = tu_rng_range(&rng, k + 2 < 6 ? 6 : k + 2, 24);
    int mixed = tu_rng_chance(&rng, 25);
    for (size_t i = 0; i < c->npats; i++) {
        uint32_t L = mixed ? tu_rng_range(&rng, 1, 26) : L0;
        c->seqs[i] = malloc(L + 1);
        tu_random_iupac(&rng, c->seqs[i], L, tu_rng_chance(&rng, 20) ? 12 : 0, 20);
        c->seqs[i][L] = '\0';
        c->pats[i].seq = c->seqs[i];
        c->pats[i].len = L;
        c->pats[i].name = NULL;
    }
    c->nrecords = tu_rng_range(&rng, 1, MAX_RECORDS);
    for (size_t r = 0; r < c->nrecords; r++) {
        size_t n = tu_rng_below(&rng, 5) == 0 ? tu_rng_below(&rng, 40) : tu_rng_range(&rng, 60, 360);
        char *t = malloc(n + 256);
        tu_random_iupac(&rng, t, n, (c->opts.flags & SM_FLAG_TEXT_IUPAC) ? 6 : 1, 10);
        /* a run of N now and then */
        if (n > 30 && tu_rng_chance(&rng, 30)) memset(t + tu_rng_below(&rng, (uint32_t)n - 10), 'N', 8);
        /* sites: some at the record's ends, some anywhere */
        unsigned sites = tu_rng_below(&rng, 6);
        for (unsigned x = 0; x < sites; x++) {
            const gcase *cc = c;
            size_t p = tu_rng_below(&rng, (uint32_t)cc->npats);
            char buf[160];
            size_t len = plant(c, c->seqs[p], c->pats[p].len, buf);
            if (len > n) continue;
            unsigned where = tu_rng_below(&rng, 4);
            size_t at = where == 0 ? 0 : where == 1 ? n - len : tu_rng_below(&rng, (uint32_t)(n - len + 1));
            memcpy(t + at, buf, len);
        }
        c->records[r] = t;
        c->lens[r] = n;
    }
}

static void query_of(const gcase *c, size_t p, goracle_query *q) {
    memset(q, 0, sizeof *q);
    q->guide = c->seqs[p];
    q->glen = c->pats[p].len;
    q->pam = c->opts.pam;
    q->qlen = strlen(c->opts.pam);
    q->side = c->opts.pam_side;
    q->k = c->opts.max_errors;
    q->dna = c->opts.dna_bulges;
    q->rna = c->opts.rna_bulges;
    q->flags = c->opts.flags;
    q->forward = c->opts.strands != SM_STRAND_REVERSE;
    q->reverse = c->opts.strands != SM_STRAND_FORWARD;
}

static const char *describe(const gcase *c, char *buf, size_t size) {
    snprintf(buf, size, "k=%u dna=%u rna=%u pam=%s%s strands=%d flags=%u patterns=%zu len0=%zu", c->opts.max_errors,
             c->opts.dna_bulges, c->opts.rna_bulges, c->opts.pam, c->opts.pam_side ? "(5')" : "", (int)c->opts.strands,
             c->opts.flags, c->npats, c->pats[0].len);
    return buf;
}

/* The oracle's sites of every pattern in a record, in the library's order. */
static void oracle_record(const gcase *c, size_t r, tu_hits *want, goracle_sites *sites, uint32_t **site_pattern,
                          size_t *site_cap) {
    for (size_t p = 0; p < c->npats; p++) {
        goracle_query q;
        query_of(c, p, &q);
        size_t before = sites ? sites->n : 0;
        if (goracle_hits(&q, c->records[r], c->lens[r], r, (uint32_t)p, want) != 0) abort();
        if (sites) {
            if (goracle_sites_find(&q, c->records[r], c->lens[r], sites) != 0) abort();
            if (sites->n > *site_cap) {
                *site_cap = sites->n * 2;
                *site_pattern = realloc(*site_pattern, *site_cap * sizeof **site_pattern);
                if (!*site_pattern) abort();
            }
            for (size_t i = before; i < sites->n; i++) (*site_pattern)[i] = (uint32_t)p;
        }
    }
    tu_hits_sort(want);
}

typedef struct {
    tu_hits hits;
    const sm_db *db;
    const goracle_sites *sites;
    const uint32_t *site_pattern;
    const char *what;
    unsigned bad;
} collector;

/* Each hit's alignment against the oracle's site. */
static int collect_checked(const sm_hit *hit, void *ctx) {
    collector *col = ctx;
    tu_hits_collect(hit, &col->hits);
    const goracle_site *want = NULL;
    for (size_t i = 0; i < col->sites->n; i++) {
        const goracle_site *x = &col->sites->items[i];
        if (x->start == hit->start && x->end == hit->end && x->strand == hit->strand &&
            col->site_pattern[i] == hit->pattern)
            want = x;
    }
    if (!want) return 0; /* the hit lists differ: reported there */
    sm_site site;
    char guide[160], dna[160];
    int rc = sm_hit_site(col->db, hit, &site, guide, dna, sizeof guide);
    int ok = rc == SM_OK && site.bulge == want->bulge && site.bulge_size == want->size && site.bulge_at == want->at &&
             site.mismatches == want->mismatches && strcmp(guide, want->guide_row) == 0 &&
             strcmp(dna, want->dna_row) == 0;
    if (!ok && col->bad++ < 3)
        tu_check(0, "%s: site %llu-%llu %c p%u: got rc %d bulge %d/%u at %u mm %u '%s' '%s', want bulge %d/%u at %u mm %u "
                    "'%s' '%s'",
                 col->what, (unsigned long long)hit->start, (unsigned long long)hit->end, hit->strand, hit->pattern, rc,
                 (int)site.bulge, site.bulge_size, site.bulge_at, site.mismatches, rc == SM_OK ? guide : "",
                 rc == SM_OK ? dna : "", (int)want->bulge, want->size, want->at, want->mismatches, want->guide_row,
                 want->dna_row);
    /* the CIGAR: X the mismatches, I or D the bulge */
    char cigar[256];
    size_t len;
    if (sm_hit_cigar(col->db, hit, cigar, sizeof cigar, &len) == SM_OK) {
        unsigned x = 0, indel = 0, run = 0;
        for (size_t i = 0; i < len; i++) {
            if (cigar[i] >= '0' && cigar[i] <= '9') {
                run = run * 10 + (unsigned)(cigar[i] - '0');
                continue;
            }
            if (cigar[i] == 'X') x += run;
            if (cigar[i] == 'I' || cigar[i] == 'D') indel += run;
            run = 0;
        }
        if ((x != hit->errors || indel != want->size) && col->bad++ < 3)
            tu_check(0, "%s: cigar %s of a site with %u mismatches and a bulge of %u", col->what, cigar, hit->errors,
                     want->size);
    } else if (col->bad++ < 3) {
        tu_check(0, "%s: no cigar for %llu-%llu", col->what, (unsigned long long)hit->start,
                 (unsigned long long)hit->end);
    }
    return 0;
}

static void check_case(const gcase *c, sm_engine engine) {
    char what[256], how[320];
    describe(c, what, sizeof what);
    sm_compile_options o = c->opts;
    o.engine = engine;
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(c->pats, c->npats, &o, &db, &err) == SM_OK, "%s: compile (engine %d): %s", what,
                  (int)engine, err.message))
        return;
    tu_hits want;
    tu_hits_init(&want);
    goracle_sites sites = {0};
    uint32_t *site_pattern = NULL;
    size_t site_cap = 0;
    uint64_t want_counts[MAX_PATS] = {0};

    /* block scans, with every hit's alignment checked */
    sm_scratch *scratch = NULL;
    sm_scratch_alloc(db, &scratch);
    collector col;
    memset(&col, 0, sizeof col);
    tu_hits_init(&col.hits);
    col.db = db;
    col.what = what;
    tu_hits all_want;
    tu_hits_init(&all_want);
    for (size_t r = 0; r < c->nrecords; r++) {
        tu_hits_clear(&want);
        sites.n = 0;
        oracle_record(c, r, &want, &sites, &site_pattern, &site_cap);
        for (size_t i = 0; i < want.n; i++) {
            want.items[i].record = 0;
            want_counts[want.items[i].pattern]++;
        }
        col.sites = &sites;
        col.site_pattern = site_pattern;
        tu_hits_clear(&col.hits);
        sm_scan(db, scratch, c->records[r], c->lens[r], collect_checked, &col);
        snprintf(how, sizeof how, "%s engine %d record %zu: scan", what, (int)engine, r);
        tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
        /* a stream fed in pieces */
        sm_stream *stream = NULL;
        tu_hits got;
        tu_hits_init(&got);
        if (sm_stream_open(db, &stream) == SM_OK) {
            size_t at = 0;
            while (at < c->lens[r]) {
                size_t piece = tu_rng_range(&rng, 1, 40);
                if (piece > c->lens[r] - at) piece = c->lens[r] - at;
                sm_stream_feed(stream, c->records[r] + at, piece, tu_hits_collect, &got);
                at += piece;
            }
            sm_stream_end(stream, tu_hits_collect, &got);
            sm_stream_free(stream);
        }
        snprintf(how, sizeof how, "%s engine %d record %zu: stream", what, (int)engine, r);
        tu_check(tu_hits_equal(&want, &got, how), "%s", how);
        tu_hits_free(&got);
        uint64_t counts[MAX_PATS] = {0};
        sm_count(db, scratch, c->records[r], c->lens[r], counts);
        uint64_t expect[MAX_PATS] = {0};
        for (size_t i = 0; i < want.n; i++) expect[want.items[i].pattern]++;
        tu_check(memcmp(counts, expect, sizeof counts) == 0, "%s engine %d record %zu: counts differ", what, (int)engine,
                 r);
        for (size_t i = 0; i < want.n; i++) {
            tu_hit x = want.items[i];
            x.record = r;
            tu_hits_add(&all_want, x.record, x.start, x.end, x.pattern, x.strand, x.errors);
        }
    }
    sm_scratch_free(scratch);
    tu_hits_free(&col.hits);
    goracle_sites_free(&sites);
    free(site_pattern);

    /* the runner: small segments on several threads, hits and counts */
    for (int count = 0; count <= 1; count++) {
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = tu_rng_range(&rng, 1, 3);
        ro.chunk_size = tu_rng_range(&rng, 1, 120);
        ro.count_only = count;
        tu_hits got;
        tu_hits_init(&got);
        ro.on_hit = tu_hits_collect;
        ro.ctx = &got;
        sm_runner *runner = NULL;
        if (!tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "%s: runner: %s", what, err.message)) break;
        for (size_t r = 0; r < c->nrecords; r++) {
            sm_runner_begin_record(runner);
            size_t at = 0;
            while (at < c->lens[r]) {
                size_t piece = tu_rng_range(&rng, 1, 90);
                if (piece > c->lens[r] - at) piece = c->lens[r] - at;
                sm_runner_feed(runner, c->records[r] + at, piece);
                at += piece;
            }
            sm_runner_end_record(runner);
        }
        sm_runner_flush(runner);
        snprintf(how, sizeof how, "%s engine %d: runner threads %u chunk %zu%s", what, (int)engine, ro.threads,
                 ro.chunk_size, count ? " counts" : "");
        if (count)
            tu_check(memcmp(sm_runner_counts(runner), want_counts, c->npats * sizeof(uint64_t)) == 0, "%s", how);
        else
            tu_check(tu_hits_equal(&all_want, &got, how), "%s", how);
        sm_runner_free(runner);
        tu_hits_free(&got);
    }
    tu_hits_free(&all_want);
    tu_hits_free(&want);
    sm_db_free(db);
}

/* Every limit combination up to 4 mismatches and 2 bulges of each kind,
   each PAM side. */
static void test_limits(void) {
    unsigned rounds = tu_scaled(4), cases = 0, with_sites = 0;
    for (uint32_t k = 0; k <= 4; k++)
        for (uint32_t dna = 0; dna <= 2; dna++)
            for (uint32_t rna = 0; rna <= 2; rna++)
                for (int five = 0; five <= 1; five++)
                    for (unsigned r = 0; r < rounds && tu_failures() < 10; r++) {
                        gcase c;
                        random_case(&c, k, dna, rna, five);
                        check_case(&c, SM_ENGINE_AUTO);
                        /* without bulges the other engines give the same sites (5' PAM too) */
                        if (!dna && !rna && k > 0 && !(c.opts.flags & SM_FLAG_TEXT_IUPAC)) {
                            check_case(&c, SM_ENGINE_MISMATCH);
                            sm_compile_options o = c.opts;
                            o.engine = SM_ENGINE_PIGEONHOLE;
                            sm_db *db = NULL;
                            if (sm_compile(c.pats, c.npats, &o, &db, NULL) == SM_OK) {
                                sm_db_free(db);
                                check_case(&c, SM_ENGINE_PIGEONHOLE);
                            }
                        }
                        for (size_t i = 0; i < c.nrecords; i++) {
                            tu_hits h;
                            tu_hits_init(&h);
                            oracle_record(&c, i, &h, NULL, NULL, NULL);
                            with_sites += h.n > 0;
                            tu_hits_free(&h);
                        }
                        cases++;
                        free_case(&c);
                    }
    printf("limits: %u cases, %u records with sites\n", cases, with_sites);
    tu_check(with_sites * 3 >= cases, "limits: too few records with sites (%u of %u cases)", with_sites, cases);
}

/* A 5' PAM on the other engines, mismatches and edits: (G, Q) with the PAM
   5' finds on '+' what (rc(G), rc(Q)) with the PAM 3' finds on '-'. */
static void test_five_prime_engines(void) {
    static const sm_engine engines_m[] = {SM_ENGINE_AUTO, SM_ENGINE_MISMATCH, SM_ENGINE_PIGEONHOLE};
    static const sm_engine engines_k[] = {SM_ENGINE_AUTO, SM_ENGINE_MYERS, SM_ENGINE_WAVEFRONT, SM_ENGINE_PIGEONHOLE};
    unsigned checked = 0;
    for (unsigned round = 0; round < tu_scaled(40) && tu_failures() < 10; round++) {
        gcase c;
        random_case(&c, tu_rng_range(&rng, 1, 3), 0, 0, 1);
        int edits = round % 2;
        c.opts.match = edits ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        c.opts.report = tu_rng_chance(&rng, 50) ? SM_REPORT_ENDS : SM_REPORT_BEST;
        c.opts.flags = 0;
        /* the mirror: reverse complements with a 3' PAM */
        char *rc[MAX_PATS], rq[64];
        sm_pattern mirror[MAX_PATS];
        for (size_t i = 0; i < c.npats; i++) {
            rc[i] = malloc(c.pats[i].len + 1);
            oracle_reverse_complement(c.pats[i].seq, c.pats[i].len, rc[i]);
            mirror[i] = c.pats[i];
            mirror[i].seq = rc[i];
        }
        oracle_reverse_complement(c.opts.pam, strlen(c.opts.pam), rq);
        rq[strlen(c.opts.pam)] = '\0';
        size_t n_engines = edits ? sizeof engines_k / sizeof *engines_k : sizeof engines_m / sizeof *engines_m;
        for (size_t e = 0; e < n_engines; e++) {
            sm_compile_options a = c.opts, b = c.opts;
            a.engine = b.engine = edits ? engines_k[e] : engines_m[e];
            b.pam = rq;
            b.pam_side = SM_PAM_3PRIME;
            b.strands = c.opts.strands == SM_STRAND_FORWARD   ? SM_STRAND_REVERSE
                        : c.opts.strands == SM_STRAND_REVERSE ? SM_STRAND_FORWARD
                                                              : SM_STRAND_BOTH;
            sm_db *da = NULL, *dbb = NULL;
            if (sm_compile(c.pats, c.npats, &a, &da, NULL) != SM_OK ||
                sm_compile(mirror, c.npats, &b, &dbb, NULL) != SM_OK) {
                sm_db_free(da);
                sm_db_free(dbb);
                continue; /* an engine that cannot take the set (pigeonhole pieces) */
            }
            for (size_t r = 0; r < c.nrecords; r++) {
                tu_hits ha, hb;
                tu_hits_init(&ha);
                tu_hits_init(&hb);
                sm_scratch *sa = NULL, *sb = NULL;
                sm_scratch_alloc(da, &sa);
                sm_scratch_alloc(dbb, &sb);
                sm_scan(da, sa, c.records[r], c.lens[r], tu_hits_collect, &ha);
                sm_scan(dbb, sb, c.records[r], c.lens[r], tu_hits_collect, &hb);
                for (size_t i = 0; i < hb.n; i++) hb.items[i].strand = hb.items[i].strand == '+' ? '-' : '+';
                tu_hits_sort(&hb);
                char how[300];
                snprintf(how, sizeof how, "5' PAM %s, %s, engine %d, record %zu", c.opts.pam, edits ? "edits" : "mismatches",
                         (int)a.engine, r);
                tu_check(tu_hits_equal(&hb, &ha, how), "%s", how);
                checked++;
                sm_scratch_free(sa);
                sm_scratch_free(sb);
                tu_hits_free(&ha);
                tu_hits_free(&hb);
            }
            sm_db_free(da);
            sm_db_free(dbb);
        }
        for (size_t i = 0; i < c.npats; i++) free(rc[i]);
        free_case(&c);
    }
    printf("5' PAM on the other engines: %u records\n", checked);
}

/* What the options refuse, in one line each. */
static void test_refusals(void) {
    sm_pattern p = {NULL, "GACGCATAAAGATGAGACGC", 20};
    sm_compile_options o;
    sm_db *db = NULL;
    sm_error err;
    sm_compile_options_init(&o);
    o.match = SM_MATCH_MISMATCHES;
    o.max_errors = 2;
    o.dna_bulges = 1;
    tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_ERR_INVALID && strstr(err.message, "PAM"),
             "bulges without a PAM: %s", err.message);
    o.pam = "NGG";
    o.match = SM_MATCH_EDITS;
    tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_ERR_INVALID && strstr(err.message, "edits"),
             "bulges with edits: %s", err.message);
    o.match = SM_MATCH_MISMATCHES;
    o.dna_bulges = SM_MAX_BULGE + 1;
    tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_ERR_LIMIT, "a bulge over the limit: %s", err.message);
    o.dna_bulges = 1;
    o.engine = SM_ENGINE_PIGEONHOLE;
    tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_ERR_INVALID && strstr(err.message, "bulges"),
             "bulges on the pigeonhole filter: %s", err.message);
    o.engine = SM_ENGINE_AUTO;
    sm_pattern longp = {NULL, "GACGCATAAAGATGAGACGCGACGCATAAAGATGAGACGC", 40};
    tu_check(sm_compile(&longp, 1, &o, &db, &err) == SM_ERR_INVALID && strstr(err.message, "guides of"),
             "a guide of 40 with bulges: %s", err.message);
    /* without bulges a long guide goes to the other engines */
    o.dna_bulges = 0;
    tu_check(sm_compile(&longp, 1, &o, &db, &err) == SM_OK, "a guide of 40 without bulges: %s", err.message);
    sm_db_info info;
    sm_db_get_info(db, &info);
    tu_check(info.approx_engine != SM_ENGINE_GUIDE, "a guide of 40 goes to another engine");
    sm_db_free(db);
    db = NULL;
    /* k = 0 with a bulge keeps the bulge */
    o.max_errors = 0;
    o.rna_bulges = 2;
    tu_check(sm_compile(&p, 1, &o, &db, &err) == SM_OK, "k = 0 with a bulge: %s", err.message);
    sm_db_get_info(db, &info);
    tu_check(info.match == SM_MATCH_MISMATCHES && info.rna_bulges == 2 && info.approx_engine == SM_ENGINE_GUIDE,
             "k = 0 with a bulge: match %d, rna %u, engine %d", (int)info.match, info.rna_bulges,
             (int)info.approx_engine);
    /* saved and loaded, the settings stay */
    size_t size = 0;
    const void *bytes = sm_db_bytes(db, &size);
    sm_db *copy = NULL;
    tu_check(sm_db_from_bytes(bytes, size, &copy, &err) == SM_OK, "reload: %s", err.message);
    sm_db_info info2;
    sm_db_get_info(copy, &info2);
    tu_check(info2.rna_bulges == 2 && info2.pam_side == SM_PAM_3PRIME, "reloaded settings");
    sm_db_free(copy);
    sm_db_free(db);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(31));
    test_refusals();
    test_limits();
    test_five_prime_engines();
    return tu_summary("test_guide");
}
