/* What a GPU kernel needs to know of an exact engine's section: its
 * parameters and where its tables lie (byte offsets from the section start).
 * The section itself goes to the device as it is; the kernels read it at
 * these offsets. Each exact engine fills its view through the gpu_view
 * operation of its engine table (src/engines/engine.h).
 *
 * Plain C types only: this header is read by the engines (C), the CUDA
 * runner's host side (C), the kernels (CUDA C++) and the CPU stand-in for
 * the kernels (tests/emulated, C).
 */
#ifndef SM_GPU_VIEW_H
#define SM_GPU_VIEW_H

#include <stdint.h>
#ifndef __CUDACC__
#include <stdio.h>

/* Sizes for the engines' GPU descriptions (gpu_describe): "8 KiB", "2.0 MiB". */
static inline void sm_gpu_size_text(uint64_t bytes, char *buf, size_t size) {
    if (bytes < (1u << 20)) snprintf(buf, size, "%llu KiB", (unsigned long long)((bytes + 1023) / 1024));
    else snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
}
#endif

/* The section kinds of engine.h (SM_SECTION_*, part of the file format) for
   the code that reads this header alone; cuda_backend.c checks they agree. */
#define SM_GPU_KIND_AUTOMATON 1u
#define SM_GPU_KIND_SHIFTAND 2u
#define SM_GPU_KIND_KMER 6u
#define SM_GPU_KIND_WUMANBER 8u

/* Automaton: a complete DFA; delta entries are target * columns with
   SM_GPU_DFA_FLAG set when the target has outputs. */
#define SM_GPU_DFA_FLAG 0x80000000u
typedef struct {
    uint32_t states, columns;
    uint64_t delta_off;      /* uint32[states * columns] */
    uint64_t out_index_off;  /* uint32[states + 1] */
    uint64_t out_list_off;   /* uint32[]: output ids (pattern * 2 + reverse) */
    uint64_t class_of_off;   /* uint16[256]: text byte -> column */
} sm_gpu_automaton;

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

/* Wu-Manber: a window of `shortest` bytes; its last `block` bytes, through
   code[] (bits each), index shift[] (directly, or by the multiplicative
   hash of the section); a zero shift lists the entries of bucket
   [bucket[slot], bucket[slot + 1]), each compared byte by byte through
   fold[] with the window's start. */
typedef struct {
    uint32_t block, bits, hash_bits, direct;
    uint32_t shortest, longest, prefix, pad;
    uint64_t nkeys;
    uint64_t shift_off;      /* uint8[1 << hash_bits] */
    uint64_t bucket_off;     /* uint32[(1 << hash_bits) + 1] */
    uint64_t entry_off;      /* {uint32 prefix, len, output, key_off}[nkeys] */
    uint64_t keys_off;       /* key bytes */
    uint64_t code_off;       /* uint8[256] */
    uint64_t fold_off;       /* uint8[256] */
} sm_gpu_wumanber;

/* Shift-And (shiftand.h has the two layouts): dense, one 64-bit word;
   levels, level j of group g in word j * group_words + g of a mask row. */
typedef struct {
    uint32_t levels_layout;  /* 0 dense, 1 levels */
    uint32_t rows, row_stride, group_words;
    uint32_t final_count, levels, first_final, pad;
    uint64_t masks_off;      /* uint64[rows * row_stride], row 0 all zero */
    uint64_t starts_off;     /* dense: uint64 */
    uint64_t finals_off;     /* uint64[row_stride] */
    uint64_t final_base_off; /* dense: uint32 */
    uint64_t out_index_off, out_list_off;
    uint64_t class_of_off;   /* uint16[256]: byte -> mask row */
} sm_gpu_shiftand;

typedef struct {
    uint32_t kind;           /* SM_SECTION_* of the engine */
    uint32_t pad;
    union {
        sm_gpu_automaton automaton;
        sm_gpu_kmer kmer;
        sm_gpu_wumanber wumanber;
        sm_gpu_shiftand shiftand;
    } u;
} sm_gpu_view;

#endif /* SM_GPU_VIEW_H */
