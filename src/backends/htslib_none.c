/* libseqmatch.a loads nothing at run time (a user's static program must
 * link without the dynamic loader), so it writes no BAM: the shared library
 * and the command do (htslib_open.c). */
#include <stdio.h>

#include "output/output.h"

int sm_htslib_load(const char *const *names, size_t n, void **syms, char *why, size_t why_size) {
    (void)names;
    (void)n;
    (void)syms;
    snprintf(why, why_size, "the static libseqmatch.a loads no htslib: link libseqmatch.so for BAM output");
    return -1;
}
