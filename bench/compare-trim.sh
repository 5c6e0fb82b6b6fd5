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

# compare NAME: sm.fq against ca.fq (and mate 2 when given)
compare() {
    local name=$1
    paste <(awk 'NR % 4 == 1 { h = $0 } NR % 4 == 2 { s = $0 } NR % 4 == 0 { print h "\t" s "\t" $0 }' "$2") \
          <(awk 'NR % 4 == 1 { h = $0 } NR % 4 == 2 { s = $0 } NR % 4 == 0 { print h "\t" s "\t" $0 }' "$3") |
        awk -F'\t' -v n="$name" '
            $1 != $4 { names++ }
            $1 == $4 && $2 == $5 && $3 == $6 { same++; next }
            { diff++; k["seqmatch " length($2) " / cutadapt " length($5)]++ }
            END { printf "%-44s same %6d  differ %5d%s\n", n, same, diff, names ? "  (records out of step)" : "";
                  m = 0; for (x in k) if (m++ < 6) printf "    %6d reads: %s bases kept\n", k[x], x }'
    local a b
    a=$(wc -l < "$2"); b=$(wc -l < "$3")
    [ "$a" = "$b" ] || echo "    records written: seqmatch $((a / 4)), cutadapt $((b / 4))"
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
single "K  -a -m 1 | -e 1 (rate 1/13 in partials)" "-a $AD -m 1" "-a $AD -e 1 --no-indels -O 3"
single "L  -a -m 1 --min-overlap 13 | -e 1 -O 13" "-a $AD -m 1 --min-overlap 13" "-a $AD -e 1 --no-indels -O 13"
single "M  -a -m 1 | cutadapt defaults (-e 0.1, indels)" "-a $AD -m 1" "-a $AD"
echo "## pairs (-1/-2 | -a -A), mates in step, a pair dropped when either mate is shorter than 122"
"$SM" trim -t "$T" -a "$AD" --minimum-length 122 -1 "$R1" -2 "$R2" -o sm_#.fq
cutadapt -j "$T" -a "$AD" -A "$AD" -e 0 --no-indels -O 3 -m 122 -o ca_1.fq -p ca_2.fq "$R1" "$R2" > ca.log 2>&1
compare "P1 pairs, mate 1, --minimum-length 122" sm_1.fq ca_1.fq
compare "P2 pairs, mate 2" sm_2.fq ca_2.fq

[ "${TIMING:-1}" = 0 ] && exit 0
# Timing: wall seconds of each command, RUNS times, alternating seqmatch and cutadapt, both
# on the cores CORES (taskset) with THREADS threads (cutadapt -j); medians.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wall() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
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
    local s c
    s=$(median < sm.t); c=$(median < ca.t)
    printf '%-40s seqmatch %6.3f s  cutadapt %6.3f s  ratio %5.1f  (runs: seqmatch %s; cutadapt %s)\n' "$name" "$s" "$c" \
        "$(echo "$c / $s" | bc -l)" "$(tr '\n' ' ' < sm.t | sed 's/ $//')" "$(tr '\n' ' ' < ca.t | sed 's/ $//')"
}
echo "## time (median of $RUNS alternating runs; taskset -c $CORES; $T threads each)"
timing "-a, gz in, plain out" "$SM" trim -t "$T" -a "$AD" -o sm.fq "$R1" -- \
    cutadapt -j "$T" -a "$AD" -e 0 --no-indels -O 3 -o ca.fq "$R1"
timing "-a, gz in, gz out" "$SM" trim -t "$T" -a "$AD" -o sm.fq.gz "$R1" -- \
    cutadapt -j "$T" -a "$AD" -e 0 --no-indels -O 3 -o ca.fq.gz "$R1"
timing "-a -m 1 | -e 1, gz in, plain out" "$SM" trim -t "$T" -a "$AD" -m 1 -o sm.fq "$R1" -- \
    cutadapt -j "$T" -a "$AD" -e 1 --no-indels -O 3 -o ca.fq "$R1"
timing "-a | cutadapt defaults, plain out" "$SM" trim -t "$T" -a "$AD" -m 1 -o sm.fq "$R1" -- \
    cutadapt -j "$T" -a "$AD" -o ca.fq "$R1"
timing "pairs -a | -a -A, gz in, gz out" "$SM" trim -t "$T" -a "$AD" -1 "$R1" -2 "$R2" -o sm_#.fq.gz -- \
    cutadapt -j "$T" -a "$AD" -A "$AD" -e 0 --no-indels -O 3 -o ca_1.fq.gz -p ca_2.fq.gz "$R1" "$R2"
