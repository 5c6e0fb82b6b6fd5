/* One k-mismatch text-lane kernel (kmismatch_lanes.c includes this file
 * through kmismatch_lanes_set.h once per instruction set, element width,
 * register count KM_NR and counter plane count KM_NP). Besides the names
 * below it uses the includer's vector macros (KL_V, KL_LOAD, KL_STORE,
 * KL_FETCH, KL_LAYOUT, KL_EQ, KL_TABLES, KL_ELEM, KL_STATE) and:
 *   KM_SHL1(x)          every element shifted up by one bit
 *   KM_SET_BIT0(b)      a vector with bit 0 of every element = b
 *   KM_PLANE(sh, f, x)  (sh | f) ^ x, and KM_CARRY(sh, f, x) = (sh | f) & x
 *   KM_OR               bitwise or
 *   KM_CLEAR(O, F)      bit e set when element e of O & F is zero
 */
KL_TARGET static void KM_NAME(km_lanes *L, const uint8_t *text) {
    const apx_lanes *g = &L->g;
    KL_V P[KM_NR][KM_NP + 1], O[KM_NR];
    for (unsigned r = 0; r < KM_NR; r++) {
        for (int p = 0; p < KM_NP; p++) P[r][p] = KL_LOAD(L->KL_STATE.plane[p][r]);
        O[r] = KL_LOAD(L->KL_STATE.plane[KM_NP][r]);
    }
    KL_V FILL[KM_NP + 1];
    for (int p = 0; p < KM_NP; p++) FILL[p] = KM_SET_BIT0((L->offset >> p) & 1u);
    const KL_V F = KL_LOAD(L->KL_STATE.final);
    const unsigned valid = L->valid;
    KL_TABLES
    for (size_t i0 = 0; i0 < g->steps; i0 += APX_LANES_GROUP) {
        if (i0 % KL_FETCH_STEPS == 0) KL_FETCH(i0);
        KL_LAYOUT(i0);
        for (unsigned t = 0; t < APX_LANES_GROUP; t++) {
            unsigned hits[KM_NR], any = 0;
            for (unsigned r = 0; r < KM_NR; r++) {
                KL_V X = KL_EQ(r, t);
                for (int p = 0; p < KM_NP; p++) {
                    const KL_V sh = KM_SHL1(P[r][p]);
                    P[r][p] = KM_PLANE(sh, FILL[p], X);
                    X = KM_CARRY(sh, FILL[p], X);
                }
                O[r] = KM_OR(KM_SHL1(O[r]), X);
                hits[r] = KM_CLEAR(O[r], F) & valid;
                any |= hits[r];
            }
            if (APX_UNLIKELY(any != 0))
                for (unsigned r = 0; r < KM_NR; r++)
                    if (hits[r]) {
                        uint64_t value[16] = {0};
                        for (int p = 0; p < KM_NP; p++) {
                            KL_ELEM v[64 / sizeof(KL_ELEM)] = {0};
                            KL_STORE(v, P[r][p]);
                            for (unsigned e = 0; e < g->elems; e++)
                                value[e] |= (uint64_t)((v[e] >> (L->length[e % g->keys] - 1)) & 1u) << p;
                        }
                        km_lanes_report(L, r, i0 + t, hits[r], value);
                    }
        }
    }
    for (unsigned r = 0; r < KM_NR; r++) {
        for (int p = 0; p < KM_NP; p++) KL_STORE(L->KL_STATE.plane[p][r], P[r][p]);
        KL_STORE(L->KL_STATE.plane[KM_NP][r], O[r]);
    }
}
