/* The public hit output, shard-file merge and DFA reader loop
 * (seqmatch_output.h, sm_shard_set_*, sm_dfa_scan_reader), through the
 * installed headers only, linked against libseqmatch.so and libseqmatch.a:
 * a search's hits written as TSV (names escaped), BED, JSON lines, counts
 * and SAM (secondary flags, reverse complements), each compared with the
 * text the formats' documentation gives;
 * a shard set with a shard missing refused; a DFA run over a FASTA file per
 * record and whole, and on the GPU (or its refusal where there is none). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seqmatch_dist.h>
#include <seqmatch_output.h>

#include "check.h"

static char dir[] = "/tmp/sm_output_api_XXXXXX";

typedef struct {
    sm_formatter *f;
    int stopped;
} search_ctx;

static int on_hit(const sm_hit *hit, void *ctx) {
    search_ctx *s = ctx;
    if (sm_formatter_hit(s->f, hit) != 0) s->stopped = 1;
    return s->stopped;
}

static void on_record_done(uint64_t record, void *ctx) { sm_formatter_record_done(((search_ctx *)ctx)->f, record); }

static int on_record(void *ctx, uint64_t record, const char *name) {
    return sm_formatter_add_record(((search_ctx *)ctx)->f, record, name);
}

/* The search of db over path formatted in format (into a file, read back). */
static char *formatted(const sm_db *db, const char *path, sm_output_format format, int header) {
    char out_path[64];
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    FILE *file = fopen(out_path, "w+");
    CHECK(file != NULL, "open %s", out_path);
    if (!file) return strdup("");
    sm_writer *w = sm_writer_new(file);
    sm_error err;
    search_ctx s = {sm_formatter_new(format, header, 0, db, w, &err), 0};
    CHECK(s.f != NULL, "formatter: %s", err.message);
    if (format == SM_FORMAT_SAM)
        CHECK(sm_formatter_start_sam(s.f, "seqmatch search --format sam", &err) == SM_OK, "sam: %s", err.message);
    sm_formatter_begin(s.f);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = 2;
    ro.count_only = format == SM_FORMAT_COUNT;
    ro.on_hit = on_hit;
    ro.on_record_done = on_record_done;
    ro.ctx = &s;
    sm_runner *runner;
    sm_reader *reader;
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
    CHECK(sm_reader_open(path, SM_INPUT_AUTO, &reader, &err) == SM_OK, "open: %s", err.message);
    sm_scan_reader_options so = {.ctx = &s, .on_record = on_record};
    CHECK(sm_runner_scan_reader(runner, reader, &so, &err) == SM_OK, "scan: %s", err.message);
    CHECK(sm_runner_flush(runner) == SM_OK, "flush");
    if (format == SM_FORMAT_COUNT) sm_formatter_counts(s.f, sm_runner_counts(runner), sm_runner_total(runner));
    /* SAM's @SQ lengths are the caller's to give; this test gives none (LN:1) */
    CHECK(sm_formatter_end(s.f, &err) == SM_OK, "end: %s", err.message);
    CHECK(sm_writer_flush(w) == 0 && sm_writer_error(w) == 0, "writer");
    sm_reader_close(reader);
    sm_runner_free(runner);
    sm_formatter_free(s.f);
    sm_writer_free(w);
    long n = ftell(file);
    char *text = calloc((size_t)n + 1, 1);
    rewind(file);
    CHECK(fread(text, 1, (size_t)n, file) == (size_t)n, "read back");
    fclose(file);
    return text;
}

static void expect(const char *what, const char *got, const char *want) {
    CHECK(strcmp(got, want) == 0, "%s:\n--- got\n%s--- want\n%s", what, got, want);
}

typedef struct {
    char text[256];
} dfa_log;

static int dfa_result(void *ctx, const char *record, uint32_t state) {
    dfa_log *l = ctx;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s %u\n", record ? record : "-", state);
    return 0;
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char fasta[64];
    snprintf(fasta, sizeof fasta, "%s/t.fa", dir);
    FILE *f = fopen(fasta, "w");
    /* ACGG on + at 2 of r1, and its reverse complement CCGT at 8; none in r"2 */
    fputs(">r1 first\nTTACGGAACCGTA\n>r\"2\nAAAA\n", f);
    fclose(f);
    sm_pattern patterns[] = {{"p\t1", "ACGG", 4}, {"p2", "TTTT", 4}};
    sm_compile_options co;
    sm_compile_options_init(&co);
    sm_db *db;
    sm_error err;
    CHECK(sm_compile(patterns, 2, &co, &db, &err) == SM_OK, "compile: %s", err.message);

    char *t = formatted(db, fasta, SM_FORMAT_TSV, 1);
    expect("tsv", t,
           "#record\tpattern\tstrand\tstart\tend\terrors\tmatched\n"
           "r1\tp\\t1\t+\t2\t6\t0\tACGG\n"
           "r1\tp\\t1\t-\t8\t12\t0\tCCGT\n"
           "r\"2\tp2\t-\t0\t4\t0\tAAAA\n");
    free(t);
    t = formatted(db, fasta, SM_FORMAT_BED, 1);
    expect("bed", t,
           "r1\t2\t6\tp\\t1\t1000\t+\n"
           "r1\t8\t12\tp\\t1\t1000\t-\n"
           "r\"2\t0\t4\tp2\t1000\t-\n");
    free(t);
    t = formatted(db, fasta, SM_FORMAT_JSONL, 1);
    expect("jsonl", t,
           "{\"record\":\"r1\",\"pattern\":\"p\\u00091\",\"strand\":\"+\",\"start\":2,\"end\":6,\"errors\":0,"
           "\"matched\":\"ACGG\"}\n"
           "{\"record\":\"r1\",\"pattern\":\"p\\u00091\",\"strand\":\"-\",\"start\":8,\"end\":12,\"errors\":0,"
           "\"matched\":\"CCGT\"}\n"
           "{\"record\":\"r\\\"2\",\"pattern\":\"p2\",\"strand\":\"-\",\"start\":0,\"end\":4,\"errors\":0,"
           "\"matched\":\"AAAA\"}\n");
    free(t);
    t = formatted(db, fasta, SM_FORMAT_COUNT, 1);
    expect("count", t, "p\\t1\t2\np2\t1\ntotal\t3\n");
    free(t);
    t = formatted(db, fasta, SM_FORMAT_SAM, 1);
    expect("sam", t,
           "@HD\tVN:1.6\tSO:coordinate\n"
           "@SQ\tSN:r1\tLN:1\n"
           "@SQ\tSN:r\"2\tLN:1\n"
           "@PG\tID:seqmatch\tPN:seqmatch\tVN:" SM_VERSION_STRING "\tCL:seqmatch search --format sam\n"
           /* the second hit of a pattern in a record is secondary (256); '-': reverse complemented */
           "p\\t1\t0\tr1\t3\t255\t4=\t*\t0\t0\tACGG\t*\tNM:i:0\n"
           "p\\t1\t272\tr1\t9\t255\t4=\t*\t0\t0\tCCGT\t*\tNM:i:0\n"
           "p2\t16\tr\"2\t1\t255\t4=\t*\t0\t0\tAAAA\t*\tNM:i:0\n");
    free(t);

    /* a shard set missing a shard is refused, naming it */
    char shard[64];
    snprintf(shard, sizeof shard, "%s/nothing.smshard", dir);
    const char *paths[] = {shard};
    sm_shard_set *set = NULL;
    CHECK(sm_shard_set_open(paths, 1, &set, &err) != SM_OK && set == NULL && strstr(err.message, shard),
          "shard set of a missing file: %s", err.message);

    /* a DFA over the reader: per record and whole (records joined) */
    sm_dfa_regex_options rx;
    sm_dfa_regex_options_init(&rx);
    rx.alphabet = SM_ALPHABET_DNA;
    sm_dfa *dfa = NULL;
    CHECK(sm_dfa_from_regex("T.*", 3, &rx, &dfa, &err) == SM_OK, "regex: %s", err.message);
    sm_dfa_matcher_options mo;
    sm_dfa_matcher_options_init(&mo);
    sm_dfa_matcher *matcher = NULL;
    CHECK(dfa && sm_dfa_matcher_create(dfa, &mo, &matcher, &err) == SM_OK, "matcher: %s", err.message);
    for (int per_record = 0; matcher && per_record < 2; per_record++) {
        sm_reader *reader;
        CHECK(sm_reader_open(fasta, SM_INPUT_AUTO, &reader, &err) == SM_OK, "open: %s", err.message);
        dfa_log log = {{0}};
        sm_dfa_reader_options o = {.per_record = per_record, .dna = 1, .name = fasta, .on_result = dfa_result,
                                   .ctx = &log};
        CHECK(sm_dfa_scan_reader(dfa, matcher, reader, &o, &err) == SM_OK, "dfa: %s", err.message);
        sm_reader_close(reader);
        /* r1 starts with T (accepted), r"2 does not; joined, the input starts with T */
        char want[128];
        uint32_t first = 0, second = 0, whole = 0;
        if (per_record) {
            CHECK(sscanf(log.text, "r1 %u\nr\"2 %u\n", &first, &second) == 2, "per record: %s", log.text);
            CHECK(sm_dfa_is_accepting(dfa, first) && !sm_dfa_is_accepting(dfa, second), "per record: %s", log.text);
        } else {
            snprintf(want, sizeof want, "- %%u\n");
            CHECK(sscanf(log.text, want, &whole) == 1 && sm_dfa_is_accepting(dfa, whole), "whole: %s", log.text);
        }
    }
    /* the CPU loop over files: each file's result labelled with its name (or
       not), records by name, and a missing file stops after the ones before */
    if (matcher) {
        char missing[80];
        snprintf(missing, sizeof missing, "%s/missing.fa", dir);
        char *files[] = {fasta, fasta, missing, fasta};
        for (int label = 0; label < 2; label++) {
            for (int per_record = 0; per_record < 2; per_record++) {
                dfa_log log = {{0}};
                sm_dfa_parallel_options par;
                sm_dfa_parallel_options_init(&par);
                sm_dfa_reader_options o = {.parallel = &par, .per_record = per_record, .dna = 1, .name = "unused",
                                           .on_result = dfa_result, .ctx = &log};
                int rc = sm_dfa_scan_files(dfa, matcher, files, 4, 1, label, &o, &err);
                CHECK(rc != SM_OK && strstr(err.message, missing) && !strstr(err.message, "unused"),
                      "files: a missing file: %d %s", rc, err.message);
                char want[256], one[128];
                unsigned a = 0, b = 0, c = 0, d = 0;
                if (per_record) {
                    CHECK(sscanf(log.text, "r1 %u\nr\"2 %u\nr1 %u\nr\"2 %u\n", &a, &b, &c, &d) == 4,
                          "files per record (label %d): %s", label, log.text);
                    CHECK(sm_dfa_is_accepting(dfa, a) && !sm_dfa_is_accepting(dfa, b) && a == c && b == d,
                          "files per record: %s", log.text);
                } else {
                    snprintf(one, sizeof one, "%s %%u\n", label ? fasta : "-");
                    snprintf(want, sizeof want, "%s%s", one, one);
                    CHECK(sscanf(log.text, want, &a, &b) == 2 && sm_dfa_is_accepting(dfa, a) && a == b,
                          "files whole (label %d): %s", label, log.text);
                    CHECK(strchr(strchr(log.text, '\n') + 1, '\n')[1] == 0, "files: a third result: %s", log.text);
                }
            }
        }
    }
    /* a DFA loaded as seqmatch dfa loads it: the pattern file's messages name it */
    {
        char pats[80];
        snprintf(pats, sizeof pats, "%s/p.txt", dir);
        FILE *pf = fopen(pats, "w");
        CHECK(pf != NULL, "pattern file");
        if (pf) {
            fputs("TTACG\nAC!G\n", pf);
            fclose(pf);
        }
        sm_dfa_source src = {.patterns_path = pats, .alphabet = SM_ALPHABET_DNA, .strands = SM_STRAND_FORWARD,
                             .match = SM_DFA_CONTAINS, .minimize = -1};
        sm_dfa *loaded = (sm_dfa *)1;
        char want[160];
        snprintf(want, sizeof want, "%s: line 2: pattern 2 ('AC!G'): ", pats);
        CHECK(sm_dfa_load(&src, &loaded, &err) != SM_OK && loaded == NULL && strncmp(err.message, want,
              strlen(want)) == 0, "a bad pattern: %s", err.message);
        pf = fopen(pats, "w");
        if (pf) {
            fputs("TTACG\n", pf);
            fclose(pf);
        }
        CHECK(sm_dfa_load(&src, &loaded, &err) == SM_OK && loaded, "patterns: %s", err.message);
        if (loaded && matcher) {
            sm_dfa_matcher *m2 = NULL;
            CHECK(sm_dfa_matcher_create(loaded, &mo, &m2, &err) == SM_OK, "matcher: %s", err.message);
            if (m2) {
                CHECK(sm_dfa_is_accepting(loaded, sm_dfa_run(m2, sm_dfa_start(loaded), "GGTTACGA", 8)) &&
                          !sm_dfa_is_accepting(loaded, sm_dfa_run(m2, sm_dfa_start(loaded), "GGTTACA", 7)),
                      "patterns: contains TTACG");
                sm_dfa_matcher_free(m2);
            }
        }
        uint32_t built = loaded ? sm_dfa_state_count(loaded) : 0;
        sm_dfa_free(loaded);
        src.minimize = 1;
        CHECK(sm_dfa_load(&src, &loaded, &err) == SM_OK && loaded && sm_dfa_state_count(loaded) <= built,
              "patterns minimized: %s", err.message);
        sm_dfa_free(loaded);
        unlink(pats);
        src.patterns_path = pats; /* missing now */
        CHECK(sm_dfa_load(&src, &loaded, &err) != SM_OK && loaded == NULL && strncmp(err.message, pats,
              strlen(pats)) == 0 && strstr(err.message + strlen(pats), pats) == NULL, "missing: %s", err.message);
        /* a regex: minimal unless minimize is 0; a DFA file before both */
        sm_dfa_source rs = {.regex = "A(C|C)(G|G)T", .alphabet = SM_ALPHABET_DNA, .minimize = -1};
        sm_dfa *minimal = NULL, *as_built = NULL;
        CHECK(sm_dfa_load(&rs, &minimal, &err) == SM_OK, "regex: %s", err.message);
        rs.minimize = 0;
        CHECK(sm_dfa_load(&rs, &as_built, &err) == SM_OK, "regex as built: %s", err.message);
        CHECK(minimal && as_built && sm_dfa_state_count(minimal) <= sm_dfa_state_count(as_built),
              "regex minimal");
        sm_dfa_free(minimal);
        sm_dfa_free(as_built);
        rs.dfa_path = pats;
        CHECK(sm_dfa_load(&rs, &minimal, &err) != SM_OK && minimal == NULL && strstr(err.message, pats),
              "a DFA file first: %s", err.message);
        rs.dfa_path = NULL;
        rs.regex = "AC(";
        CHECK(sm_dfa_load(&rs, &minimal, &err) != SM_OK && strstr(err.message, "unmatched"), "bad regex: %s",
              err.message);
    }
    /* the GPU loop: without a usable GPU (no module or no device here) it fails in one message */
    if (matcher) {
        sm_dfa_gpu_options go;
        sm_dfa_gpu_options_init(&go);
        dfa_log log = {{0}};
        sm_dfa_reader_options o = {.per_record = 1, .dna = 1, .on_result = dfa_result, .ctx = &log};
        char *files[] = {fasta};
        int rc = sm_dfa_gpu_scan_files(dfa, matcher, &go, files, 1, 1, 0, &o, &err);
        if (rc == SM_OK) {
            uint32_t first = 0, second = 0;
            CHECK(sscanf(log.text, "r1 %u\nr\"2 %u\n", &first, &second) == 2, "gpu per record: %s", log.text);
        } else {
            CHECK(rc == SM_ERR_DEVICE && strncmp(err.message, "--gpu: ", 7) == 0, "gpu: %d %s", rc, err.message);
        }
    }
    sm_dfa_matcher_free(matcher);
    sm_dfa_free(dfa);
    sm_db_free(db);
    char path[96];
    snprintf(path, sizeof path, "%s/out", dir);
    unlink(path);
    unlink(fasta);
    rmdir(dir);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
