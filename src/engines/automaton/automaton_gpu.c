/* The automaton's GPU part, host side (engines/gpu_part.h): its view, its
 * description, and the CPU stand-in for its kernel (automaton_cuda.cu). */
#include <stddef.h>
#include <stdlib.h>

#include "engines/automaton/automaton.h"
#include "engines/automaton/automaton_gpu.h"
#include "engines/automaton/build_gpu.h"
#include "engines/automaton/words_gpu.h"
#include "engines/engine.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_automaton), "the automaton's view fits a GPU view");

/* The transition table's size (32-bit entries) from which the GPU looks for
   the keys where they start (bench/results/history.md, "Word lists on the
   GPU from where the words start"). */
#define SM_AC_GPU_WORDS_FROM (3ull << 19)

static int ac_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *v, char *why) {
    (void)db, (void)why;
    const sm_ac_header *h = (const sm_ac_header *)s->bytes;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_AUTOMATON;
    v->results = SM_GPU_RESULTS_HITS;
    v->visits = h->states;
    v->fold_index_off = h->out_index_off;
    v->fold_list_off = h->out_list_off;
    sm_gpu_automaton *a = SM_GPU_VIEW(v, sm_gpu_automaton);
    a->states = h->states;
    a->columns = h->columns;
    a->delta_off = h->delta_off;
    a->out_index_off = h->out_index_off;
    a->out_list_off = h->out_list_off;
    a->class_of_off = offsetof(sm_ac_header, class_of);
    /* A table read through L2 costs a dependent lookup per byte, and past
       SM_AC_GPU_WORDS_FROM far more; there the keys are looked for where
       they start instead (words_gpu.h), when their first classes are rare
       enough. SEQMATCH_CUDA_AC=table or =words chooses, for measurements and
       tests. */
    uint64_t words = (uint64_t)h->states * h->columns;
    int fits = (h->states < 0x8000u && words * 2 + 2 <= SM_GPU_SHARED_MAX) || words * 4 <= SM_GPU_SHARED_MAX;
    const char *way = getenv("SEQMATCH_CUDA_AC");
    int want = way && strcmp(way, "words") == 0 ? 1
               : way && strcmp(way, "table") == 0 ? 0
                                                  : !fits && words * 4 > SM_AC_GPU_WORDS_FROM;
    sm_acw_tables t;
    if (want && sm_acw_build(s->bytes, s->patterns, &t, NULL)) {
        a->words = 1;
        a->words_filter_log2 = t.filter_log2;
        a->words_buckets_log2 = t.buckets_log2;
        a->words_keys = t.keys;
        a->words_size = t.size;
        v->flags = SM_GPU_WARP_CHUNKS;
        v->visits = 0;
    }
    return 0;
}

static size_t ac_gpu_extra(const sm_section *s, const sm_gpu_view *view, void *buf) {
    const sm_gpu_automaton *a = SM_GPU_VIEW(view, const sm_gpu_automaton);
    return a->words ? sm_acw_build(s->bytes, s->patterns, NULL, buf) : 0;
}

static void ac_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_automaton *x = SM_GPU_VIEW(v, const sm_gpu_automaton);
    if (x->words) {
        char f[32], t[32];
        sm_gpu_size_text(((uint64_t)1 << x->words_filter_log2) / 8, f, sizeof f);
        sm_gpu_size_text(x->words_size, t, sizeof t);
        snprintf(buf, size, "automaton's %u keys looked for where they start: a filter of their first 1 to 4 "
                 "classes (%s) in shared memory, candidates verified in a %s table of key windows; a warp per "
                 "chunk, 16 positions per lane", x->words_keys, f, t);
        return;
    }
    uint64_t words = (uint64_t)x->states * x->columns;
    int narrow = x->states < 0x8000u && words * 2 + 2 <= SM_GPU_SHARED_MAX;
    int wide = words * 4 <= SM_GPU_SHARED_MAX;
    char a[32];
    sm_gpu_size_text(narrow ? words * 2 : words * 4, a, sizeof a);
    snprintf(buf, size, "automaton, a thread per chunk; transition table %s (%s entries) %s", a,
             narrow ? "16-bit" : "32-bit", narrow || wide ? "in shared memory" : "read through L2");
}

/* The keys from where they start (words_gpu.h), a chunk by one warp as
   automaton_cuda.cu's word kernel takes it: each lane's classes, the next
   lane's first eight beside them, the filter, then each candidate. */
static void ac_words_emulate(const sm_gpu_scan_args *a) {
    const sm_acw_tables *t = a->extra;
    const uint8_t *base = a->extra;
    const uint32_t *filter = (const uint32_t *)(base + t->filter_off);
    const sm_acw_bucket *buckets = (const sm_acw_bucket *)(base + t->buckets_off);
    const sm_acw_key *keys = (const sm_acw_key *)(base + t->keys_off);
    enum { LANES = 32 };
    for (uint32_t c = 0; c < a->nchunks; c++) {
        const sm_gpu_chunk ch = a->chunks[c];
        for (uint32_t tile = ch.c0 & ~15u; tile < ch.c1; tile += 16 * LANES) {
            uint32_t cw[LANES + 1][4];
            for (uint32_t lane = 0; lane <= LANES; lane++) {
                uint32_t p = tile + 16 * lane, w[4];
                memset(cw[lane], 0, sizeof cw[lane]);
                if (p >= ch.end) continue;
                sm_gpu_load16(a->text + p, w);
                sm_acw_classes(t->class_of, w, p, ch.end, cw[lane]);
            }
            for (uint32_t lane = 0; lane < LANES; lane++) {
                uint32_t p = tile + 16 * lane, passed[2];
                uint32_t piece[6] = {cw[lane][0], cw[lane][1], cw[lane][2], cw[lane][3], cw[lane + 1][0], cw[lane + 1][1]};
                uint32_t pass = sm_acw_candidates(filter, t->filter_log2, t->windows, piece, sm_acw_owned(p, ch), passed);
                for (uint32_t j = 0; j < 16; j++)
                    if ((pass >> j) & 1u)
                        sm_acw_verify(a, t, t->class_of, buckets, keys, p + j, ch.end, sm_acw_window(piece, j),
                                      sm_acw_window(piece, j + 4), sm_acw_lengths_at(passed, j), NULL);
            }
        }
    }
}

/* The kernel's loop for one part of a chunk, a byte at a time. */
static void ac_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_automaton *v = SM_GPU_VIEW(&a->view, const sm_gpu_automaton);
    if (v->words) {
        ac_words_emulate(a);
        return;
    }
    const uint32_t *delta = (const uint32_t *)(a->section + v->delta_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    for (uint32_t item = 0; item < a->nchunks * a->parts; item++) {
        sm_gpu_chunk ch = sm_gpu_chunk_part(a->chunks[item / a->parts], item % a->parts, a->parts, a->tail, 0);
        if (ch.c0 >= ch.c1) continue;
        uint32_t at = 0;
        for (uint32_t i = ch.c0; i < ch.end; i++) {
            uint32_t e = delta[at + class_of[a->text[i]]];
            at = e & ~SM_GPU_DFA_FLAG;
            if (e & SM_GPU_DFA_FLAG) sm_ac_gpu_report(a, v, at / v->columns, i + 1, ch.c1, a->count_only);
        }
    }
}

const sm_gpu_part sm_ac_gpu_part = {
    .view = ac_gpu_view,
    .describe = ac_gpu_describe,
    .extra = ac_gpu_extra,
    .emulate = ac_gpu_emulate,
    .emulate_build = sm_ac_gpu_build_emulate,
};
