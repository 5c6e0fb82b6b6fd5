# The progress line (file N of M, percent, MB/s, hits so far, time left) and
# the closing summary of search and filter: shown with --progress (or on a
# terminal), never with --no-progress or when standard error is a file.
. "$(dirname "$0")/testlib.bash"

# 2000 records of 2 kbp: the line is drawn between records.
head -c 4000000 /dev/urandom | tr '\000-\377' "$(printf 'ACGT%.0s' $(seq 64))" |
    awk '{ for (i = 0; i < 2000; i++) printf ">r%d\n%s\n", i, substr($0, i * 2000 + 1, 2000) }' >"$TMP/many.fa"
hits=$("$SEQMATCH" search -e ACGT --format count --no-progress "$TMP/many.fa" "$TMP/many.fa" | awk '$2 == "total" { n += $3 } END { print n }')

# The output is read only after 1.2 s: the scan waits on it with the files
# partly read, so that the line then tells the time left.
"$SEQMATCH" search --progress -t 1 --chunk-size 4096 -e ACGT "$TMP/many.fa" "$TMP/many.fa" 2>"$TMP/err" |
    { sleep 1.2; cat >/dev/null; }
tr '\r' '\n' <"$TMP/err" | sed "s/$(printf '\033')\\[K//g" | grep -v '^$' >"$TMP/lines"
if grep -q "many.fa  file [12] of 2  .*%  .*MB/s  [0-9,]* hits  [0-9]*:[0-9][0-9] left" "$TMP/lines"; then pass
else fail "progress line: $(head -c 300 "$TMP/lines")"; fi
with_commas=$(echo "$hits" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta')
summary="seqmatch: $with_commas hits of 1 pattern; 2 files, 8.0 MB of sequence in "
if [ "$(grep -c '^seqmatch: ' "$TMP/lines")" -eq 1 ] && grep -qF "$summary" "$TMP/lines"; then pass
else fail "search summary, want '$summary...': $(grep '^seqmatch' "$TMP/lines")"; fi

# filter: records with a hit among those read
printf '@a\nACGTTT\n+\nIIIIII\n@b\nTTTTTT\n+\nIIIIII\n@c\nGGACGT\n+\nIIIIII\n' >"$TMP/r.fq"
run filter --progress --strand + -e ACGT "$TMP/r.fq"
check_status "filter --progress" 0
if grep -q '^seqmatch: 2 of 3 records with a hit (66.7 %); 0.0 MB of sequence in [0-9.]* s' "$TMP/err"; then pass
else fail "filter summary: $(cat "$TMP/err")"; fi

# Not on a file, and never with --no-progress.
run search -e ACGT "$TMP/r.fq"
check_stderr_empty "no progress to a file"
run search --progress --no-progress -e ACGT "$TMP/r.fq"
check_stderr_empty "--no-progress"
run filter -e ACGT "$TMP/r.fq"
check_stderr_empty "filter: no summary to a file"

finish
