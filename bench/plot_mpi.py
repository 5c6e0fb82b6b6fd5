#!/usr/bin/env python3
"""Plot of MPI strong scaling (docs/scaling.md, docs/benchmarks.md).

usage: bench/plot_mpi.py [CSV] [PNG]
  CSV  bench/run-mpi.sh's medians (case, kind, ranks, gpus, bytes, median_s,
       GBps, efficiency, same); default bench/results/mpi-scaling-h200host.csv
  PNG  default bench/results/mpi-scaling.png

Left: wall seconds against CPU ranks (one thread each) per case, with the
fit t0 + W / R over R >= 2, the one process with every core (ranks "1p")
and the one-GPU rank as horizontal lines. Right: parallel efficiency
T(1) / (R T(R)) against ranks, with seed 002's two best points (nodes,
not ranks) for comparison.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "mpi-scaling-h200host.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "results", "mpi-scaling.png")

rows = list(csv.DictReader(open(src)))
cases = []
for r in rows:
    if r["case"] not in cases:
        cases.append(r["case"])


def fit(points):
    """Least squares of t = t0 + W / R; returns (t0, W)."""
    xs = [1.0 / r for r, _ in points]
    ts = [t for _, t in points]
    n = len(xs)
    mx, mt = sum(xs) / n, sum(ts) / n
    w = sum((x - mx) * (t - mt) for x, t in zip(xs, ts)) / sum((x - mx) ** 2 for x in xs)
    return mt - w * mx, w


fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.4))
colours = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
for i, cs in enumerate(cases):
    c = colours[i % len(colours)]
    strong = sorted(
        ((int(r["ranks"]), float(r["median_s"]), r["efficiency"]) for r in rows
         if r["case"] == cs and r["kind"] == "strong" and r["ranks"] != "1p"),
    )
    if not strong:
        continue
    ranks = [s[0] for s in strong]
    ax_t.plot(ranks, [s[1] for s in strong], "o-", color=c, label=f"{cs}: R ranks, 1 thread each")
    pts = [(r, t) for r, t, _ in strong if r >= 2]
    if len(pts) >= 2:
        t0, w = fit(pts)
        xs = [1 + k * 0.25 for k in range(int((max(ranks) - 1) / 0.25) + 1)]
        ax_t.plot(xs, [t0 + w / x for x in xs], ":", color=c, linewidth=1,
                  label=f"{cs}: fit {t0:.2f} s + {w:.2f} s / R (R \u2265 2)")
    for r in rows:
        if r["case"] != cs:
            continue
        if r["ranks"] == "1p":
            ax_t.axhline(float(r["median_s"]), color=c, linestyle="--", linewidth=1,
                         label=f"{cs}: 1 process, every core ({float(r['median_s']):.2f} s)")
        elif r["kind"] == "gpu" and r["gpus"] == "1":
            ax_t.axhline(float(r["median_s"]), color=c, linestyle="-.", linewidth=1,
                         label=f"{cs}: 1 rank, 1 GPU ({float(r['median_s']):.2f} s)")
    ax_e.plot(ranks, [100 * float(s[2]) for s in strong], "o-", color=c, label=cs)

# seed 002's Table 5, best points (nodes of a 10-node GPU cluster, 1 GiB of DNA):
# Aho-Corasick 4.1x on 9 nodes, Wu-Manber 8.1x on 10
for nodes, speedup, name, m in ((9, 4.1, "seed 002: Aho-Corasick, 9 nodes", "s"), (10, 8.1, "seed 002: Wu-Manber, 10 nodes", "^")):
    ax_e.plot([nodes], [100 * speedup / nodes], m, color="grey", label=f"{name} ({speedup}x)")

total = next((int(r["bytes"]) for r in rows if r["bytes"]), 0)
ax_t.set_xscale("log", base=2)
ax_t.set_xticks([1, 2, 4, 8, 16])
ax_t.set_xticklabels(["1", "2", "4", "8", "16"])
ax_t.set_xlabel("MPI ranks (CPU, one thread each)")
ax_t.set_ylabel("wall seconds, whole mpirun command")
ax_t.set_ylim(bottom=0)
ax_t.set_title(f"strong scaling, {total / 1e9:.2f} GB FASTA, --format count")
ax_t.legend(fontsize=7)
ax_t.grid(alpha=0.3)
ax_e.set_xscale("log", base=2)
ax_e.set_xticks([1, 2, 4, 8, 16])
ax_e.set_xticklabels(["1", "2", "4", "8", "16"])
ax_e.axhline(100, color="grey", linewidth=0.8)
ax_e.set_xlabel("MPI ranks")
ax_e.set_ylabel("parallel efficiency T(1) / (R T(R)), %")
ax_e.set_ylim(0, 115)
ax_e.set_title("efficiency against one rank")
ax_e.legend(fontsize=8)
ax_e.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print(dst)
