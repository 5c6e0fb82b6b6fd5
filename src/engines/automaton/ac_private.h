/* Pieces shared by the automaton builders, the scanner and the validator. */
#ifndef SM_AC_PRIVATE_H
#define SM_AC_PRIVATE_H

#include "engines/automaton/automaton.h"

#define SM_AC_TARGET_MASK 0x7fffffffu
#define SM_AC_MAX_ENTRIES (1ull << 31)

static inline uint64_t sm_ac_align64(uint64_t x) { return (x + 63u) & ~(uint64_t)63u; }

/* Where each table lies in a section of a given shape. */
typedef struct {
    uint64_t delta_off, out_index_off, out_list_off, size;
} sm_ac_layout;

static inline sm_ac_layout sm_ac_layout_for(uint64_t states, uint32_t columns, uint64_t out_total) {
    sm_ac_layout l;
    l.delta_off = sm_ac_align64(sizeof(sm_ac_header));
    l.out_index_off = sm_ac_align64(l.delta_off + states * columns * 4u);
    l.out_list_off = sm_ac_align64(l.out_index_off + (states + 1) * 4u);
    l.size = sm_ac_align64(l.out_list_off + out_total * 4u);
    return l;
}

/* Everything both builders agree on before building: the class alphabet,
   the keys sorted by (symbols, output) and the exact number of states. */
typedef struct {
    uint32_t columns;
    uint16_t key_class[256];   /* class of a key symbol (0 when unused) */
    uint16_t class_of[256];    /* class of a text byte */
    sm_ac_key *sorted;         /* nkeys copies, sorted */
    uint32_t *lcp;             /* lcp[i]: common prefix of sorted keys i - 1 and i (0 for key 0) */
    size_t nkeys;
    uint64_t states;
    uint32_t max_depth;
} sm_ac_plan;

/* Division of a state offset (state * columns, < 2^31) by columns through a
   multiplication: mul <= 2^33 keeps the product below 2^64, and the rounding
   error stays below one for every dividend under 2^32. */
typedef struct {
    uint64_t mul;
    unsigned shift;
} sm_ac_divider;

static inline sm_ac_divider sm_ac_divider_for(uint32_t d) {
    sm_ac_divider v;
    v.shift = 32 + sm_log2_ceil(d);
    v.mul = ((1ull << v.shift) + d - 1) / d;
    return v;
}

static inline uint32_t sm_ac_divide(sm_ac_divider v, uint32_t x) {
    return (uint32_t)(((uint64_t)(x & SM_AC_TARGET_MASK) * v.mul) >> v.shift);
}

/* Appends the zeroed section skeleton (header filled, tables uninitialised
   except padding) for states/columns without the output list; returns the
   section start in *base. */
int sm_ac_begin_section(const sm_ac_plan *plan, sm_buf *section, size_t *base, sm_error *err);
/* Grows the section for out_total output ids (checking the limits) and
   finishes its header. */
int sm_ac_finish_section(const sm_ac_plan *plan, uint64_t out_total, uint64_t max_bytes,
                         sm_buf *section, size_t base, sm_error *err);

/* Number of distinct output ids among keys[0..n), which are sorted by output. */
static inline uint32_t sm_ac_distinct_outputs(const sm_ac_key *keys, uint32_t n) {
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || keys[i].output != keys[i - 1].output) c++;
    return c;
}

int sm_ac_build_serial(const sm_ac_key *keys, const sm_ac_plan *plan, uint64_t max_bytes,
                       sm_buf *section, sm_error *err);
int sm_ac_build_on_gpu(const sm_ac_plan *plan, int device, uint64_t max_bytes, sm_buf *section, double ms[3],
                       sm_error *err);
int sm_ac_build_levels(const sm_ac_plan *plan, unsigned threads, uint64_t max_bytes,
                       sm_buf *section, sm_error *err);

#endif /* SM_AC_PRIVATE_H */
