/* Hit limits (sm_runner_options.max_hits_per_pattern, max_hits_per_record,
 * fewest_errors), for every backend, on delivery.
 *
 * Hits reach delivery in the output order (record, start, end, pattern,
 * strand) whatever the backend and thread count, so "the first N" is the
 * same everywhere: each record keeps a count per pattern and one for the
 * record, and a hit past either limit is dropped. With fewest_errors a
 * record's hits are held (with their text) until it ends, when each
 * pattern's least errors (both strands together) are known; only the hits
 * with that many go on, in order, through the limits. Counts and record
 * summaries count what goes on, so they equal what would be printed; the
 * backends return hits instead of counting them where limits are set. */
#include <stdlib.h>

#include "runner/runner_internal.h"

typedef struct {
    sm_rawhit hit;
    size_t text;
} held_hit;

typedef struct sm_limits {
    uint32_t per_pattern, per_record;
    int fewest;
    uint64_t cur;
    int cur_valid;
    uint64_t record_hits;
    uint32_t *pattern_hits;  /* per pattern, in the current record */
    uint16_t *least;         /* fewest_errors: per pattern, in the current record (UINT16_MAX: none) */
    uint32_t *touched;       /* patterns whose entries above are set */
    size_t ntouched;
    held_hit *held;
    size_t nheld, held_cap;
    sm_buf held_text;
} sm_limits;

int sm_limits_open(sm_runner *r) {
    sm_limits *l = calloc(1, sizeof *l);
    if (!l) return SM_ERR_NOMEM;
    r->limits = l;
    l->per_pattern = r->opt.max_hits_per_pattern;
    l->per_record = r->opt.max_hits_per_record;
    l->fewest = r->opt.fewest_errors != 0;
    size_t n = r->pattern_count ? r->pattern_count : 1;
    l->pattern_hits = calloc(n, sizeof *l->pattern_hits);
    l->least = malloc(n * sizeof *l->least);
    l->touched = malloc(n * sizeof *l->touched);
    if (!l->pattern_hits || !l->least || !l->touched) return SM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) l->least[i] = UINT16_MAX;
    return SM_OK;
}

void sm_limits_close(sm_runner *r) {
    sm_limits *l = r->limits;
    if (!l) return;
    free(l->pattern_hits);
    free(l->least);
    free(l->touched);
    free(l->held);
    sm_buf_free(&l->held_text);
    free(l);
    r->limits = NULL;
}

static void reset(sm_limits *l) {
    for (size_t i = 0; i < l->ntouched; i++) {
        l->pattern_hits[l->touched[i]] = 0;
        l->least[l->touched[i]] = UINT16_MAX;
    }
    l->ntouched = 0;
    l->record_hits = 0;
    l->nheld = 0;
    l->held_text.len = 0;
}

static void touch(sm_limits *l, uint32_t pattern) {
    if (l->pattern_hits[pattern] == 0 && l->least[pattern] == UINT16_MAX) l->touched[l->ntouched++] = pattern;
}

static int pass(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    sm_limits *l = r->limits;
    if (l->per_record && l->record_hits >= l->per_record) return SM_OK;
    if (l->per_pattern && l->pattern_hits[x->pattern] >= l->per_pattern) return SM_OK;
    touch(l, x->pattern);
    l->record_hits++;
    l->pattern_hits[x->pattern]++;
    return sm_runner_emit_out(r, record, x, text);
}

int sm_limits_take(sm_runner *r, uint64_t record, const sm_rawhit *x, const uint8_t *text) {
    sm_limits *l = r->limits;
    if (!l->cur_valid || l->cur != record) {
        reset(l);
        l->cur = record;
        l->cur_valid = 1;
    }
    if (!l->fewest) return pass(r, record, x, text);
    if (x->errors > l->least[x->pattern]) return SM_OK; /* never among the fewest */
    touch(l, x->pattern);
    if (x->errors < l->least[x->pattern]) l->least[x->pattern] = x->errors;
    if (l->nheld == l->held_cap) {
        size_t cap = l->held_cap ? l->held_cap * 2 : 64;
        held_hit *h = realloc(l->held, cap * sizeof *h);
        if (!h) return SM_ERR_NOMEM;
        l->held = h;
        l->held_cap = cap;
    }
    l->held[l->nheld].hit = *x;
    l->held[l->nheld].text = l->held_text.len;
    l->nheld++;
    return sm_buf_append(&l->held_text, text, x->end - x->start);
}

int sm_limits_record_done(sm_runner *r, uint64_t record) {
    sm_limits *l = r->limits;
    int rc = SM_OK;
    if (l->fewest && l->cur_valid && l->cur == record) {
        /* pass() counts per pattern from zero again; the least stay */
        for (size_t i = 0; i < l->ntouched; i++) l->pattern_hits[l->touched[i]] = 0;
        l->record_hits = 0;
        for (size_t i = 0; i < l->nheld && rc == SM_OK; i++)
            if (l->held[i].hit.errors == l->least[l->held[i].hit.pattern])
                rc = pass(r, record, &l->held[i].hit, l->held_text.data + l->held[i].text);
    }
    reset(l);
    l->cur_valid = 0;
    return rc;
}
