# Text mode: a file is one record (newlines included), --lines makes each line
# a record, -i ignores case; escaping in tsv and jsonl.
. "$(dirname "$0")/testlib.bash"

# log.txt: "INFO start\n" (0-10), "ERROR disk full\n" (11-26),
# "warning: error retry\n" (27-47), "INFO done\n" (48-57).
run search --alphabet text -e ERROR $DATA/log.txt
check_status "text exit" 0
check_output_text "text case-sensitive" "#record	pattern	strand	start	end	errors	matched
data/cli/log.txt	ERROR	+	11	16	0	ERROR
"

run search --alphabet text -i -e ERROR -e INFO $DATA/log.txt
check_output_text "text -i" "#record	pattern	strand	start	end	errors	matched
data/cli/log.txt	INFO	+	0	4	0	INFO
data/cli/log.txt	ERROR	+	11	16	0	ERROR
data/cli/log.txt	ERROR	+	36	41	0	error
data/cli/log.txt	INFO	+	48	52	0	INFO
"

# A pattern spanning a newline: text keeps the bytes as they are.
run search --alphabet text --format jsonl -e "full
warn" $DATA/log.txt
check_output_text "pattern across a newline" '{"record":"data/cli/log.txt","pattern":"full\u000awarn","strand":"+","start":22,"end":31,"errors":0,"matched":"full\u000awarn"}
'

run search --lines -e INFO $DATA/log.txt
check_status "--lines exit" 0
check_output_text "--lines" "#record	pattern	strand	start	end	errors	matched
data/cli/log.txt:1	INFO	+	0	4	0	INFO
data/cli/log.txt:4	INFO	+	0	4	0	INFO
"
run search --alphabet text --lines -i --format bed -e error $DATA/log.txt
check_output_text "--lines -i bed" "data/cli/log.txt:2	0	5	error	1000	+
data/cli/log.txt:3	9	14	error	1000	+
"
run search --lines -i --format count -e error -e info -e absent $DATA/log.txt
check_output_text "--lines count" "error	2
info	2
absent	0
total	4
"

# --lines does not see the newline, and drops \r of CRLF lines.
printf 'ab\r\ncd\r\n' >"$TMP/crlf.txt"
run search --lines -e b -e c --format bed "$TMP/crlf.txt"
check_output_text "--lines CRLF" "$TMP/crlf.txt:1	1	2	b	1000	+
$TMP/crlf.txt:2	0	1	c	1000	+
"
run search --lines -e "
" "$TMP/crlf.txt"
check_status "--lines newline pattern finds nothing" 1

# Text patterns are not DNA: any bytes go, no reverse strand.
run search --alphabet text -e 'disk full' -e '[x]' $DATA/log.txt
check_output_text "text pattern with space" "#record	pattern	strand	start	end	errors	matched
data/cli/log.txt	disk full	+	17	26	0	disk full
"

# jsonl: quote, backslash and control characters escaped.
# control.txt holds: x \001 y " z \ w \n
run search --alphabet text --format jsonl -e "$(printf '\001y"z\\w')" $DATA/control.txt
check_output_text "jsonl escaping" '{"record":"data/cli/control.txt","pattern":"\u0001y\"z\\w","strand":"+","start":1,"end":7,"errors":0,"matched":"\u0001y\"z\\w"}
'

# jsonl: valid UTF-8 passes through, a stray byte becomes \u00XX.
printf 'caf\303\251 caf\351\n' >"$TMP/utf8.txt"
run search --alphabet text --format jsonl -e "$(printf 'f\303\251')" -e "$(printf 'f\351')" "$TMP/utf8.txt"
printf '{"record":"%s","pattern":"f\303\251","strand":"+","start":2,"end":5,"errors":0,"matched":"f\303\251"}\n{"record":"%s","pattern":"f\\u00e9","strand":"+","start":8,"end":10,"errors":0,"matched":"f\\u00e9"}\n' \
    "$TMP/utf8.txt" "$TMP/utf8.txt" >"$TMP/utf8.expected"
check_output "jsonl UTF-8" "$TMP/utf8.expected"
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys
for line in open(sys.argv[1], encoding="utf-8"): json.loads(line)' "$TMP/out"; then
        pass
    else
        fail "jsonl lines must parse as JSON"
    fi
fi

# tsv: tab, newline, carriage return and backslash in a field are escaped.
printf 'a\tb\\c\n' >"$TMP/tab.txt"
run search --alphabet text -e "$(printf 'a\tb\\c')" --no-header "$TMP/tab.txt"
printf '%s\ta\\tb\\\\c\t+\t0\t5\t0\ta\\tb\\\\c\n' "$TMP/tab.txt" >"$TMP/tab.expected"
check_output "tsv escaping" "$TMP/tab.expected"

# Whole-file text from standard input, and a gzip-compressed text file.
run_stdin $DATA/log.txt search --alphabet text --format count -e INFO
check_output_text "text stdin" "INFO	2
total	2
"
gzip -c $DATA/log.txt >"$TMP/log.txt.gz"
run search --alphabet text --format bed -e ERROR "$TMP/log.txt.gz"
check_output_text "text gzip" "$TMP/log.txt.gz	11	16	ERROR	1000	+
"

# A text database keeps its alphabet and case setting.
run compile --alphabet text -i -e error -o "$TMP/text.smdb"
check_status "text compile" 0
run search -d "$TMP/text.smdb" --lines --format bed $DATA/log.txt
check_output_text "text -d --lines" "data/cli/log.txt:2	0	5	error	1000	+
data/cli/log.txt:3	9	14	error	1000	+
"

# An empty text file: one empty record, no hits.
: >"$TMP/empty.txt"
run search --alphabet text -e x "$TMP/empty.txt"
check_status "empty text file" 1
check_stderr_empty "empty text file stderr"

finish
