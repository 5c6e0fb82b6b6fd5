# Bad input and bad usage: exit status 2 and one "seqmatch: ..." line that
# names the problem (and the file, line or option).
. "$(dirname "$0")/testlib.bash"

# expect_error NAME SUBSTRING ARGS...: exit 2, one message line containing SUBSTRING.
expect_error() {
    local name=$1 text=$2
    shift 2
    run "$@"
    check_status "$name (exit)" 2
    check_stderr "$name" "$text"
}

# Targets.
expect_error "missing target" "nonexistent.fa: No such file or directory" \
    search -e ACGT $DATA/small.fa nonexistent.fa
check_stdout_empty "missing target: nothing printed before the check"
expect_error "directory target" "$DATA: Is a directory" search -e ACGT $DATA
if [ "$(id -u)" -ne 0 ]; then
    cp $DATA/small.fa "$TMP/unreadable.fa"
    chmod 000 "$TMP/unreadable.fa"
    expect_error "unreadable target" "unreadable.fa: Permission denied" \
        search -e ACGT "$TMP/unreadable.fa"
else
    echo "note: unreadable target not tested: root reads any file (hostile.sh makes a read fail instead)"
fi
expect_error "'>' inside a sequence line" "gt_in_sequence.fa: line 2" \
    search -e ACGT $DATA/gt_in_sequence.fa
expect_error "FASTQ quality length" "bad_quality.fq: line 4" search -e ACGT $DATA/bad_quality.fq
grep -q "quality length" "$TMP/err" && pass || fail "quality message names the problem"

gzip -c $DATA/small.fa | head -c 40 >"$TMP/truncated.fa.gz"
expect_error "truncated gzip" "truncated.fa.gz" search -e ACGT "$TMP/truncated.fa.gz"
# Corrupt data inside a gzip stream.
gzip -c $DATA/small.fa >"$TMP/corrupt.fa.gz"
size=$(wc -c <"$TMP/corrupt.fa.gz")
printf 'XXXXXXXX' | dd of="$TMP/corrupt.fa.gz" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect_error "corrupt gzip" "corrupt.fa.gz" search -e ACGT "$TMP/corrupt.fa.gz"

printf '\000\001\002\377binary\000garbage' >"$TMP/garbage.bin"
expect_error "binary garbage" "garbage.bin" search -e ACGT "$TMP/garbage.bin"
printf 'just some words\n' >"$TMP/plain.txt"
expect_error "plain text as dna" "plain.txt" search -e ACGT "$TMP/plain.txt"
# A good file then a bad one: still an error.
expect_error "bad second file" "gt_in_sequence.fa" \
    search -e GAATTC $DATA/small.fa $DATA/gt_in_sequence.fa

# Patterns.
expect_error "missing pattern file" "nonexistent.txt" search -p nonexistent.txt $DATA/small.fa
expect_error "pattern file is a directory" "$DATA" search -p $DATA $DATA/small.fa
expect_error "empty pattern set" "empty_patterns.txt: no patterns" \
    search -p $DATA/empty_patterns.txt $DATA/small.fa
expect_error "empty pattern" "empty" search -e '' $DATA/small.fa
printf '>p1\n>p2\nACGT\n' >"$TMP/empty_record.fa"
expect_error "empty FASTA pattern" "empty_record.fa: line 1" search -p "$TMP/empty_record.fa" $DATA/small.fa
expect_error "non-DNA letter" "ACGTX" search -e ACGTX $DATA/small.fa
grep -q "'X'" "$TMP/err" && pass || fail "non-DNA letter message names the letter"
printf 'ACGT\nAC-GT\n' >"$TMP/bad_list.txt"
expect_error "non-DNA letter in a file" "AC-GT" search -p "$TMP/bad_list.txt" $DATA/small.fa
expect_error "database too large" "limit" search -e ACGTACGT --max-memory 16 $DATA/small.fa

# Databases.
expect_error "missing database" "nonexistent.smdb" search -d nonexistent.smdb $DATA/small.fa
expect_error "not a database" "small.fa" search -d $DATA/small.fa $DATA/small.fa
run compile -p $DATA/patterns.fa -o "$TMP/db.smdb"
head -c 300 "$TMP/db.smdb" >"$TMP/truncated.smdb"
expect_error "truncated database" "truncated.smdb" search -d "$TMP/truncated.smdb" $DATA/small.fa
expect_error "-d with -e" "-d cannot be combined" search -d "$TMP/db.smdb" -e ACGT $DATA/small.fa
expect_error "-d with --strand" "--strand cannot be used with -d" \
    search -d "$TMP/db.smdb" --strand + $DATA/small.fa
expect_error "-d with --engine" "--engine cannot be used with -d" \
    search -d "$TMP/db.smdb" --engine shiftand $DATA/small.fa
expect_error "--lines with a dna database" "--lines" search -d "$TMP/db.smdb" --lines $DATA/log.txt
expect_error "compile to a missing directory" "no/such/dir" \
    compile -e ACGT -o "$TMP/no/such/dir/db.smdb"

# Usage.
expect_error "no patterns" "no patterns given" search $DATA/small.fa
expect_error "compile without patterns" "no patterns given" compile -o "$TMP/x.smdb"
expect_error "compile without -o" "-o" compile -e ACGT
expect_error "compile with a target" "no target" compile -e ACGT -o "$TMP/x.smdb" $DATA/small.fa
expect_error "unknown long option" "unknown option '--bogus'" search -e ACGT --bogus $DATA/small.fa
grep -q -- "--help" "$TMP/err" && pass || fail "usage error suggests --help"
expect_error "unknown short option" "unknown option '-z'" search -z -e ACGT $DATA/small.fa
expect_error "option of the other command" "'--format' does not apply to compile" \
    compile -e ACGT --format bed -o "$TMP/x.smdb"
expect_error "missing value" "'--format' needs a value" search -e ACGT --format
expect_error "bad format" "unknown format 'xml'" search -e ACGT --format xml $DATA/small.fa
expect_error "bad alphabet" "unknown alphabet 'rna'" search -e ACGT --alphabet rna $DATA/small.fa
expect_error "bad strand" "unknown strand" search -e ACGT --strand x $DATA/small.fa
expect_error "bad engine" "unknown engine" search -e ACGT --engine fast $DATA/small.fa
expect_error "bad thread count" "'abc' is not a thread count" search -e ACGT -t abc $DATA/small.fa
expect_error "negative thread count" "-t" search -e ACGT -t -1 $DATA/small.fa
expect_error "bad chunk size" "--chunk-size" search -e ACGT --chunk-size 0 $DATA/small.fa
expect_error "bad memory size" "--max-memory" search -e ACGT --max-memory 12Q $DATA/small.fa
expect_error "flag with a value" "takes no value" search -e ACGT --quiet=yes $DATA/small.fa
expect_error "-i with dna" "-i/--ignore-case" search -e ACGT -i $DATA/small.fa
expect_error "--text-iupac with text" "--text-iupac" search --alphabet text -e a --text-iupac $DATA/log.txt
expect_error "--strand with text" "--strand" search --alphabet text -e a --strand + $DATA/log.txt
expect_error "--lines with dna" "--lines needs --alphabet text" \
    search --alphabet dna --lines -e ACGT $DATA/log.txt
expect_error "stdin twice" "standard input" search -p - -
# The overlap-free modes are refused where they cannot run, never ignored.
for mode in --overlap-free --overlap-free-prefix; do
    expect_error "$mode, shift-and" "compile with --engine automaton" \
        search -e ACGTACGT --engine shiftand $mode $DATA/small.fa
    check_stdout_empty "$mode, shift-and: nothing printed"
    expect_error "$mode, mismatches" "need an exact database" search -e ACGTACGT -m 1 $mode $DATA/small.fa
    expect_error "$mode, edits" "need an exact database" search -e ACGTACGT -k 1 $mode $DATA/small.fa
    expect_error "$mode, --gpu" "run on the CPU only" search -e ACGTACGT --engine automaton --gpu $mode $DATA/small.fa
done
expect_error "unknown command" "unknown command 'frobnicate'" frobnicate
expect_error "no command" "no command" 

# Write errors.
if [ -w /dev/full ]; then
    expect_error "/dev/full" "/dev/full: No space left on device" \
        search -p $DATA/patterns.fa -o /dev/full $DATA/small.fa
    "$SEQMATCH" search -p $DATA/patterns.fa $DATA/small.fa >/dev/full 2>"$TMP/err"
    status=$?
    check_status "stdout on /dev/full (exit)" 2
    check_stderr "stdout on /dev/full" "standard output: No space left on device"
fi
expect_error "-o into a missing directory" "no/such/dir/out.tsv" \
    search -e ACGT -o "$TMP/no/such/dir/out.tsv" $DATA/small.fa
# A file that exists in a folder that takes no new file (/proc): its own
# reason, not that of the temporary file that could not be made beside it.
if [ -f /proc/version ]; then
    run search -e ACGT -o /proc/version $DATA/small.fa
    check_status "-o a file of /proc (exit)" 2
    if grep -q "/proc/version" "$TMP/err" && ! grep -q "No such file" "$TMP/err"; then pass
    else fail "-o a file of /proc: $(cat "$TMP/err")"; fi
fi

# An error line reaches stderr in one write: mpirun forwards a rank's stderr
# as it comes, and a line written a byte at a time was cut short when the
# failing rank's MPI_Abort ended the job. Through a SOCK_SEQPACKET socket
# each write is one message, so the first message must be the whole line.
if command -v python3 >/dev/null; then
    printf '>r\nAC#GT\n' >"$TMP/hash.fa"
    first=$(python3 - "$SEQMATCH" "$TMP/hash.fa" <<'PY'
import socket, subprocess, sys
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sys.argv[1], "search", "-e", "ACGT", sys.argv[2]], stdout=subprocess.DEVNULL, stderr=theirs)
theirs.close()
p.wait()
sys.stdout.write(ours.recv(65536).decode(errors="replace"))
PY
)
    case "$first" in
    "seqmatch: "*"unexpected byte 0x23"*) pass ;;
    *) fail "an error line in one write: the first write was '$first'" ;;
    esac
else
    echo "note: python3 not found: an error line in one write not tested"
fi

finish
