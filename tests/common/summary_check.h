/* Record summaries (sm_runner_options.on_record_summary) gathered from a
 * runner and checked against the hits an oracle expects. */
#ifndef SM_TEST_SUMMARY_CHECK_H
#define SM_TEST_SUMMARY_CHECK_H

#include "testutil.h"

typedef struct {
    uint64_t record;
    uint64_t hits;
    sm_pattern_errors *patterns;
    size_t npatterns;
} sc_record;

typedef struct {
    sc_record *items;
    size_t n, cap;
    unsigned order_errors; /* a summary out of record order, or patterns not ascending */
    size_t stop_after;     /* ask to stop after this many summaries (0: never) */
} sc_summaries;

void sc_init(sc_summaries *s);
void sc_free(sc_summaries *s);
/* The on_record_summary callback: ctx is an sc_summaries. */
int sc_collect(const sm_record_summary *summary, void *ctx);
/* Compares the summaries of records [0, nrec) with those of the hits
   (any order): the same hit count and, per pattern, the least errors.
   Returns 1 when they agree, else 0 with the first difference in why. */
int sc_check(const sc_summaries *got, const tu_hits *hits, size_t nrec, uint32_t patterns, char *why, size_t whysize);

#endif
