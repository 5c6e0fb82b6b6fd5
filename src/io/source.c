/* Byte source over zlib: gzread reads plain files unchanged and decompresses
 * gzip, concatenated gzip members and BGZF (which is gzip members). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* zlib's own input buffer; larger than the default 8 KiB to cut system calls. */
#define SOURCE_GZ_BUFFER (256u << 10)

struct sm_source {
    gzFile gz;
    char *name;
    uint64_t done;   /* raw bytes consumed (from the file offset when seekable) */
    uint64_t total;  /* file size, 0 when not a regular file */
    uint64_t produced;
    int seekable;
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

int sm_io_source_open(const char *path, sm_source **source, sm_error *err) {
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
    if (S_ISREG(st.st_mode)) {
        s->total = (uint64_t)st.st_size;
        s->seekable = 1;
#ifdef POSIX_FADV_SEQUENTIAL
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    }
    s->gz = gzdopen(fd, "rb");
    if (!s->gz) {
        close(fd);
        free(s->name);
        free(s);
        return sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
    }
    gzbuffer(s->gz, SOURCE_GZ_BUFFER);
    *source = s;
    return SM_OK;
}

long sm_io_source_read(sm_source *s, void *buf, size_t cap, sm_error *err) {
    unsigned want = cap > (1u << 30) ? (1u << 30) : (unsigned)cap;
    int n = gzread(s->gz, buf, want);
    int errnum = Z_OK;
    const char *msg = NULL;
    if (n <= 0) msg = gzerror(s->gz, &errnum);
    if (n < 0) {
        if (errnum == Z_ERRNO)
            sm_io_error(err, SM_ERR_IO, "%s: read error: %s", s->name, strerror(errno));
        else if (errnum == Z_MEM_ERROR)
            sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory while decompressing", s->name);
        else {
            /* zlib starts its message with the name it knows, "<fd:N>: " */
            if (msg && strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ">: ")) msg = strstr(msg, ">: ") + 3;
            sm_io_error(err, SM_ERR_FORMAT, "%s: corrupt compressed data (%s)", s->name,
                        msg ? msg : "unknown error");
        }
        return -1;
    }
    if (n == 0 && errnum == Z_BUF_ERROR) {
        sm_io_error(err, SM_ERR_FORMAT, "%s: unexpected end of file (truncated compressed stream)",
                    s->name);
        return -1;
    }
    s->produced += (uint64_t)n;
    z_off_t off = s->seekable ? gzoffset(s->gz) : -1;
    /* A pipe has no offset: fall back to the bytes produced, which is exact
       for plain input and only a hint for compressed input. */
    s->done = off >= 0 ? (uint64_t)off : s->produced;
    return n;
}

const char *sm_io_source_name(const sm_source *s) { return s->name; }

void sm_io_source_progress(const sm_source *s, uint64_t *done, uint64_t *total) {
    if (done) *done = s->done;
    if (total) *total = s->total;
}

void sm_io_source_close(sm_source *s) {
    if (!s) return;
    gzclose(s->gz);
    free(s->name);
    free(s);
}

/* Everything here that names what gzread decompresses: keep it in step. */
const char sm_io_source_reads[] = "plain and gzip/BGZF files";

int sm_io_check_compression(const char *shown, const uint8_t *head, size_t n, sm_error *err) {
    static const struct {
        const char *magic;
        size_t len;
        const char *name, *tool;
    } formats[] = {
        {"\x1f\x8b", 2, "gzip-compressed twice", "gzip"}, /* gzread took off one layer */
        {"BZh", 3, "bzip2-compressed", "bzip2"},
        {"\xfd" "7zXZ\0", 6, "xz-compressed", "xz"},
        {"\x28\xb5\x2f\xfd", 4, "zstd-compressed", "zstd"},
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (n >= formats[i].len && memcmp(head, formats[i].magic, formats[i].len) == 0)
            return sm_io_error(err, SM_ERR_FORMAT,
                               "%s: %s; seqmatch reads %s (decompress it first, e.g. %s -dc %s | seqmatch ...)",
                               shown, formats[i].name, sm_io_source_reads, formats[i].tool, shown);
    return SM_OK;
}
