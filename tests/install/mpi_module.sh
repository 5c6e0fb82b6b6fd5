# The MPI side is a module loaded only under mpirun: the command and
# libseqmatch.so link no MPI library, so a copied binary runs where Open MPI
# is not installed; under a launcher without the module a run of several
# ranks is refused with the reason (each copy would search everything); and
# where mpirun is found, `mpirun -np 2 seqmatch search` through PATH after
# `cmake --install` gives the one-process output.
# Run as: bash mpi_module.sh BUILD_DIR SOURCE_DIR SEQMATCH [MPIRUN].
BUILD=${1:?usage: mpi_module.sh BUILD_DIR SOURCE_DIR SEQMATCH [MPIRUN]}
SRC=${2:?}
SEQMATCH=${3:?}
MPIRUN=${4:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-mpi-module.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
GENOME=$SRC/examples/ecoli-excerpt.fa
PATTERNS=$SRC/examples/patterns.fa

needs_mpi() { readelf -d "$1" 2>/dev/null | grep NEEDED | grep -Eiq 'mpi|open-pal|open-rte|pmix'; }
if needs_mpi "$SEQMATCH"; then fail "seqmatch links an MPI library: $(readelf -d "$SEQMATCH" | grep NEEDED | grep -i mpi)"
else pass; fi
for lib in "$BUILD"/libseqmatch.so*; do
    if needs_mpi "$lib"; then fail "$(basename "$lib") links an MPI library"; else pass; fi
done

# A copy of the binary alone (no module beside it) searches as one process,
# and says why it cannot be several ranks.
mkdir -p "$TMP/copy"
cp "$SEQMATCH" "$TMP/copy/seqmatch"
"$SEQMATCH" search -p "$PATTERNS" "$GENOME" >"$TMP/want"
"$TMP/copy/seqmatch" search -p "$PATTERNS" "$GENOME" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 0 ] && cmp -s "$TMP/want" "$TMP/out" && [ ! -s "$TMP/err" ]; then pass; else fail "a copied binary: $(cat "$TMP/err")"; fi
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 SEQMATCH_MPI_MODULE="$TMP/none.so" \
    "$TMP/copy/seqmatch" search -p "$PATTERNS" "$GENOME" >"$TMP/out" 2>"$TMP/err"
status=$?
if [ "$status" -eq 2 ] && [ ! -s "$TMP/out" ] &&
    grep -q "^seqmatch: started by an MPI launcher, but the MPI module libseqmatch-mpi.so could not be loaded ($TMP/none.so" "$TMP/err" &&
    grep -q 'each of the 2 copies would search everything' "$TMP/err"; then pass
else fail "two ranks without the module: status $status, $(cat "$TMP/err")"; fi
OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0 SEQMATCH_MPI_MODULE="$TMP/none.so" \
    "$TMP/copy/seqmatch" search -p "$PATTERNS" "$GENOME" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 0 ] && cmp -s "$TMP/want" "$TMP/out"; then pass; else fail "one rank without the module: $(cat "$TMP/err")"; fi

# mpirun -np 2 through PATH, installed: the module is found beside the real binary.
if [ -n "$MPIRUN" ] && [ -f "$BUILD/libseqmatch-mpi.so" ]; then
    cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null 2>&1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
    (cd "$TMP" && PATH="$TMP/prefix/bin:$PATH" timeout 120 "$MPIRUN" --oversubscribe -np 2 seqmatch search -t 1 \
        -p "$PATTERNS" "$GENOME" >"$TMP/out" 2>"$TMP/err")
    if [ $? -eq 0 ] && cmp -s "$TMP/want" "$TMP/out"; then pass
    else fail "mpirun -np 2 seqmatch through PATH: $(grep seqmatch "$TMP/err" | head -2)"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
