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
 *
 * Headers (as Hyperscan's hs.h): seqmatch_common.h (version, errors, the
 * kinds of matching and engines, the database and its queries),
 * seqmatch_compile.h (patterns into a database), seqmatch_runtime.h
 * (scratch, scans, streams, the runner); this header includes the three.
 * The reader (seqmatch_reader.h) and gzip members (seqmatch_gzip.h) have
 * headers of their own; the DFA membership test (seqmatch_dfa.h) and the
 * distributed search (seqmatch_dist.h) are experimental as a whole.
 *
 * Stability (docs/api.md): what these headers declare without
 * SEQMATCH_EXPERIMENTAL is stable: within one major version (the SONAME,
 * libseqmatch.so.MAJOR) a function is never removed or changed, an enum
 * value or parameter number keeps its meaning, and the structs shown
 * (sm_error, sm_pattern, sm_hit, sm_site, sm_pattern_errors,
 * sm_record_summary) keep their layout; options are set through numbered
 * parameters of opaque handles. Defining SEQMATCH_EXPERIMENTAL before
 * including a seqmatch header also declares the experimental part: the
 * option and info structs (sm_compile_options, sm_runner_options,
 * sm_db_info, the reader's option structs, ...), the calls that take
 * them, the DFA and distributed-search headers. Their layouts may change
 * in any minor version: a program using them must be built against the
 * headers of the library it runs with (link statically, or check
 * sm_version()), as zstd's ZSTD_STATIC_LINKING_ONLY.
 */
#ifndef SEQMATCH_H
#define SEQMATCH_H

#include "seqmatch_common.h"
#include "seqmatch_compile.h"
#include "seqmatch_runtime.h"

#ifdef SEQMATCH_EXPERIMENTAL
/* DFA membership tests (seqmatch dfa). */
#include "seqmatch_dfa.h"
#endif

#endif /* SEQMATCH_H */
