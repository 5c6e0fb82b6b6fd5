/* The pigeonhole filter's plans: each key cut into k + 1 contiguous pieces
 * with the fewest expected hits, and the figures the planner asks for. */
#include <math.h>
#include <stdlib.h>

#include "engines/approx/pigeonhole_private.h"

/* Assumed information of one text symbol, in bits (English-like text). */
#define PH_TEXT_SYMBOL_BITS 4.0

static double symbol_bits(uint8_t byte, sm_alphabet alphabet) {
    if (alphabet == SM_ALPHABET_TEXT) return PH_TEXT_SYMBOL_BITS;
    unsigned n = APX_POPCOUNT(sm_nt_set[byte] & 15u);
    return n ? 2.0 - log2((double)n) : 0.0;
}

/* Greedy cut into pieces of at least t bits each: returns how many pieces of
   at least t bits a left-to-right pass closes (the rest joins the last). */
static uint32_t pieces_at_least(const double *bits, uint32_t m, double t) {
    uint32_t count = 0;
    double acc = 0;
    for (uint32_t i = 0; i < m; i++) {
        acc += bits[i];
        if (acc >= t) { count++; acc = 0; }
    }
    return count;
}

/* Keys up to this length get the exact plan (quadratic in the length). */
#define PH_EXACT_PLAN_MAX 128u

/* The cuts that minimise the expected piece hits, sum of 2^-bits over the
   pieces, by dynamic programming over cut points. A piece's 2^-bits is a
   ratio of prefix weights (weight[i] = 2^-(bits of the first i symbols)),
   so the inner loop has no exp2. work holds 3 (parts + 1)(m + 1) doubles. */
static void plan_fewest_hits(const double *bits, uint32_t m, uint32_t parts, uint32_t *cut, double *work) {
    size_t cells = (size_t)(parts + 1) * (m + 1);
    double *best = work, *weight = work + cells;
    uint32_t *from = (uint32_t *)(work + cells + m + 1);
    double prefix = 0;
    weight[0] = 1;
    for (uint32_t i = 0; i < m; i++) {
        prefix += bits[i];
        weight[i + 1] = exp2(-prefix);
    }
#define CELL(p, i) ((size_t)(p) * (m + 1) + (i))
    for (uint32_t i = 0; i <= m; i++) best[CELL(1, i)] = i ? weight[i] : INFINITY;
    for (uint32_t p = 2; p <= parts; p++)
        for (uint32_t i = 0; i <= m; i++) {
            double b = INFINITY;
            uint32_t at = 0;
            for (uint32_t j = p - 1; j < i; j++) {
                double c = best[CELL(p - 1, j)] + weight[i] / weight[j];
                if (c < b) {
                    b = c;
                    at = j;
                }
            }
            best[CELL(p, i)] = b;
            from[CELL(p, i)] = at;
        }
    cut[parts] = m;
    for (uint32_t p = parts; p > 1; p--) cut[p - 1] = from[CELL(p, cut[p])];
    cut[0] = 0;
#undef CELL
}

/* Cuts key into parts contiguous pieces: the fewest expected hits for keys
   up to PH_EXACT_PLAN_MAX, else the greatest least piece (greedy). cut[p] =
   first position of piece p, cut[parts] = m. Returns the least piece's bits. */
static double plan_pieces(const uint8_t *seq, uint32_t m, sm_alphabet alphabet, uint32_t parts, double *bits,
                          uint32_t *cut, double *work) {
    double total = 0;
    for (uint32_t i = 0; i < m; i++) total += bits[i] = symbol_bits(seq[i], alphabet);
    if (m <= PH_EXACT_PLAN_MAX && work) {
        plan_fewest_hits(bits, m, parts, cut, work);
        double least = INFINITY;
        for (uint32_t q = 0; q < parts; q++) {
            double b = 0;
            for (uint32_t i = cut[q]; i < cut[q + 1]; i++) b += bits[i];
            if (b < least) least = b;
        }
        return least;
    }
    /* Binary search on the threshold; the greedy pass is exact for it. */
    double lo = 0, hi = total / parts;
    for (int it = 0; it < 40; it++) {
        double mid = (lo + hi) / 2;
        if (pieces_at_least(bits, m, mid) >= parts) lo = mid;
        else hi = mid;
    }
    /* Cut at lo; pieces must not be empty even when every bit count is 0. */
    uint32_t p = 0;
    double acc = 0;
    cut[0] = 0;
    for (uint32_t i = 0; i < m && p + 1 < parts; i++) {
        acc += bits[i];
        uint32_t left = m - (i + 1);               /* symbols after i */
        if ((acc >= lo && lo > 0) || left == parts - (p + 1)) {
            cut[++p] = i + 1;
            acc = 0;
        }
    }
    cut[parts] = m;
    double least = INFINITY;
    for (uint32_t q = 0; q < parts; q++) {
        double b = 0;
        for (uint32_t i = cut[q]; i < cut[q + 1]; i++) b += bits[i];
        if (b < least) least = b;
    }
    return least;
}

uint64_t sm_ph_piece_expansions(const uint8_t *seq, uint32_t len, sm_alphabet alphabet) {
    if (alphabet == SM_ALPHABET_TEXT) return 1;
    uint64_t n = 1;
    for (uint32_t i = 0; i < len && n <= PH_MAX_PIECE_EXPANSION; i++) n *= APX_POPCOUNT(sm_nt_set[seq[i]] & 15u);
    return n;
}

double sm_ph_walk_plans(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k, uint32_t max_expansion,
                        ph_piece_fn fn, void *ctx) {
    uint32_t max_len = 0;
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].len > max_len) max_len = keys[i].len;
    double *bits = malloc(((size_t)max_len + 1) * sizeof *bits);
    uint32_t *cut = malloc(((size_t)k + 2) * sizeof *cut);
    /* the exact plan's tables, once for every key */
    uint32_t exact_len = max_len < PH_EXACT_PLAN_MAX ? max_len : PH_EXACT_PLAN_MAX;
    size_t cells = ((size_t)k + 2) * (exact_len + 1);
    double *work = malloc((3 * cells + exact_len + 1) * sizeof *work);
    if (!bits || !cut || !work) {
        free(bits);
        free(cut);
        free(work);
        return -1;
    }
    double least = INFINITY;
    for (size_t i = 0; i < nkeys && least > 0; i++) {
        if (keys[i].len <= k) { least = 0; break; }
        double l = plan_pieces(keys[i].seq, keys[i].len, alphabet, k + 1, bits, cut, work);
        if (l < least) least = l;
        for (uint32_t p = 0; p <= k; p++) {
            uint32_t len = cut[p + 1] - cut[p];
            if (sm_ph_piece_expansions(keys[i].seq + cut[p], len, alphabet) > max_expansion) { least = 0; break; }
            if (fn) {
                double b = 0;
                for (uint32_t j = cut[p]; j < cut[p + 1]; j++) b += bits[j];
                fn(ctx, i, p, cut[p], len, b);
            }
        }
    }
    free(bits);
    free(cut);
    free(work);
    return least == INFINITY ? 0 : least;
}

double sm_ph_min_piece_bits(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k,
                            uint32_t max_expansion) {
    if (max_expansion == 0 || max_expansion > PH_MAX_PIECE_EXPANSION) max_expansion = PH_MAX_PIECE_EXPANSION;
    double l = sm_ph_walk_plans(keys, nkeys, alphabet, k, max_expansion, NULL, NULL);
    return l < 0 ? 0 : l;
}

static void add_rate(void *ctx, size_t key, uint32_t index, uint32_t offset, uint32_t length, double bits) {
    (void)key, (void)index, (void)offset, (void)length;
    *(double *)ctx += exp2(-bits);
}

double sm_ph_hit_rate(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k) {
    double rate = 0;
    sm_ph_walk_plans(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION, add_rate, &rate);
    return rate;
}
