/* gzip members in one call (deflate.h): ISA-L level 1 when built with it,
 * zlib level 1 otherwise (the fastest of each; ISA-L's is several times
 * zlib's speed at a similar ratio on sequence). */
#include "io/deflate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifdef SM_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

struct sm_deflater {
#ifdef SM_HAVE_ISAL
    uint8_t *level_buf;
#else
    z_stream z;
    int ready;
#endif
};

int sm_gzip_by_name(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

const char *sm_deflater_library(void) {
#ifdef SM_HAVE_ISAL
    return "isa-l";
#else
    return "zlib";
#endif
}

sm_deflater *sm_deflater_new(void) {
    sm_deflater *d = calloc(1, sizeof *d);
    if (!d) return NULL;
#ifdef SM_HAVE_ISAL
    d->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
    if (!d->level_buf) {
        free(d);
        return NULL;
    }
#else
    if (deflateInit2(&d->z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(d);
        return NULL;
    }
    d->ready = 1;
#endif
    return d;
}

void sm_deflater_free(sm_deflater *d) {
    if (!d) return;
#ifdef SM_HAVE_ISAL
    free(d->level_buf);
#else
    if (d->ready) deflateEnd(&d->z);
#endif
    free(d);
}

/* Stored blocks cost 5 bytes per 64 KiB; the gzip header and trailer 18. */
size_t sm_gzip_bound(size_t n) { return n + (n >> 10) + 1024; }

size_t sm_gzip_member(sm_deflater *d, const void *in, size_t n, void *out, size_t cap) {
    if (!d || cap < sm_gzip_bound(n) || n > UINT32_MAX) return 0;
#ifdef SM_HAVE_ISAL
    struct isal_zstream s;
    isal_deflate_stateless_init(&s);
    s.gzip_flag = IGZIP_GZIP;
    s.level = 1;
    s.level_buf = d->level_buf;
    s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    s.next_in = (uint8_t *)(uintptr_t)in;
    s.avail_in = (uint32_t)n;
    s.next_out = out;
    s.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    if (isal_deflate_stateless(&s) != COMP_OK) return 0;
    return s.total_out;
#else
    if (deflateReset(&d->z) != Z_OK) return 0;
    d->z.next_in = (Bytef *)(uintptr_t)in;
    d->z.avail_in = (uInt)n;
    d->z.next_out = out;
    d->z.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uInt)cap;
    if (deflate(&d->z, Z_FINISH) != Z_STREAM_END) return 0;
    return d->z.total_out;
#endif
}
