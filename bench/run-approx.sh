#!/usr/bin/env bash
# Approximate search benchmark: seqmatch with k mismatches and k edits side by side with
# seqkit locate, edlib, ugrep -Z and tre-agrep on the real bacterial panel (panel.fa: 110.6 Mbp,
# 30 genomes and assemblies, 2931 FASTA records, both strands unless a case says otherwise) and
# on the King James Bible (seed 004's experiment). Every result that a peer or a reference
# computes identically is compared before it is reported (MISMATCH, exit status 3).
#
# usage: bench/run-approx.sh [SEQMATCH_BINARY]
#
# Environment (all optional):
#   SEQMATCH             seqmatch binary, if no argument names one (default build/seqmatch)
#   SEQMATCH_BENCH_DATA  data folder (default bench/data; fetched by bench/fetch-data.sh)
#   REPS                 runs per measurement, the median is reported (default 3)
#   SLOW                 a command slower than this many seconds is not repeated (default 10)
#   TIMEOUT              seconds before a seqmatch run is abandoned (default 600)
#   PEER_TIMEOUT         seconds before a peer run is abandoned; its time is then reported as
#                        "> PEER_TIMEOUT" (default 60)
#   CASES                which cases (default "check primers lines guides long m64 bible")
#   PEERS                which peers (default "seqkit edlib ugrep tre-agrep")
#   THREADS              seqmatch thread counts (default "2 1")
#   KS                   k values of the primer cases (default "0 1 2 3")
#   ORACLE               1: check seqmatch's hits against bench/dp_oracle (default 1)
#   INSTALL              1: apt-get install the peers that are missing (default 1)
#   WORK                 scratch folder for pattern sets and outputs (default bench/work)
#   RESULTS              output folder (default bench/results): approx.csv, env-approx.txt
#
# Cases (patterns sampled from panel.seq by bench/sample_patterns.py --fasta, fixed seeds;
# the 1- and 10-primer sets are the first records of the 100-primer set):
#   check    brute-force Python check of seqmatch on one genome (bench/check_approx.py)
#   primers  1, 10, 100 primers of 20 nt, -m K and -k K for K in KS (--report best), -t 2 and -t 1
#   lines    1 primer, -k 2, panel.fa read as text lines (forward strand): seqmatch --alphabet
#            text --lines against ugrep -Z2 and tre-agrep -2 (matching lines)
#   guides   20 CRISPR guides (20 nt + NGG), -m 4
#   long     10 x 100 nt with -k 5 and 10 x 1000 nt with -k 50 (5 % edits)
#   m64      64 patterns of 64 nt, -k 3, one thread (the Myers GCUPS target)
#   bible    LORD and "for his mercy endureth for ever", -k 1 and -k 2, kjv.txt as one text
#            record, --report ends (every end position, as Myers' search reports them)
#
# What is compared (column "check"):
#   seqkit locate -m K: every window with <= K mismatches on both strands -- the same as
#     seqmatch -m K; counts and sorted (record, pattern, strand, start, end) must be equal.
#     Guides: seqkit has no IUPAC with -m, so it gets the guide + NGG with a literal N and
#     -m 5 (the N mismatches every base): that equals seqmatch -m 4 except for windows with a
#     non-ACGT text byte under the N (seqkit: N = N, a match), which are dropped before comparing.
#   edlib (bench/edlib_count): one call per pattern, record and strand, EDLIB_MODE_HW, task
#     DISTANCE: the least distance and the ends reaching it. "found" = (record, pattern,
#     strand) triples with a distance <= K: equal to the distinct triples in seqmatch's hits.
#     Bible: edlib's best ends = seqmatch's ends with the least error count.
#   ugrep -Z / tre-agrep -k: lines holding a substring within K edits: equal to the distinct
#     records of seqmatch --alphabet text --lines.
#   dp_oracle (bench/dp_oracle.c): plain dynamic programme / window comparison, every hit.
# GCUPS (edit cases) = pattern length x text length x patterns x strands / wall seconds.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
SEQMATCH=${1:-${SEQMATCH:-$root/build/seqmatch}}
DATA=${SEQMATCH_BENCH_DATA:-$here/data}
REPS=${REPS:-3}
SLOW=${SLOW:-10}
TIMEOUT=${TIMEOUT:-600}
PEER_TIMEOUT=${PEER_TIMEOUT:-60}
CASES=${CASES:-check primers lines guides long m64 bible}
PEERS=${PEERS:-seqkit edlib ugrep tre-agrep}
THREADS=${THREADS:-2 1}
KS=${KS:-0 1 2 3}
ORACLE=${ORACLE:-1}
INSTALL=${INSTALL:-1}
WORK=${WORK:-$here/work}
RESULTS=${RESULTS:-$here/results}

say() { printf '%s\n' "$*" >&2; }
has() { case " $2 " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
has_case() { has "$1" "$CASES"; }
started=$EPOCHREALTIME

# ---------------------------------------------------------------- data, peers, helpers
"$here/fetch-data.sh" "$DATA"
FASTA=$DATA/panel.fa
SEQ=$DATA/panel.seq
BIBLE=$DATA/kjv.txt
BASES=$(wc -c < "$SEQ") # every base of panel.fa, no headers or line breaks
mkdir -p "$WORK/approx/sets" "$WORK/approx/out" "$RESULTS"
SETS=$WORK/approx/sets
OUT=$WORK/approx/out

[ -x "$SEQMATCH" ] && "$SEQMATCH" --version > /dev/null 2>&1 ||
  { say "run-approx: seqmatch binary '$SEQMATCH' missing or not working"; exit 2; }

# Peers from Debian: installed when missing and the package exists, else skipped with a note.
declare -A pkg=([seqkit]=seqkit [ugrep]=ugrep [tre-agrep]=tre-agrep [edlib]=libedlib-dev)
declare -A peer_ok=()
NOTES=""
for p in $PEERS; do
  if [ "$p" = edlib ]; then present() { pkg-config --exists edlib-1 2> /dev/null; }; else present() { command -v "$1" > /dev/null; }; fi
  if ! present "$p" && [ "$INSTALL" = 1 ]; then
    if [ -n "$(apt-cache policy "${pkg[$p]}" 2> /dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)')" ]; then
      say "run-approx: installing ${pkg[$p]}"
      apt-get install -y -qq "${pkg[$p]}" > /dev/null 2>&1 || say "run-approx: apt-get install ${pkg[$p]} failed"
    else
      NOTES="$NOTES; ${pkg[$p]}: no such Debian package here"
    fi
  fi
  if present "$p"; then peer_ok[$p]=1; else NOTES="$NOTES; $p: not available, its rows are skipped"; say "run-approx: $p not available: skipped"; fi
done

CC=${CC:-cc}
DPORACLE=$WORK/approx/dp_oracle
$CC -std=c11 -Wall -Wextra -O2 -o "$DPORACLE" "$here/dp_oracle.c"
EDLIB=$WORK/approx/edlib_count
if [ -n "${peer_ok[edlib]:-}" ]; then
  # shellcheck disable=SC2046
  $CC -std=c11 -Wall -Wextra -O2 $(pkg-config --cflags edlib-1) -o "$EDLIB" "$here/edlib_count.c" \
    $(pkg-config --libs edlib-1) || { unset 'peer_ok[edlib]'; NOTES="$NOTES; edlib_count did not build"; }
fi
make -s -C "$here" membw >&2 || true

# Pattern sets: sampled once with fixed seeds (same files on every machine).
sample() { # NAME COUNT LENGTH SEED
  local f=$SETS/$1.fa
  [ -s "$f" ] || { python3 "$here/sample_patterns.py" -n "$2" -l "$3" -s "$4" --unique --fasta -o "$f.tmp" "$SEQ" && mv "$f.tmp" "$f"; }
}
sample primers100 100 20 2001
head -n 2 "$SETS/primers100.fa" > "$SETS/primers1.fa"
head -n 20 "$SETS/primers100.fa" > "$SETS/primers10.fa"
sample guides20 20 20 2301
awk '/^>/ { print; next } { print $0 "NGG" }' "$SETS/guides20.fa" > "$SETS/guides20ngg.fa"
awk '/^>/ { print; next } { print $0 "NGG" }' "$SETS/guides20.fa" > "$SETS/guides20ngg-literal.fa" # seqkit: N as a letter
sample len100 10 100 10001
sample len1000 10 1000 100001
sample m64 64 64 6401
# Bible patterns: one per file, one line (read again by every repetition; not FASTA, so that
# edlib_count keeps their case)
printf 'LORD\n' > "$SETS/bible_lord.txt"
printf 'for his mercy endureth for ever\n' > "$SETS/bible_mercy.txt"

# ---------------------------------------------------------------- the machine
ENVF=$RESULTS/env-approx.txt
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
  echo "cpus: $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  [ -x "$here/membw" ] && echo "membw: $("$here/membw" 1024)"
  echo "kernel: $(uname -sr)"
  echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "text: panel.fa $(wc -c < "$FASTA") bytes, $(grep -c '^>' "$FASTA") records, $BASES bases; kjv.txt $(wc -c < "$BIBLE") bytes"
  echo "seqmatch: $("$SEQMATCH" --version 2>&1 | head -1)"
  echo "source: commit $(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo '?')$(git -C "$root" diff --quiet HEAD -- src include 2> /dev/null || echo ' with uncommitted changes to src/include')"
  echo "seqkit: $(seqkit version 2> /dev/null || echo missing)"
  echo "edlib: $(pkg-config --modversion edlib-1 2> /dev/null || echo missing)"
  echo "ugrep: $(ugrep --version 2> /dev/null | head -1 || echo missing)"
  echo "tre-agrep: $(tre-agrep --version 2> /dev/null | head -1 || echo missing)"
  [ -n "$NOTES" ] && echo "notes: ${NOTES#; }"
} > "$ENVF"
cat "$ENVF" >&2

# ---------------------------------------------------------------- timing (as in run-exact.sh)
# timed_limit LIMIT OUTFILE CMD...: runs CMD once, stdout to OUTFILE; sets LAST_S (wall seconds),
# LAST_CPU (user + system CPU seconds of CMD and its children), LAST_RC (124 = timed out).
source "$here/lib.sh"
gcups() { awk -v c="$1" -v s="$2" 'BEGIN { if (s > 0 && c > 0) printf "%.2f", c / s / 1e9 }'; }
lines_of() { if [ -s "$1" ]; then wc -l < "$1" | tr -d ' '; else echo 0; fi; }

CSV=$RESULTS/approx.csv
echo "case,tool,threads,patterns,length,k,mode,strands,runs,count,unit,wall_s,cpu_s,scan_s,gcups,check,note" > "$CSV"
mismatch=0
loud() {
  mismatch=1
  say ""
  say "!!!!!!!! MISMATCH: $* !!!!!!!!"
  say ""
}

# measure LIMIT OUTFILE CMD...: REPS runs (one if slower than SLOW); sets M_WALL M_CPU M_RUNS
# M_NOTE (timed out / failed) and leaves the last run's output in OUTFILE.
measure() {
  local limit=$1 out=$2 times="" cpus=""
  shift 2
  M_RUNS=0 M_NOTE="" M_WALL="" M_CPU=""
  while [ "$M_RUNS" -lt "$REPS" ]; do
    timed_limit "$limit" "$out" "$@"
    M_RUNS=$((M_RUNS + 1))
    if [ "$LAST_RC" = 124 ]; then M_NOTE="timed out after ${limit}s"; M_WALL=">$limit"; return 0; fi
    if [ "$LAST_RC" -ge 2 ]; then
      M_NOTE="failed (exit $LAST_RC): $(head -c 200 "$out.err" | tr '\n,' '  ')"
      return 0
    fi
    times="$times $LAST_S"
    cpus="$cpus $LAST_CPU"
    if awk -v t="$LAST_S" -v s="$SLOW" 'BEGIN { exit !(t > s) }'; then break; fi
  done
  M_WALL=$(echo "$times" | median)
  if [ -n "${cpus// /}" ]; then M_CPU=$(echo "$cpus" | median); fi
}

# row CASE TOOL THREADS PATTERNS LENGTH K MODE STRANDS COUNT UNIT SCAN GCUPS CHECK NOTE
row() {
  local IFS=,
  local f=("$@")
  f[12]=${f[12]//,/;}
  f[13]=${f[13]//,/;}
  echo "${f[0]},${f[1]},${f[2]},${f[3]},${f[4]},${f[5]},${f[6]},${f[7]},$M_RUNS,${f[8]},${f[9]},$M_WALL,$M_CPU,${f[10]},${f[11]},${f[12]},${f[13]}" >> "$CSV"
  say "$(printf '%-12s %-9s t=%s %3s x %4s k=%-2s %-10s n=%s count=%-9s %-8s wall %-9s cpu %-9s %s GCUPS %s %s' \
    "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$M_RUNS" "$9" "${10}" "$M_WALL" "$M_CPU" "${12}" "${13}" "${14}")"
}

# sorted (record, pattern, strand, start, end) of seqmatch's TSV
sm_keys() { cut -f1-5 "$1" | LC_ALL=C sort; }
# the same from seqkit locate's output (1-based inclusive; pattern name = header's first word)
sk_keys() { awk -F'\t' 'NR > 1 { split($2, a, " "); print $1 "\t" a[1] "\t" $4 "\t" ($5 - 1) "\t" $6 }' "$1" | LC_ALL=C sort; }
# distinct (record, pattern, strand) of seqmatch's TSV
sm_triples() { cut -f1-3 "$1" | LC_ALL=C sort -u | wc -l | tr -d ' '; }

# oracle_check LABEL SMOUT DPARGS...: seqmatch's hits (first 6 columns) against dp_oracle's.
# Sets O_CHECK.
oracle_check() {
  local label=$1 smout=$2 ref=$OUT/oracle.tsv
  shift 2
  O_CHECK=""
  [ "$ORACLE" = 1 ] || return 0
  "$DPORACLE" "$@" 2> /dev/null | LC_ALL=C sort > "$ref" || true
  cut -f1-6 "$smout" | LC_ALL=C sort > "$OUT/oracle.sm"
  if cmp -s "$ref" "$OUT/oracle.sm"; then
    O_CHECK="ok vs dp_oracle ($(lines_of "$ref") hits)"
  else
    O_CHECK="MISMATCH vs dp_oracle: $(lines_of "$ref") hits there; $(comm -23 "$ref" "$OUT/oracle.sm" | wc -l) missing; $(comm -13 "$ref" "$OUT/oracle.sm" | wc -l) extra"
    loud "$label: seqmatch $(lines_of "$OUT/oracle.sm") hits, dp_oracle $(lines_of "$ref") (dp_oracle $*)"
    comm -3 "$ref" "$OUT/oracle.sm" | head -5 >&2
  fi
}

# seqmatch_case CASE SET PATTERNS LENGTH K MODE(mismatches|edits) STRANDS THREADS [EXTRA...]
# the hits are left in $OUT/seqmatch.CASE.MODE.K.tTHREADS
seqmatch_case() {
  local cs=$1 set=$2 n=$3 len=$4 k=$5 mode=$6 strands=$7 t=$8 opt
  shift 8
  opt=$([ "$mode" = mismatches ] && echo -m || echo -k)
  SM_OUT=$OUT/seqmatch.$cs.$mode.$k.t$t
  measure "$TIMEOUT" "$SM_OUT" "$SEQMATCH" search -p "$set" "$opt" "$k" -t "$t" --no-header "$@" "$FASTA"
  local count gc=""
  count=$(lines_of "$SM_OUT")
  if [ "$mode" = edits ] && [ -n "$M_WALL" ] && [ "${M_WALL#>}" = "$M_WALL" ]; then
    gc=$(gcups "$(awk -v m="$len" -v n="$BASES" -v p="$n" -v s="$strands" 'BEGIN { printf "%.0f", m * n * p * s }')" "$M_WALL")
  fi
  SM_COUNT=$count SM_GCUPS=$gc
}

# ---------------------------------------------------------------- 0. brute-force check
if has_case check; then
  say "== brute-force check (bench/check_approx.py)"
  genome=$(LC_ALL=C ls "$DATA"/genomes/*.fa | head -1)
  if python3 "$here/check_approx.py" "$SEQMATCH" "$genome" "$WORK/approx" > "$RESULTS/check-approx.txt" 2>&1; then
    cat "$RESULTS/check-approx.txt" >&2
  else
    cat "$RESULTS/check-approx.txt" >&2
    loud "bench/check_approx.py found disagreements (bench/results/check-approx.txt)"
  fi
fi

# ---------------------------------------------------------------- 1. primers
if has_case primers; then
  for n in 1 10 100; do
    set=$SETS/primers$n.fa
    for mode in mismatches edits; do
      for k in $KS; do
        for t in $THREADS; do
          seqmatch_case primers$n "$set" "$n" 20 "$k" "$mode" 2 "$t"
          check=""
          # first thread count's hits are the reference for the others
          first=$OUT/seqmatch.primers$n.$mode.$k.t${THREADS%% *}
          if [ "$SM_OUT" != "$first" ] && [ -f "$first" ] && ! cmp -s "$SM_OUT" "$first"; then
            check="MISMATCH: hits differ from -t ${THREADS%% *}"
            loud "primers$n $mode k=$k: -t $t and -t ${THREADS%% *} print different hits"
          fi
          if [ "$t" = "${THREADS%% *}" ] && [ "$ORACLE" = 1 ] && { [ "$n" = 1 ] || { [ "$n" = 10 ] && [ "$mode" = mismatches ] && [ "$k" = 2 ]; }; }; then
            oracle_check "primers$n $mode k=$k" "$SM_OUT" "$([ "$mode" = mismatches ] && echo -m || echo -k)" "$k" --report best "$set" "$FASTA"
            check=${check:+$check; }$O_CHECK
          fi
          row primers$n seqmatch "$t" "$n" 20 "$k" "$mode" 2 "$SM_COUNT" hits "" "$SM_GCUPS" "$check" \
            "$([ "$mode" = edits ] && echo 'report best')"
        done
        ref=$OUT/seqmatch.primers$n.$mode.$k.t${THREADS%% *}
        # seqkit locate -m K: the same windows as seqmatch -m K (1 primer: every K; 10, 100: K = 2)
        if [ "$mode" = mismatches ] && [ -n "${peer_ok[seqkit]:-}" ] && { [ "$n" = 1 ] || [ "$k" = 2 ]; }; then
          o=$OUT/seqkit.primers$n.$k
          measure "$PEER_TIMEOUT" "$o" seqkit locate -i -j 2 -m "$k" -f "$set" "$FASTA"
          count="" check="" note=$M_NOTE
          if [ -z "$M_NOTE" ]; then
            count=$(($(lines_of "$o") - 1))
            if cmp -s <(sk_keys "$o") <(sm_keys "$ref"); then
              check="ok: same hits as seqmatch"
            else
              check="MISMATCH: seqmatch $(lines_of "$ref") hits"
              loud "primers$n -m $k: seqkit locate $count hits, seqmatch $(lines_of "$ref"), or other positions"
              diff <(sk_keys "$o") <(sm_keys "$ref") | head -6 >&2 || true
            fi
          fi
          row primers$n seqkit 2 "$n" 20 "$k" mismatches 2 "$count" hits "" "" "$check" "seqkit locate -i -j 2 -m $k${note:+; $note}"
        fi
        # edlib: best distance per pattern, record and strand (1 primer: every K; 10, 100: K = 2)
        if [ "$mode" = edits ] && [ -n "${peer_ok[edlib]:-}" ] && { [ "$n" = 1 ] || [ "$k" = 2 ]; }; then
          o=$OUT/edlib.primers$n.$k
          measure "$PEER_TIMEOUT" "$o" "$EDLIB" -k "$k" "$set" "$FASTA"
          count="" check="" scan="" gc="" note=$M_NOTE
          if [ -z "$M_NOTE" ]; then
            count=$(sed -n 's/.*found=\([0-9]*\).*/\1/p' "$o")
            scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$o")
            gc=$(gcups "$(sed -n 's/.*cells=\([0-9]*\).*/\1/p' "$o")" "$M_WALL")
            want=$(sm_triples "$ref")
            if [ "$count" = "$want" ]; then check="ok: = seqmatch's (record; pattern; strand) triples"
            else
              check="MISMATCH: seqmatch has $want triples"
              loud "primers$n -k $k: edlib finds $count (record, pattern, strand) with distance <= $k, seqmatch $want"
            fi
          fi
          row primers$n edlib 1 "$n" 20 "$k" edits 2 "$count" "triples with D<=k" "$scan" "$gc" "$check" \
            "best distance + its ends per pattern/record/strand${note:+; $note}"
        fi
      done
    done
  done
fi

# ---------------------------------------------------------------- 1b. one primer, text lines
if has_case lines; then
  p=$(sed -n 2p "$SETS/primers1.fa")
  k=2
  for t in $THREADS; do
    o=$OUT/seqmatch.lines.t$t
    measure "$TIMEOUT" "$o" "$SEQMATCH" search --alphabet text --lines -k "$k" -e "$p" -t "$t" --no-header "$FASTA"
    sm_lines=$(cut -f1 "$o" | LC_ALL=C sort -u | wc -l | tr -d ' ')
    gc=$(gcups "$(wc -c < "$FASTA" | awk '{ print $1 * 20 }')" "$M_WALL")
    row lines seqmatch "$t" 1 20 "$k" edits 1 "$sm_lines" "matching lines" "" "$gc" "" \
      "--alphabet text --lines; forward strand; GCUPS over all bytes of panel.fa"
  done
  for peer in ugrep tre-agrep; do
    [ -n "${peer_ok[$peer]:-}" ] || continue
    o=$OUT/$peer.lines
    if [ "$peer" = ugrep ]; then measure "$PEER_TIMEOUT" "$o" ugrep -c -Z$k -- "$p" "$FASTA"
    else measure "$PEER_TIMEOUT" "$o" tre-agrep -c -$k -- "$p" "$FASTA"; fi
    count="" check="" note=$M_NOTE
    if [ -z "$M_NOTE" ]; then
      count=$(tr -d ' \n' < "$o")
      if [ "$count" = "$sm_lines" ]; then check="ok: = seqmatch's matching lines"
      elif [ "$peer" = ugrep ]; then check="differs from seqmatch ($sm_lines lines): ugrep -Z is not plain Levenshtein (see docs)"
      else
        check="MISMATCH: seqmatch $sm_lines lines"
        loud "lines -k $k: $peer $count lines, seqmatch $sm_lines"
      fi
    fi
    row lines "$peer" 1 1 20 "$k" edits 1 "$count" "matching lines" "" "" "$check" "$([ "$peer" = ugrep ] && echo "ugrep -c -Z$k" || echo "tre-agrep -c -$k")${note:+; $note}"
  done
fi

# ---------------------------------------------------------------- 2. CRISPR guides + NGG, -m 4
if has_case guides; then
  set=$SETS/guides20ngg.fa
  for t in $THREADS; do
    seqmatch_case guides20 "$set" 20 23 4 mismatches 2 "$t"
    check=""
    if [ "$t" = "${THREADS%% *}" ]; then
      oracle_check "guides -m 4" "$SM_OUT" -m 4 "$set" "$FASTA"
      check=$O_CHECK
    fi
    row guides20 seqmatch "$t" 20 23 4 mismatches 2 "$SM_COUNT" hits "" "" "$check" "20 nt + NGG"
  done
  ref=$OUT/seqmatch.guides20.mismatches.4.t${THREADS%% *}
  if [ -n "${peer_ok[seqkit]:-}" ]; then
    # seqkit: no IUPAC with -m; a literal N mismatches every base, so -m 5 on guide+NGG allows
    # 4 more mismatches, as seqmatch -m 4 does -- except where the text holds N (or another
    # non-ACGT byte) under the PAM's N: seqkit counts N=N as a match, seqmatch as a mismatch.
    o=$OUT/seqkit.guides20
    measure "$PEER_TIMEOUT" "$o" seqkit locate -i -j 2 -m 5 -f "$SETS/guides20ngg-literal.fa" "$FASTA"
    count="" check="" note=$M_NOTE
    if [ -z "$M_NOTE" ]; then
      count=$(($(lines_of "$o") - 1))
      # drop seqkit's windows with a non-ACGT base under the N (column 7 = matched sequence)
      awk -F'\t' 'NR == 1 || toupper(substr($7, 21, 1)) ~ /^[ACGT]$/' "$o" > "$o.acgt"
      if cmp -s <(sk_keys "$o.acgt") <(sm_keys "$ref"); then
        check="ok: same hits as seqmatch (after dropping $((count - $(lines_of "$o.acgt") + 1)) windows with non-ACGT under N)"
      else
        check="MISMATCH: seqmatch $(lines_of "$ref") hits"
        loud "guides: seqkit locate -m 5 (literal N) $count hits, seqmatch -m 4 $(lines_of "$ref")"
        diff <(sk_keys "$o.acgt") <(sm_keys "$ref") | head -6 >&2 || true
      fi
    fi
    row guides20 seqkit 2 20 23 4 mismatches 2 "$count" hits "" "" "$check" \
      "seqkit locate -i -j 2 -m 5 with a literal N (= 4 mismatches elsewhere)${note:+; $note}"
  fi
fi

# ---------------------------------------------------------------- 3. long patterns, 5 % edits
if has_case long; then
  for spec in "len100 100 5" "len1000 1000 50"; do
    read -r name len k <<< "$spec"
    set=$SETS/$name.fa
    for t in $THREADS; do
      seqmatch_case "$name" "$set" 10 "$len" "$k" edits 2 "$t"
      check=""
      if [ "$t" = "${THREADS%% *}" ] && [ "$len" = 100 ] && [ "$ORACLE" = 1 ]; then
        # the reference for the first pattern only (the plain DP is slow)
        head -n "$(awk '/^>/ { n++ } n == 2 { print NR - 1; exit }' "$set")" "$set" > "$OUT/first.fa"
        awk -F'\t' '$2 == "p1"' "$SM_OUT" > "$OUT/first.sm"
        oracle_check "$name -k $k (p1)" "$OUT/first.sm" -k "$k" --report best "$OUT/first.fa" "$FASTA"
        check="${O_CHECK/ok vs/p1 ok vs}"
      fi
      row "$name" seqmatch "$t" 10 "$len" "$k" edits 2 "$SM_COUNT" hits "" "$SM_GCUPS" "$check" "report best"
    done
    ref=$OUT/seqmatch.$name.edits.$k.t${THREADS%% *}
    if [ -n "${peer_ok[edlib]:-}" ]; then
      o=$OUT/edlib.$name
      measure "$PEER_TIMEOUT" "$o" "$EDLIB" -k "$k" "$set" "$FASTA"
      count="" check="" scan="" gc="" note=$M_NOTE
      if [ -z "$M_NOTE" ]; then
        count=$(sed -n 's/.*found=\([0-9]*\).*/\1/p' "$o")
        scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$o")
        gc=$(gcups "$(sed -n 's/.*cells=\([0-9]*\).*/\1/p' "$o")" "$M_WALL")
        want=$(sm_triples "$ref")
        if [ "$count" = "$want" ]; then check="ok: = seqmatch's (record; pattern; strand) triples"
        else check="MISMATCH: seqmatch has $want triples"; loud "$name -k $k: edlib $count triples, seqmatch $want"; fi
      fi
      row "$name" edlib 1 10 "$len" "$k" edits 2 "$count" "triples with D<=k" "$scan" "$gc" "$check" \
        "best distance + its ends per pattern/record/strand${note:+; $note}"
    fi
  done
fi

# ---------------------------------------------------------------- 4. 64 x 64 nt, -k 3, one thread
if has_case m64; then
  set=$SETS/m64.fa
  seqmatch_case m64 "$set" 64 64 3 edits 2 1
  check=""
  if [ "$ORACLE" = 1 ]; then
    head -n 2 "$set" > "$OUT/first.fa"
    awk -F'\t' '$2 == "p1"' "$SM_OUT" > "$OUT/first.sm"
    oracle_check "m64 -k 3 (p1)" "$OUT/first.sm" -k 3 --report best "$OUT/first.fa" "$FASTA"
    check="${O_CHECK/ok vs/p1 ok vs}"
  fi
  row m64 seqmatch 1 64 64 3 edits 2 "$SM_COUNT" hits "" "$SM_GCUPS" "$check" "report best; target >= 20 GCUPS"
  ref=$SM_OUT
  if [ -n "${peer_ok[edlib]:-}" ]; then
    o=$OUT/edlib.m64
    measure "$PEER_TIMEOUT" "$o" "$EDLIB" -k 3 "$set" "$FASTA"
    count="" check="" scan="" gc="" note=$M_NOTE
    if [ -z "$M_NOTE" ]; then
      count=$(sed -n 's/.*found=\([0-9]*\).*/\1/p' "$o")
      scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$o")
      gc=$(gcups "$(sed -n 's/.*cells=\([0-9]*\).*/\1/p' "$o")" "$M_WALL")
      want=$(sm_triples "$ref")
      if [ "$count" = "$want" ]; then check="ok: = seqmatch's (record; pattern; strand) triples"
      else check="MISMATCH: seqmatch has $want triples"; loud "m64 -k 3: edlib $count triples, seqmatch $want"; fi
    fi
    row m64 edlib 1 64 64 3 edits 2 "$count" "triples with D<=k" "$scan" "$gc" "$check" \
      "best distance + its ends per pattern/record/strand${note:+; $note}"
  fi
fi

# ---------------------------------------------------------------- 5. the Bible (seed 004)
if has_case bible; then
  if [ ! -s "$BIBLE" ]; then
    say "run-approx: $BIBLE missing: bible cases skipped"
  else
    BBYTES=$(wc -c < "$BIBLE")
    for spec in "lord LORD" "mercy for his mercy endureth for ever"; do
      read -r tag pat <<< "$spec"
      m=${#pat}
      for k in 1 2; do
        cs=bible_$tag
        for t in $THREADS; do
          o=$OUT/seqmatch.$cs.$k.t$t
          measure "$TIMEOUT" "$o" "$SEQMATCH" search --alphabet text -k "$k" --report ends -e "$pat" -t "$t" --no-header "$BIBLE"
          count=$(lines_of "$o") check=""
          if [ "$t" = "${THREADS%% *}" ]; then
            awk -F'\t' -v OFS='\t' -v p="$pat" '{ $1 = "text"; $2 = p; print }' "$o" > "$o.renamed"
            ORACLE=1 oracle_check "bible '$pat' -k $k" "$o.renamed" -k "$k" --text "$SETS/$cs.txt" "$BIBLE"
            check=$O_CHECK
          fi
          gc=$(gcups "$((m * BBYTES))" "$M_WALL")
          row "$cs" seqmatch "$t" 1 "$m" "$k" edits 1 "$count" "end positions" "" "$gc" "$check" "--alphabet text --report ends; whole file one record"
        done
        ref=$OUT/seqmatch.$cs.$k.t${THREADS%% *}
        # lines: seqmatch --lines against ugrep -Z and tre-agrep (matching lines)
        o=$OUT/seqmatch.$cs.$k.lines
        measure "$TIMEOUT" "$o" "$SEQMATCH" search --alphabet text --lines -k "$k" -e "$pat" -t 1 --no-header "$BIBLE"
        sm_lines=$(cut -f1 "$o" | LC_ALL=C sort -u | wc -l | tr -d ' ')
        row "$cs" seqmatch-lines 1 1 "$m" "$k" edits 1 "$sm_lines" "matching lines" "" "" "" "--alphabet text --lines -t 1"
        if [ -n "${peer_ok[edlib]:-}" ]; then
          eo=$OUT/edlib.$cs.$k
          measure "$PEER_TIMEOUT" "$eo" "$EDLIB" --text -k "$k" -v "$SETS/$cs.txt" "$BIBLE"
          count="" check="" scan="" gc="" note=$M_NOTE
          if [ -z "$M_NOTE" ]; then
            count=$(sed -n 's/.*ends=\([0-9]*\).*/\1/p' "$eo")
            scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$eo")
            gc=$(gcups "$((m * BBYTES))" "$M_WALL")
            best=$(awk -F'\t' 'NF == 6 { print $4 }' "$eo")
            # no distance <= k: seqmatch must have no hit either
            want=$(lines_of "$ref")
            [ -n "$best" ] && want=$(awk -F'\t' -v b="$best" '$6 == b' "$ref" | wc -l | tr -d ' ')
            if [ "$count" = "$want" ]; then check="ok: = seqmatch's ends with the least distance ($best)"
            else check="MISMATCH: seqmatch has $want ends at distance $best"; loud "bible '$pat' -k $k: edlib $count best ends, seqmatch $want"; fi
          fi
          row "$cs" edlib 1 1 "$m" "$k" edits 1 "$count" "ends at the least distance" "$scan" "$gc" "$check" \
            "one call; reports only the ends with the least distance${note:+; $note}"
        fi
        for peer in ugrep tre-agrep; do
          [ -n "${peer_ok[$peer]:-}" ] || continue
          o=$OUT/$peer.$cs.$k
          if [ "$peer" = ugrep ]; then measure "$PEER_TIMEOUT" "$o" ugrep -c -Z"$k" -- "$pat" "$BIBLE"
          else measure "$PEER_TIMEOUT" "$o" tre-agrep -c -"$k" -- "$pat" "$BIBLE"; fi
          count="" check="" note=$M_NOTE
          if [ -z "$M_NOTE" ]; then
            count=$(tr -d ' \n' < "$o")
            if [ "$count" = "$sm_lines" ]; then check="ok: = seqmatch's matching lines"
            elif [ "$peer" = ugrep ]; then check="differs from seqmatch ($sm_lines lines): ugrep -Z is not plain Levenshtein (see docs)"
            else check="MISMATCH: seqmatch $sm_lines lines"; loud "bible '$pat' -k $k: $peer $count lines, seqmatch $sm_lines"; fi
          fi
          row "$cs" "$peer" 1 1 "$m" "$k" edits 1 "$count" "matching lines" "" "" "$check" \
            "$([ "$peer" = ugrep ] && echo "ugrep -c -Z$k" || echo "tre-agrep -c -$k")${note:+; $note}"
        done
      done
    done
  fi
fi

# ---------------------------------------------------------------- the end
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$ENVF"
echo "script wall time: $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f s", b - a }')" >> "$ENVF"
say ""
if [ -f "$here/plot_approx.py" ]; then python3 "$here/plot_approx.py" "$CSV" >&2 || say "run-approx: plot failed (matplotlib?)"; fi
say "results: $CSV $ENVF"
if [ "$mismatch" = 1 ]; then
  say "run-approx: some results DIFFER (see MISMATCH above and the check column)"
  exit 3
fi
