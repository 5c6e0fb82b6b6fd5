#!/usr/bin/env bash
# Two builds of seqmatch, the same scan, side by side: for a change meant to keep speed (a
# refactor), the scan rates of the build before (A) and after (B) on every set of the exact
# engines' targets (bench/run-targets.sh), one core, alternating which build goes first in
# every round.
#
# usage: bench/run-ab.sh SCAN_RATE_A SCAN_RATE_B DATA_DIR SETS_DIR
#   SCAN_RATE_A, SCAN_RATE_B: bench/scan_rate linked against each build's libseqmatch.a
#   DATA_DIR holds panel.seq and kjv.txt; SETS_DIR the sets of bench/run-targets.sh
# environment: ROUNDS (5), CORE (0), BIBLE_COPIES (10), ENGINES ("auto")
# Output: one line per measurement (round, set, engine, build, count, MB/s), then per set and
# engine the median MB/s of each build, B/A of the medians and the median of the per-round
# B/A. Exit 2 when the two builds count differently.
set -euo pipefail
A=${1:?usage: run-ab.sh SCAN_RATE_A SCAN_RATE_B DATA_DIR SETS_DIR}
B=${2:?second scan_rate}
DATA=${3:?data folder}
SETS=${4:?pattern set folder}
ROUNDS=${ROUNDS:-5}
CORE=${CORE:-0}
BIBLE_COPIES=${BIBLE_COPIES:-10}
ENGINES=${ENGINES:-auto}
command -v taskset > /dev/null || { echo "run-ab.sh: taskset (util-linux) is needed" >&2; exit 2; }
field() { tr '\t' '\n' <<< "$2" | sed -n "s/^$1=//p"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$BIBLE_COPIES"); do cat "$DATA/kjv.txt"; done > "$work/bible.txt"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), core $CORE"
results=$work/results.tsv
printf 'round\tset\tengine\tbuild\tcount\tscan_MBps\n'
for round in $(seq "$ROUNDS"); do
  for set in k20_10 k32_1000 k8_1000 k8_8000 k8_16000 k31_1000000 k300_3000 kjv_w10 kjv_w1000; do
    [ -f "$SETS/$set.txt" ] || continue
    case $set in kjv_*) text=$work/bible.txt args=(-a text) ;; *) text=$DATA/panel.seq args=(-a dna -s +) ;; esac
    for engine in $ENGINES; do
      for build in $([ $((round % 2)) = 1 ] && echo A B || echo B A); do
        bin=$A
        [ "$build" = B ] && bin=$B
        line=$(taskset -c "$CORE" "$bin" -r 3 -e "$engine" "${args[@]}" "$SETS/$set.txt" "$text")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$set" "$engine" "$build" "$(field count "$line")" \
          "$(field scan_MBps "$line")" | tee -a "$results"
      done
    done
  done
done
echo
echo "# medians over the rounds (MB/s); B/A of the medians, and the median of the per-round B/A"
awk -F'\t' '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $2 SUBSEP $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    rate[key SUBSEP $4] = rate[key SUBSEP $4] " " $6; at[key SUBSEP $1 SUBSEP $4] = $6
    if ((key SUBSEP "count") in cnt && cnt[key SUBSEP "count"] != $5) bad = bad " " $2; cnt[key SUBSEP "count"] = $5
    if ((key SUBSEP $1 SUBSEP "A") in at && (key SUBSEP $1 SUBSEP "B") in at && !((key SUBSEP $1) in done)) {
      done[key SUBSEP $1] = 1; ratio[key] = ratio[key] " " at[key SUBSEP $1 SUBSEP "B"] / at[key SUBSEP $1 SUBSEP "A"] } }
  END {
    printf "%-12s %-10s %9s %9s %8s %8s\n", "set", "engine", "A", "B", "B/A", "rounds"
    for (i = 1; i <= n; i++) { k = order[i]; split(k, p, SUBSEP); a = median(rate[k SUBSEP "A"]); b = median(rate[k SUBSEP "B"])
      printf "%-12s %-10s %9.1f %9.1f %7.3fx %7.3fx\n", p[1], p[2], a, b, b / a, median(ratio[k]) }
    if (bad != "") { print "COUNTS DIFFER:" bad; exit 2 }
    print "both builds counted the same occurrences of each set"
  }' "$results"
