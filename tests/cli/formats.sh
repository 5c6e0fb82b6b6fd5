# Golden outputs of every format on a small FASTA whose hits were worked out
# by hand: both strands, a lower-case record, an IUPAC pattern, a hit across a
# line break, a record without hits, U read as T, N matching only with
# --text-iupac; then the same hits through gzip, stdin, -o, -d and FASTQ.
. "$(dirname "$0")/testlib.bash"

run search -p $DATA/patterns.fa $DATA/small.fa
check_status "tsv exit" 0
check_output "tsv" $DATA/small.tsv
check_stderr_empty "tsv stderr"

run search -p $DATA/patterns.fa --format bed $DATA/small.fa
check_status "bed exit" 0
check_output "bed" $DATA/small.bed

run search -p $DATA/patterns.fa --format jsonl $DATA/small.fa
check_status "jsonl exit" 0
check_output "jsonl" $DATA/small.jsonl

run search -p $DATA/patterns.fa --format count $DATA/small.fa
check_status "count exit" 0
check_output "count" $DATA/small.count

run search -p $DATA/patterns.fa --format=tsv --no-header $DATA/small.fa
tail -n +2 $DATA/small.tsv >"$TMP/noheader"
check_output "--no-header" "$TMP/noheader"

# The same patterns as a plain list (named after their text), blank line skipped.
run search -p $DATA/patterns.txt --format count $DATA/small.fa
check_output_text "pattern list" "GAATTC	8
ACGTAC	2
TTGRAT	2
total	12
"

# -e patterns, named after their text, in command-line order after -p.
run search -e TTGRAT -p $DATA/patterns.fa -e gaattc --format count $DATA/small.fa
check_output_text "-e and -p mixed" "TTGRAT	2
EcoRI	8
fwd_only	2
iupac_R	2
gaattc	8
total	22
"

# Duplicate patterns are distinct: each reports its own hits.
run search -e ACGTAC -e ACGTAC --strand + $DATA/small.fa
check_output_text "duplicates" "#record	pattern	strand	start	end	errors	matched
chr1	ACGTAC	+	0	6	0	ACGTAC
chr1	ACGTAC	+	0	6	0	ACGTAC
"

run search -p $DATA/patterns.fa --strand + $DATA/small.fa
check_output "--strand +" $DATA/small_forward.tsv
run search -p $DATA/patterns.fa --strand - $DATA/small.fa
check_output "--strand -" $DATA/small_reverse.tsv
run search -p $DATA/patterns.fa --strand both $DATA/small.fa
check_output "--strand both" $DATA/small.tsv

run search -p $DATA/patterns.fa --text-iupac $DATA/small.fa
check_output "--text-iupac" $DATA/small_text_iupac.tsv

# Forced engines give the same hits.
for engine in automaton shiftand auto; do
    run search -p $DATA/patterns.fa --engine $engine $DATA/small.fa
    check_output "--engine $engine" $DATA/small.tsv
done
run search -p $DATA/patterns.fa --build-threads 0 $DATA/small.fa
check_output "--build-threads 0" $DATA/small.tsv
run search -p $DATA/patterns.fa --build-threads 3 $DATA/small.fa
check_output "--build-threads 3" $DATA/small.tsv

# Counts equal the rows the same options print, per pattern and in total.
for strand in both + -; do
    run search -p $DATA/patterns.fa --strand $strand --no-header $DATA/small.fa
    cut -f2 "$TMP/out" | sort | uniq -c | awk '{print $2 "\t" $1}' >"$TMP/row_counts"
    rows=$(wc -l <"$TMP/out")
    run search -p $DATA/patterns.fa --strand $strand --format count $DATA/small.fa
    grep -v '^total' "$TMP/out" | awk -F'\t' '$2 > 0' | sort >"$TMP/count_counts"
    if cmp -s "$TMP/row_counts" "$TMP/count_counts" && grep -qx "total	$rows" "$TMP/out"; then
        pass
    else
        fail "count equals rows (--strand $strand)"
    fi
done

# Several files: records numbered across files, output in file order, and
# every hit names its file (BED: in the name column, FILE:PATTERN, so that
# the six columns stay).
with_file() { # FILE: prefixes each BED name (column 4) with FILE:
    awk -F'\t' -v OFS='\t' -v f="$1" '{ $4 = f ":" $4; print }'
}
run search -p $DATA/patterns.fa --format bed $DATA/small.fa $DATA/crlf.fa $DATA/small.fa
{ with_file $DATA/small.fa <$DATA/small.bed; grep '^chr2' $DATA/small.bed | with_file $DATA/crlf.fa
  with_file $DATA/small.fa <$DATA/small.bed; } >"$TMP/multi"
check_output "multiple files (and CRLF)" "$TMP/multi"
run search -p $DATA/patterns.fa --format bed --no-filename $DATA/small.fa $DATA/crlf.fa $DATA/small.fa
{ cat $DATA/small.bed; grep '^chr2' $DATA/small.bed; cat $DATA/small.bed; } >"$TMP/multi_plain"
check_output "multiple files, --no-filename" "$TMP/multi_plain"
# TSV: a first column, named in the header line; jsonl: a "file" key first.
run search -p $DATA/patterns.fa $DATA/small.fa $DATA/crlf.fa
{ printf '#file\t'; head -n 1 $DATA/small.tsv | cut -c2-
  tail -n +2 $DATA/small.tsv | sed "s|^|$DATA/small.fa\t|"
  grep '^chr2' $DATA/small.tsv | sed "s|^|$DATA/crlf.fa\t|"; } >"$TMP/multi_tsv"
check_output "multiple files, tsv" "$TMP/multi_tsv"
run search -p $DATA/patterns.fa --format jsonl $DATA/crlf.fa $DATA/small.fa
{ grep '"chr2"' $DATA/small.jsonl | sed "s|^{|{\"file\":\"$DATA/crlf.fa\",|"
  sed "s|^{|{\"file\":\"$DATA/small.fa\",|" $DATA/small.jsonl; } >"$TMP/multi_jsonl"
check_output "multiple files, jsonl" "$TMP/multi_jsonl"
# -H names the file of a single target too; the last of -H / --no-filename wins.
run search -p $DATA/patterns.fa -H --no-header $DATA/crlf.fa
grep '^chr2' $DATA/small.tsv | sed "s|^|$DATA/crlf.fa\t|" >"$TMP/one_with_file"
check_output "-H, one file" "$TMP/one_with_file"
run search -p $DATA/patterns.fa --no-filename --with-filename --no-header $DATA/crlf.fa
check_output "--no-filename then --with-filename" "$TMP/one_with_file"
run search -p $DATA/patterns.fa -H --no-filename $DATA/small.fa
check_output "-H then --no-filename" $DATA/small.tsv
# Counts per file: FILE, PATTERN, COUNT and a total row per file (a block
# per target in order, zero counts included); one file without -H prints
# as before.
run search -p $DATA/patterns.fa --format count $DATA/small.fa $DATA/crlf.fa
{ sed "s|^|$DATA/small.fa\t|" $DATA/small.count
  printf '%s\tEcoRI\t2\n%s\tfwd_only\t0\n%s\tiupac_R\t0\n%s\ttotal\t2\n' $DATA/crlf.fa $DATA/crlf.fa $DATA/crlf.fa $DATA/crlf.fa
} >"$TMP/multi_count"
check_output "count per file" "$TMP/multi_count"
run search -p $DATA/patterns.fa --format count -t 3 --chunk-size 5 $DATA/small.fa $DATA/crlf.fa
check_output "count per file, 3 threads" "$TMP/multi_count"
run search -p $DATA/patterns.fa --format count -H $DATA/small.fa
sed "s|^|$DATA/small.fa\t|" $DATA/small.count >"$TMP/one_count"
check_output "count, -H, one file" "$TMP/one_count"
# --max-hits counts the first hits; files after the stop count zero.
run search -p $DATA/patterns.fa --format count --max-hits 13 $DATA/small.fa $DATA/crlf.fa
{ sed "s|^|$DATA/small.fa\t|" $DATA/small.count
  printf '%s\tEcoRI\t1\n%s\tfwd_only\t0\n%s\tiupac_R\t0\n%s\ttotal\t1\n' $DATA/crlf.fa $DATA/crlf.fa $DATA/crlf.fa $DATA/crlf.fa
} >"$TMP/limit_count"
check_output "count per file, --max-hits" "$TMP/limit_count"
run search -p $DATA/patterns.fa --format count --max-hits 2 $DATA/small.fa $DATA/crlf.fa
{ printf '%s\tEcoRI\t0\n%s\tfwd_only\t2\n%s\tiupac_R\t0\n%s\ttotal\t2\n' $DATA/small.fa $DATA/small.fa $DATA/small.fa $DATA/small.fa
  printf '%s\tEcoRI\t0\n%s\tfwd_only\t0\n%s\tiupac_R\t0\n%s\ttotal\t0\n' $DATA/crlf.fa $DATA/crlf.fa $DATA/crlf.fa $DATA/crlf.fa
} >"$TMP/limit_count"
check_output "count per file, stopped in the first" "$TMP/limit_count"
# Exit status: 0 when any file had a hit.
printf '>none\nTTTTTTTT\n' >"$TMP/none.fa"
run search -p $DATA/patterns.fa --format count "$TMP/none.fa" $DATA/crlf.fa
check_status "a hit in the second file only" 0
run search -p $DATA/patterns.fa "$TMP/none.fa" "$TMP/none.fa"
check_status "no hit in any file" 1

# Standard input: no target, or '-' (named stdin beside other files).
run_stdin $DATA/small.fa search -p $DATA/patterns.fa
check_output "stdin (no target)" $DATA/small.tsv
run_stdin $DATA/small.fa search -p $DATA/patterns.fa --format bed $DATA/crlf.fa -
{ grep '^chr2' $DATA/small.bed | with_file $DATA/crlf.fa; with_file stdin <$DATA/small.bed; } >"$TMP/multi_stdin"
check_output "stdin as '-'" "$TMP/multi_stdin"

# gzip, from a file and from standard input.
gzip -c $DATA/small.fa >"$TMP/small.fa.gz"
run search -p $DATA/patterns.fa "$TMP/small.fa.gz"
check_output "gzip file" $DATA/small.tsv
run_stdin "$TMP/small.fa.gz" search -p $DATA/patterns.fa
check_output "gzip stdin" $DATA/small.tsv
# A gzip-compressed pattern file.
gzip -c $DATA/patterns.fa >"$TMP/patterns.fa.gz"
run search -p "$TMP/patterns.fa.gz" $DATA/small.fa
check_output "gzip patterns" $DATA/small.tsv
# Concatenated gzip members (as bgzip writes) are one stream.
{ printf '>chr2\nccga' | gzip -c; printf 'attcgg\n' | gzip -c; } >"$TMP/members.fa.gz"
run search -p $DATA/patterns.fa --format bed "$TMP/members.fa.gz"
grep '^chr2' $DATA/small.bed >"$TMP/chr2.bed"
check_output "gzip members" "$TMP/chr2.bed"

# FASTQ: names are the header's first word; read2 has no hit.
run search -p $DATA/patterns.fa $DATA/reads.fq
check_status "fastq exit" 0
check_output_text "fastq" "#record	pattern	strand	start	end	errors	matched
read1	fwd_only	+	0	6	0	ACGTAC
read1	EcoRI	+	6	12	0	GAATTC
read1	EcoRI	-	6	12	0	GAATTC
"

# -o FILE and --output=FILE.
run search -p $DATA/patterns.fa -o "$TMP/hits.tsv" $DATA/small.fa
check_status "-o exit" 0
check_stdout_empty "-o stdout"
if cmp -s "$TMP/hits.tsv" $DATA/small.tsv; then pass; else fail "-o file content"; fi
run search -p $DATA/patterns.fa --output="$TMP/hits.jsonl" --format jsonl $DATA/small.fa
if cmp -s "$TMP/hits.jsonl" $DATA/small.jsonl; then pass; else fail "--output= file content"; fi

# Database round trip: compile once, search with -d.
run compile -p $DATA/patterns.fa -o "$TMP/patterns.smdb"
check_status "compile exit" 0
check_stdout_empty "compile stdout"
run search -d "$TMP/patterns.smdb" $DATA/small.fa
check_status "-d exit" 0
check_output "-d tsv" $DATA/small.tsv
run search -d "$TMP/patterns.smdb" --format count $DATA/small.fa
check_output "-d count" $DATA/small.count
run compile -p $DATA/patterns.fa --strand + -o "$TMP/forward.smdb"
run search -d "$TMP/forward.smdb" $DATA/small.fa
check_output "-d keeps --strand" $DATA/small_forward.tsv
run compile -p $DATA/patterns.fa --text-iupac -o "$TMP/iupac.smdb"
run search -d "$TMP/iupac.smdb" $DATA/small.fa
check_output "-d keeps --text-iupac" $DATA/small_text_iupac.tsv

# Pattern longer than every record: no hits, header only, exit 1.
run search -e ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT $DATA/small.fa
check_status "long pattern exit" 1
check_output_text "long pattern output" "#record	pattern	strand	start	end	errors	matched
"
run search -e ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT --format count $DATA/small.fa
check_status "long pattern count exit" 1
check_output_text "long pattern count" "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT	0
total	0
"

# -q prints nothing; the exit status tells.
run search -q -p $DATA/patterns.fa $DATA/small.fa
check_status "-q hit" 0
check_stdout_empty "-q hit stdout"
run search --quiet -e GGGGGGGG $DATA/small.fa
check_status "-q no hit" 1
check_stdout_empty "-q no hit stdout"
run search -q -o "$TMP/quiet_out" -p $DATA/patterns.fa $DATA/small.fa
if [ ! -e "$TMP/quiet_out" ]; then pass; else fail "-q must not create the -o file"; fi

# Progress bar forced on: stdout unchanged, nothing but the bar on stderr.
run search --progress -p $DATA/patterns.fa $DATA/small.fa
check_output "--progress stdout" $DATA/small.tsv
# -o FILE.gz: gzip, read back as the plain output; a shard file stays as
# written (merge reads it), and merge's own FILE.gz is gzip.
run search -p $DATA/patterns.fa $DATA/small.fa
cp "$TMP/out" "$TMP/plain.tsv"
run search -p $DATA/patterns.fa -o "$TMP/hits.tsv.gz" $DATA/small.fa
check_status "-o FILE.gz" 0
gzip -dc "$TMP/hits.tsv.gz" >"$TMP/unzipped.tsv" && cmp -s "$TMP/unzipped.tsv" "$TMP/plain.tsv" && pass ||
    fail "-o FILE.gz: not the plain output in gzip"
run search -p $DATA/patterns.fa --shard 0/1 -o "$TMP/s0.gz" $DATA/small.fa
! gzip -t "$TMP/s0.gz" 2>/dev/null && pass || fail "--shard -o FILE.gz: the shard file compressed"
run merge -o "$TMP/merged.tsv.gz" "$TMP/s0.gz"
check_status "merge -o FILE.gz" 0
gzip -dc "$TMP/merged.tsv.gz" >"$TMP/unzipped.tsv" && cmp -s "$TMP/unzipped.tsv" "$TMP/plain.tsv" && pass ||
    fail "merge -o FILE.gz: not the plain output in gzip"

# Not a terminal: no bar unless forced.
run search -p $DATA/patterns.fa $DATA/small.fa
check_stderr_empty "no bar when stderr is not a terminal"

finish
