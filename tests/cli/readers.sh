# Several readers in one process (SEQMATCH_READERS=N: the targets cut into
# N shares, each read and scanned on a thread of its own, merged in order):
# the output, the messages and the exit status are those of one reader, for
# every mode and format the shares take, every record layout (one long
# record, one on a single line, many tiny ones, FASTQ, BGZF, plain gzip,
# several files at once), share counts from 2 to more shares than records,
# and damaged files (the same message, with its line and column). Options
# that need one process run as one reader does. With --gpu (a GPU, or the
# stand-in: READERS_GPU_ONLY=1 runs only that part) the readers scan on the
# CPU until the GPU has started, then on the GPU: the same output; without
# a GPU, the same one-line error and no output.
. "$(dirname "$0")/testlib.bash"
. "$(dirname "$0")/splitdata.bash"

SEQMATCH=$(cd "$(dirname "$SEQMATCH")" && pwd)/$(basename "$SEQMATCH")
cd "$TMP" || exit 1

# agree NAME "N ..." ARGS...: every N of readers gives one reader's output,
# stderr and exit status (the sanitizer builds try the first N only).
agree() {
    local name=$1 counts=$2
    shift 2
    [ "${SM_TEST_SCALE:-100}" -lt 100 ] && counts=${counts%% *}
    SEQMATCH_READERS=0 "$SEQMATCH" "$@" >one.out 2>one.err
    local expected=$? n
    for n in $counts; do
        SEQMATCH_READERS=$n "$SEQMATCH" "$@" >many.out 2>many.err
        local got=$?
        if [ "$got" -ne "$expected" ]; then
            fail "$name, $n readers: exit status $got, expected $expected ($(head -1 many.err))"
        elif [ "$expected" -ne 2 ] && ! cmp -s one.out many.out; then
            fail "$name, $n readers: output differs"
            diff one.out many.out | head -5 | sed 's/^/    /'
        elif ! cmp -s <(grep -v "^seqmatch: note:" one.err) <(grep -v "^seqmatch: note:" many.err); then
            fail "$name, $n readers: stderr differs: $(head -1 many.err) / $(head -1 one.err)"
        else
            pass
        fi
    done
}

ALL="huge.fa single.fa tiny.fa mixed.fa reads.fq mixed.fa.bgz huge.fa.bgz reads.fq.bgz tiny.fa.gz"
if "$SEQMATCH" search --gpu -e GAATTC tiny.fa >/dev/null 2>&1; then
    agree "--gpu, exact, TSV" "2 5 16" --gpu -p sites.fa $ALL
    agree "--gpu, -m 1, counts" "3 8" --gpu -p sites.fa -m 1 --format count huge.fa.bgz mixed.fa reads.fq
    agree "--gpu, -k 2, BED" "2 4" --gpu -p sites.fa -k 2 --format bed huge.fa mixed.fa.bgz
    agree "--gpu, --max-hits" "3" --gpu -p sites.fa --max-hits 5 huge.fa mixed.fa
    # the CPU's output, from readers that start on the CPU and move to the GPU (the stand-in's start
    # made as slow as a GPU's)
    SEQMATCH_READERS=0 "$SEQMATCH" search -p sites.fa -m 1 $ALL >cpu.out 2>&1
    SM_EMULATED_START_MS=300 SEQMATCH_READERS=6 "$SEQMATCH" search --gpu -p sites.fa -m 1 $ALL >many.out 2>&1
    if cmp -s cpu.out many.out; then pass; else fail "--gpu with 6 readers differs from the CPU"; fi
    # BGZF inflated on the GPU (the stand-in: zlib), in jobs of one block and of 4 MiB: a damaged
    # block is worded as one reader words it; a job the GPU refuses is inflated on the CPU; a
    # byte changed in what the GPU gives back shows that the path was taken
    bsize=$(($(od -An -tu2 -j16 -N2 huge.fa.bgz) + 1))
    crc_at=$((bsize + $(od -An -tu2 -j$((bsize + 16)) -N2 huge.fa.bgz) + 1 - 8))
    cp huge.fa.bgz badcrc.fa.bgz
    byte=$(od -An -tu1 -j$crc_at -N1 huge.fa.bgz)
    printf "\\$(printf %03o $((byte ^ 255)))" | dd of=badcrc.fa.bgz bs=1 seek=$crc_at conv=notrunc 2>/dev/null
    head -c 100000 huge.fa.bgz >cut.fa.bgz
    for job in 64K 4M; do
        SEQMATCH_GPU_INFLATE=$job agree "--gpu, BGZF, jobs of $job" "2 5" --gpu -p sites.fa huge.fa.bgz reads.fq.bgz mixed.fa.bgz
        SEQMATCH_GPU_INFLATE=$job agree "--gpu, a BGZF block's CRC changed, jobs of $job" "2 4" --gpu -p sites.fa huge.fa badcrc.fa.bgz
        if grep -q "badcrc.fa.bgz: corrupt compressed data" many.err; then pass; else fail "--gpu, CRC changed: $(head -1 many.err)"; fi
        SEQMATCH_GPU_INFLATE=$job agree "--gpu, truncated BGZF, jobs of $job" "3" --gpu -p sites.fa cut.fa.bgz
    done
    SM_EMULATED_INFLATE=fail agree "--gpu, BGZF the GPU refuses" "3" --gpu -p sites.fa huge.fa.bgz reads.fq.bgz
    SM_EMULATED_INFLATE=missing agree "--gpu, BGZF without the GPU's inflater" "3" --gpu -p sites.fa huge.fa.bgz
    SEQMATCH_GPU_INFLATE=64K SEQMATCH_READERS=3 "$SEQMATCH" search --gpu -p sites.fa huge.fa.bgz >ok.out 2>&1
    SM_EMULATED_INFLATE=corrupt SEQMATCH_GPU_INFLATE=64K SEQMATCH_READERS=3 "$SEQMATCH" search --gpu -p sites.fa huge.fa.bgz \
        >changed.out 2>&1
    if ! cmp -s ok.out changed.out; then pass; else fail "--gpu, BGZF: the GPU's inflater was not used"; fi
    # a batch the GPU fails: exit status 2, and the GPU's words in the message, with one reader and with several
    for readers in 0 3; do
        SM_EMULATED_FAIL_WAIT=1 SEQMATCH_READERS=$readers "$SEQMATCH" search --gpu -p sites.fa huge.fa mixed.fa \
            >failed.out 2>failed.err
        status=$?
        if [ $status -eq 2 ] && grep -q "GPU unavailable or failed (CUDA: .*illegal memory access" failed.err; then pass
        else fail "--gpu, a failing batch, $readers readers: status $status, $(grep -v note: failed.err | head -1)"; fi
    done
else
    agree "--gpu without a GPU" "2 5" --gpu -p sites.fa huge.fa mixed.fa
    if [ -s many.out ]; then fail "--gpu without a GPU printed output"; else pass; fi
fi
if [ -n "${READERS_GPU_ONLY:-}" ]; then finish; exit; fi
agree "exact, TSV, every file" "2 3 7 40" -p sites.fa $ALL
agree "exact, BED" "2 5" -p sites.fa --format bed huge.fa mixed.fa.bgz
agree "exact, counts" "3 8" -p sites.fa --format count huge.fa.bgz reads.fq tiny.fa.gz
agree "exact, counts, one file" "2 700" -p sites.fa --format count --no-filename tiny.fa
agree "-m 1, JSON lines" "2 6" -p sites.fa -m 1 --format jsonl huge.fa.bgz single.fa reads.fq
agree "-m 2 --pam, TSV" "3" -p guides.fa -m 2 --pam NGG huge.fa mixed.fa
agree "-k 1 best, TSV" "2 4" -p sites.fa -k 1 huge.fa.bgz mixed.fa
agree "-k 2 ends, counts" "3" -p sites.fa -k 2 --report ends --format count huge.fa reads.fq.bgz
agree "--max-hits" "2 5" -p sites.fa --max-hits 7 huge.fa mixed.fa
agree "-q" "3" -p sites.fa -q tiny.fa huge.fa
agree "-H, --strand +" "4" -p sites.fa -H --strand + huge.fa single.fa
agree "text" "2 5" -e cat -e "sat on" --alphabet text --format tsv text.txt
agree "text lines" "3" -e mat --alphabet text --lines text.txt
# one process: records, SAM, --circular, limits per pattern
agree "--format records" "3" -p sites.fa --format records mixed.fa
agree "--format sam" "3" -p sites.fa --format sam huge.fa
agree "--circular" "2" -p sites.fa --circular huge.fa
agree "--max-hits-per-pattern" "2" -p sites.fa --max-hits-per-pattern 2 huge.fa mixed.fa

# damaged inputs: the message of one reader (a line and column), after the
# files before; a missing file before anything is read
awk 'NR == 2000 { print "ACGT!ACGT"; next } { print }' huge.fa >bad.fa
head -c 3000 huge.fa.bgz >cut.fa.bgz
head -c 2000 tiny.fa.gz >cut.fa.gz
printf '>prot\nMKVLAAGIVGLLLAQQPSWEDFMKVLAAG\n' >protein.fa
agree "a bad byte" "2 3 9" -p sites.fa --format tsv mixed.fa bad.fa tiny.fa
agree "truncated BGZF" "2 4" -p sites.fa huge.fa cut.fa.bgz
agree "truncated gzip" "3" -p sites.fa --format count mixed.fa cut.fa.gz huge.fa
agree "a missing file" "2" -p sites.fa huge.fa missing.fa
agree "a protein record" "2" -p sites.fa protein.fa huge.fa
if grep -q "looks like protein" one.err; then pass; else fail "the protein warning is missing"; fi

finish
