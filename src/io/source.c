/* Byte source: plain files, gzip (one member or many), BGZF and zstd, from
 * files or standard input, read the same way (source.h).
 *
 * - A plain regular file is memory-mapped, with zero bytes readable past
 *   its end, and handed to the reader as it is (no read() copies).
 * - gzip is inflated by ISA-L (igzip; zlib where the build lacks it):
 *   about twice zlib's rate (bench/results/history.md, "The feed"). With
 *   threads >= 2 a thread of its own inflates ahead into a ring of buffers,
 *   so that inflating overlaps the scan.
 * - BGZF (the gzip members bgzip and samtools write, each saying its size)
 *   is inflated block by block on `threads` threads, in order, or in jobs
 *   of many blocks by a decoder of the caller's (a GPU) on one.
 * - zstd through libzstd, where the build has it, like gzip.
 * A compressed regular file is mapped too; a pipe is read in pieces. Errors
 * name the file: a truncated stream, corrupt data, data after the last
 * member. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/inflate.h"
#include "seqmatch_reader.h"

#define RAW_PIECE (1u << 20)      /* bytes read from a pipe at a time */
#define RING_SLOTS 4              /* threaded stream decoding: buffers ahead */
#define RING_BYTES (4u << 20)     /* bytes per buffer */
/* Inflated bytes per BGZF job (about 16 blocks): about a trimming chunk, so
   that a job's buffer can become the reader's and then the chunk's whole. */
#define BGZF_JOB_BYTES (1u << 20)
#define BGZF_HEAD SM_IO_SWAP_KEEP /* room before a job's bytes for a reader's leftover */
#define BGZF_PAD 64           /* zeroed bytes after a job's buffer, as after a reader's */

enum { SRC_PLAIN, SRC_GZIP, SRC_BGZF, SRC_ZSTD };

/* A ring buffer of decoded bytes, filled by a producer thread. */
typedef struct {
    uint8_t *data;
    size_t len, pos;
    int status;        /* SM_OK, or the error that ended the stream here */
    int last;          /* the stream ends after it */
    sm_error error;
} ring_slot;

/* A BGZF job: consecutive blocks, inflated by a worker. */
typedef struct {
    const uint8_t *raw; /* the blocks' bytes (mapped, or copied from a pipe into own) */
    uint8_t *own;
    size_t raw_len, own_cap;
    uint64_t raw_at;    /* offset of raw in the file, for messages */
    uint8_t *out;
    size_t out_len, out_cap, pos;
    int state;          /* 0 free, 1 queued, 2 taken, 3 done */
    int status;
    sm_error error;
} bgzf_job;

struct sm_source {
    char *name;
    int fd;                   /* -1 for a caller's read function */
    sm_io_read_fn read_fn;
    void *read_ctx;
    int kind;
    uint64_t total;           /* file size, 0 when not a regular file */
    _Atomic uint64_t done;    /* raw bytes consumed (progress) */
    unsigned threads;

    /* Raw input: a mapped regular file, or bytes read from a pipe. */
    const uint8_t *map;
    size_t map_len, map_size; /* file bytes; mapping bytes (zero padding after the file) */
    size_t map_pos;           /* raw bytes consumed from the mapping */
    uint8_t *rbuf;
    size_t rpos, rlen, rcap;
    int reof;
    uint64_t raw_off;         /* file offset of the next raw byte */

    /* Stream decoding (gzip, zstd). */
    sm_inflater *inf;
    int member_open;          /* inside a gzip member */
    int ended;                /* the stream is over (after its last byte) */
    int pend_status;          /* an error met after bytes that went out first */
    sm_error pend;

    /* Threaded decoding: a producer for streams, workers for BGZF. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int sync_init;
    pthread_t *pool;
    unsigned pool_n;
    int stop;
    ring_slot ring[RING_SLOTS];
    unsigned ring_head, ring_tail, ring_count; /* consumer takes head; producer fills tail */
    int producer_done;
    bgzf_job *jobs;
    unsigned njobs, job_head, job_next_take, job_tail, jobs_queued;
    int bgzf_raw_end;         /* no more blocks to make jobs of */
    int bgzf_fallback;        /* a member that is not BGZF: the rest decoded as a stream */
    size_t job_bytes;         /* inflated bytes a job holds */
    const sm_io_bgzf_decoder *decoder; /* &decoder_copy, or NULL */
    sm_io_bgzf_decoder decoder_copy;
    uint64_t produced;

    /* A byte range of a mapped BGZF file (sm_io_source_limit): map_len is
       the range's end until sm_io_source_extend puts the file's back. */
    int limited;
    size_t full_len;
};

int sm_io_error(sm_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

/* ----------------------------------------------------------- raw input */

/* Makes at least want raw bytes available unless the input ends first;
   *p and *n give what there is. Returns 0, or -1 on a read error. */
static int raw_peek(sm_source *s, size_t want, const uint8_t **p, size_t *n, sm_error *err) {
    if (s->map) {
        *p = s->map + s->map_pos;
        *n = s->map_len - s->map_pos;
        return 0;
    }
    while (s->rlen - s->rpos < want && !s->reof) {
        if (s->rpos > 0) {
            memmove(s->rbuf, s->rbuf + s->rpos, s->rlen - s->rpos);
            s->rlen -= s->rpos;
            s->rpos = 0;
        }
        if (s->rcap - s->rlen < RAW_PIECE) {
            size_t cap = s->rcap ? s->rcap * 2 : 2 * RAW_PIECE;
            while (cap - s->rlen < RAW_PIECE || cap < want) cap *= 2;
            uint8_t *q = realloc(s->rbuf, cap);
            if (!q) return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name), -1;
            s->rbuf = q;
            s->rcap = cap;
        }
        ssize_t got;
        if (s->read_fn) {
            got = s->read_fn(s->read_ctx, s->rbuf + s->rlen, s->rcap - s->rlen, err);
            if (got < 0) return -1;
        } else if ((got = read(s->fd, s->rbuf + s->rlen, s->rcap - s->rlen)) < 0) {
            if (errno == EINTR) continue;
            return sm_io_error(err, SM_ERR_IO, "%s: read error: %s", s->name, strerror(errno)), -1;
        }
        if (got == 0) s->reof = 1;
        s->rlen += (size_t)got;
    }
    *p = s->rbuf + s->rpos;
    *n = s->rlen - s->rpos;
    return 0;
}

static void raw_consume(sm_source *s, size_t n) {
    if (s->map) s->map_pos += n;
    else s->rpos += n;
    s->raw_off += n;
    atomic_store_explicit(&s->done, s->raw_off, memory_order_relaxed);
}

/* ------------------------------------------------------- stream decoding */

static int truncated(sm_source *s, sm_error *err) {
    return sm_io_error(err, SM_ERR_FORMAT, "%s: unexpected end of file (truncated compressed stream)", s->name);
}

/* gzip and zstd: up to cap decoded bytes into out, on the calling thread.
   Between gzip members: zero bytes to the end are padding (as gzip takes
   them); anything else but another member is an error. Returns the count,
   0 at the end, -1 on error. An error after some bytes is kept for the
   next call, so that those bytes are read first. */
static size_t bgzf_block_size(const uint8_t *p, size_t n);

/* The inflated size a BGZF block of bsize bytes at p says it has (ISIZE, its last 4 bytes). */
static size_t bgzf_isize(const uint8_t *p, size_t bsize) {
    const uint8_t *t = p + bsize - 4;
    return (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
}

static long stream_fill(sm_source *s, uint8_t *out, size_t cap, sm_error *err) {
    if (s->pend_status != SM_OK) {
        if (err) *err = s->pend;
        return -1;
    }
    size_t made = 0;
    sm_error *e = &s->pend;
    while (made < cap && !s->ended) {
        const uint8_t *p;
        size_t n;
        if (raw_peek(s, 18, &p, &n, e) < 0) goto failed;
        if (!s->member_open) {
            if (n == 0) {
                s->ended = 1;
                break;
            }
            if (s->kind == SRC_ZSTD || (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)) {
                /* a whole BGZF block that fits (its size in its header):
                   decoded in one call straight into out, without the
                   streaming decoder's copy; anything else as a stream */
                size_t bsize = s->kind == SRC_GZIP ? bgzf_block_size(p, n) : 0, whole = 0;
                if (bsize >= 26 && bsize <= n && bgzf_isize(p, bsize) <= cap - made &&
                    sm_inflater_whole(s->inf, p, bsize, out + made, cap - made, &whole)) {
                    raw_consume(s, bsize);
                    made += whole;
                    continue;
                }
                sm_inflater_reset(s->inf);
                s->member_open = 1;
            } else if (n == 1 && p[0] == 0x1f) {
                truncated(s, e); /* the input ends inside the next member's magic */
                goto failed;
            } else if (p[0] == 0) {
                /* Padding: every byte to the end must be zero. */
                size_t z = 0;
                while (z < n && p[z] == 0) z++;
                if (z < n) {
                    sm_io_error(e, SM_ERR_FORMAT, "%s: data after the last gzip member (byte %llu)", s->name,
                                (unsigned long long)(s->raw_off + z));
                    goto failed;
                }
                raw_consume(s, z);
                continue;
            } else {
                sm_io_error(e, SM_ERR_FORMAT, "%s: data after the last gzip member (byte %llu)", s->name,
                            (unsigned long long)s->raw_off);
                goto failed;
            }
        }
        size_t used = 0, produced = 0;
        int finished = 0;
        int rc = sm_inflater_run(s->inf, p, n, &used, out + made, cap - made, &produced, &finished, e);
        raw_consume(s, used);
        made += produced;
        if (rc != SM_OK) {
            char msg[sizeof e->message];
            memcpy(msg, e->message, sizeof msg);
            sm_io_error(e, rc, "%s: %s", s->name, msg);
            goto failed;
        }
        if (finished) {
            s->member_open = 0;
            if (s->kind == SRC_ZSTD) {
                /* zstd frames follow each other; the stream ends with the input */
                const uint8_t *q;
                size_t m;
                if (raw_peek(s, 1, &q, &m, e) < 0) goto failed;
                if (m == 0) s->ended = 1;
            }
            continue;
        }
        if (used == 0 && produced == 0) {
            /* the decoder wants more input than there is */
            if (raw_peek(s, n + 1, &p, &n, e) < 0) goto failed;
            if (n == 0 || s->map || s->reof) {
                sm_io_error(e, SM_ERR_FORMAT, "%s: unexpected end of file (truncated compressed stream)", s->name);
                goto failed;
            }
        }
    }
    return (long)made;
failed:
    s->pend_status = e->code ? e->code : SM_ERR_FORMAT;
    if (made > 0) return (long)made;
    if (err) *err = s->pend;
    return -1;
}

/* ---------------------------------------------------- threaded streams */

static void *producer_main(void *arg) {
    sm_source *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (s->ring_count == RING_SLOTS && !s->stop) pthread_cond_wait(&s->cond, &s->lock);
        if (s->stop) {
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        ring_slot *slot = &s->ring[s->ring_tail];
        pthread_mutex_unlock(&s->lock);
        long got = stream_fill(s, slot->data, RING_BYTES, &slot->error);
        pthread_mutex_lock(&s->lock);
        slot->pos = 0;
        slot->len = got > 0 ? (size_t)got : 0;
        slot->status = got < 0 ? slot->error.code : SM_OK;
        slot->last = got <= 0 || s->ended;
        s->ring_tail = (s->ring_tail + 1) % RING_SLOTS;
        s->ring_count++;
        int last = slot->last;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        if (last) return NULL;
    }
}

static long ring_read(sm_source *s, uint8_t *buf, size_t cap, sm_error *err) {
    size_t made = 0;
    pthread_mutex_lock(&s->lock);
    while (made < cap) {
        while (s->ring_count == 0 && !s->producer_done) pthread_cond_wait(&s->cond, &s->lock);
        if (s->ring_count == 0) break;
        ring_slot *slot = &s->ring[s->ring_head];
        if (slot->pos == slot->len && slot->status != SM_OK) {
            if (made > 0) break; /* the bytes before the error first */
            if (err) *err = slot->error;
            pthread_mutex_unlock(&s->lock);
            return -1;
        }
        size_t n = slot->len - slot->pos < cap - made ? slot->len - slot->pos : cap - made;
        pthread_mutex_unlock(&s->lock);
        memcpy(buf + made, slot->data + slot->pos, n);
        pthread_mutex_lock(&s->lock);
        made += n;
        slot->pos += n;
        if (slot->pos == slot->len && slot->status == SM_OK) {
            if (slot->last) s->producer_done = 1;
            s->ring_head = (s->ring_head + 1) % RING_SLOTS;
            s->ring_count--;
            pthread_cond_broadcast(&s->cond);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return (long)made;
}

/* --------------------------------------------------------------- BGZF */

/* The size of the BGZF block at p (n bytes available), or 0 when p is no
   BGZF block header (a plain gzip member, or too few bytes). */
static size_t bgzf_block_size(const uint8_t *p, size_t n) {
    if (n < 18 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || !(p[3] & 4)) return 0;
    size_t xlen = (size_t)p[10] | (size_t)p[11] << 8;
    /* the BC subfield (BGZF writes it first; others may come before it) */
    for (size_t at = 12; at + 4 <= 12 + xlen && at + 4 <= n;) {
        size_t slen = (size_t)p[at + 2] | (size_t)p[at + 3] << 8;
        if (p[at] == 'B' && p[at + 1] == 'C' && slen == 2 && at + 6 <= n)
            return ((size_t)p[at + 4] | (size_t)p[at + 5] << 8) + 1;
        at += 4 + slen;
    }
    return 0;
}

static int bgzf_job_run(bgzf_job *job, const char *name, const sm_io_bgzf_decoder *dec) {
    size_t made = 0;
    if (dec && dec->decode(dec->ctx, job->raw, job->raw_len, job->out + BGZF_HEAD, job->out_cap - BGZF_HEAD, &made) == 1) {
        job->out_len = made;
        return SM_OK;
    }
    sm_inflater *inf = sm_inflater_new(SM_INFLATE_GZIP);
    if (!inf) return sm_io_error(&job->error, SM_ERR_NOMEM, "%s: out of memory", name);
    size_t at = 0;
    job->out_len = 0;
    int rc = SM_OK;
    while (at < job->raw_len && rc == SM_OK) {
        size_t bsize = bgzf_block_size(job->raw + at, job->raw_len - at);
        size_t used = 0, produced = 0;
        int finished = 0;
        uint8_t *out = job->out + BGZF_HEAD + job->out_len;
        if (bsize && sm_inflater_whole(inf, job->raw + at, bsize, out, job->out_cap - BGZF_HEAD - job->out_len,
                                       &produced)) {
            job->out_len += produced;
            at += bsize;
            continue;
        }
        sm_inflater_reset(inf);
        rc = sm_inflater_run(inf, job->raw + at, bsize, &used, job->out + BGZF_HEAD + job->out_len,
                             job->out_cap - BGZF_HEAD - job->out_len, &produced, &finished, &job->error);
        if (rc == SM_OK && !finished)
            rc = sm_io_error(&job->error, SM_ERR_FORMAT, "corrupt compressed data (BGZF block at byte %llu)",
                             (unsigned long long)(job->raw_at + at));
        if (rc != SM_OK) {
            char msg[sizeof job->error.message];
            memcpy(msg, job->error.message, sizeof msg);
            sm_io_error(&job->error, rc, "%s: %s", name, msg);
        }
        job->out_len += produced;
        at += bsize;
    }
    sm_inflater_free(inf);
    return rc;
}

static void *bgzf_worker(void *arg) {
    sm_source *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->stop && (s->jobs_queued == 0 || s->jobs[s->job_next_take].state != 1))
            pthread_cond_wait(&s->cond, &s->lock);
        if (s->stop) break;
        bgzf_job *job = &s->jobs[s->job_next_take];
        s->job_next_take = (s->job_next_take + 1) % s->njobs;
        job->state = 2;
        pthread_mutex_unlock(&s->lock);
        job->status = bgzf_job_run(job, s->name, s->decoder);
        pthread_mutex_lock(&s->lock);
        job->state = 3;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Queues jobs of whole blocks while there is room (caller holds no lock;
   only the consumer makes jobs). Stops at a member that is not BGZF, which
   the stream decoder then takes. Returns 0 or -1 (err filled). */
static int bgzf_make_jobs(sm_source *s, sm_error *err) {
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int room = s->jobs_queued < s->njobs;
        bgzf_job *job = &s->jobs[s->job_tail];
        pthread_mutex_unlock(&s->lock);
        if (!room || s->bgzf_raw_end) return 0;
        /* gather blocks up to a job's bytes of output */
        size_t raw_len = 0, out_len = 0, blocks = 0;
        const uint8_t *p;
        size_t n;
        for (;;) {
            if (raw_peek(s, raw_len + 65536 + 18, &p, &n, err) < 0) return -1;
            if (raw_len == n) break; /* the input ends */
            size_t bsize = bgzf_block_size(p + raw_len, n - raw_len);
            if (bsize == 0) {
                /* not a BGZF block: zero padding, a plain member or garbage,
                   all the stream decoder's to judge */
                s->bgzf_fallback = 1;
                break;
            }
            /* A bad block ends the job before it; it is reported by the
               next call, once the blocks before it are read. */
            if (bsize < 26 || bsize > n - raw_len) {
                if (bsize > n - raw_len && !(s->map || s->reof)) continue; /* read more */
                if (raw_len > 0) break;
                if (bsize < 26)
                    return sm_io_error(err, SM_ERR_FORMAT, "%s: corrupt compressed data (BGZF block at byte %llu)",
                                       s->name, (unsigned long long)s->raw_off),
                           -1;
                return truncated(s, err), -1;
            }
            size_t isize = bgzf_isize(p + raw_len, bsize);
            if (isize > 65536) {
                if (raw_len > 0) break;
                return sm_io_error(err, SM_ERR_FORMAT, "%s: corrupt compressed data (BGZF block at byte %llu)",
                                   s->name, (unsigned long long)s->raw_off),
                       -1;
            }
            if (out_len + isize > s->job_bytes && raw_len > 0) break;
            if (s->decoder && raw_len > 0 && (blocks == s->decoder->max_blocks || raw_len + bsize > s->decoder->max_raw))
                break;
            blocks++;
            raw_len += bsize;
            out_len += isize;
        }
        if (raw_len == 0) {
            s->bgzf_raw_end = 1;
            return 0;
        }
        if (s->map) {
            job->raw = p;
        } else {
            if (job->own_cap < raw_len) {
                uint8_t *q = realloc(job->own, raw_len);
                if (!q) return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name), -1;
                job->own = q;
                job->own_cap = raw_len;
            }
            memcpy(job->own, p, raw_len);
            job->raw = job->own;
        }
        /* every job's buffer of one size (buffers move between jobs and
           the reader), initialised: the reader's vector loops read past
           the data. A buffer the reader handed back is initialised up to
           its capacity (and its padding): only the bytes added are zeroed,
           a new one comes zeroed from calloc (untouched pages stay unmapped) */
        if (job->out_cap < BGZF_HEAD + s->job_bytes || !job->out) {
            size_t want = BGZF_HEAD + s->job_bytes + BGZF_PAD, had = job->out ? job->out_cap : want;
            uint8_t *q = job->out ? realloc(job->out, want) : calloc(1, want);
            if (!q) return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name), -1;
            memset(q + had, 0, want - had);
            job->out = q;
            job->out_cap = BGZF_HEAD + s->job_bytes;
        }
        job->raw_len = raw_len;
        job->raw_at = s->raw_off;
        job->pos = 0;
        job->out_len = 0;
        raw_consume(s, raw_len);
        pthread_mutex_lock(&s->lock);
        job->state = 1;
        s->job_tail = (s->job_tail + 1) % s->njobs;
        s->jobs_queued++;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        if (s->bgzf_fallback) s->bgzf_raw_end = 1;
    }
}

static long bgzf_read(sm_source *s, uint8_t *buf, size_t cap, sm_error *err) {
    size_t made = 0;
    while (made < cap) {
        /* a damaged block is reported after the blocks before it */
        if (s->pend_status == SM_OK && bgzf_make_jobs(s, &s->pend) < 0) {
            s->pend_status = s->pend.code ? s->pend.code : SM_ERR_FORMAT;
            s->bgzf_raw_end = 1;
        }
        pthread_mutex_lock(&s->lock);
        if (s->jobs_queued == 0) {
            pthread_mutex_unlock(&s->lock);
            if (s->pend_status != SM_OK && !s->bgzf_fallback) {
                if (made) break;
                if (err) *err = s->pend;
                return -1;
            }
            if (!s->bgzf_fallback) break;
            long got = stream_fill(s, buf + made, cap - made, err); /* the rest after the BGZF blocks */
            if (got < 0) return made ? (long)made : -1;
            if (got == 0) break;
            made += (size_t)got;
            continue;
        }
        bgzf_job *job = &s->jobs[s->job_head];
        while (job->state != 3) pthread_cond_wait(&s->cond, &s->lock);
        pthread_mutex_unlock(&s->lock);
        if (job->status != SM_OK) {
            if (made) break;
            if (err) *err = job->error;
            return -1;
        }
        size_t n = job->out_len - job->pos < cap - made ? job->out_len - job->pos : cap - made;
        memcpy(buf + made, job->out + BGZF_HEAD + job->pos, n);
        job->pos += n;
        made += n;
        if (job->pos == job->out_len) {
            pthread_mutex_lock(&s->lock);
            job->state = 0;
            s->job_head = (s->job_head + 1) % s->njobs;
            s->jobs_queued--;
            pthread_mutex_unlock(&s->lock);
            break; /* the next job left whole: sm_io_source_swap can take it */
        }
    }
    return (long)made;
}

int sm_io_source_job_next(const sm_source *s) {
    /* (the consumer's own fields: no lock) */
    return s->kind == SRC_BGZF && s->jobs && !s->bgzf_fallback && s->jobs_queued > 0 && s->jobs[s->job_head].pos == 0;
}

int sm_io_source_swap(sm_source *s, uint8_t **buf, size_t *cap, size_t pad, size_t from, size_t *start, size_t *end) {
    size_t keep = *end - from;
    if (s->kind != SRC_BGZF || !s->jobs || keep > SM_IO_SWAP_KEEP || pad > BGZF_PAD || s->pend_status != SM_OK ||
        s->bgzf_fallback)
        return 0;
    /* (a damaged block: bgzf_read reports it after the blocks before it) */
    if (bgzf_make_jobs(s, &s->pend) < 0) {
        s->pend_status = s->pend.code ? s->pend.code : SM_ERR_FORMAT;
        s->bgzf_raw_end = 1;
        return 0;
    }
    pthread_mutex_lock(&s->lock);
    if (s->jobs_queued == 0) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    bgzf_job *job = &s->jobs[s->job_head];
    while (job->state != 3) pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
    if (job->status != SM_OK || job->pos != 0 || job->out_len == 0) return 0;
    uint8_t *old = *buf;
    size_t old_cap = *cap;
    memcpy(job->out + BGZF_HEAD - keep, old + from, keep);
    *buf = job->out;
    *cap = job->out_cap;
    *start = BGZF_HEAD - keep;
    *end = BGZF_HEAD + job->out_len;
    /* the caller's buffer is the job's for a later one (bgzf_make_jobs
       grows it when short) */
    job->out = old;
    job->out_cap = old_cap;
    job->pos = job->out_len;
    pthread_mutex_lock(&s->lock);
    job->state = 0;
    s->job_head = (s->job_head + 1) % s->njobs;
    s->jobs_queued--;
    pthread_mutex_unlock(&s->lock);
    return 1;
}

/* -------------------------------------------------------------- opening */

/* Maps a regular file read-only with at least 64 zero bytes readable past
   its end (the reader's vector loads). NULL when it cannot. */
static const uint8_t *map_file(int fd, size_t len, size_t *size) {
    long page = sysconf(_SC_PAGESIZE);
    size_t pg = page > 0 ? (size_t)page : 4096;
    size_t whole = (len + 64 + pg - 1) / pg * pg;
    /* a private anonymous region, then the file over its start */
    void *region = mmap(NULL, whole, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return NULL;
    if (len > 0) {
        size_t file_pages = (len + pg - 1) / pg * pg;
        void *f = mmap(region, file_pages < whole ? file_pages : whole, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
        if (f == MAP_FAILED) {
            munmap(region, whole);
            return NULL;
        }
#ifdef MADV_SEQUENTIAL
        (void)madvise(region, len, MADV_SEQUENTIAL);
#endif
    }
    *size = whole;
    return region;
}

static int start_threads(sm_source *s, void *(*fn)(void *), unsigned n, sm_error *err) {
    s->pool = calloc(n, sizeof *s->pool);
    if (!s->pool) return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name);
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&s->pool[i], NULL, fn, s) != 0)
            return sm_io_error(err, SM_ERR_NOMEM, "%s: cannot start a decompression thread", s->name);
        s->pool_n = i + 1;
    }
    return SM_OK;
}

/* What the data is, from its first bytes, and the threads that decode it.
   Takes s (closed on failure). */
static int source_start(sm_source *s, sm_source **source, sm_error *err) {
    const uint8_t *p;
    size_t n;
    int rc = raw_peek(s, 18, &p, &n, err) < 0 ? err->code : SM_OK;
    s->kind = SRC_PLAIN;
    if (rc == SM_OK && n >= 2 && p[0] == 0x1f && p[1] == 0x8b) s->kind = bgzf_block_size(p, n) ? SRC_BGZF : SRC_GZIP;
    else if (rc == SM_OK && n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0 && sm_inflater_has(SM_INFLATE_ZSTD))
        s->kind = SRC_ZSTD;
    if (rc == SM_OK && s->kind != SRC_PLAIN) {
        s->inf = sm_inflater_new(s->kind == SRC_ZSTD ? SM_INFLATE_ZSTD : SM_INFLATE_GZIP);
        if (!s->inf) rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name);
    }
    int threaded = s->kind == SRC_BGZF ? s->threads > 1 || s->decoder : s->kind != SRC_PLAIN && s->threads > 1;
    if (rc == SM_OK && s->kind == SRC_BGZF && !threaded) s->kind = SRC_GZIP; /* inline: blocks are members */
    if (rc == SM_OK && threaded) {
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->cond, NULL);
        s->sync_init = 1;
        if (s->kind == SRC_BGZF) {
            /* a decoder's jobs go to it from one thread, ahead of the reader */
            unsigned workers = s->decoder ? 1 : s->threads;
            s->njobs = 2 * workers + 2;
            s->jobs = calloc(s->njobs, sizeof *s->jobs);
            rc = s->jobs ? start_threads(s, bgzf_worker, workers, err)
                         : sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name);
        } else {
            for (unsigned i = 0; i < RING_SLOTS && rc == SM_OK; i++)
                if (!(s->ring[i].data = malloc(RING_BYTES))) rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name);
            if (rc == SM_OK) rc = start_threads(s, producer_main, 1, err);
        }
    }
    if (rc != SM_OK) {
        sm_io_source_close(s);
        return rc;
    }
    *source = s;
    return SM_OK;
}

int sm_io_source_open(const char *path, unsigned threads, sm_source **source, sm_error *err) {
    return sm_io_source_open_decoder(path, threads, NULL, source, err);
}

int sm_io_source_open_decoder(const char *path, unsigned threads, const sm_io_bgzf_decoder *decoder,
                              sm_source **source, sm_error *err) {
    *source = NULL;
    int from_stdin = strcmp(path, "-") == 0;
    const char *shown = from_stdin ? "stdin" : path;
    /* dup so that closing the source leaves the process's stdin open */
    int fd = from_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sm_io_error(err, SM_ERR_IO, "%s: %s", shown, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sm_io_error(err, SM_ERR_IO, "%s: %s", shown, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return sm_io_error(err, SM_ERR_IO, "%s: %s", shown, strerror(EISDIR));
    }
    sm_source *s = calloc(1, sizeof *s);
    if (s) s->name = malloc(strlen(shown) + 1);
    if (!s || !s->name) {
        if (s) free(s);
        close(fd);
        return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
    }
    strcpy(s->name, shown);
    s->fd = fd;
    s->threads = threads ? threads : 1;
    s->job_bytes = BGZF_JOB_BYTES;
    if (decoder && decoder->decode && decoder->job_bytes && decoder->max_blocks && decoder->max_raw) {
        s->decoder_copy = *decoder;
        s->decoder = &s->decoder_copy;
        s->job_bytes = decoder->job_bytes;
    }
    if (S_ISREG(st.st_mode)) {
        s->total = (uint64_t)st.st_size;
        /* Empty "regular" files may still give bytes to read() (/proc): only
           files with a size are mapped. */
        if (st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX - 4096)
            s->map = map_file(fd, (size_t)st.st_size, &s->map_size);
        if (s->map) s->map_len = (size_t)st.st_size;
#ifdef POSIX_FADV_SEQUENTIAL
        else (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    }
    return source_start(s, source, err);
}

int sm_io_source_open_fn(const char *name, sm_io_read_fn fn, void *ctx, sm_source **source, sm_error *err) {
    *source = NULL;
    sm_source *s = calloc(1, sizeof *s);
    if (s) s->name = malloc(strlen(name) + 1);
    if (!s || !s->name) {
        free(s);
        return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", name);
    }
    strcpy(s->name, name);
    s->fd = -1;
    s->read_fn = fn;
    s->read_ctx = ctx;
    s->threads = 1;
    s->job_bytes = BGZF_JOB_BYTES;
    return source_start(s, source, err);
}

long sm_io_source_read(sm_source *s, void *buf, size_t cap, sm_error *err) {
    switch (s->kind) {
    case SRC_PLAIN: {
        const uint8_t *p;
        size_t n;
        if (raw_peek(s, cap, &p, &n, err) < 0) return -1;
        if (n > cap) n = cap;
        memcpy(buf, p, n);
        raw_consume(s, n);
        return (long)n;
    }
    case SRC_BGZF: return bgzf_read(s, buf, cap, err);
    default: return s->pool_n ? ring_read(s, buf, cap, err) : stream_fill(s, buf, cap, err);
    }
}

int sm_io_source_map(sm_source *s, const uint8_t **data, size_t *len) {
    if (s->kind != SRC_PLAIN || !s->map || s->map_pos != 0) return 0;
    *data = s->map;
    *len = s->map_len;
    return 1;
}

void sm_io_source_mapped_done(sm_source *s, size_t consumed) {
    if (s->kind != SRC_PLAIN || !s->map) return;
    s->map_pos = consumed;
    s->raw_off = consumed;
    atomic_store_explicit(&s->done, consumed, memory_order_relaxed);
}

const char *sm_io_source_name(const sm_source *s) { return s->name; }

void sm_io_source_progress(const sm_source *s, uint64_t *done, uint64_t *total) {
    if (done) *done = atomic_load_explicit(&((sm_source *)s)->done, memory_order_relaxed);
    if (total) *total = s->total;
}

void sm_io_source_close(sm_source *s) {
    if (!s) return;
    if (s->sync_init) {
        pthread_mutex_lock(&s->lock);
        s->stop = 1;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        /* a producer blocked on a full ring has seen stop; one inflating finishes its buffer */
        for (unsigned i = 0; i < s->pool_n; i++) pthread_join(s->pool[i], NULL);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->cond);
    }
    free(s->pool);
    for (unsigned i = 0; i < RING_SLOTS; i++) free(s->ring[i].data);
    for (unsigned i = 0; i < s->njobs; i++) {
        free(s->jobs[i].own);
        free(s->jobs[i].out);
    }
    free(s->jobs);
    sm_inflater_free(s->inf);
    if (s->map) munmap((void *)s->map, s->map_size);
    free(s->rbuf);
    if (s->fd >= 0) close(s->fd);
    free(s->name);
    free(s);
}


/* ----------------------------------------------------------- byte ranges */

int sm_io_source_rangeable(const sm_source *s) {
    if (!s->map || s->map_pos != 0) return 0;
    if (s->kind == SRC_PLAIN) return 1;
    /* BGZF read on the caller's thread is decoded as gzip members */
    if (s->kind == SRC_BGZF || (s->kind == SRC_GZIP && bgzf_block_size(s->map, s->map_len))) return 2;
    return 0;
}

uint64_t sm_io_source_size(const sm_source *s) { return s->total; }

/* The size of a plausible BGZF block at file offset at (0: none): a header
   with its BC subfield, at least an empty block's size, inside the file. */
static size_t bgzf_block_in_file(const sm_source *s, uint64_t at) {
    if (at >= s->map_len) return 0;
    size_t n = s->map_len - (size_t)at;
    size_t bsize = bgzf_block_size(s->map + at, n);
    return bsize >= 26 && bsize <= n ? bsize : 0;
}

/* A block boundary: a block starts at `at` and its size chain lands on
   three more blocks or on the file's end. Compressed bytes could mimic one
   header by chance (ten fixed bytes), never a chain. */
static int bgzf_boundary(const sm_source *s, uint64_t at) {
    for (int hop = 0; hop < 4; hop++) {
        if (at == s->map_len) return hop > 0;
        size_t bsize = bgzf_block_in_file(s, at);
        if (!bsize) return 0;
        at += bsize;
    }
    return 1;
}

int sm_io_bgzf_boundary_at_or_after(const sm_source *s, uint64_t offset, uint64_t *block, sm_error *err) {
    if (offset == 0 || offset >= s->map_len) {
        *block = offset == 0 ? 0 : s->map_len;
        return SM_OK;
    }
    /* a block is at most 64 KiB: the next boundary is close */
    for (uint64_t at = offset; at < s->map_len; at++) {
        const uint8_t *p = memchr(s->map + at, 0x1f, s->map_len - (size_t)at);
        if (!p) break;
        at = (uint64_t)(p - s->map);
        if (bgzf_boundary(s, at)) {
            *block = at;
            return SM_OK;
        }
        if (at - offset > ((uint64_t)1 << 20))
            return sm_io_error(err, SM_ERR_FORMAT, "%s: no BGZF block starts within 1 MiB after byte %llu", s->name,
                               (unsigned long long)offset);
    }
    *block = s->map_len;
    return SM_OK;
}

int sm_io_source_limit(sm_source *s, uint64_t begin, uint64_t end, sm_error *err) {
    if (sm_io_source_rangeable(s) != 2 || begin > end || end > s->map_len)
        return sm_io_error(err, SM_ERR_INVALID, "%s: not a byte range of a BGZF file", s->name);
    s->full_len = s->map_len;
    s->map_pos = (size_t)begin;
    s->raw_off = begin;
    s->map_len = (size_t)end;
    s->limited = 1;
    return SM_OK;
}

void sm_io_source_extend(sm_source *s) {
    if (!s->limited) return;
    s->limited = 0;
    s->map_len = s->full_len;
    /* reading stopped as if at the end of the input: go on */
    s->ended = 0;
    s->bgzf_raw_end = 0;
    /* past a range's end the reader wants only its last record's rest: a
       decoder's large jobs, queued ahead, would inflate much it never reads */
    if (s->job_bytes > BGZF_JOB_BYTES) s->job_bytes = BGZF_JOB_BYTES;
}

int sm_io_bgzf_data_before(const sm_source *s, uint64_t block, size_t want, uint8_t **data, size_t *len,
                           int *from_start, sm_error *err) {
    *data = NULL;
    *len = 0;
    *from_start = block == 0;
    size_t size = s->limited ? s->full_len : s->map_len;
    if (block > size) return sm_io_error(err, SM_ERR_INVALID, "%s: no block before byte %llu", s->name,
                                         (unsigned long long)block);
    uint8_t *out = NULL, *one = malloc(65536);
    size_t have = 0;
    sm_inflater *inf = sm_inflater_new(SM_INFLATE_GZIP);
    int rc = one && inf ? SM_OK : sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name);
    /* block by block backwards until a line end is among the bytes, or want
       bytes are in, or the file's start (empty blocks are skipped) */
    while (rc == SM_OK && block > 0 && have < want && !(have && (memchr(out, '\n', have) || memchr(out, '\r', have)))) {
        uint64_t lo = block > 65536 + 64 ? block - 65536 - 64 : 0, at = lo;
        size_t bsize = 0;
        for (; at < block; at++) {
            bsize = bgzf_block_size(s->map + at, size - (size_t)at);
            if (bsize >= 26 && at + bsize == block) break;
        }
        if (at == block) {
            rc = sm_io_error(err, SM_ERR_FORMAT, "%s: no BGZF block ends at byte %llu", s->name,
                             (unsigned long long)block);
            break;
        }
        size_t used = 0, produced = 0;
        int finished = 0;
        sm_error e;
        sm_inflater_reset(inf);
        if (sm_inflater_run(inf, s->map + at, bsize, &used, one, 65536, &produced, &finished, &e) != SM_OK ||
            !finished) {
            rc = sm_io_error(err, SM_ERR_FORMAT, "%s: corrupt compressed data (BGZF block at byte %llu)", s->name,
                             (unsigned long long)at);
            break;
        }
        uint8_t *grown = malloc(have + produced + 1);
        if (!grown) {
            rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", s->name);
            break;
        }
        memcpy(grown, one, produced);
        if (have) memcpy(grown + produced, out, have);
        free(out);
        out = grown;
        have += produced;
        block = at;
    }
    *from_start = block == 0;
    free(one);
    sm_inflater_free(inf);
    if (rc != SM_OK) {
        free(out);
        return rc;
    }
    *data = out;
    *len = have;
    return SM_OK;
}

/* Everything here that names what the source decompresses: keep it in step. */
#ifdef SM_HAVE_ZSTD
const char sm_io_source_reads[] = "plain, gzip/BGZF and zstd files";
#else
const char sm_io_source_reads[] = "plain and gzip/BGZF files";
#endif

const char *sm_reader_compressions(void) { return sm_io_source_reads; }

const char *sm_reader_gzip_library(void) { return sm_inflater_gzip_library(); }

int sm_io_check_compression(const char *shown, const uint8_t *head, size_t n, sm_error *err) {
    static const struct {
        const char *magic;
        size_t len;
        const char *name, *tool;
    } formats[] = {
        {"\x1f\x8b", 2, "gzip-compressed twice", "gzip"}, /* the source took off one layer */
        {"BZh", 3, "bzip2-compressed", "bzip2"},
        {"\xfd" "7zXZ\0", 6, "xz-compressed", "xz"},
        {"\x28\xb5\x2f\xfd", 4, "zstd-compressed", "zstd"}, /* a build without libzstd, or zstd twice */
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (n >= formats[i].len && memcmp(head, formats[i].magic, formats[i].len) == 0)
            return sm_io_error(err, SM_ERR_FORMAT,
                               "%s: %s; seqmatch reads %s (decompress it first, e.g. %s -dc %s | seqmatch ...)",
                               shown, formats[i].name, sm_io_source_reads, formats[i].tool, shown);
    return SM_OK;
}
