/* membw: single-core memory read bandwidth.
 * usage: membw [MiB]   (default 1024)
 * Fills a buffer (so that its pages exist), then sums it as 64-bit words several times and
 * prints the best pass in GB/s (10^9 bytes per second). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    if (mib == 0) mib = 1024;
    size_t bytes = mib << 20, n = bytes / sizeof(uint64_t);
    uint64_t *buf = malloc(bytes);
    if (!buf) {
        fprintf(stderr, "membw: cannot allocate %zu MiB\n", mib);
        return 2;
    }
    for (size_t i = 0; i < n; i++) buf[i] = i * 0x9E3779B97F4A7C15ull;
    double best = 1e30;
    uint64_t total = 0;
    for (int pass = 0; pass < 5; pass++) {
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        double t = now_s();
        for (size_t i = 0; i + 4 <= n; i += 4) {
            s0 += buf[i];
            s1 += buf[i + 1];
            s2 += buf[i + 2];
            s3 += buf[i + 3];
        }
        t = now_s() - t;
        total += s0 ^ s1 ^ s2 ^ s3;
        if (t < best) best = t;
    }
    printf("read_GBps=%.2f\tbuffer_MiB=%zu\tbest_pass_s=%.4f\tchecksum=%llu\n",
           (double)bytes / best / 1e9, mib, best, (unsigned long long)total);
    free(buf);
    return 0;
}
