#!/usr/bin/env bash
# seqmatch trim, worked out by hand on tiny reads: 3' and 5' adapters, whole
# and partial, anchored and linked, -m, qualities in step, FASTA, CRLF,
# gzip in and out, pairs, --minimum-length, threads; and the refusals, one
# line each.
source "$(dirname "$0")/testlib.bash"
AD=AGATCGGAAGAGC

# r1: the whole adapter at 10; r2: its first 5 bases at the end; r3: its
# last 4 at the start (no 3' hit: the adapter would begin before the read);
# r4: none; r5: the adapter's first 5 with one mismatch (AGTTC) at the end.
printf '@r1 one\nCCCCCCCCCCAGATCGGAAGAGCTTTT\n+\nABCDEFGHIJKLMNOPQRSTUVWXYZ[\n@r2\nTTTTTTTTTTAGATC\n+\nABCDEFGHIJKLMNO\n@r3\nGAGCTTTTTTTTTTT\n+\nIIIIIIIIIIIIIII\n@r4\nACACACACAC\n+\nIIIIIIIIII\n@r5\nTTTTTTTTTTAGTTC\n+\nIIIIIIIIIIIIIII\n' >"$TMP/r.fq"

run trim -a $AD "$TMP/r.fq"
check_output_text "3' exact, partial at the end (default --min-overlap 3)" '@r1 one
CCCCCCCCCC
+
ABCDEFGHIJ
@r2
TTTTTTTTTT
+
ABCDEFGHIJ
@r3
GAGCTTTTTTTTTTT
+
IIIIIIIIIIIIIII
@r4
ACACACACAC
+
IIIIIIIIII
@r5
TTTTTTTTTTAGTTC
+
IIIIIIIIIIIIIII
'
check_status "trim ran" 0
check_stderr_empty "no message"
run trim -a $AD --min-overlap 6 -m 1 --no-progress "$TMP/r.fq"
check_output_text "--min-overlap 6: no partial of 5" "$(printf '@r1 one\nCCCCCCCCCC\n+\nABCDEFGHIJ\n@r2\nTTTTTTTTTTAGATC\n+\nABCDEFGHIJKLMNO\n@r3\nGAGCTTTTTTTTTTT\n+\nIIIIIIIIIIIIIII\n@r4\nACACACACAC\n+\nIIIIIIIIII\n@r5\nTTTTTTTTTTAGTTC\n+\nIIIIIIIIIIIIIII')
"
run trim -a $AD -m 1 "$TMP/r.fq"
if grep -qx 'TTTTTTTTTT' <(sed -n 18p "$TMP/out"); then pass; else fail "-m 1 cuts AGTTC off r5"; fi
run trim -g $AD "$TMP/r.fq"
check_output_text "5': whole, and a partial at the start" "$(printf '@r1 one\nTTTT\n+\nXYZ[\n@r2\nTTTTTTTTTTAGATC\n+\nABCDEFGHIJKLMNO\n@r3\nTTTTTTTTTTT\n+\nIIIIIIIIIII\n@r4\nACACACACAC\n+\nIIIIIIIIII\n@r5\nTTTTTTTTTTAGTTC\n+\nIIIIIIIIIIIIIII')
"
run trim -a "$AD\$" "$TMP/r.fq"
if [ "$(sed -n 2p "$TMP/out")" = CCCCCCCCCCAGATCGGAAGAGCTTTT ] && [ "$(sed -n 6p "$TMP/out")" = TTTTTTTTTTAGATC ]; then pass
else fail "anchored 3' adapter: only a whole one at the read's end"; fi
run trim -g ^CCCCC "$TMP/r.fq"
if [ "$(sed -n 2p "$TMP/out")" = CCCCCAGATCGGAAGAGCTTTT ]; then pass; else fail "anchored 5' adapter"; fi
run trim -a "CCCCC...$AD" "$TMP/r.fq"
if [ "$(sed -n 2p "$TMP/out")" = CCCCC ] && [ "$(sed -n 4p "$TMP/out")" = FGHIJ ] &&
   [ "$(sed -n 6p "$TMP/out")" = TTTTTTTTTT ]; then pass
else fail "linked -a: 5' part then 3' part; the 3' part alone when the 5' one is missing"; fi
run trim -g "CCCCC...$AD" "$TMP/r.fq"
if [ "$(sed -n 2p "$TMP/out")" = CCCCC ] && [ "$(sed -n 6p "$TMP/out")" = TTTTTTTTTTAGATC ]; then pass
else fail "linked -g: both parts required"; fi
run trim -a $AD -a GCTTTT "$TMP/r.fq"
if [ "$(sed -n 2p "$TMP/out")" = CCCCCCCCCC ]; then pass; else fail "two adapters: the longer hit scores more"; fi
run trim -a $AD --minimum-length 11 "$TMP/r.fq"
if [ "$(grep -c '^@r' "$TMP/out" | tr -d ' ')" = 2 ] && grep -q '^@r3' "$TMP/out" && grep -q '^@r5' "$TMP/out"; then pass
else fail "--minimum-length drops the reads cut shorter"; fi

run trim -a $AD --discard-untrimmed "$TMP/r.fq"
if [ "$(grep -c '^@r' "$TMP/out" | tr -d ' ')" = 2 ] && grep -q '^@r1' "$TMP/out" && grep -q '^@r2' "$TMP/out"; then pass
else fail "--discard-untrimmed keeps the reads an adapter cut"; fi
run trim -a $AD --discard-trimmed "$TMP/r.fq"
if [ "$(grep -c '^@r' "$TMP/out" | tr -d ' ')" = 3 ] && ! grep -q '^@r[12]' "$TMP/out"; then pass
else fail "--discard-trimmed keeps the others"; fi

# FASTA (wrapped lines become one), CRLF line ends, gzip in and out, stdin, threads
printf '>f1 x\nCCCCCAGATC\nGGAAGAG\n>f2\nACGT\n' | gzip >"$TMP/f.fa.gz"
run trim -a $AD "$TMP/f.fa.gz" -o "$TMP/o.fa.gz"
if [ "$(gzip -dc "$TMP/o.fa.gz")" = "$(printf '>f1 x\nCCCCC\n>f2\nACGT')" ]; then pass; else fail "FASTA, gzip in and out"; fi
printf '@c1\r\nACGTAGATCGG\r\n+\r\nIIIIIIIIIII\r\n' >"$TMP/crlf.fq"
run_stdin "$TMP/crlf.fq" trim -a $AD -t 3 --chunk-size 16
printf '@c1\r\nACGT\r\n+\r\nIIII\r\n' >"$TMP/crlf_want.fq"
check_output "CRLF kept, from standard input" "$TMP/crlf_want.fq"

# pairs: each mate cut at its own hit, a pair dropped whole
printf '@p1/1\nAAAAAAGATCGG\n+\nIIIIIIIIIIII\n@p2/1\nCCCCCCCCCCCC\n+\nIIIIIIIIIIII\n' >"$TMP/m1.fq"
printf '@p1/2\nGGGGGGGGGGGG\n+\nIIIIIIIIIIII\n@p2/2\nTTAGATCGGAAG\n+\nIIIIIIIIIIII\n' >"$TMP/m2.fq"
run trim -a $AD -A $AD -1 "$TMP/m1.fq" -2 "$TMP/m2.fq" -o "$TMP/p_#.fq"
if [ "$(sed -n 2p "$TMP/p_1.fq")" = AAAAA ] && [ "$(sed -n 6p "$TMP/p_2.fq")" = TT ] &&
   [ "$(sed -n 6p "$TMP/p_1.fq")" = CCCCCCCCCCCC ]; then pass
else fail "pairs: each mate cut at its own hit"; fi
run trim -a $AD -1 "$TMP/m1.fq" -2 "$TMP/m2.fq" -o "$TMP/p_#.fq"
if [ "$(sed -n 2p "$TMP/p_1.fq")" = AAAAA ] && [ "$(sed -n 6p "$TMP/p_2.fq")" = TTAGATCGGAAG ]; then pass
else fail "pairs: -a is mate 1's adapter only, as in cutadapt"; fi
run trim -G TTAG -1 "$TMP/m1.fq" -2 "$TMP/m2.fq" -o "$TMP/p_#.fq"
if [ "$(sed -n 6p "$TMP/p_2.fq")" = ATCGGAAG ] && [ "$(sed -n 2p "$TMP/p_1.fq")" = AAAAAAGATCGG ]; then pass
else fail "pairs: -G is mate 2's 5' adapter"; fi
run trim -A $AD "$TMP/r.fq"
check_stderr "-A without pairs" "mate 2"
run trim -a $AD -A $AD --minimum-length 3 -1 "$TMP/m1.fq" -2 "$TMP/m2.fq" -o "$TMP/q_#.fq.gz"
if [ "$(gzip -dc "$TMP/q_1.fq.gz" | grep -c '^@')" = 1 ] && gzip -dc "$TMP/q_2.fq.gz" | grep -q '^@p1/2'; then pass
else fail "pairs: dropped together when a mate is short"; fi

# demux --trim: the barcode's hit off the read's start (or end)
printf '>b1\nACGTAC\n>b2\nTTGGCCAA\n' >"$TMP/bc.fa"
printf '@d1\nACGTACGGGGGG\n+\nABCDEFGHIJKL\n@d2\nTTGGCCAACCCCC\n+\nABCDEFGHIJKLM\n@d3\nGGGGGGG\n+\nIIIIIII\n' >"$TMP/d.fq"
run demux -p "$TMP/bc.fa" --trim -o "$TMP/dm" "$TMP/d.fq"
if [ "$(cat "$TMP/dm/b1.fastq")" = "$(printf '@d1\nGGGGGG\n+\nGHIJKL')" ] &&
   [ "$(cat "$TMP/dm/b2.fastq")" = "$(printf '@d2\nCCCCC\n+\nIJKLM')" ] &&
   [ "$(cat "$TMP/dm/unassigned.fastq")" = "$(printf '@d3\nGGGGGGG\n+\nIIIIIII')" ]; then pass
else fail "demux --trim: the barcode off the read's start, qualities too; unassigned as read"; fi
printf '@e1\nGGGGGGACGTAC\n+\nABCDEFGHIJKL\n' >"$TMP/e.fq"
run demux -p "$TMP/bc.fa" --trim --anchor end -m 1 -o "$TMP/dm2" "$TMP/e.fq"
if [ "$(cat "$TMP/dm2/b1.fastq")" = "$(printf '@e1\nGGGGGG\n+\nABCDEF')" ]; then pass
else fail "demux --trim --anchor end"; fi
printf '@f1\nACGACGGGGGG\n+\nABCDEFGHIJK\n' >"$TMP/f.fq"
run demux -p "$TMP/bc.fa" --trim -k 1 -o "$TMP/dm3" "$TMP/f.fq"
if [ "$(cat "$TMP/dm3/b1.fastq")" = "$(printf '@f1\nGGGGGG\n+\nFGHIJK')" ]; then pass
else fail "demux --trim -k 1: the hit's span (ACGAC, a deletion) off the start"; fi
run demux -p "$TMP/bc.fa" --trim --anchor any -o "$TMP/dm3" "$TMP/d.fq"
check_stderr "demux --trim --anchor any" "--anchor start or end"

# -k 1 with partial adapters: k1 ends in the adapter's first 7 bases less
# one (AGTCGG, a deletion), k2 starts with its last 11 (a 3' adapter cannot
# begin before the read; a 5' one can), k3 holds it with an insertion.
printf '@k1\nTTTTTTTTTTAGTCGG\n+\nIIIIIIIIIIIIIIII\n@k2\nATCGGAAGAGCTTTTT\n+\nIIIIIIIIIIIIIIII\n@k3\nCCAGATCGGTAAGAGCCC\n+\nIIIIIIIIIIIIIIIIII\n' >"$TMP/k.fq"
run trim -k 1 -a $AD "$TMP/k.fq"
check_output_text "-k 1, 3': the partial adapter with a deletion at the end" "$(printf '@k1\nTTTTTTTTTT\n+\nIIIIIIIIII\n@k2\nATCGGAAGAGCTTTTT\n+\nIIIIIIIIIIIIIIII\n@k3\nCC\n+\nII')
"
run trim -k 1 -g $AD "$TMP/k.fq"
check_output_text "-k 1, 5': the partial adapter at the start" "$(printf '@k1\nTTTTTTTTTTAGTCGG\n+\nIIIIIIIIIIIIIIII\n@k2\nTTTTT\n+\nIIIII\n@k3\nCC\n+\nII')
"
run trim -k 1 --min-overlap 0 -a $AD "$TMP/k.fq"
check_output_text "-k 1 --min-overlap 0: whole adapters only" "$(printf '@k1\nTTTTTTTTTTAGTCGG\n+\nIIIIIIIIIIIIIIII\n@k2\nATCGGAAGAGCTTTTT\n+\nIIIIIIIIIIIIIIII\n@k3\nCC\n+\nII')
"

# refusals: one line each, exit status 2
run trim -k 1 --min-overlap 1 -a $AD "$TMP/r.fq"
check_stderr "--min-overlap <= k (edits)" "every read end would match"
run trim -m 2 --min-overlap 2 -a $AD "$TMP/r.fq"
check_stderr "--min-overlap <= k" "every read end would match"
run trim -a ^ACGT "$TMP/r.fq"
check_stderr "^ on a 3' adapter" "anchors a 5' adapter"
run trim -g 'ACGT$' "$TMP/r.fq"
check_stderr "\$ on a 5' adapter" "anchors a 3' adapter"
run trim -a ACGTX "$TMP/r.fq"
check_status "a symbol no adapter has" 2
check_stderr "a symbol no adapter has: one line" "ACGTX"
# an error bound at an adapter's length would cut every read at its first base: refused, as search refuses it
run trim -a ACGTA -m 5 "$TMP/r.fq"
check_status "-m at the adapter's length" 2
check_stderr "-m at the adapter's length: one line" "allows that many mismatches"
check_stdout_empty "-m at the adapter's length: nothing written"
run trim -g ACG...TTTTTT -k 3 "$TMP/r.fq"
check_stderr "-k at a linked adapter's first part's length" "allows that many edits"
run trim "$TMP/r.fq"
check_stderr "no adapter" "no adapter given"
run trim -e ACGT "$TMP/r.fq"
check_stderr "-e is search's" "does not apply to trim"
run trim --strand both -a ACGT "$TMP/r.fq"
check_stderr "--strand: adapters are on the read as sequenced" "does not apply to trim"
run trim -a $AD -1 "$TMP/m1.fq" -2 "$TMP/m2.fq" -o "$TMP/p.fq"
check_stderr "pairs need a '#'" "'#'"
run trim -a $AD "$TMP/r.fq" -o "$TMP/r.fq"
check_status "output over its input" 2
run trim -a $AD "$TMP/missing.fq"
check_stderr "a missing input" "missing.fq"
printf 'hello\n' >"$TMP/t.txt"
run trim -a $AD "$TMP/t.txt"
check_status "not FASTA or FASTQ" 2
if grep -q -- "--alphabet" "$TMP/err"; then fail "not FASTA or FASTQ: trim has no --alphabet to offer"; else pass; fi
run trim --help
if grep -q -- "--minimum-length" "$TMP/out"; then pass; else fail "trim --help"; fi
finish
