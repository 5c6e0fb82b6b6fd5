#!/usr/bin/env bash
# One run on a second machine, of binaries built elsewhere: the approximate planner's fit scans
# (bench/run-planner.sh fit) and the two-core scaling of the search command, in a few minutes.
#
# usage: OUT=DIR bench/run-planner-remote.sh DATA [BIN]
#   DATA  a folder with panel.fa or panel.fa.gz, and kjv.txt or kjv.txt.gz (panel.seq or
#         panel.seq.gz optional: made from panel.fa when absent); compressed files are unpacked
#         into $WORK (the folder itself is only read)
#   BIN   a folder with the binaries seqmatch and scan_rate (default: build/seqmatch and
#         bench/scan_rate of this tree; make -C bench scan_rate LIBDIR=../build builds it)
#   OUT   where the results go (made when absent)
#
# 1. Scaling (first, on a quiet machine): seqmatch search --format count over panel.fa, -t 1
#    pinned to one core (taskset -c C0), -t 2 to two (taskset -c C0,C1) and -t 2 to one core
#    (the threads' own cost), alternating, RATIO_REPS runs each after one warm-up round; wall
#    seconds and user + system CPU seconds of every run, medians and the ratio of the medians. Cases: one 20-mer -k 3
#    (GTGCCAGCAGCCGCGGTAAT, both strands), 1000 8-mers exact (run-exact.sh's k8_1000 sampling),
#    100 primers -k 2 (run-approx.sh's primers100 sampling).
#      output: OUT/scaling.csv (case, threads: 1, 2 or 2one, rep, wall_s, cpu_s), OUT/scaling.txt
# 2. Fit scans: bench/run-planner.sh fit at the levels of LEVELS, its (level, case) jobs spread
#    over FIT_CORES (one partition per core, run side by side, the costliest jobs first by the
#    rows of an earlier fit when bench/results holds one), REPS scans each.
#      output: OUT/planner-fit.csv (the rows of every partition), OUT/fit.txt
#      (python3 bench/fit_planner.py over them), OUT/parts/ (each partition's own files)
#
# Environment: RATIO_REPS (default 7), RATIO_CORES (default "0 1"), REPS (fit, default 3),
# FIT_CORES (default: every core but the two of RATIO_CORES, at most 14), LEVELS (default
# "native avx2 sse"), FIT_CASES (only these cases of run-planner.sh), SKIP_FIT / SKIP_RATIO (set to
# leave a part out), WORK (scratch and the unpacked data; default a temporary folder, removed).
# Needs bash, awk, python3, taskset, gzip; no network, no compiler, no git.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -ge 1 ] && [ -n "${OUT:-}" ] || { echo "usage: OUT=DIR bench/run-planner-remote.sh DATA [BIN]" >&2; exit 2; }
SRC_DATA=$(cd "$1" && pwd)
if [ -n "${2:-}" ]; then
  SEQMATCH=$(cd "$2" && pwd)/seqmatch
  SCAN_RATE_BIN=$(cd "$2" && pwd)/scan_rate
else
  SEQMATCH=$root/build/seqmatch
  SCAN_RATE_BIN=$here/scan_rate
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ -z "${WORK:-}" ]; then # unpacked data and scratch, outside OUT (OUT may be copied back whole)
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-remote.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
RATIO_REPS=${RATIO_REPS:-7}
read -r C0 C1 <<< "${RATIO_CORES:-0 1}"
REPS=${REPS:-3}
LEVELS=${LEVELS:-native avx2 sse}
source "$here/lib.sh"
t_start=$EPOCHREALTIME
[ -x "$SEQMATCH" ] || { say "no seqmatch binary at $SEQMATCH"; exit 2; }

# ---------------------------------------------------------------- the data
DATA=$WORK/data
mkdir -p "$DATA"
unpack() { # NAME: DATA/NAME from SRC_DATA/NAME or SRC_DATA/NAME.gz (0: found)
  [ -s "$DATA/$1" ] && return 0
  if [ -s "$SRC_DATA/$1" ]; then ln -sf "$SRC_DATA/$1" "$DATA/$1"
  elif [ -s "$SRC_DATA/$1.gz" ]; then gzip -dc "$SRC_DATA/$1.gz" > "$DATA/$1.tmp" && mv "$DATA/$1.tmp" "$DATA/$1"
  else return 1; fi
}
unpack panel.fa || { say "no panel.fa(.gz) in $SRC_DATA"; exit 2; }
unpack kjv.txt || say "no kjv.txt(.gz) in $SRC_DATA: the fit's Bible cases will fail"
if ! unpack panel.seq; then # every sequence byte of panel.fa, upper case, one line (fetch-data.sh)
  awk '!/^>/' "$DATA/panel.fa" | tr -d '\r\n' | tr 'a-z' 'A-Z' > "$DATA/panel.seq.tmp"
  mv "$DATA/panel.seq.tmp" "$DATA/panel.seq"
fi
say "data ready in $(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
{
  machine_info
  echo "seqmatch: $SEQMATCH ($(sha256sum "$SEQMATCH" | cut -c1-16))"
  echo "scaling cores: $C0 (one thread; two threads on one core), $C0,$C1 (two threads); runs $RATIO_REPS each, alternating"
} > "$OUT/env.txt"

# ---------------------------------------------------------------- 1. scaling
SETS=$WORK/sets
mkdir -p "$SETS"
[ -s "$SETS/k8_1000.txt" ] || python3 "$here/sample_patterns.py" -n 1000 -l 8 -s 1001 --unique -o "$SETS/k8_1000.txt" "$DATA/panel.seq"
[ -s "$SETS/primers100.fa" ] || python3 "$here/sample_patterns.py" -n 100 -l 20 -s 2001 --unique --fasta -o "$SETS/primers100.fa" "$DATA/panel.seq"
if [ -z "${SKIP_RATIO:-}" ]; then
  cases=(
    "p1.k3|-e GTGCCAGCAGCCGCGGTAAT -k 3"
    "k8_1000|-p $SETS/k8_1000.txt"
    "primers100.k2|-p $SETS/primers100.fa -k 2"
  )
  echo "case,threads,rep,wall_s,cpu_s" > "$OUT/scaling.csv"
  : > "$OUT/scaling.txt"
  for c in "${cases[@]}"; do
    name=${c%%|*}
    read -r -a args <<< "${c#*|}"
    declare -A W=() C=() R=()
    for ((r = 0; r <= RATIO_REPS; r++)); do # run 0: the warm-up round, not counted
      # 1: one thread on one core; 2: two threads on two cores; 2one: two threads on one core
      # (what the threads cost in software, apart from what a second busy core costs)
      for m in 1 2 2one; do
        t=${m%one} pin=$C0
        [ "$m" = 2 ] && pin=$C0,$C1
        timed_limit 300 "$WORK/scaling.out" taskset -c "$pin" "$SEQMATCH" search -t "$t" --format count "${args[@]}" "$DATA/panel.fa"
        [ "$LAST_RC" = 0 ] || { say "scaling $name -t $t failed: $(head -c 300 "$WORK/scaling.out.err")"; exit 1; }
        R[$m]=$(md5sum < "$WORK/scaling.out")
        [ "$r" = 0 ] && continue
        echo "$name,$m,$r,$LAST_S,$LAST_CPU" >> "$OUT/scaling.csv"
        W[$m]="${W[$m]:-} $LAST_S"
        C[$m]="${C[$m]:-} $LAST_CPU"
      done
      [ "${R[1]}" = "${R[2]}" ] && [ "${R[1]}" = "${R[2one]}" ] || { say "scaling $name: -t 1 and -t 2 counted differently"; exit 1; }
    done
    w1=$(echo "${W[1]}" | median) w2=$(echo "${W[2]}" | median) w3=$(echo "${W[2one]}" | median)
    c1=$(echo "${C[1]}" | median) c2=$(echo "${C[2]}" | median) c3=$(echo "${C[2one]}" | median)
    line=$(awk -v n="$name" -v w1="$w1" -v w2="$w2" -v w3="$w3" -v c1="$c1" -v c2="$c2" -v c3="$c3" -v r="$RATIO_REPS" 'BEGIN {
      printf "%-14s -t 1: %.4f s wall %.4f s CPU | -t 2: %.4f s wall %.4f s CPU | 1/2 threads wall %.2fx | -t 2 on one core: %.4f s wall %.4f s CPU (medians of %d)", n, w1, c1, w2, c2, w1 / w2, w3, c3, r }')
    echo "$line" >> "$OUT/scaling.txt"
    say "$line"
    unset W C R
  done
fi

# ---------------------------------------------------------------- 2. fit scans
if [ -z "${SKIP_FIT:-}" ]; then
  [ -x "$SCAN_RATE_BIN" ] || { say "no scan_rate binary at $SCAN_RATE_BIN"; exit 2; }
  ncpu=$(nproc)
  if [ -z "${FIT_CORES:-}" ]; then
    FIT_CORES=$(for ((i = 0; i < ncpu; i++)); do [ "$i" = "$C0" ] || [ "$i" = "$C1" ] || echo "$i"; done | head -n 14 | tr '\n' ' ')
    [ -n "$FIT_CORES" ] || FIT_CORES=$C0
  fi
  read -r -a cores <<< "$FIT_CORES"
  # the case names, from run-planner.sh's own table
  names=${FIT_CASES:-$(awk '/^  cases=\($/ { on = 1; next } on && /^  \)$/ { exit } on { gsub(/"/, ""); print $1 }' "$here/run-planner.sh")}
  # (level, case) jobs, costliest first (the seconds of an earlier fit's rows, else one each),
  # dealt to the least loaded partition
  old=""
  for f in "$here"/results/planner-fit-h200host.csv "$here"/results/planner-fit-xeon.csv; do [ -s "$f" ] && { old=$f; break; }; done
  mkdir -p "$OUT/parts"
  python3 - "$OUT/parts" "${#cores[@]}" "$old" "$LEVELS" $names <<'EOF'
import csv, sys
parts_dir, nparts, old, levels, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5:]
cost = {}
if old:
    for r in csv.DictReader(open(old)):
        key = (r["level"], r["case"])
        cost[key] = cost.get(key, 0.0) + float(r["ns_per_byte"]) * int(r["bytes"]) / 1e9
jobs = sorted(((cost.get((l, n), 1.0), l, n) for l in levels for n in names), reverse=True)
load = [0.0] * nparts
lists = [[] for _ in range(nparts)]
for c, l, n in jobs:
    k = load.index(min(load))
    load[k] += c
    lists[k].append((l, n))
for k in range(nparts):
    with open(f"{parts_dir}/jobs.{k}", "w") as f:
        for l, n in lists[k]:
            f.write(f"{l} {n}\n")
EOF
  # the sets, the text and the environment once, before the partitions share them
  WORK="$WORK" RESULTS="$OUT/parts/prep" SEQMATCH_BENCH_DATA="$DATA" SCAN_RATE_BIN="$SCAN_RATE_BIN" \
    FIT_CASES=none LEVELS=native bash "$here/run-planner.sh" fit 2> "$OUT/parts/prep.log"
  t_fit=$EPOCHREALTIME
  pids=()
  for ((k = 0; k < ${#cores[@]}; k++)); do
    (
      while read -r level name; do
        WORK="$WORK" RESULTS="$OUT/parts/$k" SEQMATCH_BENCH_DATA="$DATA" SCAN_RATE_BIN="$SCAN_RATE_BIN" \
          FIT_CASES="$name" LEVELS="$level" CORE="${cores[$k]}" REPS="$REPS" bash "$here/run-planner.sh" fit
      done < "$OUT/parts/jobs.$k"
    ) 2> "$OUT/parts/log.$k" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || say "a fit partition failed (see $OUT/parts/log.*)"; done
  say "fit scans: $(awk -v a="$t_fit" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s on cores $FIT_CORES"
  first=1
  for f in "$OUT"/parts/*/planner-fit.csv; do
    if [ "$first" = 1 ]; then cat "$f"; first=0; else tail -n +2 "$f"; fi
  done > "$OUT/planner-fit.csv"
  cp "$OUT/parts/prep/env-planner.txt" "$OUT/env-planner.txt" 2> /dev/null || true
  echo "partitions: ${#cores[@]} on cores $FIT_CORES, side by side; reps $REPS; levels $LEVELS" >> "$OUT/env-planner.txt"
  python3 "$here/fit_planner.py" "$OUT/planner-fit.csv" > "$OUT/fit.txt" 2>&1 || say "fit_planner.py failed (see $OUT/fit.txt)"
  say "rows: $(($(wc -l < "$OUT/planner-fit.csv") - 1)); fit: $OUT/fit.txt"
fi
say "total $(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s; results in $OUT"
