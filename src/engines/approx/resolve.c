/* k edits: from end events to hits. The engines report every end j with
 * D(j) <= k; here each becomes a hit (--report ends) or each run of
 * consecutive ends gives its best end (--report best), and the start is
 * recovered as the largest s with edit(pattern, text[s, j)) = D(j). */
#include <stdlib.h>

#include "base/internal.h"
#include "engines/approx/approx.h"

int sm_run_list_push(sm_run_list *list, const sm_open_run *run) {
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        sm_open_run *p = realloc(list->runs, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        list->runs = p;
        list->cap = cap;
    }
    list->runs[list->n++] = *run;
    return SM_OK;
}

/* With a PAM: every event's distance becomes the constrained D'(end) with
   its start; events over k are dropped. The order (pattern, strand, end)
   stays. */
static int pam_filter(const sm_db *db, sm_edit_cache *cache, sm_rawhit *ev, size_t *n, const uint8_t *text,
                      size_t len, uint64_t pos0) {
    uint32_t k = sm_db_head(db)->max_errors;
    size_t out = 0;
    for (size_t i = 0; i < *n; i++) {
        uint32_t d;
        uint64_t start;
        if (sm_edit_cache_pam(cache, db, ev[i].pattern, ev[i].reverse, text, len, pos0, ev[i].end, k, &d, &start) !=
            SM_OK)
            return SM_ERR_NOMEM;
        if (d > k || start == SM_START_UNKNOWN) continue;
        ev[out] = ev[i];
        ev[out].start = start;
        ev[out].errors = (uint16_t)d;
        out++;
    }
    *n = out;
    return SM_OK;
}

int sm_edits_resolve(const sm_db *db, sm_edit_cache *cache, sm_sink *sink, size_t from, const uint8_t *text,
                     size_t len, uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders) {
    const sm_db_header *h = sm_db_head(db);
    size_t n = sink->n - from, out = 0;
    /* checked first: with no hits yet sink->hits may be NULL, and NULL + 0 is undefined */
    if (n == 0) return SM_OK;
    sm_rawhit *ev = sink->hits + from;
    sm_sort_events(ev, n);
    /* Starts known per event (the PAM pass finds them), else recovered. */
    int known = h->pam_length > 0;
    if (known && pam_filter(db, cache, ev, &n, text, len, pos0) != SM_OK) return SM_ERR_NOMEM;
    int status = SM_OK;
    size_t i = 0;
    while (i < n && status == SM_OK) {
        uint32_t pattern = ev[i].pattern;
        int reverse = ev[i].reverse;
        size_t group_end = i;
        while (group_end < n && ev[group_end].pattern == pattern && ev[group_end].reverse == reverse) group_end++;
        /* An end whose start cannot be recovered never comes from a database
           sm_compile built, only from one whose engine section and pattern
           table disagree (crafted, checksum recomputed). It is dropped: its
           hit would reach outside the text. */
        if (h->report == SM_REPORT_ENDS) {
            for (; i < group_end && status == SM_OK; i++) {
                sm_rawhit hit = ev[i];
                if (!known)
                    status = sm_edit_cache_start(cache, db, pattern, reverse, text, len, pos0, hit.end, hit.errors,
                                                 &hit.start);
                if (hit.start != SM_START_UNKNOWN) ev[out++] = hit;
            }
            i = group_end;
            continue;
        }
        sm_best_builder b;
        sm_best_begin(&b, first_end, last_end);
        uint64_t open_start = SM_START_UNKNOWN; /* known starts: that of the open run's best end */
        for (; i <= group_end && status == SM_OK; i++) {
            sm_best_fragment f;
            uint64_t start = open_start;
            int done = i < group_end ? sm_best_push(&b, ev[i].end, ev[i].errors, &f) : sm_best_end(&b, &f);
            if (i < group_end && b.run.best_end == ev[i].end) open_start = ev[i].start;
            if (!done) continue;
            if (!known)
                status = sm_edit_cache_start(cache, db, pattern, reverse, text, len, pos0, f.best_end, f.best_distance,
                                             &start);
            if (start == SM_START_UNKNOWN) continue;
            if (borders && (f.touches_left || f.touches_right)) {
                sm_open_run run = {f.first_end, f.last_end, f.best_end, start, pattern, f.best_distance,
                                   (uint8_t)reverse, f.touches_left, f.touches_right, 0};
                if (sm_run_list_push(borders, &run) != SM_OK) status = SM_ERR_NOMEM;
                continue;
            }
            sm_rawhit hit = {start, f.best_end, pattern, (uint16_t)f.best_distance, (uint8_t)reverse, 0};
            ev[out++] = hit; /* out never passes i: a run has at least one event */
        }
        i = group_end;
    }
    sink->n = from + out;
    sm_sort_hits(sink->hits + from, out);
    return status;
}
