"""The Python package against the seqmatch command on the same inputs: the
same hits (scan, search), counts, circular hits and CIGARs; databases saved
by one and read by the other; errors; the GIL released while scanning.
test_api.py has the rest of the API (targets, scan-time options, columns,
filter and demux, argument errors).

The command is $SEQMATCH_CLI (tests/python/run.sh sets it), else
build/seqmatch in the repository.
"""
import gzip
import os
import pickle
import random
import subprocess
import sys
import threading
import time

import pytest

import seqmatch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLI = os.environ.get("SEQMATCH_CLI", os.path.join(ROOT, "build", "seqmatch"))
EXCERPT = os.path.join(ROOT, "examples", "ecoli-excerpt.fa")
PATTERNS = os.path.join(ROOT, "examples", "patterns.fa")


def cli(*args, status=(0, 1)):
    """Runs the command; its standard output."""
    r = subprocess.run([CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode in status, r.stderr.decode()
    return r.stdout.decode()


def cli_rows(*args):
    """The command's TSV rows (no header) as tuples, typed as Hit fields."""
    rows = []
    for line in cli("search", "--no-header", *args).splitlines():
        f = line.split("\t")
        row = (f[0], f[1], f[2], int(f[3]), int(f[4]), int(f[5]), f[6])
        rows.append(row + tuple(f[7:]))
    return rows


def hit_row(h, record=None, cigar=False):
    row = (h.record if record is None else record, h.pattern, h.strand, h.start, h.end, h.errors, h.matched)
    return row + ((h.cigar,) if cigar else ())


def random_dna(rng, n, iupac=0.0):
    return "".join(rng.choice("RYSWKMBDHVN") if rng.random() < iupac else rng.choice("ACGT") for _ in range(n))


def mutate(rng, s, k):
    s = list(s)
    for _ in range(k):
        i = rng.randrange(len(s))
        op = rng.randrange(3)
        if op == 0:
            s[i] = rng.choice("ACGT")
        elif op == 1 and len(s) > 1:
            del s[i]
        else:
            s.insert(i, rng.choice("ACGT"))
    return "".join(s)


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    """A few random records with planted, mutated copies of the patterns."""
    rng = random.Random(20261126)
    patterns = [(f"p{i}", random_dna(rng, rng.randrange(12, 26), iupac=0.05)) for i in range(12)]
    concrete = {name: "".join(c if c in "ACGT" else "A" for c in seq) for name, seq in patterns}
    records = []
    for r in range(5):
        seq = list(random_dna(rng, 3000 + 2000 * r))
        for _ in range(40):
            name, p = rng.choice(list(concrete.items()))
            p = mutate(rng, p, rng.randrange(3))
            if rng.random() < 0.5:
                p = p[::-1].translate(str.maketrans("ACGT", "TGCA"))
            at = rng.randrange(len(seq) - len(p))
            seq[at:at + len(p)] = p
        records.append((f"rec{r} description", "".join(seq)))
    # a copy over the end of the last record, for --circular
    name, p = "p0", concrete["p0"]
    last = records[-1][1]
    records[-1] = (records[-1][0], p[7:] + last[len(p) - 7:-7] + p[:7])
    d = tmp_path_factory.mktemp("genome")
    fasta = d / "genome.fa"
    fasta.write_text("".join(f">{n}\n" + "\n".join(s[i:i + 70] for i in range(0, len(s), 70)) + "\n"
                             for n, s in records))
    with gzip.open(d / "genome.fa.gz", "wt") as f:
        f.write(fasta.read_text())
    pats = d / "patterns.fa"
    pats.write_text("".join(f">{n}\n{s}\n" for n, s in patterns))
    return {"fasta": fasta, "gz": d / "genome.fa.gz", "patterns": pats, "pattern_list": patterns,
            "records": [(n.split()[0], s) for n, s in records]}


CASES = [
    ({}, []),
    ({"mismatches": 2}, ["-m", "2"]),
    ({"edits": 2}, ["-k", "2"]),
    ({"edits": 3, "report": "ends"}, ["-k", "3", "--report", "ends"]),
    ({"mismatches": 1, "strands": "+"}, ["-m", "1", "--strand", "+"]),
    ({"mismatches": 2, "pam": "NGG"}, ["-m", "2", "--pam", "NGG"]),
    ({"edits": 1, "text_iupac": True}, ["-k", "1", "--text-iupac"]),
]


@pytest.mark.parametrize("options,flags", CASES, ids=[" ".join(f) or "exact" for _, f in CASES])
def test_search_and_scan_equal_the_command(genome, options, flags):
    db = seqmatch.compile(genome["pattern_list"], **options)
    want = cli_rows("-p", genome["patterns"], *flags, genome["fasta"])
    assert len(want) > 5
    got = [hit_row(h) for h in db.search(genome["fasta"], threads=2)]
    assert got == want
    # the gzipped copy, one thread
    assert [hit_row(h) for h in db.search(str(genome["gz"]), threads=1)] == want
    # record by record
    scanned = [hit_row(h, record=name) for name, seq in genome["records"] for h in db.scan(seq)]
    assert scanned == want


@pytest.mark.parametrize("options,flags", CASES[:4], ids=[" ".join(f) or "exact" for _, f in CASES[:4]])
def test_count_equals_the_command(genome, options, flags):
    db = seqmatch.compile(genome["pattern_list"], **options)
    want = {}
    for line in cli("search", "--format", "count", "-p", genome["patterns"], *flags, genome["fasta"]).splitlines():
        name, n = line.split("\t")
        if name != "total":
            want[name] = int(n)
    assert db.count(genome["fasta"]) == want
    assert list(db.count(genome["fasta"], threads=1)) == [n for n, _ in genome["pattern_list"]]


@pytest.mark.parametrize("options,flags", CASES[:3], ids=[" ".join(f) or "exact" for _, f in CASES[:3]])
def test_circular_and_cigar_equal_the_command(genome, options, flags):
    db = seqmatch.compile(genome["pattern_list"], **options)
    want = cli_rows("-p", genome["patterns"], "--circular", "--cigar", *flags, genome["fasta"])
    lengths = dict(genome["records"])
    assert any(r[4] > len(lengths[r[0]]) for r in want), "no hit over a record's end"
    got = [hit_row(h, cigar=True) for h in db.search(genome["fasta"], circular=True, cigar=True)]
    assert got == want
    scanned = [hit_row(h, record=name, cigar=True)
               for name, seq in genome["records"] for h in db.scan(seq, circular=True, cigar=True)]
    assert scanned == want
    assert sum(db.count(genome["fasta"], circular=True).values()) == len(want)


def test_circular_record_shorter_than_a_hit():
    # the record is read round as many turns as a hit needs (MISSION.md)
    def spans(pattern, record):
        db = seqmatch.compile([pattern], strands="+")
        return [(h.start, h.end) for h in db.scan(record, circular=True)]
    assert spans("CAC", "AC") == [(1, 4)]
    assert spans("ACA", "AC") == [(0, 3)]
    assert spans("TT", "T") == [(0, 2)]
    assert spans("AAAAA", "AAA") == [(0, 5), (1, 6), (2, 7)]


@pytest.mark.parametrize("options,flags", CASES[:2], ids=[" ".join(f) or "exact" for _, f in CASES[:2]])
def test_min_overlap_and_limits_equal_the_command(genome, options, flags):
    db = seqmatch.compile(genome["pattern_list"], **options)
    ends = ["--min-overlap", "4", "--max-hits-per-pattern", "2", "--fewest-errors"]
    want = cli_rows("-p", genome["patterns"], *ends, *flags, genome["fasta"])
    kw = dict(min_overlap=4, max_hits_per_pattern=2, fewest_errors=True)
    assert [hit_row(h) for h in db.search(genome["fasta"], threads=2, **kw)] == want
    assert sum(db.count(genome["fasta"], **kw).values()) == len(want)


def test_min_overlap_adapter_at_read_ends(tmp_path):
    # a read that ends in the adapter's first 5 bases, one that starts with
    # the last 5 of its reverse complement, and one shorter than it, inside it
    db = seqmatch.compile([("TruSeq", "AGATCGGAAGAGC")])
    reads = [("r1", "TTTTTTTTTTAGATC"), ("r2", "GATCTTTTTTTTTTT"), ("r3", "GGAAG")]
    got = [(h.record, h.strand, h.start, h.end) for h in db.search(reads, min_overlap=3)]
    assert got == [("r1", "+", 10, 15), ("r2", "-", 0, 5), ("r3", "+", 0, 5)]
    assert list(db.search(reads)) == []
    assert [r[0] for r in db.filter(reads, min_overlap=5, strand="+")] == ["r1", "r3"]
    with pytest.raises(ValueError, match="circular"):
        list(db.search(reads, min_overlap=3, circular=True))
    with pytest.raises(ValueError, match="max_hits_per_record=0"):
        list(db.search(reads, max_hits_per_record=0))


def test_one_pattern_in_text_lanes_equals_the_definition():
    """One pattern over long sequences: the scan cuts them into SIMD lanes
    (both strands, windows across every lane border), hits as the definition
    gives them (k mismatches, counted by brute force here)."""
    rng = random.Random(33)
    pattern = random_dna(rng, 20)
    rc = pattern[::-1].translate(str.maketrans("ACGT", "TGCA"))
    db = seqmatch.compile([pattern], mismatches=2)
    for n in (5000, 20000, 65537):
        seq = list(random_dna(rng, n))
        for _ in range(n // 200):
            p = list(rng.choice((pattern, rc)))
            for _ in range(rng.randrange(4)):
                p[rng.randrange(20)] = rng.choice("ACGT")
            at = rng.randrange(n - 20)
            seq[at:at + 20] = p
        seq = "".join(seq)
        want = set()
        for strand, key in (("+", pattern), ("-", rc)):
            for i in range(n - 19):
                mm = sum(a != b for a, b in zip(key, seq[i:i + 20]))
                if mm <= 2:
                    want.add((i, i + 20, strand, mm))
        got = {(h.start, h.end, h.strand, h.errors) for h in db.scan(seq)}
        assert got == want, n


def test_bundled_example():
    db = seqmatch.compile([("EcoRI", "GAATTC"), ("BamHI", "GGATCC"), ("HincII", "GTYRAC")])
    want = cli_rows("-e", "GAATTC", "-e", "GGATCC", "-e", "GTYRAC", EXCERPT)
    got = [hit_row(h) for h in db.search(EXCERPT)]
    names = {"GAATTC": "EcoRI", "GGATCC": "BamHI", "GTYRAC": "HincII"}
    assert got == [(r[0], names[r[1]]) + r[2:] for r in want]
    assert db.count(EXCERPT) == {"EcoRI": 10, "BamHI": 28, "HincII": 144}


def test_text_alphabet(tmp_path):
    log = tmp_path / "log.txt"
    log.write_bytes(b"Connection refused\nconnection REFUSED again\ntimeout\n")
    db = seqmatch.compile(["refused", "time"], alphabet="text", ignore_case=True)
    want = cli_rows("--alphabet", "text", "-i", "-e", "refused", "-e", "time", log)
    assert [hit_row(h) for h in db.search(log)] == want
    assert [(h.start, h.matched) for h in db.scan(b"a REFUSED b")] == [(2, "REFUSED")]
    assert db.info["alphabet"] == "text" and db.info["strands"] == "+"


def test_hits_and_sequence_types():
    db = seqmatch.compile(["ACGTTGCA"], edits=1, strands="+")
    for seq in ("GGACGTATGCAGG", b"GGACGTATGCAGG", bytearray(b"GGACGTATGCAGG"), memoryview(b"GGACGTATGCAGG")):
        (h,) = db.scan(seq, cigar=True)
        assert (h.pattern, h.strand, h.start, h.end, h.errors, h.matched, h.record, h.index, h.cigar) == \
            ("ACGTTGCA", "+", 2, 11, 1, "ACGTATGCA", None, 0, "4=1D4=")
    assert tuple(h) == ("ACGTTGCA", "+", 2, 11, 1, "ACGTATGCA", None, None, 0, "4=1D4=")
    assert db.scan("")[:] == []
    assert db.scan("acgttgca")[0].matched == "acgttgca"  # case as in the input
    with pytest.raises(TypeError):
        db.scan(12)


def test_save_load_and_the_command(genome, tmp_path):
    db = seqmatch.compile(genome["pattern_list"], mismatches=1)
    path = tmp_path / "p.smdb"
    db.save(path)
    assert cli_rows("-d", path, genome["fasta"]) == cli_rows("-p", genome["patterns"], "-m", "1", genome["fasta"])
    cli("compile", "-p", genome["patterns"], "-k", "2", "-o", tmp_path / "k2.smdb", status=(0,))
    loaded = seqmatch.load(tmp_path / "k2.smdb")
    assert loaded.info["match"] == "edits" and loaded.info["max_errors"] == 2
    assert [hit_row(h) for h in loaded.search(genome["fasta"])] == cli_rows("-d", tmp_path / "k2.smdb",
                                                                            genome["fasta"])
    again = pickle.loads(pickle.dumps(loaded))
    assert again.patterns == loaded.patterns and again.sequences == loaded.sequences
    assert seqmatch.from_bytes(loaded.to_bytes()).to_bytes() == loaded.to_bytes()
    assert len(loaded) == len(genome["pattern_list"])


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="not a DNA or IUPAC symbol"):
        seqmatch.compile(["ACGT", "ACXT"])
    with pytest.raises(ValueError, match="every window would be a hit"):
        seqmatch.compile(["GAATTC"], mismatches=6)
    with pytest.raises(ValueError, match="every position would be a hit"):
        seqmatch.compile(["GAATTC", "GA"], edits=2)
    with pytest.raises(ValueError, match="cannot be combined"):
        seqmatch.compile(["GAATTC"], mismatches=1, edits=1)
    with pytest.raises(ValueError, match="alphabet=.protein. is not one of"):
        seqmatch.compile(["GAATTC"], alphabet="protein")
    with pytest.raises(ValueError, match="no patterns"):
        seqmatch.compile([])
    with pytest.raises(ValueError):
        seqmatch.compile([""])
    db = seqmatch.compile(["GAATTC"])
    with pytest.raises(OSError):
        list(db.search(tmp_path / "missing.fa"))
    # before any target is read
    with pytest.raises(FileNotFoundError, match="missing.fa"):
        db.search([EXCERPT, tmp_path / "missing.fa"])
    with pytest.raises(IsADirectoryError):
        db.count(tmp_path)
    bad = tmp_path / "bad.fa"
    bad.write_bytes(b">a\nACGT\x01ACGT\n")
    with pytest.raises(ValueError, match="bad.fa: line 2, column 5 .record 'a'.: unexpected byte 0x01"):
        list(db.search(bad))
    with pytest.raises(ValueError, match="bad.fa"):
        db.count(bad)
    with pytest.raises(ValueError):
        seqmatch.from_bytes(b"not a database")
    notdb = tmp_path / "x.smdb"
    notdb.write_bytes(b"SEQMATCH" + b"\0" * 100)
    with pytest.raises(ValueError, match="x.smdb"):
        seqmatch.load(notdb)


def test_search_is_lazy_and_reads_records_in_order(tmp_path):
    path = tmp_path / "many.fa"
    path.write_text("".join(f">r{i}\nTTGAATTCTT\n" for i in range(20000)))
    db = seqmatch.compile(["GAATTC"], strands="+")
    it = db.search(path, threads=2)
    first = next(it)
    assert (first.record, first.start) == ("r0", 2)
    assert [h.record for h in it] == [f"r{i}" for i in range(1, 20000)]


def test_threads_share_a_database():
    rng = random.Random(7)
    seqs = [random_dna(rng, 20000) for _ in range(8)]
    db = seqmatch.compile([random_dna(rng, 10) for _ in range(50)] + ["ACGTA"], mismatches=1)
    want = [[hit_row(h) for h in db.scan(s)] for s in seqs]
    got = [None] * len(seqs)

    def work(i):
        for _ in range(3):
            got[i] = [hit_row(h) for h in db.scan(seqs[i])]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(seqs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == want


def test_scan_releases_the_gil():
    """Another Python thread runs while a long scan is in C. With a switch
    interval of 1 ms, a scan holding the GIL would let the loop below turn
    for a millisecond or two before it starts, then not at all until it
    returns; with the GIL released the loop turns through the whole scan
    (even on a loaded machine, far more than 25 ms worth of turns)."""
    rng = random.Random(3)
    text = random_dna(rng, 100000) * 60
    db = seqmatch.compile([random_dna(rng, 16) for _ in range(100)], edits=2)
    span = [0.0]

    def spin(seconds):
        turns, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            if len(span) == 1:
                turns += 1
        return turns

    rate = spin(0.05) / 0.05
    span.clear()

    def scanner():
        span.append(time.perf_counter())
        db.scan(text)
        span.append(time.perf_counter())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        t = threading.Thread(target=scanner)
        turns = 0
        t.start()
        while t.is_alive():
            time.perf_counter()
            if len(span) == 1:
                turns += 1
        t.join()
    finally:
        sys.setswitchinterval(interval)
    seconds = span[1] - span[0]
    assert seconds > 0.1, f"the scan took {seconds:.3f} s, too short to tell"
    assert turns > 0.025 * rate, f"{turns} turns in {seconds:.2f} s of scanning (rate {rate:.0f}/s)"


GUIDE_CASES = [
    ({"mismatches": 2, "pam": "NGG", "dna_bulges": 1, "rna_bulges": 1},
     ["-m", "2", "--pam", "NGG", "--dna-bulges", "1", "--rna-bulges", "1"]),
    ({"mismatches": 1, "pam5": "TTN", "rna_bulges": 2}, ["-m", "1", "--pam5", "TTN", "--rna-bulges", "2"]),
    ({"mismatches": 0, "pam": "NRG", "dna_bulges": 2}, ["-m", "0", "--pam", "NRG", "--dna-bulges", "2"]),
]


@pytest.mark.parametrize("options,flags", GUIDE_CASES, ids=[" ".join(f) for _, f in GUIDE_CASES])
def test_guide_sites_and_profiles_equal_the_command(genome, options, flags):
    """Bulged sites, their alignments (Database.site) and the profile, as
    the command gives them (--format jsonl with the site keys, profile-jsonl)."""
    import json
    db = seqmatch.compile(seqmatch.read_patterns(genome["patterns"]), **options)
    hits = list(db.search(genome["fasta"]))
    want = [json.loads(line) for line in cli("search", "--format", "jsonl", "--site", "-p", genome["patterns"],
                                             *flags, genome["fasta"]).splitlines()]
    got = []
    for h in hits:
        s = db.site(h)
        got.append({"record": h.record, "pattern": h.pattern, "strand": h.strand, "start": h.start, "end": h.end,
                    "errors": h.errors, "matched": h.matched, "bulge": s.bulge, "bulge_size": s.bulge_size,
                    "guide_aligned": s.guide_aligned, "site_aligned": s.site_aligned})
        assert s.mismatches == h.errors
    assert got == want and len(want) > 0
    profile = [json.loads(line) for line in cli("search", "--format", "profile-jsonl", "-p", genome["patterns"],
                                                *flags, genome["fasta"]).splitlines()]
    assert db.profile(hits) == profile


def test_guide_refusals():
    with pytest.raises(ValueError, match="need a PAM"):
        seqmatch.compile("ACGTACGTACGT", mismatches=1, dna_bulges=1)
    with pytest.raises(ValueError, match="cannot be combined"):
        seqmatch.compile("ACGTACGTACGT", mismatches=1, pam="NGG", pam5="TTTV")
    with pytest.raises(ValueError, match="at most 8"):
        seqmatch.compile("ACGTACGTACGT", mismatches=1, pam="NGG", rna_bulges=9)
    db = seqmatch.compile("ACGTACGTACGT", mismatches=1)
    with pytest.raises(ValueError):
        db.site(db.scan("ACGTACGTACGT")[0])
