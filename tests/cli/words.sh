#!/usr/bin/env bash
# Clear words for nonsense: no output before a failure, and the messages
# that say what went wrong and what to do instead.
source "$(dirname "$0")/testlib.bash"
T=$'\t'

# A search that fails on its first record prints its message and nothing
# else: no tsv header on standard output.
printf '>a\nACGT\001ACGT\n' >"$TMP/bad.fa"
run search -e ACGT "$TMP/bad.fa"
check_status "failing target" 2
check_stdout_empty "no header before a failure"
check_stderr "failing target" "unexpected byte 0x01 in sequence"
# With no hit the header is still written (the search succeeded).
printf '>a\nTTTT\n' >"$TMP/none.fa"
run search -e ACGT "$TMP/none.fa"
check_status "no hit" 1
check_output_text "no hit: the header" "#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched
"
# A protein FASTA searched as DNA: a warning naming the file, the record and
# the letters, once per file; the search still runs (no hit: status 1).
printf '>sp|P69905|HBA_HUMAN Hemoglobin subunit alpha\nMVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHGKKVADALTNAVAHVDD\n>sp|x\nMPNALSALSDLHAHKLRVDPVNFKLLSHCLLVTLAAHLPAEFTPAVHASLDKFLASVSTVLTSKYR\n' >"$TMP/prot.fa"
run search -e GAATTC "$TMP/prot.fa"
check_status "protein target" 1
check_stderr "protein target" "warning: $TMP/prot.fa: record 'sp|P69905|HBA_HUMAN' looks like protein, not DNA"
if grep -qF -- "--alphabet text" "$TMP/err"; then pass; else fail "protein warning suggests --alphabet text"; fi
run search -e GAATTC "$TMP/prot.fa" "$TMP/prot.fa"
if [ "$(grep -c 'looks like protein' "$TMP/err")" -eq 2 ]; then pass; else fail "one protein warning per file"; fi
# DNA with IUPAC codes, N runs and lower case is not protein; text mode never warns.
printf '>d\nACGTNNNNNNNNNNRYSWKMBDHVacgtnacgtACGUUUACGTACGTACGTACGTACGTACGT\n' >"$TMP/dna.fa"
run search -e GAATTC "$TMP/dna.fa"
check_stderr_empty "IUPAC DNA: no warning"
run search --alphabet text -e HAHK "$TMP/prot.fa"
check_status "text mode on protein" 0
check_stderr_empty "text mode: no warning"

# -m or -k at least a pattern's length would make every window a hit: refused.
run search -e GAATTC -m 6 "$TMP/dna.fa"
check_status "-m = length" 2
check_stderr "-m = length" "pattern 'GAATTC' has 6 symbols, and -m 6 allows that many mismatches or more: every window of its length would be a hit; use -m 5 or less"
run search -e ACGTACGT -e GAA -k 3 "$TMP/dna.fa"
check_status "-k = length of one pattern" 2
check_stderr "-k = length of one pattern" "pattern 'GAA' has 3 symbols, and -k 3 allows that many edits or more"
run compile -e ACGT --edits 9 -o "$TMP/x.smdb"
check_status "compile -k > length" 2
if [ ! -e "$TMP/x.smdb" ]; then pass; else fail "compile -k > length wrote a database"; fi
run search -e ACGTAC --pam NGG -m 5 --no-header "$TMP/dna.fa"
check_status "-m below the guide's length with a PAM" 1
run search -e ACGTAC --pam NGG -m 6 "$TMP/dna.fa"
check_stderr "-m = the guide's length with a PAM" "errors count in the guide, not the PAM"
run search -e GAATTC -m 5 --format count "$TMP/dna.fa"
check_status "-m below the length" 0

# Arguments swapped (-p genome.fa reads.fa): a pattern over 1 Mbp is named
# with -p before it is compiled; the search still runs.
{ printf '>chrom\n'; head -c 1100000 /dev/zero | tr '\0' 'A'; printf '\n'; } >"$TMP/genome_as_patterns.fa"
run search -p "$TMP/genome_as_patterns.fa" --format count "$TMP/dna.fa"
check_status "a pattern over 1 Mbp: it runs" 1
check_stderr "a pattern over 1 Mbp" "warning: -p $TMP/genome_as_patterns.fa: pattern 'chrom' is 1.1 Mbp long; -p takes the patterns and the targets come last (seqmatch search -p PATTERNS TARGET): are the two swapped?"
printf "GAATTC\nGGATCC\n" >"$TMP/sites.txt"
run search -p "$TMP/sites.txt" "$TMP/dna.fa"
check_stderr_empty "short patterns: no warning"
# A pattern of N (and not more other bases than -m) matches every window.
run search -e NNNNNN "$TMP/dna.fa"
check_status "all-N pattern" 2
check_stderr "all-N pattern" "pattern 'NNNNNN' is all N, which matches every base: every window of its length would be a hit"

# A database given to -p: say to use -d, print no binary.
run compile -e GAATTC -o "$TMP/sites.smdb"
run search -p "$TMP/sites.smdb" "$TMP/dna.fa"
check_status "-p DB" 2
check_stderr "-p DB" "$TMP/sites.smdb is a pattern database (made by seqmatch compile), not a pattern file: search it with -d $TMP/sites.smdb"
if LC_ALL=C grep -q '[^[:print:][:space:]]' "$TMP/err"; then fail "-p DB: binary in the message"; else pass; fi

# No target on a terminal: say that standard input is read. Not on a pipe.
if command -v script >/dev/null; then
    script -qc "$SEQMATCH search -e ACGT" /dev/null </dev/null >"$TMP/tty" 2>&1
    if grep -q "reading standard input" "$TMP/tty"; then pass; else fail "terminal: 'reading standard input'"; fi
    script -qc "$SEQMATCH dfa --regex '(AC)*' --alphabet dna" /dev/null </dev/null >"$TMP/tty" 2>&1
    if grep -q "reading standard input" "$TMP/tty"; then pass; else fail "dfa on a terminal: 'reading standard input'"; fi
else
    echo "words.sh: no script(1): the terminal check is skipped"
fi
printf '>a\nACGT\n' | "$SEQMATCH" search -e ACGT >/dev/null 2>"$TMP/err"
check_stderr_empty "a pipe: no note"

finish
