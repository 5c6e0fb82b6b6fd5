/* Level-synchronous parallel builder.
 *
 * With the keys sorted by class sequence, the trie nodes at depth d are the
 * distinct d-prefixes in sorted order, each a contiguous range of keys, and
 * that order is exactly breadth-first order. So each level is expanded by
 * all threads at once: every thread counts the children of its share of the
 * level's nodes, an exclusive prefix sum of the counts gives each thread
 * where its children go, and a second pass writes them. The same pass
 * completes each node's row from its failure state's row and sets the
 * children's failure links (fail(child) = delta[fail(node)][class]); both
 * only read rows of lower levels, which earlier levels finished. Output
 * lists are filled at the end, in parallel, by following for each state the
 * chain of nearest terminal suffixes.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engines/automaton/ac_private.h"

/* Marks, in dict[], a state that is itself the end of some key. */
#define OWN_BIT 0x80000000u

typedef struct {
    atomic_uint arrived;
    atomic_uint generation;
    unsigned n;
} spin_barrier;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Levels are often tiny, so a futex round trip per level would dominate;
   spin briefly, then yield so that oversubscribed cores still progress. */
static void barrier_wait(spin_barrier *b) {
    unsigned g = atomic_load_explicit(&b->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 == b->n) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
        return;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&b->generation, memory_order_acquire) == g) {
        if (++spins < 2000) cpu_relax();
        else sched_yield();
    }
}

typedef struct {
    uint32_t state; /* the terminal state */
    uint32_t key;   /* first sorted key ending there */
    uint32_t nkeys; /* keys ending there (same string, ascending output) */
} terminal;

/* Per-thread counters, one cache line each. */
typedef struct {
    uint64_t a, b;
    uint8_t pad[48];
} thread_slot;

typedef struct {
    const sm_ac_plan *plan;
    const sm_ac_key *keys;
    uint32_t columns, states;
    sm_ac_divider div;
    uint32_t *delta, *count, *out_index, *out_list;
    uint32_t *dict; /* OWN_BIT | nearest proper suffix that is terminal (0 = none) */
    terminal *terms;
    uint32_t nterms;
    uint32_t *lo[2], *hi[2], *fail[2]; /* node key ranges and failure offsets, per level parity */
    thread_slot *slots;
    unsigned nthreads;
    atomic_int go;
    spin_barrier barrier;
    uint32_t levels_done_states;
} level_build;

typedef struct {
    level_build *lb;
    unsigned tid;
    void (*fn)(level_build *, unsigned);
} worker_arg;

static inline uint32_t share(uint64_t n, unsigned t, unsigned nthreads) {
    return (uint32_t)(n * t / nthreads);
}

/* Calls visit(first, end) for each child range of the node [lo, hi) at
   depth d: the keys that end at the node come first and are skipped. */
#define FOR_EACH_CHILD(keys, lo, hi, d, first, end, BODY)                         \
    do {                                                                          \
        uint32_t first = (lo);                                                    \
        while (first < (hi) && (keys)[first].len == (d)) first++;                 \
        while (first < (hi)) {                                                    \
            uint8_t sym_ = (keys)[first].seq[d];                                  \
            uint32_t end = first + 1;                                             \
            while (end < (hi) && (keys)[end].seq[d] == sym_) end++;               \
            BODY;                                                                 \
            first = end;                                                          \
        }                                                                         \
    } while (0)

static void build_levels_worker(level_build *lb, unsigned tid) {
    const sm_ac_key *keys = lb->keys;
    const uint32_t C = lb->columns;
    const unsigned T = lb->nthreads;
    const uint16_t *key_class = lb->plan->key_class;
    uint32_t d = 0, n_cur = 1, base = 0, term_base = 0;
    int par = 0;
    while (n_cur) {
        const uint32_t *lo = lb->lo[par], *hi = lb->hi[par], *fail = lb->fail[par];
        uint32_t *nlo = lb->lo[!par], *nhi = lb->hi[!par], *nfail = lb->fail[!par];
        uint32_t j0 = share(n_cur, tid, T), j1 = share(n_cur, tid + 1, T);

        uint64_t nchild = 0, nterm = 0;
        for (uint32_t j = j0; j < j1; j++)
            FOR_EACH_CHILD(keys, lo[j], hi[j], d, first, end, {
                nchild++;
                nterm += keys[first].len == d + 1;
            });
        lb->slots[tid].a = nchild;
        lb->slots[tid].b = nterm;
        barrier_wait(&lb->barrier);

        uint32_t off = 0, toff = term_base, n_next = 0, t_next = 0;
        for (unsigned u = 0; u < T; u++) {
            if (u < tid) {
                off += (uint32_t)lb->slots[u].a;
                toff += (uint32_t)lb->slots[u].b;
            }
            n_next += (uint32_t)lb->slots[u].a;
            t_next += (uint32_t)lb->slots[u].b;
        }
        const uint32_t next_base = base + n_cur;
        for (uint32_t j = j0; j < j1; j++) {
            uint32_t s = base + j;
            uint32_t *row = &lb->delta[(size_t)s * C];
            const uint32_t *fail_row = d ? &lb->delta[fail[j]] : NULL;
            if (fail_row) memcpy(row, fail_row, C * sizeof *row);
            else memset(row, 0, C * sizeof *row);
            FOR_EACH_CHILD(keys, lo[j], hi[j], d, first, end, {
                uint32_t c = key_class[keys[first].seq[d]];
                uint32_t child = next_base + off;
                uint32_t via_fail = fail_row ? fail_row[c] : 0;
                uint32_t own_keys = 0;
                while (first + own_keys < end && keys[first + own_keys].len == d + 1) own_keys++;
                uint32_t n = own_keys ? sm_ac_distinct_outputs(&keys[first], own_keys) : 0;
                uint32_t link = 0;
                if (via_fail & SM_AC_OUT_FLAG) {
                    uint32_t f = sm_ac_divide(lb->div, via_fail);
                    n += lb->count[f];
                    link = (lb->dict[f] & OWN_BIT) ? f : lb->dict[f];
                }
                lb->count[child] = n;
                lb->dict[child] = link | (own_keys ? OWN_BIT : 0);
                if (own_keys) {
                    terminal *t = &lb->terms[toff++];
                    t->state = child;
                    t->key = first;
                    t->nkeys = own_keys;
                }
                nlo[off] = first;
                nhi[off] = end;
                nfail[off] = via_fail & SM_AC_TARGET_MASK;
                row[c] = child * C | (n ? SM_AC_OUT_FLAG : 0);
                off++;
            });
        }
        barrier_wait(&lb->barrier);
        base = next_base;
        n_cur = n_next;
        term_base += t_next;
        par = !par;
        d++;
    }
    /* Total size of the output lists of this thread's share of the states. */
    uint64_t sum = 0;
    for (uint32_t s = share(lb->states, tid, T); s < share(lb->states, tid + 1, T); s++) sum += lb->count[s];
    lb->slots[tid].a = sum;
    if (tid == 0) {
        lb->nterms = term_base;
        lb->levels_done_states = base;
    }
}

static const terminal *find_terminal(const level_build *lb, uint32_t state) {
    uint32_t lo = 0, hi = lb->nterms;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lb->terms[mid].state < state) lo = mid + 1;
        else hi = mid;
    }
    return &lb->terms[lo];
}

static uint32_t put_own(const level_build *lb, uint32_t state, uint32_t p) {
    const terminal *t = find_terminal(lb, state);
    const sm_ac_key *k = &lb->keys[t->key];
    for (uint32_t i = 0; i < t->nkeys; i++)
        if (i == 0 || k[i].output != k[i - 1].output) lb->out_list[p++] = k[i].output;
    return p;
}

static void fill_outputs_worker(level_build *lb, unsigned tid) {
    const unsigned T = lb->nthreads;
    uint32_t s0 = share(lb->states, tid, T), s1 = share(lb->states, tid + 1, T);
    uint64_t sum = 0;
    for (uint32_t s = s0; s < s1; s++) sum += lb->out_index[s];
    lb->slots[tid].a = sum;
    barrier_wait(&lb->barrier);
    uint64_t at = 0;
    for (unsigned u = 0; u < tid; u++) at += lb->slots[u].a;
    for (uint32_t s = s0; s < s1; s++) {
        uint32_t n = lb->out_index[s];
        lb->out_index[s] = (uint32_t)at;
        at += n;
    }
    if (tid == T - 1) lb->out_index[lb->states] = (uint32_t)at;
    barrier_wait(&lb->barrier);
    for (uint32_t s = s0; s < s1; s++) {
        uint32_t p = lb->out_index[s];
        if (p == lb->out_index[s + 1]) continue;
        if (lb->dict[s] & OWN_BIT) p = put_own(lb, s, p);
        for (uint32_t t = lb->dict[s] & ~OWN_BIT; t; t = lb->dict[t] & ~OWN_BIT) p = put_own(lb, t, p);
    }
}

static void *worker_main(void *p) {
    worker_arg *a = p;
    while (!atomic_load_explicit(&a->lb->go, memory_order_acquire)) sched_yield();
    if (a->tid < a->lb->nthreads) a->fn(a->lb, a->tid);
    return NULL;
}

/* Runs fn on up to `want` threads (the caller is thread 0); fewer when
   threads cannot be created. */
static void run_team(level_build *lb, unsigned want, void (*fn)(level_build *, unsigned)) {
    pthread_t ids[64];
    worker_arg args[64];
    unsigned made = 0;
    atomic_store(&lb->go, 0);
    for (unsigned t = 1; t < want; t++) {
        args[t] = (worker_arg){lb, t, fn};
        if (pthread_create(&ids[t], NULL, worker_main, &args[t]) != 0) break;
        made = t;
    }
    lb->nthreads = made + 1;
    lb->barrier.n = lb->nthreads;
    atomic_store(&lb->barrier.arrived, 0);
    atomic_store_explicit(&lb->go, 1, memory_order_release);
    fn(lb, 0);
    for (unsigned t = 1; t <= made; t++) pthread_join(ids[t], NULL);
}

int sm_ac_build_levels(const sm_ac_plan *plan, unsigned threads, uint64_t max_bytes,
                       sm_buf *section, sm_error *err) {
    if (threads > 64) threads = 64;
    const uint32_t N = (uint32_t)plan->states, C = plan->columns;
    size_t width = plan->nkeys ? plan->nkeys : 1; /* no level is wider than the key count */
    level_build *lb = calloc(1, sizeof *lb);
    int rc = SM_OK;
    if (!lb) return sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory");
    lb->plan = plan;
    lb->keys = plan->sorted;
    lb->columns = C;
    lb->states = N;
    lb->div = sm_ac_divider_for(C);
    lb->dict = malloc((size_t)N * sizeof *lb->dict);
    lb->terms = malloc(width * sizeof *lb->terms);
    lb->slots = calloc(64, sizeof *lb->slots);
    for (int p = 0; p < 2; p++) {
        lb->lo[p] = malloc(width * sizeof(uint32_t));
        lb->hi[p] = malloc(width * sizeof(uint32_t));
        lb->fail[p] = malloc(width * sizeof(uint32_t));
    }
    if (!lb->dict || !lb->terms || !lb->slots || !lb->lo[0] || !lb->hi[0] || !lb->fail[0] || !lb->lo[1] ||
        !lb->hi[1] || !lb->fail[1]) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory for %u states", N);
        goto done;
    }
    size_t base;
    rc = sm_ac_begin_section(plan, section, &base, err);
    if (rc != SM_OK) goto done;
    sm_ac_layout layout = sm_ac_layout_for(N, C, 0);
    lb->delta = (uint32_t *)(section->data + base + layout.delta_off);
    lb->count = (uint32_t *)(section->data + base + layout.out_index_off);
    lb->lo[0][0] = 0;
    lb->hi[0][0] = (uint32_t)plan->nkeys;
    lb->fail[0][0] = 0;
    lb->count[0] = 0;
    lb->dict[0] = 0;
    run_team(lb, threads, build_levels_worker);
    if (lb->levels_done_states != N) { /* cannot happen: the plan counted these keys */
        rc = sm_set_error(err, SM_ERR_INVALID, "automaton: state count mismatch");
        goto done;
    }
    uint64_t total = 0;
    for (unsigned t = 0; t < lb->nthreads; t++) total += lb->slots[t].a;
    rc = sm_ac_finish_section(plan, total, max_bytes, section, base, err);
    if (rc != SM_OK) goto done;
    lb->out_index = (uint32_t *)(section->data + base + layout.out_index_off);
    lb->out_list = (uint32_t *)(section->data + base + layout.out_list_off);
    run_team(lb, threads, fill_outputs_worker);

done:
    free(lb->dict);
    free(lb->terms);
    free(lb->slots);
    for (int p = 0; p < 2; p++) {
        free(lb->lo[p]);
        free(lb->hi[p]);
        free(lb->fail[p]);
    }
    free(lb);
    return rc;
}
