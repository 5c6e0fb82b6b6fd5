/* The alignment of a CRISPR site (sm_hit_site): the guide against the
 * site's protospacer, its bulge and mismatches, and the two rows
 * off-target tools print. The site is read 5' to 3' on its strand and
 * both it and the guide are counted from the PAM, as the definition
 * counts them (include/seqmatch.h); every bulge position is tried and the
 * best kept (fewer mismatches, then the one nearest the PAM). */
#include <stdlib.h>

#include "base/internal.h"

/* Longest row: a pattern (guide and PAM) and a DNA bulge. */
#define SITE_MAX 2048u

static int site_match(uint8_t p, uint8_t t, int text_iupac) {
    unsigned ps = sm_nt_set[p] & 15u, ts = sm_nt_set[t] & 15u;
    if (!text_iupac && (ts & (ts - 1))) return 0; /* only A, C, G, T match without --text-iupac */
    return (ps & ts) != 0;
}

static uint32_t site_count(const uint8_t *g, const uint8_t *p, size_t n, int text_iupac) {
    uint32_t m = 0;
    for (size_t d = 0; d < n; d++) m += !site_match(g[d], p[d], text_iupac);
    return m;
}

static char upper(uint8_t c) { return c >= 'a' && c <= 'z' ? (char)(c - 32) : (char)c; }
static char lower(uint8_t c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : (char)c; }

int sm_hit_site(const sm_db *db, const sm_hit *hit, sm_site *site, char *guide, char *dna, size_t cap) {
    if (!db || !hit || !site || !hit->text || hit->end <= hit->start) return SM_ERR_INVALID;
    memset(site, 0, sizeof *site);
    const sm_db_header *h = sm_db_head(db);
    if (h->alphabet != SM_ALPHABET_DNA || !h->pam_length || h->match == SM_MATCH_EDITS) return SM_ERR_INVALID;
    size_t m = 0;
    const uint8_t *pattern = (const uint8_t *)sm_db_pattern_seq(db, hit->pattern, &m);
    size_t Q = h->pam_length, len = (size_t)(hit->end - hit->start);
    if (!pattern || m <= Q || m + h->dna_bulges >= SITE_MAX || len <= Q || len > m + h->dna_bulges ||
        len + h->rna_bulges < m || (hit->strand != '+' && hit->strand != '-'))
        return SM_ERR_INVALID;
    int five = h->pam_side == SM_PAM_5PRIME, text_iupac = (h->flags & SM_FLAG_TEXT_IUPAC) != 0;
    /* the site 5' to 3' on its strand (upper case; a '-' site complemented) */
    uint8_t s[SITE_MAX];
    const uint8_t *raw = (const uint8_t *)hit->text;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)upper(hit->strand == '-' ? raw[len - 1 - i] : raw[i]);
        if (c == 'U') c = 'T';
        if (hit->strand == '-') c = sm_nt_complement[c] ? sm_nt_complement[c] : 'X';
        s[i] = c;
    }
    const uint8_t *pam = five ? pattern : pattern + (m - Q), *pam_text = five ? s : s + (len - Q);
    for (size_t t = 0; t < Q; t++)
        if (!site_match(pam[t], pam_text[t], text_iupac)) return SM_ERR_INVALID;
    size_t L = m - Q, n = len - Q;
    const uint8_t *gsrc = five ? pattern + Q : pattern, *psrc = five ? s + Q : s;
    /* counted from the PAM */
    uint8_t g[SITE_MAX], p[SITE_MAX], x[SITE_MAX];
    for (size_t i = 0; i < L; i++) g[i] = five ? gsrc[i] : gsrc[L - 1 - i];
    for (size_t i = 0; i < n; i++) p[i] = five ? psrc[i] : psrc[n - 1 - i];
    uint32_t best = UINT32_MAX, at = 0, b = 0;
    sm_bulge kind = SM_BULGE_NONE;
    if (n == L) {
        best = site_count(g, p, L, text_iupac);
    } else if (n > L) {
        kind = SM_BULGE_DNA;
        b = (uint32_t)(n - L);
        for (size_t i = 1; i < L; i++) {
            memcpy(x, p, i);
            memcpy(x + i, p + i + b, L - i);
            uint32_t c = site_count(g, x, L, text_iupac);
            if (c < best) best = c, at = (uint32_t)i;
        }
    } else {
        kind = SM_BULGE_RNA;
        b = (uint32_t)(L - n);
        for (size_t i = 1; i + b < L; i++) {
            memcpy(x, g, i);
            memcpy(x + i, g + i + b, n - i);
            uint32_t c = site_count(x, p, n, text_iupac);
            if (c < best) best = c, at = (uint32_t)i;
        }
    }
    if (best != hit->errors) return SM_ERR_INVALID;
    site->bulge = kind;
    site->bulge_size = b;
    site->bulge_at = at;
    site->mismatches = best;
    if (!guide && !dna) return SM_OK;
    size_t cols = L + Q + (kind == SM_BULGE_DNA ? b : 0);
    if (cap < cols + 1) return SM_ERR_LIMIT;
    /* the rows from the PAM, then turned 5' to 3' */
    char gr[SITE_MAX], dr[SITE_MAX];
    size_t w = 0, gi = 0, pi = 0;
    while (gi < L || pi < n) {
        if (kind == SM_BULGE_RNA && gi >= at && gi < at + b) {
            gr[w] = upper(g[gi++]);
            dr[w++] = '-';
        } else if (kind == SM_BULGE_DNA && pi >= at && pi < at + b) {
            gr[w] = '-';
            dr[w++] = upper(p[pi++]);
        } else {
            gr[w] = upper(g[gi]);
            dr[w++] = site_match(g[gi], p[pi], text_iupac) ? upper(p[pi]) : lower(p[pi]);
            gi++, pi++;
        }
    }
    for (size_t i = 0; i < w; i++) {
        size_t to = five ? Q + i : w - 1 - i;
        if (guide) guide[to] = gr[i];
        if (dna) dna[to] = dr[i];
    }
    for (size_t t = 0; t < Q; t++) {
        size_t to = five ? t : w + t;
        if (guide) guide[to] = upper(pam[t]);
        if (dna) dna[to] = upper(pam_text[t]);
    }
    if (guide) guide[cols] = '\0';
    if (dna) dna[cols] = '\0';
    return SM_OK;
}
