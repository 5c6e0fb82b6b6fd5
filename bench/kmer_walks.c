/* kmer_walks: how far a GPU lane walks in the table of sampled m-mers
 * (src/engines/kmer/kmer_gpu.h) at each size the device may build it, counted
 * on the host with the library's own section, table builder and hash.
 *
 * usage: kmer_walks [-s both|+] KEYS TARGET
 *
 * KEYS:   one key of 27 to 31 nt per line.
 * TARGET: a plain sequence (read whole; bytes that are no key symbol end
 *         k-mers as in a scan).
 *
 * Each lane is 16 bytes of TARGET; it looks up the m-mer that ends on the
 * byte before it and reads entries from the m-mer's home on to the next
 * empty one. One line per table size, from half full to an eighth:
 *   entries_log2=N fill=F lanes=N present=F pairs=F quads=F over_two_pairs=F longest=N
 * present: the lanes whose m-mer some key holds; pairs: the aligned pairs of
 * entries a lane reads, one after another, as the kernel does; quads: the
 * same in aligned groups of four; over_two_pairs: the lanes that read more
 * than two pairs; longest: the longest stretch of filled entries.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_input.h"
#include "seqmatch.h"
#include "base/internal.h"
#include "engines/kmer/kmer_gpu.h"
#include "engines/section_kinds.h"

static void die(const char *what, const char *why) { bench_fail("kmer_walks", what, why); }

static int entry_empty(const uint8_t *table, uint64_t e) {
    uint32_t tagged;
    memcpy(&tagged, table + (size_t)SM_KS_GPU_ENTRY * e + 8, 4);
    return tagged == SM_KS_GPU_EMPTY;
}

static int entry_holds(const uint8_t *table, uint64_t e, uint32_t mmer) {
    uint32_t there;
    memcpy(&there, table + (size_t)SM_KS_GPU_ENTRY * e + 12, 4);
    return !entry_empty(table, e) && there == mmer;
}

/* Reads in aligned groups of `group` entries from home to the first empty entry. */
static unsigned group_reads(const uint8_t *table, uint64_t cap_mask, uint64_t home, unsigned group) {
    unsigned reads = 0;
    for (uint64_t at = home;;) {
        uint64_t base = at & ~(uint64_t)(group - 1);
        reads++;
        for (uint64_t e = at; e < base + group; e++)
            if (entry_empty(table, e)) return reads;
        at = (base + group) & cap_mask;
    }
}

int main(int argc, char **argv) {
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.engine = SM_ENGINE_KMER;
    co.alphabet = SM_ALPHABET_DNA;
    co.strands = SM_STRAND_FORWARD;
    int argi = 1;
    if (argc > 2 && strcmp(argv[1], "-s") == 0) {
        co.strands = strcmp(argv[2], "+") == 0 ? SM_STRAND_FORWARD : SM_STRAND_BOTH;
        argi = 3;
    }
    if (argc - argi != 2) {
        fprintf(stderr, "usage: kmer_walks [-s both|+] KEYS TARGET\n");
        return 2;
    }
    bench_inputs in;
    bench_inputs_read("kmer_walks", argv[argi], argv[argi + 1], &in);
    sm_db *db = bench_compile("kmer_walks", &in, &co);
    uint64_t size;
    const uint8_t *section = sm_db_section_of_kind(db, SM_SECTION_KMER, &size);
    if (!section) die(argv[argi], "no k-mer section");
    sm_gpu_kmer v;
    sm_kt_gpu_view(section, &v);
    if (!v.hashed || !sm_ks_gpu_fits(v.k, v.slots)) die(argv[argi], "not a hash layout of 27- to 31-mers");
    const uint8_t *code_of = section + v.code_of_off;
    const uint32_t mmask = sm_ks_gpu_mmer_mask(v.k);
    for (uint32_t log2 = sm_ks_gpu_min_log2(v.slots); log2 <= sm_ks_gpu_cap_log2(v.slots); log2++) {
        uint8_t *table = malloc(sm_ks_gpu_table_bytes(log2));
        if (!table) die("table", "out of memory");
        memset(table, 0xff, sm_ks_gpu_table_bytes(log2));
        uint32_t longest = sm_ks_gpu_build(&v, section, table, log2);
        uint64_t cap_mask = ((uint64_t)1 << log2) - 1, lanes = 0, present = 0, pairs = 0, quads = 0, over_two = 0;
        for (size_t p = 16; p + 16 <= in.len; p += 16) {
            uint32_t mmer = 0;
            int whole = 1;
            for (size_t q = p - 16; q < p && whole; q++) {
                uint8_t c = code_of[(uint8_t)in.text[q]];
                whole = c != SM_GPU_KMER_BREAK;
                mmer = mmer << 2 | (c & 3u);
            }
            if (!whole) continue;
            mmer &= mmask;
            uint64_t home = sm_ks_gpu_home(mmer, log2);
            unsigned pair_reads = group_reads(table, cap_mask, home, 2);
            lanes++;
            pairs += pair_reads;
            over_two += pair_reads > 2;
            quads += group_reads(table, cap_mask, home, 4);
            for (uint64_t e = home; !entry_empty(table, e); e = (e + 1) & cap_mask)
                if (entry_holds(table, e, mmer)) {
                    present++;
                    break;
                }
        }
        double l = lanes ? (double)lanes : 1.0;
        printf("entries_log2=%u fill=%.3f lanes=%llu present=%.3f pairs=%.3f quads=%.3f over_two_pairs=%.3f "
               "longest=%u\n",
               log2, (double)v.slots * 16 / (double)((uint64_t)1 << log2), (unsigned long long)lanes, present / l,
               pairs / l, quads / l, over_two / l, longest);
        free(table);
    }
    sm_db_free(db);
    bench_inputs_free(&in);
    return 0;
}
