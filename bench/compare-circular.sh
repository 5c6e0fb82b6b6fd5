#!/usr/bin/env bash
# --circular beside seqkit locate -c on a real multi-record genome: for each
# record, three 20-mers over its end (its last 3, 9, 15 bases with its first
# 17, 11, 5) and three 12-mers from inside; both strands; BED columns 1-4
# and 6 sorted and compared, exact and with mismatches.
#   bench/compare-circular.sh GENOME.fa [SEQMATCH]
# (bench/results/history.md, "Circular records, alignments, Python").
set -euo pipefail
genome=${1:?usage: compare-circular.sh GENOME.fa [SEQMATCH]}
seqmatch=${2:-$(dirname "$0")/../build/seqmatch}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^>/ { if (seq != "") print name "\t" seq; name = substr($1, 2); seq = ""; next } { seq = seq toupper($0) }
     END { if (seq != "") print name "\t" seq }' "$genome" >"$tmp/records"
awk -F'\t' 'BEGIN { srand(7) } { s = $2; n = length(s); r = NR - 1
    for (c = 3; c <= 15; c += 6) print ">wrap" r "_" c "\n" substr(s, n - c + 1) substr(s, 1, 20 - c)
    for (i = 0; i < 3; i++) print ">in" r "_" i "\n" substr(s, 1 + int(rand() * (n - 12)), 12) }' \
    "$tmp/records" >"$tmp/sites.fa"
awk -F'\t' '{ print $1 "\t" length($2) }' "$tmp/records" >"$tmp/lengths"
for m in 0 1 2; do
    start=$(date +%s.%N)
    # seqkit 2.3 writes some '-' hits over the end with a negative start: moved on by the length
    seqkit locate -c -i -m "$m" -j 2 -f "$tmp/sites.fa" --bed "$genome" 2>/dev/null | cut -f1-4,6 |
        awk -F'\t' -v OFS='\t' 'NR == FNR { len[$1] = $2; next } $2 < 0 { $2 += len[$1]; $3 += len[$1] } { print }' \
            "$tmp/lengths" - | sort >"$tmp/seqkit.bed"
    mid=$(date +%s.%N)
    "$seqmatch" search -p "$tmp/sites.fa" -m "$m" -t 2 --circular --format bed "$genome" | cut -f1-4,6 |
        sort >"$tmp/seqmatch.bed"
    end=$(date +%s.%N)
    over=$(awk -F'\t' 'NR == FNR { len[$1] = $2; next } $3 > len[$1]' "$tmp/lengths" "$tmp/seqmatch.bed" | wc -l)
    same=$(cmp -s "$tmp/seqkit.bed" "$tmp/seqmatch.bed" && echo identical || echo DIFFERENT)
    printf -- '-m %s: seqkit %s lines %.2f s, seqmatch %s lines (%s over an end) %.3f s: %s\n' "$m" \
        "$(wc -l <"$tmp/seqkit.bed")" "$(echo "$mid - $start" | bc)" "$(wc -l <"$tmp/seqmatch.bed")" "$over" \
        "$(echo "$end - $mid" | bc)" "$same"
done
