#!/usr/bin/env python3
"""Plot every exact engine on the GPU (bench/run-gpu.sh's CSV) as resident GB/s per set.

usage: plot_gpu_engines.py [CSV [PNG]]
  CSV: bench/results/gpu-h200-engines.csv (default); PNG: bench/results/gpu-engines.png.
For each set: the GPU plan's choice (row engine "gpu"), the automaton forced (row engine
"automaton"; absent for 10^6 31-mers) and seed 002's plain kernel (plain_best_GBps of the
"gpu" row, its best chunk size; absent for 10^6 31-mers), text resident,
on a log scale, with the device's measured read rate (hbm_read_GBps, median over the rows)
as a line. Needs matplotlib.
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {
    "k20_10": "10 × 20-mers",
    "k32_1000": "1000 ×\n32-mers",
    "k8_100": "100 × 8-mers",
    "k8_300": "300 × 8-mers",
    "k8_1000": "1000 × 8-mers",
    "k8_8000": "8000 ×\n8-mers",
    "k8_16000": "16000 ×\n8-mers",
    "k300_3000": "3000 ×\n300-mers",
    "k31_1000000": "10^6 ×\n31-mers",
    "k8_1000_both": "1000 × 8-mers,\nboth strands",
    "kjv_w10": "Bible,\n10 words",
    "kjv_w1000": "Bible,\n1000 words",
}


def number(text):
    return float(text) if text not in ("", None) else None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/gpu-h200-engines.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "bench/results/gpu-engines.png"
    rows = list(csv.DictReader(open(src, newline="")))
    cases = []
    for r in rows:
        if r["case"] not in cases:
            cases.append(r["case"])

    def pick(case, engine):
        return next((r for r in rows if r["case"] == case and r["engine"] == engine), None)

    plan, auto, plain, plan_engine = [], [], [], []
    for c in cases:
        g, a = pick(c, "gpu"), pick(c, "automaton")
        plan.append(number(g["resident_GBps"]) if g else None)
        plan_engine.append(g["sections"] if g else "")
        auto.append(number(a["resident_GBps"]) if a else None)  # not run for 10^6 31-mers
        plain.append(number(g["plain_best_GBps"]) if g else None)
    hbm = statistics.median(float(r["hbm_read_GBps"]) for r in rows if r["hbm_read_GBps"])
    device = "NVIDIA H200"

    fig, ax = plt.subplots(figsize=(13, 5.5))
    width = 0.27
    series = [("GPU plan", plan, "tab:blue"), ("automaton", auto, "tab:orange"),
              ("plain kernel (seed 002)", plain, "tab:grey")]
    for i, (name, values, color) in enumerate(series):
        xs = [j + (i - 1) * width for j, v in enumerate(values) if v]
        ys = [v for v in values if v]
        ax.bar(xs, ys, width, label=name, color=color)
    for j, (v, e) in enumerate(zip(plan, plan_engine)):
        if v:
            ax.annotate(f"{v:.0f}\n{e}", (j - width, v), ha="center", va="bottom", fontsize=7)
    ax.axhline(hbm, color="black", linestyle="--", linewidth=1)
    ax.annotate(f"device memory read, {hbm:.0f} GB/s", (len(cases) - 0.5, hbm), ha="right", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(10, hbm * 2)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([LABELS.get(c, c) for c in cases], fontsize=8)
    ax.set_ylabel("GB/s, text resident on the GPU (log scale)")
    ax.set_title(f"Every exact engine on the GPU: one {device}, 1.1 GB of DNA / 440 MB of text resident")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
