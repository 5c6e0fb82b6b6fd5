#!/usr/bin/env bash
# Two builds of seqmatch, the same output: every benchmark set searched with every engine that
# can take it forced (and the planner), hits and counts, both alphabets, one and two threads;
# prints one line per case and exits 1 when any output differs. For a change meant to keep
# behaviour (a refactor), run it between the last release and the change.
#
# usage: bench/compare-outputs.sh OLD_SEQMATCH NEW_SEQMATCH DATA_DIR SETS_DIR
#   DATA_DIR holds panel.fa and kjv.txt (bench/fetch-data.sh)
#   SETS_DIR holds the sets of bench/results/history.md ("Pattern sets"): k8_1000 k8_16000 k20_10
#     k32_1000 k300_3000 k31_100000 kjv_w10 kjv_w1000 (.txt), primers100.fa guides20.fa k64_64.fa
# environment: HIT_BYTES (10000000) bytes of panel.fa (and of the Bible) searched for hits;
#   counts run over the whole files.
set -euo pipefail
OLD=${1:?usage: compare-outputs.sh OLD_SEQMATCH NEW_SEQMATCH DATA_DIR SETS_DIR}
NEW=${2:?new seqmatch}
DATA=${3:?data folder}
SETS=${4:?pattern set folder}
HIT_BYTES=${HIT_BYTES:-10000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The first HIT_BYTES of the panel, cut at a record start so that it stays FASTA.
head -c "$HIT_BYTES" "$DATA/panel.fa" > "$work/part.fa"
printf '\n' >> "$work/part.fa"
head -c "$HIT_BYTES" "$DATA/kjv.txt" > "$work/part.txt"

differ=0
# same NAME ARGS...: runs both builds with ARGS, compares output and exit status.
same() {
  local name=$1
  shift
  local a b
  set +e
  "$OLD" "$@" > "$work/old" 2> "$work/old.err"; a=$?
  "$NEW" "$@" > "$work/new" 2> "$work/new.err"; b=$?
  set -e
  if [ "$a" = "$b" ] && cmp -s "$work/old" "$work/new"; then
    printf 'same\t%s\t%s lines\texit %s\n' "$name" "$(wc -l < "$work/new")" "$b"
  else
    printf 'DIFFER\t%s\texit %s/%s\n' "$name" "$a" "$b"
    diff "$work/old" "$work/new" | head -5 | sed 's/^/    /'
    differ=1
  fi
}

for set in k8_1000 k8_16000 k20_10 k32_1000 k300_3000 k31_100000; do
  engines="auto automaton shiftand wumanber kmer"
  [ "$set" = k8_16000 ] && engines="auto automaton wumanber kmer" # Shift-And on 16000 keys: minutes
  [ "$set" = k300_3000 ] && engines="auto automaton wumanber"   # the k-mer table takes k <= 32
  [ "$set" = k31_100000 ] && engines="auto kmer"                # the others take minutes
  for e in $engines; do
    same "$set dna $e hits -t1" search -p "$SETS/$set.txt" --engine "$e" -t 1 "$work/part.fa"
    same "$set dna $e hits -t2 64k" search -p "$SETS/$set.txt" --engine "$e" -t 2 --chunk-size 64K "$work/part.fa"
    whole="$DATA/panel.fa"
    [ "$e" = shiftand ] && whole="$work/part.fa" # Shift-And on thousands of keys: minutes
    same "$set dna $e count" search -p "$SETS/$set.txt" --engine "$e" -t 2 --format count "$whole"
  done
  same "$set dna overlap-free" search -p "$SETS/$set.txt" --engine automaton --overlap-free -t 2 "$work/part.fa"
  same "$set dna overlap-free-prefix" search -p "$SETS/$set.txt" --engine automaton --overlap-free-prefix -t 2 --chunk-size 64K "$work/part.fa"
done
for set in kjv_w10 kjv_w1000; do
  for e in auto automaton shiftand wumanber; do
    same "$set text $e hits" search --alphabet text -p "$SETS/$set.txt" --engine "$e" -t 2 "$work/part.txt"
    same "$set text $e count -i" search --alphabet text -i -p "$SETS/$set.txt" --engine "$e" -t 2 --format count "$DATA/kjv.txt"
  done
  same "$set lines" search --alphabet text --lines -p "$SETS/$set.txt" -t 2 --format count "$DATA/kjv.txt"
done
for set in primers100 k64_64; do
  for e in auto mismatch pigeonhole; do
    same "$set -m 2 $e hits" search -p "$SETS/$set.fa" -m 2 --engine "$e" -t 2 "$work/part.fa"
    same "$set -m 2 $e count" search -p "$SETS/$set.fa" -m 2 --engine "$e" -t 2 --format count "$DATA/panel.fa"
  done
  for e in auto myers wavefront pigeonhole; do
    [ "$e" = wavefront ] && [ "$set" = k64_64 ] && continue # minutes
    same "$set -k 2 $e hits" search -p "$SETS/$set.fa" -k 2 --engine "$e" -t 2 "$work/part.fa"
    same "$set -k 2 $e ends" search -p "$SETS/$set.fa" -k 2 --report ends --engine "$e" -t 2 --chunk-size 64K "$work/part.fa"
  done
  same "$set -k 2 count" search -p "$SETS/$set.fa" -k 2 -t 2 --format count "$DATA/panel.fa"
done
same "guides -m 4" search -p "$SETS/guides20.fa" -m 4 -t 2 "$DATA/panel.fa"
same "guides -m 4 bed" search -p "$SETS/guides20.fa" -m 4 -t 1 --format bed "$DATA/panel.fa"
same "guides -m 4 jsonl" search -p "$SETS/guides20.fa" -m 4 -t 2 --format jsonl "$work/part.fa"
exit $differ
