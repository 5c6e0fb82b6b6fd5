"""docs/benchmarks.md is one page of today's figures, with the dated history in
bench/results/history.md: every citation of a section of either ("docs/benchmarks.md,
"The feed"") in the README, docs/, src/ and bench/ names a heading that exists there, every
plot either shows exists, and the page keeps the blocks bench/run rewrites.
Run as: python3 benchmarks.py SOURCE_DIR"""
import glob
import os
import re
import sys

src = sys.argv[1]
failures = []
pages = {"docs/benchmarks.md": None, "bench/results/history.md": None}
for page in pages:
    text = open(os.path.join(src, page), encoding="utf-8").read()
    pages[page] = [re.sub(r"\s+", " ", h).strip() for h in re.findall(r"^#{2,3} (.*)$", text, re.M)]
    for alt, target in re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", text):
        if not os.path.exists(os.path.normpath(os.path.join(src, os.path.dirname(page), target))):
            failures.append(f"{page}: plot {target} missing")

files = [os.path.join(src, "README.md")] + glob.glob(os.path.join(src, "docs", "*.md"))
for pattern in ("src/**/*.[ch]", "bench/*.sh", "bench/*.py", "bench/*.c", "bench/run"):
    files += glob.glob(os.path.join(src, pattern), recursive=True)
cited = 0
for f in files:
    text = re.sub(r"\s*\n\s*(\*\s*)?", " ", open(f, encoding="utf-8", errors="replace").read())
    for page, section in re.findall(r"(docs/benchmarks\.md|bench/results/history\.md)[ ,(]{1,4}\"([^\"]+)\"", text):
        if True:
            cited += 1
            if not any(h == section or h.startswith(section + " (") or h.startswith(section) for h in pages[page]):
                failures.append(f"{os.path.relpath(f, src)}: {page}, \"{section}\": no such section")

page = open(os.path.join(src, "docs/benchmarks.md"), encoding="utf-8").read()
for name in ("run", "exact", "words", "build", "scaling", "sweep", "stream", "approx", "dfa"):
    if f"<!-- bench/run: begin {name} -->" not in page or f"<!-- bench/run: end {name} -->" not in page:
        failures.append(f"docs/benchmarks.md: no block {name} for bench/run")
lines = page.count("\n")
if lines > 700:
    failures.append(f"docs/benchmarks.md: {lines} lines; the dated record belongs in bench/results/history.md")
if "## At a glance" not in page:
    failures.append("docs/benchmarks.md: no summary beside the peers")
for f in failures:
    print("FAIL:", f)
print(f"{cited} citations checked, {len(failures)} failed")
sys.exit(1 if failures else 0)
