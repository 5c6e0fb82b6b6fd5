/* The guide engine's sites, from mismatch masks: the code the CPU scan,
 * the GPU kernel and its stand-in share (C that nvcc and a C compiler both
 * read; engines/gpu_part.h).
 *
 * A mask M has two bits per guide symbol in text order (symbol j of the
 * window at bits 2j, 2j + 1) and bit 2j set when symbol j does not match
 * the text it is paired with. M[t] pairs the guide with the text moved by
 * shift t: symbol j with text[base + t + j], where base is the window's
 * first position without a bulge (the PAM's start - L for guides to its
 * left, its end for guides to its right). Shifts are taken in lookup order
 * (sm_gd_shift): 0, then each DNA bulge b = 1 .. dna (its far symbols pair
 * with the text b further from the PAM), then each RNA bulge (b nearer).
 *
 * The section's records (engines/guide/guide.h describes the section) are
 * here too, plain C for the kernel to read.
 */
#ifndef SM_GUIDE_CORE_H
#define SM_GUIDE_CORE_H

#include <stdint.h>

#include "engines/gpu_part.h"

/* ------------------------------------------------------------ the section */

#define SM_GUIDE_MAGIC "SMGUIDE1"
/* Longest guide (PAM not counted): its symbols fit one word, two bits each. */
#define SM_GUIDE_MAX_LENGTH 32u
/* Longest PAM. */
#define SM_GUIDE_MAX_PAM 32u
/* Longest seed, and the most strings a key's seed may stand for (IUPAC). */
#define SM_GUIDE_SEED_MAX 8u
#define SM_GUIDE_MAX_EXPANSION 64u
/* Shifts a piece is looked up at: none, each DNA bulge, each RNA bulge. */
#define SM_GUIDE_MAX_SHIFTS 17u

typedef struct {
    uint32_t output;      /* pattern * 2 + reverse */
    uint32_t group;
    /* The guide's symbols in text order (symbol j of the text window at
       bits 2j, 2j + 1): its base codes (A 0, C 1, G 2, T 3) and care, 01
       in the lanes of bases (00: N); valid when packed. */
    uint64_t code, care;
    uint32_t packed;      /* 1: every symbol is a base or N */
    uint32_t brute;       /* 1: checked at every PAM of its group */
    uint8_t sets[SM_GUIDE_MAX_LENGTH]; /* nucleotide sets, text order */
} sm_gd_key;

typedef struct {
    uint32_t left;        /* 1: the guides lie left of the PAM */
    uint32_t length;      /* L: every key's guide length */
    uint32_t pieces;      /* P (0: every key is checked at every PAM) */
    uint32_t first_piece; /* its pieces: [first_piece, first_piece + pieces) */
    uint32_t nkeys;       /* keys of the group */
    uint32_t nbrute;      /* of them checked at every PAM: lists[first_brute, + nbrute) */
    uint64_t first_brute;
} sm_gd_group;

typedef struct {
    uint32_t lo;          /* its seed: text-order lanes [lo, lo + len) of the guide window */
    uint32_t len;
    uint64_t lanes;       /* those lanes (01 each) */
    uint64_t index_at;    /* into index: 4^len + 1 entries */
} sm_gd_piece;

typedef struct {
    char magic[8];
    uint32_t nkeys, ngroups, npieces;
    uint32_t k, dna_bulges, rna_bulges;
    uint32_t pam_length;  /* q */
    uint32_t pam_side;    /* sm_pam_side */
    uint32_t flags;       /* SM_FLAG_TEXT_IUPAC */
    uint32_t max_guide;   /* longest guide */
    uint64_t index_words, nlists;
    uint64_t keys_off, groups_off, pieces_off, index_off, lists_off;
    /* The PAM as it reads in the text beside each side's guides (0: guides
       to its right, 1: to its left): nucleotide sets; a side no key uses
       has q zero sets. */
    uint8_t pam_sets[2][SM_GUIDE_MAX_PAM];
} sm_gd_header;

/* ------------------------------------------------------------- the sites */

/* What the sites of one (key, PAM) depend on besides the masks. */
typedef struct {
    uint32_t len;         /* L, guide symbols */
    uint32_t left;        /* 1: the guide lies left of the PAM */
    uint32_t k;           /* mismatches */
    uint32_t dna, rna;    /* longest bulges */
} sm_gd_shape;

/* A site of one (key, PAM): the text symbols its guide part spans beyond
   L (+b: a DNA bulge of b, -b: an RNA bulge of b, 0: none) and its
   mismatches; at: guide symbols between the bulge and the PAM. */
typedef struct {
    int32_t delta;
    uint32_t mismatches;
    uint32_t at;
} sm_gd_site;

#define SM_GD_NONE 0xffffffffu
#define SM_GD_LANES 0x5555555555555555ull

/* The text shift of lookup shift index ti. */
SM_GPU_FN int32_t sm_gd_shift(const sm_gd_shape *g, uint32_t ti) {
    int32_t away = g->left ? -1 : 1; /* the direction away from the PAM */
    if (ti == 0) return 0;
    if (ti <= g->dna) return away * (int32_t)ti;
    return -away * (int32_t)(ti - g->dna);
}

/* The lanes of n symbols from lane 0. */
SM_GPU_FN uint64_t sm_gd_lanes(uint32_t n) { return n >= 32 ? SM_GD_LANES : SM_GD_LANES & ((1ull << (2 * n)) - 1); }

/* The lanes of the guide symbols at distances [lo, hi) from the PAM. */
SM_GPU_FN uint64_t sm_gd_dist_lanes(uint32_t L, uint32_t left, uint32_t lo, uint32_t hi) {
    if (hi <= lo) return 0;
    uint32_t first = left ? L - hi : lo;
    return sm_gd_lanes(hi - lo) << (2 * first);
}

/* Bit of the symbol at distance d from the PAM. */
SM_GPU_FN uint32_t sm_gd_bit(uint64_t m, uint32_t L, uint32_t left, uint32_t d) {
    uint32_t j = left ? L - 1 - d : d;
    return (uint32_t)(m >> (2 * j)) & 1u;
}

/* A mismatch mask from 32 packed text symbols (codes, and 01 lanes where
   the text holds no base) and a packed key: a lane set where a base of the
   key differs or the text has no base (N in the key matches any base). */
SM_GPU_FN uint64_t sm_gd_packed_mask(uint64_t text, uint64_t bad, uint64_t code, uint64_t care, uint64_t lanes) {
    uint64_t diff = text ^ code;
    return (((diff | (diff >> 1)) & care) | (bad & lanes)) & lanes;
}

/* Lower bounds of the mismatches of any DNA bulge (b 0) or RNA bulge of b
   at this PAM, from m0 and the bulge's shifted mask ms: symbol 0 is always
   near the PAM and L - 1 always beyond the bulge; the others count at least
   where both masks have them (less the b an RNA bulge leaves unpaired).
   SM_GD_NONE when the guide is too short for such a bulge. */
SM_GPU_FN uint32_t sm_gd_bulge_bound(const sm_gd_shape *g, uint64_t m0, uint64_t ms, uint32_t b) {
    uint32_t L = g->len, left = g->left;
    if (L < b + 2) return SM_GD_NONE;
    uint32_t both = (uint32_t)SM_GPU_POPC64(m0 & ms & sm_gd_dist_lanes(L, left, 1, L - 1));
    return sm_gd_bit(m0, L, left, 0) + sm_gd_bit(ms, L, left, L - 1) + (both > b ? both - b : 0);
}

/* The best DNA bulge of b at this PAM: the least mismatches over the
   bulge positions i = 1 .. L - 1 (symbols d < i paired without shift, d >=
   i through ms), the smallest i on ties; SM_GD_NONE when over k. */
SM_GPU_FN uint32_t sm_gd_best_dna(const sm_gd_shape *g, uint64_t m0, uint64_t ms, uint32_t *at) {
    uint32_t L = g->len, left = g->left;
    uint32_t bound = sm_gd_bulge_bound(g, m0, ms, 0);
    if (bound == SM_GD_NONE || bound > g->k) return SM_GD_NONE;
    uint32_t near = sm_gd_bit(m0, L, left, 0), far = (uint32_t)SM_GPU_POPC64(ms & sm_gd_dist_lanes(L, left, 1, L));
    uint32_t best = near + far, best_i = 1;
    for (uint32_t i = 2; i < L && near <= g->k; i++) {
        near += sm_gd_bit(m0, L, left, i - 1);
        far -= sm_gd_bit(ms, L, left, i - 1);
        if (near + far < best) {
            best = near + far;
            best_i = i;
        }
    }
    if (best > g->k) return SM_GD_NONE;
    *at = best_i;
    return best;
}

/* The best RNA bulge of b: positions i = 1 .. L - 1 - b (symbols d < i
   paired without shift, [i, i + b) unpaired, d >= i + b through ms). */
SM_GPU_FN uint32_t sm_gd_best_rna(const sm_gd_shape *g, uint64_t m0, uint64_t ms, uint32_t b, uint32_t *at) {
    uint32_t L = g->len, left = g->left;
    uint32_t bound = sm_gd_bulge_bound(g, m0, ms, b);
    if (bound == SM_GD_NONE || bound > g->k) return SM_GD_NONE;
    uint32_t near = sm_gd_bit(m0, L, left, 0), far = (uint32_t)SM_GPU_POPC64(ms & sm_gd_dist_lanes(L, left, 1 + b, L));
    uint32_t best = near + far, best_i = 1;
    for (uint32_t i = 2; i + b < L && near <= g->k; i++) {
        near += sm_gd_bit(m0, L, left, i - 1);
        far -= sm_gd_bit(ms, L, left, i - 1 + b);
        if (near + far < best) {
            best = near + far;
            best_i = i;
        }
    }
    if (best > g->k) return SM_GD_NONE;
    *at = best_i;
    return best;
}

/* Every site of a key at one PAM, from its masks m[0 .. 1 + dna + rna):
   into out (room for 1 + dna + rna), their number returned. */
SM_GPU_FN uint32_t sm_gd_sites(const sm_gd_shape *g, const uint64_t *m, sm_gd_site *out) {
    uint32_t n = 0, at = 0;
    uint32_t plain = (uint32_t)SM_GPU_POPC64(m[0]);
    if (plain <= g->k) {
        out[n].delta = 0;
        out[n].mismatches = plain;
        out[n++].at = 0;
    }
    for (uint32_t b = 1; b <= g->dna; b++) {
        uint32_t x = sm_gd_best_dna(g, m[0], m[b], &at);
        if (x == SM_GD_NONE) continue;
        out[n].delta = (int32_t)b;
        out[n].mismatches = x;
        out[n++].at = at;
    }
    for (uint32_t b = 1; b <= g->rna; b++) {
        uint32_t x = sm_gd_best_rna(g, m[0], m[g->dna + b], b, &at);
        if (x == SM_GD_NONE) continue;
        out[n].delta = -(int32_t)b;
        out[n].mismatches = x;
        out[n++].at = at;
    }
    return n;
}

/* The lookups in order: shift index ti, then piece j (piece 0, which holds
   the symbol beside the PAM, never lies beyond a bulge: shift 0 only).
   Was the key found at this PAM by a lookup before (ti, j)? A lookup finds
   it when its seed is exact there: no mismatch in its lanes of m[ti'].
   The lookup that finds it first verifies it, so each (key, PAM) is
   verified once. */
SM_GPU_FN int sm_gd_found_before(const uint64_t *m, const sm_gd_piece *pieces, uint32_t npieces, uint32_t ti,
                                      uint32_t j) {
    for (uint32_t t = 0; t <= ti; t++) {
        uint32_t from = t == 0 ? 0 : 1, to = t == ti ? j : npieces;
        for (uint32_t p = from; p < to; p++)
            if (!(m[t] & SM_GPU_LDG(&pieces[p].lanes))) return 1;
    }
    return 0;
}

/* The site's extent: [start, end) from the PAM's start p, q and L. */
SM_GPU_FN void sm_gd_extent(uint64_t p, uint32_t q, uint32_t L, uint32_t left, int32_t delta, uint64_t *start,
                                 uint64_t *end) {
    if (left) {
        *end = p + q;
        *start = p - (uint64_t)((int64_t)L + delta);
    } else {
        *start = p;
        *end = p + q + (uint64_t)((int64_t)L + delta);
    }
}

#endif /* SM_GUIDE_CORE_H */
