#!/usr/bin/env python3
"""Fits the approximate planner's cost constants to bench/run-planner.sh fit rows.

usage: bench/fit_planner.py [--wall] [--terms TERMS.csv] planner-fit.csv [more.csv ...]

For each SIMD level (native = AVX-512 with VBMI on the build machine, avx2, sse = no text lanes)
and each engine, the scan's CPU time per byte (wall time with --wall) is modelled as
sum(c[i] * t[i]) over the model's terms t (src/engines/approx/approx_cost.c); the constants c >= 0
minimise the squared log ratio of estimate to measurement over that engine's rows, starting from
the least squares of the relative error (non-negative, every subset of the terms tried: there are
at most eight). Prints the C table for approx_cost.c, the
constants and each row's estimate against its measurement (for docs/architecture.md).
--terms: the terms of each (level, case, engine) from a FIT_TERMS_ONLY run of bench/run-planner.sh
(after the model's terms changed, without measuring again).
No third-party modules: the systems are at most 8 x 8.
"""
import csv
import itertools
import math
import sys

ENGINES = ["mismatch", "myers", "wavefront", "pigeonhole"]
LEVELS = {"sse": 0, "avx2": 1, "native": 2}
TERMS = 8


def solve(a, b):
    """Solves the square system a x = b by Gaussian elimination; None if singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-12:
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    return [m[i][n] / m[i][i] for i in range(n)]


def log_error(c, rows):
    err = 0.0
    for r in rows:
        est = sum(c[i] * r["t"][i] for i in range(TERMS))
        err += math.log(max(est, 1e-9) / r["y"]) ** 2
    return err


def refine(c, rows, used):
    """From the least-squares start, the constants minimising the squared log
    ratio of estimate to measurement (symmetric: twice too high costs what
    twice too low does), one constant at a time by golden-section search,
    sweeps until nothing moves."""
    c = c[:]
    for _ in range(60):
        before = log_error(c, rows)
        for i in used:
            lo, hi = 0.0, max(4 * c[i], 1e-3) if c[i] > 0 else 100.0
            g = (math.sqrt(5) - 1) / 2
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)

            def at(v):
                d = c[:]
                d[i] = v
                return log_error(d, rows)
            fa, fb = at(a), at(b)
            for _ in range(60):
                if fa < fb:
                    hi, b, fb = b, a, fa
                    a = hi - g * (hi - lo)
                    fa = at(a)
                else:
                    lo, a, fa = a, b, fb
                    b = lo + g * (hi - lo)
                    fb = at(b)
            best = (lo + hi) / 2
            if at(best) < at(c[i]):
                c[i] = best
        if before - log_error(c, rows) < 1e-9:
            break
    return c


def fit(rows, used):
    """Non-negative weighted least squares of y on the terms in used (indices)."""
    best, best_err = None, float("inf")
    for size in range(1, len(used) + 1):
        for subset in itertools.combinations(used, size):
            # normal equations of sum(((c . t) - y) / y)^2
            a = [[sum(r["t"][i] * r["t"][j] / r["y"] ** 2 for r in rows) for j in subset] for i in subset]
            b = [sum(r["t"][i] / r["y"] for r in rows) for i in subset]
            x = solve(a, b)
            if x is None or min(x) < 0:
                continue
            c = [0.0] * TERMS
            for i, v in zip(subset, x):
                c[i] = v
            err = sum(((sum(c[i] * r["t"][i] for i in range(TERMS)) - r["y"]) / r["y"]) ** 2 for r in rows)
            if err < best_err:
                best, best_err = c, err
    return best


def main(argv):
    wall = "--wall" in argv
    args = [a for a in argv[1:] if a != "--wall"]
    terms_of = None
    if "--terms" in args:
        i = args.index("--terms")
        terms_of = {}
        with open(args[i + 1]) as f:
            for r in csv.DictReader(f):
                terms_of[(r["level"], r["case"], r["engine"])] = [float(r["t%d" % j]) for j in range(TERMS)]
        del args[i:i + 2]
    paths = args
    if not paths:
        print(__doc__)
        return 2
    data = {}
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                y = float(r["ns_per_byte"] if wall else r["cpu_ns_per_byte"])
                if y <= 0 or r["level"] not in LEVELS:
                    continue
                t = [float(r.get("t%d" % i) or 0) for i in range(TERMS)]
                if terms_of is not None:
                    t = terms_of.get((r["level"], r["case"], r["engine"]))
                    if t is None:
                        continue
                data.setdefault((LEVELS[r["level"]], r["engine"]), []).append(
                    {"case": r["case"], "t": t, "y": y, "level": r["level"]})
    table = {}
    report = []
    for (level, engine), rows in sorted(data.items()):
        used = [i for i in range(TERMS) if any(r["t"][i] for r in rows)]
        c = refine(fit(rows, used) or [0.0] * TERMS, rows, used)
        table[(level, engine)] = c
        for r in rows:
            est = sum(c[i] * r["t"][i] for i in range(TERMS))
            report.append((r["level"], engine, r["case"], r["y"], est))
    print("/* fitted by bench/fit_planner.py (%s time) */" % ("wall" if wall else "CPU"))
    print("static const double cost_constants[3][COST_ENGINES][COST_TERMS] = {")
    for level in range(3):
        print("    {")
        for engine in ENGINES:
            c = table.get((level, engine))
            if c is None and level == 0:
                c = table.get((1, engine))  # no measurement: the AVX2 level's
            c = c or [0.0] * TERMS
            print("        {%s}, /* %s */" % (", ".join("%.4g" % v for v in c), engine))
        print("    },")
    print("};")
    print()
    print("| level | engine | case | measured ns/byte | estimate | ratio |")
    print("|---|---|---|---|---|---|")
    worst = 0
    for level, engine, case, y, est in report:
        ratio = est / y
        worst = max(worst, abs(ratio - 1))
        print("| %s | %s | %s | %.3g | %.3g | %.2f |" % (level, engine, case, y, est, ratio))
    print()
    print("largest relative error: %.0f %%" % (100 * worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
