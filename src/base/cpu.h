/* The CPU's features, probed once per process, and the SIMD levels the
 * engines' scan loops are written for. Each engine picks its loop when a
 * scan state is made (src/engines/engine.h), never in the loop itself. */
#ifndef SM_CPU_H
#define SM_CPU_H

typedef enum {
    SM_SIMD_AUTO = 0,   /* the highest level the CPU has */
    SM_SIMD_SCALAR = 1, /* plain C */
    SM_SIMD_SSE = 2,    /* SSSE3, SSE4.2 and POPCNT */
    SM_SIMD_AVX2 = 3,   /* AVX2, BMI1 and BMI2 */
    SM_SIMD_AVX512 = 4  /* AVX-512 F, BW, DQ and VL */
} sm_simd_level;

typedef struct {
    unsigned char ssse3, sse42, popcnt;
    unsigned char avx2, bmi, bmi2;
    unsigned char avx512f, avx512bw, avx512dq, avx512vl, avx512vbmi, avx512vbmi2;
    unsigned char avx512vpopcntdq; /* vector population counts (Ice Lake and later, Zen 4) */
    unsigned char slow_gather; /* gathers and pdep are microcoded (AMD Zen 1 and 2) */
    sm_simd_level level;       /* the highest level all of whose features are present */
    int kmer_way;              /* SEQMATCH_KMER_GATHER=0/1/2 (benchmarks: how the k-mer table's
                                  AVX2 loop tests its bitmap), or -1 */
} sm_cpu_features;

/* The features of the running CPU, probed on the first call (thread-safe).
   SEQMATCH_SIMD=scalar|sse|avx2|avx512 in the environment, read at that
   probe, lowers the level (for comparisons and for clusters of mixed
   machines); SEQMATCH_KMER_GATHER=0|1|2 picks the k-mer table's bitmap test
   (bench/results/history.md). */
const sm_cpu_features *sm_cpu(void);

/* The CPU's features with every level above max cleared (SM_SIMD_AUTO: as
   probed), into *out. */
void sm_cpu_capped(sm_simd_level max, sm_cpu_features *out);

/* The name of a level ("avx2"), for messages and benchmarks. */
const char *sm_simd_name(sm_simd_level level);

#endif /* SM_CPU_H */
