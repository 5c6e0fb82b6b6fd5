/* The registry: the one place that lists the engines. The core, the runner
 * and the backends find an engine here, by the kind of its database section
 * or by its public id, and call it through its operations; the command's
 * --engine names, its help, the Python package and the tests take the list
 * from here (sm_engine_count, sm_engine_at), and tests/registry/drift.sh
 * fails when a list written elsewhere differs from it. */
#include <stdlib.h>
#include <string.h>

#include "engines/engine.h"

/* Every engine's table (defined in its folder), one X(name) each, in the
   order --engine lists them. Adding an engine is one X(...) here. */
#define SM_ENGINES(X)                                                                                                  \
    X(automaton) X(kmer) X(shiftand) X(mismatch) X(myers) X(wavefront) X(pigeonhole) X(wumanber) X(guide)

#define DECLARE(name) extern const sm_engine_ops sm_engine_##name;
SM_ENGINES(DECLARE)
#define ENTRY(name) &sm_engine_##name,
static const sm_engine_ops *const engines[] = {SM_ENGINES(ENTRY)};

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

/* The public side (include/seqmatch.h). */
size_t sm_engine_count(void) { return sizeof engines / sizeof *engines; }

sm_engine sm_engine_at(size_t index) {
    return index < sizeof engines / sizeof *engines ? engines[index]->engine : SM_ENGINE_AUTO;
}

const char *sm_engine_name(sm_engine engine) {
    if (engine == SM_ENGINE_AUTO) return "auto";
    const sm_engine_ops *ops = sm_engine_for_id(engine);
    return ops ? ops->name : NULL;
}

int sm_engine_from_name(const char *name, sm_engine *engine) {
    if (!name) return SM_ERR_INVALID;
    if (strcmp(name, "auto") == 0) {
        *engine = SM_ENGINE_AUTO;
        return SM_OK;
    }
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        if (strcmp(engines[i]->name, name) == 0) {
            *engine = engines[i]->engine;
            return SM_OK;
        }
    return SM_ERR_INVALID;
}

unsigned sm_engine_matches(sm_engine engine) {
    const sm_engine_ops *ops = sm_engine_for_id(engine);
    return ops ? ops->matches : 0;
}

unsigned sm_engine_traits(sm_engine engine) {
    const sm_engine_ops *ops = sm_engine_for_id(engine);
    return ops ? ops->traits : 0;
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
