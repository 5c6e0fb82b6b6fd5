/* The public API's edges:
 *   - every entry point of seqmatch.h and seqmatch_dfa.h with NULL
 *     arguments: functions that return a status return SM_ERR_INVALID (and
 *     fill the error when one is given), getters return their "nothing"
 *     value, and nothing dereferences NULL (the sanitizer build checks that);
 *   - a refused pattern without a name is shown by its sequence, and a
 *     refusal names the engine that was forced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int hit_fn(const sm_hit *hit, void *ctx) {
    (void)hit;
    (void)ctx;
    return 0;
}

#define INVALID(call) tu_check((call) == SM_ERR_INVALID, "%s: expected SM_ERR_INVALID", #call)

/* The call fails with SM_ERR_INVALID and a message in err. */
#define INVALID_ERR(call)                                                                                   \
    do {                                                                                                    \
        memset(&err, 0, sizeof err);                                                                        \
        int rc_ = (call);                                                                                   \
        tu_check(rc_ == SM_ERR_INVALID && err.code == SM_ERR_INVALID && err.message[0], "%s: status %d, '%s'", \
                 #call, rc_, err.message);                                                                  \
    } while (0)

/* Compiles three patterns, the third to be refused, and checks the message. */
static void refused(const char *name, const char *seq, size_t len, sm_engine engine, unsigned flags,
                    const char *want) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.engine = engine;
    o.flags = flags;
    sm_pattern p[3] = {{"a", "ACGT", 4}, {NULL, "GGCC", 4}, {name, seq, len}};
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_compile(p, 3, &o, &db, &err);
    tu_check(rc != SM_OK && db == NULL, "'%s' compiled", want);
    tu_check(strcmp(err.message, want) == 0, "message '%s', expected '%s'", err.message, want);
    sm_db_free(db);
}

static void test_refusal_messages(void) {
    refused(NULL, "ACGTX", 5, SM_ENGINE_AUTO, 0,
            "pattern 3 ('ACGTX'): 'X' at position 5 is not a DNA or IUPAC symbol");
    refused(NULL, "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTXACGT", 49, SM_ENGINE_AUTO, 0,
            "pattern 3 ('ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT...'): 'X' at position 45 is not a DNA or IUPAC "
            "symbol");
    refused(NULL, "AC\0GT", 5, SM_ENGINE_AUTO, 0,
            "pattern 3 ('AC\\0GT'): byte 0x00 at position 3 is not a DNA or IUPAC symbol");
    refused("named", "ACGTX", 5, SM_ENGINE_AUTO, 0,
            "pattern 3 ('named'): 'X' at position 5 is not a DNA or IUPAC symbol");
    refused(NULL, "NNNNN", 5, SM_ENGINE_AUTOMATON, 0,
            "pattern 3 ('NNNNN') cannot use the automaton engine: it expands to too many concrete strings for the "
            "automaton (limit 256); use engine auto or shiftand");
    refused(NULL, "NNNNN", 5, SM_ENGINE_KMER, 0,
            "pattern 3 ('NNNNN') cannot use the k-mer table engine: it expands to too many concrete strings for the "
            "k-mer table (limit 256); use engine auto or shiftand");
    refused(NULL, "NNNNN", 5, SM_ENGINE_WUMANBER, 0,
            "pattern 3 ('NNNNN') cannot use the Wu-Manber engine: it expands to too many concrete strings for "
            "Wu-Manber (limit 256); use engine auto or shiftand");
    refused(NULL, "ACGTN", 5, SM_ENGINE_KMER, SM_FLAG_TEXT_IUPAC,
            "pattern 1 ('a') cannot use the k-mer table engine: IUPAC symbols in the text need the Shift-And engine "
            "(limit 256); use engine auto or shiftand");
}

int main(void) {
    test_refusal_messages();
    sm_error err;
    sm_compile_options co;
    sm_compile_options_init(&co);
    sm_pattern p = {"EcoRI", "GAATTC", 6};
    sm_db *db = NULL;
    if (sm_compile(&p, 1, &co, &db, &err) != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        return 2;
    }
    sm_dfa *dfa = NULL;
    sm_dfa_matcher *matcher = NULL;
    if (sm_dfa_from_regex("ab*", 3, NULL, &dfa, &err) != SM_OK || sm_dfa_matcher_create(dfa, NULL, &matcher, &err))
        return 2;
    void *sentinel = &err;

    /* ------------------------------------------------------ seqmatch.h */
    tu_check(sm_version() != NULL && sm_strerror(SM_ERR_INVALID) != NULL, "version, strerror");
    sm_compile_options_init(NULL);
    sm_db *out_db = sentinel;
    INVALID_ERR(sm_compile(&p, 1, &co, NULL, &err));
    tu_check(sm_compile(NULL, 1, &co, &out_db, &err) == SM_ERR_PATTERN && out_db == NULL, "compile: NULL patterns");
    sm_pattern no_seq = {"x", NULL, 4};
    tu_check(sm_compile(&no_seq, 1, &co, &out_db, &err) == SM_ERR_PATTERN, "compile: NULL sequence");
    sm_db_free(NULL);
    sm_db_info info;
    memset(&info, 0xff, sizeof info);
    sm_db_get_info(NULL, &info);
    tu_check(info.pattern_count == 0 && info.size == 0, "get_info(NULL)");
    sm_db_get_info(db, NULL);
    tu_check(sm_db_pattern_name(NULL, 0) == NULL, "pattern_name(NULL)");
    size_t len = 7;
    tu_check(sm_db_pattern_seq(NULL, 0, &len) == NULL, "pattern_seq(NULL)");
    tu_check(sm_db_pattern_seq(db, 0, NULL) != NULL, "pattern_seq(db, 0, NULL)");
    size_t size = 7;
    tu_check(sm_db_bytes(NULL, &size) == NULL && size == 0, "db_bytes(NULL)");
    tu_check(sm_db_bytes(db, NULL) != NULL, "db_bytes(db, NULL)");
    tu_check(sm_db_section_name(NULL, 0, NULL, NULL) == NULL, "section_name(NULL)");
    tu_check(sm_db_section_name(db, 0, NULL, NULL) != NULL, "section_name(db, 0, NULL, NULL)");
    tu_check(sm_db_section_name(db, 1000, NULL, NULL) == NULL, "section_name(db, out of range)");
    INVALID_ERR(sm_db_from_bytes(NULL, 256, &out_db, &err));
    INVALID_ERR(sm_db_from_bytes(sm_db_bytes(db, NULL), 256, NULL, &err));
    INVALID_ERR(sm_db_save(NULL, "x.smdb", &err));
    INVALID_ERR(sm_db_save(db, NULL, &err));
    INVALID_ERR(sm_db_load(NULL, &out_db, &err));
    INVALID_ERR(sm_db_load("x.smdb", NULL, &err));
    INVALID(sm_db_load(NULL, &out_db, NULL));

    sm_scratch *scratch = sentinel;
    INVALID(sm_scratch_alloc(NULL, &scratch));
    tu_check(scratch == NULL, "scratch_alloc(NULL db) leaves NULL");
    INVALID(sm_scratch_alloc(db, NULL));
    sm_scratch_free(NULL);
    if (sm_scratch_alloc(db, &scratch) != SM_OK) return 2;
    uint64_t counts[1];
    INVALID(sm_scan(NULL, scratch, "GAATTC", 6, hit_fn, NULL));
    INVALID(sm_scan(db, NULL, "GAATTC", 6, hit_fn, NULL));
    INVALID(sm_scan(db, scratch, NULL, 6, hit_fn, NULL));
    INVALID(sm_scan(db, scratch, "GAATTC", 6, NULL, NULL));
    tu_check(sm_scan(db, scratch, NULL, 0, hit_fn, NULL) == SM_OK, "scan of NULL, 0");
    INVALID(sm_count(NULL, scratch, "GAATTC", 6, counts));
    INVALID(sm_count(db, NULL, "GAATTC", 6, counts));
    INVALID(sm_count(db, scratch, NULL, 6, counts));
    INVALID(sm_count(db, scratch, "GAATTC", 6, NULL));
    sm_scratch_free(scratch);

    sm_stream *stream = sentinel;
    INVALID(sm_stream_open(NULL, &stream));
    tu_check(stream == NULL, "stream_open(NULL db) leaves NULL");
    INVALID(sm_stream_open(db, NULL));
    INVALID(sm_stream_feed(NULL, "GAATTC", 6, hit_fn, NULL));
    INVALID(sm_stream_end(NULL, hit_fn, NULL));
    sm_stream_free(NULL);
    if (sm_stream_open(db, &stream) != SM_OK) return 2;
    INVALID(sm_stream_feed(stream, NULL, 6, hit_fn, NULL));
    INVALID(sm_stream_feed(stream, "GAATTC", 6, NULL, NULL));
    INVALID(sm_stream_end(stream, NULL, NULL));
    sm_stream_free(stream);

    sm_runner_options ro;
    sm_runner_options_init(NULL);
    sm_runner_options_init(&ro);
    ro.count_only = 1;
    ro.threads = 1;
    sm_runner *runner = sentinel;
    INVALID_ERR(sm_runner_create(NULL, &ro, &runner, &err));
    tu_check(runner == NULL, "runner_create(NULL db) leaves NULL");
    INVALID_ERR(sm_runner_create(db, NULL, &runner, &err));
    INVALID_ERR(sm_runner_create(db, &ro, NULL, &err));
    tu_check(sm_runner_begin_record(NULL) == UINT64_MAX, "begin_record(NULL)");
    INVALID(sm_runner_feed(NULL, "GAATTC", 6));
    INVALID(sm_runner_end_record(NULL));
    INVALID(sm_runner_flush(NULL));
    tu_check(sm_runner_counts(NULL) == NULL && sm_runner_total(NULL) == 0, "counts, total of NULL");
    sm_runner_free(NULL);
    if (sm_runner_create(db, &ro, &runner, &err) != SM_OK) return 2;
    sm_runner_begin_record(runner);
    INVALID(sm_runner_feed(runner, NULL, 6));
    tu_check(sm_runner_feed(runner, NULL, 0) == SM_OK && sm_runner_flush(runner) == SM_OK, "feed of NULL, 0");
    sm_runner_free(runner);
    tu_check(sm_cuda_device_count() >= 0, "cuda_device_count");

    /* -------------------------------------------------- seqmatch_dfa.h */
    uint32_t table[2] = {0, 0};
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = b == 'a' ? 0 : SM_DFA_UNKNOWN;
    sm_dfa *out_dfa = sentinel;
    INVALID_ERR(sm_dfa_build(1, 1, 0, NULL, NULL, column_of, &out_dfa, &err));
    INVALID_ERR(sm_dfa_build(1, 1, 0, table, NULL, NULL, &out_dfa, &err));
    INVALID_ERR(sm_dfa_build(1, 1, 0, table, NULL, column_of, NULL, &err));
    INVALID_ERR(sm_dfa_parse(NULL, 5, "x", &out_dfa, &err));
    INVALID_ERR(sm_dfa_parse("x", 1, "x", NULL, &err));
    tu_check(sm_dfa_parse(NULL, 0, NULL, &out_dfa, &err) == SM_ERR_FORMAT, "parse of NULL, 0: empty text");
    INVALID_ERR(sm_dfa_read_file(NULL, &out_dfa, &err));
    INVALID_ERR(sm_dfa_read_file("x.dfa", NULL, &err));
    sm_dfa_regex_options_init(NULL);
    INVALID_ERR(sm_dfa_from_regex(NULL, 3, NULL, &out_dfa, &err));
    INVALID_ERR(sm_dfa_from_regex("ab", 2, NULL, NULL, &err));
    INVALID_ERR(sm_dfa_from_db(NULL, SM_DFA_CONTAINS, &out_dfa, &err));
    INVALID_ERR(sm_dfa_from_db(db, SM_DFA_CONTAINS, NULL, &err));
    INVALID_ERR(sm_dfa_minimize(NULL, &out_dfa, &err));
    INVALID_ERR(sm_dfa_minimize(dfa, NULL, &err));
    INVALID_ERR(sm_dfa_dump(NULL, stdout, &err));
    INVALID_ERR(sm_dfa_dump(dfa, NULL, &err));
    sm_dfa_free(NULL);
    tu_check(sm_dfa_bytes(NULL, &size) == NULL && size == 0, "dfa_bytes(NULL)");
    tu_check(sm_dfa_bytes(dfa, NULL) != NULL, "dfa_bytes(dfa, NULL)");
    INVALID_ERR(sm_dfa_from_bytes(NULL, 64, &out_dfa, &err));
    INVALID_ERR(sm_dfa_from_bytes(sm_dfa_bytes(dfa, NULL), 64, NULL, &err));
    tu_check(sm_dfa_state_count(NULL) == 0 && sm_dfa_column_count(NULL) == 0, "state and column count of NULL");
    tu_check(sm_dfa_start(NULL) == SM_DFA_NO_STATE && !sm_dfa_is_accepting(NULL, 0), "start, accepting of NULL");
    tu_check(sm_dfa_column_of(NULL, 'a') == SM_DFA_UNKNOWN, "column_of(NULL)");
    tu_check(sm_dfa_target(NULL, 0, 0) == SM_DFA_NO_STATE && sm_dfa_next(NULL, 0, 'a') == SM_DFA_NO_STATE,
             "target, next of NULL");
    sm_dfa_matcher_options_init(NULL);
    sm_dfa_matcher *out_matcher = sentinel;
    INVALID_ERR(sm_dfa_matcher_create(NULL, NULL, &out_matcher, &err));
    tu_check(out_matcher == NULL, "matcher_create(NULL) leaves NULL");
    INVALID_ERR(sm_dfa_matcher_create(dfa, NULL, NULL, &err));
    sm_dfa_matcher_free(NULL);
    tu_check(sm_dfa_matcher_stride(NULL) == 0 && sm_dfa_matcher_uses_avx2(NULL) == 0, "stride, avx2 of NULL");
    tu_check(sm_dfa_run(NULL, 0, "ab", 2) == SM_DFA_NO_STATE, "run(NULL matcher)");
    tu_check(sm_dfa_run(matcher, 0, NULL, 2) == SM_DFA_NO_STATE, "run(NULL data)");
    tu_check(sm_dfa_run(matcher, sm_dfa_start(dfa), NULL, 0) == sm_dfa_start(dfa), "run of NULL, 0");
    tu_check(sm_dfa_find_unknown(NULL, "ab", 2) == 0 && sm_dfa_find_unknown(matcher, NULL, 2) == 0,
             "find_unknown with NULL");
    sm_dfa_parallel_options_init(NULL);
    sm_dfa_chunk_cuts(10, 2, SM_DFA_CHUNKS_EQUAL, 1.0, NULL);
    uint32_t final_state = 0, map[8];
    size_t cuts[3] = {0, 1, 2};
    uint32_t states[3];
    INVALID_ERR(sm_dfa_run_parallel(NULL, 0, "ab", 2, NULL, &final_state, &err));
    INVALID_ERR(sm_dfa_run_parallel(matcher, 0, NULL, 2, NULL, &final_state, &err));
    INVALID_ERR(sm_dfa_run_parallel(matcher, 0, "ab", 2, NULL, NULL, &err));
    INVALID_ERR(sm_dfa_chunk_map(NULL, "ab", 2, map, &err));
    INVALID_ERR(sm_dfa_chunk_map(matcher, NULL, 2, map, &err));
    INVALID_ERR(sm_dfa_chunk_map(matcher, "ab", 2, NULL, &err));
    INVALID_ERR(sm_dfa_chunk_states(NULL, 0, "ab", cuts, 2, NULL, states, &err));
    INVALID_ERR(sm_dfa_chunk_states(matcher, 0, NULL, cuts, 2, NULL, states, &err));
    INVALID_ERR(sm_dfa_chunk_states(matcher, 0, "ab", NULL, 2, NULL, states, &err));
    INVALID_ERR(sm_dfa_chunk_states(matcher, 0, "ab", cuts, 2, NULL, NULL, &err));
    /* and a NULL error is never written to */
    INVALID(sm_dfa_chunk_states(matcher, 0, "ab", cuts, 2, NULL, NULL, NULL));

    sm_dfa_matcher_free(matcher);
    sm_dfa_free(dfa);
    sm_db_free(db);
    return tu_summary("test_api");
}
