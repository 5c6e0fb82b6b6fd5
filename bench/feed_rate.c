/* feed_rate: how fast the reader alone hands a file's sequence bytes over (line breaks removed,
 * decompressed), with no scan behind it: the feed's own ceiling, to set beside read_rate (the
 * machine's) and the whole command (bench/results/history.md, "The feed").
 *
 * usage: feed_rate [-r REPEATS] [-m ROOM] [-t THREADS...] FILE
 *
 * For each thread count: the reader opened with that many threads, every record read into one
 * reused 64 MiB buffer (as `seqmatch search` asks for its pieces). Prints GB/s of sequence bytes
 * delivered and of the file's bytes, median of REPEATS runs.
 * With -m ROOM (bytes; k, M suffixes) the reader strips on a team of THREADS threads and takes
 * many whole records at a time into a room of ROOM bytes (sm_reader_read_records, as `seqmatch
 * search` does with a runner's batch, whose room is about 4 MiB per thread on the CPU), the
 * records it leaves (or all, with 1 thread; FASTA: with fewer than 3) one at a time as above.
 * With -R READERS the file is cut into that many byte ranges, each read by a thread of its own
 * through its own ranged reader (FASTA), a record at a time into a room of -m bytes (default 2 MiB): the
 * readers of `seqmatch search --gpu`, without the scan.
 * Build: make -C bench feed_rate LIBDIR=../build
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <time.h>

#include "base/team.h"
#include "io/seqio.h"

#define PIECE ((size_t)64 << 20)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct {
    void (*job)(void *arg, size_t i);
    void *arg;
} team_job;

static void run_job(void *arg, size_t i, unsigned tid) {
    (void)tid;
    const team_job *j = arg;
    j->job(j->arg, i);
}

/* sm_reader_share_threads' team: the process-wide one. */
static void run_on_team(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg) {
    team_job j = {job, arg};
    unsigned threads = *(const unsigned *)ctx;
    sm_team_for(sm_team_shared(threads), n, run_job, &j, threads);
}

static size_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K') v *= 1024;
    if (*end == 'm' || *end == 'M') v *= 1024 * 1024;
    return (size_t)v;
}

typedef struct {
    const char *path;
    uint64_t begin, end;
    size_t room;
    uint64_t bases, records;
    int failed;
} range_reader;

static void *read_range(void *arg) {
    range_reader *rr = arg;
    uint8_t *buf = malloc(rr->room + 64);
    sm_reader *reader = NULL;
    sm_error err;
    if (!buf || sm_reader_open_range(rr->path, SM_INPUT_FASTA, 1, rr->begin, rr->end, &reader, &err) != SM_OK) {
        fprintf(stderr, "feed_rate: %s\n", buf ? err.message : "out of memory");
        rr->failed = 1;
        free(buf);
        return NULL;
    }
    memset(buf, 0, rr->room + 64);
    const char *name;
    int more;
    while ((more = sm_reader_next_record(reader, &name, &err)) == 1) {
        rr->records++;
        size_t len;
        int piece;
        while ((piece = sm_reader_read_into(reader, buf, rr->room, &len, &err)) == 1) rr->bases += len;
        if (piece < 0) more = -1;
        if (more < 0) break;
    }
    if (more < 0) {
        fprintf(stderr, "feed_rate: %s\n", err.message);
        rr->failed = 1;
    }
    sm_reader_close(reader);
    free(buf);
    return NULL;
}

/* Seconds for readers threads each reading its range; bases and records summed. */
static double read_ranges(const char *path, uint64_t size, unsigned readers, size_t room, uint64_t *bases,
                          uint64_t *records) {
    range_reader rr[256];
    pthread_t th[256];
    if (readers > 256) readers = 256;
    double t0 = now();
    for (unsigned i = 0; i < readers; i++) {
        rr[i] = (range_reader){path, size * i / readers, size * (i + 1) / readers, room, 0, 0, 0};
        if (pthread_create(&th[i], NULL, read_range, &rr[i]) != 0) return -1;
    }
    *bases = *records = 0;
    int failed = 0;
    for (unsigned i = 0; i < readers; i++) {
        pthread_join(th[i], NULL);
        *bases += rr[i].bases;
        *records += rr[i].records;
        failed |= rr[i].failed;
    }
    return failed ? -1 : now() - t0;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int repeats = 3;
    size_t room = 0;
    unsigned threads[32];
    int nthreads = 0;
    unsigned readers = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "-R") == 0 && i + 1 < argc) readers = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) room = parse_size(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0) {
            while (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' && nthreads < 32)
                threads[nthreads++] = (unsigned)atoi(argv[++i]);
        } else path = argv[i];
    }
    struct stat st;
    if (!path || repeats < 1 || stat(path, &st) != 0) {
        fprintf(stderr, "usage: feed_rate [-r REPEATS] [-m ROOM] [-t THREADS... | -R READERS] FILE\n");
        return 2;
    }
    if (readers) {
        double secs[64];
        int n = repeats < 64 ? repeats : 64;
        uint64_t bases = 0, records = 0;
        for (int r = 0; r < n; r++)
            if ((secs[r] = read_ranges(path, (uint64_t)st.st_size, readers, room ? room : (size_t)2 << 20, &bases,
                                       &records)) < 0) {
                fprintf(stderr, "feed_rate: a reader failed\n");
                return 2;
            }
        qsort(secs, (size_t)n, sizeof *secs, compare);
        double s = secs[n / 2];
        printf("readers=%u\troom=%zu\tseconds=%.3f\tsequence_GBps=%.2f\tfile_GBps=%.2f\trecords=%llu\tbases=%llu\n",
               readers, room ? room : (size_t)2 << 20, s, bases / s / 1e9, (double)st.st_size / s / 1e9,
               (unsigned long long)records, (unsigned long long)bases);
        return 0;
    }
    if (nthreads == 0) threads[nthreads++] = 1;
    size_t cap = room > PIECE ? room : PIECE;
    uint8_t *buf = malloc(cap + 64);
    if (!buf) return 2;
    memset(buf, 0, cap + 64);
    for (int ti = 0; ti < nthreads; ti++) {
        double secs[64];
        int n = repeats < 64 ? repeats : 64;
        uint64_t bases = 0, records = 0, at_once = 0;
        for (int r = 0; r < n; r++) {
            sm_reader *reader = NULL;
            sm_error err;
            bases = records = at_once = 0;
            double t0 = now();
            if (sm_reader_open_threads(path, SM_INPUT_AUTO, threads[ti], &reader, &err) != SM_OK) {
                fprintf(stderr, "feed_rate: %s\n", err.message);
                return 2;
            }
            if (room && threads[ti] > 1) sm_reader_share_threads(reader, threads[ti], run_on_team, &threads[ti]);
            const char *name;
            int more;
            for (;;) {
                sm_reader_records got;
                if (room && sm_reader_read_records(reader, buf, room, SIZE_MAX, &got)) {
                    records += got.n;
                    at_once += got.n;
                    for (size_t k = 0; k < got.n; k++) bases += got.lens[k];
                    continue;
                }
                more = sm_reader_next_record(reader, &name, &err);
                if (more != 1) break;
                records++;
                size_t len;
                int piece;
                while ((piece = sm_reader_read_into(reader, buf, PIECE, &len, &err)) == 1) bases += len;
                if (piece < 0) more = -1;
                if (more < 0) break;
            }
            sm_reader_close(reader);
            if (more < 0) {
                fprintf(stderr, "feed_rate: %s\n", err.message);
                return 2;
            }
            secs[r] = now() - t0;
        }
        qsort(secs, (size_t)n, sizeof *secs, compare);
        double s = secs[n / 2];
        printf("%sthreads=%u\tseconds=%.3f\tsequence_GBps=%.2f\tfile_GBps=%.2f\trecords=%llu\tbases=%llu",
               room && threads[ti] > 1 ? "many_records\t" : "", threads[ti], s, bases / s / 1e9,
               (double)st.st_size / s / 1e9, (unsigned long long)records, (unsigned long long)bases);
        if (room) printf("\trecords_at_once=%llu", (unsigned long long)at_once);
        printf("\n");
        fflush(stdout);
    }
    free(buf);
    return 0;
}
