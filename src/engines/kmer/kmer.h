/* K-mer table: the engine for many exact keys of one length k <= 32 over an
 * alphabet of at most four symbols (DNA k-mers, both strands). Two layouts:
 * the direct table below for k <= SM_KT_DIRECT_MAX_K, and for longer k a
 * hash set of 64-bit codes with a filter bitmap in front (see the end).
 *
 * Each text byte maps to a 2-bit code or breaks the k-mer (any byte whose
 * folded form is not a key symbol). The code of the k-mer ending at a
 * position is the last k codes, 2 bits each; it is a hit when at least k
 * valid symbols lead up to the position and its bit is set in a 4^k-bit
 * bitmap. The slot of a code (its index among the distinct keys) is the rank
 * of its bit; a slot lists its output ids.
 *
 * Section layout (offsets from the section start, every table 64-byte
 * aligned; see kmer_private.h):
 *   sm_kt_header     k, mask, byte -> code table, table offsets
 *   bits             uint64[words]: bit c of the bitmap set when code c is a key
 *   rank             uint32[words]: set bits in the words before each word
 *   out_index        uint32[slots + 1]: outputs of slot s are out_list[out_index[s] .. out_index[s + 1])
 *   out_list         uint32[out_total]: output ids (pattern * 2 + reverse), ascending per slot
 */
#ifndef SM_KMER_H
#define SM_KMER_H

#include "base/cpu.h"
#include "base/internal.h"

/* Hash layout "KMH1" (SM_KT_DIRECT_MAX_K < k <= SM_KT_MAX_K; kmer_hash.c):
 *   sm_kh_header     k, mask, byte -> code table, hash multipliers, offsets
 *   filter           uint64[2^filter_log2]: two bits per key in one word
 *                    (about 16 bits per key, at most 4 MiB)
 *   table            {uint64 code, uint32 slot, uint32 0}[2^cap_log2]: open
 *                    addressing, linear probing, load <= 1/2, multiply-shift
 *   out_index, out_list as above (slots numbered in code order)
 * A position is first tested against the filter (one cached word); only
 * filter hits probe the table.
 */
#define SM_KT_DIRECT_MAX_K 12 /* longest k of the direct (4^k-bit) table */
#define SM_KT_CODE_VISITS_MAX_K 8 /* count mode: one visit counter per code (256 KiB) */
#define SM_KT_MAX_K 32        /* longest k of the engine (hash layout above 12) */

/* 1 when every key has the same length k (1..SM_KT_MAX_K) and all keys
   together use at most 4 distinct folded symbols (fold[] as the automaton
   gets it: dna 'a'->'A', 'u'/'U'->'T'; text identity or tolower). Keys are
   normalised already, so their bytes are the symbols; a text byte b stands
   for the symbol fold[b]. */
int sm_kt_eligible(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256]);

/* Appends the section for nkeys eligible keys to *section (whose length must
   be a multiple of 8). Identical (key, output) pairs count once. Fails with
   SM_ERR_INVALID for ineligible keys and SM_ERR_LIMIT when the section would
   exceed max_bytes (0 = no limit). */
/* Build tuning for tests: filter_log2 != 0 forces the hash layout's filter
   to 2^filter_log2 words (3..19); collide != 0 gives every key the same
   home entry. NULL: none. */
typedef struct {
    unsigned filter_log2;
    int collide;
} sm_kt_tuning;
int sm_kt_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], uint64_t max_bytes,
                const sm_kt_tuning *tuning, sm_buf *section, sm_error *err);

/* Checks a section read from outside before a scan trusts it (every table
   bound, the rank table, output ids < n_outputs). Never reads outside
   [section, section + size). */
int sm_kt_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err);

/* Words of scan state, and the state at the start of a sequence. */
size_t sm_kt_state_words(const uint8_t *section);
void sm_kt_state_reset(const uint8_t *section, uint64_t *state);

/* How a scan runs, chosen once per scan state (sm_kt_choose): the block
   loop's level (2 AVX2, 1 SSSE3, 0 plain C), how the direct table's AVX2
   loop tests its bitmap (byte loads, AVX2 gathers or AVX-512 throughout),
   and the hash layout's loop (BMI2 and SSSE3; its AVX-512 filter pass). */
enum { SM_KT_WAY_BYTES = 0, SM_KT_WAY_GATHER = 1, SM_KT_WAY_AVX512 = 2 };
typedef struct {
    int level;
    int way;
    int hash_fast, hash_wide;
} sm_kt_variant;
/* The variant for a CPU; forced_way >= 0 asks for a way (tests), stepping
   down to one the CPU runs. */
void sm_kt_choose(const sm_cpu_features *cpu, int forced_way, sm_kt_variant *var);
/* Same contract as sm_ac_scan: text[0, len) at absolute position pos0, state
   carried in and out (a k-mer may span calls); every hit (end = pos0 + i + 1,
   start = end - k) goes through sm_sink_add (ownership by start), in
   increasing end. In count mode (sink->counts != NULL) with sink->visits
   != NULL, hits known to be owned may instead add 1 to visits[slot] (to
   visits[code] for k <= SM_KT_CODE_VISITS_MAX_K), the owner later calling
   sm_kt_fold_visits. */
void sm_kt_scan(const uint8_t *section, const sm_kt_variant *var, uint64_t *state, const uint8_t *text, size_t len,
                uint64_t pos0, sm_sink *sink);
/* Number of visit counters: one per code (4^k) up to
   SM_KT_CODE_VISITS_MAX_K, else one per distinct k-mer. */
size_t sm_kt_visit_counters(const uint8_t *section);

/* counts[pattern] += visits[slot] for each output id (pattern * 2 + reverse)
   of the slot; zeroes the keys' counters (a code that is no key may hold
   anything: it is never read). */
void sm_kt_fold_visits(const uint8_t *section, uint32_t *visits, uint64_t *counts);

/* ------------------------------------------- direct tables for other engines */

/* Another engine may keep direct tables of its own inside its section (the
   pigeonhole filter's seed tables), built from codes it computed, checked by
   sm_kt_validate and read through a view. A code holds k symbols' 2-bit
   codes, the first symbol highest: a rolling code shifted left by two per
   symbol, masked to 2k bits. */

/* Appends the direct table (1 <= k <= SM_KT_DIRECT_MAX_K) of npairs pairs
   (code << 32 | output id), in any order, duplicates allowed (the array is
   sorted in place). code_of maps a text byte to its code, or 0xFF where the
   byte breaks a k-mer; symbol[0 .. symbols) is the byte of each code. */
int sm_kt_build_codes(uint64_t *pairs, size_t npairs, uint32_t k, const uint8_t code_of[256], const uint8_t *symbol,
                      unsigned symbols, uint64_t max_bytes, sm_buf *section, sm_error *err);

/* k of a direct table, 0 for anything else (the hash layout, too few bytes). */
uint32_t sm_kt_direct_k(const uint8_t *section, size_t size);

/* A direct table as a lookup reads it. */
typedef struct {
    const uint64_t *bits;      /* bit c set when code c is a key */
    const uint32_t *rank;      /* set bits in the words before each word */
    const uint32_t *out_index; /* slot s lists out_list[out_index[s] .. out_index[s + 1]) */
    const uint32_t *out_list;
    uint32_t k;
    uint32_t slots;            /* distinct keys: out_list has out_index[slots] ids */
} sm_kt_view;

/* The view of a validated direct table. */
void sm_kt_view_of(const uint8_t *section, sm_kt_view *v);

/* Is code a key? */
static inline int sm_kt_has(const sm_kt_view *v, uint64_t code) { return (int)((v->bits[code >> 6] >> (code & 63)) & 1u); }

/* The slot of a key's code: the rank of its bit. */
static inline uint32_t sm_kt_slot(const sm_kt_view *v, uint64_t code) {
    uint64_t below = v->bits[code >> 6] & ((1ull << (code & 63)) - 1);
    return v->rank[code >> 6] + (uint32_t)__builtin_popcountll(below);
}

/* The output ids of a key's code: *ids[0 .. returned count). */
static inline uint32_t sm_kt_outputs(const sm_kt_view *v, uint64_t code, const uint32_t **ids) {
    uint32_t s = sm_kt_slot(v, code);
    *ids = v->out_list + v->out_index[s];
    return v->out_index[s + 1] - v->out_index[s];
}

/* The positions of a text that end a key, a block at a time, found by the
   engine's own passes (codes by byte shuffles, the bitmap tested per
   position, 64 positions a step with AVX-512 where the CPU has it), for an
   engine that takes each hit itself. A block: */
typedef struct {
    size_t n;                /* positions, at most SM_KT_FIND_BLOCK */
    const uint64_t *hits;    /* bit i of hits[i / 64]: the k symbols ending at i are a key */
    const uint64_t *breaks;  /* bit i of breaks[i / 64]: byte i is no key symbol */
    const void *codes;       /* the code ending at each position, read by sm_kt_found_code */
    int narrow, perm;        /* how codes lie: 16-bit (k <= 8); in the AVX-512 order */
} sm_kt_found;
#define SM_KT_FIND_BLOCK 1024

/* The code of the k symbols ending at block position i (meaningful where
   they are all key symbols). */
static inline uint32_t sm_kt_found_code(const sm_kt_found *f, size_t i) {
    if (f->perm) return ((const uint32_t *)f->codes)[(i & ~(size_t)63) | (i & 3) << 4 | (i & 63) >> 2];
    return f->narrow ? ((const uint16_t *)f->codes)[i] : ((const uint32_t *)f->codes)[i];
}

/* Calls fn for each block of text[0, len) (block b starts at text offset
   b * SM_KT_FIND_BLOCK), from state and leaving it as sm_kt_scan does;
   section is a direct table. */
typedef void (*sm_kt_found_fn)(void *ctx, size_t offset, const sm_kt_found *found);
void sm_kt_find(const uint8_t *section, const sm_kt_variant *var, uint64_t *state, const uint8_t *text, size_t len,
                sm_kt_found_fn fn, void *ctx);

#endif /* SM_KMER_H */
