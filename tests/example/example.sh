# examples/example.c: the same hits as `seqmatch search` on the bundled excerpt
# (record, pattern, strand, start, end, matched text).
# Run as: bash example.sh SEQMATCH EXAMPLE, from tests/ (as CMake does).
. "$(dirname "$0")/../cli/testlib.bash"
EXAMPLE=${2:?usage: example.sh SEQMATCH EXAMPLE}
X=../examples/ecoli-excerpt.fa
"$EXAMPLE" "$X" GAATTC GGATCC GTYRAC >"$TMP/example" 2>"$TMP/example.err"
status=$?
check_status "example runs" 0
"$SEQMATCH" search -e GAATTC -e GGATCC -e GTYRAC "$X" | tail -n +2 | cut -f 1-5,7 >"$TMP/expected"
if [ -s "$TMP/expected" ] && cmp -s "$TMP/example" "$TMP/expected"; then
    pass
else
    fail "example's hits differ from seqmatch search"
    diff "$TMP/expected" "$TMP/example" | head -5
fi
if grep -qx "$(wc -l <"$TMP/expected") hits" "$TMP/example.err"; then pass; else fail "example's hit count"; fi
"$EXAMPLE" "$X" GAATTX >"$TMP/out" 2>"$TMP/err"
status=$?
check_status "example refuses a bad pattern" 2
finish
