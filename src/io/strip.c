/* Stripping FASTA sequence on several threads (strip.h): a window of a
 * mapped file is cut into blocks; a first pass counts, per block, the bytes
 * kept and the line ends, and finds the first marker that starts a line
 * (the record's end) and any byte that needs the serial reader (its
 * messages name line and column); a second pass writes each block's kept
 * bytes at its offset, the prefix sum of the counts before it. Only the
 * blocks up to the first that stops (a marker or such a byte) are used, so
 * a block past one that stopped gives up: a window holds the rest of one
 * long record and often whole long records after it, which the count would
 * otherwise read through at every call. */
#include "io/strip.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/team.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define STRIP_X86 1
#endif

#define STRIP_BLOCKS 256 /* at most this many blocks per window */

typedef struct {
    size_t lo, hi;        /* raw offsets in the window */
    size_t kept, lines;   /* before the marker (or the block's end) */
    size_t last_eol;      /* just past its last \n before the marker; 0 when none */
    size_t marker;        /* offset of a marker starting a line, or SIZE_MAX */
    int odd;              /* a byte the serial reader must see */
    size_t out;           /* where its kept bytes go */
} block;

struct sm_strip_pool {
    unsigned threads;     /* threads besides the caller */
    /* the job */
    int phase;            /* 1 count, 2 write, 3 copy */
    int compress;         /* the CPU has VBMI2's byte compress */
    sm_parallel_for_fn shared; /* a runner's team runs the blocks, else the process-wide team */
    void *shared_ctx;
    const uint8_t *p;
    uint8_t *out;
    uint8_t marker;
    int line_start;
    block *blocks;
    size_t nblocks;
    _Atomic size_t first_stop; /* the first block found to stop (phase 1), or SIZE_MAX */
};

#ifdef STRIP_X86
/* Kept bytes (letters, '-', '.', '*'), blanks and \n of 64 bytes. */
__attribute__((target("avx512f,avx512bw"))) static inline void classes(__m512i v, __mmask64 *keep, __mmask64 *nl,
                                                                        __mmask64 *blank) {
    __m512i low = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    __mmask64 letters = _mm512_cmpge_epu8_mask(low, _mm512_set1_epi8('a')) &
                        _mm512_cmple_epu8_mask(low, _mm512_set1_epi8('z'));
    *keep = letters | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('-')) |
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('.')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('*'));
    *nl = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\n'));
    *blank = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' ')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\t'));
}

/* Blocks of 64 bytes between looks at whether an earlier block stopped. */
#define STRIP_LOOK 256

/* Block k's counts, up to its first marker or odd byte; given up when a
   block before it stops (first_stop). */
__attribute__((target("avx512f,avx512bw,popcnt,lzcnt,bmi"))) static void
count_block(const uint8_t *p, uint8_t marker, int line_start, block *b, size_t k, _Atomic size_t *first_stop) {
    b->kept = b->lines = b->last_eol = 0;
    b->marker = SIZE_MAX;
    b->odd = 0;
    /* is the block's first byte at a line start? */
    uint64_t carry = b->lo == 0 ? (uint64_t)(line_start != 0) : p[b->lo - 1] == '\n';
    const __m512i mk = _mm512_set1_epi8((char)marker);
    unsigned look = STRIP_LOOK;
    for (size_t i = b->lo; i < b->hi; i += 64) {
        if (--look == 0) {
            if (atomic_load_explicit(first_stop, memory_order_relaxed) < k) return;
            look = STRIP_LOOK;
        }
        size_t left = b->hi - i;
        __mmask64 window = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
        __m512i v = _mm512_maskz_loadu_epi8(window, p + i);
        __mmask64 keep, nl, blank;
        classes(v, &keep, &nl, &blank);
        keep &= window, nl &= window, blank &= window;
        __mmask64 starts = (nl << 1) | carry; /* bytes right after a \n */
        __mmask64 at_marker = _mm512_cmpeq_epi8_mask(v, mk) & starts & window;
        __mmask64 upto = window;
        if (at_marker) {
            unsigned m = (unsigned)__builtin_ctzll(at_marker);
            upto = m ? (((__mmask64)1 << m) - 1) : 0;
            b->marker = i + m;
        }
        __mmask64 odd = ~(keep | nl | blank) & upto;
        if (odd) b->odd = 1;
        b->kept += (size_t)_mm_popcnt_u64(keep & upto);
        __mmask64 nlu = nl & upto;
        b->lines += (size_t)_mm_popcnt_u64(nlu);
        if (nlu) b->last_eol = i + (63 - (size_t)__builtin_clzll(nlu)) + 1;
        if (b->marker != SIZE_MAX || b->odd) {
            size_t seen = atomic_load_explicit(first_stop, memory_order_relaxed);
            while (k < seen && !atomic_compare_exchange_weak_explicit(first_stop, &seen, k, memory_order_relaxed,
                                                                      memory_order_relaxed)) {}
            return;
        }
        carry = nl >> 63;
    }
}

__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt"))) static void write_block(const uint8_t *p, uint8_t *out,
                                                                                      const block *b) {
    size_t end = b->marker != SIZE_MAX ? b->marker : b->hi, at = b->out;
    for (size_t i = b->lo; i < end; i += 64) {
        size_t left = end - i;
        __mmask64 window = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
        __m512i v = _mm512_maskz_loadu_epi8(window, p + i);
        __mmask64 keep, nl, blank;
        classes(v, &keep, &nl, &blank);
        keep &= window;
        /* compressed in a register, then stored under a mask (the memory
           form of the compress is slow on some CPUs) */
        size_t n = (size_t)_mm_popcnt_u64(keep);
        __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
        _mm512_mask_storeu_epi8(out + at, m, _mm512_maskz_compress_epi8(keep, v));
        at += n;
    }
}

/* The same without VBMI2's compress: each run of kept bytes moved by one
   masked load and store (a line end cuts a step into two runs), never
   writing past the block's own bytes. */
__attribute__((target("avx512f,avx512bw,popcnt,bmi"))) static void write_block_runs(const uint8_t *p, uint8_t *out,
                                                                                   const block *b) {
    size_t end = b->marker != SIZE_MAX ? b->marker : b->hi, at = b->out;
    for (size_t i = b->lo; i < end; i += 64) {
        size_t left = end - i;
        __mmask64 window = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
        __m512i v = _mm512_maskz_loadu_epi8(window, p + i);
        __mmask64 keep, nl, blank;
        classes(v, &keep, &nl, &blank);
        keep &= window;
        if (keep == ~(__mmask64)0) {
            _mm512_storeu_si512((void *)(out + at), v);
            at += 64;
            continue;
        }
        while (keep) {
            unsigned from = (unsigned)__builtin_ctzll(keep);
            uint64_t rest = ~(keep >> from);
            unsigned run = rest ? (unsigned)__builtin_ctzll(rest) : 64 - from;
            __mmask64 m = run == 64 ? ~(__mmask64)0 : (((__mmask64)1 << run) - 1);
            _mm512_mask_storeu_epi8(out + at, m, _mm512_maskz_loadu_epi8(m, p + i + from));
            at += run;
            keep &= run + from >= 64 ? 0 : ~(__mmask64)0 << (run + from);
        }
    }
}
#endif

/* Block k of the current phase. */
static void run_block(void *arg, size_t k) {
    sm_strip_pool *pool = arg;
    const block *b = &pool->blocks[k];
    if (pool->phase == 3) {
        memcpy(pool->out + b->lo, pool->p + b->lo, b->hi - b->lo);
        return;
    }
#ifdef STRIP_X86
    if (pool->phase == 1) count_block(pool->p, pool->marker, pool->line_start, &pool->blocks[k], k, &pool->first_stop);
    else if (pool->compress) write_block(pool->p, pool->out, b);
    else write_block_runs(pool->p, pool->out, b);
#endif
}

static void run_team_block(void *arg, size_t k, unsigned tid) {
    (void)tid;
    run_block(arg, k);
}

/* Runs a phase on the team and the caller; returns when every block is done. */
static void phase(sm_strip_pool *pool, int which) {
    pool->phase = which;
    if (pool->shared) pool->shared(pool->shared_ctx, pool->nblocks, run_block, pool);
    else sm_team_for(sm_team_shared(pool->threads + 1), pool->nblocks, run_team_block, pool, pool->threads + 1);
}

int sm_strip_available(void) {
#ifdef STRIP_X86
    const sm_cpu_features *cpu = sm_cpu();
    return cpu->avx512bw;
#else
    return 0;
#endif
}

sm_strip_pool *sm_strip_pool_new(unsigned threads) { return sm_strip_pool_shared(threads, NULL, NULL); }

sm_strip_pool *sm_strip_pool_shared(unsigned threads, sm_parallel_for_fn run, void *ctx) {
    if (threads < 2) return NULL;
    sm_strip_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->blocks = calloc(STRIP_BLOCKS, sizeof *pool->blocks);
    if (!pool->blocks) {
        free(pool);
        return NULL;
    }
#ifdef STRIP_X86
    pool->compress = sm_cpu()->avx512vbmi2;
#endif
    pool->threads = threads - 1;
    pool->shared = run;
    pool->shared_ctx = ctx;
    return pool;
}

void sm_strip_pool_free(sm_strip_pool *pool) {
    if (!pool) return;
    free(pool->blocks);
    free(pool);
}

void sm_strip_copy(sm_strip_pool *pool, uint8_t *out, const uint8_t *p, size_t n) {
    size_t len = n / ((pool->threads + 1) * 2) + 1;
    if (len < (1u << 20)) len = 1u << 20;
    size_t nb = (n + len - 1) / len;
    if (nb > STRIP_BLOCKS) nb = STRIP_BLOCKS, len = (n + nb - 1) / nb;
    for (size_t k = 0; k < nb; k++) {
        pool->blocks[k].lo = k * len;
        pool->blocks[k].hi = (k + 1) * len < n ? (k + 1) * len : n;
    }
    pool->nblocks = nb;
    pool->p = p;
    pool->out = out;
    phase(pool, 3);
}

int sm_strip_window(sm_strip_pool *pool, const uint8_t *p, size_t n, uint8_t marker, int line_start, uint8_t *out,
                    sm_strip_result *res) {
    memset(res, 0, sizeof *res);
    if (n == 0 || !sm_strip_available()) return 0;
    /* blocks of at least 256 KiB, a few per thread */
    size_t per = (pool->threads + 1) * 4;
    size_t len = n / per;
    if (len < (256u << 10)) len = 256u << 10;
    size_t nb = (n + len - 1) / len;
    if (nb > STRIP_BLOCKS) nb = STRIP_BLOCKS, len = (n + nb - 1) / nb;
    for (size_t k = 0; k < nb; k++) {
        pool->blocks[k].lo = k * len;
        pool->blocks[k].hi = (k + 1) * len < n ? (k + 1) * len : n;
    }
    pool->nblocks = nb;
    pool->p = p;
    pool->marker = marker;
    pool->line_start = line_start;
    atomic_store_explicit(&pool->first_stop, SIZE_MAX, memory_order_relaxed);
    phase(pool, 1);
    /* the blocks up to the first marker or odd byte, and where each writes */
    size_t used = n, kept = 0, lines = 0, last_eol = 0, k = 0;
    for (; k < nb; k++) {
        block *b = &pool->blocks[k];
        if (b->odd) return 0; /* the serial reader takes this window */
        b->out = kept;
        kept += b->kept;
        lines += b->lines;
        if (b->last_eol) last_eol = b->last_eol;
        if (b->marker != SIZE_MAX) {
            used = b->marker;
            res->marker = 1;
            k++;
            break;
        }
    }
    pool->nblocks = k;
    pool->out = out;
    phase(pool, 2);
    res->used = used;
    res->kept = kept;
    res->lines = lines;
    res->last_eol = last_eol;
    return 1;
}
