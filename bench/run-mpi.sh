#!/bin/bash
# Scaling over MPI ranks and GPUs (docs/scaling.md): whole commands, inputs in
# the page cache, medians of REPS runs, parallel efficiency, and the output of
# every run compared with the one-rank run's.
#
# usage: bench/run-mpi.sh SEQMATCH DATA_DIR [OUT_DIR]
#   SEQMATCH  a seqmatch built with MPI (and CUDA for the --gpu rows)
#   DATA_DIR  holds panel.fa.gz (or panel.fa): the 110.6 Mbp bacterial panel
#             (bench/fetch-data.sh). The script writes its inputs there once:
#             panel.fa, panel.seq, the pattern sets (sets/), the panel repeated
#             COPIES times (panelx$COPIES.fa, 11 GB for 100) and WEAK copies
#             of it (panelx$WEAK.fa) for weak scaling.
#   OUT_DIR   default bench/results: mpi-runs.csv (every run), mpi-scaling.csv
#             (medians, rates, efficiency), mpi-scaling.txt (the table, the
#             machine)
#
# Cases: seed 002's 1000, 8000 and 16000 8-mers (--format count), CRISPR
# off-targets (20 guides, -m 4 --pam NGG, TSV), and for the GPUs 100 primers
# -k 2 and 1000 guides -m 4 --pam NGG (--format count; their CPU rows take
# minutes: leave them out of STRONG and WEAK runs with CPU_CASES): strong
# scaling over RANKS CPU ranks of THREADS threads each on panelx$COPIES.fa;
# weak scaling (WEAK copies per rank, the file named once per rank); every
# case with --gpu on GPUS ranks of one GPU each (a rank of many threads
# reads its share with several readers), and as one process that sees that
# many GPUs (kind gpu1p); one process with every core (-t CORES) as the
# single-process reference.
#
# Environment: RANKS ("1 2 4 8 16"), GPUS ("1 2 4"; "" for none), THREADS (1),
# COPIES (100), WEAK (6), REPS (3), CASES ("k8_1000 k8_8000 k8_16000 crispr";
# also primers, guides1000), CPU_CASES (the cases with CPU rows: CASES),
# MPIRUN (mpirun), MPI_ARGS ("--bind-to none"), STRONG/WEAK_RUNS/GPU_RUNS
# (1: run that part, default all), TIMEOUT (seconds a run may take, 3600).
#
# On the GPU machine, from a copy of the repository with binaries built there:
#   bench/run-mpi.sh build/seqmatch /data/panel
set -u
seqmatch=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$2
out=${3:-$(dirname "$0")/results}
here=$(cd "$(dirname "$0")" && pwd)
RANKS=${RANKS-1 2 4 8 16}
GPUS=${GPUS-1 2 4}
THREADS=${THREADS:-1}
COPIES=${COPIES:-100}
WEAK=${WEAK:-6}
REPS=${REPS:-3}
CASES=${CASES:-k8_1000 k8_8000 k8_16000 crispr}
CPU_CASES=${CPU_CASES:-$CASES}
MPIRUN=${MPIRUN:-mpirun}
MPI_ARGS=${MPI_ARGS:---bind-to none}
STRONG_RUNS=${STRONG_RUNS:-1} WEAK_RUNS=${WEAK_RUNS:-1} GPU_RUNS=${GPU_RUNS:-1}
TIMEOUT=${TIMEOUT:-3600}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
mkdir -p "$out" "$data/sets"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "run-mpi: $*" >&2; }

# ------------------------------------------------------------------ inputs
if [ ! -s "$data/panel.fa" ]; then
  [ -s "$data/panel.fa.gz" ] || { say "no $data/panel.fa.gz"; exit 2; }
  gzip -dc "$data/panel.fa.gz" > "$data/panel.fa.tmp" && mv "$data/panel.fa.tmp" "$data/panel.fa"
fi
if [ ! -s "$data/panel.seq" ]; then
  LC_ALL=C awk '!/^>/' "$data/panel.fa" | tr -d '\r\n' | tr 'a-z' 'A-Z' > "$data/panel.seq.tmp" &&
    mv "$data/panel.seq.tmp" "$data/panel.seq"
fi
# the sets of the GPU and exact runs (sample_patterns.py, same seeds: the 8-mers as
# drawn, duplicates included, as the sets of bench/run-gpu.sh; the guides
# as bench/run-approx.sh draws them)
sample() { # name count length seed [options]
  local f=$data/sets/$1
  if [ ! -s "$f" ]; then
    python3 "$here/sample_patterns.py" -n "$2" -l "$3" -s "$4" "${@:5}" -o "$f.tmp" "$data/panel.seq" && mv "$f.tmp" "$f"
  fi
  echo "$f"
}
k8_1000=$(sample k8_1000.txt 1000 8 1001)
k8_8000=$(sample k8_8000.txt 8000 8 8001)
k8_16000=$(sample k8_16000.txt 16000 8 16001)
guides=$(sample guides20.fa 20 20 2301 --unique --fasta)
primers=$(sample primers100.fa 100 20 2001 --unique --fasta)
# the 1000 guides as bench/run-gpu.sh draws them
guides1000=$data/sets/guides1000.txt
[ -s "$guides1000" ] || python3 "$here/crispr_guides.py" -n 1000 -s 28 -o "$guides1000" "$data/panel.seq"
# the panel repeated (each copy's records renamed, so that names stay unique)
repeat_panel() { # copies file
  [ -s "$2" ] && return
  for c in $(seq "$1"); do sed "s/^>\([^ ]*\)/>\1_c$c/" "$data/panel.fa"; done > "$2.tmp" && mv "$2.tmp" "$2"
}
strong=$data/panelx$COPIES.fa
weak=$data/panelx$WEAK.fa
{ [ "$STRONG_RUNS" = 1 ] || [ "$GPU_RUNS" = 1 ]; } && repeat_panel "$COPIES" "$strong"
[ "$WEAK_RUNS" = 1 ] && repeat_panel "$WEAK" "$weak"

case_args() { # case -> the search's arguments before the targets
  case $1 in
    k8_1000) echo "-p $k8_1000 --format count" ;;
    k8_8000) echo "-p $k8_8000 --format count" ;;
    k8_16000) echo "-p $k8_16000 --format count" ;;
    crispr) echo "-p $guides -m 4 --pam NGG" ;;
    primers) echo "-p $primers -k 2 --format count" ;;
    guides1000) echo "-p $guides1000 -m 4 --pam NGG --format count" ;;
    *) say "unknown case $1"; exit 2 ;;
  esac
}

# ------------------------------------------------------------------ runs
cores=$(nproc)
{
  echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
  echo "host_cpu=$(lscpu | sed -n 's/^Model name: *//p') cores=$cores"
  echo "memory=$(free -g | awk '/^Mem:/ { print $2 " GiB" }')"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sed 's/^/gpu=/'
  echo "mpirun=$($MPIRUN --version 2>&1 | head -1)"
  echo "seqmatch=$("$seqmatch" --version | head -1) $(ls -l "$seqmatch" | awk '{ print $6, $7, $8 }')"
  echo "copies=$COPIES ($(wc -c < "$strong" 2>/dev/null) bytes) weak=$WEAK per rank threads_per_rank=$THREADS reps=$REPS"
} > "$out/mpi-scaling.txt"
echo "case,kind,ranks,gpus,bytes,run,seconds,same" > "$out/mpi-runs.csv"

# timed KIND CASE RANKS GPUS BYTES CMD...: REPS runs after one to warm the
# page cache; the output's checksum against the reference run of the row group
timed() {
  local kind=$1 cs=$2 ranks=$3 gpus=$4 bytes=$5
  shift 5
  "$@" > "$tmp/out" 2> "$tmp/err" || [ $? -eq 1 ] || { say "$kind $cs $ranks: failed: $(grep seqmatch "$tmp/err" | head -1)"; }
  local sum
  sum=$(cksum < "$tmp/out" | cut -d' ' -f1)
  local ref=$tmp/ref.$kind.$cs
  [ -s "$ref" ] || echo "$sum" > "$ref"
  local same=yes
  [ "$sum" = "$(cat "$ref")" ] || same=NO
  for r in $(seq "$REPS"); do
    local t0 t1
    t0=$(date +%s.%N)
    timeout "$TIMEOUT" "$@" > "$tmp/out" 2> "$tmp/err"
    t1=$(date +%s.%N)
    [ "$(cksum < "$tmp/out" | cut -d' ' -f1)" = "$(cat "$ref")" ] || same=NO
    echo "$cs,$kind,$ranks,$gpus,$bytes,$r,$(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }"),$same" >> "$out/mpi-runs.csv"
  done
  say "$kind $cs ranks=$ranks gpus=$gpus same=$same"
}

for cs in $CASES; do
  read -r -a args <<< "$(case_args "$cs")"
  cpu_rows=0
  case " $CPU_CASES " in *" $cs "*) cpu_rows=1 ;; esac
  if [ "$STRONG_RUNS" = 1 ] && [ "$cpu_rows" = 1 ]; then
    bytes=$(wc -c < "$strong")
    # the reference for the strong rows: one process, every core
    timed strong "$cs" 1p 0 "$bytes" "$seqmatch" search -t "$cores" "${args[@]}" "$strong"
    for r in $RANKS; do
      # shellcheck disable=SC2086
      timed strong "$cs" "$r" 0 "$bytes" $MPIRUN $MPI_ARGS -np "$r" "$seqmatch" search -t "$THREADS" "${args[@]}" "$strong"
    done
  fi
  if [ "$WEAK_RUNS" = 1 ] && [ "$cpu_rows" = 1 ]; then
    for r in $RANKS; do
      files=()
      for i in $(seq "$r"); do ln -sf "$weak" "$tmp/w$i.fa"; files+=("$tmp/w$i.fa"); done
      rm -f "$tmp/ref.weak$r.$cs"
      # shellcheck disable=SC2086
      timed "weak$r" "$cs" "$r" 0 $(( $(wc -c < "$weak") * r )) $MPIRUN $MPI_ARGS -np "$r" "$seqmatch" search \
        -t "$THREADS" "${args[@]}" "${files[@]}"
    done
  fi
  if [ "$GPU_RUNS" = 1 ] && [ -n "$GPUS" ]; then
    bytes=$(wc -c < "$strong")
    for g in $GPUS; do
      # one process that sees the first g GPUs
      timed gpu1p "$cs" "$g" "$g" "$bytes" env CUDA_VISIBLE_DEVICES="$(seq -s, 0 $((g - 1)))" \
        "$seqmatch" search --gpu "${args[@]}" "$strong"
    done
    for g in $GPUS; do
      # one GPU per rank (its place on the node); the CPU threads left to the ranks
      # shellcheck disable=SC2086
      timed gpu "$cs" "$g" "$g" "$bytes" $MPIRUN $MPI_ARGS -np "$g" "$seqmatch" search --gpu "${args[@]}" "$strong"
    done
  fi
done

# medians, rates, efficiency: strong T(1) / (R T(R)) against one rank; weak
# T(1) / T(R); GPU against one GPU; the every-core process as a row of its own
python3 - "$out/mpi-runs.csv" "$out/mpi-scaling.csv" >> "$out/mpi-scaling.txt" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    kind = 'weak' if r['kind'].startswith('weak') else r['kind']
    key = (r['case'], kind, r['ranks'], r['gpus'])
    g = groups.setdefault(key, {'t': [], 'bytes': int(r['bytes']), 'same': 'yes'})
    g['t'].append(float(r['seconds']))
    if r['same'] != 'yes':
        g['same'] = 'NO'
out = csv.writer(open(sys.argv[2], 'w'))
out.writerow(['case', 'kind', 'ranks', 'gpus', 'bytes', 'median_s', 'GBps', 'efficiency', 'same'])
base = {}
for (cs, kind, ranks, gpus), g in groups.items():
    if ranks == '1':
        base[(cs, kind)] = statistics.median(g['t'])
print('\n%-9s %-6s %5s %4s %9s %8s %10s %5s' % ('case', 'kind', 'ranks', 'gpus', 'median_s', 'GB/s', 'efficiency', 'same'))
for (cs, kind, ranks, gpus), g in groups.items():
    m = statistics.median(g['t'])
    rate = g['bytes'] / m / 1e9
    eff = ''
    if ranks != '1p' and (cs, kind) in base:
        n = int(ranks)
        eff = '%.3f' % (base[(cs, kind)] / (n * m) if kind in ('strong', 'gpu', 'gpu1p') else base[(cs, kind)] / m)
    out.writerow([cs, kind, ranks, gpus, g['bytes'], '%.3f' % m, '%.3f' % rate, eff, g['same']])
    print('%-9s %-6s %5s %4s %9.3f %8.3f %10s %5s' % (cs, kind, ranks, gpus, m, rate, eff, g['same']))
EOF
cat "$out/mpi-scaling.txt"
