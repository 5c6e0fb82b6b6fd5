/* The stable form of a runner's settings (include/seqmatch_runtime.h): an
 * opaque sm_runner_params over the struct the runner reads, numbered
 * parameters with bounds and callbacks set one by one. */
#include <stdlib.h>

#include "base/internal.h"

struct sm_runner_params {
    sm_runner_options options;
};

sm_runner_params *sm_runner_params_new(void) {
    sm_runner_params *p = calloc(1, sizeof *p);
    if (p) sm_runner_options_init(&p->options);
    return p;
}

void sm_runner_params_free(sm_runner_params *p) { free(p); }

int sm_runner_param_bounds(sm_runner_param param, int64_t *lower, int64_t *upper) {
    int64_t lo = 0, hi;
    switch (param) {
    case SM_RPARAM_THREADS: hi = UINT32_MAX; break;
    case SM_RPARAM_CHUNK_SIZE: hi = SIZE_MAX < INT64_MAX ? (int64_t)SIZE_MAX : INT64_MAX; break;
    case SM_RPARAM_COUNT_ONLY: hi = 1; break;
    case SM_RPARAM_OVERLAP_FREE: hi = SM_OVERLAP_FREE_PREFIX; break;
    case SM_RPARAM_BACKEND: hi = SM_BACKEND_CUDA; break;
    case SM_RPARAM_GPU_DEVICE: hi = INT32_MAX; break;
    case SM_RPARAM_CIRCULAR: hi = 1; break;
    case SM_RPARAM_ANCHOR: hi = SM_ANCHOR_END; break;
    case SM_RPARAM_MIN_OVERLAP:
    case SM_RPARAM_MAX_HITS_PER_PATTERN:
    case SM_RPARAM_MAX_HITS_PER_RECORD: hi = UINT32_MAX; break;
    case SM_RPARAM_FEWEST_ERRORS: hi = 1; break;
    default:
        if (lower) *lower = 0;
        if (upper) *upper = 0;
        return SM_ERR_INVALID;
    }
    if (lower) *lower = lo;
    if (upper) *upper = hi;
    return SM_OK;
}

int sm_runner_params_set(sm_runner_params *p, sm_runner_param param, int64_t v) {
    int64_t lo, hi;
    if (!p || sm_runner_param_bounds(param, &lo, &hi) != SM_OK || v < lo || v > hi) return SM_ERR_INVALID;
    sm_runner_options *o = &p->options;
    switch (param) {
    case SM_RPARAM_THREADS: o->threads = (unsigned)v; break;
    case SM_RPARAM_CHUNK_SIZE: o->chunk_size = (size_t)v; break;
    case SM_RPARAM_COUNT_ONLY: o->count_only = (int)v; break;
    case SM_RPARAM_OVERLAP_FREE: o->overlap_free = (int)v; break;
    case SM_RPARAM_BACKEND: o->backend = (sm_backend)v; break;
    case SM_RPARAM_GPU_DEVICE: o->gpu_device = (int)v; break;
    case SM_RPARAM_CIRCULAR: o->circular = (int)v; break;
    case SM_RPARAM_ANCHOR: o->anchor = (sm_anchor)v; break;
    case SM_RPARAM_MIN_OVERLAP: o->min_overlap = (uint32_t)v; break;
    case SM_RPARAM_MAX_HITS_PER_PATTERN: o->max_hits_per_pattern = (uint32_t)v; break;
    case SM_RPARAM_MAX_HITS_PER_RECORD: o->max_hits_per_record = (uint32_t)v; break;
    case SM_RPARAM_FEWEST_ERRORS: o->fewest_errors = (int)v; break;
    default: return SM_ERR_INVALID;
    }
    return SM_OK;
}

int sm_runner_params_get(const sm_runner_params *p, sm_runner_param param, int64_t *value) {
    if (value) *value = 0;
    if (!p || !value) return SM_ERR_INVALID;
    const sm_runner_options *o = &p->options;
    switch (param) {
    case SM_RPARAM_THREADS: *value = o->threads; break;
    case SM_RPARAM_CHUNK_SIZE: *value = (int64_t)o->chunk_size; break;
    case SM_RPARAM_COUNT_ONLY: *value = o->count_only; break;
    case SM_RPARAM_OVERLAP_FREE: *value = o->overlap_free; break;
    case SM_RPARAM_BACKEND: *value = o->backend; break;
    case SM_RPARAM_GPU_DEVICE: *value = o->gpu_device; break;
    case SM_RPARAM_CIRCULAR: *value = o->circular; break;
    case SM_RPARAM_ANCHOR: *value = o->anchor; break;
    case SM_RPARAM_MIN_OVERLAP: *value = o->min_overlap; break;
    case SM_RPARAM_MAX_HITS_PER_PATTERN: *value = o->max_hits_per_pattern; break;
    case SM_RPARAM_MAX_HITS_PER_RECORD: *value = o->max_hits_per_record; break;
    case SM_RPARAM_FEWEST_ERRORS: *value = o->fewest_errors; break;
    default: return SM_ERR_INVALID;
    }
    return SM_OK;
}

void sm_runner_params_set_context(sm_runner_params *p, void *ctx) {
    if (p) p->options.ctx = ctx;
}

void sm_runner_params_set_on_hit(sm_runner_params *p, sm_hit_fn on_hit) {
    if (p) p->options.on_hit = on_hit;
}

void sm_runner_params_set_on_record_done(sm_runner_params *p, void (*on_record_done)(uint64_t record, void *ctx)) {
    if (p) p->options.on_record_done = on_record_done;
}

void sm_runner_params_set_on_record_summary(sm_runner_params *p,
                                            int (*on_record_summary)(const sm_record_summary *summary, void *ctx)) {
    if (p) p->options.on_record_summary = on_record_summary;
}

int sm_runner_create_with_params(const sm_db *db, const sm_runner_params *p, sm_runner **runner, sm_error *err) {
    if (!p) {
        if (runner) *runner = NULL;
        return sm_set_error(err, SM_ERR_INVALID, "runner needs a database and options");
    }
    return sm_runner_create(db, &p->options, runner, err);
}
