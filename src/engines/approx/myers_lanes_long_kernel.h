/* One Myers text-lane kernel for a key longer than 64 symbols (block-wise:
 * each slice's column is a chain of 64-bit blocks, one element per slice
 * in each block's registers), with Ukkonen's cut-off shared by the slices:
 * the active blocks are those some slice needs (myers_lanes.c includes
 * this once per instruction set). Besides the vector macros of the short
 * kernels (KL_V, KL_LOAD, KL_STORE, KL_FETCH, KL_FETCH_STEPS, KL_LAYOUT,
 * KL_SET1, KL_ADD, KL_SUB, KL_TABLES without the match tables), the
 * includer defines:
 *   KLL_EQ(b, r, t)          the match words of block b, register r, step t
 *   KLL_AND, KLL_OR, KLL_XOR, KLL_NOT, KLL_SHL1, KLL_SRL(x, n)
 *   KLL_LE(a, K)             bit e set when element e of a <= K (signed)
 *   KLL_ONE                  1 in every element
 */
KL_TARGET static void KLL_NAME(my_long_lanes *L, const uint8_t *text) {
    const apx_lanes *g = &L->g;
    const uint32_t nb = L->blocks, last = nb - 1;
    const unsigned top_last = L->top_last;
    const int64_t h_last = L->h_last;
    KL_V *P = (KL_V *)L->P, *M = (KL_V *)L->M, *SC = (KL_V *)L->SC; /* [block * 2 + register] */
    const KL_V K = KL_SET1(L->k), ONE = KLL_ONE, ZERO = KLL_XOR(ONE, ONE), ONES = KLL_NOT(ZERO);
    const unsigned valid = L->valid;
    uint32_t y = L->y;
    KL_TABLES
    for (size_t i0 = 0; i0 < g->steps; i0 += APX_LANES_GROUP) {
        if (i0 % KL_FETCH_STEPS == 0) KL_FETCH(i0);
        KL_LAYOUT(i0);
        for (unsigned t = 0; t < APX_LANES_GROUP; t++) {
            unsigned grow = 0, shrink = 1, hits = 0;
            KL_V cp[2], cm[2];
            for (unsigned r = 0; r < 2; r++) {
                KL_V hp = ZERO, hm = ZERO;
                for (uint32_t b = 0; b <= y; b++) {
                    const unsigned top = b == last ? top_last : 63u;
                    KL_V Eq = KLL_EQ(b, r, t);
                    const KL_V Pv = P[2 * b + r], Mv = M[2 * b + r];
                    const KL_V Xv = KLL_OR(Eq, Mv);
                    Eq = KLL_OR(Eq, hm);
                    const KL_V Xh = KLL_OR(KLL_XOR(KL_ADD(KLL_AND(Eq, Pv), Pv), Pv), Eq);
                    const KL_V Ph = KLL_OR(Mv, KLL_NOT(KLL_OR(Xh, Pv))), Mh = KLL_AND(Pv, Xh);
                    const KL_V Phs = KLL_OR(KLL_SHL1(Ph), hp), Mhs = KLL_OR(KLL_SHL1(Mh), hm);
                    P[2 * b + r] = KLL_OR(Mhs, KLL_NOT(KLL_OR(Xv, Phs)));
                    M[2 * b + r] = KLL_AND(Phs, Xv);
                    hp = KLL_AND(KLL_SRL(Ph, top), ONE);
                    hm = KLL_AND(KLL_SRL(Mh, top), ONE);
                    SC[2 * b + r] = KL_SUB(KL_ADD(SC[2 * b + r], hp), hm);
                }
                cp[r] = hp;
                cm[r] = hm;
                /* Block y + 1 may hold a cell <= k (for some slice) only when
                   the bottom of block y was at k in the previous column and
                   the first cell above gains a match or a smaller neighbour
                   below (the scalar loop's rule, per element). */
                if (y < last) {
                    const KL_V before = KL_ADD(KL_SUB(SC[2 * y + r], hp), hm);
                    const KL_V first = KLL_OR(KLL_AND(KLL_EQ(y + 1, r, t), ONE), hm);
                    grow |= KLL_LE(before, K) & ~KLL_LE(first, ZERO) & valid;
                }
                const int64_t h = y == last ? h_last : 64;
                shrink &= (KLL_LE(SC[2 * y + r], KL_SET1(L->k + h - 1)) & valid) == 0;
                if (y == last) hits |= (KLL_LE(SC[2 * y + r], K) & valid) << (r * 8);
            }
            if (grow) {
                y++;
                const unsigned top = y == last ? top_last : 63u;
                const int64_t h = y == last ? h_last : 64;
                for (unsigned r = 0; r < 2; r++) {
                    /* A fresh block above (each row one more than the row
                       below, an upper bound), stepped with the carry. */
                    KL_V Eq = KLL_EQ(y, r, t);
                    const KL_V Pv = ONES, Mv = ZERO, hp = cp[r], hm = cm[r];
                    const KL_V Xv = KLL_OR(Eq, Mv);
                    Eq = KLL_OR(Eq, hm);
                    const KL_V Xh = KLL_OR(KLL_XOR(KL_ADD(KLL_AND(Eq, Pv), Pv), Pv), Eq);
                    const KL_V Ph = KLL_OR(Mv, KLL_NOT(KLL_OR(Xh, Pv))), Mh = KLL_AND(Pv, Xh);
                    const KL_V Phs = KLL_OR(KLL_SHL1(Ph), hp), Mhs = KLL_OR(KLL_SHL1(Mh), hm);
                    P[2 * y + r] = KLL_OR(Mhs, KLL_NOT(KLL_OR(Xv, Phs)));
                    M[2 * y + r] = KLL_AND(Phs, Xv);
                    const KL_V c2p = KLL_AND(KLL_SRL(Ph, top), ONE), c2m = KLL_AND(KLL_SRL(Mh, top), ONE);
                    SC[2 * y + r] = KL_SUB(KL_ADD(KL_ADD(KL_SUB(KL_ADD(SC[2 * (y - 1) + r], hm), hp), KL_SET1(h)), c2p), c2m);
                }
                if (y == last)
                    for (unsigned r = 0; r < 2; r++) hits |= (KLL_LE(SC[2 * y + r], K) & valid) << (r * 8);
            } else if (shrink && y > 0) {
                y--;
                /* and further down while every slice's block is past k */
                for (;;) {
                    const int64_t h = y == last ? h_last : 64;
                    unsigned low = 0;
                    for (unsigned r = 0; r < 2; r++) low |= KLL_LE(SC[2 * y + r], KL_SET1(L->k + h - 1)) & valid;
                    if (y == 0 || low) break;
                    y--;
                }
            }
            if (APX_UNLIKELY(hits != 0)) {
                for (unsigned r = 0; r < 2; r++) {
                    unsigned hr = (hits >> (r * 8)) & 0xffu;
                    if (!hr) continue;
                    int64_t sc[8] = {0};
                    KL_STORE(sc, SC[2 * last + r]);
                    uint64_t d[16];
                    for (unsigned e = 0; e < g->elems; e++) d[e] = (uint64_t)sc[e];
                    my_lanes_report_long(L, r, i0 + t, hr, d);
                }
            }
        }
    }
    L->y = y;
}

/* its parameters end here: the next instantiation defines its own */
#undef KLL_NAME
#undef KLL_EQ
#undef KLL_AND
#undef KLL_OR
#undef KLL_XOR
#undef KLL_NOT
#undef KLL_SHL1
#undef KLL_SRL
#undef KLL_LE
#undef KLL_ONE
