/* The whole public API in one small program: compile patterns given on the
 * command line, scan a sequence file with several threads, print every hit.
 *
 *   cc example.c $(pkg-config --cflags --libs seqmatch) -o example
 *   ./example examples/ecoli-excerpt.fa GAATTC GGATCC
 *
 * The file is read as one DNA sequence: FASTA header lines (">...") are
 * skipped and line breaks dropped, so coordinates are within the joined
 * sequence of all records. The command-line tool (`seqmatch search`) reads
 * records, gzip and FASTQ properly; this stays small on purpose. */
#include <seqmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_hit(const sm_hit *hit, void *ctx) {
    const sm_db *db = ctx;
    printf("%s\t%c\t%llu\t%llu\t%.*s\n", sm_db_pattern_name(db, hit->pattern), hit->strand,
           (unsigned long long)hit->start, (unsigned long long)hit->end, (int)(hit->end - hit->start), hit->text);
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

    /* 2. Read the file as one sequence. */
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t len = 0, cap = 1 << 16;
    char *seq = malloc(cap), line[1 << 12];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '>') continue;
        for (char *p = line; *p; p++) {
            if (*p == '\n' || *p == '\r') continue;
            if (len == cap) seq = realloc(seq, cap *= 2);
            seq[len++] = *p;
        }
    }
    fclose(f);

    /* 3. Scan: the runner spreads the sequence over every core and delivers
       the hits on this thread in (start, end, pattern, strand) order. */
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.on_hit = print_hit;
    ro.ctx = db;
    sm_runner *runner = NULL;
    if (sm_runner_create(db, &ro, &runner, &err) != SM_OK) {
        fprintf(stderr, "runner: %s\n", err.message);
        return 2;
    }
    sm_runner_begin_record(runner);
    rc = sm_runner_feed(runner, seq, len);
    if (rc == SM_OK) rc = sm_runner_end_record(runner);
    if (rc == SM_OK) rc = sm_runner_flush(runner);
    fprintf(stderr, "%llu hits\n", (unsigned long long)sm_runner_total(runner));
    sm_runner_free(runner);
    sm_db_free(db);
    free(seq);
    return rc == SM_OK ? 0 : 2;
}
