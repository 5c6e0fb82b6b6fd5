#!/usr/bin/env bash
# seqmatch filter --min-overlap beside cutadapt on real reads: which reads each finds an
# adapter in (the TruSeq adapter AGATCGGAAGAGC, forward strand, as cutadapt searches), read
# by read, with the reads that differ counted by the reason.
#
# usage: bench/compare-ends.sh SEQMATCH READS_DIR
#   READS_DIR holds short_reads_1.fastq.gz and short_reads_2.fastq.gz (Debian's unicycler-data:
#   50,200 pairs of 125-base reads; bench/fetch-data.sh puts them in bench/data/reads); both
#   files are searched as single reads (100,400 reads).
# environment: WORK (scratch folder; default a temporary one), THREADS (2), ADAPTER.
# Cases (seqmatch | cutadapt), each "both / seqmatch only / cutadapt only" reads:
#   A  filter --min-overlap 3 --strand +          | -b ADAPTER -O 3 -e 0 --no-indels
#      the same semantics: an adapter anywhere, its suffix at the read start, its prefix at
#      the read end, at least 3 bases inside, exact
#   B  the same                                   | -a ADAPTER -O 3 -e 0 --no-indels
#      cutadapt's 3' adapter: no partial match at the read start
#   C  filter --min-overlap 3 -m 1 --strand +     | -b ADAPTER -O 3 -e 1 --no-indels
#      cutadapt turns -e 1 into the rate 1/13: a partial match of L bases gets floor(L/13)
#      errors, none below 13; seqmatch allows 1 mismatch in any part of 3 or more (N > k)
#   D  filter -m 1 --strand + (no --min-overlap)  | -a ADAPTER (defaults: -O 3, -e 0.1, indels)
#      the issue's comparison: partial matches and indels missing on seqmatch's side
#   E  filter --min-overlap 3 -m 1 --strand +     | -a ADAPTER (defaults)
#   F  the reads of filter --min-overlap 3 (exact) and of filter --min-overlap 10 -m 1, together
#                                                 | -b ADAPTER -O 3 -e 0.1 --no-indels
#      cutadapt's rate of 0.1 in seqmatch's terms: no error in a part of 3 to 9 bases, one
#      in a part of 10 or more (the whole 13-base adapter included)
#   G  the same                                   | -a ADAPTER (defaults: -e 0.1, indels)
set -euo pipefail
SM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
READS=${2:?usage: compare-ends.sh SEQMATCH READS_DIR}
T=${THREADS:-2}
AD=${ADAPTER:-AGATCGGAAGAGC}
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
cd "$WORK"
zcat "$READS/short_reads_1.fastq.gz" "$READS/short_reads_2.fastq.gz" |
    awk 'NR % 4 == 1 { $0 = "@r" (NR + 3) / 4 } { print }' > reads.fq # unique names (mates share theirs)
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores; $($SM --version | head -1); cutadapt $(cutadapt --version)"
echo "# $(awk 'END { print NR / 4 }' reads.fq) reads; adapter $AD; forward strand"
names() { awk 'NR % 4 == 1 { print substr($1, 2) }' "$1" | sort; }
sm() { "$SM" filter -t "$T" -e "$AD" --strand + "$@" reads.fq -o sm.fq; names sm.fq > sm.names; }
ca() {
    cutadapt -j "$T" "$@" --action=none --discard-untrimmed --info-file ca.info -o ca.fq reads.fq > /dev/null 2>&1
    names ca.fq > ca.names
}
# compare CASE: counts, then the differing reads by reason
compare() {
    local both so co
    both=$(comm -12 sm.names ca.names | wc -l)
    so=$(comm -23 sm.names ca.names | wc -l)
    co=$(comm -13 sm.names ca.names | wc -l)
    printf '%s\tboth %d\tseqmatch only %d\tcutadapt only %d\n' "$1" "$both" "$so" "$co"
    # seqmatch-only reads: where seqmatch's hit lies (start, end, read length, errors)
    if [ "$so" -gt 0 ]; then
        comm -23 sm.names ca.names > only.names
        awk 'NR == FNR { want[$1] = 1; next } FNR % 4 == 1 { keep = (substr($1, 2) in want) } keep' only.names reads.fq > only.fq
        "$SM" search -e "$AD" --strand + --no-header "${SMOPT[@]}" --max-hits-per-record 1 only.fq |
            awk -F'\t' '{ n = $5 - $4; where = $4 == 0 ? "at the read start" : "at the read end or inside";
                         k = n < 13 ? "partial " n " bases" : "whole adapter"; c[where ", " k ", " $6 " mismatches"]++ }
                        END { for (x in c) printf "\tseqmatch only: %d %s\n", c[x], x }' | sort -t' ' -k3 -nr | head -8
    fi
    # cutadapt-only reads: cutadapt's match (errors, matched length, where) from its info file
    if [ "$co" -gt 0 ]; then
        comm -13 sm.names ca.names > only.names
        awk -F'\t' 'NR == FNR { want[$1] = 1; next } ($1 in want) && $2 != -1 {
                        len = $4 - $3; where = $3 == 0 ? "at the read start" : $4 == length($5 $6 $7) ? "at the read end" : "inside";
                        alen = length($6); c[where ", " alen " read bases matched, " $2 " errors"]++ }
                    END { for (x in c) printf "\tcutadapt only: %d %s\n", c[x], x }' only.names ca.info |
            sort -t' ' -k3 -nr | head -8
    fi
}
SMOPT=(--min-overlap 3); sm --min-overlap 3;        ca -b "$AD" -O 3 -e 0 --no-indels; compare "A exact, -b"
SMOPT=(--min-overlap 3); sm --min-overlap 3;        ca -a "$AD" -O 3 -e 0 --no-indels; compare "B exact, -a"
SMOPT=(--min-overlap 3 -m 1); sm --min-overlap 3 -m 1; ca -b "$AD" -O 3 -e 1 --no-indels; compare "C -m 1, -b -e 1"
SMOPT=(-m 1); sm -m 1;                              ca -a "$AD";                           compare "D -m 1 | -a defaults"
SMOPT=(--min-overlap 3 -m 1); sm --min-overlap 3 -m 1; ca -a "$AD";                        compare "E --min-overlap 3 -m 1 | -a defaults"
# F, G: two seqmatch runs, their reads together
sm --min-overlap 3; cp sm.names exact.names; sm --min-overlap 10 -m 1; sort -u -o sm.names sm.names exact.names
SMOPT=(--min-overlap 3 -m 1)
ca -b "$AD" -O 3 -e 0.1 --no-indels; compare "F rate 0.1 as two runs, -b --no-indels"
ca -a "$AD";                          compare "G rate 0.1 as two runs | -a defaults"
