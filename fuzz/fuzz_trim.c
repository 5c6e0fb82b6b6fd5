/* Fuzz target: adapter trimming (sm_trim_set_add, sm_trimmer_*,
 * sm_trim_record; include/seqmatch_reader.h). An input is an option byte,
 * up to four adapter specifications (one per line, as cutadapt writes them:
 * ^, $, ..., any bytes), a NUL, then the reads (FASTA, FASTQ or garbage;
 * read also as mate 2 of a pair when asked).
 *
 * An adapter is taken or refused with a message; a run ends with SM_OK or
 * an error with a message, never a crash. A run that succeeds hands back
 * its reads in order with cuts inside the reads, kept as minimum_length
 * says, each record a header, one sequence line of the part kept and (FASTQ)
 * a quality line as long, written again unchanged by sm_trim_record with no
 * cut; the same output on 1 and 3 threads with a small chunk size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_reader.h"
#include "fuzz_support.h"

typedef struct {
    uint64_t hash, records;
    uint64_t minimum_length;
    uint8_t *again;
    size_t again_cap;
} seen;

static int on_record(void *ctx, const sm_trimmed_record *r) {
    seen *s = ctx;
    int kept = 1;
    s->records++;
    for (unsigned m = 0; m < r->mates; m++) {
        const sm_trim_cut *c = &r->cut[m];
        FUZZ_CHECK(c->start <= c->end && c->end <= r->length[m], "cut [%llu, %llu) of a read of %llu",
                   (unsigned long long)c->start, (unsigned long long)c->end, (unsigned long long)r->length[m]);
        FUZZ_CHECK(c->adapter >= 0 || (c->start == 0 && c->end == r->length[m]), "a cut without an adapter");
        if (c->end - c->start < s->minimum_length) kept = 0;
        /* header, the sequence kept on one line, '+' and as many qualities */
        const uint8_t *p = r->bytes[m], *end = p + r->len[m];
        const uint8_t *nl = memchr(p, '\n', r->len[m]);
        FUZZ_CHECK(nl && (p[0] == '@' || p[0] == '>'), "no header line");
        const uint8_t *seq = nl + 1, *seq_end = memchr(seq, '\n', (size_t)(end - seq));
        FUZZ_CHECK(seq_end, "no sequence line");
        size_t n = (size_t)(seq_end - seq) - (seq_end > seq && seq_end[-1] == '\r');
        FUZZ_CHECK(n == c->end - c->start, "sequence line of %zu bytes for a part of %llu", n,
                   (unsigned long long)(c->end - c->start));
        size_t len = 0;
        int st = sm_trim_record(r->bytes[m], r->len[m], 0, 0, &s->again, &len, &s->again_cap);
        FUZZ_CHECK(st == SM_OK && len == r->len[m] && memcmp(s->again, r->bytes[m], len) == 0,
                   "a trimmed record is not written again unchanged (status %d)", st);
        s->hash = fuzz_hash(s->hash, r->bytes[m], r->len[m]);
        s->hash = fuzz_hash(s->hash, c, sizeof *c);
    }
    FUZZ_CHECK(r->kept == kept, "kept %d, minimum length says %d", r->kept, kept);
    return 0;
}

static int run(const sm_db *db, const sm_trim_set *set, uint32_t overlap, uint64_t minimum_length, unsigned threads,
               size_t chunk, const char *p1, const char *p2, seen *s) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    ro.min_overlap = overlap;
    s->minimum_length = minimum_length;
    sm_trim_options to = {.set = set, .minimum_length = minimum_length, .reader_threads = 1, .ctx = s,
                          .on_record = on_record};
    sm_trimmer *t = NULL;
    sm_error err;
    int st = sm_trimmer_new(db, &ro, &to, &t, &err);
    if (st != SM_OK) {
        FUZZ_CHECK(err.message[0], "a refused trimmer without a message");
        return st;
    }
    st = sm_trimmer_run(t, p1, p2, &err);
    if (st != SM_OK) FUZZ_CHECK(err.message[0], "a failed run without a message (status %d)", st);
    sm_trimmer_free(t);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || size > 1 << 16) return 0;
    uint8_t opt = data[0];
    const uint8_t *nul = memchr(data + 1, 0, size - 1);
    if (!nul) return 0;
    sm_trim_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    /* the adapters: lines of data[1, nul) */
    const uint8_t *p = data + 1;
    for (int i = 0; i < 4 && p < nul; i++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(nul - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(nul - p);
        char spec[256];
        if (n >= sizeof spec) n = sizeof spec - 1;
        memcpy(spec, p, n);
        spec[n] = 0;
        size_t before = set.patterns.count;
        int st = sm_trim_set_add(&set, spec, (opt >> 6) & 1 ? SM_TRIM_FRONT : SM_TRIM_BACK, &err);
        if (st != SM_OK) {
            FUZZ_CHECK(err.message[0], "adapter '%s' refused without a message", spec);
            FUZZ_CHECK(set.patterns.count == before, "a refused adapter left a pattern");
        } else if (opt & 0x80) {
            set.adapters[set.count - 1].mate = (uint8_t)(1 + (i & 1));
        }
        p += n + 1;
    }
    unsigned k = opt & 3; /* 0 exact, 1 or 2 mismatches, 3: one edit */
    uint32_t overlap = ((opt >> 2) & 1) ? 0 : (k == 3 ? 1 : k) + 1 + ((opt >> 3) & 1);
    uint64_t minimum_length = (opt >> 4) & 1 ? 5 : 0;
    int paired = (opt >> 5) & 1;
    sm_db *db = NULL;
    if (set.count > 0) {
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.strands = SM_STRAND_FORWARD;
        co.match = k == 0 ? SM_MATCH_EXACT : k == 3 ? SM_MATCH_EDITS : SM_MATCH_MISMATCHES;
        co.max_errors = k == 3 ? 1 : k;
        if (sm_compile(set.patterns.items, set.patterns.count, &co, &db, &err) != SM_OK) db = NULL;
    }
    fuzz_file reads;
    const uint8_t *body = nul + 1;
    size_t body_len = size - (size_t)(body - data);
    if (db && fuzz_file_make(&reads, body, body_len) == 0) {
        seen one = {FUZZ_HASH_INIT, 0, 0, NULL, 0}, three = {FUZZ_HASH_INIT, 0, 0, NULL, 0};
        const char *p2 = paired ? reads.path : NULL;
        int a = run(db, &set, overlap, minimum_length, 1, 0, reads.path, p2, &one);
        int b = run(db, &set, overlap, minimum_length, 3, 7, reads.path, p2, &three);
        FUZZ_CHECK(a == b, "status %d on 1 thread, %d on 3", a, b);
        if (a == SM_OK)
            FUZZ_CHECK(one.hash == three.hash && one.records == three.records, "1 and 3 threads differ");
        free(one.again);
        free(three.again);
        fuzz_file_remove(&reads);
    }
    if (db) sm_db_free(db);
    sm_trim_set_free(&set);
    return 0;
}
