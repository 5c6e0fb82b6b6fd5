#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ PRNG */

void tu_rng_seed(tu_rng *rng, uint64_t seed) { rng->state = seed; }

uint64_t tu_rng_next(tu_rng *rng) {
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t tu_rng_below(tu_rng *rng, uint32_t n) { return (uint32_t)(tu_rng_next(rng) % n); }

uint32_t tu_rng_range(tu_rng *rng, uint32_t lo, uint32_t hi) {
    return lo + (uint32_t)(tu_rng_next(rng) % ((uint64_t)hi - lo + 1));
}

int tu_rng_chance(tu_rng *rng, unsigned percent) { return tu_rng_below(rng, 100) < percent; }

uint64_t tu_seed_from_env(uint64_t fallback) {
    const char *s = getenv("SM_TEST_SEED");
    uint64_t seed = fallback;
    if (s && *s) seed = strtoull(s, NULL, 0);
    printf("seed %llu (set SM_TEST_SEED to repeat)\n", (unsigned long long)seed);
    return seed;
}

unsigned tu_scaled(unsigned n) {
    const char *s = getenv("SM_TEST_SCALE");
    if (!s || !*s) return n;
    unsigned long percent = strtoul(s, NULL, 10);
    unsigned long scaled = (unsigned long)n * percent / 100;
    return scaled ? (unsigned)scaled : 1;
}

/* ------------------------------------------------------------ generators */

void tu_random_dna(tu_rng *rng, char *out, size_t n) {
    static const char acgt[4] = {'A', 'C', 'G', 'T'};
    for (size_t i = 0; i < n; i++) out[i] = acgt[tu_rng_next(rng) & 3];
}

void tu_random_iupac(tu_rng *rng, char *out, size_t n, unsigned iupac_percent, unsigned lower_percent) {
    static const char codes[] = "RYSWKMBDHVN";
    for (size_t i = 0; i < n; i++) {
        char c;
        if (tu_rng_chance(rng, iupac_percent))
            c = codes[tu_rng_below(rng, (uint32_t)(sizeof codes - 1))];
        else
            c = "ACGT"[tu_rng_next(rng) & 3];
        if (tu_rng_chance(rng, lower_percent)) c = (char)(c - 'A' + 'a');
        out[i] = c;
    }
}

void tu_random_from(tu_rng *rng, char *out, size_t n, const char *alphabet) {
    uint32_t k = (uint32_t)strlen(alphabet);
    for (size_t i = 0; i < n; i++) out[i] = alphabet[tu_rng_below(rng, k)];
}

void tu_random_bytes(tu_rng *rng, char *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = (char)(tu_rng_next(rng) & 0xff);
}

/* -------------------------------------------------------------- hit lists */

void tu_hits_init(tu_hits *list) { memset(list, 0, sizeof *list); }
void tu_hits_clear(tu_hits *list) { list->n = 0; list->out_of_memory = 0; }
void tu_hits_free(tu_hits *list) {
    free(list->items);
    memset(list, 0, sizeof *list);
}

void tu_hits_add(tu_hits *list, uint64_t record, uint64_t start, uint64_t end, uint32_t pattern, char strand,
                 uint32_t errors) {
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 64;
        tu_hit *items = realloc(list->items, cap * sizeof *items);
        if (!items) { list->out_of_memory = 1; return; }
        list->items = items;
        list->cap = cap;
    }
    tu_hit *h = &list->items[list->n++];
    h->record = record;
    h->start = start;
    h->end = end;
    h->pattern = pattern;
    h->strand = strand;
    h->errors = errors;
}

int tu_hits_collect(const sm_hit *hit, void *ctx) {
    tu_hits_add((tu_hits *)ctx, hit->record, hit->start, hit->end, hit->pattern, hit->strand, hit->errors);
    return 0;
}

static int tu_hit_cmp(const tu_hit *a, const tu_hit *b) {
    if (a->record != b->record) return a->record < b->record ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pattern != b->pattern) return a->pattern < b->pattern ? -1 : 1;
    /* '+' (0x2B) sorts before '-' (0x2D) as plain characters. */
    if (a->strand != b->strand) return a->strand < b->strand ? -1 : 1;
    return 0;
}

static int tu_hit_qsort_cmp(const void *a, const void *b) { return tu_hit_cmp(a, b); }

void tu_hits_sort(tu_hits *list) {
    if (list->n > 1) qsort(list->items, list->n, sizeof *list->items, tu_hit_qsort_cmp);
}

int tu_hits_sorted(const tu_hits *list) {
    for (size_t i = 1; i < list->n; i++)
        if (tu_hit_cmp(&list->items[i - 1], &list->items[i]) >= 0) return 0;
    return 1;
}

const char *tu_hit_format(const tu_hit *h, char *buf, size_t size) {
    snprintf(buf, size, "rec %llu [%llu,%llu) pattern %u strand %c errors %u", (unsigned long long)h->record,
             (unsigned long long)h->start, (unsigned long long)h->end, h->pattern, h->strand ? h->strand : '?',
             h->errors);
    return buf;
}

int tu_hits_equal(const tu_hits *expected, const tu_hits *got, const char *what) {
    size_t n = expected->n < got->n ? expected->n : got->n;
    char a[128], b[128];
    for (size_t i = 0; i < n; i++) {
        const tu_hit *x = &expected->items[i], *y = &got->items[i];
        if (tu_hit_cmp(x, y) != 0 || x->errors != y->errors) {
            printf("  %s: hit %zu of %zu/%zu differs: expected %s, got %s\n", what, i, expected->n, got->n,
                   tu_hit_format(x, a, sizeof a), tu_hit_format(y, b, sizeof b));
            return 0;
        }
    }
    if (expected->n != got->n) {
        if (expected->n > got->n)
            printf("  %s: %zu hits expected, got %zu; first missing: %s\n", what, expected->n, got->n,
                   tu_hit_format(&expected->items[n], a, sizeof a));
        else
            printf("  %s: %zu hits expected, got %zu; first extra: %s\n", what, expected->n, got->n,
                   tu_hit_format(&got->items[n], b, sizeof b));
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------- counting */

static unsigned long tu_passed, tu_failed;

int tu_check(int ok, const char *fmt, ...) {
    if (ok) {
        tu_passed++;
        return 1;
    }
    tu_failed++;
    if (tu_failed <= 50) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAIL: ");
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    } else if (tu_failed == 51) {
        printf("(further failures not printed)\n");
    }
    fflush(stdout);
    return 0;
}

unsigned long tu_failures(void) { return tu_failed; }

int tu_summary(const char *test_name) {
    printf("%s: %lu passed, %lu failed\n", test_name, tu_passed, tu_failed);
    fflush(stdout);
    return tu_failed ? 1 : 0;
}

const char *tu_excerpt(const char *data, size_t len, size_t max, char *buf, size_t size) {
    size_t o = 0;
    if (size == 0) return buf;
    for (size_t i = 0; i < len && i < max && o + 5 < size; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            buf[o++] = (char)c;
        } else {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        }
    }
    if (len > max && o + 4 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o < size ? o : size - 1] = '\0';
    return buf;
}

int tu_feed_records(sm_runner *runner, char *const *records, const size_t *lens, size_t n, tu_rng *rng,
                    uint32_t max_piece) {
    int rc = SM_OK;
    for (size_t r = 0; r < n && rc == SM_OK; r++) {
        sm_runner_begin_record(runner);
        size_t at = 0;
        while (at < lens[r] && rc == SM_OK) {
            size_t piece = 1 + tu_rng_below(rng, max_piece);
            if (piece > lens[r] - at) piece = lens[r] - at;
            if (tu_rng_chance(rng, 50)) {
                rc = sm_runner_feed(runner, records[r] + at, piece);
            } else {
                void *dst;
                size_t room;
                rc = sm_runner_feed_buffer(runner, piece, &dst, &room);
                if (rc != SM_OK) break;
                if (room < piece) piece = room;
                memcpy(dst, records[r] + at, piece);
                rc = sm_runner_feed_commit(runner, piece);
            }
            at += piece;
        }
        if (rc == SM_OK) rc = sm_runner_end_record(runner);
    }
    if (rc == SM_OK) rc = sm_runner_flush(runner);
    return rc;
}
