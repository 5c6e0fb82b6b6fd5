#!/usr/bin/env python3
"""CRISPR guides for the GPU benchmark: 20-nt protospacers that sit next to
an NGG PAM in a sequence, each given 0, 1 or 2 random substitutions.

Positions are drawn with a seeded generator over a sequence file (raw bases,
e.g. panel.seq: line breaks ignored); a position is taken when its 20 bases
are A, C, G or T and the 3 after them read NGG (forward strand, as a guide
is written). Each guide then gets 0, 1 or 2 substitutions (equally likely)
at distinct places, by another base. The same (file, N, seed) gives the
same guides on every machine. Output: one guide a line (the PAM is given
to seqmatch with --pam NGG).

usage: crispr_guides.py -n N [-s SEED] [-o OUT] SEQFILE
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, required=True, help="number of guides")
    ap.add_argument("-s", "--seed", type=int, default=28, help="seed (default 28)")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    ap.add_argument("seqfile")
    a = ap.parse_args()
    with open(a.seqfile, "rb") as f:
        seq = f.read().replace(b"\n", b"").replace(b"\r", b"").upper()
    if len(seq) < 23:
        sys.exit("crispr_guides.py: the sequence is shorter than a guide and its PAM")
    rng = random.Random(a.seed)
    bases = set(b"ACGT")
    guides = []
    tries = 0
    while len(guides) < a.n:
        tries += 1
        if tries > 1000 * a.n + 100000:
            sys.exit("crispr_guides.py: too few NGG sites in %s" % a.seqfile)
        i = rng.randrange(len(seq) - 22)
        site = seq[i:i + 23]
        if site[21:23] != b"GG" or site[20] not in bases or not set(site[:20]) <= bases:
            continue
        guide = bytearray(site[:20])
        for p in rng.sample(range(20), rng.randrange(3)):
            guide[p] = rng.choice([b for b in b"ACGT" if b != guide[p]])
        guides.append(guide.decode())
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    out.write("".join(g + "\n" for g in guides))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
