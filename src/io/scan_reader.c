/* sm_runner_scan_reader and sm_runner_feed_reader: the one loop that feeds
 * a reader's records into a runner (include/seqmatch_reader.h). It uses only
 * the runner's public calls. */
#include <string.h>

#include "io/seqio.h"

#define DEFAULT_PIECE ((size_t)64 << 20)

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

int sm_runner_feed_reader(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, uint64_t record,
                          uint64_t *length, sm_error *err) {
    size_t piece_size = opts && opts->piece ? opts->piece : DEFAULT_PIECE;
    uint64_t fed = 0;
    int status = SM_OK;
    if (err) {
        err->code = SM_OK;
        err->message[0] = '\0';
    }
    for (;;) {
        /* the reader writes the record's bytes straight into the runner's batch */
        void *dst;
        size_t room, len = 0;
        status = sm_runner_feed_buffer(runner, piece_size, &dst, &room);
        if (status != SM_OK) {
            status = runner_failed(status, err);
            break;
        }
        int piece = sm_reader_read_into(reader, dst, room, &len, err);
        if (piece < 0) {
            status = reader_failed(piece, err);
            break;
        }
        if (piece == 0) break;
        fed += len;
        if (opts && opts->on_sequence && opts->on_sequence(opts->ctx, record, dst, len) != 0) {
            status = SM_ERR_TERMINATED;
            break;
        }
        status = sm_runner_feed_commit(runner, len);
        if (status != SM_OK) {
            status = runner_failed(status, err);
            break;
        }
        if (opts && opts->on_progress && opts->on_progress(opts->ctx, len, 0) != 0) {
            status = SM_ERR_TERMINATED;
            break;
        }
    }
    if (length) *length = fed;
    if (status == SM_OK && opts && opts->past_cut && sm_reader_record_cut(reader))
        status = feed_past_cut(runner, reader, opts->past_cut, piece_size, err);
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

int sm_runner_scan_reader(sm_runner *runner, sm_reader *reader, const sm_scan_reader_options *opts, sm_error *err) {
    sm_scan_reader_options none;
    if (!opts) {
        memset(&none, 0, sizeof none);
        opts = &none;
    }
    if (err) memset(err, 0, sizeof *err);
    if (!runner || !reader) {
        if (err) err->code = SM_ERR_INVALID;
        return SM_ERR_INVALID;
    }
    /* With host scan threads, one team of them both strips and scans
       (ignored by a reader that has begun). */
    unsigned threads = sm_runner_scan_threads(runner);
    if (threads > 1) sm_reader_share_threads(reader, threads, run_on_runner, runner);

    /* many records at a time where the reader can (a mapped file, threads,
       no callback that needs each piece as read, no ranges) */
    int batched = threads > 1 && !opts->past_cut, unusable = 0;
    size_t backoff = 0, skip = 0;
    const char *name = NULL;
    for (;;) {
        if (batched && !unusable && skip == 0) {
            size_t taken = 0;
            int status = feed_records(runner, reader, opts, &taken, &unusable, err);
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
        int more = sm_reader_next_record(reader, &name, err);
        if (more < 0) return reader_failed(more, err);
        if (more == 0) break;
        uint64_t record = sm_runner_begin_record(runner);
        if (opts->on_record && opts->on_record(opts->ctx, record, name) != 0) return SM_ERR_TERMINATED;
        uint64_t record_bytes = 0;
        int status = sm_runner_feed_reader(runner, reader, opts, record, &record_bytes, err);
        if (status != SM_OK) return status;
        if (opts->on_record_fed) opts->on_record_fed(opts->ctx, record, record_bytes);
        status = sm_runner_end_record(runner);
        if (status != SM_OK) return runner_failed(status, err);
        if (opts->on_progress && opts->on_progress(opts->ctx, 0, 1) != 0) return SM_ERR_TERMINATED;
    }
    return SM_OK;
}
