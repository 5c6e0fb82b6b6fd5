/* read_rate: how fast this machine can hand a page-cached file's bytes to a program, the ceiling
 * under any reader (bench/results/history.md, "The feed").
 *
 * usage: read_rate [-r REPEATS] [-t THREADS...] FILE
 *
 * For each thread count T, each way below splits the file into T equal ranges, one per thread,
 * and reports GB/s (10^9 bytes per second of the file's size; median of REPEATS runs):
 *   mmap-touch  the file mapped once per run, every thread reads each 64-byte line of its range
 *               (a sum, so that nothing is optimised away): page faults plus memory reads
 *   pread       every thread reads its range with pread() into its own 8 MiB buffer: the
 *               kernel's copy out of the page cache
 *   memcpy      the file already in anonymous memory, every thread copies its range into its
 *               own 8 MiB buffer: memory bandwidth, the ceiling of any copy into pinned buffers
 * Build: make -C bench read_rate
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUF ((size_t)8 << 20)

typedef struct {
    int mode;
    int fd;
    const uint8_t *base;
    size_t lo, hi;
    uint64_t sum;
} job;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *work(void *arg) {
    job *j = arg;
    uint64_t sum = 0;
    if (j->mode == 0) {
        for (size_t i = j->lo; i < j->hi; i += 64) sum += j->base[i];
    } else {
        uint8_t *buf = malloc(BUF);
        if (!buf) return NULL;
        memset(buf, 0, BUF);
        for (size_t at = j->lo; at < j->hi;) {
            size_t n = j->hi - at < BUF ? j->hi - at : BUF;
            if (j->mode == 1) {
                ssize_t got = pread(j->fd, buf, n, (off_t)at);
                if (got <= 0) break;
                n = (size_t)got;
            } else {
                memcpy(buf, j->base + at, n);
            }
            sum += buf[n - 1];
            at += n;
        }
        free(buf);
    }
    j->sum = sum;
    return NULL;
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
    if (!path || repeats < 1) {
        fprintf(stderr, "usage: read_rate [-r REPEATS] [-t THREADS...] FILE\n");
        return 2;
    }
    if (nthreads == 0) threads[nthreads++] = 1;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(path);
        return 2;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *copy = malloc(size);
    if (!copy || pread(fd, copy, size, 0) != (ssize_t)size) {
        fprintf(stderr, "read_rate: cannot read %s into memory\n", path);
        return 2;
    }
    static const char *names[] = {"mmap-touch", "pread", "memcpy"};
    for (int ti = 0; ti < nthreads; ti++) {
        unsigned t = threads[ti] ? threads[ti] : 1;
        for (int mode = 0; mode < 3; mode++) {
            double secs[64];
            int n = repeats < 64 ? repeats : 64;
            uint64_t check = 0;
            for (int r = 0; r < n; r++) {
                const uint8_t *base = copy;
                void *map = NULL;
                double t0 = now();
                if (mode == 0) {
                    map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
                    if (map == MAP_FAILED) {
                        perror("mmap");
                        return 2;
                    }
                    base = map;
                }
                job jobs[256];
                pthread_t tid[256];
                unsigned use = t < 256 ? t : 256;
                for (unsigned k = 0; k < use; k++) {
                    jobs[k] = (job){mode, fd, base, size / use * k, k + 1 == use ? size : size / use * (k + 1), 0};
                    pthread_create(&tid[k], NULL, work, &jobs[k]);
                }
                for (unsigned k = 0; k < use; k++) {
                    pthread_join(tid[k], NULL);
                    check += jobs[k].sum;
                }
                if (map) munmap(map, size);
                secs[r] = now() - t0;
            }
            qsort(secs, (size_t)n, sizeof *secs, compare);
            printf("way=%s\tthreads=%u\tGBps=%.2f\tbytes=%zu\tcheck=%llu\n", names[mode], t, size / secs[n / 2] / 1e9,
                   size, (unsigned long long)(check & 0xff));
            fflush(stdout);
        }
    }
    free(copy);
    close(fd);
    return 0;
}
