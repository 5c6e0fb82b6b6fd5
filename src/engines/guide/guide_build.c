/* The guide engine's section: keys cut at the PAM, grouped by side and
 * guide length, each group's pieces and seed tables (guide.h); and its
 * validator. */
#include <stdio.h>
#include <stdlib.h>

#include "engines/guide/guide.h"
#include "engines/guide/guide_core.h"

static uint32_t base_code(uint8_t set) { return set == 1 ? 0 : set == 2 ? 1 : set == 4 ? 2 : set == 8 ? 3 : 4; }
static unsigned set_size(unsigned s) { return (s & 1) + ((s >> 1) & 1) + ((s >> 2) & 1) + ((s >> 3) & 1); }

int sm_gd_supports(const sm_ac_key *keys, size_t nkeys, uint32_t q, char *why) {
    if (q == 0 || q > SM_GUIDE_MAX_PAM) {
        snprintf(why, 256, "the guide engine takes PAMs of 1 to %u symbols", SM_GUIDE_MAX_PAM);
        return -1;
    }
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].len <= q || keys[i].len - q > SM_GUIDE_MAX_LENGTH) {
            snprintf(why, 256, "the guide engine takes guides of 1 to %u symbols besides the PAM (one has %u)",
                     SM_GUIDE_MAX_LENGTH, keys[i].len > q ? keys[i].len - q : 0);
            return -1;
        }
    return 0;
}

/* How many pieces a guide of L symbols is cut into so that a site with k
   mismatches and one bulge leaves one exact (0: none can be). A
   mismatch breaks one piece, a DNA bulge one (the piece it splits), an
   RNA bulge of b every piece that holds one of its b symbols. */
static uint32_t pieces_for(uint32_t L, uint32_t k, uint32_t dna, uint32_t rna) {
    uint32_t p = k + 1 + (dna || rna ? 1 : 0);
    for (;;) {
        if (p > L) return 0;
        uint32_t shortest = L / p;
        uint32_t rna_breaks = rna ? 1 + (rna - 1 + shortest - 1) / shortest : 0;
        uint32_t breaks = dna && rna_breaks < 1 ? 1 : rna_breaks;
        if (p >= k + 1 + breaks) return p;
        p = k + 1 + breaks;
    }
}

typedef struct {
    uint32_t left, length;
} group_id;

/* A key cut at the PAM: which side its guide lies on, and the guide's
   symbols in text order. */
static void cut_key(const sm_ac_key *key, uint32_t q, sm_pam_side side, uint32_t *left, const uint8_t **guide,
                    const uint8_t **pam) {
    int reverse = key->output & 1u;
    int pam_first = (side == SM_PAM_5PRIME) != (reverse != 0);
    *left = !pam_first;
    *guide = pam_first ? key->seq + q : key->seq;
    *pam = pam_first ? key->seq : key->seq + (key->len - q);
}

/* Counts (count non-NULL) or writes the codes of the seed lanes [lo, lo +
   len) of a key; returns how many, or more than SM_GUIDE_MAX_EXPANSION. */
static uint32_t seed_codes(const uint8_t *sets, uint32_t lo, uint32_t len, uint32_t *codes) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < len; i++) {
        n *= set_size(sets[lo + i]);
        if (n > SM_GUIDE_MAX_EXPANSION) return SM_GUIDE_MAX_EXPANSION + 1;
    }
    if (!codes) return (uint32_t)n;
    uint32_t count = 1;
    codes[0] = 0;
    for (uint32_t i = 0; i < len; i++) {
        uint32_t was = count;
        count = 0;
        uint32_t next[SM_GUIDE_MAX_EXPANSION];
        for (uint32_t b = 0; b < 4; b++) {
            if (!(sets[lo + i] & (1u << b))) continue;
            for (uint32_t c = 0; c < was; c++) next[count++] = codes[c] | (b << (2 * i));
        }
        memcpy(codes, next, count * sizeof *codes);
    }
    return count;
}

int sm_gd_build(const sm_ac_key *keys, size_t nkeys, unsigned flags, uint32_t k, uint32_t pam_length,
                sm_pam_side pam_side, uint32_t dna_bulges, uint32_t rna_bulges, uint64_t max_bytes, sm_buf *section,
                sm_error *err) {
    char why[256];
    if (nkeys == 0 || nkeys > UINT32_MAX / 2) return sm_set_error(err, SM_ERR_LIMIT, "the guide engine takes 1 to 2^31 keys");
    if (sm_gd_supports(keys, nkeys, pam_length, why) != 0) return sm_set_error(err, SM_ERR_INVALID, "%s", why);
    if (dna_bulges > SM_MAX_BULGE || rna_bulges > SM_MAX_BULGE)
        return sm_set_error(err, SM_ERR_LIMIT, "bulges of at most %u bases are supported", SM_MAX_BULGE);
    uint32_t q = pam_length;
    int text_iupac = (flags & SM_FLAG_TEXT_IUPAC) != 0;

    sm_gd_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SM_GUIDE_MAGIC, 8);
    h.nkeys = (uint32_t)nkeys;
    h.k = k;
    h.dna_bulges = dna_bulges;
    h.rna_bulges = rna_bulges;
    h.pam_length = q;
    h.pam_side = (uint32_t)pam_side;
    h.flags = flags & SM_FLAG_TEXT_IUPAC;

    sm_gd_key *kk = calloc(nkeys, sizeof *kk);
    group_id *gid = calloc(nkeys, sizeof *gid); /* at most one group per key */
    sm_gd_group *groups = calloc(nkeys, sizeof *groups);
    int status = kk && gid && groups ? SM_OK : SM_ERR_NOMEM;
    uint32_t ngroups = 0;
    for (size_t i = 0; status == SM_OK && i < nkeys; i++) {
        uint32_t left;
        const uint8_t *guide, *pam;
        cut_key(&keys[i], q, pam_side, &left, &guide, &pam);
        uint32_t L = keys[i].len - q;
        /* Every key of a side has the same PAM (one PAM per database). */
        uint8_t *ps = h.pam_sets[left];
        for (uint32_t t = 0; t < q; t++) {
            uint8_t s = sm_nt_set[pam[t]] & 15u;
            if (ps[t] && ps[t] != s) status = sm_set_error(err, SM_ERR_INVALID, "the guide engine takes one PAM");
            ps[t] = s;
        }
        sm_gd_key *x = &kk[i];
        x->output = keys[i].output;
        x->packed = 1;
        for (uint32_t j = 0; j < L; j++) {
            uint8_t s = sm_nt_set[guide[j]] & 15u;
            x->sets[j] = s;
            uint32_t c = base_code(s);
            if (c < 4) {
                x->code |= (uint64_t)c << (2 * j);
                x->care |= (uint64_t)1 << (2 * j);
            } else if (s != 15) {
                x->packed = 0;
            }
        }
        uint32_t g = 0;
        while (g < ngroups && !(gid[g].left == left && gid[g].length == L)) g++;
        if (g == ngroups) {
            gid[g].left = left;
            gid[g].length = L;
            groups[g].left = left;
            groups[g].length = L;
            groups[g].pieces = text_iupac ? 0 : pieces_for(L, k, dna_bulges, rna_bulges);
            ngroups++;
        }
        x->group = g;
        groups[g].nkeys++;
        if (L > h.max_guide) h.max_guide = L;
    }

    /* Pieces: distances [j L / P, (j + 1) L / P) from the PAM, each with its
       first SM_GUIDE_SEED_MAX symbols as its seed. */
    uint32_t npieces = 0;
    for (uint32_t g = 0; g < ngroups; g++) npieces += groups[g].pieces;
    sm_gd_piece *pieces = calloc(npieces ? npieces : 1, sizeof *pieces);
    uint64_t index_words = 0;
    if (!pieces && status == SM_OK) status = SM_ERR_NOMEM;
    for (uint32_t g = 0, at = 0; status == SM_OK && g < ngroups; g++) {
        sm_gd_group *gr = &groups[g];
        gr->first_piece = at;
        for (uint32_t j = 0; j < gr->pieces; j++, at++) {
            uint32_t a = j * gr->length / gr->pieces, b = (j + 1) * gr->length / gr->pieces;
            uint32_t len = b - a < SM_GUIDE_SEED_MAX ? b - a : SM_GUIDE_SEED_MAX;
            pieces[at].lo = gr->left ? gr->length - a - len : a;
            pieces[at].len = len;
            pieces[at].lanes = sm_gd_lanes(len) << (2 * pieces[at].lo);
            pieces[at].index_at = index_words;
            index_words += ((uint64_t)1 << (2 * len)) + 1;
        }
    }
    /* Keys whose seeds expand too far are checked at every PAM. */
    for (size_t i = 0; status == SM_OK && i < nkeys; i++) {
        sm_gd_group *gr = &groups[kk[i].group];
        if (gr->pieces == 0) kk[i].brute = 1;
        for (uint32_t j = 0; !kk[i].brute && j < gr->pieces; j++) {
            const sm_gd_piece *pc = &pieces[gr->first_piece + j];
            if (seed_codes(kk[i].sets, pc->lo, pc->len, NULL) > SM_GUIDE_MAX_EXPANSION) kk[i].brute = 1;
        }
        if (kk[i].brute) gr->nbrute++;
    }
    uint64_t nlists = 0;
    uint32_t *index = NULL, *lists = NULL;
    if (status == SM_OK) {
        index = calloc(index_words ? index_words : 1, sizeof *index);
        if (!index) status = SM_ERR_NOMEM;
    }
    /* Count per (piece, code) in the code's index entry, turn the counts
       into starts, fill in key order (each entry moving to its code's end,
       the next code's start), then move the entries back by one. */
    uint32_t codes[SM_GUIDE_MAX_EXPANSION];
    for (int pass = 0; status == SM_OK && pass < 2; pass++) {
        if (pass == 1) {
            uint64_t total = 0;
            for (uint32_t p = 0; p < npieces; p++) {
                uint32_t *ix = index + pieces[p].index_at;
                uint64_t entries = (uint64_t)1 << (2 * pieces[p].len);
                for (uint64_t c = 0; c <= entries; c++) {
                    uint64_t n = ix[c];
                    ix[c] = (uint32_t)total;
                    total += n;
                }
            }
            uint64_t brute = 0;
            for (uint32_t g = 0; g < ngroups; g++) {
                groups[g].first_brute = total + brute;
                brute += groups[g].nbrute;
            }
            nlists = total + brute;
            if (nlists > UINT32_MAX) {
                status = sm_set_error(err, SM_ERR_LIMIT, "too many guide seeds");
                break;
            }
            lists = malloc((nlists ? nlists : 1) * sizeof *lists);
            if (!lists) {
                status = SM_ERR_NOMEM;
                break;
            }
            for (uint32_t g = 0; g < ngroups; g++) groups[g].nbrute = 0;
        }
        for (size_t i = 0; i < nkeys; i++) {
            sm_gd_group *gr = &groups[kk[i].group];
            if (kk[i].brute) {
                if (pass == 1) lists[gr->first_brute + gr->nbrute++] = (uint32_t)i;
                continue;
            }
            for (uint32_t j = 0; j < gr->pieces; j++) {
                const sm_gd_piece *pc = &pieces[gr->first_piece + j];
                uint32_t *ix = index + pc->index_at;
                uint32_t n = seed_codes(kk[i].sets, pc->lo, pc->len, codes);
                for (uint32_t c = 0; c < n; c++) {
                    if (pass == 0) ix[codes[c]]++;
                    else lists[ix[codes[c]]++] = (uint32_t)i;
                }
            }
        }
        if (pass == 1) {
            for (uint32_t p = 0; p < npieces; p++) {
                uint32_t *ix = index + pieces[p].index_at;
                uint64_t entries = (uint64_t)1 << (2 * pieces[p].len);
                for (uint64_t c = entries; c > 0; c--) ix[c] = ix[c - 1];
                ix[0] = p == 0 ? 0 : index[pieces[p - 1].index_at + ((uint64_t)1 << (2 * pieces[p - 1].len))];
            }
        }
    }

    if (status == SM_OK) {
        h.ngroups = ngroups;
        h.npieces = npieces;
        h.index_words = index_words;
        h.nlists = nlists;
        uint64_t off = sizeof h;
        h.keys_off = off;
        off += (uint64_t)nkeys * sizeof *kk;
        h.groups_off = off;
        off += (uint64_t)ngroups * sizeof *groups;
        h.pieces_off = off;
        off += (uint64_t)npieces * sizeof *pieces;
        h.index_off = off;
        off += index_words * sizeof *index;
        off = (off + 7) & ~(uint64_t)7;
        h.lists_off = off;
        off += nlists * sizeof *lists;
        off = (off + 7) & ~(uint64_t)7;
        if (max_bytes && off > max_bytes) {
            status = sm_set_error(err, SM_ERR_LIMIT, "the guide engine's tables would need %llu bytes, over the limit",
                                  (unsigned long long)off);
        } else if (sm_buf_reserve(section, off) != SM_OK) {
            status = SM_ERR_NOMEM;
        } else {
            size_t base = section->len;
            sm_buf_append(section, &h, sizeof h);
            sm_buf_append(section, kk, nkeys * sizeof *kk);
            sm_buf_append(section, groups, ngroups * sizeof *groups);
            sm_buf_append(section, pieces, npieces * sizeof *pieces);
            sm_buf_append(section, index, index_words * sizeof *index);
            sm_buf_align(section, 8);
            sm_buf_append(section, lists, nlists * sizeof *lists);
            sm_buf_align(section, 8);
            if (section->len - base != off) status = SM_ERR_NOMEM;
        }
    }
    if (status == SM_ERR_NOMEM) sm_set_error(err, SM_ERR_NOMEM, "out of memory building the guide engine's tables");
    free(kk);
    free(gid);
    free(groups);
    free(pieces);
    free(index);
    free(lists);
    return status;
}

/* ------------------------------------------------------------- validation */

static int bad(sm_error *err, const char *what) {
    return sm_set_error(err, SM_ERR_FORMAT, "database guide section: %s", what);
}

int sm_gd_validate(const uint8_t *section, size_t size, uint32_t n_outputs, const sm_db_header *db, sm_error *err) {
    if (size < sizeof(sm_gd_header)) return bad(err, "truncated");
    sm_gd_header h;
    memcpy(&h, section, sizeof h);
    if (memcmp(h.magic, SM_GUIDE_MAGIC, 8) != 0) return bad(err, "bad magic");
    if (db->alphabet != SM_ALPHABET_DNA || h.k != db->max_errors || h.dna_bulges != db->dna_bulges ||
        h.rna_bulges != db->rna_bulges || h.pam_length != db->pam_length || h.pam_side != db->pam_side ||
        h.flags != (db->flags & SM_FLAG_TEXT_IUPAC))
        return bad(err, "settings disagree with the database's");
    if (h.pam_length == 0 || h.pam_length > SM_GUIDE_MAX_PAM || h.dna_bulges > SM_MAX_BULGE ||
        h.rna_bulges > SM_MAX_BULGE || h.max_guide == 0 || h.max_guide > SM_GUIDE_MAX_LENGTH || h.nkeys == 0 ||
        h.ngroups == 0 || h.ngroups > h.nkeys)
        return bad(err, "invalid settings");
    if (!sm_fits(h.keys_off, (uint64_t)h.nkeys * sizeof(sm_gd_key), size) ||
        !sm_fits(h.groups_off, (uint64_t)h.ngroups * sizeof(sm_gd_group), size) ||
        !sm_fits(h.pieces_off, (uint64_t)h.npieces * sizeof(sm_gd_piece), size) ||
        !sm_fits(h.index_off, h.index_words * sizeof(uint32_t), size) ||
        !sm_fits(h.lists_off, h.nlists * sizeof(uint32_t), size) || h.keys_off % 8 || h.groups_off % 8 ||
        h.pieces_off % 8 || h.index_off % 4 || h.lists_off % 4)
        return bad(err, "table out of bounds");
    const sm_gd_key *keys = (const sm_gd_key *)(section + h.keys_off);
    const sm_gd_group *groups = (const sm_gd_group *)(section + h.groups_off);
    const sm_gd_piece *pieces = (const sm_gd_piece *)(section + h.pieces_off);
    const uint32_t *index = (const uint32_t *)(section + h.index_off);
    const uint32_t *lists = (const uint32_t *)(section + h.lists_off);
    for (int side = 0; side < 2; side++)
        for (uint32_t t = 0; t < SM_GUIDE_MAX_PAM; t++)
            if (h.pam_sets[side][t] > 15 || (t >= h.pam_length && h.pam_sets[side][t]))
                return bad(err, "invalid PAM");
    uint32_t piece_at = 0;
    uint64_t brute_at = groups[0].first_brute;
    for (uint32_t g = 0; g < h.ngroups; g++) {
        const sm_gd_group *gr = &groups[g];
        if (gr->left > 1 || gr->length == 0 || gr->length > h.max_guide || gr->first_piece != piece_at ||
            gr->pieces > gr->length || gr->pieces > h.npieces - piece_at || gr->nkeys == 0 || gr->nbrute > gr->nkeys)
            return bad(err, "invalid group");
        /* every key of a side the group uses needs that side's PAM */
        for (uint32_t t = 0; t < h.pam_length; t++)
            if (!h.pam_sets[gr->left][t]) return bad(err, "invalid PAM");
        if (gr->pieces == 0 && gr->nbrute != gr->nkeys) return bad(err, "invalid group");
        if (gr->first_brute != brute_at || !sm_fits(gr->first_brute, gr->nbrute, h.nlists))
            return bad(err, "invalid group");
        brute_at += gr->nbrute;
        for (uint32_t j = 0; j < gr->pieces; j++) {
            const sm_gd_piece *pc = &pieces[piece_at + j];
            if (pc->len == 0 || pc->len > SM_GUIDE_SEED_MAX || pc->lo > gr->length - pc->len ||
                pc->lanes != sm_gd_lanes(pc->len) << (2 * pc->lo) ||
                !sm_fits(pc->index_at, ((uint64_t)1 << (2 * pc->len)) + 1, h.index_words))
                return bad(err, "invalid piece");
            const uint32_t *ix = index + pc->index_at;
            uint64_t entries = (uint64_t)1 << (2 * pc->len);
            for (uint64_t c = 0; c < entries; c++)
                if (ix[c] > ix[c + 1]) return bad(err, "invalid seed table");
            if (ix[entries] > h.nlists) return bad(err, "invalid seed table");
        }
        piece_at += gr->pieces;
    }
    if (piece_at != h.npieces || brute_at != h.nlists) return bad(err, "invalid groups");
    uint32_t *seen = calloc(h.ngroups, sizeof *seen);
    if (!seen) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    int rc = SM_OK;
    for (uint32_t i = 0; i < h.nkeys && rc == SM_OK; i++) {
        const sm_gd_key *x = &keys[i];
        if (x->output >= n_outputs || x->group >= h.ngroups || x->packed > 1 || x->brute > 1) {
            rc = bad(err, "invalid key");
            break;
        }
        uint32_t L = groups[x->group].length;
        if ((x->care & ~sm_gd_lanes(L)) || (x->code & ~(sm_gd_lanes(L) * 3)))
            rc = bad(err, "invalid key");
        for (uint32_t j = 0; j < SM_GUIDE_MAX_LENGTH && rc == SM_OK; j++)
            if ((j < L) != (x->sets[j] != 0) || x->sets[j] > 15) rc = bad(err, "invalid key");
        seen[x->group]++;
    }
    for (uint32_t g = 0; g < h.ngroups && rc == SM_OK; g++)
        if (seen[g] != groups[g].nkeys) rc = bad(err, "invalid group");
    free(seen);
    /* list entries name keys of the group the piece or list belongs to */
    for (uint32_t g = 0; g < h.ngroups && rc == SM_OK; g++) {
        const sm_gd_group *gr = &groups[g];
        for (uint32_t j = 0; j < gr->pieces && rc == SM_OK; j++) {
            const sm_gd_piece *pc = &pieces[gr->first_piece + j];
            const uint32_t *ix = index + pc->index_at;
            for (uint64_t e = ix[0]; e < ix[(uint64_t)1 << (2 * pc->len)] && rc == SM_OK; e++)
                if (lists[e] >= h.nkeys || keys[lists[e]].group != g) rc = bad(err, "invalid seed list");
        }
        for (uint64_t e = gr->first_brute; e < gr->first_brute + gr->nbrute && rc == SM_OK; e++)
            if (lists[e] >= h.nkeys || keys[lists[e]].group != g) rc = bad(err, "invalid list");
    }
    return rc;
}
