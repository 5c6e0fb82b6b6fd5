/* The planner (see plan.h): per pattern, which engine scans it, then the
 * keys each engine gets (reverse complements, IUPAC expansions, case folds)
 * and their sections. Its rules and the measurements behind them are in
 * docs/architecture.md ("The planner"). */
#include <ctype.h>
#include <stdlib.h>

#include "engines/plan.h"
#include "engines/approx/approx_cost.h"
#include "engines/approx/pigeonhole.h"
#include "engines/guide/guide.h"
#include "engines/kmer/kmer.h"
#include "engines/wumanber/wumanber.h"

#define DEFAULT_MAX_EXPANSION 256u

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

/* The pattern of the first key (its output id's pattern). */
static size_t key_set_first_pattern(const key_set *ks) { return ((const key_entry *)ks->entries.data)[0].output >> 1; }

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

/* Whether every symbol is one of A, C, G, T (the normalised upper case). */
static int concrete_bases(const uint8_t *seq, uint32_t len) {
    for (uint32_t i = 0; i < len; i++)
        if (seq[i] != 'A' && seq[i] != 'C' && seq[i] != 'G' && seq[i] != 'T') return 0;
    return 1;
}

static void reverse_complement(const uint8_t *seq, uint32_t len, uint8_t *out) {
    for (uint32_t i = 0; i < len; i++) out[i] = sm_nt_complement[seq[len - 1 - i]];
}

/* A pattern and the engine (section kind) the first pass gave it. */
typedef struct {
    const sm_plan_pattern *p;
    uint32_t kind;
} planned;

/* The section kind of a forced engine that does this matching (the
   registry's), 0 under auto or for another matching (the exact patterns
   beside a forced approximate engine, sm_compile_options.exact). */
static uint32_t forced_kind(const sm_compile_options *o, sm_match match) {
    const sm_engine_ops *ops = o->engine == SM_ENGINE_AUTO ? NULL : sm_engine_for_id(o->engine);
    return ops && (ops->matches & (1u << match)) ? ops->kind : 0;
}

/* First pass: exact patterns to the automaton, or to Shift-And when they
   expand to too many strings or IUPAC text must match; approximate ones to
   the forced engine, or to the direct approximate engine of the matching
   (the pigeonhole filter or the guide engine may take them later). The
   patterns o->exact flags in an approximate set are exact ones (their
   engine chosen as under engine auto). A forced exact engine other than
   Shift-And gets the automaton's keys (IUPAC expanded). */
static int first_pass(planned *pl, size_t n, const sm_compile_options *o, int dna, sm_error *err) {
    uint32_t limit = o->max_expansion ? o->max_expansion : DEFAULT_MAX_EXPANSION;
    sm_engine exact_engine = o->engine;
    if (o->match != SM_MATCH_EXACT) {
        uint32_t kind = forced_kind(o, o->match)        ? forced_kind(o, o->match)
                        : o->match == SM_MATCH_MISMATCHES ? SM_SECTION_MISMATCH
                                                          : SM_SECTION_MYERS;
        for (size_t i = 0; i < n; i++) pl[i].kind = kind;
        if (!o->exact) return SM_OK;
        exact_engine = SM_ENGINE_AUTO;
    }
    for (size_t i = 0; i < n; i++) {
        if (o->match != SM_MATCH_EXACT && !o->exact[i]) continue;
        const sm_plan_pattern *p = pl[i].p;
        int needs_shiftand = 0;
        const char *why = NULL;
        if (dna && (o->flags & SM_FLAG_TEXT_IUPAC)) {
            needs_shiftand = 1;
            why = "IUPAC symbols in the text need the Shift-And engine";
        } else if (dna && expansion_count(p->seq, p->len, limit) > limit) {
            needs_shiftand = 2; /* the message names the engine after "for" */
            why = "it expands to too many concrete strings for ";
        }
        if (exact_engine == SM_ENGINE_SHIFTAND || (exact_engine == SM_ENGINE_AUTO && needs_shiftand)) {
            pl[i].kind = SM_SECTION_SHIFTAND;
        } else if (needs_shiftand) {
            /* the engine forced: the exact ones other than Shift-And */
            int kmer = exact_engine == SM_ENGINE_KMER, wm = exact_engine == SM_ENGINE_WUMANBER;
            const char *engine = kmer ? "k-mer table" : wm ? "Wu-Manber" : "automaton";
            const char *for_it = kmer ? "the k-mer table" : wm ? "Wu-Manber" : "the automaton";
            char buf[SM_SHOWN_SIZE];
            return sm_set_error(err, SM_ERR_INVALID,
                                "pattern %zu ('%.200s') cannot use the %s engine: %s%s (limit %u); use engine auto or "
                                "shiftand",
                                i + 1, sm_pattern_shown(p->name, p->given, p->given_len, buf), engine, why,
                                needs_shiftand == 2 ? for_it : "", limit);
        } else {
            pl[i].kind = SM_SECTION_AUTOMATON;
        }
    }
    return SM_OK;
}

/* The keys of every pattern, by the engine family of the first pass. */
static int collect_keys(const planned *pl, size_t n, int dna, sm_strands strands, unsigned flags,
                        key_set *automaton_keys, key_set *shiftand_keys, key_set *approx_keys, sm_error *err) {
    uint32_t max_len = 0;
    for (size_t i = 0; i < n; i++)
        if (pl[i].p->len > max_len) max_len = pl[i].p->len;
    uint8_t *rc = malloc(max_len);
    uint8_t *work = malloc(max_len);
    uint8_t *folded = malloc(max_len);
    int status = SM_OK;
    if (!rc || !work || !folded) status = SM_ERR_NOMEM;
    for (size_t i = 0; i < n && status == SM_OK; i++) {
        const sm_plan_pattern *p = pl[i].p;
        key_set *ks = pl[i].kind == SM_SECTION_AUTOMATON  ? automaton_keys
                      : pl[i].kind == SM_SECTION_SHIFTAND ? shiftand_keys
                                                          : approx_keys;
        if (!dna) {
            const uint8_t *seq = p->seq;
            if (flags & SM_FLAG_IGNORE_CASE) {
                for (uint32_t j = 0; j < p->len; j++) folded[j] = (uint8_t)tolower(p->seq[j]);
                seq = folded;
            }
            status = key_set_add(ks, seq, p->len, sm_output_id((uint32_t)i, 0));
            continue;
        }
        for (int reverse = 0; reverse <= 1 && status == SM_OK; reverse++) {
            if ((reverse && strands == SM_STRAND_FORWARD) || (!reverse && strands == SM_STRAND_REVERSE)) continue;
            const uint8_t *seq = p->seq;
            if (reverse) {
                reverse_complement(p->seq, p->len, rc);
                seq = rc;
            }
            uint32_t out = sm_output_id((uint32_t)i, reverse);
            /* a pattern of bases only is its one string: no odometer walk */
            if (pl[i].kind == SM_SECTION_AUTOMATON && !concrete_bases(seq, p->len))
                status = add_expansions(ks, seq, p->len, out, work);
            else status = key_set_add(ks, seq, p->len, out);
        }
    }
    free(rc);
    free(work);
    free(folded);
    if (status != SM_OK) return sm_set_error(err, status, "out of memory collecting pattern keys");
    return SM_OK;
}

/* The approximate engine by the CPU cost model (src/engines/approx/
   approx_cost.c, docs/architecture.md "Choosing an approximate engine"):
   forced, the engine asked for (the first pass's); under auto the direct
   engine (k-mismatch counters or Myers) unless the pigeonhole filter's
   estimated scan is cheaper. */
static uint32_t approx_kind_by_cpu_cost(const sm_ac_key *keys, size_t nk, const sm_compile_options *o,
                                        unsigned flags, uint32_t direct) {
    if (o->engine != SM_ENGINE_AUTO) return direct;
    sm_approx_estimates est;
    sm_approx_estimate(keys, nk, o->alphabet, flags, o->match, o->max_errors, o->typical_record, &est);
    return est.choice == SM_ENGINE_PIGEONHOLE ? SM_SECTION_PIGEONHOLE : direct;
}

/* The guide engine (k mismatches with a PAM): every occurrence of the
   exact PAM, then exact pieces of the guides beside it. It alone finds
   bulges; under auto it takes every such set on the CPU whose guides it
   can hold, since the PAM leaves few positions to look at (one in eight
   for NGG on both strands; docs/architecture.md, "The guide engine", has
   the measurements). On the GPU it takes the sets with bulges (its kernel
   checks every key at every PAM, guide_gpu.h); the pigeonhole filter's
   kernel keeps the sets without, as measured there. Forced, the first
   pass gave it its patterns. */
static int use_guide(const sm_ac_key *keys, size_t nk, const sm_compile_options *o, unsigned flags) {
    if (o->engine != SM_ENGINE_AUTO) return 0;
    if (o->dna_bulges || o->rna_bulges) return 1;
    if (o->engine != SM_ENGINE_AUTO || !o->pam || o->match != SM_MATCH_MISMATCHES ||
        o->backend == SM_BACKEND_CUDA || (flags & SM_FLAG_TEXT_IUPAC))
        return 0;
    size_t q = strlen(o->pam);
    for (size_t i = 0; i < nk; i++)
        if (keys[i].len - q > SM_GUIDE_MAX_LENGTH) return 0;
    return 1;
}

/* On the GPU (docs/architecture.md, "The planner on the GPU", has the
   measurements): work per text position in thread instructions. Myers: a
   lane step per byte for every lane of short keys, a block step (both
   outcomes of the carry, the shuffle scan) per 64-bit block of a longer
   key; the mismatch counters: a key symbol per 32 windows for the symbols
   a key reads before all 32 windows pass k (about 1.5 (k + 1) + 6 on DNA);
   the pigeonhole filter: its scan per byte, and the verified symbols of
   each expected piece hit. The GPU's band DP takes at most
   GPU_PIGEONHOLE_MAX_EDITS edits. */
#define GPU_MYERS_LANE_COST 40.0
#define GPU_MYERS_BLOCK_COST 120.0
#define GPU_MISMATCH_SYMBOL_COST 12.0
#define GPU_PIGEONHOLE_SCAN_COST 20.0
#define GPU_PIGEONHOLE_VERIFY_COST 6.0
#define GPU_PIGEONHOLE_MAX_EDITS 15u
/* Pieces of fewer bits (dna: 2 per base) find too many hits for the GPU's
   filter to pay. */
#define GPU_PIGEONHOLE_MIN_PIECE_BITS 8.0

static int gpu_use_pigeonhole(const sm_ac_key *keys, size_t nk, const sm_compile_options *o, unsigned flags) {
    if (o->engine != SM_ENGINE_AUTO || (flags & SM_FLAG_TEXT_IUPAC)) return 0; /* forced: the first pass's */
    uint32_t k = o->max_errors;
    if (o->match == SM_MATCH_EDITS && k > GPU_PIGEONHOLE_MAX_EDITS) return 0;
    if (sm_ph_min_piece_bits(keys, nk, o->alphabet, k, 0) < GPU_PIGEONHOLE_MIN_PIECE_BITS) return 0;
    double direct = 0, verify = 0;
    for (size_t i = 0; i < nk; i++) {
        uint32_t m = keys[i].len;
        if (o->match == SM_MATCH_MISMATCHES) {
            double read = 1.5 * (k + 1) + 6;
            direct += (read < m ? read : m) * GPU_MISMATCH_SYMBOL_COST / 32;
        } else if (m <= 64) {
            uint32_t width = m < 3 ? 3 : m;
            direct += GPU_MYERS_LANE_COST / (double)(64 / width);
        } else {
            uint32_t blocks = (m + 63) / 64, group = 1;
            while (group < blocks) group *= 2;
            direct += GPU_MYERS_BLOCK_COST * group;
        }
        verify += (double)m + 2.0 * k;
    }
    double rate = sm_ph_hit_rate(keys, nk, o->alphabet, k);
    return GPU_PIGEONHOLE_SCAN_COST + rate * verify / (double)nk * GPU_PIGEONHOLE_VERIFY_COST < direct;
}

/* The Wu-Manber rule: keys of at least WUMANBER_MIN_LENGTH symbols whose
   SHIFT table moves the window by WUMANBER_MIN_SHIFT or more on average
   (below that the automaton is faster); a few keys with the SIMD prefilter
   (at most SM_WM_PREFILTER_BUILD_KEYS, none shorter than 3, not all
   nucleotides); and at most WUMANBER_FEW_KEYS keys with a mean shift of
   WUMANBER_FEW_MIN_SHIFT or more (one to four 20-nt DNA patterns on both
   strands). Over short records (typical_record up to
   WUMANBER_SHORT_RECORD: reads), which the automaton scans a byte at a time
   (its interleaved streams need longer ones), a few keys with a mean shift
   of WUMANBER_SHORT_MIN_SHIFT or more (a 6-nt adapter and up; a 4-mer
   stays with the automaton: docs/trim.md). The k-mer table, when the
   planner takes it, goes first. When Wu-Manber takes the keys the section
   is left in *wm. */
#define WUMANBER_MIN_LENGTH 24u
#define WUMANBER_MIN_SHIFT 16.0
#define WUMANBER_FEW_KEYS 8u
#define WUMANBER_FEW_MIN_SHIFT 14.0
#define WUMANBER_SHORT_RECORD 8192u
#define WUMANBER_SHORT_MIN_SHIFT 4.0

/* On the GPU (docs/architecture.md, "The planner on the GPU", with the
   measurements): the kernel has no prefilter and a thread's window step
   costs far more than the automaton's lookup, so only long keys with long
   shifts take Wu-Manber. */
#define GPU_WUMANBER_MIN_LENGTH 24u
#define GPU_WUMANBER_MIN_SHIFT 48.0

static int wumanber_pays(const sm_ac_key *keys, size_t nk, const uint8_t fold[256], uint64_t max_memory, int gpu,
                         uint32_t typical_record, sm_buf *wm) {
    uint32_t shortest = UINT32_MAX;
    for (size_t i = 0; i < nk; i++)
        if (keys[i].len < shortest) shortest = keys[i].len;
    int long_keys = shortest >= (gpu ? GPU_WUMANBER_MIN_LENGTH : WUMANBER_MIN_LENGTH);
    int few_keys = !gpu && nk <= SM_WM_PREFILTER_BUILD_KEYS && shortest >= 3;
    if (nk == 0 || (!long_keys && !few_keys)) return 0;
    if (sm_wm_build(keys, nk, fold, NULL, max_memory, wm, NULL) != SM_OK) {
        wm->len = 0;
        return 0;
    }
    double shift = sm_wm_mean_shift(wm->data);
    if (gpu) {
        if (shift >= GPU_WUMANBER_MIN_SHIFT) return 1;
    } else if (sm_wm_has_prefilter(wm->data) || (long_keys && shift >= WUMANBER_MIN_SHIFT) ||
               (nk <= WUMANBER_FEW_KEYS && shift >= WUMANBER_FEW_MIN_SHIFT) ||
               (nk <= WUMANBER_FEW_KEYS && typical_record && typical_record <= WUMANBER_SHORT_RECORD &&
                shift >= WUMANBER_SHORT_MIN_SHIFT)) {
        return 1;
    }
    wm->len = 0;
    return 0;
}

/* An upper bound on the automaton trie's bytes for keys (five 4-byte
   columns per symbol), and the bound past which the planner takes the
   k-mer table for keys of length k: 64 KiB for k <= 8 (its bitmap stays in
   L1), 256 KiB up to k = 12 (the automaton's table leaves L2), 8 MiB for
   the hash layout (the automaton's table leaves L3). */
static uint64_t trie_bytes_bound(const sm_ac_key *keys, size_t nk) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < nk; i++) bytes += (uint64_t)keys[i].len * 5 * 4;
    return bytes;
}

/* Past this many bytes of trie bound (about 27 million key symbols) the
   automaton's build takes tens of seconds and gigabytes (10^6 random keys
   of 10-60 nt: 50 million states, 35 s, 2.7 GB), more than Wu-Manber's
   slower scan costs on texts up to about 100 MB, so Wu-Manber takes the
   keys (docs/architecture.md, "Wu-Manber"). On the GPU too, for keys its
   Wu-Manber kernel takes (GPU_WUMANBER_MIN_LENGTH): the automaton's tables
   must also go to the GPU (10,000 keys of 9000 nt over 60 MB on an H200:
   2.2-3.1 s against 6.6-6.8; docs/architecture.md, "The planner on the GPU"). */
#define AUTOMATON_HUGE_BYTES ((uint64_t)512 << 20)

static int automaton_huge(const sm_ac_key *keys, size_t nk, int gpu) {
    if (trie_bytes_bound(keys, nk) <= AUTOMATON_HUGE_BYTES) return 0;
    for (size_t i = 0; gpu && i < nk; i++)
        if (keys[i].len < GPU_WUMANBER_MIN_LENGTH) return 0;
    return 1;
}

static uint64_t kmer_threshold(uint32_t k) {
    if (k > SM_KT_DIRECT_MAX_K) return 8u << 20;
    return k <= SM_KT_CODE_VISITS_MAX_K ? 64u << 10 : 256u << 10;
}

/* On the GPU the automaton's table stays in a block's shared memory up to
   about 227 KB (16-bit entries below 2^15 states), where its one lookup per
   byte is hard to beat for few keys; the k-mer kernel decodes and tests 16
   positions per lane at once. The bounds on the trie's bytes past which the
   k-mer table takes the keys (docs/architecture.md, "The planner on the
   GPU"): the direct layout, and the hash layout, whose filter is read
   through L2 at every position. */
#define GPU_KMER_DIRECT_MIN_BYTES (16u << 10)
#define GPU_KMER_HASH_MIN_BYTES (2u << 20)

static uint64_t kmer_threshold_for(uint32_t k, int gpu) {
    if (!gpu) return kmer_threshold(k);
    return k > SM_KT_DIRECT_MAX_K ? GPU_KMER_HASH_MIN_BYTES : GPU_KMER_DIRECT_MIN_BYTES;
}

/* Mixed lengths: the keys of one length that the k-mer table should take
   alone (the length whose trie would be the largest, when that part alone
   passes the planner's k-mer threshold and can use the table) are moved to
   the front of keys; returns how many (0: no such group, or one length
   only, which the planner handles whole). The other keys go to the
   automaton or Wu-Manber, and the scan runs both sections. */
static size_t kmer_group_first(sm_ac_key *keys, size_t nk, const uint8_t fold[256], int gpu) {
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
    if (best == 0 || bytes[best] <= kmer_threshold_for(best, gpu)) return 0;
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

/* Appends a built section (taking over its bytes). */
static int add_section(sm_plan *plan, uint32_t kind, sm_buf *bytes) {
    sm_plan_section *p = realloc(plan->sections, (plan->count + 1) * sizeof *p);
    if (!p) return SM_ERR_NOMEM;
    plan->sections = p;
    p[plan->count].kind = kind;
    p[plan->count].patterns = 0;
    p[plan->count].bytes = *bytes;
    plan->count++;
    memset(bytes, 0, sizeof *bytes);
    return SM_OK;
}

static int build(uint32_t kind, const sm_ac_key *keys, size_t nk, const sm_compile_options *o, unsigned flags,
                 const uint8_t *fold, const sm_build_tuning *tuning, sm_plan *plan, sm_error *err) {
    const sm_engine_ops *ops = sm_engine_for_kind(kind);
    sm_build_input in = {.keys = keys, .nkeys = nk, .alphabet = o->alphabet, .flags = flags, .match = o->match,
                         .k = o->match == SM_MATCH_EXACT ? 0 : o->max_errors, .fold = fold,
                         .build_threads = o->build_threads, .max_bytes = o->max_memory, .tuning = tuning,
                         .pam_length = o->pam ? (uint32_t)strlen(o->pam) : 0, .pam_side = o->pam_side,
                         .dna_bulges = o->dna_bulges, .rna_bulges = o->rna_bulges,
                         .build_backend = o->build_backend, .gpu_planned = o->backend == SM_BACKEND_CUDA,
                         .report = &plan->report};
    sm_buf bytes = {0};
    int rc = ops->build(&in, &bytes, err);
    if (rc == SM_OK && add_section(plan, kind, &bytes) != SM_OK)
        rc = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    sm_buf_free(&bytes);
    return rc;
}

/* The exact keys of the automaton family: the k-mer table (the whole set,
   or its largest group of one length), Wu-Manber or the automaton. */
static int plan_exact(planned *pl, size_t n, key_set *ks, const sm_compile_options *o, unsigned flags, int dna,
                      const sm_build_tuning *tuning, sm_plan *plan, sm_error *err) {
    uint8_t fold[256];
    sm_text_fold(dna, flags, fold);
    sm_ac_key *keys = key_set_resolve(ks);
    size_t nk = key_set_count(ks);
    if (!keys) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    int status = SM_OK;
    int gpu = o->backend == SM_BACKEND_CUDA;
    size_t grouped = o->engine == SM_ENGINE_AUTO ? kmer_group_first(keys, nk, fold, gpu) : 0;
    if (grouped) {
        status = build(SM_SECTION_KMER, keys, grouped, o, flags, fold, tuning, plan, err);
        for (size_t i = 0; i < grouped; i++) pl[keys[i].output >> 1].kind = SM_SECTION_KMER;
    }
    sm_ac_key *rest = keys + grouped;
    size_t nrest = nk - grouped;
    sm_buf wm = {0};
    /* The whole set of one length (nothing grouped) may take the table too. */
    int kmer = !grouped && (o->engine == SM_ENGINE_KMER ||
                            (o->engine == SM_ENGINE_AUTO &&
                             trie_bytes_bound(keys, nk) > kmer_threshold_for(keys[0].len, gpu) &&
                             sm_kt_eligible(keys, nk, fold)));
    uint32_t kind = SM_SECTION_AUTOMATON;
    uint32_t forced = forced_kind(o, SM_MATCH_EXACT);
    if (status != SM_OK || nrest == 0)
        ; /* the k-mer group failed, or took every key */
    else if (forced && forced != SM_SECTION_KMER) {
        kind = forced; /* every key to the engine asked for */
        status = build(kind, rest, nrest, o, flags, fold, tuning, plan, err);
    } else if ((o->engine == SM_ENGINE_AUTO && !kmer &&
              (automaton_huge(rest, nrest, gpu) ||
               wumanber_pays(rest, nrest, fold, o->max_memory, gpu, o->typical_record, &wm)))) {
        kind = SM_SECTION_WUMANBER;
        if (wm.len) status = add_section(plan, kind, &wm) == SM_OK ? SM_OK : sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        else status = build(kind, rest, nrest, o, flags, fold, tuning, plan, err);
    } else if (kmer && o->engine == SM_ENGINE_KMER && !sm_kt_eligible(keys, nk, fold)) {
        status = sm_set_error(err, SM_ERR_INVALID,
                              "the k-mer engine needs patterns of one length (at most %d) over at most 4 symbols",
                              SM_KT_MAX_K);
    } else if (kmer) {
        kind = SM_SECTION_KMER;
        status = build(kind, keys, nk, o, flags, fold, tuning, plan, err);
    } else {
        status = build(kind, rest, nrest, o, flags, fold, tuning, plan, err);
    }
    if (kind != SM_SECTION_AUTOMATON)
        for (size_t i = 0; i < n; i++)
            if (pl[i].kind == SM_SECTION_AUTOMATON) pl[i].kind = kind;
    sm_buf_free(&wm);
    free(keys);
    return status;
}

/* On the GPU, a set of which only some patterns have selective pieces is
   split: those go to the pigeonhole filter when it pays for them, the rest
   to the direct engine (two sections, each run by its kernel). Moves the
   pigeonhole's keys to the front of keys; returns how many (0: no split). */
static size_t gpu_split_pigeonhole(sm_ac_key *keys, size_t nk, const sm_compile_options *o, unsigned flags) {
    if (o->engine != SM_ENGINE_AUTO || (flags & SM_FLAG_TEXT_IUPAC)) return 0;
    size_t front = 0;
    for (size_t i = 0; i < nk; i++) {
        /* a pattern's keys (its strands) stay together: judged by the first */
        size_t j = i;
        while (j + 1 < nk && keys[j + 1].output >> 1 == keys[i].output >> 1) j++;
        if (sm_ph_min_piece_bits(&keys[i], j - i + 1, o->alphabet, o->max_errors, 0) >= GPU_PIGEONHOLE_MIN_PIECE_BITS)
            for (size_t x = i; x <= j; x++) {
                sm_ac_key t = keys[front];
                keys[front++] = keys[x];
                keys[x] = t;
            }
        i = j;
    }
    if (front == 0 || front == nk || !gpu_use_pigeonhole(keys, front, o, flags)) return 0;
    return front;
}

static int plan_approx(planned *pl, size_t n, key_set *ks, const sm_compile_options *o, unsigned flags,
                       const sm_build_tuning *tuning, sm_plan *plan, sm_error *err) {
    sm_ac_key *keys = key_set_resolve(ks);
    size_t nk = key_set_count(ks);
    if (!keys) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    /* the first pass's approximate engine (beside it: exact patterns, o->exact) */
    uint32_t kind = pl[key_set_first_pattern(ks)].kind;
    int gpu = o->backend == SM_BACKEND_CUDA;
    if (use_guide(keys, nk, o, flags)) {
        for (size_t i = 0; i < n; i++) pl[i].kind = SM_SECTION_GUIDE;
        int status = build(SM_SECTION_GUIDE, keys, nk, o, flags, NULL, tuning, plan, err);
        free(keys);
        return status;
    }
    int pigeonhole = gpu ? gpu_use_pigeonhole(keys, nk, o, flags)
                         : approx_kind_by_cpu_cost(keys, nk, o, flags, kind) == SM_SECTION_PIGEONHOLE;
    size_t split = gpu && !pigeonhole ? gpu_split_pigeonhole(keys, nk, o, flags) : 0;
    int status = SM_OK;
    if (split) {
        status = build(SM_SECTION_PIGEONHOLE, keys, split, o, flags, NULL, tuning, plan, err);
        for (size_t i = 0; i < split; i++) pl[keys[i].output >> 1].kind = SM_SECTION_PIGEONHOLE;
        if (status == SM_OK) status = build(kind, keys + split, nk - split, o, flags, NULL, tuning, plan, err);
        free(keys);
        return status;
    }
    uint32_t first = kind;
    if (pigeonhole) kind = SM_SECTION_PIGEONHOLE;
    for (size_t i = 0; i < n; i++)
        if (pl[i].kind == first) pl[i].kind = kind;
    status = build(kind, keys, nk, o, flags, NULL, tuning, plan, err);
    free(keys);
    return status;
}

int sm_plan_build(sm_plan_pattern *patterns, size_t n, const sm_compile_options *o, unsigned flags,
                  sm_strands strands, const sm_build_tuning *tuning, sm_plan *plan, sm_error *err) {
    memset(plan, 0, sizeof *plan);
    int dna = o->alphabet == SM_ALPHABET_DNA;
    planned *pl = calloc(n ? n : 1, sizeof *pl);
    if (!pl) return sm_set_error(err, SM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) pl[i].p = &patterns[i];
    key_set automaton_keys = {0}, shiftand_keys = {0}, approx_keys = {0};
    int status = first_pass(pl, n, o, dna, err);
    if (status == SM_OK)
        status = collect_keys(pl, n, dna, strands, flags, &automaton_keys, &shiftand_keys, &approx_keys, err);
    if (status == SM_OK && key_set_count(&automaton_keys) > 0)
        status = plan_exact(pl, n, &automaton_keys, o, flags, dna, tuning, plan, err);
    key_set_free(&automaton_keys);
    if (status == SM_OK && key_set_count(&shiftand_keys) > 0) {
        sm_ac_key *keys = key_set_resolve(&shiftand_keys);
        if (!keys) status = sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        else status = build(SM_SECTION_SHIFTAND, keys, key_set_count(&shiftand_keys), o, flags, NULL, tuning, plan, err);
        free(keys);
    }
    key_set_free(&shiftand_keys);
    if (status == SM_OK && key_set_count(&approx_keys) > 0)
        status = plan_approx(pl, n, &approx_keys, o, flags, tuning, plan, err);
    key_set_free(&approx_keys);
    /* Each kind has one section: a pattern's section is the one of its kind. */
    for (size_t i = 0; status == SM_OK && i < n; i++) {
        size_t j = 0;
        while (j < plan->count && plan->sections[j].kind != pl[i].kind) j++;
        if (j == plan->count) {
            status = sm_set_error(err, SM_ERR_INVALID, "pattern %zu was given no engine", i + 1);
            break;
        }
        patterns[i].section = (uint32_t)j;
        plan->sections[j].patterns++;
    }
    free(pl);
    if (status != SM_OK) sm_plan_free(plan);
    return status;
}

void sm_plan_free(sm_plan *plan) {
    for (size_t i = 0; i < plan->count; i++) sm_buf_free(&plan->sections[i].bytes);
    free(plan->sections);
    plan->sections = NULL;
    plan->count = 0;
}
