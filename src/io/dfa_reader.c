/* A DFA over a reader's input (include/seqmatch_reader.h,
 * sm_dfa_scan_reader): the input loop of seqmatch dfa. The bytes are
 * gathered into blocks of up to 64 MiB (bounded memory for any input) and
 * each block is run on the matcher's threads; a large piece of the reader
 * (a mapped file's) is run where it lies. Without a result per record a
 * block holds as many records as fit, so that the threads share the many
 * short records of an assembly as they share a long one; marks say where
 * each record's bytes start in the block, for the messages. Two blocks take
 * turns: the next is read (FASTA and FASTQ stripped straight into it) by a
 * task of the run's thread team while the other threads run this one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seqmatch_reader.h"
#include "engines/dfa/dfa_internal.h"
#include "io/source.h"

/* Input is simulated in blocks of this size. */
#define DFA_BLOCK_BYTES ((size_t)64 << 20)
/* Pieces at least this long are run in place (no copy into the block). */
#define DFA_DIRECT_BYTES ((size_t)4 << 20)
/* Past this many bytes of a record a mapped FASTA file is stripped on the
   reader's threads when it has more than two (reader.c): such blocks are
   read before they are run, not beside the run before them. */
#define DFA_READER_STRIPS_FROM ((size_t)4 << 20)
/* Room past a block that sm_reader_read_into may write. */
#define DFA_BLOCK_PAD 64

/* The block size: DFA_BLOCK_BYTES, smaller in tests (many blocks from a
   small input). */
static size_t block_bytes = DFA_BLOCK_BYTES;

void sm_dfa_scan_block_bytes(size_t bytes) { block_bytes = bytes ? bytes : DFA_BLOCK_BYTES; }

/* Where a record's bytes (or, for text, the input's) start in the block. */
typedef struct {
    size_t at;
    uint64_t offset;       /* their offset in the record (dna) or the input (text) */
    char *record;          /* dna: the record's name; text: NULL */
} block_mark;

/* One block: the bytes read for one run of the matcher's threads. While
   the threads run one block the next is read into the other (double
   buffering), on one of the same threads. */
typedef struct {
    uint8_t *own;          /* block_bytes + DFA_BLOCK_PAD */
    const uint8_t *data;   /* own, or a mapped piece run where it lies */
    size_t len;
    int direct;            /* data is the reader's: nothing may be read while it runs */
    int failed;            /* the reader failed in this block (dfa_fill's error): its bytes are not run */
    char *ended;           /* per_record: the record whose bytes end here (its result follows the run) */
    block_mark *marks;
    size_t nmarks, marks_cap;
} dfa_block;

enum { FILL_BETWEEN, FILL_IN_RECORD, FILL_END, FILL_FAILED };

/* The reading side: what a block's filling leaves for the next one. */
typedef struct {
    sm_reader *reader;
    const sm_dfa_reader_options *o;
    int into;              /* FASTA/FASTQ: stripped straight into the block */
    int fasta;
    int stage;             /* FILL_* */
    char *record;          /* the current record's name */
    uint64_t offset;       /* offset of the next byte in its record (dna) or the input (text) */
    const uint8_t *pending;  /* a piece read but not yet taken (text) */
    size_t pending_len;
    int rc;                /* FILL_FAILED: the reader's error, reported after the blocks before it */
    sm_error err;
    dfa_block *target;     /* the block a beside task fills */
} dfa_fill;

static void clear_block(dfa_block *b) {
    for (size_t i = 0; i < b->nmarks; i++) free(b->marks[i].record);
    b->nmarks = 0;
    b->len = 0;
    b->data = b->own;
    b->direct = 0;
    b->failed = 0;
    free(b->ended);
    b->ended = NULL;
}

static void free_block(dfa_block *b) {
    clear_block(b);
    free(b->marks);
    free(b->own);
}

static int fill_failed(dfa_fill *f, int rc) {
    f->stage = FILL_FAILED;
    f->rc = rc ? rc : SM_ERR_IO;
    return f->rc;
}

/* The bytes appended next belong to record (NULL: text) from f->offset on. */
static int mark_block(dfa_fill *f, dfa_block *b, const char *record) {
    if (b->nmarks && b->marks[b->nmarks - 1].at == b->len) {
        free(b->marks[b->nmarks - 1].record);
        b->nmarks--;
    }
    if (b->nmarks == b->marks_cap) {
        size_t cap = b->marks_cap ? b->marks_cap * 2 : 64;
        block_mark *grown = realloc(b->marks, cap * sizeof *grown);
        if (!grown) return fill_failed(f, sm_io_error(&f->err, SM_ERR_NOMEM, "out of memory"));
        b->marks = grown;
        b->marks_cap = cap;
    }
    block_mark *m = &b->marks[b->nmarks];
    m->at = b->len;
    m->offset = f->offset;
    m->record = record ? strdup(record) : NULL;
    if (record && !m->record) return fill_failed(f, sm_io_error(&f->err, SM_ERR_NOMEM, "out of memory"));
    b->nmarks++;
    return SM_OK;
}

/* Fills b from the reader: up to block_bytes bytes, across records
   unless each record has its result; a large piece (a mapped file's) is a
   block of its own, run where it lies. The blocks are cut where the input
   loop before double buffering ran them, so that an unknown byte and a
   reader's error are reported in the same order. A failure leaves the
   stage FILL_FAILED (the block's bytes are then not run). */
static void fill_block(dfa_fill *f, dfa_block *b) {
    const sm_dfa_reader_options *o = f->o;
    clear_block(b);
    if (f->stage == FILL_IN_RECORD && mark_block(f, b, o->dna ? f->record : NULL) != SM_OK) return;
    while (f->stage == FILL_BETWEEN || f->stage == FILL_IN_RECORD) {
        if (f->stage == FILL_BETWEEN) {
            const char *name = NULL;
            int got = sm_reader_next_record(f->reader, &name, &f->err);
            if (got < 0) {
                fill_failed(f, f->err.code);
                return;
            }
            if (got == 0) {
                f->stage = FILL_END;
                return;
            }
            free(f->record);
            if (!(f->record = strdup(name ? name : ""))) {
                fill_failed(f, sm_io_error(&f->err, SM_ERR_NOMEM, "out of memory"));
                return;
            }
            sm_input_format format = sm_reader_format(f->reader);
            f->into = format == SM_INPUT_FASTA || format == SM_INPUT_FASTQ;
            f->fasta = format == SM_INPUT_FASTA;
            /* offsets in messages are within the record (dna) */
            if (o->per_record || o->dna) f->offset = 0;
            f->stage = FILL_IN_RECORD;
            if (mark_block(f, b, o->dna ? f->record : NULL) != SM_OK) return;
        }
        if (b->len == block_bytes) return;
        const uint8_t *data = NULL;
        size_t len = 0;
        int got;
        if (f->pending) {
            data = f->pending, len = f->pending_len, got = 1;
            f->pending = NULL;
        } else if (f->into) {
            got = sm_reader_read_into(f->reader, b->own + b->len, block_bytes - b->len, &len, &f->err);
            if (got > 0) {
                b->len += len;
                f->offset += len;
                continue;
            }
        } else {
            got = sm_reader_read(f->reader, &data, &len, &f->err);
        }
        if (got < 0) {
            fill_failed(f, f->err.code);
            return;
        }
        if (got == 0) {
            /* a result per record: the record's bytes end here; else the
               block goes on with the next record */
            f->stage = FILL_BETWEEN;
            if (o->per_record) {
                b->ended = f->record;
                f->record = NULL;
                return;
            }
            continue;
        }
        if (len >= DFA_DIRECT_BYTES) {
            /* run where it lies, in a block of its own */
            if (b->len > 0) {
                f->pending = data, f->pending_len = len;
                return;
            }
            b->data = data;
            b->len = len;
            b->direct = 1;
            f->offset += len;
            return;
        }
        size_t take = block_bytes - b->len < len ? block_bytes - b->len : len;
        memcpy(b->own + b->len, data, take);
        b->len += take;
        f->offset += take;
        if (take < len) f->pending = data + take, f->pending_len = len - take;
    }
}

static void fill(dfa_fill *f, dfa_block *b) {
    if (f->stage == FILL_FAILED) clear_block(b);
    else fill_block(f, b);
    b->failed = f->stage == FILL_FAILED;
}

static void fill_task(void *ctx) {
    dfa_fill *f = ctx;
    fill(f, f->target);
}

static void describe_byte(uint8_t c, char *buf, size_t size) {
    if (c >= 0x21 && c < 0x7F) snprintf(buf, size, "byte 0x%02X ('%c')", c, c);
    else snprintf(buf, size, "byte 0x%02X", c);
}

/* The message of the block's first unknown byte, named by its marks. */
static int unknown_in_block(const sm_dfa_matcher *matcher, const char *name, const dfa_block *b, sm_error *err) {
    size_t at = sm_dfa_find_unknown(matcher, b->data, b->len), i = b->nmarks;
    while (i > 1 && b->marks[i - 1].at > at) i--;
    const block_mark none = {0, 0, NULL}, *m = i ? &b->marks[i - 1] : &none;
    unsigned long long offset = (unsigned long long)(m->offset + (at - m->at));
    char what[32];
    describe_byte(b->data[at], what, sizeof what);
    if (m->record)
        return sm_io_error(err, SM_ERR_PATTERN,
                           "%s: record '%s': %s at sequence offset %llu is not in the DFA's alphabet (--skip-unknown "
                           "ignores such bytes)",
                           name, m->record, what, offset);
    return sm_io_error(err, SM_ERR_PATTERN,
                       "%s: %s at offset %llu is not in the DFA's alphabet (--skip-unknown ignores such bytes)", name,
                       what, offset);
}

/* Whether the next block may be read beside this one's run: not while the
   block is the reader's own memory, nor where the reader strips a long
   record on threads of the team the run holds (it would strip on one). */
static int read_beside(const dfa_fill *f, const dfa_block *b, unsigned threads) {
    if (b->direct || f->stage == FILL_END || f->stage == FILL_FAILED) return 0;
    return threads <= 2 || !f->fasta || f->stage != FILL_IN_RECORD || f->offset < DFA_READER_STRIPS_FROM;
}

int sm_dfa_scan_reader(const sm_dfa *dfa, const sm_dfa_matcher *matcher, sm_reader *reader,
                       const sm_dfa_reader_options *opts, sm_error *err) {
    dfa_block blocks[2];
    memset(blocks, 0, sizeof blocks);
    dfa_fill f;
    memset(&f, 0, sizeof f);
    f.reader = reader;
    f.o = opts;
    f.stage = FILL_BETWEEN;
    unsigned threads = opts->parallel && opts->parallel->threads ? opts->parallel->threads : 0;
    if (threads == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online > 1 ? (unsigned)online : 1u;
    }
    int rc = SM_OK;
    for (int i = 0; i < 2; i++) {
        blocks[i].own = malloc(block_bytes + DFA_BLOCK_PAD);
        blocks[i].data = blocks[i].own;
        if (!blocks[i].own) {
            rc = sm_io_error(err, SM_ERR_NOMEM, "out of memory for a %zu MiB input block", block_bytes >> 20);
            goto done;
        }
    }
    const uint32_t start = sm_dfa_start(dfa);
    uint32_t state = start;
    dfa_block *cur = &blocks[0], *next = &blocks[1];
    sm_dfa_beside beside = {fill_task, &f, 0, 0};
    fill(&f, cur);
    for (;;) {
        if (cur->failed) {
            /* the reader failed in this block: its bytes are not run */
            if (err) *err = f.err;
            rc = f.rc;
            break;
        }
        if (cur->len == 0 && !cur->ended) break; /* the input's end */
        int ahead = read_beside(&f, cur, threads);
        f.target = next;
        if (cur->len > 0) {
            /* cur, while the next block is read beside it */
            sm_error e;
            memset(&e, 0, sizeof e);
            uint32_t reached = state;
            rc = ahead ? sm_dfa_run_beside(matcher, state, cur->data, cur->len, opts->parallel, &beside, &reached, &e)
                       : sm_dfa_run_parallel(matcher, state, cur->data, cur->len, opts->parallel, &reached, &e);
            if (rc != SM_OK) {
                rc = sm_io_error(err, rc, "%s: %s", opts->name, e.message);
                break;
            }
            if (reached == SM_DFA_NO_STATE) {
                rc = unknown_in_block(matcher, opts->name, cur, err);
                break;
            }
            state = reached;
        } else if (ahead) {
            fill(&f, next);
        }
        if (cur->ended) {
            if (opts->on_result(opts->ctx, cur->ended, state) != 0) {
                rc = SM_ERR_TERMINATED;
                break;
            }
            state = start;
        }
        if (!ahead) fill(&f, next);
        dfa_block *t = cur;
        cur = next;
        next = t;
    }
    if (rc == SM_OK && !opts->per_record && opts->on_result(opts->ctx, NULL, state) != 0) rc = SM_ERR_TERMINATED;
done:
    free_block(&blocks[0]);
    free_block(&blocks[1]);
    free(f.record);
    return rc;
}

/* sm_dfa_scan_files: the whole input's result labelled with its file. */
typedef struct {
    const sm_dfa_reader_options *o;
    const char *label;
} file_result;

static int on_file_result(void *ctx, const char *record, uint32_t state) {
    file_result *fr = ctx;
    return fr->o->on_result(fr->o->ctx, record ? record : fr->label, state);
}

/* One after another; the next file is opened only after the one before
   ended, so that a failure leaves every result before it delivered. */
int sm_dfa_scan_files(const sm_dfa *dfa, const sm_dfa_matcher *matcher, char *const *paths, size_t count,
                      unsigned reader_threads, int label_inputs, const sm_dfa_reader_options *opts, sm_error *err) {
    sm_input_format format = opts->dna ? SM_INPUT_AUTO : SM_INPUT_TEXT;
    int rc = SM_OK;
    for (size_t i = 0; i < count && rc == SM_OK; i++) {
        sm_reader *reader = NULL;
        if ((rc = sm_reader_open_threads(paths[i], format, reader_threads, &reader, err)) != SM_OK) break;
        sm_dfa_reader_options o = *opts;
        o.name = strcmp(paths[i], "-") == 0 ? "standard input" : paths[i];
        file_result fr = {opts, label_inputs ? o.name : NULL};
        o.on_result = on_file_result;
        o.ctx = &fr;
        rc = sm_dfa_scan_reader(dfa, matcher, reader, &o, err);
        sm_reader_close(reader);
    }
    return rc;
}

/* ------------------------------------------------------------ on the GPU */

/* The inputs go to the GPU as they are read, and their results come back
   later, in order, through on_gpu_result. Every input waiting for its
   result has an entry here; a joined dna input keeps the starts of its
   records until the GPU has found their bytes clean, to name the record of
   an unknown byte. */
typedef struct {
    uint64_t offset;
    char *name;
} record_mark;

typedef struct {
    char *label;        /* given to on_result (NULL: none) */
    const char *shown;  /* the file, in messages */
    record_mark *marks;
    size_t nmarks, marks_cap, first_mark;
} pending_input;

typedef struct {
    const sm_dfa_reader_options *o;
    sm_dfa_gpu *gpu;
    pending_input *queue;
    size_t head, tail, cap;
    sm_error failure;   /* the first failure (an unknown byte the results showed) */
    int failed;
} gpu_scan;

static void pending_free(pending_input *p) {
    free(p->label);
    for (size_t i = p->first_mark; i < p->nmarks; i++) free(p->marks[i].name);
    free(p->marks);
    memset(p, 0, sizeof *p);
}

static pending_input *push_pending(gpu_scan *c, const char *label, const char *shown) {
    if (c->head == c->tail) c->head = c->tail = 0;
    if (c->tail == c->cap) {
        if (c->head > 0) {
            memmove(c->queue, c->queue + c->head, (c->tail - c->head) * sizeof *c->queue);
            c->tail -= c->head;
            c->head = 0;
        } else {
            size_t cap = c->cap ? c->cap * 2 : 64;
            pending_input *grown = realloc(c->queue, cap * sizeof *grown);
            if (!grown) return NULL;
            c->queue = grown;
            c->cap = cap;
        }
    }
    pending_input *p = &c->queue[c->tail];
    memset(p, 0, sizeof *p);
    if (label && !(p->label = strdup(label))) return NULL;
    p->shown = shown;
    c->tail++;
    return p;
}

static int add_mark(pending_input *p, uint64_t offset, const char *name) {
    if (p->nmarks == p->marks_cap) {
        if (p->first_mark > p->nmarks / 2) {
            memmove(p->marks, p->marks + p->first_mark, (p->nmarks - p->first_mark) * sizeof *p->marks);
            p->nmarks -= p->first_mark;
            p->first_mark = 0;
        } else {
            size_t cap = p->marks_cap ? p->marks_cap * 2 : 64;
            record_mark *grown = realloc(p->marks, cap * sizeof *grown);
            if (!grown) return -1;
            p->marks = grown;
            p->marks_cap = cap;
        }
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    p->marks[p->nmarks++] = (record_mark){offset, copy};
    return 0;
}

/* Records whose bytes all lie before `clean` are no longer needed. */
static void prune_marks(pending_input *p, uint64_t clean) {
    while (p->first_mark + 1 < p->nmarks && p->marks[p->first_mark + 1].offset <= clean)
        free(p->marks[p->first_mark++].name);
}

static int report_unknown(const gpu_scan *c, const pending_input *p, uint64_t at, uint8_t byte, sm_error *err) {
    char what[32];
    describe_byte(byte, what, sizeof what);
    if (!c->o->dna)
        return sm_io_error(err, SM_ERR_PATTERN,
                    "%s: %s at offset %llu is not in the DFA's alphabet (--skip-unknown ignores such bytes)", p->shown,
                    what, (unsigned long long)at);
    const char *record = p->label ? p->label : "";
    uint64_t offset = at;
    if (p->nmarks > p->first_mark) {
        /* the last record starting at or before the byte */
        size_t lo = p->first_mark, hi = p->nmarks;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->marks[mid].offset <= at) lo = mid;
            else hi = mid;
        }
        record = p->marks[lo].name;
        offset = at - p->marks[lo].offset;
    }
    return sm_io_error(err, SM_ERR_PATTERN,
                "%s: record '%s': %s at sequence offset %llu is not in the DFA's alphabet (--skip-unknown ignores "
                "such bytes)",
                p->shown, record, what, (unsigned long long)offset);
}

static int on_gpu_result(const sm_dfa_gpu_result *res, void *ctx) {
    gpu_scan *c = ctx;
    if (c->head == c->tail) return 1; /* cannot happen: one entry per input begun */
    pending_input *p = &c->queue[c->head];
    int stop = 0;
    if (res->state == SM_DFA_NO_STATE) {
        report_unknown(c, p, res->unknown_at, res->unknown_byte, &c->failure);
        c->failed = 1;
        stop = 1;
    } else if (c->o->on_result(c->o->ctx, p->label, res->state) != 0) {
        stop = 1;
    }
    pending_free(p);
    c->head++;
    return stop;
}

/* A failed GPU call: its error, or the unknown byte a result showed. */
static int gpu_failed(gpu_scan *c, int rc, const sm_error *e, sm_error *err) {
    if (c->failed) {
        if (err) *err = c->failure;
        return c->failure.code;
    }
    if (err) *err = *e;
    return rc;
}

/* An error reading an input: the results of the inputs before it (and the
   error of an unknown byte the GPU found in an earlier record of the input
   being read) come first, as they do on the CPU. */
static int gpu_reader_failed(gpu_scan *c, const sm_error *reader_err, pending_input *current, uint64_t record_start,
                             sm_error *err) {
    sm_error e;
    int rc = sm_dfa_gpu_flush(c->gpu, &e);
    if (rc != SM_OK) return gpu_failed(c, rc, &e, err);
    uint64_t at = 0;
    uint8_t byte = 0;
    if (current && c->o->dna && sm_dfa_gpu_unknown(c->gpu, &at, &byte) && at < record_start)
        return report_unknown(c, current, at, byte, err);
    if (err) *err = *reader_err;
    return reader_err->code ? reader_err->code : SM_ERR_IO;
}

static int scan_input_gpu(gpu_scan *c, const sm_dfa *dfa, sm_reader *reader, const char *shown, const char *label,
                          sm_error *err) {
    const sm_dfa_reader_options *o = c->o;
    sm_error e;
    memset(&e, 0, sizeof e);
    const uint32_t start = sm_dfa_start(dfa);
    int rc = SM_OK;
    uint64_t fed = 0, record_start = 0;
    if (!o->per_record) {
        if (!push_pending(c, label, shown)) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
        if ((rc = sm_dfa_gpu_begin(c->gpu, start, &e)) != SM_OK) return gpu_failed(c, rc, &e, err);
    }
    for (;;) {
        const char *name = NULL;
        int got = sm_reader_next_record(reader, &name, &e);
        if (got < 0) return gpu_reader_failed(c, &e, o->per_record ? NULL : &c->queue[c->tail - 1], record_start, err);
        if (got == 0) break;
        record_start = fed;
        if (o->per_record) {
            if (!push_pending(c, name ? name : "", shown)) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
            if ((rc = sm_dfa_gpu_begin(c->gpu, start, &e)) != SM_OK) return gpu_failed(c, rc, &e, err);
        } else if (o->dna && add_mark(&c->queue[c->tail - 1], fed, name ? name : "") != 0) {
            return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
        }
        const uint8_t *data;
        size_t len;
        while ((got = sm_reader_read(reader, &data, &len, &e)) > 0) {
            if ((rc = sm_dfa_gpu_feed(c->gpu, data, len, &e)) != SM_OK) return gpu_failed(c, rc, &e, err);
            fed += len;
            /* the entry may have moved: the callback pops entries as results come */
            if (!o->per_record && o->dna) prune_marks(&c->queue[c->tail - 1], sm_dfa_gpu_clean_bytes(c->gpu));
        }
        if (got < 0) return gpu_reader_failed(c, &e, o->per_record ? NULL : &c->queue[c->tail - 1], record_start, err);
        if (o->per_record && (rc = sm_dfa_gpu_end(c->gpu, &e)) != SM_OK) return gpu_failed(c, rc, &e, err);
    }
    if (!o->per_record && (rc = sm_dfa_gpu_end(c->gpu, &e)) != SM_OK) return gpu_failed(c, rc, &e, err);
    return SM_OK;
}

int sm_dfa_gpu_scan_files(const sm_dfa *dfa, const sm_dfa_matcher *matcher, const sm_dfa_gpu_options *gpu_options,
                          char *const *paths, size_t count, unsigned reader_threads, int label_inputs,
                          const sm_dfa_reader_options *opts, sm_error *err) {
    gpu_scan c;
    memset(&c, 0, sizeof c);
    c.o = opts;
    sm_error e;
    memset(&e, 0, sizeof e);
    int rc = sm_dfa_gpu_open(matcher, gpu_options, on_gpu_result, &c, &c.gpu, &e);
    if (rc != SM_OK) return sm_io_error(err, rc, "--gpu: %s", e.message);
    sm_input_format format = opts->dna ? SM_INPUT_AUTO : SM_INPUT_TEXT;
    for (size_t i = 0; i < count && rc == SM_OK; i++) {
        sm_reader *reader = NULL;
        if (sm_reader_open_threads(paths[i], format, reader_threads, &reader, &e) != SM_OK) {
            rc = gpu_reader_failed(&c, &e, NULL, 0, err);
            break;
        }
        const char *shown = strcmp(paths[i], "-") == 0 ? "standard input" : paths[i];
        rc = scan_input_gpu(&c, dfa, reader, shown, label_inputs ? shown : NULL, err);
        sm_reader_close(reader);
    }
    if (rc == SM_OK && (rc = sm_dfa_gpu_flush(c.gpu, &e)) != SM_OK) rc = gpu_failed(&c, rc, &e, err);
    sm_dfa_gpu_free(c.gpu);
    for (size_t i = c.head; i < c.tail; i++) pending_free(&c.queue[i]);
    free(c.queue);
    return rc;
}
