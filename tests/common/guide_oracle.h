/* The CRISPR site oracle: guides with an exact PAM, k mismatches and one
 * DNA or RNA bulge, straight from the definition in include/seqmatch.h,
 * with no library code. Every (start, end) of the text is tried as a site
 * on each strand: the site read 5' to 3' on the guide's strand, its PAM
 * checked, its protospacer aligned to the guide in every way the
 * definition allows, the best alignment kept. Slow; for small texts. */
#ifndef SM_GUIDE_ORACLE_H
#define SM_GUIDE_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"
#include "testutil.h"

typedef struct {
    uint64_t start, end;
    char strand;
    uint32_t mismatches;
    sm_bulge bulge;
    uint32_t size, at;          /* the bulge's size and guide symbols between it and the PAM */
    char guide_row[128], dna_row[128]; /* as sm_hit_site writes them */
} goracle_site;

typedef struct {
    goracle_site *items;
    size_t n, cap;
} goracle_sites;

/* What a search asks. guide and pam as given (IUPAC letters, either case). */
typedef struct {
    const char *guide, *pam;
    size_t glen, qlen;
    sm_pam_side side;
    uint32_t k, dna, rna;
    unsigned flags;             /* SM_FLAG_TEXT_IUPAC */
    int forward, reverse;       /* strands searched */
} goracle_query;

/* Appends every site of the query in text[0, n) to out, in (start, end,
   '+' before '-') order. Returns 0, or -1 when out of memory. */
int goracle_sites_find(const goracle_query *q, const char *text, size_t n, goracle_sites *out);
/* The same as hits of (record, pattern), appended to hits. */
int goracle_hits(const goracle_query *q, const char *text, size_t n, uint64_t record, uint32_t pattern,
                 tu_hits *hits);
void goracle_sites_free(goracle_sites *s);

#endif /* SM_GUIDE_ORACLE_H */
