/* Approximate-search oracle; see approx_oracle.h. */
#include "approx_oracle.h"

#include <stdlib.h>

#include "oracle.h"

static int ao_match(char p, char t, sm_alphabet alphabet, unsigned flags) {
    return oracle_symbol_matches((unsigned char)p, (unsigned char)t, alphabet, flags);
}

uint32_t aoracle_mismatches(const char *key, size_t m, const char *text, sm_alphabet alphabet, unsigned flags) {
    uint32_t n = 0;
    for (size_t i = 0; i < m; i++)
        if (!ao_match(key[i], text[i], alphabet, flags)) n++;
    return n;
}

static uint32_t ao_min3(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t x = a < b ? a : b;
    return x < c ? x : c;
}

uint32_t aoracle_edit(const char *key, size_t m, const char *text, size_t n, sm_alphabet alphabet, unsigned flags) {
    /* Wagner-Fischer, one row of the text dimension at a time. */
    uint32_t *row = malloc((n + 1) * sizeof *row);
    if (!row) abort();
    for (size_t j = 0; j <= n; j++) row[j] = (uint32_t)j;
    for (size_t i = 1; i <= m; i++) {
        uint32_t diag = row[0];
        row[0] = (uint32_t)i;
        for (size_t j = 1; j <= n; j++) {
            uint32_t sub = diag + (ao_match(key[i - 1], text[j - 1], alphabet, flags) ? 0u : 1u);
            diag = row[j];
            row[j] = ao_min3(sub, row[j] + 1, row[j - 1] + 1);
        }
    }
    uint32_t d = row[n];
    free(row);
    return d;
}

uint32_t aoracle_D_by_definition(const char *key, size_t m, const char *text, size_t j, sm_alphabet alphabet,
                                 unsigned flags) {
    uint32_t best = UINT32_MAX;
    for (size_t s = 0; s <= j; s++) {
        uint32_t d = aoracle_edit(key, m, text + s, j - s, alphabet, flags);
        if (d < best) best = d;
    }
    return best;
}

int aoracle_D_all(const char *key, size_t m, const char *text, size_t n, sm_alphabet alphabet, unsigned flags,
                  uint32_t *D) {
    /* col[i] = least edit between key[0, i) and a substring ending at j. */
    uint32_t *col = malloc((m + 1) * sizeof *col);
    if (!col) return -1;
    for (size_t i = 0; i <= m; i++) col[i] = (uint32_t)i;
    D[0] = (uint32_t)m;
    for (size_t j = 1; j <= n; j++) {
        uint32_t diag = col[0];
        col[0] = 0;
        for (size_t i = 1; i <= m; i++) {
            uint32_t sub = diag + (ao_match(key[i - 1], text[j - 1], alphabet, flags) ? 0u : 1u);
            diag = col[i];
            col[i] = ao_min3(sub, col[i] + 1, col[i - 1] + 1);
        }
        D[j] = col[m];
    }
    free(col);
    return 0;
}

uint64_t aoracle_edit_start(const char *key, size_t m, const char *text, size_t j, uint32_t d, size_t lo,
                            sm_alphabet alphabet, unsigned flags) {
    for (size_t s = j + 1; s-- > lo;)
        if (aoracle_edit(key, m, text + s, j - s, alphabet, flags) == d) return s;
    return (uint64_t)-1;
}
