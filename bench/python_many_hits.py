"""Many hits from Python: every distinct word of 4 letters or more of the
King James Bible (13,047 words, case kept) over the Bible itself (622,303
hits, overlapping ones included), through seqmatch, pyahocorasick and
python-hyperscan in the same run.

    python3 -m pip install pyahocorasick hyperscan numpy   # the peers (PyPI)
    PYTHONPATH=SITE python3 bench/python_many_hits.py DATA/kjv.txt [ROUNDS]

SITE is where `pip install --target SITE .` put the package. Each way is
timed from the text in memory to every hit collected in Python (building
the automata is not timed), ROUNDS times in turn (A B C ... A B C ...);
the median and the range are printed, with the hit count of each (they
must agree). A peer that is not installed is left out and said so.

  seqmatch arrays    db.scan(text, arrays=True): HitColumns, numpy columns
  seqmatch arrays/-  the same with array.array columns (as without numpy)
  seqmatch list      db.scan(text): a list of Hit (one object per hit)
  seqmatch search    db.search(path, arrays=True, threads=1): from the file
  pyahocorasick      list(automaton.iter(text)): (end, value) tuples
  hyperscan          db.scan(text, callback): the callback appends (id, end)
"""
import re
import statistics
import sys
import time

import seqmatch

PATH = sys.argv[1] if len(sys.argv) > 1 else "kjv.txt"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

with open(PATH, "rb") as f:
    TEXT = f.read()
WORDS = sorted({w for w in re.findall(rb"[A-Za-z]+", TEXT) if len(w) >= 4})
print(f"{PATH}: {len(TEXT)} bytes, {len(WORDS)} words of 4+ letters; {ROUNDS} rounds")

ways = []

db = seqmatch.compile(WORDS, alphabet="text")


def seqmatch_arrays():
    return db.scan(TEXT, arrays=True).rows


def seqmatch_arrays_plain():
    saved, seqmatch._numpy = seqmatch._numpy, None
    try:
        return db.scan(TEXT, arrays=True).rows
    finally:
        seqmatch._numpy = saved


def seqmatch_list():
    return len(db.scan(TEXT))


def seqmatch_search():
    return db.search(PATH, arrays=True, threads=1).rows


ways += [("seqmatch arrays", seqmatch_arrays)]
if seqmatch._numpy is not None:
    ways += [("seqmatch arrays/-", seqmatch_arrays_plain)]
ways += [("seqmatch list", seqmatch_list), ("seqmatch search", seqmatch_search)]

try:
    import ahocorasick

    automaton = ahocorasick.Automaton()
    text_str = TEXT.decode("latin-1")
    for i, w in enumerate(WORDS):
        automaton.add_word(w.decode("latin-1"), i)
    automaton.make_automaton()

    def pyahocorasick_list():
        return len(list(automaton.iter(text_str)))

    ways.append(("pyahocorasick", pyahocorasick_list))
except ImportError:
    print("pyahocorasick: not installed (pip install pyahocorasick)")

try:
    import hyperscan

    hs_db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    hs_db.compile(expressions=WORDS, ids=list(range(len(WORDS))), elements=len(WORDS), flags=0, literal=True)

    def hyperscan_list():
        found = []
        append = found.append

        def on_match(pattern, start, end, flags, context):
            append((pattern, end))

        hs_db.scan(TEXT, match_event_handler=on_match)
        return len(found)

    ways.append(("hyperscan", hyperscan_list))
except ImportError:
    print("hyperscan: not installed (pip install hyperscan)")

times = {name: [] for name, _ in ways}
hits = {}
for _ in range(ROUNDS):
    for name, way in ways:
        t0 = time.perf_counter()
        n = way()
        times[name].append(time.perf_counter() - t0)
        hits[name] = n

for name, _ in ways:
    t = times[name]
    print(f"{name:18s} {statistics.median(t):.3f} s (min {min(t):.3f}, max {max(t):.3f})  {hits[name]} hits")
if len(set(hits.values())) != 1:
    print(f"hit counts differ: {hits}")
    sys.exit(1)
