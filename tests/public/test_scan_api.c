/* sm_runner_scan_reader's record-at-a-time options (include/seqmatch_reader.h)
 * through the installed headers only, against sm_scan of each record's
 * sequence (the oracle) and the bytes as written:
 *   - paired files read in step (both mates fed, mate 1 only, mate 2 only):
 *     on_pair per pair with both names, on_record_begin / on_record_read per
 *     mate with its bytes (sm_reader_record_raw), both mates read before the
 *     pair's last fed record ends (end_record) and is done (on_record_done);
 *     files of different
 *     lengths (on_pair's NULL name; SM_ERR_FORMAT without it);
 *   - begin_record / end_record in the caller's hands, with each record's
 *     length, and continued / cut records of two byte ranges;
 *   - a resumable scan paused after every piece and record end, called
 *     again until its end: the hits, names and sequences of one whole run;
 *   - the options' size: fields past it are not read; mate with resumable
 *     refused. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seqmatch_reader.h>

#include "check.h"

#define RECORDS 120
#define MATES_RECORDS RECORDS
#include "mates.h"
#define MAX_HITS 20000

static char dir[] = "/tmp/sm_scan_api_XXXXXX";
static const sm_db *db;

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

/* Random FASTQ mates (FASTA with fasta) with the patterns' sites. */
static const mates_shape shape = {7, 1, 700, "ACGTGAATTCGGATCCACGT", "x"};
#define make_records(fasta) mates_make(db, &shape, fasta)

static void write_mate(const char *path, int m, int records) {
    FILE *f = fopen(path, "wb");
    for (int r = 0; r < records; r++) fputs(text[m][r], f);
    fclose(f);
}

/* ------------------------------------------------------------- pairs */

typedef struct {
    const char *what;
    unsigned scan_mates;
    int pairs, begun, read_calls, done_calls, ends;
    int pair_of[2 * RECORDS], mate_of[2 * RECORDS]; /* by runner record */
    int read_of[2][RECORDS];                         /* on_record_read seen */
    uint64_t hits[2 * RECORDS];
    int null_name_pair; /* on_pair: the pair where a name was NULL (-1 none) */
    int stop_on_null;
} pairs_seen;

static int on_pair(void *ctx, uint64_t pair, const char *name, const char *mate_name) {
    pairs_seen *p = ctx;
    if (!name || !mate_name) {
        p->null_name_pair = (int)pair;
        return p->stop_on_null;
    }
    char want[32];
    snprintf(want, sizeof want, "%d/1", (int)pair);
    CHECK(strcmp(name, want) == 0, "%s: pair %d: name %s", p->what, (int)pair, name);
    snprintf(want, sizeof want, "%d/2", (int)pair);
    CHECK(strcmp(mate_name, want) == 0, "%s: pair %d: mate's name %s", p->what, (int)pair, mate_name);
    CHECK((int)pair == p->pairs, "%s: pair %d after %d", p->what, (int)pair, p->pairs);
    p->pairs++;
    return 0;
}

static int is_fed(const pairs_seen *p, unsigned mate) { return p->scan_mates == 0 || (p->scan_mates & mate) != 0; }

static int on_record_begin(void *ctx, const sm_scan_record *rec) {
    pairs_seen *p = ctx;
    int fed = is_fed(p, rec->mate);
    CHECK(fed == (rec->number != UINT64_MAX), "%s: pair %d mate %u: number %llu", p->what, p->pairs - 1, rec->mate,
          (unsigned long long)rec->number);
    if (fed && rec->number < 2 * RECORDS) {
        p->pair_of[rec->number] = p->pairs - 1;
        p->mate_of[rec->number] = (int)rec->mate - 1;
    }
    p->begun++;
    return 0;
}

static int on_record_read(void *ctx, const sm_scan_record *rec) {
    pairs_seen *p = ctx;
    int r = p->pairs - 1, m = (int)rec->mate - 1;
    const uint8_t *raw;
    size_t len;
    sm_error err;
    CHECK(sm_reader_record_raw(rec->reader, &raw, &len, NULL, &err) == 1, "%s: raw: %s", p->what, err.message);
    size_t n = strlen(text[m][r]);
    CHECK(len == n && memcmp(raw, text[m][r], n) == 0, "%s: pair %d mate %d: bytes", p->what, r, m + 1);
    if (rec->number != UINT64_MAX)
        CHECK(rec->length == strlen(seq[m][r]), "%s: pair %d mate %d: length %llu", p->what, r, m + 1,
              (unsigned long long)rec->length);
    p->read_of[m][r] = 1;
    p->read_calls++;
    return 0;
}

static int pair_hit(const sm_hit *hit, void *ctx) {
    pairs_seen *p = ctx;
    if (hit->record < 2 * RECORDS) p->hits[hit->record]++;
    return 0;
}

/* A pair's last fed record is done: both its mates were read before. */
static void pair_done(uint64_t record, void *ctx) {
    pairs_seen *p = ctx;
    if (record >= 2 * RECORDS) return;
    int r = p->pair_of[record], last = p->scan_mates != 0 || p->mate_of[record] == 1;
    if (last) CHECK(p->read_of[0][r] && p->read_of[1][r], "%s: pair %d done before both mates were read", p->what, r);
    p->done_calls++;
}

/* The runner's end of a pair's last fed record comes after both mates were read. */
static int pair_end(void *ctx, sm_runner *runner, const sm_scan_record *rec) {
    pairs_seen *p = ctx;
    int r = p->pairs - 1, last = p->scan_mates != 0 || rec->mate == 2;
    if (last) CHECK(p->read_of[0][r] && p->read_of[1][r], "%s: pair %d ended before both mates were read", p->what, r);
    p->ends++;
    return sm_runner_end_record(runner);
}

static sm_runner *runner_for(unsigned threads, size_t chunk, sm_hit_fn on_hit, void (*done)(uint64_t, void *),
                             void *ctx) {
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    ro.on_hit = on_hit;
    ro.on_record_done = done;
    ro.ctx = ctx;
    sm_runner *runner = NULL;
    sm_error err;
    CHECK(sm_runner_create(db, &ro, &runner, &err) == SM_OK, "runner: %s", err.message);
    return runner;
}

static void run_pairs(const char *p1, const char *p2, unsigned threads, unsigned scan_mates) {
    pairs_seen *p = calloc(1, sizeof *p);
    char what[96];
    snprintf(what, sizeof what, "pairs threads %u scan_mates %u", threads, scan_mates);
    p->what = what;
    p->scan_mates = scan_mates;
    p->null_name_pair = -1;
    sm_runner *runner = runner_for(threads, 256, pair_hit, pair_done, p);
    sm_reader *r1 = NULL, *r2 = NULL;
    sm_error err;
    CHECK(sm_reader_open_threads(p1, SM_INPUT_AUTO, threads, &r1, &err) == SM_OK, "open: %s", err.message);
    CHECK(sm_reader_open_threads(p2, SM_INPUT_AUTO, threads, &r2, &err) == SM_OK, "open: %s", err.message);
    sm_reader_keep_raw(r1);
    sm_reader_keep_raw(r2);
    sm_scan_reader_options o;
    sm_scan_reader_options_init(&o);
    o.ctx = p;
    o.mate = r2;
    o.scan_mates = scan_mates;
    o.on_pair = on_pair;
    o.on_record_begin = on_record_begin;
    o.on_record_read = on_record_read;
    if (threads == 2) o.end_record = pair_end;
    o.piece = 33;
    int rc = sm_runner_scan_reader(runner, r1, &o, &err);
    CHECK(rc == SM_OK, "%s: scan: %d %s", what, rc, err.message);
    CHECK(sm_runner_flush(runner) == SM_OK, "%s: flush", what);
    int per_pair = scan_mates == 0 ? 2 : 1;
    CHECK(p->pairs == RECORDS && p->begun == 2 * RECORDS && p->read_calls == 2 * RECORDS &&
              p->done_calls == per_pair * RECORDS && p->ends == (threads == 2 ? per_pair * RECORDS : 0),
          "%s: %d pairs, %d begun, %d read, %d done", what, p->pairs, p->begun, p->read_calls, p->done_calls);
    for (int id = 0; id < per_pair * RECORDS; id++) {
        int r = p->pair_of[id], m = p->mate_of[id];
        CHECK(is_fed(p, (unsigned)m + 1), "%s: record %d is mate %d", what, id, m + 1);
        CHECK(p->hits[id] == want_hits[m][r], "%s: pair %d mate %d: %llu hits, want %llu", what, r, m + 1,
              (unsigned long long)p->hits[id], (unsigned long long)want_hits[m][r]);
    }
    sm_reader_close(r1);
    sm_reader_close(r2);
    sm_runner_free(runner);
    free(p);
}

/* Mate files of different lengths: on_pair sees the NULL name; without
   on_pair the scan fails with SM_ERR_FORMAT. */
static void run_uneven(const char *p1, const char *short2) {
    for (int with_cb = 0; with_cb < 2; with_cb++) {
        pairs_seen *p = calloc(1, sizeof *p);
        p->what = "uneven";
        p->null_name_pair = -1;
        p->stop_on_null = 1;
        sm_runner *runner = runner_for(1, 0, pair_hit, NULL, p);
        sm_reader *r1 = NULL, *r2 = NULL;
        sm_error err;
        CHECK(sm_reader_open(p1, SM_INPUT_AUTO, &r1, &err) == SM_OK, "open");
        CHECK(sm_reader_open(short2, SM_INPUT_AUTO, &r2, &err) == SM_OK, "open");
        sm_scan_reader_options o;
        sm_scan_reader_options_init(&o);
        o.ctx = p;
        o.mate = r2;
        o.on_pair = with_cb ? on_pair : NULL;
        int rc = sm_runner_scan_reader(runner, r1, &o, &err);
        if (with_cb)
            CHECK(rc == SM_ERR_TERMINATED && p->null_name_pair == RECORDS / 2 && p->pairs == RECORDS / 2,
                  "uneven with on_pair: %d, NULL at %d after %d pairs", rc, p->null_name_pair, p->pairs);
        else
            CHECK(rc == SM_ERR_FORMAT && err.code == SM_ERR_FORMAT && err.message[0], "uneven: %d '%s'", rc,
                  err.message);
        sm_reader_close(r1);
        sm_reader_close(r2);
        sm_runner_free(runner);
        free(p);
    }
}

/* ----------------------------------------------- the caller's begin and end */

typedef struct {
    sm_runner *runner;
    int begins, ends, continued, cut, first_cut;
    uint64_t length_sum;
    uint64_t hits;
} hooks_seen;

static int hook_begin(void *ctx, sm_runner *runner, const sm_scan_record *rec, uint64_t *number) {
    hooks_seen *h = ctx;
    CHECK(runner == h->runner && rec->number == UINT64_MAX, "begin_record: runner or number");
    *number = sm_runner_begin_record(runner);
    h->begins++;
    h->continued += rec->continued;
    return 0;
}

static int hook_end(void *ctx, sm_runner *runner, const sm_scan_record *rec) {
    hooks_seen *h = ctx;
    h->ends++;
    h->cut += rec->cut;
    h->length_sum += rec->length;
    return sm_runner_end_record(runner);
}

static int total_hit(const sm_hit *hit, void *ctx) {
    (void)hit;
    ((hooks_seen *)ctx)->hits++;
    return 0;
}

static void run_hooks(const char *fa, uint64_t size) {
    /* the whole file, then two ranges split in the middle of a record */
    uint64_t want_len = 0, want_hits_all = 0;
    for (int r = 0; r < RECORDS; r++) {
        want_len += strlen(seq[0][r]);
        want_hits_all += want_hits[0][r];
    }
    for (int ranged = 0; ranged < 2; ranged++) {
        hooks_seen h;
        memset(&h, 0, sizeof h);
        /* in the middle of a record's first sequence line */
        uint64_t split = 0;
        int r = RECORDS / 2;
        while (strlen(seq[0][r]) < 4) r++;
        for (int i = 0; i < r; i++) split += strlen(text[0][i]);
        split += (uint64_t)(strchr(text[0][r], '\n') - text[0][r]) + 3;
        for (int part = 0; part < (ranged ? 2 : 1); part++) {
            h.runner = runner_for(1, 0, total_hit, NULL, &h);
            sm_reader *rd = NULL;
            sm_error err;
            int rc = ranged ? sm_reader_open_range(fa, SM_INPUT_FASTA, 1, part ? split : 0, part ? size : split, &rd,
                                                   &err)
                            : sm_reader_open(fa, SM_INPUT_AUTO, &rd, &err);
            CHECK(rc == SM_OK, "hooks: open: %s", err.message);
            sm_scan_reader_options o;
            sm_scan_reader_options_init(&o);
            o.ctx = &h;
            o.begin_record = hook_begin;
            o.end_record = hook_end;
            rc = sm_runner_scan_reader(h.runner, rd, &o, &err);
            CHECK(rc == SM_OK, "hooks: scan: %s", err.message);
            CHECK(sm_runner_flush(h.runner) == SM_OK, "hooks: flush");
            if (part == 0) h.first_cut = h.cut;
            sm_reader_close(rd);
            sm_runner_free(h.runner);
        }
        /* the split record is begun twice (its second part continued) */
        CHECK(h.begins == RECORDS + ranged && h.ends == h.begins, "hooks ranged %d: %d begins, %d ends", ranged,
              h.begins, h.ends);
        /* the first range's last record is cut, the second's first continued */
        CHECK(h.continued == ranged && h.first_cut == ranged, "hooks ranged %d: %d continued, %d cut", ranged,
              h.continued, h.first_cut);
        CHECK(h.length_sum == want_len, "hooks ranged %d: %llu bytes fed, want %llu", ranged,
              (unsigned long long)h.length_sum, (unsigned long long)want_len);
        if (!ranged)
            CHECK(h.hits == want_hits_all, "hooks: %llu hits, want %llu", (unsigned long long)h.hits,
                  (unsigned long long)want_hits_all);
    }
}

/* ------------------------------------------------------------- resumable */

typedef struct {
    sm_hit hits[MAX_HITS];
    size_t nhits;
    int records, pause_every, calls_since;
    char *seen_seq[RECORDS];
    size_t seen_len[RECORDS];
    char names[RECORDS][16];
} resume_seen;

static int keep_hit(const sm_hit *hit, void *ctx) {
    resume_seen *s = ctx;
    if (s->nhits < MAX_HITS) s->hits[s->nhits++] = *hit;
    return 0;
}

static int resume_record(void *ctx, uint64_t record, const char *name) {
    resume_seen *s = ctx;
    CHECK(record == (uint64_t)s->records, "resumable: record %llu after %d", (unsigned long long)record, s->records);
    if (s->records < RECORDS) snprintf(s->names[s->records], sizeof s->names[0], "%s", name);
    s->records++;
    return 0;
}

static int resume_sequence(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    resume_seen *s = ctx;
    if (record >= RECORDS) return 0;
    s->seen_seq[record] = realloc(s->seen_seq[record], s->seen_len[record] + len + 1);
    memcpy(s->seen_seq[record] + s->seen_len[record], data, len);
    s->seen_len[record] += len;
    s->seen_seq[record][s->seen_len[record]] = '\0';
    return 0;
}

static int resume_pause(void *ctx, size_t bytes, int record_ended) {
    (void)bytes;
    (void)record_ended;
    resume_seen *s = ctx;
    return s->pause_every && ++s->calls_since % s->pause_every == 0;
}

static void run_resumable(const char *fq, int pause_every, resume_seen *s) {
    memset(s, 0, sizeof *s);
    s->pause_every = pause_every;
    sm_runner *runner = runner_for(1, 300, keep_hit, NULL, s);
    sm_reader *rd = NULL;
    sm_error err;
    CHECK(sm_reader_open(fq, SM_INPUT_AUTO, &rd, &err) == SM_OK, "open");
    sm_scan_reader_options o;
    sm_scan_reader_options_init(&o);
    o.ctx = s;
    o.on_record = resume_record;
    o.on_sequence = resume_sequence;
    o.on_progress = resume_pause;
    o.piece = 50;
    o.resumable = 1;
    int rc, calls = 0;
    while ((rc = sm_runner_scan_reader(runner, rd, &o, &err)) == SM_ERR_TERMINATED && calls < 1000000) calls++;
    CHECK(rc == SM_OK, "resumable (pause every %d): %d %s", pause_every, rc, err.message);
    if (pause_every) CHECK(calls > RECORDS, "resumable: only %d pauses", calls);
    CHECK(sm_runner_flush(runner) == SM_OK, "flush");
    sm_reader_close(rd);
    sm_runner_free(runner);
}

static void check_resumable(const char *fq) {
    resume_seen *whole = malloc(sizeof *whole), *paused = malloc(sizeof *paused);
    run_resumable(fq, 0, whole);
    for (int every = 1; every <= 3; every++) {
        run_resumable(fq, every, paused);
        CHECK(paused->records == RECORDS && whole->records == RECORDS, "resumable: %d and %d records",
              paused->records, whole->records);
        int same = paused->nhits == whole->nhits;
        for (size_t i = 0; same && i < whole->nhits; i++) {
            const sm_hit *a = &paused->hits[i], *b = &whole->hits[i];
            same = a->record == b->record && a->start == b->start && a->end == b->end && a->pattern == b->pattern &&
                   a->strand == b->strand && a->errors == b->errors;
        }
        CHECK(same, "resumable every %d: %zu hits, whole %zu, not the same", every, paused->nhits, whole->nhits);
        for (int r = 0; r < RECORDS; r++) {
            CHECK(paused->seen_len[r] == strlen(seq[0][r]) &&
                      memcmp(paused->seen_seq[r], seq[0][r], paused->seen_len[r]) == 0,
                  "resumable every %d: record %d's sequence", every, r);
            CHECK(strcmp(paused->names[r], whole->names[r]) == 0, "resumable: record %d's name", r);
            free(paused->seen_seq[r]);
        }
    }
    for (int r = 0; r < RECORDS; r++) free(whole->seen_seq[r]);
    free(whole);
    free(paused);
}

/* ---------------------------------------------------------- size, refusals */

static int must_not_call(void *ctx, const sm_scan_record *rec) {
    (void)rec;
    ++*(int *)ctx;
    return 1;
}

static void check_size(const char *fq, const char *fq2) {
    int calls = 0;
    hooks_seen h;
    memset(&h, 0, sizeof h);
    sm_runner *runner = runner_for(1, 0, total_hit, NULL, &h);
    sm_reader *rd = NULL, *r2 = NULL;
    sm_error err;
    for (int variant = 0; variant < 2; variant++) {
        CHECK(sm_reader_open(fq, SM_INPUT_AUTO, &rd, &err) == SM_OK, "open");
        sm_scan_reader_options o;
        sm_scan_reader_options_init(&o);
        o.ctx = &calls;
        o.on_record_read = must_not_call;
        /* an older caller's size (before the record-at-a-time fields), or 0 */
        o.size = variant ? offsetof(sm_scan_reader_options, mate) : 0;
        CHECK(sm_runner_scan_reader(runner, rd, &o, &err) == SM_OK && calls == 0, "size %zu: read past it (%d)",
              o.size, calls);
        sm_reader_close(rd);
    }
    CHECK(sm_reader_open(fq, SM_INPUT_AUTO, &rd, &err) == SM_OK, "open");
    CHECK(sm_reader_open(fq2, SM_INPUT_AUTO, &r2, &err) == SM_OK, "open");
    sm_scan_reader_options o;
    sm_scan_reader_options_init(&o);
    o.mate = r2;
    o.resumable = 1;
    CHECK(sm_runner_scan_reader(runner, rd, &o, &err) == SM_ERR_INVALID, "mate with resumable: not refused");
    sm_reader_close(rd);
    sm_reader_close(r2);
    sm_runner_free(runner);
}

int main(void) {
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    sm_compile_options co;
    sm_compile_options_init(&co);
    sm_pattern p[] = {{"EcoRI", "GAATTC", 6}, {"BamHI", "GGATCC", 6}, {"CGA", "ACGTG", 5}};
    sm_db *compiled = NULL;
    sm_error err;
    if (sm_compile(p, 3, &co, &compiled, &err) != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        return 1;
    }
    db = compiled;

    char fq1[256], fq2[256], half2[256], fa[256];
    path_of(fq1, sizeof fq1, "r_1.fq");
    path_of(fq2, sizeof fq2, "r_2.fq");
    path_of(half2, sizeof half2, "half_2.fq");
    path_of(fa, sizeof fa, "r.fa");
    make_records(0);
    write_mate(fq1, 0, RECORDS);
    write_mate(fq2, 1, RECORDS);
    write_mate(half2, 1, RECORDS / 2);
    for (unsigned threads = 1; threads <= 3; threads++)
        for (unsigned scan_mates = 0; scan_mates <= 2; scan_mates++) run_pairs(fq1, fq2, threads, scan_mates);
    run_uneven(fq1, half2);
    check_resumable(fq1);
    check_size(fq1, fq2);

    make_records(1);
    write_mate(fa, 0, RECORDS);
    FILE *f = fopen(fa, "rb");
    fseek(f, 0, SEEK_END);
    uint64_t size = (uint64_t)ftell(f);
    fclose(f);
    run_hooks(fa, size);

    unlink(fq1);
    unlink(fq2);
    unlink(half2);
    unlink(fa);
    rmdir(dir);
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < RECORDS; r++) {
            free(text[m][r]);
            free(seq[m][r]);
        }
    sm_db_free(compiled);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
