# Memory whatever the hit density (docs/architecture.md, "Memory"): the hits
# a scan holds are bounded by the chunk size and the thread count, so dense
# hits (every position a hit of every pattern) cost no more memory than few;
# a failed allocation ends the run at once with a message. Peak RSS is read
# from /usr/bin/time (or /proc) in release builds; sanitizer builds check
# the same outputs on smaller inputs. bench/run-memory.sh runs the full-size
# cases of the figures in docs/benchmarks.md.
. "$(dirname "$0")/testlib.bash"

T=$'\t'
sanitized=0
if grep -qa -e __asan_init -e __tsan_init "$SEQMATCH"; then sanitized=1; fi

# check_rss NAME LIMIT_MIB
check_rss() {
    if [ $sanitized -eq 1 ]; then
        pass
    elif [ -z "$rss_mb" ]; then
        echo "note: $1: peak RSS could not be measured"
    elif [ "$rss_mb" -le "$2" ]; then
        pass
    else
        fail "$1: peak RSS $rss_mb MiB, limit $2 MiB"
    fi
}

# 60 copies of the pattern A over one record of N bases of A: 60 N hits
# (unbounded, 24 bytes each and as many again to sort them: 430 MB for
# 150 kbp).
n=150000
[ $sanitized -eq 1 ] && n=10000
for i in $(seq 60); do echo A; done >"$TMP/a60.txt"
{ printf '>polyA\n'; head -c $n /dev/zero | tr '\0' A; printf '\n'; } >"$TMP/polyA.fa"
hits=$((60 * n))
for t in 1 2 4; do
    measure search -t $t -p "$TMP/a60.txt" --no-header "$TMP/polyA.fa"
    check_status "60 x A, tsv, -t $t (exit)" 0
    if [ "$(wc -l <"$TMP/out")" -eq $hits ] && [ "$(head -n 1 "$TMP/out")" = "polyA${T}A${T}+${T}0${T}1${T}0${T}A" ] &&
        [ "$(tail -n 1 "$TMP/out")" = "polyA${T}A${T}+${T}$((n - 1))${T}$n${T}0${T}A" ]; then
        pass
    else
        fail "60 x A, tsv, -t $t: $(wc -l <"$TMP/out") rows, first '$(head -n 1 "$TMP/out")'"
    fi
    check_rss "60 x A, tsv, -t $t" 256
    measure search -t $t -p "$TMP/a60.txt" --format count "$TMP/polyA.fa"
    if [ "$(tail -n 1 "$TMP/out")" = "total${T}$hits" ]; then pass; else fail "60 x A, count, -t $t: $(tail -n 1 "$TMP/out")"; fi
    check_rss "60 x A, count, -t $t" 64
    measure search -t $t -p "$TMP/a60.txt" --format records "$TMP/polyA.fa"
    if [ "$(tail -n 1 "$TMP/out" | cut -f 1,2)" = "polyA${T}$hits" ]; then pass; else fail "60 x A, records, -t $t: $(cut -c 1-60 "$TMP/out")"; fi
    check_rss "60 x A, records, -t $t" 64
    measure filter -t $t -p "$TMP/a60.txt" "$TMP/polyA.fa"
    if cmp -s "$TMP/out" "$TMP/polyA.fa"; then pass; else fail "60 x A, filter, -t $t: the record not kept as it was"; fi
    check_rss "60 x A, filter, -t $t" 64
    rm -rf "$TMP/dm"
    measure demux -t $t --anchor any -p "$TMP/a60.txt" -o "$TMP/dm" "$TMP/polyA.fa"
    if cmp -s "$TMP/dm/A.fasta" "$TMP/polyA.fa"; then pass; else fail "60 x A, demux --anchor any, -t $t: not in A.fasta"; fi
    check_rss "60 x A, demux --anchor any, -t $t" 64
done

# k edits, counted: short patterns with k = 3 end nearly everywhere, and
# --report best must join runs of ends before counting (hits stored: 125 MB
# for 300 kbp, unbounded).
m=300000
[ $sanitized -eq 1 ] && m=20000
awk -v n=$m 'BEGIN { srand(7); printf ">g\n"; for (i = 0; i < n; i++) printf "%s", substr("ACGT", int(rand() * 4) + 1, 1); printf "\n" }' >"$TMP/g.fa"
printf 'ACGTA\nTTGCA\nGGATC\nCATGT\nAAGCT\n' >"$TMP/five.txt"
"$SEQMATCH" search -t 1 -k 3 -p "$TMP/five.txt" --format count --chunk-size 4096 "$TMP/g.fa" >"$TMP/count1" 2>"$TMP/err"
for t in 1 2 4; do
    measure search -t $t -k 3 -p "$TMP/five.txt" --format count "$TMP/g.fa"
    if cmp -s "$TMP/out" "$TMP/count1" && [ "$(tail -n 1 "$TMP/out" | cut -f 2)" -gt $((m / 2)) ]; then
        pass
    else
        fail "5-mers -k 3 counted, -t $t: counts differ"
    fi
    check_rss "5-mers -k 3 counted, -t $t" 64
done

# k edits over poly-A: 60 copies of AAAA -k 1 end at every position, one run
# of ends per pattern over the whole record (cut at every segment and piece
# border), summed by the threads without a hit list: one hit per pattern.
for i in $(seq 60); do echo AAAA; done >"$TMP/a60x4.txt"
for t in 1 2 4; do
    measure search -t $t -k 1 -p "$TMP/a60x4.txt" --format count "$TMP/polyA.fa"
    if [ "$(tail -n 1 "$TMP/out")" = "total${T}60" ]; then pass; else fail "60 x AAAA -k 1, count, -t $t: $(tail -n 1 "$TMP/out")"; fi
    check_rss "60 x AAAA -k 1, count, -t $t" 64
    measure search -t $t -k 1 -p "$TMP/a60x4.txt" --format records --chunk-size 4096 "$TMP/polyA.fa"
    if [ "$(tail -n 1 "$TMP/out" | cut -f 1,2)" = "polyA${T}60" ]; then pass; else fail "60 x AAAA -k 1, records, -t $t: $(cut -c 1-60 "$TMP/out")"; fi
    check_rss "60 x AAAA -k 1, records, -t $t" 64
done

# A failed allocation ends the run at once with the message: an item may
# hold chunk / 64 hits, 384 MB with --chunk-size 1G, which the limit forbids.
# (Before, every later hit tried the same allocation again: minutes.)
if [ $sanitized -eq 0 ]; then
    start=$(date +%s)
    (ulimit -v 300000 && exec "$SEQMATCH" search -t 2 --chunk-size 1G -p "$TMP/a60.txt" "$TMP/polyA.fa" >/dev/null 2>"$TMP/err")
    status=$?
    took=$(($(date +%s) - start))
    check_status "out of memory for hits (exit)" 2
    check_stderr "out of memory for hits" "out of memory while scanning"
    if [ $took -le 5 ]; then pass; else fail "out of memory for hits: the run took $took s"; fi
    # The same search in the default chunk needs little: it runs under the limit.
    (ulimit -v 300000 && exec "$SEQMATCH" search -t 2 -p "$TMP/a60.txt" --format records "$TMP/polyA.fa" >"$TMP/out" 2>"$TMP/err")
    status=$?
    check_status "dense hits under ulimit -v 300000 (exit)" 0
fi

finish
