/* The guide engine's scan: the text in blocks with the bytes around the
 * PAMs still to look at kept, packed two bits per symbol; at every PAM
 * position, for each side that has guides, the seeds looked up and the
 * keys they find verified (guide.h, guide_core.h). */
#include <stdlib.h>

#include "engines/guide/guide.h"

/* Symbols of invalid text packed before and after the buffer's. */
#define GD_PAD 128u
/* Text bytes per block. */
#define GD_BLOCK ((size_t)1 << 16)

/* One side's PAM as the scan checks it: its symbols, most selective first,
   each with the text bytes it matches. */
typedef struct {
    uint32_t n;
    uint8_t at[SM_GUIDE_MAX_PAM];
    uint8_t match[SM_GUIDE_MAX_PAM][256];
    int used;
} gd_pam;

struct sm_gd_state {
    int started;
    uint64_t seq_start;      /* first position of the sequence */
    uint64_t next;           /* the next PAM position to look at */
    uint8_t *buf;            /* text [buf_pos0, buf_pos0 + len) */
    size_t len, cap;
    uint64_t buf_pos0;
    /* buf packed, GD_PAD symbols before it: codes, and 01 lanes where the
       text holds no base (the pads too) */
    uint8_t *codes, *invalid;
    uint32_t back, fwd;      /* text a PAM's sites and lookups read before it and after its start */
    uint32_t nkeys, max_guide, q, shifts;
    uint8_t pam_sets[2][SM_GUIDE_MAX_PAM], flags; /* what the tables below were made from */
    uint8_t text_set[256];   /* the nucleotide set a text byte matches with (0: none) */
    uint8_t code_of[256];    /* its base code, 4 for anything else */
    gd_pam pam[2];
};

/* ------------------------------------------------------------------ state */

void sm_gd_text_tables(uint32_t flags, uint8_t text_set[256], uint8_t code_of[256]) {
    int text_iupac = (flags & SM_FLAG_TEXT_IUPAC) != 0;
    for (unsigned b = 0; b < 256; b++) {
        unsigned s = sm_nt_set[b] & 15u;
        int base = s == 1 || s == 2 || s == 4 || s == 8;
        text_set[b] = (uint8_t)(text_iupac || base ? s : 0);
        code_of[b] = (uint8_t)(!base ? 4 : s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : 3);
    }
}

static void pam_plan(gd_pam *pm, const uint8_t *sets, uint32_t q, const uint8_t *text_set) {
    memset(pm, 0, sizeof *pm);
    for (uint32_t t = 0; t < q; t++)
        if (sets[t]) pm->used = 1;
    if (!pm->used) return;
    /* fewest bases first: those reject most positions */
    for (unsigned size = 1; size <= 4; size++)
        for (uint32_t t = 0; t < q; t++) {
            unsigned s = sets[t], n = (s & 1) + ((s >> 1) & 1) + ((s >> 2) & 1) + ((s >> 3) & 1);
            if (n != size) continue;
            pm->at[pm->n] = (uint8_t)t;
            for (unsigned b = 0; b < 256; b++) pm->match[pm->n][b] = (text_set[b] & s) != 0;
            pm->n++;
        }
}

sm_gd_state *sm_gd_state_new(const uint8_t *section) {
    const sm_gd_header *h = (const sm_gd_header *)section;
    sm_gd_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->nkeys = h->nkeys;
    st->max_guide = h->max_guide;
    st->q = h->pam_length;
    st->shifts = 1 + h->dna_bulges + h->rna_bulges;
    uint32_t bulge = h->dna_bulges > h->rna_bulges ? h->dna_bulges : h->rna_bulges;
    st->back = h->max_guide + bulge;
    st->fwd = h->pam_length + h->max_guide + bulge;
    st->cap = GD_BLOCK + st->back + st->fwd + 64;
    st->buf = calloc(st->cap + 64, 1);
    size_t bytes = (GD_PAD + st->cap + GD_PAD) / 4 + 32;
    st->codes = calloc(bytes, 1);
    st->invalid = malloc(bytes);
    if (!st->buf || !st->codes || !st->invalid) {
        sm_gd_state_free(st);
        return NULL;
    }
    memset(st->invalid, 0x55, bytes);
    memcpy(st->pam_sets, h->pam_sets, sizeof st->pam_sets);
    st->flags = (uint8_t)h->flags;
    sm_gd_text_tables(h->flags, st->text_set, st->code_of);
    for (int side = 0; side < 2; side++) pam_plan(&st->pam[side], h->pam_sets[side], h->pam_length, st->text_set);
    return st;
}

void sm_gd_state_free(sm_gd_state *st) {
    if (!st) return;
    free(st->buf);
    free(st->codes);
    free(st->invalid);
    free(st);
}

int sm_gd_state_fits(const uint8_t *section, const sm_gd_state *st) {
    const sm_gd_header *h = (const sm_gd_header *)section;
    uint32_t bulge = h->dna_bulges > h->rna_bulges ? h->dna_bulges : h->rna_bulges;
    /* the PAM tables and the buffers are made for the section: a state serves only a section like it */
    return st && st->q == h->pam_length && st->shifts == 1 + h->dna_bulges + h->rna_bulges &&
           st->back == h->max_guide + bulge && st->nkeys == h->nkeys && st->max_guide == h->max_guide &&
           st->fwd == h->pam_length + h->max_guide + bulge && st->flags == (uint8_t)h->flags &&
           memcmp(st->pam_sets, h->pam_sets, sizeof st->pam_sets) == 0;
}

void sm_gd_state_reset(sm_gd_state *st) {
    st->started = 0;
    st->len = 0;
}

/* ---------------------------------------------------------------- packing */

static inline uint64_t load_le64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
#endif
}

/* 32 packed symbols from symbol s on. */
static inline uint64_t load_symbols(const uint8_t *packed, size_t s) {
    const uint8_t *p = packed + s / 4;
    unsigned shift = (unsigned)(s % 4) * 2;
    uint64_t v = load_le64(p) >> shift;
    if (shift) v |= load_le64(p + 8) << (64 - shift);
    return v;
}

/* Packs buf[0, len) after the front pad; the symbols after it are invalid. */
static void pack(sm_gd_state *st) {
    uint8_t *codes = st->codes + GD_PAD / 4, *invalid = st->invalid + GD_PAD / 4;
    const uint8_t *b = st->buf, *code_of = st->code_of;
    size_t full = st->len / 4;
    for (size_t o = 0; o < full; o++, b += 4) {
        unsigned c0 = code_of[b[0]], c1 = code_of[b[1]], c2 = code_of[b[2]], c3 = code_of[b[3]];
        codes[o] = (uint8_t)((c0 & 3) | (c1 & 3) << 2 | (c2 & 3) << 4 | (c3 & 3) << 6);
        invalid[o] = (uint8_t)((c0 >> 2) | (c1 >> 2) << 2 | (c2 >> 2) << 4 | (c3 >> 2) << 6);
    }
    size_t rest = st->len - full * 4;
    unsigned cv = 0, iv = 0;
    for (size_t j = 0; j < 4; j++) {
        unsigned c = j < rest ? code_of[b[j]] : 4;
        cv |= (c & 3) << (2 * j);
        iv |= (c >> 2) << (2 * j);
    }
    codes[full] = (uint8_t)cv;
    invalid[full] = (uint8_t)iv;
    memset(codes + full + 1, 0, GD_PAD / 4 + 16);
    memset(invalid + full + 1, 0x55, GD_PAD / 4 + 16);
}

/* ----------------------------------------------------------- verification */

/* What a PAM's keys are checked against. */
typedef struct {
    const sm_gd_header *h;
    const uint8_t *section;
    sm_gd_state *st;
    uint64_t text_end;       /* the text known so far (a site must end by it) */
    sm_sink *sink;
} gd_ctx;

/* The mismatch mask of a key against the text window from position x. */
static inline uint64_t key_mask(const gd_ctx *c, const sm_gd_key *key, uint32_t L, int64_t x) {
    sm_gd_state *st = c->st;
    size_t s = (size_t)((int64_t)GD_PAD + (x - (int64_t)st->buf_pos0));
    uint64_t lanes = sm_gd_lanes(L);
    if (key->packed && !(c->h->flags & SM_FLAG_TEXT_IUPAC)) {
        return sm_gd_packed_mask(load_symbols(st->codes, s), load_symbols(st->invalid, s), key->code, key->care, lanes);
    }
    /* IUPAC codes in the key or the text: symbol by symbol */
    uint64_t m = 0;
    for (uint32_t j = 0; j < L; j++) {
        int64_t at = x + (int64_t)j;
        unsigned ts = 0;
        if (at >= (int64_t)st->buf_pos0 && (uint64_t)at < c->text_end && (uint64_t)at >= st->seq_start)
            ts = st->text_set[st->buf[(size_t)(at - (int64_t)st->buf_pos0)]];
        if (!(ts & key->sets[j])) m |= (uint64_t)1 << (2 * j);
    }
    return m;
}

/* Key index at the PAM p of its group: its sites, unless a lookup before
   (ti, j) found it (ti = SM_GD_NONE: checked at every PAM). */
static void verify(const gd_ctx *c, const sm_gd_group *g, const sm_gd_shape *shape, const sm_gd_piece *pieces,
                   uint32_t index, uint64_t p, int64_t base, uint32_t ti, uint32_t j) {
    const sm_gd_key *key = (const sm_gd_key *)(c->section + c->h->keys_off) + index;
    uint32_t L = g->length;
    uint64_t m[SM_GUIDE_MAX_SHIFTS];
    m[0] = key_mask(c, key, L, base);
    uint32_t shifts = c->st->shifts;
    if (shifts == 1) {
        if ((uint32_t)SM_GPU_POPC64(m[0]) > shape->k) return;
    } else {
        for (uint32_t t = 1; t < shifts; t++) m[t] = key_mask(c, key, L, base + sm_gd_shift(shape, t));
    }
    if (ti != SM_GD_NONE && sm_gd_found_before(m, pieces, g->pieces, ti, j)) return;
    sm_gd_site sites[SM_GUIDE_MAX_SHIFTS];
    uint32_t n = sm_gd_sites(shape, m, sites);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t start, end;
        sm_gd_extent(p, c->h->pam_length, L, g->left, sites[i].delta, &start, &end);
        if (start < c->st->seq_start || start > end || end > c->text_end) continue;
        sm_sink_add(c->sink, start, end, key->output >> 1, (int)(key->output & 1u), sites[i].mismatches);
    }
}

/* A PAM at p with guides on side left: every group of that side. */
static void at_pam(const gd_ctx *c, uint64_t p, uint32_t left) {
    const sm_gd_header *h = c->h;
    const sm_gd_group *groups = (const sm_gd_group *)(c->section + h->groups_off);
    const sm_gd_piece *all = (const sm_gd_piece *)(c->section + h->pieces_off);
    const uint32_t *index = (const uint32_t *)(c->section + h->index_off);
    const uint32_t *lists = (const uint32_t *)(c->section + h->lists_off);
    sm_gd_state *st = c->st;
    for (uint32_t gi = 0; gi < h->ngroups; gi++) {
        const sm_gd_group *g = &groups[gi];
        if (g->left != left) continue;
        sm_gd_shape shape = {g->length, g->left, h->k, h->dna_bulges, h->rna_bulges};
        int64_t base = left ? (int64_t)p - (int64_t)g->length : (int64_t)(p + h->pam_length);
        const sm_gd_piece *pieces = all + g->first_piece;
        for (uint32_t ti = 0; ti < st->shifts && g->pieces; ti++) {
            int64_t shifted = base + sm_gd_shift(&shape, ti);
            for (uint32_t j = ti == 0 ? 0 : 1; j < g->pieces; j++) {
                const sm_gd_piece *pc = &pieces[j];
                size_t s = (size_t)((int64_t)GD_PAD + shifted + pc->lo - (int64_t)st->buf_pos0);
                uint64_t lanes = sm_gd_lanes(pc->len);
                if (load_symbols(st->invalid, s) & lanes) continue;
                uint64_t code = load_symbols(st->codes, s) & (lanes * 3);
                const uint32_t *ix = index + pc->index_at + code;
                for (uint32_t e = ix[0]; e < ix[1]; e++) verify(c, g, &shape, pieces, lists[e], p, base, ti, j);
            }
        }
        for (uint64_t e = g->first_brute; e < g->first_brute + g->nbrute; e++)
            verify(c, g, &shape, pieces, lists[e], p, base, SM_GD_NONE, 0);
    }
}

/* The PAM positions [from, to), whose text lies in buf up to text_end. */
static void pams(const gd_ctx *c, uint64_t from, uint64_t to) {
    sm_gd_state *st = c->st;
    const uint8_t *buf = st->buf;
    for (int side = 0; side < 2; side++) {
        const gd_pam *pm = &st->pam[side];
        if (!pm->used) continue;
        const uint8_t *m0 = pm->match[0];
        uint32_t a0 = pm->at[0];
        for (uint64_t p = from; p < to; p++) {
            size_t i = (size_t)(p - st->buf_pos0);
            if (!m0[buf[i + a0]]) continue;
            uint32_t r = 1;
            while (r < pm->n && pm->match[r][buf[i + pm->at[r]]]) r++;
            if (r == pm->n) at_pam(c, p, (uint32_t)side);
        }
    }
}

/* ----------------------------------------------------------------- scans */

void sm_gd_scan(const uint8_t *section, sm_gd_state *st, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    const sm_gd_header *h = (const sm_gd_header *)section;
    if (!st->started) {
        st->started = 1;
        st->seq_start = st->next = st->buf_pos0 = pos0;
        st->len = 0;
    }
    while (len > 0) {
        /* keep what the PAMs still to look at read before them */
        uint64_t keep_from = st->next > st->buf_pos0 + st->back ? st->next - st->back : st->buf_pos0;
        size_t drop = (size_t)(keep_from - st->buf_pos0);
        if (drop > st->len) drop = st->len;
        memmove(st->buf, st->buf + drop, st->len - drop);
        st->len -= drop;
        st->buf_pos0 += drop;
        size_t n = st->cap - st->len;
        if (n > len) n = len;
        memcpy(st->buf + st->len, text, n);
        st->len += n;
        memset(st->buf + st->len, 0, 64); /* past the text: matches no PAM symbol */
        pack(st);
        uint64_t seen = pos0 + n;
        gd_ctx c = {h, section, st, seen, sink};
        if (seen >= st->fwd && seen - st->fwd > st->next) {
            pams(&c, st->next, seen - st->fwd);
            st->next = seen - st->fwd;
        }
        text += n;
        len -= n;
        pos0 = seen;
    }
}

void sm_gd_finish(const uint8_t *section, sm_gd_state *st, uint64_t end_pos, sm_sink *sink) {
    const sm_gd_header *h = (const sm_gd_header *)section;
    if (st->started) {
        uint64_t seen = st->buf_pos0 + st->len;
        if (end_pos > seen) end_pos = seen;
        gd_ctx c = {h, section, st, end_pos, sink};
        if (end_pos >= h->pam_length && end_pos - h->pam_length + 1 > st->next)
            pams(&c, st->next, end_pos - h->pam_length + 1);
    }
    sm_gd_state_reset(st);
}
