# seqmatch demux --barcodes with a table of barcode pairs (sample, barcode1,
# barcode2): paired files (barcode1 in mate 1, barcode2 in mate 2, at the
# start or with --anchor end), single reads (barcode1 at the start, barcode2
# at the end, as given or with --rc-barcode2; in both orientations with
# --strand both), -m/-k, ties, pairs not in the table, --trim (with -k: what
# the hit covers), --barcode-tag, a two-column table read as -p reads it, 1
# and 3 threads, and the refusals. (tests/public/test_demux_pairs.c checks where
# random records go against the rule.)
. "$(dirname "$0")/testlib.bash"

names() { awk 'NR % 4 == 1 { print $1 }' "$1" | tr '\n' ' '; }

printf 'sample\ti7\ti5\nS1\tACGTAC\tTTGGCC\nS2\tACGTAC\tGGAATT\nS3\tCCCAAA\tTTGGCC\n' >"$TMP/pairs.tsv"
# r1 S1, r2 S2, r3 S3, r4 CCCAAA+GGAATT (not in the table), r5 no barcode1,
# r6 S1 with one mismatch in each barcode
printf '@r1/1\nACGTACGGGGGGGGGG\n+\nIIIIIIIIIIIIIIII\n@r2/1\nACGTACGGGG\n+\nIIIIIIIIII\n@r3/1\nCCCAAAGGGG\n+\nIIIIIIIIII\n@r4/1\nCCCAAAGGGG\n+\nIIIIIIIIII\n@r5/1\nGGGGGGGGGG\n+\nIIIIIIIIII\n@r6/1\nACGTTCGGGG\n+\nIIIIIIIIII\n' >"$TMP/r1.fq"
printf '@r1/2\nTTGGCCAAAAAAAA\n+\nJJJJJJJJJJJJJJ\n@r2/2\nGGAATTAAAA\n+\nJJJJJJJJJJ\n@r3/2\nTTGGCCAAAA\n+\nJJJJJJJJJJ\n@r4/2\nGGAATTAAAA\n+\nJJJJJJJJJJ\n@r5/2\nTTGGCCAAAA\n+\nJJJJJJJJJJ\n@r6/2\nTTGGCGAAAA\n+\nJJJJJJJJJJ\n' >"$TMP/r2.fq"

run demux --barcodes "$TMP/pairs.tsv" -o "$TMP/p" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
check_status "pairs: exit" 0
[ "$(names "$TMP/p/S1_R1.fastq")" = "@r1/1 " ] && [ "$(names "$TMP/p/S1_R2.fastq")" = "@r1/2 " ] &&
    [ "$(names "$TMP/p/S2_R1.fastq")" = "@r2/1 " ] && [ "$(names "$TMP/p/S3_R2.fastq")" = "@r3/2 " ] &&
    [ "$(names "$TMP/p/unassigned_R1.fastq")" = "@r4/1 @r5/1 @r6/1 " ] && pass ||
    fail "pairs, exact: S1 [$(names "$TMP/p/S1_R1.fastq")] unassigned [$(names "$TMP/p/unassigned_R1.fastq")]"
head -4 "$TMP/r1.fq" | cmp -s - "$TMP/p/S1_R1.fastq" && pass || fail "records written as read"
grep -q "^#sample	pairs	percent	file$" "$TMP/err" && grep -q "^S1	1	16.67	" "$TMP/err" &&
    grep -q "^# unassigned: 2 without a barcode, 0 with two barcodes equally close, 1 with a pair not in the table$" "$TMP/err" &&
    pass || fail "summary: $(cat "$TMP/err")"

run demux --barcodes "$TMP/pairs.tsv" -m 1 -o "$TMP/p" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq" -t 3 --chunk-size 16
[ "$(names "$TMP/p/S1_R1.fastq")" = "@r1/1 @r6/1 " ] && pass || fail "-m 1: r6 to S1 [$(names "$TMP/p/S1_R1.fastq")]"
run demux --barcodes "$TMP/pairs.tsv" -k 1 -o "$TMP/p" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
[ "$(names "$TMP/p/S1_R1.fastq")" = "@r1/1 @r6/1 " ] && pass || fail "-k 1: r6 to S1 [$(names "$TMP/p/S1_R1.fastq")]"

# ties: AAAAAC and AAAAAG are both one mismatch from AAAAAT
printf 'A\tAAAAAC\tTTTTTT\nB\tAAAAAG\tTTTTTT\n' >"$TMP/tie.tsv"
printf '@t\nAAAAATGG\n+\nIIIIIIII\n' >"$TMP/t1.fq"
printf '@t\nTTTTTTGG\n+\nIIIIIIII\n' >"$TMP/t2.fq"
run demux --barcodes "$TMP/tie.tsv" -m 1 -o "$TMP/t" -1 "$TMP/t1.fq" -2 "$TMP/t2.fq"
[ "$(names "$TMP/t/unassigned_R1.fastq")" = "@t " ] && grep -q "1 with two barcodes equally close" "$TMP/err" &&
    pass || fail "a tie goes to unassigned: $(cat "$TMP/err")"

# --anchor end: the barcodes at the mates' ends
printf 'E1\tACGTAC\tTTGGCC\n' >"$TMP/end.tsv"
printf '@e/1\nGGGGACGTAC\n+\nIIIIIIIIII\n' >"$TMP/e1.fq"
printf '@e/2\nAAAATTGGCC\n+\nIIIIIIIIII\n' >"$TMP/e2.fq"
run demux --barcodes "$TMP/end.tsv" --anchor end --trim --barcode-tag -o "$TMP/e" -1 "$TMP/e1.fq" -2 "$TMP/e2.fq"
printf '@e/1 BC:Z:ACGTAC-TTGGCC\nGGGG\n+\nIIII\n' >"$TMP/want1"
printf '@e/2 BC:Z:ACGTAC-TTGGCC\nAAAA\n+\nIIII\n' >"$TMP/want2"
cmp -s "$TMP/e/E1_R1.fastq" "$TMP/want1" && cmp -s "$TMP/e/E1_R2.fastq" "$TMP/want2" && pass ||
    fail "--anchor end --trim --barcode-tag: $(cat "$TMP/e/E1_R1.fastq" "$TMP/e/E1_R2.fastq")"

# --trim and --barcode-tag at the start, the barcodes as found (r6's mismatches kept)
run demux --barcodes "$TMP/pairs.tsv" -m 1 --trim --barcode-tag -o "$TMP/p" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
printf '@r1/1 BC:Z:ACGTAC-TTGGCC\nGGGGGGGGGG\n+\nIIIIIIIIII\n@r6/1 BC:Z:ACGTTC-TTGGCG\nGGGG\n+\nIIII\n' >"$TMP/want1"
printf '@r1/2 BC:Z:ACGTAC-TTGGCC\nAAAAAAAA\n+\nJJJJJJJJ\n@r6/2 BC:Z:ACGTTC-TTGGCG\nAAAA\n+\nJJJJ\n' >"$TMP/want2"
cmp -s "$TMP/p/S1_R1.fastq" "$TMP/want1" && cmp -s "$TMP/p/S1_R2.fastq" "$TMP/want2" && pass ||
    fail "--trim --barcode-tag: $(cat "$TMP/p/S1_R1.fastq" "$TMP/p/S1_R2.fastq")"
[ "$(names "$TMP/p/unassigned_R1.fastq")" = "@r4/1 @r5/1 " ] && ! grep -q "BC:Z" "$TMP/p/unassigned_R1.fastq" &&
    pass || fail "unassigned records untouched"

# single reads: barcode1 at the start, barcode2 at the end as it reads there
printf '@a\nACGTACNNNNNNNNNNNNNTTGGCC\n+\nIIIIIIIIIIIIIIIIIIIIIIIII\n@b\nACGTACGGGGGGGGGGGGGGGAATT\n+\nIIIIIIIIIIIIIIIIIIIIIIIII\n@c\nacgtacGGGGGGGGGGGGGGGCCAA\n+\nIIIIIIIIIIIIIIIIIIIIIIIII\n@d\nGGAATTGGGGGGGGACGTAC\n+\nIIIIIIIIIIIIIIIIIIII\n' >"$TMP/long.fq"
run demux --barcodes "$TMP/pairs.tsv" -o "$TMP/s" "$TMP/long.fq"
[ "$(names "$TMP/s/S1.fastq")" = "@a " ] && [ "$(names "$TMP/s/S2.fastq")" = "@b " ] &&
    [ "$(names "$TMP/s/unassigned.fastq")" = "@c @d " ] && pass ||
    fail "single: S1 [$(names "$TMP/s/S1.fastq")] S2 [$(names "$TMP/s/S2.fastq")] unassigned [$(names "$TMP/s/unassigned.fastq")]"
run demux --barcodes "$TMP/pairs.tsv" --rc-barcode2 --trim --barcode-tag -o "$TMP/s" "$TMP/long.fq" -t 3
printf '@c BC:Z:acgtac-GGCCAA\nGGGGGGGGGGGGG\n+\nIIIIIIIIIIIII\n' >"$TMP/want1"
cmp -s "$TMP/s/S1.fastq" "$TMP/want1" && [ "$(names "$TMP/s/unassigned.fastq")" = "@a @b @d " ] && pass ||
    fail "single --rc-barcode2 --trim --barcode-tag: $(cat "$TMP/s/S1.fastq")"

# -k: what the hit covers is cut and shown: a deletion in barcode1 (ACGTC), an insertion in barcode2 (TTGAGCC)
printf '@x\nACGTCGGGGGGGGGGTTGAGCC\n+\nABCDEFGHIJKLMNOPQRSTUV\n' >"$TMP/k.fq"
run demux --barcodes "$TMP/pairs.tsv" -k 1 --trim --barcode-tag -o "$TMP/k" "$TMP/k.fq"
printf '@x BC:Z:ACGTC-TTGAGCC\nGGGGGGGGGG\n+\nFGHIJKLMNO\n' >"$TMP/want1"
cmp -s "$TMP/k/S1.fastq" "$TMP/want1" && pass || fail "single -k 1 --trim --barcode-tag: $(cat "$TMP/k/S1.fastq")"
printf '@y/1\nACTACGGGG\n+\nABCDEFGHI\n' >"$TMP/k1.fq"
printf '@y/2\nTTGGCCAAAA\n+\nABCDEFGHIJ\n' >"$TMP/k2.fq"
run demux --barcodes "$TMP/pairs.tsv" -k 1 --trim -o "$TMP/k" -1 "$TMP/k1.fq" -2 "$TMP/k2.fq"
[ "$(cat "$TMP/k/S1_R1.fastq")" = "$(printf '@y/1\nGGGG\n+\nFGHI')" ] &&
    [ "$(cat "$TMP/k/S1_R2.fastq")" = "$(printf '@y/2\nAAAA\n+\nGHIJ')" ] && pass ||
    fail "mates -k 1 --trim: $(cat "$TMP/k/S1_R1.fastq" "$TMP/k/S1_R2.fastq")"
# one barcode, -k at the end and on either strand
printf '>b1\nACGTACGT\n>b2\nTTTTGGGG\n' >"$TMP/kb.fa"
printf '@e\nCCCCCCCCACGTAACGT\n+\nABCDEFGHIJKLMNOPQ\n' >"$TMP/ke.fq"
run demux -p "$TMP/kb.fa" -k 1 --anchor end --trim --barcode-tag -o "$TMP/k" "$TMP/ke.fq"
[ "$(cat "$TMP/k/b1.fastq")" = "$(printf '@e BC:Z:ACGTAACGT\nCCCCCCCC\n+\nABCDEFGH')" ] && pass ||
    fail "-p -k 1 --anchor end --trim: $(cat "$TMP/k/b1.fastq")"
printf '@u\nACGTACGACCCCCC\n+\nABCDEFGHIJKLMN\n' >"$TMP/ku.fq"
run demux -p "$TMP/kb.fa" -k 1 --trim -o "$TMP/k" "$TMP/ku.fq"
[ "$(cat "$TMP/k/b1.fastq")" = "$(printf '@u\nCCCCCC\n+\nIJKLMN')" ] && pass ||
    fail "-k 1: a differing last base is a substitution (8 cut), not a deletion (7): $(cat "$TMP/k/b1.fastq")"
printf '@s\nCCCAAAAGTGTGTGT\n+\nABCDEFGHIJKLMNO\n' >"$TMP/ks.fq"
run demux -p "$TMP/kb.fa" -k 1 --strand both --trim -o "$TMP/k" "$TMP/ks.fq"
[ "$(cat "$TMP/k/b2.fastq")" = "$(printf '@s\nGTGTGTGT\n+\nHIJKLMNO')" ] && pass ||
    fail "-p -k 1 --strand both --trim (b2 reverse complemented, a deletion): $(cat "$TMP/k/b2.fastq")"

# --strand both: single reads in either orientation. b, c and d are constructs reverse
# complemented (GGCCAA = rc TTGGCC at the start, GTACGT = rc ACGTAC at the end); d has GGCCAT
# (-k 1: a substitution rather than a deletion of the last A); the tag shows the barcodes as on
# the construct, the read stays as read
printf '@a\nACGTACTTTTTTTTTTTGGCC\n+\nABCDEFGHIJKLMNOPQRSTU\n@b\nGGCCAATTTTTTTTTTGTACGT\n+\nABCDEFGHIJKLMNOPQRSTUV\n@c\nAATTCCTTTTTTTTTTGTACGT\n+\nABCDEFGHIJKLMNOPQRSTUV\n@d\nGGCCATTTTTTTTTTTGTACGT\n+\nABCDEFGHIJKLMNOPQRSTUV\n' >"$TMP/both.fq"
run demux --barcodes "$TMP/pairs.tsv" --strand both -k 1 --trim --barcode-tag -o "$TMP/o" "$TMP/both.fq" -t 3
printf '@a BC:Z:ACGTAC-TTGGCC\nTTTTTTTTT\n+\nGHIJKLMNO\n@b BC:Z:ACGTAC-TTGGCC\nTTTTTTTTTT\n+\nGHIJKLMNOP\n@d BC:Z:ACGTAC-ATGGCC\nTTTTTTTTTT\n+\nGHIJKLMNOP\n' >"$TMP/want1"
printf '@c BC:Z:ACGTAC-GGAATT\nTTTTTTTTTT\n+\nGHIJKLMNOP\n' >"$TMP/want2"
cmp -s "$TMP/o/S1.fastq" "$TMP/want1" && cmp -s "$TMP/o/S2.fastq" "$TMP/want2" && pass ||
    fail "--strand both -k 1 --trim --barcode-tag: $(cat "$TMP/o/S1.fastq" "$TMP/o/S2.fastq")"
run demux --barcodes "$TMP/pairs.tsv" -o "$TMP/o" "$TMP/both.fq"
[ "$(names "$TMP/o/S1.fastq")" = "@a " ] && [ "$(names "$TMP/o/unassigned.fastq")" = "@b @c @d " ] && pass ||
    fail "without --strand both only the construct as given"
# both orientations equally close: two samples -> unassigned; one sample (a symmetric construct) -> it
printf 'X1\tACGTAC\tTTGGCC\nX2\tGGCCAA\tGTACGT\nY\tAAACCC\tGGGTTT\n' >"$TMP/sym.tsv"
printf '@t\nACGTACGGGGTTGGCC\n+\nIIIIIIIIIIIIIIII\n@y\nAAACCCTTTTGGGTTT\n+\nIIIIIIIIIIIIIIII\n' >"$TMP/sym.fq"
run demux --barcodes "$TMP/sym.tsv" --strand both -o "$TMP/o" "$TMP/sym.fq"
[ "$(names "$TMP/o/unassigned.fastq")" = "@t " ] && [ "$(names "$TMP/o/Y.fastq")" = "@y " ] &&
    grep -q "1 with two barcodes equally close" "$TMP/err" && pass || fail "orientations equally close: $(cat "$TMP/err")"
run demux --barcodes "$TMP/sym.tsv" -o "$TMP/o" "$TMP/sym.fq"
[ "$(names "$TMP/o/X1.fastq")" = "@t " ] && pass || fail "one orientation: t to X1"

# one barcode (-p) in mate 2, trimmed there and tagged on both mates
printf '>bcA\nTTGGCC\n' >"$TMP/one.fa"
run demux -p "$TMP/one.fa" --barcode-read 2 --trim --barcode-tag -o "$TMP/one" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
printf '@r1/1 BC:Z:TTGGCC\nACGTACGGGGGGGGGG\n+\nIIIIIIIIIIIIIIII\n' >"$TMP/want1"
printf '@r1/2 BC:Z:TTGGCC\nAAAAAAAA\n+\nJJJJJJJJ\n' >"$TMP/want2"
head -4 "$TMP/one/bcA_R1.fastq" | cmp -s - "$TMP/want1" && head -4 "$TMP/one/bcA_R2.fastq" | cmp -s - "$TMP/want2" &&
    pass || fail "-p, --barcode-read 2 --trim --barcode-tag: $(head -4 "$TMP/one/bcA_R1.fastq" "$TMP/one/bcA_R2.fastq")"

# a two-column table: the same as -p
printf 'S1\tACGTAC\nS3\tCCCAAA\n' >"$TMP/single.tsv"
run demux --barcodes "$TMP/single.tsv" -o "$TMP/b" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
cp "$TMP/err" "$TMP/err_b"
run demux -p "$TMP/single.tsv" -o "$TMP/c" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
sed "s#$TMP/c#$TMP/b#" "$TMP/err" | cmp -s - "$TMP/err_b" && cmp -s "$TMP/b/S1_R1.fastq" "$TMP/c/S1_R1.fastq" &&
    cmp -s "$TMP/b/unassigned_R2.fastq" "$TMP/c/unassigned_R2.fastq" && [ "$(names "$TMP/b/S3_R1.fastq")" = "@r3/1 @r4/1 " ] &&
    pass || fail "two columns read as -p reads them"

# refusals, one line each, nothing written
run demux --barcodes "$TMP/pairs.tsv" -e ACGT -o "$TMP/x" "$TMP/long.fq"
check_stderr "pairs and -e" "takes no other barcodes"
run demux --barcodes "$TMP/pairs.tsv" --barcode-read 2 -o "$TMP/x" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
check_stderr "pairs and --barcode-read" "no --barcode-read"
run demux --barcodes "$TMP/pairs.tsv" --strand - -o "$TMP/x" "$TMP/long.fq"
check_stderr "pairs and --strand -" "--strand both only for single reads"
run demux --barcodes "$TMP/pairs.tsv" --strand both -o "$TMP/x" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
check_stderr "pairs of mates and --strand both" "--strand both only for single reads"
run demux --barcodes "$TMP/pairs.tsv" --anchor end -o "$TMP/x" "$TMP/long.fq"
check_stderr "pairs on single reads and --anchor" "no --anchor"
run demux --barcodes "$TMP/pairs.tsv" --rc-barcode2 -o "$TMP/x" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
check_stderr "--rc-barcode2 with paired files" "single reads"
run demux -p "$TMP/single.tsv" --rc-barcode2 -o "$TMP/x" "$TMP/long.fq"
check_stderr "--rc-barcode2 without pairs" "barcode pairs"
run demux --barcodes "$TMP/pairs.tsv" --trim --anchor any -o "$TMP/x" -1 "$TMP/r1.fq" -2 "$TMP/r2.fq"
check_stderr "--trim with --anchor any" "--anchor start or end"
printf 'S1\tACGT\tGG\nS2\tACGT\n' >"$TMP/bad.tsv"
run demux --barcodes "$TMP/bad.tsv" -o "$TMP/x" "$TMP/long.fq"
check_stderr "a short line" "line 2: 2 fields"
printf 'S1\tACGT\tGG\nS2\tACGT\tGG\n' >"$TMP/bad.tsv"
run demux --barcodes "$TMP/bad.tsv" -o "$TMP/x" "$TMP/long.fq"
check_stderr "one pair, two samples" "name two samples, S1 and S2"
printf 'a/b\tACGT\tGG\n' >"$TMP/bad.tsv"
run demux --barcodes "$TMP/bad.tsv" -o "$TMP/x" "$TMP/long.fq"
check_stderr "a sample name that is no file name" "a/b"
[ ! -e "$TMP/x" ] && pass || fail "a refused run makes no folder"

finish
