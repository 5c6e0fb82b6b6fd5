/* See range_check.h. */
#include "range_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void range_recs_free(range_recs *r) {
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].name);
        free(r->v[i].seq);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

static range_rec *recs_add(range_recs *r, const char *name) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
    }
    range_rec *x = &r->v[r->n++];
    memset(x, 0, sizeof *x);
    x->name = strdup(name);
    return x;
}

static void rec_put(range_rec *x, const uint8_t *p, size_t n) {
    if (x->len + n > x->cap) {
        x->cap = (x->len + n) * 2 + 16;
        x->seq = realloc(x->seq, x->cap);
    }
    if (n) memcpy(x->seq + x->len, p, n);
    x->len += n;
}

static uint8_t piece[1 << 16];

int range_read_whole(const char *path, sm_input_format format, range_recs *out) {
    sm_reader *rd;
    sm_error err;
    if (sm_reader_open(path, format, &rd, &err) != SM_OK) return -1;
    const char *name;
    int rc;
    while ((rc = sm_reader_next_record(rd, &name, &err)) > 0) {
        range_rec *x = recs_add(out, name);
        size_t l;
        while ((rc = sm_reader_read_into(rd, piece, sizeof piece - 64, &l, &err)) > 0) rec_put(x, piece, l);
        if (rc < 0) break;
    }
    sm_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

/* A cut record's bytes read past its range end, to check once all parts are in. */
typedef struct {
    size_t record, at;
    uint8_t *bytes;
    size_t len;
} extra;

int range_read_split(const char *path, sm_input_format format, unsigned threads, const uint64_t *cuts,
                     size_t ncuts, range_recs *out, char *why, size_t whysize) {
    extra extras[64];
    size_t nextras = 0;
    int have_prev = 0, status = 0;
    sm_range_info prev;
    memset(&prev, 0, sizeof prev);
    uint64_t lines_before = 0;
    size_t pathlen = strlen(path);
    for (size_t u = 0; u + 1 < ncuts && status == 0; u++) {
        if (cuts[u] == cuts[u + 1]) continue; /* no range is empty */
        sm_reader *rd;
        sm_error err;
        if (sm_reader_open_range(path, format, threads, cuts[u], cuts[u + 1], &rd, &err) != SM_OK) {
            snprintf(why, whysize, "range %zu open: %.300s", u, err.message);
            return -1;
        }
        const char *name;
        int rc;
        while ((rc = sm_reader_next_record(rd, &name, &err)) > 0) {
            range_rec *x;
            if (sm_reader_record_continued(rd)) {
                x = out->n ? &out->v[out->n - 1] : NULL;
            } else if (format == SM_INPUT_LINES) {
                /* PATH:N, N counted from the range's first line */
                unsigned long long n = strtoull(name + pathlen + 1, NULL, 10);
                char full[4096];
                snprintf(full, sizeof full, "%s:%llu", path, n + (unsigned long long)lines_before);
                x = recs_add(out, full);
            } else {
                x = recs_add(out, name);
            }
            size_t l, got = 0;
            while ((rc = sm_reader_read_into(rd, piece, sizeof piece - 64, &l, &err)) > 0) {
                if (!x) {
                    snprintf(why, whysize, "range %zu: sequence before any record", u);
                    sm_reader_close(rd);
                    return -1;
                }
                rec_put(x, piece, l);
                got += l;
            }
            if (rc < 0) break;
            if (sm_reader_record_cut(rd) && x && nextras < 64) {
                extra *e = &extras[nextras++];
                e->record = (size_t)(x - out->v);
                e->at = x->len;
                e->bytes = NULL;
                e->len = 0;
                while ((rc = sm_reader_read_extra(rd, piece, sizeof piece - 64, &l, &err)) > 0) {
                    e->bytes = realloc(e->bytes, e->len + l);
                    memcpy(e->bytes + e->len, piece, l);
                    e->len += l;
                }
                if (rc < 0) break;
            }
            (void)got;
        }
        if (rc < 0) {
            snprintf(why, whysize, "range %zu [%llu, %llu): %.300s", u, (unsigned long long)cuts[u],
                     (unsigned long long)cuts[u + 1], err.message);
            sm_reader_close(rd);
            status = -1;
            break;
        }
        sm_range_info info;
        sm_reader_range_info(rd, &info);
        sm_reader_close(rd);
        if (info.empty) continue;
        if (have_prev) {
            int agree = 1;
            if (format == SM_INPUT_FASTA && info.start_kind != SM_RANGE_LINE_START &&
                info.start_kind != prev.end_kind)
                agree = 0;
            if ((format == SM_INPUT_FASTQ || format == SM_INPUT_LINES) && prev.next_record != info.first_record)
                agree = 0;
            if (!agree) {
                snprintf(why, whysize, "ranges before and after %llu disagree", (unsigned long long)cuts[u]);
                status = 1;
            }
        }
        lines_before += info.lines;
        prev = info;
        have_prev = 1;
    }
    for (size_t i = 0; i < nextras; i++) {
        extra *e = &extras[i];
        if (status == 0) {
            const range_rec *x = &out->v[e->record];
            if (e->at + e->len != x->len || (e->len && memcmp(x->seq + e->at, e->bytes, e->len) != 0)) {
                snprintf(why, whysize, "bytes past the cut of record %zu at %zu differ", e->record, e->at);
                status = -1;
            }
        }
        free(e->bytes);
    }
    return status;
}

int range_same(const range_recs *a, const range_recs *b, char *why, size_t whysize) {
    if (a->n != b->n) {
        snprintf(why, whysize, "%zu records, expected %zu", b->n, a->n);
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->v[i].name, b->v[i].name) != 0) {
            snprintf(why, whysize, "record %zu named '%s', expected '%s'", i, b->v[i].name, a->v[i].name);
            return 0;
        }
        if (a->v[i].len != b->v[i].len || (a->v[i].len && memcmp(a->v[i].seq, b->v[i].seq, a->v[i].len) != 0)) {
            snprintf(why, whysize, "record %zu ('%s'): %zu bytes, expected %zu", i, a->v[i].name, b->v[i].len,
                     a->v[i].len);
            return 0;
        }
    }
    return 1;
}

int range_compare(const char *path, sm_input_format format, unsigned threads, const uint64_t *cuts, size_t ncuts,
                  const range_recs *whole, char *why, size_t whysize) {
    range_recs parts = {0};
    why[0] = 0;
    int rc = range_read_split(path, format, threads, cuts, ncuts, &parts, why, whysize);
    int result = rc != 0 ? RANGE_REFUSED : range_same(whole, &parts, why, whysize) ? RANGE_SAME : RANGE_WRONG;
    range_recs_free(&parts);
    return result;
}

size_t range_bgzf_block(const uint8_t *data, size_t n, uint8_t *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    static const uint8_t head[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0, 0};
    memcpy(out, head, 18);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n;
    z.next_out = out + 18;
    z.avail_out = 70000;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
        deflateEnd(&z);
        return 0;
    }
    size_t clen = 70000 - z.avail_out;
    deflateEnd(&z);
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n);
    uint8_t *t = out + 18 + clen;
    for (int i = 0; i < 4; i++) t[i] = (uint8_t)(crc >> (8 * i)), t[4 + i] = (uint8_t)(n >> (8 * i));
    size_t bsize = 18 + clen + 8;
    out[16] = (uint8_t)((bsize - 1) & 0xff);
    out[17] = (uint8_t)((bsize - 1) >> 8);
    return bsize;
}

size_t range_bgzf_bound(size_t n) { return n + (2 * n + 2) * 64 + RANGE_BGZF_BLOCK_MAX; }

size_t range_bgzf_of(tu_rng *rng, const uint8_t *data, size_t n, size_t max_block, uint8_t *out) {
    size_t at = 0, len = 0, b;
    while (at < n) {
        b = 1 + tu_rng_below(rng, (uint32_t)max_block);
        if (b > n - at) b = n - at;
        size_t got = range_bgzf_block(data + at, b, out + len);
        if (!got) return 0;
        len += got;
        at += b;
        if (tu_rng_chance(rng, 10)) {
            if (!(got = range_bgzf_block(data, 0, out + len))) return 0;
            len += got;
        }
    }
    if (!(b = range_bgzf_block(data, 0, out + len))) return 0;
    return len + b;
}
