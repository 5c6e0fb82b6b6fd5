/* What the oracle tests of the installed headers share: a repeatable
   random stream, IUPAC codes as nucleotide sets, and the number of random
   rounds the environment asks for. */
#ifndef SM_PUBLIC_ORACLE_H
#define SM_PUBLIC_ORACLE_H

#include <stdlib.h>

static unsigned seed = 1;

static inline unsigned rnd(unsigned n) {
    seed = seed * 1103515245u + 12345u;
    return ((seed >> 8) & 0xffffffu) % n;
}

/* IUPAC code -> nucleotide set (A 1, C 2, G 4, T and U 8), either case; 0 for anything else. */
static inline unsigned base_set(char c) {
    switch (c | 0x20) {
    case 'a': return 1; case 'c': return 2; case 'g': return 4; case 't': case 'u': return 8;
    case 'r': return 5; case 'y': return 10; case 's': return 6; case 'w': return 9; case 'k': return 12;
    case 'm': return 3; case 'b': return 14; case 'd': return 13; case 'h': return 11; case 'v': return 7;
    case 'n': return 15; default: return 0;
    }
}

/* `full` rounds scaled by SM_TEST_SCALE (percent; at least a tenth of them),
   and the stream started from SM_TEST_SEED (else 35). */
static inline int test_rounds(int full) {
    const char *scale_text = getenv("SM_TEST_SCALE"), *seed_text = getenv("SM_TEST_SEED");
    int rounds = (int)(full * (scale_text ? atof(scale_text) / 100.0 : 1.0));
    seed = seed_text ? (unsigned)strtoul(seed_text, NULL, 10) : 35;
    return rounds < full / 10 ? full / 10 : rounds;
}

#endif
