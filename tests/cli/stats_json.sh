# --stats-json (search, filter, demux, trim, amplicon): the report parses as JSON
# (python3), names its schema and version, and its numbers equal what the
# outputs hold (records, bases, hits per pattern, reads per sample, reads
# trimmed); it is written only when the run succeeds, atomically, and
# refused as an input. search --columns: chosen columns in order, the
# header naming them, refusals in one line.
. "$(dirname "$0")/testlib.bash"

if ! command -v python3 >/dev/null; then
    echo "python3 not found: skipped"
    exit 0
fi
# json FILE EXPR: prints the python expression over the parsed report j
json() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }
# fq FILE: records and bases of a one-line FASTQ
fq() { awk 'NR % 4 == 2 { n++; b += length($0) } END { print n + 0, b + 0 }' "$1"; }

printf '@a\nACGTACGGGGTTGGCC\n+\nIIIIIIIIIIIIIIII\n@b\nCCCCCCCCCC\n+\nIIIIIIIIII\n@c\nACGTACAAAAACGTAC\n+\nIIIIIIIIIIIIIIII\n@d\nGGGGTTGGCCAAAA\n+\nIIIIIIIIIIIIII\n' >"$TMP/r.fq"

# search: records and bases in, hits per pattern (forward strand: ACGTAC 3, TTGGCC 2)
run search -e ACGTAC -e TTGGCC --strand + --stats-json "$TMP/s.json" "$TMP/r.fq"
check_status "search with --stats-json" 0
[ "$(json "$TMP/s.json" 'j["schema"], j["version"], j["command"], j["inputs"][0] == sys.argv[1].replace("s.json", "r.fq")')" = \
    "seqmatch-stats 1 search True" ] && pass || fail "search: schema, version, command, inputs: $(cat "$TMP/s.json")"
[ "$(json "$TMP/s.json" 'j["records"]["input"], j["bases"]["input"], j["hits"]["total"], [(p["name"], p["hits"]) for p in j["patterns"]]')" = \
    "4 56 5 [('ACGTAC', 3), ('TTGGCC', 2)]" ] && pass || fail "search numbers: $(cat "$TMP/s.json")"
[ "$(awk 'NR > 1' "$TMP/out" | wc -l)" -eq "$(json "$TMP/s.json" 'j["hits"]["total"]')" ] && pass || fail "search: hits = rows"
[ "$(json "$TMP/s.json" 'j["plot_type"], list(j["data"]) == ["r.fq"]')" = "table True" ] && pass ||
    fail "search: MultiQC custom content"
python3 -m json.tool "$TMP/s.json" >/dev/null && pass || fail "json.tool parses it"

# filter: reads and bases out equal the output's
run filter -e ACGTAC -o "$TMP/f.fq" --stats-json "$TMP/f.json" "$TMP/r.fq"
[ "$(json "$TMP/f.json" 'j["reads"]["input"], j["bases"]["input"], j["reads"]["output"], j["bases"]["output"]')" = \
    "4 56 $(fq "$TMP/f.fq")" ] && [ "$(json "$TMP/f.json" '[(p["name"], p["records"]) for p in j["patterns"]]')" = "[('ACGTAC', 2)]" ] &&
    pass || fail "filter numbers: $(cat "$TMP/f.json")"
run filter -e ACGTAC -v -o "$TMP/f.fq" --stats-json "$TMP/f.json" "$TMP/r.fq"
[ "$(json "$TMP/f.json" 'j["reads"]["output"], j["bases"]["output"], j["reads"]["matched"]')" = "$(fq "$TMP/f.fq") 2" ] &&
    pass || fail "filter -v numbers: $(cat "$TMP/f.json")"

# demux by pairs of mates, trimmed: reads per sample = records in its files, bases out = theirs
printf 'S1\tACGTAC\tTTGGCC\nS2\tCCCCCC\tTTGGCC\n' >"$TMP/pairs.tsv"
printf '@p1/1\nACGTACGGGG\n+\nIIIIIIIIII\n@p2/1\nCCCCCCGGGGGG\n+\nIIIIIIIIIIII\n@p3/1\nAAAAAAAAAA\n+\nIIIIIIIIII\n' >"$TMP/m1.fq"
printf '@p1/2\nTTGGCCAAAA\n+\nIIIIIIIIII\n@p2/2\nTTGGCCAAAAAA\n+\nIIIIIIIIIIII\n@p3/2\nTTGGCCAAAA\n+\nIIIIIIIIII\n' >"$TMP/m2.fq"
run demux --barcodes "$TMP/pairs.tsv" --trim -o "$TMP/dm" --stats-json "$TMP/d.json" -1 "$TMP/m1.fq" -2 "$TMP/m2.fq"
check_status "demux with --stats-json" 0
s1=$(fq "$TMP/dm/S1_R1.fastq" | cut -d' ' -f1) s2=$(fq "$TMP/dm/S2_R1.fastq" | cut -d' ' -f1)
b=$(cat "$TMP"/dm/S?_R?.fastq | awk 'NR % 4 == 2 { b += length($0) } END { print b }')
[ "$(json "$TMP/d.json" '[(s["name"], s["reads"]) for s in j["samples"]]')" = "[('S1', $s1), ('S2', $s2), ('unassigned', 1)]" ] &&
    [ "$(json "$TMP/d.json" 'j["reads"]["input"], j["reads"]["output"], j["bases"]["input"], j["bases"]["output"]')" = "3 2 64 $b" ] &&
    [ "$(json "$TMP/d.json" 'j["unassigned"]["no_hit"], j["samples"][0]["file_r2"] == sys.argv[1].replace("d.json", "dm/S1_R2.fastq")')" = "1 True" ] &&
    [ "$(json "$TMP/d.json" 'sorted(j["data"])')" = "['S1', 'S2', 'unassigned']" ] &&
    pass || fail "demux numbers: $(cat "$TMP/d.json")"

# trim: reads trimmed and bases kept
printf '@t1\nCCCCAGATCGGAAG\n+\nIIIIIIIIIIIIII\n@t2\nCCCCCCCC\n+\nIIIIIIII\n' >"$TMP/t.fq"
run trim -a AGATCGGAAGAGC -o "$TMP/t_out.fq" --stats-json "$TMP/t.json" "$TMP/t.fq"
[ "$(json "$TMP/t.json" 'j["reads"]["input"], j["reads"]["mates_trimmed"], j["bases"]["input"], j["reads"]["output"], j["bases"]["output"]')" = \
    "2 1 22 $(fq "$TMP/t_out.fq")" ] && pass || fail "trim numbers: $(cat "$TMP/t.json")"

# amplicon: records and bases in, products per pair and strand = the TSV's rows (two files summed)
printf '>r1\nTTACGTTGGGGACGTTGCCACTTGGAACTTGGTT\n>r2\nGGCCAAGTTTTTCAACGTG\n>r3\nACG\n' >"$TMP/a.fa"
printf '>s1\nACGTTGAAAACTTGG\n' >"$TMP/a2.fa"
printf 'p1\tACGTTG\tCCAAGT\np2\tGGGGGG\tTTTTTT\n' >"$TMP/a.tsv"
run amplicon -p "$TMP/a.tsv" --stats-json "$TMP/a.json" "$TMP/a.fa" "$TMP/a2.fa"
check_status "amplicon with --stats-json" 0
rows() { awk -F'\t' -v p="$1" -v s="$2" '!/^#/ && $6 == p && (s == "" || $5 == s)' "$TMP/out" | wc -l; }
[ "$(json "$TMP/a.json" 'j["command"], j["records"]["input"], j["records"]["with_product"], j["bases"]["input"], len(j["inputs"])')" = \
    "amplicon 4 3 71 2" ] && pass || fail "amplicon records, bases: $(cat "$TMP/a.json")"
[ "$(json "$TMP/a.json" 'j["products"]["total"], j["products"]["plus"], j["products"]["minus"]')" = \
    "$(awk '!/^#/' "$TMP/out" | wc -l) $(rows p1 +) $(rows p1 -)" ] && pass || fail "amplicon products = rows: $(cat "$TMP/a.json")"
[ "$(json "$TMP/a.json" '[(p["name"], p["products"], p["plus"], p["minus"]) for p in j["pairs"]]')" = \
    "[('p1', $(rows p1), $(rows p1 +), $(rows p1 -)), ('p2', 0, 0, 0)]" ] && [ "$(rows p1 +)" -eq 5 ] &&
    pass || fail "amplicon per pair: $(cat "$TMP/a.json")"
[ "$(json "$TMP/a.json" 'j["id"], j["data"]["a.fa"]["products_total"]')" = "seqmatch_amplicon 6" ] && pass ||
    fail "amplicon: MultiQC custom content"
echo old >"$TMP/a.json"
run amplicon -p "$TMP/a.tsv" --stats-json "$TMP/a.json" "$TMP/a.fa" "$TMP/missing.fa"
[ "$status" -eq 2 ] && [ "$(cat "$TMP/a.json")" = old ] && pass || fail "a failed amplicon leaves the report as it was"
run amplicon -p "$TMP/a.tsv" --stats-json "$TMP/a.fa" "$TMP/a.fa"
check_stderr "amplicon: the report is an input" "a.fa"

# refusals and failures: one line, the report not written (an old one stays)
echo old >"$TMP/keep.json"
run search -e ACGTAC --stats-json "$TMP/keep.json" "$TMP/missing.fq"
[ "$status" -eq 2 ] && [ "$(cat "$TMP/keep.json")" = old ] && pass || fail "a failed search leaves the report as it was"
run search -e ACGTAC --stats-json "$TMP/r.fq" "$TMP/r.fq"
check_stderr "the report is an input" "r.fq"
run search -e ACGTAC --stats-json "$TMP/nodir/s.json" "$TMP/r.fq"
[ "$status" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "a report in a missing folder: one line, exit 2"
run search -e ACGTAC --shard 1/2 --stats-json "$TMP/x.json" "$TMP/r.fq"
check_stderr "--stats-json with --shard" "run in one process"
run search -e ACGTAC --shard 1/2 --columns record "$TMP/r.fq"
check_stderr "--columns with --shard" "run in one process"
run compile -e ACGTAC --stats-json "$TMP/x.json" -o "$TMP/x.db"
check_stderr "--stats-json on compile" "stats-json"
[ ! -e "$TMP/x.json" ] && pass || fail "no report from a refused run"

# A report that could not be written is named before the run: no search is
# made only to be thrown away, and -o's file is not left behind.
for cmd in search filter; do
    run $cmd -e ACGTAC -o "$TMP/kept.$cmd" --stats-json "$TMP/no-such-folder/s.json" "$TMP/r.fq"
    check_status "$cmd: --stats-json in a missing folder" 2
    check_stderr "$cmd: --stats-json in a missing folder: one line" "no-such-folder/s.json: No such file or directory"
    [ ! -e "$TMP/kept.$cmd" ] && pass || fail "$cmd: --stats-json in a missing folder: -o's file left behind"
done
run trim -a ACGTAC --stats-json "$TMP/no-such-folder/s.json" "$TMP/r.fq"
check_stderr "trim: --stats-json in a missing folder" "no-such-folder/s.json"
check_stdout_empty "trim: --stats-json in a missing folder: nothing trimmed"

# --columns
run search -e ACGTAC -e TTGGCC --strand + --columns pattern,record,length,end "$TMP/r.fq"
printf '#pattern\trecord\tlength\tend\nACGTAC\ta\t6\t6\nTTGGCC\ta\t6\t16\nACGTAC\tc\t6\t6\nACGTAC\tc\t6\t16\nTTGGCC\td\t6\t10\n' >"$TMP/want"
check_output "--columns pattern,record,length,end" "$TMP/want"
run search -e ACGTAC --strand + --columns file,matched,strand,errors,start --no-header "$TMP/r.fq"
printf '%s\tACGTAC\t+\t0\t%s\n' "$TMP/r.fq" 0 "$TMP/r.fq" 0 "$TMP/r.fq" 10 >"$TMP/want"
check_output "--columns with file (one target) and --no-header" "$TMP/want"
run search -e ACGTAC --columns record,score "$TMP/r.fq"
check_stderr "an unknown column" "'score' is not a column; the columns are file, record, pattern"
run search -e ACGTAC --columns record --format bed "$TMP/r.fq"
check_stderr "--columns with bed" "--format tsv"
run search -e ACGTAC --columns record,cigar "$TMP/r.fq"
check_stderr "cigar without --cigar" "needs --cigar"
run filter -e ACGTAC --columns record "$TMP/r.fq"
check_stderr "--columns on filter" "columns"

finish
