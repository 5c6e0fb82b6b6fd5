#!/usr/bin/env bash
# seqmatch dfa --gpu against seqmatch dfa: the same lines, exit status and
# error message for every case (DFA files, regular expressions and pattern
# sets; text and dna; whole files, several files, standard input and
# --per-record; FASTA, FASTQ and gzip; bytes outside the alphabet in an
# early, middle or late record, skipped or not; a missing file between
# others), with the default batch and with batches of a few hundred bytes so
# that inputs and records are cut across batches everywhere. Without a
# usable GPU the refusal is checked. DFA_GPU_BATCHES lists the batch sizes
# (default: "default 300 7"; "default 7" when SM_TEST_SCALE is below 100). Run against the tool built over the
# CPU stand-in for the GPU (seqmatch_emulated) it tests everything on any
# machine.
# Usage: dfa_gpu.sh SEQMATCH (run from the tests directory).
set -u
bin=$1
data=data/dfa
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

printf 'ACG' >"$tmp/acg"
"$bin" dfa --dfa $data/example.dfa --gpu "$tmp/acg" >"$tmp/out" 2>"$tmp/err"
probe=$?
if [ "$probe" -ne 0 ]; then
    # No GPU: a clear refusal, exit status 2, nothing on standard output.
    if [ "$probe" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -qE '^seqmatch: --gpu: (no usable GPU|this seqmatch was built without CUDA)' "$tmp/err"; then
        echo "no usable GPU: the refusal checked; 1 passed, 0 failed"
        exit 0
    fi
    echo "FAIL: --gpu neither ran nor refused clearly: $(cat "$tmp/err")"
    exit 1
fi

# Sanitizer runs (SM_TEST_SCALE below 100) skip the middle batch size.
batches="default 300 7"
[ "${SM_TEST_SCALE:-100}" -lt 100 ] && batches="default 7"

# same NAME ARGS...: dfa ARGS (CPU) against dfa --gpu ARGS at each batch size.
same() {
    local name=$1
    shift
    "$bin" dfa "$@" >"$tmp/cpu.out" 2>"$tmp/cpu.err"
    local want=$?
    for batch in ${DFA_GPU_BATCHES:-$batches}; do
        local extra=(--gpu)
        [ "$batch" != default ] && extra+=(--gpu-batch "$batch")
        "$bin" dfa "${extra[@]}" "$@" >"$tmp/gpu.out" 2>"$tmp/gpu.err"
        local got=$?
        if [ "$got" -eq "$want" ] && cmp -s "$tmp/cpu.out" "$tmp/gpu.out" && cmp -s "$tmp/cpu.err" "$tmp/gpu.err"; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            printf 'FAIL: %s (batch %s): exit %s, want %s\n' "$name" "$batch" "$got" "$want"
            diff "$tmp/cpu.out" "$tmp/gpu.out" | head -6 | sed 's/^/    out: /'
            diff "$tmp/cpu.err" "$tmp/gpu.err" | head -4 | sed 's/^/    err: /'
        fi
    done
}

# same_stdin NAME FILE ARGS...: as same, FILE on standard input.
same_stdin() {
    local name=$1 file=$2
    shift 2
    "$bin" dfa "$@" <"$file" >"$tmp/cpu.out" 2>"$tmp/cpu.err"
    local want=$?
    "$bin" dfa --gpu --gpu-batch 100 "$@" <"$file" >"$tmp/gpu.out" 2>"$tmp/gpu.err"
    local got=$?
    if [ "$got" -eq "$want" ] && cmp -s "$tmp/cpu.out" "$tmp/gpu.out" && cmp -s "$tmp/cpu.err" "$tmp/gpu.err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAIL: %s (standard input): exit %s, want %s\n' "$name" "$got" "$want"
    fi
}

random_dna() { # LENGTH [ALPHABET]
    local seed
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d " ")
    awk -v n="$1" -v a="${2:-ACGT}" -v seed=$seed 'BEGIN {
        srand(seed); k = length(a)
        for (i = 0; i < n; i++) printf "%s", substr(a, int(rand() * k) + 1, 1) }'
}

printf 'TTCA' >"$tmp/ttca"
printf '' >"$tmp/empty"
printf 'ACGT\n' >"$tmp/newline"
random_dna 20000 >"$tmp/big"
random_dna 20000 ACG >"$tmp/big3"
{ random_dna 5000; printf 'x'; random_dna 5000; } >"$tmp/big_unknown"

# FASTA: many records of many lengths (empty ones too), one of them with an
# N (outside example.dfa's alphabet) early, in the middle or late.
make_fasta() { # N_RECORD
    local i
    for i in $(seq 1 40); do
        printf '>rec%d some description\n' "$i"
        local len=$(((i * 97) % 700))
        [ "$i" -eq 7 ] && len=0
        [ "$i" -eq "$1" ] && { random_dna 50; printf 'N'; }
        random_dna "$len" | fold -w 60
        echo
    done
}
make_fasta 0 >"$tmp/clean.fa"
make_fasta 2 >"$tmp/n_early.fa"
make_fasta 20 >"$tmp/n_middle.fa"
make_fasta 40 >"$tmp/n_late.fa"
gzip -c "$tmp/n_middle.fa" >"$tmp/n_middle.fa.gz"
gzip -c "$tmp/clean.fa" >"$tmp/clean.fa.gz"
for i in $(seq 1 300); do
    printf '@read%d\n%s\n+\n' "$i" "$(random_dna 150)"
    printf '%150s\n' '' | tr ' ' 'I'
done >"$tmp/reads.fq"
printf 'ACGTT\nGGA\nTTTT\n' >"$tmp/patterns.txt"

ex="--dfa $data/example.dfa"
same "accept" $ex "$tmp/acg"
same "reject" $ex "$tmp/ttca"
same "empty input" $ex "$tmp/empty"
same "several files" $ex "$tmp/acg" "$tmp/ttca" "$tmp/empty" "$tmp/big"
same "unknown byte" $ex "$tmp/newline"
same "unknown byte after others" $ex "$tmp/acg" "$tmp/big" "$tmp/newline" "$tmp/ttca"
same "unknown byte in a long input" $ex "$tmp/big" "$tmp/big_unknown" "$tmp/acg"
same "skip unknown" $ex --skip-unknown "$tmp/newline" "$tmp/big_unknown"
same "long input" $ex "$tmp/big"
same "long input, never accepted" $ex "$tmp/big3"
same "equal chunks" $ex --policy equal "$tmp/big" "$tmp/big3"
same "balanced ratio" $ex --first-chunk-ratio 5 "$tmp/big3"
same "missing file between others" $ex "$tmp/acg" "$tmp/nonexistent" "$tmp/ttca"
same_stdin "standard input" "$tmp/big" $ex

for f in clean n_early n_middle n_late; do
    same "dna, $f" $ex --alphabet dna "$tmp/$f.fa"
    same "dna, $f, per record" $ex --alphabet dna --per-record "$tmp/$f.fa"
    same "dna, $f, skip unknown" $ex --alphabet dna --per-record --skip-unknown "$tmp/$f.fa"
done
same "dna, gzip, per record" $ex --alphabet dna --per-record "$tmp/n_middle.fa.gz"
same "dna, gzip, several files" $ex --alphabet dna "$tmp/clean.fa.gz" "$tmp/n_late.fa" "$tmp/clean.fa"
same "dna, bundled records" $ex --alphabet dna --per-record $data/records.fa
same "fastq, per record" $ex --alphabet dna --per-record "$tmp/reads.fq"
same_stdin "fastq on standard input" "$tmp/reads.fq" $ex --alphabet dna --per-record

same "patterns, contains" --from-patterns "$tmp/patterns.txt" --alphabet dna --per-record "$tmp/clean.fa"
same "patterns, ends" --from-patterns "$tmp/patterns.txt" --alphabet dna --match ends --per-record "$tmp/reads.fq"
same "patterns, whole files" --from-patterns $data/patterns.txt --alphabet dna "$tmp/clean.fa" "$tmp/n_early.fa"
same "regex, dna" --regex '(A|C|G|T)*GGA(A|C|G|T)*' --alphabet dna --per-record "$tmp/reads.fq"
same "regex, text" --regex '[ACGT]*(ACG|TTT)[ACGT]*\n?' "$tmp/big" "$tmp/newline" "$tmp/acg"
same "regex, text lines" --regex '([^\n]*\n)*' "$tmp/clean.fa" "$tmp/n_late.fa"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
