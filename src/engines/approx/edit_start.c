/* Start recovery for k-edit end events, the PAM-constrained distance, and
 * the report-best fragments. */
#include "engines/approx/approx_common.h"
#include "engines/approx/myers_step.h"

#include <ctype.h>
#include <stdlib.h>

/* Reading the text backwards from end against the reversed key turns
   "edit(key, text[end - c, end)) for every c" into one global alignment
   whose last row, column c, is that distance: score(c). The start of an end
   with distance D is end - c for the first c (the largest start) where
   score(c) = D, and score(c) >= c - m bounds the columns to m + D.

   Everything that depends only on the key (its reversed symbols and, for
   keys of up to 64 symbols, the match bits of every text class) is built
   once per key and thread in an sm_edit_cache, so a hit costs at most
   m + D steps of one word, or for longer keys a band of 2D + 1 cells per
   column (a cell off the band costs more than D already). */

#define ES_INF (UINT32_MAX / 4)
#define ES_NOMEM UINT32_MAX
#define ES_LEAST UINT32_MAX /* es_band: the least score, not a given one */

typedef struct {
    uint32_t m;        /* symbols searched backwards (with a PAM: the guide's) */
    uint32_t q;        /* PAM symbols, 0 without one */
    uint64_t eq_at;    /* m <= 64: words index of the match bits per text class */
    uint64_t syms_at;  /* bytes index of the m symbols, reversed */
    uint64_t pam_at;   /* bytes index of q x 16 bytes: does PAM position t match text class c */
} es_key;

struct sm_edit_cache {
    /* The database the keys were built for: a scratch may move to another. */
    uint64_t db_size;
    uint32_t db_checksum, db_patterns, db_alphabet, db_flags, db_pam, db_pam5;
    int bound;
    sm_alphabet alphabet;
    unsigned flags;
    uint32_t rows;          /* text classes: 16 (dna nucleotide sets) or 256 (folded bytes) */
    uint8_t class_of[256];
    uint8_t match16[16][16]; /* dna: does text class c match key symbol s (the banded DP, PAMs) */
    uint32_t *slot;         /* per output id: index + 1 into keys, 0 = not built yet */
    size_t nslots;
    es_key *keys;
    size_t nkeys, keys_cap;
    uint64_t *words;
    size_t nwords, words_cap;
    uint8_t *bytes;
    size_t nbytes, bytes_cap;
    uint8_t *key;           /* the key in engine form while an entry is built */
    size_t key_cap;
    uint32_t *col;          /* the DP column of keys over 64 symbols */
    size_t col_cap;
};

sm_edit_cache *sm_edit_cache_new(void) { return calloc(1, sizeof(sm_edit_cache)); }

void sm_edit_cache_free(sm_edit_cache *c) {
    if (!c) return;
    free(c->slot);
    free(c->keys);
    free(c->words);
    free(c->bytes);
    free(c->key);
    free(c->col);
    free(c);
}

static int es_grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return SM_OK;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return SM_ERR_NOMEM;
    *p = q;
    *cap = n;
    return SM_OK;
}

static void es_set_alphabet(sm_edit_cache *c, sm_alphabet alphabet, unsigned flags) {
    c->alphabet = alphabet;
    c->flags = flags;
    c->rows = alphabet == SM_ALPHABET_DNA ? 16 : 256;
    for (unsigned b = 0; b < 256; b++) c->class_of[b] = (uint8_t)sm_apx_key_symbol((uint8_t)b, alphabet, flags);
    for (unsigned t = 0; t < 16; t++)
        for (unsigned s = 0; s < 16; s++)
            c->match16[t][s] = (uint8_t)sm_apx_class_matches(t, s, SM_ALPHABET_DNA, flags);
}

/* Forgets the keys of another database. */
static int es_bind(sm_edit_cache *c, const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    if (c->bound && c->db_size == h->size && c->db_checksum == h->checksum && c->db_patterns == h->pattern_count &&
        c->db_alphabet == h->alphabet && c->db_flags == h->flags && c->db_pam == h->pam_length &&
        c->db_pam5 == h->pam_side)
        return SM_OK;
    c->bound = 0;
    size_t nslots = (size_t)h->pattern_count * 2;
    if (nslots > c->nslots) {
        uint32_t *p = realloc(c->slot, nslots * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        c->slot = p;
        c->nslots = nslots;
    }
    memset(c->slot, 0, nslots * sizeof *c->slot);
    c->nkeys = c->nwords = c->nbytes = 0;
    es_set_alphabet(c, (sm_alphabet)h->alphabet, h->flags);
    c->db_size = h->size;
    c->db_checksum = h->checksum;
    c->db_patterns = h->pattern_count;
    c->db_alphabet = h->alphabet;
    c->db_flags = h->flags;
    c->db_pam = h->pam_length;
    c->db_pam5 = h->pam_side;
    c->bound = 1;
    return SM_OK;
}

/* Adds the tables of a key searched backwards (key[0, m), engine form) and
   of the PAM pam[0, q) that must match exactly (dna only). */
static int es_add(sm_edit_cache *c, const uint8_t *key, uint32_t m, const uint8_t *pam, uint32_t q, uint32_t *index) {
    es_key k = {m, q, UINT64_MAX, c->nbytes, 0};
    size_t words = m <= 64 ? c->rows : 0;
    if (es_grow((void **)&c->keys, &c->keys_cap, c->nkeys + 1, sizeof *c->keys) != SM_OK ||
        es_grow((void **)&c->words, &c->words_cap, c->nwords + words, sizeof *c->words) != SM_OK ||
        es_grow((void **)&c->bytes, &c->bytes_cap, c->nbytes + m + (size_t)q * 16, 1) != SM_OK)
        return SM_ERR_NOMEM;
    uint8_t *syms = c->bytes + c->nbytes;
    for (uint32_t i = 0; i < m; i++) syms[i] = (uint8_t)sm_apx_key_symbol(key[m - 1 - i], c->alphabet, c->flags);
    c->nbytes += m;
    if (words) {
        k.eq_at = c->nwords;
        uint64_t *eq = c->words + c->nwords;
        for (uint32_t r = 0; r < c->rows; r++) {
            uint64_t bits = 0;
            for (uint32_t i = 0; i < m; i++)
                if (sm_apx_class_matches(r, syms[i], c->alphabet, c->flags)) bits |= 1ull << i;
            eq[r] = bits;
        }
        c->nwords += words;
    }
    k.pam_at = c->nbytes;
    for (uint32_t t = 0; t < q; t++)
        for (unsigned r = 0; r < 16; r++)
            c->bytes[c->nbytes + (size_t)t * 16 + r] = c->match16[r][sm_nt_set[pam[t]] & 15u];
    c->nbytes += (size_t)q * 16;
    c->keys[c->nkeys] = k;
    *index = (uint32_t)c->nkeys++;
    return SM_OK;
}

/* The key of (pattern, strand) as the engines compare it (dna reverse
   complemented for '-', text folded under ignore-case), cut at the PAM:
   the guide is searched backwards, the PAM checked. */
static const es_key *es_get(sm_edit_cache *c, const sm_db *db, uint32_t pattern, int reverse) {
    uint32_t id = sm_output_id(pattern, reverse);
    if (c->slot[id]) return &c->keys[c->slot[id] - 1];
    size_t m;
    const uint8_t *seq = (const uint8_t *)sm_db_pattern_seq(db, pattern, &m);
    if (!seq || es_grow((void **)&c->key, &c->key_cap, m ? m : 1, 1) != SM_OK) return NULL;
    uint8_t *key = c->key;
    for (size_t i = 0; i < m; i++)
        key[i] = reverse ? sm_nt_complement[seq[m - 1 - i]]
                 : (c->alphabet == SM_ALPHABET_TEXT && (c->flags & SM_FLAG_IGNORE_CASE)) ? (uint8_t)tolower(seq[i])
                                                                                        : seq[i];
    /* The loader keeps the PAM shorter than every pattern. */
    uint32_t q = c->db_pam < m ? c->db_pam : 0;
    int first = (c->db_pam5 != 0) != (reverse != 0); /* the PAM at the key's start */
    const uint8_t *guide = first ? key + q : key, *pam = first ? key : key + (m - q);
    uint32_t index;
    if (es_add(c, guide, (uint32_t)(m - q), pam, q, &index) != SM_OK) return NULL;
    c->slot[id] = index + 1;
    return &c->keys[index];
}

/* Does the PAM match text[at, at + q)? */
static inline int es_pam_ok(const sm_edit_cache *c, const es_key *k, const uint8_t *at) {
    const uint8_t *pm = c->bytes + k->pam_at;
    for (uint32_t t = 0; t < k->q; t++)
        if (!pm[(size_t)t * 16 + c->class_of[at[t]]]) return 0;
    return 1;
}

/* The first c <= max_len with score(c) = want, for keys of up to 64
   symbols: the hot loop of dense hits. Returns 1 and sets *c_out, else 0. */
static int es_first_bits(const sm_edit_cache *c, const es_key *k, const uint8_t *text_end, uint64_t max_len,
                         uint32_t want, uint64_t *c_out) {
    const uint32_t m = k->m;
    const uint64_t *eq = c->words + k->eq_at;
    const unsigned top = m - 1;
    uint64_t Pv = m == 64 ? ~0ull : ((1ull << m) - 1), Mv = 0;
    uint32_t score = m;
    if (score == want) {
        *c_out = 0;
        return 1;
    }
    for (uint64_t col = 1; col <= max_len; col++) {
        /* the global DP: row 0 grows by one per column (+1 enters below) */
        uint64_t Ph, Mh;
        apx_myers_step(&Pv, &Mv, eq[c->class_of[text_end[-(int64_t)col]]], +1, &Ph, &Mh);
        score += (uint32_t)apx_myers_delta(Ph, Mh, top);
        if (score == want) {
            *c_out = col;
            return 1;
        }
    }
    return 0;
}

/* Keys over 64 symbols: the band |i - col| <= d of the DP, column by
   column. With want given, the first col <= max_len where score(col) = want
   (d = want); with want = ES_LEAST, the least score(col) <= d over the col
   whose PAM text[end - col - q, end - col) matches when pam_before, and its
   first col. Returns the score (*c_out its column), ES_INF when none, or
   ES_NOMEM. */
static uint32_t es_band(sm_edit_cache *c, const es_key *k, const uint8_t *text_end, uint64_t max_len, uint32_t d,
                        uint32_t want, int pam_before, uint64_t *c_out) {
    const uint32_t m = k->m;
    const uint8_t *syms = c->bytes + k->syms_at;
    if (d > m) d = m;
    if (es_grow((void **)&c->col, &c->col_cap, (size_t)m + 1, sizeof *c->col) != SM_OK) return ES_NOMEM;
    uint32_t *v = c->col;
    for (uint32_t i = 0; i <= m; i++) v[i] = i <= d ? i : ES_INF;
    const int dna = c->alphabet == SM_ALPHABET_DNA;
    uint32_t best = d + 1;
    uint64_t best_c = 0;
    for (uint64_t col = 0;; col++) {
        if (col > 0) {
            uint64_t lo = col > d ? col - d : 0, hi = col + d < m ? col + d : m;
            if (lo > m) break;
            unsigned t = c->class_of[text_end[-(int64_t)col]];
            uint32_t diag, up;
            uint64_t i = lo;
            if (lo == 0) {
                diag = v[0];
                v[0] = (uint32_t)col;
                up = v[0];
                i = 1;
            } else {
                diag = v[lo - 1];
                up = ES_INF;
            }
            for (; i <= hi; i++) {
                uint32_t left = v[i];
                unsigned s = syms[i - 1];
                uint32_t x = diag + ((dna ? c->match16[t][s] : t == s) ? 0u : 1u);
                if (left + 1 < x) x = left + 1;
                if (up + 1 < x) x = up + 1;
                diag = left;
                v[i] = x;
                up = x;
            }
        }
        uint32_t score = col + d >= m ? v[m] : ES_INF;
        if (want != ES_LEAST) {
            if (score == want) {
                *c_out = col;
                return want;
            }
        } else if (score < best && (!pam_before || es_pam_ok(c, k, text_end - col - k->q))) {
            best = score;
            best_c = col;
        }
        /* score(col') >= col' - m: no later column can do better */
        if (col >= max_len || (want == ES_LEAST && col + 1 >= (uint64_t)m + best)) break;
    }
    if (want != ES_LEAST || best > d) return ES_INF;
    *c_out = best_c;
    return best;
}

/* The first c <= max_len with score(c) = want: returns want and sets
   *c_out, else ES_INF (ES_NOMEM when out of memory). */
static uint32_t es_pass(sm_edit_cache *c, const es_key *k, const uint8_t *text_end, uint64_t max_len, uint32_t want,
                        uint64_t *c_out) {
    if (k->m <= 64) return es_first_bits(c, k, text_end, max_len, want, c_out) ? want : ES_INF;
    return es_band(c, k, text_end, max_len, want, want, 0, c_out);
}

/* The least score(c) <= limit for c <= max_len, over the c whose PAM
   text[end - c - q, end - c) matches when pam_before, and its first c (the
   largest start): the PAM-constrained distance. ES_INF when none. */
static uint32_t es_least(sm_edit_cache *c, const es_key *k, const uint8_t *text_end, uint64_t max_len, uint32_t limit,
                         int pam_before, uint64_t *c_out) {
    const uint32_t m = k->m;
    if (m > 64) return es_band(c, k, text_end, max_len, limit, ES_LEAST, pam_before, c_out);
    const uint64_t *eq = c->words + k->eq_at;
    const unsigned top = m - 1;
    uint64_t Pv = m == 64 ? ~0ull : ((1ull << m) - 1), Mv = 0;
    uint32_t score = m, best = limit + 1;
    uint64_t best_c = 0;
    for (uint64_t col = 0;; col++) {
        if (col > 0) {
            uint64_t Ph, Mh;
            apx_myers_step(&Pv, &Mv, eq[c->class_of[text_end[-(int64_t)col]]], +1, &Ph, &Mh);
            score += (uint32_t)apx_myers_delta(Ph, Mh, top);
        }
        if (score < best && (!pam_before || es_pam_ok(c, k, text_end - col - k->q))) {
            best = score;
            best_c = col;
        }
        /* score(col') >= col' - m: no later column can do better */
        if (col >= max_len || col + 1 >= (uint64_t)m + best) break;
    }
    if (best > limit) return ES_INF;
    *c_out = best_c;
    return best;
}

int sm_edit_cache_start(sm_edit_cache *c, const sm_db *db, uint32_t pattern, int reverse, const uint8_t *text,
                        size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t distance, uint64_t *start) {
    *start = SM_START_UNKNOWN;
    if (es_bind(c, db) != SM_OK) return SM_ERR_NOMEM;
    if (pattern >= c->db_patterns) return SM_OK;
    const es_key *k = es_get(c, db, pattern, reverse);
    if (!k) return SM_ERR_NOMEM;
    if (k->q || end < text_pos0 || end - text_pos0 > text_len || distance > k->m) return SM_OK;
    /* Distance 0 is an exact match of m symbols: no other start, no pass
       (dense hits of a degenerate pattern are mostly these). */
    if (distance == 0 && end - text_pos0 >= k->m) {
        *start = end - k->m;
        return SM_OK;
    }
    /* edit >= |length - m|, so no start lies more than m + distance before end. */
    uint64_t max_len = end - text_pos0, reach = (uint64_t)k->m + distance, col = 0;
    if (max_len > reach) max_len = reach;
    uint32_t got = es_pass(c, k, text + (end - text_pos0), max_len, distance, &col);
    if (got == ES_NOMEM) return SM_ERR_NOMEM;
    if (got == distance) *start = end - col;
    return SM_OK;
}

int sm_edit_cache_pam(sm_edit_cache *c, const sm_db *db, uint32_t pattern, int reverse, const uint8_t *text,
                      size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t limit, uint32_t *distance,
                      uint64_t *start) {
    *distance = ES_INF;
    *start = SM_START_UNKNOWN;
    if (es_bind(c, db) != SM_OK) return SM_ERR_NOMEM;
    if (pattern >= c->db_patterns) return SM_OK;
    const es_key *k = es_get(c, db, pattern, reverse);
    if (!k) return SM_ERR_NOMEM;
    if (end < text_pos0 || end - text_pos0 > text_len) return SM_OK;
    uint64_t avail = end - text_pos0, col = 0;
    const uint8_t *text_end = text + avail;
    if (avail < k->q) return SM_OK;
    uint64_t max_len = avail - k->q, reach = (uint64_t)k->m + limit;
    if (max_len > reach) max_len = reach;
    uint32_t got;
    if ((c->db_pam5 != 0) != (reverse != 0)) {
        /* rc(PAM) + rc(guide), or a 5' PAM + guide: the PAM lies before each candidate start of the guide. */
        got = es_least(c, k, text_end, max_len, limit, 1, &col);
        if (got <= limit) *start = end - col - k->q;
    } else {
        /* guide + PAM (or rc(guide) + rc(PAM)): the PAM ends at end, the guide's alignment at end - q. */
        if (!es_pam_ok(c, k, text_end - k->q)) return SM_OK;
        got = es_least(c, k, text_end - k->q, max_len, limit, 0, &col);
        if (got <= limit) *start = end - k->q - col;
    }
    if (got == ES_NOMEM) return SM_ERR_NOMEM;
    if (got <= limit) *distance = got;
    return SM_OK;
}

uint64_t sm_edit_start(const uint8_t *key, uint32_t m, sm_alphabet alphabet, unsigned flags, const uint8_t *text,
                       size_t text_len, uint64_t text_pos0, uint64_t end, uint32_t distance) {
    if (!key || m == 0 || end < text_pos0 || end - text_pos0 > text_len || distance > m) return SM_START_UNKNOWN;
    sm_edit_cache *c = sm_edit_cache_new();
    uint32_t index;
    uint64_t found = SM_START_UNKNOWN, col = 0;
    if (c) {
        es_set_alphabet(c, alphabet, flags);
        if (es_add(c, key, m, NULL, 0, &index) == SM_OK) {
            uint64_t max_len = end - text_pos0, reach = (uint64_t)m + distance;
            if (max_len > reach) max_len = reach;
            if (es_pass(c, &c->keys[index], text + (end - text_pos0), max_len, distance, &col) == distance)
                found = end - col;
        }
    }
    sm_edit_cache_free(c);
    return found;
}

/* ------------------------------------------------------------ report best */

void sm_best_begin(sm_best_builder *b, uint64_t range_first, uint64_t range_last) {
    memset(b, 0, sizeof *b);
    b->range_first = range_first;
    b->range_last = range_last;
}

static void best_close(sm_best_builder *b, sm_best_fragment *done) {
    b->run.touches_right = b->run.last_end == b->range_last;
    *done = b->run;
    b->open = 0;
}

int sm_best_push(sm_best_builder *b, uint64_t end, uint32_t distance, sm_best_fragment *done) {
    if (b->open && end == b->run.last_end + 1) {
        b->run.last_end = end;
        if (distance < b->run.best_distance) { /* strictly less: the leftmost end wins ties */
            b->run.best_end = end;
            b->run.best_distance = distance;
        }
        return 0;
    }
    int closed = 0;
    if (b->open) {
        best_close(b, done);
        closed = 1;
    }
    memset(&b->run, 0, sizeof b->run);
    b->run.first_end = b->run.last_end = b->run.best_end = end;
    b->run.best_distance = distance;
    b->run.touches_left = end == b->range_first;
    b->open = 1;
    return closed;
}

int sm_best_end(sm_best_builder *b, sm_best_fragment *done) {
    if (!b->open) return 0;
    best_close(b, done);
    return 1;
}

int sm_best_adjacent(const sm_best_fragment *a, const sm_best_fragment *b) {
    return a->touches_right && b->touches_left && b->first_end == a->last_end + 1;
}

void sm_best_merge(const sm_best_fragment *a, const sm_best_fragment *b, sm_best_fragment *out) {
    sm_best_fragment r;
    memset(&r, 0, sizeof r);
    r.first_end = a->first_end;
    r.last_end = b->last_end;
    if (b->best_distance < a->best_distance) {
        r.best_end = b->best_end;
        r.best_distance = b->best_distance;
    } else {
        r.best_end = a->best_end;
        r.best_distance = a->best_distance;
    }
    r.touches_left = a->touches_left;
    r.touches_right = b->touches_right;
    *out = r;
}
