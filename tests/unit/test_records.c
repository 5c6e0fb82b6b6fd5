/* Many records at once (sm_reader_read_records, parsed and stripped on a
 * team's threads) against the reader one record at a time, byte for byte:
 * random FASTA and FASTQ with records of every size (empty, one byte,
 * around the parts' and the room's sizes), lines of 1 to 100 bytes, lower
 * case, N, IUPAC, blanks, blank lines, and now and then what the serial
 * reader must see (a \r, a bad byte, a truncated or inconsistent FASTQ
 * record): the same records, names and bytes, and the same message. Then
 * sm_runner_scan_reader, which uses it, for 1 to 4 threads: the same
 * hits, record numbers, names and record ends as one thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/seqio.h"
#include "reading.h"
#include "testutil.h"

static tu_rng rng;

typedef tu_reading reading;

/* Every record as "name\tSEQUENCE\n". batch: sm_reader_read_records first
   whenever it takes records (rooms of random sizes up to room_max), the
   usual calls otherwise, into pieces of piece_cap bytes (a bad byte's
   message comes after the pieces before it: the same pieces both ways);
   *taken counts the records it took. */
static void read_all(const char *path, unsigned threads, int batch, size_t room_max, size_t piece_cap, size_t *taken,
                     reading *out) {
    memset(out, 0, sizeof *out);
    tu_reading_put(out, "", 0);
    sm_reader *rd;
    out->rc = sm_reader_open_threads(path, SM_INPUT_AUTO, threads, &rd, &out->err);
    if (out->rc != SM_OK) return;
    unsigned runs = 0;
    int backwards = tu_rng_chance(&rng, 50);
    if (batch) sm_reader_share_threads(rd, threads, backwards ? tu_run_backwards : tu_run_forwards, &runs);
    uint8_t *buf = malloc(room_max + piece_cap + 64);
    if (!buf) exit(2);
    const char *name;
    int rc;
    for (;;) {
        if (batch) {
            size_t room = 1 + tu_rng_below(&rng, (uint32_t)room_max);
            size_t max_records = tu_rng_chance(&rng, 20) ? 1 + tu_rng_below(&rng, 5) : 1000000;
            memset(buf + room, 0xEE, 64); /* the slack may be written, nothing past it */
            sm_reader_records got;
            if (sm_reader_read_records(rd, buf, room, max_records, &got)) {
                tu_check(got.n >= 1 && got.n <= max_records, "%zu records taken (at most %zu)", got.n, max_records);
                size_t at = 0;
                for (size_t i = 0; i < got.n; i++) {
                    tu_reading_put(out, got.names[i], strlen(got.names[i]));
                    tu_reading_put(out, "\t", 1);
                    tu_reading_put(out, buf + got.offs[i], got.lens[i]);
                    tu_reading_put(out, "\n", 1);
                    tu_check(got.offs[i] >= at, "record %zu at %zu, over the one before (to %zu)", i, got.offs[i], at);
                    at = got.offs[i] + got.lens[i];
                }
                tu_check(at <= room, "%zu bytes written in a room of %zu", at, room);
                int past = 0;
                for (int k = 0; k < 64; k++) past |= buf[room + k] != 0xEE;
                tu_check(!past, "a byte written past the room of %zu", room);
                *taken += got.n;
                continue;
            }
        }
        rc = sm_reader_next_record(rd, &name, &out->err);
        if (rc <= 0) break;
        tu_reading_put(out, name, strlen(name));
        tu_reading_put(out, "\t", 1);
        size_t l;
        while ((rc = sm_reader_read_into(rd, buf, piece_cap, &l, &out->err)) > 0) tu_reading_put(out, buf, l);
        if (rc < 0) break;
        tu_reading_put(out, "\n", 1);
    }
    out->rc = rc < 0 ? out->err.code : SM_OK;
    free(buf);
    sm_reader_close(rd);
}


typedef struct {
    char *p;
    size_t n, cap;
} text;

static void add(text *t, const char *s, size_t n) {
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        if (!t->p) exit(2);
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
}
static void adds(text *t, const char *s) { add(t, s, strlen(s)); }

/* A record's length: empty, one byte, short, or around the sizes the
   reader's parts (at least 16 KiB) and the test's rooms make interesting. */
static size_t record_length(void) {
    switch (tu_rng_below(&rng, 8)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return tu_rng_below(&rng, 20);
    case 3: return (16u << 10) - 40 + tu_rng_below(&rng, 80);
    case 4: return tu_rng_below(&rng, 200000);
    default: return tu_rng_below(&rng, 600);
    }
}

/* Sequence bytes: DNA, N, IUPAC, lower case, '-' '.' '*' now and then. */
static char sequence_byte(void) {
    static const char pool[] = "ACGTACGTACGTACGTNNacgtnRYKMSWBDHVryk-.*";
    return pool[tu_rng_below(&rng, sizeof pool - 1)];
}

/* What the serial reader must see: \r, a bad byte, a '>' or '@' inside a
   line, a NUL. */
static const char *odd_bytes[] = {"\r", "!", "1", ">", "@", "+", "\x80", "\x01"};

/* Sequence lines of len bytes at width (blanks and blank lines at times). */
static void sequence_lines(text *t, size_t len, unsigned width, int blanks, int odd_at_line) {
    size_t col = 0;
    unsigned line = 0;
    for (size_t i = 0; i < len; i++) {
        char c = sequence_byte();
        add(t, &c, 1);
        if (blanks && tu_rng_chance(&rng, 1)) adds(t, tu_rng_chance(&rng, 50) ? " " : "\t");
        if (++col == width || i + 1 == len) {
            if (odd_at_line >= 0 && (int)line == odd_at_line) {
                const char *o = odd_bytes[tu_rng_below(&rng, sizeof odd_bytes / sizeof *odd_bytes)];
                add(t, o, strlen(o));
            }
            adds(t, "\n");
            line++;
            col = 0;
            if (blanks && tu_rng_chance(&rng, 3)) adds(t, "\n");
        }
    }
}

static void random_name(text *t, unsigned r) {
    char b[64];
    snprintf(b, sizeof b, "r%u", r);
    adds(t, b);
    switch (tu_rng_below(&rng, 6)) {
    case 0: adds(t, " some words"); break;
    case 1: adds(t, "\tx=1;y=2"); break;
    case 2: adds(t, "\v more"); break;
    case 3: adds(t, "|acc.1|\x01"); break; /* a control byte belongs to the name */
    default: break;
    }
}

static size_t random_fasta(text *t, int damage) {
    t->n = 0;
    unsigned records = tu_rng_below(&rng, 60);
    if (tu_rng_chance(&rng, 20)) adds(t, "\n \n\t\n"); /* blank lines before the first record */
    int blanks = tu_rng_chance(&rng, 30);
    unsigned bad_record = damage ? tu_rng_below(&rng, records + 1) : UINT32_MAX;
    for (unsigned r = 0; r < records; r++) {
        adds(t, ">");
        random_name(t, r);
        if (r == bad_record && tu_rng_chance(&rng, 20)) adds(t, "\r");
        adds(t, "\n");
        unsigned width = 1 + tu_rng_below(&rng, 100);
        size_t len = record_length();
        int odd_line = r == bad_record ? (int)tu_rng_below(&rng, (uint32_t)(len / width + 1)) : -1;
        sequence_lines(t, len, width, blanks, odd_line);
    }
    if (t->n && tu_rng_chance(&rng, 20) && t->p[t->n - 1] == '\n') t->n--; /* no final line end */
    return t->n;
}

static void quality(text *t, size_t len, unsigned width, int first_at) {
    size_t col = 0;
    for (size_t i = 0; i < len; i++) {
        char c = (char)('!' + tu_rng_below(&rng, 94));
        if (col == 0 && first_at) c = tu_rng_chance(&rng, 50) ? '@' : '+';
        add(t, &c, 1);
        if (++col == width || i + 1 == len) {
            adds(t, "\n");
            col = 0;
        }
    }
    if (len == 0) adds(t, "\n");
}

static size_t random_fastq(text *t, int damage) {
    t->n = 0;
    unsigned records = tu_rng_chance(&rng, 30) ? tu_rng_below(&rng, 4000) : tu_rng_below(&rng, 300);
    unsigned bad_record = damage ? tu_rng_below(&rng, records + 1) : UINT32_MAX;
    int wrapped = tu_rng_chance(&rng, 30);
    for (unsigned r = 0; r < records; r++) {
        adds(t, "@");
        random_name(t, r);
        adds(t, "\n");
        size_t len = tu_rng_chance(&rng, 10) ? record_length() : 50 + tu_rng_below(&rng, 150);
        unsigned width = wrapped ? 1 + tu_rng_below(&rng, 100) : (unsigned)(len ? len : 1);
        int bad = r == bad_record;
        unsigned how = bad ? tu_rng_below(&rng, 5) : 9;
        sequence_lines(t, len, width, 0, how == 0 ? 0 : -1);
        if (how == 1) {
            adds(t, "+other\n"); /* the '+' line names another read */
        } else if (tu_rng_chance(&rng, 30)) {
            char b[64];
            snprintf(b, sizeof b, "+r%u\n", r);
            adds(t, b);
        } else {
            adds(t, "+\n");
        }
        quality(t, how == 2 ? len + 1 : len, width, tu_rng_chance(&rng, 20));
        if (how == 3) adds(t, "\x7f\n");
        if (how == 4) break; /* truncated below */
        if (tu_rng_chance(&rng, 3)) adds(t, "\n");
    }
    if (damage && t->n > 10 && tu_rng_chance(&rng, 30)) t->n -= 1 + tu_rng_below(&rng, 8); /* cut short */
    return t->n;
}

static void same(const reading *want, const reading *got, const char *what) {
    tu_check(got->rc == want->rc, "%s: status %d, expected %d (%s)", what, got->rc, want->rc, got->err.message);
    tu_check(strcmp(got->err.message, want->err.message) == 0, "%s: message '%s', expected '%s'", what,
             got->err.message, want->err.message);
    tu_check(got->len == want->len && memcmp(got->text, want->text, want->len) == 0, "%s: %zu bytes read, %zu expected",
             what, got->len, want->len);
}

static void test_reader(const char *path) {
    text t = {0};
    size_t taken = 0;
    for (unsigned round = 0; round < tu_scaled(300); round++) {
        int fastq = round % 2;
        int damage = tu_rng_chance(&rng, 30);
        size_t n = fastq ? random_fastq(&t, damage) : random_fasta(&t, damage);
        tu_write_file(path, t.p, n);
        reading want, got;
        size_t piece_cap = 1 + tu_rng_below(&rng, 3000);
        read_all(path, 1, 0, 1, piece_cap, &taken, &want);
        /* FASTA is taken many at a time from 3 threads, FASTQ from 2 */
        for (unsigned threads = 2; threads <= 4; threads++) {
            size_t room_max = tu_rng_chance(&rng, 50) ? 1 + tu_rng_below(&rng, 4096) : 1 + tu_rng_below(&rng, 1u << 20);
            read_all(path, threads, 1, room_max, piece_cap, &taken, &got);
            char what[128];
            snprintf(what, sizeof what, "round %u (%s%s, %zu bytes), %u threads, rooms up to %zu", round,
                     fastq ? "FASTQ" : "FASTA", damage ? ", damaged" : "", n, threads, room_max);
            same(&want, &got, what);
            free(got.text);
        }
        free(want.text);
    }
    /* about 100 a round; at least one a round whatever the scale */
    tu_check(taken >= tu_scaled(300), "only %zu records were taken many at a time", taken);
    free(t.p);
}

/* ------------------------------------------------- through a runner */

typedef struct {
    tu_hits hits;
    reading names; /* "record name;" and "done record;" in order */
} seen;

static int on_record(void *ctx, uint64_t record, const char *name) {
    seen *s = ctx;
    char b[32];
    snprintf(b, sizeof b, "%llu ", (unsigned long long)record);
    tu_reading_put(&s->names, b, strlen(b));
    tu_reading_put(&s->names, name, strlen(name));
    tu_reading_put(&s->names, ";", 1);
    return 0;
}

static void on_record_fed(void *ctx, uint64_t record, uint64_t length) {
    seen *s = ctx;
    char b[64];
    snprintf(b, sizeof b, "fed %llu %llu;", (unsigned long long)record, (unsigned long long)length);
    tu_reading_put(&s->names, b, strlen(b));
}

/* the record's end among its hits (ctx: the runner's, the hit list) */
static void on_record_done(uint64_t record, void *ctx) { tu_hits_add(ctx, record, UINT64_MAX, UINT64_MAX, 0, 'd', 0); }

static int scan(const sm_db *db, const char *path, unsigned threads, size_t chunk, seen *out) {
    memset(out, 0, sizeof *out);
    tu_hits_init(&out->hits);
    tu_reading_put(&out->names, "", 0);
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = threads;
    ro.chunk_size = chunk;
    ro.on_hit = tu_hits_collect;
    ro.on_record_done = on_record_done;
    ro.ctx = &out->hits;
    sm_runner *runner = NULL;
    sm_error err;
    if (sm_runner_create(db, &ro, &runner, &err) != SM_OK) exit(2);
    sm_reader *rd = NULL;
    int rc = sm_reader_open_threads(path, SM_INPUT_AUTO, threads, &rd, &err);
    if (rc == SM_OK) {
        sm_scan_reader_options so;
        memset(&so, 0, sizeof so);
        so.ctx = out;
        so.on_record = on_record;
        so.on_record_fed = on_record_fed;
        rc = sm_runner_scan_reader(runner, rd, &so, &err);
        if (rc == SM_OK) rc = sm_runner_flush(runner);
        if (rc != SM_OK) tu_reading_put(&out->names, err.message, strlen(err.message));
    }
    sm_reader_close(rd);
    sm_runner_free(runner);
    return rc;
}

static void test_runner(const char *path) {
    sm_pattern p[] = {{"a", "ACGT", 4}, {"b", "GGNNCC", 6}, {"c", "TTTTTTTTTTTT", 12}, {"d", "ac", 2}};
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_db *db = NULL;
    sm_error err;
    if (sm_compile(p, 4, &o, &db, &err) != SM_OK) {
        tu_check(0, "compile: %s", err.message);
        return;
    }
    text t = {0};
    for (unsigned round = 0; round < tu_scaled(40); round++) {
        int fastq = round % 2;
        int damage = tu_rng_chance(&rng, 20);
        size_t n = fastq ? random_fastq(&t, damage) : random_fasta(&t, damage);
        tu_write_file(path, t.p, n);
        seen want, got;
        int want_rc = scan(db, path, 1, 0, &want);
        for (unsigned threads = 1; threads <= 4; threads++) {
            size_t chunk = tu_rng_chance(&rng, 50) ? 0 : 256 + tu_rng_below(&rng, 5000);
            int rc = scan(db, path, threads, chunk, &got);
            char what[128];
            snprintf(what, sizeof what, "runner round %u (%s%s), %u threads, chunk %zu", round,
                     fastq ? "FASTQ" : "FASTA", damage ? ", damaged" : "", threads, chunk);
            tu_check(rc == want_rc, "%s: status %d, expected %d", what, rc, want_rc);
            /* the same records named and fed, and the same message after them */
            tu_check(strcmp(want.names.text, got.names.text) == 0, "%s: records or message differ:\n%.300s\n%.300s", what,
                     want.names.text, got.names.text);
            if (want_rc == SM_OK) tu_hits_equal(&want.hits, &got.hits, what);
            tu_hits_free(&got.hits);
            free(got.names.text);
        }
        tu_hits_free(&want.hits);
        free(want.names.text);
    }
    free(t.p);
    sm_db_free(db);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0x7265636full));
    char path[] = "/tmp/sm_test_records_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 2;
    close(fd);
    test_reader(path);
    test_runner(path);
    unlink(path);
    return tu_summary("test_records");
}
