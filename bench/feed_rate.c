/* feed_rate: how fast the reader alone hands a file's sequence bytes over (line breaks removed,
 * decompressed), with no scan behind it: the feed's own ceiling, to set beside read_rate (the
 * machine's) and the whole command (bench/results/history.md, "The feed").
 *
 * usage: feed_rate [-r REPEATS] [-t THREADS...] FILE
 *
 * For each thread count: the reader opened with that many threads, every record read into one
 * reused 64 MiB buffer (as `seqmatch search` asks for its pieces). Prints GB/s of sequence bytes
 * delivered and of the file's bytes, median of REPEATS runs.
 * Build: make -C bench feed_rate LIBDIR=../build
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "io/seqio.h"

#define PIECE ((size_t)64 << 20)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int repeats = 3;
    unsigned threads[32];
    int nthreads = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0) {
            while (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' && nthreads < 32)
                threads[nthreads++] = (unsigned)atoi(argv[++i]);
        } else path = argv[i];
    }
    struct stat st;
    if (!path || repeats < 1 || stat(path, &st) != 0) {
        fprintf(stderr, "usage: feed_rate [-r REPEATS] [-t THREADS...] FILE\n");
        return 2;
    }
    if (nthreads == 0) threads[nthreads++] = 1;
    uint8_t *buf = malloc(PIECE + 64);
    if (!buf) return 2;
    memset(buf, 0, PIECE + 64);
    for (int ti = 0; ti < nthreads; ti++) {
        double secs[64];
        int n = repeats < 64 ? repeats : 64;
        uint64_t bases = 0, records = 0;
        for (int r = 0; r < n; r++) {
            sm_reader *reader = NULL;
            sm_error err;
            bases = records = 0;
            double t0 = now();
            if (sm_reader_open_threads(path, SM_INPUT_AUTO, threads[ti], &reader, &err) != SM_OK) {
                fprintf(stderr, "feed_rate: %s\n", err.message);
                return 2;
            }
            const char *name;
            int more;
            while ((more = sm_reader_next_record(reader, &name, &err)) == 1) {
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
        printf("threads=%u\tseconds=%.3f\tsequence_GBps=%.2f\tfile_GBps=%.2f\trecords=%llu\tbases=%llu\n", threads[ti], s,
               bases / s / 1e9, (double)st.st_size / s / 1e9, (unsigned long long)records, (unsigned long long)bases);
        fflush(stdout);
    }
    free(buf);
    return 0;
}
