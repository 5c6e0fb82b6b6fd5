/* One Myers text-lane kernel (myers_lanes.c includes this file once per
 * instruction set, element width and register count). The includer
 * defines:
 *   KL_NAME, KL_TARGET   the function's name and target attribute
 *   KL_NR                registers (dependency chains): 1 or 2
 *   KL_ELEM              element type (uint32_t or uint64_t), KL_BITS its width
 *   KL_V                 vector type; KL_LOAD, KL_STORE, KL_SET1
 *   KL_STEP(Eq, Pv, Mv, Ph, Mh)  the searching step on whole elements
 *   KL_ADD, KL_SUB, KL_SRLTOP    score arithmetic
 *   KL_HITS(SC, K)       bit e set when element e's score is <= K
 *   KL_FETCH(i0)         read steps i0 .. i0 + KL_FETCH_STEPS - 1 of every slice
 *   KL_LAYOUT(i0)        the index bytes (or classes) of steps i0 .. i0 + 7
 *   KL_EQ(r, t)          the match words of register r at step t of the group
 *   KL_TABLES            declarations the two macros above use
 */
KL_TARGET static void KL_NAME(my_lanes *L, const uint8_t *text) {
    const apx_lanes *g = &L->g;
    KL_V Pv[KL_NR], Mv[KL_NR], SC[KL_NR];
    for (unsigned r = 0; r < KL_NR; r++) {
        Pv[r] = KL_LOAD(L->KL_STATE.pv[r]);
        Mv[r] = KL_LOAD(L->KL_STATE.mv[r]);
        SC[r] = KL_LOAD(L->KL_STATE.sc[r]);
    }
    const KL_V K = KL_SET1(L->k);
    const unsigned valid = L->valid;
    KL_TABLES
    for (size_t i0 = 0; i0 < g->steps; i0 += APX_LANES_GROUP) {
        if (i0 % KL_FETCH_STEPS == 0) KL_FETCH(i0);
        KL_LAYOUT(i0);
        for (unsigned t = 0; t < APX_LANES_GROUP; t++) {
            unsigned hits[KL_NR], any = 0;
            for (unsigned r = 0; r < KL_NR; r++) {
                KL_V Ph, Mh;
                const KL_V Eq = KL_EQ(r, t);
                KL_STEP(Eq, Pv[r], Mv[r], Ph, Mh);
                SC[r] = KL_SUB(KL_ADD(SC[r], KL_SRLTOP(Ph)), KL_SRLTOP(Mh));
                hits[r] = KL_HITS(SC[r], K) & valid;
                any |= hits[r];
            }
            if (APX_UNLIKELY(any != 0))
                for (unsigned r = 0; r < KL_NR; r++)
                    if (hits[r]) {
                        KL_ELEM sc[64 / sizeof(KL_ELEM)] = {0};
                        KL_STORE(sc, SC[r]);
                        uint64_t d[16];
                        for (unsigned e = 0; e < g->elems; e++) d[e] = sc[e];
                        my_lanes_report(L, r, i0 + t, hits[r], d);
                    }
        }
    }
    for (unsigned r = 0; r < KL_NR; r++) {
        KL_STORE(L->KL_STATE.pv[r], Pv[r]);
        KL_STORE(L->KL_STATE.mv[r], Mv[r]);
        KL_STORE(L->KL_STATE.sc[r], SC[r]);
    }
}
