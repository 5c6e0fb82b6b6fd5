/* Wu-Manber engine: the section scan agrees with a naive search for keys of
 * mixed lengths (shortest 1 and up, shorter than the block too), with every
 * forced block, prefix and hash size (a tiny table makes every block
 * collide), however the text is cut and whatever part of it is owned; the
 * public API with --engine wumanber gives the same hits as the automaton
 * (block scans, counts, streams in random pieces, the runner with 1 and 3
 * threads and small chunks) on DNA (IUPAC expanded, both strands, lower
 * case) and text (case folding); the validator rejects damaged sections
 * without reading outside them. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "engines/engine.h"
#include "engines/wumanber/wm_private.h"
#include "oracle.h"
#include "testutil.h"

static tu_rng rng;
/* Scans take the SIMD prefilter where a section has one, unless a test turns it off. */
static int use_prefilter = 1;
static int scan_simd(void) { return sm_cpu()->avx2 ? 2 : sm_cpu()->ssse3 ? 1 : 0; }

/* ------------------------------------------------------------ key sets */

#define MAX_KEYS 400
#define MAX_LEN 40

typedef struct {
    uint8_t fold[256];
    size_t nkeys;
    uint8_t storage[MAX_KEYS][MAX_LEN];
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

/* Keys of lengths lo..hi over symbols: fresh ones, repeats of an earlier
   key under another output, exact (key, output) repeats, and keys that are
   prefixes or suffixes of others. */
static void make_keys(key_set *ks, int fold_kind, const char *symbols, uint32_t lo, uint32_t hi, size_t nkeys) {
    memset(ks, 0, sizeof *ks);
    make_fold(ks->fold, fold_kind);
    size_t nsym = strlen(symbols);
    uint32_t pattern = 0;
    while (ks->nkeys < nkeys && ks->nkeys < MAX_KEYS) {
        size_t i = ks->nkeys;
        uint32_t len = tu_rng_range(&rng, lo, hi);
        unsigned r = tu_rng_below(&rng, 10);
        if (i > 0 && r == 0) {
            /* the same key for another pattern */
            size_t j = tu_rng_below(&rng, (uint32_t)i);
            memcpy(ks->storage[i], ks->keys[j].seq, ks->keys[j].len);
            ks->keys[i].len = ks->keys[j].len;
            ks->keys[i].output = sm_output_id(pattern++, tu_rng_chance(&rng, 50));
        } else if (i > 0 && r == 1) {
            /* an exact repeat of a (key, output) pair */
            size_t j = tu_rng_below(&rng, (uint32_t)i);
            memcpy(ks->storage[i], ks->keys[j].seq, ks->keys[j].len);
            ks->keys[i].len = ks->keys[j].len;
            ks->keys[i].output = ks->keys[j].output;
        } else if (i > 0 && r == 2) {
            /* a prefix or suffix of an earlier key (when long enough) */
            size_t j = tu_rng_below(&rng, (uint32_t)i);
            uint32_t l = ks->keys[j].len;
            uint32_t cut = l > lo ? tu_rng_range(&rng, lo, l) : l;
            memcpy(ks->storage[i], ks->keys[j].seq + (tu_rng_chance(&rng, 50) ? 0 : l - cut), cut);
            ks->keys[i].len = cut;
            ks->keys[i].output = sm_output_id(pattern++, 0);
        } else {
            for (uint32_t j = 0; j < len; j++) ks->storage[i][j] = (uint8_t)symbols[tu_rng_below(&rng, (uint32_t)nsym)];
            ks->keys[i].len = len;
            ks->keys[i].output = sm_output_id(pattern++, tu_rng_chance(&rng, 30));
        }
        ks->keys[i].seq = ks->storage[i];
        ks->nkeys++;
    }
    ks->npatterns = pattern + 1;
}

/* Text over the key symbols, some bytes in the other case (folded by the
   scan), some foreign bytes, and pasted keys. */
static void make_text(const key_set *ks, int fold_kind, const char *symbols, uint8_t *text, size_t n) {
    size_t nsym = strlen(symbols);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)symbols[tu_rng_below(&rng, (uint32_t)nsym)];
        if (fold_kind != FOLD_TEXT && tu_rng_chance(&rng, 10)) {
            if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
            else if (c >= 'a' && c <= 'z') c = (uint8_t)(c - 32);
            if (fold_kind == FOLD_DNA && c == 't' && tu_rng_chance(&rng, 50)) c = 'u';
        }
        if (tu_rng_chance(&rng, 2)) c = (uint8_t)"N#\n\0\xff"[tu_rng_below(&rng, 5)];
        text[i] = c;
    }
    for (unsigned paste = 0; paste < n / 16 && ks->nkeys; paste++) {
        const sm_ac_key *k = &ks->keys[tu_rng_below(&rng, (uint32_t)ks->nkeys)];
        if (k->len > n) continue;
        size_t at = tu_rng_below(&rng, (uint32_t)(n - k->len + 1));
        memcpy(text + at, k->seq, k->len);
    }
    /* keys at the very start and end */
    if (ks->nkeys && ks->keys[0].len <= n) memcpy(text, ks->keys[0].seq, ks->keys[0].len);
    if (ks->nkeys && ks->keys[ks->nkeys - 1].len <= n)
        memcpy(text + n - ks->keys[ks->nkeys - 1].len, ks->keys[ks->nkeys - 1].seq, ks->keys[ks->nkeys - 1].len);
}

static void sink_push(sm_sink *out, uint64_t start, uint64_t end, uint32_t output) {
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 256;
        out->hits = realloc(out->hits, out->cap * sizeof *out->hits);
        if (!out->hits) abort();
    }
    sm_rawhit *h = &out->hits[out->n++];
    memset(h, 0, sizeof *h);
    h->start = start;
    h->end = end;
    h->pattern = output >> 1;
    h->reverse = (uint8_t)(output & 1);
}

/* Every hit of every distinct (key, output) pair in text[0, n) at absolute
   position pos0 with an owned start, sorted. */
static void naive_hits(const key_set *ks, const uint8_t *text, size_t n, uint64_t pos0, uint64_t own_lo,
                       uint64_t own_hi, sm_sink *out) {
    for (size_t i = 0; i < ks->nkeys; i++) {
        const sm_ac_key *k = &ks->keys[i];
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = ks->keys[j].output == k->output && ks->keys[j].len == k->len && !memcmp(ks->keys[j].seq, k->seq, k->len);
        if (dup) continue;
        for (size_t s = 0; s + k->len <= n; s++) {
            uint32_t j = 0;
            while (j < k->len && ks->fold[text[s + j]] == k->seq[j]) j++;
            if (j < k->len) continue;
            if (pos0 + s < own_lo || pos0 + s >= own_hi) continue;
            sink_push(out, pos0 + s, pos0 + s + k->len, k->output);
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

static uint8_t *build(const key_set *ks, const sm_wm_params *p, size_t *size) {
    sm_buf buf = {0};
    sm_error err;
    int rc = sm_wm_build(ks->keys, ks->nkeys, ks->fold, p, 0, &buf, &err);
    if (!tu_check(rc == SM_OK, "build failed: %s", rc == SM_OK ? "" : err.message)) {
        sm_buf_free(&buf);
        return NULL;
    }
    uint8_t *s = sm_aligned_alloc(buf.len);
    if (!s) abort();
    memcpy(s, buf.data, buf.len);
    *size = buf.len;
    sm_buf_free(&buf);
    rc = sm_wm_validate(s, *size, ks->npatterns * 2, &err);
    tu_check(rc == SM_OK, "fresh section does not validate: %s", rc == SM_OK ? "" : err.message);
    return s;
}

/* Scans text in random pieces (or whole), state carried, from pos0. */
static void scan_pieces(const uint8_t *section, const uint8_t *text, size_t n, uint64_t pos0, sm_sink *sink,
                        int pieces) {
    size_t words = sm_wm_state_words(section);
    uint64_t *state = calloc(words, sizeof *state);
    if (!state) abort();
    sm_wm_state_reset(section, state);
    size_t at = 0;
    while (at < n) {
        size_t len = n - at;
        if (pieces) {
            unsigned r = tu_rng_below(&rng, 4);
            size_t cap = r == 0 ? 2 : r == 1 ? 10 : r == 2 ? 50 : 700;
            size_t pick = tu_rng_below(&rng, (uint32_t)cap + 1);
            if (pick < len) len = pick;
        }
        sm_wm_scan(section, state, text + at, len, pos0 + at, sink, scan_simd(), use_prefilter);
        at += len;
    }
    sm_wm_scan(section, state, text, 0, pos0 + n, sink, scan_simd(), use_prefilter); /* an empty call changes nothing */
    free(state);
}

static void free_sink(sm_sink *s) {
    free(s->hits);
    free(s->counts);
    memset(s, 0, sizeof *s);
}

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
        int ok = tu_check(!got.failed && same_hits(&want, &got), "%s (n=%zu, variant %d): %zu hits, want %zu", what, n,
                          variant, got.n, want.n);
        if (ok) {
            sm_sink cs = {0};
            cs.own_lo = own_lo, cs.own_hi = own_hi;
            cs.counts = calloc(ks->npatterns + 1, sizeof *cs.counts);
            uint64_t *expect = calloc(ks->npatterns + 1, sizeof *expect);
            for (size_t i = 0; i < want.n; i++) expect[want.hits[i].pattern]++;
            scan_pieces(section, text, n, pos0, &cs, pieces);
            tu_check(cs.n == 0 && !memcmp(cs.counts, expect, (ks->npatterns + 1) * sizeof *expect),
                     "%s (n=%zu, variant %d): counts differ", what, n, variant);
            free(expect);
            free_sink(&cs);
        }
        free_sink(&want);
        free_sink(&got);
        if (!ok) return;
    }
}

/* ------------------------------------------------------- section tests */

static void test_random_sections(void) {
    static const struct {
        int fold;
        const char *key_symbols, *text_symbols;
    } kinds[] = {
        {FOLD_DNA, "ACGT", "ACGTacgtN"},
        {FOLD_DNA, "AC", "ACGTac"},
        {FOLD_TEXT, "abcdefghij klmnop", "abcdefghij klmnopABC"},
        {FOLD_TEXT_ICASE, "abcdefgh", "abcdefghABCDEFGH"},
        {FOLD_TEXT, "ab", "abc"},
    };
    uint8_t text[3000];
    unsigned rounds = tu_scaled(120), prefiltered = 0;
    for (unsigned round = 0; round < rounds && tu_failures() < 10; round++) {
        unsigned kind = round % (sizeof kinds / sizeof kinds[0]);
        key_set *ks = malloc(sizeof *ks);
        uint32_t lo = tu_rng_range(&rng, 1, 12), hi = lo + tu_rng_below(&rng, tu_rng_chance(&rng, 50) ? 4 : 28);
        if (hi > MAX_LEN) hi = MAX_LEN;
        size_t nkeys = tu_rng_chance(&rng, 30) ? tu_rng_range(&rng, 1, 5) : tu_rng_range(&rng, 5, MAX_KEYS);
        make_keys(ks, kinds[kind].fold, kinds[kind].key_symbols, lo, hi, nkeys);
        size_t n = tu_rng_chance(&rng, 20) ? tu_rng_below(&rng, 30) : tu_rng_range(&rng, 30, sizeof text);
        make_text(ks, kinds[kind].fold, kinds[kind].text_symbols, text, n);
        /* automatic parameters, then forced ones */
        for (int forced = 0; forced < 3; forced++) {
            sm_wm_params p = {0, 0, 0};
            uint32_t m = UINT32_MAX;
            for (size_t i = 0; i < ks->nkeys; i++)
                if (ks->keys[i].len < m) m = ks->keys[i].len;
            if (forced == 1) {
                p.block = tu_rng_range(&rng, 1, m < 12 ? m : 12); /* 12 x 5 bits at most */
                p.prefix = tu_rng_range(&rng, 1, m < 4 ? m : 4);
                p.hash_bits = tu_rng_range(&rng, 1, 3); /* a tiny table: collisions everywhere */
            } else if (forced == 2) {
                p.block = m < 3 ? m : 3; /* the paper's setting */
                p.prefix = m < 2 ? m : 2;
                p.hash_bits = tu_rng_range(&rng, 4, 12);
            }
            size_t size = 0;
            uint8_t *sec = build(ks, &p, &size);
            if (!sec) break;
            char what[96];
            uint32_t B, Bp, hb, sm;
            sm_wm_describe(sec, &B, &Bp, &hb, &sm);
            snprintf(what, sizeof what, "kind %u keys %zu len %u..%u B %u B' %u h %u", kind, ks->nkeys, lo, hi, B, Bp,
                     hb);
            tu_check(B >= 1 && B <= sm && Bp >= 1 && Bp <= sm && sm == m, "%s: parameters", what);
            check_case(ks, sec, text, n, what);
            if (sm_wm_has_prefilter(sec)) {
                /* the same section scanned by the SHIFT loop */
                prefiltered++;
                use_prefilter = 0;
                check_case(ks, sec, text, n, what);
                use_prefilter = 1;
            }
            sm_aligned_free(sec);
        }
        free(ks);
    }
    /* Up to 16 keys of 3 or more, not all nucleotides, get the prefilter. */
    tu_check(prefiltered > rounds / 20, "only %u of %u rounds had a prefiltered section", prefiltered, rounds);
}

/* One key of 8 to 40 bytes: the scan compares three anchor bytes 16 or 32
   windows at a time (the section's single fields) where some key byte has
   no more than two bytes folding to it; the same hits as the naive search for every fold, text
   length (around the vector widths too), piece and owned part, and the
   SHIFT loop where the fields are absent. A section whose anchors are not
   the key's is refused (with single cleared it is the SHIFT loop's). */
static void test_single_key(void) {
    static const struct {
        int fold;
        const char *key_symbols, *text_symbols;
    } kinds[] = {
        {FOLD_DNA, "ACG", "ACGTacgtN"},
        {FOLD_DNA, "ACGT", "ACGTacgtNuU"},
        {FOLD_DNA, "TTTTTTTTTA", "ACGTacgtNuU"},
        {FOLD_TEXT, "abcdefghij klmnop", "abcdefghij klmnopABC"},
        {FOLD_TEXT_ICASE, "abcdefgh", "abcdefghABCDEFGH"},
        {FOLD_TEXT, "ab", "abc"},
    };
    uint8_t text[3000];
    unsigned rounds = tu_scaled(300), single = 0;
    for (unsigned round = 0; round < rounds && tu_failures() < 10; round++) {
        unsigned kind = round % (sizeof kinds / sizeof kinds[0]);
        key_set *ks = malloc(sizeof *ks);
        uint32_t len = tu_rng_range(&rng, 8, MAX_LEN);
        make_keys(ks, kinds[kind].fold, kinds[kind].key_symbols, len, len, 1);
        unsigned r = tu_rng_below(&rng, 3);
        size_t n = r == 0 ? tu_rng_below(&rng, 2 * len + 70) : r == 1 ? tu_rng_range(&rng, len + 10, len + 40)
                                                                     : tu_rng_below(&rng, sizeof text);
        make_text(ks, kinds[kind].fold, kinds[kind].text_symbols, text, n);
        size_t size = 0;
        sm_wm_params p = {0, 0, 0};
        uint8_t *sec = build(ks, &p, &size);
        if (!sec) {
            free(ks);
            break;
        }
        sm_wm_header h;
        memcpy(&h, sec, sizeof h);
        char what[96];
        snprintf(what, sizeof what, "one key, kind %u, len %u, single %u", kind, len, h.single);
        /* the fields are there exactly when some key byte has one or two text bytes */
        int want = 0;
        const uint8_t *key = ks->keys[0].seq;
        for (uint32_t j = 0; j < len; j++) {
            uint32_t count = 0;
            for (int b = 0; b < 256; b++) count += ks->fold[b] == key[j];
            if (count >= 1 && count <= 2) want = 1;
        }
        tu_check(h.single == want, "%s: single %u, want %d", what, h.single, want);
        single += h.single;
        check_case(ks, sec, text, n, what);
        if (h.single) {
            /* damaged anchors: refused */
            sm_error err;
            for (size_t b = offsetof(sm_wm_header, single); b < offsetof(sm_wm_header, reserved); b++) {
                uint8_t *copy = sm_aligned_alloc(size);
                if (!copy) abort();
                memcpy(copy, sec, size);
                copy[b] ^= (uint8_t)(1u << tu_rng_below(&rng, 8));
                /* (single 0: the fields are not used, the SHIFT loop scans) */
                if (sm_wm_validate(copy, size, ks->npatterns * 2, &err) == SM_OK) {
                    tu_check(b == offsetof(sm_wm_header, single) && copy[b] == 0, "%s: byte %zu flipped, taken", what,
                             b);
                    check_case(ks, copy, text, n, what);
                }
                sm_aligned_free(copy);
            }
        }
        sm_aligned_free(sec);
        free(ks);
    }
    tu_check(single > rounds / 4, "only %u of %u one-key sections had anchors", single, rounds);
}

/* A damaged prefilter is rejected or loses no hit: every bit of its masks
   and buckets flipped in turn, then the section validated and, if taken,
   scanned against the naive search over a text full of the keys. */
static void test_validate_prefilter(void) {
    key_set *ks = malloc(sizeof *ks);
    make_keys(ks, FOLD_TEXT_ICASE, "abcdefghijklmnop", 3, 8, 10);
    size_t size = 0;
    uint8_t *good = build(ks, NULL, &size);
    if (!tu_check(good && sm_wm_has_prefilter(good), "10 text keys: no prefilter")) {
        if (good) sm_aligned_free(good);
        free(ks);
        return;
    }
    uint32_t outputs = ks->npatterns * 2;
    uint8_t text[700];
    make_text(ks, FOLD_TEXT_ICASE, "abcdefghijklmnopABCDEFGHIJKLMNOP", text, sizeof text);
    for (size_t p = 0; p + 8 < sizeof text; p += 23) {
        const sm_ac_key *k = &ks->keys[tu_rng_below(&rng, (uint32_t)ks->nkeys)];
        if (p + k->len <= sizeof text) memcpy(text + p, k->seq, k->len);
    }
    sm_sink want = {0};
    naive_hits(ks, text, sizeof text, 0, 0, UINT64_MAX, &want);
    uint8_t *bad = sm_aligned_alloc(size);
    const sm_wm_header *h = (const sm_wm_header *)good;
    unsigned rejected = 0, taken = 0;
    for (size_t off = 0; off < SM_WM_PREFILTER_SIZE; off++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, good, size);
            bad[h->prefilter_off + off] ^= (uint8_t)(1u << bit);
            if (sm_wm_validate(bad, size, outputs, NULL) != SM_OK) {
                rejected++;
                continue;
            }
            taken++;
            sm_sink got = {0};
            got.own_hi = UINT64_MAX;
            scan_pieces(bad, text, sizeof text, 0, &got, bit & 1);
            sm_sort_hits(got.hits, got.n);
            tu_check(same_hits(&want, &got), "prefilter byte %zu bit %d: accepted, %zu hits, want %zu", off, bit,
                     got.n, want.n);
            free_sink(&got);
        }
    tu_check(rejected > 0 && taken > 0, "prefilter flips: %u rejected, %u taken", rejected, taken);
    free_sink(&want);
    sm_aligned_free(bad);
    sm_aligned_free(good);
    free(ks);
}

/* The automatic block length grows with the key set and shrinks with the
   alphabet's reach: DNA needs longer blocks than text. */
static void test_parameters(void) {
    key_set *ks = malloc(sizeof *ks);
    uint8_t *sec;
    size_t size;
    uint32_t B_dna, B_text, B, Bp, hb, m;
    make_keys(ks, FOLD_DNA, "ACGT", 30, 30, 300);
    sec = build(ks, NULL, &size);
    if (!sec) goto done;
    sm_wm_describe(sec, &B_dna, &Bp, &hb, &m);
    sm_aligned_free(sec);
    make_keys(ks, FOLD_TEXT, "abcdefghijklmnopqrstuvwxyz", 30, 30, 300);
    sec = build(ks, NULL, &size);
    if (!sec) goto done;
    sm_wm_describe(sec, &B_text, &Bp, &hb, &m);
    sm_aligned_free(sec);
    tu_check(B_dna > B_text, "block for DNA (%u) longer than for text (%u)", B_dna, B_text);
    /* keys shorter than the block the rule asks for: B is the shortest length */
    make_keys(ks, FOLD_DNA, "ACGT", 2, 20, 300);
    ks->storage[0][0] = 'G';
    ks->keys[0].len = 1;
    sec = build(ks, NULL, &size);
    if (!sec) goto done;
    sm_wm_describe(sec, &B, &Bp, &hb, &m);
    tu_check(B == 1 && Bp == 1 && m == 1, "one-symbol key: B %u B' %u m %u", B, Bp, m);
    sm_aligned_free(sec);
    /* bad forced parameters are refused */
    make_keys(ks, FOLD_TEXT, "abc", 3, 5, 10);
    sm_buf buf = {0};
    sm_wm_params p = {4, 2, 8};
    tu_check(sm_wm_build(ks->keys, ks->nkeys, ks->fold, &p, 0, &buf, NULL) == SM_ERR_INVALID, "block > shortest");
    p.block = 2, p.hash_bits = 21;
    tu_check(sm_wm_build(ks->keys, ks->nkeys, ks->fold, &p, 0, &buf, NULL) == SM_ERR_INVALID, "21 hash bits");
    p.hash_bits = 8;
    tu_check(sm_wm_build(ks->keys, ks->nkeys, ks->fold, &p, 64, &buf, NULL) == SM_ERR_LIMIT, "memory limit");
    sm_buf_free(&buf);
done:
    free(ks);
}

/* Damaged sections: every header field and table checked; random flips
   either rejected or harmless to a scan; never a read outside (the copy
   has exactly the section's size, so a sanitizer would see one). */
static void test_validate(void) {
    key_set *ks = malloc(sizeof *ks);
    make_keys(ks, FOLD_TEXT, "abcdef", 3, 9, 60);
    sm_wm_params p = {2, 2, 6};
    size_t size = 0;
    uint8_t *good = build(ks, &p, &size);
    if (!good) {
        free(ks);
        return;
    }
    uint32_t outputs = ks->npatterns * 2;
    uint8_t *bad = sm_aligned_alloc(size);
    const sm_wm_header *h = (const sm_wm_header *)good;
    /* Every header field (each 4-byte word up to the byte maps), changed. */
    size_t fields_end = offsetof(sm_wm_header, reserved);
    for (size_t off = 0; off < fields_end; off += 4) {
        for (int how = 0; how < 3; how++) {
            memcpy(bad, good, size);
            uint32_t v;
            memcpy(&v, bad + off, 4);
            uint32_t nv = how == 0 ? v + 1 : how == 1 ? v - 1 : v ^ 0x80000000u;
            memcpy(bad + off, &nv, 4);
            int rc = sm_wm_validate(bad, size, outputs, NULL);
            /* the high halves of the 64-bit fields and direct/prefix changes
               that stay consistent are the only ones allowed through */
            if (rc == SM_OK) {
                sm_sink sink = {0};
                sink.own_hi = UINT64_MAX;
                uint8_t text[500];
                make_text(ks, FOLD_TEXT, "abcdefg", text, sizeof text);
                scan_pieces(bad, text, sizeof text, 0, &sink, 1);
                free_sink(&sink);
            }
            /* fields a scan relies on must be exactly right; others (the
               symbol count, the longest key, the 64-bit sizes) may change
               while the scan stays inside, which the scan above checks */
            int must_reject = off == offsetof(sm_wm_header, magic) || off == offsetof(sm_wm_header, block) ||
                              off == offsetof(sm_wm_header, prefix) || off == offsetof(sm_wm_header, shortest) ||
                              off == offsetof(sm_wm_header, bits) || off == offsetof(sm_wm_header, hash_bits) ||
                              off == offsetof(sm_wm_header, direct) || off == offsetof(sm_wm_header, default_shift) ||
                              off == offsetof(sm_wm_header, shift_off) || off == offsetof(sm_wm_header, bucket_off) ||
                              off == offsetof(sm_wm_header, entry_off) || off == offsetof(sm_wm_header, keys_off) ||
                              off == offsetof(sm_wm_header, nkeys);
            tu_check(rc != SM_OK || !must_reject, "header word at %zu (how %d) accepted", off, how);
        }
    }
    /* Truncated. */
    for (size_t cut = 1; cut < size; cut += (cut < 128 ? 1 : 61))
        tu_check(sm_wm_validate(good, size - cut, outputs, NULL) != SM_OK, "truncated by %zu accepted", cut);
    /* Too few outputs. */
    tu_check(sm_wm_validate(good, size, 1, NULL) != SM_OK, "output ids out of range accepted");
    /* Specific damage. */
    struct {
        size_t off;
        uint8_t value;
        const char *what;
    } damage[] = {
        {offsetof(sm_wm_header, code) + 'a', 200, "code beyond the symbols"},
        {h->bucket_off + 4 * 3, 0xff, "bucket out of order"},
        {h->bucket_off + 4 * (1u << h->hash_bits) + 3, 0x7f, "last bucket past the keys"},
        {h->entry_off + 4, 200, "key length over the longest"},
        {h->entry_off + 12 + 3, 0x7f, "key offset outside"},
        {h->entry_off + 8 + 2, 0x7f, "output id outside"},
        {h->entry_off + 0, 'z', "prefix that is not the key's"},
        {h->keys_off + 0, 'z', "key bytes moved out of their bucket or prefix"},
    };
    for (size_t d = 0; d < sizeof damage / sizeof damage[0]; d++) {
        memcpy(bad, good, size);
        bad[damage[d].off] = damage[d].value;
        tu_check(sm_wm_validate(bad, size, outputs, NULL) != SM_OK, "%s accepted", damage[d].what);
    }
    /* A shift over the default, and a nonzero shift over a bucket with keys. */
    memcpy(bad, good, size);
    bad[h->shift_off + 1] = (uint8_t)(h->default_shift + 1);
    tu_check(sm_wm_validate(bad, size, outputs, NULL) != SM_OK, "shift over the default accepted");
    memcpy(bad, good, size);
    const uint32_t *bucket = (const uint32_t *)(good + h->bucket_off);
    for (uint32_t s = 0; s < (1u << h->hash_bits); s++)
        if (bucket[s] < bucket[s + 1]) {
            bad[h->shift_off + s] = 1;
            break;
        }
    tu_check(sm_wm_validate(bad, size, outputs, NULL) != SM_OK, "skipped bucket accepted");
    /* Random flips: rejected, or a scan stays inside. */
    for (unsigned t = 0; t < tu_scaled(3000); t++) {
        memcpy(bad, good, size);
        size_t at = tu_rng_below(&rng, (uint32_t)size);
        bad[at] ^= (uint8_t)(1u << tu_rng_below(&rng, 8));
        if (sm_wm_validate(bad, size, outputs, NULL) == SM_OK) {
            sm_sink sink = {0};
            sink.own_hi = UINT64_MAX;
            uint8_t text[300];
            make_text(ks, FOLD_TEXT, "abcdefg", text, sizeof text);
            scan_pieces(bad, text, sizeof text, 0, &sink, 1);
            free_sink(&sink);
        }
    }
    sm_aligned_free(bad);
    sm_aligned_free(good);
    free(ks);
}

/* ------------------------------------------------------ public API tests */

typedef struct {
    sm_pattern pats[80];
    char seqs[80][48];
    size_t n;
    sm_compile_options opts;
} pattern_set;

static void make_patterns(pattern_set *ps, int dna, size_t n, uint32_t lo, uint32_t hi) {
    memset(ps, 0, sizeof *ps);
    sm_compile_options_init(&ps->opts);
    ps->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    if (dna) ps->opts.strands = (sm_strands)tu_rng_below(&rng, 3);
    else if (tu_rng_chance(&rng, 50)) ps->opts.flags = SM_FLAG_IGNORE_CASE;
    ps->n = n;
    for (size_t i = 0; i < n; i++) {
        uint32_t len = tu_rng_range(&rng, lo, hi);
        if (dna) tu_random_iupac(&rng, ps->seqs[i], len, 8, 20);
        else tu_random_from(&rng, ps->seqs[i], len, "abcdeABCDE ");
        if (i > 0 && tu_rng_chance(&rng, 10)) memcpy(ps->seqs[i], ps->seqs[i - 1], len = (uint32_t)strlen(ps->seqs[i - 1]));
        ps->seqs[i][len] = 0;
        ps->pats[i].seq = ps->seqs[i];
        ps->pats[i].len = len;
        ps->pats[i].name = NULL;
    }
}

/* Compiles with a forced engine; *rc gets the status (a failure is checked
   by the caller: the automaton and Wu-Manber refuse the same sets). */
static sm_db *compile_rc(const pattern_set *ps, sm_engine engine, int *rc) {
    sm_compile_options o = ps->opts;
    o.engine = engine;
    sm_db *db = NULL;
    *rc = sm_compile(ps->pats, ps->n, &o, &db, NULL);
    return db;
}

static sm_db *compile_with(const pattern_set *ps, sm_engine engine) {
    int rc;
    sm_db *db = compile_rc(ps, engine, &rc);
    tu_check(rc == SM_OK, "compile (engine %d) failed: %d", (int)engine, rc);
    return db;
}

static void scan_all(const sm_db *db, const char *text, size_t n, tu_hits *out) {
    sm_scratch *s = NULL;
    if (sm_scratch_alloc(db, &s) != SM_OK) abort();
    tu_check(sm_scan(db, s, text, n, tu_hits_collect, out) == SM_OK, "sm_scan");
    sm_scratch_free(s);
}

static void stream_all(const sm_db *db, const char *text, size_t n, tu_hits *out) {
    sm_stream *st = NULL;
    if (sm_stream_open(db, &st) != SM_OK) abort();
    size_t at = 0;
    while (at < n) {
        size_t len = tu_rng_below(&rng, 2) ? tu_rng_below(&rng, 5) : tu_rng_below(&rng, 200);
        if (len > n - at) len = n - at;
        tu_check(sm_stream_feed(st, text + at, len, tu_hits_collect, out) == SM_OK, "stream feed");
        at += len;
    }
    tu_check(sm_stream_end(st, tu_hits_collect, out) == SM_OK, "stream end");
    sm_stream_free(st);
}

static void runner_all(const sm_db *db, unsigned threads, size_t chunk, const char *text, size_t n, tu_hits *out,
                       uint64_t *total) {
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.threads = threads;
    o.chunk_size = chunk;
    o.on_hit = tu_hits_collect;
    o.ctx = out;
    sm_runner *r = NULL;
    if (sm_runner_create(db, &o, &r, NULL) != SM_OK) abort();
    /* two records: the text, then its second half */
    for (int rec = 0; rec < 2; rec++) {
        const char *t = rec ? text + n / 2 : text;
        size_t len = rec ? n - n / 2 : n, at = 0;
        sm_runner_begin_record(r);
        while (at < len) {
            size_t piece = tu_rng_below(&rng, 300);
            if (piece > len - at) piece = len - at;
            tu_check(sm_runner_feed(r, t + at, piece) == SM_OK, "runner feed");
            at += piece;
        }
        tu_check(sm_runner_end_record(r) == SM_OK, "runner end");
    }
    tu_check(sm_runner_flush(r) == SM_OK, "runner flush");
    *total = sm_runner_total(r);
    sm_runner_free(r);
}

static void test_public(void) {
    char text[6000];
    unsigned rounds = tu_scaled(60);
    for (unsigned round = 0; round < rounds && tu_failures() < 10; round++) {
        int dna = round % 2 == 0;
        pattern_set *ps = malloc(sizeof *ps);
        uint32_t lo = tu_rng_range(&rng, 1, 10), hi = lo + tu_rng_below(&rng, 30);
        if (hi > 40) hi = 40;
        make_patterns(ps, dna, tu_rng_range(&rng, 1, 80), lo, hi);
        size_t n = tu_rng_chance(&rng, 10) ? tu_rng_below(&rng, 20) : tu_rng_range(&rng, 20, sizeof text);
        if (dna) tu_random_iupac(&rng, text, n, 2, 10);
        else tu_random_from(&rng, text, n, "abcdeABCDE \n");
        for (unsigned paste = 0; paste < n / 40; paste++) {
            const sm_pattern *p = &ps->pats[tu_rng_below(&rng, (uint32_t)ps->n)];
            if (p->len > n) continue;
            size_t at = tu_rng_below(&rng, (uint32_t)(n - p->len + 1));
            for (size_t j = 0; j < p->len; j++) {
                char c = p->seq[j];
                /* an IUPAC code pastes as one of its bases */
                if (dna && !strchr("ACGTacgt", c)) c = "ACGT"[tu_rng_below(&rng, 4)];
                text[at + j] = c;
            }
        }
        int rc_wm, rc_ac;
        sm_db *wm = compile_rc(ps, SM_ENGINE_WUMANBER, &rc_wm), *ac = compile_rc(ps, SM_ENGINE_AUTOMATON, &rc_ac);
        tu_check(rc_wm == rc_ac && (rc_wm == SM_OK || rc_wm == SM_ERR_INVALID), "compile: wumanber %d, automaton %d",
                 rc_wm, rc_ac);
        if (!wm || !ac) {
            /* refusals (too large an expansion) are the automaton's */
            sm_db_free(wm);
            sm_db_free(ac);
            free(ps);
            continue;
        }
        sm_db_info info;
        sm_db_get_info(wm, &info);
        tu_check(sm_db_engine_patterns(wm, SM_ENGINE_WUMANBER) == ps->n && sm_db_engine_patterns(wm, SM_ENGINE_AUTOMATON) == 0, "info: %u Wu-Manber patterns",
                 sm_db_engine_patterns(wm, SM_ENGINE_WUMANBER));
        tu_hits want, oracle, got;
        tu_hits_init(&want);
        tu_hits_init(&oracle);
        tu_hits_init(&got);
        char what[64];
        snprintf(what, sizeof what, "round %u (%s)", round, dna ? "dna" : "text");
        scan_all(ac, text, n, &want);
        oracle_find(ps->pats, ps->n, &ps->opts, text, n, 0, &oracle);
        tu_check(tu_hits_equal(&oracle, &want, "automaton vs oracle"), "%s: automaton vs oracle", what);
        scan_all(wm, text, n, &got);
        tu_check(tu_hits_equal(&want, &got, what), "%s: sm_scan", what);
        tu_hits_clear(&got);
        stream_all(wm, text, n, &got);
        tu_check(tu_hits_equal(&want, &got, what), "%s: stream", what);
        /* counts */
        uint64_t *c1 = calloc(ps->n, sizeof *c1), *c2 = calloc(ps->n, sizeof *c2);
        sm_scratch *s = NULL;
        sm_scratch_alloc(wm, &s);
        tu_check(sm_count(wm, s, text, n, c1) == SM_OK, "sm_count");
        sm_scratch_free(s);
        oracle_count(&want, c2);
        tu_check(!memcmp(c1, c2, ps->n * sizeof *c1), "%s: sm_count", what);
        /* runner: 1 and 3 threads, small chunks, two records */
        tu_hits rwant;
        tu_hits_init(&rwant);
        uint64_t total_ac = 0, total_wm = 0;
        runner_all(ac, 1, 64, text, n, &rwant, &total_ac);
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            size_t chunk = tu_rng_range(&rng, 1, 200);
            tu_hits_clear(&got);
            runner_all(wm, threads, chunk, text, n, &got, &total_wm);
            tu_check(tu_hits_equal(&rwant, &got, what) && total_wm == total_ac, "%s: runner %u threads chunk %zu",
                     what, threads, chunk);
        }
        tu_hits_free(&rwant);
        free(c1);
        free(c2);
        tu_hits_free(&want);
        tu_hits_free(&oracle);
        tu_hits_free(&got);
        sm_db_free(wm);
        sm_db_free(ac);
        free(ps);
    }
}

/* The whole database: saved bytes load back, a damaged section is rejected
   even with a fixed checksum, and the engine is only used when forced. */
static void test_database(void) {
    pattern_set *ps = malloc(sizeof *ps);
    make_patterns(ps, 1, 20, 3, 12);
    ps->opts.strands = SM_STRAND_BOTH;
    sm_db *db = compile_with(ps, SM_ENGINE_WUMANBER), *au = compile_with(ps, SM_ENGINE_AUTO);
    if (!db || !au) goto done;
    sm_db_info info;
    sm_db_get_info(au, &info);
    tu_check(sm_db_engine_patterns(au, SM_ENGINE_WUMANBER) == 0, "auto picked Wu-Manber for short patterns");
    {
        /* long patterns with a large mean shift: the planner's choice */
        static char longs[5][101];
        sm_pattern lp[5];
        for (int i = 0; i < 5; i++) {
            tu_random_dna(&rng, longs[i], 100);
            lp[i].name = NULL, lp[i].seq = longs[i], lp[i].len = 100;
        }
        sm_compile_options lo;
        sm_compile_options_init(&lo);
        sm_db *ldb = NULL;
        tu_check(sm_compile(lp, 5, &lo, &ldb, NULL) == SM_OK, "compile long patterns");
        if (ldb) {
            sm_db_get_info(ldb, &info);
            tu_check(sm_db_engine_patterns(ldb, SM_ENGINE_WUMANBER) == 5, "auto did not pick Wu-Manber for long patterns");
            const uint8_t *sec = sm_db_section_of_kind(ldb, SM_SECTION_WUMANBER, NULL);
            tu_check(sec && sm_wm_mean_shift(sec) >= 16.0, "mean shift under the planner's bound");
        }
        sm_db_free(ldb);
        /* a few keys of 22 nt (mean shift about 17): Wu-Manber up to 8 keys,
           the automaton past them; one key of 14 nt (about 10): the automaton,
           but Wu-Manber over reads (typical record 150; a 4-mer, shift about
           2.6, stays with the automaton; records of 20 kb as long ones) */
        static const struct {
            unsigned patterns, len;
            sm_strands strands;
            uint32_t typical;
            int wumanber;
        } few[] = {{1, 22, SM_STRAND_BOTH, 0, 1},     {4, 22, SM_STRAND_BOTH, 0, 1},
                   {8, 22, SM_STRAND_FORWARD, 0, 1},  {10, 22, SM_STRAND_FORWARD, 0, 0},
                   {5, 22, SM_STRAND_BOTH, 0, 0},     {1, 14, SM_STRAND_FORWARD, 0, 0},
                   {1, 13, SM_STRAND_FORWARD, 150, 1}, {2, 13, SM_STRAND_FORWARD, 150, 1},
                   {1, 4, SM_STRAND_FORWARD, 150, 0},  {1, 13, SM_STRAND_FORWARD, 20000, 0}};
        for (size_t c = 0; c < sizeof few / sizeof few[0]; c++) {
            static char many[10][23];
            sm_pattern fp[10];
            for (unsigned i = 0; i < few[c].patterns; i++) {
                tu_random_dna(&rng, many[i], few[c].len);
                fp[i].name = NULL, fp[i].seq = many[i], fp[i].len = few[c].len;
            }
            sm_compile_options fo;
            sm_compile_options_init(&fo);
            fo.alphabet = SM_ALPHABET_DNA;
            fo.strands = few[c].strands;
            fo.typical_record = few[c].typical;
            sm_db *fdb = NULL;
            tu_check(sm_compile(fp, few[c].patterns, &fo, &fdb, NULL) == SM_OK, "compile few patterns");
            if (!fdb) continue;
            sm_db_get_info(fdb, &info);
            tu_check((sm_db_engine_patterns(fdb, SM_ENGINE_WUMANBER) == few[c].patterns) == few[c].wumanber,
                     "auto: %u patterns of %u nt (%s, records of %u): %u on Wu-Manber", few[c].patterns, few[c].len,
                     few[c].strands == SM_STRAND_BOTH ? "both strands" : "one strand", (unsigned)few[c].typical,
                     sm_db_engine_patterns(fdb, SM_ENGINE_WUMANBER));
            sm_db_free(fdb);
        }
        /* planned for the GPU (it need not be there): keys of 24 nt or more
           past the automaton's huge bound (about 27 M key symbols) go to
           Wu-Manber as on the CPU, even with a mean shift under the GPU's
           bound (10,000 random keys of 2700 nt: about 26); below the bound
           keys of such a shift keep the automaton (10,000 of 100: about 25) */
        static const struct {
            unsigned patterns, len;
            int wumanber;
        } gpu_sets[] = {{10000, 2700, 1}, {10000, 100, 0}};
        for (size_t c = 0; c < sizeof gpu_sets / sizeof gpu_sets[0]; c++) {
            unsigned n = gpu_sets[c].patterns, len = gpu_sets[c].len;
            char *seqs = malloc((size_t)n * len);
            sm_pattern *gp = calloc(n, sizeof *gp);
            if (!seqs || !gp) {
                free(seqs), free(gp);
                tu_check(0, "out of memory");
                continue;
            }
            tu_random_dna(&rng, seqs, (size_t)n * len);
            for (unsigned i = 0; i < n; i++) gp[i].seq = seqs + (size_t)i * len, gp[i].len = len;
            sm_compile_options go;
            sm_compile_options_init(&go);
            go.strands = SM_STRAND_FORWARD;
            go.backend = SM_BACKEND_CUDA;
            sm_db *gdb = NULL;
            tu_check(sm_compile(gp, n, &go, &gdb, NULL) == SM_OK, "compile %u keys of %u for the GPU", n, len);
            if (gdb)
                tu_check((sm_db_engine_patterns(gdb, SM_ENGINE_WUMANBER) == n) == gpu_sets[c].wumanber,
                         "for the GPU: %u keys of %u nt: %u on Wu-Manber", n, len,
                         sm_db_engine_patterns(gdb, SM_ENGINE_WUMANBER));
            sm_db_free(gdb);
            free(gp);
            free(seqs);
        }
    }
    size_t size;
    const uint8_t *bytes = sm_db_bytes(db, &size);
    sm_db *back = NULL;
    tu_check(sm_db_from_bytes(bytes, size, &back, NULL) == SM_OK, "saved bytes load");
    sm_db_free(back);
    const sm_db_header *h = (const sm_db_header *)bytes;
    /* the Wu-Manber section's directory entry */
    const sm_db_section *dir = (const sm_db_section *)(bytes + h->directory_off);
    uint32_t wi = 0;
    while (wi < h->section_count && dir[wi].kind != SM_SECTION_WUMANBER) wi++;
    tu_check(wi < h->section_count && dir[wi].size > 0 && dir[wi].patterns == ps->n && h->version == 4,
             "header fields");
    if (wi == h->section_count) goto done;
    const size_t entry = h->directory_off + wi * sizeof(sm_db_section);
    uint8_t *copy = malloc(size);
    unsigned rejected = 0, tries = tu_scaled(400);
    for (unsigned t = 0; t < tries; t++) {
        memcpy(copy, bytes, size);
        size_t at = dir[wi].offset + tu_rng_below(&rng, (uint32_t)dir[wi].size);
        if (t < 40) at = dir[wi].offset + tu_rng_below(&rng, sizeof(sm_wm_header));
        copy[at] ^= (uint8_t)(1u << tu_rng_below(&rng, 8));
        sm_db_seal(copy, size);
        back = NULL;
        if (sm_db_from_bytes(copy, size, &back, NULL) != SM_OK) {
            rejected++;
            continue;
        }
        char text[400];
        tu_random_dna(&rng, text, sizeof text);
        tu_hits got;
        tu_hits_init(&got);
        scan_all(back, text, sizeof text, &got);
        tu_hits_free(&got);
        sm_db_free(back);
    }
    tu_check(rejected > 0, "no damaged database rejected");
    /* the directory entry of the section */
    memcpy(copy, bytes, size);
    ((sm_db_section *)(copy + entry))->offset += 64;
    sm_db_seal(copy, size);
    back = NULL;
    tu_check(sm_db_from_bytes(copy, size, &back, NULL) != SM_OK, "moved section accepted");
    sm_db_free(back);
    memcpy(copy, bytes, size);
    ((sm_db_section *)(copy + entry))->size = size;
    sm_db_seal(copy, size);
    back = NULL;
    tu_check(sm_db_from_bytes(copy, size, &back, NULL) != SM_OK, "oversized section accepted");
    sm_db_free(back);
    memcpy(copy, bytes, size);
    ((sm_db_section *)(copy + entry))->patterns--;
    sm_db_seal(copy, size);
    back = NULL;
    tu_check(sm_db_from_bytes(copy, size, &back, NULL) != SM_OK, "pattern count mismatch accepted");
    sm_db_free(back);
    free(copy);
    /* k mismatches with a forced Wu-Manber engine is refused */
    sm_compile_options o = ps->opts;
    o.engine = SM_ENGINE_WUMANBER;
    o.match = SM_MATCH_MISMATCHES;
    o.max_errors = 1;
    sm_db *x = NULL;
    tu_check(sm_compile(ps->pats, ps->n, &o, &x, NULL) == SM_ERR_INVALID, "wumanber with mismatches accepted");
    sm_db_free(x);
done:
    sm_db_free(db);
    sm_db_free(au);
    free(ps);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0x5eed3a11u));
    test_parameters();
    test_random_sections();
    test_single_key();
    test_validate();
    test_validate_prefilter();
    test_public();
    test_database();
    return tu_summary("test_wumanber");
}
