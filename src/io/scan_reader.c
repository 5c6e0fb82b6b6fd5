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

    const char *name = NULL;
    int more;
    while ((more = sm_reader_next_record(reader, &name, err)) == 1) {
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
    if (more < 0) return reader_failed(more, err);
    return SM_OK;
}
