/* A Myers text-lane kernel that reads the scores four steps at a time
 * (AVX-512 with VPOPCNTDQ; myers_lanes.c includes it once per element
 * width and register count, with the short kernel's macros and
 * KL_POPCNT, per-element population count). In search mode row 0 is zero,
 * so an element's score is popcount(Pv) - popcount(Mv); a score moves by at
 * most one per step, so over four steps from D0 to D4 every score is at
 * least (D0 + D4 - 4) / 2, and no end in them is at most k unless
 * D0 + D4 <= 2k + 4. Only then are those four steps taken again from the
 * saved columns with the score followed step by step (the eager kernel's
 * step), and their ends reported. The step itself loses the score's four
 * operations and the per-step test: about a quarter of its work. */
KL_TARGET static void KL_NAME(my_lanes *L, const uint8_t *text) {
    const apx_lanes *g = &L->g;
    KL_V Pv[KL_NR], Mv[KL_NR], D[KL_NR];
    for (unsigned r = 0; r < KL_NR; r++) {
        Pv[r] = KL_LOAD(L->KL_STATE.pv[r]);
        Mv[r] = KL_LOAD(L->KL_STATE.mv[r]);
        D[r] = KL_LOAD(L->KL_STATE.sc[r]);
    }
    const KL_V K = KL_SET1(L->k), BOUND = KL_SET1(2 * L->k + 4);
    const unsigned valid = L->valid;
    KL_TABLES
    for (size_t i0 = 0; i0 < g->steps; i0 += APX_LANES_GROUP) {
        if (i0 % KL_FETCH_STEPS == 0) KL_FETCH(i0);
        KL_LAYOUT(i0);
        for (unsigned h = 0; h < APX_LANES_GROUP; h += 4) {
            KL_V P0[KL_NR], M0[KL_NR], D4[KL_NR];
            for (unsigned r = 0; r < KL_NR; r++) {
                P0[r] = Pv[r];
                M0[r] = Mv[r];
            }
            for (unsigned t = h; t < h + 4; t++)
                for (unsigned r = 0; r < KL_NR; r++) {
                    KL_V Ph, Mh;
                    const KL_V Eq = KL_EQ(r, t);
                    KL_STEP(Eq, Pv[r], Mv[r], Ph, Mh);
                }
            unsigned near[KL_NR], any = 0;
            for (unsigned r = 0; r < KL_NR; r++) {
                D4[r] = KL_SUB(KL_POPCNT(Pv[r]), KL_POPCNT(Mv[r]));
                near[r] = KL_HITS(KL_ADD(D[r], D4[r]), BOUND) & valid;
                any |= near[r];
            }
            if (APX_UNLIKELY(any != 0))
                for (unsigned r = 0; r < KL_NR; r++) {
                    if (!near[r]) continue;
                    KL_V P = P0[r], M = M0[r], SC = D[r];
                    for (unsigned t = h; t < h + 4; t++) {
                        KL_V Ph, Mh;
                        const KL_V Eq = KL_EQ(r, t);
                        KL_STEP(Eq, P, M, Ph, Mh);
                        SC = KL_SUB(KL_ADD(SC, KL_SRLTOP(Ph)), KL_SRLTOP(Mh));
                        const unsigned hits = KL_HITS(SC, K) & valid;
                        if (hits) {
                            KL_ELEM sc[64 / sizeof(KL_ELEM)] = {0};
                            KL_STORE(sc, SC);
                            uint64_t d[16];
                            for (unsigned e = 0; e < g->elems; e++) d[e] = sc[e];
                            my_lanes_report(L, r, i0 + t, hits, d);
                        }
                    }
                }
            for (unsigned r = 0; r < KL_NR; r++) D[r] = D4[r];
        }
    }
    for (unsigned r = 0; r < KL_NR; r++) {
        KL_STORE(L->KL_STATE.pv[r], Pv[r]);
        KL_STORE(L->KL_STATE.mv[r], Mv[r]);
        KL_STORE(L->KL_STATE.sc[r], D[r]);
    }
}
