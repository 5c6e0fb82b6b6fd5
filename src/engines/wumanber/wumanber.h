/* Wu-Manber: exact multi-pattern search by shifting a window of m symbols
 * (m = the shortest key) over the text, as in Wu and Manber's algorithm with
 * the SHIFT, HASH and PREFIX tables:
 *
 *   - the last B symbols of the window (a block) are hashed; SHIFT[hash] is
 *     how far the window may move without passing the end of any key's
 *     m-prefix that contains a block of that hash (m - B + 1 when none does);
 *   - when SHIFT[hash] is 0, HASH[hash] lists the keys whose m-prefix ends
 *     in a block of that hash; each carries PREFIX, its first B' symbols,
 *     compared with the window's first B' symbols before the key itself is
 *     compared with the text (every byte through fold[]).
 *
 * Keys are the concrete strings the planner gives the automaton (IUPAC
 * expanded, reverse complements included, each with its output id
 * pattern * 2 + reverse), so the engine only compares bytes after folding.
 *
 * Section layout (offsets from the section start, every table 64-byte
 * aligned; see wm_private.h):
 *   sm_wm_header   parameters, byte -> symbol code, byte -> folded byte
 *   shift          uint8[2^hash_bits]
 *   bucket         uint32[2^hash_bits + 1]: keys of hash h are entry[bucket[h] .. bucket[h + 1])
 *   entry          sm_wm_entry[nkeys]: prefix, length, output id, key offset
 *   keys           the keys' bytes (identical keys share them)
 *   prefilter      optional (few keys): nibble masks of the first 3 key
 *                  bytes per bucket of keys, and the buckets' members; the
 *                  scan then checks only windows whose first bytes pass
 */
#ifndef SM_WUMANBER_H
#define SM_WUMANBER_H

#include "base/internal.h"

/* Build parameters; 0 everywhere (or NULL) lets the builder choose. Meant
   for tests (a tiny hash table forces collisions). */
typedef struct {
    uint32_t block;     /* B: symbols per hashed block (1..16, at most the shortest key) */
    uint32_t prefix;    /* B': symbols of the PREFIX check (1..4, at most the shortest key) */
    uint32_t hash_bits; /* SHIFT and HASH have 2^hash_bits entries (1..20) */
} sm_wm_params;

/* Appends the section for nkeys keys (any lengths >= 1) to *section, whose
   length must be a multiple of 8. fold[b] is the normalised form of text
   byte b, as sm_ac_build gets it. Identical (key, output) pairs count once.
   Fails with SM_ERR_LIMIT when the section would exceed max_bytes (0 = no
   limit). */
int sm_wm_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], const sm_wm_params *params,
                uint64_t max_bytes, sm_buf *section, sm_error *err);

/* Checks a section read from outside before a scan trusts it: parameters,
   every table bound, bucket order, each key in the bucket of its block with
   a zero shift, output ids < n_outputs. Never reads outside
   [section, section + size). */
int sm_wm_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);

/* Words of scan state (the last longest - 1 bytes seen, and room to join
   them with the next piece), and the state at the start of a sequence. */
size_t sm_wm_state_words(const uint8_t *section);
void sm_wm_state_reset(const uint8_t *section, uint64_t *state);

/* Same contract as sm_ac_scan and sm_kt_scan: text[0, len) at absolute
   position pos0, state carried in and out (a key may span calls; it is
   reported by the call that sees its last byte); every hit goes through
   sm_sink_add (ownership by start). Hits come in window order, not end
   order: the callers sort. The loop is the caller's choice: prefilter != 0
   uses the section's SIMD prefilter where it has one, with simd 2 (AVX2),
   1 (SSSE3) or 0 (plain C); the CPU must have what it names. */
void sm_wm_scan(const uint8_t *section, uint64_t *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink, int simd, int prefilter);
/* The mean of the SHIFT table: the expected shift per window on text whose
   blocks are spread like the table's slots (the planner's measure). */
double sm_wm_mean_shift(const uint8_t *section);

/* The parameters a section was built with (for --explain and tests). */
void sm_wm_describe(const uint8_t *section, uint32_t *block, uint32_t *prefix, uint32_t *hash_bits,
                    uint32_t *shortest);

/* The SIMD prefilter is built for at most this many distinct keys: past
   16, too many windows pass the nibble masks and the automaton is faster
   (docs/architecture.md, "Wu-Manber", has the measurements). */
#define SM_WM_PREFILTER_BUILD_KEYS 16u

/* 1 when the section has the SIMD prefilter of its first bytes (at most
   SM_WM_PREFILTER_BUILD_KEYS keys, none shorter than 3, not all of A, C, G,
   T), else 0. */
int sm_wm_has_prefilter(const uint8_t *section);

#endif /* SM_WUMANBER_H */
