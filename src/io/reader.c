/* Target reader: FASTA, FASTQ, raw text and lines over a byte source.
 *
 * Memory is bounded whatever the record or line length: decompressed input
 * sits in one fixed buffer, sequence pieces are copied into a second one, and
 * only a record's name (its header's first word, at most READER_NAME_MAX
 * bytes) is kept. The rest of a header line is skipped without storing it.
 *
 * Choices worth knowing:
 *   - Lines end with \n, \r\n or a lone \r (classic Mac OS), in every
 *     format but text: a \r ends its line at once, and a \n right after it
 *     belongs to the same line end. Line numbers in messages count them so.
 *   - A UTF-8 byte-order mark at the very start of a FASTA or FASTQ file is
 *     skipped. So is nothing else: data compressed in a way the source does
 *     not read (bzip2, xz, zstd, gzip twice) is refused by name.
 *   - FASTA sequence bytes are ASCII letters, '-', '.', '*'; spaces and tabs
 *     are dropped; any other byte is an error naming line and column.
 *   - FASTQ: the sequence may be wrapped over several lines, up to a line
 *     that starts with '+' (a name after the '+' must be the record's own:
 *     its first word equal to the header's); the quality lines that follow are read until
 *     they hold as many bytes as the sequence (counted, since a quality line
 *     may start with '@' as a header does). Quality bytes must lie in
 *     '!'..'~'.
 *   - A record's name ends at the first white space (space, \t, \n, \v, \f,
 *     \r); other control bytes belong to it; a NUL there is an error. A name longer than READER_NAME_MAX is an
 *     error rather than a silent truncation, so two distinct long names
 *     can never be reported as one.
 *   - A header marker must start its line; blank lines (and blank bytes)
 *     between records are skipped.
 *   - Text mode gives exactly one record, also for an empty file (of length
 *     0); lines mode gives no record for an empty file.
 *   - Pieces are at most READER_PIECE_CAP bytes for FASTA/FASTQ and at most
 *     READER_RAW_CAP bytes in text and lines mode (handed out without a copy;
 *     READER_MAPPED_PIECE from a file read in place).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/seqio.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/cpu.h"
#include "io/records.h"
#include "io/source.h"
#include "io/strip.h"

/* Overridable so that tests can force tiny buffers and hit every boundary. */
#ifndef READER_RAW_CAP
#define READER_RAW_CAP (1u << 20)
#endif
#ifndef READER_PIECE_CAP
#define READER_PIECE_CAP (256u << 10)
#endif
#ifndef READER_NAME_MAX
#define READER_NAME_MAX (1u << 20)
#endif
#define READER_PAD 64 /* the vector loops read and write up to 64 bytes past their data */
/* A mapped file's text pieces: large (few calls) but not the whole file,
   so that progress and stops are seen along the way. */
#define READER_MAPPED_PIECE (16u << 20)
/* Stretches of a mapped FASTA file at least this long are stripped on
   several threads (strip.c). */
#define STRIP_MIN ((size_t)4 << 20)
#define READER_NAME_SHOWN 100 /* bytes of a name quoted in a message */

/* Byte classes in sequence lines (for the bytes that are not letters). */
enum { CLS_SKIP = 0, CLS_KEEP = 1, CLS_NL = 2, CLS_BAD = 4 };

/* ST_CUT: a ranged reader stopped a record's sequence at the range end. */
typedef enum { ST_BETWEEN, ST_SEQ, ST_CUT, ST_DONE, ST_ERROR } reader_state;

struct sm_reader {
    sm_source *src;
    const char *shown; /* file name for messages and text/lines record names */
    sm_input_format format;
    reader_state state;

    uint8_t *buf; /* decompressed input: [pos, end) not yet consumed; a plain
                     file's mapping (never written) when mapped */
    int mapped;
    size_t pos, end;
    size_t cap;          /* bytes of buf before its padding (grows only to keep a record) */
    int keep_raw;        /* sm_reader_keep_raw: keep the open record's bytes from raw_start */
    int raw_open;        /* a record's bytes are being kept */
    uint64_t raw_start;  /* stream offset of that record's first byte */
    int eof;
    uint64_t buf_abs;    /* offset of buf[0] in the decompressed stream */
    int swapped;         /* the last refill took a BGZF job's buffer */
    uint64_t line;       /* 1-based line number of buf[pos] */
    uint64_t line_start; /* stream offset where that line starts */
    int after_cr;        /* that line follows a \r: a \n at line_start ends no line */

    uint8_t marker; /* what ends a record's sequence at a line start: '>' (FASTA), '+' (FASTQ) */
    int at_marker;  /* sequence reading stopped at the marker starting a line */
    int vector;     /* the stripping loop: 2 AVX-512 (VBMI2), 1 AVX2, 0 SSE2 or plain */
    unsigned threads;      /* threads that may strip a mapped FASTA file */
    sm_strip_pool *strip;  /* made on the first long stretch, when threads allow */
    sm_parallel_for_fn team; /* another team's threads strip instead of a pool's own (may be NULL) */
    void *team_ctx;
    int strip_misses;      /* windows in a row the pool left to the serial reader */
    sm_records_parser *records; /* sm_reader_read_records: made on its first call */

    uint8_t *piece; /* FASTA/FASTQ output piece */
    char *name;
    size_t name_len, name_cap;
    uint64_t seq_len;     /* FASTQ: symbols in the current record so far */
    uint64_t header_line; /* line of the current record's header */
    uint64_t text_given;  /* text mode: records handed out (0 or 1) */

    uint8_t cls[256];
    sm_error error; /* sticky: every call after an error repeats it */
    size_t kept_before_error; /* sequence bytes a failing copy wrote before the bad byte */

    /* A byte range (sm_reader_open_range). Offsets are stream offsets,
       buf_abs + index: file offsets for a plain file; for BGZF, offsets in
       the data of the blocks from the range's first one. */
    int ranged;
    int source_limited;  /* BGZF: the source stops at the range end */
    int cross;           /* the current step reads on past the range end */
    int extra;           /* reading the bytes after a cut (the overlap) */
    uint64_t limit;      /* stream offset of the range end; UINT64_MAX until known */
    uint64_t file_base;  /* BGZF: file offset of the range's first block */
    int bgzf;
    int continued;       /* the current record began before the range */
    int pending_part;    /* next_record's first answer is a record begun before the range */
    int range_done;      /* no more records in the range */
    int start_kind, end_kind;   /* SM_RANGE_* */
    uint64_t begin_off;         /* stream offset of the range start */
    uint64_t first_record;      /* FASTQ, lines: stream offset of the first record owned */
    uint64_t next_record_at;    /* of the record after the last one owned (UINT64_MAX: the input's end) */
    uint64_t fail_off;          /* ranged messages: the offset of the byte at fault */
    int fail_off_set;

    sm_reader_resume resume; /* sm_runner_scan_reader's, when it stopped inside a record */
};

/* ------------------------------------------------------------------ errors */

static void describe_byte(uint8_t c, char *out, size_t size) {
    if (c > ' ' && c < 0x7f)
        snprintf(out, size, "0x%02X ('%c')", c, c);
    else
        snprintf(out, size, "0x%02X", c);
}

/* Records a content error at line/col (col 0: none); named: quote the record. */
static int fail_at(sm_reader *r, uint64_t line, uint64_t col, int named, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int fail_at(sm_reader *r, uint64_t line, uint64_t col, int named, const char *fmt, ...) {
    char detail[256], where[96], record[READER_NAME_SHOWN + 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (r->ranged) {
        /* lines before the range are not counted: the byte offset instead */
        uint64_t at = r->fail_off_set ? r->fail_off : r->buf_abs + r->pos;
        if (r->bgzf)
            snprintf(where, sizeof where, "byte %llu of the data from the BGZF block at byte %llu",
                     (unsigned long long)at, (unsigned long long)r->file_base);
        else
            snprintf(where, sizeof where, "byte %llu", (unsigned long long)at);
        if (r->continued) named = 0; /* its name is before the range */
    } else if (col)
        snprintf(where, sizeof where, "line %llu, column %llu", (unsigned long long)line,
                 (unsigned long long)col);
    else
        snprintf(where, sizeof where, "line %llu", (unsigned long long)line);
    r->fail_off_set = 0;
    record[0] = '\0';
    if (named)
        snprintf(record, sizeof record, " (record '%.*s%s')", READER_NAME_SHOWN, r->name,
                 r->name_len > READER_NAME_SHOWN ? "..." : "");
    snprintf(r->error.message, sizeof r->error.message, "%s: %s%s: %s", r->shown, where, record,
             detail);
    r->error.code = SM_ERR_FORMAT;
    r->state = ST_ERROR;
    return -1;
}

/* Line bookkeeping for the line end (\r or \n) at stream offset at. */
static void count_line_end(uint64_t *line, uint64_t *line_start, int *after_cr, uint8_t c, uint64_t at) {
    /* a \n right after a \r completes that line end */
    if (!(c == '\n' && *after_cr && at == *line_start)) ++*line;
    *after_cr = c == '\r';
    *line_start = at + 1;
}

/* Reports the byte at buf[idx] (idx >= pos, same buffer) as not allowed. */
static int fail_byte(sm_reader *r, size_t idx, int named, const char *where) {
    uint64_t line = r->line, line_start = r->line_start;
    int after_cr = r->after_cr;
    for (size_t j = r->pos; j < idx; j++)
        if (r->buf[j] == '\n' || r->buf[j] == '\r')
            count_line_end(&line, &line_start, &after_cr, r->buf[j], r->buf_abs + j);
    char b[16];
    describe_byte(r->buf[idx], b, sizeof b);
    r->fail_off = r->buf_abs + idx;
    r->fail_off_set = 1;
    return fail_at(r, line, r->buf_abs + idx - line_start + 1, named, "unexpected byte %s in %s",
                   b, where);
}

static int report(const sm_reader *r, sm_error *err) {
    if (err) *err = r->error;
    return -1;
}

/* ------------------------------------------------------------ buffering */

/* Doubles the input buffer (a kept record fills it). Returns 0 or -1. */
static int grow_input(sm_reader *r) {
    size_t cap = r->cap * 2;
    uint8_t *p = cap > r->cap ? realloc(r->buf, cap + READER_PAD) : NULL;
    if (!p) {
        snprintf(r->error.message, sizeof r->error.message, "%s: out of memory for a record of over %zu bytes",
                 r->shown, r->cap);
        r->error.code = SM_ERR_NOMEM;
        r->state = ST_ERROR;
        return -1;
    }
    memset(p + cap, 0, READER_PAD);
    r->buf = p;
    r->cap = cap;
    return 0;
}

/* Keeps [pos, end) (with keep_raw, from the open record's first byte),
   moves it to the front and reads more after it. Returns 1 when bytes were
   added, 0 at the end of input, -1 on error. */
static int refill(sm_reader *r) {
    for (;;) {
        if (r->eof) return 0;
        size_t from = r->pos;
        if (r->raw_open && r->raw_start - r->buf_abs < from) from = (size_t)(r->raw_start - r->buf_abs);
        /* BGZF inflated ahead: the job's buffer becomes ours, the kept
           bytes put before its own (offsets wrap as unsigned sums) */
        size_t start, end = r->end;
        if (sm_io_source_swap(r->src, &r->buf, &r->cap, READER_PAD, from, &start, &end)) {
            r->buf_abs += from - start;
            r->pos = r->pos - from + start;
            r->end = end;
            r->swapped = 1;
            return 1;
        }
        if (from > 0) {
            size_t keep = r->end - from;
            memmove(r->buf, r->buf + from, keep);
            r->buf_abs += from;
            r->end = keep;
            r->pos -= from;
        }
        if (r->end == r->cap && grow_input(r) < 0) return -1;
        long n = sm_io_source_read(r->src, r->buf + r->end, r->cap - r->end, &r->error);
        if (n < 0) {
            r->state = ST_ERROR;
            return -1;
        }
        if (n > 0) {
            r->end += (size_t)n;
            return 1;
        }
        if (r->source_limited) {
            /* the range's blocks are read: their end is the range end */
            if (r->limit == UINT64_MAX) r->limit = r->buf_abs + r->end;
            if (!r->cross) return 0;
            sm_io_source_extend(r->src);
            r->source_limited = 0;
            continue;
        }
        r->eof = 1;
        return 0;
    }
}

/* Ranged: stream offset of buf[pos], and the bytes from it to the range end
   (SIZE_MAX while the end is not known or past it: reading on). */
static uint64_t stream_pos(const sm_reader *r) { return r->buf_abs + r->pos; }

static size_t before_limit(const sm_reader *r) {
    if (!r->ranged || r->extra || r->cross || r->limit == UINT64_MAX) return SIZE_MAX;
    uint64_t at = stream_pos(r);
    return at >= r->limit ? 0 : r->limit - at > SIZE_MAX ? SIZE_MAX : (size_t)(r->limit - at);
}

/* buf[pos] is \n or \r: consumes it. */
static void consume_newline(sm_reader *r) {
    count_line_end(&r->line, &r->line_start, &r->after_cr, r->buf[r->pos], r->buf_abs + r->pos);
    r->pos++;
}

/* Whether buf[pos] is the \n of a \r\n whose \r has been consumed. */
static int at_crlf_tail(const sm_reader *r) {
    return r->buf[r->pos] == '\n' && r->after_cr && r->buf_abs + r->pos == r->line_start;
}

/* The first line end (\n or \r) in p[0, n), or NULL. p points into the
   input buffer, whose padding allows reading a vector past its data. */
static const uint8_t *find_line_end(const uint8_t *p, size_t n) {
#ifdef __SSE2__
    /* header rests and '+' lines are short: one pass for both bytes */
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    for (size_t i = 0; i < n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned hit = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        if (n - i < 16) hit &= (1u << (n - i)) - 1;
        if (hit) return p + i + (unsigned)__builtin_ctz(hit);
    }
    return NULL;
#else
    const uint8_t *nl = memchr(p, '\n', n);
    const uint8_t *cr = memchr(p, '\r', nl ? (size_t)(nl - p) : n);
    return cr ? cr : nl;
#endif
}

/* Has at least n bytes at pos unless the input is shorter. Returns 0 or -1. */
static int fill_to(sm_reader *r, size_t n) {
    while (r->end - r->pos < n) {
        int f = refill(r);
        if (f < 0) return -1;
        if (f == 0) break;
    }
    return 0;
}

/* Skips blank bytes between records. Returns the next byte, -1 at the end of
   input, -2 on error. */
static int skip_blank(sm_reader *r) {
    for (;;) {
        if (before_limit(r) == 0) return -1; /* a record starting later is the next range's */
        if (r->pos == r->end) {
            int f = refill(r);
            if (f <= 0) return f < 0 ? -2 : -1;
        }
        uint8_t c = r->buf[r->pos];
        if (c == '\n' || c == '\r')
            consume_newline(r);
        else if (c == ' ' || c == '\t')
            r->pos++;
        else
            return c;
    }
}

/* Consumes the rest of the line and its line end. Returns 1, 0 if the input
   ended first, -1 on error. */
static int skip_line(sm_reader *r) {
    for (;;) {
        if (r->pos == r->end) {
            int f = refill(r);
            if (f <= 0) return f;
        }
        const uint8_t *nl = find_line_end(r->buf + r->pos, r->end - r->pos);
        if (nl) {
            r->pos = (size_t)(nl - r->buf);
            consume_newline(r);
            return 1;
        }
        r->pos = r->end;
    }
}

static int name_reserve(sm_reader *r, size_t need) {
    if (need <= r->name_cap) return 0;
    size_t cap = r->name_cap ? r->name_cap : 256;
    while (cap < need) cap *= 2;
    char *p = realloc(r->name, cap);
    if (!p) {
        snprintf(r->error.message, sizeof r->error.message, "%s: out of memory", r->shown);
        r->error.code = SM_ERR_NOMEM;
        r->state = ST_ERROR;
        return -1;
    }
    r->name = p;
    r->name_cap = cap;
    return 0;
}

/* buf[pos] is the header marker. Stores the first word as the name and
   skips the rest of the line. */
static int parse_header(sm_reader *r) {
    uint64_t header_line = r->header_line = r->line;
    uint64_t header_at = stream_pos(r);
    r->pos++;
    r->name_len = 0;
    r->name[0] = '\0';
    for (;;) {
        if (r->pos == r->end) {
            int f = refill(r);
            if (f < 0) return -1;
            if (f == 0) break;
        }
        const uint8_t *p = r->buf + r->pos;
        size_t avail = r->end - r->pos, i = 0;
        while (i < avail && !sm_name_end(p[i])) i++;
        if (r->name_len + i > READER_NAME_MAX)
            return fail_at(r, header_line, 0, 0, "record name longer than %u bytes",
                           READER_NAME_MAX);
        if (name_reserve(r, r->name_len + i + 1) < 0) return -1;
        memcpy(r->name + r->name_len, p, i);
        r->name_len += i;
        r->name[r->name_len] = '\0';
        r->pos += i;
        if (i < avail) break;
    }
    if (r->pos < r->end && r->buf[r->pos] == 0) return fail_byte(r, r->pos, 0, "header");
    if (skip_line(r) < 0) return -1;
    /* a header line across the range end: the next range starts inside it */
    if (r->ranged && r->limit != UINT64_MAX && header_at < r->limit && stream_pos(r) > r->limit)
        r->end_kind = SM_RANGE_IN_HEADER;
    return 0;
}

/* --------------------------------------------------------------- FASTA */

static sm_strip_pool *new_strip_pool(sm_reader *r) {
    return r->team ? sm_strip_pool_shared(r->threads, r->team, r->team_ctx) : sm_strip_pool_new(r->threads);
}

/* Handles buf[pos + j], a byte that is not a letter: line end, skipped byte,
   kept punctuation or an error. Returns 0 or -1. */
/* The byte at pos + j, which is no letter: a line end (bookkeeping), a
   blank (dropped), the marker starting a line (returns 1: the sequence
   ends before it), or a bad byte (reported, -1). Returns 0 otherwise. */
static int sequence_odd_byte(sm_reader *r, size_t j, uint8_t *out, size_t *kept) {
    uint8_t c = r->buf[r->pos + j];
    uint8_t t = r->cls[c];
    if (t & CLS_BAD) {
        if (c == r->marker && r->buf_abs + r->pos + j == r->line_start) return 1;
        /* line bookkeeping is current up to pos + j: report from there */
        r->pos += j;
        return fail_byte(r, r->pos, 1, "sequence"), -1;
    }
    if (t & CLS_NL) {
        uint64_t at = r->buf_abs + r->pos + j;
        if (c == '\n' && !r->after_cr) { /* the common case first */
            r->line++;
            r->line_start = at + 1;
        } else {
            count_line_end(&r->line, &r->line_start, &r->after_cr, c, at);
        }
    }
    out[*kept] = c;
    *kept += t & CLS_KEEP;
    return 0;
}

/* The odd byte at i in the loops below; 1 stops at the marker. */
#define ODD_BYTE(i)                                                                                                    \
    do {                                                                                                               \
        int odd_rc = sequence_odd_byte(r, (i), out, &kept);                                                            \
        if (odd_rc < 0) return r->kept_before_error = kept, -1;                                                        \
        if (odd_rc > 0) {                                                                                              \
            r->at_marker = 1;                                                                                          \
            r->pos += (i);                                                                                             \
            return (long)kept;                                                                                         \
        }                                                                                                              \
    } while (0)

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define READER_X86 1
/* A mapped file's pages are not contiguous, and the hardware's prefetcher
   stops at each: the loops ask for the bytes this far ahead themselves
   (16 readers on an H200's host: 29 -> 36 GB/s; bench/results/history.md). */
#define PREFETCH_AHEAD 2048

/* 64 bytes a step: a step whose only odd bytes are \n (the common line
   end) stores its letters compressed, counting the lines; others take the
   bytes one odd byte at a time. */
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt,bmi"))) static long copy_sequence_avx512(sm_reader *r,
                                                                                                 size_t seg,
                                                                                                 uint8_t *out) {
    const uint8_t *p = r->buf + r->pos;
    size_t kept = 0, i = 0;
    const __m512i fold = _mm512_set1_epi8(0x20), a = _mm512_set1_epi8('a'), z = _mm512_set1_epi8('z');
    const __m512i lf = _mm512_set1_epi8('\n');
    while (i < seg) {
        _mm_prefetch((const char *)p + i + PREFETCH_AHEAD, _MM_HINT_T0);
        __m512i v = _mm512_loadu_si512((const void *)(p + i));
        __m512i low = _mm512_or_si512(v, fold);
        __mmask64 letters = _mm512_cmpge_epu8_mask(low, a) & _mm512_cmple_epu8_mask(low, z);
        size_t left = seg - i;
        __mmask64 window = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
        __mmask64 odd = ~letters & window;
        if (!odd) {
            _mm512_storeu_si512((void *)(out + kept), v);
            size_t step = left >= 64 ? 64 : left;
            kept += step;
            i += step;
            continue;
        }
        __mmask64 nl = _mm512_cmpeq_epi8_mask(v, lf) & window;
        if (odd == nl && !(r->after_cr && (nl & 1))) {
            _mm512_storeu_si512((void *)(out + kept), _mm512_maskz_compress_epi8(letters & window, v));
            kept += (size_t)_mm_popcnt_u64(letters & window);
            r->line += (uint64_t)_mm_popcnt_u64(nl);
            r->line_start = r->buf_abs + r->pos + i + (63 - (size_t)__builtin_clzll(nl)) + 1;
            r->after_cr = 0;
            i += left >= 64 ? 64 : left;
            continue;
        }
        _mm512_storeu_si512((void *)(out + kept), v);
        size_t run = (size_t)__builtin_ctzll(odd);
        kept += run;
        i += run;
        ODD_BYTE(i);
        i++;
    }
    r->pos += seg;
    return (long)kept;
}

/* 32 bytes a step, the odd bytes one at a time. */
__attribute__((target("avx2,bmi"))) static long copy_sequence_avx2(sm_reader *r, size_t seg, uint8_t *out) {
    const uint8_t *p = r->buf + r->pos;
    size_t kept = 0, i = 0;
    const __m256i fold = _mm256_set1_epi8(0x20), below = _mm256_set1_epi8('a' - 1), above = _mm256_set1_epi8('z' + 1);
    while (i < seg) {
        _mm_prefetch((const char *)p + i + PREFETCH_AHEAD, _MM_HINT_T0);
        /* OR 0x20 folds upper to lower case; bytes >= 0x80 are negative in
           the signed compare and so fail it */
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i low = _mm256_or_si256(v, fold);
        __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi8(low, below), _mm256_cmpgt_epi8(above, low));
        _mm256_storeu_si256((__m256i *)(out + kept), v);
        size_t left = seg - i;
        uint32_t odd = ~(uint32_t)_mm256_movemask_epi8(ok);
        if (left < 32) odd |= ~0u << left;
        if (!odd) {
            kept += 32;
            i += 32;
            continue;
        }
        size_t run = (size_t)__builtin_ctz(odd);
        kept += run;
        i += run;
        if (i == seg) break;
        ODD_BYTE(i);
        i++;
    }
    r->pos += seg;
    return (long)kept;
}
#endif

/* Copies the sequence bytes of buf[pos, pos+seg) to out, dropping line
   ends, spaces and tabs; stops before the marker where it starts a line
   (at_marker set, pos on it). Returns the count kept, or -1 after
   reporting a bad byte. Keeps the line bookkeeping up to date. Vector
   paths may read 64 bytes past seg and write 64 past the count kept; both
   buffers are padded for that. */
static long copy_sequence(sm_reader *r, size_t seg, uint8_t *out) {
#ifdef READER_X86
    if (r->vector == 2) return copy_sequence_avx512(r, seg, out);
    if (r->vector == 1) return copy_sequence_avx2(r, seg, out);
#endif
    const uint8_t *p = r->buf + r->pos;
    size_t kept = 0, i = 0;
#ifdef __SSE2__
    const __m128i fold = _mm_set1_epi8(0x20);
    const __m128i below = _mm_set1_epi8('a' - 1);
    const __m128i above = _mm_set1_epi8('z' + 1);
    while (i < seg) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i low = _mm_or_si128(v, fold);
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(low, below), _mm_cmplt_epi8(low, above));
        _mm_storeu_si128((__m128i *)(out + kept), v);
        size_t left = seg - i;
        unsigned odd = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
        if (left < 16) odd |= ~0u << left;
        if (!odd) {
            kept += 16;
            i += 16;
            continue;
        }
        size_t run = (size_t)__builtin_ctz(odd);
        kept += run;
        i += run;
        if (i == seg) break;
        ODD_BYTE(i);
        i++;
    }
#else
    for (; i < seg; i++) {
        if ((unsigned)((p[i] | 0x20) - 'a') < 26u) out[kept++] = p[i];
        else ODD_BYTE(i);
    }
#endif
    r->pos += seg;
    return (long)kept;
}

static int fastq_finish(sm_reader *r);
static int fastq_truncated(sm_reader *r, uint64_t line, const char *what);

/* The end of the input inside a FASTQ record's sequence lines. */
static int fastq_ended(sm_reader *r) {
    int line_start = r->buf_abs + r->pos == r->line_start;
    if (r->line == r->header_line || (line_start && r->line == r->header_line + 1 && r->seq_len == 0))
        return fastq_truncated(r, r->line + (r->line == r->header_line), "sequence line");
    return fastq_truncated(r, r->line + !line_start, "'+' line");
}

/* Sequence lines, FASTA or FASTQ, up to the marker that ends them at the
   start of a line ('>': the next record; '+': the quality follows). */
static int sequence_read_to(sm_reader *r, uint8_t *out, size_t cap, size_t *len) {
    size_t n = 0;
    int fastq = r->marker == '+';
    while (n < cap) {
        /* a ranged reader's record goes on in the next range */
        size_t room = before_limit(r);
        if (room == 0) {
            r->state = ST_CUT;
            break;
        }
        size_t avail = r->end - r->pos < room ? r->end - r->pos : room;
        /* A mapped FASTA file's long stretch: on several threads. */
        /* Only past the first STRIP_MIN bytes of a record: short records
           (reads) never pay a window's count for nothing. */
        if (r->mapped && !fastq && r->threads > 2 && r->seq_len >= STRIP_MIN && r->strip_misses < 2 &&
            !r->after_cr && avail >= STRIP_MIN && cap - n >= STRIP_MIN) {
            if (!r->strip) r->strip = new_strip_pool(r);
            if (!r->strip) r->threads = 0;
            sm_strip_result res;
            size_t w = avail < cap - n ? avail : cap - n;
            if (r->strip && sm_strip_window(r->strip, r->buf + r->pos, w, r->marker,
                                            r->buf_abs + r->pos == r->line_start, out + n, &res)) {
                n += res.kept;
                r->seq_len += res.kept;
                r->line += res.lines;
                if (res.last_eol) r->line_start = r->buf_abs + r->pos + res.last_eol;
                r->pos += res.used;
                if (res.marker) {
                    r->state = ST_BETWEEN;
                    break;
                }
                r->strip_misses = 0;
                continue;
            }
            r->strip_misses++; /* \r or odd bytes: the serial reader's */
        }
        if (r->pos == r->end) {
            int f = refill(r);
            /* the bytes before a damaged stretch go out first (the state
               keeps the error for the next call) */
            if (f < 0 && n > 0) break;
            if (f < 0) return -1;
            if (f == 0) {
                if (fastq) return fastq_ended(r);
                r->state = before_limit(r) == 0 ? ST_CUT : ST_DONE;
                break;
            }
            room = before_limit(r);
        }
        size_t seg = r->end - r->pos;
        if (seg > room) seg = room;
        if (seg > cap - n) seg = cap - n;
        /* a record's first STRIP_MIN bytes only, where the threads take over after them */
        if (r->mapped && !fastq && r->threads > 2 && r->seq_len < STRIP_MIN && r->strip_misses < 2 &&
            seg > STRIP_MIN - r->seq_len)
            seg = STRIP_MIN - (size_t)r->seq_len;
        long kept = copy_sequence(r, seg, out + n);
        if (kept < 0) {
            /* the bytes before a bad byte go out first, whatever the piece
               size; the error (sticky) comes with the next call */
            n += r->kept_before_error;
            r->seq_len += r->kept_before_error;
            if (n > 0) break;
            return -1;
        }
        n += (size_t)kept;
        r->seq_len += (uint64_t)kept;
        if (r->at_marker) {
            /* the marker starts a line: the sequence ends here */
            r->at_marker = 0;
            if (fastq && fastq_finish(r) < 0) return -1;
            r->state = ST_BETWEEN;
            break;
        }
    }
    if (n == 0) return 0;
    *len = n;
    return 1;
}

static int sequence_read(sm_reader *r, const uint8_t **data, size_t *len) {
    int rc = sequence_read_to(r, r->piece, READER_PIECE_CAP, len);
    if (rc > 0) *data = r->piece;
    return rc;
}

/* --------------------------------------------------------------- FASTQ */

static int fastq_truncated(sm_reader *r, uint64_t line, const char *what) {
    return fail_at(r, line, 0, 1, "unexpected end of file (missing %s)", what);
}

/* Reads one quality line from pos (a line start) through its line end:
   adds its length to *count and sets *first to its first byte (-1 when
   empty). Returns 1, 0 when the input had ended before it (no line), -1 on
   error. */
static int quality_line(sm_reader *r, uint64_t *count, int *first) {
    int any = 0;
    *first = -1;
    for (;;) {
        if (r->pos == r->end) {
            int f = refill(r);
            if (f < 0) return -1;
            if (f == 0) return any;
        }
        if (!any && at_crlf_tail(r)) {
            consume_newline(r); /* ends the line before, not this one */
            continue;
        }
        if (!any) *first = r->buf[r->pos];
        any = 1;
        const uint8_t *p = r->buf + r->pos;
        size_t avail = r->end - r->pos, i = 0;
#ifdef __SSE2__
        /* vectors of quality bytes (signed compares reject >= 0x80), the last
           one reaching into the buffer's padding and cut to the data */
        const __m128i low = _mm_set1_epi8(' '), high = _mm_set1_epi8(0x7f);
        for (;;) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(v, low), _mm_cmplt_epi8(v, high));
            unsigned bad = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
            if (bad) i += (unsigned)__builtin_ctz(bad);
            else i += 16;
            if (bad || i >= avail) break;
        }
        if (i > avail) i = avail;
#else
        while (i < avail && (unsigned)(p[i] - '!') <= (unsigned)('~' - '!')) i++;
#endif
        *count += i;
        r->pos += i;
        if (i == avail) continue;
        if (p[i] != '\n' && p[i] != '\r') return fail_byte(r, r->pos, 1, "quality");
        consume_newline(r);
        return 1;
    }
}

/* At the '+' line (buf[pos] is the '+'): a name after it (its first word)
   must be the record's own, or the reads are out of step with their
   qualities. Leaves pos after the name. Returns 0 or -1. */
static int check_plus_name(sm_reader *r) {
    uint64_t plus_line = r->line;
    char shown[64];
    size_t seen = 0;
    int differs = 0;
    r->pos++;
    for (;;) {
        if (r->pos == r->end) {
            int f = refill(r);
            if (f < 0) return -1;
            if (f == 0) break;
        }
        const uint8_t *p = r->buf + r->pos;
        size_t avail = r->end - r->pos, i = 0;
        for (; i < avail && !sm_name_end(p[i]); i++, seen++) {
            if (seen < sizeof shown - 1) shown[seen] = (char)p[i];
            if (seen >= r->name_len || (char)p[i] != r->name[seen]) differs = 1;
        }
        r->pos += i;
        if (i < avail) break;
    }
    if (seen == 0 || (!differs && seen == r->name_len)) return 0;
    shown[seen < sizeof shown - 1 ? seen : sizeof shown - 1] = 0;
    return fail_at(r, plus_line, 0, 1, "the '+' line names read '%s%s', not this one", shown,
                   seen >= sizeof shown - 1 ? "..." : "");
}

/* At the '+' line: checks and skips it, then reads quality lines until
   they hold as many bytes as the sequence (one line, maybe empty, for an
   empty one). */
static int fastq_finish(sm_reader *r) {
    if (r->pos < r->end && r->buf[r->pos] == '+' && !(r->ranged && r->continued) && check_plus_name(r) < 0)
        return -1;
    int s = skip_line(r);
    if (s < 0) return -1;
    uint64_t qual_line = s ? r->line : r->line + 1;
    uint64_t qual = 0;
    int lines = 0;
    while (s) {
        uint64_t before = qual;
        int first;
        int got = quality_line(r, &qual, &first);
        if (got < 0) return -1;
        if (got == 0) break;
        lines++;
        if (qual > r->seq_len) {
            /* past the sequence on a line that starts like a header: most
               likely the quality was short and the next record follows */
            if (lines > 1 && first == '@') qual = before;
            break;
        }
        if (qual == r->seq_len) break;
    }
    if (lines == 0 && r->seq_len > 0) return fastq_truncated(r, qual_line, "quality line");
    if (qual != r->seq_len)
        return fail_at(r, qual_line, 0, 1, "quality length %llu differs from sequence length %llu",
                       (unsigned long long)qual, (unsigned long long)r->seq_len);
    return 0;
}

/* ------------------------------------------------------ text and lines */

static int text_read(sm_reader *r, const uint8_t **data, size_t *len, size_t max) {
    if (before_limit(r) == 0) {
        r->state = ST_CUT;
        return 0;
    }
    if (r->pos == r->end) {
        int f = refill(r);
        if (f < 0) return -1;
        if (f == 0) {
            r->state = before_limit(r) == 0 ? ST_CUT : ST_DONE;
            return 0;
        }
    }
    size_t n = r->end - r->pos;
    if (n > before_limit(r)) n = before_limit(r);
    if (r->mapped && n > READER_MAPPED_PIECE) n = READER_MAPPED_PIECE;
    if (n > max) n = max;
    *data = r->buf + r->pos;
    *len = n;
    r->pos += n;
    return 1;
}

static int lines_read(sm_reader *r, const uint8_t **data, size_t *len, size_t max) {
    if (r->pos == r->end) {
        int f = refill(r);
        if (f < 0) return -1;
        if (f == 0) {
            r->state = ST_BETWEEN;
            return 0;
        }
    }
    const uint8_t *p = r->buf + r->pos;
    size_t avail = r->end - r->pos;
    /* pieces of the usual size: from a mapped file as text mode's, from a
       buffer grown to keep a long line as from the first buffer */
    size_t piece_cap = r->mapped ? READER_MAPPED_PIECE : READER_RAW_CAP;
    if (avail > piece_cap) avail = piece_cap;
    if (avail > max) avail = max; /* the rest of the line in the next piece */
    const uint8_t *nl = find_line_end(p, avail);
    if (!nl) {
        *data = p;
        *len = avail;
        r->pos += avail;
        return 1;
    }
    size_t seg = (size_t)(nl - p);
    r->pos += seg;
    consume_newline(r);
    r->state = ST_BETWEEN;
    if (!seg) return 0;
    *data = p;
    *len = seg;
    return 1;
}

/* ------------------------------------------------------------- public */

static int read_piece(sm_reader *r, const uint8_t **data, size_t *len) {
    switch (r->format) {
    case SM_INPUT_TEXT: return text_read(r, data, len, SIZE_MAX);
    case SM_INPUT_LINES: return lines_read(r, data, len, SIZE_MAX);
    default: return sequence_read(r, data, len);
    }
}

int sm_reader_read(sm_reader *r, const uint8_t **data, size_t *len, sm_error *err) {
    *data = NULL;
    *len = 0;
    if (r->state == ST_ERROR) return report(r, err);
    if (r->state != ST_SEQ) return 0;
    int rc = read_piece(r, data, len);
    if (rc < 0) {
        r->state = ST_ERROR;
        *data = NULL;
        *len = 0;
        return report(r, err);
    }
    return rc;
}

int sm_reader_read_into(sm_reader *r, uint8_t *dst, size_t cap, size_t *len, sm_error *err) {
    if (!r || !dst || !len) return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_read_into");
    *len = 0;
    if (r->state == ST_ERROR) return report(r, err);
    if (r->state != ST_SEQ || cap == 0) return 0;
    int rc;
    if (r->format == SM_INPUT_FASTA || r->format == SM_INPUT_FASTQ) {
        rc = sequence_read_to(r, dst, cap, len);
    } else {
        const uint8_t *data;
        rc = r->format == SM_INPUT_TEXT ? text_read(r, &data, len, cap) : lines_read(r, &data, len, cap);
        /* a mapped text file's long pieces: copied on several threads */
        if (rc > 0 && r->mapped && r->threads > 2 && *len >= STRIP_MIN && !r->strip) r->strip = new_strip_pool(r);
        if (rc > 0 && r->strip && *len >= STRIP_MIN) sm_strip_copy(r->strip, dst, data, *len);
        else if (rc > 0) memcpy(dst, data, *len);
    }
    if (rc < 0) {
        r->state = ST_ERROR;
        *len = 0;
        return report(r, err);
    }
    return rc;
}

/* Reads the rest of the current record's sequence. Returns 0 or -1. */
static int drain_record(sm_reader *r) {
    if (r->state != ST_SEQ) return 0;
    const uint8_t *d;
    size_t l;
    int rc;
    do
        rc = read_piece(r, &d, &l);
    while (rc > 0 && r->state == ST_SEQ);
    if (rc < 0) {
        r->state = ST_ERROR;
        return -1;
    }
    return 0;
}

/* A record's bytes are kept from here (sm_reader_keep_raw). */
static void raw_begin(sm_reader *r) {
    if (!r->keep_raw) return;
    r->raw_start = r->buf_abs + r->pos;
    r->raw_open = 1;
}

/* A ranged reader has no more records: the range is read. */
static int range_finished(sm_reader *r, uint64_t next_at) {
    r->range_done = 1;
    r->next_record_at = next_at;
    return 0;
}

int sm_reader_next_record(sm_reader *r, const char **name, sm_error *err) {
    *name = NULL;
    if (r->state == ST_ERROR) return report(r, err);
    if (r->ranged) {
        if (r->range_done) return 0;
        if (r->pending_part) {
            /* the rest of a record begun before the range */
            r->pending_part = 0;
            r->continued = 1;
            r->text_given = 1;
            r->state = ST_SEQ;
            *name = r->name;
            return 1;
        }
    }
    if (drain_record(r) < 0) return report(r, err);
    r->raw_open = 0;
    if (r->ranged) {
        r->continued = 0;
        if (r->state == ST_CUT) {
            /* the record goes on in the next range */
            if (r->end_kind != SM_RANGE_IN_HEADER) r->end_kind = SM_RANGE_IN_SEQUENCE;
            return range_finished(r, UINT64_MAX);
        }
        if (r->state == ST_DONE) return range_finished(r, r->buf_abs + r->end);
    }
    if (r->state == ST_DONE) return 0;

    if (r->format == SM_INPUT_TEXT) {
        if (r->text_given) {
            r->state = ST_DONE;
            return 0;
        }
        r->text_given = 1;
        r->state = ST_SEQ;
        *name = r->name;
        return 1;
    }
    if (r->format == SM_INPUT_LINES) {
        for (;;) {
            if (r->pos == r->end) {
                int f = refill(r);
                if (f < 0) return report(r, err);
                if (f == 0) {
                    r->state = ST_DONE;
                    return r->ranged ? range_finished(r, stream_pos(r)) : 0;
                }
            }
            if (!at_crlf_tail(r)) break;
            consume_newline(r); /* the \n of the last line's \r\n */
        }
        if (r->ranged && stream_pos(r) >= r->limit) return range_finished(r, stream_pos(r));
        raw_begin(r);
        int need = snprintf(NULL, 0, "%s:%llu", r->shown, (unsigned long long)r->line);
        if (name_reserve(r, (size_t)need + 1) < 0) return report(r, err);
        snprintf(r->name, r->name_cap, "%s:%llu", r->shown, (unsigned long long)r->line);
        r->name_len = (size_t)need;
        r->state = ST_SEQ;
        *name = r->name;
        return 1;
    }

    int c = skip_blank(r);
    if (c == -2) return report(r, err);
    if (c == -1) {
        if (r->ranged) {
            int at_end = r->eof && r->pos == r->end;
            /* FASTA stops at the range end among blank bytes (before the
               first record: the next range takes them as sequence bytes) */
            if (!at_end && r->end_kind != SM_RANGE_IN_HEADER) r->end_kind = SM_RANGE_IN_SEQUENCE;
            return range_finished(r, r->buf_abs + r->end);
        }
        r->state = ST_DONE;
        return 0;
    }
    int fastq = r->format == SM_INPUT_FASTQ;
    /* FASTQ records are read whole: one starting past the range end is the next range's */
    if (r->ranged && fastq && stream_pos(r) >= r->limit) return range_finished(r, stream_pos(r));
    if (c != (fastq ? '@' : '>')) {
        char b[16];
        describe_byte((uint8_t)c, b, sizeof b);
        fail_at(r, r->line, r->buf_abs + r->pos - r->line_start + 1, 0,
                "expected a %s header ('%c'), found byte %s", fastq ? "FASTQ" : "FASTA",
                fastq ? '@' : '>', b);
        return report(r, err);
    }
    if (r->buf_abs + r->pos != r->line_start) {
        /* within a record a '>' after blanks is a bad sequence byte; be the
           same before the first record */
        fail_at(r, r->line, r->buf_abs + r->pos - r->line_start + 1, 0,
                "a header must start its line ('%c' after blank bytes)", c);
        return report(r, err);
    }
    raw_begin(r);
    if (!fastq) r->cross = r->ranged; /* a header line is read whole */
    int parsed = parse_header(r);
    if (!fastq) r->cross = 0;
    if (parsed < 0) return report(r, err);
    r->seq_len = 0;
    r->state = ST_SEQ;
    *name = r->name;
    return 1;
}

void sm_reader_keep_raw(sm_reader *r) {
    if (r && r->format != SM_INPUT_TEXT) r->keep_raw = 1;
}

sm_input_format sm_reader_format(const sm_reader *r) { return r->format; }

int sm_reader_record_raw(sm_reader *r, const uint8_t **data, size_t *len, int *stable, sm_error *err) {
    *data = NULL;
    *len = 0;
    if (stable) *stable = r->mapped;
    if (r->state == ST_ERROR) return report(r, err);
    if (!r->raw_open) {
        sm_io_error(err, SM_ERR_INVALID, "%s: no record's bytes kept (sm_reader_keep_raw)", r->shown);
        return -1;
    }
    if (drain_record(r) < 0) return report(r, err);
    if (r->format == SM_INPUT_LINES) {
        /* the \n of a \r\n line end belongs to this line */
        if (r->pos == r->end && refill(r) < 0) return report(r, err);
        if (r->pos < r->end && at_crlf_tail(r)) consume_newline(r);
    } else if (skip_blank(r) == -2) {
        /* blank lines after the record are its own: up to the next header */
        return report(r, err);
    }
    *data = r->buf + (r->raw_start - r->buf_abs);
    *len = (size_t)(r->buf_abs + r->pos - r->raw_start);
    return 1;
}

int sm_reader_open(const char *path, sm_input_format format, sm_reader **reader, sm_error *err) {
    return sm_reader_open_threads(path, format, 1, reader, err);
}

/* A reader on src (owned from here on, closed on failure): buffers, byte
   classes, the text record's name. With map, a plain file is read in place. */
static sm_reader *reader_new(sm_source *src, sm_input_format format, unsigned threads, int map, const char *path,
                             sm_error *err) {
    sm_reader *r = calloc(1, sizeof *r);
    if (r) {
        r->src = src;
        r->shown = sm_io_source_name(src);
        const uint8_t *data;
        size_t len;
        if (map && sm_io_source_map(src, &data, &len)) {
            /* the whole file in place, zero bytes readable after it */
            r->buf = (uint8_t *)data;
            r->end = len;
            r->eof = 1;
            r->mapped = 1;
        } else {
            /* zeroed padding lets letter_run read a vector past the data */
            r->buf = calloc(1, READER_RAW_CAP + READER_PAD);
            r->cap = READER_RAW_CAP;
        }
        if (format != SM_INPUT_TEXT && format != SM_INPUT_LINES)
            r->piece = malloc(READER_PIECE_CAP + READER_PAD);
    }
    if (!r || !r->buf || (!r->piece && format != SM_INPUT_TEXT && format != SM_INPUT_LINES) ||
        name_reserve(r, 256) < 0 || (format == SM_INPUT_TEXT && name_reserve(r, strlen(r->shown) + 1) < 0)) {
        if (r) sm_reader_close(r);
        else sm_io_source_close(src);
        sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    r->format = format;
    r->state = ST_BETWEEN;
    r->threads = threads;
    {
        const sm_cpu_features *cpu = sm_cpu();
        r->vector = cpu->avx512bw && cpu->avx512vbmi2 ? 2 : cpu->avx2 ? 1 : 0;
    }
    r->line = 1;
    r->name[0] = '\0';
    r->limit = UINT64_MAX;
    for (int c = 0; c < 256; c++) {
        uint8_t t = CLS_BAD;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '.' || c == '*')
            t = CLS_KEEP;
        else if (c == ' ' || c == '\t')
            t = CLS_SKIP;
        else if (c == '\n' || c == '\r')
            t = CLS_NL;
        r->cls[c] = t;
    }
    if (format == SM_INPUT_TEXT) {
        size_t n = strlen(r->shown);
        memcpy(r->name, r->shown, n + 1);
        r->name_len = n;
    }
    if (format == SM_INPUT_FASTA || format == SM_INPUT_FASTQ) r->marker = format == SM_INPUT_FASTQ ? '+' : '>';
    return r;
}

/* At the start of a FASTA or FASTQ file: refuses data compressed in a way
   the source does not read, skips a byte-order mark and, for AUTO, finds
   the format from the first byte that is not blank. */
static int start_of_file(sm_reader *r, sm_input_format format) {
    /* the file's first bytes are at buf[pos], not always buf[0]: a BGZF
       job inflated ahead hands over its own buffer */
    int rc = fill_to(r, 6) < 0 ? r->error.code
                               : sm_io_check_compression(r->shown, r->buf + r->pos, r->end - r->pos, &r->error);
    if (rc == SM_OK && r->end - r->pos >= 3 && memcmp(r->buf + r->pos, "\xef\xbb\xbf", 3) == 0) {
        /* a UTF-8 byte-order mark: not part of the first line */
        r->pos += 3;
        r->line_start = stream_pos(r);
    }
    int c = rc == SM_OK && format == SM_INPUT_AUTO ? skip_blank(r) : '>';
    if (rc == SM_OK && c == -2) rc = r->error.code;
    if (rc == SM_OK && c >= 0 && c != '>' && c != '@')
        rc = sm_io_error(&r->error, SM_ERR_FORMAT,
                         "%s: not FASTA or FASTQ (first byte 0x%02X); use --alphabet text for "
                         "plain text",
                         r->shown, (unsigned)c);
    if (rc != SM_OK) return rc;
    if (format == SM_INPUT_AUTO) r->format = c == '@' ? SM_INPUT_FASTQ : SM_INPUT_FASTA;
    r->marker = r->format == SM_INPUT_FASTQ ? '+' : '>';
    return SM_OK;
}

/* A reader on src (NULL: open path), at its first record. */
static int reader_open(const char *path, sm_source *src, sm_input_format format, unsigned threads,
                       sm_reader **reader, sm_error *err) {
    int rc = src ? SM_OK : sm_io_source_open(path, threads, &src, err);
    if (rc != SM_OK) return rc;
    sm_reader *r = reader_new(src, format, threads, 1, path, err);
    if (!r) return err ? err->code : SM_ERR_NOMEM;
    if (format != SM_INPUT_TEXT && format != SM_INPUT_LINES) {
        rc = start_of_file(r, format);
        if (rc != SM_OK) {
            if (err) *err = r->error;
            sm_reader_close(r);
            return rc;
        }
    }
    *reader = r;
    return SM_OK;
}

int sm_reader_open_threads(const char *path, sm_input_format format, unsigned threads, sm_reader **reader,
                           sm_error *err) {
    if (!reader) return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_open");
    *reader = NULL;
    if (!path || format < SM_INPUT_AUTO || format > SM_INPUT_LINES)
        return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_open");
    return reader_open(path, NULL, format, threads, reader, err);
}

int sm_reader_open_fn(const char *name, sm_input_format format, long (*read)(void *ctx, void *buf, size_t cap, sm_error *err),
                      void *ctx, sm_reader **reader, sm_error *err) {
    if (!reader) return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_open_fn");
    *reader = NULL;
    if (!name || !read || format < SM_INPUT_AUTO || format > SM_INPUT_LINES)
        return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_open_fn");
    sm_source *src;
    int rc = sm_io_source_open_fn(name, read, ctx, &src, err);
    return rc != SM_OK ? rc : reader_open(name, src, format, 1, reader, err);
}

/* ------------------------------------------------------------ byte ranges */

/* Most bytes looked at before a FASTA range's start for the line it starts
   in: a longer line is taken for a sequence line; the merge checks the
   guess against the range before, which read through that point. */
#define RANGE_LOOK_BACK ((size_t)1 << 20)

static int is_line_end(uint8_t c) { return c == '\n' || c == '\r'; }

/* Past the rest of the line at pos and its line end (\n, \r or \r\n): pos
   at the next line's start. Returns 1, 0 at the end of the input, -1. */
static int to_next_line(sm_reader *r) {
    int s = skip_line(r);
    if (s <= 0) return s;
    if (r->after_cr) {
        if (fill_to(r, 1) < 0) return -1;
        if (r->pos < r->end && r->buf[r->pos] == '\n') consume_newline(r);
    }
    return 1;
}

/* Ends of a line in p[i, n): the index after its line end, or n + 1 when the
   line runs past n. */
static size_t line_after(const uint8_t *p, size_t n, size_t i) {
    while (i < n && !is_line_end(p[i])) i++;
    if (i >= n) return n + 1;
    if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') return i + 2;
    if (p[i] == '\r' && i + 1 == n) return n + 1; /* a \n may follow */
    return i + 1;
}

/* One FASTQ record at p[*at] (a line start holding '@'), by the reader's
   rules: header, sequence lines up to a '+' line, quality lines as long as
   the sequence; *at moves past it and the blank bytes after it. 1 read, 0
   not a record, 2 the window p[0, n) ends first. */
static int fastq_one_record(const sm_reader *r, const uint8_t *p, size_t n, size_t *at, int input_ends) {
    size_t i = line_after(p, n, *at);
    if (i > n) return 2;
    uint64_t seq = 0, qual = 0;
    for (;;) {
        if (i == n) return input_ends ? 0 : 2;
        if (p[i] == '+') break;
        for (; i < n && !is_line_end(p[i]); i++) {
            uint8_t t = r->cls[p[i]];
            if (t & CLS_BAD) return 0;
            seq += t & CLS_KEEP;
        }
        size_t next = line_after(p, n, i);
        if (next > n) return 2;
        i = next;
    }
    i = line_after(p, n, i);
    if (i > n) return 2;
    int lines = 0;
    while (qual < seq || lines == 0) {
        if (i == n) {
            if (input_ends && seq == 0) break; /* an empty record's quality line may be missing at the end */
            return input_ends ? 0 : 2;
        }
        size_t j = i;
        for (; j < n && !is_line_end(p[j]); j++)
            if (p[j] < '!' || p[j] > '~') return 0;
        qual += j - i;
        lines++;
        size_t next = line_after(p, n, j);
        if (next > n) return 2;
        i = next;
        if (seq == 0) break;
    }
    if (qual != seq) return 0;
    while (i < n && (is_line_end(p[i]) || p[i] == ' ' || p[i] == '\t')) i++;
    *at = i;
    return 1;
}

/* Is p[0, n) (from a line start holding '@') the start of a FASTQ record?
   Two records in a row must read as records, each followed by another
   header or the end: a quality line that starts with '@' could pass for one
   record of short wrapped lines, hardly for two. 1 yes, 0 no, 2 the window
   ends first (taken as yes: the merge checks the ranges agree). */
static int fastq_record_at(const sm_reader *r, const uint8_t *p, size_t n, int input_ends) {
    size_t at = 0;
    for (int k = 0; k < 2; k++) {
        int got = fastq_one_record(r, p, n, &at, input_ends);
        if (got != 1) return got;
        if (at == n) return input_ends ? 1 : 2;
        if (p[at] != '@') return 0;
    }
    return 1;
}

/* FASTQ: from pos (a line start), the first line that starts a record.
   Returns 1 there, 0 when the input ends first, -1 on error. */
static int find_fastq_record(sm_reader *r) {
    for (;;) {
        if (fill_to(r, 1) < 0) return -1;
        if (r->pos == r->end) return 0;
        if (r->buf[r->pos] == '@') {
            /* as much of what follows as the buffer holds (all of a mapped file) */
            if (!r->mapped && fill_to(r, READER_RAW_CAP) < 0) return -1;
            int input_ends = r->eof;
            int at = fastq_record_at(r, r->buf + r->pos, r->end - r->pos, input_ends);
            if (at) return 1;
        }
        int s = to_next_line(r);
        if (s < 0) return -1;
        if (s == 0) return 0;
    }
}

/* Positions a ranged reader at its range start b (buf[pos]), whose previous
   bytes are prev[0, nprev) (nprev 0: b is the file's start): a record
   starting in the range, or the rest of one begun before it. */
static int start_range(sm_reader *r, const uint8_t *prev, size_t nprev, int prev_starts_file) {
    r->begin_off = stream_pos(r);
    r->first_record = r->begin_off;
    r->line_start = r->begin_off;
    if (nprev == 0) {
        /* the file's start: as an unranged reader */
        int rc = SM_OK;
        r->cross = 1; /* the first bytes (a byte-order mark) may lie past a tiny range */
        if (r->format == SM_INPUT_FASTA || r->format == SM_INPUT_FASTQ) rc = start_of_file(r, r->format);
        r->cross = r->format == SM_INPUT_FASTQ || r->format == SM_INPUT_LINES;
        return rc;
    }
    uint8_t last = prev[nprev - 1];
    int line_start = is_line_end(last);
    r->after_cr = last == '\r';
    r->cross = 1; /* the mark's rest, and finding the first record, may read past the range end */
    static const uint8_t bom[3] = {0xef, 0xbb, 0xbf};
    if (prev_starts_file && nprev <= 3 && memcmp(prev, bom, nprev) == 0 &&
        (r->format == SM_INPUT_FASTA || r->format == SM_INPUT_FASTQ)) {
        /* inside or just after a byte-order mark: the first line starts after it */
        size_t rest = 3 - nprev;
        if (fill_to(r, rest) < 0) return r->error.code;
        if (r->end - r->pos >= rest && memcmp(r->buf + r->pos, bom + nprev, rest) == 0) {
            r->pos += rest;
            r->line_start = stream_pos(r);
            line_start = 1;
            r->after_cr = 0;
        }
    }
    int rc = SM_OK;
    if (r->format == SM_INPUT_TEXT) {
        r->pending_part = 1;
    } else if (r->format == SM_INPUT_FASTA) {
        if (fill_to(r, 2) < 0) rc = -1;
        size_t at = r->pos;
        if (rc == SM_OK && line_start && r->after_cr && at < r->end && r->buf[at] == '\n') at++; /* \r\n's tail */
        if (rc == SM_OK && line_start) {
            r->start_kind = SM_RANGE_LINE_START;
            if (at == r->end) r->range_done = 1; /* nothing in the range */
            else if (r->buf[at] != '>') r->pending_part = 1;
        } else if (rc == SM_OK) {
            /* the line it starts in: a header, or sequence */
            size_t q = nprev > RANGE_LOOK_BACK ? nprev - RANGE_LOOK_BACK : 0, i = nprev;
            while (i > q && !is_line_end(prev[i - 1])) i--;
            int header = i > q && i < nprev && prev[i] == '>';
            if (i == 0 && prev_starts_file) {
                /* the file's first line, after any byte-order mark */
                size_t first = nprev >= 3 && memcmp(prev, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
                header = first < nprev && prev[first] == '>';
            }
            r->start_kind = header ? SM_RANGE_IN_HEADER : SM_RANGE_IN_SEQUENCE;
            r->line_start = UINT64_MAX;
            r->after_cr = 0;
            if (header) {
                /* its record's sequence after it is the range's first part */
                int s = to_next_line(r);
                if (s < 0) rc = -1;
                else if (s == 0 || stream_pos(r) >= r->limit) r->range_done = 1;
                else r->pending_part = 1;
                /* a header line past the range end: the next range starts inside it too */
                if (rc == SM_OK && r->limit != UINT64_MAX && stream_pos(r) > r->limit)
                    r->end_kind = SM_RANGE_IN_HEADER;
            } else {
                r->pending_part = 1;
            }
        }
        if (rc == SM_OK && r->pending_part) {
            r->name_len = 0;
            r->name[0] = '\0';
            r->state = ST_SEQ;
        }
    } else {
        /* FASTQ and lines: whole records, the first starting at or after b */
        if (!line_start) {
            int s = to_next_line(r);
            if (s < 0) rc = -1;
        } else if (r->after_cr) {
            if (fill_to(r, 1) < 0) rc = -1;
            else if (r->pos < r->end && r->buf[r->pos] == '\n') consume_newline(r);
        }
        if (rc == SM_OK && r->format == SM_INPUT_FASTQ && find_fastq_record(r) < 0) rc = -1;
        r->line_start = stream_pos(r);
        r->after_cr = 0;
        r->line = 1;
        r->first_record = stream_pos(r);
    }
    /* FASTA and text stop at the range end; FASTQ and lines read records whole */
    r->cross = r->format == SM_INPUT_FASTQ || r->format == SM_INPUT_LINES;
    if (rc != SM_OK) return r->error.code ? r->error.code : SM_ERR_IO;
    if (r->pending_part) r->state = ST_BETWEEN;
    return SM_OK;
}

int sm_reader_open_range(const char *path, sm_input_format format, unsigned threads, uint64_t begin, uint64_t end,
                         sm_reader **reader, sm_error *err) {
    return sm_reader_open_range_decoder(path, format, threads, begin, end, NULL, reader, err);
}

int sm_reader_open_range_decoder(const char *path, sm_input_format format, unsigned threads, uint64_t begin,
                                 uint64_t end, const sm_io_bgzf_decoder *decoder, sm_reader **reader, sm_error *err) {
    if (!reader) return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_open_range");
    *reader = NULL;
    if (!path || format < SM_INPUT_FASTA || format > SM_INPUT_LINES || begin > end)
        return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_open_range");
    sm_source *src;
    int rc = sm_io_source_open_decoder(path, threads, decoder, &src, err);
    if (rc != SM_OK) return rc;
    int kind = sm_io_source_rangeable(src);
    if (!kind) {
        sm_io_source_close(src);
        return sm_io_error(err, SM_ERR_INVALID, "%s: only a plain or BGZF file can be read from the middle", path);
    }
    uint64_t size = sm_io_source_size(src);
    if (end > size) end = size;
    if (begin > end) begin = end;
    uint64_t block = 0, block_end = 0;
    int prev_starts_file = 0;
    uint8_t *prev = NULL;
    size_t nprev = 0;
    sm_error e;
    memset(&e, 0, sizeof e);
    if (kind == 2) {
        rc = sm_io_bgzf_boundary_at_or_after(src, begin, &block, &e);
        if (rc == SM_OK) rc = sm_io_bgzf_boundary_at_or_after(src, end, &block_end, &e);
        if (rc == SM_OK && block > 0 && block < block_end && format != SM_INPUT_TEXT)
            rc = sm_io_bgzf_data_before(src, block, RANGE_LOOK_BACK, &prev, &nprev, &prev_starts_file, &e);
        if (rc == SM_OK) rc = sm_io_source_limit(src, block, block_end, &e);
        if (rc != SM_OK) {
            free(prev);
            sm_io_source_close(src);
            if (err) *err = e;
            return rc;
        }
    }
    sm_reader *r = reader_new(src, format, threads, kind == 1, path, err);
    if (!r) {
        free(prev);
        return err ? err->code : SM_ERR_NOMEM;
    }
    r->ranged = 1;
    if (kind == 1) {
        r->pos = (size_t)begin;
        r->limit = end;
        rc = start_range(r, r->buf, (size_t)begin, 1);
    } else {
        r->bgzf = 1;
        r->file_base = block;
        r->source_limited = 1;
        if (block == block_end) {
            /* no block starts in the range: nothing to read */
            r->limit = 0;
            r->range_done = 1;
        } else if (block > 0 && format == SM_INPUT_TEXT) {
            uint8_t one = 0; /* text needs no bytes before, only to know it starts inside */
            rc = start_range(r, &one, 1, 0);
        } else if (block > 0 && nprev == 0) {
            rc = start_range(r, NULL, 0, 1); /* only empty blocks before: the data starts here */
        } else {
            rc = start_range(r, prev, block > 0 ? nprev : 0, prev_starts_file);
        }
    }
    free(prev);
    if (rc != SM_OK) {
        if (err) *err = r->error;
        sm_reader_close(r);
        return rc;
    }
    *reader = r;
    return SM_OK;
}

int sm_reader_record_continued(const sm_reader *r) { return r->continued; }

int sm_reader_record_cut(const sm_reader *r) { return r->state == ST_CUT || r->extra; }

int sm_reader_read_extra(sm_reader *r, uint8_t *dst, size_t cap, size_t *len, sm_error *err) {
    if (!r || !dst || !len) return sm_io_error(err, SM_ERR_INVALID, "invalid arguments to sm_reader_read_extra");
    *len = 0;
    if (r->state == ST_ERROR) return report(r, err);
    if (r->state == ST_CUT) {
        /* past the range end: the bytes the record's last hits reach into */
        if (r->end_kind != SM_RANGE_IN_HEADER) r->end_kind = SM_RANGE_IN_SEQUENCE;
        r->state = ST_SEQ;
        r->extra = 1;
        r->cross = 1;
        r->range_done = 1;
    }
    if (!r->extra) return 0;
    return sm_reader_read_into(r, dst, cap, len, err);
}

void sm_reader_range_info(const sm_reader *r, sm_range_info *info) {
    memset(info, 0, sizeof *info);
    info->empty = r->bgzf && r->limit == 0;
    info->start_kind = r->start_kind;
    info->end_kind = r->end_kind;
    info->first_record = r->first_record - r->begin_off;
    info->next_record = UINT64_MAX;
    if (r->range_done && r->next_record_at != UINT64_MAX && r->limit != UINT64_MAX && r->next_record_at >= r->limit)
        info->next_record = r->next_record_at - r->limit;
    info->lines = r->line - 1;
}

void sm_reader_progress(const sm_reader *r, uint64_t *done, uint64_t *total) {
    sm_io_source_progress(r->src, done, total);
    if (r->mapped && done) *done = r->pos;
}

sm_reader_resume *sm_reader_resume_point(sm_reader *r) { return &r->resume; }

void sm_reader_share_threads(sm_reader *r, unsigned threads, sm_parallel_for_fn run, void *ctx) {
    if (!r || r->strip) return;
    r->threads = threads;
    r->team = run;
    r->team_ctx = ctx;
}

int sm_reader_read_records(sm_reader *r, uint8_t *dst, size_t room, size_t max_records, sm_reader_records *out) {
    memset(out, 0, sizeof *out);
    /* a mapped plain file between records, read from its start, on a team */
    if (!r || !dst || !r->mapped || r->ranged || r->keep_raw || r->state != ST_BETWEEN || r->after_cr || !r->team ||
        r->threads < 2 || (r->format != SM_INPUT_FASTA && r->format != SM_INPUT_FASTQ) || room == 0 ||
        max_records == 0 || r->pos >= r->end || r->buf_abs + r->pos != r->line_start)
        return 0;
    /* FASTA from three threads, as the long records' stripping: on two
       cores the serial loop strips a long record's lines as cheaply as the
       parts do with the scan beside them (docs/architecture.md, "Many
       records at once"); FASTQ's short records gain from two */
    if (r->format == SM_INPUT_FASTA && r->threads < 3) return 0;
    if (!r->records && !(r->records = sm_records_parser_new())) return 0;
    sm_records_job job;
    memset(&job, 0, sizeof job);
    job.p = r->buf + r->pos;
    job.n = r->end - r->pos;
    /* records are stripped to their raw offsets (or before): room raw bytes */
    job.window = room < job.n ? room : job.n;
    job.fastq = r->format == SM_INPUT_FASTQ;
    job.name_max = READER_NAME_MAX;
    job.dst = dst;
    job.max_records = max_records;
    job.threads = r->threads;
    job.run = r->team;
    job.run_ctx = r->team_ctx;
    size_t n = sm_records_parse(r->records, &job);
    out->need = job.need;
    if (n == 0) return 0;
    size_t at = r->pos + job.used;
    r->line += job.lines;
    size_t nl = at;
    while (nl > r->pos && r->buf[nl - 1] != '\n') nl--;
    if (nl > r->pos) r->line_start = r->buf_abs + nl;
    r->pos = at;
    out->n = n;
    out->offs = job.offs;
    out->lens = job.lens;
    out->names = job.names;
    return 1;
}

int sm_reader_window_get(sm_reader *r, size_t want, sm_reader_window *w) {
    memset(w, 0, sizeof *w);
    if (!r || r->format != SM_INPUT_FASTQ || r->state != ST_BETWEEN || r->ranged || r->after_cr ||
        r->buf_abs + r->pos != r->line_start)
        return 0;
    r->raw_open = 0; /* no record is open: nothing before pos is kept */
    if (!r->mapped) {
        if (want > r->cap) want = r->cap;
        while (r->end - r->pos < want && !(r->pos == 0 && r->end == r->cap)) {
            /* a failed read: the whole records before it are still
               given; the next record read says what failed */
            /* a BGZF job is not split to fill the window: once the
               reader holds too much to take the next job in place, the
               window is what it holds (a read would copy that to the
               front and the job's start after it) */
            if (r->end - r->pos > SM_IO_SWAP_KEEP && sm_io_source_job_next(r->src)) break;
            r->swapped = 0;
            if (refill(r) <= 0 || r->swapped) break;
        }
    }
    w->p = r->buf + r->pos;
    w->n = r->end - r->pos;
    w->ends = r->eof;
    w->stable = r->mapped;
    w->line = r->line;
    return w->n > 0;
}

void sm_reader_window_take(sm_reader *r, size_t used, uint64_t lines) {
    if (used == 0) return;
    r->pos += used;
    r->line += lines;
    r->line_start = r->buf_abs + r->pos;
}

int sm_reader_window_swap(sm_reader *r, uint8_t **buf, size_t *cap) {
    if (!r || r->mapped || r->raw_open) return -1;
    size_t need = r->cap + READER_PAD, keep = r->end - r->pos;
    uint8_t *p = *buf;
    if (!p || *cap < need) {
        p = realloc(p, need);
        if (!p) return -1;
        /* initialised, as calloc leaves a new reader's: the vector loops
           read past the data */
        memset(p, 0, need);
        *buf = p;
        *cap = need;
    }
    memcpy(p, r->buf + r->pos, keep);
    memset(p + r->cap, 0, READER_PAD);
    *buf = r->buf;
    *cap = need;
    r->buf = p;
    r->buf_abs += r->pos;
    r->end = keep;
    r->pos = 0;
    return 0;
}

const char *sm_reader_shown(const sm_reader *r) { return r->shown; }

void sm_reader_first_line(sm_reader *r, uint64_t line) { r->line = line; }

void sm_reader_close(sm_reader *r) {
    if (!r) return;
    sm_io_source_close(r->src);
    sm_strip_pool_free(r->strip);
    sm_records_parser_free(r->records);
    if (!r->mapped) free(r->buf);
    free(r->piece);
    free(r->name);
    free(r);
}
