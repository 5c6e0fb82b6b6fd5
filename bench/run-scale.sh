#!/usr/bin/env bash
# Many patterns (bench/results/history.md, "Many patterns"): the whole command, compile and search,
# with its peak memory, in alternating rounds:
#   100,000 random patterns of 12-32 nt, -m 2 (and -k 2), over the first 500 kbp of a genome
#   10^6 random exact patterns of 10-60 nt over the first 1.6 Mbp of a genome
# The patterns come from bench/random_patterns.py with fixed seeds (1 and 2), the genome is the
# first record of GENOME (default DATA/genomes/COL.fa) cut to those lengths.
#
# usage: bench/run-scale.sh SEQMATCH DATA_DIR [WORK_DIR]
# environment: ROUNDS (3), THREADS (2), EDITS (0: also -k 2 when 1), GENOME
# Output: one line per run (set, round, wall s, user + sys s, peak RSS MB, total hits), then the
# median wall time and the largest peak per set. Exit 2 when two rounds count differently.
set -euo pipefail
seqmatch=${1:?usage: bench/run-scale.sh SEQMATCH DATA_DIR [WORK_DIR]}
data=${2:?}
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
genome=${GENOME:-$data/genomes/COL.fa}
mkdir -p "$work"
python3 "$here/random_patterns.py" -n 100000 --min 12 --max 32 -s 1 -o "$work/p100k.txt"
python3 "$here/random_patterns.py" -n 1000000 --min 10 --max 60 -s 2 -o "$work/p1m.txt"
# the first record of the genome, cut to N bases
cut_genome() {
  awk -v n="$1" 'NR == 1 { print; next } /^>/ { exit } { if (got + length($0) >= n) { print substr($0, 1, n - got); exit }
    print; got += length($0) }' "$genome" >"$2"
}
cut_genome 500000 "$work/g500k.fa"
cut_genome 1600000 "$work/g1600k.fa"
sets=("m2|-m 2 -p $work/p100k.txt $work/g500k.fa" "exact|-p $work/p1m.txt $work/g1600k.fa")
[ "${EDITS:-0}" = 1 ] && sets+=("k2|-k 2 -p $work/p100k.txt $work/g500k.fa")
printf 'set\tround\twall_s\tcpu_s\trss_mb\ttotal\n'
bad=0
for ((r = 1; r <= rounds; r++)); do
  for s in "${sets[@]}"; do
    name=${s%%|*} args=${s#*|}
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$seqmatch" search -t "$threads" --format count $args >"$work/out.$name"
    read -r wall user sys rss <"$work/time"
    total=$(tail -n 1 "$work/out.$name" | cut -f 2)
    printf '%s\t%d\t%s\t%.2f\t%d\t%s\n' "$name" "$r" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) "$total"
    if [ -f "$work/total.$name" ] && [ "$(cat "$work/total.$name")" != "$total" ]; then bad=1; fi
    echo "$total" >"$work/total.$name"
  done
done | tee "$work/runs.tsv"
for s in "${sets[@]}"; do
  name=${s%%|*}
  walls=$(awk -F'\t' -v n="$name" '$1 == n { print $3 }' "$work/runs.tsv" | sort -g)
  cpus=$(awk -F'\t' -v n="$name" '$1 == n { print $4 }' "$work/runs.tsv" | sort -g)
  k=$(echo "$walls" | wc -l)
  peak=$(awk -F'\t' -v n="$name" '$1 == n && $5 > m { m = $5 } END { print m }' "$work/runs.tsv")
  printf '%s: median wall %s s, median CPU %s s over %d rounds, peak RSS %s MB\n' "$name" \
    "$(echo "$walls" | sed -n "$(((k + 1) / 2))p")" "$(echo "$cpus" | sed -n "$(((k + 1) / 2))p")" "$k" "$peak"
done
[ $bad -eq 0 ] || { echo "rounds counted differently" >&2; exit 2; }
