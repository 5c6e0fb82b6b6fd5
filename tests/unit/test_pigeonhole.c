/* The pigeonhole filter's section against damage: for each way it finds
 * its pieces (k-mer seed tables with and without slots and death tables,
 * pieces of several lengths, with and without the combined table, the
 * embedded automaton for long pieces and text), a fresh section validates, a short or mislabelled one is refused
 * (so is one whose probes disagree with its pieces or keys),
 * and a section with random bytes flipped anywhere is either refused or
 * scanned (with a sanitizer build, without reading outside it). Then k
 * edits where ends crowd (keys alike, an end of each at every position):
 * each key's ends and costs against the edit distance, and the ends held
 * at once bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "engines/approx/pigeonhole.h"
#include "engines/approx/pigeonhole_private.h"
#include "testutil.h"

typedef struct {
    const char *what;
    sm_alphabet alphabet;
    sm_match match;
    uint32_t k, nkeys, len;
    int iupac;            /* an IUPAC code in every key: no packed keys */
    uint32_t long_len;    /* the last key's length, when not 0 */
    unsigned has;         /* HAS_*: the tables the section must hold */
} ph_case;

enum { HAS_SLOTS = 1, HAS_DEATH = 2, HAS_COMBINED = 4, HAS_AUTOMATON = 8 };

static const ph_case cases[] = {
    {"dna mismatches, slots", SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 4, 40, 20, 0, 0, HAS_SLOTS | HAS_COMBINED},
    {"dna mismatches, IUPAC keys", SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 2, 60, 20, 1, 0, HAS_COMBINED},
    {"dna edits, death tables", SM_ALPHABET_DNA, SM_MATCH_EDITS, 2, 60, 20, 0, 0, HAS_DEATH | HAS_COMBINED},
    {"dna edits, pieces of two lengths", SM_ALPHABET_DNA, SM_MATCH_EDITS, 3, 30, 27, 0, 0, HAS_DEATH | HAS_COMBINED},
    {"dna edits, long keys (automaton)", SM_ALPHABET_DNA, SM_MATCH_EDITS, 2, 8, 70, 0, 0, HAS_AUTOMATON},
    {"text mismatches (automaton)", SM_ALPHABET_TEXT, SM_MATCH_MISMATCHES, 1, 10, 12, 0, 0, HAS_AUTOMATON},
    /* 1040 pieces of 4 bases under every code of 10: too many for the
       combined table, so the tables of each length serve. */
    {"dna mismatches, no combined table", SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 1, 521, 8, 0, 20, 0},
    /* Pieces of 11 and 12 bases (the automaton before format 4). */
    {"dna mismatches, pieces of 11 and 12 bases", SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 2, 40, 35, 0, 0, HAS_COMBINED},
    {"dna edits, pieces of 12 bases", SM_ALPHABET_DNA, SM_MATCH_EDITS, 1, 40, 24, 0, 0, HAS_DEATH | HAS_COMBINED},
    /* Many short keys beside long ones: the tables of each length with
       their probes, up to 12 bases. */
    {"dna mismatches, probes of 4 to 12 bases", SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 2, 1100, 12, 0, 36, 0},
};

static void scan_once(const uint8_t *section, const uint8_t *text, size_t n) {
    sm_ph_state *st = sm_ph_state_new(section, sm_cpu());
    if (!st) abort();
    sm_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.own_hi = UINT64_MAX;
    sm_ph_state_reset(st);
    size_t half = n / 2;
    sm_ph_scan(section, st, text, half, 0, &sink);
    sm_ph_scan(section, st, text + half, n - half, half, &sink);
    sm_ph_finish(section, st, n, &sink);
    free(sink.hits);
    sm_ph_state_free(st);
}

static void test_case(tu_rng *rng, const ph_case *c) {
    uint32_t n = c->nkeys, longest = c->len > c->long_len ? c->len : c->long_len;
    char *bytes = malloc((size_t)n * longest);
    sm_ac_key *keys = calloc(n, sizeof *keys);
    if (!bytes || !keys) abort();
    for (uint32_t i = 0; i < n; i++) {
        char *s = bytes + (size_t)i * longest;
        uint32_t len = i == n - 1 && c->long_len ? c->long_len : c->len;
        if (c->alphabet == SM_ALPHABET_TEXT) tu_random_from(rng, s, len, "abcdefgh");
        else tu_random_dna(rng, s, len);
        if (c->iupac) s[3] = 'R';
        keys[i].seq = (const uint8_t *)s;
        keys[i].len = len;
        keys[i].output = i * 2;
    }
    sm_buf sec;
    memset(&sec, 0, sizeof sec);
    sm_error err;
    int rc = sm_ph_build(keys, n, c->alphabet, 0, c->match, c->k, 0, 0, &sec, &err);
    if (!tu_check(rc == SM_OK, "%s: build: %s", c->what, rc ? err.message : "")) goto done;
    tu_check(sm_ph_validate(sec.data, sec.len, n * 2, c->match, &err) == SM_OK, "%s: a fresh section is refused: %s",
             c->what, err.message);
    const sm_ph_header *h = (const sm_ph_header *)sec.data;
    unsigned has = (h->seed_slots_off ? HAS_SLOTS : 0) | (h->alive_off ? HAS_DEATH : 0) |
                   (h->seed_all_size ? HAS_COMBINED : 0) | (h->ac_off ? HAS_AUTOMATON : 0);
    tu_check(has == c->has, "%s: the section holds tables %#x, not %#x", c->what, has, c->has);
    tu_check(sm_ph_validate(sec.data, sec.len, n * 2 - 2, c->match, &err) != SM_OK,
             "%s: an output id past the patterns is accepted", c->what);
    /* A probe that disagrees with its piece or key is refused. */
    for (uint32_t L = 1; L <= SM_PH_SEED_MAX; L++) {
        if (!h->seed_probe_off[L]) continue;
        uint8_t *bad = sm_aligned_alloc(sec.len);
        if (!bad) abort();
        for (size_t field = 0; field < sizeof(sm_ph_probe); field += 4) {
            memcpy(bad, sec.data, sec.len);
            bad[h->seed_probe_off[L] + field] ^= 1;
            tu_check(sm_ph_validate(bad, sec.len, n * 2, c->match, &err) != SM_OK,
                     "%s: a probe of %u bases with byte %zu changed is accepted", c->what, L, field);
        }
        sm_aligned_free(bad);
    }
    sm_match other = c->match == SM_MATCH_EDITS ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
    tu_check(sm_ph_validate(sec.data, sec.len, n * 2, other, &err) != SM_OK, "%s: the other match kind is accepted",
             c->what);

    size_t tlen = 5000;
    uint8_t *text = malloc(tlen);
    uint8_t *copy = sm_aligned_alloc(sec.len);
    if (!text || !copy) abort();
    if (c->alphabet == SM_ALPHABET_TEXT) tu_random_from(rng, (char *)text, tlen, "abcdefghij");
    else tu_random_from(rng, (char *)text, tlen, "ACGTACGTACGTACGTN");
    /* Occurrences to verify: keys copied into the text. */
    for (int j = 0; j < 20; j++) {
        const sm_ac_key *key = &keys[tu_rng_below(rng, n)];
        memcpy(text + tu_rng_below(rng, (uint32_t)(tlen - key->len)), key->seq, key->len);
    }
    scan_once(sec.data, text, tlen);

    for (size_t cut = 0; cut < sec.len; cut += 1 + sec.len / 40) {
        memcpy(copy, sec.data, cut);
        tu_check(sm_ph_validate(copy, cut, n * 2, c->match, &err) != SM_OK, "%s: truncated to %zu bytes accepted",
                 c->what, cut);
    }
    unsigned refused = 0, rounds = tu_scaled(300);
    for (unsigned t = 0; t < rounds; t++) {
        memcpy(copy, sec.data, sec.len);
        int flips = 1 + (int)tu_rng_below(rng, 3);
        for (int f = 0; f < flips; f++) {
            /* Half the flips in the header, where every field is read. */
            size_t at = tu_rng_chance(rng, 50) ? tu_rng_below(rng, (uint32_t)sizeof(sm_ph_header))
                                                : tu_rng_below(rng, (uint32_t)sec.len);
            copy[at] ^= (uint8_t)(1u << tu_rng_below(rng, 8));
        }
        if (sm_ph_validate(copy, sec.len, n * 2, c->match, &err) != SM_OK) {
            refused++;
            continue;
        }
        scan_once(copy, text, tlen);
    }
    tu_check(refused > 0, "%s: no corruption is noticed (%u rounds)", c->what, rounds);
    free(text);
    sm_aligned_free(copy);
done:
    sm_buf_free(&sec);
    free(keys);
    free(bytes);
}

/* The least edit distance of key against a text ending at each end (any
   start), into cost[1..n] (cost[0] unused). */
static void edit_ends(const char *key, size_t m, const uint8_t *text, size_t n, uint32_t *cost) {
    uint32_t *col = malloc((m + 1) * sizeof *col);
    if (!col) abort();
    for (size_t i = 0; i <= m; i++) col[i] = (uint32_t)i;
    for (size_t j = 1; j <= n; j++) {
        uint32_t diag = col[0];
        col[0] = 0;
        for (size_t i = 1; i <= m; i++) {
            uint32_t up = col[i], best = diag + ((uint8_t)key[i - 1] != text[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (col[i - 1] + 1 < best) best = col[i - 1] + 1;
            diag = up;
            col[i] = best;
        }
        cost[j] = col[m];
    }
    free(col);
}

static int by_hit(const void *a, const void *b) {
    const sm_rawhit *x = a, *y = b;
    if (x->pattern != y->pattern) return x->pattern < y->pattern ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* section over text in pieces of `piece` bytes into sink (counting when
   counts is set, else storing); the state, for what it holds, to free. */
static sm_ph_state *scan_ends(const uint8_t *section, const uint8_t *text, size_t n, size_t piece, uint64_t *counts,
                              sm_sink *sink) {
    sm_ph_state *st = sm_ph_state_new(section, sm_cpu());
    if (!st) abort();
    memset(sink, 0, sizeof *sink);
    sink->own_hi = UINT64_MAX;
    sink->counts = counts;
    sm_ph_state_reset(st);
    for (size_t at = 0; at < n; at += piece)
        sm_ph_scan(section, st, text + at, n - at < piece ? n - at : piece, at, sink);
    sm_ph_finish(section, st, n, sink);
    return st;
}

/* Keys of 12 A's with at most one other base and 1 edit: over a run of A
   every position ends an alignment of every key. */
enum { CROWD_LEN = 12 };

static int crowd_section(uint32_t nkeys, char (*seqs)[CROWD_LEN], sm_buf *sec) {
    sm_ac_key *keys = calloc(nkeys, sizeof *keys);
    if (!keys) abort();
    for (uint32_t i = 0; i < nkeys; i++) {
        memset(seqs[i], 'A', CROWD_LEN);
        if (i > 0) seqs[i][(i - 1) / 3 % CROWD_LEN] = "CGT"[(i - 1) % 3];
        keys[i].seq = (const uint8_t *)seqs[i];
        keys[i].len = CROWD_LEN;
        keys[i].output = i * 2;
    }
    memset(sec, 0, sizeof *sec);
    sm_error err;
    int rc = sm_ph_build(keys, nkeys, SM_ALPHABET_DNA, 0, SM_MATCH_EDITS, 1, 0, 0, sec, &err);
    free(keys);
    return tu_check(rc == SM_OK, "crowded ends: build: %s", rc ? err.message : "");
}

static void crowded_ends(tu_rng *rng) {
    /* 37 keys alike over runs of A among random bases, fed in pieces:
       every end and cost against the edit distance (keys whose ends share
       a slot must not share an event) */
    enum { KEYS = 37 };
    char seqs[KEYS][CROWD_LEN];
    sm_buf sec;
    if (crowd_section(KEYS, seqs, &sec)) {
        const size_t n = 6000;
        uint8_t *text = malloc(n);
        uint32_t *cost = malloc((n + 1) * sizeof *cost);
        if (!text || !cost) abort();
        /* random bases with short runs of A (few ends at a time: an end's
           slot stays as it was) and one long run (every slot in turn) */
        tu_random_dna(rng, (char *)text, n);
        for (size_t at = 100; at + 40 < n; at += 150 + tu_rng_below(rng, 100))
            memset(text + at, 'A', 13 + tu_rng_below(rng, 8));
        memset(text + 2500, 'A', 1000);
        size_t want_n = 0, want_cap = 1 << 16;
        sm_rawhit *want = malloc(want_cap * sizeof *want);
        for (uint32_t i = 0; i < KEYS; i++) {
            edit_ends(seqs[i], CROWD_LEN, text, n, cost);
            for (size_t e = 1; e <= n; e++) {
                if (cost[e] > 1) continue;
                if (want_n == want_cap) want = realloc(want, (want_cap *= 2) * sizeof *want);
                want[want_n++] = (sm_rawhit){.end = e, .pattern = i, .errors = (uint16_t)cost[e]};
            }
        }
        sm_sink sink;
        sm_ph_state *st = scan_ends(sec.data, text, n, 1777, NULL, &sink);
        qsort(sink.hits, sink.n, sizeof *sink.hits, by_hit);
        qsort(want, want_n, sizeof *want, by_hit);
        size_t first = 0;
        while (first < sink.n && first < want_n && sink.hits[first].pattern == want[first].pattern &&
               sink.hits[first].end == want[first].end && sink.hits[first].errors == want[first].errors)
            first++;
        tu_check(sink.n == want_n && first == want_n,
                 "crowded ends: %zu ends of %u keys, %zu expected (the first difference at %zu)", sink.n, KEYS, want_n,
                 first);
        free(sink.hits);
        sm_ph_state_free(st);
        free(want);
        free(cost);
        free(text);
        sm_buf_free(&sec);
    }
    /* 5000 copies of one key (keys of their own), one run of A among
       random bases: ends of different keys fall in one slot */
    {
        enum { COPIES = 5000 };
        char one[CROWD_LEN];
        memset(one, 'A', CROWD_LEN);
        sm_ac_key *keys = calloc(COPIES, sizeof *keys);
        if (!keys) abort();
        for (uint32_t i = 0; i < COPIES; i++)
            keys[i] = (sm_ac_key){.seq = (const uint8_t *)one, .len = CROWD_LEN, .output = i * 2};
        sm_error err;
        memset(&sec, 0, sizeof sec);
        int rc = sm_ph_build(keys, COPIES, SM_ALPHABET_DNA, 0, SM_MATCH_EDITS, 1, 0, 0, &sec, &err);
        free(keys);
        if (tu_check(rc == SM_OK, "copies of a key: build: %s", rc ? err.message : "")) {
            uint8_t text[300];
            uint32_t cost[301];
            tu_random_dna(rng, (char *)text, sizeof text);
            memset(text + 140, 'A', 16);
            edit_ends(one, CROWD_LEN, text, sizeof text, cost);
            uint64_t want = 0, *counts = calloc(COPIES, sizeof *counts);
            if (!counts) abort();
            for (size_t e = 1; e <= sizeof text; e++) want += cost[e] <= 1;
            sm_sink sink;
            sm_ph_state *st = scan_ends(sec.data, text, sizeof text, sizeof text, counts, &sink);
            uint32_t wrong = 0;
            for (uint32_t i = 0; i < COPIES; i++) wrong += counts[i] != want;
            tu_check(want > 0 && wrong == 0, "copies of a key: %u of %u keys with other than %llu ends", wrong, COPIES,
                     (unsigned long long)want);
            sm_ph_state_free(st);
            free(counts);
            sm_buf_free(&sec);
        }
    }
    /* 8 keys over 256 KiB of A (2 million ends, about 6 million anchors'
       pushes): what the state holds stays small */
    char seqs8[8][CROWD_LEN];
    if (crowd_section(8, seqs8, &sec)) {
        const size_t n = (size_t)256 << 10;
        uint8_t *text = malloc(n);
        uint64_t counts[8] = {0};
        if (!text) abort();
        memset(text, 'A', n);
        sm_sink sink;
        sm_ph_state *st = scan_ends(sec.data, text, n, n, counts, &sink);
        uint64_t ends = 0;
        for (int i = 0; i < 8; i++) ends += counts[i];
        tu_check(ends == 8 * (uint64_t)(n - CROWD_LEN + 2), "crowded ends: %llu ends over A's, %llu expected",
                 (unsigned long long)ends, (unsigned long long)(8 * (uint64_t)(n - CROWD_LEN + 2)));
        tu_check(st->events_cap * sizeof *st->events <= ((size_t)2 << 20),
                 "crowded ends: %zu ends held at once (%zu bytes)", st->events_cap,
                 st->events_cap * sizeof *st->events);
        sm_ph_state_free(st);
        free(text);
        sm_buf_free(&sec);
    }
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(7));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_case(&rng, &cases[i]);
    crowded_ends(&rng);
    return tu_summary("test_pigeonhole");
}
