/* A CPU stand-in for the GPU side of the DFA run (dfa_gpu_device.h), so
 * that the host side (batches, segments carried across batches, chunk cuts,
 * map indices, results in order, unknown bytes) and the per-thread code of
 * the kernels (dfa_gpu_steps.h: the chunk simulation from all states, the
 * scan's levels, the gather) are tested on machines without a GPU. It runs
 * the kernels' functions one thread index after another, in the kernels'
 * order. A batch runs when it is waited for, from the slot's host arrays,
 * so that a host that touched a slot before waiting would read wrong
 * results. Test builds only (test_dfa_cuda_emulated). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engines/dfa/dfa_gpu_device.h"
#include "engines/dfa/dfa_gpu_steps.h"

typedef struct {
    uint8_t *text;
    sm_dfa_gpu_chunk *chunks;
    sm_dfa_gpu_segment *segments;
    uint32_t *finals;
    sm_dfa_gpu_batch batch;
    uint32_t *carry_in, *carry_out;
    int launched, ran;
    uint64_t order;
} emulated_slot;

struct sm_dfa_cuda {
    smg_view view;
    uint32_t stride;
    uint32_t *step, *step1, *code, *col1;
    uint64_t map_cap;
    uint32_t *maps, *in;
    smg_scratch scratch;
    uint32_t carry[2];
    uint64_t launches;
    size_t text_cap, chunk_cap, segment_cap;
    emulated_slot slots[2];
};

int sm_dfa_cuda_device(int device, sm_dfa_gpu_device_info *info, char *msg) {
    if (device != 0) {
        snprintf(msg, 256, "GPU %d does not exist (1 visible)", device);
        return -1;
    }
    snprintf(info->name, sizeof info->name, "emulated GPU 0");
    info->parallelism = 256;
    info->free_memory = (size_t)1 << 30;
    return 0;
}

static uint32_t *copy_words(const uint32_t *from, size_t n) {
    uint32_t *p = malloc(n * sizeof *p);
    if (p) memcpy(p, from, n * sizeof *p);
    return p;
}

void sm_dfa_cuda_close(sm_dfa_cuda *d) {
    if (!d) return;
    for (int i = 0; i < 2; i++) {
        free(d->slots[i].text);
        free(d->slots[i].chunks);
        free(d->slots[i].segments);
        free(d->slots[i].finals);
    }
    free(d->step);
    free(d->step1);
    free(d->code);
    free(d->col1);
    free(d->maps);
    free(d->in);
    free(d->scratch.lanes);
    free(d);
}

int sm_dfa_cuda_open(int device, const sm_dfa_gpu_tables *t, size_t text_cap, size_t chunk_cap, size_t segment_cap,
                     size_t map_cap, sm_dfa_cuda **out, char *msg) {
    *out = NULL;
    sm_dfa_gpu_device_info info;
    if (sm_dfa_cuda_device(device, &info, msg) != 0) return -1;
    sm_dfa_cuda *d = calloc(1, sizeof *d);
    if (!d) return snprintf(msg, 256, "out of memory"), -1;
    size_t words = (size_t)t->states * t->row;
    d->step = copy_words(t->step, words);
    d->step1 = copy_words(t->stride == 1 ? t->step : t->step1, words);
    d->code = copy_words(t->code, (size_t)t->stride * 256);
    d->col1 = copy_words(t->col1, 256);
    d->stride = t->stride;
    d->view.step = d->step;
    d->view.step1 = t->stride == 1 ? d->step : d->step1;
    d->view.code = d->code;
    d->view.col1 = d->col1;
    d->view.states = t->states, d->view.dfa_states = t->dfa_states, d->view.row = t->row;
    d->view.row_shift = t->row_shift, d->view.row_inverse = t->row_inverse;
    d->map_cap = map_cap;
    uint64_t map_words = 0, in_words = 0;
    smg_layout(map_cap, t->states, NULL, NULL, &map_words, &in_words);
    d->maps = malloc((size_t)map_words * sizeof(uint32_t) + 4);
    d->in = malloc((size_t)in_words * sizeof(uint32_t) + 4);
    d->scratch.pitch = map_cap;
    int ok = d->step && d->step1 && d->code && d->col1 && d->maps && d->in;
    if (t->dfa_states > 4) {
        size_t n = (size_t)t->states * map_cap;
        d->scratch.lanes = malloc(4 * n * sizeof(uint32_t));
        ok = ok && d->scratch.lanes;
        if (d->scratch.lanes) {
            /* garbage, as fresh device memory would be */
            memset(d->scratch.lanes, 0xA5, 4 * n * sizeof(uint32_t));
            d->scratch.owner = d->scratch.lanes + n;
            d->scratch.mark = d->scratch.owner + n;
            d->scratch.slot = d->scratch.mark + n;
        }
    }
    d->text_cap = text_cap, d->chunk_cap = chunk_cap, d->segment_cap = segment_cap;
    for (int i = 0; i < 2 && ok; i++) {
        emulated_slot *s = &d->slots[i];
        s->text = malloc(text_cap ? text_cap : 1);
        s->chunks = malloc((chunk_cap ? chunk_cap : 1) * sizeof *s->chunks);
        s->segments = malloc((segment_cap ? segment_cap : 1) * sizeof *s->segments);
        s->finals = malloc((segment_cap ? segment_cap : 1) * sizeof *s->finals);
        ok = s->text && s->chunks && s->segments && s->finals;
    }
    if (!ok) {
        sm_dfa_cuda_close(d);
        return snprintf(msg, 256, "out of memory"), -1;
    }
    *out = d;
    return 0;
}

uint8_t *sm_dfa_cuda_text(sm_dfa_cuda *d, unsigned i) { return d->slots[i].text; }
sm_dfa_gpu_chunk *sm_dfa_cuda_chunks(sm_dfa_cuda *d, unsigned i) { return d->slots[i].chunks; }
sm_dfa_gpu_segment *sm_dfa_cuda_segments(sm_dfa_cuda *d, unsigned i) { return d->slots[i].segments; }

int sm_dfa_cuda_launch(sm_dfa_cuda *d, unsigned i, const sm_dfa_gpu_batch *b, char *msg) {
    emulated_slot *s = &d->slots[i];
    if (s->launched) return snprintf(msg, 256, "emulated GPU: slot %u launched twice", i), -1;
    if (b->len > d->text_cap || b->nchunks > d->chunk_cap || b->nsegments > d->segment_cap || b->nmaps > d->map_cap)
        return snprintf(msg, 256, "a batch over the slot's capacity"), -1;
    s->batch = *b;
    s->carry_in = d->carry + ((d->launches + 1) & 1);
    s->carry_out = d->carry + (d->launches & 1);
    s->order = d->launches++;
    s->launched = 1;
    s->ran = 0;
    return 0;
}

/* The kernels of one batch, thread index by thread index. */
static void run_batch(sm_dfa_cuda *d, emulated_slot *s) {
    const sm_dfa_gpu_batch *b = &s->batch;
    const smg_view *t = &d->view;
    int many = t->dfa_states > 4;
    for (uint64_t c = 0; c < b->nchunks; c++)
        smg_chunk(t, d->stride, many, s->text, s->chunks, s->segments, c, b->nsegments, d->maps, d->scratch,
                  s->carry_in, s->carry_out, s->finals);
    if (b->nmaps) {
        uint64_t counts[SMG_MAX_LEVELS], map_off[SMG_MAX_LEVELS], in_off[SMG_MAX_LEVELS];
        int levels = smg_levels(b->nmaps, counts);
        smg_layout(b->nmaps, t->states, map_off, in_off, NULL, NULL);
        for (int l = 0; l < levels; l++)
            for (uint64_t g = 0; g < counts[l + 1]; g++)
                for (uint32_t st = 0; st < t->states; st++)
                    smg_up(d->maps + map_off[l], counts[l], t->states, g, st, d->maps + map_off[l + 1]);
        d->in[in_off[levels]] = 0;
        for (int l = levels - 1; l >= 0; l--)
            for (uint64_t g = 0; g < counts[l + 1]; g++)
                smg_down(d->maps + map_off[l], counts[l], t->states, g, d->in + in_off[l + 1], d->in + in_off[l]);
        for (uint64_t i = 0; i < b->nsegments; i++)
            smg_gather(s->segments, i, b->nsegments, d->maps, d->in, t->states, s->finals, s->carry_out);
    }
    s->ran = 1;
}

int sm_dfa_cuda_wait(sm_dfa_cuda *d, unsigned i, const uint32_t **finals, char *msg) {
    emulated_slot *s = &d->slots[i];
    *finals = NULL;
    if (!s->launched) return snprintf(msg, 256, "no batch in this slot"), -1;
    /* Batches run in launch order, as on the device's stream. */
    emulated_slot *other = &d->slots[i ^ 1u];
    if (other->launched && !other->ran && other->order < s->order) run_batch(d, other);
    if (!s->ran) run_batch(d, s);
    s->launched = 0;
    *finals = s->finals;
    return 0;
}

/* The stand-in's own time (for checking benchmark programs, not for figures). */
int sm_dfa_cuda_time(sm_dfa_cuda *d, unsigned i, int repeats, double *ms, char *msg) {
    emulated_slot *s = &d->slots[i];
    if (!s->ran) return snprintf(msg, 256, "no batch run in this slot"), -1;
    double best = 0;
    for (int r = 0; r < (repeats < 1 ? 1 : repeats); r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        run_batch(d, s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
        if (r == 0 || t < best) best = t;
    }
    *ms = best;
    return 0;
}
