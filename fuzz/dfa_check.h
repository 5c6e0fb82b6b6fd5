/* Checks shared by the DFA and regex fuzz targets: a DFA's behaviour under
 * every run path, and equivalence of two DFAs on given inputs. */
#ifndef SM_FUZZ_DFA_CHECK_H
#define SM_FUZZ_DFA_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"

/* The state reached by stepping with sm_dfa_next (the definition). */
uint32_t dfa_reference_run(const sm_dfa *dfa, uint32_t state, const uint8_t *text, size_t len, int skip_unknown);

/* Every run path (strides, SIMD choices, chunked parallel run, chunk maps)
   agrees with dfa_reference_run over text; sel varies the options. */
void dfa_check_runs(const sm_dfa *dfa, const uint8_t *text, size_t len, unsigned sel);

/* The flat block reads back to the same block; the dump (when the text
   format can hold the DFA) parses back to a DFA with the same transitions on
   every byte. The text round trip costs states x 256 steps: it is skipped
   above text_max_states. */
void dfa_check_round_trips(const sm_dfa *dfa, uint32_t text_max_states);

/* a and b accept the same strings among the given inputs (and stop at the
   same unknown bytes). */
void dfa_check_same_language(const sm_dfa *a, const sm_dfa *b, const uint8_t *text, size_t len);

#endif /* SM_FUZZ_DFA_CHECK_H */
