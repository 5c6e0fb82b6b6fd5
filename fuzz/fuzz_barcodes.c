/* Fuzz target: demux's table of barcode pairs (sm_barcode_pairs_parse,
 * src/io/barcodes.c) and the record rewrite of --trim / --barcode-tag
 * (sm_record_rewrite, sm_record_seq_end; include/seqmatch_reader.h). An
 * input is an option byte, the table up to a NUL byte, then one record's
 * bytes (FASTA or FASTQ as read).
 *
 * Checked, besides memory safety:
 *   - a refused table says why and gives no pairs; a table whose first data
 *     line has two fields gives none and no error; otherwise every sample
 *     name is non-empty, holds no tab or line end and no space at its ends;
 *   - a small accepted table compiles (exact, forward strand; or -k 1);
 *   - a barcode covers its length (exact) or, with -k 1, a base more or
 *     less at most, or nothing (sm_barcode_span);
 *   - the record's ends are at most n bytes, NUL-terminated, the same
 *     from either end when the record is shorter than n; the end reverse
 *     complemented mirrors it; a tag alone makes
 *     the record longer by the tag and a space, and is found in the header. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_reader.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || size > 1 << 16) return 0;
    uint8_t opt = data[0];
    const uint8_t *nul = memchr(data + 1, 0, size - 1);
    size_t table_len = nul ? (size_t)(nul - (data + 1)) : size - 1;
    const uint8_t *rec = nul ? nul + 1 : data + size;
    size_t rec_len = (size_t)(data + size - rec);

    sm_barcode_pairs *pairs = NULL;
    sm_db *db = NULL;
    sm_error err;
    int rc = sm_barcode_pairs_parse((const char *)data + 1, table_len, "table", &pairs, &err);
    if (rc != SM_OK) {
        if (pairs || !err.message[0]) abort();
    } else if (pairs) {
        size_t n = sm_barcode_pairs_samples(pairs);
        if (n == 0) abort();
        for (size_t i = 0; i < n; i++) {
            const char *s = sm_barcode_pairs_sample(pairs, i);
            size_t len = strlen(s);
            if (len == 0 || strpbrk(s, "\t\n") || s[0] == ' ' || s[len - 1] == ' ') abort();
        }
        if (n <= 32 && (opt & 1)) {
            sm_compile_options co;
            sm_compile_options_init(&co);
            if (opt & 128) co.match = SM_MATCH_EDITS, co.max_errors = 1; /* refused for 1-symbol barcodes */
            if (sm_barcode_pairs_compile(pairs, &co, (opt >> 1) & 1, &db, &err) != SM_OK && !(opt & 128)) abort();
        }
        sm_barcode_pairs_free(pairs);
    }

    if (rec_len == 0 || (rec[0] != '@' && rec[0] != '>')) {
        sm_db_free(db);
        return 0;
    }
    /* what a barcode covers: its length, or with -k 1 within one of it (0: no alignment) */
    for (uint32_t p = 0; db && p < 8; p++) {
        size_t m;
        if (!sm_db_pattern_seq(db, p, &m)) break;
        size_t span = sm_barcode_span(db, p, (int)(opt >> 1 & 1) - (opt >> 5 & 1), rec, rec_len, (opt >> 6) & 1);
        if ((opt & 128) ? span && (span > m + 1 || span + 1 < m) : span != m) abort();
    }
    sm_db_free(db);
    size_t want = (opt >> 2) & 15;
    char start[20], end[20];
    size_t a = sm_record_seq_end(rec, rec_len, 0, want, start);
    size_t b = sm_record_seq_end(rec, rec_len, 1, want, end);
    /* (the bytes are as read: a NUL inside the sequence stays a byte) */
    if (a > want || b > want || a != b || start[a] != '\0' || end[b] != '\0') abort();
    if (a < want && memcmp(start, end, a) != 0) abort();
    char rc_end[20]; /* the end reverse complemented: as long, A<->T and C<->G mirrored */
    if (sm_record_seq_end(rec, rec_len, 3, want, rc_end) != b || rc_end[b] != '\0') abort();
    for (size_t i = 0; i < b; i++) {
        const char *acgt = "ACGTacgt", *pos = end[b - 1 - i] ? strchr(acgt, end[b - 1 - i]) : NULL;
        if (pos && rc_end[i] != "TGCAtgca"[pos - acgt]) abort();
    }
    uint8_t *out = NULL;
    size_t out_len = 0, cap = 0;
    const char *tag = "BC:Z:ACGT-GG";
    if (sm_record_rewrite(rec, rec_len, tag, 0, 0, &out, &out_len, &cap) != SM_OK) abort();
    if (out_len != rec_len + strlen(tag) + 1) abort();
    const uint8_t *line_end = memchr(out, '\n', out_len);
    size_t header = line_end ? (size_t)(line_end - out) : out_len;
    if (header < strlen(tag) || !memmem(out, header, tag, strlen(tag))) abort();
    /* a cut record: whatever the record, no failure but a format one */
    rc = sm_record_rewrite(rec, rec_len, (opt & 64) ? tag : NULL, opt & 3, (opt >> 4) & 3, &out, &out_len, &cap);
    if (rc != SM_OK && rc != SM_ERR_FORMAT) abort();
    free(out);
    return 0;
}
