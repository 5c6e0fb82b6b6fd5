/* Helpers shared by the approximate engines: key normalisation, text
 * classes, error messages and section bounds checks. */
#ifndef SM_APPROX_COMMON_H
#define SM_APPROX_COMMON_H

#include "engines/approx/approx.h"

#if defined(__GNUC__) || defined(__clang__)
#define APX_LIKELY(x) __builtin_expect(!!(x), 1)
#define APX_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define APX_CTZ(x) ((unsigned)__builtin_ctzll(x))
#define APX_POPCOUNT(x) ((unsigned)__builtin_popcountll(x))
#else
#define APX_LIKELY(x) (x)
#define APX_UNLIKELY(x) (x)
unsigned apx_ctz_portable(uint64_t x);
unsigned apx_popcount_portable(uint64_t x);
#define APX_CTZ(x) apx_ctz_portable(x)
#define APX_POPCOUNT(x) apx_popcount_portable(x)
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define APX_HAVE_AVX2 1
#endif

#define APX_ALIGN 64u

static inline uint64_t apx_round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* A key byte in engine form: dna nucleotide set (0 when not an IUPAC
   letter), text byte folded under SM_FLAG_IGNORE_CASE. */
unsigned sm_apx_key_symbol(uint8_t byte, sm_alphabet alphabet, unsigned flags);
/* Does text class c match key symbol s? dna: c is a nucleotide set; text: a folded byte. */
int sm_apx_class_matches(unsigned c, unsigned s, sm_alphabet alphabet, unsigned flags);

/* Text byte -> row of a per-class table. dna: the 16 nucleotide sets are the
   rows (row = set). text: row 0 is every byte no key uses, then one row per
   used folded byte. row_value[r] is the class a row stands for. */
typedef struct {
    uint16_t class_of[256];
    uint32_t rows;
    uint16_t row_value[257];
    uint8_t row_never_matches[257]; /* 1 for row 0 of text, and dna sets that cannot match */
} apx_classes;

/* keys must already be checked (non-empty, valid symbols). */
void sm_apx_classes_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, apx_classes *c);

/* Checks keys: count, non-empty, dna symbols valid. Returns SM_OK or an error. */
int sm_apx_check_keys(const char *engine, const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                      sm_error *err);

/* The path a kernel family runs: AUTO becomes the best one, anything above
   the family's highest kernel becomes that one, and a path the CPU lacks
   steps down until the CPU has it (SCALAR always). */
sm_approx_path sm_apx_resolve_path(sm_approx_path path, sm_approx_path highest);

/* Is [off, off + count * elem) inside a section of size bytes, after the header, 8-aligned? */
int sm_apx_table_fits(uint64_t off, uint64_t count, uint64_t elem, uint64_t header, uint64_t size);

#endif /* SM_APPROX_COMMON_H */
