/* The runner's overlap-free modes (chunks with no overlap: scanned from the
 * root and verified, or started from true states found by composing chunk
 * state maps) give the oracle's hits, in order, for every thread count and
 * chunk size, records fed in random pieces; and the same counts in count
 * mode. Where they cannot run (databases other engines scan, k mismatches,
 * k edits, the CUDA backend) they are refused, never ignored. */
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"

static tu_rng rng;

typedef struct {
    tu_hits hits;
} collector;

static int collect(const sm_hit *h, void *ctx) {
    collector *c = ctx;
    tu_hits_add(&c->hits, h->record, h->start, h->end, h->pattern, h->strand, h->errors);
    return 0;
}

static void run_case(unsigned round) {
    int dna = round % 2 == 0;
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    o.engine = SM_ENGINE_AUTOMATON;
    size_t npats = 1 + tu_rng_below(&rng, 30);
    char bufs[30][40];
    sm_pattern pats[30];
    for (size_t p = 0; p < npats; p++) {
        size_t m = 1 + tu_rng_below(&rng, tu_rng_chance(&rng, 20) ? 39 : 6);
        if (dna) tu_random_from(&rng, bufs[p], m, "ACGTacgt");
        else tu_random_from(&rng, bufs[p], m, "ab");
        pats[p].name = NULL;
        pats[p].seq = bufs[p];
        pats[p].len = m;
    }
    sm_db *db = NULL;
    sm_error err;
    if (!tu_check(sm_compile(pats, npats, &o, &db, &err) == SM_OK, "compile: %s", err.message)) return;

    size_t nrec = 1 + tu_rng_below(&rng, 3);
    char *recs[3];
    size_t lens[3];
    tu_hits want;
    tu_hits_init(&want);
    for (size_t r = 0; r < nrec; r++) {
        lens[r] = tu_rng_below(&rng, 3000);
        recs[r] = malloc(lens[r] + 1);
        if (dna) tu_random_iupac(&rng, recs[r], lens[r], 3, 10);
        else tu_random_from(&rng, recs[r], lens[r], "ab");
        for (int t = 0; t < 20 && lens[r] > 40; t++) {
            size_t p = tu_rng_below(&rng, (uint32_t)npats);
            memcpy(recs[r] + tu_rng_below(&rng, (uint32_t)(lens[r] - 40)), pats[p].seq, pats[p].len);
        }
        oracle_find(pats, npats, &o, recs[r], lens[r], r, &want);
    }
    uint64_t want_counts[30] = {0};
    oracle_count(&want, want_counts);

    static const size_t chunks[] = {1, 5, 64, 333, 0};
    for (unsigned threads = 1; threads <= 3; threads++) {
        for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
            for (int variant = 0; variant < 4; variant++) {
                int count_only = variant & 1;
                int mode = variant < 2 ? SM_OVERLAP_FREE_SPECULATE : SM_OVERLAP_FREE_PREFIX;
                collector col;
                tu_hits_init(&col.hits);
                sm_runner_options ro;
                sm_runner_options_init(&ro);
                ro.threads = threads;
                ro.chunk_size = chunks[ci];
                ro.overlap_free = mode;
                ro.count_only = count_only;
                ro.on_hit = collect;
                ro.ctx = &col;
                sm_runner *runner = NULL;
                if (!tu_check(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message)) continue;
                for (size_t r = 0; r < nrec; r++) {
                    sm_runner_begin_record(runner);
                    size_t at = 0;
                    while (at < lens[r]) {
                        size_t piece = 1 + tu_rng_below(&rng, 500);
                        if (piece > lens[r] - at) piece = lens[r] - at;
                        sm_runner_feed(runner, recs[r] + at, piece);
                        at += piece;
                    }
                    sm_runner_end_record(runner);
                }
                tu_check(sm_runner_flush(runner) == SM_OK, "flush");
                char how[96];
                snprintf(how, sizeof how, "round %u %s t=%u chunk=%zu%s%s", round, dna ? "dna" : "text", threads,
                         chunks[ci], count_only ? " count" : "", mode == SM_OVERLAP_FREE_PREFIX ? " prefix" : "");
                if (count_only)
                    tu_check(memcmp(sm_runner_counts(runner), want_counts, npats * sizeof(uint64_t)) == 0 &&
                                 sm_runner_total(runner) == want.n,
                             "%s: counts differ", how);
                else
                    tu_check(tu_hits_equal(&want, &col.hits, how), "%s", how);
                sm_runner_free(runner);
                tu_hits_free(&col.hits);
            }
        }
    }
    for (size_t r = 0; r < nrec; r++) free(recs[r]);
    tu_hits_free(&want);
    sm_db_free(db);
}

static void refusals(void) {
    sm_pattern pats[2] = {{NULL, "ACGTACGTAC", 10}, {NULL, "ACGTTT", 6}};
    static const struct {
        sm_engine engine;
        sm_match match;
        unsigned k;
        sm_backend backend;
        const char *what, *says;
    } cases[] = {
        {SM_ENGINE_SHIFTAND, SM_MATCH_EXACT, 0, SM_BACKEND_CPU, "shift-and", "--engine automaton"},
        {SM_ENGINE_WUMANBER, SM_MATCH_EXACT, 0, SM_BACKEND_CPU, "wu-manber", "--engine automaton"},
        {SM_ENGINE_AUTO, SM_MATCH_MISMATCHES, 1, SM_BACKEND_CPU, "k mismatches", "exact database"},
        {SM_ENGINE_AUTO, SM_MATCH_EDITS, 2, SM_BACKEND_CPU, "k edits", "exact database"},
        {SM_ENGINE_AUTOMATON, SM_MATCH_EXACT, 0, SM_BACKEND_CUDA, "CUDA backend", "CPU only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.engine = cases[i].engine;
        o.match = cases[i].match;
        o.max_errors = cases[i].k;
        sm_db *db = NULL;
        sm_error err;
        if (!tu_check(sm_compile(pats, 2, &o, &db, &err) == SM_OK, "%s: compile: %s", cases[i].what, err.message))
            continue;
        for (int mode = SM_OVERLAP_FREE_SPECULATE; mode <= SM_OVERLAP_FREE_PREFIX; mode++) {
            sm_runner_options ro;
            sm_runner_options_init(&ro);
            ro.overlap_free = mode;
            ro.count_only = 1;
            ro.backend = cases[i].backend;
            sm_runner *runner = NULL;
            int rc = sm_runner_create(db, &ro, &runner, &err);
            tu_check(rc == SM_ERR_INVALID && runner == NULL && strstr(err.message, cases[i].says),
                     "%s, overlap-free mode %d: status %d, message '%s'", cases[i].what, mode, rc,
                     rc ? err.message : "");
            sm_runner_free(runner);
        }
        sm_db_free(db);
    }
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(5150));
    refusals();
    for (unsigned round = 0; round < tu_scaled(40) && tu_failures() < 10; round++) run_case(round);
    return tu_summary("test_overlap_free");
}
