/* Fuzz target: shard files as `seqmatch merge` reads them (src/dist/shard.c,
 * then the merge of src/dist/merge.c).
 *
 * Each input is tried twice: as it is (damaged: a change anywhere almost
 * always breaks a frame's checksum, and the file must be refused at that
 * frame), and with every frame's length and checksum made consistent again
 * (adversarial: the bytes reach the settings and the merge, whose field by
 * field checks must refuse them or merge them without reading outside
 * them). Whatever the merge hands the output then is in bounds: a hit of a
 * pattern the settings name, its end not before its start, its text (tsv
 * and jsonl shards) exactly end - start readable bytes; names and labels
 * are strings. Seeded with shard files of every format (fuzz/corpus/shard). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dist/dist.h"
#include "fuzz_support.h"

typedef struct {
    const sm_dist_settings *set;
    uint64_t sum;
} sink_check;

static int on_hit(void *ctx, const sm_hit *h) {
    sink_check *c = ctx;
    FUZZ_CHECK(h->pattern < c->set->pattern_count && h->end >= h->start && (h->strand == '+' || h->strand == '-'),
               "hit of pattern %u [%llu, %llu)", h->pattern, (unsigned long long)h->start,
               (unsigned long long)h->end);
    if (c->set->texts) {
        FUZZ_CHECK(h->text != NULL, "a hit without its text");
        /* every byte of the text is read: ASan sees one outside it */
        for (uint64_t i = 0; i < h->end - h->start; i++) c->sum += (uint8_t)h->text[i];
    }
    return 0;
}

static int on_record(void *ctx, uint64_t record, const char *name) {
    sink_check *c = ctx;
    (void)record;
    c->sum += strlen(name);
    return 0;
}

static int on_begin_file(void *ctx, size_t target) {
    sink_check *c = ctx;
    FUZZ_CHECK(target < c->set->target_count, "file %zu of %zu", target, c->set->target_count);
    c->sum += strlen(c->set->target_names[target]);
    return 0;
}

static void on_counts(void *ctx, const uint64_t *counts, uint64_t total) {
    sink_check *c = ctx;
    for (uint32_t p = 0; p < c->set->pattern_count; p++) c->sum += counts[p];
    c->sum += total;
}

static int on_dfa(void *ctx, const char *label, int accepted, uint32_t state) {
    sink_check *c = ctx;
    if (label) c->sum += strlen(label);
    c->sum += (uint64_t)accepted + state;
    return 0;
}

/* The shard at path, merged as `seqmatch merge` merges it (as every share
   of its job: the merge takes shares in order). */
static void merge_shard(const char *path) {
    sm_shard_reader r;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (sm_shard_open(&r, path, &err) != 0) {
        FUZZ_CHECK(err.message[0], "a refusal without a message");
        sm_shard_close(&r);
        return;
    }
    /* the settings, from as many frames as they take */
    uint8_t *head = NULL;
    size_t head_len = 0;
    sm_dist_settings set;
    memset(&set, 0, sizeof set);
    long used = 0;
    const uint8_t *data;
    size_t n;
    int rc;
    while ((rc = sm_shard_next(&r, &data, &n, &err)) > 0) {
        uint8_t *p = realloc(head, head_len + n);
        if (!p) break;
        head = p;
        memcpy(head + head_len, data, n);
        head_len += n;
        used = sm_dist_settings_read(head, head_len, &set, &err);
        if (used != 0) break;
    }
    if (used > 0) {
        sink_check c = {&set, 0};
        sm_dist_sink sink;
        memset(&sink, 0, sizeof sink);
        sink.ctx = &c;
        sink.begin_file = on_begin_file;
        sink.record = on_record;
        sink.hit = on_hit;
        sink.counts = on_counts;
        sink.dfa_result = on_dfa;
        sm_dist_merge *m = NULL;
        if (sm_dist_merge_new(&set, &sink, &m) == SM_OK) {
            int failed = 0;
            /* the stream: what follows the settings in the frames read so
               far, then every later frame */
            if ((size_t)used < head_len && sm_dist_merge_feed(m, head + used, head_len - (size_t)used, &err) != 0)
                failed = 1;
            while (!failed && (rc = sm_shard_next(&r, &data, &n, &err)) > 0)
                if (!sm_dist_merge_done(m) && sm_dist_merge_feed(m, data, n, &err) != 0) failed = 1;
            if (!failed && rc == 0 && !sm_dist_merge_done(m) && sm_dist_merge_share_end(m, &err) != 0) failed = 1;
            if (!failed && rc == 0) sm_dist_merge_finish(m, &err);
            if (failed) FUZZ_CHECK(err.message[0], "a merge failure without a message");
            sm_dist_merge_free(m);
        }
        sm_dist_settings_free(&set);
    }
    free(head);
    sm_shard_close(&r);
}

static uint32_t get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_file f;
    if (fuzz_file_make(&f, data, size) == 0) {
        merge_shard(f.path);
        fuzz_file_remove(&f);
    }
    /* The same bytes in frames that check out: the magic, each frame's
       length cut to what is left, its checksum chained as a writer would. */
    if (size < 8) return 0;
    uint8_t *copy = malloc(size);
    if (!copy) return 0;
    memcpy(copy, data, size);
    memcpy(copy, SM_SHARD_FILE_MAGIC, 8);
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), copy, 8);
    size_t at = 8;
    while (size - at >= SM_SHARD_FRAME_HEAD) {
        uint32_t n = get_le32(copy + at);
        if (n > size - at - SM_SHARD_FRAME_HEAD) {
            n = (uint32_t)(size - at - SM_SHARD_FRAME_HEAD);
            put_le32(copy + at, n);
        }
        crc = (uint32_t)crc32(crc, copy + at, 4);
        crc = (uint32_t)crc32(crc, copy + at + SM_SHARD_FRAME_HEAD, n);
        put_le32(copy + at + 4, crc);
        at += SM_SHARD_FRAME_HEAD + n;
        if (n == 0) break;
    }
    if (fuzz_file_make(&f, copy, at) == 0) {
        merge_shard(f.path);
        fuzz_file_remove(&f);
    }
    free(copy);
    return 0;
}
