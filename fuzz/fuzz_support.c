/* See fuzz_support.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include "fuzz_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

static int write_all(int fd, const void *data, size_t size) {
    const uint8_t *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n <= 0) return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

int fuzz_file_make(fuzz_file *file, const void *data, size_t size) {
    /* An anonymous in-memory file: nothing touches the disk and nothing is
       left behind; /proc/self/fd gives it a path that open() accepts. */
    file->fd = -1;
    file->path[0] = '\0';
#ifdef MFD_CLOEXEC
    file->fd = memfd_create("seqmatch-fuzz", MFD_CLOEXEC);
#endif
    if (file->fd >= 0) {
        snprintf(file->path, sizeof file->path, "/proc/self/fd/%d", file->fd);
    } else {
        const char *dir = getenv("TMPDIR");
        snprintf(file->path, sizeof file->path, "%s/seqmatch-fuzz-XXXXXX", dir && *dir ? dir : "/tmp");
        file->fd = mkstemp(file->path);
        if (file->fd < 0) return -1;
    }
    if (write_all(file->fd, data, size) != 0) {
        fuzz_file_remove(file);
        return -1;
    }
    return 0;
}

void fuzz_file_remove(fuzz_file *file) {
    if (file->fd < 0) return;
    close(file->fd);
    if (strncmp(file->path, "/proc/", 6) != 0) unlink(file->path);
    file->fd = -1;
}

static int deflate_member(const uint8_t *data, size_t size, uint8_t *out, size_t cap, size_t *used) {
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip wrapper rather than zlib's */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *used = cap - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

uint8_t *fuzz_gzip(const void *data, size_t size, int two_members, size_t split, size_t *out_size) {
    if (!two_members || split > size) split = size;
    size_t cap = compressBound((uLong)size) + 64;
    uint8_t *out = malloc(cap);
    if (!out) return NULL;
    size_t a = 0, b = 0;
    if (deflate_member(data, split, out, cap, &a) != 0 ||
        (two_members && deflate_member((const uint8_t *)data + split, size - split, out + a, cap - a, &b) != 0)) {
        free(out);
        return NULL;
    }
    *out_size = a + b;
    return out;
}

uint64_t fuzz_hash(uint64_t h, const void *data, size_t size) {
    const uint8_t *p = data;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void fuzz_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: fuzz check failed: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
