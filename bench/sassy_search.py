#!/usr/bin/env python3
"""Sassy (PyPI sassy-rs: SIMD approximate search, CPU) on a pattern set and
one sequence, both strands, on every core: the peer beside seqmatch's primer
cases (bench/run-gpu.sh). Prints one key=value line: the matches Sassy
reports (its best alignment per end region, so not seqmatch's hit count),
the seconds of reading the text and of the search, and the rate.

usage: sassy_search.py -k K -p PATTERNS [-t THREADS] SEQFILE
  PATTERNS  FASTA or one pattern a line; SEQFILE raw bases (panel.seq)
"""
import argparse
import os
import time

import sassy


def patterns_of(path):
    out = []
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(b">"):
                out.append(line.upper())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", type=int, required=True)
    ap.add_argument("-p", required=True)
    ap.add_argument("-t", type=int, default=os.cpu_count())
    ap.add_argument("seqfile")
    a = ap.parse_args()
    pats = patterns_of(a.p)
    t0 = time.time()
    with open(a.seqfile, "rb") as f:
        text = f.read().replace(b"\n", b"")
    t1 = time.time()
    searcher = sassy.Searcher("dna", rc=True)
    matches = searcher.search_many(pats, [text], a.k, a.t, "single")
    t2 = time.time()
    print("sassy patterns=%d k=%d bytes=%d threads=%d matches=%d read_s=%.2f search_s=%.2f GBps=%.3f"
          % (len(pats), a.k, len(text), a.t, len(matches), t1 - t0, t2 - t1, len(text) / (t2 - t1) / 1e9))


if __name__ == "__main__":
    main()
