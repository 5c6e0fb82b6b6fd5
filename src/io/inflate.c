/* Decoders behind inflate.h. */
#include "io/inflate.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifdef SM_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
#ifdef SM_HAVE_ZSTD
#include <zstd.h>
#endif

#include "io/source.h"

struct sm_inflater {
    sm_inflate_kind kind;
#ifdef SM_HAVE_ISAL
    struct inflate_state isal;
#else
    z_stream z;
#endif
#ifdef SM_HAVE_ZSTD
    ZSTD_DCtx *zstd;
#endif
};

int sm_inflater_has(sm_inflate_kind kind) {
#ifdef SM_HAVE_ZSTD
    return kind == SM_INFLATE_GZIP || kind == SM_INFLATE_ZSTD;
#else
    return kind == SM_INFLATE_GZIP;
#endif
}

const char *sm_inflater_gzip_library(void) {
#ifdef SM_HAVE_ISAL
    return "isa-l";
#else
    return "zlib";
#endif
}

sm_inflater *sm_inflater_new(sm_inflate_kind kind) {
    if (!sm_inflater_has(kind)) return NULL;
    sm_inflater *inf = calloc(1, sizeof *inf);
    if (!inf) return NULL;
    inf->kind = kind;
#ifdef SM_HAVE_ZSTD
    if (kind == SM_INFLATE_ZSTD) {
        inf->zstd = ZSTD_createDCtx();
        if (!inf->zstd) {
            free(inf);
            return NULL;
        }
        return inf;
    }
#endif
#ifndef SM_HAVE_ISAL
    if (inflateInit2(&inf->z, 16 + MAX_WBITS) != Z_OK) {
        free(inf);
        return NULL;
    }
#endif
    sm_inflater_reset(inf);
    return inf;
}

void sm_inflater_free(sm_inflater *inf) {
    if (!inf) return;
#ifdef SM_HAVE_ZSTD
    if (inf->zstd) ZSTD_freeDCtx(inf->zstd);
#endif
#ifndef SM_HAVE_ISAL
    if (inf->kind == SM_INFLATE_GZIP) inflateEnd(&inf->z);
#endif
    free(inf);
}

void sm_inflater_reset(sm_inflater *inf) {
#ifdef SM_HAVE_ZSTD
    if (inf->kind == SM_INFLATE_ZSTD) {
        ZSTD_DCtx_reset(inf->zstd, ZSTD_reset_session_only);
        return;
    }
#endif
#ifdef SM_HAVE_ISAL
    isal_inflate_init(&inf->isal);
    inf->isal.crc_flag = ISAL_GZIP;
#else
    inflateReset(&inf->z);
#endif
}

#ifdef SM_HAVE_ISAL
/* ISA-L's codes in zlib's words, which users and the tests know. */
static const char *isal_message(int rc) {
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid block type";
    case ISAL_INVALID_SYMBOL: return "invalid code";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "unknown error";
    }
}
#endif

int sm_inflater_whole(sm_inflater *inf, const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *produced) {
    *produced = 0;
#ifdef SM_HAVE_ISAL
    if (inf->kind != SM_INFLATE_GZIP || n > UINT32_MAX || cap > UINT32_MAX) return 0;
    /* decoded straight into out: the streaming call goes through a buffer
       of its own and copies every byte out of it */
    struct inflate_state *st = &inf->isal;
    isal_inflate_init(st);
    st->crc_flag = ISAL_GZIP;
    st->next_in = (uint8_t *)in;
    st->avail_in = (uint32_t)n;
    st->next_out = out;
    st->avail_out = (uint32_t)cap;
    /* (every input byte the member's: bytes after it are the stream decoder's to judge) */
    if (isal_inflate_stateless(st) != ISAL_DECOMP_OK || st->block_state != ISAL_BLOCK_FINISH || st->avail_in != 0)
        return 0;
    *produced = cap - st->avail_out;
    return 1;
#else
    (void)inf, (void)in, (void)n, (void)out, (void)cap;
    return 0;
#endif
}

int sm_inflater_run(sm_inflater *inf, const uint8_t *in, size_t n, size_t *used, uint8_t *out, size_t cap,
                    size_t *produced, int *finished, sm_error *err) {
    *used = *produced = 0;
    *finished = 0;
#ifdef SM_HAVE_ZSTD
    if (inf->kind == SM_INFLATE_ZSTD) {
        ZSTD_inBuffer ib = {in, n, 0};
        ZSTD_outBuffer ob = {out, cap, 0};
        size_t rc = ZSTD_decompressStream(inf->zstd, &ob, &ib);
        *used = ib.pos;
        *produced = ob.pos;
        if (ZSTD_isError(rc))
            return sm_io_error(err, SM_ERR_FORMAT, "corrupt compressed data (%s)", ZSTD_getErrorName(rc));
        *finished = rc == 0;
        return SM_OK;
    }
#endif
#ifdef SM_HAVE_ISAL
    /* ISA-L counts in 32 bits */
    struct inflate_state *st = &inf->isal;
    st->next_in = (uint8_t *)in;
    st->avail_in = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    st->next_out = out;
    st->avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    uint32_t in0 = st->avail_in, out0 = st->avail_out;
    int rc = isal_inflate(st);
    *used = in0 - st->avail_in;
    *produced = out0 - st->avail_out;
    if (rc < 0) return sm_io_error(err, SM_ERR_FORMAT, "corrupt compressed data (%s)", isal_message(rc));
    *finished = st->block_state == ISAL_BLOCK_FINISH;
    return SM_OK;
#else
    z_stream *z = &inf->z;
    z->next_in = (Bytef *)in;
    z->avail_in = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
    z->next_out = out;
    z->avail_out = cap > UINT32_MAX ? UINT32_MAX : (uInt)cap;
    uInt in0 = z->avail_in, out0 = z->avail_out;
    int rc = inflate(z, Z_NO_FLUSH);
    *used = in0 - z->avail_in;
    *produced = out0 - z->avail_out;
    if (rc == Z_STREAM_END) {
        *finished = 1;
        return SM_OK;
    }
    if (rc == Z_OK || rc == Z_BUF_ERROR) return SM_OK;
    if (rc == Z_MEM_ERROR) return sm_io_error(err, SM_ERR_NOMEM, "out of memory while decompressing");
    return sm_io_error(err, SM_ERR_FORMAT, "corrupt compressed data (%s)", z->msg ? z->msg : "unknown error");
#endif
}
