/* Internal to src/io: one member of gzip (or one zstd frame) decoded in
 * pieces, by the best library the build has: ISA-L's igzip, else zlib, for
 * gzip; libzstd for zstd. source.c drives it over the raw bytes. */
#ifndef SM_IO_INFLATE_H
#define SM_IO_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "seqmatch.h"

typedef enum { SM_INFLATE_GZIP = 0, SM_INFLATE_ZSTD = 1 } sm_inflate_kind;

typedef struct sm_inflater sm_inflater;

/* 1 when this build decodes kind. */
int sm_inflater_has(sm_inflate_kind kind);
/* The library that decodes gzip ("isa-l", "zlib"), for benchmarks. */
const char *sm_inflater_gzip_library(void);
sm_inflater *sm_inflater_new(sm_inflate_kind kind);
void sm_inflater_free(sm_inflater *inf);
/* Ready for a new member (or frame). */
void sm_inflater_reset(sm_inflater *inf);
/* Decodes from in[0, n) into out[0, cap): *used input bytes consumed,
   *produced output bytes written, *finished set when the member ended (its
   trailer checked). No progress at all means more input is needed. Returns
   SM_OK, or SM_ERR_FORMAT / SM_ERR_NOMEM with a message in err (without a
   file name, e.g. "corrupt compressed data (incorrect data check)"). */
int sm_inflater_run(sm_inflater *inf, const uint8_t *in, size_t n, size_t *used, uint8_t *out, size_t cap,
                    size_t *produced, int *finished, sm_error *err);

/* A whole gzip member in[0, n) decoded into out[0, cap) in one call, its
   trailer checked: 1 with *produced, or 0 when this build cannot or the
   member is not sound (run it with sm_inflater_run, after a reset, for
   the bytes and message). The inflater needs a reset after either. */
int sm_inflater_whole(sm_inflater *inf, const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *produced);

#endif /* SM_IO_INFLATE_H */
