/* The dictionary automaton behind the engine interface (src/engines/engine.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h" /* sm_cuda_device_count */
#include "engines/automaton/automaton.h"
#include "engines/dfa/dfa_internal.h"
#include "engines/engine.h"

extern const sm_gpu_part sm_ac_gpu_part; /* automaton_gpu.c */

typedef struct {
    uint32_t state; /* the DFA state (0 = root) */
    int ssse3;
} ac_state;

/* Key symbols from which a database planned for the GPU has its automaton
   built there unasked. The GPU builds only once its start is over, while the
   CPU's builders run beside that start, so the GPU's build must save more
   than what is left of it; the tables also come back to the host and go to
   the GPU again (bench/results/history.md, "The automaton built on the GPU
   inside search --gpu"). SEQMATCH_GPU_BUILD_FROM=N (symbols) or never
   overrides it, for benchmarks. */
#define GPU_BUILD_FROM_SYMBOLS ((uint64_t)96 << 20)

static uint64_t gpu_build_from(void) {
    const char *v = getenv("SEQMATCH_GPU_BUILD_FROM");
    if (!v || !*v) return GPU_BUILD_FROM_SYMBOLS;
    if (strcmp(v, "never") == 0) return UINT64_MAX;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    return *end ? GPU_BUILD_FROM_SYMBOLS : (uint64_t)n;
}

static int ac_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    int on_gpu = in->build_backend == SM_BACKEND_CUDA;
    if (!on_gpu && in->gpu_planned) {
        uint64_t symbols = 0, from = gpu_build_from();
        for (size_t i = 0; i < in->nkeys; i++) symbols += in->keys[i].len;
        on_gpu = symbols >= from && sm_cuda_device_count() > 0;
    }
    if (on_gpu) {
        double ms[3] = {0, 0, 0};
        int rc = sm_ac_build_gpu(in->keys, in->nkeys, in->fold, 0, in->max_bytes, section, ms, err);
        if (rc == SM_OK && in->report) {
            in->report->automaton_on_gpu = 1;
            memcpy(in->report->gpu_ms, ms, sizeof ms);
        }
        /* asked for: its outcome; chosen: the CPU's build when the GPU cannot */
        if (rc == SM_OK || in->build_backend == SM_BACKEND_CUDA || rc != SM_ERR_DEVICE) return rc;
    }
    return sm_ac_build(in->keys, in->nkeys, in->fold, in->build_threads, in->max_bytes, section, err);
}

static int ac_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_ac_validate(bytes, size, in->outputs, err);
}

static void *ac_state_new(const sm_section *s, const sm_state_env *env) {
    (void)s;
    ac_state *st = calloc(1, sizeof *st);
    if (st) st->ssse3 = env->cpu->ssse3;
    return st;
}

static void ac_state_reset(const sm_section *s, void *state) {
    (void)s;
    ((ac_state *)state)->state = 0;
}

static int ac_state_fits(const sm_section *s, const void *state) {
    (void)s;
    return state != NULL;
}

static void ac_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    ac_state *st = state;
    sm_ac_scan_variant(s->bytes, s->patterns, &st->state, text, len, pos0, sink, st->ssse3);
}

static size_t ac_visit_counters(const sm_section *s) { return ((const sm_ac_header *)s->bytes)->states; }

static void ac_fold(const sm_section *s, uint32_t *visits, uint64_t *counts) {
    sm_ac_fold_visits(s->bytes, visits, counts);
}

static uint32_t ac_dfa_state(const void *state) { return ((const ac_state *)state)->state; }
static void ac_set_dfa_state(void *state, uint32_t q) { ((ac_state *)state)->state = q; }

static void ac_dfa_tables(const sm_section *s, sm_dfa_tables *l) {
    const sm_ac_header *h = (const sm_ac_header *)s->bytes;
    l->states = h->states;
    l->columns = h->columns;
    l->delta_off = h->delta_off;
    l->out_index_off = h->out_index_off;
    l->out_list_off = h->out_list_off;
    l->class_of_off = offsetof(sm_ac_header, class_of);
}

static uint32_t ac_dfa_outputs(const sm_section *s, uint32_t q, const uint32_t **ids) {
    return sm_ac_outputs(s->bytes, q, ids);
}

/* The automaton as a DFA whose accepting states end hits, and its matcher. */
typedef struct {
    const uint8_t *section;
    uint32_t columns;
    sm_dfa *dfa;
    sm_dfa_matcher *matcher;
} ac_chunker;

static void ac_chunker_free(void *p) {
    ac_chunker *c = p;
    if (!c) return;
    sm_dfa_matcher_free(c->matcher);
    sm_dfa_free(c->dfa);
    free(c);
}

static void *ac_chunker_new(const sm_section *s, sm_error *err) {
    ac_chunker *c = calloc(1, sizeof *c);
    if (!c) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c->section = s->bytes;
    c->columns = ((const sm_ac_header *)s->bytes)->columns;
    if (sm_dfa_from_ac_section(s->bytes, SM_DFA_ENDS, &c->dfa, err) != SM_OK ||
        sm_dfa_matcher_create(c->dfa, NULL, &c->matcher, err) != SM_OK) {
        ac_chunker_free(c);
        return NULL;
    }
    return c;
}

static int ac_chunk_states(void *p, uint32_t first, const uint8_t *text, const size_t *cuts, size_t chunks,
                           unsigned threads, uint32_t *states, sm_error *err) {
    ac_chunker *c = p;
    int rc = sm_dfa_ac_chunk_states(c->matcher, c->section, first * c->columns, text, cuts, chunks, threads, states,
                                    err);
    if (rc != SM_OK) return rc;
    for (size_t i = 0; i <= chunks; i++) states[i] /= c->columns;
    return SM_OK;
}

const sm_engine_ops sm_engine_automaton = {
    .kind = SM_SECTION_AUTOMATON,
    .name = "automaton",
    .engine = SM_ENGINE_AUTOMATON,
    .matches = 1u << SM_MATCH_EXACT,
    .traits = SM_ENGINE_TRAIT_LIMITED,
    .build = ac_build,
    .validate = ac_validate,
    .state_new = ac_state_new,
    .state_reset = ac_state_reset,
    .state_free = free,
    .state_fits = ac_state_fits,
    .scan = ac_scan,
    .finish = NULL,
    .visit_counters = ac_visit_counters,
    .fold_visits = ac_fold,
    .dfa_state = ac_dfa_state,
    .set_dfa_state = ac_set_dfa_state,
    .dfa_tables = ac_dfa_tables,
    .dfa_outputs = ac_dfa_outputs,
    .chunker_new = ac_chunker_new,
    .chunker_free = ac_chunker_free,
    .chunk_states = ac_chunk_states,
    .gpu = &sm_ac_gpu_part,
};
