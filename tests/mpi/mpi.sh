# mpirun -np N seqmatch: byte-identical output and exit status to the single
# process, over every mode and record layout (one long record, one on a
# single line, many tiny ones, FASTQ whose qualities start with '@', BGZF,
# plain gzip, several files) with 1 to 4 ranks, ranks of several readers
# (also on the GPU module's CPU stand-in, SEQMATCH_EMULATED), and a failing
# rank that ends the whole job with exit status 2 and its message within
# seconds, leaving no output file; on one host Open MPI's cm layer left out
# unless the user chose one. Registered only where MPI and mpirun are found, and only
# in the release build (Open MPI's own allocations are not the sanitizers'
# business); the same cases without MPI are in tests/cli/shard.sh.
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/cli/testlib.bash"
. "$TESTS/cli/splitdata.bash"

SEQMATCH=$(cd "$(dirname "$SEQMATCH")" && pwd)/$(basename "$SEQMATCH")
MPIRUN=${MPIRUN:-mpirun}
# as root in CI containers; several ranks per core; shared memory only, so
# that a missing network never holds a launch up
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
cd "$TMP" || exit 1

# agree NAME N ARGS...: mpirun -np N prints what one process prints.
agree() {
    local name=$1 n=$2
    shift 2
    "$SEQMATCH" "$@" >single.out 2>single.err
    local expected=$?
    timeout 120 "$MPIRUN" --oversubscribe -np "$n" "$SEQMATCH" "$@" >mpi.out 2>mpi.err
    local got=$?
    if [ "$expected" -eq 2 ]; then
        fail "$name: the single run failed: $(head -1 single.err)"
    elif [ "$got" -ne "$expected" ]; then
        fail "$name, $n ranks: exit status $got, expected $expected ($(grep '^seqmatch' mpi.err | head -1))"
    elif ! cmp -s single.out mpi.out; then
        fail "$name, $n ranks: output differs"
        diff single.out mpi.out | head -6 | sed 's/^/    /'
    else
        pass
    fi
}

ALL="huge.fa single.fa tiny.fa mixed.fa reads.fq mixed.fa.bgz huge.fa.bgz reads.fq.bgz tiny.fa.gz"
agree "exact, every layout" 2 -t 1 -p sites.fa $ALL
agree "-k 2 best, small chunks, JSON lines" 3 -t 1 --chunk-size 700 -p sites.fa -k 2 --format jsonl huge.fa single.fa mixed.fa reads.fq.bgz
agree "-m 1, counts per file" 4 -t 1 -p sites.fa -m 1 --format count $ALL
agree "-m 4 --pam NGG, BED" 1 -p guides.fa -m 4 --pam NGG --format bed huge.fa.bgz mixed.fa
agree "--max-hits 30, -k 1" 3 -t 1 -p sites.fa -k 1 --max-hits 30 huge.fa mixed.fa
agree "-q" 2 -t 1 -q -p sites.fa huge.fa tiny.fa
# ranks of several readers each (a rank's share cut for its readers, their streams one after another)
SEQMATCH_READERS=3 agree "exact, every layout, ranks of 3 readers" 2 -t 3 -p sites.fa $ALL
SEQMATCH_READERS=2 agree "-k 2 best, ranks of 2 readers" 3 -t 2 --chunk-size 700 -p sites.fa -k 2 huge.fa single.fa mixed.fa
SEQMATCH_READERS=3 agree "--max-hits 30, -m 1, ranks of 3 readers" 2 -t 3 -p sites.fa -m 1 --max-hits 30 huge.fa mixed.fa
SEQMATCH_READERS=2 agree "-q, ranks of 2 readers" 2 -t 2 -q -p sites.fa huge.fa tiny.fa
# --gpu ranks of several readers, each reader's runner on the rank's GPU: the
# CPU stand-in of the GPU module (SEQMATCH_EMULATED, the command built with it)
# against the real command's single process
if [ -n "${SEQMATCH_EMULATED:-}" ]; then
    gpu_agree() {
        local name=$1 n=$2
        shift 2
        "$SEQMATCH" "$@" >single.out 2>single.err
        # (the stand-in's command lies apart from the MPI module built beside the real one)
        SEQMATCH_MPI_MODULE=${SEQMATCH_MPI_MODULE:-$(dirname "$SEQMATCH")/libseqmatch-mpi.so} \
            SEQMATCH_READERS=3 timeout 120 "$MPIRUN" --oversubscribe -np "$n" "$SEQMATCH_EMULATED" "$@" --gpu -t 3 \
            >mpi.out 2>mpi.err
        if [ $? -ne 0 ]; then fail "$name, $n ranks: $(grep '^seqmatch' mpi.err | head -1)"
        elif ! cmp -s single.out mpi.out; then fail "$name, $n ranks: output differs"
        else pass; fi
    }
    gpu_agree "--gpu -k 1, ranks of 3 readers" 2 search -p sites.fa -k 1 huge.fa single.fa mixed.fa
    gpu_agree "--gpu -m 1, counts, ranks of 3 readers" 3 search -p sites.fa -m 1 --format count huge.fa mixed.fa
    gpu_agree "--gpu exact, ranks of 3 readers" 2 search -p sites.fa huge.fa reads.fq tiny.fa
fi
"$SEQMATCH" compile --alphabet text -e 'cat sat' -e dog -o words.smdb
agree "-d, lines, more ranks than lines with hits" 4 -t 1 -d words.smdb --lines text.txt
agree "dfa --per-record" 3 dfa -t 1 --from-patterns sites.fa --alphabet dna --per-record tiny.fa huge.fa reads.fq
agree "dfa, one input per file" 4 dfa -t 1 --regex '(A|C|G|T|N|a|c|g|t|n)*' --alphabet dna huge.fa single.fa

# A rank that fails ends the job: a bad byte in the second half of a file
# (rank 1's), and -o's file never appears.
awk 'NR == 3000 { print "ACGT#ACGT"; next } { print }' huge.fa >bad.fa
start=$(date +%s)
timeout 60 "$MPIRUN" --oversubscribe -np 2 "$SEQMATCH" search -t 1 -p sites.fa -o bad.out bad.fa >/dev/null 2>bad.err
status=$?
took=$(($(date +%s) - start))
check_status "a failing rank" 2
if grep -q "^seqmatch: bad.fa: byte [0-9]*: unexpected byte 0x23" bad.err; then pass; else
    fail "a failing rank: its message"
    head -3 bad.err | sed 's/^/    /'
fi
if [ ! -e bad.out ] && ! ls bad.out.tmp-* >/dev/null 2>&1; then pass; else fail "a failing rank: an output file was left"; fi
if [ "$took" -lt 30 ]; then pass; else fail "a failing rank: the job took $took s to end"; fi
# the same with ranks of several readers: the failing part's message, as one reader's
SEQMATCH_READERS=3 timeout 60 "$MPIRUN" --oversubscribe -np 2 "$SEQMATCH" search -t 3 -p sites.fa -o bad.out bad.fa \
    >/dev/null 2>bad.err
check_status "a failing rank of 3 readers" 2
if grep -q "^seqmatch: bad.fa: byte [0-9]*: unexpected byte 0x23" bad.err; then pass; else
    fail "a failing rank of 3 readers: its message"
    head -3 bad.err | sed 's/^/    /'
fi
if [ ! -e bad.out ] && ! ls bad.out.tmp-* >/dev/null 2>&1; then pass; else fail "a failing rank of 3 readers: an output file was left"; fi
# Every rank failing at once (no GPU, or a build without CUDA) ends it too.
timeout 60 "$MPIRUN" --oversubscribe -np 2 "$SEQMATCH" search --gpu -p sites.fa -o gpu.out huge.fa >/dev/null 2>gpu.err
status=$?
if [ "$status" -eq 2 ] || { [ "$status" -eq 0 ] && [ -s gpu.out ]; }; then pass; else fail "--gpu under mpirun: exit status $status"; fi

# Every rank on this host: Open MPI's cm message layer, which serves networks
# such as Omni-Path and libfabric's and probed for them for 0.2 s of each
# rank's start, is not opened; where the user chose a layer it is theirs.
if command -v ompi_info >/dev/null && ompi_info 2>/dev/null | grep -q "MCA pml: cm"; then
    OMPI_MCA_pml_base_verbose=10 timeout 60 "$MPIRUN" --oversubscribe -np 2 "$SEQMATCH" search -t 1 --format count \
        -p sites.fa tiny.fa >/dev/null 2>layers.err
    if grep -q "components_open: found loaded component ob1" layers.err && ! grep -q "component cm" layers.err; then
        pass
    else
        fail "one host: Open MPI's cm layer was opened, or no layer was reported"
    fi
    OMPI_MCA_mtl=^psm2 OMPI_MCA_pml_base_verbose=10 timeout 60 "$MPIRUN" --oversubscribe -np 2 "$SEQMATCH" search \
        -t 1 --format count -p sites.fa tiny.fa >/dev/null 2>layers.err
    if grep -q "components_open: found loaded component cm" layers.err; then pass; else
        fail "one host, OMPI_MCA_mtl set: the cm layer was left out against the user's choice"
    fi
fi

finish
