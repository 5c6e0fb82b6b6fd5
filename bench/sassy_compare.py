#!/usr/bin/env python3
"""One pattern with errors, seqmatch and Sassy side by side in one run.

usage: PYTHONPATH=SITE python3 bench/sassy_compare.py [--reps N] [--seqmatch BIN] DATA

SITE holds the seqmatch package (pip install --target SITE .) and Sassy (pip install sassy-rs).
DATA is the benchmark data folder (bench/fetch-data.sh): panel.fa and genomes/MG1655-K12.fa.

Cases (one 20-mer, GTGCCAGCAGCCGCGGTAAT, both strands):
  panel k=3 and k=2: Sassy's Searcher("dna", rc=True).search over every record of panel.fa, the
      records in memory, one thread; seqmatch's db.scan over the same records (the scan alone,
      text in memory); `seqmatch search -t 1 --format count -k K panel.fa` (the whole command:
      reading, line breaks, scan, output); the same with -t 2; -m 3 (the whole command).
  MG1655 edits=2: one scan of the E. coli genome in memory, Sassy's search against seqmatch's
      db.scan, the compile included (seqmatch.compile([p], edits=2).scan(genome)).
Every measurement runs REPS times, the tools alternating (A B C A B C ...); the medians of the
wall time (and of the CPU time: user + system, which a loaded machine disturbs less) are printed,
with the hit counts of each tool (Sassy reports one match per run of ends, as
seqmatch's --report best does; the counts are for reading, not compared).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

PATTERN = b"GTGCCAGCAGCCGCGGTAAT"


def read_fasta(path):
    records, name, parts = [], None, []
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b">"):
                if name is not None:
                    records.append((name, b"".join(parts)))
                name, parts = line[1:].split()[0], []
            else:
                parts.append(line.strip())
    if name is not None:
        records.append((name, b"".join(parts)))
    return records


def timed(f):
    """(wall seconds, CPU seconds of this process, f's result)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = f()
    return time.perf_counter() - t0, time.process_time() - c0, out


def command(args):
    """(wall seconds, CPU seconds of the command: user + system, its count total)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in (0, 1):
        sys.exit("failed: %s: %s" % (" ".join(args), r.stderr.decode()))
    total = [l for l in r.stdout.decode().splitlines() if l.startswith("total")]
    return dt, cpu, int(total[0].split()[1]) if total else -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--seqmatch", default=os.path.join(os.path.dirname(__file__), "..", "build", "seqmatch"))
    ap.add_argument("--cores", default="0", help="taskset core list for the one-thread runs")
    ap.add_argument("data")
    a = ap.parse_args()
    import sassy
    import seqmatch

    panel = os.path.join(a.data, "panel.fa")
    records = [seq for _, seq in read_fasta(panel)]
    genome = b"".join(seq for _, seq in read_fasta(os.path.join(a.data, "genomes", "MG1655-K12.fa")))
    searcher = sassy.Searcher("dna", rc=True)
    one = ["taskset", "-c", a.cores]
    pin = os.sched_getaffinity(0)
    rows = []

    def report(name, runs):
        times = [t for t, _, _ in runs]
        cpus = [c for _, c, _ in runs]
        rows.append((name, statistics.median(times), min(times), max(times), statistics.median(cpus), runs[0][2]))

    for k in (3, 2):
        db = seqmatch.compile([PATTERN], edits=k)
        os.sched_setaffinity(0, {int(a.cores.split(",")[0])})
        sassy_runs, scan_runs, cmd1, cmd2 = [], [], [], []
        for _ in range(a.reps):
            sassy_runs.append(timed(lambda: sum(len(searcher.search(PATTERN, s, k)) for s in records)))
            scan_runs.append(timed(lambda: sum(len(db.scan(s)) for s in records)))
            cmd1.append(command(one + [a.seqmatch, "search", "-t", "1", "--format", "count", "-e", PATTERN.decode(),
                                       "-k", str(k), panel]))
            os.sched_setaffinity(0, pin)
            cmd2.append(command([a.seqmatch, "search", "-t", "2", "--format", "count", "-e", PATTERN.decode(), "-k",
                                 str(k), panel]))
            os.sched_setaffinity(0, {int(a.cores.split(",")[0])})
        os.sched_setaffinity(0, pin)
        report("panel k=%d: Sassy search (records in memory, 1 thread)" % k, sassy_runs)
        report("panel k=%d: seqmatch db.scan (records in memory, 1 thread)" % k, scan_runs)
        report("panel k=%d: seqmatch search -t 1 (whole command)" % k, cmd1)
        report("panel k=%d: seqmatch search -t 2 (whole command)" % k, cmd2)
    m3 = [command(one + [a.seqmatch, "search", "-t", "1", "--format", "count", "-e", PATTERN.decode(), "-m", "3", panel])
          for _ in range(a.reps)]
    report("panel m=3: seqmatch search -t 1 (whole command)", m3)

    os.sched_setaffinity(0, {int(a.cores.split(",")[0])})
    sassy_g, seqm_g = [], []
    for _ in range(a.reps):
        sassy_g.append(timed(lambda: len(searcher.search(PATTERN, genome, 2))))
        seqm_g.append(timed(lambda: len(seqmatch.compile([PATTERN], edits=2).scan(genome))))
    os.sched_setaffinity(0, pin)
    report("MG1655 edits=2: Sassy search", sassy_g)
    report("MG1655 edits=2: seqmatch.compile([p], edits=2).scan(genome)", seqm_g)

    print("%-66s %9s %9s %9s %9s %8s" % ("case", "median_s", "min_s", "max_s", "cpu_s", "hits"))
    for name, med, lo, hi, cpu, hits in rows:
        print("%-66s %9.4f %9.4f %9.4f %9.4f %8d" % (name, med, lo, hi, cpu, hits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
