/* The GPU DFA run (sm_dfa_gpu_*) against a plain sequential simulation and
 * the CPU's sm_dfa_run: random DFAs of 1 to 10^4 states over alphabets of 2
 * to 256 columns (random tables, permutations whose paths never meet,
 * rotations that merge slowly), bytes outside the alphabet as errors or
 * skipped, empty, tiny and long inputs, many inputs in a row (as
 * --per-record makes them), pieces of any size, batches of a few bytes to
 * the default (inputs cut across batches everywhere), forced chunk lengths
 * and both chunk policies; results in input order with the offset and byte
 * of the first unknown byte; the bytes reported clean; a stop asked by the
 * callback; seed 003's 4-state DFA and a random 100-state DFA on a long
 * input with the planned chunks; a 9 MiB piece copied on several threads.
 *
 * Without a GPU the refusals are checked and the test reports itself
 * skipped (exit 77). Built as test_dfa_cuda_emulated it links the CPU
 * stand-in for the GPU side (tests/emulated), which runs the kernels' own
 * per-thread code, and runs everything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/dfa/dfa_internal.h"
#include "seqmatch_dfa.h"
#include "testutil.h"

#define SKIPPED 77

typedef struct {
    uint32_t states, columns, start;
    uint32_t *table;
    uint16_t column_of[256];
} ref_dfa;

typedef enum { KIND_RANDOM, KIND_PERMUTATION, KIND_SLOW_MERGE, KIND_ABSORBING } dfa_kind;

static void ref_random(tu_rng *rng, ref_dfa *r, uint32_t states, uint32_t columns, int unknown, dfa_kind kind) {
    r->states = states;
    r->columns = columns;
    r->start = tu_rng_below(rng, states);
    r->table = malloc((size_t)states * columns * sizeof *r->table);
    for (uint32_t c = 0; c < columns; c++) {
        uint32_t *col = r->table + c; /* entry s at col[s * columns] */
        if (kind == KIND_PERMUTATION) {
            for (uint32_t s = 0; s < states; s++) col[(size_t)s * columns] = s;
            for (uint32_t s = states; s > 1; s--) {
                uint32_t j = tu_rng_below(rng, s), t = col[(size_t)(s - 1) * columns];
                col[(size_t)(s - 1) * columns] = col[(size_t)j * columns];
                col[(size_t)j * columns] = t;
            }
        } else {
            for (uint32_t s = 0; s < states; s++) {
                uint32_t to = tu_rng_below(rng, states);
                if (kind == KIND_SLOW_MERGE) to = c == 0 && s == 1 ? 0 : (s + c + 1) % states;
                if (kind == KIND_ABSORBING && s + 1 == states) to = s;
                col[(size_t)s * columns] = to;
            }
        }
    }
    uint8_t order[256];
    for (int b = 0; b < 256; b++) order[b] = (uint8_t)b;
    for (int b = 255; b > 0; b--) {
        int j = (int)tu_rng_below(rng, (uint32_t)b + 1);
        uint8_t t = order[b];
        order[b] = order[j];
        order[j] = t;
    }
    for (int b = 0; b < 256; b++) {
        uint32_t c;
        if ((uint32_t)b < columns) c = (uint32_t)b;
        else if (unknown && tu_rng_chance(rng, 50)) c = SM_DFA_UNKNOWN;
        else c = tu_rng_below(rng, columns);
        r->column_of[order[b]] = (uint16_t)c;
    }
    if (unknown && columns == 256) r->column_of[order[255]] = SM_DFA_UNKNOWN; /* one unknown byte at least */
}

static sm_dfa *ref_build(const ref_dfa *r) {
    sm_dfa *d = NULL;
    sm_error e;
    uint64_t *accept = calloc((r->states + 63) / 64, sizeof *accept);
    if (sm_dfa_build(r->states, r->columns, r->start, r->table, accept, r->column_of, &d, &e) != SM_OK)
        tu_check(0, "sm_dfa_build: %s", e.message);
    free(accept);
    return d;
}

/* The expected result: end state, or the first unknown byte's offset. */
static uint32_t ref_run(const ref_dfa *r, uint32_t s, const uint8_t *p, size_t len, int skip, uint64_t *unknown_at) {
    for (size_t i = 0; i < len; i++) {
        uint16_t c = r->column_of[p[i]];
        if (c == SM_DFA_UNKNOWN) {
            if (skip) continue;
            *unknown_at = i;
            return SM_DFA_NO_STATE;
        }
        s = r->table[(size_t)s * r->columns + c];
    }
    return s;
}

static void random_input(tu_rng *rng, const ref_dfa *r, uint8_t *out, size_t len, unsigned unknown_pct) {
    uint8_t known[256], unknown[256];
    int nk = 0, nu = 0;
    for (int b = 0; b < 256; b++) {
        if (r->column_of[b] == SM_DFA_UNKNOWN) unknown[nu++] = (uint8_t)b;
        else known[nk++] = (uint8_t)b;
    }
    for (size_t i = 0; i < len; i++) {
        if (nu && tu_rng_chance(rng, unknown_pct)) out[i] = unknown[tu_rng_below(rng, (uint32_t)nu)];
        else out[i] = known[tu_rng_below(rng, (uint32_t)nk)];
    }
}

/* ------------------------------------------------------------- results */

typedef struct {
    sm_dfa_gpu_result *items;
    size_t n, cap;
    size_t stop_after; /* 0: never */
} results;

static int collect(const sm_dfa_gpu_result *r, void *ctx) {
    results *list = ctx;
    if (list->n == list->cap) {
        list->cap = list->cap ? list->cap * 2 : 64;
        list->items = realloc(list->items, list->cap * sizeof *list->items);
    }
    list->items[list->n++] = *r;
    return list->stop_after && list->n >= list->stop_after;
}

typedef struct {
    uint8_t *data;
    size_t len;
    uint32_t from;
    uint32_t want;
    uint64_t unknown_at;
} input;

/* One GPU run over the inputs (fed in random pieces, flushes between some),
   checked input by input. */
static void check_inputs(tu_rng *rng, const ref_dfa *r, const sm_dfa_matcher *m, const sm_dfa_gpu_options *go,
                         input *in, size_t count, int skip, const char *what) {
    results got = {0};
    sm_dfa_gpu *g = NULL;
    sm_error err;
    if (!tu_check(sm_dfa_gpu_open(m, go, collect, &got, &g, &err) == SM_OK, "%s: open: %s", what, err.message)) return;
    for (size_t i = 0; i < count; i++) {
        in[i].unknown_at = 0;
        in[i].want = ref_run(r, in[i].from, in[i].data, in[i].len, skip, &in[i].unknown_at);
        uint32_t cpu = sm_dfa_run(m, in[i].from, in[i].data, in[i].len);
        tu_check(cpu == in[i].want, "%s: input %zu: the CPU run gives %u, the reference %u", what, i, cpu, in[i].want);
    }
    int rc = SM_OK;
    for (size_t i = 0; i < count && rc == SM_OK; i++) {
        rc = sm_dfa_gpu_begin(g, in[i].from, &err);
        size_t at = 0;
        while (rc == SM_OK && at < in[i].len) {
            size_t piece = tu_rng_chance(rng, 30) ? in[i].len - at : 1 + tu_rng_below(rng, 5000);
            if (piece > in[i].len - at) piece = in[i].len - at;
            rc = sm_dfa_gpu_feed(g, in[i].data + at, piece, &err);
            at += piece;
            uint64_t clean = sm_dfa_gpu_clean_bytes(g);
            uint64_t bound = in[i].want == SM_DFA_NO_STATE && in[i].unknown_at < at ? in[i].unknown_at : at;
            if (!tu_check(clean <= bound, "%s: input %zu: %llu bytes clean, at most %llu", what, i,
                          (unsigned long long)clean, (unsigned long long)bound))
                break;
        }
        if (rc == SM_OK && tu_rng_chance(rng, 10)) {
            /* flushed with the input open: every byte fed is known clean, or the unknown byte is */
            rc = sm_dfa_gpu_flush(g, &err);
            uint64_t at = 0;
            uint8_t byte = 0;
            int unknown = sm_dfa_gpu_unknown(g, &at, &byte);
            int want_unknown = in[i].want == SM_DFA_NO_STATE;
            uint64_t clean = sm_dfa_gpu_clean_bytes(g);
            tu_check(rc != SM_OK || (unknown == want_unknown &&
                                     clean == (want_unknown ? in[i].unknown_at : (uint64_t)in[i].len) &&
                                     (!unknown || (at == in[i].unknown_at && byte == in[i].data[at]))),
                     "%s: input %zu flushed open: unknown %d at %llu, %llu clean (want %d at %llu of %zu)", what, i,
                     unknown, (unsigned long long)at, (unsigned long long)clean, want_unknown,
                     (unsigned long long)in[i].unknown_at, in[i].len);
        }
        if (rc == SM_OK) rc = sm_dfa_gpu_end(g, &err);
        if (rc == SM_OK && tu_rng_chance(rng, 5)) rc = sm_dfa_gpu_flush(g, &err);
    }
    if (rc == SM_OK) rc = sm_dfa_gpu_flush(g, &err);
    tu_check(rc == SM_OK, "%s: status %d: %s", what, rc, rc ? err.message : "");
    if (tu_check(got.n == count, "%s: %zu results for %zu inputs", what, got.n, count)) {
        for (size_t i = 0; i < count; i++) {
            const sm_dfa_gpu_result *x = &got.items[i];
            int ok = x->input == i && x->state == in[i].want;
            if (ok && x->state == SM_DFA_NO_STATE)
                ok = x->unknown_at == in[i].unknown_at && x->unknown_byte == in[i].data[in[i].unknown_at];
            if (!tu_check(ok, "%s: input %zu (length %zu, from %u): result %llu state %u unknown at %llu, want state %u "
                              "unknown at %llu", what, i, in[i].len, in[i].from, (unsigned long long)x->input, x->state,
                          (unsigned long long)x->unknown_at, in[i].want, (unsigned long long)in[i].unknown_at))
                break;
        }
    }
    free(got.items);
    sm_dfa_gpu_free(g);
}

static uint32_t pick_states(tu_rng *rng) {
    static const uint32_t sizes[] = {1, 2, 3, 4, 5, 6, 8, 17, 64, 100, 257, 1000, 10000};
    uint32_t i = tu_rng_below(rng, sizeof sizes / sizeof *sizes);
    if (sizes[i] >= 1000 && tu_rng_chance(rng, 50)) i = tu_rng_below(rng, 9);
    return sizes[i];
}

static void random_rounds(tu_rng *rng) {
    unsigned rounds = tu_scaled(120);
    for (unsigned round = 0; round < rounds; round++) {
        uint32_t n = pick_states(rng);
        static const uint32_t column_counts[] = {2, 3, 4, 5, 16, 100, 256};
        uint32_t C = column_counts[tu_rng_below(rng, 7)];
        if (n >= 1000 && C > 16 && tu_rng_chance(rng, 70)) C = 2 + tu_rng_below(rng, 4);
        dfa_kind kind = (dfa_kind)tu_rng_below(rng, 4);
        int unknown = C < 256 ? tu_rng_chance(rng, 50) : tu_rng_chance(rng, 30);
        int skip = unknown && tu_rng_chance(rng, 30);
        ref_dfa r;
        ref_random(rng, &r, n, C, unknown, kind);
        sm_dfa *d = ref_build(&r);
        sm_dfa_matcher_options mo;
        sm_dfa_matcher_options_init(&mo);
        mo.skip_unknown = skip;
        sm_dfa_matcher *m = NULL;
        sm_error err;
        if (!d || !tu_check(sm_dfa_matcher_create(d, &mo, &m, &err) == SM_OK, "matcher: %s", err.message)) {
            sm_dfa_free(d);
            free(r.table);
            continue;
        }
        sm_dfa_gpu_options go;
        sm_dfa_gpu_options_init(&go);
        int b = (int)tu_rng_below(rng, 4);
        go.batch_bytes = b == 0 ? 1 + tu_rng_below(rng, 64) : b == 1 ? 64 + tu_rng_below(rng, 5000) : b == 2 ? 65536 : 0;
        if (n >= 1000 && go.batch_bytes == 0) go.batch_bytes = 1 << 20;
        go.chunk_bytes = tu_rng_chance(rng, 60) ? 1 + tu_rng_below(rng, 300) : 0;
        go.policy = tu_rng_chance(rng, 50) ? SM_DFA_CHUNKS_BALANCED : SM_DFA_CHUNKS_EQUAL;
        go.first_chunk_ratio = tu_rng_chance(rng, 30) ? 1.0 + tu_rng_below(rng, 9) : 0;
        /* inputs: empty, tiny, medium, now and then long */
        size_t count = 1 + tu_rng_below(rng, tu_rng_chance(rng, 20) ? 200 : 12);
        size_t max_len = n >= 1000 ? 3000 : kind == KIND_PERMUTATION && n > 64 ? 6000 : 40000;
        input *in = calloc(count, sizeof *in);
        for (size_t i = 0; i < count; i++) {
            unsigned shape = tu_rng_below(rng, 10);
            in[i].len = shape == 0 ? 0 : shape < 4 ? 1 + tu_rng_below(rng, 16) : tu_rng_below(rng, (uint32_t)max_len);
            if (shape == 9 && count < 20 && n <= 100 && kind != KIND_PERMUTATION) in[i].len = 100000 + tu_rng_below(rng, 300000);
            in[i].data = malloc(in[i].len + 1);
            unsigned unknown_pct = unknown && tu_rng_chance(rng, 30) ? (tu_rng_chance(rng, 50) ? 1 : 0) : 0;
            random_input(rng, &r, in[i].data, in[i].len, unknown_pct);
            if (unknown && !unknown_pct && in[i].len && tu_rng_chance(rng, 15)) {
                /* one unknown byte near the end */
                uint8_t u = 0;
                for (int x = 0; x < 256; x++)
                    if (r.column_of[x] == SM_DFA_UNKNOWN) u = (uint8_t)x;
                in[i].data[in[i].len - 1 - tu_rng_below(rng, in[i].len < 40 ? (uint32_t)in[i].len : 40)] = u;
            }
            in[i].from = tu_rng_below(rng, n);
        }
        char what[200];
        snprintf(what, sizeof what,
                 "round %u: %u states, %u columns, kind %d, unknown %d skip %d, batch %zu, chunk %zu, policy %d ratio %.0f, "
                 "%zu inputs",
                 round, n, C, (int)kind, unknown, skip, go.batch_bytes, go.chunk_bytes, (int)go.policy,
                 go.first_chunk_ratio, count);
        check_inputs(rng, &r, m, &go, in, count, skip, what);
        for (size_t i = 0; i < count; i++) free(in[i].data);
        free(in);
        sm_dfa_matcher_free(m);
        sm_dfa_free(d);
        free(r.table);
    }
}

/* Seed 003's 4-state DFA (over ACGT: accepts once ACG occurred), a counter
   mod 4 (no two paths ever meet) and a random 100-state DFA, on a long
   random input with the planned chunks, from the library's one-call run. */
static void long_inputs(tu_rng *rng) {
    size_t len = tu_scaled(100) >= 100 ? (size_t)6 << 20 : (size_t)1 << 20;
    uint8_t *text = malloc(len);
    for (size_t i = 0; i < len; i++) text[i] = (uint8_t)"ACGT"[tu_rng_below(rng, 4)];
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = SM_DFA_UNKNOWN;
    column_of['A'] = 0, column_of['C'] = 1, column_of['G'] = 2, column_of['T'] = 3;
    uint32_t seed4[16] = {1, 0, 0, 0, 1, 2, 0, 0, 1, 0, 3, 0, 3, 3, 3, 3}, perm4[16], random100[400];
    for (uint32_t s = 0; s < 4; s++)
        for (uint32_t c = 0; c < 4; c++) perm4[s * 4 + c] = (s + c + 1) % 4;
    for (int k = 0; k < 400; k++) random100[k] = tu_rng_below(rng, 100);
    const struct {
        const char *name;
        uint32_t states;
        const uint32_t *table;
    } cases[] = {{"seed4", 4, seed4}, {"perm4", 4, perm4}, {"random100", 100, random100}};
    for (size_t k = 0; k < 3; k++) {
        sm_dfa *d = NULL;
        sm_dfa_matcher *m = NULL;
        sm_dfa_gpu *g = NULL;
        sm_error err;
        if (!tu_check(sm_dfa_build(cases[k].states, 4, 0, cases[k].table, NULL, column_of, &d, &err) == SM_OK &&
                          sm_dfa_matcher_create(d, NULL, &m, &err) == SM_OK,
                      "%s: %s", cases[k].name, err.message)) {
            sm_dfa_free(d);
            continue;
        }
        uint32_t want = sm_dfa_run(m, 0, text, len);
        for (int policy = 0; policy < 2; policy++) {
            sm_dfa_gpu_options go;
            sm_dfa_gpu_options_init(&go);
            go.policy = policy ? SM_DFA_CHUNKS_EQUAL : SM_DFA_CHUNKS_BALANCED;
            go.batch_bytes = policy ? len / 3 + 1 : 0; /* one batch, or three */
            uint32_t got = SM_DFA_NO_STATE;
            if (tu_check(sm_dfa_gpu_open(m, &go, NULL, NULL, &g, &err) == SM_OK &&
                             sm_dfa_gpu_run(g, 0, text, len, &got, &err) == SM_OK,
                         "%s: %s", cases[k].name, err.message)) {
                size_t chunk_len, chunks, maps;
                double ratio;
                sm_dfa_gpu_plan_info(g, &chunk_len, &ratio, &chunks, &maps);
                tu_check(got == want, "%s, policy %d: GPU %u, CPU %u (chunks of %zu, ratio %.2f, %zu chunks)",
                         cases[k].name, policy, got, want, chunk_len, ratio, chunks);
                tu_check(chunks > 1 && maps == chunks, "%s: the long input was cut into %zu chunks, %zu maps",
                         cases[k].name, chunks, maps);
                /* perm4's paths never meet, but four lanes cost one path on the GPU */
                if (k == 1 && policy == 0) tu_check(ratio < 1.01, "perm4: balanced ratio %.2f", ratio);
            }
            sm_dfa_gpu_free(g);
            g = NULL;
        }
        sm_dfa_matcher_free(m);
        sm_dfa_free(d);
    }
    free(text);
}

/* A 64-state DFA whose paths never meet: 64 lanes all along, which cost
   16 times one path, so the balanced policy makes the first chunk 16 times
   longer; the result still equal. */
static void many_lanes_ratio(tu_rng *rng) {
    ref_dfa r;
    ref_random(rng, &r, 64, 4, 0, KIND_PERMUTATION);
    sm_dfa *d = ref_build(&r);
    sm_dfa_matcher *m = NULL;
    sm_dfa_gpu *g = NULL;
    sm_error err;
    size_t len = tu_scaled(100) >= 100 ? 256 * 1024 : 64 * 1024;
    uint8_t *text = malloc(len);
    random_input(rng, &r, text, len, 0);
    sm_dfa_gpu_options go;
    sm_dfa_gpu_options_init(&go);
    go.chunk_bytes = len / 16;
    uint32_t got = SM_DFA_NO_STATE;
    if (d && tu_check(sm_dfa_matcher_create(d, NULL, &m, &err) == SM_OK && sm_dfa_gpu_open(m, &go, NULL, NULL, &g, &err) == SM_OK &&
                          sm_dfa_gpu_run(g, 3, text, len, &got, &err) == SM_OK,
                      "64 lanes: %s", err.message)) {
        size_t chunk_len, chunks, maps;
        double ratio;
        sm_dfa_gpu_plan_info(g, &chunk_len, &ratio, &chunks, &maps);
        tu_check(got == sm_dfa_run(m, 3, text, len), "64 lanes: GPU %u, CPU %u", got, sm_dfa_run(m, 3, text, len));
        tu_check(ratio > 15.9 && ratio < 16.1 && chunks == 16, "64 lanes: ratio %.2f, %zu chunks", ratio, chunks);
    }
    sm_dfa_gpu_free(g);
    sm_dfa_matcher_free(m);
    sm_dfa_free(d);
    free(r.table);
    free(text);
}

/* One piece of 9 MiB, which is copied into the pinned buffer on several
   threads, against the CPU (the sum of the bytes mod 7: every byte counts). */
static void big_feed(tu_rng *rng) {
    size_t len = (size_t)9 << 20;
    uint8_t *text = malloc(len);
    tu_random_bytes(rng, (char *)text, len);
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = (uint16_t)(b % 7);
    uint32_t table[49];
    for (uint32_t st = 0; st < 7; st++)
        for (uint32_t c = 0; c < 7; c++) table[st * 7 + c] = (st + c) % 7;
    sm_dfa *d = NULL;
    sm_dfa_matcher *m = NULL;
    sm_dfa_gpu *g = NULL;
    sm_error err;
    uint32_t got = SM_DFA_NO_STATE;
    sm_dfa_gpu_options go;
    sm_dfa_gpu_options_init(&go);
    go.copy_threads = 3;
    go.chunk_bytes = len; /* one chunk: one path (the 7 paths of this DFA never meet) */
    if (tu_check(sm_dfa_build(7, 7, 0, table, NULL, column_of, &d, &err) == SM_OK &&
                     sm_dfa_matcher_create(d, NULL, &m, &err) == SM_OK &&
                     sm_dfa_gpu_open(m, &go, NULL, NULL, &g, &err) == SM_OK &&
                     sm_dfa_gpu_run(g, 1, text, len, &got, &err) == SM_OK,
                 "9 MiB piece: %s", err.message))
        tu_check(got == sm_dfa_run(m, 1, text, len), "9 MiB piece: GPU %u, CPU %u", got, sm_dfa_run(m, 1, text, len));
    sm_dfa_gpu_free(g);
    sm_dfa_matcher_free(m);
    sm_dfa_free(d);
    free(text);
}

/* A stop asked by the callback; calls after it; the one-call run; misuse. */
static void stops_and_misuse(tu_rng *rng) {
    ref_dfa r;
    ref_random(rng, &r, 7, 3, 0, KIND_RANDOM);
    sm_dfa *d = ref_build(&r);
    sm_dfa_matcher *m = NULL;
    sm_error err;
    if (!d || sm_dfa_matcher_create(d, NULL, &m, &err) != SM_OK) {
        tu_check(0, "stop: matcher");
        sm_dfa_free(d);
        free(r.table);
        return;
    }
    sm_dfa_gpu_options go;
    sm_dfa_gpu_options_init(&go);
    go.batch_bytes = 100;
    results got = {0};
    got.stop_after = 5;
    sm_dfa_gpu *g = NULL;
    if (tu_check(sm_dfa_gpu_open(m, &go, collect, &got, &g, &err) == SM_OK, "stop: open: %s", err.message)) {
        uint8_t buf[64];
        int rc = SM_OK;
        size_t i = 0;
        for (; i < 40 && rc == SM_OK; i++) {
            random_input(rng, &r, buf, sizeof buf, 0);
            rc = sm_dfa_gpu_begin(g, 0, &err);
            if (rc == SM_OK) rc = sm_dfa_gpu_feed(g, buf, sizeof buf, &err);
            if (rc == SM_OK) rc = sm_dfa_gpu_end(g, &err);
        }
        if (rc == SM_OK) rc = sm_dfa_gpu_flush(g, &err);
        tu_check(rc == SM_ERR_TERMINATED && got.n == 5, "stop: status %d, %zu results (want 5)", rc, got.n);
        tu_check(sm_dfa_gpu_begin(g, 0, &err) == SM_ERR_TERMINATED && sm_dfa_gpu_flush(g, &err) == SM_ERR_TERMINATED,
                 "stop: calls after the stop");
        sm_dfa_gpu_free(g);
    }
    free(got.items);
    if (tu_check(sm_dfa_gpu_open(m, NULL, NULL, NULL, &g, &err) == SM_OK, "misuse: open: %s", err.message)) {
        uint8_t buf[1000];
        random_input(rng, &r, buf, sizeof buf, 0);
        tu_check(sm_dfa_gpu_feed(g, buf, 1, &err) == SM_ERR_INVALID, "feed before begin");
        tu_check(sm_dfa_gpu_end(g, &err) == SM_ERR_INVALID, "end before begin");
        tu_check(sm_dfa_gpu_begin(g, 7, &err) == SM_ERR_INVALID, "start state out of range");
        tu_check(sm_dfa_gpu_begin(g, 1, &err) == SM_OK && sm_dfa_gpu_begin(g, 1, &err) == SM_ERR_INVALID,
                 "begin twice");
        uint32_t st = 0;
        tu_check(sm_dfa_gpu_run(g, 0, buf, sizeof buf, &st, &err) == SM_ERR_INVALID, "run with an input begun");
        tu_check(sm_dfa_gpu_end(g, &err) == SM_OK && sm_dfa_gpu_flush(g, &err) == SM_OK, "end, flush");
        for (size_t len = 0; len <= sizeof buf; len += 97) {
            uint32_t from = tu_rng_below(rng, 7);
            int rc = sm_dfa_gpu_run(g, from, buf, len, &st, &err);
            tu_check(rc == SM_OK && st == sm_dfa_run(m, from, buf, len), "run of %zu bytes: status %d, state %u", len,
                     rc, st);
        }
        sm_dfa_gpu_free(g);
    }
    sm_dfa_matcher_free(m);
    sm_dfa_free(d);
    free(r.table);
}

/* What holds with or without a GPU. */
static int refusals(void) {
    sm_dfa_gpu *g = NULL;
    sm_error err;
    tu_check(sm_dfa_gpu_open(NULL, NULL, NULL, NULL, &g, &err) == SM_ERR_INVALID && g == NULL, "no matcher");
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = (uint16_t)(b & 1);
    uint32_t table[2] = {0, 0};
    sm_dfa *d = NULL;
    sm_dfa_matcher *m = NULL;
    int usable = 0;
    if (tu_check(sm_dfa_build(1, 2, 0, table, NULL, column_of, &d, &err) == SM_OK &&
                     sm_dfa_matcher_create(d, NULL, &m, &err) == SM_OK,
                 "refusals: %s", err.message)) {
        sm_dfa_gpu_options go;
        sm_dfa_gpu_options_init(&go);
        go.device = 999;
        int rc = sm_dfa_gpu_open(m, &go, NULL, NULL, &g, &err);
        tu_check(rc == SM_ERR_DEVICE && g == NULL && err.message[0], "device 999: status %d", rc);
        rc = sm_dfa_gpu_open(m, NULL, NULL, NULL, &g, &err);
        if (rc == SM_OK) usable = 1;
        else
            tu_check(rc == SM_ERR_DEVICE && (strstr(err.message, "without CUDA") || strstr(err.message, "no usable GPU")),
                     "no GPU: status %d, message '%s'", rc, err.message);
        sm_dfa_gpu_free(g);
    }
    sm_dfa_matcher_free(m);
    sm_dfa_free(d);
    return usable;
}

#ifdef SM_TEST_EMULATED_GPU
#define TEST_NAME "test_dfa_cuda_emulated"
#else
#define TEST_NAME "test_dfa_cuda"
#endif

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(20260417));
    if (!refusals()) {
        tu_summary(TEST_NAME);
        printf(TEST_NAME ": no usable GPU: the differential part did not run (skipped)\n");
        return tu_failures() ? 1 : SKIPPED;
    }
    stops_and_misuse(&rng);
    long_inputs(&rng);
    many_lanes_ratio(&rng);
    big_feed(&rng);
    random_rounds(&rng);
    return tu_summary(TEST_NAME);
}
