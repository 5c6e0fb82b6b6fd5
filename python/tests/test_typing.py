"""The package's types, with mypy (Debian's python3-mypy, installed by
scripts/deps.sh): mypy --strict finds nothing wrong in the installed package
(its annotations and the extension's stub); stubtest finds the stub equal to
the extension; a user's program (typed_usage.py) checks through the
installed package's py.typed marker and runs; wrong uses are errors."""
import os
import subprocess
import sys

import pytest

import seqmatch
from test_seqmatch import EXCERPT, HERE

PACKAGE = os.path.dirname(seqmatch.__file__)


@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    cache = tmp_path_factory.mktemp("mypy-cache")

    def run(*args, cwd=None):
        r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                            f"--cache-dir={cache}", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           cwd=cwd)
        return r.returncode, r.stdout.decode()
    return run


def test_the_package_is_clean_under_mypy_strict(mypy):
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))
    assert os.path.exists(os.path.join(PACKAGE, "_seqmatch.pyi"))
    status, out = mypy(PACKAGE)
    assert status == 0, out


def test_the_stub_equals_the_extension():
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", os.devnull,
                        "seqmatch._seqmatch"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       cwd=os.path.dirname(PACKAGE))
    assert r.returncode == 0, r.stdout.decode()


def test_a_users_program_checks_and_runs(mypy, tmp_path):
    status, out = mypy(os.path.join(HERE, "typed_usage.py"), cwd=tmp_path)
    assert status == 0, out
    subprocess.run([sys.executable, os.path.join(HERE, "typed_usage.py"), EXCERPT], check=True)


def test_wrong_uses_are_errors(mypy, tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import seqmatch\n"
        "db = seqmatch.compile('GAATTC')\n"
        "db.scan(12)\n"                                    # 3: not a sequence
        "n: int = db.scan('ACGT')\n"                       # 4: a list of Hit
        "db.search('x.fa').rows\n"                         # 5: an iterator has no rows
        "s: str = db.scan('A')[0].start\n"                 # 6: an int
        "db.count('x.fa', thread=2)\n"                     # 7: no such argument
        "c: seqmatch.HitColumns = db.search('x.fa')\n"     # 8: arrays=True gives those
        "db.filter('x.fq', read2='y.fq').close(1)\n"       # 9: close takes nothing
        "seqmatch.BarcodePairs([]).demux('x.fq', strand=2)\n")  # 10: strand is a str
    status, out = mypy(str(wrong), cwd=tmp_path)
    assert status == 1
    lines = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    assert lines == {3, 4, 5, 6, 7, 8, 9, 10}, out
