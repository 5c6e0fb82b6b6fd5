/* Myers' GPU part, host side (engines/gpu_part.h): the view of a Myers
 * section, its description, and the CPU stand-in for its kernels
 * (myers_cuda.cu): the lanes with the kernels' own code, a long key's
 * blocks one after the other. */
#include <stddef.h>

#include "engines/approx/approx_common.h"
#include "engines/approx/myers_gpu.h"
#include "engines/engine.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_myers), "Myers' view fits a GPU view");
_Static_assert(sizeof(sm_my_gpu_lane) == sizeof(sm_my_lane) && offsetof(sm_my_gpu_lane, bias) == offsetof(sm_my_lane, bias),
               "the kernels read the lanes as the section holds them");
_Static_assert(sizeof(sm_my_gpu_field) == sizeof(sm_my_field), "the kernels read the fields as the section holds them");
_Static_assert(sizeof(sm_my_gpu_long) == sizeof(sm_my_long) && offsetof(sm_my_gpu_long, peq_at) == offsetof(sm_my_long, peq_at),
               "the kernels read the long keys as the section holds them");

/* The longest key a group of 32 threads takes: 32 blocks. */
#define MY_GPU_LONGEST (32u * 64u)

static int my_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *view, char *why) {
    const sm_my_header *h = (const sm_my_header *)s->bytes;
    memset(view, 0, sizeof *view);
    view->kind = SM_SECTION_MYERS;
    view->flags = SM_GPU_ENDS_OWNED;
    view->results = SM_GPU_RESULTS_ENDS;
    sm_gpu_myers *v = SM_GPU_VIEW(view, sm_gpu_myers);
    const sm_my_lane *lanes = (const sm_my_lane *)(s->bytes + h->lane_info_off);
    const sm_my_long *lk = (const sm_my_long *)(s->bytes + h->long_off);
    v->rows = h->rows;
    v->lanes = h->lanes;
    v->whole = 1;
    while (v->used_lanes < h->lanes && lanes[v->used_lanes].fields) {
        if (lanes[v->used_lanes].width != 64) v->whole = 0;
        v->used_lanes++;
    }
    v->long_keys = h->long_keys;
    v->k = h->k;
    uint32_t blocks = 0;
    for (uint32_t i = 0; i < h->long_keys; i++)
        if (lk[i].blocks > blocks) blocks = lk[i].blocks;
    if (blocks * 64u > MY_GPU_LONGEST) {
        snprintf(why, 256, "engine myers takes patterns of at most %u symbols on the GPU (the longest has %u)",
                 MY_GPU_LONGEST, blocks * 64u);
        return -1;
    }
    v->group = 1;
    while (v->group < blocks) v->group *= 2;
    /* Slices several look-backs long, so that reading back costs little. */
    uint32_t reach = db->max_length + db->max_errors;
    v->slice = 8 * reach > 2048 ? 8 * reach : 2048;
    v->lane_const_off = h->lane_const_off;
    v->lane_info_off = h->lane_info_off;
    v->fields_off = h->fields_off;
    v->peq_off = h->peq_off;
    v->long_off = h->long_off;
    v->long_peq_off = h->long_peq_off;
    v->class_of_off = offsetof(sm_my_header, class_of);
    return 0;
}

static void my_gpu_describe(const sm_gpu_view *view, char *buf, size_t size) {
    const sm_gpu_myers *v = SM_GPU_VIEW(view, const sm_gpu_myers);
    char a[32];
    sm_gpu_size_text((uint64_t)v->rows * v->used_lanes * 8, a, sizeof a);
    int n = snprintf(buf, size,
                     "myers bit-vectors, slices of %u bytes (look-back longest + k), a thread per lane and slice: %u "
                     "lane%s%s, match table %s",
                     v->slice, v->used_lanes, v->used_lanes == 1 ? "" : "s", v->whole ? " of one key" : " of packed keys", a);
    if (v->long_keys && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "; %u key%s over 64 symbols, %u threads each, carries by warp shuffles",
                 v->long_keys, v->long_keys == 1 ? "" : "s", v->group);
}

/* A long key over a slice, its blocks one after the other: what the group
   of threads computes with its prefix scan. */
static void my_gpu_long(const sm_gpu_scan_args *a, const sm_gpu_myers *v, const sm_my_gpu_long *key, sm_gpu_chunk ch) {
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    const uint64_t *peq = (const uint64_t *)(a->section + v->long_peq_off) + key->peq_at;
    uint64_t P[32], M[32];
    const uint32_t nb = key->blocks, top_last = (key->length - 1) % 64;
    for (uint32_t b = 0; b < nb; b++) P[b] = ~0ull, M[b] = 0;
    int64_t score = key->length;
    for (uint32_t i = ch.from; i < ch.c1; i++) {
        const uint64_t *eq = peq + (size_t)sm_my_gpu_row(class_of, sm_my_gpu_byte(a, i)) * nb;
        int hin = 0;
        for (uint32_t b = 0; b < nb; b++) {
            /* as a thread of the group: its map gives the delta entering the
               next block, and its block moves on with the one entering it */
            uint32_t top = b == nb - 1 ? top_last : 63u;
            uint32_t map = sm_my_gpu_map(P[b], M[b], eq[b], top);
            sm_my_gpu_block(&P[b], &M[b], eq[b], hin, top);
            hin = sm_my_gpu_apply(map, hin);
        }
        score += hin;
        if (score <= (int64_t)key->k && i >= ch.c0) sm_gpu_emit(a, i + 1, key->output, (uint32_t)score, SM_GPU_HIT_END);
    }
}

static void my_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_myers *v = SM_GPU_VIEW(&a->view, const sm_gpu_myers);
    const uint64_t *peq = (const uint64_t *)(a->section + v->peq_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    const sm_my_gpu_long *lk = (const sm_my_gpu_long *)(a->section + v->long_off);
    uint32_t slices = sm_my_gpu_slices(a, v);
    for (uint32_t c = 0; c < a->nchunks; c++)
        for (uint32_t q = 0; q < slices; q++) {
            sm_gpu_chunk ch = sm_my_gpu_slice(a, c, q, slices);
            if (ch.c0 >= ch.c1) continue;
            for (uint32_t l = 0; l < v->used_lanes; l++) sm_my_gpu_scan_lane(a, v, peq, v->lanes, class_of, ch, l, v->whole);
            for (uint32_t i = 0; i < v->long_keys; i++) my_gpu_long(a, v, &lk[i], ch);
        }
}

const sm_gpu_part sm_my_gpu_part = {
    .view = my_gpu_view,
    .describe = my_gpu_describe,
    .emulate = my_gpu_emulate,
};
