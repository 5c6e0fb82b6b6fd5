/* Fuzz target: the sequence reader (src/io/reader.c over src/io/source.c),
 * through the entry points the CLI uses: sm_reader_open on a path, then
 * sm_reader_next_record / sm_reader_read.
 *
 * Input: byte 0 picks the format (auto, fasta, fastq, text, lines) and the
 * container (as given, gzip, two gzip members, gzip cut short); byte 1 picks
 * where members are split or the stream is cut; the rest is the content.
 *
 * Checked, besides memory safety:
 *   - every piece is non-empty, within the reader's caps, and FASTA/FASTQ
 *     pieces hold only sequence bytes; names hold no blank or control byte;
 *   - an error is sticky and has a message;
 *   - the records and sequences (or the fact of an error) equal those of a
 *     straightforward reference parser written from the documented rules
 *     (line ends \n, \r\n and lone \r, a leading byte-order mark, wrapped
 *     FASTQ, compressed formats refused by name), plain or gzip-compressed
 *     alike;
 *   - a gzip stream cut short is an error, never a silent end;
 *   - read again keeping every record's bytes (sm_reader_keep_raw): the
 *     same records and sequences, and the records' bytes follow each other
 *     through the (decompressed) content, each starting with its header,
 *     up to its very end when the read succeeds.
 *
 * The fuzz build compiles the reader with tiny buffers (see CMakeLists.txt)
 * so that every refill and piece boundary is reached by small inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "io/seqio.h"

#ifndef READER_RAW_CAP
#define READER_RAW_CAP (1u << 20)
#endif
#ifndef READER_PIECE_CAP
#define READER_PIECE_CAP (256u << 10)
#endif
#ifndef READER_NAME_MAX
#define READER_NAME_MAX (1u << 20)
#endif

typedef struct {
    int ok;          /* 1: read to the end; 0: an error */
    uint64_t digest; /* names, sequences and record lengths, in order */
    size_t records;
} outcome;

static uint64_t hash_record_end(uint64_t h, uint64_t length) { return fuzz_hash(h, &length, sizeof length); }

static int is_sequence_byte(uint8_t c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '.' || c == '*';
}

static int is_blank_byte(uint8_t c) { return c == ' ' || c == '\t'; }

/* ------------------------------------------------------------ the library */

/* The bytes the reader gives a record when keep_raw: they continue where
   the record before it ended, within the content (NULL: not checked). */
typedef struct {
    const uint8_t *content;
    size_t n;
    size_t at;    /* where the next record's bytes must start (after the first) */
    int started;
} raw_check;

static void check_raw(sm_reader *reader, sm_input_format format, raw_check *rc) {
    const uint8_t *data;
    size_t len;
    int stable;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (sm_reader_record_raw(reader, &data, &len, &stable, &err) < 0) return; /* the next call reports it */
    FUZZ_CHECK(data != NULL && (len > 0 || format == SM_INPUT_LINES), "a record of %zu raw bytes", len);
    if (!rc->content || !data) return;
    if (!rc->started) {
        /* the first record starts after a byte-order mark and blank lines */
        const uint8_t *hit = len ? NULL : rc->content + rc->n;
        for (size_t i = 0; !hit && i + len <= rc->n; i++)
            if (memcmp(rc->content + i, data, len) == 0) hit = rc->content + i;
        FUZZ_CHECK(hit != NULL, "the first record's %zu bytes are not in the content", len);
        if (!hit) return;
        rc->at = (size_t)(hit - rc->content);
        rc->started = 1;
    }
    FUZZ_CHECK(rc->at + len <= rc->n && memcmp(rc->content + rc->at, data, len) == 0,
               "a record's %zu raw bytes are not the content's at %zu", len, rc->at);
    if (format != SM_INPUT_LINES && len)
        FUZZ_CHECK(data[0] == (format == SM_INPUT_FASTQ ? '@' : '>') || format == SM_INPUT_AUTO,
                   "a record's bytes start with 0x%02X", (unsigned)data[0]);
    rc->at += len;
}

static outcome read_with_library(const char *path, sm_input_format format, raw_check *raw) {
    outcome out = {0, FUZZ_HASH_INIT, 0};
    sm_reader *reader = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (sm_reader_open(path, format, &reader, &err) != SM_OK) {
        FUZZ_CHECK(reader == NULL && err.code != SM_OK && err.message[0], "open failed without a message");
        return out;
    }
    int fasta_like = format == SM_INPUT_AUTO || format == SM_INPUT_FASTA || format == SM_INPUT_FASTQ;
    if (raw) sm_reader_keep_raw(reader);
    /* text and lines pieces of a file read in place (a mapped plain file) are
       cut at the reader's READER_MAPPED_PIECE, 16 MiB */
    size_t cap = fasta_like ? READER_PIECE_CAP : (READER_RAW_CAP > (16u << 20) ? READER_RAW_CAP : (16u << 20));
    size_t path_len = strlen(path);
    int rc;
    const char *name;
    while ((rc = sm_reader_next_record(reader, &name, &err)) == 1) {
        FUZZ_CHECK(name != NULL, "a record without a name");
        size_t name_len = strlen(name);
        if (fasta_like) {
            FUZZ_CHECK(name_len <= READER_NAME_MAX, "name of %zu bytes", name_len);
            for (size_t i = 0; i < name_len; i++)
                FUZZ_CHECK(!sm_name_end((uint8_t)name[i]), "name byte 0x%02X", (unsigned)(uint8_t)name[i]);
            out.digest = fuzz_hash(out.digest, name, name_len + 1);
        } else {
            /* text and lines records are named after the path */
            FUZZ_CHECK(strncmp(name, path, path_len) == 0, "record name '%s' does not start with the path", name);
            out.digest = fuzz_hash(out.digest, name + path_len, name_len - path_len + 1);
        }
        const uint8_t *data;
        size_t len;
        uint64_t length = 0;
        while ((rc = sm_reader_read(reader, &data, &len, &err)) == 1) {
            FUZZ_CHECK(data != NULL && len >= 1 && len <= cap, "piece of %zu bytes (cap %zu)", len, cap);
            if (fasta_like)
                for (size_t i = 0; i < len; i++)
                    FUZZ_CHECK(is_sequence_byte(data[i]), "sequence byte 0x%02X", (unsigned)data[i]);
            out.digest = fuzz_hash(out.digest, data, len);
            length += len;
        }
        if (rc < 0) break;
        FUZZ_CHECK(rc == 0 && data == NULL && len == 0, "end of record with a piece");
        if (raw && format != SM_INPUT_TEXT) check_raw(reader, sm_reader_format(reader), raw);
        out.digest = hash_record_end(out.digest, length);
        out.records++;
    }
    if (rc < 0) {
        FUZZ_CHECK(err.code != SM_OK && err.message[0], "an error without a message");
        /* sticky: every later call repeats it */
        sm_error again;
        memset(&again, 0, sizeof again);
        FUZZ_CHECK(sm_reader_next_record(reader, &name, &again) < 0 && again.code == err.code &&
                       strcmp(again.message, err.message) == 0,
                   "the error is not repeated: '%s' then '%s'", err.message, again.message);
    } else {
        out.ok = 1;
        if (raw && raw->content && raw->started)
            FUZZ_CHECK(raw->at == raw->n, "the records' bytes end at %zu of %zu", raw->at, raw->n);
        /* after the end: still the end */
        FUZZ_CHECK(sm_reader_next_record(reader, &name, &err) == 0, "a record after the end");
    }
    sm_reader_close(reader);
    return out;
}

/* ------------------------------------------------ the reference parser */

/* Written from the rules at the top of src/io/reader.c: lines end with \n,
   \r\n or a lone \r; a UTF-8 byte-order mark at the start of a FASTA or
   FASTQ file is skipped; bzip2, xz, zstd (and gzip read back as gzip) data
   is refused; FASTQ sequence and quality may be wrapped. */

typedef struct {
    const uint8_t *p;
    size_t n;
    size_t start; /* after a byte-order mark */
} bytes;

static int is_line_end(uint8_t c) { return c == '\n' || c == '\r'; }

static size_t skip_blanks_and_newlines(bytes in, size_t i) {
    while (i < in.n && (is_blank_byte(in.p[i]) || is_line_end(in.p[i]))) i++;
    return i;
}

static int at_line_start(bytes in, size_t i) { return i == in.start || is_line_end(in.p[i - 1]); }

/* The offset after the line end at or after i, or in.n when there is none. */
static size_t after_line(bytes in, size_t i) {
    while (i < in.n && !is_line_end(in.p[i])) i++;
    return i < in.n ? i + 1 : in.n;
}

/* The header at in.p[i] (its marker): hashes the name, returns the offset
   after the header line (in.n when it has no line end, and then sets *open),
   or (size_t)-1 on error. The name is at in.p[*name, *name + *name_len). */
static size_t reference_header_named(bytes in, size_t i, uint64_t *digest, int *open, size_t *name,
                                     size_t *name_len) {
    size_t a = i + 1, b = a;
    while (b < in.n && !sm_name_end(in.p[b])) b++;
    *name = a;
    *name_len = b - a;
    if (b - a > READER_NAME_MAX) return (size_t)-1;
    if (b < in.n && in.p[b] == 0) return (size_t)-1;
    *digest = fuzz_hash(*digest, in.p + a, b - a);
    *digest = fuzz_hash(*digest, "", 1);
    size_t next = after_line(in, b);
    *open = next == in.n && (next == b || !is_line_end(in.p[next - 1]));
    return next;
}

static size_t reference_header(bytes in, size_t i, uint64_t *digest, int *open) {
    size_t name, name_len;
    return reference_header_named(in, i, digest, open, &name, &name_len);
}

static outcome reference_fasta(bytes in) {
    outcome out = {0, FUZZ_HASH_INIT, 0};
    size_t i = skip_blanks_and_newlines(in, in.start);
    if (i == in.n) {
        out.ok = 1;
        return out;
    }
    if (in.p[i] != '>' || !at_line_start(in, i)) return out;
    while (i < in.n) {
        /* in.p[i] is a '>' starting its line */
        int open;
        i = reference_header(in, i, &out.digest, &open);
        if (i == (size_t)-1) return out;
        uint64_t length = 0;
        while (i < in.n && !(in.p[i] == '>' && at_line_start(in, i))) {
            uint8_t c = in.p[i++];
            if (is_sequence_byte(c)) {
                out.digest = fuzz_hash(out.digest, &c, 1);
                length++;
            } else if (!is_blank_byte(c) && !is_line_end(c)) {
                return out;
            }
        }
        out.digest = hash_record_end(out.digest, length);
        out.records++;
    }
    out.ok = 1;
    return out;
}

static outcome reference_fastq(bytes in) {
    outcome out = {0, FUZZ_HASH_INIT, 0};
    size_t i = in.start;
    for (;;) {
        i = skip_blanks_and_newlines(in, i);
        if (i == in.n) break;
        if (in.p[i] != '@' || !at_line_start(in, i)) return out;
        int open;
        size_t name, name_len;
        i = reference_header_named(in, i, &out.digest, &open, &name, &name_len);
        if (i == (size_t)-1 || open) return out; /* no sequence line */
        /* sequence lines up to a '+' starting a line; the input may not end first */
        uint64_t length = 0;
        for (;;) {
            if (i == in.n) return out;
            uint8_t c = in.p[i];
            if (c == '+' && at_line_start(in, i)) break;
            if (is_sequence_byte(c)) {
                out.digest = fuzz_hash(out.digest, &c, 1);
                length++;
            } else if (!is_blank_byte(c) && !is_line_end(c)) {
                return out;
            }
            i++;
        }
        /* the '+' line, then quality lines until they hold length bytes (one
           line, maybe empty, for an empty sequence) */
        /* a name after the '+' is the record's own */
        size_t pn = i + 1;
        while (pn < in.n && !sm_name_end(in.p[pn])) pn++;
        if (pn > i + 1 && (pn - i - 1 != name_len || memcmp(in.p + i + 1, in.p + name, name_len) != 0)) return out;
        size_t plus_end = after_line(in, i);
        int has_quality_lines = plus_end > i && is_line_end(in.p[plus_end - 1]);
        i = plus_end;
        uint64_t quality = 0;
        int lines = 0;
        while (has_quality_lines) {
            if (i < in.n && in.p[i] == '\n' && in.p[i - 1] == '\r') i++; /* a \r\n's \n */
            if (i == in.n) break;
            while (i < in.n && !is_line_end(in.p[i])) {
                uint8_t c = in.p[i++];
                if (c < '!' || c > '~') return out;
                quality++;
            }
            if (i < in.n) i++;
            lines++;
            if (quality >= length) break;
        }
        if ((lines == 0 && length > 0) || quality != length) return out;
        out.digest = hash_record_end(out.digest, length);
        out.records++;
    }
    out.ok = 1;
    return out;
}

static outcome reference_text(bytes in) {
    outcome out = {1, FUZZ_HASH_INIT, 1};
    out.digest = fuzz_hash(out.digest, "", 1); /* the name is the path */
    out.digest = fuzz_hash(out.digest, in.p, in.n);
    out.digest = hash_record_end(out.digest, in.n);
    return out;
}

static outcome reference_lines(bytes in) {
    outcome out = {1, FUZZ_HASH_INIT, 0};
    size_t i = 0;
    uint64_t line = 0;
    while (i < in.n) {
        size_t end = i;
        while (end < in.n && !is_line_end(in.p[end])) end++;
        size_t len = end - i;
        char name[32];
        snprintf(name, sizeof name, ":%llu", (unsigned long long)++line);
        out.digest = fuzz_hash(out.digest, name, strlen(name) + 1);
        out.digest = fuzz_hash(out.digest, in.p + i, len);
        out.digest = hash_record_end(out.digest, len);
        out.records++;
        i = end < in.n ? end + 1 : in.n;
        if (end < in.n && in.p[end] == '\r' && i < in.n && in.p[i] == '\n') i++;
    }
    return out;
}

/* Data compressed in a format the reader refuses by name. */
static int refused_compression(bytes in) {
    static const struct {
        const char *magic;
        size_t len;
    } magics[] = {{"\x1f\x8b", 2}, {"BZh", 3}, {"\xfd" "7zXZ\0", 6}, {"\x28\xb5\x2f\xfd", 4}};
    for (size_t k = 0; k < sizeof magics / sizeof magics[0]; k++)
        if (in.n >= magics[k].len && memcmp(in.p, magics[k].magic, magics[k].len) == 0) return 1;
    return 0;
}

static outcome read_with_reference(bytes in, sm_input_format format) {
    const outcome refused = {0, FUZZ_HASH_INIT, 0};
    if (format != SM_INPUT_TEXT && format != SM_INPUT_LINES) {
        if (refused_compression(in)) return refused;
        if (in.n >= 3 && memcmp(in.p, "\xef\xbb\xbf", 3) == 0) in.start = 3;
    }
    if (format == SM_INPUT_AUTO) {
        size_t i = skip_blanks_and_newlines(in, in.start);
        if (i < in.n && in.p[i] != '>' && in.p[i] != '@') return refused;
        format = i < in.n && in.p[i] == '@' ? SM_INPUT_FASTQ : SM_INPUT_FASTA;
    }
    switch (format) {
    case SM_INPUT_FASTQ: return reference_fastq(in);
    case SM_INPUT_TEXT: return reference_text(in);
    case SM_INPUT_LINES: return reference_lines(in);
    default: return reference_fasta(in);
    }
}

/* ---------------------------------------------------------------- entry */

/* Reads the file twice, the second time keeping the records' bytes, which
   are checked against content (the decompressed bytes; NULL: unknown). */
static outcome read_bytes(const uint8_t *data, size_t size, sm_input_format format, int *made, bytes *content) {
    fuzz_file file;
    *made = fuzz_file_make(&file, data, size) == 0;
    if (!*made) return (outcome){0, 0, 0};
    outcome out = read_with_library(file.path, format, NULL);
    raw_check raw = {content ? content->p : NULL, content ? content->n : 0, 0, 0};
    outcome kept = read_with_library(file.path, format, &raw);
    /* (before an error, how much was read depends on the buffer: only its fact counts) */
    FUZZ_CHECK(kept.ok == out.ok && (!out.ok || (kept.records == out.records && kept.digest == out.digest)),
               "keeping the records' bytes changed what was read (%zu and %zu records, %s and %s)", out.records,
               kept.records, out.ok ? "valid" : "error", kept.ok ? "valid" : "error");
    fuzz_file_remove(&file);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    sm_input_format format = (sm_input_format)(data[0] % 5);
    int container = (data[0] >> 3) & 3;
    bytes content = {data + 2, size - 2, 0};
    size_t split = (size_t)data[1] * content.n / 256;
    /* content that is itself gzip or zstd is decoded by the source first (zstd
       through libzstd in every format): no reference for it */
    int decoded_first = (content.n >= 2 && content.p[0] == 0x1f && content.p[1] == 0x8b) ||
                  (content.n >= 4 && memcmp(content.p, "\x28\xb5\x2f\xfd", 4) == 0);

    if (container == 0) {
        int made;
        outcome got = read_bytes(content.p, content.n, format, &made, decoded_first ? NULL : &content);
        if (!made || decoded_first) return 0;
        outcome want = read_with_reference(content, format);
        FUZZ_CHECK(got.ok == want.ok, "reader says %s, the reference %s", got.ok ? "valid" : "error",
                   want.ok ? "valid" : "error");
        FUZZ_CHECK(!got.ok || (got.records == want.records && got.digest == want.digest),
                   "reader and reference differ: %zu and %zu records", got.records, want.records);
        return 0;
    }
    size_t gz_size;
    uint8_t *gz = fuzz_gzip(content.p, content.n, container == 2, split, &gz_size);
    if (!gz) return 0;
    int made;
    if (container == 3) {
        /* cut short: anything from 2 bytes on is a gzip stream that ends early */
        size_t cut = gz_size > 2 ? 2 + (size_t)data[1] * (gz_size - 2) / 256 : gz_size;
        outcome got = read_bytes(gz, cut, format, &made, NULL);
        FUZZ_CHECK(!made || cut < 2 || !got.ok, "a gzip stream cut at %zu of %zu bytes read as complete", cut,
                   gz_size);
    } else {
        outcome got = read_bytes(gz, gz_size, format, &made, decoded_first ? NULL : &content);
        if (made && !decoded_first) {
            outcome want = read_with_reference(content, format);
            FUZZ_CHECK(got.ok == want.ok && (!got.ok || (got.records == want.records && got.digest == want.digest)),
                       "gzip input: reader (%s, %zu records) and reference (%s, %zu records) differ",
                       got.ok ? "valid" : "error", got.records, want.ok ? "valid" : "error", want.records);
        }
    }
    free(gz);
    return 0;
}
