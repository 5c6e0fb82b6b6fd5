/* The --explain text of a database (include/seqmatch_compile.h,
 * sm_db_explain): its alphabet, patterns, matching, engines and why the
 * planner chose them, the cost estimates, what --gpu would run and its
 * size; and the note on a forced engine far slower than the planner's
 * choice (sm_db_engine_slowdown). Public calls only. */
#include <stdio.h>

#include "seqmatch_common.h"
#include "seqmatch_compile.h"

static int db_is_edits(const sm_db *db) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    return info.match == SM_MATCH_EDITS;
}

static const sm_engine_estimate *estimate_of(const sm_approx_estimates *est, sm_engine engine) {
    switch (engine) {
    case SM_ENGINE_MISMATCH: return &est->mismatch;
    case SM_ENGINE_MYERS: return &est->myers;
    case SM_ENGINE_WAVEFRONT: return &est->wavefront;
    case SM_ENGINE_PIGEONHOLE: return &est->pigeonhole;
    default: return NULL;
    }
}

static const char *estimate_name(sm_engine engine) {
    return engine == SM_ENGINE_MISMATCH ? "mismatch" : engine == SM_ENGINE_MYERS ? "myers"
           : engine == SM_ENGINE_WAVEFRONT ? "wavefront" : "pigeonhole";
}

/* An approximate engine forced where the planner estimates it this many
   times slower than its own choice is worth a note (it still runs). */
#define SLOWDOWN_NOTED 10.0

int sm_db_engine_slowdown(const sm_db *db, sm_engine engine, uint32_t typical_record, char *buf, size_t size) {
    sm_approx_estimates est;
    if (sm_db_approx_estimates(db, typical_record, &est) != SM_OK) return 0;
    const sm_engine_estimate *mine = estimate_of(&est, engine), *best = estimate_of(&est, est.choice);
    if (!mine || !best || !mine->usable || engine == est.choice || best->ns_per_byte <= 0) return 0;
    double ratio = mine->ns_per_byte / best->ns_per_byte;
    if (ratio < SLOWDOWN_NOTED) return 0;
    if (buf && size)
        snprintf(buf, size,
                 "--engine %s is hopeless here: about %.3g ns per text byte (%s), %.0f times the estimate for %s "
                 "(%.3g), which --engine auto takes",
                 estimate_name(engine), mine->ns_per_byte, mine->basis, ratio, estimate_name(est.choice),
                 best->ns_per_byte);
    return 1;
}

static void print_size(FILE *out, uint64_t bytes) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    fprintf(out, "%llu bytes", (unsigned long long)bytes);
    if (bytes >= 1024) {
        double value = (double)bytes;
        int unit = -1;
        while (value >= 1024.0 && unit < 3) {
            value /= 1024.0;
            unit++;
        }
        fprintf(out, " (%.1f %s)", value, units[unit]);
    }
    fputc('\n', out);
}

/* Why the exact engines are the ones they are: the planner's rules
   (src/core/compile.c), stated for the engines this database uses. */
static void explain_exact_plan(FILE *out, const sm_db *db, int forced) {
    uint32_t automaton = sm_db_engine_patterns(db, SM_ENGINE_AUTOMATON), kmer = sm_db_engine_patterns(db, SM_ENGINE_KMER);
    uint32_t wumanber = sm_db_engine_patterns(db, SM_ENGINE_WUMANBER);
    uint32_t literal = automaton + kmer + wumanber;
    if (forced) {
        fputs("why              the engine was forced with --engine\n", out);
        return;
    }
    if (sm_db_engine_patterns(db, SM_ENGINE_SHIFTAND))
        fputs("why              shift-and takes the IUPAC patterns that expand to too many strings\n", out);
    if (kmer && kmer < literal)
        fputs("why              mixed lengths: the patterns of the length whose trie would be largest go to the\n"
              "                 k-mer table, the others to their own engine; both scan the text\n", out);
    if (kmer)
        fputs("why              k-mer table: one length k <= 32 over 4 symbols, and a trie that could pass\n"
              "                 64 KiB (k <= 8), 256 KiB (k <= 12, direct table) or 8 MiB (k > 12, hash set)\n", out);
    if (wumanber)
        fputs("why              wu-manber: shortest key >= 24 symbols and a mean shift >= 16, or at most 16\n"
              "                 keys of 3 or more symbols, not all A/C/G/T (SIMD prefilter on their first bytes),\n"
              "                 or keys of more than about 27 million symbols (the automaton would take tens of\n"
              "                 seconds and gigabytes to build), or at most 8 keys with a mean shift >= 14\n"
              "                 (>= 4 over reads: a typical record of at most 8 KiB)\n",
              out);
    if (automaton)
        fputs("why              automaton: the default when the k-mer and Wu-Manber rules do not apply\n", out);
}

/* The planner's cost estimates for the approximate engines (one thread of
   this CPU), the cheapest marked as auto's choice. */
static void explain_estimates(FILE *out, const sm_db *db, int forced) {
    sm_approx_estimates est;
    if (sm_db_approx_estimates(db, 0, &est) != SM_OK) return;
    static const sm_engine order[4] = {SM_ENGINE_MISMATCH, SM_ENGINE_MYERS, SM_ENGINE_PIGEONHOLE, SM_ENGINE_WAVEFRONT};
    for (int i = 0; i < 4; i++) {
        const sm_engine_estimate *e = estimate_of(&est, order[i]);
        if (order[i] == SM_ENGINE_MISMATCH ? !est.mismatch.usable && db_is_edits(db)
                                           : order[i] != SM_ENGINE_PIGEONHOLE && !e->usable && !db_is_edits(db))
            continue; /* engines of the other kind of matching */
        if (!e->usable)
            fprintf(out, "estimate         %-10s %s\n", estimate_name(order[i]), e->basis);
        else
            fprintf(out, "estimate         %-10s %8.3g ns/byte  %s%s\n", estimate_name(order[i]), e->ns_per_byte,
                    e->basis, order[i] == est.choice ? (forced ? " (auto's choice)" : " (chosen)") : "");
    }
}

int sm_db_explain(const sm_db *db, FILE *out, unsigned flags) {
    int forced = (flags & SM_EXPLAIN_FORCED) != 0, gpu = (flags & SM_EXPLAIN_GPU) != 0;
    sm_db_info info;
    sm_db_get_info(db, &info);
    const char *strands = info.strands == SM_STRAND_FORWARD ? "forward strand (+)"
                          : info.strands == SM_STRAND_REVERSE ? "reverse strand (-)"
                                                              : "both strands";
    if (info.alphabet == SM_ALPHABET_TEXT) {
        fprintf(out, "alphabet         text (bytes, %s)\n",
                (info.flags & SM_FLAG_IGNORE_CASE) ? "ignoring case" : "case-sensitive");
    } else {
        fprintf(out, "alphabet         dna, %s%s\n", strands,
                (info.flags & SM_FLAG_TEXT_IUPAC) ? ", IUPAC codes in targets match" : "");
    }
    fprintf(out, "patterns         %u\n", info.pattern_count);
    if (info.min_length == info.max_length)
        fprintf(out, "lengths          %u\n", info.min_length);
    else
        fprintf(out, "lengths          %u to %u\n", info.min_length, info.max_length);
    if (info.pam_length > 0) {
        /* every stored pattern ends (3') or begins (5') with the PAM */
        size_t len = 0;
        const char *seq = sm_db_pattern_seq(db, 0, &len);
        int five = info.pam_side == SM_PAM_5PRIME;
        fprintf(out, "pam              %.*s (exact, %s of every pattern; errors count in the guide only)\n",
                (int)info.pam_length, five ? seq : seq + (len - info.pam_length), five ? "5'" : "3'");
        if (info.dna_bulges || info.rna_bulges)
            fprintf(out, "bulges           one per site at most: %s up to %u bases%s%s%.0u%s\n",
                    info.dna_bulges ? "DNA" : "RNA", info.dna_bulges ? info.dna_bulges : info.rna_bulges,
                    info.dna_bulges && info.rna_bulges ? ", RNA" : "", info.dna_bulges && info.rna_bulges ? " up to " : "",
                    info.dna_bulges && info.rna_bulges ? info.rna_bulges : 0u,
                    info.dna_bulges && info.rna_bulges ? " bases" : "");
    }
    if (info.match != SM_MATCH_EXACT) {
        static const char *const engines[] = {"auto", "automaton", "shift-and", "bit-sliced mismatch counters",
                                              "Myers bit-vectors", "wavefront DP", "k-mer table",
                                              "pigeonhole filter: k + 1 exact pieces per pattern, then verification",
                                              "wu-manber",
                                              ("guide engine: every PAM occurrence, exact pieces of the guides "
                                               "beside it, then verification")};
        uint32_t exact = info.pattern_count - info.approx_patterns;
        char beside[64] = "";
        if (exact) snprintf(beside, sizeof beside, "; %u pattern%s exact", exact, exact == 1 ? "" : "s");
        fprintf(out, "matching         up to %u %s%s%s\n", info.max_errors,
                info.match == SM_MATCH_MISMATCHES ? "mismatches" : "edits",
                info.match == SM_MATCH_EDITS ? (info.report == SM_REPORT_ENDS ? ", every end" : ", best per run")
                                             : "",
                beside);
        if (info.section_count > 1) {
            /* the GPU's plan may split the patterns between two engines */
            for (uint32_t i = 0; i < info.section_count; i++) {
                uint32_t patterns = 0;
                const char *name = sm_db_section_name(db, i, &patterns, NULL);
                fprintf(out, "%s %s for %u pattern%s\n", i ? "                " : "engines         ", name ? name : "?",
                        patterns, patterns == 1 ? "" : "s");
            }
        } else {
            unsigned e = (unsigned)info.approx_engine;
            fprintf(out, "engine           %s for %u pattern%s\n", e < sizeof engines / sizeof *engines ? engines[e] : "?",
                    info.approx_patterns,
                    info.approx_patterns == 1 ? "" : "s");
        }
        if (!gpu) explain_estimates(out, db, forced);
        if (gpu && !forced)
            fputs("planned for      the GPU (--gpu): the pigeonhole filter when its scan and the verification of its\n"
                  "                 expected piece hits cost the GPU less than the direct engine (Myers' lanes, or\n"
                  "                 the mismatch counters), else the direct engine\n",
                  out);
    } else {
        fprintf(out, "engines          automaton %u, k-mer table %u, shift-and %u, wu-manber %u\n",
                sm_db_engine_patterns(db, SM_ENGINE_AUTOMATON), sm_db_engine_patterns(db, SM_ENGINE_KMER),
                sm_db_engine_patterns(db, SM_ENGINE_SHIFTAND), sm_db_engine_patterns(db, SM_ENGINE_WUMANBER));
        explain_exact_plan(out, db, forced);
        if (gpu && !forced)
            fputs("planned for      the GPU (--gpu): the k-mer table from a trie of 16 KiB (k <= 12) or 2 MiB (hash set),\n"
                  "                 wu-manber for keys of 24 or more with a mean shift of 48 or more, else the automaton\n",
                  out);
    }
    /* the first DFA section's size (the automaton's) */
    for (uint32_t i = 0, states, columns; i < info.section_count; i++)
        if (sm_db_section_dfa(db, i, &states, &columns)) {
            if (states > 0) fprintf(out, "automaton        %u states x %u columns\n", states, columns);
            break;
        }
    uint64_t build_us = 0, built_on = 0, kernels_us = 0, copies_us = 0;
    sm_db_get(db, SM_DB_BUILD_US, &build_us);
    sm_db_get(db, SM_DB_AUTOMATON_BUILT_ON, &built_on);
    sm_db_get(db, SM_DB_GPU_BUILD_KERNELS_US, &kernels_us);
    sm_db_get(db, SM_DB_GPU_BUILD_COPIES_US, &copies_us);
    if (build_us) {
        fprintf(out, "built in         %.3f s", (double)build_us / 1e6);
        if (built_on == SM_BACKEND_CUDA)
            fprintf(out, " (the automaton on the GPU: kernels %.1f ms, copies %.1f ms)", (double)kernels_us / 1e3,
                    (double)copies_us / 1e3);
        else if (sm_db_engine_patterns(db, SM_ENGINE_AUTOMATON))
            fputs(" (the automaton on the CPU)", out);
        fputc('\n', out);
    }
    /* What --gpu would run: each section's kernel, or why it cannot. */
    for (uint32_t i = 0; i < info.section_count; i++) {
        char gpu[256];
        const char *name = sm_db_section_name(db, i, NULL, NULL);
        if (sm_db_section_gpu(db, i, gpu, sizeof gpu))
            fprintf(out, "gpu              %s\n", gpu);
        else if (gpu[0])
            fprintf(out, "gpu              none: %s\n", gpu);
        else
            fprintf(out, "gpu              none: %s runs on the CPU only\n", name ? name : "this engine");
    }
    fputs("database size    ", out);
    print_size(out, info.size);
    return ferror(out) ? SM_ERR_IO : SM_OK;
}
