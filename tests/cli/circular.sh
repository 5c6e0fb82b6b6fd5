#!/usr/bin/env bash
# --circular: hits that run over a record's end (start < record length, end
# past it), exact, -m and -k, both strands, hits and counts, threads; worked
# out by hand on tiny records, and compared with seqkit locate -c where it is
# installed.
source "$(dirname "$0")/testlib.bash"
T=$'\t'

# seqkit's example: AAAA at the end and ACG at the start make AAAAACG over
# the end of a 16-base record, [12, 19); its reverse complement CGTTTTT on '-'.
printf '>c\nACGGGGGGGGGTAAAA\n' >"$TMP/c.fa"
run search -e AAAAACG -e CGTTTTT --circular --no-header "$TMP/c.fa"
check_output_text "exact over the end, both strands" "c${T}AAAAACG${T}+${T}12${T}19${T}0${T}AAAAACG
c${T}CGTTTTT${T}-${T}12${T}19${T}0${T}AAAAACG
"
check_status "exact over the end: status" 0
run search -e AAAAACG -e CGTTTTT -c --format bed "$TMP/c.fa"
check_output_text "-c, bed" "c${T}12${T}19${T}AAAAACG${T}1000${T}+
c${T}12${T}19${T}CGTTTTT${T}1000${T}-
"
run search -e AAAAACG "$TMP/c.fa"
check_status "linear: no hit over the end" 1

# A hit inside the record is reported once, as without --circular; one that
# starts in the copied head (start >= 16) is not reported again.
run search -e GGGTA -e ACGG --circular --strand + --no-header "$TMP/c.fa"
check_output_text "inside hits once" "c${T}ACGG${T}+${T}0${T}4${T}0${T}ACGG
c${T}GGGTA${T}+${T}8${T}13${T}0${T}GGGTA
"

# -m: one mismatch in the part after the end (AAAAACC against AAAAACG).
run search -e AAAAACC -m 1 --circular --strand + --no-header "$TMP/c.fa"
check_output_text "-m 1 over the end" "c${T}AAAAACC${T}+${T}12${T}19${T}1${T}AAAAACG
"
# -k: AAAACCG (one base less than AAAAACG, a substitution) with one edit:
# the best end of the run, its start the largest with that distance.
run search -e AAAAACGG -k 1 --circular --strand + --no-header "$TMP/c.fa"
check_output_text "-k 1 over the end" "c${T}AAAAACGG${T}+${T}12${T}20${T}0${T}AAAAACGG
"
run search -e AAAATACGG -k 1 --circular --strand + --no-header "$TMP/c.fa"
check_output_text "-k 1 deletion over the end" "c${T}AAAATACGG${T}+${T}12${T}20${T}1${T}AAAAACGG
"

# A record shorter than the pattern holds no hit; a one-base record its own
# base; the end of one record never joins the next.
printf '>a\nACG\n>b\nT\n>c\nACGGGGGGGGGTAAAA\n>d\nCCCCC\n' >"$TMP/multi.fa"
run search -e ACGTACG -e T -e AAAAACG -e AACC --strand + --circular --no-header "$TMP/multi.fa"
check_output_text "several records" "b${T}T${T}+${T}0${T}1${T}0${T}T
c${T}T${T}+${T}11${T}12${T}0${T}T
c${T}AAAAACG${T}+${T}12${T}19${T}0${T}AAAAACG
"

# Counts equal the hits printed, on 1 and 3 threads, small chunks. p1 holds
# GGATCC + TGG over its end, p2 GGATCCAGT.
{
    printf '>p1\nATCCTGGACGT'
    for _ in $(seq 1 40); do printf 'ACGTTGCAAGGCTTACGGATCCAGT'; done
    printf 'TTGG\n>p2\nCCAGTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTGGATC\n'
} >"$TMP/plasmid.fa"
awk '/^>/ { name = substr($1, 2); next } { print name "\t" length($0) }' "$TMP/plasmid.fa" >"$TMP/lengths"
for args in "-e GGATCC" "-e GGATCCAG -m 2" "-e GGATCCAG -k 2" "-e GGATCCAG -k 2 --report ends" \
            "-e GGATCC --pam NGG -m 1"; do
    for t in 1 3; do
        # shellcheck disable=SC2086
        run search $args --circular -t $t --chunk-size 7 --no-header "$TMP/plasmid.fa"
        hits=$(wc -l <"$TMP/out")
        wraps=$(awk -F'\t' 'NR == FNR { len[$1] = $2; next } $5 > len[$1]' "$TMP/lengths" "$TMP/out" | wc -l)
        # shellcheck disable=SC2086
        run search $args --circular -t $t --chunk-size 7 --format count "$TMP/plasmid.fa"
        total=$(awk -F'\t' '$1 == "total" {print $2}' "$TMP/out")
        if [ "$hits" -gt 0 ] && [ "$wraps" -gt 0 ] && [ "$total" = "$hits" ]; then pass
        else fail "counts '$args' -t $t: $hits hits ($wraps over an end), count says $total"; fi
    done
done

# --circular with --overlap-free: refused, never ignored (overlap-free chunks
# read nothing past their end, a circular record's hits do).
run search -e GATCCAC -e GGATCC --circular --overlap-free -t 2 --chunk-size 5 --no-header "$TMP/plasmid.fa"
check_status "--overlap-free with --circular" 2
check_stderr "--overlap-free with --circular" "cannot be used with --circular"

# The same hits as seqkit locate -c (BED: start and end 0-based, end past
# the record's length for hits over its end), exact and with mismatches.
if command -v seqkit >/dev/null; then
    awk 'BEGIN { srand(11); for (r = 0; r < 6; r++) { n = 50 + int(rand() * 400); s = "";
         for (i = 0; i < n; i++) s = s substr("ACGT", 1 + int(rand() * 4), 1);
         print ">r" r; print s } }' >"$TMP/random.fa"
    # every record's last 5 and first 5 bases as a pattern, and a few inside
    awk '!/^>/ { print ">w" NR; print substr($0, length($0) - 4) substr($0, 1, 5);
                 print ">i" NR; print substr($0, 20, 8) }' "$TMP/random.fa" >"$TMP/sites.fa"
    awk '/^>/ { name = substr($1, 2); next } { print name "\t" length($0) }' "$TMP/random.fa" >"$TMP/lengths"
    for m in 0 1 2; do
        # seqkit 2.3 writes some '-' hits over the end with a negative start:
        # the same site one turn earlier, moved on by the record's length here
        seqkit locate -c -i -m "$m" -f "$TMP/sites.fa" --bed "$TMP/random.fa" 2>/dev/null | cut -f1-4,6 |
            awk -F'\t' -v OFS='\t' 'NR == FNR { len[$1] = $2; next }
                 $2 < 0 { $2 += len[$1]; $3 += len[$1] } { print }' "$TMP/lengths" - | sort >"$TMP/seqkit.bed"
        run search -p "$TMP/sites.fa" -m "$m" --circular --format bed "$TMP/random.fa"
        cut -f1-4,6 "$TMP/out" | sort >"$TMP/ours.bed"
        if [ -s "$TMP/ours.bed" ] && cmp -s "$TMP/seqkit.bed" "$TMP/ours.bed"; then pass
        else fail "seqkit locate -c -m $m: $(wc -l <"$TMP/seqkit.bed") lines, ours $(wc -l <"$TMP/ours.bed")"; fi
    done
else
    echo "circular.sh: seqkit not installed: the comparison with seqkit locate -c is skipped"
fi

# Records shorter than a hit: a hit wraps as many turns as it takes (the
# record AC read round: ACACA...; only one turn past the end was read).
printf '>s\nAC\n>t\nT\n>u\nAAA\n' >"$TMP/short.fa"
run search -e CAC --circular --strand + --no-header "$TMP/short.fa"
check_output_text "CAC round the record AC" "s${T}CAC${T}+${T}1${T}4${T}0${T}CAC
"
run search -e TT --circular --strand + --no-header "$TMP/short.fa"
check_output_text "TT round the record T" "t${T}TT${T}+${T}0${T}2${T}0${T}TT
"
run search -e AAAAA --circular --strand + --no-header --format bed "$TMP/short.fa"
check_output_text "AAAAA round the record AAA" "u${T}0${T}5${T}AAAAA${T}1000${T}+
u${T}1${T}6${T}AAAAA${T}1000${T}+
u${T}2${T}7${T}AAAAA${T}1000${T}+
"
run search -e GTGTGTGTG -k 1 --circular --strand - --report ends --no-header "$TMP/short.fa"
check_output_text "-k 1 --report ends round the record AC" "s${T}GTGTGTGTG${T}-${T}0${T}8${T}1${T}ACACACAC
s${T}GTGTGTGTG${T}-${T}1${T}9${T}1${T}CACACACA
s${T}GTGTGTGTG${T}-${T}1${T}10${T}0${T}CACACACAC
"

# --help and the man page teach it.
run search --help
if grep -qF -- '-c, --circular' "$TMP/out" && grep -qF 'over a' "$TMP/out"; then pass; else fail "--help: --circular"; fi
if grep -qF -- '\-\-circular' ../man/seqmatch.1; then pass; else fail "man page: --circular"; fi

finish
