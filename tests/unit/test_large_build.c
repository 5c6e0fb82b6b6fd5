/* Large automata must build, and both builders must give the same bytes:
 * seed 000's largest dictionary (3000 patterns x 9000 nt, about 27 million
 * states) and a set of 100,000 patterns. A few planted patterns are then
 * searched for, to check the big tables are used correctly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int count_hit(const sm_hit *hit, void *ctx) {
    (void)hit;
    (*(uint64_t *)ctx)++;
    return 0;
}

static void build_both(const char *what, sm_pattern *pats, size_t n, size_t len, tu_rng *rng) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.strands = SM_STRAND_FORWARD;
    sm_db *serial = NULL, *levels = NULL;
    sm_error err;
    int rc = sm_compile(pats, n, &o, &serial, &err);
    tu_check(rc == SM_OK, "%s: serial build failed: %s", what, rc == SM_OK ? "" : err.message);
    o.build_threads = 2;
    rc = sm_compile(pats, n, &o, &levels, &err);
    tu_check(rc == SM_OK, "%s: level-synchronous build failed: %s", what, rc == SM_OK ? "" : err.message);
    if (!serial || !levels) {
        sm_db_free(serial);
        sm_db_free(levels);
        return;
    }
    size_t a_size, b_size;
    const void *a = sm_db_bytes(serial, &a_size), *b = sm_db_bytes(levels, &b_size);
    tu_check(a_size == b_size && memcmp(a, b, a_size) == 0, "%s: builders differ (%zu vs %zu bytes)", what, a_size,
             b_size);
    sm_db_info info;
    sm_db_get_info(serial, &info);
    uint32_t states = 0;
    sm_db_section_dfa(serial, 0, &states, NULL);
    printf("%s: %u patterns, %u states, %llu bytes\n", what, info.pattern_count, states, (unsigned long long)info.size);

    /* Plant three patterns in random text and find each exactly where it was put. */
    size_t text_len = 3 * len + 3000;
    char *text = malloc(text_len);
    tu_random_from(rng, text, text_len, "N");
    size_t picks[3] = {0, n / 2, n - 1};
    for (int i = 0; i < 3; i++) memcpy(text + 1000 + i * (len + 1000), pats[picks[i]].seq, len);
    sm_scratch *scratch = NULL;
    sm_scratch_alloc(levels, &scratch);
    uint64_t hits = 0;
    tu_check(sm_scan(levels, scratch, text, text_len, count_hit, &hits) == SM_OK, "%s: scan failed", what);
    tu_check(hits >= 3, "%s: expected the 3 planted patterns, found %llu hits", what, (unsigned long long)hits);
    sm_scratch_free(scratch);
    free(text);
    sm_db_free(serial);
    sm_db_free(levels);
}

static void random_set(tu_rng *rng, size_t n, size_t len, const char *what) {
    char *seqs = malloc(n * len);
    sm_pattern *pats = malloc(n * sizeof *pats);
    tu_random_dna(rng, seqs, n * len);
    for (size_t i = 0; i < n; i++) {
        pats[i].name = NULL;
        pats[i].seq = seqs + i * len;
        pats[i].len = len;
    }
    build_both(what, pats, n, len, rng);
    free(pats);
    free(seqs);
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(2024));
    random_set(&rng, 100000, 20, "100k x 20 nt");
    random_set(&rng, 3000, 9000, "3000 x 9000 nt");
    return tu_summary("test_large_build");
}
