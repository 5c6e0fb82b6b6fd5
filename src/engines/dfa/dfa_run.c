/* Running a DFA: the matcher's derived tables, the sequential simulation,
 * the simulation of a chunk from all states at once (collapsing as paths
 * converge), and the speculative parallel run composed by a prefix scan.
 *
 * Derived tables. Columns whose target vectors are identical are merged, and
 * bytes outside the alphabet get a column of their own: to a sink state when
 * they are errors (the run ends in the sink exactly when such a byte
 * occurred, so the loop needs no test), or to the same state when they are
 * skipped. States are premultiplied by the row width, so a step is one
 * addition and one load. When the table is small, one lookup advances
 * `stride` symbols: the row index of a group of symbols is a sum of
 * per-position byte codes, computed off the critical path of the loads.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SM_DFA_HAVE_X86 1
#endif

#include "base/cpu.h"
#include "base/prefix.h"
#include "engines/dfa/dfa_internal.h"

#define MAX_STRIDE 4
/* Stride tables are kept within a level-1 data cache. */
#define STRIDE_TABLE_BUDGET (32u * 1024u)
/* Groups stepped between two checks for converged paths, at most. */
#define MAX_GROUPS_PER_CHECK 1024u
#define FIRST_GROUPS_PER_CHECK 8u
#define DEFAULT_MIN_CHUNK ((size_t)64 * 1024)
#define PROBE_BYTES ((size_t)64 * 1024)

struct sm_dfa_matcher {
    const sm_dfa *dfa;
    uint32_t dfa_states;
    uint32_t states;     /* dfa states, plus the error sink when there is one */
    uint32_t err_state;  /* the sink, or SM_DFA_NO_STATE */
    uint32_t cols;       /* merged columns */
    unsigned stride;
    uint32_t row;        /* cols ^ stride: entries per state in the step table */
    uint32_t row_shift;  /* row = odd << row_shift; state = ((v >> shift) * row_inverse) mod 2^32 */
    uint32_t row_inverse;
    uint32_t *step;      /* [states * row]: target of a group of stride symbols, times row */
    uint32_t *step1;     /* [states * row]: target of one symbol (first cols entries), times row */
    uint32_t code[MAX_STRIDE][256]; /* byte -> merged column * cols ^ (stride - 1 - position) */
    uint32_t col1[256];  /* byte -> merged column */
    uint8_t unknown[256];
    int avx2;
    /* The states some known byte leads out of, in order: a chunk's map
       follows a path from each of them only. Every other state (an
       accepting sink, a dead state) maps to itself, or, when an unknown
       byte leads it to the error sink (breakers), to the sink if the chunk
       holds an unknown byte. */
    uint32_t *movers, *breakers;
    uint32_t nmovers, nbreakers;
    /* still[s]: every byte leaves state s where it is (an accepting sink
       once a pattern was seen, the error sink): a path there is done. */
    uint8_t *still;
};

/* ------------------------------------------------------------- options */

void sm_dfa_matcher_options_init(sm_dfa_matcher_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->simd = SM_DFA_SIMD_AUTO;
}

void sm_dfa_parallel_options_init(sm_dfa_parallel_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->policy = SM_DFA_CHUNKS_BALANCED;
}

unsigned sm_dfa_matcher_stride(const sm_dfa_matcher *m) { return m ? m->stride : 0; }
int sm_dfa_matcher_uses_avx2(const sm_dfa_matcher *m) { return m ? m->avx2 : 0; }

static int cpu_has_avx2(void) {
#if defined(SM_DFA_HAVE_X86) && defined(__GNUC__)
    return sm_cpu()->avx2;
#else
    return 0;
#endif
}

/* Gathers on the first two Zen generations are slower than scalar loads. */
static int cpu_gathers_fast(void) {
#if defined(SM_DFA_HAVE_X86) && defined(__GNUC__)
    return !sm_cpu()->slow_gather;
#else
    return 0;
#endif
}

/* ------------------------------------------------------------- building */

static uint64_t hash_column(const uint32_t *v, uint32_t n) {
    uint64_t h = 0x243F6A8885A308D3ull;
    for (uint32_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return h;
}

/* Inverse of an odd number modulo 2^32 (Newton's iteration). */
static uint32_t odd_inverse(uint32_t d) {
    uint32_t x = d; /* correct to 3 bits */
    for (int i = 0; i < 5; i++) x *= 2u - d * x;
    return x;
}

static inline uint32_t state_of(const sm_dfa_matcher *m, uint32_t v) {
    return (v >> m->row_shift) * m->row_inverse;
}

int sm_dfa_matcher_create(const sm_dfa *dfa, const sm_dfa_matcher_options *opts, sm_dfa_matcher **out,
                          sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the matcher");
    *out = NULL;
    sm_dfa_matcher_options defaults;
    if (!opts) {
        sm_dfa_matcher_options_init(&defaults);
        opts = &defaults;
    }
    if (!dfa) return sm_set_error(err, SM_ERR_INVALID, "dfa: no DFA given");
    if (opts->stride > MAX_STRIDE)
        return sm_set_error(err, SM_ERR_INVALID, "dfa: stride %u, at most %u", opts->stride, MAX_STRIDE);
    const uint32_t n = dfa->layout->states, C = dfa->layout->columns;
    int any_unknown = 0;
    for (int b = 0; b < 256; b++)
        if (dfa->column_of[b] == SM_DFA_UNKNOWN) any_unknown = 1;
    const int sink = any_unknown && !opts->skip_unknown;
    const uint32_t states = n + (uint32_t)sink;
    if ((uint64_t)states * (C + 1) > 0x7FFFFFFFu)
        return sm_set_error(err, SM_ERR_LIMIT, "dfa: %u states are too many to run", n);

    sm_dfa_matcher *m = calloc(1, sizeof *m);
    /* Candidate columns: the DFA's, then the one for unknown bytes. */
    const uint32_t candidates = C + (uint32_t)any_unknown;
    uint32_t *vectors = malloc((size_t)candidates * states * sizeof *vectors);
    uint32_t *merged_of = malloc((size_t)candidates * sizeof *merged_of);
    size_t slots = 16;
    while (slots < (size_t)candidates * 2) slots <<= 1;
    uint32_t *hash_slots = calloc(slots, sizeof *hash_slots);
    uint32_t *first_of = malloc((size_t)candidates * sizeof *first_of); /* merged column -> a candidate */
    int rc = SM_OK;
    if (!m || !vectors || !merged_of || !hash_slots || !first_of) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory preparing %u states", n);
        goto fail;
    }
    m->dfa = dfa;
    m->dfa_states = n;
    m->states = states;
    m->err_state = sink ? n : SM_DFA_NO_STATE;
    for (uint32_t c = 0; c < candidates; c++) {
        uint32_t *v = vectors + (size_t)c * states;
        for (uint32_t s = 0; s < n; s++) {
            if (c < C) v[s] = dfa->table[(size_t)s * C + c];
            else v[s] = sink ? n : s;
        }
        if (sink) v[n] = n;
    }
    uint32_t cols = 0;
    for (uint32_t c = 0; c < candidates; c++) {
        const uint32_t *v = vectors + (size_t)c * states;
        size_t pos = hash_column(v, states) & (slots - 1);
        for (;;) {
            uint32_t e = hash_slots[pos];
            if (e == 0) {
                hash_slots[pos] = cols + 1;
                first_of[cols] = c;
                merged_of[c] = cols++;
                break;
            }
            if (memcmp(vectors + (size_t)first_of[e - 1] * states, v, (size_t)states * sizeof *v) == 0) {
                merged_of[c] = e - 1;
                break;
            }
            pos = (pos + 1) & (slots - 1);
        }
    }
    m->cols = cols;
    for (int b = 0; b < 256; b++) {
        uint32_t c = dfa->column_of[b];
        m->unknown[b] = c == SM_DFA_UNKNOWN;
        m->col1[b] = merged_of[c == SM_DFA_UNKNOWN ? C : c];
    }

    /* Stride: as many symbols per lookup as fit the cache budget. */
    unsigned stride = 1;
    uint64_t row = cols;
    for (unsigned k = 2; k <= MAX_STRIDE; k++) {
        uint64_t r = row * cols;
        if ((uint64_t)states * r * 4 > STRIDE_TABLE_BUDGET) break;
        stride = k;
        row = r;
    }
    if (opts->stride) {
        /* Forced (tests, measurements): as asked, unless the table would be huge. */
        stride = 1;
        row = cols;
        while (stride < opts->stride && (uint64_t)states * row * cols <= ((uint64_t)1 << 26)) {
            stride++;
            row *= cols;
        }
    }
    m->stride = stride;
    m->row = (uint32_t)row;
    m->row_shift = (uint32_t)__builtin_ctz(m->row);
    m->row_inverse = odd_inverse(m->row >> m->row_shift);
    m->step = sm_aligned_alloc((size_t)states * row * sizeof(uint32_t));
    m->step1 = stride == 1 ? m->step : sm_aligned_alloc((size_t)states * row * sizeof(uint32_t));
    if (!m->step || !m->step1) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for the run tables of %u states", n);
        goto fail;
    }
    if (stride > 1) memset(m->step1, 0, (size_t)states * row * sizeof(uint32_t));
    for (uint32_t s = 0; s < states; s++)
        for (uint32_t c = 0; c < cols; c++)
            m->step1[(size_t)s * row + c] = vectors[(size_t)first_of[c] * states + s] * (uint32_t)row;
    if (stride > 1) {
        for (uint32_t s = 0; s < states; s++)
            for (uint32_t idx = 0; idx < row; idx++) {
                /* Digits of idx, most significant first, are the group's columns. */
                uint32_t digits[MAX_STRIDE], x = idx;
                for (unsigned j = stride; j-- > 0;) {
                    digits[j] = x % cols;
                    x /= cols;
                }
                uint32_t v = s * (uint32_t)row;
                for (unsigned j = 0; j < stride; j++) v = m->step1[v + digits[j]];
                m->step[(size_t)s * row + idx] = v;
            }
    }
    uint32_t weight = 1;
    for (unsigned j = stride; j-- > 0;) {
        for (int b = 0; b < 256; b++) m->code[j][b] = m->col1[b] * weight;
        weight *= cols;
    }
    m->movers = malloc((size_t)n * sizeof *m->movers + 1);
    m->breakers = malloc((size_t)n * sizeof *m->breakers + 1);
    m->still = calloc(states, 1);
    if (!m->movers || !m->breakers || !m->still) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for the run tables of %u states", n);
        goto fail;
    }
    uint8_t known_col[256 + 1] = {0}, unknown_col[256 + 1] = {0};
    for (int b = 0; b < 256; b++) {
        if (m->unknown[b]) unknown_col[m->col1[b]] = 1;
        else known_col[m->col1[b]] = 1;
    }
    for (uint32_t s = 0; s < n; s++) {
        int moves = 0, breaks = 0;
        for (uint32_t c = 0; c < cols; c++) {
            if (m->step1[(size_t)s * row + c] == s * (uint32_t)row) continue;
            if (known_col[c]) moves = 1;
            else if (unknown_col[c]) breaks = 1;
        }
        if (moves) m->movers[m->nmovers++] = s;
        else if (breaks) m->breakers[m->nbreakers++] = s;
        else m->still[s] = 1;
    }
    if (sink) m->still[n] = 1;
    int avx2 = opts->simd != SM_DFA_SIMD_SCALAR && cpu_has_avx2();
    if (opts->simd == SM_DFA_SIMD_AUTO && !cpu_gathers_fast()) avx2 = 0;
    m->avx2 = avx2 && (uint64_t)states * row < 0x7FFFFFFFu;
    free(vectors);
    free(merged_of);
    free(hash_slots);
    free(first_of);
    *out = m;
    return SM_OK;
fail:
    free(vectors);
    free(merged_of);
    free(hash_slots);
    free(first_of);
    sm_dfa_matcher_free(m);
    return rc;
}

void sm_dfa_matcher_free(sm_dfa_matcher *m) {
    if (!m) return;
    if (m->step1 != m->step) sm_aligned_free(m->step1);
    sm_aligned_free(m->step);
    free(m->movers);
    free(m->breakers);
    free(m->still);
    free(m);
}

uint32_t *sm_dfa_matcher_plain(const sm_dfa_matcher *m, uint32_t *states, uint32_t *dfa_states, uint32_t *columns,
                               uint32_t *err_state, uint32_t column_of[256]) {
    uint32_t *targets = malloc((size_t)m->states * m->cols * sizeof *targets);
    if (!targets) return NULL;
    for (uint32_t s = 0; s < m->states; s++)
        for (uint32_t c = 0; c < m->cols; c++)
            targets[(size_t)s * m->cols + c] = m->step1[(size_t)s * m->row + c] / m->row;
    *states = m->states;
    *dfa_states = m->dfa_states;
    *columns = m->cols;
    *err_state = m->err_state;
    memcpy(column_of, m->col1, sizeof m->col1);
    return targets;
}

/* ------------------------------------------------------ sequential loops */

/* The row base of a group is computed apart from the state, so the only
   thing on the loop-carried path is one load addressed as base + state * 4
   (no addition). The empty asm keeps the compiler from re-associating the
   sum back into the state's path. */
#if defined(__GNUC__)
#define OPAQUE(x) __asm__("" : "+r"(x))
#else
#define OPAQUE(x) ((void)0)
#endif

/* Row index of four symbols read with one load (fewer load-port operations
   than four byte loads). */
static inline uint32_t group_of_four(const uint32_t *c0, const uint32_t *c1, const uint32_t *c2, const uint32_t *c3,
                                     const uint8_t *p) {
    uint32_t w;
    memcpy(&w, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap32(w);
#endif
    return c0[w & 0xFF] + c1[(w >> 8) & 0xFF] + c2[(w >> 16) & 0xFF] + c3[w >> 24];
}

/* From premultiplied v over p[0, len); returns the premultiplied state. */
static uint32_t run_premultiplied(const sm_dfa_matcher *m, uint32_t v, const uint8_t *p, size_t len) {
    const uint32_t *T = m->step;
    size_t i = 0;
    switch (m->stride) {
    case 1: {
        const uint32_t *c0 = m->code[0];
        for (; i + 4 <= len; i += 4) {
            const uint32_t *r0 = T + c0[p[i]], *r1 = T + c0[p[i + 1]];
            const uint32_t *r2 = T + c0[p[i + 2]], *r3 = T + c0[p[i + 3]];
            OPAQUE(r0);
            OPAQUE(r1);
            OPAQUE(r2);
            OPAQUE(r3);
            v = r0[v];
            v = r1[v];
            v = r2[v];
            v = r3[v];
        }
        break;
    }
    case 2: {
        const uint32_t *c0 = m->code[0], *c1 = m->code[1];
        for (; i + 4 <= len; i += 4) {
            const uint32_t *r0 = T + (c0[p[i]] + c1[p[i + 1]]);
            const uint32_t *r1 = T + (c0[p[i + 2]] + c1[p[i + 3]]);
            OPAQUE(r0);
            OPAQUE(r1);
            v = r0[v];
            v = r1[v];
        }
        break;
    }
    case 3: {
        const uint32_t *c0 = m->code[0], *c1 = m->code[1], *c2 = m->code[2];
        for (; i + 3 <= len; i += 3) {
            const uint32_t *r0 = T + (c0[p[i]] + c1[p[i + 1]] + c2[p[i + 2]]);
            OPAQUE(r0);
            v = r0[v];
        }
        break;
    }
    default: {
        const uint32_t *c0 = m->code[0], *c1 = m->code[1], *c2 = m->code[2], *c3 = m->code[3];
        for (; i + 8 <= len; i += 8) {
            const uint32_t *r0 = T + group_of_four(c0, c1, c2, c3, p + i);
            const uint32_t *r1 = T + group_of_four(c0, c1, c2, c3, p + i + 4);
            OPAQUE(r0);
            OPAQUE(r1);
            v = r0[v];
            v = r1[v];
        }
        break;
    }
    }
    const uint32_t *T1 = m->step1;
    for (; i < len; i++) v = T1[v + m->col1[p[i]]];
    return v;
}

static uint32_t public_state(const sm_dfa_matcher *m, uint32_t s) {
    return s == m->err_state ? SM_DFA_NO_STATE : s;
}

uint32_t sm_dfa_run(const sm_dfa_matcher *m, uint32_t state, const void *data, size_t len) {
    if (!m || (!data && len) || state >= m->dfa_states) return SM_DFA_NO_STATE;
    uint32_t v = run_premultiplied(m, state * m->row, data, len);
    return public_state(m, state_of(m, v));
}

size_t sm_dfa_find_unknown(const sm_dfa_matcher *m, const void *data, size_t len) {
    if (!m || !data) return 0;
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++)
        if (m->unknown[p[i]]) return i;
    return len;
}

/* --------------------------------------------------- all-states simulation */

/* Row indices of groups of stride symbols. */
static void fill_group_indices(const sm_dfa_matcher *m, const uint8_t *p, size_t groups, uint32_t *idx) {
    switch (m->stride) {
    case 1:
        for (size_t g = 0; g < groups; g++) idx[g] = m->code[0][p[g]];
        break;
    case 2:
        for (size_t g = 0; g < groups; g++) idx[g] = m->code[0][p[2 * g]] + m->code[1][p[2 * g + 1]];
        break;
    case 3:
        for (size_t g = 0; g < groups; g++)
            idx[g] = m->code[0][p[3 * g]] + m->code[1][p[3 * g + 1]] + m->code[2][p[3 * g + 2]];
        break;
    default:
        for (size_t g = 0; g < groups; g++)
            idx[g] = m->code[0][p[4 * g]] + m->code[1][p[4 * g + 1]] + m->code[2][p[4 * g + 2]] +
                     m->code[3][p[4 * g + 3]];
        break;
    }
}

/* Advances a lanes over the groups: independent chains, several in flight. */
static void step_lanes_scalar(const uint32_t *T, uint32_t *lanes, size_t a, const uint32_t *idx, size_t groups) {
    size_t j = 0;
    for (; j + 8 <= a; j += 8) {
        uint32_t l0 = lanes[j], l1 = lanes[j + 1], l2 = lanes[j + 2], l3 = lanes[j + 3];
        uint32_t l4 = lanes[j + 4], l5 = lanes[j + 5], l6 = lanes[j + 6], l7 = lanes[j + 7];
        for (size_t g = 0; g < groups; g++) {
            const uint32_t *r = T + idx[g];
            OPAQUE(r);
            l0 = r[l0];
            l1 = r[l1];
            l2 = r[l2];
            l3 = r[l3];
            l4 = r[l4];
            l5 = r[l5];
            l6 = r[l6];
            l7 = r[l7];
        }
        lanes[j] = l0, lanes[j + 1] = l1, lanes[j + 2] = l2, lanes[j + 3] = l3;
        lanes[j + 4] = l4, lanes[j + 5] = l5, lanes[j + 6] = l6, lanes[j + 7] = l7;
    }
    /* The last 1..7 lanes: blocks of four, short blocks padded with a copy. */
    while (j < a) {
        size_t r = a - j < 4 ? a - j : 4;
        uint32_t l0 = lanes[j];
        uint32_t l1 = r > 1 ? lanes[j + 1] : l0, l2 = r > 2 ? lanes[j + 2] : l0, l3 = r > 3 ? lanes[j + 3] : l0;
        for (size_t g = 0; g < groups; g++) {
            const uint32_t *r = T + idx[g];
            OPAQUE(r);
            l0 = r[l0];
            l1 = r[l1];
            l2 = r[l2];
            l3 = r[l3];
        }
        lanes[j] = l0;
        if (r > 1) lanes[j + 1] = l1;
        if (r > 2) lanes[j + 2] = l2;
        if (r > 3) lanes[j + 3] = l3;
        j += r;
    }
}

#if defined(SM_DFA_HAVE_X86) && defined(__GNUC__)
/* Eight lanes a gather; two registers in flight. */
__attribute__((target("avx2"))) static void step_lanes_avx2(const uint32_t *T, uint32_t *lanes, size_t a,
                                                             const uint32_t *idx, size_t groups) {
    const int *base = (const int *)T;
    size_t j = 0;
    for (; j + 16 <= a; j += 16) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(lanes + j));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(lanes + j + 8));
        for (size_t g = 0; g < groups; g++) {
            __m256i x = _mm256_set1_epi32((int)idx[g]);
            v0 = _mm256_i32gather_epi32(base, _mm256_add_epi32(v0, x), 4);
            v1 = _mm256_i32gather_epi32(base, _mm256_add_epi32(v1, x), 4);
        }
        _mm256_storeu_si256((__m256i *)(lanes + j), v0);
        _mm256_storeu_si256((__m256i *)(lanes + j + 8), v1);
    }
    for (; j + 8 <= a; j += 8) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(lanes + j));
        for (size_t g = 0; g < groups; g++)
            v0 = _mm256_i32gather_epi32(base, _mm256_add_epi32(v0, _mm256_set1_epi32((int)idx[g])), 4);
        _mm256_storeu_si256((__m256i *)(lanes + j), v0);
    }
    if (j < a) step_lanes_scalar(T, lanes + j, a - j, idx, groups);
}
#endif

static void step_lanes(const sm_dfa_matcher *m, uint32_t *lanes, size_t a, const uint32_t *idx, size_t groups) {
#if defined(SM_DFA_HAVE_X86) && defined(__GNUC__)
    if (m->avx2 && a >= 8) {
        step_lanes_avx2(m->step, lanes, a, idx, groups);
        return;
    }
#endif
    step_lanes_scalar(m->step, lanes, a, idx, groups);
}

/* Up to four lanes with the row index computed inline, as in the sequential
   loop: four independent chains cost little more than one. */
#define STEP_FOUR_LANES(GROUP_SIZE, ROW_INDEX)                                    \
    for (size_t g = 0; g < groups; g++, p += (GROUP_SIZE)) {                      \
        const uint32_t *r = T + (ROW_INDEX);                                      \
        OPAQUE(r);                                                                \
        l0 = r[l0];                                                               \
        l1 = r[l1];                                                               \
        l2 = r[l2];                                                               \
        l3 = r[l3];                                                               \
    }

static void step_few_lanes(const sm_dfa_matcher *m, uint32_t *lanes, size_t a, const uint8_t *p, size_t groups) {
    const uint32_t *T = m->step;
    const uint32_t *c0 = m->code[0], *c1 = m->code[1], *c2 = m->code[2], *c3 = m->code[3];
    uint32_t l0 = lanes[0];
    uint32_t l1 = a > 1 ? lanes[1] : l0, l2 = a > 2 ? lanes[2] : l0, l3 = a > 3 ? lanes[3] : l0;
    switch (m->stride) {
    case 1: STEP_FOUR_LANES(1, c0[p[0]]) break;
    case 2: STEP_FOUR_LANES(2, c0[p[0]] + c1[p[1]]) break;
    case 3: STEP_FOUR_LANES(3, c0[p[0]] + c1[p[1]] + c2[p[2]]) break;
    default: STEP_FOUR_LANES(4, group_of_four(c0, c1, c2, c3, p)) break;
    }
    lanes[0] = l0;
    if (a > 1) lanes[1] = l1;
    if (a > 2) lanes[2] = l2;
    if (a > 3) lanes[3] = l3;
}

/* Working memory of one all-states simulation. */
typedef struct {
    uint32_t *lanes;     /* distinct current states, premultiplied */
    uint32_t *slot;      /* per state: its lane after a merge (valid where mark == gen) */
    uint32_t *mark;
    uint32_t gen;
    uint32_t *idx;       /* MAX_GROUPS_PER_CHECK */
    uint32_t *log;       /* lane renumberings, in order */
    size_t log_len, log_cap;
    size_t *log_at;      /* start of each renumbering in log */
    size_t log_count, log_at_cap;
    uint32_t *compose_a, *compose_b;
    uint32_t *spare;     /* lanes being reordered */
    int settled;         /* out: at most one path was left moving before the end */
} all_states_scratch;

static void scratch_free(all_states_scratch *w) {
    free(w->lanes);
    free(w->slot);
    free(w->mark);
    free(w->idx);
    free(w->log);
    free(w->log_at);
    free(w->compose_a);
    free(w->compose_b);
    free(w->spare);
}

static int scratch_init(all_states_scratch *w, uint32_t states) {
    memset(w, 0, sizeof *w);
    w->lanes = malloc((size_t)states * sizeof(uint32_t));
    w->slot = malloc((size_t)states * sizeof(uint32_t));
    w->mark = calloc(states, sizeof(uint32_t));
    w->idx = malloc(MAX_GROUPS_PER_CHECK * sizeof(uint32_t));
    w->compose_a = malloc((size_t)states * sizeof(uint32_t));
    w->compose_b = malloc((size_t)states * sizeof(uint32_t));
    w->spare = malloc((size_t)states * sizeof(uint32_t));
    if (!w->lanes || !w->slot || !w->mark || !w->idx || !w->compose_a || !w->compose_b || !w->spare) {
        scratch_free(w);
        memset(w, 0, sizeof *w);
        return SM_ERR_NOMEM;
    }
    return SM_OK;
}

/* Keeps one lane per distinct state, the lanes of still states (which need
   no more steps) after the others; *active gets how many come before them.
   When lanes merged or moved, the renumbering (old lane -> new lane) is
   appended to the log. Returns the lane count, or 0 when the log could not
   grow. */
static size_t merge_lanes(const sm_dfa_matcher *m, all_states_scratch *w, size_t a, size_t *active) {
    if (++w->gen == 0) {
        memset(w->mark, 0, (size_t)m->states * sizeof(uint32_t));
        w->gen = 1;
    }
    if (w->log_len + a > w->log_cap) {
        size_t cap = w->log_cap ? w->log_cap * 2 : 1024;
        while (cap < w->log_len + a) cap *= 2;
        uint32_t *grown = realloc(w->log, cap * sizeof *grown);
        if (!grown) return 0;
        w->log = grown;
        w->log_cap = cap;
    }
    uint32_t *remap = w->log + w->log_len;
    size_t kept = 0;
    for (uint8_t still = 0; still <= 1; still++) {
        for (size_t j = 0; j < a; j++) {
            uint32_t s = state_of(m, w->lanes[j]);
            if (m->still[s] != still || w->mark[s] == w->gen) continue;
            w->mark[s] = w->gen;
            w->slot[s] = (uint32_t)kept;
            w->spare[kept++] = w->lanes[j];
        }
        if (!still) *active = kept;
    }
    int moved = kept != a;
    for (size_t j = 0; j < a; j++) {
        remap[j] = w->slot[state_of(m, w->lanes[j])];
        moved |= remap[j] != j;
    }
    memcpy(w->lanes, w->spare, kept * sizeof *w->lanes);
    if (!moved) return a;
    if (w->log_count == w->log_at_cap) {
        size_t cap = w->log_at_cap ? w->log_at_cap * 2 : 64;
        size_t *grown = realloc(w->log_at, cap * sizeof *grown);
        if (!grown) return 0;
        w->log_at = grown;
        w->log_at_cap = cap;
    }
    w->log_at[w->log_count++] = w->log_len;
    w->log_len += a;
    return kept;
}

/* map[s] = state reached from every state s (internal numbering, sink included). */
static int all_states_map(const sm_dfa_matcher *m, all_states_scratch *w, const uint8_t *p, size_t len,
                          uint32_t *map) {
    /* A state no symbol leads out of (the error sink, an accepting sink)
       maps to itself whatever the input, so it needs no lane (and a lane of
       its own would keep paths from ever collapsing to one). */
    const uint32_t n = m->dfa_states;
    const unsigned k = m->stride;
    if (m->err_state != SM_DFA_NO_STATE) map[m->err_state] = m->err_state;
    for (uint32_t s = 0; s < n; s++) map[s] = s;
    w->log_len = 0;
    w->log_count = 0;
    size_t a = m->nmovers;
    w->settled = 1;
    if (a == 0) {
        if (m->nbreakers && sm_dfa_find_unknown(m, p, len) < len)
            for (uint32_t j = 0; j < m->nbreakers; j++) map[m->breakers[j]] = m->err_state;
        return SM_OK;
    }
    for (uint32_t j = 0; j < a; j++) w->lanes[j] = m->movers[j] * m->row;
    const size_t groups_total = len / k;
    size_t done = 0, active = a; /* lanes [0, active) still move; the rest sit in still states */
    size_t per_check = FIRST_GROUPS_PER_CHECK;
    while (active > 1 && done < groups_total) {
        size_t g = groups_total - done < per_check ? groups_total - done : per_check;
        if (active <= 4) {
            step_few_lanes(m, w->lanes, active, p + done * k, g);
        } else {
            fill_group_indices(m, p + done * k, g, w->idx);
            step_lanes(m, w->lanes, active, w->idx, g);
        }
        done += g;
        size_t was_active = active, kept = merge_lanes(m, w, a, &active);
        if (kept == 0) return SM_ERR_NOMEM;
        /* Paths that do not converge are checked ever more rarely. */
        if (kept == a && active == was_active && per_check < MAX_GROUPS_PER_CHECK) per_check *= 2;
        a = kept;
    }
    size_t i = done * k;
    w->settled = active <= 1;
    if (active == 1) {
        w->lanes[0] = run_premultiplied(m, w->lanes[0], p + i, len - i);
    } else if (active > 1) {
        for (; i < len; i++) {
            uint32_t c = m->col1[p[i]];
            for (size_t j = 0; j < active; j++) w->lanes[j] = m->step1[w->lanes[j] + c];
        }
    }
    /* Compose the renumberings backwards: lane of every moving start state. */
    uint32_t *f = w->compose_a, *g = w->compose_b;
    for (size_t j = 0; j < a; j++) f[j] = (uint32_t)j;
    for (size_t r = w->log_count; r-- > 0;) {
        size_t at = w->log_at[r];
        size_t size = (r + 1 < w->log_count ? w->log_at[r + 1] : w->log_len) - at;
        const uint32_t *remap = w->log + at;
        for (size_t j = 0; j < size; j++) g[j] = f[remap[j]];
        uint32_t *t = f;
        f = g;
        g = t;
    }
    for (uint32_t j = 0; j < m->nmovers; j++) map[m->movers[j]] = state_of(m, w->lanes[f[j]]);
    /* An unknown byte sends every path to the error sink, which only an
       unknown byte reaches: the first mover's path says whether there was one. */
    if (m->nbreakers && map[m->movers[0]] == m->err_state)
        for (uint32_t j = 0; j < m->nbreakers; j++) map[m->breakers[j]] = m->err_state;
    return SM_OK;
}

int sm_dfa_chunk_map(const sm_dfa_matcher *m, const void *data, size_t len, uint32_t *map, sm_error *err) {
    if (!m || !map || (!data && len)) return sm_set_error(err, SM_ERR_INVALID, "dfa: chunk map needs a matcher, data and a map");
    all_states_scratch w;
    uint32_t *full = malloc((size_t)m->states * sizeof *full);
    if (!full || scratch_init(&w, m->states) != SM_OK) {
        free(full);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for a chunk map of %u states", m->states);
    }
    int rc = all_states_map(m, &w, data, len, full);
    scratch_free(&w);
    if (rc != SM_OK) {
        free(full);
        return sm_set_error(err, rc, "dfa: out of memory for a chunk map");
    }
    for (uint32_t s = 0; s < m->dfa_states; s++) map[s] = public_state(m, full[s]);
    free(full);
    return SM_OK;
}

/* ----------------------------------------------------- parallel driver */

void sm_dfa_chunk_cuts(size_t len, size_t chunks, sm_dfa_chunk_policy policy, double ratio, size_t *cuts) {
    if (chunks == 0 || !cuts) return;
    cuts[0] = 0;
    size_t first_end = 0;
    size_t rest_chunks = chunks;
    if (policy == SM_DFA_CHUNKS_BALANCED && chunks > 1) {
        if (!(ratio >= 1.0)) ratio = 1.0;
        double l0 = ratio * (double)len / (ratio + (double)(chunks - 1));
        first_end = l0 >= (double)len ? len : (size_t)l0;
        cuts[1] = first_end;
        rest_chunks = chunks - 1;
    }
    size_t base = chunks - rest_chunks; /* index of the first equal chunk */
    size_t rest = len - first_end;
    for (size_t i = 1; i <= rest_chunks; i++) {
        /* first_end + rest * i / rest_chunks without overflow */
        size_t q = rest / rest_chunks, r = rest % rest_chunks;
        cuts[base + i] = first_end + q * i + (size_t)((uint64_t)r * i / rest_chunks);
    }
}

typedef struct {
    const sm_dfa_matcher *m;
    const uint8_t *data;
    const size_t *cuts;
    uint32_t start;
    uint32_t *maps;   /* chunks x states */
    int failed;
    sm_dfa_beside *beside; /* task 0 when not NULL; chunk i is then task i + 1 */
} chunk_job;

static double seconds_now(void);

static void chunk_task(size_t i, void *arg) {
    chunk_job *job = arg;
    if (job->beside) {
        if (i == 0) {
            double t0 = seconds_now();
            job->beside->task(job->beside->ctx);
            job->beside->seconds = seconds_now() - t0;
            return;
        }
        i--;
    }
    const sm_dfa_matcher *m = job->m;
    const uint8_t *p = job->data + job->cuts[i];
    size_t len = job->cuts[i + 1] - job->cuts[i];
    uint32_t *map = job->maps + i * m->states;
    if (i == 0) {
        /* Only the start state matters for the first chunk: a constant map. */
        double t0 = job->beside ? seconds_now() : 0;
        uint32_t end = state_of(m, run_premultiplied(m, job->start * m->row, p, len));
        for (uint32_t s = 0; s < m->states; s++) map[s] = end;
        if (job->beside && len >= DEFAULT_MIN_CHUNK) job->beside->byte_seconds = (seconds_now() - t0) / (double)len;
        return;
    }
    all_states_scratch w;
    if (scratch_init(&w, m->states) != SM_OK || all_states_map(m, &w, p, len, map) != SM_OK) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    }
    scratch_free(&w);
}

/* out = right after left: out[s] = right[left[s]]. */
static void compose_maps(void *out, const void *left, const void *right, void *ctx) {
    const uint32_t n = *(const uint32_t *)ctx;
    const uint32_t *l = left, *r = right;
    uint32_t *o = out;
    for (uint32_t s = 0; s < n; s++) o[s] = r[l[s]];
}

static unsigned resolve_threads(unsigned threads) {
    if (threads) return threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

/* The chunks' start states (sm_dfa_chunk_states), with beside's task (when
   not NULL) run before the chunks are handed out. */
static int chunk_states(const sm_dfa_matcher *m, uint32_t state, const void *data, const size_t *cuts, size_t chunks,
                        unsigned threads, sm_dfa_beside *beside, uint32_t *states, sm_error *err) {
    const uint32_t n = m->states;
    if ((uint64_t)chunks * n > SIZE_MAX / sizeof(uint32_t))
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: too many chunks");
    chunk_job job = {m, data, cuts, state, malloc(chunks * n * sizeof(uint32_t)), 0, beside};
    if (!job.maps) {
        if (beside) beside->task(beside->ctx);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for %zu chunk maps", chunks);
    }
    sm_parallel_for(chunks + (beside != NULL), threads, chunk_task, &job);
    uint32_t count = n;
    if (job.failed || sm_prefix_scan(job.maps, chunks, (size_t)n * sizeof(uint32_t), compose_maps, &count,
                                     threads) != SM_OK) {
        free(job.maps);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory simulating %zu chunks", chunks);
    }
    states[0] = state;
    for (size_t i = 1; i <= chunks; i++) states[i] = public_state(m, job.maps[(i - 1) * n + state]);
    free(job.maps);
    return SM_OK;
}

int sm_dfa_chunk_states(const sm_dfa_matcher *m, uint32_t state, const void *data, const size_t *cuts,
                        size_t chunks, const sm_dfa_parallel_options *opts, uint32_t *states, sm_error *err) {
    if (!m || !states || (!data && chunks && cuts && cuts[chunks]))
        return sm_set_error(err, SM_ERR_INVALID, "dfa: chunk states need a matcher, data and room for the states");
    if (state >= m->dfa_states) return sm_set_error(err, SM_ERR_INVALID, "dfa: start state %u out of range", state);
    if (chunks == 0 || !cuts || cuts[0] != 0)
        return sm_set_error(err, SM_ERR_INVALID, "dfa: chunk cuts must start at 0");
    for (size_t i = 0; i < chunks; i++)
        if (cuts[i + 1] < cuts[i]) return sm_set_error(err, SM_ERR_INVALID, "dfa: chunk cuts decrease at %zu", i + 1);
    return chunk_states(m, state, data, cuts, chunks, resolve_threads(opts ? opts->threads : 0), NULL, states, err);
}

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Cost of the all-states simulation of a chunk relative to one path,
   measured on a sample from the middle of the input. When the paths settle
   to one within the sample, what the simulation paid beyond one path is a
   cost of its start, spread over the whole chunk. */
static double measure_ratio(const sm_dfa_matcher *m, const uint8_t *p, size_t len, size_t chunk) {
    size_t sample = chunk < PROBE_BYTES ? chunk : PROBE_BYTES;
    const uint8_t *at = p + (len - sample) / 2;
    all_states_scratch w;
    uint32_t *map = malloc((size_t)m->states * sizeof *map);
    if (!map || scratch_init(&w, m->states) != SM_OK) {
        free(map);
        return 1.0;
    }
    double t0 = seconds_now();
    volatile uint32_t sink = run_premultiplied(m, 0, at, sample);
    double t1 = seconds_now();
    int rc = all_states_map(m, &w, at, sample, map);
    double t2 = seconds_now();
    (void)sink;
    int settled = w.settled;
    scratch_free(&w);
    free(map);
    if (rc != SM_OK || t1 - t0 <= 0) return 1.0;
    double ratio = (t2 - t1) / (t1 - t0);
    if (settled && chunk > sample) {
        double one_path = (t1 - t0) * (double)chunk / (double)sample;
        ratio = (one_path + (t2 - t1) - (t1 - t0)) / one_path;
    }
    if (ratio < 1.0) ratio = 1.0;
    if (ratio > 1024.0) ratio = 1024.0;
    return ratio;
}

/* Balanced or equal cuts (sm_dfa_chunk_cuts) when the thread that takes the
   last chunk has first spent the time of `head` bytes of one path on other
   work: every thread's share takes the same time. Chunk 0 follows one path
   (a byte costs 1), the others all states (a byte costs ratio; 1 for equal
   chunks). A head too long for the last chunk leaves it empty. */
static void cuts_after_head(size_t len, size_t chunks, sm_dfa_chunk_policy policy, double ratio, double head,
                            size_t *cuts) {
    if (policy != SM_DFA_CHUNKS_BALANCED || !(ratio >= 1.0)) ratio = 1.0;
    /* u: each share's time in one path's bytes; chunk 0 = u bytes, the
       middle ones u / ratio, the last (u - head) / ratio */
    double u = ((double)len + head / ratio) / (1.0 + (double)(chunks - 1) / ratio);
    if (u <= head) {
        sm_dfa_chunk_cuts(len, chunks - 1, policy, ratio, cuts);
        cuts[chunks] = len;
        return;
    }
    cuts[0] = 0;
    double at = u;
    for (size_t i = 1; i < chunks; i++, at += u / ratio) {
        size_t c = at >= (double)len ? len : (size_t)at;
        cuts[i] = c < cuts[i - 1] ? cuts[i - 1] : c;
    }
    cuts[chunks] = len;
}

static int run_parallel(const sm_dfa_matcher *m, uint32_t state, const void *data, size_t len,
                        const sm_dfa_parallel_options *opts, sm_dfa_beside *beside, uint32_t *final_state,
                        sm_error *err) {
    sm_dfa_parallel_options defaults;
    if (!opts) {
        sm_dfa_parallel_options_init(&defaults);
        opts = &defaults;
    }
    if (!m || !final_state || (!data && len)) {
        if (beside) beside->task(beside->ctx);
        return sm_set_error(err, SM_ERR_INVALID, "dfa: a run needs a matcher, data and a place for the state");
    }
    if (state >= m->dfa_states) {
        if (beside) beside->task(beside->ctx);
        return sm_set_error(err, SM_ERR_INVALID, "dfa: start state %u out of range", state);
    }
    unsigned threads = resolve_threads(opts->threads);
    size_t chunks = opts->chunks ? opts->chunks : threads;
    size_t min_chunk = opts->min_chunk ? opts->min_chunk : DEFAULT_MIN_CHUNK;
    if (len / min_chunk < chunks) chunks = len / min_chunk;
    /* beside work needs a second thread and enough data to share with it */
    if (beside && (threads < 2 || chunks == 0)) {
        double t0 = seconds_now();
        beside->task(beside->ctx);
        beside->seconds = seconds_now() - t0;
        beside = NULL;
    }
    if (chunks <= 1 && !beside) {
        *final_state = sm_dfa_run(m, state, data, len);
        return SM_OK;
    }
    double ratio = opts->first_chunk_ratio;
    if (chunks > 1 && opts->policy == SM_DFA_CHUNKS_BALANCED && ratio <= 0)
        ratio = measure_ratio(m, data, len, len / chunks);
    size_t *cuts = malloc((chunks + 1) * sizeof *cuts);
    uint32_t *states = malloc((chunks + 1) * sizeof *states);
    if (!cuts || !states) {
        free(cuts);
        free(states);
        if (beside) beside->task(beside->ctx);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory");
    }
    double head = beside && beside->byte_seconds > 0 ? beside->seconds / beside->byte_seconds : 0;
    if (head > 0 && chunks > 1) cuts_after_head(len, chunks, opts->policy, ratio, head, cuts);
    else sm_dfa_chunk_cuts(len, chunks, opts->policy, ratio, cuts);
    int rc = chunk_states(m, state, data, cuts, chunks, threads, beside, states, err);
    if (rc == SM_OK) *final_state = states[chunks];
    free(cuts);
    free(states);
    return rc;
}

int sm_dfa_run_parallel(const sm_dfa_matcher *m, uint32_t state, const void *data, size_t len,
                        const sm_dfa_parallel_options *opts, uint32_t *final_state, sm_error *err) {
    return run_parallel(m, state, data, len, opts, NULL, final_state, err);
}

int sm_dfa_run_beside(const sm_dfa_matcher *m, uint32_t state, const void *data, size_t len,
                      const sm_dfa_parallel_options *opts, sm_dfa_beside *beside, uint32_t *final_state,
                      sm_error *err) {
    return run_parallel(m, state, data, len, opts, beside, final_state, err);
}
