/* The CRISPR site oracle; see guide_oracle.h. */
#include "guide_oracle.h"

#include <stdlib.h>
#include <string.h>

#include "oracle.h"

static int go_match(char p, char t, unsigned flags) {
    return oracle_symbol_matches((unsigned char)p, (unsigned char)t, SM_ALPHABET_DNA, flags);
}

static char go_upper(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 32) : c; }
static char go_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

/* The site text[s, e) read 5' to 3' on strand: as it is ('+') or reverse
   complemented ('-'; a byte that is no nucleotide code stays a non-base). */
static void go_site_text(const char *text, size_t s, size_t e, int reverse, char *out) {
    for (size_t i = 0; i < e - s; i++) {
        char c = reverse ? text[e - 1 - i] : text[s + i];
        if (reverse) {
            char x = oracle_complement((unsigned char)c);
            c = x ? x : 'X';
        }
        out[i] = go_upper(c == 'u' ? 'T' : c);
        if (out[i] == 'U') out[i] = 'T';
    }
}

static int go_push(goracle_sites *s, const goracle_site *x) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        goracle_site *p = realloc(s->items, cap * sizeof *p);
        if (!p) return -1;
        s->items = p;
        s->cap = cap;
    }
    s->items[s->n++] = *x;
    return 0;
}

/* Guide and protospacer both counted from the PAM (index 0 beside it):
   the mismatches of pairing g[d] with p[d] over d < n. */
static uint32_t go_count(const char *g, const char *p, size_t n, unsigned flags) {
    uint32_t m = 0;
    for (size_t d = 0; d < n; d++) m += !go_match(g[d], p[d], flags);
    return m;
}

/* One site: its text (5' to 3' on its strand) of len symbols. Fills x and
   returns 1 when it is a site of the query. */
static int go_site(const goracle_query *q, const char *site, size_t len, goracle_site *x) {
    size_t L = q->glen, Q = q->qlen;
    if (len < Q + 1) return 0;
    if (L + Q + q->dna >= 128) abort(); /* the rows below are for test-sized guides */
    int five = q->side == SM_PAM_5PRIME;
    const char *pam_text = five ? site : site + (len - Q);
    for (size_t t = 0; t < Q; t++)
        if (!go_match(q->pam[t], pam_text[t], q->flags)) return 0;
    size_t n = len - Q;
    const char *proto = five ? site + Q : site;
    if (n > L + q->dna || n + q->rna < L) return 0;
    /* counted from the PAM: a 3' PAM reads both backwards */
    char g[128], p[128], gu[128];
    for (size_t i = 0; i < L; i++) g[i] = five ? q->guide[i] : q->guide[L - 1 - i];
    for (size_t i = 0; i < n; i++) p[i] = five ? proto[i] : proto[n - 1 - i];
    uint32_t best = UINT32_MAX, best_at = 0;
    sm_bulge kind = SM_BULGE_NONE;
    uint32_t b = 0;
    if (n == L) {
        best = go_count(g, p, L, q->flags);
    } else if (n > L) {
        /* a DNA bulge of b: text symbols [i, i + b) from the PAM unpaired */
        kind = SM_BULGE_DNA;
        b = (uint32_t)(n - L);
        for (size_t i = 1; i + 1 <= L; i++) {
            char pp[128];
            memcpy(pp, p, i);
            memcpy(pp + i, p + i + b, n - i - b);
            uint32_t m = go_count(g, pp, L, q->flags);
            if (m < best) best = m, best_at = (uint32_t)i;
        }
    } else {
        /* an RNA bulge of b: guide symbols [i, i + b) unpaired, paired ones on both sides */
        kind = SM_BULGE_RNA;
        b = (uint32_t)(L - n);
        for (size_t i = 1; i + b + 1 <= L; i++) {
            memcpy(gu, g, i);
            memcpy(gu + i, g + i + b, L - i - b);
            uint32_t m = go_count(gu, p, n, q->flags);
            if (m < best) best = m, best_at = (uint32_t)i;
        }
    }
    if (best > q->k) return 0;
    x->mismatches = best;
    x->bulge = kind;
    x->size = b;
    x->at = best_at;
    /* the rows, from the PAM, then turned 5' to 3' */
    char gr[128], dr[128];
    size_t w = 0, gi = 0, pi = 0;
    while (gi < L || pi < n) {
        int gap_text = kind == SM_BULGE_RNA && gi >= best_at && gi < best_at + b;
        int gap_guide = kind == SM_BULGE_DNA && pi >= best_at && pi < best_at + b;
        if (gap_text) {
            gr[w] = go_upper(g[gi++]);
            dr[w++] = '-';
        } else if (gap_guide) {
            gr[w] = '-';
            dr[w++] = go_upper(p[pi++]);
        } else {
            gr[w] = go_upper(g[gi]);
            dr[w++] = go_match(g[gi], p[pi], q->flags) ? go_upper(p[pi]) : go_lower(p[pi]);
            gi++, pi++;
        }
    }
    size_t rows = w + Q;
    for (size_t i = 0; i < w; i++) {
        size_t to = five ? Q + i : w - 1 - i;
        x->guide_row[to] = gr[i];
        x->dna_row[to] = dr[i];
    }
    for (size_t t = 0; t < Q; t++) {
        size_t to = five ? t : w + t;
        x->guide_row[to] = go_upper(q->pam[t]);
        x->dna_row[to] = go_upper(pam_text[t]);
    }
    x->guide_row[rows] = x->dna_row[rows] = '\0';
    return 1;
}

int goracle_sites_find(const goracle_query *q, const char *text, size_t n, goracle_sites *out) {
    size_t longest = q->glen + q->qlen + q->dna;
    char *site = malloc(longest + 1);
    if (!site) return -1;
    /* a site spans the PAM and L + b, L - b or L text symbols */
    size_t shortest = q->glen + q->qlen > q->rna ? q->glen + q->qlen - q->rna : 1;
    for (size_t s = 0; s < n; s++) {
        for (size_t e = s + shortest; e <= n && e - s <= longest; e++) {
            for (int reverse = 0; reverse <= 1; reverse++) {
                if ((reverse && !q->reverse) || (!reverse && !q->forward)) continue;
                goracle_site x;
                memset(&x, 0, sizeof x);
                go_site_text(text, s, e, reverse, site);
                if (!go_site(q, site, e - s, &x)) continue;
                x.start = s;
                x.end = e;
                x.strand = reverse ? '-' : '+';
                if (go_push(out, &x) != 0) {
                    free(site);
                    return -1;
                }
            }
        }
    }
    free(site);
    return 0;
}

int goracle_hits(const goracle_query *q, const char *text, size_t n, uint64_t record, uint32_t pattern,
                 tu_hits *hits) {
    goracle_sites s = {0};
    if (goracle_sites_find(q, text, n, &s) != 0) return -1;
    for (size_t i = 0; i < s.n; i++)
        tu_hits_add(hits, record, s.items[i].start, s.items[i].end, pattern, s.items[i].strand, s.items[i].mismatches);
    goracle_sites_free(&s);
    return 0;
}

void goracle_sites_free(goracle_sites *s) {
    free(s->items);
    s->items = NULL;
    s->n = s->cap = 0;
}
