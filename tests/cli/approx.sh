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
check_output_text "dna bed forward" "chr${T}4${T}12${T}ACGATAGC${T}1${T}+
"
# ACGTAGC (7 nt) against ACGTTAGC: one inserted T.
run search -e ACGTAGC -k 1 --strand + --no-header "$TMP/dna.fa"
check_output_text "dna edit" "chr${T}ACGTAGC${T}+${T}4${T}12${T}1${T}ACGTTAGC
"
run search -e ACGATAGC -m 0 --strand + "$TMP/dna.fa"
check_status "k=0 is exact: no hit" 1

# Usage errors.
run search -e ACGT -m 1 -k 1 "$TMP/dna.fa"
check_status "mismatches with edits" 2
run search -e ACGT -m 1 --engine myers "$TMP/dna.fa"
check_status "engine that does not fit" 2
run search -e ACGT -k x "$TMP/dna.fa"
check_status "bad count" 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
