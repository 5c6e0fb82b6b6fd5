/* A runner whose engines use forced scan loops (src/engines/engine.h,
 * sm_variant) instead of the CPU's best: for tests and benchmarks, which
 * include this header; not part of the public API. */
#ifndef SM_RUNNER_VARIANT_H
#define SM_RUNNER_VARIANT_H

#include "engines/engine.h"

/* sm_runner_create with variant (NULL: the CPU's best, as sm_runner_create). */
int sm_runner_create_variant(const sm_db *db, const sm_runner_options *opts, const sm_variant *variant,
                             sm_runner **runner, sm_error *err);

#endif /* SM_RUNNER_VARIANT_H */
