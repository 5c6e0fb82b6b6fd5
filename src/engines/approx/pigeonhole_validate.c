/* The pigeonhole filter's validator: a section read from elsewhere is
 * checked before a scan trusts any offset, id or length in it. */
#include "engines/approx/pigeonhole_private.h"
#include "engines/automaton/automaton.h"
#include "engines/kmer/kmer.h"

#define PH_BAD(what) sm_set_error(err, SM_ERR_FORMAT, "pigeonhole section: %s", what)

/* A seed table: a k-mer direct table of k = L inside the section that the
   k-mer engine's validator passes, listing pieces (output piece * 2) of
   exactly L bases (exact) or at most L (the combined table), so that a
   piece found through it lies inside the bases the scan has seen. */
static int seed_table_ok(const uint8_t *section, size_t size, const sm_ph_header *h, const sm_ph_piece *pieces,
                         uint64_t off, uint64_t bytes, uint32_t L, int exact, sm_error *err) {
    if (off % APX_ALIGN || off < sizeof *h || !sm_fits(off, bytes, size) ||
        sm_kt_direct_k(section + off, (size_t)bytes) != L)
        return PH_BAD("seed table out of bounds");
    if (sm_kt_validate(section + off, (size_t)bytes, h->npieces * 2u, err) != SM_OK) return err ? err->code : SM_ERR_FORMAT;
    sm_kt_view v;
    sm_kt_view_of(section + off, &v);
    for (uint32_t e = 0; e < v.out_index[v.slots]; e++) {
        uint32_t id = v.out_list[e];
        if (id & 1u || (exact ? pieces[id >> 1].length != L : pieces[id >> 1].length > L)) return PH_BAD("bad seed");
    }
    return SM_OK;
}

int sm_ph_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_match match, sm_error *err) {
    const sm_ph_header *h = (const sm_ph_header *)section;
    if (size < sizeof *h) return PH_BAD("truncated header");
    if (h->match != (uint32_t)match || h->k > 65535 || h->nkeys == 0 ||
        (uint64_t)h->nkeys * (h->k + 1) != h->npieces || h->npieces > UINT32_MAX / 2 || h->rows == 0 ||
        h->rows > 257 || h->max_key <= h->k || h->history != (uint64_t)h->max_key + 3u * h->k + 1)
        return PH_BAD("bad header");
    if (!sm_apx_table_fits(h->keys_off, h->nkeys, sizeof(sm_ph_key), sizeof *h, size) ||
        !sm_apx_table_fits(h->pieces_off, h->npieces, sizeof(sm_ph_piece), sizeof *h, size) ||
        !sm_apx_table_fits(h->lengths_off, h->npieces, sizeof(sm_db_pattern), sizeof *h, size) ||
        !sm_apx_table_fits(h->peq_off, h->peq_words, 8, sizeof *h, size) || h->seeds > 1 ||
        (!h->seeds && (h->ac_off % APX_ALIGN || h->ac_off < sizeof *h || h->ac_off > size ||
                       h->ac_size > size - h->ac_off)) ||
        (h->seeds && h->ac_size))
        return PH_BAD("table out of bounds");
    for (int b = 0; b < 256; b++)
        if (h->class_of[b] >= h->rows) return PH_BAD("bad class");
    if (h->alive_off &&
        (h->match != SM_MATCH_EDITS || !h->seeds || (h->alive_columns != 4 && h->alive_columns != 5) ||
         !sm_apx_table_fits(h->alive_off, (uint64_t)h->npieces * 2 * (((uint64_t)1 << (2 * h->alive_columns)) / 64), 8,
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
    if (!h->seeds) {
        uint64_t any = h->seed_any_off | h->seed_max | h->seed_all_off | h->seed_all_size | h->seed_list_off |
                       h->seed_slots_off;
        for (uint32_t L = 0; L <= SM_PH_SEED_MAX; L++) any |= h->seed_off[L] | h->seed_size[L] | h->seed_probe_off[L];
        if (any) return PH_BAD("seed tables in a section that scans with the automaton");
    } else {
        if (h->seed_max == 0 || h->seed_max > SM_PH_SEED_MAX || !h->seed_off[h->seed_max] || h->seed_off[0] ||
            h->seed_size[0] ||
            !sm_apx_table_fits(h->seed_any_off, ((((uint64_t)1 << (2 * h->seed_max)) + 63) / 64), 8, sizeof *h, size))
            return PH_BAD("bad seed bitmap");
        for (uint32_t L = 1; L <= SM_PH_SEED_MAX; L++) {
            if (L > h->seed_max && (h->seed_off[L] || h->seed_size[L])) return PH_BAD("bad seed table");
            if (!h->seed_off[L] && h->seed_size[L]) return PH_BAD("bad seed table");
            if (h->seed_off[L] && seed_table_ok(section, size, h, pieces, h->seed_off[L], h->seed_size[L], L, 1, err) != SM_OK)
                return err ? err->code : SM_ERR_FORMAT;
            if (!h->seed_off[L]) {
                if (h->seed_probe_off[L]) return PH_BAD("a probe list without its seed table");
                continue;
            }
            /* The scan checks windows with the probes alone: each must be
               what the piece and key tables say. */
            sm_kt_view v;
            sm_kt_view_of(section + h->seed_off[L], &v);
            uint32_t total = v.out_index[v.slots];
            if (!sm_apx_table_fits(h->seed_probe_off[L], total, sizeof(sm_ph_probe), sizeof *h, size))
                return PH_BAD("probe list out of bounds");
            const sm_ph_probe *probe = (const sm_ph_probe *)(section + h->seed_probe_off[L]);
            for (uint32_t e = 0; e < total; e++) {
                sm_ph_probe want;
                sm_ph_probe_fill(&want, &pieces[v.out_list[e] >> 1], keys, v.out_list[e] >> 1);
                if (memcmp(&want, &probe[e], sizeof want) != 0) return PH_BAD("bad probe");
            }
        }
        if (h->seed_probe_off[0]) return PH_BAD("bad probe list");
        if (h->seed_all_off || h->seed_all_size) {
            int same = h->seed_all_off == h->seed_off[h->seed_max] && h->seed_all_size == h->seed_size[h->seed_max];
            if (!same && seed_table_ok(section, size, h, pieces, h->seed_all_off, h->seed_all_size, h->seed_max, 0,
                                       err) != SM_OK)
                return err ? err->code : SM_ERR_FORMAT;
            /* The scan takes a piece's key, place and length from the list. */
            sm_kt_view v;
            sm_kt_view_of(section + h->seed_all_off, &v);
            uint32_t total = v.out_index[v.slots];
            if (!sm_apx_table_fits(h->seed_list_off, total, sizeof(sm_ph_seed), sizeof *h, size))
                return PH_BAD("seed list out of bounds");
            const sm_ph_seed *list = (const sm_ph_seed *)(section + h->seed_list_off);
            for (uint32_t e = 0; e < total; e++) {
                const sm_ph_seed *x = &list[e];
                const sm_ph_piece *pc = &pieces[v.out_list[e] >> 1];
                if (x->piece != v.out_list[e] >> 1 || x->key != pc->key || x->offset != pc->offset ||
                    x->length != pc->length || x->index != pc->index)
                    return PH_BAD("bad seed list");
            }
        } else if (h->seed_list_off) {
            return PH_BAD("seed list without a combined table");
        }
        if (h->seed_slots_off) {
            uint64_t codes = (uint64_t)1 << (2 * h->seed_max);
            if (!h->seed_all_size || h->match != SM_MATCH_MISMATCHES || h->seed_max > SM_PH_SLOT_SEED_MAX ||
                !sm_apx_table_fits(h->seed_slots_off, codes * 2, sizeof(sm_ph_slot), sizeof *h, size))
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
