/* Many whole records parsed and stripped on a team's threads (records.h).
 *
 * The window is cut into parts at line starts, a few per thread, and each
 * part, a task of phase 1, strips what it reads straight into dst at the
 * offset of its own raw bytes (a record keeps at most the bytes it is made
 * of, so no part writes where another does): FASTA parts find their header
 * lines (a '>' starting a line always starts a record) and strip every
 * piece of a record, so that a long record's lines are stripped on every
 * thread; FASTQ parts parse whole records from the first line of the part
 * that reads as a record followed by another (a quality line may start
 * with '@'; the trial's bytes go to a scratch buffer), each record checked
 * as the serial reader checks it. The join, on the caller, walks the parts
 * in order: a FASTQ part's first record must start where the previous
 * part's last one ended (else the parts from it on are not taken: a wrong
 * guess costs a shorter batch, never wrong output); whole records are
 * taken, each at the offset of its first piece, so the records lie in dst
 * with the gaps their line ends and headers left between them. Phase 2
 * moves the later pieces of the records that cross parts up against their
 * first one. A byte the serial reader must see (a \r, a bad byte, a
 * truncated record) stops its part: the records before it are taken, the
 * rest is left to the serial reader. */
#include "io/records.h"

#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "io/seqio.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RECORDS_X86 1
/* as in reader.c: a mapped file's next pages asked for ahead of the loads */
#define PREFETCH_AHEAD 2048
#endif

#define PART_MIN ((size_t)16 << 10) /* raw bytes per part, at least */
#define PARTS_PER_THREAD 4
#define PARTS_MAX 256

typedef struct {
    size_t start, end;          /* raw bytes [start, end): a header line and its sequence, or a piece of sequence */
    size_t name_off, name_len;  /* header items */
    size_t out, kept;           /* its sequence bytes, at dst + out (in the trial's scratch: an offset there) */
    uint64_t lines;             /* \n in [start, end) */
    int header;                 /* starts a record (else: continues the one before) */
    int take;
} rec_item;

/* Where a part's stripped bytes go: dst from an offset on (no store
   reaches past the part's own raw bytes), or a scratch buffer that grows. */
typedef struct {
    uint8_t *p;
    size_t len, cap;            /* cap SIZE_MAX: dst */
    size_t whole_until;         /* dst: raw offset up to which whole vectors may be stored */
} rec_out;

typedef struct {
    size_t a, b;                /* lines starting in [a, b) are this part's */
    size_t first;               /* FASTQ: its first record's start (SIZE_MAX: none) */
    rec_item *items;
    size_t n, cap;
    int stop;                   /* stopped before b: the next item holds what the serial reader must see */
    int incomplete;             /* FASTQ: ... or runs past the window */
    uint64_t prefix_lines;      /* the first part: blank lines before the first record (FASTQ) */
    rec_out trial;              /* FASTQ: a guessed first record's bytes */
} rec_part;

/* A record of several parts (FASTA): its pieces moved together in phase 2. */
typedef struct {
    size_t k0, j0, k1, j1;      /* its items, [k0/j0, k1/j1) in part order */
} rec_span;

struct sm_records_parser {
    rec_part parts[PARTS_MAX];
    size_t nparts;
    sm_records_job *job;
    size_t wend;
    int vector;                 /* 2 AVX-512 with VBMI2's compress, 1 AVX2, 0 plain */
    size_t *lens, *offs, *name_offs, *name_lens;
    const char **names;
    size_t rec_cap;
    rec_span *spans;
    size_t nspans, spans_cap;
    char *arena;
    size_t arena_cap;
};

static inline int keep_byte(uint8_t c) {
    return ((unsigned)((c | 0x20) - 'a') < 26u) || c == '-' || c == '.' || c == '*';
}

/* ------------------------------------------------------------ the loops */

/* Room for 64 more bytes past what o holds (a scratch buffer grows; dst
   always has it). 0, or -1 out of memory. */
static int out_room(rec_out *o) {
    if (o->len + 64 <= o->cap) return 0;
    size_t cap = o->cap ? o->cap * 2 : (size_t)1 << 16;
    while (cap < o->len + 64) cap *= 2;
    uint8_t *q = realloc(o->p, cap);
    if (!q) return -1;
    o->p = q;
    o->cap = cap;
    return 0;
}

/* Sequence lines from i (a line start) up to the marker starting a line or
   end, their kept bytes appended to o: the marker's offset or end, with the
   \n counted added to *lines; SIZE_MAX at a byte that is not a sequence
   byte, blank or \n (or out of memory). In dst no loop stores past the
   raw bytes read so far (a byte kept never lies past its raw offset), nor
   near the part's end past the bytes kept: parts write side by side. */

/* Room for n more bytes and 64 past them (out_room's, for a whole line). */
static int out_reserve(rec_out *o, size_t n) {
    if (o->len + n + 64 <= o->cap) return 0;
    size_t cap = o->cap ? o->cap * 2 : (size_t)1 << 16;
    while (cap < o->len + n + 64) cap *= 2;
    uint8_t *q = realloc(o->p, cap);
    if (!q) return -1;
    o->p = q;
    o->cap = cap;
    return 0;
}

/* Whether the n bytes at p are all kept bytes: 16 at a time with SSE2 (the
   x86-64 baseline), else in a loop without branches, which compilers
   vectorise. */
static inline int all_kept(const uint8_t *p, size_t n) {
    size_t k = 0;
    unsigned odd = 0;
#ifdef RECORDS_X86
    const __m128i fold = _mm_set1_epi8(0x20), below = _mm_set1_epi8('a' - 1), above = _mm_set1_epi8('z' + 1);
    const __m128i dash = _mm_set1_epi8('-'), dot = _mm_set1_epi8('.'), star = _mm_set1_epi8('*');
    for (; k + 16 <= n; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + k)), low = _mm_or_si128(v, fold);
        /* signed compares: bytes >= 0x80 are no letters */
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(low, below), _mm_cmpgt_epi8(above, low));
        ok = _mm_or_si128(ok, _mm_or_si128(_mm_cmpeq_epi8(v, dash),
                                           _mm_or_si128(_mm_cmpeq_epi8(v, dot), _mm_cmpeq_epi8(v, star))));
        if (_mm_movemask_epi8(ok) != 0xffff) return 0;
    }
#endif
    for (; k < n; k++) {
        unsigned c = p[k];
        odd |= ((c | 0x20u) - 'a' >= 26u) & (c != '-') & (c != '.') & (c != '*');
    }
    return !odd;
}

/* Without SIMD (and at the SSE2 level): a line at a time, its end found by
   memchr (the C library's vector search on every machine); a line of kept
   bytes only, as nearly all are, checked in a loop the compiler vectorises
   and copied whole, any other byte by byte. Only the line's kept bytes are
   stored. */
static size_t seq_strip_plain(const uint8_t *p, size_t i, size_t end, uint8_t marker, rec_out *o, uint64_t *lines) {
    uint64_t l = 0;
    while (i < end && p[i] != marker) {
        const uint8_t *nl = memchr(p + i, '\n', end - i);
        size_t stop = nl ? (size_t)(nl - p) : end;
        if (out_reserve(o, stop - i) < 0) return SIZE_MAX;
        uint8_t *out = o->p + o->len;
        if (all_kept(p + i, stop - i)) {
            memcpy(out, p + i, stop - i);
            out += stop - i;
        } else {
            for (size_t k = i; k < stop; k++) {
                uint8_t c = p[k];
                if (keep_byte(c)) *out++ = c;
                else if (c != ' ' && c != '\t') return SIZE_MAX;
            }
        }
        o->len = (size_t)(out - o->p);
        if (!nl) {
            i = end;
            break;
        }
        l++;
        i = stop + 1;
    }
    *lines += l;
    return i;
}

static int quality_plain(const uint8_t *p, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++)
        if (p[i] < '!' || p[i] > '~') return 0;
    return 1;
}

#ifdef RECORDS_X86
/* 64 bytes a step: the kept bytes compressed in a register (the memory
   form of the compress is slow on some CPUs) and stored whole, or under a
   mask near the part's end. The input has 64 readable bytes past its end. */
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt,bmi"))) static size_t
seq_strip_avx512(const uint8_t *p, size_t i, size_t end, uint8_t marker, rec_out *o, uint64_t *lines) {
    /* A whole vector may be stored (past the bytes kept, to be written over)
       while it stays before what the next part writes: in dst a byte kept
       never lies past its raw offset. */
    size_t whole_until = o->cap == SIZE_MAX ? o->whole_until : SIZE_MAX;
    uint64_t l = 0, carry = 1; /* p[i] starts a line */
    const __m512i fold = _mm512_set1_epi8(0x20), a = _mm512_set1_epi8('a'), z = _mm512_set1_epi8('z');
    const __m512i lf = _mm512_set1_epi8('\n');
    if (out_room(o) < 0) return SIZE_MAX;
    uint8_t *out = o->p + o->len, *limit = o->cap == SIZE_MAX ? (uint8_t *)UINTPTR_MAX : o->p + o->cap - 64;
    for (; i < end; i += 64) {
        _mm_prefetch((const char *)p + i + PREFETCH_AHEAD, _MM_HINT_T0);
        if (out > limit) {
            o->len = (size_t)(out - o->p);
            if (out_room(o) < 0) return SIZE_MAX;
            out = o->p + o->len;
            limit = o->p + o->cap - 64;
        }
        size_t left = end - i;
        __mmask64 window = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
        __m512i v = _mm512_loadu_si512((const void *)(p + i));
        __m512i low = _mm512_or_si512(v, fold);
        __mmask64 keep = _mm512_cmpge_epu8_mask(low, a) & _mm512_cmple_epu8_mask(low, z) & window;
        __mmask64 nl = _mm512_cmpeq_epi8_mask(v, lf) & window;
        __mmask64 upto = window;
        __mmask64 at_marker = 0;
        if ((keep | nl) != window) {
            /* punctuation, blanks, the marker or a bad byte: the full classes */
            keep |= (_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('-')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('.')) |
                     _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('*'))) &
                    window;
            __mmask64 blank = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' ')) |
                              _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\t'));
            at_marker = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)marker)) & ((nl << 1) | carry) & window;
            if (at_marker) {
                unsigned m = (unsigned)__builtin_ctzll(at_marker);
                upto = m ? (((__mmask64)1 << m) - 1) : 0;
            }
            if (~(keep | nl | blank) & upto) return SIZE_MAX;
            keep &= upto;
        }
        if (keep == ~(__mmask64)0) {
            _mm512_storeu_si512((void *)out, v);
            out += 64;
        } else if (i + 64 <= whole_until) {
            _mm512_storeu_si512((void *)out, _mm512_maskz_compress_epi8(keep, v));
            out += _mm_popcnt_u64(keep);
        } else {
            size_t n = (size_t)_mm_popcnt_u64(keep);
            __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
            _mm512_mask_storeu_epi8((void *)out, m, _mm512_maskz_compress_epi8(keep, v));
            out += n;
        }
        l += (uint64_t)_mm_popcnt_u64(nl & upto);
        if (at_marker) {
            o->len = (size_t)(out - o->p);
            *lines += l;
            return i + (size_t)__builtin_ctzll(at_marker);
        }
        carry = nl >> 63;
    }
    o->len = (size_t)(out - o->p);
    *lines += l;
    return end;
}

__attribute__((target("avx2"))) static inline uint32_t keep_mask(__m256i v) {
    /* OR 0x20 folds upper to lower case; bytes >= 0x80 fail the signed compare */
    __m256i low = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    __m256i letters = _mm256_and_si256(_mm256_cmpgt_epi8(low, _mm256_set1_epi8('a' - 1)),
                                       _mm256_cmpgt_epi8(_mm256_set1_epi8('z' + 1), low));
    __m256i punct = _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('-')),
                                    _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('.')),
                                                    _mm256_cmpeq_epi8(v, _mm256_set1_epi8('*'))));
    return (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(letters, punct));
}

/* 32 bytes a step; a step of kept bytes only stored whole, else each run
   of them: away from the part's end as a whole 32-byte vector loaded at the
   run's start (the next run's store writes over its tail), near it copied
   exactly. */
__attribute__((target("avx2,popcnt,bmi"))) static size_t seq_strip_avx2(const uint8_t *p, size_t i, size_t end,
                                                                      uint8_t marker, rec_out *o, uint64_t *lines) {
    /* as in seq_strip_avx512: whole vectors while they stay before what the next part writes */
    size_t whole_until = o->cap == SIZE_MAX ? o->whole_until : SIZE_MAX;
    uint64_t l = 0;
    uint32_t carry = 1; /* p[i] starts a line */
    const __m256i lf = _mm256_set1_epi8('\n'), sp = _mm256_set1_epi8(' '), tab = _mm256_set1_epi8('\t');
    const __m256i mk = _mm256_set1_epi8((char)marker);
    for (; i < end; i += 32) {
        _mm_prefetch((const char *)p + i + PREFETCH_AHEAD, _MM_HINT_T0);
        size_t left = end - i;
        uint32_t window = left >= 32 ? ~0u : (1u << left) - 1;
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        uint32_t keep = keep_mask(v) & window;
        uint32_t nl = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, lf)) & window;
        uint32_t blank =
            (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, sp), _mm256_cmpeq_epi8(v, tab))) &
            window;
        uint32_t at_marker = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, mk)) & ((nl << 1) | carry) & window;
        uint32_t upto = window;
        if (at_marker) {
            unsigned m = (unsigned)__builtin_ctz(at_marker);
            upto = m ? (1u << m) - 1 : 0;
        }
        if (~(keep | nl | blank) & upto) return SIZE_MAX;
        keep &= upto;
        if (out_room(o) < 0) return SIZE_MAX;
        uint8_t *out = o->p + o->len;
        if (keep == ~0u) {
            _mm256_storeu_si256((__m256i *)out, v);
            out += 32;
        } else if (i + 64 <= whole_until) {
            /* a run from `from` stores 32 bytes at out <= its raw offset: within i + 63 */
            while (keep) {
                unsigned from = (unsigned)__builtin_ctz(keep);
                uint32_t rest = ~(keep >> from);
                unsigned run = rest ? (unsigned)__builtin_ctz(rest) : 32 - from;
                _mm256_storeu_si256((__m256i *)out, _mm256_loadu_si256((const __m256i *)(p + i + from)));
                out += run;
                keep = from + run >= 32 ? 0 : keep & (~0u << (from + run));
            }
        } else {
            while (keep) {
                unsigned from = (unsigned)__builtin_ctz(keep);
                uint32_t rest = ~(keep >> from);
                unsigned run = rest ? (unsigned)__builtin_ctz(rest) : 32 - from;
                memcpy(out, p + i + from, run);
                out += run;
                keep = from + run >= 32 ? 0 : keep & (~0u << (from + run));
            }
        }
        o->len = (size_t)(out - o->p);
        l += (uint64_t)__builtin_popcount(nl & upto);
        if (at_marker) {
            *lines += l;
            return i + (unsigned)__builtin_ctz(at_marker);
        }
        carry = nl >> 31;
    }
    *lines += l;
    return end;
}

__attribute__((target("avx2"))) static int quality_avx2(const uint8_t *p, size_t lo, size_t hi) {
    const __m256i low = _mm256_set1_epi8(' '), high = _mm256_set1_epi8(0x7f);
    for (size_t i = lo; i < hi; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        uint32_t ok = (uint32_t)_mm256_movemask_epi8(
            _mm256_and_si256(_mm256_cmpgt_epi8(v, low), _mm256_cmpgt_epi8(high, v)));
        size_t left = hi - i;
        uint32_t window = left >= 32 ? ~0u : (1u << left) - 1;
        if (~ok & window) return 0;
    }
    return 1;
}
#endif

#ifdef RECORDS_X86
/* Where last_header's byte loop starts: past the last vector holding a '>'
   (p[0, n] are readable). */
__attribute__((target("avx2"))) static size_t last_header_avx2(const uint8_t *p, size_t from, size_t n) {
    const __m256i gt = _mm256_set1_epi8('>');
    size_t i = n + 1;
    while (i >= from + 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i - 32));
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, gt))) return i;
        i -= 32;
    }
    return i;
}
#endif

/* The sequence of an item from i, its bytes kept appended to o. */
static size_t seq_strip(const sm_records_parser *ps, rec_out *o, size_t i, size_t end, uint8_t marker,
                        uint64_t *lines) {
#ifdef RECORDS_X86
    if (ps->vector == 2) return seq_strip_avx512(ps->job->p, i, end, marker, o, lines);
    if (ps->vector == 1) return seq_strip_avx2(ps->job->p, i, end, marker, o, lines);
#endif
    return seq_strip_plain(ps->job->p, i, end, marker, o, lines);
}

static int quality_ok(const sm_records_parser *ps, size_t lo, size_t hi) {
#ifdef RECORDS_X86
    if (ps->vector) return quality_avx2(ps->job->p, lo, hi);
#endif
    return quality_plain(ps->job->p, lo, hi);
}

/* The last '>' starting a line in p[from, n], or SIZE_MAX when none. A
   FASTA window holds few of them: searched from the end, a vector a step. */
static size_t last_header(const uint8_t *p, size_t from, size_t n) {
    size_t i = n + 1;
#ifdef RECORDS_X86
    if (sm_cpu()->avx2) i = last_header_avx2(p, from, n);
#endif
    while (i-- > from)
        if (p[i] == '>' && (i == 0 || p[i - 1] == '\n')) return i;
    return SIZE_MAX;
}

/* --------------------------------------------------------------- phase 1 */

static int push(rec_part *pt, const rec_item *it) {
    if (pt->n == pt->cap) {
        size_t cap = pt->cap ? pt->cap * 2 : 256;
        rec_item *q = realloc(pt->items, cap * sizeof *q);
        if (!q) return -1;
        pt->items = q;
        pt->cap = cap;
    }
    pt->items[pt->n++] = *it;
    return 0;
}

/* The header line at i (p[i] the marker): its name and the offset past its
   line end. 1, 0 when the serial reader must see it, 2 when it runs past
   wend before the input's end. */
static int header_line(const sm_records_parser *ps, size_t wend, size_t i, rec_item *it, size_t *next) {
    const sm_records_job *job = ps->job;
    const uint8_t *p = job->p;
    size_t j = i + 1;
    while (j < wend && !sm_name_end(p[j])) j++;
    if (j - i - 1 > job->name_max) return 0;
    if (j == wend) {
        if (wend < job->n) return 2;
    } else if (p[j] == 0 || p[j] == '\r') {
        return 0;
    }
    it->name_off = i + 1;
    it->name_len = j - i - 1;
    const uint8_t *nl = j < wend ? memchr(p + j, '\n', wend - j) : NULL;
    size_t e = nl ? (size_t)(nl - p) : wend;
    if (e > j && memchr(p + j, '\r', e - j)) return 0;
    if (!nl) {
        if (wend < job->n) return 2;
        *next = wend;
        return 1;
    }
    it->lines++;
    *next = e + 1;
    return 1;
}

/* A FASTA part: its lines, stripped to dst at the part's own offset. */
static void fasta_part(sm_records_parser *ps, rec_part *pt) {
    const uint8_t *p = ps->job->p;
    size_t i = pt->a, end = pt->b;
    rec_out o = {ps->job->dst + pt->a, 0, SIZE_MAX, pt->b};
    rec_item cur;
    memset(&cur, 0, sizeof cur);
    cur.start = i;
    cur.out = pt->a;
    while (i < end) {
        if (p[i] == '>') { /* i starts a line here, always */
            cur.end = i;
            cur.kept = pt->a + o.len - cur.out;
            if (push(pt, &cur) < 0) {
                pt->stop = 1;
                return;
            }
            memset(&cur, 0, sizeof cur);
            cur.header = 1;
            cur.start = i;
            size_t next = 0;
            if (header_line(ps, end, i, &cur, &next) != 1) {
                pt->stop = 1;
                return;
            }
            i = next;
            cur.out = pt->a + o.len;
            continue;
        }
        size_t s = seq_strip(ps, &o, i, end, '>', &cur.lines);
        if (s == SIZE_MAX) {
            pt->stop = 1;
            return;
        }
        i = s;
    }
    cur.end = end;
    cur.kept = pt->a + o.len - cur.out;
    if (push(pt, &cur) < 0) pt->stop = 1;
}

/* One FASTQ record at i (a line start), its sequence appended to o: 1 read,
   0 for the serial reader, 2 runs past the window before the input's end.
   Its end is past the blank bytes after it. it->kept is the bytes appended. */
static int fastq_record(const sm_records_parser *ps, rec_out *o, size_t i, rec_item *it) {
    const sm_records_job *job = ps->job;
    const uint8_t *p = job->p;
    size_t wend = ps->wend;
    int cut = wend < job->n ? 2 : 0;
    memset(it, 0, sizeof *it);
    it->header = 1;
    it->start = i;
    if (i >= wend) return cut;
    if (p[i] != '@') return 0;
    size_t next = 0;
    int h = header_line(ps, wend, i, it, &next);
    if (h != 1) return h;
    size_t before = o->len;
    size_t s = next < wend ? seq_strip(ps, o, next, wend, '+', &it->lines) : wend;
    if (s == SIZE_MAX) return 0;
    if (s == wend) return cut; /* no '+' line before the end */
    it->kept = o->len - before;
    /* a name after the '+' must be the record's own */
    size_t j = s + 1;
    while (j < wend && !sm_name_end(p[j])) j++;
    size_t w = j - s - 1;
    if (j == wend && wend < job->n) return 2;
    if (w && (w != it->name_len || memcmp(p + s + 1, p + it->name_off, w) != 0)) return 0;
    const uint8_t *nl = memchr(p + s, '\n', wend - s);
    if (!nl) return cut;
    if (memchr(p + s, '\r', (size_t)(nl - (p + s)))) return 0;
    it->lines++;
    size_t at = (size_t)(nl - p) + 1, qual = 0;
    int qlines = 0;
    do {
        if (at == wend) {
            if (cut) return 2;
            if (it->kept == 0 && qlines == 0) break; /* an empty record's quality line may be missing at the end */
            return 0;
        }
        const uint8_t *e = memchr(p + at, '\n', wend - at);
        if (!e && cut) return 2;
        size_t le = e ? (size_t)(e - p) : wend;
        if (!quality_ok(ps, at, le)) return 0;
        qual += le - at;
        qlines++;
        if (qual > it->kept) return 0;
        at = e ? le + 1 : wend;
        if (e) it->lines++;
    } while (qual < it->kept);
    while (at < wend && (p[at] == '\n' || p[at] == ' ' || p[at] == '\t')) {
        if (p[at] == '\n') it->lines++;
        at++;
    }
    it->end = at;
    return 1;
}

/* A FASTQ part: the records that start in it, stripped to dst from its
   first record's own offset on. */
static void fastq_part(sm_records_parser *ps, rec_part *pt, int first_part) {
    const uint8_t *p = ps->job->p;
    size_t i = pt->a;
    rec_item it;
    pt->first = SIZE_MAX;
    if (first_part) {
        while (i < ps->wend && (p[i] == '\n' || p[i] == ' ' || p[i] == '\t')) {
            if (p[i] == '\n') pt->prefix_lines++;
            i++;
        }
        pt->first = i;
    } else {
        /* the first line of the part that reads as a record followed by
           another (or the end); the trials' bytes go to the scratch, where
           a wrong guess can spoil nothing */
        for (size_t j = i; j < pt->b;) {
            pt->trial.len = 0;
            if (p[j] == '@' && fastq_record(ps, &pt->trial, j, &it) == 1 && (it.end == ps->wend || p[it.end] == '@')) {
                pt->first = j;
                break;
            }
            const uint8_t *nl = memchr(p + j, '\n', pt->b - j);
            if (!nl) break;
            j = (size_t)(nl - p) + 1;
        }
        if (pt->first == SIZE_MAX) return;
        i = pt->first;
    }
    rec_out o = {ps->job->dst + pt->first, 0, SIZE_MAX, pt->b};
    while (i < pt->b) {
        if (i > 0 && p[i - 1] != '\n') { /* a header must start its line */
            pt->stop = 1;
            return;
        }
        size_t at = o.len;
        int rc = fastq_record(ps, &o, i, &it);
        if (rc != 1) {
            pt->stop = 1;
            pt->incomplete = rc == 2;
            return;
        }
        it.out = pt->first + at;
        if (push(pt, &it) < 0) {
            pt->stop = 1;
            return;
        }
        i = it.end;
    }
}

static void phase1(void *arg, size_t k) {
    sm_records_parser *ps = arg;
    rec_part *pt = &ps->parts[k];
    pt->n = 0;
    pt->stop = pt->incomplete = 0;
    pt->prefix_lines = 0;
    if (ps->job->fastq) fastq_part(ps, pt, k == 0);
    else fasta_part(ps, pt);
}

/* --------------------------------------------------------------- phase 2 */

/* A record of several parts: each part's pieces of it moved up against
   what comes before (in order: a piece moves down onto bytes already
   moved). */
static void phase2(void *arg, size_t i) {
    sm_records_parser *ps = arg;
    const rec_span *sp = &ps->spans[i];
    uint8_t *dst = ps->job->dst;
    const rec_item *head = &ps->parts[sp->k0].items[sp->j0];
    size_t at = head->out;
    for (size_t k = sp->k0; k <= sp->k1 && k < ps->nparts; k++) {
        const rec_part *pt = &ps->parts[k];
        size_t from = k == sp->k0 ? sp->j0 : 0, to = k == sp->k1 ? sp->j1 : pt->n;
        if (from >= to) continue;
        /* a part's pieces of one record lie back to back */
        const rec_item *first = &pt->items[from], *last = &pt->items[to - 1];
        size_t bytes = last->out + last->kept - first->out;
        if (first->out != at) memmove(dst + at, dst + first->out, bytes);
        at += bytes;
    }
}

/* ------------------------------------------------------------- the join */

typedef struct {
    sm_records_parser *ps;
    size_t n;               /* records taken */
    size_t used;            /* raw bytes consumed */
    uint64_t lines;
} join_state;

static int reserve_records(sm_records_parser *ps, size_t n) {
    if (n <= ps->rec_cap) return 0;
    size_t cap = ps->rec_cap ? ps->rec_cap * 2 : 1024;
    while (cap < n) cap *= 2;
    size_t *a = realloc(ps->lens, cap * sizeof *a);
    if (a) ps->lens = a;
    size_t *o = realloc(ps->offs, cap * sizeof *o);
    if (o) ps->offs = o;
    size_t *b = realloc(ps->name_offs, cap * sizeof *b);
    if (b) ps->name_offs = b;
    size_t *c = realloc(ps->name_lens, cap * sizeof *c);
    if (c) ps->name_lens = c;
    const char **d = realloc(ps->names, cap * sizeof *d);
    if (d) ps->names = d;
    if (!a || !o || !b || !c || !d) return -1;
    ps->rec_cap = cap;
    return 0;
}

/* The record of items [k0/j0, k1/j1) (in part order; head its first) taken
   when it may be: at its first piece's offset, its later pieces to be moved
   there when it crosses parts. 0, or -1 (the join stops). */
static int take_record(join_state *js, size_t k0, size_t j0, size_t k1, size_t j1, size_t kept, uint64_t lines,
                       const rec_item *head) {
    sm_records_parser *ps = js->ps;
    if (js->n >= ps->job->max_records || reserve_records(ps, js->n + 1) < 0) return -1;
    if (k1 > k0 && !(k1 == k0 + 1 && j1 == 0)) {
        if (ps->nspans == ps->spans_cap) {
            size_t cap = ps->spans_cap ? ps->spans_cap * 2 : 64;
            rec_span *q = realloc(ps->spans, cap * sizeof *q);
            if (!q) return -1;
            ps->spans = q;
            ps->spans_cap = cap;
        }
        ps->spans[ps->nspans++] = (rec_span){k0, j0, k1, j1};
    }
    size_t end = head->end;
    for (size_t k = k0; k <= k1 && k < ps->nparts; k++) {
        rec_part *pt = &ps->parts[k];
        size_t from = k == k0 ? j0 : 0, to = k == k1 ? j1 : pt->n;
        for (size_t j = from; j < to; j++) {
            pt->items[j].take = 1;
            end = pt->items[j].end;
        }
    }
    ps->lens[js->n] = kept;
    ps->offs[js->n] = head->out;
    ps->name_offs[js->n] = head->name_off;
    ps->name_lens[js->n] = head->name_len;
    js->n++;
    js->lines += lines;
    js->used = end;
    return 0;
}

static void join_fasta(join_state *js) {
    sm_records_parser *ps = js->ps;
    sm_records_job *job = ps->job;
    int open = 0;
    size_t k0 = 0, j0 = 0, kept = 0;
    uint64_t lines = 0;
    const rec_item *head = NULL;
    for (size_t k = 0; k < ps->nparts; k++) {
        rec_part *pt = &ps->parts[k];
        for (size_t j = 0; j < pt->n; j++) {
            const rec_item *it = &pt->items[j];
            if (it->header) {
                if (open && take_record(js, k0, j0, k, j, kept, lines, head) < 0) return;
                open = 1;
                k0 = k, j0 = j, kept = it->kept, lines = it->lines, head = it;
            } else if (open) {
                kept += it->kept;
                lines += it->lines;
            } else if (it->kept == 0) {
                /* blank lines before the first record */
                js->lines += it->lines;
                js->used = it->end;
            } else {
                return; /* sequence before any header: the serial reader's message */
            }
        }
        if (pt->stop) return;
    }
    if (open && ps->wend == job->n) {
        take_record(js, k0, j0, ps->nparts, 0, kept, lines, head);
    } else if (open && js->n == 0) {
        job->need = SIZE_MAX; /* a longer window might hold it */
    }
}

static void join_fastq(join_state *js) {
    sm_records_parser *ps = js->ps;
    sm_records_job *job = ps->job;
    size_t expect = ps->parts[0].first, before_used = 0;
    uint64_t before_lines = 0;
    js->lines = ps->parts[0].prefix_lines;
    js->used = expect;
    for (size_t k = 0; k < ps->nparts; k++) {
        rec_part *pt = &ps->parts[k];
        if (k > 0 && pt->first != SIZE_MAX && pt->first < expect) {
            /* a wrong guess inside the record taken last, whose bytes it
               may have written over: that record is the serial reader's */
            if (js->n > 0) {
                js->n--;
                js->used = before_used;
                js->lines = before_lines;
            }
            return;
        }
        if (expect >= pt->b && !(k == 0 && pt->n)) continue; /* a record taken runs over it */
        if (pt->n == 0 || pt->items[0].start != expect) {
            if (k == 0 && js->n == 0 && pt->incomplete) job->need = SIZE_MAX;
            return;
        }
        for (size_t j = 0; j < pt->n; j++) {
            const rec_item *it = &pt->items[j];
            before_used = js->used;
            before_lines = js->lines;
            if (take_record(js, k, j, k, j + 1, it->kept, it->lines, it) < 0) return;
            expect = it->end;
        }
        if (pt->stop) return;
    }
}

size_t sm_records_parse(sm_records_parser *ps, sm_records_job *job) {
    job->records = 0;
    job->used = 0;
    job->lines = 0;
    job->need = 0;
    ps->job = job;
    const uint8_t *p = job->p;
    size_t wend = job->window < job->n ? job->window : job->n;
    if (wend < job->n) {
        /* the window ends at a line start */
        size_t i = wend;
        while (i > 0 && p[i - 1] != '\n') i--;
        if (i == 0) {
            job->need = SIZE_MAX;
            return 0;
        }
        wend = i;
        if (!job->fastq) {
            /* FASTA: before the last header, so that no record is parsed
               only to be left for the next window (looked for in the
               window's last quarter: before it, the search would cost
               about what it saves) */
            size_t h = last_header(p, wend - wend / 4, wend);
            if (h == 0) {
                job->need = SIZE_MAX;
                return 0;
            }
            if (h != SIZE_MAX) wend = h;
        }
    }
    if (wend == 0) return 0;
    ps->wend = wend;
    size_t nparts = job->threads > 1 ? job->threads * PARTS_PER_THREAD : 1;
    if (nparts > wend / PART_MIN) nparts = wend / PART_MIN;
    if (nparts < 1) nparts = 1;
    if (nparts > PARTS_MAX) nparts = PARTS_MAX;
    /* part k's lines start in [a_k, a_{k+1}) */
    size_t prev = 0;
    for (size_t k = 0; k < nparts; k++) {
        size_t lo = k == 0 ? 0 : wend / nparts * k;
        if (lo < prev) lo = prev;
        if (lo > 0 && lo < wend && p[lo - 1] != '\n') {
            const uint8_t *nl = memchr(p + lo, '\n', wend - lo);
            lo = nl ? (size_t)(nl - p) + 1 : wend;
        }
        ps->parts[k].a = lo;
        if (k > 0) ps->parts[k - 1].b = lo;
        prev = lo;
    }
    ps->parts[nparts - 1].b = wend;
    ps->nparts = nparts;
    if (job->run && nparts > 1) job->run(job->run_ctx, nparts, phase1, ps);
    else
        for (size_t k = 0; k < nparts; k++) phase1(ps, k);

    for (size_t k = 0; k < nparts; k++)
        for (size_t j = 0; j < ps->parts[k].n; j++) ps->parts[k].items[j].take = 0;
    join_state js = {ps, 0, 0, 0};
    ps->nspans = 0;
    if (job->fastq) join_fastq(&js);
    else join_fasta(&js);
    if (js.n == 0) return 0;

    if (job->run && ps->nspans > 1) job->run(job->run_ctx, ps->nspans, phase2, ps);
    else
        for (size_t i = 0; i < ps->nspans; i++) phase2(ps, i);

    /* the names, NUL-terminated */
    size_t bytes = 0;
    for (size_t i = 0; i < js.n; i++) bytes += ps->name_lens[i] + 1;
    if (bytes > ps->arena_cap) {
        char *a = realloc(ps->arena, bytes);
        if (!a) return 0; /* nothing is consumed: the serial reader goes on */
        ps->arena = a;
        ps->arena_cap = bytes;
    }
    char *at = ps->arena;
    for (size_t i = 0; i < js.n; i++) {
        memcpy(at, p + ps->name_offs[i], ps->name_lens[i]);
        at[ps->name_lens[i]] = '\0';
        ps->names[i] = at;
        at += ps->name_lens[i] + 1;
    }
    job->records = js.n;
    job->lens = ps->lens;
    job->offs = ps->offs;
    job->names = ps->names;
    job->used = js.used;
    job->lines = js.lines;
    return js.n;
}

sm_records_parser *sm_records_parser_new(void) {
    sm_records_parser *ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
#ifdef RECORDS_X86
    const sm_cpu_features *cpu = sm_cpu();
    ps->vector = cpu->avx512bw && cpu->avx512vbmi2 ? 2 : cpu->avx2 ? 1 : 0;
#endif
    return ps;
}

void sm_records_parser_free(sm_records_parser *ps) {
    if (!ps) return;
    for (size_t k = 0; k < PARTS_MAX; k++) {
        free(ps->parts[k].items);
        free(ps->parts[k].trial.p);
    }
    free(ps->lens);
    free(ps->offs);
    free(ps->spans);
    free(ps->name_offs);
    free(ps->name_lens);
    free(ps->names);
    free(ps->arena);
    free(ps);
}
