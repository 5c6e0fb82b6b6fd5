/* Profiles (SM_FORMAT_PROFILE, --profile): how many sites each guide has in every
 * class: no bulge, a DNA bulge of 1..N or an RNA bulge of 1..N, by the
 * number of mismatches (errors) 0..k, as off-target studies tabulate
 * them. A site's bulge follows from its length against the pattern's
 * (include/seqmatch.h), so no alignment is needed. */
#include <stdio.h>
#include <stdlib.h>

#include "output/output.h"

/* Columns per pattern at most: (1 + dna + rna) x (k + 1). */
#define PROFILE_MAX_COLUMNS 4096u

struct sm_profile {
    uint32_t patterns, k, dna, rna, columns;
    int bulges;           /* classes by length: a PAM database with bulges */
    uint32_t *lengths;    /* each pattern's stored length (guide + PAM) */
    uint64_t *counts;     /* patterns x columns */
};

sm_profile *sm_profile_create(const sm_db *db, sm_error *err) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    uint32_t k = info.match == SM_MATCH_EXACT ? 0 : info.max_errors;
    uint64_t columns = (uint64_t)(1 + info.dna_bulges + info.rna_bulges) * (k + 1);
    if (columns > PROFILE_MAX_COLUMNS) {
        sm_set_error(err, SM_ERR_LIMIT, "a profile has a column per error count: %u errors are too many for it", k);
        return NULL;
    }
    sm_profile *p = calloc(1, sizeof *p);
    if (!p) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    p->patterns = info.pattern_count;
    p->k = k;
    p->dna = info.dna_bulges;
    p->rna = info.rna_bulges;
    p->bulges = info.pam_length && (p->dna || p->rna);
    p->columns = (uint32_t)columns;
    size_t n = p->patterns ? p->patterns : 1;
    p->lengths = calloc(n, sizeof *p->lengths);
    p->counts = calloc(n * p->columns, sizeof *p->counts);
    if (!p->lengths || !p->counts) {
        sm_profile_free(p);
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < p->patterns; i++) {
        size_t len = 0;
        sm_db_pattern_seq(db, i, &len);
        p->lengths[i] = (uint32_t)len;
    }
    return p;
}

void sm_profile_add(sm_profile *p, const sm_hit *hit) {
    if (hit->pattern >= p->patterns || hit->errors > p->k) return;
    uint32_t cls = 0; /* 0 none, 1..dna DNA bulges, dna + 1.. RNA bulges */
    if (p->bulges) {
        uint64_t len = hit->end - hit->start, m = p->lengths[hit->pattern];
        if (len > m && len - m <= p->dna) cls = (uint32_t)(len - m);
        else if (len < m && m - len <= p->rna) cls = p->dna + (uint32_t)(m - len);
    }
    p->counts[(size_t)hit->pattern * p->columns + (size_t)cls * (p->k + 1) + hit->errors]++;
}

static void put(sm_writer *w, const char *s) { writer_put(w, s, strlen(s)); }

static void put_u64(sm_writer *w, uint64_t v) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    writer_put(w, buf, (size_t)n);
}

void sm_profile_write(const sm_profile *p, sm_writer *w, int jsonl, int header, char *const *names,
                       const size_t *name_lens) {
    uint32_t k1 = p->k + 1, classes = p->columns / k1;
    if (!jsonl && header) {
        /* mm<e>: no bulge, e mismatches; dna<b>_mm<e>, rna<b>_mm<e>: a bulge of b */
        put(w, "#pattern\tsites");
        char col[48];
        for (uint32_t c = 0; c < classes; c++)
            for (uint32_t e = 0; e < k1; e++) {
                if (c == 0) snprintf(col, sizeof col, "\tmm%u", e);
                else if (c <= p->dna) snprintf(col, sizeof col, "\tdna%u_mm%u", c, e);
                else snprintf(col, sizeof col, "\trna%u_mm%u", c - p->dna, e);
                put(w, col);
            }
        put(w, "\n");
    }
    for (uint32_t i = 0; i < p->patterns; i++) {
        const uint64_t *row = p->counts + (size_t)i * p->columns;
        uint64_t total = 0;
        for (uint32_t c = 0; c < p->columns; c++) total += row[c];
        if (!jsonl) {
            writer_put(w, names[i], name_lens[i]);
            put(w, "\t");
            put_u64(w, total);
            for (uint32_t c = 0; c < p->columns; c++) {
                put(w, "\t");
                put_u64(w, row[c]);
            }
            put(w, "\n");
            continue;
        }
        /* {"pattern":..,"sites":N,"mismatches":[..],"dna_bulge":[[size 1: ..],..],"rna_bulge":[..]} */
        put(w, "{\"pattern\":");
        writer_put(w, names[i], name_lens[i]);
        put(w, ",\"sites\":");
        put_u64(w, total);
        for (int part = 0; part < 3; part++) {
            uint32_t from = part == 0 ? 0 : part == 1 ? 1 : 1 + p->dna;
            uint32_t count = part == 0 ? 1 : part == 1 ? p->dna : p->rna;
            put(w, part == 0 ? ",\"mismatches\":" : part == 1 ? ",\"dna_bulge\":[" : ",\"rna_bulge\":[");
            for (uint32_t c = from; c < from + count; c++) {
                if (c > from) put(w, ",");
                put(w, "[");
                for (uint32_t e = 0; e < k1; e++) {
                    if (e) put(w, ",");
                    put_u64(w, row[(size_t)c * k1 + e]);
                }
                put(w, "]");
            }
            if (part) put(w, "]");
        }
        put(w, "}\n");
    }
}

void sm_profile_free(sm_profile *p) {
    if (!p) return;
    free(p->lengths);
    free(p->counts);
    free(p);
}
