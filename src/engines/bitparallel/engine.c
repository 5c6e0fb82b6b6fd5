/* Shift-And behind the engine interface (src/engines/engine.h). */
#include <stddef.h>

#include "engines/bitparallel/shiftand.h"
#include "engines/engine.h"
#include "backends/cuda/cuda_scan.h" /* the GPU's shared-memory limits, for gpu_describe */

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

static void sa_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_shiftand *x = &v->u.shiftand;
    uint64_t masks = (uint64_t)x->rows * (x->levels_layout ? 8u * x->group_words : 1u) * 8;
    const char *where = 512 + masks <= SM_CUDA_SA_MASKS_SHARED_MAX ? "in shared memory" : "read through L2";
    if (x->levels_layout)
        snprintf(buf, size, "shift-and, %u groups of 64 keys, a thread per chunk and group; first 8 levels %s, "
                 "longer keys compared after them", x->group_words, where);
    else
        snprintf(buf, size, "shift-and, one 64-bit word, a thread per chunk; masks %s", where);
}

static void sa_gpu_view(const sm_section *s, sm_gpu_view *v) {
    const sm_sa_header *h = (const sm_sa_header *)s->bytes;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_SHIFTAND;
    sm_gpu_shiftand *a = &v->u.shiftand;
    a->levels_layout = h->layout == SM_SA_LEVELS;
    a->rows = h->rows;
    a->row_stride = h->row_stride;
    a->group_words = h->layout == SM_SA_LEVELS ? h->group_words : 1;
    a->final_count = h->final_count;
    a->levels = h->levels;
    a->first_final = h->first_final;
    a->masks_off = h->masks_off;
    a->starts_off = h->starts_off;
    a->finals_off = h->finals_off;
    a->final_base_off = h->final_base_off;
    a->out_index_off = h->out_index_off;
    a->out_list_off = h->out_list_off;
    a->class_of_off = offsetof(sm_sa_header, class_of);
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
    .gpu_view = sa_gpu_view,
    .gpu_describe = sa_gpu_describe,
};
