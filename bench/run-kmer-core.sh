#!/bin/bash
# The k-mer engine's scan on one core: its defaults, the AVX2 gathers (SEQMATCH_KMER_GATHER=1)
# and the bitmap tested by byte loads (SEQMATCH_KMER_GATHER=0), an older build beside it
# (optional) and the automaton, on the three 8-mer sets over panel.seq, ROUNDS rounds
# interleaved (every scan a median of 5).
#
# usage: bench/run-kmer-core.sh SCAN_RATE DATA SETS [OLD_SCAN_RATE]
#   SCAN_RATE  bench/scan_rate (make -C bench scan_rate LIBDIR=BUILD)
#   DATA       folder with panel.seq (bench/fetch-data.sh)
#   SETS       folder with k8_1000.txt, k8_8000.txt, k8_16000.txt (bench/sample_patterns.py)
# Env: ROUNDS (5), CORE (2: the core taskset pins to).
set -euo pipefail
bin=$1 data=$2 sets=$3 old=${4:-}
rounds=${ROUNDS:-5} core=${CORE:-2}
date -u; lscpu | grep -E "Model name|L1d|L2|L3"; cat /proc/loadavg
S() { taskset -c "$core" "$@" | tr '\t' '\n' | grep -E "^(patterns|count|engine|scan_s|scan_MBps|scan_min_s)=" | tr '\n' ' '; echo; }
for round in $(seq "$rounds"); do
  echo "## round $round"
  for s in k8_1000 k8_8000 k8_16000; do
    args=(-r 5 -a dna -s + "$sets/$s.txt" "$data/panel.seq")
    [ -n "$old" ] && { echo -n "old kmer $s: "; S "$old" -e kmer "${args[@]}"; }
    echo -n "new kmer $s: "; S "$bin" -e kmer "${args[@]}"
    echo -n "new kmer gather $s: "; SEQMATCH_KMER_GATHER=1 S "$bin" -e kmer "${args[@]}"
    echo -n "new kmer nogather $s: "; SEQMATCH_KMER_GATHER=0 S "$bin" -e kmer "${args[@]}"
    echo -n "new automaton $s: "; S "$bin" -e automaton "${args[@]}"
  done
done
cat /proc/loadavg
