/* K-mer table: scans agree with a naive search for every key however the
 * text is cut and whatever part of it is owned, counting with and without
 * visit counters gives the same counts, eligibility follows the rules, and
 * the validator rejects damaged sections without reading outside them. Both
 * layouts: the direct table (k <= 12) and the hash set (13 <= k <= 32), the
 * latter also with a tiny filter and with every key on one home entry, and
 * through the public API (block scans, streams, the runner) against the
 * automaton. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/kmer/kmer_private.h"
#include "testutil.h"

static tu_rng rng;
/* How the scans run (the way the bitmap is tested) and the builds' tuning. */
static sm_kt_variant variant;
static sm_kt_tuning tuning;

/* way < 0: the CPU's choice. */
static void use_way(int way) { sm_kt_choose(sm_cpu(), way, &variant); }

/* ------------------------------------------------------------ key sets */

#define MAX_KEYS 7000

typedef struct {
    uint8_t fold[256];
    char symbols[5];       /* key symbols */
    uint32_t k;
    size_t nkeys;
    uint8_t storage[MAX_KEYS][SM_KT_MAX_K];
    sm_ac_key keys[MAX_KEYS];
    uint32_t npatterns;
} key_set;

enum { FOLD_DNA, FOLD_TEXT, FOLD_TEXT_ICASE };

static void make_fold(uint8_t fold[256], int kind) {
    for (int b = 0; b < 256; b++) fold[b] = (uint8_t)b;
    if (kind == FOLD_DNA) {
        for (int b = 'a'; b <= 'z'; b++) fold[b] = (uint8_t)(b - 32);
        fold['u'] = fold['U'] = 'T';
    } else if (kind == FOLD_TEXT_ICASE) {
        for (int b = 'A'; b <= 'Z'; b++) fold[b] = (uint8_t)(b + 32);
    }
}

static uint8_t complement(uint8_t c) {
    switch (c) {
    case 'A': return 'T';
    case 'T': return 'A';
    case 'C': return 'G';
    case 'G': return 'C';
    default: return c;
    }
}

/* Random keys of one length k: fresh ones, duplicates of earlier keys with
   another pattern, exact repeats of a (key, output) pair, and reverse
   complements with the reverse bit, the way the compiler hands them over. */
static void make_keys(key_set *ks, int fold_kind, const char *symbols, uint32_t k, size_t nfresh) {
    memset(ks, 0, sizeof *ks);
    make_fold(ks->fold, fold_kind);
    snprintf(ks->symbols, sizeof ks->symbols, "%s", symbols);
    ks->k = k;
    size_t nsym = strlen(symbols);
    uint32_t pattern = 0;
    while (ks->nkeys < nfresh && ks->nkeys + 2 < MAX_KEYS) {
        size_t i = ks->nkeys;
        unsigned kind = tu_rng_below(&rng, 10);
        if (i > 0 && kind == 0) {
            /* the same sequence as an earlier key, a new pattern */
            size_t j = tu_rng_below(&rng, (uint32_t)i);
            memcpy(ks->storage[i], ks->storage[j], k);
            ks->keys[i].output = sm_output_id(pattern++, 0);
        } else if (i > 0 && kind == 1) {
            /* an exact repeat of an earlier (key, output) pair */
            size_t j = tu_rng_below(&rng, (uint32_t)i);
            memcpy(ks->storage[i], ks->storage[j], k);
            ks->keys[i].output = ks->keys[j].output;
        } else {
            for (uint32_t j = 0; j < k; j++) ks->storage[i][j] = (uint8_t)symbols[tu_rng_below(&rng, (uint32_t)nsym)];
            ks->keys[i].output = sm_output_id(pattern++, 0);
        }
        ks->keys[i].seq = ks->storage[i];
        ks->keys[i].len = k;
        ks->nkeys++;
        if (fold_kind == FOLD_DNA && kind != 1 && tu_rng_chance(&rng, 50)) {
            /* the reverse strand of that pattern */
            size_t r = ks->nkeys;
            for (uint32_t j = 0; j < k; j++) ks->storage[r][j] = complement(ks->storage[i][k - 1 - j]);
            ks->keys[r].seq = ks->storage[r];
            ks->keys[r].len = k;
            ks->keys[r].output = ks->keys[i].output | 1u;
            ks->nkeys++;
        }
    }
    ks->npatterns = pattern;
}

/* Text over the key symbols with breaking bytes mixed in. */
static void make_text(const key_set *ks, int fold_kind, uint8_t *text, size_t n, unsigned break_percent) {
    static const char breakers[] = "NnXx-\n\0\xff";
    size_t nsym = strlen(ks->symbols);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)ks->symbols[tu_rng_below(&rng, (uint32_t)nsym)];
        unsigned r = tu_rng_below(&rng, 100);
        if (r < break_percent) {
            c = (uint8_t)breakers[tu_rng_below(&rng, (uint32_t)(sizeof breakers - 1))];
        } else if (r < break_percent + 10) {
            /* another spelling of the same symbol, or a byte that breaks */
            if (fold_kind == FOLD_DNA) {
                if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
                if (c == 't' && tu_rng_chance(&rng, 50)) c = 'u';
                if (c == 't' && tu_rng_chance(&rng, 50)) c = 'U';
            } else if (c >= 'a' && c <= 'z') {
                c = (uint8_t)(c - 32);
            } else if (c >= 'A' && c <= 'Z') {
                c = (uint8_t)(c + 32);
            }
        }
        text[i] = c;
    }
}

/* --------------------------------------------------------------- naive */

/* Every hit of every distinct (key, output) pair ending in text[0, n) at
   absolute position pos0 with an owned start. */
static void naive_hits(const key_set *ks, const uint8_t *text, size_t n, uint64_t pos0, uint64_t own_lo,
                       uint64_t own_hi, sm_sink *out) {
    uint32_t k = ks->k;
    uint8_t dups[MAX_KEYS] = {0};
    for (size_t i = 0; i < ks->nkeys; i++)
        for (size_t j = 0; j < i && !dups[i]; j++)
            dups[i] = ks->keys[j].output == ks->keys[i].output && !memcmp(ks->keys[j].seq, ks->keys[i].seq, k);
    for (size_t e = k; e <= n; e++) {
        for (size_t i = 0; i < ks->nkeys; i++) {
            if (dups[i]) continue;
            uint32_t j = 0;
            while (j < k && ks->fold[text[e - k + j]] == ks->keys[i].seq[j]) j++;
            if (j < k) continue;
            uint64_t start = pos0 + e - k;
            if (start < own_lo || start >= own_hi) continue;
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 256;
                out->hits = realloc(out->hits, out->cap * sizeof *out->hits);
                if (!out->hits) abort();
            }
            sm_rawhit *h = &out->hits[out->n++];
            memset(h, 0, sizeof *h);
            h->start = start;
            h->end = start + k;
            h->pattern = ks->keys[i].output >> 1;
            h->reverse = (uint8_t)(ks->keys[i].output & 1);
        }
    }
    sm_sort_hits(out->hits, out->n);
}

static int same_hits(const sm_sink *want, const sm_sink *got) {
    if (want->n != got->n) return 0;
    for (size_t i = 0; i < want->n; i++) {
        const sm_rawhit *a = &want->hits[i], *b = &got->hits[i];
        if (a->start != b->start || a->end != b->end || a->pattern != b->pattern || a->reverse != b->reverse ||
            b->errors != 0)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ sections */

static uint8_t *build(const key_set *ks, size_t *size) {
    sm_buf buf = {0};
    sm_error err;
    int rc = sm_kt_build(ks->keys, ks->nkeys, ks->fold, 0, &tuning, &buf, &err);
    if (!tu_check(rc == SM_OK, "build failed: %s", rc == SM_OK ? "" : err.message)) return NULL;
    uint8_t *s = sm_aligned_alloc(buf.len);
    if (!s) abort();
    memcpy(s, buf.data, buf.len);
    *size = buf.len;
    sm_buf_free(&buf);
    rc = sm_kt_validate(s, *size, ks->npatterns * 2, &err);
    tu_check(rc == SM_OK, "fresh section does not validate: %s", rc == SM_OK ? "" : err.message);
    return s;
}

/* Fills the stack below the caller with 0xff, so that scratch the scan does
   not write reads as bytes no code can have. (A hash-layout scan once rolled
   such bytes past a block's end into its code snapshots and lost hits.) */
static void *(*volatile fill_bytes)(void *, int, size_t) = memset; /* not elided */
__attribute__((noinline)) static void poison_stack(void) {
    uint8_t junk[80 * 1024];
    fill_bytes(junk, 0xff, sizeof junk);
}

/* Scans text in random pieces, state carried, from absolute position pos0. */
static void scan_pieces(const uint8_t *section, const uint8_t *text, size_t n, uint64_t pos0, sm_sink *sink,
                        int pieces) {
    uint64_t state[8];
    size_t words = sm_kt_state_words(section);
    tu_check(words >= 1 && words <= 8, "state words %zu", words);
    sm_kt_state_reset(section, state);
    size_t at = 0;
    while (at < n) {
        size_t len = n - at;
        if (pieces) {
            unsigned r = tu_rng_below(&rng, 4);
            size_t cap = r == 0 ? 3 : r == 1 ? 40 : r == 2 ? 300 : 3000;
            size_t pick = tu_rng_below(&rng, (uint32_t)cap + 1);
            if (pick < len) len = pick;
        }
        poison_stack();
        sm_kt_scan(section, &variant, state, text + at, len, pos0 + at, sink);
        at += len;
    }
    /* An empty call changes nothing. */
    sm_kt_scan(section, &variant, state, text, 0, pos0 + n, sink);
}

static void free_sink(sm_sink *s) {
    free(s->hits);
    free(s->counts);
    free(s->visits);
    memset(s, 0, sizeof *s);
}

/* One key set against one text, every way. */
static void check_case(const key_set *ks, const uint8_t *section, const uint8_t *text, size_t n, const char *what) {
    uint64_t pos0 = tu_rng_chance(&rng, 50) ? 0 : tu_rng_below(&rng, 100000);
    /* the definition's hits over the whole text, once: each variant keeps
       those that start in its owned range (hits are sorted by start) */
    sm_sink all = {0};
    naive_hits(ks, text, n, pos0, pos0, UINT64_MAX, &all);
    for (int variant = 0; variant < 4; variant++) {
        uint64_t own_lo = pos0, own_hi = UINT64_MAX;
        if (variant >= 2 && n > 0) {
            own_lo = pos0 + tu_rng_below(&rng, (uint32_t)n);
            own_hi = own_lo + tu_rng_below(&rng, (uint32_t)n + 1);
        }
        int pieces = variant & 1;
        sm_sink want = {0}, got = {0};
        for (size_t i = 0; i < all.n; i++) {
            if (all.hits[i].start < own_lo || all.hits[i].start >= own_hi) continue;
            if (want.n == want.cap) {
                want.cap = want.cap ? want.cap * 2 : 256;
                want.hits = realloc(want.hits, want.cap * sizeof *want.hits);
                if (!want.hits) abort();
            }
            want.hits[want.n++] = all.hits[i];
        }

        got.own_lo = own_lo, got.own_hi = own_hi;
        scan_pieces(section, text, n, pos0, &got, pieces);
        sm_sort_hits(got.hits, got.n);
        if (!tu_check(!got.failed && same_hits(&want, &got), "%s (k=%u, n=%zu, variant %d): %zu hits, want %zu", what,
                      ks->k, n, variant, got.n, want.n)) {
            free_sink(&want);
            free_sink(&got);
            free_sink(&all);
            return;
        }

        uint64_t *expect = calloc(ks->npatterns + 1, sizeof *expect);
        for (size_t i = 0; i < want.n; i++) expect[want.hits[i].pattern]++;
        for (int visits = 0; visits < 2; visits++) {
            sm_sink cs = {0};
            cs.own_lo = own_lo, cs.own_hi = own_hi;
            cs.counts = calloc(ks->npatterns + 1, sizeof *cs.counts);
            if (visits) cs.visits = calloc(sm_kt_visit_counters(section) + 1, sizeof *cs.visits);
            scan_pieces(section, text, n, pos0, &cs, pieces);
            if (visits) {
                sm_kt_fold_visits(section, cs.visits, cs.counts);
                /* A second fold adds nothing: the first zeroed every counter
                   it read (counters of codes that are no key may hold any
                   value and are never read). */
                uint64_t *again = calloc(ks->npatterns + 1, sizeof *again);
                sm_kt_fold_visits(section, cs.visits, again);
                int zero = 1;
                for (size_t p = 0; p <= ks->npatterns; p++) zero &= again[p] == 0;
                tu_check(zero, "%s: fold left visits", what);
                free(again);
            }
            tu_check(cs.n == 0, "%s: count mode stored hits", what);
            tu_check(!memcmp(cs.counts, expect, (ks->npatterns + 1) * sizeof *expect),
                     "%s (k=%u, n=%zu, variant %d): counts differ (visits %d)", what, ks->k, n, variant, visits);
            free_sink(&cs);
        }
        free(expect);
        free_sink(&want);
        free_sink(&got);
    }
    free_sink(&all);
}

static void test_random(int rounds) {
    static const struct {
        int fold;
        const char *symbols;
    } kinds[] = {{FOLD_DNA, "ACGT"}, {FOLD_DNA, "AC"},    {FOLD_DNA, "T"},        {FOLD_TEXT, "ACGT"},
                 {FOLD_TEXT, "acgt"}, {FOLD_TEXT, "xyz!"}, {FOLD_TEXT_ICASE, "ab"}, {FOLD_TEXT, "\x01\x80\xff"}};
    key_set *ks = malloc(sizeof *ks);
    uint8_t *text = malloc(6000);
    for (int round = 0; round < rounds; round++) {
        int kind = (int)tu_rng_below(&rng, sizeof kinds / sizeof kinds[0]);
        uint32_t k = 1 + (uint32_t)(round % SM_KT_MAX_K);
        size_t nfresh = 1 + tu_rng_below(&rng, round % 3 == 0 ? 300 : 30);
        make_keys(ks, kinds[kind].fold, kinds[kind].symbols, k, nfresh);
        tu_check(sm_kt_eligible(ks->keys, ks->nkeys, ks->fold), "round %d: keys not eligible", round);
        size_t size;
        uint8_t *section = build(ks, &size);
        if (!section) continue;
        char what[64];
        snprintf(what, sizeof what, "round %d (%s)", round, kinds[kind].symbols);
        for (int t = 0; t < 4; t++) {
            size_t n;
            switch (t) {
            case 0: n = tu_rng_below(&rng, k + 1); break;  /* shorter than k, or just k */
            case 1: n = tu_rng_below(&rng, 200); break;
            case 2: n = 1000 + tu_rng_below(&rng, 200); break;
            default: n = 2000 + tu_rng_below(&rng, 4000); break;
            }
            unsigned breaks = (unsigned)tu_rng_below(&rng, 4) * (unsigned)tu_rng_below(&rng, 4);
            make_text(ks, kinds[kind].fold, text, n, breaks);
            /* Plant keys so that long k have hits. */
            for (int p = 0; p < 20 && n >= k; p++) {
                size_t at = tu_rng_below(&rng, (uint32_t)(n - k + 1));
                memcpy(text + at, ks->keys[tu_rng_below(&rng, (uint32_t)ks->nkeys)].seq, k);
            }
            check_case(ks, section, text, n, what);
        }
        sm_aligned_free(section);
    }
    free(text);
    free(ks);
}

/* Count mode of short k has two ways: dense key sets count every code in a
   per-code histogram, sparse ones test the bitmap first. Both over long
   texts (many blocks) with breaks, lower case and every k up to 8, for sets
   on each side of the switch. */
static void test_count_ways(void) {
    key_set *ks = malloc(sizeof *ks);
    const size_t n = 6000;
    uint8_t *text = malloc(n);
    static const uint32_t ks_k[] = {4, 6, 7, 8, 8};
    static const size_t ks_fresh[] = {200, 500, 2000, 300, 4500};
    for (size_t c = 0; c < sizeof ks_k / sizeof ks_k[0]; c++) {
        make_keys(ks, FOLD_DNA, "ACGT", ks_k[c], ks_fresh[c]);
        size_t size;
        uint8_t *section = build(ks, &size);
        if (!tu_check(section != NULL, "count ways: k=%u does not build", ks_k[c])) continue;
        for (unsigned breaks = 0; breaks < 3; breaks += 2) {
            make_text(ks, FOLD_DNA, text, n, breaks);
            char what[64];
            snprintf(what, sizeof what, "count ways (k=%u, %zu keys, %u%% breaks)", ks_k[c], ks->nkeys, breaks);
            check_case(ks, section, text, n, what);
        }
        sm_aligned_free(section);
    }
    free(text);
    free(ks);
}

/* A long run of one symbol against its k-mer: a hit at every position, and
   dense hits across block borders with every way of cutting. */
static void test_dense(void) {
    key_set *ks = malloc(sizeof *ks);
    uint8_t *text = malloc(5000);
    for (uint32_t k = 1; k <= SM_KT_MAX_K; k += 3) {
        make_keys(ks, FOLD_DNA, "A", k, 1);
        size_t size;
        uint8_t *section = build(ks, &size);
        if (!section) continue;
        memset(text, 'A', 5000);
        check_case(ks, section, text, 5000, "dense");
        text[2500] = 'N';
        text[1023] = 'a';
        text[1024] = 'x';
        check_case(ks, section, text, 5000, "dense with breaks");
        sm_aligned_free(section);
    }
    free(text);
    free(ks);
}

static void test_eligibility(void) {
    uint8_t dna[256], text[256];
    make_fold(dna, FOLD_DNA);
    make_fold(text, FOLD_TEXT);
    const uint8_t *s8 = (const uint8_t *)"ACGTACGT", *s5 = (const uint8_t *)"ACGTN", *s13 = (const uint8_t *)"ACGTACGTACGTA";
    sm_ac_key keys[3] = {{s8, 8, 0}, {s8 + 1, 7, 2}, {s8, 8, 4}};
    tu_check(!sm_kt_eligible(keys, 0, dna), "no keys eligible");
    tu_check(sm_kt_eligible(keys, 1, dna), "one 8-mer not eligible");
    tu_check(!sm_kt_eligible(keys, 2, dna), "mixed lengths eligible");
    keys[1].len = 8;
    keys[1].seq = s8;
    tu_check(sm_kt_eligible(keys, 3, dna), "three 8-mers not eligible");
    sm_ac_key five = {s5, 5, 0};
    tu_check(!sm_kt_eligible(&five, 1, dna), "five symbols eligible");
    sm_ac_key four = {s5, 4, 0};
    tu_check(sm_kt_eligible(&four, 1, text), "four symbols not eligible");
    sm_ac_key longk = {s13, 13, 0}, maxk = {s13, 12, 0}, zero = {s13, 0, 0};
    tu_check(sm_kt_eligible(&longk, 1, dna), "k = 13 not eligible");
    tu_check(sm_kt_eligible(&maxk, 1, dna), "k = 12 not eligible");
    const uint8_t *s33 = (const uint8_t *)"ACGTACGTACGTACGTACGTACGTACGTACGTA";
    sm_ac_key k32 = {s33, 32, 0}, k33 = {s33, 33, 0};
    tu_check(sm_kt_eligible(&k32, 1, dna), "k = 32 not eligible");
    tu_check(!sm_kt_eligible(&k33, 1, dna), "k = 33 eligible");
    {
        /* a fifth symbol in the last (overlapping) word, in the first word, and
           spread over keys whose words each hold at most four */
        sm_ac_key a[2] = {{(const uint8_t *)"ACGTACGTACGTA", 13, 0}, {(const uint8_t *)"ACGTACGTACGTN", 13, 2}};
        tu_check(!sm_kt_eligible(a, 2, dna), "fifth symbol at the end eligible");
        a[1].seq = (const uint8_t *)"ACGTNCGTACGTA";
        tu_check(!sm_kt_eligible(a, 2, dna), "fifth symbol in the first word eligible");
        sm_ac_key c[2] = {{(const uint8_t *)"AAAAAAAACCCCCCCC", 16, 0}, {(const uint8_t *)"GGGGGGGGTTTTTTTT", 16, 2}};
        tu_check(sm_kt_eligible(c, 2, dna), "four symbols in 16-mers not eligible");
        c[1].seq = (const uint8_t *)"GGGGGGGGTTTTTTTN";
        tu_check(!sm_kt_eligible(c, 2, dna), "five symbols in 16-mers eligible");
    }
    {
        sm_buf hb = {0};
        sm_error herr;
        tu_check(sm_kt_build(&k33, 1, dna, 0, &tuning, &hb, &herr) == SM_ERR_INVALID, "k = 33 built");
        tu_check(sm_kt_build(&k32, 1, dna, 100, &tuning, &hb, &herr) == SM_ERR_LIMIT, "hash size limit ignored");
        tu_check(hb.len == 0, "failed hash builds left bytes");
        tu_check(sm_kt_build(&k32, 1, dna, 0, &tuning, &hb, &herr) == SM_OK, "k = 32 build failed");
        uint32_t magic;
        memcpy(&magic, hb.data, 4);
        tu_check(magic == SM_KH_MAGIC && hb.len % 64 == 0, "k = 32 not a hash section of whole lines");
        sm_buf_free(&hb);
        tu_check(sm_kt_build(&maxk, 1, dna, 0, &tuning, &hb, &herr) == SM_OK, "k = 12 build failed");
        memcpy(&magic, hb.data, 4);
        tu_check(magic == SM_KT_MAGIC, "k = 12 not the direct layout");
        sm_buf_free(&hb);
    }
    tu_check(!sm_kt_eligible(&zero, 1, dna), "k = 0 eligible");
    sm_ac_key spread[2] = {{(const uint8_t *)"ab", 2, 0}, {(const uint8_t *)"cd", 2, 2}};
    tu_check(sm_kt_eligible(spread, 2, text), "four symbols over two keys not eligible");
    sm_ac_key spread5[3] = {{(const uint8_t *)"ab", 2, 0}, {(const uint8_t *)"cd", 2, 2}, {(const uint8_t *)"ae", 2, 4}};
    tu_check(!sm_kt_eligible(spread5, 3, text), "five symbols over three keys eligible");

    sm_buf buf = {0};
    sm_error err;
    tu_check(sm_kt_build(&five, 1, dna, 0, &tuning, &buf, &err) == SM_ERR_INVALID, "ineligible keys built");
    tu_check(sm_kt_build(keys, 3, dna, 100, &tuning, &buf, &err) == SM_ERR_LIMIT, "size limit ignored");
    tu_check(buf.len == 0, "failed builds left bytes");
    tu_check(sm_kt_build(keys, 3, dna, 0, &tuning, &buf, &err) == SM_OK, "build failed");
    tu_check(buf.len % 64 == 0, "section size %zu not a multiple of 64", buf.len);
    sm_buf_free(&buf);
}

/* Truncated and corrupted sections are rejected or, when they pass, scan
   without reading outside their tables. */
static void test_validate(void) {
    key_set *ks = malloc(sizeof *ks);
    uint8_t text[3000];
    static const uint32_t hash_k[] = {13, 16, 21, 31, 32, 20, 14};
    for (int round = 0; round < 13; round++) {
        uint32_t k = round < 3 ? (uint32_t)(1 + round) : round < 6 ? (uint32_t)(6 + round) : hash_k[round - 6];
        make_keys(ks, FOLD_DNA, "ACGT", k, 40);
        size_t size;
        /* the last two hash rounds: every key on one home entry, a tiny filter */
        tuning = (sm_kt_tuning){round == 12 ? 3 : 0, round >= 11};
        uint8_t *good = build(ks, &size);
        tuning = (sm_kt_tuning){0, 0};
        if (!good) continue;
        sm_error err;
        uint32_t top = 0;
        for (size_t i = 0; i < ks->nkeys; i++)
            if (ks->keys[i].output > top) top = ks->keys[i].output;
        tu_check(sm_kt_validate(good, size, top, &err) != SM_OK, "output ids beyond n_outputs accepted");
        tu_check(sm_kt_validate(good, size, top + 1, &err) == SM_OK, "exact output count rejected");
        tu_check(sm_kt_validate(good, size, ks->npatterns * 2 + 10, &err) == SM_OK, "more outputs rejected");
        /* Every truncation, in an exact-size buffer. */
        size_t step = size > 4096 ? size / 512 : 1;
        for (size_t cut = 0; cut < size; cut += step) {
            uint8_t *t = malloc(cut ? cut : 1);
            memcpy(t, good, cut);
            int rc = sm_kt_validate(cut ? t : NULL, cut, ks->npatterns * 2, &err);
            if (!tu_check(rc != SM_OK, "truncated to %zu of %zu accepted", cut, size)) {
                free(t);
                break;
            }
            free(t);
        }
        /* Random damage. */
        make_text(ks, FOLD_DNA, text, sizeof text, 2);
        int accepted = 0;
        for (int d = 0; d < 3000; d++) {
            uint8_t *t = malloc(size);
            memcpy(t, good, size);
            int flips = 1 + (int)tu_rng_below(&rng, 3);
            for (int f = 0; f < flips; f++) {
                size_t head = k > SM_KT_DIRECT_MAX_K ? sizeof(sm_kh_header) : sizeof(sm_kt_header);
                size_t at = tu_rng_chance(&rng, 60) ? tu_rng_below(&rng, (uint32_t)head)
                                                    : tu_rng_below(&rng, (uint32_t)size);
                if (tu_rng_chance(&rng, 50))
                    t[at] ^= (uint8_t)(1u << tu_rng_below(&rng, 8));
                else
                    t[at] = (uint8_t)tu_rng_below(&rng, 256);
            }
            if (sm_kt_validate(t, size, ks->npatterns * 2, &err) == SM_OK) {
                accepted++;
                sm_sink sink = {0};
                sink.own_hi = UINT64_MAX;
                sink.counts = calloc(ks->npatterns, sizeof *sink.counts);
                sink.visits = calloc(sm_kt_visit_counters(t), sizeof *sink.visits);
                uint64_t state[8];
                sm_kt_state_reset(t, state);
                sm_kt_scan(t, &variant, state, text, sizeof text, 0, &sink);
                sm_kt_scan(t, &variant, state, text, 50, sizeof text, &sink);
                sm_kt_fold_visits(t, sink.visits, sink.counts);
                sink.counts = (free(sink.counts), NULL);
                sm_kt_state_reset(t, state);
                sm_kt_scan(t, &variant, state, text, sizeof text, 0, &sink);
                free_sink(&sink);
            }
            free(t);
        }
        tu_check(accepted < 3000, "every damaged section accepted");
        sm_aligned_free(good);
    }
    free(ks);
}

/* The hash layout for k = 13, 16, 21, 31, 32 over several alphabets, with
   the normal filter, a 64-byte filter (most positions pass it), every key on
   one home entry (long probe chains), and both; texts over several blocks. */
static void test_hash(void) {
    static const uint32_t ks_k[] = {13, 16, 21, 31, 32};
    static const struct {
        int fold;
        const char *symbols;
    } kinds[] = {{FOLD_DNA, "ACGT"}, {FOLD_DNA, "AC"}, {FOLD_TEXT, "acgt"}, {FOLD_TEXT_ICASE, "ab"},
                 {FOLD_TEXT, "xyz!"}, {FOLD_DNA, "A"}};
    key_set *ks = malloc(sizeof *ks);
    size_t cap = 20000;
    uint8_t *text = malloc(cap);
    for (int round = 0; round < (int)tu_scaled(40); round++) {
        uint32_t k = ks_k[round % 5];
        int knob = (round / 5) % 4; /* 0 normal, 1 tiny filter, 2 collide, 3 both */
        int kind = (int)tu_rng_below(&rng, sizeof kinds / sizeof kinds[0]);
        size_t nfresh = 1 + tu_rng_below(&rng, round % 2 ? 500 : 40);
        make_keys(ks, kinds[kind].fold, kinds[kind].symbols, k, nfresh);
        tuning = (sm_kt_tuning){knob & 1 ? 3 : 0, knob >= 2};
        size_t size;
        uint8_t *section = build(ks, &size);
        tuning = (sm_kt_tuning){0, 0};
        if (!section) continue;
        sm_kh_header h;
        memcpy(&h, section, sizeof h);
        tu_check(h.magic == SM_KH_MAGIC && h.k == k, "round %d: not a hash section", round);
        tu_check((knob & 1) ? h.filter_log2 == 3 : h.filter_log2 >= 3, "round %d: filter size %u", round,
                 h.filter_log2);
        tu_check((knob >= 2) == (h.hash_mul == 0), "round %d: collision knob ignored", round);
        tu_check(h.slots * 2 <= (1ull << h.cap_log2), "round %d: load above 1/2", round);
        char what[80];
        snprintf(what, sizeof what, "hash round %d (%s, tuning %d)", round, kinds[kind].symbols, knob);
        for (int t = 0; t < 4; t++) {
            size_t n;
            switch (t) {
            case 0: n = tu_rng_below(&rng, k + 2); break;
            case 1: n = 200 + tu_rng_below(&rng, 200); break;
            case 2: n = 4000 + tu_rng_below(&rng, 300); break; /* around one block */
            default: n = 9000 + tu_rng_below(&rng, 8000); break;
            }
            unsigned breaks = (unsigned)tu_rng_below(&rng, 4) * (unsigned)tu_rng_below(&rng, 3);
            make_text(ks, kinds[kind].fold, text, n, breaks);
            /* N runs of various lengths */
            for (int r = 0; r < 4 && n > 100 && t > 0; r++) {
                size_t at = tu_rng_below(&rng, (uint32_t)(n - 50)), l = tu_rng_below(&rng, 45);
                memset(text + at, 'N', l);
            }
            for (int p = 0; p < 40 && n >= k; p++) {
                size_t at = tu_rng_below(&rng, (uint32_t)(n - k + 1));
                memcpy(text + at, ks->keys[tu_rng_below(&rng, (uint32_t)ks->nkeys)].seq, k);
            }
            check_case(ks, section, text, n, what);
        }
        sm_aligned_free(section);
    }
    free(text);
    free(ks);
}

/* ------------------------------------------------------- public API */

static void collect_scan(const sm_db *db, const char *text, size_t n, tu_hits *out) {
    sm_scratch *scratch = NULL;
    if (!tu_check(sm_scratch_alloc(db, &scratch) == SM_OK, "scratch")) return;
    tu_check(sm_scan(db, scratch, text, n, tu_hits_collect, out) == SM_OK, "sm_scan failed");
    sm_scratch_free(scratch);
}

static void collect_stream(const sm_db *db, const char *text, size_t n, tu_hits *out) {
    sm_stream *st = NULL;
    if (!tu_check(sm_stream_open(db, &st) == SM_OK, "stream")) return;
    size_t at = 0;
    while (at < n) {
        size_t len = 1 + tu_rng_below(&rng, tu_rng_chance(&rng, 50) ? 40 : 9000);
        if (len > n - at) len = n - at;
        sm_stream_feed(st, text + at, len, tu_hits_collect, out);
        at += len;
    }
    sm_stream_end(st, tu_hits_collect, out);
    sm_stream_free(st);
}

/* Records cut from text, fed in random pieces; hits (or counts) out. */
static void collect_runner(const sm_db *db, const char *text, size_t n, unsigned threads, size_t chunk, int count_only,
                           tu_hits *out, uint64_t *counts, uint32_t npat) {
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.threads = threads;
    o.chunk_size = chunk;
    o.count_only = count_only;
    o.on_hit = tu_hits_collect;
    o.ctx = out;
    sm_runner *r = NULL;
    sm_error err;
    if (!tu_check(sm_runner_create(db, &o, &r, &err) == SM_OK, "runner: %s", err.message)) return;
    size_t at = 0;
    tu_rng split;
    tu_rng_seed(&split, 77); /* the same records for every database */
    while (at < n) {
        size_t rec = 1 + tu_rng_below(&split, 7000);
        if (rec > n - at) rec = n - at;
        sm_runner_begin_record(r);
        size_t done = 0;
        while (done < rec) {
            size_t len = 1 + tu_rng_below(&split, 1500);
            if (len > rec - done) len = rec - done;
            sm_runner_feed(r, text + at + done, len);
            done += len;
        }
        sm_runner_end_record(r);
        at += rec;
    }
    tu_check(sm_runner_flush(r) == SM_OK, "runner flush");
    memcpy(counts, sm_runner_counts(r), npat * sizeof *counts);
    sm_runner_free(r);
}

static void test_public(void) {
    enum { NPAT = 300 };
    static const uint32_t lens[] = {13, 16, 21, 31, 32, 12, 8};
    char *pats = malloc(NPAT * 32);
    sm_pattern p[NPAT];
    size_t n = 60000;
    char *text = malloc(n);
    for (int round = 0; round < 12; round++) {
        uint32_t k = lens[round % 7];
        int dna = round % 4 != 3;
        int both = dna && round % 2 == 0;
        const char *alpha = dna ? "ACGT" : (round % 8 == 3 ? "ab" : "xyz!");
        size_t np = 1 + tu_rng_below(&rng, NPAT);
        /* text: the alphabet, lower case, N runs */
        tu_random_from(&rng, text, n, alpha);
        for (size_t i = 0; i < n; i++) {
            unsigned r = tu_rng_below(&rng, 1000);
            if (dna && r < 30) text[i] = (char)(text[i] + 32);
            else if (dna && r < 32) text[i] = 'N';
            else if (r < 34) text[i] = '\n';
            else if (dna && r == 34) text[i] = 'u';
        }
        for (int run = 0; run < 30; run++) {
            size_t at = tu_rng_below(&rng, (uint32_t)(n - 100));
            memset(text + at, dna ? 'N' : '.', tu_rng_below(&rng, 60));
        }
        for (size_t i = 0; i < np; i++) {
            char *q = pats + i * 32;
            if (i > 0 && tu_rng_chance(&rng, 10)) {
                memcpy(q, pats + tu_rng_below(&rng, (uint32_t)i) * 32, k); /* the same key, another pattern */
            } else {
                size_t at = tu_rng_below(&rng, (uint32_t)(n - k));
                int ok = 1;
                for (uint32_t j = 0; j < k; j++) ok &= strchr(alpha, text[at + j] & ~(dna ? 32 : 0)) != NULL &&
                                                       text[at + j] != 'u' && text[at + j] != 'N';
                if (ok && tu_rng_chance(&rng, 70)) {
                    for (uint32_t j = 0; j < k; j++) q[j] = text[at + j];
                } else {
                    tu_random_from(&rng, q, k, alpha);
                }
            }
            p[i].name = NULL;
            p[i].seq = q;
            p[i].len = k;
        }
        sm_db *dbs[2] = {NULL, NULL};
        for (int e = 0; e < 2; e++) {
            sm_compile_options o;
            sm_compile_options_init(&o);
            o.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
            o.strands = both ? SM_STRAND_BOTH : SM_STRAND_FORWARD;
            o.engine = e ? SM_ENGINE_KMER : SM_ENGINE_AUTOMATON;
            sm_error err;
            tu_check(sm_compile(p, np, &o, &dbs[e], &err) == SM_OK, "round %d: compile (engine %d): %s", round, e,
                     err.message);
        }
        if (!dbs[0] || !dbs[1]) continue;
        /* Unnamed patterns are named by their sequence as given; one stored
           upper case as given shares its bytes with its name. */
        size_t want_strings = 0;
        for (size_t i = 0; i < np; i++) {
            const char *name = sm_db_pattern_name(dbs[1], (uint32_t)i);
            tu_check(name && strlen(name) == k && memcmp(name, p[i].seq, k) == 0, "round %d: name of pattern %zu",
                     round, i);
            int upper = 1;
            for (uint32_t j = 0; j < k; j++) upper &= !dna || !(p[i].seq[j] >= 'a' && p[i].seq[j] <= 'z');
            want_strings += (k + 1) * (upper ? 1 : 2);
        }
        size_t db_size = 0;
        const sm_db_header *dh = (const sm_db_header *)sm_db_bytes(dbs[1], &db_size);
        tu_check(dh->strings_size == want_strings, "round %d: %llu bytes of strings, not %zu", round,
                 (unsigned long long)dh->strings_size, want_strings);
        sm_db_info info;
        sm_db_get_info(dbs[1], &info);
        tu_check(sm_db_engine_patterns(dbs[1], SM_ENGINE_KMER) == np, "round %d: %u of %zu patterns on the k-mer table", round,
                 sm_db_engine_patterns(dbs[1], SM_ENGINE_KMER), np);
        char what[96];
        snprintf(what, sizeof what, "public round %d (k %u, %s, %s)", round, k, dna ? "dna" : "text",
                 both ? "both" : "forward");
        tu_hits want, got;
        tu_hits_init(&want);
        tu_hits_init(&got);
        collect_scan(dbs[0], text, n, &want);
        collect_scan(dbs[1], text, n, &got);
        tu_check(want.n > 0 || np < 3, "%s: no hits", what);
        tu_hits_equal(&want, &got, what);
        tu_hits_clear(&got);
        collect_stream(dbs[1], text, n, &got);
        tu_hits_equal(&want, &got, what);
        uint64_t cw[NPAT], cg[NPAT];
        sm_scratch *scratch = NULL;
        sm_scratch_alloc(dbs[0], &scratch);
        memset(cw, 0, sizeof cw);
        sm_count(dbs[0], scratch, text, n, cw);
        sm_scratch_free(scratch);
        sm_scratch_alloc(dbs[1], &scratch);
        memset(cg, 0, sizeof cg);
        sm_count(dbs[1], scratch, text, n, cg);
        sm_scratch_free(scratch);
        tu_check(!memcmp(cw, cg, np * sizeof *cw), "%s: sm_count differs", what);
        /* the runner: reference from the automaton on one thread */
        tu_hits rw;
        tu_hits_init(&rw);
        uint64_t rcw[NPAT], rcg[NPAT];
        collect_runner(dbs[0], text, n, 1, 0, 0, &rw, rcw, (uint32_t)np);
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            for (int count_only = 0; count_only < 2; count_only++) {
                size_t chunk = round % 3 == 0 ? 100 : round % 3 == 1 ? 777 : 4096;
                tu_hits_clear(&got);
                collect_runner(dbs[1], text, n, threads, chunk, count_only, &got, rcg, (uint32_t)np);
                if (!count_only) tu_hits_equal(&rw, &got, what);
                tu_check(!memcmp(rcw, rcg, np * sizeof *rcw), "%s: runner counts differ (threads %u, count only %d)",
                         what, threads, count_only);
            }
        }
        tu_hits_free(&rw);
        tu_hits_free(&want);
        tu_hits_free(&got);
        sm_db_free(dbs[0]);
        sm_db_free(dbs[1]);
    }
    free(text);
    free(pats);
}

/* Mixed lengths: the planner gives the largest group of one length to the
   k-mer table and the rest to the automaton (or Wu-Manber); the database,
   saved and loaded again, must give the automaton's hits and counts through
   every API and thread count. */
static void test_mixed_lengths(void) {
    enum { N8 = 1800, NOTHER = 40 };
    size_t n = 200000, np = 0;
    char *text = malloc(n), *pats = malloc((N8 + NOTHER) * 40);
    sm_pattern *p = malloc((N8 + NOTHER) * sizeof *p);
    tu_random_from(&rng, text, n, "ACGT");
    for (size_t i = 0; i < n; i++) {
        unsigned r = tu_rng_below(&rng, 1000);
        if (r < 20) text[i] = (char)(text[i] + 32);
        else if (r < 22) text[i] = 'N';
    }
    for (size_t i = 0; i < N8 + NOTHER; i++) {
        static const uint32_t other[] = {5, 9, 13, 20, 26, 31, 37};
        uint32_t k = i < N8 ? 8 : other[i % 7];
        char *q = pats + i * 40;
        size_t at = tu_rng_below(&rng, (uint32_t)(n - k));
        for (uint32_t j = 0; j < k; j++) q[j] = (char)(text[at + j] & ~32);
        for (uint32_t j = 0; j < k; j++)
            if (q[j] == 'N') q[j] = 'A';
        if (i == N8 || i == N8 + 8) q[2] = 'N'; /* IUPAC, a small expansion: the automaton */
        p[np].name = NULL;
        p[np].seq = q;
        p[np].len = k;
        np++;
    }
    sm_db *dbs[2] = {NULL, NULL};
    for (int e = 0; e < 2; e++) {
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.engine = e ? SM_ENGINE_AUTO : SM_ENGINE_AUTOMATON;
        sm_error err;
        tu_check(sm_compile(p, np, &o, &dbs[e], &err) == SM_OK, "mixed: compile (engine %d): %s", e, err.message);
    }
    if (dbs[0] && dbs[1]) {
        size_t size = 0;
        const void *bytes = sm_db_bytes(dbs[1], &size);
        sm_db *loaded = NULL;
        sm_error err;
        tu_check(sm_db_from_bytes(bytes, size, &loaded, &err) == SM_OK, "mixed: reload: %s", err.message);
        sm_db_free(dbs[1]);
        dbs[1] = loaded;
    }
    if (dbs[0] && dbs[1]) {
        sm_db_info info;
        sm_db_get_info(dbs[1], &info);
        tu_check(sm_db_engine_patterns(dbs[1], SM_ENGINE_KMER) == N8, "mixed: %u patterns on the k-mer table, not %d", sm_db_engine_patterns(dbs[1], SM_ENGINE_KMER), N8);
        tu_check(sm_db_engine_patterns(dbs[1], SM_ENGINE_AUTOMATON) + sm_db_engine_patterns(dbs[1], SM_ENGINE_WUMANBER) == NOTHER,
                 "mixed: %u on the automaton and %u on Wu-Manber, not %d in all", sm_db_engine_patterns(dbs[1], SM_ENGINE_AUTOMATON),
                 sm_db_engine_patterns(dbs[1], SM_ENGINE_WUMANBER), NOTHER);
        tu_hits want, got;
        tu_hits_init(&want);
        tu_hits_init(&got);
        collect_scan(dbs[0], text, n, &want);
        collect_scan(dbs[1], text, n, &got);
        tu_check(want.n > N8, "mixed: only %zu hits", want.n);
        tu_hits_equal(&want, &got, "mixed: sm_scan");
        tu_hits_clear(&got);
        collect_stream(dbs[1], text, n, &got);
        tu_hits_equal(&want, &got, "mixed: stream");
        uint64_t *cw = calloc(np, sizeof *cw), *cg = calloc(np, sizeof *cg);
        sm_scratch *scratch = NULL;
        sm_scratch_alloc(dbs[0], &scratch);
        sm_count(dbs[0], scratch, text, n, cw);
        sm_scratch_free(scratch);
        sm_scratch_alloc(dbs[1], &scratch);
        sm_count(dbs[1], scratch, text, n, cg);
        sm_scratch_free(scratch);
        tu_check(!memcmp(cw, cg, np * sizeof *cw), "mixed: sm_count differs");
        tu_hits rw;
        tu_hits_init(&rw);
        collect_runner(dbs[0], text, n, 1, 0, 0, &rw, cw, (uint32_t)np);
        for (unsigned threads = 1; threads <= 3; threads += 2)
            for (int count_only = 0; count_only < 2; count_only++) {
                tu_hits_clear(&got);
                collect_runner(dbs[1], text, n, threads, 3000, count_only, &got, cg, (uint32_t)np);
                if (!count_only) tu_hits_equal(&rw, &got, "mixed: runner");
                tu_check(!memcmp(cw, cg, np * sizeof *cw), "mixed: runner counts differ (threads %u, count only %d)",
                         threads, count_only);
            }
        tu_hits_free(&rw);
        tu_hits_free(&want);
        tu_hits_free(&got);
        free(cw);
        free(cg);
    }
    sm_db_free(dbs[0]);
    sm_db_free(dbs[1]);
    free(p);
    free(pats);
    free(text);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0x6b6d6572ull));
    use_way(-1);
    test_eligibility();
    /* The direct table's bitmap tested every way the CPU can run: byte
       loads, AVX2 gathers and the AVX-512 path (which steps down to gathers
       on CPUs without AVX-512, so on those way 2 repeats way 1). */
    use_way(0);
    test_dense();
    test_count_ways();
    test_random((int)tu_scaled(60));
    use_way(1);
    test_random((int)tu_scaled(30));
    use_way(2);
    test_dense();
    test_count_ways();
    test_random((int)tu_scaled(30));
    /* The hash layout's filter pass: scalar (ways 0 and 1) and AVX-512
       (way 2, where the CPU has it). */
    use_way(0);
    test_hash();
    use_way(2);
    if (variant.hash_wide) test_hash();
    use_way(-1);
    test_validate();
    test_public();
    test_mixed_lengths();
    return tu_summary("test_kmer");
}
