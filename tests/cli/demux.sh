# seqmatch demux: records to the file of their barcode (at the start and on
# the read's strand by default), -m/-k, --anchor, --strand, ties and reads
# without a barcode to unassigned, gzip, pairs, the summary, 3000 barcodes
# under a limit of 64 open files, and the refusals. (tests/reads/
# reads_oracle.c checks where random records go against the definitions.)
. "$(dirname "$0")/testlib.bash"
READS=data/reads

printf '>bc1\nACGTACGT\n>bc2\nTTGGCCAA\n>bc3 never seen\nGGGGCCCC\n' >"$TMP/bc.fa"
# start bc1, start bc2, bc1 with a mismatch, bc1 at the end only,
# bc2 reverse complemented at the start, none
printf '@s1 x\nACGTACGTAAAAAAAA\n+\nIIIIIIIIIIIIIIII\n@s2\nTTGGCCAACCCCCCCC\n+\nIIIIIIIIIIIIIIII\n@s3\nACGAACGTAAAAAAAA\n+\nIIIIIIIIIIIIIIII\n@s4\nAAAAAAAAACGTACGT\n+\nIIIIIIIIIIIIIIII\n@s5\nTTGGCCAACCCCCCCC\n+\nIIIIIIIIIIIIIIII\n@s6\nCACACACACACACACA\n+\nIIIIIIIIIIIIIIII\n' |
    sed '17,20s/TTGGCCAACCCCCCCC/GGGGGGGGTTGGCCAA/' >"$TMP/reads.fq"
# s5 is now GGGGGGGGTTGGCCAA: TTGGCCAA (= rc of itself) at its end only

names() { awk 'NR % 4 == 1 { print $1 }' "$1" | tr '\n' ' '; }

run demux -p "$TMP/bc.fa" -o "$TMP/dm" "$TMP/reads.fq"
check_status "demux exit" 0
# no record with a barcode: it ran, so 0 (a read command's exit is not grep's)
"$SEQMATCH" demux -e GGGGGGGGGGGG -o "$TMP/dm_none" "$TMP/reads.fq" 2>/dev/null
status=$?
check_status "demux, nothing assigned: exit 0" 0
if [ "$(names "$TMP/dm/bc1.fastq")" = "@s1 " ] && [ "$(names "$TMP/dm/bc2.fastq")" = "@s2 " ] &&
    [ ! -s "$TMP/dm/bc3.fastq" ] && [ -e "$TMP/dm/bc3.fastq" ] &&
    [ "$(names "$TMP/dm/unassigned.fastq")" = "@s3 @s4 @s5 @s6 " ]; then
    pass
else
    fail "default (start, +, exact): bc1 [$(names "$TMP/dm/bc1.fastq")] bc2 [$(names "$TMP/dm/bc2.fastq")] unassigned [$(names "$TMP/dm/unassigned.fastq")]"
fi
head -4 "$TMP/reads.fq" >"$TMP/want"
check_stdout_empty "nothing on standard output"
if cmp -s "$TMP/dm/bc1.fastq" "$TMP/want"; then pass; else fail "bc1.fastq holds s1 as read"; fi
grep -q "^bc1	1	16.67	$TMP/dm/bc1.fastq$" "$TMP/err" && grep -q "^unassigned	4	66.67	" "$TMP/err" &&
    grep -q "^total	6	100.00" "$TMP/err" && grep -q "^# unassigned: 4 without a barcode, 0 with two" "$TMP/err" &&
    pass || fail "summary table on stderr: $(cat "$TMP/err")"

run demux -p "$TMP/bc.fa" -m 1 -o "$TMP/dm" "$TMP/reads.fq"
[ "$(names "$TMP/dm/bc1.fastq")" = "@s1 @s3 " ] && pass || fail "-m 1: s3 to bc1 [$(names "$TMP/dm/bc1.fastq")]"
run demux -p "$TMP/bc.fa" -k 1 -o "$TMP/dm" "$TMP/reads.fq"
[ "$(names "$TMP/dm/bc1.fastq")" = "@s1 @s3 " ] && pass || fail "-k 1: s3 to bc1 [$(names "$TMP/dm/bc1.fastq")]"
run demux -p "$TMP/bc.fa" --anchor end -o "$TMP/dm" "$TMP/reads.fq"
[ "$(names "$TMP/dm/bc1.fastq")" = "@s4 " ] && [ "$(names "$TMP/dm/bc2.fastq")" = "@s5 " ] && pass ||
    fail "--anchor end: s4 to bc1, s5 to bc2"
run demux -p "$TMP/bc.fa" --anchor any -o "$TMP/dm" "$TMP/reads.fq"
[ "$(names "$TMP/dm/bc1.fastq")" = "@s1 @s4 " ] && [ "$(names "$TMP/dm/bc2.fastq")" = "@s2 @s5 " ] && pass ||
    fail "--anchor any"
# ACGTACGT's reverse complement is itself; GGGGCCCC too: a strand test needs another
printf '>fw\nAACCGGTTA\n' >"$TMP/fw.fa"
printf '>r1\nTAACCGGTTCCCC\n>r2\nAACCGGTTACCCC\n' >"$TMP/strand.fa"
run demux -p "$TMP/fw.fa" -o "$TMP/st" "$TMP/strand.fa"
[ "$(grep -c '>' "$TMP/st/fw.fasta")" -eq 1 ] && grep -q '>r2' "$TMP/st/fw.fasta" && pass ||
    fail "default strand +: only r2 (FASTA in, .fasta out)"
run demux -p "$TMP/fw.fa" --strand both -o "$TMP/st" "$TMP/strand.fa"
[ "$(grep -c '>' "$TMP/st/fw.fasta")" -eq 2 ] && pass || fail "--strand both: the reverse complement too"

# Ties: two barcodes one mismatch away each -> unassigned (ambiguous).
printf '>A\nACGTACGT\n>B\nACGTACGA\n' >"$TMP/tie.fa"
printf '>t1\nACGTACGCTTTT\n>t2\nACGTACGTTTTT\n' >"$TMP/tie_reads.fa"
run demux -p "$TMP/tie.fa" -m 1 -o "$TMP/tie" "$TMP/tie_reads.fa"
grep -q '>t1' "$TMP/tie/unassigned.fasta" && grep -q '>t2' "$TMP/tie/A.fasta" && [ ! -s "$TMP/tie/B.fasta" ] &&
    grep -q "^# unassigned: 0 without a barcode, 1 with two" "$TMP/err" && pass ||
    fail "tie to unassigned, the closer one wins: $(cat "$TMP/err")"
# One name twice: one barcode (one file).
printf '>A\nACGTACGT\n>A\nTTTTGGGG\n' >"$TMP/dup.fa"
printf '>d1\nACGTACGTCC\n>d2\nTTTTGGGGCC\n' >"$TMP/dup_reads.fa"
run demux -p "$TMP/dup.fa" -o "$TMP/dup" "$TMP/dup_reads.fa"
[ "$(grep -c '>' "$TMP/dup/A.fasta")" -eq 2 ] && pass || fail "two patterns named A: one file"
# -e barcodes are named by their sequence
run demux -e ACGTACGT -o "$TMP/e" "$TMP/dup_reads.fa"
grep -q '>d1' "$TMP/e/ACGTACGT.fasta" && pass || fail "-e: file named after the sequence"

# gzip: every file valid, the empty ones too.
run demux -p "$TMP/bc.fa" --gzip -o "$TMP/gz" "$TMP/reads.fq"
ok=1
for f in bc1 bc2 bc3 unassigned; do gzip -t "$TMP/gz/$f.fastq.gz" 2>/dev/null || ok=0; done
zcat "$TMP/gz/bc1.fastq.gz" | cmp -s - "$TMP/want" || ok=0
[ -z "$(zcat "$TMP/gz/bc3.fastq.gz")" ] || ok=0
[ $ok -eq 1 ] && pass || fail "--gzip files"

# Summary to a file; nothing on stderr.
run demux -p "$TMP/bc.fa" -o "$TMP/dm" --summary "$TMP/summary.tsv" "$TMP/reads.fq"
check_stderr_empty "--summary: stderr empty"
head -1 "$TMP/summary.tsv" | grep -q "^#barcode	records	percent	file$" && pass || fail "--summary file"

# Real reads: barcodes are 10-base prefixes of some reads; the counts per
# barcode must be what awk counts by prefix.
zcat $READS/r1.fq.gz >"$TMP/r1.fq"
awk 'NR % 4 == 2 && NR % 80 == 2 { print substr($0, 1, 10) }' "$TMP/r1.fq" | sort -u |
    awk '{ printf ">p%d\n%s\n", NR, $0 }' >"$TMP/prefix.fa"
run demux -p "$TMP/prefix.fa" -o "$TMP/real" --summary "$TMP/real.tsv" $READS/r1.fq.gz
awk 'NR == FNR { if (/^>/) name = substr($0, 2); else bc[$0] = name; next }
     FNR % 4 == 2 { p = substr($0, 1, 10); n[(p in bc) ? bc[p] : "unassigned"]++ }
     END { for (k in n) print k "\t" n[k] }' "$TMP/prefix.fa" "$TMP/r1.fq" | sort >"$TMP/awk_counts"
awk -F'\t' '!/^#/ && $1 != "total" && $2 > 0 { print $1 "\t" $2 }' "$TMP/real.tsv" | sort >"$TMP/got_counts"
if [ -s "$TMP/awk_counts" ] && cmp -s "$TMP/awk_counts" "$TMP/got_counts"; then pass; else
    fail "real reads: counts per barcode differ from awk's"
    diff "$TMP/awk_counts" "$TMP/got_counts" | head -5
fi
cat "$TMP"/real/*.fastq | sort | cmp -s - <(sort "$TMP/r1.fq") && pass || fail "real reads: every read once"

# Pairs: the barcode in mate 2; both mates to NAME_R1/NAME_R2 in step.
awk 'NR % 4 == 2 && NR % 80 == 2 { print substr($0, 1, 10) }' <(zcat $READS/r2.fq.gz) | sort -u |
    awk '{ printf ">q%d\n%s\n", NR, $0 }' >"$TMP/prefix2.fa"
run demux -p "$TMP/prefix2.fa" --barcode-read 2 -o "$TMP/pairs" -1 $READS/r1.fq.gz -2 $READS/r2.fq.gz
check_status "pairs exit" 0
ok=1
for f in "$TMP"/pairs/*_R1.fastq; do
    g=${f%_R1.fastq}_R2.fastq
    diff <(awk 'NR % 4 == 1 { sub(/\/1$/, ""); print }' "$f") <(awk 'NR % 4 == 1 { sub(/\/2$/, ""); print }' "$g") \
        >/dev/null || ok=0
done
[ "$(cat "$TMP"/pairs/q*_R2.fastq | awk 'NR % 4 == 1' | wc -l)" -gt 0 ] || ok=0
[ $ok -eq 1 ] && pass || fail "pairs: R1 and R2 files in step"
run demux -p "$TMP/prefix2.fa" --barcode-read 2 -o "$TMP/x" "$TMP/r1.fq"
check_status "--barcode-read without pairs" 2

# 3000 barcodes, 64 open files at most: every file there, every read in its own.
awk 'BEGIN { srand(7); while (n < 3000) { s = ""; for (i = 0; i < 12; i++) s = s substr("ACGT", int(rand() * 4) + 1, 1);
             if (!(s in seen)) { seen[s] = 1; n++; printf ">b%d\n%s\n", n, s } } }' >"$TMP/many.fa"
awk '/^>/ { name = substr($0, 2); next } { for (r = 0; r < 2; r++) printf "@%s_%d\n%sGATTACAGATTACA\n+\n%s\n", name, r, $0, "IIIIIIIIIIIIIIIIIIIIIIIIII" }' \
    "$TMP/many.fa" >"$TMP/many.fq"
(ulimit -n 64 && "$SEQMATCH" demux -p "$TMP/many.fa" -t 2 -o "$TMP/many" "$TMP/many.fq" >"$TMP/out" 2>"$TMP/err")
status=$?
check_status "3000 barcodes under ulimit -n 64" 0
files=$(ls "$TMP/many" | wc -l)
bad=$(awk 'FNR % 4 == 1 { f = FILENAME; sub(/.*\//, "", f); sub(/\.fastq$/, "", f); n = substr($1, 2); sub(/_[01]$/, "", n);
                          if (n != f) bad++ } END { print bad + 0 }' "$TMP"/many/b*.fastq)
if [ "$files" -eq 3001 ] && [ "$bad" -eq 0 ] && [ ! -s "$TMP/many/unassigned.fastq" ] &&
    [ "$(cat "$TMP"/many/*.fastq | wc -l)" -eq "$(wc -l <"$TMP/many.fq")" ]; then
    pass
else
    fail "3000 barcodes: $files files, $bad reads in a wrong one"
fi

# Buffers written many times over through 8 descriptors (ulimit -n 40):
# files closed and opened again append, gzip members follow each other.
awk 'BEGIN { srand(11); while (n < 40) { s = ""; for (i = 0; i < 12; i++) s = s substr("ACGT", int(rand() * 4) + 1, 1);
             if (!(s in seen)) { seen[s] = 1; n++; printf ">c%d\n%s\n", n, s } } }' >"$TMP/forty.fa"
awk 'NR == FNR { if (/^>/) name = substr($0, 2); else { bc[++n] = $0; nm[n] = name }; next }
     END { tail = "GATTACAGATTACAGATTACAGATTACAGATTACAGATTACAGATTACAGATTACAGATTACAGATTACA";
           for (r = 0; r < 4000; r++) { b = r % n + 1; s = bc[b] tail tail; q = s; gsub(/./, "I", q);
               printf "@%s_%d\n%s\n+\n%s\n", nm[b], r, s, q } }' "$TMP/forty.fa" /dev/null >"$TMP/forty.fq"
for gz in "" --gzip; do
    (ulimit -n 40 && "$SEQMATCH" demux -p "$TMP/forty.fa" $gz --buffer-size 4K -o "$TMP/forty$gz" "$TMP/forty.fq" \
        >"$TMP/out" 2>"$TMP/err")
    status=$?
    check_status "40 barcodes, 4K buffers, 8 open files $gz" 0
    bad=0
    for f in "$TMP/forty$gz"/c*; do
        b=${f##*/}
        b=${b%%.*}
        zcat -f "$f" | awk -v b="$b" 'NR % 4 == 1 { n = substr($1, 2); sub(/_[0-9]+$/, "", n); if (n != b) bad = 1; c++ }
                                      END { exit bad || c != 100 }' || bad=$((bad + 1))
    done
    [ "$bad" -eq 0 ] && pass || fail "40 barcodes $gz: $bad files without their 100 reads"
done

# Refusals.
run demux -p "$TMP/bc.fa" "$TMP/reads.fq"
check_status "no -o" 2
check_stderr "no -o" "use -o DIR"
run demux -p "$TMP/bc.fa" -o "$TMP/reads.fq" "$TMP/reads.fq"
check_status "-o a file" 2
check_stderr "-o a file" "Not a directory"
printf '>unassigned\nACGT\n' >"$TMP/bad1.fa"
run demux -p "$TMP/bad1.fa" -o "$TMP/bad" "$TMP/reads.fq"
check_status "barcode named unassigned" 2
check_stderr "barcode named unassigned" "records without a barcode"
printf '>a/b\nACGT\n' >"$TMP/bad2.fa"
run demux -p "$TMP/bad2.fa" -o "$TMP/bad" "$TMP/reads.fq"
check_status "barcode name with a /" 2
check_stderr "barcode name with a /" "holds a '/'"
printf '>reads\nACGTACGT\n' >"$TMP/self.fa"
run demux -p "$TMP/self.fa" -o "$TMP" "$TMP/reads.fastq"
cp "$TMP/reads.fq" "$TMP/reads.fastq"
run demux -p "$TMP/self.fa" -o "$TMP" "$TMP/reads.fastq"
check_status "an output that is the input" 2
check_stderr "an output that is the input" "is also an input"
cmp -s "$TMP/reads.fq" "$TMP/reads.fastq" && pass || fail "the input is untouched"
run demux -p "$TMP/bc.fa" -o "$TMP/dm" --format tsv "$TMP/reads.fq"
check_status "--format" 2
check_stderr "--format" "does not apply to demux"
# A summary that could not be written is named before the run; a failed run
# leaves no folder it made.
run demux -p "$TMP/bc.fa" -o "$TMP/dm-new" --summary "$TMP/no-such-folder/sum.tsv" "$TMP/reads.fq"
check_stderr "--summary in a missing folder" "no-such-folder/sum.tsv: No such file or directory"
[ ! -e "$TMP/dm-new" ] && pass || fail "--summary in a missing folder: DIR made"
gzip -c "$TMP/reads.fq" >"$TMP/whole.fq.gz"
head -c $(($(wc -c <"$TMP/whole.fq.gz") - 10)) "$TMP/whole.fq.gz" >"$TMP/cut.fq.gz"
run demux -p "$TMP/bc.fa" -o "$TMP/dm-new" "$TMP/cut.fq.gz"
check_status "a truncated input" 2
[ ! -e "$TMP/dm-new" ] && pass || fail "a truncated input: the folder it made is left behind"
mkdir -p "$TMP/dm-old"
run demux -p "$TMP/bc.fa" -o "$TMP/dm-old" "$TMP/cut.fq.gz"
[ -d "$TMP/dm-old" ] && [ -z "$(ls -A "$TMP/dm-old")" ] && pass || fail "a truncated input: a folder that was there stays, empty"
run demux --alphabet text -e abc -o "$TMP/dm" "$TMP/reads.fq"
check_status "text patterns" 2
check_stderr "text patterns" "--alphabet text does not apply"
run compile --alphabet text -e abc -o "$TMP/text.smdb"
run demux -d "$TMP/text.smdb" -o "$TMP/dm" "$TMP/reads.fq"
check_stderr "a text database" "text.smdb was compiled for text"

# A refused or failed demux leaves every earlier file as it was: the files
# are written in a temporary folder inside DIR and moved to their names
# only when the run succeeds (one that is also an input was refused only
# once an earlier file had been replaced by a 1 MiB partial file).
mkdir -p "$TMP/keep"
awk 'BEGIN { for (i = 0; i < 40000; i++) printf ">r%d\nACGTACGTTTTTGGGGCCCCAAAACCCC\n", i }' >"$TMP/keep/p1.fasta"
printf '>p1\nGGGGGGGG\n>p2\nACGTACGT\n' >"$TMP/keep/bc.fa"
echo old >"$TMP/keep/unassigned.fasta"
echo old >"$TMP/keep/p2.fasta"
run demux --buffer-size 64K -p "$TMP/keep/bc.fa" -o "$TMP/keep" "$TMP/keep/p1.fasta"
check_status "an output that is an input, among others (exit)" 2
check_stderr "an output that is an input, among others" "output $TMP/keep/p1.fasta is also an input"
[ "$(cat "$TMP/keep/unassigned.fasta")" = old ] && [ "$(cat "$TMP/keep/p2.fasta")" = old ] && pass ||
    fail "a refused demux replaced earlier files ($(wc -c <"$TMP/keep/unassigned.fasta") bytes in unassigned.fasta)"
ls -A "$TMP/keep" | grep -q '^\.seqmatch-tmp' && fail "a refused demux left its temporary folder" || pass
# A bad record after many: the run fails, the earlier files stay, no temporary folder is left.
cp "$TMP/keep/p1.fasta" "$TMP/bad.fasta"
printf '>bad\nAC>GT\n' >>"$TMP/bad.fasta"
run demux --buffer-size 64K -p "$TMP/keep/bc.fa" -o "$TMP/keep" "$TMP/bad.fasta"
check_status "demux of a bad input (exit)" 2
[ "$(cat "$TMP/keep/unassigned.fasta")" = old ] && [ "$(cat "$TMP/keep/p2.fasta")" = old ] && pass ||
    fail "a failed demux replaced earlier files"
ls -A "$TMP/keep" | grep -q '^\.seqmatch-tmp' && fail "a failed demux left its temporary folder" || pass
# Success replaces them; an existing file keeps its permissions.
chmod 600 "$TMP/keep/p2.fasta"
head -n 4 "$TMP/keep/p1.fasta" >"$TMP/bad.fasta.ok"
run demux -p "$TMP/keep/bc.fa" -o "$TMP/keep" "$TMP/bad.fasta.ok"
check_status "demux over earlier files (exit)" 0
[ "$(grep -c '>' "$TMP/keep/p2.fasta")" = 2 ] && [ "$(stat -c %a "$TMP/keep/p2.fasta")" = 600 ] &&
    [ ! -s "$TMP/keep/unassigned.fasta" ] && pass || fail "a successful demux replaces earlier files, keeping their modes"
ls -A "$TMP/keep" | grep -q '^\.seqmatch-tmp' && fail "a demux left its temporary folder" || pass
# A folder where a file would go is refused before anything is written.
mkdir -p "$TMP/keep2/p1.fasta"
run demux -p "$TMP/keep/bc.fa" -o "$TMP/keep2" "$TMP/bad.fasta.ok"
check_status "a folder in place of an output (exit)" 2
check_stderr "a folder in place of an output" "$TMP/keep2/p1.fasta: Is a directory"
[ "$(ls -A "$TMP/keep2")" = p1.fasta ] && pass || fail "a refused demux wrote files: $(ls -A "$TMP/keep2")"
# SIGTERM while writing: the process ends by the signal, its temporary folder goes.
mkfifo "$TMP/slow.fa"
"$SEQMATCH" demux -p "$TMP/keep/bc.fa" -o "$TMP/keep3" "$TMP/slow.fa" 2>/dev/null &
pid=$!
exec 7>"$TMP/slow.fa"
cat "$TMP/keep/p1.fasta" >&7
for _ in $(seq 50); do ls -A "$TMP/keep3" 2>/dev/null | grep -q '^\.seqmatch-tmp' && break; sleep 0.1; done
kill -TERM $pid
wait $pid
term_status=$?
exec 7>&-
[ $term_status -eq 143 ] && pass || fail "SIGTERM during demux: exit status $term_status, expected 143"
[ -z "$(ls -A "$TMP/keep3" 2>/dev/null)" ] && pass || fail "SIGTERM during demux left: $(ls -A "$TMP/keep3")"

run demux --help
check_status "demux --help" 0
for option in "--gzip" "--anchor" "--barcode-read" "--summary" "--buffer-size" "unassigned"; do
    if grep -qF -- "$option" "$TMP/out"; then pass; else fail "demux --help lists $option"; fi
done
run help demux
grep -q -- --anchor "$TMP/out" && pass || fail "help demux"

finish
