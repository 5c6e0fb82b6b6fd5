/* Compiling a pattern set: validation, normalisation, strands, IUPAC
 * expansion, the engine plan, and assembly of the flat database block. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"
#include "engines/approx/approx.h"
#include "engines/approx/pigeonhole.h"
#include "engines/automaton/automaton.h"
#include "engines/bitparallel/shiftand.h"
#include "engines/kmer/kmer.h"
#include "engines/wumanber/wumanber.h"

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

/* Keys are collected as offsets into one arena and turned into pointers once
   the arena stops moving. */
typedef struct {
    sm_buf arena;
    sm_buf entries; /* key_entry[] */
} key_set;

typedef struct {
    size_t off;
    uint32_t len;
    uint32_t output;
} key_entry;

static int key_set_add(key_set *ks, const uint8_t *seq, uint32_t len, uint32_t output) {
    key_entry e = {ks->arena.len, len, output};
    if (sm_buf_append(&ks->arena, seq, len) != SM_OK) return SM_ERR_NOMEM;
    return sm_buf_append(&ks->entries, &e, sizeof e);
}

static size_t key_set_count(const key_set *ks) { return ks->entries.len / sizeof(key_entry); }

static sm_ac_key *key_set_resolve(const key_set *ks) {
    size_t n = key_set_count(ks);
    sm_ac_key *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) return NULL;
    const key_entry *e = (const key_entry *)ks->entries.data;
    for (size_t i = 0; i < n; i++) {
        keys[i].seq = ks->arena.data + e[i].off;
        keys[i].len = e[i].len;
        keys[i].output = e[i].output;
    }
    return keys;
}

static void key_set_free(key_set *ks) {
    sm_buf_free(&ks->arena);
    sm_buf_free(&ks->entries);
}

static unsigned popcount4(unsigned x) { return (x & 1) + ((x >> 1) & 1) + ((x >> 2) & 1) + ((x >> 3) & 1); }

/* Number of concrete strings an IUPAC pattern stands for, saturated at limit + 1. */
static uint64_t expansion_count(const uint8_t *seq, size_t len, uint64_t limit) {
    uint64_t count = 1;
    for (size_t i = 0; i < len; i++) {
        count *= popcount4(sm_nt_set[seq[i]]);
        if (count > limit) return limit + 1;
    }
    return count;
}

/* Adds every concrete A/C/G/T string of an IUPAC pattern (odometer order). */
static int add_expansions(key_set *ks, const uint8_t *seq, uint32_t len, uint32_t output, uint8_t *work) {
    static const uint8_t base_of_bit[4] = {'A', 'C', 'G', 'T'};
    /* Start with the lowest member of each set. */
    for (uint32_t i = 0; i < len; i++) {
        unsigned set = sm_nt_set[seq[i]];
        unsigned b = 0;
        while (!(set & (1u << b))) b++;
        work[i] = base_of_bit[b];
    }
    for (;;) {
        if (key_set_add(ks, work, len, output) != SM_OK) return SM_ERR_NOMEM;
        /* Advance the last position that has a next member; reset those after it. */
        uint32_t i = len;
        for (;;) {
            if (i == 0) return SM_OK;
            i--;
            unsigned set = sm_nt_set[seq[i]];
            unsigned cur = work[i] == 'A' ? 0 : work[i] == 'C' ? 1 : work[i] == 'G' ? 2 : 3;
            unsigned b = cur + 1;
            while (b < 4 && !(set & (1u << b))) b++;
            if (b < 4) {
                work[i] = base_of_bit[b];
                for (uint32_t j = i + 1; j < len; j++) {
                    unsigned s = sm_nt_set[seq[j]];
                    unsigned lo = 0;
                    while (!(s & (1u << lo))) lo++;
                    work[j] = base_of_bit[lo];
                }
                break;
            }
        }
    }
}

static void reverse_complement(const uint8_t *seq, uint32_t len, uint8_t *out) {
    for (uint32_t i = 0; i < len; i++) out[i] = sm_nt_complement[seq[len - 1 - i]];
}

static void describe_byte(uint8_t c, char *out, size_t size) {
    if (c >= 0x21 && c < 0x7f) snprintf(out, size, "'%c'", c);
    else snprintf(out, size, "byte 0x%02X", c);
}

/* A pattern as messages show it: its name, or without one its sequence cut
   to SHOWN_MAX bytes with "..." (a NUL byte written \0, so that the
   message stays one C string). buf holds at least SHOWN_SIZE bytes. */
#define SHOWN_MAX 40
#define SHOWN_SIZE (2 * SHOWN_MAX + 4)
static const char *shown_name(const sm_pattern *p, char *buf) {
    if (p->name) return p->name;
    size_t k = 0;
    for (size_t i = 0; p->seq && i < p->len && i < SHOWN_MAX; i++) {
        if (p->seq[i] == '\0') buf[k++] = '\\';
        buf[k++] = p->seq[i] == '\0' ? '0' : p->seq[i];
    }
    if (p->seq && p->len > SHOWN_MAX) memcpy(buf + k, "...", 3), k += 3;
    buf[k] = '\0';
    return buf;
}

typedef struct {
    const sm_pattern *src;
    uint8_t *norm;     /* normalised sequence (dna: upper case, U as T) */
    uint32_t len;
    uint32_t engine;
} prepared_pattern;

static int prepare(const sm_pattern *patterns, size_t n, int dna, prepared_pattern *prep, sm_error *err) {
    for (size_t i = 0; i < n; i++) {
        const sm_pattern *p = &patterns[i];
        char buf[SHOWN_SIZE];
        const char *shown = shown_name(p, buf);
        if (!p->seq || p->len == 0)
            return sm_set_error(err, SM_ERR_PATTERN, "pattern %zu ('%.200s') is empty", i + 1, shown);
        if (p->len > UINT32_MAX - 1)
            return sm_set_error(err, SM_ERR_LIMIT, "pattern %zu ('%.200s') is longer than 2^32 symbols", i + 1, shown);
        uint8_t *norm = malloc(p->len);
        if (!norm) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        prep[i].src = p;
        prep[i].norm = norm;
        prep[i].len = (uint32_t)p->len;
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

/* Decides the engine of every pattern (the planner of this release). */
static int plan(prepared_pattern *prep, size_t n, const sm_compile_options *o, int dna, sm_error *err) {
    uint32_t limit = o->max_expansion ? o->max_expansion : DEFAULT_MAX_EXPANSION;
    if (o->match != SM_MATCH_EXACT) {
        /* One approximate engine takes every pattern. */
        uint32_t engine = o->match == SM_MATCH_MISMATCHES ? SM_PATTERN_MISMATCH
                          : o->engine == SM_ENGINE_WAVEFRONT ? SM_PATTERN_WAVEFRONT
                                                             : SM_PATTERN_MYERS;
        for (size_t i = 0; i < n; i++) prep[i].engine = engine;
        return SM_OK;
    }
    for (size_t i = 0; i < n; i++) {
        int needs_shiftand = 0;
        const char *why = NULL;
        if (dna && (o->flags & SM_FLAG_TEXT_IUPAC)) {
            needs_shiftand = 1;
            why = "IUPAC symbols in the text need the Shift-And engine";
        } else if (dna && expansion_count(prep[i].norm, prep[i].len, limit) > limit) {
            needs_shiftand = 2; /* the message names the engine after "for" */
            why = "it expands to too many concrete strings for ";
        }
        if (o->engine == SM_ENGINE_SHIFTAND || (o->engine == SM_ENGINE_AUTO && needs_shiftand)) {
            prep[i].engine = SM_PATTERN_SHIFTAND;
        } else if (needs_shiftand) {
            /* the engine forced: the exact ones other than Shift-And */
            int kmer = o->engine == SM_ENGINE_KMER, wm = o->engine == SM_ENGINE_WUMANBER;
            const char *engine = kmer ? "k-mer table" : wm ? "Wu-Manber" : "automaton";
            const char *for_it = kmer ? "the k-mer table" : wm ? "Wu-Manber" : "the automaton";
            char buf[SHOWN_SIZE];
            return sm_set_error(err, SM_ERR_INVALID,
                                "pattern %zu ('%.200s') cannot use the %s engine: %s%s (limit %u); use engine auto or shiftand",
                                i + 1, shown_name(prep[i].src, buf), engine, why, needs_shiftand == 2 ? for_it : "",
                                limit);
        } else {
            prep[i].engine = SM_PATTERN_AUTOMATON;
        }
    }
    return SM_OK;
}

static int collect_keys(const prepared_pattern *prep, size_t n, int dna, sm_strands strands, unsigned flags,
                        key_set *automaton_keys, key_set *shiftand_keys, key_set *approx_keys, sm_error *err) {
    uint32_t max_len = 0;
    for (size_t i = 0; i < n; i++)
        if (prep[i].len > max_len) max_len = prep[i].len;
    uint8_t *rc = malloc(max_len);
    uint8_t *work = malloc(max_len);
    uint8_t *folded = malloc(max_len);
    int status = SM_OK;
    if (!rc || !work || !folded) status = SM_ERR_NOMEM;
    for (size_t i = 0; i < n && status == SM_OK; i++) {
        const prepared_pattern *p = &prep[i];
        key_set *ks = p->engine == SM_PATTERN_AUTOMATON  ? automaton_keys
                      : p->engine == SM_PATTERN_SHIFTAND ? shiftand_keys
                                                         : approx_keys;
        if (!dna) {
            const uint8_t *seq = p->norm;
            if (flags & SM_FLAG_IGNORE_CASE) {
                for (uint32_t j = 0; j < p->len; j++) folded[j] = (uint8_t)tolower(p->norm[j]);
                seq = folded;
            }
            status = key_set_add(ks, seq, p->len, sm_output_id((uint32_t)i, 0));
            continue;
        }
        for (int reverse = 0; reverse <= 1 && status == SM_OK; reverse++) {
            if ((reverse && strands == SM_STRAND_FORWARD) || (!reverse && strands == SM_STRAND_REVERSE)) continue;
            const uint8_t *seq = p->norm;
            if (reverse) {
                reverse_complement(p->norm, p->len, rc);
                seq = rc;
            }
            uint32_t out = sm_output_id((uint32_t)i, reverse);
            if (p->engine == SM_PATTERN_AUTOMATON) status = add_expansions(ks, seq, p->len, out, work);
            else status = key_set_add(ks, seq, p->len, out);
        }
    }
    free(rc);
    free(work);
    free(folded);
    if (status != SM_OK) return sm_set_error(err, status, "out of memory collecting pattern keys");
    return SM_OK;
}

/* The planner's pigeonhole rule: pieces of fewer bits (dna: 2 per base)
   find too many hits; a verified symbol costs about one 64-bit word step of
   the direct engines; the piece scan itself costs about two such steps per
   text byte (one key of up to 64 symbols on one strand is one step). */
#define PIGEONHOLE_MIN_PIECE_BITS 8.0
#define PIGEONHOLE_VERIFY_COST 1.0
#define PIGEONHOLE_SCAN_COST 2.0

/* Does the pigeonhole filter take the approximate keys? Forced, it takes
   them (and its builder explains when it cannot); under auto when every
   piece is selective enough that verifying its expected hits costs less
   than the direct engines' work per text position. */
static int use_pigeonhole(const sm_ac_key *keys, size_t nk, const sm_compile_options *o, unsigned flags) {
    if (o->engine == SM_ENGINE_PIGEONHOLE) return 1;
    if (o->engine != SM_ENGINE_AUTO || (flags & SM_FLAG_TEXT_IUPAC)) return 0;
    uint32_t k = o->max_errors;
    if (sm_ph_min_piece_bits(keys, nk, o->alphabet, k, 0) < PIGEONHOLE_MIN_PIECE_BITS) return 0;
    /* Work per text position: verification symbols per piece hit against
       the direct engines' 64-bit words per position (one per 64 key symbols). */
    double rate = sm_ph_hit_rate(keys, nk, o->alphabet, k), direct = 0, verify = 0;
    for (size_t i = 0; i < nk; i++) {
        direct += (keys[i].len + 63) / 64;
        verify += (double)keys[i].len + 2.0 * k;
    }
    verify = rate * verify / (double)nk * PIGEONHOLE_VERIFY_COST;
    return PIGEONHOLE_SCAN_COST + verify < direct;
}

/* The planner's Wu-Manber rule: keys of at least WUMANBER_MIN_LENGTH
   symbols whose SHIFT table moves the window by WUMANBER_MIN_SHIFT or more
   on average. On the benchmark panel (one thread) it beats the automaton
   from a mean shift of about 16 (10000 32-mers, mean 16.5: 484 against 342
   MB/s; 3000 300-mers: 1200 against 221) and loses below (1000 16-mers,
   mean 8.4: 507 against 747); see docs/architecture.md. A few keys (at most
   SM_WM_PREFILTER_BUILD_KEYS, none shorter than 3, not all nucleotides)
   take it too, for its SIMD prefilter (10 words of the Bible: 3951-4227
   against 985-986 MB/s), and so do at most WUMANBER_FEW_KEYS keys with a
   mean shift of WUMANBER_FEW_MIN_SHIFT or more: one to four 20-nt DNA
   patterns (2 to 8 keys with both strands, mean shift 14.9-16.0) scan
   1.25-1.84x the automaton's rate on a Xeon and 1.5-1.9x on Zen 1, while
   ten 20-mers (14.7) lose on the Xeon (0.88x) and 16-mers (11-12.5) are
   even there. The k-mer table,
   when the planner takes it, goes first. When Wu-Manber takes the keys the
   section is left in *wm. */
#define WUMANBER_MIN_LENGTH 24u
#define WUMANBER_MIN_SHIFT 16.0
#define WUMANBER_FEW_KEYS 8u
#define WUMANBER_FEW_MIN_SHIFT 14.0

static int wumanber_pays(const sm_ac_key *keys, size_t nk, const uint8_t fold[256], uint64_t max_memory,
                         sm_buf *wm) {
    uint32_t shortest = UINT32_MAX;
    for (size_t i = 0; i < nk; i++)
        if (keys[i].len < shortest) shortest = keys[i].len;
    int long_keys = shortest >= WUMANBER_MIN_LENGTH, few_keys = nk <= SM_WM_PREFILTER_BUILD_KEYS && shortest >= 3;
    if (nk == 0 || (!long_keys && !few_keys)) return 0;
    if (sm_wm_build(keys, nk, fold, NULL, max_memory, wm, NULL) != SM_OK) {
        wm->len = 0;
        return 0;
    }
    double shift = sm_wm_mean_shift(wm->data);
    if (sm_wm_has_prefilter(wm->data) || (long_keys && shift >= WUMANBER_MIN_SHIFT) ||
        (nk <= WUMANBER_FEW_KEYS && shift >= WUMANBER_FEW_MIN_SHIFT))
        return 1;
    wm->len = 0;
    return 0;
}

/* An upper bound on the automaton trie's bytes for keys (five 4-byte
   columns per symbol), and the bound past which the planner takes the
   k-mer table for keys of length k (the reasons are in sm_compile). */
static uint64_t trie_bytes_bound(const sm_ac_key *keys, size_t nk) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < nk; i++) bytes += (uint64_t)keys[i].len * 5 * 4;
    return bytes;
}

static uint64_t kmer_threshold(uint32_t k) {
    if (k > SM_KT_DIRECT_MAX_K) return 8u << 20;
    return k <= SM_KT_CODE_VISITS_MAX_K ? 64u << 10 : 256u << 10;
}

/* Mixed lengths: the keys of one length that the k-mer table should take
   alone (the length whose trie would be the largest, when that part alone
   passes the planner's k-mer threshold and can use the table) are moved to
   the front of keys; returns how many (0: no such group, or one length
   only, which the planner handles whole). The other keys go to the
   automaton or Wu-Manber, and the scan runs both sections. */
static size_t kmer_group_first(sm_ac_key *keys, size_t nk, const uint8_t fold[256]) {
    uint64_t bytes[SM_KT_MAX_K + 1] = {0};
    int lengths = 0;
    for (size_t i = 0; i < nk; i++) {
        if (i > 0 && keys[i].len != keys[0].len) lengths = 2;
        if (keys[i].len <= SM_KT_MAX_K) bytes[keys[i].len] += trie_bytes_bound(&keys[i], 1);
    }
    if (lengths < 2) return 0;
    uint32_t best = 0;
    for (uint32_t k = 1; k <= SM_KT_MAX_K; k++)
        if (bytes[k] > bytes[best]) best = k;
    if (best == 0 || bytes[best] <= kmer_threshold(best)) return 0;
    size_t front = 0;
    for (size_t i = 0; i < nk; i++)
        if (keys[i].len == best) {
            sm_ac_key t = keys[front];
            keys[front++] = keys[i];
            keys[i] = t;
        }
    if (!sm_kt_eligible(keys, front, fold)) return 0;
    return front;
}

/* Lays an engine section (when there is one) at *off, 64-byte aligned. */
static void place_section(uint64_t *off, const sm_buf *section, uint64_t *section_off, uint64_t *section_size) {
    if (!section->len) return;
    *section_off = *off;
    *section_size = section->len;
    *off = (*off + section->len + SM_DB_ALIGN - 1) / SM_DB_ALIGN * SM_DB_ALIGN;
}

static int assemble(const prepared_pattern *prep, size_t n, const sm_compile_options *o, int dna,
                    unsigned flags, sm_strands strands, const sm_buf *ac, const sm_buf *sa, const sm_buf *ap,
                    const sm_buf *kt, const sm_buf *wm, sm_db **out, sm_error *err) {
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

    sm_buf strings = {0};
    sm_db_pattern *table = calloc(n, sizeof *table);
    int status = table ? SM_OK : SM_ERR_NOMEM;
    for (size_t i = 0; i < n && status == SM_OK; i++) {
        const prepared_pattern *p = &prep[i];
        /* A pattern without a name is named by its sequence as given. */
        const char *name = p->src->name ? p->src->name : p->src->seq;
        size_t name_len = p->src->name ? strlen(name) : p->len;
        const uint8_t *stored = dna ? p->norm : (const uint8_t *)p->src->seq;
        /* A name equal to the sequence as stored (the lines of a plain list:
           upper case) points at it: 10^6 31-mers take 32 MB less. */
        int shared = name_len == p->len && memcmp(name, stored, p->len) == 0;
        if (!shared) {
            table[i].name_off = strings.len;
            if ((status = sm_buf_append(&strings, name, name_len)) == SM_OK) status = sm_buf_append(&strings, "", 1);
            if (status != SM_OK) break;
        }
        table[i].seq_off = strings.len;
        if (shared) table[i].name_off = table[i].seq_off;
        table[i].length = p->len;
        table[i].engine = p->engine;
        if ((status = sm_buf_append(&strings, stored, p->len)) == SM_OK) status = sm_buf_append(&strings, "", 1);
        if (p->len < h.min_length) h.min_length = p->len;
        if (p->len > h.max_length) h.max_length = p->len;
        if (p->engine == SM_PATTERN_AUTOMATON) h.automaton_patterns++;
        else if (p->engine == SM_PATTERN_KMER) h.kmer_patterns++;
        else if (p->engine == SM_PATTERN_WUMANBER) h.wumanber_patterns++;
        else if (p->engine == SM_PATTERN_SHIFTAND) h.shiftand_patterns++;
        else {
            h.approx_patterns++;
            h.approx_engine = p->engine;
        }
    }
    if (status != SM_OK) {
        free(table);
        sm_buf_free(&strings);
        return sm_set_error(err, SM_ERR_NOMEM, "out of memory assembling the database");
    }

    uint64_t off = sizeof h;
    h.patterns_off = off;
    off += (uint64_t)n * sizeof(sm_db_pattern);
    off = (off + SM_DB_ALIGN - 1) / SM_DB_ALIGN * SM_DB_ALIGN;
    h.strings_off = off;
    h.strings_size = strings.len;
    off += strings.len;
    off = (off + SM_DB_ALIGN - 1) / SM_DB_ALIGN * SM_DB_ALIGN;
    place_section(&off, ac, &h.automaton_off, &h.automaton_size);
    place_section(&off, sa, &h.shiftand_off, &h.shiftand_size);
    place_section(&off, ap, &h.approx_off, &h.approx_size);
    place_section(&off, kt, &h.kmer_off, &h.kmer_size);
    place_section(&off, wm, &h.wumanber_off, &h.wumanber_size);
    if (o->max_memory && off > o->max_memory) {
        free(table);
        sm_buf_free(&strings);
        return sm_set_error(err, SM_ERR_LIMIT, "the database would need %llu bytes, over the memory limit of %llu",
                            (unsigned long long)off, (unsigned long long)o->max_memory);
    }
    uint8_t *bytes = sm_aligned_alloc(off);
    sm_db *db = malloc(sizeof *db);
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
    memcpy(bytes + h.patterns_off, table, n * sizeof *table);
    if (strings.len) memcpy(bytes + h.strings_off, strings.data, strings.len);
    if (ac->len) memcpy(bytes + h.automaton_off, ac->data, ac->len);
    if (sa->len) memcpy(bytes + h.shiftand_off, sa->data, sa->len);
    if (ap->len) memcpy(bytes + h.approx_off, ap->data, ap->len);
    if (kt->len) memcpy(bytes + h.kmer_off, kt->data, kt->len);
    if (wm->len) memcpy(bytes + h.wumanber_off, wm->data, wm->len);
    sm_db_seal(bytes, off);
    free(table);
    sm_buf_free(&strings);
    db->bytes = bytes;
    db->size = off;
    db->mapped = 0;
    *out = db;
    return SM_OK;
}

int sm_compile(const sm_pattern *patterns, size_t n, const sm_compile_options *opts, sm_db **out,
               sm_error *err) {
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
    if (opts->engine > SM_ENGINE_WUMANBER)
        return sm_set_error(err, SM_ERR_INVALID, "unknown engine %d", (int)opts->engine);
    if (opts->match > SM_MATCH_EDITS || opts->report > SM_REPORT_ENDS)
        return sm_set_error(err, SM_ERR_INVALID, "unknown match kind or report mode");
    /* k = 0 is exact matching whatever the kind; exact engines then serve. */
    sm_compile_options normalised = *opts;
    if (normalised.max_errors == 0) normalised.match = SM_MATCH_EXACT;
    if (normalised.max_errors > 65535)
        return sm_set_error(err, SM_ERR_LIMIT, "at most 65535 errors are supported (asked for %u)", opts->max_errors);
    opts = &normalised;
    {
        static const char *const names[] = {"auto", "automaton", "shiftand", "mismatch", "myers", "wavefront", "kmer", "pigeonhole", "wumanber"};
        int engine_is_exact = opts->engine == SM_ENGINE_AUTOMATON || opts->engine == SM_ENGINE_SHIFTAND ||
                              opts->engine == SM_ENGINE_KMER || opts->engine == SM_ENGINE_WUMANBER;
        int ok = opts->engine == SM_ENGINE_AUTO ||
                 (opts->match == SM_MATCH_EXACT && engine_is_exact) ||
                 (opts->match != SM_MATCH_EXACT && opts->engine == SM_ENGINE_PIGEONHOLE) ||
                 (opts->match == SM_MATCH_MISMATCHES && opts->engine == SM_ENGINE_MISMATCH) ||
                 (opts->match == SM_MATCH_EDITS &&
                  (opts->engine == SM_ENGINE_MYERS || opts->engine == SM_ENGINE_WAVEFRONT));
        static const char *const kinds[] = {"exact matching", "k mismatches", "k edits"};
        if (!ok)
            return sm_set_error(err, SM_ERR_INVALID, "engine %s does not do %s", names[opts->engine],
                                kinds[opts->match]);
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

    prepared_pattern *prep = calloc(n, sizeof *prep);
    if (!prep) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    key_set automaton_keys = {0}, shiftand_keys = {0}, approx_keys = {0};
    sm_buf ac = {0}, sa = {0}, ap = {0}, kt = {0}, wm = {0};
    sm_ac_key *keys = NULL;
    int status = prepare(patterns, n, dna, prep, err);
    if (status == SM_OK) status = plan(prep, n, opts, dna, err);
    if (status == SM_OK)
        status = collect_keys(prep, n, dna, strands, flags, &automaton_keys, &shiftand_keys, &approx_keys, err);
    if (status == SM_OK && key_set_count(&automaton_keys) > 0) {
        uint8_t fold[256];
        sm_text_fold(dna, flags, fold);
        keys = key_set_resolve(&automaton_keys);
        size_t nk = key_set_count(&automaton_keys);
        /* Keys of one length k <= 32 over at most four symbols can use the
           k-mer table. k <= 12, the direct table (no dependent loads): on the
           benchmark panel it beats the automaton once the automaton's table
           outgrows the L2 cache (8000 and 16000 8-mers), so the planner
           takes it when the trie could pass 256 KiB. For k <= 8 the bitmap
           stays in L1 and the bound is 64 KiB: without AVX-512 (Zen 1) the
           two tie from about 500 8-mers (250: 902 vs 962 MB/s, 500: 869 vs
           817-880, 1000: 830 vs 784), with it the table scans about twice
           as fast whatever the set (one Xeon core: 10 8-mers 1963-2154 vs
           1169-1249 MB/s, 1000 8-mers 1304 vs 491, medians). k > 12, the
           hash set (about 330-380 MB/s whatever the set, 120 MB/s at 10^6
           keys): the automaton is faster while its
           table stays in the 8 MiB L3 (one thread, 20 MB of the panel: 10^3
           31-mers 912 vs 358 MB/s, 3000 20-mers both strands 624 vs 374, 10^4
           31-mers one strand 418 vs 378) and falls behind past it (10^4
           31-mers both strands 258 vs 360, 10^5 68 vs 316, 10^6 about 28 vs
           120, compile 8.8 s vs 1.5 s), so the planner takes it when the
           trie could pass 8 MiB. */
        size_t grouped = keys && opts->engine == SM_ENGINE_AUTO ? kmer_group_first(keys, nk, fold) : 0;
        if (grouped) {
            status = sm_kt_build(keys, grouped, fold, opts->max_memory, &kt, err);
            for (size_t i = 0; i < grouped; i++) prep[keys[i].output >> 1].engine = SM_PATTERN_KMER;
        }
        sm_ac_key *rest = keys + grouped;
        size_t nrest = nk - grouped;
        /* The whole set of one length (nothing grouped) may take the table too. */
        int kmer = keys && !grouped && (opts->engine == SM_ENGINE_KMER ||
                                        (opts->engine == SM_ENGINE_AUTO &&
                                         trie_bytes_bound(keys, nk) > kmer_threshold(keys[0].len) &&
                                         sm_kt_eligible(keys, nk, fold)));
        if (!keys) status = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        else if (status != SM_OK || nrest == 0)
            ; /* the k-mer group failed, or took every key */
        else if (opts->engine == SM_ENGINE_WUMANBER || (opts->engine == SM_ENGINE_AUTO && !kmer &&
                                                          wumanber_pays(rest, nrest, fold, opts->max_memory, &wm))) {
            if (!wm.len) status = sm_wm_build(rest, nrest, fold, NULL, opts->max_memory, &wm, err);
            for (size_t i = 0; i < n; i++)
                if (prep[i].engine == SM_PATTERN_AUTOMATON) prep[i].engine = SM_PATTERN_WUMANBER;
        } else if (kmer && opts->engine == SM_ENGINE_KMER && !sm_kt_eligible(keys, nk, fold))
            status = sm_set_error(err, SM_ERR_INVALID,
                                  "the k-mer engine needs patterns of one length (at most %d) over at most 4 symbols",
                                  SM_KT_MAX_K);
        else if (kmer) {
            status = sm_kt_build(keys, nk, fold, opts->max_memory, &kt, err);
            for (size_t i = 0; i < n; i++)
                if (prep[i].engine == SM_PATTERN_AUTOMATON) prep[i].engine = SM_PATTERN_KMER;
        } else
            status = sm_ac_build(rest, nrest, fold, opts->build_threads, opts->max_memory, &ac, err);
        free(keys);
        keys = NULL;
    }
    key_set_free(&automaton_keys);
    if (status == SM_OK && key_set_count(&shiftand_keys) > 0) {
        keys = key_set_resolve(&shiftand_keys);
        if (!keys) status = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        else status = sm_sa_build(keys, key_set_count(&shiftand_keys), opts->alphabet, flags,
                                  opts->max_memory, &sa, err);
        free(keys);
    }
    key_set_free(&shiftand_keys);
    if (status == SM_OK && key_set_count(&approx_keys) > 0) {
        keys = key_set_resolve(&approx_keys);
        size_t nk = key_set_count(&approx_keys);
        uint32_t k = opts->max_errors;
        if (keys && use_pigeonhole(keys, nk, opts, flags)) {
            for (size_t i = 0; i < n; i++) prep[i].engine = SM_PATTERN_PIGEONHOLE;
        }
        if (!keys) status = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        else if (prep[0].engine == SM_PATTERN_PIGEONHOLE)
            status = sm_ph_build(keys, nk, opts->alphabet, flags, opts->match, k, opts->build_threads,
                                 opts->max_memory, &ap, err);
        else if (prep[0].engine == SM_PATTERN_MISMATCH)
            status = sm_km_build(keys, nk, opts->alphabet, flags, k, opts->max_memory, &ap, err);
        else if (prep[0].engine == SM_PATTERN_WAVEFRONT)
            status = sm_wf_build(keys, nk, opts->alphabet, flags, k, opts->max_memory, &ap, err);
        else
            status = sm_my_build(keys, nk, opts->alphabet, flags, k, opts->max_memory, &ap, err);
        free(keys);
    }
    key_set_free(&approx_keys);
    if (status == SM_OK) status = assemble(prep, n, opts, dna, flags, strands, &ac, &sa, &ap, &kt, &wm, out, err);
    sm_buf_free(&wm);
    sm_buf_free(&kt);
    sm_buf_free(&ac);
    sm_buf_free(&sa);
    sm_buf_free(&ap);
    for (size_t i = 0; i < n; i++) free(prep[i].norm);
    free(prep);
    return status;
}
