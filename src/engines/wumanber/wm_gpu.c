/* Wu-Manber's GPU part, host side (engines/gpu_part.h): its view, its
 * description, and the CPU stand-in for its kernel (wm_cuda.cu). */
#include <stddef.h>

#include "engines/engine.h"
#include "engines/wumanber/wm_gpu.h"
#include "engines/wumanber/wm_private.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_wumanber), "Wu-Manber's view fits a GPU view");

static void wm_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_wumanber *x = SM_GPU_VIEW(v, const sm_gpu_wumanber);
    uint64_t shift = (uint64_t)1 << x->hash_bits;
    char a[32];
    sm_gpu_size_text(shift, a, sizeof a);
    snprintf(buf, size, "wu-manber (window %u, block %u), a thread per chunk; SHIFT table %s %s", x->shortest, x->block,
             a, 512 + shift <= SM_WM_GPU_SHIFT_SHARED_MAX ? "in shared memory" : "read through L2");
}

static int wm_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *v, char *why) {
    (void)db, (void)why;
    const sm_wm_header *h = (const sm_wm_header *)s->bytes;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_WUMANBER;
    sm_gpu_wumanber *w = SM_GPU_VIEW(v, sm_gpu_wumanber);
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
    return 0;
}

/* The kernel's per-chunk code, over every part of every chunk. */
static void wm_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_wumanber *v = SM_GPU_VIEW(&a->view, const sm_gpu_wumanber);
    sm_wm_gpu_tables t;
    t.shift = a->section + v->shift_off;
    t.code = a->section + v->code_off;
    t.fold = a->section + v->fold_off;
    t.keys = a->section + v->keys_off;
    t.bucket = (const uint32_t *)(a->section + v->bucket_off);
    t.entry = (const sm_wm_gpu_entry *)(a->section + v->entry_off);
    for (uint32_t item = 0; item < a->nchunks * a->parts; item++) {
        sm_gpu_chunk ch = sm_gpu_chunk_part(a->chunks[item / a->parts], item % a->parts, a->parts, a->tail, 0);
        if (ch.c0 < ch.c1) sm_wm_gpu_chunk(a, &t, ch);
    }
}

const sm_gpu_part sm_wm_gpu_part = {
    .view = wm_gpu_view,
    .describe = wm_gpu_describe,
    .emulate = wm_gpu_emulate,
};
