/* Random paired records with the patterns' sites, for the tests of the
 * read loops: each mate's text as written, its sequence and the hits
 * sm_scan finds in it (the oracle). Include after defining MATES_RECORDS
 * (records per mate); uses check.h's CHECK. */
#ifndef SM_TEST_MATES_H
#define SM_TEST_MATES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <seqmatch.h>

static char *text[2][MATES_RECORDS], *seq[2][MATES_RECORDS];
static uint64_t want_hits[2][MATES_RECORDS];

static char *dup_n(const char *s, size_t n) {
    char *p = malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static int count_hit(const sm_hit *hit, void *ctx) {
    (void)hit;
    (*(uint64_t *)ctx)++;
    return 0;
}

/* What the records look like: the generator's seed, sequence lengths
   min_len .. min_len + spread - 1 drawn from bases, and the word after
   each name. */
typedef struct {
    unsigned seed;
    size_t min_len, spread;
    const char *bases;
    const char *comment;
} mates_shape;

/* Every record of both mates made again: FASTQ, or FASTA wrapped at 60. */
static void mates_make(const sm_db *db, const mates_shape *shape, int fasta) {
    unsigned seed = shape->seed;
    size_t nbases = strlen(shape->bases);
    size_t cap = shape->min_len + shape->spread + 1;
    char *s = malloc(cap), *t = malloc(3 * cap + 64);
    sm_scratch *scratch = NULL;
    CHECK(s && t && sm_scratch_alloc(db, &scratch) == SM_OK, "scratch");
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < MATES_RECORDS; r++) {
            seed = seed * 1103515245u + 12345u;
            size_t len = shape->min_len + (seed >> 16) % shape->spread, at = 0;
            for (size_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                s[i] = shape->bases[(seed >> 16) % nbases];
            }
            at += (size_t)snprintf(t + at, 64, "%c%d/%d %s\n", fasta ? '>' : '@', r, m + 1, shape->comment);
            for (size_t i = 0; i < len; i++) {
                t[at++] = s[i];
                if (fasta && i % 60 == 59 && i + 1 < len) t[at++] = '\n';
            }
            t[at++] = '\n';
            if (!fasta) {
                t[at++] = '+';
                t[at++] = '\n';
                memset(t + at, 'I', len);
                at += len;
                t[at++] = '\n';
            }
            free(text[m][r]);
            free(seq[m][r]);
            text[m][r] = dup_n(t, at);
            seq[m][r] = dup_n(s, len);
            want_hits[m][r] = 0;
            sm_scan(db, scratch, s, len, count_hit, &want_hits[m][r]);
        }
    sm_scratch_free(scratch);
    free(s);
    free(t);
}

#endif /* SM_TEST_MATES_H */
