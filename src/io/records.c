/* Many whole records parsed and stripped on a team's threads (records.h).
 *
 * The window is cut into parts at line starts, a few per thread. Phase 1,
 * a part per task: FASTA parts find their header lines (a '>' starting a
 * line always starts a record) and count the sequence bytes each piece of
 * a record keeps, so that a long record's lines are counted on every
 * thread; FASTQ parts parse whole records from the first line of the part
 * that reads as a record followed by another (a quality line may start
 * with '@'), each record checked as the serial reader checks it. The join,
 * on the caller, walks the parts in order: a FASTQ part's first record
 * must start where the previous part's last one ended (else the parts
 * after it are not taken: a wrong guess costs a shorter batch, never wrong
 * output); it takes whole records while they fit the room and places every
 * piece by a prefix sum. Phase 2, a part per task, strips each taken piece
 * to its place. A byte the serial reader must see (a \r, a bad byte, a
 * truncated record) stops its part: the records before it are taken, the
 * rest is left to the serial reader. */
#include "io/records.h"

#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "io/seqio.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RECORDS_X86 1
#endif

#define PART_MIN ((size_t)16 << 10) /* raw bytes per part, at least */
#define PARTS_PER_THREAD 4
#define PARTS_MAX 256

typedef struct {
    size_t start, end;          /* raw bytes [start, end): a header line and its sequence, or a piece of sequence */
    size_t raw_lo, raw_hi;      /* the sequence lines in it */
    size_t name_off, name_len;  /* header items */
    size_t kept;                /* sequence bytes kept */
    uint64_t lines;             /* \n in [start, end) */
    size_t out;                 /* where its kept bytes go (the join) */
    int header;                 /* starts a record (else: continues the one before) */
    int take;
} rec_item;

typedef struct {
    size_t a, b;                /* lines starting in [a, b) are this part's */
    size_t first;               /* FASTQ: its first record's start (SIZE_MAX: none) */
    rec_item *items;
    size_t n, cap;
    int stop;                   /* stopped before b: the next item holds what the serial reader must see */
    int incomplete;             /* FASTQ: ... or runs past the window */
    uint64_t prefix_lines;      /* the first part: blank lines before the first record (FASTQ) */
    size_t out_end;             /* end of its taken items' bytes in dst */
} rec_part;

struct sm_records_parser {
    rec_part parts[PARTS_MAX];
    size_t nparts;
    sm_records_job *job;
    size_t wend;
    int avx2;
    size_t *lens, *name_offs, *name_lens;
    const char **names;
    size_t rec_cap;
    char *arena;
    size_t arena_cap;
};

static int keep_byte(uint8_t c) {
    return ((unsigned)((c | 0x20) - 'a') < 26u) || c == '-' || c == '.' || c == '*';
}

/* ------------------------------------------------------------ the loops */

/* Sequence lines from i (a line start) up to the marker starting a line or
   end: the marker's offset or end, with the bytes kept and the \n counted
   added; SIZE_MAX at a byte that is not a sequence byte, blank or \n. */
static size_t seq_scan_plain(const uint8_t *p, size_t i, size_t end, uint8_t marker, size_t *kept, uint64_t *lines) {
    size_t k = 0;
    uint64_t l = 0;
    int line_start = 1;
    for (; i < end; i++) {
        uint8_t c = p[i];
        if (keep_byte(c)) k++, line_start = 0;
        else if (c == '\n') l++, line_start = 1;
        else if (c == ' ' || c == '\t') line_start = 0;
        else if (c == marker && line_start) break;
        else return SIZE_MAX;
    }
    *kept += k;
    *lines += l;
    return i;
}

static int quality_plain(const uint8_t *p, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++)
        if (p[i] < '!' || p[i] > '~') return 0;
    return 1;
}

static void strip_plain(const uint8_t *p, size_t lo, size_t hi, uint8_t *out) {
    for (size_t i = lo; i < hi; i++)
        if (keep_byte(p[i])) *out++ = p[i];
}

#ifdef RECORDS_X86
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

/* seq_scan_plain 32 bytes a step (the input has 64 readable bytes past its end). */
__attribute__((target("avx2,popcnt,bmi"))) static size_t seq_scan_avx2(const uint8_t *p, size_t i, size_t end,
                                                                     uint8_t marker, size_t *kept, uint64_t *lines) {
    size_t k = 0;
    uint64_t l = 0;
    uint32_t carry = 1; /* p[i] starts a line */
    const __m256i lf = _mm256_set1_epi8('\n'), sp = _mm256_set1_epi8(' '), tab = _mm256_set1_epi8('\t');
    const __m256i mk = _mm256_set1_epi8((char)marker);
    for (; i < end; i += 32) {
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
        k += (size_t)__builtin_popcount(keep & upto);
        l += (uint64_t)__builtin_popcount(nl & upto);
        if (at_marker) {
            i += (unsigned)__builtin_ctz(at_marker);
            *kept += k;
            *lines += l;
            return i;
        }
        carry = nl >> 31;
    }
    *kept += k;
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

/* The kept bytes of p[lo, hi) (sequence bytes, blanks and \n only) to out,
   each run of them by one vector store where the part's bytes (up to
   limit) leave room for it. */
__attribute__((target("avx2,bmi"))) static void strip_avx2(const uint8_t *p, size_t lo, size_t hi, uint8_t *out,
                                                           const uint8_t *limit) {
    for (size_t i = lo; i < hi; i += 32) {
        size_t left = hi - i;
        uint32_t window = left >= 32 ? ~0u : (1u << left) - 1;
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        uint32_t keep = keep_mask(v) & window;
        if (keep == ~0u) {
            if (out + 32 <= limit) _mm256_storeu_si256((__m256i *)out, v);
            else memcpy(out, p + i, 32);
            out += 32;
            continue;
        }
        while (keep) {
            unsigned from = (unsigned)__builtin_ctz(keep);
            uint32_t rest = ~(keep >> from);
            unsigned run = rest ? (unsigned)__builtin_ctz(rest) : 32 - from;
            if (out + 32 <= limit) _mm256_storeu_si256((__m256i *)out, _mm256_loadu_si256((const __m256i *)(p + i + from)));
            else memcpy(out, p + i + from, run);
            out += run;
            keep = from + run >= 32 ? 0 : keep & (~0u << (from + run));
        }
    }
}
#endif

static size_t seq_scan(const sm_records_parser *ps, size_t i, size_t end, uint8_t marker, size_t *kept,
                       uint64_t *lines) {
#ifdef RECORDS_X86
    if (ps->avx2) return seq_scan_avx2(ps->job->p, i, end, marker, kept, lines);
#endif
    return seq_scan_plain(ps->job->p, i, end, marker, kept, lines);
}

static int quality_ok(const sm_records_parser *ps, size_t lo, size_t hi) {
#ifdef RECORDS_X86
    if (ps->avx2) return quality_avx2(ps->job->p, lo, hi);
#endif
    return quality_plain(ps->job->p, lo, hi);
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

static void fasta_part(sm_records_parser *ps, rec_part *pt) {
    const uint8_t *p = ps->job->p;
    size_t i = pt->a, end = pt->b;
    rec_item cur;
    memset(&cur, 0, sizeof cur);
    cur.start = cur.raw_lo = i;
    while (i < end) {
        if (p[i] == '>') { /* i starts a line here, always */
            cur.raw_hi = cur.end = i;
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
            i = cur.raw_lo = next;
            continue;
        }
        size_t s = seq_scan(ps, i, end, '>', &cur.kept, &cur.lines);
        if (s == SIZE_MAX) {
            pt->stop = 1;
            return;
        }
        i = s;
    }
    cur.raw_hi = cur.end = end;
    if (push(pt, &cur) < 0) pt->stop = 1;
}

/* One FASTQ record at i (a line start): 1 read, 0 for the serial reader,
   2 runs past the window before the input's end. Its end is past the blank
   bytes after it. */
static int fastq_record(const sm_records_parser *ps, size_t i, rec_item *it) {
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
    it->raw_lo = next;
    size_t s = next < wend ? seq_scan(ps, next, wend, '+', &it->kept, &it->lines) : wend;
    if (s == SIZE_MAX) return 0;
    if (s == wend) return cut; /* no '+' line before the end */
    it->raw_hi = s;
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
        /* the first line of the part that reads as a record followed by another (or the end) */
        for (size_t j = i; j < pt->b;) {
            if (p[j] == '@' && fastq_record(ps, j, &it) == 1 && (it.end == ps->wend || p[it.end] == '@')) {
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
    while (i < pt->b) {
        if (i > 0 && p[i - 1] != '\n') { /* a header must start its line */
            pt->stop = 1;
            return;
        }
        int rc = fastq_record(ps, i, &it);
        if (rc != 1) {
            pt->stop = 1;
            pt->incomplete = rc == 2;
            return;
        }
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

static void phase2(void *arg, size_t k) {
    sm_records_parser *ps = arg;
    const sm_records_job *job = ps->job;
    rec_part *pt = &ps->parts[k];
    const uint8_t *limit = job->dst + pt->out_end;
    for (size_t j = 0; j < pt->n; j++) {
        const rec_item *it = &pt->items[j];
        if (!it->take || it->kept == 0) continue;
        uint8_t *out = job->dst + it->out;
        if (it->kept == it->raw_hi - it->raw_lo) {
            memcpy(out, job->p + it->raw_lo, it->kept);
            continue;
        }
#ifdef RECORDS_X86
        if (ps->avx2) {
            strip_avx2(job->p, it->raw_lo, it->raw_hi, out, limit);
            continue;
        }
#endif
        (void)limit;
        strip_plain(job->p, it->raw_lo, it->raw_hi, out);
    }
}

/* ------------------------------------------------------------- the join */

typedef struct {
    sm_records_parser *ps;
    size_t n, total;        /* records taken, their bytes */
    size_t used;            /* raw bytes consumed */
    uint64_t lines;
    int stopped;
} join_state;

static int reserve_records(sm_records_parser *ps, size_t n) {
    if (n <= ps->rec_cap) return 0;
    size_t cap = ps->rec_cap ? ps->rec_cap * 2 : 1024;
    while (cap < n) cap *= 2;
    size_t *a = realloc(ps->lens, cap * sizeof *a);
    if (a) ps->lens = a;
    size_t *b = realloc(ps->name_offs, cap * sizeof *b);
    if (b) ps->name_offs = b;
    size_t *c = realloc(ps->name_lens, cap * sizeof *c);
    if (c) ps->name_lens = c;
    const char **d = realloc(ps->names, cap * sizeof *d);
    if (d) ps->names = d;
    if (!a || !b || !c || !d) return -1;
    ps->rec_cap = cap;
    return 0;
}

/* The record of items [k0/j0 .. k1/j1) (in part order) taken if it fits:
   its pieces placed. Returns 0, or -1 when it does not fit (the join stops). */
static int take_record(join_state *js, size_t k0, size_t j0, size_t k1, size_t j1, size_t kept, uint64_t lines,
                       const rec_item *head) {
    sm_records_parser *ps = js->ps;
    sm_records_job *job = ps->job;
    if (js->n >= job->max_records || kept > job->room - js->total || reserve_records(ps, js->n + 1) < 0) {
        if (js->n == 0) job->need = kept;
        return -1;
    }
    size_t end = head->end;
    for (size_t k = k0; k <= k1 && k < ps->nparts; k++) {
        rec_part *pt = &ps->parts[k];
        size_t from = k == k0 ? j0 : 0, to = k == k1 ? j1 : pt->n;
        for (size_t j = from; j < to; j++) {
            rec_item *it = &pt->items[j];
            it->take = 1;
            it->out = js->total;
            js->total += it->kept;
            pt->out_end = js->total;
            end = it->end;
        }
    }
    ps->lens[js->n] = kept;
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
    size_t expect = ps->parts[0].first;
    js->lines = ps->parts[0].prefix_lines;
    js->used = expect;
    for (size_t k = 0; k < ps->nparts; k++) {
        rec_part *pt = &ps->parts[k];
        if (expect >= pt->b && !(k == 0 && pt->n)) continue; /* its records start before the chain's end */
        if (pt->n == 0 || pt->items[0].start != expect) {
            if (k == 0 && js->n == 0 && pt->incomplete) job->need = SIZE_MAX;
            return;
        }
        for (size_t j = 0; j < pt->n; j++) {
            const rec_item *it = &pt->items[j];
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
    for (size_t k = 0; k < nparts; k++) ps->parts[k].out_end = 0;
    ps->nparts = nparts;
    if (job->run && nparts > 1) job->run(job->run_ctx, nparts, phase1, ps);
    else
        for (size_t k = 0; k < nparts; k++) phase1(ps, k);

    for (size_t k = 0; k < nparts; k++)
        for (size_t j = 0; j < ps->parts[k].n; j++) ps->parts[k].items[j].take = 0;
    join_state js = {ps, 0, 0, 0, 0, 0};
    if (job->fastq) join_fastq(&js);
    else join_fasta(&js);
    if (js.n == 0) return 0;

    if (job->run && nparts > 1) job->run(job->run_ctx, nparts, phase2, ps);
    else
        for (size_t k = 0; k < nparts; k++) phase2(ps, k);

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
    job->names = ps->names;
    job->used = js.used;
    job->lines = js.lines;
    return js.n;
}

sm_records_parser *sm_records_parser_new(void) {
    sm_records_parser *ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
#ifdef RECORDS_X86
    ps->avx2 = sm_cpu()->avx2;
#endif
    return ps;
}

void sm_records_parser_free(sm_records_parser *ps) {
    if (!ps) return;
    for (size_t k = 0; k < PARTS_MAX; k++) free(ps->parts[k].items);
    free(ps->lens);
    free(ps->name_offs);
    free(ps->name_lens);
    free(ps->names);
    free(ps->arena);
    free(ps);
}
