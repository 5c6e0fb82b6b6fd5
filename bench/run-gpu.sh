#!/bin/bash
# The GPU cases: the CUDA backend on the exact sets of the CPU suite, on a
# machine with an NVIDIA GPU (the CPU suite, bench/run, runs elsewhere).
#
# usage: bench/run-gpu.sh BIN_DIR DATA_DIR SETS_DIR [OUT_DIR]
#   BIN_DIR   a CUDA build's seqmatch and bench/gpu_rate (make -C bench gpu_rate)
#   DATA_DIR  panel.seq, panel.fa and kjv.txt (bench/fetch-data.sh)
#   SETS_DIR  the pattern sets, named as bench/run-exact.sh names them
#             (k8_1000.txt ... kjv_w1000.txt; k20_10 is sampled with seed 2001)
#   OUT_DIR   default bench/results: gpu.txt (every line gpu_rate printed),
#             gpu.csv (one row per case), gpu-cli.txt (whole commands)
# Environment: REPEATS (5), COPIES of panel.seq in the text (10 = 1.1 GB, as
# seed 002's >= 1 GiB), BIBLE_COPIES (100).
set -u
bin=$1 data=$2 sets=$3 out=${4:-$(dirname "$0")/results}
REPEATS=${REPEATS:-5} COPIES=${COPIES:-10} BIBLE_COPIES=${BIBLE_COPIES:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for i in $(seq "$COPIES"); do cat "$data/panel.seq"; done > "$tmp/panel.seq"
for i in $(seq "$BIBLE_COPIES"); do cat "$data/kjv.txt"; done > "$tmp/kjv.txt"
{
  echo "date=$(date -u +%Y-%m-%d)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu=/'
  lscpu | sed -n 's/^Model name: *//p' | sed 's/^/host_cpu=/'
} > "$out/gpu.txt"
echo "case,alphabet,strands,patterns,bytes,states,table_KB,same,cpu_1thread_MBps,resident_GBps,count_GBps,hits_GBps,hits_bytes,pinned_h2d_GBps,d2d_GBps" > "$out/gpu.csv"
run_case() { # name alphabet strands set text
  local name=$1 alphabet=$2 strands=$3 set=$4 text=$5
  echo "case=$name" >> "$out/gpu.txt"
  "$bin/gpu_rate" -r "$REPEATS" -a "$alphabet" -s "$strands" "$set" "$text" > "$tmp/one.txt"
  local rc=$?
  cat "$tmp/one.txt" >> "$out/gpu.txt"
  # key=value pairs of every line into one CSV row; INVALID when the counts differ
  awk -v name="$name" -v alphabet="$alphabet" -v strands="$strands" -v rc=$rc '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      same = (rc == 0 && v["same"] == "yes") ? "yes" : "INVALID"
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", name, alphabet, strands, v["patterns"], v["bytes"],
        v["states"], v["table_KB"], same, v["cpu_1thread_MBps"], v["resident_GBps"], v["count_GBps"],
        v["hits_GBps"], v["hits_bytes"], v["pinned_h2d_GBps"], v["d2d_GBps"] }' "$tmp/one.txt" >> "$out/gpu.csv"
}
for s in k20_10 k32_1000 k8_1000 k8_8000 k8_16000 k300_3000; do
  run_case "$s" dna + "$sets/$s.txt" "$tmp/panel.seq"
done
run_case k8_1000_both dna both "$sets/k8_1000.txt" "$tmp/panel.seq"
for s in kjv_w10 kjv_w1000; do run_case "$s" text + "$sets/$s.txt" "$tmp/kjv.txt"; done

# Whole commands on panel.fa (FASTA parsing, start-up and all): GPU against every CPU core.
{
  for i in $(seq 3); do
    /usr/bin/time -f "gpu wall_s=%e rss_KB=%M" "$bin/seqmatch" search --gpu --strand + --format count \
      -p "$sets/k8_1000.txt" "$data/panel.fa" > "$tmp/gpu.count"
    /usr/bin/time -f "cpu_all_cores wall_s=%e rss_KB=%M" "$bin/seqmatch" search --strand + --format count \
      -p "$sets/k8_1000.txt" "$data/panel.fa" > "$tmp/cpu.count"
  done
  if cmp -s "$tmp/gpu.count" "$tmp/cpu.count"; then echo "counts equal: $(tail -1 "$tmp/gpu.count")"; else echo "counts DIFFER"; fi
} > "$out/gpu-cli.txt" 2>&1
cat "$out/gpu.csv" "$out/gpu-cli.txt"
