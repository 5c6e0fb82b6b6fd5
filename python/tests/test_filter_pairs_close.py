"""Database.filter over paired reads (read2=, as ``seqmatch filter -1 -2``),
BarcodePairs.demux in both orientations (strand="both", as ``demux
--barcodes --strand both``), and close() / with on the search, filter and
demux passes: against the command on the same random files (patterns and
barcodes planted, errors, N, lower case), byte for byte and number for
number; errors refused with messages that say what to give instead."""
import gc
import gzip
import io
import itertools
import os
import random
import weakref

import pytest

import seqmatch
from test_amplicon_trim import revcomp, sprinkled, substituted, write_fastq
from test_pairs_stats import mate_pairs, report, sample_files
from test_seqmatch import cli, random_dna

ROUNDS = max(1, int(float(os.environ.get("SM_TEST_SCALE", "1")) * 4))


def planted(rng, patterns, p):
    """A read holding a pattern (maybe mutated, maybe reverse complemented)
    with probability p, N and lower case."""
    seq = random_dna(rng, rng.randrange(0, 50))
    if rng.random() < p:
        pat = rng.choice(patterns)[1]
        if rng.random() < 0.3:
            j = rng.randrange(len(pat))
            pat = pat[:j] + rng.choice("ACGT") + pat[j + 1:]
        if rng.random() < 0.3:
            pat = revcomp(pat)
        at = rng.randrange(len(seq) + 1)
        seq = seq[:at] + pat + seq[at:]
    return sprinkled(rng, seq)


# ------------------------------------------------------------ paired filter

PAIR_FILTER_CASES = [
    ([], {}, {}),
    (["-v"], {}, {"invert": True}),
    (["-m", "1"], {"mismatches": 1}, {}),
    (["-k", "1", "--strand", "+", "-v"], {"edits": 1}, {"strand": "+", "invert": True}),
    (["-m", "1", "--anchor", "start"], {"mismatches": 1}, {"anchor": "start"}),
    (["--min-overlap", "4"], {}, {"min_overlap": 4}),
]


@pytest.mark.parametrize("case", PAIR_FILTER_CASES, ids=lambda c: " ".join(c[0]) or "exact")
def test_paired_filter_equals_the_command(case, tmp_path):
    options, compile_kwargs, kwargs = case
    rng = random.Random(3700 + len(options) + 10 * len(kwargs))
    patterns = [(f"p{i}", random_dna(rng, 9)) for i in range(4)] + [("p1", random_dna(rng, 7))]
    fasta = tmp_path / "p.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in patterns))
    # a pattern in mate 1 only, in mate 2 only, in both, or in neither
    one, two = mate_pairs(rng, 120 * ROUNDS, lambda: planted(rng, patterns, 0.3), lambda: planted(rng, patterns, 0.3))
    r1, r2 = tmp_path / "r1.fq", tmp_path / "r2.fq.gz"
    write_fastq(r1, one)
    with gzip.open(r2, "wt") as f:
        for name, seq, qual in two:
            f.write(f"@{name} x\n{seq}\n+\n{qual}\n")
    stats_path = tmp_path / "stats.json"
    cli("filter", "-p", fasta, *options, "--stats-json", stats_path, "-o", tmp_path / "kept_#.fq", "-1", r1, "-2", r2,
        status=(0,))
    want = [(tmp_path / f"kept_{m}.fq").read_bytes() for m in (1, 2)]
    db = seqmatch.compile(seqmatch.read_patterns(fasta), **compile_kwargs)
    kept = db.filter(str(r1), read2=str(r2), threads=rng.choice([1, 2]), **kwargs)
    pairs = list(kept)
    assert [b"".join(p[m].raw for p in pairs) for m in (0, 1)] == want
    assert 0 < len(pairs) < len(one)
    for a, b in pairs:
        assert isinstance(a, seqmatch.Record) and a.sequence == a.raw.split(b"\n")[1].decode()
        assert a.name.split("/")[0] == b.name.split("/")[0]
    stats = report(stats_path)
    assert kept.stats == {k: stats[k] for k in ("reads", "bases", "patterns")}
    assert kept.stats["reads"]["input"] == len(one)
    # the mates as records in memory, and as file objects: the same pairs
    in_memory = list(db.filter(one, read2=two, **kwargs))
    assert [(a[0], b[0]) for a, b in in_memory] == [(a.name, b.name) for a, b in pairs]
    assert all(isinstance(a, tuple) and len(a) == 3 for a, _ in in_memory)
    with open(r1, "rb") as f1, gzip.open(r2, "rb") as f2:
        from_files = db.filter(f1, read2=f2, **kwargs)
        assert [(a.raw, b.raw) for a, b in from_files] == [(a.raw, b.raw) for a, b in pairs]
        assert from_files.stats == kept.stats


def test_paired_filter_keeps_a_pair_whole():
    db = seqmatch.compile([("a", "ACGTACGG")], strands="+")
    one = [("p1/1", "TTACGTACGGTT"), ("p2/1", "GGGG"), ("p3/1", "GGGG"), ("p4/1", "ACGTACGG")]
    two = [("p1/2", "CCCC"), ("p2/2", "TACGTACGGA"), ("p3/2", "TTTT"), ("p4/2", "ACGTACGG")]
    kept = db.filter(one, read2=two)
    assert [(a[0], b[0]) for a, b in kept] == [("p1/1", "p1/2"), ("p2/1", "p2/2"), ("p4/1", "p4/2")]
    # a pattern's records: mates with a hit (p4 counts twice), as the command's report
    assert kept.stats == {"reads": {"input": 4, "output": 3, "matched": 3},
                          "bases": {"input": 54, "output": 46}, "patterns": [{"name": "a", "records": 4}]}
    dropped = db.filter(one, read2=two, invert=True)
    assert list(dropped) == [(("p3/1", "GGGG"), ("p3/2", "TTTT"))]
    assert dropped.stats["reads"] == {"input": 4, "output": 1, "matched": 3}


def test_paired_filter_errors(tmp_path):
    db = seqmatch.compile([("a", "ACGTACGG")])
    with pytest.raises(ValueError, match=r"reads out of step: record 2 is 'q' in target but 'p2' in read2"):
        list(db.filter([("p1", "ACGT"), ("q", "ACGT")], read2=[("p1", "ACGT"), ("p2", "ACGT")]))
    with pytest.raises(ValueError, match=r"read2 has more records than target \(1\)"):
        list(db.filter([("p1", "ACGT")], read2=[("p1", "ACGT"), ("p2", "ACGT")]))
    r1, r2 = tmp_path / "a.fq", tmp_path / "b.fq"
    write_fastq(r1, [("x/1", "ACGT", "IIII"), ("y/1", "ACGT", "IIII")])
    write_fastq(r2, [("x/2", "ACGT", "IIII")])
    with pytest.raises(ValueError, match=r"a.fq has more records than .*b.fq \(1\)"):
        list(db.filter(str(r1), read2=str(r2)))
    with pytest.raises(TypeError, match="both files .* or both records"):
        db.filter(str(r1), read2=[("x/2", "ACGT")])
    with pytest.raises(TypeError, match="read2: paired reads are one file per mate"):
        db.filter(str(r1), read2=[str(r2), str(r2)])
    text = seqmatch.compile([("w", "word")], alphabet="text")
    with pytest.raises(ValueError, match=r"lines=True reads text; paired reads \(read2\) are FASTA or FASTQ"):
        text.filter(str(r1), read2=str(r2), lines=True)
    assert list(db.filter([], read2=[])) == []


# ------------------------------------------- barcode pairs, both orientations

def orientation_table(rng, rc_barcode2):
    """Samples of barcode pairs, with two built to tie: s_tie_a (X, Y) and
    s_tie_b name the same read X...Y (X...rc Y with rc_barcode2), one
    forward and one reversed; s_same lists its pair both ways (the same
    sample either way)."""
    samples = [(f"s{i}", random_dna(rng, 8), random_dna(rng, 8)) for i in range(4)]
    x, y, p, q = (random_dna(rng, 8) for _ in range(4))

    def other_way(b1, b2):
        return (b2, b1) if rc_barcode2 else (revcomp(b2), revcomp(b1))

    samples += [("s_tie_a", x, y), ("s_tie_b", *other_way(x, y)), ("s_same", p, q), ("s_same", *other_way(p, q))]
    return samples


def oriented_reads(rng, samples, n, rc_barcode2, reversed_from=None):
    """FASTQ reads of the constructs (barcode1, insert, barcode2 as it reads
    at the end), half of them reverse complemented whole, some with an
    error, a shorter end or no barcode; the names of the reversed reads of
    samples s0..s3 go in reversed_from."""
    reads = []
    for i in range(n):
        sample, b1, b2 = rng.choice(samples)
        end = revcomp(b2) if rc_barcode2 else b2
        if rng.random() < 0.2:
            b1 = substituted(rng, b1)
        if rng.random() < 0.1:
            end = end[1:]
        seq = b1 + random_dna(rng, rng.randrange(0, 40)) + end
        if rng.random() < 0.5:
            seq = revcomp(seq)  # the construct read from its other end
            if reversed_from is not None and sample[1:].isdigit():
                reversed_from.add(f"read{i}")
        if rng.random() < 0.05:
            seq = random_dna(rng, rng.randrange(0, 30))
        seq = sprinkled(rng, seq)
        reads.append((f"read{i}", seq, "".join(chr(33 + rng.randrange(41)) for _ in seq)))
    return reads


@pytest.mark.parametrize("options", [[], ["-m", "1"], ["-k", "1", "--trim"], ["-m", "1", "--barcode-tag"],
                                     ["--rc-barcode2", "--trim", "--barcode-tag"],
                                     ["-m", "1", "--trim", "--barcode-tag"]])
def test_barcode_pairs_both_orientations_equal_the_command(options, tmp_path):
    rng = random.Random(3900 + 7 * len(options) + len("".join(options)))
    rc = "--rc-barcode2" in options
    samples = orientation_table(rng, rc)
    table = tmp_path / "pairs.tsv"
    table.write_text("".join("\t".join(s) + "\n" for s in samples))
    reversed_reads = set()
    reads = oriented_reads(rng, samples, 150 * ROUNDS, rc, reversed_reads)
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    out, stats_path = tmp_path / "out", tmp_path / "stats.json"
    cli("demux", "--barcodes", table, "--strand", "both", *options, "--stats-json", stats_path, "-o", out, fastq,
        status=(0,))
    kwargs = {"mismatches": 1} if "-m" in options else {"edits": 1} if "-k" in options else {}
    pairs = seqmatch.BarcodePairs(table, rc_barcode2=rc, **kwargs)
    pass_kwargs = {"trim": "--trim" in options, "barcode_tag": "--barcode-tag" in options}
    demuxed = pairs.demux(str(fastq), strand="both", threads=rng.choice([1, 2]), **pass_kwargs)
    got = {}
    reversed_assigned = 0
    for sample, rec in demuxed:
        got.setdefault(f"{sample or 'unassigned'}.fastq", []).append(rec.raw)
        reversed_assigned += sample is not None and rec.name in reversed_reads
    assert sample_files(out) == {k: b"".join(v) for k, v in got.items()}
    want = report(stats_path)
    assert demuxed.stats == {k: want[k] for k in ("reads", "bases", "patterns", "samples", "unassigned")}
    # reversed reads were assigned, the tie left unassigned, the pair listed both ways assigned
    assert want["unassigned"]["ambiguous"] > 0 and "s_same.fastq" in got and len(got) > 4
    assert reversed_assigned > len(reversed_reads) // 2
    one_way = sum(s is not None and r.name in reversed_reads for s, r in pairs.demux(str(fastq)))
    assert one_way < reversed_assigned // 4
    # the reads as Python objects: the same samples, cuts and tags
    from_file = list(pairs.demux(str(fastq), strand="both", **pass_kwargs))
    in_memory = list(pairs.demux(reads, strand="both", **pass_kwargs))
    assert [s for s, _ in in_memory] == [s for s, _ in from_file]
    for (_, item), (_, rec) in zip(in_memory, from_file):
        lines = rec.raw.decode().split("\n")
        assert (item[0] if pass_kwargs["barcode_tag"] else item[0] + " x", item[1], item[2]) == \
            (lines[0][1:].replace(" x", "", 1) if pass_kwargs["barcode_tag"] else lines[0][1:], lines[1], lines[3])


def test_barcode_pairs_both_orientations_decide_as_the_command():
    x, y = "AACCGGTA", "GTTTCAGC"
    table = [("fwd", x, y), ("rev", "CCCCAAAA", "GGGGTTTT")]
    pairs = seqmatch.BarcodePairs(table, mismatches=1)
    read = x + "TTTTTTTTTT" + y
    assert [s for s, _ in pairs.demux([("a", read)], strand="both")] == ["fwd"]
    assert [s for s, _ in pairs.demux([("a", revcomp(read))], strand="both")] == ["fwd"]
    assert [s for s, _ in pairs.demux([("a", revcomp(read))])] == [None]
    # the orientation with fewer errors in all wins: forward has 1, reversed 0
    other = "CCCCAAAA" + "TTTTTTTTTT" + "GGGGTTTT"
    mixed = "CCCCAAAA"[:3] + "G" + "CCCCAAAA"[4:] + "TTTTTTTTTT" + "GGGGTTTT"
    assert [s for s, _ in pairs.demux([("a", other), ("b", mixed), ("c", revcomp(mixed))], strand="both")] == \
        ["rev", "rev", "rev"]
    tie = seqmatch.BarcodePairs([("a", x, y), ("b", revcomp(y), revcomp(x))])
    demuxed = tie.demux([("t", read)], strand="both")
    assert list(demuxed) == [(None, ("t", read))]
    assert demuxed.stats["unassigned"] == {"no_hit": 0, "ambiguous": 1, "unlisted": 0}
    same = seqmatch.BarcodePairs([("a", x, y), ("a", revcomp(y), revcomp(x))])
    assert [s for s, _ in same.demux([("t", read)], strand="both")] == ["a"]


def test_barcode_pairs_strand_errors(tmp_path):
    pairs = seqmatch.BarcodePairs([("a", "AACCGGTA", "GTTTCAGC")])
    with pytest.raises(ValueError, match=r"strand='-' is not one of '\+', 'both'"):
        pairs.demux([("r", "ACGT")], strand="-")
    with pytest.raises(ValueError, match=r'strand="both" is for single reads .* with read2'):
        pairs.demux([("r", "ACGT")], read2=[("r", "ACGT")], strand="both")


# ------------------------------------------------------------------ close

def open_files():
    """The files this process holds open or mapped (plain files are read
    mapped), where /proc shows them."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            held.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass  # the listing's own
    with open("/proc/self/maps") as maps:
        held.update(line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6)
    return held


def test_close_ends_search_filter_and_demux(tmp_path):
    rng = random.Random(3650)
    patterns = [(f"p{i}", random_dna(rng, 8)) for i in range(3)]
    # a few MiB: a pass hands out its first items long before the end (the runner works in 1 MiB pieces)
    insert = random_dna(rng, 80)
    reads = [(f"r{i}", insert[i % 50:] + planted(rng, patterns, 0.8), "") for i in range(16000)]
    reads = [(n, s, "I" * len(s)) for n, s, _ in reads]
    fastq = tmp_path / "r.fq"
    write_fastq(fastq, reads)
    db = seqmatch.compile(patterns)
    barcodes = seqmatch.compile(patterns, strands="+")

    def mate2_like(t):
        """The same reads as mate 2, given as t is."""
        if isinstance(t, str):
            return t
        return io.BytesIO(fastq.read_bytes()) if isinstance(t, io.BytesIO) else list(reads)

    passes = [
        lambda t: db.search(t, threads=2),
        lambda t: db.filter(t),
        lambda t: db.filter(t, read2=mate2_like(t)),
        lambda t: barcodes.demux(t, anchor=None),
    ]
    for make in passes:
        everything = list(itertools.islice(make(str(fastq)), 2))
        run = make(str(fastq))
        first = next(run)
        assert first == everything[0]
        so_far = run.stats
        run.close()
        held = open_files()
        assert held is None or str(fastq) not in held  # let go
        assert list(run) == [] and run.stats == so_far
        with pytest.raises(StopIteration):
            next(run)
        run.close()  # again: nothing
        run.stats["patterns"].clear()  # a copy: what was kept stays
        assert run.stats == so_far
        # a with block closes it; what the block read is kept
        with make(str(fastq)) as inside:
            assert next(inside) == everything[0] and next(inside) == everything[1]
        assert list(inside) == []
        # records given as a generator, a file object: let go at close (a path's reader may have read
        # a small file ahead and closed it: these show that the reader and the target are let go)
        gen = (r for r in reads)
        ref = weakref.ref(gen)
        run = make(gen)
        del gen
        next(run)
        run.close()
        gc.collect()
        assert ref() is None
        f = io.BytesIO(fastq.read_bytes())
        ref = weakref.ref(f)
        run = make(f)
        del f
        next(run)
        run.close()
        assert ref() is None
        # closed before a first item: nothing read, counts zero
        run = make(str(fastq))
        run.close()
        assert list(run) == [] and all(v == 0 for group in run.stats.values() if isinstance(group, dict)
                                       for v in group.values())
    # the with form returns the pass itself; a count pass is unaffected
    hits = db.search(str(fastq))
    with hits as same:
        assert same is hits
    assert db.count(str(fastq)) == db.count(str(fastq))


def test_close_of_trim_and_barcode_pairs_lets_files_go(tmp_path):
    fastq = tmp_path / "r.fq"
    seq = "ACGTAGATCGGAAGAGCTT" + "T" * 40 + "AAGAGCTT"
    write_fastq(fastq, [(f"r{i}", seq, "I" * len(seq)) for i in range(30000)])
    trimmed = seqmatch.Adapters(back="AGATCGGAAGAGC").trim(str(fastq))
    next(trimmed)
    trimmed.close()
    held = open_files()
    assert (held is None or str(fastq) not in held) and list(trimmed) == [] and trimmed.stats["records"] >= 1
    pairs = seqmatch.BarcodePairs([("a", "ACGTAGAT", "AAGAGCTT")])
    with pairs.demux(str(fastq), strand="both") as demuxed:
        assert next(demuxed)[0] == "a"
    held = open_files()
    assert (held is None or str(fastq) not in held) and list(demuxed) == []
