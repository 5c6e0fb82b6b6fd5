#!/usr/bin/env bash
# The landing cases of the exact and approximate issues on one core and on
# two cores (taskset), whole command, ROUNDS rounds of REPS runs each:
#   - 100 primers (20 nt) x 2 edits, both strands, the panel as FASTA
#   - 20 CRISPR guides + NGG x 4 mismatches, both strands, the panel as FASTA
#   - 1000 / 8000 / 16000 8-mers and 3000 300-mers, the panel as one text record
# Prints one line per round and case: every time, sorted, then the median.
#
# Optional parts, each when its tool is given in the environment:
#   SCANRATE=bench/scan_rate, HSCOUNT=bench/hyperscan_count: the scan alone on one core, the two
#     tools side by side in alternating rounds (the 8-mer sets; 3000 300-mers once each)
#   BUILDER=bench/automaton_build and BIG=3000 x 9000 nt set: the automaton builders alone and
#     the whole compile (--engine automaton --build-threads 0 and 2) on two cores
#   M64=64 x 64 nt FASTA: Myers (--engine myers) and the planner, -k 3, one core, one run each
# usage: bench/run-cores.sh SEQMATCH DATA_DIR SETS_DIR
#   DATA_DIR holds panel.fa and panel.seq (bench/fetch-data.sh);
#   SETS_DIR holds primers100.fa, guides20ngg.fa and k8_1000.txt ... k300_3000.txt
#   (bench/run-approx.sh and bench/run-exact.sh sample them with fixed seeds).
# environment: ROUNDS (3), REPS (5), CORES1 ("0"), CORES2 ("0,1")
set -euo pipefail
SEQMATCH=${1:?usage: run-cores.sh SEQMATCH DATA_DIR SETS_DIR}
DATA=${2:?data folder}
SETS=${3:?pattern set folder}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-5}
CORES1=${CORES1:-0}
CORES2=${CORES2:-0,1}
command -v taskset >/dev/null || { echo "run-cores.sh: taskset (util-linux) is needed" >&2; exit 2; }

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) cpus"
echo "# seqmatch $("$SEQMATCH" --version 2>/dev/null | head -1)"

# timed LABEL CORES THREADS ARGS...: REPS wall times of one command, sorted, and their median.
timed() {
  local label=$1 cores=$2 threads=$3; shift 3
  local out times
  out=$(mktemp)
  times=$(for _ in $(seq "$REPS"); do
    s=$EPOCHREALTIME
    taskset -c "$cores" "$SEQMATCH" search -t "$threads" --format count "$@" > "$out"
    e=$EPOCHREALTIME
    awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }'
  done | sort -n)
  printf '%-44s cpus %-5s median %s  [%s]  %s\n' "$label" "$cores" \
    "$(echo "$times" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
    "$(echo "$times" | tr '\n' ' ' | sed 's/ $//')" "$(tail -1 "$out" | tr '\t' ' ')"
  rm -f "$out"
}

for round in $(seq "$ROUNDS"); do
  echo "## round $round"
  for pair in "$CORES1 1" "$CORES2 2"; do
    set -- $pair
    timed "100 primers -k 2 (auto)" "$1" "$2" -k 2 -p "$SETS/primers100.fa" "$DATA/panel.fa"
    timed "20 guides + NGG -m 4 (auto)" "$1" "$2" -m 4 -p "$SETS/guides20ngg.fa" "$DATA/panel.fa"
  done
done
for s in k8_1000 k8_8000 k8_16000 k300_3000; do
  for pair in "$CORES1 1" "$CORES2 2"; do
    set -- $pair
    timed "$s, text" "$1" "$2" --alphabet text -p "$SETS/$s.txt" "$DATA/panel.seq"
  done
done
if [ -n "${SCANRATE:-}" ] && [ -n "${HSCOUNT:-}" ]; then
  echo "## the scan alone, one core (cpus $CORES1): Hyperscan (median of 3) and seqmatch (median of 5)"
  for round in $(seq "$ROUNDS"); do
    for s in k8_1000 k8_8000 k8_16000; do
      echo "round $round $s hyperscan: $(taskset -c "$CORES1" "$HSCOUNT" -r 3 "$SETS/$s.txt" "$DATA/panel.seq" | tr '\t' ' ')"
      echo "round $round $s seqmatch:  $(taskset -c "$CORES1" "$SCANRATE" -r 5 "$SETS/$s.txt" "$DATA/panel.seq" | tr '\t' ' ')"
    done
  done
  echo "k300_3000 hyperscan: $(taskset -c "$CORES1" "$HSCOUNT" -r 1 "$SETS/k300_3000.txt" "$DATA/panel.seq" | tr '\t' ' ')"
  echo "k300_3000 seqmatch:  $(taskset -c "$CORES1" "$SCANRATE" -r 5 "$SETS/k300_3000.txt" "$DATA/panel.seq" | tr '\t' ' ')"
fi
if [ -n "${BUILDER:-}" ] && [ -n "${BIG:-}" ]; then
  echo "## automaton build, $(wc -l < "$BIG") keys (cpus $CORES2)"
  taskset -c "$CORES2" "$BUILDER" "$BIG" 2 3
  db=$(mktemp)
  for round in $(seq "$ROUNDS"); do
    for bt in 0 2; do
      times=$(for _ in 1 2 3; do
        s=$EPOCHREALTIME
        taskset -c "$CORES2" "$SEQMATCH" compile --engine automaton --build-threads "$bt" --alphabet text -p "$BIG" -o "$db"
        e=$EPOCHREALTIME
        awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }'
      done | sort -n)
      echo "compile --engine automaton --build-threads $bt: median $(echo "$times" | sed -n 2p) [$(echo $times)]"
    done
  done
  rm -f "$db"
fi
if [ -n "${M64:-}" ]; then
  REPS=1 timed "64 x 64 nt -k 3 --engine myers" "$CORES1" 1 -k 3 --engine myers -p "$M64" "$DATA/panel.fa"
  REPS=1 timed "64 x 64 nt -k 3 (auto)" "$CORES1" 1 -k 3 -p "$M64" "$DATA/panel.fa"
fi
