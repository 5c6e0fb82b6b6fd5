/* Fuzz target: the DFA text format (sm_dfa_parse, docs/dfa.md) and, for
 * inputs that start with the block magic "SMDFA\0\0\0", the flat block
 * loader (sm_dfa_from_bytes). A parsed DFA is then run every way the
 * library offers over the input itself, minimized, dumped and parsed back,
 * and each result checked against stepping with sm_dfa_next. */
#include <stdlib.h>
#include <string.h>

#include "dfa_check.h"
#include "fuzz_support.h"
#include "seqmatch.h"

/* Minimizing is quadratic at worst: keep it to DFAs the fuzzer can afford. */
#define MINIMIZE_MAX_STATES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sm_dfa *dfa = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc;
    if (size >= 8 && memcmp(data, SM_DFA_MAGIC, 8) == 0) {
        rc = sm_dfa_from_bytes(data, size, &dfa, &err);
    } else {
        /* the text is not NUL-terminated: a read past size is a bug */
        rc = sm_dfa_parse((const char *)data, size, "fuzz.dfa", &dfa, &err);
    }
    if (rc != SM_OK) {
        FUZZ_CHECK(dfa == NULL && err.code == rc && err.message[0], "failure %d without a message", rc);
        return 0;
    }
    unsigned sel = size ? data[size - 1] * 2654435761u : 0;
    dfa_check_runs(dfa, data, size, sel);
    dfa_check_round_trips(dfa, 512);
    if (sm_dfa_state_count(dfa) <= MINIMIZE_MAX_STATES) {
        sm_dfa *min = NULL;
        rc = sm_dfa_minimize(dfa, &min, &err);
        FUZZ_CHECK(rc == SM_OK || rc == SM_ERR_NOMEM, "minimize: %s", err.message);
        if (rc == SM_OK) {
            FUZZ_CHECK(sm_dfa_state_count(min) <= sm_dfa_state_count(dfa), "minimizing added states");
            dfa_check_same_language(dfa, min, data, size);
            /* minimal means a second pass changes nothing */
            sm_dfa *again = NULL;
            if (sm_dfa_minimize(min, &again, &err) == SM_OK) {
                FUZZ_CHECK(sm_dfa_state_count(again) == sm_dfa_state_count(min), "minimizing twice shrinks again");
                sm_dfa_free(again);
            }
            sm_dfa_free(min);
        }
    }
    sm_dfa_free(dfa);
    return 0;
}
