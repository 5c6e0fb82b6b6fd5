/* A CPU stand-in for the GPU side of the CUDA runner (cuda_device.h), so that
 * the runner's host logic (batches, pieces cut across batches, chunk
 * ownership, hit expansion and order, counts, record ends, stops) is tested
 * on machines without a GPU. It follows the kernel's contract line by line:
 * every chunk from the root at c0 to end; a flagged transition ending at or
 * before c1 reports its state, one past c1 only the outputs starting before
 * c1. Test builds only (test_cuda_emulated). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"

struct sm_cuda_tables {
    sm_cuda_automaton ac;
    uint32_t *lengths; /* a copy, as the device has one: the caller frees its array */
};

struct sm_cuda_slot {
    sm_cuda_tables *t;
    int count_only;
    uint8_t *text;
    sm_cuda_chunk *chunks;
    size_t len, nchunks;
    sm_cuda_hit *hits;
    size_t nhits, hit_cap;
    uint32_t *visits;
    uint64_t *tail;
    int launched;
};

int sm_cuda_device_count(void) { return 1; }
const char *sm_cuda_missing(void) { return NULL; }
void sm_cuda_device_name(int device, char *name, size_t size) { snprintf(name, size, "emulated GPU %d", device); }

int sm_cuda_tables_open(int device, const sm_cuda_automaton *automaton, sm_cuda_tables **out, char *msg) {
    (void)device;
    *out = calloc(1, sizeof **out);
    if (!*out) return snprintf(msg, 256, "out of memory"), -1;
    (*out)->ac = *automaton;
    size_t n = automaton->pattern_count ? automaton->pattern_count : 1;
    (*out)->lengths = malloc(n * sizeof(uint32_t));
    if (!(*out)->lengths) return snprintf(msg, 256, "out of memory"), -1;
    memcpy((*out)->lengths, automaton->lengths, automaton->pattern_count * sizeof(uint32_t));
    (*out)->ac.lengths = (*out)->lengths;
    return 0;
}

void sm_cuda_tables_close(sm_cuda_tables *tables) {
    if (tables) free(tables->lengths);
    free(tables);
}

int sm_cuda_slot_open(sm_cuda_tables *t, size_t text_cap, size_t chunk_cap, int count_only, sm_cuda_slot **out,
                      char *msg) {
    sm_cuda_slot *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return snprintf(msg, 256, "out of memory"), -1;
    s->t = t;
    s->count_only = count_only;
    s->text = calloc(text_cap + 16, 1);
    s->chunks = calloc(chunk_cap ? chunk_cap : 1, sizeof *s->chunks);
    s->visits = calloc(t->ac.states, sizeof *s->visits);
    s->tail = calloc(t->ac.pattern_count + 1, sizeof *s->tail);
    if (!s->text || !s->chunks || !s->visits || !s->tail) return snprintf(msg, 256, "out of memory"), -1;
    return 0;
}

void sm_cuda_slot_close(sm_cuda_slot *s) {
    if (!s) return;
    free(s->text);
    free(s->chunks);
    free(s->hits);
    free(s->visits);
    free(s->tail);
    free(s);
}

uint8_t *sm_cuda_slot_text(sm_cuda_slot *s) { return s->text; }
sm_cuda_chunk *sm_cuda_slot_chunks(sm_cuda_slot *s) { return s->chunks; }
size_t sm_cuda_tables_parallelism(const sm_cuda_tables *t) { (void)t; return 64; }

static int add_hit(sm_cuda_slot *s, uint32_t end, uint32_t code) {
    if (s->nhits == s->hit_cap) {
        size_t cap = s->hit_cap ? s->hit_cap * 2 : 16;
        sm_cuda_hit *p = realloc(s->hits, cap * sizeof *p);
        if (!p) return -1;
        s->hits = p;
        s->hit_cap = cap;
    }
    s->hits[s->nhits].end = end;
    s->hits[s->nhits].code = code;
    s->nhits++;
    return 0;
}

static int scan(sm_cuda_slot *s) {
    const sm_cuda_automaton *ac = &s->t->ac;
    const uint32_t *delta = (const uint32_t *)(ac->section + ac->delta_off);
    const uint32_t *out_index = (const uint32_t *)(ac->section + ac->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(ac->section + ac->out_list_off);
    const uint16_t *class_of = (const uint16_t *)(ac->section + ac->class_of_off);
    s->nhits = 0;
    memset(s->visits, 0, ac->states * sizeof *s->visits);
    memset(s->tail, 0, (ac->pattern_count + 1) * sizeof *s->tail);
    for (size_t c = 0; c < s->nchunks; c++) {
        const sm_cuda_chunk ch = s->chunks[c];
        if (ch.c0 > ch.c1 || ch.c1 > ch.end || ch.end > s->len) return -1; /* the runner broke the contract */
        uint32_t at = 0;
        for (uint32_t i = ch.c0; i < ch.end; i++) {
            uint32_t e = delta[at + class_of[s->text[i]]];
            at = e & 0x7fffffffu;
            if (!(e & 0x80000000u)) continue;
            uint32_t state = at / ac->columns, pos = i + 1;
            if (pos <= ch.c1) {
                if (s->count_only)
                    s->visits[state]++;
                else if (add_hit(s, pos, state) != 0)
                    return -1;
                continue;
            }
            for (uint32_t o = out_index[state]; o < out_index[state + 1]; o++) {
                uint32_t id = out_list[o], len = ac->lengths[id >> 1];
                if (len > pos || pos - len >= ch.c1) continue;
                if (s->count_only)
                    s->tail[id >> 1]++;
                else if (add_hit(s, pos, SM_CUDA_ONE_OUTPUT | id) != 0)
                    return -1;
            }
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
    if (scan(s) != 0) return snprintf(msg, 256, "bad chunk table or out of memory"), -1;
    memset(r, 0, sizeof *r);
    r->hits = s->hits;
    r->nhits = s->nhits;
    r->visits = s->visits;
    r->tail_counts = s->tail;
    return 0;
}

int sm_cuda_slot_time_scan(sm_cuda_slot *s, int repeats, double *ms, char *msg) {
    (void)s, (void)repeats, (void)ms;
    return snprintf(msg, 256, "no timing on the emulated GPU"), -1;
}
