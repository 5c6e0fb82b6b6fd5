#!/bin/bash
# The GPU cases: the CUDA backend on every exact set of the GPU issue, on a
# machine with an NVIDIA GPU (the CPU suite, bench/run, runs elsewhere):
# the engines the planner chooses for the GPU, the automaton and the other
# engines that could take the set, seed 002's plain GPU automaton and the
# device's memory read rate, in one run; then whole commands against every
# CPU core.
#
# usage: bench/run-gpu.sh BIN_DIR DATA_DIR SETS_DIR [OUT_DIR]
#   BIN_DIR   a CUDA build's seqmatch and bench/gpu_rate (make -C bench gpu_rate)
#   DATA_DIR  panel.seq and kjv.txt (bench/fetch-data.sh)
#   SETS_DIR  the pattern sets, named as bench/run-exact.sh names them
#             (k8_1000.txt ... kjv_w1000.txt, primers100.fa; k31_1000000.txt:
#             10^6 31-mers, sample_patterns.py -n 1000000 -l 31 -s 32000000
#             --unique; k8_100 and k8_300: -l 8 --unique with seeds 101, 301)
#   OUT_DIR   default bench/results: gpu.txt (every line gpu_rate printed),
#             gpu.csv (one row per case and engine), gpu-cli.txt (whole commands)
# Environment: REPEATS (3), COPIES of panel.seq in the text (10 = 1.1 GB, as
# seed 002's >= 1 GiB), BIBLE_COPIES (100), CASES (a subset of the names below).
# The k-mer kernels' variants (SEQMATCH_CUDA_KMER=table|nopre) run beside
# their defaults on the 8-mer and 31-mer sets.
set -u
bin=$1 data=$2 sets=$3 out=${4:-$(dirname "$0")/results}
REPEATS=${REPEATS:-3} COPIES=${COPIES:-10} BIBLE_COPIES=${BIBLE_COPIES:-100}
CASES=${CASES:-"k20_10 k32_1000 k8_100 k8_300 k8_1000 k8_8000 k8_16000 k300_3000 k31_1000000 k8_1000_both kjv_w10 kjv_w1000"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for i in $(seq "$COPIES"); do cat "$data/panel.seq"; done > "$tmp/panel.seq"
for i in $(seq "$BIBLE_COPIES"); do cat "$data/kjv.txt"; done > "$tmp/kjv.txt"
{
  echo "date=$(date -u +%Y-%m-%d)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu=/'
  lscpu | sed -n 's/^Model name: *//p' | sed 's/^/host_cpu=/'
  echo "host_cores=$(nproc)"
} > "$out/gpu.txt"
echo "case,engine,alphabet,strands,patterns,bytes,sections,same,cpu_all_cores_GBps,resident_GBps,count_GBps,hits_GBps,hits_bytes,plain_best_GBps,plain_best_chunk,plain_same,hbm_read_GBps,pinned_h2d_GBps,compile_s" > "$out/gpu.csv"
run_case() { # name engine alphabet strands set text [-P]; VARIANT=NAME=VALUE sets a kernel variant
  local name=$1 engine=$2 alphabet=$3 strands=$4 set=$5 text=$6 plain=${7:-}
  local label=$engine${VARIANT:+ ($VARIANT)}
  echo "case=$name engine=$label" >> "$out/gpu.txt"
  env ${VARIANT:-} timeout 300 "$bin/gpu_rate" -r "$REPEATS" -a "$alphabet" -s "$strands" -e "$engine" $plain "$set" \
    "$text" > "$tmp/one.txt" 2>&1
  local rc=$?
  cat "$tmp/one.txt" >> "$out/gpu.txt"
  # key=value pairs of every line into one CSV row; INVALID when the counts differ
  awk -v name="$name" -v engine="$label" -v alphabet="$alphabet" -v strands="$strands" -v rc=$rc '
    /^engines=/ { split($1, kv, "="); sections = sections (sections ? "+" : "") kv[2]; next }
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      same = (rc == 0 && v["same"] == "yes") ? "yes" : "INVALID"
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", name, engine, alphabet, strands,
        v["patterns"], v["bytes"], sections, same, v["cpu_all_cores_GBps"], v["resident_GBps"], v["count_GBps"],
        v["hits_GBps"], v["hits_bytes"], v["plain_best_GBps"], v["plain_best_chunk"], v["plain_same"],
        v["hbm_read_GBps"], v["pinned_h2d_GBps"], v["compile_s"] }' "$tmp/one.txt" >> "$out/gpu.csv"
}
# Each set: the GPU's plan (with the plain kernel beside it), then the
# engines the planner could have chosen instead.
for c in $CASES; do
  case $c in
    k20_10|k32_1000) others="automaton kmer wumanber" ;;
    k8_*) others="automaton" ;;
    k300_3000) others="automaton" ;;
    k31_*) others="" ;;
    kjv_*) others="automaton wumanber" ;;
    *) others="" ;;
  esac
  case $c in
    kjv_*) alphabet=text strands=+ text=$tmp/kjv.txt set=$sets/$c.txt ;;
    k8_1000_both) alphabet=dna strands=both text=$tmp/panel.seq set=$sets/k8_1000.txt ;;
    *) alphabet=dna strands=+ text=$tmp/panel.seq set=$sets/$c.txt ;;
  esac
  plain=-P
  case $c in k31_*) plain= ;; esac
  run_case "$c" gpu "$alphabet" "$strands" "$set" "$text" $plain
  for e in $others; do run_case "$c" "$e" "$alphabet" "$strands" "$set" "$text"; done
  # the k-mer kernels' variants: bytes decoded by table lookups, no pre-filter
  case $c in
    k8_1000|k8_16000) VARIANT=SEQMATCH_CUDA_KMER=table run_case "$c" gpu "$alphabet" "$strands" "$set" "$text" ;;
    k31_*) VARIANT=SEQMATCH_CUDA_KMER=nopre run_case "$c" gpu "$alphabet" "$strands" "$set" "$text" ;;
  esac
done

# Whole commands on the text as one FASTA record (reading, start-up and
# all): --gpu against every CPU core, the same counts or hits.
{ echo ">panel_x$COPIES"; cat "$tmp/panel.seq"; echo; } > "$tmp/panel.fa"
{
  for s in k8_1000 k300_3000 k20_10 primers100; do
    format=count opts=
    [ "$s" = k20_10 ] && format=tsv
    [ "$s" = primers100 ] && opts=--text-iupac
    for i in 1 2 3; do
      TIMEFORMAT="$s $format gpu wall_s=%R"
      p=$sets/$s.txt
      [ -f "$p" ] || p=$sets/$s.fa
      time "$bin/seqmatch" search --gpu --strand + --format $format $opts -p "$p" "$tmp/panel.fa" > "$tmp/gpu.out"
      TIMEFORMAT="$s $format cpu_all_cores wall_s=%R"
      time "$bin/seqmatch" search --strand + --format $format $opts -p "$p" "$tmp/panel.fa" > "$tmp/cpu.out"
    done
    if cmp -s "$tmp/gpu.out" "$tmp/cpu.out"; then echo "$s: the same output ($(wc -l < "$tmp/gpu.out") lines)"
    else echo "$s: output DIFFERS"; fi
  done
} > "$out/gpu-cli.txt" 2>&1
cat "$out/gpu.csv" "$out/gpu-cli.txt"
