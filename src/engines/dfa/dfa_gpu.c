/* The GPU DFA run, host side (plain C): batches, segments and chunk plans
 * for the device side (dfa_gpu_device.h), results in input order.
 *
 * Inputs are copied into the slot being filled; a full slot is launched and
 * the other slot, launched before it, is waited for, its results delivered,
 * and filled next. Each input's bytes in a batch are one segment; a segment
 * longer than the chunk length is cut into chunks (seed 003's balanced
 * sizes: the first, simulated from one state, M times longer than the
 * others), the others are one chunk each. An input that goes on into the
 * next batch starts its next segment from the state carried on the device.
 *
 * Chunk length: long enough that the all-states simulation's extra work
 * (the lane steps before the lanes meet, counted on a sample of the first
 * long input) stays a small share, and short enough that a full batch gives
 * every GPU thread a chunk, within the memory the maps and lanes may take.
 * The plan depends on the data, never on timings, so results and chunk
 * cuts repeat exactly.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/prefix.h"
#include "engines/dfa/dfa_gpu_device.h"
#include "engines/dfa/dfa_internal.h"

#define DEFAULT_BATCH ((size_t)64 << 20)
#define MIN_CHUNK ((size_t)256)
/* Chunks a full batch is cut into, per thread the GPU runs at once. */
#define THREADS_PER_CHUNK 2
/* The chunk is this many times the lane steps the lanes take to meet. */
#define CHUNK_PER_EXTRA 8
#define SAMPLE_BYTES ((size_t)64 * 1024)
#define SAMPLE_WORK ((uint64_t)1 << 26)
/* Segments a batch holds at most (one per input in it). */
#define MAX_SEGMENTS ((size_t)1 << 18)
/* Maps (chunks of long inputs) a batch holds at most. */
#define MAX_MAPS ((size_t)1 << 20)
/* Device memory the maps and lanes may take: this share of the free memory. */
#define MAP_MEMORY_SHARE 4
#define PARALLEL_COPY_BYTES ((size_t)8 << 20)

typedef struct {
    uint64_t input;
    uint64_t input_offset; /* bytes of its input before this segment */
    size_t begin, end;     /* batch offsets */
    uint32_t from;         /* run state, or SM_DFA_GPU_CARRY */
    int ends;              /* the input ends here */
} host_segment;

struct sm_dfa_gpu {
    const sm_dfa_matcher *matcher;
    sm_dfa_gpu_options opt;
    unsigned copy_threads;
    sm_dfa_cuda *dev;
    sm_dfa_gpu_device_info info;
    uint32_t states, dfa_states, err_state, cols;
    uint32_t *targets;     /* plain, for the sample count */
    uint32_t col1[256];
    size_t batch_cap, chunk_cap, segment_cap, map_cap;
    size_t chunk_floor;    /* chunks are at least this long */
    size_t chunk_len;      /* 0 until planned */
    double ratio;
    uint64_t extra_steps;  /* measured lane steps beyond one path */
    host_segment *segs[2];
    size_t nsegs[2];
    size_t *cuts;
    unsigned fill;
    size_t fill_len;
    int pending[2];
    unsigned oldest;       /* with both pending: the one launched first */
    size_t last_chunks, last_maps;
    /* the input begun */
    int input_open;
    uint64_t next_input, cur_input, cur_offset, clean;
    int cur_unknown;       /* the input begun met a byte outside the alphabet */
    uint64_t cur_unknown_at;
    uint8_t cur_unknown_byte;
    /* an input going on past the last batch waited for: its state then */
    int tail_valid, tail_sink;
    uint64_t tail_input, tail_unknown_at;
    uint8_t tail_unknown_byte;
    sm_dfa_gpu_result_fn on_result;
    void *ctx;
    int status;            /* sticky */
    sm_error error;
    int capture;
    uint64_t capture_input;
    uint32_t captured;
};

void sm_dfa_gpu_options_init(sm_dfa_gpu_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->policy = SM_DFA_CHUNKS_BALANCED;
}

static int fail(sm_dfa_gpu *g, sm_error *err, int code, const char *msg) {
    if (g->status == SM_OK) {
        g->status = code;
        sm_set_error(&g->error, code, "%s", msg);
    }
    if (err) *err = g->error;
    return g->status;
}

static int sticky(sm_dfa_gpu *g, sm_error *err) {
    if (g->status != SM_OK && err) *err = g->error;
    return g->status;
}

/* ------------------------------------------------------------- tables */

static uint32_t odd_inverse(uint32_t d) {
    uint32_t x = d;
    for (int i = 0; i < 5; i++) x *= 2u - d * x;
    return x;
}

/* Stride 4, 2 or 1: the largest whose step table stays within 32 KB (the
   tables then live in shared memory). */
static int build_tables(sm_dfa_gpu *g, const uint32_t col1[256], sm_dfa_gpu_tables *t, sm_error *err) {
    const uint32_t n = g->states, C = g->cols;
    unsigned stride = 1;
    uint64_t row = C;
    if ((uint64_t)n * C * C * C * C * 4 <= 32 * 1024) stride = 4, row = (uint64_t)C * C * C * C;
    else if ((uint64_t)n * C * C * 4 <= 32 * 1024) stride = 2, row = (uint64_t)C * C;
    if ((uint64_t)n * row >= 0x7FFFFFFFu)
        return sm_set_error(err, SM_ERR_LIMIT, "dfa: %u states are too many for the GPU", g->dfa_states);
    size_t words = (size_t)n * (size_t)row;
    uint32_t *step = malloc(words * sizeof *step);
    uint32_t *step1 = stride == 1 ? step : calloc(words, sizeof *step1);
    uint32_t *code = malloc((size_t)stride * 256 * sizeof *code);
    uint32_t *c1 = malloc(256 * sizeof *c1);
    if (!step || !step1 || !code || !c1) {
        free(step);
        if (step1 != step) free(step1);
        free(code);
        free(c1);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for the GPU tables");
    }
    const uint32_t R = (uint32_t)row;
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t c = 0; c < C; c++) step1[(size_t)s * R + c] = g->targets[(size_t)s * C + c] * R;
    if (stride > 1) {
        for (uint32_t s = 0; s < n; s++)
            for (uint32_t idx = 0; idx < R; idx++) {
                /* the digits of idx, most significant first, are the group's columns */
                uint32_t digits[4], x = idx;
                for (unsigned j = stride; j-- > 0;) {
                    digits[j] = x % C;
                    x /= C;
                }
                uint32_t v = s;
                for (unsigned j = 0; j < stride; j++) v = g->targets[(size_t)v * C + digits[j]];
                step[(size_t)s * R + idx] = v * R;
            }
    }
    uint32_t weight = 1;
    for (unsigned j = stride; j-- > 0;) {
        for (int b = 0; b < 256; b++) code[j * 256 + b] = col1[b] * weight;
        weight *= C;
    }
    memcpy(c1, col1, 256 * sizeof *c1);
    t->states = n;
    t->dfa_states = g->dfa_states;
    t->stride = stride;
    t->row = R;
    t->row_shift = (uint32_t)__builtin_ctz(R);
    t->row_inverse = odd_inverse(R >> t->row_shift);
    t->step = step;
    t->step1 = step1;
    t->code = code;
    t->col1 = c1;
    return SM_OK;
}

static void free_tables(sm_dfa_gpu_tables *t) {
    if (t->step1 != t->step) free((void *)t->step1);
    free((void *)t->step);
    free((void *)t->code);
    free((void *)t->col1);
}

/* ------------------------------------------------------------- opening */

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

int sm_dfa_gpu_open(const sm_dfa_matcher *matcher, const sm_dfa_gpu_options *opts, sm_dfa_gpu_result_fn on_result,
                    void *ctx, sm_dfa_gpu **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the GPU run");
    *out = NULL;
    if (!matcher) return sm_set_error(err, SM_ERR_INVALID, "dfa: no matcher given");
    sm_dfa_gpu_options defaults;
    if (!opts) {
        sm_dfa_gpu_options_init(&defaults);
        opts = &defaults;
    }
    char msg[256] = "";
    sm_dfa_gpu_device_info info;
    memset(&info, 0, sizeof info);
    if (sm_dfa_cuda_device(opts->device, &info, msg) != 0) return sm_set_error(err, SM_ERR_DEVICE, "%s", msg);
    sm_dfa_gpu *g = calloc(1, sizeof *g);
    if (!g) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    g->matcher = matcher;
    g->opt = *opts;
    g->info = info;
    g->on_result = on_result;
    g->ctx = ctx;
    g->copy_threads = opts->copy_threads;
    if (!g->copy_threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        g->copy_threads = cores > 8 ? 8 : cores > 1 ? (unsigned)cores : 1;
    }
    g->targets = sm_dfa_matcher_plain(matcher, &g->states, &g->dfa_states, &g->cols, &g->err_state, g->col1);
    if (!g->targets) {
        free(g);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for the GPU tables");
    }
    sm_dfa_gpu_tables t;
    memset(&t, 0, sizeof t);
    int rc = build_tables(g, g->col1, &t, err);
    if (rc != SM_OK) {
        free(g->targets);
        free(g);
        return rc;
    }
    g->batch_cap = opts->batch_bytes ? opts->batch_bytes : DEFAULT_BATCH;
    /* Memory per map: the maps of the scan tree and, for more than four
       states, the lanes (four arrays of the states). */
    uint64_t per_map = (uint64_t)g->states * 4 * (g->dfa_states > 4 ? 6 : 2);
    uint64_t budget = info.free_memory / MAP_MEMORY_SHARE;
    uint64_t table_bytes = (uint64_t)t.states * t.row * 4 * (t.stride > 1 ? 2 : 1);
    budget = budget > table_bytes ? budget - table_bytes : 0;
    uint64_t max_maps = budget / per_map;
    size_t floor = ceil_div(g->batch_cap, info.parallelism / THREADS_PER_CHUNK ? info.parallelism / THREADS_PER_CHUNK : 1);
    if (floor < MIN_CHUNK) floor = MIN_CHUNK;
    if (opts->chunk_bytes) floor = opts->chunk_bytes;
    if (max_maps < 8) {
        uint32_t n = g->dfa_states;
        free_tables(&t);
        free(g->targets);
        free(g);
        return sm_set_error(err, SM_ERR_DEVICE, "dfa: the GPU's memory is too small for %u states", n);
    }
    /* a full batch of long inputs makes at most 2 * batch / chunk maps */
    if (max_maps > MAX_MAPS) max_maps = MAX_MAPS;
    size_t memory_floor = ceil_div(2 * g->batch_cap, (size_t)(max_maps - 2));
    if (floor < memory_floor) floor = memory_floor;
    g->chunk_floor = floor;
    g->chunk_len = opts->chunk_bytes ? floor : 0;
    g->map_cap = 2 * ceil_div(g->batch_cap, floor) + 2;
    g->segment_cap = g->batch_cap < MAX_SEGMENTS ? g->batch_cap + 1 : MAX_SEGMENTS;
    g->chunk_cap = g->segment_cap + g->map_cap;
    g->ratio = opts->first_chunk_ratio >= 1.0 ? opts->first_chunk_ratio : 0;
    g->segs[0] = malloc(g->segment_cap * sizeof(host_segment));
    g->segs[1] = malloc(g->segment_cap * sizeof(host_segment));
    g->cuts = malloc((g->map_cap + 1) * sizeof *g->cuts);
    if (!g->segs[0] || !g->segs[1] || !g->cuts) {
        free_tables(&t);
        sm_dfa_gpu_free(g);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    if (sm_dfa_cuda_open(opts->device, &t, g->batch_cap, g->chunk_cap, g->segment_cap, g->map_cap, &g->dev, msg) != 0) {
        free_tables(&t);
        sm_dfa_gpu_free(g);
        return sm_set_error(err, SM_ERR_DEVICE, "%s", msg);
    }
    free_tables(&t);
    *out = g;
    return SM_OK;
}

void sm_dfa_gpu_free(sm_dfa_gpu *g) {
    if (!g) return;
    sm_dfa_cuda_close(g->dev);
    free(g->segs[0]);
    free(g->segs[1]);
    free(g->cuts);
    free(g->targets);
    free(g);
}

const char *sm_dfa_gpu_device_name(const sm_dfa_gpu *g) { return g ? g->info.name : ""; }
uint64_t sm_dfa_gpu_clean_bytes(const sm_dfa_gpu *g) { return g && g->input_open ? g->clean : 0; }

int sm_dfa_gpu_unknown(const sm_dfa_gpu *g, uint64_t *offset, uint8_t *byte) {
    if (!g || !g->input_open || !g->cur_unknown) return 0;
    if (offset) *offset = g->cur_unknown_at;
    if (byte) *byte = g->cur_unknown_byte;
    return 1;
}

/* ------------------------------------------------------------- planning */

/* The simulation from every state over p[0, len), merging equal lanes
   every 8 symbols as the device does (work capped: then the rate so far is
   extrapolated): *extra_steps, the lane steps beyond one path before the
   lanes met; and the cost on the GPU relative to one path, where up to four
   lanes (stepped together in registers, independent chains) cost one and
   more cost a quarter each: *extra_cost beyond one path when the lanes met,
   else *steady, the cost per symbol. */
static int count_lane_steps(const sm_dfa_gpu *g, const uint8_t *p, size_t len, uint64_t *extra_steps,
                            double *extra_cost, double *steady) {
    const uint32_t n = g->dfa_states, C = g->cols;
    uint32_t *lanes = malloc((size_t)n * sizeof *lanes);
    uint32_t *mark = calloc(g->states, sizeof *mark);
    if (!lanes || !mark) {
        free(lanes);
        free(mark);
        return SM_ERR_NOMEM;
    }
    const uint32_t *col1 = g->col1;
    size_t a = n;
    for (uint32_t s = 0; s < n; s++) lanes[s] = s;
    uint64_t steps = 0;
    double cost = 0;
    uint32_t gen = 0;
    size_t i = 0;
    for (; i < len && a > 1 && steps < SAMPLE_WORK; i++) {
        const uint32_t c = col1[p[i]];
        for (size_t j = 0; j < a; j++) lanes[j] = g->targets[(size_t)lanes[j] * C + c];
        steps += a;
        cost += a <= 4 ? 1.0 : (double)a / 4.0;
        if ((i & 7) == 7) {
            gen++;
            size_t kept = 0;
            for (size_t j = 0; j < a; j++)
                if (mark[lanes[j]] != gen) mark[lanes[j]] = gen, lanes[kept++] = lanes[j];
            a = kept;
        }
    }
    free(lanes);
    free(mark);
    *extra_steps = 0;
    *extra_cost = 0;
    *steady = 0;
    if (a == 1) {
        *extra_steps = steps > i ? steps - i : 0;
        *extra_cost = cost > (double)i ? cost - (double)i : 0;
    } else {
        *steady = i ? cost / (double)i : 1.0;
    }
    return SM_OK;
}

/* The chunk length and the balanced policy's ratio, from a sample of the
   first segment long enough to be cut. Seed 003's ratio M is the cost of
   the all-states simulation against one path; on the GPU four lanes cost
   about one (docs/dfa.md: a 4-state DFA whose paths never meet ran slower
   with M = 4 than with equal chunks), so M counts lanes past four. */
static int plan_chunks(sm_dfa_gpu *g, const uint8_t *text, size_t len) {
    size_t sample = len < SAMPLE_BYTES ? len : SAMPLE_BYTES;
    uint64_t extra = 0;
    double extra_cost = 0, steady = 0;
    if (count_lane_steps(g, text + (len - sample) / 2, sample, &extra, &extra_cost, &steady) != SM_OK)
        return SM_ERR_NOMEM;
    g->extra_steps = extra;
    if (!g->chunk_len) {
        uint64_t want = extra * CHUNK_PER_EXTRA;
        g->chunk_len = want > g->chunk_floor ? (size_t)want : g->chunk_floor;
    }
    if (g->ratio == 0) {
        g->ratio = steady > 0 ? steady : 1.0 + extra_cost / (double)g->chunk_len;
        if (g->ratio < 1.0) g->ratio = 1.0;
    }
    return SM_OK;
}

/* Chunks and device segments of the slot's batch. */
static int plan_batch(sm_dfa_gpu *g, unsigned slot, sm_dfa_gpu_batch *b) {
    const host_segment *hs = g->segs[slot];
    const size_t nseg = g->nsegs[slot];
    const uint8_t *text = sm_dfa_cuda_text(g->dev, slot);
    sm_dfa_gpu_chunk *chunks = sm_dfa_cuda_chunks(g->dev, slot);
    sm_dfa_gpu_segment *segs = sm_dfa_cuda_segments(g->dev, slot);
    size_t nchunks = 0, nmaps = 0;
    for (size_t i = 0; i < nseg; i++) {
        size_t len = hs[i].end - hs[i].begin;
        if ((!g->chunk_len || g->ratio == 0) && len > g->chunk_floor && len > 1)
            if (plan_chunks(g, text + hs[i].begin, len) != SM_OK) return SM_ERR_NOMEM;
        segs[i].from = hs[i].from;
        size_t L = g->chunk_len ? g->chunk_len : g->chunk_floor;
        size_t count = len > L ? ceil_div(len, L) : 1;
        if (count == 1) {
            chunks[nchunks++] = (sm_dfa_gpu_chunk){hs[i].begin, hs[i].end, (uint32_t)i, SM_DFA_GPU_NONE, 1, 0};
            segs[i].last_map = SM_DFA_GPU_NONE;
            continue;
        }
        sm_dfa_chunk_cuts(len, count, g->opt.policy, g->ratio, g->cuts);
        for (size_t c = 0; c < count; c++)
            chunks[nchunks++] = (sm_dfa_gpu_chunk){hs[i].begin + g->cuts[c], hs[i].begin + g->cuts[c + 1], (uint32_t)i,
                                                   (uint32_t)(nmaps + c), c == 0, 0};
        nmaps += count;
        segs[i].last_map = (uint32_t)(nmaps - 1);
    }
    b->len = g->fill_len;
    b->nchunks = nchunks;
    b->nsegments = nseg;
    b->nmaps = nmaps;
    g->last_chunks = nchunks;
    g->last_maps = nmaps;
    return SM_OK;
}

/* ------------------------------------------------------------- results */

static int deliver(sm_dfa_gpu *g, const sm_dfa_gpu_result *r) {
    if (g->capture && r->input == g->capture_input) {
        g->captured = r->state;
        return SM_OK;
    }
    if (g->on_result && g->on_result(r, g->ctx) != 0) {
        g->status = SM_ERR_TERMINATED;
        sm_set_error(&g->error, SM_ERR_TERMINATED, "dfa: stopped by the result callback");
        return SM_ERR_TERMINATED;
    }
    return SM_OK;
}

/* Waits for the slot's batch and delivers the results of the inputs that ended in it. */
static int collect(sm_dfa_gpu *g, unsigned slot, sm_error *err) {
    const uint32_t *finals = NULL;
    char msg[256] = "";
    g->pending[slot] = 0;
    if (sm_dfa_cuda_wait(g->dev, slot, &finals, msg) != 0) return fail(g, err, SM_ERR_DEVICE, msg);
    const host_segment *hs = g->segs[slot];
    const uint8_t *text = sm_dfa_cuda_text(g->dev, slot);
    for (size_t i = 0; i < g->nsegs[slot]; i++) {
        const host_segment *s = &hs[i];
        uint32_t final = finals[i];
        if (final >= g->states) return fail(g, err, SM_ERR_DEVICE, "dfa: the GPU returned a state out of range");
        int sink = g->err_state != SM_DFA_NO_STATE && final == g->err_state;
        int sink_before = s->from == SM_DFA_GPU_CARRY && g->tail_valid && g->tail_input == s->input && g->tail_sink;
        uint64_t unknown_at = sink_before ? g->tail_unknown_at : 0;
        uint8_t unknown_byte = sink_before ? g->tail_unknown_byte : 0;
        if (sink && !sink_before) {
            size_t at = sm_dfa_find_unknown(g->matcher, text + s->begin, s->end - s->begin);
            if (at >= s->end - s->begin)
                return fail(g, err, SM_ERR_DEVICE, "dfa: the GPU reported a byte outside the alphabet that is not there");
            unknown_at = s->input_offset + at;
            unknown_byte = text[s->begin + at];
        }
        if (g->input_open && s->input == g->cur_input) {
            g->clean = sink ? unknown_at : s->input_offset + (s->end - s->begin);
            g->cur_unknown = sink;
            g->cur_unknown_at = unknown_at;
            g->cur_unknown_byte = unknown_byte;
        }
        if (!s->ends) {
            g->tail_valid = 1;
            g->tail_input = s->input;
            g->tail_sink = sink;
            g->tail_unknown_at = unknown_at;
            g->tail_unknown_byte = unknown_byte;
            continue;
        }
        if (g->status != SM_OK) continue; /* stopped: results dropped */
        sm_dfa_gpu_result r = {s->input, sink ? SM_DFA_NO_STATE : final, sink ? unknown_at : 0,
                               sink ? unknown_byte : 0};
        if (deliver(g, &r) != SM_OK) {
            if (err) *err = g->error;
        }
    }
    return g->status;
}

/* Launches the slot being filled and collects the other one. */
static int launch_fill(sm_dfa_gpu *g, sm_error *err) {
    unsigned slot = g->fill;
    if (g->nsegs[slot] == 0) return SM_OK;
    sm_dfa_gpu_batch b;
    if (plan_batch(g, slot, &b) != SM_OK) return fail(g, err, SM_ERR_NOMEM, "dfa: out of memory planning a batch");
    char msg[256] = "";
    if (sm_dfa_cuda_launch(g->dev, slot, &b, msg) != 0) return fail(g, err, SM_ERR_DEVICE, msg);
    g->pending[slot] = 1;
    unsigned other = slot ^ 1u;
    int rc = SM_OK;
    if (g->pending[other]) rc = collect(g, other, err);
    g->fill = other;
    g->fill_len = 0;
    g->nsegs[other] = 0;
    if (rc != SM_OK) return rc;
    if (g->input_open) {
        /* the input goes on from the state its last segment ends in */
        host_segment *s = &g->segs[other][g->nsegs[other]++];
        *s = (host_segment){g->cur_input, g->cur_offset, 0, 0, SM_DFA_GPU_CARRY, 0};
    }
    return SM_OK;
}

/* ------------------------------------------------------------- inputs */

int sm_dfa_gpu_begin(sm_dfa_gpu *g, uint32_t state, sm_error *err) {
    if (!g) return sm_set_error(err, SM_ERR_INVALID, "dfa: no GPU run");
    if (sticky(g, err)) return g->status;
    if (g->input_open) return sm_set_error(err, SM_ERR_INVALID, "dfa: an input is already begun");
    if (state >= g->dfa_states) return sm_set_error(err, SM_ERR_INVALID, "dfa: start state %u out of range", state);
    if (g->nsegs[g->fill] == g->segment_cap && launch_fill(g, err) != SM_OK) return g->status;
    g->input_open = 1;
    g->cur_input = g->next_input++;
    g->cur_offset = 0;
    g->clean = 0;
    g->cur_unknown = 0;
    host_segment *s = &g->segs[g->fill][g->nsegs[g->fill]++];
    *s = (host_segment){g->cur_input, 0, g->fill_len, g->fill_len, state, 0};
    return SM_OK;
}

typedef struct {
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
} copy_piece;

static void copy_task(size_t i, void *arg) {
    const copy_piece *c = (const copy_piece *)arg + i;
    memcpy(c->dst, c->src, c->len);
}

/* Large pieces are copied into the pinned buffer on several threads of the
   process-wide team (sm_parallel_for). */
static void copy_in(const sm_dfa_gpu *g, uint8_t *dst, const uint8_t *src, size_t len) {
    unsigned threads = g->copy_threads;
    if (len < PARALLEL_COPY_BYTES || threads < 2) {
        memcpy(dst, src, len);
        return;
    }
    if (threads > 64) threads = 64;
    copy_piece pieces[64];
    size_t part = ceil_div(len, threads);
    for (unsigned i = 0; i < threads; i++) {
        size_t at = part * i < len ? part * i : len;
        size_t n = len - at < part ? len - at : part;
        pieces[i] = (copy_piece){dst + at, src + at, n};
    }
    sm_parallel_for(threads, threads, copy_task, pieces);
}

int sm_dfa_gpu_feed(sm_dfa_gpu *g, const void *data, size_t len, sm_error *err) {
    if (!g) return sm_set_error(err, SM_ERR_INVALID, "dfa: no GPU run");
    if (sticky(g, err)) return g->status;
    if (!g->input_open) return sm_set_error(err, SM_ERR_INVALID, "dfa: no input begun");
    if (!data && len) return sm_set_error(err, SM_ERR_INVALID, "dfa: no data");
    const uint8_t *p = data;
    while (len > 0) {
        if (g->fill_len == g->batch_cap) {
            if (launch_fill(g, err) != SM_OK) return g->status;
            continue;
        }
        size_t take = g->batch_cap - g->fill_len < len ? g->batch_cap - g->fill_len : len;
        copy_in(g, sm_dfa_cuda_text(g->dev, g->fill) + g->fill_len, p, take);
        g->fill_len += take;
        g->segs[g->fill][g->nsegs[g->fill] - 1].end = g->fill_len;
        g->cur_offset += take;
        p += take;
        len -= take;
    }
    return SM_OK;
}

int sm_dfa_gpu_end(sm_dfa_gpu *g, sm_error *err) {
    if (!g) return sm_set_error(err, SM_ERR_INVALID, "dfa: no GPU run");
    if (sticky(g, err)) return g->status;
    if (!g->input_open) return sm_set_error(err, SM_ERR_INVALID, "dfa: no input begun");
    g->segs[g->fill][g->nsegs[g->fill] - 1].ends = 1;
    g->input_open = 0;
    return SM_OK;
}

int sm_dfa_gpu_flush(sm_dfa_gpu *g, sm_error *err) {
    if (!g) return sm_set_error(err, SM_ERR_INVALID, "dfa: no GPU run");
    if (sticky(g, err)) return g->status;
    if (g->nsegs[g->fill] && launch_fill(g, err) != SM_OK) return g->status;
    /* launch_fill collected the slot before; the one just launched is left */
    unsigned other = g->fill ^ 1u;
    if (g->pending[other] && collect(g, other, err) != SM_OK) return g->status;
    if (g->pending[g->fill] && collect(g, g->fill, err) != SM_OK) return g->status;
    return SM_OK;
}

int sm_dfa_gpu_run(sm_dfa_gpu *g, uint32_t state, const void *data, size_t len, uint32_t *final_state, sm_error *err) {
    if (!g || !final_state) return sm_set_error(err, SM_ERR_INVALID, "dfa: a GPU run needs a place for the state");
    if (g->input_open) return sm_set_error(err, SM_ERR_INVALID, "dfa: an input is already begun");
    if (sm_dfa_gpu_flush(g, err) != SM_OK) return g->status;
    g->capture = 1;
    g->capture_input = g->next_input;
    g->captured = SM_DFA_NO_STATE;
    int rc = sm_dfa_gpu_begin(g, state, err);
    if (rc == SM_OK) rc = sm_dfa_gpu_feed(g, data, len, err);
    if (rc == SM_OK) rc = sm_dfa_gpu_end(g, err);
    if (rc == SM_OK) rc = sm_dfa_gpu_flush(g, err);
    g->capture = 0;
    if (rc == SM_OK) *final_state = g->captured;
    return rc;
}

/* ------------------------------------------------------------- benchmarks */

void sm_dfa_gpu_plan_info(const sm_dfa_gpu *g, size_t *chunk_len, double *ratio, size_t *chunks, size_t *maps) {
    *chunk_len = g->chunk_len ? g->chunk_len : g->chunk_floor;
    *ratio = g->ratio;
    *chunks = g->last_chunks;
    *maps = g->last_maps;
}

int sm_dfa_gpu_time_last(sm_dfa_gpu *g, int repeats, double *ms, sm_error *err) {
    char msg[256] = "";
    if (sm_dfa_cuda_time(g->dev, g->fill ^ 1u, repeats, ms, msg) != 0) return sm_set_error(err, SM_ERR_DEVICE, "%s", msg);
    return SM_OK;
}
