/* Dictionary automaton: both builders give identical bytes, scans agree with
 * a naive search however the text is cut, and the validator rejects damaged
 * sections without reading outside them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/automaton/ac_packed.h"
#include "engines/automaton/automaton.h"
#include "engines/automaton/automaton_gpu.h"
#include "testutil.h"

static int passed, failed;

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (cond) passed++;                                   \
        else {                                                \
            failed++;                                         \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                     \
            fputc('\n', stderr);                              \
        }                                                     \
    } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint32_t below(uint32_t n) { return (uint32_t)(rnd() % n); }

/* ------------------------------------------------------------ key sets */

#define MAX_KEYS 400
#define MAX_LEN 320

typedef struct {
    int dna;
    uint8_t fold[256];
    const char *symbols; /* key symbols */
    size_t nkeys;
    uint8_t storage[MAX_KEYS][MAX_LEN];
    sm_ac_key keys[MAX_KEYS];
    sm_db_pattern patterns[MAX_KEYS];
    uint32_t npatterns;
} key_set;

static void make_fold(key_set *ks, int dna, int ignore_case) {
    for (int b = 0; b < 256; b++) ks->fold[b] = (uint8_t)b;
    if (dna) {
        for (int b = 'a'; b <= 'z'; b++) ks->fold[b] = (uint8_t)(b - 32);
        ks->fold['u'] = ks->fold['U'] = 'T';
    } else if (ignore_case) {
        for (int b = 'A'; b <= 'Z'; b++) ks->fold[b] = (uint8_t)(b + 32);
    }
}

/* Random keys with duplicates (same or other output), prefixes and suffixes
   of other keys and single symbols. Each key's output names a pattern of the
   key's length, on either strand. */
static void make_keys(key_set *ks, int dna, size_t nkeys, uint32_t max_len) {
    memset(ks, 0, sizeof *ks);
    ks->dna = dna;
    int ignore_case = !dna && below(2);
    make_fold(ks, dna, ignore_case);
    static const char *text_symbols[] = {"ab", "abcxyz", "hello world", "\x01\x02\xff\x80zq"};
    ks->symbols = dna ? "ACGT" : text_symbols[below(4)];
    size_t nsym = strlen(ks->symbols);
    for (size_t i = 0; i < nkeys; i++) {
        uint8_t *s = ks->storage[i];
        uint32_t len = 1 + below(max_len);
        int kind = i ? (int)below(8) : 0;
        const sm_ac_key *other = i ? &ks->keys[below((uint32_t)i)] : NULL;
        uint32_t output;
        if (kind == 1) { /* duplicate string, another output */
            len = other->len;
            memcpy(s, other->seq, len);
        } else if (kind == 2) { /* prefix */
            len = 1 + below(other->len);
            memcpy(s, other->seq, len);
        } else if (kind == 3) { /* suffix */
            len = 1 + below(other->len);
            memcpy(s, other->seq + other->len - len, len);
        } else if (kind == 4) {
            len = 1;
            s[0] = (uint8_t)ks->symbols[below((uint32_t)nsym)];
        } else {
            for (uint32_t j = 0; j < len; j++) s[j] = (uint8_t)ks->symbols[below((uint32_t)nsym)];
        }
        if (!dna && ignore_case)
            for (uint32_t j = 0; j < len; j++) s[j] = ks->fold[s[j]];
        if (kind == 5) { /* the very same key twice: one output */
            len = other->len;
            memcpy(s, other->seq, len);
            output = other->output;
        } else {
            ks->patterns[ks->npatterns].length = len;
            output = ks->npatterns++ * 2 + (dna ? below(2) : 0);
        }
        ks->keys[i] = (sm_ac_key){s, len, output};
    }
    ks->nkeys = nkeys;
}

static int build(const key_set *ks, unsigned threads, sm_buf *out) {
    sm_error err;
    memset(out, 0, sizeof *out);
    int rc = sm_ac_build(ks->keys, ks->nkeys, ks->fold, threads, 0, out, &err);
    if (rc != SM_OK) fprintf(stderr, "build failed: %s\n", err.message);
    return rc;
}

/* ------------------------------------------------------------- scanning */

static int compare_hits(const void *pa, const void *pb) {
    const sm_rawhit *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pattern != b->pattern) return a->pattern < b->pattern ? -1 : 1;
    return (int)a->reverse - (int)b->reverse;
}

static void push(sm_sink *sink, uint64_t start, uint64_t end, uint32_t pattern, int reverse) {
    sm_sink_add(sink, start, end, pattern, reverse, 0);
}

/* Every occurrence of every distinct (key, output), by brute force. */
static void naive(const key_set *ks, const uint8_t *text, size_t len, sm_sink *sink) {
    for (size_t k = 0; k < ks->nkeys; k++) {
        const sm_ac_key *key = &ks->keys[k];
        int repeated = 0;
        for (size_t q = 0; q < k && !repeated; q++)
            repeated = ks->keys[q].output == key->output && ks->keys[q].len == key->len &&
                       !memcmp(ks->keys[q].seq, key->seq, key->len);
        if (repeated) continue;
        for (size_t i = 0; i + key->len <= len; i++) {
            uint32_t j = 0;
            while (j < key->len && ks->fold[text[i + j]] == key->seq[j]) j++;
            if (j == key->len) push(sink, i, i + key->len, key->output >> 1, (int)(key->output & 1));
        }
    }
}

static void random_text(const key_set *ks, uint8_t *text, size_t len) {
    size_t nsym = strlen(ks->symbols);
    for (size_t i = 0; i < len; i++) {
        uint32_t r = below(100);
        if (r < 3) text[i] = (uint8_t)below(256);
        else if (r < 8 && ks->dna) text[i] = (uint8_t)"acgtuNn"[below(7)];
        else text[i] = (uint8_t)ks->symbols[below((uint32_t)nsym)];
    }
    /* Plant whole keys so that long ones occur too. */
    for (int p = 0; p < 20 && ks->nkeys; p++) {
        const sm_ac_key *key = &ks->keys[below((uint32_t)ks->nkeys)];
        if (key->len >= len) continue;
        size_t at = below((uint32_t)(len - key->len));
        memcpy(text + at, key->seq, key->len);
    }
}

static int same_hits(sm_sink *a, sm_sink *b) {
    if (a->failed || b->failed || a->n != b->n) return 0;
    if (a->n == 0) return 1;
    qsort(a->hits, a->n, sizeof *a->hits, compare_hits);
    qsort(b->hits, b->n, sizeof *b->hits, compare_hits);
    return !memcmp(a->hits, b->hits, a->n * sizeof *a->hits);
}

static void check_scans(const key_set *ks, const uint8_t *section, size_t text_len) {
    uint8_t *text = malloc(text_len);
    random_text(ks, text, text_len);
    sm_sink all = {0};
    all.own_hi = UINT64_MAX;
    naive(ks, text, text_len, &all);

    /* Whole text at once, with various owned ranges. */
    for (int round = 0; round < 3; round++) {
        sm_sink want = {0}, got = {0};
        uint64_t lo = 0, hi = UINT64_MAX;
        if (round) {
            lo = below((uint32_t)text_len);
            hi = lo + below((uint32_t)(text_len - lo + 1));
        }
        want.own_lo = got.own_lo = lo;
        want.own_hi = got.own_hi = hi;
        for (size_t i = 0; i < all.n; i++)
            push(&want, all.hits[i].start, all.hits[i].end, all.hits[i].pattern, all.hits[i].reverse);
        uint32_t state = 0;
        sm_ac_scan(section, ks->patterns, &state, text, text_len, 0, &got);
        CHECK(same_hits(&want, &got), "whole scan: %zu hits, naive %zu (own %llu..%llu)", got.n, want.n,
              (unsigned long long)lo, (unsigned long long)hi);

        /* Count mode over the same range. */
        uint64_t *counts = calloc(ks->npatterns + 1, sizeof *counts);
        uint64_t *expect = calloc(ks->npatterns + 1, sizeof *expect);
        for (size_t i = 0; i < want.n; i++) expect[want.hits[i].pattern]++;
        sm_sink cs = {0};
        cs.counts = counts;
        cs.own_lo = lo;
        cs.own_hi = hi;
        state = 0;
        sm_ac_scan(section, ks->patterns, &state, text, text_len, 0, &cs);
        CHECK(!memcmp(counts, expect, (ks->npatterns + 1) * sizeof *counts), "count mode differs");
        free(counts);
        free(expect);
        free(want.hits);
        free(got.hits);
    }

    /* In random pieces, state carried, absolute positions kept. */
    for (int round = 0; round < 2; round++) {
        sm_sink want = {0}, got = {0}, whole = {0};
        want.own_hi = got.own_hi = whole.own_hi = UINT64_MAX;
        for (size_t i = 0; i < all.n; i++)
            push(&want, all.hits[i].start, all.hits[i].end, all.hits[i].pattern, all.hits[i].reverse);
        uint32_t state = 0, whole_state = 0;
        size_t at = 0;
        while (at < text_len) {
            size_t piece = round ? 1 + below(40) : 1 + below((uint32_t)text_len);
            if (piece > text_len - at) piece = text_len - at;
            sm_ac_scan(section, ks->patterns, &state, text + at, piece, at, &got);
            at += piece;
        }
        sm_ac_scan(section, ks->patterns, &whole_state, text, text_len, 0, &whole);
        CHECK(same_hits(&want, &got), "pieces: %zu hits, naive %zu", got.n, want.n);
        CHECK(state == whole_state, "final state %u after pieces, %u at once", state, whole_state);
        free(want.hits);
        free(got.hits);
        free(whole.hits);
    }
    free(all.hits);
    free(text);
}

/* ----------------------------------------------------------- validation */

static int validate_copy(const uint8_t *bytes, size_t size, uint32_t n_outputs) {
    uint8_t *copy = malloc(size ? size : 1); /* exact size: overreads trip the sanitizer */
    memcpy(copy, bytes, size);
    int rc = sm_ac_validate(copy, size, n_outputs, NULL);
    if (rc == SM_OK) { /* whatever passes must be safe to scan */
        uint8_t text[64];
        for (size_t i = 0; i < sizeof text; i++) text[i] = (uint8_t)below(256);
        sm_db_pattern pats[4 * MAX_KEYS];
        for (size_t i = 0; i < 4 * MAX_KEYS; i++) pats[i].length = 1;
        uint64_t counts[4 * MAX_KEYS] = {0};
        sm_sink sink = {0};
        sink.counts = counts;
        sink.own_hi = UINT64_MAX;
        uint32_t state = 0;
        if (n_outputs / 2 + 1 <= 4 * MAX_KEYS) sm_ac_scan(copy, pats, &state, text, sizeof text, 100, &sink);
    }
    free(copy);
    return rc;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

typedef struct {
    size_t off;
    uint32_t value;
} damage;

static void check_validation(const key_set *ks, const sm_buf *sec) {
    uint32_t n_outputs = ks->npatterns * 2;
    CHECK(validate_copy(sec->data, sec->len, n_outputs) == SM_OK, "valid section rejected");
    sm_ac_header h;
    memcpy(&h, sec->data, sizeof h);
    uint8_t *m = malloc(sec->len);

    /* Truncations. */
    size_t cuts[] = {0, 1, sizeof h - 1, (size_t)h.delta_off + 4, (size_t)h.out_index_off, sec->len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++)
        if (cuts[i] < sec->len && (cuts[i] < h.out_list_off + h.out_total * 4))
            CHECK(validate_copy(sec->data, cuts[i], n_outputs) != SM_OK, "truncated at %zu accepted", cuts[i]);

    /* Damage that must be seen. */
    damage hits[12];
    int nh = 0;
    size_t columns_at = offsetof(sm_ac_header, columns), states_at = offsetof(sm_ac_header, states);
    hits[nh++] = (damage){columns_at, 0};
    hits[nh++] = (damage){columns_at, 300};
    hits[nh++] = (damage){states_at, 0x7fffffff};
    hits[nh++] = (damage){(size_t)h.delta_off + 4 * below(h.states * h.columns), h.states * h.columns};
    hits[nh++] = (damage){(size_t)h.delta_off, get32(sec->data + h.delta_off) ^ SM_AC_OUT_FLAG};
    if (h.columns > 1) hits[nh++] = (damage){(size_t)h.delta_off, 1};
    if (h.out_total) {
        hits[nh++] = (damage){(size_t)h.out_list_off + 4 * below((uint32_t)h.out_total), n_outputs};
        hits[nh++] = (damage){(size_t)h.out_index_off + 4 * h.states, (uint32_t)h.out_total + 1};
    }
    hits[nh++] = (damage){offsetof(sm_ac_header, class_of) + 2 * below(256), h.columns * 0x10001u};
    for (int i = 0; i < nh; i++) {
        memcpy(m, sec->data, sec->len);
        put32(m + hits[i].off, hits[i].value);
        CHECK(validate_copy(m, sec->len, n_outputs) != SM_OK, "damage %d at %zu accepted", i, hits[i].off);
    }
    if (ks->nkeys) {
        uint32_t top = 0;
        for (size_t i = 0; i < ks->nkeys; i++)
            if (ks->keys[i].output > top) top = ks->keys[i].output;
        CHECK(validate_copy(sec->data, sec->len, top + 1) == SM_OK, "exact output count rejected");
        CHECK(validate_copy(sec->data, sec->len, top) != SM_OK, "output id %u accepted with %u outputs", top, top);
    }

    /* Random damage: no crash either way. */
    for (int i = 0; i < 40; i++) {
        memcpy(m, sec->data, sec->len);
        int flips = 1 + (int)below(4);
        for (int f = 0; f < flips; f++) {
            size_t at = below((uint32_t)(i < 20 ? (sec->len < 640 ? sec->len : 640) : sec->len));
            m[at] = (uint8_t)rnd();
        }
        (void)validate_copy(m, sec->len, n_outputs);
    }
    free(m);
}

/* Every entry of a 32-bit table (automaton_gpu.h) read from its packed
   form the way the kernel reads it. */
static int packed_gives(const uint32_t *delta, uint32_t states, uint32_t columns, const sm_ac_packed *packed) {
    const uint16_t *whole = (const uint16_t *)packed->image;
    const sm_ac_gpu_packed_layout lay = sm_ac_gpu_packed_layout_of(packed->rows, columns, states);
    const uint32_t *heads = (const uint32_t *)(packed->image + lay.heads_off);
    const uint16_t *entries = (const uint16_t *)(packed->image + lay.entries_off);
    for (uint32_t s = 0; s < states; s++)
        for (uint32_t c = 0; c < columns; c++) {
            uint32_t e = delta[(size_t)s * columns + c];
            uint32_t want = (e & 0x7fffffffu) / columns | (e & SM_GPU_DFA_FLAG ? 0x8000u : 0);
            if (sm_ac_gpu_packed_entry(whole, heads, entries, columns, s, c) != want) return 0;
        }
    return 1;
}

/* Tables no automaton gives (random targets and flags): packed with every
   entry, or refused; never a form that reads otherwise. */
static void check_packed_random_tables(void) {
    for (int round = 0; round < 40; round++) {
        uint32_t states = 2 + below(300), columns = 1 + below(40);
        uint32_t *delta = malloc((size_t)states * columns * 4);
        for (size_t i = 0; i < (size_t)states * columns; i++) {
            /* mostly back to shallow states, as an automaton's are */
            uint32_t t = below(4) ? below(1 + below(8)) % states : below(states);
            delta[i] = t * columns | (below(8) ? 0 : SM_GPU_DFA_FLAG);
        }
        for (uint32_t s = 1; s < states; s++) delta[(size_t)below(s) * columns + below(columns)] = s * columns;
        sm_ac_packed packed;
        if (sm_ac_packed_build(delta, states, columns, UINT32_MAX, 1, &packed) == 0) {
            CHECK(packed_gives(delta, states, columns, &packed), "a random table (%u states, %u columns) packed wrong",
                  states, columns);
            free(packed.image);
        }
        free(delta);
    }
}

/* The packed form the GPU keeps in shared memory (ac_packed.h): built for
   every automaton (its build checks every entry against the table), and
   refused past its budget. */
static void check_packed(const uint8_t *section) {
    sm_ac_header h;
    memcpy(&h, section, sizeof h);
    if (h.states < 2 || h.columns >= SM_AC_GPU_PACKED_NONE) return;
    const uint32_t *delta = (const uint32_t *)(section + h.delta_off);
    sm_ac_packed packed;
    int rc = sm_ac_packed_build(delta, h.states, h.columns, UINT32_MAX, 1, &packed);
    CHECK(rc == 0 && packed.image && packed.rows >= 1 && packed.rows <= h.states &&
              packed_gives(delta, h.states, h.columns, &packed),
          "packed form of %u states (%u rows)", h.states, packed.rows);
    free(packed.image);
    if (rc == 0) {
        CHECK(sm_ac_packed_build(delta, h.states, h.columns, packed.bytes - 1, 0, &packed) != 0,
              "packed form past its budget");
    }
    /* a table the automaton would not give (one transition of a deepest
       state sent elsewhere): packed all the same, that entry with it */
    size_t words = (size_t)h.states * h.columns;
    uint32_t *damaged = malloc(words * 4);
    memcpy(damaged, delta, words * 4);
    uint32_t s = h.states - 1, c = below(h.columns);
    uint32_t *entry = &damaged[(size_t)s * h.columns + c];
    uint32_t to = (*entry & 0x7fffffffu) / h.columns == s ? 0 : s;
    *entry = to * h.columns;
    rc = sm_ac_packed_build(damaged, h.states, h.columns, UINT32_MAX, 1, &packed);
    CHECK(rc == 0 && packed_gives(damaged, h.states, h.columns, &packed),
          "a damaged table packed with its entry (state %u, class %u)", s, c);
    free(packed.image);
    /* a few entries anywhere sent anywhere: packed with every entry, or
       refused */
    memcpy(damaged, delta, words * 4);
    for (uint32_t k = 1 + below(5); k > 0; k--)
        damaged[below((uint32_t)words)] = below(h.states) * h.columns | (below(4) ? 0 : SM_GPU_DFA_FLAG);
    if (sm_ac_packed_build(damaged, h.states, h.columns, UINT32_MAX, 1, &packed) == 0) {
        CHECK(packed_gives(damaged, h.states, h.columns, &packed), "a table with changed entries packed wrong");
        free(packed.image);
    }
    free(damaged);
}

/* ------------------------------------------------------------------ main */

static void check_set(key_set *ks, size_t text_len, int full) {
    sm_buf serial, level;
    if (build(ks, 0, &serial) != SM_OK) {
        CHECK(0, "serial build failed");
        return;
    }
    for (unsigned t = 1; t <= 8; t++) {
        if (!full && t != 1 + below(8)) continue;
        if (build(ks, t, &level) != SM_OK) {
            CHECK(0, "level build failed");
            continue;
        }
        CHECK(level.len == serial.len && !memcmp(level.data, serial.data, serial.len),
              "builders differ with %u threads (%zu vs %zu bytes, %zu keys)", t, level.len, serial.len, ks->nkeys);
        sm_buf_free(&level);
    }
    check_scans(ks, serial.data, text_len);
    check_packed(serial.data);
    if (full) check_validation(ks, &serial);
    sm_buf_free(&serial);
}

static key_set set;

int main(void) {
    /* No keys: a root that loops to itself. */
    make_keys(&set, 1, 0, 1);
    check_set(&set, 100, 1);

    /* Hand-made: "he", "she", "his", "hers" (text) against a known count. */
    {
        key_set *ks = &set;
        memset(ks, 0, sizeof *ks);
        make_fold(ks, 0, 0);
        ks->symbols = "hers";
        const char *words[] = {"he", "she", "his", "hers"};
        for (int i = 0; i < 4; i++) {
            memcpy(ks->storage[i], words[i], strlen(words[i]));
            ks->keys[i] = (sm_ac_key){ks->storage[i], (uint32_t)strlen(words[i]), (uint32_t)i * 2};
            ks->patterns[i].length = (uint32_t)strlen(words[i]);
        }
        ks->nkeys = 4;
        ks->npatterns = 4;
        sm_buf sec;
        CHECK(build(ks, 2, &sec) == SM_OK, "build");
        const char *text = "ushers and his heroes";
        uint64_t counts[4] = {0};
        sm_sink sink = {0};
        sink.counts = counts;
        sink.own_hi = UINT64_MAX;
        uint32_t state = 0;
        sm_ac_scan(sec.data, ks->patterns, &state, (const uint8_t *)text, strlen(text), 0, &sink);
        CHECK(counts[0] == 2 && counts[1] == 1 && counts[2] == 1 && counts[3] == 1,
              "he/she/his/hers counts %llu %llu %llu %llu", (unsigned long long)counts[0],
              (unsigned long long)counts[1], (unsigned long long)counts[2], (unsigned long long)counts[3]);
        sm_ac_header h;
        memcpy(&h, sec.data, sizeof h);
        CHECK(h.columns == 6 && h.class_of['e'] == 1 && h.class_of['h'] == 2 && h.class_of['i'] == 3 &&
                  h.class_of['r'] == 4 && h.class_of['s'] == 5 && h.class_of['u'] == 0 && h.class_of['H'] == 0,
              "alphabet mapping");

        /* Limits. */
        sm_buf small = {0};
        sm_error err;
        int rc = sm_ac_build(ks->keys, ks->nkeys, ks->fold, 0, 100, &small, &err);
        CHECK(rc == SM_ERR_LIMIT && strstr(err.message, "bytes"), "max_bytes not enforced (%d)", rc);
        CHECK(small.len == 0, "failed build left bytes");
        sm_buf_free(&small);
        sm_buf_free(&sec);
    }

    check_packed_random_tables();

    /* Many random sets: small keys with every thread count, damage checks
       (SM_TEST_SCALE: the sanitizer runs take a tenth, at least 12). */
    int sets = (int)tu_scaled(120) < 12 ? 12 : (int)tu_scaled(120);
    for (int i = 0; i < sets; i++) {
        make_keys(&set, i % 2 == 0, 1 + below(60), 1 + below(12));
        check_set(&set, 8200 + below(12000), i % 4 == 0);
    }
    /* Long keys, deep automata; text long enough for interleaved streams. */
    int deep = (int)tu_scaled(10) < 2 ? 2 : (int)tu_scaled(10);
    for (int i = 0; i < deep; i++) {
        make_keys(&set, i % 2 == 0, 1 + below(MAX_KEYS / 4), 1 + below(MAX_LEN));
        check_set(&set, 12000 + below(20000), i % 4 == 0);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
