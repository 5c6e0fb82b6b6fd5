#include <stdio.h>
#include <string.h>
#include <seqmatch.h>

/* Called once per hit, in (start, end, pattern, strand) order. */
static int print_hit(const sm_hit *hit, void *ctx) {
    const sm_db *db = ctx;
    printf("%s %c %llu %llu\n", sm_db_pattern_name(db, hit->pattern), hit->strand,
           (unsigned long long)hit->start, (unsigned long long)hit->end);
    return 0; /* non-zero stops the scan */
}

int main(void) {
    /* dna, both strands, exact; SM_CPARAM_MATCH, SM_CPARAM_MAX_ERRORS for errors */
    sm_compile_params *params = sm_compile_params_new();
    sm_pattern p[] = {{"EcoRI", "GAATTC", 6}, {"BamHI", "GGATCC", 6}};
    sm_db *db;
    sm_error err;
    int rc = sm_compile_with_params(p, 2, params, &db, &err);
    sm_compile_params_free(params);
    if (rc != SM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    sm_scratch *scratch; /* one per thread; the database is shared */
    if (sm_scratch_alloc(db, &scratch) != SM_OK) return 1;
    const char *text = "TTGAATTCAGGATCCA";
    sm_scan(db, scratch, text, strlen(text), print_hit, db);
    sm_scratch_free(scratch);
    sm_db_free(db);
    return 0;
}
