#!/usr/bin/env bash
# The approximate planner's cost model: the data its constants are fitted to, and the check of
# its choices.
#
# usage: bench/run-planner.sh fit   [SEQMATCH_BUILD_DIR]   scan rates of every approximate engine
#        bench/run-planner.sh check [SEQMATCH_BUILD_DIR]   the cases of bench/run-approx.sh, whole
#                                                          command: auto against every forced engine
#
# fit: bench/scan_rate (the scan alone, one thread, the text in memory as one sequence) on a set of
# cases chosen to vary each term of the model (text lanes of 1 to 16 keys, packed lanes of 10 to 128
# keys, keys over 64, pieces of 3 to 20 bases, text patterns), with every engine that can take the
# case forced, at each SIMD level of LEVELS (SEQMATCH_SIMD). Each row holds the measured scan (ns
# per byte, the median of REPS scans after a warm-up) and the model's terms for that engine
# (scan_rate prints them); bench/fit_planner.py fits the constants to them.
#   output: RESULTS/planner-fit.csv, RESULTS/env-planner.txt
# check: for each approximate case of bench/run-approx.sh (primers 1/10/100 with -m and -k 1..3, one
# primer as text lines, 20 guides + NGG -m 4, 10 x 100 nt -k 5, 10 x 1000 nt -k 50, 64 x 64 nt -k 3,
# the Bible patterns -k 1 and 2, the read cases), the whole command (seqmatch search --format count,
# THREADS threads, taskset to one core for one thread) with --engine auto and with every engine that
# can take the case, REPS alternating runs each (an engine three times slower than the fastest after
# the first round is not repeated), medians; the planner's choice against the fastest.
#   output: RESULTS/planner-check.csv (case, engine, auto's engine, median wall and CPU seconds, runs);
#   the summary line of each case: the forced run of auto's engine against the fastest forced engine
#
# Environment: SEQMATCH_BENCH_DATA (default bench/data, fetched by bench/fetch-data.sh), REPS
# (default 5), LEVELS (fit: default "native avx2 sse"), FIT_BYTES (fit: text bytes, default 10000000),
# FIT_CASES (fit: only these case names; rows are appended when given), SCAN_RATE_BIN (fit: a
# bench/scan_rate built elsewhere, instead of building it), FIT_TERMS_ONLY (fit: set to
# recompute the model's terms of every row on a one-byte text, for bench/fit_planner.py --terms),
# CORE (the core one-thread runs are pinned to, default 0), THREADS (check: default 1), CASES
# (check: default all), WORK, RESULTS.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mode=${1:-}
BUILD=${2:-$root/build}
DATA=${SEQMATCH_BENCH_DATA:-$here/data}
REPS=${REPS:-5}
LEVELS=${LEVELS:-native avx2 sse}
FIT_BYTES=${FIT_BYTES:-10000000}
THREADS=${THREADS:-1}
WORK=${WORK:-$here/work}
RESULTS=${RESULTS:-$here/results}
source "$here/lib.sh"

case $mode in fit | check) ;; *) say "usage: bench/run-planner.sh fit|check [BUILD_DIR]"; exit 2 ;; esac
"$here/fetch-data.sh" "$DATA"
SETS=$WORK/planner/sets
mkdir -p "$SETS" "$RESULTS"
SEQMATCH=$BUILD/seqmatch

fasta_lines() { awk '/^>/ { if (s != "") print s; s = ""; next } { s = s $0 } END { if (s != "") print s }' "$1"; }
sample() { # NAME COUNT LENGTH SEED [SEQFILE]: one pattern per line (scan_rate) and FASTA (the CLI)
  [ -s "$SETS/$1.fa" ] || python3 "$here/sample_patterns.py" -n "$2" -l "$3" -s "$4" --unique --fasta -o "$SETS/$1.fa" "${5:-$DATA/panel.seq}"
  [ -s "$SETS/$1.txt" ] || fasta_lines "$SETS/$1.fa" > "$SETS/$1.txt"
}
first() { # NAME FROM N: the first N patterns of set FROM (records wrapped over several lines)
  [ -s "$SETS/$1.fa" ] || awk -v n="$3" '/^>/ { if (++r > n) exit } { print }' "$SETS/$2.fa" > "$SETS/$1.fa"
  [ -s "$SETS/$1.txt" ] || fasta_lines "$SETS/$1.fa" > "$SETS/$1.txt"
}
# the sets of bench/run-approx.sh (same samplers and seeds), and more sizes for the fit
sample primers100 100 20 2001
for n in 1 2 4 8 10 30; do first "primers$n" primers100 "$n"; done
sample guides20 20 20 2301
awk '/^>/ { print; next } { print $0 "NGG" }' "$SETS/guides20.fa" > "$SETS/guides20ngg.fa"
fasta_lines "$SETS/guides20ngg.fa" > "$SETS/guides20ngg.txt"
sample len100 10 100 10001
first len100x1 len100 1
sample len1000 10 1000 100001
first len1000x1 len1000 1
sample m64 64 64 6401
sample len40 4 40 4001
first len40x1 len40 1
printf 'LORD\n' > "$SETS/lord.txt"
printf 'for his mercy endureth for ever\n' > "$SETS/mercy.txt"

if [ "$mode" = fit ]; then
  SCAN_RATE=$WORK/planner/scan_rate.$$ # a copy: rebuilding bench/ while this runs leaves it alone
  if [ -n "${SCAN_RATE_BIN:-}" ]; then # built elsewhere (a machine without the build)
    cp "$SCAN_RATE_BIN" "$SCAN_RATE"
  else
    make -s -B -C "$here" scan_rate LIBDIR="$BUILD" >&2 # -B: the library may have changed
    cp "$here/scan_rate" "$SCAN_RATE"
  fi
  TEXT=$WORK/planner/panel.$FIT_BYTES.seq
  [ -s "$TEXT" ] || head -c "$FIT_BYTES" "$DATA/panel.seq" > "$TEXT"
  if [ -n "${FIT_TERMS_ONLY:-}" ]; then # the model's terms only (they depend on the patterns, not the text)
    TEXT=$WORK/planner/one.seq
    printf 'A' > "$TEXT"
  fi
  TEXTSMALL=$WORK/planner/panel.100000.seq # cases where an engine is hopeless (minutes on the full text)
  [ -s "$TEXTSMALL" ] || head -c 100000 "$DATA/panel.seq" > "$TEXTSMALL"
  BIBLE=$DATA/kjv.txt
  { machine_info; echo "source: commit $(git -C "$root" rev-parse --short HEAD)"; echo "fit text: $FIT_BYTES bytes of panel.seq; kjv.txt"; } > "$RESULTS/env-planner.txt"
  CSV=$RESULTS/planner-fit.csv
  [ -n "${FIT_CASES:-}" ] && [ -s "$CSV" ] ||
    echo "level,case,engine,planner,patterns,k,mode,bytes,count,ns_per_byte,cpu_ns_per_byte,est_ns_per_byte,t0,t1,t2,t3,t4,t5,t6,t7" > "$CSV"
  # case lines: NAME SET ALPHABET STRANDS MODE K ENGINES TEXT (dna: FIT_BYTES of panel.seq; small:
  # its first 100 kB, where an engine is hopeless; bible: kjv.txt)
  cases=(
    "p1f.k3 primers1 dna + k 3 myers,pigeonhole dna"
    "p1.k1 primers1 dna both k 1 myers,pigeonhole,wavefront dna"
    "p1.k2 primers1 dna both k 2 myers,pigeonhole dna"
    "p1.k3 primers1 dna both k 3 myers,pigeonhole dna"
    "p1.k4 primers1 dna both k 4 myers,pigeonhole dna"
    "p1.k6 primers1 dna both k 6 myers,pigeonhole dna"
    "p2.k3 primers2 dna both k 3 myers,pigeonhole dna"
    "p4.k2 primers4 dna both k 2 myers,pigeonhole dna"
    "p8.k3 primers8 dna both k 3 myers,pigeonhole dna"
    "p10.k2 primers10 dna both k 2 myers,pigeonhole dna"
    "p30.k2 primers30 dna both k 2 myers,pigeonhole dna"
    "p100.k2 primers100 dna both k 2 myers,pigeonhole dna"
    "p100.k3 primers100 dna both k 3 myers,pigeonhole dna"
    "l40.k4 len40x1 dna both k 4 myers,pigeonhole dna"
    "l40x4.k4 len40 dna both k 4 myers,pigeonhole dna"
    "l100x1.k5 len100x1 dna both k 5 myers,pigeonhole dna"
    "l100.k5 len100 dna both k 5 myers,pigeonhole dna"
    "l100x1.k30 len100x1 dna both k 30 myers,pigeonhole small"
    "l1000x1.k50 len1000x1 dna both k 50 myers,pigeonhole dna"
    "m64.k3 m64 dna both k 3 myers,pigeonhole dna"
    "lord.k1 lord text + k 1 myers,pigeonhole,wavefront bible"
    "lord.k2 lord text + k 2 myers,pigeonhole bible"
    "mercy.k2 mercy text + k 2 myers,pigeonhole bible"
    "mercy.k6 mercy text + k 6 myers,pigeonhole bible"
    "p1.k7 primers1 dna both k 7 myers,pigeonhole,wavefront small"
    "p1f.m3 primers1 dna + m 3 mismatch,pigeonhole dna"
    "p1.m1 primers1 dna both m 1 mismatch,pigeonhole dna"
    "p1.m2 primers1 dna both m 2 mismatch,pigeonhole dna"
    "p1.m3 primers1 dna both m 3 mismatch,pigeonhole dna"
    "p1.m5 primers1 dna both m 5 mismatch,pigeonhole dna"
    "p2.m3 primers2 dna both m 3 mismatch,pigeonhole dna"
    "p4.m2 primers4 dna both m 2 mismatch,pigeonhole dna"
    "p8.m3 primers8 dna both m 3 mismatch,pigeonhole dna"
    "p10.m2 primers10 dna both m 2 mismatch,pigeonhole dna"
    "p30.m2 primers30 dna both m 2 mismatch,pigeonhole dna"
    "p100.m2 primers100 dna both m 2 mismatch,pigeonhole dna"
    "p100.m3 primers100 dna both m 3 mismatch,pigeonhole dna"
    "g20.m4 guides20ngg dna both m 4 mismatch,pigeonhole dna"
    "l40.m6 len40x1 dna both m 6 mismatch,pigeonhole dna"
    "m64.m3 m64 dna both m 3 mismatch,pigeonhole dna"
  )
  for level in $LEVELS; do
    for c in "${cases[@]}"; do
      read -r name set alpha strands mode k engines text <<< "$c"
      [ -n "${FIT_CASES:-}" ] && case " $FIT_CASES " in *" $name "*) ;; *) continue ;; esac
      t=$TEXT
      [ "$text" = bible ] && t=$BIBLE
      [ "$text" = small ] && t=$TEXTSMALL
      [ -n "${FIT_TERMS_ONLY:-}" ] && t=$TEXT
      for e in ${engines//,/ }; do
        env=()
        [ "$level" != native ] && env=(SEQMATCH_SIMD="$level")
        line=$(env "${env[@]}" taskset -c "${CORE:-0}" "$SCAN_RATE" -r "$REPS" -a "$alpha" -s "$strands" \
          "-$mode" "$k" -e "$e" "$SETS/$set.txt" "$t") || { say "run-planner: $name $e failed"; continue; }
        get() { printf '%s\n' "$line" | tr '\t' '\n' | sed -n "s/^$1=//p"; }
        bytes=$(get bytes)
        terms=$(get terms)
        ns=$(awk -v s="$(get scan_s)" -v b="$bytes" 'BEGIN { printf "%.4f", s * 1e9 / b }')
        cns=$(awk -v s="$(get scan_cpu_s)" -v b="$bytes" 'BEGIN { printf "%.4f", s * 1e9 / b }')
        echo "$level,$name,$e,$(get planner),$(get patterns),$k,$mode,$bytes,$(get count),$ns,$cns,$(get est_ns_per_byte),${terms//;/,}" >> "$CSV"
        say "$level $name $e: $ns ns/byte (estimate $(get est_ns_per_byte))"
      done
    done
  done
  say "results: $CSV (fit: python3 bench/fit_planner.py $CSV)"
  rm -f "$SCAN_RATE"
  exit 0
fi

# ---------------------------------------------------------------- check: the run-approx cases
FASTA=$DATA/panel.fa
BIBLE=$DATA/kjv.txt
READS=$WORK/planner/reads.fq
if [ ! -s "$READS" ]; then
  gzip -dc "$DATA"/reads/short_reads_1.fastq.gz "$DATA"/reads/short_reads_2.fastq.gz |
    awk 'NR % 4 == 1 { h = $0 } NR % 4 == 2 { s = $0 } NR % 4 == 3 { p = $0 }
         NR % 4 == 0 { if (s !~ /[^ACGT]/) print h "\n" s "\n" p "\n" $0 }' > "$READS.one"
  for ((i = 0; i < 8; i++)); do cat "$READS.one"; done > "$READS"
  rm -f "$READS.one"
fi
[ -s "$SETS/readref.seq" ] || awk '!/^>/' "$DATA/genomes/reference.fa" | tr -d '\r\n' | tr 'a-z' 'A-Z' > "$SETS/readref.seq"
sample kmers31 1000 31 3101 "$SETS/readref.seq"
sample adapters20 10 20 2101 "$SETS/readref.seq"
{ machine_info; echo "source: commit $(git -C "$root" rev-parse --short HEAD)"; echo "threads $THREADS, reps $REPS"; } > "$RESULTS/env-planner-check.txt"
CSV=$RESULTS/planner-check.csv
echo "case,engine,auto_engine,wall_s,cpu_s,runs" > "$CSV"
# case lines: NAME ENGINES TARGET OPTIONS...
cases=()
for n in 1 10 100; do
  for k in 1 2 3; do
    cases+=("primers$n.m$k mismatch,pigeonhole $FASTA -p $SETS/primers$n.fa -m $k")
    cases+=("primers$n.k$k myers,pigeonhole $FASTA -p $SETS/primers$n.fa -k $k")
  done
done
cases+=("lines.k2 myers,pigeonhole $FASTA --alphabet text --lines -p $SETS/primers1.fa -k 2")
cases+=("guides20.m4 mismatch,pigeonhole $FASTA -p $SETS/guides20ngg.fa -m 4")
cases+=("len100.k5 myers,pigeonhole $FASTA -p $SETS/len100.fa -k 5")
cases+=("len1000.k50 myers,pigeonhole $FASTA -p $SETS/len1000.fa -k 50")
cases+=("m64.k3 myers,pigeonhole $FASTA -p $SETS/m64.fa -k 3")
for k in 1 2; do
  cases+=("lord.k$k myers,pigeonhole $BIBLE --alphabet text --report ends -e LORD -k $k")
  cases+=("mercy.k$k myers,pigeonhole $BIBLE --alphabet text --report ends -e for_his_mercy_endureth_for_ever -k $k")
done
for h in 1 2; do cases+=("kmers31.m$h mismatch,pigeonhole $READS -p $SETS/kmers31.fa -m $h"); done
for e in 1 2; do cases+=("adapters20.m$e mismatch,pigeonhole $READS --strand + -p $SETS/adapters20.fa -m $e"); done

pin=()
[ "$THREADS" = 1 ] && pin=(taskset -c "${CORE:-0}")
for c in "${cases[@]}"; do
  read -r name engines target opts <<< "$c"
  [ -n "${CASES:-}" ] && case " $CASES " in *" $name "*) ;; *) continue ;; esac
  opts=${opts//for_his_mercy_endureth_for_ever/for his mercy endureth for ever}
  read -r -a args <<< "$opts"
  # the Bible pattern holds blanks: rebuild -e's argument
  if [[ $name == mercy.* ]]; then args=(--alphabet text --report ends -e "for his mercy endureth for ever" -k "${name#mercy.k}"); fi
  cargs=()
  for a in "${args[@]}"; do [ "$a" = --lines ] || cargs+=("$a"); done # --lines is the reader's
  auto=$("$SEQMATCH" compile --explain "${cargs[@]}" 2> /dev/null | awk '/^engine /{ print ($0 ~ /pigeonhole/) ? "pigeonhole" : ($0 ~ /Myers/) ? "myers" : "mismatch" }' || true)
  list=(auto ${engines//,/ })
  declare -A W=() C=()
  for ((r = 0; r < REPS; r++)); do
    for e in "${list[@]}"; do
      # an engine three times slower than the fastest after the first round is not run again
      if [ "$r" -gt 0 ] && awk -v a="$(echo "${W[$e]}" | median)" -v b="$(for x in "${list[@]}"; do echo "${W[$x]}" | median; done | minimum)" 'BEGIN { exit !(a > 3 * b) }'; then continue; fi
      timed_limit 600 "$WORK/planner/out" "${pin[@]}" "$SEQMATCH" search -t "$THREADS" --format count --engine "$e" "${args[@]}" "$target"
      W[$e]="${W[$e]:-} $LAST_S"
      C[$e]="${C[$e]:-} $LAST_CPU"
    done
  done
  best=""
  for e in "${list[@]}"; do
    w=$(echo "${W[$e]}" | median)
    echo "$name,$e,$auto,$w,$(echo "${C[$e]}" | median),$(echo "${W[$e]}" | wc -w)" >> "$CSV"
    if [ "$e" != auto ] && { [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; }; then best=$w; fi
  done
  a=$(echo "${W[auto]}" | median)
  ch=$(echo "${W[$auto]:-${W[auto]}}" | median)
  say "$name: auto ($auto) $a s; --engine $auto $ch s; fastest forced $best s; ratio $(awk -v a="$ch" -v b="$best" 'BEGIN { printf "%.2f", a / b }')"
  unset W C
done
say "results: $CSV"
