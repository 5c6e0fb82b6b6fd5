/* scan_rate: seqmatch's scan alone, timed the way hyperscan_count times hs_scan.
 *
 * usage: scan_rate [-r REPEATS] [-e ENGINE] [-a text|dna] [-s both|+|-] [-m K | -k K] PATTERNS TARGET
 *
 * PATTERNS: one pattern per line (as hyperscan_count reads them).
 * TARGET:   any file, read whole into memory and scanned as one sequence with sm_count
 *           (every occurrence, overlapping ones included), one thread.
 * ENGINE:   auto (default), automaton, kmer, shiftand, wumanber; with -m K (K mismatches) or -k K
 *           (K edits, every end counted) also mismatch, myers, wavefront, pigeonhole.
 *
 * Output (one line, tab-separated key=value), e.g.
 *   patterns=1000 bytes=110628947 count=2493498 engine=kmer compile_s=0.002 scan_s=0.09 scan_MBps=1229 ...
 * scan_s is the median wall time over REPEATS scans (default 5), after one untimed warm-up
 * scan, and excludes reading the files and compiling; scan_cpu_s is the same for the
 * process's CPU time; scan_min_s / scan_max_s the range; MB = 10^6 bytes. Every scan's count
 * must equal the first one's (exit 2 otherwise).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_input.h"
#include "seqmatch.h"

static double clock_s(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *why) {
    fprintf(stderr, "scan_rate: %s: %s\n", what, why);
    exit(2);
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The engine that scans every pattern, or "mixed". */
static const char *engine_name(const sm_db *db, const sm_db_info *info) {
    for (size_t i = 0; i < sm_engine_count(); i++)
        if (info->pattern_count && sm_db_engine_patterns(db, sm_engine_at(i)) == info->pattern_count)
            return sm_engine_name(sm_engine_at(i));
    return "mixed";
}

int main(int argc, char **argv) {
    int repeats = 5, opt;
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.alphabet = SM_ALPHABET_TEXT;
    while ((opt = getopt(argc, argv, "r:e:a:s:m:k:")) != -1) {
        if (opt == 'r') repeats = atoi(optarg);
        else if (opt == 'e') {
            if (!strcmp(optarg, "auto")) co.engine = SM_ENGINE_AUTO;
            else if (!strcmp(optarg, "automaton")) co.engine = SM_ENGINE_AUTOMATON;
            else if (!strcmp(optarg, "kmer")) co.engine = SM_ENGINE_KMER;
            else if (!strcmp(optarg, "shiftand")) co.engine = SM_ENGINE_SHIFTAND;
            else if (!strcmp(optarg, "wumanber")) co.engine = SM_ENGINE_WUMANBER;
            else if (!strcmp(optarg, "mismatch")) co.engine = SM_ENGINE_MISMATCH;
            else if (!strcmp(optarg, "myers")) co.engine = SM_ENGINE_MYERS;
            else if (!strcmp(optarg, "wavefront")) co.engine = SM_ENGINE_WAVEFRONT;
            else if (!strcmp(optarg, "pigeonhole")) co.engine = SM_ENGINE_PIGEONHOLE;
            else die(optarg, "unknown engine (auto, automaton, kmer, shiftand, wumanber, mismatch, myers, wavefront, "
                             "pigeonhole)");
        } else if (opt == 'a') {
            if (!strcmp(optarg, "text")) co.alphabet = SM_ALPHABET_TEXT;
            else if (!strcmp(optarg, "dna")) co.alphabet = SM_ALPHABET_DNA;
            else die(optarg, "unknown alphabet (text, dna)");
        } else if (opt == 's') {
            if (!strcmp(optarg, "both")) co.strands = SM_STRAND_BOTH;
            else if (!strcmp(optarg, "+")) co.strands = SM_STRAND_FORWARD;
            else if (!strcmp(optarg, "-")) co.strands = SM_STRAND_REVERSE;
            else die(optarg, "unknown strand (both, +, -)");
        } else if (opt == 'm' || opt == 'k') {
            co.match = opt == 'm' ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
            co.max_errors = (uint32_t)atoi(optarg);
            co.report = SM_REPORT_ENDS;
        } else {
            fprintf(stderr, "usage: scan_rate [-r REPEATS] [-e ENGINE] [-a text|dna] [-s both|+|-] [-m K | -k K] "
                            "PATTERNS TARGET\n");
            return 2;
        }
    }
    if (argc - optind != 2 || repeats < 1) die("usage", "scan_rate [-r REPEATS] [-e ENGINE] PATTERNS TARGET");

    bench_inputs in;
    bench_inputs_read("scan_rate", argv[optind], argv[optind + 1], &in);
    const char *text = in.text;
    const size_t tlen = in.len;

    double t0 = clock_s(CLOCK_MONOTONIC);
    sm_db *db = bench_compile("scan_rate", &in, &co);
    double compile_s = clock_s(CLOCK_MONOTONIC) - t0;
    sm_db_info info;
    sm_db_get_info(db, &info);
    sm_scratch *scratch = NULL;
    if (sm_scratch_alloc(db, &scratch) != SM_OK) die("scratch", "out of memory");
    uint64_t *counts = calloc(info.pattern_count, sizeof *counts);
    double *wall = malloc((size_t)repeats * sizeof *wall), *cpu = malloc((size_t)repeats * sizeof *cpu);
    if (!counts || !wall || !cpu) die("counts", "out of memory");

    uint64_t first = 0;
    for (int r = -1; r < repeats; r++) { /* r = -1: the warm-up */
        memset(counts, 0, info.pattern_count * sizeof *counts);
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (sm_count(db, scratch, text, tlen, counts) != SM_OK) die("scan", "failed");
        double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        uint64_t total = 0;
        for (uint32_t p = 0; p < info.pattern_count; p++) total += counts[p];
        if (r == -1) first = total;
        else {
            if (total != first) die("scan", "counts differ between runs");
            wall[r] = w1 - w0;
            cpu[r] = c1 - c0;
        }
    }
    double lo = wall[0], hi = wall[0];
    for (int r = 1; r < repeats; r++) {
        if (wall[r] < lo) lo = wall[r];
        if (wall[r] > hi) hi = wall[r];
    }
    double scan_s = median(wall, repeats), scan_cpu_s = median(cpu, repeats);
    printf("patterns=%zu\tbytes=%zu\tcount=%llu\tengine=%s\tcompile_s=%.4f\tscan_s=%.4f\tscan_MBps=%.1f\t"
           "scan_cpu_s=%.4f\tscan_cpu_MBps=%.1f\tscan_min_s=%.4f\tscan_max_s=%.4f\trepeats=%d",
           in.count, tlen, (unsigned long long)first, engine_name(db, &info), compile_s, scan_s, tlen / scan_s / 1e6,
           scan_cpu_s, tlen / scan_cpu_s / 1e6, lo, hi, repeats);
    /* The planner's estimate for the engine that ran, and the model's terms
       (bench/fit_planner.py fits its constants to these rows). */
    sm_approx_estimates est;
    if (info.match != SM_MATCH_EXACT && sm_db_approx_estimates(db, 0, &est) == SM_OK) {
        const sm_engine_estimate *e = info.approx_engine == SM_ENGINE_MISMATCH ? &est.mismatch
                                      : info.approx_engine == SM_ENGINE_MYERS  ? &est.myers
                                      : info.approx_engine == SM_ENGINE_WAVEFRONT ? &est.wavefront
                                                                                 : &est.pigeonhole;
        printf("\test_ns_per_byte=%.4g\tterms=%.6g;%.6g;%.6g;%.6g;%.6g;%.6g;%.6g;%.6g\tplanner=%s", e->ns_per_byte,
               e->terms[0], e->terms[1], e->terms[2], e->terms[3], e->terms[4], e->terms[5], e->terms[6], e->terms[7],
               est.choice == SM_ENGINE_MISMATCH ? "mismatch" : est.choice == SM_ENGINE_MYERS ? "myers" : "pigeonhole");
    }
    printf("\n");
    sm_scratch_free(scratch);
    sm_db_free(db);
    free(counts);
    free(wall);
    free(cpu);
    bench_inputs_free(&in);
    return 0;
}
