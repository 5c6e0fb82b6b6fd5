/* Wu-Manber behind the engine interface (src/engines/engine.h). */
#include <stddef.h>

#include "engines/engine.h"
#include "engines/wumanber/wm_private.h"

extern const sm_gpu_part sm_wm_gpu_part; /* wm_gpu.c */

static int wm_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    return sm_wm_build(in->keys, in->nkeys, in->fold, NULL, in->max_bytes, section, err);
}
static int wm_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_wm_validate(bytes, size, in->outputs, err);
}
static void *wm_state_new(const sm_section *s, const sm_state_env *env) {
    sm_word_state *st = sm_word_state_new(sm_wm_state_words(s->bytes), env);
    if (st) st->choice = env->variant && env->variant->no_prefilter ? 0 : 1;
    return st;
}
static void wm_state_reset(const sm_section *s, void *state) {
    sm_wm_state_reset(s->bytes, ((sm_word_state *)state)->words);
}
static int wm_state_fits(const sm_section *s, const void *state) {
    return sm_word_state_fits(state, sm_wm_state_words(s->bytes));
}
static void wm_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_word_state *st = state;
    int simd = st->level >= SM_SIMD_AVX2 ? 2 : st->level >= SM_SIMD_SSE ? 1 : 0;
    sm_wm_scan(s->bytes, st->words, text, len, pos0, sink, simd, st->choice);
}

const sm_engine_ops sm_engine_wumanber = {
    .kind = SM_SECTION_WUMANBER,
    .name = "wumanber",
    .engine = SM_ENGINE_WUMANBER,
    .matches = 1u << SM_MATCH_EXACT,
    .traits = SM_ENGINE_TRAIT_LIMITED,
    .build = wm_build,
    .validate = wm_validate,
    .state_new = wm_state_new,
    .state_reset = wm_state_reset,
    .state_free = sm_word_state_free,
    .state_fits = wm_state_fits,
    .scan = wm_scan,
    .gpu = &sm_wm_gpu_part,
};
