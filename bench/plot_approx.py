#!/usr/bin/env python3
"""Tables and plot of bench/results/approx.csv (written by run-approx.sh).

usage: plot_approx.py [CSV] [PNG]      plot (default results/approx.csv -> results/approx.png)
       plot_approx.py --table [CSV]    Markdown tables for docs/benchmarks.md

Plot: wall seconds (log scale) per case, seqmatch with 2 and 1 threads against each peer.
Tables: medians, the peers' ratio to seqmatch (peer seconds / seqmatch seconds: how many
times faster seqmatch is; ugrep and tre-agrep on the Bible against seqmatch --lines), GCUPS
and the checks. A time written ">N" is a peer run stopped
after N seconds: its ratio is a lower bound.
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))


def load(path):
    return list(csv.DictReader(open(path, newline="")))


def secs(r):
    w = r["wall_s"] if r else ""
    if not w:
        return None, False
    if w.startswith(">"):
        return float(w[1:]), True
    return float(w), False


def fmt_s(v, lower=False):
    if v is None:
        return "–"
    s = f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return ("> " + s) if lower else s


NAMES = {"primers1": "1 primer", "primers10": "10 primers", "primers100": "100 primers",
         "guides20": "20 guides + NGG", "len100": "10 × 100 nt", "len1000": "10 × 1000 nt",
         "m64": "64 × 64 nt", "lines": "1 primer, panel.fa as text lines",
         "bible_lord": "Bible: LORD", "bible_mercy": "Bible: for his mercy endureth for ever",
         "kmers31_reads": "reads: 1000 × 31-mers", "adapters_reads": "reads: 10 × 20 nt, + strand"}
PEERS = ("seqkit", "edlib", "ugrep", "tre-agrep", "bbduk", "cutadapt")
DIRECT = ("seqmatch-myers", "seqmatch-mismatch", "seqmatch-wavefront")


def label(r):
    c = r["case"]
    return NAMES.get(c, c)


def keyof(r):
    return (r["case"], r["mode"], r["k"])


def find(rows, case, tool, threads, mode, k):
    for r in rows:
        if (r["case"], r["tool"], r["threads"], r["mode"], r["k"]) == (case, tool, threads, mode, k):
            return r
    return None


def invalid(r):
    return bool(r) and r.get("valid", "").startswith("INVALID")


def table(rows):
    keys = []
    for r in rows:
        if keyof(r) not in keys:
            keys.append(keyof(r))
    peers = [p for p in PEERS if any(r["tool"] == p for r in rows)]
    has_direct = any(r["tool"] in DIRECT for r in rows)
    has_engine = any(r.get("engine") for r in rows)
    print("| case | mode | k | " + ("engine (auto) | " if has_engine else "")
          + "seqmatch -t 2 | seqmatch -t 1 | " + ("direct engine | " if has_direct else "")
          + "GCUPS -t 1 | hits | " + " | ".join(f"{p}: s (ratio) [count]" for p in peers) + " | checks |")
    print("|---|---|---:|" + ("---|" if has_engine else "") + "---:|---:|" + ("---:|" if has_direct else "")
          + "---:|---:|" + "---:|" * len(peers) + "---|")
    for case, mode, k in keys:
        s2 = find(rows, case, "seqmatch", "2", mode, k)
        s1 = find(rows, case, "seqmatch", "1", mode, k)
        t2, low2 = secs(s2)
        t1, low1 = secs(s1)
        hits = (s1 or s2 or {}).get("count", "")
        unit = (s1 or s2 or {}).get("unit", "")
        if unit and unit != "hits":
            hits = f"{hits} {unit}"
        g = (s1 or {}).get("gcups") or ""
        engine = ((s1 or s2 or {}).get("engine") or "").replace("auto: ", "")
        cells = []
        checks = []
        bad = False
        for r in (s2, s1):
            if r and r["check"]:
                checks.append(r["check"])
            bad |= invalid(r)
        direct = ""
        for r in rows:
            if keyof(r) == (case, mode, k) and r["tool"] in DIRECT:
                v, lower = secs(r)
                one = f"{fmt_s(v, lower)} ({r['tool'].split('-', 1)[1]}, -t {r['threads']}"
                one += f", {r['gcups']} GCUPS)" if r.get("gcups") else ")"
                direct += ("; " if direct else "") + one
                if r["check"]:
                    checks.append(f"{r['tool']}: {r['check']}")
                bad |= invalid(r)
        for p in peers:
            cand = [r for r in rows if keyof(r) == (case, mode, k) and r["tool"] == p]
            pr = next((r for r in cand if r["threads"] == "2"), cand[-1] if cand else None)
            if not pr:
                cells.append("")
                continue
            v, lower = secs(pr)
            base = t2 if pr["threads"] == "2" else t1
            sl = find(rows, case, "seqmatch-lines", "1", mode, k)
            if pr["unit"] == "matching lines" and sl:  # line counters against seqmatch --lines
                base = secs(sl)[0]
            cell = fmt_s(v, lower)
            if pr["threads"] not in ("", "1"):
                cell += f" -t {pr['threads']}"
            if v is not None and base:
                cell += f" ({'≥ ' if lower else ''}{v / base:.1f}×)"
            if pr["count"]:
                cell += f" [{pr['count']}]"
            if invalid(pr):
                cell += " **INVALID**"
                bad = True
            cells.append(cell)
            if pr["check"]:
                checks.append(f"{p}: {pr['check']}")
        chk = "; ".join(dict.fromkeys(checks)).replace("|", "/")
        if bad:
            chk = "**INVALID (tools disagree)**: " + chk
        print(f"| {label({'case': case})} | {mode} | {k} | " + (f"{engine} | " if has_engine else "")
              + f"{fmt_s(t2, low2)} | {fmt_s(t1, low1)} | " + (f"{direct} | " if has_direct else "")
              + f"{g} | {hits} | " + " | ".join(cells) + " | " + chk + " |")
    print()
    lines = [r for r in rows if r["tool"] == "seqmatch-lines"]
    if lines:
        print("Bible, matching lines (`--lines`): "
              + "; ".join(f"{label(r)} k={r['k']}: {r['count']} lines, {fmt_s(secs(r)[0])} s" for r in lines))
        print()


def plot(rows, dst):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = []
    for r in rows:
        if r["tool"] in ("seqmatch",) + DIRECT + PEERS and keyof(r) not in keys:
            keys.append(keyof(r))
    series = [("seqmatch -t 2", "seqmatch", "2"), ("seqmatch -t 1", "seqmatch", "1"),
              ("seqmatch --engine myers", "seqmatch-myers", None),
              ("seqmatch --engine mismatch", "seqmatch-mismatch", None),
              ("seqkit locate (-j 2)", "seqkit", None), ("edlib", "edlib", None),
              ("ugrep -Z", "ugrep", None), ("tre-agrep", "tre-agrep", None),
              ("BBDuk (threads=2)", "bbduk", "2"), ("cutadapt", "cutadapt", None)]
    present = [s for s in series if any(r["tool"] == s[1] for r in rows)]
    fig, ax = plt.subplots(figsize=(max(10, 0.42 * len(keys) + 3), 5.2))
    width = 0.8 / max(len(present), 1)
    for i, (name, tool, threads) in enumerate(present):
        xs, ys, hatch = [], [], []
        for j, key in enumerate(keys):
            for r in rows:
                if keyof(r) == key and r["tool"] == tool and (threads is None or r["threads"] == threads):
                    v, lower = secs(r)
                    if v:
                        xs.append(j - 0.4 + width * (i + 0.5))
                        ys.append(v)
                        hatch.append(lower)
                    break
        bars = ax.bar(xs, ys, width, label=name)
        for b, low in zip(bars, hatch):
            if low:
                b.set_hatch("//")
    ax.set_xticks(range(len(keys)))
    short = {"primers1": "1p", "primers10": "10p", "primers100": "100p", "guides20": "guides",
             "len100": "100nt", "len1000": "1000nt", "m64": "64×64", "lines": "lines",
             "bible_lord": "LORD", "bible_mercy": "mercy", "kmers31_reads": "reads 31-mers",
             "adapters_reads": "reads adapters"}
    ax.set_xticklabels([f"{short.get(c, c)} {'m' if m == 'mismatches' else 'k'}{k}" for c, m, k in keys],
                       rotation=60, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("wall seconds, median (log scale; lower is better)")
    ax.set_title("Approximate search: bacterial panel (both strands), reads and the King James Bible; "
                 "hatched = stopped at the time limit", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print(dst)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--table":
        src = args[1] if len(args) > 1 else os.path.join(here, "results", "approx.csv")
        table(load(src))
        return
    src = args[0] if args else os.path.join(here, "results", "approx.csv")
    dst = args[1] if len(args) > 1 else os.path.join(os.path.dirname(src), "approx.png")
    plot(load(src), dst)


if __name__ == "__main__":
    main()
