/* The pigeonhole filter's GPU part, host side (engines/gpu_part.h): the
 * view of a pigeonhole section, the views of the exact engines' tables it
 * embeds (the k-mer engine's direct tables, or the automaton), its
 * description, and the CPU stand-in for its kernel (pigeonhole_cuda.cu):
 * every slice in turn with the kernel's own code. */
#include <stddef.h>
#include <stdlib.h>

#include "engines/approx/pigeonhole_gpu.h"
#include "engines/approx/pigeonhole_private.h"
#include "engines/engine.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_pigeonhole), "the pigeonhole filter's view fits a GPU view");
_Static_assert(sizeof(sm_ph_gpu_key) == sizeof(sm_ph_key) && offsetof(sm_ph_gpu_key, peq_at) == offsetof(sm_ph_key, peq_at) &&
                   offsetof(sm_ph_gpu_key, packed) == offsetof(sm_ph_key, packed),
               "the kernel reads the keys as the section holds them");
_Static_assert(sizeof(sm_ph_gpu_piece) == sizeof(sm_ph_piece), "the kernel reads the pieces as the section holds them");
_Static_assert(sizeof(sm_ph_gpu_seed) == sizeof(sm_ph_seed) && offsetof(sm_ph_gpu_seed, index) == offsetof(sm_ph_seed, index),
               "the kernel reads the seed list as the section holds them");
_Static_assert(sizeof(sm_db_pattern) == 24 && offsetof(sm_db_pattern, length) == 16, "piece lengths at word 4 of 6");
_Static_assert(SM_PH_GPU_SEED_MAX == SM_PH_SEED_MAX, "the seed tables' longest piece");

static int ph_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *view, char *why) {
    const sm_ph_header *h = (const sm_ph_header *)s->bytes;
    memset(view, 0, sizeof *view);
    view->kind = SM_SECTION_PIGEONHOLE;
    sm_gpu_pigeonhole *v = SM_GPU_VIEW(view, sm_gpu_pigeonhole);
    v->match = h->match;
    v->edits = h->match == SM_MATCH_EDITS;
    view->flags = v->edits ? SM_GPU_ENDS_OWNED : 0;
    view->results = v->edits ? SM_GPU_RESULTS_ENDS_REPEATED : SM_GPU_RESULTS_HITS;
    v->k = h->k;
    v->nkeys = h->nkeys;
    v->npieces = h->npieces;
    v->rows = h->rows;
    v->max_key = h->max_key;
    v->seeds = h->seeds;
    v->seed_max = h->seed_max;
    v->has_all = h->seed_all_size != 0;
    v->alive_columns = h->alive_off ? h->alive_columns : 0;
    uint32_t reach = db->max_length + db->max_errors;
    v->slice = 16 * reach > 1024 ? 16 * reach : 1024;
    v->keys_off = h->keys_off;
    v->pieces_off = h->pieces_off;
    v->lengths_off = h->lengths_off;
    v->peq_off = h->peq_off;
    v->class_of_off = offsetof(sm_ph_header, class_of);
    v->seed_any_off = h->seed_any_off;
    v->seed_list_off = h->seed_list_off;
    v->alive_off = h->alive_off;
    v->packed = !v->edits && v->seeds && v->has_all && v->max_key <= 32;
    const sm_ph_key *keys = (const sm_ph_key *)(s->bytes + h->keys_off);
    for (uint32_t i = 0; v->packed && i < h->nkeys; i++) v->packed = keys[i].packed != 0;
    v->one_word = v->edits;
    for (uint32_t i = 0; v->one_word && i < h->nkeys; i++) v->one_word = keys[i].blocks == 1;
    /* the tiles want long chunks (a block's 8 KB; pigeonhole_gpu.h) */
    if (v->edits && v->seeds && v->has_all && v->one_word) view->flags |= SM_GPU_WARP_CHUNKS;
    if (v->edits && v->k > SM_PH_GPU_BAND_K) {
        snprintf(why, 256, "engine pigeonhole takes at most %u edits on the GPU (use --engine myers)", SM_PH_GPU_BAND_K);
        return -1;
    }
    return 0;
}

/* The views of the embedded tables, offsets from the section's start. */
static void ph_gpu_tables(const sm_gpu_view *view, const uint8_t *section, sm_ph_gpu_tables *t) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    const sm_gpu_pigeonhole *v = SM_GPU_VIEW(view, const sm_gpu_pigeonhole);
    memset(t, 0, sizeof *t);
    if (v->packed) {
        /* every key read from its end */
        t->rkeys_off = sizeof *t;
        sm_ph_gpu_rkey *r = (sm_ph_gpu_rkey *)(t + 1);
        const sm_ph_key *keys = (const sm_ph_key *)(section + h->keys_off);
        for (uint32_t i = 0; i < h->nkeys; i++) {
            uint32_t m = keys[i].length;
            r[i].code = r[i].care = r[i].lanes = 0;
            for (uint32_t j = 0; j < m; j++) {
                uint32_t to = 2 * (m - 1 - j);
                r[i].code |= ((keys[i].code >> (2 * j)) & 3u) << to;
                r[i].care |= ((keys[i].care >> (2 * j)) & 3u) << to;
                r[i].lanes |= ((keys[i].lanes >> (2 * j)) & 3u) << to;
            }
        }
    }
    if (h->seeds) {
        for (uint32_t L = 1; L <= h->seed_max && L <= SM_PH_SEED_MAX; L++) {
            if (!h->seed_off[L]) continue;
            sm_kt_gpu_view(section + h->seed_off[L], &t->len[L]);
            t->len[L].bits_off += h->seed_off[L];
            t->len[L].rank_off += h->seed_off[L];
            t->len[L].out_index_off += h->seed_off[L];
            t->len[L].out_list_off += h->seed_off[L];
        }
        if (h->seed_all_size) {
            sm_kt_gpu_view(section + h->seed_all_off, &t->all);
            t->all.bits_off += h->seed_all_off;
            t->all.rank_off += h->seed_all_off;
            t->all.out_index_off += h->seed_all_off;
            t->all.out_list_off += h->seed_all_off;
        }
        return;
    }
    sm_section sub = {section + h->ac_off, h->ac_size, NULL};
    sm_gpu_view ac;
    char why[256];
    sm_gpu_db none = {0};
    sm_engine_automaton.gpu->view(&sub, &none, &ac, why);
    t->ac = *SM_GPU_VIEW(&ac, sm_gpu_automaton);
    t->ac.delta_off += h->ac_off;
    t->ac.out_index_off += h->ac_off;
    t->ac.out_list_off += h->ac_off;
    t->ac.class_of_off += h->ac_off;
}

static void ph_gpu_describe(const sm_gpu_view *view, char *buf, size_t size) {
    const sm_gpu_pigeonhole *v = SM_GPU_VIEW(view, const sm_gpu_pigeonhole);
    const char *seeds = v->seeds ? (v->has_all ? "k-mer tables (the combined one, pieces up to" : "k-mer tables (one per piece length, up to")
                                 : "the automaton over the pieces";
    char max[32] = "";
    if (v->seeds) snprintf(max, sizeof max, " %u bases)", v->seed_max);
    char tiles[80] = "";
    if (v->edits && v->seeds && v->has_all && v->one_word)
        snprintf(tiles, sizeof tiles, "tiles of %u bytes a block (chunks of %u bytes or more), else ", SM_PH_GPU_TILE,
                 SM_PH_GPU_TILE_MIN);
    snprintf(buf, size,
             "pigeonhole filter: %u keys cut into %u exact pieces, found by %s%s, %sslices of %u bytes a thread; %s "
             "verified on the GPU%s",
             v->nkeys, v->k + 1, seeds, max, tiles, v->slice,
             v->edits ? "anchors (Myers' search over each anchor's window, or a band of 2k + 1 cells)" : v->packed ? "packed windows" : "windows",
             v->alive_columns ? " after the death tables" : "");
}

static size_t ph_gpu_extra(const sm_section *s, const sm_gpu_view *view, void *buf) {
    const sm_gpu_pigeonhole *v = SM_GPU_VIEW(view, const sm_gpu_pigeonhole);
    if (buf) ph_gpu_tables(view, s->bytes, buf);
    return sizeof(sm_ph_gpu_tables) + (v->packed ? (size_t)v->nkeys * sizeof(sm_ph_gpu_rkey) : 0);
}

/* The kernel's tiles: the bitmap and the packed bases of a tile, then each
   marked position verified, its anchors queued (a small queue, so that full
   queues are met too) and searched after each word of the bitmap. */
static void ph_gpu_emulate_tiles(const sm_gpu_scan_args *a, const sm_gpu_pigeonhole *v, const sm_ph_gpu_tables *tb,
                                 const sm_ph_gpu_combined *cb) {
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    const uint32_t parts = sm_ph_gpu_tile_parts(a);
    uint8_t code_of[256];
    sm_ph_gpu_code_table(code_of, 0, 1);
    static _Thread_local uint64_t codes[SM_PH_GPU_TILE_BITS / 32];
    static _Thread_local uint32_t valid[SM_PH_GPU_TILE_BITS / 32], marks[SM_PH_GPU_TILE_BITS / 32];
    sm_ph_gpu_cand slots[8];
    uint32_t count = 0;
    const sm_ph_gpu_queue later = {slots, &count, 8};
    for (uint32_t c = 0; c < a->nchunks; c++)
        for (uint32_t q = 0; q < parts; q++) {
            const sm_gpu_chunk ch = sm_gpu_chunk_part(a->chunks[c], q, parts, a->tail, a->reach);
            if (ch.c0 >= ch.c1) continue;
            const uint32_t lo = ch.from, hi = ch.c1, first = lo & ~31u, words = (hi - first + 31) / 32;
            for (uint32_t w = 0; w < words; w++)
                marks[w] = sm_ph_gpu_tile_word(a, v, cb, code_of, lo, hi, first + 32 * w, &codes[w], &valid[w]);
            const sm_ph_gpu_tile tile = {codes, valid, first};
            for (uint32_t w = 0; w < words; w++) {
                for (uint32_t bits = marks[w]; bits; bits &= bits - 1)
                    sm_ph_gpu_tile_candidate(a, v, tb, cb, ch, &tile, lo, first + 32 * w + (uint32_t)__builtin_ctz(bits),
                                             &later);
                for (uint32_t i = 0; i < count && i < 8; i++) sm_ph_gpu_window_queued(a, v, slots[i], ch, NULL, class_of);
                count = 0;
            }
        }
}

static void ph_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const sm_gpu_pigeonhole *v = SM_GPU_VIEW(&a->view, const sm_gpu_pigeonhole);
    const sm_ph_gpu_tables *tb = a->extra;
    const sm_ph_gpu_combined cb = sm_ph_gpu_combined_of(a->section, v, tb);
    if (sm_ph_gpu_tiled(a, v)) {
        ph_gpu_emulate_tiles(a, v, tb, &cb);
        return;
    }
    const sm_ph_gpu_rkey *rkeys = (const sm_ph_gpu_rkey *)((const uint8_t *)tb + tb->rkeys_off);
    uint32_t slices = sm_ph_gpu_slices(a, v);
    for (uint32_t c = 0; c < a->nchunks; c++)
        for (uint32_t q = 0; q < slices; q++) {
            sm_gpu_chunk ch = sm_gpu_chunk_part(a->chunks[c], q, slices, a->tail, a->reach);
            if (ch.c0 >= ch.c1) continue;
            if (v->packed) {
                sm_ph_gpu_slice_packed(a, v, tb, rkeys, &cb, ch);
                continue;
            }
            /* as the kernel, in pieces of the span; candidates verified at once */
            uint32_t lo, hi;
            sm_ph_gpu_span(v, ch, &lo, &hi);
            sm_ph_gpu_scan_state st = {0, 0, 0};
            for (uint32_t at = lo; at < hi; at += SM_PH_GPU_EPOCH)
                sm_ph_gpu_scan(a, v, tb, &cb, ch, NULL, 0, &st, at, hi - at < SM_PH_GPU_EPOCH ? hi : at + SM_PH_GPU_EPOCH);
        }
}

const sm_gpu_part sm_ph_gpu_part = {
    .view = ph_gpu_view,
    .describe = ph_gpu_describe,
    .extra = ph_gpu_extra,
    .emulate = ph_gpu_emulate,
};
