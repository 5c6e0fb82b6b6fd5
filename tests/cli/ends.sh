#!/usr/bin/env bash
# --min-overlap (partial matches at record ends) and the hit limits
# (--max-hits-per-pattern, --max-hits-per-record, --fewest-errors), worked
# out by hand on tiny records: both strands, -m, formats, filter and demux,
# threads and chunk sizes, and the refusals.
source "$(dirname "$0")/testlib.bash"
T=$'\t'
AD=AGATCGGAAGAGC # TruSeq; its reverse complement is GCTCTTCCGATCT

# r1 ends in the adapter's first 5 bases; r2 starts with the last 5 of its
# reverse complement (and GATC is the adapter's GAGC with one mismatch); r3
# ends in AGTTC (one mismatch against AGATC); r4 is shorter than the adapter
# and lies inside it (GGAAG).
printf '@r1\nTTTTTTTTTTAGATC\n+\nIIIIIIIIIIIIIII\n@r2\nGATCTTTTTTTTTTT\n+\nIIIIIIIIIIIIIII\n@r3\nTTTTTTTTTTAGTTC\n+\nIIIIIIIIIIIIIII\n@r4\nGGAAG\n+\nIIIII\n' >"$TMP/r.fq"

run search -e $AD --no-header "$TMP/r.fq"
check_status "no partial matches without --min-overlap" 1
run search -e $AD --min-overlap 3 --no-header "$TMP/r.fq"
check_output_text "exact, both strands" "r1${T}$AD${T}+${T}10${T}15${T}0${T}AGATC
r2${T}$AD${T}-${T}0${T}5${T}0${T}GATCT
r4${T}$AD${T}+${T}0${T}5${T}0${T}GGAAG
"
check_status "exact: status" 0
run search -e $AD --min-overlap 6 --no-header "$TMP/r.fq"
check_status "N above the bases inside: none" 1
run search -e $AD --min-overlap 3 -m 1 --strand + --no-header "$TMP/r.fq"
check_output_text "-m 1, forward" "r1${T}$AD${T}+${T}10${T}15${T}0${T}AGATC
r2${T}$AD${T}+${T}0${T}4${T}1${T}GATC
r3${T}$AD${T}+${T}10${T}15${T}1${T}AGTTC
r4${T}$AD${T}+${T}0${T}5${T}0${T}GGAAG
"
run search -e $AD --min-overlap 3 --format bed "$TMP/r.fq"
check_output_text "bed" "r1${T}10${T}15${T}$AD${T}1000${T}+
r2${T}0${T}5${T}$AD${T}1000${T}-
r4${T}0${T}5${T}$AD${T}1000${T}+
"
run search -e $AD --min-overlap 3 --format count "$TMP/r.fq"
check_output_text "count" "$AD${T}3
total${T}3
"
# the same at every thread count and chunk size
run search -e $AD --min-overlap 3 -m 1 --no-header -t 1 "$TMP/r.fq"
cp "$TMP/out" "$TMP/one"
run search -e $AD --min-overlap 3 -m 1 --no-header -t 3 --chunk-size 2 "$TMP/r.fq"
check_output "threads and chunks" "$TMP/one"

# filter keeps the reads with a partial adapter; demux names them
run filter -e $AD --min-overlap 5 --strand + "$TMP/r.fq"
check_output_text "filter" "@r1
TTTTTTTTTTAGATC
+
IIIIIIIIIIIIIII
@r4
GGAAG
+
IIIII
"
run demux -e $AD --min-overlap 5 --anchor any -o "$TMP/dm" "$TMP/r.fq"
check_status "demux: status" 0
if [ "$(grep -c '^@' "$TMP/dm/$AD.fastq")" = 2 ]; then pass; else fail "demux: 2 reads to the adapter's file"; fi

run demux -e $AD --min-overlap 5 -o "$TMP/dm2" "$TMP/r.fq"
check_status "demux: the default anchor refused with --min-overlap" 2
check_stderr "demux: the refusal names --anchor any" "--anchor any"

# refusals, one line each
run search -e $AD --min-overlap 3 --circular "$TMP/r.fq"
check_stderr "with --circular" "--circular"
check_status "with --circular: status" 2
run search -e $AD --min-overlap 3 -k 1 --strand + "$TMP/r.fq"
check_status "with -k" 0
run filter -e $AD --min-overlap 3 -k 1 "$TMP/r.fq"
check_status "filter with -k" 0
run demux -e $AD --min-overlap 3 -k 1 --anchor any -o "$TMP/dmk" "$TMP/r.fq"
check_status "demux with -k" 0
run search -e $AD --min-overlap 3 -k 1 --pam NGG "$TMP/r.fq"
check_stderr "-k with a PAM" "PAM"
run search -e $AD --min-overlap 1 -m 1 "$TMP/r.fq"
check_stderr "N at or below -m" "every record end would match"
run search -e $AD --min-overlap 3 --format sam "$TMP/r.fq"
check_stderr "with sam" "--format sam"
run search -e $AD --min-overlap 3 --shard 0/2 -o "$TMP/part" "$TMP/r.fq"
check_stderr "in several processes" "one process"
run search -e $AD --min-overlap x "$TMP/r.fq"
check_status "not a count" 2

# limits: AAAAA holds AA at 0..3 on '+' and TT's nothing; -m 1 AC too
printf '>a\nAAAAA\n>b\nACAAA\n' >"$TMP/a.fa"
run search -e AA -e CA --strand + --max-hits-per-pattern 2 --no-header "$TMP/a.fa"
check_output_text "per pattern" "a${T}AA${T}+${T}0${T}2${T}0${T}AA
a${T}AA${T}+${T}1${T}3${T}0${T}AA
b${T}CA${T}+${T}1${T}3${T}0${T}CA
b${T}AA${T}+${T}2${T}4${T}0${T}AA
b${T}AA${T}+${T}3${T}5${T}0${T}AA
"
run search -e AA -e CA --strand + --max-hits-per-record 1 --no-header "$TMP/a.fa"
check_output_text "per record" "a${T}AA${T}+${T}0${T}2${T}0${T}AA
b${T}CA${T}+${T}1${T}3${T}0${T}CA
"
run search -e AA --strand + -m 1 --fewest-errors --no-header "$TMP/a.fa"
check_output_text "fewest errors" "a${T}AA${T}+${T}0${T}2${T}0${T}AA
a${T}AA${T}+${T}1${T}3${T}0${T}AA
a${T}AA${T}+${T}2${T}4${T}0${T}AA
a${T}AA${T}+${T}3${T}5${T}0${T}AA
b${T}AA${T}+${T}2${T}4${T}0${T}AA
b${T}AA${T}+${T}3${T}5${T}0${T}AA
"
run search -e AA --strand + -m 1 --fewest-errors --max-hits-per-pattern 1 --format count "$TMP/a.fa"
check_output_text "limits counted" "AA${T}2
total${T}2
"
run search -e AA --max-hits-per-pattern 0 "$TMP/a.fa"
check_status "a limit of 0 refused" 2
run filter -e AA --max-hits-per-record 1 "$TMP/a.fa"
check_status "limits are search's" 2

finish
