/* The Shift-And engine against the oracle: random IUPAC and text keys,
 * text-iupac on and off, ignore-case, streaming with random piece splits,
 * chunk ownership, count mode, and corrupt sections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "engines/bitparallel/shiftand.h"
#include "oracle.h"
#include "testutil.h"

typedef struct {
    sm_pattern *pats;
    char **seqs;
    size_t n;
    sm_compile_options opts;
} case_def;

static void case_free(case_def *c) {
    for (size_t i = 0; i < c->n; i++) free(c->seqs[i]);
    free(c->seqs);
    free(c->pats);
    c->n = 0;
}

/* The keys the core hands the engine: dna upper case (U as T), reverse
   complements for '-'; text lower-cased under ignore-case. */
typedef struct {
    sm_ac_key *keys;
    char **bufs;
    size_t n;
} key_set;

static void keys_free(key_set *k) {
    for (size_t i = 0; i < k->n; i++) free(k->bufs[i]);
    free(k->bufs);
    free(k->keys);
}

static int keys_make(const case_def *c, key_set *k) {
    k->keys = calloc(2 * c->n, sizeof *k->keys);
    k->bufs = calloc(2 * c->n, sizeof *k->bufs);
    k->n = 0;
    if (!k->keys || !k->bufs) return -1;
    int dna = c->opts.alphabet == SM_ALPHABET_DNA;
    int fwd = !dna || c->opts.strands != SM_STRAND_REVERSE;
    int rev = dna && c->opts.strands != SM_STRAND_FORWARD;
    for (size_t i = 0; i < c->n; i++) {
        size_t m = c->pats[i].len;
        for (int strand = 0; strand < 2; strand++) {
            if ((strand == 0 && !fwd) || (strand == 1 && !rev)) continue;
            char *b = malloc(m ? m : 1);
            if (!b) return -1;
            if (strand == 1) {
                oracle_reverse_complement(c->pats[i].seq, m, b);
            } else {
                for (size_t j = 0; j < m; j++) {
                    unsigned char ch = (unsigned char)c->pats[i].seq[j];
                    if (dna) {
                        if (ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 32);
                        if (ch == 'U') ch = 'T';
                    } else if ((c->opts.flags & SM_FLAG_IGNORE_CASE) && ch >= 'A' && ch <= 'Z') {
                        ch = (unsigned char)(ch + 32);
                    }
                    b[j] = (char)ch;
                }
            }
            k->bufs[k->n] = b;
            k->keys[k->n].seq = (const uint8_t *)b;
            k->keys[k->n].len = (uint32_t)m;
            k->keys[k->n].output = (uint32_t)(i * 2 + (unsigned)strand);
            k->n++;
        }
    }
    return 0;
}

/* Scans text in random pieces with the state carried, returns sorted hits. */
static int scan_pieces(const uint8_t *section, const sm_db_pattern *dbp, const char *text, size_t len,
                       uint64_t own_lo, uint64_t own_hi, tu_rng *rng, tu_hits *out, uint64_t *counts) {
    size_t nstate = sm_sa_state_words(section);
    uint64_t *state = malloc(nstate * sizeof *state);
    if (!state) return -1;
    sm_sa_state_reset(section, state);
    sm_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.own_lo = own_lo;
    sink.own_hi = own_hi;
    sink.counts = counts;
    size_t at = 0;
    int mode = (int)tu_rng_below(rng, 4);
    while (at < len || (at == 0 && len == 0)) {
        size_t piece;
        if (mode == 0) piece = len - at;
        else if (mode == 1) piece = 1;
        else piece = tu_rng_range(rng, 0, (uint32_t)(mode == 2 ? 9 : 300));
        if (piece > len - at) piece = len - at;
        sm_sa_scan(section, dbp, state, (const uint8_t *)text + at, piece, at, &sink, sm_cpu()->avx2);
        at += piece;
        if (len == 0) break;
    }
    free(state);
    if (sink.failed) {
        free(sink.hits);
        return -1;
    }
    for (size_t i = 0; i < sink.n; i++) {
        const sm_rawhit *h = &sink.hits[i];
        tu_hits_add(out, 0, h->start, h->end, h->pattern, h->reverse ? '-' : '+', h->errors);
    }
    free(sink.hits);
    tu_hits_sort(out);
    return 0;
}

static void plant(tu_rng *rng, char *text, size_t len, const case_def *c) {
    if (c->n == 0 || len == 0) return;
    unsigned times = tu_rng_below(rng, 6);
    for (unsigned t = 0; t < times; t++) {
        const sm_pattern *p = &c->pats[tu_rng_below(rng, (uint32_t)c->n)];
        if (p->len > len) continue;
        size_t at = tu_rng_below(rng, (uint32_t)(len - p->len + 1));
        int rc = c->opts.alphabet == SM_ALPHABET_DNA && tu_rng_chance(rng, 50);
        for (size_t j = 0; j < p->len; j++) {
            unsigned char ch = (unsigned char)(rc ? oracle_complement((unsigned char)p->seq[p->len - 1 - j])
                                                  : p->seq[j]);
            if (c->opts.alphabet == SM_ALPHABET_DNA) {
                /* A concrete base of the symbol's set, sometimes the code itself. */
                unsigned set = oracle_nt_set(ch);
                if (!tu_rng_chance(rng, (c->opts.flags & SM_FLAG_TEXT_IUPAC) ? 20 : 2)) {
                    unsigned pick;
                    do pick = 1u << tu_rng_below(rng, 4);
                    while (!(set & pick));
                    ch = (unsigned char)(pick == 1 ? 'A' : pick == 2 ? 'C' : pick == 4 ? 'G' : 'T');
                }
                if (tu_rng_chance(rng, 10)) ch = (unsigned char)(ch | 0x20);
            } else if ((c->opts.flags & SM_FLAG_IGNORE_CASE) && tu_rng_chance(rng, 50)) {
                if (ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 32);
                else if (ch >= 'A' && ch <= 'Z') ch = (unsigned char)(ch + 32);
            }
            text[at + j] = (char)ch;
        }
    }
}

static void random_case(tu_rng *rng, case_def *c, int dna) {
    memset(c, 0, sizeof *c);
    c->opts.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    c->opts.strands = dna ? (sm_strands)tu_rng_below(rng, 3) : SM_STRAND_FORWARD;
    c->opts.flags = 0;
    if (dna && tu_rng_chance(rng, 40)) c->opts.flags |= SM_FLAG_TEXT_IUPAC;
    if (!dna && tu_rng_chance(rng, 50)) c->opts.flags |= SM_FLAG_IGNORE_CASE;
    size_t n = tu_rng_chance(rng, 70) ? tu_rng_range(rng, 1, 6) : tu_rng_range(rng, 1, 60);
    c->pats = calloc(n, sizeof *c->pats);
    c->seqs = calloc(n, sizeof *c->seqs);
    c->n = n;
    unsigned iupac = tu_rng_below(rng, 60);
    for (size_t i = 0; i < n; i++) {
        size_t m;
        unsigned r = tu_rng_below(rng, 10);
        if (r < 5) m = tu_rng_range(rng, 1, 12);
        else if (r < 8) m = tu_rng_range(rng, 13, 70);
        else m = tu_rng_range(rng, 71, 200);
        if (i > 0 && tu_rng_chance(rng, 10)) { /* a duplicate pattern */
            size_t j = tu_rng_below(rng, (uint32_t)i);
            m = c->pats[j].len;
            c->seqs[i] = malloc(m);
            memcpy(c->seqs[i], c->seqs[j], m);
        } else {
            c->seqs[i] = malloc(m);
            if (dna) {
                tu_random_iupac(rng, c->seqs[i], m, iupac, 0);
                if (tu_rng_chance(rng, 10) && m >= 2) { /* a reverse-complement palindrome */
                    size_t h = m / 2;
                    oracle_reverse_complement(c->seqs[i], h, c->seqs[i] + m - h);
                    if (m % 2) c->seqs[i][h] = tu_rng_chance(rng, 50) ? 'N' : 'S';
                }
            } else {
                tu_random_from(rng, c->seqs[i], m, tu_rng_chance(rng, 50) ? "abAB" : "abcdeABCDE .\n\xff");
            }
        }
        c->pats[i].seq = c->seqs[i];
        c->pats[i].len = m;
        c->pats[i].name = NULL;
    }
}

static void random_text(tu_rng *rng, const case_def *c, char *text, size_t len) {
    if (c->opts.alphabet == SM_ALPHABET_DNA) {
        unsigned iupac = tu_rng_chance(rng, 50) ? 0 : tu_rng_below(rng, 30);
        tu_random_iupac(rng, text, len, iupac, tu_rng_below(rng, 20));
        /* A few bytes that are no nucleotide at all. */
        for (size_t i = 0; i < len; i++)
            if (tu_rng_chance(rng, 1)) text[i] = "-*. X\0"[tu_rng_below(rng, 6)];
        /* Long low-complexity stretches produce many overlapping hits. */
        if (len > 50 && tu_rng_chance(rng, 30)) {
            size_t at = tu_rng_below(rng, (uint32_t)(len - 40));
            memset(text + at, "ACGTN"[tu_rng_below(rng, 5)], 40);
        }
    } else {
        tu_random_from(rng, text, len, tu_rng_chance(rng, 50) ? "abAB" : "abcdeABCDE .\n\xff");
    }
    plant(rng, text, len, c);
}

static int run_case(tu_rng *rng, const case_def *c, const char *text, size_t len, const char *label) {
    key_set ks;
    memset(&ks, 0, sizeof ks);
    if (keys_make(c, &ks) != 0) return tu_check(0, "%s: out of memory", label);
    sm_buf sec;
    memset(&sec, 0, sizeof sec);
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_sa_build(ks.keys, ks.n, c->opts.alphabet, c->opts.flags, 0, &sec, &err);
    int ok = tu_check(rc == SM_OK, "%s: build failed: %s", label, err.message);
    if (ok) ok = tu_check(sm_sa_validate(sec.data, sec.len, (uint32_t)(2 * c->n), &err) == SM_OK,
                          "%s: validate rejected a fresh section: %s", label, err.message);
    sm_db_pattern *dbp = calloc(c->n, sizeof *dbp);
    for (size_t i = 0; i < c->n; i++) dbp[i].length = (uint32_t)c->pats[i].len;
    if (ok) {
        tu_hits expect, got;
        tu_hits_init(&expect);
        tu_hits_init(&got);
        oracle_find(c->pats, c->n, &c->opts, text, len, 0, &expect);
        /* Ownership: a random window, or everything. */
        uint64_t lo = 0, hi = UINT64_MAX;
        if (len > 0 && tu_rng_chance(rng, 40)) {
            lo = tu_rng_below(rng, (uint32_t)len + 1);
            hi = lo + tu_rng_below(rng, (uint32_t)len + 1);
        }
        tu_hits owned;
        tu_hits_init(&owned);
        for (size_t i = 0; i < expect.n; i++)
            if (expect.items[i].start >= lo && expect.items[i].start < hi) {
                const tu_hit *h = &expect.items[i];
                tu_hits_add(&owned, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
            }
        if (scan_pieces(sec.data, dbp, text, len, lo, hi, rng, &got, NULL) != 0) {
            tu_check(0, "%s: scan out of memory", label);
        } else if (!tu_check(tu_hits_equal(&owned, &got, label), "%s: hits differ (%zu patterns, text %zu bytes, flags %u, strands %d)",
                             label, c->n, len, c->opts.flags, (int)c->opts.strands)) {
            char buf[400];
            for (size_t i = 0; i < c->n && i < 5; i++)
                printf("  pattern %zu: %s\n", i, tu_excerpt(c->pats[i].seq, c->pats[i].len, 200, buf, sizeof buf));
            printf("  text: %s\n", tu_excerpt(text, len, 300, buf, sizeof buf));
        }
        /* Count mode counts the same owned hits. */
        uint64_t *want = calloc(c->n, sizeof *want), *have = calloc(c->n, sizeof *have);
        oracle_count(&owned, want);
        tu_hits none;
        tu_hits_init(&none);
        scan_pieces(sec.data, dbp, text, len, lo, hi, rng, &none, have);
        tu_check(none.n == 0 && memcmp(want, have, c->n * sizeof *want) == 0, "%s: count mode differs", label);
        tu_hits_free(&none);
        free(want);
        free(have);
        tu_hits_free(&owned);
        tu_hits_free(&expect);
        tu_hits_free(&got);
    }
    free(dbp);
    sm_buf_free(&sec);
    keys_free(&ks);
    return ok;
}

static void test_random(tu_rng *rng, int dna, unsigned rounds) {
    char label[64];
    for (unsigned r = 0; r < rounds && tu_failures() < 20; r++) {
        case_def c;
        random_case(rng, &c, dna);
        size_t len = tu_rng_chance(rng, 5) ? tu_rng_below(rng, 3) : tu_rng_range(rng, 0, 3000);
        char *text = malloc(len ? len : 1);
        random_text(rng, &c, text, len);
        snprintf(label, sizeof label, "%s round %u", dna ? "dna" : "text", r);
        run_case(rng, &c, text, len, label);
        free(text);
        case_free(&c);
    }
}

/* Lengths around word boundaries, where carries matter most. */
static void test_word_boundaries(tu_rng *rng) {
    static const size_t lens[] = {1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 193, 200};
    char label[64];
    for (size_t a = 0; a < sizeof lens / sizeof *lens; a++) {
        for (size_t b = 0; b < 3; b++) {
            case_def c;
            memset(&c, 0, sizeof c);
            c.opts.alphabet = SM_ALPHABET_DNA;
            c.opts.strands = (sm_strands)b;
            c.n = 1 + b;
            c.pats = calloc(c.n, sizeof *c.pats);
            c.seqs = calloc(c.n, sizeof *c.seqs);
            for (size_t i = 0; i < c.n; i++) {
                size_t m = i == 0 ? lens[a] : lens[(a + i * 5) % (sizeof lens / sizeof *lens)];
                c.seqs[i] = malloc(m);
                tu_random_iupac(rng, c.seqs[i], m, 30, 0);
                c.pats[i].seq = c.seqs[i];
                c.pats[i].len = m;
            }
            size_t len = 1500;
            char *text = malloc(len);
            tu_random_dna(rng, text, len);
            for (int t = 0; t < 4; t++) plant(rng, text, len, &c);
            snprintf(label, sizeof label, "boundary len %zu strands %zu", lens[a], b);
            run_case(rng, &c, text, len, label);
            free(text);
            case_free(&c);
        }
    }
}

/* Hundreds of keys: several 64-key groups per level (the wide paths). */
static void test_many_keys(tu_rng *rng) {
    char label[64];
    for (unsigned r = 0; r < 6; r++) {
        case_def c;
        memset(&c, 0, sizeof c);
        c.opts.alphabet = r % 3 == 2 ? SM_ALPHABET_TEXT : SM_ALPHABET_DNA;
        c.opts.strands = c.opts.alphabet == SM_ALPHABET_DNA ? (sm_strands)(r % 3) : SM_STRAND_FORWARD;
        if (r == 4) c.opts.flags = SM_FLAG_TEXT_IUPAC;
        c.n = tu_rng_range(rng, 130, 400);
        c.pats = calloc(c.n, sizeof *c.pats);
        c.seqs = calloc(c.n, sizeof *c.seqs);
        for (size_t i = 0; i < c.n; i++) {
            size_t m = tu_rng_chance(rng, 90) ? tu_rng_range(rng, 1, 14) : tu_rng_range(rng, 15, 90);
            c.seqs[i] = malloc(m);
            if (c.opts.alphabet == SM_ALPHABET_DNA) tu_random_iupac(rng, c.seqs[i], m, 20, 0);
            else tu_random_from(rng, c.seqs[i], m, "abc");
            c.pats[i].seq = c.seqs[i];
            c.pats[i].len = m;
        }
        size_t len = 2000;
        char *text = malloc(len);
        if (c.opts.alphabet == SM_ALPHABET_DNA) tu_random_iupac(rng, text, len, 3, 10);
        else tu_random_from(rng, text, len, "abcA");
        for (int t = 0; t < 10; t++) plant(rng, text, len, &c);
        snprintf(label, sizeof label, "many keys round %u (%zu patterns)", r, c.n);
        run_case(rng, &c, text, len, label);
        free(text);
        case_free(&c);
    }
}

/* Hand-checked semantics of text classes. */
static void test_fixed(tu_rng *rng) {
    case_def c;
    memset(&c, 0, sizeof c);
    char *seqs[2] = {"ACGN", "RYA"};
    c.n = 2;
    c.pats = calloc(2, sizeof *c.pats);
    c.seqs = calloc(2, sizeof *c.seqs);
    for (int i = 0; i < 2; i++) {
        c.seqs[i] = malloc(4);
        memcpy(c.seqs[i], seqs[i], strlen(seqs[i]));
        c.pats[i].seq = c.seqs[i];
        c.pats[i].len = strlen(seqs[i]);
    }
    c.opts.alphabet = SM_ALPHABET_DNA;
    c.opts.strands = SM_STRAND_FORWARD;
    const char *text = "ACGTacgnACGNGCAuRYAnnnn";
    run_case(rng, &c, text, strlen(text), "fixed dna");
    c.opts.flags = SM_FLAG_TEXT_IUPAC;
    run_case(rng, &c, text, strlen(text), "fixed dna text-iupac");
    /* The oracle itself, against hits worked out by hand. */
    static const unsigned plain[][3] = {{0, 4, 0}, {2, 5, 1}, {12, 15, 1}};
    static const unsigned iupac[][3] = {{0, 4, 0},   {2, 5, 1},   {4, 8, 0},   {6, 9, 1},   {8, 12, 0},
                                        {12, 15, 1}, {14, 17, 1}, {16, 19, 1}, {18, 21, 1}, {18, 22, 0},
                                        {19, 22, 1}, {19, 23, 0}, {20, 23, 1}};
    for (int pass = 0; pass < 2; pass++) {
        const unsigned(*want)[3] = pass ? iupac : plain;
        size_t nwant = pass ? sizeof iupac / sizeof *iupac : sizeof plain / sizeof *plain;
        tu_hits h, w;
        tu_hits_init(&h);
        tu_hits_init(&w);
        for (size_t i = 0; i < nwant; i++) tu_hits_add(&w, 0, want[i][0], want[i][1], want[i][2], '+', 0);
        c.opts.flags = pass ? SM_FLAG_TEXT_IUPAC : 0;
        oracle_find(c.pats, c.n, &c.opts, text, strlen(text), 0, &h);
        tu_check(tu_hits_equal(&w, &h, "oracle by hand"), "fixed: oracle differs from hand-worked hits (pass %d)", pass);
        tu_hits_free(&h);
        tu_hits_free(&w);
    }
    case_free(&c);
}

/* Corrupt sections are rejected, and a section that still passes scans
   without touching memory outside it. */
static void test_corrupt(tu_rng *rng, uint32_t want_layout) {
    case_def c;
    key_set ks;
    sm_buf sec;
    sm_error err;
    /* Draw cases until the builder picks the wanted layout. */
    for (;;) {
        random_case(rng, &c, 1);
        memset(&ks, 0, sizeof ks);
        keys_make(&c, &ks);
        memset(&sec, 0, sizeof sec);
        if (!tu_check(sm_sa_build(ks.keys, ks.n, c.opts.alphabet, c.opts.flags, 0, &sec, &err) == SM_OK,
                      "corrupt: build"))
            goto done;
        sm_sa_header h;
        memcpy(&h, sec.data, sizeof h);
        if (h.layout == want_layout) break;
        sm_buf_free(&sec);
        keys_free(&ks);
        case_free(&c);
    }
    uint32_t nout = (uint32_t)(2 * c.n);
    sm_db_pattern *dbp = calloc(c.n, sizeof *dbp);
    for (size_t i = 0; i < c.n; i++) dbp[i].length = (uint32_t)c.pats[i].len;

    /* Truncations, each in an exact-size allocation so overreads show. */
    for (size_t cut = 0; cut < sec.len; cut += 1 + cut / 3) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, sec.data, cut);
        tu_check(sm_sa_validate(copy, cut, nout, &err) != SM_OK, "corrupt: truncated to %zu accepted", cut);
        free(copy);
    }
    /* Targeted damage. */
    {
        uint8_t *copy = malloc(sec.len);
        sm_sa_header h;
        memcpy(copy, sec.data, sec.len);
        tu_check(sm_sa_validate(copy, sec.len, nout, &err) == SM_OK, "corrupt: pristine copy rejected");
        tu_check(sm_sa_validate(copy, sec.len, 0, &err) != SM_OK, "corrupt: output ids beyond n_outputs accepted");
        memcpy(&h, sec.data, sizeof h);
        h.class_of[7] = (uint16_t)h.rows;
        memcpy(copy, &h, sizeof h);
        tu_check(sm_sa_validate(copy, sec.len, nout, &err) != SM_OK, "corrupt: class row out of range accepted");
        memcpy(&h, sec.data, sizeof h);
        h.out_list_off = sec.len - 4;
        memcpy(copy, &h, sizeof h);
        tu_check(sm_sa_validate(copy, sec.len, nout, &err) != SM_OK, "corrupt: out_list past the end accepted");
        memcpy(&h, sec.data, sizeof h);
        h.words = 0xFFFFFFF0u;
        memcpy(copy, &h, sizeof h);
        tu_check(sm_sa_validate(copy, sec.len, nout, &err) != SM_OK, "corrupt: huge word count accepted");
        memcpy(&h, sec.data, sizeof h);
        h.masks_off = UINT64_MAX - 7;
        memcpy(copy, &h, sizeof h);
        tu_check(sm_sa_validate(copy, sec.len, nout, &err) != SM_OK, "corrupt: wrapping offset accepted");
        memcpy(&h, sec.data, sizeof h);
        h.final_count += 1;
        memcpy(copy, &h, sizeof h);
        tu_check(sm_sa_validate(copy, sec.len, nout, &err) != SM_OK, "corrupt: wrong key count accepted");
        free(copy);
    }
    /* Random byte damage: whatever validate accepts must scan safely. */
    unsigned accepted = 0;
    char text[600];
    tu_random_iupac(rng, text, sizeof text, 10, 5);
    for (unsigned t = 0; t < 3000; t++) {
        uint8_t *copy = malloc(sec.len);
        memcpy(copy, sec.data, sec.len);
        unsigned flips = 1 + tu_rng_below(rng, 4);
        for (unsigned f = 0; f < flips; f++) {
            size_t at = tu_rng_chance(rng, 60) ? tu_rng_below(rng, (uint32_t)sizeof(sm_sa_header))
                                               : tu_rng_below(rng, (uint32_t)sec.len);
            copy[at] ^= (uint8_t)(1u << tu_rng_below(rng, 8));
        }
        if (sm_sa_validate(copy, sec.len, nout, &err) == SM_OK) {
            accepted++;
            size_t nstate = sm_sa_state_words(copy);
            uint64_t *state = calloc(nstate, sizeof *state);
            sm_sink sink;
            memset(&sink, 0, sizeof sink);
            sink.own_hi = UINT64_MAX;
            sm_sa_scan(copy, dbp, state, (const uint8_t *)text, sizeof text, 0, &sink, sm_cpu()->avx2);
            free(sink.hits);
            free(state);
        }
        free(copy);
    }
    printf("corrupt (layout %u): %u of 3000 damaged sections still valid (scanned safely)\n", want_layout, accepted);
    tu_check(1, "corrupt: random damage");
    free(dbp);
done:
    sm_buf_free(&sec);
    keys_free(&ks);
    case_free(&c);
}

static void test_build_errors(void) {
    sm_buf sec;
    memset(&sec, 0, sizeof sec);
    sm_error err;
    sm_ac_key k = {(const uint8_t *)"ACXT", 4, 0};
    tu_check(sm_sa_build(&k, 1, SM_ALPHABET_DNA, 0, 0, &sec, &err) == SM_ERR_PATTERN, "build: non-IUPAC key accepted");
    sm_ac_key e = {(const uint8_t *)"", 0, 0};
    tu_check(sm_sa_build(&e, 1, SM_ALPHABET_DNA, 0, 0, &sec, &err) != SM_OK, "build: empty key accepted");
    tu_check(sm_sa_build(&k, 0, SM_ALPHABET_DNA, 0, 0, &sec, &err) != SM_OK, "build: no keys accepted");
    sm_ac_key big = {(const uint8_t *)"ACGTACGTAC", 10, 0};
    tu_check(sm_sa_build(&big, 1, SM_ALPHABET_DNA, 0, 64, &sec, &err) == SM_ERR_LIMIT, "build: size limit ignored");
    sm_buf_free(&sec);
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(20240601));
    test_build_errors();
    test_fixed(&rng);
    test_word_boundaries(&rng);
    test_many_keys(&rng);
    test_random(&rng, 1, 700);
    test_random(&rng, 0, 300);
    test_corrupt(&rng, SM_SA_DENSE);
    test_corrupt(&rng, SM_SA_LEVELS);
    return tu_summary("test_shiftand");
}
