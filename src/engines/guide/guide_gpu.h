/* The guide engine on the GPU: the view, the keys as the kernel reads them
 * and the per-PAM code that the kernel (guide_cuda.cu) and its CPU
 * stand-in (guide_gpu.c) share (engines/gpu_part.h).
 *
 * A GPU has arithmetic to spare where the CPU must filter: a warp takes a
 * chunk, finds its PAMs 32 positions at a time, and at each PAM packs the
 * text around it once (two bits a symbol and a lane per symbol that is no
 * base) into a window the whole warp shares; its lanes then take every key
 * of that side, 32 at a time, each computing the mismatch masks at the
 * shifts a bulge can move it by (engines/guide/guide_core.h). A lower
 * bound from the masks drops nearly every key at once; the few left get
 * their sites from the very code the CPU scan uses. Keys with IUPAC codes
 * other than N, and every key when IUPAC text must match, compare symbol
 * by symbol as the CPU's do.
 *
 * A chunk owns the sites that start in [c0, c1): those of guides right of
 * a PAM at the PAM, those of guides left of it up to the longest guide and
 * DNA bulge before it, so the chunk looks at PAMs in [c0, c1 + longest
 * guide + longest DNA bulge). The window marks every position outside
 * [c0, end) as no base: a site reads only text at or after its start, and
 * a site that reaches past end is past its record.
 */
#ifndef SM_GUIDE_GPU_H
#define SM_GUIDE_GPU_H

#include "engines/guide/guide_core.h"

/* Symbols of a window (the text around one PAM), in words of 32. Enough
   for the longest guide and bulge on each side of the longest PAM. */
#define SM_GD_GPU_WINDOW_WORDS 4u

/* A key as the kernel reads it (the extra bytes, gpu_part's extra): keys
   of guides right of the PAM first, then those left of it. */
typedef struct {
    uint64_t code, care;  /* as the section's key (guide_core.h) */
    uint32_t output;      /* pattern * 2 + reverse */
    uint32_t index;       /* in the section's keys: its symbol sets */
    uint32_t length;      /* L */
    uint32_t packed;      /* 1: compared through the window's codes */
} sm_gd_gpu_key;

/* What the kernel reads besides the section: per text byte its nucleotide
   set (0: matches nothing) and base code (4: no base), then the keys. */
typedef struct {
    uint8_t text_set[256];
    uint8_t code_of[256];
    sm_gd_gpu_key keys[];
} sm_gd_gpu_tables;

/* The view (engines/gpu_part.h). */
typedef struct {
    uint32_t nkeys, k, dna, rna;
    uint32_t q;           /* PAM symbols */
    uint32_t max_guide;
    uint32_t side_first[2], side_keys[2]; /* the keys of guides right (0) and left (1) of the PAM */
    uint32_t pam_sets_off; /* the header's pam_sets in the section */
} sm_gpu_guide;

/* The window's first symbol for a PAM at p: the longest guide and bulge before it. */
SM_GPU_HOSTDEV uint32_t sm_gd_gpu_reach(const sm_gpu_guide *v) {
    return v->max_guide + (v->dna > v->rna ? v->dna : v->rna);
}

/* The PAM positions a chunk looks at: [c0, returned). */
SM_GPU_HOSTDEV uint32_t sm_gd_gpu_pam_end(const sm_gpu_guide *v, sm_gpu_chunk ch) {
    uint64_t hi = (uint64_t)ch.c1 + v->max_guide + v->dna;
    uint64_t last = ch.end >= v->q ? (uint64_t)ch.end - v->q + 1 : 0; /* the PAM lies before end */
    if (hi > last) hi = last;
    return hi > ch.c0 ? (uint32_t)hi : ch.c0;
}

/* Does side's PAM (0: guides right of it, 1: left) lie at p? The caller
   knows p + q <= the chunk's end. */
SM_GPU_FN int sm_gd_gpu_pam_at(const sm_gpu_scan_args *a, const sm_gpu_guide *v, const uint8_t *text_set,
                               uint32_t side, uint32_t p) {
    const uint8_t *sets = a->section + v->pam_sets_off + side * SM_GUIDE_MAX_PAM;
    if (!SM_GPU_LDG(&sets[0])) return 0; /* no key on this side */
    for (uint32_t t = 0; t < v->q; t++)
        if (!(text_set[SM_GPU_LDG(&a->text[p + t])] & SM_GPU_LDG(&sets[t]))) return 0;
    return 1;
}

/* 32 symbols of a window's words from symbol s on (s + 32 <= the window's). */
SM_GPU_HOSTDEV uint64_t sm_gd_gpu_symbols(const uint64_t *words, uint32_t s) {
    uint32_t w = s >> 5, shift = (s & 31u) * 2u;
    uint64_t v = words[w] >> shift;
    if (shift) v |= words[w + 1] << (64u - shift);
    return v;
}

/* A window's symbol i (absolute position x) for the stand-in and for the
   kernel's lanes: its code (0..3) and whether it is no base or outside [lo, hi). */
SM_GPU_FN uint32_t sm_gd_gpu_symbol(const sm_gpu_scan_args *a, const uint8_t *code_of, uint32_t lo, uint32_t hi,
                                    int64_t x, uint32_t *bad) {
    if (x < (int64_t)lo || x >= (int64_t)hi) {
        *bad = 1;
        return 0;
    }
    uint32_t c = code_of[SM_GPU_LDG(&a->text[x])];
    *bad = c >> 2;
    return c & 3u;
}

/* The mismatch mask of a key at text position x (guide_core.h): through
   the window when its symbols are bases or N and the text's IUPAC codes
   match nothing, else symbol by symbol with the text in [lo, hi). */
SM_GPU_FN uint64_t sm_gd_gpu_mask(const sm_gpu_scan_args *a, const sm_gd_gpu_key *key, const uint64_t *codes,
                                  const uint64_t *bads, int64_t first, const uint8_t *text_set, uint32_t lo,
                                  uint32_t hi, int64_t x) {
    uint32_t L = key->length;
    uint64_t lanes = sm_gd_lanes(L);
    if (key->packed) {
        uint32_t s = (uint32_t)(x - first);
        return sm_gd_packed_mask(sm_gd_gpu_symbols(codes, s), sm_gd_gpu_symbols(bads, s), key->code, key->care, lanes);
    }
    const sm_gd_key *full = (const sm_gd_key *)(a->section + ((const sm_gd_header *)a->section)->keys_off) + key->index;
    uint64_t m = 0;
    for (uint32_t j = 0; j < L; j++) {
        int64_t at = x + (int64_t)j;
        uint32_t ts = at >= (int64_t)lo && at < (int64_t)hi ? text_set[SM_GPU_LDG(&a->text[at])] : 0;
        if (!(ts & SM_GPU_LDG(&full->sets[j]))) m |= (uint64_t)1 << (2 * j);
    }
    return m;
}

/* The record of a site (gpu_part.h, SM_GPU_HIT_SITE): its mismatches and
   the symbols its guide part spans beyond L (sm_gd_site's delta). */
SM_GPU_HOSTDEV uint32_t sm_gd_gpu_site_errors(uint32_t mismatches, int32_t delta) {
    return mismatches | (uint32_t)(delta + SM_GPU_SITE_DELTA_BIAS) << 8;
}

/* One key at the PAM p of its side (left: 1, guides left of the PAM): its
   sites that the chunk owns. The window's words start at symbol first. */
SM_GPU_FN void sm_gd_gpu_key_at(const sm_gpu_scan_args *a, const sm_gpu_guide *v, const sm_gd_gpu_key *key,
                                const uint64_t *codes, const uint64_t *bads, int64_t first, const uint8_t *text_set,
                                sm_gpu_chunk ch, uint32_t p, uint32_t left) {
    const uint32_t L = key->length, k = v->k;
    const int64_t base = left ? (int64_t)p - (int64_t)L : (int64_t)p + v->q;
    const sm_gd_shape shape = {L, left, k, v->dna, v->rna};
    const uint32_t lo = ch.c0, hi = ch.end;
    /* the lower bounds of every kind of site first (guide_core.h's): most keys stop here */
    uint64_t m0 = sm_gd_gpu_mask(a, key, codes, bads, first, text_set, lo, hi, base);
    int pass = (uint32_t)SM_GPU_POPC64(m0) <= k;
    for (uint32_t t = 1; !pass && t <= v->dna + v->rna; t++) {
        uint64_t ms = sm_gd_gpu_mask(a, key, codes, bads, first, text_set, lo, hi, base + sm_gd_shift(&shape, t));
        uint32_t bound = sm_gd_bulge_bound(&shape, m0, ms, t <= v->dna ? 0 : t - v->dna);
        pass = bound != SM_GD_NONE && bound <= k;
    }
    if (!pass) return;
    uint64_t m[SM_GUIDE_MAX_SHIFTS];
    m[0] = m0;
    for (uint32_t t = 1; t <= v->dna + v->rna; t++)
        m[t] = sm_gd_gpu_mask(a, key, codes, bads, first, text_set, lo, hi, base + sm_gd_shift(&shape, t));
    sm_gd_site sites[SM_GUIDE_MAX_SHIFTS];
    uint32_t n = sm_gd_sites(&shape, m, sites);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t start, end;
        sm_gd_extent(p, v->q, L, left, sites[i].delta, &start, &end);
        if (start < ch.c0 || start >= ch.c1 || end > ch.end) continue;
        sm_gpu_emit(a, (uint32_t)end, key->output, sm_gd_gpu_site_errors(sites[i].mismatches, sites[i].delta),
                    SM_GPU_HIT_SITE);
    }
}

/* 32 bits spread to the even bits of a word. */
SM_GPU_HOSTDEV uint64_t sm_gd_gpu_spread(uint32_t x) {
    uint64_t v = x;
    v = (v | v << 16) & 0x0000ffff0000ffffull;
    v = (v | v << 8) & 0x00ff00ff00ff00ffull;
    v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full;
    v = (v | v << 2) & 0x3333333333333333ull;
    v = (v | v << 1) & 0x5555555555555555ull;
    return v;
}

#endif /* SM_GUIDE_GPU_H */
