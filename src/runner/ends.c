/* Partial matches at record ends (sm_runner_options.min_overlap, --min-overlap
 * N), for every backend, in the shared layer.
 *
 * Exact and k mismatches: a pattern of m symbols placed at s (s < 0 or
 * s + m > n for a record of n bytes) runs off the record's start or end;
 * the symbols inside, [max(0, s), min(n, s + m)), at least N of them, are
 * compared and the others are free. The engines find the placements that
 * lie wholly inside (the ordinary hits); the others all lie in the record's
 * first or last m - 1 bytes, so this file keeps a copy of the first and the
 * last W = longest pattern - 1 bytes of every record not yet delivered (a
 * ring of slots, as anchor.c) and compares every overhanging placement of
 * every (pattern, strand) there: patterns x strands x m^2 / 2 symbol tests
 * per record end.
 *
 * k edits: a partial alignment aligns a part P[a, b) of the pattern, at
 * least N symbols and not the whole, with k or fewer edits, to text[s, j),
 * where a > 0 needs s = 0 (the missing prefix runs off the start) and b < m
 * needs j = n (the missing suffix runs off the end). P(j), the least edits
 * of a partial alignment ending at j, plays D(j)'s part: --report ends
 * gives every j with P(j) <= k, best the least of each run of consecutive
 * such j (leftmost on ties); the hit is [s, j), s the largest that reaches
 * P(j) (0 for j < n: only suffixes end there). Ends j < n lie in the first
 * m - 1 + k bytes (column DP, pattern suffixes with a free start), j = n is
 * one hit (a backward DP over the last m - 1 + k bytes, prefixes with a
 * free end, and for a record shorter than m - 1 + k the middle parts). W is
 * then the longest pattern + k, one more than a start's reach, so a start
 * run never touches the end n of a record longer than W. A partial hit with
 * the start, end, pattern and strand of an ordinary one is reported once,
 * with the fewer errors (counts and summaries then take the hits in order).
 *
 * Order: a partial hit at the start has start 0, one at the end starts at
 * n - W + 1 or later, so it can only be preceded in the output by the hits
 * of shorter patterns that start in the record's last W bytes. Delivery
 * hands every ordinary hit of a record here: the start's partial hits are
 * known once the record holds W + 1 bytes (its first segment reads W bytes
 * past what it owns), and go out before the first hit they precede; a hit
 * that starts within W bytes of what has been fed is held until the
 * record's end (or until more has been fed), when the end's partial hits
 * are known and merged with them. Counting and record summaries without
 * hit limits take the partial hits at the record's end, in any order. */
#include <stdlib.h>

#include "runner/runner_internal.h"

/* The most mismatches the placements off one end are found by Shift-And with. */
#define SHIFT_AND_MAX_K 8

typedef struct {
    uint64_t record;
    uint64_t fed;     /* bytes so far; the record's length once ended */
    int ended;
    size_t head_len;  /* bytes of the first W kept */
    size_t tail_len;  /* bytes of the last W kept */
} ends_slot;

typedef struct {
    sm_rawhit hit;
    size_t text;      /* offset of its bytes in held_text */
} held_hit;

typedef struct sm_ends_state {
    uint32_t min_overlap;
    uint32_t k;
    size_t width;     /* W */
    int dna;
    unsigned flags;
    int forward, reverse;
    uint8_t fold[256];
    /* Slots of the records fed and not yet delivered, oldest first; slot
       i's head at bytes + at * 2W, its tail W bytes after. */
    ends_slot *slots;
    uint8_t *bytes;
    size_t first, count, cap;
    /* The record being delivered. */
    uint64_t cur;
    int cur_valid;
    int known;        /* 0 nothing, 1 the start's partial hits, 2 all of them */
    sm_rawhit *part;  /* its partial hits, sorted; part[0, done) went out */
    size_t npart, done, part_cap;
    held_hit *held;   /* ordinary hits held back, in order */
    size_t nheld, held_cap;
    sm_buf held_text;
    /* Every (pattern, strand) key as codes (dna: nucleotide sets; text: the
       folded bytes), key_off[pattern * 2 + reverse], made once; conv: a
       slot's head and tail as codes, made per record end. */
    uint8_t *keys;
    uint64_t *key_off;
    uint8_t *conv;
    /* Exact and mismatches: the sides each pattern's partial hits are
       wanted at (min_overlap_sides; NULL: both). */
    uint8_t *sides;
    int any_start;    /* some pattern's sides hold SM_ENDS_START */
    uint8_t code[256];  /* each text byte's code (text_code) */
    /* DNA, at most SHIFT_AND_MAX_K mismatches, patterns of at most 64:
       masks[(2 * pattern + reverse) * 32
       + code] has bit i set where the key's symbol i matches that code, and
       at + 16 the same for the key read backwards (bit i: symbol m - 1 - i),
       for shift_and_partials (NULL: not used). */
    uint64_t *masks;
    /* k edits: the DP's column, and the ends of one (pattern, strand). */
    int edits;
    sm_report report;
    uint32_t *col;
    struct edit_end { uint64_t j, start; uint32_t errors; } *ends;
} sm_ends_state;

static uint8_t text_code(const sm_ends_state *e, uint8_t t);

int sm_ends_open(sm_runner *r, sm_error *err) {
    const sm_db_header *h = sm_db_head(r->db);
    if (r->opt.circular)
        return sm_set_error(err, SM_ERR_INVALID,
                            "--min-overlap cannot be used with --circular (a circular record has no ends to run off)");
    if (r->opt.anchor != SM_ANCHOR_NONE)
        return sm_set_error(err, SM_ERR_INVALID, "--min-overlap cannot be used with --anchor");
    if (h->pam_length > 0)
        return sm_set_error(err, SM_ERR_INVALID, "--min-overlap cannot be used with a PAM");
    uint32_t k = h->match == SM_MATCH_EXACT ? 0 : h->max_errors;
    if (r->opt.min_overlap <= k)
        return sm_set_error(err, SM_ERR_INVALID,
                            "--min-overlap %u must exceed the errors allowed (%u): every record end would match",
                            r->opt.min_overlap, k);
    sm_ends_state *e = calloc(1, sizeof *e);
    if (!e) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    r->ends = e;
    e->min_overlap = r->opt.min_overlap;
    e->k = k;
    e->edits = h->match == SM_MATCH_EDITS;
    e->report = (sm_report)h->report;
    e->width = e->edits ? (size_t)h->max_length + k : h->max_length > 1 ? (size_t)h->max_length - 1 : 1;
    e->dna = h->alphabet == SM_ALPHABET_DNA;
    e->flags = h->flags;
    e->forward = !e->dna || h->strands != SM_STRAND_REVERSE;
    e->reverse = e->dna && h->strands != SM_STRAND_FORWARD;
    sm_text_fold(e->dna, e->flags, e->fold);
    for (unsigned c = 0; c < 256; c++) e->code[c] = text_code(e, (uint8_t)c);
    uint64_t total = 0;
    for (uint32_t p = 0; p < r->pattern_count; p++) {
        size_t m = 0;
        sm_db_pattern_seq(r->db, p, &m);
        total += 2 * (uint64_t)m;
    }
    e->keys = malloc(total ? total : 1);
    e->key_off = malloc(2 * (size_t)(r->pattern_count ? r->pattern_count : 1) * sizeof *e->key_off);
    e->conv = malloc(2 * e->width);
    if (r->opt.min_overlap_sides && (e->sides = malloc(r->pattern_count ? r->pattern_count : 1)) != NULL)
        memcpy(e->sides, r->opt.min_overlap_sides, r->pattern_count);
    for (uint32_t p = 0; e->sides && p < r->pattern_count; p++) e->any_start |= e->sides[p] & SM_ENDS_START;
    if (e->edits) {
        e->col = malloc(((size_t)h->max_length + 1) * sizeof *e->col);
        e->ends = malloc((e->width + 2) * sizeof *e->ends);
    }
    /* (512 bytes a pattern: not for sets so large that their placements
       cost far more than the symbols compared) */
    int shift_and = e->dna && !e->edits && k <= SHIFT_AND_MAX_K && h->max_length <= 64 && r->pattern_count <= 4096;
    if (shift_and) e->masks = calloc(32 * 2 * (size_t)r->pattern_count + 1, sizeof *e->masks);
    if (!e->keys || !e->key_off || !e->conv || (e->edits && (!e->col || !e->ends)) || (shift_and && !e->masks) ||
        (r->opt.min_overlap_sides && !e->sides))
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    total = 0;
    for (uint32_t p = 0; p < r->pattern_count; p++) {
        size_t m = 0;
        const char *seq = sm_db_pattern_seq(r->db, p, &m);
        for (int rev = 0; rev < 2; rev++) {
            e->key_off[2 * p + rev] = total;
            for (size_t i = 0; i < m && seq; i++) {
                uint8_t c = rev ? sm_nt_complement[(uint8_t)seq[m - 1 - i]] : (uint8_t)seq[i];
                e->keys[total + i] = e->dna ? sm_nt_set[c] : e->fold[c];
            }
            for (size_t i = 0; e->masks && i < m; i++)
                for (unsigned code = 0; code < 16; code++) {
                    uint64_t *mask = e->masks + (2 * (size_t)p + (size_t)rev) * 32;
                    if (e->keys[total + i] & code) mask[code] |= (uint64_t)1 << i;
                    if (e->keys[total + m - 1 - i] & code) mask[16 + code] |= (uint64_t)1 << i;
                }
            total += m;
        }
    }
    return SM_OK;
}

void sm_ends_close(sm_runner *r) {
    sm_ends_state *e = r->ends;
    if (!e) return;
    free(e->slots);
    free(e->bytes);
    free(e->part);
    free(e->held);
    sm_buf_free(&e->held_text);
    free(e->keys);
    free(e->masks);
    free(e->key_off);
    free(e->conv);
    free(e->col);
    free(e->ends);
    free(e->sides);
    free(e);
    r->ends = NULL;
}

static ends_slot *slot_at(sm_ends_state *e, size_t i, uint8_t **head) {
    size_t at = (e->first + i) % e->cap;
    *head = e->bytes + at * 2 * e->width;
    return &e->slots[at];
}

int sm_ends_begin_record(sm_runner *r) {
    sm_ends_state *e = r->ends;
    if (e->count == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256, w2 = 2 * e->width;
        ends_slot *slots = malloc(cap * sizeof *slots);
        uint8_t *bytes = malloc(cap * w2);
        if (!slots || !bytes) {
            free(slots);
            free(bytes);
            return SM_ERR_NOMEM;
        }
        for (size_t i = 0; i < e->count; i++) {
            uint8_t *old;
            slots[i] = *slot_at(e, i, &old);
            memcpy(bytes + i * w2, old, w2);
        }
        free(e->slots);
        free(e->bytes);
        e->slots = slots;
        e->bytes = bytes;
        e->first = 0;
        e->cap = cap;
    }
    e->count++;
    uint8_t *head;
    ends_slot *s = slot_at(e, e->count - 1, &head);
    s->record = r->record_id;
    s->fed = 0;
    s->ended = 0;
    s->head_len = s->tail_len = 0;
    return SM_OK;
}

void sm_ends_feed(sm_runner *r, const void *data, size_t len) {
    sm_ends_state *e = r->ends;
    if (!e->count || len == 0) return;
    uint8_t *head;
    ends_slot *s = slot_at(e, e->count - 1, &head);
    uint8_t *tail = head + e->width;
    const uint8_t *p = data;
    size_t w = e->width;
    s->fed += len;
    if (s->head_len < w) {
        size_t take = len < w - s->head_len ? len : w - s->head_len;
        memcpy(head + s->head_len, p, take);
        s->head_len += take;
    }
    /* the last w bytes so far */
    if (len >= w) {
        memcpy(tail, p + len - w, w);
        s->tail_len = w;
    } else if (s->tail_len + len <= w) {
        memcpy(tail + s->tail_len, p, len);
        s->tail_len += len;
    } else {
        size_t keep = w - len;
        memmove(tail, tail + s->tail_len - keep, keep);
        memcpy(tail + keep, p, len);
        s->tail_len = w;
    }
}

void sm_ends_end_record(sm_runner *r) {
    sm_ends_state *e = r->ends;
    if (!e->count) return;
    uint8_t *head;
    slot_at(e, e->count - 1, &head)->ended = 1;
}

static ends_slot *slot_of(sm_ends_state *e, uint64_t record, uint8_t **head) {
    if (e->count == 0) return NULL;
    uint64_t first = e->slots[e->first].record;
    if (record < first || record - first >= e->count) return NULL;
    ends_slot *s = slot_at(e, (size_t)(record - first), head);
    return s->record == record ? s : NULL;
}

/* The bytes [a, b) of a slot's record: in its head or its tail (every
   overhanging placement lies in one of them). */
static const uint8_t *slot_text(const sm_ends_state *e, const ends_slot *s, const uint8_t *head, uint64_t a,
                                uint64_t b) {
    if (b <= s->head_len) return head + a;
    return head + e->width + (a - (s->fed - s->tail_len));
}

/* A text byte's code: its nucleotide set (dna; an IUPAC code or N matches
   nothing unless --text-iupac, as the engines compare), or its folded byte. */
static uint8_t text_code(const sm_ends_state *e, uint8_t t) {
    if (!e->dna) return e->fold[t];
    unsigned ts = sm_nt_set[t];
    if (!(e->flags & SM_FLAG_TEXT_IUPAC) && (ts & (ts - 1)) != 0) return 0;
    return (uint8_t)ts;
}

static int push_part(sm_ends_state *e, const sm_rawhit *x) {
    if (e->npart == e->part_cap) {
        size_t cap = e->part_cap ? e->part_cap * 2 : 64;
        sm_rawhit *p = realloc(e->part, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        e->part = p;
        e->part_cap = cap;
    }
    e->part[e->npart++] = *x;
    return SM_OK;
}

/* Shift-And with k mismatches over n symbols y (read backwards when back):
   d[j] bit i, after the last symbol, says whether the key's first i + 1
   symbols (mask) lie over the last i + 1 symbols read with at most j
   mismatches. */
static void shift_and(const sm_ends_state *e, const uint64_t *mask, const uint8_t *y, int64_t n, int back,
                      uint64_t *d) {
    uint32_t k = e->k;
    const uint8_t *code = e->code;
    /* no mismatch (the common case) and one: the state words in registers,
       not in d[], and the direction out of the loop */
    if (k <= 1) {
        uint64_t d0 = 0, d1 = 0;
        int64_t i = back ? n - 1 : 0, step = back ? -1 : 1;
        if (k == 0)
            for (int64_t left = n; left > 0; left--, i += step) d0 = ((d0 << 1) | 1) & mask[code[y[i]]];
        else
            for (int64_t left = n; left > 0; left--, i += step) {
                uint64_t b = mask[code[y[i]]];
                d1 = (((d1 << 1) | 1) & b) | ((d0 << 1) | 1);
                d0 = ((d0 << 1) | 1) & b;
            }
        d[0] = d0;
        if (k == 1) d[1] = d1;
        return;
    }
    for (uint32_t j = 0; j <= k; j++) d[j] = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t b = mask[e->code[y[back ? n - 1 - i : i]]], below = d[0];
        d[0] = ((d[0] << 1) | 1) & b;
        for (uint32_t j = 1; j <= k; j++) {
            uint64_t old = d[j];
            /* symbol i matched with j mismatches before, or one more here */
            d[j] = (((old << 1) | 1) & b) | ((below << 1) | 1);
            below = old;
        }
    }
}

/* DNA placements of pattern p (strand rev, m symbols, m <= 64; at most
   SHIFT_AND_MAX_K mismatches) at s in [lo, hi] that run off the record's
   end or its start (not both), by Shift-And over the record's last (first)
   m - 1 symbols: the key's first L symbols over the record's last L, or
   the key read backwards over the record's first symbols read backwards
   (its last L over the record's first L). */
static int shift_and_partials(sm_ends_state *e, const ends_slot *s, const uint8_t *head, uint32_t p, int rev,
                              int64_t m, int64_t n, int64_t lo, int64_t hi) {
    const uint64_t *mask = e->masks + (2 * (size_t)p + (size_t)rev) * 32;
    uint64_t d[SHIFT_AND_MAX_K + 1];
    for (int side = 0; side < 2; side++) {
        /* off the end: s >= 0, s + m > n, the part inside L = n - s long;
           off the start: s < 0, s + m <= n, L = s + m */
        int64_t from = side == 0 ? (lo > 0 ? lo : 0) : lo, to = side == 0 ? hi : (hi < -1 ? hi : -1);
        if (side == 0 && from < n - m + 1) from = n - m + 1;
        if (side == 1 && to > n - m) to = n - m;
        if (from > to) continue;
        int64_t longest = side == 0 ? n - from : to + m, shortest = side == 0 ? n - to : from + m;
        const uint8_t *y = side == 0 ? slot_text(e, s, head, (uint64_t)(n - longest), (uint64_t)n) : head;
        shift_and(e, mask + 16 * side, y, longest, side, d);
        uint64_t hits = d[e->k] & (~(uint64_t)0 << (shortest - 1));
        for (; hits; hits &= hits - 1) {
            int64_t len = __builtin_ctzll(hits) + 1;
            uint16_t errors = 0;
            while (!(d[errors] >> (len - 1) & 1)) errors++;
            sm_rawhit x = {side == 0 ? (uint64_t)(n - len) : 0, side == 0 ? (uint64_t)n : (uint64_t)len, p, errors,
                           (uint8_t)rev, 1}; /* pad 1: partial */
            if (push_part(e, &x) != SM_OK) return SM_ERR_NOMEM;
        }
    }
    return SM_OK;
}

/* Placements s in [lo, hi] of every (pattern, strand) that overhang the
   record (n bytes, known when n_known; else longer than any pattern) with at
   least N symbols inside and at most k errors there. */
static int find_partials(sm_runner *r, const ends_slot *s, const uint8_t *head, int64_t lo_bound, int64_t hi_bound,
                         int n_known) {
    sm_ends_state *e = r->ends;
    int64_t n = n_known ? (int64_t)s->fed : INT64_MAX / 4;
    int64_t need = e->min_overlap;
    /* the start's placements (before the record's length is known) when no pattern wants them: none */
    if (!n_known && e->sides && !e->any_start) return SM_OK;
    /* Placements off the start lie in the head; those off the end in the
       head when the record is no longer than it, else in the tail: only
       what is read is converted. */
    /* With Shift-And (masks) only placements off both ends, in a record no
       longer than W, are compared from the codes. */
    if (!e->masks || (n_known && n <= (int64_t)e->width)) {
        if ((lo_bound < 0 && (!e->sides || e->any_start)) || (n_known && n <= (int64_t)s->head_len))
            for (size_t i = 0; i < s->head_len; i++) e->conv[i] = e->code[head[i]];
        if (n_known && n > (int64_t)s->head_len)
            for (size_t i = 0; i < s->tail_len; i++) e->conv[e->width + i] = e->code[head[e->width + i]];
    }
    for (uint32_t p = 0; p < r->pattern_count; p++) {
        size_t m;
        const char *seq = sm_db_pattern_seq(r->db, p, &m);
        if (!seq || (int64_t)m <= need) continue;
        int64_t mm = (int64_t)m;
        for (int rev = 0; rev < 2; rev++) {
            if (rev ? !e->reverse : !e->forward) continue;
            const uint8_t *keys = e->keys + e->key_off[2 * p + rev];
            int64_t lo = lo_bound > need - mm ? lo_bound : need - mm, hi = hi_bound < n - need ? hi_bound : n - need;
            /* Only the sides asked for; a part over the whole record counts for either. */
            unsigned sides = e->sides ? e->sides[p] : SM_ENDS_START | SM_ENDS_END;
            if (!(sides & SM_ENDS_START) && lo < (n - mm < 0 ? n - mm : 0)) lo = n - mm < 0 ? n - mm : 0;
            if (!(sides & SM_ENDS_END) && hi > (n - mm > 0 ? n - mm : 0)) hi = n - mm > 0 ? n - mm : 0;
            if (!sides) continue;
            if (e->masks) {
                /* placements off one end by Shift-And; those off both (a
                   record shorter than the pattern) one by one below */
                if (shift_and_partials(e, s, head, p, rev, mm, n, lo, hi) != SM_OK) return SM_ERR_NOMEM;
                if (lo < n - mm + 1) lo = n - mm + 1;
                if (hi > -1) hi = -1;
            }
            for (int64_t at = lo; at <= hi; at++) {
                if (at >= 0 && at + mm <= n) {
                    /* wholly inside: the engines'; on to the placements over the end */
                    at = n - mm;
                    continue;
                }
                int64_t a = at > 0 ? at : 0, b = at + mm < n ? at + mm : n;
                if (b - a < need) continue;
                const uint8_t *text = slot_text(e, s, e->conv, (uint64_t)a, (uint64_t)b);
                const uint8_t *key = keys + (a - at);
                uint32_t errors = 0, k = e->k;
                int64_t len = b - a;
                if (e->dna)
                    for (int64_t i = 0; i < len && errors <= k; i++) errors += !(key[i] & text[i]);
                else
                    for (int64_t i = 0; i < len && errors <= k; i++) errors += key[i] != text[i];
                if (errors > e->k) continue;
                sm_rawhit x = {(uint64_t)a, (uint64_t)b, p, (uint16_t)errors, (uint8_t)rev, 1}; /* pad 1: partial */
                if (push_part(e, &x) != SM_OK) return SM_ERR_NOMEM;
            }
        }
    }
    return SM_OK;
}

/* k edits. */
#define EDIT_INF (UINT32_MAX / 4)

static inline uint32_t min3(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t x = a < b ? a : b;
    return x < c ? x : c;
}

static inline int same(const sm_ends_state *e, uint8_t key, uint8_t t) { return e->dna ? (key & t) != 0 : key == t; }

/* The ends of one (pattern, strand) in e->ends[0, count), ascending, to the
   partial hits: every one (SM_REPORT_ENDS) or the least of each run of
   consecutive ends (leftmost on ties). */
static int push_ends(sm_ends_state *e, size_t count, uint32_t pattern, int rev) {
    for (size_t i = 0; i < count;) {
        size_t best = i, next = i + 1;
        if (e->report != SM_REPORT_ENDS)
            for (; next < count && e->ends[next].j == e->ends[next - 1].j + 1; next++)
                if (e->ends[next].errors < e->ends[best].errors) best = next;
        const struct edit_end *x = &e->ends[best];
        sm_rawhit h = {x->start, x->j, pattern, (uint16_t)x->errors, (uint8_t)rev, 1};
        if (push_part(e, &h) != SM_OK) return SM_ERR_NOMEM;
        i = next;
    }
    return SM_OK;
}

/* The partial edit hits of a record: at its start (ends j < n; the record
   is then known to be longer than W) when with_start, at its end n (known)
   when with_end. */
static int edit_partials(sm_runner *r, const ends_slot *s, const uint8_t *head, int with_start, int with_end) {
    sm_ends_state *e = r->ends;
    const uint32_t k = e->k, need = e->min_overlap;
    const uint64_t n = with_end ? s->fed : UINT64_MAX;
    uint32_t *col = e->col;
    for (size_t i = 0; i < s->head_len; i++) e->conv[i] = e->code[head[i]];
    for (size_t i = 0; i < s->tail_len; i++) e->conv[e->width + i] = e->code[head[e->width + i]];
    for (uint32_t p = 0; p < r->pattern_count; p++) {
        size_t m = 0;
        if (!sm_db_pattern_seq(r->db, p, &m) || m <= need) continue;
        for (int rev = 0; rev < 2; rev++) {
            if (rev ? !e->reverse : !e->forward) continue;
            const uint8_t *key = e->keys + e->key_off[2 * p + rev];
            size_t count = 0;
            uint32_t at_n = EDIT_INF; /* P(n) */
            uint64_t start_n = 0;
            /* Suffixes P[a, m), 1 <= a <= m - N, against text[0, j): col[i]
               = the least edits of P[a, i) over the a, text[0, j). */
            uint64_t reach = m - 1 + k, top = with_start ? (reach < n ? reach : n) : 0;
            if (top > 0) {
                const uint8_t *t = e->conv; /* the head: top <= W bytes */
                col[0] = EDIT_INF;
                for (size_t i = 1; i <= m; i++) col[i] = i <= m - need ? 0 : (uint32_t)(i - (m - need));
                for (uint64_t j = 1; j <= top; j++) {
                    uint32_t diag = col[0];
                    for (size_t i = 1; i <= m; i++) {
                        uint32_t sub = diag + !same(e, key[i - 1], t[j - 1]);
                        diag = col[i];
                        col[i] = min3(sub, col[i] + 1, col[i - 1] + 1);
                    }
                    if (j == n) at_n = col[m];
                    else if (col[m] <= k) e->ends[count++] = (struct edit_end){j, 0, col[m]};
                }
            }
            if (with_end && n > 0) {
                /* Prefixes P[0, b), N <= b < m, against text[s, n), backward:
                   col[i] = the least edits of P[i, b) over the b, text[s, n). */
                const uint8_t *t = slot_text(e, s, e->conv, n > reach ? n - reach : 0, n);
                uint64_t lo = n > reach ? n - reach : 0;
                col[m] = EDIT_INF;
                for (size_t i = 0; i < m; i++) col[i] = i >= need ? 0 : (uint32_t)(need - i);
                for (uint64_t j = n; j-- > lo;) {
                    uint8_t c = t[j - lo];
                    uint32_t diag = col[m];
                    for (size_t i = m; i-- > 0;) {
                        uint32_t sub = diag + !same(e, key[i], c);
                        diag = col[i];
                        col[i] = min3(sub, col[i + 1] + 1, col[i] + 1);
                    }
                    /* the largest s first: only a smaller value replaces it */
                    if (col[0] < at_n || (col[0] == at_n && j > start_n)) at_n = col[0], start_n = j;
                }
                /* Middle parts P[a, b), a >= 1, b < m, b - a >= N, against the
                   whole of a record no longer than m - 2 + k. */
                if (n + 2 <= m + k)
                    for (size_t a = 1; a + need < m; a++) {
                        const uint8_t *h = e->conv; /* n <= W: the head */
                        for (size_t i = a; i <= m; i++) col[i] = (uint32_t)(i - a);
                        for (uint64_t j = 1; j <= n; j++) {
                            uint32_t diag = col[a];
                            col[a] = (uint32_t)j;
                            for (size_t i = a + 1; i <= m; i++) {
                                uint32_t sub = diag + !same(e, key[i - 1], h[j - 1]);
                                diag = col[i];
                                col[i] = min3(sub, col[i] + 1, col[i - 1] + 1);
                            }
                        }
                        for (size_t b = a + need; b < m; b++)
                            if (col[b] < at_n) at_n = col[b], start_n = 0;
                    }
                if (at_n <= k) e->ends[count++] = (struct edit_end){n, start_n, at_n};
            }
            if (push_ends(e, count, p, rev) != SM_OK) return SM_ERR_NOMEM;
        }
    }
    return SM_OK;
}

static int by_key_then_errors(const void *pa, const void *pb) {
    const sm_rawhit *x = pa, *y = pb;
    int c = sm_rawhit_cmp(x, y);
    if (c) return c;
    return (int)x->errors - (int)y->errors;
}

/* Sorts part[done, npart) and keeps one hit per (start, end, pattern,
   strand), its fewest errors: round a record shorter than a pattern several
   placements give the same part inside. */
static void sort_pending(sm_ends_state *e) {
    size_t n = e->npart - e->done, out = 0;
    if (n == 0) return; /* (part may be NULL then: no pointer arithmetic on it) */
    sm_rawhit *v = e->part + e->done;
    qsort(v, n, sizeof *v, by_key_then_errors);
    for (size_t i = 0; i < n; i++)
        if (out == 0 || sm_rawhit_cmp(&v[out - 1], &v[i]) != 0) v[out++] = v[i];
    e->npart = e->done + out;
}

/* The record's partial hits as far as they can be known now. */
static int learn(sm_runner *r, uint64_t record) {
    sm_ends_state *e = r->ends;
    if (!e->cur_valid || e->cur != record) {
        e->cur = record;
        e->cur_valid = 1;
        e->known = 0;
        e->npart = e->done = e->nheld = 0;
        e->held_text.len = 0;
    }
    if (e->known == 2) return SM_OK;
    uint8_t *head;
    ends_slot *s = slot_of(e, record, &head);
    if (!s) return SM_OK;
    int rc = SM_OK;
    if (s->ended && e->known == 0) {
        rc = e->edits ? edit_partials(r, s, head, 1, 1) : find_partials(r, s, head, INT64_MIN / 4, INT64_MAX / 4, 1);
        e->known = 2;
    } else if (s->ended && e->known == 1) {
        /* the start's are known; the record is longer than every pattern */
        rc = e->edits ? edit_partials(r, s, head, 0, 1) : find_partials(r, s, head, 0, INT64_MAX / 4, 1);
        e->known = 2;
    } else if (!s->ended && e->known == 0 && s->fed > e->width) {
        rc = e->edits ? edit_partials(r, s, head, 1, 0) : find_partials(r, s, head, INT64_MIN / 4, -1, 0);
        e->known = 1;
    }
    if (rc == SM_OK) sort_pending(e);
    return rc;
}

static int emit_part(sm_runner *r, uint64_t record, const sm_rawhit *x) {
    sm_ends_state *e = r->ends;
    uint8_t *head;
    ends_slot *s = slot_of(e, record, &head);
    if (!s) return SM_ERR_INVALID;
    return sm_runner_emit(r, record, x, slot_text(e, s, head, x->start, x->end));
}

/* Partial hits that precede x (all of them when x is NULL) go out. */
static int flush_parts(sm_runner *r, uint64_t record, const sm_rawhit *x) {
    sm_ends_state *e = r->ends;
    while (e->done < e->npart && (!x || sm_rawhit_cmp(&e->part[e->done], x) < 0)) {
        int rc = emit_part(r, record, &e->part[e->done++]);
        if (rc != SM_OK) return rc;
    }
    return SM_OK;
}

/* An ordinary hit goes out after the partial hits before it; a partial hit
   with its start, end, pattern and strand (k edits) goes out in its place
   when it has fewer errors, else is dropped; where the caller tells partial
   hits apart (on_partial_hit), both go out, the ordinary one first: a
   3' adapter's whole alignment may share its place with a partial one that
   runs off the start, and only the whole one can cut. */
static int emit_whole(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    sm_ends_state *e = r->ends;
    int rc = flush_parts(r, record, x);
    if (rc != SM_OK) return rc;
    if (e->done < e->npart && sm_rawhit_cmp(&e->part[e->done], x) == 0) {
        const sm_rawhit *part = &e->part[e->done++];
        if (r->opt.on_partial_hit) {
            rc = sm_runner_emit(r, record, x, text);
            return rc == SM_OK ? sm_runner_emit(r, record, part, text) : rc;
        }
        if (part->errors < x->errors) return sm_runner_emit(r, record, part, text);
    }
    return sm_runner_emit(r, record, x, text);
}

/* Held hits starting before limit go out, after the partial hits before each. */
static int flush_held(sm_runner *r, uint64_t record, uint64_t limit) {
    sm_ends_state *e = r->ends;
    size_t i = 0;
    int rc = SM_OK;
    for (; i < e->nheld && e->held[i].hit.start < limit && rc == SM_OK; i++) {
        rc = emit_whole(r, record, &e->held[i].hit, e->held_text.data + e->held[i].text);
    }
    if (i > 0) {
        memmove(e->held, e->held + i, (e->nheld - i) * sizeof *e->held);
        e->nheld -= i;
        if (e->nheld == 0) e->held_text.len = 0;
    }
    return rc;
}

int sm_ends_take(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    sm_ends_state *e = r->ends;
    /* order matters only to hits, to limits (the first N) and to edits (a
       partial hit that is also an ordinary one is counted once) */
    if ((r->count_only || r->sums) && !r->limits && !e->edits) return sm_runner_emit(r, record, x, text);
    int rc = learn(r, record);
    if (rc != SM_OK) return rc;
    if (e->known == 2) {
        rc = flush_held(r, record, UINT64_MAX);
        return rc == SM_OK ? emit_whole(r, record, x, text) : rc;
    }
    /* The end's partial hits start at fed - W + 1 or later. */
    uint8_t *head;
    ends_slot *s = slot_of(e, record, &head);
    uint64_t limit = e->known == 1 && s && s->fed > e->width ? s->fed - e->width : 0;
    rc = flush_held(r, record, limit);
    if (rc != SM_OK) return rc;
    if (x->start < limit && e->nheld == 0) return emit_whole(r, record, x, text);
    if (e->nheld == e->held_cap) {
        size_t cap = e->held_cap ? e->held_cap * 2 : 64;
        held_hit *h = realloc(e->held, cap * sizeof *h);
        if (!h) return SM_ERR_NOMEM;
        e->held = h;
        e->held_cap = cap;
    }
    e->held[e->nheld].hit = *x;
    e->held[e->nheld].text = e->held_text.len;
    e->nheld++;
    return sm_buf_append(&e->held_text, text, x->end - x->start);
}

int sm_ends_record_done(sm_runner *r, uint64_t record) {
    sm_ends_state *e = r->ends;
    int rc = learn(r, record);
    if (rc == SM_OK) rc = flush_held(r, record, UINT64_MAX);
    if (rc == SM_OK) rc = flush_parts(r, record, NULL);
    e->cur_valid = 0;
    e->npart = e->done = e->nheld = 0;
    e->held_text.len = 0;
    while (e->count && e->slots[e->first].record <= record) {
        e->first = (e->first + 1) % e->cap;
        e->count--;
    }
    return rc;
}

int sm_ends_check_part(sm_runner *r, int open_side) {
    return r->ends && open_side ? SM_ERR_INVALID : SM_OK;
}
