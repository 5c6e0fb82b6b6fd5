# Pattern files as people have them: FASTA, one per line, and two-column
# tables (name and sequence: TSV, CSV, semicolons, quotes, a header row) as
# primer lists come out of spreadsheets; reads and protein given as DNA
# patterns are refused with a message that says what to do.
. "$(dirname "$0")/testlib.bash"
T=$(printf '\t')

printf '>chr\nTTGAATTCAAGGATCCAACTGCAGTT\n' >"$TMP/g.fa"
# the hits of EcoRI and BamHI, forward strand, named as given
want() { printf '#record\tpattern\tstrand\tstart\tend\terrors\tmatched\nchr\t%s\t+\t2\t8\t0\tGAATTC\nchr\t%s\t+\t10\t16\t0\tGGATCC\n' "$1" "$2"; }

printf 'EcoRI\tGAATTC\nBamHI\tGGATCC\n' >"$TMP/p.txt"
run search --strand + -p "$TMP/p.txt" "$TMP/g.fa"
want EcoRI BamHI >"$TMP/want"
check_output "name<TAB>sequence" "$TMP/want"

printf 'name\tsequence\r\nEcoRI\t GAATTC \r\n\r\nBamHI\tGGATCC\t\t\r\n' >"$TMP/p.tsv"
run search --strand + -p "$TMP/p.tsv" "$TMP/g.fa"
check_output "TSV with a header, CRLF, blanks and trailing tabs" "$TMP/want"

printf '"Primer name","Sequence (5'"'"'-3'"'"')"\n"Eco, RI",GAA TTC\n"Bam""HI" , "GGATCC"\n' >"$TMP/p.csv"
run search --strand + -p "$TMP/p.csv" "$TMP/g.fa"
want 'Eco, RI' 'Bam"HI' >"$TMP/want_quoted"
check_output "CSV with quotes and a header" "$TMP/want_quoted"

printf 'EcoRI;GAATTC\nBamHI;GGATCC\n' >"$TMP/semicolon.txt"
run search --strand + -p "$TMP/semicolon.txt" "$TMP/g.fa"
check_output "semicolons" "$TMP/want"

gzip -c "$TMP/p.csv" >"$TMP/p.csv.gz"
run compile -p "$TMP/p.csv.gz" --explain
if grep -q "^patterns  *2$" "$TMP/out"; then pass; else fail "gzip'd CSV: $(grep patterns "$TMP/out")"; fi

# A row of one field is a pattern named after itself; FASTA and lines as before.
printf 'GAATTC\nBamHI,GGATCC\n' >"$TMP/mixed.csv"
run search --strand + -p "$TMP/mixed.csv" "$TMP/g.fa"
want GAATTC BamHI >"$TMP/want_mixed"
check_output "a row of one field" "$TMP/want_mixed"
printf 'GAATTC\nGGATCC\n' >"$TMP/lines.txt"
run search --strand + -p "$TMP/lines.txt" "$TMP/g.fa"
want GAATTC GGATCC >"$TMP/want_lines"
check_output "one pattern per line" "$TMP/want_lines"

# Text: lines are patterns (a comma or a tab is a byte like any other), and
# a .tsv or .csv name makes a table.
printf 'one two\tthree, four\n' >"$TMP/words.txt"
run compile --alphabet text -p "$TMP/words.txt" --explain
if grep -q "^patterns  *1$" "$TMP/out"; then pass; else fail "text lines with a tab and a comma: one pattern"; fi
printf 'line of text\nhello there, world\n' >"$TMP/log.txt"
printf 'name,pattern\ngreeting,"hello there, world"\n' >"$TMP/words.csv"
run search --alphabet text --lines -p "$TMP/words.csv" --no-header "$TMP/log.txt"
check_output_text "text CSV by its name, with a header" "$TMP/log.txt:2${T}greeting${T}+${T}0${T}18${T}0${T}hello there, world
"

# Refusals, naming the file and line.
printf 'x\tGAATTC\tGG\n' >"$TMP/three.tsv"
run search -p "$TMP/three.tsv" "$TMP/g.fa"
check_status "three columns" 2
check_stderr "three columns" "$TMP/three.tsv: line 1: more than two columns; a pattern table has two, name and sequence (name<TAB>sequence)"
printf 'a,GAATTC\nb,\n' >"$TMP/empty.csv"
run search -p "$TMP/empty.csv" "$TMP/g.fa"
check_status "empty sequence" 2
check_stderr "empty sequence" "$TMP/empty.csv: line 2: pattern 'b' has no sequence"
printf 'a,"GAATTC\n' >"$TMP/quote.csv"
run search -p "$TMP/quote.csv" "$TMP/g.fa"
check_stderr "unclosed quote" "$TMP/quote.csv: line 1: a quoted field without its closing quote"

# Reads as patterns: FASTQ is named, with what to do instead.
printf '@r1\nGAATTC\n+\nIIIIII\n' >"$TMP/reads.fq"
run search -p "$TMP/reads.fq" "$TMP/g.fa"
check_status "FASTQ patterns" 2
check_stderr "FASTQ patterns" "$TMP/reads.fq: this is FASTQ (reads: '@' header, sequence, '+', qualities), not a pattern file; patterns are FASTA, one per line, or a table of name and sequence (TSV or CSV); reads to search go after the options, as targets"
# Protein (or words) as DNA patterns: the symbol is named, and --alphabet text.
printf '>hb\nMVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHF\n' >"$TMP/protein.fa"
run search -p "$TMP/protein.fa" "$TMP/g.fa"
check_status "protein patterns" 2
check_stderr "protein patterns" "pattern 1 ('hb'): 'L' at position 3 is not a DNA or IUPAC symbol; for protein or other text patterns use --alphabet text"
run search --alphabet text -p "$TMP/protein.fa" "$TMP/g.fa"
check_status "protein patterns, --alphabet text" 1

finish
