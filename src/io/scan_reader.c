/* sm_runner_scan_reader: the library's one loop that feeds a reader's
 * records into a runner (include/seqmatch_reader.h), and
 * sm_runner_feed_reader, its sequence step for a caller that begins and
 * ends records itself. It uses only the runner's public calls. */
#include <stddef.h>
#include <string.h>

#include "io/seqio.h"

#define DEFAULT_PIECE ((size_t)64 << 20)

/* The options' first layout, before size: the fields up to past_cut. */
#define FIRST_LAYOUT_END (offsetof(sm_scan_reader_options, past_cut) + sizeof(uint64_t))

void sm_scan_reader_options_init(sm_scan_reader_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
}

/* The caller's options in this build's layout: fields past its size zero. */
static void take_options(const sm_scan_reader_options *in, sm_scan_reader_options *out) {
    memset(out, 0, sizeof *out);
    if (in) {
        size_t size = in->size ? in->size : FIRST_LAYOUT_END;
        memcpy(out, in, size < sizeof *out ? size : sizeof *out);
    }
    out->size = sizeof *out;
}

/* The reader strips on the runner's host threads. */
static void run_on_runner(void *runner, size_t n, void (*job)(void *arg, size_t i), void *arg) {
    (void)sm_runner_parallel_for(runner, n, job, arg);
}

static int runner_failed(int status, sm_error *err) {
    if (err && status != SM_ERR_TERMINATED) {
        err->code = status;
        err->message[0] = '\0';
    }
    return status;
}

static int reader_failed(int status, sm_error *err) {
    if (err) {
        if (!err->code) err->code = SM_ERR_IO;
        if (!err->message[0]) strcpy(err->message, "read error");
        return err->code;
    }
    return status < 0 ? SM_ERR_IO : status;
}

/* A ranged reader's record cut at the range end: up to want bytes past it. */
static int feed_past_cut(sm_runner *runner, sm_reader *reader, uint64_t want, size_t piece_size, sm_error *err) {
    while (want > 0) {
        void *dst;
        size_t room, len = 0;
        int status = sm_runner_feed_buffer(runner, want < piece_size ? (size_t)want : piece_size, &dst, &room);
        if (status != SM_OK) return runner_failed(status, err);
        int piece = sm_reader_read_extra(reader, dst, room, &len, err);
        if (piece < 0) return reader_failed(piece, err);
        if (piece == 0) break;
        status = sm_runner_feed_commit(runner, len);
        if (status != SM_OK) return runner_failed(status, err);
        want -= len;
    }
    return SM_OK;
}

/* The rest of the reader's current record into the runner's current
   record (rec->number), rec->length counting what is fed. A stop asked by
   on_progress inside the record is noted in *stopped_inside. */
static int feed_sequence(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts,
                         sm_scan_record *rec, int *stopped_inside, sm_error *err) {
    size_t piece_size = opts->piece ? opts->piece : DEFAULT_PIECE;
    int status = SM_OK;
    for (;;) {
        /* the reader writes the record's bytes straight into the runner's batch */
        void *dst;
        size_t room, len = 0;
        status = sm_runner_feed_buffer(runner, piece_size, &dst, &room);
        if (status != SM_OK) return runner_failed(status, err);
        int piece = sm_reader_read_into(reader, dst, room, &len, err);
        if (piece < 0) return reader_failed(piece, err);
        if (piece == 0) break;
        if (opts->on_sequence && opts->on_sequence(opts->ctx, rec->number, dst, len) != 0) return SM_ERR_TERMINATED;
        status = sm_runner_feed_commit(runner, len);
        if (status != SM_OK) return runner_failed(status, err);
        rec->length += len;
        if (opts->on_progress && opts->on_progress(opts->ctx, len, 0) != 0) {
            if (stopped_inside) *stopped_inside = 1;
            return SM_ERR_TERMINATED;
        }
    }
    if (opts->past_cut && sm_reader_record_cut(reader))
        status = feed_past_cut(runner, reader, opts->past_cut, piece_size, err);
    return status;
}

int sm_runner_feed_reader(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, uint64_t record,
                          uint64_t *length, sm_error *err) {
    sm_scan_reader_options o;
    take_options(opts, &o);
    if (err) {
        err->code = SM_OK;
        err->message[0] = '\0';
    }
    sm_scan_record rec = {.number = record, .mate = 1, .reader = reader};
    int status = feed_sequence(runner, reader, &o, &rec, NULL, err);
    if (length) *length = rec.length;
    return status;
}

/* Many whole records at once (sm_reader_read_records), parsed and stripped
   on the runner's threads straight into its batch, then named and committed
   in order. *taken gets how many (0: read the next one the usual way);
   returns SM_OK or the status to stop with. The callbacks see what the
   record-at-a-time loop shows them, record by record. */
static int feed_records(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, size_t *taken,
                        int *unusable, sm_error *err) {
    *taken = 0;
    size_t need = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        void *dst;
        size_t avail, max_records;
        uint64_t first;
        int status = sm_runner_records_buffer(runner, need, &dst, &avail, &max_records, &first);
        if (status == SM_ERR_INVALID) {
            *unusable = 1; /* anchored or circular: a record at a time */
            return SM_OK;
        }
        if (status != SM_OK) return runner_failed(status, err);
        sm_reader_records got;
        if (!sm_reader_read_records(reader, dst, avail, max_records, &got)) {
            if (!got.need || attempt) return SM_OK;
            need = got.need; /* a batch that leaves first makes room */
            continue;
        }
        /* committed one by one (a commit never moves bytes), so that each
           record's callbacks come in the other loop's order */
        for (size_t i = 0; i < got.n; i++) {
            size_t len = got.lens[i], off = got.offs[i];
            const uint8_t *at = (const uint8_t *)dst + off;
            int stop = opts->on_record && opts->on_record(opts->ctx, first + i, got.names[i]) != 0;
            if (!stop && opts->on_sequence && len > 0) stop = opts->on_sequence(opts->ctx, first + i, at, len) != 0;
            if (stop) {
                /* as the other loop leaves it: this record begun, nothing of it fed */
                (void)sm_runner_begin_record(runner);
                return SM_ERR_TERMINATED;
            }
            status = sm_runner_records_commit(runner, 1, &off, &len);
            if (status != SM_OK) return runner_failed(status, err);
            ++*taken;
            if (len && opts->on_progress && opts->on_progress(opts->ctx, len, 0) != 0) return SM_ERR_TERMINATED;
            if (opts->on_record_fed) opts->on_record_fed(opts->ctx, first + i, len);
            if (opts->on_progress && opts->on_progress(opts->ctx, 0, 1) != 0) return SM_ERR_TERMINATED;
        }
        return SM_OK;
    }
    return SM_OK;
}

/* Records a failed attempt leaves to the one-at-a-time loop before the next
   attempt: doubling while attempts fail (\r\n line ends, say), up to this. */
#define RECORDS_BACKOFF_MAX 4096

/* The loop's state in one call. */
typedef struct {
    sm_runner *runner;
    const sm_scan_reader_options *o;
    sm_error *err;
    sm_scan_record open; /* a fed record not yet ended (open.reader NULL: none) */
} scan;

/* Ends the open record (the caller's end_record or the runner's), then on_progress. */
static int end_open(scan *sc) {
    if (!sc->open.reader) return SM_OK;
    const sm_scan_reader_options *o = sc->o;
    int status = o->end_record ? o->end_record(o->ctx, sc->runner, &sc->open) : sm_runner_end_record(sc->runner);
    sc->open.reader = NULL;
    if (status != SM_OK) return runner_failed(status, sc->err);
    if (o->on_progress && o->on_progress(o->ctx, 0, 1) != 0) return SM_ERR_TERMINATED;
    return SM_OK;
}

/* After a record's sequence is fed: the callbacks, and it waits for its end. */
static int record_read(scan *sc, sm_scan_record *rec) {
    const sm_scan_reader_options *o = sc->o;
    rec->cut = sm_reader_record_cut(rec->reader);
    if (o->on_record_fed) o->on_record_fed(o->ctx, rec->number, rec->length);
    if (o->on_record_read && o->on_record_read(o->ctx, rec) != 0) return SM_ERR_TERMINATED;
    sc->open = *rec;
    return SM_OK;
}

/* A stop inside a record, for a resumable scan to go on from. */
static int stopped_in(const sm_scan_record *rec) {
    sm_reader_resume *at = sm_reader_resume_point(rec->reader);
    at->open = 1;
    at->record = rec->number;
    at->length = rec->length;
    at->name = rec->name;
    at->continued = rec->continued;
    return SM_ERR_TERMINATED;
}

/* The current record of reader (mate 1 or 2): begun, fed and read, or,
   for a mate not fed, only seen. */
static int scan_record(scan *sc, sm_reader *reader, unsigned mate, const char *name, int fed) {
    const sm_scan_reader_options *o = sc->o;
    sm_scan_record rec = {.number = UINT64_MAX, .mate = mate, .reader = reader, .name = name,
                          .continued = sm_reader_record_continued(reader)};
    if (!fed) {
        if (o->on_record_begin && o->on_record_begin(o->ctx, &rec) != 0) return SM_ERR_TERMINATED;
        if (o->on_record_read && o->on_record_read(o->ctx, &rec) != 0) return SM_ERR_TERMINATED;
        return SM_OK;
    }
    int status = end_open(sc);
    if (status != SM_OK) return status;
    if (o->begin_record) {
        if (o->begin_record(o->ctx, sc->runner, &rec, &rec.number) != 0) return SM_ERR_TERMINATED;
    } else {
        rec.number = sm_runner_begin_record(sc->runner);
    }
    if (o->on_record && o->on_record(o->ctx, rec.number, name) != 0) return SM_ERR_TERMINATED;
    if (o->on_record_begin && o->on_record_begin(o->ctx, &rec) != 0) return SM_ERR_TERMINATED;
    int inside = 0;
    status = feed_sequence(sc->runner, reader, o, &rec, &inside, sc->err);
    if (status == SM_ERR_TERMINATED && inside && o->resumable) return stopped_in(&rec);
    if (status != SM_OK) return status;
    return record_read(sc, &rec);
}

/* A resumable scan that stopped inside a record: the rest of it. */
static int resume_record(scan *sc, sm_reader *reader) {
    sm_reader_resume *at = sm_reader_resume_point(reader);
    sm_scan_record rec = {.number = at->record, .mate = 1, .reader = reader, .name = at->name,
                          .length = at->length, .continued = at->continued};
    at->open = 0;
    int inside = 0;
    int status = feed_sequence(sc->runner, reader, sc->o, &rec, &inside, sc->err);
    if (status == SM_ERR_TERMINATED && inside) return stopped_in(&rec);
    if (status == SM_OK) status = record_read(sc, &rec);
    if (status == SM_OK) status = end_open(sc);
    return status;
}

/* The next record of each reader (*more: 1 a record or pair, 0 the end).
   Returns SM_OK or the status to stop with. */
static int next_records(scan *sc, sm_reader *reader, uint64_t pair, const char **name, const char **mate_name,
                        int *more_out) {
    const sm_scan_reader_options *o = sc->o;
    int more = sm_reader_next_record(reader, name, sc->err);
    if (more < 0) return reader_failed(more, sc->err);
    *more_out = more;
    if (!o->mate) return SM_OK;
    int mate_more = sm_reader_next_record(o->mate, mate_name, sc->err);
    if (mate_more < 0) return reader_failed(mate_more, sc->err);
    if (!more && !mate_more) return SM_OK;
    if (o->on_pair && o->on_pair(o->ctx, pair, more ? *name : NULL, mate_more ? *mate_name : NULL) != 0)
        return SM_ERR_TERMINATED;
    if (more != mate_more) {
        if (sc->err) {
            sc->err->code = SM_ERR_FORMAT;
            strcpy(sc->err->message, "paired inputs hold different numbers of records");
        }
        return SM_ERR_FORMAT;
    }
    return SM_OK;
}

int sm_runner_scan_reader(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, sm_error *err) {
    sm_scan_reader_options o;
    take_options(opts, &o);
    if (err) memset(err, 0, sizeof *err);
    if (!runner || !reader || (o.mate && o.resumable)) {
        if (err) err->code = SM_ERR_INVALID;
        return SM_ERR_INVALID;
    }
    scan sc = {.runner = runner, .o = &o, .err = err};
    int one_at_a_time = o.mate || o.on_pair || o.on_record_begin || o.on_record_read || o.begin_record ||
                        o.end_record || o.resumable;
    unsigned fed_mates = o.mate ? (o.scan_mates & 3 ? o.scan_mates & 3 : 3) : 1;
    /* With host scan threads, one team of them both strips and scans
       (ignored by a reader that has begun). */
    unsigned threads = sm_runner_scan_threads(runner);
    if (threads > 1 && !one_at_a_time) sm_reader_share_threads(reader, threads, run_on_runner, runner);

    /* many records at a time where the reader can (a mapped file, threads,
       no callback that needs each piece as read, no ranges) */
    int batched = threads > 1 && !o.past_cut && !one_at_a_time, unusable = 0;
    size_t backoff = 0, skip = 0;
    if (o.resumable && sm_reader_resume_point(reader)->open) {
        int status = resume_record(&sc, reader);
        if (status != SM_OK) return status;
    }
    for (uint64_t pair = 0;; pair++) {
        if (batched && !unusable && skip == 0) {
            size_t taken = 0;
            int status = feed_records(runner, reader, &o, &taken, &unusable, err);
            if (status != SM_OK) return status;
            if (taken) {
                backoff = 0;
                continue;
            }
            backoff = backoff ? backoff * 2 : 1;
            if (backoff > RECORDS_BACKOFF_MAX) backoff = RECORDS_BACKOFF_MAX;
            skip = backoff;
        }
        if (skip) skip--;
        const char *name = NULL, *mate_name = NULL;
        int more = 0;
        int status = next_records(&sc, reader, pair, &name, &mate_name, &more);
        if (status != SM_OK) return status;
        if (!more) break;
        status = scan_record(&sc, reader, 1, name, fed_mates & 1);
        if (status == SM_OK && o.mate) status = scan_record(&sc, o.mate, 2, mate_name, fed_mates & 2);
        if (status == SM_OK) status = end_open(&sc);
        if (status != SM_OK) return status;
    }
    return SM_OK;
}
