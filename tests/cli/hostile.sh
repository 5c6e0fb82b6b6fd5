# Hostile inputs: what the command does with empty, truncated, mis-encoded,
# malformed, huge or unreadable input, with broken output and with extreme
# limits. Each case pins the exact message or behaviour; docs/hostile-inputs.md
# is the catalogue (including the cases tested in errors.sh, formats.sh,
# text.sh and threads.sh, not repeated here).
#
# SEQMATCH_BIG_TESTS=1 adds the slow cases: a single line of 4 GiB streamed
# from a pipe, 10 GiB through a pipe with its peak RSS checked, hit
# coordinates and counts past 2^32, and 10^7 patterns.
. "$(dirname "$0")/testlib.bash"

H=data/hostile
T=$'\t'

# expect_error NAME MESSAGE ARGS...: exit 2 and exactly the one line "seqmatch: MESSAGE".
expect_error() {
    local name=$1 message=$2
    shift 2
    run "$@"
    check_status "$name (exit)" 2
    if [ "$(cat "$TMP/err")" = "seqmatch: $message" ]; then
        pass
    else
        fail "$name: expected 'seqmatch: $message', got:"
        sed 's/^/    | /' "$TMP/err" | head -3
    fi
}

# expect_bed NAME EXPECTED ARGS...: exit 0, no message, BED output as given.
expect_bed() {
    local name=$1 expected=$2
    shift 2
    run search --format bed "$@"
    check_status "$name (exit)" 0
    check_stderr_empty "$name (stderr)"
    check_output_text "$name" "$expected"
}

# Sanitizer builds use far more memory, and more time, than a release build.
sanitized=0
if grep -qa -e __asan_init -e __tsan_init "$SEQMATCH"; then sanitized=1; fi

# measure_rss ARGS...: runs seqmatch with the caller's standard input, like
# run, and sets rss_kb to its peak resident set size in KiB (empty when it
# cannot be measured).
measure_rss() {
    rss_kb=""
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$TMP/rss" "$SEQMATCH" "$@" >"$TMP/out" 2>"$TMP/err"
        status=$?
        rss_kb=$(tail -n 1 "$TMP/rss")
    else
        # No time(1): poll the high-water mark while it runs.
        "$SEQMATCH" "$@" <&0 >"$TMP/out" 2>"$TMP/err" &
        local pid=$! hwm
        while kill -0 $pid 2>/dev/null; do
            hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$pid/status 2>/dev/null)
            [ -n "$hwm" ] && rss_kb=$hwm
            sleep 0.05
        done
        wait $pid
        status=$?
    fi
}

# check_rss NAME LIMIT_MIB: the last measure_rss stayed under the limit.
check_rss() {
    if [ $sanitized -eq 1 ]; then
        echo "note: $1: peak RSS not checked in a sanitizer build"
    elif [ -z "$rss_kb" ]; then
        echo "note: $1: peak RSS could not be measured"
    elif [ "$rss_kb" -lt $(($2 * 1024)) ]; then
        echo "$1: peak RSS $((rss_kb / 1024)) MiB"
        pass
    else
        fail "$1: peak RSS $((rss_kb / 1024)) MiB, limit $2 MiB"
    fi
}

# run_limited KIB ARGS...: as run, under a virtual memory limit of KIB
# (ulimit -v; not in sanitizer builds, whose shadow memory needs terabytes).
run_limited() {
    local limit=$1
    shift
    if [ $sanitized -eq 1 ]; then
        run "$@"
        return
    fi
    (ulimit -v "$limit" && exec "$SEQMATCH" "$@" <&0 >"$TMP/out" 2>"$TMP/err")
    status=$?
}

# poly BYTES LETTER: BYTES copies of LETTER, streamed.
poly() { head -c "$1" /dev/zero | tr '\0' "$2"; }

# ------------------------------------------------------- empty and blank

# An empty target is a file without records: no hit, exit 1, no message.
run search -e GAATTC $H/empty.fa
check_status "empty target (exit)" 1
check_output_text "empty target" "#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched
"
check_stderr_empty "empty target (stderr)"
run_stdin $H/empty.fa search -e GAATTC --format count
check_status "empty stdin (exit)" 1
check_output_text "empty stdin" "GAATTC${T}0
total${T}0
"
: | gzip -c >"$TMP/empty.fa.gz"
run search -e GAATTC --no-header "$TMP/empty.fa.gz"
check_status "empty gzip member (exit)" 1
check_stdout_empty "empty gzip member"
run search -e GAATTC --no-header $H/blank.fa
check_status "only blank lines (exit)" 1
check_stderr_empty "only blank lines (stderr)"
run search -e GAATTC --format count $H/header_only.fa
check_status "header without sequence (exit)" 1
check_output_text "header without sequence" "GAATTC${T}0
total${T}0
"
run search --lines -e x --no-header $H/empty.fa
check_status "empty file, --lines (exit)" 1
check_stdout_empty "empty file, --lines"
# An empty pattern file next to other patterns adds nothing; alone it is an
# error (errors.sh: "empty pattern set").
run search -p $H/empty.fa -e GAATTC --format count $H/crlf.fa
check_output_text "empty pattern file among others" "GAATTC${T}4
total${T}4
"
expect_error "empty gzip pattern file" "$TMP/empty.fa.gz: no patterns in the file" \
    search -p "$TMP/empty.fa.gz" $H/crlf.fa

# -------------------------------------------------- no final newline

expect_bed "FASTA without final newline" "chr1${T}4${T}10${T}GAATTC${T}1000${T}+
chr1${T}4${T}10${T}GAATTC${T}1000${T}-
" -e GAATTC $H/no_final_newline.fa
expect_bed "FASTQ without final newline" "r1${T}4${T}10${T}GAATTC${T}1000${T}+
r1${T}4${T}10${T}GAATTC${T}1000${T}-
" -e GAATTC $H/no_final_newline.fq
expect_bed "pattern list without final newline" "chr1${T}0${T}5${T}ACGTG${T}1000${T}+
chr1${T}4${T}10${T}GAATTC${T}1000${T}+
chr1${T}4${T}10${T}GAATTC${T}1000${T}-
" -p $H/no_final_newline_patterns.txt $H/no_final_newline.fa
expect_bed "--lines without final newline" "$H/no_final_newline.txt:2${T}6${T}10${T}disk${T}1000${T}+
" --lines -e disk $H/no_final_newline.txt

# ------------------------------------------------------ line endings

# CRLF everywhere: \r is never part of a name, a sequence or a pattern; a hit
# spans a CRLF line break (errors.sh and formats.sh cover crlf.fa's second record).
crlf_hits="chr1${T}0${T}5${T}thr${T}1000${T}+
chr1${T}4${T}10${T}EcoRI${T}1000${T}+
chr1${T}4${T}10${T}EcoRI${T}1000${T}-
chr2${T}2${T}8${T}EcoRI${T}1000${T}+
chr2${T}2${T}8${T}EcoRI${T}1000${T}-
"
expect_bed "CRLF FASTA and CRLF FASTA patterns" "$crlf_hits" -p $H/crlf_patterns.fa $H/crlf.fa
expect_bed "CRLF FASTQ" "r1${T}0${T}5${T}thr${T}1000${T}+
r1${T}4${T}10${T}EcoRI${T}1000${T}+
r1${T}4${T}10${T}EcoRI${T}1000${T}-
r2${T}0${T}6${T}EcoRI${T}1000${T}+
r2${T}0${T}6${T}EcoRI${T}1000${T}-
" -p $H/crlf_patterns.fa $H/crlf.fq
run search -p $H/crlf_patterns.txt --format count $H/crlf.fa
check_output_text "CRLF pattern list (names without \\r)" "GAATTC${T}4
ACGTG${T}1
total${T}5
"
gzip -c $H/crlf.fa >"$TMP/crlf.fa.gz"
expect_bed "CRLF FASTA, gzip" "$crlf_hits" -p $H/crlf_patterns.fa "$TMP/crlf.fa.gz"
# A lone \r (classic Mac OS) ends a line: sequence lines are joined, so the
# hit spans it.
expect_bed "lone CR in a sequence" "chr1${T}4${T}10${T}GAATTC${T}1000${T}+
chr1${T}4${T}10${T}GAATTC${T}1000${T}-
" -e GAATTC $H/lone_cr.fa
# A whole file of \r line ends, and a \r-ended line before '>' in a mixed
# file: the '>' starts a record (it once became one header and no sequence,
# or swallowed the next record).
printf '>m1 first\rACGTGA\rATTC\r>m2\rGAATTC\r' >"$TMP/mac.fa"
expect_bed "classic Mac OS FASTA (\\r line ends)" "m1${T}4${T}10${T}GAATTC${T}1000${T}+
m1${T}4${T}10${T}GAATTC${T}1000${T}-
m2${T}0${T}6${T}GAATTC${T}1000${T}+
m2${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC "$TMP/mac.fa"
printf '>x\nACGT\r>y\nGAATTC\n' >"$TMP/mixed_cr.fa"
expect_bed "\\r line end before '>' in a mixed file" "y${T}0${T}6${T}GAATTC${T}1000${T}+
y${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC "$TMP/mixed_cr.fa"
printf '@q1\rACGT\r+\rIIII\r@q2\rGAATTC\r+\rIIIIII\r' >"$TMP/mac.fq"
expect_bed "classic Mac OS FASTQ" "q2${T}0${T}6${T}GAATTC${T}1000${T}+
q2${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC "$TMP/mac.fq"
printf 'GAATTC\rACGT\r' >"$TMP/mac_patterns.txt"
run search -p "$TMP/mac_patterns.txt" --format count "$TMP/mac.fa"
check_output_text "\\r line ends in a pattern list" "GAATTC${T}4
ACGT${T}2
total${T}6
"
printf '>a\rACGT\rA1\r' >"$TMP/mac_bad.fa"
expect_error "line numbers count \\r line ends" \
    "$TMP/mac_bad.fa: line 3, column 2 (record 'a'): unexpected byte 0x31 ('1') in sequence" \
    search -e ACGT "$TMP/mac_bad.fa"
printf 'one\rtwo disk\r\nthree\n' >"$TMP/mac.txt"
expect_bed "--lines with \\r line ends" "$TMP/mac.txt:2${T}4${T}8${T}disk${T}1000${T}+
" --lines -e disk "$TMP/mac.txt"
# Whole-file text keeps every byte, \r included (text.sh: --lines drops it).
run search --alphabet text -e $'\r' --format count $H/crlf.fa
check_output_text "text mode keeps \\r" "\\r${T}6
total${T}6
"

# ------------------------------------------- headers inside sequences

expect_error "'>' inside a sequence line" \
    "$H/gt_inside_line.fa: line 4, column 3 (record 'b'): unexpected byte 0x3E ('>') in sequence" \
    search -e ACGT $H/gt_inside_line.fa
expect_error "'@' line inside FASTA" \
    "$H/at_line.fa: line 3, column 1 (record 'a'): unexpected byte 0x40 ('@') in sequence" \
    search -e ACGT $H/at_line.fa
expect_error "indented '>' header" \
    "$H/indented_header.fa: line 3, column 2 (record 'a'): unexpected byte 0x3E ('>') in sequence" \
    search -e ACGT $H/indented_header.fa
expect_error "'@' line where the FASTQ sequence belongs" \
    "$H/at_as_sequence.fq: line 2, column 1 (record 'r1'): unexpected byte 0x40 ('@') in sequence" \
    search -e ACGT $H/at_as_sequence.fq
# A quality line may start with '@': it is still the quality line.
expect_bed "quality line starting with '@'" "r1${T}0${T}6${T}GAATTC${T}1000${T}+
r1${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC $H/at_quality.fq

# ------------------------------------------------------- broken FASTQ

# (errors.sh: quality shorter than the sequence.)
expect_error "FASTQ quality longer than the sequence" \
    "$H/long_quality.fq: line 4 (record 'r1'): quality length 5 differs from sequence length 4" \
    search -e ACGT $H/long_quality.fq
# A '+' line that names a read names this one (its first word equal to the
# header's); another name means reads and qualities are out of step.
printf '@r1 one\nACGT\n+r2\nIIII\n' >"$TMP/plus_other.fq"
expect_error "FASTQ '+' line naming another read" \
    "$TMP/plus_other.fq: line 3 (record 'r1'): the '+' line names read 'r2', not this one" \
    search -e ACGT "$TMP/plus_other.fq"
printf '@r1 one\nACGT\n+r1 two\nIIII\n@r2\nACGT\n+\nIIII\n@r3\nACGT\n+ comment\r\nIIII\n' >"$TMP/plus_same.fq"
run search -e ACGT --strand + --format count "$TMP/plus_same.fq"
check_output_text "FASTQ '+' lines naming the read, or none" "ACGT${T}3
total${T}3
"
# Sequence lines go on up to a '+' line (multi-line FASTQ): without one the
# quality is read as more sequence, up to the end of the file.
expect_error "FASTQ without '+' line" \
    "$H/no_plus.fq: line 4 (record 'r1'): unexpected end of file (missing '+' line)" \
    search -e ACGT $H/no_plus.fq
# Multi-line FASTQ (as seqkit and Biopython read it): sequence lines up to
# '+', then quality lines until they hold as many bytes, whatever they start
# with ('@' included).
printf '@w1 wrapped\nACGTGA\nATTCAC\n+\nIIIIII\n@IIIII\n@w2\nGAAT\nTC\n+w2\nIII\nIII\n' >"$TMP/wrapped.fq"
expect_bed "multi-line FASTQ" "w1${T}4${T}10${T}GAATTC${T}1000${T}+
w1${T}4${T}10${T}GAATTC${T}1000${T}-
w2${T}0${T}6${T}GAATTC${T}1000${T}+
w2${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC "$TMP/wrapped.fq"
printf '@r1\nACGTAC\n+\nIIII\n@r2\nACGT\n+\nIIII\n' >"$TMP/short_quality.fq"
expect_error "FASTQ quality short, next header counted" \
    "$TMP/short_quality.fq: line 4 (record 'r1'): quality length 4 differs from sequence length 6" \
    search -e ACGT "$TMP/short_quality.fq"
expect_error "FASTQ ending after '+'" \
    "$H/no_quality.fq: line 4 (record 'r1'): unexpected end of file (missing quality line)" \
    search -e ACGT $H/no_quality.fq
expect_error "FASTQ ending after the header" \
    "$H/header_only.fq: line 2 (record 'r1'): unexpected end of file (missing sequence line)" \
    search -e ACGT $H/header_only.fq

# ---------------------------------------------------------- NUL bytes

expect_error "NUL in a sequence" \
    "$H/nul_sequence.fa: line 2, column 3 (record 'a'): unexpected byte 0x00 in sequence" \
    search -e ACGT $H/nul_sequence.fa
expect_error "NUL in a header" "$H/nul_header.fa: line 1, column 3: unexpected byte 0x00 in header" \
    search -e ACGT $H/nul_header.fa
expect_error "NUL in a quality line" \
    "$H/nul_quality.fq: line 4, column 3 (record 'r1'): unexpected byte 0x00 in quality" \
    search -e ACGT $H/nul_quality.fq
# A DNA pattern file line with a NUL: the name shows it as \0 (not cut short).
expect_error "NUL in a DNA pattern" \
    "$H/nul_dna_patterns.txt: line 1: pattern 1 ('AC\\0GT'): byte 0x00 at position 3 is not a DNA or IUPAC symbol" \
    search -p $H/nul_dna_patterns.txt $H/crlf.fa
# A pattern refused by the compiler is named with its file and line.
printf 'ACGT\nGGCC\nACXT\n' >"$TMP/bad_symbol.txt"
printf '>a\nACGT\n\n>b second\nAC\nGJ\n' >"$TMP/bad_symbol.fa"
expect_error "bad symbol in a pattern list: file and line" \
    "$TMP/bad_symbol.txt: line 3: pattern 3 ('ACXT'): 'X' at position 3 is not a DNA or IUPAC symbol; for protein or other text patterns use --alphabet text" \
    search -p "$TMP/bad_symbol.txt" $H/crlf.fa
expect_error "bad symbol in a FASTA pattern file: file and header line" \
    "$TMP/bad_symbol.fa: line 4: pattern 3 ('b'): 'J' at position 4 is not a DNA or IUPAC symbol; for protein or other text patterns use --alphabet text" \
    search -e ACGT -p "$TMP/bad_symbol.fa" $H/crlf.fa
expect_error "-m at a pattern's length: file and line" \
    "$TMP/bad_symbol.fa: line 1: pattern 'a' has 4 symbols, and -m 4 allows that many mismatches or more: every window of its length would be a hit; use -m 3 or less" \
    search -m 4 -p "$TMP/bad_symbol.fa" $H/crlf.fa
# Text mode searches NUL bytes like any other; jsonl escapes them.
run search --alphabet text -p $H/nul_text_patterns.txt --format jsonl $H/nul.txt
check_status "NUL in text (exit)" 0
check_output_text "NUL in text" '{"record":"data/hostile/nul.txt","pattern":"b\\0c","strand":"+","start":1,"end":4,"errors":0,"matched":"b\u0000c"}
'
run search --lines -e d --format bed $H/nul.txt
check_output_text "NUL in a --lines record" "$H/nul.txt:1${T}4${T}5${T}d${T}1000${T}+
"

# ----------------------------------------------------- non-ASCII bytes

expect_error "UTF-8 letter in a sequence" \
    "$H/utf8_sequence.fa: line 2, column 3 (record 'a'): unexpected byte 0xC3 in sequence" \
    search -e ACGT $H/utf8_sequence.fa
# A UTF-8 byte-order mark at the start of a target or a pattern file is
# skipped (it once made the target "not FASTA" and stayed part of pattern 1).
expect_bed "byte-order mark before '>'" "a${T}0${T}6${T}GAATTC${T}1000${T}+
a${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC $H/bom.fa
printf '\357\273\277@r\nGAATTC\n+\nIIIIII\n' >"$TMP/bom.fq"
expect_bed "byte-order mark before '@'" "r${T}0${T}6${T}GAATTC${T}1000${T}+
r${T}0${T}6${T}GAATTC${T}1000${T}-
" -e GAATTC "$TMP/bom.fq"
# The same at the start of a BGZF file read on several threads: the first
# block, inflated ahead, came in a buffer of its own, and the mark was
# looked for at that buffer's start instead of its data's.
printf '\357\273\277>a\nGAATTC\n' | bgzip -c >"$TMP/bom.fa.bgz"
for threads in 1 3; do
    expect_bed "byte-order mark before '>', BGZF, -t $threads" "a${T}0${T}6${T}GAATTC${T}1000${T}+
a${T}0${T}6${T}GAATTC${T}1000${T}-
" -t $threads -e GAATTC "$TMP/bom.fa.bgz"
done
printf '\357\273\277GAATTC\n' >"$TMP/bom_patterns.txt"
expect_bed "byte-order mark in a pattern list" "a${T}0${T}6${T}GAATTC${T}1000${T}+
a${T}0${T}6${T}GAATTC${T}1000${T}-
" -p "$TMP/bom_patterns.txt" $H/bom.fa
printf '\357\273\277>EcoRI\nGAATTC\n' >"$TMP/bom_patterns.fa"
expect_bed "byte-order mark in a FASTA pattern file" "a${T}0${T}6${T}EcoRI${T}1000${T}+
a${T}0${T}6${T}EcoRI${T}1000${T}-
" -p "$TMP/bom_patterns.fa" $H/bom.fa
expect_error "UTF-8 letter in a DNA pattern" \
    "pattern 1 ('AC$(printf '\303\251')'): byte 0xC3 at position 3 is not a DNA or IUPAC symbol" \
    search -e "AC$(printf '\303\251')" $H/crlf.fa
# Header bytes are kept as they are: UTF-8 passes through, other bytes are
# \u00XX in jsonl so that every line stays valid JSON.
run search -e GAATTC --strand + --format jsonl $H/utf8_header.fa $H/latin1_header.fa
check_output_text "non-ASCII record names in jsonl" "{\"file\":\"$H/utf8_header.fa\",\"record\":\"r$(printf '\303\251')c\",\"pattern\":\"GAATTC\",\"strand\":\"+\",\"start\":0,\"end\":6,\"errors\":0,\"matched\":\"GAATTC\"}
{\"file\":\"$H/latin1_header.fa\",\"record\":\"r\\u00e9c\",\"pattern\":\"GAATTC\",\"strand\":\"+\",\"start\":0,\"end\":6,\"errors\":0,\"matched\":\"GAATTC\"}
"
# A name is the header's first word: it ends at white space only, so a
# control byte belongs to it (it cut '>a\x01b' to 'a'), in records and in
# FASTA pattern files.
printf '>a\001b c\nGAATTC\n>x\vy\nGAATTC\n' >"$TMP/ctl.fa"
printf '>p\001q\nGAATTC\n' >"$TMP/ctl_patterns.fa"
run search -p "$TMP/ctl_patterns.fa" --strand + --format jsonl "$TMP/ctl.fa"
check_output_text "control bytes in names" "{\"record\":\"a\\u0001b\",\"pattern\":\"p\\u0001q\",\"strand\":\"+\",\"start\":0,\"end\":6,\"errors\":0,\"matched\":\"GAATTC\"}
{\"record\":\"x\",\"pattern\":\"p\\u0001q\",\"strand\":\"+\",\"start\":0,\"end\":6,\"errors\":0,\"matched\":\"GAATTC\"}
"
# Control bytes in a pattern or a file name never break the one-line message.
expect_error "line break and escape in a pattern" \
    "pattern 1 ('AC\\nGT\\x1B[31m'): byte 0x0A at position 3 is not a DNA or IUPAC symbol" \
    search -e "$(printf 'AC\nGT\033[31m')" $H/crlf.fa
expect_error "line break and tab in a file name" "no\\nsuch\\tfile.fa: No such file or directory" \
    search -e ACGT "$(printf 'no\nsuch\tfile.fa')"

# ------------------------------------------------------- long records

# A record name over 1 MiB is refused, not truncated.
{ printf '>'; poly 1048577 x; printf '\nACGT\n'; } >"$TMP/long_name.fa"
expect_error "record name over 1 MiB" "$TMP/long_name.fa: line 1: record name longer than 1048576 bytes" \
    search -e ACGT "$TMP/long_name.fa"

# One line of 256 MiB from a pipe, hit at its very end: read in pieces, not
# whole (FASTA, and text --lines). Smaller in sanitizer builds.
size=$((256 << 20))
[ $sanitized -eq 1 ] && size=$((16 << 20))
measure_rss search -e ACGTACGT -t 2 --no-header - < <(printf '>big\n'; poly $size A; printf 'ACGTACGT\n')
check_status "one $((size >> 20)) MiB FASTA line from a pipe (exit)" 0
check_output_text "one $((size >> 20)) MiB FASTA line from a pipe" "big${T}ACGTACGT${T}+${T}$size${T}$((size + 8))${T}0${T}ACGTACGT
big${T}ACGTACGT${T}-${T}$size${T}$((size + 8))${T}0${T}ACGTACGT
"
check_rss "one $((size >> 20)) MiB FASTA line" 64
measure_rss search --lines -e needle -t 2 --format bed - < <(printf 'first\n'; poly $size z; printf 'needle\nlast\n')
check_output_text "one $((size >> 20)) MiB text line from a pipe" "stdin:2${T}$size${T}$((size + 6))${T}needle${T}1000${T}+
"
check_rss "one $((size >> 20)) MiB text line" 64

if [ "${SEQMATCH_BIG_TESTS:-0}" = 1 ]; then
    # Past 2^32: coordinates and counts are 64-bit.
    size=$(((4 << 30) + (1 << 20)))
    start=$(date +%s)
    measure_rss search -e ACGTACGT -t 2 --no-header - < <(printf '>big\n'; poly $size A; printf 'ACGTACGT\n')
    check_output_text "big: one 4 GiB FASTA line" "big${T}ACGTACGT${T}+${T}$size${T}$((size + 8))${T}0${T}ACGTACGT
big${T}ACGTACGT${T}-${T}$size${T}$((size + 8))${T}0${T}ACGTACGT
"
    check_rss "big: one 4 GiB FASTA line ($(($(date +%s) - start)) s)" 64
    # 10 GiB through a pipe: the memory is that of the buffers, not the input.
    size10=$((10 << 30))
    start=$(date +%s)
    measure_rss search -e ACGTACGT -t 2 --format count - < <(printf '>big10\n'; poly $size10 C; printf 'ACGTACGT\n')
    check_output_text "big: a 10 GiB stream" "ACGTACGT${T}2
total${T}2
"
    check_rss "big: a 10 GiB stream ($(($(date +%s) - start)) s)" 64
    start=$(date +%s)
    measure_rss search --lines -e z -e zz -t 2 --format count - < <(poly $size z; printf '\n')
    check_output_text "big: counts past 2^32" "z${T}$size
zz${T}$((size - 1))
total${T}$((2 * size - 1))
"
    check_rss "big: 4 GiB text line, counted ($(($(date +%s) - start)) s)" 64
fi

# --------------------------------------------------------------- gzip

# (errors.sh: truncated and corrupt gzip; formats.sh: concatenated members.)
gzip -c $H/crlf.fa >"$TMP/one.gz"
{ cat "$TMP/one.gz"; printf '>x\nGAATTCGAATTCGAATTCGAATTCGAATTCGAATTC\n' | gzip -c | head -c 25; } >"$TMP/second_truncated.gz"
expect_error "second gzip member truncated" \
    "$TMP/second_truncated.gz: unexpected end of file (truncated compressed stream)" \
    search -e GAATTC "$TMP/second_truncated.gz"
head -c 10 "$TMP/one.gz" >"$TMP/gzip_header_only.gz"
expect_error "gzip header only" "$TMP/gzip_header_only.gz: unexpected end of file (truncated compressed stream)" \
    search -e GAATTC "$TMP/gzip_header_only.gz"
printf '\037\213' >"$TMP/gzip_magic_only.gz"
expect_error "gzip magic only" "$TMP/gzip_magic_only.gz: unexpected end of file (truncated compressed stream)" \
    search -e GAATTC "$TMP/gzip_magic_only.gz"
size=$(wc -c <"$TMP/one.gz")
head -c $((size - 4)) "$TMP/one.gz" >"$TMP/no_trailer.gz"
expect_error "gzip without its length trailer" "$TMP/no_trailer.gz: unexpected end of file (truncated compressed stream)" \
    search -e GAATTC "$TMP/no_trailer.gz"
cp "$TMP/one.gz" "$TMP/bad_crc.gz"
printf '\000\000\000\000' | dd of="$TMP/bad_crc.gz" bs=1 seek=$((size - 8)) conv=notrunc 2>/dev/null
expect_error "gzip with a wrong CRC" "$TMP/bad_crc.gz: corrupt compressed data (incorrect data check)" \
    search -e GAATTC "$TMP/bad_crc.gz"
gzip -c $H/crlf_patterns.txt | head -c 20 >"$TMP/truncated_patterns.gz"
expect_error "truncated gzip pattern file" \
    "$TMP/truncated_patterns.gz: unexpected end of file (truncated compressed stream)" \
    search -p "$TMP/truncated_patterns.gz" $H/crlf.fa
# Members split anywhere, an empty member in the middle and a BGZF-style
# empty member at the end read as one stream.
{ printf '>chr1 first record\r\nACGTGA\r\nAT' | gzip -c; : | gzip -c
  printf 'TCAA\r\n>chr2\r\nTTGAAT\r\nTC\r\n' | gzip -c; : | gzip -c; } >"$TMP/members.gz"
expect_bed "gzip members with empty ones" "$crlf_hits" -p $H/crlf_patterns.fa "$TMP/members.gz"
# Data after the last member: zero padding is ignored (as gzip does);
# anything else is refused, naming where it starts (zlib's gzread ignored it
# silently, so data appended to a .gz file went unsearched).
{ cat "$TMP/one.gz"; head -c 512 /dev/zero; } >"$TMP/zero_padded.gz"
expect_bed "gzip with zero padding" "$crlf_hits" -p $H/crlf_patterns.fa "$TMP/zero_padded.gz"
{ cat "$TMP/one.gz"; printf '>chr3\nGAATTC\n'; } >"$TMP/trailing_garbage.gz"
expect_error "plain text after a gzip member" \
    "$TMP/trailing_garbage.gz: data after the last gzip member (byte $(wc -c <"$TMP/one.gz"))" \
    search -p $H/crlf_patterns.fa "$TMP/trailing_garbage.gz"
{ cat "$TMP/one.gz"; head -c 100 /dev/zero; printf 'x'; } >"$TMP/padding_then_garbage.gz"
expect_error "zero padding then data after a gzip member" \
    "$TMP/padding_then_garbage.gz: data after the last gzip member (byte $(($(wc -c <"$TMP/one.gz") + 100)))" \
    search -p $H/crlf_patterns.fa "$TMP/padding_then_garbage.gz"

# zstd (where the build has libzstd: `seqmatch --version` says): one frame
# or several, read as one stream; a cut frame is a truncated stream.
reads=$("$SEQMATCH" --version | sed -n 's/^reads \(.*\) (gzip through .*/\1/p')
zst_hits=$'z1\t4\t10\tGAATTC\t1000\t+\nz1\t12\t18\tGAATTC\t1000\t+\nz2\t2\t8\tGAATTC\t1000\t+\n'
if [[ "$reads" == *zstd* ]]; then
    expect_bed "zstd target" "$zst_hits" -e GAATTC --strand + $H/small.fa.zst
    expect_bed "zstd frames" "$zst_hits" -e GAATTC --strand + $H/frames.fa.zst
    head -c 30 $H/small.fa.zst >"$TMP/cut.fa.zst"
    expect_error "truncated zstd" "$TMP/cut.fa.zst: unexpected end of file (truncated compressed stream)" \
        search -e GAATTC "$TMP/cut.fa.zst"
fi

# Compressed in a way seqmatch does not read: named, not "not FASTA (first
# byte 0x42)". The magic numbers alone are enough.
printf 'BZh91AY&SY' >"$TMP/x.fa.bz2"
printf '\3757zXZ\000\000\004' >"$TMP/x.fa.xz"
gzip -c "$TMP/one.gz" >"$TMP/twice.fa.gz"
for packed in bz2:bzip2-compressed:bzip2 xz:xz-compressed:xz; do
    IFS=: read -r ext what tool <<<"$packed"
    expect_error "$what target" \
        "$TMP/x.fa.$ext: $what; seqmatch reads $reads (decompress it first, e.g. $tool -dc $TMP/x.fa.$ext | seqmatch ...)" \
        search -e GAATTC "$TMP/x.fa.$ext"
done
expect_error "gzip inside gzip" \
    "$TMP/twice.fa.gz: gzip-compressed twice; seqmatch reads $reads (decompress it first, e.g. gzip -dc $TMP/twice.fa.gz | seqmatch ...)" \
    search -e GAATTC "$TMP/twice.fa.gz"
expect_error "bzip2-compressed pattern file" \
    "$TMP/x.fa.bz2: bzip2-compressed; seqmatch reads $reads (decompress it first, e.g. bzip2 -dc $TMP/x.fa.bz2 | seqmatch ...)" \
    search -p "$TMP/x.fa.bz2" $H/crlf.fa

# ------------------------------------------------ absurd loads, bounded

# The wrong file as database, pattern file or DFA is refused after its first
# bytes, in little memory: a database is read header first, a pattern file
# judged on its first 4 KiB, a DFA file line by line as it arrives.
compile_db() { "$SEQMATCH" compile -e GAATTC -o "$1"; }
compile_db "$TMP/ok.smdb"
measure_rss search -d /dev/zero $H/crlf.fa
check_stderr "-d /dev/zero" "seqmatch: /dev/zero: not a seqmatch database (bad magic number)"
check_rss "-d /dev/zero" 50
run search -d <(yes) $H/crlf.fa
check_status "-d <(yes) (exit)" 2
check_stderr "-d <(yes)" ": not a seqmatch database (bad magic number)"
head -c 100 "$TMP/ok.smdb" >"$TMP/short.smdb"
expect_error "database cut inside its header" \
    "$TMP/short.smdb: database is truncated: 100 bytes, shorter than its 256-byte header" \
    search -d "$TMP/short.smdb" $H/crlf.fa
size=$(wc -c <"$TMP/ok.smdb")
head -c 300 "$TMP/ok.smdb" >"$TMP/cut.smdb"
expect_error "database cut after its header" \
    "$TMP/cut.smdb: database is truncated (300 bytes, its header says $size)" \
    search -d "$TMP/cut.smdb" $H/crlf.fa
{ cat "$TMP/ok.smdb"; echo; } >"$TMP/long.smdb"
expect_error "database with trailing bytes" \
    "$TMP/long.smdb: database has trailing bytes ($((size + 1)) bytes, its header says $size)" \
    search -d "$TMP/long.smdb" $H/crlf.fa
gzip -c "$TMP/ok.smdb" >"$TMP/ok.smdb.gz"
expect_error "gzip-compressed database" \
    "$TMP/ok.smdb.gz: not a seqmatch database (bad magic number: the data is gzip-compressed; decompress it first)" \
    search -d "$TMP/ok.smdb.gz" $H/crlf.fa
run search -d <(cat "$TMP/ok.smdb") --format count $H/crlf.fa
check_output_text "database from a pipe" "GAATTC${T}4
total${T}4
"
measure_rss search -p /dev/zero $H/crlf.fa
check_stderr "-p /dev/zero" "seqmatch: /dev/zero: binary data (4096 of the first 4096 bytes are control bytes); not a pattern file"
check_rss "-p /dev/zero" 50
run search -p "$SEQMATCH" $H/crlf.fa
check_status "-p on an executable (exit)" 2
check_stderr "-p on an executable" ": binary data ("
measure_rss search -p <(yes | tr -d '\n') $H/crlf.fa
check_stderr "-p of one endless line" ": line 1: a pattern longer than 16777216 bytes (16 MiB); is it a pattern file?"
check_rss "-p of one endless line" 50
measure_rss dfa --dfa /dev/zero $H/crlf.fa
check_stderr "dfa --dfa /dev/zero" "seqmatch: /dev/zero: line 1: a NUL byte; not a DFA in the text format"
check_rss "dfa --dfa /dev/zero" 50
run dfa --dfa <(yes) $H/crlf.fa
check_stderr "dfa --dfa <(yes)" ": line 1: unknown line starting 'y' (expected alphabet, states, start, accept or a row)"
run dfa --dfa <(yes | tr -d '\n') $H/crlf.fa
check_stderr "dfa --dfa of one endless line" ": line 1 is longer than 1048576 bytes; not a DFA in the text format"

# ------------------------------------------ directories and unreadable

# (errors.sh: a directory as target or -p, a missing file, and permission
# denied when not running as root.)
expect_error "directory as database" "$H: Is a directory" search -d $H $H/crlf.fa
expect_error "path through a file" "$H/crlf.fa/x: Not a directory" search -e ACGT $H/crlf.fa/x
ln -s "$TMP/nowhere" "$TMP/dangling.fa"
expect_error "dangling symbolic link" "$TMP/dangling.fa: No such file or directory" \
    search -e ACGT "$TMP/dangling.fa"
# Root reads any file, so a read that fails is made another way: reading
# /proc/self/mem at offset 0 fails with EIO.
if [ -r /proc/self/mem ]; then
    expect_error "read error in a target" "/proc/self/mem: read error: Input/output error" \
        search -e ACGT /proc/self/mem
    expect_error "read error in a pattern file" "/proc/self/mem: read error: Input/output error" \
        search -p /proc/self/mem $H/crlf.fa
else
    echo "note: read errors not tested: /proc/self/mem is not readable"
fi
# A FIFO is read as a stream.
mkfifo "$TMP/fifo.fa"
cat $H/crlf.fa >"$TMP/fifo.fa" &
writer=$!
expect_bed "FIFO target" "$crlf_hits" -p $H/crlf_patterns.fa "$TMP/fifo.fa"
kill $writer 2>/dev/null # still blocked only if the FIFO was never opened
wait $writer 2>/dev/null

# ------------------------------------------------------ patterns of N

# Target N matches nothing (unless --text-iupac); pattern N matches A C G T.
# A pattern that is all N matches every window: refused, as -m at its length.
printf '>a\nACGTNNACGTacgt\n' >"$TMP/n.fa"
for pattern in N NNNN NNNNN; do
    expect_error "all-N pattern $pattern" \
        "pattern '$pattern' is all N, which matches every base: every window of its length would be a hit" \
        search -e "$pattern" --format count "$TMP/n.fa"
done
expect_error "all-N pattern with --text-iupac" \
    "pattern 'NNNNN' is all N, which matches every base: every window of its length would be a hit" \
    search -e NNNNN --text-iupac --format count "$TMP/n.fa"
# One base and N: ANNN expands to 64 strings (automaton); ANNNNN to more (Shift-And).
for pattern in ANNN:6 ANNNNN:2; do
    run search -e "${pattern%%:*}" --format count "$TMP/n.fa"
    check_output_text "one base and N, ${pattern%%:*}" "${pattern%%:*}${T}${pattern##*:}
total${T}${pattern##*:}
"
done
run search -e ANNNNN --text-iupac --format count "$TMP/n.fa"
check_output_text "one base and N, with --text-iupac" "ANNNNN${T}7
total${T}7
"
run search -e ANNNNNNNNNNN --format count "$TMP/n.fa"
check_status "a pattern of N longer than any N-free window (exit)" 1
expect_error "N pattern on the forced automaton" \
    "pattern 1 ('ANNNNN') cannot use the automaton engine: it expands to too many concrete strings for the automaton (limit 256); use engine auto or shiftand" \
    search -e ANNNNN --engine automaton "$TMP/n.fa"
# The message names the engine that was forced.
expect_error "N pattern on the forced k-mer table" \
    "pattern 1 ('ANNNNN') cannot use the k-mer table engine: it expands to too many concrete strings for the k-mer table (limit 256); use engine auto or shiftand" \
    search -e ANNNNN --engine kmer "$TMP/n.fa"
expect_error "N pattern on the forced Wu-Manber engine" \
    "pattern 1 ('ANNNNN') cannot use the Wu-Manber engine: it expands to too many concrete strings for Wu-Manber (limit 256); use engine auto or shiftand" \
    search -e ANNNNN --engine wumanber "$TMP/n.fa"
printf '>n\nNNNNNNNN\n' >"$TMP/only_n.fa"
run search -e ANNN --format count "$TMP/only_n.fa"
check_output_text "a pattern of N on an all-N record" "ANNN${T}0
total${T}0
"
# No more bases other than N than -m or -k allow to change: every window
# would be a hit, refused as -m at the pattern's length is.
expect_error "-m = the bases other than N" \
    "pattern 'NNACNN' has 2 bases other than N, and -m 2 allows that many mismatches or more: N matches every base, so every window of its length would be a hit; use -m 1 or less" \
    search -e NNACNN -m 2 "$TMP/n.fa"
expect_error "-k > the bases other than N" \
    "pattern 'NNNNNNNNNA' has 1 base other than N, and -k 3 allows that many edits or more: N matches every base, so every window of its length would be a hit; use -k 0 or less" \
    search -e NNNNNNNNNA -k 3 "$TMP/n.fa"
run search -e NNACNN -m 1 --format count "$TMP/n.fa"
check_status "-m below the bases other than N" 0

# ------------------------------------------------- k >= pattern length

# Every window (-m) or every end (-k) would be a hit: the command refuses,
# naming the pattern and the largest K that means something (the library
# itself accepts such a K: test_approx_search checks its hits).
expect_error "-m k = pattern length" \
    "pattern 'ACGT' has 4 symbols, and -m 4 allows that many mismatches or more: every window of its length would be a hit; use -m 3 or less" \
    search -e ACGT -m 4 --strand + "$TMP/only_n.fa"
expect_error "-m k > pattern length" \
    "pattern 'ACGT' has 4 symbols, and -m 65535 allows that many mismatches or more: every window of its length would be a hit; use -m 3 or less" \
    search -e ACGT -m 65535 "$TMP/only_n.fa"
expect_error "-m over 65535" "-m: '65536' is not an error count (0 to 65535) (try 'seqmatch search --help')" \
    search -e ACGT -m 65536 "$TMP/only_n.fa"
expect_error "-k k = pattern length" \
    "pattern 'ACGT' has 4 symbols, and -k 4 allows that many edits or more: deleting the whole pattern would make every position a hit; use -k 3 or less" \
    search -e ACGT -k 4 --report ends "$TMP/only_n.fa"
expect_error "-k k > pattern length, count" \
    "pattern 'ACGT' has 4 symbols, and -k 9 allows that many edits or more: deleting the whole pattern would make every position a hit; use -k 3 or less" \
    search -e ACGT -k 9 --format count "$TMP/n.fa"
# One below the length is a search like any other.
run search -e ACGT -k 3 --report ends --strand + --format count "$TMP/only_n.fa"
check_status "-k k = pattern length - 1" 1

# ------------------------------------------------- dense k-edit hits

# N^(m-1) A with -k 1 would hit at every end: the command refuses it (its one
# base may be edited away); test_approx_search checks the library's hits and
# their starts for it (dense ends), which the library computes quickly.
expect_error "dense edit ends, refused" \
    "pattern 'NNNNNNNNNNNNNNNNNNNA' has 1 base other than N, and -k 1 allows that many edits or more: N matches every base, so every window of its length would be a hit; use -k 0 or less" \
    search -e NNNNNNNNNNNNNNNNNNNA -k 1 --report ends "$TMP/n.fa"

# ----------------------------------------- many patterns, --max-memory

# 2 x 10^5 random 20-mers (both strands: 4.6 million automaton states) over
# an 8 MiB budget: refused before the table is built, naming what it needs.
random_kmers() { # COUNT LENGTH: random DNA words, one per line
    head -c $(($1 * ($2 + 1))) /dev/urandom | tr '\000-\377' "$(printf 'ACGT%.0s' $(seq 64))" |
        fold -w $(($2 + 1)) | cut -c1-"$2"
}
random_kmers 200000 20 >"$TMP/200k.txt"
run search -p "$TMP/200k.txt" --engine automaton --max-memory 8M $H/crlf.fa
check_status "automaton over --max-memory (exit)" 2
if grep -Eqx 'seqmatch: automaton: needs [0-9]+ bytes \([0-9]+ states x 5 columns\), limit is 8388608' "$TMP/err"; then
    pass
else
    fail "automaton over --max-memory: message names the size it needs"
fi
# The planner's choice for them, the k-mer table's hash set, is refused too.
run search -p "$TMP/200k.txt" --max-memory 8M $H/crlf.fa
check_status "k-mer table over --max-memory (exit)" 2
if grep -Eqx 'seqmatch: k-mer table: needs [0-9]+ bytes \(k = 20, [0-9]+ distinct keys\), limit is 8388608' "$TMP/err"; then
    pass
else
    fail "k-mer table over --max-memory: message names the size it needs"
fi
# The same budget on the whole database: the message names its size, which
# is then exactly enough.
run compile -e ACGT --max-memory 1000 -o "$TMP/tiny.smdb"
check_status "database over --max-memory (exit)" 2
need=$(sed -n 's/^seqmatch: the database would need \([0-9]*\) bytes, over the memory limit of 1000$/\1/p' "$TMP/err")
if [ -n "$need" ]; then pass; else fail "database over --max-memory: message names the size it needs"; fi
run compile -e ACGT --max-memory "${need:-1}" -o "$TMP/tiny.smdb"
check_status "--max-memory = the size named (exit)" 0
run compile -e ACGT --max-memory $((${need:-1} - 1)) -o "$TMP/tiny.smdb"
check_status "--max-memory one byte short (exit)" 2
run compile -e ACGT -o "$TMP/tiny.smdb"
for size in 1.5G 12Q -5M 17179869184G 99999999999999999999; do
    expect_error "--max-memory $size" \
        "--max-memory: '$size' is not a size (e.g. 512M or 4G) (try 'seqmatch search --help')" \
        search -e ACGT --max-memory $size $H/crlf.fa
done

if [ "${SEQMATCH_BIG_TESTS:-0}" = 1 ]; then
    # 10^7 random 20-mers: the automaton would take about 4 GB; with a 1 GiB
    # budget the build is refused with a clear message.
    random_kmers 10000000 20 >"$TMP/10M.txt"
    start=$(date +%s)
    measure_rss compile -p "$TMP/10M.txt" --max-memory 1G --explain
    check_status "big: 10^7 patterns over --max-memory (exit)" 2
    if grep -Eqx 'seqmatch: automaton: needs [0-9]+ bytes \([0-9]+ states x 5 columns\), limit is 1073741824' "$TMP/err"; then
        pass
    else
        fail "big: 10^7 patterns over --max-memory: message"
    fi
    echo "big: 10^7 20-mers refused after $(($(date +%s) - start)) s, peak RSS $((rss_kb / 1024)) MiB: $(cat "$TMP/err")"
    # 10^7 random 12-mers fit the k-mer table and compile.
    random_kmers 10000000 12 >"$TMP/10M.txt"
    start=$(date +%s)
    measure_rss search -p "$TMP/10M.txt" --format count $H/crlf.fa
    if [ "$status" -le 1 ] && grep -q '^total' "$TMP/out"; then pass; else fail "big: 10^7 12-mers search"; fi
    echo "big: 10^7 12-mers compiled and searched in $(($(date +%s) - start)) s, peak RSS $((rss_kb / 1024)) MiB"
fi

# ------------------------------------------------- --max-hits, counts

awk 'BEGIN { print ">r1"; for (i = 0; i < 2000; i++) print "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT"
             print ">r2"; print "ACGT" }' >"$TMP/many.fa"
run search -e ACGT -e CGTA --max-hits 5 "$TMP/many.fa"
check_status "--max-hits 5 (exit)" 0
check_output_text "--max-hits 5: the first 5 in output order" "#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched
r1${T}ACGT${T}+${T}0${T}4${T}0${T}ACGT
r1${T}ACGT${T}-${T}0${T}4${T}0${T}ACGT
r1${T}CGTA${T}+${T}1${T}5${T}0${T}CGTA
r1${T}CGTA${T}-${T}3${T}7${T}0${T}TACG
r1${T}ACGT${T}+${T}4${T}8${T}0${T}ACGT
"
cp "$TMP/out" "$TMP/first5"
for threads in 1 3 4; do
    run search -e ACGT -e CGTA --max-hits 5 -t $threads --chunk-size 64 "$TMP/many.fa"
    check_output "--max-hits 5, -t $threads --chunk-size 64" "$TMP/first5"
done
run search -e ACGT -e CGTA --max-hits 5 --format count -t 4 --chunk-size 64 "$TMP/many.fa"
check_output_text "--max-hits with --format count" "ACGT${T}3
CGTA${T}2
total${T}5
"
run search -e ACGT -k 1 --max-hits 2 --no-header "$TMP/many.fa"
check_output_text "--max-hits with -k" "r1${T}ACGT${T}+${T}0${T}4${T}0${T}ACGT
r1${T}ACGT${T}-${T}0${T}4${T}0${T}ACGT
"
# The limit reached exactly at the last hit, and a limit never reached.
run search -e ACGT --max-hits 60002 --format count "$TMP/many.fa"
check_output_text "--max-hits = every hit" "ACGT${T}60002
total${T}60002
"
run search -e ACGT --max-hits 18446744073709551615 --format count "$TMP/many.fa"
check_output_text "--max-hits 2^64 - 1" "ACGT${T}60002
total${T}60002
"
run search -e ACGT --max-hits 0 --format count "$TMP/many.fa"
check_status "--max-hits 0 (exit)" 1
check_output_text "--max-hits 0" "ACGT${T}0
total${T}0
"
run search -e GGGG --max-hits 3 "$TMP/many.fa"
check_status "--max-hits, no hit (exit)" 1
# Stopping early stops reading: a bad line 16 MiB further on is never seen.
{ cat "$TMP/many.fa"; poly $((16 << 20)) A; printf '\nACGT!\n'; } >"$TMP/bad_tail.fa"
run search -e ACGT --max-hits 1 -t 2 --no-header "$TMP/bad_tail.fa"
check_status "--max-hits stops reading (exit)" 0
check_output_text "--max-hits stops reading" "r1${T}ACGT${T}+${T}0${T}4${T}0${T}ACGT
"
run search -e ACGT --max-hits 200000 -t 2 --format count "$TMP/bad_tail.fa"
check_status "--max-hits not reached reads on (exit)" 2
run search --max-hits 1 -d "$TMP/tiny.smdb" "$TMP/many.fa"
check_status "--max-hits with -d" 0
for bad in 18446744073709551616 -1 x; do
    expect_error "--max-hits $bad" \
        "--max-hits: '$bad' is not a hit count (0 to 18446744073709551615) (try 'seqmatch search --help')" \
        search -e ACGT --max-hits $bad "$TMP/many.fa"
done
expect_error "--max-hits with compile" \
    "option '--max-hits' does not apply to compile (try 'seqmatch compile --help')" \
    compile -e ACGT --max-hits 3 -o "$TMP/x.smdb"
# Counts overflow nowhere below 2^64 (SEQMATCH_BIG_TESTS counts past 2^32);
# numbers on the command line that do not fit are refused.
expect_error "-t over 4096" "-t: '4097' is not a thread count (0 = all cores, up to 4096) (try 'seqmatch search --help')" \
    search -e ACGT -t 4097 "$TMP/many.fa"
expect_error "--chunk-size past 2^64" \
    "--chunk-size: '17179869184G' is not a positive size in bytes (e.g. 4096 or 1M) (try 'seqmatch search --help')" \
    search -e ACGT --chunk-size 17179869184G "$TMP/many.fa"
# A large --chunk-size costs memory only for input that is there: the batch
# buffers grow as bytes arrive (they once asked for 8 x 10G up front, and
# 200G reached a use after free on the way out).
printf '>a\nGAATTCACGT\n' >"$TMP/ten.fa"
for chunk in 10G 200G; do
    run_limited $((512 << 10)) search -e GAATTC --chunk-size $chunk -t 2 --format bed "$TMP/ten.fa"
    check_status "--chunk-size $chunk on 10 bytes (exit)" 0
    check_output_text "--chunk-size $chunk on 10 bytes" "a${T}0${T}6${T}GAATTC${T}1000${T}+
a${T}0${T}6${T}GAATTC${T}1000${T}-
"
done
# A buffer that grows while a record streams in (9M x 4 x 2 threads: from 64
# MiB to 72): the hit at the end is found, with the bytes edits read before it.
measure_rss search -e ACGTACGT -k 1 --chunk-size 9M -t 2 --no-header - < <(printf '>big\n'; poly $((72 << 20)) A; printf 'ACGTACGT\n')
check_output_text "a batch buffer that grows" "big${T}ACGTACGT${T}+${T}$((72 << 20))${T}$(((72 << 20) + 8))${T}0${T}ACGTACGT
big${T}ACGTACGT${T}-${T}$((72 << 20))${T}$(((72 << 20) + 8))${T}0${T}ACGTACGT
"
check_rss "a batch buffer that grows" 100
# Out of memory in sm_runner_create: its error path once read the runner
# after freeing it (ASan showed it with allocator_may_return_null=1). ASan
# is made to refuse the 64 MiB first buffer, a release build is limited.
if [ $sanitized -eq 1 ]; then
    (export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=32"
     exec "$SEQMATCH" search --chunk-size 1G -t 1 -e GAATTC "$TMP/ten.fa" >"$TMP/out" 2>"$TMP/err")
    status=$?
    # ASan's own warning about the refused allocation
    grep -v '^==[0-9]*==WARNING: AddressSanitizer failed to allocate' "$TMP/err" >"$TMP/err.seqmatch"
    mv "$TMP/err.seqmatch" "$TMP/err"
else
    run_limited 50000 search --chunk-size 1G -t 1 -e GAATTC "$TMP/ten.fa"
fi
check_status "--chunk-size 1G, no memory for the first buffer (exit)" 2
check_stderr "--chunk-size 1G, no memory for the first buffer" "seqmatch: out of memory for a batch buffer of 67108864 bytes (the batch buffers grow to 8 x --chunk-size per thread, the hits they hold to 3 x; a smaller --chunk-size or fewer threads (-t) need less)"
# Out of memory while the buffer grows: the message names --chunk-size.
if [ $sanitized -eq 0 ]; then
    run_limited $((192 << 10)) search --alphabet text -e x --chunk-size 1G -t 1 --no-header - < <(head -c $((300 << 20)) /dev/zero)
    check_status "--chunk-size 1G out of memory (exit)" 2
    check_stderr "--chunk-size 1G out of memory" "seqmatch: stdin: out of memory while scanning (the batch buffers grow to 8 x --chunk-size per thread, the hits they hold to 3 x; a smaller --chunk-size or fewer threads (-t) need less)"
fi

# ---------------------------------------------------- broken output

# (threads.sh: search | head -1 ends quietly, SIGPIPE default or ignored;
# errors.sh: search -o /dev/full and stdout on /dev/full.)
# With SIGPIPE ignored the write fails with EPIPE: no message, exit 2.
"$SEQMATCH" search -e ACGT --no-header "$TMP/many.fa" 2>"$TMP/err" | head -1 >/dev/null
pipe_status=${PIPESTATUS[0]}
if [ "$pipe_status" -eq 141 ] || [ "$pipe_status" -eq 0 ]; then pass; else fail "| head -1: status $pipe_status"; fi
(trap '' PIPE; "$SEQMATCH" search -e ACGT --no-header "$TMP/many.fa" 2>"$TMP/err" | head -1 >/dev/null
 echo "${PIPESTATUS[0]}" >"$TMP/pipe_status")
check_stderr_empty "| head -1, SIGPIPE ignored: no message"
if [ "$(cat "$TMP/pipe_status")" -eq 2 ]; then pass; else fail "| head -1, SIGPIPE ignored: status $(cat "$TMP/pipe_status")"; fi
# An automaton dump (megabytes) into a closed pipe, SIGPIPE ignored: quiet too.
head -n 300 "$TMP/200k.txt" >"$TMP/300.txt"
(trap '' PIPE; "$SEQMATCH" compile -p "$TMP/300.txt" --dump-dfa 2>"$TMP/err" | head -1 >/dev/null
 echo "${PIPESTATUS[0]}" >"$TMP/pipe_status")
check_stderr_empty "compile --dump-dfa | head -1, SIGPIPE ignored: no message"
if [ "$(cat "$TMP/pipe_status")" -eq 2 ]; then pass; else fail "--dump-dfa | head -1: status $(cat "$TMP/pipe_status")"; fi
# -o naming an input is refused before anything is read or written, whatever
# the name (a symbolic or hard link), for search, compile and dfa; stdin and
# devices are exempt. (It once truncated the input before reading it.)
printf '>a\nGAATTCACGT\n' >"$TMP/self.fa"
cp "$TMP/self.fa" "$TMP/self.orig"
printf 'GAATTC\n' >"$TMP/self_patterns.txt"
printf 'alphabet ab\nstates 1\nstart 0\naccept 0\n0 0 0\n' >"$TMP/self.dfa"
ln -s "$TMP/self.fa" "$TMP/self_link.fa"
ln "$TMP/self.fa" "$TMP/self_hard.fa"
compile_db "$TMP/self.smdb"
expect_error "-o naming the target" "output $TMP/self.fa is also an input" \
    search -e GAATTC -o "$TMP/self.fa" "$TMP/self.fa"
expect_error "-o naming the target through a symbolic link" "output $TMP/self_link.fa is also an input ($TMP/self.fa)" \
    search -e GAATTC -o "$TMP/self_link.fa" "$TMP/self.fa"
expect_error "-o naming the target through a hard link" "output $TMP/self_hard.fa is also an input ($TMP/self.fa)" \
    search -e GAATTC -o "$TMP/self_hard.fa" $H/crlf.fa "$TMP/self.fa"
expect_error "-o naming the pattern file" "output $TMP/self_patterns.txt is also an input" \
    search -p "$TMP/self_patterns.txt" -o "$TMP/self_patterns.txt" $H/crlf.fa
expect_error "-o naming the database" "output $TMP/self.smdb is also an input" \
    search -d "$TMP/self.smdb" -o "$TMP/self.smdb" $H/crlf.fa
expect_error "compile -o naming its pattern file" "output $TMP/self_patterns.txt is also an input" \
    compile -p "$TMP/self_patterns.txt" -o "$TMP/self_patterns.txt"
expect_error "dfa -o naming an input" "output $TMP/self.fa is also an input" \
    dfa --regex 'a*' -o "$TMP/self.fa" "$TMP/self.fa"
expect_error "dfa -o naming the DFA file" "output $TMP/self.dfa is also an input" \
    dfa --dfa "$TMP/self.dfa" -o "$TMP/self.dfa" "$TMP/self.fa"
expect_error "dfa -o naming the pattern file" "output $TMP/self_patterns.txt is also an input" \
    dfa --from-patterns "$TMP/self_patterns.txt" --dump -o "$TMP/self_patterns.txt"
if cmp -s "$TMP/self.fa" "$TMP/self.orig" && [ "$(cat "$TMP/self_patterns.txt")" = GAATTC ] &&
   [ "$(head -c 8 "$TMP/self.smdb")" = SEQMATCH ] && grep -q alphabet "$TMP/self.dfa"; then
    pass
else
    fail "-o naming an input: an input changed"
fi
# Standard input and devices are exempt: the output replaces the file only
# once it has been read.
cp "$TMP/self.orig" "$TMP/stdin.fa"
run_stdin "$TMP/stdin.fa" search -e GAATTC --format count -o "$TMP/stdin.fa" -
check_status "-o naming the file on standard input (exit)" 0
if [ "$(cat "$TMP/stdin.fa")" = "GAATTC${T}2
total${T}2" ]; then pass; else fail "-o naming the file on standard input: output"; fi
run search -e GAATTC -o /dev/null /dev/null
check_status "-o /dev/null with /dev/null as target (exit)" 1

# The output file appears only when the command succeeds (exit 0 or 1): an
# error leaves an earlier file as it was and no temporary file behind; a new
# file gets the mode the umask gives, an existing one keeps its own.
printf 'earlier\n' >"$TMP/out.tsv"
run search -e GAATTC -o "$TMP/out.tsv" "$TMP/missing.fa"
check_status "-o with a missing target (exit)" 2
run search -e ACGT -o "$TMP/out.tsv" $H/crlf.fa $H/gt_inside_line.fa
check_status "-o with a bad line after hits (exit)" 2
run compile -e NNNNN --engine automaton -o "$TMP/out.tsv"
check_status "compile -o of a refused pattern (exit)" 2
if [ "$(cat "$TMP/out.tsv")" = earlier ] && [ -z "$(ls "$TMP" | grep '\.tmp-')" ]; then
    pass
else
    fail "-o after an error: the earlier file changed or a temporary file is left"
fi
run search -e GGGGGGGG -o "$TMP/none.tsv" $H/crlf.fa
check_status "-o with no hit (exit)" 1
check_output_text "-o with no hit (stdout)" ""
if [ "$(cat "$TMP/none.tsv")" = "#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched" ]; then
    pass
else
    fail "-o with no hit: the file holds the header"
fi
run dfa --regex 'x' --alphabet text -o "$TMP/dfa_none.txt" $H/crlf.fa
check_status "dfa -o, input rejected (exit)" 1
case "$(cat "$TMP/dfa_none.txt")" in "reject${T}"*) pass ;; *) fail "dfa -o, input rejected: the file" ;; esac
(umask 027 && "$SEQMATCH" search -e GAATTC -o "$TMP/masked.tsv" $H/crlf.fa)
chmod 600 "$TMP/out.tsv"
"$SEQMATCH" search -e GAATTC -o "$TMP/out.tsv" $H/crlf.fa
if [ "$(stat -c %a "$TMP/masked.tsv")" = 640 ] && [ "$(stat -c %a "$TMP/out.tsv")" = 600 ] &&
   grep -q GAATTC "$TMP/out.tsv"; then
    pass
else
    fail "-o file modes: $(stat -c %a "$TMP/masked.tsv") and $(stat -c %a "$TMP/out.tsv")"
fi
# Through a symbolic link the file it names is replaced; the link stays.
ln -s "$TMP/out.tsv" "$TMP/out_link.tsv"
"$SEQMATCH" compile -e ACGT -o "$TMP/out_link.tsv"
if [ -L "$TMP/out_link.tsv" ] && [ "$(head -c 8 "$TMP/out.tsv")" = SEQMATCH ]; then
    pass
else
    fail "-o through a symbolic link"
fi
# A file that may be written in a folder that may not: written in place.
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$TMP/ro"
    printf 'earlier\n' >"$TMP/ro/out.tsv"
    chmod 555 "$TMP/ro"
    run search -e GAATTC --format count -o "$TMP/ro/out.tsv" $H/crlf.fa
    chmod 755 "$TMP/ro"
    if [ "$status" -eq 0 ] && grep -q "^total${T}4" "$TMP/ro/out.tsv"; then
        pass
    else
        fail "-o onto a writable file in a read-only folder"
    fi
else
    echo "note: -o in a read-only folder not tested: root writes anywhere"
fi
# A FIFO is written in place.
mkfifo "$TMP/out.fifo"
cat "$TMP/out.fifo" >"$TMP/from_fifo" &
reader=$!
run search -e GAATTC --format count -o "$TMP/out.fifo" $H/crlf.fa
wait $reader
if [ -p "$TMP/out.fifo" ] && [ "$(cat "$TMP/from_fifo")" = "GAATTC${T}4
total${T}4" ]; then pass; else fail "-o onto a FIFO"; fi
# SIGTERM, SIGHUP (and SIGINT) while writing: the temporary file goes too.
mkfifo "$TMP/slow.fa"
for sig in TERM HUP INT; do
    rm -f "$TMP/sig.tsv"
    if [ $sig = INT ]; then
        # background jobs start with SIGINT ignored; give it its default back
        env --default-signal=INT true 2>/dev/null || continue
        env --default-signal=INT "$SEQMATCH" search -e GAATTC -o "$TMP/sig.tsv" "$TMP/slow.fa" 2>"$TMP/err" &
    else
        "$SEQMATCH" search -e GAATTC -o "$TMP/sig.tsv" "$TMP/slow.fa" 2>"$TMP/err" &
    fi
    pid=$!
    # opening the FIFO waits for seqmatch, which opens it after its output
    exec 7>"$TMP/slow.fa"
    printf '>a\nGAATTC' >&7
    kill -$sig $pid
    wait $pid 2>/dev/null
    status=$?
    exec 7>&-
    check_status "SIG$sig while writing -o (exit)" $((128 + $(kill -l $sig)))
    if [ ! -e "$TMP/sig.tsv" ] && [ -z "$(ls "$TMP" | grep '^sig\.tsv')" ]; then
        pass
    else
        fail "SIG$sig while writing -o: left $(ls "$TMP" | grep '^sig\.tsv')"
    fi
done

if [ -w /dev/full ]; then
    for command in "compile -e ACGT --explain" "compile -e ACGT --dump-dfa" "search --help" "compile --help" \
                   "--help" "--version" "dfa --regex ACGT $H/crlf.fa" "dfa --regex ACGT --dump" "dfa --help"; do
        # shellcheck disable=SC2086
        "$SEQMATCH" $command >/dev/full 2>"$TMP/err"
        status=$?
        check_status "$command > /dev/full (exit)" 2
        check_stderr "$command > /dev/full" "seqmatch: standard output: No space left on device"
    done
    # The database writer removes a half-written file; never a device.
    ln -s /dev/full "$TMP/full_link"
    expect_error "compile -o onto /dev/full" "$TMP/full_link: No space left on device" \
        compile -e ACGT -o "$TMP/full_link"
    if [ -c /dev/full ] && [ -L "$TMP/full_link" ]; then pass; else fail "compile -o onto /dev/full removed it"; fi
fi

finish
