# seqmatch filter: records written byte for byte as read (line layout, \r\n,
# header comments, blank lines), -v, --matched/--unmatched, gzip in and
# out, standard input, paired files in step, --lines as grep -F, anchors,
# and the refusals. (tests/reads/reads_oracle.c checks the choice of
# records against the definitions on random inputs.)
. "$(dirname "$0")/testlib.bash"
READS=data/reads

# A FASTA file in every layout the reader takes: header comments, wrapped
# lines, \r\n, a blank line, no line end at the very end.
printf '>a first record\r\nACGTAC\r\nGGTT\r\n\r\n>b\r\nTTTTTTTTTT\r\n>c  tab\there\r\nGGACGTACAA' >"$TMP/layout.fa"

run filter -e ACGTAC "$TMP/layout.fa"
check_status "exit with a hit" 0
printf '>a first record\r\nACGTAC\r\nGGTT\r\n\r\n>c  tab\there\r\nGGACGTACAA' >"$TMP/want"
check_output "records as read (\\r\\n, comments, blank line; no line end added after the last)" "$TMP/want"
check_stderr_empty "no message"

run filter -v -e ACGTAC "$TMP/layout.fa"
check_status "-v exit" 0
printf '>b\r\nTTTTTTTTTT\r\n' >"$TMP/want"
check_output "-v: the record without a hit" "$TMP/want"

# A pattern in every record gives the file back, byte for byte (it added a
# final line end the input did not have).
run filter -e T "$TMP/layout.fa"
check_output "every record: the input itself" "$TMP/layout.fa"
# Two inputs: the first one's last record gets the line end the next needs.
run filter -e T "$TMP/layout.fa" "$TMP/layout.fa"
{ cat "$TMP/layout.fa"; printf '\n'; cat "$TMP/layout.fa"; } >"$TMP/want"
check_output "two inputs without final line ends" "$TMP/want"

# A hit across a line break counts (GTACGG spans ACGTAC / GGTT).
run filter --strand + -e TACGGT "$TMP/layout.fa"
printf '>a first record\r\nACGTAC\r\nGGTT\r\n\r\n' >"$TMP/want"
check_output "hit across a line break" "$TMP/want"

# A read command that ran exits 0 whatever it kept (a clean sample must pass
# set -e, Snakemake and Nextflow, as with cutadapt, BBDuk and seqkit).
run filter -e CCCCCCCC "$TMP/layout.fa"
check_status "no record: exit 0" 0
check_stdout_empty "no record: nothing written"

# --matched and --unmatched split the input: together they hold every record once.
zcat $READS/r1.fq.gz >"$TMP/r1.fq"
run filter -e GATC -m 0 --matched "$TMP/m.fq" --unmatched "$TMP/u.fq" $READS/r1.fq.gz
check_status "split exit" 0
check_stdout_empty "split: nothing on standard output"
total=$(grep -c '^@short_read' "$TMP/r1.fq")
m=$(grep -c '^@short_read' "$TMP/m.fq")
u=$(grep -c '^@short_read' "$TMP/u.fq")
if [ "$((m + u))" -eq "$total" ] && [ "$m" -gt 0 ] && [ "$u" -gt 0 ]; then pass; else fail "split: $m + $u records of $total"; fi
# the reads with GATC, by awk on the sequence lines (GATC is its own reverse complement)
awk 'NR % 4 == 2 && /GATC/ { n++ } END { print n }' "$TMP/r1.fq" >"$TMP/awk_count"
if [ "$(cat "$TMP/awk_count")" -eq "$m" ]; then pass; else fail "split: $m matched, awk finds $(cat "$TMP/awk_count")"; fi
sort "$TMP/m.fq" "$TMP/u.fq" >"$TMP/both"
sort "$TMP/r1.fq" >"$TMP/sorted"
if cmp -s "$TMP/both" "$TMP/sorted"; then pass; else fail "split: the lines of both outputs differ from the input's"; fi

# gzip out when the name ends in .gz; standard input in; the same records.
run filter -e GATC $READS/r1.fq.gz -o "$TMP/m.fq.gz"
if gzip -t "$TMP/m.fq.gz" 2>/dev/null && zcat "$TMP/m.fq.gz" | cmp -s - "$TMP/m.fq"; then pass; else fail "gzip output"; fi
run_stdin "$TMP/r1.fq" filter -e GATC
check_output "standard input" "$TMP/m.fq"
run filter -e GATC -o "$TMP/empty.fq.gz" -e CCCCCCCCCCCCCCCCCCCCCCCCC --anchor end --strand + "$TMP/layout.fa"
if [ "$status" -eq 0 ] && gzip -t "$TMP/empty.fq.gz" && [ -z "$(zcat "$TMP/empty.fq.gz")" ]; then pass; else fail "no record: an empty gzip file"; fi

# Paired files: a pair is chosen whole when either mate has a hit.
run filter -e GGATCC -1 $READS/r1.fq.gz -2 $READS/r2.fq.gz --matched "$TMP/pm_#.fq" --unmatched "$TMP/pu_#.fq"
check_status "paired exit" 0
zcat $READS/r2.fq.gz >"$TMP/r2.fq"
paste <(awk 'NR % 4 == 1' "$TMP/r1.fq") <(awk 'NR % 4 == 2' "$TMP/r1.fq") <(awk 'NR % 4 == 2' "$TMP/r2.fq") |
    awk '$2 ~ /GGATCC/ || $3 ~ /GGATCC/ { print $1 }' >"$TMP/want_names"
awk 'NR % 4 == 1' "$TMP/pm_1.fq" >"$TMP/got1"
awk 'NR % 4 == 1 { sub(/\/2$/, "/1"); print }' "$TMP/pm_2.fq" >"$TMP/got2"
if [ -s "$TMP/want_names" ] && cmp -s "$TMP/want_names" "$TMP/got1" && cmp -s "$TMP/want_names" "$TMP/got2"; then
    pass
else
    fail "paired: the pairs with GGATCC in either mate (awk: $(wc -l <"$TMP/want_names"), got $(wc -l <"$TMP/got1"))"
fi
pairs=$(($(wc -l <"$TMP/pm_1.fq") + $(wc -l <"$TMP/pu_1.fq")))
if [ "$pairs" -eq "$(wc -l <"$TMP/r1.fq")" ] && cmp -s <(sort "$TMP/pm_2.fq" "$TMP/pu_2.fq") <(sort "$TMP/r2.fq"); then
    pass
else
    fail "paired: the two outputs of each mate hold its file"
fi

run filter -e GGATCC -1 $READS/r1.fq.gz -2 $READS/r2.fq.gz -o "$TMP/p.fq"
check_status "paired output without #" 2
check_stderr "paired output without #" "needs a '#'"
run filter -e GGATCC -1 $READS/r1.fq.gz -2 $READS/r2.fq.gz
check_status "paired to standard output" 2
check_stderr "paired to standard output" "named outputs"
run filter -e GGATCC -1 $READS/r1.fq.gz -o "$TMP/p_#.fq"
check_status "-1 without -2" 2
check_stderr "-1 without -2" "both -1 FILE and -2 FILE"
head -8 "$TMP/r2.fq" >"$TMP/short2.fq"
run filter -e GGATCC -1 $READS/r1.fq.gz -2 "$TMP/short2.fq" -o "$TMP/p_#.fq"
check_status "mates of unequal count" 2
check_stderr "mates of unequal count" "has more records than"
[ ! -e "$TMP/p_1.fq" ] && pass || fail "a failed run leaves no output"
sed '1s/.*/@other_name\/2/' "$TMP/r2.fq" >"$TMP/renamed2.fq"
run filter -e GGATCC -1 "$TMP/r1.fq" -2 "$TMP/renamed2.fq" -o "$TMP/p_#.fq"
check_status "mates out of step" 2
check_stderr "mates out of step" "reads out of step: record 1 is 'short_read_1/1'"

# --lines: a text filter, as grep -F.
printf 'the timeout was hit\nall good\r\nanother Timeout\nno line end: timeout' >"$TMP/log.txt"
run filter --lines -e timeout "$TMP/log.txt"
printf 'the timeout was hit\nno line end: timeout' >"$TMP/want"
check_output "--lines" "$TMP/want"
run filter --lines -i -v -e timeout "$TMP/log.txt"
printf 'all good\r\n' >"$TMP/want"
check_output "--lines -i -v (\\r\\n kept)" "$TMP/want"
run filter --alphabet text -e timeout "$TMP/log.txt"
check_status "text without --lines" 2
check_stderr "text without --lines" "give --lines"

# Anchors: a primer at the read start, up to 1 edit.
printf '@r1\nACGTTGCAGGGGGG\n+\nIIIIIIIIIIIIII\n@r2\nGGGGACGTTGCAGG\n+\nIIIIIIIIIIIIII\n@r3\nCGTTGCAGGGGGGG\n+\nIIIIIIIIIIIIII\n' >"$TMP/anch.fq"
run filter -e ACGTTGCA -k 1 --strand + --anchor start "$TMP/anch.fq"
check_output_text "--anchor start -k 1" "$(printf '@r1\nACGTTGCAGGGGGG\n+\nIIIIIIIIIIIIII\n@r3\nCGTTGCAGGGGGGG\n+\nIIIIIIIIIIIIII\n')
"
run filter -e ACGTTGCA -k 1 --strand + "$TMP/anch.fq"
if [ "$(grep -c '^@r' "$TMP/out")" -eq 3 ]; then pass; else fail "--anchor any: all three"; fi

# A saved database, and the options of search that do not apply.
run compile -e GATC -o "$TMP/gatc.smdb"
run filter -d "$TMP/gatc.smdb" $READS/r1.fq.gz
check_output "-d" "$TMP/m.fq"
for opt in "--format tsv" "-q" "--max-hits 3" "--no-header" "-H"; do
    run filter -e GATC $opt $READS/r1.fq.gz
    check_status "filter $opt" 2
    check_stderr "filter $opt" "does not apply to filter"
done
run filter -e GATC $READS/r1.fq.gz -o $READS/r1.fq.gz
check_status "output is the input" 2
check_stderr "output is the input" "is also an input"
run filter -e GATC "$TMP/r1.fq" --matched "$TMP/x.fq" --unmatched "$TMP/x.fq"
check_status "one name for two outputs" 2
check_stderr "one name for two outputs" "named for two outputs"
printf '>x\nACGT\n' >"$TMP/x.fa"
run filter -e ACGT "$TMP/x.fa" "$TMP/r1.fq"
check_status "FASTA then FASTQ" 2
check_stderr "FASTA then FASTQ" "give inputs of one format"

run filter --help
check_status "filter --help" 0
for option in "--invert" "--matched" "--unmatched" "--read1" "--anchor" "Exit status"; do
    if grep -qF -- "$option" "$TMP/out"; then pass; else fail "filter --help lists $option"; fi
done
run help filter
grep -q -- --anchor "$TMP/out" && pass || fail "help filter"

finish
