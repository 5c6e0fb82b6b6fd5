#!/usr/bin/env python3
"""Plot bench/results/exact.csv (written by run-exact.sh) as grouped bars of MB/s.

usage: plot.py [CSV] [PNG]     (defaults: results/exact.csv, results/exact.png beside this file)
Needs matplotlib (pip install matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "exact.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "results", "exact.png")

rows = list(csv.DictReader(open(src, newline="")))
sets = []
for r in rows:
    if r["set"] not in sets:
        sets.append(r["set"])

# series: (label, tool, threads, column)
# single-threaded rates by CPU time (steady on a busy machine); see table.py for wall time
series = [
    ("seqmatch, 1 thread", "seqmatch", "1", "cpu_MBps"),
    ("Hyperscan (scan only)", "hyperscan", "1", "scan_cpu_MBps"),
    ("Hyperscan (whole run)", "hyperscan", "1", "cpu_MBps"),
    ("ripgrep -F*", "rg", "1", "cpu_MBps"),
    ("grep -F*", "grep", "1", "cpu_MBps"),
]


def value(tool, threads, col, s):
    for r in rows:
        if r["tool"] == tool and r["threads"] == threads and r["set"] == s and r[col]:
            return float(r[col])
    return None


present = [x for x in series if any(value(x[1], x[2], x[3], s) for s in sets)]
label = {"k8_1000": "1000 × 8 nt", "k8_8000": "8000 × 8 nt", "k8_16000": "16000 × 8 nt",
         "k20_10": "10 × 20 nt", "k32_1000": "1000 × 32 nt", "k300_3000": "3000 × 300 nt"}

fig, ax = plt.subplots(figsize=(10.5, 4.8))
width = 0.8 / max(len(present), 1)
for i, (name, tool, threads, col) in enumerate(present):
    xs, ys = [], []
    for j, s in enumerate(sets):
        v = value(tool, threads, col, s)
        if v:
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(v)
    bars = ax.bar(xs, ys, width, label=name)
    for b, y in zip(bars, ys):
        ax.annotate(f"{y:.0f}" if y >= 10 else f"{y:.1f}", (b.get_x() + b.get_width() / 2, y),
                    ha="center", va="bottom", fontsize=7, rotation=90, xytext=(0, 2),
                    textcoords="offset points")
ax.set_xticks(range(len(sets)))
ax.set_xticklabels([label.get(s, s) for s in sets])
ax.set_yscale("log")
ax.set_ylabel("MB/s by CPU time, one thread (log scale)")
ax.set_title("Exact multi-pattern search, 110.6 Mbp bacterial panel as one text record, all occurrences")
ax.title.set_fontsize(10)
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
ax.text(0.0, -0.14, "* grep and ripgrep count non-overlapping matches only (fewer hits than the others)",
        transform=ax.transAxes, fontsize=7)
ax.grid(axis="y", which="both", alpha=0.3)
fig.tight_layout()
fig.savefig(dst, dpi=120)
print(dst)
