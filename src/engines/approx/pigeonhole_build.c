/* The pigeonhole filter's section: keys, pieces, peq rows, the death tables
 * of k edits, and the pieces' finder (seed tables or an automaton). */
#include <stdlib.h>

#include "engines/approx/pigeonhole_private.h"
#include "engines/automaton/automaton.h"
#include "engines/kmer/kmer.h"

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
    uint64_t count = sm_ph_piece_expansions(seq, len, SM_ALPHABET_DNA);
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

/* ------------------------------------------------------------ seed tables */

/* The probe of a piece (see sm_ph_probe); the validator checks every field
   against the same rule. */
void sm_ph_probe_fill(sm_ph_probe *pr, const sm_ph_piece *pc, const sm_ph_key *keys, uint32_t piece) {
    const sm_ph_key *key = &keys[pc->key];
    memset(pr, 0, sizeof *pr);
    if (key->packed) {
        pr->code = key->code;
        pr->care = key->care;
        pr->lanes = key->lanes;
    }
    pr->key = pc->key;
    pr->piece = piece;
    pr->key_length = key->length;
    pr->offset = pc->offset;
    pr->length = (uint16_t)pc->length;
    pr->index = (uint16_t)pc->index;
}

/* The seed tables before they are placed: k-mer direct tables one after
   another in buf, each 64-byte aligned, offsets from the start of buf. */
typedef struct {
    sm_buf buf;
    uint64_t off[SM_PH_SEED_MAX + 1], size[SM_PH_SEED_MAX + 1];
    uint64_t all_off, all_size;     /* all_size 0: no combined table */
    uint64_t any_off;               /* bitmap over codes of max bases */
    uint32_t max;
} seed_tables;

/* The k-mer code of a concrete dna string, first base highest. */
static uint64_t string_code(const uint8_t *seq, uint32_t len) {
    uint64_t c = 0;
    for (uint32_t j = 0; j < len; j++) c = c << 2 | (uint64_t)base_code(seq[j]);
    return c;
}

/* Appends one table (pairs of code << 32 | piece * 2) at a 64-byte boundary. */
static int append_table(seed_tables *t, uint64_t *pairs, size_t n, uint32_t k, uint64_t *off, uint64_t *size,
                        sm_error *err) {
    static const uint8_t acgt[4] = {'A', 'C', 'G', 'T'};
    uint8_t code_of[256];
    for (int b = 0; b < 256; b++) {
        unsigned set = sm_nt_set[b] & 15u;
        code_of[b] = set == 1 ? 0 : set == 2 ? 1 : set == 4 ? 2 : set == 8 ? 3 : 0xff;
    }
    size_t at = (size_t)apx_round_up(t->buf.len, APX_ALIGN);
    if (at > t->buf.len) { /* the first table starts at 0, in a buffer not yet allocated */
        if (sm_buf_reserve(&t->buf, at - t->buf.len) != SM_OK)
            return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
        memset(t->buf.data + t->buf.len, 0, at - t->buf.len);
        t->buf.len = at;
    }
    int rc = sm_kt_build_codes(pairs, n, k, code_of, acgt, 4, 0, &t->buf, err);
    if (rc != SM_OK) return rc;
    *off = at;
    *size = t->buf.len - at;
    return SM_OK;
}

/* The pieces' tables from their concrete strings (output piece * 2): one
   per piece length, the combined one over seed_max bases unless it would
   pass PH_SEED_ALL_MAX entries, and the bitmap of codes some suffix of
   which is a piece. */
static int build_seed_tables(const sm_ac_key *strings, size_t nstrings, seed_tables *t, sm_error *err) {
    uint64_t count[SM_PH_SEED_MAX + 1] = {0};
    for (size_t e = 0; e < nstrings; e++) count[strings[e].len]++;
    t->max = 0;
    for (uint32_t L = 1; L <= SM_PH_SEED_MAX; L++)
        if (count[L]) t->max = L;
    uint32_t max = t->max;
    uint64_t all_count = 0, most = 0;
    for (uint32_t L = 1; L <= max; L++) {
        all_count += count[L] << (2 * (max - L));
        if (count[L] > most) most = count[L];
    }
    if (all_count <= PH_SEED_ALL_MAX && all_count > most) most = all_count;
    uint64_t *pairs = malloc((size_t)most * sizeof *pairs);
    if (!pairs) return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
    int rc = SM_OK;
    for (uint32_t L = 1; L <= max && rc == SM_OK; L++) {
        if (!count[L]) continue;
        size_t n = 0;
        for (size_t e = 0; e < nstrings; e++)
            if (strings[e].len == L) pairs[n++] = string_code(strings[e].seq, L) << 32 | strings[e].output;
        rc = append_table(t, pairs, n, L, &t->off[L], &t->size[L], err);
    }
    if (rc == SM_OK && all_count == count[max]) {
        /* Every piece has max bases: that table is the combined one. */
        t->all_off = t->off[max];
        t->all_size = t->size[max];
    } else if (rc == SM_OK && all_count <= PH_SEED_ALL_MAX) {
        /* A piece of L bases under every code of max bases ending with it. */
        size_t n = 0;
        for (size_t e = 0; e < nstrings; e++) {
            uint32_t L = strings[e].len;
            uint64_t c = string_code(strings[e].seq, L), older = (uint64_t)1 << (2 * (max - L));
            for (uint64_t o = 0; o < older; o++) pairs[n++] = (o << (2 * L) | c) << 32 | strings[e].output;
        }
        rc = append_table(t, pairs, n, max, &t->all_off, &t->all_size, err);
    }
    free(pairs);
    if (rc != SM_OK) return rc;
    sm_kt_view v;
    if (t->all_size) {
        sm_kt_view_of(t->buf.data + t->all_off, &v);
        t->any_off = (uint64_t)((const uint8_t *)v.bits - t->buf.data);
        return SM_OK;
    }
    /* No combined table: the bitmap alone, from the tables of each length. */
    uint64_t codes = (uint64_t)1 << (2 * max), words = (codes + 63) / 64;
    size_t at = (size_t)apx_round_up(t->buf.len, APX_ALIGN);
    if (sm_buf_reserve(&t->buf, at - t->buf.len + words * 8) != SM_OK)
        return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
    memset(t->buf.data + t->buf.len, 0, at - t->buf.len + words * 8);
    t->any_off = at;
    t->buf.len = at + words * 8;
    uint64_t *any = (uint64_t *)(t->buf.data + at);
    for (uint32_t L = 1; L <= max; L++) {
        if (!t->size[L]) continue;
        sm_kt_view_of(t->buf.data + t->off[L], &v);
        uint64_t mask = ((uint64_t)1 << (2 * L)) - 1;
        for (uint64_t c = 0; c < codes; c++)
            if (sm_kt_has(&v, c & mask)) any[c / 64] |= (uint64_t)1 << (c % 64);
    }
    return SM_OK;
}

/* Two slots per code of seed_max bases: the first two pieces the combined
   table lists under it, each with its key's packed form. */
static void fill_slots(const sm_ph_header *h, const uint8_t *base, sm_ph_slot *slot) {
    const sm_ph_key *kt = (const sm_ph_key *)(base + h->keys_off);
    const sm_ph_piece *pieces = (const sm_ph_piece *)(base + h->pieces_off);
    sm_kt_view all;
    sm_kt_view_of(base + h->seed_all_off, &all);
    uint64_t codes = (uint64_t)1 << (2 * h->seed_max);
    for (uint64_t c = 0; c < codes; c++) {
        const uint32_t *ids = NULL;
        uint32_t count = sm_kt_has(&all, c) ? sm_kt_outputs(&all, c, &ids) : 0;
        for (uint32_t j = 0; j < 2; j++) {
            sm_ph_slot *sl = &slot[2 * c + j];
            sl->limit = -1;
            if (j >= count) continue;
            const sm_ph_piece *pc = &pieces[ids[j] >> 1];
            sl->code = kt[pc->key].code;
            sl->care = kt[pc->key].care;
            sl->lanes = kt[pc->key].lanes;
            sl->key = pc->key;
            sl->back = (uint16_t)(pc->offset + pc->length);
            sl->limit = (int8_t)h->k;
        }
        /* A code with more pieces always takes the general way. */
        slot[2 * c].overflow = count > 2;
        if (count > 2) slot[2 * c].limit = 64;
    }
}

/* ----------------------------------------------------------- death tables */

/* Both death tables of every piece (see sm_ph_header). */
static void fill_death_tables(const sm_ph_header *h, const uint8_t *base, uint64_t *alive) {
    const sm_ph_key *kt = (const sm_ph_key *)(base + h->keys_off);
    const sm_ph_piece *pieces = (const sm_ph_piece *)(base + h->pieces_off);
    const uint64_t *peq = (const uint64_t *)(base + h->peq_off);
    uint32_t columns = h->alive_columns;
    uint64_t words = ((uint64_t)1 << (2 * columns)) / 64;
    for (uint32_t p = 0; p < h->npieces; p++) {
        const sm_ph_piece *pc = &pieces[p];
        const sm_ph_key *key = &kt[pc->key];
        const uint64_t *kp = peq + key->peq_at;
        uint32_t rest = key->length - pc->offset - pc->length;
        /* Before the piece: the reversed rows from key position o - 1. */
        fill_alive(h, kp + h->rows, key->length - pc->offset, pc->offset, h->k, columns, alive + (uint64_t)p * 2 * words);
        fill_alive(h, kp, pc->offset + pc->length, rest, h->k, columns, alive + ((uint64_t)p * 2 + 1) * words);
    }
}

/* ------------------------------------------------------------------ keys */

/* The key table and the peq rows (and, for one-block keys, the rows again
   with the key reversed, for DPs that run backwards). */
static void fill_keys(sm_ph_header *h, uint8_t *base, const sm_ac_key *keys, const apx_classes *cls,
                      sm_alphabet alphabet, unsigned flags) {
    sm_ph_key *kt = (sm_ph_key *)(base + h->keys_off);
    uint64_t *peq = (uint64_t *)(base + h->peq_off);
    uint64_t peq_at = 0;
    for (size_t i = 0; i < h->nkeys; i++) {
        uint32_t m = keys[i].len, blocks = (m + 63) / 64;
        kt[i].output = keys[i].output;
        kt[i].length = m;
        kt[i].blocks = blocks;
        kt[i].first_piece = (uint32_t)(i * (h->k + 1));
        kt[i].peq_at = peq_at;
        if (h->seeds) pack_key(keys[i].seq, m, &kt[i]);
        for (uint32_t r = 0; r < cls->rows; r++) {
            if (cls->row_never_matches[r]) continue;
            for (uint32_t j = 0; j < m; j++)
                if (sm_apx_class_matches(cls->row_value[r], sm_apx_key_symbol(keys[i].seq[j], alphabet, flags),
                                         alphabet, flags))
                    peq[peq_at + (uint64_t)r * blocks + j / 64] |= (uint64_t)1 << (j % 64);
        }
        peq_at += (uint64_t)cls->rows * blocks;
        if (blocks == 1) {
            for (uint32_t r = 0; r < cls->rows; r++)
                for (uint32_t j = 0; j < m; j++)
                    if ((peq[kt[i].peq_at + r] >> j) & 1u) peq[peq_at + r] |= (uint64_t)1 << (m - 1 - j);
            peq_at += cls->rows;
        }
    }
}

/* -------------------------------------------------------------- section */

/* Every concrete string of every piece, in piece order, output piece * 2. */
typedef struct {
    sm_ac_key *keys;
    uint8_t *bytes;
    size_t n;
} piece_strings;

static int expand_pieces(const sm_ac_key *keys, const piece_list *pl, sm_alphabet alphabet, piece_strings *ps) {
    uint64_t n = 0, arena = 0;
    for (size_t p = 0; p < pl->n; p++) {
        const sm_ph_piece *pc = &pl->pieces[p];
        uint64_t count = sm_ph_piece_expansions(keys[pc->key].seq + pc->offset, pc->length, alphabet);
        n += count;
        arena += count * pc->length;
    }
    ps->keys = malloc((size_t)(n ? n : 1) * sizeof *ps->keys);
    ps->bytes = malloc((size_t)(arena ? arena : 1));
    ps->n = 0;
    if (!ps->keys || !ps->bytes) return -1;
    size_t used = 0;
    for (size_t p = 0; p < pl->n; p++) {
        const sm_ph_piece *pc = &pl->pieces[p];
        const uint8_t *seq = keys[pc->key].seq + pc->offset;
        uint64_t count = sm_ph_piece_expansions(seq, pc->length, alphabet);
        if (alphabet == SM_ALPHABET_DNA) expand_piece(seq, pc->length, ps->bytes + used);
        else memcpy(ps->bytes + used, seq, pc->length);
        for (uint64_t e = 0; e < count; e++) {
            sm_ac_key *s = &ps->keys[ps->n++];
            s->seq = ps->bytes + used + e * pc->length;
            s->len = pc->length;
            s->output = (uint32_t)p * 2u;
        }
        used += count * pc->length;
    }
    return 0;
}

int sm_ph_build(const sm_ac_key *keys, size_t nkeys, sm_alphabet alphabet, unsigned flags, sm_match match,
                uint32_t k, unsigned build_threads, uint64_t max_bytes, sm_buf *section, sm_error *err) {
    if (!section || (match != SM_MATCH_MISMATCHES && match != SM_MATCH_EDITS))
        return sm_set_error(err, SM_ERR_INVALID, "pigeonhole: invalid arguments");
    int rc = sm_apx_check_keys("pigeonhole", keys, nkeys, alphabet, flags, err);
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
    piece_strings ps = {NULL, NULL, 0};
    seed_tables seeds = {{0}, {0}, {0}, 0, 0, 0, 0};
    sm_buf ac = {0};
    if (!pl.pieces) return sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
    apx_classes cls;
    sm_apx_classes_build(keys, nkeys, alphabet, flags, &cls);
    sm_ph_walk_plans(keys, nkeys, alphabet, k, PH_MAX_PIECE_EXPANSION, add_piece, &pl);
    uint32_t max_key = 0;
    uint64_t peq_words = 0;
    int use_seeds = alphabet == SM_ALPHABET_DNA;
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].len > max_key) max_key = keys[i].len;
        peq_words += (uint64_t)cls.rows * ((keys[i].len + 63) / 64 + (keys[i].len <= 64));
    }
    for (size_t p = 0; p < pl.n; p++)
        if (pl.pieces[p].length > SM_PH_SEED_MAX) use_seeds = 0;
    if (expand_pieces(keys, &pl, alphabet, &ps) != 0) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
        goto done;
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
    uint64_t finder_off = off; /* the seed tables or the automaton */
    if ((max_bytes && off > max_bytes) || off > SIZE_MAX / 2) {
        rc = sm_set_error(err, SM_ERR_LIMIT, "pigeonhole: the section would need %llu bytes (limit %llu)",
                          (unsigned long long)off, (unsigned long long)max_bytes);
        goto done;
    }
    if (use_seeds) {
        rc = build_seed_tables(ps.keys, ps.n, &seeds, err);
    } else {
        /* The exact engine over the pieces: piece p reports output p * 2. */
        uint8_t fold[256];
        sm_text_fold(alphabet == SM_ALPHABET_DNA, flags, fold);
        rc = sm_ac_build(ps.keys, ps.n, fold, build_threads, max_bytes ? max_bytes - off : 0, &ac, err);
    }
    if (rc != SM_OK) goto done;
    off = apx_round_up(off + (use_seeds ? seeds.buf.len : ac.len), APX_ALIGN);
    /* Slots need every key packed (bases and N) and short, and pay only
       when most bases end some piece (else the bitmap test predicts well). */
    int slots = use_seeds && seeds.all_size && match == SM_MATCH_MISMATCHES && seeds.max <= SM_PH_SLOT_SEED_MAX &&
                sm_ph_hit_rate(keys, nkeys, alphabet, k) >= PH_SLOT_MIN_RATE;
    for (size_t i = 0; i < nkeys && slots; i++) {
        sm_ph_key probe;
        pack_key(keys[i].seq, keys[i].len, &probe);
        slots = probe.packed && keys[i].len <= SM_PH_SLOT_KEY_MAX;
    }
    /* One probe per entry of each per-length table's output list. */
    uint64_t probe_off[SM_PH_SEED_MAX + 1] = {0};
    for (uint32_t L = 1; use_seeds && L <= SM_PH_SEED_MAX; L++) {
        if (!seeds.size[L]) continue;
        sm_kt_view v;
        sm_kt_view_of(seeds.buf.data + seeds.off[L], &v);
        probe_off[L] = off;
        off = apx_round_up(off + (uint64_t)v.out_index[v.slots] * sizeof(sm_ph_probe), APX_ALIGN);
    }
    uint64_t list_off = 0;
    if (use_seeds && seeds.all_size) {
        sm_kt_view v;
        sm_kt_view_of(seeds.buf.data + seeds.all_off, &v);
        list_off = off;
        off = apx_round_up(off + (uint64_t)v.out_index[v.slots] * sizeof(sm_ph_seed), APX_ALIGN);
    }
    uint64_t slots_off = 0;
    if (slots) {
        slots_off = off;
        off = apx_round_up(off + ((uint64_t)2 << (2 * seeds.max)) * sizeof(sm_ph_slot), APX_ALIGN);
    }
    /* Death tables for k edits: 5 bases (1024 codes) per side when small
       enough, 4 otherwise, none for very many pieces or long keys. */
    uint32_t alive_columns = 0;
    int one_block = 1;
    for (size_t i = 0; i < nkeys; i++) one_block &= keys[i].len <= 64;
    if (use_seeds && match == SM_MATCH_EDITS && one_block && k <= 255)
        alive_columns = pl.n <= 16384 ? 5 : pl.n <= 131072 ? 4 : 0;
    uint64_t alive_off = 0;
    if (alive_columns) {
        alive_off = off;
        off = apx_round_up(off + (uint64_t)pl.n * 2 * (((uint64_t)1 << (2 * alive_columns)) / 64) * 8u, APX_ALIGN);
    }
    uint64_t total = off;
    if ((max_bytes && total > max_bytes) || total > SIZE_MAX / 2) {
        rc = sm_set_error(err, SM_ERR_LIMIT, "pigeonhole: the section would need %llu bytes (limit %llu)",
                          (unsigned long long)total, (unsigned long long)max_bytes);
        goto done;
    }
    if (sm_buf_reserve(section, total) != SM_OK) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "pigeonhole: out of memory");
        goto done;
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
    h->seeds = (uint32_t)use_seeds;
    for (int b = 0; b < 256; b++) h->class_of[b] = cls.class_of[b];
    fill_keys(h, base, keys, &cls, alphabet, flags);
    memcpy(base + pieces_off, pl.pieces, pl.n * sizeof(sm_ph_piece));
    sm_db_pattern *lengths = (sm_db_pattern *)(base + lengths_off);
    for (size_t p = 0; p < pl.n; p++) lengths[p].length = pl.pieces[p].length;
    if (use_seeds) {
        memcpy(base + finder_off, seeds.buf.data, seeds.buf.len);
        const sm_ph_key *kt = (const sm_ph_key *)(base + keys_off);
        for (uint32_t L = 1; L <= SM_PH_SEED_MAX; L++) {
            if (!seeds.size[L]) continue;
            h->seed_off[L] = finder_off + seeds.off[L];
            h->seed_size[L] = seeds.size[L];
            h->seed_probe_off[L] = probe_off[L];
            sm_kt_view v;
            sm_kt_view_of(base + h->seed_off[L], &v);
            sm_ph_probe *probe = (sm_ph_probe *)(base + probe_off[L]);
            for (uint32_t e = 0; e < v.out_index[v.slots]; e++)
                sm_ph_probe_fill(&probe[e], &pl.pieces[v.out_list[e] >> 1], kt, v.out_list[e] >> 1);
        }
        h->seed_max = seeds.max;
        h->seed_any_off = finder_off + seeds.any_off;
        if (seeds.all_size) {
            h->seed_all_off = finder_off + seeds.all_off;
            h->seed_all_size = seeds.all_size;
            h->seed_list_off = list_off;
            sm_kt_view v;
            sm_kt_view_of(base + h->seed_all_off, &v);
            sm_ph_seed *list = (sm_ph_seed *)(base + list_off);
            for (uint32_t e = 0; e < v.out_index[v.slots]; e++) {
                const sm_ph_piece *pc = &pl.pieces[v.out_list[e] >> 1];
                list[e].key = pc->key;
                list[e].offset = pc->offset;
                list[e].piece = v.out_list[e] >> 1;
                list[e].length = (uint16_t)pc->length;
                list[e].index = (uint16_t)pc->index;
            }
        }
        if (slots_off) {
            h->seed_slots_off = slots_off;
            fill_slots(h, base, (sm_ph_slot *)(base + slots_off));
        }
        if (alive_off) {
            h->alive_off = alive_off;
            h->alive_columns = alive_columns;
            fill_death_tables(h, base, (uint64_t *)(base + alive_off));
        }
    } else {
        h->ac_off = finder_off;
        h->ac_size = ac.len;
        memcpy(base + finder_off, ac.data, ac.len);
    }
    section->len += total;
done:
    free(pl.pieces);
    free(ps.keys);
    free(ps.bytes);
    sm_buf_free(&seeds.buf);
    sm_buf_free(&ac);
    return rc;
}
