/* The packed form of an automaton's table (ac_packed.h). */
#include <stdlib.h>
#include <string.h>

#include "engines/automaton/ac_packed.h"
#include "engines/automaton/automaton_gpu.h"

int sm_ac_packed_build(const uint32_t *delta, uint32_t states, uint32_t columns, uint32_t budget, int keep_image,
                       sm_ac_packed *out) {
    memset(out, 0, sizeof *out);
    if (states < 2 || states >= 0x8000u || columns == 0 || columns >= SM_AC_GPU_PACKED_NONE) return -1;
    if ((size_t)states * 8 > budget) return -1;
#define SM_AC_TARGET(i) ((delta[i] & 0x7fffffffu) / columns)
#define SM_AC_ENTRY(i) (SM_AC_TARGET(i) | (delta[i] & SM_GPU_DFA_FLAG ? 0x8000u : 0u))
    uint16_t *depth = malloc(states * sizeof *depth);
    uint16_t *fail = calloc(states, sizeof *fail);
    uint16_t *row_of = malloc(states * sizeof *row_of); /* whole row's index, or 0xffff */
    uint32_t *order = malloc(states * sizeof *order);
    uint32_t *records = calloc(states, 8);
    uint32_t *whole_states = malloc(states * sizeof *whole_states);
    uint8_t *image = NULL;
    int ok = depth && fail && row_of && order && records && whole_states;
    /* depth: the length of the state's string, its distance from the root */
    uint32_t head = 0, tail = 0;
    if (ok) {
        for (uint32_t s = 0; s < states; s++) depth[s] = 0xffffu, row_of[s] = 0xffffu;
        depth[0] = 0;
        order[tail++] = 0;
        while (head < tail && ok) {
            uint32_t u = order[head++];
            for (uint32_t c = 0; c < columns; c++) {
                uint32_t t = SM_AC_TARGET((size_t)u * columns + c);
                if (t >= states) ok = 0;
                else if (depth[t] == 0xffffu) {
                    depth[t] = (uint16_t)(depth[u] + 1);
                    order[tail++] = t;
                }
            }
        }
        ok = ok && tail == states;
    }
    /* a transition one deeper is the trie's (any other falls back to a
       shallower state); its target's failure state is the parent's failure
       state's transition, the root's children's the root */
    for (uint32_t h = 0; h < tail && ok; h++) {
        uint32_t u = order[h];
        for (uint32_t c = 0; c < columns; c++) {
            uint32_t t = SM_AC_TARGET((size_t)u * columns + c);
            if (depth[t] != depth[u] + 1) continue;
            fail[t] = (uint16_t)(u == 0 ? 0 : SM_AC_TARGET((size_t)fail[u] * columns + c));
            if (depth[fail[t]] >= depth[t]) ok = 0; /* shallower, or the walk below would not end */
        }
    }
    uint32_t rows = 0;
    for (uint32_t h = 0; h < tail && ok; h++) {
        uint32_t s = order[h], *r = records + 2 * s, found = 0;
        for (uint32_t f = fail[s]; h > 0; f = fail[f]) {
            if (row_of[f] != 0xffffu) {
                uint32_t differ = 0, classes[SM_AC_GPU_PACKED_EXCEPTIONS], entries[SM_AC_GPU_PACKED_EXCEPTIONS];
                for (uint32_t c = 0; c < columns && differ <= SM_AC_GPU_PACKED_EXCEPTIONS; c++) {
                    uint32_t mine = SM_AC_ENTRY((size_t)s * columns + c);
                    if (mine == SM_AC_ENTRY((size_t)f * columns + c)) continue;
                    if (differ < SM_AC_GPU_PACKED_EXCEPTIONS) classes[differ] = c, entries[differ] = mine;
                    differ++;
                }
                if (differ <= SM_AC_GPU_PACKED_EXCEPTIONS) {
                    uint32_t ca = differ > 0 ? classes[0] : SM_AC_GPU_PACKED_NONE;
                    uint32_t cb = differ > 1 ? classes[1] : SM_AC_GPU_PACKED_NONE;
                    r[0] = row_of[f] | ca << 16 | cb << 24;
                    r[1] = (differ > 0 ? entries[0] : 0) | (differ > 1 ? entries[1] : 0) << 16;
                    found = 1;
                    break;
                }
            }
            if (f == 0) break;
        }
        if (!found) {
            whole_states[rows] = s;
            row_of[s] = (uint16_t)rows;
            r[0] = rows | SM_AC_GPU_PACKED_NONE << 16 | SM_AC_GPU_PACKED_NONE << 24;
            r[1] = 0;
            if (++rows >= 0x8000u) ok = 0;
        }
    }
    sm_ac_gpu_packed_layout lay = sm_ac_gpu_packed_layout_of(rows, columns, states);
    if (ok) ok = lay.bytes <= budget && (image = calloc(1, lay.bytes)) != NULL;
    if (ok) {
        uint16_t *whole = (uint16_t *)image;
        for (uint32_t w = 0; w < rows; w++)
            for (uint32_t c = 0; c < columns; c++)
                whole[(size_t)w * columns + c] = (uint16_t)SM_AC_ENTRY((size_t)whole_states[w] * columns + c);
        uint32_t *heads = (uint32_t *)(image + lay.heads_off);
        uint16_t *entries = (uint16_t *)(image + lay.entries_off);
        for (uint32_t s = 0; s < states; s++) {
            heads[s] = records[2 * s];
            entries[2 * s] = (uint16_t)(records[2 * s + 1] & 0xffffu);
            entries[2 * s + 1] = (uint16_t)(records[2 * s + 1] >> 16);
        }
        /* the check: every entry of every state */
        for (uint32_t s = 0; s < states && ok; s++)
            for (uint32_t c = 0; c < columns && ok; c++)
                ok = sm_ac_gpu_packed_entry(whole, heads, entries, columns, s, c) ==
                     SM_AC_ENTRY((size_t)s * columns + c);
    }
#undef SM_AC_ENTRY
#undef SM_AC_TARGET
    free(depth);
    free(fail);
    free(row_of);
    free(order);
    free(records);
    free(whole_states);
    if (!ok) {
        free(image);
        return -1;
    }
    out->rows = rows;
    out->bytes = lay.bytes;
    if (keep_image) out->image = image;
    else free(image);
    return 0;
}
