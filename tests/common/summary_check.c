#include "summary_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_init(sc_summaries *s) { memset(s, 0, sizeof *s); }

void sc_free(sc_summaries *s) {
    for (size_t i = 0; i < s->n; i++) free(s->items[i].patterns);
    free(s->items);
    memset(s, 0, sizeof *s);
}

int sc_collect(const sm_record_summary *summary, void *ctx) {
    sc_summaries *s = ctx;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        sc_record *p = realloc(s->items, cap * sizeof *p);
        if (!p) abort();
        s->items = p;
        s->cap = cap;
    }
    if (summary->record != s->n) s->order_errors++;
    for (size_t i = 1; i < summary->npatterns; i++)
        if (summary->patterns[i - 1].pattern >= summary->patterns[i].pattern) s->order_errors++;
    sc_record *r = &s->items[s->n++];
    r->record = summary->record;
    r->hits = summary->hits;
    r->npatterns = summary->npatterns;
    r->patterns = malloc((summary->npatterns ? summary->npatterns : 1) * sizeof *r->patterns);
    if (!r->patterns) abort();
    if (summary->npatterns) memcpy(r->patterns, summary->patterns, summary->npatterns * sizeof *r->patterns);
    return s->stop_after && s->n >= s->stop_after;
}

int sc_check(const sc_summaries *got, const tu_hits *hits, size_t nrec, uint32_t patterns, char *why, size_t whysize) {
    if (got->order_errors) {
        snprintf(why, whysize, "%u summaries out of order", got->order_errors);
        return 0;
    }
    if (got->n != nrec) {
        snprintf(why, whysize, "%zu summaries for %zu records", got->n, nrec);
        return 0;
    }
    uint64_t *count = calloc(nrec ? nrec : 1, sizeof *count);
    uint32_t *least = malloc((nrec ? nrec : 1) * (patterns ? patterns : 1) * sizeof *least);
    if (!count || !least) abort();
    memset(least, 0xff, (nrec ? nrec : 1) * (patterns ? patterns : 1) * sizeof *least);
    for (size_t i = 0; i < hits->n; i++) {
        const tu_hit *h = &hits->items[i];
        if (h->record >= nrec || h->pattern >= patterns) continue;
        count[h->record]++;
        uint32_t *l = &least[h->record * patterns + h->pattern];
        if (h->errors < *l) *l = h->errors;
    }
    int ok = 1;
    for (size_t r = 0; r < nrec && ok; r++) {
        const sc_record *g = &got->items[r];
        if (g->hits != count[r]) {
            snprintf(why, whysize, "record %zu: %llu hits, expected %llu", r, (unsigned long long)g->hits,
                     (unsigned long long)count[r]);
            ok = 0;
            break;
        }
        size_t k = 0;
        for (uint32_t p = 0; p < patterns && ok; p++) {
            uint32_t want = least[r * patterns + p];
            if (want == UINT32_MAX) continue;
            if (k >= g->npatterns || g->patterns[k].pattern != p || g->patterns[k].errors != want) {
                snprintf(why, whysize, "record %zu: pattern %u expected with %u errors, got %s %u/%u", r, p, want,
                         k < g->npatterns ? "entry" : "no entry", k < g->npatterns ? g->patterns[k].pattern : 0,
                         k < g->npatterns ? g->patterns[k].errors : 0);
                ok = 0;
            }
            k++;
        }
        if (ok && k != g->npatterns) {
            snprintf(why, whysize, "record %zu: %zu patterns, expected %zu", r, g->npatterns, k);
            ok = 0;
        }
    }
    free(count);
    free(least);
    return ok;
}
