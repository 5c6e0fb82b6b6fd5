#!/bin/bash
# seqmatch dfa --gpu beside the CPU on every host core, on a machine with an
# NVIDIA GPU: seed 003's 4-state DFA, a 4-state counter whose paths never
# meet and a random 100-state DFA on 10^9 random ACGT symbols (the library,
# text resident on the GPU and from host memory), then whole commands on a
# 10^9-byte file.
#
# usage: bench/run-gpu-dfa.sh BIN_DIR [OUT_DIR]
#   BIN_DIR  a CUDA build's seqmatch and dfa_gpu_bench (make -C bench dfa_gpu_bench)
#   OUT_DIR  default bench/results: gpu-dfa.txt (every line dfa_gpu_bench
#            printed) and gpu-dfa-cli.txt (whole commands, wall seconds)
# Environment: SYMBOLS (10^9), REPEATS (5), CLI_REPEATS (3).
set -u
bin=$1 out=${2:-$(dirname "$0")/results}
SYMBOLS=${SYMBOLS:-1000000000} REPEATS=${REPEATS:-5} CLI_REPEATS=${CLI_REPEATS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
{
  echo "date=$(date -u +%Y-%m-%d)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu=/'
  lscpu | sed -n 's/^Model name: *//p' | sed 's/^/host_cpu=/'
  echo "host_cores=$(nproc)"
  "$bin/dfa_gpu_bench" --symbols "$SYMBOLS" --reps "$REPEATS" --dump "$tmp"
  echo "bench_status=$?"
} > "$out/gpu-dfa.txt" 2>&1
cat "$out/gpu-dfa.txt"

# Whole commands on a file of random ACGT bytes (text alphabet: the file is one input).
acgt=$(for i in $(seq 64); do printf 'ACGT'; done)
head -c "$SYMBOLS" /dev/urandom | tr '\000-\377' "$acgt" > "$tmp/acgt.txt"
TIMEFORMAT=%R
{
  echo "file_bytes=$(wc -c < "$tmp/acgt.txt")"
  for case in seed4 random100; do
    for i in $(seq "$CLI_REPEATS"); do
      s=$( { time "$bin/seqmatch" dfa --gpu --dfa "$tmp/$case.dfa" "$tmp/acgt.txt" > "$tmp/gpu.out"; } 2>&1 )
      echo "case=$case command=gpu wall_s=$s"
      s=$( { time "$bin/seqmatch" dfa --dfa "$tmp/$case.dfa" "$tmp/acgt.txt" > "$tmp/cpu.out"; } 2>&1 )
      echo "case=$case command=cpu_all_cores wall_s=$s"
    done
    if cmp -s "$tmp/gpu.out" "$tmp/cpu.out"; then echo "case=$case results equal: $(cat "$tmp/gpu.out")"
    else echo "case=$case results DIFFER: gpu $(cat "$tmp/gpu.out") cpu $(cat "$tmp/cpu.out")"; fi
  done
} > "$out/gpu-dfa-cli.txt" 2>&1
cat "$out/gpu-dfa-cli.txt"
