/* The public API in one small program: compile patterns given on the command
 * line, read a FASTA/FASTQ file (plain or gzip) and scan it on every core,
 * printing every hit with its record's name.
 *
 *   cc example.c $(pkg-config --cflags --libs seqmatch) -o example
 *   ./example examples/ecoli-excerpt.fa GAATTC GGATCC */
#include <seqmatch_reader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const sm_db *db;
    char **names; /* record number -> name: hits come later than their record is read */
    size_t count;
} example;

static int keep_name(void *ctx, uint64_t record, const char *name) {
    example *e = ctx;
    e->names = realloc(e->names, (record + 1) * sizeof *e->names);
    e->names[record] = malloc(strlen(name) + 1);
    strcpy(e->names[record], name);
    e->count = record + 1;
    return 0;
}

static int print_hit(const sm_hit *hit, void *ctx) {
    const example *e = ctx;
    printf("%s\t%s\t%c\t%llu\t%llu\t%.*s\n", e->names[hit->record], sm_db_pattern_name(e->db, hit->pattern),
           hit->strand, (unsigned long long)hit->start, (unsigned long long)hit->end, (int)(hit->end - hit->start),
           hit->text);
    return 0; /* non-zero would stop the scan */
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s FILE PATTERN...\n", argv[0]);
        return 2;
    }
    /* 1. Compile: the patterns become one immutable database. */
    size_t n = (size_t)argc - 2;
    sm_pattern *patterns = calloc(n, sizeof *patterns);
    for (size_t i = 0; i < n; i++) patterns[i] = (sm_pattern){NULL, argv[i + 2], strlen(argv[i + 2])};
    sm_compile_options options;
    sm_compile_options_init(&options); /* DNA, both strands, exact, the planner picks engines */
    sm_db *db = NULL;
    sm_error err;
    int rc = sm_compile(patterns, n, &options, &db, &err);
    free(patterns); /* the database keeps its own copy */
    if (rc != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        return 2;
    }
    /* 2. Scan: the reader feeds the runner, which spreads the records over
       every core and delivers the hits on this thread in order. */
    example e = {db, NULL, 0};
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.on_hit = print_hit;
    ro.ctx = &e;
    sm_runner *runner = NULL;
    sm_reader *reader = NULL;
    if (sm_runner_create(db, &ro, &runner, &err) != SM_OK || sm_reader_open(argv[1], SM_INPUT_AUTO, &reader, &err) != SM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    sm_scan_reader_options so = {.ctx = &e, .on_record = keep_name};
    rc = sm_runner_scan_reader(runner, reader, &so, &err);
    if (rc == SM_OK) rc = sm_runner_flush(runner);
    if (rc != SM_OK) fprintf(stderr, "%s\n", err.message[0] ? err.message : sm_strerror(rc));
    fprintf(stderr, "%llu hits\n", (unsigned long long)sm_runner_total(runner));
    sm_reader_close(reader);
    sm_runner_free(runner);
    sm_db_free(db);
    for (size_t i = 0; i < e.count; i++) free(e.names[i]);
    free(e.names);
    return rc == SM_OK ? 0 : 2;
}
