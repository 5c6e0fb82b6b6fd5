#!/usr/bin/env bash
# The Python package as it is distributed and installed, offline (Debian's
# setuptools and wheel, --no-build-isolation --no-index: no network):
#   1. an sdist of the tree (setuptools' own backend);
#   2. a wheel built from that sdist: the whole library compiled, as a user
#      building from the sdist does, but at -O0 without debug information
#      (SEQMATCH_PYTHON_CFLAGS; a user's build is -O2): this checks that the
#      sdist is complete and builds, in a third of the CPU time, and the
#      tests below take seconds either way;
#   3. `pip wheel .` from the tree, linking this build's libraries
#      (SEQMATCH_LIBRARY_DIR) instead of compiling them again;
# both wheels hold the package, the extension and the type information and
# install; the pytest suite (python/tests: against this build's command,
# mypy on the installed package) runs on the sdist's wheel, and the tree's
# wheel must give the same hits.
# Run as: bash run.sh SOURCE_DIR BUILD_DIR SEQMATCH. $SEQMATCH_PYTHON picks
# the interpreter (default: Debian's /usr/bin/python3, else python3).
SRC=${1:?usage: run.sh SOURCE_DIR BUILD_DIR SEQMATCH}
BUILD=${2:?}
CLI=${3:?}
PY=${SEQMATCH_PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
fi
if ! "$PY" -c 'import pytest, setuptools, wheel, mypy, numpy, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
    echo "FAIL: $PY lacks pytest, setuptools, wheel, mypy, numpy or Python.h (scripts/deps.sh installs python3-pytest," \
         "python3-dev, python3-pip, python3-setuptools, python3-wheel, python3-mypy, python3-numpy)"
    exit 1
fi
dist=$BUILD/python-dist
rm -rf "$dist" "$BUILD/python-site" "$BUILD/python-site-linked"
mkdir -p "$dist"
log=$BUILD/python-pip.log
: >"$log"
pip() { "$PY" -m pip --disable-pip-version-check --no-cache-dir "$@" >>"$log" 2>&1; }
fail() {
    echo "FAIL: $1 ($log):"
    tail -20 "$log"
    exit 1
}

# setuptools builds in BUILD/python-build (kept: a rebuild compiles only when a source changed)
(cd "$SRC" && SEQMATCH_PYTHON_BUILD=$BUILD/python-build "$PY" -c \
    'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' "$dist/sdist" >>"$log" 2>&1) ||
    fail "the sdist"
sdist=$(ls "$dist"/sdist/seqmatch-*.tar.gz 2>/dev/null)
[ -n "$sdist" ] || fail "no sdist in $dist/sdist"
SEQMATCH_PYTHON_CFLAGS="-O0 -g0" SEQMATCH_PYTHON_BUILD=$BUILD/python-build pip wheel --no-build-isolation --no-index --no-deps -w "$dist/from-sdist" "$sdist" ||
    fail "pip wheel from the sdist, offline"
SEQMATCH_LIBRARY_DIR=$BUILD SEQMATCH_PYTHON_BUILD=$BUILD/python-build-linked \
    pip wheel --no-build-isolation --no-index --no-deps -w "$dist/from-tree" "$SRC" || fail "pip wheel ."
for wheel in "$dist"/from-sdist/*.whl "$dist"/from-tree/*.whl; do
    "$PY" - "$wheel" <<'PYTHON' || fail "the wheel's files"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for want in ("seqmatch/__init__.py", "seqmatch/py.typed", "seqmatch/_seqmatch.pyi"):
    assert want in names, f"{sys.argv[1]}: no {want} in {names}"
assert any(n.startswith("seqmatch/_seqmatch.") and n.endswith(".so") for n in names), names
PYTHON
done
pip install --no-index --no-deps --target "$BUILD/python-site" "$dist"/from-sdist/*.whl || fail "pip install (sdist's wheel)"
pip install --no-index --no-deps --target "$BUILD/python-site-linked" "$dist"/from-tree/*.whl || fail "pip install (tree's wheel)"
for site in python-site python-site-linked; do
    PYTHONPATH=$BUILD/$site "$PY" -c '
import sys, seqmatch
db = seqmatch.compile(seqmatch.read_patterns(sys.argv[1] + "/examples/patterns.fa"), mismatches=1)
print(len(list(db.search(sys.argv[1] + "/examples/ecoli-excerpt.fa"))), seqmatch.library_version())' "$SRC"
done >"$dist/same-hits.txt" 2>>"$log" || fail "the installed wheels"
if [ "$(sort -u "$dist/same-hits.txt" | wc -l)" != 1 ]; then
    echo "FAIL: the two wheels give different hits: $(tr '\n' ' ' <"$dist/same-hits.txt")"
    exit 1
fi
cd "$BUILD" || exit 1
PYTHONPATH=$BUILD/python-site SEQMATCH_CLI=$CLI PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -p no:cacheprovider "$SRC/python/tests"
