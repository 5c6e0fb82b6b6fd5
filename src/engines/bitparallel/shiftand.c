/* Bit-parallel Shift-And over symbol sets; see shiftand.h for the layouts. */
#include "engines/bitparallel/shiftand.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
#define SA_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SA_ALWAYS_INLINE inline __attribute__((always_inline))
#define SA_NOINLINE __attribute__((noinline))
static inline unsigned sa_ctz(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
static inline unsigned sa_popcount(uint64_t x) { return (unsigned)__builtin_popcountll(x); }
#else
#define SA_UNLIKELY(x) (x)
#define SA_ALWAYS_INLINE inline
#define SA_NOINLINE
static inline unsigned sa_ctz(uint64_t x) {
    unsigned n = 0;
    while (!(x & 1u)) { x >>= 1; n++; }
    return n;
}
static inline unsigned sa_popcount(uint64_t x) {
    unsigned n = 0;
    while (x) { x &= x - 1; n++; }
    return n;
}
#endif

static inline unsigned sa_highest_bit(uint64_t x) {
    unsigned n = 0;
    while (x >>= 1) n++;
    return n;
}

#define SA_ALIGN 64u
/* Levels stepped on every byte, kept in registers; deeper levels are
   stepped only while some key has got that far. */
#define SA_WINDOW 8u
_Static_assert(SA_WINDOW == 8, "sa_scan_levels_1 spells out eight levels");
#define SA_ROW_ALIGN_WORDS 8u

static void sa_set_error(sm_error *err, int code, const char *fmt, ...) {
    if (!err) return;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

static uint64_t sa_round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* ------------------------------------------------------------------ build */

typedef struct {
    const uint8_t *sym;  /* normalised symbols: dna nucleotide sets, text folded bytes */
    uint32_t len;
    uint32_t output;
    uint32_t rank;       /* distinct-key number after sorting */
} sa_key;

/* Longest first (the levels layout needs it), then by symbols so identical
   keys are adjacent, then by output so each key's outputs ascend. */
static int sa_key_cmp(const void *a, const void *b) {
    const sa_key *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    int c = memcmp(x->sym, y->sym, x->len);
    if (c) return c;
    return x->output < y->output ? -1 : (x->output > y->output);
}

static uint8_t sa_fold_text(uint8_t b, unsigned flags) {
    if ((flags & SM_FLAG_IGNORE_CASE) && b >= 'A' && b <= 'Z') return (uint8_t)(b + ('a' - 'A'));
    return b;
}

/* Does a dna text class (nucleotide set of a text byte) match a pattern set? */
static int sa_dna_class_matches(unsigned text_class, unsigned pattern_set, unsigned flags) {
    if (text_class == 0 || (text_class & pattern_set) == 0) return 0;
    if (flags & SM_FLAG_TEXT_IUPAC) return 1;
    return sa_popcount(text_class) == 1;
}

typedef struct {
    uint64_t masks, starts, finals, final_base, out_index, out_list, total;
} sa_offsets;

static sa_offsets sa_plan_offsets(uint32_t layout, uint32_t rows, uint32_t stride, uint32_t words, uint64_t finals,
                                  uint64_t outputs) {
    sa_offsets o;
    uint64_t off = sa_round_up(sizeof(sm_sa_header), SA_ALIGN);
    o.masks = off;
    off = sa_round_up(off + (uint64_t)rows * stride * 8u, SA_ALIGN);
    o.starts = o.final_base = 0;
    if (layout == SM_SA_DENSE) {
        o.starts = off;
        off = sa_round_up(off + (uint64_t)stride * 8u, SA_ALIGN);
    }
    o.finals = off;
    off = sa_round_up(off + (uint64_t)stride * 8u, SA_ALIGN);
    if (layout == SM_SA_DENSE) {
        o.final_base = off;
        off = sa_round_up(off + (uint64_t)words * 4u, SA_ALIGN);
    }
    o.out_index = off;
    off = sa_round_up(off + (finals + 1) * 4u, SA_ALIGN);
    o.out_list = off;
    off = sa_round_up(off + outputs * 4u, SA_ALIGN);
    o.total = off;
    return o;
}

/* Words per level for ngroups groups: 1, 2, else a multiple of 4 so that
   levels stay aligned to vector width. */
static uint64_t sa_group_words(uint64_t ngroups) { return ngroups <= 2 ? ngroups : sa_round_up(ngroups, 4); }

int sm_sa_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                uint64_t max_bytes, sm_buf *section, sm_error *err) {
    int rc = SM_OK;
    sa_key *ks = NULL;
    uint8_t *symbols = NULL;
    uint8_t *blob = NULL;

    if (!section || (nkeys > 0 && !keys) || (alphabet != SM_ALPHABET_DNA && alphabet != SM_ALPHABET_TEXT)) {
        sa_set_error(err, SM_ERR_INVALID, "shift-and: invalid arguments");
        return SM_ERR_INVALID;
    }
    if (nkeys == 0 || nkeys > UINT32_MAX / 2) {
        sa_set_error(err, SM_ERR_INVALID, "shift-and: %zu keys", nkeys);
        return SM_ERR_INVALID;
    }

    /* Normalise every key to its symbol sets. */
    uint64_t total_symbols = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len == 0 || !keys[i].seq) {
            sa_set_error(err, SM_ERR_PATTERN, "shift-and: key %zu is empty", i);
            return SM_ERR_PATTERN;
        }
        total_symbols += keys[i].len;
    }
    if (total_symbols > (uint64_t)UINT32_MAX * 16u || total_symbols > SIZE_MAX / 4) {
        sa_set_error(err, SM_ERR_LIMIT, "shift-and: %llu pattern symbols are too many",
                     (unsigned long long)total_symbols);
        return SM_ERR_LIMIT;
    }
    ks = calloc(nkeys, sizeof *ks);
    symbols = malloc((size_t)total_symbols);
    if (!ks || !symbols) goto nomem;
    size_t at = 0;
    uint32_t max_key = 0;
    for (size_t i = 0; i < nkeys; i++) {
        uint8_t *dst = symbols + at;
        for (uint32_t j = 0; j < keys[i].len; j++) {
            uint8_t b = keys[i].seq[j];
            if (alphabet == SM_ALPHABET_DNA) {
                dst[j] = sm_nt_set[b] & 15u;
                if (dst[j] == 0) {
                    sa_set_error(err, SM_ERR_PATTERN, "shift-and: key %zu has a non-IUPAC byte 0x%02x at %u",
                                 i, (unsigned)b, (unsigned)j);
                    rc = SM_ERR_PATTERN;
                    goto fail;
                }
            } else {
                dst[j] = sa_fold_text(b, flags);
            }
        }
        ks[i].sym = dst;
        ks[i].len = keys[i].len;
        ks[i].output = keys[i].output;
        if (keys[i].len > max_key) max_key = keys[i].len;
        at += keys[i].len;
    }

    /* Identical keys share bits: after sorting each group is contiguous. */
    qsort(ks, nkeys, sizeof *ks, sa_key_cmp);
    uint64_t distinct = 0, bits = 0;
    for (size_t i = 0; i < nkeys; i++) {
        int same = i > 0 && ks[i].len == ks[i - 1].len && memcmp(ks[i].sym, ks[i - 1].sym, ks[i].len) == 0;
        if (!same) {
            distinct++;
            bits += ks[i].len;
        }
        ks[i].rank = (uint32_t)(distinct - 1);
    }

    /* Text classes and mask rows: a byte's class is its nucleotide set (dna)
       or its folded value (text); only classes that can match get a row. */
    uint16_t class_of[256];
    uint32_t rows = 1;
    uint8_t row_class[257]; /* class value of each row (row 0 unused) */
    int row_of[256];        /* class value -> row (0: matches nothing) */
    memset(row_class, 0, sizeof row_class);
    if (alphabet == SM_ALPHABET_DNA) {
        for (unsigned c = 0; c < 16; c++) {
            row_of[c] = 0;
            int can_match = c != 0 && ((flags & SM_FLAG_TEXT_IUPAC) || sa_popcount(c) == 1);
            if (can_match) { row_class[rows] = (uint8_t)c; row_of[c] = (int)rows++; }
        }
        for (unsigned b = 0; b < 256; b++) class_of[b] = (uint16_t)row_of[sm_nt_set[b] & 15u];
    } else {
        uint8_t used[256];
        memset(used, 0, sizeof used);
        for (size_t i = 0; i < nkeys; i++)
            for (uint32_t j = 0; j < ks[i].len; j++) used[ks[i].sym[j]] = 1;
        for (unsigned c = 0; c < 256; c++) {
            row_of[c] = 0;
            if (used[c]) { row_class[rows] = (uint8_t)c; row_of[c] = (int)rows++; }
        }
        for (unsigned b = 0; b < 256; b++) class_of[b] = (uint16_t)row_of[sa_fold_text((uint8_t)b, flags)];
    }

    /* Up to one word, the dense step (three register operations per byte)
       beats anything; beyond, levels touch only the active part. */
    uint32_t layout = bits <= 64 ? SM_SA_DENSE : SM_SA_LEVELS;
    uint32_t levels = 0, shallow = 0, group_words = 0, first_final = 0;
    uint64_t words64;
    if (layout == SM_SA_DENSE) {
        words64 = 1;
    } else {
        levels = max_key;
        group_words = (uint32_t)sa_group_words((distinct + 63) / 64);
        words64 = (uint64_t)levels * group_words;
        first_final = ks[nkeys - 1].len - 1; /* sorted longest first */
    }
    if (words64 > UINT32_MAX - SA_ROW_ALIGN_WORDS) {
        sa_set_error(err, SM_ERR_LIMIT, "shift-and: %llu words are too many", (unsigned long long)words64);
        rc = SM_ERR_LIMIT;
        goto fail;
    }
    uint32_t words = (uint32_t)words64;
    /* Levels: the scan always steps a window of SA_WINDOW levels, so rows
       hold at least that many (zero beyond the longest key). */
    uint64_t row_words = layout == SM_SA_LEVELS && levels < SA_WINDOW ? (uint64_t)SA_WINDOW * group_words : words;
    uint32_t stride = (uint32_t)sa_round_up(row_words, SA_ROW_ALIGN_WORDS);
    sa_offsets o = sa_plan_offsets(layout, rows, stride, words, distinct, nkeys);
    if ((max_bytes && o.total > max_bytes) || o.total > SIZE_MAX / 2) {
        sa_set_error(err, SM_ERR_LIMIT, "shift-and: the section would need %llu bytes (limit %llu)",
                     (unsigned long long)o.total, (unsigned long long)max_bytes);
        rc = SM_ERR_LIMIT;
        goto fail;
    }
    blob = calloc(1, (size_t)o.total);
    if (!blob) goto nomem;

    uint64_t *masks = (uint64_t *)(blob + o.masks);
    uint64_t *finals = (uint64_t *)(blob + o.finals);
    uint32_t *out_index = (uint32_t *)(blob + o.out_index);
    uint32_t *out_list = (uint32_t *)(blob + o.out_list);
    uint64_t *starts = layout == SM_SA_DENSE ? (uint64_t *)(blob + o.starts) : NULL;
    uint64_t bit = 0;
    for (size_t i = 0; i < nkeys;) {
        size_t j = i + 1;
        while (j < nkeys && ks[j].rank == ks[i].rank) j++;
        const sa_key *k = &ks[i];
        uint32_t r = k->rank;
        for (uint32_t p = 0; p < k->len; p++) {
            uint64_t word, m;
            if (layout == SM_SA_DENSE) {
                word = (bit + p) >> 6;
                m = 1ull << ((bit + p) & 63);
            } else {
                word = (uint64_t)p * group_words + r / 64;
                m = 1ull << (r & 63);
            }
            if (alphabet == SM_ALPHABET_TEXT) {
                masks[(uint64_t)row_of[k->sym[p]] * stride + word] |= m;
                continue;
            }
            for (uint32_t row = 1; row < rows; row++)
                if (sa_dna_class_matches(row_class[row], k->sym[p], flags)) masks[(uint64_t)row * stride + word] |= m;
        }
        if (layout == SM_SA_DENSE) {
            starts[bit >> 6] |= 1ull << (bit & 63);
            uint64_t last = bit + k->len - 1;
            finals[last >> 6] |= 1ull << (last & 63);
        } else {
            finals[(uint64_t)(k->len - 1) * group_words + r / 64] |= 1ull << (r & 63);
        }
        out_index[r] = (uint32_t)i;
        for (size_t a = i; a < j; a++) out_list[a] = ks[a].output;
        bit += k->len;
        i = j;
    }
    out_index[distinct] = (uint32_t)nkeys;
    if (layout == SM_SA_DENSE) {
        uint32_t *final_base = (uint32_t *)(blob + o.final_base);
        uint32_t seen = 0;
        for (uint32_t w = 0; w < words; w++) {
            final_base[w] = seen;
            seen += sa_popcount(finals[w]);
        }
    } else {
        shallow = SA_WINDOW;
    }

    sm_sa_header *h = (sm_sa_header *)blob;
    h->layout = layout;
    h->words = words;
    h->row_stride = stride;
    h->rows = rows;
    h->final_count = (uint32_t)distinct;
    h->max_key = max_key;
    h->levels = levels;
    h->shallow = shallow;
    h->group_words = group_words;
    h->first_final = first_final;
    h->bits = layout == SM_SA_DENSE ? bits : (uint64_t)words * 64u;
    h->out_total = nkeys;
    h->masks_off = o.masks;
    h->starts_off = o.starts;
    h->finals_off = o.finals;
    h->final_base_off = o.final_base;
    h->out_index_off = o.out_index;
    h->out_list_off = o.out_list;
    memcpy(h->class_of, class_of, sizeof class_of);

    if (sm_buf_append(section, blob, (size_t)o.total) != 0) goto nomem;
    goto done;

nomem:
    sa_set_error(err, SM_ERR_NOMEM, "shift-and: out of memory");
    rc = SM_ERR_NOMEM;
fail:
done:
    free(blob);
    free(symbols);
    free(ks);
    return rc;
}

/* --------------------------------------------------------------- validate */

/* Is [off, off + count * elem) inside a section of size bytes, and aligned? */
static int sa_table_fits(uint64_t off, uint64_t count, uint64_t elem, uint64_t size) {
    if (off % 8u != 0 || off < sizeof(sm_sa_header) || off > size) return 0;
    if (count > (size - off) / elem) return 0;
    return 1;
}

int sm_sa_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
    if (!section || size < sizeof(sm_sa_header) || ((uintptr_t)section % 8u) != 0) {
        sa_set_error(err, SM_ERR_FORMAT, "shift-and section: truncated (%zu bytes)", size);
        return SM_ERR_FORMAT;
    }
    sm_sa_header h;
    memcpy(&h, section, sizeof h);
#define SA_BAD(...) do { sa_set_error(err, SM_ERR_FORMAT, __VA_ARGS__); return SM_ERR_FORMAT; } while (0)
    if (h.layout != SM_SA_DENSE && h.layout != SM_SA_LEVELS) SA_BAD("shift-and section: unknown layout %u", h.layout);
    int dense = h.layout == SM_SA_DENSE;
    if (dense && h.words != 1) SA_BAD("shift-and section: dense layout with %u words", h.words);
    if (h.words == 0 || h.bits == 0 || h.bits > (uint64_t)h.words * 64u || (h.bits + 63) / 64 != h.words)
        SA_BAD("shift-and section: bad bit count %llu for %u words", (unsigned long long)h.bits, h.words);
    if (h.row_stride < h.words || h.row_stride % SA_ROW_ALIGN_WORDS != 0)
        SA_BAD("shift-and section: bad row stride %u", h.row_stride);
    if (h.rows == 0 || h.rows > 257) SA_BAD("shift-and section: bad row count %u", h.rows);
    if (h.final_count == 0 || h.final_count > h.bits) SA_BAD("shift-and section: bad key count %u", h.final_count);
    if (h.out_total < h.final_count || h.out_total > UINT32_MAX)
        SA_BAD("shift-and section: bad output count %llu", (unsigned long long)h.out_total);
    if (h.max_key == 0 || h.max_key > h.bits) SA_BAD("shift-and section: bad longest key %u", h.max_key);
    if (!dense && (h.levels != h.max_key || h.shallow != SA_WINDOW || h.group_words == 0 ||
                   h.row_stride < (uint64_t)SA_WINDOW * h.group_words ||
                   (h.group_words > 2 && h.group_words % 4 != 0) || (uint64_t)h.levels * h.group_words != h.words ||
                   h.first_final >= h.levels || h.final_count > (uint64_t)h.group_words * 64u))
        SA_BAD("shift-and section: bad level counts");
    for (unsigned b = 0; b < 256; b++)
        if (h.class_of[b] >= h.rows) SA_BAD("shift-and section: byte %u maps to row %u of %u", b, h.class_of[b], h.rows);
    uint64_t sz = size;
    if (!sa_table_fits(h.masks_off, (uint64_t)h.rows * h.row_stride, 8, sz) ||
        !sa_table_fits(h.finals_off, h.row_stride, 8, sz) ||
        (dense && !sa_table_fits(h.starts_off, h.row_stride, 8, sz)) ||
        (dense && !sa_table_fits(h.final_base_off, h.words, 4, sz)) ||
        !sa_table_fits(h.out_index_off, (uint64_t)h.final_count + 1, 4, sz) ||
        !sa_table_fits(h.out_list_off, h.out_total, 4, sz))
        SA_BAD("shift-and section: a table lies outside the section");

    const uint64_t *masks = (const uint64_t *)(section + h.masks_off);
    const uint64_t *finals = (const uint64_t *)(section + h.finals_off);
    const uint32_t *out_index = (const uint32_t *)(section + h.out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h.out_list_off);

    /* Row 0 stands for bytes that match nothing; the scan relies on it. */
    for (uint32_t w = 0; w < h.row_stride; w++)
        if (masks[w] != 0) SA_BAD("shift-and section: row 0 is not empty");
    if (dense) {
        const uint64_t *starts = (const uint64_t *)(section + h.starts_off);
        const uint32_t *final_base = (const uint32_t *)(section + h.final_base_off);
        uint64_t used_last = h.bits - (uint64_t)(h.words - 1) * 64u;
        uint64_t tail_mask = used_last == 64 ? ~0ull : ((1ull << used_last) - 1);
        uint32_t seen = 0;
        for (uint32_t w = 0; w < h.words; w++) {
            if (final_base[w] != seen) SA_BAD("shift-and section: bad final index at word %u", w);
            seen += sa_popcount(finals[w]);
        }
        if (seen != h.final_count) SA_BAD("shift-and section: %u final bits, header says %u", seen, h.final_count);
        if ((finals[h.words - 1] & ~tail_mask) || (starts[h.words - 1] & ~tail_mask))
            SA_BAD("shift-and section: bits set past the end of the vector");
    } else {
        /* Final bits must name existing keys (bit b of group g is key
           g * 64 + b) and lie no lower than first_final. */
        for (uint64_t w = 0; w < h.words; w++) {
            uint64_t f = finals[w];
            if (!f) continue;
            uint64_t g = w % h.group_words;
            if (w / h.group_words < h.first_final || g * 64u + sa_highest_bit(f) >= h.final_count)
                SA_BAD("shift-and section: final bit of a missing key in word %llu", (unsigned long long)w);
        }
    }
    if (out_index[0] != 0 || out_index[h.final_count] != h.out_total)
        SA_BAD("shift-and section: bad output index bounds");
    for (uint32_t r = 0; r < h.final_count; r++)
        if (out_index[r + 1] <= out_index[r]) SA_BAD("shift-and section: key %u has no output", r);
    for (uint64_t i = 0; i < h.out_total; i++)
        if (out_list[i] >= n_outputs) SA_BAD("shift-and section: output %u out of range", out_list[i]);
#undef SA_BAD
    return SM_OK;
}

/* ------------------------------------------------------------------- scan */

/* Levels scan state: [0] the number of levels that may be non-zero (at
   least SA_WINDOW; all deeper ones are zero), [1..3] unused, then D, level
   j in words [j * G, (j + 1) * G). Dense: [0] unused, [1] D. */
enum { SA_STATE_EXT = 0, SA_STATE_HEAD = 4 };

size_t sm_sa_state_words(const uint8_t *section) {
    const sm_sa_header *h = (const sm_sa_header *)section;
    if (h->layout == SM_SA_DENSE) return 2;
    return SA_STATE_HEAD + (size_t)h->row_stride;
}

void sm_sa_state_reset(const uint8_t *section, uint64_t *state) {
    memset(state, 0, sm_sa_state_words(section) * sizeof *state);
}

typedef struct {
    const uint32_t *out_index, *out_list;
    const sm_db_pattern *patterns;
    sm_sink *sink;
} sa_reporter;

static inline void sa_report_key(const sa_reporter *r, uint32_t rank, uint64_t end) {
    for (uint32_t k = r->out_index[rank]; k < r->out_index[rank + 1]; k++) {
        uint32_t id = r->out_list[k];
        uint32_t pat = id >> 1;
        /* Only a crafted database, whose section disagrees with its pattern
           table, ends a key before its length: skip it rather than wrap the
           start around to a position outside the text. */
        if (SA_UNLIKELY(r->patterns[pat].length > end)) continue;
        sm_sink_add(r->sink, end - r->patterns[pat].length, end, pat, (int)(id & 1u), 0);
    }
}

/* Cold path (dense): keys ending at end whose final bits are in hits. */
static SA_NOINLINE void sa_report_dense(const sa_reporter *r, uint64_t finals, const uint32_t *final_base, uint64_t hits,
                            uint64_t end) {
    while (hits) {
        unsigned b = sa_ctz(hits);
        sa_report_key(r, final_base[0] + sa_popcount(finals & ((1ull << b) - 1)), end);
        hits &= hits - 1;
    }
}

/* Cold path (levels): keys ending at end in words [from, to) of D. */
static SA_NOINLINE void sa_report_levels(const sa_reporter *r, const uint64_t *D, const uint64_t *F, size_t from, size_t to,
                             uint32_t group_words, uint64_t end) {
    for (size_t x = from; x < to; x++) {
        uint64_t hits = D[x] & F[x];
        uint32_t g = (uint32_t)(x % group_words);
        while (hits) {
            sa_report_key(r, g * 64u + sa_ctz(hits), end);
            hits &= hits - 1;
        }
    }
}

/* Dense: the whole step is three register operations. */
static void sa_scan_dense(const uint16_t *class_of, const uint64_t *restrict masks, uint32_t stride, uint64_t s,
                          uint64_t f, const uint32_t *final_base, uint64_t *restrict D, const uint8_t *restrict text,
                          size_t len, uint64_t pos0, const sa_reporter *rep) {
    uint64_t d = *D;
    for (size_t i = 0; i < len; i++) {
        d = ((d << 1) | s) & masks[(size_t)class_of[text[i]] * stride];
        if (SA_UNLIKELY(d & f)) sa_report_dense(rep, f, final_base, d & f, pos0 + i + 1);
    }
    *D = d;
}

typedef struct {
    const uint16_t *class_of;
    const uint64_t *masks, *F;
    size_t stride;
    uint32_t levels, first_final;
} sa_levels_view;

/* Steps the levels beyond the window, [SA_WINDOW, ext), one further, from
   level SA_WINDOW - 1 (already in D). Returns the new bound. Cold: only
   while some key has matched more than SA_WINDOW symbols. */
static SA_NOINLINE uint32_t sa_step_deep(const sa_levels_view *v, uint32_t G, uint64_t *restrict D, const uint64_t *restrict M,
                             uint32_t ext, const sa_reporter *rep, uint64_t end) {
    uint32_t nl = ext + 1 < v->levels ? ext + 1 : v->levels;
    for (size_t x = (size_t)nl * G; x-- > (size_t)SA_WINDOW * G;) D[x] = D[x - G] & M[x];
    size_t from = (size_t)(v->first_final > SA_WINDOW ? v->first_final : SA_WINDOW) * G;
    uint64_t acc = 0;
    for (size_t x = from; x < (size_t)nl * G; x++) acc |= D[x] & v->F[x];
    if (acc) sa_report_levels(rep, D, v->F, from, (size_t)nl * G, G, end);
    uint32_t a = nl;
    while (a > SA_WINDOW) {
        uint64_t any = 0;
        for (uint32_t g = 0; g < G; g++) any |= D[(size_t)(a - 1) * G + g];
        if (any) break;
        a--;
    }
    return a;
}

/* Levels. G is the words per level; the callers pass constants for the
   common widths so the window lives in registers. */
static SA_ALWAYS_INLINE void sa_scan_levels_g(const sa_levels_view *v, const uint32_t G, uint64_t *state,
                                              const uint8_t *restrict text, size_t len, uint64_t pos0,
                                              const sa_reporter *rep) {
    uint64_t *restrict D = state + SA_STATE_HEAD;
    uint64_t local[SA_WINDOW * 4];
    uint64_t *win = G <= 4 ? local : D;
    const size_t WG = (size_t)SA_WINDOW * G;
    if (win != D) memcpy(win, D, WG * sizeof *D);
    const int has_deep = v->levels > SA_WINDOW;
    const int window_finals = v->first_final < SA_WINDOW;
    uint32_t ext = (uint32_t)(state[SA_STATE_EXT] > v->levels ? v->levels : state[SA_STATE_EXT]);
    if (ext < SA_WINDOW) ext = SA_WINDOW;
    const uint64_t *restrict F = v->F;
    const uint64_t *restrict masks = v->masks;
    const uint16_t *class_of = v->class_of;
    const size_t stride = v->stride;
    for (size_t i = 0; i < len; i++) {
        const uint64_t *restrict M = masks + (size_t)class_of[text[i]] * stride;
        if (has_deep) {
            uint64_t carry = 0;
            for (uint32_t g = 0; g < G; g++) carry |= win[WG - G + g];
            if (SA_UNLIKELY(carry != 0 || ext > SA_WINDOW)) {
                for (uint32_t g = 0; g < G; g++) D[WG - G + g] = win[WG - G + g];
                ext = sa_step_deep(v, G, D, M, ext, rep, pos0 + i + 1);
            }
        }
        /* Level by level, groups ascending inside a level: one vector op
           per level when G is the vector width. */
        if (G <= 4) {
            for (size_t j = SA_WINDOW - 1; j > 0; j--)
                for (uint32_t g = 0; g < G; g++) win[j * G + g] = win[(j - 1) * G + g] & M[j * G + g];
        } else {
            /* Wide levels are a multiple of 4 words: fixed 4-word chunks
               vectorise without a runtime trip count. */
            for (size_t j = SA_WINDOW - 1; j > 0; j--)
                for (uint32_t g = 0; g < G; g += 4)
                    for (uint32_t k = 0; k < 4; k++) win[j * G + g + k] = win[(j - 1) * G + g + k] & M[j * G + g + k];
        }
        for (uint32_t g = 0; g < G; g++) win[g] = M[g];
        if (window_finals) {
            uint64_t acc = 0;
            for (size_t x = 0; x < WG; x++) acc |= win[x] & F[x];
            if (SA_UNLIKELY(acc != 0)) {
                if (win != D) memcpy(D, win, WG * sizeof *D);
                sa_report_levels(rep, D, F, 0, WG, G, pos0 + i + 1);
            }
        }
    }
    if (win != D) memcpy(D, win, WG * sizeof *D);
    state[SA_STATE_EXT] = ext;
}

/* One group: the window is eight scalars, spelled out so that they stay in
   registers whatever the compiler's unrolling heuristics. */
static void sa_scan_levels_1(const sa_levels_view *v, uint64_t *state, const uint8_t *restrict text, size_t len,
                             uint64_t pos0, const sa_reporter *rep) {
    uint64_t *restrict D = state + SA_STATE_HEAD;
    const uint64_t *restrict F = v->F;
    const uint64_t *restrict masks = v->masks;
    const uint16_t *class_of = v->class_of;
    const size_t stride = v->stride;
    const int has_deep = v->levels > SA_WINDOW;
    const int window_finals = v->first_final < SA_WINDOW;
    uint32_t ext = (uint32_t)(state[SA_STATE_EXT] > v->levels ? v->levels : state[SA_STATE_EXT]);
    if (ext < SA_WINDOW) ext = SA_WINDOW;
    uint64_t d0 = D[0], d1 = D[1], d2 = D[2], d3 = D[3], d4 = D[4], d5 = D[5], d6 = D[6], d7 = D[7];
    for (size_t i = 0; i < len; i++) {
        const uint64_t *restrict M = masks + (size_t)class_of[text[i]] * stride;
        if (has_deep && SA_UNLIKELY((d7 != 0) | (ext > SA_WINDOW))) {
            D[7] = d7;
            ext = sa_step_deep(v, 1, D, M, ext, rep, pos0 + i + 1);
        }
        d7 = d6 & M[7];
        d6 = d5 & M[6];
        d5 = d4 & M[5];
        d4 = d3 & M[4];
        d3 = d2 & M[3];
        d2 = d1 & M[2];
        d1 = d0 & M[1];
        d0 = M[0];
        if (window_finals) {
            uint64_t acc = (d0 & F[0]) | (d1 & F[1]) | (d2 & F[2]) | (d3 & F[3]) | (d4 & F[4]) | (d5 & F[5]) |
                           (d6 & F[6]) | (d7 & F[7]);
            if (SA_UNLIKELY(acc != 0)) {
                D[0] = d0; D[1] = d1; D[2] = d2; D[3] = d3; D[4] = d4; D[5] = d5; D[6] = d6; D[7] = d7;
                sa_report_levels(rep, D, F, 0, SA_WINDOW, 1, pos0 + i + 1);
            }
        }
    }
    D[0] = d0; D[1] = d1; D[2] = d2; D[3] = d3; D[4] = d4; D[5] = d5; D[6] = d6; D[7] = d7;
    state[SA_STATE_EXT] = ext;
}

static void sa_scan_levels_2(const sa_levels_view *v, uint64_t *state, const uint8_t *text, size_t len,
                             uint64_t pos0, const sa_reporter *rep) {
    sa_scan_levels_g(v, 2, state, text, len, pos0, rep);
}
static void sa_scan_levels_4(const sa_levels_view *v, uint64_t *state, const uint8_t *text, size_t len,
                             uint64_t pos0, const sa_reporter *rep) {
    sa_scan_levels_g(v, 4, state, text, len, pos0, rep);
}
static void sa_scan_levels_n(const sa_levels_view *v, uint32_t G, uint64_t *state, const uint8_t *text,
                             size_t len, uint64_t pos0, const sa_reporter *rep) {
    sa_scan_levels_g(v, G, state, text, len, pos0, rep);
}

/* Runtime dispatch: the baseline build stays portable, AVX2 hosts step four
   words of a level at once. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define SA_HAVE_AVX2 1
__attribute__((target("avx2"))) static void sa_scan_levels_4_avx2(const sa_levels_view *v, uint64_t *state,
                                                                  const uint8_t *text, size_t len, uint64_t pos0,
                                                                  const sa_reporter *rep) {
    sa_scan_levels_g(v, 4, state, text, len, pos0, rep);
}
__attribute__((target("avx2"))) static void sa_scan_levels_n_avx2(const sa_levels_view *v, uint32_t G,
                                                                  uint64_t *state, const uint8_t *text, size_t len,
                                                                  uint64_t pos0, const sa_reporter *rep) {
    sa_scan_levels_g(v, G, state, text, len, pos0, rep);
}
#endif

void sm_sa_scan(const uint8_t *section, const sm_db_pattern *patterns, uint64_t *state,
                const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink, int avx2) {
    const sm_sa_header *h = (const sm_sa_header *)section;
    const uint64_t *masks = (const uint64_t *)(section + h->masks_off);
    const uint64_t *F = (const uint64_t *)(section + h->finals_off);
    sa_reporter rep = {(const uint32_t *)(section + h->out_index_off), (const uint32_t *)(section + h->out_list_off),
                       patterns, sink};
    if (h->layout == SM_SA_DENSE) {
        sa_scan_dense(h->class_of, masks, h->row_stride, *(const uint64_t *)(section + h->starts_off), F[0],
                      (const uint32_t *)(section + h->final_base_off), state + 1, text, len, pos0, &rep);
        return;
    }
    sa_levels_view v = {h->class_of, masks, F, h->row_stride, h->levels, h->first_final};
#ifdef SA_HAVE_AVX2
    if (h->group_words >= 4 && avx2) {
        if (h->group_words == 4) sa_scan_levels_4_avx2(&v, state, text, len, pos0, &rep);
        else sa_scan_levels_n_avx2(&v, h->group_words, state, text, len, pos0, &rep);
        return;
    }
#else
    (void)avx2;
#endif
    switch (h->group_words) {
    case 1: sa_scan_levels_1(&v, state, text, len, pos0, &rep); break;
    case 2: sa_scan_levels_2(&v, state, text, len, pos0, &rep); break;
    case 4: sa_scan_levels_4(&v, state, text, len, pos0, &rep); break;
    default: sa_scan_levels_n(&v, h->group_words, state, text, len, pos0, &rep); break;
    }
}
