# --help, --version, compile --explain and the forms of the command line.
. "$(dirname "$0")/testlib.bash"

run --version
check_status "--version exit" 0
if head -1 "$TMP/out" | grep -qx 'seqmatch 0\.1\.0'; then pass; else fail "--version first line"; fi
if grep -q '^library [0-9]' "$TMP/out"; then pass; else fail "--version names the library"; fi
run search --version
check_status "search --version" 0

for args in "--help" "-h" "help"; do
    # shellcheck disable=SC2086
    run $args
    check_status "$args exit" 0
    check_stderr_empty "$args stderr"
    for word in "seqmatch search" "seqmatch compile" "Examples" "--format count" "bedtools" \
                "--alphabet text" "-d " "Exit status"; do
        if grep -qF -- "$word" "$TMP/out"; then pass; else fail "$args mentions '$word'"; fi
    done
done
run search --help
check_status "search --help exit" 0
for option in -p -e -d --alphabet --lines --strand --ignore-case --text-iupac --engine \
              --build-threads --format -o --threads --chunk-size --max-memory --max-hits --quiet \
              --no-header --progress --no-progress --version; do
    if grep -qF -- "$option" "$TMP/out"; then pass; else fail "search --help lists $option"; fi
done
# --help says that a palindrome counts once per strand, as the counts show it
if grep -q 'palindrome' "$TMP/out" && grep -q 'counts twice' "$TMP/out"; then pass
else fail "search --help: a palindrome's two strands"; fi
printf '>s\nTTGAATTCTT\n' >"$TMP/site.fa"
run search -e GAATTC --format count --no-header "$TMP/site.fa"
twice=$(awk '$1 == "GAATTC" { print $2 }' "$TMP/out")
run search -e GAATTC --format count --strand + "$TMP/site.fa"
once=$(awk '$1 == "GAATTC" { print $2 }' "$TMP/out")
if [ "$twice" = 2 ] && [ "$once" = 1 ]; then pass; else fail "palindrome counts: both strands $twice, + $once"; fi
run help search
if grep -q -- '--chunk-size' "$TMP/out"; then pass; else fail "help search"; fi
run compile --help
check_status "compile --help exit" 0
for option in -p -e -o --explain --alphabet --strand --engine --build-threads --max-memory --gpu; do
    if grep -qF -- "$option" "$TMP/out"; then pass; else fail "compile --help lists $option"; fi
done
# Help wins even with other errors on the line.
run search --help --bogus
check_status "--help before a bad option" 0

# compile --explain describes the database.
run compile -p $DATA/patterns.fa --explain
check_status "--explain exit" 0
for word in "patterns         3" "lengths          6" "automaton" "shift-and" "database size"; do
    if grep -qF "$word" "$TMP/out"; then pass; else fail "--explain shows '$word'"; fi
done
run compile -e ACG -e ACGTACGT --engine shiftand --explain -o "$TMP/sa.smdb"
if grep -qF "lengths          3 to 8" "$TMP/out" && grep -qF "shift-and 2" "$TMP/out"; then
    pass
else
    fail "--explain with --engine shiftand"
fi
if [ -s "$TMP/sa.smdb" ]; then pass; else fail "--explain with -o also saves"; fi
run compile -e ACGTACGT -e GGATCCAA --engine wumanber --explain
if grep -qF "wu-manber 2" "$TMP/out"; then pass; else fail "--explain with --engine wumanber"; fi
run search -e GAATTC --engine wumanber --format count $DATA/small.fa
check_output_text "search with --engine wumanber" "GAATTC	8
total	8
"
# --explain says what the GPU runs for each section, and that it runs no
# approximate engine.
run compile -p $DATA/patterns.fa -e RYKMSWACGTNNRY --explain
if grep -q '^gpu  *automaton, a thread per chunk' "$TMP/out" && grep -q '^gpu  *shift-and' "$TMP/out"; then
    pass
else
    fail "--explain names the GPU's kernels"
fi
run compile -e GAATTCAA -m 1 --explain
if grep -q '^gpu  *bit-sliced mismatch counters' "$TMP/out"; then pass; else fail "--explain names the GPU's mismatch kernel"; fi
run compile -e GAATTCAA -k 1 --engine wavefront --explain
if grep -q '^gpu  *none: wavefront runs on the CPU only' "$TMP/out"; then pass; else fail "--explain: no GPU kernel for the wavefront DP"; fi
# compile --gpu plans for the GPU: 200 distinct 8-mers go to the k-mer table
# there (the CPU keeps the automaton for so few) and the search finds the same.
awk 'BEGIN { split("A C G T", b, " "); for (i = 0; i < 200; i++) { s = ""; x = i * 37 + 11;
     for (j = 0; j < 8; j++) { s = s b[x % 4 + 1]; x = int(x / 4) } print s } }' >"$TMP/k8.txt"
run compile -p "$TMP/k8.txt" --explain
if grep -qF "k-mer table 0" "$TMP/out"; then pass; else fail "200 8-mers stay on the automaton for the CPU"; fi
run compile -p "$TMP/k8.txt" --gpu --explain -o "$TMP/k8gpu.smdb"
if grep -qF "k-mer table 200" "$TMP/out" && grep -q '^planned for  *the GPU' "$TMP/out"; then
    pass
else
    fail "compile --gpu plans the k-mer table"
fi
run search -p "$TMP/k8.txt" --format count $DATA/small.fa
cp "$TMP/out" "$TMP/k8_cpu.count"
run search -d "$TMP/k8gpu.smdb" --format count $DATA/small.fa
check_output "a database planned for the GPU on the CPU" "$TMP/k8_cpu.count"

# Forms of the command line.
run -e GAATTC --format count $DATA/small.fa
check_output_text "options without a command mean search" "GAATTC	8
total	8
"
run search -qe GAATTC $DATA/small.fa
check_status "grouped short options" 0
run search -eGAATTC --format=count -t2 $DATA/small.fa
check_output_text "attached values" "GAATTC	8
total	8
"
cp $DATA/small.fa "$TMP/-dash.fa"
(cd "$TMP" && "$SEQMATCH" search -e GAATTC --format count -- -dash.fa) >"$TMP/out" 2>"$TMP/err"
check_output_text "-- ends the options" "GAATTC	8
total	8
"
run search --max-memory 64M --format count -e GAATTC $DATA/small.fa
check_status "--max-memory with suffix" 0
run search --max-memory 1GiB -q -e GAATTC $DATA/small.fa
check_status "--max-memory GiB" 0
run search --chunk-size 1K -q -e GAATTC $DATA/small.fa
check_status "--chunk-size with suffix" 0
run search --no-progress --format count -e GAATTC $DATA/small.fa
check_status "--no-progress" 0
check_stderr_empty "--no-progress stderr"

# The man page is valid roff that names every option.
MAN=../man/seqmatch.1
if [ -f "$MAN" ]; then
    pass
    if command -v groff >/dev/null 2>&1; then
        if groff -man -Tutf8 -ww "$MAN" 2>"$TMP/roff_err" >"$TMP/man.txt" && [ ! -s "$TMP/roff_err" ]; then
            pass
        else
            fail "man page has roff warnings"
            head -5 "$TMP/roff_err"
        fi
    fi
    for option in --alphabet --lines --strand --ignore-case --text-iupac --engine --build-threads \
                  --format --output --threads --chunk-size --max-memory --max-hits --quiet --no-header \
                  --progress --no-progress --explain; do
        if grep -qF -- "${option//-/\\-}" "$MAN"; then pass; else fail "man page lists $option"; fi
    done
    # every option once: an entry (.TP then the option) per option
    for option in --format --strand --progress --explain --dump-dfa; do
        n=$(grep -A1 '^\.TP' "$MAN" | sed -n 's/^\.B[IR]* //p' | awk -v o="${option//-/\\-}" '$1 == o' | wc -l)
        if [ "$n" -eq 1 ]; then pass; else fail "man page: $n entries for $option"; fi
    done
    # sections in order, each once (no "continued")
    grep '^\.S[HS]' "$MAN" | cut -d' ' -f2- >"$TMP/sections"
    if [ "$(sort "$TMP/sections" | uniq -d)" = "" ] && ! grep -q continued "$TMP/sections" &&
        [ "$(grep -n '^Compile only$' "$TMP/sections" | cut -d: -f1)" -lt "$(grep -n '^Other$' "$TMP/sections" | cut -d: -f1)" ]
    then pass; else fail "man page sections: $(tr '\n' ',' <"$TMP/sections")"; fi
    # zstd input is read where the build has libzstd (--version says so), not refused
    if "$SEQMATCH" --version | grep -q zstd; then
        if grep -q 'zstd files are refused' "$MAN"; then fail "man page: zstd refused"; else pass; fi
    fi
else
    fail "man page missing"
fi

finish
