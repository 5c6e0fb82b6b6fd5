/* The approximate-search oracle: k-mismatches and k-edits written straight
 * from the definitions, with no library code. Keys are in engine form (dna:
 * upper-case IUPAC, already reverse-complemented for '-'; text: raw bytes,
 * lower-cased under ignore-case); symbols compare with oracle_symbol_matches.
 * Slow and meant to be obviously right. */
#ifndef SM_APPROX_ORACLE_H
#define SM_APPROX_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"
#include "testutil.h"

/* Mismatched symbols between key[0, m) and text[0, m). */
uint32_t aoracle_mismatches(const char *key, size_t m, const char *text, sm_alphabet alphabet, unsigned flags);

/* Levenshtein distance between key[0, m) and text[0, n) (unit costs). */
uint32_t aoracle_edit(const char *key, size_t m, const char *text, size_t n, sm_alphabet alphabet, unsigned flags);

/* D(j) by the definition: the least aoracle_edit(key, text[s, j)) over
   0 <= s <= j. Cubic; for tiny inputs. */
uint32_t aoracle_D_by_definition(const char *key, size_t m, const char *text, size_t j, sm_alphabet alphabet,
                                 unsigned flags);

/* D(j) for every j in 0..n into D[0..n], by the textbook column DP whose top
   row is zero (any start is free). Returns 0, or -1 when out of memory. */
int aoracle_D_all(const char *key, size_t m, const char *text, size_t n, sm_alphabet alphabet, unsigned flags,
                  uint32_t *D);

/* The largest s <= j with aoracle_edit(key, text[s, j)) == d, searched from
   s = j down to lo; returns (uint64_t)-1 when there is none. */
uint64_t aoracle_edit_start(const char *key, size_t m, const char *text, size_t j, uint32_t d, size_t lo,
                            sm_alphabet alphabet, unsigned flags);

/* --------------------------------------------- partial matches at ends */

/* Every hit of key[0, m) (engine form) in the record text[0, n) with at most
   k mismatches, partial matches at the record's ends included (min_overlap
   N, include/seqmatch_runtime.h), straight from the definition: the key
   placed at every s with -m < s < n; the part inside is [max(0, s),
   min(n, s + m)); a placement wholly inside is an ordinary hit, one that
   overhangs counts when at least N symbols are inside; mismatches are
   counted in the part inside. Each part (start, end) is added once, with
   the fewest mismatches of the placements that give it, as record,
   pattern, strand. Returns 0, or -1 when out of memory. */
int aoracle_overlap_hits(const char *key, size_t m, const char *text, size_t n, uint32_t k, uint32_t min_overlap,
                         sm_alphabet alphabet, unsigned flags, uint64_t record, uint32_t pattern, char strand,
                         tu_hits *out);

/* The same with k edits (min_overlap 0: the ordinary hits only): the
   ordinary hits from D(j) as search reports them (report best or ends,
   start the largest s reaching D(j)), and the partial ones from P(j): the
   least aoracle_edit(key[a, b), text[s, j)) over the parts with b - a >=
   min_overlap, not the whole key, where a > 0 needs s = 0 and b < m needs
   j = n; reported by the same rule, start the largest s reaching P(j). A
   partial hit with an ordinary one's start and end is added once, with the
   fewer errors. partials (may be NULL) also gets the hits added as partial
   ones (those whose errors are a partial alignment's, fewer than the
   ordinary one's). Returns 0, or -1 when out of memory. */
int aoracle_edit_overlap_hits(const char *key, size_t m, const char *text, size_t n, uint32_t k, uint32_t min_overlap,
                              sm_report report, sm_alphabet alphabet, unsigned flags, uint64_t record, uint32_t pattern,
                              char strand, tu_hits *out, tu_hits *partials);

/* ---------------------------------------------------------------- PAM */

/* The hits of one pattern on one strand of a text with a PAM, straight from
   the definitions in include/seqmatch.h (guide G, PAM Q, q = |Q|, both as
   given: IUPAC letters, either case): exact (k = 0 and match
   SM_MATCH_EXACT, or any match with the whole site exact), k mismatches or
   k edits with report ends / best. '+' is G + Q; '-' is rc(Q) + rc(G) with
   rc(Q) exact at the start. Appended to out as record, pattern; returns 0,
   or -1 when out of memory. Brute force: for small texts. */
int aoracle_pam_hits(const char *guide, size_t g, const char *pam, size_t q, int reverse, sm_match match,
                     uint32_t k, sm_report report, const char *text, size_t n, sm_alphabet alphabet, unsigned flags,
                     uint64_t record, uint32_t pattern, tu_hits *out);

#endif /* SM_APPROX_ORACLE_H */
