/* Shift-And behind the engine interface (src/engines/engine.h). */
#include <stddef.h>

#include "engines/bitparallel/shiftand.h"
#include "engines/engine.h"

extern const sm_gpu_part sm_sa_gpu_part; /* shiftand_gpu.c */

static int sa_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    return sm_sa_build(in->keys, in->nkeys, in->alphabet, in->flags, in->max_bytes, section, err);
}

static int sa_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_sa_validate(bytes, size, in->outputs, err);
}

static void *sa_state_new(const sm_section *s, const sm_state_env *env) {
    sm_word_state *st = sm_word_state_new(sm_sa_state_words(s->bytes), env);
    if (st) st->choice = env->cpu->avx2;
    return st;
}

static void sa_state_reset(const sm_section *s, void *state) {
    sm_sa_state_reset(s->bytes, ((sm_word_state *)state)->words);
}

static int sa_state_fits(const sm_section *s, const void *state) {
    return sm_word_state_fits(state, sm_sa_state_words(s->bytes));
}

static void sa_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_word_state *st = state;
    sm_sa_scan(s->bytes, s->patterns, st->words, text, len, pos0, sink, st->choice);
}

const sm_engine_ops sm_engine_shiftand = {
    .kind = SM_SECTION_SHIFTAND,
    .name = "shiftand",
    .engine = SM_ENGINE_SHIFTAND,
    .matches = 1u << SM_MATCH_EXACT,
    .build = sa_build,
    .validate = sa_validate,
    .state_new = sa_state_new,
    .state_reset = sa_state_reset,
    .state_free = sm_word_state_free,
    .state_fits = sa_state_fits,
    .scan = sa_scan,
    .gpu = &sm_sa_gpu_part,
};
