/* Compiling a pattern set: the options checked, the patterns validated and
 * normalised, the planner (src/core/plan.c) asked for the sections, and
 * the flat database block assembled (docs/format.md). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/internal.h"
#include "core/scan_internal.h"
#include "engines/approx/approx_cost.h"
#include "engines/plan.h"

#define DEFAULT_MAX_EXPANSION 256u

void sm_compile_options_init(sm_compile_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->alphabet = SM_ALPHABET_DNA;
    opts->strands = SM_STRAND_BOTH;
    opts->engine = SM_ENGINE_AUTO;
    opts->build_threads = 0;
    opts->max_expansion = DEFAULT_MAX_EXPANSION;
}

typedef struct {
    const sm_pattern *src;
    uint8_t *norm;     /* normalised sequence (dna: upper case, U as T) */
    uint32_t len;
} prepared_pattern;

static void describe_byte(uint8_t c, char *out, size_t size) {
    if (c >= 0x21 && c < 0x7f) snprintf(out, size, "'%c'", c);
    else snprintf(out, size, "byte 0x%02X", c);
}

/* Normalises the patterns; a PAM (already normalised, q symbols) is
   appended to each, or put before it (pam_first: a 5' PAM). */
static int prepare(const sm_pattern *patterns, size_t n, int dna, const uint8_t *pam, uint32_t q, int pam_first,
                   prepared_pattern *prep, sm_error *err) {
    for (size_t i = 0; i < n; i++) {
        const sm_pattern *p = &patterns[i];
        char buf[SM_SHOWN_SIZE];
        const char *shown = sm_pattern_shown(p->name, p->seq, p->len, buf);
        if (!p->seq || p->len == 0)
            return sm_set_error(err, SM_ERR_PATTERN, "pattern %zu ('%.200s') is empty", i + 1, shown);
        if (p->len > UINT32_MAX - 1 - (uint64_t)q)
            return sm_set_error(err, SM_ERR_LIMIT, "pattern %zu ('%.200s') is longer than 2^32 symbols", i + 1, shown);
        uint8_t *norm = malloc(p->len + q);
        if (!norm) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        prep[i].src = p;
        prep[i].norm = norm;
        prep[i].len = (uint32_t)(p->len + q);
        if (q) memcpy(pam_first ? norm : norm + p->len, pam, q);
        if (pam_first) norm += q;
        const uint8_t *s = (const uint8_t *)p->seq;
        for (size_t j = 0; j < p->len; j++) {
            uint8_t c = s[j];
            if (dna) {
                c = (uint8_t)toupper(c);
                if (c == 'U') c = 'T';
                if (!sm_nt_set[c]) {
                    char what[32];
                    describe_byte(s[j], what, sizeof what);
                    return sm_set_error(err, SM_ERR_PATTERN,
                                        "pattern %zu ('%.200s'): %s at position %zu is not a DNA or IUPAC symbol",
                                        i + 1, shown, what, j + 1);
                }
            }
            norm[j] = c;
        }
    }
    return SM_OK;
}

/* Lays out header, directory, pattern table, strings and sections. */
static int assemble(const prepared_pattern *prep, const sm_plan_pattern *planned, size_t n,
                    const sm_compile_options *o, int dna, unsigned flags, sm_strands strands, uint32_t pam_length,
                    const sm_plan *plan, sm_db **out, sm_error *err) {
    sm_db_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SM_DB_MAGIC, 8);
    h.version = SM_DB_FORMAT_VERSION;
    h.byte_order = SM_DB_BYTE_ORDER_MARK;
    h.alphabet = (uint32_t)o->alphabet;
    h.strands = (uint32_t)strands;
    h.flags = flags;
    h.pattern_count = (uint32_t)n;
    h.min_length = UINT32_MAX;
    h.match = (uint32_t)o->match;
    h.max_errors = o->match == SM_MATCH_EXACT ? 0 : o->max_errors;
    h.report = o->match == SM_MATCH_EDITS ? (uint32_t)o->report : SM_REPORT_BEST;
    h.section_count = (uint32_t)plan->count;
    h.pam_length = pam_length;
    h.pam_side = pam_length ? (uint32_t)o->pam_side : 0;
    h.dna_bulges = o->dna_bulges;
    h.rna_bulges = o->rna_bulges;

    sm_buf strings = {0};
    sm_db_pattern *table = calloc(n, sizeof *table);
    int status = table ? SM_OK : SM_ERR_NOMEM;
    for (size_t i = 0; i < n && status == SM_OK; i++) {
        const prepared_pattern *p = &prep[i];
        /* A pattern without a name is named by its sequence as given (without a PAM). */
        const char *name = p->src->name ? p->src->name : p->src->seq;
        size_t name_len = p->src->name ? strlen(name) : p->src->len;
        const uint8_t *stored = dna ? p->norm : (const uint8_t *)p->src->seq;
        /* A name equal to the sequence as stored (the lines of a plain list:
           upper case) points at it, one copy instead of two. */
        int shared = name_len == p->len && memcmp(name, stored, p->len) == 0;
        if (!shared) {
            table[i].name_off = strings.len;
            if ((status = sm_buf_append(&strings, name, name_len)) == SM_OK) status = sm_buf_append(&strings, "", 1);
            if (status != SM_OK) break;
        }
        table[i].seq_off = strings.len;
        if (shared) table[i].name_off = table[i].seq_off;
        table[i].length = p->len;
        table[i].section = planned[i].section;
        if ((status = sm_buf_append(&strings, stored, p->len)) == SM_OK) status = sm_buf_append(&strings, "", 1);
        if (p->len < h.min_length) h.min_length = p->len;
        if (p->len > h.max_length) h.max_length = p->len;
    }
    if (status != SM_OK) {
        free(table);
        sm_buf_free(&strings);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory assembling the database");
    }

    sm_db_section dir[SM_DB_MAX_SECTIONS];
    memset(dir, 0, sizeof dir);
    uint64_t off = sizeof h;
    h.directory_off = off;
    off += (uint64_t)plan->count * sizeof(sm_db_section);
    h.patterns_off = off;
    off += (uint64_t)n * sizeof(sm_db_pattern);
    off = (off + SM_DB_ALIGN - 1) / SM_DB_ALIGN * SM_DB_ALIGN;
    h.strings_off = off;
    h.strings_size = strings.len;
    off += strings.len;
    off = (off + SM_DB_ALIGN - 1) / SM_DB_ALIGN * SM_DB_ALIGN;
    for (size_t i = 0; i < plan->count; i++) {
        dir[i].kind = plan->sections[i].kind;
        dir[i].patterns = plan->sections[i].patterns;
        dir[i].offset = off;
        dir[i].size = plan->sections[i].bytes.len;
        off = (off + dir[i].size + SM_DB_ALIGN - 1) / SM_DB_ALIGN * SM_DB_ALIGN;
    }
    if (o->max_memory && off > o->max_memory) {
        free(table);
        sm_buf_free(&strings);
        return sm_set_error(err, SM_ERR_LIMIT, "the database would need %llu bytes, over the memory limit of %llu",
                            (unsigned long long)off, (unsigned long long)o->max_memory);
    }
    uint8_t *bytes = sm_aligned_alloc(off);
    sm_db *db = calloc(1, sizeof *db);
    if (!bytes || !db) {
        sm_aligned_free(bytes);
        free(db);
        free(table);
        sm_buf_free(&strings);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory allocating a database of %llu bytes",
                            (unsigned long long)off);
    }
    memset(bytes, 0, off);
    memcpy(bytes, &h, sizeof h);
    memcpy(bytes + h.directory_off, dir, plan->count * sizeof *dir);
    memcpy(bytes + h.patterns_off, table, n * sizeof *table);
    if (strings.len) memcpy(bytes + h.strings_off, strings.data, strings.len);
    for (size_t i = 0; i < plan->count; i++)
        memcpy(bytes + dir[i].offset, plan->sections[i].bytes.data, plan->sections[i].bytes.len);
    sm_db_seal(bytes, off);
    free(table);
    sm_buf_free(&strings);
    db->bytes = bytes;
    db->size = off;
    db->mapped = 0;
    *out = db;
    return SM_OK;
}

int sm_compile_tuned(const sm_pattern *patterns, size_t n, const sm_compile_options *opts,
                     const sm_build_tuning *tuning, sm_db **out, sm_error *err) {
    sm_compile_options defaults;
    if (!opts) {
        sm_compile_options_init(&defaults);
        opts = &defaults;
    }
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "no place to store the database");
    *out = NULL;
    if (opts->alphabet != SM_ALPHABET_DNA && opts->alphabet != SM_ALPHABET_TEXT)
        return sm_set_error(err, SM_ERR_INVALID, "unknown alphabet %d", (int)opts->alphabet);
    if (opts->strands > SM_STRAND_REVERSE)
        return sm_set_error(err, SM_ERR_INVALID, "unknown strand setting %d", (int)opts->strands);
    const sm_engine_ops *forced = opts->engine == SM_ENGINE_AUTO ? NULL : sm_engine_for_id(opts->engine);
    if (opts->engine != SM_ENGINE_AUTO && !forced)
        return sm_set_error(err, SM_ERR_INVALID, "unknown engine %d", (int)opts->engine);
    if (opts->backend != SM_BACKEND_CPU && opts->backend != SM_BACKEND_CUDA)
        return sm_set_error(err, SM_ERR_INVALID, "unknown backend %d", (int)opts->backend);
    if (opts->build_backend != SM_BACKEND_CPU && opts->build_backend != SM_BACKEND_CUDA)
        return sm_set_error(err, SM_ERR_INVALID, "unknown build backend %d", (int)opts->build_backend);
    if (opts->match > SM_MATCH_EDITS || opts->report > SM_REPORT_ENDS)
        return sm_set_error(err, SM_ERR_INVALID, "unknown match kind or report mode");
    /* k = 0 is exact matching whatever the kind (exact engines then serve),
       unless bulges are allowed. */
    sm_compile_options normalised = *opts;
    int bulges = opts->dna_bulges || opts->rna_bulges;
    if (opts->pam_side > SM_PAM_5PRIME)
        return sm_set_error(err, SM_ERR_INVALID, "unknown PAM side %d", (int)opts->pam_side);
    if (opts->dna_bulges > SM_MAX_BULGE || opts->rna_bulges > SM_MAX_BULGE)
        return sm_set_error(err, SM_ERR_LIMIT, "bulges of at most %u bases are supported (asked for %u)", SM_MAX_BULGE,
                            opts->dna_bulges > opts->rna_bulges ? opts->dna_bulges : opts->rna_bulges);
    if (bulges && (!opts->pam || opts->match == SM_MATCH_EDITS))
        return sm_set_error(err, SM_ERR_INVALID,
                            "bulges need a PAM and mismatches (the guide and PAM model), not %s",
                            !opts->pam ? "a search without a PAM" : "edits");
    /* an engine that needs a PAM (the guide engine) does k mismatches, with k = 0 too */
    int needs_pam = forced && (forced->traits & SM_ENGINE_TRAIT_NEEDS_PAM);
    if ((bulges || needs_pam) && opts->match != SM_MATCH_EDITS)
        normalised.match = SM_MATCH_MISMATCHES;
    else if (normalised.max_errors == 0) normalised.match = SM_MATCH_EXACT;
    if (normalised.max_errors > 65535)
        return sm_set_error(err, SM_ERR_LIMIT, "at most 65535 errors are supported (asked for %u)", opts->max_errors);
    opts = &normalised;
    if (forced) {
        static const char *const kinds[] = {"exact matching", "k mismatches", "k edits"};
        if (!(forced->matches & (1u << opts->match)))
            return sm_set_error(err, SM_ERR_INVALID, "engine %s does not do %s", forced->name, kinds[opts->match]);
        if (bulges && !(forced->traits & SM_ENGINE_TRAIT_BULGES))
            return sm_set_error(err, SM_ERR_INVALID, "engine %s does not find bulges (the guide engine does)",
                                forced->name);
        if (needs_pam && !opts->pam) return sm_set_error(err, SM_ERR_INVALID, "engine %s needs a PAM", forced->name);
    }
    if (opts->match == SM_MATCH_EXACT) normalised.exact = NULL; /* every pattern is exact */
    if (opts->exact) {
        size_t flagged = 0;
        for (size_t i = 0; patterns && i < n; i++) flagged += opts->exact[i] != 0;
        if (flagged && opts->pam)
            return sm_set_error(err, SM_ERR_INVALID, "exact patterns cannot be combined with a PAM");
        if (!flagged) normalised.exact = NULL;
    }
    if (opts->flags & ~(SM_FLAG_IGNORE_CASE | SM_FLAG_TEXT_IUPAC))
        return sm_set_error(err, SM_ERR_INVALID, "unknown flags 0x%x", opts->flags);
    int dna = opts->alphabet == SM_ALPHABET_DNA;
    if (!dna && (opts->flags & SM_FLAG_TEXT_IUPAC))
        return sm_set_error(err, SM_ERR_INVALID, "IUPAC text matching applies to the dna alphabet only");
    if (n == 0 || !patterns) return sm_set_error(err, SM_ERR_PATTERN, "no patterns given");
    if (n > UINT32_MAX / 2 - 1) return sm_set_error(err, SM_ERR_LIMIT, "too many patterns (%zu)", n);
    /* DNA is always case-insensitive; ignore-case means something for text only. */
    unsigned flags = dna ? (opts->flags & SM_FLAG_TEXT_IUPAC) : (opts->flags & SM_FLAG_IGNORE_CASE);
    sm_strands strands = dna ? opts->strands : SM_STRAND_FORWARD;

    /* A PAM: normalised like a pattern, appended to each (the engines search
       the whole site; hits are filtered where it must match exactly). */
    uint8_t pam[256];
    uint32_t pam_length = 0;
    if (opts->pam) {
        if (!dna) return sm_set_error(err, SM_ERR_INVALID, "a PAM applies to the dna alphabet only");
        size_t q = strlen(opts->pam);
        if (q == 0) return sm_set_error(err, SM_ERR_INVALID, "the PAM is empty");
        if (q > sizeof pam) return sm_set_error(err, SM_ERR_LIMIT, "the PAM is longer than %zu symbols", sizeof pam);
        for (size_t j = 0; j < q; j++) {
            uint8_t c = (uint8_t)toupper((unsigned char)opts->pam[j]);
            if (c == 'U') c = 'T';
            if (!sm_nt_set[c]) {
                char what[32];
                describe_byte((uint8_t)opts->pam[j], what, sizeof what);
                return sm_set_error(err, SM_ERR_PATTERN, "PAM '%.200s': %s at position %zu is not a DNA or IUPAC symbol",
                                    opts->pam, what, j + 1);
            }
            pam[j] = c;
        }
        pam_length = (uint32_t)q;
    }

    prepared_pattern *prep = calloc(n, sizeof *prep);
    sm_plan_pattern *planned = calloc(n, sizeof *planned);
    if (!prep || !planned) {
        free(prep);
        free(planned);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    }
    sm_plan plan = {0};
    int status = prepare(patterns, n, dna, pam, pam_length, pam_length && opts->pam_side == SM_PAM_5PRIME, prep, err);
    for (size_t i = 0; status == SM_OK && i < n; i++) {
        planned[i].seq = prep[i].norm;
        planned[i].len = prep[i].len;
        planned[i].name = prep[i].src->name;
        planned[i].given = prep[i].src->seq;
        planned[i].given_len = prep[i].src->len;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (status == SM_OK) status = sm_plan_build(planned, n, opts, flags, strands, tuning, &plan, err);
    if (status == SM_OK && plan.count > SM_DB_MAX_SECTIONS)
        status = sm_set_error(err, SM_ERR_LIMIT, "the plan has %zu sections, more than %u", plan.count,
                              SM_DB_MAX_SECTIONS);
    if (status == SM_OK) status = assemble(prep, planned, n, opts, dna, flags, strands, pam_length, &plan, out, err);
    if (status == SM_OK) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        (*out)->build_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        (*out)->built = plan.report;
    }
    sm_plan_free(&plan);
    for (size_t i = 0; i < n; i++) free(prep[i].norm);
    free(prep);
    free(planned);
    return status;
}

int sm_compile(const sm_pattern *patterns, size_t n, const sm_compile_options *opts, sm_db **out,
               sm_error *err) {
    return sm_compile_tuned(patterns, n, opts, NULL, out, err);
}

/* The planner's estimates for a database's approximate patterns: their keys
   rebuilt as the planner made them (reverse complements for the strands
   searched, text folded under ignore-case). */
int sm_db_approx_estimates(const sm_db *db, uint32_t typical_record, sm_approx_estimates *est) {
    if (!db || !est) return SM_ERR_INVALID;
    const sm_db_header *h = sm_db_head(db);
    if (h->match == SM_MATCH_EXACT || h->max_errors == 0) return SM_ERR_INVALID;
    int dna = h->alphabet == SM_ALPHABET_DNA;
    size_t n = h->pattern_count, total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        sm_db_pattern_seq(db, (uint32_t)i, &len);
        total += 2 * len;
    }
    sm_ac_key *keys = malloc((n ? 2 * n : 1) * sizeof *keys);
    uint8_t *arena = malloc(total ? total : 1);
    if (!keys || !arena) {
        free(keys);
        free(arena);
        return SM_ERR_NOMEM;
    }
    size_t nk = 0, used = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const uint8_t *seq = (const uint8_t *)sm_db_pattern_seq(db, (uint32_t)i, &len);
        for (int reverse = 0; reverse <= 1; reverse++) {
            if (!dna && reverse) continue;
            if (dna && ((reverse && h->strands == SM_STRAND_FORWARD) || (!reverse && h->strands == SM_STRAND_REVERSE)))
                continue;
            uint8_t *key = arena + used;
            for (size_t j = 0; j < len; j++) {
                uint8_t c = reverse ? sm_nt_complement[seq[len - 1 - j]] : seq[j];
                key[j] = !dna && (h->flags & SM_FLAG_IGNORE_CASE) ? (uint8_t)tolower(c) : c;
            }
            keys[nk].seq = key;
            keys[nk].len = (uint32_t)len;
            keys[nk].output = sm_output_id((uint32_t)i, reverse);
            nk++;
            used += len;
        }
    }
    sm_approx_estimate(keys, nk, (sm_alphabet)h->alphabet, h->flags, (sm_match)h->match, h->max_errors,
                       typical_record, est);
    free(keys);
    free(arena);
    return SM_OK;
}
