#!/usr/bin/env bash
# seqmatch filter and demux beside seqkit grep, BBDuk and cutadapt on real reads: first that
# they choose the same reads where their semantics agree (outputs compared byte for byte),
# then how fast each runs on the same input.
#
# usage: bench/compare-filter.sh SEQMATCH READS_DIR
#   READS_DIR holds short_reads_1.fastq.gz and short_reads_2.fastq.gz (Debian's unicycler-data:
#   50,200 pairs of 125-base reads; bench/fetch-data.sh puts them in bench/data/reads).
# environment:
#   COPIES (20)   the reads repeated this many times make the timed input (1.0 M reads, 275 MB)
#   ROUNDS (3)    timed rounds; every command runs once per round, in the same order
#   THREADS (2)   threads given to every tool
#   WORK          scratch folder (default: a temporary one, removed at the end)
#   SPEED (1)     0: the agreement checks only
# Patterns are cut from the reads themselves (fixed positions, so every run uses the same):
#   eleven 20-mers from reads 1, 5001, 10001, ... at offset 40 ("adapters": some reads hold
#   them; 20 bases, so BBDuk's k = 20 takes them as they are), and the 8-base starts of every
#   200th read ("barcodes": 251 reads, as many distinct 8-mers as they hold).
# The peers' options that give seqmatch's semantics:
#   seqkit grep -s: both strands, -m mismatches; BBDuk: literal=, k=20, hdist=, mm=f (no
#   masked middle base), rcomp=t, ordered=t; cutadapt: forward strand only, so seqmatch runs
#   with --strand + beside it; -b file: --action=none --discard-untrimmed, -e 0 --no-indels -O 20
#   (the whole adapter) or -e 1 -O 19: an adapter whose first or last base lies beyond the read
#   is to seqmatch a deletion (19 read bases, 1 edit), to cutadapt a partial match of 19 bases
#   that -O must admit, and at -e 1 (1 error in 20) a partial match of 19 is allowed none, so
#   -O 19 adds just those; demux -g ^file: (anchored at the read start), checked with
#   --no-index: cutadapt's index of barcodes (its default) keeps, for a read prefix within
#   reach of several barcodes, the first barcode of the file rather than the closest (a known
#   cutadapt issue), so a line after each inexact demux check counts how many reads it moves.
#   A read whose closest barcodes are two or more at the same distance goes to unassigned in
#   seqmatch and to the first of them in cutadapt: the demux checks count those apart, and
#   they must be as many as seqmatch's table says are unassigned for that reason.
# Output: one line per check ("same" or "DIFFERS"), then per case the median wall seconds,
# the median CPU seconds (user + sys; less sensitive to a busy machine) and MB/s of input.
set -euo pipefail
SM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
READS=${2:?usage: compare-filter.sh SEQMATCH READS_DIR}
COPIES=${COPIES:-20}
ROUNDS=${ROUNDS:-3}
T=${THREADS:-2}
SPEED=${SPEED:-1}
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
have() { command -v "$1" > /dev/null; }
cd "$WORK"

zcat "$READS/short_reads_1.fastq.gz" > r1.fq
zcat "$READS/short_reads_2.fastq.gz" > r2.fq
awk 'NR % 20000 == 2 { printf ">a%d\n%s\n", ++n, substr($0, 41, 20) }' r1.fq > adapters.fa
grep -v '>' adapters.fa > adapters.txt
awk 'NR % 800 == 2 { print substr($0, 1, 8) }' r1.fq | sort -u | awk '{ printf ">bc%d\n%s\n", NR, $0 }' > barcodes.fa
lits=$(paste -sd, adapters.txt)
reads=$(awk 'END { print NR / 4 }' r1.fq)
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(LC_ALL=C lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); threads $T"
echo "# $($SM --version | head -1); $(have seqkit && seqkit version 2>/dev/null | head -1); $(have cutadapt && echo "cutadapt $(cutadapt --version)"); $(have bbduk.sh && bbduk.sh --version 2>&1 | grep -m1 'BBMap version' || true)"
echo "# reads: $reads pairs of $(awk 'NR == 2 { print length($0) }' r1.fq) bases; adapters: $(grep -c '>' adapters.fa) 20-mers; barcodes: $(grep -c '>' barcodes.fa) 8-mers"

names() { awk 'NR % 4 == 1 { print $1 }' "$1"; }
# check NAME FILE_A FILE_B: the two outputs hold the same bytes
check() {
    if cmp -s "$2" "$3"; then echo "same	$1	$(names "$2" | wc -l) reads"
    else echo "DIFFERS	$1	$(names "$2" | wc -l) against $(names "$3" | wc -l) reads"; fi
}
# dir_list DIR: "read name<TAB>file" for every read of a demux folder, sorted (cutadapt's
# unknown = unassigned)
dir_list() {
    local f n
    for f in "$1"/*.fastq; do n=$(basename "$f" .fastq); [ "$n" = unknown ] && n=unassigned
                              names "$f" | sed "s/\$/\t$n/"; done | sort
}
# check_dirs NAME DIR_A DIR_B [TIES]: demux folders (seqmatch's, cutadapt's), read by read;
# reads placed otherwise are counted by kind; with TIES (seqmatch's count of reads left
# unassigned for two barcodes equally close), "same" when those are the only ones that differ
check_dirs() {
    dir_list "$2" > dirs_a
    dir_list "$3" > dirs_b
    if cmp -s dirs_a dirs_b; then echo "same	$1: every read in the same file ($(wc -l < dirs_a) reads)"; return; fi
    join -t "$(printf '\t')" dirs_a dirs_b | awk -F'\t' -v what="$1" -v ties="${4:-}" -v all="$(wc -l < dirs_a)" '
        $2 != $3 { if ($2 == "unassigned") u++; else if ($3 == "unassigned") c++; else o++ }
        END { if (ties != "" && u == ties && c + o == 0)
                  printf "same\t%s: every read in the same file (%d reads) but the %d ties seqmatch leaves unassigned\n", what, all, u
              else
                  printf "DIFFERS\t%s: %d reads seqmatch leaves unassigned and cutadapt gives a barcode, %d the reverse, %d to other barcodes\n", what, u, c, o }'
}
# ties FILE: seqmatch demux's count of reads unassigned for two barcodes equally close
ties() { tail -1 "$1" | sed -n 's/.*, \([0-9]*\) with two barcodes equally close.*/\1/p'; }
# moved NAME DIR_A DIR_B: reads cutadapt's index gives another barcode than --no-index does
moved() {
    dir_list "$2" > dirs_a
    dir_list "$3" > dirs_b
    echo "#	$1: $(join -t "$(printf '\t')" dirs_a dirs_b | awk -F'\t' '$2 != $3' | wc -l) reads placed otherwise"
}

echo "## agreement"
"$SM" filter -p adapters.fa r1.fq -o sm_exact.fq
"$SM" filter -p adapters.fa -m 1 r1.fq -o sm_m1.fq
"$SM" filter -p adapters.fa --strand + r1.fq -o sm_fw.fq
"$SM" filter -p adapters.fa --strand + -k 1 r1.fq -o sm_fw_k1.fq
"$SM" filter -p adapters.fa -1 r1.fq -2 r2.fq -o 'sm_pair_#.fq'
"$SM" demux -p barcodes.fa -o sm_dm r1.fq 2> /dev/null
"$SM" demux -p barcodes.fa -m 1 -o sm_dm_m1 r1.fq 2> sm_dm_m1.txt
"$SM" demux -p barcodes.fa -k 1 -o sm_dm_k1 r1.fq 2> sm_dm_k1.txt
if have seqkit; then
    seqkit grep -s -f adapters.txt r1.fq -o sk_exact.fq 2> /dev/null
    check "exact, both strands: seqmatch filter / seqkit grep -s" sm_exact.fq sk_exact.fq
    seqkit grep -s -m 1 -f adapters.txt r1.fq -o sk_m1.fq 2> /dev/null
    check "1 mismatch: seqmatch filter -m 1 / seqkit grep -s -m 1" sm_m1.fq sk_m1.fq
fi
if have bbduk.sh; then
    bbduk.sh in=r1.fq outm=bb_exact.fq literal="$lits" k=20 hdist=0 mm=f rcomp=t ordered=t threads="$T" 2> /dev/null
    check "exact, both strands: seqmatch filter / bbduk hdist=0" sm_exact.fq bb_exact.fq
    bbduk.sh in=r1.fq outm=bb_m1.fq literal="$lits" k=20 hdist=1 mm=f rcomp=t ordered=t threads="$T" 2> /dev/null
    check "1 mismatch: seqmatch filter -m 1 / bbduk hdist=1" sm_m1.fq bb_m1.fq
    bbduk.sh in1=r1.fq in2=r2.fq outm1=bb_pair_1.fq outm2=bb_pair_2.fq literal="$lits" k=20 hdist=0 mm=f rcomp=t \
        ordered=t threads="$T" 2> /dev/null
    check "pairs, either mate (mate 1): seqmatch filter -1 -2 / bbduk in1 in2" sm_pair_1.fq bb_pair_1.fq
    check "pairs, either mate (mate 2)" sm_pair_2.fq bb_pair_2.fq
fi
if have cutadapt; then
    cutadapt -j "$T" -b file:adapters.fa -e 0 --no-indels -O 20 --action=none --discard-untrimmed -o ca_fw.fq r1.fq \
        > /dev/null 2>&1
    check "exact, forward: seqmatch filter --strand + / cutadapt -b -e 0" sm_fw.fq ca_fw.fq
    cutadapt -j "$T" -b file:adapters.fa -e 1 -O 19 --action=none --discard-untrimmed -o ca_fw_k1.fq r1.fq \
        > /dev/null 2>&1
    check "1 edit, forward: seqmatch filter --strand + -k 1 / cutadapt -b -e 1 -O 19" sm_fw_k1.fq ca_fw_k1.fq
    mkdir -p ca_dm ca_dm_m1 ca_dm_k1 ca_dm_m1_ix ca_dm_k1_ix
    cutadapt -j "$T" -g ^file:barcodes.fa -e 0 --no-indels --action=none -o 'ca_dm/{name}.fastq' r1.fq > /dev/null 2>&1
    check_dirs "demux exact" sm_dm ca_dm
    cutadapt -j "$T" --no-index -g ^file:barcodes.fa -e 1 --no-indels --action=none -o 'ca_dm_m1/{name}.fastq' r1.fq \
        > /dev/null 2>&1
    check_dirs "demux 1 mismatch (seqmatch -m 1 / cutadapt -e 1 --no-indels --no-index)" sm_dm_m1 ca_dm_m1 "$(ties sm_dm_m1.txt)"
    echo "#	seqmatch -m 1: $(tail -1 sm_dm_m1.txt | sed 's/^# //')"
    cutadapt -j "$T" -g ^file:barcodes.fa -e 1 --no-indels --action=none -o 'ca_dm_m1_ix/{name}.fastq' r1.fq \
        > /dev/null 2>&1
    moved "cutadapt -e 1 --no-indels with its index against --no-index" ca_dm_m1_ix ca_dm_m1
    cutadapt -j "$T" --no-index -g ^file:barcodes.fa -e 1 --action=none -o 'ca_dm_k1/{name}.fastq' r1.fq > /dev/null 2>&1
    check_dirs "demux 1 edit (seqmatch -k 1 / cutadapt -e 1 --no-index)" sm_dm_k1 ca_dm_k1 "$(ties sm_dm_k1.txt)"
    echo "#	seqmatch -k 1: $(tail -1 sm_dm_k1.txt | sed 's/^# //')"
    cutadapt -j "$T" -g ^file:barcodes.fa -e 1 --action=none -o 'ca_dm_k1_ix/{name}.fastq' r1.fq > /dev/null 2>&1
    moved "cutadapt -e 1 with its index against --no-index" ca_dm_k1_ix ca_dm_k1
fi
[ "$SPEED" = 1 ] || exit 0

echo "## speed"
for i in $(seq "$COPIES"); do cat r1.fq; done > big1.fq
for i in $(seq "$COPIES"); do cat r2.fq; done > big2.fq
have pigz && pigz -p "$(nproc)" -6 -c big1.fq > big1.fq.gz || gzip -6 -c big1.fq > big1.fq.gz
bytes=$(stat -c %s big1.fq)
echo "# timed input: $COPIES x the reads = $((reads * COPIES)) reads, $bytes bytes (gzip -6: $(stat -c %s big1.fq.gz))"
cat big1.fq big2.fq big1.fq.gz > /dev/null
results=$(mktemp)
# run CASE TOOL CMD...: one timed run (outputs to files in WORK, page cache)
run() {
    local case=$1 tool=$2
    shift 2
    /usr/bin/time -o "$results.t" -f "%e %U %S" "$@" > /dev/null 2> /dev/null
    echo "$case	$tool	$(tail -1 "$results.t")" >> "$results"
}
for r in $(seq "$ROUNDS"); do
    run "exact, both strands" "seqmatch search --format count" "$SM" search -t "$T" -p adapters.fa --format count big1.fq
    run "exact, both strands" "seqmatch filter" "$SM" filter -t "$T" -p adapters.fa big1.fq -o out.fq
    run "exact, both strands" "seqmatch filter -v" "$SM" filter -v -t "$T" -p adapters.fa big1.fq -o out.fq
    run "exact, both strands" "seqmatch filter -v, .gz out" "$SM" filter -v -t "$T" -p adapters.fa big1.fq -o out.fq.gz
    run "exact, both strands, .gz in" "seqmatch search --format count" "$SM" search -t "$T" -p adapters.fa --format count big1.fq.gz
    run "exact, both strands, .gz in" "seqmatch filter" "$SM" filter -t "$T" -p adapters.fa big1.fq.gz -o out.fq
    run "1 mismatch, both strands" "seqmatch search --format count" "$SM" search -t "$T" -m 1 -p adapters.fa --format count big1.fq
    run "1 mismatch, both strands" "seqmatch filter" "$SM" filter -t "$T" -m 1 -p adapters.fa big1.fq -o out.fq
    run "exact, forward" "seqmatch filter --strand +" "$SM" filter -t "$T" --strand + -p adapters.fa big1.fq -o out.fq
    run "1 edit, forward" "seqmatch filter --strand + -k 1" "$SM" filter -t "$T" --strand + -k 1 -p adapters.fa big1.fq -o out.fq
    run "pairs" "seqmatch filter -1 -2" "$SM" filter -t "$T" -p adapters.fa -1 big1.fq -2 big2.fq -o 'out_#.fq'
    run "demux" "seqmatch demux" "$SM" demux -t "$T" -p barcodes.fa -o sm_dm_big big1.fq
    run "demux 1 mismatch" "seqmatch demux -m 1" "$SM" demux -t "$T" -m 1 -p barcodes.fa -o sm_dm_big big1.fq
    if have seqkit; then
        run "exact, both strands" "seqkit grep -s" seqkit grep -j "$T" -s -f adapters.txt big1.fq -o out.fq
        run "exact, both strands, .gz in" "seqkit grep -s" seqkit grep -j "$T" -s -f adapters.txt big1.fq.gz -o out.fq
        # one copy only: it is slow
        run "1 mismatch, both strands (1 copy)" "seqkit grep -s -m 1" seqkit grep -j "$T" -s -m 1 -f adapters.txt r1.fq -o out.fq
        run "1 mismatch, both strands (1 copy)" "seqmatch filter -m 1" "$SM" filter -t "$T" -m 1 -p adapters.fa r1.fq -o out.fq
    fi
    if have bbduk.sh; then
        run "exact, both strands" "bbduk hdist=0" bbduk.sh in=big1.fq outm=out.fq literal="$lits" k=20 hdist=0 mm=f rcomp=t ordered=t threads="$T"
        run "exact, both strands, .gz in" "bbduk hdist=0" bbduk.sh in=big1.fq.gz outm=out.fq literal="$lits" k=20 hdist=0 mm=f rcomp=t ordered=t threads="$T"
        run "1 mismatch, both strands" "bbduk hdist=1" bbduk.sh in=big1.fq outm=out.fq literal="$lits" k=20 hdist=1 mm=f rcomp=t ordered=t threads="$T"
        run "pairs" "bbduk in1 in2" bbduk.sh in1=big1.fq in2=big2.fq outm1=out_1.fq outm2=out_2.fq literal="$lits" k=20 hdist=0 mm=f rcomp=t ordered=t threads="$T"
    fi
    if have cutadapt; then
        run "exact, forward" "cutadapt -b -e 0" cutadapt -j "$T" -b file:adapters.fa -e 0 --no-indels -O 20 --action=none --discard-untrimmed -o out.fq big1.fq
        run "1 edit, forward" "cutadapt -b -e 1 -O 19" cutadapt -j "$T" -b file:adapters.fa -e 1 -O 19 --action=none --discard-untrimmed -o out.fq big1.fq
        mkdir -p ca_dm_big
        run "demux" "cutadapt -g ^file:" cutadapt -j "$T" -g ^file:barcodes.fa -e 0 --no-indels --action=none -o 'ca_dm_big/{name}.fastq' big1.fq
        run "demux 1 mismatch" "cutadapt -g ^file: -e 1" cutadapt -j "$T" -g ^file:barcodes.fa -e 1 --no-indels --action=none -o 'ca_dm_big/{name}.fastq' big1.fq
        # the closest barcode needs --no-index, which is slow: one copy only
        run "demux 1 mismatch (1 copy)" "cutadapt -g ^file: -e 1 --no-index" cutadapt -j "$T" --no-index -g ^file:barcodes.fa -e 1 --no-indels --action=none -o 'ca_dm_big/{name}.fastq' r1.fq
        run "demux 1 mismatch (1 copy)" "seqmatch demux -m 1" "$SM" demux -t "$T" -m 1 -p barcodes.fa -o sm_dm_big r1.fq
    fi
done
# medians per (case, tool): wall, CPU, MB/s of the uncompressed reads (pairs: both files)
echo "case	tool	wall s	CPU s	MB/s"
awk -F'\t' -v bytes="$bytes" -v copies="$COPIES" '
    { split($3, t, " "); k = $1 "\t" $2; n[k]++; w[k, n[k]] = t[1]; c[k, n[k]] = t[2] + t[3]; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
    function median(a, k, cnt,   i, j, x, v) { for (i = 1; i <= cnt; i++) v[i] = a[k, i]
        for (i = 2; i <= cnt; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2 }
    END { for (i = 1; i <= m; i++) { k = order[i]; wm = median(w, k, n[k]); cm = median(c, k, n[k])
            b = bytes; if (k ~ /^pairs/) b = 2 * bytes; if (k ~ /1 copy/) b = bytes / copies
            printf "%s\t%.2f\t%.2f\t%.0f\n", k, wm, cm, (wm > 0 ? b / wm / 1e6 : 0) } }' "$results"
rm -f "$results" "$results.t"
