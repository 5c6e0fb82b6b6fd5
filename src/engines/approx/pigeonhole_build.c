/* The pigeonhole filter's section: keys, pieces, peq rows, the death tables
 * of k edits, and the pieces' finder (seed tables or an automaton). */
#include <stdlib.h>

#include "engines/approx/pigeonhole_private.h"
#include "engines/automaton/automaton.h"

/* Expected piece hits per base from which the branch-free slots pay. */
#define PH_SLOT_MIN_RATE 0.2

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
    uint64_t count = ph_piece_expansions(seq, len, SM_ALPHABET_DNA);
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

/* Sets the bit of every string of the remaining depth of bases (code so
   far in code, next base at bit 2 * column) that the side survives. */
static void alive_walk(const sm_ph_header *h, const uint64_t *peq, uint32_t lo, uint32_t rows, uint32_t kk,
                       uint32_t columns, uint32_t column, uint64_t code, ph_alive a, uint64_t *bits) {
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
        ph_alive next = a;
        uint64_t eq = (peq[h->class_of[(uint8_t)"ACGT"[b]]] >> lo) & mask;
        ph_alive_step(&next, eq, rows, kk);
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
    alive_walk(h, peq, lo, rows, kk, columns, 0, 0, ph_alive_start(rows, kk), bits);
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
    ph_walk_plans(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION, add_piece, &pl);
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
        uint64_t count = ph_piece_expansions(keys[pc->key].seq + pc->offset, pc->length, alphabet);
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
        off = apx_round_up(off + ph_seed_list_at(seed_max) + all_count * sizeof(sm_ph_seed), APX_ALIGN);
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
        uint64_t count = ph_piece_expansions(seq, pc->length, alphabet);
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
            sm_ph_seed *list = (sm_ph_seed *)(base + all_off + ph_seed_list_at(seed_max));
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
            const sm_ph_seed *list = (const sm_ph_seed *)(base + all_off + ph_seed_list_at(seed_max));
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
