/* The database block: access, checks on load, saving and loading. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/internal.h"
#include "engines/engine.h"

/* CRC-32 of the block with the checksum field read as zero, so that the
   header is covered too. */
static uint32_t block_checksum(const uint8_t *bytes, uint64_t size) {
    static const uint8_t zero[4] = {0, 0, 0, 0};
    const uint64_t at = offsetof(sm_db_header, checksum);
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, bytes, (uInt)at);
    crc = crc32(crc, zero, 4);
    uint64_t off = at + 4;
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

const sm_db_pattern *sm_db_patterns(const sm_db *db) {
    return (const sm_db_pattern *)(db->bytes + sm_db_head(db)->patterns_off);
}

const sm_db_section *sm_db_sections(const sm_db *db) {
    return (const sm_db_section *)(db->bytes + sm_db_head(db)->directory_off);
}

const uint8_t *sm_db_section_of_kind(const sm_db *db, uint32_t kind, uint64_t *size) {
    const sm_db_section *dir = sm_db_sections(db);
    for (uint32_t i = 0; i < sm_db_head(db)->section_count; i++)
        if (dir[i].kind == kind) {
            if (size) *size = dir[i].size;
            return db->bytes + dir[i].offset;
        }
    return NULL;
}

uint32_t sm_db_patterns_of_kind(const sm_db *db, uint32_t kind) {
    const sm_db_section *dir = sm_db_sections(db);
    uint32_t n = 0;
    for (uint32_t i = 0; i < sm_db_head(db)->section_count; i++)
        if (dir[i].kind == kind) n += dir[i].patterns;
    return n;
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
    info->match = (sm_match)h->match;
    info->max_errors = h->max_errors;
    info->report = (sm_report)h->report;
    info->approx_engine = SM_ENGINE_AUTO;
    const sm_db_section *dir = sm_db_sections(db);
    for (uint32_t i = 0; i < h->section_count; i++) {
        const sm_engine_ops *ops = sm_engine_for_kind(dir[i].kind);
        if (ops->matches & (1u << SM_MATCH_EXACT)) continue;
        info->approx_patterns += dir[i].patterns;
        if (info->approx_engine == SM_ENGINE_AUTO) info->approx_engine = ops->engine;
    }
    info->section_count = h->section_count;
    info->pam_length = h->pam_length;
    info->pam_side = (sm_pam_side)h->pam_side;
    info->dna_bulges = h->dna_bulges;
    info->rna_bulges = h->rna_bulges;
}

sm_engine sm_db_section_engine(const sm_db *db, uint32_t index) {
    if (!db || index >= sm_db_head(db)->section_count) return SM_ENGINE_AUTO;
    return sm_engine_for_kind(sm_db_sections(db)[index].kind)->engine;
}

int sm_db_section_dfa(const sm_db *db, uint32_t index, uint32_t *states, uint32_t *columns) {
    if (!db || index >= sm_db_head(db)->section_count) return 0;
    const sm_db_section *e = &sm_db_sections(db)[index];
    const sm_engine_ops *ops = sm_engine_for_kind(e->kind);
    if (!ops->dfa_tables) return 0;
    sm_section s = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
    sm_dfa_tables t;
    ops->dfa_tables(&s, &t);
    if (states) *states = t.states;
    if (columns) *columns = t.columns;
    return 1;
}

uint32_t sm_db_engine_patterns(const sm_db *db, sm_engine engine) {
    const sm_engine_ops *ops = engine == SM_ENGINE_AUTO ? NULL : sm_engine_for_id(engine);
    return db && ops ? sm_db_patterns_of_kind(db, ops->kind) : 0;
}

const char *sm_db_pattern_name(const sm_db *db, uint32_t index) {
    if (!db) return NULL;
    const sm_db_header *h = sm_db_head(db);
    if (index >= h->pattern_count) return NULL;
    return (const char *)db->bytes + h->strings_off + sm_db_patterns(db)[index].name_off;
}

const char *sm_db_pattern_seq(const sm_db *db, uint32_t index, size_t *len) {
    if (!db) return NULL;
    const sm_db_header *h = sm_db_head(db);
    if (index >= h->pattern_count) return NULL;
    const sm_db_pattern *p = &sm_db_patterns(db)[index];
    if (len) *len = p->length;
    return (const char *)db->bytes + h->strings_off + p->seq_off;
}

const void *sm_db_bytes(const sm_db *db, size_t *size) {
    if (size) *size = db ? db->size : 0;
    return db ? db->bytes : NULL;
}

const char *sm_db_section_name(const sm_db *db, uint32_t index, uint32_t *patterns, uint64_t *bytes) {
    if (!db || index >= sm_db_head(db)->section_count) return NULL;
    const sm_db_section *e = &sm_db_sections(db)[index];
    if (patterns) *patterns = e->patterns;
    if (bytes) *bytes = e->size;
    return sm_engine_for_kind(e->kind)->name;
}

static int all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
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

/* The checks the header alone allows, made before any byte past it is read
   (docs/format.md, "What a loader must do", steps 1 and 2, and the size):
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
    if (h.version < SM_DB_FORMAT_VERSION)
        return sm_set_error(err, SM_ERR_VERSION,
                            "database format version %u was written by an older seqmatch; recompile this database "
                            "(seqmatch compile)",
                            h.version);
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

/* The header's settings, once the checksum has vouched for them. */
static int check_settings(const sm_db_header *h, sm_error *err) {
    if (h->alphabet > SM_ALPHABET_TEXT || h->strands > SM_STRAND_REVERSE ||
        (h->flags & ~(SM_FLAG_IGNORE_CASE | SM_FLAG_TEXT_IUPAC)) != 0 || h->pattern_count == 0 ||
        h->match > SM_MATCH_EDITS || h->report > SM_REPORT_ENDS || h->max_errors > 65535 ||
        h->pam_side > SM_PAM_5PRIME || h->dna_bulges > SM_MAX_BULGE || h->rna_bulges > SM_MAX_BULGE)
        return sm_set_error(err, SM_ERR_FORMAT, "database header has invalid settings");
    /* Exact matching has no errors; k = 0 is exact but for guides with a PAM. */
    int bulges = h->dna_bulges || h->rna_bulges;
    if ((h->match == SM_MATCH_EXACT && h->max_errors != 0) ||
        (h->max_errors == 0 && h->match != SM_MATCH_EXACT && (h->match != SM_MATCH_MISMATCHES || !h->pam_length)) ||
        (bulges && (h->match != SM_MATCH_MISMATCHES || !h->pam_length)) || (h->pam_side && !h->pam_length))
        return sm_set_error(err, SM_ERR_FORMAT, "database header has invalid settings");
    /* A PAM leaves every guide at least one symbol (checked with the
       patterns); text has none. */
    if (h->pam_length && h->alphabet != SM_ALPHABET_DNA)
        return sm_set_error(err, SM_ERR_FORMAT, "database PAM length %u does not fit its patterns", h->pam_length);
    if (!all_zero(h->reserved, sizeof h->reserved))
        return sm_set_error(err, SM_ERR_FORMAT, "database header has reserved bytes set (written by a newer seqmatch?)");
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
    if ((rc = check_settings(&h, err)) != SM_OK) return rc;
    if (h.section_count == 0 || h.section_count > SM_DB_MAX_SECTIONS || h.directory_off % 8 != 0 ||
        !sm_fits(h.directory_off, (uint64_t)h.section_count * sizeof(sm_db_section), size))
        return sm_set_error(err, SM_ERR_FORMAT, "database section directory is malformed");
    if (h.patterns_off % 8 != 0 ||
        !sm_fits(h.patterns_off, (uint64_t)h.pattern_count * sizeof(sm_db_pattern), size) ||
        !sm_fits(h.strings_off, h.strings_size, size))
        return sm_set_error(err, SM_ERR_FORMAT, "database section out of bounds");
    const sm_db_section *dir = (const sm_db_section *)(bytes + h.directory_off);
    for (uint32_t i = 0; i < h.section_count; i++) {
        const sm_engine_ops *ops = sm_engine_for_kind(dir[i].kind);
        if (!ops)
            return sm_set_error(err, SM_ERR_VERSION,
                                "database section %u has kind %u, which this seqmatch does not know (written by a "
                                "newer seqmatch?)",
                                i, dir[i].kind);
        if (dir[i].offset % SM_DB_ALIGN || dir[i].size == 0 || !sm_fits(dir[i].offset, dir[i].size, size))
            return sm_set_error(err, SM_ERR_FORMAT, "database section out of bounds");
        if (dir[i].reserved != 0)
            return sm_set_error(err, SM_ERR_FORMAT, "database section %u has reserved bytes set", i);
        /* beside k mismatches or edits, exact sections for the patterns compiled as exact (sm_compile_options.exact) */
        int exact_beside = (h.match == SM_MATCH_MISMATCHES || h.match == SM_MATCH_EDITS) && h.pam_length == 0 &&
                           (ops->matches & 1u << SM_MATCH_EXACT);
        if (!(ops->matches & (1u << h.match)) && !exact_beside)
            return sm_set_error(err, SM_ERR_FORMAT, "database section %u (%s) does not fit the kind of matching", i,
                                ops->name);
        /* Only the guide engine finds sites with bulges. */
        if ((h.dna_bulges || h.rna_bulges) && dir[i].kind != SM_SECTION_GUIDE)
            return sm_set_error(err, SM_ERR_FORMAT, "database section %u (%s) cannot find bulges", i, ops->name);
    }

    const sm_db_pattern *pats = (const sm_db_pattern *)(bytes + h.patterns_off);
    const uint8_t *strings = bytes + h.strings_off;
    uint32_t on_section[SM_DB_MAX_SECTIONS] = {0};
    uint32_t min_len = UINT32_MAX, max_len = 0;
    for (uint32_t i = 0; i < h.pattern_count; i++) {
        const sm_db_pattern *p = &pats[i];
        if (p->name_off >= h.strings_size || !memchr(strings + p->name_off, 0, h.strings_size - p->name_off) ||
            p->length == 0 || !sm_fits(p->seq_off, (uint64_t)p->length + 1, h.strings_size) ||
            strings[p->seq_off + p->length] != 0)
            return sm_set_error(err, SM_ERR_FORMAT, "database pattern %u is malformed", i);
        if (p->section >= h.section_count)
            return sm_set_error(err, SM_ERR_FORMAT, "database pattern %u names no section", i);
        on_section[p->section]++;
        if (p->length < min_len) min_len = p->length;
        if (p->length > max_len) max_len = p->length;
    }
    for (uint32_t i = 0; i < h.section_count; i++)
        if (on_section[i] != dir[i].patterns || on_section[i] == 0)
            return sm_set_error(err, SM_ERR_FORMAT, "database pattern table disagrees with its header");
    if (min_len != h.min_length || max_len != h.max_length)
        return sm_set_error(err, SM_ERR_FORMAT, "database pattern table disagrees with its header");
    if (h.pam_length >= min_len)
        return sm_set_error(err, SM_ERR_FORMAT, "database PAM length %u does not fit its patterns", h.pam_length);
    sm_validate_input in = {h.pattern_count * 2, (sm_match)h.match, pats, h.pattern_count, &h};
    for (uint32_t i = 0; i < h.section_count; i++) {
        const sm_engine_ops *ops = sm_engine_for_kind(dir[i].kind);
        if (ops->validate(bytes + dir[i].offset, dir[i].size, &in, err) != SM_OK)
            return err ? err->code : SM_ERR_FORMAT;
    }
    return SM_OK;
}

int sm_db_from_bytes(const void *bytes, size_t size, sm_db **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "no place to store the database");
    *out = NULL;
    if (!bytes) return sm_set_error(err, SM_ERR_INVALID, "no database bytes given");
    /* Copy first: the checks and later scans need the block aligned. */
    uint8_t *copy = sm_aligned_alloc(size ? size : 1);
    sm_db *db = calloc(1, sizeof *db);
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
    if (rc == SM_OK && !(db = calloc(1, sizeof *db)))
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
