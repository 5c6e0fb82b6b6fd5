/* The CPU cost model of the approximate engines: each engine's scan time
 * per text byte on one thread, as a sum of terms that count its work per
 * byte (SIMD register steps, bit-vector words, expected piece hits to
 * verify, DP cells), each term times a constant fitted to benchmark runs
 * (bench/run-planner.sh, bench/fit_planner.py). The planner takes the
 * cheapest engine; --explain prints the estimates; a forced engine far
 * above the best is reported. docs/architecture.md, "Choosing an
 * approximate engine", has the terms, the constants and the fits. */
#ifndef SM_APPROX_COST_H
#define SM_APPROX_COST_H

#include "engines/approx/approx.h"

/* The estimates for keys in engine form (reverse complements included,
   text keys folded), k mismatches or k edits, on this CPU, for records of
   about typical_record bytes (0: long). */
void sm_approx_estimate(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, sm_match match,
                        uint32_t k, uint32_t typical_record, sm_approx_estimates *est);

/* The same with the SIMD level the estimate assumes forced (benchmarks and
   tests): 0 no text lanes (scalar), 1 AVX2, 2 AVX-512 with VBMI. */
void sm_approx_estimate_at(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                           sm_match match, uint32_t k, uint32_t typical_record, int level, sm_approx_estimates *est);

#endif /* SM_APPROX_COST_H */
