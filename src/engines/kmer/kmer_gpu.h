/* The k-mer table on the GPU: the scan of one chunk by one warp, in the C
 * that both the kernel (kmer_cuda.cu) and the CPU stand-in for the kernels
 * (kmer_gpu.c) compile (engines/gpu_part.h says why).
 *
 * A warp takes a chunk in tiles of 512 bytes: lane l reads the 16 bytes at
 * tile + 16 l with one coalesced load and turns them into a piece: the 2-bit
 * code of each byte and a break bit for each byte that is no key symbol or
 * lies outside the chunk's bytes [c0, end). The k-mer ending at each of its
 * 16 positions is then made of its own codes and those of the one or two
 * lanes before it (shuffled over; lane 0 and 1 take the last lanes of the
 * tile before), so that no position waits on the one before it: every lane
 * tests 16 positions against the table with independent lookups. A k-mer
 * with a break among its k bytes is no hit; every byte before c0 being a
 * break, the hits found start at or after c0, and those starting at or after
 * c1 are dropped.
 */
#ifndef SM_KMER_GPU_H
#define SM_KMER_GPU_H

#include "engines/gpu_part.h"

/* K-mer table. Direct layout (hashed == 0): bit c of the bitmap is set when
   k-mer code c is a key; its slot is rank[c / 64] + the set bits below it in
   its 64-bit word. Hash layout (hashed == 1): a filter word per position
   (two bits per key) in front of an open-addressing table of
   {uint64 code, uint32 slot, uint32 0} entries. Both: a slot's outputs are
   out_list[out_index[slot] .. out_index[slot + 1]). */
#define SM_GPU_KMER_BREAK 0xffu  /* code_of[] of a byte that is no key symbol */
#define SM_GPU_KMER_EMPTY 0xffffffffu
typedef struct {
    uint32_t k, hashed;
    uint64_t mask;           /* 4^k - 1 (all ones for k = 32) */
    uint64_t slots;
    uint64_t code_of_off;    /* uint8[256]: byte -> code 0..3, or SM_GPU_KMER_BREAK */
    uint64_t bits_off;       /* direct: uint64[words] */
    uint64_t rank_off;       /* direct: uint32[words] */
    uint64_t words;          /* direct: 64-bit words of the bitmap */
    uint64_t filter_off;     /* hash: uint64[1 << filter_log2] */
    uint64_t table_off;      /* hash: entries[1 << cap_log2] */
    uint64_t hash_mul, filter_mul;
    uint32_t filter_log2, cap_log2;
    uint64_t out_index_off, out_list_off;
    uint32_t dna_codes;      /* 1: code_of is A/a 0, C/c 1, G/g 2, T/t/U/u 3, every other byte a break */
    uint32_t pad;
} sm_gpu_kmer;

/* Where the kernels keep their tables: in a block's shared memory up to
   this size (room left for a second block on a multiprocessor), else read
   through the caches. */
#define SM_KT_GPU_SHARED_MAX (96u * 1024u)

#ifndef __CUDACC__
/* The view of a k-mer table section (kmer_gpu.c), also of the tables that
   other engines embed (the pigeonhole filter's seed tables). */
void sm_kt_gpu_view(const uint8_t *section, sm_gpu_kmer *view);
#endif

#define SM_KT_GPU_LANES 32u
#define SM_KT_GPU_PIECE 16u
#define SM_KT_GPU_TILE (SM_KT_GPU_LANES * SM_KT_GPU_PIECE)

/* 16 bytes of a lane: byte j's code at bits 2 (15 - j) of codes, its break
   at bit 15 - j of breaks (the newest byte lowest, as in a rolling code). */
typedef struct {
    uint32_t codes, breaks;
} sm_kt_piece;

/* The piece of a lane past the chunk: all breaks. */
SM_GPU_FN sm_kt_piece sm_kt_gpu_empty(void) {
    sm_kt_piece e;
    e.codes = 0;
    e.breaks = 0xffffu;
    return e;
}

/* Break bits of the bytes p + j outside [lo, hi). */
SM_GPU_FN uint32_t sm_kt_gpu_outside(uint32_t p, uint32_t lo, uint32_t hi) {
    uint32_t out = 0;
    if (lo > p) out |= lo - p >= 16 ? 0xffffu : (0xffffu << (16 - (lo - p))) & 0xffffu;
    uint32_t n = hi > p ? hi - p : 0;
    if (n < 16) out |= 0xffffu >> n;
    return out;
}

SM_GPU_FN uint32_t sm_gpu_byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#ifdef __CUDACC__
    return __byte_perm(x, y, s);
#else
    uint64_t v = (uint64_t)y << 32 | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
#endif
}

/* The piece of 16 bytes (four little-endian words) through the section's
   byte map: one table lookup per byte. */
SM_GPU_FN sm_kt_piece sm_kt_gpu_piece_table(const uint8_t *code_of, const uint32_t w[4], uint32_t outside) {
    sm_kt_piece r;
    uint32_t codes = 0, breaks = 0;
    SM_GPU_UNROLL
    for (int j = 0; j < 16; j++) {
        uint32_t c = code_of[(w[j >> 2] >> (8 * (j & 3))) & 0xffu];
        codes = codes << 2 | (c & 3u);
        breaks = breaks << 1 | (uint32_t)(c == SM_GPU_KMER_BREAK);
    }
    r.codes = codes;
    r.breaks = breaks | outside;
    return r;
}

/* The codes of four bytes (the first byte's in the top two bits) when the
   byte map is the DNA one (sm_gpu_kmer.dna_codes), and in *bad a bit per
   byte that is none of A C G T U a c g t u (the first byte's at bit 3):
   A 0x41, C 0x43, G 0x47, T 0x54 give (b >> 1 ^ b >> 2) & 3 = 0, 1, 2, 3,
   and a byte is valid when it is the letter its code names (U for T too). */
SM_GPU_FN uint32_t sm_kt_gpu_dna4(uint32_t w, uint32_t *bad) {
    uint32_t c = ((w >> 1) ^ (w >> 2)) & 0x03030303u;
    uint32_t t = c | (c >> 4);
    uint32_t expect = sm_gpu_byte_perm(0x54474341u, 0, sm_gpu_byte_perm(t, 0, 0x4420u));
    uint32_t u_ok = c & (c >> 1) & 0x01010101u;          /* code 3: T or U */
    uint32_t d = ((w & 0xdfdfdfdfu) ^ expect) & ~u_ok;
    uint32_t nz = (((d & 0x7f7f7f7fu) + 0x7f7f7f7fu) | d) & 0x80808080u;
    *bad = ((nz >> 7) * 0x08040201u) >> 24;
    return (c * 0x40100401u) >> 24;
}

SM_GPU_FN sm_kt_piece sm_kt_gpu_piece_dna(const uint32_t w[4], uint32_t outside) {
    sm_kt_piece r;
    uint32_t b0, b1, b2, b3;
    uint32_t p0 = sm_kt_gpu_dna4(w[0], &b0), p1 = sm_kt_gpu_dna4(w[1], &b1);
    uint32_t p2 = sm_kt_gpu_dna4(w[2], &b2), p3 = sm_kt_gpu_dna4(w[3], &b3);
    r.codes = p0 << 24 | p1 << 16 | p2 << 8 | p3;
    r.breaks = (b0 << 12 | b1 << 8 | b2 << 4 | b3) | outside;
    return r;
}

/* Positions (bit j) whose k bytes hold no break, from the break bits of the
   lanes before (prev2, prev1) and this one: a run of k clear bits from bit
   15 - j up. */
SM_GPU_FN uint32_t sm_kt_gpu_whole(uint32_t k, uint32_t prev2, uint32_t prev1, uint32_t cur) {
    if (!(prev1 | cur) && (k <= 17 || !prev2)) return 0xffffu; /* the common case: no break near */
    uint64_t clear = ~((uint64_t)prev2 << 32 | (uint64_t)prev1 << 16 | cur) & 0xffffffffffffull;
    uint32_t have = 1;
    while (have < k) {
        uint32_t step = have < k - have ? have : k - have;
        clear &= clear >> step;
        have += step;
    }
    /* bit 15 - j of clear -> bit j */
    uint32_t low = (uint32_t)clear & 0xffffu, out = 0;
#ifdef __CUDACC__
    out = __brev(low) >> 16;
#else
    for (int j = 0; j < 16; j++) out |= ((low >> (15 - j)) & 1u) << j;
#endif
    return out;
}

/* Positions (bit j) whose hit would start before c1: p + j + 1 - k < c1. */
SM_GPU_FN uint32_t sm_kt_gpu_owned(uint32_t p, uint32_t k, uint32_t c1) {
    uint64_t lim = (uint64_t)c1 + k - 1;
    if (lim <= p) return 0;
    return lim - p >= 16 ? 0xffffu : (1u << (uint32_t)(lim - p)) - 1;
}

/* The code of the k-mer ending at position j of this lane (k <= 32). */
SM_GPU_FN uint64_t sm_kt_gpu_code(uint32_t prev2, uint32_t prev1, uint32_t cur, uint32_t j, uint64_t mask) {
    uint64_t x = (uint64_t)prev1 << 32 | cur;
    uint32_t s = 2 * (15 - j);
    uint64_t code = s ? (x >> s) | ((uint64_t)prev2 << (64 - s)) : x;
    return code & mask;
}

/* Direct layout: is code m a key? (the bitmap read as 32-bit words) */
SM_GPU_FN uint32_t sm_kt_gpu_test(const uint32_t *bits32, uint32_t m) { return (bits32[m >> 5] >> (m & 31)) & 1u; }

/* Direct layout: the positions of a lane (k <= 16) whose k-mer is a key. */
SM_GPU_FN uint32_t sm_kt_gpu_direct(const uint32_t *bits32, uint32_t mask, uint32_t prev1, uint32_t cur,
                                    uint32_t want) {
#ifndef __CUDACC__
    uint64_t h = (uint64_t)prev1 << 32 | cur;
#endif
    uint32_t hits = 0;
    SM_GPU_UNROLL
    for (int j = 0; j < 16; j++) {
#ifdef __CUDACC__
        /* one funnel shift for the code, a rotate for its bit */
        uint32_t m = __funnelshift_r(cur, prev1, 2 * (15 - j)) & mask;
        uint32_t w = bits32[m >> 5];
        hits |= (__funnelshift_r(w, w, m) & 1u) << j;
#else
        uint32_t m = (uint32_t)(h >> (2 * (15 - j))) & mask;
        hits |= sm_kt_gpu_test(bits32, m) << j;
#endif
    }
    return hits & want;
}

/* Direct layout: the slot of key code m. */
SM_GPU_FN uint32_t sm_kt_gpu_slot(const uint32_t *bits32, const uint32_t *rank, uint32_t m) {
    uint32_t w = m >> 6, lo = bits32[2 * w], hi = bits32[2 * w + 1], b = m & 63;
    uint32_t below = b < 32 ? SM_GPU_POPC(lo & ((1u << b) - 1)) : SM_GPU_POPC(lo) + SM_GPU_POPC(hi & ((1u << (b - 32)) - 1));
    return rank[w] + below;
}

/* Direct layout, count mode, k <= 8: the slot of every code as a 16-bit
   table (SM_KT_GPU_NO_SLOT for no key) beside the slot counters, in a
   block's shared memory: the bytes (the byte map, the table, the counters),
   or 0 when the set cannot take it (more slots than 16 bits hold, or more
   than limit bytes: 16000 8-mers on both strands keep the bitmap). */
#define SM_KT_GPU_NO_SLOT 0xffffu
SM_GPU_HOSTDEV size_t sm_kt_gpu_slot_shared(const sm_gpu_kmer *v, size_t limit) {
    if (v->hashed || v->k > 8 || v->slots >= SM_KT_GPU_NO_SLOT) return 0;
    size_t codes = (size_t)v->mask + 1, need = 256 + (codes + 1) / 2 * 4 + (size_t)v->slots * 4;
    return need <= limit ? need : 0;
}

/* Hash layout: does code pass the filter word it selects (filter word w of
   f = code * filter_mul, w = f >> (64 - filter_log2))? */
SM_GPU_FN uint64_t sm_kh_gpu_filter_index(const sm_gpu_kmer *v, uint64_t code) {
    return (code * v->filter_mul) >> (64 - v->filter_log2);
}

SM_GPU_FN int sm_kh_gpu_filter_pass(const sm_gpu_kmer *v, uint64_t code, uint64_t word) {
    uint64_t f = code * v->filter_mul;
    uint64_t want = 1ull << ((f >> (58 - v->filter_log2)) & 63) | 1ull << ((f >> (52 - v->filter_log2)) & 63);
    return (word & want) == want;
}

/* Hash layout: the slot of code after its filter passed (a key's or not:
   SM_GPU_KMER_EMPTY), probing the table from the code's home entry. */
SM_GPU_FN uint32_t sm_kh_gpu_probe(const sm_gpu_kmer *v, const uint8_t *table, uint64_t code) {
    uint64_t cap_mask = (1ull << v->cap_log2) - 1;
    uint64_t e = (code * v->hash_mul) >> (64 - v->cap_log2);
    for (;;) {
        const uint64_t *entry = (const uint64_t *)(table + 16 * e);
        uint32_t slot = (uint32_t)SM_GPU_LDG(&entry[1]);
        if (slot == SM_GPU_KMER_EMPTY) return SM_GPU_KMER_EMPTY;
        if (SM_GPU_LDG(&entry[0]) == code) return slot;
        e = (e + 1) & cap_mask;
    }
}

/* Hash layout, sets whose filter is too large for shared memory: a
   pre-filter that is, one bit per key (bit bits * (h >> 32) >> 32 of the
   code's home hash h), tested before the filter read through L2. Its size
   in bits: what a block's shared memory holds beside the byte map, at most
   16 per key, a multiple of 32. */
SM_GPU_HOSTDEV uint32_t sm_kh_gpu_pre_bits(uint64_t slots, size_t shared_limit) {
    uint64_t room = shared_limit > 4096 ? ((uint64_t)shared_limit - 4096) * 8 : 0;
    uint64_t bits = slots * 16 < room ? slots * 16 : room;
    return (uint32_t)(bits & ~(uint64_t)31);
}

SM_GPU_HOSTDEV uint32_t sm_kh_gpu_pre_bit(uint64_t code, uint64_t hash_mul, uint32_t bits) {
    return (uint32_t)((((code * hash_mul) >> 32) * (uint64_t)bits) >> 32);
}

/* Sets the pre-filter's bits (zeroed by the caller) from the table's keys. */
SM_GPU_HOSTDEV void sm_kh_gpu_build_pre(const sm_gpu_kmer *v, const uint8_t *section, uint32_t *pre, uint32_t bits) {
    const uint8_t *table = section + v->table_off;
    for (uint64_t e = 0; e < (1ull << v->cap_log2); e++) {
        uint64_t code, second;
        memcpy(&code, table + 16 * e, 8);
        memcpy(&second, table + 16 * e + 8, 8);
        if ((uint32_t)second == SM_GPU_KMER_EMPTY) continue;
        uint32_t b = sm_kh_gpu_pre_bit(code, v->hash_mul, bits);
        pre[b >> 5] |= 1u << (b & 31);
    }
}

/* Hash layout, k of 27 to 31: one lookup per lane, by a sampled m-mer
   (m = k - 15). A k-mer holds 16 m-mers, so exactly one of them ends on
   the last byte of a lane: the lane with first byte p looks the m-mer
   ending at p - 1 up, and so finds every key ending at p - 1 + o for o of
   0 to 15. The table holds each key 16 times, once per o, under the m-mer
   ending o symbols before its end; an entry names its o, so that each
   entry of the m-mer is one comparison with the k-mer that ends there.
   One read from device memory for 16 positions, against a filter read
   through L2 for about half of the positions. The kernel takes it when no
   stretch of the table's filled entries passes SM_KS_GPU_MAX_WALK (an
   m-mer that too many keys hold), for sets of up to SM_KS_GPU_MAX_KEYS
   (the table, at least half empty, then takes at most 2^31 entries: 32
   GiB). */
#define SM_KS_GPU_MIN_K 27u
#define SM_KS_GPU_MAX_K 31u
#define SM_KS_GPU_MAX_WALK 256u
#define SM_KS_GPU_SLOT_BITS 28u
#define SM_KS_GPU_SLOT_MASK ((1u << SM_KS_GPU_SLOT_BITS) - 1)
#define SM_KS_GPU_MAX_KEYS (1u << 26)

SM_GPU_HOSTDEV int sm_ks_gpu_fits(uint32_t k, uint64_t slots) {
    return k >= SM_KS_GPU_MIN_K && k <= SM_KS_GPU_MAX_K && slots <= SM_KS_GPU_MAX_KEYS;
}

SM_GPU_HOSTDEV uint32_t sm_ks_gpu_mmer_mask(uint32_t k) {
    uint32_t m = k - 15;
    return m >= 16 ? 0xffffffffu : (1u << (2 * m)) - 1;
}

/* An m-mer's home entry in the table of 1 << cap_log2 entries. */
SM_GPU_HOSTDEV uint32_t sm_ks_gpu_home(uint32_t mmer, uint32_t cap_log2) {
    return ((mmer ^ 0x2d358dccu) * 0x9e3779b1u) >> (32 - cap_log2);
}

/* The code of the k-mer ending at p - 1 + o (o of 0 to 15) of the lane with
   first byte p, from the codes of the two lanes before it and its own. */
SM_GPU_FN uint64_t sm_ks_gpu_code(uint32_t prev2, uint32_t prev1, uint32_t cur, uint32_t o, uint64_t mask) {
    uint64_t x = (uint64_t)prev1 << 32 | cur;
    uint32_t s = 2 * (16 - o); /* 2 to 32 */
    return ((x >> s) | ((uint64_t)prev2 << (64 - s))) & mask;
}

/* The ends p - 1 + o (bit o) whose k-mer is whole and owned: the lane's
   own positions 0 to 14 (want: ends p + j), and p - 1 itself, whose k-mer
   lies in the two lanes before (k <= 32) and starts at p - k. */
SM_GPU_FN uint32_t sm_ks_gpu_ends(uint32_t want, uint32_t k, uint32_t prev2_breaks, uint32_t prev1_breaks, uint32_t p,
                                  uint32_t c1) {
    uint32_t before = ((prev2_breaks & ((1u << (k - 16)) - 1)) | prev1_breaks) == 0 && (uint64_t)p < (uint64_t)c1 + k;
    return ((want << 1) | before) & 0xffffu;
}

/* The table: 1 << cap_log2 entries of 16 bytes, {uint64 code, uint32 slot
   with o in its top 4 bits (all ones: empty), uint32 m-mer}. */
#define SM_KS_GPU_ENTRY 16u
#define SM_KS_GPU_EMPTY 0xffffffffu
SM_GPU_HOSTDEV size_t sm_ks_gpu_table_bytes(uint32_t cap_log2) { return (size_t)SM_KS_GPU_ENTRY << cap_log2; }

/* The table's size for a set of keys: at least eight entries per key and
   o, up to 2^31 entries. A lane whose m-mer some keys hold reads all their
   entries and then on to the next empty one: the emptier the table, the
   sooner a walk ends (docs/architecture.md, "Kernels"). */
SM_GPU_HOSTDEV uint32_t sm_ks_gpu_log2_for(uint64_t slots, uint64_t per_key) {
    uint32_t log2 = 4;
    while (log2 < 31 && ((uint64_t)1 << log2) < 16 * per_key * slots) log2++;
    return log2;
}

SM_GPU_HOSTDEV uint32_t sm_ks_gpu_cap_log2(uint64_t slots) { return sm_ks_gpu_log2_for(slots, 8); }

/* The smallest the device takes when memory is short: two entries per key
   and o (at most half full). */
SM_GPU_HOSTDEV uint32_t sm_ks_gpu_min_log2(uint64_t slots) { return sm_ks_gpu_log2_for(slots, 2); }

/* Fills the table (every byte 0xff before) from the hash layout's keys, on
   the host for the stand-in (the GPU module builds it on the device: the
   same filled entries, in another order within a stretch). Returns the
   longest stretch of filled entries. */
static inline uint32_t sm_ks_gpu_build(const sm_gpu_kmer *v, const uint8_t *section, uint8_t *mtable,
                                       uint32_t cap_log2) {
    const uint8_t *table = section + v->table_off;
    uint32_t cap_mask = (1u << cap_log2) - 1, mmask = sm_ks_gpu_mmer_mask(v->k);
    for (uint64_t e = 0; e < (1ull << v->cap_log2); e++) {
        uint64_t code;
        uint32_t slot, there;
        memcpy(&code, table + 16 * e, 8);
        memcpy(&slot, table + 16 * e + 8, 4);
        if (slot == SM_GPU_KMER_EMPTY) continue;
        for (uint32_t o = 0; o < 16; o++) {
            uint32_t mmer = (uint32_t)(code >> (2 * o)) & mmask, tagged = slot | o << SM_KS_GPU_SLOT_BITS;
            uint32_t at = sm_ks_gpu_home(mmer, cap_log2);
            for (;; at = (at + 1) & cap_mask) {
                memcpy(&there, mtable + (size_t)SM_KS_GPU_ENTRY * at + 8, 4);
                if (there == SM_KS_GPU_EMPTY) break;
            }
            uint8_t *entry = mtable + (size_t)SM_KS_GPU_ENTRY * at;
            memcpy(entry, &code, 8);
            memcpy(entry + 8, &tagged, 4);
            memcpy(entry + 12, &mmer, 4);
        }
    }
    /* stretches of filled entries, from an empty one round the ring */
    uint32_t first = 0, there, longest = 0, run = 0;
    for (; first < cap_mask; first++) {
        memcpy(&there, mtable + (size_t)SM_KS_GPU_ENTRY * first + 8, 4);
        if (there == SM_KS_GPU_EMPTY) break;
    }
    for (uint32_t i = 1; i <= cap_mask + 1; i++) {
        memcpy(&there, mtable + (size_t)SM_KS_GPU_ENTRY * ((first + i) & cap_mask) + 8, 4);
        run = there == SM_KS_GPU_EMPTY ? 0 : run + 1;
        longest = run > longest ? run : longest;
    }
    return longest;
}

#endif /* SM_KMER_GPU_H */
