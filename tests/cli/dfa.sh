#!/usr/bin/env bash
# seqmatch dfa: results, exit status, per-record and multi-file output, the
# three automaton sources, dumps that read back, and error messages.
# Usage: dfa.sh SEQMATCH (run from the tests directory).
set -u
bin=$1
data=data/dfa
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

check() { # name expected actual
    if [ "$2" == "$3" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAIL: %s\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3"
    fi
}

run() { # stdout and the exit status on one line
    local out
    out=$("$bin" dfa "$@" 2>"$tmp/err")
    printf '%s|%s' "$out" "$?"
}

run_stdin() { # like run, with the first argument as standard input
    local input=$1 out
    shift
    out=$(printf '%s' "$input" | "$bin" dfa "$@" 2>"$tmp/err")
    printf '%s|%s' "$out" "$?"
}

stderr_has() { # name text
    if grep -qF -- "$2" "$tmp/err"; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        printf 'FAIL: %s\n  stderr lacks: %s\n  stderr: %s\n' "$1" "$2" "$(cat "$tmp/err")"
    fi
}

printf 'ACG' >"$tmp/acg"
printf 'TTCA' >"$tmp/ttca"
printf '' >"$tmp/empty"
printf 'ACGT\n' >"$tmp/newline"

tab=$'\t'
check "accept" "accept${tab}3|0" "$(run --dfa $data/example.dfa "$tmp/acg")"
check "reject" "reject${tab}1|1" "$(run --dfa $data/example.dfa "$tmp/ttca" --threads 2 --chunks 3)"
check "empty input: start state" "reject${tab}0|1" "$(run --dfa $data/example.dfa "$tmp/empty")"
check "stdin" "accept${tab}3|0" "$(run_stdin ACG --dfa $data/example.dfa)"
check "several files" "$tmp/acg${tab}accept${tab}3
$tmp/ttca${tab}reject${tab}1|0" "$(run --dfa $data/example.dfa "$tmp/acg" "$tmp/ttca")"
check "unknown byte" "|2" "$(run --dfa $data/example.dfa "$tmp/newline")"
stderr_has "unknown byte message" "newline: byte 0x0A at offset 4 is not in the DFA's alphabet"
check "skip unknown" "accept${tab}3|0" "$(run --dfa $data/example.dfa --skip-unknown "$tmp/newline")"

# Equal and balanced chunking agree with one thread on a larger input.
head -c 300000 /dev/urandom | tr -dc 'ACGT' >"$tmp/big"
one=$(run --dfa $data/example.dfa --threads 1 "$tmp/big")
check "equal chunks" "$one" "$(run --dfa $data/example.dfa --threads 2 --chunks 7 --policy equal "$tmp/big")"
check "balanced chunks" "$one" "$(run --dfa $data/example.dfa --threads 2 --chunks 5 --first-chunk-ratio 3 "$tmp/big")"
check "scalar lanes" "$one" "$(run --dfa $data/example.dfa --threads 2 --chunks 4 --simd scalar "$tmp/big")"

# DNA records.
check "whole file" "accept${tab}3|0" "$(run --dfa $data/example.dfa --alphabet dna --skip-unknown $data/records.fa)"
check "per record" "r1${tab}accept${tab}3
r2${tab}reject${tab}0
r3${tab}reject${tab}0|0" "$(run --dfa $data/example.dfa --alphabet dna --per-record --skip-unknown $data/records.fa)"
check "record error" "r1${tab}accept${tab}3
r2${tab}reject${tab}0|2" "$(run --dfa $data/example.dfa --alphabet dna --per-record $data/records.fa)"
stderr_has "record error message" "records.fa: record 'r3': byte 0x61 ('a') at sequence offset 0 is not in the DFA's alphabet"
# One result for the whole file: records share the blocks the threads run, and an unknown byte is
# still named by its record and its offset there, in the first record, a later one, or past a line.
check "whole file error" "|2" "$(run --dfa $data/example.dfa --alphabet dna $data/records.fa)"
stderr_has "whole file error message" "records.fa: record 'r3': byte 0x61 ('a') at sequence offset 0 is not in the DFA's alphabet"
check "later record error" "|2" "$(run_stdin $'>x\nACGT\n>y one\nTTTTCAT\nTTGaC\n>z\nAAA\n' --dfa $data/example.dfa --alphabet dna --threads 2)"
stderr_has "later record error message" "record 'y': byte 0x61 ('a') at sequence offset 10 is not in the DFA's alphabet"
check "first record error" "|2" "$(run_stdin $'>x\nACnT\n>y\nTTTT\n' --dfa $data/example.dfa --alphabet dna)"
stderr_has "first record error message" "record 'x': byte 0x6E ('n') at sequence offset 2 is not in the DFA's alphabet"

# Pattern sets.
check "contains" "r1${tab}accept${tab}7
r2${tab}reject${tab}0
r3${tab}accept${tab}7|0" "$(run --from-patterns $data/patterns.txt --alphabet dna --strand forward --per-record $data/records.fa)"
ends=$(run --from-patterns $data/patterns.txt --match ends --alphabet dna --strand forward --per-record $data/records.fa)
check "ends" "r1 accept r2 reject r3 reject|0" "$(printf '%s' "$ends" | awk -F'\t' '{ s = s (NR > 1 ? " " : "") $1 " " $2 } END { printf "%s", s }')|${ends##*|}"

# Regular expressions: whole-input membership.
check "regex accept" "accept|0" "$(run_stdin abcabc --regex '(abc)+' | sed 's/\t[0-9]*//')"
check "regex is anchored" "1" "$(printf 'xabc' | "$bin" dfa --regex 'abc' >/dev/null 2>&1; echo $?)"
check "regex dna" "0" "$(printf 'ACGTNNACGT' | "$bin" dfa --regex 'ACGT.*ACGT' >/dev/null 2>&1; echo $?)"
check "regex syntax error" "|2" "$(run --regex 'a(b' "$tmp/acg")"
stderr_has "regex error message" "regex: position 2: unmatched '('"
check "state limit" "|2" "$(run --regex '(a|b)*a(a|b){14}' --max-states 500 "$tmp/acg")"
stderr_has "state limit message" "needs more than 500 states"

# Dumps read back and give the same answers.
"$bin" dfa --regex '(ab|c)*d?' --dump >"$tmp/re.dfa" 2>/dev/null
printf 'abcabd' >"$tmp/in1"
check "regex dump" "$(run --regex '(ab|c)*d?' "$tmp/in1")" "$(run --dfa "$tmp/re.dfa" "$tmp/in1")"
"$bin" dfa --from-patterns $data/patterns.txt --alphabet dna --dump -o "$tmp/pat.dfa" 2>/dev/null
check "pattern dump" "$(run --from-patterns $data/patterns.txt --alphabet dna --per-record $data/records.fa)" \
    "$(run --dfa "$tmp/pat.dfa" --alphabet dna --per-record $data/records.fa)"
"$bin" dfa --dfa $data/example.dfa --dump >"$tmp/ex.dfa" 2>/dev/null
check "example dump" "$(grep -v '^#' $data/example.dfa | sed 's/ *#.*//')" "$(grep -v '^#' "$tmp/ex.dfa")"

# File-format errors name the file and line.
check "repeated row" "|2" "$(run --dfa $data/repeated_row.dfa "$tmp/acg")"
stderr_has "repeated row message" "repeated_row.dfa: line 6: a second row for state 0 (the first is line 5)"
run --dfa $data/bad_target.dfa "$tmp/acg" >/dev/null
stderr_has "bad target message" "bad_target.dfa: line 4: target 2 in column 2 is out of range (states 0..1)"
run --dfa $data/duplicate_symbol.dfa "$tmp/acg" >/dev/null
stderr_has "duplicate symbol message" "duplicate_symbol.dfa: line 1: symbol 'a' appears twice in the alphabet (columns 1 and 4)"
run --dfa $data/missing_row.dfa "$tmp/acg" >/dev/null
stderr_has "missing row message" "missing_row.dfa: state 1 has no row (1 rows missing)"

# --strand as search spells it (forward and reverse stay other names).
check "--strand +" "$(run --from-patterns $data/patterns.txt --alphabet dna --strand forward --per-record $data/records.fa)" \
    "$(run --from-patterns $data/patterns.txt --alphabet dna --strand + --per-record $data/records.fa)"
check "--strand -" "$(run --from-patterns $data/patterns.txt --alphabet dna --strand reverse --per-record $data/records.fa)" \
    "$(run --from-patterns $data/patterns.txt --alphabet dna --strand - --per-record $data/records.fa)"
check "--strand x" "|2" "$(run --from-patterns $data/patterns.txt --strand x $data/records.fa)"
# Without --alphabet the input says: FASTA is dna (its sequences, not its
# header lines), other files text; gzip'd FASTA too; a mix is refused.
check "FASTA without --alphabet" "$(run --regex '[ACGT]*' --alphabet dna --per-record $data/records.fa)" \
    "$(run --regex '[ACGT]*' --per-record $data/records.fa)"
gzip -c $data/records.fa >"$tmp/records.fa.gz"
check "gzip'd FASTA without --alphabet" "$(run --regex '[ACGT]*' --alphabet dna $data/records.fa)" \
    "$(run --regex '[ACGT]*' "$tmp/records.fa.gz")"
printf 'ACGT' >"$tmp/plain"
check "plain text without --alphabet" "accept${tab}0|0" "$(run --regex '[ACGT]*' "$tmp/plain")"
check "FASTA and text together" "|2" "$(run --regex '[ACGT]*' $data/records.fa "$tmp/plain")"
stderr_has "FASTA and text together: message" "give --alphabet dna or --alphabet text"
# a pipe is not looked at first (it cannot be read twice): text, read once
check "a pipe without --alphabet" "accept${tab}0|0" "$(run --regex '[ACGT]*' <(printf 'ACGT'))"

# Usage errors.
check "no automaton" "|2" "$(run "$tmp/acg")"
check "two automata" "|2" "$(run --regex a --dfa $data/example.dfa "$tmp/acg")"
# A dump ends with the CRC-32 of its lines; a dump changed afterwards is
# refused with the line of the checksum, read as it is once the line goes.
tail -n 1 "$tmp/ex.dfa" | grep -q '^# crc32 [0-9a-f]\{8\}$' && pass=$((pass + 1)) || {
    fail=$((fail + 1))
    echo "FAIL: a dump ends with its checksum line"
}
sed '$!s/^0 1 /0 2 /' "$tmp/ex.dfa" >"$tmp/changed.dfa"
check "changed dump refused" "|2" "$(run --dfa "$tmp/changed.dfa" "$tmp/in1")"
lines=$(wc -l <"$tmp/changed.dfa")
check "changed dump: the message" "1" \
    "$(grep -c "^seqmatch: $tmp/changed.dfa: line $lines: the checksum does not match the lines above it" "$tmp/err")"
sed '$d' "$tmp/changed.dfa" >"$tmp/edited.dfa"
check "changed dump without its checksum line" "0" "$("$bin" dfa --dfa "$tmp/edited.dfa" --dump >/dev/null 2>&1; echo $?)"
check "missing input" "|2" "$(run --dfa $data/example.dfa "$tmp/nonexistent")"
check "help" "0" "$("$bin" dfa --help >/dev/null 2>&1; echo $?)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
