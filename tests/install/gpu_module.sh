# The GPU module found by an installed command run through PATH, as a user
# runs it: `cmake --install` to a fresh prefix, the module there replaced by
# a CPU stand-in (tests/emulated, built as a module), then `seqmatch search
# --gpu` and `seqmatch dfa --gpu` by their bare name from another folder,
# through a symbolic link, and with SEQMATCH_CUDA_MODULE; each gives the
# CPU's output. (The module was looked for beside argv[0], "./" for a bare
# name: `seqmatch --gpu` through PATH failed after every --prefix install.)
# Run as: bash gpu_module.sh BUILD_DIR SOURCE_DIR STANDIN_MODULE.
BUILD=${1:?usage: gpu_module.sh BUILD_DIR SOURCE_DIR STANDIN_MODULE}
SRC=${2:?}
STANDIN=${3:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-module.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

PREFIX=$TMP/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1 || { fail "cmake --install"; tail -5 "$TMP/install.log"; }
libdir=$(dirname "$(find "$PREFIX" -name 'libseqmatch.so' | head -1)")
bare=$TMP/bare
cp -a "$PREFIX" "$bare"                   # a prefix without a module, for the variable
rm -f "$bare"/lib*/libseqmatch-cuda.so "$bare"/lib/*/libseqmatch-cuda.so
cp "$STANDIN" "$libdir/libseqmatch-cuda.so"
GENOME=$SRC/examples/ecoli-excerpt.fa
PATTERNS=$SRC/examples/patterns.fa
mkdir -p "$TMP/elsewhere" "$TMP/links"
cd "$TMP/elsewhere" || exit 1
"$PREFIX/bin/seqmatch" search -p "$PATTERNS" "$GENOME" >"$TMP/cpu.out"
"$PREFIX/bin/seqmatch" dfa --regex '(A|C|G|T)*' "$GENOME" >"$TMP/cpu_dfa.out"

# same_as_cpu NAME COMMAND...: the command's output is the CPU's, status 0
same_as_cpu() {
    local name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local status=$?
    if [ "$status" -eq 0 ] && cmp -s "$want" "$TMP/out" && ! grep -q 'could not be loaded' "$TMP/err"; then pass
    else fail "$name: status $status, $(head -c 300 "$TMP/err")"; fi
}

same_as_cpu "search --gpu through PATH" "$TMP/cpu.out" \
    env PATH="$PREFIX/bin:$PATH" seqmatch search --gpu -p "$PATTERNS" "$GENOME"
same_as_cpu "dfa --gpu through PATH" "$TMP/cpu_dfa.out" \
    env PATH="$PREFIX/bin:$PATH" seqmatch dfa --gpu --regex '(A|C|G|T)*' "$GENOME"
ln -s "$PREFIX/bin/seqmatch" "$TMP/links/seqmatch"
same_as_cpu "search --gpu through a symbolic link on PATH" "$TMP/cpu.out" \
    env PATH="$TMP/links:$PATH" seqmatch search --gpu -p "$PATTERNS" "$GENOME"
same_as_cpu "search --gpu by a relative path" "$TMP/cpu.out" \
    ../prefix/bin/seqmatch search --gpu -p "$PATTERNS" "$GENOME"
# the variable points at a module elsewhere; a wrong one is named
same_as_cpu "SEQMATCH_CUDA_MODULE" "$TMP/cpu.out" \
    env SEQMATCH_CUDA_MODULE="$STANDIN" PATH="$bare/bin:$PATH" seqmatch search --gpu -p "$PATTERNS" "$GENOME"
env SEQMATCH_CUDA_MODULE="$TMP/none.so" PATH="$PREFIX/bin:$PATH" seqmatch search --gpu -e GAATTC "$GENOME" \
    >/dev/null 2>"$TMP/err"
status=$?
if [ "$status" -eq 2 ] && grep -q "libseqmatch-cuda.so could not be loaded ($TMP/none.so" "$TMP/err"; then pass
else fail "a wrong SEQMATCH_CUDA_MODULE: status $status, $(cat "$TMP/err")"; fi
# a shared program linked with the installed library finds the module beside it
cc -std=c11 -o "$TMP/gpu_shared" "$SRC/tests/install/gpu_check.c" -I"$PREFIX/include" -L"$libdir" -lseqmatch \
    -Wl,-rpath,"$libdir" 2>"$TMP/cc.err" && "$TMP/gpu_shared" >"$TMP/gpu_shared.out" 2>&1
if grep -q '^1 0 ok' "$TMP/gpu_shared.out"; then pass
else fail "a program linked with libseqmatch.so: $(cat "$TMP/gpu_shared.out" "$TMP/cc.err")"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
