/* Ordered delivery of k-edit hits (ordered.h). */
#include <stdlib.h>

#include "runner/ordered.h"
#include "runner/runner_internal.h"

void sm_held_free(sm_held *h) {
    free(h->v);
    free(h->spare);
    memset(h, 0, sizeof *h);
}

static int grow(sm_held_hit **list, size_t *cap, size_t n) {
    if (n < *cap) return SM_OK;
    size_t grown = *cap ? *cap * 2 : 256;
    sm_held_hit *p = realloc(*list, grown * sizeof *p);
    if (!p) return SM_ERR_NOMEM;
    *list = p;
    *cap = grown;
    return SM_OK;
}

int sm_held_push(sm_held *h, const sm_rawhit *x, const uint8_t *text) {
    if (grow(&h->v, &h->cap, h->n) != SM_OK) return SM_ERR_NOMEM;
    h->v[h->n].hit = *x;
    h->v[h->n].text = text;
    h->n++;
    return SM_OK;
}

static int held_cmp(const void *pa, const void *pb) {
    return sm_rawhit_cmp(&((const sm_held_hit *)pa)->hit, &((const sm_held_hit *)pb)->hit);
}

void sm_held_sort(sm_held *h) {
    if (h->n > 1) qsort(h->v, h->n, sizeof *h->v, held_cmp);
}

int sm_held_add(sm_held *h, const sm_rawhit *x, const uint8_t *text) {
    if (grow(&h->v, &h->cap, h->n) != SM_OK) return SM_ERR_NOMEM;
    size_t i = h->n;
    while (i > 0 && sm_rawhit_cmp(x, &h->v[i - 1].hit) < 0) i--;
    if (i < h->n) memmove(h->v + i + 1, h->v + i, (h->n - i) * sizeof *h->v);
    h->v[i].hit = *x;
    h->v[i].text = text;
    h->n++;
    return SM_OK;
}

int sm_held_release(sm_held *h, uint64_t bound, sm_held_emit emit, void *ctx) {
    size_t k = 0;
    int rc = SM_OK;
    while (k < h->n && h->v[k].hit.start < bound && rc == SM_OK) {
        rc = emit(ctx, &h->v[k].hit, h->v[k].text);
        k++;
    }
    if (k && k < h->n) memmove(h->v, h->v + k, (h->n - k) * sizeof *h->v);
    h->n -= k;
    return rc;
}

int sm_held_merge(sm_held *h, const sm_rawhit *hits, size_t n, const uint8_t *base, uint64_t pos0, sm_held *more,
                  uint64_t bound, sm_held_emit emit, void *ctx) {
    size_t a = 0, b = 0, c = 0, kept = 0;
    size_t nmore = more ? more->n : 0;
    for (;;) {
        const sm_rawhit *x = NULL;
        const uint8_t *text = NULL;
        int from = 0;
        if (a < h->n) x = &h->v[a].hit, text = h->v[a].text, from = 1;
        if (b < n && (!x || sm_rawhit_cmp(&hits[b], x) < 0)) x = &hits[b], from = 2;
        if (c < nmore && (!x || sm_rawhit_cmp(&more->v[c].hit, x) < 0)) x = &more->v[c].hit, from = 3;
        if (!x) break;
        if (from == 1) a++;
        else if (from == 2) text = sm_segment_text(base, pos0, x->start), b++;
        else text = more->v[c++].text;
        if (x->start < bound) {
            int rc = emit(ctx, x, text);
            if (rc != SM_OK) return rc;
        } else {
            if (grow(&h->spare, &h->spare_cap, kept) != SM_OK) return SM_ERR_NOMEM;
            h->spare[kept].hit = *x;
            h->spare[kept].text = text;
            kept++;
        }
    }
    sm_held_hit *t = h->v;
    size_t cap = h->cap;
    h->v = h->spare;
    h->cap = h->spare_cap;
    h->n = kept;
    h->spare = t;
    h->spare_cap = cap;
    if (more) more->n = 0;
    return SM_OK;
}

int sm_open_run_join(sm_open_run *run, const sm_open_run *prev) {
    if (prev->pattern != run->pattern || prev->reverse != run->reverse || !run->touches_left || !prev->touches_right ||
        prev->last_end + 1 != run->first_end)
        return 0;
    int take_prev = prev->best_distance <= run->best_distance;
    if (take_prev) {
        run->best_end = prev->best_end;
        run->best_start = prev->best_start;
        run->best_distance = prev->best_distance;
    }
    run->first_end = prev->first_end;
    return take_prev ? 2 : 1;
}
