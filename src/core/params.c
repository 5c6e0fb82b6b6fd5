/* The stable form of the compile settings (include/seqmatch_compile.h): an
 * opaque sm_compile_params over the struct the compiler reads, numbered
 * parameters with bounds; and sm_db_get, the stable form of sm_db_info. */
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"

struct sm_compile_params {
    sm_compile_options options; /* pam and exact point into the copies below */
    char *pam;
    unsigned char *exact;
    size_t nexact;
};

sm_compile_params *sm_compile_params_new(void) {
    sm_compile_params *p = calloc(1, sizeof *p);
    if (p) sm_compile_options_init(&p->options);
    return p;
}

void sm_compile_params_free(sm_compile_params *p) {
    if (!p) return;
    free(p->pam);
    free(p->exact);
    free(p);
}

static int64_t largest_engine(void) {
    int64_t most = SM_ENGINE_AUTO;
    for (size_t i = 0; i < sm_engine_count(); i++)
        if ((int64_t)sm_engine_at(i) > most) most = (int64_t)sm_engine_at(i);
    return most;
}

int sm_compile_param_bounds(sm_compile_param param, int64_t *lower, int64_t *upper) {
    int64_t lo = 0, hi;
    switch (param) {
    case SM_CPARAM_ALPHABET: hi = SM_ALPHABET_TEXT; break;
    case SM_CPARAM_STRANDS: hi = SM_STRAND_REVERSE; break;
    case SM_CPARAM_FLAGS: hi = SM_FLAG_IGNORE_CASE | SM_FLAG_TEXT_IUPAC; break;
    case SM_CPARAM_ENGINE: hi = largest_engine(); break;
    case SM_CPARAM_BUILD_THREADS: hi = UINT32_MAX; break;
    case SM_CPARAM_MAX_EXPANSION: hi = UINT32_MAX; break;
    case SM_CPARAM_MAX_MEMORY: hi = INT64_MAX; break;
    case SM_CPARAM_MATCH: hi = SM_MATCH_EDITS; break;
    case SM_CPARAM_MAX_ERRORS: hi = UINT32_MAX; break;
    case SM_CPARAM_REPORT: hi = SM_REPORT_ENDS; break;
    case SM_CPARAM_PAM_SIDE: hi = SM_PAM_5PRIME; break;
    case SM_CPARAM_DNA_BULGES:
    case SM_CPARAM_RNA_BULGES: hi = SM_MAX_BULGE; break;
    case SM_CPARAM_BACKEND: hi = SM_BACKEND_CUDA; break;
    case SM_CPARAM_TYPICAL_RECORD: hi = UINT32_MAX; break;
    case SM_CPARAM_BUILD_BACKEND: hi = SM_BACKEND_CUDA; break;
    default:
        if (lower) *lower = 0;
        if (upper) *upper = 0;
        return SM_ERR_INVALID;
    }
    if (lower) *lower = lo;
    if (upper) *upper = hi;
    return SM_OK;
}

int sm_compile_params_set(sm_compile_params *p, sm_compile_param param, int64_t v) {
    int64_t lo, hi;
    if (!p || sm_compile_param_bounds(param, &lo, &hi) != SM_OK || v < lo || v > hi) return SM_ERR_INVALID;
    sm_compile_options *o = &p->options;
    switch (param) {
    case SM_CPARAM_ALPHABET: o->alphabet = (sm_alphabet)v; break;
    case SM_CPARAM_STRANDS: o->strands = (sm_strands)v; break;
    case SM_CPARAM_FLAGS: o->flags = (unsigned)v; break;
    case SM_CPARAM_ENGINE:
        if (v != SM_ENGINE_AUTO && !sm_engine_name((sm_engine)v)) return SM_ERR_INVALID;
        o->engine = (sm_engine)v;
        break;
    case SM_CPARAM_BUILD_THREADS: o->build_threads = (unsigned)v; break;
    case SM_CPARAM_MAX_EXPANSION: o->max_expansion = (uint32_t)v; break;
    case SM_CPARAM_MAX_MEMORY: o->max_memory = (uint64_t)v; break;
    case SM_CPARAM_MATCH: o->match = (sm_match)v; break;
    case SM_CPARAM_MAX_ERRORS: o->max_errors = (uint32_t)v; break;
    case SM_CPARAM_REPORT: o->report = (sm_report)v; break;
    case SM_CPARAM_PAM_SIDE: o->pam_side = (sm_pam_side)v; break;
    case SM_CPARAM_DNA_BULGES: o->dna_bulges = (uint32_t)v; break;
    case SM_CPARAM_RNA_BULGES: o->rna_bulges = (uint32_t)v; break;
    case SM_CPARAM_BACKEND: o->backend = (sm_backend)v; break;
    case SM_CPARAM_TYPICAL_RECORD: o->typical_record = (uint32_t)v; break;
    case SM_CPARAM_BUILD_BACKEND: o->build_backend = (sm_backend)v; break;
    default: return SM_ERR_INVALID;
    }
    return SM_OK;
}

int sm_compile_params_get(const sm_compile_params *p, sm_compile_param param, int64_t *value) {
    if (value) *value = 0;
    if (!p || !value) return SM_ERR_INVALID;
    const sm_compile_options *o = &p->options;
    switch (param) {
    case SM_CPARAM_ALPHABET: *value = o->alphabet; break;
    case SM_CPARAM_STRANDS: *value = o->strands; break;
    case SM_CPARAM_FLAGS: *value = o->flags; break;
    case SM_CPARAM_ENGINE: *value = o->engine; break;
    case SM_CPARAM_BUILD_THREADS: *value = o->build_threads; break;
    case SM_CPARAM_MAX_EXPANSION: *value = o->max_expansion; break;
    case SM_CPARAM_MAX_MEMORY: *value = (int64_t)o->max_memory; break;
    case SM_CPARAM_MATCH: *value = o->match; break;
    case SM_CPARAM_MAX_ERRORS: *value = o->max_errors; break;
    case SM_CPARAM_REPORT: *value = o->report; break;
    case SM_CPARAM_PAM_SIDE: *value = o->pam_side; break;
    case SM_CPARAM_DNA_BULGES: *value = o->dna_bulges; break;
    case SM_CPARAM_RNA_BULGES: *value = o->rna_bulges; break;
    case SM_CPARAM_BACKEND: *value = o->backend; break;
    case SM_CPARAM_TYPICAL_RECORD: *value = o->typical_record; break;
    case SM_CPARAM_BUILD_BACKEND: *value = o->build_backend; break;
    default: return SM_ERR_INVALID;
    }
    return SM_OK;
}

int sm_compile_params_set_pam(sm_compile_params *p, const char *pam) {
    if (!p) return SM_ERR_INVALID;
    char *copy = NULL;
    if (pam && !(copy = strdup(pam))) return SM_ERR_NOMEM;
    free(p->pam);
    p->pam = copy;
    p->options.pam = copy;
    return SM_OK;
}

int sm_compile_params_set_exact(sm_compile_params *p, const unsigned char *flags, size_t n) {
    if (!p) return SM_ERR_INVALID;
    unsigned char *copy = NULL;
    if (flags) {
        if (!(copy = malloc(n ? n : 1))) return SM_ERR_NOMEM;
        memcpy(copy, flags, n);
    }
    free(p->exact);
    p->exact = copy;
    p->nexact = flags ? n : 0;
    p->options.exact = copy;
    return SM_OK;
}

int sm_compile_with_params(const sm_pattern *patterns, size_t n, const sm_compile_params *p, sm_db **db,
                           sm_error *err) {
    if (db) *db = NULL;
    if (!p) {
        sm_compile_options defaults;
        sm_compile_options_init(&defaults);
        return sm_compile(patterns, n, &defaults, db, err);
    }
    if (p->exact && p->nexact != n)
        return sm_set_error(err, SM_ERR_INVALID, "exact flags for %zu patterns, given %zu patterns", p->nexact, n);
    return sm_compile(patterns, n, &p->options, db, err);
}

int sm_db_get(const sm_db *db, sm_db_attr attr, uint64_t *value) {
    if (value) *value = 0;
    if (!db || !value) return SM_ERR_INVALID;
    sm_db_info in;
    sm_db_get_info(db, &in);
    switch (attr) {
    case SM_DB_ALPHABET: *value = in.alphabet; break;
    case SM_DB_STRANDS: *value = in.strands; break;
    case SM_DB_FLAGS: *value = in.flags; break;
    case SM_DB_PATTERN_COUNT: *value = in.pattern_count; break;
    case SM_DB_MIN_LENGTH: *value = in.min_length; break;
    case SM_DB_MAX_LENGTH: *value = in.max_length; break;
    case SM_DB_SIZE: *value = in.size; break;
    case SM_DB_MATCH: *value = in.match; break;
    case SM_DB_MAX_ERRORS: *value = in.max_errors; break;
    case SM_DB_REPORT: *value = in.report; break;
    case SM_DB_APPROX_PATTERNS: *value = in.approx_patterns; break;
    case SM_DB_APPROX_ENGINE: *value = in.approx_engine; break;
    case SM_DB_SECTION_COUNT: *value = in.section_count; break;
    case SM_DB_PAM_LENGTH: *value = in.pam_length; break;
    case SM_DB_PAM_SIDE: *value = in.pam_side; break;
    case SM_DB_DNA_BULGES: *value = in.dna_bulges; break;
    case SM_DB_RNA_BULGES: *value = in.rna_bulges; break;
    case SM_DB_BUILD_US: *value = (uint64_t)(db->build_seconds * 1e6 + 0.5); break;
    case SM_DB_AUTOMATON_BUILT_ON: *value = db->built.automaton_on_gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU; break;
    case SM_DB_GPU_BUILD_KERNELS_US: *value = (uint64_t)(db->built.gpu_ms[1] * 1e3 + 0.5); break;
    case SM_DB_GPU_BUILD_COPIES_US: *value = (uint64_t)((db->built.gpu_ms[0] + db->built.gpu_ms[2]) * 1e3 + 0.5); break;
    default: return SM_ERR_INVALID;
    }
    return SM_OK;
}
