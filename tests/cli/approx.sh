#!/usr/bin/env bash
# Approximate search from the command line: --mismatches, --edits, --report,
# engines, strands and counts, on tiny inputs whose hits are worked out by hand.
source "$(dirname "$0")/testlib.bash"

# Seed 001's example: pattern cacd in the text bcbacddc (no final newline).
printf 'bcbacddc' >"$TMP/seed.txt"
T=$'\t'
run search --alphabet text -e cacd --edits 2 --report ends --no-header "$TMP/seed.txt"
check_output_text "edits ends" "$TMP/seed.txt${T}cacd${T}+${T}3${T}5${T}2${T}ac
$TMP/seed.txt${T}cacd${T}+${T}3${T}6${T}1${T}acd
$TMP/seed.txt${T}cacd${T}+${T}4${T}7${T}2${T}cdd
"
check_status "edits ends status" 0
run search --alphabet text -e cacd --edits 2 --no-header "$TMP/seed.txt"
check_output_text "edits best" "$TMP/seed.txt${T}cacd${T}+${T}3${T}6${T}1${T}acd
"
for engine in myers wavefront; do
    run search --alphabet text -e cacd -k 2 --report ends --engine $engine --format count "$TMP/seed.txt"
    check_output_text "edits count $engine" "cacd${T}3
total${T}3
"
done
run search --alphabet text -e cacd --mismatches 1 --no-header "$TMP/seed.txt"
check_output_text "mismatches" "$TMP/seed.txt${T}cacd${T}+${T}2${T}6${T}1${T}bacd
"

# DNA: a primer with one substitution on the forward strand and its reverse
# complement, exact copy, on the reverse strand.
printf '>chr\nTTTTACGTTAGCTTTTTTTTTGCTAACGTTTTT\n' >"$TMP/dna.fa"
run search -e ACGATAGC -m 1 --no-header "$TMP/dna.fa"
check_output_text "dna mismatches both strands" "chr${T}ACGATAGC${T}+${T}4${T}12${T}1${T}ACGTTAGC
chr${T}ACGATAGC${T}-${T}21${T}29${T}1${T}GCTAACGT
"
run search -e ACGATAGC -m 1 --strand + --format bed "$TMP/dna.fa"
# BED's score: higher for fewer errors, 1000 x (8 - 1) / 8 for one mismatch in 8
check_output_text "dna bed forward" "chr${T}4${T}12${T}ACGATAGC${T}875${T}+
"
# ACGTAGC (7 nt) against ACGTTAGC: one inserted T.
run search -e ACGTAGC -k 1 --strand + --no-header "$TMP/dna.fa"
check_output_text "dna edit" "chr${T}ACGTAGC${T}+${T}4${T}12${T}1${T}ACGTTAGC
"
# an exact hit scores 1000, above it (the 8 bases of the edit hit, one error: 875)
run search -e ACGTAGC -e TTTTACGTT -k 1 --strand + --format bed "$TMP/dna.fa"
check_output_text "dna edit, bed scores" "chr${T}0${T}9${T}TTTTACGTT${T}1000${T}+
chr${T}4${T}12${T}ACGTAGC${T}875${T}+
"
run search -e ACGATAGC -m 0 --strand + "$TMP/dna.fa"
check_status "k=0 is exact: no hit" 1

# --pam: a guide whose NGG PAM must match exactly; errors only in the guide.
# g: the site at 4 (exact, PAM AGG), the guide with a broken PAM AGT at 21,
# one guide mismatch with PAM CGG at 38, and the reverse complement of the
# guide + TGG at 55.
printf '>g\nTTTTACGTACGTACAGGTTTTACGTACGTACAGTTTTTACGAACGTACCGGTTTTCCAGTACGTACGTTTTT\n' >"$TMP/pam.fa"
pam_m1="g${T}ACGTACGTAC${T}+${T}4${T}17${T}0${T}ACGTACGTACAGG
g${T}ACGTACGTAC${T}+${T}38${T}51${T}1${T}ACGAACGTACCGG
g${T}ACGTACGTAC${T}-${T}55${T}68${T}0${T}CCAGTACGTACGT
"
for engine in auto mismatch pigeonhole; do
    run search -e ACGTACGTAC --pam NGG -m 1 --engine $engine --no-header "$TMP/pam.fa"
    check_output_text "--pam -m 1 ($engine)" "$pam_m1"
done
# The PAM written into the pattern takes a mismatch like any other symbol.
run search -e ACGTACGTACNGG -m 1 --no-header "$TMP/pam.fa"
check_output_text "PAM in the pattern, -m 1" "g${T}ACGTACGTACNGG${T}+${T}4${T}17${T}0${T}ACGTACGTACAGG
g${T}ACGTACGTACNGG${T}+${T}21${T}34${T}1${T}ACGTACGTACAGT
g${T}ACGTACGTACNGG${T}+${T}38${T}51${T}1${T}ACGAACGTACCGG
g${T}ACGTACGTACNGG${T}-${T}55${T}68${T}0${T}CCAGTACGTACGT
"
run search -e ACGTACGTAC --pam NGG -m 1 --format count "$TMP/pam.fa"
check_output_text "--pam -m 1 count" "ACGTACGTAC${T}3
total${T}3
"
# Edits: on '-' the PAM (CCA) is fixed at 55 and the guide may end at 67,
# 68 or 69 (a deletion, exact, an insertion); --report best keeps 68.
for engine in auto myers wavefront pigeonhole; do
    run search -e ACGTACGTAC --pam NGG -k 1 --report ends --engine $engine --no-header "$TMP/pam.fa"
    check_output_text "--pam -k 1 --report ends ($engine)" "g${T}ACGTACGTAC${T}+${T}4${T}17${T}0${T}ACGTACGTACAGG
g${T}ACGTACGTAC${T}+${T}38${T}51${T}1${T}ACGAACGTACCGG
g${T}ACGTACGTAC${T}-${T}55${T}67${T}1${T}CCAGTACGTACG
g${T}ACGTACGTAC${T}-${T}55${T}68${T}0${T}CCAGTACGTACGT
g${T}ACGTACGTAC${T}-${T}55${T}69${T}1${T}CCAGTACGTACGTT
"
    run search -e ACGTACGTAC --pam NGG -k 1 --engine $engine --no-header "$TMP/pam.fa"
    check_output_text "--pam -k 1 --report best ($engine)" "$pam_m1"
done
run search -e ACGTACGTAC --pam NGG -k 1 --report ends --format count -t 2 --chunk-size 7 "$TMP/pam.fa"
check_output_text "--pam -k 1 ends count" "ACGTACGTAC${T}5
total${T}5
"
run search -e ACGTACGTAC --pam ngg --no-header "$TMP/pam.fa"
check_output_text "--pam exact" "g${T}ACGTACGTAC${T}+${T}4${T}17${T}0${T}ACGTACGTACAGG
g${T}ACGTACGTAC${T}-${T}55${T}68${T}0${T}CCAGTACGTACGT
"
# A pattern file: the PAM goes after every pattern, names stay.
printf '>site\nACGTACGTAC\n>other\nGGGGGGGGGG\n' >"$TMP/guides.fa"
run search -p "$TMP/guides.fa" --pam NGG -m 1 --format count "$TMP/pam.fa"
check_output_text "--pam with a pattern file" "site${T}3
other${T}0
total${T}3
"
# Saved with the database; refused next to -d; shown by --explain.
run compile -e ACGTACGTAC --pam NGG -m 1 -o "$TMP/pam.smdb"
run search -d "$TMP/pam.smdb" --no-header "$TMP/pam.fa"
check_output_text "--pam kept in the database" "$pam_m1"
run search -d "$TMP/pam.smdb" --pam NGG "$TMP/pam.fa"
check_status "--pam with -d" 2
check_stderr "--pam with -d (message)" "--pam cannot be used with -d"
run compile -e ACGTACGTAC --pam NRG -m 1 --explain
grep -q "^pam              NRG " "$TMP/out" && pass || fail "--explain names the PAM"
# A database whose PAM would leave a pattern without a guide, or a PAM on
# text, is refused: test_differential's format cases (the header is under
# the checksum, so the file cannot be patched here).
# Bad PAMs.
run search -e ACGT --pam NXG "$TMP/pam.fa"
check_status "bad PAM letter" 2
check_stderr "bad PAM letter (message)" "PAM 'NXG': 'X' at position 2 is not a DNA or IUPAC symbol"
run search -e ACGT --pam '' "$TMP/pam.fa"
check_stderr "empty PAM" "--pam: empty PAM"
run search -e ACGT --pam NGG --pam NAG "$TMP/pam.fa"
check_stderr "two PAMs" "--pam: only one PAM can be given"
run search --alphabet text -e ACGT --pam NGG "$TMP/pam.fa"
check_stderr "PAM on text" "--pam is for --alphabet dna"
# -m 0 and -k 0 are exact searches: every occurrence, overlapping ones too
# (AA four times in AAAAA), and --help says so.
printf '>r\nAAAAACGT\n' >"$TMP/aa.fa"
run search -e AA --no-header "$TMP/aa.fa"
cp "$TMP/out" "$TMP/exact.out"
for e in "-m 0" "-k 0" "-k 0 --report ends"; do
    # shellcheck disable=SC2086
    run search $e -e AA --no-header "$TMP/aa.fa"
    if cmp -s "$TMP/out" "$TMP/exact.out" && [ "$(wc -l <"$TMP/out")" -eq 4 ]; then pass; else fail "$e: not the exact hits"; fi
done
run search --help
grep -qF -- "-m 0 and -k 0 are exact searches" "$TMP/out" && pass || fail "--help: -m 0 and -k 0"
# --report chooses among k-edit ends: without -k it is refused, not ignored.
run search --report ends -e ACGT "$TMP/pam.fa"
check_status "--report without -k (exit)" 2
check_stderr "--report without -k" "--report is for -k/--edits"
run compile --report best -m 1 -e ACGT -o "$TMP/r.smdb"
check_status "--report with -m (exit)" 2
check_stderr "--report with -m" "-m reports every window"
run search --report ends -k 1 -e ACGT --format count "$TMP/pam.fa"
if [ "$status" -le 1 ] && [ ! -s "$TMP/err" ]; then pass; else fail "--report with -k: exit $status"; fi

# The planner's estimates (--explain) and a forced engine far slower than the
# best one (a warning; the command still runs).
run compile -e GTGCCAGCAGCCGCGGTAAT -k 3 --explain
grep -q "^estimate         myers .* ns/byte" "$TMP/out" && grep -q "^estimate         pigeonhole .* ns/byte" "$TMP/out" &&
    grep -q "^estimate         wavefront " "$TMP/out" && grep -q "(chosen)" "$TMP/out" &&
    ! grep -q "^estimate         mismatch" "$TMP/out" && pass || fail "--explain prints the edit engines' estimates"
run compile -e GTGCCAGCAGCCGCGGTAAT -m 3 --explain
grep -q "^estimate         mismatch .* ns/byte" "$TMP/out" && ! grep -q "^estimate         myers" "$TMP/out" &&
    pass || fail "--explain prints the mismatch engines' estimates"
run compile -e ACGT --explain
grep -q "^estimate" "$TMP/out" && fail "no estimates for exact matching" || pass
# a 116-symbol pattern with 85 edits: the filter's 86 pieces are single bases
long=TTGACCATGGACCATGACTAGGATCCATTGACCAGTTAGCCATTAGGACCATGGATTACATTTGGACCAAGGTTACCAGTAGCTTGGACAGTCCAGATGACCATGGTTAGCAAGTC
run compile -e "$long" -k 85 --engine pigeonhole -o "$TMP/hopeless.smdb"
check_status "hopeless engine: still compiled" 0
check_stderr "hopeless engine: a warning" "warning: --engine pigeonhole is hopeless here"
run compile -e "$long" -k 85 --engine myers -o "$TMP/fine.smdb"
check_stderr_empty "no warning for the best engine"
run compile -e GTGCCAGCAGCCGCGGTAAT -k 2 --engine pigeonhole -o "$TMP/fine.smdb"
check_stderr_empty "no warning for an engine within reach"

# The planner peeks at the first target for FASTQ reads: never at a pipe,
# whose first byte would be lost.
run search -e ACGATAGC -m 1 --no-header <(printf '@r1\nTTTTACGTTAGCTTTT\n+\nIIIIIIIIIIIIIIII\n')
check_output_text "FASTQ through a pipe" "r1${T}ACGATAGC${T}+${T}4${T}12${T}1${T}ACGTTAGC
"
printf '@r1\nTTTTACGTTAGCTTTT\n+\nIIIIIIIIIIIIIIII\n' >"$TMP/reads.fq"
run search -e ACGATAGC -m 1 --no-header "$TMP/reads.fq"
check_output_text "FASTQ file" "r1${T}ACGATAGC${T}+${T}4${T}12${T}1${T}ACGTTAGC
"

# Usage errors.
run search -e ACGT -m 1 -k 1 "$TMP/dna.fa"
check_status "mismatches with edits" 2
run search -e ACGT -m 1 --engine myers "$TMP/dna.fa"
check_status "engine that does not fit" 2
run search -e ACGT -k x "$TMP/dna.fa"
check_status "bad count" 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
