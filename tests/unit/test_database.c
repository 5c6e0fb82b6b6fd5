/* Loading saved databases (sm_db_load): the header is read and checked
 * first, a regular file is mapped rather than copied, a pipe is read up to
 * the size its header gives, and every refusal names the file and says
 * why. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char dir[64];

static const char *path_of(const char *name) {
    static char paths[8][128];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

static sm_db *small_db(void) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    sm_pattern p[] = {{"EcoRI", "GAATTC", 6}, {NULL, "ACGTACGTAC", 10}};
    sm_db *db = NULL;
    sm_error err;
    if (sm_compile(p, 2, &o, &db, &err) != SM_OK) {
        fprintf(stderr, "compile: %s\n", err.message);
        exit(2);
    }
    return db;
}

/* Loads path and checks the status and, for a failure, the whole message. */
static void expect_load(const char *path, int code, const char *message) {
    sm_db *db = (sm_db *)1;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_db_load(path, &db, &err);
    tu_check(rc == code, "%s: status %d, expected %d (%s)", path, rc, code, err.message);
    if (code != SM_OK) {
        tu_check(db == NULL, "%s: a failed load leaves a database", path);
        tu_check(err.code == code && strcmp(err.message, message) == 0, "%s: message '%s', expected '%s'", path,
                 err.message, message);
    } else {
        sm_db_free(db);
    }
}

/* A loaded database scans like the one saved, and its bytes are the file's. */
static void test_round_trip(const sm_db *db, const void *bytes, size_t size) {
    const char *path = path_of("good.smdb");
    write_file(path, bytes, size);
    sm_db *loaded = NULL;
    sm_error err;
    int rc = sm_db_load(path, &loaded, &err);
    if (!tu_check(rc == SM_OK, "load: %s", rc == SM_OK ? "" : err.message)) return;
    size_t got_size = 0;
    const void *got = sm_db_bytes(loaded, &got_size);
    tu_check(got_size == size && memcmp(got, bytes, size) == 0, "loaded bytes differ");
    tu_check(((uintptr_t)got & 63) == 0, "a loaded database is not 64-byte aligned");
    sm_db_info a, b;
    sm_db_get_info(db, &a);
    sm_db_get_info(loaded, &b);
    tu_check(a.pattern_count == b.pattern_count && strcmp(sm_db_pattern_name(loaded, 0), "EcoRI") == 0,
             "loaded database: patterns");
    sm_scratch *s = NULL;
    uint64_t counts[2] = {0, 0};
    tu_check(sm_scratch_alloc(loaded, &s) == SM_OK && sm_count(loaded, s, "GAATTCACGTACGTACGG", 18, counts) == SM_OK,
             "scan of a loaded database");
    tu_check(counts[0] == 2 && counts[1] == 1, "counts %llu %llu", (unsigned long long)counts[0],
             (unsigned long long)counts[1]);
    sm_scratch_free(s);
    sm_db_free(loaded); /* unmaps: ASan and valgrind see a leak otherwise */
    /* the file may change or go once loaded databases are freed */
    tu_check(unlink(path) == 0, "unlink");
}

static void test_refusals(const uint8_t *bytes, size_t size) {
    char want[512];
    const char *path = path_of("bad.smdb");

    write_file(path, "", 0);
    snprintf(want, sizeof want, "%s: not a seqmatch database (it is empty)", path);
    expect_load(path, SM_ERR_FORMAT, want);

    write_file(path, ">a\nACGT\n", 8);
    snprintf(want, sizeof want, "%s: not a seqmatch database (bad magic number)", path);
    expect_load(path, SM_ERR_FORMAT, want);

    /* cut inside the header: truncated, not a bad magic number */
    size_t cuts[] = {3, 100, 255};
    for (int k = 0; k < 3; k++) {
        write_file(path, bytes, cuts[k]);
        snprintf(want, sizeof want, "%s: database is truncated: %zu bytes, shorter than its 256-byte header", path,
                 cuts[k]);
        expect_load(path, SM_ERR_FORMAT, want);
    }
    /* cut after the header, and a byte too many */
    write_file(path, bytes, size - 1);
    snprintf(want, sizeof want, "%s: database is truncated (%zu bytes, its header says %zu)", path, size - 1, size);
    expect_load(path, SM_ERR_FORMAT, want);
    uint8_t *longer = malloc(size + 1);
    memcpy(longer, bytes, size);
    longer[size] = '\n';
    write_file(path, longer, size + 1);
    snprintf(want, sizeof want, "%s: database has trailing bytes (%zu bytes, its header says %zu)", path, size + 1,
             size);
    expect_load(path, SM_ERR_FORMAT, want);
    /* a changed byte past the header: the checksum */
    memcpy(longer, bytes, size);
    longer[size - 1] ^= 1;
    write_file(path, longer, size);
    snprintf(want, sizeof want, "%s: database checksum mismatch (file corrupted)", path);
    expect_load(path, SM_ERR_FORMAT, want);
    free(longer);

    /* compressed data is named */
    write_file(path, "\x1f\x8b\x08\x00\x00\x00", 6);
    snprintf(want, sizeof want,
             "%s: not a seqmatch database (bad magic number: the data is gzip-compressed; decompress it first)", path);
    expect_load(path, SM_ERR_FORMAT, want);

    snprintf(want, sizeof want, "%s: No such file or directory", path_of("missing.smdb"));
    expect_load(path_of("missing.smdb"), SM_ERR_IO, want);
    snprintf(want, sizeof want, "%s: Is a directory", dir);
    expect_load(dir, SM_ERR_IO, want);
    /* /dev/zero is refused after its first 256 bytes, not read to the end */
    if (access("/dev/zero", R_OK) == 0)
        expect_load("/dev/zero", SM_ERR_FORMAT, "/dev/zero: not a seqmatch database (bad magic number)");
    unlink(path);
}

/* A FIFO is read, not mapped: whole, cut short, or with more after it. */
static void fifo_case(const uint8_t *bytes, size_t size, size_t send, int extra, int code, const char *message) {
    const char *path = path_of("db.fifo");
    unlink(path);
    if (mkfifo(path, 0600) != 0) {
        printf("note: FIFO cases skipped (mkfifo: %s)\n", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = fopen(path, "wb");
        if (!f) _exit(1);
        fwrite(bytes, 1, send, f);
        if (extra) fputs("more", f);
        fclose(f);
        _exit(0);
    }
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_db_load(path, &db, &err);
    int st;
    waitpid(pid, &st, 0);
    tu_check(rc == code, "FIFO of %zu bytes: status %d, expected %d (%s)", send, rc, code, err.message);
    if (rc == SM_OK) {
        size_t got = 0;
        const void *p = sm_db_bytes(db, &got);
        tu_check(got == size && memcmp(p, bytes, size) == 0, "FIFO: loaded bytes differ");
        tu_check(((uintptr_t)p & 63) == 0, "FIFO: not 64-byte aligned");
        sm_db_free(db);
    } else {
        char want[512];
        snprintf(want, sizeof want, message, path);
        tu_check(strcmp(err.message, want) == 0, "FIFO: message '%s', expected '%s'", err.message, want);
    }
    unlink(path);
}

static void test_fifo(const uint8_t *bytes, size_t size) {
    fifo_case(bytes, size, size, 0, SM_OK, NULL);
    char want[256];
    snprintf(want, sizeof want, "%%s: database is truncated (%zu bytes, its header says %zu)", size - 7, size);
    fifo_case(bytes, size, size - 7, 0, SM_ERR_FORMAT, want);
    snprintf(want, sizeof want, "%%s: database has trailing bytes (its header says %zu)", size);
    fifo_case(bytes, size, size, 1, SM_ERR_FORMAT, want);
    fifo_case(bytes, size, 40, 0, SM_ERR_FORMAT, "%s: database is truncated: 40 bytes, shorter than its 256-byte header");
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/sm_test_db_XXXXXX", "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    sm_db *db = small_db();
    size_t size = 0;
    const uint8_t *bytes = sm_db_bytes(db, &size);
    test_round_trip(db, bytes, size);
    test_refusals(bytes, size);
    test_fifo(bytes, size);
    sm_db_free(db);
    rmdir(dir);
    return tu_summary("test_database");
}
