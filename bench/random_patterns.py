#!/usr/bin/env python3
"""Random DNA patterns for the many-pattern scale runs (bench/run-scale.sh).

N patterns over A, C, G, T, each of a length drawn uniformly from [LO, HI], from Python's
seeded Mersenne Twister: the same (N, LO, HI, seed) gives the same patterns on every machine.
One pattern per line (--fasta: >pI records).

usage: random_patterns.py -n N --min LO --max HI [-s SEED] [--fasta] [-o OUT]
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, required=True, help="number of patterns")
    ap.add_argument("--min", type=int, required=True, help="shortest length")
    ap.add_argument("--max", type=int, required=True, help="longest length")
    ap.add_argument("-s", "--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--fasta", action="store_true", help="FASTA output, not one pattern a line")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    a = ap.parse_args()
    if a.n < 0 or a.min < 1 or a.max < a.min:
        ap.error("need N >= 0 and 1 <= LO <= HI")
    rng = random.Random(a.seed)
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    lines = []
    for i in range(a.n):
        length = rng.randint(a.min, a.max)
        seq = "".join(rng.choice("ACGT") for _ in range(length))
        lines.append(f">p{i}\n{seq}\n" if a.fasta else seq + "\n")
    out.write("".join(lines))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
