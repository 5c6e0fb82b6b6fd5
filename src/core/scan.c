/* Scanning one sequence: block scans and counting. Hits are collected from
 * every engine into a sink, sorted into the deterministic order and then
 * handed to the callback. */
#include <stdlib.h>

#include "core/engine_set.h"
#include "base/internal.h"
#include "core/scan_internal.h"

struct sm_scratch {
    sm_engine_set set;
    sm_sink sink;
};

int sm_scratch_alloc_variant(const sm_db *db, const sm_variant *variant, sm_scratch **out) {
    if (!out) return SM_ERR_INVALID;
    *out = NULL;
    if (!db) return SM_ERR_INVALID;
    sm_scratch *s = calloc(1, sizeof *s);
    if (!s) return SM_ERR_NOMEM;
    if (sm_engine_set_init(&s->set, db, variant) != SM_OK) {
        free(s);
        return SM_ERR_NOMEM;
    }
    *out = s;
    return SM_OK;
}

int sm_scratch_alloc(const sm_db *db, sm_scratch **out) { return sm_scratch_alloc_variant(db, NULL, out); }

void sm_scratch_free(sm_scratch *s) {
    if (!s) return;
    sm_engine_set_free(&s->set);
    free(s->sink.hits);
    free(s);
}

static int deliver(const sm_rawhit *hits, size_t n, const uint8_t *text, uint64_t text_pos0, uint64_t record,
                   sm_hit_fn on_hit, void *ctx) {
    sm_hit h;
    h.record = record;
    for (size_t i = 0; i < n; i++) {
        h.start = hits[i].start;
        h.end = hits[i].end;
        h.pattern = hits[i].pattern;
        h.strand = hits[i].reverse ? '-' : '+';
        h.errors = hits[i].errors;
        h.text = text ? (const char *)text + (hits[i].start - text_pos0) : NULL;
        if (on_hit(&h, ctx) != 0) return SM_ERR_TERMINATED;
    }
    return SM_OK;
}

int sm_scan(const sm_db *db, sm_scratch *s, const void *data, size_t len, sm_hit_fn on_hit, void *ctx) {
    if (!db || !s || (!data && len) || !on_hit) return SM_ERR_INVALID;
    if (sm_engine_set_bind(&s->set, db) != SM_OK) return SM_ERR_NOMEM;
    s->sink.n = 0;
    s->sink.counts = NULL;
    s->sink.failed = 0;
    s->sink.own_lo = 0;
    s->sink.own_hi = UINT64_MAX;
    sm_engine_set_scan(&s->set, data, len, 0, &s->sink);
    sm_engine_set_finish(&s->set, len, &s->sink);
    if (s->sink.failed) return SM_ERR_NOMEM;
    if (sm_engine_set_hits(&s->set, db, &s->sink, 0, data, len, 0, 1, len, NULL) != SM_OK) return SM_ERR_NOMEM;
    return deliver(s->sink.hits, s->sink.n, data, 0, 0, on_hit, ctx);
}

static int count_hit(const sm_hit *hit, void *ctx) {
    ((uint64_t *)ctx)[hit->pattern]++;
    return 0;
}

int sm_count(const sm_db *db, sm_scratch *s, const void *data, size_t len, uint64_t *counts) {
    if (!db || !s || (!data && len) || !counts) return SM_ERR_INVALID;
    /* Runs of edit ends must be resolved to be counted as they are reported,
       and hits filtered for a PAM; every edit end (--report ends) is one
       hit, whose start is not needed. */
    const sm_db_header *h = sm_db_head(db);
    if ((h->match == SM_MATCH_EDITS && h->report == SM_REPORT_BEST) || sm_db_filters_pam(h))
        return sm_scan(db, s, data, len, count_hit, counts);
    if (sm_engine_set_bind(&s->set, db) != SM_OK || sm_engine_set_counting(&s->set) != SM_OK) return SM_ERR_NOMEM;
    sm_sink sink = {0};
    sink.counts = counts;
    sink.own_hi = UINT64_MAX;
    /* Pieces of at most 1 GiB keep the 32-bit visit counters from overflowing. */
    const uint8_t *text = data;
    size_t done = 0;
    do {
        size_t piece = len - done > ((size_t)1 << 30) ? (size_t)1 << 30 : len - done;
        sm_engine_set_scan(&s->set, text + done, piece, done, &sink);
        sm_engine_set_fold(&s->set, counts);
        done += piece;
    } while (done < len);
    sm_engine_set_finish(&s->set, len, &sink);
    return SM_OK;
}
