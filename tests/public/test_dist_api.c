/* The public pattern files, gzip members and distributed search
 * (seqmatch_reader.h, seqmatch_gzip.h, seqmatch_dist.h), through the
 * installed headers only, linked against libseqmatch.so and libseqmatch.a:
 * a pattern file read back; a file written as gzip members read back by the
 * reader; one search run as 1, 2, 3 and 7 shares whose result streams are
 * merged gives the hits of one runner fed by sm_runner_scan_reader, exact
 * and with mismatches and edits; the same shares written to shard files
 * through sm_dist_route and read back by sm_shard_set; the same run as
 * shares on threads of one process (sm_dist_run_local), also over a short
 * file cut by as many shares as it has bytes; and each share read by
 * several readers (sm_dist_share_run_readers), its parts' streams one
 * after another in its stream, merged and written to shard files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seqmatch_dist.h>
#include <seqmatch_gzip.h>
#include <seqmatch_output.h>

#include "check.h"


static char dir[] = "/tmp/sm_dist_api_XXXXXX";

/* Hits as text lines "name start end pattern strand errors\n". */
typedef struct {
    char *text;
    size_t len, cap;
    char names[64][32];
} hit_log;

static void log_hit(hit_log *l, const sm_hit *h) {
    char line[160];
    int n = snprintf(line, sizeof line, "%s %llu %llu %u %c %u\n", l->names[h->record % 64],
                     (unsigned long long)h->start, (unsigned long long)h->end, h->pattern, h->strand, h->errors);
    if (l->len + (size_t)n + 1 > l->cap) {
        l->cap = (l->cap + (size_t)n + 1) * 2;
        l->text = realloc(l->text, l->cap);
    }
    memcpy(l->text + l->len, line, (size_t)n + 1);
    l->len += (size_t)n;
}

static int one_hit(const sm_hit *hit, void *ctx) {
    log_hit(ctx, hit);
    return 0;
}

static int one_record(void *ctx, uint64_t record, const char *name) {
    hit_log *l = ctx;
    snprintf(l->names[record % 64], sizeof l->names[0], "%s", name);
    return 0;
}

static int sink_record(void *ctx, uint64_t record, const char *name) { return one_record(ctx, record, name); }
static int sink_hit(void *ctx, const sm_hit *hit) {
    log_hit(ctx, hit);
    return 0;
}

/* A result stream gathered in memory. */
typedef struct {
    uint8_t *data;
    size_t len;
} bytes;

static int gather(void *ctx, const uint8_t *data, size_t len) {
    bytes *b = ctx;
    b->data = realloc(b->data, b->len + len);
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static void search_one(const sm_db *db, const char *path, hit_log *log) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = 2;
    ro.on_hit = one_hit;
    ro.ctx = log;
    sm_runner *runner;
    sm_reader *reader;
    sm_error err;
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
    CHECK(sm_reader_open(path, SM_INPUT_AUTO, &reader, &err) == SM_OK, "open: %s", err.message);
    sm_scan_reader_options so = {.ctx = log, .on_record = one_record};
    CHECK(sm_runner_scan_reader(runner, reader, &so, &err) == SM_OK, "scan: %s", err.message);
    CHECK(sm_runner_flush(runner) == SM_OK, "flush");
    sm_reader_close(reader);
    sm_runner_free(runner);
}

/* The settings of a search of one file named names[0] in shares shares;
   returns the pattern names they point to, for the caller to free. */
static char **search_settings(sm_dist_settings *set, const sm_pattern_list *list, char **names, unsigned shares) {
    memset(set, 0, sizeof *set);
    set->command = SM_DIST_SEARCH;
    set->shards = shares;
    set->dna = 1;
    set->max_hits = UINT64_MAX;
    set->pattern_count = (uint32_t)list->count;
    char **pattern_names = calloc(list->count, sizeof *pattern_names);
    for (size_t i = 0; i < list->count; i++) pattern_names[i] = (char *)list->items[i].name;
    set->pattern_names = pattern_names;
    set->target_count = 1;
    set->target_names = names;
    return pattern_names;
}

/* A merge's records and hits into log. */
static void log_sink(sm_dist_sink *sink, hit_log *log) {
    memset(sink, 0, sizeof *sink);
    sink->ctx = log;
    sink->record = sink_record;
    sink->hit = sink_hit;
}

static void search_shares(const sm_db *db, const sm_pattern_list *list, char *path, unsigned shares, hit_log *log) {
    char *targets[1] = {path};
    char *names[1] = {path};
    sm_dist_settings set;
    char **pattern_names = search_settings(&set, list, names, shares);
    bytes *streams = calloc(shares, sizeof *streams);
    sm_error err;
    for (unsigned s = 0; s < shares; s++) {
        sm_dist_plan plan;
        CHECK(sm_dist_plan_make(targets, 1, shares, s, &plan, &err) == 0, "plan: %s", err.message);
        sm_dist_out out;
        CHECK(sm_dist_out_init(&out, 4096, gather, &streams[s]) == 0, "out");
        sm_dist_share *share;
        CHECK(sm_dist_share_new(&set, &out, 1, &share) == 0, "share");
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = 2;
        sm_dist_share_runner_options(share, &ro);
        sm_runner *runner;
        CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
        sm_dist_share_set_runner(share, runner);
        sm_dist_settings_fill(&set, runner);
        CHECK(sm_dist_share_run(share, targets, &plan, SM_INPUT_AUTO, &err) == 0, "share %u: %s", s, err.message);
        sm_dist_share_free(share);
        sm_runner_free(runner);
        sm_dist_out_free(&out);
        sm_dist_plan_free(&plan);
    }
    sm_dist_sink sink;
    log_sink(&sink, log);
    sm_dist_merge *merge;
    CHECK(sm_dist_merge_new(&set, &sink, &merge) == 0, "merge");
    for (unsigned s = 0; s < shares; s++) {
        CHECK(sm_dist_merge_feed(merge, streams[s].data, streams[s].len, &err) == 0, "feed: %s", err.message);
        CHECK(sm_dist_merge_share_end(merge, &err) == 0, "share end: %s", err.message);
        free(streams[s].data);
    }
    CHECK(sm_dist_merge_finish(merge, &err) >= 0, "finish: %s", err.message);
    sm_dist_merge_free(merge);
    free(streams);
    free(pattern_names);
}

/* The same shares, each read by `readers` readers of this process
   (sm_dist_share_run_readers): the streams gathered, then merged, or with
   files written as shard files through sm_dist_route and merged back. */
static void reader_shares(const sm_db *db, const sm_pattern_list *list, char *path, unsigned shares,
                          unsigned readers, int files, hit_log *log) {
    char *targets[1] = {path};
    char *names[1] = {path};
    char file_names[8][300];
    const char *paths[8];
    sm_dist_settings set;
    char **pattern_names = search_settings(&set, list, names, shares);
    bytes *streams = calloc(shares, sizeof *streams);
    sm_error err;
    for (unsigned s = 0; s < shares; s++) {
        set.shard = s;
        sm_dist_plan plan;
        CHECK(sm_dist_plan_make(targets, 1, shares, s, &plan, &err) == 0, "plan: %s", err.message);
        sm_dist_out out;
        sm_dist_route *route = NULL;
        FILE *f = NULL;
        sm_writer *w = NULL;
        sm_dist_share *share;
        sm_dist_settings_fill_db(&set, db);
        if (files) {
            snprintf(file_names[s], sizeof file_names[s], "%s/rshard%u", dir, s);
            paths[s] = file_names[s];
            f = fopen(file_names[s], "wb");
            w = sm_writer_new(f);
            CHECK(sm_dist_route_new(NULL, w, 4096, &route) == SM_OK, "route");
            CHECK(sm_dist_share_new(&set, sm_dist_route_out(route), 1, &share) == 0, "share");
            CHECK(sm_dist_route_start(route, &set, share, &err) == SM_OK, "route start: %s", err.message);
        } else {
            CHECK(sm_dist_out_init(&out, 4096, gather, &streams[s]) == 0, "out");
            CHECK(sm_dist_share_new(&set, &out, 1, &share) == 0, "share");
        }
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = readers;
        CHECK(sm_dist_share_run_readers(share, db, &ro, targets, &plan, SM_INPUT_AUTO, readers, &err) == 0,
              "share %u, %u readers: %s", s, readers, err.message);
        if (files) {
            CHECK(sm_dist_route_end(route, &err) == 1 && !sm_dist_route_failure(route), "route end: %s", err.message);
            sm_dist_share_free(share);
            sm_dist_route_free(route);
            CHECK(sm_writer_flush(w) == 0, "flush");
            sm_writer_free(w);
            fclose(f);
        } else {
            sm_dist_share_free(share);
            sm_dist_out_free(&out);
        }
        sm_dist_plan_free(&plan);
    }
    sm_dist_sink sink;
    log_sink(&sink, log);
    if (files) {
        sm_shard_set *shard_set = NULL;
        CHECK(sm_shard_set_open(paths, shares, &shard_set, &err) == SM_OK, "shard set: %s", err.message);
        if (shard_set) {
            CHECK(sm_shard_set_merge(shard_set, &sink, &err) >= 0, "merge: %s", err.message);
            sm_shard_set_free(shard_set);
        }
        for (unsigned s = 0; s < shares; s++) unlink(file_names[s]);
    } else {
        sm_dist_merge *merge;
        CHECK(sm_dist_merge_new(&set, &sink, &merge) == 0, "merge");
        for (unsigned s = 0; s < shares; s++) {
            CHECK(sm_dist_merge_feed(merge, streams[s].data, streams[s].len, &err) == 0, "feed: %s", err.message);
            CHECK(sm_dist_merge_share_end(merge, &err) == 0, "share end: %s", err.message);
        }
        CHECK(sm_dist_merge_finish(merge, &err) >= 0, "finish: %s", err.message);
        sm_dist_merge_free(merge);
    }
    for (unsigned s = 0; s < shares; s++) free(streams[s].data);
    free(streams);
    free(pattern_names);
}

/* The same as readers of this process (a few shares each), merged as they run. */
static void local_shares(const sm_db *db, const sm_pattern_list *list, char *path, unsigned shares, hit_log *log) {
    char *targets[1] = {path};
    char *names[1] = {path};
    sm_dist_settings set;
    char **pattern_names = search_settings(&set, list, names, shares);
    sm_dist_sink sink;
    log_sink(&sink, log);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    sm_error err;
    CHECK(sm_dist_run_local(&set, db, &ro, targets, SM_INPUT_AUTO, shares, NULL, &sink, &err) >= 0,
          "%u local shares: %s", shares, err.message);
    free(pattern_names);
}

/* The same shares written to shard files through sm_dist_route (settings
   from sm_dist_settings_names) and merged back by sm_shard_set. */
static void route_shares(const sm_db *db, char *path, unsigned shares, hit_log *log) {
    char *targets[1] = {path};
    char files[8][300];
    const char *paths[8];
    sm_error err;
    for (unsigned s = 0; s < shares; s++) {
        snprintf(files[s], sizeof files[s], "%s/shard%u", dir, s);
        paths[s] = files[s];
        sm_dist_settings set;
        memset(&set, 0, sizeof set);
        set.command = SM_DIST_SEARCH;
        set.shards = shares;
        set.shard = s;
        set.dna = 1;
        set.max_hits = UINT64_MAX;
        CHECK(sm_dist_settings_names(&set, db, targets, 1, "stdin") == SM_OK && set.target_count == 1, "names");
        sm_dist_plan plan;
        CHECK(sm_dist_plan_make(targets, 1, shares, s, &plan, &err) == 0, "plan: %s", err.message);
        FILE *f = fopen(files[s], "wb");
        sm_writer *w = sm_writer_new(f);
        sm_dist_route *route = NULL;
        sm_dist_share *share = NULL;
        CHECK(sm_dist_route_new(NULL, w, 4096, &route) == SM_OK, "route");
        CHECK(sm_dist_share_new(&set, sm_dist_route_out(route), 1, &share) == 0, "share");
        sm_runner_options ro;
        sm_runner_options_init(&ro);
        ro.threads = 2;
        sm_dist_share_runner_options(share, &ro);
        sm_runner *runner;
        CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
        sm_dist_share_set_runner(share, runner);
        sm_dist_settings_fill(&set, runner);
        CHECK(sm_dist_route_start(route, &set, share, &err) == SM_OK, "route start: %s", err.message);
        CHECK(sm_dist_share_run(share, targets, &plan, SM_INPUT_AUTO, &err) == 0, "share %u: %s", s, err.message);
        CHECK(sm_dist_route_end(route, &err) == 1 && !sm_dist_route_failure(route), "route end: %s", err.message);
        sm_dist_share_free(share);
        sm_dist_route_free(route);
        sm_runner_free(runner);
        sm_dist_plan_free(&plan);
        sm_dist_settings_free(&set);
        CHECK(sm_writer_flush(w) == 0, "flush");
        sm_writer_free(w);
        fclose(f);
    }
    sm_shard_set *set = NULL;
    CHECK(sm_shard_set_open(paths, shares, &set, &err) == SM_OK, "shard set: %s", err.message);
    if (set) {
        sm_dist_sink sink;
        memset(&sink, 0, sizeof sink);
        sink.ctx = log;
        sink.record = sink_record;
        sink.hit = sink_hit;
        CHECK(sm_shard_set_merge(set, &sink, &err) >= 0, "merge: %s", err.message);
        sm_shard_set_free(set);
    }
    for (unsigned s = 0; s < shares; s++) unlink(files[s]);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    char fasta[256], patterns[256], gz[256], head[256];
    snprintf(fasta, sizeof fasta, "%s/t.fa", dir);
    snprintf(head, sizeof head, "%s/head.fa", dir);
    snprintf(patterns, sizeof patterns, "%s/p.txt", dir);
    snprintf(gz, sizeof gz, "%s/t.fa.gz", dir);

    /* records of 50 to 20000 bases, lines of 60 */
    unsigned seed = 29;
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    for (int r = 0; r < 40; r++) {
        len += (size_t)sprintf(text + len, ">rec%d some words\n", r);
        int n = 50 + (int)((seed = seed * 1103515245u + 12345u) >> 8) % (r % 5 == 0 ? 20000 : 600);
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            text[len++] = "ACGT"[(seed >> 16) & 3];
            if (i % 60 == 59 || i == n - 1) text[len++] = '\n';
        }
    }
    FILE *f = fopen(fasta, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    /* the first record, to the end of a line near 250 bytes */
    size_t head_len = 250;
    while (text[head_len - 1] != '\n') head_len++;
    f = fopen(head, "wb");
    fwrite(text, 1, head_len, f);
    fclose(f);

    /* patterns: 12-mers taken from the text, one per line (\r\n ends) */
    f = fopen(patterns, "wb");
    size_t written = 0;
    for (int i = 0, at = 100; i < 30; i++, at += 3001) {
        while (at + 12 < (int)len && memchr(text + at, '>', 40)) at += 40;
        char k[13];
        int n = 0;
        for (int j = at; n < 12 && j < (int)len; j++)
            if (text[j] == 'A' || text[j] == 'C' || text[j] == 'G' || text[j] == 'T') k[n++] = text[j];
            else if (text[j] == '>') n = 0;
        k[n] = '\0';
        if (n < 12) continue;
        fprintf(f, "%s\r\n", k);
        written++;
    }
    fclose(f);
    sm_pattern_list list;
    memset(&list, 0, sizeof list);
    sm_error err;
    CHECK(sm_pattern_list_read_alphabet(&list, patterns, SM_ALPHABET_DNA, &err) == SM_OK, "patterns: %s", err.message);
    CHECK(written > 20 && list.count == written && list.items[0].len == 12 && list.line[1] == 2 && list.nfiles == 1,
          "pattern list: %zu patterns of %zu", list.count, written);
    CHECK(sm_pattern_list_add(&list, "extra", "ACGTAC", 6) == SM_OK && list.count == written + 1 &&
              list.file[written] == NULL,
          "added pattern");

    /* gzip members of 1000 bytes each read back as one file */
    sm_deflater *d = sm_deflater_new();
    CHECK(d != NULL, "deflater");
    f = fopen(gz, "wb");
    uint8_t *member = malloc(sm_gzip_bound(1000));
    for (size_t at = 0; at < len; at += 1000) {
        size_t n = len - at < 1000 ? len - at : 1000;
        size_t got = sm_gzip_member(d, text + at, n, member, sm_gzip_bound(1000));
        CHECK(got > 0, "gzip member");
        fwrite(member, 1, got, f);
    }
    fclose(f);
    free(member);
    sm_deflater_free(d);
    CHECK(strcmp(sm_deflater_library(), "zlib") == 0 || strcmp(sm_deflater_library(), "isa-l") == 0, "library");

    for (int mode = 0; mode < 3; mode++) {
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.match = mode == 0 ? SM_MATCH_EXACT : mode == 1 ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
        co.max_errors = (uint32_t)mode;
        sm_db *db;
        CHECK(sm_compile(list.items, list.count, &co, &db, &err) == SM_OK, "compile: %s", err.message);
        hit_log one, one_gz;
        memset(&one, 0, sizeof one);
        memset(&one_gz, 0, sizeof one_gz);
        search_one(db, fasta, &one);
        search_one(db, gz, &one_gz);
        CHECK(one.len > 0 && one.len == one_gz.len && memcmp(one.text, one_gz.text, one.len) == 0,
              "mode %d: the gzip members read back differ", mode);
        unsigned counts[] = {1, 2, 3, 7};
        for (int c = 0; c < 4; c++) {
            hit_log merged;
            memset(&merged, 0, sizeof merged);
            search_shares(db, &list, fasta, counts[c], &merged);
            CHECK(merged.len == one.len && memcmp(merged.text, one.text, one.len) == 0,
                  "mode %d, %u shares: %zu bytes of hits merged, %zu from one runner", mode, counts[c], merged.len,
                  one.len);
            free(merged.text);
            memset(&merged, 0, sizeof merged);
            route_shares(db, fasta, counts[c], &merged);
            CHECK(merged.len == one.len && memcmp(merged.text, one.text, one.len) == 0,
                  "mode %d, %u shard files: %zu bytes of hits merged, %zu from one runner", mode, counts[c],
                  merged.len, one.len);
            free(merged.text);
            memset(&merged, 0, sizeof merged);
            local_shares(db, &list, fasta, counts[c], &merged);
            CHECK(merged.len == one.len && memcmp(merged.text, one.text, one.len) == 0,
                  "mode %d, %u local shares: %zu bytes of hits merged, %zu from one runner", mode, counts[c],
                  merged.len, one.len);
            free(merged.text);
            for (unsigned readers = 2; readers <= 3 && counts[c] <= 3; readers++)
                for (int files = 0; files < 2; files++) {
                    memset(&merged, 0, sizeof merged);
                    reader_shares(db, &list, fasta, counts[c], readers, files, &merged);
                    CHECK(merged.len == one.len && memcmp(merged.text, one.text, one.len) == 0,
                          "mode %d, %u shares of %u readers%s: %zu bytes of hits merged, %zu from one runner", mode,
                          counts[c], readers, files ? " as shard files" : "", merged.len, one.len);
                    free(merged.text);
                }
        }
        /* a short file cut at every byte: at least as many shares as bytes */
        hit_log short_one;
        memset(&short_one, 0, sizeof short_one);
        search_one(db, head, &short_one);
        CHECK(short_one.len > 0, "mode %d: no hit in the short file", mode);
        /* the sanitizer builds (SM_TEST_SCALE below 100) try fewer counts */
        const char *scale = getenv("SM_TEST_SCALE");
        unsigned step = scale && atoi(scale) < 100 ? 9 : 1;
        for (unsigned n = 2; n <= head_len / 4; n += n < 12 ? step : 17) {
            hit_log merged;
            memset(&merged, 0, sizeof merged);
            local_shares(db, &list, head, n, &merged);
            CHECK(merged.len == short_one.len && memcmp(merged.text, short_one.text, short_one.len) == 0,
                  "mode %d, short file, %u local shares: %zu bytes of hits merged, %zu from one runner", mode, n,
                  merged.len, short_one.len);
            free(merged.text);
        }
        /* two shares, each cut by its readers at every byte */
        for (unsigned readers = 2; readers <= head_len / 8; readers += readers < 12 ? step : 17) {
            hit_log merged;
            memset(&merged, 0, sizeof merged);
            reader_shares(db, &list, head, 2, readers, 0, &merged);
            CHECK(merged.len == short_one.len && memcmp(merged.text, short_one.text, short_one.len) == 0,
                  "mode %d, short file, 2 shares of %u readers: %zu bytes of hits merged, %zu from one runner", mode,
                  readers, merged.len, short_one.len);
            free(merged.text);
        }
        {
            hit_log merged;
            memset(&merged, 0, sizeof merged);
            local_shares(db, &list, head, (unsigned)(head_len + 3) / 4, &merged);
            CHECK(merged.len == short_one.len && memcmp(merged.text, short_one.text, short_one.len) == 0,
                  "mode %d, short file cut at every byte: %zu bytes of hits merged, %zu from one runner", mode,
                  merged.len, short_one.len);
            free(merged.text);
        }
        free(short_one.text);
        free(one.text);
        free(one_gz.text);
        sm_db_free(db);
    }
    /* the static archive has no MPI loader; neither does a process not started by mpirun */
    CHECK(sm_mpi_launched_size() == 0 || getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK"),
          "launched size");
    sm_pattern_list_free(&list);
    CHECK(list.count == 0, "freed list");
    free(text);
    unlink(fasta);
    unlink(patterns);
    unlink(gz);
    unlink(head);
    rmdir(dir);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_dist_api: ok\n");
    return failures ? 1 : 0;
}
