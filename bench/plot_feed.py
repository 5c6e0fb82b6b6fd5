#!/usr/bin/env python3
"""Plot the feed runs (bench/run-feed.sh with FEED_CSV) as MB/s of uncompressed input.

usage: plot_feed.py MANY_CORES_CSV TWO_CORES_CSV PNG
  MANY_CORES_CSV: a run over 1..N threads (left: MB/s against threads, one line per input and
  command, the readers alone as dashed lines); TWO_CORES_CSV: a run over 1 and 2 threads
  (right: bars, seqmatch beside the tools that only read or decompress the same file).
Needs matplotlib.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    return list(csv.DictReader(open(path, newline="")))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    many, two, dst = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))

    lines = [("plain", "search"), ("plain", "dfa"), ("bgzf", "search"), ("gzip", "search")]
    for inp, what in lines:
        pts = sorted((int(r["threads"]), float(r["MBps"])) for r in many if r["input"] == inp and r["what"] == what)
        if pts:
            left.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"seqmatch {what}, {inp}")
    for r in many:
        if r["what"] not in ("search", "dfa", "dfa-in-memory"):
            left.axhline(float(r["MBps"]), linestyle="--", linewidth=1, color="grey")
            left.annotate(f"{r['what']} ({r['input']})", (1, float(r["MBps"])), fontsize=8, va="bottom")
    left.set_xscale("log", base=2)
    left.set_xlabel("threads")
    left.set_ylabel("MB/s of uncompressed input")
    left.set_title("whole command against threads (many-core host)")
    left.legend(fontsize=8)

    labels, values, colors = [], [], []
    for r in two:
        labels.append(f"{r['input']}\n{r['what']} -t{r['threads']}" if r["what"] in ("search", "dfa") or r["what"] == "bgzip"
                      else f"{r['input']}\n{r['what']}")
        values.append(float(r["MBps"]))
        colors.append("tab:blue" if r["what"] in ("search", "dfa") else "tab:grey")
    right.bar(range(len(values)), values, color=colors)
    right.set_xticks(range(len(values)))
    right.set_xticklabels(labels, rotation=70, fontsize=7)
    right.set_ylabel("MB/s of uncompressed input")
    right.set_title("1 and 2 threads, beside the readers alone (blue: seqmatch)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
