/* Fuzz target: the saved-database loader: sm_db_from_bytes, and sm_db_load
 * (what `seqmatch search -d` uses) on a file, which it maps, and on a pipe,
 * which it reads header first.
 *
 * A corrupt or truncated database must be rejected with an error, never
 * read out of bounds. Random changes almost never survive the checksum, so
 * each input is tried twice: as it is, and with its size and checksum fields
 * recomputed, which sends it on to the structural checks of the header, the
 * pattern table and every engine section. A database that loads must then
 * be usable: names, block scans, counts, streams, the runner and the DFA of
 * its automaton, over a text built from its own patterns. sm_db_load must
 * agree with sm_db_from_bytes: the same status, the same bytes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#endif
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "fuzz_support.h"
#include "seqmatch.h"

typedef struct {
    uint32_t patterns;
    uint64_t hits;
} hit_counter;

static int count_hit(const sm_hit *hit, void *ctx) {
    hit_counter *c = ctx;
    FUZZ_CHECK(hit->pattern < c->patterns && hit->start <= hit->end && (hit->strand == '+' || hit->strand == '-'),
               "hit of pattern %u [%llu, %llu) strand %c", hit->pattern, (unsigned long long)hit->start,
               (unsigned long long)hit->end, hit->strand);
    c->hits++;
    return 0;
}

/* Text for scans: every pattern, a few mutated copies and filler. */
static uint8_t *scan_text(const sm_db *db, uint32_t patterns, size_t *out_len) {
    size_t cap = 256, n = 0;
    for (uint32_t i = 0; i < patterns && i < 64; i++) {
        size_t len = 0;
        sm_db_pattern_seq(db, i, &len);
        cap += 2 * (len < 512 ? len : 512) + 8;
    }
    uint8_t *t = malloc(cap);
    if (!t) return NULL;
    for (uint32_t i = 0; i < patterns && i < 64; i++) {
        size_t len = 0;
        const char *seq = sm_db_pattern_seq(db, i, &len);
        if (len > 512) len = 512;
        memcpy(t + n, seq, len);
        n += len;
        t[n++] = 'A';
        memcpy(t + n, seq, len);
        if (len) t[n + len / 2] ^= 0x04; /* one changed symbol for approximate hits */
        n += len;
        t[n++] = 'N';
    }
    for (int i = 0; i < 128; i++) t[n++] = "ACGTacgtNnXx\0\xff-?"[i % 16];
    *out_len = n;
    return t;
}

static void exercise(const sm_db *db) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    FUZZ_CHECK(info.pattern_count >= 1 && info.min_length >= 1 && info.min_length <= info.max_length, "info");
    for (uint32_t i = 0; i < info.pattern_count; i++) {
        const char *name = sm_db_pattern_name(db, i);
        size_t len = 0;
        const char *seq = sm_db_pattern_seq(db, i, &len);
        FUZZ_CHECK(name && seq && len >= info.min_length && len <= info.max_length, "pattern %u", i);
        (void)strlen(name);
        (void)strlen(seq);
    }
    FUZZ_CHECK(sm_db_pattern_name(db, info.pattern_count) == NULL, "a name past the last pattern");
    size_t text_len = 0;
    uint8_t *text = scan_text(db, info.pattern_count, &text_len);
    if (!text) return;

    sm_scratch *scratch = NULL;
    if (sm_scratch_alloc(db, &scratch) == SM_OK) {
        hit_counter c = {info.pattern_count, 0};
        int rc = sm_scan(db, scratch, text, text_len, count_hit, &c);
        FUZZ_CHECK(rc == SM_OK || rc == SM_ERR_NOMEM, "scan: %d", rc);
        /* each pattern alone: hits that end early, where a key length that
           disagrees with the pattern table would start before the text */
        for (uint32_t i = 0; i < info.pattern_count && i < 64; i++) {
            size_t len = 0;
            const char *seq = sm_db_pattern_seq(db, i, &len);
            sm_scan(db, scratch, seq, len, count_hit, &c);
        }
        uint64_t *counts = calloc(info.pattern_count, sizeof *counts);
        if (counts) {
            sm_count(db, scratch, text, text_len, counts);
            free(counts);
        }
        sm_scratch_free(scratch);
    }
    sm_stream *stream = NULL;
    if (sm_stream_open(db, &stream) == SM_OK) {
        hit_counter c = {info.pattern_count, 0};
        for (size_t at = 0; at < text_len; at += 7)
            sm_stream_feed(stream, text + at, text_len - at < 7 ? text_len - at : 7, count_hit, &c);
        sm_stream_end(stream, count_hit, &c);
        sm_stream_free(stream);
    }
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = 1;
    ro.chunk_size = 16;
    hit_counter rc_hits = {info.pattern_count, 0};
    ro.on_hit = count_hit;
    ro.ctx = &rc_hits;
    ro.overlap_free = text_len & 1 ? SM_OVERLAP_FREE_PREFIX : SM_OVERLAP_FREE_SPECULATE;
    sm_runner *runner = NULL;
    sm_error err;
    if (sm_runner_create(db, &ro, &runner, &err) == SM_OK) {
        sm_runner_begin_record(runner);
        sm_runner_feed(runner, text, text_len);
        sm_runner_end_record(runner);
        sm_runner_flush(runner);
        sm_runner_free(runner);
    }
    if (sm_db_engine_patterns(db, SM_ENGINE_AUTOMATON) == info.pattern_count) {
        sm_dfa *dfa = NULL;
        if (sm_dfa_from_db(db, SM_DFA_CONTAINS, &dfa, &err) == SM_OK) sm_dfa_free(dfa);
    }
    free(text);
}

/* sm_db_load on the bytes as a file (mapped) or through a pipe (read). */
static void load_path(const uint8_t *bytes, size_t size, int expected, int through_pipe) {
    char path[64];
    int fds[2] = {-1, -1};
    fuzz_file file;
    if (through_pipe) {
        if (pipe(fds) != 0) return;
#ifdef F_SETPIPE_SZ
        if (size > 65536) fcntl(fds[1], F_SETPIPE_SZ, (int)size);
#endif
        size_t done = 0;
        int blocked = 0;
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        while (done < size) {
            ssize_t k = write(fds[1], bytes + done, size - done);
            if (k <= 0) {
                blocked = 1;
                break;
            }
            done += (size_t)k;
        }
        close(fds[1]);
        if (blocked) { /* larger than the pipe holds: no writer to wait for */
            close(fds[0]);
            return;
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    } else {
        if (fuzz_file_make(&file, bytes, size) != 0) return;
        snprintf(path, sizeof path, "%s", file.path);
    }
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_db_load(path, &db, &err);
    if (through_pipe) close(fds[0]);
    else fuzz_file_remove(&file);
    if (rc == SM_ERR_IO && through_pipe) return; /* no /proc to open the pipe by */
    FUZZ_CHECK(rc == expected, "sm_db_load (%s) says %d (%s), sm_db_from_bytes %d", through_pipe ? "pipe" : "file", rc,
               err.message, expected);
    FUZZ_CHECK(rc == SM_OK || (db == NULL && err.code == rc && strncmp(err.message, path, strlen(path)) == 0),
               "sm_db_load refused without naming the file: '%s'", err.message);
    if (rc == SM_OK) {
        size_t got = 0;
        const void *p = sm_db_bytes(db, &got);
        FUZZ_CHECK(got == size && memcmp(p, bytes, size) == 0 && ((uintptr_t)p & 63) == 0,
                   "sm_db_load gives other bytes, or unaligned");
        sm_db_free(db);
    }
}

static void load(const uint8_t *bytes, size_t size) {
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_db_from_bytes(bytes, size, &db, &err);
    load_path(bytes, size, rc, 0);
    load_path(bytes, size, rc, 1);
    if (rc != SM_OK) {
        FUZZ_CHECK(db == NULL && err.code == rc && err.message[0], "rejected (%d) without a message", rc);
        FUZZ_CHECK(rc == SM_ERR_FORMAT || rc == SM_ERR_VERSION || rc == SM_ERR_NOMEM, "rejected with status %d: %s",
                   rc, err.message);
        return;
    }
    size_t copy_size = 0;
    const void *copy = sm_db_bytes(db, &copy_size);
    FUZZ_CHECK(copy_size == size && memcmp(copy, bytes, size) == 0, "a loaded database is not its bytes");
    exercise(db);
    sm_db_free(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    load(data, size);
    if (size < sizeof(sm_db_header)) return 0;
    uint8_t *resealed = malloc(size);
    if (!resealed) return 0;
    memcpy(resealed, data, size);
    sm_db_seal(resealed, size);
    if (memcmp(resealed, data, size) != 0) load(resealed, size);
    free(resealed);
    return 0;
}
