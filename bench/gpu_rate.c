/* gpu_rate: the CUDA backend on one pattern set and one text, checked
 * against the CPU and timed three ways, beside seed 002's plain GPU
 * automaton and the device's memory read rate.
 *
 * usage: gpu_rate [-r REPEATS] [-a dna|text] [-s both|+] [-b BATCH_MB] [-e ENGINE] [-m K | -k K] [-R ends]
 *                 [-q PAM] [-P] PATTERNS TARGET
 *
 * PATTERNS: one pattern per line.
 * TARGET:   any file, read whole into memory and scanned as one sequence.
 * ENGINE:   gpu (default: the planner's choice for the GPU), auto (its choice
 *           for the CPU), automaton, kmer, wumanber, shiftand, mismatch, myers
 *           or pigeonhole.
 * -m K, -k K: up to K mismatches or edits; -R ends: every end (k edits);
 *           -q PAM: the PAM after every pattern (--pam).
 * -P:       also seed 002's plain kernel (bench/plain_gpu.cu) on the
 *           automaton of the set, at several bytes per thread.
 *
 * Output, one key=value line per measurement (MB = 10^6 bytes, GB = 10^9):
 *   device=...                   the GPU, its pinned host-to-device copy rate,
 *                                device-to-device copy rate (read + write bytes)
 *                                and read rate over the text (hbm_read_GBps)
 *   engines=... gpu=...          the database's engines and what the GPU runs
 *   check cpu_count=N gpu_count=N ... same=yes|no
 *                                counts of the CPU runner on every core and of the
 *                                CUDA runner counting; hits delivered one by one by
 *                                the CUDA runner against the CPU runner's count of
 *                                the same prefix (the whole text, or the part that
 *                                holds about 5*10^6 hits)
 *   resident_GBps=...            the kernels alone on text already on the GPU (one
 *                                batch holding the whole text), median of REPEATS
 *   count_GBps=... hits_GBps=... the whole runner from host memory (hits: on that prefix): copies into pinned
 *                                buffers, transfers, kernels, counts or hits back and
 *                                delivered in order; median of REPEATS
 *   plain ...                    the plain kernel's rate at each chunk, its best and count
 *   cells=... resident_TCUPS=... the DP cells (pattern symbols x text bytes x strands)
 *                                per second of the resident kernels (k edits)
 * Exit status 2 when the counts differ.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_input.h"
#include "backends/cuda/cuda_backend.h"
#include "base/internal.h"
#include "engines/automaton/automaton_gpu.h"
#include "engines/engine.h"
#include "seqmatch.h"

int plain_ac_time(const uint8_t *dev_text, uint64_t n, uint64_t per_thread, const uint32_t *delta, uint32_t states,
                  uint32_t columns, const uint16_t *class_of, const uint32_t *outputs, uint32_t overlap, int repeats,
                  double *ms, unsigned long long *count);
int plain_upload(const void *text, uint64_t n, uint8_t **dev);
void plain_free(uint8_t *dev);
double device_read_rate(const uint8_t *dev, uint64_t n, int repeats);

#define HIT_LIMIT 5000000.0

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *why) {
    fprintf(stderr, "gpu_rate: %s: %s\n", what, why);
    exit(2);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return v[n / 2];
}

static int count_hit(const sm_hit *hit, void *ctx) {
    (void)hit;
    (*(uint64_t *)ctx)++;
    return 0;
}

/* One run of the whole runner over the text fed in 4 MiB pieces; seconds. */
static double run_once(const sm_db *db, sm_backend backend, const char *text, size_t len, size_t batch,
                       int count_only, uint64_t *result) {
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.backend = backend;
    o.chunk_size = backend == SM_BACKEND_CUDA ? batch : 0;
    o.count_only = count_only;
    uint64_t hits = 0;
    o.on_hit = count_hit;
    o.ctx = &hits;
    sm_runner *r;
    sm_error err;
    if (sm_runner_create(db, &o, &r, &err) != SM_OK) die("runner", err.message);
    double t0 = now();
    sm_runner_begin_record(r);
    for (size_t at = 0; at < len; at += (size_t)4 << 20) {
        size_t n = len - at < ((size_t)4 << 20) ? len - at : (size_t)4 << 20;
        if (sm_runner_feed(r, text + at, n) != SM_OK) die("runner", "feed failed");
    }
    if (sm_runner_end_record(r) != SM_OK || sm_runner_flush(r) != SM_OK) die("runner", "scan failed");
    double t = now() - t0;
    *result = count_only ? sm_runner_total(r) : hits;
    sm_runner_free(r);
    return t;
}

/* seed 002's plain kernel on the automaton of the set, at several chunk sizes. */
static void plain_lines(const sm_pattern *pats, size_t n, const sm_compile_options *base, const uint8_t *dev_text,
                        size_t len, int repeats, uint64_t cpu_total) {
    sm_compile_options co = *base;
    co.engine = SM_ENGINE_AUTOMATON;
    co.backend = SM_BACKEND_CPU;
    sm_db *db;
    sm_error err;
    if (sm_compile(pats, n, &co, &db, &err) != SM_OK) {
        printf("plain skipped=\"%s\"\n", err.message);
        return;
    }
    const sm_db_section *e = &sm_db_sections(db)[0];
    sm_section sec = {db->bytes + e->offset, e->size, sm_db_patterns(db)};
    sm_gpu_view v;
    char why[256];
    sm_gpu_db gdb = {0};
    sm_engine_for_kind(e->kind)->gpu->view(&sec, &gdb, &v, why);
    const sm_gpu_automaton *a = SM_GPU_VIEW(&v, const sm_gpu_automaton);
    const uint32_t *out_index = (const uint32_t *)(sec.bytes + a->out_index_off);
    uint32_t *outputs = malloc((size_t)a->states * sizeof *outputs);
    for (uint32_t q = 0; q < a->states; q++) outputs[q] = out_index[q + 1] - out_index[q];
    static const uint64_t chunks[] = {64, 256, 1024, 4096};
    double best = 0;
    uint64_t best_chunk = 0;
    int same = 1;
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        double ms;
        unsigned long long count;
        if (plain_ac_time(dev_text, len, chunks[c], (const uint32_t *)(sec.bytes + a->delta_off), a->states, a->columns,
                          (const uint16_t *)(sec.bytes + a->class_of_off), outputs, sm_db_head(db)->max_length - 1,
                          repeats, &ms, &count) != 0) {
            printf("plain failed\n");
            break;
        }
        double gbps = len / (ms * 1e-3) / 1e9;
        printf("plain chunk=%llu GBps=%.1f count=%llu\n", (unsigned long long)chunks[c], gbps, count);
        same &= count == cpu_total;
        if (gbps > best) best = gbps, best_chunk = chunks[c];
    }
    printf("plain_best_GBps=%.1f plain_best_chunk=%llu plain_same=%s\n", best, (unsigned long long)best_chunk,
           same ? "yes" : "NO");
    free(outputs);
    sm_db_free(db);
}

static void device_line(size_t bytes, const uint8_t *dev_text, size_t len) {
    int dev = 0;
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) die("CUDA", "no device");
    void *host, *a, *b;
    if (cudaMallocHost(&host, bytes) != cudaSuccess || cudaMalloc(&a, bytes) != cudaSuccess ||
        cudaMalloc(&b, bytes) != cudaSuccess)
        die("CUDA", "cannot allocate copy buffers");
    memset(host, 1, bytes);
    double h2d[5], d2d[5];
    for (int i = 0; i < 5; i++) {
        double t0 = now();
        cudaMemcpy(a, host, bytes, cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();
        h2d[i] = bytes / (now() - t0) / 1e9;
        t0 = now();
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaDeviceSynchronize();
        d2d[i] = 2.0 * bytes / (now() - t0) / 1e9;
    }
    printf("device=\"%s\" sms=%d l2_MB=%.0f pinned_h2d_GBps=%.1f d2d_GBps=%.0f hbm_read_GBps=%.0f\n", p.name,
           p.multiProcessorCount, p.l2CacheSize / 1e6, median(h2d, 5), median(d2d, 5),
           dev_text ? device_read_rate(dev_text, len, 9) : 0.0);
    cudaFreeHost(host);
    cudaFree(a);
    cudaFree(b);
}

static int engine_named(const char *v, sm_compile_options *co) {
    static const struct {
        const char *name;
        sm_engine engine;
        sm_backend backend;
    } names[] = {{"gpu", SM_ENGINE_AUTO, SM_BACKEND_CUDA},         {"auto", SM_ENGINE_AUTO, SM_BACKEND_CPU},
                 {"automaton", SM_ENGINE_AUTOMATON, SM_BACKEND_CPU}, {"kmer", SM_ENGINE_KMER, SM_BACKEND_CPU},
                 {"wumanber", SM_ENGINE_WUMANBER, SM_BACKEND_CPU},   {"shiftand", SM_ENGINE_SHIFTAND, SM_BACKEND_CPU},
                 {"mismatch", SM_ENGINE_MISMATCH, SM_BACKEND_CPU},   {"myers", SM_ENGINE_MYERS, SM_BACKEND_CPU},
                 {"pigeonhole", SM_ENGINE_PIGEONHOLE, SM_BACKEND_CPU}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(v, names[i].name) == 0) {
            co->engine = names[i].engine;
            co->backend = names[i].backend;
            return 0;
        }
    return -1;
}

int main(int argc, char **argv) {
    int repeats = 5, opt, plain = 0;
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.engine = SM_ENGINE_AUTO;
    co.backend = SM_BACKEND_CUDA;
    co.build_threads = 8;
    size_t batch = (size_t)256 << 20;
    int argi = 1;
    while (argi < argc && argv[argi][0] == '-' && argv[argi][1] && !argv[argi][2]) {
        opt = argv[argi][1];
        if (opt == 'P') {
            plain = 1;
            argi++;
            continue;
        }
        if (argi + 1 >= argc) break;
        const char *v = argv[argi + 1];
        if (opt == 'r') repeats = atoi(v);
        else if (opt == 'a') co.alphabet = strcmp(v, "text") == 0 ? SM_ALPHABET_TEXT : SM_ALPHABET_DNA;
        else if (opt == 's') co.strands = strcmp(v, "+") == 0 ? SM_STRAND_FORWARD : SM_STRAND_BOTH;
        else if (opt == 'b') batch = (size_t)atol(v) << 20;
        else if (opt == 'm' || opt == 'k') {
            co.match = opt == 'm' ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
            co.max_errors = (uint32_t)atoi(v);
        } else if (opt == 'R') co.report = strcmp(v, "ends") == 0 ? SM_REPORT_ENDS : SM_REPORT_BEST;
        else if (opt == 'q') co.pam = v;
        else if (opt == 'e') {
            if (engine_named(v, &co) != 0) die(v, "unknown engine");
        } else die(argv[argi], "unknown option");
        argi += 2;
    }
    if (argc - argi != 2) {
        fprintf(stderr, "usage: gpu_rate [-r REPEATS] [-a dna|text] [-s both|+] [-b BATCH_MB] [-e ENGINE] [-m K | -k K] "
                        "[-R ends] [-q PAM] [-P] PATTERNS TARGET\n");
        return 2;
    }
    if (repeats < 1) repeats = 1;
    if (co.alphabet == SM_ALPHABET_TEXT) co.strands = SM_STRAND_FORWARD;
    bench_inputs in;
    bench_inputs_read("gpu_rate", argv[argi], argv[argi + 1], &in);
    const sm_pattern *pats = in.patterns;
    const char *text = in.text;
    const size_t len = in.len, n = in.count;
    sm_error err;
    double tc0 = now();
    sm_db *db = bench_compile("gpu_rate", &in, &co);
    double compile_s = now() - tc0;
    sm_db_info info;
    sm_db_get_info(db, &info);
    uint32_t states = 0, columns = 0; /* the first DFA section's (the automaton's) */
    for (uint32_t i = 0; i < info.section_count && !sm_db_section_dfa(db, i, &states, &columns); i++) {
    }

    uint8_t *dev_text = NULL;
    if (plain_upload(text, len, &dev_text) != 0) dev_text = NULL;
    device_line((size_t)256 << 20, dev_text, len);
    printf("patterns=%zu states=%u columns=%u table_KB=%.0f bytes=%zu strands=%s compile_s=%.2f\n", n,
           states, columns, states * (double)columns * 4 / 1024,
           len, co.strands == SM_STRAND_FORWARD ? "+" : "both", compile_s);
    for (uint32_t i = 0; i < info.section_count; i++) {
        char gpu[256];
        const char *name = sm_db_section_name(db, i, NULL, NULL);
        printf("engines=%s gpu=\"%s\"\n", name, sm_db_section_gpu(db, i, gpu, sizeof gpu) ? gpu : "none");
    }

    /* The check: the CPU runner on every core, then the GPU counting and
       delivering hits. */
    uint64_t cpu_total = 0, gpu_total = 0, hits_total = 0, prefix_total = 0;
    double cpu_s = run_once(db, SM_BACKEND_CPU, text, len, batch, 1, &cpu_total);
    run_once(db, SM_BACKEND_CUDA, text, len, batch, 1, &gpu_total);
    /* Hits one by one: on a prefix holding at most HIT_LIMIT of them, so
       that dense sets do not spend minutes sorting. */
    size_t hit_len = cpu_total > HIT_LIMIT ? (size_t)((double)len * HIT_LIMIT / (double)cpu_total) : len;
    if (hit_len < len) run_once(db, SM_BACKEND_CPU, text, hit_len, batch, 1, &prefix_total);
    else prefix_total = cpu_total;
    run_once(db, SM_BACKEND_CUDA, text, hit_len, batch, 0, &hits_total);
    int same = cpu_total == gpu_total && prefix_total == hits_total;
    printf("check cpu_count=%llu gpu_count=%llu hits_bytes=%zu cpu_hits=%llu gpu_hits=%llu same=%s "
           "cpu_all_cores_GBps=%.2f\n",
           (unsigned long long)cpu_total, (unsigned long long)gpu_total, hit_len, (unsigned long long)prefix_total,
           (unsigned long long)hits_total, same ? "yes" : "NO", len / cpu_s / 1e9);

    /* Resident: one batch holding the whole text, scanned again on the GPU. */
    if (len < ((size_t)1 << 31) - 4096) {
        sm_runner_options o;
        sm_runner_options_init(&o);
        o.backend = SM_BACKEND_CUDA;
        o.count_only = 1;
        o.chunk_size = len + 4096;
        sm_runner *g;
        if (sm_runner_create(db, &o, &g, &err) != SM_OK) die("CUDA runner", err.message);
        sm_runner_begin_record(g);
        sm_runner_feed(g, text, len);
        sm_runner_end_record(g);
        sm_runner_flush(g);
        double ms;
        size_t bytes;
        if (sm_cuda_time_last_batch(g, repeats, &ms, &bytes) != SM_OK) die("CUDA runner", "timing failed");
        printf("resident_GBps=%.1f kernel_ms=%.2f batch_bytes=%zu\n", bytes / (ms * 1e-3) / 1e9, ms, bytes);
        if (co.match == SM_MATCH_EDITS) {
            double symbols = 0;
            for (size_t i = 0; i < n; i++) symbols += (double)pats[i].len;
            double cells = symbols * (double)bytes * (co.strands == SM_STRAND_FORWARD ? 1 : 2);
            printf("cells=%.4g resident_TCUPS=%.2f\n", cells, cells / (ms * 1e-3) / 1e12);
        }
        sm_runner_free(g);
    }

    double *tc = calloc((size_t)repeats, sizeof *tc), *th = calloc((size_t)repeats, sizeof *th);
    for (int i = 0; i < repeats; i++) {
        uint64_t x;
        tc[i] = run_once(db, SM_BACKEND_CUDA, text, len, batch, 1, &x);
        th[i] = run_once(db, SM_BACKEND_CUDA, text, hit_len, batch, 0, &x);
    }
    printf("count_GBps=%.2f hits_GBps=%.2f hits_bytes=%zu batch_MB=%zu runs=%d\n", len / median(tc, repeats) / 1e9,
           hit_len / median(th, repeats) / 1e9, hit_len, batch >> 20, repeats);
    if (plain && dev_text) plain_lines(pats, n, &co, dev_text, len, repeats, cpu_total);
    if (dev_text) plain_free(dev_text);
    return same ? 0 : 2;
}
