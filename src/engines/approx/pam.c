/* k mismatches with a PAM: the engines search guide + PAM (or PAM + guide) with k errors,
 * which finds every window whose PAM matches exactly (the errors then all
 * lie in the guide); here the windows whose PAM part does not match are
 * dropped. Edits are filtered where their events are resolved (edits.c). */
#include "base/internal.h"
#include "engines/approx/approx.h"

/* Does text byte t match pattern letter p exactly (dna)? */
static int pam_symbol_matches(uint8_t p, uint8_t t, unsigned flags) {
    unsigned ps = sm_nt_set[p] & 15u, ts = sm_nt_set[t] & 15u;
    if (!(ps & ts)) return 0;
    /* Text IUPAC codes (and N) match only under text-iupac. */
    return (flags & SM_FLAG_TEXT_IUPAC) || (ts & (ts - 1)) == 0;
}

void sm_pam_filter_windows(const sm_db *db, sm_sink *sink, size_t from, const uint8_t *text, size_t len,
                           uint64_t pos0) {
    const sm_db_header *h = sm_db_head(db);
    uint32_t q = h->pam_length;
    size_t out = from;
    for (size_t i = from; i < sink->n; i++) {
        const sm_rawhit *x = &sink->hits[i];
        size_t m;
        const uint8_t *seq = (const uint8_t *)sm_db_pattern_seq(db, x->pattern, &m);
        if (!seq || q >= m || x->end - x->start != m || x->start < pos0 || x->end - pos0 > len) continue;
        /* A 3' PAM: '+' windows end with it; '-' windows (rc(PAM) + rc(guide))
           start with its reverse complement. A 5' PAM the other way round. */
        const uint8_t *pam = h->pam_side == SM_PAM_5PRIME ? seq : seq + (m - q);
        const uint8_t *at = sm_db_pam_first(h, x->reverse) ? text + (x->start - pos0) : text + (x->end - q - pos0);
        int ok = 1;
        for (uint32_t t = 0; t < q && ok; t++)
            ok = x->reverse ? pam_symbol_matches(sm_nt_complement[pam[q - 1 - t]], at[t], h->flags)
                            : pam_symbol_matches(pam[t], at[t], h->flags);
        if (ok) sink->hits[out++] = *x;
    }
    sink->n = out;
}
