/* The registry: the one place that lists the engines. The core, the runner
 * and the backends find an engine here, by the kind of its database section
 * or by its public id, and call it through its operations. */
#include <stdlib.h>

#include "engines/engine.h"

static const sm_engine_ops *const engines[] = {
    &sm_engine_automaton, &sm_engine_shiftand, &sm_engine_mismatch, &sm_engine_myers,
    &sm_engine_wavefront, &sm_engine_kmer,     &sm_engine_pigeonhole, &sm_engine_wumanber,
    &sm_engine_guide,
};

const sm_engine_ops *sm_engine_for_kind(uint32_t kind) {
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        if (engines[i]->kind == kind) return engines[i];
    return NULL;
}

const sm_engine_ops *sm_engine_for_id(sm_engine engine) {
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        if (engines[i]->engine == engine) return engines[i];
    return NULL;
}

const sm_engine_ops *const *sm_engine_all(size_t *count) {
    *count = sizeof engines / sizeof *engines;
    return engines;
}

sm_word_state *sm_word_state_new(size_t nwords, const sm_state_env *env) {
    sm_word_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->words = calloc(nwords ? nwords : 1, sizeof *st->words);
    if (!st->words) {
        free(st);
        return NULL;
    }
    st->nwords = nwords;
    st->level = env->cpu->level;
    return st;
}

void sm_word_state_free(void *state) {
    sm_word_state *st = state;
    if (!st) return;
    free(st->words);
    free(st);
}

int sm_word_state_fits(const void *state, size_t nwords) {
    const sm_word_state *st = state;
    return st && st->nwords >= nwords;
}
