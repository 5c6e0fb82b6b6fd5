/* The test oracle: exact matching written straight from the semantics, with
 * its own IUPAC tables and no library code. Slow (every pattern at every
 * position) and meant to be obviously right. */
#ifndef SM_ORACLE_H
#define SM_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"
#include "testutil.h"

/* Nucleotide set of a letter: A=1 C=2 G=4 T=8 (U = T), IUPAC codes the
   union, either case; 0 for any other byte. */
unsigned oracle_nt_set(unsigned char c);
/* Upper-case IUPAC complement of a letter (either case), or 0 for a byte
   that is not a nucleotide code. */
char oracle_complement(unsigned char c);
/* out[0, len) = reverse complement of seq (upper case). Returns 0, or -1
   when seq has a byte that is not a nucleotide code. */
int oracle_reverse_complement(const char *seq, size_t len, char *out);

/* Would sm_compile accept this pattern set? 1 yes, 0 no (empty set, an empty
   pattern, or a dna pattern with a byte that is not an IUPAC code). */
int oracle_patterns_valid(const sm_pattern *patterns, size_t n, sm_alphabet alphabet);

/* Does pattern symbol p match text symbol t under the options? */
int oracle_symbol_matches(unsigned char p, unsigned char t, sm_alphabet alphabet, unsigned flags);

/* Appends to out every exact hit of the patterns in text[0, len) (one
   record, numbered record), in the order (start, end, pattern, '+' before
   '-'). Returns 0, or -1 when the pattern set is invalid. */
int oracle_find(const sm_pattern *patterns, size_t n, const sm_compile_options *opts, const char *text,
                size_t len, uint64_t record, tu_hits *out);

/* counts[i] += hits of pattern i (both strands). Returns the total. */
uint64_t oracle_count(const tu_hits *hits, uint64_t *counts);

#endif /* SM_ORACLE_H */
