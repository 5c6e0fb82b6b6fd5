/* The k-mer table on the GPU: a chunk per warp, 16 positions per lane, the
 * scan of kmer_gpu.h. The direct layout's bitmap (4^k bits: 8 KiB for
 * k = 8) sits in the block's shared memory when it fits; each lane decodes
 * its 16 bytes at once (four at a time with the DNA byte map, else one
 * table lookup each) and tests its 16 positions with independent lookups.
 * In count mode a hit adds one to its slot's counter, in shared memory when
 * the slots fit beside the bitmap (one counter per distinct key, flushed to
 * the device's counters when the block ends), else in device memory; the
 * runtime folds them into per-pattern counts. For k <= 8 counting reads a
 * 16-bit slot per code from shared memory instead of the bitmap (dense sets:
 * no rank to work out per hit, no lane waiting for the one with most hits).
 * The hash layout (k > 12) tests every position against its filter (in
 * shared memory when small, else through L2, eight positions' words read at
 * once) and probes the table for those that pass; large sets of k 27 to 31
 * are looked up once per lane instead, by the m-mer that ends on the byte
 * before the lane's (kmer_gpu.h), in a table built here on the device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/cuda_engine.cuh"
#include "engines/kmer/kmer_gpu.h"

__device__ __forceinline__ sm_kt_piece shfl_piece(sm_kt_piece p, int delta) {
    sm_kt_piece r;
    r.codes = __shfl_up_sync(0xffffffffu, p.codes, delta);
    r.breaks = __shfl_up_sync(0xffffffffu, p.breaks, delta);
    return r;
}

__device__ __forceinline__ sm_kt_piece shfl_lane(sm_kt_piece p, int lane) {
    sm_kt_piece r;
    r.codes = __shfl_sync(0xffffffffu, p.codes, lane);
    r.breaks = __shfl_sync(0xffffffffu, p.breaks, lane);
    return r;
}

/* A lane's piece of the 16 bytes w at p (the chunk's bounds as breaks). */
template <bool kDna>
__device__ __forceinline__ sm_kt_piece lane_piece(const uint8_t *code_of, const uint32_t w[4], uint32_t p,
                                                  const sm_gpu_chunk &ch) {
    uint32_t outside = sm_kt_gpu_outside(p, ch.c0, ch.end);
    return kDna ? sm_kt_gpu_piece_dna(w, outside) : sm_kt_gpu_piece_table(code_of, w, outside);
}

/* The pieces of the one and two lanes before this one: lanes 0 and 1 take
   the last lanes of the tile before from the carries, which then move on to
   this tile's last lanes. */
__device__ __forceinline__ void lanes_before(sm_kt_piece cur, uint32_t lane, sm_kt_piece &carry1, sm_kt_piece &carry2,
                                             sm_kt_piece &prev1, sm_kt_piece &prev2) {
    prev1 = shfl_piece(cur, 1);
    prev2 = shfl_piece(cur, 2);
    if (lane == 0) prev1 = carry1, prev2 = carry2;
    if (lane == 1) prev2 = carry1;
    carry1 = shfl_lane(cur, 31);
    carry2 = shfl_lane(cur, 30);
}

/* A chunk per warp: the grid's warps take a batch's chunks in turn, from
   each warp's index on. */
__device__ __forceinline__ uint32_t first_warp_chunk() { return (blockIdx.x * blockDim.x + threadIdx.x) / 32; }
__device__ __forceinline__ uint32_t grid_warps() { return gridDim.x * (blockDim.x / 32); }

/* A lane's piece of the tile at p (empty past the chunk) and those of the
   one and two lanes before it. */
template <bool kDna>
__device__ __forceinline__ void tile_pieces(const sm_gpu_scan_args &a, const sm_gpu_chunk &ch, const uint8_t *code_of,
                                            uint32_t p, uint32_t lane, sm_kt_piece &carry1, sm_kt_piece &carry2,
                                            sm_kt_piece &cur, sm_kt_piece &prev1, sm_kt_piece &prev2) {
    cur = sm_kt_gpu_empty();
    if (p < ch.end) {
        uint32_t w[4];
        sm_gpu_load16(a.text + p, w);
        cur = lane_piece<kDna>(code_of, w, p, ch);
    }
    lanes_before(cur, lane, carry1, carry2, prev1, prev2);
}

/* The outputs of a slot, for a hit ending at end. */
__device__ __forceinline__ void report_slot(const sm_gpu_scan_args &a, uint32_t slot, uint32_t end) {
    const sm_gpu_kmer &v = *SM_GPU_VIEW(&a.view, const sm_gpu_kmer);
    const uint32_t *out_index = (const uint32_t *)(a.section + v.out_index_off);
    const uint32_t *out_list = (const uint32_t *)(a.section + v.out_list_off);
    uint32_t last = __ldg(&out_index[slot + 1]);
    for (uint32_t o = __ldg(&out_index[slot]); o < last; o++) sm_gpu_output(&a, end, __ldg(&out_list[o]));
}

/* Shared memory of a direct-layout block: the byte map, then the bitmap
   (kBitsShared), then the rank table and the slot counters (kCountShared). */
template <bool kDna, bool kCount, bool kBitsShared, bool kCountShared>
__global__ void __launch_bounds__(SM_CUDA_BLOCK) kt_direct_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_kmer &v = *SM_GPU_VIEW(&a.view, const sm_gpu_kmer);
    const uint32_t k = v.k, mask = (uint32_t)v.mask;
    const uint32_t words32 = (uint32_t)v.words * 2, slots = (uint32_t)v.slots;
    uint8_t *code_of = reinterpret_cast<uint8_t *>(shm);
    const uint32_t *bits32 = (const uint32_t *)(a.section + v.bits_off);
    const uint32_t *rank = (const uint32_t *)(a.section + v.rank_off);
    uint32_t *counters = NULL;
    {
        const uint32_t *src = (const uint32_t *)(a.section + v.code_of_off);
        for (uint32_t i = threadIdx.x; i < 64; i += blockDim.x) shm[i] = __ldg(&src[i]);
        uint32_t at = 64;
        if (kBitsShared) {
            for (uint32_t i = threadIdx.x; i < words32; i += blockDim.x) shm[at + i] = __ldg(&bits32[i]);
            bits32 = shm + at;
            at += words32;
        }
        if (kCountShared) {
            for (uint32_t i = threadIdx.x; i < words32 / 2; i += blockDim.x) shm[at + i] = __ldg(&rank[i]);
            rank = shm + at;
            at += words32 / 2;
            counters = shm + at;
            for (uint32_t i = threadIdx.x; i < slots; i += blockDim.x) counters[i] = 0;
        }
    }
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t warps = grid_warps();
    for (uint32_t c = first_warp_chunk(); c < a.nchunks; c += warps) {
        const sm_gpu_chunk ch = a.chunks[c];
        sm_kt_piece carry1 = sm_kt_gpu_empty(), carry2 = sm_kt_gpu_empty();
        for (uint32_t tile = ch.c0 & ~15u; tile < ch.end; tile += SM_KT_GPU_TILE) {
            const uint32_t p = tile + 16 * lane;
            sm_kt_piece cur, prev1, prev2;
            tile_pieces<kDna>(a, ch, code_of, p, lane, carry1, carry2, cur, prev1, prev2);
            if (p >= ch.end) continue;
            uint32_t want = sm_kt_gpu_whole(k, prev2.breaks, prev1.breaks, cur.breaks) & sm_kt_gpu_owned(p, k, ch.c1);
            if (!want) continue;
            uint32_t hits = sm_kt_gpu_direct(bits32, mask, prev1.codes, cur.codes, want);
            const uint64_t h = (uint64_t)prev1.codes << 32 | cur.codes;
            while (hits) {
                uint32_t j = __ffs(hits) - 1;
                hits &= hits - 1;
                uint32_t m = (uint32_t)(h >> (2 * (15 - j))) & mask;
                uint32_t slot = sm_kt_gpu_slot(bits32, rank, m);
                if (kCount) {
                    if (kCountShared) atomicAdd(&counters[slot], 1u);
                    else atomicAdd(&a.visits[slot], 1u);
                } else {
                    report_slot(a, slot, p + j + 1);
                }
            }
        }
    }
    if (kCountShared) {
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < slots; i += blockDim.x)
            if (counters[i]) atomicAdd(&a.visits[i], counters[i]);
    }
}

/* Direct layout, count mode, dense sets: the slot of every code in a 16-bit
   table in shared memory (4^k entries, 0xffff for no key) beside the slot
   counters, so that a position costs one lookup and a hit one shared atomic
   with no rank to work out; every lane takes its 16 positions in the same
   steps, and the next tile's bytes are loaded while this one is tested. */
template <bool kDna>
__global__ void __launch_bounds__(1024) kt_slot_kernel(sm_gpu_scan_args a) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_kmer &v = *SM_GPU_VIEW(&a.view, const sm_gpu_kmer);
    const uint32_t k = v.k, mask = (uint32_t)v.mask, codes = mask + 1, slots = (uint32_t)v.slots;
    uint8_t *code_of = reinterpret_cast<uint8_t *>(shm);
    uint16_t *slot_of = reinterpret_cast<uint16_t *>(shm + 64);
    uint32_t *counters = shm + 64 + (codes + 1) / 2;
    {
        const uint32_t *src = (const uint32_t *)(a.section + v.code_of_off);
        const uint32_t *bits32 = (const uint32_t *)(a.section + v.bits_off);
        const uint32_t *rank = (const uint32_t *)(a.section + v.rank_off);
        for (uint32_t i = threadIdx.x; i < 64; i += blockDim.x) shm[i] = __ldg(&src[i]);
        for (uint32_t c = threadIdx.x; c < codes; c += blockDim.x)
            slot_of[c] = (__ldg(&bits32[c >> 5]) >> (c & 31)) & 1u ? (uint16_t)sm_kt_gpu_slot(bits32, rank, c)
                                                                 : (uint16_t)SM_KT_GPU_NO_SLOT;
        for (uint32_t i = threadIdx.x; i < slots; i += blockDim.x) counters[i] = 0;
    }
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t warps = grid_warps();
    for (uint32_t c = first_warp_chunk(); c < a.nchunks; c += warps) {
        const sm_gpu_chunk ch = a.chunks[c];
        sm_kt_piece carry1 = sm_kt_gpu_empty(), carry2 = sm_kt_gpu_empty();
        uint32_t tile = ch.c0 & ~15u;
        uint32_t next[4] = {0, 0, 0, 0};
        if (tile + 16 * lane < ch.end) sm_gpu_load16(a.text + tile + 16 * lane, next);
        for (; tile < ch.end; tile += SM_KT_GPU_TILE) {
            const uint32_t p = tile + 16 * lane;
            uint32_t w[4] = {next[0], next[1], next[2], next[3]};
            if (p + SM_KT_GPU_TILE < ch.end) sm_gpu_load16(a.text + p + SM_KT_GPU_TILE, next);
            sm_kt_piece cur = sm_kt_gpu_empty();
            if (p < ch.end) {
                cur = lane_piece<kDna>(code_of, w, p, ch);
            }
            sm_kt_piece prev1, prev2;
            lanes_before(cur, lane, carry1, carry2, prev1, prev2);
            if (p >= ch.end) continue;
            uint32_t want = sm_kt_gpu_whole(k, prev2.breaks, prev1.breaks, cur.breaks) & sm_kt_gpu_owned(p, k, ch.c1);
            if (want == 0xffffu) { /* the common case: every position whole and owned */
#pragma unroll
                for (uint32_t j = 0; j < 16; j++) {
                    uint32_t slot = slot_of[__funnelshift_r(cur.codes, prev1.codes, 2 * (15 - j)) & mask];
                    if (slot != SM_KT_GPU_NO_SLOT) atomicAdd(&counters[slot], 1u);
                }
            } else if (want) {
#pragma unroll
                for (uint32_t j = 0; j < 16; j++) {
                    uint32_t slot = slot_of[__funnelshift_r(cur.codes, prev1.codes, 2 * (15 - j)) & mask];
                    if (((want >> j) & 1u) && slot != SM_KT_GPU_NO_SLOT) atomicAdd(&counters[slot], 1u);
                }
            }
        }
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < slots; i += blockDim.x)
        if (counters[i]) atomicAdd(&a.visits[i], counters[i]);
}

/* Hash layout: the byte map, then the filter when it fits (FILTER_SHARED),
   or else a pre-filter (FILTER_PRE, the filter then read through L2 for
   the positions that pass it). */
enum { FILTER_GLOBAL = 0, FILTER_SHARED = 1, FILTER_PRE = 2 };

template <bool kDna, bool kCount, int kWhere, int kThreads, bool kBatch = false>
__global__ void __launch_bounds__(kThreads) kt_hash_kernel(sm_gpu_scan_args a, const uint32_t *pre_global,
                                                           uint32_t pre_bits) {
    extern __shared__ uint32_t shm[];
    const sm_gpu_kmer &v = *SM_GPU_VIEW(&a.view, const sm_gpu_kmer);
    const uint32_t k = v.k;
    uint8_t *code_of = reinterpret_cast<uint8_t *>(shm);
    const uint64_t *filter = (const uint64_t *)(a.section + v.filter_off);
    const uint64_t *filter_shared = reinterpret_cast<const uint64_t *>(shm + 64);
    const uint32_t *pre = shm + 64;
    const uint8_t *table = a.section + v.table_off;
    {
        const uint32_t *src = (const uint32_t *)(a.section + v.code_of_off);
        for (uint32_t i = threadIdx.x; i < 64; i += blockDim.x) shm[i] = __ldg(&src[i]);
        if (kWhere == FILTER_SHARED) {
            uint64_t *dst = reinterpret_cast<uint64_t *>(shm + 64);
            for (uint32_t i = threadIdx.x; i < (1u << v.filter_log2); i += blockDim.x) dst[i] = __ldg(&filter[i]);
        } else if (kWhere == FILTER_PRE) {
            for (uint32_t i = threadIdx.x; i < pre_bits / 32; i += blockDim.x) shm[64 + i] = __ldg(&pre_global[i]);
        }
    }
    __syncthreads();
    sm_gpu_kmer view = v;
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t warps = grid_warps();
    for (uint32_t c = first_warp_chunk(); c < a.nchunks; c += warps) {
        const sm_gpu_chunk ch = a.chunks[c];
        sm_kt_piece carry1 = sm_kt_gpu_empty(), carry2 = sm_kt_gpu_empty();
        for (uint32_t tile = ch.c0 & ~15u; tile < ch.end; tile += SM_KT_GPU_TILE) {
            const uint32_t p = tile + 16 * lane;
            sm_kt_piece cur, prev1, prev2;
            tile_pieces<kDna>(a, ch, code_of, p, lane, carry1, carry2, cur, prev1, prev2);
            if (p >= ch.end) continue;
            uint32_t want = sm_kt_gpu_whole(k, prev2.breaks, prev1.breaks, cur.breaks) & sm_kt_gpu_owned(p, k, ch.c1);
            if (kBatch) {
                /* eight positions' filter words in flight at once, each
                   position's code multiplied once: the word's index and the
                   two bits it must hold come from the same product */
                uint32_t pass = 0;
#pragma unroll
                for (uint32_t half = 0; half < 16; half += 8) {
                    uint64_t word[8];
                    uint32_t bits[8];
#pragma unroll
                    for (uint32_t i = 0; i < 8; i++) {
                        const uint32_t j = half + i;
                        uint64_t code = sm_kt_gpu_code(prev2.codes, prev1.codes, cur.codes, j, v.mask);
                        uint32_t go = (want >> j) & 1u;
                        if (kWhere == FILTER_PRE) {
                            /* read whatever want says: no branch around each position */
                            uint32_t b = sm_kh_gpu_pre_bit(code, v.hash_mul, pre_bits);
                            go &= pre[b >> 5] >> (b & 31);
                        }
                        uint64_t f = code * v.filter_mul;
                        bits[i] = (uint32_t)(f >> (58 - v.filter_log2)) & 63u | ((uint32_t)(f >> (52 - v.filter_log2)) & 63u) << 8;
                        uint64_t index = f >> (64 - v.filter_log2);
                        word[i] = !go ? 0 : kWhere == FILTER_SHARED ? filter_shared[index] : __ldg(&filter[index]);
                        pass |= go << j;
                    }
#pragma unroll
                    for (uint32_t i = 0; i < 8; i++) {
                        uint32_t both = (uint32_t)(word[i] >> (bits[i] & 63u)) & (uint32_t)(word[i] >> (bits[i] >> 8));
                        if (!(both & 1u)) pass &= ~(1u << (half + i));
                    }
                }
                while (pass) {
                    uint32_t j = __ffs(pass) - 1;
                    pass &= pass - 1;
                    uint64_t code = sm_kt_gpu_code(prev2.codes, prev1.codes, cur.codes, j, v.mask);
                    uint32_t slot = sm_kh_gpu_probe(&view, table, code);
                    if (slot == SM_GPU_KMER_EMPTY) continue;
                    if (kCount) atomicAdd(&a.visits[slot], 1u);
                    else report_slot(a, slot, p + j + 1);
                }
            } else {
#pragma unroll
                for (uint32_t j = 0; j < 16; j++) {
                    if (!((want >> j) & 1u)) continue;
                    uint64_t code = sm_kt_gpu_code(prev2.codes, prev1.codes, cur.codes, j, v.mask);
                    if (kWhere == FILTER_PRE) {
                        uint32_t b = sm_kh_gpu_pre_bit(code, v.hash_mul, pre_bits);
                        if (!((pre[b >> 5] >> (b & 31)) & 1u)) continue;
                    }
                    uint64_t index = sm_kh_gpu_filter_index(&view, code);
                    uint64_t word = kWhere == FILTER_SHARED ? filter_shared[index] : __ldg(&filter[index]);
                    if (!sm_kh_gpu_filter_pass(&view, code, word)) continue;
                    uint32_t slot = sm_kh_gpu_probe(&view, table, code);
                    if (slot == SM_GPU_KMER_EMPTY) continue;
                    if (kCount) atomicAdd(&a.visits[slot], 1u);
                    else report_slot(a, slot, p + j + 1);
                }
            }
        }
    }
}

/* One entry of the table of sampled m-mers against a lane's k-mers: a hit
   when it names the lane's m-mer and the k-mer ending o bytes on. */
template <bool kCount>
__device__ __forceinline__ void sampled_entry(const sm_gpu_scan_args &a, const uint4 &e, uint32_t mmer, uint32_t ends,
                                              const sm_kt_piece &prev2, const sm_kt_piece &prev1,
                                              const sm_kt_piece &cur, uint64_t mask, uint32_t p) {
    const uint32_t o = e.z >> SM_KS_GPU_SLOT_BITS;
    if (e.w == mmer && ((ends >> o) & 1u) &&
        sm_ks_gpu_code(prev2.codes, prev1.codes, cur.codes, o, mask) == ((uint64_t)e.y << 32 | e.x)) {
        if (kCount) atomicAdd(&a.visits[e.z & SM_KS_GPU_SLOT_MASK], 1u);
        else report_slot(a, e.z & SM_KS_GPU_SLOT_MASK, p + o);
    }
}

/* Hash layout, k of 27 to 31: each lane looks the m-mer ending on the byte
   before its own up in the table of sampled m-mers (kmer_gpu.h) and
   compares each of the m-mer's keys with the k-mer ending where the entry
   says; entries of 16 bytes, {code, slot with o, m-mer}, read two at a time
   (the aligned pair that holds the next, both in one 32-byte sector), so
   that a walk waits on device memory half as often (kPairs; one at a time
   with SEQMATCH_CUDA_KMER_PAIRS=0). */
template <bool kDna, bool kCount, bool kPairs = true>
__global__ void __launch_bounds__(SM_CUDA_BLOCK) kt_sampled_kernel(sm_gpu_scan_args a, const uint8_t *sampled,
                                                                   uint32_t sampled_log2) {
    __shared__ uint32_t code_map[64];
    const sm_gpu_kmer &v = *SM_GPU_VIEW(&a.view, const sm_gpu_kmer);
    const uint32_t k = v.k, mmask = sm_ks_gpu_mmer_mask(k), cap_mask = (1u << sampled_log2) - 1;
    const uint64_t mask = v.mask;
    const uint4 *entries = reinterpret_cast<const uint4 *>(sampled);
    uint8_t *code_of = reinterpret_cast<uint8_t *>(code_map);
    {
        const uint32_t *src = (const uint32_t *)(a.section + v.code_of_off);
        for (uint32_t i = threadIdx.x; i < 64; i += blockDim.x) code_map[i] = __ldg(&src[i]);
    }
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t warps = grid_warps();
    for (uint32_t c = first_warp_chunk(); c < a.nchunks; c += warps) {
        const sm_gpu_chunk ch = a.chunks[c];
        sm_kt_piece carry1 = sm_kt_gpu_empty(), carry2 = sm_kt_gpu_empty();
        /* a k-mer ends at p - 1: the lane whose first byte is the chunk's end still has one */
        for (uint32_t tile = ch.c0 & ~15u; tile <= ch.end; tile += SM_KT_GPU_TILE) {
            const uint32_t p = tile + 16 * lane;
            sm_kt_piece cur, prev1, prev2;
            tile_pieces<kDna>(a, ch, code_of, p, lane, carry1, carry2, cur, prev1, prev2);
            if (p > ch.end) continue;
            const uint32_t want =
                sm_kt_gpu_whole(k, prev2.breaks, prev1.breaks, cur.breaks) & sm_kt_gpu_owned(p, k, ch.c1);
            const uint32_t ends = sm_ks_gpu_ends(want, k, prev2.breaks, prev1.breaks, p, ch.c1);
            if (!ends) continue;
            const uint32_t mmer = prev1.codes & mmask;
            uint32_t at = sm_ks_gpu_home(mmer, sampled_log2);
            if (!kPairs) {
                for (uint4 e = __ldg(&entries[at]); e.z != SM_KS_GPU_EMPTY; e = __ldg(&entries[at])) {
                    sampled_entry<kCount>(a, e, mmer, ends, prev2, prev1, cur, mask, p);
                    at = (at + 1) & cap_mask;
                }
            }
            while (kPairs) {
                const uint32_t even = at & ~1u;
                const uint4 e0 = __ldg(&entries[even]), e1 = __ldg(&entries[even | 1u]);
                if (at == even) {
                    if (e0.z == SM_KS_GPU_EMPTY) break;
                    sampled_entry<kCount>(a, e0, mmer, ends, prev2, prev1, cur, mask, p);
                }
                if (e1.z == SM_KS_GPU_EMPTY) break;
                sampled_entry<kCount>(a, e1, mmer, ends, prev2, prev1, cur, mask, p);
                at = (even + 2) & cap_mask;
            }
        }
    }
}

/* What the hash layout's kernels need besides the section: the table of
   sampled m-mers (k of 27 to 31), else the pre-filter when the filter is
   read through L2. */
struct kt_prepared {
    uint32_t *pre;
    uint32_t pre_bits;
    uint8_t *sampled;        /* k of 27 to 31: the table of sampled m-mers (no pre-filter then) */
    uint32_t sampled_log2;
    int sampled_single;      /* SEQMATCH_CUDA_KMER_PAIRS=0: its entries read one at a time (benchmarks) */
};

/* The table of sampled m-mers built on the device: a thread per key and o
   claims an entry from the m-mer's home on. The set of filled entries, and
   so every lookup, is the same whatever order the threads claim in. */
__global__ void ks_build_kernel(const uint64_t *codes, const uint32_t *slots, uint32_t n, uint32_t k, uint4 *table,
                                uint32_t cap_log2) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)n * 16) return;
    const uint32_t key = (uint32_t)(i >> 4), o = (uint32_t)(i & 15), cap_mask = (1u << cap_log2) - 1;
    const uint64_t code = codes[key];
    const uint32_t mmer = (uint32_t)(code >> (2 * o)) & sm_ks_gpu_mmer_mask(k);
    uint32_t at = sm_ks_gpu_home(mmer, cap_log2);
    while (atomicCAS(&table[at].z, SM_KS_GPU_EMPTY, slots[key] | o << SM_KS_GPU_SLOT_BITS) != SM_KS_GPU_EMPTY)
        at = (at + 1) & cap_mask;
    table[at].x = (uint32_t)code;
    table[at].y = (uint32_t)(code >> 32);
    table[at].w = mmer;
}

/* The longest stretch of filled entries (up to limit + 1), each stretch
   measured from its first entry. */
__global__ void ks_stretch_kernel(const uint4 *table, uint32_t cap_log2, uint32_t limit, uint32_t *longest) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t cap_mask = (1u << cap_log2) - 1;
    if (i > cap_mask || table[i].z == SM_KS_GPU_EMPTY || table[(i - 1) & cap_mask].z != SM_KS_GPU_EMPTY) return;
    uint32_t len = 0;
    while (len <= limit && table[(i + len) & cap_mask].z != SM_KS_GPU_EMPTY) len++;
    atomicMax(longest, len);
}

/* Builds the table of sampled m-mers for a hash layout of k 27 to 31, an
   eighth full, or fuller down to half where half the free device memory
   does not hold it (p->sampled stays NULL where an m-mer crowds it, or
   device memory is short even so). SEQMATCH_CUDA_KMER_SPARSE=0: half full
   (benchmarks). */
static int ks_build(const sm_gpu_kmer &v, const uint8_t *section, kt_prepared *p, char *msg) {
    const uint8_t *entries = section + v.table_off;
    uint64_t n = 0, cap = 1ull << v.cap_log2;
    for (uint64_t e = 0; e < cap; e++) {
        uint32_t slot;
        memcpy(&slot, entries + 16 * e + 8, 4);
        n += slot != SM_GPU_KMER_EMPTY;
    }
    size_t free_bytes = 0, total = 0;
    if (n == 0 || n > SM_KS_GPU_MAX_KEYS || cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return 0;
    const char *sparse = getenv("SEQMATCH_CUDA_KMER_SPARSE");
    const uint32_t min_log2 = sm_ks_gpu_min_log2(n);
    uint32_t log2 = sparse && strcmp(sparse, "0") == 0 ? min_log2 : sm_ks_gpu_cap_log2(n);
    while (log2 > min_log2 && sm_ks_gpu_table_bytes(log2) > free_bytes / 2) log2--;
    const size_t bytes = sm_ks_gpu_table_bytes(log2);
    if (bytes > free_bytes / 2) return 0;
    uint64_t *codes = (uint64_t *)malloc(n * 8);
    uint32_t *slots = (uint32_t *)malloc(n * 4);
    if (!codes || !slots) {
        free(codes);
        free(slots);
        return 0;
    }
    for (uint64_t e = 0, i = 0; e < cap; e++) {
        uint32_t slot;
        memcpy(&slot, entries + 16 * e + 8, 4);
        if (slot == SM_GPU_KMER_EMPTY) continue;
        slots[i] = slot;
        memcpy(&codes[i++], entries + 16 * e, 8);
    }
    uint64_t *dcodes = NULL;
    uint32_t *dslots = NULL, *dlongest = NULL, longest = 0;
    uint4 *table = NULL;
    cudaError_t e = cudaMalloc(&table, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&dcodes, n * 8 + n * 4 + 4);
    if (e == cudaSuccess) {
        dslots = (uint32_t *)(dcodes + n);
        dlongest = dslots + n;
        e = cudaMemcpy(dcodes, codes, n * 8, cudaMemcpyHostToDevice);
    }
    if (e == cudaSuccess) e = cudaMemcpy(dslots, slots, n * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemset(table, 0xff, bytes);
    if (e == cudaSuccess) e = cudaMemset(dlongest, 0, 4);
    if (e == cudaSuccess) {
        ks_build_kernel<<<(unsigned)((n * 16 + 255) / 256), 256>>>(dcodes, dslots, (uint32_t)n, v.k, table, log2);
        ks_stretch_kernel<<<(unsigned)(((1ull << log2) + 255) / 256), 256>>>(table, log2, SM_KS_GPU_MAX_WALK, dlongest);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(&longest, dlongest, 4, cudaMemcpyDeviceToHost);
    free(codes);
    free(slots);
    cudaFree(dcodes);
    if (e != cudaSuccess || longest > SM_KS_GPU_MAX_WALK) {
        cudaFree(table);
        return e != cudaSuccess ? sm_cuda_fail(msg, "building the k-mer table of sampled m-mers", e) : 0;
    }
    p->sampled = reinterpret_cast<uint8_t *>(table);
    p->sampled_log2 = log2;
    return 0;
}

static int kt_prepare(sm_cuda_gpu_section *s, const sm_cuda_section *host, char *msg) {
    sm_gpu_kmer &v = *SM_GPU_VIEW(&s->view, sm_gpu_kmer);
    /* SEQMATCH_CUDA_KMER=table: the byte map's lookups even for DNA (benchmarks) */
    const char *way = getenv("SEQMATCH_CUDA_KMER");
    if (way && strcmp(way, "table") == 0) v.dna_codes = 0;
    if (!v.hashed || 256 + ((size_t)8 << v.filter_log2) <= SM_KT_GPU_SHARED_MAX) return 0;
    if (way && strcmp(way, "nopre") == 0) return 0;
    kt_prepared *p = (kt_prepared *)calloc(1, sizeof *p);
    if (!p) return 0; /* the filter through L2 will do */
    s->prepared = p;
    const char *pairs = getenv("SEQMATCH_CUDA_KMER_PAIRS");
    p->sampled_single = pairs && strcmp(pairs, "0") == 0;
    /* SEQMATCH_CUDA_KMER=filter: a filter per position even for k of 27 to 31 (benchmarks) */
    if (sm_ks_gpu_fits(v.k, v.slots) && !(way && strcmp(way, "filter") == 0)) {
        if (ks_build(v, host->bytes, p, msg) != 0) return -1;
        if (p->sampled) return 0;
    }
    int device = 0, optin = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    uint32_t bits = sm_kh_gpu_pre_bits(v.slots, (size_t)optin);
    if (bits < 1024) return 0;
    uint32_t *tmp = (uint32_t *)calloc(bits / 32, sizeof *tmp);
    if (!tmp) return 0;
    sm_kh_gpu_build_pre(&v, host->bytes, tmp, bits);
    cudaError_t e = cudaMalloc(&p->pre, bits / 8);
    if (e == cudaSuccess) e = cudaMemcpy(p->pre, tmp, bits / 8, cudaMemcpyHostToDevice);
    free(tmp);
    if (e != cudaSuccess) return sm_cuda_fail(msg, "copying the k-mer pre-filter to the device", e);
    p->pre_bits = bits;
    return 0;
}

static void kt_release(sm_cuda_gpu_section *s) {
    kt_prepared *p = (kt_prepared *)s->prepared;
    if (!p) return;
    cudaFree(p->pre);
    cudaFree(p->sampled);
    free(p);
    s->prepared = NULL;
}

typedef void (*kt_kernel_fn)(sm_gpu_scan_args);

static int kt_launch(const sm_cuda_launch *l, char *msg) {
    const sm_gpu_kmer &v = *SM_GPU_VIEW(&l->args.view, const sm_gpu_kmer);
    bool dna = v.dna_codes, count = l->args.count_only;
    kt_kernel_fn kernel;
    size_t shared = 256;
    /* SEQMATCH_CUDA_KMER_COUNT=rank and SEQMATCH_CUDA_KMER_HASH=serial pick
       the kernels these replaced (benchmarks) */
    const char *count_way = getenv("SEQMATCH_CUDA_KMER_COUNT"), *hash_way = getenv("SEQMATCH_CUDA_KMER_HASH");
    bool batch = !hash_way || strcmp(hash_way, "serial") != 0;
    if (!v.hashed && count) {
        size_t slot_shared = sm_kt_gpu_slot_shared(&v, l->shared_limit);
        if (slot_shared && !(count_way && strcmp(count_way, "rank") == 0)) {
            /* one block of 1024 threads per multiprocessor beside the slot table */
            unsigned blocks;
            void (*sk)(sm_gpu_scan_args) = dna ? kt_slot_kernel<true> : kt_slot_kernel<false>;
            if (sm_cuda_grid_threads((const void *)sk, slot_shared, l->args.nchunks, 32, 1024, l->sms, &blocks, msg) != 0)
                return -1;
            sk<<<blocks, 1024, slot_shared, l->stream>>>(l->args);
            return 0;
        }
    }
    if (!v.hashed) {
        size_t bits = (size_t)v.words * 8, rank = (size_t)v.words * 4, counters = (size_t)v.slots * 4;
        bool bits_shared = shared + bits <= SM_KT_GPU_SHARED_MAX;
        bool count_shared = count && bits_shared && shared + bits + rank + counters <= l->shared_limit;
        if (bits_shared) shared += bits;
        if (count_shared) shared += rank + counters;
#define KT_PICK(D, C, B, S) kernel = kt_direct_kernel<D, C, B, S>
        if (dna) {
            if (count) {
                if (bits_shared) { if (count_shared) KT_PICK(true, true, true, true); else KT_PICK(true, true, true, false); }
                else KT_PICK(true, true, false, false);
            } else {
                if (bits_shared) KT_PICK(true, false, true, false); else KT_PICK(true, false, false, false);
            }
        } else {
            if (count) {
                if (bits_shared) { if (count_shared) KT_PICK(false, true, true, true); else KT_PICK(false, true, true, false); }
                else KT_PICK(false, true, false, false);
            } else {
                if (bits_shared) KT_PICK(false, false, true, false); else KT_PICK(false, false, false, false);
            }
        }
#undef KT_PICK
    } else {
        const kt_prepared *pre = (const kt_prepared *)l->section->prepared;
        if (pre && pre->sampled) {
            void (*sk)(sm_gpu_scan_args, const uint8_t *, uint32_t) =
                pre->sampled_single
                    ? (dna ? (count ? kt_sampled_kernel<true, true, false> : kt_sampled_kernel<true, false, false>)
                           : (count ? kt_sampled_kernel<false, true, false> : kt_sampled_kernel<false, false, false>))
                : dna ? (count ? kt_sampled_kernel<true, true> : kt_sampled_kernel<true, false>)
                      : (count ? kt_sampled_kernel<false, true> : kt_sampled_kernel<false, false>);
            unsigned blocks;
            if (sm_cuda_grid((const void *)sk, 0, l->args.nchunks, 32, l->sms, &blocks, msg) != 0) return -1;
            sk<<<blocks, SM_CUDA_BLOCK, 0, l->stream>>>(l->args, pre->sampled, pre->sampled_log2);
            return 0;
        }
        size_t filter = (size_t)8 << v.filter_log2;
        bool filter_shared = shared + filter <= SM_KT_GPU_SHARED_MAX;
        void (*hk)(sm_gpu_scan_args, const uint32_t *, uint32_t);
        unsigned threads = SM_CUDA_BLOCK;
#define KT_HASH_PICK(B) do {\
        if (filter_shared) { \
            shared += filter; \
            hk = dna ? (count ? kt_hash_kernel<true, true, FILTER_SHARED, SM_CUDA_BLOCK, B> \
                              : kt_hash_kernel<true, false, FILTER_SHARED, SM_CUDA_BLOCK, B>) \
                     : (count ? kt_hash_kernel<false, true, FILTER_SHARED, SM_CUDA_BLOCK, B> \
                              : kt_hash_kernel<false, false, FILTER_SHARED, SM_CUDA_BLOCK, B>); \
        } else if (pre && pre->pre) { \
            /* one block of 1024 threads per multiprocessor beside the pre-filter */ \
            shared += pre->pre_bits / 8; \
            threads = 1024; \
            hk = dna ? (count ? kt_hash_kernel<true, true, FILTER_PRE, 1024, B> : kt_hash_kernel<true, false, FILTER_PRE, 1024, B>) \
                     : (count ? kt_hash_kernel<false, true, FILTER_PRE, 1024, B> : kt_hash_kernel<false, false, FILTER_PRE, 1024, B>); \
        } else { \
            hk = dna ? (count ? kt_hash_kernel<true, true, FILTER_GLOBAL, SM_CUDA_BLOCK, B> \
                              : kt_hash_kernel<true, false, FILTER_GLOBAL, SM_CUDA_BLOCK, B>) \
                     : (count ? kt_hash_kernel<false, true, FILTER_GLOBAL, SM_CUDA_BLOCK, B> \
                              : kt_hash_kernel<false, false, FILTER_GLOBAL, SM_CUDA_BLOCK, B>); \
        } \
    } while (0)
        if (batch) KT_HASH_PICK(true); else KT_HASH_PICK(false);
#undef KT_HASH_PICK
        unsigned blocks;
        if (sm_cuda_grid_threads((const void *)hk, shared, l->args.nchunks, 32, threads, l->sms, &blocks, msg) != 0)
            return -1;
        hk<<<blocks, threads, shared, l->stream>>>(l->args, pre ? pre->pre : NULL, pre ? pre->pre_bits : 0);
        return 0;
    }
    unsigned blocks;
    if (sm_cuda_grid((const void *)kernel, shared, l->args.nchunks, 32, l->sms, &blocks, msg) != 0) return -1;
    kernel<<<blocks, SM_CUDA_BLOCK, shared, l->stream>>>(l->args);
    return 0;
}

SM_CUDA_ENGINE(kmer_engine, SM_SECTION_KMER, kt_prepare, kt_release, kt_launch)
