/* gpu_inflate: how fast the GPU module inflates a BGZF file's blocks through nvCOMP
 * (sm_cuda_inflate_run, as `seqmatch search --gpu` has its readers' jobs inflated), with no
 * reader or scan behind it: the GPU inflater's own ceiling, beside bench/inflate_bench (the CPU
 * libraries) and bench/feed_rate (the reader).
 *
 * usage: gpu_inflate [-r REPEATS] [-j JOB_BYTES] [-t THREADS...] FILE.bgz
 *
 * The file (mapped) is cut into jobs of whole blocks holding up to JOB_BYTES inflated (k, M
 * suffixes; default 4M; compressed bytes up to half that), as the reader's source cuts them; for each thread count, that many
 * threads, each with an inflater of its own on GPU 0, take the jobs in turn. Prints GB/s of
 * inflated bytes and of the file's, median of REPEATS runs, and the jobs the inflater gave back
 * (0: the CPU would inflate them); for the first such job, which of its blocks alone fails.
 * Build (a CUDA build; the module beside the program or at $SEQMATCH_CUDA_MODULE, nvCOMP at
 * $SEQMATCH_NVCOMP or beside the module):
 *   make -C bench gpu_inflate LIBDIR=../build
 */
#define _POSIX_C_SOURCE 200809L
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

#include "backends/cuda/cuda_device.h"

typedef struct {
    size_t at, len, out;
    unsigned blocks;
} job;

static const uint8_t *file;
static job *jobs;
static size_t njobs, job_bytes = (size_t)4 << 20, max_blocks;
static unsigned next_job, given_back;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t block_size(const uint8_t *p, size_t n) {
    if (n < 28 || p[0] != 0x1f || p[1] != 0x8b || p[12] != 'B' || p[13] != 'C') return 0;
    size_t b = ((size_t)p[16] | (size_t)p[17] << 8) + 1;
    return b <= n ? b : 0;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void cut(size_t size) {
    size_t cap = 1024;
    jobs = malloc(cap * sizeof *jobs);
    for (size_t at = 0; at < size;) {
        job j = {at, 0, 0, 0};
        size_t b;
        while (at < size && (b = block_size(file + at, size - at)) != 0) {
            uint32_t isize = le32(file + at + b - 4);
            if (j.blocks && (j.out + isize > job_bytes || j.blocks == max_blocks || j.len + b > job_bytes / 2)) break;
            j.len += b, j.out += isize, j.blocks++, at += b;
        }
        if (!j.blocks) {
            fprintf(stderr, "gpu_inflate: no BGZF block at byte %zu\n", at);
            exit(1);
        }
        if (njobs == cap) jobs = realloc(jobs, (cap *= 2) * sizeof *jobs);
        jobs[njobs++] = j;
    }
}

/* Which blocks of a job the inflater refuses alone. */
static void diagnose(sm_cuda_inflater *f, const job *j, uint8_t *out) {
    char msg[256];
    size_t at = j->at, made;
    for (unsigned k = 0; k < j->blocks; k++) {
        size_t b = block_size(file + at, j->at + j->len - at);
        int rc = sm_cuda_inflate_run(f, file + at, b, out, job_bytes, &made, msg);
        if (rc != 1)
            fprintf(stderr, "  block %u at byte %zu: %zu bytes, ISIZE %u, first deflate byte 0x%02x: rc %d %s\n", k, at,
                    b, le32(file + at + b - 4), file[at + 18], rc, rc < 0 ? msg : "");
        at += b;
    }
}

static void *run(void *arg) {
    (void)arg;
    char msg[256];
    sm_cuda_inflater *f;
    if (sm_cuda_inflate_open(0, max_blocks, job_bytes / 2, job_bytes, &f, msg) != 0) {
        fprintf(stderr, "gpu_inflate: %s\n", msg);
        exit(1);
    }
    uint8_t *out = malloc(job_bytes);
    for (;;) {
        size_t k = __atomic_fetch_add(&next_job, 1, __ATOMIC_RELAXED);
        if (k >= njobs) break;
        size_t made;
        int rc = sm_cuda_inflate_run(f, file + jobs[k].at, jobs[k].len, out, job_bytes, &made, msg);
        if (rc < 0) {
            fprintf(stderr, "gpu_inflate: %s\n", msg);
            exit(1);
        }
        if (rc == 0 && __atomic_fetch_add(&given_back, 1, __ATOMIC_RELAXED) == 0) {
            fprintf(stderr, "job %zu (%u blocks) given back:\n", k, jobs[k].blocks);
            diagnose(f, &jobs[k], out);
        }
    }
    free(out);
    sm_cuda_inflate_close(f);
    return NULL;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int repeats = 3, nthreads = 0;
    unsigned threads[64];
    int i = 1;
    for (; i < argc - 1; i++) {
        if (strcmp(argv[i], "-r") == 0) repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "-j") == 0) {
            char *unit;
            job_bytes = strtoull(argv[++i], &unit, 10);
            job_bytes <<= *unit == 'k' || *unit == 'K' ? 10 : *unit == 'm' || *unit == 'M' ? 20 : 0;
        } else if (strcmp(argv[i], "-t") == 0) {
            while (i + 2 < argc && argv[i + 1][0] != '-' && nthreads < 64) threads[nthreads++] = (unsigned)atoi(argv[++i]);
        } else break;
    }
    if (i != argc - 1 || repeats < 1 || job_bytes < 65536) {
        fprintf(stderr, "usage: gpu_inflate [-r REPEATS] [-j JOB_BYTES] [-t THREADS...] FILE.bgz\n");
        return 2;
    }
    if (!nthreads) threads[nthreads++] = 1;
    int fd = open(argv[i], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(argv[i]);
        return 1;
    }
    file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    max_blocks = job_bytes / 65536 * 4 > 256 ? job_bytes / 65536 * 4 : 256;
    cut((size_t)st.st_size);
    size_t total = 0;
    for (size_t k = 0; k < njobs; k++) total += jobs[k].out;
    char name[256];
    sm_cuda_device_name(0, name, sizeof name);
    printf("%s: %zu jobs of up to %zu bytes, %zu bytes inflated from %lld; %s\n", argv[i], njobs, job_bytes, total,
           (long long)st.st_size, name);
    for (int t = 0; t < nthreads; t++) {
        double *times = calloc((size_t)repeats, sizeof *times);
        unsigned back = 0;
        for (int r = 0; r < repeats; r++) {
            pthread_t th[256];
            unsigned n = threads[t] > 256 ? 256 : threads[t];
            next_job = given_back = 0;
            double t0 = now();
            for (unsigned k = 0; k < n; k++) pthread_create(&th[k], NULL, run, NULL);
            for (unsigned k = 0; k < n; k++) pthread_join(th[k], NULL);
            times[r] = now() - t0;
            back = given_back;
        }
        qsort(times, (size_t)repeats, sizeof *times, by_value);
        double m = times[repeats / 2];
        printf("threads %3u: %.3f s, %.2f GB/s inflated, %.2f GB/s of file; %u jobs given back\n", threads[t], m,
               (double)total / m / 1e9, (double)st.st_size / m / 1e9, back);
        free(times);
    }
    return 0;
}
