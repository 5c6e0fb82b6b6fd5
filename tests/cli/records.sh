# search --format records (one line per record: name, hits, patterns hit)
# and --anchor start|end, both checked against awk over the TSV hits of the
# same search on real reads; then their messages.
. "$(dirname "$0")/testlib.bash"
READS=data/reads

zcat $READS/r1.fq.gz >"$TMP/r1.fq"
# patterns: 6-mers cut from some reads, named in file order
awk 'NR % 4 == 2 && NR % 400 == 2 { printf ">k%d\n%s\n", ++n, substr($0, 20, 6) }' "$TMP/r1.fq" >"$TMP/k.fa"

run search -p "$TMP/k.fa" --no-header "$TMP/r1.fq"
cp "$TMP/out" "$TMP/hits.tsv"
run search -p "$TMP/k.fa" --format records "$TMP/r1.fq"
check_status "records exit" 0
# awk: hits per record, the patterns hit in pattern order, every record in input order
awk -F'\t' 'FILENAME == ARGV[1] { if (/^>/) idx[substr($0, 2)] = ++np; next }
            FILENAME == ARGV[2] { n[$1]++; if (!((($1) SUBSEP ($2)) in seen)) { seen[$1, $2] = 1; hit[$1, idx[$2]] = $2 }; next }
            FNR % 4 == 1 { r = substr($1, 2); line = r "\t" (n[r] + 0) "\t"; list = "";
                           for (i = 1; i <= np; i++) if ((r, i) in hit) list = list (list == "" ? "" : ",") hit[r, i];
                           print line (list == "" ? "." : list) }' "$TMP/k.fa" "$TMP/hits.tsv" "$TMP/r1.fq" >"$TMP/want"
sed -i '1i #record\thits\tpatterns' "$TMP/want"
check_output "records = awk over the TSV hits" "$TMP/want"
if [ "$(grep -c '	0	\.$' "$TMP/out")" -gt 0 ] && [ "$(grep -vc '	0	\.$' "$TMP/out")" -gt 1 ]; then pass; else
    fail "records: both records with and without hits"
fi

# two files: a file column, and the records of each
printf '>x\nAAAACCCCAAAA\n>y\nGGGG\n' >"$TMP/a.fa"
printf '>z\nCCCCTTTT\n' >"$TMP/b.fa"
run search -e CCCC --strand + --format records "$TMP/a.fa" "$TMP/b.fa"
check_output_text "records with files" "#file	record	hits	patterns
$TMP/a.fa	x	1	CCCC
$TMP/a.fa	y	0	.
$TMP/b.fa	z	1	CCCC
"
run search -e CCCC -e AAAA --strand + --format records --no-header "$TMP/a.fa"
check_output_text "records --no-header, two patterns" "x	3	CCCC,AAAA
y	0	.
"
run search -e CCCC --format records -e GGGGG "$TMP/a.fa"
check_status "records: exit 0 with a hit" 0
run search -e TTTTTTTTT --format records "$TMP/a.fa"
check_status "records: exit 1 without" 1

# --anchor: the TSV hits that start at 0, or end at the record's length
awk 'FNR % 4 == 1 { r = substr($1, 2) } FNR % 4 == 2 { print r "\t" length($0) }' "$TMP/r1.fq" >"$TMP/len"
awk 'NR % 4 == 2 && NR % 200 == 2 { printf ">s%d\n%s\n>e%d\n%s\n", ++n, substr($0, 1, 5), n, substr($0, length($0) - 4) }' \
    "$TMP/r1.fq" >"$TMP/ends.fa"
run search -p "$TMP/ends.fa" --no-header "$TMP/r1.fq"
cp "$TMP/out" "$TMP/all.tsv"
run search -p "$TMP/ends.fa" --no-header --anchor start "$TMP/r1.fq"
awk -F'\t' '$4 == 0' "$TMP/all.tsv" >"$TMP/want"
check_output "--anchor start = hits starting at 0" "$TMP/want"
[ -s "$TMP/want" ] && pass || fail "--anchor start: some hits"
run search -p "$TMP/ends.fa" --no-header --anchor end "$TMP/r1.fq"
awk -F'\t' 'NR == FNR { len[$1] = $2; next } $5 == len[$1]' "$TMP/len" "$TMP/all.tsv" >"$TMP/want"
check_output "--anchor end = hits ending at the record's end" "$TMP/want"
run search -p "$TMP/ends.fa" --anchor end --format count "$TMP/r1.fq"
if [ "$(tail -1 "$TMP/out" | cut -f2)" -eq "$(wc -l <"$TMP/want")" ]; then pass; else fail "--anchor end: counts"; fi
run search -p "$TMP/ends.fa" --no-header --anchor any "$TMP/r1.fq"
check_output "--anchor any" "$TMP/all.tsv"

# k edits at the start: the alignment begins at the record's first base
printf '>r\nACGGTTGCATTTT\n' >"$TMP/e.fa"
run search -e ACGTTGCA -k 1 --strand + --anchor start --no-header "$TMP/e.fa"
check_output_text "--anchor start -k 1 (an insertion)" "r	ACGTTGCA	+	0	9	1	ACGGTTGCA
"
run search -e TTGCATTTT -k 2 --strand + --anchor end --no-header "$TMP/e.fa"
check_output_text "--anchor end -k 2" "r	TTGCATTTT	+	4	13	0	TTGCATTTT
"

run search -e ACGT --anchor middle "$TMP/e.fa"
check_status "--anchor middle" 2
check_stderr "--anchor middle" "unknown anchor 'middle'; use start, end or any"
run search -e ACGTACGTACGTACGTACGT --pam NGG -k 1 --anchor start "$TMP/e.fa"
check_status "--anchor with --pam -k" 2
check_stderr "--anchor with --pam -k" "cannot be combined with a PAM"

finish
