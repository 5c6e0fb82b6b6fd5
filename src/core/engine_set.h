/* The engines of one database for one thread: a slot per section of the
 * database, each with its engine (found through the registry), its scan
 * state and, when counting, its visit counters. Block scans, streams and
 * every backend's CPU side scan through this one set. */
#ifndef SM_ENGINE_SET_H
#define SM_ENGINE_SET_H

#include "base/internal.h"
#include "engines/engine.h"

typedef struct {
    const sm_engine_ops *ops;
    sm_section section;
    void *state;
    uint32_t *visits;      /* count mode: the engine's counters (sm_engine_set_counting) */
    size_t nvisits;
} sm_engine_slot;

/* What turns a scanned stretch's raw results into hits, for one thread:
   the approximate engines' per-thread tables (start recovery), made on
   first use for the database given. Block scans keep one in their engine
   set; a runner keeps one per thread of its team (src/runner/settle.c). */
typedef struct {
    const sm_db *db;       /* what the tables were made for (compared, never read: it may be gone) */
    uint32_t checksum;     /* and its checksum, should another database come at the same address */
    void **tables;         /* per section: its engine's results_new(), or NULL */
    void (**frees)(void *);/* and the engine's results_free */
    uint32_t count;
} sm_results;

void sm_results_free(sm_results *res);
/* The hits of a scanned stretch, from the raw results in
   sink->hits[from, sink->n): k-edit end events (start SM_START_UNKNOWN;
   several events of one end keep the least distance) resolved into hits,
   runs touching first_end or last_end going to borders; k-mismatch windows
   filtered for a PAM; hits whose start is known kept; then sorted. Through
   the approximate engines' operations (resolve, filter). text[0, len) at
   pos0 is the stretch. SM_OK or SM_ERR_NOMEM. */
int sm_results_settle(sm_results *res, const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                      uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders);

typedef struct {
    sm_engine_slot *slots;
    uint32_t count;
    sm_variant variant;    /* the loops asked for (zero: the CPU's best) */
    sm_results results;    /* block scans: their raw results settled (sm_engine_set_hits) */
} sm_engine_set;

/* Makes a state for every section of db. variant may be NULL. Returns SM_OK
   or SM_ERR_NOMEM (set left empty). */
int sm_engine_set_init(sm_engine_set *set, const sm_db *db, const sm_variant *variant);
void sm_engine_set_free(sm_engine_set *set);
/* Points the set at db, keeping the states when they fit its sections (the
   same engines in the same order, each state large enough), else making
   new ones; then resets. Returns SM_OK or SM_ERR_NOMEM. */
int sm_engine_set_bind(sm_engine_set *set, const sm_db *db);
/* Back to the start of a sequence. */
void sm_engine_set_reset(sm_engine_set *set);
/* Count mode: allocates the engines' visit counters (once). SM_ERR_NOMEM. */
int sm_engine_set_counting(sm_engine_set *set);
/* Adds the visit counters to counts (per pattern) and zeroes them. */
void sm_engine_set_fold(sm_engine_set *set, uint64_t *counts);

/* sm_results_settle with the set's own tables. */
int sm_engine_set_hits(sm_engine_set *set, const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text,
                       size_t len, uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders);

/* Runs every engine over text[0, len), whose first byte is at absolute
   position pos0; hits go to sink. In count mode (sink->counts) engines with
   counters count into them. */
void sm_engine_set_scan(sm_engine_set *set, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink);
/* Ends a scanned stretch whose last byte is at end_pos - 1. */
void sm_engine_set_finish(sm_engine_set *set, uint64_t end_pos, sm_sink *sink);

/* The one engine of a database whose only section is a DFA (exact matching
   with every pattern on the automaton): what overlap-free chunking and the
   GPU's automaton kernel need. NULL otherwise. */
const sm_engine_slot *sm_engine_set_dfa(const sm_engine_set *set);
/* 1 when db is such a database. */
int sm_db_is_dfa_only(const sm_db *db);

#endif /* SM_ENGINE_SET_H */
