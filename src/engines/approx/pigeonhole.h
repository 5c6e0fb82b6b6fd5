/* The pigeonhole filter: k mismatches or k edits by exact seeds + verification.
 *
 * A key with at most k errors in an occurrence splits into k + 1 disjoint
 * pieces, and at least one piece then occurs in the text without an error.
 * The pieces of every key are found together by an exact engine's tables
 * (dna pieces of at most SM_PH_SEED_MAX bases: k-mer direct tables; other
 * pieces: a dictionary automaton; degenerate pieces expanded), and each
 * piece hit is verified:
 *
 *  - k mismatches: the one window the hit implies, [q - offset, + m), is
 *    compared symbol by symbol. A window holding several exact pieces is
 *    reported by its first exact piece only, so it is reported once.
 *  - k edits: a hit at q of the piece at key offset o anchors the
 *    alignment there: an anchored DP (Myers' step with Ukkonen's cut-off
 *    for one-word keys, a banded DP for longer ones) runs backwards over
 *    the key before the piece and forwards over the key after it. Their sum
 *    is the least cost of an alignment through the anchor; D(j) is the
 *    least over the anchors of j, since an optimal alignment holds an exact
 *    piece. Ends are held until no later anchor can reach them, then
 *    reported once each: the end events are those of the Myers engine.
 *
 * Streaming: a scan call is cut into blocks; the text of the last
 * max_key + 3k + 1 positions is kept, and windows or anchors that reach
 * past the text seen so far wait in the state until it arrives or the
 * sequence ends (sm_ph_finish). Later anchors give ends after Q - 2k
 * (Q: text seen), so ends up to there are final.
 *
 *   sm_ph_header
 *   keys     sm_ph_key[nkeys]
 *   pieces   sm_ph_piece[npieces], each key's pieces consecutive, in order
 *   lengths  sm_db_pattern[npieces]: piece lengths, as the automaton reads them
 *   peq      uint64[]: per key rows * blocks words, row-major: bit i of
 *            peq[row * blocks + i / 64] set when key symbol i matches the row
 *   seed tables (see seed_off), or an automaton section over the pieces
 *   (output id = piece * 2) when some piece is long or the text is not dna
 *
 * The seed tables are the k-mer engine's direct tables (src/engines/kmer),
 * built from the pieces' codes, checked by its validator and read through
 * its lookups; its block passes (sm_kt_find) find the bases that end a key
 * of the combined table, and the scan looks up itself only what they cannot
 * see: shorter pieces right after a non-base, and the slots' branch-free
 * checks where nearly every base ends a piece. With seed tables the text is
 * also packed two bits per base, so a window of a packed key is compared
 * with a few word operations.
 */
#ifndef SM_PIGEONHOLE_H
#define SM_PIGEONHOLE_H

#include "engines/approx/approx.h"

/* Longest piece the seed tables take (a k-mer direct table of 4^12 codes: a
   2 MiB bitmap; keys of up to 36 bases cut for k = 2 have no longer piece). */
#define SM_PH_SEED_MAX 12

typedef struct {
    uint32_t output;      /* pattern * 2 + reverse */
    uint32_t length;      /* m */
    uint32_t blocks;      /* 64-bit words per peq row */
    uint32_t first_piece; /* its pieces: [first_piece, first_piece + k + 1) */
    uint64_t peq_at;      /* word index into peq */
    /* Packed form (dna keys of at most 32 symbols, each a base or N): two
       bits per symbol, symbol i at bits 2i..2i+1; care has 01 in the lane
       of every base (N lanes 00), lanes has 01 in every lane of the key. */
    uint64_t code, care, lanes;
    uint32_t packed;      /* 1 when the packed form is valid */
    uint32_t reserved;
} sm_ph_key;

typedef struct {
    uint32_t key;
    uint32_t offset;      /* first key position the piece covers */
    uint32_t length;
    uint32_t index;       /* 0 .. k within its key */
} sm_ph_piece;

/* The piece of an entry of the combined seed table's output list (piece *
   2), with what the scan needs of it. */
typedef struct {
    uint32_t key, offset, piece;
    uint16_t length, index;
} sm_ph_seed;

/* A piece of a per-length seed table's output list with what its check
   needs, entry for entry: the scan reads one list in order instead of the
   piece and key tables at random (100,000 keys -m 2 list about 300 pieces
   under each code of 4 bases). lanes is 0 when the key has no packed form. */
typedef struct {
    uint64_t code, care, lanes; /* the key's packed form (sm_ph_key) */
    uint32_t key, piece, key_length, offset;
    uint16_t length, index;
    uint32_t reserved;
} sm_ph_probe;

#define SM_PH_SLOT_KEY_MAX 29
#define SM_PH_SLOT_SEED_MAX 7

/* A piece with its key's packed form, so that a window is checked with no
   other lookup and no branch; an empty slot has limit -1. */
typedef struct {
    uint64_t code, care, lanes;
    uint32_t key;
    uint16_t back;        /* the window starts back symbols before the end of the piece */
    int8_t limit;         /* k; -1 for an empty slot; 64 for the first slot of a code with more than two
                             pieces, so that the check always sends it the general way */
    uint8_t overflow;     /* first slot of a code: it has more than two pieces */
} sm_ph_slot;

typedef struct {
    uint32_t match;       /* SM_MATCH_MISMATCHES or SM_MATCH_EDITS */
    uint32_t k;           /* < every key length */
    uint32_t nkeys, npieces;
    uint32_t rows;        /* peq rows; class_of[] < rows */
    uint32_t max_key;
    uint32_t history;     /* text bytes kept between blocks: max_key + 3k + 1 */
    uint32_t reserved;
    uint64_t peq_words;
    uint64_t keys_off, pieces_off, lengths_off, peq_off, ac_off, ac_size;
    /* Seed tables (dna, every piece at most SM_PH_SEED_MAX symbols), used
       instead of the automaton: k-mer direct tables ("KMT1", 64-byte
       aligned) over the pieces' concrete strings, bases A C G T coded
       0 1 2 3, the first base highest, output id piece * 2. seed_off[L] and
       seed_size[L] locate the table of the pieces of length L (k = L);
       seed_off[L] = 0: no piece of length L. */
    uint64_t seed_off[SM_PH_SEED_MAX + 1];
    uint64_t seed_size[SM_PH_SEED_MAX + 1];
    /* sm_ph_probe[] beside the output list of the table of L bases (0 with
       seed_off[L] = 0). */
    uint64_t seed_probe_off[SM_PH_SEED_MAX + 1];
    /* Bitmap over codes of seed_max bases: set when some suffix is a piece
       (the combined table's own bitmap when there is one). */
    uint64_t seed_any_off;
    uint32_t seed_max;    /* longest piece */
    uint32_t seeds;       /* 1: the seed tables find the pieces; 0: the automaton */
    /* The combined table (k = seed_max): every piece under each code of
       seed_max bases that ends with its string (0, 0 when that would be too
       large; the per-length tables serve). When every piece has seed_max
       bases it is the table of that length. */
    uint64_t seed_all_off, seed_all_size;
    /* sm_ph_seed[] beside the combined table's output list, entry for
       entry: the scan reads a piece's place in its key in one load. */
    uint64_t seed_list_off;
    /* k mismatches, every key packed and at most SM_PH_SLOT_KEY_MAX long,
       seed_max <= SM_PH_SLOT_SEED_MAX: two sm_ph_slot per code of seed_max
       bases, the first two pieces of the combined table under that code
       (0 when absent). */
    uint64_t seed_slots_off;
    /* k edits, one-block dna keys: per piece two bitmaps over the codes of
       alive_columns bases, before the piece and after it, the base nearest
       the piece lowest: bit clear when the anchored DP (bound k) of that
       side dies within those columns with no end found, so the anchor needs
       no DP (0 when absent). */
    uint64_t alive_off;
    uint32_t alive_columns;
    uint32_t reserved2;
    uint16_t class_of[256];
} sm_ph_header;

/* Information content, in bits, of the least selective piece when the keys
   are cut into k + 1 pieces (0 when some key is not longer than k, or a
   piece expands to more than max_expansion strings). The planner uses it. */
double sm_ph_min_piece_bits(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k,
                            uint32_t max_expansion);
/* Expected piece hits per text position on uniform random DNA or text. */
double sm_ph_hit_rate(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k);

int sm_ph_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, sm_match match,
                uint32_t k, unsigned build_threads, uint64_t max_bytes, sm_buf *section, sm_error *err);
int sm_ph_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_match match, sm_error *err);

typedef struct sm_ph_state sm_ph_state;
/* The seed loop is chosen for cpu. */
sm_ph_state *sm_ph_state_new(const uint8_t *section, const sm_cpu_features *cpu);
void sm_ph_state_free(sm_ph_state *state);
/* 1 when state was made for a section with needs no larger than section's. */
int sm_ph_state_fits(const uint8_t *section, const sm_ph_state *state);
/* Back to the start of a sequence. */
void sm_ph_state_reset(sm_ph_state *state);
void sm_ph_scan(const uint8_t *section, sm_ph_state *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink);
/* Ends the sequence whose last byte is at end_pos - 1: verifies what waited. */
void sm_ph_finish(const uint8_t *section, sm_ph_state *state, uint64_t end_pos, sm_sink *sink);

#endif /* SM_PIGEONHOLE_H */
