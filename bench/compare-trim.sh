#!/usr/bin/env bash
# seqmatch trim beside cutadapt on real reads: the same reads cut at the same places (the
# trimmed records compared byte for byte, read by read), then the time of both on the same
# cores.
#
# usage: bench/compare-trim.sh SEQMATCH READS_DIR
#   READS_DIR holds short_reads_1.fastq.gz and short_reads_2.fastq.gz (Debian's unicycler-data:
#   50,200 pairs of 125-base reads; bench/fetch-data.sh puts them in bench/data/reads).
# environment: WORK (scratch folder; default a temporary one), THREADS (2), CORES (taskset
#   list, default 0,1), RUNS (timed runs of each tool, alternating; default 5), ADAPTER
#   (default the TruSeq AGATCGGAAGAGC), TIMING=0 to skip the timing.
# Every case gives cutadapt -e 0 --no-indels (or -e K, an absolute count) so that both count
# mismatches only; seqmatch's --min-overlap is cutadapt's -O (seqmatch's default 3 is
# cutadapt's). Output per case: reads with the same record, and the differing reads counted by
# (seqmatch's length, cutadapt's length).
set -euo pipefail
SM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
READS=${2:?usage: compare-trim.sh SEQMATCH READS_DIR}
T=${THREADS:-2}
CORES=${CORES:-0,1}
RUNS=${RUNS:-5}
AD=${ADAPTER:-AGATCGGAAGAGC}
R1=$READS/short_reads_1.fastq.gz
R2=$READS/short_reads_2.fastq.gz
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
cd "$WORK"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores; $($SM --version | head -1); cutadapt $(cutadapt --version)"
echo "# $(zcat "$R1" | awk 'END { print NR / 4 }') reads per file; adapter $AD"

# compare NAME SEQMATCH_FILE OTHER_FILE [OTHER_NAME]: record by record
compare() {
    local name=$1 other=${4:-cutadapt}
    paste <(awk 'NR % 4 == 1 { h = $0 } NR % 4 == 2 { s = $0 } NR % 4 == 0 { print h "\t" s "\t" $0 }' "$2") \
          <(awk 'NR % 4 == 1 { h = $0 } NR % 4 == 2 { s = $0 } NR % 4 == 0 { print h "\t" s "\t" $0 }' "$3") |
        awk -F'\t' -v n="$name" -v other="$other" '
            $1 != $4 { names++ }
            $1 == $4 && $2 == $5 && $3 == $6 { same++; next }
            { diff++; k["seqmatch " length($2) " / " other " " length($5)]++ }
            END { printf "%-44s same %6d  differ %5d%s\n", n, same, diff, names ? "  (records out of step)" : "";
                  m = 0; for (x in k) if (m++ < 6) printf "    %6d reads: %s bases kept\n", k[x], x }'
    local a b
    a=$(wc -l < "$2"); b=$(wc -l < "$3")
    [ "$a" = "$b" ] || echo "    records written: seqmatch $((a / 4)), $other $((b / 4))"
}
single() { # NAME "seqmatch options" "cutadapt options"
    local name=$1 sm_opts=$2 ca_opts=$3
    # shellcheck disable=SC2086
    "$SM" trim -t "$T" $sm_opts -o sm.fq "$R1"
    # shellcheck disable=SC2086
    cutadapt -j "$T" $ca_opts -o ca.fq "$R1" > ca.log 2>&1
    compare "$name" sm.fq ca.fq
}
echo "## same reads, same cut (mate 1 as single reads)"
single "A  -a (exact, -O 3)" "-a $AD" "-a $AD -e 0 --no-indels -O 3"
single "B  -a --min-overlap 5 | -O 5" "-a $AD --min-overlap 5" "-a $AD -e 0 --no-indels -O 5"
single "C  -a SEQ\$ (anchored 3')" "-a $AD\$" "-a $AD\$ -e 0 --no-indels"
single "D  -g (exact, -O 3)" "-g $AD" "-g $AD -e 0 --no-indels -O 3"
single "E  -g GATC (many hits per read)" "-g GATC" "-g GATC -e 0 --no-indels -O 3"
single "F  -a two adapters" "-a $AD -a CTGTCTCTTATA" "-a $AD -a CTGTCTCTTATA -e 0 --no-indels -O 3"
single "G  -a GATC...ADAPTER (linked)" "-a GATC...$AD" "-a GATC...$AD -e 0 --no-indels -O 3"
single "H  -a ^ACGT...ADAPTER\$ (linked, anchored)" "-a ^ACGT...$AD\$" "-a ^ACGT...$AD\$ -e 0 --no-indels -O 3"
single "I  -g ACGT...ADAPTER (linked, both required)" "-g ACGT...$AD" "-g ACGT...$AD -e 0 --no-indels -O 3"
single "J  -a --minimum-length 100 | -m 100" "-a $AD --minimum-length 100" "-a $AD -e 0 --no-indels -O 3 -m 100"
single "J2 -g GATC --discard-untrimmed" "-g GATC --discard-untrimmed" "-g GATC -e 0 --no-indels -O 3 --discard-untrimmed"
single "J3 -a --discard-trimmed" "-a $AD --discard-trimmed" "-a $AD -e 0 --no-indels -O 3 --discard-trimmed"
single "K  -a -m 1 | -e 1 (rate 1/13 in partials)" "-a $AD -m 1" "-a $AD -e 1 --no-indels -O 3"
single "L  -a -m 1 --min-overlap 13 | -e 1 -O 13" "-a $AD -m 1 --min-overlap 13" "-a $AD -e 1 --no-indels -O 13"
single "M  -a -m 1 | cutadapt defaults (-e 0.1, indels)" "-a $AD -m 1" "-a $AD"
# -k (edits) with partial adapters. cutadapt turns a count into a rate of the adapter's length
# and allows floor(L x rate) errors in a part of L bases: the same as seqmatch's one edit in
# every part only where that floor is 1 from --min-overlap to the whole adapter (O, Q).
single "N  -a -k 1 | -e 1 -O 3 (indels; rate 1/13 in partials)" "-a $AD -k 1" "-a $AD -e 1 -O 3"
single "O  -a AGATCGG -k 1 --min-overlap 4 | -e 0.25 -O 4" "-a AGATCGG -k 1 --min-overlap 4" "-a AGATCGG -e 0.25 -O 4"
single "Q  -g TCGGAAGAG -k 1 --min-overlap 5 | -e 0.2 -O 5" "-g TCGGAAGAG -k 1 --min-overlap 5" "-g TCGGAAGAG -e 0.2 -O 5"
echo "## pairs (-1/-2 | -a -A), mates in step, a pair dropped when either mate is shorter than 122"
"$SM" trim -t "$T" -a "$AD" -A "$AD" --minimum-length 122 -1 "$R1" -2 "$R2" -o sm_#.fq
cutadapt -j "$T" -a "$AD" -A "$AD" -e 0 --no-indels -O 3 -m 122 -o ca_1.fq -p ca_2.fq "$R1" "$R2" > ca.log 2>&1
compare "P1 pairs, mate 1, --minimum-length 122" sm_1.fq ca_1.fq
compare "P2 pairs, mate 2" sm_2.fq ca_2.fq
"$SM" trim -t "$T" -a "$AD" -G GATC -1 "$R1" -2 "$R2" -o sm_#.fq
cutadapt -j "$T" -a "$AD" -G GATC -e 0 --no-indels -O 3 -o ca_1.fq -p ca_2.fq "$R1" "$R2" > ca.log 2>&1
compare "P3 pairs -a ADAPTER -G GATC, mate 1" sm_1.fq ca_1.fq
compare "P4 pairs -a ADAPTER -G GATC, mate 2" sm_2.fq ca_2.fq
"$SM" trim -t "$T" -a "$AD" --discard-untrimmed -1 "$R1" -2 "$R2" -o sm_#.fq
cutadapt -j "$T" -a "$AD" -e 0 --no-indels -O 3 --discard-untrimmed -o ca_1.fq -p ca_2.fq "$R1" "$R2" > ca.log 2>&1
compare "P5 pairs -a ADAPTER --discard-untrimmed, mate 1" sm_1.fq ca_1.fq
compare "P6 pairs -a ADAPTER --discard-untrimmed, mate 2" sm_2.fq ca_2.fq

echo "## demux --trim | cutadapt -g ^file: (which trims): every file compared"
zcat "$R1" > r1.fq
awk 'NR % 800 == 2 { print substr($0, 1, 8) }' r1.fq | sort -u | awk '{ printf ">bc%d\n%s\n", NR, $0 }' > barcodes.fa
rm -rf sm_dm ca_dm && mkdir ca_dm
"$SM" demux -t "$T" -p barcodes.fa --trim -o sm_dm r1.fq 2> /dev/null
cutadapt -j "$T" -g ^file:barcodes.fa -e 0 --no-indels -o "ca_dm/{name}.fastq" r1.fq > /dev/null 2>&1
mv ca_dm/unknown.fastq ca_dm/unassigned.fastq
same=0 differ=0
for f in sm_dm/*.fastq; do if cmp -s "$f" "ca_dm/$(basename "$f")"; then same=$((same + 1)); else differ=$((differ + 1)); fi; done
echo "X  demux --trim, $(grep -c '>' barcodes.fa) 8-mer barcodes, exact: files the same $same, differing $differ"

if command -v bbduk.sh > /dev/null; then
    echo "## BBDuk ktrim=r (k=13, mink=3: adapter k-mers, shorter ones at the read's end)"
    "$SM" trim -t "$T" -a "$AD" -o sm.fq r1.fq
    bbduk.sh in=r1.fq out=bb.fq literal="$AD" ktrim=r k=13 mink=3 hdist=0 rcomp=f ordered=t threads="$T" 2> /dev/null
    compare "Y  -a | bbduk ktrim=r k=13 mink=3 hdist=0" sm.fq bb.fq bbduk
    # what BBDuk alone cuts off: a prefix of the adapter, a suffix of it, or another part
    paste <(awk 'NR % 4 == 2' r1.fq) <(awk 'NR % 4 == 2' sm.fq) <(awk 'NR % 4 == 2' bb.fq) |
        awk -F'\t' -v A="$AD" '$2 != $3 { t = substr($1, length($3) + 1); n = length(t)
            c[substr(A, length(A) - n + 1) == t ? "a suffix of the adapter" : substr(A, 1, n) == t ? "a prefix" : "other"]++ }
            END { for (x in c) printf "    %6d reads: bbduk cut %s off the read end\n", c[x], x }'
fi

[ "${TIMING:-1}" = 0 ] && exit 0
# Timing: wall seconds of each command, RUNS times, alternating seqmatch and cutadapt, both
# on the cores CORES (taskset) with THREADS threads (cutadapt -j); medians.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# "wall cpu": seconds elapsed, and user + system seconds of the command and its children
wall() { /usr/bin/time -f '%e %U %S' -o time.out "$@" > /dev/null 2>&1; awk '{ print $1, $2 + $3 }' time.out; }
timing() { # NAME, then the seqmatch command, "--", the cutadapt command
    local name=$1; shift
    local sm_cmd=() ca_cmd=()
    while [ "$1" != "--" ]; do sm_cmd+=("$1"); shift; done; shift
    ca_cmd=("$@")
    : > sm.t; : > ca.t
    for _ in $(seq "$RUNS"); do
        wall taskset -c "$CORES" "${sm_cmd[@]}" >> sm.t
        wall taskset -c "$CORES" "${ca_cmd[@]}" >> ca.t
    done
    local s c sc cc
    s=$(cut -d' ' -f1 sm.t | median); c=$(cut -d' ' -f1 ca.t | median)
    sc=$(cut -d' ' -f2 sm.t | median); cc=$(cut -d' ' -f2 ca.t | median)
    printf '%-42s wall: seqmatch %6.2f s, cutadapt %6.2f s, %4.1fx; CPU: %6.2f s, %6.2f s, %4.1fx\n' "$name" \
        "$s" "$c" "$(echo "$c / $s" | bc -l)" "$sc" "$cc" "$(echo "$cc / $sc" | bc -l)"
    echo "    runs (wall): seqmatch $(cut -d' ' -f1 sm.t | tr '\n' ' ')| cutadapt $(cut -d' ' -f1 ca.t | tr '\n' ' ')"
}
# The input: the two files' reads REPEAT times (default 4: 401,600 reads, 110 MB), gzip -1, so
# that the start of either tool is not the measure; pairs: each file REPEAT times.
REPEAT=${REPEAT:-4}
for _ in $(seq "$REPEAT"); do zcat "$R1" "$R2"; done | gzip -1 > big.fq.gz
for _ in $(seq "$REPEAT"); do zcat "$R1"; done | gzip -1 > big_1.fq.gz
for _ in $(seq "$REPEAT"); do zcat "$R2"; done | gzip -1 > big_2.fq.gz
echo "## time: $(zcat big.fq.gz | awk 'END { print NR / 4 }') reads (pairs: half as many); median of $RUNS" \
    "alternating runs; taskset -c $CORES; $T threads each; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
timing "-a, gz in, plain out" "$SM" trim -t "$T" -a "$AD" -o sm.fq big.fq.gz -- \
    cutadapt -j "$T" -a "$AD" -e 0 --no-indels -O 3 -o ca.fq big.fq.gz
timing "-a, gz in, gz out" "$SM" trim -t "$T" -a "$AD" -o sm.fq.gz big.fq.gz -- \
    cutadapt -j "$T" -a "$AD" -e 0 --no-indels -O 3 -o ca.fq.gz big.fq.gz
timing "-a -m 1 | -e 1, gz in, plain out" "$SM" trim -t "$T" -a "$AD" -m 1 -o sm.fq big.fq.gz -- \
    cutadapt -j "$T" -a "$AD" -e 1 --no-indels -O 3 -o ca.fq big.fq.gz
timing "-a -m 1 | cutadapt defaults, plain out" "$SM" trim -t "$T" -a "$AD" -m 1 -o sm.fq big.fq.gz -- \
    cutadapt -j "$T" -a "$AD" -o ca.fq big.fq.gz
timing "pairs -a -A, gz in, gz out" "$SM" trim -t "$T" -a "$AD" -A "$AD" -1 big_1.fq.gz -2 big_2.fq.gz \
    -o sm_#.fq.gz -- cutadapt -j "$T" -a "$AD" -A "$AD" -e 0 --no-indels -O 3 -o ca_1.fq.gz -p ca_2.fq.gz \
    big_1.fq.gz big_2.fq.gz
if command -v bbduk.sh > /dev/null; then
    : > sm.t; : > bb.t
    for _ in $(seq "$RUNS"); do
        wall taskset -c "$CORES" "$SM" trim -t "$T" -a "$AD" -o sm.fq big.fq.gz >> sm.t
        wall taskset -c "$CORES" bbduk.sh in=big.fq.gz out=bb.fq literal="$AD" ktrim=r k=13 mink=3 hdist=0 rcomp=f \
            ordered=t threads="$T" >> bb.t
    done
    printf '%-42s wall: seqmatch %6.2f s, bbduk    %6.2f s, %4.1fx; CPU: %6.2f s, %6.2f s, %4.1fx\n' \
        "-a | bbduk ktrim=r, gz in, plain out" "$(cut -d' ' -f1 sm.t | median)" "$(cut -d' ' -f1 bb.t | median)" \
        "$(echo "$(cut -d' ' -f1 bb.t | median) / $(cut -d' ' -f1 sm.t | median)" | bc -l)" \
        "$(cut -d' ' -f2 sm.t | median)" "$(cut -d' ' -f2 bb.t | median)" \
        "$(echo "$(cut -d' ' -f2 bb.t | median) / $(cut -d' ' -f2 sm.t | median)" | bc -l)"
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
