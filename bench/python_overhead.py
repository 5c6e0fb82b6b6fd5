"""The Python package's cost per call: db.scan on short reads against the
same sm_scan calls in C (bench/scan_calls), and search/count on a file
against the command.

    make -C bench scan_calls LIBDIR=../build
    PYTHONPATH=SITE python3 bench/python_overhead.py [READS] [ROUNDS]

SITE is where `pip install --target SITE .` put the package.
"""
import os
import subprocess
import sys
import time

import seqmatch

HERE = os.path.dirname(os.path.abspath(__file__))
READS = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
LENGTH = 150


def reads():
    """The reads of scan_calls.c: xorshift64, two top bits per base."""
    s, mask, out, text = 88172645463325252, (1 << 64) - 1, [], []
    for _ in range(READS * LENGTH):
        s ^= (s << 13) & mask
        s ^= s >> 7
        s ^= (s << 17) & mask
        text.append("ACGT"[s >> 62])
    text = "".join(text)
    return [text[i * LENGTH:(i + 1) * LENGTH] for i in range(READS)]


def best(f):
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


CASES = [
    ("1 site, exact", {}, [], ["GAATTC"]),
    ("10 primers, exact", {}, [], ["ACGTTGCATTAGGCATCCAG", "TTGACCATGGACCATGACTA", "GGATCCATTGACCAGTTAGC",
                                   "CATTAGGACCATGGATTACA", "TTTGGACCAAGGTTACCAGT", "AGCTTGGACAGTCCAGATGA",
                                   "CCATGGTTAGCAAGTTCCAG", "GTTACCAGGATCATTGACCA", "TTAGGCAACCAGTTGCAGAT",
                                   "ACCAGTTGGCATTGCCATGA"]),
    ("1 primer, 2 edits", {"edits": 2}, ["edits", "2"], ["ACGTTGCATTAGGCATCCAG"]),
]

texts = reads()
for name, options, cflags, patterns in CASES:
    db = seqmatch.compile(patterns, **options)
    hits = sum(len(db.scan(r)) for r in texts)
    py = best(lambda: [db.scan(r) for r in texts]) / READS * 1e6
    c = subprocess.run([os.path.join(HERE, "scan_calls"), str(READS), str(LENGTH), str(ROUNDS), *cflags, *patterns],
                       stdout=subprocess.PIPE, check=True).stdout.decode().split()
    print(f"{name}: python {py:.3f} us/call, c {float(c[1]):.3f} us/call, python - c {py - float(c[1]):.3f} us; "
          f"hits {hits} (c {c[3]})")
