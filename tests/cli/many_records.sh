# Files of many records, read many at a time on the threads (a mapped FASTQ
# file from 2 threads, FASTA from 3): every thread count gives the output of
# one thread, byte for byte, in every output format; damaged files the same
# message.
. "$(dirname "$0")/testlib.bash"

# Deterministic pseudo-random FASTA (awk's LCG): records of every size from
# empty to 70 kB, lines of 1 to 100 bytes, lower case, N, IUPAC, blank lines,
# blanks inside lines, names with descriptions.
make_fasta() {
    awk -v seed="$1" 'BEGIN {
        split("A C G T A C G T N a c g t R Y K M S W", base, " ")
        for (r = 0; r < 150; r++) {
            seed = (seed * 1103515245 + 12345) % 2147483648
            k = int(seed / 65536) % 10
            len = k == 0 ? 0 : k == 1 ? 1 : k < 5 ? int(seed / 8) % 300 : k < 9 ? int(seed / 8) % 5000 : 60000 + int(seed / 8) % 10000
            width = 1 + int(seed / 1024) % 100
            printf ">rec%d%s\n", r, (r % 3 ? " some description" : "")
            line = ""
            for (i = 0; i < len; i++) {
                seed = (seed * 1103515245 + 12345) % 2147483648
                line = line base[int(seed / 65536) % 19 + 1]
                if (int(seed / 16) % 2000 == 0) line = line " "
                if (length(line) >= width || i + 1 == len) {
                    print line; line = ""
                    if (int(seed / 4) % 50 == 0) print ""
                }
            }
        }
    }'
}

# FASTQ reads of 0 to 300 bytes, sometimes a '+name' line, qualities that
# start with '@' or '+'.
make_fastq() {
    awk -v seed="$1" 'BEGIN {
        split("A C G T A C G T N a c g t", base, " ")
        for (r = 0; r < 3000; r++) {
            seed = (seed * 1103515245 + 12345) % 2147483648
            len = int(seed / 65536) % 20 == 0 ? int(seed / 8) % 3 : 50 + int(seed / 8) % 250
            s = ""; q = ""
            for (i = 0; i < len; i++) {
                seed = (seed * 1103515245 + 12345) % 2147483648
                s = s base[int(seed / 65536) % 13 + 1]
                q = q sprintf("%c", i == 0 && r % 7 == 0 ? 64 : 35 + int(seed / 16) % 60)
            }
            printf "@read%d/1\n%s\n%s\n%s\n", r, s, (r % 5 ? "+" : "+read" r "/1"), q
        }
    }'
}

cat >"$TMP/patterns.fa" <<'EOF'
>p1
ACGTAC
>p2
GGNNCC
>p3
TTTTTTTTTT
>p4
ACGTACGTACGTACGTACGTACGT
EOF

for seed in 1 2; do
    make_fasta "$seed" >"$TMP/many$seed.fa"
    make_fastq "$seed" >"$TMP/many$seed.fq"
done
# What the serial reader must see: a \r\n stretch, a bad byte, a truncated read.
make_fasta 4 | awk 'NR >= 1000 && NR < 1100 { printf "%s\r\n", $0; next } { print }' >"$TMP/crlf.fa"
make_fasta 5 | awk 'NR == 1500 { print "ACGT1ACGT"; next } { print }' >"$TMP/bad.fa"
make_fastq 6 | head -n 10001 >"$TMP/truncated.fq"

for f in many1.fa many2.fa many1.fq many2.fq crlf.fa bad.fa truncated.fq; do
    formats="tsv count records"
    case $f in crlf.fa | bad.fa | truncated.fq) formats=tsv ;; esac
    for format in $formats; do
        run search -p "$TMP/patterns.fa" -m 1 --format "$format" -t 1 "$TMP/$f"
        cp "$TMP/out" "$TMP/expected"
        cp "$TMP/err" "$TMP/expected_err"
        want=$status
        for t in 2 3; do
            run search -p "$TMP/patterns.fa" -m 1 --format "$format" -t "$t" "$TMP/$f"
            check_status "$f --format $format -t $t (exit)" "$want"
            if [ "$want" -eq 0 ]; then
                check_output "$f --format $format -t $t" "$TMP/expected"
            elif cmp -s "$TMP/err" "$TMP/expected_err"; then
                pass
            else
                fail "$f --format $format -t $t: message differs from -t 1: $(cat "$TMP/expected_err")"
            fi
        done
    done
done

# Several compressed targets: the next one is opened (and inflated) while
# one is scanned; the output is the files' in order, and a damaged file's
# error comes after the files before it, as with one thread.
gzip -c "$TMP/many1.fq" >"$TMP/a.fq.gz"
gzip -c "$TMP/many2.fq" >"$TMP/c.fq.gz"
head -c 5000 "$TMP/c.fq.gz" >"$TMP/b.fq.gz" # truncated
for t in 1 2 3; do
    run search -p "$TMP/patterns.fa" -m 1 -t "$t" "$TMP/a.fq.gz" "$TMP/c.fq.gz" "$TMP/a.fq.gz"
    [ "$t" -eq 1 ] && cp "$TMP/out" "$TMP/expected_many"
    check_status "three gzip files -t $t (exit)" 0
    check_output "three gzip files -t $t" "$TMP/expected_many"
    run search -p "$TMP/patterns.fa" -m 1 -t "$t" "$TMP/a.fq.gz" "$TMP/b.fq.gz" "$TMP/c.fq.gz"
    check_status "a truncated gzip file between two, -t $t (exit)" 2
    if [ "$t" -eq 1 ]; then
        cp "$TMP/out" "$TMP/expected_cut"
        cp "$TMP/err" "$TMP/expected_cut_err"
    fi
    check_output "a truncated gzip file between two, -t $t" "$TMP/expected_cut"
    if cmp -s "$TMP/err" "$TMP/expected_cut_err" && grep -q "b.fq.gz" "$TMP/err"; then
        pass
    else
        fail "a truncated gzip file between two, -t $t: message $(cat "$TMP/err")"
    fi
done

finish
