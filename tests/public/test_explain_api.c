/* The plan in words (sm_db_explain, sm_db_engine_slowdown; seqmatch_compile.h), through the
 * installed headers only, linked against libseqmatch.so and libseqmatch.a:
 * exact, k-mismatch, k-edit, PAM and text databases each say what they
 * hold (alphabet, counts, lengths, matching, engines, why or the
 * estimates, size); the flags add or remove the lines they name; a write
 * to a full device reports SM_ERR_IO; a forced engine far slower than the
 * planner's choice gets its note (sm_db_engine_slowdown), no other; the
 * patterns grouped by name (sm_db_name_groups) in the order names first
 * come. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <seqmatch_compile.h>

#include "check.h"

/* db's explanation with flags, as a string (the caller frees it). */
static char *explained(const sm_db *db, unsigned flags, int *status) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    *status = sm_db_explain(db, out, flags);
    fclose(out);
    return text;
}

static sm_db *compiled(const char *const *seqs, size_t n, sm_alphabet alphabet, sm_match match, uint32_t k,
                       const char *pam, sm_engine engine) {
    sm_pattern patterns[8];
    for (size_t i = 0; i < n; i++) {
        patterns[i].seq = seqs[i];
        patterns[i].len = strlen(seqs[i]);
        patterns[i].name = NULL;
    }
    sm_compile_options opts;
    sm_compile_options_init(&opts);
    opts.alphabet = alphabet;
    opts.match = match;
    opts.max_errors = k;
    opts.pam = pam;
    opts.engine = engine;
    sm_db *db = NULL;
    sm_error err;
    int status = sm_compile(patterns, n, &opts, &db, &err);
    CHECK(status == SM_OK, "compile: %s", err.message);
    return status == SM_OK ? db : NULL;
}

/* text holds line (a whole line), or does not when want is 0 */
static void expect_line(const char *text, const char *line, int want, const char *what) {
    size_t n = strlen(line);
    int found = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) found = 1;
    CHECK(found == want, "%s: line \"%s\" %s in:\n%s", what, line, want ? "missing" : "present", text);
}

/* text holds a line that begins with prefix, or does not when want is 0 */
static void expect_prefix(const char *text, const char *prefix, int want, const char *what) {
    size_t n = strlen(prefix);
    int found = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, n) == 0) found = 1;
    CHECK(found == want, "%s: a line \"%s...\" %s in:\n%s", what, prefix, want ? "missing" : "present", text);
}

int main(void) {
    int status = -1;
    static const char *const exact[] = {"ACGTACGTAC", "GGATCC", "GAATTC"};
    sm_db *db = compiled(exact, 3, SM_ALPHABET_DNA, SM_MATCH_EXACT, 0, NULL, SM_ENGINE_AUTO);
    if (db) {
        char *text = explained(db, 0, &status);
        CHECK(text && status == SM_OK, "exact: status %d", status);
        if (text) {
            expect_line(text, "alphabet         dna, both strands", 1, "exact");
            expect_line(text, "patterns         3", 1, "exact");
            expect_line(text, "lengths          6 to 10", 1, "exact");
            expect_prefix(text, "engines          automaton ", 1, "exact");
            expect_prefix(text, "why              ", 1, "exact");
            expect_prefix(text, "why              the engine was forced", 0, "exact");
            expect_prefix(text, "planned for      the GPU", 0, "exact");
            expect_prefix(text, "database size    ", 1, "exact");
            CHECK(strncmp(text, "alphabet ", 9) == 0, "exact: the first line is not the alphabet:\n%s", text);
            free(text);
        }
        text = explained(db, SM_EXPLAIN_FORCED | SM_EXPLAIN_GPU, &status);
        if (text) {
            expect_line(text, "why              the engine was forced with --engine", 1, "exact, forced");
            expect_prefix(text, "planned for      the GPU", 0, "exact, forced");
            free(text);
        }
        text = explained(db, SM_EXPLAIN_GPU, &status);
        if (text) {
            expect_prefix(text, "planned for      the GPU (--gpu): the k-mer table", 1, "exact, gpu");
            free(text);
        }
        /* a write that fails */
        FILE *full = fopen("/dev/full", "w");
        if (full) {
            setvbuf(full, NULL, _IONBF, 0);
            CHECK(sm_db_explain(db, full, 0) == SM_ERR_IO, "/dev/full: not SM_ERR_IO");
            fclose(full);
        }
        sm_db_free(db);
    }

    static const char *const primer[] = {"GTGCCAGCAGCCGCGGTAAT"};
    db = compiled(primer, 1, SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 2, NULL, SM_ENGINE_AUTO);
    if (db) {
        char *text = explained(db, 0, &status);
        if (text) {
            expect_line(text, "matching         up to 2 mismatches", 1, "mismatches");
            expect_prefix(text, "estimate         mismatch ", 1, "mismatches");
            expect_prefix(text, "estimate         myers ", 0, "mismatches");
            expect_prefix(text, "engine           ", 1, "mismatches");
            free(text);
        }
        text = explained(db, SM_EXPLAIN_GPU, &status);
        if (text) {
            expect_prefix(text, "estimate ", 0, "mismatches, gpu");
            expect_prefix(text, "planned for      the GPU (--gpu): the pigeonhole filter", 1, "mismatches, gpu");
            free(text);
        }
        sm_db_free(db);
    }
    db = compiled(primer, 1, SM_ALPHABET_DNA, SM_MATCH_EDITS, 3, NULL, SM_ENGINE_AUTO);
    if (db) {
        char *text = explained(db, 0, &status);
        if (text) {
            expect_line(text, "matching         up to 3 edits, best per run", 1, "edits");
            expect_prefix(text, "estimate         myers ", 1, "edits");
            expect_prefix(text, "estimate         mismatch ", 0, "edits");
            free(text);
        }
        sm_db_free(db);
    }
    /* a forced engine far slower than the planner's choice: the note */
    db = compiled(primer, 1, SM_ALPHABET_DNA, SM_MATCH_EDITS, 3, NULL, SM_ENGINE_WAVEFRONT);
    if (db) {
        char note[512] = "", cut[12] = "";
        CHECK(sm_db_engine_slowdown(db, SM_ENGINE_WAVEFRONT, 0, note, sizeof note) == 1, "wavefront: no note");
        CHECK(strncmp(note, "--engine wavefront is hopeless here: about ", 43) == 0 &&
                  strstr(note, " times the estimate for myers (") && strchr(note, '\n') == NULL,
              "wavefront: note \"%s\"", note);
        CHECK(sm_db_engine_slowdown(db, SM_ENGINE_WAVEFRONT, 0, NULL, 0) == 1, "wavefront: no note without buf");
        CHECK(sm_db_engine_slowdown(db, SM_ENGINE_WAVEFRONT, 0, cut, sizeof cut) == 1 && strlen(cut) == sizeof cut - 1,
              "wavefront: the note not cut to its buffer: \"%s\"", cut);
        CHECK(sm_db_engine_slowdown(db, SM_ENGINE_MYERS, 0, note, sizeof note) == 0, "myers (auto's choice) noted");
        CHECK(sm_db_engine_slowdown(db, SM_ENGINE_AUTOMATON, 0, note, sizeof note) == 0, "an exact engine noted");
        sm_db_free(db);
    }
    db = compiled(exact, 3, SM_ALPHABET_DNA, SM_MATCH_EXACT, 0, NULL, SM_ENGINE_AUTO);
    if (db) {
        CHECK(sm_db_engine_slowdown(db, SM_ENGINE_WAVEFRONT, 0, NULL, 0) == 0, "an exact database noted");
        sm_db_free(db);
    }
    static const char *const guide[] = {"GAGTCCGAGCAGAAGAAGAA"};
    db = compiled(guide, 1, SM_ALPHABET_DNA, SM_MATCH_MISMATCHES, 1, "NGG", SM_ENGINE_AUTO);
    if (db) {
        char *text = explained(db, 0, &status);
        if (text) {
            expect_prefix(text, "pam              NGG (exact, 3' of every pattern", 1, "pam");
            free(text);
        }
        sm_db_free(db);
    }
    static const char *const words[] = {"Jesus", "wept"};
    db = compiled(words, 2, SM_ALPHABET_TEXT, SM_MATCH_EXACT, 0, NULL, SM_ENGINE_SHIFTAND);
    if (db) {
        char *text = explained(db, SM_EXPLAIN_FORCED, &status);
        if (text) {
            expect_line(text, "alphabet         text (bytes, case-sensitive)", 1, "text");
            expect_line(text, "engines          automaton 0, k-mer table 0, shift-and 2, wu-manber 0", 1, "text");
            expect_line(text, "lengths          4 to 5", 1, "text");
            free(text);
        }
        sm_db_free(db);
    }
    /* groups by name: s2 s1 s2 s0 s1 s3 s0 -> 0 1 0 2 1 3 2 */
    {
        static const char *const names[] = {"s2", "s1", "s2", "s0", "s1", "s3", "s0"};
        static const char *const seqs[] = {"GATCTGAC", "ACGTACGT", "TTGGCCAA", "GGGAAATT", "CCCGGGAA", "TACGATCG",
                                           "AGAGAGAG"};
        static const uint32_t want[] = {0, 1, 0, 2, 1, 3, 2};
        sm_pattern patterns[7];
        for (int i = 0; i < 7; i++) {
            patterns[i].name = names[i];
            patterns[i].seq = seqs[i];
            patterns[i].len = strlen(seqs[i]);
        }
        sm_compile_options opts;
        sm_compile_options_init(&opts);
        sm_db *named = NULL;
        sm_error err;
        CHECK(sm_compile(patterns, 7, &opts, &named, &err) == SM_OK, "compile: %s", err.message);
        uint32_t group_of[7], groups = 99;
        CHECK(named && sm_db_name_groups(named, group_of, &groups) == SM_OK && groups == 4, "%u groups", groups);
        for (int i = 0; named && i < 7; i++)
            CHECK(group_of[i] == want[i], "pattern %d in group %u, not %u", i, group_of[i], want[i]);
        sm_db_free(named);
    }
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
