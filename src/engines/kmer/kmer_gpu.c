/* The k-mer table's GPU part, host side (engines/gpu_part.h): its view, its
 * description, and the CPU stand-in for its kernels (kmer_cuda.cu): a
 * warp's 32 lanes one after the other, with the kernels' own code. */
#include <stddef.h>
#include <stdlib.h>

#include "engines/engine.h"
#include "engines/kmer/kmer_gpu.h"
#include "engines/kmer/kmer_private.h"

_Static_assert(SM_GPU_VIEW_FITS(sm_gpu_kmer), "the k-mer table's view fits a GPU view");

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
    const sm_gpu_kmer *x = SM_GPU_VIEW(v, const sm_gpu_kmer);
    const char *decode = x->dna_codes ? "bytes decoded four at a time" : "bytes decoded by table";
    char a[32], b[32], c[32] = "";
    if (!x->hashed) {
        uint64_t bits = x->words * 8;
        int shared = 256 + bits <= SM_KT_GPU_SHARED_MAX;
        int counters = shared && 256 + bits + x->words * 4 + x->slots * 4 <= SM_GPU_SHARED_MAX;
        size_t slots = sm_kt_gpu_slot_shared(x, SM_GPU_SHARED_MAX);
        sm_gpu_size_text(bits, a, sizeof a);
        if (slots) sm_gpu_size_text(slots, b, sizeof b);
        snprintf(buf, size, "k-mer bitmap (k = %u) %s %s, a warp per chunk, 16 positions per lane, %s; counts per "
                 "key in %s memory%s%s%s", x->k, a, shared ? "in shared memory" : "read through L2", decode,
                 counters || slots ? "shared" : "device", slots ? " beside a 16-bit slot per k-mer (" : "",
                 slots ? b : "", slots ? " in all)" : "");
        return;
    }
    uint64_t filter = (uint64_t)8 << x->filter_log2;
    int shared = 256 + filter <= SM_KT_GPU_SHARED_MAX;
    uint32_t pre = shared ? 0 : sm_kh_gpu_pre_bits(x->slots, SM_GPU_SHARED_MAX);
    if (pre >= 1024) sm_gpu_size_text(pre / 8, c, sizeof c);
    if (!shared && sm_ks_gpu_fits(x->k, x->slots)) {
        sm_gpu_size_text(sm_ks_gpu_table_bytes(sm_ks_gpu_cap_log2(x->slots)), b, sizeof b);
        snprintf(buf, size, "k-mer hash set (k = %u): one lookup per 16 positions, by the m-mer (m = %u) that ends "
                 "on a lane's last byte, in a table of %s (an eighth full; fuller, down to half, where device memory "
                 "is short) holding each key under its 16 m-mers in device memory (unless an m-mer crowds it or "
                 "device memory is short even so: then a filter per position); a warp per chunk, %s",
                 x->k, x->k - 15, b, decode);
        return;
    }
    sm_gpu_size_text(filter, a, sizeof a);
    sm_gpu_size_text((uint64_t)16 << x->cap_log2, b, sizeof b);
    snprintf(buf, size, "k-mer hash set (k = %u): filter %s %s%s%s, table %s in device memory, a warp per chunk, %s",
             x->k, a, shared ? "in shared memory" : "read through L2", pre >= 1024 ? " behind a pre-filter of " : "",
             pre >= 1024 ? c : "", b, decode);
}

void sm_kt_gpu_view(const uint8_t *bytes, sm_gpu_kmer *g) {
    memset(g, 0, sizeof *g);
    uint32_t magic;
    memcpy(&magic, bytes, sizeof magic);
    if (magic == SM_KH_MAGIC) {
        const sm_kh_header *h = (const sm_kh_header *)bytes;
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
    const sm_kt_header *h = (const sm_kt_header *)bytes;
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

static int kt_gpu_view(const sm_section *s, const sm_gpu_db *db, sm_gpu_view *v, char *why) {
    (void)db, (void)why;
    memset(v, 0, sizeof *v);
    v->kind = SM_SECTION_KMER;
    v->flags = SM_GPU_WARP_CHUNKS;
    v->results = SM_GPU_RESULTS_HITS;
    sm_gpu_kmer *g = SM_GPU_VIEW(v, sm_gpu_kmer);
    sm_kt_gpu_view(s->bytes, g);
    v->visits = (uint32_t)g->slots;
    v->fold_index_off = g->out_index_off;
    v->fold_list_off = g->out_list_off;
    return 0;
}

static void kmer_report(const sm_gpu_scan_args *a, uint32_t slot, uint32_t end) {
    const sm_gpu_kmer *v = SM_GPU_VIEW(&a->view, const sm_gpu_kmer);
    if (a->count_only) {
        a->visits[slot]++;
        return;
    }
    const uint32_t *out_index = (const uint32_t *)(a->section + v->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(a->section + v->out_list_off);
    for (uint32_t o = out_index[slot]; o < out_index[slot + 1]; o++) sm_gpu_output(a, end, out_list[o]);
}

/* What the kernels' launch makes beside the section: the hash layout's
   pre-filter, when its filter is too large for shared memory, and for k of
   27 to 31 the table of sampled m-mers instead, as kmer_cuda.cu makes them. */
typedef struct {
    uint32_t *pre;
    uint32_t pre_bits;
    uint8_t *sampled;
    uint32_t sampled_log2;
} kt_emulated;

static void *kt_gpu_prepare(const sm_gpu_view *view, const uint8_t *section) {
    const sm_gpu_kmer *v = SM_GPU_VIEW(view, const sm_gpu_kmer);
    kt_emulated *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (v->hashed && 256 + ((size_t)8 << v->filter_log2) > SM_KT_GPU_SHARED_MAX) {
        const char *way = getenv("SEQMATCH_CUDA_KMER");
        uint32_t log2 = sm_ks_gpu_cap_log2(v->slots);
        if (sm_ks_gpu_fits(v->k, v->slots) && !(way && strcmp(way, "filter") == 0) &&
            (p->sampled = malloc(sm_ks_gpu_table_bytes(log2)))) {
            memset(p->sampled, 0xff, sm_ks_gpu_table_bytes(log2));
            p->sampled_log2 = log2;
            if (sm_ks_gpu_build(v, section, p->sampled, log2) <= SM_KS_GPU_MAX_WALK) return p;
            free(p->sampled);
            p->sampled = NULL;
        }
        uint32_t bits = sm_kh_gpu_pre_bits(v->slots, SM_GPU_SHARED_MAX);
        if (bits >= 1024 && (p->pre = calloc(bits / 32, sizeof *p->pre))) {
            p->pre_bits = bits;
            sm_kh_gpu_build_pre(v, section, p->pre, bits);
        }
    }
    return p;
}

static void kt_gpu_release(void *prepared) {
    kt_emulated *p = prepared;
    if (p) free(p->pre), free(p->sampled);
    free(p);
}

/* Hash layout by a sampled m-mer: the keys ending at p - 1 .. p + 14, by
   the m-mer ending at p - 1 (kmer_gpu.h). */
static void kmer_sampled(const sm_gpu_scan_args *a, const kt_emulated *x, uint32_t p, sm_kt_piece prev2,
                         sm_kt_piece prev1, sm_kt_piece cur, uint32_t want, uint32_t c1) {
    const sm_gpu_kmer *v = SM_GPU_VIEW(&a->view, const sm_gpu_kmer);
    uint32_t ends = sm_ks_gpu_ends(want, v->k, prev2.breaks, prev1.breaks, p, c1);
    if (!ends) return;
    uint32_t mmer = prev1.codes & sm_ks_gpu_mmer_mask(v->k), cap_mask = (1u << x->sampled_log2) - 1;
    for (uint32_t at = sm_ks_gpu_home(mmer, x->sampled_log2);; at = (at + 1) & cap_mask) {
        const uint8_t *entry = x->sampled + (size_t)SM_KS_GPU_ENTRY * at;
        uint64_t code;
        uint32_t tagged, emmer;
        memcpy(&tagged, entry + 8, 4);
        if (tagged == SM_KS_GPU_EMPTY) break;
        memcpy(&emmer, entry + 12, 4);
        uint32_t o = tagged >> SM_KS_GPU_SLOT_BITS;
        if (emmer != mmer || !((ends >> o) & 1u)) continue;
        memcpy(&code, entry, 8);
        if (sm_ks_gpu_code(prev2.codes, prev1.codes, cur.codes, o, v->mask) == code)
            kmer_report(a, tagged & SM_KS_GPU_SLOT_MASK, p + o);
    }
}

/* A chunk by one warp, as kmer_cuda.cu's kernels: the lanes' pieces of a
   tile first, then each lane's 16 positions with the pieces of the lanes
   before it (the previous tile's last lanes for lanes 0 and 1). */
static void kmer(const sm_gpu_scan_args *a, sm_gpu_chunk ch, const kt_emulated *x) {
    const uint32_t *pre = x ? x->pre : NULL, pre_bits = x ? x->pre_bits : 0;
    const sm_gpu_kmer *v = SM_GPU_VIEW(&a->view, const sm_gpu_kmer);
    const uint8_t *code_of = a->section + v->code_of_off;
    const uint32_t *bits32 = (const uint32_t *)(a->section + v->bits_off);
    const uint32_t *rank = (const uint32_t *)(a->section + v->rank_off);
    const uint64_t *filter = (const uint64_t *)(a->section + v->filter_off);
    const uint8_t *table = a->section + v->table_off;
    sm_kt_piece carry1 = sm_kt_gpu_empty(), carry2 = sm_kt_gpu_empty();
    sm_kt_piece lanes[SM_KT_GPU_LANES];
    /* the sampled lookup ends k-mers at p - 1: the lane whose first byte is
       the chunk's end still has one to look up */
    const uint32_t past = x && x->sampled ? 1 : 0;
    for (uint32_t tile = ch.c0 & ~15u; tile < ch.end + past; tile += SM_KT_GPU_TILE) {
        for (uint32_t lane = 0; lane < SM_KT_GPU_LANES; lane++) {
            uint32_t p = tile + 16 * lane, w[4];
            lanes[lane] = sm_kt_gpu_empty();
            if (p >= ch.end) continue;
            sm_gpu_load16(a->text + p, w);
            uint32_t outside = sm_kt_gpu_outside(p, ch.c0, ch.end);
            lanes[lane] = v->dna_codes ? sm_kt_gpu_piece_dna(w, outside) : sm_kt_gpu_piece_table(code_of, w, outside);
        }
        for (uint32_t lane = 0; lane < SM_KT_GPU_LANES; lane++) {
            uint32_t p = tile + 16 * lane;
            if (p >= ch.end + past) continue;
            sm_kt_piece cur = lanes[lane];
            sm_kt_piece prev1 = lane >= 1 ? lanes[lane - 1] : carry1;
            sm_kt_piece prev2 = lane >= 2 ? lanes[lane - 2] : lane == 1 ? carry1 : carry2;
            uint32_t want =
                sm_kt_gpu_whole(v->k, prev2.breaks, prev1.breaks, cur.breaks) & sm_kt_gpu_owned(p, v->k, ch.c1);
            if (!want && !past) continue;
            if (!v->hashed) {
                uint32_t hits = sm_kt_gpu_direct(bits32, (uint32_t)v->mask, prev1.codes, cur.codes, want);
                for (uint32_t j = 0; j < 16; j++) {
                    if (!((hits >> j) & 1u)) continue;
                    uint32_t m = (uint32_t)sm_kt_gpu_code(prev2.codes, prev1.codes, cur.codes, j, v->mask);
                    kmer_report(a, sm_kt_gpu_slot(bits32, rank, m), p + j + 1);
                }
            } else if (x && x->sampled) {
                kmer_sampled(a, x, p, prev2, prev1, cur, want, ch.c1);
            } else {
                for (uint32_t j = 0; j < 16; j++) {
                    if (!((want >> j) & 1u)) continue;
                    uint64_t code = sm_kt_gpu_code(prev2.codes, prev1.codes, cur.codes, j, v->mask);
                    if (pre) {
                        uint32_t b = sm_kh_gpu_pre_bit(code, v->hash_mul, pre_bits);
                        if (!((pre[b >> 5] >> (b & 31)) & 1u)) continue;
                    }
                    if (!sm_kh_gpu_filter_pass(v, code, filter[sm_kh_gpu_filter_index(v, code)])) continue;
                    uint32_t slot = sm_kh_gpu_probe(v, table, code);
                    if (slot != SM_GPU_KMER_EMPTY) kmer_report(a, slot, p + j + 1);
                }
            }
        }
        carry1 = lanes[SM_KT_GPU_LANES - 1];
        carry2 = lanes[SM_KT_GPU_LANES - 2];
    }
}

static void kt_gpu_emulate(const sm_gpu_scan_args *a, uint32_t threads) {
    (void)threads;
    const kt_emulated *p = a->prepared;
    for (uint32_t c = 0; c < a->nchunks; c++) kmer(a, a->chunks[c], p);
}

const sm_gpu_part sm_kt_gpu_part = {
    .view = kt_gpu_view,
    .describe = kt_gpu_describe,
    .emulate_prepare = kt_gpu_prepare,
    .emulate_release = kt_gpu_release,
    .emulate = kt_gpu_emulate,
};
