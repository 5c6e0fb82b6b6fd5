/* The shard files of one job merged (seqmatch merge): their settings read
 * and compared, every shard there once, every frame checked by a first pass
 * without output before the second pass gives the output. And the printer:
 * what a merge (of shard files or MPI ranks) delivers, formatted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "base/internal.h"
#include "seqmatch_output.h"

typedef struct {
    const char *path;
    sm_shard_reader reader;
    int open;
    sm_dist_settings set;
    size_t header_len;       /* bytes of the settings at the start of the frames' bytes */
} shard_file;

struct sm_shard_set {
    shard_file *files;
    size_t count;
    shard_file **order;      /* by shard index */
    unsigned shards;
};

/* Opens a shard file and reads its settings (checked frames). */
static int read_shard_header(shard_file *f, sm_error *err) {
    sm_error e;
    memset(&e, 0, sizeof e);
    if (sm_shard_open(&f->reader, f->path, &e) != 0) return sm_set_error(err, SM_ERR_IO, "%s: %s", f->path, e.message);
    f->open = 1;
    uint8_t *buf = NULL;
    size_t len = 0;
    for (;;) {
        const uint8_t *data;
        size_t n;
        int rc = sm_shard_next(&f->reader, &data, &n, &e);
        if (rc <= 0) {
            free(buf);
            return sm_set_error(err, SM_ERR_FORMAT, "%s: %s", f->path,
                                rc < 0 ? e.message : "damaged shard file: it ends before its settings");
        }
        uint8_t *p = realloc(buf, len + n);
        if (!p) {
            free(buf);
            return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        }
        buf = p;
        memcpy(buf + len, data, n);
        len += n;
        long used = sm_dist_settings_read(buf, len, &f->set, &e);
        if (used > 0) {
            f->header_len = (size_t)used;
            break;
        }
        if (used < 0) {
            free(buf);
            return sm_set_error(err, SM_ERR_FORMAT, "%s: damaged shard file: %s", f->path, e.message);
        }
    }
    free(buf);
    /* the formats a shard can be written in */
    const sm_dist_settings *s = &f->set;
    if (s->command == SM_DIST_SEARCH &&
        ((s->format != SM_FORMAT_TSV && s->format != SM_FORMAT_BED && s->format != SM_FORMAT_JSONL &&
          s->format != SM_FORMAT_COUNT) ||
         s->count_format != (s->format == SM_FORMAT_COUNT) ||
         (s->texts && (s->format != SM_FORMAT_TSV && s->format != SM_FORMAT_JSONL))))
        return sm_set_error(err, SM_ERR_FORMAT, "%s: damaged shard file: an output format it cannot have", f->path);
    return SM_OK;
}

/* The settings two shards of one job share: all but the shard's index. */
static int same_job(const sm_dist_settings *a, const sm_dist_settings *b) {
    sm_dist_out x, y;
    if (sm_dist_out_init(&x, 1024, NULL, NULL) != SM_OK) return 0;
    if (sm_dist_out_init(&y, 1024, NULL, NULL) != SM_OK) {
        sm_dist_out_free(&x);
        return 0;
    }
    sm_dist_settings aa = *a, bb = *b;
    aa.shard = bb.shard = 0;
    sm_dist_settings_write(&x, &aa);
    sm_dist_settings_write(&y, &bb);
    int same = !x.failed && !y.failed && x.len == y.len && memcmp(x.buf, y.buf, x.len) == 0;
    sm_dist_out_free(&x);
    sm_dist_out_free(&y);
    return same;
}

/* One pass over the shards in order into merge: every frame checked (to
   the end, also once the merge needs no more), the stream after the
   settings fed. */
static int merge_pass(const sm_shard_set *s, sm_dist_merge *merge, sm_error *err) {
    sm_error e;
    memset(&e, 0, sizeof e);
    for (unsigned i = 0; i < s->shards; i++) {
        shard_file *f = s->order[i];
        if (sm_shard_rewind(&f->reader, &e) != 0) return sm_set_error(err, SM_ERR_IO, "%s: %s", f->path, e.message);
        size_t skip = f->header_len;
        int rc;
        const uint8_t *data;
        size_t n;
        while ((rc = sm_shard_next(&f->reader, &data, &n, &e)) > 0) {
            size_t used = skip < n ? skip : n;
            skip -= used;
            if (n > used && !sm_dist_merge_done(merge) && sm_dist_merge_feed(merge, data + used, n - used, &e) != 0)
                return sm_set_error(err, SM_ERR_FORMAT, "%s: damaged shard file: %s", f->path, e.message);
        }
        if (rc < 0) return sm_set_error(err, SM_ERR_FORMAT, "%s: %s", f->path, e.message);
        if (!sm_dist_merge_done(merge) && sm_dist_merge_share_end(merge, &e) != 0)
            return sm_set_error(err, SM_ERR_FORMAT, "%s: damaged shard file: %s", f->path, e.message);
    }
    return SM_OK;
}

int sm_shard_set_open(const char *const *paths, size_t count, sm_shard_set **out, sm_error *err) {
    *out = NULL;
    if (count == 0) return sm_set_error(err, SM_ERR_INVALID, "no shard files given");
    sm_shard_set *s = calloc(1, sizeof *s);
    if (!s || !(s->files = calloc(count, sizeof *s->files))) {
        free(s);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    s->count = count;
    int rc = SM_OK;
    for (size_t i = 0; i < count; i++) s->files[i].path = paths[i];
    for (size_t i = 0; i < count && rc == SM_OK; i++) rc = read_shard_header(&s->files[i], err);
    if (rc != SM_OK) goto fail;
    s->shards = s->files[0].set.shards;
    if (!(s->order = calloc(s->shards ? s->shards : 1, sizeof *s->order))) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        const sm_dist_settings *set = &s->files[i].set;
        if (!same_job(set, &s->files[0].set)) {
            rc = sm_set_error(err, SM_ERR_INVALID, "%s and %s are shards of different commands", s->files[0].path,
                              s->files[i].path);
            goto fail;
        }
        if (set->shard >= s->shards || s->order[set->shard]) {
            rc = sm_set_error(err, SM_ERR_INVALID, "%s: shard %u/%u given twice", s->files[i].path, set->shard,
                              s->shards);
            goto fail;
        }
        s->order[set->shard] = &s->files[i];
    }
    for (unsigned i = 0; i < s->shards; i++)
        if (!s->order[i]) {
            rc = sm_set_error(err, SM_ERR_INVALID, "shard %u/%u is missing (give all %u shard files)", i, s->shards,
                              s->shards);
            goto fail;
        }
    /* A first pass with no output checks every frame and every message of
       every shard: a damaged or disagreeing shard is refused before the
       caller opens its output. */
    sm_dist_sink none;
    memset(&none, 0, sizeof none);
    sm_dist_merge *dry = NULL;
    if (sm_dist_merge_new(&s->files[0].set, &none, &dry) != SM_OK) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        goto fail;
    }
    rc = merge_pass(s, dry, err);
    if (rc == SM_OK && sm_dist_merge_finish(dry, err) < 0) rc = err && err->code ? err->code : SM_ERR_FORMAT;
    sm_dist_merge_free(dry);
    if (rc != SM_OK) goto fail;
    *out = s;
    return SM_OK;
fail:
    sm_shard_set_free(s);
    return rc;
}

const sm_dist_settings *sm_shard_set_settings(const sm_shard_set *s) { return &s->files[0].set; }

int sm_shard_set_merge(sm_shard_set *s, const sm_dist_sink *sink, sm_error *err) {
    sm_dist_merge *merge = NULL;
    if (sm_dist_merge_new(&s->files[0].set, sink, &merge) != SM_OK) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return -1;
    }
    int found = merge_pass(s, merge, err) == SM_OK ? sm_dist_merge_finish(merge, err) : -1;
    sm_dist_merge_free(merge);
    return found;
}

void sm_shard_set_free(sm_shard_set *s) {
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) {
        if (s->files[i].open) sm_shard_close(&s->files[i].reader);
        sm_dist_settings_free(&s->files[i].set);
    }
    free(s->files);
    free(s->order);
    free(s);
}

struct sm_dist_printer {
    sm_formatter *formatter; /* NULL: nothing per hit */
    sm_writer *w;
    const sm_dist_settings *set;
    int hits; /* hits are printed */
};

static int printer_begin_file(void *ctx, size_t target) {
    sm_dist_printer *p = ctx;
    if (!p->formatter || !p->set->show_file) return 0;
    return sm_formatter_set_file(p->formatter, p->set->target_names[target]);
}

static int printer_record(void *ctx, uint64_t record, const char *name) {
    sm_dist_printer *p = ctx;
    return p->hits ? sm_formatter_add_record(p->formatter, record, name) : 0;
}

static void printer_record_done(void *ctx, uint64_t record) {
    sm_dist_printer *p = ctx;
    if (p->hits) sm_formatter_record_done(p->formatter, record);
}

static int printer_hit(void *ctx, const sm_hit *hit) {
    sm_dist_printer *p = ctx;
    if (p->hits) sm_formatter_hit(p->formatter, hit);
    return sm_writer_error(p->w) ? 1 : 0;
}

static void printer_counts(void *ctx, const uint64_t *counts, uint64_t total) {
    sm_dist_printer *p = ctx;
    if (p->formatter) sm_formatter_counts(p->formatter, counts, total);
}

static int printer_dfa(void *ctx, const char *label, int accepted, uint32_t state) {
    sm_dist_printer *p = ctx;
    char line[64];
    if (label) {
        sm_writer_write(p->w, label, strlen(label));
        sm_writer_write(p->w, "\t", 1);
    }
    int n = snprintf(line, sizeof line, "%s\t%u\n", accepted ? "accept" : "reject", state);
    sm_writer_write(p->w, line, (size_t)n);
    return sm_writer_error(p->w) ? 1 : 0;
}

sm_dist_printer *sm_dist_printer_new(const sm_dist_settings *set, sm_writer *w, sm_dist_sink *sink, sm_error *err) {
    sm_dist_printer *p = calloc(1, sizeof *p);
    if (!p) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    p->w = w;
    p->set = set;
    if (set->command == SM_DIST_SEARCH && !set->quiet) {
        p->formatter = sm_formatter_new_named((sm_output_format)set->format, set->header, set->show_file,
                                              (const char *const *)set->pattern_names, set->pattern_count, set->dna,
                                              w, err);
        if (!p->formatter) {
            free(p);
            return NULL;
        }
        sm_formatter_begin(p->formatter);
        p->hits = !set->count_only && !set->count_format;
    }
    memset(sink, 0, sizeof *sink);
    sink->ctx = p;
    sink->begin_file = printer_begin_file;
    sink->record = printer_record;
    sink->record_done = printer_record_done;
    sink->hit = printer_hit;
    sink->counts = printer_counts;
    sink->dfa_result = printer_dfa;
    return p;
}

int sm_dist_printer_end(sm_dist_printer *p, sm_error *err) {
    return p->formatter ? sm_formatter_end(p->formatter, err) : SM_OK;
}

void sm_dist_printer_free(sm_dist_printer *p) {
    if (!p) return;
    sm_formatter_free(p->formatter);
    free(p);
}
