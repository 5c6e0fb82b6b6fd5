/* K-mer table, hash layout ("KMH1", SM_KT_DIRECT_MAX_K < k <= SM_KT_MAX_K):
 * build, validation and scan.
 *
 * A k-mer is its 2-bit code (64 bits hold k <= 32). The distinct codes sit in
 * an open-addressing table (power-of-two entries, load <= 1/2, linear
 * probing, home entry by multiply-shift), each with its slot, the slot's
 * outputs listed as in the direct layout. In front of the table a filter
 * bitmap (about 16 bits per key up to 1 MiB, held at 1 MiB down to 8, then
 * about 8 bits per key up to 4 MiB; see sm_kh_build) holds two bits per key in one
 * 64-bit word chosen by another multiply-shift hash, so that most positions
 * are rejected by one cached load and only filter hits probe the table
 * (about 1-2 % false hits at 16 bits per key, 5 % at 8).
 *
 * The scan goes block by block (KH_BLK positions), behind 32 codes and break
 * bits carried from before (from the state at the start of a call):
 *   1. bytes -> 2-bit codes and a bitmap of breaking bytes (two nibble
 *      shuffles per 16 bytes, or a table);
 *   2. the filter at every position, then the passing positions with no
 *      break among their last k bytes go on the candidate list (code and
 *      position). Scalar: roll the code (code * 4 + c, one LEA), hash it,
 *      test the two bits, keep one bit per position and the code every 32
 *      positions, from which the candidates get theirs back. AVX-512 (where
 *      the CPU has it): 8 positions per step, codes put together by a byte
 *      permute, the filter words gathered, candidates packed by compress;
 *   3. the candidates probe the table in text order, prefetched some
 *      candidates ahead; the home entry settles most without a branch; the
 *      found slots are counted (per slot or per pattern) or reported after
 *      the block's probes, so that a counter's miss overlaps them.
 */
#include <stdlib.h>

#include "engines/kmer/kmer_private.h"

#define KH_HASH_MUL 0x9e3779b97f4a7c15ull
#define KH_FILTER_MUL 0xd6e8feb86659fd93ull

/* ------------------------------------------------------------- build */

typedef struct {
    uint64_t code;
    uint32_t output;
    uint32_t pad;
} kh_pair;

static int compare_output(const void *pa, const void *pb) {
    uint32_t a = ((const kh_pair *)pa)->output, b = ((const kh_pair *)pb)->output;
    return a < b ? -1 : a > b;
}

/* Sorts by (code, output): a stable LSD radix sort on the code's 2k bits,
   then each run of equal codes by output. Returns the sorted array (a or
   tmp), or NULL when out of memory. */
static kh_pair *sort_pairs(kh_pair *a, kh_pair *tmp, size_t n, uint32_t k) {
    enum { DIGIT = 11 };
    size_t *cnt = malloc(sizeof(size_t) << DIGIT);
    kh_pair *src = a, *dst = tmp;
    if (!cnt) return NULL;
    for (uint32_t shift = 0; shift < 2 * k; shift += DIGIT) {
        memset(cnt, 0, sizeof(size_t) << DIGIT);
        for (size_t i = 0; i < n; i++) cnt[(src[i].code >> shift) & ((1u << DIGIT) - 1)]++;
        size_t sum = 0;
        for (size_t d = 0; d < (1u << DIGIT); d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i].code >> shift) & ((1u << DIGIT) - 1)]++] = src[i];
        kh_pair *t = src;
        src = dst;
        dst = t;
    }
    free(cnt);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && src[j].code == src[i].code) j++;
        if (j - i > 16) {
            qsort(src + i, j - i, sizeof *src, compare_output);
        } else {
            for (size_t x = i + 1; x < j; x++) {
                kh_pair p = src[x];
                size_t y = x;
                while (y > i && src[y - 1].output > p.output) {
                    src[y] = src[y - 1];
                    y--;
                }
                src[y] = p;
            }
        }
        i = j;
    }
    return src;
}

int sm_kh_build(const sm_ac_key *keys, size_t nkeys, const uint8_t fold[256], uint64_t max_bytes,
                const sm_kt_tuning *tuning, sm_buf *section,
                sm_error *err) {
    uint8_t symbol[4] = {0};
    unsigned nsym = sm_kt_key_symbols(keys, nkeys, symbol);
    if (!nsym || keys[0].len <= SM_KT_DIRECT_MAX_K)
        return sm_set_error(err, SM_ERR_INVALID, "k-mer hash table: keys must share one length of %d..%d",
                            SM_KT_DIRECT_MAX_K + 1, SM_KT_MAX_K);
    uint32_t k = keys[0].len;
    uint8_t code_of_symbol[256];
    memset(code_of_symbol, SM_KT_BREAK, sizeof code_of_symbol);
    for (unsigned c = 0; c < nsym; c++) code_of_symbol[symbol[c]] = (uint8_t)c;

    kh_pair *pairs = malloc(nkeys * sizeof *pairs), *tmp = malloc(nkeys * sizeof *tmp);
    if (!pairs || !tmp) {
        free(pairs);
        free(tmp);
        return sm_set_error(err, SM_ERR_NOMEM, "k-mer table: out of memory for %zu keys", nkeys);
    }
    for (size_t i = 0; i < nkeys; i++) {
        uint64_t code = 0;
        for (uint32_t j = 0; j < k; j++) code = code << 2 | code_of_symbol[keys[i].seq[j]];
        pairs[i].code = code;
        pairs[i].output = keys[i].output;
        pairs[i].pad = 0;
    }
    kh_pair *sorted = sort_pairs(pairs, tmp, nkeys, k);
    if (!sorted) {
        free(pairs);
        free(tmp);
        return sm_set_error(err, SM_ERR_NOMEM, "k-mer table: out of memory for %zu keys", nkeys);
    }
    size_t npairs = 0, slots = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (npairs && sorted[npairs - 1].code == sorted[i].code && sorted[npairs - 1].output == sorted[i].output)
            continue;
        if (!npairs || sorted[npairs - 1].code != sorted[i].code) slots++;
        sorted[npairs++] = sorted[i];
    }

    uint32_t cap_log2 = sm_log2_ceil(2 * (uint64_t)slots);
    if (cap_log2 < 1) cap_log2 = 1;
    /* Filter words (a power of two): about 16 bits per key up to 2 MiB, then
       2 MiB down to 8 bits per key, then about 8 bits per key up to 4 MiB.
       Past the L2 cache a larger filter costs every position a slower load
       but spares false hits a probe of the table in DRAM; 2 MiB measured
       best at 10^6 31-mers (bench/results/history.md). */
    const uint64_t plateau = 1u << 18;
    uint64_t fwords = ((uint64_t)slots + 3) / 4;
    if (fwords > plateau) fwords = ((uint64_t)slots + 7) / 8 > plateau ? ((uint64_t)slots + 7) / 8 : plateau;
    uint32_t filter_log2 = sm_log2_ceil(fwords);
    if (filter_log2 < SM_KH_FILTER_MIN_LOG2) filter_log2 = SM_KH_FILTER_MIN_LOG2;
    if (filter_log2 > SM_KH_FILTER_MAX_LOG2) filter_log2 = SM_KH_FILTER_MAX_LOG2;
    if (tuning && tuning->filter_log2 >= SM_KH_FILTER_MIN_LOG2 && tuning->filter_log2 <= SM_KH_FILTER_MAX_LOG2)
        filter_log2 = tuning->filter_log2;
    sm_kh_layout l = sm_kh_layout_for(filter_log2, cap_log2, slots, npairs);
    if ((max_bytes && l.size > max_bytes) || npairs > UINT32_MAX) {
        free(pairs);
        free(tmp);
        return sm_set_error(err, SM_ERR_LIMIT,
                            "k-mer table: needs %llu bytes (k = %u, %zu distinct keys), limit is %llu",
                            (unsigned long long)l.size, k, slots, (unsigned long long)max_bytes);
    }
    if (l.size > SIZE_MAX || sm_buf_reserve(section, (size_t)l.size) != SM_OK) {
        free(pairs);
        free(tmp);
        return sm_set_error(err, SM_ERR_NOMEM, "k-mer table: out of memory for %llu bytes",
                            (unsigned long long)l.size);
    }
    uint8_t *s = section->data + section->len;
    memset(s, 0, (size_t)l.size);

    sm_kh_header h;
    memset(&h, 0, sizeof h);
    h.magic = SM_KH_MAGIC;
    h.k = k;
    h.symbols = nsym;
    h.cap_log2 = cap_log2;
    h.mask = sm_kh_mask(k);
    h.slots = slots;
    h.out_total = npairs;
    /* Multipliers shifted left by 64 - 2k: the product of the unmasked
       rolling code equals that of the k-mer (older symbols fall off the top),
       so the scan never masks; the hashes are multiply-shift over 2k bits. */
    h.hash_mul = tuning && tuning->collide ? 0 : KH_HASH_MUL << (64 - 2 * k);
    h.filter_mul = KH_FILTER_MUL << (64 - 2 * k);
    h.filter_log2 = filter_log2;
    h.filter_off = l.filter_off;
    h.table_off = l.table_off;
    h.out_index_off = l.out_index_off;
    h.out_list_off = l.out_list_off;
    memcpy(h.symbol, symbol, sizeof h.symbol);
    for (int b = 0; b < 256; b++) h.code_of[b] = code_of_symbol[fold[b]];
    h.nibble_ok = sm_kt_nibble_map(h.code_of, h.nib_lo, h.nib_hi);
    memcpy(s, &h, sizeof h);

    uint64_t *filter = (uint64_t *)(s + l.filter_off);
    sm_kh_entry *table = (sm_kh_entry *)(s + l.table_off);
    uint32_t *out_index = (uint32_t *)(s + l.out_index_off);
    uint32_t *out_list = (uint32_t *)(s + l.out_list_off);
    uint64_t cap_mask = (1ull << cap_log2) - 1;
    for (uint64_t e = 0; e <= cap_mask; e++) table[e].slot = SM_KH_EMPTY;
    uint32_t slot = 0;
    for (size_t i = 0; i < npairs; i++) {
        uint64_t code = sorted[i].code;
        if (i == 0 || sorted[i - 1].code != code) {
            uint64_t f = code * h.filter_mul;
            filter[f >> (64 - filter_log2)] |= sm_kh_filter_bits(f, filter_log2);
            uint64_t e = (code * h.hash_mul) >> (64 - cap_log2);
            while (table[e].slot != SM_KH_EMPTY) e = (e + 1) & cap_mask;
            table[e].code = code;
            table[e].slot = slot;
            out_index[slot++] = (uint32_t)i;
        }
        out_list[i] = sorted[i].output;
    }
    out_index[slots] = (uint32_t)npairs;
    free(pairs);
    free(tmp);
    section->len += (size_t)l.size;
    return SM_OK;
}

/* -------------------------------------------------------- validation */


int sm_kh_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
    const int bad = SM_ERR_FORMAT;
    if (!section || size < sizeof(sm_kh_header))
        return sm_set_error(err, bad, "k-mer section truncated (%zu bytes)", size);
    if ((uintptr_t)section % 8)
        return sm_set_error(err, SM_ERR_INVALID, "k-mer section is not 8-byte aligned in memory");
    sm_kh_header h;
    memcpy(&h, section, sizeof h);
    if (h.magic != SM_KH_MAGIC) return sm_set_error(err, bad, "k-mer section: bad magic");
    if (h.k <= SM_KT_DIRECT_MAX_K || h.k > SM_KT_MAX_K)
        return sm_set_error(err, bad, "k-mer hash section: k = %u (must be %d..%d)", h.k, SM_KT_DIRECT_MAX_K + 1,
                            SM_KT_MAX_K);
    if (h.mask != sm_kh_mask(h.k)) return sm_set_error(err, bad, "k-mer hash section: mask does not match k");
    uint64_t low = h.k == 32 ? 0 : (1ull << (64 - 2 * h.k)) - 1;
    if ((h.filter_mul & low) || (h.hash_mul & low))
        return sm_set_error(err, bad, "k-mer hash section: hash multipliers not aligned to k");
    if (h.symbols < 1 || h.symbols > 4) return sm_set_error(err, bad, "k-mer section: %u symbols", h.symbols);
    for (int b = 0; b < 256; b++)
        if (h.code_of[b] != SM_KT_BREAK && h.code_of[b] >= h.symbols)
            return sm_set_error(err, bad, "k-mer section: byte %d maps to code %u of %u", b, h.code_of[b], h.symbols);
    uint8_t lo[16], hi[16];
    uint32_t nib = sm_kt_nibble_map(h.code_of, lo, hi);
    if (h.nibble_ok != nib || (nib && (memcmp(lo, h.nib_lo, 16) || memcmp(hi, h.nib_hi, 16))))
        return sm_set_error(err, bad, "k-mer section: shuffle tables do not match the byte map");
    if (h.cap_log2 < 1 || h.cap_log2 > SM_KH_CAP_MAX_LOG2 || h.filter_log2 < SM_KH_FILTER_MIN_LOG2 ||
        h.filter_log2 > SM_KH_FILTER_MAX_LOG2)
        return sm_set_error(err, bad, "k-mer hash section: table or filter size out of range");
    uint64_t cap = 1ull << h.cap_log2;
    if (h.slots < 1 || h.slots > cap / 2 || h.slots >= SM_KH_EMPTY || h.out_total < h.slots ||
        h.out_total > UINT32_MAX)
        return sm_set_error(err, bad, "k-mer hash section: bad slot or output count");
    uint64_t fbytes = 8ull << h.filter_log2, tbytes = 16ull * cap;
    if (h.filter_off < sizeof h || h.filter_off % SM_DB_ALIGN || h.table_off % SM_DB_ALIGN ||
        h.out_index_off % SM_DB_ALIGN || h.out_list_off % SM_DB_ALIGN || !sm_fits(h.filter_off, fbytes, size) ||
        h.table_off < h.filter_off + fbytes || !sm_fits(h.table_off, tbytes, size) ||
        h.out_index_off < h.table_off + tbytes || !sm_fits(h.out_index_off, (h.slots + 1) * 4, size) ||
        h.out_list_off < h.out_index_off + (h.slots + 1) * 4 || !sm_fits(h.out_list_off, h.out_total * 4, size))
        return sm_set_error(err, bad, "k-mer section: tables out of bounds");
    if (size < sm_kh_layout_for(h.filter_log2, h.cap_log2, h.slots, h.out_total).size)
        return sm_set_error(err, bad, "k-mer section truncated (%zu bytes)", size);

    const uint64_t *filter = (const uint64_t *)(section + h.filter_off);
    const sm_kh_entry *table = (const sm_kh_entry *)(section + h.table_off);
    const uint32_t *out_index = (const uint32_t *)(section + h.out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h.out_list_off);
    if (out_index[0] != 0 || out_index[h.slots] != h.out_total)
        return sm_set_error(err, bad, "k-mer section: output index does not span the output list");
    for (uint64_t s = 0; s < h.slots; s++) {
        if (out_index[s] >= out_index[s + 1])
            return sm_set_error(err, bad, "k-mer section: slot %llu has no outputs", (unsigned long long)s);
        for (uint32_t i = out_index[s] + 1; i < out_index[s + 1]; i++)
            if (out_list[i - 1] >= out_list[i])
                return sm_set_error(err, bad, "k-mer section: outputs of slot %llu not ascending",
                                    (unsigned long long)s);
    }
    for (uint64_t i = 0; i < h.out_total; i++)
        if (out_list[i] >= n_outputs)
            return sm_set_error(err, bad, "k-mer section: output id %u out of range (%u outputs)", out_list[i],
                                n_outputs);

    /* Every slot in exactly one entry, every code found by its probe and in
       the filter, free entries zero. */
    uint8_t *seen = calloc((size_t)(h.slots + 7) / 8, 1);
    if (!seen) return sm_set_error(err, SM_ERR_NOMEM, "k-mer section: out of memory validating");
    uint64_t cap_mask = cap - 1, used = 0;
    int rc = SM_OK;
    for (uint64_t e = 0; e < cap && rc == SM_OK; e++) {
        const sm_kh_entry *x = &table[e];
        if (x->slot == SM_KH_EMPTY) {
            if (x->code != 0 || x->pad != 0) rc = sm_set_error(err, bad, "k-mer hash section: dirty free entry");
            continue;
        }
        if (x->slot >= h.slots || x->pad != 0 || (x->code & ~h.mask) != 0 || (seen[x->slot / 8] >> (x->slot % 8)) & 1) {
            rc = sm_set_error(err, bad, "k-mer hash section: bad entry %llu", (unsigned long long)e);
            break;
        }
        seen[x->slot / 8] |= (uint8_t)(1u << (x->slot % 8));
        used++;
        uint64_t f = x->code * h.filter_mul;
        uint64_t want = sm_kh_filter_bits(f, h.filter_log2);
        if ((filter[f >> (64 - h.filter_log2)] & want) != want) {
            rc = sm_set_error(err, bad, "k-mer hash section: key of entry %llu not in the filter",
                              (unsigned long long)e);
            break;
        }
        uint64_t p = (x->code * h.hash_mul) >> (64 - h.cap_log2);
        for (uint64_t steps = 0;; steps++, p = (p + 1) & cap_mask) {
            if (p == e) break;
            if (table[p].slot == SM_KH_EMPTY || table[p].code == x->code || steps > cap) {
                rc = sm_set_error(err, bad, "k-mer hash section: entry %llu not reached by its probe",
                                  (unsigned long long)e);
                break;
            }
        }
    }
    free(seen);
    if (rc == SM_OK && used != h.slots)
        rc = sm_set_error(err, bad, "k-mer hash section: %llu entries for %llu slots", (unsigned long long)used,
                          (unsigned long long)h.slots);
    return rc;
}

size_t sm_kh_slots(const uint8_t *section) { return (size_t)((const sm_kh_header *)section)->slots; }

void sm_kh_fold_visits(const uint8_t *section, uint32_t *visits, uint64_t *counts) {
    const sm_kh_header *h = (const sm_kh_header *)section;
    const uint32_t *out_index = (const uint32_t *)(section + h->out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h->out_list_off);
    for (uint64_t s = 0; s < h->slots; s++) {
        uint32_t n = visits[s];
        if (!n) continue;
        visits[s] = 0;
        for (uint32_t i = out_index[s]; i < out_index[s + 1]; i++) counts[out_list[i] >> 1] += n;
    }
}

/* -------------------------------------------------------------- scan */

#define KH_BLK 4096u /* positions per block, a multiple of 64 */
#define KH_PAD 32u   /* codes kept before a block */
#define KH_PREFETCH 16u

typedef struct {
    const uint64_t *filter;
    const sm_kh_entry *table;
    const uint32_t *out_index, *out_list;
    const uint8_t *code_of;
    uint64_t mask, filter_mul, hash_mul, cap_mask;
    uint32_t k, fshift, b1, b2, hshift;
} kh_view;

typedef struct {
    uint8_t cb[KH_PAD + KH_BLK];                /* cb[KH_PAD + i]: code 0..3 of block byte i */
    uint64_t brk[(KH_PAD + KH_BLK) / 64 + 2];   /* bit KH_PAD + i: block byte i breaks */
    uint64_t pass[KH_BLK / 64];                 /* scalar pass 2: bit t of word w, position 64w + t passed */
    uint64_t snap[KH_BLK / 32 + 2];             /* scalar pass 2: snap[i], the code before position 32i */
    /* Candidates: codes (k symbols) and block positions of the positions
       that passed the filter with no break among their last k bytes (the
       AVX-512 pass may write 8 entries past the last). */
    uint64_t cand[KH_BLK + 8];
    uint16_t at[KH_BLK + 8];
    uint32_t found[KH_BLK];                     /* pass 3: slots of the found candidates */
    _Alignas(64) uint8_t c4[64 + KH_BLK];       /* AVX-512 pass: c4[64 + i], 4-symbol code ending at i */
} kh_block;

#define KH_INLINE static inline __attribute__((always_inline))

/* (hi, lo) << by as one 128-bit value, 0 < by < 64. */
KH_INLINE void kh_shl128(uint64_t *hi, uint64_t *lo, uint32_t by) {
    *hi = *hi << by | *lo >> (64 - by);
    *lo <<= by;
}

/* Bits t = 0..63: 1 when no byte breaks among the k bytes ending at block
   position base + t (base a multiple of 64; k <= 32 reaches into the pad). */
KH_INLINE uint64_t kh_whole64(const kh_block *b, uint32_t base, uint32_t k) {
    /* (hi, lo): break bits of positions base - 32 .. base + 95. A break at x
       spoils x .. x + k - 1: smear by doubling up to the largest power of
       two p <= k, then once more by k - p (the two spans overlap). */
    uint64_t lo = b->brk[base >> 6], hi = b->brk[(base >> 6) + 1];
    uint32_t p = 1;
    for (; 2 * p <= k; p *= 2) {
        uint64_t sh = hi, sl = lo;
        kh_shl128(&sh, &sl, p);
        hi |= sh;
        lo |= sl;
    }
    if (k > p) {
        uint64_t sh = hi, sl = lo;
        kh_shl128(&sh, &sl, k - p);
        hi |= sh;
        lo |= sl;
    }
    /* position base + t is bit 32 + t */
    return ~(lo >> 32 | hi << 32);
}

/* The code of the k-mer ending at block position p from the snapshots. */
KH_INLINE uint64_t kh_code_at(const kh_block *b, uint32_t p, uint64_t mask) {
    uint32_t i = p >> 5, r = p & 31;
    uint64_t code = r == 31 ? b->snap[i + 1] : b->snap[i] << (2 * r + 2) | b->snap[i + 1] >> (62 - 2 * r);
    return code & mask;
}

/* Pass 2 over block positions [0, n): roll the code (code * 4 + c, one LEA;
   older symbols stay above 2k bits, the multipliers drop them), hash it,
   test the two filter bits, and keep one bit per position, with no store
   per position; the code is kept every 32 positions (snapshots), from which
   the few passing positions get theirs back. Then the passing positions
   with no break among their last k bytes go on the candidate list. */
KH_INLINE uint32_t kh_filter_pass(const kh_view *v, kh_block *b, uint32_t n) {
    const uint8_t *cb = b->cb + KH_PAD;
    const uint64_t *filter = v->filter;
    const uint64_t fmul = v->filter_mul;
    const uint32_t fshift = v->fshift, b1 = v->b1, b2 = v->b2;
    uint64_t code = 0;
    for (uint32_t j = 0; j < KH_PAD; j++) code = code * 4 + b->cb[j];
    b->snap[0] = code;
    for (uint32_t w = 0; w * 64 < n; w++) {
        uint64_t bits = 0;
        for (uint32_t half = 0; half < 2; half++) {
            const uint8_t *c = cb + 64 * w + 32 * half;
#pragma GCC unroll 8
            for (uint32_t t = 0; t < 32; t++) {
                code = code * 4 + c[t];
                uint64_t f = code * fmul;
                uint64_t x = filter[f >> fshift];
                bits |= ((x >> ((f >> b1) & 63)) & (x >> ((f >> b2) & 63)) & 1) << (32 * half + t);
            }
            b->snap[2 * w + half + 1] = code;
        }
        b->pass[w] = bits;
    }
    uint32_t nc = 0;
    for (uint32_t w = 0; w * 64 < n; w++) {
        uint64_t x = b->pass[w] & kh_whole64(b, 64 * w, v->k);
        if (n - 64 * w < 64) x &= (1ull << (n - 64 * w)) - 1;
        while (x) {
            uint32_t p = 64 * w + (uint32_t)__builtin_ctzll(x);
            x &= x - 1;
            b->cand[nc] = kh_code_at(b, p, v->mask);
            b->at[nc++] = (uint16_t)p;
        }
    }
    return nc;
}

/* Pass 1: codes and break bits of text[0, n) behind the pad. */
KH_INLINE void kh_codes(const kh_view *v, kh_block *b, const uint8_t *text, uint32_t n) {
    const uint8_t *code_of = v->code_of;
    for (uint32_t w = KH_PAD / 64; w * 64 < KH_PAD + n; w++) {
        uint32_t lo = w * 64 < KH_PAD ? KH_PAD : w * 64, hi = w * 64 + 64 < KH_PAD + n ? w * 64 + 64 : KH_PAD + n;
        uint64_t bits = w * 64 < KH_PAD ? b->brk[w] & ((1ull << KH_PAD) - 1) : 0;
        for (uint32_t i = lo; i < hi; i++) {
            uint32_t c = code_of[text[i - KH_PAD]];
            b->cb[i] = (uint8_t)(c & 3);
            bits |= (uint64_t)(c >> 7) << (i & 63);
        }
        b->brk[w] = bits;
    }
}

#if defined(__x86_64__)
#include <immintrin.h>
/* Pass 1 with two nibble shuffles per 16 bytes (when the byte map allows). */
__attribute__((target("ssse3"), noinline)) static void kh_codes_ssse3(const sm_kh_header *h, kh_block *b,
                                                             const uint8_t *text, uint32_t n) {
    const __m128i lo = _mm_loadu_si128((const __m128i *)h->nib_lo);
    const __m128i hi = _mm_loadu_si128((const __m128i *)h->nib_hi);
    const __m128i to_code = _mm_setr_epi8(0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0);
    const __m128i nib = _mm_set1_epi8(15), zero = _mm_setzero_si128();
    b->brk[0] &= (1ull << KH_PAD) - 1;
    for (uint32_t w = 1; w <= (KH_PAD + n) / 64; w++) b->brk[w] = 0;
    for (uint32_t i = 0; i < n; i += 16) {
        __m128i x;
        if (i + 16 <= n) {
            x = _mm_loadu_si128((const __m128i *)(text + i));
        } else {
            uint8_t tmp[16] = {0};
            memcpy(tmp, text + i, n - i);
            x = _mm_loadu_si128((const __m128i *)tmp);
        }
        __m128i bits = _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(x, nib)),
                                     _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(x, 4), nib)));
        _mm_storeu_si128((__m128i *)(b->cb + KH_PAD + i), _mm_shuffle_epi8(to_code, bits));
        uint64_t breaks = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bits, zero));
        b->brk[(KH_PAD + i) >> 6] |= breaks << ((KH_PAD + i) & 63);
    }
}

/* Pass 2 with AVX-512, 64 positions a step: the 4-symbol code ending at each
   position (c4, one byte, from four shifted loads of the codes), then for 8
   positions at a time the 32-symbol codes put together from 8 of those bytes
   4 positions apart by one two-source byte permute, the filter hash by a
   64-bit multiply, the filter words by one gather and both bits tested in
   the lanes; the codes (masked to k symbols) and positions that pass, with
   no break among their last k bytes, are packed onto the candidate list. Same
   hash and bits as the scalar pass. Returns the list's length. */
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx512vbmi2,popcnt"), noinline)) static uint32_t
kh_filter_pass512(const kh_view *v, kh_block *b, uint32_t n) {
    const uint8_t *cb = b->cb + KH_PAD; /* cb[i]: code of block position i >= -KH_PAD */
    uint8_t *c4 = b->c4 + 64;           /* c4[i], i >= -29 filled; older ones unused */
    for (int i = -64; i < -29; i++) c4[i] = 0;
    for (int i = -29; i < 0; i++) c4[i] = (uint8_t)(cb[i - 3] << 6 | cb[i - 2] << 4 | cb[i - 1] << 2 | cb[i]);
    /* Lane j of output q is position 8q + j of the step; its byte m is the
       c4 of 4m positions before: index 64 + 8q + j - 4m into (previous 64
       c4, these 64). */
    __m512i perm[8];
    for (int q = 0; q < 8; q++) {
        _Alignas(64) uint8_t idx[64];
        for (int j = 0; j < 8; j++)
            for (int m = 0; m < 8; m++) idx[8 * j + m] = (uint8_t)(64 + 8 * q + j - 4 * m);
        perm[q] = _mm512_load_si512((const void *)idx);
    }
    const __m512i fmul = _mm512_set1_epi64((long long)v->filter_mul), low6 = _mm512_set1_epi64(63);
    const __m512i one = _mm512_set1_epi64(1), kmask = _mm512_set1_epi64((long long)v->mask);
    const __m128i fshift = _mm_cvtsi32_si128((int)v->fshift), b1 = _mm_cvtsi32_si128((int)v->b1),
                  b2 = _mm_cvtsi32_si128((int)v->b2);
    const __m128i lane_pos = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
    const long long *filter = (const long long *)v->filter;
    uint64_t *cand = b->cand;
    uint16_t *at = b->at;
    uint32_t nc = 0;
    for (uint32_t base = 0; base < n; base += 64) {
        __m512i x0 = _mm512_loadu_si512((const void *)(cb + base));
        __m512i x1 = _mm512_loadu_si512((const void *)(cb + base - 1));
        __m512i x2 = _mm512_loadu_si512((const void *)(cb + base - 2));
        __m512i x3 = _mm512_loadu_si512((const void *)(cb + base - 3));
        /* codes are 0..3, so 16-bit shifts never carry into the next byte */
        __m512i c2 = _mm512_or_si512(_mm512_slli_epi16(x1, 2), x0);
        __m512i c2_back = _mm512_or_si512(_mm512_slli_epi16(x3, 2), x2);
        __m512i now = _mm512_or_si512(_mm512_slli_epi16(c2_back, 4), c2);
        _mm512_store_si512((void *)(c4 + base), now);
        __m512i before = _mm512_loadu_si512((const void *)(c4 + (int)base - 64));
        uint32_t left = n - base;
        uint64_t whole = kh_whole64(b, base, v->k);
        if (left < 64) whole &= (1ull << left) - 1;
        for (uint32_t q = 0; q < 8 && 8 * q < left; q++) {
            __m512i codes = _mm512_permutex2var_epi8(before, perm[q], now);
            __m512i f = _mm512_mullo_epi64(codes, fmul);
            __m512i w = _mm512_i64gather_epi64(_mm512_srl_epi64(f, fshift), filter, 8);
            __m512i s1 = _mm512_and_si512(_mm512_srl_epi64(f, b1), low6);
            __m512i s2 = _mm512_and_si512(_mm512_srl_epi64(f, b2), low6);
            __m512i t = _mm512_and_si512(_mm512_srlv_epi64(w, s1), _mm512_srlv_epi64(w, s2));
            __mmask8 ok = _mm512_mask_test_epi64_mask((__mmask8)(whole >> (8 * q)), t, one);
            _mm512_storeu_si512((void *)(cand + nc), _mm512_maskz_compress_epi64(ok, _mm512_and_si512(codes, kmask)));
            __m128i pos = _mm_add_epi16(lane_pos, _mm_set1_epi16((short)(base + 8 * q)));
            _mm_storeu_si128((__m128i *)(at + nc), _mm_maskz_compress_epi16(ok, pos));
            nc += (uint32_t)__builtin_popcount(ok);
        }
    }
    return nc;
}
#endif

KH_INLINE uint64_t kh_home(const kh_view *v, uint64_t code) { return (code * v->hash_mul) >> v->hshift; }

/* The slot of the k-mer code (masked), or SM_KH_EMPTY. */
KH_INLINE uint32_t kh_find(const kh_view *v, uint64_t code) {
    uint64_t e = kh_home(v, code);
    for (;;) {
        const sm_kh_entry *x = &v->table[e];
        if (x->slot == SM_KH_EMPTY) return SM_KH_EMPTY;
        if (x->code == code) return x->slot;
        e = (e + 1) & v->cap_mask;
    }
}

/* Pass 3: probes the nc candidates in text order, prefetching a few ahead.
   The first block position ends at absolute position end0. */
static void kh_probe_pass(const kh_view *v, kh_block *b, uint32_t n, uint32_t m, uint64_t end0, sm_sink *sink) {
    const uint32_t k = v->k;
    int mode = 0; /* 0: through the sink; 1: per pattern; 2: per distinct k-mer */
    if (sink->counts && end0 + n - 1 >= k) {
        uint64_t lo = end0 >= k ? end0 - k : 0, hi = end0 + n - 1 - k;
        if (lo >= sink->own_lo && hi < sink->own_hi) mode = sink->visits ? 2 : 1;
    }
    const uint64_t *cand = b->cand;
    uint16_t *at = b->at;
    /* Probe with the table prefetched a few candidates ahead; keep the
       found slots (and where), prefetching each one's counter, and only
       then count or report: a counter's miss then overlaps the probes. */
    uint32_t *found = b->found, nf = 0;
    for (uint32_t j = 0; j < m && j < KH_PREFETCH; j++) __builtin_prefetch(&v->table[kh_home(v, cand[j])]);
    for (uint32_t j = 0; j < m; j++) {
        if (j + KH_PREFETCH < m) __builtin_prefetch(&v->table[kh_home(v, cand[j + KH_PREFETCH])]);
        /* The home entry settles most candidates (the key, or empty):
           no branch on which, only on neither. */
        uint64_t e = kh_home(v, cand[j]);
        const sm_kh_entry *x = &v->table[e];
        uint32_t s = x->slot;
        uint32_t hit = (uint32_t)(x->code == cand[j]) & (uint32_t)(s != SM_KH_EMPTY);
        if (__builtin_expect(!hit & (s != SM_KH_EMPTY), 0)) {
            s = kh_find(v, cand[j]);
            hit = s != SM_KH_EMPTY;
        }
        if (mode == 2) __builtin_prefetch(&sink->visits[hit ? s : 0], 1);
        found[nf] = s;
        at[nf] = at[j];
        nf += hit;
    }
    if (mode == 2) {
        for (uint32_t j = 0; j < nf; j++) sink->visits[found[j]]++;
    } else if (mode == 1) {
        for (uint32_t j = 0; j < nf; j++)
            for (uint32_t o = v->out_index[found[j]]; o < v->out_index[found[j] + 1]; o++)
                sink->counts[v->out_list[o] >> 1]++;
    } else {
        for (uint32_t j = 0; j < nf; j++) {
            uint64_t end = end0 + at[j];
            for (uint32_t o = v->out_index[found[j]]; o < v->out_index[found[j] + 1]; o++) {
                uint32_t id = v->out_list[o];
                sm_sink_add(sink, end - k, end, id >> 1, (int)(id & 1), 0);
            }
        }
    }
}

KH_INLINE void kh_scan_body(const sm_kh_header *h, const kh_view *v, kh_block *b, uint64_t *state,
                            const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink, const int nibbles,
                            const int wide) {
    (void)h;
    (void)wide;
    /* The 32 symbols of the state, oldest first; those before the last
       state[1] valid ones break. */
    b->brk[0] = 0;
    for (uint32_t j = 0; j < KH_PAD; j++) {
        b->cb[KH_PAD - 1 - j] = (uint8_t)((state[0] >> (2 * j)) & 3);
        if (j >= state[1]) b->brk[0] |= 1ull << (KH_PAD - 1 - j);
    }
    for (size_t off = 0; off < len; off += KH_BLK) {
        uint32_t n = (uint32_t)(len - off < KH_BLK ? len - off : KH_BLK);
#if defined(__x86_64__)
        if (nibbles)
            kh_codes_ssse3(h, b, text + off, n);
        else
#endif
            kh_codes(v, b, text + off, n);
        /* Codes past the end up to a whole word: pass 2 rolls over them
           (and drops what they give); a byte other than 0..3 would carry
           into the snapshot's older symbols. */
        if (n & 63) memset(b->cb + KH_PAD + n, 0, 64 - (n & 63));
        uint32_t nc;
#if defined(__x86_64__)
        if (wide)
            nc = kh_filter_pass512(v, b, n);
        else
#endif
            nc = kh_filter_pass(v, b, n);
        kh_probe_pass(v, b, n, nc, pos0 + off + 1, sink);
        /* keep the last KH_PAD codes and break bits */
        memmove(b->cb, b->cb + n, KH_PAD);
        uint32_t w = n >> 6, sh = n & 63;
        uint64_t x = b->brk[w] >> sh;
        if (sh) x |= b->brk[w + 1] << (64 - sh);
        b->brk[0] = x & ((1ull << KH_PAD) - 1);
    }
    uint64_t code = 0, valid = 0;
    for (uint32_t j = 0; j < KH_PAD; j++) {
        code = code << 2 | b->cb[j];
        valid = (b->brk[0] >> j) & 1 ? 0 : valid < v->k ? valid + 1 : valid;
    }
    state[0] = code;
    state[1] = valid;
}

#if defined(__x86_64__)
/* With BMI2 the variable shifts need no CL register. */
__attribute__((target("ssse3,bmi2,bmi"))) static void kh_scan_fast(const sm_kh_header *h, const kh_view *v,
                                                                     kh_block *b, uint64_t *state,
                                                                     const uint8_t *text, size_t len, uint64_t pos0,
                                                                     sm_sink *sink, int wide) {
    if (h->nibble_ok)
        kh_scan_body(h, v, b, state, text, len, pos0, sink, 1, wide);
    else
        kh_scan_body(h, v, b, state, text, len, pos0, sink, 0, wide);
}
#endif

static void kh_scan_plain(const sm_kh_header *h, const kh_view *v, kh_block *b, uint64_t *state,
                          const uint8_t *text, size_t len, uint64_t pos0, sm_sink *sink) {
    kh_scan_body(h, v, b, state, text, len, pos0, sink, 0, 0);
}

void sm_kh_scan(const uint8_t *section, const sm_kt_variant *var, uint64_t *state, const uint8_t *text, size_t len,
                uint64_t pos0, sm_sink *sink) {
    const sm_kh_header *h = (const sm_kh_header *)section;
    kh_view v;
    v.filter = (const uint64_t *)(section + h->filter_off);
    v.table = (const sm_kh_entry *)(section + h->table_off);
    v.out_index = (const uint32_t *)(section + h->out_index_off);
    v.out_list = (const uint32_t *)(section + h->out_list_off);
    v.code_of = h->code_of;
    v.mask = h->mask;
    v.filter_mul = h->filter_mul;
    v.hash_mul = h->hash_mul;
    v.cap_mask = (1ull << h->cap_log2) - 1;
    v.k = h->k;
    v.fshift = 64 - h->filter_log2;
    v.b1 = 58 - h->filter_log2;
    v.b2 = 52 - h->filter_log2;
    v.hshift = 64 - h->cap_log2;
    if (state[1] > v.k) state[1] = v.k;
    if (len == 0) return;
    kh_block block; /* about 66 KiB */
#if defined(__x86_64__)
    if (var->hash_fast) {
        kh_scan_fast(h, &v, &block, state, text, len, pos0, sink, var->hash_wide);
        return;
    }
#endif
    kh_scan_plain(h, &v, &block, state, text, len, pos0, sink);
}
