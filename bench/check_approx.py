#!/usr/bin/env python3
"""Brute-force check of seqmatch's approximate search on a small real case, before timing.

usage: check_approx.py SEQMATCH GENOME.fa WORKDIR

1. k mismatches: 3 primers (20 nt, sampled from the first 30,000 bases of the genome's first
   record with seed 3) with
   -m 2 over the whole first record of GENOME.fa, both strands, every window compared
   (numpy); 2. k edits: the same primers with -k 2, --report ends and --report best, over the
   first 30,000 bases of that record, by the plain dynamic programme in pure Python (start =
   the largest s with edit(P, T[s, j)) = D(j)). The hits (strand, start, end, errors, pattern)
   must equal seqmatch's TSV output exactly. Prints the inputs and every disagreement; exits 1
   when there is one. Independent of the library and of bench/dp_oracle.c.
"""
import os
import random
import subprocess
import sys

import numpy as np

COMP = {"A": "T", "C": "G", "G": "C", "T": "A"}


def read_first_record(path):
    name, seq = None, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith(">"):
                if name is not None:
                    break
                name = line[1:].split()[0] if line[1:].split() else ""
            else:
                seq.append(line)
    return name, "".join(seq).upper().replace("U", "T")


def revcomp(p):
    return "".join(COMP[c] for c in reversed(p))


def sample(seq, n, m, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        i = rng.randrange(len(seq) - m + 1)
        w = seq[i:i + m]
        if all(c in "ACGT" for c in w):
            out.append(w)
    return out


def mismatch_hits(seq, pats, k):
    code = np.frombuffer(seq.encode(), dtype=np.uint8)
    hits = set()
    for idx, p in enumerate(pats):
        for strand, q in (("+", p), ("-", revcomp(p))):
            m = len(q)
            w = len(code) - m + 1
            mm = np.zeros(w, dtype=np.int32)
            for j, c in enumerate(q.encode()):
                mm += code[j:j + w] != c
            for i in np.nonzero(mm <= k)[0]:
                hits.add((strand, int(i), int(i) + m, int(mm[i]), f"q{idx + 1}"))
    return hits


def edit_columns(text, q, k):
    """Yield (j, D(j), S(j)) for j = 1..n: plain Sellers DP over full columns."""
    m = len(q)
    d = list(range(m + 1))
    s = [0] * (m + 1)
    for j in range(1, len(text) + 1):
        c = text[j - 1]
        nd = [0] * (m + 1)
        ns = [j] * (m + 1)
        for i in range(1, m + 1):
            best, st = d[i - 1] + (q[i - 1] != c or c not in "ACGT"), s[i - 1]
            v = nd[i - 1] + 1
            if v < best or (v == best and ns[i - 1] > st):
                best, st = v, ns[i - 1]
            v = d[i] + 1
            if v < best or (v == best and s[i] > st):
                best, st = v, s[i]
            nd[i], ns[i] = best, st
        d, s = nd, ns
        yield j, d[m], s[m]


def edit_hits(text, pats, k):
    ends, best = set(), set()
    for idx, p in enumerate(pats):
        for strand, q in (("+", p), ("-", revcomp(p))):
            run = None
            for j, dj, sj in edit_columns(text, q, k):
                if dj <= k:
                    ends.add((strand, sj, j, dj, f"q{idx + 1}"))
                    if run is None or dj < run[2]:
                        run = (sj, j, dj)
                elif run is not None:
                    best.add((strand, run[0], run[1], run[2], f"q{idx + 1}"))
                    run = None
            if run is not None:
                best.add((strand, run[0], run[1], run[2], f"q{idx + 1}"))
    return ends, best


def seqmatch_hits(binary, patfile, target, opts):
    r = subprocess.run([binary, "search", "-p", patfile, "--no-header", "-t", "2"] + opts + [target],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"check_approx: seqmatch failed ({r.returncode}): {r.stderr.strip()}")
    hits = set()
    for line in r.stdout.splitlines():
        f = line.split("\t")
        hits.add((f[2], int(f[3]), int(f[4]), int(f[5]), f[1]))
    return hits


def compare(label, want, got, inputs):
    if want == got:
        print(f"check_approx: {label}: OK, {len(got)} hits equal")
        return 0
    print(f"!!!!!!!! check_approx: {label}: DISAGREEMENT ({len(got)} from seqmatch, {len(want)} brute force)")
    print(f"         inputs: {inputs}")
    for h in sorted(want - got)[:10]:
        print(f"         missing in seqmatch: {h}")
    for h in sorted(got - want)[:10]:
        print(f"         extra in seqmatch:   {h}")
    return 1


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, genome, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    name, seq = read_first_record(genome)
    pats = sample(seq[:30000], 3, 20, 3)  # from the excerpt, so that the edit check finds hits
    patfile = os.path.join(work, "check-primers.fa")
    with open(patfile, "w") as f:
        for i, p in enumerate(pats, 1):
            f.write(f">q{i}\n{p}\n")
    one = os.path.join(work, "check-record.fa")
    with open(one, "w") as f:
        f.write(f">{name}\n{seq}\n")
    excerpt = os.path.join(work, "check-excerpt.fa")
    text = seq[:30000]
    with open(excerpt, "w") as f:
        f.write(f">{name}\n{text}\n")
    print(f"check_approx: record {name} of {os.path.basename(genome)} ({len(seq)} bp), "
          f"primers {' '.join(pats)}")
    bad = 0
    bad += compare("-m 2, both strands, whole record", mismatch_hits(seq, pats, 2),
                   seqmatch_hits(binary, patfile, one, ["-m", "2"]),
                   f"seqmatch search -p {os.path.basename(patfile)} -m 2 (first record of "
                   f"{os.path.basename(genome)}); primers {pats}")
    ends, best = edit_hits(text, pats, 2)
    for report, want in (("ends", ends), ("best", best)):
        bad += compare(f"-k 2 --report {report}, both strands, first 30,000 bp", want,
                       seqmatch_hits(binary, patfile, excerpt, ["-k", "2", "--report", report]),
                       f"seqmatch search -p {os.path.basename(patfile)} -k 2 --report {report} "
                       f"(first 30,000 bp of the first record of {os.path.basename(genome)}); primers {pats}")
    # --format count must count what the TSV prints
    for opts in (["-m", "2"], ["-k", "2"]):
        r = subprocess.run([binary, "search", "-p", patfile, "--format", "count"] + opts + [one],
                           capture_output=True, text=True)
        total = [ln.split("\t")[1] for ln in r.stdout.splitlines() if ln.startswith("total\t")]
        rows = len(seqmatch_hits(binary, patfile, one, opts))
        if total and int(total[0]) == rows:
            print(f"check_approx: --format count {' '.join(opts)}: OK, total {rows}")
        else:
            bad += 1
            print(f"!!!!!!!! check_approx: --format count {' '.join(opts)}: total {total[0] if total else '?'} "
                  f"but the TSV has {rows} hits (seqmatch search -p {os.path.basename(patfile)} "
                  f"--format count {' '.join(opts)} on the first record of {os.path.basename(genome)})")
    # -q must exit 0 when there is a hit (grep-like status)
    for opts in (["-m", "2"], ["-k", "2"]):
        r = subprocess.run([binary, "search", "-q", "-p", patfile] + opts + [one])
        if r.returncode == 0:
            print(f"check_approx: -q {' '.join(opts)}: OK, exit status 0")
        else:
            bad += 1
            print(f"!!!!!!!! check_approx: -q {' '.join(opts)}: exit status {r.returncode} although there are hits "
                  f"(seqmatch search -q -p {os.path.basename(patfile)} {' '.join(opts)} on the first record of "
                  f"{os.path.basename(genome)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
