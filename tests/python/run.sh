#!/usr/bin/env bash
# The Python package as a user installs it: `pip install .` from the
# repository root (into a folder of the build, with Debian's setuptools and
# wheel: --no-build-isolation needs no network), then its pytest suite
# (python/tests), which compares it with this build's command.
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
site=$BUILD/python-site
rm -rf "$site"
# setuptools builds in BUILD/python-build (kept: a rebuild compiles only when a source changed)
if ! SEQMATCH_PYTHON_BUILD=$BUILD/python-build "$PY" -m pip install --no-build-isolation --no-deps --no-cache-dir \
        --disable-pip-version-check -q --target "$site" "$SRC" >"$BUILD/python-pip.log" 2>&1; then
    echo "FAIL: pip install . ($BUILD/python-pip.log):"
    tail -20 "$BUILD/python-pip.log"
    exit 1
fi
cd "$BUILD" || exit 1
PYTHONPATH=$site SEQMATCH_CLI=$CLI PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -p no:cacheprovider "$SRC/python/tests"
