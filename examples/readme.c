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
    sm_compile_options o;
    sm_compile_options_init(&o); /* dna, both strands, exact; o.match, o.max_errors for errors */
    sm_pattern p[] = {{"EcoRI", "GAATTC", 6}, {"BamHI", "GGATCC", 6}};
    sm_db *db;
    sm_error err;
    if (sm_compile(p, 2, &o, &db, &err) != SM_OK) {
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
