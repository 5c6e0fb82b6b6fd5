# The same output whatever the thread count or chunk size, checked against
# an independent regular-expression oracle; many hits through a pipe that
# closes early.
. "$(dirname "$0")/testlib.bash"

# Deterministic pseudo-random data (a linear congruential generator in awk):
# three long records with some N and lower case, then many short FASTQ reads.
awk 'BEGIN {
    seed = 12345; split("A C G T", base, " ")
    n_records = split("150000 777 40000", sizes, " ")
    for (r = 1; r <= n_records; r++) {
        printf ">rec%d some description\n", r
        line = ""
        for (i = 0; i < sizes[r]; i++) {
            seed = (seed * 1103515245 + 12345) % 2147483648
            c = base[int(seed / 65536) % 4 + 1]
            if (int(seed / 16) % 997 == 0) c = "N"
            if (r == 2) c = tolower(c)
            line = line c
            if (length(line) == 61) { print line; line = "" }
        }
        if (line != "") print line
    }
}' >"$TMP/genome.fa"
awk 'BEGIN {
    seed = 777; split("A C G T", base, " ")
    for (r = 0; r < 3000; r++) {
        len = 20 + r % 50; s = ""; q = ""
        for (i = 0; i < len; i++) {
            seed = (seed * 1103515245 + 12345) % 2147483648
            s = s base[int(seed / 65536) % 4 + 1]; q = q "I"
        }
        printf "@read%d\n%s\n+\n%s\n", r, s, q
    }
}' >"$TMP/reads.fq"
# Short patterns hit often, long ones rarely; IUPAC codes; some longer than
# the small chunk sizes below.
cat >"$TMP/patterns.fa" <<'EOF'
>k6
ACGTAC
>k5
GGATC
>iupac
GANTCR
>k8
TTAGCCAA
>k3
CAT
>long30
ACGTACGTACGTACGTACGTACGTACGTAC
>iupac12
RYKMSWACGTNN
EOF
# Patterns that occur in the data, taken from it so that long ones hit too.
sed -n '2p' "$TMP/genome.fa" | cut -c5-29 | awk '{print ">from_rec1\n" $0}' >>"$TMP/patterns.fa"
sed -n '2p' "$TMP/reads.fq" | cut -c1-15 | awk '{print ">from_read0\n" $0}' >>"$TMP/patterns.fa"

# Reference output: the default run.
run search -p "$TMP/patterns.fa" --no-header "$TMP/genome.fa" "$TMP/reads.fq"
check_status "reference run" 0
cp "$TMP/out" "$TMP/reference.tsv"
rows=$(wc -l <"$TMP/reference.tsv")
if [ "$rows" -gt 1000 ]; then pass; else fail "expected many hits, got $rows"; fi

for threads in 1 2 4 0; do
    for chunk in default 16 100 4096; do
        if [ $chunk = default ]; then chunk_option=""; else chunk_option="--chunk-size $chunk"; fi
        # shellcheck disable=SC2086
        run search -p "$TMP/patterns.fa" --no-header -t $threads $chunk_option "$TMP/genome.fa" "$TMP/reads.fq"
        check_output "--threads $threads --chunk-size $chunk" "$TMP/reference.tsv"
    done
done
# Two targets: rows start with the file, counts are per file (file, pattern, count).
for threads in 1 4; do
    run search -p "$TMP/patterns.fa" --format count --threads $threads --chunk-size 64 "$TMP/genome.fa" "$TMP/reads.fq"
    cut -f1,3 "$TMP/reference.tsv" | sort | uniq -c | awk '{print $2 "\t" $3 "\t" $1}' | sort >"$TMP/ref_counts"
    awk -F'\t' '$2 != "total" && $3 > 0' "$TMP/out" | sort >"$TMP/got_counts"
    if cmp -s "$TMP/ref_counts" "$TMP/got_counts" &&
        [ "$(awk -F'\t' '$2 == "total" { n += $3 } END { print n }' "$TMP/out")" = "$rows" ]; then
        pass
    else
        fail "count with --threads $threads equals the rows"
    fi
done
run search -p "$TMP/patterns.fa" -o "$TMP/one.bed" --format bed -t 1 --chunk-size 50 "$TMP/genome.fa"
run search -p "$TMP/patterns.fa" -o "$TMP/four.bed" --format bed -t 4 "$TMP/genome.fa"
if cmp -s "$TMP/one.bed" "$TMP/four.bed"; then pass; else fail "bed with 1 and 4 threads"; fi
gzip -c "$TMP/reads.fq" >"$TMP/reads.fq.gz"
cut -f2- "$TMP/reference.tsv" >"$TMP/reference_nofile.tsv"
run search -p "$TMP/patterns.fa" --no-header --no-filename -t 3 --chunk-size 33 "$TMP/genome.fa" "$TMP/reads.fq.gz"
check_output "gzip reads, 3 threads" "$TMP/reference_nofile.tsv"

# Independent oracle: overlapping regular-expression search of every pattern
# and its reverse complement, in the documented order.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP/patterns.fa" "$TMP/genome.fa" "$TMP/reads.fq" >"$TMP/oracle.tsv" <<'EOF'
import re, sys
codes = {"A": "A", "C": "C", "G": "G", "T": "T", "R": "AG", "Y": "CT", "S": "CG", "W": "AT",
         "K": "GT", "M": "AC", "B": "CGT", "D": "AGT", "H": "ACT", "V": "ACG", "N": "ACGT"}
complement = {"A": "T", "C": "G", "G": "C", "T": "A", "R": "Y", "Y": "R", "S": "S", "W": "W",
              "K": "M", "M": "K", "B": "V", "V": "B", "D": "H", "H": "D", "N": "N"}
def regex(p):
    return re.compile("(?=(" + "".join("[" + codes[c] + "]" for c in p) + "))")
patterns = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith(">"): name = line[1:].split()[0]
    else: patterns.append((name, line.upper()))
compiled = [(regex(p), regex("".join(complement[c] for c in reversed(p))), len(p)) for _, p in patterns]
def records():
    for path in sys.argv[2:]:
        lines = open(path).read().split("\n")
        if path.endswith(".fq"):
            for i in range(0, len(lines) - 3, 4):
                yield lines[i][1:].split()[0], lines[i + 1]
        else:
            name, seq = None, []
            for line in lines:
                if line.startswith(">"):
                    if name is not None: yield name, "".join(seq)
                    name, seq = line[1:].split()[0], []
                elif line: seq.append(line)
            if name is not None: yield name, "".join(seq)
for name, seq in records():
    text = seq.upper().replace("U", "T")
    hits = []
    for index, (forward, reverse, m) in enumerate(compiled):
        for strand, rx in ((0, forward), (1, reverse)):
            for match in rx.finditer(text):
                s = match.start()
                hits.append((s, s + m, index, strand))
    for s, e, index, strand in sorted(hits):
        print("%s\t%s\t%s\t%d\t%d\t0\t%s" % (name, patterns[index][0], "+-"[strand], s, e, seq[s:e]))
EOF
    if cmp -s "$TMP/oracle.tsv" "$TMP/reference_nofile.tsv"; then
        pass
    else
        fail "output differs from the regular-expression oracle"
        diff "$TMP/oracle.tsv" "$TMP/reference_nofile.tsv" | head -5
    fi
fi

# Many hits into a pipe that closes after one line: ends quietly, no message.
awk 'BEGIN { print ">polyA"; for (i = 0; i < 20000; i++) print "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }' >"$TMP/polyA.fa"
first=$("$SEQMATCH" search -e AAAA --no-header "$TMP/polyA.fa" 2>"$TMP/err" | head -1)
pipe_status=${PIPESTATUS[0]}
check_stderr_empty "| head -1: no message"
if [ "$first" = "polyA	AAAA	+	0	4	0	AAAA" ]; then pass; else fail "| head -1 line: '$first'"; fi
if [ "$pipe_status" -eq 141 ] || [ "$pipe_status" -eq 0 ]; then pass; else fail "| head -1 status $pipe_status"; fi
# With SIGPIPE ignored the write fails with EPIPE instead: still no message.
first=$( (trap '' PIPE; "$SEQMATCH" search -e AAAA --no-header "$TMP/polyA.fa" 2>"$TMP/err" | head -1) )
check_stderr_empty "| head -1 with SIGPIPE ignored: no message"
if [ "$first" = "polyA	AAAA	+	0	4	0	AAAA" ]; then pass; else fail "| head -1 (SIGPIPE ignored) line"; fi

# 2 million hits counted, and the same number of rows.
run search -e AAAA --format count -t 2 "$TMP/polyA.fa"
check_output_text "polyA count" "AAAA	1999997
total	1999997
"
"$SEQMATCH" search -e AAAA --no-header --chunk-size 4096 "$TMP/polyA.fa" 2>"$TMP/err" | wc -l >"$TMP/out"
check_output_text "polyA rows" "1999997
"

# A forced progress bar goes to stderr only, names the file and its speed,
# and is cleared at the end, before the summary line. (A fast machine may
# finish before the first redraw, hence the bar is only checked when it was
# drawn.)
"$SEQMATCH" search --progress -e AAAA -t 1 "$TMP/polyA.fa" >"$TMP/out" 2>"$TMP/err"
status=$?
check_status "--progress exit" 0
if [ "$(wc -l <"$TMP/out")" -eq 1999998 ]; then pass; else fail "--progress changes stdout"; fi
# The summary follows the bar's last erase ("\r\033[K") on the same line:
# a slow run (a loaded machine, a sanitizer) draws the bar before it.
last=$(tail -n 1 "$TMP/err")
printf '%s\n' "${last##*$'\r\033[K'}" >"$TMP/summary"
head -c -"$(wc -c <"$TMP/summary")" "$TMP/err" >"$TMP/bar"
if [ ! -s "$TMP/bar" ] || { grep -q 'polyA.fa' "$TMP/bar" && grep -q 'MB/s' "$TMP/bar" &&
    [ "$(tail -c 4 "$TMP/bar" | od -An -c | tr -d ' ')" = '\r033[K' ]; }; then
    pass
else
    fail "--progress bar content"
fi
if grep -q '^seqmatch: 1,999,997 hits of 1 pattern; 2.0 MB of sequence in ' "$TMP/summary"; then pass
else fail "--progress summary: $(cat "$TMP/summary")"; fi

# -q stops early and succeeds.
run search -q -e AAAA "$TMP/polyA.fa"
check_status "-q on many hits" 0
check_stdout_empty "-q on many hits: no output"

# Long records of a mapped file are stripped by the scan's own threads from
# three threads on (past the first 4 MiB of a record): the same rows and
# counts as one thread, with lower case, blanks inside lines, several line
# widths and short records between the long ones.
awk 'BEGIN {
    seed = 4242; split("A C G T", base, " ")
    for (k = 0; k < 500; k++) {
        line = ""
        for (i = 0; i < 61; i++) {
            seed = (seed * 1103515245 + 12345) % 2147483648
            line = line base[int(seed / 65536) % 4 + 1]
        }
        if (k % 7 == 3) line = tolower(line)
        if (k % 50 == 9) line = substr(line, 1, 30) " " substr(line, 31)
        pool[k] = line
    }
    split("90000 1 140000 160000", lines, " ")
    for (r = 1; r <= 4; r++) {
        printf ">big%d\n", r
        for (i = 0; i < lines[r]; i++) {
            seed = (seed * 1103515245 + 12345) % 2147483648
            line = pool[int(seed / 65536) % 500]
            if (r == 3) line = substr(line, 1, 40)
            print line
        }
        printf ">tiny%d\nACGTACGTAA\n", r
    }
}' >"$TMP/big.fa"
awk 'NR % 997 == 2 && length($0) >= 20 && $0 !~ /[ a-z]/ { print substr($0, 3, 12) }' "$TMP/big.fa" | head -40 >"$TMP/big_patterns.txt"
run search -p "$TMP/big_patterns.txt" --no-header -t 1 "$TMP/big.fa"
cp "$TMP/out" "$TMP/big_reference.tsv"
if [ "$(wc -l <"$TMP/big_reference.tsv")" -gt 100 ]; then pass; else fail "long records: too few hits to compare"; fi
for t in 3 4; do
    run search -p "$TMP/big_patterns.txt" --no-header -t $t "$TMP/big.fa"
    check_output "long records, -t $t" "$TMP/big_reference.tsv"
done
run search -p "$TMP/big_patterns.txt" --format count -t 1 "$TMP/big.fa"
cp "$TMP/out" "$TMP/big_counts.tsv"
run search -p "$TMP/big_patterns.txt" --format count -t 4 "$TMP/big.fa"
check_output "long records, counts -t 4" "$TMP/big_counts.tsv"

# --gpu: the same rows as the CPU whatever engines the patterns take (the
# 12-symbol IUPAC pattern expands too far and goes to Shift-And, the others
# to the automaton). Approximate matching is refused: it runs on the CPU.
# Without a GPU (or a build without CUDA) the run fails with a message
# saying so.
run search -p "$TMP/patterns.fa" --no-header -t 1 "$TMP/genome.fa" "$TMP/reads.fq"
cp "$TMP/out" "$TMP/gpu_reference.tsv"
run search -p "$TMP/patterns.fa" --no-header --gpu "$TMP/genome.fa" "$TMP/reads.fq"
if [ "$status" -eq 0 ]; then
    check_output "--gpu" "$TMP/gpu_reference.tsv"
    for chunk in 100 4096 65536; do
        run search -p "$TMP/patterns.fa" --no-header --gpu --chunk-size $chunk "$TMP/genome.fa" "$TMP/reads.fq"
        check_output "--gpu --chunk-size $chunk" "$TMP/gpu_reference.tsv"
    done
    run search -p "$TMP/patterns.fa" --gpu -m 1 "$TMP/genome.fa"
    check_status "--gpu with mismatches" 2
    if grep -q 'CPU' "$TMP/err"; then pass; else fail "--gpu refusal says the CPU runs it"; fi
else
    check_status "--gpu without a GPU" 2
    if grep -q -i -e 'GPU' -e 'CUDA' "$TMP/err"; then pass; else fail "--gpu without a GPU: message"; fi
    check_stdout_empty "--gpu without a GPU: no output"
fi

finish
