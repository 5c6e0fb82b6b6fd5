#!/usr/bin/env bash
# Memory with dense hits (bench/results/history.md, "Memory with dense hits"): peak RSS and time of
# the dense cases at 1, 2 and 4 threads, in every output mode that holds hits:
#   60 copies of A over 2 MB of A (120 million hits); 50 copies over 1 MB
#   -e A -e AA over 30 MB of poly-A
#   60 copies of AAAA -k 1 over 2 MB of A (edit runs across every border), counted and per record
#   100 random 10-mers (seed 5) -k 3, counted, over an E. coli genome (GENOME)
#   all 256 4-mers over the panel (PANEL; TSV, -t 2 only unless ALL_THREADS=1)
# Targets: 256 MB for TSV, 64 MB for counts, filter, records and demux. Hits go to /dev/null.
#
# usage: bench/run-memory.sh SEQMATCH DATA_DIR [WORK_DIR]
# environment: GENOME (DATA/genomes/E.Coli_mg1655_contigs.fa), PANEL (DATA/panel.fa)
# Output: one line per run: case, threads, mode, wall s, peak RSS MB, over (1 when past its
# target). Exit 1 when a run is past its target, 2 when one failed.
set -euo pipefail
seqmatch=${1:?usage: bench/run-memory.sh SEQMATCH DATA_DIR [WORK_DIR]}
data=${2:?}
work=${3:-$(mktemp -d)}
genome=${GENOME:-$data/genomes/E.Coli_mg1655_contigs.fa}
panel=${PANEL:-$data/panel.fa}
mkdir -p "$work"
poly() { { printf '>polyA\n'; head -c "$1" /dev/zero | tr '\0' A; printf '\n'; } >"$2"; }
poly 2000000 "$work/a2m.fa"
poly 1000000 "$work/a1m.fa"
poly 30000000 "$work/a30m.fa"
for i in $(seq 60); do echo A; done >"$work/a60.txt"
head -n 50 "$work/a60.txt" >"$work/a50.txt"
for i in $(seq 60); do echo AAAA; done >"$work/a60x4.txt"
python3 -c "
import random
r = random.Random(5)
print(''.join(''.join(r.choice('ACGT') for _ in range(10)) + '\n' for _ in range(100)), end='')" >"$work/k10.txt"
python3 -c "
import itertools
print(''.join(''.join(p) + '\n' for p in itertools.product('ACGT', repeat=4)), end='')" >"$work/all4.txt"
over=0 failed=0
# measure CASE THREADS MODE LIMIT_MB ARGS...
measure() {
  local name=$1 t=$2 mode=$3 limit=$4
  shift 4
  rm -rf "$work/dm"
  set +e
  /usr/bin/time -f '%e %M' -o "$work/time" "$seqmatch" "$@" >/dev/null 2>"$work/err"
  local rc=$?
  set -e
  read -r wall rss <"$work/time"
  local mb=$((rss / 1024)) past=0
  [ $mb -gt "$limit" ] && past=1 && over=1
  [ $rc -gt 1 ] && failed=1 && echo "$name -t $t $mode: exit $rc: $(head -1 "$work/err")" >&2
  printf '%s\t%d\t%s\t%s\t%d\t%d\n' "$name" "$t" "$mode" "$wall" $mb $past
}
printf 'case\tthreads\tmode\twall_s\trss_mb\tover\n'
for t in 1 2 4; do
  for c in "60xA-2MB|a60.txt|a2m.fa" "50xA-1MB|a50.txt|a1m.fa"; do
    IFS='|' read -r name pats text <<<"$c"
    measure "$name" $t tsv 256 search -t $t -p "$work/$pats" "$work/$text"
    measure "$name" $t count 64 search -t $t -p "$work/$pats" --format count "$work/$text"
    measure "$name" $t records 64 search -t $t -p "$work/$pats" --format records "$work/$text"
    measure "$name" $t filter 64 filter -t $t -p "$work/$pats" "$work/$text"
    measure "$name" $t demux-any 64 demux -t $t --anchor any -p "$work/$pats" -o "$work/dm" "$work/$text"
  done
  measure "A-AA-30MB" $t tsv 256 search -t $t -e A -e AA "$work/a30m.fa"
  # one run of edit ends per pattern over the whole record (--report best), summed by the threads
  measure "60xAAAA-k1-2MB" $t count 64 search -t $t -k 1 -p "$work/a60x4.txt" --format count "$work/a2m.fa"
  measure "60xAAAA-k1-2MB" $t records 64 search -t $t -k 1 -p "$work/a60x4.txt" --format records "$work/a2m.fa"
  measure "10mers-k3" $t count 64 search -t $t -k 3 -p "$work/k10.txt" --format count "$genome"
  if [ $t = 2 ] || [ "${ALL_THREADS:-0}" = 1 ]; then
    measure "256-4mers-panel" $t tsv 256 search -t $t -p "$work/all4.txt" "$panel"
  fi
done
[ $failed -eq 0 ] || exit 2
[ $over -eq 0 ] || exit 1
