# scripts/setup installs what it builds (through scripts/install), so that
# the README's next commands work: `seqmatch` through PATH, `man seqmatch`;
# it says where it put each thing and what to add to PATH. Here the install
# step runs on the test build into a fresh prefix (the whole of setup, with
# its Debian packages and its build, is what a new user runs).
# Run as: bash setup_install.sh BUILD_DIR SOURCE_DIR.
BUILD=${1:?usage: setup_install.sh BUILD_DIR SOURCE_DIR}
SRC=${2:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-setup.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

if grep -q '^bash scripts/install --prefix "\$prefix" build$' "$SRC/scripts/setup"; then pass
else fail "scripts/setup does not install"; fi
if "$SRC/scripts/setup" --help | grep -q -- '--prefix DIR'; then pass; else fail "scripts/setup --help"; fi

PREFIX=$TMP/my\ prefix   # a space, as home folders may have
bash "$SRC/scripts/install" --prefix "$PREFIX" "$BUILD" >"$TMP/out" 2>"$TMP/err"
status=$?
if [ "$status" -eq 0 ] && [ -x "$PREFIX/bin/seqmatch" ]; then pass; else fail "scripts/install: status $status, $(tail -3 "$TMP/err")"; fi
for what in "command       $PREFIX/bin/seqmatch" "man page      $PREFIX/share/man/man1/seqmatch.1" \
            "pkg-config    $PREFIX/lib" "$PREFIX/bin is not on PATH: add it" "export PATH=\"$PREFIX/bin:\$PATH\"" \
            "link with -Wl,-rpath,$PREFIX/lib"; do
    if grep -qF -- "$what" "$TMP/err"; then pass; else fail "scripts/install does not say: $what"; fi
done
if [ -f "$PREFIX/share/man/man1/seqmatch.1" ]; then pass; else fail "man page not installed"; fi

# The README's next command, through PATH, from another folder; man finds
# the page from PATH.
mkdir "$TMP/work" && cd "$TMP/work" || exit 1
PATH="$PREFIX/bin:$PATH" seqmatch search -p "$SRC/examples/patterns.fa" "$SRC/examples/ecoli-excerpt.fa" >"$TMP/hits"
if [ $? -eq 0 ] && [ "$(wc -l <"$TMP/hits")" -gt 10 ]; then pass; else fail "seqmatch through PATH"; fi
if command -v man >/dev/null 2>&1 && command -v manpath >/dev/null 2>&1; then
    if [ "$(PATH="$PREFIX/bin:$PATH" man -w seqmatch 2>/dev/null)" = "$PREFIX/share/man/man1/seqmatch.1" ]; then pass
    else fail "man -w seqmatch with $PREFIX/bin on PATH: $(PATH="$PREFIX/bin:$PATH" man -w seqmatch 2>&1)"; fi
fi
# On PATH already: no advice
PATH="$PREFIX/bin:$PATH" bash "$SRC/scripts/install" --prefix "$PREFIX" "$BUILD" >/dev/null 2>"$TMP/err2"
if ! grep -q 'is not on PATH' "$TMP/err2"; then pass; else fail "PATH advice when the folder is on PATH"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
