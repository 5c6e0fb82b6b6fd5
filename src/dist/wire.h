/* The result stream's encoding (private to src/dist): one byte naming each
 * message, its length, then its fields as LEB128 numbers and
 * length-prefixed bytes (a message is built whole, then framed).
 * Shares and the merge run the same build, so nothing is versioned past the
 * shard file's magic. */
#ifndef SM_DIST_WIRE_H
#define SM_DIST_WIRE_H

#include <string.h>

#include "dist/dist.h"

/* Messages of a share's stream, in the order they come. */
enum {
    MSG_UNIT = 'U',       /* target, whole, begin, end */
    MSG_RECORD = 'R',     /* flags (RECORD_*), then the name or the line */
    MSG_HIT = 'h',        /* start, length, pattern, errors, reverse, [text] */
    MSG_RUN = 'b',        /* side, first_end, last_end, best_end, best_start, pattern, distance, reverse, [text] */
    MSG_LEFT_KEYS = 'k',  /* n, output ids */
    MSG_PART_END = 'E',   /* nominal length, cut */
    MSG_COUNTS = 'C',     /* n, (pattern step, count) pairs */
    MSG_STATE = 'S',      /* dfa: the state after the part, from the input's start */
    MSG_MAP = 'M',        /* dfa: the part's state map, every state's image + 1 (0: no state) */
    MSG_UNIT_END = 'Z',   /* empty, start_kind, end_kind, first_record, next_record + 1, lines, found */
    MSG_TRUNCATED = 'T',  /* the share stopped at --max-hits after the last hit: nominal known, nominal, cut */
    MSG_END = 'X',        /* the stream is complete */
    MSG_NEXT = 'N'        /* after an end: the next share's stream follows (a share read by several readers) */
};

enum { RECORD_CONTINUED = 1, RECORD_LINE = 2 };

static inline int wire_reserve(sm_dist_out *o, size_t n) {
    if (o->failed) return -1;
    if (o->cap - o->len >= n) return 0;
    /* a stream empties its buffer; a message being built grows */
    if (o->flush && sm_dist_out_flush(o) != 0) return -1;
    if (o->cap - o->len >= n) return 0;
    size_t want = o->len + n > 2 * o->cap ? o->len + n : 2 * o->cap;
    uint8_t *p = realloc(o->buf, want);
    if (!p) {
        o->failed = 1;
        return -1;
    }
    o->buf = p;
    o->cap = want;
    return 0;
}

static inline void wire_u8(sm_dist_out *o, uint8_t v) {
    if (wire_reserve(o, 1) == 0) o->buf[o->len++] = v;
}

static inline void wire_num(sm_dist_out *o, uint64_t v) {
    if (wire_reserve(o, 10) != 0) return;
    uint8_t *p = o->buf + o->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    o->len = (size_t)(p - o->buf);
}

static inline void wire_bytes(sm_dist_out *o, const void *data, size_t n) {
    wire_num(o, n);
    if (n && wire_reserve(o, n) == 0) {
        memcpy(o->buf + o->len, data, n);
        o->len += n;
    }
}

/* A message without fields (an end, the next share's start). */
static inline void wire_mark(sm_dist_out *o, uint8_t tag) {
    wire_u8(o, tag);
    wire_num(o, 0);
}

/* A message: built in msg (emptied), then framed into o. */
static inline void wire_send(sm_dist_out *o, uint8_t tag, sm_dist_out *msg) {
    if (msg->failed) o->failed = 1;
    wire_u8(o, tag);
    wire_bytes(o, msg->buf, msg->len);
    msg->len = 0;
}

/* Decoding from a complete message in [p, end): 0, or -1 when it is cut short. */
typedef struct {
    const uint8_t *p, *end;
    int bad;
} wire_in;

static inline uint64_t wire_get_num(wire_in *in) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (in->p == in->end) {
            in->bad = 1;
            return 0;
        }
        uint8_t b = *in->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    in->bad = 1;
    return 0;
}

static inline const uint8_t *wire_get_bytes(wire_in *in, size_t *n) {
    uint64_t len = wire_get_num(in);
    if (in->bad || len > (uint64_t)(in->end - in->p)) {
        in->bad = 1;
        *n = 0;
        return NULL;
    }
    const uint8_t *p = in->p;
    in->p += len;
    *n = (size_t)len;
    return p;
}

#endif /* SM_DIST_WIRE_H */
