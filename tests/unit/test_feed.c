/* The feed: every way a target can arrive (a plain file read in place, a
 * pipe, gzip of one member or many, BGZF inflated on several threads, its
 * blocks cut anywhere, BGZF followed by a plain member) must give the
 * reader exactly the records and bytes of the plain file, for every thread
 * count; and every broken stream an error naming it, after the bytes that
 * came before the damage. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "io/seqio.h"
#include "io/strip.h"
#include "reading.h"
#include "testutil.h"

static tu_rng rng;

/* Records and sequence bytes of a file, as the reader gives them, joined:
   "name\tSEQUENCE\n" per record; the status at the end. */
typedef tu_reading reading;

/* Reads every record; into > 0 reads with sm_reader_read_into into pieces of
   up to that many bytes (as a runner's buffer asks), else sm_reader_read;
   team: the blocks run through tu_run_backwards, counted in *team. */
static void read_all_into(const char *path, unsigned threads, size_t into, unsigned *team, reading *out) {
    memset(out, 0, sizeof *out);
    tu_reading_put(out, "", 0);
    sm_reader *rd;
    out->rc = sm_reader_open_threads(path, SM_INPUT_AUTO, threads, &rd, &out->err);
    if (out->rc != SM_OK) return;
    if (team) sm_reader_share_threads(rd, threads, tu_run_backwards, team);
    uint8_t *piece = into ? malloc(into + 64) : NULL;
    if (into && !piece) exit(2);
    const char *name;
    int rc;
    while ((rc = sm_reader_next_record(rd, &name, &out->err)) > 0) {
        tu_reading_put(out, name, strlen(name));
        tu_reading_put(out, "\t", 1);
        const uint8_t *d;
        size_t l;
        if (into) {
            while ((rc = sm_reader_read_into(rd, piece, into, &l, &out->err)) > 0) tu_reading_put(out, piece, l);
        } else {
            while ((rc = sm_reader_read(rd, &d, &l, &out->err)) > 0) tu_reading_put(out, d, l);
        }
        if (rc < 0) break;
        tu_reading_put(out, "\n", 1);
    }
    out->rc = rc < 0 ? out->err.code : SM_OK;
    free(piece);
    sm_reader_close(rd);
}

static void read_all(const char *path, unsigned threads, reading *out) {
    read_all_into(path, threads, 0, NULL, out);
}


/* A gzip member of data, in memory (zlib, level 6). */
static size_t gzip_member(const uint8_t *data, size_t n, uint8_t *out, size_t cap) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(2);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) exit(2);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    return len;
}

/* A BGZF block of data (at most 65536 bytes): a gzip member with the BC
   extra field giving its size, as bgzip writes it. */
static size_t bgzf_block(const uint8_t *data, size_t n, uint8_t *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(2);
    static const uint8_t head[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0, 0};
    memcpy(out, head, 18);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n;
    z.next_out = out + 18;
    z.avail_out = 70000;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) exit(2);
    size_t clen = 70000 - z.avail_out;
    deflateEnd(&z);
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n);
    uint8_t *t = out + 18 + clen;
    for (int i = 0; i < 4; i++) t[i] = (uint8_t)(crc >> (8 * i)), t[4 + i] = (uint8_t)(n >> (8 * i));
    size_t bsize = 18 + clen + 8;
    out[16] = (uint8_t)((bsize - 1) & 0xff);
    out[17] = (uint8_t)((bsize - 1) >> 8);
    return bsize;
}

/* BGZF of data cut into blocks of random sizes (1..max_block), with the
   empty end-of-file block bgzip writes. */
static size_t bgzf_of(const uint8_t *data, size_t n, size_t max_block, uint8_t *out) {
    size_t at = 0, len = 0;
    while (at < n) {
        size_t b = 1 + tu_rng_below(&rng, (uint32_t)max_block);
        if (b > n - at) b = n - at;
        len += bgzf_block(data + at, b, out + len);
        at += b;
    }
    len += bgzf_block(data, 0, out + len);
    return len;
}

/* A FASTA of random records: names, lines of random widths, \r\n at times. */
static size_t random_fasta(uint8_t *out, size_t cap) {
    size_t n = 0;
    unsigned records = 1 + tu_rng_below(&rng, 40);
    for (unsigned r = 0; r < records && n + 200000 < cap; r++) {
        n += (size_t)sprintf((char *)out + n, ">rec%u some words\n", r);
        size_t len = tu_rng_below(&rng, 4) == 0 ? tu_rng_below(&rng, 100) : tu_rng_below(&rng, 150000);
        unsigned width = 1 + tu_rng_below(&rng, 120);
        int crlf = tu_rng_below(&rng, 5) == 0;
        for (size_t i = 0; i < len; i++) {
            out[n++] = "ACGTN"[tu_rng_below(&rng, 5)];
            if ((i + 1) % width == 0 || i + 1 == len) {
                if (crlf) out[n++] = '\r';
                out[n++] = '\n';
            }
        }
    }
    return n;
}

/* The reading of a file through a pipe (the path given as "-" on stdin). */
static void read_piped(const char *path, unsigned threads, reading *out) {
    int saved = dup(STDIN_FILENO);
    int fd = open(path, O_RDONLY);
    int p[2];
    if (fd < 0 || pipe(p) != 0) exit(2);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        char buf[65536];
        ssize_t got;
        while ((got = read(fd, buf, sizeof buf)) > 0)
            if (write(p[1], buf, (size_t)got) != got) _exit(1);
        _exit(0);
    }
    close(fd);
    close(p[1]);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    read_all("-", threads, out);
    dup2(saved, STDIN_FILENO);
    close(saved);
    waitpid(child, NULL, 0);
}

static void same(const reading *want, const reading *got, const char *what) {
    if (!tu_check(got->rc == want->rc, "%s: status %d, expected %d (%s)", what, got->rc, want->rc, got->err.message))
        return;
    tu_check(got->len == want->len && memcmp(got->text, want->text, want->len) == 0, "%s: %zu bytes read, %zu expected",
             what, got->len, want->len);
}

static void test_random_layouts(void) {
    size_t cap = 6u << 20;
    uint8_t *plain = malloc(cap), *packed = malloc(cap + (1u << 20));
    char dir[] = "/tmp/sm_test_feed_XXXXXX";
    if (!mkdtemp(dir)) exit(2);
    char p_plain[64], p_gz[64], p_multi[64], p_bgzf[64], p_mixed[64];
    snprintf(p_plain, sizeof p_plain, "%s/a.fa", dir);
    snprintf(p_gz, sizeof p_gz, "%s/a.fa.gz", dir);
    snprintf(p_multi, sizeof p_multi, "%s/multi.fa.gz", dir);
    snprintf(p_bgzf, sizeof p_bgzf, "%s/a.fa.bgz", dir);
    snprintf(p_mixed, sizeof p_mixed, "%s/mixed.fa.gz", dir);
    for (unsigned round = 0; round < tu_scaled(12); round++) {
        size_t n = random_fasta(plain, cap);
        tu_write_file(p_plain, plain, n);
        reading want;
        read_all(p_plain, 1, &want);
        tu_check(want.rc == SM_OK, "round %u: the plain file reads", round);
        size_t g = gzip_member(plain, n, packed, cap + (1u << 20));
        tu_write_file(p_gz, packed, g);
        /* members cut at random places */
        size_t m = 0, at = 0;
        while (at < n) {
            size_t b = 1 + tu_rng_below(&rng, 300000);
            if (b > n - at) b = n - at;
            m += gzip_member(plain + at, b, packed + m, cap + (1u << 20) - m);
            at += b;
        }
        tu_write_file(p_multi, packed, m);
        size_t bl = bgzf_of(plain, n, round % 2 ? 65536 : 900, packed);
        tu_write_file(p_bgzf, packed, bl);
        /* BGZF blocks, then a plain member, then zero padding */
        size_t half = n / 2;
        size_t mx = bgzf_of(plain, half, 20000, packed);
        mx -= 28; /* without the end-of-file block */
        mx += gzip_member(plain + half, n - half, packed + mx, cap + (1u << 20) - mx);
        memset(packed + mx, 0, 64);
        tu_write_file(p_mixed, packed, mx + 64);
        const char *paths[] = {p_plain, p_gz, p_multi, p_bgzf, p_mixed};
        const char *names[] = {"plain", "gzip", "members", "bgzf", "bgzf then gzip"};
        for (int f = 0; f < 5; f++)
            for (unsigned t = 1; t <= 4; t++) {
                char what[96];
                snprintf(what, sizeof what, "round %u, %s, %u threads", round, names[f], t);
                reading got;
                read_all(paths[f], t, &got);
                same(&want, &got, what);
                free(got.text);
                if (t == 3 && round % 3 == 0) {
                    snprintf(what, sizeof what, "round %u, %s piped, %u threads", round, names[f], t);
                    read_piped(paths[f], t, &got);
                    same(&want, &got, what);
                    free(got.text);
                }
            }
        free(want.text);
    }
    unlink(p_plain), unlink(p_gz), unlink(p_multi), unlink(p_bgzf), unlink(p_mixed);
    rmdir(dir);
    free(plain);
    free(packed);
}

/* Broken streams: the bytes before the damage, then an error naming it. */
static void test_damage(void) {
    size_t cap = 2u << 20;
    uint8_t *plain = malloc(cap), *packed = malloc(cap);
    char path[] = "/tmp/sm_test_feed_damage_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) exit(2);
    close(fd);
    size_t n = 0;
    n += (size_t)sprintf((char *)plain, ">a\n");
    for (size_t i = 0; i < 1000000; i++) plain[n++] = "ACGT"[i % 4];
    plain[n++] = '\n';
    for (unsigned t = 1; t <= 3; t++) {
        char what[96];
        reading got;
        /* BGZF cut inside a block */
        size_t bl = bgzf_of(plain, n, 30000, packed);
        tu_write_file(path, packed, bl / 2);
        read_all(path, t, &got);
        snprintf(what, sizeof what, "truncated BGZF, %u threads", t);
        tu_check(got.rc == SM_ERR_FORMAT && strstr(got.err.message, "unexpected end of file (truncated"), "%s: %s",
                 what, got.err.message);
        tu_check(got.len > 1000, "%s: the bytes before the cut were not read (%zu)", what, got.len);
        free(got.text);
        /* a second member cut inside its header (one byte of the magic on):
           truncated, never "data after the last member" */
        for (size_t cut = 1; cut <= 17; cut += 4) {
            static const char first[] = ">a\nACGTACGTAC\n", second[] = "GGGGCCCCAAAATTTT\n";
            size_t g = gzip_member((const uint8_t *)first, sizeof first - 1, packed, cap);
            gzip_member((const uint8_t *)second, sizeof second - 1, packed + g, cap - g);
            tu_write_file(path, packed, g + cut);
            read_all(path, t, &got);
            snprintf(what, sizeof what, "gzip cut %zu bytes into a second member, %u threads", cut, t);
            tu_check(got.rc == SM_ERR_FORMAT && strstr(got.err.message, "unexpected end of file (truncated"),
                     "%s: %s", what, got.err.message);
            free(got.text);
        }
        /* a wrong CRC in one BGZF block in the middle */
        bl = bgzf_of(plain, n, 30000, packed);
        size_t at = 0, blocks = 0;
        while (at < bl / 2) at += (size_t)(packed[at + 16] | packed[at + 17] << 8) + 1, blocks++;
        size_t bsize = (size_t)(packed[at + 16] | packed[at + 17] << 8) + 1;
        packed[at + bsize - 8] ^= 1;
        tu_write_file(path, packed, bl);
        read_all(path, t, &got);
        snprintf(what, sizeof what, "BGZF block with a wrong CRC, %u threads", t);
        tu_check(got.rc == SM_ERR_FORMAT && strstr(got.err.message, "corrupt compressed data"), "%s: %s", what,
                 got.err.message);
        free(got.text);
        /* gzip with data after its member */
        size_t g = gzip_member(plain, n, packed, cap);
        memcpy(packed + g, ">b\nAC\n", 6);
        tu_write_file(path, packed, g + 6);
        read_all(path, t, &got);
        snprintf(what, sizeof what, "data after a gzip member, %u threads", t);
        char want[128];
        snprintf(want, sizeof want, "data after the last gzip member (byte %zu)", g);
        tu_check(got.rc == SM_ERR_FORMAT && strstr(got.err.message, want), "%s: %s", what, got.err.message);
        /* "a", a tab and the whole sequence: the record never ends */
        tu_check(got.len == n - 2, "%s: %zu bytes read before the error, expected all %zu", what, got.len, n - 2);
        free(got.text);
        /* gzip cut short */
        tu_write_file(path, packed, g - 20);
        read_all(path, t, &got);
        snprintf(what, sizeof what, "truncated gzip, %u threads", t);
        tu_check(got.rc == SM_ERR_FORMAT && strstr(got.err.message, "truncated compressed stream"), "%s: %s", what,
                 got.err.message);
        free(got.text);
    }
    unlink(path);
    free(plain);
    free(packed);
}

/* A plain file whose end falls on a page boundary: read in place, the
   reader's vector loads past the end must find zero bytes, not a fault. */
static void test_page_end(void) {
    long page = sysconf(_SC_PAGESIZE);
    size_t n = (size_t)(page > 0 ? page : 4096) * 3;
    uint8_t *plain = malloc(n);
    memcpy(plain, ">p\n", 3);
    for (size_t i = 3; i < n - 1; i++) plain[i] = "ACGT"[i % 4];
    plain[n - 1] = 'A'; /* no final newline: the last byte is sequence */
    char path[] = "/tmp/sm_test_feed_page_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, plain, n) != (ssize_t)n) exit(2);
    close(fd);
    reading got;
    read_all(path, 1, &got);
    tu_check(got.rc == SM_OK && got.len == n, "page-sized file: %zu bytes, status %d", got.len, got.rc);
    free(got.text);
    unlink(path);
    free(plain);
}

/* Long records of a plain file are stripped on several threads: the same
   bytes as one thread, whatever sits in them (blanks, lower case, '-',
   stretches of \r\n, a bad byte far in, a '>' inside a line). */
static void test_long_records(void) {
    unsigned team_total = 0;
    size_t cap = 40u << 20;
    uint8_t *plain = malloc(cap);
    char path[] = "/tmp/sm_test_feed_long_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) exit(2);
    close(fd);
    for (unsigned round = 0; round < 6; round++) {
        size_t n = 0;
        unsigned records = 1 + round % 3;
        for (unsigned r = 0; r < records; r++) {
            n += (size_t)sprintf((char *)plain + n, ">long%u\n", r);
            size_t len = (5u << 20) + tu_rng_below(&rng, 7u << 20);
            unsigned width = 50 + tu_rng_below(&rng, 80);
            for (size_t i = 0; i < len; i++) {
                uint8_t c = "ACGTacgtN-"[tu_rng_below(&rng, 10)];
                plain[n++] = c;
                if (tu_rng_below(&rng, 20000) == 0) plain[n++] = ' ';
                if ((i + 1) % width == 0) {
                    if (round == 2 && i > (6u << 20) && i < (7u << 20)) plain[n++] = '\r';
                    plain[n++] = '\n';
                }
            }
            plain[n++] = '\n';
            n += (size_t)sprintf((char *)plain + n, ">short%u\nACGT\n\n", r);
        }
        if (round == 4) plain[n - 200] = '!';  /* a bad byte near the end: the error, after the rest */
        if (round == 5) plain[n / 2] = '>';    /* inside a line: a bad byte too */
        tu_write_file(path, plain, n);
        reading want, got;
        read_all(path, 1, &want);
        /* pieces of the sizes a runner asks for (the threads strip only
           pieces of at least 4 MiB, past a record's first 4 MiB), on the
           reader's own threads or a team's */
        static const size_t intos[] = {64u << 20, 9u << 20, 5u << 20, 3u << 20};
        for (unsigned t = 3; t <= 4; t++) {
            for (unsigned k = 0; k < 5; k++) {
                unsigned team_runs = 0;
                size_t into = k < 4 ? intos[k] : (4u << 20) + tu_rng_below(&rng, 12u << 20);
                int shared = (round + k + t) % 2;
                read_all_into(path, t, into, shared ? &team_runs : NULL, &got);
                char what[96];
                snprintf(what, sizeof what, "long records round %u, %u threads, pieces of %zu%s", round, t, into,
                         shared ? ", a team's threads" : "");
                same(&want, &got, what);
                tu_check(strcmp(got.err.message, want.err.message) == 0, "%s: message '%s', expected '%s'", what,
                         got.err.message, want.err.message);
                team_total += team_runs;
                free(got.text);
            }
        }
        free(want.text);
    }
    if (sm_strip_available()) tu_check(team_total > 0, "long records: a team's threads never stripped a block");
    unlink(path);
    free(plain);
}

int main(void) {
    tu_rng_seed(&rng, tu_seed_from_env(0x66656564ull));
    test_long_records();
    test_page_end();
    test_damage();
    test_random_layouts();
    return tu_summary("test_feed");
}
