/* The k-mer table behind the engine interface (src/engines/engine.h). */
#include <stddef.h>
#include <stdlib.h>

#include "engines/engine.h"
#include "engines/kmer/kmer_private.h"

extern const sm_gpu_part sm_kt_gpu_part; /* kmer_gpu.c */

typedef struct {
    sm_word_state words;
    sm_kt_variant variant;
} kt_state;

static int kt_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    sm_kt_tuning tuning = {0, 0};
    if (in->tuning) tuning = (sm_kt_tuning){in->tuning->kmer_filter_log2, in->tuning->kmer_collide};
    return sm_kt_build(in->keys, in->nkeys, in->fold, in->max_bytes, &tuning, section, err);
}
static int kt_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_kt_validate(bytes, size, in->outputs, err);
}
static void *kt_state_new(const sm_section *s, const sm_state_env *env) {
    size_t n = sm_kt_state_words(s->bytes);
    kt_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->words.words = calloc(n ? n : 1, sizeof(uint64_t));
    if (!st->words.words) {
        free(st);
        return NULL;
    }
    st->words.nwords = n;
    st->words.level = env->cpu->level;
    sm_kt_choose(env->cpu, env->variant ? env->variant->kmer_way - 1 : -1, &st->variant);
    return st;
}
static void kt_state_free(void *state) { sm_word_state_free(state); }
static void kt_state_reset(const sm_section *s, void *state) { sm_kt_state_reset(s->bytes, ((kt_state *)state)->words.words); }
static int kt_state_fits(const sm_section *s, const void *state) {
    return sm_word_state_fits(state, sm_kt_state_words(s->bytes));
}
static void kt_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    kt_state *st = state;
    sm_kt_scan(s->bytes, &st->variant, st->words.words, text, len, pos0, sink);
}
static size_t kt_visit_counters(const sm_section *s) { return sm_kt_visit_counters(s->bytes) + 1; }
static void kt_fold(const sm_section *s, uint32_t *visits, uint64_t *counts) {
    sm_kt_fold_visits(s->bytes, visits, counts);
}

const sm_engine_ops sm_engine_kmer = {
    .kind = SM_SECTION_KMER,
    .name = "kmer",
    .engine = SM_ENGINE_KMER,
    .matches = 1u << SM_MATCH_EXACT,
    .traits = SM_ENGINE_TRAIT_LIMITED,
    .build = kt_build,
    .validate = kt_validate,
    .state_new = kt_state_new,
    .state_reset = kt_state_reset,
    .state_free = kt_state_free,
    .state_fits = kt_state_fits,
    .scan = kt_scan,
    .visit_counters = kt_visit_counters,
    .fold_visits = kt_fold,
    .gpu = &sm_kt_gpu_part,
};
