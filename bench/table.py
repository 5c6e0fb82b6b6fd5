#!/usr/bin/env python3
"""Print bench/results/exact.csv (from run-exact.sh) as Markdown tables of MB/s per tool and
pattern set, each rate with its ratio to Hyperscan's scan-only rate on the same set. The
scan-only rates (seqmatch's from bench/scan_rate, Hyperscan's from hyperscan_count) time the
scan of the text in memory alone, one thread, the same way for both.

usage: table.py [CSV]          (default: results/exact.csv beside this file)

First table: rates by CPU time (user + system of the whole command; for Hyperscan also of the
scan alone), steady on a busy machine. Second table: rates by wall-clock time.
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "exact.csv")
rows = list(csv.DictReader(open(src, newline="")))
sets = []
for r in rows:
    if r["set"] not in sets:
        sets.append(r["set"])
label = {"k8_1000": "1000 × 8", "k8_8000": "8000 × 8", "k8_16000": "16000 × 8",
         "k20_10": "10 × 20", "k32_1000": "1000 × 32", "k300_3000": "3000 × 300"}


def get(tool, threads, s):
    for r in rows:
        if r["tool"] == tool and r["threads"] == threads and r["set"] == s:
            return r
    return None


def table(title, columns, base_col):
    print(f"**{title}**\n")
    print("| patterns × nt | " + " | ".join(c[0] for c in columns) + " | hits (all occurrences) |")
    print("|---|" + "---:|" * (len(columns) + 1))
    for s in sets:
        hs = get("hyperscan", "1", s)
        base = float(hs[base_col]) if hs and hs.get(base_col) else None
        cells = []
        for _, tool, threads, col in columns:
            r = get(tool, threads, s)
            if not r or not r.get(col):
                note = r["note"].split(";")[0] if r and r["note"] else ""
                cells.append(note or "–")
                continue
            v = float(r[col])
            cell = f"{v:.1f}" if v >= 10 else f"{v:.2f}"
            if base and not (tool == "hyperscan" and col == base_col):
                cell += f" ({v / base:.2f}×)"
            if r.get("valid", "").startswith("INVALID"):
                cell += " **INVALID**"
            cells.append(cell)
        hits = hs["count"] if hs else ""
        for t in ("1", "2"):
            sm = get("seqmatch", t, s)
            if sm and sm["count"] and hits and sm["count"] != hits:
                hits += f" **MISMATCH: seqmatch -t {t} {sm['count']}**"
        print(f"| {label.get(s, s)} | " + " | ".join(cells) + f" | {hits} |")
    print()


table("MB/s by CPU time (ratio to Hyperscan's scan)", [
    ("seqmatch scan only", "seqmatch-scan", "1", "scan_cpu_MBps"),
    ("seqmatch -t 1", "seqmatch", "1", "cpu_MBps"),
    ("Hyperscan scan only", "hyperscan", "1", "scan_cpu_MBps"),
    ("Hyperscan whole run", "hyperscan", "1", "cpu_MBps"),
    ("ripgrep -F ¹", "rg", "1", "cpu_MBps"),
    ("grep -F ¹", "grep", "1", "cpu_MBps"),
], "scan_cpu_MBps")
table("MB/s by wall-clock time (ratio to Hyperscan's scan)", [
    ("seqmatch scan only", "seqmatch-scan", "1", "scan_MBps"),
    ("seqmatch -t 1", "seqmatch", "1", "wall_MBps"),
    ("seqmatch -t 2", "seqmatch", "2", "wall_MBps"),
    ("Hyperscan scan only", "hyperscan", "1", "scan_MBps"),
    ("Hyperscan whole run", "hyperscan", "1", "wall_MBps"),
    ("ripgrep -F ¹", "rg", "1", "wall_MBps"),
    ("grep -F ¹", "grep", "1", "wall_MBps"),
], "scan_MBps")
print("¹ non-overlapping leftmost matches only: fewer hits than all occurrences; "
      "their counts are not comparable, their times are given for reference.")
