/* Fuzz target: the reader's byte ranges (sm_reader_open_range), by which
 * the MPI and shard layer gives each rank its share of a plain or BGZF
 * file.
 *
 * Input: byte 0 picks the format (bits 0-1: FASTA, FASTQ, text, lines),
 * plain or BGZF (bit 2), the threads of a BGZF reader (bit 3: 1 or 3) and
 * the largest BGZF block (bits 4-7: 1 to 76 bytes of data); bytes 1-2 pick
 * 1 to 4 cut points (bits 0-1: how many less one; the first at bits 2-15
 * modulo the file size plus one, the others drawn from a generator seeded
 * with both bytes); the rest is the content, written as is or as BGZF
 * (blocks of sizes drawn likewise, now and then an empty one), and the
 * file, plain or compressed, is cut at those byte offsets.
 *
 * Checked, besides memory safety (tests/common/range_check.c, shared with
 * tests/unit/test_range.c): the ranges read one by one and put together
 * give exactly the whole-file reader's records, names and sequence bytes;
 * the bytes read past a cut record's range end are the record's next ones.
 * FASTQ ranges may instead refuse (neighbours that disagree on where the
 * records lie, or a range that fails to read), since wrapped FASTQ can fool
 * the four-line rule: never give wrong bytes. FASTA, text and lines never
 * refuse a file that the whole-file reader reads. Content the whole-file
 * reader refuses is still read as ranges, unchecked.
 *
 * The reader runs with tiny buffers (SM_FUZZ_READER_CAPS) so that small
 * inputs reach every refill and piece boundary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "io/seqio.h"
#include "range_check.h"
#include "testutil.h"

static const sm_input_format formats[4] = {SM_INPUT_FASTA, SM_INPUT_FASTQ, SM_INPUT_TEXT, SM_INPUT_LINES};
static const char *const format_names[4] = {"FASTA", "FASTQ", "text", "lines"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    sm_input_format format = formats[data[0] & 3];
    const char *what = format_names[data[0] & 3];
    int bgzf = (data[0] >> 2) & 1;
    unsigned threads = bgzf && (data[0] & 8) ? 3 : 1;
    size_t max_block = 1 + (size_t)(data[0] >> 4) * 5;
    unsigned pick = data[1] | (unsigned)data[2] << 8;
    const uint8_t *content = data + 3;
    size_t n = size - 3;
    /* content that is itself gzip would be read as such: not a plain file */
    if (!bgzf && n >= 2 && content[0] == 0x1f && content[1] == 0x8b) return 0;

    tu_rng rng;
    tu_rng_seed(&rng, pick);
    uint8_t *packed = NULL;
    const uint8_t *file = content;
    size_t file_size = n;
    if (bgzf) {
        packed = malloc(range_bgzf_bound(n));
        if (!packed) return 0;
        file_size = range_bgzf_of(&rng, content, n, max_block, packed);
        FUZZ_CHECK(file_size > 0, "BGZF of %zu bytes could not be written", n);
        file = packed;
    }
    /* an empty file is read whole by whoever holds its place, never as ranges */
    if (file_size == 0) {
        free(packed);
        return 0;
    }

    /* 0, the cut points (sorted; equal ones make empty ranges), the size */
    uint64_t cuts[6];
    size_t ncut = 1 + (pick & 3);
    cuts[0] = 0;
    cuts[1] = (pick >> 2) % (file_size + 1);
    for (size_t i = 2; i <= ncut; i++) cuts[i] = tu_rng_next(&rng) % (file_size + 1);
    for (size_t i = 2; i <= ncut; i++)
        for (size_t j = i; j > 1 && cuts[j - 1] > cuts[j]; j--) {
            uint64_t x = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = x;
        }
    cuts[ncut + 1] = file_size;

    fuzz_file f;
    if (fuzz_file_make(&f, file, file_size) != 0) {
        free(packed);
        return 0;
    }
    char why[400];
    range_recs whole = {0};
    if (range_read_whole(f.path, format, &whole) != 0) {
        /* not a file this format reads: the ranges must only not crash */
        range_recs_free(&whole);
        range_recs parts = {0};
        (void)range_read_split(f.path, format, threads, cuts, ncut + 2, &parts, why, sizeof why);
        range_recs_free(&parts);
    } else {
        int rc = range_compare(f.path, format, threads, cuts, ncut + 2, &whole, why, sizeof why);
        range_recs_free(&whole);
        char where[80];
        int at = 0;
        for (size_t i = 1; i <= ncut && at < (int)sizeof where - 24; i++)
            at += snprintf(where + at, sizeof where - (size_t)at, "%s%llu", i > 1 ? " " : "",
                           (unsigned long long)cuts[i]);
        FUZZ_CHECK(rc != RANGE_WRONG, "%s%s cut at %s of %zu: wrong records: %s", bgzf ? "BGZF " : "", what, where,
                   file_size, why);
        FUZZ_CHECK(rc == RANGE_SAME || format == SM_INPUT_FASTQ, "%s%s cut at %s of %zu: refused: %s",
                   bgzf ? "BGZF " : "", what, where, file_size, why);
    }
    fuzz_file_remove(&f);
    free(packed);
    return 0;
}
