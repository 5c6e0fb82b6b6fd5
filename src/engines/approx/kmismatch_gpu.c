/* The mismatch engine's GPU part, host side (engines/gpu_part.h): the view
 * of a mismatch section, its description, and the CPU stand-in for its
 * kernel (kmismatch_cuda.cu): each tile's planes, then its threads in turn
 * with the kernel's own code. */
#include <stddef.h>
#include <stdlib.h>

#include "engines/approx/approx_common.h"
#include "engines/approx/kmismatch_gpu.h"
#include "engines/engine.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_mismatch), "the mismatch engine's view fits a GPU view");
_Static_assert(sizeof(sm_km_gpu_key) == sizeof(sm_km_key), "the kernel reads the keys as the section holds them");

static int km_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *view, char *why) {
    const sm_km_header *h = (const sm_km_header *)s->bytes;
    memset(view, 0, sizeof *view);
    view->kind = SM_SECTION_MISMATCH;
    view->results = SM_GPU_RESULTS_HITS;
    sm_gpu_mismatch *v = SM_GPU_VIEW(view, sm_gpu_mismatch);
    v->rows = h->rows;
    v->stride = h->stride;
    v->nkeys = h->nkeys;
    v->k = h->k;
    v->planes = h->planes;
    v->max_key = h->max_key;
    v->pam = db->pam_length;
    v->pam5 = db->pam_side == SM_PAM_5PRIME;
    v->tile = 32 * SM_KM_GPU_THREADS;
    v->bits = h->bits;
    v->mismatch_off = h->mismatch_off;
    v->keys_off = h->keys_off;
    v->class_of_off = offsetof(sm_km_header, class_of);
    if (v->planes > 16) {
        snprintf(why, 256, "engine mismatch takes at most 65535 mismatches on the GPU");
        return -1;
    }
    if ((uint64_t)v->rows * sm_km_gpu_words(v) * 4 > SM_GPU_SHARED_MAX) {
        snprintf(why, 256,
                 "engine mismatch on the GPU keeps a bit plane per text class of a tile in shared memory: %u classes "
                 "and patterns of %u symbols are too many",
                 v->rows, v->max_key);
        return -1;
    }
    return 0;
}

static void km_gpu_describe(const sm_gpu_view *view, char *buf, size_t size) {
    const sm_gpu_mismatch *v = SM_GPU_VIEW(view, const sm_gpu_mismatch);
    char a[32];
    sm_gpu_size_text((uint64_t)v->rows * sm_km_gpu_words(v) * 4, a, sizeof a);
    snprintf(buf, size,
             "bit-sliced mismatch counters across windows: tiles of %u windows, a thread per 32 windows and every key "
             "(%u), %u counter planes; %u class planes in shared memory (%s)%s",
             v->tile, v->nkeys, v->planes, v->rows, a, v->pam ? "; PAM checked before counting" : "");
}

static void *km_gpu_prepare(const sm_gpu_view *view, const uint8_t *section) {
    const sm_gpu_mismatch *v = SM_GPU_VIEW(view, const sm_gpu_mismatch);
    uint32_t *table = malloc(sm_km_gpu_prepared_words(v) * sizeof *table);
    if (table) sm_km_gpu_symbols(v, section, table);
    return table;
}

static void km_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_mismatch *v = SM_GPU_VIEW(&a->view, const sm_gpu_mismatch);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    uint32_t words = sm_km_gpu_words(v), tiles = sm_km_gpu_tiles(a, v);
    uint32_t *planes = malloc((size_t)v->rows * words * sizeof *planes);
    if (!planes) {
        *a->nhits = ~0ull; /* the stand-in fails the batch */
        return;
    }
    for (uint32_t c = 0; c < a->nchunks; c++) {
        const sm_gpu_chunk ch = a->chunks[c];
        for (uint32_t q = 0; q < tiles; q++) {
            uint32_t t0 = ch.c0 + q * v->tile;
            if (t0 >= ch.c1) break;
            memset(planes, 0, (size_t)v->rows * words * sizeof *planes);
            for (uint32_t i = 0; i < 32 * words - 32 && t0 + i < ch.end; i++)
                sm_km_gpu_plane_bit(planes, words, class_of[a->text[t0 + i]], i);
            for (uint32_t t = 0; t < SM_KM_GPU_THREADS; t++)
                sm_km_gpu_windows(a, v, planes, words, a->prepared, ch, t0, t);
        }
    }
    free(planes);
}

const sm_gpu_part sm_km_gpu_part = {
    .view = km_gpu_view,
    .describe = km_gpu_describe,
    .emulate_prepare = km_gpu_prepare,
    .emulate_release = free,
    .emulate = km_gpu_emulate,
};
