/* Helpers shared by the unit tests: a seeded PRNG, random sequence
 * generators, hit lists with an order-aware comparison, and pass/fail
 * counting. Nothing here uses the library's internals. */
#ifndef SM_TESTUTIL_H
#define SM_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"

/* ------------------------------------------------------------------ PRNG */

/* splitmix64: tiny, seedable, good enough for test data. */
typedef struct {
    uint64_t state;
} tu_rng;

void tu_rng_seed(tu_rng *rng, uint64_t seed);
uint64_t tu_rng_next(tu_rng *rng);
/* Uniform in [0, n); n > 0. */
uint32_t tu_rng_below(tu_rng *rng, uint32_t n);
/* Uniform in [lo, hi]. */
uint32_t tu_rng_range(tu_rng *rng, uint32_t lo, uint32_t hi);
/* 1 with probability percent / 100. */
int tu_rng_chance(tu_rng *rng, unsigned percent);

/* Seed from the environment variable SM_TEST_SEED when set, else fallback;
   the seed is printed so a failing run can be repeated. */
uint64_t tu_seed_from_env(uint64_t fallback);

/* n random rounds scaled by the environment variable SM_TEST_SCALE, a
   percentage (default 100; at least 1 round): slow instrumented builds such
   as ThreadSanitizer's run fewer rounds of the same checks. */
unsigned tu_scaled(unsigned n);

/* ------------------------------------------------------------ generators */

/* n random bytes of A C G T into out (no terminator written). */
void tu_random_dna(tu_rng *rng, char *out, size_t n);
/* Like tu_random_dna, but each symbol is an IUPAC code other than A C G T
   (R Y S W K M B D H V N) with probability iupac_percent, and lower case
   with probability lower_percent. */
void tu_random_iupac(tu_rng *rng, char *out, size_t n, unsigned iupac_percent, unsigned lower_percent);
/* n random bytes drawn from the NUL-terminated alphabet. */
void tu_random_from(tu_rng *rng, char *out, size_t n, const char *alphabet);
/* n random bytes 0..255. */
void tu_random_bytes(tu_rng *rng, char *out, size_t n);

/* Feeds records to a runner, each in random pieces of 1 to max_piece
   bytes, half through sm_runner_feed and half straight into its buffer
   (sm_runner_feed_buffer), then flushes; the first failure's status. */
int tu_feed_records(sm_runner *runner, char *const *records, const size_t *lens, size_t n, tu_rng *rng,
                    uint32_t max_piece);

/* -------------------------------------------------------------- hit lists */

typedef struct {
    uint64_t record, start, end;
    uint32_t pattern;
    char strand;
    uint32_t errors;
} tu_hit;

typedef struct {
    tu_hit *items;
    size_t n, cap;
    int out_of_memory;
} tu_hits;

void tu_hits_init(tu_hits *list);
void tu_hits_clear(tu_hits *list);
void tu_hits_free(tu_hits *list);
void tu_hits_add(tu_hits *list, uint64_t record, uint64_t start, uint64_t end, uint32_t pattern, char strand,
                 uint32_t errors);
/* sm_hit_fn that appends to the tu_hits given as ctx. */
int tu_hits_collect(const sm_hit *hit, void *ctx);
/* Sorts in the library's order: (record, start, end, pattern, '+' before '-'). */
void tu_hits_sort(tu_hits *list);
/* Is the list in that order (strictly increasing, no duplicates)? */
int tu_hits_sorted(const tu_hits *list);
/* 1 when equal element by element. Otherwise prints, prefixed by what, the
   first position where they differ with both hits (or the missing side). */
int tu_hits_equal(const tu_hits *expected, const tu_hits *got, const char *what);
/* Formats one hit as "rec:start-end p# s e#" into buf. */
const char *tu_hit_format(const tu_hit *hit, char *buf, size_t size);

/* ------------------------------------------------------------- counting */

/* Records one check; on failure prints the formatted message. Returns ok. */
int tu_check(int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Failures so far (to stop printing after many). */
unsigned long tu_failures(void);
/* Prints "N passed, M failed"; returns the exit status for main (0 when none failed). */
int tu_summary(const char *test_name);

/* A printable excerpt of bytes (escaped, truncated to max characters). */
const char *tu_excerpt(const char *data, size_t len, size_t max, char *buf, size_t size);

#endif /* SM_TESTUTIL_H */
