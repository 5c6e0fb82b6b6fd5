/* The pigeonhole filter: exact pieces, then verification; see pigeonhole.h. */
#include "engines/approx/pigeonhole.h"

#include <math.h>
#include <stdlib.h>

#include "engines/approx/approx_common.h"
#include "engines/automaton/automaton.h"

#define PH_MAX_PIECE_EXPANSION 256u
/* Text bytes per block: bounds the piece hits held at once. */
#define PH_BLOCK ((size_t)1 << 16)
/* Assumed information of one text symbol, in bits (English-like text). */
#define PH_TEXT_SYMBOL_BITS 4.0
/* Expected piece hits per base from which the branch-free slots pay. */
#define PH_SLOT_MIN_RATE 0.2
/* Most entries of the combined seed table. */
#define PH_SEED_ALL_MAX ((uint64_t)1 << 22)

/* Where the entries of the combined seed table begin, after its starts. */
static uint64_t seed_list_at(uint32_t seed_max) { return apx_round_up((((uint64_t)1 << (2 * seed_max)) + 1) * 4u, 8); }

/* ------------------------------------------------------------ piece plans */

static double symbol_bits(uint8_t byte, sm_alphabet alphabet) {
    if (alphabet == SM_ALPHABET_TEXT) return PH_TEXT_SYMBOL_BITS;
    unsigned n = APX_POPCOUNT(sm_nt_set[byte] & 15u);
    return n ? 2.0 - log2((double)n) : 0.0;
}

/* Greedy cut into pieces of at least t bits each: returns how many pieces of
   at least t bits a left-to-right pass closes (the rest joins the last). */
static uint32_t pieces_at_least(const double *bits, uint32_t m, double t) {
    uint32_t count = 0;
    double acc = 0;
    for (uint32_t i = 0; i < m; i++) {
        acc += bits[i];
        if (acc >= t) { count++; acc = 0; }
    }
    return count;
}

/* Keys up to this length get the exact plan (quadratic in the length). */
#define PH_EXACT_PLAN_MAX 128u

/* The cuts that minimise the expected piece hits, sum of 2^-bits over the
   pieces, by dynamic programming over cut points. Returns 0 on success. */
static int plan_fewest_hits(const double *bits, uint32_t m, uint32_t parts, uint32_t *cut) {
    size_t cells = (size_t)(parts + 1) * (m + 1);
    double *best = malloc(cells * sizeof *best), *prefix = malloc((m + 1) * sizeof *prefix);
    uint32_t *from = malloc(cells * sizeof *from);
    if (!best || !prefix || !from) {
        free(best);
        free(prefix);
        free(from);
        return -1;
    }
    prefix[0] = 0;
    for (uint32_t i = 0; i < m; i++) prefix[i + 1] = prefix[i] + bits[i];
#define CELL(p, i) ((size_t)(p) * (m + 1) + (i))
    for (uint32_t i = 0; i <= m; i++) best[CELL(1, i)] = i ? exp2(-prefix[i]) : INFINITY;
    for (uint32_t p = 2; p <= parts; p++)
        for (uint32_t i = 0; i <= m; i++) {
            best[CELL(p, i)] = INFINITY;
            for (uint32_t j = p - 1; j < i; j++) {
                double c = best[CELL(p - 1, j)] + exp2(-(prefix[i] - prefix[j]));
                if (c < best[CELL(p, i)]) {
                    best[CELL(p, i)] = c;
                    from[CELL(p, i)] = j;
                }
            }
        }
    cut[parts] = m;
    for (uint32_t p = parts; p > 1; p--) cut[p - 1] = from[CELL(p, cut[p])];
    cut[0] = 0;
#undef CELL
    free(best);
    free(prefix);
    free(from);
    return 0;
}

/* Cuts key into parts contiguous pieces: the fewest expected hits for keys
   up to PH_EXACT_PLAN_MAX, else the greatest least piece (greedy). cut[p] =
   first position of piece p, cut[parts] = m. Returns the least piece's bits. */
static double plan_pieces(const uint8_t *seq, uint32_t m, sm_alphabet alphabet, uint32_t parts, double *bits,
                          uint32_t *cut) {
    double total = 0;
    for (uint32_t i = 0; i < m; i++) total += bits[i] = symbol_bits(seq[i], alphabet);
    if (m <= PH_EXACT_PLAN_MAX && plan_fewest_hits(bits, m, parts, cut) == 0) {
        double least = INFINITY;
        for (uint32_t q = 0; q < parts; q++) {
            double b = 0;
            for (uint32_t i = cut[q]; i < cut[q + 1]; i++) b += bits[i];
            if (b < least) least = b;
        }
        return least;
    }
    /* Binary search on the threshold; the greedy pass is exact for it. */
    double lo = 0, hi = total / parts;
    for (int it = 0; it < 40; it++) {
        double mid = (lo + hi) / 2;
        if (pieces_at_least(bits, m, mid) >= parts) lo = mid;
        else hi = mid;
    }
    /* Cut at lo; pieces must not be empty even when every bit count is 0. */
    uint32_t p = 0;
    double acc = 0;
    cut[0] = 0;
    for (uint32_t i = 0; i < m && p + 1 < parts; i++) {
        acc += bits[i];
        uint32_t left = m - (i + 1);               /* symbols after i */
        if ((acc >= lo && lo > 0) || left == parts - (p + 1)) {
            cut[++p] = i + 1;
            acc = 0;
        }
    }
    cut[parts] = m;
    double least = INFINITY;
    for (uint32_t q = 0; q < parts; q++) {
        double b = 0;
        for (uint32_t i = cut[q]; i < cut[q + 1]; i++) b += bits[i];
        if (b < least) least = b;
    }
    return least;
}

static uint64_t piece_expansions(const uint8_t *seq, uint32_t len, sm_alphabet alphabet) {
    if (alphabet == SM_ALPHABET_TEXT) return 1;
    uint64_t n = 1;
    for (uint32_t i = 0; i < len && n <= PH_MAX_PIECE_EXPANSION; i++) n *= APX_POPCOUNT(sm_nt_set[seq[i]] & 15u);
    return n;
}

/* Walks every key's plan; calls back per piece. Returns the least piece bits
   (0 when a key is too short or a piece expands too much, -1 out of memory). */
typedef void (*piece_fn)(void *ctx, size_t key, uint32_t index, uint32_t offset, uint32_t length, double bits);

static double walk_plans(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k,
                         uint32_t max_expansion, piece_fn fn, void *ctx) {
    uint32_t max_len = 0;
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].len > max_len) max_len = keys[i].len;
    double *bits = malloc(((size_t)max_len + 1) * sizeof *bits);
    uint32_t *cut = malloc(((size_t)k + 2) * sizeof *cut);
    if (!bits || !cut) {
        free(bits);
        free(cut);
        return -1;
    }
    double least = INFINITY;
    for (size_t i = 0; i < nkeys && least > 0; i++) {
        if (keys[i].len <= k) { least = 0; break; }
        double l = plan_pieces(keys[i].seq, keys[i].len, alphabet, k + 1, bits, cut);
        if (l < least) least = l;
        for (uint32_t p = 0; p <= k; p++) {
            uint32_t len = cut[p + 1] - cut[p];
            if (piece_expansions(keys[i].seq + cut[p], len, alphabet) > max_expansion) { least = 0; break; }
            if (fn) {
                double b = 0;
                for (uint32_t j = cut[p]; j < cut[p + 1]; j++) b += bits[j];
                fn(ctx, i, p, cut[p], len, b);
            }
        }
    }
    free(bits);
    free(cut);
    return least == INFINITY ? 0 : least;
}

double sm_ph_min_piece_bits(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k,
                            uint32_t max_expansion) {
    if (max_expansion == 0 || max_expansion > PH_MAX_PIECE_EXPANSION) max_expansion = PH_MAX_PIECE_EXPANSION;
    double l = walk_plans(keys, nkeys, alphabet, k, max_expansion, NULL, NULL);
    return l < 0 ? 0 : l;
}

static void add_rate(void *ctx, size_t key, uint32_t index, uint32_t offset, uint32_t length, double bits) {
    (void)key, (void)index, (void)offset, (void)length;
    *(double *)ctx += exp2(-bits);
}

double sm_ph_hit_rate(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, uint32_t k) {
    double rate = 0;
    walk_plans(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION, add_rate, &rate);
    return rate;
}

/* ------------------------------------------------------------------ build */

typedef struct {
    sm_ph_piece *pieces;
    size_t n;
} piece_list;

static void add_piece(void *ctx, size_t key, uint32_t index, uint32_t offset, uint32_t length, double bits) {
    (void)bits;
    piece_list *l = ctx;
    sm_ph_piece *p = &l->pieces[l->n++];
    p->key = (uint32_t)key;
    p->index = index;
    p->offset = offset;
    p->length = length;
}

/* Writes the concrete strings of a dna piece (count of them, len bytes each). */
static void expand_piece(const uint8_t *seq, uint32_t len, uint8_t *out) {
    static const uint8_t base_of_bit[4] = {'A', 'C', 'G', 'T'};
    uint64_t count = piece_expansions(seq, len, SM_ALPHABET_DNA);
    for (uint64_t e = 0; e < count; e++) {
        uint64_t rest = e;
        for (uint32_t i = len; i-- > 0;) {
            unsigned set = sm_nt_set[seq[i]] & 15u, n = APX_POPCOUNT(set);
            unsigned pick = (unsigned)(rest % n);
            rest /= n;
            unsigned b = 0;
            for (;; b++)
                if ((set >> b) & 1u) {
                    if (pick == 0) break;
                    pick--;
                }
            out[e * len + i] = base_of_bit[b];
        }
    }
}

/* The anchored Myers state of one side after some columns (see
   anchored_myers), for the death tables. */
typedef struct {
    uint64_t pv, mv;
    uint32_t y, score_y, least;
    int died;
} alive_state;

/* The state before any column: D(i, 0) = i, so rows up to kk are active. */
static inline alive_state alive_start(uint32_t rows, uint32_t kk) {
    uint32_t y = rows < kk ? rows : kk;
    alive_state a = {~(uint64_t)0, 0, y, y, rows <= kk ? rows : kk + 1, 0};
    return a;
}

/* One column of the anchored DP (see anchored_myers) with the match word eq:
   Myers' step with row 0 growing by one, then Ukkonen's last active row y
   and its value; died once no row is at most kk. */
static inline void alive_step(alive_state *a, uint64_t eq, uint32_t rows, uint32_t kk) {
    uint64_t xv = eq | a->mv;
    uint64_t xh = (((eq & a->pv) + a->pv) ^ a->pv) | eq;
    uint64_t ph = a->mv | ~(xh | a->pv);
    uint64_t mh = a->pv & xh;
    ph = (ph << 1) | 1u;
    mh <<= 1;
    a->pv = mh | ~(xv | ph);
    a->mv = ph & xv;
    uint64_t ybit = (uint64_t)1 << a->y;
    a->score_y += (uint32_t)((ph & ybit) != 0) - (uint32_t)((mh & ybit) != 0);
    if (a->y < rows) {
        uint32_t next = a->score_y + (uint32_t)((a->pv & ybit) != 0) - (uint32_t)((a->mv & ybit) != 0);
        if (next <= kk) {
            a->y++;
            a->score_y = next;
        }
    }
    while (a->score_y > kk) {
        if (a->y == 0) {
            a->died = 1;
            return;
        }
        a->y--;
        a->score_y -= (uint32_t)((a->pv >> a->y) & 1u) - (uint32_t)((a->mv >> a->y) & 1u);
    }
    if (a->y == rows && a->score_y < a->least) a->least = a->score_y;
}

/* Sets the bit of every string of the remaining depth of bases (code so
   far in code, next base at bit 2 * column) that the side survives. */
static void alive_walk(const sm_ph_header *h, const uint64_t *peq, uint32_t lo, uint32_t rows, uint32_t kk,
                       uint32_t columns, uint32_t column, uint64_t code, alive_state a, uint64_t *bits) {
    uint64_t mask = rows == 64 ? ~(uint64_t)0 : (((uint64_t)1 << rows) - 1);
    if (column == columns || a.died || column >= rows + kk) {
        /* Dead (and no end), or done: every extension shares the verdict. */
        int survives = a.least <= kk || (!a.died && rows + kk > columns);
        if (!survives) return;
        uint64_t first = code, count = (uint64_t)1 << (2 * (columns - column));
        for (uint64_t e = 0; e < count; e++) {
            uint64_t c = first | (e << (2 * column));
            bits[c / 64] |= (uint64_t)1 << (c % 64);
        }
        return;
    }
    for (uint32_t b = 0; b < 4; b++) {
        alive_state next = a;
        uint64_t eq = (peq[h->class_of[(uint8_t)"ACGT"[b]]] >> lo) & mask;
        alive_step(&next, eq, rows, kk);
        alive_walk(h, peq, lo, rows, kk, columns, column + 1, code | ((uint64_t)b << (2 * column)), next, bits);
    }
}

/* The death table of one side of a piece: rows key symbols from bit lo of
   the peq words, against every string of columns bases. */
static void fill_alive(const sm_ph_header *h, const uint64_t *peq, uint32_t lo, uint32_t rows, uint32_t kk,
                       uint32_t columns, uint64_t *bits) {
    if (rows == 0) {
        memset(bits, 0xff, (((uint64_t)1 << (2 * columns)) / 64) * 8);
        return;
    }
    alive_walk(h, peq, lo, rows, kk, columns, 0, 0, alive_start(rows, kk), bits);
}

/* 2-bit code of a base letter (A C G T), or -1. */
static int base_code(uint8_t c) {
    switch (c) {
    case 'A': return 0;
    case 'C': return 1;
    case 'G': return 2;
    case 'T': return 3;
    default: return -1;
    }
}

/* The packed form of a dna key, when it has one (see sm_ph_key). */
static void pack_key(const uint8_t *seq, uint32_t m, sm_ph_key *key) {
    key->packed = 0;
    key->code = key->care = key->lanes = 0;
    if (m > 32) return;
    for (uint32_t i = 0; i < m; i++) {
        int c = base_code(seq[i]);
        key->lanes |= (uint64_t)1 << (2 * i);
        if (c >= 0) {
            key->code |= (uint64_t)c << (2 * i);
            key->care |= (uint64_t)1 << (2 * i);
        } else if ((sm_nt_set[seq[i]] & 15u) != 15u) {
            return; /* a two- or three-base code: compared through peq instead */
        }
    }
    key->packed = 1;
}

int sm_ph_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, sm_match match,
                uint32_t k, unsigned build_threads, uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!section || (match != SM_MATCH_MISMATCHES && match != SM_MATCH_EDITS))
        return sm_set_error(err, SM_ERR_INVALID, "pigeonhole: invalid arguments");
    int rc = apx_check_keys("pigeonhole", keys, nkeys, alphabet, flags, err);
    if (rc != SM_OK) return rc;
    if (flags & SM_FLAG_TEXT_IUPAC)
        return sm_set_error(err, SM_ERR_INVALID, "pigeonhole: IUPAC codes in the text need another engine");
    if (k > 65535 || (uint64_t)nkeys * (k + 1) > UINT32_MAX / 2)
        return sm_set_error(err, SM_ERR_LIMIT, "pigeonhole: too many pieces");
    if (sm_ph_min_piece_bits(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION) <= 0)
        return sm_set_error(err, SM_ERR_INVALID,
                            "pigeonhole: every pattern must be longer than k = %u and cut into %u pieces of at most "
                            "%u concrete strings each",
                            k, k + 1, PH_MAX_PIECE_EXPANSION);

    piece_list pl = {calloc(nkeys * (k + 1), sizeof(sm_ph_piece)), 0};
    if (!pl.pieces) return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
    apx_classes cls;
    apx_classes_build(keys, nkeys, alphabet, flags, &cls);
    walk_plans(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION, add_piece, &pl);
    uint32_t max_key = 0;
    uint64_t peq_words = 0, arena = 0, nac = 0;
    uint64_t per_length[SM_PH_SEED_MAX + 1] = {0};
    int seeds = alphabet == SM_ALPHABET_DNA;
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len > max_key) max_key = keys[i].len;
        peq_words += (uint64_t)cls.rows * ((keys[i].len + 63) / 64 + (keys[i].len <= 64));
    }
    for (size_t p = 0; p < pl.n; p++) {
        const sm_ph_piece *pc = &pl.pieces[p];
        uint64_t count = piece_expansions(keys[pc->key].seq + pc->offset, pc->length, alphabet);
        arena += count * pc->length;
        nac += count;
        if (pc->length > SM_PH_SEED_MAX) seeds = 0;
        else per_length[pc->length] += count;
    }

    uint64_t off = apx_round_up(sizeof(sm_ph_header), APX_ALIGN);
    uint64_t keys_off = off;
    off = apx_round_up(off + nkeys * sizeof(sm_ph_key), APX_ALIGN);
    uint64_t pieces_off = off;
    off = apx_round_up(off + pl.n * sizeof(sm_ph_piece), APX_ALIGN);
    uint64_t lengths_off = off;
    off = apx_round_up(off + pl.n * sizeof(sm_db_pattern), APX_ALIGN);
    uint64_t peq_off = off;
    off = apx_round_up(off + peq_words * 8u, APX_ALIGN);
    uint64_t seed_off[SM_PH_SEED_MAX + 1] = {0}, present_off[SM_PH_SEED_MAX + 1] = {0};
    for (uint32_t L = 1; seeds && L <= SM_PH_SEED_MAX; L++) {
        if (!per_length[L]) continue;
        seed_off[L] = off;
        off = apx_round_up(off + (((uint64_t)1 << (2 * L)) + 1 + per_length[L]) * 4u, APX_ALIGN);
        present_off[L] = off;
        off = apx_round_up(off + ((((uint64_t)1 << (2 * L)) + 63) / 64) * 8u, APX_ALIGN);
    }
    uint32_t seed_max = 0;
    for (uint32_t L = 1; seeds && L <= SM_PH_SEED_MAX; L++)
        if (per_length[L]) seed_max = L;
    uint64_t any_off = off;
    if (seeds) off = apx_round_up(off + ((((uint64_t)1 << (2 * seed_max)) + 63) / 64) * 8u, APX_ALIGN);
    uint64_t all_count = 0, all_off = 0;
    for (uint32_t L = 1; seeds && L <= seed_max; L++) all_count += per_length[L] << (2 * (seed_max - L));
    if (seeds && all_count <= PH_SEED_ALL_MAX) {
        all_off = off;
        off = apx_round_up(off + seed_list_at(seed_max) + all_count * sizeof(sm_ph_seed), APX_ALIGN);
    }
    /* Slots need every key packed (bases and N) and short, and pay only
       when most bases end some piece (else the bitmap test predicts well):
       about 0.2 expected piece hits per base and up. */
    int slots = all_off && match == SM_MATCH_MISMATCHES && seed_max <= SM_PH_SLOT_SEED_MAX &&
                sm_ph_hit_rate(keys, nkeys, alphabet, k) >= PH_SLOT_MIN_RATE;
    for (size_t i = 0; i < nkeys && slots; i++) {
        sm_ph_key probe;
        pack_key(keys[i].seq, keys[i].len, &probe);
        slots = probe.packed && keys[i].len <= SM_PH_SLOT_KEY_MAX;
    }
    uint64_t slots_off = 0;
    if (slots) {
        slots_off = off;
        off = apx_round_up(off + ((uint64_t)2 << (2 * seed_max)) * sizeof(sm_ph_slot), APX_ALIGN);
    }
    /* Death tables for k edits: 5 bases (1024 codes) per side when small
       enough, 4 otherwise, none for very many pieces or long keys. */
    uint32_t alive_columns = 0;
    int one_block = 1;
    for (size_t i = 0; i < nkeys; i++) one_block &= keys[i].len <= 64;
    if (seeds && match == SM_MATCH_EDITS && one_block && k <= 255)
        alive_columns = pl.n <= 16384 ? 5 : pl.n <= 131072 ? 4 : 0;
    uint64_t alive_off = 0;
    if (alive_columns) {
        alive_off = off;
        off = apx_round_up(off + (uint64_t)pl.n * 2 * (((uint64_t)1 << (2 * alive_columns)) / 64) * 8u, APX_ALIGN);
    }
    uint64_t ac_off = off;
    if ((max_bytes && off > max_bytes) || off > SIZE_MAX / 2) {
        free(pl.pieces);
        return sm_set_error(err, SM_ERR_LIMIT, "pigeonhole: the section would need %llu bytes (limit %llu)",
                            (unsigned long long)off, (unsigned long long)max_bytes);
    }

    /* Every concrete string of every piece, in piece order. */
    sm_ac_key *ac_keys = malloc((nac ? nac : 1) * sizeof *ac_keys);
    uint8_t *strings = malloc(arena ? arena : 1);
    sm_buf ac = {0};
    if (!ac_keys || !strings) {
        free(ac_keys);
        free(strings);
        free(pl.pieces);
        return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
    }
    size_t at = 0, used = 0;
    for (size_t p = 0; p < pl.n; p++) {
        const sm_ph_piece *pc = &pl.pieces[p];
        const uint8_t *seq = keys[pc->key].seq + pc->offset;
        uint64_t count = piece_expansions(seq, pc->length, alphabet);
        if (alphabet == SM_ALPHABET_DNA) expand_piece(seq, pc->length, strings + used);
        else memcpy(strings + used, seq, pc->length);
        for (uint64_t e = 0; e < count; e++) {
            ac_keys[at].seq = strings + used + e * pc->length;
            ac_keys[at].len = pc->length;
            ac_keys[at].output = (uint32_t)p * 2u;
            at++;
        }
        used += count * pc->length;
    }
    if (!seeds) {
        /* The exact engine over the pieces: piece p reports output p * 2. */
        uint8_t fold[256];
        sm_text_fold(alphabet == SM_ALPHABET_DNA, flags, fold);
        rc = sm_ac_build(ac_keys, nac, fold, build_threads, max_bytes ? max_bytes - off : 0, &ac, err);
        if (rc != SM_OK) {
            free(ac_keys);
            free(strings);
            free(pl.pieces);
            return rc;
        }
    }
    uint64_t total = apx_round_up(off + ac.len, APX_ALIGN);
    if ((max_bytes && total > max_bytes) || sm_buf_reserve(section, total) != SM_OK) {
        free(ac_keys);
        free(strings);
        free(pl.pieces);
        sm_buf_free(&ac);
        if (max_bytes && total > max_bytes)
            return sm_set_error(err, SM_ERR_LIMIT, "pigeonhole: the section would need %llu bytes (limit %llu)",
                                (unsigned long long)total, (unsigned long long)max_bytes);
        return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
    }
    uint8_t *base = section->data + section->len;
    memset(base, 0, total);
    sm_ph_header *h = (sm_ph_header *)base;
    h->match = (uint32_t)match;
    h->k = k;
    h->nkeys = (uint32_t)nkeys;
    h->npieces = (uint32_t)pl.n;
    h->rows = cls.rows;
    h->max_key = max_key;
    h->history = max_key + 3 * k + 1;
    h->peq_words = peq_words;
    h->keys_off = keys_off;
    h->pieces_off = pieces_off;
    h->lengths_off = lengths_off;
    h->peq_off = peq_off;
    h->ac_off = seeds ? 0 : ac_off;
    h->ac_size = ac.len;
    h->seeds = (uint32_t)seeds;
    for (int b = 0; b < 256; b++) h->class_of[b] = cls.class_of[b];

    sm_ph_key *kt = (sm_ph_key *)(base + keys_off);
    uint64_t *peq = (uint64_t *)(base + peq_off);
    uint64_t peq_at = 0;
    for (size_t i = 0; i < nkeys; i++) {
        uint32_t m = keys[i].len, blocks = (m + 63) / 64;
        kt[i].output = keys[i].output;
        kt[i].length = m;
        kt[i].blocks = blocks;
        kt[i].first_piece = (uint32_t)(i * (k + 1));
        kt[i].peq_at = peq_at;
        if (seeds) pack_key(keys[i].seq, m, &kt[i]);
        for (uint32_t r = 0; r < cls.rows; r++) {
            if (cls.row_never_matches[r]) continue;
            for (uint32_t j = 0; j < m; j++)
                if (apx_class_matches(cls.row_value[r], apx_key_symbol(keys[i].seq[j], alphabet, flags), alphabet,
                                      flags))
                    peq[peq_at + (uint64_t)r * blocks + j / 64] |= (uint64_t)1 << (j % 64);
        }
        peq_at += (uint64_t)cls.rows * blocks;
        if (blocks == 1) {
            /* The rows again with the key reversed, for DPs that run backwards. */
            for (uint32_t r = 0; r < cls.rows; r++)
                for (uint32_t j = 0; j < m; j++)
                    if ((peq[kt[i].peq_at + r] >> j) & 1u) peq[peq_at + r] |= (uint64_t)1 << (m - 1 - j);
            peq_at += cls.rows;
        }
    }
    memcpy(base + pieces_off, pl.pieces, pl.n * sizeof(sm_ph_piece));
    sm_db_pattern *lengths = (sm_db_pattern *)(base + lengths_off);
    for (size_t p = 0; p < pl.n; p++) lengths[p].length = pl.pieces[p].length;
    if (alive_off) {
        h->alive_off = alive_off;
        h->alive_columns = alive_columns;
        uint64_t words = ((uint64_t)1 << (2 * alive_columns)) / 64;
        uint64_t *alive = (uint64_t *)(base + alive_off);
        for (size_t p = 0; p < pl.n; p++) {
            const sm_ph_piece *pc = &pl.pieces[p];
            const sm_ph_key *key = &kt[pc->key];
            const uint64_t *kp = peq + key->peq_at;
            uint32_t rest = key->length - pc->offset - pc->length;
            /* Before the piece: the reversed rows from key position o - 1;
               the table then goes to text order (farthest base first), the
               order of the rolling code the scan has at hand. */
            uint64_t *before = alive + p * 2 * words;
            fill_alive(h, kp + cls.rows, key->length - pc->offset, pc->offset, k, alive_columns, before);
            uint64_t codes = (uint64_t)1 << (2 * alive_columns), flipped[1024 / 64];
            memset(flipped, 0, sizeof flipped);
            for (uint64_t c = 0; c < codes; c++) {
                uint64_t r = 0;
                for (uint32_t j = 0; j < alive_columns; j++) r |= ((c >> (2 * j)) & 3u) << (2 * (alive_columns - 1 - j));
                if ((before[c / 64] >> (c % 64)) & 1u) flipped[r / 64] |= (uint64_t)1 << (r % 64);
            }
            memcpy(before, flipped, words * 8);
            fill_alive(h, kp, pc->offset + pc->length, rest, k, alive_columns, alive + (p * 2 + 1) * words);
        }
    }
    if (seeds) {
        /* Counting sort of the concrete strings by code, per length. */
        for (uint32_t L = 1; L <= SM_PH_SEED_MAX; L++) {
            if (!seed_off[L]) continue;
            uint64_t codes = (uint64_t)1 << (2 * L);
            uint32_t *starts = (uint32_t *)(base + seed_off[L]), *ids = starts + codes + 1;
            h->seed_off[L] = seed_off[L];
            h->seed_count[L] = (uint32_t)per_length[L];
            for (size_t e = 0; e < nac; e++) {
                if (ac_keys[e].len != L) continue;
                uint64_t c = 0;
                for (uint32_t j = 0; j < L; j++) c |= (uint64_t)base_code(ac_keys[e].seq[j]) << (2 * j);
                starts[c + 1]++;
            }
            for (uint64_t c = 0; c < codes; c++) starts[c + 1] += starts[c];
            for (size_t e = 0; e < nac; e++) {
                if (ac_keys[e].len != L) continue;
                uint64_t c = 0;
                for (uint32_t j = 0; j < L; j++) c |= (uint64_t)base_code(ac_keys[e].seq[j]) << (2 * j);
                ids[starts[c]++] = ac_keys[e].output >> 1;
            }
            for (uint64_t c = codes; c > 0; c--) starts[c] = starts[c - 1];
            starts[0] = 0;
            uint64_t *present = (uint64_t *)(base + present_off[L]);
            h->seed_present_off[L] = present_off[L];
            for (uint64_t c = 0; c < codes; c++)
                if (starts[c + 1] > starts[c]) present[c / 64] |= (uint64_t)1 << (c % 64);
        }
        if (all_off) {
            /* The combined table: a piece of length L under every code
               whose last L bases are its string. */
            uint64_t codes = (uint64_t)1 << (2 * seed_max);
            uint32_t *starts = (uint32_t *)(base + all_off);
            sm_ph_seed *list = (sm_ph_seed *)(base + all_off + seed_list_at(seed_max));
            h->seed_all_off = all_off;
            h->seed_all_count = all_count;
            for (int pass = 0; pass < 2; pass++) {
                for (size_t e = 0; e < nac; e++) {
                    uint32_t L = ac_keys[e].len, piece = ac_keys[e].output >> 1;
                    uint64_t c = 0;
                    for (uint32_t j = 0; j < L; j++) c |= (uint64_t)base_code(ac_keys[e].seq[j]) << (2 * j);
                    uint64_t older = (uint64_t)1 << (2 * (seed_max - L));
                    for (uint64_t o = 0; o < older; o++) {
                        uint64_t full = (c << (2 * (seed_max - L))) | o;
                        if (pass == 0) {
                            starts[full + 1]++;
                        } else {
                            sm_ph_seed *sd = &list[starts[full]++];
                            sd->key = pl.pieces[piece].key;
                            sd->offset = pl.pieces[piece].offset;
                            sd->piece = piece;
                            sd->length = (uint16_t)L;
                            sd->index = (uint16_t)pl.pieces[piece].index;
                        }
                    }
                }
                if (pass == 0)
                    for (uint64_t c = 0; c < codes; c++) starts[c + 1] += starts[c];
            }
            for (uint64_t c = codes; c > 0; c--) starts[c] = starts[c - 1];
            starts[0] = 0;
        }
        if (slots_off) {
            uint64_t codes = (uint64_t)1 << (2 * seed_max);
            const uint32_t *starts = (const uint32_t *)(base + all_off);
            const sm_ph_seed *list = (const sm_ph_seed *)(base + all_off + seed_list_at(seed_max));
            sm_ph_slot *slot = (sm_ph_slot *)(base + slots_off);
            h->seed_slots_off = slots_off;
            for (uint64_t c = 0; c < codes; c++) {
                uint32_t count = starts[c + 1] - starts[c];
                for (uint32_t j = 0; j < 2; j++) {
                    sm_ph_slot *sl = &slot[2 * c + j];
                    sl->limit = -1;
                    if (j >= count) continue;
                    const sm_ph_seed *sd = &list[starts[c] + j];
                    sl->code = kt[sd->key].code;
                    sl->care = kt[sd->key].care;
                    sl->lanes = kt[sd->key].lanes;
                    sl->key = sd->key;
                    sl->back = (uint16_t)(sd->offset + sd->length);
                    sl->limit = (int8_t)k;
                }
                /* A code with more pieces always takes the general way. */
                slot[2 * c].overflow = count > 2;
                if (count > 2) slot[2 * c].limit = 64;
            }
        }
        /* One test per base: is any suffix of the last seed_max bases a piece? */
        uint64_t *any = (uint64_t *)(base + any_off);
        h->seed_any_off = any_off;
        h->seed_max = seed_max;
        for (uint64_t c = 0; c < ((uint64_t)1 << (2 * seed_max)); c++) {
            for (uint32_t L = 1; L <= seed_max; L++) {
                if (!seed_off[L]) continue;
                uint64_t suffix = c >> (2 * (seed_max - L));
                const uint64_t *present = (const uint64_t *)(base + present_off[L]);
                if ((present[suffix / 64] >> (suffix % 64)) & 1u) {
                    any[c / 64] |= (uint64_t)1 << (c % 64);
                    break;
                }
            }
        }
    } else {
        memcpy(base + ac_off, ac.data, ac.len);
    }
    section->len += total;
    free(ac_keys);
    free(strings);
    free(pl.pieces);
    sm_buf_free(&ac);
    return SM_OK;
}

int sm_ph_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_match match, sm_error *err) {
    const sm_ph_header *h = (const sm_ph_header *)section;
#define PH_BAD(what) sm_set_error(err, SM_ERR_FORMAT, "pigeonhole section: %s", what)
    if (size < sizeof *h) return PH_BAD("truncated header");
    if (h->match != (uint32_t)match || h->k > 65535 || h->nkeys == 0 ||
        (uint64_t)h->nkeys * (h->k + 1) != h->npieces || h->npieces > UINT32_MAX / 2 || h->rows == 0 ||
        h->rows > 257 || h->max_key <= h->k || h->history != (uint64_t)h->max_key + 3u * h->k + 1)
        return PH_BAD("bad header");
    if (!apx_table_fits(h->keys_off, h->nkeys, sizeof(sm_ph_key), sizeof *h, size) ||
        !apx_table_fits(h->pieces_off, h->npieces, sizeof(sm_ph_piece), sizeof *h, size) ||
        !apx_table_fits(h->lengths_off, h->npieces, sizeof(sm_db_pattern), sizeof *h, size) ||
        !apx_table_fits(h->peq_off, h->peq_words, 8, sizeof *h, size) || h->seeds > 1 ||
        (!h->seeds && (h->ac_off % APX_ALIGN || h->ac_off < sizeof *h || h->ac_off > size ||
                       h->ac_size > size - h->ac_off)) ||
        (h->seeds && h->ac_size))
        return PH_BAD("table out of bounds");
    for (int b = 0; b < 256; b++)
        if (h->class_of[b] >= h->rows) return PH_BAD("bad class");
    if (h->alive_off &&
        (h->match != SM_MATCH_EDITS || !h->seeds || (h->alive_columns != 4 && h->alive_columns != 5) ||
         !apx_table_fits(h->alive_off, (uint64_t)h->npieces * 2 * (((uint64_t)1 << (2 * h->alive_columns)) / 64), 8,
                         sizeof *h, size)))
        return PH_BAD("death tables out of bounds");
    const sm_ph_key *keys = (const sm_ph_key *)(section + h->keys_off);
    const sm_ph_piece *pieces = (const sm_ph_piece *)(section + h->pieces_off);
    const sm_db_pattern *lengths = (const sm_db_pattern *)(section + h->lengths_off);
    uint32_t longest = 0;
    for (uint32_t i = 0; i < h->nkeys; i++) {
        const sm_ph_key *key = &keys[i];
        if (key->length > longest) longest = key->length;
        if (key->output >= n_outputs || key->length <= h->k || key->length > h->max_key ||
            key->blocks != (key->length + 63) / 64 || key->first_piece != (uint64_t)i * (h->k + 1) ||
            key->peq_at > h->peq_words ||
            (uint64_t)h->rows * (key->blocks + (key->blocks == 1)) > h->peq_words - key->peq_at)
            return PH_BAD("bad key");
        uint32_t next = 0;
        for (uint32_t p = 0; p <= h->k; p++) {
            const sm_ph_piece *pc = &pieces[key->first_piece + p];
            if (pc->key != i || pc->index != p || pc->offset != next || pc->length == 0 ||
                pc->length > key->length - pc->offset || lengths[key->first_piece + p].length != pc->length)
                return PH_BAD("bad piece");
            next = pc->offset + pc->length;
        }
        if (next != key->length) return PH_BAD("pieces do not cover their key");
        if (key->packed > 1 || (key->packed && (key->length > 32 || h->seeds == 0)))
            return PH_BAD("bad packed key");
    }
    /* The state keeps max_key + 3k + 1 bytes: tie it to the keys, which the
       section's size bounds. */
    if (longest != h->max_key) return PH_BAD("max_key is not the longest key");
    for (uint32_t L = 0; L <= SM_PH_SEED_MAX; L++) {
        if (!h->seed_off[L]) continue;
        uint64_t codes = (uint64_t)1 << (2 * L);
        if (!h->seeds || L == 0 || !apx_table_fits(h->seed_off[L], codes + 1 + h->seed_count[L], 4, sizeof *h, size))
            return PH_BAD("seed table out of bounds");
        const uint32_t *starts = (const uint32_t *)(section + h->seed_off[L]), *ids = starts + codes + 1;
        if (starts[0] != 0 || starts[codes] != h->seed_count[L]) return PH_BAD("bad seed table");
        for (uint64_t c = 0; c < codes; c++)
            if (starts[c] > starts[c + 1]) return PH_BAD("bad seed table");
        for (uint32_t e = 0; e < h->seed_count[L]; e++)
            if (ids[e] >= h->npieces || pieces[ids[e]].length != L) return PH_BAD("bad seed");
        if (!apx_table_fits(h->seed_present_off[L], (codes + 63) / 64, 8, sizeof *h, size))
            return PH_BAD("seed bitmap out of bounds");
        const uint64_t *present = (const uint64_t *)(section + h->seed_present_off[L]);
        for (uint64_t c = 0; c < codes; c++)
            if (((present[c / 64] >> (c % 64)) & 1u) != (starts[c + 1] > starts[c])) return PH_BAD("bad seed bitmap");
    }
    if (h->seeds) {
        if (h->seed_max == 0 || h->seed_max > SM_PH_SEED_MAX || !h->seed_off[h->seed_max] ||
            !apx_table_fits(h->seed_any_off, ((((uint64_t)1 << (2 * h->seed_max)) + 63) / 64), 8, sizeof *h, size))
            return PH_BAD("bad seed bitmap");
        for (uint32_t L = h->seed_max + 1; L <= SM_PH_SEED_MAX; L++)
            if (h->seed_off[L]) return PH_BAD("bad seed bitmap");
        if (h->seed_all_off) {
            uint64_t codes = (uint64_t)1 << (2 * h->seed_max);
            if (h->seed_all_count > PH_SEED_ALL_MAX ||
                !apx_table_fits(h->seed_all_off, codes + 1, 4, sizeof *h, size) ||
                !apx_table_fits(h->seed_all_off + seed_list_at(h->seed_max), h->seed_all_count, sizeof(sm_ph_seed),
                                sizeof *h, size))
                return PH_BAD("combined seed table out of bounds");
            const uint32_t *starts = (const uint32_t *)(section + h->seed_all_off);
            const sm_ph_seed *list = (const sm_ph_seed *)(section + h->seed_all_off + seed_list_at(h->seed_max));
            if (starts[0] != 0 || starts[codes] != h->seed_all_count) return PH_BAD("bad combined seed table");
            for (uint64_t c = 0; c < codes; c++)
                if (starts[c] > starts[c + 1]) return PH_BAD("bad combined seed table");
            for (uint64_t e = 0; e < h->seed_all_count; e++) {
                const sm_ph_seed *sd = &list[e];
                if (sd->piece >= h->npieces || pieces[sd->piece].key != sd->key ||
                    pieces[sd->piece].offset != sd->offset || pieces[sd->piece].length != sd->length ||
                    pieces[sd->piece].index != sd->index || sd->length > h->seed_max)
                    return PH_BAD("bad combined seed");
            }
        }
        if (h->seed_slots_off) {
            uint64_t codes = (uint64_t)1 << (2 * h->seed_max);
            if (!h->seed_all_off || h->match != SM_MATCH_MISMATCHES || h->seed_max > SM_PH_SLOT_SEED_MAX ||
                !apx_table_fits(h->seed_slots_off, codes * 2, sizeof(sm_ph_slot), sizeof *h, size))
                return PH_BAD("slot table out of bounds");
            const sm_ph_slot *slot = (const sm_ph_slot *)(section + h->seed_slots_off);
            for (uint64_t i = 0; i < codes * 2; i++) {
                const sm_ph_slot *sl = &slot[i];
                if (sl->overflow > 1 || (sl->overflow && sl->limit != 64) || (i % 2 && sl->overflow))
                    return PH_BAD("bad slot");
                /* The scan reads the window of an empty slot too. */
                if (sl->back > h->max_key) return PH_BAD("bad slot");
                if (sl->limit == -1) continue;
                const sm_ph_key *key = sl->key < h->nkeys ? &keys[sl->key] : NULL;
                if (!key || (sl->limit != (int8_t)h->k && !sl->overflow) || !key->packed || key->length > SM_PH_SLOT_KEY_MAX ||
                    sl->back == 0 || sl->back > key->length || sl->code != key->code || sl->care != key->care ||
                    sl->lanes != key->lanes)
                    return PH_BAD("bad slot");
            }
        }
        for (uint32_t p = 0; p < h->npieces; p++)
            if (pieces[p].length > SM_PH_SEED_MAX || !h->seed_off[pieces[p].length])
                return PH_BAD("a piece has no seed table");
        return SM_OK;
    }
    if (sm_ac_validate(section + h->ac_off, h->ac_size, h->npieces * 2u, err) != SM_OK)
        return err ? err->code : SM_ERR_FORMAT;
    return SM_OK;
#undef PH_BAD
}

/* ------------------------------------------------------------------- scan */

/* A piece hit waiting for the text after it: a window at x (k mismatches)
   or an anchor at q (k edits), of one key through one of its pieces. */
typedef struct {
    uint64_t at;
    uint32_t key, piece;
} ph_cand;

/* k edits: an end of a key with the cost of an alignment through an exact
   piece; the least over the anchors of an end is D(end). */
typedef struct {
    uint64_t end;
    uint32_t key, cost;
} ph_event;

struct sm_ph_state {
    uint32_t automaton;
    int started;
    uint64_t seq_start;      /* first position of the sequence */
    uint8_t *buf;            /* kept history, then the current block */
    size_t buf_cap, hist_len;
    sm_sink pieces;          /* automaton: piece hits of the current block */
    ph_cand *cand;           /* hits whose text is not all here yet */
    size_t ncand, cand_cap;
    ph_event *events;        /* k edits: ends not final yet */
    size_t nevents, events_cap;
    uint32_t *band;          /* k edits: two rows of the banded DP */
    uint32_t history, max_blocks, nkeys, k; /* what the buffers were sized for */
    /* Seed tables: the rolling 2-bit codes of the last bases (newest in the
       top bits), how many of them are bases, and buf packed two bits per
       symbol (codes, and 01 lanes where buf holds no base). */
    uint64_t roll;
    uint32_t run;
    uint8_t code_of[256];    /* 0-3 for a base letter, 4 otherwise */
    uint16_t pack_of[256];   /* its code, and 1 << 8 when it is not a base */
    int all_bases;           /* the packed buffer holds bases only */
    uint64_t *codes, *invalid;
    int popcnt;              /* the seed loop counts bits in one instruction */
};

int sm_ph_state_fits(const uint8_t *section, const sm_ph_state *st) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    return st && st->history >= h->history && st->nkeys >= h->nkeys && st->k >= h->k;
}

sm_ph_state *sm_ph_state_new(const uint8_t *section, const sm_cpu_features *cpu) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    sm_ph_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->popcnt = cpu->popcnt;
    st->history = h->history;
    st->nkeys = h->nkeys;
    st->k = h->k;
    st->buf_cap = h->history + PH_BLOCK;
    st->buf = malloc(st->buf_cap);
    st->codes = malloc((st->buf_cap / 32 + 4) * sizeof(uint64_t));
    st->invalid = malloc((st->buf_cap / 32 + 4) * sizeof(uint64_t));
    st->band = malloc(2 * (2 * (size_t)h->k + 1) * sizeof *st->band);
    for (int b = 0; b < 256; b++) {
        unsigned set = sm_nt_set[b] & 15u;
        st->code_of[b] = set == 1 ? 0 : set == 2 ? 1 : set == 4 ? 2 : set == 8 ? 3 : 4;
        st->pack_of[b] = st->code_of[b] > 3 ? (uint16_t)(1u << 8) : st->code_of[b];
    }
    st->pieces.own_hi = UINT64_MAX;
    if (!st->buf || !st->codes || !st->invalid || !st->band) {
        sm_ph_state_free(st);
        return NULL;
    }
    return st;
}

void sm_ph_state_free(sm_ph_state *st) {
    if (!st) return;
    free(st->buf);
    free(st->pieces.hits);
    free(st->cand);
    free(st->events);
    free(st->band);
    free(st->codes);
    free(st->invalid);
    free(st);
}

void sm_ph_state_reset(sm_ph_state *st) {
    st->automaton = 0;
    st->started = 0;
    st->hist_len = 0;
    st->ncand = 0;
    st->nevents = 0;
    st->roll = 0;
    st->run = 0;
}

/* Room for one more element in a doubling array; -1 when out of memory. */
static int grow(void **items, size_t n, size_t *cap, size_t elem, size_t first) {
    if (n < *cap) return 0;
    size_t next = *cap ? *cap * 2 : first;
    void *p = realloc(*items, next * elem);
    if (!p) return -1;
    *items = p;
    *cap = next;
    return 0;
}

static int push_cand(sm_ph_state *st, uint64_t at, uint32_t key, uint32_t piece) {
    if (grow((void **)&st->cand, st->ncand, &st->cand_cap, sizeof *st->cand, 1024) != 0) return -1;
    ph_cand *c = &st->cand[st->ncand++];
    c->at = at;
    c->key = key;
    c->piece = piece;
    return 0;
}

static int push_event(sm_ph_state *st, uint64_t end, uint32_t key, uint32_t cost) {
    if (grow((void **)&st->events, st->nevents, &st->events_cap, sizeof *st->events, 256) != 0) return -1;
    ph_event *e = &st->events[st->nevents++];
    e->end = end;
    e->key = key;
    e->cost = cost;
    return 0;
}

/* Set lanes of a mismatch word (each 2-bit lane 0 or 1): one popcnt where
   the caller runs on a CPU that has it, else sums by fields (the build
   assumes no popcnt instruction). */
static inline uint32_t lane_count(uint64_t mism, int hw_popcount) {
#if defined(__GNUC__) || defined(__clang__)
    if (hw_popcount) return (uint32_t)__builtin_popcountll(mism);
#endif
    (void)hw_popcount;
    uint64_t sum = (mism & 0x3333333333333333ull) + ((mism >> 2) & 0x3333333333333333ull);
    sum = (sum + (sum >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((sum * 0x0101010101010101ull) >> 56);
}

/* Eight bytes as a little-endian number (symbol 4i of a packed byte array
   in the low bits, whatever the host's order). */
static inline uint64_t load_le64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
#endif
}

/* k mismatches: the window at x of key, found through its piece; reported
   unless an earlier piece of the key is also exact there. t = text at x. */
static void verify_window(const sm_ph_header *h, const uint8_t *section, const sm_ph_key *key, uint32_t piece,
                          const uint8_t *t, uint64_t x, sm_sink *sink) {
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + key->first_piece;
    const uint64_t *peq = (const uint64_t *)(section + h->peq_off) + key->peq_at;
    uint32_t blocks = key->blocks, k = h->k, mism = 0;
    for (uint32_t p = 0; p <= k; p++) {
        if (p == piece) continue; /* exact by construction */
        uint32_t before = mism;
        for (uint32_t i = pc[p].offset, e = pc[p].offset + pc[p].length; i < e; i++) {
            uint64_t word = peq[(size_t)h->class_of[t[i]] * blocks + i / 64];
            if (!((word >> (i % 64)) & 1u) && ++mism > k) return;
        }
        if (p < piece && mism == before) return; /* piece p reports this window */
    }
    sm_sink_add(sink, x, x + key->length, key->output >> 1, (int)(key->output & 1u), mism);
}

/* verify_window for a packed key: buf index at of x in the packed text. */
static inline void verify_packed(const sm_ph_header *h, const uint8_t *section, const sm_ph_state *st,
                          const sm_ph_key *key, uint32_t piece, size_t at, uint64_t x, sm_sink *sink) {
    /* The byte holding symbol at, then at most 6 bits shifted out: 29
       symbols from one load, the rest from the next. */
    const uint8_t *cb = (const uint8_t *)st->codes + at / 4, *ib = (const uint8_t *)st->invalid + at / 4;
    unsigned shift = (unsigned)(at % 4) * 2;
    uint64_t text = load_le64(cb) >> shift, bad = load_le64(ib) >> shift;
    if (key->length > 29 && shift) {
        text |= load_le64(cb + 8) << (64 - shift);
        bad |= load_le64(ib + 8) << (64 - shift);
    }
    uint64_t diff = text ^ key->code;
    uint64_t mism = ((diff | (diff >> 1)) & key->care) | (bad & key->lanes);
    unsigned count = lane_count(mism, 0);
    if (count > h->k) return;
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + key->first_piece;
    for (uint32_t p = 0; p < piece; p++) {
        uint64_t lanes = (pc[p].length == 32 ? ~(uint64_t)0 : (((uint64_t)1 << (2 * pc[p].length)) - 1))
                         << (2 * pc[p].offset);
        if (!(mism & lanes)) return; /* piece p reports this window */
    }
    sm_sink_add(sink, x, x + key->length, key->output >> 1, (int)(key->output & 1u), count);
}

/* Edit distance DP in a band |t - i| <= kk: rows i = key symbols from
   first, forwards (dir 1) or backwards (dir -1); columns t = text symbols
   from the anchor, text[t - 1] forwards or text[-t] backwards, at most
   avail of them. Both start at the anchor (D(0, t) = t, D(i, 0) = i);
   values above kk are kept as kk + 1. Leaves the last row in out[d],
   t = rows - kk + d, and returns its least value (kk + 1 when every cell
   of some row passed kk: the rest cannot come back). */
static uint32_t band_dp(const sm_ph_header *h, const sm_ph_key *key, const uint64_t *peq, uint32_t first, int dir,
                        uint32_t rows, const uint8_t *text, uint64_t avail, uint32_t kk, uint32_t *work,
                        uint32_t **out) {
    uint32_t width = 2 * kk + 1, dead = kk + 1, blocks = key->blocks;
    uint32_t *prev = work, *cur = work + width;
    uint32_t least = dead;
    for (uint32_t d = 0; d < width; d++) {
        int64_t t = (int64_t)d - kk;
        prev[d] = t >= 0 && (uint64_t)t <= avail ? (uint32_t)t : dead;
        if (prev[d] < least) least = prev[d];
    }
    for (uint32_t i = 1; i <= rows; i++) {
        uint32_t j = dir > 0 ? first + i - 1 : first - (i - 1);
        least = dead;
        for (uint32_t d = 0; d < width; d++) {
            int64_t t = (int64_t)i + d - kk;
            if (t < 0 || (uint64_t)t > avail) {
                cur[d] = dead;
                continue;
            }
            uint32_t v = d + 1 < width ? prev[d + 1] + 1 : dead;     /* key symbol unmatched */
            if (d > 0 && cur[d - 1] + 1 < v) v = cur[d - 1] + 1;     /* text symbol unmatched */
            if (t >= 1) {
                uint8_t byte = dir > 0 ? text[t - 1] : text[-t];
                uint64_t word = peq[(size_t)h->class_of[byte] * blocks + j / 64];
                uint32_t diag = prev[d] + (uint32_t)(((word >> (j % 64)) & 1u) ^ 1u);
                if (diag < v) v = diag;
            }
            if (v > dead) v = dead;
            cur[d] = v;
            if (v < least) least = v;
        }
        if (least > kk) return dead;
        uint32_t *swap = prev;
        prev = cur;
        cur = swap;
    }
    *out = prev;
    return least;
}

/* Anchored Myers for a piece of a one-block key: rows = the key symbols
   [lo, lo + rows) read in the word's order (eq words shifted right by lo),
   columns = text symbols from the anchor, text[t - 1] forwards or text[-t]
   backwards (dir), at most avail of them. D(0, t) = t and D(i, 0) = i.
   Ukkonen's cut-off tracks the last row y with D(y, t) <= kk and stops
   when there is none: no later cell can come back under kk. Calls back
   ends[t] = D(rows, t) for every column t with D(rows, t) <= kk through
   *ends (least is returned; kk + 1 when none). */
static uint32_t anchored_myers(const sm_ph_header *h, const uint64_t *peq, uint32_t lo, int dir, uint32_t rows,
                               const uint8_t *text, uint64_t avail, uint32_t kk, uint8_t *ends, int *died) {
    uint64_t mask = rows == 64 ? ~(uint64_t)0 : (((uint64_t)1 << rows) - 1);
    uint64_t columns = (uint64_t)rows + kk < avail ? (uint64_t)rows + kk : avail;
    alive_state a = alive_start(rows, kk);
    if (rows <= kk) ends[0] = (uint8_t)rows;
    for (uint64_t t = 1; t <= columns; t++) {
        uint8_t byte = dir > 0 ? text[t - 1] : text[-(int64_t)t];
        alive_step(&a, (peq[h->class_of[byte]] >> lo) & mask, rows, kk);
        if (a.died) {
            if (died) *died = 1;
            return a.least;
        }
        if (a.y == rows) ends[t] = (uint8_t)a.score_y; /* then score_y is D(rows, t) */
    }
    return a.least;
}

/* k edits: the ends of alignments of key that hold piece exactly at q, each
   with its least cost, into st->events. The text is buf from buf_pos0 up to
   limit. */
static void verify_anchor(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint32_t key_index,
                          uint32_t piece, uint64_t q, uint64_t buf_pos0, uint64_t limit, sm_sink *sink) {
    const sm_ph_key *key = (const sm_ph_key *)(section + h->keys_off) + key_index;
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + piece;
    const uint64_t *peq = (const uint64_t *)(section + h->peq_off) + key->peq_at;
    uint32_t k = h->k, *row;
    const uint8_t *at_q = st->buf + (q - buf_pos0);
    uint64_t floor = st->seq_start > buf_pos0 ? st->seq_start : buf_pos0;
    /* The key before the piece, against the text before q (free start). */
    uint32_t before = 0;
    uint8_t ends[64 + 256];
    int fast = key->blocks == 1 && k <= 255;
    uint32_t rest = key->length - pc->offset - pc->length;
    if (h->alive_off) {
        /* Most anchors die within the first few symbols on either side:
           the tables of the piece say so from those symbols alone. */
        uint32_t c = h->alive_columns;
        uint64_t words = ((uint64_t)1 << (2 * c)) / 64;
        const uint64_t *alive = (const uint64_t *)(section + h->alive_off) + (uint64_t)piece * 2 * words;
        if (pc->offset > 0 && q - floor >= c) {
            uint32_t code = 0, bad = 0;
            for (uint32_t j = 0; j < c; j++) { /* text order: the base nearest the piece last */
                uint32_t v = st->code_of[at_q[-1 - (int64_t)j]];
                bad |= v;
                code |= (v & 3u) << (2 * (c - 1 - j));
            }
            if (bad < 4 && !((alive[code / 64] >> (code % 64)) & 1u)) return;
        }
        if (rest > 0 && q + pc->length + c <= limit) {
            uint32_t code = 0, bad = 0;
            for (uint32_t j = 0; j < c; j++) {
                uint32_t v = st->code_of[at_q[pc->length + j]];
                bad |= v;
                code |= (v & 3u) << (2 * j);
            }
            if (bad < 4 && !((alive[words + code / 64] >> (code % 64)) & 1u)) return;
        }
    }
    if (pc->offset > 0) {
        if (fast) /* backwards: the reversed rows, key symbols o - 1 down to 0 */
            before = anchored_myers(h, peq + h->rows, key->length - pc->offset, -1, pc->offset, at_q, q - floor, k,
                                    ends, NULL);
        else
            before = band_dp(h, key, peq, pc->offset - 1, -1, pc->offset, at_q, q - floor, k, st->band, &row);
        if (before > k) return;
    }
    /* The key after the piece, against the text after it: every end. */
    uint64_t after_pos = q + pc->length;
    if (after_pos > limit) return;
    uint32_t kk = k - before;
    if (fast && rest > 0) {
        uint64_t avail = limit - after_pos;
        memset(ends, 0xff, (size_t)rest + kk + 1);
        if (anchored_myers(h, peq, pc->offset + pc->length, 1, rest, at_q + pc->length, avail, kk, ends, NULL) > kk)
            return;
        for (uint32_t t = 0; t <= rest + kk && t <= avail; t++)
            if (ends[t] <= kk && push_event(st, after_pos + t, key_index, before + ends[t]) != 0) sink->failed = 1;
        return;
    }
    if (band_dp(h, key, peq, pc->offset + pc->length, 1, rest, at_q + pc->length, limit - after_pos, kk, st->band,
                &row) > kk)
        return;
    for (uint32_t d = 0; d <= 2 * kk; d++) {
        int64_t t = (int64_t)rest + d - kk;
        if (t < 0 || row[d] > kk) continue;
        if (push_event(st, after_pos + (uint64_t)t, key_index, before + row[d]) != 0) sink->failed = 1;
    }
}

/* One piece hit at q: a window or an anchor to verify, now when its text
   is all here, else when it comes. */
static inline void hit_at(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                          uint64_t seen, uint64_t q, uint32_t key_index, uint32_t offset, uint32_t piece,
                          uint32_t index, sm_sink *sink) {
    const sm_ph_key *key = (const sm_ph_key *)(section + h->keys_off) + key_index;
    if (h->match == SM_MATCH_MISMATCHES) {
        if (q < st->seq_start + offset) return; /* the window would begin before the sequence */
        uint64_t x = q - offset;
        if (x + key->length <= seen) {
            if (key->packed) verify_packed(h, section, st, key, index, (size_t)(x - buf_pos0), x, sink);
            else verify_window(h, section, key, index, st->buf + (x - buf_pos0), x, sink);
        } else if (push_cand(st, x, key_index, index) != 0) {
            sink->failed = 1;
        }
        return;
    }
    /* A piece cannot start before the sequence; only a crafted database whose
       automaton disagrees with its piece lengths reports one. */
    if (q < st->seq_start) return;
    /* The latest end an alignment through the anchor can have. */
    uint64_t last = q + key->length - offset + h->k;
    if (last <= seen) verify_anchor(h, section, st, key_index, piece, q, buf_pos0, seen, sink);
    else if (push_cand(st, q, key_index, piece) != 0) sink->failed = 1;
}

static inline void piece_hit(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                             uint64_t seen, uint64_t q, uint32_t piece, sm_sink *sink) {
    const sm_ph_piece *pc = (const sm_ph_piece *)(section + h->pieces_off) + piece;
    hit_at(h, section, st, buf_pos0, seen, q, pc->key, pc->offset, piece, pc->index, sink);
}

static int by_key_end_cost(const void *a, const void *b) {
    const ph_event *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* Verifies what waited for the text up to seen; buf holds [buf_pos0, seen).
   At the end of the sequence (final) everything left is decided. */
static void finish_block(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t buf_pos0,
                         uint64_t seen, int final, sm_sink *sink) {
    const sm_ph_key *keys = (const sm_ph_key *)(section + h->keys_off);
    const sm_ph_piece *pieces = (const sm_ph_piece *)(section + h->pieces_off);
    uint32_t k = h->k;
    size_t kept = 0;
    for (size_t i = 0; i < st->ncand; i++) {
        ph_cand c = st->cand[i];
        const sm_ph_key *key = &keys[c.key];
        if (h->match == SM_MATCH_MISMATCHES) {
            if (c.at + key->length > seen) {
                if (!final) st->cand[kept++] = c; /* at the end, a window past it holds no hit */
            } else if (key->packed) {
                verify_packed(h, section, st, key, c.piece, (size_t)(c.at - buf_pos0), c.at, sink);
            } else {
                verify_window(h, section, key, c.piece, st->buf + (c.at - buf_pos0), c.at, sink);
            }
        } else {
            uint64_t last = c.at + key->length - pieces[c.piece].offset + k;
            if (last <= seen || final) verify_anchor(h, section, st, c.key, c.piece, c.at, buf_pos0, seen, sink);
            else st->cand[kept++] = c;
        }
    }
    st->ncand = kept;
    if (h->match == SM_MATCH_MISMATCHES || st->nevents == 0) return;
    /* Ends up to safe are final: anchors still waiting or still to come
       give ends after seen - 2k. Report each end once, at its least cost. */
    uint64_t safe = final ? seen : (seen > 2ull * k ? seen - 2ull * k : 0);
    qsort(st->events, st->nevents, sizeof *st->events, by_key_end_cost);
    kept = 0;
    for (size_t i = 0; i < st->nevents; i++) {
        ph_event e = st->events[i];
        if (i > 0 && e.key == st->events[i - 1].key && e.end == st->events[i - 1].end) continue;
        if (e.end > safe) {
            st->events[kept++] = e;
            continue;
        }
        const sm_ph_key *key = &keys[e.key];
        sm_approx_emit_end(sink, key->output >> 1, (int)(key->output & 1u), e.end, e.cost);
    }
    st->nevents = kept;
}

/* Packs buf[0, n) two bits per symbol for verify_packed: four symbols make
   one byte of codes and one of invalid lanes, from a table giving a byte's
   code in bits 0-1 and its invalid flag in bit 8. */
static void pack_buffer(sm_ph_state *st, size_t n) {
    uint8_t *codes = (uint8_t *)st->codes, *invalid = (uint8_t *)st->invalid;
    const uint16_t *pk = st->pack_of;
    const uint8_t *b = st->buf;
    size_t bytes = (n + 3) / 4, full = n / 4;
    unsigned any_invalid = 0;
    for (size_t o = 0; o < full; o++, b += 4) {
        unsigned v = pk[b[0]] | (unsigned)pk[b[1]] << 2 | (unsigned)pk[b[2]] << 4 | (unsigned)pk[b[3]] << 6;
        codes[o] = (uint8_t)v;
        invalid[o] = (uint8_t)(v >> 8);
        any_invalid |= v;
    }
    if (full < bytes) {
        unsigned v = 0;
        for (size_t j = 0; j < n - full * 4; j++) v |= (unsigned)pk[b[j]] << (2 * j);
        codes[full] = (uint8_t)v;
        invalid[full] = (uint8_t)(v >> 8);
        any_invalid |= v;
    }
    st->all_bases = (any_invalid >> 8) == 0;
    /* Zero the bytes an unaligned 8-byte read past the end may touch. */
    memset(codes + bytes, 0, 16);
    memset(invalid + bytes, 0, 16);
}

/* The pieces ending at the base just read (its end q_end), through the
   combined table when the last seed_max bases are all bases, else through
   the table of each piece length. */
static inline void position_hits(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, uint64_t roll,
                                 uint32_t run, uint64_t q_end, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
    uint32_t max = h->seed_max;
    if (run >= max) {
        uint64_t code = roll >> (64 - 2 * max);
        const uint64_t *any = (const uint64_t *)(section + h->seed_any_off);
        if (!((any[code / 64] >> (code % 64)) & 1u)) return;
        if (h->seed_all_off) {
            const uint32_t *starts = (const uint32_t *)(section + h->seed_all_off);
            const sm_ph_seed *all = (const sm_ph_seed *)(section + h->seed_all_off + seed_list_at(max));
            uint32_t c = h->alive_columns;
            const uint64_t *alive = h->alive_off ? (const uint64_t *)(section + h->alive_off) : NULL;
            /* alive_columns means nothing without the tables (a crafted header may hold anything) */
            uint64_t words = alive ? ((uint64_t)1 << (2 * c)) / 64 : 0;
            for (uint32_t e = starts[code], end = starts[code + 1]; e < end; e++) {
                const sm_ph_seed *sd = &all[e];
                if (alive && sd->offset > 0 && run >= sd->length + c) {
                    /* The bases before the piece are in the rolling code. */
                    uint64_t before = (roll >> (64 - 2 * (sd->length + c))) & ((words * 64) - 1);
                    if (!((alive[sd->piece * 2 * words + before / 64] >> (before % 64)) & 1u)) continue;
                }
                hit_at(h, section, st, buf_pos0, seen, q_end - sd->length, sd->key, sd->offset, sd->piece,
                       sd->index, sink);
            }
            return;
        }
    }
    for (uint32_t L = 1; L <= max; L++) {
        if (!h->seed_off[L] || run < L) continue;
        uint64_t code = roll >> (64 - 2 * L);
        const uint64_t *present = (const uint64_t *)(section + h->seed_present_off[L]);
        if (!((present[code / 64] >> (code % 64)) & 1u)) continue;
        const uint32_t *starts = (const uint32_t *)(section + h->seed_off[L]);
        const uint32_t *ids = starts + ((size_t)1 << (2 * L)) + 1;
        for (uint32_t e = starts[code], end = starts[code + 1]; e < end; e++)
            piece_hit(h, section, st, buf_pos0, seen, q_end - L, ids[e], sink);
    }
}

/* Mismatches left in a slot's window ending... at q_end - back: the packed
   text against its key, summed over the 01 lanes. */
static inline uint32_t slot_mismatches(const sm_ph_state *st, const sm_ph_slot *sl, size_t at, int hw_popcount,
                                       int all_bases) {
    unsigned shift = (unsigned)(at % 4) * 2;
    uint64_t text = load_le64((const uint8_t *)st->codes + at / 4) >> shift;
    /* A buffer of bases only needs no look at the invalid lanes. */
    uint64_t bad = all_bases ? 0 : load_le64((const uint8_t *)st->invalid + at / 4) >> shift;
    uint64_t diff = text ^ sl->code;
    uint64_t mism = ((diff | (diff >> 1)) & sl->care) | (bad & sl->lanes);
    return lane_count(mism, hw_popcount);
}

/* The pieces through the seed tables: at each base, the codes of the last
   bases index the pieces that end there. */
#if defined(__GNUC__) || defined(__clang__)
#define PH_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PH_ALWAYS_INLINE inline
#endif

static PH_ALWAYS_INLINE void seed_scan_body(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st,
                                            const uint8_t *text, size_t n, uint64_t pos0, uint64_t buf_pos0,
                                            uint64_t seen, sm_sink *sink, int hw_popcount, int all_bases) {
    uint64_t roll = st->roll;
    uint32_t run = st->run, max = h->seed_max;
    size_t i = 0;
    if (h->seed_slots_off) {
        /* k mismatches, short packed keys: both slots of a code are checked
           without a branch; only a hit, a code with more pieces, a window
           that may reach outside the text seen or a recent non-base goes
           the general way. Inside [first, last) every window lies in buf. */
        const sm_ph_slot *slot = (const sm_ph_slot *)(section + h->seed_slots_off);
        uint64_t floor = st->seq_start > buf_pos0 ? st->seq_start : buf_pos0;
        size_t first = floor + h->max_key > pos0 ? (size_t)(floor + h->max_key - pos0) : 0;
        size_t last = n > h->max_key ? n - h->max_key : 0;
        for (; i < first && i < n; i++) {
            unsigned c = st->code_of[text[i]];
            if (c > 3) {
                run = 0;
                continue;
            }
            roll = (roll >> 2) | ((uint64_t)c << 62);
            run += run < 32;
            position_hits(h, section, st, roll, run, pos0 + i + 1, buf_pos0, seen, sink);
        }
        unsigned code_shift = 64 - 2 * max;
        for (; i < last; i++) {
            unsigned c = st->code_of[text[i]];
            if (c > 3) {
                run = 0;
                continue;
            }
            roll = (roll >> 2) | ((uint64_t)c << 62);
            run += run < 32;
            uint64_t q_end = pos0 + i + 1;
            if (run < max) {
                position_hits(h, section, st, roll, run, q_end, buf_pos0, seen, sink);
                continue;
            }
            const sm_ph_slot *sl = &slot[2 * (roll >> code_shift)];
            uint32_t n0 =
                slot_mismatches(st, &sl[0], (size_t)(q_end - sl[0].back - buf_pos0), hw_popcount, all_bases);
            uint32_t n1 =
                slot_mismatches(st, &sl[1], (size_t)(q_end - sl[1].back - buf_pos0), hw_popcount, all_bases);
            if (((int)n0 <= sl[0].limit) | ((int)n1 <= sl[1].limit))
                position_hits(h, section, st, roll, run, q_end, buf_pos0, seen, sink);
        }
    }
    /* Most bases end no piece: the bitmap of the last seed_max bases says
       so without a call. */
    const uint64_t *any = (const uint64_t *)(section + h->seed_any_off);
    unsigned any_shift = 64 - 2 * max;
    for (; i < n; i++) {
        unsigned c = st->code_of[text[i]];
        if (c > 3) {
            run = 0;
            continue;
        }
        roll = (roll >> 2) | ((uint64_t)c << 62);
        run += run < 32;
        if (run >= max) {
            uint64_t code = roll >> any_shift;
            if (!((any[code / 64] >> (code % 64)) & 1u)) continue;
        }
        position_hits(h, section, st, roll, run, pos0 + i + 1, buf_pos0, seen, sink);
    }
    (void)hw_popcount;
    (void)all_bases;
    st->roll = roll;
    st->run = run;
}

static void seed_scan_plain(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, const uint8_t *text,
                            size_t n, uint64_t pos0, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
    if (st->all_bases) seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 0, 1);
    else seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 0, 0);
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
/* The same loop where the CPU counts bits in one instruction. */
__attribute__((target("popcnt"))) static void seed_scan_popcnt(const sm_ph_header *h, const uint8_t *section,
                                                               sm_ph_state *st, const uint8_t *text, size_t n,
                                                               uint64_t pos0, uint64_t buf_pos0, uint64_t seen,
                                                               sm_sink *sink) {
    if (st->all_bases) seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 1, 1);
    else seed_scan_body(h, section, st, text, n, pos0, buf_pos0, seen, sink, 1, 0);
}
#define PH_HAVE_POPCNT_PATH 1
#endif

/* The pieces through the seed tables, on the best loop this CPU runs. */
static void seed_scan(const sm_ph_header *h, const uint8_t *section, sm_ph_state *st, const uint8_t *text, size_t n,
                      uint64_t pos0, uint64_t buf_pos0, uint64_t seen, sm_sink *sink) {
#ifdef PH_HAVE_POPCNT_PATH
    if (st->popcnt) {
        seed_scan_popcnt(h, section, st, text, n, pos0, buf_pos0, seen, sink);
        return;
    }
#endif
    seed_scan_plain(h, section, st, text, n, pos0, buf_pos0, seen, sink);
}

void sm_ph_scan(const uint8_t *section, sm_ph_state *st, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    const sm_db_pattern *lengths = (const sm_db_pattern *)(section + h->lengths_off);
    if (!st->started) {
        st->started = 1;
        st->seq_start = pos0;
        st->hist_len = 0;
    }
    while (len > 0) {
        size_t n = len < PH_BLOCK ? len : PH_BLOCK;
        memcpy(st->buf + st->hist_len, text, n);
        uint64_t seen = pos0 + n, buf_pos0 = pos0 - st->hist_len;
        if (h->seeds) {
            if (h->match == SM_MATCH_MISMATCHES) pack_buffer(st, st->hist_len + n);
            seed_scan(h, section, st, text, n, pos0, buf_pos0, seen, sink);
        } else {
            st->pieces.n = 0;
            sm_ac_scan(section + h->ac_off, lengths, &st->automaton, text, n, pos0, &st->pieces);
            if (st->pieces.failed) {
                sink->failed = 1;
                st->pieces.failed = 0;
            }
            for (size_t i = 0; i < st->pieces.n; i++)
                piece_hit(h, section, st, buf_pos0, seen, st->pieces.hits[i].start, st->pieces.hits[i].pattern, sink);
        }
        finish_block(h, section, st, buf_pos0, seen, 0, sink);
        size_t total = st->hist_len + n, keep = total < h->history ? total : h->history;
        memmove(st->buf, st->buf + total - keep, keep);
        st->hist_len = keep;
        text += n;
        len -= n;
        pos0 = seen;
    }
}

void sm_ph_finish(const uint8_t *section, sm_ph_state *st, uint64_t end_pos, sm_sink *sink) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    if (st->started) finish_block(h, section, st, end_pos - st->hist_len, end_pos, 1, sink);
    sm_ph_state_reset(st);
}
