/* A DFA over a reader's input (include/seqmatch_reader.h,
 * sm_dfa_scan_reader): the input loop of seqmatch dfa. The bytes are
 * gathered into blocks of up to 64 MiB (bounded memory for any input) and
 * each block is run on the matcher's threads; a large piece of the reader
 * (a mapped file's) is run where it lies. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_reader.h"

/* Input is simulated in blocks of this size. */
#define DFA_BLOCK_BYTES ((size_t)64 << 20)
/* Pieces at least this long are run in place (no copy into the block). */
#define DFA_DIRECT_BYTES ((size_t)4 << 20)

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(sm_error *err, int code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

typedef struct {
    const sm_dfa_matcher *matcher;
    const sm_dfa_reader_options *o;
    uint8_t *block;
    size_t block_len;
    uint32_t state;
    uint64_t offset;       /* bytes of the current input simulated before the block */
} dfa_scan;

static void describe_byte(uint8_t c, char *buf, size_t size) {
    if (c >= 0x21 && c < 0x7F) snprintf(buf, size, "byte 0x%02X ('%c')", c, c);
    else snprintf(buf, size, "byte 0x%02X", c);
}

/* Simulates the buffered block (record: named in messages, or NULL). */
static int flush_block(dfa_scan *r, const char *record, sm_error *err) {
    if (r->block_len == 0 || r->state == SM_DFA_NO_STATE) return SM_OK;
    sm_error e;
    memset(&e, 0, sizeof e);
    uint32_t next = r->state;
    int rc = sm_dfa_run_parallel(r->matcher, r->state, r->block, r->block_len, r->o->parallel, &next, &e);
    if (rc != SM_OK) return fail(err, rc, "%s: %s", r->o->name, e.message);
    if (next == SM_DFA_NO_STATE) {
        size_t at = sm_dfa_find_unknown(r->matcher, r->block, r->block_len);
        char what[32];
        describe_byte(r->block[at], what, sizeof what);
        if (record)
            return fail(err, SM_ERR_PATTERN,
                        "%s: record '%s': %s at sequence offset %llu is not in the DFA's alphabet (--skip-unknown "
                        "ignores such bytes)",
                        r->o->name, record, what, (unsigned long long)(r->offset + at));
        return fail(err, SM_ERR_PATTERN,
                    "%s: %s at offset %llu is not in the DFA's alphabet (--skip-unknown ignores such bytes)",
                    r->o->name, what, (unsigned long long)(r->offset + at));
    }
    r->state = next;
    r->offset += r->block_len;
    r->block_len = 0;
    return SM_OK;
}

/* The rest of the reader's current record into the blocks. */
static int scan_record(dfa_scan *r, sm_reader *reader, const char *record, sm_error *err) {
    const uint8_t *data;
    size_t len;
    int got, rc = SM_OK;
    while ((got = sm_reader_read(reader, &data, &len, err)) > 0) {
        if (r->block_len == 0 && len >= DFA_DIRECT_BYTES) {
            /* a large piece (a mapped file's) is run where it lies, not copied */
            uint8_t *keep = r->block;
            r->block = (uint8_t *)data;
            r->block_len = len;
            rc = flush_block(r, record, err);
            r->block = keep;
            r->block_len = 0;
            if (rc != SM_OK) return rc;
            continue;
        }
        while (len > 0) {
            size_t take = DFA_BLOCK_BYTES - r->block_len < len ? DFA_BLOCK_BYTES - r->block_len : len;
            memcpy(r->block + r->block_len, data, take);
            r->block_len += take;
            data += take;
            len -= take;
            if (r->block_len == DFA_BLOCK_BYTES && (rc = flush_block(r, record, err)) != SM_OK) return rc;
        }
    }
    if (got < 0) return err && err->code ? err->code : SM_ERR_IO;
    return flush_block(r, record, err);
}

int sm_dfa_scan_reader(const sm_dfa *dfa, const sm_dfa_matcher *matcher, sm_reader *reader,
                       const sm_dfa_reader_options *opts, sm_error *err) {
    dfa_scan r;
    memset(&r, 0, sizeof r);
    r.matcher = matcher;
    r.o = opts;
    if (!(r.block = malloc(DFA_BLOCK_BYTES)))
        return fail(err, SM_ERR_NOMEM, "out of memory for a %zu MiB input block", DFA_BLOCK_BYTES >> 20);
    r.state = sm_dfa_start(dfa);
    char *record = NULL;
    int rc = SM_OK;
    for (;;) {
        const char *name = NULL;
        int got = sm_reader_next_record(reader, &name, err);
        if (got < 0) {
            rc = err && err->code ? err->code : SM_ERR_IO;
            break;
        }
        if (got == 0) break;
        free(record);
        if (!(record = strdup(name ? name : ""))) {
            rc = fail(err, SM_ERR_NOMEM, "out of memory");
            break;
        }
        if (opts->per_record) r.state = sm_dfa_start(dfa);
        /* offsets in messages are within the record (dna) */
        if (opts->per_record || opts->dna) r.offset = 0;
        if ((rc = scan_record(&r, reader, opts->dna ? record : NULL, err)) != SM_OK) break;
        if (opts->per_record && opts->on_result(opts->ctx, record, r.state) != 0) {
            rc = SM_ERR_TERMINATED;
            break;
        }
    }
    if (rc == SM_OK && !opts->per_record && opts->on_result(opts->ctx, NULL, r.state) != 0) rc = SM_ERR_TERMINATED;
    free(record);
    free(r.block);
    return rc;
}
