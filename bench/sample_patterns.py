#!/usr/bin/env python3
"""Deterministic sampler of benchmark patterns.

Takes N substrings of length L from a sequence file (raw bases, e.g. panel.seq: one line, no
headers; line breaks are ignored), at positions drawn with a seeded generator, skipping every
window that holds a byte other than A, C, G, T. The same (file, N, L, seed, --unique) gives
the same patterns on every machine.

With --words the file is plain text (e.g. kjv.txt) and the patterns are N distinct words
(maximal runs of ASCII letters, case kept) drawn uniformly from its sorted vocabulary; -l is
then not needed.

usage: sample_patterns.py -n N -l L [-s SEED] [--unique] [--fasta] [-o OUT] SEQFILE
       sample_patterns.py --words -n N [-s SEED] [-o OUT] TEXTFILE
"""
import argparse
import bisect
import random
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, required=True, help="number of patterns")
    ap.add_argument("-l", type=int, default=0, help="pattern length")
    ap.add_argument("-s", "--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--unique", action="store_true",
                    help="no two patterns equal (draw again on a repeat)")
    ap.add_argument("--fasta", action="store_true",
                    help="FASTA output (>pI pos=P), not one pattern a line")
    ap.add_argument("--words", action="store_true",
                    help="N distinct words of a text instead of windows of a sequence")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    ap.add_argument("seqfile")
    a = ap.parse_args()
    if a.words:
        write_words(a)
        return
    if a.n < 0 or a.l < 1:
        sys.exit("sample_patterns: -n must be >= 0 and -l >= 1")

    with open(a.seqfile, "rb") as f:
        seq = f.read().replace(b"\n", b"").replace(b"\r", b"")
    span = len(seq) - a.l + 1
    if span < 1:
        sys.exit(f"sample_patterns: {a.seqfile}: shorter than {a.l}")
    bad = [m.start() for m in re.finditer(rb"[^ACGT]", seq)]  # sorted positions of non-ACGT

    def clean(p):
        i = bisect.bisect_left(bad, p)
        return i == len(bad) or bad[i] >= p + a.l

    rng = random.Random(a.seed)
    seen = set()
    out = []
    tries = 0
    limit = 1000 * max(a.n, 1) + 1000000
    while len(out) < a.n:
        tries += 1
        if tries > limit:
            sys.exit(f"sample_patterns: gave up after {tries - 1} draws "
                     f"({len(out)} of {a.n} patterns found)")
        p = rng.randrange(span)
        if not clean(p):
            continue
        w = seq[p:p + a.l]
        if a.unique:
            if w in seen:
                continue
            seen.add(w)
        out.append((p, w))

    fo = sys.stdout.buffer if a.output == "-" else open(a.output, "wb")
    for i, (p, w) in enumerate(out, 1):
        if a.fasta:
            fo.write(b">p%d pos=%d\n" % (i, p))
            for j in range(0, len(w), 70):
                fo.write(w[j:j + 70] + b"\n")
        else:
            fo.write(w + b"\n")
    if fo is not sys.stdout.buffer:
        fo.close()


def write_words(a):
    with open(a.seqfile, "rb") as f:
        vocabulary = sorted(set(re.findall(rb"[A-Za-z]+", f.read())))
    if a.n < 0 or a.n > len(vocabulary):
        sys.exit(f"sample_patterns: {a.seqfile} has {len(vocabulary)} distinct words, not {a.n}")
    words = random.Random(a.seed).sample(vocabulary, a.n)
    fo = sys.stdout.buffer if a.output == "-" else open(a.output, "wb")
    for w in words:
        fo.write(w + b"\n")
    if fo is not sys.stdout.buffer:
        fo.close()


if __name__ == "__main__":
    main()
