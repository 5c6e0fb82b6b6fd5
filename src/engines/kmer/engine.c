/* The k-mer table behind the engine interface (src/engines/engine.h). */
#include <stddef.h>
#include <stdlib.h>

#include "engines/engine.h"
#include "engines/kmer/kmer_private.h"
#include "engines/kmer/kmer_gpu.h" /* sm_kh_gpu_pre_bits and the GPU's limits, for gpu_describe */

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

/* Does the byte map send A/a to 0, C/c to 1, G/g to 2, T/t/U/u to 3 and
   break on every other byte? The GPU then decodes four bytes at a time. */
static uint32_t kt_dna_codes(const uint8_t code_of[256]) {
    for (int b = 0; b < 256; b++) {
        int u = b & ~0x20;
        uint8_t want = !(b & 0x80) && (b & 0x40) ? (u == 'A' ? 0 : u == 'C' ? 1 : u == 'G' ? 2 : u == 'T' || u == 'U' ? 3 : SM_KT_BREAK)
                                                  : SM_KT_BREAK;
        if (code_of[b] != want) return 0;
    }
    return 1;
}

static void kt_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_kmer *x = &v->u.kmer;
    const char *decode = x->dna_codes ? "bytes decoded four at a time" : "bytes decoded by table";
    char a[32], b[32], c[32] = "";
    if (!x->hashed) {
        uint64_t bits = x->words * 8;
        int shared = 256 + bits <= SM_CUDA_KMER_SHARED_MAX;
        int counters = shared && 256 + bits + x->words * 4 + x->slots * 4 <= SM_CUDA_HOPPER_SHARED;
        sm_gpu_size_text(bits, a, sizeof a);
        snprintf(buf, size, "k-mer bitmap (k = %u) %s %s, a warp per chunk, 16 positions per lane, %s; counts per "
                 "key in %s memory", x->k, a, shared ? "in shared memory" : "read through L2", decode,
                 counters ? "shared" : "device");
        return;
    }
    uint64_t filter = (uint64_t)8 << x->filter_log2;
    int shared = 256 + filter <= SM_CUDA_KMER_SHARED_MAX;
    uint32_t pre = shared ? 0 : sm_kh_gpu_pre_bits(x->slots, SM_CUDA_HOPPER_SHARED);
    if (pre >= 1024) sm_gpu_size_text(pre / 8, c, sizeof c);
    sm_gpu_size_text(filter, a, sizeof a);
    sm_gpu_size_text((uint64_t)16 << x->cap_log2, b, sizeof b);
    snprintf(buf, size, "k-mer hash set (k = %u): filter %s %s%s%s, table %s in device memory, a warp per chunk, %s",
             x->k, a, shared ? "in shared memory" : "read through L2", pre >= 1024 ? " behind a pre-filter of " : "",
             pre >= 1024 ? c : "", b, decode);
}

static void kt_gpu_view(const sm_section *s, sm_gpu_view *v) {
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_KMER;
    sm_gpu_kmer *g = &v->u.kmer;
    uint32_t magic;
    memcpy(&magic, s->bytes, sizeof magic);
    if (magic == SM_KH_MAGIC) {
        const sm_kh_header *h = (const sm_kh_header *)s->bytes;
        g->k = h->k;
        g->hashed = 1;
        g->mask = h->mask;
        g->slots = h->slots;
        g->code_of_off = offsetof(sm_kh_header, code_of);
        g->filter_off = h->filter_off;
        g->table_off = h->table_off;
        g->hash_mul = h->hash_mul;
        g->filter_mul = h->filter_mul;
        g->filter_log2 = h->filter_log2;
        g->cap_log2 = h->cap_log2;
        g->out_index_off = h->out_index_off;
        g->out_list_off = h->out_list_off;
        g->dna_codes = kt_dna_codes(h->code_of);
        return;
    }
    const sm_kt_header *h = (const sm_kt_header *)s->bytes;
    g->k = h->k;
    g->mask = h->mask;
    g->slots = h->slots;
    g->code_of_off = offsetof(sm_kt_header, code_of);
    g->bits_off = h->bits_off;
    g->rank_off = h->rank_off;
    g->words = h->words;
    g->out_index_off = h->out_index_off;
    g->out_list_off = h->out_list_off;
    g->dna_codes = kt_dna_codes(h->code_of);
}

const sm_engine_ops sm_engine_kmer = {
    .kind = SM_SECTION_KMER,
    .name = "kmer",
    .engine = SM_ENGINE_KMER,
    .matches = 1u << SM_MATCH_EXACT,
    .build = kt_build,
    .validate = kt_validate,
    .state_new = kt_state_new,
    .state_reset = kt_state_reset,
    .state_free = kt_state_free,
    .state_fits = kt_state_fits,
    .scan = kt_scan,
    .visit_counters = kt_visit_counters,
    .fold_visits = kt_fold,
    .gpu_view = kt_gpu_view,
    .gpu_describe = kt_gpu_describe,
};
