#!/usr/bin/env bash
# Approximate search benchmark: seqmatch with k mismatches and k edits side by side with
# seqkit locate, edlib, ugrep -Z, tre-agrep, BBDuk and cutadapt on the real bacterial panel
# (panel.fa: 110.6 Mbp, 30 genomes and assemblies, 2931 FASTA records, both strands unless a
# case says otherwise), on real sequencing reads and on the King James Bible. Every result
# that a peer or a reference computes identically is compared before the timed runs; a
# disagreement marks the timing INVALID (column valid) and the script exits 3 at the end.
# Called by bench/run (which picks the settings of its quick and full modes); it can also be
# run alone.
#
# usage: bench/run-approx.sh [SEQMATCH_BINARY]
#
# Environment (all optional):
#   SEQMATCH             seqmatch binary, if no argument names one (default build/seqmatch)
#   SEQMATCH_BENCH_DATA  data folder (default bench/data; fetched by bench/fetch-data.sh)
#   REPS                 timed runs per measurement, the median is reported (default 3)
#   SLOW                 a command slower than this many seconds is not repeated (default 10)
#   TIMEOUT              seconds before a seqmatch run is abandoned (default 600)
#   PEER_TIMEOUT         seconds before a peer run is abandoned; its time is then reported as
#                        ">PEER_TIMEOUT" (default 60)
#   CASES                which cases (default "check primers lines guides long m64 bible reads")
#   PEERS                which peers (default "seqkit edlib ugrep tre-agrep bbduk cutadapt")
#   THREADS              seqmatch thread counts (default "2 1"; the first is the reference)
#   KS                   k values of the primer cases (default "0 1 2 3")
#   NPRIMERS             primer set sizes (default "1 10 100")
#   DIRECT_K             primers: k at which the direct engines (--engine myers / mismatch)
#                        are also run, for comparison with the planner's choice (default 2)
#   LONG                 long cases (default "len100 len1000")
#   FASTA_BASES          scan only the first records of panel.fa holding at least this many
#                        bases (default: all of panel.fa)
#   READS_COPIES         reads case: the reads repeated this many times (default 8)
#   HDISTS               reads case: BBDuk hdist values = seqmatch -m (default "0 1 2")
#   CUT_KS               reads case: cutadapt -e values = seqmatch --strand + -m (default "0 1 2")
#   ORACLE               1: check seqmatch's hits against bench/dp_oracle (default 1)
#   INSTALL              1: apt-get install the peers that are missing (default 1)
#   WORK                 scratch folder for pattern sets and outputs (default bench/work)
#   RESULTS              output folder (default bench/results): approx.csv, env-approx.txt,
#                        check-approx.txt
#
# Cases (patterns sampled from panel.seq by bench/sample_patterns.py --fasta, fixed seeds;
# the 1- and 10-primer sets are the first records of the 100-primer set):
#   check    brute-force Python check of seqmatch on one genome (bench/check_approx.py)
#   primers  1, 10, 100 primers of 20 nt, -m K and -k K for K in KS (--report best), each
#            thread count of THREADS; at K = DIRECT_K also --engine mismatch / myers, and for
#            one primer -k DIRECT_K --engine wavefront (seed 001's anti-diagonal DP)
#   lines    1 primer, -k 2, panel.fa read as text lines (forward strand): seqmatch --alphabet
#            text --lines against ugrep -Z2 and tre-agrep -2 (matching lines)
#   guides   20 CRISPR guides (20 nt + NGG), -m 4 (and --engine mismatch)
#   long     10 x 100 nt with -k 5 and 10 x 1000 nt with -k 50 (5 % edits) (and --engine myers)
#   m64      64 patterns of 64 nt, -k 3, one thread (and --engine myers: the Myers GCUPS target)
#   bible    LORD and "for his mercy endureth for ever", -k 1 and -k 2, kjv.txt as one text
#            record, --report ends (every end position, as Myers' search reports them)
#   reads    the short reads of unicycler-data (both files, no read with a non-ACGT base,
#            READS_COPIES times): 1000 31-mers of its reference genome with -m H against
#            BBDuk k=31 hdist=H (matched reads, both strands), and 10 20-mers with
#            --strand + -m E against cutadapt -a -e E --no-indels -O 20 (reads with an adapter)
# The seqmatch rows use the planner's engine (auto; column engine = its choice, from
# seqmatch compile --explain); rows of tool seqmatch-myers / seqmatch-mismatch force the
# direct engine for comparison (only where the planner picked another one).
#
# What is compared (column "check"; column "valid" = ok / unchecked / INVALID):
#   seqmatch with every thread count and every engine: the same hits, byte for byte.
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
#     records of seqmatch --alphabet text --lines (ugrep -Z is not plain Levenshtein: a
#     difference is reported, not marked invalid).
#   BBDuk (mm=f, rcomp=t): reads holding a 31-mer within Hamming distance H of a reference
#     31-mer or its reverse complement = reads with a seqmatch -m H hit; sorted names compared.
#   cutadapt (--no-indels, -O 20, every adapter full length): reads with an adapter = reads
#     with a seqmatch --strand + -m E hit; sorted names compared.
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
CASES=${CASES:-check primers lines guides long m64 bible reads}
PEERS=${PEERS:-seqkit edlib ugrep tre-agrep bbduk cutadapt}
THREADS=${THREADS:-2 1}
KS=${KS:-0 1 2 3}
NPRIMERS=${NPRIMERS:-1 10 100}
DIRECT_K=${DIRECT_K:-2}
LONG=${LONG:-len100 len1000}
FASTA_BASES=${FASTA_BASES:-}
READS_COPIES=${READS_COPIES:-8}
HDISTS=${HDISTS:-0 1 2}
CUT_KS=${CUT_KS:-0 1 2}
ORACLE=${ORACLE:-1}
INSTALL=${INSTALL:-1}
WORK=${WORK:-$here/work}
RESULTS=${RESULTS:-$here/results}

source "$here/lib.sh"
has() { case " $2 " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
has_case() { has "$1" "$CASES"; }
T1=${THREADS%% *} # the reference thread count
started=$EPOCHREALTIME

# ---------------------------------------------------------------- data, peers, helpers
"$here/fetch-data.sh" "$DATA"
SEQ=$DATA/panel.seq
BIBLE=$DATA/kjv.txt
mkdir -p "$WORK/approx/sets" "$WORK/approx/out" "$RESULTS"
SETS=$WORK/approx/sets
OUT=$WORK/approx/out

[ -x "$SEQMATCH" ] && "$SEQMATCH" --version > /dev/null 2>&1 ||
  { say "run-approx: seqmatch binary '$SEQMATCH' missing or not working"; exit 2; }

# the text: panel.fa, or its first records holding at least FASTA_BASES bases
FASTA=$DATA/panel.fa
if [ -n "$FASTA_BASES" ]; then
  FASTA=$SETS/panel.first$FASTA_BASES.fa
  if [ ! -s "$FASTA" ]; then
    awk -v want="$FASTA_BASES" '/^>/ { if (n >= want) exit } !/^>/ { n += length($0) } { print }' "$DATA/panel.fa" > "$FASTA.tmp"
    mv "$FASTA.tmp" "$FASTA"
  fi
fi
BASES=$(awk '!/^>/ { n += length($0) } END { print n }' "$FASTA") # bases, no headers or line breaks

# Peers from Debian: installed when missing and the package exists, else skipped with a note.
declare -A pkg=([seqkit]=seqkit [ugrep]=ugrep [tre-agrep]=tre-agrep [edlib]=libedlib-dev [bbduk]=bbmap [cutadapt]=cutadapt)
declare -A peer_ok=()
NOTES=""
present() {
  case $1 in
    edlib) pkg-config --exists edlib-1 2> /dev/null ;;
    bbduk) command -v bbduk.sh > /dev/null ;;
    *) command -v "$1" > /dev/null ;;
  esac
}
for p in $PEERS; do
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
sample() { # NAME COUNT LENGTH SEED [SEQFILE]
  local f=$SETS/$1.fa
  [ -s "$f" ] || { python3 "$here/sample_patterns.py" -n "$2" -l "$3" -s "$4" --unique --fasta -o "$f.tmp" "${5:-$SEQ}" && mv "$f.tmp" "$f"; }
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
  machine_info
  [ -x "$here/membw" ] && echo "membw: $("$here/membw" 1024)"
  echo "text: $(basename "$FASTA") $(wc -c < "$FASTA") bytes, $(grep -c '^>' "$FASTA") records, $BASES bases; kjv.txt $(wc -c < "$BIBLE") bytes"
  echo "seqmatch: $("$SEQMATCH" --version 2>&1 | head -1)"
  echo "source: commit $(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo '?')$(git -C "$root" diff --quiet HEAD -- src include 2> /dev/null || echo ' with uncommitted changes to src/include')"
  echo "seqkit: $(seqkit version 2> /dev/null || echo missing)"
  echo "edlib: $(pkg-config --modversion edlib-1 2> /dev/null || echo missing)"
  echo "ugrep: $({ ugrep --version 2> /dev/null || echo missing; } | head -1)"
  echo "tre-agrep: $({ tre-agrep --version 2> /dev/null || echo missing; } | head -1)"
  echo "bbduk: $({ dpkg-query -W -f '${Version}' bbmap 2> /dev/null && echo ' (bbmap)'; } || echo missing)"
  echo "cutadapt: $(cutadapt --version 2> /dev/null || echo missing)"
  echo "java: $({ java -version 2>&1 || echo missing; } | head -1)"
  echo "settings: reps $REPS; slow $SLOW s; peer timeout $PEER_TIMEOUT s; cases $CASES; threads $THREADS"
  if [ -n "$NOTES" ]; then echo "notes: ${NOTES#; }"; fi
} > "$ENVF"
cat "$ENVF" >&2

# ---------------------------------------------------------------- rows
gcups() { awk -v c="$1" -v s="$2" 'BEGIN { if (s > 0 && c > 0) printf "%.2f", c / s / 1e9 }'; }
lines_of() { if [ -s "$1" ]; then wc -l < "$1" | tr -d ' '; else echo 0; fi; }
edlib_found() { sed -n 's/.*found=\([0-9]*\).*/\1/p' "$1"; }
edlib_ends() { sed -n 's/.*ends=\([0-9]*\).*/\1/p' "$1"; }
first_word() { tr -d ' \n' < "$1"; }

CSV=$RESULTS/approx.csv
echo "case,tool,threads,patterns,length,k,mode,strands,runs,count,unit,wall_s,cpu_s,scan_s,gcups,check,note,wall_min_s,wall_max_s,rss_MB,valid,engine" > "$CSV"

# planner_engine SEQMATCH-COMPILE-OPTIONS...: the engine seqmatch's planner picks
planner_engine() {
  "$SEQMATCH" compile --explain "$@" -o "$OUT/explain.db" 2> /dev/null | awk '
    /^engine / { if ($0 ~ /pigeonhole/) print "pigeonhole"; else if ($0 ~ /Myers/) print "myers";
                 else if ($0 ~ /mismatch/) print "mismatch"; else if ($0 ~ /wavefront/) print "wavefront";
                 else { sub(/^engine +/, ""); print } }
    /^engines/ { s = ""; if ($3 + 0 > 0) s = "automaton"; if ($6 + 0 > 0) s = s (s ? "+" : "") "kmer";
                 if ($8 + 0 > 0) s = s (s ? "+" : "") "shiftand"; if ($10 + 0 > 0) s = s (s ? "+" : "") "wumanber"; print s }'
  rm -f "$OUT/explain.db"
}

declare -A CHECK=() # slot -> what was compared (the check column)
note_check() { CHECK[$1]="${CHECK[$1]:+${CHECK[$1]}; }$2"; }

# row SLOT CASE TOOL THREADS PATTERNS LENGTH K MODE STRANDS COUNT UNIT SCAN CELLS NOTE ENGINE [KEYFN]
# the timed runs of SLOT (bench/lib.sh time_runs), then its CSV row. CELLS: for GCUPS.
row() {
  local slot=$1 keyfn=${16:-}
  time_runs "$slot" "$keyfn"
  local f=("${@:2}") gc=""
  if [ -n "${f[11]}" ] && [ -n "$M_WALL" ] && [ "${M_WALL#>}" = "$M_WALL" ]; then gc=$(gcups "${f[11]}" "$M_WALL"); fi
  local check=${CHECK[$slot]:-} note=${f[12]}
  [ -n "$M_NOTE" ] && note="${note:+$note; }$M_NOTE"
  check=${check//,/;}
  note=${note//,/;}
  echo "${f[0]},${f[1]},${f[2]},${f[3]},${f[4]},${f[5]},${f[6]},${f[7]},$M_RUNS,${f[8]},${f[9]},$M_WALL,$M_CPU,${f[10]},$gc,$check,$note,$M_MIN,$M_MAX,$M_RSS,$M_VALID,${f[13]}" >> "$CSV"
  say "$(printf '%-12s %-17s t=%s %4s x %4s k=%-2s %-10s n=%s count=%-8s %-10s wall %-8s (%s-%s) cpu %-8s rss %-7s %s GCUPS %s | %s' \
    "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$M_RUNS" "${10}" "${11}" "$M_WALL" "$M_MIN" "$M_MAX" "$M_CPU" "$M_RSS" "$gc" "$M_VALID" "$check")"
}

# same SLOT REFSLOT WHAT: the two outputs must be byte-identical
same() {
  finished "$1" && finished "$2" || return 0
  if cmp -s "${J_OUT[$1]}" "${J_OUT[$2]}"; then
    agree "$1"
    agree "$2"
    note_check "$1" "$3: same hits"
  else
    invalid "$1" "$3: other hits ($(lines_of "${J_OUT[$1]}") against $(lines_of "${J_OUT[$2]}"))"
    note_check "$1" "MISMATCH: $3"
  fi
}

# oracle SLOT SMOUT DPARGS...: seqmatch's hits (first 6 columns of SMOUT) against dp_oracle's.
oracle() {
  local slot=$1 smout=$2 ref=$OUT/oracle.tsv
  shift 2
  [ "$ORACLE" = 1 ] && finished "$slot" || return 0
  "$DPORACLE" "$@" 2> /dev/null | LC_ALL=C sort > "$ref" || true
  cut -f1-6 "$smout" | LC_ALL=C sort > "$OUT/oracle.sm"
  if cmp -s "$ref" "$OUT/oracle.sm"; then
    agree "$slot"
    note_check "$slot" "ok vs dp_oracle ($(lines_of "$ref") hits)"
  else
    invalid "$slot" "dp_oracle: $(lines_of "$ref") hits there; $(comm -23 "$ref" "$OUT/oracle.sm" | wc -l) missing; $(comm -13 "$ref" "$OUT/oracle.sm" | wc -l) extra (dp_oracle $*)"
    note_check "$slot" "MISMATCH vs dp_oracle"
    comm -3 "$ref" "$OUT/oracle.sm" | head -5 >&2
  fi
}

# pair SLOT PEERSLOT GOT WANT WHAT: a peer's number against seqmatch's
pair() {
  finished "$1" && finished "$2" || return 0
  if [ "$3" = "$4" ]; then
    agree "$1"
    agree "$2"
    note_check "$2" "ok: $5"
  else
    invalid "$2" "$5: $3 there, $4 from seqmatch"
    invalid "$1" "$5: $3 from ${2%%.*}, $4 here"
    note_check "$2" "MISMATCH: $5 ($4 from seqmatch)"
  fi
}

# sm SLOT LIMIT ARGS...: check run of seqmatch search ARGS (TSV, no header)
sm() {
  local slot=$1 limit=$2
  shift 2
  check_run "$slot" "$limit" "$OUT/$slot" "$SEQMATCH" search --no-header "$@"
}

# sorted (record, pattern, strand, start, end) of seqmatch's TSV
sm_keys() { cut -f1-5 "$1" | LC_ALL=C sort; }
# the same from seqkit locate's output (1-based inclusive; pattern name = header's first word)
sk_keys() { awk -F'\t' 'NR > 1 { split($2, a, " "); print $1 "\t" a[1] "\t" $4 "\t" ($5 - 1) "\t" $6 }' "$1" | LC_ALL=C sort; }
# distinct (record, pattern, strand) of seqmatch's TSV
sm_triples() { cut -f1-3 "$1" | LC_ALL=C sort -u | wc -l | tr -d ' '; }
# sorted distinct records of seqmatch's TSV; sorted read names of a FASTQ file
sm_records() { cut -f1 "$1" | LC_ALL=C sort -u; }
fq_names() { awk 'NR % 4 == 1 { sub(/^@/, ""); print $1 }' "$1" | LC_ALL=C sort -u; }

# direct SLOT CASE MODE K THREADS PATTERN-ARGS...: when the planner's engine for these options is
# not the direct one (mismatch for -m, myers for -k), the check run of the direct engine;
# sets DIRECT (the engine, or empty) and PLANNED (the planner's choice)
direct() {
  local slot=$1 cs=$2 mode=$3 k=$4 t=$5 opt eng
  shift 5
  opt=$([ "$mode" = mismatches ] && echo -m || echo -k)
  eng=$([ "$mode" = mismatches ] && echo mismatch || echo myers)
  PLANNED=$(planner_engine "$@" "$opt" "$k")
  DIRECT=""
  if [ "$PLANNED" != "$eng" ]; then
    DIRECT=$eng
    sm "$slot" "$TIMEOUT" "$@" "$opt" "$k" --engine "$eng" -t "$t" "$FASTA"
  fi
}

# ---------------------------------------------------------------- 0. brute-force check
if has_case check && ! python3 -c 'import numpy' 2> /dev/null; then
  say "run-approx: python3 has no numpy: the brute-force check (bench/check_approx.py) is skipped"
  echo "skipped: python3 has no numpy" > "$RESULTS/check-approx.txt"
elif has_case check; then
  say "== brute-force check (bench/check_approx.py)"
  genome=$(LC_ALL=C ls "$DATA"/genomes/*.fa | head -1)
  if python3 "$here/check_approx.py" "$SEQMATCH" "$genome" "$WORK/approx" > "$RESULTS/check-approx.txt" 2>&1; then
    cat "$RESULTS/check-approx.txt" >&2
  else
    cat "$RESULTS/check-approx.txt" >&2
    INVALID_ANY=1
    say "!!!!!!!! INVALID: bench/check_approx.py found disagreements (check-approx.txt) !!!!!!!!"
  fi
fi

# ---------------------------------------------------------------- 1. primers
if has_case primers; then
  say "== primers"
  for n in $NPRIMERS; do
    set=$SETS/primers$n.fa
    cs=primers$n
    for mode in mismatches edits; do
      opt=$([ "$mode" = mismatches ] && echo -m || echo -k)
      for k in $KS; do
        base=$cs.$mode.$k
        # check runs: seqmatch with every thread count, the direct engine, the peer
        for t in $THREADS; do sm "sm.$base.t$t" "$TIMEOUT" -p "$set" "$opt" "$k" -t "$t" "$FASTA"; done
        PLANNED=$(planner_engine -p "$set" "$opt" "$k")
        DIRECT=""
        if [ "$k" = "$DIRECT_K" ]; then direct "direct.$base" "$cs" "$mode" "$k" "$T1" -p "$set"; fi
        # seed 001's anti-diagonal wavefront DP (the reference engine), one primer
        wf=""
        if [ "$n" = 1 ] && [ "$mode" = edits ] && [ "$k" = "$DIRECT_K" ]; then
          wf=1
          sm "wavefront.$base" "$TIMEOUT" -p "$set" -k "$k" --engine wavefront -t "$T1" "$FASTA"
        fi
        peer=""
        if [ "$mode" = mismatches ] && [ -n "${peer_ok[seqkit]:-}" ] && { [ "$n" = 1 ] || [ "$k" = 2 ]; }; then
          peer=seqkit
          check_run "seqkit.$base" "$PEER_TIMEOUT" "$OUT/seqkit.$base" seqkit locate -i -j 2 -m "$k" -f "$set" "$FASTA"
        fi
        if [ "$mode" = edits ] && [ -n "${peer_ok[edlib]:-}" ] && { [ "$n" = 1 ] || [ "$k" = 2 ]; }; then
          peer=edlib
          check_run "edlib.$base" "$PEER_TIMEOUT" "$OUT/edlib.$base" "$EDLIB" -k "$k" "$set" "$FASTA"
        fi
        # comparisons
        ref=sm.$base.t$T1
        for t in $THREADS; do [ "$t" = "$T1" ] || same "sm.$base.t$t" "$ref" "= -t $T1"; done
        if [ -n "$DIRECT" ]; then same "direct.$base" "$ref" "= the planner's $PLANNED"; fi
        if [ -n "$wf" ]; then same "wavefront.$base" "$ref" "= the planner's $PLANNED"; fi
        if [ "$n" = 1 ] || { [ "$n" = 10 ] && [ "$mode" = mismatches ] && [ "$k" = 2 ]; }; then
          oracle "$ref" "$OUT/$ref" "$opt" "$k" --report best "$set" "$FASTA"
        fi
        if [ "$peer" = seqkit ] && finished "seqkit.$base" && finished "$ref"; then
          if cmp -s <(sk_keys "$OUT/seqkit.$base") <(sm_keys "$OUT/$ref"); then
            pair "$ref" "seqkit.$base" same same "same hits as seqmatch"
          else
            diff <(sk_keys "$OUT/seqkit.$base") <(sm_keys "$OUT/$ref") | head -6 >&2 || true
            pair "$ref" "seqkit.$base" "$(($(lines_of "$OUT/seqkit.$base") - 1)) hits" "$(lines_of "$OUT/$ref") hits" "same hits as seqmatch"
          fi
        fi
        if [ "$peer" = edlib ] && finished "edlib.$base" && finished "$ref"; then
          pair "$ref" "edlib.$base" "$(edlib_found "$OUT/edlib.$base")" "$(sm_triples "$OUT/$ref")" "= seqmatch's (record; pattern; strand) triples"
        fi
        # timed runs and rows
        cells=""
        [ "$mode" = edits ] && cells=$((20 * BASES * n * 2))
        rnote=$([ "$mode" = edits ] && echo 'report best' || true)
        for t in $THREADS; do
          row "sm.$base.t$t" "$cs" seqmatch "$t" "$n" 20 "$k" "$mode" 2 "$(lines_of "$OUT/sm.$base.t$t")" hits "" "$cells" "$rnote" "auto: $PLANNED" lines_of
        done
        if [ -n "$DIRECT" ]; then
          row "direct.$base" "$cs" "seqmatch-$DIRECT" "$T1" "$n" 20 "$k" "$mode" 2 "$(lines_of "$OUT/direct.$base")" hits "" "$cells" "${rnote:+$rnote; }--engine $DIRECT" "$DIRECT" lines_of
        fi
        if [ -n "$wf" ]; then
          row "wavefront.$base" "$cs" seqmatch-wavefront "$T1" "$n" 20 "$k" "$mode" 2 "$(lines_of "$OUT/wavefront.$base")" hits "" "$cells" "report best; --engine wavefront" wavefront lines_of
        fi
        if [ "$peer" = seqkit ]; then
          c=""; finished "seqkit.$base" && c=$(($(lines_of "$OUT/seqkit.$base") - 1))
          row "seqkit.$base" "$cs" seqkit 2 "$n" 20 "$k" mismatches 2 "$c" hits "" "" "seqkit locate -i -j 2 -m $k" "" lines_of
        elif [ "$peer" = edlib ]; then
          o=$OUT/edlib.$base c="" scan="" ecells=""
          if finished "edlib.$base"; then
            c=$(edlib_found "$o")
            scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$o")
            ecells=$(sed -n 's/.*cells=\([0-9]*\).*/\1/p' "$o")
          fi
          row "edlib.$base" "$cs" edlib 1 "$n" 20 "$k" edits 2 "$c" "triples with D<=k" "$scan" "$ecells" "best distance + its ends per pattern/record/strand" "" edlib_found
        fi
      done
    done
  done
fi

# ---------------------------------------------------------------- 1b. one primer, text lines
if has_case lines; then
  say "== lines"
  p=$(sed -n 2p "$SETS/primers1.fa")
  k=2
  for t in $THREADS; do sm "sm.lines.t$t" "$TIMEOUT" --alphabet text --lines -k "$k" -e "$p" -t "$t" "$FASTA"; done
  PLANNED=$(planner_engine --alphabet text -k "$k" -e "$p")
  for peer in ugrep tre-agrep; do
    [ -n "${peer_ok[$peer]:-}" ] || continue
    if [ "$peer" = ugrep ]; then check_run "$peer.lines" "$PEER_TIMEOUT" "$OUT/$peer.lines" ugrep -c -Z$k -- "$p" "$FASTA"
    else check_run "$peer.lines" "$PEER_TIMEOUT" "$OUT/$peer.lines" tre-agrep -c -$k -- "$p" "$FASTA"; fi
  done
  for t in $THREADS; do [ "$t" = "$T1" ] || same "sm.lines.t$t" "sm.lines.t$T1" "= -t $T1"; done
  sm_lines=$(sm_records "$OUT/sm.lines.t$T1" | wc -l | tr -d ' ')
  for peer in ugrep tre-agrep; do
    [ -n "${peer_ok[$peer]:-}" ] && finished "$peer.lines" || continue
    got=$(first_word "$OUT/$peer.lines")
    if [ "$peer" = ugrep ] && [ "$got" != "$sm_lines" ]; then
      note_check ugrep.lines "differs from seqmatch ($sm_lines lines): ugrep -Z is not plain Levenshtein (see docs)"
    else
      pair "sm.lines.t$T1" "$peer.lines" "$got" "$sm_lines" "= seqmatch's matching lines"
    fi
  done
  for t in $THREADS; do
    row "sm.lines.t$t" lines seqmatch "$t" 1 20 "$k" edits 1 "$sm_lines" "matching lines" "" "$(($(wc -c < "$FASTA") * 20))" \
      "--alphabet text --lines; forward strand; GCUPS over all bytes of the FASTA file" "auto: $PLANNED" lines_of
  done
  for peer in ugrep tre-agrep; do
    [ -n "${peer_ok[$peer]:-}" ] || continue
    c=""; finished "$peer.lines" && c=$(first_word "$OUT/$peer.lines")
    row "$peer.lines" lines "$peer" 1 1 20 "$k" edits 1 "$c" "matching lines" "" "" \
      "$([ "$peer" = ugrep ] && echo "ugrep -c -Z$k" || echo "tre-agrep -c -$k")" "" first_word
  done
fi

# ---------------------------------------------------------------- 2. CRISPR guides + NGG, -m 4
if has_case guides; then
  say "== guides"
  set=$SETS/guides20ngg.fa
  base=guides20.mismatches.4
  for t in $THREADS; do sm "sm.$base.t$t" "$TIMEOUT" -p "$set" -m 4 -t "$t" "$FASTA"; done
  direct "direct.$base" guides20 mismatches 4 "$T1" -p "$set"
  if [ -n "${peer_ok[seqkit]:-}" ]; then
    # seqkit: no IUPAC with -m; a literal N mismatches every base, so -m 5 on guide+NGG allows
    # 4 more mismatches, as seqmatch -m 4 does -- except where the text holds N (or another
    # non-ACGT byte) under the PAM's N: seqkit counts N=N as a match, seqmatch as a mismatch.
    check_run "seqkit.$base" "$PEER_TIMEOUT" "$OUT/seqkit.$base" seqkit locate -i -j 2 -m 5 -f "$SETS/guides20ngg-literal.fa" "$FASTA"
  fi
  ref=sm.$base.t$T1
  for t in $THREADS; do [ "$t" = "$T1" ] || same "sm.$base.t$t" "$ref" "= -t $T1"; done
  [ -n "$DIRECT" ] && same "direct.$base" "$ref" "= the planner's $PLANNED"
  oracle "$ref" "$OUT/$ref" -m 4 "$set" "$FASTA"
  if [ -n "${peer_ok[seqkit]:-}" ] && finished "seqkit.$base" && finished "$ref"; then
    o=$OUT/seqkit.$base
    # drop seqkit's windows with a non-ACGT base under the N (column 7 = matched sequence)
    awk -F'\t' 'NR == 1 || toupper(substr($7, 21, 1)) ~ /^[ACGT]$/' "$o" > "$o.acgt"
    dropped=$(($(lines_of "$o") - $(lines_of "$o.acgt")))
    if cmp -s <(sk_keys "$o.acgt") <(sm_keys "$OUT/$ref"); then
      pair "$ref" "seqkit.$base" same same "same hits as seqmatch (after dropping $dropped windows with non-ACGT under N)"
    else
      diff <(sk_keys "$o.acgt") <(sm_keys "$OUT/$ref") | head -6 >&2 || true
      pair "$ref" "seqkit.$base" "$(($(lines_of "$o.acgt") - 1)) hits" "$(lines_of "$OUT/$ref") hits" "same hits as seqmatch"
    fi
  fi
  for t in $THREADS; do
    row "sm.$base.t$t" guides20 seqmatch "$t" 20 23 4 mismatches 2 "$(lines_of "$OUT/sm.$base.t$t")" hits "" "" "20 nt + NGG" "auto: $PLANNED" lines_of
  done
  if [ -n "$DIRECT" ]; then
    row "direct.$base" guides20 "seqmatch-$DIRECT" "$T1" 20 23 4 mismatches 2 "$(lines_of "$OUT/direct.$base")" hits "" "" "20 nt + NGG; --engine $DIRECT" "$DIRECT" lines_of
  fi
  if [ -n "${peer_ok[seqkit]:-}" ]; then
    c=""; finished "seqkit.$base" && c=$(($(lines_of "$OUT/seqkit.$base") - 1))
    row "seqkit.$base" guides20 seqkit 2 20 23 4 mismatches 2 "$c" hits "" "" \
      "seqkit locate -i -j 2 -m 5 with a literal N (= 4 mismatches elsewhere)" "" lines_of
  fi
fi

# ---------------------------------------------------------------- 3. long patterns, 5 % edits
# edlib_rows CASE SLOT-BASE N LEN K: compare edlib with seqmatch (done by the caller) and its row
edlib_row() {
  local cs=$1 slot=$2 n=$3 len=$4 k=$5 o=$OUT/$2 c="" scan="" ecells=""
  if finished "$slot"; then
    c=$(edlib_found "$o")
    scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$o")
    ecells=$(sed -n 's/.*cells=\([0-9]*\).*/\1/p' "$o")
  fi
  row "$slot" "$cs" edlib 1 "$n" "$len" "$k" edits 2 "$c" "triples with D<=k" "$scan" "$ecells" \
    "best distance + its ends per pattern/record/strand" "" edlib_found
}
if has_case long; then
  say "== long patterns"
  for name in $LONG; do
    case $name in len100) len=100 k=5 ;; len1000) len=1000 k=50 ;; *) continue ;; esac
    set=$SETS/$name.fa
    base=$name.edits.$k
    for t in $THREADS; do sm "sm.$base.t$t" "$TIMEOUT" -p "$set" -k "$k" -t "$t" "$FASTA"; done
    direct "direct.$base" "$name" edits "$k" "$T1" -p "$set"
    if [ -n "${peer_ok[edlib]:-}" ]; then check_run "edlib.$base" "$PEER_TIMEOUT" "$OUT/edlib.$base" "$EDLIB" -k "$k" "$set" "$FASTA"; fi
    ref=sm.$base.t$T1
    for t in $THREADS; do [ "$t" = "$T1" ] || same "sm.$base.t$t" "$ref" "= -t $T1"; done
    [ -n "$DIRECT" ] && same "direct.$base" "$ref" "= the planner's $PLANNED"
    if [ "$len" = 100 ] && [ "$ORACLE" = 1 ] && finished "$ref"; then
      # the reference for the first pattern only (the plain DP is slow)
      head -n "$(awk '/^>/ { n++ } n == 2 { print NR - 1; exit }' "$set")" "$set" > "$OUT/first.fa"
      awk -F'\t' '$2 == "p1"' "$OUT/$ref" > "$OUT/first.sm"
      oracle "$ref" "$OUT/first.sm" -k "$k" --report best "$OUT/first.fa" "$FASTA"
    fi
    if [ -n "${peer_ok[edlib]:-}" ] && finished "$ref"; then
      pair "$ref" "edlib.$base" "$(edlib_found "$OUT/edlib.$base")" "$(sm_triples "$OUT/$ref")" "= seqmatch's (record; pattern; strand) triples"
    fi
    cells=$((len * BASES * 10 * 2))
    for t in $THREADS; do
      row "sm.$base.t$t" "$name" seqmatch "$t" 10 "$len" "$k" edits 2 "$(lines_of "$OUT/sm.$base.t$t")" hits "" "$cells" "report best" "auto: $PLANNED" lines_of
    done
    if [ -n "$DIRECT" ]; then
      row "direct.$base" "$name" "seqmatch-$DIRECT" "$T1" 10 "$len" "$k" edits 2 "$(lines_of "$OUT/direct.$base")" hits "" "$cells" "report best; --engine $DIRECT" "$DIRECT" lines_of
    fi
    if [ -n "${peer_ok[edlib]:-}" ]; then edlib_row "$name" "edlib.$base" 10 "$len" "$k"; fi
  done
fi

# ---------------------------------------------------------------- 4. 64 x 64 nt, -k 3, one thread
if has_case m64; then
  say "== m64"
  set=$SETS/m64.fa
  base=m64.edits.3
  sm "sm.$base.t1" "$TIMEOUT" -p "$set" -k 3 -t 1 "$FASTA"
  direct "direct.$base" m64 edits 3 1 -p "$set"
  if [ -n "${peer_ok[edlib]:-}" ]; then check_run "edlib.$base" "$PEER_TIMEOUT" "$OUT/edlib.$base" "$EDLIB" -k 3 "$set" "$FASTA"; fi
  ref=sm.$base.t1
  [ -n "$DIRECT" ] && same "direct.$base" "$ref" "= the planner's $PLANNED"
  if [ "$ORACLE" = 1 ] && finished "$ref"; then
    head -n 2 "$set" > "$OUT/first.fa"
    awk -F'\t' '$2 == "p1"' "$OUT/$ref" > "$OUT/first.sm"
    oracle "$ref" "$OUT/first.sm" -k 3 --report best "$OUT/first.fa" "$FASTA"
  fi
  if [ -n "${peer_ok[edlib]:-}" ] && finished "$ref"; then
    pair "$ref" "edlib.$base" "$(edlib_found "$OUT/edlib.$base")" "$(sm_triples "$OUT/$ref")" "= seqmatch's (record; pattern; strand) triples"
  fi
  cells=$((64 * BASES * 64 * 2))
  row "$ref" m64 seqmatch 1 64 64 3 edits 2 "$(lines_of "$OUT/$ref")" hits "" "$cells" "report best" "auto: $PLANNED" lines_of
  if [ -n "$DIRECT" ]; then
    row "direct.$base" m64 "seqmatch-$DIRECT" 1 64 64 3 edits 2 "$(lines_of "$OUT/direct.$base")" hits "" "$cells" "report best; --engine $DIRECT; target >= 20 GCUPS" "$DIRECT" lines_of
  fi
  if [ -n "${peer_ok[edlib]:-}" ]; then edlib_row m64 "edlib.$base" 64 64 3; fi
fi

# ---------------------------------------------------------------- 5. the Bible
if has_case bible; then
  if [ ! -s "$BIBLE" ]; then
    say "run-approx: $BIBLE missing: bible cases skipped"
  else
    say "== bible"
    BBYTES=$(wc -c < "$BIBLE")
    for spec in "lord LORD" "mercy for his mercy endureth for ever"; do
      read -r tag pat <<< "$spec"
      m=${#pat}
      cs=bible_$tag
      for k in 1 2; do
        base=$cs.$k
        for t in $THREADS; do
          check_run "sm.$base.t$t" "$TIMEOUT" "$OUT/sm.$base.t$t" "$SEQMATCH" search --alphabet text -k "$k" --report ends -e "$pat" -t "$t" --no-header "$BIBLE"
        done
        check_run "sml.$base" "$TIMEOUT" "$OUT/sml.$base" "$SEQMATCH" search --alphabet text --lines -k "$k" -e "$pat" -t 1 --no-header "$BIBLE"
        PLANNED=$(planner_engine --alphabet text -k "$k" --report ends -e "$pat")
        [ -n "${peer_ok[edlib]:-}" ] && check_run "edlib.$base" "$PEER_TIMEOUT" "$OUT/edlib.$base" "$EDLIB" --text -k "$k" -v "$SETS/$cs.txt" "$BIBLE"
        for peer in ugrep tre-agrep; do
          [ -n "${peer_ok[$peer]:-}" ] || continue
          if [ "$peer" = ugrep ]; then check_run "$peer.$base" "$PEER_TIMEOUT" "$OUT/$peer.$base" ugrep -c -Z"$k" -- "$pat" "$BIBLE"
          else check_run "$peer.$base" "$PEER_TIMEOUT" "$OUT/$peer.$base" tre-agrep -c -"$k" -- "$pat" "$BIBLE"; fi
        done
        ref=sm.$base.t$T1
        for t in $THREADS; do [ "$t" = "$T1" ] || same "sm.$base.t$t" "$ref" "= -t $T1"; done
        if finished "$ref"; then
          awk -F'\t' -v OFS='\t' -v p="$pat" '{ $1 = "text"; $2 = p; print }' "$OUT/$ref" > "$OUT/$ref.renamed"
          ORACLE=1 oracle "$ref" "$OUT/$ref.renamed" -k "$k" --text "$SETS/$cs.txt" "$BIBLE"
        fi
        if [ -n "${peer_ok[edlib]:-}" ] && finished "edlib.$base" && finished "$ref"; then
          best=$(awk -F'\t' 'NF == 6 { print $4 }' "$OUT/edlib.$base")
          # no distance <= k: seqmatch must have no hit either
          want=$(lines_of "$OUT/$ref")
          [ -n "$best" ] && want=$(awk -F'\t' -v b="$best" '$6 == b' "$OUT/$ref" | wc -l | tr -d ' ')
          pair "$ref" "edlib.$base" "$(edlib_ends "$OUT/edlib.$base")" "$want" "= seqmatch's ends with the least distance ($best)"
        fi
        sm_lines=$(sm_records "$OUT/sml.$base" | wc -l | tr -d ' ')
        for peer in ugrep tre-agrep; do
          [ -n "${peer_ok[$peer]:-}" ] && finished "$peer.$base" || continue
          got=$(first_word "$OUT/$peer.$base")
          if [ "$peer" = ugrep ] && [ "$got" != "$sm_lines" ]; then
            note_check "ugrep.$base" "differs from seqmatch ($sm_lines lines): ugrep -Z is not plain Levenshtein (see docs)"
          else
            pair "sml.$base" "$peer.$base" "$got" "$sm_lines" "= seqmatch's matching lines"
          fi
        done
        for t in $THREADS; do
          row "sm.$base.t$t" "$cs" seqmatch "$t" 1 "$m" "$k" edits 1 "$(lines_of "$OUT/sm.$base.t$t")" "end positions" "" "$((m * BBYTES))" \
            "--alphabet text --report ends; whole file one record" "auto: $PLANNED" lines_of
        done
        row "sml.$base" "$cs" seqmatch-lines 1 1 "$m" "$k" edits 1 "$sm_lines" "matching lines" "" "" "--alphabet text --lines -t 1" "auto: $PLANNED" lines_of
        if [ -n "${peer_ok[edlib]:-}" ]; then
          c="" scan=""
          if finished "edlib.$base"; then c=$(edlib_ends "$OUT/edlib.$base"); scan=$(sed -n 's/.*scan_s=\([0-9.]*\).*/\1/p' "$OUT/edlib.$base"); fi
          row "edlib.$base" "$cs" edlib 1 1 "$m" "$k" edits 1 "$c" "ends at the least distance" "$scan" "$((m * BBYTES))" \
            "one call; reports only the ends with the least distance" "" edlib_ends
        fi
        for peer in ugrep tre-agrep; do
          [ -n "${peer_ok[$peer]:-}" ] || continue
          c=""; finished "$peer.$base" && c=$(first_word "$OUT/$peer.$base")
          row "$peer.$base" "$cs" "$peer" 1 1 "$m" "$k" edits 1 "$c" "matching lines" "" "" \
            "$([ "$peer" = ugrep ] && echo "ugrep -c -Z$k" || echo "tre-agrep -c -$k")" "" first_word
        done
      done
    done
  fi
fi

# ---------------------------------------------------------------- 6. reads: BBDuk and cutadapt
if has_case reads; then
  say "== reads (BBDuk, cutadapt)"
  READS=$SETS/reads.x$READS_COPIES.fq
  if [ ! -s "$READS" ]; then
    # both read files of unicycler-data, reads with a base other than A/C/G/T left out (BBDuk
    # skips k-mers with N, seqmatch counts N as a mismatch), READS_COPIES times
    gzip -dc "$DATA"/reads/short_reads_1.fastq.gz "$DATA"/reads/short_reads_2.fastq.gz |
      awk 'NR % 4 == 1 { h = $0 } NR % 4 == 2 { s = $0 } NR % 4 == 3 { p = $0 }
           NR % 4 == 0 { if (s !~ /[^ACGT]/) print h "\n" s "\n" p "\n" $0 }' > "$READS.one"
    for ((i = 0; i < READS_COPIES; i++)); do cat "$READS.one"; done > "$READS.tmp"
    mv "$READS.tmp" "$READS"
    rm -f "$READS.one"
  fi
  NREADS=$(($(wc -l < "$READS") / 4))
  RBASES=$(awk 'NR % 4 == 2 { n += length($0) } END { print n }' "$READS")
  # the genome the reads come from (Unicycler's reference.fasta), as raw bases for the sampler
  if [ ! -s "$SETS/readref.seq" ]; then
    awk '!/^>/' "$DATA/genomes/reference.fa" | tr -d '\r\n' | tr 'a-z' 'A-Z' > "$SETS/readref.seq"
  fi
  sample kmers31 1000 31 3101 "$SETS/readref.seq"
  sample adapters20 10 20 2101 "$SETS/readref.seq"
  if [ -n "${peer_ok[bbduk]:-}" ]; then
    for h in $HDISTS; do
      base=kmers31.$h
      for t in $THREADS; do
        sm "sm.$base.t$t" "$TIMEOUT" -p "$SETS/kmers31.fa" -m "$h" -t "$t" "$READS"
        check_run "bbduk.$base.t$t" "$PEER_TIMEOUT" "$OUT/bbduk.$base.t$t" bbduk.sh -Xmx2g "in=$READS" "ref=$SETS/kmers31.fa" \
          k=31 "hdist=$h" mm=f rcomp=t "threads=$t" "outm=$OUT/bbduk.$base.t$t.fq" overwrite=t
      done
      PLANNED=$(planner_engine -p "$SETS/kmers31.fa" -m "$h")
      for t in $THREADS; do
        [ "$t" = "$T1" ] || same "sm.$base.t$t" "sm.$base.t$T1" "= -t $T1"
        if finished "bbduk.$base.t$t" && finished "sm.$base.t$t"; then
          if cmp -s <(fq_names "$OUT/bbduk.$base.t$t.fq") <(sm_records "$OUT/sm.$base.t$t"); then
            pair "sm.$base.t$t" "bbduk.$base.t$t" same same "same matched reads as seqmatch"
          else
            pair "sm.$base.t$t" "bbduk.$base.t$t" "$(fq_names "$OUT/bbduk.$base.t$t.fq" | wc -l) reads" \
              "$(sm_records "$OUT/sm.$base.t$t" | wc -l) reads" "same matched reads as seqmatch"
          fi
        fi
      done
      for t in $THREADS; do
        row "sm.$base.t$t" kmers31_reads seqmatch "$t" 1000 31 "$h" mismatches 2 "$(sm_records "$OUT/sm.$base.t$t" | wc -l)" "matched reads" "" "" \
          "$NREADS reads; $RBASES bases" "auto: $PLANNED" lines_of
        c=""; finished "bbduk.$base.t$t" && c=$(fq_names "$OUT/bbduk.$base.t$t.fq" | wc -l)
        row "bbduk.$base.t$t" kmers31_reads bbduk "$t" 1000 31 "$h" mismatches 2 "$c" "matched reads" "" "" \
          "bbduk.sh k=31 hdist=$h mm=f rcomp=t threads=$t" ""
      done
    done
  fi
  if [ -n "${peer_ok[cutadapt]:-}" ]; then
    for e in $CUT_KS; do
      base=adapters20.$e
      sm "sm.$base.t1" "$TIMEOUT" -p "$SETS/adapters20.fa" -m "$e" --strand + -t 1 "$READS"
      check_run "cutadapt.$base" "$PEER_TIMEOUT" "$OUT/cutadapt.$base" cutadapt -j 1 -a "file:$SETS/adapters20.fa" -e "$e" --no-indels -O 20 \
        --action=none --discard-untrimmed -o "$OUT/cutadapt.$base.fq" "$READS"
      PLANNED=$(planner_engine -p "$SETS/adapters20.fa" -m "$e" --strand +)
      if finished "cutadapt.$base" && finished "sm.$base.t1"; then
        if cmp -s <(fq_names "$OUT/cutadapt.$base.fq") <(sm_records "$OUT/sm.$base.t1"); then
          pair "sm.$base.t1" "cutadapt.$base" same same "same reads with an adapter as seqmatch"
        else
          pair "sm.$base.t1" "cutadapt.$base" "$(fq_names "$OUT/cutadapt.$base.fq" | wc -l) reads" \
            "$(sm_records "$OUT/sm.$base.t1" | wc -l) reads" "same reads with an adapter as seqmatch"
        fi
      fi
      row "sm.$base.t1" adapters_reads seqmatch 1 10 20 "$e" mismatches 1 "$(sm_records "$OUT/sm.$base.t1" | wc -l)" "matched reads" "" "" \
        "--strand +; $NREADS reads" "auto: $PLANNED" lines_of
      c=""; finished "cutadapt.$base" && c=$(fq_names "$OUT/cutadapt.$base.fq" | wc -l)
      row "cutadapt.$base" adapters_reads cutadapt 1 10 20 "$e" mismatches 1 "$c" "matched reads" "" "" \
        "cutadapt -j 1 -a file:adapters -e $e --no-indels -O 20 --action=none --discard-untrimmed" ""
    done
  fi
fi

# ---------------------------------------------------------------- the end
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$ENVF"
echo "script wall time: $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f s", b - a }')" >> "$ENVF"
say ""
say "results: $CSV $ENVF"
if [ "$INVALID_ANY" = 1 ]; then
  say "run-approx: some results DIFFER: their timings are marked INVALID (see above)"
  exit 3
fi
