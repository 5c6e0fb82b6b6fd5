/* sm_dfa_scan_reader in small blocks (sm_dfa_scan_block_bytes), so that the
 * next block is read beside the run of many: random FASTA of many records,
 * some holding a byte outside the DFA's alphabet ('a') and some a byte the
 * reader refuses ('1'), on 1 to 3 threads, several chunk counts and block
 * sizes, a result per record or one for the input. Results, and which
 * error comes first and its message, against an oracle that walks the
 * records byte by byte with the input loop's rule: a block is run when it
 * is full, at the input's end or (a result per record) at the record's end,
 * and a reader's failure ends the input before its block is run. The
 * reader's read callback is called on the caller's thread only, as
 * sm_reader_open_fn promises, although blocks are read beside runs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/dfa/dfa_internal.h"
#include "seqmatch_reader.h"
#include "testutil.h"

#define MAX_RECORDS 12
#define MAX_LEN 600

typedef struct {
    const char *text;
    size_t len, at;
    tu_rng *rng;
    pthread_t caller;
    int elsewhere;   /* calls from another thread */
} stream;

/* The FASTA text in random pieces, as a pipe hands it out. */
static long read_stream(void *ctx, void *buf, size_t cap, sm_error *err) {
    (void)err;
    stream *s = ctx;
    if (!pthread_equal(pthread_self(), s->caller)) s->elsewhere++;
    size_t n = s->len - s->at;
    size_t piece = tu_rng_range(s->rng, 1, 97);
    if (n > piece) n = piece;
    if (n > cap) n = cap;
    memcpy(buf, s->text + s->at, n);
    s->at += n;
    return (long)n;
}

typedef struct {
    char text[MAX_RECORDS * 32 + 32];
} result_log;

static int log_result(void *ctx, const char *record, uint32_t state) {
    result_log *l = ctx;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s %u\n", record ? record : "-", state);
    return 0;
}

/* What the input loop must give: the results before the end or the first
   error, and the error (SM_OK, SM_ERR_PATTERN with its message, or the
   reader's SM_ERR_FORMAT). */
static int oracle(const sm_dfa *dfa, char seqs[][MAX_LEN], const size_t *lens, size_t nrec, int per_record,
                  size_t block, const char *name, result_log *log, char *message, size_t cap) {
    uint32_t state = sm_dfa_start(dfa);
    uint64_t global = 0;
    int unknown = 0;             /* a byte outside the alphabet was seen (its block not run yet) */
    uint64_t unknown_at = 0;     /* its index in the blocks' count: global, or in its record */
    size_t unknown_record = 0, unknown_offset = 0;
    for (size_t r = 0; r < nrec && !(per_record && unknown); r++) {
        if (per_record) state = sm_dfa_start(dfa);
        for (size_t j = 0; j < lens[r]; j++, global++) {
            uint64_t at = per_record ? j : global;
            if (seqs[r][j] == '1') {
                /* the reader fails with the bytes before it read: an unknown
                   byte in a block before this one was run, and is reported */
                if (unknown && unknown_at / block < at / block) goto report;
                return SM_ERR_FORMAT;
            }
            if (unknown) continue;
            if (seqs[r][j] == 'a') {
                unknown = 1;
                unknown_at = at;
                unknown_record = r;
                unknown_offset = j;
                continue;
            }
            state = sm_dfa_next(dfa, state, (uint8_t)seqs[r][j]);
        }
        /* a result per record: its last block is run at its end */
        if (per_record && !unknown) {
            size_t n = strlen(log->text);
            snprintf(log->text + n, sizeof log->text - n, "r%zu %u\n", r, state);
        }
    }
    if (!unknown) {
        if (!per_record) log_result(log, NULL, state);
        return SM_OK;
    }
report:
    snprintf(message, cap,
             "%s: record 'r%zu': byte 0x61 ('a') at sequence offset %zu is not in the DFA's alphabet "
             "(--skip-unknown ignores such bytes)",
             name, unknown_record, unknown_offset);
    return SM_ERR_PATTERN;
}

static void one_round(tu_rng *rng, unsigned round) {
    /* a random DFA of three states over ACGT */
    char dfa_text[256];
    int n = snprintf(dfa_text, sizeof dfa_text, "alphabet ACGT\nstates 3\nstart 0\naccept %u\n", tu_rng_below(rng, 3));
    for (unsigned s = 0; s < 3; s++)
        n += snprintf(dfa_text + n, sizeof dfa_text - (size_t)n, "%u %u %u %u %u\n", s, tu_rng_below(rng, 3),
                      tu_rng_below(rng, 3), tu_rng_below(rng, 3), tu_rng_below(rng, 3));
    sm_dfa *dfa = NULL;
    sm_dfa_matcher *matcher = NULL;
    sm_error err;
    if (!tu_check(sm_dfa_parse(dfa_text, (size_t)n, "test", &dfa, &err) == SM_OK, "parse: %s", err.message)) return;
    if (!tu_check(sm_dfa_matcher_create(dfa, NULL, &matcher, &err) == SM_OK, "matcher: %s", err.message)) {
        sm_dfa_free(dfa);
        return;
    }
    static char seqs[MAX_RECORDS][MAX_LEN];
    size_t lens[MAX_RECORDS];
    size_t nrec = tu_rng_range(rng, 1, MAX_RECORDS);
    static char fasta[MAX_RECORDS * (MAX_LEN * 2 + 16)];
    size_t flen = 0;
    for (size_t r = 0; r < nrec; r++) {
        lens[r] = tu_rng_chance(rng, 10) ? 0 : tu_rng_below(rng, MAX_LEN);
        tu_random_dna(rng, seqs[r], lens[r]);
        if (lens[r] && tu_rng_chance(rng, 15)) seqs[r][tu_rng_below(rng, (uint32_t)lens[r])] = 'a';
        if (lens[r] && tu_rng_chance(rng, 8)) seqs[r][tu_rng_below(rng, (uint32_t)lens[r])] = '1';
        flen += (size_t)sprintf(fasta + flen, ">r%zu\n", r);
        size_t width = tu_rng_range(rng, 1, 80);
        for (size_t j = 0; j < lens[r]; j += width) {
            size_t k = lens[r] - j < width ? lens[r] - j : width;
            memcpy(fasta + flen, seqs[r] + j, k);
            flen += k;
            fasta[flen++] = '\n';
        }
    }
    int per_record = (int)tu_rng_below(rng, 2);
    size_t block = tu_rng_range(rng, 1, 700);
    sm_dfa_parallel_options par;
    sm_dfa_parallel_options_init(&par);
    par.threads = tu_rng_range(rng, 1, 3);
    par.chunks = tu_rng_below(rng, 5);
    par.min_chunk = tu_rng_chance(rng, 50) ? 1 : tu_rng_range(rng, 2, 200);
    if (tu_rng_chance(rng, 30)) par.policy = SM_DFA_CHUNKS_EQUAL;
    result_log want, got;
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    char message[512] = "";
    int want_rc = oracle(dfa, seqs, lens, nrec, per_record, block, "in.fa", &want, message, sizeof message);

    stream s = {fasta, flen, 0, rng, pthread_self(), 0};
    sm_reader *reader = NULL;
    if (tu_check(sm_reader_open_fn("in.fa", SM_INPUT_FASTA, read_stream, &s, &reader, &err) == SM_OK, "open: %s",
                 err.message)) {
        sm_dfa_scan_block_bytes(block);
        sm_dfa_reader_options o = {.parallel = &par, .per_record = per_record, .dna = 1, .name = "in.fa",
                                   .on_result = log_result, .ctx = &got};
        memset(&err, 0, sizeof err);
        int rc = sm_dfa_scan_reader(dfa, matcher, reader, &o, &err);
        sm_dfa_scan_block_bytes(0);
        tu_check(s.elsewhere == 0, "round %u: the read callback ran on another thread %d times", round, s.elsewhere);
        tu_check(rc == want_rc, "round %u (block %zu, %u threads, %zu chunks, per record %d): status %d, want %d (%s)",
                 round, block, par.threads, par.chunks, per_record, rc, want_rc, err.message);
        tu_check(strcmp(got.text, want.text) == 0, "round %u: results\n%s want\n%s", round, got.text, want.text);
        if (rc == want_rc && want_rc == SM_ERR_PATTERN)
            tu_check(strcmp(err.message, message) == 0, "round %u: message '%s', want '%s'", round, err.message,
                     message);
        if (rc == want_rc && want_rc == SM_ERR_FORMAT)
            tu_check(strstr(err.message, "unexpected byte 0x31") != NULL, "round %u: message '%s'", round,
                     err.message);
        sm_reader_close(reader);
    }
    sm_dfa_matcher_free(matcher);
    sm_dfa_free(dfa);
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(20261129));
    unsigned rounds = tu_scaled(400);
    for (unsigned i = 0; i < rounds; i++) one_round(&rng, i);
    return tu_summary("test_dfa_blocks");
}
