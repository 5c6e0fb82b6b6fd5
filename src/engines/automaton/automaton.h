/* Dictionary automaton (Aho-Corasick as a complete DFA over a compact class
 * alphabet): a trie of the keys, then a breadth-first pass that fills every
 * missing transition and merges output sets along failure links, so a scan
 * is one table lookup per byte with no failure loop.
 *
 * Section layout (offsets relative to the section start, all 64-byte aligned):
 *   sm_ac_header
 *   delta    uint32[states * columns]: entry for (state s, class c) is
 *            target * columns, with SM_AC_OUT_FLAG set when the target has outputs
 *   out_index uint32[states + 1]: outputs of s are out_list[out_index[s] .. out_index[s+1])
 *   out_list  uint32[out_total]: output ids (pattern * 2 + reverse)
 * States are numbered in breadth-first order, children in class order; the
 * root is state 0. The outputs of a state are its own (ascending id) followed
 * by those of its failure state. Both builders produce identical bytes.
 */
#ifndef SM_AUTOMATON_H
#define SM_AUTOMATON_H

#include "base/cpu.h"
#include "base/internal.h"

#define SM_AC_OUT_FLAG 0x80000000u

typedef struct {
    uint32_t columns;       /* 1 + distinct key symbols; class 0 = any other byte */
    uint32_t states;
    uint32_t max_depth;     /* longest key */
    uint32_t reserved;
    uint64_t out_total;
    uint64_t delta_off;
    uint64_t out_index_off;
    uint64_t out_list_off;
    uint16_t class_of[256]; /* text byte -> column */
} sm_ac_header;

/* Builds the section for nkeys keys. fold[b] is the normalised form of text
   byte b (dna: 'a'->'A', 'u'/'U'->'T'; text with ignore-case: tolower;
   otherwise identity): class_of[b] = class of fold[b] when some key uses
   fold[b], else 0. threads == 0: serial BFS builder; threads >= 1:
   level-synchronous builder with that many threads. Fails with SM_ERR_LIMIT
   when states * columns would reach 2^31 or the section would exceed
   max_bytes (0 = no limit), the message giving the size it would need. */
int sm_ac_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], unsigned threads,
                uint64_t max_bytes, sm_buf *section, sm_error *err);

/* The same built on GPU `device` (build_gpu.h), byte for byte: SM_ERR_DEVICE
   with the reason when there is no GPU to build on. *ms, when not NULL,
   gets the build's time on the GPU side: the keys' copy, the kernels and
   the tables' copy back, in milliseconds. */
int sm_ac_build_gpu(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], int device, uint64_t max_bytes,
                    sm_buf *section, double ms[3], sm_error *err);

/* Checks a loaded section: sizes, every transition and output id in range
   (output ids < n_outputs). Never reads outside [section, section + size). */
int sm_ac_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);

/* Scans text[0, len) from *state (0 = root), whose first byte is at absolute
   position pos0; leaves the final state in *state. Every hit (end = absolute
   position after its last byte, start = end - pattern length) goes to
   sm_sink_add, which keeps those owned by the sink. patterns gives lengths. */
void sm_ac_scan(const uint8_t *section, const sm_db_pattern *patterns, uint32_t *state,
                const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink);
/* The same with the loop chosen by the caller: ssse3 != 0 maps text bytes
   to classes 16 at a time (the CPU must have SSSE3). */
void sm_ac_scan_variant(const uint8_t *section, const sm_db_pattern *patterns, uint32_t *state,
                        const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink, int ssse3);

/* The output ids of state q (pattern * 2 + reverse): *ids[0 .. count).
   Every hit report, on the CPU and from the GPU, expands states through it. */
static inline uint32_t sm_ac_outputs(const uint8_t *section, uint32_t q, const uint32_t **ids) {
    const sm_ac_header *h = (const sm_ac_header *)section;
    const uint32_t *out_index = (const uint32_t *)(section + h->out_index_off);
    *ids = (const uint32_t *)(section + h->out_list_off) + out_index[q];
    return out_index[q + 1] - out_index[q];
}
/* Adds visits[s] to the count of every pattern that state s outputs, and
   zeroes visits (states entries). */
void sm_ac_fold_visits(const uint8_t *section, uint32_t *visits, uint64_t *counts);

#endif /* SM_AUTOMATON_H */
