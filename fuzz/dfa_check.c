/* See dfa_check.h. */
#include "dfa_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

uint32_t dfa_reference_run(const sm_dfa *dfa, uint32_t state, const uint8_t *text, size_t len, int skip_unknown) {
    for (size_t i = 0; i < len; i++) {
        uint32_t next = sm_dfa_next(dfa, state, text[i]);
        if (next == SM_DFA_NO_STATE) {
            if (skip_unknown) continue;
            return SM_DFA_NO_STATE;
        }
        FUZZ_CHECK(next < sm_dfa_state_count(dfa), "target %u of %u states", next, sm_dfa_state_count(dfa));
        state = next;
    }
    return state;
}

void dfa_check_runs(const sm_dfa *dfa, const uint8_t *text, size_t len, unsigned sel) {
    uint32_t states = sm_dfa_state_count(dfa);
    uint32_t start = sm_dfa_start(dfa);
    FUZZ_CHECK(states >= 1 && start < states && sm_dfa_column_count(dfa) >= 1, "bad shape");
    sm_dfa_matcher_options mo;
    sm_dfa_matcher_options_init(&mo);
    mo.skip_unknown = (int)(sel & 1);
    mo.simd = (sm_dfa_simd)((sel >> 1) % 3);
    mo.stride = (sel >> 3) % 5;
    sm_dfa_matcher *m = NULL;
    sm_error err;
    if (sm_dfa_matcher_create(dfa, &mo, &m, &err) != SM_OK) {
        FUZZ_CHECK(err.code == SM_ERR_NOMEM || err.code == SM_ERR_LIMIT, "matcher: %s", err.message);
        return;
    }
    uint32_t want = dfa_reference_run(dfa, start, text, len, mo.skip_unknown);
    uint32_t got = sm_dfa_run(m, start, text, len);
    FUZZ_CHECK(got == want, "sm_dfa_run (stride %u simd %d skip %d) gives %u, stepping gives %u",
               sm_dfa_matcher_stride(m), (int)mo.simd, mo.skip_unknown, got, want);

    size_t first_unknown = len;
    for (size_t i = 0; i < len; i++)
        if (sm_dfa_column_of(dfa, text[i]) == SM_DFA_UNKNOWN) {
            first_unknown = i;
            break;
        }
    FUZZ_CHECK(sm_dfa_find_unknown(m, text, len) == first_unknown, "find_unknown");

    /* The chunked run from every start state a few inputs use. */
    sm_dfa_parallel_options po;
    sm_dfa_parallel_options_init(&po);
    po.threads = 1 + ((sel >> 6) & 1);
    po.chunks = 1 + (sel >> 7) % 7;
    po.policy = (sm_dfa_chunk_policy)((sel >> 10) & 1);
    po.min_chunk = 1;
    uint32_t from = (sel >> 11) % states;
    uint32_t final_state = 0;
    if (sm_dfa_run_parallel(m, from, text, len, &po, &final_state, &err) == SM_OK) {
        uint32_t expect = dfa_reference_run(dfa, from, text, len, mo.skip_unknown);
        FUZZ_CHECK(final_state == expect, "run_parallel (%zu chunks) gives %u, stepping gives %u", po.chunks,
                   final_state, expect);
    } else {
        FUZZ_CHECK(err.code == SM_ERR_NOMEM, "run_parallel: %s", err.message);
    }

    /* A chunk's state map: from every state (small DFAs). */
    if (states <= 256) {
        uint32_t *map = malloc(states * sizeof *map);
        if (map && sm_dfa_chunk_map(m, text, len, map, &err) == SM_OK) {
            for (uint32_t s = 0; s < states; s++) {
                uint32_t expect = dfa_reference_run(dfa, s, text, len, mo.skip_unknown);
                FUZZ_CHECK(map[s] == expect, "chunk map from %u gives %u, stepping gives %u", s, map[s], expect);
            }
        }
        free(map);
    }
    sm_dfa_matcher_free(m);
}

static void check_same_transitions(const sm_dfa *a, const sm_dfa *b) {
    uint32_t states = sm_dfa_state_count(a);
    FUZZ_CHECK(sm_dfa_state_count(b) == states && sm_dfa_start(b) == sm_dfa_start(a), "states or start differ");
    for (uint32_t s = 0; s < states; s++) {
        FUZZ_CHECK(sm_dfa_is_accepting(a, s) == sm_dfa_is_accepting(b, s), "acceptance of %u differs", s);
        for (unsigned byte = 0; byte < 256; byte++)
            FUZZ_CHECK(sm_dfa_next(a, s, (uint8_t)byte) == sm_dfa_next(b, s, (uint8_t)byte),
                       "state %u byte 0x%02X: %u then %u", s, byte, sm_dfa_next(a, s, (uint8_t)byte),
                       sm_dfa_next(b, s, (uint8_t)byte));
    }
}

/* Can the text format hold this DFA? It lists one printable symbol per
   column (the first not '#', which would start a comment), or all 256 byte
   values, which leaves no room for bytes outside the alphabet. */
static int dumpable(const sm_dfa *dfa) {
    uint32_t columns = sm_dfa_column_count(dfa);
    int bytes_of[256] = {0}, first_byte[256], unknown = 0;
    for (unsigned b = 256; b-- > 0;) {
        uint32_t c = sm_dfa_column_of(dfa, (uint8_t)b);
        if (c == SM_DFA_UNKNOWN) {
            unknown = 1;
            continue;
        }
        bytes_of[c]++;
        first_byte[c] = (int)b;
    }
    int compact = 1;
    for (uint32_t c = 0; c < columns; c++)
        if (bytes_of[c] != 1 || first_byte[c] < 0x21 || first_byte[c] > 0x7E) compact = 0;
    if (compact && first_byte[0] == '#') compact = 0;
    return compact || !unknown;
}

void dfa_check_round_trips(const sm_dfa *dfa, uint32_t text_max_states) {
    sm_error err;
    size_t size = 0;
    const void *bytes = sm_dfa_bytes(dfa, &size);
    sm_dfa *copy = NULL;
    FUZZ_CHECK(sm_dfa_from_bytes(bytes, size, &copy, &err) == SM_OK, "own block rejected: %s", err.message);
    size_t copy_size = 0;
    const void *copy_bytes = sm_dfa_bytes(copy, &copy_size);
    FUZZ_CHECK(copy_size == size && memcmp(copy_bytes, bytes, size) == 0, "the block does not read back the same");
    sm_dfa_free(copy);

    if (sm_dfa_state_count(dfa) > text_max_states) return;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out) return;
    int rc = sm_dfa_dump(dfa, out, &err);
    fclose(out);
    int expect_ok = dumpable(dfa);
    FUZZ_CHECK((rc == SM_OK) == expect_ok, "dump gives %d (%s) for a DFA the text format %s hold", rc,
               rc ? err.message : "", expect_ok ? "can" : "cannot");
    if (rc != SM_OK) {
        free(text);
        return;
    }
    sm_dfa *parsed = NULL;
    rc = sm_dfa_parse(text, text_len, "dump", &parsed, &err);
    FUZZ_CHECK(rc == SM_OK, "the dump does not parse: %s", err.message);
    check_same_transitions(dfa, parsed);
    sm_dfa_free(parsed);
    free(text);
}

void dfa_check_same_language(const sm_dfa *a, const sm_dfa *b, const uint8_t *text, size_t len) {
    /* every prefix of text is an input */
    uint32_t sa = sm_dfa_start(a), sb = sm_dfa_start(b);
    FUZZ_CHECK(sm_dfa_is_accepting(a, sa) == sm_dfa_is_accepting(b, sb), "the empty input is decided differently");
    for (size_t i = 0; i < len; i++) {
        sa = sm_dfa_next(a, sa, text[i]);
        sb = sm_dfa_next(b, sb, text[i]);
        FUZZ_CHECK((sa == SM_DFA_NO_STATE) == (sb == SM_DFA_NO_STATE), "byte 0x%02X at %zu is unknown to one DFA only",
                   (unsigned)text[i], i);
        if (sa == SM_DFA_NO_STATE) return;
        FUZZ_CHECK(sm_dfa_is_accepting(a, sa) == sm_dfa_is_accepting(b, sb),
                   "the prefix of %zu bytes is accepted by one DFA only", i + 1);
    }
}
