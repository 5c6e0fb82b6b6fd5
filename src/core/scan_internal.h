/* Scanning entry points for tests and benchmarks that force a loop variant
 * (src/engines/engine.h, sm_variant) instead of the CPU's best. */
#ifndef SM_SCAN_INTERNAL_H
#define SM_SCAN_INTERNAL_H

#include "engines/engine.h"

/* sm_scratch_alloc with the engines' loops chosen by variant (NULL: best). */
int sm_scratch_alloc_variant(const sm_db *db, const sm_variant *variant, sm_scratch **scratch);

/* sm_compile with build tuning (NULL: none). */
int sm_compile_tuned(const sm_pattern *patterns, size_t n, const sm_compile_options *opts,
                     const sm_build_tuning *tuning, sm_db **db, sm_error *err);

#endif /* SM_SCAN_INTERNAL_H */
