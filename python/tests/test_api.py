"""The Python API beyond scan and one file: what compile takes, argument
errors in Python's words, Hit as a named tuple, any buffer, targets (several
files, file objects, standard input, records), strand, anchor and max_hits
at scan time, the columnar results, filter and demux, each against the
command where the command does the same."""
import array
import gzip
import io
import mmap
import os
import pathlib
import pickle
import random
import subprocess
import sys

import pytest

import seqmatch
from test_seqmatch import CLI, EXCERPT, PATTERNS, cli, genome, hit_row, mutate, random_dna  # noqa: F401

try:
    import numpy
except ImportError:  # the columns are then array.array: tested either way
    numpy = None


def rows_with_file(hits):
    return [(h.file,) + hit_row(h) for h in hits]


def cli_file_rows(*args):
    """The command's TSV rows when every hit names its file."""
    rows = []
    for line in cli("search", "--no-header", *args).splitlines():
        f = line.split("\t")
        rows.append((f[0], f[1], f[2], f[3], int(f[4]), int(f[5]), int(f[6]), f[7]))
    return rows


def cli_counts(*args):
    """The command's --format count rows as {(file or None, name): count}."""
    out = {}
    for line in cli("search", "--format", "count", *args).splitlines():
        f = line.split("\t")
        key = (None, f[0]) if len(f) == 2 else (f[0], f[1])
        out[key] = int(f[-1])
    return out


@pytest.fixture(scope="module")
def reads(tmp_path_factory):
    """FASTQ reads with barcodes planted at their starts (some with an
    error), adapters at their ends, and some on the reverse strand."""
    rng = random.Random(34)
    barcodes = [(f"bc{i}", random_dna(rng, 8)) for i in range(6)]
    adapters = [("adA", "AGATCGGAAGAGC"), ("adB", "CTGTCTCTTATAC")]
    lines = []
    for i in range(400):
        seq = random_dna(rng, rng.randrange(40, 90))
        if rng.random() < 0.7:
            name, bc = rng.choice(barcodes)
            seq = mutate(rng, bc, rng.randrange(2)) + seq
        if rng.random() < 0.4:
            seq = seq + rng.choice(adapters)[1]
        if rng.random() < 0.2:
            seq = seq[::-1].translate(str.maketrans("ACGT", "TGCA"))
        lines.append(f"@read{i} lane=1\n{seq}\n+\n{'I' * len(seq)}\n")
    d = tmp_path_factory.mktemp("reads")
    fq = d / "reads.fq"
    fq.write_text("".join(lines))
    bc = d / "barcodes.fa"
    bc.write_text("".join(f">{n}\n{s}\n" for n, s in barcodes))
    ad = d / "adapters.fa"
    ad.write_text("".join(f">{n}\n{s}\n" for n, s in adapters))
    return {"fq": fq, "barcodes": bc, "barcode_list": barcodes, "adapters": ad, "adapter_list": adapters}


# ------------------------------------------------------------- compile


def test_a_str_is_one_pattern():
    for one in ("GAATTC", b"GAATTC", bytearray(b"GAATTC"), memoryview(b"GAATTC")):
        db = seqmatch.compile(one)
        assert db.patterns == ["GAATTC"]
        assert [(h.start, h.strand) for h in db.scan("TTGAATTCTT")] == [(2, "+"), (2, "-")]
    assert seqmatch.compile(("GAATTC", "GGATCC")).patterns == ["GAATTC", "GGATCC"]
    assert seqmatch.compile(p for p in ["GAATTC", ("BamHI", "GGATCC")]).patterns == ["GAATTC", "BamHI"]
    db = seqmatch.compile({"EcoRI": "GAATTC", "BamHI": "GGATCC"})
    assert db.patterns == ["EcoRI", "BamHI"] and db.sequences == ["GAATTC", "GGATCC"]
    with pytest.raises(TypeError, match="read_patterns"):
        seqmatch.compile(pathlib.Path(PATTERNS))


def test_read_patterns_as_the_command_reads_them(tmp_path):
    pats = seqmatch.read_patterns(PATTERNS)
    assert pats and all(isinstance(n, str) and isinstance(s, str) for n, s in pats)
    db = seqmatch.compile(pats)
    want = [tuple(line.split("\t")[:5]) for line in cli("search", "--no-header", "-p", PATTERNS, EXCERPT).splitlines()]
    assert [(h.record, h.pattern, h.strand, str(h.start), str(h.end)) for h in db.search(EXCERPT)] == want
    plain = tmp_path / "sites.txt"
    plain.write_text("GAATTC\n\nggatcc\n")
    assert seqmatch.read_patterns(plain) == [("GAATTC", "GAATTC"), ("ggatcc", "ggatcc")]
    bad = tmp_path / "bad.fa"
    bad.write_text(">a\n\n>b\nACGT\n")
    with pytest.raises(ValueError, match="bad.fa"):
        seqmatch.read_patterns(bad)


# -------------------------------------------------------------- errors


def test_errors_name_python_arguments(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("plain words, not FASTA\n")
    db = seqmatch.compile(["GAATTC"])
    forward = seqmatch.compile(["GAATTC"], strands="+")
    guides = seqmatch.compile(["GACGCATAAAGATGAGACGC"], edits=1, pam="NGG")
    cases = [
        (ValueError, 'alphabet="text"', lambda: seqmatch.compile("GAETTC")),
        (ValueError, "alphabet=", lambda: seqmatch.compile("ACGT", alphabet="protein")),
        (ValueError, "strands=", lambda: seqmatch.compile("ACGT", strands="up")),
        (ValueError, "mismatches", lambda: seqmatch.compile("ACGT", mismatches=-1)),
        (TypeError, "mismatches", lambda: seqmatch.compile("ACGT", mismatches="1")),
        (ValueError, "mismatches and edits", lambda: seqmatch.compile("ACGTA", mismatches=1, edits=1)),
        (ValueError, "edits=1 or less", lambda: seqmatch.compile("AC", edits=2)),
        (ValueError, 'alphabet="text"', lambda: seqmatch.compile("ACGT", ignore_case=True)),
        (ValueError, "report=", lambda: seqmatch.compile("ACGT", report="ends")),
        (ValueError, "pam", lambda: seqmatch.compile("ACGT", alphabet="text", pam="NGG")),
        (TypeError, "patterns", lambda: seqmatch.compile(12)),
        (TypeError, "sequence", lambda: db.scan(12)),
        (ValueError, "strand=", lambda: db.scan("ACGT", strand="up")),
        (ValueError, "anchor=", lambda: db.scan("ACGT", anchor="middle")),
        (ValueError, "circular=True and anchor=", lambda: db.scan("ACGT", circular=True, anchor="start")),
        (ValueError, "max_hits", lambda: db.scan("ACGT", max_hits=-1)),
        (TypeError, "max_hits", lambda: db.scan("ACGT", max_hits=1.5)),
        (ValueError, "strands='+'", lambda: forward.scan("ACGT", strand="-")),
        (ValueError, 'alphabet="text"', lambda: list(db.search(text))),
        (ValueError, 'alphabet="text"', lambda: db.count(text)),
        (ValueError, 'alphabet="text"', lambda: list(db.search(EXCERPT, lines=True))),
        (TypeError, "target", lambda: db.search(12)),
        (ValueError, "empty", lambda: db.search([])),
        (TypeError, "not both", lambda: db.search([EXCERPT, ("r", "ACGT")])),
        (TypeError, "name", lambda: list(db.search([(1, "ACGT")]))),
        (TypeError, "records", lambda: list(db.search(iter(["ACGT"])))),
        (TypeError, "sequence", lambda: list(db.search([("r", 12)]))),
        (ValueError, "threads", lambda: db.search(EXCERPT, threads=-1)),
        (ValueError, "circular=True and anchor=", lambda: db.count(EXCERPT, circular=True, anchor="end")),
        (ValueError, "PAM", lambda: guides.scan("ACGT", anchor="start")),
    ]
    for kind, words, call in cases:
        with pytest.raises(kind) as e:
            call()
        message = str(e.value)
        assert words in message, message
        assert "--" not in message, message


# ----------------------------------------------------------------- Hit


def test_hit_is_a_named_tuple():
    db = seqmatch.compile([("EcoRI", "GAATTC")], strands="+")
    (h,) = db.scan("TTGAATTCTT", cigar=True)
    assert isinstance(h, seqmatch.Hit) and isinstance(h, tuple)
    assert h._asdict() == {"pattern": "EcoRI", "strand": "+", "start": 2, "end": 8, "errors": 0, "matched": "GAATTC",
                           "record": None, "file": None, "index": 0, "cigar": "6="}
    assert seqmatch.Hit._fields == tuple(h._asdict())
    assert h._replace(start=3).start == 3 and h.start == 2
    assert pickle.loads(pickle.dumps(h)) == h
    assert seqmatch.Hit.start.__doc__.startswith("0-based start")
    (found,) = db.search([("r1", "TTGAATTCTT")])
    assert found._asdict()["record"] == "r1"
    # hits share their pattern's index and text objects, never another text
    db = seqmatch.compile(["GAATTC", "GAWTTC"], mismatches=1)
    texts = ["GAATTC", "gaattc", "GAATTC", "GATTTC", "GAAttc", "GGATTC"]
    for text in texts + texts[::-1]:
        assert {(h.matched, h.index) for h in db.scan(text)} == {(text, 0), (text, 1)}


# -------------------------------------------------------------- buffers


def test_any_buffer_is_a_sequence(tmp_path):
    db = seqmatch.compile(["ACGTTGCA"], edits=1)
    text = b"GGACGTATGCAGGTTGCAACGT"
    want = [hit_row(h) for h in db.scan(text)]
    assert want
    spaced = bytes(b for c in text for b in (c, ord("x")))
    path = tmp_path / "seq.bin"
    path.write_bytes(text)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        sources = [bytearray(text), memoryview(text), memoryview(spaced)[::2], array.array("b", text),
                   memoryview(text * 2)[len(text):], mapped]
        if numpy is not None:
            grid = numpy.frombuffer(spaced, dtype=numpy.uint8).reshape(-1, 2)
            sources += [numpy.frombuffer(text, dtype=numpy.uint8), grid[:, 0], numpy.array([text], dtype="S")]
        for source in sources:
            assert [hit_row(h) for h in db.scan(source)] == want, type(source)
            assert [hit_row(h, record="r") for h in db.search([("r", source)])] == [
                ("r",) + r[1:] for r in want]
    assert seqmatch.from_bytes(memoryview(db.to_bytes())).patterns == db.patterns


# -------------------------------------------------------------- targets


def test_several_files_equal_the_command(genome):
    db = seqmatch.compile(genome["pattern_list"], mismatches=1)
    files = [str(genome["fasta"]), str(genome["gz"]), str(genome["fasta"])]
    want = cli_file_rows("-p", genome["patterns"], "-m", "1", *files)
    assert len(want) > 30
    assert rows_with_file(db.search(files, threads=2)) == want
    assert rows_with_file(db.search(tuple(pathlib.Path(f) for f in files))) == want
    counts = cli_counts("-p", genome["patterns"], "-m", "1", *files)
    per_file = db.count(files, per_file=True)
    assert [f for f, _ in per_file] == files
    for f, c in per_file:
        assert c == {name: counts[(f, name)] for name in c}
    assert db.count(files) == {n: sum(c[n] for _, c in per_file) for n in db.patterns}
    columns = db.search(files, arrays=True)
    assert columns.files == files
    assert [columns.files[i] for i in columns["file"]] == [r[0] for r in want]


def test_file_objects_and_records_equal_a_path(genome, tmp_path):
    db = seqmatch.compile(genome["pattern_list"], edits=2)
    want = [hit_row(h) for h in db.search(genome["fasta"])]
    data = genome["fasta"].read_bytes()
    with open(genome["fasta"], "rb") as binary, open(genome["fasta"]) as text, \
            gzip.open(genome["gz"], "rb") as unzipped, open(genome["gz"], "rb") as zipped:
        sources = [binary, text, unzipped, zipped, io.BytesIO(data), io.StringIO(data.decode()),
                   io.BufferedReader(io.BytesIO(gzip.compress(data)), buffer_size=7)]
        for source in sources:
            hits = list(db.search(source, threads=1))
            assert [hit_row(h) for h in hits] == want, source
    assert {h.file for h in db.search(io.BytesIO(data))} == {"<BytesIO>"}
    assert {h.file for h in db.search(open(genome["fasta"], "rb"))} == {str(genome["fasta"])}
    records = genome["records"]
    assert [hit_row(h) for h in db.search(records)] == want
    assert {h.file for h in db.search(records)} == {None}
    triples = ((name, seq.encode(), "I" * len(seq)) for name, seq in records)
    assert [hit_row(h) for h in db.search(triples, threads=2)] == want
    assert db.count(records) == db.count(genome["fasta"])


def test_a_file_objects_exception_comes_through(genome):
    class Broken(io.RawIOBase):
        def __init__(self):
            self.left = 3

        def readable(self):
            return True

        def read(self, n=-1):
            self.left -= 1
            if self.left < 0:
                raise ConnectionError("the stream broke")
            return b">r\nACGTACGTGAATTC\n" if self.left == 2 else b"ACGT" * 100

    db = seqmatch.compile("GAATTC")
    with pytest.raises(ConnectionError, match="the stream broke"):
        list(db.search(Broken()))


def test_standard_input(genome):
    code = ("import sys, seqmatch\n"
            "db = seqmatch.compile([p for _, p in eval(sys.argv[1])], mismatches=1)\n"
            "src = sys.stdin.buffer if sys.argv[2] == 'object' else '-'\n"
            "print(sum(1 for h in db.search(src)), next(iter(db.search(['-']))).file if src == '-' else '')\n")
    db = seqmatch.compile([p for _, p in genome["pattern_list"]], mismatches=1)
    want = len(list(db.search(genome["fasta"])))
    for way in ("object", "path"):
        with open(genome["gz"], "rb") as stdin:
            out = subprocess.run([sys.executable, "-c", code, repr(genome["pattern_list"]), way], stdin=stdin,
                                 stdout=subprocess.PIPE, check=True, env=dict(os.environ)).stdout.split()
        assert int(out[0]) == want


# ------------------------------------------------- options at scan time


def test_strand_and_max_hits_at_scan_time(genome):
    db = seqmatch.compile(genome["pattern_list"], mismatches=2)
    every = [hit_row(h) for h in db.search(genome["fasta"])]
    assert len(every) > 20
    for strand in ("+", "-"):
        assert [hit_row(h) for h in db.search(genome["fasta"], strand=strand)] == [r for r in every if r[2] == strand]
        counts = db.count(genome["fasta"], strand=strand)
        assert sum(counts.values()) == sum(1 for r in every if r[2] == strand)
    for n in (0, 1, 7, len(every) - 1, len(every) + 5):
        assert [hit_row(h) for h in db.search(genome["fasta"], max_hits=n, threads=2)] == every[:n]
    files = [genome["fasta"], genome["fasta"]]
    assert len(list(db.search(files, max_hits=len(every) + 3))) == len(every) + 3
    for n in (3, 25):
        want = cli_counts("-p", genome["patterns"], "-m", "2", "--max-hits", n, genome["fasta"])
        assert db.count(genome["fasta"], max_hits=n) == {name: want[(None, name)] for name in db.patterns}
    name, seq = genome["records"][0]
    scanned = [hit_row(h, record=name) for h in db.scan(seq)]
    assert [hit_row(h, record=name) for h in db.scan(seq, strand="-", max_hits=4)] == [
        r for r in scanned if r[2] == "-"][:4]


@pytest.mark.parametrize("options,flags", [({}, []), ({"mismatches": 1}, ["-m", "1"]), ({"edits": 1}, ["-k", "1"]),
                                           ({"edits": 2, "report": "ends"}, ["-k", "2", "--report", "ends"])],
                         ids=["exact", "m1", "k1", "k2-ends"])
def test_anchor_equals_the_command(reads, options, flags):
    db = seqmatch.compile(reads["barcode_list"] + reads["adapter_list"], **options)
    lines = reads["fq"].read_text().splitlines()
    records = [(lines[i][1:].split()[0], lines[i + 1]) for i in range(0, len(lines), 4)]
    for anchor in ("start", "end"):
        want = [tuple(line.split("\t")[:7]) for line in
                cli("search", "--no-header", "-p", reads["barcodes"], "-p", reads["adapters"], "--anchor", anchor,
                    *flags, reads["fq"]).splitlines()]
        assert want
        got = [tuple(map(str, hit_row(h))) for h in db.search(reads["fq"], anchor=anchor)]
        assert got == want
        by_scan = [tuple(map(str, hit_row(h, record=name))) for name, seq in records
                   for h in db.scan(seq, anchor=anchor)]
        assert by_scan == want


# --------------------------------------------------------------- columns


def columns_rows(c):
    return [(c.records[r], c.patterns[p], "+" if s > 0 else "-", int(a), int(b), int(e))
            for r, p, s, a, b, e in zip(c["record"], c["pattern"], c["strand"], c["start"], c["end"], c["errors"])]


@pytest.mark.parametrize("with_numpy", [True, False], ids=["numpy", "array"])
def test_columns_equal_the_hits(genome, monkeypatch, with_numpy):
    assert numpy is not None or not with_numpy, "numpy is not installed (scripts/deps.sh installs python3-numpy)"
    if not with_numpy:
        monkeypatch.setattr(seqmatch, "_numpy", None)
    kind = numpy.ndarray if with_numpy else array.array
    for options in ({}, {"edits": 2}):
        db = seqmatch.compile(genome["pattern_list"], **options)
        hits = list(db.search(genome["fasta"]))
        c = db.search(genome["fasta"], arrays=True, threads=2)
        assert isinstance(c, dict) and c.rows == len(hits) and all(isinstance(v, kind) for v in c.values())
        assert list(c) == ["pattern", "strand", "start", "end", "errors", "record", "file"]
        assert columns_rows(c) == [hit_row(h)[:6] for h in hits]
        assert c.files == [str(genome["fasta"])] and set(c["file"]) == {0}
        assert c.records == sorted({h.record for h in hits}, key=[h.record for h in hits].index)
        name, seq = genome["records"][1]
        scanned = db.scan(seq, arrays=True)
        assert columns_rows(scanned) == [hit_row(h, record=None)[:6] for h in db.scan(seq)]
        assert db.scan(seq, arrays=True, max_hits=3).rows == 3
        assert db.scan("", arrays=True).rows == 0 and db.scan("", arrays=True).records == []
    if with_numpy:
        assert c["start"].dtype == numpy.int64 and c["strand"].dtype == numpy.int8
    else:
        assert (c["start"].typecode, c["strand"].typecode, c["pattern"].typecode) == ("q", "b", "i")


# ------------------------------------------------------ filter and demux


@pytest.mark.parametrize("flags,options", [([], {}), (["-m", "1"], {"mismatches": 1}), (["-v"], {"invert": True}),
                                           (["--anchor", "end"], {"anchor": "end"})],
                         ids=["exact", "m1", "invert", "anchor-end"])
def test_filter_equals_the_command(reads, tmp_path, flags, options):
    compile_options = {k: v for k, v in options.items() if k == "mismatches"}
    scan_options = {k: v for k, v in options.items() if k != "mismatches"}
    db = seqmatch.compile(reads["adapter_list"], **compile_options)
    out = tmp_path / "kept.fq"
    cli("filter", "-p", reads["adapters"], *flags, "-o", out, reads["fq"], status=(0, 1))
    kept = list(db.filter(reads["fq"], **scan_options))
    assert kept and all(isinstance(r, seqmatch.Record) for r in kept)
    assert b"".join(r.raw for r in kept) == out.read_bytes()
    assert all(r.raw.split(b"\n")[1].decode() == r.sequence for r in kept)
    # records given as Python objects come back as given
    kept_names = {r.name for r in kept}
    every = [(r.name, r.sequence, i) for i, r in enumerate(db.filter(reads["fq"], invert=True))]
    every += [(r.name, r.sequence, -1) for r in db.filter(reads["fq"])]
    assert list(db.filter(every, **scan_options)) == [r for r in every if r[0] in kept_names]


def test_demux_equals_the_command(reads, tmp_path):
    db = seqmatch.compile(reads["barcode_list"], mismatches=1)
    cli("demux", "-p", reads["barcodes"], "-m", "1", "-o", tmp_path / "out", reads["fq"], status=(0, 1))
    assigned = {}
    for barcode, record in db.demux(reads["fq"]):
        assigned.setdefault(barcode or "unassigned", []).append(record.raw)
    files = {p.stem: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert {k: v for k, v in files.items() if v} == {k: b"".join(v) for k, v in assigned.items()}
    assert len(assigned) > 3
    # two barcodes of one name are one barcode; a tie between two names is None
    db = seqmatch.compile([("x", "ACGTACGT"), ("x", "TTTTCCCC"), ("y", "ACGTACGA")], mismatches=1)
    assert [b for b, _ in db.demux([("r1", "TTTTCCCCAA"), ("r2", "ACGTACGTAA"), ("r3", "ACGTACGCAA"),
                                     ("r4", "GGGGGGGG")])] == ["x", "x", None, None]


# ------------------------------------------------------------------ text


def test_text_lines_equal_the_command(tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(b"ok\nconnection refused\r\ntimeout then REFUSED\n\nrefused")
    db = seqmatch.compile(["refused", "timeout"], alphabet="text", ignore_case=True)
    want = [tuple(line.split("\t")[:5]) for line in
            cli("search", "--no-header", "--alphabet", "text", "--lines", "-i", "-e", "refused", "-e", "timeout",
                log).splitlines()]
    assert [tuple(map(str, hit_row(h)[:5])) for h in db.search(log, lines=True)] == want
    hits = [hit_row(h)[1:] for h in db.search(log)]
    assert len(hits) == 4 and [hit_row(h)[1:] for h in db.search(io.BytesIO(log.read_bytes()))] == hits
