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
#             --unique; k8_100 and k8_300: -l 8 --unique with seeds 101, 301;
#             a missing kjv_wN.txt is drawn as run-exact.sh draws WORD_SETS)
#   OUT_DIR   default bench/results: gpu.txt (every line gpu_rate printed),
#             gpu.csv (one row per case and engine), gpu-cli.txt (whole commands)
# Environment: REPEATS (3), COPIES of panel.seq in the text (10 = 1.1 GB, as
# seed 002's >= 1 GiB), BIBLE_COPIES (100), CASES (a subset of the names below,
# "" for none), APPROX_CASES (the approximate cases at the end: m64 primers
# guides mixed, "" for none), BIG_COPIES (100: the primers' whole command over
# 11.2 GB), GUIDE_COPIES (28: the guides' 3.1 Gbp), GUIDE_CPU (1: the CPU runs
# the guides over the same 3.1 Gbp for the hit comparison; 0: over one copy),
# SASSY (a command running a Python that imports sassy-rs, e.g. "env
# PYTHONPATH=DIR python3": Sassy on the primer cases), BUILD_SETS (the
# automaton builders at the end, seed 000's: k300_3000 k3000_3000 k9000_3000
# from SETS_DIR, "" for none; BIN_DIR's automaton_build, made by
# `make -C bench automaton_build`: the level builder on every host core beside
# the GPU builder, every build's bytes compared, into gpu-build.txt).
# The kernels' variants run beside their defaults: bytes decoded by table
# (SEQMATCH_CUDA_KMER=table) and the bitmap's rank counting
# (SEQMATCH_CUDA_KMER_COUNT=rank) on the 8-mer sets, a filter read per
# position instead of the sampled m-mers (SEQMATCH_CUDA_KMER=filter), their
# table half full instead of an eighth (SEQMATCH_CUDA_KMER_SPARSE=0) or its
# entries read one at a time (SEQMATCH_CUDA_KMER_PAIRS=0), no
# pre-filter (SEQMATCH_CUDA_KMER=nopre) and one filter read at a time
# (SEQMATCH_CUDA_KMER_HASH=serial with =filter) on the 31-mers, the automaton's visit
# counters in device memory (SEQMATCH_CUDA_VISITS=global), its table not
# packed in shared memory (SEQMATCH_CUDA_AC_PACKED=0: the first rows there,
# the rest read through L2) and with no rows there either
# (SEQMATCH_CUDA_AC_PACKED=0 SEQMATCH_CUDA_AC_SPLIT=0) on the Bible's word
# lists.
set -u
bin=$1 data=$2 sets=$3 out=${4:-$(dirname "$0")/results}
REPEATS=${REPEATS:-3} COPIES=${COPIES:-10} BIBLE_COPIES=${BIBLE_COPIES:-100}
CASES=${CASES-"k20_10 k32_1000 k8_100 k8_300 k8_1000 k8_8000 k8_16000 k300_3000 k31_1000000 k8_1000_both kjv_w10 kjv_w1000 kjv_w2000 kjv_w3000"}
APPROX_CASES=${APPROX_CASES-"m64 primers guides mixed"}
BIG_COPIES=${BIG_COPIES:-100} GUIDE_COPIES=${GUIDE_COPIES:-28} GUIDE_CPU=${GUIDE_CPU:-1} SASSY=${SASSY:-}
BUILD_SETS=${BUILD_SETS-"k300_3000 k3000_3000 k9000_3000"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for i in $(seq "$COPIES"); do cat "$data/panel.seq"; done > "$tmp/panel.seq"
case " $CASES " in *" kjv_"*) for i in $(seq "$BIBLE_COPIES"); do cat "$data/kjv.txt"; done > "$tmp/kjv.txt" ;; esac
{
  echo "date=$(date -u +%Y-%m-%d)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu=/'
  lscpu | sed -n 's/^Model name: *//p' | sed 's/^/host_cpu=/'
  echo "host_cores=$(nproc)"
} > "$out/gpu.txt"
echo "case,engine,alphabet,strands,patterns,bytes,sections,same,cpu_all_cores_GBps,resident_GBps,count_GBps,hits_GBps,hits_bytes,plain_best_GBps,plain_best_chunk,plain_same,hbm_read_GBps,pinned_h2d_GBps,compile_s,resident_TCUPS" > "$out/gpu.csv"
run_case() { # name engine alphabet strands set text [-P]; VARIANT=NAME=VALUE sets a kernel variant, MATCH gpu_rate's
  local name=$1 engine=$2 alphabet=$3 strands=$4 set=$5 text=$6 plain=${7:-}
  local label=$engine${VARIANT:+ ($VARIANT)}
  echo "case=$name engine=$label ${MATCH:-}" >> "$out/gpu.txt"
  # shellcheck disable=SC2086
  env ${VARIANT:-} timeout 600 "$bin/gpu_rate" -r "$REPEATS" -a "$alphabet" -s "$strands" -e "$engine" ${MATCH:-} $plain \
    "$set" "$text" > "$tmp/one.txt" 2>&1
  local rc=$?
  cat "$tmp/one.txt" >> "$out/gpu.txt"
  # key=value pairs of every line into one CSV row; INVALID when the counts differ
  awk -v name="$name" -v engine="$label" -v alphabet="$alphabet" -v strands="$strands" -v rc=$rc '
    /^engines=/ { split($1, kv, "="); sections = sections (sections ? "+" : "") kv[2]; next }
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      same = (rc == 0 && v["same"] == "yes") ? "yes" : "INVALID"
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", name, engine, alphabet, strands,
        v["patterns"], v["bytes"], sections, same, v["cpu_all_cores_GBps"], v["resident_GBps"], v["count_GBps"],
        v["hits_GBps"], v["hits_bytes"], v["plain_best_GBps"], v["plain_best_chunk"], v["plain_same"],
        v["hbm_read_GBps"], v["pinned_h2d_GBps"], v["compile_s"], v["resident_TCUPS"] }' "$tmp/one.txt" >> "$out/gpu.csv"
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
    kjv_*) alphabet=text strands=+ text=$tmp/kjv.txt set=$sets/$c.txt
           # a word list SETS_DIR lacks is drawn as run-exact.sh draws it
           n=${c#kjv_w}
           [ -f "$set" ] || { set=$tmp/$c.txt; python3 "$(dirname "$0")/sample_patterns.py" --words -n "$n" -s $((500000 + n)) -o "$set" "$data/kjv.txt"; } ;;
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
    k31_*) VARIANT=SEQMATCH_CUDA_KMER=filter run_case "$c" gpu "$alphabet" "$strands" "$set" "$text"
           VARIANT=SEQMATCH_CUDA_KMER=nopre run_case "$c" gpu "$alphabet" "$strands" "$set" "$text"
           VARIANT="SEQMATCH_CUDA_KMER=filter SEQMATCH_CUDA_KMER_HASH=serial" run_case "$c" gpu "$alphabet" "$strands" "$set" "$text"
           VARIANT=SEQMATCH_CUDA_KMER_SPARSE=0 run_case "$c" gpu "$alphabet" "$strands" "$set" "$text"
           VARIANT=SEQMATCH_CUDA_KMER_PAIRS=0 run_case "$c" gpu "$alphabet" "$strands" "$set" "$text" ;;
    kjv_w1000|kjv_w2000|kjv_w3000) VARIANT=SEQMATCH_CUDA_VISITS=global run_case "$c" gpu "$alphabet" "$strands" "$set" "$text"
           VARIANT=SEQMATCH_CUDA_AC_PACKED=0 run_case "$c" gpu "$alphabet" "$strands" "$set" "$text"
           VARIANT="SEQMATCH_CUDA_AC_PACKED=0 SEQMATCH_CUDA_AC_SPLIT=0" run_case "$c" gpu "$alphabet" "$strands" "$set" "$text" ;;
  esac
  case $c in
    k8_1000|k8_8000|k8_16000) VARIANT=SEQMATCH_CUDA_KMER_COUNT=rank run_case "$c" gpu "$alphabet" "$strands" "$set" "$text" ;;
  esac
done

# Whole commands on the text as one FASTA record (reading, start-up and
# all): --gpu against every CPU core, the same counts or hits.
{ echo ">panel_x$COPIES"; cat "$tmp/panel.seq"; echo; } > "$tmp/panel.fa"
: > "$out/gpu-cli.txt"
[ -z "$CASES" ] || {
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

# --------------------------------------------------------- approximate cases
# Issue 28's cases, the kernels with the text resident (gpu_rate: the GPU's
# count and hits checked against the CPU runner's on every host core first)
# and whole commands beside the CPU on every host core, the same output:
#   m64      64 patterns x 64 nt, -k 3, --strand +, --engine myers: TCUPS
#   primers  100 primers (20 nt) x -k 2, both strands: GB/s resident, the whole
#            command over panel x BIG_COPIES from the page cache, Sassy (PyPI
#            sassy-rs, CPU, every host core) over panel.seq (one copy)
#   guides   1000 CRISPR guides (bench/crispr_guides.py, seed 28) --pam NGG -m 4,
#            both strands, over panel x GUIDE_COPIES (each copy a record)
#   mixed    a database of the guides (-m 4) and of 100 8-mers scanned
#            exactly: every section on the GPU (gpu_rate's sections line)
fasta_copies() { # N OUT: N copies of panel.seq, each a record
  for i in $(seq "$1"); do echo ">copy$i"; cat "$data/panel.seq"; echo; done > "$2"
}
whole() { # LABEL REPEATS ARGS...: the command with --gpu and without, alternating
  local label=$1 reps=$2; shift 2
  for i in $(seq "$reps"); do
    TIMEFORMAT="$label gpu wall_s=%R"
    time "$bin/seqmatch" search --gpu "$@" > "$tmp/gpu.out"
    TIMEFORMAT="$label cpu_all_cores wall_s=%R"
    time "$bin/seqmatch" search "$@" > "$tmp/cpu.out"
  done
  if cmp -s "$tmp/gpu.out" "$tmp/cpu.out"; then echo "$label: the same output ($(wc -l < "$tmp/gpu.out") lines)"
  else echo "$label: output DIFFERS ($(wc -l < "$tmp/gpu.out") against $(wc -l < "$tmp/cpu.out") lines)"; fi
}
[ -f "$sets/m64.fa" ] || python3 "$(dirname "$0")/sample_patterns.py" -n 64 -l 64 -s 6401 --unique --fasta -o "$sets/m64.fa" "$data/panel.seq"
[ -f "$sets/primers100.fa" ] || python3 "$(dirname "$0")/sample_patterns.py" -n 100 -l 20 -s 2001 --unique --fasta -o "$sets/primers100.fa" "$data/panel.seq"
[ -f "$sets/guides1000.txt" ] || python3 "$(dirname "$0")/crispr_guides.py" -n 1000 -s 28 -o "$sets/guides1000.txt" "$data/panel.seq"
grep -v '^>' "$sets/m64.fa" > "$tmp/m64.txt"
grep -v '^>' "$sets/primers100.fa" > "$tmp/primers100.txt"
{
  for c in $APPROX_CASES; do
    case $c in
      m64)
        MATCH="-k 3" run_case m64 myers dna + "$tmp/m64.txt" "$tmp/panel.seq"
        whole "m64 -k 3 --strand + --engine myers (panel x $COPIES, count)" 3 --strand + --engine myers -k 3 \
          --format count -p "$sets/m64.fa" "$tmp/panel.fa"
        ;;
      primers)
        MATCH="-k 2" run_case primers gpu dna both "$tmp/primers100.txt" "$tmp/panel.seq"
        fasta_copies "$BIG_COPIES" "$tmp/big.fa"
        cat "$tmp/big.fa" > /dev/null # into the page cache
        whole "primers -k 2 (panel x $BIG_COPIES, 11.2 GB per 100, count)" 3 -k 2 --format count -p "$sets/primers100.fa" "$tmp/big.fa"
        whole "primers -k 2 (panel x $COPIES, hits)" 1 -k 2 -p "$sets/primers100.fa" "$tmp/panel.fa"
        rm -f "$tmp/big.fa"
        if [ -n "$SASSY" ]; then
          # shellcheck disable=SC2086
          $SASSY "$(dirname "$0")/sassy_search.py" -k 2 -p "$sets/primers100.fa" "$data/panel.seq"
        fi
        ;;
      guides)
        MATCH="-m 4 -q NGG" run_case guides gpu dna both "$sets/guides1000.txt" "$tmp/panel.seq"
        fasta_copies "$GUIDE_COPIES" "$tmp/guides.fa"
        cat "$tmp/guides.fa" > /dev/null
        for i in 1 2 3; do
          TIMEFORMAT="guides --pam NGG -m 4 (panel x $GUIDE_COPIES, hits) gpu wall_s=%R"
          time "$bin/seqmatch" search --gpu --pam NGG -m 4 -p "$sets/guides1000.txt" "$tmp/guides.fa" > "$tmp/gpu.out"
        done
        if [ "$GUIDE_CPU" = 1 ]; then
          TIMEFORMAT="guides --pam NGG -m 4 (panel x $GUIDE_COPIES, hits) cpu_all_cores wall_s=%R"
          time "$bin/seqmatch" search --pam NGG -m 4 -p "$sets/guides1000.txt" "$tmp/guides.fa" > "$tmp/cpu.out"
          if cmp -s "$tmp/gpu.out" "$tmp/cpu.out"; then echo "guides: the same output ($(wc -l < "$tmp/gpu.out") lines)"
          else echo "guides: output DIFFERS"; fi
        fi
        rm -f "$tmp/guides.fa"
        whole "guides --pam NGG -m 4 (panel x 1, hits)" 1 --pam NGG -m 4 -p "$sets/guides1000.txt" "$data/panel.fa"
        ;;
      mixed)
        # the guides' pigeonhole section beside the mismatch counters for short patterns
        { cat "$sets/guides1000.txt"; head -n 20 "$tmp/primers100.txt" | cut -c1-9; } > "$tmp/mixed.txt"
        MATCH="-m 2" run_case mixed gpu dna both "$tmp/mixed.txt" "$tmp/panel.seq"
        ;;
    esac
  done
} > "$out/gpu-approx.txt" 2>&1
# Seed 000: the automaton built on the GPU beside the level builder on every core (best of REPEATS).
for c in $BUILD_SETS; do
  echo "set=$c"
  GPU=1 timeout 600 "$bin/automaton_build" "$sets/$c.txt" "$(nproc)" "$REPEATS"
done > "$out/gpu-build.txt" 2>&1
cat "$out/gpu.csv" "$out/gpu-cli.txt" "$out/gpu-approx.txt" "$out/gpu-build.txt"
