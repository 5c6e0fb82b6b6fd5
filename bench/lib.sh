# Shell helpers shared by the benchmark scripts (sourced, not run).

# timed_limit SECONDS OUTFILE CMD...: runs CMD once with stdout to OUTFILE (stderr to
# OUTFILE.err); sets LAST_S (wall seconds), LAST_CPU (user + system CPU seconds of CMD and
# its children) and LAST_RC (exit status; 124 = timed out).
timed_limit() {
  local limit=$1 out=$2 t0 t1
  shift 2
  t0=$EPOCHREALTIME
  set +e
  timeout "$limit" bash -c 'TIMEFORMAT="%U %S"; { time "$@" 2> "$0.err"; } 2> "$0.time"' \
    "$out" "$@" > "$out"
  LAST_RC=$?
  set -e
  t1=$EPOCHREALTIME
  LAST_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
  LAST_CPU=$(awk 'NF == 2 { printf "%.4f", $1 + $2 }' "$out.time" 2> /dev/null || true)
}

# median: the median of the numbers on standard input (separated by blanks or newlines).
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
