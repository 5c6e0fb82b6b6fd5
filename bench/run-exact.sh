#!/usr/bin/env bash
# Exact multi-pattern search benchmark: seqmatch side by side with Hyperscan, grep -F and
# ripgrep on the real bacterial panel (panel.seq, about 110.6 Mbp, scanned as ONE record of raw
# text), plus the dictionary automaton build time for 3000 keys of 9000 nt.
#
# usage: bench/run-exact.sh [SEQMATCH_BINARY]
#
# Environment (all optional):
#   SEQMATCH             seqmatch binary, if no argument names one (default build/seqmatch)
#   SEQMATCH_BENCH_DATA  data folder (default bench/data; fetched by bench/fetch-data.sh)
#   REPS                 runs per measurement, the median is reported (default 3)
#   SLOW                 a command slower than this many seconds is not repeated (default 60)
#   TIMEOUT              seconds before a single run is abandoned (default 900)
#   TOOLS                which tools to run (default "seqmatch hyperscan grep rg")
#   SETS                 which pattern sets (default "k8_1000 k8_8000 k8_16000 k300_3000")
#   BUILD_BENCH          1 to time the automaton build of 3000 x 9000 nt (default 1)
#   WORK                 scratch folder for pattern sets and databases (default bench/work)
#   RESULTS              output folder (default bench/results): exact.csv, build.csv, env.txt
#
# Counts: seqmatch and Hyperscan report every occurrence, overlapping ones included, so their
# totals must be equal (a difference is reported as MISMATCH and the script exits 3).
# grep -F -o and rg --count-matches report non-overlapping leftmost matches only: their counts
# are smaller and not comparable; their times are kept for reference.
# MB/s = 10^6 bytes of panel.seq per second of wall time of the whole command (reading the
# files and compiling the patterns included). For Hyperscan the scan-only rate is also given.
# cpu_s is the command's user + system CPU time (median): on a busy machine it is steadier than
# wall time for single-threaded runs (cpu_MBps uses it). Hyperscan's scan-only rates come from
# hyperscan_count itself (scan_* by wall clock, scan_cpu_* by process CPU time).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
SEQMATCH=${1:-${SEQMATCH:-$root/build/seqmatch}}
DATA=${SEQMATCH_BENCH_DATA:-$here/data}
REPS=${REPS:-3}
SLOW=${SLOW:-60}
TIMEOUT=${TIMEOUT:-900}
TOOLS=${TOOLS:-seqmatch hyperscan grep rg}
SETS=${SETS:-k8_1000 k8_8000 k8_16000 k300_3000}
BUILD_BENCH=${BUILD_BENCH:-1}
WORK=${WORK:-$here/work}
RESULTS=${RESULTS:-$here/results}

say() { printf '%s\n' "$*" >&2; }
has_tool() { case " $TOOLS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# ---------------------------------------------------------------- data, helpers, pattern sets
"$here/fetch-data.sh" "$DATA"
TEXT=$DATA/panel.seq
BYTES=$(wc -c < "$TEXT")
mkdir -p "$WORK/sets" "$WORK/out" "$RESULTS"
make -s -C "$here" hyperscan_count membw >&2
HSCOUNT=$here/hyperscan_count

# set name -> "count length seed"; fixed seeds so that every run measures the same patterns
set_spec() {
  case "$1" in
    k8_1000) echo "1000 8 1001" ;;
    k8_8000) echo "8000 8 8001" ;;
    k8_16000) echo "16000 8 16001" ;;
    k32_1000) echo "1000 32 3201" ;;
    k300_3000) echo "3000 300 30001" ;;
    k9000_3000) echo "3000 9000 90001" ;;
    *) say "run-exact: unknown set $1"; exit 2 ;;
  esac
}
set_file() {
  local f=$WORK/sets/$1.txt n l s
  if [ ! -s "$f" ]; then
    read -r n l s <<< "$(set_spec "$1")"
    # distinct patterns (a repeated 8-mer would only be a duplicate dictionary entry)
    python3 "$here/sample_patterns.py" -n "$n" -l "$l" -s "$s" --unique -o "$f.tmp" "$TEXT"
    mv "$f.tmp" "$f"
  fi
  echo "$f"
}

seqmatch_ok=0
if has_tool seqmatch; then
  if [ -x "$SEQMATCH" ] && "$SEQMATCH" --version > /dev/null 2>&1; then
    seqmatch_ok=1
  else
    say "run-exact: seqmatch binary '$SEQMATCH' missing or not working: its rows are skipped"
  fi
fi

# ---------------------------------------------------------------- the machine
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
  echo "cpus: $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "membw: $("$here/membw" 1024)"
  echo "kernel: $(uname -sr)"
  echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "text: panel.seq $BYTES bytes"
  echo "hyperscan: $(pkg-config --modversion libhs 2>/dev/null || echo '?')"
  echo "grep: $(grep --version | head -1)"
  echo "rg: $(rg --version 2>/dev/null | head -1 || echo missing)"
  if [ "$seqmatch_ok" = 1 ]; then echo "seqmatch: $("$SEQMATCH" --version 2>&1 | head -1)"; fi
} > "$RESULTS/env.txt"
cat "$RESULTS/env.txt" >&2

# ---------------------------------------------------------------- timing
# timed OUTFILE CMD...: timed_limit (bench/lib.sh) with the TIMEOUT limit.
source "$here/lib.sh"
timed() { timed_limit "$TIMEOUT" "$@"; }
mbps() { awk -v b="$BYTES" -v s="$1" 'BEGIN { if (s <= 0) print ""; else if (b / s < 1e7) printf "%.2f", b / s / 1e6; else printf "%.1f", b / s / 1e6 }'; }

# Commands, one per tool; each writes something the matching count_* reads.
cmd_seqmatch() { "$SEQMATCH" search --alphabet text --format count -t "$2" -p "$1" "$TEXT"; }
cmd_hyperscan() { "$HSCOUNT" "$1" "$TEXT"; }
cmd_grep() { grep -F -o -f "$1" "$TEXT" | wc -l; }
cmd_rg() { rg -F --no-config --count-matches -f "$1" "$TEXT" || [ $? = 1 ]; }
count_seqmatch() { awk -F'\t' '$1 == "total" { print $2 }' "$1"; }
count_hyperscan() { tr '\t' '\n' < "$1" | sed -n 's/^count=//p'; }
count_grep() { tr -d ' ' < "$1"; }
count_rg() { if [ -s "$1" ]; then tr -d ' ' < "$1"; else echo 0; fi; }
export -f cmd_seqmatch cmd_hyperscan cmd_grep cmd_rg
export SEQMATCH HSCOUNT TEXT

CSV=$RESULTS/exact.csv
echo "tool,set,patterns,length,threads,runs,count,wall_s,wall_MBps,cpu_s,cpu_MBps,scan_s,scan_MBps,scan_cpu_s,scan_cpu_MBps,note" > "$CSV"
mismatch=0
declare -A hs_count

# measure TOOL SET THREADS
measure() {
  local tool=$1 set=$2 threads=$3 f n l s runs=0 times="" scans="" scpus="" cpus="" count="" prev="" note=""
  f=$(set_file "$set")
  read -r n l s <<< "$(set_spec "$set")"
  local out=$WORK/out/$tool.$set.t$threads
  while [ "$runs" -lt "$REPS" ]; do
    timed "$out" bash -c 'set -o pipefail; cmd_'"$tool"' "$1" "$2"' _ "$f" "$threads"
    runs=$((runs + 1))
    if [ "$LAST_RC" = 124 ]; then note="timed out after ${TIMEOUT}s"; times=""; break; fi
    if [ "$LAST_RC" -ge 2 ]; then
      note="failed (exit $LAST_RC): $(head -c 200 "$out.err" | tr '\n,' '  ')"
      times=""
      break
    fi
    count=$("count_$tool" "$out")
    if [ -n "$prev" ] && [ "$count" != "$prev" ]; then note="count differs between runs"; fi
    prev=$count
    times="$times $LAST_S"
    cpus="$cpus $LAST_CPU"
    if [ "$tool" = hyperscan ]; then
      scans="$scans $(tr '\t' '\n' < "$out" | sed -n 's/^scan_s=//p')"
      scpus="$scpus $(tr '\t' '\n' < "$out" | sed -n 's/^scan_cpu_s=//p')"
    fi
    if awk -v t="$LAST_S" -v s="$SLOW" 'BEGIN { exit !(t > s) }'; then
      [ "$runs" -lt "$REPS" ] && note="${note:+$note; }slow: run once"
      break
    fi
  done
  local wall="" scan="" wmb="" smb="" cpu="" cmb="" scpu="" scmb=""
  if [ -n "$times" ]; then wall=$(echo "$times" | median); wmb=$(mbps "$wall"); fi
  if [ -n "$scans" ]; then scan=$(echo "$scans" | median); smb=$(mbps "$scan"); fi
  if [ -n "${cpus// /}" ]; then cpu=$(echo "$cpus" | median); cmb=$(mbps "$cpu"); fi
  if [ -n "${scpus// /}" ]; then scpu=$(echo "$scpus" | median); scmb=$(mbps "$scpu"); fi
  case "$tool" in
    grep | rg) note="${note:+$note; }non-overlapping matches only (count not comparable)" ;;
    hyperscan) hs_count[$set]=$count ;;
    seqmatch)
      if [ -n "${hs_count[$set]:-}" ] && [ -n "$count" ] && [ "$count" != "${hs_count[$set]}" ]; then
        note="${note:+$note; }MISMATCH: hyperscan counts ${hs_count[$set]}"
        mismatch=1
        say ""
        say "!!!!!!!! MISMATCH on $set (threads $threads): seqmatch $count, hyperscan ${hs_count[$set]} !!!!!!!!"
        say ""
      fi
      ;;
  esac
  echo "$tool,$set,$n,$l,$threads,$runs,$count,$wall,$wmb,$cpu,$cmb,$scan,$smb,$scpu,$scmb,$note" >> "$CSV"
  say "$(printf '%-9s %-9s t=%s n=%s count=%-9s wall %-8s s %7s MB/s  cpu %-8s s %7s MB/s  scan cpu %-7s s %7s MB/s  %s' \
    "$tool" "$set" "$threads" "$runs" "$count" "$wall" "$wmb" "$cpu" "$cmb" "$scpu" "$scmb" "$note")"
}

for set in $SETS; do
  set_file "$set" > /dev/null
  # Hyperscan first: its count is the reference
  if has_tool hyperscan; then measure hyperscan "$set" 1; fi
  if [ "$seqmatch_ok" = 1 ]; then
    measure seqmatch "$set" 1
    measure seqmatch "$set" 2
  fi
  if has_tool grep; then measure grep "$set" 1; fi
  if has_tool rg; then measure rg "$set" 1; fi
done

# ---------------------------------------------------------------- automaton build, 3000 x 9000 nt
BCSV=$RESULTS/build.csv
if [ "$BUILD_BENCH" = 1 ] && [ "$seqmatch_ok" = 1 ]; then
  big=$(set_file k9000_3000)
  echo "keys,length,build_threads,runs,wall_s,cpu_s,db_bytes,note" > "$BCSV"
  for bt in 0 2; do
    times="" cpus="" note="" runs=0
    db=$WORK/out/big.bt$bt.db
    while [ "$runs" -lt "$REPS" ]; do
      rm -f "$db"
      timed "$WORK/out/build.bt$bt" "$SEQMATCH" compile --build-threads "$bt" --alphabet text -p "$big" -o "$db"
      runs=$((runs + 1))
      if [ "$LAST_RC" != 0 ]; then
        note="failed (exit $LAST_RC): $(head -c 200 "$WORK/out/build.bt$bt.err" | tr '\n,' '  ')"
        times=""
        break
      fi
      times="$times $LAST_S"
      cpus="$cpus $LAST_CPU"
      if awk -v t="$LAST_S" -v s="$SLOW" 'BEGIN { exit !(t > s) }'; then break; fi
    done
    wall="" cpu=""
    if [ -n "$times" ]; then wall=$(echo "$times" | median); cpu=$(echo "$cpus" | median); fi
    size=$( [ -f "$db" ] && wc -c < "$db" || echo "")
    echo "3000,9000,$bt,$runs,$wall,$cpu,$size,$note" >> "$BCSV"
    say "build     3000x9000  --build-threads $bt runs=$runs wall=$wall s cpu=$cpu s db=$size bytes $note"
  done
  if [ -f "$WORK/out/big.bt0.db" ] && [ -f "$WORK/out/big.bt2.db" ]; then
    if cmp -s "$WORK/out/big.bt0.db" "$WORK/out/big.bt2.db"; then
      say "build: serial and 2-thread databases are byte-identical"
    else
      say "!!!!!!!! build: serial and 2-thread databases DIFFER !!!!!!!!"
      echo "3000,9000,,,,,,serial and 2-thread databases differ" >> "$BCSV"
    fi
  fi
  rm -f "$WORK/out/big.bt0.db" "$WORK/out/big.bt2.db"
  # The builders alone (no reading, assembly or saving), from the library next to the binary.
  libdir=$(cd "$(dirname "$SEQMATCH")" && pwd)
  if [ -f "$libdir/libseqmatch.a" ] && make -s -C "$here" automaton_build LIBDIR="$libdir" >&2; then
    "$here/automaton_build" "$big" 2 "$REPS" > "$RESULTS/builders.csv"
    say "builders alone (bench/results/builders.csv):"
    sed 's/^/  /' "$RESULTS/builders.csv" >&2
  fi
fi

# ---------------------------------------------------------------- table
say ""
awk -F, 'NR > 1 {
  printf "%-9s %-9s t=%s count %-10s MB/s: %7s wall %7s cpu %7s scan-cpu  %s\n", $1, $2, $5, $7, $9, $11, $15, $16
}' "$CSV"
if [ -s "$BCSV" ]; then
  awk -F, 'NR > 1 { printf "build 3000 x 9000 nt  --build-threads %s  %s s wall  %s s cpu  %s bytes %s\n", $3, $5, $6, $7, $8 }' "$BCSV"
fi
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS/env.txt"
say "results: $CSV $( [ -s "$BCSV" ] && echo "$BCSV") $RESULTS/env.txt"
if [ "$mismatch" = 1 ]; then
  say "run-exact: seqmatch and Hyperscan counts DIFFER (see MISMATCH above)"
  exit 3
fi
