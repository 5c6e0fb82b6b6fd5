/*
 * seqmatch — find many patterns at once in DNA collections and plain text.
 *
 * The library separates compiling from scanning:
 *
 *   1. sm_compile() turns a pattern set into an immutable database (sm_db).
 *      A database is one flat block of bytes (offsets, never pointers): it can
 *      be saved to a file, loaded or memory-copied elsewhere and used as-is.
 *   2. Every scanning thread owns an sm_scratch (or an sm_stream); the
 *      database itself is shared read-only and is never modified by a scan.
 *   3. Hits are delivered through a callback.
 *
 * Semantics (identical for every engine):
 *   - Coordinates are 0-based, half-open [start, end) within the scanned
 *     sequence.
 *   - Alphabet SM_ALPHABET_DNA: case-insensitive, U = T. Pattern letters may be
 *     IUPAC codes (R Y S W K M B D H V N). A pattern symbol matches a text
 *     symbol iff the text symbol is one of A C G T and lies in the pattern
 *     symbol's set; text IUPAC codes and N match nothing unless
 *     SM_FLAG_TEXT_IUPAC is set, in which case they match when the sets
 *     intersect. Both strands by default: a reverse-strand hit is a hit of the
 *     pattern's reverse complement on the forward text, reported with strand
 *     '-' and forward coordinates.
 *   - Alphabet SM_ALPHABET_TEXT: raw bytes, case-sensitive unless
 *     SM_FLAG_IGNORE_CASE; forward strand only.
 *   - Every occurrence is reported, overlapping ones included. Duplicate
 *     patterns are distinct patterns. Empty patterns are an error.
 *   - k mismatches (SM_MATCH_MISMATCHES): every window [i, i + m) with at most
 *     k mismatched symbols; errors = mismatches.
 *   - k edits (SM_MATCH_EDITS, unit-cost Levenshtein): D(j) is the least edit
 *     distance between the pattern and any substring ending at j (exclusive).
 *     SM_REPORT_ENDS reports every j with D(j) <= k; SM_REPORT_BEST, for each
 *     maximal run of consecutive j with D(j) <= k, the j with the least D
 *     (leftmost on ties). In both, start is the largest s with
 *     edit(pattern, text[s, j)) = D(j) and errors = D(j).
 *   - PAM (sm_compile_options.pam, dna only): each pattern P is a guide G
 *     followed by the PAM Q (q symbols, IUPAC) that must match exactly; the
 *     database stores G + Q, and hits cover the whole site G + Q. Errors are
 *     counted in the guide only:
 *       exact: the same as searching G + Q exactly;
 *       k mismatches: [i, i + m) (m = |G| + q) is a hit iff text[i + |G|, i + m)
 *         matches Q exactly and the guide part has at most k mismatches;
 *         errors = the guide's mismatches;
 *       k edits, strand '+': D'(j) = D_G(j - q) when text[j - q, j) matches Q
 *         exactly, else infinite, where D_G(e) is the least edit distance
 *         between G and a substring ending at e; ends and best runs are
 *         taken over D' as above, errors = D'(j), and start is the largest s
 *         with edit(G, text[s, j - q)) = D'(j);
 *       k edits, strand '-' (a hit of rc(Q) + rc(G) on the forward text):
 *         D'(j) = the least edit(rc(G), text[s + q, j)) over the s where
 *         text[s, s + q) matches rc(Q) exactly; start = the largest such s
 *         reaching D'(j).
 *     With the PAM on the 5' side (SM_PAM_5PRIME, Cas12a's TTTV) the
 *     database stores Q + G and everything above holds with the sides
 *     swapped: the PAM must match text[i, i + q) on '+' and text[j - q, j)
 *     on '-'.
 *   - Bulges (dna_bulges, rna_bulges: k mismatches with a PAM only), as
 *     Cas-OFFinder 3 counts them. A site (start, end, strand) is an
 *     alignment of the guide G (L symbols) to the text beside an exact PAM
 *     with at most k mismatches and at most one bulge: a DNA bulge is b
 *     contiguous text bases with no partner in G (1 <= b <= dna_bulges),
 *     an RNA bulge b contiguous guide symbols with no partner in the text
 *     (1 <= b <= rna_bulges); the bulge lies inside the protospacer: paired
 *     guide symbols on both sides of it. Bulged text bases are not
 *     compared. Counting a guide's symbols from the PAM (d = 0 beside it),
 *     a DNA bulge at i (1 <= i <= L - 1) pairs d < i with the text at
 *     distance d and d >= i with the text at d + b; an RNA bulge at i
 *     (1 <= i, i + b <= L - 1) leaves d in [i, i + b) unpaired and pairs
 *     d >= i + b with the text at d - b. A site spans the PAM and L + b
 *     (DNA), L - b (RNA) or L text symbols, and is reported once, with its
 *     best alignment: no bulge before a bulge, the smaller bulge, fewer
 *     mismatches, the bulge nearest the PAM (smallest i); errors = its
 *     mismatches. The bulge's kind and size follow from the site's length
 *     (end - start against the pattern's length); sm_hit_site gives them
 *     with the alignment.
 *   - Order: sm_scan(), the stream functions and sm_runner deliver hits in
 *     increasing (start, end, pattern index, strand '+' before '-').
 *
 * Thread safety: no global mutable state. A database may be used by any
 * number of threads at once; a scratch, stream or runner by one at a time.
 */
#ifndef SEQMATCH_H
#define SEQMATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shared library exports exactly the functions declared here. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define SM_VERSION_MAJOR 0
#define SM_VERSION_MINOR 1
#define SM_VERSION_PATCH 0
#define SM_VERSION_STRING "0.1.0"

/* Version of the library actually linked (may differ from the header). */
const char *sm_version(void);

/* ---------------------------------------------------------------- errors */

typedef enum {
    SM_OK = 0,
    SM_ERR_NOMEM = 1,      /* allocation failed */
    SM_ERR_INVALID = 2,    /* bad argument or option combination */
    SM_ERR_PATTERN = 3,    /* a pattern is empty or has a symbol the alphabet forbids */
    SM_ERR_IO = 4,         /* reading or writing a file failed */
    SM_ERR_FORMAT = 5,     /* a saved database is corrupt, truncated or not a database */
    SM_ERR_VERSION = 6,    /* a saved database has another format version or byte order */
    SM_ERR_LIMIT = 7,      /* the database would exceed a size limit */
    SM_ERR_TERMINATED = 8, /* a callback asked the scan to stop (not a failure) */
    SM_ERR_DEVICE = 9      /* no usable GPU, or the GPU runtime failed */
} sm_status;

/* Detailed error: a status code and a one-line message. */
typedef struct {
    int code;
    char message[512];
} sm_error;

/* A static, human-readable name for a status code. */
const char *sm_strerror(int code);

/* ---------------------------------------------------------------- compile */

typedef enum { SM_ALPHABET_DNA = 0, SM_ALPHABET_TEXT = 1 } sm_alphabet;

typedef enum {
    SM_STRAND_BOTH = 0,    /* dna default */
    SM_STRAND_FORWARD = 1, /* '+' only */
    SM_STRAND_REVERSE = 2  /* '-' only */
} sm_strands;

typedef enum {
    SM_ENGINE_AUTO = 0,      /* the planner decides per pattern */
    SM_ENGINE_AUTOMATON = 1, /* exact: dictionary automaton (Aho-Corasick DFA) for every pattern */
    SM_ENGINE_SHIFTAND = 2,  /* exact: bit-parallel Shift-And for every pattern */
    SM_ENGINE_MISMATCH = 3,  /* k mismatches: bit-sliced mismatch counters */
    SM_ENGINE_MYERS = 4,     /* k edits: Myers bit-vectors (SIMD across patterns) */
    SM_ENGINE_WAVEFRONT = 5, /* k edits: anti-diagonal wavefront DP (the reference) */
    SM_ENGINE_KMER = 6,      /* exact: k-mer table (one length <= 32, at most 4 symbols) */
    SM_ENGINE_PIGEONHOLE = 7, /* k mismatches or edits: k + 1 exact pieces per pattern, then verification */
    SM_ENGINE_WUMANBER = 8,   /* exact: Wu-Manber block shifts (SHIFT/HASH/PREFIX), then verification;
                                 the planner picks it for long patterns whose mean shift is large */
    SM_ENGINE_GUIDE = 9       /* k mismatches with a PAM, and bulges: every PAM occurrence, exact
                                 pieces of the guides beside it, then verification */
} sm_engine;

/* The engines this library has, from its registry (src/engines/registry.c),
   in the order the command lists them: sm_engine_at(i) for i below
   sm_engine_count() (SM_ENGINE_AUTO past the end). An engine added later
   gets the next free id; ids and names never change. */
size_t sm_engine_count(void);
sm_engine sm_engine_at(size_t index);
/* The name --engine gives it ("auto", "automaton", ...); NULL for an id
   this library does not have. */
const char *sm_engine_name(sm_engine engine);
/* The engine of a name (or "auto"): SM_OK, or SM_ERR_INVALID. */
int sm_engine_from_name(const char *name, sm_engine *engine);
/* The kinds of matching it does: bit (1u << sm_match) each; 0 for AUTO or
   an unknown id. */
unsigned sm_engine_matches(sm_engine engine);
/* What else is true of it, SM_ENGINE_TRAIT_* bits. */
#define SM_ENGINE_TRAIT_NEEDS_PAM 1u /* compiles only with a PAM (sm_compile_options.pam) */
#define SM_ENGINE_TRAIT_BULGES 2u    /* finds sites with bulges (dna_bulges, rna_bulges) */
#define SM_ENGINE_TRAIT_LIMITED 4u   /* forced, it refuses some valid pattern sets (its own limits on
                                        lengths, symbols or expansions); the others take any set of
                                        their kind of matching */
unsigned sm_engine_traits(sm_engine engine);

/* Which side of the guide the PAM sits on (sm_compile_options.pam_side). */
typedef enum {
    SM_PAM_3PRIME = 0,       /* Cas9: guide + PAM (NGG) */
    SM_PAM_5PRIME = 1        /* Cas12a: PAM + guide (TTTV) */
} sm_pam_side;

typedef enum {
    SM_MATCH_EXACT = 0,
    SM_MATCH_MISMATCHES = 1, /* Hamming distance <= max_errors */
    SM_MATCH_EDITS = 2       /* Levenshtein distance <= max_errors */
} sm_match;

typedef enum {
    SM_REPORT_BEST = 0,      /* k edits: one hit per run of ends (default) */
    SM_REPORT_ENDS = 1       /* k edits: every end j with D(j) <= k */
} sm_report;

#define SM_FLAG_IGNORE_CASE 1u /* text alphabet: ASCII letters match either case */
#define SM_FLAG_TEXT_IUPAC 2u  /* dna alphabet: IUPAC codes in the text match by set intersection */

/* Where scans run (sm_runner_options.backend), and which backend a
   database's engines are chosen for (sm_compile_options.backend). */
typedef enum {
    SM_BACKEND_CPU = 0,   /* threads of this machine (default) */
    SM_BACKEND_CUDA = 1   /* every visible NVIDIA GPU; exact databases (every
                             exact engine has a GPU kernel) */
} sm_backend;

/* The longest bulge of either kind (sm_compile_options.dna_bulges). */
#define SM_MAX_BULGE 8u

typedef struct {
    sm_alphabet alphabet;
    sm_strands strands;      /* ignored for SM_ALPHABET_TEXT (always forward) */
    unsigned flags;          /* SM_FLAG_* */
    sm_engine engine;
    unsigned build_threads;  /* automaton builder: 0 = serial BFS, N >= 1 = level-synchronous with N threads */
    uint32_t max_expansion;  /* IUPAC patterns expanding to more concrete strings go to Shift-And (0 = 256) */
    uint64_t max_memory;     /* refuse to build a database larger than this many bytes (0 = no limit) */
    sm_match match;          /* exact (default), mismatches or edits */
    uint32_t max_errors;     /* k for mismatches and edits; 0 means exact */
    sm_report report;        /* edits only */
    /* dna only: a PAM (IUPAC letters, NUL-terminated) appended to the 3' end
       of every pattern, which must match exactly: errors are counted in the
       pattern (the guide) only (the semantics above). NULL = none. */
    const char *pam;
    sm_pam_side pam_side;    /* where the PAM sits (default 3') */
    /* k mismatches with a PAM: the longest DNA and RNA bulge a site may
       have (at most SM_MAX_BULGE each; 0: none); one bulge per site (the
       semantics above). max_errors 0 with a bulge allowed is a search
       with bulges and no mismatch. */
    uint32_t dna_bulges, rna_bulges;
    /* The backend the planner chooses the exact engines for (engine auto):
       SM_BACKEND_CUDA follows the GPU kernels' measured rates
       (docs/architecture.md, "The planner on the GPU"). Any database runs
       on either backend; this only picks the faster engines. */
    sm_backend backend;
    /* The inputs' records, for the approximate planner's cost model: about
       this many bytes each (0: long, as genomes are). Records too short to
       cut into SIMD lanes (reads, text lines) make the direct engines of one
       or a few patterns slower (docs/architecture.md, "Choosing an
       approximate engine"). */
    uint32_t typical_record;
    /* k mismatches or k edits: NULL, or one flag per pattern (the n given
       to sm_compile); a pattern whose flag is nonzero is found exactly
       (errors 0, every occurrence), the others with up to max_errors
       mismatches or edits, as a primer panel whose short barcodes must
       match exactly. The database then holds exact sections beside the
       approximate ones and every backend runs them all. Refused with a
       PAM. */
    const unsigned char *exact;
} sm_compile_options;

/* Fills *opts with the defaults: dna, both strands, auto engine, serial build. */
void sm_compile_options_init(sm_compile_options *opts);

/* One pattern. name is NUL-terminated (may be NULL: the sequence is the name);
   seq has len bytes and need not be NUL-terminated. */
typedef struct {
    const char *name;
    const char *seq;
    size_t len;
} sm_pattern;

typedef struct sm_db sm_db;

/* Compiles n patterns into a new database. On failure returns a status,
   leaves *db NULL and, when err is not NULL, fills it (naming the pattern). */
int sm_compile(const sm_pattern *patterns, size_t n, const sm_compile_options *opts,
               sm_db **db, sm_error *err);

void sm_db_free(sm_db *db);

/* ------------------------------------------------------- database access */

typedef struct {
    sm_alphabet alphabet;
    sm_strands strands;
    unsigned flags;
    uint32_t pattern_count;
    uint32_t min_length, max_length; /* pattern lengths in symbols */
    uint64_t size;                   /* bytes of the serialized database */
    sm_match match;
    uint32_t max_errors;
    sm_report report;
    uint32_t approx_patterns;        /* patterns scanned by an engine that does not do exact matching */
    sm_engine approx_engine;         /* the first such section's engine, else AUTO */
    uint32_t section_count;          /* engine sections in the database (sm_db_section_*) */
    uint32_t pam_length;             /* symbols of each pattern that must match exactly at its PAM end */
    sm_pam_side pam_side;            /* that end */
    uint32_t dna_bulges, rna_bulges; /* the longest bulges a site may have */
} sm_db_info;

void sm_db_get_info(const sm_db *db, sm_db_info *info);
/* The engine of section index (< section_count) as --engine names it
   ("automaton", "kmer", ...), with the patterns it scans and its bytes;
   NULL for an index out of range. */
const char *sm_db_section_name(const sm_db *db, uint32_t index, uint32_t *patterns, uint64_t *bytes);
/* The engine of section index; SM_ENGINE_AUTO for an index out of range. */
sm_engine sm_db_section_engine(const sm_db *db, uint32_t index);
/* Whether section index is one DFA (the automaton: a state per trie node,
   a column per symbol class), with its states and columns; 0 otherwise. */
int sm_db_section_dfa(const sm_db *db, uint32_t index, uint32_t *states, uint32_t *columns);
/* How many patterns the sections of an engine scan (0 when it has none). */
uint32_t sm_db_engine_patterns(const sm_db *db, sm_engine engine);
/* What the CUDA backend runs for section index (< section_count): its
   kernel and where its tables sit on a Hopper GPU, written to buf (size
   bytes); NULL for a section the GPU cannot scan (buf then says why, or is
   empty) or an index out of range. */
const char *sm_db_section_gpu(const sm_db *db, uint32_t index, char *buf, size_t size);
const char *sm_db_pattern_name(const sm_db *db, uint32_t index);
/* The pattern as given (dna: upper case, U as T), with its PAM when the
   database has one (the whole site); length in *len. */
const char *sm_db_pattern_seq(const sm_db *db, uint32_t index, size_t *len);

/* The database as bytes (the same bytes sm_db_save writes). Valid while db lives. */
const void *sm_db_bytes(const sm_db *db, size_t *size);
/* Builds a database from bytes (copied); checks magic, version, byte order,
   checksum and every table bound. */
int sm_db_from_bytes(const void *bytes, size_t size, sm_db **db, sm_error *err);
/* Saves the database to path. A regular file is written beside it and
   renamed over it, so a failed save leaves an earlier file as it was; a
   device or FIFO is written in place and never removed. */
int sm_db_save(const sm_db *db, const char *path, sm_error *err);
/* Loads a saved database. The 256-byte header is read and checked first (the
   wrong file is refused without reading on); a regular file is then mapped
   read-only rather than copied (sm_db_free unmaps it), a pipe read up to the
   size the header gives. Checks as sm_db_from_bytes; messages name path. */
int sm_db_load(const char *path, sm_db **db, sm_error *err);

/* ------------------------------------------------- approximate planning */

/* What the planner estimates for one approximate engine: the scan's time
   per text byte on one thread of the CPU it runs on, from a cost model
   fitted to benchmark runs (docs/architecture.md, "Choosing an approximate
   engine"). */
typedef struct {
    int usable;          /* 0: the engine cannot take these patterns */
    double ns_per_byte;  /* the estimate */
    double terms[8];     /* the model's inputs, as the documentation lists them */
    char basis[120];     /* what the estimate counts, in words */
} sm_engine_estimate;

typedef struct {
    sm_engine choice;    /* what --engine auto takes (never the wavefront DP) */
    sm_engine_estimate mismatch, myers, wavefront, pigeonhole;
} sm_approx_estimates;

/* The estimates for the patterns of a k-mismatch or k-edit database (its
   k, strands, alphabet and flags; whichever engine it holds), for records
   of about typical_record bytes (0: long; see sm_compile_options). Returns
   SM_OK, or SM_ERR_INVALID for exact matching; SM_ERR_NOMEM. */
int sm_db_approx_estimates(const sm_db *db, uint32_t typical_record, sm_approx_estimates *est);

/* -------------------------------------------------------------------- hits */

typedef struct {
    uint64_t record;    /* record number (sm_runner); 0 for sm_scan and streams */
    uint64_t start;     /* 0-based, inclusive */
    uint64_t end;       /* exclusive */
    uint32_t pattern;   /* index of the pattern in the compiled set */
    char strand;        /* '+' or '-' */
    uint32_t errors;    /* 0 for exact matching */
    const char *text;   /* the matched bytes (end - start of them), or NULL in streams */
} sm_hit;

/* Return 0 to continue, non-zero to stop the scan (it then returns SM_ERR_TERMINATED). */
typedef int (*sm_hit_fn)(const sm_hit *hit, void *ctx);

/* The alignment of a hit of db (hit->text needed) as a CIGAR string of SAM's
   operations: '=' a pattern symbol that matches its text symbol (by the
   database's rules: IUPAC sets, --text-iupac, case), 'X' one that does not,
   'I' a pattern symbol with no text symbol, 'D' a text symbol with no
   pattern symbol. It reads the pattern 5' to 3' as compiled (its PAM
   included): for a '+' hit against the text, for a '-' hit against the
   reverse complement of the text (so a '-' CIGAR read backwards is SAM's,
   which follows the reference). The counts hold: = + X + I is the pattern's
   length, = + X + D is end - start, X + I + D is hit->errors; exact and
   k-mismatch hits have only '=' and 'X'; of the alignments with that many
   errors, the one with its gaps furthest left. Writes the NUL-terminated
   string to buf (cap bytes) and its length (without the NUL) to *len (may be
   NULL). Returns SM_OK; SM_ERR_LIMIT when cap is too small (*len then says
   how long it is); SM_ERR_INVALID for a hit db cannot have given (no text,
   a pattern index out of range, no alignment with hit->errors errors);
   SM_ERR_NOMEM. Costs O(m) for exact and mismatch hits, O(m * errors)
   for edit hits. */
int sm_hit_cigar(const sm_db *db, const sm_hit *hit, char *buf, size_t cap, size_t *len);

/* The alignment of a site of a database with a PAM, exact or with k
   mismatches (sm_compile_options.pam; bulges or not): the best one, as the
   semantics above choose it. */
typedef enum { SM_BULGE_NONE = 0, SM_BULGE_DNA = 1, SM_BULGE_RNA = 2 } sm_bulge;
typedef struct {
    sm_bulge bulge;          /* its kind */
    uint32_t bulge_size;     /* 0 without a bulge */
    uint32_t bulge_at;       /* guide symbols between the bulge and the PAM */
    uint32_t mismatches;     /* = hit->errors */
} sm_site;

/* The alignment of hit (hit->text needed), a site of db, into *site, and
   when guide and dna are not NULL the two rows as off-target tools print
   them, 5' to 3' on the site's strand (for '-' the reverse complement of
   the text), PAM included, each NUL-terminated in cap bytes: guide, the
   pattern with '-' at the text bases of a DNA bulge; dna, the text with
   its mismatched bases in lower case (the others in upper case) and '-'
   at the guide symbols of an RNA bulge. Both rows have the same length,
   at most pattern length + SM_MAX_BULGE. Returns SM_OK; SM_ERR_LIMIT when
   cap is too small; SM_ERR_INVALID for a database without a PAM or with
   k edits, or a hit it cannot have given. */
int sm_hit_site(const sm_db *db, const sm_hit *hit, sm_site *site, char *guide, char *dna, size_t cap);

/* ------------------------------------------------------------ block scan */

typedef struct sm_scratch sm_scratch;

/* Per-thread working memory for db (or any database with the same engines). */
int sm_scratch_alloc(const sm_db *db, sm_scratch **scratch);
void sm_scratch_free(sm_scratch *scratch);

/* Scans one whole sequence. Returns SM_OK, SM_ERR_TERMINATED or SM_ERR_NOMEM. */
int sm_scan(const sm_db *db, sm_scratch *scratch, const void *data, size_t len,
            sm_hit_fn on_hit, void *ctx);

/* Counts the hits of one sequence per pattern: counts[i] += hits of pattern i
   (both strands). counts has sm_db_info.pattern_count entries. */
int sm_count(const sm_db *db, sm_scratch *scratch, const void *data, size_t len,
             uint64_t *counts);

/* ------------------------------------------------------------ streaming */

/* A stream scans one sequence fed in pieces of any size; the hits are the same
   as one sm_scan of the concatenation, in the same order. Hits are delivered
   as soon as they are final, so some come during a later feed or at the end. */
typedef struct sm_stream sm_stream;

int sm_stream_open(const sm_db *db, sm_stream **stream);
int sm_stream_feed(sm_stream *stream, const void *data, size_t len, sm_hit_fn on_hit, void *ctx);
/* Ends the sequence: delivers the remaining hits and resets the stream for the next sequence. */
int sm_stream_end(sm_stream *stream, sm_hit_fn on_hit, void *ctx);
void sm_stream_free(sm_stream *stream);

/* ------------------------------------------------- multi-threaded runner */

/* The CPU backend: scans a series of records on several threads. Long records
   are cut into chunks overlapping by (longest pattern - 1), each hit counted
   once; many short records are spread over the threads. Hits arrive on the
   calling thread in (record, start, end, pattern, strand) order, whatever the
   thread count or chunk size. Memory is bounded by two batch buffers of
   threads x 4 chunks each (one with one thread: the caller fills one while
   the workers scan the other) plus the hits of those two batches, bounded
   per work item whatever the hit density (none with count_only or
   on_record_summary: see there), whatever the record size. With several threads a stop asked by the callback, and
   the counts, show one batch later than the bytes fed. */
typedef struct sm_runner sm_runner;

/* A record's hits in summary (sm_runner_options.on_record_summary): how
   many, and each pattern that has one with the least errors of its hits
   (patterns ascending; strands together). */
typedef struct {
    uint32_t pattern;
    uint32_t errors;
} sm_pattern_errors;

typedef struct {
    uint64_t record;
    uint64_t hits;
    const sm_pattern_errors *patterns; /* valid during the call */
    size_t npatterns;
} sm_record_summary;

#define SM_OVERLAP_FREE_SPECULATE 1
#define SM_OVERLAP_FREE_PREFIX 2

/* Where a runner's hits must lie in their record (sm_runner_options.anchor). */
typedef enum {
    SM_ANCHOR_NONE = 0,  /* anywhere (default) */
    SM_ANCHOR_START = 1, /* at the record's start: a barcode or primer that begins a read */
    SM_ANCHOR_END = 2    /* at the record's end */
} sm_anchor;

typedef struct {
    unsigned threads;     /* 0 = all online cores (CPU backend) */
    size_t chunk_size;    /* bytes per work item (0 = 1 MiB; counting, 4 bytes per
                             pattern when more, up to 8 MiB); CUDA: bytes per
                             batch (0 = 64 MiB); mainly for tests */
    int count_only;       /* count hits per pattern; on_hit is not called */
    /* Exact automaton-only databases: scan chunks with no overlap. With
       SM_OVERLAP_FREE_PREFIX each chunk starts from its true automaton state,
       found first by simulating every chunk from all states and composing the
       state maps with a parallel prefix scan (two passes). With
       SM_OVERLAP_FREE_SPECULATE (or any other non-zero value) every chunk is
       scanned from the root at once, and afterwards only its first symbols
       are scanned again from the true state, until both runs meet. Same
       hits in every mode. sm_runner_create refuses it (SM_ERR_INVALID) for
       other databases and on the CUDA backend. */
    int overlap_free;
    sm_hit_fn on_hit;
    void *ctx;
    /* Called (on the calling thread) once every hit of a record has been
       delivered; may be NULL. */
    void (*on_record_done)(uint64_t record, void *ctx);
    /* SM_BACKEND_CUDA: batches of records go to the GPUs in turn (two pinned
       buffers per GPU: one filled while the other is scanned); the same hits,
       order, counts and callbacks as the CPU backend. threads is ignored;
       overlap_free is refused. sm_runner_create fails with SM_ERR_DEVICE
       when no GPU can be used and SM_ERR_INVALID for other databases. */
    sm_backend backend;
    /* SM_BACKEND_CUDA: 0 = every visible GPU; d + 1 = GPU d only (one MPI
       rank per GPU). */
    int gpu_device;
    /* Tests and benchmarks: the engines' scan loops to use (NULL: the best
       the CPU runs). */
    const struct sm_variant *variant;
    /* Circular records (plasmids, bacterial chromosomes): a record of n bytes
       is a circle, searched as the text of its bytes read round and round
       for n + w bytes, w = longest pattern - 1 + k (k for edits, else 0),
       and the hits that start in it (start < n) are reported: the linear
       ones and those that run over its end, whose end is then past n (end =
       start + the hit's length; a hit may wrap any number of turns round a
       record shorter than it, e.g. CAC at [1, 4) in the record AC). Exact,
       mismatches and edits, every backend; refused with overlap_free. */
    int circular;
    /* Only the hits anchored at each record's start or end. Exact and
       k-mismatch hits: those that start at 0 (SM_ANCHOR_START) or end at
       the record's length n (SM_ANCHOR_END). k edits, at the start: with
       A(j) = edit(pattern, record[0, j)), the hits [0, j) with errors A(j)
       for every j >= 1 with A(j) <= k (SM_REPORT_ENDS), or for the j of
       least A in each run of consecutive such j, leftmost on ties
       (SM_REPORT_BEST); at the end, in either mode, one hit [s, n) whose
       errors are the least edit(pattern, record[s, n)) over s (that is
       D(n)), s the largest that reaches it. A '-' hit is one of the
       pattern's reverse complement, in forward coordinates, as always.
       Only the first (or last) longest pattern + k bytes of each record are
       scanned, so an anchored search costs little more than reading.
       Counts count the anchored hits. Refused (SM_ERR_INVALID) for a
       database with a PAM and k edits, and with circular. */
    sm_anchor anchor;
    /* Per-record summaries instead of hits (filters, per-record tables): when
       set, on_hit is not called and this is, on the calling thread, once for
       every record (with or without hits), before its on_record_done; the
       same hits summed as on_hit would have seen, so counts and anchors are
       unchanged. Returning non-zero stops the run (SM_ERR_TERMINATED). The
       CPU backend then keeps no hit list: each thread sums a segment's hits
       as it scans (in pieces of a bounded number of hits) and delivery gets
       the sums and the runs of edit ends cut at segment borders; the GPU
       backend and overlap-free runners sum on delivery. Counting runners
       (count_only) sum in the threads the same way. */
    int (*on_record_summary)(const sm_record_summary *summary, void *ctx);
} sm_runner_options;

void sm_runner_options_init(sm_runner_options *opts);
int sm_runner_create(const sm_db *db, const sm_runner_options *opts, sm_runner **runner,
                     sm_error *err);
/* Starts a record; returns its number (0, 1, 2, ... in order of calls). */
uint64_t sm_runner_begin_record(sm_runner *runner);
/* Appends sequence bytes to the current record. May run a batch and call callbacks. */
int sm_runner_feed(sm_runner *runner, const void *data, size_t len);
/* Feeding without a copy: *dst points where up to *avail bytes (at most
   want, at least 1) of the current record may be written, with 64 more
   writable bytes after them for writers that store whole vectors; then
   sm_runner_feed_commit says how many were. May run a batch and call
   callbacks, as sm_runner_feed does. */
int sm_runner_feed_buffer(sm_runner *runner, size_t want, void **dst, size_t *avail);
int sm_runner_feed_commit(sm_runner *runner, size_t len);
/* Many whole records written in place at once (a reader that strips them
   on the runner's threads): ends any open record; *dst points where up to
   *avail bytes may be written, holding at most *max_records records, the
   first to be numbered *first. With need > *avail, a batch holding records
   leaves first (need SIZE_MAX: the buffer also grows). Then
   sm_runner_records_commit takes n records (in all at most *max_records),
   record i's sequence at *dst + offs[i], lens[i] bytes (offsets increasing,
   records apart; the bytes between them are never read): it runs no batch
   and calls no callback, so that the caller may name them, a commit at a
   time, before any of their hits is delivered. SM_ERR_INVALID for anchored
   and circular runners (feed those a record at a time). */
int sm_runner_records_buffer(sm_runner *runner, size_t need, void **dst, size_t *avail, size_t *max_records,
                             uint64_t *first);
int sm_runner_records_commit(sm_runner *runner, size_t n, const size_t *offs, const size_t *lens);
/* Runs job(arg, i) for every i in [0, n) on the runner's host threads (its
   one thread team: the CPU backend scans on it, every backend turns raw
   results into hits on it) and the caller's, before any scan work they have
   left, and returns when all have run. A feeder that prepares text on
   several threads (stripping line breaks, decompressing) shares the
   runner's threads this way instead of starting as many again. Jobs must
   not call the runner. */
int sm_runner_parallel_for(sm_runner *runner, size_t n, void (*job)(void *arg, size_t i), void *arg);
/* The runner's host threads (sm_runner_options.threads, or every core). */
unsigned sm_runner_scan_threads(const sm_runner *runner);
int sm_runner_end_record(sm_runner *runner);
/* Scans everything pending and delivers all its hits and record-done calls. */
int sm_runner_flush(sm_runner *runner);
/* Per-pattern hit counts so far (pattern_count entries), and their sum. */
const uint64_t *sm_runner_counts(const sm_runner *runner);
uint64_t sm_runner_total(const sm_runner *runner);
void sm_runner_free(sm_runner *runner);

/* GPUs the CUDA backend can use: 0 when the library was built without CUDA
   or no device is visible. */
int sm_cuda_device_count(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

/* DFA membership tests (seqmatch dfa). */
#include "seqmatch_dfa.h"

#endif /* SEQMATCH_H */
