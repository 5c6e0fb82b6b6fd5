/* Records with their bytes as read and their hits, in order
 * (include/seqmatch_reader.h, sm_reads_*): the loop of seqmatch filter and
 * demux. Records (or pairs of mates read in step) are fed to a runner and
 * wait in a queue until the runner has delivered their hits.
 *
 * The runner delivers a record's summary and its record-done call some time
 * after the record was fed (a batch or two later), so each record waits
 * with its bytes: a pointer into the file when the reader reads it in place
 * (valid until the reader closes: the runner is flushed at the end of every
 * input), else a copy in an arena that the queue empties as records go. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_output.h"
#include "base/internal.h"
#include "io/source.h"

/* Bytes of a record asked of the reader at a time. */
#define FEED_PIECE ((size_t)64 << 20)
/* What the steps below return when on_record asked to stop (errors are SM_ERR_*). */
#define STOPPED (-1)

typedef struct {
    sm_read_record rec;
    uint64_t first_record; /* runner record of the first scanned mate */
    unsigned records;      /* runner records it spans (mates scanned) */
    unsigned done;         /* of them delivered */
    size_t raw_at[2];      /* in the arena when not stable (rec.raw[] NULL until delivered) */
} queued;

struct sm_reads {
    sm_reads_options o;
    sm_runner *runner;
    sm_input_format format; /* of the first input read */
    queued *queue;          /* ring: oldest first */
    size_t head, count, cap;
    uint8_t *arena;         /* copies of records' bytes, oldest first */
    size_t arena_lo, arena_hi, arena_cap; /* [lo, hi) in use */
    int stop;               /* on_record asked to stop */
    const sm_reader *reader; /* the one being fed, for on_progress */
    const sm_db *db;         /* pattern names for stats */
    uint64_t *pattern_records; /* stats: records with a hit, per pattern */
};

static int fail_read(sm_error *err, const sm_error *from, int code) {
    return sm_io_error(err, code ? code : SM_ERR_IO, "%s", from->message[0] ? from->message : "read error");
}

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "stdin" : path; }

static int fail_runner(sm_error *err, const char *what, int status) {
    if (status == SM_ERR_NOMEM) return sm_io_error(err, status, "%s: out of memory while scanning", what);
    return sm_io_error(err, status, "%s: %s", what, sm_strerror(status));
}

static queued *entry_at(sm_reads *s, size_t i) { return &s->queue[(s->head + i) % s->cap]; }

static queued *push_entry(sm_reads *s) {
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        queued *q = malloc(cap * sizeof *q);
        if (!q) return NULL;
        for (size_t i = 0; i < s->count; i++) q[i] = *entry_at(s, i);
        free(s->queue);
        s->queue = q;
        s->head = 0;
        s->cap = cap;
    }
    queued *e = entry_at(s, s->count++);
    memset(e, 0, sizeof *e);
    return e;
}

/* Copies a record's bytes to the arena; returns their offset, or SIZE_MAX. */
static size_t arena_add(sm_reads *s, const uint8_t *data, size_t len) {
    if (s->arena_cap - s->arena_hi < len) {
        /* move what is in use to the front, then grow if that is not enough */
        size_t used = s->arena_hi - s->arena_lo;
        if (s->arena_lo > 0) {
            memmove(s->arena, s->arena + s->arena_lo, used);
            for (size_t i = 0; i < s->count; i++) {
                queued *e = entry_at(s, i);
                for (unsigned m = 0; m < e->rec.mates; m++)
                    if (!e->rec.raw[m] && e->rec.raw_len[m]) e->raw_at[m] -= s->arena_lo;
            }
            s->arena_lo = 0;
            s->arena_hi = used;
        }
        if (s->arena_cap - s->arena_hi < len) {
            size_t cap = s->arena_cap ? s->arena_cap : (size_t)1 << 20;
            while (cap - s->arena_hi < len) cap *= 2;
            uint8_t *p = realloc(s->arena, cap);
            if (!p) return SIZE_MAX;
            s->arena = p;
            s->arena_cap = cap;
        }
    }
    memcpy(s->arena + s->arena_hi, data, len);
    s->arena_hi += len;
    return s->arena_hi - len;
}

/* The entry a runner record belongs to: the oldest, normally. */
static queued *entry_of(sm_reads *s, uint64_t record) {
    for (size_t i = 0; i < s->count; i++) {
        queued *e = entry_at(s, i);
        if (e->records && record >= e->first_record && record - e->first_record < e->records) return e;
    }
    return NULL;
}

static int on_summary(const sm_record_summary *summary, void *ctx) {
    sm_reads *s = ctx;
    queued *e = entry_of(s, summary->record);
    if (e) {
        e->rec.hits += summary->hits;
        /* runner records of an entry: its scanned mates in order, or a record's start and end window */
        e->rec.summary_mate = s->o.scan_mate == 2 ? 2 : 1 + (unsigned)(summary->record - e->first_record);
        if (s->o.on_summary) s->o.on_summary(s->o.ctx, &e->rec, summary);
        for (size_t i = 0; s->pattern_records && i < summary->npatterns; i++) s->pattern_records[summary->patterns[i].pattern]++;
    }
    return s->stop;
}

static void on_record_done(uint64_t record, void *ctx) {
    sm_reads *s = ctx;
    if (s->count == 0) return;
    queued *e = entry_at(s, 0);
    if (!e->records || record < e->first_record || record - e->first_record >= e->records) return;
    if (++e->done < e->records) return;
    size_t arena_end = s->arena_lo;
    for (unsigned m = 0; m < e->rec.mates; m++)
        if (!e->rec.raw[m]) {
            e->rec.raw[m] = s->arena + e->raw_at[m];
            if (e->rec.raw_len[m]) arena_end = e->raw_at[m] + e->rec.raw_len[m];
        }
    for (unsigned m = 0; s->o.stats && m < e->rec.mates; m++)
        sm_stats_add(s->o.stats, "bases", "input", sm_record_seq_length(e->rec.raw[m], e->rec.raw_len[m]));
    if (!s->stop && s->o.on_record && s->o.on_record(s->o.ctx, &e->rec) != 0) s->stop = 1;
    s->arena_lo = arena_end;
    if (s->arena_lo == s->arena_hi) s->arena_lo = s->arena_hi = 0;
    s->head = (s->head + 1) % s->cap;
    s->count--;
}

int sm_reads_new(const sm_db *db, const sm_runner_options *runner_options, const sm_reads_options *opts,
                 sm_reads **reads, sm_error *err) {
    *reads = NULL;
    memset(err, 0, sizeof *err);
    sm_reads *s = calloc(1, sizeof *s);
    if (!s) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    s->o = *opts;
    s->format = SM_INPUT_AUTO;
    sm_runner_options ro;
    if (runner_options) ro = *runner_options;
    else sm_runner_options_init(&ro);
    ro.on_hit = NULL; /* only each record's summary: no hit list */
    ro.on_record_summary = on_summary;
    ro.on_record_done = on_record_done;
    ro.ctx = s;
    sm_db_info info;
    sm_db_get_info(db, &info);
    s->db = db;
    if (opts->stats && !(s->pattern_records = calloc(info.pattern_count + 1, sizeof *s->pattern_records))) {
        free(s);
        return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    }
    int status = sm_runner_create(db, &ro, &s->runner, err);
    if (status != SM_OK) {
        free(s->pattern_records);
        free(s);
        return status;
    }
    *reads = s;
    return SM_OK;
}

sm_input_format sm_reads_format(const sm_reads *reads) { return reads->format; }


void sm_reads_free(sm_reads *reads) {
    if (!reads) return;
    sm_db_info info;
    sm_db_get_info(reads->db, &info);
    for (uint32_t p = 0; reads->pattern_records && p < info.pattern_count; p++) {
        const char *name = sm_db_pattern_name(reads->db, p);
        sm_stats_item(reads->o.stats, "patterns", name ? name : "", "records", reads->pattern_records[p]);
    }
    free(reads->pattern_records);
    sm_runner_free(reads->runner);
    free(reads->queue);
    free(reads->arena);
    free(reads);
}

/* The record queue's side of sm_runner_scan_reader (src/io/scan_reader.c). */
typedef struct {
    sm_reads *s;
    const char *paths[2];
    unsigned mates;
    queued *entry;      /* the record (pair) being read */
    unsigned fed_mate;  /* the mate whose runner record is open: its path names runner failures */
    sm_error *err;
    int failed;         /* a callback failed, err says why */
    uint8_t *tail;      /* end_window: the last bytes of the record's sequence fed so far */
    size_t tail_len;
} input_scan;

/* end_window: keeps the last end_window bytes of each record's sequence. */
static int keep_tail(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    (void)record;
    input_scan *in = ctx;
    size_t w = in->s->o.end_window;
    if (len >= w) {
        memcpy(in->tail, data + len - w, w);
        in->tail_len = w;
        return 0;
    }
    size_t keep = in->tail_len + len > w ? w - len : in->tail_len;
    memmove(in->tail, in->tail + in->tail_len - keep, keep);
    memcpy(in->tail + keep, data, len);
    in->tail_len = keep + len;
    return 0;
}

/* end_window: after the record, its end's reverse complement as the next runner record. */
static int end_with_window(void *ctx, sm_runner *runner, const sm_scan_record *record) {
    (void)record;
    input_scan *in = ctx;
    int status = sm_runner_end_record(runner);
    if (status != SM_OK) return status;
    size_t n = in->tail_len;
    for (size_t i = 0; i < n / 2; i++) {
        uint8_t c = in->tail[i];
        in->tail[i] = in->tail[n - 1 - i];
        in->tail[n - 1 - i] = c;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t c = in->tail[i];
        if (c >= 'a' && c <= 'z') c = (uint8_t)(c - 'a' + 'A');
        c = c == 'U' ? 'A' : sm_nt_complement[c];
        in->tail[i] = c ? c : 'N';
    }
    in->tail_len = 0;
    (void)sm_runner_begin_record(runner);
    status = n ? sm_runner_feed(runner, in->tail, n) : SM_OK;
    int ended = sm_runner_end_record(runner);
    return status != SM_OK ? status : ended;
}

static int on_piece_fed(void *ctx, size_t bytes, int record_ended) {
    input_scan *in = ctx;
    sm_reads *s = in->s;
    if (!record_ended && s->o.on_progress) s->o.on_progress(s->o.ctx, s->reader, bytes, sm_runner_total(s->runner));
    return 0;
}

static int callback_failed(input_scan *in) {
    in->failed = 1;
    return 1;
}

/* "r7/1" and "r7/2" are one pair. */
static size_t pair_name_length(const char *name) {
    size_t n = strlen(name);
    if (n >= 2 && name[n - 2] == '/' && (name[n - 1] == '1' || name[n - 1] == '2')) n -= 2;
    return n;
}

/* Both files at their next record: as many records, the same read. */
static int on_pair(void *ctx, uint64_t pair, const char *name, const char *mate_name) {
    input_scan *in = ctx;
    if (!name || !mate_name) {
        sm_io_error(in->err, SM_ERR_FORMAT,
                    "%s has more records than %s (%llu); paired files must hold the same reads in the same order",
                    shown(in->paths[name ? 0 : 1]), shown(in->paths[name ? 1 : 0]), (unsigned long long)pair);
        return callback_failed(in);
    }
    size_t n0 = pair_name_length(name), n1 = pair_name_length(mate_name);
    if (n0 != n1 || memcmp(name, mate_name, n0) != 0) {
        sm_io_error(in->err, SM_ERR_FORMAT, "reads out of step: record %llu is '%s' in %s but '%s' in %s",
                    (unsigned long long)pair + 1, name, shown(in->paths[0]), mate_name, shown(in->paths[1]));
        return callback_failed(in);
    }
    return 0;
}

/* A record (a pair's first mate: a new queue entry) begins. */
static int on_record_begin(void *ctx, const sm_scan_record *record) {
    input_scan *in = ctx;
    sm_reads *s = in->s;
    if (record->mate == 1) {
        sm_stats_add(s->o.stats, "reads", "input", 1);
        if (!(in->entry = push_entry(s))) {
            sm_io_error(in->err, SM_ERR_NOMEM, "out of memory");
            return callback_failed(in);
        }
        in->entry->rec.mates = in->mates;
    }
    if (record->number != UINT64_MAX) {
        queued *e = in->entry;
        if (e->records++ == 0) e->first_record = record->number;
        if (s->o.end_window && in->mates == 1) e->records = 2, in->tail_len = 0; /* the record, then its end window */
        in->fed_mate = record->mate - 1;
        s->reader = record->reader;
    }
    return 0;
}

/* A mate is read: its bytes are kept with the entry (every mate's before
   the last fed one ends, as its record-done call may come as it ends). */
static int on_record_read(void *ctx, const sm_scan_record *record) {
    input_scan *in = ctx;
    sm_reads *s = in->s;
    queued *e = in->entry;
    unsigned m = record->mate - 1;
    const uint8_t *data;
    size_t len;
    int stable;
    sm_error e2;
    e2.code = 0, e2.message[0] = '\0';
    if (sm_reader_record_raw(record->reader, &data, &len, &stable, &e2) < 0) {
        fail_read(in->err, &e2, e2.code);
        return callback_failed(in);
    }
    e->rec.raw_len[m] = len;
    if (stable) {
        e->rec.raw[m] = data;
        return 0;
    }
    size_t at = arena_add(s, data, len);
    if (at == SIZE_MAX) {
        sm_io_error(in->err, SM_ERR_NOMEM, "out of memory");
        return callback_failed(in);
    }
    e->rec.raw[m] = NULL;
    e->raw_at[m] = at;
    return 0;
}

static const char *format_name(sm_input_format f) { return f == SM_INPUT_FASTQ ? "FASTQ" : "FASTA"; }

static int open_reader(sm_reads *s, const char *path, sm_reader **reader, sm_error *err) {
    sm_error e;
    e.code = 0, e.message[0] = '\0';
    int rc = sm_reader_open_threads(path, s->o.format, s->o.reader_threads, reader, &e);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s", e.message[0] ? e.message : sm_strerror(rc));
    sm_reader_keep_raw(*reader);
    sm_input_format got = sm_reader_format(*reader);
    if (s->format == SM_INPUT_AUTO) {
        s->format = got;
    } else if (got != s->format) {
        sm_reader_close(*reader);
        *reader = NULL;
        return sm_io_error(err, SM_ERR_INVALID, "%s: %s, but the input before it is %s; give inputs of one format",
                    shown(path), format_name(got), format_name(s->format));
    }
    return 0;
}

/* Every record (pair) of the open readers through the runner. Returns 0,
   STOPPED, or an error. */
static int scan_input(sm_reads *s, sm_reader **readers, const char **paths, unsigned mates, sm_error *err) {
    input_scan in = {.s = s, .paths = {paths[0], paths[1]}, .mates = mates, .err = err};
    sm_scan_reader_options opts;
    sm_scan_reader_options_init(&opts);
    opts.ctx = &in;
    opts.on_progress = on_piece_fed;
    opts.piece = FEED_PIECE;
    opts.mate = mates == 2 ? readers[1] : NULL;
    opts.scan_mates = s->o.scan_mate == 1 ? SM_SCAN_MATE_1 : s->o.scan_mate == 2 ? SM_SCAN_MATE_2 : 0;
    opts.on_pair = mates == 2 ? on_pair : NULL;
    opts.on_record_begin = on_record_begin;
    opts.on_record_read = on_record_read;
    if (s->o.end_window && mates == 1) {
        if (!(in.tail = malloc(s->o.end_window))) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
        opts.on_sequence = keep_tail;
        opts.end_record = end_with_window;
    }
    sm_error e;
    int status = sm_runner_scan_reader(s->runner, readers[0], &opts, &e);
    free(in.tail);
    if (status == SM_OK) return 0;
    if (in.failed) return err->code ? err->code : SM_ERR_IO;
    if (status == SM_ERR_TERMINATED && s->stop) return STOPPED;
    if (e.message[0]) return fail_read(err, &e, e.code); /* bad input */
    return fail_runner(err, shown(paths[in.fed_mate]), status);
}

int sm_reads_run(sm_reads *s, const char *path1, const char *path2, sm_error *err) {
    memset(err, 0, sizeof *err);
    sm_reader *readers[2] = {NULL, NULL};
    const char *paths[2] = {path1, path2};
    unsigned mates = path2 ? 2 : 1;
    int rc = 0;
    for (unsigned m = 0; m < mates && rc == 0; m++) rc = open_reader(s, paths[m], &readers[m], err);
    if (rc == 0 && s->o.on_input) s->o.on_input(s->o.ctx, path1);
    if (rc == 0) rc = scan_input(s, readers, paths, mates, err);
    if (rc == 0) {
        int status = sm_runner_flush(s->runner);
        if (status == SM_ERR_TERMINATED && s->stop) rc = STOPPED;
        else if (status != SM_OK) rc = fail_runner(err, "scan", status);
    }
    for (unsigned m = 0; m < mates; m++) sm_reader_close(readers[m]);
    return rc == STOPPED ? SM_ERR_TERMINATED : rc;
}

void sm_read_record_closest_group(sm_read_record *e, const sm_record_summary *summary, const uint32_t *group_of) {
    for (size_t i = 0; i < summary->npatterns; i++) {
        uint32_t p = summary->patterns[i].pattern;
        uint64_t errors = (uint64_t)summary->patterns[i].errors + 1;
        if (e->user[0] == 0 || errors < e->user[0]) {
            e->user[0] = errors;
            e->user[1] = p;
            e->user[2] = 0;
        } else if (errors == e->user[0] && group_of[p] != group_of[e->user[1]]) {
            e->user[2] = 1;
        }
    }
}
