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
 *     straightforward reference parser written from the documented rules,
 *     plain or gzip-compressed alike;
 *   - a gzip stream cut short is an error, never a silent end.
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

static int is_blank_byte(uint8_t c) { return c == ' ' || c == '\t' || c == '\r'; }

/* ------------------------------------------------------------ the library */

static outcome read_with_library(const char *path, sm_input_format format) {
    outcome out = {0, FUZZ_HASH_INIT, 0};
    sm_reader *reader = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (sm_reader_open(path, format, &reader, &err) != SM_OK) {
        FUZZ_CHECK(reader == NULL && err.code != SM_OK && err.message[0], "open failed without a message");
        return out;
    }
    int fasta_like = format == SM_INPUT_AUTO || format == SM_INPUT_FASTA || format == SM_INPUT_FASTQ;
    size_t cap = fasta_like ? READER_PIECE_CAP : READER_RAW_CAP;
    size_t path_len = strlen(path);
    int rc;
    const char *name;
    while ((rc = sm_reader_next_record(reader, &name, &err)) == 1) {
        FUZZ_CHECK(name != NULL, "a record without a name");
        size_t name_len = strlen(name);
        if (fasta_like) {
            FUZZ_CHECK(name_len <= READER_NAME_MAX, "name of %zu bytes", name_len);
            for (size_t i = 0; i < name_len; i++)
                FUZZ_CHECK((uint8_t)name[i] > ' ', "name byte 0x%02X", (unsigned)(uint8_t)name[i]);
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
        /* after the end: still the end */
        FUZZ_CHECK(sm_reader_next_record(reader, &name, &err) == 0, "a record after the end");
    }
    sm_reader_close(reader);
    return out;
}

/* ------------------------------------------------ the reference parser */

typedef struct {
    const uint8_t *p;
    size_t n;
} bytes;

static size_t skip_blanks_and_newlines(bytes in, size_t i) {
    while (i < in.n && (is_blank_byte(in.p[i]) || in.p[i] == '\n')) i++;
    return i;
}

/* The header at in.p[i] (its marker): hashes the name, returns the offset
   after the header line (in.n when it has no \n), or (size_t)-1 on error. */
static size_t reference_header(bytes in, size_t i, uint64_t *digest) {
    size_t a = i + 1, b = a;
    while (b < in.n && in.p[b] > ' ') b++;
    if (b - a > READER_NAME_MAX) return (size_t)-1;
    if (b < in.n && in.p[b] == 0) return (size_t)-1;
    *digest = fuzz_hash(*digest, in.p + a, b - a);
    *digest = fuzz_hash(*digest, "", 1);
    const uint8_t *nl = memchr(in.p + b, '\n', in.n - b);
    return nl ? (size_t)(nl - in.p) + 1 : in.n;
}

static int at_line_start(bytes in, size_t i) { return i == 0 || in.p[i - 1] == '\n'; }

static outcome reference_fasta(bytes in) {
    outcome out = {0, FUZZ_HASH_INIT, 0};
    size_t i = skip_blanks_and_newlines(in, 0);
    if (i == in.n) {
        out.ok = 1;
        return out;
    }
    if (in.p[i] != '>' || !at_line_start(in, i)) return out;
    while (i < in.n) {
        /* in.p[i] is a '>' starting its line */
        i = reference_header(in, i, &out.digest);
        if (i == (size_t)-1) return out;
        uint64_t length = 0;
        while (i < in.n && !(in.p[i] == '>' && at_line_start(in, i))) {
            uint8_t c = in.p[i++];
            if (is_sequence_byte(c)) {
                out.digest = fuzz_hash(out.digest, &c, 1);
                length++;
            } else if (!is_blank_byte(c) && c != '\n') {
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
    size_t i = 0;
    for (;;) {
        i = skip_blanks_and_newlines(in, i);
        if (i == in.n) break;
        if (in.p[i] != '@' || !at_line_start(in, i)) return out;
        i = reference_header(in, i, &out.digest);
        if (i == (size_t)-1 || i == in.n) return out; /* no sequence line */
        /* the sequence line must end with \n */
        const uint8_t *nl = memchr(in.p + i, '\n', in.n - i);
        if (!nl) return out;
        size_t line_end = (size_t)(nl - in.p);
        uint64_t length = 0;
        for (; i < line_end; i++) {
            uint8_t c = in.p[i];
            if (is_sequence_byte(c)) {
                out.digest = fuzz_hash(out.digest, &c, 1);
                length++;
            } else if (!is_blank_byte(c)) {
                return out;
            }
        }
        i = line_end + 1;
        if (i == in.n || in.p[i] != '+') return out;
        nl = memchr(in.p + i, '\n', in.n - i);
        uint64_t quality = 0;
        if (nl) {
            i = (size_t)(nl - in.p) + 1;
            const uint8_t *q_end = memchr(in.p + i, '\n', in.n - i);
            size_t end = q_end ? (size_t)(q_end - in.p) : in.n;
            for (; i < end; i++) {
                uint8_t c = in.p[i];
                if (c >= '!' && c <= '~') quality++;
                else if (c != '\r') return out;
            }
            if (q_end) i = end + 1;
        } else {
            i = in.n; /* the input ends in the '+' line: no quality line */
        }
        if (quality != length) return out;
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
        const uint8_t *nl = memchr(in.p + i, '\n', in.n - i);
        size_t end = nl ? (size_t)(nl - in.p) : in.n;
        size_t len = end - i;
        if (len && in.p[end - 1] == '\r') len--;
        char name[32];
        snprintf(name, sizeof name, ":%llu", (unsigned long long)++line);
        out.digest = fuzz_hash(out.digest, name, strlen(name) + 1);
        out.digest = fuzz_hash(out.digest, in.p + i, len);
        out.digest = hash_record_end(out.digest, len);
        out.records++;
        i = nl ? end + 1 : in.n;
    }
    return out;
}

static outcome read_with_reference(bytes in, sm_input_format format) {
    if (format == SM_INPUT_AUTO) {
        size_t i = skip_blanks_and_newlines(in, 0);
        if (i < in.n && in.p[i] != '>' && in.p[i] != '@') return (outcome){0, FUZZ_HASH_INIT, 0};
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

static outcome read_bytes(const uint8_t *data, size_t size, sm_input_format format, int *made) {
    fuzz_file file;
    *made = fuzz_file_make(&file, data, size) == 0;
    if (!*made) return (outcome){0, 0, 0};
    outcome out = read_with_library(file.path, format);
    fuzz_file_remove(&file);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    sm_input_format format = (sm_input_format)(data[0] % 5);
    int container = (data[0] >> 3) & 3;
    bytes content = {data + 2, size - 2};
    size_t split = (size_t)data[1] * content.n / 256;
    int is_gzip = content.n >= 2 && content.p[0] == 0x1f && content.p[1] == 0x8b;

    if (container == 0) {
        int made;
        outcome got = read_bytes(content.p, content.n, format, &made);
        /* content that is itself gzip is decompressed first: no reference */
        if (!made || is_gzip) return 0;
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
        outcome got = read_bytes(gz, cut, format, &made);
        FUZZ_CHECK(!made || cut < 2 || !got.ok, "a gzip stream cut at %zu of %zu bytes read as complete", cut,
                   gz_size);
    } else {
        outcome got = read_bytes(gz, gz_size, format, &made);
        if (made && !is_gzip) {
            outcome want = read_with_reference(content, format);
            FUZZ_CHECK(got.ok == want.ok && (!got.ok || (got.records == want.records && got.digest == want.digest)),
                       "gzip input: reader (%s, %zu records) and reference (%s, %zu records) differ",
                       got.ok ? "valid" : "error", got.records, want.ok ? "valid" : "error", want.records);
        }
    }
    free(gz);
    return 0;
}
