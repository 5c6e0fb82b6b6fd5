/* A DFA from where seqmatch dfa takes it (include/seqmatch_reader.h,
 * sm_dfa_load): a DFA file, a regular expression or a pattern file, made
 * minimal as asked; the messages name the pattern file and line. */
#include <stdio.h>
#include <string.h>

#include "seqmatch_reader.h"

/* The compiler's message about pattern N ("pattern N (...") prefixed with
   the file and line the pattern came from; else the file's name, unless the
   message already names it. */
/* Appends src to the string in dst (cap bytes), cut to fit. */
static void append_cut(char *dst, size_t cap, const char *src) {
    size_t n = strlen(dst), m = strlen(src);
    if (n + 1 >= cap) return;
    if (m > cap - 1 - n) m = cap - 1 - n;
    memcpy(dst + n, src, m);
    dst[n + m] = 0;
}

static void name_pattern_file(const sm_pattern_list *list, const char *path, sm_error *err) {
    unsigned long long n = 0;
    int used = 0;
    char message[sizeof err->message];
    memcpy(message, err->message, sizeof message);
    if (sscanf(message, "pattern %llu (%n", &n, &used) == 1 && used > 0 && n >= 1 && n <= list->count) {
        if (list->file && list->file[n - 1]) {
            snprintf(err->message, sizeof err->message, "%.500s: line %llu: ", list->file[n - 1],
                     (unsigned long long)list->line[n - 1]);
            append_cut(err->message, sizeof err->message, message);
        }
    } else if (!strstr(message, path)) {
        snprintf(err->message, sizeof err->message, "%s: ", path);
        append_cut(err->message, sizeof err->message, message);
    }
}

static int from_patterns(const sm_dfa_source *src, sm_dfa **dfa, sm_error *err) {
    sm_pattern_list list = {0};
    int rc = sm_pattern_list_read_alphabet(&list, src->patterns_path, src->alphabet, err);
    if (rc == SM_OK) {
        sm_compile_options co;
        sm_compile_options_init(&co);
        co.alphabet = src->alphabet;
        co.strands = src->strands;
        co.flags = src->ignore_case && src->alphabet == SM_ALPHABET_TEXT ? SM_FLAG_IGNORE_CASE : 0;
        co.engine = SM_ENGINE_AUTOMATON;
        sm_db *db = NULL;
        rc = sm_compile(list.items, list.count, &co, &db, err);
        if (rc == SM_OK) rc = sm_dfa_from_db(db, src->match, dfa, err);
        sm_db_free(db);
    }
    if (rc != SM_OK) name_pattern_file(&list, src->patterns_path, err);
    sm_pattern_list_free(&list);
    return rc;
}

int sm_dfa_load(const sm_dfa_source *src, sm_dfa **dfa, sm_error *err) {
    sm_dfa *raw = NULL;
    int rc, minimize = src->minimize;
    if (err) memset(err, 0, sizeof *err);
    if (src->dfa_path) {
        rc = sm_dfa_read_file(src->dfa_path, &raw, err);
    } else if (src->regex) {
        sm_dfa_regex_options ro;
        sm_dfa_regex_options_init(&ro);
        ro.alphabet = src->alphabet;
        if (src->max_states) ro.max_states = src->max_states;
        ro.minimize = minimize != 0;
        minimize = 0; /* done while it is built */
        rc = sm_dfa_from_regex(src->regex, strlen(src->regex), &ro, &raw, err);
    } else {
        rc = from_patterns(src, &raw, err);
    }
    if (rc == SM_OK && minimize == 1) {
        sm_dfa *min = NULL;
        rc = sm_dfa_minimize(raw, &min, err);
        sm_dfa_free(raw);
        raw = min;
    }
    if (rc != SM_OK) {
        sm_dfa_free(raw);
        raw = NULL;
    }
    *dfa = raw;
    return rc;
}
