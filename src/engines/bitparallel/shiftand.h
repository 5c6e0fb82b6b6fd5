/* Bit-parallel Shift-And for patterns whose symbols are sets (IUPAC codes, or
 * IUPAC codes in the text with SM_FLAG_TEXT_IUPAC): per text class a mask of
 * the pattern positions it matches, any number of patterns of any length.
 *
 * Section layout: a header, then flat tables addressed by offsets relative to
 * the section start (no pointers), 64-byte aligned. Two layouts of the same
 * automaton; the builder picks the cheaper one.
 *
 * SM_SA_DENSE (all keys fit in one word): keys lie end to end in the
 * `bits` low bits of one word D; one step per text byte c is
 *     D = ((D << 1) | starts) & mask[class_of[c]]
 * (a bit shifted into a key's first position is harmless: that bit is in
 * `starts`). A set bit of D & finals ends a key.
 *
 * SM_SA_LEVELS (more than one word): keys sorted by length, longest first,
 * in groups of 64 (key r is bit r % 64 of group r / 64). Level j, words
 * [j * group_words, (j + 1) * group_words), holds position j of every key,
 * so the shift becomes a move to the next level:
 *     D'[j][g] = D[j - 1][g] & mask[class][j][g],   D'[0][g] = mask[class][0][g]
 * On typical text only the first few levels are ever non-zero, so a step
 * computes a fixed window of `shallow` levels (kept in registers) and the
 * deeper ones only while some key has got that far, not the whole
 * automaton. Hits are only possible from level first_final on.
 *
 *   sm_sa_header
 *   masks       uint64[rows * row_stride]; row 0 is all zero (bytes that match nothing)
 *   starts      uint64[row_stride] (dense): first bit of every key
 *   finals      uint64[row_stride]: last bit of every key
 *   final_base  uint32[words] (dense): finals set in the words before this one
 *   out_index   uint32[final_count + 1]: the keys ending at the r-th final bit
 *   out_list    uint32[out_total]       report out_list[out_index[r] .. out_index[r+1])
 * The r-th final bit is the r-th set bit of finals (dense) or key r (levels).
 * Scan state: dense, one unused word and D; levels, a small head (the
 * number of levels that may be non-zero) and D, row_stride words.
 * Identical keys (duplicate patterns, palindromes on both strands) share bits.
 */
#ifndef SM_SHIFTAND_H
#define SM_SHIFTAND_H

#include "base/internal.h"

enum { SM_SA_DENSE = 1, SM_SA_LEVELS = 2 };

typedef struct {
    uint32_t layout;       /* SM_SA_DENSE or SM_SA_LEVELS */
    uint32_t words;        /* words of the automaton: dense 1, levels levels * group_words */
    uint32_t row_stride;   /* words per mask row, >= words, a multiple of 8 */
    uint32_t rows;         /* mask rows; class_of[] < rows */
    uint32_t final_count;  /* distinct keys */
    uint32_t max_key;      /* longest key */
    uint32_t levels;       /* levels: max_key; dense: 0 */
    uint32_t shallow;      /* levels: levels stepped on every byte (the scan's window, 8) */
    uint32_t group_words;  /* levels: words per level (1, 2 or a multiple of 4) */
    uint32_t first_final;  /* levels: shortest key - 1 */
    uint64_t bits;         /* dense: used bits of the vector; levels: 64 * words */
    uint64_t out_total;    /* entries of out_list */
    uint64_t masks_off, starts_off, finals_off, final_base_off, out_index_off, out_list_off;
    uint16_t class_of[256]; /* text byte -> mask row */
} sm_sa_header;

/* keys: for dna, upper-case IUPAC strings (the reverse complement for
   output ids with the reverse bit); for text, raw bytes (lower-cased when
   SM_FLAG_IGNORE_CASE). */
int sm_sa_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                uint64_t max_bytes, sm_buf *section, sm_error *err);
int sm_sa_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);
/* Number of uint64_t words of scan state. */
size_t sm_sa_state_words(const uint8_t *section);
void sm_sa_state_reset(const uint8_t *section, uint64_t *state);
/* Same contract as sm_ac_scan: state carried in/out, absolute positions from
   pos0. avx2 != 0: the levels layout runs its AVX2 loop (the CPU must have it). */
void sm_sa_scan(const uint8_t *section, const sm_db_pattern *patterns, uint64_t *state,
                const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink, int avx2);

#endif /* SM_SHIFTAND_H */
