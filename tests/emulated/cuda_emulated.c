/* A CPU stand-in for the GPU side of the CUDA runner (cuda_device.h), so
 * that the runner's host logic (batches, pieces cut across batches, chunk
 * ownership, hit expansion and order, counts, record ends, stops, the hit
 * buffer's overflow) and the kernels' own chunk logic are tested on
 * machines without a GPU. The k-mer table, Wu-Manber and Shift-And run the
 * very code their kernels run (kmer_gpu.h, wm_gpu.h, shiftand_gpu.h), a
 * warp's 32 lanes one after the other; the automaton follows its kernel's
 * contract line by line. The geometry (chunks for threads or warps, parts
 * of chunks) is the device's, for a device of 64 threads. Test builds only
 * (test_cuda_emulated). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_scan.h"
#include "engines/bitparallel/shiftand_gpu.h"
#include "engines/kmer/kmer_gpu.h"
#include "engines/wumanber/wm_gpu.h"

#define THREADS 64u
/* A small first hit buffer, so that batches overflow it and are scanned again. */
#define FIRST_HIT_CAP 16u

typedef struct {
    sm_gpu_view view;
    uint8_t *bytes; /* a copy, as the device has one */
    size_t size;
    uint32_t visits;
    uint64_t fold_index_off, fold_list_off;
    uint32_t *pre;      /* k-mer hash layout: the pre-filter, as the device builds it, or NULL */
    uint32_t pre_bits;
} emu_section;

struct sm_cuda_tables {
    emu_section *sections;
    uint32_t nsections;
    uint32_t *lengths;
    uint32_t pattern_count, tail;
    int warp_chunks;
};

struct sm_cuda_slot {
    sm_cuda_tables *t;
    int count_only;
    size_t text_cap;
    uint8_t *text;
    sm_cuda_chunk *chunks;
    size_t len, nchunks;
    sm_cuda_hit *hits;
    unsigned long long hit_cap, nhits;
    unsigned long long *counts;
    uint32_t **visits;
    int launched;
};

int sm_cuda_device_count(void) { return 1; }
const char *sm_cuda_missing(void) { return NULL; }
void sm_cuda_device_name(int device, char *name, size_t size) { snprintf(name, size, "emulated GPU %d", device); }

void sm_cuda_output(const sm_cuda_scan_args *a, uint32_t end, uint32_t id) {
    if (a->count_only) {
        a->counts[id >> 1]++;
        return;
    }
    unsigned long long i = (*a->nhits)++;
    if (i < a->hit_cap) {
        a->hits[i].end = end;
        a->hits[i].code = SM_CUDA_ONE_OUTPUT | id;
    }
}

void sm_cuda_tables_close(sm_cuda_tables *t) {
    if (!t) return;
    for (uint32_t i = 0; i < t->nsections; i++) {
        free(t->sections[i].bytes);
        free(t->sections[i].pre);
    }
    free(t->sections);
    free(t->lengths);
    free(t);
}

int sm_cuda_tables_open(int device, const sm_cuda_database *db, sm_cuda_tables **out, char *msg) {
    (void)device;
    sm_cuda_tables *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t) return snprintf(msg, 256, "out of memory"), -1;
    t->sections = calloc(db->nsections ? db->nsections : 1, sizeof *t->sections);
    t->lengths = malloc((db->pattern_count ? db->pattern_count : 1) * sizeof *t->lengths);
    if (!t->sections || !t->lengths) {
        sm_cuda_tables_close(t);
        return snprintf(msg, 256, "out of memory"), -1;
    }
    memcpy(t->lengths, db->lengths, db->pattern_count * sizeof *t->lengths);
    t->pattern_count = db->pattern_count;
    t->tail = db->longest ? db->longest - 1 : 0;
    t->nsections = db->nsections;
    for (uint32_t i = 0; i < db->nsections; i++) {
        emu_section *s = &t->sections[i];
        s->view = db->sections[i].view;
        s->size = db->sections[i].size;
        /* 8-byte aligned, as cudaMalloc's memory is (more) */
        s->bytes = malloc(s->size ? s->size : 1);
        if (!s->bytes) {
            sm_cuda_tables_close(t);
            return snprintf(msg, 256, "out of memory"), -1;
        }
        memcpy(s->bytes, db->sections[i].bytes, s->size);
        switch (s->view.kind) {
        case SM_GPU_KIND_AUTOMATON:
            s->visits = s->view.u.automaton.states;
            s->fold_index_off = s->view.u.automaton.out_index_off;
            s->fold_list_off = s->view.u.automaton.out_list_off;
            break;
        case SM_GPU_KIND_KMER:
            s->visits = (uint32_t)s->view.u.kmer.slots;
            s->fold_index_off = s->view.u.kmer.out_index_off;
            s->fold_list_off = s->view.u.kmer.out_list_off;
            t->warp_chunks = 1;
            /* as kmer_cuda.cu: a filter too large for shared memory gets a pre-filter there */
            if (s->view.u.kmer.hashed && 256 + ((size_t)8 << s->view.u.kmer.filter_log2) > SM_CUDA_KMER_SHARED_MAX) {
                uint32_t bits = sm_kh_gpu_pre_bits(s->view.u.kmer.slots, SM_CUDA_HOPPER_SHARED);
                if (bits >= 1024) {
                    s->pre = calloc(bits / 32, sizeof *s->pre);
                    if (!s->pre) {
                        sm_cuda_tables_close(t);
                        return snprintf(msg, 256, "out of memory"), -1;
                    }
                    s->pre_bits = bits;
                    sm_kh_gpu_build_pre(&s->view.u.kmer, s->bytes, s->pre, bits);
                }
            }
            break;
        case SM_GPU_KIND_WUMANBER:
        case SM_GPU_KIND_SHIFTAND:
            break;
        default:
            snprintf(msg, 256, "no GPU kernel scans sections of kind %u", s->view.kind);
            sm_cuda_tables_close(t);
            return -1;
        }
    }
    *out = t;
    return 0;
}

size_t sm_cuda_tables_chunk(const sm_cuda_tables *t, size_t text_cap, size_t tail) {
    return sm_cuda_chunk_for(THREADS, t->warp_chunks, text_cap, tail);
}

void sm_cuda_slot_close(sm_cuda_slot *s) {
    if (!s) return;
    free(s->text);
    free(s->chunks);
    free(s->hits);
    free(s->counts);
    if (s->visits)
        for (uint32_t i = 0; i < s->t->nsections; i++) free(s->visits[i]);
    free(s->visits);
    free(s);
}

int sm_cuda_slot_open(sm_cuda_tables *t, size_t text_cap, size_t chunk_cap, int count_only, sm_cuda_slot **out,
                      char *msg) {
    sm_cuda_slot *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return snprintf(msg, 256, "out of memory"), -1;
    s->t = t;
    s->count_only = count_only;
    s->text_cap = text_cap;
    /* padded as the device's: whole 16-byte words and one more */
    s->text = calloc((text_cap + 15) / 16 * 16 + 16, 1);
    s->chunks = calloc(chunk_cap ? chunk_cap : 1, sizeof *s->chunks);
    s->counts = calloc(t->pattern_count + 1, sizeof *s->counts);
    s->visits = calloc(t->nsections ? t->nsections : 1, sizeof *s->visits);
    s->hit_cap = count_only ? 0 : FIRST_HIT_CAP;
    s->hits = calloc(s->hit_cap ? s->hit_cap : 1, sizeof *s->hits);
    if (!s->text || !s->chunks || !s->counts || !s->visits || !s->hits) return snprintf(msg, 256, "out of memory"), -1;
    for (uint32_t i = 0; i < t->nsections; i++)
        if (t->sections[i].visits && !(s->visits[i] = calloc(t->sections[i].visits, sizeof(uint32_t))))
            return snprintf(msg, 256, "out of memory"), -1;
    return 0;
}

uint8_t *sm_cuda_slot_text(sm_cuda_slot *s) { return s->text; }
sm_cuda_chunk *sm_cuda_slot_chunks(sm_cuda_slot *s) { return s->chunks; }

/* ------------------------------------------------------------ kernels */

/* The automaton kernel's contract: every part from the root at c0 to end;
   a flagged transition ending at or before c1 counts or reports its state,
   one past c1 only the outputs starting before c1. */
static void automaton(const sm_cuda_scan_args *a, sm_cuda_chunk ch) {
    const sm_gpu_automaton *v = &a->view.u.automaton;
    const uint32_t *delta = (const uint32_t *)(a->section + v->delta_off);
    const uint32_t *out_index = (const uint32_t *)(a->section + v->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(a->section + v->out_list_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    uint32_t at = 0;
    for (uint32_t i = ch.c0; i < ch.end; i++) {
        uint32_t e = delta[at + class_of[a->text[i]]];
        at = e & 0x7fffffffu;
        if (!(e & SM_GPU_DFA_FLAG)) continue;
        uint32_t state = at / v->columns, pos = i + 1;
        if (pos <= ch.c1) {
            if (a->count_only) {
                a->visits[state]++;
            } else {
                unsigned long long n = (*a->nhits)++;
                if (n < a->hit_cap) a->hits[n].end = pos, a->hits[n].code = state;
            }
            continue;
        }
        for (uint32_t o = out_index[state]; o < out_index[state + 1]; o++) {
            uint32_t id = out_list[o], len = a->lengths[id >> 1];
            if (len > pos || pos - len >= ch.c1) continue;
            sm_cuda_output(a, pos, id);
        }
    }
}

static void kmer_report(const sm_cuda_scan_args *a, uint32_t slot, uint32_t end) {
    const sm_gpu_kmer *v = &a->view.u.kmer;
    if (a->count_only) {
        a->visits[slot]++;
        return;
    }
    const uint32_t *out_index = (const uint32_t *)(a->section + v->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(a->section + v->out_list_off);
    for (uint32_t o = out_index[slot]; o < out_index[slot + 1]; o++) sm_cuda_output(a, end, out_list[o]);
}

/* A chunk by one warp, as kmer_cuda.cu's kernels: the lanes' pieces of a
   tile first, then each lane's 16 positions with the pieces of the lanes
   before it (the previous tile's last lanes for lanes 0 and 1). */
static void kmer(const sm_cuda_scan_args *a, sm_cuda_chunk ch, const uint32_t *pre, uint32_t pre_bits) {
    const sm_gpu_kmer *v = &a->view.u.kmer;
    const uint8_t *code_of = a->section + v->code_of_off;
    const uint32_t *bits32 = (const uint32_t *)(a->section + v->bits_off);
    const uint32_t *rank = (const uint32_t *)(a->section + v->rank_off);
    const uint64_t *filter = (const uint64_t *)(a->section + v->filter_off);
    const uint8_t *table = a->section + v->table_off;
    sm_kt_piece carry1 = sm_kt_gpu_empty(), carry2 = sm_kt_gpu_empty();
    sm_kt_piece lanes[SM_KT_GPU_LANES];
    for (uint32_t tile = ch.c0 & ~15u; tile < ch.end; tile += SM_KT_GPU_TILE) {
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
            if (p >= ch.end) continue;
            sm_kt_piece cur = lanes[lane];
            sm_kt_piece prev1 = lane >= 1 ? lanes[lane - 1] : carry1;
            sm_kt_piece prev2 = lane >= 2 ? lanes[lane - 2] : lane == 1 ? carry1 : carry2;
            uint32_t want =
                sm_kt_gpu_whole(v->k, prev2.breaks, prev1.breaks, cur.breaks) & sm_kt_gpu_owned(p, v->k, ch.c1);
            if (!want) continue;
            if (!v->hashed) {
                uint32_t hits = sm_kt_gpu_direct(bits32, (uint32_t)v->mask, prev1.codes, cur.codes, want);
                for (uint32_t j = 0; j < 16; j++) {
                    if (!((hits >> j) & 1u)) continue;
                    uint32_t m = (uint32_t)sm_kt_gpu_code(prev2.codes, prev1.codes, cur.codes, j, v->mask);
                    kmer_report(a, sm_kt_gpu_slot(bits32, rank, m), p + j + 1);
                }
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

static void wumanber(const sm_cuda_scan_args *a, sm_cuda_chunk ch) {
    const sm_gpu_wumanber *v = &a->view.u.wumanber;
    sm_wm_gpu_tables t;
    t.shift = a->section + v->shift_off;
    t.code = a->section + v->code_off;
    t.fold = a->section + v->fold_off;
    t.keys = a->section + v->keys_off;
    t.bucket = (const uint32_t *)(a->section + v->bucket_off);
    t.entry = (const sm_wm_gpu_entry *)(a->section + v->entry_off);
    sm_wm_gpu_chunk(a, &t, ch);
}

static void shiftand(const sm_cuda_scan_args *a, sm_cuda_chunk ch, uint32_t g) {
    const sm_gpu_shiftand *v = &a->view.u.shiftand;
    const uint64_t *masks = (const uint64_t *)(a->section + v->masks_off);
    const uint16_t *class_of = (const uint16_t *)(a->section + v->class_of_off);
    if (v->levels_layout) sm_sa_gpu_group(a, masks, v->row_stride, class_of, ch, g);
    else sm_sa_gpu_dense(a, masks, v->row_stride, class_of, ch);
}

/* Every section's kernel over the batch, then the folds (count mode). */
static int scan(sm_cuda_slot *s) {
    const sm_cuda_tables *t = s->t;
    s->nhits = 0;
    memset(s->counts, 0, (t->pattern_count + 1) * sizeof *s->counts);
    size_t longest_chunk = 0;
    for (size_t c = 0; c < s->nchunks; c++) {
        const sm_cuda_chunk ch = s->chunks[c];
        if (ch.c0 > ch.c1 || ch.c1 > ch.end || ch.end > s->len) return -1; /* the runner broke the contract */
        if (c < 64 && ch.c1 - ch.c0 > longest_chunk) longest_chunk = ch.c1 - ch.c0;
    }
    uint32_t parts = sm_cuda_parts(THREADS, t->warp_chunks, s->text_cap, t->tail, longest_chunk);
    for (uint32_t i = 0; i < t->nsections; i++) {
        const emu_section *sec = &t->sections[i];
        sm_cuda_scan_args a;
        memset(&a, 0, sizeof a);
        a.text = s->text;
        a.chunks = s->chunks;
        a.nchunks = (uint32_t)s->nchunks;
        a.section = sec->bytes;
        a.lengths = t->lengths;
        a.count_only = s->count_only;
        a.hits = s->hits;
        a.hit_cap = s->hit_cap;
        a.nhits = &s->nhits;
        a.counts = s->counts;
        a.visits = s->visits[i];
        a.tail = t->tail;
        a.parts = sec->view.kind == SM_GPU_KIND_KMER ? 1 : parts;
        a.view = sec->view;
        if (a.visits) memset(a.visits, 0, sec->visits * sizeof *a.visits);
        uint32_t groups = sec->view.kind == SM_GPU_KIND_SHIFTAND && sec->view.u.shiftand.levels_layout
                              ? sec->view.u.shiftand.group_words
                              : 1;
        for (uint32_t c = 0; c < a.nchunks; c++) {
            if (sec->view.kind == SM_GPU_KIND_KMER) {
                kmer(&a, s->chunks[c], sec->pre, sec->pre_bits);
                continue;
            }
            for (uint32_t q = 0; q < a.parts; q++) {
                sm_cuda_chunk ch = sm_cuda_part(s->chunks[c], q, a.parts, a.tail);
                if (ch.c0 >= ch.c1) continue;
                if (ch.c0 < s->chunks[c].c0 || ch.c1 > s->chunks[c].c1 || ch.end > s->chunks[c].end) return -1;
                switch (sec->view.kind) {
                case SM_GPU_KIND_AUTOMATON: automaton(&a, ch); break;
                case SM_GPU_KIND_WUMANBER: wumanber(&a, ch); break;
                default:
                    for (uint32_t g = 0; g < groups; g++) shiftand(&a, ch, g);
                    break;
                }
            }
        }
        if (s->count_only && sec->visits) {
            /* the device's fold */
            const uint32_t *index = (const uint32_t *)(sec->bytes + sec->fold_index_off);
            const uint32_t *list = (const uint32_t *)(sec->bytes + sec->fold_list_off);
            for (uint32_t c = 0; c < sec->visits; c++)
                for (uint32_t o = index[c]; o < index[c + 1]; o++) s->counts[list[o] >> 1] += a.visits[c];
        }
    }
    return 0;
}

int sm_cuda_slot_launch(sm_cuda_slot *s, size_t len, size_t nchunks, char *msg) {
    if (s->launched) return snprintf(msg, 256, "slot launched twice without a wait"), -1;
    s->len = len;
    s->nchunks = nchunks;
    s->launched = 1;
    return 0;
}

int sm_cuda_slot_wait(sm_cuda_slot *s, sm_cuda_result *r, char *msg) {
    if (!s->launched) return snprintf(msg, 256, "wait without a launch"), -1;
    s->launched = 0;
    /* Scanned at the wait, as late as a real GPU could finish: the host
       must not have touched the slot's text or chunks in between. */
    if (scan(s) != 0) return snprintf(msg, 256, "bad chunk table"), -1;
    if (!s->count_only && s->nhits > s->hit_cap) {
        /* as the device: grow the buffer and scan the batch again */
        unsigned long long cap = s->hit_cap;
        while (cap < s->nhits) cap *= 2;
        sm_cuda_hit *p = realloc(s->hits, cap * sizeof *p);
        if (!p) return snprintf(msg, 256, "out of memory"), -1;
        s->hits = p;
        s->hit_cap = cap;
        unsigned long long before = s->nhits;
        if (scan(s) != 0) return snprintf(msg, 256, "bad chunk table"), -1;
        if (s->nhits != before) return snprintf(msg, 256, "a batch found %llu hits, then %llu", before, s->nhits), -1;
    }
    memset(r, 0, sizeof *r);
    r->hits = s->hits;
    r->nhits = (size_t)s->nhits;
    r->counts = s->counts;
    return 0;
}

int sm_cuda_slot_time_scan(sm_cuda_slot *s, int repeats, double *ms, char *msg) {
    (void)s, (void)repeats, (void)ms;
    return snprintf(msg, 256, "no timing on the emulated GPU"), -1;
}
