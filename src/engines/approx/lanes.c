/* Text lanes: the geometry of a cut (see lanes.h). */
#include "engines/approx/lanes.h"

apx_lanes_isa sm_apx_lanes_isa_for(sm_approx_path path) {
#ifdef APX_HAVE_AVX2
    path = sm_apx_resolve_path(path, SM_APPROX_AVX512);
    const sm_cpu_features *cpu = sm_cpu();
    if (path == SM_APPROX_AVX512 && cpu->avx512bw && cpu->avx512vbmi) return APX_LANES_AVX512;
    if (path >= SM_APPROX_AVX2) return APX_LANES_AVX2;
#else
    (void)path;
#endif
    return APX_LANES_NONE;
}

/* Match words a register's permute picks from. */
static unsigned table_capacity(const apx_lanes *g) {
    if (g->isa == APX_LANES_AVX512) return g->width == 32 ? 32 : 16;
    return g->width == 32 ? 16 : 8;
}

int sm_apx_lanes_begin(apx_lanes *g, apx_lanes_isa isa, unsigned keys, unsigned max_len) {
    memset(g, 0, sizeof *g);
    if (isa == APX_LANES_NONE || keys == 0 || max_len == 0 || max_len > 64) return 0;
    g->isa = isa;
    g->width = max_len <= 32 ? 32 : 64;
    g->elems = (isa == APX_LANES_AVX512 ? 512u : 256u) / g->width;
    g->keys = keys;
    g->per_reg = g->elems / keys;
    if (g->per_reg < 2) return 0;
    g->regs = 2 * g->per_reg <= APX_LANES_MAX_SLICES ? 2 : 1;
    g->slices = g->regs * g->per_reg;
    g->mult = isa == APX_LANES_AVX2 && g->width == 64 ? 2 : 1;
    g->ibytes = isa == APX_LANES_AVX512 ? g->elems : 8;
    for (unsigned r = 0; r < 258; r++) g->row_class[r] = APX_LANES_MAX_TABLE;
    return 1;
}

int sm_apx_lanes_class(apx_lanes *g, unsigned row, const uint64_t *words, uint64_t *table) {
    const unsigned Q = g->keys;
    for (unsigned c = 0; c < g->classes; c++) {
        unsigned q = 0;
        while (q < Q && table[c * Q + q] == words[q]) q++;
        if (q == Q) {
            g->row_class[row] = (uint16_t)c;
            return (int)c;
        }
    }
    if ((g->classes + 1) * Q > table_capacity(g)) return -1;
    for (unsigned q = 0; q < Q; q++) table[g->classes * Q + q] = words[q];
    g->row_class[row] = (uint16_t)g->classes;
    return (int)g->classes++;
}

size_t sm_apx_lanes_stride(const apx_lanes *g, size_t len, size_t warm, sm_lanes_mode mode) {
    if (mode == SM_LANES_OFF || g->isa == APX_LANES_NONE || g->slices < 2) return 0;
    const size_t S = g->slices;
    /* The least stride: slice 1 starts its warm-up at P - w >= 0, and in AUTO
       the warm-up costs at most a third of a slice (a record of a few hundred
       bytes still scans several times faster in lanes than byte by byte). */
    size_t least = warm ? warm : 1;
    if (mode == SM_LANES_AUTO) {
        least = 2 * warm;
        if (least < APX_LANES_AUTO_LEAST) least = APX_LANES_AUTO_LEAST;
    }
    if (len / S < least) return 0;
    /* P + w a multiple of the group: every slice reads whole groups of eight
       bytes, and the last one ends at S * P <= len. */
    size_t steps = (len / S + warm) / APX_LANES_GROUP * APX_LANES_GROUP;
    if (steps < warm + least) return 0;
    return steps - warm;
}

int sm_apx_lanes_cut(apx_lanes *g, const uint16_t *class_of, size_t len, size_t warm, sm_lanes_mode mode) {
    const size_t S = g->slices, P = sm_apx_lanes_stride(g, len, warm, mode);
    if (P == 0) return 0;
    g->warm = warm;
    g->stride = P;
    g->steps = P + warm;
    for (unsigned s = 0; s < APX_LANES_MAX_SLICES; s++)
        g->base[s] = s < S ? (s == 0 ? 0 : (int64_t)(s * g->stride - warm)) : 0;
    for (unsigned b = 0; b < 256; b++) {
        unsigned c = g->row_class[class_of[b]];
        if (c >= g->classes) c = 0; /* a row no key can match was seen by no class: cannot happen */
        g->cmap[b] = (uint8_t)(c * g->keys * g->mult);
    }
    /* Where the index bytes come from (lanes.h). */
    const unsigned Q = g->keys;
    for (unsigned r = 0; r < g->regs; r++) {
        if (g->isa == APX_LANES_AVX512) {
            const unsigned per_quarter = 64 / g->ibytes;
            for (unsigned h = 0; h * per_quarter < APX_LANES_GROUP; h++)
                for (unsigned j = 0; j < 64; j++) {
                    unsigned t = h * per_quarter + j / g->ibytes, e = j % g->ibytes;
                    unsigned s = apx_lanes_slice(g, r, e);
                    if (s >= S) s = 0;
                    g->perm[r][h][j] = (uint8_t)((s / 8) * 64 + (s % 8) * 8 + t);
                }
            for (unsigned j = 0; j < 64; j++) {
                unsigned e = j % g->ibytes;
                g->qpat[r][j] = (uint8_t)(apx_lanes_slice(g, r, e) < S ? e % Q : 0);
            }
        } else {
            for (unsigned j = 0; j < 16; j++) {
                unsigned e = j / g->mult;
                unsigned s = j < 8 ? apx_lanes_slice(g, r, e) : S;
                int used = s < S;
                g->shuf[r][j] = (uint8_t)(used ? s : 0);
                g->spat[r][j] = (uint8_t)(used ? (e % Q) * g->mult + j % g->mult : 0);
            }
        }
    }
    return 1;
}
