# Every command of the README's "Using it" section, as written, on small data
# named as the commands name it, with the command installed (cmake
# --install to a fresh prefix) and found through PATH, as a user runs it:
# each must succeed (search: find something) without an error message.
# Commands with --gpu run where a GPU answers and are otherwise checked for a
# clear refusal; `mpirun` runs where it and the MPI module are found (as root
# and on few cores with Open MPI's switches for that), else the ranks'
# refusal without the module is checked; a line with $SLURM_ARRAY_TASK_ID
# runs as each of its array's tasks. A command naming a file this script
# does not make fails: a new README command comes with its data here.
# Run as: bash using_it.sh BUILD_DIR SOURCE_DIR, or against an installed
# seqmatch (after scripts/setup): bash using_it.sh --prefix /usr/local SOURCE_DIR.
PREFIX=
if [ "${1:-}" = --prefix ]; then PREFIX=${2:?usage: using_it.sh --prefix DIR SOURCE_DIR}; shift; fi
BUILD=${1:?usage: using_it.sh BUILD_DIR SOURCE_DIR}
SRC=${2:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-readme.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# The commands: the first sh block after "## Using it", comments and blank
# lines left out, a line ending in a backslash joined to the next.
awk '/^## Using it/ { section = 1; next } section && /^```sh$/ { on = 1; next }
     on && /^```$/ { exit }
     on && /\\$/ { held = held substr($0, 1, length($0) - 1); next }
     on && !/^[[:space:]]*(#|$)/ { print held $0; held = "" }' "$SRC/README.md" >"$TMP/commands"
if [ "$(wc -l <"$TMP/commands")" -ge 15 ]; then pass; else fail "found $(wc -l <"$TMP/commands") commands in the README"; fi

if [ -z "$PREFIX" ]; then
    PREFIX=$TMP/prefix
    cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1 || { fail "cmake --install"; tail -3 "$TMP/install.log"; }
fi
export PATH="$PREFIX/bin:$PATH"
W=$TMP/work
mkdir -p "$W/genomes" && cd "$W" || exit 1

# ------------------------------------------------------------ the data
GUIDE=GACGCATAAAGATGAGACGC
{ cat "$SRC/examples/ecoli-excerpt.fa"
  # the guide with its PAM and 2 mismatches, and the primer sites again
  printf '>planted\nTTTTGACGAATAAAGATGTGACGCTGGTTTTGAATTCAAGGATCCTTTT\n'; } >genome.fa
gzip -c genome.fa >genome.fa.gz
cp "$SRC/examples/patterns.fa" primers.fa
cp primers.fa probes.fa
printf 'GAATTC\nGGATCC\nAAGCTT\n' >sites.txt
printf 'GATC\nACGTACGT\nCCGG\nGCTGGTGG\n' >kmers.txt
cp "$SRC/tests/data/reads/r1.fq.gz" reads.fastq.gz
# barcodes: the first 8 bases of three reads
zcat reads.fastq.gz | awk 'NR % 4 == 2 && n < 3 { printf ">sample%d\n%s\n", ++n, substr($0, 1, 8) }' >barcodes.fa
printf '>pUC_like\nATTCAAAAAAAAAAGGATCCTTTTTTTTTTGA\n' >plasmids.fa   # EcoRI over the end
printf '>s1\nACGTTTGAACGT\n>s2\nTTGA\n' >seqs.fa
printf 'start\nconnection Refused by peer\nok\nTIMEOUT after 30 s\n' >server.log
cp genome.fa sample1.fa
cp "$SRC/examples/ecoli-excerpt.fa" sample2.fa
printf '>guide1\n%s\n' "$GUIDE" >guides.fa
# a Cas12a crRNA: the 20 bases after the excerpt's first TTTV
grep -v '^>' "$SRC/examples/ecoli-excerpt.fa" | tr -d '\n' | grep -o 'TTT[ACG][ACGT]\{20\}' | head -1 |
    awk '{ print ">crrna1"; print substr($0, 5) }' >crrnas.fa
bgz() { if command -v bgzip >/dev/null; then bgzip -c "$1"; else gzip -c "$1"; fi; }
bgz genome.fa >genomes/a.fa.bgz
bgz sample2.fa >genomes/b.fa.bgz
zcat reads.fastq.gz >reads.fq && bgz reads.fq >reads.fq.bgz

# ------------------------------------------------- is there a GPU, MPI?
gpu=0
seqmatch search --gpu -e GAATTC genome.fa >/dev/null 2>"$TMP/gpu.err" && gpu=1
mpi=0
libdir=$(dirname "$(find "$PREFIX/" -name libseqmatch.so | head -1)")
if command -v mpirun >/dev/null && [ -f "$libdir/libseqmatch-mpi.so" ]; then mpi=1; fi
# mpirun as root (CI) and with more ranks than cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

# ok NAME STATUS: status 0 and no error message (notes, warnings and
# demux's table are fine)
ok() {
    if [ "$2" -eq 0 ] && ! grep '^seqmatch: ' "$TMP/err" | grep -qv '^seqmatch: \(note\|warning\):'; then pass
    else fail "$1: exit status $2; $(head -3 "$TMP/err")"; fi
}

ran=0
exec </dev/null # mpirun reads standard input
while IFS= read -r line <&3; do
    ran=$((ran + 1))
    case $line in
    *--gpu*)
        bash -c "set -o pipefail; $line" >"$TMP/out" 2>"$TMP/err"
        status=$?
        if [ "$gpu" -eq 1 ]; then
            ok "$line" "$status"
            # the GPU's counts are the CPU's
            bash -c "${line//--gpu /}" >"$TMP/cpu" 2>/dev/null
            if cmp -s "$TMP/cpu" "$TMP/out"; then pass; else fail "$line: not the CPU's output"; fi
        elif [ "$status" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
             grep -Eq '^seqmatch: .*(GPU|CUDA)' "$TMP/err"; then pass
        else fail "$line without a GPU: status $status, want a one-line refusal: $(head -2 "$TMP/err")"; fi ;;
    mpirun*)
        single=${line#mpirun -np * }
        n=$(echo "$line" | sed 's/^mpirun -np \([0-9]*\) .*/\1/')
        bash -c "${single%% >*}" >"$TMP/single" 2>/dev/null
        if [ "$mpi" -eq 1 ]; then
            timeout 120 bash -c "$line" 2>"$TMP/err"
            ok "$line" $?
            out=$(echo "$line" | sed -n 's/.*> *\([^ ]*\)$/\1/p')
            if [ -n "$out" ] && cmp -s "$TMP/single" "$out"; then pass; else fail "$line: not one process's output"; fi
        else
            # no MPI here: each rank would search everything, which the command refuses
            OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_RANK=0 SEQMATCH_MPI_MODULE=$TMP/none.so \
                bash -c "${single%% >*}" >/dev/null 2>"$TMP/err"
            status=$?
            if [ "$status" -eq 2 ] && grep -q '^seqmatch: started by an MPI launcher, but' "$TMP/err"; then pass
            else fail "$line without MPI: status $status, $(head -2 "$TMP/err")"; fi
        fi ;;
    *'$SLURM_ARRAY_TASK_ID'*)
        n=$(echo "$line" | sed 's/.*\$SLURM_ARRAY_TASK_ID\/\([0-9]*\).*/\1/')
        for ((task = 0; task < n; task++)); do
            SLURM_ARRAY_TASK_ID=$task bash -c "$line" >/dev/null 2>"$TMP/err"
            ok "$line (task $task of $n)" $?
        done ;;
    *'| samtools'*)
        if command -v samtools >/dev/null; then
            bash -c "set -o pipefail; $line" >"$TMP/out" 2>"$TMP/err"
            ok "$line" $?
        else
            bash -c "${line%%|*}" >"$TMP/out" 2>"$TMP/err"
            ok "$line (samtools missing: the SAM only)" $?
        fi ;;
    *)
        bash -c "set -o pipefail; $line" >"$TMP/out" 2>"$TMP/err"
        ok "$line" $? ;;
    esac
done 3<"$TMP/commands"

# What they wrote: the files named, with something in them.
for f in sites.bed with_primer.fastq.gz by_sample/sample1.fastq probes.smdb counts.tsv; do
    if [ -s "$f" ]; then pass; else fail "README commands: $f missing or empty"; fi
done
if [ "$mpi" -eq 1 ]; then
    if [ -s offtargets.tsv ]; then pass; else fail "README commands: offtargets.tsv empty"; fi
fi
# the shards merged are the one-process counts
seqmatch search -p kmers.txt --format count reads.fq.bgz >"$TMP/one"
if cmp -s "$TMP/one" counts.tsv; then pass; else fail "README commands: merged shards differ from one process"; fi

echo "$passed passed, $failed failed ($ran commands; GPU $gpu, MPI $mpi)"
[ "$failed" -eq 0 ]
