/* Shard files and the merge's checks (src/dist/shard.c, merge.c): a file of
 * frames written as a shard writes them reads back; every change of one
 * byte, every cut and every byte appended is refused; and the merge refuses
 * a message whose fields disagree even when the checksums agree: a hit whose
 * length is not its text's (a shard whose first hit's length went from 7 to
 * 72 printed 65 bytes of heap), ends out of order, a pattern past the
 * settings', a flag past 1. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/wire.h"
#include "testutil.h"

/* ------------------------------------------------------------- frames */

static size_t write_shard(const char *path, const uint8_t *const *frames, const size_t *lens, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    sm_shard_writer w;
    uint8_t magic[8], head[SM_SHARD_FRAME_HEAD];
    sm_shard_writer_init(&w, magic);
    fwrite(magic, 1, 8, f);
    for (size_t i = 0; i <= n; i++) {
        size_t len = i < n ? lens[i] : 0;
        sm_shard_frame_head(&w, i < n ? frames[i] : NULL, len, head);
        fwrite(head, 1, sizeof head, f);
        if (len) fwrite(frames[i], 1, len, f);
    }
    fclose(f);
    return (size_t)w.written;
}

/* 1: every frame read back, in order, then the end; 0: refused (err set). */
static int read_shard(const char *path, size_t frames) {
    sm_shard_reader r;
    sm_error err;
    memset(&err, 0, sizeof err);
    int ok = sm_shard_open(&r, path, &err) == 0;
    size_t got = 0;
    const uint8_t *data;
    size_t n;
    int rc = 0;
    while (ok && (rc = sm_shard_next(&r, &data, &n, &err)) > 0) got++;
    if (ok && rc < 0) ok = 0;
    if (ok && got != frames) ok = 0;
    if (!ok) tu_check(err.message[0] != 0, "a refusal without a message");
    sm_shard_close(&r);
    return ok;
}

static void test_frames(void) {
    char path[] = "/tmp/test_shard_XXXXXX";
    int fd = mkstemp(path);
    if (!tu_check(fd >= 0, "temporary file")) return;
    close(fd);
    const uint8_t a[] = "the settings", b[] = "a stream of messages, in a second frame";
    const uint8_t *frames[] = {a, b};
    size_t lens[] = {sizeof a - 1, sizeof b - 1};
    size_t size = write_shard(path, frames, lens, 2);
    tu_check(read_shard(path, 2), "a shard file reads back");
    FILE *f = fopen(path, "rb");
    uint8_t *bytes = malloc(size + 1);
    if (!f || !bytes || fread(bytes, 1, size, f) != size) abort();
    fclose(f);
    /* every byte changed, one at a time (three ways): refused */
    unsigned accepted = 0;
    for (size_t at = 0; at < size; at++)
        for (unsigned flip = 1; flip < 256; flip += 127) {
            uint8_t *copy = malloc(size);
            memcpy(copy, bytes, size);
            copy[at] ^= (uint8_t)flip;
            f = fopen(path, "wb");
            fwrite(copy, 1, size, f);
            fclose(f);
            free(copy);
            accepted += read_shard(path, 2);
        }
    tu_check(accepted == 0, "%u changed files of %zu bytes read back", accepted, size);
    /* every cut, and one byte more */
    accepted = 0;
    for (size_t cut = 0; cut < size; cut++) {
        f = fopen(path, "wb");
        fwrite(bytes, 1, cut, f);
        fclose(f);
        accepted += read_shard(path, 2);
    }
    tu_check(accepted == 0, "%u cut files read back", accepted);
    bytes[size] = 'x';
    f = fopen(path, "wb");
    fwrite(bytes, 1, size + 1, f);
    fclose(f);
    tu_check(!read_shard(path, 2), "a shard with a byte after its end reads back");
    free(bytes);
    remove(path);
}

/* -------------------------------------------------------------- merge */

typedef struct {
    size_t hits;
    uint64_t text_len;
} merged;

static int on_hit(void *ctx, const sm_hit *h) {
    merged *m = ctx;
    m->hits++;
    m->text_len += h->end - h->start;
    for (uint64_t i = 0; i < h->end - h->start; i++) tu_check(h->text[i] != 0, "hit text byte");
    return 0;
}

/* A stream of one record with one hit [start, start + len) of pattern
   `pattern`, its text `text`; Returns the merge's verdict (0 merged). */
static int merge_one_hit(uint64_t start, uint64_t len, uint64_t pattern, uint64_t reverse, const char *text,
                         merged *out, char *message) {
    sm_dist_settings set;
    memset(&set, 0, sizeof set);
    set.command = SM_DIST_SEARCH;
    set.shards = 1;
    set.texts = 1;
    set.dna = 1;
    set.max_hits = UINT64_MAX;
    set.pattern_count = 1;
    char *pname = "p", *tname = "t.fa";
    set.pattern_names = &pname;
    set.target_count = 1;
    set.target_names = &tname;
    sm_dist_out o, msg;
    sm_dist_out_init(&o, 256, NULL, NULL);
    sm_dist_out_init(&msg, 256, NULL, NULL);
    wire_num(&msg, 0), wire_num(&msg, 1), wire_num(&msg, 0), wire_num(&msg, 0);
    wire_send(&o, MSG_UNIT, &msg);
    wire_num(&msg, 0);
    wire_bytes(&msg, "r1", 2);
    wire_send(&o, MSG_RECORD, &msg);
    wire_num(&msg, start), wire_num(&msg, len), wire_num(&msg, pattern), wire_num(&msg, 0), wire_num(&msg, reverse);
    wire_bytes(&msg, text, strlen(text));
    wire_send(&o, MSG_HIT, &msg);
    wire_num(&msg, 100), wire_num(&msg, 0);
    wire_send(&o, MSG_PART_END, &msg);
    for (int i = 0; i < 7; i++) wire_num(&msg, 0);
    wire_send(&o, MSG_UNIT_END, &msg);
    wire_send(&o, MSG_END, &msg);
    memset(out, 0, sizeof *out);
    sm_dist_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.ctx = out;
    sink.hit = on_hit;
    sm_dist_merge *m = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_dist_merge_new(&set, &sink, &m);
    if (rc == SM_OK && sm_dist_merge_feed(m, o.buf, o.len, &err) != 0) rc = -1;
    if (rc == SM_OK && sm_dist_merge_share_end(m, &err) != 0) rc = -1;
    if (rc == SM_OK && sm_dist_merge_finish(m, &err) < 0) rc = -1;
    snprintf(message, 200, "%.199s", err.message);
    sm_dist_merge_free(m);
    sm_dist_out_free(&o);
    sm_dist_out_free(&msg);
    return rc;
}

static void test_merge_fields(void) {
    merged got;
    char message[200];
    tu_check(merge_one_hit(10, 7, 0, 0, "GAATTCA", &got, message) == 0 && got.hits == 1 && got.text_len == 7,
             "a good hit merges: %s", message);
    /* the report's case: the length changed, the 7 bytes of text stay */
    tu_check(merge_one_hit(10, 72, 0, 0, "GAATTCA", &got, message) != 0 && got.hits == 0 &&
                 strstr(message, "a hit"),
             "a hit longer than its text is merged (%s)", message);
    tu_check(merge_one_hit(10, 3, 0, 0, "GAATTCA", &got, message) != 0 && got.hits == 0,
             "a hit shorter than its text is merged");
    tu_check(merge_one_hit(10, 7, 1, 0, "GAATTCA", &got, message) != 0, "a hit of a pattern past the settings");
    tu_check(merge_one_hit(10, 7, 0, 2, "GAATTCA", &got, message) != 0, "a strand flag of 2");
    tu_check(merge_one_hit(UINT64_MAX - 3, 7, 0, 0, "GAATTCA", &got, message) != 0, "a hit past 2^64");
}

int main(void) {
    test_frames();
    test_merge_fields();
    return tu_summary("test_shard");
}
