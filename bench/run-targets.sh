#!/usr/bin/env bash
# The exact-engine targets side by side in one run, on one core: every pattern set of the exact
# engines' benchmark list, scanned by seqmatch's planner (`auto`), by the automaton alone and by
# Hyperscan, in alternating rounds, next to the core's memory read bandwidth.
#
#   DNA, panel.seq, every occurrence, one strand: 10 x 20 nt, 1000 x 32 nt, 1000 / 8000 /
#   16000 x 8 nt, 10^6 x 31 nt, 3000 x 300 nt
#   text, kjv.txt repeated BIBLE_COPIES times: 10 and 1000 words of the Bible
#
# usage: bench/run-targets.sh SCAN_RATE HYPERSCAN_COUNT DATA_DIR SETS_DIR
#   SCAN_RATE, HYPERSCAN_COUNT: bench/scan_rate and bench/hyperscan_count (the scan alone,
#     median of 3 scans after a warm-up one, MB = 10^6 bytes)
#   DATA_DIR holds panel.seq and kjv.txt (bench/fetch-data.sh)
#   SETS_DIR holds k20_10 k32_1000 k8_1000 k8_8000 k8_16000 k31_1000000 k300_3000 kjv_w10
#     kjv_w1000 (.txt), sampled as in bench/results/history.md ("Pattern sets")
# environment:
#   ROUNDS (5)          rounds; seqmatch runs in every round
#   CORE (0)            the core everything is pinned to (taskset)
#   BIBLE_COPIES (10)   copies of kjv.txt in the text scanned for the word sets
#   HS_PREFIX (10000000) Hyperscan scans only this many first bytes for the sets where it
#                       runs near 1 MB/s (10^6 x 31 nt, 3000 x 300 nt); seqmatch scans the same
#                       prefix once so that the counts can be compared
#   SLOW (2)            a tool whose first round took more than SLOW seconds per scan runs in
#                       that round only (Hyperscan on the DNA sets, the automaton on 10^6 keys)
#   MEMBW               bench/membw, to print the core's read bandwidth (optional)
# Output: one line per measurement (round, set, tool, engine, count, MB/s), then per set the
# median MB/s of each tool over its rounds, the ratio auto / automaton of the medians and the
# median of its per-round values (the two run back to back, each going first in every other
# round), auto / Hyperscan, and auto as a share of the read bandwidth. Exit 2 when two tools
# count differently.
set -euo pipefail
SCAN=${1:?usage: run-targets.sh SCAN_RATE HYPERSCAN_COUNT DATA_DIR SETS_DIR}
HS=${2:?Hyperscan counter}
DATA=${3:?data folder}
SETS=${4:?pattern set folder}
ROUNDS=${ROUNDS:-5}
CORE=${CORE:-0}
BIBLE_COPIES=${BIBLE_COPIES:-10}
HS_PREFIX=${HS_PREFIX:-10000000}
SLOW=${SLOW:-2}
command -v taskset > /dev/null || { echo "run-targets.sh: taskset (util-linux) is needed" >&2; exit 2; }

# field NAME LINE: the value of NAME= in a tab-separated key=value line
field() { tr '\t' '\n' <<< "$2" | sed -n "s/^$1=//p"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$BIBLE_COPIES"); do cat "$DATA/kjv.txt"; done > "$work/bible.txt"
head -c "$HS_PREFIX" "$DATA/panel.seq" > "$work/panel.prefix"

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), core $CORE"
if [ -n "${MEMBW:-}" ]; then
  bw=$(field read_GBps "$(taskset -c "$CORE" "$MEMBW" 1024 | tail -1)")
  echo "# read bandwidth of one core: ${bw:-?} GB/s ($MEMBW 1024)"
fi
bw=${bw:-0}

dna_sets="k20_10 k32_1000 k8_1000 k8_8000 k8_16000 k31_1000000 k300_3000"
word_sets="kjv_w10 kjv_w1000"
hs_prefix_sets=" k31_1000000 k300_3000 "

results=$work/results.tsv
# measure ROUND SET TOOL TEXT ARGS...: one line of results; slow_s: the seconds of one scan
measure() {
  local round=$1 set=$2 tool=$3 text=$4; shift 4
  local line
  if [[ "$tool" == hyperscan* ]]; then
    line=$(taskset -c "$CORE" "$HS" -r 3 "$SETS/$set.txt" "$text")
  else
    line=$(taskset -c "$CORE" "$SCAN" -r 3 "$@" "$SETS/$set.txt" "$text")
  fi
  local engine
  engine=$(field engine "$line")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$set" "$tool" "${engine:--}" "$(field count "$line")" \
    "$(field scan_MBps "$line")" "$(field bytes "$line")" | tee -a "$results"
  slow_s=$(field scan_s "$line")
}

printf 'round\tset\ttool\tengine\tcount\tscan_MBps\tbytes\n'
declare -A once
for round in $(seq "$ROUNDS"); do
  for set in $dna_sets $word_sets; do
    if [[ " $word_sets " == *" $set "* ]]; then text=$work/bible.txt args=(-a text); else text=$DATA/panel.seq args=(-a dna -s +); fi
    # the planner and the automaton alone take turns at going first
    for engine in $([ $((round % 2)) = 1 ] && echo auto automaton || echo automaton auto); do
      if [ "$engine" = automaton ] && [ -n "${once[$set/automaton]:-}" ] && [ "$round" != 1 ]; then continue; fi
      measure "$round" "$set" "$engine" "$text" -e "$engine" "${args[@]}"
      if [ "$engine" = automaton ] && awk -v s="$slow_s" -v lim="$SLOW" 'BEGIN { exit !(s > lim) }'; then
        once[$set/automaton]=1
      fi
    done
    if [ -z "${once[$set/hyperscan]:-}" ] || [ "$round" = 1 ]; then
      if [[ "$hs_prefix_sets" == *" $set "* ]]; then
        if [ "$round" = 1 ]; then
          measure "$round" "$set" auto-prefix "$work/panel.prefix" -e auto "${args[@]}"
          measure "$round" "$set" hyperscan-prefix "$work/panel.prefix"
        fi
        once[$set/hyperscan]=1
      else
        measure "$round" "$set" hyperscan "$text"
        awk -v s="$slow_s" -v lim="$SLOW" 'BEGIN { exit !(s > lim) }' && once[$set/hyperscan]=1
      fi
    fi
  done
done

echo
echo "# medians over the rounds (MB/s); auto/automaton and auto/Hyperscan; auto as % of ${bw} GB/s"
awk -F'\t' -v bw="$bw" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $2 SUBSEP $3; rates[key] = rates[key] " " $6; runs[key]++; if (!($2 in order)) { order[$2] = ++nsets; name[nsets] = $2 }
    at[$2 SUBSEP $1 SUBSEP $3] = $6
    if ($3 == "auto" || $3 == "automaton") { other = $3 == "auto" ? "automaton" : "auto"
      if (($2 SUBSEP $1 SUBSEP other) in at) { r = $3 == "auto" ? $6 / at[$2 SUBSEP $1 SUBSEP other] : at[$2 SUBSEP $1 SUBSEP other] / $6
        paired[$2] = paired[$2] " " r } }
    if ($3 == "auto") engine[$2] = $4
    base = $3; sub(/-prefix$/, "", base); cnt = $2 SUBSEP ($3 ~ /-prefix$/ ? "prefix" : "whole")
    if (cnt in count && count[cnt] != $5) { bad = bad " " $2 } else count[cnt] = $5 }
  END {
    printf "%-12s %-10s %9s %9s %10s %9s %9s %9s %6s %s\n", "set", "engine", "auto", "automaton", "hyperscan", "/autom.", "(rounds)", "/hs", "%bw", "rounds auto/autom./hs"
    for (i = 1; i <= nsets; i++) {
      s = name[i]; a = median(rates[s SUBSEP "auto"]); m = median(rates[s SUBSEP "automaton"])
      hk = (s SUBSEP "hyperscan") in rates ? s SUBSEP "hyperscan" : s SUBSEP "hyperscan-prefix"
      h = median(rates[hk]); if (hk ~ /prefix/) { ap = median(rates[s SUBSEP "auto-prefix"]); hr = ap / h; hn = h "*" } else { hr = a / h; hn = h }
      printf "%-12s %-10s %9.1f %9.1f %10s %8.2fx %8.2fx %8.2fx %5.1f%% %d/%d/%d\n", s, engine[s], a, m, hn, a / m, median(paired[s]), hr,
        (bw > 0 ? a / (bw * 10) : 0), runs[s SUBSEP "auto"], runs[s SUBSEP "automaton"], runs[hk]
    }
    print "* Hyperscan over the first bytes of panel.seq only; its ratio is to seqmatch over the same bytes"
    if (bad != "") { print "COUNTS DIFFER:" bad; exit 2 }
    print "every tool counted the same occurrences of each set"
  }' "$results"
