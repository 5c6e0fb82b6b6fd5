/* The merge (dist.h): the shares' result streams, read in share order, give
 * exactly the single process's output.
 *
 * - Records: a record split between shares continues in the next share's
 *   first part; coordinates of later parts are shifted by the lengths of
 *   the parts before (each part says its length), names of lines records
 *   by the lines before.
 * - Order: exact and k-mismatch hits of one part all start before the next
 *   part's (a part owns the starts before its end), so they go out as they
 *   come. k-edit hits are owned by their end, and a part's last hits may
 *   start after the next part's first: hits are held until no later part
 *   or run can precede them, in the runner's held list (runner/ordered.h).
 * - Runs of edit ends cut by a split (--report best) arrive from both sides
 *   and are joined as the runner joins them: one run, one hit, the earlier
 *   part winning ties.
 * - Counts are added per file; --max-hits counts what goes out; a share
 *   that stopped at its own --max-hits bounds what may go out after it.
 * - Neighbouring ranges of one file must agree on what lies between them
 *   (the reader's guesses at a range start): otherwise the merge fails
 *   rather than print records put together wrong.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/wire.h"
#include "io/seqio.h"
#include "runner/ordered.h"

/* A run of ends at a border of a part, with its best hit's text. */
typedef struct {
    sm_open_run run;
    char *text;
    size_t text_len;
    int settled; /* joined into a later part's run, or made a hit */
} mrun;

typedef struct {
    mrun *v;
    size_t n, cap;
} run_list;

struct sm_dist_merge {
    const sm_dist_settings *set;
    sm_dist_sink sink;
    /* framing: the bytes of a message not complete yet */
    uint8_t *pend;
    size_t pend_len, pend_cap;
    int share_ended;
    /* targets: begin_file called for cur when cur_started */
    size_t cur;
    int cur_started;
    uint64_t *counts;      /* the current target's */
    uint64_t total;
    uint64_t *all_counts;  /* the whole job's */
    uint64_t all_total;
    /* the unit being read, and the one before it in the same target */
    int in_unit;
    size_t unit_target;
    int unit_whole;
    uint64_t unit_begin, unit_end;
    int have_prev;
    uint64_t prev_end_kind, prev_next_record;
    uint64_t lines_before;
    /* the record being read */
    int rec_open, rec_may_continue, part_active, part_continued;
    uint64_t rec_id, next_rec_id;
    uint64_t base;         /* record coordinate of the current part's first byte */
    uint64_t part_max_end; /* k edits: the largest end seen in the part */
    uint64_t last_start;   /* k edits: the last hit's start (later hits of the part are not before it) */
    int part_has_items;
    /* k edits: held hits, their texts the merge's own copies */
    sm_held held;
    run_list open, next_open;
    /* --max-hits, -q */
    uint64_t emitted;
    int found, done;
    int truncated;
    sm_rawhit cutoff;      /* a share stopped after this hit: nothing after it may go out */
    sm_rawhit last_hit;
    int have_last_hit;
    /* dfa */
    int dfa_have;
    uint32_t dfa_state;
    char *dfa_label;
    uint32_t *dfa_map;
    sm_error err;
    int failed;
};

static int merge_fail(sm_dist_merge *m, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int merge_fail(sm_dist_merge *m, const char *fmt, ...) {
    if (!m->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->err.message, sizeof m->err.message, fmt, ap);
        va_end(ap);
        m->err.code = SM_ERR_FORMAT;
        m->failed = 1;
    }
    return -1;
}

static const char *target_name(const sm_dist_merge *m, size_t t) {
    return t < m->set->target_count ? m->set->target_names[t] : "?";
}

/* ------------------------------------------------------------- output */

/* A hit goes out (or is counted): the sink, the counts, --max-hits. */
static void put_hit(sm_dist_merge *m, const sm_rawhit *x, const uint8_t *text) {
    if (m->done) return;
    if (m->truncated && sm_rawhit_cmp(&m->cutoff, x) < 0) {
        /* a share stopped before it: the hits before it must have been enough */
        m->done = 1;
        if (m->emitted < m->set->max_hits) merge_fail(m, "a share stopped at --max-hits too early");
        return;
    }
    m->found = 1;
    if (m->set->quiet) {
        m->done = 1;
        return;
    }
    m->counts[x->pattern]++;
    m->total++;
    m->all_counts[x->pattern]++;
    m->all_total++;
    if (!m->set->count_only) {
        sm_hit h = {m->rec_id, x->start, x->end, x->pattern, x->reverse ? '-' : '+', x->errors, (const char *)text};
        if (m->sink.hit && m->sink.hit(m->sink.ctx, &h) != 0) m->done = 1;
        m->emitted++;
        if (m->emitted >= m->set->max_hits) m->done = 1;
    }
}

/* ------------------------------------------------------ held hits (edits) */

static int hold(sm_dist_merge *m, const sm_rawhit *x, const uint8_t *text, size_t text_len) {
    uint8_t *copy = NULL;
    if (text && text_len) {
        copy = malloc(text_len);
        if (!copy) return merge_fail(m, "out of memory");
        memcpy(copy, text, text_len);
    }
    if (sm_held_add(&m->held, x, copy) != SM_OK) {
        free(copy);
        return merge_fail(m, "out of memory");
    }
    return 0;
}

static int put_held(void *ctx, const sm_rawhit *x, const uint8_t *text) {
    put_hit(ctx, x, text);
    free((void *)text);
    return 0;
}

/* Sends the held hits that start before bound, in order. */
static void release(sm_dist_merge *m, uint64_t bound) { sm_held_release(&m->held, bound, put_held, m); }

static uint64_t runs_bound(const sm_dist_merge *m) {
    uint64_t b = UINT64_MAX;
    for (size_t i = 0; i < m->open.n; i++)
        if (!m->open.v[i].settled && m->open.v[i].run.best_start < b) b = m->open.v[i].run.best_start;
    for (size_t i = 0; i < m->next_open.n; i++)
        if (m->next_open.v[i].run.best_start < b) b = m->next_open.v[i].run.best_start;
    return b;
}

/* What no later item of the record can precede, while a part is read. */
static uint64_t part_bound(const sm_dist_merge *m) {
    uint64_t b = m->last_start;
    uint64_t later = m->part_max_end > m->set->reach ? m->part_max_end - m->set->reach : 0;
    if (later < b) b = later;
    uint64_t r = runs_bound(m);
    return r < b ? r : b;
}

static int run_push(run_list *l, const mrun *r) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        mrun *p = realloc(l->v, cap * sizeof *p);
        if (!p) return -1;
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = *r;
    return 0;
}

static void runs_clear(run_list *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i].text);
    l->n = 0;
}

/* A run whose best is final becomes a hit. */
static int settle(sm_dist_merge *m, mrun *r) {
    r->settled = 1;
    const sm_open_run *run = &r->run;
    sm_rawhit x = {run->best_start, run->best_end, run->pattern, (uint16_t)run->best_distance, run->reverse, 0};
    return hold(m, &x, (const uint8_t *)r->text, r->text_len);
}

static int settle_open(sm_dist_merge *m) {
    for (size_t i = 0; i < m->open.n; i++)
        if (!m->open.v[i].settled && settle(m, &m->open.v[i]) != 0) return -1;
    runs_clear(&m->open);
    return 0;
}

/* The record is over: every run left is a hit, every held hit goes out. */
static void finish_record(sm_dist_merge *m) {
    if (!m->rec_open) return;
    settle_open(m);
    for (size_t i = 0; i < m->next_open.n; i++) settle(m, &m->next_open.v[i]);
    runs_clear(&m->next_open);
    release(m, UINT64_MAX);
    if (m->sink.record_done && !m->set->count_only && !m->set->quiet) m->sink.record_done(m->sink.ctx, m->rec_id);
    m->rec_open = 0;
    m->rec_may_continue = 0;
}

/* ------------------------------------------------------------------ dfa */

static int dfa_accepting(const sm_dist_merge *m, uint32_t state) {
    return state < m->set->dfa_states && m->set->dfa_accept && (m->set->dfa_accept[state / 64] >> (state % 64)) & 1;
}

static void dfa_result(sm_dist_merge *m, const char *label) {
    int accepted = dfa_accepting(m, m->dfa_state);
    if (accepted) m->found = 1;
    if (m->sink.dfa_result && m->sink.dfa_result(m->sink.ctx, label, accepted, m->dfa_state) != 0) m->done = 1;
}

/* --------------------------------------------------------------- targets */

/* The current target is over: its last record, its counts, its dfa line. */
static void finish_target(sm_dist_merge *m) {
    if (m->set->command == SM_DIST_DFA) {
        if (m->set->per_record) {
            if (m->dfa_have && m->dfa_label) dfa_result(m, m->dfa_label); /* its last part was cut at the end */
        } else if (m->dfa_have) {
            dfa_result(m, m->set->label_with_path ? target_name(m, m->cur) : NULL);
        }
        m->dfa_have = 0;
        free(m->dfa_label);
        m->dfa_label = NULL;
        return;
    }
    finish_record(m);
    if (m->set->show_file && m->set->count_format && !m->set->quiet && m->sink.counts)
        m->sink.counts(m->sink.ctx, m->counts, m->total);
    memset(m->counts, 0, (m->set->pattern_count ? m->set->pattern_count : 1) * sizeof *m->counts);
    m->total = 0;
}

/* Moves the output on to target t: every target before it begun and
   finished in order (those without units too). */
static void enter_target(sm_dist_merge *m, size_t t) {
    while (m->cur < t || !m->cur_started) {
        if (m->cur_started) {
            finish_target(m);
            m->cur++;
            m->cur_started = 0;
            m->have_prev = 0;
            m->lines_before = 0;
            continue;
        }
        if (m->cur >= m->set->target_count) break;
        if (m->sink.begin_file && !m->set->quiet) m->sink.begin_file(m->sink.ctx, m->cur);
        m->cur_started = 1;
        if (m->set->command == SM_DIST_DFA && !m->set->per_record) {
            m->dfa_have = 1;
            m->dfa_state = m->set->dfa_start;
        }
    }
}

/* ------------------------------------------------------------- messages */

static int on_unit(sm_dist_merge *m, wire_in *in) {
    uint64_t target = wire_get_num(in), whole = wire_get_num(in);
    uint64_t begin = wire_get_num(in), end = wire_get_num(in);
    if (in->bad || whole > 1 || begin > end) return merge_fail(m, "a damaged result stream (a unit)");
    if (target >= m->set->target_count || target < m->cur) return merge_fail(m, "a share's units are out of order");
    if (target != m->cur || !m->cur_started) enter_target(m, (size_t)target);
    m->in_unit = 1;
    m->unit_target = (size_t)target;
    m->unit_whole = (int)whole;
    m->unit_begin = begin;
    m->unit_end = end;
    return 0;
}

static int on_unit_end(sm_dist_merge *m, wire_in *in) {
    uint64_t empty = wire_get_num(in), start_kind = wire_get_num(in), end_kind = wire_get_num(in);
    uint64_t first_record = wire_get_num(in), next_record = wire_get_num(in), lines = wire_get_num(in);
    uint64_t found = wire_get_num(in);
    if (in->bad || empty > 1 || found > 1 || next_record > UINT64_MAX - 1 || !m->in_unit)
        return merge_fail(m, "a damaged result stream (a unit's end)");
    if (found && m->set->quiet) {
        m->found = 1;
        m->done = 1;
    }
    m->in_unit = 0;
    if (m->unit_whole || empty) return 0;
    if (m->have_prev) {
        /* the range before said what lies at this one's start */
        int agree = 1;
        if (start_kind != SM_RANGE_LINE_START && start_kind != m->prev_end_kind) agree = 0;
        /* FASTQ and lines: where the record after the range before starts (0: no claim) */
        if (m->prev_next_record != 0 && m->prev_next_record - 1 != first_record) agree = 0;
        if (!agree)
            return merge_fail(m,
                              "%s: the shares disagree on where the record at byte %llu starts (a header line over "
                              "1 MiB long, or FASTQ with wrapped lines?); search this file without splitting it",
                              target_name(m, m->unit_target), (unsigned long long)m->unit_begin);
    }
    m->have_prev = 1;
    m->prev_end_kind = end_kind;
    m->prev_next_record = next_record;
    m->lines_before += lines;
    return 0;
}

static int on_record(sm_dist_merge *m, wire_in *in) {
    uint64_t flags = wire_get_num(in);
    if (in->bad || flags > (RECORD_CONTINUED | RECORD_LINE) || flags == (RECORD_CONTINUED | RECORD_LINE))
        return merge_fail(m, "a damaged result stream (a record)");
    int continued = (flags & RECORD_CONTINUED) != 0;
    char *name = NULL;
    if (flags & RECORD_LINE) {
        uint64_t line = wire_get_num(in);
        const char *t = target_name(m, m->cur);
        size_t n = strlen(t) + 24;
        name = malloc(n);
        if (name) snprintf(name, n, "%s:%llu", t, (unsigned long long)(line + m->lines_before));
    } else if (!continued) {
        size_t n;
        const uint8_t *p = wire_get_bytes(in, &n);
        name = malloc(n + 1);
        if (name) {
            if (n) memcpy(name, p, n);
            name[n] = 0;
        }
    }
    if (in->bad) {
        free(name);
        return merge_fail(m, "a damaged result stream");
    }
    if (!continued && !name) return merge_fail(m, "out of memory");
    m->part_active = 1;
    m->part_continued = continued;
    m->part_has_items = 0;
    m->part_max_end = 0;
    if (m->set->command == SM_DIST_DFA) {
        if (continued) {
            free(name);
        } else {
            if (m->dfa_have && m->dfa_label) dfa_result(m, m->dfa_label);
            free(m->dfa_label);
            m->dfa_label = name;
            m->dfa_have = 0;
        }
        return 0;
    }
    if (continued) {
        /* the rest of the record the part before cut; a continuation
           without one holds nothing (blank bytes before a file's first
           record), which the part's end checks */
        m->last_start = m->rec_open && m->rec_may_continue ? m->base : 0;
        free(name);
        return 0;
    }
    finish_record(m);
    m->rec_open = 1;
    m->rec_may_continue = 0;
    m->rec_id = m->next_rec_id++;
    m->base = 0;
    m->last_start = 0;
    if (m->sink.record && !m->set->count_only && !m->set->quiet && m->sink.record(m->sink.ctx, m->rec_id, name) != 0) {
        free(name);
        return merge_fail(m, "out of memory");
    }
    free(name);
    return 0;
}

/* A continued part needs the record it continues. */
static int check_orphan(sm_dist_merge *m) {
    if (m->part_continued && !(m->rec_open && m->rec_may_continue))
        return merge_fail(m, "%s: a part of a record without its start (the shares disagree on the record "
                             "boundaries); search this file without splitting it",
                          target_name(m, m->cur));
    return 0;
}

static int on_hit(sm_dist_merge *m, wire_in *in) {
    sm_rawhit x;
    uint64_t start = wire_get_num(in), len = wire_get_num(in);
    uint64_t pattern = wire_get_num(in), errors = wire_get_num(in), reverse = wire_get_num(in);
    size_t tl = 0;
    const uint8_t *text = m->set->texts ? wire_get_bytes(in, &tl) : NULL;
    /* every field in range: a hit's text is exactly its bytes, its end past its start */
    if (in->bad || pattern >= m->set->pattern_count || errors > UINT16_MAX || reverse > 1 || !m->part_active ||
        in->p != in->end || start > UINT64_MAX - m->base || len > UINT64_MAX - (m->base + start) ||
        (m->set->texts && tl != len) || (len == 0 && !m->set->edits))
        return merge_fail(m, "a damaged result stream (a hit)");
    x.pattern = (uint32_t)pattern;
    x.errors = (uint16_t)errors;
    x.reverse = (uint8_t)reverse;
    x.pad = 0;
    if (check_orphan(m) != 0) return -1;
    m->part_has_items = 1;
    x.start = m->base + start;
    x.end = x.start + len;
    m->last_hit = x;
    m->have_last_hit = 1;
    if (m->done) return 0;
    if (!m->set->edits) {
        put_hit(m, &x, text);
        return 0;
    }
    if (x.end > m->part_max_end) m->part_max_end = x.end;
    m->last_start = x.start;
    if (hold(m, &x, text, tl) != 0) return -1;
    release(m, part_bound(m));
    return 0;
}

static int on_run(sm_dist_merge *m, wire_in *in) {
    mrun r;
    memset(&r, 0, sizeof r);
    uint64_t side = wire_get_num(in), first_end = wire_get_num(in), last_end = wire_get_num(in);
    uint64_t best_end = wire_get_num(in), best_start = wire_get_num(in), pattern = wire_get_num(in);
    uint64_t distance = wire_get_num(in), reverse = wire_get_num(in);
    size_t tl = 0;
    const uint8_t *text = m->set->texts ? wire_get_bytes(in, &tl) : NULL;
    /* every field in range: ends in order, the best hit inside the run, its text exactly its bytes */
    if (in->bad || side > 3 || pattern >= m->set->pattern_count || distance > UINT16_MAX || reverse > 1 ||
        !m->part_active || !m->set->edits || in->p != in->end || last_end > UINT64_MAX - m->base ||
        first_end > best_end || best_end > last_end || best_start > best_end ||
        (m->set->texts && tl != best_end - best_start))
        return merge_fail(m, "a damaged result stream (a run of ends)");
    r.run.touches_left = (side & 1) != 0;
    r.run.touches_right = (side & 2) != 0;
    r.run.first_end = m->base + first_end;
    r.run.last_end = m->base + last_end;
    r.run.best_end = m->base + best_end;
    r.run.best_start = m->base + best_start;
    r.run.pattern = (uint32_t)pattern;
    r.run.best_distance = (uint32_t)distance;
    r.run.reverse = (uint8_t)reverse;
    if (check_orphan(m) != 0) return -1;
    m->part_has_items = 1;
    m->found = 1;
    if (r.run.best_end > m->part_max_end) m->part_max_end = r.run.best_end;
    if (tl) {
        r.text = malloc(tl);
        if (!r.text) return merge_fail(m, "out of memory");
        memcpy(r.text, text, tl);
        r.text_len = tl;
    }
    /* joins the part before's run of the same pattern and strand */
    for (size_t i = 0; i < m->open.n; i++) {
        mrun *p = &m->open.v[i];
        int joined = p->settled ? 0 : sm_open_run_join(&r.run, &p->run);
        if (!joined) continue;
        if (joined == 2) {
            free(r.text);
            r.text = p->text;
            r.text_len = p->text_len;
            p->text = NULL;
        }
        p->settled = 1;
        break;
    }
    if (r.run.touches_right) {
        if (run_push(&m->next_open, &r) != 0) {
            free(r.text);
            return merge_fail(m, "out of memory");
        }
    } else {
        int rc = settle(m, &r);
        free(r.text);
        if (rc != 0) return -1;
    }
    release(m, part_bound(m));
    return 0;
}

static int on_left_keys(sm_dist_merge *m, wire_in *in) {
    uint64_t n = wire_get_num(in);
    if (in->bad || n > (uint64_t)(in->end - in->p)) return merge_fail(m, "a damaged result stream");
    uint32_t few[64], *keys = n <= 64 ? few : malloc(n * sizeof *keys);
    if (!keys) return merge_fail(m, "out of memory");
    for (uint64_t i = 0; i < n; i++) keys[i] = (uint32_t)wire_get_num(in);
    /* the part before's runs that no run of this part goes on with are final */
    for (size_t i = 0; i < m->open.n; i++) {
        mrun *p = &m->open.v[i];
        if (p->settled) continue;
        uint32_t key = sm_output_id(p->run.pattern, p->run.reverse);
        int goes_on = 0;
        for (uint64_t j = 0; j < n && !goes_on; j++) goes_on = keys[j] == key;
        if (!goes_on && settle(m, p) != 0) break;
    }
    if (keys != few) free(keys);
    if (!m->failed) release(m, part_bound(m));
    return m->failed ? -1 : 0;
}

/* The end of a part: its length and whether the record goes on. */
static int part_end(sm_dist_merge *m, uint64_t nominal, int cut) {
    m->part_active = 0;
    if (m->part_continued && !(m->rec_open && m->rec_may_continue)) {
        if (nominal > 0 || m->part_has_items) return check_orphan(m);
        return 0; /* blank bytes before the first record */
    }
    if (m->set->edits) {
        settle_open(m);
        run_list t = m->open;
        m->open = m->next_open;
        m->next_open = t;
        m->next_open.n = 0;
    }
    if (cut) {
        m->rec_may_continue = 1;
        m->base += nominal;
        m->last_start = m->base;
        if (m->set->edits) {
            uint64_t b = runs_bound(m);
            release(m, b < m->base ? b : m->base);
        }
    } else {
        finish_record(m);
    }
    return 0;
}

static int on_part_end(sm_dist_merge *m, wire_in *in) {
    uint64_t nominal = wire_get_num(in), cut = wire_get_num(in);
    if (in->bad || cut > 1 || !m->part_active || nominal > UINT64_MAX / 2 - m->base)
        return merge_fail(m, "a damaged result stream (a part's end)");
    if (m->set->command == SM_DIST_DFA) {
        m->part_active = 0;
        if (!cut && m->dfa_have && m->dfa_label) {
            dfa_result(m, m->dfa_label);
            free(m->dfa_label);
            m->dfa_label = NULL;
            m->dfa_have = 0;
        }
        return 0;
    }
    return part_end(m, nominal, (int)cut);
}

static int on_counts(sm_dist_merge *m, wire_in *in) {
    uint64_t n = wire_get_num(in);
    uint64_t p = 0;
    if (n > (uint64_t)(in->end - in->p)) in->bad = 1;
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        uint64_t step = wire_get_num(in);
        uint64_t c = wire_get_num(in);
        /* pattern steps: the first from 0, then at least 1 */
        if ((i > 0 && step == 0) || step >= m->set->pattern_count || p + step >= m->set->pattern_count) in->bad = 1;
        p += step;
        if (in->bad) break;
        else if (!m->done) {
            m->counts[p] += c;
            m->total += c;
            m->all_counts[p] += c;
            m->all_total += c;
            if (c) m->found = 1;
        }
    }
    if (in->bad || in->p != in->end) return merge_fail(m, "a damaged result stream (counts)");
    if (m->found && m->set->quiet) m->done = 1;
    return 0;
}

static int on_truncated(sm_dist_merge *m, wire_in *in) {
    uint64_t known = wire_get_num(in), nominal = wire_get_num(in), cut = wire_get_num(in);
    if (in->bad || known > 1 || cut > 1 || !m->have_last_hit || nominal > UINT64_MAX / 2 - m->base)
        return merge_fail(m, "a damaged result stream (a stop at --max-hits)");
    /* nothing after the share's last hit may go out: the hits up to it are enough */
    if (!m->truncated || sm_rawhit_cmp(&m->last_hit, &m->cutoff) < 0) m->cutoff = m->last_hit;
    m->truncated = 1;
    if (known && m->part_active) return part_end(m, nominal, (int)cut);
    /* where the record goes on is not known: it ends here for the merge */
    m->part_active = 0;
    if (m->set->edits) release(m, m->cutoff.start + 1);
    if (!m->done) {
        m->done = 1;
        if (m->emitted < m->set->max_hits) return merge_fail(m, "a share stopped at --max-hits too early");
    }
    return 0;
}

static int on_state(sm_dist_merge *m, wire_in *in, int map) {
    if (m->set->command != SM_DIST_DFA) return merge_fail(m, "a damaged result stream");
    if (!map) {
        uint64_t v = wire_get_num(in);
        if (in->bad || v > m->set->dfa_states) return merge_fail(m, "a damaged result stream");
        m->dfa_state = v ? (uint32_t)(v - 1) : UINT32_MAX;
        m->dfa_have = 1;
        return 0;
    }
    uint32_t states = m->set->dfa_states;
    if (!m->dfa_map && !(m->dfa_map = malloc((size_t)(states ? states : 1) * sizeof *m->dfa_map)))
        return merge_fail(m, "out of memory");
    for (uint32_t i = 0; i < states; i++) {
        uint64_t v = wire_get_num(in);
        if (v > states) in->bad = 1;
        m->dfa_map[i] = v ? (uint32_t)(v - 1) : UINT32_MAX;
    }
    if (in->bad) return merge_fail(m, "a damaged result stream");
    /* the part continues the input whose state so far is known */
    if (m->dfa_have && m->dfa_state < states) m->dfa_state = m->dfa_map[m->dfa_state];
    else if (m->dfa_have) m->dfa_state = UINT32_MAX;
    return 0;
}

static int dispatch(sm_dist_merge *m, uint8_t tag, const uint8_t *p, size_t n) {
    wire_in in = {p, p + n, 0};
    if (m->share_ended && tag == MSG_NEXT && n == 0) {
        /* a share read by several readers: their streams one after another */
        m->share_ended = 0;
        m->in_unit = 0;
        return 0;
    }
    if (m->share_ended) return merge_fail(m, "bytes after the end of a share's results");
    switch (tag) {
    case MSG_UNIT: return on_unit(m, &in);
    case MSG_UNIT_END: return on_unit_end(m, &in);
    case MSG_RECORD: return on_record(m, &in);
    case MSG_HIT: return on_hit(m, &in);
    case MSG_RUN: return on_run(m, &in);
    case MSG_LEFT_KEYS: return on_left_keys(m, &in);
    case MSG_PART_END: return on_part_end(m, &in);
    case MSG_COUNTS: return on_counts(m, &in);
    case MSG_TRUNCATED: return on_truncated(m, &in);
    case MSG_STATE: return on_state(m, &in, 0);
    case MSG_MAP: return on_state(m, &in, 1);
    case MSG_END: m->share_ended = 1; return 0;
    default: return merge_fail(m, "a damaged result stream (message 0x%02X)", tag);
    }
}

/* ------------------------------------------------------------------ api */

int sm_dist_merge_new(const sm_dist_settings *settings, const sm_dist_sink *sink, sm_dist_merge **out) {
    *out = NULL;
    sm_dist_merge *m = calloc(1, sizeof *m);
    if (!m) return SM_ERR_NOMEM;
    m->set = settings;
    m->sink = *sink;
    size_t np = settings->pattern_count ? settings->pattern_count : 1;
    m->counts = calloc(np, sizeof *m->counts);
    m->all_counts = calloc(np, sizeof *m->all_counts);
    if (!m->counts || !m->all_counts) {
        sm_dist_merge_free(m);
        return SM_ERR_NOMEM;
    }
    *out = m;
    return SM_OK;
}

int sm_dist_merge_feed(sm_dist_merge *m, const uint8_t *data, size_t len, sm_error *err) {
    if (m->failed) goto failed;
    /* whole messages straight from data; a cut one waits in pend */
    while (len > 0 && !m->failed) {
        const uint8_t *p;
        size_t avail;
        if (m->pend_len) {
            if (m->pend_cap - m->pend_len < len) {
                size_t cap = (m->pend_len + len) * 2;
                uint8_t *q = realloc(m->pend, cap);
                if (!q) return merge_fail(m, "out of memory"), *err = m->err, -1;
                m->pend = q;
                m->pend_cap = cap;
            }
            memcpy(m->pend + m->pend_len, data, len);
            m->pend_len += len;
            data += len;
            len = 0;
            p = m->pend;
            avail = m->pend_len;
        } else {
            p = data;
            avail = len;
        }
        size_t used = 0;
        for (;;) {
            if (avail - used < 2) break;
            wire_in in = {p + used + 1, p + avail, 0};
            size_t n;
            const uint8_t *body = wire_get_bytes(&in, &n);
            if (in.bad) break; /* not all there */
            if (dispatch(m, p[used], body, n) != 0) break;
            used = (size_t)(in.p - p);
        }
        if (m->failed) break;
        if (p == m->pend) {
            if (used) memmove(m->pend, m->pend + used, m->pend_len - used);
            m->pend_len -= used;
        } else {
            size_t rest = avail - used;
            if (rest > m->pend_cap) {
                uint8_t *q = realloc(m->pend, rest * 2);
                if (!q) return merge_fail(m, "out of memory"), *err = m->err, -1;
                m->pend = q;
                m->pend_cap = rest * 2;
            }
            if (rest) memcpy(m->pend, p + used, rest);
            m->pend_len = rest;
            len = 0;
        }
    }
    if (!m->failed) return 0;
failed:
    if (err) *err = m->err;
    return -1;
}

int sm_dist_merge_share_end(sm_dist_merge *m, sm_error *err) {
    if (!m->failed && (!m->share_ended || m->pend_len))
        merge_fail(m, "a share's results end too early (an unfinished shard file?)");
    if (m->failed) {
        if (err) *err = m->err;
        return -1;
    }
    m->share_ended = 0;
    m->in_unit = 0;
    return 0;
}

int sm_dist_merge_finish(sm_dist_merge *m, sm_error *err) {
    if (!m->failed) {
        enter_target(m, m->set->target_count);
        if (m->cur_started) {
            finish_target(m);
            m->cur_started = 0;
        }
        if (m->set->command == SM_DIST_SEARCH && m->set->count_format && !m->set->show_file && !m->set->quiet &&
            m->sink.counts)
            m->sink.counts(m->sink.ctx, m->all_counts, m->all_total);
    }
    if (m->failed) {
        if (err) *err = m->err;
        return -1;
    }
    if (m->set->command == SM_DIST_SEARCH && !m->set->quiet) return m->all_total > 0 || m->emitted > 0;
    return m->found;
}

int sm_dist_merge_done(const sm_dist_merge *m) { return m->done; }

void sm_dist_merge_free(sm_dist_merge *m) {
    if (!m) return;
    for (size_t i = 0; i < m->held.n; i++) free((void *)m->held.v[i].text);
    sm_held_free(&m->held);
    runs_clear(&m->open);
    runs_clear(&m->next_open);
    free(m->open.v);
    free(m->next_open.v);
    free(m->pend);
    free(m->counts);
    free(m->all_counts);
    free(m->dfa_label);
    free(m->dfa_map);
    free(m);
}

typedef struct {
    sm_dist_merge *merge;
    sm_mpi *mpi;
    sm_error err;
    int failed;
} rank_stream;

static int take_rank_bytes(void *ctx, const uint8_t *data, size_t len) {
    rank_stream *r = ctx;
    if (r->failed || sm_dist_merge_done(r->merge)) return 0; /* drained: the sender must finish */
    if (sm_dist_merge_feed(r->merge, data, len, &r->err) != 0) r->failed = 1;
    if (sm_dist_merge_done(r->merge)) sm_mpi_stop_others(r->mpi);
    return 0;
}

int sm_mpi_merge_ranks(sm_mpi *mpi, sm_dist_merge *merge, sm_error *err) {
    if (sm_dist_merge_share_end(merge, err) != 0) return -1;
    rank_stream r;
    memset(&r, 0, sizeof r);
    r.merge = merge;
    r.mpi = mpi;
    int rc = 0;
    for (unsigned from = 1; from < sm_mpi_size(mpi); from++) {
        if (sm_mpi_receive(mpi, from, take_rank_bytes, &r) != 0) {
            snprintf(err->message, sizeof err->message, "out of memory receiving rank %u's results", from);
            return -1;
        }
        if (!r.failed && !sm_dist_merge_done(merge) && sm_dist_merge_share_end(merge, &r.err) != 0) r.failed = 1;
        if (r.failed && rc == 0) {
            *err = r.err;
            rc = -1;
        }
    }
    return rc != 0 ? -1 : sm_dist_merge_finish(merge, err);
}
