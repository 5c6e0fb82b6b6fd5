#!/usr/bin/env bash
# seqmatch search --gpu against seqmatch search with mismatches and edits:
# the same output and exit status for every engine the planners choose or a
# user forces (Myers, the mismatch counters, the pigeonhole filter), both
# report modes, a PAM, --text-iupac, one strand or both, text, and the host
# side of GPU hits (--cigar, --format sam and bed, --anchor, --circular,
# counts), with the default batch and batches of a few hundred bytes so that
# records and runs of ends are cut across batches everywhere; and the one-line
# refusal of a database the GPU cannot run (--engine wavefront). Without a
# usable GPU the refusal is what is checked. Run against the tool built over
# the CPU stand-in for the GPU (seqmatch_emulated) it tests everything on any
# machine.
# Usage: approx_gpu.sh SEQMATCH (run from the tests directory).
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# Three records of pseudo-random DNA (a linear congruential generator: the
# same bytes everywhere), with runs of N and lower case, and patterns cut
# from them with a substitution or an indel now and then.
awk 'BEGIN {
  x = 12345
  for (r = 1; r <= 3; r++) {
    n = r == 2 ? 700 : 9000 + 3000 * r; s = ""
    for (i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) % 2147483648
      c = substr("ACGT", int(x / 65536) % 4 + 1, 1)
      if (int(x / 256) % 97 == 0) c = "N"
      if (int(x / 256) % 89 == 0) c = tolower(c)
      s = s c
    }
    printf ">rec%d\n", r
    for (i = 1; i <= n; i += 70) print substr(s, i, 70)
    seq[r] = s
  }
  for (p = 0; p < 24; p++) {
    x = (x * 1103515245 + 12345) % 2147483648; r = int(x / 65536) % 3 + 1
    x = (x * 1103515245 + 12345) % 2147483648; len = p < 20 ? 12 + int(x / 65536) % 20 : 70 + int(x / 65536) % 90
    x = (x * 1103515245 + 12345) % 2147483648; at = int(x / 65536) % (length(seq[r]) - len) + 1
    pat = toupper(substr(seq[r], at, len)); gsub(/N/, "A", pat)
    if (p % 3 == 1) pat = substr(pat, 1, 5) "T" substr(pat, 7)
    if (p % 5 == 2) pat = substr(pat, 1, 8) substr(pat, 10)
    print pat > "/dev/stderr"
  }
}' >"$tmp/t.fa" 2>"$tmp/p.txt"
head -n 12 "$tmp/p.txt" | cut -c1-20 >"$tmp/guides.txt"
tail -n 8 "$tmp/p.txt" | cut -c3-8 >"$tmp/barcodes.txt"
printf 'And God said, Let there be light: and there was light.\nAnd the evening and the morning were the first day.\nand God saw the light, that it was good.\n' >"$tmp/text.txt"
printf 'God said\nthe light\nmorning were\n' >"$tmp/words.txt"

"$bin" search --gpu -k 1 -p "$tmp/p.txt" "$tmp/t.fa" >"$tmp/out" 2>"$tmp/err"
probe=$?
if [ "$probe" -eq 2 ]; then
    if grep -qE '^seqmatch: (no usable GPU|this seqmatch was built without CUDA|.*GPU module)' "$tmp/err" && [ ! -s "$tmp/out" ]; then
        echo "no usable GPU: the refusal checked; 1 passed, 0 failed"
        exit 0
    fi
    echo "FAIL: --gpu neither ran nor refused clearly: $(cat "$tmp/err")"
    exit 1
fi

batches="default 300"

# same NAME ARGS...: search ARGS (CPU) against search --gpu ARGS at each batch size.
same() {
    local name=$1
    shift
    "$bin" search "$@" >"$tmp/cpu" 2>"$tmp/cpu.err"
    local want=$?
    for b in $batches; do
        local extra=()
        [ "$b" = default ] || extra=(--chunk-size "$b")
        "$bin" search --gpu "${extra[@]}" "$@" >"$tmp/gpu" 2>"$tmp/gpu.err"
        local got=$?
        # SAM's @PG line holds the command line, which differs by --gpu
        if [ "$got" -eq "$want" ] && [ "$want" -ne 2 ] && cmp -s <(grep -v '^@PG' "$tmp/cpu") <(grep -v '^@PG' "$tmp/gpu"); then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            echo "FAIL: $name (batch $b): exit $got against $want; $(diff "$tmp/cpu" "$tmp/gpu" | head -n 4 | tr '\n' ' ')"
        fi
    done
}

same "k 2, best" -k 2 -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, every end" -k 2 --report ends -p "$tmp/p.txt" "$tmp/t.fa"
same "k 3, cigar" -k 3 --cigar -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, sam" -k 2 --format sam -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, count" -k 2 --format count -p "$tmp/p.txt" "$tmp/t.fa"
same "m 2, bed" -m 2 --format bed -p "$tmp/p.txt" "$tmp/t.fa"
same "m 3, one strand, mismatch engine" -m 3 --strand + --engine mismatch -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, myers, reverse strand" -k 2 --strand - --engine myers -p "$tmp/p.txt" "$tmp/t.fa"
same "k 1, pigeonhole" -k 1 --engine pigeonhole -p "$tmp/p.txt" "$tmp/t.fa"
same "m 1, pigeonhole, count" -m 1 --engine pigeonhole --format count -p "$tmp/p.txt" "$tmp/t.fa"
same "m 1, anchor start" -m 1 --anchor start -p "$tmp/p.txt" "$tmp/t.fa"
same "k 1, anchor end" -k 1 --anchor end -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, circular" -k 2 --circular -p "$tmp/p.txt" "$tmp/t.fa"
same "m 2, circular, count" -m 2 --circular --format count -p "$tmp/p.txt" "$tmp/t.fa"
same "pam NGG, m 3" --pam NGG -m 3 -p "$tmp/guides.txt" "$tmp/t.fa"
same "pam NGG, k 2, cigar" --pam NGG -k 2 --cigar -p "$tmp/guides.txt" "$tmp/t.fa"
same "pam NGG, m 3, bulges 1/1 (the guide kernel)" --pam NGG -m 3 --dna-bulges 1 --rna-bulges 1 -p "$tmp/guides.txt" "$tmp/t.fa"
same "pam NRG, m 2, bulges 2/1, count" --pam NRG -m 2 --dna-bulges 2 --rna-bulges 1 --format count -p "$tmp/guides.txt" "$tmp/t.fa"
same "pam5 TTTV, m 2, bulges 1/2, strand -" --pam5 TTTV -m 2 --dna-bulges 1 --rna-bulges 2 --strand - -p "$tmp/guides.txt" "$tmp/t.fa"
same "pam NGG, m 4, bulges 1/1, profile" --pam NGG -m 4 --dna-bulges 1 --rna-bulges 1 --format profile -p "$tmp/guides.txt" "$tmp/t.fa"
same "pam NGG, m 1, forced guide engine, no bulge" --pam NGG -m 1 --engine guide -p "$tmp/guides.txt" "$tmp/t.fa"
same "text-iupac, m 2" --text-iupac -m 2 -p "$tmp/p.txt" "$tmp/t.fa"
same "m 2, exact barcodes beside" -m 2 -p "$tmp/p.txt" --exact-patterns "$tmp/barcodes.txt" "$tmp/t.fa"
same "m 1, exact barcodes beside, count" -m 1 --format count --exact-patterns "$tmp/barcodes.txt" -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, exact barcodes beside" -k 2 -p "$tmp/p.txt" --exact-patterns "$tmp/barcodes.txt" "$tmp/t.fa"
same "k 1, exact barcodes beside, ends, count" -k 1 --report ends --format count --exact-patterns "$tmp/barcodes.txt" -p "$tmp/p.txt" "$tmp/t.fa"
same "k 2, exact barcodes beside, pigeonhole" -k 2 --engine pigeonhole --exact-patterns "$tmp/barcodes.txt" -p "$tmp/p.txt" "$tmp/t.fa"
same "text, k 2" --alphabet text -k 2 -p "$tmp/words.txt" "$tmp/text.txt"
same "text, lines, -i, m 1" --alphabet text --lines -i -m 1 -p "$tmp/words.txt" "$tmp/text.txt"

# A database the GPU cannot run: refused in one line naming the engine.
"$bin" compile --engine wavefront -k 1 -p "$tmp/p.txt" -o "$tmp/wf.smdb" >/dev/null 2>&1
"$bin" search --gpu -d "$tmp/wf.smdb" "$tmp/t.fa" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'wavefront' "$tmp/err"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL: --engine wavefront with --gpu: $(cat "$tmp/err")"
fi

# The cases find something (an empty output would prove little).
"$bin" search -k 2 --format count -p "$tmp/p.txt" "$tmp/t.fa" | awk -F'\t' '$1 == "total" { exit !($2 > 30) }' && pass=$((pass + 1)) || {
    fail=$((fail + 1))
    echo "FAIL: the patterns find too few hits"
}

echo "approx_gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
