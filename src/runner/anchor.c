/* Anchored runners (sm_runner_options.anchor): only the hits at a record's
 * start or end, for any backend.
 *
 * An anchored hit lies within the first (or last) W = longest pattern + k
 * bytes of its record: an exact or k-mismatch hit is at most the longest
 * pattern long, and an edit alignment of a pattern of m symbols with at
 * most k errors covers at most m + k text bytes. So only that window of
 * each record is fed to the batch (the rest is counted and dropped), and a
 * copy of it is kept in a ring of slots, one per record not yet delivered.
 *
 * The engines find every hit in the window; delivery hands them here:
 *   - exact and k mismatches: a hit is anchored when it starts at 0 or ends
 *     at the record's length, and goes out at once (still in order);
 *   - k edits: an engine hit only says that the pattern (on that strand)
 *     reaches distance <= k somewhere in the window, which every anchored
 *     alignment does (D(j) <= A(j)); such candidates wait for the record's
 *     end, then a DP over the window gives the anchored hits exactly (their
 *     definition is in include/seqmatch.h), sorted and emitted before the
 *     record-done call. */
#include <stdlib.h>

#include "runner/runner_internal.h"

/* Bytes handed to a caller that writes in place (sm_runner_feed_buffer):
   the window is small, the rest of a record is dropped. */
#define STAGE_BYTES ((size_t)256 << 10)

typedef struct {
    uint64_t record;
    uint64_t length;  /* the record's length, once it has ended */
    uint64_t offset;  /* record coordinate of the window's first byte */
    size_t n;         /* window bytes in the slot */
} anchor_window;

typedef struct sm_anchor_state {
    sm_anchor where;
    size_t width;     /* W */
    int edits;
    sm_report report;
    uint32_t k;
    int dna;
    unsigned flags;
    uint8_t fold[256]; /* text: bytes compared after this */
    uint64_t fed;      /* bytes of the open record so far */
    uint8_t *stage;
    /* Windows of the records fed and not yet delivered, oldest first: slot
       i's bytes at bytes + ((head + i) % cap) * width. */
    anchor_window *win;
    uint8_t *bytes;
    size_t head, count, cap;
    /* k edits: the record being delivered's candidates, then its hits. */
    sm_rawhit *cand, *found;
    size_t ncand, cand_cap, nfound, found_cap;
    uint8_t *key;      /* DP: the pattern as compared (reverse complemented, reversed) */
    uint32_t *col;     /* DP column, longest pattern + 1 cells */
    size_t key_cap;
} sm_anchor_state;

int sm_anchor_open(sm_runner *r, sm_error *err) {
    const sm_db_header *h = sm_db_head(r->db);
    if (r->opt.anchor != SM_ANCHOR_START && r->opt.anchor != SM_ANCHOR_END)
        return sm_set_error(err, SM_ERR_INVALID, "unknown anchor %d", (int)r->opt.anchor);
    if (h->pam_length > 0 && h->match == SM_MATCH_EDITS)
        return sm_set_error(err, SM_ERR_INVALID, "anchored hits with k edits cannot be combined with a PAM");
    sm_anchor_state *a = calloc(1, sizeof *a);
    if (!a) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    r->anchor = a;
    a->where = r->opt.anchor;
    a->edits = h->match == SM_MATCH_EDITS;
    a->k = h->match == SM_MATCH_EXACT ? 0 : h->max_errors;
    a->report = (sm_report)h->report;
    a->width = (size_t)sm_db_longest_hit(h) + (a->edits ? a->k : 0);
    if (a->width == 0) a->width = 1;
    a->dna = h->alphabet == SM_ALPHABET_DNA;
    a->flags = h->flags;
    sm_text_fold(a->dna, a->flags, a->fold);
    a->stage = malloc(STAGE_BYTES + SM_WRITE_SLACK);
    a->key_cap = (size_t)h->max_length + 1;
    a->key = malloc(a->key_cap);
    a->col = malloc(a->key_cap * sizeof *a->col);
    if (!a->stage || !a->key || !a->col) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    return SM_OK;
}

void sm_anchor_close(sm_runner *r) {
    sm_anchor_state *a = r->anchor;
    if (!a) return;
    free(a->stage);
    free(a->win);
    free(a->bytes);
    free(a->cand);
    free(a->found);
    free(a->key);
    free(a->col);
    free(a);
    r->anchor = NULL;
}

static anchor_window *slot(sm_anchor_state *a, size_t i, uint8_t **bytes) {
    size_t at = (a->head + i) % a->cap;
    *bytes = a->bytes + at * a->width;
    return &a->win[at];
}

int sm_anchor_begin_record(sm_runner *r) {
    sm_anchor_state *a = r->anchor;
    if (a->count == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1024;
        anchor_window *win = malloc(cap * sizeof *win);
        uint8_t *bytes = malloc(cap * a->width);
        if (!win || !bytes) {
            free(win);
            free(bytes);
            return SM_ERR_NOMEM;
        }
        for (size_t i = 0; i < a->count; i++) {
            uint8_t *old;
            win[i] = *slot(a, i, &old);
            memcpy(bytes + i * a->width, old, a->width);
        }
        free(a->win);
        free(a->bytes);
        a->win = win;
        a->bytes = bytes;
        a->head = 0;
        a->cap = cap;
    }
    a->count++;
    uint8_t *bytes;
    anchor_window *w = slot(a, a->count - 1, &bytes);
    w->record = r->record_id;
    w->length = w->offset = 0;
    w->n = 0;
    a->fed = 0;
    return SM_OK;
}

int sm_anchor_feed(sm_runner *r, const void *data, size_t len) {
    sm_anchor_state *a = r->anchor;
    uint8_t *bytes;
    anchor_window *w = slot(a, a->count - 1, &bytes);
    const uint8_t *p = data;
    size_t width = a->width;
    a->fed += len;
    if (a->where == SM_ANCHOR_START) {
        if (w->n >= width) return r->status;
        size_t take = len < width - w->n ? len : width - w->n;
        memcpy(bytes + w->n, p, take);
        w->n += take;
        return sm_runner_feed_direct(r, p, take);
    }
    /* the end: the last width bytes so far */
    if (len >= width) {
        memcpy(bytes, p + len - width, width);
        w->n = width;
    } else if (w->n + len <= width) {
        memcpy(bytes + w->n, p, len);
        w->n += len;
    } else {
        size_t keep = width - len;
        memmove(bytes, bytes + w->n - keep, keep);
        memcpy(bytes + keep, p, len);
        w->n = width;
    }
    return r->status;
}

void sm_anchor_stage(sm_runner *r, size_t want, void **dst, size_t *avail) {
    *dst = r->anchor->stage;
    *avail = want < STAGE_BYTES ? want : STAGE_BYTES;
}

int sm_anchor_commit(sm_runner *r, size_t len) {
    if (len > STAGE_BYTES) return SM_ERR_INVALID;
    return sm_anchor_feed(r, r->anchor->stage, len);
}

int sm_anchor_end_record(sm_runner *r) {
    sm_anchor_state *a = r->anchor;
    uint8_t *bytes;
    anchor_window *w = slot(a, a->count - 1, &bytes);
    w->length = a->fed;
    if (a->where == SM_ANCHOR_START) return r->status;
    /* the window goes in now, in its record coordinates */
    w->offset = a->fed - w->n;
    r->own_from = w->offset;
    return sm_runner_feed_direct(r, bytes, w->n);
}

/* The window of a record being delivered (the oldest, normally). */
static anchor_window *window_of(sm_anchor_state *a, uint64_t record, uint8_t **bytes) {
    if (a->count == 0) return NULL;
    uint64_t first = a->win[a->head].record;
    if (record < first || record - first >= a->count) return NULL;
    anchor_window *w = slot(a, (size_t)(record - first), bytes);
    return w->record == record ? w : NULL;
}

static int push_hit(sm_rawhit **list, size_t *n, size_t *cap, const sm_rawhit *x) {
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 64;
        sm_rawhit *p = realloc(*list, grown * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        *list = p;
        *cap = grown;
    }
    (*list)[(*n)++] = *x;
    return SM_OK;
}

int sm_anchor_take(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    sm_anchor_state *a = r->anchor;
    if (a->edits) return push_hit(&a->cand, &a->ncand, &a->cand_cap, x);
    if (a->where == SM_ANCHOR_START) return x->start == 0 ? sm_runner_emit(r, record, x, text) : SM_OK;
    uint8_t *bytes;
    anchor_window *w = window_of(a, record, &bytes);
    return w && x->end == w->length ? sm_runner_emit(r, record, x, text) : SM_OK;
}

/* Does key symbol p match text byte t? As the engines compare. */
static int symbol_matches(const sm_anchor_state *a, uint8_t p, uint8_t t) {
    if (!a->dna) return a->fold[p] == a->fold[t];
    unsigned ts = sm_nt_set[t];
    if (!(a->flags & SM_FLAG_TEXT_IUPAC) && (ts & (ts - 1)) != 0) return 0;
    return (sm_nt_set[p] & ts) != 0;
}

/* The key of (pattern, strand) into a->key, as read from the window's side
   the anchor is on: forward from the start; reversed from the end. */
static size_t make_key(sm_runner *r, uint32_t pattern, int reverse) {
    sm_anchor_state *a = r->anchor;
    size_t m;
    const char *seq = sm_db_pattern_seq(r->db, pattern, &m);
    if (!seq || m + 1 > a->key_cap) return 0;
    for (size_t i = 0; i < m; i++) {
        uint8_t c = (uint8_t)(reverse ? sm_nt_complement[(uint8_t)seq[m - 1 - i]] : (uint8_t)seq[i]);
        /* the DP from the end reads the key back to front */
        a->key[a->where == SM_ANCHOR_END ? m - 1 - i : i] = c;
    }
    return m;
}

/* The anchored hits of one (pattern, strand) in the window (definitions in
   include/seqmatch.h). */
static int edit_hits(sm_runner *r, const anchor_window *w, const uint8_t *text, uint32_t pattern, int reverse) {
    sm_anchor_state *a = r->anchor;
    size_t m = make_key(r, pattern, reverse);
    if (m == 0) return SM_OK;
    uint32_t k = a->k, *col = a->col;
    const uint8_t *key = a->key;
    int end = a->where == SM_ANCHOR_END;
    size_t n = w->n, last = m + k < n ? m + k : n; /* A(j) > k past m + k */
    for (size_t i = 0; i <= m; i++) col[i] = (uint32_t)i;
    uint32_t best = end ? col[m] : UINT32_MAX;
    size_t best_j = 0, run_j = 0;
    uint32_t run_best = UINT32_MAX;
    for (size_t j = 1; j <= last; j++) {
        uint8_t t = end ? text[n - j] : text[j - 1];
        uint32_t diag = col[0];
        col[0] = (uint32_t)j;
        for (size_t i = 1; i <= m; i++) {
            uint32_t up = col[i];
            uint32_t v = diag + !symbol_matches(a, key[i - 1], t);
            if (up + 1 < v) v = up + 1;
            if (col[i - 1] + 1 < v) v = col[i - 1] + 1;
            diag = up;
            col[i] = v;
        }
        uint32_t d = col[m];
        if (end) {
            if (d < best) best = d, best_j = j; /* the first j: the largest start */
            continue;
        }
        if (a->report == SM_REPORT_ENDS) {
            if (d <= k) {
                sm_rawhit x = {0, j, pattern, (uint16_t)d, (uint8_t)reverse, 0};
                if (push_hit(&a->found, &a->nfound, &a->found_cap, &x) != SM_OK) return SM_ERR_NOMEM;
            }
            continue;
        }
        if (d <= k && d < run_best) run_best = d, run_j = j; /* leftmost of the least */
        if ((d > k || j == last) && run_best != UINT32_MAX) {
            sm_rawhit x = {0, run_j, pattern, (uint16_t)run_best, (uint8_t)reverse, 0};
            if (push_hit(&a->found, &a->nfound, &a->found_cap, &x) != SM_OK) return SM_ERR_NOMEM;
            run_best = UINT32_MAX;
        }
    }
    if (end && best <= k) {
        sm_rawhit x = {w->offset + n - best_j, w->offset + n, pattern, (uint16_t)best, (uint8_t)reverse, 0};
        return push_hit(&a->found, &a->nfound, &a->found_cap, &x);
    }
    return SM_OK;
}

static int by_key(const void *pa, const void *pb) {
    const sm_rawhit *x = pa, *y = pb;
    if (x->pattern != y->pattern) return x->pattern < y->pattern ? -1 : 1;
    return (int)x->reverse - (int)y->reverse;
}

int sm_anchor_record_done(sm_runner *r, uint64_t record) {
    sm_anchor_state *a = r->anchor;
    uint8_t *bytes;
    anchor_window *w = window_of(a, record, &bytes);
    int rc = SM_OK;
    if (a->ncand && w) {
        qsort(a->cand, a->ncand, sizeof *a->cand, by_key);
        a->nfound = 0;
        for (size_t i = 0; i < a->ncand && rc == SM_OK; i++)
            if (i == 0 || by_key(&a->cand[i - 1], &a->cand[i]) != 0)
                rc = edit_hits(r, w, bytes, a->cand[i].pattern, a->cand[i].reverse);
        sm_sort_hits(a->found, a->nfound);
        for (size_t i = 0; i < a->nfound && rc == SM_OK; i++)
            rc = sm_runner_emit(r, record, &a->found[i], bytes + (a->found[i].start - w->offset));
    }
    a->ncand = 0;
    /* every record before it is done too */
    while (a->count && a->win[a->head].record <= record) {
        a->head = (a->head + 1) % a->cap;
        a->count--;
    }
    return rc;
}
