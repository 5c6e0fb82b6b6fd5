#!/usr/bin/env bash
# Exact multi-pattern search benchmark: seqmatch side by side with Hyperscan, grep -F and
# ripgrep on the real bacterial panel (panel.seq, about 110.6 Mbp, scanned as ONE record of raw
# text), the dictionary automaton build, scaling with threads over >= 1 GiB of DNA, throughput
# against the number of patterns, and peak memory of a long stream. Called by bench/run (which
# picks the settings of its quick and full modes); it can also be run alone.
#
# usage: bench/run-exact.sh [SEQMATCH_BINARY]
#
# Environment (all optional):
#   SEQMATCH             seqmatch binary, if no argument names one (default build/seqmatch)
#   SEQMATCH_BENCH_DATA  data folder (default bench/data; fetched by bench/fetch-data.sh)
#   PARTS                which parts (default "sets words build scaling sweep stream"):
#                          sets     SETS against every tool, seqmatch -t 1 and -t 2, and with
#                                   --engine automaton, kmer (k <= 32) and wumanber forced
#                          words    WORD_SETS (distinct words of the King James Bible) over
#                                   kjv.txt repeated BIBLE_COPIES times, the same rows as sets
#                          build    automaton build of 3000 keys of each of BUILD_LENGTHS nt
#                          scaling  SCALE_SETS over panel.seq repeated SCALE_COPIES times
#                                   (10 copies = 1.106 GB >= 1 GiB), seqmatch -t 1..THREAD_MAX,
#                                   Hyperscan once as the reference count
#                          sweep    SWEEP_COUNTS random 31-mers of the panel over its first
#                                   SWEEP_BYTES bytes, every tool (and seqmatch compile alone)
#                          stream   STREAM_COPIES copies of panel.fa through a pipe into
#                                   seqmatch search -p k8_1000 --format count - (peak RSS)
#   REPS                 timed runs per measurement, the median is reported (default 3)
#   SLOW                 a command slower than this many seconds is not repeated (default 60)
#   TIMEOUT              seconds before a seqmatch run is abandoned (default 900)
#   PEER_TIMEOUT         seconds before a peer run is abandoned (default 900)
#   SWEEP_TIMEOUT        the same in the sweep part (default PEER_TIMEOUT); a run stopped
#                        there is reported as ">SECONDS" (a lower bound)
#   TOOLS                which tools to run (default "seqmatch hyperscan grep rg")
#   SETS                 pattern sets of the sets part (default "k20_10 k32_1000 k8_1000 k8_8000
#                        k8_16000 k300_3000")
#   WORD_SETS            default "kjv_w10 kjv_w1000"; BIBLE_COPIES default 10 (44 MB: whole
#                        commands long enough to time; the scan-only rows are per byte anyway)
#   EXACT_BYTES          sets part: scan only the first N bytes of panel.seq (default: all)
#   BUILD_LENGTHS        default "300 3000 6000 9000"; BUILD_THREADS default "0 2"
#   SCALE_SETS           default "k8_1000 k8_8000 k8_16000"; SCALE_COPIES default 10
#   SCALE_ENGINES        engines also forced in the scaling part (default "automaton wumanber":
#                        seed 002's AC and WM; an engine the binary lacks is left out)
#   THREAD_MAX           default: the number of cores
#   SWEEP_COUNTS         default "10 100 1000 10000 100000 1000000"; SWEEP_BYTES default: all
#   STREAM_COPIES        default 92 (about 10.2 GB)
#   WORK                 scratch folder for pattern sets and outputs (default bench/work)
#   RESULTS              output folder (default bench/results): exact.csv, words.csv, scaling.csv,
#                        sweep.csv, stream.csv, build.csv, builders.csv, env.txt
#
# Checks (before the timed runs; see bench/lib.sh): seqmatch and Hyperscan report every
# occurrence, overlapping ones included, so their totals must be equal; so must seqmatch's
# totals with every thread count and engine. A difference marks the timings INVALID (column
# valid) and the script exits 3 at the end. grep -F -o and rg --count-matches report
# non-overlapping leftmost matches only: their counts are smaller and not comparable (valid =
# unchecked); their times are kept for reference.
# MB/s = 10^6 bytes of text per second of wall time of the whole command (reading the files
# and compiling the patterns included). For Hyperscan the scan-only rate is also given.
# cpu_s is the command's user + system CPU time (median): on a busy machine it is steadier than
# wall time for single-threaded runs (cpu_MBps uses it). Hyperscan's scan-only rates come from
# hyperscan_count itself (scan_* by wall clock, scan_cpu_* by process CPU time).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
SEQMATCH=${1:-${SEQMATCH:-$root/build/seqmatch}}
DATA=${SEQMATCH_BENCH_DATA:-$here/data}
PARTS=${PARTS:-sets words build scaling sweep stream}
REPS=${REPS:-3}
SLOW=${SLOW:-60}
TIMEOUT=${TIMEOUT:-900}
PEER_TIMEOUT=${PEER_TIMEOUT:-900}
SWEEP_TIMEOUT=${SWEEP_TIMEOUT:-$PEER_TIMEOUT}
TOOLS=${TOOLS:-seqmatch hyperscan grep rg}
SETS=${SETS:-k20_10 k32_1000 k8_1000 k8_8000 k8_16000 k300_3000}
WORD_SETS=${WORD_SETS:-kjv_w10 kjv_w1000}
BIBLE_COPIES=${BIBLE_COPIES:-10}
EXACT_BYTES=${EXACT_BYTES:-}
BUILD_LENGTHS=${BUILD_LENGTHS:-300 3000 6000 9000}
BUILD_THREADS=${BUILD_THREADS:-0 2}
SCALE_SETS=${SCALE_SETS:-k8_1000 k8_8000 k8_16000}
SCALE_COPIES=${SCALE_COPIES:-10}
THREAD_MAX=${THREAD_MAX:-$(nproc)}
# seed 002's experiment: the dictionary automaton (AC) and Wu-Manber forced, beside the planner
SCALE_ENGINES=${SCALE_ENGINES-automaton wumanber}
SWEEP_COUNTS=${SWEEP_COUNTS:-10 100 1000 10000 100000 1000000}
SWEEP_BYTES=${SWEEP_BYTES:-}
STREAM_COPIES=${STREAM_COPIES:-92}
WORK=${WORK:-$here/work}
RESULTS=${RESULTS:-$here/results}

source "$here/lib.sh"
has() { case " $2 " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
has_tool() { has "$1" "$TOOLS"; }
has_part() { has "$1" "$PARTS"; }
started=$EPOCHREALTIME

# ---------------------------------------------------------------- data, helpers, pattern sets
"$here/fetch-data.sh" "$DATA"
PANEL=$DATA/panel.seq
BIBLE=$DATA/kjv.txt
mkdir -p "$WORK/sets" "$WORK/out" "$WORK/text" "$RESULTS"
OUT=$WORK/out
if has_tool hyperscan && ! make -s -C "$here" hyperscan_count >&2; then
  say "run-exact: hyperscan_count does not build (libhyperscan-dev, pkg-config?): Hyperscan skipped"
  TOOLS=${TOOLS//hyperscan/}
fi
make -s -C "$here" membw >&2 || true
HSCOUNT=$here/hyperscan_count
for t in grep rg; do
  if has_tool $t && ! command -v $t > /dev/null; then say "run-exact: $t missing: skipped"; TOOLS=${TOOLS//$t/}; fi
done

# set name -> "count length seed"; fixed seeds so that every run measures the same patterns
set_spec() {
  case "$1" in
    k8_1000) echo "1000 8 1001" ;;
    k8_8000) echo "8000 8 8001" ;;
    k8_16000) echo "16000 8 16001" ;;
    k20_10) echo "10 20 2001" ;;
    k32_1000) echo "1000 32 3201" ;;
    k300_3000) echo "3000 300 30001" ;;
    k3000_3000) echo "3000 3000 300001" ;;
    k6000_3000) echo "3000 6000 600001" ;;
    k9000_3000) echo "3000 9000 90001" ;;
    k31_*) echo "${1#k31_} 31 $((31000000 + ${1#k31_}))" ;; # the sweep: seed 31000000 + count
    kjv_w*) echo "${1#kjv_w} words $((500000 + ${1#kjv_w}))" ;; # words of the Bible: seed 500000 + count
    *) say "run-exact: unknown set $1"; exit 2 ;;
  esac
}
set_file() {
  local f=$WORK/sets/$1.txt n l s
  if [ ! -s "$f" ]; then
    read -r n l s <<< "$(set_spec "$1")"
    if [ "$l" = words ]; then
      python3 "$here/sample_patterns.py" --words -n "$n" -s "$s" -o "$f.tmp" "$BIBLE"
    else
      # distinct patterns (a repeated 8-mer would only be a duplicate dictionary entry)
      python3 "$here/sample_patterns.py" -n "$n" -l "$l" -s "$s" --unique -o "$f.tmp" "$PANEL"
    fi
    mv "$f.tmp" "$f"
  fi
  echo "$f"
}
fsize() { if [ -f "$1" ]; then wc -c < "$1"; else echo 0; fi; }
# text_prefix BYTES: the first BYTES bytes of panel.seq (panel.seq itself when empty or larger)
text_prefix() {
  local f
  if [ -z "$1" ] || [ "$1" -ge "$(wc -c < "$PANEL")" ]; then echo "$PANEL"; return; fi
  f=$WORK/text/panel.first$1.seq
  [ "$(fsize "$f")" = "$1" ] || head -c "$1" "$PANEL" > "$f"
  echo "$f"
}
# text_copies N [FILE]: FILE (default panel.seq) repeated N times
text_copies() {
  local src=${2:-$PANEL} f want
  f=$WORK/text/$(basename "${src%.*}").x$1.${src##*.}
  want=$(($(wc -c < "$src") * $1))
  if [ "$(fsize "$f")" != "$want" ]; then
    for ((i = 0; i < $1; i++)); do cat "$src"; done > "$f"
  fi
  echo "$f"
}

seqmatch_ok=0
SCANRATE=""
if has_tool seqmatch; then
  if [ -x "$SEQMATCH" ] && "$SEQMATCH" --version > /dev/null 2>&1; then
    seqmatch_ok=1
  else
    say "run-exact: seqmatch binary '$SEQMATCH' missing or not working: its rows are skipped"
  fi
  # the scan-only driver links the static library built beside the binary
  libdir=$(cd "$(dirname "$SEQMATCH")" && pwd)
  if [ "$seqmatch_ok" = 1 ] && [ -f "$libdir/libseqmatch.a" ] && make -s -C "$here" scan_rate LIBDIR="$libdir" >&2; then
    SCANRATE=$here/scan_rate
  else
    say "run-exact: bench/scan_rate not built (no libseqmatch.a beside $SEQMATCH): no scan-only rows for seqmatch"
  fi
fi

# engines of SCALE_ENGINES this binary does not have are left out
HAVE_WUMANBER=0
if [ "$seqmatch_ok" = 1 ]; then
  "$SEQMATCH" search --help 2> /dev/null | grep -q wumanber && HAVE_WUMANBER=1
  known=""
  for e in $SCALE_ENGINES; do
    if "$SEQMATCH" search --help 2> /dev/null | grep -q -- "$e"; then known="$known $e"
    else say "run-exact: this seqmatch has no --engine $e: left out of the scaling part"; fi
  done
  SCALE_ENGINES=${known# }
fi

# ---------------------------------------------------------------- the machine
{
  machine_info
  echo "membw: $("$here/membw" 1024 2> /dev/null || echo '?')"
  echo "text: panel.seq $(wc -c < "$PANEL") bytes"
  echo "parts: $PARTS; reps: $REPS; slow: $SLOW s; peer timeout: $PEER_TIMEOUT s; sweep timeout: $SWEEP_TIMEOUT s"
  echo "hyperscan: $(pkg-config --modversion libhs 2> /dev/null || echo missing)"
  echo "grep: $(grep --version | head -1)"
  echo "rg: $({ rg --version 2> /dev/null || echo missing; } | head -1)"
  if [ "$seqmatch_ok" = 1 ]; then echo "seqmatch: $("$SEQMATCH" --version 2>&1 | head -1)"; fi
  echo "source: commit $(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo '?')$(git -C "$root" diff --quiet HEAD -- src include 2> /dev/null || echo ' with uncommitted changes to src/include')"
} > "$RESULTS/env.txt"
cat "$RESULTS/env.txt" >&2

# ---------------------------------------------------------------- commands and counts
mbps() { awk -v b="$BYTES" -v s="$1" 'BEGIN { if (s == "" || s <= 0) print ""; else if (b / s < 1e7) printf "%.2f", b / s / 1e6; else printf "%.1f", b / s / 1e6 }'; }

# Commands, one per tool: cmd_TOOL SET THREADS TEXT; each writes something count_TOOL reads.
cmd_seqmatch() { "$SEQMATCH" search --alphabet text --format count -t "$2" -p "$1" "$3"; }
cmd_seqmatch_automaton() { "$SEQMATCH" search --alphabet text --format count --engine automaton -t "$2" -p "$1" "$3"; }
cmd_seqmatch_kmer() { "$SEQMATCH" search --alphabet text --format count --engine kmer -t "$2" -p "$1" "$3"; }
cmd_seqmatch_wumanber() { "$SEQMATCH" search --alphabet text --format count --engine wumanber -t "$2" -p "$1" "$3"; }
cmd_seqmatch_compile() { "$SEQMATCH" compile --alphabet text -p "$1" -o "$OUT/compile.$$.db" && wc -c < "$OUT/compile.$$.db" && rm -f "$OUT/compile.$$.db"; }
cmd_hyperscan() { "$HSCOUNT" "$1" "$3"; }
# seqmatch's scan alone, timed inside the driver as hyperscan_count times hs_scan
cmd_seqmatch_scan() { "$SCANRATE" -r "$REPS" "$1" "$3"; }
cmd_grep() { grep -F -o -f "$1" "$3" | wc -l; }
cmd_rg() { rg -F --no-config --count-matches -f "$1" "$3" || [ $? = 1 ]; }
count_seqmatch() { awk -F'\t' '$1 == "total" { print $2 }' "$1"; }
count_seqmatch_automaton() { count_seqmatch "$1"; }
count_seqmatch_kmer() { count_seqmatch "$1"; }
count_seqmatch_wumanber() { count_seqmatch "$1"; }
count_seqmatch_compile() { :; } # no hits: the database bytes are in the note
count_hyperscan() { tr '\t' '\n' < "$1" | sed -n 's/^count=//p'; }
count_seqmatch_scan() { count_hyperscan "$1"; }
count_grep() { tr -d ' ' < "$1"; }
count_rg() { if [ -s "$1" ]; then tr -d ' ' < "$1"; else echo 0; fi; }
export -f cmd_seqmatch_scan cmd_seqmatch cmd_seqmatch_automaton cmd_seqmatch_kmer cmd_seqmatch_wumanber cmd_seqmatch_compile cmd_hyperscan cmd_grep cmd_rg
export SEQMATCH HSCOUNT SCANRATE OUT REPS

# the engine the planner picks for a set (seqmatch compile --explain)
planner_engine() {
  "$SEQMATCH" compile --explain --alphabet text -p "$1" -o "$OUT/explain.db" 2> /dev/null |
    awk '/^engines/ { s = ""; if ($3 + 0 > 0) s = "automaton"; if ($6 + 0 > 0) s = s (s ? "+" : "") "kmer"; if ($8 + 0 > 0) s = s (s ? "+" : "") "shiftand"; if ($10 + 0 > 0) s = s (s ? "+" : "") "wumanber"; print s }'
  rm -f "$OUT/explain.db"
}

HEADER="tool,set,patterns,length,threads,runs,count,wall_s,wall_MBps,cpu_s,cpu_MBps,scan_s,scan_MBps,scan_cpu_s,scan_cpu_MBps,note,wall_min_s,wall_max_s,rss_MB,valid,engine,text_bytes"
declare -A C=()     # slot -> count of its check run
declare -a sizes=() # build: database bytes per --build-threads

# start TOOL SET THREADS TEXT LIMIT: the check run of one measurement; slot = TOOL.SET.tTHREADS.
start() {
  local tool=$1 set=$2 threads=$3 text=$4 limit=$5 slot=$1.$2.t$3 f
  f=$(set_file "$set")
  check_run "$slot" "$limit" "$OUT/$slot" bash -c 'set -o pipefail; cmd_'"$tool"' "$1" "$2" "$3"' _ "$f" "$threads" "$text"
  C[$slot]=""
  if finished "$slot"; then C[$slot]=$("count_$tool" "$OUT/$slot"); fi
}

# compare SLOT REFSLOT: the two counts must be equal (both finished); else SLOT is invalid,
# and so is REFSLOT when no slot agreed with it (settle REFSLOT, after the comparisons).
declare -A DISAGREE=()
compare() {
  [ -n "${C[$1]:-}" ] && [ -n "${C[$2]:-}" ] || return 0
  if [ "${C[$1]}" = "${C[$2]}" ]; then
    agree "$1"
    agree "$2"
  else
    invalid "$1" "count ${C[$1]}; ${2%%.*} counts ${C[$2]}"
    DISAGREE[$2]="${DISAGREE[$2]:+${DISAGREE[$2]}; }${1%%.*} -t ${1##*.t} counts ${C[$1]}"
  fi
}
settle() {
  if [ -n "${DISAGREE[$1]:-}" ] && [ -z "${J_OK[$1]:-}" ]; then
    invalid "$1" "count ${C[$1]}; no other run agreed (${DISAGREE[$1]})"
  fi
  DISAGREE[$1]=""
}

# finish CSV TOOL SET THREADS [ENGINE]: the timed runs of the slot and its row.
finish() {
  local csv=$1 tool=$2 set=$3 threads=$4 engine=${5:-} slot=$2.$3.t$4 n l s out
  read -r n l s <<< "$(set_spec "$set")"
  out=$OUT/$slot
  time_runs "$slot" "count_$tool"
  local note=$M_NOTE scan="" scpu="" wmb cmb smb="" scmb=""
  if { [ "$tool" = hyperscan ] || [ "$tool" = seqmatch_scan ]; } && finished "$slot"; then
    # the median over the check run and the timed runs (each its driver's own median)
    local all=$out
    [ -s "$out.all" ] && all=$out.all
    scan=$(tr '\t' '\n' < "$all" | sed -n 's/^scan_s=//p' | median)
    scpu=$(tr '\t' '\n' < "$all" | sed -n 's/^scan_cpu_s=//p' | median)
    smb=$(mbps "$scan")
    scmb=$(mbps "$scpu")
  fi
  case "$tool" in
    grep | rg) note="${note:+$note; }non-overlapping matches only (count not comparable)" ;;
    seqmatch_compile) finished "$slot" && note="${note:+$note; }seqmatch compile only: database $(head -1 "$out") bytes" ;;
  esac
  wmb=$(mbps "${M_WALL#>}")
  cmb=$(mbps "$M_CPU")
  [ "${M_WALL#>}" = "$M_WALL" ] || wmb=""
  local name=${tool//_/-}
  echo "$name,$set,$n,$l,$threads,$M_RUNS,${C[$slot]:-},$M_WALL,$wmb,$M_CPU,$cmb,$scan,$smb,$scpu,$scmb,${note//,/;},$M_MIN,$M_MAX,$M_RSS,$M_VALID,$engine,$BYTES" >> "$csv"
  say "$(printf '%-18s %-12s t=%-2s n=%s count=%-9s wall %-9s s %7s MB/s (min %s max %s) cpu %-8s s rss %s MB  %s %s' \
    "$name" "$set" "$threads" "$M_RUNS" "${C[$slot]:-}" "$M_WALL" "$wmb" "$M_MIN" "$M_MAX" "$M_CPU" "$M_RSS" "$M_VALID" "$note")"
}

# ---------------------------------------------------------------- parts 1 and 1b: the pattern sets
# run_sets CSV SET...: every tool on each set over $TEXT, counts checked, then timed.
run_sets() {
  local csv=$1 set len slots s tool t lim ref engine
  shift
  echo "$HEADER" > "$csv"
  for set in "$@"; do
    set_file "$set" > /dev/null
    read -r _ len _ <<< "$(set_spec "$set")"
    slots=()
    has_tool hyperscan && slots+=("hyperscan 1")
    if [ "$seqmatch_ok" = 1 ]; then
      slots+=("seqmatch 1" "seqmatch 2")
      [ -n "$SCANRATE" ] && slots+=("seqmatch_scan 1")
      # the direct engines, once (one thread): the planner's choice is the seqmatch row
      slots+=("seqmatch_automaton 1")
      if [ "$len" != words ] && [ "$len" -le 32 ]; then slots+=("seqmatch_kmer 1"); fi
      [ "$HAVE_WUMANBER" = 1 ] && slots+=("seqmatch_wumanber 1")
    fi
    has_tool grep && slots+=("grep 1")
    has_tool rg && slots+=("rg 1")
    # check runs of every tool first, then the comparisons, then the timed runs
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      case $tool in seqmatch*) lim=$TIMEOUT ;; *) lim=$PEER_TIMEOUT ;; esac
      start "$tool" "$set" "$t" "$TEXT" "$lim"
    done
    ref=""
    has_tool hyperscan && finished "hyperscan.$set.t1" && ref=hyperscan.$set.t1
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      case $tool in seqmatch*) ;; *) continue ;; esac
      if [ -n "$ref" ]; then compare "$tool.$set.t$t" "$ref"
      elif [ "$tool.$set.t$t" != "seqmatch.$set.t1" ]; then compare "$tool.$set.t$t" "seqmatch.$set.t1"; fi
    done
    settle "${ref:-seqmatch.$set.t1}"
    engine=""
    [ "$seqmatch_ok" = 1 ] && engine=$(planner_engine "$(set_file "$set")")
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      case $tool in
        seqmatch) finish "$csv" "$tool" "$set" "$t" "auto: $engine" ;;
        seqmatch_*) finish "$csv" "$tool" "$set" "$t" "${tool#seqmatch_}" ;;
        *) finish "$csv" "$tool" "$set" "$t" ;;
      esac
    done
  done
}

if has_part sets; then
  TEXT=$(text_prefix "$EXACT_BYTES")
  BYTES=$(wc -c < "$TEXT")
  say "== sets over $(basename "$TEXT") ($BYTES bytes)"
  run_sets "$RESULTS/exact.csv" $SETS
fi

# English words in a text: Hyperscan's home ground (literal prefilters for a large alphabet)
if has_part words; then
  if [ -s "$BIBLE" ]; then
    TEXT=$(text_copies "$BIBLE_COPIES" "$BIBLE")
    BYTES=$(wc -c < "$TEXT")
    say "== words over kjv.txt x $BIBLE_COPIES ($BYTES bytes)"
    run_sets "$RESULTS/words.csv" $WORD_SETS
  else
    say "run-exact: $BIBLE missing (bench/fetch-data.sh installs bible-kjv): words part skipped"
  fi
fi

# ---------------------------------------------------------------- part 2: automaton build
BCSV=$RESULTS/build.csv
if has_part build && [ "$seqmatch_ok" = 1 ]; then
  say "== automaton build, 3000 keys of $BUILD_LENGTHS nt"
  echo "keys,length,build_threads,runs,wall_s,cpu_s,db_bytes,note,wall_min_s,wall_max_s,rss_MB,valid" > "$BCSV"
  libdir=$(cd "$(dirname "$SEQMATCH")" && pwd)
  builders=0
  if [ -f "$libdir/libseqmatch.a" ] && make -s -C "$here" automaton_build LIBDIR="$libdir" >&2; then
    builders=1
    echo "length,builder,threads,best_s,bytes,identical" > "$RESULTS/builders.csv"
  fi
  for len in $BUILD_LENGTHS; do
    big=$(set_file "k${len}_3000")
    first=""
    for bt in $BUILD_THREADS; do
      slot=build.$len.bt$bt
      db=$OUT/big.$len.bt$bt.db
      rm -f "$db"
      # -o overwrites: every timed run writes the same file again
      check_run "$slot" "$TIMEOUT" "$OUT/$slot" "$SEQMATCH" compile --engine automaton --build-threads "$bt" --alphabet text -p "$big" -o "$db"
      if finished "$slot"; then
        if [ -z "$first" ]; then first=$db
        elif cmp -s "$first" "$db"; then agree "$slot"; agree "build.$len.bt${BUILD_THREADS%% *}"
        else invalid "$slot" "database differs from --build-threads ${BUILD_THREADS%% *}"; fi
      fi
      sizes[$bt]=$( [ -f "$db" ] && wc -c < "$db" || echo "")
    done
    for bt in $BUILD_THREADS; do
      slot=build.$len.bt$bt
      time_runs "$slot"
      echo "3000,$len,$bt,$M_RUNS,$M_WALL,$M_CPU,${sizes[$bt]},${M_NOTE//,/;},$M_MIN,$M_MAX,$M_RSS,$M_VALID" >> "$BCSV"
      say "build 3000 x $len --build-threads $bt: runs=$M_RUNS wall=$M_WALL s (min $M_MIN max $M_MAX) cpu=$M_CPU s rss=$M_RSS MB db=${sizes[$bt]} bytes $M_VALID"
    done
    rm -f "$OUT"/big.$len.bt*.db
    # The builders alone (no reading, assembly or saving): best of REPS, compared byte for byte.
    if [ "$builders" = 1 ]; then
      if "$here/automaton_build" "$big" "$THREAD_MAX" "$REPS" > "$OUT/builders.$len"; then
        tail -n +2 "$OUT/builders.$len" | sed "s/^/$len,/" >> "$RESULTS/builders.csv"
        if grep -q ',NO$' "$OUT/builders.$len"; then
          INVALID_ANY=1
          say "!!!!!!!! INVALID: the automaton builders gave different bytes for 3000 x $len nt !!!!!!!!"
        fi
      fi
    fi
  done
  [ "$builders" = 1 ] && sed 's/^/  /' "$RESULTS/builders.csv" >&2
fi

# ---------------------------------------------------------------- part 3: threads, >= 1 GiB
if has_part scaling && [ "$seqmatch_ok" = 1 ]; then
  TEXT=$(text_copies "$SCALE_COPIES")
  BYTES=$(wc -c < "$TEXT")
  CSV=$RESULTS/scaling.csv
  echo "$HEADER" > "$CSV"
  say "== scaling over panel.seq x $SCALE_COPIES ($BYTES bytes), 1..$THREAD_MAX threads"
  for set in $SCALE_SETS; do
    slots=()
    has_tool hyperscan && slots+=("hyperscan 1")
    for ((t = 1; t <= THREAD_MAX; t++)); do
      slots+=("seqmatch $t")
      for e in $SCALE_ENGINES; do slots+=("seqmatch_$e $t"); done
    done
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      case $tool in seqmatch*) lim=$TIMEOUT ;; *) lim=$PEER_TIMEOUT ;; esac
      start "$tool" "$set" "$t" "$TEXT" "$lim"
    done
    for ((t = 1; t <= THREAD_MAX; t++)); do
      if has_tool hyperscan && finished "hyperscan.$set.t1"; then compare "seqmatch.$set.t$t" "hyperscan.$set.t1"
      elif [ "$t" -gt 1 ]; then compare "seqmatch.$set.t$t" "seqmatch.$set.t1"; fi
      for e in $SCALE_ENGINES; do compare "seqmatch_$e.$set.t$t" "seqmatch.$set.t1"; done
    done
    settle hyperscan.$set.t1
    settle seqmatch.$set.t1
    engine=$(planner_engine "$(set_file "$set")")
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      if [ "$tool" = hyperscan ]; then
        # one run: the reference count and a single-thread baseline (slow on 1 GiB)
        SLOW=0 finish "$CSV" "$tool" "$set" "$t"
      elif [ "$tool" = seqmatch ]; then
        finish "$CSV" "$tool" "$set" "$t" "auto: $engine"
      else
        finish "$CSV" "$tool" "$set" "$t" "${tool#seqmatch_}"
      fi
    done
  done
fi

# ---------------------------------------------------------------- part 4: number of patterns
if has_part sweep; then
  TEXT=$(text_prefix "$SWEEP_BYTES")
  BYTES=$(wc -c < "$TEXT")
  CSV=$RESULTS/sweep.csv
  echo "$HEADER" > "$CSV"
  say "== sweep: $SWEEP_COUNTS random 31-mers over $(basename "$TEXT") ($BYTES bytes)"
  for cnt in $SWEEP_COUNTS; do
    set=k31_$cnt
    set_file "$set" > /dev/null
    slots=()
    has_tool hyperscan && slots+=("hyperscan 1")
    [ "$seqmatch_ok" = 1 ] && slots+=("seqmatch_compile $THREAD_MAX" "seqmatch 1" "seqmatch $THREAD_MAX")
    has_tool grep && slots+=("grep 1")
    has_tool rg && slots+=("rg 1")
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      case $tool in seqmatch*) lim=$TIMEOUT ;; *) lim=$SWEEP_TIMEOUT ;; esac
      start "$tool" "$set" "$t" "$TEXT" "$lim"
    done
    if [ "$seqmatch_ok" = 1 ]; then
      if has_tool hyperscan && finished "hyperscan.$set.t1"; then
        compare "seqmatch.$set.t1" "hyperscan.$set.t1"
        [ "$THREAD_MAX" -gt 1 ] && compare "seqmatch.$set.t$THREAD_MAX" "hyperscan.$set.t1"
      elif [ "$THREAD_MAX" -gt 1 ]; then
        compare "seqmatch.$set.t$THREAD_MAX" "seqmatch.$set.t1"
      fi
      settle hyperscan.$set.t1
      settle seqmatch.$set.t1
      engine=$(planner_engine "$(set_file "$set")")
    fi
    for s in "${slots[@]}"; do
      read -r tool t <<< "$s"
      case $tool in seqmatch*) finish "$CSV" "$tool" "$set" "$t" "auto: $engine" ;; *) finish "$CSV" "$tool" "$set" "$t" ;; esac
    done
  done
fi

# ---------------------------------------------------------------- part 5: a long stream
if has_part stream && [ "$seqmatch_ok" = 1 ]; then
  FA=$DATA/panel.fa
  say "== stream: $STREAM_COPIES copies of panel.fa through a pipe"
  CSV=$RESULTS/stream.csv
  echo "copies,bytes,threads,runs,count,wall_s,wall_MBps,cpu_s,rss_MB,valid,note" > "$CSV"
  k8=$(set_file k8_1000)
  # one copy as a file: the reference count (records never span copies, so N copies = N times)
  check_run stream.one "$TIMEOUT" "$OUT/stream.one" "$SEQMATCH" search --format count -p "$k8" "$FA"
  one=$(awk -F'\t' '$1 == "total" { print $2 }' "$OUT/stream.one")
  feed() { for ((i = 0; i < $1; i++)); do cat "$2"; done; }
  export -f feed
  check_run stream "$TIMEOUT" "$OUT/stream" bash -c 'set -o pipefail; feed "$1" "$2" | "$SEQMATCH" search --format count -p "$3" -' _ "$STREAM_COPIES" "$FA" "$k8"
  got=""
  if finished stream; then
    got=$(awk -F'\t' '$1 == "total" { print $2 }' "$OUT/stream")
    if [ -n "$one" ] && [ "$got" = "$((one * STREAM_COPIES))" ]; then agree stream
    else invalid stream "count $got; $STREAM_COPIES x the count of one copy ($one) = $((${one:-0} * STREAM_COPIES))"; fi
  fi
  BYTES=$(($(wc -c < "$FA") * STREAM_COPIES))
  SLOW=0 time_runs stream
  echo "$STREAM_COPIES,$BYTES,$(nproc),$M_RUNS,$got,$M_WALL,$(mbps "${M_WALL#>}"),$M_CPU,$M_RSS,$M_VALID,${M_NOTE//,/;}" >> "$CSV"
  say "stream: $STREAM_COPIES copies, $BYTES bytes: count $got, wall $M_WALL s, cpu $M_CPU s, peak RSS $M_RSS MB, $M_VALID"
fi

# ---------------------------------------------------------------- the end
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS/env.txt"
echo "script wall time: $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f s", b - a }')" >> "$RESULTS/env.txt"
say "results in $RESULTS: exact.csv words.csv build.csv builders.csv scaling.csv sweep.csv stream.csv env.txt (the parts run)"
if [ "$INVALID_ANY" = 1 ]; then
  say "run-exact: some results DIFFER: their timings are marked INVALID (see above)"
  exit 3
fi
