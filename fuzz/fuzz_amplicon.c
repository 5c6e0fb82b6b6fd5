/* Fuzz target: in-silico PCR (sm_amplicon_set_read, sm_amplicon_finder_*;
 * include/seqmatch_reader.h). An input is an option byte, a primer table
 * (name<TAB>forward<TAB>reverse lines, any bytes), a NUL, then the records
 * (FASTA, FASTQ or garbage).
 *
 * A table is taken or refused with a message; a run ends with SM_OK or an
 * error with a message, never a crash. A run that succeeds writes one line
 * per product: nine fields, start < end, size = end - start inside the
 * window, a sequence of that many bytes; the same output on 1 and 3 threads
 * with a small chunk size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_output.h"
#include "seqmatch_reader.h"
#include "fuzz_support.h"

/* The TSV of one run into *out (malloc'd, *len bytes); the run's status. */
static int run(const sm_db *db, const sm_amplicon_set *set, const sm_amplicon_rule *rule, unsigned threads,
               size_t chunk, const char *path, char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    FILE *f = tmpfile();
    if (!f) return -1;
    sm_writer *w = sm_writer_new(f);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    sm_amplicon_options ao = {.set = set, .rule = *rule, .format = SM_AMPLICON_TSV, .sequence = 1, .out = w,
                              .reader_threads = 1};
    sm_amplicon_finder *finder = NULL;
    sm_error err;
    int st = sm_amplicon_finder_new(db, &ro, &ao, &finder, &err);
    if (st != SM_OK) FUZZ_CHECK(err.message[0], "a refused finder without a message");
    if (st == SM_OK) {
        st = sm_amplicon_finder_run(finder, path, &err);
        if (st != SM_OK) FUZZ_CHECK(err.message[0], "a failed run without a message (status %d)", st);
    }
    sm_amplicon_finder_free(finder);
    sm_writer_flush(w);
    sm_writer_free(w);
    long n = ftell(f);
    if (n > 0 && (*out = malloc((size_t)n + 1))) {
        rewind(f);
        *len = fread(*out, 1, (size_t)n, f);
        (*out)[*len] = '\0';
    }
    fclose(f);
    return st;
}

/* Each product line: record, start, end, strand, pair, size, errors, errors, sequence. */
static void check_lines(char *text, const sm_amplicon_rule *rule) {
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        FUZZ_CHECK(nl, "a product line without its end");
        *nl = '\0';
        char *field[10];
        int n = 0;
        for (char *p = line; p && n < 10; n++) {
            field[n] = p;
            p = strchr(p, '\t');
            if (p) *p++ = '\0';
        }
        FUZZ_CHECK(n == 9, "%d fields in a product line", n);
        unsigned long long start = strtoull(field[1], NULL, 10), end = strtoull(field[2], NULL, 10),
                           size = strtoull(field[5], NULL, 10);
        FUZZ_CHECK(start < end && size == end - start, "product [%llu, %llu) of size %llu", start, end, size);
        FUZZ_CHECK(size >= rule->min_size && size <= rule->max_size, "size %llu outside the window", size);
        FUZZ_CHECK(strlen(field[8]) == size, "a sequence of %zu bytes for %llu", strlen(field[8]), size);
        FUZZ_CHECK(field[3][0] == '+' || field[3][0] == '-', "strand '%s'", field[3]);
        line = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || size > 1 << 16) return 0;
    uint8_t opt = data[0];
    const uint8_t *nul = memchr(data + 1, 0, size - 1);
    if (!nul) return 0;
    fuzz_file table, records;
    if (fuzz_file_make(&table, data + 1, (size_t)(nul - data - 1)) != 0) return 0;
    sm_amplicon_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    int st = sm_amplicon_set_read(&set, table.path, &err);
    fuzz_file_remove(&table);
    if (st != SM_OK) FUZZ_CHECK(err.message[0], "a table refused without a message");
    unsigned k = opt & 3; /* 0 exact, 1 or 2 mismatches, 3: one edit */
    sm_amplicon_rule rule = {(opt >> 2) & 1 ? 4 : 1, (opt >> 3) & 1 ? 40 : 100000, (opt >> 4) & 1};
    sm_db *db = NULL;
    if (st == SM_OK && set.count > 0) {
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.match = k == 0 ? SM_MATCH_EXACT : k == 3 ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        co.max_errors = k == 3 ? 1 : k;
        if ((opt >> 5) & 1) co.flags |= SM_FLAG_TEXT_IUPAC;
        if (sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err) != SM_OK) db = NULL;
    }
    const uint8_t *body = nul + 1;
    if (db && fuzz_file_make(&records, body, size - (size_t)(body - data)) == 0) {
        char *one = NULL, *three = NULL;
        size_t n1 = 0, n3 = 0;
        int a = run(db, &set, &rule, 1, 0, records.path, &one, &n1);
        int b = run(db, &set, &rule, 3, 7, records.path, &three, &n3);
        FUZZ_CHECK(a == b, "status %d on 1 thread, %d on 3", a, b);
        if (a == SM_OK) {
            FUZZ_CHECK(n1 == n3 && (n1 == 0 || memcmp(one, three, n1) == 0), "1 and 3 threads differ");
            if (one) check_lines(one, &rule); /* no header line: header is 0 */
        }
        free(one);
        free(three);
        fuzz_file_remove(&records);
    }
    if (db) sm_db_free(db);
    sm_amplicon_set_free(&set);
    return 0;
}
