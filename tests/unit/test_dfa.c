/* The DFA membership engine against a plain sequential simulator: random
 * DFAs (1 to 10^4 states, 2 to 256 columns, converging and permutation
 * ones), random inputs, every stride and SIMD path, chunk maps, every chunk
 * count under both size policies, inputs shorter than the chunk count, empty
 * inputs, unknown bytes (error and skip); the prefix scan; the text format
 * (round trip and error messages); minimisation; DFAs of pattern sets; the
 * automaton chunk-state helper. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/prefix.h"
#include "engines/automaton/automaton.h"
#include "engines/dfa/dfa_internal.h"
#include "seqmatch_dfa.h"
#include "engines/engine.h"
#include "testutil.h"

/* ------------------------------------------------------------ reference */

typedef struct {
    uint32_t states, columns, start;
    uint32_t *table;
    uint64_t *accept;
    uint16_t column_of[256];
} ref_dfa;

static void ref_free(ref_dfa *r) {
    free(r->table);
    free(r->accept);
}

/* Sequential simulation, one byte at a time; skip: unknown bytes ignored. */
static uint32_t ref_run(const ref_dfa *r, uint32_t s, const uint8_t *p, size_t len, int skip) {
    for (size_t i = 0; i < len; i++) {
        uint16_t c = r->column_of[p[i]];
        if (c == SM_DFA_UNKNOWN) {
            if (skip) continue;
            return SM_DFA_NO_STATE;
        }
        s = r->table[(size_t)s * r->columns + c];
    }
    return s;
}

typedef enum { KIND_RANDOM, KIND_PERMUTATION, KIND_SLOW_MERGE } dfa_kind;

static void ref_random(tu_rng *rng, ref_dfa *r, uint32_t states, uint32_t columns, int unknown_bytes,
                       dfa_kind kind) {
    r->states = states;
    r->columns = columns;
    r->start = tu_rng_below(rng, states);
    r->table = malloc((size_t)states * columns * sizeof *r->table);
    r->accept = calloc((states + 63) / 64, sizeof *r->accept);
    for (uint32_t c = 0; c < columns; c++) {
        if (kind == KIND_PERMUTATION) {
            /* Every column a permutation: paths never converge. */
            for (uint32_t s = 0; s < states; s++) r->table[(size_t)s * columns + c] = s;
            for (uint32_t s = states; s > 1; s--) {
                uint32_t j = tu_rng_below(rng, s);
                uint32_t t = r->table[(size_t)(s - 1) * columns + c];
                r->table[(size_t)(s - 1) * columns + c] = r->table[(size_t)j * columns + c];
                r->table[(size_t)j * columns + c] = t;
            }
        } else if (kind == KIND_SLOW_MERGE) {
            /* Mostly a rotation; one column merges two states. */
            for (uint32_t s = 0; s < states; s++)
                r->table[(size_t)s * columns + c] = c == 0 && s == 1 ? 0 : (s + c + 1) % states;
        } else {
            for (uint32_t s = 0; s < states; s++) r->table[(size_t)s * columns + c] = tu_rng_below(rng, states);
        }
    }
    for (uint32_t s = 0; s < states; s++)
        if (tu_rng_chance(rng, 40)) r->accept[s / 64] |= (uint64_t)1 << (s % 64);
    /* Byte map: each column gets at least one byte; the rest random or unknown. */
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
        else if (unknown_bytes && tu_rng_chance(rng, 50)) c = SM_DFA_UNKNOWN;
        else c = tu_rng_below(rng, columns);
        r->column_of[order[b]] = (uint16_t)c;
    }
}

static sm_dfa *ref_build(const ref_dfa *r) {
    sm_dfa *d = NULL;
    sm_error e;
    if (sm_dfa_build(r->states, r->columns, r->start, r->table, r->accept, r->column_of, &d, &e) != SM_OK)
        tu_check(0, "sm_dfa_build: %s", e.message);
    return d;
}

/* Input mostly from known bytes; unknown ones with probability unknown_pct. */
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

/* ------------------------------------------------------------ prefix scan */

typedef struct {
    uint64_t a, b; /* x -> a * x + b (mod 2^64): composition is not commutative */
} affine;

static void affine_then(void *out, const void *left, const void *right, void *ctx) {
    const affine *l = left, *r = right;
    affine *o = out;
    (void)ctx;
    o->a = r->a * l->a;
    o->b = r->a * l->b + r->b;
}

static void test_prefix_scan(tu_rng *rng) {
    for (size_t count = 0; count <= 70; count += (count < 20 ? 1 : 7))
        for (unsigned threads = 1; threads <= 9; threads++) {
            affine *items = malloc((count + 1) * sizeof *items);
            affine *expect = malloc((count + 1) * sizeof *expect);
            for (size_t i = 0; i < count; i++) {
                items[i].a = tu_rng_next(rng) | 1;
                items[i].b = tu_rng_next(rng);
            }
            memcpy(expect, items, count * sizeof *items);
            for (size_t i = 1; i < count; i++) affine_then(&expect[i], &expect[i - 1], &items[i], NULL);
            int rc = sm_prefix_scan(items, count, sizeof *items, affine_then, NULL, threads);
            int same = rc == SM_OK && memcmp(items, expect, count * sizeof *items) == 0;
            tu_check(same, "prefix scan of %zu affine maps on %u threads", count, threads);
            free(items);
            free(expect);
        }
}

static void count_task(size_t i, void *ctx) { __atomic_fetch_add(&((unsigned *)ctx)[i], 1u, __ATOMIC_RELAXED); }

static void test_parallel_for(void) {
    for (unsigned threads = 0; threads <= 5; threads++) {
        unsigned hits[37] = {0};
        sm_parallel_for(37, threads, count_task, hits);
        int once = 1;
        for (int i = 0; i < 37; i++) once &= hits[i] == 1;
        tu_check(once, "parallel for on %u threads runs every task once", threads);
    }
}

/* ------------------------------------------------------------ engine */

static void check_matcher(tu_rng *rng, const ref_dfa *r, const sm_dfa *d, const sm_dfa_matcher_options *mo,
                          const uint8_t *in, size_t len, const char *what) {
    sm_dfa_matcher *m = NULL;
    sm_error e;
    if (sm_dfa_matcher_create(d, mo, &m, &e) != SM_OK) {
        tu_check(0, "%s: matcher: %s", what, e.message);
        return;
    }
    const int skip = mo->skip_unknown;
    uint32_t expect = ref_run(r, r->start, in, len, skip);
    uint32_t got = sm_dfa_run(m, r->start, in, len);
    tu_check(got == expect, "%s (stride %u avx2 %d): run of %zu bytes: got %u, expected %u", what,
             sm_dfa_matcher_stride(m), sm_dfa_matcher_uses_avx2(m), len, got, expect);
    if (expect == SM_DFA_NO_STATE) {
        size_t first = 0;
        while (r->column_of[in[first]] != SM_DFA_UNKNOWN) first++;
        tu_check(sm_dfa_find_unknown(m, in, len) == first, "%s: first unknown byte at %zu", what, first);
    }
    /* Chunk map of a random slice against every start state (sampled for big DFAs). */
    size_t lo = len ? tu_rng_below(rng, (uint32_t)len + 1) : 0;
    size_t hi = lo + (len - lo ? tu_rng_below(rng, (uint32_t)(len - lo) + 1) : 0);
    uint32_t *map = malloc((size_t)r->states * sizeof *map);
    if (sm_dfa_chunk_map(m, in + lo, hi - lo, map, &e) != SM_OK) {
        tu_check(0, "%s: chunk map: %s", what, e.message);
    } else {
        uint32_t step = r->states > 300 ? r->states / 97 : 1;
        int ok = 1;
        for (uint32_t s = 0; s < r->states && ok; s += step) {
            uint32_t want = ref_run(r, s, in + lo, hi - lo, skip);
            if (map[s] != want) {
                ok = 0;
                tu_check(0, "%s: chunk map [%zu, %zu) from state %u: got %u, expected %u", what, lo, hi, s, map[s],
                         want);
            }
        }
        if (ok) tu_check(1, "%s: chunk map", what);
    }
    free(map);
    /* Parallel runs: chunk counts and policies, thread counts. */
    size_t max_chunks = r->states >= 1000 ? 4 : len < 12 ? len + 3 : 12;
    for (size_t chunks = 1; chunks <= max_chunks; chunks++)
        for (int policy = 0; policy <= 1; policy++) {
            sm_dfa_parallel_options po;
            sm_dfa_parallel_options_init(&po);
            po.threads = 1 + (unsigned)(chunks % 3);
            po.chunks = chunks;
            po.policy = policy ? SM_DFA_CHUNKS_EQUAL : SM_DFA_CHUNKS_BALANCED;
            po.first_chunk_ratio = policy ? 0 : (chunks % 2 ? 0 : 1.0 + (double)tu_rng_below(rng, 8));
            po.min_chunk = 1;
            uint32_t fin = 12345;
            int rc = sm_dfa_run_parallel(m, r->start, in, len, &po, &fin, &e);
            tu_check(rc == SM_OK && fin == expect, "%s: parallel run, %zu chunks, policy %d: got %u, expected %u",
                     what, chunks, policy, fin, expect);
        }
    /* Given cuts (empty chunks included): the state at every chunk start. */
    size_t chunks = 1 + tu_rng_below(rng, 9);
    size_t *cuts = malloc((chunks + 1) * sizeof *cuts);
    uint32_t *states = malloc((chunks + 1) * sizeof *states);
    cuts[0] = 0;
    for (size_t i = 1; i < chunks; i++) cuts[i] = tu_rng_below(rng, (uint32_t)len + 1);
    cuts[chunks] = len;
    for (size_t i = 1; i < chunks; i++)
        for (size_t j = i + 1; j < chunks; j++)
            if (cuts[j] < cuts[i]) {
                size_t t = cuts[i];
                cuts[i] = cuts[j];
                cuts[j] = t;
            }
    sm_dfa_parallel_options po;
    sm_dfa_parallel_options_init(&po);
    po.threads = 2;
    if (sm_dfa_chunk_states(m, r->start, in, cuts, chunks, &po, states, &e) != SM_OK) {
        tu_check(0, "%s: chunk states: %s", what, e.message);
    } else {
        int ok = 1;
        for (size_t i = 0; i <= chunks; i++) {
            uint32_t want = ref_run(r, r->start, in, cuts[i], skip);
            if (states[i] != want) {
                tu_check(0, "%s: chunk %zu of %zu starts at %zu: got state %u, expected %u", what, i, chunks, cuts[i],
                         states[i], want);
                ok = 0;
                break;
            }
        }
        if (ok) tu_check(1, "%s: chunk states", what);
    }
    free(cuts);
    free(states);
    sm_dfa_matcher_free(m);
}

static void test_random_dfas(tu_rng *rng) {
    static const uint32_t state_counts[] = {1, 2, 3, 4, 5, 8, 17, 64, 100, 1000, 10000};
    static const uint32_t column_counts[] = {2, 3, 4, 5, 16, 100, 256};
    char what[160];
    for (size_t si = 0; si < sizeof state_counts / sizeof *state_counts; si++)
        for (size_t ci = 0; ci < sizeof column_counts / sizeof *column_counts; ci++) {
            uint32_t n = state_counts[si], C = column_counts[ci];
            /* keep the run short: large tables are slow to build (most of a
               sanitizer run), so fewer of them under SM_TEST_SCALE */
            if (n >= 1000 && C > 16 && !tu_rng_chance(rng, tu_scaled(40))) continue;
            if (n >= 10000 && !tu_rng_chance(rng, tu_scaled(100))) continue;
            for (int kind = 0; kind < 3; kind++) {
                if (kind == KIND_SLOW_MERGE && n < 3) continue;
                /* a quarter of the cases, drawn anew each run, under SM_TEST_SCALE <= 25 */
                if (!tu_rng_chance(rng, tu_scaled(100) < 25 ? 25 : tu_scaled(100))) continue;
                int unknown = C < 256 && tu_rng_chance(rng, 50);
                ref_dfa r;
                ref_random(rng, &r, n, C, unknown, (dfa_kind)kind);
                sm_dfa *d = ref_build(&r);
                if (!d) {
                    ref_free(&r);
                    continue;
                }
                /* texts of a few thousand bytes under SM_TEST_SCALE (sanitizer runs) */
                size_t longest = n >= 1000 ? 1500 : tu_scaled(20000) < 3000 ? 3000 : tu_scaled(20000);
                size_t len = tu_rng_chance(rng, 10) ? tu_rng_below(rng, 4) : tu_rng_range(rng, 1, longest);
                uint8_t *in = malloc(len + 1);
                random_input(rng, &r, in, len, unknown && tu_rng_chance(rng, 30) ? 1 : 0);
                for (int variant = 0; variant < 4; variant++) {
                    sm_dfa_matcher_options mo;
                    sm_dfa_matcher_options_init(&mo);
                    mo.stride = variant == 0 ? 0 : 1 + tu_rng_below(rng, 4);
                    mo.simd = variant == 2 ? SM_DFA_SIMD_AVX2 : variant == 3 ? SM_DFA_SIMD_SCALAR : SM_DFA_SIMD_AUTO;
                    mo.skip_unknown = unknown && (variant & 1);
                    snprintf(what, sizeof what, "dfa %u states x %u columns kind %d unknown %d skip %d simd %d", n, C,
                             kind, unknown, mo.skip_unknown, (int)mo.simd);
                    check_matcher(rng, &r, d, &mo, in, len, what);
                    if (n >= 1000) break;
                }
                free(in);
                sm_dfa_free(d);
                ref_free(&r);
            }
        }
}

static void test_empty_and_short(void) {
    /* The example: ends in 2 or 3 after ... ; state 3 absorbing. */
    const char *text = "alphabet ACGT\nstates 4\nstart 0\naccept 2 3\n0 1 0 0 0\n1 1 2 0 0\n2 1 0 3 0\n3 3 3 3 3\n";
    sm_dfa *d = NULL;
    sm_error e;
    int rc = sm_dfa_parse(text, strlen(text), "example", &d, &e);
    tu_check(rc == SM_OK, "parse the example: %s", rc ? e.message : "");
    if (rc != SM_OK) return;
    sm_dfa_matcher *m = NULL;
    sm_dfa_matcher_create(d, NULL, &m, &e);
    tu_check(sm_dfa_run(m, 0, "", 0) == 0, "empty input stays in the start state");
    tu_check(!sm_dfa_is_accepting(d, 0), "start state rejects");
    for (size_t chunks = 1; chunks <= 5; chunks++) {
        sm_dfa_parallel_options po;
        sm_dfa_parallel_options_init(&po);
        po.chunks = chunks;
        po.min_chunk = 1;
        po.threads = 2;
        uint32_t fin = 99;
        tu_check(sm_dfa_run_parallel(m, 0, "", 0, &po, &fin, &e) == SM_OK && fin == 0,
                 "empty input, %zu chunks: start state", chunks);
        tu_check(sm_dfa_run_parallel(m, 0, "ACG", 3, &po, &fin, &e) == SM_OK && fin == 3,
                 "3 symbols, %zu chunks: state 3 (got %u)", chunks, fin);
        tu_check(sm_dfa_run_parallel(m, 0, "AC", 2, &po, &fin, &e) == SM_OK && fin == 2,
                 "2 symbols, %zu chunks: state 2 (got %u)", chunks, fin);
    }
    tu_check(sm_dfa_run(m, 0, "ACxG", 4) == SM_DFA_NO_STATE, "unknown byte stops the run");
    tu_check(sm_dfa_find_unknown(m, "ACxG", 4) == 2, "unknown byte offset");
    sm_dfa_matcher_free(m);
    sm_dfa_matcher_options mo;
    sm_dfa_matcher_options_init(&mo);
    mo.skip_unknown = 1;
    sm_dfa_matcher_create(d, &mo, &m, &e);
    tu_check(sm_dfa_run(m, 0, "A\nC\n", 4) == 2, "skipped unknown bytes");
    sm_dfa_matcher_free(m);
    sm_dfa_free(d);
}

static void test_cuts(void) {
    size_t cuts[20];
    for (size_t len = 0; len < 50; len += 7)
        for (size_t chunks = 1; chunks < 10; chunks++)
            for (int policy = 0; policy <= 1; policy++) {
                double ratio = policy ? 0 : (double)chunks;
                sm_dfa_chunk_cuts(len, chunks, policy ? SM_DFA_CHUNKS_EQUAL : SM_DFA_CHUNKS_BALANCED, ratio, cuts);
                int ok = cuts[0] == 0 && cuts[chunks] == len;
                for (size_t i = 0; i < chunks; i++) ok &= cuts[i] <= cuts[i + 1];
                tu_check(ok, "cuts of %zu into %zu, policy %d", len, chunks, policy);
            }
    sm_dfa_chunk_cuts(1000, 3, SM_DFA_CHUNKS_BALANCED, 4.0, cuts);
    /* L0 = 4 * 1000 / (4 + 2) = 666, then 167 each. */
    tu_check(cuts[1] == 666 && cuts[2] == 833 && cuts[3] == 1000, "balanced cuts 0 %zu %zu %zu", cuts[1], cuts[2],
             cuts[3]);
    sm_dfa_chunk_cuts(10, 4, SM_DFA_CHUNKS_EQUAL, 0, cuts);
    tu_check(cuts[1] == 2 && cuts[2] == 5 && cuts[3] == 7 && cuts[4] == 10, "equal cuts");
}

/* ------------------------------------------------------------ text format */

static void expect_parse_error(const char *text, const char *needle) {
    sm_dfa *d = NULL;
    sm_error e;
    memset(&e, 0, sizeof e);
    int rc = sm_dfa_parse(text, strlen(text), "t.dfa", &d, &e);
    tu_check(rc == SM_ERR_FORMAT && strstr(e.message, needle) != NULL, "parse error '%s': got rc %d '%s'", needle, rc,
             e.message);
    sm_dfa_free(d);
}

static void test_format_errors(void) {
    const char *head = "alphabet ab\nstates 2\nstart 0\n";
    char buf[512];
    expect_parse_error("alphabet ab\nstates 2\nstart 0\n0 0 1\n", "t.dfa: state 1 has no row");
    /* a huge state count with no rows behind it is refused before the table
       is allocated (found by fuzzing: 30 bytes asked for 8 GiB) */
    expect_parse_error("alphabet ab\nstates 01073741823\n",
                       "line 2: 1073741823 states x 2 columns: the rest of the text is too short");
    snprintf(buf, sizeof buf, "%s0 0 1\n1 1 1\n0 1 1\n", head);
    expect_parse_error(buf, "line 6: a second row for state 0 (the first is line 4)");
    snprintf(buf, sizeof buf, "%s0 0 2\n1 1 1\n", head);
    expect_parse_error(buf, "line 4: target 2 in column 2 is out of range (states 0..1)");
    expect_parse_error("alphabet aba\n", "line 1: symbol 'a' appears twice in the alphabet (columns 1 and 3)");
    snprintf(buf, sizeof buf, "%s0 0\n", head);
    expect_parse_error(buf, "line 4: state 0 has 1 targets; the alphabet has 2 columns");
    snprintf(buf, sizeof buf, "%s0 0 x\n", head);
    expect_parse_error(buf, "line 4: target 'x' in column 2 is not a state number");
    snprintf(buf, sizeof buf, "%s2 0 1\n", head);
    expect_parse_error(buf, "line 4: row for state '2': not a state number below 2");
    expect_parse_error("alphabet ab\nstates 2\n0 0 1\n1 0 1\n", "no 'start' line");
    expect_parse_error("states 2\n", "line 1: 'states' must follow the 'alphabet' line");
    expect_parse_error("alphabet ab\nstates 2\nstart 5\n", "line 3: start state 5 out of range");
    expect_parse_error("alphabet ab\nstates 0\n", "line 2: 'states' takes one number, at least 1");
    expect_parse_error("alphabet ab\nstates 2\nstart 0\naccept 0 7\n", "line 4: accepting state 7 out of range");
    expect_parse_error("alphabet ab\nfoo 1\n", "line 2: unknown line starting 'foo'");
    expect_parse_error("alphabet ab cd\n", "line 1: 'alphabet' takes one word");
    expect_parse_error("alphabet ab\nalphabet cd\n", "line 2: a second 'alphabet' line (the first is line 1)");
    expect_parse_error("0 1 1\n", "line 1: a transition row before the 'alphabet' and 'states' lines");
    expect_parse_error("# nothing\n", "no 'alphabet' line");
    expect_parse_error("alphabet a\xC3\n", "line 1: alphabet symbol 2 is byte 0xC3");
    /* Comments, blank lines, CRLF, accept before states, '#' inside the alphabet. */
    const char *ok = "# c\r\n\r\nalphabet a#b   # trailing\r\naccept 1\r\nstates 2\nstart 1\n1 0 0 1\n0 1 1 1 # r\n";
    sm_dfa *d = NULL;
    sm_error e;
    int rc = sm_dfa_parse(ok, strlen(ok), "ok.dfa", &d, &e);
    tu_check(rc == SM_OK, "parse with comments: %s", rc ? e.message : "");
    if (rc == SM_OK) {
        tu_check(sm_dfa_column_count(d) == 3 && sm_dfa_column_of(d, '#') == 1 && sm_dfa_column_of(d, 'c') == SM_DFA_UNKNOWN,
                 "alphabet with '#'");
        tu_check(sm_dfa_start(d) == 1 && sm_dfa_is_accepting(d, 1) && sm_dfa_target(d, 1, 2) == 1, "rows read");
    }
    sm_dfa_free(d);
}

static int same_dfa(const sm_dfa *a, const sm_dfa *b) {
    uint32_t n = sm_dfa_state_count(a);
    if (n != sm_dfa_state_count(b) || sm_dfa_start(a) != sm_dfa_start(b)) return 0;
    for (int byte = 0; byte < 256; byte++)
        for (uint32_t s = 0; s < n; s++)
            if (sm_dfa_next(a, s, (uint8_t)byte) != sm_dfa_next(b, s, (uint8_t)byte)) return 0;
    for (uint32_t s = 0; s < n; s++)
        if (sm_dfa_is_accepting(a, s) != sm_dfa_is_accepting(b, s)) return 0;
    return 1;
}

static sm_dfa *dump_and_parse(const sm_dfa *d, int *dump_rc) {
    FILE *f = tmpfile();
    sm_error e;
    *dump_rc = sm_dfa_dump(d, f, &e);
    if (*dump_rc != SM_OK) {
        fclose(f);
        return NULL;
    }
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    sm_dfa *back = NULL;
    if (sm_dfa_parse(buf, got, "dump", &back, &e) != SM_OK) tu_check(0, "dump does not parse: %s", e.message);
    free(buf);
    return back;
}

static void test_round_trips(tu_rng *rng) {
    for (int i = 0; i < 30; i++) {
        ref_dfa r;
        uint32_t C = i % 3 == 0 ? 256 : 1 + tu_rng_below(rng, 20);
        ref_random(rng, &r, 1 + tu_rng_below(rng, 60), C, 1, KIND_RANDOM);
        if (C < 256) {
            /* A compact alphabet: one printable byte per column, the rest unknown. */
            for (int b = 0; b < 256; b++) r.column_of[b] = SM_DFA_UNKNOWN;
            for (uint32_t c = 0; c < C; c++) r.column_of['A' + c] = (uint16_t)c;
        }
        sm_dfa *d = ref_build(&r);
        int rc;
        sm_dfa *back = dump_and_parse(d, &rc);
        tu_check(back && same_dfa(d, back), "dump round trip, %u states, %u columns", r.states, C);
        size_t size;
        const void *bytes = sm_dfa_bytes(d, &size);
        sm_dfa *copy = NULL;
        sm_error e;
        tu_check(sm_dfa_from_bytes(bytes, size, &copy, &e) == SM_OK && same_dfa(d, copy), "bytes round trip");
        /* A corrupt target is refused. */
        uint8_t *bad = malloc(size);
        memcpy(bad, bytes, size);
        const sm_dfa_layout *l = (const sm_dfa_layout *)bad;
        uint32_t huge = 0xFFFFFFF0u;
        memcpy(bad + l->table_off, &huge, 4);
        sm_dfa *rej = NULL;
        tu_check(sm_dfa_from_bytes(bad, size, &rej, &e) == SM_ERR_FORMAT && !rej, "corrupt block refused");
        tu_check(sm_dfa_from_bytes(bad, size - 1, &rej, &e) == SM_ERR_FORMAT, "short block refused");
        free(bad);
        /* Minimisation keeps the language. */
        sm_dfa *min = NULL;
        tu_check(sm_dfa_minimize(d, &min, &e) == SM_OK, "minimise");
        if (min) {
            tu_check(sm_dfa_state_count(min) <= r.states, "minimal has no more states");
            int ok = 1;
            for (int t = 0; t < 200 && ok; t++) {
                uint8_t in[40];
                size_t len = tu_rng_below(rng, 40);
                random_input(rng, &r, in, len, 0);
                uint32_t a = ref_run(&r, r.start, in, len, 0), s = sm_dfa_start(min);
                for (size_t k = 0; k < len; k++) s = sm_dfa_next(min, s, in[k]);
                int acc_a = a != SM_DFA_NO_STATE && sm_dfa_is_accepting(d, a);
                ok = acc_a == sm_dfa_is_accepting(min, s);
            }
            tu_check(ok, "minimal DFA accepts the same strings");
        }
        sm_dfa_free(min);
        sm_dfa_free(copy);
        sm_dfa_free(back);
        sm_dfa_free(d);
        ref_free(&r);
    }
    /* A mod-3 counter with a redundant copy: minimal has 3 states. */
    const char *text = "alphabet ab\nstates 6\nstart 0\naccept 0 3\n0 1 3\n1 2 4\n2 0 5\n3 4 0\n4 5 1\n5 3 2\n";
    sm_dfa *d = NULL, *min = NULL;
    sm_error e;
    sm_dfa_parse(text, strlen(text), NULL, &d, &e);
    tu_check(d && sm_dfa_minimize(d, &min, &e) == SM_OK && sm_dfa_state_count(min) == 3, "mod-3 counter minimises to 3");
    sm_dfa_free(d);
    sm_dfa_free(min);
}

/* ------------------------------------------------------------ pattern sets */

static int occurs_at(const char *text, size_t len, size_t end, const char *pat, int dna) {
    size_t m = strlen(pat);
    if (end < m) return 0;
    for (size_t j = 0; j < m; j++) {
        char a = text[end - m + j], b = pat[j];
        if (dna) {
            if (a >= 'a' && a <= 'z') a = (char)(a - 32);
            if (a == 'U') a = 'T';
        }
        if (a != b) return 0;
    }
    (void)len;
    return 1;
}

static void revcomp(const char *s, char *out) {
    size_t m = strlen(s);
    for (size_t i = 0; i < m; i++) {
        char c = s[m - 1 - i];
        out[i] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    }
    out[m] = 0;
}

static void test_from_patterns(tu_rng *rng) {
    for (int round = 0; round < 40; round++) {
        int dna = round % 2;
        size_t np = 1 + tu_rng_below(rng, 6);
        char pats[6][8];
        char rcs[6][8];
        sm_pattern list[6];
        for (size_t i = 0; i < np; i++) {
            size_t m = 1 + tu_rng_below(rng, 4);
            tu_random_from(rng, pats[i], m, dna ? "ACGT" : "abc");
            pats[i][m] = 0;
            revcomp(pats[i], rcs[i]);
            list[i].name = NULL;
            list[i].seq = pats[i];
            list[i].len = m;
        }
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
        co.engine = SM_ENGINE_AUTOMATON;
        sm_db *db = NULL;
        sm_error e;
        if (sm_compile(list, np, &co, &db, &e) != SM_OK) {
            tu_check(0, "compile: %s", e.message);
            continue;
        }
        for (int mode = 0; mode <= 1; mode++) {
            sm_dfa *d = NULL;
            if (sm_dfa_from_db(db, mode ? SM_DFA_ENDS : SM_DFA_CONTAINS, &d, &e) != SM_OK) {
                tu_check(0, "from db: %s", e.message);
                continue;
            }
            sm_dfa_matcher *m = NULL;
            sm_dfa_matcher_create(d, NULL, &m, &e);
            int ok = 1;
            for (int t = 0; t < 100 && ok; t++) {
                char text[40];
                size_t len = tu_rng_below(rng, 40);
                tu_random_from(rng, text, len, dna ? "ACGTacgtNu" : "abcd");
                int want = 0;
                for (size_t i = 0; i < np && !want; i++) {
                    if (mode == 1) {
                        want = occurs_at(text, len, len, pats[i], dna) || (dna && occurs_at(text, len, len, rcs[i], dna));
                    } else {
                        for (size_t end = 0; end <= len && !want; end++)
                            want = occurs_at(text, len, end, pats[i], dna) || (dna && occurs_at(text, len, end, rcs[i], dna));
                    }
                }
                uint32_t s = sm_dfa_run(m, sm_dfa_start(d), text, len);
                int got = s != SM_DFA_NO_STATE && sm_dfa_is_accepting(d, s);
                if (got != want) {
                    ok = 0;
                    tu_check(0, "%s mode %s: text '%.*s' pattern 1 '%s': got %d, expected %d", dna ? "dna" : "text",
                             mode ? "ends" : "contains", (int)len, text, pats[0], got, want);
                }
            }
            if (ok) tu_check(1, "pattern-set DFA");
            /* The dump writes it as bytes (class 0 stands for many bytes) and reads back. */
            int rc;
            sm_dfa *back = dump_and_parse(d, &rc);
            tu_check(back && same_dfa(d, back), "pattern-set DFA round trip");
            sm_dfa_free(back);
            sm_dfa_matcher_free(m);
            sm_dfa_free(d);
        }
        /* The automaton helper: chunk states equal sequential automaton states. */
        const uint8_t *section = sm_db_section_of_kind(db, SM_SECTION_AUTOMATON, NULL);
        sm_dfa *ends = NULL;
        sm_dfa_matcher *m = NULL;
        if (sm_dfa_from_ac_section(section, SM_DFA_ENDS, &ends, &e) == SM_OK &&
            sm_dfa_matcher_create(ends, NULL, &m, &e) == SM_OK) {
            char text[3000];
            size_t len = sizeof text;
            tu_random_from(rng, text, len, dna ? "ACGT" : "abc");
            size_t cuts[6] = {0, 1, 700, 700, 2100, len};
            uint32_t rows[6];
            const sm_ac_header *h = (const sm_ac_header *)section;
            int rc = sm_dfa_ac_chunk_states(m, section, 0, (const uint8_t *)text, cuts, 5, 2, rows, &e);
            int ok = rc == SM_OK;
            for (int i = 0; i <= 5 && ok; i++) {
                uint32_t row = 0;
                const uint32_t *delta = (const uint32_t *)(section + h->delta_off);
                for (size_t k = 0; k < cuts[i]; k++)
                    row = delta[row + h->class_of[(uint8_t)text[k]]] & ~SM_AC_OUT_FLAG;
                ok = rows[i] == row;
            }
            tu_check(ok, "automaton chunk states");
        }
        sm_dfa_matcher_free(m);
        sm_dfa_free(ends);
        sm_db_free(db);
    }
    /* A database with Shift-And patterns is refused. */
    sm_pattern p = {NULL, "ACGNNNNNNNNT", 12};
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.max_expansion = 4;
    sm_db *db = NULL;
    sm_dfa *d = NULL;
    sm_error e;
    if (sm_compile(&p, 1, &co, &db, &e) == SM_OK) {
        tu_check(sm_dfa_from_db(db, SM_DFA_CONTAINS, &d, &e) == SM_ERR_INVALID && strstr(e.message, "automaton"),
                 "Shift-And database refused: %s", e.message);
        sm_db_free(db);
    }
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(20250101));
    test_prefix_scan(&rng);
    test_parallel_for();
    test_cuts();
    test_empty_and_short();
    test_format_errors();
    test_round_trips(&rng);
    test_from_patterns(&rng);
    test_random_dfas(&rng);
    return tu_summary("test_dfa");
}
