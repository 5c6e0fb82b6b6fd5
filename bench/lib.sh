# shellcheck shell=bash disable=SC2034
# Shell helpers shared by the benchmark scripts (sourced, not run).
#
# Every measurement is made in two steps:
#   check_run SLOT LIMIT OUTFILE CMD...   runs CMD once (untimed for the statistics: it is the
#                                         warm-up); its output stays in OUTFILE to be checked
#   ... the caller compares OUTFILE with what other tools computed, then calls
#   agree SLOT  or  invalid SLOT REASON   (invalid prints a loud banner and sets INVALID_ANY=1)
#   time_runs SLOT [KEYFN]                REPS timed runs of the same command (their output is
#                                         compared with the check run's through KEYFN)
# so every timing is taken after its result was checked, and a timing whose result disagreed
# with another tool computing the same thing is reported with valid = INVALID.
#
# Settings read from the environment of the sourcing script: REPS (timed runs), SLOW (seconds:
# a check run slower than this is not repeated; its own time is reported, runs = 1).

INVALID_ANY=${INVALID_ANY:-0}
declare -A J_CMD=() J_OUT=() J_LIMIT=() J_S=() J_CPU=() J_RSS=() J_RC=() J_NOTE=() J_BAD=() J_OK=()

say() { printf '%s\n' "$*" >&2; }

# timed_limit SECONDS OUTFILE CMD...: runs CMD once with stdout to OUTFILE (stderr to
# OUTFILE.err); sets LAST_S (wall seconds), LAST_CPU (user + system CPU seconds of CMD and
# its children), LAST_RSS (peak resident set size in MB of the largest process of CMD, from
# /usr/bin/time; empty without it) and LAST_RC (exit status; 124 = timed out).
timed_limit() {
  local limit=$1 out=$2 t0 t1
  shift 2
  local wrap=()
  if [ -x /usr/bin/time ]; then wrap=(/usr/bin/time -q -f %M -o "$out.rss"); fi
  rm -f "$out.rss"
  t0=$EPOCHREALTIME
  set +e
  timeout "$limit" bash -c 'TIMEFORMAT="%U %S"; { time "$@" 2> "$0.err"; } 2> "$0.time"' \
    "$out" "${wrap[@]}" "$@" > "$out"
  LAST_RC=$?
  set -e
  t1=$EPOCHREALTIME
  LAST_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
  LAST_CPU=$(awk 'NF == 2 { printf "%.4f", $1 + $2 }' "$out.time" 2> /dev/null || true)
  LAST_RSS=$(awk '$1 ~ /^[0-9]+$/ { v = $1 } END { if (v != "") printf "%.1f", v / 1024 }' "$out.rss" 2> /dev/null || true)
}

# median: the median of the numbers on standard input (separated by blanks or newlines).
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# minimum, maximum of the numbers on standard input
minimum() { tr ' ' '\n' | grep . | sort -g | head -1; }
maximum() { tr ' ' '\n' | grep . | sort -g | tail -1; }
# slower SECONDS: true when SECONDS > SLOW
slower() { awk -v t="$1" -v s="${SLOW:-10}" 'BEGIN { exit !(t > s) }'; }

# check_run SLOT LIMIT OUTFILE CMD...: the first run of a measurement (see the top).
# Sets J_NOTE[SLOT] to "timed out after LIMITs" or "failed (exit N): ..." when it did not finish
# (exit status 124, or 2 and above: 1 means "nothing found" for the grep-like tools).
check_run() {
  local slot=$1 limit=$2 out=$3
  shift 3
  J_CMD[$slot]=$(printf '%q ' "$@")
  J_OUT[$slot]=$out J_LIMIT[$slot]=$limit J_BAD[$slot]="" J_OK[$slot]="" J_NOTE[$slot]=""
  timed_limit "$limit" "$out" "$@"
  J_S[$slot]=$LAST_S J_CPU[$slot]=$LAST_CPU J_RSS[$slot]=$LAST_RSS J_RC[$slot]=$LAST_RC
  if [ "$LAST_RC" = 124 ]; then
    J_NOTE[$slot]="timed out after ${limit}s"
  elif [ "$LAST_RC" -ge 2 ]; then
    J_NOTE[$slot]="failed (exit $LAST_RC): $(head -c 200 "$out.err" | tr '\n,' '  ')"
  fi
}
# finished SLOT: true when the slot's check run finished
finished() { [ -z "${J_NOTE[$1]:-}" ]; }
# agree SLOT: its result was compared with another tool's (or a reference) and agreed
agree() { J_OK[$1]=1; }
# invalid SLOT REASON: its result disagreed; every timing of the slot is reported as INVALID
invalid() {
  J_BAD[$1]="${J_BAD[$1]:+${J_BAD[$1]}; }$2"
  INVALID_ANY=1
  say ""
  say "!!!!!!!! INVALID TIMING ($1): $2 !!!!!!!!"
  say ""
}

# time_runs SLOT [KEYFN]: the timed runs (see the top). KEYFN FILE prints what must be the same
# in every run's output (e.g. a hit count); a difference marks the slot invalid.
# Sets M_RUNS (timed runs), M_WALL (median wall s, ">LIMIT" when the check run timed out),
# M_MIN, M_MAX (wall s), M_CPU (median user + system s), M_RSS (peak RSS MB, the largest of all
# runs), M_NOTE (why there is no timing, or "one run"), M_VALID (ok | unchecked | INVALID: ...).
time_runs() {
  local slot=$1 keyfn=${2:-} out=${J_OUT[$1]} limit=${J_LIMIT[$1]} times="" cpus="" rss ref="" key r
  M_RUNS=0 M_WALL="" M_MIN="" M_MAX="" M_CPU="" M_RSS=${J_RSS[$slot]} M_NOTE=${J_NOTE[$slot]}
  rss=$M_RSS
  rm -f "$out.all"
  if [ -n "$M_NOTE" ]; then
    if [ "${J_RC[$slot]}" = 124 ]; then M_WALL=">$limit"; fi
  elif slower "${J_S[$slot]}"; then
    M_RUNS=1 M_WALL=${J_S[$slot]} M_MIN=${J_S[$slot]} M_MAX=${J_S[$slot]} M_CPU=${J_CPU[$slot]}
    M_NOTE="one run (slower than ${SLOW:-10} s)"
  else
    if [ -n "$keyfn" ]; then ref=$("$keyfn" "$out"); fi
    # every run's output, the check run's first (drivers that time themselves print their
    # figures in it: the median over all runs is steadier than one run's)
    cp "$out" "$out.all"
    for ((r = 0; r < REPS; r++)); do
      eval "timed_limit \"\$limit\" \"\$out.rep\" ${J_CMD[$slot]}"
      if [ "$LAST_RC" = 124 ] || [ "$LAST_RC" -ge 2 ]; then
        invalid "$slot" "timed run $((r + 1)) ended with exit status $LAST_RC"
        break
      fi
      M_RUNS=$((M_RUNS + 1))
      cat "$out.rep" >> "$out.all"
      times="$times $LAST_S"
      cpus="$cpus $LAST_CPU"
      rss="$rss $LAST_RSS"
      if [ -n "$keyfn" ]; then
        key=$("$keyfn" "$out.rep")
        if [ "$key" != "$ref" ]; then invalid "$slot" "output changed between runs ($ref, then $key)"; fi
      fi
    done
    if [ -n "${times// /}" ]; then
      M_WALL=$(echo "$times" | median)
      M_MIN=$(echo "$times" | minimum)
      M_MAX=$(echo "$times" | maximum)
    fi
    if [ -n "${cpus// /}" ]; then M_CPU=$(echo "$cpus" | median); fi
    rm -f "$out.rep"
  fi
  if [ -n "${rss// /}" ]; then M_RSS=$(echo "$rss" | maximum); fi
  if [ -n "${J_BAD[$slot]}" ]; then M_VALID="INVALID: ${J_BAD[$slot]}"
  elif [ -n "${J_OK[$slot]}" ]; then M_VALID=ok
  else M_VALID=unchecked; fi
  M_VALID=${M_VALID//,/;}
}

# machine_info: the machine and the load, one "key: value" a line (for env files)
machine_info() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
  echo "cpus: $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel: $(uname -sr)"
  echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
}
