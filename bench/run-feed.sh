#!/usr/bin/env bash
# The feed: how fast the whole command reads its input, next to the tools that only read or
# decompress the same file, in one run. Plain, gzip and BGZF copies of one FASTA (in page
# cache: each is read once before timing), whole `seqmatch search` (1000 8-mers, counting, so
# that output costs nothing) and `seqmatch dfa` (a 4-state DFA over every byte) at each
# thread count, against cat, zcat, igzip -dc, libdeflate-gunzip -c, pigz -dc and bgzip -d -@T
# where they are installed.
#
# usage: bench/run-feed.sh SEQMATCH FASTA SETS_DIR [THREADS...]
#   FASTA: a plain FASTA file; FASTA.gz (gzip) and FASTA.bgz (bgzip) beside it are used when
#   present (made with pigz / bgzip otherwise). SETS_DIR holds k8_1000.txt.
#   THREADS: the thread counts to run (default: 1 2).
# environment: ROUNDS (5): rounds; every command runs once per round, in the same order.
#   GPU=1: `search --gpu` beside each search (the GPU feed), and for BGZF once more with
#   SEQMATCH_GPU_INFLATE=0 (no block inflated on the GPU).
#   DFA=0: no `seqmatch dfa` runs. COMPRESSED=0: the plain file only.
#   BASELINES: the decompressors run beside (default: zcat igzip libdeflate-gunzip pigz bgzip,
#   those installed).
#   DFA_BENCH: the dfa_bench binary (bench/dfa/run.sh builds it); when set, the same DFA is also
#   run by the library over the file already in memory ("dfa-in-memory"): the engine's
#   own rate, which the whole `seqmatch dfa` is compared with.
# Output: one line per run (round, input, what, threads, seconds), then per (input, what,
# threads) the median seconds, MB/s of the file's uncompressed bytes, and the speed-up over
# one thread; CSV of the medians in FEED_CSV when set.
set -euo pipefail
SM=${1:?usage: run-feed.sh SEQMATCH FASTA SETS_DIR [THREADS...]}
FA=${2:?FASTA file}
SETS=${3:?pattern sets}
shift 3
THREADS=("$@")
[ ${#THREADS[@]} -gt 0 ] || THREADS=(1 2)
ROUNDS=${ROUNDS:-5} GPU=${GPU:-0} DFA=${DFA:-1} COMPRESSED=${COMPRESSED:-1}
BASELINES=" ${BASELINES-zcat igzip libdeflate-gunzip pigz bgzip} "
have() { command -v "$1" > /dev/null && [[ "$BASELINES" == *" $1 "* ]]; }
[ "$COMPRESSED" = 1 ] || { FA_GZ_SKIP=1; }
[ -n "${FA_GZ_SKIP:-}" ] || [ -f "$FA.gz" ] || { if have pigz; then pigz -6 -c "$FA" > "$FA.gz"; else gzip -6 -c "$FA" > "$FA.gz"; fi; }
[ -n "${FA_GZ_SKIP:-}" ] || [ -f "$FA.bgz" ] || { command -v bgzip > /dev/null && bgzip -@"$(nproc)" -c "$FA" > "$FA.bgz"; } || true
bytes=$(stat -c %s "$FA")
dfa=$(mktemp)
results=$(mktemp)
trap 'rm -f "$dfa" "$results"' EXIT
{ echo "alphabet bytes"; echo "states 4"; echo "start 0"; echo "accept 0"
  for s in 0 1 2 3; do
    awk -v s="$s" 'BEGIN { printf "%d", s; for (b = 0; b < 256; b++) printf " %d", b == 10 ? (s + 1) % 4 : s; print "" }'
  done; } > "$dfa"
for f in "$FA" "$FA.gz" "$FA.bgz"; do [ -f "$f" ] && cat "$f" > /dev/null; done
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) cores; $($SM --version | tail -1)"
echo "# $FA: $bytes bytes; .gz $([ -f "$FA.gz" ] && stat -c %s "$FA.gz" || echo absent) bytes; .bgz $([ -f "$FA.bgz" ] && stat -c %s "$FA.bgz" || echo absent)"

# run ROUND INPUT WHAT THREADS CMD...: times CMD (stdout discarded), one result line
run() {
  local round=$1 input=$2 what=$3 t=$4 t0 t1
  shift 4
  t0=$EPOCHREALTIME
  "$@" > /dev/null 2>&1 || { rc=$?; [ "$rc" = 1 ] || echo "# $what failed ($rc)" >&2; }
  t1=$EPOCHREALTIME
  printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$input" "$what" "$t" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" |
    tee -a "$results"
}

printf 'round\tinput\twhat\tthreads\tseconds\n'
for round in $(seq "$ROUNDS"); do
  run "$round" plain cat 1 cat "$FA"
  for t in "${THREADS[@]}"; do
    run "$round" plain search "$t" "$SM" search -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA"
    [ "$GPU" = 1 ] && run "$round" plain search-gpu "$t" "$SM" search --gpu -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA"
    [ "$DFA" = 1 ] && run "$round" plain dfa "$t" "$SM" dfa --dfa "$dfa" -t "$t" "$FA"
  done
  if [ -n "${DFA_BENCH:-}" ]; then
    # the sequential run's median of 3, over the file read into memory before the clock starts
    engine=$("$DFA_BENCH" --reps 3 --dfa "$dfa" --text "$FA" | awk '/sequential/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "MB/s") { print $i; exit } }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$round" plain dfa-in-memory 1 "$(awk -v b="$bytes" -v r="$engine" 'BEGIN { printf "%.4f", b / r / 1e6 }')" |
      tee -a "$results"
  fi
  [ -z "${FA_GZ_SKIP:-}" ] && [ -f "$FA.gz" ] || continue
  have zcat && run "$round" gzip zcat 1 zcat "$FA.gz"
  have igzip && run "$round" gzip igzip 1 igzip -dc "$FA.gz"
  have libdeflate-gunzip && run "$round" gzip libdeflate-gunzip 1 libdeflate-gunzip -c "$FA.gz"
  have pigz && run "$round" gzip pigz 1 pigz -dc "$FA.gz"
  for t in "${THREADS[@]}"; do
    run "$round" gzip search "$t" "$SM" search -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA.gz"
    [ "$GPU" = 1 ] && run "$round" gzip search-gpu "$t" "$SM" search --gpu -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA.gz"
  done
  if [ -f "$FA.bgz" ] && [ -z "${FA_GZ_SKIP:-}" ]; then
    for t in "${THREADS[@]}"; do
      have bgzip && run "$round" bgzf bgzip "$t" bgzip -d -@"$t" -c "$FA.bgz"
      run "$round" bgzf search "$t" "$SM" search -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA.bgz"
      [ "$GPU" = 1 ] && run "$round" bgzf search-gpu "$t" "$SM" search --gpu -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA.bgz"
      # the same with every block inflated on the CPU (nvCOMP, where found, inflates some on the GPU)
      [ "$GPU" = 1 ] && run "$round" bgzf search-gpu-cpu-inflate "$t" env SEQMATCH_GPU_INFLATE=0 "$SM" search --gpu \
        -p "$SETS/k8_1000.txt" --format count -t "$t" "$FA.bgz"
    done
  fi
done

echo
echo "# medians over $ROUNDS rounds; MB/s of the uncompressed $bytes bytes; speed-up over 1 thread"
awk -F'\t' -v bytes="$bytes" -v csv="${FEED_CSV:-}" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { k = $2 SUBSEP $3 SUBSEP $4; if (!(k in s)) order[++n] = k; s[k] = s[k] " " $5 }
  END {
    printf "%-6s %-18s %7s %9s %8s %8s\n", "input", "what", "threads", "seconds", "MB/s", "speed-up"
    if (csv != "") print "input,what,threads,seconds,MBps" > csv
    for (i = 1; i <= n; i++) {
      split(order[i], p, SUBSEP); m = median(s[order[i]]); one = p[1] SUBSEP p[2] SUBSEP 1
      up = (one in s) ? median(s[one]) / m : 0
      printf "%-6s %-18s %7s %9.3f %8.0f %7.2fx\n", p[1], p[2], p[3], m, bytes / m / 1e6, up
      if (csv != "") printf "%s,%s,%s,%.4f,%.0f\n", p[1], p[2], p[3], m, bytes / m / 1e6 > csv
    }
  }' "$results"
