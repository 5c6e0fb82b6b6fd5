# The same search gives byte-identical output whatever the thread count, the
# chunk size, the engine (among those valid for the match kind), the
# overlap-free modes or a saved database: on the bundled E. coli excerpt and
# on a generated multi-record FASTA with IUPAC codes, N runs, lower case,
# empty and short records and uneven line widths.
. "$(dirname "$0")/testlib.bash"

ECOLI=../examples/ecoli-excerpt.fa
SITES=../examples/patterns.fa

# Deterministic pseudo-random FASTA (a linear congruential generator in awk).
# The example patterns and their reverse complements are planted every ~1000
# bases so that every pattern hits, exactly and approximately.
awk 'BEGIN {
    seed = 4242
    split("A C G T", base, " ")
    split("R Y S W K M B D H V", iupac, " ")
    n_plant = split("GAATTC GGATCC AAGCTT CTGCAG GTCAAC GCTGGTGG CCACCAGC ATGCGAGTGTTGAAGTTCGG CCGAACTTCAACACTCGCAT TCAGACTCCTAACTTCCATG ATGGGTAAAATAATTGGTAT TTATTTTTTGTCTTTGACTT", plant, " ")
    record("long_mixed", 60000, 61, 1)
    record("empty", 0, 60, 0)
    record("short", 3, 60, 0)
    record("all_lower", 5000, 80, 2)
    for (r = 0; r < 60; r++) record("read" r, 50 + (r * 37) % 400, 70 + r % 11, r % 3)
    record("n_flanked", 9000, 50, 3)
}
function rand_int(n) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return int(seed / 65536) % n
}
# kind 0: plain; 1: N runs, IUPAC codes and lower-case stretches; 2: all lower
# case; 3: 3000 N, sequence, 3000 N.
function record(name, len, width, kind,    s, i, c, lower, next_plant, p) {
    printf ">%s generated kind %d\n", name, kind
    s = ""; lower = 0; next_plant = 200
    for (i = 0; i < len; i++) {
        if (kind == 3 && (i < 3000 || i >= len - 3000)) c = "N"
        else if (i == next_plant && i + 20 < len) {
            p = plant[rand_int(n_plant) + 1]
            s = s (lower || kind == 2 ? tolower(p) : p)
            i += length(p) - 1
            next_plant = i + 700 + rand_int(600)
            continue
        } else {
            c = base[rand_int(4) + 1]
            if (kind == 1 && rand_int(500) == 0) c = iupac[rand_int(10) + 1]
            if (kind == 1 && rand_int(2000) == 0) {
                n = 1 + rand_int(300)
                for (j = 0; j < n && i < len; j++) { s = s "N"; i++ }
                c = "N"
            }
            if (kind == 1 && rand_int(700) == 0) lower = !lower
        }
        s = s ((lower || kind == 2) ? tolower(c) : c)
    }
    for (i = 1; i <= length(s); i += width) print substr(s, i, width)
}' >"$TMP/mixed.fa"
if [ "$(grep -c '^>' "$TMP/mixed.fa")" -eq 65 ]; then pass; else fail "generated FASTA has 65 records"; fi

# Exact patterns the k-mer table can take: one length, A C G T only.
printf '>EcoRI\nGAATTC\n>BamHI\nGGATCC\n>HindIII\nAAGCTT\n>PstI\nCTGCAG\n' >"$TMP/kmer_sites.fa"
# Longer patterns for the approximate matrix (k = 2 on 6-mers hits almost everywhere).
sed -n '/^>Chi/,$p' $SITES >"$TMP/long.fa"

# Engines that this build accepts for a match kind (the list may grow).
engine_ok() {
    "$SEQMATCH" compile "$@" --explain >/dev/null 2>&1
}

# matrix NAME ENGINES -- SEARCH_ARGS...: runs the search for every engine of
# ENGINES and every thread count 1-4, each with a chunk size (default 1 MiB,
# 777 or 4096 bytes: small chunks cut the E. coli record into many pieces
# for the threads); every output must equal the first.
RUNS="1:default 2:777 3:4096 4:777 4:default"
matrix() {
    local name=$1 engines=$2
    shift 3
    local first=1 engine one threads chunk chunk_option
    for engine in $engines; do
        for one in $RUNS; do
            threads=${one%%:*}
            chunk=${one##*:}
            if [ "$chunk" = default ]; then chunk_option=""; else chunk_option="--chunk-size $chunk"; fi
            # shellcheck disable=SC2086
            run search "$@" --engine $engine -t $threads $chunk_option
            if [ "$status" -ne 0 ]; then
                fail "$name: --engine $engine -t $threads --chunk-size $chunk: exit status $status"
                continue
            fi
            if [ $first -eq 1 ]; then
                cp "$TMP/out" "$TMP/reference"
                first=0
                continue
            fi
            check_output "$name: --engine $engine -t $threads --chunk-size $chunk" "$TMP/reference"
        done
    done
}

# ---------------------------------------------------------------- exact
matrix "exact, E. coli" "auto automaton shiftand" -- -p $SITES $ECOLI
# The bundled README's total.
run search -p $SITES --format count $ECOLI
if grep -qx "total	238" "$TMP/out"; then pass; else fail "E. coli excerpt: 238 hits"; fi
run search -p $SITES $ECOLI
cp "$TMP/out" "$TMP/ecoli_exact"
for mode in --overlap-free --overlap-free-prefix; do
    for threads in 1 2 3 4; do
        run search -p $SITES --engine automaton $mode -t $threads --chunk-size 777 $ECOLI
        check_output "exact, E. coli: $mode -t $threads" "$TMP/ecoli_exact"
    done
done
for build_threads in 0 1 3; do
    run search -p $SITES --build-threads $build_threads -t 2 --chunk-size 4096 $ECOLI
    check_output "exact, E. coli: --build-threads $build_threads" "$TMP/ecoli_exact"
done
run compile -p $SITES -o "$TMP/sites.smdb"
for threads in 1 4; do
    run search -d "$TMP/sites.smdb" -t $threads --chunk-size 777 $ECOLI
    check_output "exact, E. coli: saved database, -t $threads" "$TMP/ecoli_exact"
done

matrix "exact, mixed" "auto automaton shiftand" -- -p $SITES -e GANTCR "$TMP/mixed.fa"
rows=$(wc -l <"$TMP/reference")
if [ "$rows" -gt 100 ]; then pass; else fail "exact, mixed: only $rows rows"; fi
run search -p $SITES -e GANTCR "$TMP/mixed.fa"
cp "$TMP/out" "$TMP/mixed_exact"
for mode in --overlap-free --overlap-free-prefix; do
    for threads in 1 3; do
        run search -p $SITES -e GANTCR --engine automaton $mode -t $threads --chunk-size 777 "$TMP/mixed.fa"
        check_output "exact, mixed: $mode -t $threads" "$TMP/mixed_exact"
    done
done

if engine_ok --engine kmer -e ACGTAC; then
    matrix "exact k-mers, E. coli" "auto automaton kmer shiftand" -- -p "$TMP/kmer_sites.fa" $ECOLI
    matrix "exact k-mers, mixed" "auto kmer" -- -p "$TMP/kmer_sites.fa" "$TMP/mixed.fa"
fi

# Counting with many patterns: the default chunk grows with the pattern count
# (past 262,144 patterns, 4 bytes each); the counts must not change. The
# 31-mer windows of the E. coli excerpt and of three letter swaps of it
# (270,000 patterns), compiled once.
ecoli_seq() { awk 'NR > 1' $ECOLI | tr -d '\n' | tr a-z A-Z; echo; }
{ ecoli_seq; ecoli_seq | tr ACGT TGCA; ecoli_seq | tr AC CA; ecoli_seq | tr GT TG; } |
    awk '{ for (i = 1; i + 30 <= length($0) && n < 270000; i++) { print ">w" NR "_" i; print substr($0, i, 31); n++ } }' \
    > "$TMP/many.fa"
run compile -p "$TMP/many.fa" -o "$TMP/many.smdb"
check_status "many patterns: compile" 0
# 100 copies (8 MB): several batches of the grown chunks, each counted and added up
for i in $(seq 100); do cat $ECOLI; done > "$TMP/ecoli100.fa"
run search -d "$TMP/many.smdb" --format count --chunk-size 65536 -t 3 "$TMP/ecoli100.fa"
cp "$TMP/out" "$TMP/many_counts"
grep -q "^total	[1-9]" "$TMP/many_counts" && pass || fail "many patterns: no hits counted"
for threads in 1 2; do
    run search -d "$TMP/many.smdb" --format count -t $threads "$TMP/ecoli100.fa"
    check_output "many patterns, counts, default chunk, -t $threads" "$TMP/many_counts"
done

# IUPAC codes in the text: Shift-And only (auto picks it).
matrix "--text-iupac, mixed" "auto shiftand" -- \
    -p $SITES --text-iupac "$TMP/mixed.fa"
# One base and N hits most windows of A C G T: counts only.
matrix "N pattern, mixed" "auto shiftand" -- \
    -e NNNNANNNNN --format count "$TMP/mixed.fa"

# ------------------------------------------------------------ mismatches
mismatch_engines="auto mismatch"
engine_ok -e ACGTACGTAC -m 1 --engine pigeonhole && mismatch_engines="$mismatch_engines pigeonhole"
matrix "-m 1, E. coli" "$mismatch_engines" -- -p $SITES -m 1 $ECOLI
matrix "-m 2, mixed" "$mismatch_engines" -- -p "$TMP/long.fa" -m 2 "$TMP/mixed.fa"

# ----------------------------------------------------------------- edits
edit_engines="auto myers wavefront"
engine_ok -e ACGTACGTAC -k 1 --engine pigeonhole && edit_engines="$edit_engines pigeonhole"
for report in best ends; do
    matrix "-k 2 --report $report, E. coli" "$edit_engines" -- \
        -p "$TMP/long.fa" -k 2 --report $report $ECOLI
    matrix "-k 2 --report $report, mixed" "$edit_engines" -- \
        -p "$TMP/long.fa" -k 2 --report $report "$TMP/mixed.fa"
done
# Default report mode is best.
run search -p "$TMP/long.fa" -k 2 $ECOLI
cp "$TMP/out" "$TMP/default_report"
run search -p "$TMP/long.fa" -k 2 --report best $ECOLI
check_output "-k: --report best is the default" "$TMP/default_report"

finish
