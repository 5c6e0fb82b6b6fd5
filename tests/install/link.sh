#!/usr/bin/env bash
# The installed library as a user links it: `cmake --install` to a fresh
# prefix, then the README's C example compiled with pkg-config, static
# (gcc -static ... $(pkg-config --static --libs seqmatch)) and shared, and
# run; neither link needs the CUDA toolkit, and a program asking for a GPU
# gets a message (a static one: it cannot load the GPU module).
# Run as: bash link.sh BUILD_DIR SOURCE_DIR HAVE_CUDA, from tests/.
BUILD=${1:?usage: link.sh BUILD_DIR SOURCE_DIR HAVE_CUDA}
SRC=${2:?}
HAVE_CUDA=${3:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-link.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
CC=${CC:-cc}

PREFIX=$TMP/prefix
if cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1; then pass
else fail "cmake --install"; tail -5 "$TMP/install.log"; fi
pcdir=$(dirname "$(find "$PREFIX" -name seqmatch.pc | head -1)")
export PKG_CONFIG_PATH=$pcdir
libdir=$(pkg-config --variable=libdir seqmatch)

# The README's C block is examples/readme.c, word for word.
awk '/^```c$/ { on = 1; next } /^```$/ { if (on) exit } on' "$SRC/README.md" >"$TMP/readme.c"
if [ -s "$TMP/readme.c" ] && cmp -s "$TMP/readme.c" "$SRC/examples/readme.c"; then pass
else fail "README's C block differs from examples/readme.c"; diff "$SRC/examples/readme.c" "$TMP/readme.c" | head -5; fi

expected='EcoRI + 2 8
EcoRI - 2 8
BamHI + 9 15
BamHI - 9 15'
# shellcheck disable=SC2046
if $CC -std=c11 -Wall -Wextra -Werror -static -o "$TMP/readme_static" "$SRC/examples/readme.c" \
        $(pkg-config --static --cflags --libs seqmatch) 2>"$TMP/cc.err" && [ ! -s "$TMP/cc.err" ]; then pass
else fail "static link (no warning expected)"; head -5 "$TMP/cc.err"; fi
if [ "$("$TMP/readme_static" 2>&1)" = "$expected" ]; then pass; else fail "static program's hits"; fi
if ! ldd "$TMP/readme_static" >/dev/null 2>&1; then pass; else fail "the static program is dynamic"; fi
# shellcheck disable=SC2046
if $CC -std=c11 -Wall -Wextra -Werror -o "$TMP/readme_shared" "$SRC/examples/readme.c" \
        $(pkg-config --cflags --libs seqmatch) 2>"$TMP/cc.err"; then pass
else fail "shared link"; head -5 "$TMP/cc.err"; fi
if [ "$(LD_LIBRARY_PATH=$libdir "$TMP/readme_shared" 2>&1)" = "$expected" ]; then pass; else fail "shared program's hits"; fi
if LD_LIBRARY_PATH=$libdir ldd "$TMP/readme_shared" | grep -q "$libdir/libseqmatch.so"; then pass
else fail "the shared program does not use the installed libseqmatch.so"; fi
# The README's words on a --prefix install: without LD_LIBRARY_PATH the
# program does not start (unless a libseqmatch.so.0 is installed in a system
# folder, e.g. by scripts/setup), with the rpath the README gives it does,
# on the prefix's library.
if ldconfig -p 2>/dev/null | grep -q 'libseqmatch\.so\.0 '; then
    pass
elif env -u LD_LIBRARY_PATH "$TMP/readme_shared" 2>&1 | grep -q 'libseqmatch.so.0: cannot open shared object file'; then
    pass
else
    fail "a shared program of a --prefix install started without LD_LIBRARY_PATH or an rpath"
fi
if grep -qF -- '-Wl,-rpath,$(pkg-config --variable=libdir seqmatch)' "$SRC/README.md"; then pass
else fail "README: the rpath link line"; fi
# shellcheck disable=SC2046
$CC -std=c11 -o "$TMP/readme_rpath" "$SRC/examples/readme.c" $(pkg-config --cflags --libs seqmatch) \
    -Wl,-rpath,"$(pkg-config --variable=libdir seqmatch)" 2>"$TMP/cc.err"
if [ "$(env -u LD_LIBRARY_PATH "$TMP/readme_rpath" 2>&1)" = "$expected" ] &&
    env -u LD_LIBRARY_PATH ldd "$TMP/readme_rpath" | grep -q "$libdir/libseqmatch.so"; then pass
else fail "the README's rpath link: $(env -u LD_LIBRARY_PATH "$TMP/readme_rpath" 2>&1 | head -2)"; fi

# Nothing of CUDA in either library's dependencies.
if nm -u "$libdir/libseqmatch.a" 2>/dev/null | grep -Eq ' (__)?cuda|dlopen'; then fail "libseqmatch.a needs CUDA symbols or dlopen"; else pass; fi
if ldd "$libdir/libseqmatch.so" | grep -qi 'cuda'; then fail "libseqmatch.so needs a CUDA library"; else pass; fi
if grep -q 'cuda' "$pcdir/seqmatch.pc"; then fail "seqmatch.pc names CUDA"; else pass; fi
if grep -q '^Libs.private:.*-lm' "$pcdir/seqmatch.pc" && grep -q '^Description: Find many patterns' "$pcdir/seqmatch.pc"
then pass; else fail "seqmatch.pc: -lm in Libs.private, the description"; fi

# Asking for a GPU: a message, never a crash or a link error.
# shellcheck disable=SC2046
$CC -std=c11 -Wall -Werror -static -o "$TMP/gpu_static" "$SRC/tests/install/gpu_check.c" \
    $(pkg-config --static --cflags --libs seqmatch) 2>"$TMP/cc.err" && "$TMP/gpu_static" >"$TMP/gpu_static.out" 2>&1
if [ ! -s "$TMP/cc.err" ]; then pass; else fail "static link of a runner program (no warning expected)"; head -3 "$TMP/cc.err"; fi
# shellcheck disable=SC2046
$CC -std=c11 -o "$TMP/gpu_shared" "$SRC/tests/install/gpu_check.c" $(pkg-config --cflags --libs seqmatch) &&
    LD_LIBRARY_PATH=$libdir "$TMP/gpu_shared" >"$TMP/gpu_shared.out" 2>&1
if [ "$HAVE_CUDA" = ON ]; then
    if grep -q '^0 9 the static libseqmatch.a cannot use a GPU: link libseqmatch.so' "$TMP/gpu_static.out"; then pass
    else fail "static program asking for a GPU: $(cat "$TMP/gpu_static.out")"; fi
    # the shared library finds the module installed beside it: a GPU, or the runtime's word that there is none
    if grep -Eq '^([1-9][0-9]* 0 ok|0 9 no usable GPU)' "$TMP/gpu_shared.out"; then pass
    else fail "shared program asking for a GPU: $(cat "$TMP/gpu_shared.out")"; fi
    if [ -f "$libdir/libseqmatch-cuda.so" ]; then pass; else fail "the GPU module is not installed"; fi
    # the installed command finds it too (bin/../lib)
    "$PREFIX/bin/seqmatch" search --gpu -e GAATTC "$SRC/examples/ecoli-excerpt.fa" >/dev/null 2>"$TMP/cli.err"
    if ! grep -q 'could not be loaded' "$TMP/cli.err"; then pass; else fail "installed seqmatch --gpu: $(cat "$TMP/cli.err")"; fi
else
    for kind in static shared; do
        if grep -q '^0 9 this seqmatch was built without CUDA' "$TMP/gpu_$kind.out"; then pass
        else fail "$kind program asking for a GPU: $(cat "$TMP/gpu_$kind.out")"; fi
    done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
