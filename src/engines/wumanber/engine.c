/* Wu-Manber behind the engine interface (src/engines/engine.h). */
#include <stddef.h>

#include "engines/engine.h"
#include "engines/wumanber/wm_private.h"
#include "backends/cuda/cuda_scan.h" /* the GPU's shared-memory limits, for gpu_describe */



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

static void wm_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_wumanber *x = &v->u.wumanber;
    uint64_t shift = (uint64_t)1 << x->hash_bits;
    char a[32];
    sm_gpu_size_text(shift, a, sizeof a);
    snprintf(buf, size, "wu-manber (window %u, block %u), a thread per chunk; SHIFT table %s %s", x->shortest, x->block,
             a, 512 + shift <= SM_CUDA_WM_SHIFT_SHARED_MAX ? "in shared memory" : "read through L2");
}

static void wm_gpu_view(const sm_section *s, sm_gpu_view *v) {
    const sm_wm_header *h = (const sm_wm_header *)s->bytes;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_WUMANBER;
    sm_gpu_wumanber *w = &v->u.wumanber;
    w->block = h->block;
    w->bits = h->bits;
    w->hash_bits = h->hash_bits;
    w->direct = h->direct;
    w->shortest = h->shortest;
    w->longest = h->longest;
    w->prefix = h->prefix;
    w->nkeys = h->nkeys;
    w->shift_off = h->shift_off;
    w->bucket_off = h->bucket_off;
    w->entry_off = h->entry_off;
    w->keys_off = h->keys_off;
    w->code_off = offsetof(sm_wm_header, code);
    w->fold_off = offsetof(sm_wm_header, fold);
}

const sm_engine_ops sm_engine_wumanber = {
    .kind = SM_SECTION_WUMANBER,
    .name = "wumanber",
    .engine = SM_ENGINE_WUMANBER,
    .matches = 1u << SM_MATCH_EXACT,
    .build = wm_build,
    .validate = wm_validate,
    .state_new = wm_state_new,
    .state_reset = wm_state_reset,
    .state_free = sm_word_state_free,
    .state_fits = wm_state_fits,
    .scan = wm_scan,
    .gpu_view = wm_gpu_view,
    .gpu_describe = wm_gpu_describe,
};
