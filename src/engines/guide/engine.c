/* The guide engine behind the engine interface (src/engines/engine.h). */
#include "engines/engine.h"
#include "engines/guide/guide.h"

extern const sm_gpu_part sm_gd_gpu_part;

static int gd_build(const sm_build_input *in, sm_buf *section, sm_error *err) {
    if (in->alphabet != SM_ALPHABET_DNA || in->match != SM_MATCH_MISMATCHES || in->pam_length == 0)
        return sm_set_error(err, SM_ERR_INVALID, "the guide engine takes dna guides with a PAM and mismatches");
    return sm_gd_build(in->keys, in->nkeys, in->flags, in->k, in->pam_length, in->pam_side, in->dna_bulges,
                       in->rna_bulges, in->max_bytes, section, err);
}
static int gd_validate(const uint8_t *bytes, size_t size, const sm_validate_input *in, sm_error *err) {
    return sm_gd_validate(bytes, size, in->outputs, in->header, err);
}
static void *gd_state_new(const sm_section *s, const sm_state_env *env) {
    (void)env;
    return sm_gd_state_new(s->bytes);
}
static void gd_state_reset(const sm_section *s, void *state) {
    (void)s;
    sm_gd_state_reset(state);
}
static void gd_state_free(void *state) { sm_gd_state_free(state); }
static int gd_state_fits(const sm_section *s, const void *state) { return sm_gd_state_fits(s->bytes, state); }
static void gd_scan(const sm_section *s, void *state, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_gd_scan(s->bytes, state, text, len, pos0, sink);
}
static void gd_finish(const sm_section *s, void *state, uint64_t end_pos, sm_sink *sink) {
    sm_gd_finish(s->bytes, state, end_pos, sink);
}

const sm_engine_ops sm_engine_guide = {
    .kind = SM_SECTION_GUIDE,
    .name = "guide",
    .engine = SM_ENGINE_GUIDE,
    .matches = 1u << SM_MATCH_MISMATCHES,
    .traits = SM_ENGINE_TRAIT_NEEDS_PAM | SM_ENGINE_TRAIT_BULGES | SM_ENGINE_TRAIT_LIMITED,
    .build = gd_build,
    .validate = gd_validate,
    .state_new = gd_state_new,
    .state_reset = gd_state_reset,
    .state_free = gd_state_free,
    .state_fits = gd_state_fits,
    .scan = gd_scan,
    .finish = gd_finish,
    .gpu = &sm_gd_gpu_part,
};
