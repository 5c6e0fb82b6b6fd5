/* The pigeonhole filter's section against damage: for each way it finds
 * its pieces (k-mer seed tables with and without slots and death tables,
 * pieces of several lengths, with and without the combined table, the
 * embedded automaton for long pieces and text), a fresh section validates, a short or mislabelled one is refused
 * (so is one whose probes disagree with its pieces or keys),
 * and a section with random bytes flipped anywhere is either refused or
 * scanned (with a sanitizer build, without reading outside it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "engines/approx/pigeonhole.h"
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

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(7));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_case(&rng, &cases[i]);
    return tu_summary("test_pigeonhole");
}
