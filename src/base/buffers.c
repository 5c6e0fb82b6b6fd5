/* Growable buffers, hit sinks, hit ordering and aligned allocation. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <stdlib.h>
#include <sys/mman.h>

#include "base/internal.h"

void sm_advise_huge_pages(void *p, size_t size) {
#ifdef MADV_HUGEPAGE
    const size_t HUGE_PAGE = (size_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p, (void)size;
#endif
}

void *sm_aligned_alloc(size_t size) {
    void *p = NULL;
    if (size == 0) size = SM_DB_ALIGN;
    if (posix_memalign(&p, SM_DB_ALIGN, size) != 0) return NULL;
    /* Large databases (a k-mer hash table of 10^6 keys is 32 MiB) are probed
       at random; on 4 KiB pages nearly every probe also misses the TLB. */
    if (size >= ((size_t)8 << 20)) sm_advise_huge_pages(p, size);
    return p;
}

void sm_aligned_free(void *p) { free(p); }

int sm_buf_reserve(sm_buf *b, size_t extra) {
    if (extra > SIZE_MAX - b->len) return SM_ERR_NOMEM;
    size_t need = b->len + extra;
    if (need <= b->cap) return SM_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) return SM_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return SM_OK;
}

int sm_buf_append(sm_buf *b, const void *p, size_t n) {
    if (n == 0) return SM_OK;
    if (sm_buf_reserve(b, n) != SM_OK) return SM_ERR_NOMEM;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return SM_OK;
}

int sm_buf_align(sm_buf *b, size_t align) {
    size_t pad = (align - b->len % align) % align;
    if (sm_buf_reserve(b, pad) != SM_OK) return SM_ERR_NOMEM;
    memset(b->data + b->len, 0, pad);
    b->len += pad;
    return SM_OK;
}

void sm_buf_free(sm_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int sm_sink_grow(sm_sink *sink) {
    if (sink->failed || sink->overflow) return -1;
    if (sink->limit && sink->cap >= sink->limit) {
        sink->overflow = 1;
        return -1;
    }
    size_t cap = sink->cap ? sink->cap * 2 : 1024;
    if (sink->limit && cap > sink->limit) cap = sink->limit;
    if (cap > SIZE_MAX / sizeof(sm_rawhit)) {
        sink->failed = 1;
        return -1;
    }
    sm_rawhit *p = realloc(sink->hits, cap * sizeof *p);
    if (!p) {
        sink->failed = 1;
        return -1;
    }
    sink->hits = p;
    sink->cap = cap;
    return 0;
}

static int compare_hits(const void *pa, const void *pb) { return sm_rawhit_cmp(pa, pb); }

/* Orders hits that share a start (few: the patterns matching at one place). */
static void insertion_sort(sm_rawhit *hits, size_t n) {
    for (size_t i = 1; i < n; i++) {
        sm_rawhit x = hits[i];
        size_t j = i;
        while (j > 0 && sm_rawhit_cmp(&x, &hits[j - 1]) < 0) {
            hits[j] = hits[j - 1];
            j--;
        }
        hits[j] = x;
    }
}

typedef enum { BY_START, BY_END, BY_OUTPUT } sort_key;

static inline uint64_t key_value(const sm_rawhit *h, sort_key key) {
    return key == BY_START ? h->start : key == BY_END ? h->end : (uint64_t)h->pattern * 2 + h->reverse;
}

/* Stable LSD radix sort on a key's value - lo (< 2^32), 11 bits a pass. */
static int radix_sort_by(sm_rawhit *hits, size_t n, sort_key key, uint64_t lo, uint64_t span) {
    sm_rawhit *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return -1;
    sm_rawhit *src = hits, *dst = tmp;
    for (unsigned shift = 0; shift < 33 && (shift == 0 || (span >> shift) != 0); shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++) count[((key_value(&src[i], key) - lo) >> shift) & 2047]++;
        size_t sum = 0;
        for (size_t b = 0; b < 2048; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[((key_value(&src[i], key) - lo) >> shift) & 2047]++] = src[i];
        sm_rawhit *t = src;
        src = dst;
        dst = t;
    }
    if (src != hits) memcpy(hits, src, n * sizeof *hits);
    free(tmp);
    return 0;
}

static int radix_sort_by_start(sm_rawhit *hits, size_t n, uint64_t lo, uint64_t span) {
    return radix_sort_by(hits, n, BY_START, lo, span);
}

static int event_before(const sm_rawhit *a, const sm_rawhit *b) {
    if (a->pattern != b->pattern) return a->pattern < b->pattern;
    if (a->reverse != b->reverse) return a->reverse < b->reverse;
    return a->end < b->end;
}

static int compare_events(const void *pa, const void *pb) {
    const sm_rawhit *a = pa, *b = pb;
    if (event_before(a, b)) return -1;
    if (event_before(b, a)) return 1;
    return 0;
}

void sm_sort_events(sm_rawhit *ev, size_t n) {
    size_t i = 1;
    while (i < n && !event_before(&ev[i], &ev[i - 1])) i++;
    if (i >= n) return;
    /* The engines report ends in order, often for few keys: a stable pass
       by key on ends already in order is linear. */
    int ends_sorted = 1;
    uint64_t elo = UINT64_MAX, ehi = 0, klo = UINT64_MAX, khi = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t e = ev[j].end, k = key_value(&ev[j], BY_OUTPUT);
        if (j > 0 && e < ev[j - 1].end) ends_sorted = 0;
        if (e < elo) elo = e;
        if (e > ehi) ehi = e;
        if (k < klo) klo = k;
        if (k > khi) khi = k;
    }
    if (n < 256 || ehi - elo > UINT32_MAX || khi - klo > UINT32_MAX ||
        (!ends_sorted && radix_sort_by(ev, n, BY_END, elo, ehi - elo) != 0) ||
        radix_sort_by(ev, n, BY_OUTPUT, klo, khi - klo) != 0)
        qsort(ev, n, sizeof *ev, compare_events);
}

#define MERGE_RUNS 8

/* Merges the sorted runs hits[at[r], at[r + 1]) (runs of them) through a
   buffer. Returns -1 when out of memory. */
static int merge_runs(sm_rawhit *hits, size_t n, size_t *at, size_t runs) {
    sm_rawhit *out = malloc(n * sizeof *out);
    if (!out) return -1;
    size_t head[MERGE_RUNS];
    for (size_t r = 0; r < runs; r++) head[r] = at[r];
    for (size_t o = 0; o < n; o++) {
        size_t best = runs;
        for (size_t r = 0; r < runs; r++)
            if (head[r] < at[r + 1] && (best == runs || sm_rawhit_cmp(&hits[head[r]], &hits[head[best]]) < 0)) best = r;
        out[o] = hits[head[best]++];
    }
    memcpy(hits, out, n * sizeof *hits);
    free(out);
    return 0;
}

void sm_sort_hits(sm_rawhit *hits, size_t n) {
    /* Engines report in order of end position, which is often already the
       final order (one strand, equal lengths): check before sorting. A few
       sorted runs (k-edit hits of a few patterns and strands, each in
       order) are merged. */
    size_t at[MERGE_RUNS + 1], runs = 1;
    at[0] = 0;
    for (size_t i = 1; i < n && runs <= MERGE_RUNS; i++)
        if (sm_rawhit_cmp(&hits[i], &hits[i - 1]) < 0) {
            if (runs < MERGE_RUNS) at[runs] = i;
            runs++;
        }
    if (runs == 1) return;
    at[runs <= MERGE_RUNS ? runs : MERGE_RUNS] = n;
    if (runs <= MERGE_RUNS && merge_runs(hits, n, at, runs) == 0) return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t j = 0; j < n; j++) {
        if (hits[j].start < lo) lo = hits[j].start;
        if (hits[j].start > hi) hi = hits[j].start;
    }
    if (n < 256 || hi - lo > UINT32_MAX || radix_sort_by_start(hits, n, lo, hi - lo) != 0) {
        qsort(hits, n, sizeof *hits, compare_hits);
        return;
    }
    /* Equal starts are now adjacent; order each such group by the other keys. */
    size_t group = 0;
    for (size_t j = 1; j <= n; j++) {
        if (j == n || hits[j].start != hits[group].start) {
            size_t g = j - group;
            if (g > 32) qsort(hits + group, g, sizeof *hits, compare_hits);
            else if (g > 1) insertion_sort(hits + group, g);
            group = j;
        }
    }
}
