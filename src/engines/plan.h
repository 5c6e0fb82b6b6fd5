/* The planner: which engine takes which patterns, and the building of their
 * sections. The core (src/core/compile.c) checks and normalises the
 * patterns, hands them here, and assembles the sections the planner returns
 * into a database. */
#ifndef SM_PLAN_H
#define SM_PLAN_H

#include "engines/engine.h"

typedef struct {
    const uint8_t *seq;  /* normalised: dna upper case with U as T; text as given */
    uint32_t len;
    const char *name;    /* as given (NULL: none), for messages */
    const char *given;   /* the sequence as given, given_len bytes, for messages */
    size_t given_len;
    uint32_t section;    /* out: index of the section that scans it */
} sm_plan_pattern;

typedef struct {
    uint32_t kind;       /* SM_SECTION_* */
    uint32_t patterns;   /* how many patterns it scans */
    sm_buf bytes;
} sm_plan_section;

typedef struct {
    sm_plan_section *sections;
    size_t count;
    sm_build_report_info report;
} sm_plan;

/* Plans and builds the sections for n patterns under options o (already
   checked and normalised by the core: flags and strands as the database
   will hold them). Sets every pattern's section. */
int sm_plan_build(sm_plan_pattern *patterns, size_t n, const sm_compile_options *o, unsigned flags,
                  sm_strands strands, const sm_build_tuning *tuning, sm_plan *plan, sm_error *err);
void sm_plan_free(sm_plan *plan);

#endif /* SM_PLAN_H */
