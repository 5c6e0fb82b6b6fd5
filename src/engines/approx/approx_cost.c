/* The approximate engines' cost model (see approx_cost.h). */
#include "engines/approx/approx_cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engines/approx/lanes.h"
#include "engines/approx/pigeonhole_private.h"

enum { COST_MISMATCH, COST_MYERS, COST_WAVEFRONT, COST_PIGEONHOLE, COST_ENGINES };
#define COST_TERMS 8

/* ns per text byte per unit of each term, by SIMD level (0: no text lanes,
   1: AVX2, 2: AVX-512 with VBMI), fitted by bench/fit_planner.py to
   bench/run-planner.sh on two machines together, a 2-core and a 16-core
   Xeon (docs/architecture.md lists the terms, the fit and its errors).
   Rows: mismatch, myers, wavefront, pigeonhole. */
static const double cost_constants[3][COST_ENGINES][COST_TERMS] = {
    {
        {0, 0, 1.056, 1.061, 0, 0, 0, 0}, /* mismatch */
        {0, 0, 5.166, 0.6439, 0, 7.871, 1.441, 0}, /* myers */
        {0.4604, 11.03, 19.51, 0, 0, 0, 0, 0}, /* wavefront */
        {1.895, 0.9526, 6.313, 22.31, 13.75, 0, 0, 0}, /* pigeonhole */
    },
    {
        {1.122, 0.7378, 0.3943, 15.77, 1.489e+04, 0, 0, 0}, /* mismatch */
        {7.547, 0.2811, 8.104, 0.7617, 15.77, 0, 22.88, 0}, /* myers */
        {0.3007, 9.006, 317.9, 0, 0, 0, 0, 0}, /* wavefront */
        {1.893, 1.21, 7.244, 23.38, 13.91, 0, 0, 0}, /* pigeonhole */
    },
    {
        {0.9331, 0.145, 0.412, 15.3, 0, 0, 0, 0}, /* mismatch */
        {3.919, 0.1553, 5.208, 1.098, 11.44, 0, 8.627, 0}, /* myers */
        {0.2847, 10.19, 9.015e-13, 0, 0, 0, 0, 0}, /* wavefront */
        {1.361, 1.172, 7.485, 21.11, 17.69, 0, 0, 0}, /* pigeonhole */
    },
};

/* Match-word rows a lane scan needs: dna bases (and one row for every other
   byte), all 16 sets when the text's IUPAC codes match, text: one per
   distinct key byte and one for the rest. */
static unsigned lane_classes(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags) {
    if (alphabet == SM_ALPHABET_DNA) return (flags & SM_FLAG_TEXT_IUPAC) ? 16 : 5;
    uint8_t seen[256] = {0};
    unsigned n = 1;
    for (size_t i = 0; i < nkeys; i++)
        for (uint32_t j = 0; j < keys[i].len; j++)
            if (!seen[keys[i].seq[j]]) {
                seen[keys[i].seq[j]] = 1;
                n++;
            }
    return n;
}

/* Slices per register of a lane scan over q keys of at most max_len
   symbols (warm-up warm), or 0 when the keys cannot run in lanes at this
   level or records of typical_record bytes (0: long) are too short for
   them (lanes.c: every slice two warm-ups and APX_LANES_AUTO_LEAST bytes). */
static unsigned slices_per_register(int level, unsigned q, uint32_t max_len, unsigned classes, size_t warm,
                                    uint32_t typical_record) {
    if (level == 0 || q == 0 || q > 16 || max_len > 64) return 0;
    unsigned width = max_len <= 32 ? 32 : 64;
    unsigned per = (level == 2 ? 512u : 256u) / width / q;
    unsigned cap = level == 2 ? (width == 32 ? 32 : 16) : (width == 32 ? 16 : 8);
    if (per < 2 || classes * q > cap) return 0;
    size_t slices = 2 * per <= APX_LANES_MAX_SLICES ? 2 * per : per;
    size_t least = 2 * warm > APX_LANES_AUTO_LEAST ? 2 * warm : APX_LANES_AUTO_LEAST;
    if (typical_record && typical_record < slices * (least + warm)) return 0;
    return per;
}

/* The Myers engine's field width for a key (as its builder packs lanes). */
static uint32_t field_width(uint32_t len, uint32_t k) {
    for (uint32_t w = len; w < 64; w++) {
        uint64_t kk = k < w ? k : w;
        if (((uint64_t)1 << (w - 1)) - 1 >= kk) return w;
    }
    return 64;
}

static int by_length_desc(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* 64-bit lanes the Myers builder fills with the short keys (greedily,
   longest first, floor(64 / width) keys per lane). */
static size_t packed_lanes(const sm_ac_key *keys, size_t nkeys, uint32_t k) {
    uint32_t *len = malloc((nkeys ? nkeys : 1) * sizeof *len);
    size_t n = 0, lanes = 0;
    if (!len) return nkeys;
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].len <= 64) len[n++] = keys[i].len;
    qsort(len, n, sizeof *len, by_length_desc);
    for (size_t i = 0; i < n; lanes++) i += 64 / field_width(len[i], k);
    free(len);
    return lanes;
}

/* Blocks of a long key that Ukkonen's cut-off keeps active on a random text. */
static double active_blocks(uint32_t len, uint32_t k) {
    double blocks = 1 + floor((2.0 * k + 8) / 64);
    double all = (len + 63) / 64;
    return blocks < all ? blocks : all;
}

/* Expected matches per text byte of one key on a random text: ends with
   D(j) <= k (edits) or windows with at most k mismatches, about the sum over
   d <= k of C(m, d) f^d 2^-B, B the key's bits (2 per base, less for IUPAC
   codes, 4 per text symbol) and f the ways an error can fall (dna: 3
   substitutions, or about 4.5 with insertions and deletions; text: 15 and
   16.5 for 16 equally likely symbols). Against the panel, one 20-mer with
   d = 5 to 9 edits: within 2x of the counted ends. */
static double expected_matches(const sm_ac_key *key, sm_alphabet alphabet, int edits, uint32_t k) {
    double bits = 0;
    for (uint32_t i = 0; i < key->len; i++) {
        if (alphabet == SM_ALPHABET_TEXT) {
            bits += 4;
        } else {
            unsigned n = APX_POPCOUNT(sm_nt_set[key->seq[i]] & 15u);
            bits += n ? 2.0 - log2((double)n) : 0.0;
        }
    }
    double f = alphabet == SM_ALPHABET_TEXT ? (edits ? 16.5 : 15) : (edits ? 4.5 : 3);
    uint32_t m = key->len, kk = k < m ? k : m;
    double sum = 0, log2_term = -bits; /* log2 of C(m, d) f^d 2^-B, d = 0 */
    for (uint32_t d = 0; d <= kk; d++) {
        if (d > 0) log2_term += log2((double)(m - d + 1) / d * f);
        sum += exp2(log2_term);
        if (sum >= 1) return 1;
    }
    return sum;
}

static double expected_events(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, int edits, uint32_t k) {
    double events = 0;
    for (size_t i = 0; i < nkeys; i++) events += expected_matches(&keys[i], alphabet, edits, k);
    return events;
}

static void myers_terms(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                        uint32_t record, int level, sm_engine_estimate *e) {
    unsigned q = 0, classes = lane_classes(keys, nkeys, alphabet, flags);
    uint32_t max_short = 0;
    size_t warm = 0;
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].len <= 64) {
            q++;
            if (keys[i].len > max_short) max_short = keys[i].len;
            size_t w = keys[i].len + (k < keys[i].len ? k : keys[i].len) - 1;
            if (w > warm) warm = w;
        }
    unsigned per = slices_per_register(level, q, max_short, classes, warm, record);
    int n = 0;
    if (per) {
        e->terms[0] = 1.0 / per;
        e->terms[1] = 1;
        n = snprintf(e->basis, sizeof e->basis, "text lanes: %u keys, %u slices per register", q, per);
    } else if (q) {
        /* 8 lanes per vector step (AVX-512, or two AVX2 registers); the
           scalar loop steps one lane at a time */
        size_t lanes = packed_lanes(keys, nkeys, k);
        e->terms[2] = level == 0 ? (double)lanes : (double)((lanes + 7) / 8);
        e->terms[3] = 1;
        n = snprintf(e->basis, sizeof e->basis, "%u keys in %zu 64-bit lanes", q, lanes);
    }
    /* Keys over 64 symbols, block-wise: in lanes of one key (64-bit elements). */
    size_t nlong = 0;
    unsigned long_per = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len <= 64) continue;
        nlong++;
        double blocks = active_blocks(keys[i].len, k);
        long_per = slices_per_register(level, 1, 64, classes, keys[i].len + (k < keys[i].len ? k : keys[i].len) - 1,
                                       record);
        if (long_per) e->terms[4] += blocks / long_per;
        else e->terms[5] += blocks;
    }
    e->terms[6] = expected_events(keys, nkeys, alphabet, 1, k);
    if (nlong && n >= 0 && (size_t)n < sizeof e->basis)
        snprintf(e->basis + n, sizeof e->basis - (size_t)n, "%s%zu keys over 64 block-wise%s", n ? "; " : "", nlong,
                 long_per ? " in lanes" : "");
}

static void mismatch_terms(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, uint32_t k,
                           uint32_t record, int level, sm_engine_estimate *e) {
    uint64_t bits = 0;
    uint32_t max_key = 0;
    for (size_t i = 0; i < nkeys; i++) {
        bits += keys[i].len;
        if (keys[i].len > max_key) max_key = keys[i].len;
    }
    uint32_t kk = k < max_key ? k : max_key, planes = 0;
    while (((uint64_t)1 << planes) < (uint64_t)kk + 1) planes++;
    unsigned per = planes <= 3 ? slices_per_register(level, (unsigned)nkeys, max_key,
                                                     lane_classes(keys, nkeys, alphabet, flags), max_key - 1, record)
                               : 0;
    if (per) {
        e->terms[0] = (planes + 1.0) / per;
        e->terms[1] = 1;
        snprintf(e->basis, sizeof e->basis, "text lanes: %zu keys, %u slices per register, %u counter planes", nkeys,
                 per, planes);
    } else {
        uint64_t words = (bits + 63) / 64;
        e->terms[2] = (double)words * (planes + 1);
        e->terms[3] = 1;
        snprintf(e->basis, sizeof e->basis, "%llu bit-vector words x %u counter planes and the overflow plane",
                 (unsigned long long)words, planes);
    }
    e->terms[4] = expected_events(keys, nkeys, alphabet, 0, k);
}

typedef struct {
    const sm_ac_key *keys;
    uint32_t k;
    int edits;
    uint32_t longest_piece;
    double rate, verify_short, verify_long;
} piece_walk;

static void count_piece(void *ctx, size_t key, uint32_t index, uint32_t offset, uint32_t length, double bits) {
    (void)index, (void)offset;
    piece_walk *w = ctx;
    double hits = exp2(-bits);
    uint32_t m = w->keys[key].len;
    w->rate += hits;
    /* A piece hit of k edits anchors a DP over the key on both sides:
       measured, (k + 1)^2 per hit for one-word keys (the neighbouring
       pieces of an occurrence anchor it again, and ends are merged), a band
       of 2k + 1 cells per column (8-cell vectors) over m + 2k columns for
       longer ones. */
    if (w->edits) {
        if (m <= 64) w->verify_short += hits * (w->k + 1.0) * (w->k + 1.0);
        else w->verify_long += hits * (m + 2.0 * w->k) * (2.0 * w->k + 1) / 8;
    }
    if (length > w->longest_piece) w->longest_piece = length;
}

static void pigeonhole_terms(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                             sm_match match, uint32_t k, sm_engine_estimate *e) {
    if (flags & SM_FLAG_TEXT_IUPAC) {
        e->usable = 0;
        snprintf(e->basis, sizeof e->basis, "cannot: IUPAC codes in the text");
        return;
    }
    piece_walk w = {keys, k, match == SM_MATCH_EDITS, 0, 0, 0, 0};
    if (sm_ph_walk_plans(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION, count_piece, &w) <= 0) {
        e->usable = 0;
        snprintf(e->basis, sizeof e->basis, "cannot: a pattern not longer than k, or a piece of too many strings");
        return;
    }
    int seeds = alphabet == SM_ALPHABET_DNA && w.longest_piece <= SM_PH_SEED_MAX;
    e->terms[seeds ? 0 : 1] = 1;
    e->terms[2] = w.verify_short;
    e->terms[3] = w.verify_long;
    e->terms[4] = w.rate;
    e->terms[5] = expected_events(keys, nkeys, alphabet, w.edits, k);
    snprintf(e->basis, sizeof e->basis, "%u pieces found by %s, %.3g expected piece hits per byte",
             (unsigned)(nkeys * (k + 1)), seeds ? "k-mer tables" : "an automaton", w.rate);
}

static void wavefront_terms(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k,
                            sm_engine_estimate *e) {
    double cells = 0;
    for (size_t i = 0; i < nkeys; i++) cells += keys[i].len;
    e->terms[0] = cells;
    e->terms[1] = 1;
    e->terms[2] = expected_events(keys, nkeys, alphabet, 1, k);
    snprintf(e->basis, sizeof e->basis, "%.0f DP cells per byte", cells);
}

static void total(const double *c, sm_engine_estimate *e) {
    e->ns_per_byte = 0;
    if (!e->usable) return;
    for (int t = 0; t < COST_TERMS; t++) e->ns_per_byte += c[t] * e->terms[t];
}

void sm_approx_estimate_at(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                           sm_match match, uint32_t k, uint32_t record, int level, sm_approx_estimates *est) {
    memset(est, 0, sizeof *est);
    if (level < 0) level = 0;
    if (level > 2) level = 2;
    const double(*c)[COST_TERMS] = cost_constants[level];
    est->mismatch.usable = match == SM_MATCH_MISMATCHES;
    est->myers.usable = est->wavefront.usable = match == SM_MATCH_EDITS;
    est->pigeonhole.usable = 1;
    if (est->mismatch.usable) mismatch_terms(keys, nkeys, alphabet, flags, k, record, level, &est->mismatch);
    if (est->myers.usable) {
        myers_terms(keys, nkeys, alphabet, flags, k, record, level, &est->myers);
        wavefront_terms(keys, nkeys, alphabet, k, &est->wavefront);
    }
    pigeonhole_terms(keys, nkeys, alphabet, flags, match, k, &est->pigeonhole);
    total(c[COST_MISMATCH], &est->mismatch);
    total(c[COST_MYERS], &est->myers);
    total(c[COST_WAVEFRONT], &est->wavefront);
    total(c[COST_PIGEONHOLE], &est->pigeonhole);
    /* auto: the direct engine unless the filter is cheaper (never the
       wavefront DP, the reference) */
    const sm_engine_estimate *direct = match == SM_MATCH_MISMATCHES ? &est->mismatch : &est->myers;
    est->choice = match == SM_MATCH_MISMATCHES ? SM_ENGINE_MISMATCH : SM_ENGINE_MYERS;
    if (est->pigeonhole.usable && est->pigeonhole.ns_per_byte < direct->ns_per_byte) est->choice = SM_ENGINE_PIGEONHOLE;
}

void sm_approx_estimate(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, sm_match match,
                        uint32_t k, uint32_t typical_record, sm_approx_estimates *est) {
    apx_lanes_isa isa = sm_apx_lanes_isa_for(SM_APPROX_AUTO);
    sm_approx_estimate_at(keys, nkeys, alphabet, flags, match, k, typical_record,
                          isa == APX_LANES_AVX512 ? 2 : isa == APX_LANES_AVX2 ? 1 : 0, est);
}
