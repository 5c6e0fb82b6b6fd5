/* Shard files (dist.h): the result stream cut into frames, each with a
 * CRC-32 chained from the one before, and an end frame. A frame's bytes are
 * handed out only once its checksum is right, so a damaged, cut or padded
 * file is refused before any of it is used; the merge then checks every
 * field of what it reads (merge.c). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dist/dist.h"
#include "base/internal.h"

static void put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc_of(uint32_t crc, const uint8_t *p, size_t n) {
    while (n > 0) {
        uInt part = n > 0x40000000u ? 0x40000000u : (uInt)n;
        crc = (uint32_t)crc32(crc, p, part);
        p += part;
        n -= part;
    }
    return crc;
}

void sm_shard_writer_init(sm_shard_writer *w, uint8_t magic[8]) {
    memcpy(magic, SM_SHARD_FILE_MAGIC, 8);
    w->crc = crc_of((uint32_t)crc32(0L, Z_NULL, 0), magic, 8);
    w->written = 8;
}

void sm_shard_frame_head(sm_shard_writer *w, const uint8_t *data, size_t len, uint8_t head[SM_SHARD_FRAME_HEAD]) {
    put_le32(head, (uint32_t)len);
    uint32_t crc = crc_of(w->crc, head, 4);
    crc = crc_of(crc, data, len);
    put_le32(head + 4, crc);
    w->crc = crc;
    w->written += SM_SHARD_FRAME_HEAD + len;
}

static int shard_error(sm_error *err, const char *fmt, unsigned long long at) {
    sm_set_error(err, SM_ERR_FORMAT, fmt, at);
    return -1;
}

int sm_shard_rewind(sm_shard_reader *r, sm_error *err) {
    if (fseek(r->file, 0, SEEK_SET) != 0) return sm_set_error(err, SM_ERR_IO, "%s", strerror(errno)), -1;
    r->at = 0;
    r->ended = 0;
    uint8_t magic[8];
    size_t got = fread(magic, 1, 8, r->file);
    if (got < 8 && ferror(r->file)) return sm_set_error(err, SM_ERR_IO, "read error: %s", strerror(errno)), -1;
    if (got == 8 && memcmp(magic, "SMSHARD1", 8) == 0)
        return sm_set_error(err, SM_ERR_VERSION,
                            "a shard file of an older seqmatch (without checksums); run its 'search --shard' again"),
               -1;
    if (got < 8 || memcmp(magic, SM_SHARD_FILE_MAGIC, 8) != 0)
        return sm_set_error(err, SM_ERR_FORMAT, "not a seqmatch shard file (written by 'seqmatch search --shard')"), -1;
    r->at = 8;
    r->crc = crc_of((uint32_t)crc32(0L, Z_NULL, 0), magic, 8);
    return 0;
}

int sm_shard_open(sm_shard_reader *r, const char *path, sm_error *err) {
    memset(r, 0, sizeof *r);
    r->path = path;
    r->size = UINT64_MAX;
    if (strcmp(path, "-") == 0) {
        int fd = dup(0);
        r->file = fd >= 0 ? fdopen(fd, "rb") : NULL;
        if (!r->file && fd >= 0) close(fd);
    } else {
        r->file = fopen(path, "rb");
    }
    if (!r->file) return sm_set_error(err, SM_ERR_IO, "%s", strerror(errno)), -1;
    struct stat st;
    if (fstat(fileno(r->file), &st) == 0 && S_ISDIR(st.st_mode))
        return sm_set_error(err, SM_ERR_IO, "%s", strerror(EISDIR)), -1;
    if (fstat(fileno(r->file), &st) == 0 && S_ISREG(st.st_mode)) {
        r->size = (uint64_t)st.st_size;
        return sm_shard_rewind(r, err);
    }
    /* A pipe is read twice too (checked, then merged): copied first. */
    FILE *copy = tmpfile();
    if (!copy) return sm_set_error(err, SM_ERR_IO, "cannot make a temporary copy: %s", strerror(errno)), -1;
    char buf[1 << 16];
    size_t n;
    uint64_t size = 0;
    while ((n = fread(buf, 1, sizeof buf, r->file)) > 0) {
        if (fwrite(buf, 1, n, copy) != n) {
            int e = errno;
            fclose(copy);
            return sm_set_error(err, SM_ERR_IO, "cannot make a temporary copy: %s", strerror(e)), -1;
        }
        size += n;
    }
    if (ferror(r->file)) {
        int e = errno;
        fclose(copy);
        return sm_set_error(err, SM_ERR_IO, "read error: %s", strerror(e)), -1;
    }
    fclose(r->file);
    r->file = copy;
    r->size = size;
    return sm_shard_rewind(r, err);
}

int sm_shard_next(sm_shard_reader *r, const uint8_t **data, size_t *len, sm_error *err) {
    *data = NULL;
    *len = 0;
    if (r->ended) return 0;
    uint8_t head[SM_SHARD_FRAME_HEAD];
    size_t got = fread(head, 1, sizeof head, r->file);
    if (got < sizeof head) {
        if (ferror(r->file)) return sm_set_error(err, SM_ERR_IO, "read error: %s", strerror(errno)), -1;
        return shard_error(err, "damaged shard file: it ends at byte %llu, inside a frame (an unfinished shard?)",
                           (unsigned long long)(r->at + got));
    }
    uint32_t n = get_le32(head);
    /* the length is checked against what the file holds before anything is allocated */
    if (r->size != UINT64_MAX && (uint64_t)n > r->size - r->at - sizeof head)
        return shard_error(err, "damaged shard file: the frame at byte %llu is longer than the file",
                           (unsigned long long)r->at);
    if (n > r->cap) {
        uint8_t *p = realloc(r->buf, n);
        if (!p) return sm_set_error(err, SM_ERR_NOMEM, "out of memory for a frame of %u bytes", n), -1;
        r->buf = p;
        r->cap = n;
    }
    if (n && fread(r->buf, 1, n, r->file) != n) {
        if (ferror(r->file)) return sm_set_error(err, SM_ERR_IO, "read error: %s", strerror(errno)), -1;
        return shard_error(err, "damaged shard file: it ends inside the frame at byte %llu (an unfinished shard?)",
                           (unsigned long long)r->at);
    }
    uint32_t crc = crc_of(r->crc, head, 4);
    crc = crc_of(crc, r->buf, n);
    if (crc != get_le32(head + 4))
        return shard_error(err, "damaged shard file: checksum mismatch in the frame at byte %llu",
                           (unsigned long long)r->at);
    r->crc = crc;
    r->at += sizeof head + n;
    if (n == 0) {
        /* the end: nothing may follow */
        uint8_t extra;
        if (fread(&extra, 1, 1, r->file) == 1)
            return shard_error(err, "damaged shard file: bytes after its end at byte %llu", (unsigned long long)r->at);
        if (ferror(r->file)) return sm_set_error(err, SM_ERR_IO, "read error: %s", strerror(errno)), -1;
        r->ended = 1;
        return 0;
    }
    *data = r->buf;
    *len = n;
    return 1;
}

void sm_shard_close(sm_shard_reader *r) {
    if (r->file) fclose(r->file);
    free(r->buf);
    memset(r, 0, sizeof *r);
}
