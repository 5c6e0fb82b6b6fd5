/* Shift-And's GPU part, host side (engines/gpu_part.h): its view, its
 * description, and the CPU stand-in for its kernel (shiftand_cuda.cu). */
#include <stddef.h>

#include "engines/bitparallel/shiftand.h"
#include "engines/bitparallel/shiftand_gpu.h"
#include "engines/engine.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_shiftand), "Shift-And's view fits a GPU view");

static void sa_gpu_describe(const sm_gpu_view *v, char *buf, size_t size) {
    const sm_gpu_shiftand *x = SM_GPU_VIEW(v, const sm_gpu_shiftand);
    uint64_t masks = (uint64_t)x->rows * (x->levels_layout ? 8u * x->group_words : 1u) * 8;
    const char *where = 512 + masks <= SM_SA_GPU_MASKS_SHARED_MAX ? "in shared memory" : "read through L2";
    if (x->levels_layout)
        snprintf(buf, size, "shift-and, %u groups of 64 keys, a thread per chunk and group; first 8 levels %s, "
                 "longer keys compared after them", x->group_words, where);
    else
        snprintf(buf, size, "shift-and, one 64-bit word, a thread per chunk; masks %s", where);
}

static int sa_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *v, char *why) {
    (void)db, (void)why;
    const sm_sa_header *h = (const sm_sa_header *)s->bytes;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_SHIFTAND;
    sm_gpu_shiftand *a = SM_GPU_VIEW(v, sm_gpu_shiftand);
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
    return 0;
}

/* The kernel's work items: every part of every chunk, and every group of
   64 keys in the levels layout. */
static void sa_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_shiftand *v = SM_GPU_VIEW(&a->view, const sm_gpu_shiftand);
    const uint64_t *masks = (const uint64_t *)(a->section + v->masks_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    uint32_t groups = v->levels_layout ? v->group_words : 1;
    for (uint32_t item = 0; item < a->nchunks * a->parts; item++) {
        sm_gpu_chunk ch = sm_gpu_chunk_part(a->chunks[item / a->parts], item % a->parts, a->parts, a->tail, 0);
        if (ch.c0 >= ch.c1) continue;
        for (uint32_t g = 0; g < groups; g++) {
            if (v->levels_layout) sm_sa_gpu_group(a, masks, v->row_stride, class_of, ch, g);
            else sm_sa_gpu_dense(a, masks, v->row_stride, class_of, ch);
        }
    }
}

const sm_gpu_part sm_sa_gpu_part = {
    .view = sa_gpu_view,
    .describe = sa_gpu_describe,
    .emulate = sa_gpu_emulate,
};
