"""Primers.amplicons and Adapters.trim: against a brute-force oracle written
from docs/amplicon.md's definition (random records with planted products,
IUPAC primers, N and lower case in the text, both strands) and against the
command (seqmatch amplicon and seqmatch trim on the same files: the same
products, the same bytes); their statistics; their errors."""
import io
import json
import os
import random

import pytest

import seqmatch
from test_seqmatch import cli, random_dna

ROUNDS = max(1, int(float(os.environ.get("SM_TEST_SCALE", "1")) * 6))

IUPAC = {
    "A": "A", "C": "C", "G": "G", "T": "T", "U": "T", "R": "AG", "Y": "CT", "S": "CG", "W": "AT", "K": "GT",
    "M": "AC", "B": "CGT", "D": "AGT", "H": "ACT", "V": "ACG", "N": "ACGT",
}
COMPLEMENT = str.maketrans("ACGTURYSWKMBDHVNacgturyswkmbdhvn", "TGCAAYRSWMKVHDBNtgcaayrswmkvhdbn")


def revcomp(s):
    return s.translate(COMPLEMENT)[::-1]


def substituted(rng, s):
    """s with one base replaced by a random one (maybe the same)."""
    j = rng.randrange(len(s))
    return s[:j] + rng.choice("ACGT") + s[j + 1:]


def damaged(rng, a):
    """An adapter as reads carry it: maybe a substitution, maybe a deletion."""
    if rng.random() < 0.3:
        a = substituted(rng, a)
    if rng.random() < 0.2:
        j = rng.randrange(len(a))
        a = a[:j] + a[j + 1:]
    return a


def sprinkled(rng, seq):
    """seq with an N at about 1 % of its bases and lower case at about 5 %."""
    return "".join("N" if rng.random() < 0.01 else c.lower() if rng.random() < 0.05 else c for c in seq)


def mismatches(primer, window):
    """Pattern codes against text bases (any case); a text N or IUPAC code
    matches nothing."""
    return sum(1 for p, t in zip(primer.upper(), window.upper()) if t not in "ACGT" or t not in IUPAC[p])


def sites(primer, seq, k):
    """(start, end, errors) of every window within k mismatches."""
    m = len(primer)
    out = []
    for i in range(len(seq) - m + 1):
        e = mismatches(primer, seq[i:i + m])
        if e <= k:
            out.append((i, i + m, e))
    return out


def oracle_products(pairs, records, k, lo, hi, longest):
    """The products as docs/amplicon.md defines them, in (record, start, end,
    pair, strand) order."""
    out = []
    for name, seq in records:
        found = []
        for index, (pair, fwd, rev) in enumerate(pairs):
            f_plus, r_minus = sites(fwd, seq, k), sites(revcomp(rev), seq, k)
            f_minus, r_plus = sites(revcomp(fwd), seq, k), sites(rev, seq, k)
            if longest:
                plus = [(min(f_plus), max(r_minus))] if f_plus and r_minus else []
                minus = ([(max(f_minus, key=lambda s: s[1]), min(r_plus, key=lambda s: s[1]))]
                         if f_minus and r_plus else [])
            else:
                plus = [(f, r) for f in f_plus for r in r_minus]
                minus = [(f, r) for f in f_minus for r in r_plus]
            for f, r in plus:
                if r[0] >= f[0] and lo <= r[1] - f[0] <= hi:
                    found.append((f[0], r[1], index, "+", f[2], r[2]))
            for f, r in minus:
                if f[1] >= r[1] and lo <= f[1] - r[0] <= hi:
                    found.append((r[0], f[1], index, "-", f[2], r[2]))
        found.sort(key=lambda a: (a[0], a[1], a[2], a[3] == "-"))
        for start, end, index, strand, fe, re_ in found:
            out.append((name, start, end, strand, pairs[index][0], fe, re_))
    return out


def plant_products(rng, pairs, n_records):
    """Records with products of the pairs planted on both strands (primers
    with their IUPAC codes resolved, sometimes a mismatch), nested ones,
    lower case and N."""
    records = []
    for r in range(n_records):
        seq = random_dna(rng, rng.randrange(20, 400))
        for _ in range(rng.randrange(0, 4)):
            _, fwd, rev = rng.choice(pairs)
            f = "".join(rng.choice(IUPAC[c]) for c in fwd)
            rv = "".join(rng.choice(IUPAC[c]) for c in revcomp(rev))
            if rng.random() < 0.3:
                i = rng.randrange(len(f))
                f = f[:i] + rng.choice("ACGT") + f[i + 1:]
            product = f + random_dna(rng, rng.randrange(0, 60)) + rv
            if rng.random() < 0.4:
                product = revcomp(product)
            at = rng.randrange(len(seq) + 1)
            seq = seq[:at] + product + seq[at:]
        seq = list(seq)
        for _ in range(rng.randrange(0, 3)):
            seq[rng.randrange(len(seq))] = "N"
        seq = "".join(c.lower() if rng.random() < 0.1 else c for c in seq)
        records.append((f"rec{r}", seq))
    return records


def random_pairs(rng):
    pairs = []
    for i in range(rng.randrange(1, 4)):
        pairs.append((f"pair{i}", random_dna(rng, rng.randrange(6, 10), iupac=0.1),
                      random_dna(rng, rng.randrange(6, 10), iupac=0.1)))
    return pairs


def amplicon_rows(products):
    return [(a.record, a.start, a.end, a.strand, a.pair, a.forward_errors, a.reverse_errors) for a in products]


def write_fasta(path, records, width=60):
    with open(path, "w") as f:
        for name, seq in records:
            f.write(f">{name} some description\n")
            for i in range(0, len(seq), width):
                f.write(seq[i:i + width] + "\n")


@pytest.mark.parametrize("k", [0, 1])
@pytest.mark.parametrize("longest", [False, True])
def test_amplicons_against_the_oracle(k, longest):
    rng = random.Random(3600 + 10 * k + longest)
    for _ in range(ROUNDS):
        pairs = random_pairs(rng)
        records = plant_products(rng, pairs, 12)
        lo, hi = rng.choice([(1, 10000), (20, 80), (1, 30)])
        primers = seqmatch.Primers(pairs, mismatches=k)
        got = primers.amplicons(records, min_size=lo, max_size=hi, longest=longest, sequence=True,
                                threads=rng.choice([1, 3]))
        got = list(got)
        assert amplicon_rows(got) == oracle_products(pairs, records, k, lo, hi, longest)
        seqs = dict(records)
        for a in got:
            piece = seqs[a.record][a.start:a.end]
            assert a.sequence == (piece if a.strand == "+" else revcomp(piece))
            assert a.size == a.end - a.start and a.file is None


def test_amplicons_equal_the_command(tmp_path):
    rng = random.Random(361)
    pairs = random_pairs(rng) + [("wide", "GTGYCAGCMGC", "GGACTACNVGG")]
    records = plant_products(rng, pairs, 30)
    fasta = tmp_path / "t.fa"
    write_fasta(fasta, records)
    table = tmp_path / "pairs.tsv"
    table.write_text("# name forward reverse\n" + "".join(f"{n}\t{f}\t{r}\n" for n, f, r in pairs))
    for options, kwargs in (([], {}), (["-m", "1"], {"mismatches": 1}), (["-k", "1"], {"edits": 1}),
                            (["--longest", "-m", "1"], {"longest": True, "mismatches": 1}),
                            (["--min-size", "30", "--max-size", "90"], {"min_size": 30, "max_size": 90}),
                            (["--text-iupac"], {"text_iupac": True})):
        want = []
        for line in cli("amplicon", "--no-header", "--sequence", "-p", table, *options, fasta).splitlines():
            f = line.split("\t")
            want.append((f[0], int(f[1]), int(f[2]), f[3], f[4], int(f[6]), int(f[7]), f[8]))
        compile_args = {key: kwargs.pop(key) for key in ("mismatches", "edits", "text_iupac") if key in kwargs}
        primers = seqmatch.Primers(table, **compile_args)
        assert [p.name for p in primers.pairs] == [p[0] for p in pairs]
        products = primers.amplicons(str(fasta), sequence=True, **kwargs)
        found = list(products)
        assert [row + (a.sequence,) for row, a in zip(amplicon_rows(found), found)] == want, options
        assert {a.file for a in found} <= {str(fasta)}
        assert products.stats == {"records": len(records), "products": len(want)}
        # a file object and the records as Python objects give the same products
        with open(fasta, "rb") as f:
            from_file = list(primers.amplicons(f, sequence=True, **kwargs))
        assert [a._replace(file=None) for a in from_file] == [a._replace(file=None) for a in found]
        assert amplicon_rows(primers.amplicons(records, **kwargs)) == [w[:7] for w in want]


def test_amplicon_pass_and_errors(tmp_path):
    primers = seqmatch.Primers(("ACGTAC", "GGTTAA"))
    assert primers.pairs == [seqmatch.PrimerPair("amplicon", "ACGTAC", "GGTTAA")] and len(primers) == 1
    assert primers.database.patterns == ["amplicon/forward", "amplicon/reverse"]
    records = [("r", "ACGTACAAAAAAATTAACC"), (None, "GGTTAAcccGTACGT"), ("none", "ACGT")]
    with primers.amplicons(records) as products:
        first = next(products)
        assert first == seqmatch.Amplicon("r", 0, 19, "+", "amplicon", 0, 0, None, None)
        assert first._asdict()["pair"] == "amplicon"
    assert list(products) == [] and products.stats["products"] >= 1
    assert [a[:4] for a in primers.amplicons(records)] == [("r", 0, 19, "+"), (None, 0, 15, "-")]
    bad = tmp_path / "bad.tsv"
    bad.write_text("p1\tACGT\n")
    with pytest.raises(ValueError, match="line 1"):
        seqmatch.Primers(bad)
    with pytest.raises(OSError):
        seqmatch.Primers(tmp_path / "missing.tsv")
    with pytest.raises(ValueError, match="no DNA or IUPAC symbol"):
        seqmatch.Primers([("p", "ACGXT", "ACGT")])
    with pytest.raises(ValueError, match="mismatches=4"):
        seqmatch.Primers([("p", "ACGT", "ACGTACGT")], mismatches=4)
    with pytest.raises(ValueError, match="min_size=9 is above max_size=8"):
        primers.amplicons(records, min_size=9, max_size=8)
    with pytest.raises(TypeError, match="triples"):
        seqmatch.Primers([("p", "ACGT")])


# ---------------------------------------------------------------- trimming

def plant_adapters(rng, adapters, n):
    """FASTQ reads with adapters (whole, cut off at the read's end, with an
    error) after a random insert, some with a 5' primer, lower case and N."""
    reads = []
    for i in range(n):
        seq = random_dna(rng, rng.randrange(0, 70))
        if rng.random() < 0.3:
            # a 5' primer, whole or running off the read's start
            seq = ("ACGGTCAT" if rng.random() < 0.5 else "ACGGTCAT"[rng.randrange(1, 6):]) + seq
        if rng.random() < 0.7:
            a = rng.choice(adapters)
            a = damaged(rng, a)
            seq += a[: rng.randrange(1, len(a) + 1)] if rng.random() < 0.4 else a + random_dna(rng, rng.randrange(5))
        seq = sprinkled(rng, seq)
        qual = "".join(chr(33 + rng.randrange(41)) for _ in seq)
        reads.append((f"read{i}", seq, qual))
    return reads


def write_fastq(path, reads):
    with open(path, "w") as f:
        for name, seq, qual in reads:
            f.write(f"@{name} x\n{seq}\n+\n{qual}\n")


TRIM_CASES = [
    (["-a", "AGATCGGAAGAGC"], {"back": "AGATCGGAAGAGC"}),
    (["-a", "AGATCGGAAGAGC", "-a", "CTGTCTCTTATA", "-m", "1"],
     {"back": ["AGATCGGAAGAGC", "CTGTCTCTTATA"], "mismatches": 1}),
    (["-a", "AGATCGGAAGAGC", "-k", "1", "--min-overlap", "4"], {"back": "AGATCGGAAGAGC", "edits": 1, "min_overlap": 4}),
    (["-a", "AGATCGGAAGAGC", "-k", "2"], {"back": "AGATCGGAAGAGC", "edits": 2}),
    # back= adapters come before front= ones (a tie goes to the first given)
    (["-a", "CTGTCTCTTATA", "-g", "ACGGTCAT", "--minimum-length", "12"],
     {"front": "ACGGTCAT", "back": "CTGTCTCTTATA", "minimum_length": 12}),
    (["-g", "^ACGGTCAT", "--discard-untrimmed"], {"front": "^ACGGTCAT", "discard": "untrimmed"}),
    # the command's order kept (-g before -a): a tie goes to the 5' adapter
    (["-g", "ACGGTCAT", "-a", "CTGTCTCTTATA", "-k", "1", "--min-overlap", "3"],
     {"adapters": [("front", "ACGGTCAT"), ("back", "CTGTCTCTTATA")], "edits": 1, "min_overlap": 3}),
    (["-a", "^ACGGTCAT...AGATCGGAAGAGC", "-m", "1", "--discard-trimmed"],
     {"back": "^ACGGTCAT...AGATCGGAAGAGC", "mismatches": 1, "discard": "trimmed"}),
    (["-a", "AGATCGGAAGAGC$", "--min-overlap", "0", "--text-iupac"],
     {"back": "AGATCGGAAGAGC$", "min_overlap": 0, "text_iupac": True}),
]


@pytest.mark.parametrize("case", range(len(TRIM_CASES)))
def test_trim_equals_the_command(case, tmp_path):
    options, kwargs = TRIM_CASES[case]
    kwargs = dict(kwargs)
    rng = random.Random(3700 + case)
    reads = plant_adapters(rng, ["AGATCGGAAGAGC", "CTGTCTCTTATA"], 150 * ROUNDS)
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    out, report = tmp_path / "out.fq", tmp_path / "stats.json"
    cli("trim", "--no-progress", "--stats-json", report, "-o", out, *options, fastq, status=(0,))
    want = out.read_bytes()
    adapters = seqmatch.Adapters(**{k: kwargs.pop(k) for k in ("back", "front", "adapters", "mismatches", "edits",
                                                               "text_iupac") if k in kwargs})
    trimmed = adapters.trim(str(fastq), threads=rng.choice([1, 2]), **kwargs)
    got = list(trimmed)
    assert b"".join(t.raw for t in got) == want
    stats = json.loads(report.read_text())
    assert trimmed.stats["records"] == stats["reads"]["input"] == len(reads)
    assert trimmed.stats["kept"] == stats["reads"]["output"] == len(got)
    assert trimmed.stats["trimmed"] == stats["reads"]["mates_trimmed"]
    assert (trimmed.stats["bases_in"], trimmed.stats["bases_kept"]) == (stats["bases"]["input"],
                                                                        stats["bases"]["output"])
    by_name = {name: (seq, qual) for name, seq, qual in reads}
    for t in got:
        seq, qual = by_name[t.name]
        assert (t.sequence, t.quality) == (seq[t.start:t.end], qual[t.start:t.end]) and t.file == str(fastq)
        assert (t.adapter is None) == (t.start == 0 and t.end == len(seq) and t.errors == 0) or t.adapter
    # the same reads given as Python objects, and through a file object
    assert [t._replace(raw=None, file=None) for t in adapters.trim(reads, **kwargs)] == \
        [t._replace(raw=None, file=None) for t in got]
    with open(fastq, "rb") as f:
        assert [t.raw for t in adapters.trim(f, **kwargs)] == [t.raw for t in got]


def test_trim_pass_and_errors():
    adapters = seqmatch.Adapters(back=["AGATCGG"], front="^TTGCA")
    assert adapters.adapters == ["AGATCGG", "^TTGCA"] and len(adapters) == 2
    reads = [("r1", "TTGCAACGTAGATCGGTT", "IIIIIIIIIIIIIIIIII"), ("r2", b"ACGTAGA"), ("r3", "CCCCCC")]
    with adapters.trim(reads) as trimmed:
        first = next(trimmed)
    # r1: both adapters match (AGATCGG scores 7, ^TTGCA 5): one is cut, the better one
    assert first == seqmatch.Trimmed("r1", "TTGCAACGT", "IIIIIIIII", 0, 9, "AGATCGG", 0, None, None)
    assert trimmed.stats["records"] >= 1 and list(trimmed) == []
    got = list(adapters.trim(reads, minimum_length=5))
    assert [(t.name, t.sequence, t.adapter) for t in got] == [("r1", "TTGCAACGT", "AGATCGG"), ("r3", "CCCCCC", None)]
    assert [t.name for t in adapters.trim(reads, discard="untrimmed")] == ["r1", "r2"]
    assert [t.name for t in adapters.trim(reads, discard="trimmed")] == ["r3"]
    fastq = io.BytesIO(b"@a\nACGTAGATCGGAA\n+\nABCDEFGHIJKLM\n")
    t = next(iter(adapters.trim(fastq)))
    assert (t.sequence, t.quality, t.raw) == ("ACGT", "ABCD", b"@a\nACGT\n+\nABCD\n")
    # wrapped FASTA with CRLF line ends: the sequence on one line, the line ends kept
    fasta = io.BytesIO(b">r1 desc\r\nACGTACGT\r\nAGATCGGTT\r\n>r2\nAC\n")
    assert [(t.sequence, t.quality, t.raw) for t in adapters.trim(fasta)] == [
        ("ACGTACGT", None, b">r1 desc\r\nACGTACGT\r\n"), ("AC", None, b">r2\nAC\n")]
    assert seqmatch.Adapters(adapters=[("front", "^TTGCA"), ("back", "AGATCGG")]).adapters == ["^TTGCA", "AGATCGG"]
    with pytest.raises(ValueError, match="an adapter's kind='middle' is not one of 'back', 'front'"):
        seqmatch.Adapters(adapters=[("middle", "ACGT")])
    with pytest.raises(ValueError, match="no adapters"):
        seqmatch.Adapters()
    with pytest.raises(ValueError, match="'\\^' anchors a 5' adapter"):
        seqmatch.Adapters(back="^ACGT")
    with pytest.raises(ValueError, match="min_overlap=2 with 2 errors"):
        seqmatch.Adapters(back="ACGTACGT", edits=2).trim(reads, min_overlap=2)
    with pytest.raises(ValueError, match="discard='all' is not one of"):
        adapters.trim(reads, discard="all")


# ------------------------------------------------------- dual-index demux

def dual_reads(rng, samples, n, rc_barcode2):
    """FASTQ reads with barcode1 at the start and barcode2 at the end (as
    it reads there: its reverse complement with rc_barcode2), some with an
    error, a wrong or missing barcode, lower case and N."""
    reads = []
    for i in range(n):
        _, b1, b2 = rng.choice(samples)
        if rng.random() < 0.1:
            b1 = rng.choice(samples)[1]  # maybe an unlisted pair
        end = revcomp(b2) if rc_barcode2 else b2
        if rng.random() < 0.2:
            b1 = substituted(rng, b1)
        if rng.random() < 0.1:
            end = end[1:]
        seq = b1 + random_dna(rng, rng.randrange(0, 40)) + end
        if rng.random() < 0.05:
            seq = random_dna(rng, rng.randrange(0, 30))
        seq = sprinkled(rng, seq)
        reads.append((f"read{i}", seq, "I" * len(seq)))
    return reads


@pytest.mark.parametrize("options", [[], ["-m", "1"], ["-k", "1"], ["-m", "1", "--rc-barcode2"]])
def test_barcode_pairs_equal_the_command(options, tmp_path):
    rng = random.Random(3800 + len(options))
    rc = "--rc-barcode2" in options
    firsts = [random_dna(rng, 8) for _ in range(3)]
    seconds = [random_dna(rng, 8) for _ in range(3)]
    samples = [(f"s{i}{j}", b1, b2) for i, b1 in enumerate(firsts) for j, b2 in enumerate(seconds) if (i + j) % 2]
    table = tmp_path / "pairs.tsv"
    table.write_text("sample\tindex1\tindex2\n" + "".join("\t".join(s) + "\n" for s in samples))
    reads = dual_reads(rng, samples, 100 * ROUNDS, rc)
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    cli("demux", "--barcodes", table, *options, "-o", tmp_path / "out", fastq, status=(0, 1))
    files = {p.stem: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    kwargs = {"mismatches": 1} if "-m" in options else {"edits": 1} if "-k" in options else {}
    pairs = seqmatch.BarcodePairs(table, rc_barcode2=rc, **kwargs)
    assert pairs.samples == [s[0] for s in samples]
    assigned = {}
    demuxed = pairs.demux(str(fastq), threads=rng.choice([1, 2]))
    for sample, record in demuxed:
        assigned.setdefault(sample or "unassigned", []).append(record.raw)
    assert {k: v for k, v in files.items() if v} == {k: b"".join(v) for k, v in assigned.items()}
    assert len(assigned) > 3
    stats = demuxed.stats
    assert stats["reads"]["input"] == len(reads) == stats["reads"]["output"] + sum(stats["unassigned"].values())
    assert stats["reads"]["output"] == len(reads) - len(assigned.get("unassigned", []))
    assert [s["name"] for s in stats["samples"]] == [s[0] for s in samples] + ["unassigned"]
    # the reads as Python objects, and the table given as triples
    again = seqmatch.BarcodePairs(samples, rc_barcode2=rc, **kwargs)
    assert [s for s, _ in again.demux(reads)] == [s for s, _ in pairs.demux(str(fastq))]


def test_barcode_pairs_errors(tmp_path):
    two = tmp_path / "two.tsv"
    two.write_text("a\tACGTACGT\nb\tTTTTGGGG\n")
    with pytest.raises(ValueError, match="two columns"):
        seqmatch.BarcodePairs(two)
    with pytest.raises(ValueError, match="table: barcodes ACGT.ACGA name two samples, a and b"):
        seqmatch.BarcodePairs([("a", "ACGT", "ACGA"), ("b", "ACGT", "ACGA")])
    with pytest.raises(TypeError, match="triples"):
        seqmatch.BarcodePairs([("a", "ACGT")])
    with pytest.raises(ValueError, match="mismatches and edits"):
        seqmatch.BarcodePairs([("a", "ACGT", "ACGA")], mismatches=1, edits=1)
