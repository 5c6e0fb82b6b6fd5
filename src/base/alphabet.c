/* DNA symbol tables: nucleotide sets of IUPAC codes and their complements. */
#include <ctype.h>

#include "base/internal.h"

#define NT_A 1
#define NT_C 2
#define NT_G 4
#define NT_T 8

#define SET_BOTH_CASES(c, v) [c] = (v), [(c) + 32] = (v)

const uint8_t sm_nt_set[256] = {
    SET_BOTH_CASES('A', NT_A),
    SET_BOTH_CASES('C', NT_C),
    SET_BOTH_CASES('G', NT_G),
    SET_BOTH_CASES('T', NT_T),
    SET_BOTH_CASES('U', NT_T),
    SET_BOTH_CASES('R', NT_A | NT_G),
    SET_BOTH_CASES('Y', NT_C | NT_T),
    SET_BOTH_CASES('S', NT_C | NT_G),
    SET_BOTH_CASES('W', NT_A | NT_T),
    SET_BOTH_CASES('K', NT_G | NT_T),
    SET_BOTH_CASES('M', NT_A | NT_C),
    SET_BOTH_CASES('B', NT_C | NT_G | NT_T),
    SET_BOTH_CASES('D', NT_A | NT_G | NT_T),
    SET_BOTH_CASES('H', NT_A | NT_C | NT_T),
    SET_BOTH_CASES('V', NT_A | NT_C | NT_G),
    SET_BOTH_CASES('N', NT_A | NT_C | NT_G | NT_T),
};

/* Complements of upper-case symbols (patterns are normalised to upper case, U as T). */
const uint8_t sm_nt_complement[256] = {
    ['A'] = 'T', ['C'] = 'G', ['G'] = 'C', ['T'] = 'A', ['U'] = 'A',
    ['R'] = 'Y', ['Y'] = 'R', ['S'] = 'S', ['W'] = 'W', ['K'] = 'M', ['M'] = 'K',
    ['B'] = 'V', ['V'] = 'B', ['D'] = 'H', ['H'] = 'D', ['N'] = 'N',
};

void sm_text_fold(int dna, unsigned flags, uint8_t fold[256]) {
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        if (dna) {
            c = (uint8_t)toupper(c);
            if (c == 'U') c = 'T';
        } else if (flags & SM_FLAG_IGNORE_CASE) {
            c = (uint8_t)tolower(c);
        }
        fold[b] = c;
    }
}
