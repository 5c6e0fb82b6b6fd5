#!/usr/bin/env bash
# --cigar (tsv, jsonl), --format sam and bam: alignments worked out by hand,
# then every hit of -m and -k searches checked by applying its CIGAR (the
# pattern against the matched text, reverse-complemented for '-'), and the
# SAM and BAM read back by samtools (view, calmd's NM against the
# reference, index) where it is installed.
source "$(dirname "$0")/testlib.bash"
T=$'\t'

printf '>a\nGGACGTATGCAGG\n>b\nCCTGCATACGTCC\n>c\nTTACGTACTACTGGTT\n' >"$TMP/t.fa"
# One text base more (D) on both strands; the '-' CIGAR reads the pattern
# 5'->3' against the reverse complement of the matched text.
run search -e ACGTTGCA -k 1 --cigar "$TMP/t.fa"
check_output_text "--cigar, -k" "#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched${T}cigar
a${T}ACGTTGCA${T}+${T}2${T}11${T}1${T}ACGTATGCA${T}4=1D4=
b${T}ACGTTGCA${T}-${T}2${T}11${T}1${T}TGCATACGT${T}4=1D4=
"
# One pattern base missing from the text (I), the leftmost place for it.
run search -e ACGTTGCA -k 1 --cigar --no-header <(printf '>x\nGGACGTGCAGG\n')
check_output_text "--cigar, I" "x${T}ACGTTGCA${T}+${T}2${T}9${T}1${T}ACGTGCA${T}3=1I4=
"
# Mismatches: = and X only; a PAM sits on =.
run search -e ACGTACGTAC --pam NGG -m 1 --cigar --no-header <(printf '>p\nTTACGAACGTACTGGTT\n')
check_output_text "--cigar, -m and --pam" "p${T}ACGTACGTAC${T}+${T}2${T}15${T}1${T}ACGAACGTACTGG${T}3=1X9=
"
run search -e ACGTTGCA -k 1 --cigar --format jsonl "$TMP/t.fa"
check_output_text "--cigar, jsonl" '{"record":"a","pattern":"ACGTTGCA","strand":"+","start":2,"end":11,"errors":1,"matched":"ACGTATGCA","cigar":"4=1D4="}
{"record":"b","pattern":"ACGTTGCA","strand":"-","start":2,"end":11,"errors":1,"matched":"TGCATACGT","cigar":"4=1D4="}
'
# Exact hits too (all =), text mode, several files.
printf 'bcbacddc' >"$TMP/seed.txt"
run search --alphabet text -e cacd -k 2 --cigar --no-header "$TMP/seed.txt"
check_output_text "--cigar, text" "$TMP/seed.txt${T}cacd${T}+${T}3${T}6${T}1${T}acd${T}1I3=
"
run search -e GAATTC --cigar -H --no-header <(printf '>e\nAGAATTCA\n')
if awk -F'\t' 'NF != 9 || $9 != "6=" { bad = 1 } END { exit bad || NR != 2 }' "$TMP/out"; then pass
else fail "--cigar with -H: two exact hits, a ninth column 6="; fi

# Refusals.
run search -e ACGT --cigar --format bed "$TMP/t.fa"
check_status "--cigar with bed" 2
check_stderr "--cigar with bed" "--cigar adds a column to tsv or jsonl"
run search -e ACGT --format sam "$TMP/t.fa" "$TMP/t.fa"
check_status "sam with two targets" 2
check_stderr "sam with two targets" "--format sam takes one target"
run search --alphabet text -e acgt --format sam "$TMP/seed.txt"
check_status "sam with text" 2
check_stderr "sam with text" "--format sam is for --alphabet dna"

# Every hit of a larger search: applying the CIGAR to the pattern and the
# matched text (reverse-complemented for '-') uses both up exactly, '=' on
# equal bases, 'X' on different ones, and X + I + D is the errors column.
awk 'BEGIN { srand(5); for (r = 0; r < 4; r++) { s = "";
     for (i = 0; i < 3000; i++) s = s substr("ACGT", 1 + int(rand() * 4), 1); print ">r" r; print s } }' \
    >"$TMP/genome.fa"
# patterns: pieces of the genome with a few edits
awk 'BEGIN { srand(9) } !/^>/ { for (k = 0; k < 6; k++) { p = substr($0, 1 + int(rand() * 2900), 20);
     for (e = 0; e < 2; e++) { i = 1 + int(rand() * 20); c = substr("ACGT", 1 + int(rand() * 4), 1); t = rand();
         if (t < 0.33) p = substr(p, 1, i - 1) c substr(p, i + 1);
         else if (t < 0.66) p = substr(p, 1, i - 1) substr(p, i + 1);
         else p = substr(p, 1, i - 1) c substr(p, i) }
     print p } }' "$TMP/genome.fa" >"$TMP/pats.txt"
check_cigars() {
    awk -F'\t' '
        function rc(s,   i, o, c) { o = ""; for (i = length(s); i > 0; i--) { c = substr(s, i, 1);
            o = o (c == "A" ? "T" : c == "C" ? "G" : c == "G" ? "C" : "A") } return o }
        /^#/ { next }
        { pat = $2; text = ($3 == "-") ? rc($7) : $7; cig = $8; i = 1; j = 1; err = 0
          while (cig != "") { match(cig, /^[0-9]+/); n = substr(cig, 1, RLENGTH) + 0; op = substr(cig, RLENGTH + 1, 1)
              cig = substr(cig, RLENGTH + 2)
              for (k = 0; k < n; k++) {
                  if (op == "=" || op == "X") { same = substr(pat, i, 1) == substr(text, j, 1)
                      if (same != (op == "=")) { print "wrong " op " at " i ": " $0; bad++ } i++; j++; if (op == "X") err++ }
                  else if (op == "I") { i++; err++ } else if (op == "D") { j++; err++ } } }
          if (i != length(pat) + 1 || j != length(text) + 1 || err != $6 || $5 - $4 != length($7)) { print "bad: " $0; bad++ }
          n_hits++ }
        END { if (bad || n_hits < 10) { print n_hits " hits, " bad " bad"; exit 1 } }' "$TMP/out"
}
for how in "-m 3" "-k 2" "-k 3 --report ends" "-k 2 --engine wavefront" "-m 2 --engine pigeonhole"; do
    # shellcheck disable=SC2086
    run search -p "$TMP/pats.txt" $how --cigar -t 2 "$TMP/genome.fa"
    if check_cigars >"$TMP/why"; then pass; else fail "applying the CIGARs of $how"; head -3 "$TMP/why"; fi
done

# SAM, read back by samtools.
if command -v samtools >/dev/null; then
    for how in "-m 3" "-k 2" "-k 3 --report ends"; do
        # shellcheck disable=SC2086
        run search -p "$TMP/pats.txt" $how "$TMP/genome.fa"
        hits=$(grep -vc '^#' "$TMP/out")
        # shellcheck disable=SC2086
        run search -p "$TMP/pats.txt" $how --format sam -o "$TMP/hits.sam" "$TMP/genome.fa"
        if samtools view "$TMP/hits.sam" >"$TMP/view" 2>"$TMP/err" && [ "$(wc -l <"$TMP/view")" -eq "$hits" ] &&
            [ ! -s "$TMP/err" ]; then pass
        else fail "samtools view of $how: $(wc -l <"$TMP/view") of $hits alignments"; fi
        # calmd recomputes NM from POS, CIGAR and SEQ against the reference
        cp "$TMP/genome.fa" "$TMP/ref.fa"
        if samtools calmd "$TMP/hits.sam" "$TMP/ref.fa" >/dev/null 2>"$TMP/err" && ! grep -q "different NM" "$TMP/err"; then pass
        else fail "samtools calmd of $how: $(grep -c 'different NM' "$TMP/err") alignments with another NM"; fi
    done
    # the header: the records with hits, with their lengths
    run search -e ACGTTGCA -k 1 --format sam "$TMP/t.fa"
    check_output_text "sam by hand" "@HD${T}VN:1.6${T}SO:coordinate
@SQ${T}SN:a${T}LN:13
@SQ${T}SN:b${T}LN:13
@PG${T}ID:seqmatch${T}PN:seqmatch${T}VN:$("$SEQMATCH" --version | awk 'NR == 1 { print $2 }')${T}CL:seqmatch search -e ACGTTGCA -k 1 --format sam $TMP/t.fa
ACGTTGCA${T}0${T}a${T}3${T}255${T}4=1D4=${T}*${T}0${T}0${T}ACGTTGCA${T}*${T}NM:i:1
ACGTTGCA${T}16${T}b${T}3${T}255${T}4=1D4=${T}*${T}0${T}0${T}TGCAACGT${T}*${T}NM:i:1
"
else
    echo "alignments.sh: samtools not installed: the SAM read-back is skipped"
fi
# Per pattern and record the hit with the fewest errors, the leftmost of
# those, is the primary alignment; every other hit is secondary (flag 256).
# The flags worked out from the tsv hits (the same hits, in the same order).
for how in "-m 2" "-k 2" "-k 1 --report ends"; do
    # shellcheck disable=SC2086
    run search -p "$TMP/pats.txt" $how --no-header "$TMP/genome.fa"
    awk -F'\t' '{ key = $1 SUBSEP $2; line[NR] = key; err[NR] = $6; strand[NR] = $3
                   if (!(key in best) || $6 < best[key]) { best[key] = $6; first[key] = NR } }
                 END { for (i = 1; i <= NR; i++) print (strand[i] == "-" ? 16 : 0) + (first[line[i]] == i ? 0 : 256) }' \
        "$TMP/out" >"$TMP/want_flags"
    # shellcheck disable=SC2086
    run search -p "$TMP/pats.txt" $how --format sam "$TMP/genome.fa"
    grep -v '^@' "$TMP/out" | cut -f2 >"$TMP/flags"
    primaries=$(grep -cx '0\|16' "$TMP/flags")
    if [ -s "$TMP/flags" ] && cmp -s "$TMP/want_flags" "$TMP/flags"; then pass
    else fail "sam $how: primary and secondary flags ($primaries primary of $(wc -l <"$TMP/flags"))"; fi
    secondaries=$((${secondaries:-0} + $(wc -l <"$TMP/flags") - primaries))
done
if [ "$secondaries" -gt 0 ]; then pass; else fail "sam: no secondary alignment in the cases above"; fi
# @PG names the command line, quoted where a shell would need it
run search -e ACGTTGCA -k 1 --format sam --strand + -o "$TMP/a b.sam" "$TMP/t.fa"
if grep -qxF "@PG${T}ID:seqmatch${T}PN:seqmatch${T}VN:$("$SEQMATCH" --version | awk 'NR == 1 { print $2 }')${T}CL:seqmatch search -e ACGTTGCA -k 1 --format sam --strand + -o '$TMP/a b.sam' $TMP/t.fa" "$TMP/a b.sam"
then pass; else fail "sam: @PG with CL: $(grep '^@PG' "$TMP/a b.sam")"; fi

# The SAM's '-' CIGAR is the tsv one read backwards.
run search -e ACGTTGCA -k 1 --cigar --no-header <(printf '>x\nGGTGCACGTCC\n')
tsv_cigar=$(cut -f8 "$TMP/out")
run search -e ACGTTGCA -k 1 --format sam <(printf '>x\nGGTGCACGTCC\n')
sam_cigar=$(grep -v '^@' "$TMP/out" | cut -f6)
if [ "$tsv_cigar" = "3=1I4=" ] && [ "$sam_cigar" = "4=1I3=" ]; then pass
else fail "'-' CIGAR: tsv '$tsv_cigar', sam '$sam_cigar'"; fi

# BAM: the SAM's header and alignments, through htslib. Without samtools the
# file's frame is checked: BGZF blocks (gzip with the BC subfield) ending in
# the empty end-of-file block; with it, the records read back equal the SAM.
bgzf_eof=1f8b08040000000000ff0600424302001b0003000000000000000000
for how in "-m 2" "-k 2" "-k 1 --report ends"; do
    # shellcheck disable=SC2086
    run search -p "$TMP/pats.txt" $how --format sam -o "$TMP/hits.sam" "$TMP/genome.fa"
    # shellcheck disable=SC2086
    run search -p "$TMP/pats.txt" $how --format bam -o "$TMP/hits.bam" "$TMP/genome.fa"
    check_status "bam $how" 0
    if [ "$(head -c 4 "$TMP/hits.bam" | od -An -tx1 | tr -d ' \n')" = 1f8b0804 ] &&
       [ "$(tail -c 28 "$TMP/hits.bam" | od -An -tx1 | tr -d ' \n')" = "$bgzf_eof" ]; then pass
    else fail "bam $how: not BGZF with its end-of-file block"; fi
    if command -v samtools >/dev/null; then
        if samtools quickcheck "$TMP/hits.bam" && samtools view -h --no-PG "$TMP/hits.bam" | grep -v '^@PG' >"$TMP/view" &&
           grep -v '^@PG' "$TMP/hits.sam" | cmp -s - "$TMP/view"; then pass
        else fail "bam $how: samtools view differs from the SAM: $(grep -v '^@PG' "$TMP/hits.sam" | diff - "$TMP/view" | head -3)"; fi
    fi
done
if command -v samtools >/dev/null; then
    # sorted as the header says: samtools index takes it; a pipe works too
    if samtools index "$TMP/hits.bam" 2>"$TMP/err" && [ -s "$TMP/hits.bam.bai" ]; then pass
    else fail "samtools index of the bam: $(head -2 "$TMP/err")"; fi
    n_sam=$(grep -vc '^@' "$TMP/hits.sam")
    n_pipe=$("$SEQMATCH" search -p "$TMP/pats.txt" -k 1 --report ends --format bam "$TMP/genome.fa" | samtools view -c -)
    if [ "$n_pipe" = "$n_sam" ]; then pass; else fail "bam through a pipe: $n_pipe alignments, want $n_sam"; fi
fi
# a text database, two targets, --min-overlap: refused as for sam
run search -e ACGT --format bam -o "$TMP/x.bam" "$TMP/t.fa" "$TMP/t.fa"
check_status "bam with two targets" 2
check_stderr "bam with two targets" "--format bam takes one target"
run search --alphabet text -e acgt --format bam -o "$TMP/x.bam" "$TMP/seed.txt"
check_status "bam with text" 2
check_stderr "bam with text" "--format bam is for --alphabet dna"
run search -e ACGTACGT -m 1 --min-overlap 5 --format bam -o "$TMP/x.bam" "$TMP/t.fa"
check_status "bam with --min-overlap" 2
check_stderr "bam with --min-overlap" "--format bam"
# a full disk: one line (htslib's bgzf_close keeps its state when its last
# write fails: LeakSanitizer would report htslib's memory, not seqmatch's)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run search -e ACGTTGCA -k 1 --format bam -o /dev/full "$TMP/t.fa"
check_status "bam to /dev/full" 2
if [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "No space left" "$TMP/err"; then pass
else fail "bam to /dev/full: $(head -3 "$TMP/err")"; fi
# no htslib: one line saying so, and no output file left behind
rm -f "$TMP/x.bam"
SEQMATCH_HTSLIB=$TMP/no-such-libhts.so run search -e ACGTTGCA -k 1 --format bam -o "$TMP/x.bam" "$TMP/t.fa"
check_status "bam without htslib" 2
check_stderr "bam without htslib" "htslib"
if [ ! -e "$TMP/x.bam" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]; then pass
else fail "bam without htslib: $(wc -l <"$TMP/err") lines, file left: $(ls "$TMP/x.bam" 2>&1)"; fi

run search --help
if grep -qF -- '--cigar' "$TMP/out" && grep -qF 'sam' "$TMP/out"; then pass; else fail "--help: --cigar, sam"; fi
if grep -qF -- '\-\-cigar' ../man/seqmatch.1; then pass; else fail "man page: --cigar"; fi

finish
