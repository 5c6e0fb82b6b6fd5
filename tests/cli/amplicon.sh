#!/usr/bin/env bash
# seqmatch amplicon, worked out by hand on tiny records: nested products on the + strand
# (every forward site with every reverse site after it), a product on the - strand, seqkit's
# rule (--longest), the size window's edges, IUPAC primers, -m, lower case and N kept in the
# sequence, FASTQ gzip, the three formats, a primer table, several targets; the refusals, one
# line each.
source "$(dirname "$0")/testlib.bash"

# forward primer ACGTTG, reverse primer CCAAGT (its reverse complement ACTTGG).
# r1: forward sites at 2 and 11, reverse sites [19,25) and [26,32); r2: the reverse
# complement of ACGTTG AAAA ACTTGG at 2; r3: shorter than the primers.
printf '>r1 nested\nTTACGTTGGGGACGTTGCCACTTGGAACTTGGTT\n>r2\nGGCCAAGTTTTTCAACGTG\n>r3\nACG\n' >"$TMP/t.fa"
H='#record	start	end	strand	pair	size	forward_errors	reverse_errors'
run amplicon -F ACGTTG -R CCAAGT --sequence "$TMP/t.fa"
check_output_text "every pair of sites, both strands" "$H	sequence
r1	2	25	+	amplicon	23	0	0	ACGTTGGGGACGTTGCCACTTGG
r1	2	32	+	amplicon	30	0	0	ACGTTGGGGACGTTGCCACTTGGAACTTGG
r1	11	25	+	amplicon	14	0	0	ACGTTGCCACTTGG
r1	11	32	+	amplicon	21	0	0	ACGTTGCCACTTGGAACTTGG
r2	2	18	-	amplicon	16	0	0	ACGTTGAAAAACTTGG
"
check_status "products found" 0
check_stderr_empty "no message"
run amplicon -F ACGTTG -R CCAAGT --longest "$TMP/t.fa"
check_output_text "--longest: first forward, last reverse site" "$H
r1	2	32	+	amplicon	30	0	0
r2	2	18	-	amplicon	16	0	0
"
run amplicon -F ACGTTG -R CCAAGT --longest --max-size 29 "$TMP/t.fa"
check_output_text "--longest, then the window" "$H
r2	2	18	-	amplicon	16	0	0
"
run amplicon -F ACGYTG -R CCAAGT --format bed --min-size 21 --max-size 23 "$TMP/t.fa"
check_output_text "IUPAC primer, window edges inclusive, BED" 'r1	2	25	amplicon	1000	+
r1	11	32	amplicon	1000	+
'
run amplicon -F ACGTTG -R CCAAGT --format fasta --max-size 16 "$TMP/t.fa"
check_output_text "FASTA, the - product read on its strand" '>amplicon::r1:11-25(+) forward_errors=0 reverse_errors=0
ACGTTGCCACTTGG
>amplicon::r2:2-18(-) forward_errors=0 reverse_errors=0
ACGTTGAAAAACTTGG
'
run amplicon -F ACGTTG -R CCAAGT --max-size 13 "$TMP/t.fa"
check_output_text "none in the window: the header only" "$H
"
check_status "no product: 1" 1

# r4: the forward primer with one mismatch (ACGATG); r5 lower case with N inside
printf '@r4\nACGATGCCACTTGG\n+\nIIIIIIIIIIIIII\n@r5\nacgttgNNccacttgg\n+\nIIIIIIIIIIIIIIII\n' | gzip >"$TMP/m.fq.gz"
run amplicon -F ACGTTG -R CCAAGT --sequence --no-header "$TMP/m.fq.gz"
check_output_text "exact, FASTQ gzip, case and N kept" 'r5	0	16	+	amplicon	16	0	0	acgttgNNccacttgg
'
run amplicon -F ACGTTG -R CCAAGT -m 1 --format bed -t 3 --chunk-size 4 "$TMP/m.fq.gz"
check_output_text "-m 1: errors per primer, score" 'r4	0	14	amplicon	916	+
r5	0	16	amplicon	1000	+
'
printf '# name forward reverse\n\none\tACGTTG\tCCAAGT\r\ntwo\tGGCCAA\tACGTTG\n' >"$TMP/pairs.tsv"
run amplicon -p "$TMP/pairs.tsv" --max-size 20 "$TMP/t.fa" "$TMP/m.fq.gz"
check_output_text "a primer table, several targets: the file named" "#file	record	start	end	strand	pair	size	forward_errors	reverse_errors
$TMP/t.fa	r1	11	25	+	one	14	0	0
$TMP/t.fa	r2	0	18	+	two	18	0	0
$TMP/t.fa	r2	2	18	-	one	16	0	0
$TMP/m.fq.gz	r5	0	16	+	one	16	0	0
"
run amplicon -p "$TMP/pairs.tsv" --max-size 20 --no-filename -o "$TMP/o.bed" --format bed "$TMP/t.fa"
if [ "$(cut -f4 "$TMP/o.bed" | tr '\n' ' ')" = "one two one " ]; then pass; else fail "-o, --no-filename"; fi
run_stdin "$TMP/t.fa" amplicon -F ACGTTG -R CCAAGT --longest --no-header
check_output_text "standard input" 'r1	2	32	+	amplicon	30	0	0
r2	2	18	-	amplicon	16	0	0
'

# refusals: one line, status 2
refuse() { # name substring args...
    local name=$1 text=$2
    shift 2
    run amplicon "$@"
    check_status "$name" 2
    check_stderr "$name" "$text"
}
refuse "no primers" "no primer pair given" "$TMP/t.fa"
refuse "-F alone" "-F and -R go together" -F ACGTTG "$TMP/t.fa"
refuse "bad format" "'sam' is not tsv, bed or fasta" -F ACGTTG -R CCAAGT --format sam "$TMP/t.fa"
refuse "--sequence with bed" "--sequence adds a column to tsv" -F ACGTTG -R CCAAGT --format bed --sequence "$TMP/t.fa"
refuse "window upside down" "--min-size is above --max-size" -F ACGTTG -R CCAAGT --min-size 30 --max-size 20 "$TMP/t.fa"
refuse "bad primer" "'X' is no DNA or IUPAC symbol" -F ACGTTG -R CCXAGT "$TMP/t.fa"
refuse "every window" "every window of its length would be a hit" -F ACGTTG -R CCAAGT -m 6 "$TMP/t.fa"
refuse "not for amplicon" "does not apply to amplicon" -F ACGTTG -R CCAAGT --circular "$TMP/t.fa"
refuse "missing target" "$TMP/none.fa" -F ACGTTG -R CCAAGT "$TMP/none.fa"
# an input refused at its start leaves standard output empty: the header waits for it
head -c 20 "$TMP/m.fq.gz" >"$TMP/cut.fq.gz"
refuse "truncated gzip" "cut.fq.gz" -F ACGTTG -R CCAAGT "$TMP/cut.fq.gz"
check_stdout_empty "truncated gzip: no header written"
printf 'hello\n' >"$TMP/plain.txt"
refuse "plain text" "not FASTA or FASTQ" -F ACGTTG -R CCAAGT "$TMP/plain.txt"
if grep -q -- "--alphabet" "$TMP/err"; then fail "plain text: amplicon has no --alphabet to offer"; else pass; fi
check_stdout_empty "plain text: no header written"
# the header still heads a run with no product, and a run's products
run amplicon -F GGGGGGGGGG -R CCCCCCCCCC "$TMP/t.fa"
check_status "no product" 1
check_output_text "no product: the header alone" "$(printf '#record\tstart\tend\tstrand\tpair\tsize\tforward_errors\treverse_errors\n')
"
printf 'one\tACGTTG\n' >"$TMP/bad.tsv"
refuse "table of two columns" "bad.tsv: line 1: want name<TAB>forward<TAB>reverse, got two fields" -p "$TMP/bad.tsv" "$TMP/t.fa"
run amplicon --help
if grep -q -- "--longest" "$TMP/out" && [ "$status" -eq 0 ]; then pass; else fail "--help"; fi
finish
