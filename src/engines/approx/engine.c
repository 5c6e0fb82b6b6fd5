/* The approximate engines behind the engine interface (src/engines/engine.h):
 * bit-sliced k mismatches, Myers' bit-vectors and the wavefront DP (plain
 * word states, the SIMD path chosen when a state is made), and the
 * pigeonhole filter (its own state). */
#include "engines/approx/approx.h"
#include "engines/approx/pigeonhole.h"
#include "engines/engine.h"

/* The GPU parts (*_gpu.c). */
extern const sm_gpu_part sm_my_gpu_part;
extern const sm_gpu_part sm_km_gpu_part;
extern const sm_gpu_part sm_ph_gpu_part;

/* Results: the start recovery tables of a thread, for every engine that
   reports edit ends, and the PAM filter of k-mismatch windows. */
static void *results_new(void) { return sm_edit_cache_new(); }
static void results_free(void *results) { sm_edit_cache_free(results); }
static int resolve(const sm_db *db, void *results, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                   uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders) {
    return sm_edits_resolve(db, results, sink, from, text, len, pos0, first_end, last_end, borders);
}

/* The choice: the kernel path, and (Myers, mismatch) the text-lane mode above it. */
#define LANES_SHIFT 8
static void *path_state(size_t words, const sm_state_env *env) {
    sm_word_state *st = sm_word_state_new(words, env);
    if (st) {
        int lanes = env->variant ? env->variant->text_lanes : SM_LANES_AUTO;
        st->choice = (int)sm_approx_path_for(env->cpu) | (lanes << LANES_SHIFT);
    }
    return st;
}
static sm_approx_path choice_path(const sm_word_state *st) { return (sm_approx_path)(st->choice & 0xff); }
static sm_lanes_mode choice_lanes(const sm_word_state *st) { return (sm_lanes_mode)(st->choice >> LANES_SHIFT); }

/* ---------------------------------------------------------- k mismatches */

static int km_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    return sm_km_build(in->keys, in->nkeys, in->alphabet, in->flags, in->k, in->max_bytes, section, err);
}
static int km_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_km_validate(bytes, size, in->outputs, err);
}
static void *km_state_new(const sm_section *s, const sm_state_env *env) {
    return path_state(sm_km_state_words(s->bytes), env);
}
static void km_state_reset(const sm_section *s, void *state) {
    sm_km_state_reset(s->bytes, ((sm_word_state *)state)->words);
}
static int km_state_fits(const sm_section *s, const void *state) {
    return sm_word_state_fits(state, sm_km_state_words(s->bytes));
}
static void km_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_word_state *st = state;
    sm_km_scan_mode(s->bytes, st->words, text, len, pos0, sink, choice_path(st), choice_lanes(st));
}

const sm_engine_ops sm_engine_mismatch = {
    .kind = SM_SECTION_MISMATCH,
    .name = "mismatch",
    .engine = SM_ENGINE_MISMATCH,
    .matches = 1u << SM_MATCH_MISMATCHES,
    .build = km_build,
    .validate = km_validate,
    .state_new = km_state_new,
    .state_reset = km_state_reset,
    .state_free = sm_word_state_free,
    .state_fits = km_state_fits,
    .scan = km_scan,
    .filter = sm_pam_filter_windows,
    .gpu = &sm_km_gpu_part,
};

/* ---------------------------------------------------------------- Myers */

static int my_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    return sm_my_build(in->keys, in->nkeys, in->alphabet, in->flags, in->k, in->max_bytes, section, err);
}
static int my_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_my_validate(bytes, size, in->outputs, err);
}
static void *my_state_new(const sm_section *s, const sm_state_env *env) {
    return path_state(sm_my_state_words(s->bytes), env);
}
static void my_state_reset(const sm_section *s, void *state) {
    sm_my_state_reset(s->bytes, ((sm_word_state *)state)->words);
}
static int my_state_fits(const sm_section *s, const void *state) {
    return sm_word_state_fits(state, sm_my_state_words(s->bytes));
}
static void my_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_word_state *st = state;
    sm_my_scan_mode(s->bytes, st->words, text, len, pos0, sink, choice_path(st), choice_lanes(st));
}

const sm_engine_ops sm_engine_myers = {
    .kind = SM_SECTION_MYERS,
    .name = "myers",
    .engine = SM_ENGINE_MYERS,
    .matches = 1u << SM_MATCH_EDITS,
    .build = my_build,
    .validate = my_validate,
    .state_new = my_state_new,
    .state_reset = my_state_reset,
    .state_free = sm_word_state_free,
    .state_fits = my_state_fits,
    .scan = my_scan,
    .results_new = results_new,
    .results_free = results_free,
    .resolve = resolve,
    .gpu = &sm_my_gpu_part,
};

/* ------------------------------------------------------------- wavefront */

static int wf_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    return sm_wf_build(in->keys, in->nkeys, in->alphabet, in->flags, in->k, in->max_bytes, section, err);
}
static int wf_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_wf_validate(bytes, size, in->outputs, err);
}
static void *wf_state_new(const sm_section *s, const sm_state_env *env) {
    return path_state(sm_wf_state_words(s->bytes), env);
}
static void wf_state_reset(const sm_section *s, void *state) {
    sm_wf_state_reset(s->bytes, ((sm_word_state *)state)->words);
}
static int wf_state_fits(const sm_section *s, const void *state) {
    return sm_word_state_fits(state, sm_wf_state_words(s->bytes));
}
static void wf_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_word_state *st = state;
    sm_wf_scan_path(s->bytes, st->words, text, len, pos0, sink, choice_path(st));
}
static void wf_finish(const sm_section *s, void *state, uint64_t end_pos, sm_sink *sink) {
    sm_wf_finish(s->bytes, ((sm_word_state *)state)->words, end_pos, sink);
}

const sm_engine_ops sm_engine_wavefront = {
    .kind = SM_SECTION_WAVEFRONT,
    .name = "wavefront",
    .engine = SM_ENGINE_WAVEFRONT,
    .matches = 1u << SM_MATCH_EDITS,
    .build = wf_build,
    .validate = wf_validate,
    .state_new = wf_state_new,
    .state_reset = wf_state_reset,
    .state_free = sm_word_state_free,
    .state_fits = wf_state_fits,
    .scan = wf_scan,
    .finish = wf_finish,
    .results_new = results_new,
    .results_free = results_free,
    .resolve = resolve,
};

/* ------------------------------------------------------------ pigeonhole */

static int ph_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    return sm_ph_build(in->keys, in->nkeys, in->alphabet, in->flags, in->match, in->k, in->build_threads,
                       in->max_bytes, section, err);
}
static int ph_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_ph_validate(bytes, size, in->outputs, in->match, err);
}
static void *ph_state_new(const sm_section *s, const sm_state_env *env) { return sm_ph_state_new(s->bytes, env->cpu); }
static void ph_state_reset(const sm_section *s, void *state) {
    (void)s;
    sm_ph_state_reset(state);
}
static void ph_state_free(void *state) { sm_ph_state_free(state); }
static int ph_state_fits(const sm_section *s, const void *state) { return sm_ph_state_fits(s->bytes, state); }
static void ph_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_ph_scan(s->bytes, state, text, len, pos0, sink);
}
static void ph_finish(const sm_section *s, void *state, uint64_t end_pos, sm_sink *sink) {
    sm_ph_finish(s->bytes, state, end_pos, sink);
}

const sm_engine_ops sm_engine_pigeonhole = {
    .kind = SM_SECTION_PIGEONHOLE,
    .name = "pigeonhole",
    .engine = SM_ENGINE_PIGEONHOLE,
    .matches = (1u << SM_MATCH_MISMATCHES) | (1u << SM_MATCH_EDITS),
    .traits = SM_ENGINE_TRAIT_LIMITED,
    .build = ph_build,
    .validate = ph_validate,
    .state_new = ph_state_new,
    .state_reset = ph_state_reset,
    .state_free = ph_state_free,
    .state_fits = ph_state_fits,
    .scan = ph_scan,
    .finish = ph_finish,
    .results_new = results_new,
    .results_free = results_free,
    .resolve = resolve,
    .filter = sm_pam_filter_windows,
    .gpu = &sm_ph_gpu_part,
};
