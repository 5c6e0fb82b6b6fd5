/* A share's side of a distributed search (dist.h): each unit read (a byte
 * range with a ranged reader, or a whole file), its records fed to the
 * runner as parts, and what the runner delivers written to the result
 * stream in delivery order.
 *
 * A record cut at the range end is fed on past it for the bytes its last
 * hits need (runner_part.h): exact and k mismatches own the hits that start
 * before the cut; k edits own every end read, and the next share's part
 * starts owning only after the same look-back. Records are announced in the
 * stream lazily, when their first result is delivered (a whole record
 * without any is left out); records split between shares are always
 * announced, with the length of their part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/wire.h"
#include "runner/runner_internal.h"
#include "runner/runner_part.h"
#include "seqmatch_dfa.h"

/* Bytes of a record asked of the reader at a time (as the search command). */
#define FEED_PIECE ((size_t)64 << 20)
/* dfa: input simulated in blocks of this size. */
#define DFA_BLOCK ((size_t)16 << 20)
/* Records between polls (MPI progress and stops) when records are short. */
#define POLL_RECORDS 256

typedef struct {
    char *name;          /* NULL: continued, or a lines record (line) */
    int continued, has_line;
    uint64_t line;
    uint64_t nominal;    /* bytes before the range end (the part's length when not cut) */
    int cut, fed;        /* fed: nominal and cut are known */
    int announced;
} part_info;

struct sm_dist_share {
    const sm_dist_settings *set;
    sm_dist_out *out;
    sm_dist_out msg;
    unsigned threads;
    const sm_io_bgzf_decoder *decoder;
    sm_runner *runner;
    sm_part_callbacks part_cb;
    void (*poll)(void *);
    void *poll_ctx;
    /* parts fed and not yet delivered, a ring by runner record number */
    part_info *parts;
    size_t head, count, cap;
    uint64_t first_id;
    uint64_t hits;       /* hits delivered */
    int stopped;         /* --max-hits reached (or stop asked) */
    int found;           /* -q: something found */
    uint64_t *counts_seen;
    uint64_t total_base; /* the runner's total when it was given (a runner may serve several shares) */
    sm_error err;
    int failed;
};

static part_info *part_of(sm_dist_share *s, uint64_t record) {
    if (record < s->first_id || record - s->first_id >= s->count) return NULL;
    return &s->parts[(s->head + (size_t)(record - s->first_id)) % s->cap];
}

static part_info *push_part(sm_dist_share *s, uint64_t record) {
    if (s->count == 0) {
        s->first_id = record;
        s->head = 0;
    }
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        part_info *p = malloc(cap * sizeof *p);
        if (!p) return NULL;
        for (size_t i = 0; i < s->count; i++) p[i] = s->parts[(s->head + i) % s->cap];
        free(s->parts);
        s->parts = p;
        s->cap = cap;
        s->head = 0;
    }
    part_info *x = &s->parts[(s->head + s->count) % s->cap];
    s->count++;
    memset(x, 0, sizeof *x);
    return x;
}

static void pop_part(sm_dist_share *s) {
    part_info *x = &s->parts[s->head];
    free(x->name);
    s->head = (s->head + 1) % s->cap;
    s->count--;
    s->first_id++;
}

/* Writes the record's R message once, before its first result. */
static void announce(sm_dist_share *s, uint64_t record) {
    part_info *x = part_of(s, record);
    if (!x || x->announced) return;
    x->announced = 1;
    unsigned flags = (x->continued ? RECORD_CONTINUED : 0) | (x->has_line ? RECORD_LINE : 0);
    wire_num(&s->msg, flags);
    if (x->has_line) wire_num(&s->msg, x->line);
    else if (!x->continued) wire_bytes(&s->msg, x->name, strlen(x->name));
    wire_send(s->out, MSG_RECORD, &s->msg);
}

static void write_truncated(sm_dist_share *s, uint64_t record) {
    const part_info *x = part_of(s, record);
    wire_num(&s->msg, x && x->fed);
    wire_num(&s->msg, x && x->fed ? x->nominal : 0);
    wire_num(&s->msg, x && x->fed && x->cut);
    wire_send(s->out, MSG_TRUNCATED, &s->msg);
}

static int on_hit(const sm_hit *hit, void *ctx) {
    sm_dist_share *s = ctx;
    if (s->stopped) return 1;
    announce(s, hit->record);
    wire_num(&s->msg, hit->start);
    wire_num(&s->msg, hit->end - hit->start);
    wire_num(&s->msg, hit->pattern);
    wire_num(&s->msg, hit->errors);
    wire_num(&s->msg, hit->strand == '-');
    if (s->set->texts) wire_bytes(&s->msg, hit->text, hit->text ? (size_t)(hit->end - hit->start) : 0);
    wire_send(s->out, MSG_HIT, &s->msg);
    s->hits++;
    s->found = 1;
    if (s->hits >= s->set->max_hits) {
        /* the merge needs no hit of this share past its first max_hits */
        write_truncated(s, hit->record);
        s->stopped = 1;
        return 1;
    }
    return s->out->failed ? 1 : 0;
}

static void on_record_done(uint64_t record, void *ctx) {
    sm_dist_share *s = ctx;
    part_info *x = part_of(s, record);
    if (!x) return;
    if (!s->stopped && (x->announced || x->continued || x->cut)) {
        announce(s, record);
        wire_num(&s->msg, x->nominal);
        wire_num(&s->msg, x->cut);
        wire_send(s->out, MSG_PART_END, &s->msg);
    }
    /* records are done in order */
    while (s->count && part_of(s, s->first_id) != x) pop_part(s);
    if (s->count) pop_part(s);
}

static void on_border(uint64_t record, const sm_open_run *run, const uint8_t *text, unsigned side, void *ctx) {
    sm_dist_share *s = ctx;
    if (s->stopped) return;
    announce(s, record);
    wire_num(&s->msg, side);
    wire_num(&s->msg, run->first_end);
    wire_num(&s->msg, run->last_end);
    wire_num(&s->msg, run->best_end);
    wire_num(&s->msg, run->best_start);
    wire_num(&s->msg, run->pattern);
    wire_num(&s->msg, run->best_distance);
    wire_num(&s->msg, run->reverse);
    if (s->set->texts) wire_bytes(&s->msg, text, (size_t)(run->best_end - run->best_start));
    wire_send(s->out, MSG_RUN, &s->msg);
    s->found = 1;
}

static void on_left_keys(uint64_t record, const uint32_t *keys, size_t n, void *ctx) {
    sm_dist_share *s = ctx;
    if (s->stopped) return;
    announce(s, record);
    wire_num(&s->msg, n);
    for (size_t i = 0; i < n; i++) wire_num(&s->msg, keys[i]);
    wire_send(s->out, MSG_LEFT_KEYS, &s->msg);
}

int sm_dist_share_new(const sm_dist_settings *settings, sm_dist_out *out, unsigned threads, sm_dist_share **share) {
    *share = NULL;
    sm_dist_share *s = calloc(1, sizeof *s);
    if (!s) return SM_ERR_NOMEM;
    s->set = settings;
    s->out = out;
    s->threads = threads ? threads : 1;
    s->counts_seen = calloc(settings->pattern_count ? settings->pattern_count : 1, sizeof *s->counts_seen);
    if (!s->counts_seen || sm_dist_out_init(&s->msg, 256, NULL, NULL) != SM_OK) {
        sm_dist_share_free(s);
        return SM_ERR_NOMEM;
    }
    s->part_cb.border = on_border;
    s->part_cb.left_keys = on_left_keys;
    s->part_cb.ctx = s;
    *share = s;
    return SM_OK;
}

void sm_dist_share_runner_options(sm_dist_share *s, sm_runner_options *opts) {
    opts->count_only = s->set->count_only;
    opts->on_hit = on_hit;
    opts->on_record_done = on_record_done;
    opts->ctx = s;
    opts->overlap_free = 0; /* parts need owned ranges */
}

void sm_dist_share_set_runner(sm_dist_share *s, sm_runner *runner) {
    s->runner = runner;
    sm_runner_set_part_callbacks(runner, &s->part_cb);
    /* a runner that served other shares before: only what it counts from here on is this share's */
    s->total_base = sm_runner_total(runner);
    const uint64_t *now = sm_runner_counts(runner);
    for (uint32_t p = 0; now && p < s->set->pattern_count; p++) s->counts_seen[p] = now[p];
}

void sm_dist_share_set_decoder(sm_dist_share *s, const sm_io_bgzf_decoder *decoder) { s->decoder = decoder; }

void sm_dist_share_set_poll(sm_dist_share *s, void (*poll)(void *), void *ctx) {
    s->poll = poll;
    s->poll_ctx = ctx;
}

void sm_dist_share_stop(sm_dist_share *s) { s->stopped = 1; }

/* Hits this share's runner counted while it served the share. */
static uint64_t share_total(const sm_dist_share *s) { return s->runner ? sm_runner_total(s->runner) - s->total_base : 0; }

int sm_dist_share_found(const sm_dist_share *s) { return s->found || share_total(s) > 0; }

void sm_dist_settings_fill_db(sm_dist_settings *set, const sm_db *db) {
    set->edits = sm_db_head(db)->match == SM_MATCH_EDITS;
    set->reach = sm_db_reach(sm_db_head(db));
}

void sm_dist_settings_fill(sm_dist_settings *set, const sm_runner *runner) { sm_dist_settings_fill_db(set, runner->db); }

sm_dist_out *sm_dist_share_stream(sm_dist_share *s) { return s->out; }

void sm_dist_share_poll(sm_dist_share *s) {
    if (s->poll) s->poll(s->poll_ctx);
}

int sm_dist_share_stopped(const sm_dist_share *s) { return s->stopped; }

const sm_dist_settings *sm_dist_share_settings(const sm_dist_share *s) { return s->set; }

void sm_dist_share_free(sm_dist_share *s) {
    if (!s) return;
    while (s->count) pop_part(s);
    free(s->parts);
    free(s->counts_seen);
    sm_dist_out_free(&s->msg);
    free(s);
}

static int fail(sm_dist_share *s, const sm_error *e, const char *fallback) {
    if (!s->failed) {
        s->failed = 1;
        if (e && e->message[0]) s->err = *e;
        else snprintf(s->err.message, sizeof s->err.message, "%.400s", fallback);
        if (!s->err.code) s->err.code = SM_ERR_IO;
    }
    return -1;
}

/* Whether the share should stop: --max-hits reached, -q found something. */
static int done(const sm_dist_share *s) {
    return s->stopped || (s->set->quiet && (s->found || share_total(s) > 0));
}

int sm_dist_share_done(const sm_dist_share *s) { return done(s); }

/* A runner status: 0 to go on, 1 stopped on purpose, -1 failed. */
static int runner_status(sm_dist_share *s, int status, const char *path) {
    if (status == SM_OK) return 0;
    if (status == SM_ERR_TERMINATED && s->stopped) return 1;
    if (s->out->failed) return fail(s, NULL, "the result stream could not be written");
    char msg[640], words[320];
    snprintf(msg, sizeof msg, "%s: %s", path, status == SM_ERR_NOMEM ? "out of memory while scanning"
                                              : sm_io_status_words(s->runner, status, words, sizeof words));
    return fail(s, NULL, msg);
}

/* Opens the unit's reader; ranged FASTA/FASTQ need the format the file's
   start says. */
static int open_unit(sm_dist_share *s, const char *path, const sm_dist_unit *u, sm_input_format format,
                     sm_reader **reader) {
    sm_error e;
    memset(&e, 0, sizeof e);
    if (u->whole) {
        if (sm_reader_open_threads(path, format, s->threads, reader, &e) != SM_OK) return fail(s, &e, "cannot open");
        return 0;
    }
    if (format == SM_INPUT_AUTO) {
        sm_reader *probe;
        if (sm_reader_open_threads(path, SM_INPUT_AUTO, 1, &probe, &e) != SM_OK) return fail(s, &e, "cannot open");
        format = sm_reader_format(probe);
        sm_reader_close(probe);
    }
    if (sm_reader_open_range_decoder(path, format, s->threads, u->begin, u->end, s->decoder, reader, &e) != SM_OK)
        return fail(s, &e, "cannot open");
    return 0;
}

static void write_unit_end(sm_dist_share *s, const sm_reader *rd, int ranged) {
    sm_range_info info;
    memset(&info, 0, sizeof info);
    info.next_record = UINT64_MAX;
    if (ranged) sm_reader_range_info(rd, &info);
    wire_num(&s->msg, (uint64_t)info.empty);
    wire_num(&s->msg, (uint64_t)info.start_kind);
    wire_num(&s->msg, (uint64_t)info.end_kind);
    wire_num(&s->msg, info.first_record);
    wire_num(&s->msg, info.next_record + 1); /* UINT64_MAX: 0 */
    wire_num(&s->msg, info.lines);
    wire_num(&s->msg, (uint64_t)(s->found || share_total(s) > 0));
    wire_send(s->out, MSG_UNIT_END, &s->msg);
}

/* One unit's records through sm_runner_scan_reader (src/io/scan_reader.c),
   each begun and ended as a part. */
typedef struct {
    sm_dist_share *s;
    int ranged;
    sm_input_format format;
    unsigned since_poll;
    int stop_asked;  /* on_progress stopped the feed */
    int polled;      /* the record's poll count was taken (its end) */
} unit_scan;

static int part_begin(void *ctx, sm_runner *runner, const sm_scan_record *rec, uint64_t *number) {
    unit_scan *u = ctx;
    sm_dist_share *s = u->s;
    int continued = u->ranged && rec->continued;
    uint64_t own_from = continued && s->set->edits ? sm_runner_reach(runner) : 0;
    uint64_t id = sm_runner_begin_part(runner, own_from, continued);
    *number = id;
    u->polled = 0;
    part_info *x = push_part(s, id);
    if (!x) return fail(s, NULL, "out of memory");
    x->continued = continued;
    if (u->format == SM_INPUT_LINES && u->ranged) {
        /* PATH:N with N counted from the range's first line */
        const char *colon = strrchr(rec->name, ':');
        x->has_line = 1;
        x->line = colon ? strtoull(colon + 1, NULL, 10) : 0;
    } else if (!continued && !(x->name = strdup(rec->name ? rec->name : ""))) {
        return fail(s, NULL, "out of memory");
    }
    return 0;
}

/* The part's end: owned up to its length unless the record goes on. */
static int part_end(void *ctx, sm_runner *runner, const sm_scan_record *rec) {
    unit_scan *u = ctx;
    sm_dist_share *s = u->s;
    int cut = u->ranged && rec->cut;
    part_info *x = part_of(s, rec->number);
    if (x) {
        x->nominal = rec->length;
        x->cut = cut;
        x->fed = 1;
    }
    return sm_runner_end_part(runner, cut && !s->set->edits ? rec->length : UINT64_MAX, cut);
}

/* Records between polls (MPI progress and stops). */
static void count_poll(unit_scan *u) {
    sm_dist_share *s = u->s;
    u->polled = 1;
    if (s->poll && ++u->since_poll >= POLL_RECORDS) {
        u->since_poll = 0;
        s->poll(s->poll_ctx);
    }
}

/* Between pieces of a record: stop when done, else poll (MPI); after a
   record: stop when done, and poll every POLL_RECORDS records. */
static int unit_progress(void *ctx, size_t bytes, int record_ended) {
    (void)bytes;
    unit_scan *u = ctx;
    sm_dist_share *s = u->s;
    int stop;
    if (!record_ended) {
        stop = done(s) || (s->poll && (s->poll(s->poll_ctx), s->stopped));
    } else {
        stop = done(s);
        count_poll(u);
        if (s->stopped) stop = 1;
    }
    if (stop) u->stop_asked = 1;
    return stop;
}

/* Every record of the unit's reader into the runner. Returns 0 at the
   unit's end, 1 when the share stops, -1 when it failed. */
static int scan_unit(sm_dist_share *s, sm_reader *rd, const char *path, int ranged, sm_input_format format) {
    unit_scan u = {.s = s, .ranged = ranged, .format = format};
    sm_scan_reader_options opts;
    sm_scan_reader_options_init(&opts);
    opts.ctx = &u;
    opts.on_progress = unit_progress;
    opts.piece = FEED_PIECE;
    if (ranged) opts.past_cut = sm_runner_part_overlap(s->runner);
    opts.begin_record = part_begin;
    opts.end_record = part_end;
    sm_error e;
    int status = sm_runner_scan_reader(s->runner, rd, &opts, &e);
    if (status == SM_OK) return 0;
    if (s->failed) return -1;
    int st;
    if (status == SM_ERR_TERMINATED && u.stop_asked) st = 1;
    else if (e.message[0]) return fail(s, &e, "read error");
    else if ((st = runner_status(s, status, path)) < 0) return -1;
    /* a record that stopped the share before its end still counts a poll */
    if (!u.polled) {
        count_poll(&u);
        if (s->stopped) st = 1;
    }
    return st;
}

/* A unit of the plan begins: announced in the result stream (the merge
   places what follows by it), then opened. Returns 0, or -1 (s failed). */
static int begin_unit(sm_dist_share *s, const char *path, const sm_dist_unit *u, sm_input_format format,
                      sm_reader **rd) {
    wire_num(&s->msg, u->target);
    wire_num(&s->msg, (uint64_t)u->whole);
    wire_num(&s->msg, u->begin);
    wire_num(&s->msg, u->end);
    wire_send(s->out, MSG_UNIT, &s->msg);
    return open_unit(s, path, u, format, rd);
}

int sm_dist_share_run(sm_dist_share *s, char *const *targets, const sm_dist_plan *plan, sm_input_format format,
                      sm_error *err) {
    int stop = s->set->max_hits == 0; /* --max-hits 0: nothing to look for */
    uint32_t np = s->set->pattern_count;
    for (size_t k = 0; k < plan->count && !stop && !s->failed; k++) {
        const sm_dist_unit *u = &plan->units[k];
        const char *path = targets[u->target];
        sm_reader *rd = NULL;
        if (begin_unit(s, path, u, format, &rd) != 0) break;
        int ranged = !u->whole;
        if (scan_unit(s, rd, path, ranged, format) > 0) stop = 1;
        if (s->failed) {
            sm_reader_close(rd);
            break;
        }
        int status = sm_runner_flush(s->runner);
        if (runner_status(s, status, path) < 0) {
            sm_reader_close(rd);
            break;
        }
        if (s->stopped) {
            sm_reader_close(rd);
            break;
        }
        /* counting: the unit's counts, the runner's since the unit before
           (hits sent are counted by the merge as they go out) */
        const uint64_t *now = sm_runner_counts(s->runner);
        size_t nonzero = 0;
        for (uint32_t p = 0; s->set->count_only && p < np; p++) nonzero += now[p] != s->counts_seen[p];
        if (nonzero) {
            wire_num(&s->msg, nonzero);
            uint32_t last = 0;
            for (uint32_t p = 0; p < np; p++) {
                if (now[p] == s->counts_seen[p]) continue;
                wire_num(&s->msg, p - last);
                wire_num(&s->msg, now[p] - s->counts_seen[p]);
                last = p;
                s->counts_seen[p] = now[p];
            }
            wire_send(s->out, MSG_COUNTS, &s->msg);
        }
        write_unit_end(s, rd, ranged);
        sm_reader_close(rd);
        if (done(s)) stop = 1;
    }
    if (!s->failed) {
        wire_send(s->out, MSG_END, &s->msg);
        if (sm_dist_out_flush(s->out) != 0 || s->out->failed) fail(s, NULL, "the result stream could not be written");
    }
    if (s->failed) {
        if (err) *err = s->err;
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------------- dfa */

typedef struct {
    const sm_dfa *dfa;
    const sm_dfa_matcher *matcher;
    const sm_dfa_parallel_options *popts;
    uint32_t states;
    int known;          /* the state from the input's start is followed */
    uint32_t state;
    uint32_t *map;      /* else: the part's map so far */
    uint32_t *block_map;
    uint8_t *block;
    size_t block_len;
    uint64_t done_bytes; /* bytes of the part simulated */
} dfa_part;

/* Adds the buffered block to the part's state or map. Returns 0, or the
   offset + 1 of a byte outside the DFA's alphabet. */
static uint64_t dfa_flush(sm_dist_share *s, dfa_part *p) {
    if (p->block_len == 0) return 0;
    sm_error e;
    size_t unknown = sm_dfa_find_unknown(p->matcher, p->block, p->block_len);
    /* with --skip-unknown the matcher ignores them: find_unknown says len */
    if (p->known) {
        uint32_t next = p->state;
        if (p->state != SM_DFA_NO_STATE &&
            sm_dfa_run_parallel(p->matcher, p->state, p->block, p->block_len, p->popts, &next, &e) != SM_OK) {
            fail(s, &e, "dfa run failed");
            return 0;
        }
        if (next == SM_DFA_NO_STATE && p->state != SM_DFA_NO_STATE) return p->done_bytes + unknown + 1;
        p->state = next;
    } else {
        /* few distinct images (the usual case once paths converge): run each */
        uint32_t distinct[8];
        size_t nd = 0;
        for (uint32_t i = 0; i < p->states && nd <= 8; i++) {
            uint32_t v = p->map[i];
            size_t j = 0;
            while (j < nd && distinct[j] != v) j++;
            if (j == nd) {
                if (nd < 8) distinct[nd] = v;
                nd++;
            }
        }
        if (nd <= 8) {
            uint32_t image[8];
            for (size_t j = 0; j < nd; j++) {
                image[j] = SM_DFA_NO_STATE;
                if (distinct[j] != SM_DFA_NO_STATE &&
                    sm_dfa_run_parallel(p->matcher, distinct[j], p->block, p->block_len, p->popts, &image[j], &e) !=
                        SM_OK) {
                    fail(s, &e, "dfa run failed");
                    return 0;
                }
                if (distinct[j] != SM_DFA_NO_STATE && image[j] == SM_DFA_NO_STATE) return p->done_bytes + unknown + 1;
            }
            for (uint32_t i = 0; i < p->states; i++) {
                size_t j = 0;
                while (distinct[j] != p->map[i]) j++;
                p->map[i] = image[j];
            }
        } else {
            if (sm_dfa_chunk_map(p->matcher, p->block, p->block_len, p->block_map, &e) != SM_OK) {
                fail(s, &e, "dfa run failed");
                return 0;
            }
            if (unknown < p->block_len) return p->done_bytes + unknown + 1;
            for (uint32_t i = 0; i < p->states; i++)
                p->map[i] = p->map[i] == SM_DFA_NO_STATE ? SM_DFA_NO_STATE : p->block_map[p->map[i]];
        }
    }
    p->done_bytes += p->block_len;
    p->block_len = 0;
    return 0;
}

static void dfa_part_start(dfa_part *p, int known, uint32_t start) {
    p->known = known;
    p->state = start;
    p->block_len = 0;
    p->done_bytes = 0;
    if (!known)
        for (uint32_t i = 0; i < p->states; i++) p->map[i] = i;
}

static void dfa_part_write(sm_dist_share *s, dfa_part *p) {
    if (p->known) {
        wire_num(&s->msg, p->state == SM_DFA_NO_STATE ? 0 : (uint64_t)p->state + 1);
        wire_send(s->out, MSG_STATE, &s->msg);
    } else {
        for (uint32_t i = 0; i < p->states; i++)
            wire_num(&s->msg, p->map[i] == SM_DFA_NO_STATE ? 0 : (uint64_t)p->map[i] + 1);
        wire_send(s->out, MSG_MAP, &s->msg);
    }
}

static void unknown_byte(sm_dist_share *s, const char *path, const char *record, uint64_t at, const uint8_t *bytes,
                         size_t len, uint64_t before) {
    uint8_t c = at - before < len ? bytes[at - before] : 0;
    char msg[600];
    if (record)
        snprintf(msg, sizeof msg,
                 "%s: record '%.200s': byte 0x%02X, %llu sequence bytes into the part of it read here, is not in "
                 "the DFA's alphabet (--skip-unknown ignores such bytes)",
                 path, record, c, (unsigned long long)at);
    else
        snprintf(msg, sizeof msg,
                 "%s: byte 0x%02X, %llu bytes into the part of it read here, is not in the DFA's alphabet "
                 "(--skip-unknown ignores such bytes)",
                 path, c, (unsigned long long)at);
    fail(s, NULL, msg);
}

int sm_dist_share_run_dfa(sm_dist_share *s, char *const *targets, const sm_dist_plan *plan, const sm_dfa *dfa,
                          const sm_dfa_matcher *matcher, int skip_unknown, const void *parallel_options,
                          sm_error *err) {
    (void)skip_unknown;
    dfa_part p;
    memset(&p, 0, sizeof p);
    p.dfa = dfa;
    p.matcher = matcher;
    p.popts = parallel_options;
    p.states = sm_dfa_state_count(dfa);
    p.map = malloc((size_t)p.states * sizeof *p.map);
    p.block_map = malloc((size_t)p.states * sizeof *p.block_map);
    p.block = malloc(DFA_BLOCK);
    if (!p.map || !p.block_map || !p.block) fail(s, NULL, "out of memory");
    int per_record = s->set->per_record;
    sm_input_format format = s->set->dna ? SM_INPUT_AUTO : SM_INPUT_TEXT;
    char *record = NULL;
    for (size_t k = 0; k < plan->count && !s->failed; k++) {
        const sm_dist_unit *u = &plan->units[k];
        const char *path = targets[u->target];
        sm_reader *rd = NULL;
        if (begin_unit(s, path, u, format, &rd) != 0) break;
        int ranged = !u->whole;
        /* the whole input (a file) from its start, or a part continuing it */
        if (!per_record) dfa_part_start(&p, !ranged || u->begin == 0, sm_dfa_start(dfa));
        const char *name;
        int more = 0;
        sm_error e;
        memset(&e, 0, sizeof e);
        while (!s->failed && (more = sm_reader_next_record(rd, &name, &e)) == 1) {
            int continued = ranged && sm_reader_record_continued(rd);
            free(record);
            record = strdup(continued ? "" : name ? name : "");
            if (!record) {
                fail(s, NULL, "out of memory");
                break;
            }
            if (per_record) {
                wire_num(&s->msg, continued ? RECORD_CONTINUED : 0);
                if (!continued) wire_bytes(&s->msg, record, strlen(record));
                wire_send(s->out, MSG_RECORD, &s->msg);
                dfa_part_start(&p, !continued, sm_dfa_start(dfa));
            }
            uint64_t part_start = p.done_bytes + p.block_len;
            size_t len;
            int got;
            uint64_t bad = 0;
            while ((got = sm_reader_read_into(rd, p.block + p.block_len, DFA_BLOCK - p.block_len, &len, &e)) == 1) {
                p.block_len += len;
                if (p.block_len == DFA_BLOCK) {
                    uint64_t before = p.done_bytes;
                    if ((bad = dfa_flush(s, &p)) != 0) {
                        unknown_byte(s, path, s->set->dna && !continued ? record : NULL, bad - 1 - part_start, p.block,
                                     p.block_len, before - part_start);
                        break;
                    }
                    if (s->failed) break;
                }
                if (s->poll) s->poll(s->poll_ctx);
            }
            if (s->failed) break;
            if (got < 0) {
                fail(s, &e, "read error");
                break;
            }
            if (per_record) {
                uint64_t before = p.done_bytes;
                if ((bad = dfa_flush(s, &p)) != 0) {
                    unknown_byte(s, path, !continued ? record : NULL, bad - 1 - part_start, p.block, p.block_len,
                                 before - part_start);
                    break;
                }
                if (s->failed) break;
                dfa_part_write(s, &p);
                wire_num(&s->msg, 0);
                wire_num(&s->msg, (uint64_t)(ranged && sm_reader_record_cut(rd)));
                wire_send(s->out, MSG_PART_END, &s->msg);
            }
        }
        if (!s->failed && more < 0) fail(s, &e, "read error");
        if (!s->failed && !per_record) {
            uint64_t before = p.done_bytes, bad = dfa_flush(s, &p);
            if (bad) unknown_byte(s, path, NULL, bad - 1, p.block, p.block_len, before);
            else if (!s->failed) dfa_part_write(s, &p);
        }
        if (!s->failed) write_unit_end(s, rd, ranged);
        sm_reader_close(rd);
    }
    free(record);
    free(p.map);
    free(p.block_map);
    free(p.block);
    if (!s->failed) {
        wire_send(s->out, MSG_END, &s->msg);
        if (sm_dist_out_flush(s->out) != 0 || s->out->failed) fail(s, NULL, "the result stream could not be written");
    }
    if (s->failed) {
        if (err) *err = s->err;
        return -1;
    }
    return 0;
}
