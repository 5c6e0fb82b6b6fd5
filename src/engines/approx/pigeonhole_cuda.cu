/* The pigeonhole filter on the GPU (pigeonhole_gpu.h has the scheme).
 * k edits through the combined table with keys of one word, over chunks of
 * 1 KB or more: a block per tile of a chunk (the bitmap of positions where
 * a piece may end and the tile's bases packed, a word of 32 positions a
 * thread; the marked positions ranked by a block-wide sum, listed,
 * verified a thread each with the death tables read from the packed
 * bases, the anchors that pass searched a thread each). Otherwise a thread
 * per slice of a chunk finds the pieces through the k-mer engine's tables
 * (the combined table in shared memory when it fits) or the automaton;
 * candidates go to a queue in the block's shared memory and are verified a
 * thread each after every stretch of the slices; the anchors of k edits
 * that pass the death tables go to a second queue and are searched a
 * thread each (Myers' search over the anchor's window, the keys' match
 * words in shared memory); packed k-mismatch windows are compared on the
 * spot, the keys read from their end in shared memory. */
#include <stdio.h>
#include <stdlib.h>

#include "engines/cuda_engine.cuh"
#include "engines/approx/pigeonhole_gpu.h"

#define PH_BLOCK 256
/* Bytes of a slice read between two verifications of the block's queues,
   and the queues' slots (a full queue's thread verifies on the spot): short
   stretches keep the queues small, so that more blocks share a
   multiprocessor (docs/architecture.md, "The approximate kernels", has the
   measurements behind them). */
#define PH_EPOCH 32u
#define PH_QUEUE 1024
#define PH_LATER 1024
/* The keys' match words go to shared memory up to this size. */
#define PH_ROWS_SHARED_MAX (48u * 1024u)
/* The combined table (the bitmap of piece-ending codes, the table's bitmap,
   rank and output index) goes to shared memory up to this size: 7 bases
   take 5 KiB and 4 bytes per slot. */
#define PH_TABLES_SHARED_MAX (64u * 1024u)
/* And the packed keys read from their end up to this size. */
#define PH_RKEYS_SHARED_MAX (64u * 1024u)

/* 32-bit words of the combined table's four arrays. */
static __host__ __device__ uint32_t ph_table_words(const sm_gpu_pigeonhole &v, const sm_ph_gpu_tables *tb_host_or_dev,
                                                   uint64_t slots) {
    (void)tb_host_or_dev;
    uint64_t codes = 1ull << (2 * v.seed_max);
    return (uint32_t)(codes / 32 + codes / 32 + codes / 64 + slots + 1);
}

/* The combined table where the thread reads it: copied to shm (kShared), or the section. */
template <bool kShared>
__device__ __forceinline__ sm_ph_gpu_combined ph_tables(const sm_gpu_scan_args &a, const sm_gpu_pigeonhole &v,
                                                       const sm_ph_gpu_tables *tb, uint32_t *shm) {
    sm_ph_gpu_combined c = sm_ph_gpu_combined_of(a.section, &v, tb);
    if (!kShared) return c;
    const uint32_t codes32 = (uint32_t)((1ull << (2 * v.seed_max)) / 32);
    const uint32_t *src[4] = {c.any, c.bits, c.rank, c.out_index};
    const uint32_t n[4] = {codes32, codes32, codes32 / 2, (uint32_t)tb->all.slots + 1};
    const uint32_t **dst[4] = {&c.any, &c.bits, &c.rank, &c.out_index};
    uint32_t at = 0;
    for (int t = 0; t < 4; t++) {
        for (uint32_t i = threadIdx.x; i < n[t]; i += blockDim.x) shm[at + i] = __ldg(&src[t][i]);
        *dst[t] = shm + at;
        at += n[t];
    }
    return c;
}

/* The key's forward match words (one-word keys; others 0) and the byte
   classes, copied to shm at word `at` for the window searches. */
__device__ __forceinline__ void ph_rows(const sm_gpu_scan_args &a, const sm_gpu_pigeonhole &v, uint32_t *shm,
                                        uint32_t at, const uint64_t **rows, const uint16_t **class_of) {
    uint16_t *classes = reinterpret_cast<uint16_t *>(shm + at);
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) classes[i] = (*class_of)[i];
    uint64_t *r = reinterpret_cast<uint64_t *>(shm + at + 128);
    const sm_ph_gpu_key *keys = (const sm_ph_gpu_key *)(a.section + v.keys_off);
    const uint64_t *peq = (const uint64_t *)(a.section + v.peq_off);
    for (uint32_t i = threadIdx.x; i < v.nkeys * v.rows; i += blockDim.x) {
        const sm_ph_gpu_key *key = &keys[i / v.rows];
        r[i] = __ldg(&key->blocks) == 1 ? __ldg(&peq[__ldg(&key->peq_at) + i % v.rows]) : 0;
    }
    *rows = r;
    *class_of = classes;
}

/* The queue kernel's shared memory, in 32-bit words: the combined table
   (when kShared), the byte classes and the keys' match words (when
   kRowsShared; 8-byte aligned), the two counters and the two queues.
   Returns the words in all. */
static __host__ __device__ uint32_t ph_queue_layout(const sm_gpu_pigeonhole &v, uint32_t table_words, bool tables,
                                                    bool rows, uint32_t *rows_at, uint32_t *queues_at) {
    uint32_t at = tables ? (table_words + 1) & ~1u : 0;
    *rows_at = at;
    if (rows) at += 128 + 2 * v.nkeys * v.rows;
    *queues_at = at;
    return at + 2 + 3 * (PH_QUEUE + PH_LATER);
}

/* Slices read a stretch of PH_EPOCH bytes each, the block queues what
   they find (cands), verifies it a candidate per thread (the death tables;
   the band DPs of longer keys), queues the anchors of one-word keys that
   pass (later) and runs their window searches an anchor per thread. */
template <bool kShared, bool kRowsShared>
__global__ void __launch_bounds__(PH_BLOCK) ph_queue_kernel(sm_gpu_scan_args a, uint32_t table_words) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&a.view, const sm_gpu_pigeonhole);
    uint32_t rows_at, queues_at;
    ph_queue_layout(v, table_words, kShared, kRowsShared, &rows_at, &queues_at);
    uint32_t &count = shm[queues_at], &nlater = shm[queues_at + 1];
    sm_ph_gpu_cand *cands = reinterpret_cast<sm_ph_gpu_cand *>(shm + queues_at + 2);
    sm_ph_gpu_cand *later_slots = cands + PH_QUEUE;
    const sm_ph_gpu_tables *tables = (const sm_ph_gpu_tables *)a.extra;
    const sm_ph_gpu_combined cb = ph_tables<kShared>(a, v, tables, shm);
    const uint64_t *rows = NULL;
    const uint16_t *class_of = (const uint16_t *)(a.section + v.class_of_off);
    if (kRowsShared) ph_rows(a, v, shm, rows_at, &rows, &class_of);
    const uint32_t slices = sm_ph_gpu_slices(&a, &v);
    const uint32_t items = a.nchunks * slices;
    const uint32_t span_max = v.slice + (v.edits ? a.reach : v.max_key) + 16;
    sm_ph_gpu_queue queue = {cands, &count, PH_QUEUE};
    sm_ph_gpu_queue later = {later_slots, &nlater, PH_LATER};
    for (uint32_t base = blockIdx.x * blockDim.x; base < items; base += gridDim.x * blockDim.x) {
        const uint32_t item = base + threadIdx.x;
        sm_gpu_chunk ch = {0, 0, 0, 0};
        if (item < items) ch = sm_gpu_chunk_part(a.chunks[item / slices], item % slices, slices, a.tail, a.reach);
        uint32_t lo = 0, hi = 0;
        if (ch.c0 < ch.c1) sm_ph_gpu_span(&v, ch, &lo, &hi);
        sm_ph_gpu_scan_state st = {0, 0, 0};
        if (threadIdx.x == 0) count = nlater = 0;
        __syncthreads();
        for (uint32_t at = 0; at < span_max; at += PH_EPOCH) {
            if (lo + at < hi) {
                uint32_t to = hi - (lo + at) < PH_EPOCH ? hi : lo + at + PH_EPOCH;
                sm_ph_gpu_scan(&a, &v, tables, &cb, ch, &queue, item, &st, lo + at, to);
            }
            __syncthreads();
            const uint32_t n = count < PH_QUEUE ? count : PH_QUEUE;
            for (uint32_t c = threadIdx.x; c < n; c += blockDim.x) {
                const sm_ph_gpu_cand x = cands[c];
                const sm_gpu_chunk xc =
                    sm_gpu_chunk_part(a.chunks[x.item / slices], x.item % slices, slices, a.tail, a.reach);
                sm_ph_gpu_verify(&a, &v, &cb, xc, x, &later, 0);
            }
            __syncthreads();
            const uint32_t nl = nlater < PH_LATER ? nlater : PH_LATER;
            for (uint32_t c = threadIdx.x; c < nl; c += blockDim.x) {
                const sm_ph_gpu_cand x = later_slots[c];
                const sm_gpu_chunk xc =
                    sm_gpu_chunk_part(a.chunks[x.item / slices], x.item % slices, slices, a.tail, a.reach);
                sm_ph_gpu_window_queued(&a, &v, x, xc, rows, class_of);
            }
            __syncthreads();
            if (threadIdx.x == 0) count = nlater = 0;
            __syncthreads();
        }
    }
}

template <bool kShared, bool kKeysShared>
__global__ void __launch_bounds__(PH_BLOCK) ph_packed_kernel(sm_gpu_scan_args a, uint32_t table_words) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&a.view, const sm_gpu_pigeonhole);
    const sm_ph_gpu_tables *tables = (const sm_ph_gpu_tables *)a.extra;
    const sm_ph_gpu_combined cb = ph_tables<kShared>(a, v, tables, shm);
    const sm_ph_gpu_rkey *rkeys = (const sm_ph_gpu_rkey *)((const uint8_t *)tables + tables->rkeys_off);
    if (kKeysShared) {
        uint64_t *dst = reinterpret_cast<uint64_t *>(shm + (kShared ? (table_words + 1) & ~1u : 0));
        const uint64_t *src = (const uint64_t *)rkeys;
        for (uint32_t i = threadIdx.x; i < 3 * v.nkeys; i += blockDim.x) dst[i] = __ldg(&src[i]);
        rkeys = reinterpret_cast<const sm_ph_gpu_rkey *>(dst);
    }
    __syncthreads();
    const uint32_t slices = sm_ph_gpu_slices(&a, &v);
    const uint64_t items = (uint64_t)a.nchunks * slices;
    for (uint64_t item = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; item < items;
         item += (uint64_t)gridDim.x * blockDim.x) {
        const sm_gpu_chunk ch =
            sm_gpu_chunk_part(a.chunks[item / slices], (uint32_t)(item % slices), slices, a.tail, a.reach);
        if (ch.c0 < ch.c1) sm_ph_gpu_slice_packed(&a, &v, tables, rkeys, &cb, ch);
    }
}

/* The tile kernel's shared memory after the tables and rows (as
   ph_queue_layout places them), in 32-bit words: the tile's bases packed
   (8-byte aligned), their base bits, the byte -> code table,
   the warps' sums, the anchor count, the marked positions of a round (16
   bits from the bitmap's first position) and the anchors. Returns the
   words in all. */
#define PH_TILE_BLOCK 256
#define PH_TILE_WARPS (PH_TILE_BLOCK / 32)
#define PH_TILE_WORDS (SM_PH_GPU_TILE_BITS / 32)
#define PH_TILE_CANDS 1024u
#define PH_TILE_LATER 1024u
static __host__ __device__ uint32_t ph_tile_layout(const sm_gpu_pigeonhole &v, uint32_t table_words, bool tables,
                                                   bool rows, uint32_t *rows_at, uint32_t *tile_at) {
    uint32_t at = tables ? (table_words + 1) & ~1u : 0;
    *rows_at = at;
    if (rows) at += 128 + 2 * v.nkeys * v.rows;
    *tile_at = at;
    return at + 2 * PH_TILE_WORDS + PH_TILE_WORDS + 64 + PH_TILE_WARPS + 2 + PH_TILE_CANDS / 2 +
           3 * PH_TILE_LATER;
}

/* A block per tile (pigeonhole_gpu.h, "tiles"): the bitmap of marked
   positions a word per thread, their ranks by a block-wide sum, then in
   rounds of PH_TILE_CANDS: the positions listed, verified a thread each,
   the anchors searched a thread each. */
template <bool kShared, bool kRowsShared>
__global__ void __launch_bounds__(PH_TILE_BLOCK, 4) ph_tile_kernel(sm_gpu_scan_args a, uint32_t table_words) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&a.view, const sm_gpu_pigeonhole);
    uint32_t rows_at, tile_at;
    ph_tile_layout(v, table_words, kShared, kRowsShared, &rows_at, &tile_at);
    uint64_t *tile_codes = reinterpret_cast<uint64_t *>(shm + tile_at);
    uint32_t *tile_valid = shm + tile_at + 2 * PH_TILE_WORDS;
    uint8_t *code_of = reinterpret_cast<uint8_t *>(tile_valid + PH_TILE_WORDS);
    uint32_t *warp_sums = tile_valid + PH_TILE_WORDS + 64;
    uint32_t &nlater = warp_sums[PH_TILE_WARPS];
    uint16_t *marked = reinterpret_cast<uint16_t *>(warp_sums + PH_TILE_WARPS + 2);
    sm_ph_gpu_cand *later_slots = reinterpret_cast<sm_ph_gpu_cand *>(warp_sums + PH_TILE_WARPS + 2 + PH_TILE_CANDS / 2);
    const sm_ph_gpu_tables *tables = (const sm_ph_gpu_tables *)a.extra;
    const sm_ph_gpu_combined cb = ph_tables<kShared>(a, v, tables, shm);
    const uint64_t *rows = NULL;
    const uint16_t *class_of = (const uint16_t *)(a.section + v.class_of_off);
    if (kRowsShared) ph_rows(a, v, shm, rows_at, &rows, &class_of);
    sm_ph_gpu_code_table(code_of, threadIdx.x, blockDim.x);
    __syncthreads();
    const sm_ph_gpu_queue later = {later_slots, &nlater, PH_TILE_LATER};
    const uint32_t parts = sm_ph_gpu_tile_parts(&a);
    const uint32_t items = a.nchunks * parts;
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (uint32_t item = blockIdx.x; item < items; item += gridDim.x) {
        const sm_gpu_chunk ch = sm_gpu_chunk_part(a.chunks[item / parts], item % parts, parts, a.tail, a.reach);
        if (ch.c0 >= ch.c1) continue;
        const uint32_t lo = ch.from, hi = ch.c1, first = lo & ~31u;
        const uint32_t p = first + 32u * threadIdx.x;
        uint64_t codes = 0;
        uint32_t valid = 0;
        const uint32_t mask = p < hi ? sm_ph_gpu_tile_word(&a, &v, &cb, code_of, lo, hi, p, &codes, &valid) : 0u;
        tile_codes[threadIdx.x] = codes;
        tile_valid[threadIdx.x] = valid;
        const sm_ph_gpu_tile tile = {tile_codes, tile_valid, first};
        /* the ranks of this thread's marked positions: a block-wide sum */
        const uint32_t n = __popc(mask);
        uint32_t sum = n;
        for (uint32_t d = 1; d < 32; d <<= 1) {
            const uint32_t t = __shfl_up_sync(0xffffffffu, sum, d);
            if (lane >= d) sum += t;
        }
        if (lane == 31) warp_sums[warp] = sum;
        __syncthreads();
        if (warp == 0) {
            uint32_t w = lane < PH_TILE_WARPS ? warp_sums[lane] : 0u;
            for (uint32_t d = 1; d < PH_TILE_WARPS; d <<= 1) {
                const uint32_t t = __shfl_up_sync(0xffffffffu, w, d);
                if (lane >= d) w += t;
            }
            if (lane < PH_TILE_WARPS) warp_sums[lane] = w;
        }
        __syncthreads();
        const uint32_t total = warp_sums[PH_TILE_WARPS - 1];
        const uint32_t rank0 = sum - n + (warp ? warp_sums[warp - 1] : 0u);
        for (uint32_t r = 0; r < total; r += PH_TILE_CANDS) {
            if (rank0 < r + PH_TILE_CANDS && rank0 + n > r) {
                uint32_t rank = rank0;
                for (uint32_t m = mask; m; m &= m - 1, rank++)
                    if (rank >= r && rank < r + PH_TILE_CANDS) marked[rank - r] = (uint16_t)(p - first + __ffs(m) - 1);
            }
            if (threadIdx.x == 0) nlater = 0;
            __syncthreads();
            const uint32_t nc = total - r < PH_TILE_CANDS ? total - r : PH_TILE_CANDS;
            for (uint32_t c = threadIdx.x; c < nc; c += blockDim.x)
                sm_ph_gpu_tile_candidate(&a, &v, tables, &cb, ch, &tile, lo, first + marked[c], &later);
            __syncthreads();
            const uint32_t nl = nlater < PH_TILE_LATER ? nlater : PH_TILE_LATER;
            for (uint32_t c = threadIdx.x; c < nl; c += blockDim.x)
                sm_ph_gpu_window_queued(&a, &v, later_slots[c], ch, rows, class_of);
            __syncthreads();
        }
        __syncthreads(); /* the sums are the next tile's */
    }
}

/* What the launch needs of the extra tables on the host: the combined table's slots. */
struct ph_prepared {
    uint64_t slots;
};

static int ph_prepare(sm_cuda_gpu_section *s, const sm_cuda_section *host, char *msg) {
    ph_prepared *p = (ph_prepared *)calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    p->slots = host->extra ? ((const sm_ph_gpu_tables *)host->extra)->all.slots : 0;
    s->prepared = p;
    return 0;
}

static void ph_release(sm_cuda_gpu_section *s) {
    free(s->prepared);
    s->prepared = NULL;
}

static int ph_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_pigeonhole &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_pigeonhole);
    const ph_prepared *p = (const ph_prepared *)l->section->prepared;
    uint32_t words = v.seeds && v.has_all ? ph_table_words(v, NULL, p->slots) : 0;
    bool tables_shared = words && (size_t)words * 4 <= PH_TABLES_SHARED_MAX;
    size_t shared = tables_shared ? (size_t)words * 4 : 0;
    size_t items = (size_t)l->args.nchunks * sm_ph_gpu_slices(&l->args, &v);
    unsigned blocks;
    if (v.packed) {
        size_t keys = (size_t)v.nkeys * sizeof(sm_ph_gpu_rkey);
        bool keys_shared = keys <= PH_RKEYS_SHARED_MAX;
        if (keys_shared) shared = (shared + 7) / 8 * 8 + keys;
        void (*kernel)(sm_gpu_scan_args, uint32_t) =
            tables_shared ? (keys_shared ? ph_packed_kernel<true, true> : ph_packed_kernel<true, false>)
                          : (keys_shared ? ph_packed_kernel<false, true> : ph_packed_kernel<false, false>);
        if (sm_cuda_grid_threads((const void *)kernel, shared, items, 1, PH_BLOCK, l->sms, &blocks, msg) != 0) return -1;
        kernel<<<blocks, PH_BLOCK, shared, l->stream>>>(l->args, words);
        return 0;
    }
    size_t rows_bytes = (size_t)v.nkeys * v.rows * 8;
    bool rows_shared = v.edits && rows_bytes <= PH_ROWS_SHARED_MAX;
    uint32_t rows_at, queues_at;
    if (sm_ph_gpu_tiled(&l->args, &v)) {
        shared = (size_t)ph_tile_layout(v, words, tables_shared, rows_shared, &rows_at, &queues_at) * 4;
        void (*kernel)(sm_gpu_scan_args, uint32_t) =
            tables_shared ? (rows_shared ? ph_tile_kernel<true, true> : ph_tile_kernel<true, false>)
                          : (rows_shared ? ph_tile_kernel<false, true> : ph_tile_kernel<false, false>);
        const size_t tiles = (size_t)l->args.nchunks * sm_ph_gpu_tile_parts(&l->args);
        if (sm_cuda_grid_threads((const void *)kernel, shared, tiles, PH_TILE_BLOCK, PH_TILE_BLOCK, l->sms, &blocks,
                                 msg) != 0)
            return -1;
        kernel<<<blocks, PH_TILE_BLOCK, shared, l->stream>>>(l->args, words);
        return 0;
    }
    shared = (size_t)ph_queue_layout(v, words, tables_shared, rows_shared, &rows_at, &queues_at) * 4;
    void (*kernel)(sm_gpu_scan_args, uint32_t) =
        tables_shared ? (rows_shared ? ph_queue_kernel<true, true> : ph_queue_kernel<true, false>)
                      : (rows_shared ? ph_queue_kernel<false, true> : ph_queue_kernel<false, false>);
    if (sm_cuda_grid_threads((const void *)kernel, shared, items, 1, PH_BLOCK, l->sms, &blocks, msg) != 0) return -1;
    kernel<<<blocks, PH_BLOCK, shared, l->stream>>>(l->args, words);
    return 0;
}

SM_CUDA_ENGINE(pigeonhole_engine, SM_SECTION_PIGEONHOLE, ph_prepare, ph_release, ph_launch)
