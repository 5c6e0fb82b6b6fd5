/* The guide engine's GPU part, host side (engines/gpu_part.h): its view,
 * description, the keys as the kernel reads them, and the CPU stand-in for
 * the kernel (guide_cuda.cu): a chunk's PAMs in turn, each window packed
 * as the warp packs it, then every key of the PAM's side with the
 * kernel's own code. */
#include <stddef.h>
#include <stdlib.h>

#include "engines/engine.h"
#include "engines/guide/guide.h"
#include "engines/guide/guide_gpu.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_guide), "the guide engine's view fits a GPU view");
_Static_assert(2u * (SM_GUIDE_MAX_LENGTH + SM_MAX_BULGE) + SM_GUIDE_MAX_PAM <= 32u * SM_GD_GPU_WINDOW_WORDS,
               "a window holds the longest guide and bulge on both sides of the longest PAM");

static int gd_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *view, char *why) {
    (void)db;
    (void)why;
    const sm_gd_header *h = (const sm_gd_header *)s->bytes;
    const sm_gd_key *keys = (const sm_gd_key *)(s->bytes + h->keys_off);
    const sm_gd_group *groups = (const sm_gd_group *)(s->bytes + h->groups_off);
    memset(view, 0, sizeof *view);
    view->kind = SM_SECTION_GUIDE;
    view->flags = SM_GPU_WARP_CHUNKS;
    view->results = SM_GPU_RESULTS_HITS;
    sm_gpu_guide *v = SM_GPU_VIEW(view, sm_gpu_guide);
    v->nkeys = h->nkeys;
    v->k = h->k;
    v->dna = h->dna_bulges;
    v->rna = h->rna_bulges;
    v->q = h->pam_length;
    v->max_guide = h->max_guide;
    v->pam_sets_off = offsetof(sm_gd_header, pam_sets);
    for (uint32_t i = 0; i < h->nkeys; i++) v->side_keys[groups[keys[i].group].left]++;
    v->side_first[0] = 0;
    v->side_first[1] = v->side_keys[0];
    return 0;
}

static void gd_gpu_describe(const sm_gpu_view *view, char *buf, size_t size) {
    const sm_gpu_guide *v = SM_GPU_VIEW(view, const sm_gpu_guide);
    char bulges[96] = "";
    if (v->dna || v->rna)
        snprintf(bulges, sizeof bulges, ", the masks at each of %u DNA and %u RNA bulge shifts", v->dna, v->rna);
    snprintf(buf, size,
             "every PAM of a chunk a warp, its text packed once; every key of the PAM's side a lane (%u keys), "
             "mismatch masks%s, their lower bounds first",
             v->nkeys, bulges);
}

/* The kernel's tables (sm_gd_gpu_tables): keys right of the PAM first. */
static size_t gd_gpu_extra(const sm_section *s, const sm_gpu_view *view, void *buf) {
    const sm_gpu_guide *v = SM_GPU_VIEW(view, const sm_gpu_guide);
    if (buf) {
        const sm_gd_header *h = (const sm_gd_header *)s->bytes;
        const sm_gd_key *keys = (const sm_gd_key *)(s->bytes + h->keys_off);
        const sm_gd_group *groups = (const sm_gd_group *)(s->bytes + h->groups_off);
        sm_gd_gpu_tables *tb = buf;
        int text_iupac = (h->flags & SM_FLAG_TEXT_IUPAC) != 0;
        sm_gd_text_tables(h->flags, tb->text_set, tb->code_of);
        uint32_t next[2] = {v->side_first[0], v->side_first[1]};
        for (uint32_t i = 0; i < v->nkeys; i++) {
            const sm_gd_group *g = &groups[keys[i].group];
            sm_gd_gpu_key *x = &tb->keys[next[g->left]++];
            memset(x, 0, sizeof *x);
            x->code = keys[i].code;
            x->care = keys[i].care;
            x->output = keys[i].output;
            x->index = i;
            x->length = g->length;
            x->packed = keys[i].packed && !text_iupac;
        }
    }
    return sizeof(sm_gd_gpu_tables) + (size_t)v->nkeys * sizeof(sm_gd_gpu_key);
}

/* The window around the PAM at p as the kernel's warp packs it. */
static void gd_gpu_window(const sm_gpu_scan_args *a, const uint8_t *code_of, sm_gpu_chunk ch, int64_t first,
                          uint64_t *codes, uint64_t *bads) {
    for (uint32_t w = 0; w < SM_GD_GPU_WINDOW_WORDS; w++) {
        uint32_t low = 0, high = 0, bad = 0;
        for (uint32_t i = 0; i < 32; i++) {
            uint32_t no;
            uint32_t c = sm_gd_gpu_symbol(a, code_of, ch.c0, ch.end, first + 32 * w + i, &no);
            low |= (c & 1u) << i;
            high |= (c >> 1) << i;
            bad |= no << i;
        }
        codes[w] = sm_gd_gpu_spread(low) | sm_gd_gpu_spread(high) << 1;
        bads[w] = sm_gd_gpu_spread(bad);
    }
    codes[SM_GD_GPU_WINDOW_WORDS] = 0;
    bads[SM_GD_GPU_WINDOW_WORDS] = SM_GD_LANES;
}

static void gd_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_guide *v = SM_GPU_VIEW(&a->view, const sm_gpu_guide);
    const sm_gd_gpu_tables *tb = a->extra;
    uint64_t codes[SM_GD_GPU_WINDOW_WORDS + 1], bads[SM_GD_GPU_WINDOW_WORDS + 1];
    for (uint32_t c = 0; c < a->nchunks; c++) {
        const sm_gpu_chunk ch = a->chunks[c];
        const uint32_t end = sm_gd_gpu_pam_end(v, ch);
        for (uint32_t p = ch.c0; p < end; p++) {
            int at[2];
            at[0] = p < ch.c1 && sm_gd_gpu_pam_at(a, v, tb->text_set, 0, p);
            at[1] = sm_gd_gpu_pam_at(a, v, tb->text_set, 1, p);
            if (!at[0] && !at[1]) continue;
            const int64_t first = (int64_t)p - sm_gd_gpu_reach(v);
            gd_gpu_window(a, tb->code_of, ch, first, codes, bads);
            for (uint32_t side = 0; side < 2; side++) {
                if (!at[side]) continue;
                for (uint32_t i = 0; i < v->side_keys[side]; i++)
                    sm_gd_gpu_key_at(a, v, &tb->keys[v->side_first[side] + i], codes, bads, first, tb->text_set, ch, p,
                                     side);
            }
        }
    }
}

const sm_gpu_part sm_gd_gpu_part = {
    .view = gd_gpu_view,
    .describe = gd_gpu_describe,
    .extra = gd_gpu_extra,
    .emulate = gd_gpu_emulate,
};
