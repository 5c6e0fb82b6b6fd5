/* The CPU backend's overlap-free modes for DFA-only databases (exact
 * matching, every pattern on the automaton): segments are scanned with no
 * overlap, each from its true DFA state, so every hit ends inside the
 * segment that reports it. */
#include <stdlib.h>

#include "backends/cpu/cpu_backend.h"

int sm_cpu_overlap_free_open(cpu_backend *c, sm_error *err) {
    const sm_db *db = c->runner->db;
    if (c->speculate) {
        if (sm_engine_set_init(&c->spec[0], db, NULL) != SM_OK || sm_engine_set_init(&c->spec[1], db, NULL) != SM_OK)
            return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return SM_OK;
    }
    const sm_db_section *e = &sm_db_sections(db)[0];
    sm_section sec = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
    c->chunker = sm_engine_for_kind(e->kind)->chunker_new(&sec, err);
    return c->chunker ? SM_OK : (err ? err->code : SM_ERR_NOMEM);
}

void sm_cpu_overlap_free_close(cpu_backend *c) {
    if (c->chunker) sm_engine_for_kind(sm_db_sections(c->runner->db)[0].kind)->chunker_free(c->chunker);
    c->chunker = NULL;
    sm_engine_set_free(&c->spec[0]);
    sm_engine_set_free(&c->spec[1]);
    free(c->fixes.hits);
    free(c->cuts);
    free(c->states);
}

/* Prefix mode: the true DFA state at the start of every segment, record by
   record, from the engine's chunk composition (each chunk simulated from
   all states in parallel, the maps composed by a parallel prefix scan). A
   record's first segment starts at the root; one that goes on from the
   previous batch starts where that batch left it. */
int sm_cpu_start_states(cpu_backend *c, sm_batch *b) {
    const sm_engine_ops *ops = sm_engine_set_dfa(&c->workers[0].engines)->ops;
    sm_segment *segs = b->segs;
    size_t i = 0;
    while (i < b->nsegs) {
        size_t j = i + 1;
        while (j < b->nsegs && segs[j].record == segs[i].record) j++;
        size_t chunks = j - i;
        if (chunks + 1 > c->cuts_cap) {
            size_t cap = (chunks + 1) * 2;
            size_t *cu = realloc(c->cuts, cap * sizeof *cu);
            if (!cu) return SM_ERR_NOMEM;
            c->cuts = cu;
            uint32_t *st = realloc(c->states, cap * sizeof *st);
            if (!st) return SM_ERR_NOMEM;
            c->states = st;
            c->cuts_cap = cap;
        }
        size_t base = segs[i].buf_off;
        for (size_t k = 0; k < chunks; k++) c->cuts[k] = segs[i + k].buf_off - base;
        c->cuts[chunks] = segs[j - 1].buf_off + segs[j - 1].scan_len - base;
        uint32_t first = segs[i].pos0 == 0 ? 0 : c->carry_state;
        if (ops->chunk_states(c->chunker, first, b->buf + base, c->cuts, chunks, c->threads, c->states, NULL) != SM_OK)
            return SM_ERR_NOMEM;
        for (size_t k = 0; k < chunks; k++) segs[i + k].start_state = c->states[k];
        c->carry_state = c->states[chunks];
        i = j;
    }
    return SM_OK;
}

/* Speculation: every segment was scanned from the root, which finds
   exactly its hits that start inside it. Its true start state is the true
   end state of the segment before; from there the DFA is run again, in
   step with a run from the root, until both are in the same state (for the
   dictionary automaton at most the longest pattern's length later, usually
   much sooner): the hits of that re-scan that start before the segment are
   the ones the speculation missed. Past that point the runs agree, so the
   segment's end state is exact. */
int sm_cpu_verify_speculation(cpu_backend *c, sm_batch *b) {
    const sm_engine_slot *run = sm_engine_set_dfa(&c->spec[0]), *spec = sm_engine_set_dfa(&c->spec[1]);
    cpu_batch *cb = &c->batches[b->index];
    c->fixes.n = 0;
    c->fixes.failed = 0;
    c->fixes.counts = NULL;
    sm_sink none = {0};
    none.own_lo = 1, none.own_hi = 0; /* owns nothing */
    for (size_t i = 0; i < b->nsegs; i++) {
        sm_segment *s = &b->segs[i];
        cpu_seg *x = &cb->res[i];
        uint32_t truth = s->pos0 == 0 ? 0 : c->carry_state;
        x->fix_lo = c->fixes.n;
        uint32_t end = x->end_state;
        if (truth != 0) {
            uint32_t a = truth, root = 0; /* root: the speculative run */
            size_t k = 0;
            c->fixes.own_lo = 0;
            c->fixes.own_hi = s->pos0;
            const uint8_t *text = b->buf + s->buf_off;
            run->ops->set_dfa_state(run->state, a);
            spec->ops->set_dfa_state(spec->state, root);
            while (k < s->scan_len && a != root) {
                run->ops->scan(&run->section, run->state, text + k, 1, s->pos0 + k, &c->fixes);
                spec->ops->scan(&spec->section, spec->state, text + k, 1, s->pos0 + k, &none);
                a = run->ops->dfa_state(run->state);
                root = spec->ops->dfa_state(spec->state);
                k++;
            }
            if (a != root) end = a; /* never met: the re-scan covered the whole segment */
        }
        x->fix_hi = c->fixes.n;
        if (c->fixes.failed) return SM_ERR_NOMEM;
        c->carry_state = end;
    }
    /* The fixes array is complete (it no longer moves): point the segments at it. */
    for (size_t i = 0; i < b->nsegs; i++) {
        b->segs[i].fixes = c->fixes.hits ? c->fixes.hits + cb->res[i].fix_lo : NULL;
        b->segs[i].nfixes = cb->res[i].fix_hi - cb->res[i].fix_lo;
    }
    return SM_OK;
}
