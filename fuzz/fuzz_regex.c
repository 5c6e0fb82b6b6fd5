/* Fuzz target: the regular-expression compiler (sm_dfa_from_regex).
 *
 * Input: byte 0 picks the alphabet (text or dna); the rest is the
 * expression. Checked: a refusal is a syntax error or the state limit, with
 * a message; the plain and the minimized DFA (and sm_dfa_minimize of the
 * plain one) accept the same prefixes of probe strings built from the
 * expression's own bytes; the DFA survives every run path and round trip. */
#include <stdlib.h>
#include <string.h>

#include "dfa_check.h"
#include "fuzz_support.h"
#include "seqmatch.h"

/* Subset construction can blow up: a small limit keeps each input fast and
   exercises the limit itself. */
#define REGEX_MAX_STATES 500

/* Probe text: the expression, its bytes sorted, and short runs of each of
   its first distinct bytes, so that literals and repetitions get reached. */
static uint8_t *probe_text(const uint8_t *expr, size_t len, size_t *out_len) {
    uint8_t distinct[16];
    size_t nd = 0;
    for (size_t i = 0; i < len && nd < sizeof distinct; i++)
        if (!memchr(distinct, expr[i], nd)) distinct[nd++] = expr[i];
    size_t cap = 2 * len + nd * 8 + 1;
    uint8_t *t = malloc(cap);
    if (!t) return NULL;
    size_t n = 0;
    memcpy(t + n, expr, len);
    n += len;
    for (size_t d = 0; d < nd; d++)
        for (int r = 0; r < 8; r++) t[n++] = distinct[(d + (size_t)r / 4) % nd];
    memcpy(t + n, expr, len);
    n += len;
    *out_len = n;
    return t;
}

static sm_dfa *compile(const uint8_t *expr, size_t len, sm_alphabet alphabet, int minimize) {
    sm_dfa_regex_options o;
    sm_dfa_regex_options_init(&o);
    o.alphabet = alphabet;
    o.max_states = REGEX_MAX_STATES;
    o.minimize = minimize;
    sm_dfa *dfa = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_dfa_from_regex((const char *)expr, len, &o, &dfa, &err);
    if (rc != SM_OK) {
        FUZZ_CHECK(dfa == NULL && (rc == SM_ERR_PATTERN || rc == SM_ERR_LIMIT || rc == SM_ERR_NOMEM) &&
                       err.message[0],
                   "regex refused with status %d: '%s'", rc, err.message);
        return NULL;
    }
    FUZZ_CHECK(sm_dfa_state_count(dfa) <= REGEX_MAX_STATES, "%u states over the limit", sm_dfa_state_count(dfa));
    return dfa;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    sm_alphabet alphabet = (data[0] & 1) ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    const uint8_t *expr = data + 1;
    size_t len = size - 1;
    sm_dfa *plain = compile(expr, len, alphabet, 0);
    if (!plain) return 0;
    size_t probe_len = 0;
    uint8_t *probe = probe_text(expr, len, &probe_len);
    if (!probe) {
        sm_dfa_free(plain);
        return 0;
    }
    sm_dfa *minimal = compile(expr, len, alphabet, 1);
    /* the minimized build can only need fewer states, so it cannot fail where the plain one did not */
    FUZZ_CHECK(minimal != NULL, "the minimized build failed where the plain one succeeded");
    FUZZ_CHECK(sm_dfa_state_count(minimal) <= sm_dfa_state_count(plain), "minimal DFA is larger");
    dfa_check_same_language(plain, minimal, probe, probe_len);
    sm_dfa *again = NULL;
    sm_error err;
    if (sm_dfa_minimize(plain, &again, &err) == SM_OK) {
        FUZZ_CHECK(sm_dfa_state_count(again) == sm_dfa_state_count(minimal),
                   "sm_dfa_minimize gives %u states, the minimizing build %u", sm_dfa_state_count(again),
                   sm_dfa_state_count(minimal));
        sm_dfa_free(again);
    }
    dfa_check_runs(minimal, probe, probe_len, data[0] * 2654435761u);
    dfa_check_round_trips(minimal, 64);
    sm_dfa_free(minimal);
    sm_dfa_free(plain);
    free(probe);
    return 0;
}
