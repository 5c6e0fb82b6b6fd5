#include "oracle.h"

#include <stdlib.h>
#include <string.h>

enum { NT_A = 1, NT_C = 2, NT_G = 4, NT_T = 8 };

unsigned oracle_nt_set(unsigned char c) {
    switch (c) {
    case 'A': case 'a': return NT_A;
    case 'C': case 'c': return NT_C;
    case 'G': case 'g': return NT_G;
    case 'T': case 't': return NT_T;
    case 'U': case 'u': return NT_T;
    case 'R': case 'r': return NT_A | NT_G;
    case 'Y': case 'y': return NT_C | NT_T;
    case 'S': case 's': return NT_C | NT_G;
    case 'W': case 'w': return NT_A | NT_T;
    case 'K': case 'k': return NT_G | NT_T;
    case 'M': case 'm': return NT_A | NT_C;
    case 'B': case 'b': return NT_C | NT_G | NT_T;
    case 'D': case 'd': return NT_A | NT_G | NT_T;
    case 'H': case 'h': return NT_A | NT_C | NT_T;
    case 'V': case 'v': return NT_A | NT_C | NT_G;
    case 'N': case 'n': return NT_A | NT_C | NT_G | NT_T;
    default: return 0;
    }
}

char oracle_complement(unsigned char c) {
    switch (c) {
    case 'A': case 'a': return 'T';
    case 'C': case 'c': return 'G';
    case 'G': case 'g': return 'C';
    case 'T': case 't': return 'A';
    case 'U': case 'u': return 'A';
    case 'R': case 'r': return 'Y'; /* A|G -> T|C */
    case 'Y': case 'y': return 'R';
    case 'S': case 's': return 'S'; /* C|G -> G|C */
    case 'W': case 'w': return 'W'; /* A|T -> T|A */
    case 'K': case 'k': return 'M'; /* G|T -> C|A */
    case 'M': case 'm': return 'K';
    case 'B': case 'b': return 'V'; /* not A -> not T */
    case 'V': case 'v': return 'B';
    case 'D': case 'd': return 'H'; /* not C -> not G */
    case 'H': case 'h': return 'D';
    case 'N': case 'n': return 'N';
    default: return 0;
    }
}

int oracle_reverse_complement(const char *seq, size_t len, char *out) {
    for (size_t i = 0; i < len; i++) {
        char c = oracle_complement((unsigned char)seq[len - 1 - i]);
        if (!c) return -1;
        out[i] = c;
    }
    return 0;
}

int oracle_patterns_valid(const sm_pattern *patterns, size_t n, sm_alphabet alphabet) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        if (patterns[i].len == 0) return 0;
        if (alphabet == SM_ALPHABET_DNA)
            for (size_t j = 0; j < patterns[i].len; j++)
                if (oracle_nt_set((unsigned char)patterns[i].seq[j]) == 0) return 0;
    }
    return 1;
}

static int oracle_is_concrete(unsigned set) { return set == NT_A || set == NT_C || set == NT_G || set == NT_T; }

static unsigned char oracle_lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c; }

int oracle_symbol_matches(unsigned char p, unsigned char t, sm_alphabet alphabet, unsigned flags) {
    if (alphabet == SM_ALPHABET_TEXT) {
        if (flags & SM_FLAG_IGNORE_CASE) return oracle_lower(p) == oracle_lower(t);
        return p == t;
    }
    unsigned ps = oracle_nt_set(p), ts = oracle_nt_set(t);
    if (flags & SM_FLAG_TEXT_IUPAC) return (ps & ts) != 0;
    /* Without text IUPAC only A C G T (U) in the text can match. */
    return oracle_is_concrete(ts) && (ps & ts) != 0;
}

static int oracle_matches_at(const char *pat, size_t m, const char *text, size_t pos, sm_alphabet alphabet,
                             unsigned flags) {
    for (size_t j = 0; j < m; j++)
        if (!oracle_symbol_matches((unsigned char)pat[j], (unsigned char)text[pos + j], alphabet, flags)) return 0;
    return 1;
}

static int oracle_hit_cmp(const void *pa, const void *pb) {
    const tu_hit *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pattern != b->pattern) return a->pattern < b->pattern ? -1 : 1;
    if (a->strand != b->strand) return a->strand == '+' ? -1 : 1;
    return 0;
}

int oracle_find(const sm_pattern *patterns, size_t n, const sm_compile_options *opts, const char *text,
                size_t len, uint64_t record, tu_hits *out) {
    if (!oracle_patterns_valid(patterns, n, opts->alphabet)) return -1;
    int forward = 1, reverse = 0;
    if (opts->alphabet == SM_ALPHABET_DNA) {
        forward = opts->strands == SM_STRAND_BOTH || opts->strands == SM_STRAND_FORWARD;
        reverse = opts->strands == SM_STRAND_BOTH || opts->strands == SM_STRAND_REVERSE;
    }
    size_t first = out->n;
    for (size_t p = 0; p < n; p++) {
        size_t m = patterns[p].len;
        if (m > len) continue;
        char *rc = NULL;
        if (reverse) {
            rc = malloc(m);
            if (!rc) return -1;
            oracle_reverse_complement(patterns[p].seq, m, rc);
        }
        for (size_t s = 0; s + m <= len; s++) {
            if (forward && oracle_matches_at(patterns[p].seq, m, text, s, opts->alphabet, opts->flags))
                tu_hits_add(out, record, s, s + m, (uint32_t)p, '+', 0);
            if (reverse && oracle_matches_at(rc, m, text, s, opts->alphabet, opts->flags))
                tu_hits_add(out, record, s, s + m, (uint32_t)p, '-', 0);
        }
        free(rc);
    }
    /* Only this call's hits are ordered, so earlier records stay in front. */
    if (out->n - first > 1) qsort(out->items + first, out->n - first, sizeof *out->items, oracle_hit_cmp);
    return 0;
}

uint64_t oracle_count(const tu_hits *hits, uint64_t *counts) {
    for (size_t i = 0; i < hits->n; i++) counts[hits->items[i].pattern]++;
    return hits->n;
}
