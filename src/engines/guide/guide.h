/* The guide engine: CRISPR guides with an exact PAM, k mismatches and
 * bulges (include/seqmatch.h has the semantics; docs/architecture.md, "The
 * guide engine", the design and its measurements).
 *
 * Every site holds an exact PAM, so the scan looks only at the positions
 * where the PAM occurs (one in sixteen per strand for NGG), on each side a
 * guide can lie: guides to the PAM's left (a 3' PAM's '+' keys, a 5' PAM's
 * '-' keys) and to its right. Beside a PAM the guide is cut into P pieces
 * counted from the PAM; a site with at most k mismatches and one bulge
 * leaves at least one piece exact, either where it lies without a bulge
 * (shift 0) or moved by the bulge (the pieces beyond it): P = k + 1, one
 * more for a bulge, and for RNA bulges of b >= 2 symbols as many more as a
 * run of b deleted symbols can break. The first SM_GUIDE_SEED_MAX symbols
 * of each piece (its seed) index a table of the keys that have them there,
 * looked up at every shift a bulge can move it by; each key found is
 * verified once per PAM (by the first lookup that finds it): mismatch
 * masks of the guide against the text at each shift give every site of
 * the key at that PAM, with its best alignment (engines/guide/guide_core.h).
 *
 * Keys are grouped by side and guide length; each group has its pieces and
 * tables. A key whose seeds would expand to too many strings (IUPAC codes),
 * and every key when IUPAC text must match, is checked at every PAM of its
 * group instead.
 *
 *   sm_gd_header
 *   keys     sm_gd_key[nkeys]
 *   groups   sm_gd_group[ngroups]
 *   pieces   sm_gd_piece[npieces], each group's consecutive
 *   index    uint32[]: per piece 4^len + 1 starts into lists
 *   lists    uint32[nlists]: key indices (per piece and code, ascending),
 *            then each group's keys checked at every PAM
 */
#ifndef SM_GUIDE_H
#define SM_GUIDE_H

#include "base/cpu.h"
#include "base/internal.h"
#include "engines/guide/guide_core.h"

_Static_assert(SM_GUIDE_MAX_SHIFTS == 1u + 2u * SM_MAX_BULGE, "a shift per bulge");

/* Can the engine take keys of these guide lengths (q: PAM symbols)?
   Returns 0, or -1 with a reason in why (256 bytes). */
int sm_gd_supports(const sm_ac_key *keys, size_t nkeys, uint32_t q, char *why);

int sm_gd_build(const sm_ac_key *keys, size_t nkeys, unsigned flags, uint32_t k, uint32_t pam_length,
                sm_pam_side pam_side, uint32_t dna_bulges, uint32_t rna_bulges, uint64_t max_bytes, sm_buf *section,
                sm_error *err);
/* Checks a section against the database's settings (header). */
int sm_gd_validate(const uint8_t *section, size_t size, uint32_t n_outputs, const sm_db_header *db, sm_error *err);

/* Per text byte: the nucleotide set it matches with (0: none; IUPAC codes
   only with SM_FLAG_TEXT_IUPAC in flags) and its base code (4: no base). */
void sm_gd_text_tables(uint32_t flags, uint8_t text_set[256], uint8_t code_of[256]);

typedef struct sm_gd_state sm_gd_state;
sm_gd_state *sm_gd_state_new(const uint8_t *section);
void sm_gd_state_free(sm_gd_state *state);
int sm_gd_state_fits(const uint8_t *section, const sm_gd_state *state);
void sm_gd_state_reset(sm_gd_state *state);
/* Sites are reported once the text after their PAM has come; those that
   wait are reported by sm_gd_finish at the end of the sequence. */
void sm_gd_scan(const uint8_t *section, sm_gd_state *state, const uint8_t *text, size_t len, uint64_t pos0,
                sm_sink *sink);
void sm_gd_finish(const uint8_t *section, sm_gd_state *state, uint64_t end_pos, sm_sink *sink);

#endif /* SM_GUIDE_H */
