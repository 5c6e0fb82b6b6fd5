/* Checks an automaton section read from outside before any scan trusts it. */
#include <stdint.h>

#include "engines/automaton/ac_private.h"


int sm_ac_validate(const uint8_t *section, size_t size, uint32_t n_outputs, sm_error *err) {
    const int bad = SM_ERR_FORMAT;
    if (!section || size < sizeof(sm_ac_header))
        return sm_set_error(err, bad, "automaton section truncated (%zu bytes)", size);
    if ((uintptr_t)section % 8)
        return sm_set_error(err, SM_ERR_INVALID, "automaton section is not 8-byte aligned in memory");
    sm_ac_header h;
    memcpy(&h, section, sizeof h);
    if (h.columns < 1 || h.columns > 257)
        return sm_set_error(err, bad, "automaton section: %u columns (must be 1..257)", h.columns);
    uint64_t entries = (uint64_t)h.states * h.columns;
    if (h.states < 1 || entries >= SM_AC_MAX_ENTRIES)
        return sm_set_error(err, bad, "automaton section: bad state count %u", h.states);
    if (h.states > 1 ? (h.max_depth < 1 || h.max_depth >= h.states) : h.max_depth != 0)
        return sm_set_error(err, bad, "automaton section: bad depth %u for %u states", h.max_depth, h.states);
    if (h.out_total > UINT32_MAX)
        return sm_set_error(err, bad, "automaton section: bad output total");
    if (h.delta_off < sizeof h || h.delta_off % SM_DB_ALIGN || h.out_index_off % SM_DB_ALIGN ||
        h.out_list_off % SM_DB_ALIGN || !sm_fits(h.delta_off, entries * 4, size) ||
        h.out_index_off < h.delta_off + entries * 4 || !sm_fits(h.out_index_off, ((uint64_t)h.states + 1) * 4, size) ||
        h.out_list_off < h.out_index_off + ((uint64_t)h.states + 1) * 4 ||
        !sm_fits(h.out_list_off, h.out_total * 4, size))
        return sm_set_error(err, bad, "automaton section: tables out of bounds");
    for (int b = 0; b < 256; b++)
        if (h.class_of[b] >= h.columns)
            return sm_set_error(err, bad, "automaton section: byte %d maps to column %u of %u", b, h.class_of[b],
                              h.columns);

    const uint32_t *delta = (const uint32_t *)(section + h.delta_off);
    const uint32_t *out_index = (const uint32_t *)(section + h.out_index_off);
    const uint32_t *out_list = (const uint32_t *)(section + h.out_list_off);
    if (out_index[0] != 0 || out_index[h.states] != h.out_total)
        return sm_set_error(err, bad, "automaton section: output index does not span the output list");
    for (uint32_t s = 0; s < h.states; s++)
        if (out_index[s] > out_index[s + 1])
            return sm_set_error(err, bad, "automaton section: output index decreases at state %u", s);
    for (uint64_t i = 0; i < h.out_total; i++)
        if (out_list[i] >= n_outputs)
            return sm_set_error(err, bad, "automaton section: output id %u out of range (%u outputs)", out_list[i],
                              n_outputs);
    sm_ac_divider div = sm_ac_divider_for(h.columns);
    for (uint64_t i = 0; i < entries; i++) {
        uint32_t e = delta[i], target = e & SM_AC_TARGET_MASK;
        if (target >= entries || target % h.columns)
            return sm_set_error(err, bad, "automaton section: bad transition %llu", (unsigned long long)i);
        uint32_t t = sm_ac_divide(div, target);
        int has_out = out_index[t + 1] > out_index[t];
        if (has_out != ((e & SM_AC_OUT_FLAG) != 0))
            return sm_set_error(err, bad, "automaton section: output flag of transition %llu is wrong",
                              (unsigned long long)i);
    }
    return SM_OK;
}
