/* Automaton scan: one table lookup per byte.
 *
 * Long texts are cut into STREAMS segments scanned in lockstep, so that the
 * independent lookups of the segments overlap in the load pipeline instead
 * of waiting on each other. Segment k > 0 starts at the root at its first
 * byte: from there the automaton reports exactly the hits that start at or
 * after that byte. It runs max_depth - 1 bytes past its end, so that every
 * hit starting inside it ends inside its run, and drops the hits that start
 * in the next segment (which reports them itself). Segment 0 starts from the
 * carried state. The last segment is at least max_depth bytes long, and an
 * automaton that has read max_depth bytes from the root is in the same
 * state as one that read the whole text, so the final state is exact.
 */
#include "engines/automaton/ac_private.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define STREAMS 8 /* the lockstep loop and transpose() are written for 8 */
/* Below this many bytes per segment the set-up is not worth it. */
#define MIN_SEGMENT 1024u

typedef struct {
    const uint32_t *delta, *out_index, *out_list;
    const uint16_t *class_of;
    const sm_db_pattern *patterns;
    sm_ac_divider div;
    uint32_t max_depth;
    uint32_t columns;
    int ssse3;          /* classes may be mapped 16 bytes at a time */
} ac_view;

/* Reports the outputs of the state at delta offset `at` for a hit ending at
   absolute position end, keeping only starts below limit. Out of line so
   that the scanning loops stay small. */
__attribute__((noinline)) static void report(const ac_view *v, uint32_t at, uint64_t end, uint64_t limit,
                                             sm_sink *sink) {
    uint32_t s = sm_ac_divide(v->div, at);
    uint32_t i = v->out_index[s], n = v->out_index[s + 1];
    uint64_t hi = limit < sink->own_hi ? limit : sink->own_hi;
    if (sink->counts && end >= v->max_depth && end - v->max_depth >= sink->own_lo && end <= hi) {
        /* Every output starts in [end - max_depth, end - 1]: all are owned. */
        if (sink->visits) {
            sink->visits[s]++;
            return;
        }
        for (; i < n; i++) sink->counts[v->out_list[i] >> 1]++;
        return;
    }
    for (; i < n; i++) {
        uint32_t id = v->out_list[i];
        /* A key longer than the text read so far can only come from a crafted
           database whose automaton disagrees with its pattern table: skip it
           rather than wrap the start around. */
        if (v->patterns[id >> 1].length > end) continue;
        uint64_t start = end - v->patterns[id >> 1].length;
        if (start >= hi) continue;
        sm_sink_add(sink, start, end, id >> 1, (int)(id & 1), 0);
    }
}

/* text[0, len) at absolute position pos0, from delta offset *at. */
static void scan_single(const ac_view *v, uint32_t *at, const uint8_t *text, size_t len, uint64_t pos0,
                        uint64_t limit, sm_sink *sink) {
    const uint32_t *delta = v->delta;
    const uint16_t *class_of = v->class_of;
    uint32_t s = *at;
    for (size_t i = 0; i < len; i++) {
        uint32_t e = delta[s + class_of[text[i]]];
        s = e & SM_AC_TARGET_MASK;
        if (__builtin_expect((e & SM_AC_OUT_FLAG) != 0, 0)) report(v, s, pos0 + i + 1, limit, sink);
    }
    *at = s;
}

/* Positions per stream in one block. */
#define BLOCK 256

/* Reports the flagged entries of one block: entries[k * BLOCK + i] is the
   entry stream k loaded at block position i. */
static void flush_block(const ac_view *v, const uint32_t *entries, const size_t *first, size_t blk, size_t nb,
                        uint64_t pos0, const uint64_t *limit, sm_sink *sink) {
    /* Collect the flagged slots without a branch per group of entries: hit
       rates of a few percent make such branches mispredict often. First a
       bitmap of the flags (bit k * BLOCK + i for stream k, position i), then
       a walk over its set bits. */
    uint64_t bits[STREAMS * BLOCK / 64];
    memset(bits, 0, sizeof bits);
    uint8_t *mask_bytes = (uint8_t *)bits;
    for (int k = 0; k < STREAMS; k++) {
        const uint32_t *e = &entries[k * BLOCK];
        uint8_t *mb = mask_bytes + k * (BLOCK / 8);
        size_t i = 0;
#if defined(__SSE2__)
        /* Signed saturating packs keep each entry's flag (its sign bit):
           16 flags per movemask. */
        for (; i + 16 <= nb; i += 16) {
            __m128i a = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(e + i)),
                                        _mm_loadu_si128((const __m128i *)(e + i + 4)));
            __m128i b = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(e + i + 8)),
                                        _mm_loadu_si128((const __m128i *)(e + i + 12)));
            uint16_t m = (uint16_t)_mm_movemask_epi8(_mm_packs_epi16(a, b));
            memcpy(mb + i / 8, &m, 2);
        }
#endif
        for (; i < nb; i++) mb[i / 8] |= (uint8_t)((e[i] >> 31) << (i % 8));
    }
    uint16_t flagged[STREAMS * BLOCK];
    size_t n = 0;
    for (size_t w = 0; w < STREAMS * BLOCK / 64; w++) {
        uint64_t b = bits[w];
        while (b) {
            flagged[n++] = (uint16_t)(w * 64 + (unsigned)__builtin_ctzll(b));
            b &= b - 1;
        }
    }
    if (!n) return;
    /* In count mode with every hit of the block owned, count without the
       per-hit range checks. */
    int simple = sink->counts != NULL;
    for (int k = 0; k < STREAMS && simple; k++) {
        uint64_t lo_end = pos0 + first[k] + blk + 1, hi_end = pos0 + first[k] + blk + nb;
        uint64_t hi = limit[k] < sink->own_hi ? limit[k] : sink->own_hi;
        simple = lo_end >= v->max_depth && lo_end - v->max_depth >= sink->own_lo && hi_end <= hi;
    }
    if (simple) {
        /* Two passes, so that the loads of many hits are in flight at once
           instead of each hit's chain of dependent loads in turn. */
        uint64_t *counts = sink->counts;
        if (sink->visits) {
            /* One increment per hit state, folded into patterns later. */
            uint32_t *visits = sink->visits;
            for (size_t j = 0; j < n; j++) visits[sm_ac_divide(v->div, entries[flagged[j]])]++;
            return;
        }
        uint32_t span[STREAMS * BLOCK];
        for (size_t j = 0; j < n; j++) span[j] = sm_ac_divide(v->div, entries[flagged[j]]);
        for (size_t j = 0; j < n; j++) {
            uint32_t o = v->out_index[span[j]], end = v->out_index[span[j] + 1];
            do counts[v->out_list[o] >> 1]++;
            while (++o < end);
        }
        return;
    }
    for (size_t j = 0; j < n; j++) {
        unsigned k = flagged[j] / BLOCK, i = flagged[j] % BLOCK;
        report(v, entries[flagged[j]] & SM_AC_TARGET_MASK, pos0 + first[k] + blk + i + 1, limit[k], sink);
    }
}

/* Lays out nb bytes of each stream position by position: out[i * 8 + k] =
   streams[k][i], so the lockstep loop reads all streams through one index. */
static void transpose(const uint8_t *const *streams, size_t nb, uint8_t *out) {
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 8 <= nb; i += 8) {
        __m128i r0 = _mm_loadl_epi64((const __m128i *)(streams[0] + i));
        __m128i r1 = _mm_loadl_epi64((const __m128i *)(streams[1] + i));
        __m128i r2 = _mm_loadl_epi64((const __m128i *)(streams[2] + i));
        __m128i r3 = _mm_loadl_epi64((const __m128i *)(streams[3] + i));
        __m128i r4 = _mm_loadl_epi64((const __m128i *)(streams[4] + i));
        __m128i r5 = _mm_loadl_epi64((const __m128i *)(streams[5] + i));
        __m128i r6 = _mm_loadl_epi64((const __m128i *)(streams[6] + i));
        __m128i r7 = _mm_loadl_epi64((const __m128i *)(streams[7] + i));
        __m128i b0 = _mm_unpacklo_epi8(r0, r1), b1 = _mm_unpacklo_epi8(r2, r3);
        __m128i b2 = _mm_unpacklo_epi8(r4, r5), b3 = _mm_unpacklo_epi8(r6, r7);
        __m128i c0 = _mm_unpacklo_epi16(b0, b1), c1 = _mm_unpackhi_epi16(b0, b1);
        __m128i c2 = _mm_unpacklo_epi16(b2, b3), c3 = _mm_unpackhi_epi16(b2, b3);
        _mm_storeu_si128((__m128i *)(out + i * 8), _mm_unpacklo_epi32(c0, c2));
        _mm_storeu_si128((__m128i *)(out + i * 8 + 16), _mm_unpackhi_epi32(c0, c2));
        _mm_storeu_si128((__m128i *)(out + i * 8 + 32), _mm_unpacklo_epi32(c1, c3));
        _mm_storeu_si128((__m128i *)(out + i * 8 + 48), _mm_unpackhi_epi32(c1, c3));
    }
#endif
    for (; i < nb; i++)
        for (int k = 0; k < STREAMS; k++) out[i * 8 + k] = streams[k][i];
}

/* One block of the eight streams in lockstep: stream k reads
   bytes[i * 8 + k] and stores the entry it loads in entries[k * BLOCK + i].
   Entries are stored unconditionally and checked afterwards, so no branch
   on the hit flag sits in this loop. A separate function keeps the eight
   offsets in registers (full width: no zero extension on the chains). */
__attribute__((noinline)) static void lockstep(const uint32_t *delta, const uint16_t *class_of,
                                               const uint8_t *bytes, size_t nb, uint32_t *entries,
                                               size_t st[STREAMS]) {
    size_t s0 = st[0], s1 = st[1], s2 = st[2], s3 = st[3], s4 = st[4], s5 = st[5], s6 = st[6], s7 = st[7];
    for (size_t i = 0; i < nb; i++) {
        const uint8_t *b = &bytes[i * 8];
        s0 = delta[s0 + class_of[b[0]]];
        entries[i] = (uint32_t)s0;
        s0 &= SM_AC_TARGET_MASK;
        s1 = delta[s1 + class_of[b[1]]];
        entries[BLOCK + i] = (uint32_t)s1;
        s1 &= SM_AC_TARGET_MASK;
        s2 = delta[s2 + class_of[b[2]]];
        entries[2 * BLOCK + i] = (uint32_t)s2;
        s2 &= SM_AC_TARGET_MASK;
        s3 = delta[s3 + class_of[b[3]]];
        entries[3 * BLOCK + i] = (uint32_t)s3;
        s3 &= SM_AC_TARGET_MASK;
        s4 = delta[s4 + class_of[b[4]]];
        entries[4 * BLOCK + i] = (uint32_t)s4;
        s4 &= SM_AC_TARGET_MASK;
        s5 = delta[s5 + class_of[b[5]]];
        entries[5 * BLOCK + i] = (uint32_t)s5;
        s5 &= SM_AC_TARGET_MASK;
        s6 = delta[s6 + class_of[b[6]]];
        entries[6 * BLOCK + i] = (uint32_t)s6;
        s6 &= SM_AC_TARGET_MASK;
        s7 = delta[s7 + class_of[b[7]]];
        entries[7 * BLOCK + i] = (uint32_t)s7;
        s7 &= SM_AC_TARGET_MASK;
    }
    st[0] = s0, st[1] = s1, st[2] = s2, st[3] = s3, st[4] = s4, st[5] = s5, st[6] = s6, st[7] = s7;
}

/* The same loop over bytes already mapped to classes: one load fewer per
   byte, which is what bounds this loop. */
__attribute__((noinline)) static void lockstep_classes(const uint32_t *delta, const uint8_t *classes, size_t nb,
                                                       uint32_t *entries, size_t st[STREAMS]) {
    size_t s0 = st[0], s1 = st[1], s2 = st[2], s3 = st[3], s4 = st[4], s5 = st[5], s6 = st[6], s7 = st[7];
    for (size_t i = 0; i < nb; i++) {
        const uint8_t *c = &classes[i * 8];
        s0 = delta[s0 + c[0]];
        entries[i] = (uint32_t)s0;
        s0 &= SM_AC_TARGET_MASK;
        s1 = delta[s1 + c[1]];
        entries[BLOCK + i] = (uint32_t)s1;
        s1 &= SM_AC_TARGET_MASK;
        s2 = delta[s2 + c[2]];
        entries[2 * BLOCK + i] = (uint32_t)s2;
        s2 &= SM_AC_TARGET_MASK;
        s3 = delta[s3 + c[3]];
        entries[3 * BLOCK + i] = (uint32_t)s3;
        s3 &= SM_AC_TARGET_MASK;
        s4 = delta[s4 + c[4]];
        entries[4 * BLOCK + i] = (uint32_t)s4;
        s4 &= SM_AC_TARGET_MASK;
        s5 = delta[s5 + c[5]];
        entries[5 * BLOCK + i] = (uint32_t)s5;
        s5 &= SM_AC_TARGET_MASK;
        s6 = delta[s6 + c[6]];
        entries[6 * BLOCK + i] = (uint32_t)s6;
        s6 &= SM_AC_TARGET_MASK;
        s7 = delta[s7 + c[7]];
        entries[7 * BLOCK + i] = (uint32_t)s7;
        s7 &= SM_AC_TARGET_MASK;
    }
    st[0] = s0, st[1] = s1, st[2] = s2, st[3] = s3, st[4] = s4, st[5] = s5, st[6] = s6, st[7] = s7;
}

/* Byte-to-class mapping with shuffles instead of table loads, possible when
   the classes (at most 8 besides class 0) are a product of a condition on
   the high nibble and one on the low nibble, as for DNA letters in either
   case: each class gets one bit; hi[b >> 4] & lo[b & 15] is that bit for a
   byte of the class and 0 otherwise; two more shuffles turn the bit into
   the class number. */
typedef struct {
    uint8_t lo[16], hi[16], bit_lo[16], bit_hi[16];
} nibble_map;

static int make_nibble_map(const uint16_t *class_of, uint32_t columns, nibble_map *m) {
    if (columns > 9) return 0;
    memset(m, 0, sizeof *m);
    for (int b = 0; b < 256; b++) {
        if (!class_of[b]) continue;
        uint8_t bit = (uint8_t)(1u << (class_of[b] - 1));
        m->lo[b & 15] |= bit;
        m->hi[b >> 4] |= bit;
    }
    for (int b = 0; b < 256; b++) {
        uint8_t got = m->hi[b >> 4] & m->lo[b & 15];
        uint8_t want = class_of[b] ? (uint8_t)(1u << (class_of[b] - 1)) : 0;
        if (got != want) return 0;
    }
    for (unsigned c = 1; c <= 8; c++) {
        uint8_t bit = (uint8_t)(1u << (c - 1));
        if (c <= 4) m->bit_lo[bit] = (uint8_t)c;
        else m->bit_hi[bit >> 4] = (uint8_t)c;
    }
    return 1;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SM_HAVE_NIBBLE_MAP 1

/* Maps n bytes (a multiple of 16) to classes in place. Chosen at run time:
   the default build targets plain x86-64. */
__attribute__((target("ssse3"))) static void map_classes(const nibble_map *m, uint8_t *bytes, size_t n) {
    const __m128i lo = _mm_loadu_si128((const __m128i *)m->lo), hi = _mm_loadu_si128((const __m128i *)m->hi);
    const __m128i blo = _mm_loadu_si128((const __m128i *)m->bit_lo);
    const __m128i bhi = _mm_loadu_si128((const __m128i *)m->bit_hi);
    const __m128i nib = _mm_set1_epi8(15);
    for (size_t i = 0; i < n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i bits = _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(x, nib)),
                                     _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(x, 4), nib)));
        __m128i c = _mm_or_si128(_mm_shuffle_epi8(blo, _mm_and_si128(bits, nib)),
                                 _mm_shuffle_epi8(bhi, _mm_and_si128(_mm_srli_epi16(bits, 4), nib)));
        _mm_storeu_si128((__m128i *)(bytes + i), c);
    }
}

#else
static void map_classes(const nibble_map *m, uint8_t *bytes, size_t n) {
    (void)m, (void)bytes, (void)n;
}
#endif

static void scan_streams(const ac_view *v, uint32_t *at, const uint8_t *text, size_t len, uint64_t pos0,
                         sm_sink *sink) {
    size_t seg = len / STREAMS, overrun = v->max_depth ? v->max_depth - 1 : 0;
    size_t first[STREAMS], stop[STREAMS];
    uint64_t limit[STREAMS];
    uint32_t s[STREAMS];
    size_t common = SIZE_MAX;
    for (int k = 0; k < STREAMS; k++) {
        first[k] = (size_t)k * seg;
        size_t next = k + 1 < STREAMS ? (size_t)(k + 1) * seg : len;
        stop[k] = k + 1 < STREAMS ? (next + overrun < len ? next + overrun : len) : len;
        limit[k] = k + 1 < STREAMS ? pos0 + next : UINT64_MAX;
        s[k] = k ? 0 : *at;
        if (stop[k] - first[k] < common) common = stop[k] - first[k];
    }
    const uint32_t *delta = v->delta;
    const uint16_t *class_of = v->class_of;
    nibble_map nmap;
    int mapped = v->columns <= 9 && v->ssse3 && make_nibble_map(class_of, v->columns, &nmap);
    size_t st[STREAMS];
    for (int k = 0; k < STREAMS; k++) st[k] = s[k];
    uint32_t entries[STREAMS * BLOCK];
    uint8_t bytes[STREAMS * BLOCK];
    for (size_t blk = 0; blk < common; blk += BLOCK) {
        size_t nb = common - blk < BLOCK ? common - blk : BLOCK;
        const uint8_t *streams[STREAMS];
        for (int k = 0; k < STREAMS; k++) streams[k] = text + first[k] + blk;
        transpose(streams, nb, bytes);
        if (mapped) {
            map_classes(&nmap, bytes, (nb * STREAMS + 15) & ~(size_t)15);
            lockstep_classes(delta, bytes, nb, entries, st);
        } else {
            lockstep(delta, class_of, bytes, nb, entries, st);
        }
        flush_block(v, entries, first, blk, nb, pos0, limit, sink);
    }
    for (int k = 0; k < STREAMS; k++) s[k] = (uint32_t)st[k];
    for (int k = 0; k < STREAMS; k++)
        scan_single(v, &s[k], text + first[k] + common, stop[k] - first[k] - common, pos0 + first[k] + common,
                    limit[k], sink);
    *at = s[STREAMS - 1];
}

void sm_ac_scan_variant(const uint8_t *section, const sm_db_pattern *patterns, uint32_t *state,
                        const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink, int ssse3) {
    const sm_ac_header *h = (const sm_ac_header *)section;
    ac_view v;
    v.delta = (const uint32_t *)(section + h->delta_off);
    v.out_index = (const uint32_t *)(section + h->out_index_off);
    v.out_list = (const uint32_t *)(section + h->out_list_off);
    v.class_of = h->class_of;
    v.patterns = patterns;
    v.div = sm_ac_divider_for(h->columns);
    v.max_depth = h->max_depth;
    v.columns = h->columns;
#if defined(SM_HAVE_NIBBLE_MAP)
    v.ssse3 = ssse3;
#else
    v.ssse3 = 0;
    (void)ssse3;
#endif
    uint32_t at = *state * h->columns;
    size_t seg = len / STREAMS;
    if (seg >= MIN_SEGMENT && seg >= h->max_depth)
        scan_streams(&v, &at, text, len, pos0, sink);
    else
        scan_single(&v, &at, text, len, pos0, UINT64_MAX, sink);
    *state = sm_ac_divide(v.div, at);
}

void sm_ac_scan(const uint8_t *section, const sm_db_pattern *patterns, uint32_t *state,
                const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    sm_ac_scan_variant(section, patterns, state, text, len, pos0, sink, sm_cpu()->ssse3);
}

void sm_ac_fold_visits(const uint8_t *section, uint32_t *visits, uint64_t *counts) {
    const sm_ac_header *h = (const sm_ac_header *)section;
    const uint32_t *out_index = (const uint32_t *)(section + h->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h->out_list_off);
    for (uint32_t s = 0; s < h->states; s++) {
        uint32_t n = visits[s];
        if (!n) continue;
        visits[s] = 0;
        for (uint32_t i = out_index[s]; i < out_index[s + 1]; i++) counts[out_list[i] >> 1] += n;
    }
}
