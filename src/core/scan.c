/* Scanning one sequence: block scans, counting and streams. Hits are
 * collected from every engine into a sink, sorted into the deterministic
 * order and then handed to the callback. */
#include <stdlib.h>

#include "core/internal.h"
#include "engines/approx/approx.h"
#include "engines/approx/pigeonhole.h"
#include "engines/automaton/automaton.h"
#include "engines/bitparallel/shiftand.h"
#include "engines/kmer/kmer.h"
#include "engines/wumanber/wumanber.h"

static size_t approx_state_words(const sm_db *db) {
    const uint8_t *ap = sm_db_approx(db);
    if (!ap) return 0;
    switch (sm_db_head(db)->approx_engine) {
    case SM_PATTERN_MISMATCH: return sm_km_state_words(ap);
    case SM_PATTERN_MYERS: return sm_my_state_words(ap);
    case SM_PATTERN_PIGEONHOLE: return 0;
    default: return sm_wf_state_words(ap);
    }
}

int sm_engine_state_init(const sm_db *db, sm_engine_state *state) {
    memset(state, 0, sizeof *state);
    const uint8_t *sa = sm_db_shiftand(db);
    if (sa) {
        state->shiftand_words = sm_sa_state_words(sa);
        state->shiftand = calloc(state->shiftand_words ? state->shiftand_words : 1, sizeof(uint64_t));
        if (!state->shiftand) return SM_ERR_NOMEM;
    }
    if (sm_db_kmer(db)) {
        state->kmer_words = sm_kt_state_words(sm_db_kmer(db));
        state->kmer = calloc(state->kmer_words ? state->kmer_words : 1, sizeof(uint64_t));
        if (!state->kmer) {
            sm_engine_state_free(state);
            return SM_ERR_NOMEM;
        }
    }
    if (sm_db_wumanber(db)) {
        state->wumanber_words = sm_wm_state_words(sm_db_wumanber(db));
        state->wumanber = calloc(state->wumanber_words, sizeof(uint64_t));
        if (!state->wumanber) {
            sm_engine_state_free(state);
            return SM_ERR_NOMEM;
        }
    }
    if (sm_db_approx(db) && sm_db_head(db)->approx_engine == SM_PATTERN_PIGEONHOLE) {
        state->pigeonhole = sm_ph_state_new(sm_db_approx(db));
        if (!state->pigeonhole) {
            sm_engine_state_free(state);
            return SM_ERR_NOMEM;
        }
    } else if (sm_db_approx(db)) {
        state->approx_words = approx_state_words(db);
        state->approx = calloc(state->approx_words ? state->approx_words : 1, sizeof(uint64_t));
        if (!state->approx) {
            sm_engine_state_free(state);
            return SM_ERR_NOMEM;
        }
    }
    sm_engine_state_reset(db, state);
    return SM_OK;
}

void sm_engine_state_reset(const sm_db *db, sm_engine_state *state) {
    state->automaton = 0;
    const uint8_t *sa = sm_db_shiftand(db);
    if (sa && state->shiftand) sm_sa_state_reset(sa, state->shiftand);
    const uint8_t *kt = sm_db_kmer(db);
    if (kt && state->kmer) sm_kt_state_reset(kt, state->kmer);
    const uint8_t *wm = sm_db_wumanber(db);
    if (wm && state->wumanber) sm_wm_state_reset(wm, state->wumanber);
    const uint8_t *ap = sm_db_approx(db);
    if (ap && state->approx) {
        switch (sm_db_head(db)->approx_engine) {
        case SM_PATTERN_MISMATCH: sm_km_state_reset(ap, state->approx); break;
        case SM_PATTERN_MYERS: sm_my_state_reset(ap, state->approx); break;
        default: sm_wf_state_reset(ap, state->approx); break;
        }
    }
    if (state->pigeonhole) sm_ph_state_reset(state->pigeonhole);
}

void sm_engine_state_free(sm_engine_state *state) {
    free(state->shiftand);
    free(state->approx);
    free(state->ac_visits);
    free(state->kmer);
    free(state->kt_visits);
    free(state->wumanber);
    sm_ph_state_free(state->pigeonhole);
    memset(state, 0, sizeof *state);
}

uint32_t *sm_engine_state_visits(const sm_db *db, sm_engine_state *state) {
    const uint8_t *ac = sm_db_automaton(db);
    if (!ac) return NULL;
    if (!state->ac_visits) state->ac_visits = calloc(((const sm_ac_header *)ac)->states, sizeof(uint32_t));
    return state->ac_visits;
}

uint32_t *sm_engine_state_kmer_visits(const sm_db *db, sm_engine_state *state) {
    const uint8_t *kt = sm_db_kmer(db);
    if (!kt) return NULL;
    if (!state->kt_visits) state->kt_visits = calloc(sm_kt_visit_counters(kt) + 1, sizeof(uint32_t));
    return state->kt_visits;
}

void sm_fold_visits(const sm_db *db, sm_engine_state *state, uint64_t *counts) {
    const uint8_t *ac = sm_db_automaton(db);
    if (ac && state->ac_visits) sm_ac_fold_visits(ac, state->ac_visits, counts);
    const uint8_t *kt = sm_db_kmer(db);
    if (kt && state->kt_visits) sm_kt_fold_visits(kt, state->kt_visits, counts);
}

void sm_scan_engines(const sm_db *db, sm_engine_state *state, const uint8_t *text, size_t len,
                     uint64_t pos0, sm_sink *sink) {
    const sm_db_pattern *patterns = sm_db_patterns(db);
    const uint8_t *ac = sm_db_automaton(db);
    const uint8_t *sa = sm_db_shiftand(db);
    const uint8_t *ap = sm_db_approx(db);
    const uint8_t *kt = sm_db_kmer(db);
    const uint8_t *wm = sm_db_wumanber(db);
    if (ac) sm_ac_scan(ac, patterns, &state->automaton, text, len, pos0, sink);
    if (kt) sm_kt_scan(kt, patterns, state->kmer, text, len, pos0, sink);
    if (wm) sm_wm_scan(wm, state->wumanber, text, len, pos0, sink);
    if (sa) sm_sa_scan(sa, patterns, state->shiftand, text, len, pos0, sink);
    if (ap) {
        switch (sm_db_head(db)->approx_engine) {
        case SM_PATTERN_PIGEONHOLE: sm_ph_scan(ap, state->pigeonhole, text, len, pos0, sink); break;
        case SM_PATTERN_MISMATCH: sm_km_scan(ap, state->approx, text, len, pos0, sink); break;
        case SM_PATTERN_MYERS: sm_my_scan(ap, state->approx, text, len, pos0, sink); break;
        default: sm_wf_scan(ap, state->approx, text, len, pos0, sink); break;
        }
    }
}

void sm_finish_engines(const sm_db *db, sm_engine_state *state, uint64_t end_pos, sm_sink *sink) {
    const uint8_t *ap = sm_db_approx(db);
    if (ap && sm_db_head(db)->approx_engine == SM_PATTERN_WAVEFRONT) sm_wf_finish(ap, state->approx, end_pos, sink);
    if (ap && sm_db_head(db)->approx_engine == SM_PATTERN_PIGEONHOLE)
        sm_ph_finish(ap, state->pigeonhole, end_pos, sink);
}

struct sm_scratch {
    sm_engine_state state;
    sm_sink sink;
};

int sm_scratch_alloc(const sm_db *db, sm_scratch **out) {
    if (!out) return SM_ERR_INVALID;
    *out = NULL;
    if (!db) return SM_ERR_INVALID;
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
    size_t kmer_words = sm_db_kmer(db) ? sm_kt_state_words(sm_db_kmer(db)) : 0;
    size_t wumanber_words = sm_db_wumanber(db) ? sm_wm_state_words(sm_db_wumanber(db)) : 0;
    int pigeonhole = sm_db_approx(db) && sm_db_head(db)->approx_engine == SM_PATTERN_PIGEONHOLE;
    if (words > s->state.shiftand_words || approx_state_words(db) > s->state.approx_words ||
        (sm_db_approx(db) && !pigeonhole && !s->state.approx) ||
        (pigeonhole && !sm_ph_state_fits(sm_db_approx(db), s->state.pigeonhole)) || kmer_words > s->state.kmer_words ||
        (sm_db_kmer(db) && !s->state.kmer) || wumanber_words > s->state.wumanber_words ||
        (sm_db_wumanber(db) && !s->state.wumanber)) {
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
    sm_finish_engines(db, &s->state, len, &s->sink);
    if (s->sink.failed) return SM_ERR_NOMEM;
    if (sm_db_head(db)->match == SM_MATCH_EDITS) {
        if (sm_edits_resolve(db, &s->sink, 0, data, len, 0, 1, len, NULL) != SM_OK) return SM_ERR_NOMEM;
    } else {
        sm_sort_hits(s->sink.hits, s->sink.n);
    }
    return deliver(s->sink.hits, s->sink.n, data, 0, 0, on_hit, ctx);
}

static int count_hit(const sm_hit *hit, void *ctx) {
    ((uint64_t *)ctx)[hit->pattern]++;
    return 0;
}

int sm_count(const sm_db *db, sm_scratch *s, const void *data, size_t len, uint64_t *counts) {
    if (!db || !s || (!data && len) || !counts) return SM_ERR_INVALID;
    /* Runs of edit ends must be resolved to be counted as they are reported. */
    if (sm_db_head(db)->match == SM_MATCH_EDITS && sm_db_head(db)->report == SM_REPORT_BEST)
        return sm_scan(db, s, data, len, count_hit, counts);
    if (fit_scratch(db, s) != SM_OK) return SM_ERR_NOMEM;
    sm_sink sink = {0};
    sink.counts = counts;
    sink.own_hi = UINT64_MAX;
    sink.ac_visits = sm_engine_state_visits(db, &s->state);
    sink.kt_visits = sm_engine_state_kmer_visits(db, &s->state);
    /* Pieces of at most 1 GiB keep the 32-bit visit counters from overflowing. */
    const uint8_t *text = data;
    size_t done = 0;
    do {
        size_t piece = len - done > ((size_t)1 << 30) ? (size_t)1 << 30 : len - done;
        sm_scan_engines(db, &s->state, text + done, piece, done, &sink);
        sm_fold_visits(db, &s->state, counts);
        done += piece;
    } while (done < len);
    sm_finish_engines(db, &s->state, len, &sink);
    return SM_OK;
}

/* A stream is the CPU backend on the calling thread: the runner already
   carries state across pieces, keeps the text a hit needs and resolves runs
   of edit ends across its segments. */
struct sm_stream {
    sm_runner *runner;
    sm_hit_fn on_hit;
    void *ctx;
    int stopped;
};

static int stream_forward(const sm_hit *hit, void *ctx) {
    sm_stream *st = ctx;
    sm_hit h = *hit;
    h.record = 0;
    h.text = NULL; /* documented: streams do not keep the text */
    return st->on_hit(&h, st->ctx);
}

int sm_stream_open(const sm_db *db, sm_stream **out) {
    if (!out) return SM_ERR_INVALID;
    *out = NULL;
    if (!db) return SM_ERR_INVALID;
    sm_stream *st = calloc(1, sizeof *st);
    if (!st) return SM_ERR_NOMEM;
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.threads = 1;
    o.on_hit = stream_forward;
    o.ctx = st;
    if (sm_runner_create(db, &o, &st->runner, NULL) != SM_OK) {
        free(st);
        return SM_ERR_NOMEM;
    }
    *out = st;
    return SM_OK;
}

int sm_stream_feed(sm_stream *st, const void *data, size_t len, sm_hit_fn on_hit, void *ctx) {
    if (!st || (!data && len) || !on_hit) return SM_ERR_INVALID;
    if (st->stopped) return SM_ERR_TERMINATED;
    st->on_hit = on_hit;
    st->ctx = ctx;
    int rc = sm_runner_feed(st->runner, data, len);
    if (rc == SM_ERR_TERMINATED) st->stopped = 1;
    return rc;
}

int sm_stream_end(sm_stream *st, sm_hit_fn on_hit, void *ctx) {
    if (!st || !on_hit) return SM_ERR_INVALID;
    st->on_hit = on_hit;
    st->ctx = ctx;
    int rc = st->stopped ? SM_ERR_TERMINATED : sm_runner_end_record(st->runner);
    if (rc == SM_OK) rc = sm_runner_flush(st->runner);
    if (rc != SM_OK) {
        /* Start the next sequence afresh even after a stop. */
        sm_runner *fresh = NULL;
        const sm_db *db = sm_runner_db(st->runner);
        sm_runner_options o;
        sm_runner_options_init(&o);
        o.threads = 1;
        o.on_hit = stream_forward;
        o.ctx = st;
        if (sm_runner_create(db, &o, &fresh, NULL) == SM_OK) {
            sm_runner_free(st->runner);
            st->runner = fresh;
        }
    }
    st->stopped = 0;
    return rc;
}

void sm_stream_free(sm_stream *st) {
    if (!st) return;
    sm_runner_free(st->runner);
    free(st);
}
