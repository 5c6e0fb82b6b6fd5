/* One probe of the CPU's features per process (as minimap2's
 * ksw2_dispatch.c does): every engine reads the result when it makes a scan
 * state. */
#include "base/cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static sm_cpu_features probed;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static sm_simd_level level_of(const sm_cpu_features *f) {
    if (!f->ssse3 || !f->sse42 || !f->popcnt) return SM_SIMD_SCALAR;
    if (!f->avx2 || !f->bmi || !f->bmi2) return SM_SIMD_SSE;
    if (!f->avx512f || !f->avx512bw || !f->avx512dq || !f->avx512vl) return SM_SIMD_AVX2;
    return SM_SIMD_AVX512;
}

static void cap(sm_cpu_features *f, sm_simd_level max) {
    if (max == SM_SIMD_AUTO) return;
    if (max < SM_SIMD_AVX512)
        f->avx512f = f->avx512bw = f->avx512dq = f->avx512vl = f->avx512vbmi = f->avx512vbmi2 = f->avx512vpopcntdq = 0;
    if (max < SM_SIMD_AVX2) f->avx2 = f->bmi = f->bmi2 = 0;
    if (max < SM_SIMD_SSE) f->ssse3 = f->sse42 = f->popcnt = 0;
    f->level = level_of(f);
}

static void probe(void) {
    sm_cpu_features f;
    memset(&f, 0, sizeof f);
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    f.ssse3 = __builtin_cpu_supports("ssse3") != 0;
    f.sse42 = __builtin_cpu_supports("sse4.2") != 0;
    f.popcnt = __builtin_cpu_supports("popcnt") != 0;
    f.avx2 = __builtin_cpu_supports("avx2") != 0;
    f.bmi = __builtin_cpu_supports("bmi") != 0;
    f.bmi2 = __builtin_cpu_supports("bmi2") != 0;
    f.avx512f = __builtin_cpu_supports("avx512f") != 0;
    f.avx512bw = __builtin_cpu_supports("avx512bw") != 0;
    f.avx512dq = __builtin_cpu_supports("avx512dq") != 0;
    f.avx512vl = __builtin_cpu_supports("avx512vl") != 0;
    f.avx512vbmi = __builtin_cpu_supports("avx512vbmi") != 0;
    f.avx512vbmi2 = __builtin_cpu_supports("avx512vbmi2") != 0;
    f.avx512vpopcntdq = __builtin_cpu_supports("avx512vpopcntdq") != 0;
    f.slow_gather = __builtin_cpu_is("znver1") || __builtin_cpu_is("znver2");
#endif
    f.level = level_of(&f);
    const char *want = getenv("SEQMATCH_SIMD");
    if (want) {
        static const char *const names[] = {"scalar", "sse", "avx2", "avx512"};
        for (int i = 0; i < 4; i++)
            if (strcmp(want, names[i]) == 0) cap(&f, (sm_simd_level)(i + 1));
        /* AVX-512 as the first CPUs that had it: no VBMI, VBMI2 or VPOPCNTDQ */
        if (strcmp(want, "avx512bw") == 0) f.avx512vbmi = f.avx512vbmi2 = f.avx512vpopcntdq = 0;
    }
    f.kmer_way = -1;
    const char *way = getenv("SEQMATCH_KMER_GATHER");
    if (way && way[0] >= '0' && way[0] <= '2' && !way[1]) f.kmer_way = way[0] - '0';
    probed = f;
}

const sm_cpu_features *sm_cpu(void) {
    pthread_once(&probe_once, probe);
    return &probed;
}

void sm_cpu_capped(sm_simd_level max, sm_cpu_features *out) {
    *out = *sm_cpu();
    cap(out, max);
}

const char *sm_simd_name(sm_simd_level level) {
    static const char *const names[] = {"auto", "scalar", "sse", "avx2", "avx512"};
    return (unsigned)level <= SM_SIMD_AVX512 ? names[level] : "unknown";
}
