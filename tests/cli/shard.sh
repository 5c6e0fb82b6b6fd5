# --shard I/N and merge: the N shard files of a search, merged, give exactly
# the single process's output and exit status, for every mode (exact, -m,
# -k best and ends, --pam, every format, -H, --max-hits, -q, -d, text and
# lines, dfa), every record layout (one long record, one on a single line,
# many tiny ones, FASTQ whose qualities start with '@', BGZF, plain gzip,
# several files at once), share counts from 1 to more shares than records,
# and shards read by several readers of their process. Broken sets of shard
# files are refused.
. "$(dirname "$0")/testlib.bash"
. "$(dirname "$0")/splitdata.bash"

SEQMATCH=$(cd "$(dirname "$SEQMATCH")" && pwd)/$(basename "$SEQMATCH")
cd "$TMP" || exit 1

# agree NAME "N ..." ARGS...: every N of shards merges to the single run's
# output (the sanitizer builds, SM_TEST_SCALE below 100, try the first N only).
agree() {
    local name=$1 counts=$2
    shift 2
    [ "${SM_TEST_SCALE:-100}" -lt 100 ] && counts=${counts%% *}
    "$SEQMATCH" "$@" >single.out 2>single.err
    local expected=$?
    if [ "$expected" -eq 2 ]; then
        fail "$name: the single run failed: $(head -1 single.err)"
        return
    fi
    local n i
    for n in $counts; do
        rm -f part.*
        for ((i = 0; i < n; i++)); do
            if ! "$SEQMATCH" "$@" --shard "$i/$n" -o "part.$i" 2>shard.err && [ -s shard.err ]; then
                fail "$name: shard $i/$n: $(head -1 shard.err)"
                continue 2
            fi
        done
        "$SEQMATCH" merge part.* >merged.out 2>merge.err
        local got=$?
        if [ "$got" -ne "$expected" ]; then
            fail "$name, $n shards: merge exit status $got, expected $expected ($(head -1 merge.err))"
        elif ! cmp -s single.out merged.out; then
            fail "$name, $n shards: merged output differs"
            diff single.out merged.out | head -6 | sed 's/^/    /'
        else
            pass
        fi
    done
}

ALL="huge.fa single.fa tiny.fa mixed.fa reads.fq mixed.fa.bgz huge.fa.bgz reads.fq.bgz tiny.fa.gz"
agree "exact, every layout" "1 2 3 7" -p sites.fa $ALL
agree "exact, BED" "2 5" -p sites.fa --format bed huge.fa mixed.fa.bgz
agree "exact, counts per file" "3" -p sites.fa --format count $ALL
agree "exact, counts" "4" -p sites.fa --format count --no-filename huge.fa reads.fq.bgz
agree "-m 1, JSON lines" "2 6" -p sites.fa -m 1 --format jsonl huge.fa.bgz single.fa reads.fq
agree "-k 2 best, small chunks" "2 3 8" -p sites.fa -k 2 -t 2 --chunk-size 500 huge.fa single.fa mixed.fa
agree "-k 1 ends, counts" "3" -p sites.fa -k 1 --report ends --format count huge.fa mixed.fa.bgz
agree "-k 2 best, runs across splits" "5 11" -e AAAAAAAAAAAA -e GCTGGTGGACAC -k 3 huge.fa
agree "-m 4 --pam NGG" "3" -p guides.fa -m 4 --pam NGG huge.fa mixed.fa
# counts summed by the threads (no hit list): runs cut at splits, pieces and segments, PAM
agree "-k 3 best, counts, runs across splits" "3 7" -e AAAAAAAAAAAA -e GCTGGTGGACAC -k 3 -t 2 --chunk-size 300 --format count huge.fa
agree "-k 3 --pam NGG, counts" "2" -p guides.fa -k 3 --pam NGG --format count huge.fa mixed.fa
# each shard read by several readers of its process, their streams one after another in the shard file
SEQMATCH_READERS=3 agree "exact, every layout, shards of 3 readers" "2 3" -t 3 -p sites.fa $ALL
SEQMATCH_READERS=2 agree "-k 2 best, shards of 2 readers" "2 5" -t 2 --chunk-size 500 -p sites.fa -k 2 huge.fa single.fa mixed.fa
SEQMATCH_READERS=4 agree "-m 1 --max-hits 30, shards of 4 readers" "3" -t 4 -p sites.fa -m 1 --max-hits 30 huge.fa mixed.fa.bgz
SEQMATCH_READERS=3 agree "-q, shards of 3 readers" "2" -t 3 -q -p sites.fa huge.fa tiny.fa
SEQMATCH_READERS=3 agree "counts per file, shards of 3 readers" "2" -t 3 -p sites.fa --format count $ALL
agree "-k 3 --pam NGG" "2" -p guides.fa -k 3 --pam NGG --format jsonl huge.fa
agree "--max-hits 1" "3" -p sites.fa --max-hits 1 $ALL
agree "--max-hits 40, -k 2" "2 5" -p sites.fa -k 2 --max-hits 40 -t 1 --chunk-size 300 huge.fa mixed.fa
agree "--max-hits 25, counts" "4" -p sites.fa --max-hits 25 --format count -H huge.fa tiny.fa
agree "--max-hits 0" "2" -p sites.fa --max-hits 0 huge.fa
agree "-q, found" "3" -q -p sites.fa huge.fa
agree "-q, not found" "3" -q -e GGGGGGGGGGGGGGGGGGGGGG huge.fa
agree "no hit" "2" -e GGGGGGGGGGGGGGGGGGGGGG huge.fa tiny.fa
agree "more shares than records" "9" -e ACGT single.fa
"$SEQMATCH" compile -p sites.fa -k 1 -o sites.smdb
agree "-d" "3" -d sites.smdb huge.fa.bgz reads.fq
agree "text" "4" --alphabet text -e 'cat sat' -e mat -k 1 text.txt
agree "text lines" "3 7" --alphabet text --lines -i -e 'A MAT' -e dog text.txt
agree "dfa, one input per file" "2 5" dfa --regex '(A|C|G|T|N|a|c|g|t|n)*' --alphabet dna huge.fa single.fa mixed.fa.bgz
agree "dfa --per-record" "3 8" dfa --from-patterns sites.fa --alphabet dna --per-record tiny.fa huge.fa reads.fq
agree "dfa, text" "3" dfa --regex '[a-zA-Z \n]*' text.txt

# A shard that ran exits 0 even when its share holds no hit (the merge
# gives the verdict): a job array's task must not fail for that.
printf '>a\nGAATTCAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n' >one_hit.fa
for i in 0 1; do
    run search -e GAATTC --shard "$i/2" -o "nohit.$i" one_hit.fa
    check_status "a shard $i/2 (one of them without a hit)" 0
done
run merge nohit.0 nohit.1
check_status "their merge: a hit" 0
run search -e CCCCCCCC --shard 0/1 -o nohit.all one_hit.fa
check_status "a shard without any hit" 0
run merge nohit.all
check_status "its merge: no hit" 1

# The set of shard files must be whole.
"$SEQMATCH" search -p sites.fa --shard 0/3 -o s.0 huge.fa
"$SEQMATCH" search -p sites.fa --shard 1/3 -o s.1 huge.fa
"$SEQMATCH" search -p sites.fa --shard 2/3 -o s.2 huge.fa
run merge s.0 s.2
check_status "merge: a shard missing" 2
check_stderr "merge: a shard missing" "shard 1/3 is missing"
run merge s.0 s.1 s.1 s.2
check_status "merge: a shard twice" 2
check_stderr "merge: a shard twice" "given twice"
head -c $(($(wc -c <s.1) - 1)) s.1 >s.cut
run merge s.0 s.cut s.2
check_status "merge: a shard cut short" 2
"$SEQMATCH" search -p sites.fa -m 1 --shard 1/3 -o s.other huge.fa
run merge s.0 s.other s.2
check_status "merge: shards of other commands" 2
check_stderr "merge: shards of other commands" "different commands"
run merge huge.fa
check_status "merge: not a shard file" 2
run search -p sites.fa --shard 3/3 huge.fa
check_status "--shard 3/3" 2
check_stderr "--shard 3/3" "is not a share"

# Damaged shards: each frame of a shard file carries a CRC-32 chained from
# the one before, and the merge checks every message field by field in a
# first pass without output, so a damaged shard is refused with its name
# before anything is printed, never merged into other output. Random
# damages of 1 to 3 bytes to shards of every format (and a dfa shard):
# none is accepted with another output. SM_SHARD_DAMAGES sets the rounds per
# format (bench/shard-damage.sh runs 1000 each under the sanitizers).
rounds=${SM_SHARD_DAMAGES:-$((20 * ${SM_TEST_SCALE:-100} / 100))}
[ "$rounds" -lt 4 ] && rounds=4
# damage FILE: 1 to 3 random bytes of FILE replaced by random values
damage() {
    local size n at
    size=$(wc -c <"$1")
    n=$((1 + RANDOM % 3))
    for ((d = 0; d < n; d++)); do
        at=$(((RANDOM * 32768 + RANDOM) % size))
        printf "$(printf '\\%03o' $((RANDOM % 256)))" | dd of="$1" bs=1 seek=$at count=1 conv=notrunc status=none
    done
}
RANDOM=27
damaged_formats=0
for fmt in tsv bed jsonl count edits dfa; do
    case $fmt in
    edits) set -- search -p sites.fa -k 2 --format tsv huge.fa mixed.fa ;;
    dfa) set -- dfa --from-patterns sites.fa --alphabet dna --per-record tiny.fa huge.fa ;;
    *) set -- search -p sites.fa -m 1 --format $fmt huge.fa mixed.fa ;;
    esac
    for i in 0 1; do "$SEQMATCH" "$@" --shard $i/2 -o d.$i; done
    "$SEQMATCH" merge d.0 d.1 >d.want 2>/dev/null
    wrong=0 refused=0
    for ((round = 0; round < rounds; round++)); do
        victim=d.$((RANDOM % 2))
        cp d.0 e.0
        cp d.1 e.1
        damage "e.${victim#d.}"
        "$SEQMATCH" merge e.0 e.1 >e.out 2>e.err
        got=$?
        if [ $got -eq 2 ]; then
            if grep -q "^seqmatch: e\.${victim#d.}: " e.err && [ "$(wc -l <e.err)" -eq 1 ] && [ ! -s e.out ]; then
                refused=$((refused + 1))
            else
                fail "$fmt: a damaged shard refused without its name, or with output: $(head -1 e.err)"
                wrong=1
                break
            fi
        elif ! cmp -s e.out d.want; then
            fail "$fmt: a damaged shard accepted with another output (round $round)"
            cp "e.${victim#d.}" "$TMP/../shard-damage-$fmt" 2>/dev/null
            wrong=1
            break
        fi
        if grep -q -e 'AddressSanitizer' -e 'runtime error' e.err; then
            fail "$fmt: a sanitizer report: $(head -1 e.err)"
            wrong=1
            break
        fi
    done
    [ $wrong -eq 0 ] && pass
    echo "damaged $fmt shards: $rounds rounds, $refused refused, $((rounds - refused)) merged to the same output"
    [ $refused -gt 0 ] && damaged_formats=$((damaged_formats + 1))
done
if [ $damaged_formats -eq 6 ]; then pass; else fail "damaged shards: only $damaged_formats formats saw a refusal"; fi

# A damaged shard's message, exactly; and one of the format without checksums.
cp d.0 e.0
printf 'X' | dd of=e.0 bs=1 seek=20 count=1 conv=notrunc status=none
run merge e.0 d.1
check_status "merge: a damaged frame (exit)" 2
check_stderr "merge: a damaged frame" "e.0: damaged shard file: checksum mismatch in the frame at byte 8"
check_output_text "merge: a damaged frame prints nothing" ""
{ printf 'SMSHARD1'; tail -c +9 d.0; } >e.old
run merge e.old d.1
check_status "merge: a shard of the older format (exit)" 2
check_stderr "merge: a shard of the older format" "e.old: a shard file of an older seqmatch (without checksums)"
{ cat d.0; printf 'x'; } >e.0
run merge e.0 d.1
check_status "merge: bytes after the end (exit)" 2
check_stderr "merge: bytes after the end" "e.0: damaged shard file: bytes after its end"
cat d.0 | "$SEQMATCH" merge - d.1 >e.out 2>e.err
if [ $? -le 1 ] && cmp -s e.out d.want; then pass; else fail "merge: a shard from a pipe"; fi

# What needs a whole record in one process is refused across shares, not
# run on parts of records.
for opt in --circular "--anchor start" --cigar "--format sam" "--format records"; do
    # shellcheck disable=SC2086
    run search -p sites.fa $opt --shard 0/2 -o s.refused huge.fa
    check_status "$opt with --shard" 2
    check_stderr "$opt with --shard" "run in one process"
done
run dfa --regex '(A|C|G|T)*' --alphabet dna --gpu --shard 0/2 -o s.refused huge.fa
check_status "dfa --gpu with --shard" 2
check_stderr "dfa --gpu with --shard" "dfa --gpu runs in one process"

finish
