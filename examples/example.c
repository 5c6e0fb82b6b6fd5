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

static void keep_name(example *e, uint64_t record, const char *name) {
    e->names = realloc(e->names, (record + 1) * sizeof *e->names);
    e->names[record] = malloc(strlen(name) + 1);
    strcpy(e->names[record], name);
    e->count = record + 1;
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
    sm_db *db = NULL;
    sm_error err = {0}; /* calls that succeed leave it as it is: start it empty */
    /* NULL settings: DNA, both strands, exact, the planner picks engines
       (sm_compile_params_new and _set for others) */
    int rc = sm_compile_with_params(patterns, n, NULL, &db, &err);
    free(patterns); /* the database keeps its own copy */
    if (rc != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        return 2;
    }
    /* 2. Scan: the reader feeds the runner, which spreads the records over
       every core and delivers the hits on this thread in order. */
    example e = {db, NULL, 0};
    sm_runner_params *params = sm_runner_params_new();
    sm_runner_params_set_on_hit(params, print_hit);
    sm_runner_params_set_context(params, &e);
    sm_runner *runner = NULL;
    sm_reader *reader = NULL;
    rc = sm_runner_create_with_params(db, params, &runner, &err);
    sm_runner_params_free(params);
    if (rc != SM_OK || sm_reader_open(argv[1], SM_INPUT_AUTO, &reader, &err) != SM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    const char *name;
    while (rc == SM_OK && (rc = sm_reader_next_record(reader, &name, &err)) == 1) {
        uint64_t record = sm_runner_begin_record(runner);
        keep_name(&e, record, name);
        rc = sm_runner_feed_reader(runner, reader, NULL, record, NULL, &err);
        if (rc == SM_OK) rc = sm_runner_end_record(runner);
    }
    if (rc == 0) rc = sm_runner_flush(runner); /* 0: the reader's end */
    if (rc != SM_OK) fprintf(stderr, "%s\n", err.message[0] ? err.message : sm_strerror(rc));
    fprintf(stderr, "%llu hits\n", (unsigned long long)sm_runner_total(runner));
    sm_reader_close(reader);
    sm_runner_free(runner);
    sm_db_free(db);
    for (size_t i = 0; i < e.count; i++) free(e.names[i]);
    free(e.names);
    return rc == SM_OK ? 0 : 2;
}
