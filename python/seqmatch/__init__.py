"""seqmatch: find many patterns at once in DNA and text.

Python bindings over the seqmatch C library (compiled into the extension):
the same engines, the same hits as the ``seqmatch`` command.

    >>> import seqmatch
    >>> db = seqmatch.compile(["GAATTC", ("BamHI", "GGATCC")])
    >>> [(h.pattern, h.strand, h.start, h.end) for h in db.scan("TTGAATTCAGGATCCA")]
    [('GAATTC', '+', 2, 8), ('GAATTC', '-', 2, 8), ('BamHI', '+', 9, 15), ('BamHI', '-', 9, 15)]

Semantics (as the command's):

* Coordinates are 0-based and half-open, ``[start, end)``, on the forward
  strand, line breaks removed (BED-style).
* DNA (the default alphabet) is case-insensitive, ``U`` reads as ``T``, and
  pattern letters may be IUPAC codes (R Y S W K M B D H V N). A text ``N``
  or IUPAC code matches nothing unless ``text_iupac=True``.
* Both strands by default: a ``'-'`` hit is a hit of the pattern's reverse
  complement on the forward text, reported in forward coordinates.
* Every occurrence is reported, overlapping ones included, in the order
  (record, start, end, pattern index, strand).
* ``mismatches=k``: every window of the pattern's length with at most k
  mismatches. ``edits=k``: Levenshtein distance; for each run of
  consecutive end positions within k edits, the end with the fewest
  (``report="best"``, the default), or every end (``report="ends"``); the
  start is the largest one giving that distance.

Where the hits come from:

* ``Database.scan(sequence)``: one sequence in memory (str, bytes or any
  object with the buffer protocol).
* ``Database.search(target)``, ``count``, ``filter``, ``demux``: a target is
  a path (FASTA/FASTQ, plain, gzip, BGZF or zstd; ``"-"`` is standard
  input), a binary or text file object (``sys.stdin.buffer``,
  ``gzip.open(...)``, ``io.BytesIO``), a list or tuple of those (searched
  one after the other; every hit names its file), or any other iterable of
  records: ``(name, sequence)`` pairs, or longer tuples whose first two
  items are those (``(name, sequence, quality)``).

Many hits: ``search(..., arrays=True)`` and ``scan(..., arrays=True)`` give
the hits as columns (``HitColumns``: numpy arrays when numpy is installed,
else ``array.array``) without a Python object per hit.

Scans release the GIL: several threads can scan with one database at once.
"""

from __future__ import annotations

import array as _array
import errno as _errno
import importlib as _importlib
import os as _os
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    NamedTuple,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
    cast as _cast,
    overload,
)

from . import _seqmatch

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

    #: A sequence: a str (its UTF-8 bytes) or any object with the buffer protocol.
    SequenceLike = Union[str, ReadableBuffer]
else:
    SequenceLike = Union[str, bytes, bytearray, memoryview]

__all__ = [
    "compile", "load", "from_bytes", "read_patterns", "Database", "Hit", "Record", "HitColumns", "Site",
    "library_version", "Primers", "PrimerPair", "Amplicon", "AmpliconPass", "Adapters", "Trimmed", "TrimPass",
    "PairTrimPass", "BarcodePairs", "DemuxPass", "SearchPass", "RecordPass", "BarcodePass",
]
__version__ = "0.1.0"

PathLike = Union[str, bytes, "_os.PathLike[str]", "_os.PathLike[bytes]"]
PatternItem = Union[SequenceLike, Tuple[Union[str, bytes], SequenceLike]]
#: What compile takes: one pattern (a str or bytes-like sequence), an
#: iterable of sequences or (name, sequence) pairs, or a {name: sequence} map.
Patterns = Union[SequenceLike, Mapping[str, SequenceLike], Iterable[PatternItem]]
#: A record given to search, count, filter or demux: (name, sequence, ...).
RecordItem = Sequence[Any]
#: A search target: a path, a file object, a list of those, or records.
Target = Union[PathLike, Any, Sequence[Union[PathLike, Any]], Iterable[RecordItem]]


class Hit(NamedTuple):
    """One hit. Coordinates are 0-based and half-open, on the forward
    strand, whatever the strand. A named tuple: ``hit._asdict()``,
    ``hit._replace(...)``, ``Hit._fields``; ``pandas.DataFrame(hits)`` names
    its columns after the fields."""

    pattern: str
    strand: str
    start: int
    end: int
    errors: int
    matched: str
    record: Optional[str]
    file: Optional[str]
    index: int  # type: ignore[assignment]  # (a field named as tuple.index, as before)
    cigar: Optional[str]


class Site(NamedTuple):
    """A guide site's best alignment (Database.site): its bulge ("none",
    "DNA" or "RNA") and size, its mismatches, and the two rows off-target
    tools print, 5' to 3' on the site's strand with the PAM: the guide with
    '-' at the genome bases of a DNA bulge, the site with its mismatched
    bases in lower case and '-' at the guide bases of an RNA bulge."""

    bulge: str
    bulge_size: int
    mismatches: int
    guide_aligned: str
    site_aligned: str


class Record(NamedTuple):
    """A record of a file, as filter and demux hand it out."""

    name: str
    sequence: str
    raw: bytes


def _document(cls: Any, docs: Dict[str, str]) -> None:
    for field, doc in docs.items():
        getattr(cls, field).__doc__ = doc


_document(Hit, {
    "pattern": "the pattern's name",
    "strand": "'+' or '-' (a '-' hit is one of the pattern's reverse complement)",
    "start": "0-based start on the forward strand (BED-style)",
    "end": "end, exclusive; past the record's length for a circular hit over its end",
    "errors": "mismatches or edits (0 for exact hits)",
    "matched": "the text of the hit, forward strand, as in the input (bytes as Latin-1)",
    "record": "the record's name (search), or None (scan, or a record given without one)",
    "file": "the target the record came from (a path, 'stdin' or a file object's name), or None (scan, records "
            "given as Python objects)",
    "index": "the pattern's index in the compiled set",
    "cigar": "the alignment (=, X, I, D) when asked for with cigar=True, else None",
})
_document(Record, {
    "name": "the header's first word",
    "sequence": "the sequence, line breaks removed, bytes as in the file (as Latin-1)",
    "raw": "the record exactly as read (header, sequence lines, FASTQ '+' and quality lines, line ends): "
           "writing it reproduces the input's bytes",
})

# Columns of the columnar results: name, array.array type code, numpy type.
_COLUMNS = (
    ("pattern", "i", "int32"),
    ("strand", "b", "int8"),
    ("start", "q", "int64"),
    ("end", "q", "int64"),
    ("errors", "i", "int32"),
    ("record", "q", "int64"),
    ("file", "i", "int32"),
)

_numpy: Any
try:  # numpy is optional: without it the columns are array.array
    _numpy = _importlib.import_module("numpy")
except ImportError:  # pragma: no cover - depends on the environment
    _numpy = None


class HitColumns(Dict[str, Any]):
    """Hits as columns, one array per field (a dict: ``cols["start"]``;
    ``pandas.DataFrame(cols)`` makes a table of it):

    * ``pattern``: the pattern's index (``.patterns`` names it), int32
    * ``strand``: +1 or -1, int8
    * ``start``, ``end``: int64, as Hit's
    * ``errors``: int32
    * ``record``: index into ``.records``, the names of the records with
      hits in their order (None for scan), int64
    * ``file``: index into ``.files``, the targets' names, int32

    Each column is a numpy array when numpy is installed, else an
    ``array.array`` of the same type (``numpy.asarray`` takes it later
    without a copy). ``len(cols)`` is the number of columns; ``cols.rows``
    the number of hits.
    """

    patterns: List[str]
    records: List[Optional[str]]
    files: List[Optional[str]]

    @property
    def rows(self) -> int:
        """The number of hits."""
        return len(self["start"])

    def __repr__(self) -> str:
        return f"<seqmatch.HitColumns of {self.rows} hits>"


def _columns(raw: Dict[str, bytearray], patterns: List[str], records: List[Optional[str]],
             files: List[Optional[str]]) -> HitColumns:
    out = HitColumns()
    for name, code, dtype in _COLUMNS:
        data = raw[name]
        if _numpy is not None:
            out[name] = _numpy.frombuffer(data, dtype=dtype)
        else:
            column = _array.array(code)
            column.frombytes(data)
            out[name] = column
    out.patterns = patterns
    out.records = records
    out.files = files
    return out


_ALPHABETS = {"dna": 0, "text": 1}
_STRANDS = {"both": 0, "+": 1, "forward": 1, "-": 2, "reverse": 2}
_SCAN_STRANDS = {None: "", "both": "", "+": "+", "forward": "+", "-": "-", "reverse": "-"}
_ANCHORS = {None: 0, "any": 0, "start": 1, "end": 2}
_REPORTS = {"best": 0, "ends": 1}
# the library's registry: every engine it has, by the name --engine gives it
_ENGINES = {"auto": 0, **dict(_seqmatch._engines())}
_FLAG_IGNORE_CASE = 1
_FLAG_TEXT_IUPAC = 2
_INPUT_AUTO, _INPUT_TEXT, _INPUT_LINES = 0, 3, 4
_MODE_HITS, _MODE_COUNT, _MODE_ARRAYS, _MODE_FILTER, _MODE_DEMUX, _MODE_AMPLICON, _MODE_TRIM, _MODE_PAIRS = range(8)
_TARGET_PATH, _TARGET_FILE, _TARGET_RECORDS, _TARGET_PAIR = range(4)


def library_version() -> str:
    """The version of the C library compiled into this package."""
    return _seqmatch._library_version()


def _as_bytes(value: object, what: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return memoryview(value).tobytes()  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what} must be str or a bytes-like object, not {type(value).__name__}") from None


def _choice(table: Mapping[Any, Any], value: object, what: str) -> Any:
    try:
        return table[value]
    except (KeyError, TypeError):
        shown = ", ".join(repr(k) for k in table)
        raise ValueError(f"{what}={value!r} is not one of {shown}") from None


def _count_argument(value: object, what: str, none: bool = True) -> None:
    if value is None and none:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int{' or None' if none else ''}, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what} must be 0 or more, not {value}")


def _is_sequence_like(value: object) -> bool:
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return True
    try:
        memoryview(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def _pattern_items(patterns: object) -> List[Tuple[Optional[bytes], bytes]]:
    """(name or None, sequence) pairs of compile's patterns argument."""
    if _is_sequence_like(patterns):
        # a str (or bytes) is one pattern, never a list of one-letter patterns
        return [(None, _as_bytes(patterns, "patterns"))]
    if isinstance(patterns, _os.PathLike):
        raise TypeError("patterns is a path: read the file with seqmatch.read_patterns(path) and compile that")
    if isinstance(patterns, Mapping):
        pairs: Iterable[object] = list(patterns.items())
    else:
        try:
            pairs = iter(patterns)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError("patterns must be a str, a bytes-like object, a {name: sequence} mapping or an "
                            f"iterable of patterns, not {type(patterns).__name__}") from None
    items: List[Tuple[Optional[bytes], bytes]] = []
    for p in pairs:
        if isinstance(p, tuple):
            if len(p) != 2:
                raise ValueError(f"a (name, sequence) pair has 2 items, not {len(p)}")
            name, seq = _as_bytes(p[0], "a pattern's name"), _as_bytes(p[1], "a pattern")
            if b"\0" in name:
                raise ValueError(f"pattern name {p[0]!r} holds a NUL byte")
            items.append((name, seq))
        else:
            items.append((None, _as_bytes(p, "a pattern")))
    return items


def compile(patterns: Patterns, alphabet: str = "dna", strands: str = "both", mismatches: int = 0,
            edits: int = 0, *, pam: Optional[Union[str, bytes]] = None, report: str = "best",
            ignore_case: bool = False, text_iupac: bool = False, engine: str = "auto",
            pam5: Optional[Union[str, bytes]] = None, dna_bulges: int = 0, rna_bulges: int = 0) -> Database:
    """Compiles patterns into a Database.

    patterns: one pattern (a str, or bytes or another bytes-like object: the
        sequence is also its name), a {name: sequence} mapping, or an
        iterable (list, tuple, generator) of sequences and (name, sequence)
        pairs in any mix. ``compile("GAATTC")`` is one pattern;
        ``compile(["GAATTC", "GGATCC"])`` two. Duplicate patterns are
        distinct patterns; an empty one is an error. A pattern file:
        ``compile(read_patterns("primers.fa"))``.
    alphabet: "dna" (default) or "text" (raw bytes, one strand: words,
        protein, anything that is not DNA).
    strands: "both" (default), "+" or "-" (dna).
    mismatches: allow up to k mismatches (Hamming distance), or
    edits: allow up to k edits (Levenshtein distance); not both. k must be
        below every pattern's length (else every window would be a hit).
    pam: dna: a PAM (IUPAC, e.g. "NGG") on every pattern's 3' side that must
        match exactly; errors count in the pattern (the guide) only.
    pam5: the same with the PAM on the 5' side (Cas12a: "TTTV"); not with pam.
    dna_bulges, rna_bulges: with a PAM and mismatches, a site may also have
        one bulge (at most one, of one kind, inside the protospacer) of 1 to
        N genome bases with no partner in the guide (DNA) or guide bases with
        no partner in the genome (RNA), N at most 8, as Cas-OFFinder 3
        counts them; each site once, with its best alignment (no bulge, the
        smaller bulge, fewer mismatches, the bulge nearest the PAM);
        Hit.errors is its mismatches, Database.site(hit) its alignment.
    report: edits: "best" (one hit per run of ends, default) or "ends".
    ignore_case: text: ASCII letters match either case.
    text_iupac: dna: IUPAC codes in the text match by set intersection.
    engine: force an engine ("auto" lets the planner choose; every engine
        gives the same hits).

    Raises ValueError for a bad pattern or option, TypeError for an
    argument of the wrong type; messages name the arguments. The GIL is
    released while the database is built.
    """
    for what, k in (("dna_bulges", dna_bulges), ("rna_bulges", rna_bulges)):
        _count_argument(k, what, none=False)
        if k > 8:
            raise ValueError(f"{what} must be at most 8, not {k}")
    if pam is not None and pam5 is not None:
        raise ValueError("pam and pam5 cannot be combined: give one PAM")
    pam_side = 1 if pam5 is not None else 0
    if pam5 is not None:
        pam = pam5
    if (dna_bulges or rna_bulges) and (pam is None or edits):
        raise ValueError("dna_bulges and rna_bulges need a PAM (pam= or pam5=) and mismatches=, not edits")
    for what, k in (("mismatches", mismatches), ("edits", edits)):
        _count_argument(k, what, none=False)
        if k > 65535:
            raise ValueError(f"{what} must be at most 65535, not {k}")
    if mismatches and edits:
        raise ValueError("mismatches and edits cannot be combined: give one of them")
    alphabet_id = _choice(_ALPHABETS, alphabet, "alphabet")
    strands_id = _choice(_STRANDS, strands, "strands")
    report_id = _choice(_REPORTS, report, "report")
    engine_id = _choice(_ENGINES, engine, "engine")
    if report != "best" and not edits:
        raise ValueError(f"report={report!r} applies to edits only")
    if alphabet == "text":
        if strands != "both" and strands_id != 1:
            raise ValueError('strands="-" applies to alphabet="dna" only (text has one strand)')
        if pam is not None:
            raise ValueError('pam applies to alphabet="dna" only')
        if text_iupac:
            raise ValueError('text_iupac=True applies to alphabet="dna" only')
    elif ignore_case:
        raise ValueError('ignore_case=True applies to alphabet="text" only (dna is always case-insensitive)')
    match, k = (1, mismatches) if mismatches else (2, edits) if edits else (0, 0)
    items = _pattern_items(patterns)
    if not items:
        raise ValueError("no patterns given")
    if k:
        for name, seq in items:
            if len(seq) and len(seq) <= k:
                kind = "mismatches" if match == 1 else "edits"
                shown = (name or seq).decode("utf-8", "replace")
                raise ValueError(f"pattern {shown!r} has {len(seq)} symbols and {kind}={k} allows that many or "
                                 f"more: every {'window' if match == 1 else 'position'} would be a hit; "
                                 f"use {kind}={len(seq) - 1} or less")
    flags = (_FLAG_IGNORE_CASE if ignore_case else 0) | (_FLAG_TEXT_IUPAC if text_iupac else 0)
    pam_text = None
    if pam is not None:
        pam_text = _as_bytes(pam, "pam").decode("ascii", "replace")
        if not pam_text:
            raise ValueError("pam is empty")
    try:
        raw = _seqmatch._compile(items, alphabet_id, strands_id, match, k, report_id, flags, engine_id, pam_text,
                                 pam_side, dna_bulges, rna_bulges)
    except ValueError as e:
        if alphabet == "dna" and "is not a DNA or IUPAC symbol" in str(e) and "PAM" not in str(e):
            raise ValueError(f'{e}; for words, protein or other text compile with alphabet="text"') from None
        raise
    return _cast(Database, raw)


def load(path: PathLike) -> Database:
    """Loads a database saved by Database.save or `seqmatch compile -o`."""
    return _cast(Database, _seqmatch._load(_os.fspath(path)))


def from_bytes(data: SequenceLike) -> Database:
    """A database from the bytes of Database.to_bytes (checked as a file is)."""
    return _cast(Database, _seqmatch._from_bytes(data))


def read_patterns(path: PathLike) -> List[Tuple[str, str]]:
    """The patterns of a file, read as ``seqmatch search -p`` reads them,
    as (name, sequence) pairs for compile: FASTA (name = the header's first
    word), or one pattern per line (the line is its name); gzip allowed.
    Errors name the file and line."""
    return _seqmatch._read_patterns(_os.fspath(path))


def _target_name(obj: object) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(name, bytes):
        return _os.fsdecode(name)
    return f"<{type(obj).__name__}>"


def _one_file(obj: object) -> Optional[Tuple[int, object, Optional[str]]]:
    """A path or file object as a target triple, else None."""
    if isinstance(obj, (str, bytes, _os.PathLike)):
        path = _os.fsencode(obj)
        if not path:
            raise ValueError("an empty path is not a target")
        if path != b"-":
            # as the command does: a target that cannot be read fails before any is
            _os.stat(path)
            if _os.path.isdir(path):
                raise IsADirectoryError(_errno.EISDIR, _os.strerror(_errno.EISDIR), _os.fsdecode(path))
        return (_TARGET_PATH, path, "stdin" if path == b"-" else _os.fsdecode(path))
    if hasattr(obj, "read") and not isinstance(obj, (list, tuple)):
        return (_TARGET_FILE, obj, _target_name(obj))
    return None


def _targets(target: object) -> List[Tuple[int, object, Optional[str]]]:
    """The (kind, object, shown name) triples of a target argument."""
    one = _one_file(target)
    if one is not None:
        return [one]
    if isinstance(target, (bytearray, memoryview)):
        raise TypeError("a target is a path, a file object or records; scan a sequence in memory with "
                        "Database.scan")
    if isinstance(target, (list, tuple)):
        if not target:
            raise ValueError("the list of targets is empty")
        files = [_one_file(t) for t in target]
        if all(f is not None for f in files):
            return files  # type: ignore[return-value]
        if any(f is not None for f in files):
            raise TypeError("a list of targets holds paths and file objects, or records (name, sequence), "
                            "not both")
        return [(_TARGET_RECORDS, target, None)]
    try:
        iter(target)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError("target must be a path, a file object, a list of those, or an iterable of "
                        f"(name, sequence) records, not {type(target).__name__}") from None
    return [(_TARGET_RECORDS, target, None)]


def _pair_targets(read1: object, read2: object) -> List[Tuple[int, object, Optional[str]]]:
    """A pair of mates as one target: two paths or file objects, or two
    iterables of records, read in step."""
    mates = []
    for what, obj in (("target", read1), ("read2", read2)):
        one = _one_file(obj)
        if one is None:
            if isinstance(obj, (list, tuple)) and obj and all(_one_file(t) is not None for t in obj):
                raise TypeError(f"{what}: paired reads are one file per mate, not a list of files")
            if isinstance(obj, (bytearray, memoryview)):
                raise TypeError(f"{what}: a path, a file object or records")
            try:
                iter(obj)  # type: ignore[call-overload]
            except TypeError:
                raise TypeError(f"{what} must be a path, a file object or an iterable of records, not "
                                f"{type(obj).__name__}") from None
            one = (_TARGET_RECORDS, obj, None)
        mates.append(one)
    if (mates[0][0] == _TARGET_RECORDS) != (mates[1][0] == _TARGET_RECORDS):
        raise TypeError("target and read2 are both files (paths or file objects) or both records")
    return [(_TARGET_PAIR, (mates[0], mates[1]), mates[0][2])]


class SearchPass(Iterator[Hit], Protocol):
    """What Database.search gives: an iterator of Hit, read as the hits are
    asked for, with ``stats``."""

    @property
    def stats(self) -> Dict[str, Any]:
        """The counts so far, as ``seqmatch search --stats-json`` reports
        them (all of them once the iterator is exhausted):
        ``{"records": {"input"}, "bases": {"input"}, "hits": {"total"},
        "patterns": [{"name", "hits"}, ...]}`` (patterns of one name added up)."""

    def close(self) -> None:
        """Ends the pass now: no more is read, its files and scanning
        threads are let go, the iterator is over; ``stats`` keep the counts
        so far. Closing again does nothing."""

    def __enter__(self) -> SearchPass:
        """``with db.search(...) as hits:`` closes the pass at the block's end."""

    def __exit__(self, *exc: object) -> bool:
        """close()"""


class RecordPass(Iterator[Any], Protocol):
    """What Database.filter gives: an iterator of records (with read2:
    pairs of them), with ``stats``."""

    @property
    def stats(self) -> Dict[str, Any]:
        """The counts so far, as ``seqmatch filter --stats-json`` reports
        them: ``{"reads": {"input", "output", "matched"}, "bases": {"input",
        "output"}, "patterns": [{"name", "records"}, ...]}``."""

    def close(self) -> None:
        """Ends the pass now: no more is read, its files and scanning
        threads are let go, the iterator is over; ``stats`` keep the counts
        so far. Closing again does nothing."""

    def __enter__(self) -> RecordPass:
        """``with db.filter(...) as kept:`` closes the pass at the block's end."""

    def __exit__(self, *exc: object) -> bool:
        """close()"""


class BarcodePass(Iterator[Tuple[Optional[str], Any]], Protocol):
    """What Database.demux gives: an iterator of (barcode or None, record)
    (with read2: (barcode or None, (mate 1, mate 2))), with ``stats``."""

    @property
    def stats(self) -> Dict[str, Any]:
        """The counts so far, as ``seqmatch demux --stats-json`` reports
        them: ``{"reads": {"input", "output"}, "bases": {"input", "output"},
        "patterns": [{"name", "records"}, ...], "samples": [{"name",
        "reads"}, ..., {"name": "unassigned", ...}], "unassigned":
        {"no_hit", "ambiguous"}}``."""

    def close(self) -> None:
        """Ends the pass now: no more is read, its files and scanning
        threads are let go, the iterator is over; ``stats`` keep the counts
        so far. Closing again does nothing."""

    def __enter__(self) -> BarcodePass:
        """``with db.demux(...) as assigned:`` closes the pass at the block's end."""

    def __exit__(self, *exc: object) -> bool:
        """close()"""


class Database(_seqmatch._Database):
    """A compiled, immutable pattern database (seqmatch.compile, seqmatch.load).

    One database may be used by any number of threads at once.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Database:
        raise TypeError("use seqmatch.compile, seqmatch.load or seqmatch.from_bytes")

    def __repr__(self) -> str:
        return f"<seqmatch.Database of {len(self)} patterns>"

    @property
    def patterns(self) -> List[str]:
        """The patterns' names, in index order."""
        return self._names

    @property
    def sequences(self) -> List[str]:
        """The patterns as compiled (dna: upper case, U as T; with their PAM)."""
        return self._sequences

    @property
    def info(self) -> Dict[str, Any]:
        """What the database holds: alphabet, strands, match kind and errors,
        pattern lengths, size in bytes and engines as (name, patterns, bytes)."""
        i: Dict[str, Any] = self._info()
        i["alphabet"] = {v: k for k, v in _ALPHABETS.items()}[i["alphabet"]]
        i["strands"] = ("both", "+", "-")[i["strands"]]
        i["match"] = ("exact", "mismatches", "edits")[i["match"]]
        i["report"] = ("best", "ends")[i["report"]]
        return i

    def site(self, hit: Hit) -> Site:
        """The best alignment of a hit of a guide database (compiled with
        pam= or pam5= and mismatches=, bulges or not), as
        ``seqmatch search --site`` prints it. Raises ValueError for a hit
        that is not a site of this database."""
        matched = hit.matched.encode("ascii", "replace")
        kind, size, _at, mismatches, guide, site = self._site(hit.index, hit.start, hit.end, hit.strand, matched)
        return Site(("none", "DNA", "RNA")[kind], size, mismatches, guide, site)

    def profile(self, hits: Iterable[Hit]) -> List[Dict[str, Any]]:
        """Per pattern, in index order, its sites counted by class, as
        ``seqmatch search --format profile-jsonl`` writes them: {"pattern",
        "sites", "mismatches": [count at 0..k], "dna_bulge": [[count at
        0..k] for each size 1..N], "rna_bulge": [...]}. A site's bulge
        follows from its length against its pattern's."""
        info = self._info()
        k = info["max_errors"] if info["match"] != 0 else 0
        dna, rna = info["dna_bulges"], info["rna_bulges"]
        bulges = bool(info["pam_length"] and (dna or rna))
        lengths = [len(s) for s in self._sequences]
        n = len(lengths)
        sites = [0] * n
        plain = [[0] * (k + 1) for _ in range(n)]
        dna_rows = [[[0] * (k + 1) for _ in range(dna)] for _ in range(n)]
        rna_rows = [[[0] * (k + 1) for _ in range(rna)] for _ in range(n)]
        for hit in hits:
            i = hit.index
            if hit.errors > k:
                continue
            sites[i] += 1
            length, m = hit.end - hit.start, lengths[i]
            if bulges and m < length <= m + dna:
                dna_rows[i][length - m - 1][hit.errors] += 1
            elif bulges and m - rna <= length < m:
                rna_rows[i][m - length - 1][hit.errors] += 1
            else:
                plain[i][hit.errors] += 1
        return [{"pattern": name, "sites": sites[i], "mismatches": plain[i], "dna_bulge": dna_rows[i],
                 "rna_bulge": rna_rows[i]} for i, name in enumerate(self._names)]

    def _strand(self, strand: Optional[str]) -> str:
        want = _choice(_SCAN_STRANDS, strand, "strand")
        if want:
            have = self._strands
            if have != 0 and "+-"[have - 1] != want:
                compiled = "+" if have == 1 else "-"
                raise ValueError(f"strand={strand!r}: the database was compiled with strands={compiled!r}; "
                                 "it has no hits on the other strand")
        return want  # type: ignore[no-any-return]

    def _pass_options(self, circular: bool, anchor: Optional[str], max_hits: Optional[int], threads: int,
                      lines: bool) -> Tuple[int, int]:
        """Checks a pass's options; (anchor id, input format)."""
        anchor_id = _choice(_ANCHORS, anchor, "anchor")
        if circular and anchor_id:
            raise ValueError(f"circular=True and anchor={anchor!r} cannot be used together (a circular record "
                             "has no start or end to anchor at)")
        _count_argument(max_hits, "max_hits")
        _count_argument(threads, "threads", none=False)
        text = self._alphabet == 1
        if lines and not text:
            raise ValueError('lines=True reads each line of a text file as a record: it needs a database '
                             'compiled with alphabet="text"')
        return anchor_id, (_INPUT_LINES if lines else _INPUT_TEXT) if text else _INPUT_AUTO

    if TYPE_CHECKING:
        # Database.scan is the extension's (_seqmatch._Database.scan, for the
        # cost of a call); these are its types. Its documentation:
        # help(seqmatch.Database.scan).
        @overload
        def scan(self, sequence: SequenceLike, *, circular: bool = ..., cigar: bool = ...,
                 strand: Optional[str] = ..., anchor: Optional[str] = ..., max_hits: Optional[int] = ...,
                 arrays: Literal[False] = ...) -> List[Hit]: ...

        @overload
        def scan(self, sequence: SequenceLike, *, circular: bool = ..., cigar: bool = ...,
                 strand: Optional[str] = ..., anchor: Optional[str] = ..., max_hits: Optional[int] = ...,
                 arrays: Literal[True]) -> HitColumns: ...

        @overload
        def scan(self, sequence: SequenceLike, *, circular: bool = ..., cigar: bool = ...,
                 strand: Optional[str] = ..., anchor: Optional[str] = ..., max_hits: Optional[int] = ...,
                 arrays: bool = ...) -> Union[List[Hit], HitColumns]: ...

        def scan(self, sequence: SequenceLike, *, circular: bool = False, cigar: bool = False,
                 strand: Optional[str] = None, anchor: Optional[str] = None, max_hits: Optional[int] = None,
                 arrays: bool = False) -> Union[List[Hit], HitColumns]: ...

    def _scan_options(self, sequence: SequenceLike, *, circular: bool = False, cigar: bool = False,
                      strand: Optional[str] = None, anchor: Optional[str] = None, max_hits: Optional[int] = None,
                      arrays: bool = False) -> Union[List[Hit], HitColumns]:
        """Database.scan with any option (the extension's scan hands every
        call but the plainest to this)."""
        strand_filter = self._strand(strand)
        anchor_id, _ = self._pass_options(circular, anchor, max_hits, 0, False)
        if anchor_id:
            records = [(None, sequence)]
            run = self._run_pass([(_TARGET_RECORDS, records, None)], _MODE_ARRAYS if arrays else _MODE_HITS, 1,
                                 _INPUT_AUTO, False, cigar, strand_filter, anchor_id, max_hits, False, False,
                                 (0, 0, 0, False))
            if arrays:
                raw, records_with_hits = run._finish()
                return _columns(raw, self.patterns, records_with_hits, [None])
            return list(run)
        out = self._scan(sequence, circular, cigar, strand_filter, max_hits, arrays)
        if arrays:
            return _columns(out, self.patterns, [None] if out["start"] else [], [None])
        return out  # type: ignore[no-any-return]

    def _pass(self, target: Target, mode: int, threads: int, circular: bool, cigar: bool, strand: Optional[str],
              anchor: Optional[str], max_hits: Optional[int], lines: bool, invert: bool = False,
              per_file: bool = False,
              ends: Tuple[int, Optional[int], Optional[int], bool] = (0, None, None, False),
              extra: Any = None, read2: Optional[Target] = None) -> Tuple[Any, List[Optional[str]]]:
        anchor_id, input_format = self._pass_options(circular, anchor, max_hits, threads, lines)
        _count_argument(ends[0], "min_overlap", none=False)
        for limit, name in ((ends[1], "max_hits_per_pattern"), (ends[2], "max_hits_per_record")):
            _count_argument(limit, name)
            if limit == 0:
                raise ValueError(f"{name}=0 would keep no hit; None is no limit")
        for value, name in ((ends[0], "min_overlap"), (ends[1], "max_hits_per_pattern"),
                            (ends[2], "max_hits_per_record")):
            if value is not None and value > 0xFFFFFFFF:
                raise ValueError(f"{name} must be at most 4294967295, not {value}")
        limits = (ends[0], ends[1] or 0, ends[2] or 0, bool(ends[3]))
        strand_filter = self._strand(strand)
        targets = _targets(target) if read2 is None else _pair_targets(target, read2)
        run = self._run_pass(targets, mode, threads, input_format, circular, cigar, strand_filter, anchor_id,
                            max_hits, invert, per_file, limits, extra)
        return run, [t[2] for t in targets]

    @overload
    def search(self, target: Target, *, threads: int = ..., circular: bool = ..., cigar: bool = ...,
               strand: Optional[str] = ..., anchor: Optional[str] = ..., max_hits: Optional[int] = ...,
               lines: bool = ..., min_overlap: int = ..., max_hits_per_pattern: Optional[int] = ...,
               max_hits_per_record: Optional[int] = ..., fewest_errors: bool = ...,
               arrays: Literal[False] = ...) -> SearchPass: ...

    @overload
    def search(self, target: Target, *, threads: int = ..., circular: bool = ..., cigar: bool = ...,
               strand: Optional[str] = ..., anchor: Optional[str] = ..., max_hits: Optional[int] = ...,
               lines: bool = ..., min_overlap: int = ..., max_hits_per_pattern: Optional[int] = ...,
               max_hits_per_record: Optional[int] = ..., fewest_errors: bool = ...,
               arrays: Literal[True]) -> HitColumns: ...

    @overload
    def search(self, target: Target, *, threads: int = ..., circular: bool = ..., cigar: bool = ...,
               strand: Optional[str] = ..., anchor: Optional[str] = ..., max_hits: Optional[int] = ...,
               lines: bool = ..., min_overlap: int = ..., max_hits_per_pattern: Optional[int] = ...,
               max_hits_per_record: Optional[int] = ..., fewest_errors: bool = ...,
               arrays: bool = ...) -> Union[SearchPass, HitColumns]: ...

    def search(self, target: Target, *, threads: int = 0, circular: bool = False, cigar: bool = False,
               strand: Optional[str] = None, anchor: Optional[str] = None, max_hits: Optional[int] = None,
               lines: bool = False, min_overlap: int = 0, max_hits_per_pattern: Optional[int] = None,
               max_hits_per_record: Optional[int] = None, fewest_errors: bool = False,
               arrays: bool = False) -> Union[SearchPass, HitColumns]:
        """The hits in a target, as an iterator of Hit with .record (and
        .file) set, or with arrays=True as HitColumns.

        target: a path (FASTA/FASTQ, plain, gzip, BGZF or zstd; text files
            with alphabet="text"; "-" is standard input), a binary or text
            file object, a list or tuple of paths and file objects (searched
            in turn, as one search: records are numbered on, every hit names
            its file), or an iterable of records: (name, sequence) pairs or
            longer tuples starting with those (a name may be None).
        threads: scanning threads (0: every core).
        circular, cigar, strand, anchor and max_hits as for scan
            (max_hits counts over all the targets).
        lines: alphabet="text": each line of a file is a record (named
            PATH:LINE), as the command's --lines.
        min_overlap: N > 0 also reports the partial matches at each record's
            ends: a pattern that runs off the record's start or end with at
            least N of its symbols inside (the part inside is the hit; its
            mismatches are counted there); exact or mismatches only.
        max_hits_per_pattern, max_hits_per_record: in each record, only each
            pattern's first N hits, or the record's first N, in output order;
            fewest_errors: only each pattern's hits with its fewest errors
            in the record (before those limits).
        arrays: the hits as HitColumns (the whole target is read first).
        The iterator's ``stats`` are the counts of ``seqmatch search
        --stats-json`` (SearchPass.stats).
        The target is read as the hits are asked for, with the GIL released;
        a bad file raises ValueError or OSError naming the file, record and
        line; a file object's own exceptions come through as they are.
        """
        mode = _MODE_ARRAYS if arrays else _MODE_HITS
        ends = (min_overlap, max_hits_per_pattern, max_hits_per_record, fewest_errors)
        run, files = self._pass(target, mode, threads, circular, cigar, strand, anchor, max_hits, lines, ends=ends)
        if arrays:
            raw, records = run._finish()
            return _columns(raw, self.patterns, records, files)
        return run  # type: ignore[no-any-return]

    @overload
    def count(self, target: Target, *, threads: int = ..., circular: bool = ..., strand: Optional[str] = ...,
              anchor: Optional[str] = ..., max_hits: Optional[int] = ..., lines: bool = ...,
              min_overlap: int = ..., max_hits_per_pattern: Optional[int] = ...,
              max_hits_per_record: Optional[int] = ..., fewest_errors: bool = ...,
              per_file: Literal[False] = ...) -> Dict[str, int]: ...

    @overload
    def count(self, target: Target, *, threads: int = ..., circular: bool = ..., strand: Optional[str] = ...,
              anchor: Optional[str] = ..., max_hits: Optional[int] = ..., lines: bool = ...,
              min_overlap: int = ..., max_hits_per_pattern: Optional[int] = ...,
              max_hits_per_record: Optional[int] = ..., fewest_errors: bool = ...,
              per_file: Literal[True]) -> List[Tuple[Optional[str], Dict[str, int]]]: ...

    @overload
    def count(self, target: Target, *, threads: int = ..., circular: bool = ..., strand: Optional[str] = ...,
              anchor: Optional[str] = ..., max_hits: Optional[int] = ..., lines: bool = ...,
              min_overlap: int = ..., max_hits_per_pattern: Optional[int] = ...,
              max_hits_per_record: Optional[int] = ..., fewest_errors: bool = ...,
              per_file: bool = ...) -> Union[Dict[str, int], List[Tuple[Optional[str], Dict[str, int]]]]: ...

    def count(self, target: Target, *, threads: int = 0, circular: bool = False, strand: Optional[str] = None,
              anchor: Optional[str] = None, max_hits: Optional[int] = None, lines: bool = False,
              min_overlap: int = 0, max_hits_per_pattern: Optional[int] = None,
              max_hits_per_record: Optional[int] = None, fewest_errors: bool = False,
              per_file: bool = False) -> Union[Dict[str, int], List[Tuple[Optional[str], Dict[str, int]]]]:
        """The number of hits of each pattern in a target (as for search),
        as {name: count} in pattern order (patterns of the same name add
        up), over all of the target's files; with per_file=True, a list of
        (file, {name: count}), one per target in order (file None for
        records given as Python objects). strand, anchor and max_hits
        as for scan (max_hits: only the first hits are counted); min_overlap
        and the per-record limits as for search. The whole scan runs with
        the GIL released."""
        ends = (min_overlap, max_hits_per_pattern, max_hits_per_record, fewest_errors)
        run, files = self._pass(target, _MODE_COUNT, threads, circular, False, strand, anchor, max_hits, lines,
                               per_file=per_file, ends=ends)
        counts = run._finish()
        names = self.patterns

        def by_name(values: List[int]) -> Dict[str, int]:
            out: Dict[str, int] = {}
            for name, n in zip(names, values):
                out[name] = out.get(name, 0) + n
            return out

        if per_file:
            return [(f, by_name(c)) for f, c in zip(files, counts)]
        return by_name(counts)

    def filter(self, target: Target, *, invert: bool = False, threads: int = 0, circular: bool = False,
               strand: Optional[str] = None, anchor: Optional[str] = None, lines: bool = False,
               min_overlap: int = 0, read2: Optional[Target] = None) -> RecordPass:
        """The records of a target that hold a hit (with invert=True, those
        that hold none), in order, as the command's filter keeps them; the
        iterator's ``stats`` are the counts of ``seqmatch filter
        --stats-json`` (RecordPass.stats).

        Records of a file come as Record(name, sequence, raw), raw being the
        record's bytes exactly as read (write them to keep a subset of the
        file); records given as Python objects come back as they were given.
        target, threads, circular, strand, anchor, lines and min_overlap as
        for search.
        read2: paired reads (``seqmatch filter -1 TARGET -2 READ2``): mate
            2's file (a path or file object) or records, read in step with
            target (names may end in /1 and /2); both mates are searched and
            a pair is kept or dropped whole: it has a hit when either mate
            has one. Items are (mate 1, mate 2), each as above.
        """
        if read2 is not None and lines:
            raise ValueError("lines=True reads text; paired reads (read2) are FASTA or FASTQ")
        run, _ = self._pass(target, _MODE_FILTER, threads, circular, False, strand, anchor, None, lines,
                           invert=invert, ends=(min_overlap, None, None, False), read2=read2)
        return run  # type: ignore[no-any-return]

    def demux(self, target: Target, *, anchor: Optional[str] = "start", strand: Optional[str] = "+",
              threads: int = 0, lines: bool = False, min_overlap: int = 0, trim: bool = False,
              barcode_tag: bool = False, read2: Optional[Target] = None, barcode_read: int = 1) -> BarcodePass:
        """Each record of a target with the barcode it carries, as
        (barcode name or None, record), in order, as the command's demux
        assigns them: the barcode (the patterns of one name) whose hit has
        the fewest errors; None when two barcodes are equally close or none
        is found. By default the barcode is looked for at the record's start
        (anchor="start"; "end", or None for anywhere) on the read's own
        strand (strand="+"; None for both). Records as filter gives them.

        trim: an assigned record comes without its barcode (the bases its
            hit covers at the start, or the end with anchor="end"; the
            qualities in step), as the command's --trim writes it.
        barcode_tag: the barcode as found is added to an assigned record's
            header as ' BC:Z:BARCODE' (--barcode-tag).
        With either, a file's record comes as Record with raw rewritten as
        the command writes it (and sequence cut); a record given as a
        Python object as a tuple of its items, the sequence and quality
        (third item) cut and the tag after the name. They need anchor
        "start" or "end".
        read2: paired reads (``seqmatch demux -1 TARGET -2 READ2``): mate
            2's file (a path or file object) or records, read in step with
            target; the barcode is sought in mate barcode_read (1 or 2)
            only, and items are (barcode or None, (mate 1, mate 2)), the
            pair going whole to the barcode (trim cuts the barcode's mate,
            barcode_tag tags both).
        The iterator's ``stats`` are the counts of ``seqmatch demux
        --stats-json`` (BarcodePass.stats).
        """
        if read2 is None and barcode_read != 1:
            raise ValueError("barcode_read is for paired reads: give read2")
        _choice({1: 1, 2: 2}, barcode_read, "barcode_read")
        if (trim or barcode_tag) and anchor not in ("start", "end"):
            raise ValueError(f"{'trim' if trim else 'barcode_tag'}=True takes the barcode at the read's start or "
                             f"end: it needs anchor=\"start\" or \"end\", not {anchor!r}")
        run, _ = self._pass(target, _MODE_DEMUX, threads, False, False, strand, anchor, None, lines,
                           ends=(min_overlap, None, None, False), extra=(bool(trim), bool(barcode_tag), barcode_read),
                           read2=read2)
        return run  # type: ignore[no-any-return]

    def _run_records(self, target: Target, mode: int, threads: int, min_overlap: int, extra: Tuple[Any, ...],
                     read2: Optional[Target] = None) -> Any:
        """An amplicon, trim or barcode pairs pass over target (the _Run);
        with read2, over the pairs of mates of target and read2."""
        _count_argument(threads, "threads", none=False)
        targets = _targets(target) if read2 is None else _pair_targets(target, read2)
        return self._run_pass(targets, mode, threads, _INPUT_AUTO, False, False, "", 0, None, False, False,
                              (min_overlap, 0, 0, False), extra)

    def save(self, path: PathLike) -> None:
        """Saves the database (a file `seqmatch search -d` reads too)."""
        self._save(_os.fspath(path))

    def to_bytes(self) -> bytes:
        """The database as bytes (the file's bytes); see from_bytes."""
        return self._to_bytes()

    def __reduce__(self) -> Tuple[Any, Tuple[bytes]]:
        return (from_bytes, (self.to_bytes(),))


# ------------------------------------------------------------ amplicons

class PrimerPair(NamedTuple):
    """A primer pair: its name and both primers, 5' to 3' as given."""

    name: str
    forward: str
    reverse: str


class Amplicon(NamedTuple):
    """One PCR product (``seqmatch amplicon``'s row). Coordinates are 0-based
    and half-open on the record's forward strand, whatever the strand."""

    record: Optional[str]
    start: int
    end: int
    strand: str
    pair: str
    forward_errors: int
    reverse_errors: int
    sequence: Optional[str]
    file: Optional[str]

    @property
    def size(self) -> int:
        """The product's length, end - start."""
        return self.end - self.start


_document(Amplicon, {
    "record": "the record's name (None for a record given without one)",
    "start": "0-based start on the forward strand: the forward primer's first base on '+', the reverse "
             "primer site's first base on '-'",
    "end": "end, exclusive",
    "strand": "'+' (the forward primer on the record as given) or '-' (on its reverse complement)",
    "pair": "the primer pair's name",
    "forward_errors": "mismatches or edits of the forward primer's site",
    "reverse_errors": "mismatches or edits of the reverse primer's site",
    "sequence": "with sequence=True the product read on its strand ('-': reverse complement, IUPAC codes and "
                "case kept), else None",
    "file": "the target the record came from, or None (records given as Python objects)",
})

_COMPLEMENT = str.maketrans("ACGTURYSWKMBDHVNacgturyswkmbdhvn", "TGCAAYRSWMKVHDBNtgcaayrswmkvhdbn")


def _reverse_complement(seq: str) -> str:
    return seq.translate(_COMPLEMENT)[::-1]


def _text_of(value: object) -> str:
    """A record item's sequence or quality as a str (bytes as Latin-1)."""
    if isinstance(value, str):
        return value
    return memoryview(value).tobytes().decode("latin-1")  # type: ignore[arg-type]


def _size_argument(value: object, what: str) -> int:
    _count_argument(value, what, none=False)
    if _cast(int, value) > 0xFFFFFFFFFFFFFFFF:
        raise ValueError(f"{what} is too large: {value}")
    return _cast(int, value)


class _RecordPass:
    """An iterator over what a pass makes of each record, with .stats; a
    context manager that ends the pass early (close)."""

    def __init__(self, run: Any) -> None:
        self._run: Any = run
        self._final: Optional[Dict[str, int]] = None

    def __iter__(self) -> Any:
        return self

    @property
    def stats(self) -> Dict[str, int]:
        """The counts so far (all of them once the iterator is exhausted)."""
        if self._final is not None:
            return dict(self._final)
        return _cast(Dict[str, int], self._run._stats())

    def close(self) -> None:
        """Ends the pass: no more is read (its files and scanning threads
        are let go); stats keep what was counted."""
        if self._run is not None and self._final is None:
            self._final = self._run._stats()
            self._run.close()
        self._run = _iter_done

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_iter_done: Any = iter(())


class AmpliconPass(_RecordPass):
    """The products of Primers.amplicons, in (record, start, end, pair,
    strand) order, read as they are asked for. ``stats``: {"records",
    "products"} so far. ``with primers.amplicons(...) as products:`` ends
    the pass at the block's end."""

    def __init__(self, run: Any, pairs: List[PrimerPair], sequence: bool) -> None:
        super().__init__(run)
        self._pairs = [p.name for p in pairs]
        self._sequence = sequence
        self._queue: List[Amplicon] = []

    def __iter__(self) -> AmpliconPass:
        return self

    def __next__(self) -> Amplicon:
        while not self._queue:
            name, file, item, seq, products = next(self._run)
            if self._sequence and item is not None:
                seq = _text_of(item[1])
            out = []
            for start, end, pair, strand, fwd, rev in products:
                product = None
                if self._sequence:
                    product = seq[start:end] if strand == "+" else _reverse_complement(seq[start:end])
                out.append(Amplicon(name, start, end, strand, self._pairs[pair], fwd, rev, product, file))
            out.reverse()
            self._queue = out
        return self._queue.pop()


class Primers:
    """Primer pairs compiled for in-silico PCR (``seqmatch amplicon``).

    pairs: a path to a table (one pair a line: name<TAB>forward<TAB>reverse,
        5' to 3', IUPAC codes allowed, '#' lines skipped: the command's -p
        file), or an iterable of (name, forward, reverse) triples, or one
        (forward, reverse) pair of str (named "amplicon", as -F/-R).
    mismatches, edits: up to k mismatches or k edits in each primer (not
        both; k below every primer's length).
    text_iupac: N and IUPAC codes in the targets match the primers' bases.
    engine: as for compile.

    Every primer of every pair is searched in one pass, on both strands.
    Raises ValueError for a bad table, primer or option (naming the file
    and line), OSError for a table that cannot be read.
    """

    def __init__(self, pairs: Union[PathLike, Iterable[Tuple[str, str, str]], Tuple[str, str]], *,
                 mismatches: int = 0, edits: int = 0, text_iupac: bool = False, engine: str = "auto") -> None:
        if isinstance(pairs, (str, bytes, _os.PathLike)):
            raw = _seqmatch._amplicon_pairs(_os.fsencode(pairs))
        else:
            given: List[Any] = list(pairs)
            if len(given) == 2 and all(isinstance(p, (str, bytes)) for p in given):
                given = [("amplicon", given[0], given[1])]
            triples = []
            for p in given:
                if not isinstance(p, tuple) or len(p) != 3:
                    raise TypeError("pairs holds (name, forward, reverse) triples, not "
                                    f"{type(p).__name__ if not isinstance(p, tuple) else f'{len(p)} items'}")
                triples.append(tuple(_as_bytes(x, "a primer pair's name or primer") for x in p))
            if not triples:
                raise ValueError("no primer pairs given")
            for t in triples:
                if any(b"\0" in x for x in t):
                    raise ValueError(f"primer pair {t[0]!r} holds a NUL byte")
            raw = _seqmatch._amplicon_pairs(triples)
        #: The pairs, in order.
        self.pairs: List[PrimerPair] = [PrimerPair(*p) for p in raw]
        patterns = []
        for p in self.pairs:
            patterns += [(f"{p.name}/forward", p.forward), (f"{p.name}/reverse", p.reverse)]
        #: The database of the primers (pair i: patterns 2i, forward, and 2i + 1, reverse).
        self.database: Database = compile(patterns, mismatches=mismatches, edits=edits, text_iupac=text_iupac,
                                          engine=engine)

    def __len__(self) -> int:
        return len(self.pairs)

    def __repr__(self) -> str:
        return f"<seqmatch.Primers of {len(self.pairs)} pairs>"

    def amplicons(self, target: Target, *, min_size: int = 1, max_size: int = 10000, longest: bool = False,
                  sequence: bool = False, threads: int = 0) -> AmpliconPass:
        """The products of the pairs in a target, as Amplicon, in (record,
        start, end, pair, strand) order: as ``seqmatch amplicon`` finds them.

        A product on the + strand is a forward primer site on + and, at or
        after its start, a reverse primer site on - (the reverse primer's
        reverse complement): [forward start, reverse end). A - product is
        the same on the reverse complement, reported in forward
        coordinates. Every such combination is a product (nested and
        overlapping ones too) when min_size <= size <= max_size; with
        longest=True only the first forward and the last reverse site per
        record, pair and strand (seqkit amplicon's rule), then the window.

        target: as for Database.search (paths, file objects, records).
        sequence: fill Amplicon.sequence with the product read on its strand.
        threads: scanning threads (0: every core).
        """
        lo = _size_argument(min_size, "min_size")
        hi = _size_argument(max_size, "max_size")
        if lo > hi:
            raise ValueError(f"min_size={lo} is above max_size={hi}")
        run = self.database._run_records(target, _MODE_AMPLICON, threads, 0,
                                         (lo, hi, bool(longest), len(self.pairs), bool(sequence)))
        return AmpliconPass(run, self.pairs, bool(sequence))


# ------------------------------------------------------------- trimming

class Trimmed(NamedTuple):
    """A read as trim keeps it: [start, end) of the read as given is what
    is left (the qualities cut in step)."""

    name: Optional[str]
    sequence: str
    quality: Optional[str]
    start: int
    end: int
    adapter: Optional[str]
    errors: int
    raw: Optional[bytes]
    file: Optional[str]


_document(Trimmed, {
    "name": "the read's name",
    "sequence": "what is left of the sequence",
    "quality": "what is left of the qualities (FASTQ, or a record given with a third item), else None",
    "start": "the first base kept, 0-based in the read as given",
    "end": "the end of what is kept, exclusive",
    "adapter": "the adapter that cut the read, as given (None: none matched)",
    "errors": "the cut adapter's mismatches or edits (of both parts of a linked adapter)",
    "raw": "a file's record as seqmatch trim writes it (header and '+' lines as read, sequence and qualities "
           "on one line each); None for records given as Python objects",
    "file": "the target the read came from, or None (records given as Python objects)",
})

_DISCARD = {None: 0, "untrimmed": 1, "trimmed": 2}


class TrimPass(_RecordPass):
    """The reads Adapters.trim keeps, in input order, read as they are asked
    for. ``stats``: {"records", "reads", "trimmed", "kept", "bases_in",
    "bases_kept"} so far (those of ``seqmatch trim``; reads equal records
    for single reads). ``with adapters.trim(...) as reads:`` ends the pass
    at the block's end."""

    def __init__(self, run: Any, adapters: List[str]) -> None:
        super().__init__(run)
        self._adapters = adapters

    def __iter__(self) -> TrimPass:
        return self

    def __next__(self) -> Trimmed:
        return _trimmed(next(self._run), self._adapters)


def _trimmed(row: Any, adapters: List[str]) -> Trimmed:
    name, file, item, raw, start, end, adapter, errors, _length = row
    quality: Optional[str] = None
    if item is not None:
        sequence = _text_of(item[1])[start:end]
        if len(item) > 2 and item[2] is not None:
            quality = _text_of(item[2])[start:end]
    else:
        lines = raw.split(b"\n")
        sequence = lines[1].rstrip(b"\r").decode("latin-1")
        if raw[:1] == b"@":
            quality = lines[3].rstrip(b"\r").decode("latin-1")
    return Trimmed(name, sequence, quality, start, end, adapters[adapter] if adapter >= 0 else None,
                   errors, raw, file)


class PairTrimPass(_RecordPass):
    """The pairs Adapters.trim keeps (with read2), as (Trimmed, Trimmed):
    mate 1 and mate 2, in input order, read as they are asked for. A pair
    is kept or dropped whole. ``stats``: as TrimPass's, records counting
    pairs and reads mates."""

    def __init__(self, run: Any, adapters: List[str]) -> None:
        super().__init__(run)
        self._adapters = adapters

    def __iter__(self) -> PairTrimPass:
        return self

    def __next__(self) -> Tuple[Trimmed, Trimmed]:
        one, two = next(self._run)
        return _trimmed(one, self._adapters), _trimmed(two, self._adapters)


class Adapters:
    """Adapters compiled for trimming (``seqmatch trim``), as cutadapt writes
    them, searched on each read as sequenced (forward strand).

    back: 3' adapters (cutadapt's and the command's -a): the hit and
        everything after it go; SEQ$ only at the read's end;
        FIRST...SECOND a linked adapter (FIRST as a 5' adapter, then SECOND
        as a 3' adapter after it; ^FIRST and SECOND$ anchor a part and make
        it required).
    front: 5' adapters (-g): the hit and everything before it go; ^SEQ only
        at the read's start; FIRST...SECOND linked, both parts required.
    back2, front2: paired reads (trim with read2): mate 2's 3' and 5'
        adapters (the command's and cutadapt's -A and -G); back and front
        are then mate 1's.
    A str is one adapter; a list or tuple many.
    adapters: (kind, adapter) pairs, kind "back", "front", "back2" or
        "front2", in the order the command's -a, -g, -A and -G would give
        them (after any back=, front=, back2= and front2=): ties go to the
        adapter given first, so ``adapters=[("front", G), ("back", A)]`` is
        ``trim -g G -a A``.
    mismatches, edits: up to k substitutions or k edits (in the part of
        the adapter inside the read).
    text_iupac: N and IUPAC codes in the reads match the adapters' bases.
    engine: as for compile.

    Of each adapter its leftmost hit counts; of several adapters the one
    whose hit has the most matches minus errors (then the fewest errors,
    then the first given: the back adapters in order, then the front ones,
    then adapters=); one adapter is cut from each read
    (docs/trim.md).
    """

    def __init__(self, back: Union[str, Iterable[str]] = (), front: Union[str, Iterable[str]] = (), *,
                 back2: Union[str, Iterable[str]] = (), front2: Union[str, Iterable[str]] = (),
                 adapters: Iterable[Tuple[str, str]] = (), mismatches: int = 0, edits: int = 0,
                 text_iupac: bool = False, engine: str = "auto") -> None:
        given: List[Tuple[bytes, int, int]] = []
        listed: List[Tuple[str, Any]] = []
        for what, some in (("back", back), ("front", front), ("back2", back2), ("front2", front2)):
            listed += [(what, a) for a in ([some] if isinstance(some, (str, bytes)) else list(some))]
        for pair in adapters:
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError("adapters holds (kind, adapter) pairs, kind 'back', 'front', 'back2' or 'front2'")
            listed.append(pair)
        for what, a in listed:
            kind, mate = _choice({"back": (1, 1), "front": (2, 1), "back2": (1, 2), "front2": (2, 2)}, what,
                                 "an adapter's kind")
            text = _as_bytes(a, f"a {what} adapter")
            if b"\0" in text:
                raise ValueError(f"adapter {a!r} holds a NUL byte")
            given.append((text, kind, mate))
        if not given:
            raise ValueError("no adapters given: back= (3', -a) or front= (5', -g)")
        self._set = _seqmatch._trim_set(given)
        #: The adapters as given, in order (Trimmed.adapter names one).
        self.adapters: List[str] = [t.decode("utf-8", "replace") for t, _, _ in given]
        self._mate2 = any(mate == 2 for _, _, mate in given)
        self._k = mismatches or edits
        patterns = [(n, q) for n, q in self._set._patterns()]
        #: The database of the adapters' parts (forward strand).
        self.database: Database = compile(patterns, strands="+", mismatches=mismatches, edits=edits,
                                          text_iupac=text_iupac, engine=engine)

    def __len__(self) -> int:
        return len(self.adapters)

    def __repr__(self) -> str:
        return f"<seqmatch.Adapters of {len(self.adapters)} adapters>"

    @overload  # read2's Target takes Any, so it overlaps None: the first overload is taken for None
    def trim(self, target: Target, *, read2: None = ..., min_overlap: Optional[int] = ...,  # type: ignore[misc]
             minimum_length: int = ..., discard: Optional[str] = ..., threads: int = ...) -> TrimPass: ...

    @overload
    def trim(self, target: Target, *, read2: Target, min_overlap: Optional[int] = ..., minimum_length: int = ...,
             discard: Optional[str] = ..., threads: int = ...) -> PairTrimPass: ...

    def trim(self, target: Target, *, read2: Optional[Target] = None, min_overlap: Optional[int] = None,
             minimum_length: int = 0, discard: Optional[str] = None,
             threads: int = 0) -> Union[TrimPass, PairTrimPass]:
        """Each read of a target cut at its adapter, as Trimmed, in input
        order: the reads ``seqmatch trim`` writes.

        target: as for Database.search: paths (FASTA or FASTQ, compressed
            or not), file objects, or records (name, sequence[, quality]).
        read2: paired reads (``seqmatch trim -1 TARGET -2 READ2``): mate
            2's file (a path or file object; target then one file too) or
            records, read in step with target (names NAME/1 and NAME/2, or
            equal); each mate is cut at its own hit (back and front for
            mate 1, back2 and front2 for mate 2), and the pass gives
            (Trimmed, Trimmed) pairs, whose raw bytes are the command's two
            output files. A pair is dropped whole when either mate is
            shorter than minimum_length, and by discard when a mate that has
            adapters is untrimmed (or trimmed).
        min_overlap: an adapter may run off the read's end (3') or start
            (5') with at least this many bases inside (None: 3, or k + 1
            with k mismatches or edits of 3 or more; 0: whole adapters
            only); cutadapt's -O. Must be above k.
        minimum_length: reads shorter than this after trimming are not
            handed out.
        discard: "untrimmed" (drop the reads no adapter cut) or "trimmed"
            (drop those cut); None keeps both.
        threads: scanning threads (0: every core).
        """
        k = self._k
        if min_overlap is None:
            min_overlap = k + 1 if k >= 3 else 3
        _count_argument(min_overlap, "min_overlap", none=False)
        if min_overlap > 0xFFFFFFFF:
            raise ValueError(f"min_overlap must be at most 4294967295, not {min_overlap}")
        if 0 < min_overlap <= k:
            raise ValueError(f"min_overlap={min_overlap} with {k} errors: every read end would match; give more "
                             f"than {k}")
        length = _size_argument(minimum_length, "minimum_length")
        discard_id = _choice(_DISCARD, discard, "discard")
        if read2 is None and self._mate2:
            raise ValueError("back2 and front2 are mate 2's adapters (-A, -G): give paired reads with read2")
        run = self.database._run_records(target, _MODE_TRIM, threads, min_overlap, (self._set, length, discard_id),
                                         read2)
        if read2 is not None:
            return PairTrimPass(run, self.adapters)
        return TrimPass(run, self.adapters)


# ---------------------------------------------------- dual-index demux

class DemuxPass(_RecordPass):
    """Each record of BarcodePairs.demux with its sample, as (sample or
    None, record) (with read2: (sample or None, (mate 1, mate 2))), in
    input order, read as they are asked for. ``stats``: the counts so far
    as ``seqmatch demux --stats-json`` reports them: {"reads": {"input",
    "output"}, "bases": {"input", "output"}, "patterns": [{"name",
    "records"}, ...], "samples": [{"name", "reads"}, ..., {"name":
    "unassigned", ...}], "unassigned": {"no_hit", "ambiguous",
    "unlisted"}}. ``with pairs.demux(...) as assigned:`` ends the pass at
    the block's end."""

    def __iter__(self) -> DemuxPass:
        return self

    @property
    def stats(self) -> Dict[str, Any]:
        """The counts so far (all of them once the iterator is exhausted)."""
        if self._final is not None:
            return dict(self._final)
        return _cast(Dict[str, Any], self._run._stats())

    def __next__(self) -> Tuple[Optional[str], Any]:
        sample, record, _why = next(self._run)
        return sample, record


class BarcodePairs:
    """Samples named by pairs of barcodes (dual indexes), for demultiplexing
    as ``seqmatch demux --barcodes PAIRS.tsv`` does with single reads:
    barcode1 at the read's start and barcode2 at its end (linked, as
    cutadapt's ``^B1...B2$``), each end its barcode with the fewest errors.

    table: a path to a table (sample<TAB>barcode1<TAB>barcode2, IUPAC codes;
        '#' lines and a header skipped; a sample may have several lines),
        or an iterable of (sample, barcode1, barcode2) triples.
    mismatches, edits: up to k mismatches or edits in each barcode.
    rc_barcode2: barcode2 is listed 5'->3' as on its own strand (kits that
        list both indexes so): the read ends in its reverse complement; by
        default barcode2 is written as it reads at the read's end.
    text_iupac: N and IUPAC codes in reads match the barcodes' bases.
    engine: as for compile.

    A table of two columns is a list of single barcodes: compile it and use
    Database.demux.
    """

    def __init__(self, table: Union[PathLike, Iterable[Tuple[str, str, str]]], *, mismatches: int = 0,
                 edits: int = 0, rc_barcode2: bool = False, text_iupac: bool = False, engine: str = "auto") -> None:
        source: Tuple[Optional[bytes], Optional[bytes]]
        if isinstance(table, (str, bytes, _os.PathLike)):
            source = (_os.fsencode(table), None)
        else:
            lines = []
            for row in table:
                if not isinstance(row, tuple) or len(row) != 3:
                    raise TypeError("table holds (sample, barcode1, barcode2) triples")
                fields = [_as_bytes(x, "a sample or barcode") for x in row]
                if any(ch in f for f in fields for ch in (b"\t", b"\n", b"\r", b"\0")):
                    raise ValueError(f"sample {row[0]!r}: a tab, line end or NUL byte in a field")
                lines.append(b"\t".join(fields) + b"\n")
            if not lines:
                raise ValueError("no barcode pairs given")
            source = (None, b"".join(lines))
        self._pairs = _seqmatch._barcode_pairs(*source)
        # strand="both": the same table, read in both orientations (a table is small)
        self._pairs_both = _seqmatch._barcode_pairs(*source, True)
        for what, k in (("mismatches", mismatches), ("edits", edits)):
            _count_argument(k, what, none=False)
        if mismatches and edits:
            raise ValueError("mismatches and edits cannot be combined: give one of them")
        match, k = (1, mismatches) if mismatches else (2, edits) if edits else (0, 0)
        #: The samples, in the table's order.
        self.samples: List[str] = self._pairs._samples()
        self._compile_args = (match, k, _FLAG_TEXT_IUPAC if text_iupac else 0, _choice(_ENGINES, engine, "engine"))
        self._rc_barcode2 = bool(rc_barcode2)
        #: The barcodes' database: barcode1s, then barcode2s (as sought at a single read's end).
        self.database: Database = _cast(Database, self._pairs._compile(*self._compile_args, not rc_barcode2))
        self._mates_database: Optional[Database] = self.database if rc_barcode2 else None

    def __len__(self) -> int:
        return len(self.samples)

    def __repr__(self) -> str:
        return f"<seqmatch.BarcodePairs of {len(self.samples)} samples>"

    def demux(self, target: Target, *, read2: Optional[Target] = None, trim: bool = False,
              barcode_tag: bool = False, strand: str = "+", threads: int = 0) -> DemuxPass:
        """Each record of a target (as for Database.search) with its
        sample, as (sample or None, record): None when an end has no
        barcode, two barcodes of an end are equally close, or the pair is
        not in the table. Records of files come as Record (raw: the bytes
        as read, what the command writes to the sample's file); records
        given as Python objects as they were given.

        read2: paired reads (``seqmatch demux --barcodes TABLE -1 TARGET -2
            READ2``): mate 2's file or records, read in step with target;
            barcode1 at mate 1's start, barcode2 at mate 2's start (as
            listed: not with rc_barcode2); items are (sample or None,
            (mate 1, mate 2)).
        strand: "+" (default): a single read is the construct as given
            (barcode1 at its start, barcode2 at its end); "both" (``--strand
            both``, single reads only): a read may also be the whole
            construct reverse complemented (barcode2's end first); each read
            takes the orientation whose two barcodes have the fewest errors
            in all, two equally close leave it unassigned (ambiguous) unless
            they name one sample. Reads are handed out as read; trim cuts
            both ends, the tag reads as on the construct.
        trim: an assigned read comes without its barcodes (the bases each
            one's hit covers; the qualities in step), as the command's
            --trim writes it.
        barcode_tag: ' BC:Z:BARCODE1-BARCODE2' (as found in the read) is
            added to an assigned read's header (--barcode-tag).
        With either, a file's record comes as Record with raw rewritten as
        the command writes it (and sequence cut); a record given as a
        Python object as a tuple of its items, the sequence and quality
        (third item) cut and the tag after the name."""
        extra = (bool(trim), bool(barcode_tag))
        both = _choice({"+": False, "both": True}, strand, "strand")
        if read2 is None:
            info = self.database._info()
            window = info["max_length"] + info["max_errors"]
            pairs = self._pairs_both if both else self._pairs
            run = self.database._run_records(target, _MODE_PAIRS, threads, 0, (pairs, window) + extra)
            return DemuxPass(run)
        if both:
            raise ValueError('strand="both" is for single reads (the construct in either orientation); with '
                             "read2 barcode1 is sought at mate 1's start and barcode2 at mate 2's")
        if self._rc_barcode2:
            raise ValueError("rc_barcode2=True is for single reads (barcode2 at the read's end); with read2 "
                             "barcode2 is sought at mate 2's start as listed")
        if self._mates_database is None:
            self._mates_database = _cast(Database, self._pairs._compile(*self._compile_args, False))
        run = self._mates_database._run_records(target, _MODE_PAIRS, threads, 0, (self._pairs, 0) + extra, read2)
        return DemuxPass(run)


_seqmatch._set_types(Hit, Record, Database)
