#!/usr/bin/env bash
# seqmatch amplicon beside seqkit amplicon on real genomes: the same products (record, start,
# end, strand, pair, sequence) compared one by one, then the time of both on the same cores.
#
# usage: bench/compare-amplicon.sh SEQMATCH GENOMES_DIR
#   GENOMES_DIR holds *.fa (the real bacterial genomes of bench/fetch-data.sh, 110.6 Mbp).
# environment: WORK (scratch folder; default a temporary one), THREADS (2), CORES (taskset
#   list, default 0,1), RUNS (timed runs of each tool, alternating; default 5), TIMING=0 to
#   skip the timing, COMPARE=0 to skip the comparison, TIMED (the timed cases, PAIRS:ERRORS; default "degenerate.tsv:0
#   plain.tsv:0 plain.tsv:1": seqkit's -m 2 takes minutes a run).
# seqkit amplicon reports one product per record, pair and strand (the first forward site
# with the last reverse site) and has no size window: seqmatch's --longest is that rule, and
# both are compared without a window and with --max-size 5000 applied to both after. seqkit
# 2.3's BED gives '-' products in reverse-strand coordinates: mapped back with the record's
# length before comparing. seqkit -m counts a primer's IUPAC codes as mismatches (its FM
# index takes no degenerate bases), so -m cases use primers without IUPAC codes.
set -euo pipefail
SM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GENOMES=$(cd "${2:?usage: compare-amplicon.sh SEQMATCH GENOMES_DIR}" && pwd)
T=${THREADS:-2}
CORES=${CORES:-0,1}
RUNS=${RUNS:-5}
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
cd "$WORK"
FILES=("$GENOMES"/*.fa)
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $($SM --version | head -1); seqkit $(seqkit version | awk '{print $2}')"
echo "# ${#FILES[@]} files, $(cat "${FILES[@]}" | grep -v '>' | tr -d '\n' | wc -c) bases"

# degenerate primers (exact only), and primers without IUPAC codes (exact, -m 1, -m 2)
printf '515F-806R\tGTGYCAGCMGCCGCGGTAA\tGGACTACNVGGGTWTCTAAT\n341F-785R\tCCTACGGGNGGCWGCAG\tGACTACHVGGGTATCTAATCC\n27F-1492R\tAGAGTTTGATCMTGGCTCAG\tTACGGYTACCTTGTTACGACTT\n' >degenerate.tsv
printf '27F-1492R\tAGAGTTTGATCCTGGCTCAG\tGGTTACCTTGTTACGACTT\n338F-533R\tACTCCTACGGGAGGCAGCAG\tTTACCGCGGCTGCTGGCAC\n515F-806R\tGTGCCAGCAGCCGCGGTAA\tGGACTACCAGGGTATCTAAT\n926F-1392R\tAAACTCAAAGGAATTGACGG\tACGGGCGGTGTGTAC\n' >plain.tsv
seqkit fx2tab -n -i -l "${FILES[@]}" >lengths.tsv

# record start end strand pair sequence, one product a line, sorted; max: the size window
seqmatch_rows() { # TSV file, max
    awk -F'\t' -v max="$2" '!/^#/ && $6 <= max { print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" toupper($9) }' "$1" | sort
}
seqkit_rows() { # BED file, max
    awk -F'\t' -v max="$2" 'NR == FNR { len[$1] = $2; next }
        { s = $2; e = $3; if ($6 == "-") { s = len[$1] - $3; e = len[$1] - $2 }
          if (e - s <= max) print $1 "\t" s "\t" e "\t" $6 "\t" $4 "\t" toupper($7) }' lengths.tsv "$1" | sort
}
compare() { # name seqmatch_tsv seqkit_bed
    for max in 1000000000 5000; do
        seqmatch_rows "$2" $max >a
        seqkit_rows "$3" $max >b
        printf '%-30s %-10s both %4d  seqmatch only %3d  seqkit only %3d\n' "$1" "max=$max" \
            "$(comm -12 a b | wc -l)" "$(comm -23 a b | wc -l)" "$(comm -13 a b | wc -l)"
        comm -3 a b | cut -f1-5 | head -4 | sed 's/^/    /'
    done
}
case_run() { # name pairs errors
    local m=()
    [ "$3" -gt 0 ] && m=(-m "$3")
    "$SM" amplicon -p "$2" "${m[@]}" --longest --max-size 1000000000 --sequence -t "$T" "${FILES[@]}" \
        --no-filename >sm.tsv || [ $? -eq 1 ]
    seqkit amplicon -p "$2" "${m[@]}" --bed -j "$T" "${FILES[@]}" >sk.bed 2>/dev/null
    compare "$1" sm.tsv sk.bed
    # every product of seqkit's rule within 5000 bases is one of the default rule's products
    "$SM" amplicon -p "$2" "${m[@]}" --max-size 5000 --sequence -t "$T" --no-filename "${FILES[@]}" >all.tsv ||
        [ $? -eq 1 ]
    seqmatch_rows all.tsv 5000 >all
    seqmatch_rows sm.tsv 5000 >longest
    printf '    default rule (every pair of sites, <= 5000): %d products; of --longest'"'"'s %d, %d among them\n' \
        "$(wc -l <all)" "$(wc -l <longest)" "$(comm -12 all longest | wc -l)"
}
if [ "${COMPARE:-1}" != 0 ]; then
    case_run "IUPAC primers, exact" degenerate.tsv 0
    case_run "plain primers, exact" plain.tsv 0
    case_run "plain primers, -m 1" plain.tsv 1
    case_run "plain primers, -m 2" plain.tsv 2
fi

[ "${TIMING:-1}" = 0 ] && exit 0
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timed() { # out_file command...: wall seconds, CPU seconds
    /usr/bin/time -f '%e %U %S' -o t.out taskset -c "$CORES" "$@" >/dev/null 2>&1 || true
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' t.out
}
echo "# time: taskset -c $CORES, $RUNS alternating runs, medians of wall / CPU (user + sys) seconds"
for c in ${TIMED:-degenerate.tsv:0 plain.tsv:0 plain.tsv:1}; do
    set -- ${c/:/ }
    m=()
    [ "$2" -gt 0 ] && m=(-m "$2")
    : >sm.times
    : >sk.times
    for _ in $(seq "$RUNS"); do
        timed "$SM" amplicon -p "$1" "${m[@]}" --longest --max-size 1000000000 -t "$T" "${FILES[@]}" >>sm.times
        timed seqkit amplicon -p "$1" "${m[@]}" --bed -j "$T" "${FILES[@]}" >>sk.times
    done
    smw=$(cut -d' ' -f1 sm.times | median); smc=$(cut -d' ' -f2 sm.times | median)
    skw=$(cut -d' ' -f1 sk.times | median); skc=$(cut -d' ' -f2 sk.times | median)
    printf '%-16s -m %s: seqmatch %6.2f / %6.2f s   seqkit %7.2f / %7.2f s   %5.1fx wall %5.1fx CPU\n' "$1" "$2" \
        "$smw" "$smc" "$skw" "$skc" "$(echo "$skw / $smw" | bc -l)" "$(echo "$skc / $smc" | bc -l)"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
