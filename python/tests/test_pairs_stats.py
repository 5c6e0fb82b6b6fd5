"""Paired reads (Adapters.trim and BarcodePairs.demux with read2), demux's
trim and barcode_tag (Database.demux, BarcodePairs.demux), and the run
counts of search, filter and demux (.stats): against the command on the
same random files (planted adapters and barcodes, errors, N, lower case):
the same bytes in every output file, the same numbers as --stats-json;
errors refused with messages that say what to give instead."""
import gzip
import io
import json
import os
import random

import pytest

import seqmatch
from test_amplicon_trim import damaged, revcomp, sprinkled, write_fastq
from test_seqmatch import cli, random_dna

ROUNDS = max(1, int(float(os.environ.get("SM_TEST_SCALE", "1")) * 4))

AD1, AD2 = "AGATCGGAAGAGC", "CTGTCTCTTATA"


def report(path):
    """The groups of a --stats-json report that a pass's stats hold."""
    data = json.loads(path.read_text())
    for item in data.get("samples", []):
        for key in ("file", "file_r1", "file_r2"):
            item.pop(key, None)
    return data


def with_adapter(rng, adapters):
    """A read: an insert, then maybe an adapter (whole, cut off at the
    read's end, with a substitution or a deletion), N and lower case."""
    seq = random_dna(rng, rng.randrange(0, 60))
    if rng.random() < 0.2:
        seq = ("GATCGT" if rng.random() < 0.5 else "GATCGT"[rng.randrange(1, 4):]) + seq
    if rng.random() < 0.7:
        a = rng.choice(adapters)
        a = damaged(rng, a)
        seq += a[: rng.randrange(1, len(a) + 1)] if rng.random() < 0.4 else a + random_dna(rng, rng.randrange(5))
    return sprinkled(rng, seq)


def mate_pairs(rng, n, make1, make2):
    """(mate 1 reads, mate 2 reads) as (name, sequence, quality), named
    NAME/1 and NAME/2 or alike."""
    one, two = [], []
    for i in range(n):
        suffix = rng.choice([("/1", "/2"), ("", "")])
        for reads, make, end in ((one, make1, suffix[0]), (two, make2, suffix[1])):
            seq = make()
            reads.append((f"p{i}{end}", seq, "".join(chr(33 + rng.randrange(41)) for _ in seq)))
    return one, two


# --------------------------------------------------------- paired trimming

PAIR_TRIM_CASES = [
    (["-a", AD1, "-A", AD1, "--minimum-length", "20"], {"back": AD1, "back2": AD1, "minimum_length": 20}),
    (["-a", AD1, "-G", "GATCGT"], {"back": AD1, "front2": "GATCGT"}),
    (["-a", AD1, "--discard-untrimmed"], {"back": AD1, "discard": "untrimmed"}),
    (["-a", AD1, "-A", AD2, "-m", "1", "--discard-trimmed"],
     {"back": AD1, "back2": AD2, "mismatches": 1, "discard": "trimmed"}),
    (["-a", AD1, "-g", "^GATCGT", "-A", AD2, "-k", "1", "--min-overlap", "4"],
     {"back": AD1, "front": "^GATCGT", "back2": AD2, "edits": 1, "min_overlap": 4}),
    # the command's order of -A and -a kept through adapters=
    (["-A", AD2, "-a", AD1, "-A", AD1], {"adapters": [("back2", AD2), ("back", AD1), ("back2", AD1)]}),
]


@pytest.mark.parametrize("case", range(len(PAIR_TRIM_CASES)))
def test_paired_trim_equals_the_command(case, tmp_path):
    options, kwargs = PAIR_TRIM_CASES[case]
    kwargs = dict(kwargs)
    rng = random.Random(3900 + case)
    one, two = mate_pairs(rng, 120 * ROUNDS, lambda: with_adapter(rng, [AD1, AD2]),
                          lambda: with_adapter(rng, [AD2, AD1]))
    r1, r2 = tmp_path / "r_1.fq", tmp_path / "r_2.fq.gz"
    write_fastq(r1, one)
    with gzip.open(r2, "wt") as f:
        for name, seq, qual in two:
            f.write(f"@{name} y\n{seq}\n+\n{qual}\n")
    stats_path = tmp_path / "stats.json"
    cli("trim", "--no-progress", "--stats-json", stats_path, "-o", tmp_path / "out_#.fq", *options,
        "-1", r1, "-2", r2, status=(0,))
    want = [(tmp_path / f"out_{m}.fq").read_bytes() for m in (1, 2)]
    adapters = seqmatch.Adapters(**{k: kwargs.pop(k) for k in ("back", "front", "back2", "front2", "adapters",
                                                               "mismatches", "edits") if k in kwargs})
    trimmed = adapters.trim(str(r1), read2=str(r2), threads=rng.choice([1, 2]), **kwargs)
    got = list(trimmed)
    assert [b"".join(p[m].raw for p in got) for m in (0, 1)] == want
    st = json.loads(stats_path.read_text())
    assert trimmed.stats == {"records": st["reads"]["input"], "reads": st["reads"]["mates_input"],
                             "trimmed": st["reads"]["mates_trimmed"], "kept": st["reads"]["output"],
                             "bases_in": st["bases"]["input"], "bases_kept": st["bases"]["output"]}
    assert trimmed.stats["records"] == len(one) and trimmed.stats["kept"] == len(got)
    by_name = [{name: (seq, qual) for name, seq, qual in mate} for mate in (one, two)]
    for pair in got:
        for t, f, names in zip(pair, (str(r1), str(r2)), by_name):
            seq, qual = names[t.name]
            assert (t.sequence, t.quality, t.file) == (seq[t.start:t.end], qual[t.start:t.end], f)
    # the mates as records in memory, and as file objects, give the same
    again = list(adapters.trim(one, read2=two, **kwargs))
    assert [tuple(t._replace(raw=None, file=None) for t in p) for p in again] == \
        [tuple(t._replace(raw=None, file=None) for t in p) for p in got]
    with open(r1, "rb") as f1, gzip.open(r2, "rb") as f2:
        assert [(a.raw, b.raw) for a, b in adapters.trim(f1, read2=f2, **kwargs)] == [(a.raw, b.raw) for a, b in got]


def test_paired_trim_errors(tmp_path):
    adapters = seqmatch.Adapters(back=AD1, back2=AD2)
    one = [("a/1", "ACGTAGATCGG"), ("b/1", "ACGT")]
    with pytest.raises(ValueError, match="back2 and front2 are mate 2's adapters"):
        adapters.trim(one)
    with pytest.raises(ValueError, match="reads out of step: record 2 is 'b/1' in target but 'c/2' in read2"):
        list(adapters.trim(one, read2=[("a/2", "ACGT"), ("c/2", "ACGT")]))
    with pytest.raises(ValueError, match="has more records than"):
        list(adapters.trim(one, read2=[("a/2", "ACGT")]))
    r1, r2 = tmp_path / "r1.fq", tmp_path / "r2.fq"
    r1.write_text("@a/1\nACGT\n+\nIIII\n@b/1\nAC\n+\nII\n")
    r2.write_text("@a/2\nACGT\n+\nIIII\n@x/2\nAC\n+\nII\n")
    with pytest.raises(ValueError, match=f"reads out of step: record 2 is 'b/1' in {r1} but 'x/2' in {r2}"):
        list(adapters.trim(str(r1), read2=str(r2)))
    r2.write_text("@a/2\nACGT\n+\nIIII\n")
    with pytest.raises(ValueError, match=f"{r1} has more records than {r2} \\(1\\)"):
        list(adapters.trim(str(r1), read2=str(r2)))
    r2.write_text(">a/2\nACGT\n>b/2\nAC\n")
    with pytest.raises(ValueError, match="FASTA, but .* is FASTQ"):
        list(adapters.trim(str(r1), read2=str(r2)))
    with pytest.raises(TypeError, match="both files .* or both records"):
        adapters.trim(str(r1), read2=one)
    with pytest.raises(TypeError, match="one file per mate"):
        adapters.trim([str(r1), str(r1)], read2=str(r2))
    assert list(seqmatch.Adapters(back=AD1).trim([], read2=[])) == []


# ----------------------------------------------- barcode pairs, paired reads

def pair_barcodes(rng):
    firsts = [random_dna(rng, 8) for _ in range(3)]
    seconds = [random_dna(rng, 8) for _ in range(3)]
    return [(f"s{i}{j}", b1, b2) for i, b1 in enumerate(firsts) for j, b2 in enumerate(seconds) if (i + j) % 2]


def with_barcode(rng, barcode):
    if rng.random() < 0.2:
        j = rng.randrange(len(barcode))
        barcode = barcode[:j] + rng.choice("ACGT") + barcode[j + 1:]
    if rng.random() < 0.1:
        j = rng.randrange(len(barcode))
        barcode = barcode[:j] + barcode[j + 1:]
    seq = barcode + random_dna(rng, rng.randrange(0, 40))
    if rng.random() < 0.05:
        seq = random_dna(rng, rng.randrange(0, 30))
    return sprinkled(rng, seq)


def sample_files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.read_bytes()}


def demux_options_kwargs(options):
    kwargs = {"mismatches": 1} if "-m" in options else {"edits": 1} if "-k" in options else {}
    return kwargs, {"trim": "--trim" in options, "barcode_tag": "--barcode-tag" in options}


@pytest.mark.parametrize("options", [[], ["-m", "1", "--trim"], ["-k", "1", "--barcode-tag"],
                                     ["-m", "1", "--trim", "--barcode-tag"]])
def test_paired_barcode_pairs_equal_the_command(options, tmp_path):
    rng = random.Random(4000 + len(options))
    samples = pair_barcodes(rng)
    table = tmp_path / "pairs.tsv"
    table.write_text("".join("\t".join(s) + "\n" for s in samples))
    pick = []

    def mate1():
        pick.append(rng.choice(samples))
        return with_barcode(rng, pick[-1][1] if rng.random() < 0.9 else rng.choice(samples)[1])

    one, two = mate_pairs(rng, 100 * ROUNDS, mate1, lambda: with_barcode(rng, pick[-1][2]))
    r1, r2 = tmp_path / "r1.fq", tmp_path / "r2.fq"
    write_fastq(r1, one)
    write_fastq(r2, two)
    out, stats_path = tmp_path / "out", tmp_path / "stats.json"
    cli("demux", "--barcodes", table, *options, "--stats-json", stats_path, "-o", out, "-1", r1, "-2", r2,
        status=(0,))
    compile_kwargs, pass_kwargs = demux_options_kwargs(options)
    pairs = seqmatch.BarcodePairs(table, **compile_kwargs)
    demuxed = pairs.demux(str(r1), read2=str(r2), threads=rng.choice([1, 2]), **pass_kwargs)
    got = {}
    for sample, (a, b) in demuxed:
        for m, rec in ((1, a), (2, b)):
            got.setdefault(f"{sample or 'unassigned'}_R{m}.fastq", []).append(rec.raw)
    assert sample_files(out) == {k: b"".join(v) for k, v in got.items()}
    assert len(got) > 6
    want = report(stats_path)
    assert demuxed.stats == {k: want[k] for k in ("reads", "bases", "patterns", "samples", "unassigned")}
    # the mates as records in memory: the same samples, the same cuts and tags
    from_file = list(pairs.demux(str(r1), read2=str(r2), **pass_kwargs))
    in_memory = list(pairs.demux(one, read2=two, **pass_kwargs))
    assert len(in_memory) == len(from_file)
    for (s, items), (same, records) in zip(in_memory, from_file):
        assert s == same
        for item, rec in zip(items, records):
            header = rec.raw.split(b"\n")[0].decode()[1:]
            assert item[:3] == (header.replace(" x", "", 1), rec.sequence, rec.raw.split(b"\n")[3].decode())


@pytest.mark.parametrize("options", [["--trim"], ["-m", "1", "--barcode-tag"], ["-k", "1", "--trim", "--barcode-tag"],
                                     ["-m", "1", "--rc-barcode2", "--trim", "--barcode-tag"]])
def test_barcode_pairs_trim_and_tag_equal_the_command(options, tmp_path):
    rng = random.Random(4100 + len(options))
    rc = "--rc-barcode2" in options
    samples = pair_barcodes(rng)
    table = tmp_path / "pairs.tsv"
    table.write_text("".join("\t".join(s) + "\n" for s in samples))
    reads = []
    for i in range(100 * ROUNDS):
        _, b1, b2 = rng.choice(samples)
        end = revcomp(b2) if rc else b2
        seq = with_barcode(rng, b1) + (end if rng.random() < 0.9 else end[1:])
        reads.append((f"r{i}", seq, "".join(chr(33 + rng.randrange(41)) for _ in seq)))
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    out, stats_path = tmp_path / "out", tmp_path / "stats.json"
    cli("demux", "--barcodes", table, *options, "--stats-json", stats_path, "-o", out, fastq, status=(0,))
    compile_kwargs, pass_kwargs = demux_options_kwargs(options)
    pairs = seqmatch.BarcodePairs(table, rc_barcode2=rc, **compile_kwargs)
    demuxed = pairs.demux(str(fastq), **pass_kwargs)
    got = {}
    for sample, rec in demuxed:
        got.setdefault(f"{sample or 'unassigned'}.fastq", []).append(rec.raw)
        assert rec.sequence == rec.raw.split(b"\n")[1].decode()
    assert sample_files(out) == {k: b"".join(v) for k, v in got.items()}
    want = report(stats_path)
    assert demuxed.stats == {k: want[k] for k in ("reads", "bases", "patterns", "samples", "unassigned")}


# ------------------------------------------------- Database.demux trim, tag

@pytest.mark.parametrize("options", [["--trim"], ["--barcode-tag", "-m", "1"], ["--trim", "--barcode-tag", "-k", "1"],
                                     ["--trim", "--anchor", "end", "-m", "1"], ["--barcode-tag", "--anchor", "end"]])
def test_demux_trim_and_tag_equal_the_command(options, tmp_path):
    rng = random.Random(4200 + len(options))
    barcodes = [(f"bc{i}", random_dna(rng, rng.choice([6, 8]))) for i in range(5)]
    end = "end" in options
    reads = []
    for i in range(120 * ROUNDS):
        bc = rng.choice(barcodes)[1]
        if rng.random() < 0.2:
            j = rng.randrange(len(bc))
            bc = bc[:j] + rng.choice("ACGT") + bc[j + 1:]
        insert = random_dna(rng, rng.randrange(0, 30))
        seq = insert + bc if end else bc + insert
        if rng.random() < 0.05:
            seq = random_dna(rng, 20)
        reads.append((f"r{i} d", seq, "".join(chr(33 + rng.randrange(41)) for _ in seq)))
    fastq = tmp_path / "r.fq"
    with open(fastq, "w") as f:
        for name, seq, qual in reads:
            f.write(f"@{name}\n{seq}\n+\n{qual}\n")
    fasta = tmp_path / "bc.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in barcodes))
    out, stats_path = tmp_path / "out", tmp_path / "stats.json"
    cli("demux", "-p", fasta, *options, "--stats-json", stats_path, "-o", out, fastq, status=(0,))
    compile_kwargs, pass_kwargs = demux_options_kwargs(options)
    db = seqmatch.compile(seqmatch.read_patterns(fasta), strands="+", **compile_kwargs)
    demuxed = db.demux(str(fastq), anchor="end" if end else "start", **pass_kwargs)
    got = {}
    for barcode, rec in demuxed:
        got.setdefault(f"{barcode or 'unassigned'}.fastq", []).append(rec.raw)
        assert rec.sequence == rec.raw.split(b"\n")[1].decode()
    assert sample_files(out) == {k: b"".join(v) for k, v in got.items()}
    want = report(stats_path)
    assert demuxed.stats == {k: want[k] for k in ("reads", "bases", "patterns", "samples", "unassigned")}
    # records in memory: cut and tagged the same
    items = [(name.split()[0], seq, qual, "kept") for name, seq, qual in reads]
    from_file = list(db.demux(str(fastq), anchor="end" if end else "start", **pass_kwargs))
    for (barcode, item), (same, rec) in zip(db.demux(items, anchor="end" if end else "start", **pass_kwargs),
                                            from_file):
        lines = rec.raw.decode().split("\n")
        header = lines[0][1:].replace(" d", "")
        assert (barcode, item) == (same, (header, lines[1], lines[3], "kept"))


def test_demux_trim_errors():
    db = seqmatch.compile([("a", "ACGTAC")], strands="+")
    with pytest.raises(ValueError, match="trim=True takes the barcode at the read's start or end"):
        db.demux([("r", "ACGTACGG")], anchor=None, trim=True)
    pairs = seqmatch.BarcodePairs([("s", "ACGTAC", "GGTTAA")], rc_barcode2=True)
    with pytest.raises(ValueError, match="rc_barcode2=True is for single reads"):
        pairs.demux([("r", "ACGT")], read2=[("r", "ACGT")])
    # an item without a name keeps None; a tag goes after a bytes name too
    got = list(db.demux([(None, "ACGTACGG", "IIIIIIII"), (b"n", "ACGTACTT")], trim=True, barcode_tag=True))
    assert got == [("a", (None, "GG", "II")), ("a", (b"n BC:Z:ACGTAC", "TT"))]


# --------------------------------------------------- search, filter: stats

def test_search_and_filter_stats_equal_the_command(tmp_path):
    rng = random.Random(4300)
    patterns = [(f"p{i}", random_dna(rng, 8)) for i in range(6)] + [("p0", random_dna(rng, 8))]
    reads = []
    for i in range(150 * ROUNDS):
        seq = random_dna(rng, rng.randrange(10, 80))
        for _ in range(rng.randrange(3)):
            at = rng.randrange(len(seq))
            seq = seq[:at] + rng.choice(patterns)[1] + seq[at:]
        reads.append((f"r{i}", seq, "I" * len(seq)))
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    fasta = tmp_path / "p.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in patterns))
    for options, kwargs in (([], {}), (["-m", "1"], {"mismatches": 1})):
        db = seqmatch.compile(seqmatch.read_patterns(fasta), **kwargs)
        stats_path = tmp_path / "s.json"
        cli("search", "-p", fasta, *options, "--stats-json", stats_path, "-o", tmp_path / "hits.tsv", fastq)
        hits = db.search(str(fastq), threads=2)
        n = sum(1 for _ in hits)
        want = report(stats_path)
        assert hits.stats == {k: want[k] for k in ("records", "bases", "hits", "patterns")}
        assert n == want["hits"]["total"] and len(want["patterns"]) == 6
        # records in memory count the same
        in_memory = db.search([(name, seq) for name, seq, _ in reads])
        list(in_memory)
        assert in_memory.stats == hits.stats
        for invert in (False, True):
            cli("filter", "-p", fasta, *options, *(["-v"] if invert else []), "--stats-json", stats_path, "-o",
                tmp_path / "kept.fq", fastq)
            kept = db.filter(str(fastq), invert=invert)
            raw = b"".join(r.raw for r in kept)
            assert raw == (tmp_path / "kept.fq").read_bytes()
            want = report(stats_path)
            assert kept.stats == {k: want[k] for k in ("reads", "bases", "patterns")}
    # counts so far: a pass read part of the way
    partial = seqmatch.compile(seqmatch.read_patterns(fasta)).search(str(fastq))
    assert partial.stats["hits"]["total"] == 0
    next(partial)
    assert partial.stats["hits"]["total"] >= 1


def test_demux_stats_equal_the_command(tmp_path):
    rng = random.Random(4400)
    barcodes = [("a", "ACGTACGT"), ("b", "TTGGCCAA"), ("a", "GGGGAAAA"), ("c", "CATCATCA")]
    reads = []
    for i in range(100 * ROUNDS):
        seq = (rng.choice(barcodes)[1] if rng.random() < 0.8 else "") + random_dna(rng, rng.randrange(0, 40))
        reads.append((f"r{i}", seq, "I" * len(seq)))
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    fasta = tmp_path / "bc.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in barcodes))
    stats_path = tmp_path / "s.json"
    cli("demux", "-p", fasta, "-m", "1", "--stats-json", stats_path, "-o", tmp_path / "out", fastq, status=(0,))
    db = seqmatch.compile(seqmatch.read_patterns(fasta), mismatches=1, strands="+")
    demuxed = db.demux(io.BytesIO(fastq.read_bytes()))
    assert sum(1 for _ in demuxed) == len(reads)
    want = report(stats_path)
    assert demuxed.stats == {k: want[k] for k in ("reads", "bases", "patterns", "samples", "unassigned")}
    assert [s["name"] for s in demuxed.stats["samples"]] == ["a", "b", "c", "unassigned"]


def test_demux_trim_cuts_the_first_of_a_barcodes_patterns(tmp_path):
    """Patterns of one name are one barcode; of those equally close, the
    first (by index) is what --trim cuts and --barcode-tag shows."""
    fasta = tmp_path / "bc.fa"
    fasta.write_text(">a\nACGTACGG\n>a\nACGTAC\n>b\nTTTTTTTT\n")
    fastq = tmp_path / "r.fq"
    fastq.write_text("@r1\nACGTACGGCCCC\n+\nIIIIIIIIIIII\n@r2\nACGTACTTCC\n+\nIIIIIIIIII\n")
    for order in ("ACGTACGG", "ACGTAC"):
        if order == "ACGTAC":
            fasta.write_text(">a\nACGTAC\n>a\nACGTACGG\n>b\nTTTTTTTT\n")
        cli("demux", "-p", fasta, "--trim", "--barcode-tag", "-o", tmp_path / order, fastq, status=(0,))
        db = seqmatch.compile(seqmatch.read_patterns(fasta), strands="+")
        got = b"".join(rec.raw for _, rec in db.demux(str(fastq), trim=True, barcode_tag=True))
        assert got == (tmp_path / order / "a.fastq").read_bytes()


@pytest.mark.parametrize("options", [[], ["-m", "1", "--trim"], ["--barcode-read", "2", "-k", "1", "--barcode-tag"],
                                     ["--barcode-read", "2", "--anchor", "end", "-m", "1", "--trim", "--barcode-tag"]])
def test_paired_demux_equals_the_command(options, tmp_path):
    """Database.demux over paired files: the barcode in one mate only."""
    rng = random.Random(4500 + len(options))
    barcodes = [(f"bc{i}", random_dna(rng, 8)) for i in range(4)] + [("bc0", random_dna(rng, 6))]
    mate = 2 if "2" in options else 1
    end = "end" in options

    def carrier():
        bc = with_barcode(rng, rng.choice(barcodes)[1])
        insert = random_dna(rng, rng.randrange(0, 30))
        return insert + bc if end else bc + insert

    def other():
        return random_dna(rng, rng.randrange(0, 40))

    one, two = mate_pairs(rng, 100 * ROUNDS, carrier if mate == 1 else other, other if mate == 1 else carrier)
    r1, r2 = tmp_path / "r1.fq", tmp_path / "r2.fq"
    write_fastq(r1, one)
    write_fastq(r2, two)
    fasta = tmp_path / "bc.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in barcodes))
    out, stats_path = tmp_path / "out", tmp_path / "stats.json"
    cli("demux", "-p", fasta, *options, "--stats-json", stats_path, "-o", out, "-1", r1, "-2", r2, status=(0,))
    compile_kwargs, pass_kwargs = demux_options_kwargs(options)
    db = seqmatch.compile(seqmatch.read_patterns(fasta), strands="+", **compile_kwargs)
    anchor = "end" if end else "start"
    demuxed = db.demux(str(r1), read2=str(r2), barcode_read=mate, anchor=anchor, threads=rng.choice([1, 2]),
                       **pass_kwargs)
    got = {}
    for barcode, (a, b) in demuxed:
        for m, rec in ((1, a), (2, b)):
            got.setdefault(f"{barcode or 'unassigned'}_R{m}.fastq", []).append(rec.raw)
    assert sample_files(out) == {k: b"".join(v) for k, v in got.items()}
    assert len(got) > 6
    want = report(stats_path)
    assert demuxed.stats == {k: want[k] for k in ("reads", "bases", "patterns", "samples", "unassigned")}
    from_file = list(db.demux(str(r1), read2=str(r2), barcode_read=mate, anchor=anchor, **pass_kwargs))
    in_memory = list(db.demux(one, read2=two, barcode_read=mate, anchor=anchor, **pass_kwargs))
    assert [(s, tuple(x[1] for x in items)) for s, items in in_memory] == \
        [(s, tuple(x.sequence for x in records)) for s, records in from_file]


def test_paired_demux_errors():
    db = seqmatch.compile([("a", "ACGTAC")], strands="+")
    with pytest.raises(ValueError, match="barcode_read is for paired reads: give read2"):
        db.demux([("r", "ACGT")], barcode_read=2)
    with pytest.raises(ValueError, match="barcode_read=3 is not one of 1, 2"):
        db.demux([("r", "ACGT")], read2=[("r", "ACGT")], barcode_read=3)
    demuxed = db.demux([("r/1", "TTTT"), ("s/1", "ACGTACGG")], read2=[("r/2", "ACGTACCC"), ("s/2", "GG")],
                       barcode_read=2, trim=True)
    assert list(demuxed) == [("a", (("r/1", "TTTT"), ("r/2", "CC"))), (None, (("s/1", "ACGTACGG"), ("s/2", "GG")))]
    # only mate 2 is searched: the barcode at s/1's start is not counted
    assert demuxed.stats["patterns"] == [{"name": "a", "records": 1}]
    assert demuxed.stats["bases"] == {"input": 22, "output": 6} and demuxed.stats["reads"] == {"input": 2, "output": 1}
