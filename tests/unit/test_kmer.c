/* K-mer table: scans agree with a naive search for every key however the
 * text is cut and whatever part of it is owned, counting with and without
 * visit counters gives the same counts, eligibility follows the rules, and
 * the validator rejects damaged sections without reading outside them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/kmer/kmer.h"
#include "testutil.h"

static tu_rng rng;

/* ------------------------------------------------------------ key sets */

#define MAX_KEYS 600

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
    for (size_t e = k; e <= n; e++) {
        for (size_t i = 0; i < ks->nkeys; i++) {
            int dup = 0;
            for (size_t j = 0; j < i && !dup; j++)
                dup = ks->keys[j].output == ks->keys[i].output && !memcmp(ks->keys[j].seq, ks->keys[i].seq, k);
            if (dup) continue;
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
    int rc = sm_kt_build(ks->keys, ks->nkeys, ks->fold, 0, &buf, &err);
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
        sm_kt_scan(section, NULL, state, text + at, len, pos0 + at, sink);
        at += len;
    }
    /* An empty call changes nothing. */
    sm_kt_scan(section, NULL, state, text, 0, pos0 + n, sink);
}

static void free_sink(sm_sink *s) {
    free(s->hits);
    free(s->counts);
    free(s->kt_visits);
    memset(s, 0, sizeof *s);
}

/* One key set against one text, every way. */
static void check_case(const key_set *ks, const uint8_t *section, const uint8_t *text, size_t n, const char *what) {
    uint64_t pos0 = tu_rng_chance(&rng, 50) ? 0 : tu_rng_below(&rng, 100000);
    for (int variant = 0; variant < 4; variant++) {
        uint64_t own_lo = pos0, own_hi = UINT64_MAX;
        if (variant >= 2 && n > 0) {
            own_lo = pos0 + tu_rng_below(&rng, (uint32_t)n);
            own_hi = own_lo + tu_rng_below(&rng, (uint32_t)n + 1);
        }
        int pieces = variant & 1;
        sm_sink want = {0}, got = {0};
        naive_hits(ks, text, n, pos0, own_lo, own_hi, &want);

        got.own_lo = own_lo, got.own_hi = own_hi;
        scan_pieces(section, text, n, pos0, &got, pieces);
        sm_sort_hits(got.hits, got.n);
        if (!tu_check(!got.failed && same_hits(&want, &got), "%s (k=%u, n=%zu, variant %d): %zu hits, want %zu", what,
                      ks->k, n, variant, got.n, want.n)) {
            free_sink(&want);
            free_sink(&got);
            return;
        }

        uint64_t *expect = calloc(ks->npatterns + 1, sizeof *expect);
        for (size_t i = 0; i < want.n; i++) expect[want.hits[i].pattern]++;
        for (int visits = 0; visits < 2; visits++) {
            sm_sink cs = {0};
            cs.own_lo = own_lo, cs.own_hi = own_hi;
            cs.counts = calloc(ks->npatterns + 1, sizeof *cs.counts);
            if (visits) cs.kt_visits = calloc(sm_kt_slots(section) + 1, sizeof *cs.kt_visits);
            scan_pieces(section, text, n, pos0, &cs, pieces);
            if (visits) {
                sm_kt_fold_visits(section, cs.kt_visits, cs.counts);
                int zero = 1;
                for (size_t s = 0; s < sm_kt_slots(section); s++) zero &= cs.kt_visits[s] == 0;
                tu_check(zero, "%s: fold left visits", what);
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
}

static void test_random(void) {
    static const struct {
        int fold;
        const char *symbols;
    } kinds[] = {{FOLD_DNA, "ACGT"}, {FOLD_DNA, "AC"},    {FOLD_DNA, "T"},        {FOLD_TEXT, "ACGT"},
                 {FOLD_TEXT, "acgt"}, {FOLD_TEXT, "xyz!"}, {FOLD_TEXT_ICASE, "ab"}, {FOLD_TEXT, "\x01\x80\xff"}};
    key_set *ks = malloc(sizeof *ks);
    uint8_t *text = malloc(6000);
    for (int round = 0; round < 60; round++) {
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
    tu_check(!sm_kt_eligible(&longk, 1, dna), "k = 13 eligible");
    tu_check(sm_kt_eligible(&maxk, 1, dna), "k = 12 not eligible");
    tu_check(!sm_kt_eligible(&zero, 1, dna), "k = 0 eligible");
    sm_ac_key spread[2] = {{(const uint8_t *)"ab", 2, 0}, {(const uint8_t *)"cd", 2, 2}};
    tu_check(sm_kt_eligible(spread, 2, text), "four symbols over two keys not eligible");
    sm_ac_key spread5[3] = {{(const uint8_t *)"ab", 2, 0}, {(const uint8_t *)"cd", 2, 2}, {(const uint8_t *)"ae", 2, 4}};
    tu_check(!sm_kt_eligible(spread5, 3, text), "five symbols over three keys eligible");

    sm_buf buf = {0};
    sm_error err;
    tu_check(sm_kt_build(&five, 1, dna, 0, &buf, &err) == SM_ERR_INVALID, "ineligible keys built");
    tu_check(sm_kt_build(keys, 3, dna, 100, &buf, &err) == SM_ERR_LIMIT, "size limit ignored");
    tu_check(buf.len == 0, "failed builds left bytes");
    tu_check(sm_kt_build(keys, 3, dna, 0, &buf, &err) == SM_OK, "build failed");
    tu_check(buf.len % 64 == 0, "section size %zu not a multiple of 64", buf.len);
    sm_buf_free(&buf);
}

/* Truncated and corrupted sections are rejected or, when they pass, scan
   without reading outside their tables. */
static void test_validate(void) {
    key_set *ks = malloc(sizeof *ks);
    uint8_t text[3000];
    for (int round = 0; round < 6; round++) {
        uint32_t k = round < 3 ? (uint32_t)(1 + round) : (uint32_t)(6 + round);
        make_keys(ks, FOLD_DNA, "ACGT", k, 40);
        size_t size;
        uint8_t *good = build(ks, &size);
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
                size_t at = tu_rng_chance(&rng, 60) ? tu_rng_below(&rng, 384) : tu_rng_below(&rng, (uint32_t)size);
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
                sink.kt_visits = calloc(sm_kt_slots(t), sizeof *sink.kt_visits);
                uint64_t state[8];
                sm_kt_state_reset(t, state);
                sm_kt_scan(t, NULL, state, text, sizeof text, 0, &sink);
                sm_kt_scan(t, NULL, state, text, 50, sizeof text, &sink);
                sm_kt_fold_visits(t, sink.kt_visits, sink.counts);
                sink.counts = (free(sink.counts), NULL);
                sm_kt_state_reset(t, state);
                sm_kt_scan(t, NULL, state, text, sizeof text, 0, &sink);
                free_sink(&sink);
            }
            free(t);
        }
        tu_check(accepted < 3000, "every damaged section accepted");
        sm_aligned_free(good);
    }
    free(ks);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0x6b6d6572ull));
    test_eligibility();
    test_dense();
    test_random();
    test_validate();
    return tu_summary("test_kmer");
}
