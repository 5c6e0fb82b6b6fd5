/* Writes the seed inputs that are built with the library rather than by
 * hand: saved databases of every engine (corpus/database) and flat DFA
 * blocks (corpus/dfa). Rerun after a change of either format:
 *
 *   fuzz_make_seeds fuzz/corpus
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"

typedef struct {
    const char *name;
    sm_alphabet alphabet;
    sm_strands strands;
    unsigned flags;
    sm_engine engine;
    sm_match match;
    uint32_t k;
    sm_report report;
    uint32_t max_expansion;
    const char *patterns[6];
    const char *pam; /* NULL: none */
} db_seed;

static const db_seed db_seeds[] = {
    {"automaton", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_AUTOMATON, SM_MATCH_EXACT, 0, SM_REPORT_BEST, 0,
     {"GAATTC", "GGATCC", "ACGTRYACGT", "TTTT", NULL}},
    {"automaton_text", SM_ALPHABET_TEXT, SM_STRAND_FORWARD, SM_FLAG_IGNORE_CASE, SM_ENGINE_AUTOMATON, SM_MATCH_EXACT,
     0, SM_REPORT_BEST, 0, {"error", "timeout", "he", "she", "hers", NULL}},
    {"kmer", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_KMER, SM_MATCH_EXACT, 0, SM_REPORT_BEST, 0,
     {"ACGTAC", "TTGACA", "GGGCCC", "ATATAT", NULL}},
    {"wumanber", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_WUMANBER, SM_MATCH_EXACT, 0, SM_REPORT_BEST, 0,
     {"GAATTCAC", "GGATCC", "ACGTRYACGTAA", "TTT", NULL}},
    {"shiftand", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_SHIFTAND, SM_MATCH_EXACT, 0, SM_REPORT_BEST, 0,
     {"GACGCATAAAGATGAGACGCNGG", "RYNNNNACGT", "AC", NULL}},
    {"shiftand_text_iupac", SM_ALPHABET_DNA, SM_STRAND_REVERSE, SM_FLAG_TEXT_IUPAC, SM_ENGINE_AUTO, SM_MATCH_EXACT, 0,
     SM_REPORT_BEST, 0, {"ACGTN", "GGCC", NULL}},
    {"mixed", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_AUTO, SM_MATCH_EXACT, 0, SM_REPORT_BEST, 4,
     {"NNNNACGT", "GAATTC", "ACGTRY", NULL}},
    {"mismatch", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_MISMATCH, SM_MATCH_MISMATCHES, 2, SM_REPORT_BEST, 0,
     {"GACGCATAAAGATGAGACGCNGG", "ACGTACGT", NULL}},
    {"mismatch_text", SM_ALPHABET_TEXT, SM_STRAND_FORWARD, 0, SM_ENGINE_MISMATCH, SM_MATCH_MISMATCHES, 1,
     SM_REPORT_BEST, 0, {"refused", "cat", NULL}},
    {"myers", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_MYERS, SM_MATCH_EDITS, 2, SM_REPORT_BEST, 0,
     {"ACGTTGCA", "GATTACA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", NULL}},
    {"myers_ends", SM_ALPHABET_TEXT, SM_STRAND_FORWARD, SM_FLAG_IGNORE_CASE, SM_ENGINE_MYERS, SM_MATCH_EDITS, 1,
     SM_REPORT_ENDS, 0, {"cacd", "kitten", NULL}},
    {"wavefront", SM_ALPHABET_DNA, SM_STRAND_FORWARD, 0, SM_ENGINE_WAVEFRONT, SM_MATCH_EDITS, 1, SM_REPORT_BEST, 0,
     {"ACGTTGCA", "GATTACA", NULL}},
    {"wavefront_ends", SM_ALPHABET_DNA, SM_STRAND_BOTH, SM_FLAG_TEXT_IUPAC, SM_ENGINE_WAVEFRONT, SM_MATCH_EDITS, 3,
     SM_REPORT_ENDS, 0, {"ACG", "TTTTTTTT", NULL}},
    {"pigeonhole_mismatch", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_PIGEONHOLE, SM_MATCH_MISMATCHES, 3,
     SM_REPORT_BEST, 0, {"GACGCATA", "ACGTTGCA", NULL}},
    {"pigeonhole_edits", SM_ALPHABET_TEXT, SM_STRAND_FORWARD, 0, SM_ENGINE_PIGEONHOLE, SM_MATCH_EDITS, 1,
     SM_REPORT_BEST, 0, {"connection refused", "timeout", NULL}},
    {"guide", SM_ALPHABET_DNA, SM_STRAND_BOTH, 0, SM_ENGINE_GUIDE, SM_MATCH_MISMATCHES, 3, SM_REPORT_BEST, 0,
     {"GACGCATAAAGA", "GTCACCTCCAAT", NULL}, "NGG"},
};

static int write_file(const char *dir, const char *sub, const char *name, const void *bytes, size_t size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "make_seeds: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

static int write_db_seeds(const char *dir) {
    for (size_t i = 0; i < sizeof db_seeds / sizeof db_seeds[0]; i++) {
        const db_seed *s = &db_seeds[i];
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.alphabet = s->alphabet;
        o.strands = s->strands;
        o.flags = s->flags;
        o.engine = s->engine;
        o.match = s->match;
        o.max_errors = s->k;
        o.report = s->report;
        if (s->max_expansion) o.max_expansion = s->max_expansion;
        o.pam = s->pam;
        sm_pattern pats[6];
        size_t n = 0;
        for (; s->patterns[n]; n++) {
            pats[n].name = NULL;
            pats[n].seq = s->patterns[n];
            pats[n].len = strlen(s->patterns[n]);
        }
        sm_db *db = NULL;
        sm_error err;
        if (sm_compile(pats, n, &o, &db, &err) != SM_OK) {
            fprintf(stderr, "make_seeds: %s: %s\n", s->name, err.message);
            return -1;
        }
        size_t size = 0;
        const void *bytes = sm_db_bytes(db, &size);
        char name[128];
        snprintf(name, sizeof name, "%s.smdb", s->name);
        int rc = write_file(dir, "database", name, bytes, size);
        sm_db_free(db);
        if (rc) return rc;
    }
    return 0;
}

static int write_dfa_block(const char *dir, const char *name, sm_dfa *dfa) {
    size_t size = 0;
    const void *bytes = sm_dfa_bytes(dfa, &size);
    int rc = write_file(dir, "dfa", name, bytes, size);
    sm_dfa_free(dfa);
    return rc;
}

static int write_dfa_seeds(const char *dir) {
    static const char example[] = "alphabet ACGT\nstates 4\nstart 0\naccept 2 3\n"
                                  "0 1 0 0 0\n1 1 2 0 0\n2 1 0 3 0\n3 3 3 3 3\n";
    sm_dfa *dfa = NULL;
    sm_error err;
    if (sm_dfa_parse(example, sizeof example - 1, NULL, &dfa, &err) != SM_OK ||
        write_dfa_block(dir, "block_example", dfa) != 0)
        return -1;
    sm_dfa_regex_options ro;
    sm_dfa_regex_options_init(&ro);
    ro.alphabet = SM_ALPHABET_DNA;
    ro.minimize = 1;
    if (sm_dfa_from_regex("(ACGT|TTGA)*", 12, &ro, &dfa, &err) != SM_OK ||
        write_dfa_block(dir, "block_regex", dfa) != 0)
        return -1;
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.engine = SM_ENGINE_AUTOMATON;
    sm_pattern p[2] = {{NULL, "GAATTC", 6}, {NULL, "ACGT", 4}};
    sm_db *db = NULL;
    if (sm_compile(p, 2, &o, &db, &err) != SM_OK) return -1;
    int rc = sm_dfa_from_db(db, SM_DFA_CONTAINS, &dfa, &err);
    sm_db_free(db);
    if (rc != SM_OK || write_dfa_block(dir, "block_patterns", dfa) != 0) return -1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR\n");
        return 2;
    }
    if (write_db_seeds(argv[1]) != 0 || write_dfa_seeds(argv[1]) != 0) return 1;
    return 0;
}
