/* Adapter trimming (sm_trim_*, sm_trimmer_*, include/seqmatch_reader.h)
 * through the installed headers only, against an oracle written from the
 * definition (docs/trim.md): every placement of every adapter on the read
 * (whole, or running off an end with at least min_overlap bases inside),
 * mismatches counted inside with the IUPAC rules, the kinds' placements
 * (3': not off the start; 5': not off the end; a read wholly inside a
 * placement counts for both; anchors), of each adapter the leftmost part,
 * of the adapters the best score. Random reads with planted whole and
 * partial adapters (mutated), IUPAC codes, N and lower case, FASTQ with
 * qualities and wrapped FASTA, plain and gzip, single and paired, 1 to 3
 * threads and small chunks, minimum length; refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <seqmatch_output.h>
#include <seqmatch_reader.h>

#include "check.h"
#include "oracle.h"

static char dir[] = "/tmp/sm_trim_api_XXXXXX";

/* ---------------------------------------------------------------- oracle */

static int symbols_match(char pattern, char text, int text_iupac) {
    unsigned t = base_set(text), p = base_set(pattern);
    if (!text_iupac && t != 1 && t != 2 && t != 4 && t != 8) return 0;
    return (p & t) != 0;
}

typedef struct {
    int found, partial;
    long start, end;
    unsigned errors;
} part;

/* The leftmost part of adapter seq[0, m) as kind (1 back, 2 front) at or
   after from, with its fewest errors. */
static part oracle_part(const char *read, long n, const char *seq, long m, int kind, int anchored, long from,
                        unsigned k, unsigned overlap, int text_iupac) {
    part best = {0, 0, 0, 0, 0};
    for (long s = -(m - 1); s < n; s++) {
        long a = s < 0 ? 0 : s, b = s + m > n ? n : s + m;
        int whole = s >= 0 && s + m <= n, covers = s <= 0 && s + m >= n;
        if (b <= a || (!whole && (overlap == 0 || b - a < (long)overlap))) continue;
        if (kind == 1 && !(s >= 0 || covers)) continue;
        if (kind == 2 && !(s + m <= n || covers)) continue;
        if (anchored && (!whole || (kind == 1 ? s + m != n : s != from))) continue;
        if (a < from) continue;
        unsigned e = 0;
        for (long i = a; i < b; i++) e += !symbols_match(seq[i - s], read[i], text_iupac);
        if (e > k) continue;
        int partial = s < 0 && !covers; /* off the start: loses to every other */
        if (!best.found || partial < best.partial ||
            (partial == best.partial &&
             (a < best.start || (a == best.start && (e < best.errors || (e == best.errors && b < best.end))))))
            best = (part){1, partial, a, b, e};
    }
    return best;
}

typedef struct {
    int kind; /* 1 back, 2 front, 3 linked */
    const char *first, *second;
    int anchored, second_anchored;
    int as_back; /* given with -a (3' and linked), else -g */
    unsigned mate; /* pairs: 1 or 2 only, 0 both */
    char text[96];
} adapter;

/* reads cut by each kind of adapter, and cut by an adapter running off the read's end: the rounds must reach them */
static long cut_by_kind[4], cut_partial;

static long score(const part *p) { return (p->end - p->start) - 2 * (long)p->errors; }

/* Adapter i's part of a kind (second: a linked adapter's second part), at or after from. */
typedef part (*find_part)(void *ctx, size_t i, int second, int kind, int anchored, long from);

/* The cut of a read of n bytes by the adapters of its mate, their parts found by find. */
static void choose_cut(const adapter *ad, size_t na, unsigned mate, long n, find_part find, void *ctx,
                       long *keep_start, long *keep_end, long *which) {
    *keep_start = 0, *keep_end = n, *which = -1;
    long best_score = 0;
    unsigned best_errors = 0;
    for (size_t i = 0; i < na; i++) {
        const adapter *a = &ad[i];
        if (a->mate && a->mate != mate) continue;
        long s0 = 0, e0 = n, sc;
        unsigned errors;
        if (a->kind != 3) {
            part p = find(ctx, i, 0, a->kind, a->anchored, 0);
            if (!p.found) continue;
            if (a->kind == 1) e0 = p.start;
            else s0 = p.end;
            sc = score(&p), errors = p.errors;
        } else {
            part p = find(ctx, i, 0, 2, a->anchored, 0);
            int required = !a->as_back || a->anchored, second_required = !a->as_back || a->second_anchored;
            if (!p.found && required) continue;
            long from = p.found ? p.end : 0;
            part q = find(ctx, i, 1, 1, a->second_anchored, from);
            if ((!q.found && second_required) || (!p.found && !q.found)) continue;
            s0 = from, e0 = q.found ? q.start : n;
            sc = (p.found ? score(&p) : 0) + (q.found ? score(&q) : 0);
            errors = (p.found ? p.errors : 0) + (q.found ? q.errors : 0);
        }
        if (*which < 0 || sc > best_score || (sc == best_score && errors < best_errors)) {
            *keep_start = s0, *keep_end = e0, *which = (long)i;
            best_score = sc, best_errors = errors;
        }
    }
}

typedef struct {
    const adapter *ad;
    const char *read;
    long n;
    unsigned k, overlap;
    int text_iupac;
} symbol_search;

static part symbol_part(void *ctx, size_t i, int second, int kind, int anchored, long from) {
    const symbol_search *c = ctx;
    const char *seq = second ? c->ad[i].second : c->ad[i].first;
    return oracle_part(c->read, c->n, seq, (long)strlen(seq), kind, anchored, from, c->k, c->overlap, c->text_iupac);
}

static void oracle_cut(const adapter *ad, size_t na, unsigned mate, const char *read, long n, unsigned k,
                       unsigned overlap, int text_iupac, long *keep_start, long *keep_end, long *which) {
    symbol_search c = {ad, read, n, k, overlap, text_iupac};
    choose_cut(ad, na, mate, n, symbol_part, &c, keep_start, keep_end, which);
}

/* k edits: the whole hits are search's (sm_scan of the read, checked
   against its own oracles elsewhere); the partial ones (min_overlap) from
   the definition below; the choice as above. */
typedef struct {
    sm_hit h[4096];
    int partial[4096];
    size_t n;
} hit_list;

static int collect(const sm_hit *hit, void *ctx) {
    hit_list *l = ctx;
    if (hit->strand == '+' && l->n < 4096) l->partial[l->n] = 0, l->h[l->n++] = *hit;
    return 0;
}

static unsigned edit_distance(const char *p, long m, const char *t, long n, int text_iupac) {
    unsigned row[192];
    for (long j = 0; j <= n; j++) row[j] = (unsigned)j;
    for (long i = 1; i <= m; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (long j = 1; j <= n; j++) {
            unsigned best = diag + !symbols_match(p[i - 1], t[j - 1], text_iupac);
            diag = row[j];
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
        }
    }
    return row[n];
}

/* The partial hits of seq[0, m) in read[0, n) (runner.min_overlap with k
   edits, include/seqmatch_runtime.h): P(j) = the least edits of a part
   seq[a, b), b - a >= overlap, not all of it, against read[s, j), where
   a > 0 needs s = 0 and b < m needs j = n; the least of each run of
   consecutive j with P(j) <= k (leftmost on ties), start the largest s
   reaching it; the trimmer gets them apart from the whole ones
   (on_partial_hit), one with a whole hit's place too. */
static void add_partials(hit_list *l, uint32_t pattern, const char *read, long n, const char *seq, long m, unsigned k,
                         unsigned overlap, int text_iupac) {
    unsigned P[192];
    long S[192];
    for (long j = 1; j <= n; j++) {
        P[j] = ~0u, S[j] = 0;
        for (long a = 0; a < m; a++)
            for (long b = a + overlap; b <= m; b++) {
                if (b - a == m || (b < m && j < n)) continue;
                /* edit >= the difference of the lengths: only s within k of b - a tried */
                for (long s = 0; s <= j; s++) {
                    if ((a > 0 && s > 0) || labs((b - a) - (j - s)) > (long)k) continue;
                    unsigned d = edit_distance(seq + a, b - a, read + s, j - s, text_iupac);
                    if (d < P[j] || (d == P[j] && s > S[j])) P[j] = d, S[j] = s;
                }
            }
    }
    for (long j = 1; j <= n;) {
        if (P[j] > k) {
            j++;
            continue;
        }
        long best = j++;
        for (; j <= n && P[j] <= k; j++)
            if (P[j] < P[best]) best = j;
        if (l->n == 4096) continue;
        l->h[l->n] = (sm_hit){0, (uint64_t)S[best], (uint64_t)best, pattern, '+', P[best], NULL};
        l->partial[l->n++] = 1;
    }
}

static part edit_part(const hit_list *l, uint32_t pattern, int kind, int anchored, long from, long n) {
    part best = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < l->n; i++) {
        const sm_hit *h = &l->h[i];
        long a = (long)h->start, b = (long)h->end;
        if (h->pattern != pattern || a < from) continue;
        /* a partial hit: over the whole read (either kind), off its start (5') or off its end (3') */
        int covers = l->partial[i] && a == 0 && b == n, off_start = l->partial[i] && a == 0 && !covers;
        if (l->partial[i] && !covers && (kind == 1 ? off_start : !off_start)) continue;
        if (anchored && (l->partial[i] || (kind == 1 ? b != n : a != from))) continue;
        int partial = off_start; /* loses to every other */
        if (!best.found || partial < best.partial ||
            (partial == best.partial &&
             (a < best.start || (a == best.start && (h->errors < best.errors ||
                                                     (h->errors == best.errors && b < best.end))))))
            best = (part){1, partial, a, b, h->errors};
    }
    return best;
}

typedef struct {
    const hit_list *l;
    const uint32_t *pattern_of;
    long n;
} edit_search;

static part hits_part(void *ctx, size_t i, int second, int kind, int anchored, long from) {
    const edit_search *c = ctx;
    return edit_part(c->l, c->pattern_of[i] + (second ? 1u : 0u), kind, anchored, from, c->n);
}

static void edit_cut(const adapter *ad, size_t na, const uint32_t *pattern_of, unsigned mate, const hit_list *l,
                     long n, long *keep_start, long *keep_end, long *which) {
    edit_search c = {l, pattern_of, n};
    choose_cut(ad, na, mate, n, hits_part, &c, keep_start, keep_end, which);
}

/* ---------------------------------------------------------------- inputs */

#define MAX_READS 400
#define MAX_LEN 160

typedef struct {
    char seq[MAX_LEN + 1], qual[MAX_LEN + 1];
    long n;
} read_t;

static const char *const pool[] = {"AGATCGGAAGAGC", "CTGTCTCTTATA", "GGNACRT", "ACGTTGCA", "TTTTTTTTTT",
                                   "GATCGATC", "CCAGTWCA"};

static void plant(char *s, long n, const char *a) {
    long m = (long)strlen(a);
    long at = (long)rnd((unsigned)(n + m)) - m + 1; /* may run off either end */
    for (long i = 0; i < m; i++) {
        long j = at + i;
        if (j < 0 || j >= n) continue;
        char c = a[i];
        if (base_set(c) != 1 && base_set(c) != 2 && base_set(c) != 4 && base_set(c) != 8) c = "ACGT"[rnd(4)];
        if (rnd(12) == 0) c = "ACGT"[rnd(4)];
        s[j] = c;
    }
}

static void make_read(read_t *r, const adapter *ad, size_t na) {
    r->n = rnd(4) == 0 ? (long)rnd(16) : (long)rnd(MAX_LEN);
    for (long i = 0; i < r->n; i++) {
        unsigned x = rnd(60);
        r->seq[i] = x < 1 ? 'N' : x < 2 ? "RYKM"[rnd(4)] : x < 6 ? "acgt"[rnd(4)] : "ACGT"[rnd(4)];
        r->qual[i] = (char)('!' + rnd(41));
    }
    for (unsigned p = rnd(3); p > 0 && r->n > 0; p--) {
        const adapter *a = &ad[rnd((unsigned)na)];
        plant(r->seq, r->n, a->kind == 3 && rnd(2) ? a->second : a->first);
    }
    r->seq[r->n] = r->qual[r->n] = '\0';
}

static void write_reads(const char *path, const read_t *reads, size_t count, int mate, int fasta, int gz) {
    gzFile g = gz ? gzopen(path, "wb") : NULL;
    FILE *f = gz ? NULL : fopen(path, "wb");
    for (size_t i = 0; i < count; i++) {
        char buf[3 * MAX_LEN + 128];
        size_t at = 0;
        if (fasta) {
            at += (size_t)snprintf(buf + at, sizeof buf - at, ">r%zu/%d x\n", i, mate);
            for (long j = 0; j < reads[i].n; j += 37)
                at += (size_t)snprintf(buf + at, sizeof buf - at, "%.37s\n", reads[i].seq + j);
        } else {
            at += (size_t)snprintf(buf + at, sizeof buf - at, "@r%zu/%d x\n%s\n+\n%s\n", i, mate, reads[i].seq,
                                   reads[i].qual);
        }
        if (gz) gzwrite(g, buf, (unsigned)at);
        else fwrite(buf, 1, at, f);
    }
    if (gz) gzclose(g);
    else fclose(f);
}

/* ---------------------------------------------------------------- runs */

typedef struct {
    const read_t *reads[2];
    const adapter *ad;
    size_t na;
    unsigned k, overlap;
    int text_iupac, fasta;
    uint64_t minimum_length;
    size_t next;
    int round;
    int edits;                 /* k edits: expected from sm_scan's hits */
    const sm_db *db;
    sm_scratch *scratch;
    uint32_t pattern_of[4];    /* each adapter's first pattern */
    int discard;               /* SM_TRIM_KEEP_ALL or SM_TRIM_DISCARD_* */
    char *kept_bytes[2];       /* the kept mates' records, in order (sm_trim_options.out's expected bytes) */
    size_t kept_len[2];
} expect;

static void expected_record(const read_t *r, size_t index, int mate, int fasta, long s, long e, char *out) {
    if (fasta) sprintf(out, ">r%zu/%d x\n%.*s\n", index, mate, (int)(e - s), r->seq + s);
    else sprintf(out, "@r%zu/%d x\n%.*s\n+\n%.*s\n", index, mate, (int)(e - s), r->seq + s, (int)(e - s), r->qual + s);
}

static int check_record(void *ctx, const sm_trimmed_record *rec) {
    expect *x = ctx;
    size_t i = x->next++;
    int kept = 1;
    for (unsigned m = 0; m < rec->mates; m++) {
        const read_t *r = &x->reads[m][i];
        long s, e, which;
        if (x->edits) {
            static hit_list l;
            l.n = 0;
            sm_scan(x->db, x->scratch, r->seq, (size_t)r->n, collect, &l);
            for (size_t a = 0; a < x->na && x->overlap; a++) {
                const adapter *ap = &x->ad[a];
                add_partials(&l, x->pattern_of[a], r->seq, r->n, ap->first, (long)strlen(ap->first), x->k, x->overlap,
                             x->text_iupac);
                if (ap->kind == 3)
                    add_partials(&l, x->pattern_of[a] + 1, r->seq, r->n, ap->second, (long)strlen(ap->second), x->k,
                                 x->overlap, x->text_iupac);
            }
            edit_cut(x->ad, x->na, x->pattern_of, m + 1, &l, r->n, &s, &e, &which);
        } else {
            oracle_cut(x->ad, x->na, m + 1, r->seq, r->n, x->k, x->overlap, x->text_iupac, &s, &e, &which);
        }
        char want[3 * MAX_LEN + 128];
        expected_record(r, i, (int)m + 1, x->fasta, s, e, want);
        CHECK(rec->len[m] == strlen(want) && memcmp(rec->bytes[m], want, rec->len[m]) == 0,
              "round %d read %zu mate %u (%s, k %u, overlap %u): got\n%.*s want\n%s", x->round, i, m + 1, r->seq,
              x->k, x->overlap, (int)rec->len[m], (const char *)rec->bytes[m], want);
        CHECK(rec->cut[m].adapter == which && (long)rec->cut[m].start == s && (long)rec->cut[m].end == e,
              "round %d read %zu: adapter %lld [%llu, %llu), want %ld [%ld, %ld)", x->round, i,
              (long long)rec->cut[m].adapter, (unsigned long long)rec->cut[m].start,
              (unsigned long long)rec->cut[m].end, which, s, e);
        if ((uint64_t)(e - s) < x->minimum_length) kept = 0;
        int has_adapters = 0;
        for (size_t a = 0; a < x->na; a++) has_adapters |= !x->ad[a].mate || x->ad[a].mate == m + 1;
        if (x->discard && has_adapters && (which >= 0) == (x->discard == SM_TRIM_DISCARD_TRIMMED)) kept = 0;
        if (which >= 0) {
            cut_by_kind[x->ad[which].kind]++;
            cut_partial += x->ad[which].kind == 1 && e > r->n - (long)strlen(x->ad[which].first);
        }
    }
    CHECK(rec->kept == kept, "round %d read %zu: kept %d, want %d", x->round, i, rec->kept, kept);
    for (unsigned m = 0; m < rec->mates && rec->kept; m++) {
        x->kept_bytes[m] = realloc(x->kept_bytes[m], x->kept_len[m] + rec->len[m]);
        memcpy(x->kept_bytes[m] + x->kept_len[m], rec->bytes[m], rec->len[m]);
        x->kept_len[m] += rec->len[m];
    }
    return 0;
}

/* Whether a file holds exactly len bytes p (decompressed, when gzip). */
static int file_holds(const char *path, const char *p, size_t len) {
    gzFile f = gzopen(path, "rb");
    if (!f) return 0;
    char *got = malloc(len + 1);
    int n = gzread(f, got, (unsigned)len + 1);
    int same = n == (int)len && (len == 0 || memcmp(got, p, len) == 0);
    free(got);
    gzclose(f);
    return same;
}

static void random_adapters(adapter *ad, size_t *na, int round) {
    *na = 1 + rnd(3);
    for (size_t i = 0; i < *na; i++) {
        adapter *a = &ad[i];
        memset(a, 0, sizeof *a);
        a->kind = i == 0 ? 1 + round % 3 : 1 + (int)rnd(3); /* every kind in any 3 rounds */
        a->first = pool[rnd(sizeof pool / sizeof pool[0])];
        a->second = pool[rnd(sizeof pool / sizeof pool[0])];
        a->anchored = rnd(4) == 0;
        a->second_anchored = a->kind == 3 && rnd(4) == 0;
        int as_back = a->kind == 1 || (a->kind == 3 && rnd(2));
        if (a->kind == 1) snprintf(a->text, sizeof a->text, "%s%s", a->first, a->anchored ? "$" : "");
        else if (a->kind == 2) snprintf(a->text, sizeof a->text, "%s%s", a->anchored ? "^" : "", a->first);
        else snprintf(a->text, sizeof a->text, "%s%s...%s%s", a->anchored ? "^" : "", a->first, a->second,
                      a->second_anchored ? "$" : "");
        a->as_back = as_back;
        a->mate = rnd(4) == 0 ? 1 + rnd(2) : 0;
    }
}

static void run_round(int round) {
    adapter ad[4];
    size_t na;
    random_adapters(ad, &na, round);
    int edits = rnd(5) == 0;
    unsigned k = edits ? 1 + rnd(2) : rnd(3) == 0 ? 0 : rnd(3);
    unsigned overlap = rnd(4) == 0 ? 0 : k + 1 + rnd(4);
    int text_iupac = rnd(5) == 0, fasta = rnd(4) == 0, gz = rnd(3) == 0, paired = rnd(3) == 0;
    size_t count = 1 + rnd(MAX_READS);
    static read_t reads[2][MAX_READS];
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < count; i++) make_read(&reads[m][i], ad, na);

    sm_trim_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    for (size_t i = 0; i < na; i++) {
        int st = sm_trim_set_add(&set, ad[i].text, ad[i].as_back ? SM_TRIM_BACK : SM_TRIM_FRONT, &err);
        CHECK(st == SM_OK, "round %d: adapter '%s': %s", round, ad[i].text, err.message);
        if (st == SM_OK) set.adapters[set.count - 1].mate = (uint8_t)ad[i].mate;
    }
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.strands = SM_STRAND_FORWARD;
    co.match = edits ? SM_MATCH_EDITS : k ? SM_MATCH_MISMATCHES : SM_MATCH_EXACT;
    co.max_errors = k;
    if (text_iupac) co.flags |= SM_FLAG_TEXT_IUPAC;
    sm_db *db = NULL;
    int st = sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err);
    CHECK(st == SM_OK, "round %d: compile: %s", round, err.message);
    if (st != SM_OK) {
        sm_trim_set_free(&set);
        return;
    }
    char p1[256], p2[256];
    snprintf(p1, sizeof p1, "%s/r1.%s%s", dir, fasta ? "fa" : "fq", gz ? ".gz" : "");
    snprintf(p2, sizeof p2, "%s/r2.%s%s", dir, fasta ? "fa" : "fq", gz ? ".gz" : "");
    write_reads(p1, reads[0], count, 1, fasta, gz);
    if (paired) write_reads(p2, reads[1], count, 2, fasta, gz);

    expect x = {{reads[0], reads[1]}, ad, na, k, overlap, text_iupac, fasta, rnd(3) == 0 ? rnd(40) : 0, 0, round,
                edits, db, NULL, {0, 0, 0, 0}, SM_TRIM_KEEP_ALL, {NULL, NULL}, {0, 0}};
    for (size_t i = 0; i < na; i++) x.pattern_of[i] = set.adapters[i].pattern;
    x.discard = (int)rnd(3);
    if (sm_scratch_alloc(db, &x.scratch) != SM_OK) CHECK(0, "scratch");
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = 1 + rnd(3);
    ro.chunk_size = rnd(2) ? 0 : 16 + rnd(200);
    ro.min_overlap = overlap;
    sm_trim_options to = {.set = &set, .minimum_length = x.minimum_length, .discard = x.discard,
                          .reader_threads = 1 + rnd(2), .ctx = &x, .on_record = check_record};
    /* half the rounds: the kept reads written by the trimmer as well (plain
       or gzip, whose members the workers make) */
    char out_path[2][300];
    int write_out = rnd(2), gz_out = rnd(2);
    for (int m = 0; m < 2 && write_out && (m == 0 || paired); m++) {
        snprintf(out_path[m], sizeof out_path[m], "%s/out_%d.fq%s", dir, m + 1, gz_out ? ".gz" : "");
        to.out[m] = sm_record_file_open(out_path[m], &err);
    }
    sm_trimmer *t = NULL;
    st = sm_trimmer_new(db, &ro, &to, &t, &err);
    CHECK(st == SM_OK, "round %d: trimmer: %s", round, err.message);
    if (st == SM_OK) {
        st = sm_trimmer_run(t, p1, paired ? p2 : NULL, &err);
        CHECK(st == SM_OK, "round %d: run: %s", round, err.message);
        CHECK(x.next == count, "round %d: %zu records handed on, want %zu", round, x.next, count);
        sm_trim_stats stats;
        sm_trimmer_stats(t, &stats);
        CHECK(stats.records == count && stats.reads == count * (paired ? 2 : 1), "round %d: stats", round);
    }
    for (int m = 0; m < 2; m++) {
        if (!to.out[m]) continue;
        CHECK(sm_record_file_close(to.out[m], 1, NULL, &err) == SM_OK, "round %d: close: %s", round, err.message);
        CHECK(file_holds(out_path[m], x.kept_bytes[m] ? x.kept_bytes[m] : "", x.kept_len[m]),
              "round %d: mate %d's file is not the kept records (%zu bytes)", round, m + 1, x.kept_len[m]);
    }
    free(x.kept_bytes[0]);
    free(x.kept_bytes[1]);
    sm_trimmer_free(t);
    sm_scratch_free(x.scratch);
    sm_db_free(db);
    sm_trim_set_free(&set);
}

/* sm_trim_record: a record without its first head and last tail symbols. */
static void record_cuts(void) {
    static const struct {
        const char *raw;
        uint64_t head, tail;
        const char *want;
        int status;
    } cases[] = {
        {"@r x\nACGTACGT\n+\nABCDEFGH\n", 2, 3, "@r x\nGTA\n+\nCDE\n", SM_OK},
        {"@r\nACGT\n+r\nABCD", 0, 1, "@r\nACG\n+r\nABC\n", SM_OK},
        {"@r\r\nAC\r\nGT\r\n+\r\nAB\r\nCD\r\n\r\n", 1, 0, "@r\r\nCGT\r\n+\r\nBCD\r\n", SM_OK},
        {">f desc\nACG\nTAC\n\n", 1, 1, ">f desc\nCGTA\n", SM_OK},
        {">f\nACGT\n", 3, 3, ">f\n\n", SM_OK},
        {"@r\nACGT\n+\nAB\n", 0, 0, NULL, SM_ERR_FORMAT},
        {"ACGT\n", 0, 0, NULL, SM_ERR_FORMAT},
    };
    uint8_t *out = NULL;
    size_t len = 0, cap = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = sm_trim_record((const uint8_t *)cases[i].raw, strlen(cases[i].raw), cases[i].head, cases[i].tail, &out,
                                &len, &cap);
        CHECK(st == cases[i].status, "record %zu: status %d", i, st);
        if (st == SM_OK)
            CHECK(len == strlen(cases[i].want) && memcmp(out, cases[i].want, len) == 0, "record %zu: got %.*s", i,
                  (int)len, (const char *)out);
    }
    free(out);
}

static void refusals(void) {
    sm_trim_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    CHECK(sm_trim_set_add(&set, "^ACGT", SM_TRIM_BACK, &err) == SM_ERR_INVALID && strstr(err.message, "'^'"),
          "^ on a 3' adapter: %s", err.message);
    CHECK(sm_trim_set_add(&set, "ACGT$", SM_TRIM_FRONT, &err) == SM_ERR_INVALID && strstr(err.message, "'$'"),
          "$ on a 5' adapter: %s", err.message);
    CHECK(sm_trim_set_add(&set, "AC...GT...TT", SM_TRIM_BACK, &err) == SM_ERR_INVALID, "two links");
    CHECK(sm_trim_set_add(&set, "AC$GT", SM_TRIM_BACK, &err) == SM_ERR_INVALID, "$ inside");
    CHECK(sm_trim_set_add(&set, "", SM_TRIM_BACK, &err) == SM_ERR_INVALID && strstr(err.message, "empty"), "empty");
    CHECK(sm_trim_set_add(&set, "ACGT...", SM_TRIM_FRONT, &err) == SM_ERR_INVALID, "empty second part");
    CHECK(set.count == 0 && set.patterns.count == 0, "refused adapters left nothing");
    CHECK(sm_trim_set_add(&set, "ACGTAC", SM_TRIM_BACK, &err) == SM_OK, "plain");
    sm_compile_options co;
    sm_compile_options_init(&co);
    sm_db *db = NULL;
    CHECK(sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err) == SM_OK, "compile");
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.anchor = SM_ANCHOR_END;
    sm_trim_options to = {.set = &set};
    sm_trimmer *t = NULL;
    CHECK(sm_trimmer_new(db, &ro, &to, &t, &err) == SM_ERR_INVALID && !t, "anchor refused");
    sm_runner_options_init(&ro);
    CHECK(sm_trimmer_new(db, &ro, &to, &t, &err) == SM_OK, "trimmer");
    char path[256];
    snprintf(path, sizeof path, "%s/missing.fq", dir);
    CHECK(sm_trimmer_run(t, path, NULL, &err) != SM_OK && strstr(err.message, "missing.fq"), "missing file: %s",
          err.message);
    snprintf(path, sizeof path, "%s/text.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("hello\n", f);
    fclose(f);
    CHECK(sm_trimmer_run(t, path, NULL, &err) != SM_OK && err.message[0], "text refused: %s", err.message);
    sm_trimmer_free(t);
    sm_db_free(db);
    sm_trim_set_free(&set);
}

/* ------------------------------------------------ flawed and odd records */

/* What the reader makes of a FASTQ file: its records as sm_trim_record
   writes them uncut, concatenated in *out (NULL: not kept), and the message
   of the first failure ("" when none). Returns the records read. */
static size_t reader_view(const char *path, char **out, size_t *out_len, char *message) {
    sm_reader *r = NULL;
    sm_error err;
    size_t n = 0, at = 0;
    uint8_t *rec = NULL;
    size_t rec_len = 0, rec_cap = 0;
    message[0] = '\0';
    if (out) *out = NULL, *out_len = 0;
    if (sm_reader_open(path, SM_INPUT_AUTO, &r, &err) != SM_OK) {
        strcpy(message, err.message);
        return 0;
    }
    sm_reader_keep_raw(r);
    for (;;) {
        const char *name;
        const uint8_t *data;
        size_t len;
        int stable, got = sm_reader_next_record(r, &name, &err);
        if (got == 0) break;
        while (got > 0 && (got = sm_reader_read(r, &data, &len, &err)) > 0) {}
        if (got < 0 || sm_reader_record_raw(r, &data, &len, &stable, &err) < 0) {
            strcpy(message, err.message);
            break;
        }
        n++;
        if (!out || sm_trim_record(data, len, 0, 0, &rec, &rec_len, &rec_cap) != SM_OK) continue;
        *out = realloc(*out, at + rec_len);
        memcpy(*out + at, rec, rec_len);
        at += rec_len;
    }
    if (out) *out_len = at;
    free(rec);
    sm_reader_close(r);
    return n;
}

typedef struct {
    char *bytes;
    size_t len, records;
} gathered;

static int gather(void *ctx, const sm_trimmed_record *rec) {
    gathered *g = ctx;
    g->records++;
    for (unsigned m = 0; m < rec->mates; m++) {
        if (m == 1) continue; /* mate 1's bytes (a pair's mate 2 is checked by its message) */
        g->bytes = realloc(g->bytes, g->len + rec->len[m]);
        memcpy(g->bytes + g->len, rec->bytes[m], rec->len[m]);
        g->len += rec->len[m];
    }
    return 0;
}

/* A trimmer of set on `threads` threads (chunk_size 0: the default) whose
   records go to got; NULL with err set when it cannot be made. */
static sm_trimmer *gathering_trimmer(const sm_db *db, const sm_trim_set *set, unsigned threads, size_t chunk_size,
                                     gathered *got, sm_error *err) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk_size;
    sm_trim_options to = {.set = set, .ctx = got, .on_record = gather};
    sm_trimmer *t = NULL;
    return sm_trimmer_new(db, &ro, &to, &t, err) == SM_OK ? t : NULL;
}

/* The one 3' adapter (25 T's, forward strand) of the flawed-record tests:
   its set in *set and its database. */
static sm_db *poly_t_db(sm_trim_set *set) {
    memset(set, 0, sizeof *set);
    sm_error err;
    CHECK(sm_trim_set_add(set, "TTTTTTTTTTTTTTTTTTTTTTTTT", SM_TRIM_BACK, &err) == SM_OK, "adapter");
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.strands = SM_STRAND_FORWARD;
    sm_db *db = NULL;
    CHECK(sm_compile(set->patterns.items, set->patterns.count, &co, &db, &err) == SM_OK, "compile");
    return db;
}

/* Records the trimmer takes whole as four lines read as the reader reads
   them: a file of plain records with one flawed or odd record (at the
   start, near the end, in between; small and large chunks, 1 to 3
   threads, single reads and pairs) trims to the reader's records uncut (no
   adapter hits them) or fails with the reader's message. */
static void flawed_records(void) {
    static const char *const flaws[] = {
        "@r%d x\nACGTA!GTAC\n+\nIIIIIIIIII\n",   "@r%d x\nACGT GTACG\n+\nIIIIIIIIII\n",
        "@r%d x\nACGTACGTAC\n+\nIIII IIIII\n",   "@r%d x\nACGTACGTAC\n+\nIIII\x80IIIII\n",
        "@r%d x\nACGTACGTAC\n+r0\nIIIIIIIIII\n", "@r%d x\nACGTACGTAC\n+r%d\nIIIIIIIIII\n",
        "@r%d\001 x\nACGTACGTAC\n+\nIIIIIIIIII\n", "@r%d x\nACGTA\rCGTA\n+\nIIIII\rIIII\n",
        "@r%d x\nACGTA\nCGTAC\n+\nIIIIIIIIII\n", "@r%d x\nACGTACGTAC\n+\nIIIIIIIIII\n\n\n",
        "@r%d x\nacgt-.*ngt\n+\nIIIIIIIIII\n",   "@r%d x\n\n+\n\n",
        "@r%d x\n@CGTACGTAC\n+\nIIIIIIIIII\n",   "@r%d x\n+CGTACGTAC\n+\nIIIIIIIIII\n",
        "@r%d x\nACGTACGTAC\n+\nIIIIIIIII\n",    "@r%d x\nACGTACGTACGTACGTACGTA\n+\nIIIIIIIIIIIIIIIIIIIII\n@x",
        "@r%d x\nACGTACGTAC\n+\nIIII\nIIIII\n",   "@r%d x\nACGTACGTAC\n+\nIIII\n\nIIII\n",
        "@r%d x\nACGTACGTAC\n+\n",               "@r%d x\nACGTACGTAC\n+\nIIIIIIIIII",
    };
    enum { RECORDS = 300 };
    sm_trim_set set;
    sm_error err;
    sm_db *db = poly_t_db(&set);
    char p1[256], p2[256], good[256];
    snprintf(p1, sizeof p1, "%s/flawed_1.fq", dir);
    snprintf(p2, sizeof p2, "%s/flawed_2.fq", dir);
    snprintf(good, sizeof good, "%s/good_1.fq", dir);
    FILE *g = fopen(good, "w");
    for (int i = 0; i < RECORDS; i++) fprintf(g, "@r%d x\nACGTACGTAC\n+\nIIIIIIIIII\n", i);
    fclose(g);
    for (size_t f = 0; f < sizeof flaws / sizeof flaws[0]; f++)
        for (int place = 0; place < 4; place++) {
            int at = place == 0 ? 0 : place == 1 ? RECORDS - 1 : place == 2 ? 1 : (int)(37 + 41 * f) % RECORDS;
            /* the last two flaws are truncations: at the end only */
            if (f + 2 >= sizeof flaws / sizeof flaws[0] && at != RECORDS - 1) continue;
            FILE *o = fopen(p1, "w");
            for (int i = 0; i < RECORDS; i++) {
                if (i == at) fprintf(o, flaws[f], i, i);
                else fprintf(o, "@r%d x\nACGTACGTAC\n+\nIIIIIIIIII\n", i);
            }
            fclose(o);
            char want[sizeof err.message], want2[sizeof err.message];
            char *bytes;
            size_t len, count = reader_view(p1, &bytes, &len, want);
            (void)reader_view(p1, NULL, NULL, want2);
            for (int run = 0; run < 6; run++) {
                int paired = run >= 4;
                /* (a pair whose mate 2 holds a record more says so first) */
                if (paired && strstr(flaws[f], "@x")) continue;
                gathered got = {NULL, 0, 0};
                sm_trimmer *t = gathering_trimmer(db, &set, 1 + (unsigned)run % 3, run % 2 ? 16 : 0, &got, &err);
                if (!t) {
                    CHECK(0, "trimmer: %s", err.message);
                    continue;
                }
                /* a pair: the flawed file as mate 2 */
                int st = sm_trimmer_run(t, paired ? good : p1, paired ? p1 : NULL, &err);
                if (want[0]) {
                    CHECK(st != SM_OK && strcmp(err.message, want) == 0, "flaw %zu at %d, run %d: '%s', want '%s'", f,
                          at, run, st == SM_OK ? "(none)" : err.message, want);
                } else if (!paired) {
                    CHECK(st == SM_OK && got.records == count && got.len == len && memcmp(got.bytes, bytes, len) == 0,
                          "flaw %zu at %d, run %d: %zu records, want %zu; %s", f, at, run, got.records, count,
                          st == SM_OK ? "same status" : err.message);
                } else {
                    /* a pair's names differ where the flaw renames mate 2 */
                    CHECK(st == SM_OK ? count == RECORDS : strstr(err.message, "out of step") || count != RECORDS,
                          "flaw %zu at %d, run %d: %s", f, at, run, st == SM_OK ? "ok" : err.message);
                }
                free(got.bytes);
                sm_trimmer_free(t);
            }
            free(bytes);
        }
    /* mates out of step in the middle of a chunk */
    FILE *o = fopen(p2, "w");
    for (int i = 0; i < RECORDS; i++) fprintf(o, "@r%d x\nACGTACGTAC\n+\nIIIIIIIIII\n", i == 123 ? 999 : i);
    fclose(o);
    for (unsigned threads = 1; threads <= 3; threads++) {
        gathered got = {NULL, 0, 0};
        sm_trimmer *t = gathering_trimmer(db, &set, threads, 0, &got, &err);
        CHECK(t != NULL, "trimmer");
        int st = t ? sm_trimmer_run(t, good, p2, &err) : SM_ERR_INVALID;
        CHECK(st == SM_ERR_FORMAT && strstr(err.message, "record 124 is 'r123'") && strstr(err.message, "'r999'"),
              "out of step: %s", err.message);
        free(got.bytes);
        sm_trimmer_free(t);
    }
    sm_db_free(db);
    sm_trim_set_free(&set);
}

typedef struct {
    char *bytes[2];
    size_t len[2];
} gathered_mates;

static int gather_kept(void *ctx, const sm_trimmed_record *rec) {
    gathered_mates *g = ctx;
    for (unsigned m = 0; m < rec->mates && rec->kept; m++) {
        g->bytes[m] = realloc(g->bytes[m], g->len[m] + rec->len[m] + 1);
        memcpy(g->bytes[m] + g->len[m], rec->bytes[m], rec->len[m]);
        g->len[m] += rec->len[m];
    }
    return 0;
}

/* Runs set's trimmer on p1 (and p2) writing the kept reads to out (plain
   or gzip, per mate), with or without an on_record callback into got.
   Returns the run's status. */
static int run_to_files(const sm_db *db, const sm_trim_set *set, unsigned threads, size_t chunk_size, int discard,
                        const char *p1, const char *p2, char (*out)[300], gathered_mates *got) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk_size;
    sm_trim_options to = {.set = set, .discard = discard, .reader_threads = threads, .ctx = got,
                          .on_record = got ? gather_kept : NULL};
    sm_error err;
    for (int m = 0; m < (p2 ? 2 : 1); m++) to.out[m] = sm_record_file_open(out[m], &err);
    sm_trimmer *t = NULL;
    int st = sm_trimmer_new(db, &ro, &to, &t, &err);
    if (st == SM_OK) st = sm_trimmer_run(t, p1, p2, &err);
    CHECK(st == SM_OK, "run to files: %s", err.message);
    for (int m = 0; m < 2; m++)
        if (to.out[m]) CHECK(sm_record_file_close(to.out[m], 1, NULL, &err) == SM_OK, "close: %s", err.message);
    sm_trimmer_free(t);
    return st;
}

/* With no on_record, the workers hand the chunks on: the files hold the
   kept reads in input order, as the reading thread hands them to
   on_record (many small chunks and the default, 2 and 3 threads, single
   reads and pairs, plain and gzip outputs, reads dropped or not). */
static void written_by_workers(void) {
    enum { RECORDS = 3000 };
    adapter ad[1];
    memset(ad, 0, sizeof ad);
    ad[0].first = "AGATCGGAAGAGC";
    ad[0].kind = 1;
    static read_t reads[2][RECORDS];
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < RECORDS; i++) make_read(&reads[m][i], ad, 1);
    sm_trim_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    CHECK(sm_trim_set_add(&set, "AGATCGGAAGAGC", SM_TRIM_BACK, &err) == SM_OK, "adapter");
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.strands = SM_STRAND_FORWARD;
    sm_db *db = NULL;
    CHECK(sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err) == SM_OK, "compile");
    char p[2][256];
    for (int m = 0; m < 2; m++) {
        snprintf(p[m], sizeof p[m], "%s/w%d.fq", dir, m + 1);
        write_reads(p[m], reads[m], RECORDS, m + 1, 0, 0);
    }
    for (int run = 0; db && run < 16; run++) {
        int paired = run & 1, gz = (run >> 1) & 1, small = (run >> 2) & 1, discard = (run >> 3) & 1;
        const char *p2 = paired ? p[1] : NULL;
        char out[2][300];
        for (int m = 0; m < 2; m++) snprintf(out[m], sizeof out[m], "%s/wo%d.fq%s", dir, m + 1, gz ? ".gz" : "");
        gathered_mates want = {{NULL, NULL}, {0, 0}};
        int st = run_to_files(db, &set, 3, small ? 16 : 0, discard, p[0], p2, out, &want);
        for (unsigned threads = 2; st == SM_OK && threads <= 3; threads++) {
            if (run_to_files(db, &set, threads, small ? 16 : 0, discard, p[0], p2, out, NULL) != SM_OK) break;
            for (int m = 0; m < (paired ? 2 : 1); m++)
                CHECK(want.len[m] > 0 && file_holds(out[m], want.bytes[m], want.len[m]),
                      "run %d, %u threads: mate %d's file is not the kept reads in order", run, threads, m + 1);
        }
        free(want.bytes[0]);
        free(want.bytes[1]);
    }
    sm_db_free(db);
    sm_trim_set_free(&set);
}

/* A carriage return at each place of a file's first records: before a
   line end (a CRLF line, which the reader takes) or in place of a byte of
   a line (a flaw, or a CRLF line where it replaces a line's last); then a
   space, '!', 'N' and byte 0x80 in place of each byte; records
   of lengths that put the places on every side of the 64-byte words the
   trimmer finds line ends in. The trimmer gives the reader's records
   uncut, or its message. */
static void carriage_returns(void) {
    enum { RECORDS = 40 };
    sm_trim_set set;
    sm_error err;
    sm_db *db = poly_t_db(&set);
    char path[256], *plain = NULL;
    snprintf(path, sizeof path, "%s/cr.fq", dir);
    size_t len = 0, cap = 0;
    for (int i = 0; i < RECORDS; i++) {
        char rec[256];
        int n = 7 + (i * 13) % 50, k = snprintf(rec, sizeof rec, "@c%d x\n", i);
        for (int j = 0; j < n; j++) rec[k++] = "ACGT"[(i + j) % 4];
        k += snprintf(rec + k, sizeof rec - (size_t)k, "\n+\n");
        for (int j = 0; j < n; j++) rec[k++] = (char)('!' + (i + j) % 60);
        rec[k++] = '\n';
        if (len + (size_t)k > cap) plain = realloc(plain, cap = 2 * (len + (size_t)k));
        memcpy(plain + len, rec, (size_t)k);
        len += (size_t)k;
    }
    char *file = malloc(len + 1);
    static const char odd[] = {' ', '!', 'N', (char)0x80, 0};
    for (size_t at = 0; at < 300 && at < len; at++)
        for (int insert = 0; insert < 2 + (int)strlen(odd); insert++) {
            /* insert: a \r before the next line end at or after at */
            size_t n = len;
            if (insert == 1) {
                size_t nl = at;
                while (plain[nl] != '\n') nl++;
                if (nl != at) continue; /* once per line end */
                memcpy(file, plain, nl);
                file[nl] = '\r';
                memcpy(file + nl + 1, plain + nl, len - nl);
                n = len + 1;
            } else {
                /* (a lone \r for a line end: the reader reads on, the
                   rewrite refuses such a record) */
                if (plain[at] == '\n') continue;
                memcpy(file, plain, len);
                /* then another byte there: a flaw in a sequence or quality
                   line (either side of the 32-byte vectors), a name changed */
                file[at] = insert == 0 ? '\r' : odd[insert - 2];
            }
            FILE *o = fopen(path, "wb");
            fwrite(file, 1, n, o);
            fclose(o);
            char want[sizeof err.message];
            char *bytes;
            size_t blen, count = reader_view(path, &bytes, &blen, want);
            for (unsigned threads = 1; threads <= 2; threads++) {
                gathered got = {NULL, 0, 0};
                sm_trimmer *t = gathering_trimmer(db, &set, threads, 0, &got, &err);
                if (!t) {
                    CHECK(0, "trimmer: %s", err.message);
                    continue;
                }
                int st = sm_trimmer_run(t, path, NULL, &err);
                if (want[0])
                    CHECK(st != SM_OK && strcmp(err.message, want) == 0, "%d %s byte %zu, %u threads: '%s', want '%s'",
                          insert, insert == 1 ? "before" : "for", at, threads, st == SM_OK ? "(none)" : err.message,
                          want);
                else
                    CHECK(st == SM_OK && got.records == count && got.len == blen && memcmp(got.bytes, bytes, blen) == 0,
                          "%d %s byte %zu, %u threads: %zu records, want %zu; %s", insert,
                          insert == 1 ? "before" : "for", at, threads, got.records, count,
                          st == SM_OK ? "same status" : err.message);
                free(got.bytes);
                sm_trimmer_free(t);
            }
            free(bytes);
        }
    free(file);
    free(plain);
    sm_db_free(db);
    sm_trim_set_free(&set);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    int rounds = test_rounds(60);
    refusals();
    record_cuts();
    flawed_records();
    carriage_returns();
    written_by_workers();
    for (int round = 0; round < rounds && failures < 20; round++) run_round(round);
    /* (at full scale: a handful of sanitizer rounds may miss a kind) */
    CHECK(rounds < 30 || (cut_by_kind[1] > rounds && cut_by_kind[2] > 0 && cut_by_kind[3] > 0 && cut_partial > 0), "the rounds cut too few reads: 3' %ld, 5' %ld, linked %ld, partial 3' %ld",
          cut_by_kind[1], cut_by_kind[2], cut_by_kind[3], cut_partial);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) failures++;
    if (failures) fprintf(stderr, "test_trim_api: %d failures\n", failures);
    return failures ? 1 : 0;
}
