"""A program using the package as its users do, checked by mypy --strict
through the installed package (py.typed, the stubs) and run by
test_typing.py: the types it states are the ones the package gives."""
import io
import sys
from typing import Dict, Iterator, List, Optional, Tuple

import seqmatch


def main(path: str) -> None:
    db: seqmatch.Database = seqmatch.compile([("EcoRI", "GAATTC"), ("BamHI", "GGATCC")], mismatches=1)
    one = seqmatch.compile("GAATTC", edits=1, report="ends")
    hits: List[seqmatch.Hit] = db.scan(b"TTGAATTCAA", cigar=True, strand="+", max_hits=10)
    for hit in hits:
        start: int = hit.start
        index: int = hit.index
        cigar: Optional[str] = hit.cigar
        fields: Dict[str, object] = hit._asdict()
        assert start >= 0 and index == 0 and cigar and fields["pattern"] == "EcoRI"
    columns: seqmatch.HitColumns = one.scan(memoryview(b"GAATTC"), arrays=True)
    assert columns.rows > 0 and columns.patterns == ["GAATTC"]
    found: Iterator[seqmatch.Hit] = db.search([path, path], threads=1, anchor=None)
    files = {h.file for h in found}
    assert files == {path}
    records: List[Tuple[str, str]] = [("r1", "GAATTCGGATCC"), ("r2", "TTTT")]
    counts: Dict[str, int] = db.count(records)
    per_file: List[Tuple[Optional[str], Dict[str, int]]] = db.count([path, io.BytesIO(b">r\nGAATTC\n")],
                                                                  per_file=True)
    assert counts["EcoRI"] == 2 and len(per_file) == 2
    table: seqmatch.HitColumns = db.search(path, arrays=True)
    assert table.files == [path]
    for barcode, record in db.demux(records):
        name: Optional[str] = barcode
        assert name in ("EcoRI", None) and record
    kept = [r for r in db.filter(records, invert=True)]
    assert kept == [("r2", "TTTT")]
    patterns: List[Tuple[str, str]] = seqmatch.read_patterns(path)
    assert patterns and seqmatch.library_version()
    again: seqmatch.Database = seqmatch.from_bytes(db.to_bytes())
    assert again.patterns == db.patterns and len(again) == 2
    primers = seqmatch.Primers([("p", "GAATTC", "GGATCC")], mismatches=1)
    products: seqmatch.AmpliconPass = primers.amplicons(records, max_size=500, sequence=True)
    for product in products:
        size: int = product.size
        product_seq: Optional[str] = product.sequence
        assert size == 12 and product_seq == "GAATTCGGATCC" and product.pair == "p"
    amplicon_stats: Dict[str, int] = products.stats
    assert amplicon_stats["products"] == 1
    adapters = seqmatch.Adapters(back=["GGATCC"], front="^GAA")
    with adapters.trim(records, minimum_length=1, discard=None) as reads:
        for read in reads:
            left: str = read.sequence
            adapter: Optional[str] = read.adapter
            assert left and adapter in ("GGATCC", "^GAA", None)
    trim_stats: Dict[str, int] = reads.stats
    assert trim_stats["records"] >= 1
    dual = seqmatch.BarcodePairs([("s1", "GAATTC", "GGATCC")], mismatches=1, rc_barcode2=True)
    samples: List[str] = dual.samples
    for sample, record in dual.demux(records):
        found_sample: Optional[str] = sample
        assert found_sample in samples or (found_sample is None and record)
    # paired reads, demux's trim and tag, the run counts
    mates: List[Tuple[str, str]] = [("r1", "CCGAATTCAAGGATCC"), ("r2", "TT")]
    both = seqmatch.Adapters(back="GGATCC", back2="GAATTC")
    with both.trim(records, read2=mates) as pairs:
        for mate1, mate2 in pairs:
            first: seqmatch.Trimmed = mate1
            assert first.name == mate2.name
    pair_stats: Dict[str, int] = pairs.stats
    assert pair_stats["reads"] == 2 * pair_stats["records"]
    single: seqmatch.TrimPass = adapters.trim(records, read2=None)
    assert single is not None
    paired_dual = seqmatch.BarcodePairs([("s1", "GAATTC", "GGATCC")])
    demuxed: seqmatch.DemuxPass = paired_dual.demux(records, read2=mates, trim=True, barcode_tag=True)
    for sample, (m1, m2) in demuxed:
        assert sample in (None, "s1") and m1 and m2
    dual_stats: Dict[str, object] = demuxed.stats
    assert "samples" in dual_stats
    searched: seqmatch.SearchPass = db.search(records)
    assert sum(1 for _ in searched) == searched.stats["hits"]["total"]
    filtered: seqmatch.RecordPass = db.filter(records)
    assert list(filtered) and filtered.stats["reads"]["input"] == 2
    by_barcode: seqmatch.BarcodePass = db.demux(records, trim=True, barcode_tag=True)
    for barcode, record in by_barcode:
        assert barcode in ("EcoRI", None) and record
    assert by_barcode.stats["reads"]["input"] == 2
    for barcode, (first_mate, second_mate) in db.demux(records, read2=mates, barcode_read=2):
        assert barcode in ("EcoRI", None) and first_mate and second_mate
    # paired filter, barcode pairs in both orientations, closing a pass
    with db.filter(records, read2=mates, invert=True) as kept_pairs:
        for kept1, kept2 in kept_pairs:
            assert kept1 and kept2
    kept_pairs.close()
    assert kept_pairs.stats["reads"]["input"] == 2
    either_way: seqmatch.DemuxPass = dual.demux(records, strand="both", trim=True)
    assert [sample for sample, _ in either_way]
    hits_so_far: seqmatch.SearchPass = db.search(records)
    with hits_so_far as same_pass:
        next(same_pass)
    assert list(hits_so_far) == []
    by_barcode.close()


if __name__ == "__main__":
    main(sys.argv[1])
