/* A thread's engines for one database: see engine_set.h. */
#include <stdlib.h>

#include "core/engine_set.h"

static void free_slots(sm_engine_set *set) {
    for (uint32_t i = 0; i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        if (sl->state) sl->ops->state_free(sl->state);
        free(sl->visits);
    }
    free(set->slots);
    set->slots = NULL;
    set->count = 0;
}

static int make_slots(sm_engine_set *set, const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    const sm_db_section *dir = sm_db_sections(db);
    set->slots = calloc(h->section_count ? h->section_count : 1, sizeof *set->slots);
    if (!set->slots) return SM_ERR_NOMEM;
    set->count = h->section_count;
    sm_cpu_features cpu;
    sm_cpu_capped(set->variant.max_level, &cpu);
    sm_state_env env = {&cpu, &set->variant};
    for (uint32_t i = 0; i < h->section_count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        /* The loader refused kinds this build does not know. */
        sl->ops = sm_engine_for_kind(dir[i].kind);
        sl->section.bytes = db->bytes + dir[i].offset;
        sl->section.size = dir[i].size;
        sl->section.patterns = sm_db_patterns(db);
        sl->state = sl->ops->state_new(&sl->section, &env);
        if (!sl->state) {
            free_slots(set);
            return SM_ERR_NOMEM;
        }
    }
    return SM_OK;
}

int sm_engine_set_init(sm_engine_set *set, const sm_db *db, const sm_variant *variant) {
    memset(set, 0, sizeof *set);
    if (variant) set->variant = *variant;
    int rc = make_slots(set, db);
    if (rc == SM_OK) sm_engine_set_reset(set);
    return rc;
}

void sm_engine_set_free(sm_engine_set *set) {
    free_slots(set);
    sm_results_free(&set->results);
}

void sm_results_free(sm_results *res) {
    for (uint32_t i = 0; i < res->count; i++)
        if (res->tables[i]) res->frees[i](res->tables[i]);
    free(res->tables);
    free(res->frees);
    memset(res, 0, sizeof *res);
}

/* The tables of the first section whose engine resolves edit ends (made now). */
static int resolver(sm_results *res, const sm_db *db, const sm_engine_ops **ops, void **table) {
    if (res->db != db || res->checksum != sm_db_head(db)->checksum || res->count != sm_db_head(db)->section_count) {
        sm_results_free(res);
        uint32_t n = sm_db_head(db)->section_count;
        res->tables = calloc(n ? n : 1, sizeof *res->tables);
        res->frees = calloc(n ? n : 1, sizeof *res->frees);
        if (!res->tables || !res->frees) {
            sm_results_free(res);
            return SM_ERR_NOMEM;
        }
        res->db = db;
        res->checksum = sm_db_head(db)->checksum;
        res->count = n;
    }
    *ops = NULL;
    for (uint32_t i = 0; i < res->count; i++) {
        const sm_engine_ops *e = sm_engine_for_kind(sm_db_sections(db)[i].kind);
        if (!e->resolve) continue;
        if (!res->tables[i] && !(res->tables[i] = e->results_new())) return SM_ERR_NOMEM;
        res->frees[i] = e->results_free;
        *ops = e;
        *table = res->tables[i];
        return SM_OK;
    }
    return SM_OK;
}

static int event_before(const void *pa, const void *pb) {
    const sm_rawhit *a = pa, *b = pb;
    if (a->pattern != b->pattern) return a->pattern < b->pattern ? -1 : 1;
    if (a->reverse != b->reverse) return (int)a->reverse - (int)b->reverse;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    return (int)a->errors - (int)b->errors;
}

int sm_results_settle(sm_results *res, const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                      uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders) {
    const sm_db_header *h = sm_db_head(db);
    if (sink->n <= from) return SM_OK;
    sm_rawhit *x = sink->hits;
    if (h->match == SM_MATCH_EDITS) {
        /* Hits with a start first (exact sections), then the end events. */
        size_t mid = from;
        for (size_t i = from; i < sink->n; i++)
            if (x[i].start != SM_START_UNKNOWN) {
                sm_rawhit t = x[mid];
                x[mid++] = x[i];
                x[i] = t;
            }
        if (sink->n > mid) {
            /* An end found through several anchors keeps its least distance. */
            qsort(x + mid, sink->n - mid, sizeof *x, event_before);
            size_t out = mid;
            for (size_t i = mid; i < sink->n; i++)
                if (out == mid || x[i].end != x[out - 1].end || x[i].pattern != x[out - 1].pattern ||
                    x[i].reverse != x[out - 1].reverse)
                    x[out++] = x[i];
            sink->n = out;
            const sm_engine_ops *ops;
            void *table = NULL;
            if (resolver(res, db, &ops, &table) != SM_OK) return SM_ERR_NOMEM;
            if (ops) {
                int rc = ops->resolve(db, table, sink, mid, text, len, pos0, first_end, last_end, borders);
                if (rc != SM_OK) return rc;
            } else {
                sink->n = mid; /* no engine to resolve them: only a crafted database */
            }
        }
    } else if (sm_db_filters_pam(h)) {
        for (uint32_t i = 0; i < h->section_count; i++) {
            const sm_engine_ops *ops = sm_engine_for_kind(sm_db_sections(db)[i].kind);
            if (ops->filter) {
                ops->filter(db, sink, from, text, len, pos0);
                break;
            }
        }
    }
    if (sink->n > from) sm_sort_hits(sink->hits + from, sink->n - from);
    return SM_OK;
}

int sm_engine_set_hits(sm_engine_set *set, const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text,
                       size_t len, uint64_t pos0, uint64_t first_end, uint64_t last_end, sm_run_list *borders) {
    return sm_results_settle(&set->results, db, sink, from, text, len, pos0, first_end, last_end, borders);
}

int sm_engine_set_bind(sm_engine_set *set, const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    const sm_db_section *dir = sm_db_sections(db);
    int fits = set->count == h->section_count;
    for (uint32_t i = 0; fits && i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        sm_section s = {db->bytes + dir[i].offset, dir[i].size, sm_db_patterns(db)};
        fits = sl->ops->kind == dir[i].kind && sl->ops->state_fits(&s, sl->state);
        /* Visit counters were sized for the old section. */
        if (fits && sl->visits && (!sl->ops->visit_counters || sl->ops->visit_counters(&s) > sl->nvisits)) fits = 0;
    }
    if (fits) {
        for (uint32_t i = 0; i < set->count; i++) {
            sm_engine_slot *sl = &set->slots[i];
            sl->section.bytes = db->bytes + dir[i].offset;
            sl->section.size = dir[i].size;
            sl->section.patterns = sm_db_patterns(db);
        }
    } else {
        free_slots(set);
        if (make_slots(set, db) != SM_OK) return SM_ERR_NOMEM;
    }
    sm_engine_set_reset(set);
    return SM_OK;
}

void sm_engine_set_reset(sm_engine_set *set) {
    for (uint32_t i = 0; i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        sl->ops->state_reset(&sl->section, sl->state);
    }
}

int sm_engine_set_counting(sm_engine_set *set) {
    for (uint32_t i = 0; i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        if (sl->visits || !sl->ops->visit_counters) continue;
        size_t n = sl->ops->visit_counters(&sl->section);
        if (!n) continue;
        sl->visits = calloc(n, sizeof *sl->visits);
        if (!sl->visits) return SM_ERR_NOMEM;
        sl->nvisits = n;
    }
    return SM_OK;
}

void sm_engine_set_fold(sm_engine_set *set, uint64_t *counts) {
    for (uint32_t i = 0; i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        if (sl->visits) sl->ops->fold_visits(&sl->section, sl->visits, counts);
    }
}

void sm_engine_set_scan(sm_engine_set *set, const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    for (uint32_t i = 0; i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        sink->visits = sink->counts ? sl->visits : NULL;
        sl->ops->scan(&sl->section, sl->state, text, len, pos0, sink);
    }
    sink->visits = NULL;
}

void sm_engine_set_finish(sm_engine_set *set, uint64_t end_pos, sm_sink *sink) {
    for (uint32_t i = 0; i < set->count; i++) {
        sm_engine_slot *sl = &set->slots[i];
        if (sl->ops->finish) sl->ops->finish(&sl->section, sl->state, end_pos, sink);
    }
}

int sm_db_is_dfa_only(const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    if (h->match != SM_MATCH_EXACT || h->section_count != 1) return 0;
    const sm_engine_ops *ops = sm_engine_for_kind(sm_db_sections(db)[0].kind);
    return ops && ops->dfa_state != NULL;
}

const sm_engine_slot *sm_engine_set_dfa(const sm_engine_set *set) {
    if (set->count != 1 || !set->slots[0].ops->dfa_state) return NULL;
    return &set->slots[0];
}
