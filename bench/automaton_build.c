/* Times the dictionary-automaton builders alone (no pattern reading,
 * database assembly or saving): the serial BFS, the level-synchronous
 * builder on 1 and N threads, and with GPU=1 in the environment the GPU
 * builder (its keys' copy, kernels and tables' copy back apart; the CUDA
 * start is paid before the first timed run). Checks that every build gives
 * the same bytes.
 *
 *   [GPU=1] automaton_build KEYS_FILE [THREADS] [REPEATS]
 *
 * KEYS_FILE holds one key per line (raw bytes, as --alphabet text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seqmatch.h"
#include "engines/automaton/automaton.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s KEYS_FILE [THREADS] [REPEATS]\n", argv[0]);
        return 2;
    }
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    int repeats = argc > 3 ? atoi(argv[3]) : 3;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc(n + 1);
    if (!text || fread(text, 1, n, f) != n) return 2;
    fclose(f);
    size_t cap = 1024, nkeys = 0;
    sm_ac_key *keys = malloc(cap * sizeof *keys);
    for (char *s = text; s < text + n;) {
        char *e = memchr(s, '\n', (size_t)(text + n - s));
        if (!e) e = text + n;
        if (e > s) {
            if (nkeys == cap) keys = realloc(keys, (cap *= 2) * sizeof *keys);
            keys[nkeys].seq = (const uint8_t *)s;
            keys[nkeys].len = (uint32_t)(e - s);
            keys[nkeys].output = (uint32_t)nkeys * 2;
            nkeys++;
        }
        s = e + 1;
    }
    uint8_t fold[256];
    for (int i = 0; i < 256; i++) fold[i] = (uint8_t)i;
    unsigned configs[4] = {0, 1, threads, 0};
    const char *names[4] = {"serial BFS", "levels (1 thread)", "levels (N threads)", "GPU"};
    const char *gpu = getenv("GPU");
    int builders = gpu && *gpu == '1' ? 4 : 3;
    if (builders == 4 && sm_cuda_prepare(0) != 1) {
        fprintf(stderr, "GPU=1: no GPU to build on\n");
        return 1;
    }
    sm_buf reference = {0};
    printf("builder,threads,best_s,bytes,identical,copy_in_s,kernels_s,copy_out_s\n");
    for (int c = 0; c < builders; c++) {
        double best = 1e30, parts[3] = {0, 0, 0};
        sm_buf section = {0};
        for (int r = 0; r < repeats; r++) {
            sm_buf_free(&section);
            sm_error err;
            double ms[3] = {0, 0, 0};
            double t0 = now();
            int rc = c == 3 ? sm_ac_build_gpu(keys, nkeys, fold, 0, 0, &section, ms, &err)
                            : sm_ac_build(keys, nkeys, fold, configs[c], 0, &section, &err);
            if (rc != SM_OK) {
                fprintf(stderr, "%s: %s\n", names[c], err.message);
                return 1;
            }
            double t = now() - t0;
            if (t < best) {
                best = t;
                memcpy(parts, ms, sizeof parts);
            }
        }
        int same = c == 0 || (section.len == reference.len && memcmp(section.data, reference.data, section.len) == 0);
        printf("%s,%u,%.4f,%zu,%s", names[c], configs[c], best, section.len, same ? "yes" : "NO");
        if (c == 3) printf(",%.4f,%.4f,%.4f\n", parts[0] / 1e3, parts[1] / 1e3, parts[2] / 1e3);
        else printf(",,,\n");
        if (c == 0) reference = section;
        else sm_buf_free(&section);
    }
    return 0;
}
