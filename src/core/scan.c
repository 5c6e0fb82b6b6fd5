/* Scanning one sequence: block scans, counting and streams. Hits are
 * collected from every engine into a sink, sorted into the deterministic
 * order and then handed to the callback. */
#include <stdlib.h>

#include "core/internal.h"
#include "engines/automaton/automaton.h"
#include "engines/bitparallel/shiftand.h"

int sm_engine_state_init(const sm_db *db, sm_engine_state *state) {
    memset(state, 0, sizeof *state);
    const uint8_t *sa = sm_db_shiftand(db);
    if (sa) {
        state->shiftand_words = sm_sa_state_words(sa);
        state->shiftand = calloc(state->shiftand_words ? state->shiftand_words : 1, sizeof(uint64_t));
        if (!state->shiftand) return SM_ERR_NOMEM;
    }
    sm_engine_state_reset(db, state);
    return SM_OK;
}

void sm_engine_state_reset(const sm_db *db, sm_engine_state *state) {
    state->automaton = 0;
    const uint8_t *sa = sm_db_shiftand(db);
    if (sa && state->shiftand) sm_sa_state_reset(sa, state->shiftand);
}

void sm_engine_state_free(sm_engine_state *state) {
    free(state->shiftand);
    memset(state, 0, sizeof *state);
}

void sm_scan_engines(const sm_db *db, sm_engine_state *state, const uint8_t *text, size_t len,
                     uint64_t pos0, sm_sink *sink) {
    const sm_db_pattern *patterns = sm_db_patterns(db);
    const uint8_t *ac = sm_db_automaton(db);
    const uint8_t *sa = sm_db_shiftand(db);
    if (ac) sm_ac_scan(ac, patterns, &state->automaton, text, len, pos0, sink);
    if (sa) sm_sa_scan(sa, patterns, state->shiftand, text, len, pos0, sink);
}

struct sm_scratch {
    sm_engine_state state;
    sm_sink sink;
};

int sm_scratch_alloc(const sm_db *db, sm_scratch **out) {
    *out = NULL;
    sm_scratch *s = calloc(1, sizeof *s);
    if (!s) return SM_ERR_NOMEM;
    if (sm_engine_state_init(db, &s->state) != SM_OK) {
        free(s);
        return SM_ERR_NOMEM;
    }
    *out = s;
    return SM_OK;
}

void sm_scratch_free(sm_scratch *s) {
    if (!s) return;
    sm_engine_state_free(&s->state);
    free(s->sink.hits);
    free(s);
}

/* The scratch may have been allocated for another database with fewer state words. */
static int fit_scratch(const sm_db *db, sm_scratch *s) {
    const uint8_t *sa = sm_db_shiftand(db);
    size_t words = sa ? sm_sa_state_words(sa) : 0;
    if (words > s->state.shiftand_words) {
        sm_engine_state_free(&s->state);
        if (sm_engine_state_init(db, &s->state) != SM_OK) return SM_ERR_NOMEM;
    }
    sm_engine_state_reset(db, &s->state);
    return SM_OK;
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
    if (fit_scratch(db, s) != SM_OK) return SM_ERR_NOMEM;
    s->sink.n = 0;
    s->sink.counts = NULL;
    s->sink.failed = 0;
    s->sink.own_lo = 0;
    s->sink.own_hi = UINT64_MAX;
    sm_scan_engines(db, &s->state, data, len, 0, &s->sink);
    if (s->sink.failed) return SM_ERR_NOMEM;
    sm_sort_hits(s->sink.hits, s->sink.n);
    return deliver(s->sink.hits, s->sink.n, data, 0, 0, on_hit, ctx);
}

int sm_count(const sm_db *db, sm_scratch *s, const void *data, size_t len, uint64_t *counts) {
    if (!db || !s || (!data && len) || !counts) return SM_ERR_INVALID;
    if (fit_scratch(db, s) != SM_OK) return SM_ERR_NOMEM;
    sm_sink sink = {0};
    sink.counts = counts;
    sink.own_hi = UINT64_MAX;
    sm_scan_engines(db, &s->state, data, len, 0, &sink);
    return SM_OK;
}

struct sm_stream {
    const sm_db *db;
    sm_engine_state state;
    sm_sink pending;   /* hits found but not yet final */
    uint64_t position; /* bytes fed so far */
    int stopped;
};

int sm_stream_open(const sm_db *db, sm_stream **out) {
    *out = NULL;
    if (!db) return SM_ERR_INVALID;
    sm_stream *st = calloc(1, sizeof *st);
    if (!st) return SM_ERR_NOMEM;
    st->db = db;
    if (sm_engine_state_init(db, &st->state) != SM_OK) {
        free(st);
        return SM_ERR_NOMEM;
    }
    st->pending.own_hi = UINT64_MAX;
    *out = st;
    return SM_OK;
}

/* Delivers the pending hits that no later byte can precede: a hit found later
   ends after position, so it starts after position - longest pattern. */
static int deliver_final(sm_stream *st, int all, sm_hit_fn on_hit, void *ctx) {
    sm_sink *p = &st->pending;
    sm_sort_hits(p->hits, p->n);
    uint32_t longest = sm_db_head(st->db)->max_length;
    size_t ready = p->n;
    if (!all) {
        ready = 0;
        if (st->position >= longest) {
            uint64_t last_final_start = st->position - longest;
            while (ready < p->n && p->hits[ready].start <= last_final_start) ready++;
        }
    }
    int rc = deliver(p->hits, ready, NULL, 0, 0, on_hit, ctx);
    memmove(p->hits, p->hits + ready, (p->n - ready) * sizeof *p->hits);
    p->n -= ready;
    return rc;
}

int sm_stream_feed(sm_stream *st, const void *data, size_t len, sm_hit_fn on_hit, void *ctx) {
    if (!st || (!data && len) || !on_hit) return SM_ERR_INVALID;
    if (st->stopped) return SM_ERR_TERMINATED;
    sm_scan_engines(st->db, &st->state, data, len, st->position, &st->pending);
    st->position += len;
    if (st->pending.failed) return SM_ERR_NOMEM;
    int rc = deliver_final(st, 0, on_hit, ctx);
    if (rc == SM_ERR_TERMINATED) st->stopped = 1;
    return rc;
}

int sm_stream_end(sm_stream *st, sm_hit_fn on_hit, void *ctx) {
    if (!st || !on_hit) return SM_ERR_INVALID;
    int rc = st->stopped ? SM_ERR_TERMINATED : deliver_final(st, 1, on_hit, ctx);
    st->pending.n = 0;
    st->pending.failed = 0;
    st->position = 0;
    st->stopped = 0;
    sm_engine_state_reset(st->db, &st->state);
    return rc;
}

void sm_stream_free(sm_stream *st) {
    if (!st) return;
    sm_engine_state_free(&st->state);
    free(st->pending.hits);
    free(st);
}
