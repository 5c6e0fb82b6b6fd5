/* Adapter trimming (include/seqmatch_reader.h, sm_trim_*, sm_trimmer_*):
 * the choice of the hit that cuts a read, the record rewritten around the
 * part kept, and the loop of seqmatch trim.
 *
 * Reads (or pairs of mates read in step) are read in chunks with their
 * bytes; a worker per thread, with a runner of its own, scans a chunk,
 * cuts and rewrites its reads; the chunks are handed on in input order
 * ("the loop" below). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/cpu.h"
#include "seqmatch_gzip.h"
#include "seqmatch_output.h"
#include "seqmatch_reader.h"
#include "io/seqio.h"
#include "io/source.h"

/* ------------------------------------------------------------ the set */

static int add_pattern(sm_trim_set *set, const char *name, const char *seq, size_t len, uint32_t *index,
                       sm_error *err) {
    if (len == 0) return sm_io_error(err, SM_ERR_INVALID, "adapter '%s': an empty sequence", name);
    *index = (uint32_t)set->patterns.count;
    if (sm_pattern_list_add(&set->patterns, name, seq, len) != SM_OK)
        return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    return SM_OK;
}

int sm_trim_set_add(sm_trim_set *set, const char *text, sm_trim_kind kind, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    if (kind != SM_TRIM_BACK && kind != SM_TRIM_FRONT)
        return sm_io_error(err, SM_ERR_INVALID, "adapter '%s': give it as a 3' or a 5' adapter", text);
    sm_trim_adapter a;
    memset(&a, 0, sizeof a);
    size_t n = strlen(text);
    const char *first = text, *dots = strstr(text, "...");
    size_t first_len = dots ? (size_t)(dots - text) : n;
    const char *second = dots ? dots + 3 : NULL;
    size_t second_len = dots ? n - first_len - 3 : 0;
    if (first_len > 0 && first[0] == '^') {
        if (kind == SM_TRIM_BACK && !dots)
            return sm_io_error(err, SM_ERR_INVALID, "adapter '%s': '^' anchors a 5' adapter (-g ^SEQ)", text);
        a.anchored = 1, first++, first_len--;
    }
    const char *last = dots ? second : first;
    size_t *last_len = dots ? &second_len : &first_len;
    if (*last_len > 0 && last[*last_len - 1] == '$') {
        if (kind == SM_TRIM_FRONT && !dots)
            return sm_io_error(err, SM_ERR_INVALID, "adapter '%s': '$' anchors a 3' adapter (-a SEQ$)", text);
        (*last_len)--;
        if (dots) a.second_anchored = 1;
        else a.anchored = 1;
    }
    if ((dots && strstr(second, "...")) || memchr(first, '^', first_len) || memchr(first, '$', first_len) ||
        (dots && (memchr(second, '^', second_len) || memchr(second, '$', second_len))))
        return sm_io_error(err, SM_ERR_INVALID, "adapter '%s': '^' only begins it, '$' only ends it, and '...' "
                           "links two parts once", text);
    if (first_len == 0 || (dots && second_len == 0))
        return sm_io_error(err, SM_ERR_INVALID, "adapter '%s': an empty sequence", text);
    if (dots) {
        /* as cutadapt: given with -a, the anchored parts are required; with -g, both */
        a.kind = SM_TRIM_LINKED;
        a.required = kind == SM_TRIM_FRONT || a.anchored;
        a.second_required = kind == SM_TRIM_FRONT || a.second_anchored;
    } else {
        a.kind = kind;
    }
    int status = add_pattern(set, text, first, first_len, &a.pattern, err);
    a.length = (uint32_t)first_len;
    if (status == SM_OK && dots) {
        status = add_pattern(set, text, second, second_len, &a.second, err);
        a.second_length = (uint32_t)second_len;
    }
    if (status != SM_OK) return status;
    sm_trim_adapter *grown = realloc(set->adapters, (set->count + 1) * sizeof *grown);
    if (!grown) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    set->adapters = grown;
    set->adapters[set->count++] = a;
    return SM_OK;
}

void sm_trim_set_free(sm_trim_set *set) {
    free(set->adapters);
    sm_pattern_list_free(&set->patterns);
    memset(set, 0, sizeof *set);
}

/* ------------------------------------------------------------ the choice */

/* Where a hit lies: a whole placement, one that runs off the read's start
   (only a suffix of the pattern inside) or end (a prefix), or a read
   wholly inside a placement. Partial hits exist only with min_overlap;
   partial (1 or 0) says whether the runner gave the hit as a partial one,
   or is -1 when unknown: exact and mismatches, where whole hits have the
   pattern's length and partial ones are shorter. */
enum { WHOLE, OFF_START, OFF_END, COVERS_READ };

static int hit_place(const sm_hit *h, int partial, uint32_t pattern_length, uint32_t min_overlap, uint64_t length) {
    if (min_overlap == 0 || (partial < 0 ? h->end - h->start >= pattern_length : !partial)) return WHOLE;
    if (h->start == 0 && h->end == length) return COVERS_READ;
    return h->start == 0 ? OFF_START : OFF_END;
}

typedef struct {
    int found, partial;
    uint64_t start, end;
    uint32_t errors;
} part_hit;

/* The leftmost hit of pattern that may cut as kind (BACK or FRONT) and lies
   in [from, length); anchored: a whole one at the read's end (BACK) or
   start (FRONT). */
static part_hit leftmost(const sm_hit *hits, const uint8_t *partial, size_t count, uint32_t pattern,
                         uint32_t pattern_length, sm_trim_kind kind, int anchored, uint32_t min_overlap, uint64_t from,
                         uint64_t length) {
    part_hit best = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < count; i++) {
        const sm_hit *h = &hits[i];
        if (h->pattern != pattern || h->strand == '-' || h->start < from) continue;
        int place = hit_place(h, partial ? partial[i] : -1, pattern_length, min_overlap, length);
        if (kind == SM_TRIM_BACK ? place == OFF_START : place == OFF_END) continue;
        if (anchored && (place != WHOLE || (kind == SM_TRIM_BACK ? h->end != length : h->start != from)))
            continue;
        /* a hit off the read's start (5') loses to a whole one, as in cutadapt */
        int partial = place == OFF_START;
        int better = !best.found || partial < best.partial ||
                     (partial == best.partial &&
                      (h->start < best.start ||
                       (h->start == best.start && (h->errors < best.errors ||
                                                   (h->errors == best.errors && h->end < best.end)))));
        if (better) best = (part_hit){1, partial, h->start, h->end, h->errors};
    }
    return best;
}

static int64_t score(const part_hit *p) { return (int64_t)(p->end - p->start) - 2 * (int64_t)p->errors; }

static void decide(const sm_trim_set *set, unsigned mate, uint32_t min_overlap, const sm_hit *hits,
                   const uint8_t *partial, size_t count, uint64_t length, sm_trim_cut *cut) {
    /* field by field over zeroed bytes: a struct copy need not copy zero
       padding, and callers may hash the cut */
    memset(cut, 0, sizeof *cut);
    cut->end = length;
    cut->adapter = -1;
    int64_t best_score = 0;
    for (size_t i = 0; i < set->count; i++) {
        const sm_trim_adapter *a = &set->adapters[i];
        if (a->mate != 0 && a->mate != mate) continue;
        sm_trim_cut c = {0, length, (int64_t)i, 0};
        int64_t s = 0;
        if (a->kind == SM_TRIM_BACK || a->kind == SM_TRIM_FRONT) {
            part_hit p = leftmost(hits, partial, count, a->pattern, a->length, a->kind, a->anchored, min_overlap, 0,
                                  length);
            if (!p.found) continue;
            if (a->kind == SM_TRIM_BACK) c.end = p.start;
            else c.start = p.end;
            c.errors = p.errors;
            s = score(&p);
        } else {
            part_hit p = leftmost(hits, partial, count, a->pattern, a->length, SM_TRIM_FRONT, a->anchored, min_overlap, 0,
                                  length);
            if (!p.found && a->required) continue;
            uint64_t from = p.found ? p.end : 0;
            part_hit q = leftmost(hits, partial, count, a->second, a->second_length, SM_TRIM_BACK, a->second_anchored,
                                  min_overlap, from, length);
            if ((!q.found && a->second_required) || (!p.found && !q.found)) continue;
            c.start = from;
            c.end = q.found ? q.start : length;
            c.errors = (p.found ? p.errors : 0) + (q.found ? q.errors : 0);
            s = (p.found ? score(&p) : 0) + (q.found ? score(&q) : 0);
        }
        if (cut->adapter < 0 || s > best_score || (s == best_score && c.errors < cut->errors)) {
            cut->start = c.start, cut->end = c.end, cut->adapter = c.adapter, cut->errors = c.errors;
            best_score = s;
        }
    }
}

void sm_trim_decide(const sm_trim_set *set, unsigned mate, uint32_t min_overlap, const sm_hit *hits, size_t count,
                    uint64_t length, sm_trim_cut *cut) {
    decide(set, mate, min_overlap, hits, NULL, count, length, cut);
}

void sm_trim_decide_partial(const sm_trim_set *set, unsigned mate, uint32_t min_overlap, const sm_hit *hits,
                            const uint8_t *partial, size_t count, uint64_t length, sm_trim_cut *cut) {
    decide(set, mate, min_overlap, hits, partial, count, length, cut);
}

/* ------------------------------------------------------------ the records */

typedef struct {
    uint8_t *data;
    size_t len, cap;
} byte_buf;

static int buf_put(byte_buf *b, const void *data, size_t len) {
    if (b->cap - b->len < len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < len) cap *= 2;
        uint8_t *p = realloc(b->data, cap);
        if (!p) return -1;
        b->data = p;
        b->cap = cap;
    }
    if (len) memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

/* The next line of raw[*at, len): its bytes without the line end. */
static const uint8_t *next_line(const uint8_t *raw, size_t len, size_t *at, size_t *line_len) {
    const uint8_t *p = raw + *at;
    const uint8_t *nl = memchr(p, '\n', len - *at);
    size_t n = nl ? (size_t)(nl - p) : len - *at;
    *at += n + (nl ? 1 : 0);
    *line_len = n;
    return p;
}

/* Sequence or quality bytes of a line (carriage returns are no symbols),
   copied in runs between them. */
static int put_symbols(byte_buf *b, const uint8_t *line, size_t n) {
    while (n > 0) {
        const uint8_t *cr = memchr(line, '\r', n);
        size_t run = cr ? (size_t)(cr - line) : n;
        if (buf_put(b, line, run) != 0) return -1;
        if (!cr) break;
        line += run + 1;
        n -= run + 1;
    }
    return 0;
}

/* [start, end) of what b holds (which may be nothing yet: no pointer arithmetic on NULL). */
static int put_part(byte_buf *out, const byte_buf *b, uint64_t start, uint64_t end) {
    return end > start ? buf_put(out, b->data + start, (size_t)(end - start)) : 0;
}

/* Writes the record raw (FASTA or FASTQ as read) with its sequence (and
   qualities) cut to [start, end) at the end of out. Returns 0, 1 when the record
   does not read as length symbols (not expected from the reader), or -1
   out of memory. */
static int rewrite(const uint8_t *raw, size_t len, uint64_t length, uint64_t start, uint64_t end, byte_buf *seq,
                   byte_buf *out) {
    size_t at = 0, n;
    seq->len = 0;
    const uint8_t *header = next_line(raw, len, &at, &n);
    const char *eol = n > 0 && header[n - 1] == '\r' ? "\r\n" : "\n";
    size_t eol_len = strlen(eol);
    int fastq = len > 0 && raw[0] == '@';
    if (buf_put(out, header, at) != 0) return -1;
    if ((at == 0 || raw[at - 1] != '\n') && buf_put(out, "\n", 1) != 0) return -1; /* a last line without its end */
    const uint8_t *plus = NULL;
    size_t plus_len = 0;
    while (at < len) {
        size_t line_start = at;
        const uint8_t *line = next_line(raw, len, &at, &n);
        if (fastq && n > 0 && line[0] == '+') {
            plus = raw + line_start;
            plus_len = at - line_start;
            break;
        }
        if (put_symbols(seq, line, n) != 0) return -1;
    }
    if (seq->len != length || (fastq && !plus)) return 1;
    if (put_part(out, seq, start, end) != 0 || buf_put(out, eol, eol_len) != 0) return -1;
    if (!fastq) return 0;
    if (buf_put(out, plus, plus_len) != 0) return -1;
    if (plus[plus_len - 1] != '\n' && buf_put(out, "\n", 1) != 0) return -1;
    seq->len = 0;
    while (at < len && seq->len < length) {
        const uint8_t *line = next_line(raw, len, &at, &n);
        if (put_symbols(seq, line, n) != 0) return -1;
    }
    if (seq->len != length) return 1;
    if (put_part(out, seq, start, end) != 0 || buf_put(out, eol, eol_len) != 0) return -1;
    return 0;
}

int sm_trim_record(const uint8_t *raw, size_t len, uint64_t head, uint64_t tail, uint8_t **out, size_t *out_len,
                   size_t *cap) {
    /* the sequence's length first: its lines up to the '+' line (FASTQ) or the end */
    int fastq = len > 0 && raw[0] == '@';
    size_t at = 0, n;
    uint64_t length = 0;
    if (len == 0 || (raw[0] != '@' && raw[0] != '>')) return SM_ERR_FORMAT;
    next_line(raw, len, &at, &n);
    while (at < len) {
        const uint8_t *line = next_line(raw, len, &at, &n);
        if (fastq && n > 0 && line[0] == '+') break;
        for (size_t i = 0; i < n; i++) length += line[i] != '\r';
    }
    uint64_t start = head < length ? head : length;
    uint64_t end = length - start > tail ? length - tail : start;
    byte_buf seq = {NULL, 0, 0}, o = {*out, 0, *cap};
    int rc = rewrite(raw, len, length, start, end, &seq, &o);
    free(seq.data);
    *out = o.data, *cap = o.cap, *out_len = o.len;
    return rc < 0 ? SM_ERR_NOMEM : rc > 0 ? SM_ERR_FORMAT : SM_OK;
}

/* ------------------------------------------------------------ the loop */

/* Reads (or pairs) go in chunks from the reading thread to workers, each
 * with a runner of its own on its own thread, which scan, decide and
 * rewrite a whole chunk; the chunks are handed on in input order, by the
 * worker that finds the oldest done (when no one else hands on, and no
 * on_record callback is to see them; the reading thread otherwise). The
 * reading thread then mostly reads, and the worker writes bytes it has in
 * its cache. Reading (and inflating, on the reader's thread), scanning
 * and rewriting of different chunks so run at once. One worker: all on
 * the caller's thread. */

/* Input bytes per chunk (fewer with a small runner chunk_size, so that
   small inputs cross chunks as well), and chunks under way per worker
   (two: a third only kept more buffers out of the caches). */
#define CHUNK_BYTES ((size_t)1 << 20)
#define CHUNKS_PER_WORKER 2

typedef struct {
    const uint8_t *raw[2];      /* stable bytes, or NULL: in the chunk's copy at raw_at */
    size_t raw_at[2], raw_len[2];
    uint64_t length[2];
    size_t out_at[2], out_len[2]; /* the rewritten mate in the chunk's out */
    sm_trim_cut cut[2];
    size_t seq_at[2], plus_at[2], qual_at[2]; /* a four-line FASTQ record's lines (seq_at 0: another) */
    uint64_t line[2];           /* of its header, when unchecked */
    uint8_t unchecked;          /* taken whole from a window (take_block): its bytes are the worker's to check */
} chunk_record;

enum { CHUNK_FREE, CHUNK_FILLED, CHUNK_DONE };

typedef struct {
    chunk_record *recs;
    size_t n, cap;
    byte_buf raw, out[2];       /* out: each mate's rewritten records, in order */
    int state;                  /* under the trimmer's lock */
    int status;                 /* SM_OK, a runner's failure, SM_ERR_NOMEM, or SM_ERR_FORMAT: */
    size_t bad;                 /* this record does not read back as its sequence */
    int read_failed;            /* ... or does not read at all: message says why */
    sm_error message;
    uint64_t first;             /* records (pairs) read before it */
    byte_buf packed[2];         /* the kept records of out[m] as a gzip member (sm_trimmer.pack) */
    uint64_t packed_records;
} chunk;

typedef struct {
    sm_trimmer *t;
    sm_runner *runner;
    sm_hit *hits;               /* forward hits of the chunk, as delivered */
    uint8_t *partial;           /* hits[i] came as a partial one (on_partial_hit) */
    size_t hits_len, hits_cap;
    sm_hit *sorted;             /* the same, by record */
    uint8_t *sorted_partial;
    size_t sorted_cap;
    size_t *starts;             /* record i's hits: sorted[starts[i], starts[i + 1]) */
    size_t starts_cap;
    byte_buf seq;
    size_t *run_offs;           /* feed_runs' offsets, then its lengths */
    size_t runs_cap;
    sm_deflater *deflater;      /* pack_chunk's, made at its first chunk */
    byte_buf gather;
    int nomem;
    pthread_t thread;
} worker;

struct sm_trimmer {
    sm_trim_options o;
    uint32_t min_overlap;
    size_t chunk_bytes;
    worker *workers;
    unsigned nworkers;
    chunk *chunks;              /* a ring: chunk number s in chunks[s % nchunks] */
    size_t nchunks;
    uint64_t filled, taken, emitted; /* chunks so far: given to workers, taken by one, handed on */
    int emitting;               /* a chunk is being handed on (by a worker or the reading thread) */
    int halted;                 /* the run failed: the workers hand on no more */
    int quit;                   /* workers end */
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    unsigned mates;             /* of the run */
    uint64_t read;              /* records (pairs) read in the run */
    sm_input_format format;
    sm_trim_stats stats;
    atomic_ullong trimmed;      /* stats.trimmed as of the last chunk handed on, for on_progress */
    atomic_int stop;
    const sm_reader *reader;
    const char *shown[2];       /* the inputs as their readers name them */
    const char *paths[2];
    int avx2;                   /* the checks of records taken whole may use AVX2 */
    int has_adapters[2];        /* mate 1 (or a single read), mate 2: some adapter is for it */
    int pack;                   /* the outputs compress: the workers make their members */
    uint64_t *ends[2];          /* take_block's line ends of each mate's window */
    size_t ends_cap[2];
};

static int keep_hit(worker *w, const sm_hit *hit, int partial) {
    if (hit->strand == '-') return 0;
    if (w->hits_len == w->hits_cap) {
        size_t cap = w->hits_cap ? w->hits_cap * 2 : 1024;
        sm_hit *p = realloc(w->hits, cap * sizeof *p);
        uint8_t *q = p ? realloc(w->partial, cap) : NULL;
        if (p) w->hits = p;
        if (!q) {
            w->nomem = 1;
            return 1;
        }
        w->partial = q;
        w->hits_cap = cap;
    }
    w->partial[w->hits_len] = (uint8_t)partial;
    sm_hit *h = &w->hits[w->hits_len++];
    *h = *hit;
    h->text = NULL;
    return 0;
}

static unsigned long long shown_trimmed(sm_trimmer *t) {
    return atomic_load_explicit(&t->trimmed, memory_order_relaxed);
}

static int on_hit(const sm_hit *hit, void *ctx) { return keep_hit(ctx, hit, 0); }
static int on_partial_hit(const sm_hit *hit, void *ctx) { return keep_hit(ctx, hit, 1); }

static const uint8_t *record_raw(const chunk *c, const chunk_record *r, unsigned m) {
    return r->raw[m] ? r->raw[m] : c->raw.data + r->raw_at[m];
}

/* A record's sequence into the runner: its lines after the header, up to
   the '+' line (FASTQ), without line ends and carriage returns, as the
   reader gives them. */
static int feed_sequence(sm_runner *runner, const uint8_t *raw, size_t len) {
    int fastq = len > 0 && raw[0] == '@';
    size_t at = 0, n;
    next_line(raw, len, &at, &n);
    while (at < len) {
        const uint8_t *line = next_line(raw, len, &at, &n);
        if (fastq && n > 0 && line[0] == '+') break;
        while (n > 0) {
            const uint8_t *cr = memchr(line, '\r', n);
            size_t run = cr ? (size_t)(cr - line) : n;
            int status = run ? sm_runner_feed(runner, line, run) : SM_OK;
            if (status != SM_OK) return status;
            if (!cr) break;
            line += run + 1;
            n -= run + 1;
        }
    }
    return SM_OK;
}

/* The common record, four FASTQ lines ending in \n (not \r\n) with the
   sequence and qualities of length bytes each and nothing after them:
   where its lines begin, so that it is fed and rewritten without the
   general line walks (the same bytes as they give). */
static int four_lines(const uint8_t *raw, size_t len, uint64_t length, chunk_record *r, unsigned m) {
    if (len == 0 || raw[0] != '@') return 0;
    const uint8_t *nl = memchr(raw, '\n', len);
    if (!nl || nl == raw || nl[-1] == '\r') return 0;
    size_t seq_at = (size_t)(nl - raw) + 1, plus_at = seq_at + (size_t)length + 1;
    if (plus_at >= len || raw[plus_at - 1] != '\n' || raw[plus_at] != '+' || (length && raw[seq_at] == '+') ||
        memchr(raw + seq_at, '\n', (size_t)length))
        return 0;
    nl = memchr(raw + plus_at, '\n', len - plus_at);
    if (!nl) return 0;
    size_t qual_at = (size_t)(nl - raw) + 1;
    /* the qualities: the rest, with or without a last \n, no \r */
    size_t rest = len - qual_at - (raw[len - 1] == '\n');
    if (qual_at > len || rest != length || memchr(raw + qual_at, '\r', rest) || memchr(raw + qual_at, '\n', rest))
        return 0;
    r->seq_at[m] = seq_at, r->plus_at[m] = plus_at, r->qual_at[m] = qual_at;
    return 1;
}

static int rewrite_four_lines(const uint8_t *raw, const chunk_record *r, unsigned m, byte_buf *out) {
    uint64_t start = r->cut[m].start, kept = r->cut[m].end - start;
    /* a read kept whole, its record ending in \n right after the
       qualities: the record as it is, in one piece */
    if (start == 0 && kept == r->length[m] && r->raw_len[m] == r->qual_at[m] + kept + 1 &&
        raw[r->raw_len[m] - 1] == '\n')
        return buf_put(out, raw, r->raw_len[m]);
    return buf_put(out, raw, r->seq_at[m]) | buf_put(out, raw + r->seq_at[m] + start, kept) | buf_put(out, "\n", 1) |
           buf_put(out, raw + r->plus_at[m], r->qual_at[m] - r->plus_at[m]) |
           buf_put(out, raw + r->qual_at[m] + start, kept) | buf_put(out, "\n", 1);
}

/* ------------------------------------------- records taken whole (take_block) */

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "stdin" : path; }

/* Whether p[0, n) holds only sequence letters and '-', '.', '*' (what the
   reader keeps of a sequence line), or only quality bytes ('!'..'~'). */
static int only_symbols_slow(const uint8_t *p, size_t n, int quality) {
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        int ok = quality ? c >= '!' && c <= '~'
                         : ((unsigned)((c | 0x20) - 'a') < 26u || c == '-' || c == '.' || c == '*');
        if (!ok) return 0;
    }
    return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TRIM_AVX2 1

/* Which of v's bytes lie in a class: (v | fold) - base at most top, as
   unsigned bytes (letters: fold 0x20, base 'a', top 25; qualities: fold 0,
   base '!', top '~' - '!'). */
__attribute__((target("avx2"))) static inline __m256i in_class_avx2(__m256i v, __m256i fold, __m256i base, __m256i top) {
    __m256i x = _mm256_sub_epi8(_mm256_or_si256(v, fold), base);
    return _mm256_cmpeq_epi8(_mm256_min_epu8(x, top), x);
}

/* As only_symbols below, 32 bytes at a time (n >= 32). */
__attribute__((target("avx2"))) static int only_symbols_avx2(const uint8_t *p, size_t n, int quality) {
    const __m256i fold = _mm256_set1_epi8(quality ? 0 : 0x20), base = _mm256_set1_epi8(quality ? '!' : 'a');
    const __m256i top = _mm256_set1_epi8(quality ? '~' - '!' : 25);
    for (size_t i = 0;; i += 32) {
        if (i + 32 > n) i = n - 32;
        __m256i ok = in_class_avx2(_mm256_loadu_si256((const __m256i *)(p + i)), fold, base, top);
        if ((uint32_t)_mm256_movemask_epi8(ok) != 0xffffffffu) return only_symbols_slow(p, n, quality);
        if (i + 32 == n) return 1;
    }
}

/* only_symbols of a sequence and of its qualities (n >= 32 each) in one
   loop. */
__attribute__((target("avx2"))) static int seq_and_quals_avx2(const uint8_t *s, const uint8_t *q, size_t n) {
    const __m256i fold = _mm256_set1_epi8(0x20), a = _mm256_set1_epi8('a'), letters = _mm256_set1_epi8(25);
    const __m256i none = _mm256_setzero_si256(), bang = _mm256_set1_epi8('!'), quals = _mm256_set1_epi8('~' - '!');
    for (size_t i = 0;; i += 32) {
        if (i + 32 > n) i = n - 32;
        __m256i ok = _mm256_and_si256(in_class_avx2(_mm256_loadu_si256((const __m256i *)(s + i)), fold, a, letters),
                                      in_class_avx2(_mm256_loadu_si256((const __m256i *)(q + i)), none, bang, quals));
        if ((uint32_t)_mm256_movemask_epi8(ok) != 0xffffffffu)
            return only_symbols_slow(s, n, 0) && only_symbols_slow(q, n, 1);
        if (i + 32 == n) return 1;
    }
}
#endif

static int only_symbols(const uint8_t *p, size_t n, int quality, int avx2) {
#ifdef TRIM_AVX2
    if (avx2 && n >= 32) return only_symbols_avx2(p, n, quality);
#else
    (void)avx2;
#endif
#ifdef __SSE2__
    /* letters: (c | 0x20) - 'a' below 26; qualities: c - '!' below 94 (as
       unsigned bytes: min(x, top) == x); the last vector overlaps the one
       before instead of reading past the line; punctuation in a sequence
       takes the byte loop */
    if (n >= 16) {
        const __m128i fold = _mm_set1_epi8(quality ? 0 : 0x20), base = _mm_set1_epi8(quality ? '!' : 'a');
        const __m128i top = _mm_set1_epi8(quality ? '~' - '!' : 25);
        for (size_t i = 0;; i += 16) {
            if (i + 16 > n) i = n - 16;
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            __m128i x = _mm_sub_epi8(_mm_or_si128(v, fold), base);
            if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(x, top), x)) != 0xffff)
                return only_symbols_slow(p, n, quality);
            if (i + 16 == n) return 1;
        }
    }
#endif
    return only_symbols_slow(p, n, quality);
}

/* The first word of a line (a name as the reader takes it: up to white
   space or a NUL; the line ends in \n, within p[0, n)). */
static size_t word_length(const uint8_t *p, size_t n) {
    size_t i = 0;
#ifdef __SSE2__
    /* to the first byte up to ' ' (every name end is one), 16 at a time
       while there are 16 to read */
    const __m128i space = _mm_set1_epi8(' ');
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        int low = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, space), v));
        if (low) {
            i += (size_t)__builtin_ctz((unsigned)low);
            break;
        }
    }
#endif
    while (!sm_name_end(p[i])) i++;
    return i;
}

/* Whether a record take_block took reads as its four lines say, as the
   reader would read it: a name not ended by a NUL, a '+' line naming no
   other read, letters in the sequence, quality bytes in the qualities
   (and, for a pair, the mates' names the same). */
static int reads_as_taken(const chunk *c, const chunk_record *r, unsigned mates, int avx2) {
    size_t name_len[2] = {0, 0};
    for (unsigned m = 0; m < mates; m++) {
        const uint8_t *raw = record_raw(c, r, m);
        /* a bare '+' line names nothing */
        size_t n = word_length(raw + 1, r->raw_len[m] - 1),
               k = r->qual_at[m] - r->plus_at[m] == 2
                       ? 0
                       : word_length(raw + r->plus_at[m] + 1, r->raw_len[m] - r->plus_at[m] - 1);
        if (raw[1 + n] == 0 || (k && (k != n || memcmp(raw + r->plus_at[m] + 1, raw + 1, n) != 0)))
            return 0;
        size_t len = (size_t)r->length[m];
#ifdef TRIM_AVX2
        if (avx2 && len >= 32) {
            if (!seq_and_quals_avx2(raw + r->seq_at[m], raw + r->qual_at[m], len)) return 0;
        } else
#endif
            if (!only_symbols(raw + r->seq_at[m], len, 0, avx2) || !only_symbols(raw + r->qual_at[m], len, 1, avx2))
            return 0;
        name_len[m] = n;
    }
    if (mates < 2) return 1;
    const uint8_t *a = record_raw(c, r, 0) + 1, *b = record_raw(c, r, 1) + 1;
    for (unsigned m = 0; m < 2; m++) {
        const uint8_t *name = m ? b : a;
        size_t n = name_len[m];
        if (n >= 2 && name[n - 2] == '/' && (name[n - 1] == '1' || name[n - 1] == '2')) name_len[m] -= 2;
    }
    return name_len[0] == name_len[1] && memcmp(a, b, name_len[0]) == 0;
}

static int next_records(sm_reader *const *readers, const char *const *paths, uint64_t pair, int *more,
                        sm_error *err);

typedef struct {
    const uint8_t *p;
    size_t n, at;
} bytes_input;

static long read_bytes(void *ctx, void *buf, size_t cap, sm_error *err) {
    (void)err;
    bytes_input *in = ctx;
    size_t n = in->n - in->at < cap ? in->n - in->at : cap;
    memcpy(buf, in->p + in->at, n);
    in->at += n;
    return (long)n;
}

/* Record i of c does not read as take_block took it: its message, as the
   reader gives it reading the record the usual way (the same bytes from
   the same line; the four lines hold whatever is wrong, so the reader's
   first word on them is the one it would have given). */
static void failed_to_read(const sm_trimmer *t, chunk *c, size_t i) {
    const chunk_record *r = &c->recs[i];
    sm_reader *sub[2] = {NULL, NULL};
    bytes_input in[2];
    sm_error e;
    memset(&e, 0, sizeof e);
    int rc = SM_OK, more = 0;
    for (unsigned m = 0; m < t->mates && rc == SM_OK; m++) {
        in[m] = (bytes_input){record_raw(c, r, m), r->raw_len[m], 0};
        rc = sm_reader_open_fn(t->shown[m], SM_INPUT_FASTQ, read_bytes, &in[m], &sub[m], &c->message);
        if (rc == SM_OK) sm_reader_first_line(sub[m], r->line[m]);
    }
    if (rc == SM_OK) rc = next_records(sub, t->paths, c->first + i, &more, &c->message);
    for (unsigned m = 0; m < t->mates && rc == SM_OK; m++) {
        const uint8_t *data;
        size_t len;
        int got;
        while ((got = sm_reader_read(sub[m], &data, &len, &e)) > 0) {}
        if (got < 0) rc = sm_io_error(&c->message, e.code ? e.code : SM_ERR_FORMAT, "%s", e.message);
    }
    if (rc == SM_OK)
        sm_io_error(&c->message, SM_ERR_FORMAT, "%s: record %llu does not read back as its sequence",
                    shown(t->paths[0]), (unsigned long long)(c->first + i + 1));
    for (unsigned m = 0; m < t->mates; m++) sm_reader_close(sub[m]);
    c->read_failed = 1;
}

/* Checks c's records taken whole, up to the first that fails (its message
   in c). Returns 0 when all read. */
static int check_taken(const sm_trimmer *t, chunk *c) {
    for (size_t i = 0; i < c->n; i++)
        if (c->recs[i].unchecked && !reads_as_taken(c, &c->recs[i], t->mates, t->avx2)) {
            failed_to_read(t, c, i);
            return -1;
        }
    return 0;
}

/* The chunk's hits grouped by record (runner records first, first + 1, ...
   in delivery order within each). */
static int sort_hits(worker *w, uint64_t first, size_t records) {
    if (w->starts_cap < records + 1) {
        size_t *s = realloc(w->starts, (records + 1) * sizeof *s);
        if (!s) return -1;
        w->starts = s;
        w->starts_cap = records + 1;
    }
    if (w->sorted_cap < w->hits_len) {
        sm_hit *p = realloc(w->sorted, w->hits_len * sizeof *p);
        uint8_t *q = p ? realloc(w->sorted_partial, w->hits_len) : NULL;
        if (p) w->sorted = p;
        if (!q) return -1;
        w->sorted_partial = q;
        w->sorted_cap = w->hits_len;
    }
    memset(w->starts, 0, (records + 1) * sizeof *w->starts);
    for (size_t i = 0; i < w->hits_len; i++) w->starts[w->hits[i].record - first + 1]++;
    for (size_t i = 0; i < records; i++) w->starts[i + 1] += w->starts[i];
    for (size_t i = 0; i < w->hits_len; i++) {
        size_t at = w->starts[w->hits[i].record - first]++;
        w->sorted[at] = w->hits[i];
        w->sorted_partial[at] = w->partial[i];
    }
    /* each start has moved to the next record's: shift back */
    memmove(w->starts + 1, w->starts, records * sizeof *w->starts);
    w->starts[0] = 0;
    return 0;
}

/* Four-line records from (record, mate) number at on, their sequences
   copied into the runner's buffer and given to it many at once
   (sm_runner_records_buffer). Returns how many (0: the first does not fit
   there; fed the usual way), *first the runner's number of the first. */
static size_t feed_runs(worker *w, chunk *c, size_t at, size_t total, int *status, uint64_t *first) {
    unsigned mates = w->t->mates;
    const chunk_record *r = &c->recs[at / mates];
    size_t need = (size_t)r->length[at % mates], avail, max_records, n = 0, used = 0;
    uint8_t *dst;
    uint64_t number;
    *status = sm_runner_records_buffer(w->runner, need ? need : 1, (void **)&dst, &avail, &max_records, &number);
    if (*status != SM_OK || need > avail) return 0;
    if (first) *first = number;
    if (max_records > total - at) max_records = total - at;
    if (w->runs_cap < max_records) {
        size_t *o = realloc(w->run_offs, 2 * max_records * sizeof *o);
        if (!o) return *status = SM_ERR_NOMEM, 0;
        w->run_offs = o;
        w->runs_cap = max_records;
    }
    size_t *offs = w->run_offs, *lens = w->run_offs + w->runs_cap;
    for (; at < total && n < max_records; at++, n++) {
        r = &c->recs[at / mates];
        unsigned m = (unsigned)(at % mates);
        const uint8_t *raw = record_raw(c, r, m);
        size_t len = (size_t)r->length[m];
        if ((!r->seq_at[m] && !four_lines(raw, r->raw_len[m], r->length[m], (chunk_record *)r, m)) ||
            len > avail - used)
            break;
        memcpy(dst + used, raw + r->seq_at[m], len);
        offs[n] = used;
        lens[n] = len;
        used += len;
    }
    *status = sm_runner_records_commit(w->runner, n, offs, lens);
    return *status == SM_OK ? n : 0;
}

/* Whether a trimmed read (pair) is kept: long enough and not discarded. */
static int is_kept(const sm_trimmer *t, const chunk_record *e) {
    for (unsigned m = 0; m < t->mates; m++) {
        if (e->cut[m].end - e->cut[m].start < t->o.minimum_length) return 0;
        if (t->o.discard && t->has_adapters[m] &&
            (e->cut[m].adapter >= 0) == (t->o.discard == SM_TRIM_DISCARD_TRIMMED))
            return 0;
    }
    return 1;
}

/* The kept records among c's first n, each mate's as one gzip member (for
   outputs that compress: on the workers, not on the reading thread). */
static void pack_chunk(worker *w, chunk *c, size_t n) {
    sm_trimmer *t = w->t;
    c->packed[0].len = c->packed[1].len = 0;
    c->packed_records = 0;
    if (!t->pack) return;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) kept += (size_t)is_kept(t, &c->recs[i]);
    c->packed_records = kept;
    if (kept == 0) return;
    if (!w->deflater && !(w->deflater = sm_deflater_new())) {
        c->status = SM_ERR_NOMEM;
        return;
    }
    for (unsigned m = 0; m < t->mates; m++) {
        const chunk_record *last = &c->recs[n - 1];
        const uint8_t *from = c->out[m].data;
        size_t len = last->out_at[m] + last->out_len[m];
        if (kept < n) {
            /* the kept ones gathered */
            w->gather.len = 0;
            for (size_t i = 0; i < n; i++)
                if (is_kept(t, &c->recs[i]) &&
                    buf_put(&w->gather, c->out[m].data + c->recs[i].out_at[m], c->recs[i].out_len[m]) != 0) {
                    c->status = SM_ERR_NOMEM;
                    return;
                }
            from = w->gather.data;
            len = w->gather.len;
        }
        size_t cap = sm_gzip_bound(len);
        if (c->packed[m].cap < cap) {
            uint8_t *p = realloc(c->packed[m].data, cap);
            if (!p) {
                c->status = SM_ERR_NOMEM;
                return;
            }
            c->packed[m].data = p;
            c->packed[m].cap = cap;
        }
        c->packed[m].len = sm_gzip_member(w->deflater, from, len, c->packed[m].data, cap);
        if (c->packed[m].len == 0) c->status = SM_ERR_NOMEM;
    }
}

/* Scans, decides and rewrites a chunk (on the worker's thread). */
static void trim_chunk(worker *w, chunk *c) {
    sm_trimmer *t = w->t;
    unsigned mates = t->mates;
    c->status = SM_OK;
    c->out[0].len = c->out[1].len = 0;
    w->hits_len = 0;
    w->nomem = 0;
    c->read_failed = 0;
    uint64_t first = 0;
    int status = SM_OK;
    if (check_taken(t, c) != 0) return;
    /* (record i, mate m) is the runner's record first + i * mates + m */
    for (size_t at = 0, total = c->n * mates; at < total && status == SM_OK;) {
        chunk_record *r = &c->recs[at / mates];
        unsigned m = (unsigned)(at % mates);
        const uint8_t *raw = record_raw(c, r, m);
        if (r->seq_at[m] || four_lines(raw, r->raw_len[m], r->length[m], r, m)) {
            size_t fed = feed_runs(w, c, at, total, &status, at == 0 ? &first : NULL);
            if (fed) {
                at += fed;
                continue;
            }
            if (status != SM_OK) break;
        }
        uint64_t number = sm_runner_begin_record(w->runner);
        if (at == 0) first = number;
        if (r->seq_at[m])
            status = r->length[m] ? sm_runner_feed(w->runner, raw + r->seq_at[m], r->length[m]) : SM_OK;
        else
            status = feed_sequence(w->runner, raw, r->raw_len[m]);
        if (status == SM_OK) status = sm_runner_end_record(w->runner);
        at++;
    }
    if (status == SM_OK) status = sm_runner_flush(w->runner);
    if (w->nomem || (status == SM_OK && sort_hits(w, first, c->n * mates) != 0)) status = SM_ERR_NOMEM;
    if (status != SM_OK) {
        c->status = status;
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        chunk_record *r = &c->recs[i];
        for (unsigned m = 0; m < mates; m++) {
            size_t from = w->starts[i * mates + m], to = w->starts[i * mates + m + 1];
            /* none delivered: NULL, no arithmetic on it */
            const sm_hit *hits = w->sorted ? w->sorted + from : NULL;
            const uint8_t *partial = w->sorted_partial ? w->sorted_partial + from : NULL;
            decide(t->o.set, m + 1, t->min_overlap, hits, partial, to - from, r->length[m], &r->cut[m]);
            r->out_at[m] = c->out[m].len;
            int rc = r->seq_at[m] ? rewrite_four_lines(record_raw(c, r, m), r, m, &c->out[m])
                                  : rewrite(record_raw(c, r, m), r->raw_len[m], r->length[m], r->cut[m].start,
                                            r->cut[m].end, &w->seq, &c->out[m]);
            if (rc != 0) {
                c->status = rc < 0 ? SM_ERR_NOMEM : SM_ERR_FORMAT;
                c->bad = i;
                /* the records before it go out */
                if (rc > 0) pack_chunk(w, c, i);
                return;
            }
            r->out_len[m] = c->out[m].len - r->out_at[m];
        }
    }
    pack_chunk(w, c, c->n);
}

static void emit_ready(sm_trimmer *t);

static void *work(void *arg) {
    worker *w = arg;
    sm_trimmer *t = w->t;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->quit && t->taken == t->filled) pthread_cond_wait(&t->work, &t->lock);
        if (t->quit) break;
        chunk *c = &t->chunks[t->taken++ % t->nchunks];
        pthread_mutex_unlock(&t->lock);
        trim_chunk(w, c);
        pthread_mutex_lock(&t->lock);
        c->state = CHUNK_DONE;
        pthread_cond_broadcast(&t->done);
        emit_ready(t);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int sm_trimmer_new(const sm_db *db, const sm_runner_options *runner_options, const sm_trim_options *opts,
                   sm_trimmer **trimmer, sm_error *err) {
    *trimmer = NULL;
    memset(err, 0, sizeof *err);
    sm_runner_options ro;
    if (runner_options) ro = *runner_options;
    else sm_runner_options_init(&ro);
    sm_db_info info;
    sm_db_get_info(db, &info);
    if (!opts->set || opts->set->patterns.count != info.pattern_count)
        return sm_io_error(err, SM_ERR_INVALID, "trim: the database does not hold the adapters' patterns");
    if (ro.anchor != SM_ANCHOR_NONE || ro.count_only || ro.max_hits_per_pattern || ro.max_hits_per_record ||
        ro.fewest_errors || ro.circular)
        return sm_io_error(err, SM_ERR_INVALID, "trim: anchors, hit limits, counting and circular records do not "
                           "apply (anchor adapters with ^ and $)");
    sm_trimmer *t = calloc(1, sizeof *t);
    if (!t) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->done, NULL);
    t->o = *opts;
    t->min_overlap = ro.min_overlap;
    t->avx2 = sm_cpu()->avx2;
    t->pack = opts->out[0] && sm_record_file_gzip(opts->out[0]);
    for (size_t i = 0; i < opts->set->count; i++)
        for (unsigned m = 0; m < 2; m++) t->has_adapters[m] |= opts->set->adapters[i].mate != 2 - m;
    t->format = SM_INPUT_AUTO;
    t->chunk_bytes = ro.chunk_size && ro.chunk_size < CHUNK_BYTES / 16 ? ro.chunk_size * 16 : CHUNK_BYTES;
    /* On the CPU, a worker per thread, each with a runner on one thread
       (its own, the worker's); another backend: one runner as asked. */
    unsigned threads = ro.threads;
    if (threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    t->nworkers = ro.backend == SM_BACKEND_CPU ? threads : 1;
    if (ro.backend == SM_BACKEND_CPU) ro.threads = 1;
    t->nchunks = t->nworkers > 1 ? (size_t)t->nworkers * CHUNKS_PER_WORKER : 1;
    t->workers = calloc(t->nworkers, sizeof *t->workers);
    t->chunks = calloc(t->nchunks, sizeof *t->chunks);
    /* Partial hits only at the end each adapter can use: a 3' adapter's off
       the read's end, a 5' adapter's off its start (half the work). */
    uint8_t *sides = calloc(info.pattern_count ? info.pattern_count : 1, 1);
    if (!t->workers || !t->chunks || !sides) {
        free(sides);
        sm_trimmer_free(t);
        return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < opts->set->count; i++) {
        const sm_trim_adapter *a = &opts->set->adapters[i];
        int first_side = a->kind == SM_TRIM_BACK ? SM_ENDS_END : SM_ENDS_START;
        if (!a->anchored) sides[a->pattern] |= (uint8_t)first_side;
        if (a->kind == SM_TRIM_LINKED && !a->second_anchored) sides[a->second] |= SM_ENDS_END;
    }
    ro.min_overlap_sides = sides;
    ro.on_hit = on_hit;
    ro.on_partial_hit = on_partial_hit;
    ro.on_record_summary = NULL;
    ro.on_record_done = NULL;
    int status = SM_OK;
    for (unsigned i = 0; i < t->nworkers && status == SM_OK; i++) {
        t->workers[i].t = t;
        ro.ctx = &t->workers[i];
        status = sm_runner_create(db, &ro, &t->workers[i].runner, err);
    }
    free(sides); /* copied by the runner */
    if (status != SM_OK) {
        sm_trimmer_free(t);
        return status;
    }
    *trimmer = t;
    return SM_OK;
}

void sm_trimmer_stats(const sm_trimmer *trimmer, sm_trim_stats *stats) { *stats = trimmer->stats; }

void sm_trimmer_free(sm_trimmer *t) {
    if (!t) return;
    for (unsigned i = 0; t->workers && i < t->nworkers; i++) {
        worker *w = &t->workers[i];
        sm_runner_free(w->runner);
        free(w->hits);
        free(w->partial);
        free(w->sorted);
        free(w->sorted_partial);
        free(w->starts);
        free(w->seq.data);
        free(w->run_offs);
        sm_deflater_free(w->deflater);
        free(w->gather.data);
    }
    for (size_t i = 0; t->chunks && i < t->nchunks; i++) {
        free(t->chunks[i].recs);
        free(t->chunks[i].raw.data);
        for (unsigned m = 0; m < 2; m++) {
            free(t->chunks[i].out[m].data);
            free(t->chunks[i].packed[m].data);
        }
    }
    free(t->ends[0]);
    free(t->ends[1]);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->done);
    free(t->workers);
    free(t->chunks);
    free(t);
}

static int open_reader(sm_trimmer *t, const char *path, sm_reader **reader, sm_error *err) {
    sm_error e;
    memset(&e, 0, sizeof e);
    int rc = sm_reader_open_threads(path, SM_INPUT_AUTO, t->o.reader_threads, reader, &e);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s", e.message[0] ? e.message : sm_strerror(rc));
    sm_reader_keep_raw(*reader);
    sm_input_format got = sm_reader_format(*reader);
    if (t->format == SM_INPUT_AUTO) t->format = got;
    if (got != t->format) {
        sm_reader_close(*reader);
        *reader = NULL;
        return sm_io_error(err, SM_ERR_INVALID, "%s: %s, but the input before it is %s; give inputs of one format",
                           shown(path), got == SM_INPUT_FASTQ ? "FASTQ" : "FASTA",
                           t->format == SM_INPUT_FASTQ ? "FASTQ" : "FASTA");
    }
    return SM_OK;
}

/* "r7/1" and "r7/2" are one pair. */
static size_t pair_name_length(const char *name) {
    size_t n = strlen(name);
    if (n >= 2 && name[n - 2] == '/' && (name[n - 1] == '1' || name[n - 1] == '2')) n -= 2;
    return n;
}

static int read_failed(const sm_error *e, sm_error *err) {
    return sm_io_error(err, e->code ? e->code : SM_ERR_IO, "%s", e->message[0] ? e->message : "read error");
}

/* The next record of each reader (*more: 1 a record or pair, 0 the end);
   pairs' names checked. */
static int next_records(sm_reader *const *readers, const char *const *paths, uint64_t pair, int *more,
                        sm_error *err) {
    const char *name[2] = {NULL, NULL};
    int got[2] = {0, 0};
    sm_error e;
    for (unsigned m = 0; m < 2 && readers[m]; m++) {
        e.code = 0, e.message[0] = '\0'; /* per record: no 512-byte memset */
        got[m] = sm_reader_next_record(readers[m], &name[m], &e);
        if (got[m] < 0) return read_failed(&e, err);
    }
    *more = got[0];
    if (!readers[1] || (!got[0] && !got[1])) return SM_OK;
    if (got[0] != got[1])
        return sm_io_error(err, SM_ERR_FORMAT,
                           "%s has more records than %s (%llu); paired files must hold the same reads in the same "
                           "order", shown(paths[got[0] ? 0 : 1]), shown(paths[got[0] ? 1 : 0]),
                           (unsigned long long)pair);
    size_t n0 = pair_name_length(name[0]), n1 = pair_name_length(name[1]);
    if (n0 != n1 || memcmp(name[0], name[1], n0) != 0)
        return sm_io_error(err, SM_ERR_FORMAT, "reads out of step: record %llu is '%s' in %s but '%s' in %s",
                           (unsigned long long)pair + 1, name[0], shown(paths[0]), name[1], shown(paths[1]));
    return SM_OK;
}

/* A mate's length (its sequence read through) and bytes into the chunk. */
static int take_mate(sm_trimmer *t, sm_reader *reader, chunk *c, chunk_record *r, unsigned m, sm_error *err) {
    sm_error e;
    e.code = 0, e.message[0] = '\0'; /* per record: no 512-byte memset */
    const uint8_t *data;
    size_t len;
    int got;
    r->length[m] = 0;
    while ((got = sm_reader_read(reader, &data, &len, &e)) > 0) r->length[m] += len;
    int stable = 0;
    if (got < 0 || sm_reader_record_raw(reader, &data, &len, &stable, &e) < 0) return read_failed(&e, err);
    r->raw_len[m] = len;
    r->raw[m] = stable ? data : NULL;
    if (!stable) {
        r->raw_at[m] = c->raw.len;
        if (buf_put(&c->raw, data, len) != 0) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    }
    if (t->o.on_progress) t->o.on_progress(t->o.ctx, t->reader, (size_t)r->length[m], shown_trimmed(t));
    return SM_OK;
}

/* The line ends (and carriage returns) of a window as a bit mask, 64 bytes
   a word, made in one pass before its records are taken: one tight loop
   over the bytes instead of a memchr per line and one for the window's
   first \r. */
typedef struct {
    const uint64_t *words;
    size_t limit;
} line_ends;

static uint64_t ends_word_slow(const uint8_t *q, size_t n) {
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++) m |= (uint64_t)(q[i] == '\n' || q[i] == '\r') << i;
    return m;
}

#ifdef TRIM_AVX2
__attribute__((target("avx2"))) static void ends_words_avx2(uint64_t *words, const uint8_t *p, size_t whole) {
    const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    for (size_t w = 0; w < whole; w++) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(p + 64 * w));
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + 64 * w + 32));
        uint32_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(a, cr)));
        uint32_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(b, nl), _mm256_cmpeq_epi8(b, cr)));
        words[w] = (uint64_t)hi << 32 | lo;
    }
}
#endif

/* words[i]: the ends in p[64 i, 64 i + 64) below limit. */
static void ends_words(uint64_t *words, const uint8_t *p, size_t limit, int avx2) {
    size_t whole = limit / 64, w = 0;
#ifdef TRIM_AVX2
    if (avx2) ends_words_avx2(words, p, whole), w = whole;
#else
    (void)avx2;
#endif
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    for (; w < whole; w++) {
        uint64_t m = 0;
        for (unsigned i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + 64 * w + 16 * i));
            m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)))
                 << (16 * i);
        }
        words[w] = m;
    }
#endif
    for (; w < whole; w++) words[w] = ends_word_slow(p + 64 * w, 64);
    if (limit % 64) words[whole] = ends_word_slow(p + 64 * whole, limit % 64);
}

/* The first \n or \r at or after from, or limit. */
static inline size_t line_end_from(const line_ends *e, size_t from) {
    if (from >= e->limit) return e->limit;
    size_t w = from / 64, last = (e->limit - 1) / 64;
    uint64_t m = e->words[w] & (~(uint64_t)0 << (from % 64));
    while (!m) {
        if (++w > last) return e->limit;
        m = e->words[w];
    }
    return 64 * w + (size_t)__builtin_ctzll(m);
}

/* The four-line FASTQ record at p[at] of a window of n bytes, to be taken
   whole: '@' header, one sequence line (not starting with '+'), a '+'
   line and one quality line as long as the sequence, each ending in \n,
   no \r, followed by the next record's '@' or the input's end, all before
   p[limit] (e: the window's line ends up to limit). Returns its length
   with its lines' places in r (mate m; raw_at relative to p), or 0: for
   the reader to read. What its bytes are is checked by the worker
   (reads_as_taken). */
static size_t whole_record(const uint8_t *p, size_t n, size_t limit, int ends, const line_ends *e, size_t at,
                           chunk_record *r, unsigned m) {
    if (at >= limit || p[at] != '@') return 0;
    /* a \r among the ends found fails the record: so no \r anywhere in it */
    size_t nl = line_end_from(e, at);
    if (nl == limit || p[nl] != '\n') return 0;
    size_t seq = nl + 1;
    if ((nl = line_end_from(e, seq)) == limit || p[nl] != '\n') return 0;
    size_t plus = nl + 1;
    if (plus >= limit || p[plus] != '+' || (plus - seq > 1 && p[seq] == '+')) return 0;
    size_t length = plus - seq - 1;
    if ((nl = line_end_from(e, plus)) == limit || p[nl] != '\n') return 0;
    size_t qual = nl + 1;
    if (limit - qual <= length || line_end_from(e, qual) != qual + length || p[qual + length] != '\n') return 0;
    size_t next = qual + length + 1;
    /* the next byte known, or the input's end; not at the limit, so that
       where a chunk ends does not depend on how much the window holds */
    if (next == n ? !ends : next == limit || p[next] != '@') return 0;
    r->raw_at[m] = at;
    r->raw_len[m] = next - at;
    r->length[m] = length;
    r->seq_at[m] = seq - at;
    r->plus_at[m] = plus - at;
    r->qual_at[m] = qual - at;
    return r->raw_len[m];
}

/* Whole records (pairs) from the readers' windows into c, up to room
   bytes: as many as every mate has in a row (whole_record), or none.
   Returns the bytes taken (0: none, *failed on running out of memory;
   *swapped when the reader's buffer became the chunk's). */
static size_t take_block(sm_trimmer *t, sm_reader *const *readers, chunk *c, size_t room, int *failed,
                         int *swapped) {
    sm_reader_window w[2];
    size_t per_mate = room / t->mates, first = c->n, n = SIZE_MAX;
    for (unsigned m = 0; m < t->mates; m++)
        if (!sm_reader_window_get(readers[m], per_mate, &w[m])) return 0;
    for (unsigned m = 0; m < t->mates; m++) {
        size_t limit = w[m].n < per_mate ? w[m].n : per_mate, at = 0, k = 0;
        size_t words = (limit + 63) / 64;
        if (t->ends_cap[m] < words) {
            uint64_t *p = realloc(t->ends[m], words * sizeof *p);
            if (!p) return *failed = 1, 0;
            t->ends[m] = p;
            t->ends_cap[m] = words;
        }
        ends_words(t->ends[m], w[m].p, limit, t->avx2);
        line_ends e = {t->ends[m], limit};
        for (; k < n; k++) {
            if (first + k == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 256;
                chunk_record *p = realloc(c->recs, cap * sizeof *p);
                if (!p) return *failed = 1, 0;
                c->recs = p;
                c->cap = cap;
            }
            chunk_record *r = &c->recs[first + k];
            if (m == 0) memset(r, 0, sizeof *r); /* sm_trim_cut's padding too: callers may hash the cut */
            size_t len = whole_record(w[m].p, w[m].n, limit, w[m].ends, &e, at, r, m);
            if (!len) break;
            r->line[m] = w[m].line + 4 * k;
            at += len;
        }
        n = k;
    }
    if (n == 0) return 0;
    size_t bytes = 0, symbols = 0;
    for (unsigned m = 0; m < t->mates; m++) {
        const chunk_record *last = &c->recs[first + n - 1];
        size_t used = last->raw_at[m] + last->raw_len[m], base = c->raw.len;
        sm_reader_window_take(readers[m], used, 4 * (uint64_t)n);
        /* single reads that open the chunk and leave little behind in the
           reader's buffer: that buffer becomes the chunk's, no copy */
        if (!w[m].stable && t->mates == 1 && c->raw.len == 0 && w[m].n - used < used / 8 &&
            sm_reader_window_swap(readers[m], &c->raw.data, &c->raw.cap) == 0) {
            base = (size_t)(w[m].p - c->raw.data);
            c->raw.len = base + used;
            *swapped = 1;
        } else if (!w[m].stable && buf_put(&c->raw, w[m].p, used) != 0) {
            return *failed = 1, 0;
        }
        for (size_t k = 0; k < n; k++) {
            chunk_record *r = &c->recs[first + k];
            r->unchecked = 1;
            if (w[m].stable) r->raw[m] = w[m].p + r->raw_at[m];
            else r->raw_at[m] += base;
            symbols += (size_t)r->length[m];
        }
        bytes += used;
    }
    c->n += n;
    t->read += n;
    if (t->o.on_progress) t->o.on_progress(t->o.ctx, t->reader, symbols, shown_trimmed(t));
    return bytes;
}

/* Reads the next records into c (c->n 0: none left). */
static int fill_chunk(sm_trimmer *t, sm_reader *const *readers, const char *const *paths, chunk *c, sm_error *err) {
    c->n = 0;
    c->raw.len = 0;
    c->first = t->read;
    size_t bytes = 0;
    int whole = 1, failed = 0, swapped = 0;
    while (bytes < t->chunk_bytes && !t->stop) {
        if (whole) {
            size_t got = take_block(t, readers, c, t->chunk_bytes - bytes, &failed, &swapped);
            if (failed) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
            bytes += got;
            /* the reader's buffer is the chunk's: what the reader holds now
               is the next chunk's start (topping this one up would split a
               BGZF job between chunks and copy the rest of it) */
            if (swapped) break;
            /* none: the rest of the chunk the reader's way */
            whole = got > 0;
            continue;
        }
        int more = 0;
        int rc = next_records(readers, paths, t->read, &more, err);
        if (rc != SM_OK) return rc;
        if (!more) break;
        if (c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 256;
            chunk_record *p = realloc(c->recs, cap * sizeof *p);
            if (!p) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
            c->recs = p;
            c->cap = cap;
        }
        chunk_record *r = &c->recs[c->n++];
        memset(r, 0, sizeof *r); /* sm_trim_cut's padding too: callers may hash the cut */
        t->read++;
        for (unsigned m = 0; m < t->mates; m++) {
            rc = take_mate(t, readers[m], c, r, m, err);
            if (rc != SM_OK) return rc;
            bytes += r->raw_len[m];
        }
    }
    return SM_OK;
}

/* Writes the kept mates' run of rewritten records [from[m], to[m]) of
   c->out[m] to the trimmer's out[m] (sm_trim_options.out), as one piece:
   they lie in order in the chunk. Returns SM_OK, or SM_ERR_TERMINATED once
   a write failed (the file says why). */
static int write_runs(sm_trimmer *t, const chunk *c, size_t *from, const size_t *to) {
    for (unsigned m = 0; m < t->mates; m++) {
        if (to[m] > from[m] && sm_record_file_put(t->o.out[m], c->out[m].data + from[m], to[m] - from[m]) != 0) {
            t->stop = 1;
            return SM_ERR_TERMINATED;
        }
        from[m] = to[m];
    }
    return SM_OK;
}

/* The chunk's kept records as the workers compressed them (pack_chunk). */
static int write_packed(sm_trimmer *t, const chunk *c) {
    for (unsigned m = 0; m < t->mates; m++)
        if (c->packed[m].len &&
            sm_record_file_put_packed(t->o.out[m], c->packed[m].data, c->packed[m].len, c->packed_records) != 0) {
            t->stop = 1;
            return SM_ERR_TERMINATED;
        }
    return SM_OK;
}

/* Hands a trimmed chunk's reads on in order (on the reading thread). */
static int emit_chunk(sm_trimmer *t, chunk *c, const char *path, sm_error *err) {
    if (c->read_failed) {
        *err = c->message;
        return err->code;
    }
    if (c->status != SM_OK && c->status != SM_ERR_FORMAT) {
        if (c->status == SM_ERR_NOMEM)
            return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory while trimming", shown(path));
        return sm_io_error(err, c->status, "%s: %s", shown(path), sm_strerror(c->status));
    }
    size_t from[2] = {0, 0}, to[2] = {0, 0};
    int writing = t->o.out[0] != NULL && !t->pack;
    for (size_t i = 0; i < c->n; i++) {
        if (c->status == SM_ERR_FORMAT && i == c->bad) {
            if ((writing ? write_runs(t, c, from, to) : t->pack ? write_packed(t, c) : SM_OK) != SM_OK)
                return SM_ERR_TERMINATED;
            return sm_io_error(err, SM_ERR_FORMAT, "%s: record %llu does not read back as its sequence", shown(path),
                               (unsigned long long)t->stats.records + 1);
        }
        const chunk_record *e = &c->recs[i];
        int kept = is_kept(t, e);
        for (unsigned m = 0; m < t->mates; m++) {
            t->stats.trimmed += e->cut[m].adapter >= 0;
            t->stats.bases_in += e->length[m];
        }
        t->stats.reads += t->mates;
        t->stats.records++;
        if (kept) {
            t->stats.kept++;
            for (unsigned m = 0; m < t->mates; m++) t->stats.bases_kept += e->cut[m].end - e->cut[m].start;
            /* a run goes on while the kept records follow one another */
            if (writing && e->out_at[0] != to[0] && write_runs(t, c, from, to) != SM_OK) return SM_ERR_TERMINATED;
            for (unsigned m = 0; writing && m < t->mates; m++) {
                if (from[m] == to[m]) from[m] = e->out_at[m];
                to[m] = e->out_at[m] + e->out_len[m];
            }
        }
        if (!t->o.on_record) continue;
        sm_trimmed_record r;
        memset(&r, 0, sizeof r);
        r.mates = t->mates;
        r.kept = kept;
        for (unsigned m = 0; m < t->mates; m++) {
            r.length[m] = e->length[m];
            r.cut[m] = e->cut[m];
            r.bytes[m] = c->out[m].data + e->out_at[m];
            r.len[m] = e->out_len[m];
        }
        if (t->o.on_record(t->o.ctx, &r) != 0) {
            t->stop = 1;
            return SM_ERR_TERMINATED;
        }
    }
    atomic_store_explicit(&t->trimmed, t->stats.trimmed, memory_order_relaxed);
    return writing ? write_runs(t, c, from, to) : t->pack ? write_packed(t, c) : SM_OK;
}

/* c (the oldest) handed on with rc (lock held). */
static void handed_on(sm_trimmer *t, chunk *c, int rc) {
    c->state = CHUNK_FREE;
    t->emitted++;
    t->emitting = 0;
    if (rc != SM_OK) t->halted = 1;
    pthread_cond_broadcast(&t->done);
}

/* On a worker that has just finished a chunk (lock held, let go while
   writing): the oldest chunks, while done, unless another thread is
   handing on. A chunk that failed, and every chunk when on_record is to
   see the records, are the reading thread's (its errors are its to give). */
static void emit_ready(sm_trimmer *t) {
    while (!t->o.on_record && !t->emitting && !t->halted && t->emitted < t->filled) {
        chunk *c = &t->chunks[t->emitted % t->nchunks];
        if (c->state != CHUNK_DONE || c->read_failed || c->status != SM_OK) return;
        t->emitting = 1;
        pthread_mutex_unlock(&t->lock);
        sm_error e;
        memset(&e, 0, sizeof e);
        /* a failed write sets stop, which the reading thread sees */
        int rc = emit_chunk(t, c, t->paths[0], &e);
        pthread_mutex_lock(&t->lock);
        handed_on(t, c, rc);
    }
}

/* Chunks handed on so far. */
static uint64_t handed(sm_trimmer *t) {
    pthread_mutex_lock(&t->lock);
    uint64_t n = t->emitted;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* Hands on the oldest chunk under way, waiting for it when wait is set
   (*emitted: whether it was ready, or a worker handed it on). */
static int emit_oldest(sm_trimmer *t, int wait, const char *path, int *emitted, sm_error *err) {
    pthread_mutex_lock(&t->lock);
    /* the workers may have handed on every chunk since the caller looked */
    uint64_t s = t->emitted;
    chunk *c = &t->chunks[s % t->nchunks];
    while (wait && s < t->filled && t->emitted == s && (c->state != CHUNK_DONE || t->emitting))
        pthread_cond_wait(&t->done, &t->lock);
    int mine = s < t->filled && t->emitted == s && c->state == CHUNK_DONE && !t->emitting;
    *emitted = mine || t->emitted != s;
    if (!mine) {
        pthread_mutex_unlock(&t->lock);
        return SM_OK;
    }
    t->emitting = 1;
    pthread_mutex_unlock(&t->lock);
    int rc = emit_chunk(t, c, path, err);
    pthread_mutex_lock(&t->lock);
    handed_on(t, c, rc);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* Reading failed while c was being filled: a record taken whole before
   that point that does not read is the first failure (its chunk's, or an
   earlier chunk's still under way). */
static int failed_before(sm_trimmer *t, chunk *c, int rc, sm_error *err) {
    pthread_mutex_lock(&t->lock);
    t->halted = 1;
    for (uint64_t s = t->emitted; s < t->filled; s++) {
        chunk *d = &t->chunks[s % t->nchunks];
        /* one a worker hands on meanwhile read whole */
        while (s >= t->emitted && d->state != CHUNK_DONE) pthread_cond_wait(&t->done, &t->lock);
        if (s >= t->emitted && d->read_failed) {
            *err = d->message;
            pthread_mutex_unlock(&t->lock);
            return err->code;
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (check_taken(t, c) == 0) return rc;
    *err = c->message;
    return err->code;
}

/* Reads every record through the workers (threaded: nworkers > 1). */
static int trim_all(sm_trimmer *t, sm_reader *const *readers, const char *const *paths, sm_error *err) {
    int threaded = t->nworkers > 1, rc = SM_OK, emitted;
    unsigned started = 0;
    t->filled = t->taken = t->emitted = 0;
    t->quit = t->emitting = t->halted = 0;
    for (; threaded && started < t->nworkers; started++)
        if (pthread_create(&t->workers[started].thread, NULL, work, &t->workers[started]) != 0) break;
    if (threaded && started == 0) rc = sm_io_error(err, SM_ERR_NOMEM, "trim: no thread could be started");
    while (rc == SM_OK && !t->stop) {
        if (t->filled - handed(t) == t->nchunks) {
            rc = emit_oldest(t, 1, paths[0], &emitted, err);
            continue;
        }
        chunk *c = &t->chunks[t->filled % t->nchunks];
        rc = fill_chunk(t, readers, paths, c, err);
        if (rc != SM_OK) rc = failed_before(t, c, rc, err);
        if (rc != SM_OK || c->n == 0) break;
        if (!threaded) {
            trim_chunk(&t->workers[0], c);
            rc = emit_chunk(t, c, paths[0], err);
            continue;
        }
        pthread_mutex_lock(&t->lock);
        c->state = CHUNK_FILLED;
        t->filled++;
        pthread_cond_signal(&t->work);
        pthread_mutex_unlock(&t->lock);
        do
            rc = emit_oldest(t, 0, paths[0], &emitted, err);
        while (rc == SM_OK && emitted && handed(t) < t->filled);
    }
    while (rc == SM_OK && !t->stop && handed(t) < t->filled) rc = emit_oldest(t, 1, paths[0], &emitted, err);
    if (threaded) {
        pthread_mutex_lock(&t->lock);
        t->quit = 1;
        if (rc != SM_OK || t->stop) t->halted = 1;
        pthread_cond_broadcast(&t->work);
        pthread_mutex_unlock(&t->lock);
        for (unsigned i = 0; i < started; i++) pthread_join(t->workers[i].thread, NULL);
        for (size_t i = 0; i < t->nchunks; i++) t->chunks[i].state = CHUNK_FREE;
    }
    if (rc == SM_OK && t->stop) rc = SM_ERR_TERMINATED;
    return rc;
}

int sm_trimmer_run(sm_trimmer *t, const char *path1, const char *path2, sm_error *err) {
    memset(err, 0, sizeof *err);
    sm_reader *readers[2] = {NULL, NULL};
    const char *paths[2] = {path1, path2};
    t->mates = path2 ? 2u : 1u;
    t->read = 0;
    int rc = SM_OK;
    for (unsigned m = 0; m < t->mates && rc == SM_OK; m++) rc = open_reader(t, paths[m], &readers[m], err);
    if (rc == SM_OK && t->o.on_input) t->o.on_input(t->o.ctx, path1);
    t->reader = readers[0];
    for (unsigned m = 0; m < t->mates && rc == SM_OK; m++) {
        t->paths[m] = paths[m];
        t->shown[m] = sm_reader_shown(readers[m]);
    }
    if (rc == SM_OK) rc = trim_all(t, readers, paths, err);
    t->reader = NULL;
    for (unsigned m = 0; m < t->mates; m++) sm_reader_close(readers[m]);
    return rc;
}
