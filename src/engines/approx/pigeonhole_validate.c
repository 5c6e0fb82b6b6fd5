/* The pigeonhole filter's validator: a section read from elsewhere is
 * checked before a scan trusts any offset, id or length in it. */
#include "engines/approx/pigeonhole_private.h"
#include "engines/automaton/automaton.h"

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
                !apx_table_fits(h->seed_all_off + ph_seed_list_at(h->seed_max), h->seed_all_count, sizeof(sm_ph_seed),
                                sizeof *h, size))
                return PH_BAD("combined seed table out of bounds");
            const uint32_t *starts = (const uint32_t *)(section + h->seed_all_off);
            const sm_ph_seed *list = (const sm_ph_seed *)(section + h->seed_all_off + ph_seed_list_at(h->seed_max));
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
