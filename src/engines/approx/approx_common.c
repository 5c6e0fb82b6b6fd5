/* Helpers shared by the approximate engines; see approx_common.h. */
#include "engines/approx/approx_common.h"

#include <stdio.h>

#if !(defined(__GNUC__) || defined(__clang__))
unsigned apx_ctz_portable(uint64_t x) {
    unsigned n = 0;
    while (!(x & 1u)) { x >>= 1; n++; }
    return n;
}
unsigned apx_popcount_portable(uint64_t x) {
    unsigned n = 0;
    while (x) { x &= x - 1; n++; }
    return n;
}
#endif

unsigned sm_apx_key_symbol(uint8_t byte, sm_alphabet alphabet, unsigned flags) {
    if (alphabet == SM_ALPHABET_DNA) return sm_nt_set[byte] & 15u;
    if ((flags & SM_FLAG_IGNORE_CASE) && byte >= 'A' && byte <= 'Z') return (unsigned)byte + ('a' - 'A');
    return byte;
}

int sm_apx_class_matches(unsigned c, unsigned s, sm_alphabet alphabet, unsigned flags) {
    if (alphabet == SM_ALPHABET_TEXT) return c == s;
    if (c == 0 || (c & s) == 0) return 0;
    /* Text IUPAC codes match only under text-iupac; A C G T always can. */
    return (flags & SM_FLAG_TEXT_IUPAC) || APX_POPCOUNT(c) == 1;
}

void sm_apx_classes_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, apx_classes *c) {
    memset(c, 0, sizeof *c);
    if (alphabet == SM_ALPHABET_DNA) {
        c->rows = 16;
        for (unsigned r = 0; r < 16; r++) {
            c->row_value[r] = (uint16_t)r;
            c->row_never_matches[r] = !sm_apx_class_matches(r, 15u, alphabet, flags);
        }
        for (unsigned b = 0; b < 256; b++) c->class_of[b] = (uint16_t)(sm_nt_set[b] & 15u);
        return;
    }
    uint8_t used[256];
    memset(used, 0, sizeof used);
    for (size_t i = 0; i < nkeys; i++)
        for (uint32_t j = 0; j < keys[i].len; j++) used[sm_apx_key_symbol(keys[i].seq[j], alphabet, flags)] = 1;
    uint16_t row_of[256];
    c->rows = 1;
    c->row_never_matches[0] = 1;
    for (unsigned v = 0; v < 256; v++) {
        row_of[v] = 0;
        if (used[v]) { c->row_value[c->rows] = (uint16_t)v; row_of[v] = (uint16_t)c->rows++; }
    }
    for (unsigned b = 0; b < 256; b++) c->class_of[b] = row_of[sm_apx_key_symbol((uint8_t)b, alphabet, flags)];
}

int sm_apx_check_keys(const char *engine, const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags,
                      sm_error *err) {
    (void)flags;
    if ((nkeys > 0 && !keys) || (alphabet != SM_ALPHABET_DNA && alphabet != SM_ALPHABET_TEXT)) {
        sm_set_error(err, SM_ERR_INVALID, "%s: invalid arguments", engine);
        return SM_ERR_INVALID;
    }
    if (nkeys == 0 || nkeys > UINT32_MAX / 4) {
        sm_set_error(err, SM_ERR_INVALID, "%s: %zu keys", engine, nkeys);
        return SM_ERR_INVALID;
    }
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len == 0 || !keys[i].seq) {
            sm_set_error(err, SM_ERR_PATTERN, "%s: key %zu is empty", engine, i);
            return SM_ERR_PATTERN;
        }
        if (alphabet != SM_ALPHABET_DNA) continue;
        for (uint32_t j = 0; j < keys[i].len; j++)
            if (sm_apx_key_symbol(keys[i].seq[j], alphabet, flags) == 0) {
                sm_set_error(err, SM_ERR_PATTERN, "%s: key %zu has a non-IUPAC byte 0x%02x at %u", engine, i,
                              (unsigned)keys[i].seq[j], (unsigned)j);
                return SM_ERR_PATTERN;
            }
    }
    return SM_OK;
}

int sm_apx_table_fits(uint64_t off, uint64_t count, uint64_t elem, uint64_t header, uint64_t size) {
    /* count * elem may overflow: compare by division */
    if (off % 8u != 0 || off < header || !sm_fits(off, 0, size)) return 0;
    return count <= (size - off) / elem;
}

int sm_approx_path_supported(sm_approx_path path) {
    switch (path) {
    case SM_APPROX_AUTO:
    case SM_APPROX_SCALAR:
        return 1;
    case SM_APPROX_AVX2:
#ifdef APX_HAVE_AVX2
        return sm_cpu()->avx2;
#else
        return 0;
#endif
    case SM_APPROX_AVX512:
#ifdef APX_HAVE_AVX2
        return sm_cpu()->avx512f && sm_cpu()->avx2;
#else
        return 0;
#endif
    }
    return 0;
}

sm_approx_path sm_approx_path_for(const sm_cpu_features *cpu) {
#ifdef APX_HAVE_AVX2
    if (cpu->avx512f && cpu->avx2) return SM_APPROX_AVX512;
    if (cpu->avx2) return SM_APPROX_AVX2;
#else
    (void)cpu;
#endif
    return SM_APPROX_SCALAR;
}

sm_approx_path sm_approx_best_path(void) {
    if (sm_approx_path_supported(SM_APPROX_AVX512)) return SM_APPROX_AVX512;
    return sm_approx_path_supported(SM_APPROX_AVX2) ? SM_APPROX_AVX2 : SM_APPROX_SCALAR;
}

sm_approx_path sm_apx_resolve_path(sm_approx_path path, sm_approx_path highest) {
    if (path == SM_APPROX_AUTO) path = sm_approx_best_path();
    if (path > highest) path = highest;
    while (path > SM_APPROX_SCALAR && !sm_approx_path_supported(path)) path = (sm_approx_path)(path - 1);
    return path;
}
