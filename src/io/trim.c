/* Adapter trimming (include/seqmatch_reader.h, sm_trim_*, sm_trimmer_*):
 * the choice of the hit that cuts a read, the record rewritten around the
 * part kept, and the loop of seqmatch trim.
 *
 * Reads (or pairs of mates read in step) are fed to a runner and wait in a
 * queue, with their bytes and the forward-strand hits delivered so far,
 * until the runner says all their hits are in; then each mate is cut and
 * handed on in input order. The queue and its bytes are compacted between
 * records (never inside a runner callback, which only appends). */
#include <stdlib.h>
#include <string.h>

#include "seqmatch_reader.h"
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
    *cut = (sm_trim_cut){0, length, -1, 0};
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
            *cut = c;
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
   qualities) cut to [start, end) into out. Returns 0, 1 when the record
   does not read as length symbols (not expected from the reader), or -1
   out of memory. */
static int rewrite(const uint8_t *raw, size_t len, uint64_t length, uint64_t start, uint64_t end, byte_buf *seq,
                   byte_buf *out) {
    size_t at = 0, n;
    out->len = seq->len = 0;
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

/* Bytes of a record asked of the reader at a time. */
#define FEED_PIECE ((size_t)64 << 20)

typedef struct {
    uint64_t first_record;      /* runner record of mate 1 */
    unsigned mates, done;
    uint64_t length[2];
    const uint8_t *raw[2];      /* stable bytes, or NULL: in the arena at raw_at */
    size_t raw_at[2], raw_len[2];
} pending;

struct sm_trimmer {
    sm_trim_options o;
    uint32_t min_overlap;
    sm_runner *runner;
    sm_input_format format;
    pending *queue;
    size_t head, count, cap;    /* queue[head, count) waits */
    byte_buf arena;             /* unstable records' bytes; [arena_head, len) in use */
    size_t arena_head;
    sm_hit *hits;               /* forward hits of waiting records, in record order */
    uint8_t *partial;           /* hits[i] came as a partial one (on_partial_hit) */
    size_t hits_head, hits_len, hits_cap;
    byte_buf out[2], seq;
    sm_trim_stats stats;
    int stop, nomem, bad_record;
    const sm_reader *reader;
    int has_adapters[2];        /* mate 1 (or a single read), mate 2: some adapter is for it */
};

static int keep_hit(sm_trimmer *t, const sm_hit *hit, int partial) {
    if (hit->strand == '-') return 0;
    if (t->hits_len == t->hits_cap) {
        size_t cap = t->hits_cap ? t->hits_cap * 2 : 1024;
        sm_hit *p = realloc(t->hits, cap * sizeof *p);
        uint8_t *q = p ? realloc(t->partial, cap) : NULL;
        if (p) t->hits = p;
        if (!q) {
            t->nomem = 1;
            return 1;
        }
        t->partial = q;
        t->hits_cap = cap;
    }
    t->partial[t->hits_len] = (uint8_t)partial;
    sm_hit *h = &t->hits[t->hits_len++];
    *h = *hit;
    h->text = NULL;
    return 0;
}

static int on_hit(const sm_hit *hit, void *ctx) { return keep_hit(ctx, hit, 0); }
static int on_partial_hit(const sm_hit *hit, void *ctx) { return keep_hit(ctx, hit, 1); }

static void on_record_done(uint64_t record, void *ctx) {
    sm_trimmer *t = ctx;
    if (t->head == t->count) return;
    pending *e = &t->queue[t->head];
    if (record < e->first_record || record - e->first_record >= e->mates || ++e->done < e->mates) return;
    sm_trimmed_record r;
    memset(&r, 0, sizeof r);
    r.mates = e->mates;
    r.kept = 1;
    for (unsigned m = 0; m < e->mates; m++) {
        size_t from = t->hits_head;
        while (t->hits_head < t->hits_len && t->hits[t->hits_head].record == e->first_record + m) t->hits_head++;
        r.length[m] = e->length[m];
        const sm_hit *hits = t->hits ? t->hits + from : NULL; /* none delivered yet: NULL, no arithmetic on it */
        const uint8_t *partial = t->partial ? t->partial + from : NULL;
        decide(t->o.set, m + 1, t->min_overlap, hits, partial, t->hits_head - from, e->length[m], &r.cut[m]);
        const uint8_t *raw = e->raw[m] ? e->raw[m] : t->arena.data + e->raw_at[m];
        int rc = rewrite(raw, e->raw_len[m], e->length[m], r.cut[m].start, r.cut[m].end, &t->seq, &t->out[m]);
        if (rc != 0) {
            if (rc < 0) t->nomem = 1;
            else t->bad_record = 1;
            t->stop = 1;
            return;
        }
        r.bytes[m] = t->out[m].data;
        r.len[m] = t->out[m].len;
        uint64_t kept = r.cut[m].end - r.cut[m].start;
        if (kept < t->o.minimum_length) r.kept = 0;
        if (t->o.discard && t->has_adapters[m] &&
            (r.cut[m].adapter >= 0) == (t->o.discard == SM_TRIM_DISCARD_TRIMMED))
            r.kept = 0;
        t->stats.reads++;
        t->stats.trimmed += r.cut[m].adapter >= 0;
        t->stats.bases_in += e->length[m];
    }
    t->stats.records++;
    if (r.kept) {
        t->stats.kept++;
        for (unsigned m = 0; m < r.mates; m++) t->stats.bases_kept += r.cut[m].end - r.cut[m].start;
    }
    if (!t->stop && t->o.on_record && t->o.on_record(t->o.ctx, &r) != 0) t->stop = 1;
    for (unsigned m = 0; m < e->mates; m++)
        if (!e->raw[m]) t->arena_head = e->raw_at[m] + e->raw_len[m];
    t->head++;
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
    t->o = *opts;
    t->min_overlap = ro.min_overlap;
    for (size_t i = 0; i < opts->set->count; i++)
        for (unsigned m = 0; m < 2; m++) t->has_adapters[m] |= opts->set->adapters[i].mate != 2 - m;
    t->format = SM_INPUT_AUTO;
    /* Partial hits only at the end each adapter can use: a 3' adapter's off
       the read's end, a 5' adapter's off its start (half the work). */
    uint8_t *sides = calloc(info.pattern_count ? info.pattern_count : 1, 1);
    if (!sides) {
        free(t);
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
    ro.on_record_done = on_record_done;
    ro.ctx = t;
    int status = sm_runner_create(db, &ro, &t->runner, err);
    free(sides); /* copied by the runner */
    if (status != SM_OK) {
        free(t);
        return status;
    }
    *trimmer = t;
    return SM_OK;
}

void sm_trimmer_stats(const sm_trimmer *trimmer, sm_trim_stats *stats) { *stats = trimmer->stats; }

void sm_trimmer_free(sm_trimmer *t) {
    if (!t) return;
    sm_runner_free(t->runner);
    free(t->queue);
    free(t->arena.data);
    free(t->hits);
    free(t->partial);
    free(t->out[0].data);
    free(t->out[1].data);
    free(t->seq.data);
    free(t);
}

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "stdin" : path; }

/* What a stopped or failed runner call means. */
static int runner_failed(sm_trimmer *t, int status, const char *path, sm_error *err) {
    if (t->nomem) return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory while trimming", shown(path));
    if (t->bad_record)
        return sm_io_error(err, SM_ERR_FORMAT, "%s: record %llu does not read back as its sequence", shown(path),
                           (unsigned long long)t->stats.records + 1);
    if (status == SM_ERR_TERMINATED && t->stop) return SM_ERR_TERMINATED;
    if (status == SM_ERR_NOMEM) return sm_io_error(err, status, "%s: out of memory while scanning", shown(path));
    return sm_io_error(err, status, "%s: %s", shown(path), sm_strerror(status));
}

/* Drops what the records handed on no longer need (between runner calls only). */
static void compact(sm_trimmer *t) {
    if (t->head > 1024 && t->head * 2 > t->count) {
        memmove(t->queue, t->queue + t->head, (t->count - t->head) * sizeof *t->queue);
        t->count -= t->head;
        t->head = 0;
    }
    if (t->hits_head > 4096 && t->hits_head * 2 > t->hits_len) {
        memmove(t->hits, t->hits + t->hits_head, (t->hits_len - t->hits_head) * sizeof *t->hits);
        memmove(t->partial, t->partial + t->hits_head, t->hits_len - t->hits_head);
        t->hits_len -= t->hits_head;
        t->hits_head = 0;
    }
    if (t->arena_head > ((size_t)1 << 20) && t->arena_head * 2 > t->arena.len) {
        size_t shift = t->arena_head;
        memmove(t->arena.data, t->arena.data + shift, t->arena.len - shift);
        t->arena.len -= shift;
        t->arena_head = 0;
        for (size_t i = t->head; i < t->count; i++)
            for (unsigned m = 0; m < t->queue[i].mates; m++)
                if (!t->queue[i].raw[m] && t->queue[i].raw_len[m]) t->queue[i].raw_at[m] -= shift;
    }
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

/* One run over a file or a pair of files: what the callbacks of
   sm_runner_scan_reader (the library's one reader-to-runner loop) need. */
typedef struct {
    sm_trimmer *t;
    const char *paths[2];
    unsigned mates;
    sm_error *err;
    int failed;                 /* a callback filled err */
} trim_scan;

static int on_pair(void *ctx, uint64_t pair, const char *name, const char *mate_name) {
    trim_scan *in = ctx;
    if (!name || !mate_name) {
        sm_io_error(in->err, SM_ERR_FORMAT,
                    "%s has more records than %s (%llu); paired files must hold the same reads in the same order",
                    shown(in->paths[name ? 0 : 1]), shown(in->paths[name ? 1 : 0]), (unsigned long long)pair);
        in->failed = 1;
        return 1;
    }
    size_t n0 = pair_name_length(name), n1 = pair_name_length(mate_name);
    if (n0 != n1 || memcmp(name, mate_name, n0) != 0) {
        sm_io_error(in->err, SM_ERR_FORMAT, "reads out of step: record %llu is '%s' in %s but '%s' in %s",
                    (unsigned long long)pair + 1, name, shown(in->paths[0]), mate_name, shown(in->paths[1]));
        in->failed = 1;
        return 1;
    }
    return 0;
}

/* A read or pair begins (mate 1): its place in the queue (between runner
   calls, so the queue may be compacted here). */
static int on_record_begin(void *ctx, const sm_scan_record *r) {
    trim_scan *in = ctx;
    sm_trimmer *t = in->t;
    if (r->mate != 1) return 0;
    compact(t);
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        pending *q = realloc(t->queue, cap * sizeof *q);
        if (!q) {
            sm_io_error(in->err, SM_ERR_NOMEM, "out of memory");
            in->failed = 1;
            return 1;
        }
        t->queue = q;
        t->cap = cap;
    }
    pending *p = &t->queue[t->count++];
    memset(p, 0, sizeof *p);
    p->mates = in->mates;
    p->first_record = r->number;
    return 0;
}

/* A mate's sequence is fed: its bytes kept before its record ends (its
   record-done call may come as it ends). */
static int on_record_read(void *ctx, const sm_scan_record *r) {
    trim_scan *in = ctx;
    sm_trimmer *t = in->t;
    unsigned m = r->mate - 1;
    const uint8_t *data;
    size_t len;
    int stable;
    sm_error e;
    e.code = 0, e.message[0] = '\0';
    if (sm_reader_record_raw(r->reader, &data, &len, &stable, &e) < 0) {
        sm_io_error(in->err, e.code ? e.code : SM_ERR_IO, "%s", e.message[0] ? e.message : "read error");
        in->failed = 1;
        return 1;
    }
    pending *p = &t->queue[t->count - 1];
    p->length[m] = r->length;
    p->raw_len[m] = len;
    if (stable) {
        p->raw[m] = data;
    } else {
        p->raw_at[m] = t->arena.len;
        if (buf_put(&t->arena, data, len) != 0) {
            sm_io_error(in->err, SM_ERR_NOMEM, "out of memory");
            in->failed = 1;
            return 1;
        }
    }
    return 0;
}

static int on_piece_fed(void *ctx, size_t bytes, int record_ended) {
    (void)record_ended;
    sm_trimmer *t = ((trim_scan *)ctx)->t;
    if (t->o.on_progress) t->o.on_progress(t->o.ctx, t->reader, bytes, t->stats.trimmed);
    return t->stop; /* a write failed: reading on is pointless */
}

int sm_trimmer_run(sm_trimmer *t, const char *path1, const char *path2, sm_error *err) {
    memset(err, 0, sizeof *err);
    sm_reader *readers[2] = {NULL, NULL};
    trim_scan in = {t, {path1, path2}, path2 ? 2u : 1u, err, 0};
    int rc = SM_OK;
    for (unsigned m = 0; m < in.mates && rc == SM_OK; m++) rc = open_reader(t, in.paths[m], &readers[m], err);
    if (rc == SM_OK && t->o.on_input) t->o.on_input(t->o.ctx, path1);
    if (rc == SM_OK) {
        sm_scan_reader_options so;
        sm_scan_reader_options_init(&so);
        so.ctx = &in;
        so.on_progress = on_piece_fed;
        so.piece = FEED_PIECE;
        so.on_record_begin = on_record_begin;
        so.on_record_read = on_record_read;
        so.mate = readers[1];
        so.on_pair = in.mates == 2 ? on_pair : NULL;
        t->reader = readers[0];
        sm_error e;
        memset(&e, 0, sizeof e);
        int status = sm_runner_scan_reader(t->runner, readers[0], &so, &e);
        if (status != SM_OK && in.failed) rc = err->code ? err->code : status;
        else if (status != SM_OK && e.message[0]) rc = sm_io_error(err, status, "%s", e.message);
        else if (status != SM_OK || t->stop) rc = runner_failed(t, status ? status : SM_ERR_TERMINATED, path1, err);
    }
    if (rc == SM_OK) {
        int status = sm_runner_flush(t->runner);
        if (status != SM_OK || t->stop) rc = runner_failed(t, status ? status : SM_ERR_TERMINATED, path1, err);
    }
    for (unsigned m = 0; m < in.mates; m++) sm_reader_close(readers[m]);
    return rc;
}
