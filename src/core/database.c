/* The database block: access, checks on load, saving and loading. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/internal.h"
#include "engines/approx/approx.h"
#include "engines/approx/pigeonhole.h"
#include "engines/automaton/automaton.h"
#include "engines/bitparallel/shiftand.h"
#include "engines/kmer/kmer.h"
#include "engines/wumanber/wumanber.h"

static uint32_t block_checksum(const uint8_t *bytes, uint64_t size) {
    uLong crc = crc32(0L, Z_NULL, 0);
    uint64_t off = sizeof(sm_db_header);
    while (off < size) {
        uInt n = (uInt)((size - off) > (1u << 30) ? (1u << 30) : (size - off));
        crc = crc32(crc, bytes + off, n);
        off += n;
    }
    return (uint32_t)crc;
}

void sm_db_seal(uint8_t *bytes, uint64_t size) {
    sm_db_header *h = (sm_db_header *)bytes;
    h->size = size;
    h->checksum = block_checksum(bytes, size);
}

void sm_db_free(sm_db *db) {
    if (!db) return;
    if (db->mapped) munmap(db->bytes, db->size);
    else sm_aligned_free(db->bytes);
    free(db);
}

static const sm_db_pattern *pattern_table(const sm_db *db) {
    return (const sm_db_pattern *)(db->bytes + sm_db_head(db)->patterns_off);
}

const sm_db_pattern *sm_db_patterns(const sm_db *db) { return pattern_table(db); }

const uint8_t *sm_db_automaton(const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    return h->automaton_size ? db->bytes + h->automaton_off : NULL;
}

const uint8_t *sm_db_shiftand(const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    return h->shiftand_size ? db->bytes + h->shiftand_off : NULL;
}

const uint8_t *sm_db_approx(const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    return h->approx_size ? db->bytes + h->approx_off : NULL;
}

const uint8_t *sm_db_kmer(const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    return h->kmer_size ? db->bytes + h->kmer_off : NULL;
}

const uint8_t *sm_db_wumanber(const sm_db *db) {
    const sm_db_header *h = sm_db_head(db);
    return h->wumanber_size ? db->bytes + h->wumanber_off : NULL;
}

int sm_db_automaton_only(const sm_db *db) {
    return sm_db_head(db)->match == SM_MATCH_EXACT && sm_db_automaton(db) && !sm_db_shiftand(db) &&
           !sm_db_approx(db) && !sm_db_kmer(db) && !sm_db_wumanber(db);
}

void sm_db_get_info(const sm_db *db, sm_db_info *info) {
    if (!info) return;
    memset(info, 0, sizeof *info);
    if (!db) return;
    const sm_db_header *h = sm_db_head(db);
    info->alphabet = (sm_alphabet)h->alphabet;
    info->strands = (sm_strands)h->strands;
    info->flags = h->flags;
    info->pattern_count = h->pattern_count;
    info->min_length = h->min_length;
    info->max_length = h->max_length;
    info->size = h->size;
    info->automaton_patterns = h->automaton_patterns;
    info->shiftand_patterns = h->shiftand_patterns;
    info->match = (sm_match)h->match;
    info->max_errors = h->max_errors;
    info->report = (sm_report)h->report;
    info->approx_patterns = h->approx_patterns;
    info->kmer_patterns = h->kmer_patterns;
    info->wumanber_patterns = h->wumanber_patterns;
    info->approx_engine = h->approx_engine == SM_PATTERN_MISMATCH ? SM_ENGINE_MISMATCH
                          : h->approx_engine == SM_PATTERN_MYERS  ? SM_ENGINE_MYERS
                          : h->approx_engine == SM_PATTERN_WAVEFRONT ? SM_ENGINE_WAVEFRONT
                          : h->approx_engine == SM_PATTERN_PIGEONHOLE ? SM_ENGINE_PIGEONHOLE
                                                                      : SM_ENGINE_AUTO;
    const uint8_t *ac = sm_db_automaton(db);
    if (ac) {
        const sm_ac_header *a = (const sm_ac_header *)ac;
        info->automaton_states = a->states;
        info->automaton_columns = a->columns;
    }
}

const char *sm_db_pattern_name(const sm_db *db, uint32_t index) {
    if (!db) return NULL;
    const sm_db_header *h = sm_db_head(db);
    if (index >= h->pattern_count) return NULL;
    return (const char *)db->bytes + h->strings_off + pattern_table(db)[index].name_off;
}

const char *sm_db_pattern_seq(const sm_db *db, uint32_t index, size_t *len) {
    if (!db) return NULL;
    const sm_db_header *h = sm_db_head(db);
    if (index >= h->pattern_count) return NULL;
    const sm_db_pattern *p = &pattern_table(db)[index];
    if (len) *len = p->length;
    return (const char *)db->bytes + h->strings_off + p->seq_off;
}

const void *sm_db_bytes(const sm_db *db, size_t *size) {
    if (size) *size = db ? db->size : 0;
    return db ? db->bytes : NULL;
}

/* Is [off, off + len) inside a block of size bytes? */
static int in_block(uint64_t off, uint64_t len, uint64_t size) {
    return off <= size && len <= size - off;
}

/* Compressed data where a database belongs: which compression, or NULL. */
static const char *compression_of(const uint8_t *p, size_t n) {
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return "gzip";
    if (n >= 3 && memcmp(p, "BZh", 3) == 0) return "bzip2";
    if (n >= 6 && memcmp(p, "\xfd" "7zXZ\0", 6) == 0) return "xz";
    if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0) return "zstd";
    return NULL;
}

#define SIZE_UNKNOWN UINT64_MAX

/* The checks the header alone allows, made before any byte past it is read:
   got is how many header bytes there are (fewer when the data ends inside
   the header), total the size of the whole data (SIZE_UNKNOWN for a pipe). */
static int check_header(const uint8_t *bytes, size_t got, uint64_t total, sm_error *err) {
    const size_t head = sizeof(sm_db_header);
    if (got == 0) return sm_set_error(err, SM_ERR_FORMAT, "not a seqmatch database (it is empty)");
    if (memcmp(bytes, SM_DB_MAGIC, got < 8 ? got : 8) != 0) {
        const char *packed = compression_of(bytes, got);
        if (packed)
            return sm_set_error(err, SM_ERR_FORMAT,
                                "not a seqmatch database (bad magic number: the data is %s-compressed; "
                                "decompress it first)", packed);
        return sm_set_error(err, SM_ERR_FORMAT, "not a seqmatch database (bad magic number)");
    }
    if (got < head)
        return sm_set_error(err, SM_ERR_FORMAT, "database is truncated: %zu bytes, shorter than its %zu-byte header",
                            got, head);
    sm_db_header h;
    memcpy(&h, bytes, sizeof h);
    if (h.byte_order != SM_DB_BYTE_ORDER_MARK)
        return sm_set_error(err, SM_ERR_VERSION,
                            "database was written on a machine with another byte order");
    if (h.version != SM_DB_FORMAT_VERSION)
        return sm_set_error(err, SM_ERR_VERSION,
                            "database format version %u; this seqmatch reads version %u",
                            h.version, SM_DB_FORMAT_VERSION);
    if (total != SIZE_UNKNOWN && h.size > total)
        return sm_set_error(err, SM_ERR_FORMAT, "database is truncated (%llu bytes, its header says %llu)",
                            (unsigned long long)total, (unsigned long long)h.size);
    if (total != SIZE_UNKNOWN && h.size < total)
        return sm_set_error(err, SM_ERR_FORMAT, "database has trailing bytes (%llu bytes, its header says %llu)",
                            (unsigned long long)total, (unsigned long long)h.size);
    if (h.size < head || h.size > SIZE_MAX)
        return sm_set_error(err, SM_ERR_FORMAT, "database header gives an impossible size (%llu bytes)",
                            (unsigned long long)h.size);
    return SM_OK;
}

static int check_block(const uint8_t *bytes, size_t size, sm_error *err) {
    size_t got = size < sizeof(sm_db_header) ? size : sizeof(sm_db_header);
    int rc = check_header(bytes, got, size, err);
    if (rc != SM_OK) return rc;
    sm_db_header h;
    memcpy(&h, bytes, sizeof h);
    if (block_checksum(bytes, size) != h.checksum)
        return sm_set_error(err, SM_ERR_FORMAT, "database checksum mismatch (file corrupted)");
    if (h.alphabet > SM_ALPHABET_TEXT || h.strands > SM_STRAND_REVERSE ||
        (h.flags & ~(SM_FLAG_IGNORE_CASE | SM_FLAG_TEXT_IUPAC)) != 0 || h.pattern_count == 0 ||
        h.match > SM_MATCH_EDITS || h.report > SM_REPORT_ENDS || (h.match == SM_MATCH_EXACT) != (h.max_errors == 0) ||
        h.max_errors > 65535)
        return sm_set_error(err, SM_ERR_FORMAT, "database header has invalid settings");
    if (h.patterns_off % 8 != 0 ||
        !in_block(h.patterns_off, (uint64_t)h.pattern_count * sizeof(sm_db_pattern), size) ||
        !in_block(h.strings_off, h.strings_size, size) ||
        (h.automaton_size && (h.automaton_off % SM_DB_ALIGN || !in_block(h.automaton_off, h.automaton_size, size))) ||
        (h.shiftand_size && (h.shiftand_off % SM_DB_ALIGN || !in_block(h.shiftand_off, h.shiftand_size, size))) ||
        (h.approx_size && (h.approx_off % SM_DB_ALIGN || !in_block(h.approx_off, h.approx_size, size))) ||
        (h.kmer_size && (h.kmer_off % SM_DB_ALIGN || !in_block(h.kmer_off, h.kmer_size, size))) ||
        (h.wumanber_size && (h.wumanber_off % SM_DB_ALIGN || !in_block(h.wumanber_off, h.wumanber_size, size))))
        return sm_set_error(err, SM_ERR_FORMAT, "database section out of bounds");

    const sm_db_pattern *pats = (const sm_db_pattern *)(bytes + h.patterns_off);
    const uint8_t *strings = bytes + h.strings_off;
    uint32_t on_automaton = 0, on_shiftand = 0, on_approx = 0, on_kmer = 0, on_wumanber = 0, min_len = UINT32_MAX,
             max_len = 0;
    for (uint32_t i = 0; i < h.pattern_count; i++) {
        const sm_db_pattern *p = &pats[i];
        if (p->name_off >= h.strings_size || !memchr(strings + p->name_off, 0, h.strings_size - p->name_off) ||
            p->length == 0 || !in_block(p->seq_off, (uint64_t)p->length + 1, h.strings_size) ||
            strings[p->seq_off + p->length] != 0)
            return sm_set_error(err, SM_ERR_FORMAT, "database pattern %u is malformed", i);
        if (p->engine == SM_PATTERN_AUTOMATON) on_automaton++;
        else if (p->engine == SM_PATTERN_SHIFTAND) on_shiftand++;
        else if (p->engine == SM_PATTERN_KMER) on_kmer++;
        else if (p->engine == SM_PATTERN_WUMANBER) on_wumanber++;
        else if (((p->engine >= SM_PATTERN_MISMATCH && p->engine <= SM_PATTERN_WAVEFRONT) ||
                  p->engine == SM_PATTERN_PIGEONHOLE) && p->engine == h.approx_engine)
            on_approx++;
        else return sm_set_error(err, SM_ERR_FORMAT, "database pattern %u has an unknown engine", i);
        if (p->length < min_len) min_len = p->length;
        if (p->length > max_len) max_len = p->length;
    }
    int approx_engine_fits = h.approx_engine == 0 ? h.match == SM_MATCH_EXACT
                             : h.approx_engine == SM_PATTERN_MISMATCH ? h.match == SM_MATCH_MISMATCHES
                             : h.approx_engine == SM_PATTERN_PIGEONHOLE ? h.match != SM_MATCH_EXACT
                                                                      : h.match == SM_MATCH_EDITS;
    if (on_automaton != h.automaton_patterns || on_shiftand != h.shiftand_patterns ||
        on_approx != h.approx_patterns || (on_approx > 0) != (h.approx_size > 0) || !approx_engine_fits ||
        on_kmer != h.kmer_patterns || (on_kmer > 0) != (h.kmer_size > 0) ||
        on_wumanber != h.wumanber_patterns || (on_wumanber > 0) != (h.wumanber_size > 0) ||
        min_len != h.min_length || max_len != h.max_length ||
        (on_automaton > 0) != (h.automaton_size > 0) || (on_shiftand > 0) != (h.shiftand_size > 0))
        return sm_set_error(err, SM_ERR_FORMAT, "database pattern table disagrees with its header");
    uint32_t outputs = h.pattern_count * 2;
    if (h.automaton_size && sm_ac_validate(bytes + h.automaton_off, h.automaton_size, outputs, err) != SM_OK)
        return err ? err->code : SM_ERR_FORMAT;
    if (h.shiftand_size && sm_sa_validate(bytes + h.shiftand_off, h.shiftand_size, outputs, err) != SM_OK)
        return err ? err->code : SM_ERR_FORMAT;
    if (h.kmer_size && sm_kt_validate(bytes + h.kmer_off, h.kmer_size, outputs, err) != SM_OK)
        return err ? err->code : SM_ERR_FORMAT;
    if (h.wumanber_size && sm_wm_validate(bytes + h.wumanber_off, h.wumanber_size, outputs, err) != SM_OK)
        return err ? err->code : SM_ERR_FORMAT;
    if (h.approx_size) {
        const uint8_t *sec = bytes + h.approx_off;
        int rc = h.approx_engine == SM_PATTERN_MISMATCH ? sm_km_validate(sec, h.approx_size, outputs, err)
                 : h.approx_engine == SM_PATTERN_MYERS  ? sm_my_validate(sec, h.approx_size, outputs, err)
                 : h.approx_engine == SM_PATTERN_PIGEONHOLE
                     ? sm_ph_validate(sec, h.approx_size, outputs, (sm_match)h.match, err)
                                                        : sm_wf_validate(sec, h.approx_size, outputs, err);
        if (rc != SM_OK) return err ? err->code : SM_ERR_FORMAT;
    }
    return SM_OK;
}

int sm_db_from_bytes(const void *bytes, size_t size, sm_db **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "no place to store the database");
    *out = NULL;
    if (!bytes) return sm_set_error(err, SM_ERR_INVALID, "no database bytes given");
    /* Copy first: the checks and later scans need the block aligned. */
    uint8_t *copy = sm_aligned_alloc(size);
    sm_db *db = malloc(sizeof *db);
    if (!copy || !db) {
        sm_aligned_free(copy);
        free(db);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory loading a database of %zu bytes", size);
    }
    memcpy(copy, bytes, size);
    int rc = check_block(copy, size, err);
    if (rc != SM_OK) {
        sm_aligned_free(copy);
        free(db);
        return rc;
    }
    db->bytes = copy;
    db->size = size;
    db->mapped = 0;
    *out = db;
    return SM_OK;
}

/* Writes the block to f; returns 0 or the errno of the failure. */
static int write_block(const sm_db *db, FILE *f) {
    size_t written = fwrite(db->bytes, 1, db->size, f);
    int write_errno = errno;
    int close_rc = fclose(f);
    if (written != db->size) return write_errno ? write_errno : EIO;
    return close_rc != 0 ? (errno ? errno : EIO) : 0;
}

int sm_db_save(const sm_db *db, const char *path, sm_error *err) {
    if (!db || !path) return sm_set_error(err, SM_ERR_INVALID, "sm_db_save needs a database and a path");
    /* A path that is not a regular file (a device, a FIFO) is written in
       place and never removed. A file is written beside its final name and
       renamed over it, so a failed write leaves any earlier file intact. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        FILE *f = fopen(path, "wb");
        if (!f) return sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
        int e = write_block(db, f);
        return e ? sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(e)) : SM_OK;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp-XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(e));
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        remove(tmp);
        free(tmp);
        return sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(e));
    }
    /* mkstemp makes the file 0600; a database is as readable as any file. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    int e = write_block(db, f);
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) remove(tmp);
    free(tmp);
    return e ? sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(e)) : SM_OK;
}

/* Reads up to n bytes (fewer only at the end of the data); -1 on an error. */
static ssize_t read_full(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (uint8_t *)buf + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* A pipe or device: the header's size bytes into an aligned buffer grown as
   they arrive (a header may lie about its size), then one byte more to see
   that nothing follows. */
static int read_stream(int fd, const uint8_t *head, uint64_t size, uint8_t **out, sm_error *err) {
    const size_t first = (size_t)64 << 20;
    size_t cap = size < first ? (size_t)size : first, len = sizeof(sm_db_header);
    uint8_t *buf = sm_aligned_alloc(cap);
    if (!buf) return sm_set_error(err, SM_ERR_NOMEM, "out of memory loading a database of %llu bytes",
                                  (unsigned long long)size);
    memcpy(buf, head, len);
    while (len < size) {
        if (len == cap) {
            size_t grown_cap = cap > size / 2 ? (size_t)size : cap * 2;
            uint8_t *grown = sm_aligned_alloc(grown_cap);
            if (!grown) {
                sm_aligned_free(buf);
                return sm_set_error(err, SM_ERR_NOMEM, "out of memory loading a database of %llu bytes",
                                    (unsigned long long)size);
            }
            memcpy(grown, buf, len);
            sm_aligned_free(buf);
            buf = grown;
            cap = grown_cap;
        }
        ssize_t k = read_full(fd, buf + len, cap - len);
        if (k < 0) {
            int e = errno;
            sm_aligned_free(buf);
            return sm_set_error(err, SM_ERR_IO, "%s", strerror(e));
        }
        if (k == 0) {
            sm_aligned_free(buf);
            return sm_set_error(err, SM_ERR_FORMAT, "database is truncated (%zu bytes, its header says %llu)", len,
                                (unsigned long long)size);
        }
        len += (size_t)k;
    }
    uint8_t extra;
    ssize_t k = read_full(fd, &extra, 1);
    if (k != 0) {
        int e = errno;
        sm_aligned_free(buf);
        if (k < 0) return sm_set_error(err, SM_ERR_IO, "%s", strerror(e));
        return sm_set_error(err, SM_ERR_FORMAT, "database has trailing bytes (its header says %llu)",
                            (unsigned long long)size);
    }
    *out = buf;
    return SM_OK;
}

/* A saved file is read header first, so that the wrong file (a FASTA file,
   /dev/zero, an endless pipe) is refused after 256 bytes, and a regular
   file is mapped rather than copied: one copy of the block, shared with the
   page cache. Mappings are page aligned, more than the SM_DB_ALIGN the
   sections need. */
int sm_db_load(const char *path, sm_db **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "no place to store the database");
    *out = NULL;
    if (!path) return sm_set_error(err, SM_ERR_INVALID, "no database path given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    uint8_t head[sizeof(sm_db_header)];
    ssize_t got = -1;
    if (fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) errno = EISDIR;
        else got = read_full(fd, head, sizeof head);
    }
    if (got < 0) {
        int e = errno;
        close(fd);
        return sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(e));
    }
    int regular = S_ISREG(st.st_mode);
    int rc = check_header(head, (size_t)got, regular ? (uint64_t)st.st_size : SIZE_UNKNOWN, err);
    uint8_t *bytes = NULL;
    int mapped = 0;
    uint64_t size = 0;
    if (rc == SM_OK) {
        memcpy(&size, head + offsetof(sm_db_header, size), sizeof size);
        if (regular) {
            void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (map != MAP_FAILED) {
                bytes = map;
                mapped = 1;
            } else if (errno == ENOMEM) {
                rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory mapping a database of %llu bytes",
                                  (unsigned long long)size);
            }
        }
        /* not mappable (a pipe, a device, a file system without mmap): read it */
        if (rc == SM_OK && !bytes) rc = read_stream(fd, head, size, &bytes, err);
    }
    close(fd);
    sm_db *db = NULL;
    if (rc == SM_OK && !(db = malloc(sizeof *db)))
        rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    if (rc == SM_OK) rc = check_block(bytes, (size_t)size, err);
    if (rc != SM_OK) {
        if (err) {
            char msg[sizeof err->message];
            memcpy(msg, err->message, sizeof msg);
            sm_set_error(err, rc, "%s: %s", path, msg);
        }
        if (mapped) munmap(bytes, (size_t)size);
        else sm_aligned_free(bytes);
        free(db);
        return rc;
    }
    db->bytes = bytes;
    db->size = (size_t)size;
    db->mapped = mapped;
    *out = db;
    return SM_OK;
}
