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

Scans release the GIL: several threads can scan with one database at once.
"""

import os as _os

from . import _seqmatch

Hit = _seqmatch.Hit

__all__ = ["compile", "load", "from_bytes", "Database", "Hit", "library_version"]
__version__ = "0.1.0"

_ALPHABETS = {"dna": 0, "text": 1}
_STRANDS = {"both": 0, "+": 1, "forward": 1, "-": 2, "reverse": 2}
_REPORTS = {"best": 0, "ends": 1}
_ENGINES = {
    "auto": 0, "automaton": 1, "shiftand": 2, "mismatch": 3, "myers": 4,
    "wavefront": 5, "kmer": 6, "pigeonhole": 7, "wumanber": 8,
}
_FLAG_IGNORE_CASE = 1
_FLAG_TEXT_IUPAC = 2


def library_version():
    """The version of the C library compiled into this package."""
    return _seqmatch._library_version()


def _as_bytes(value, what):
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def _choice(table, value, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError(f"unknown {what} {value!r}; use one of {', '.join(map(repr, table))}") from None


def compile(patterns, alphabet="dna", strands="both", mismatches=0, edits=0, *,
            pam=None, report="best", ignore_case=False, text_iupac=False, engine="auto"):
    """Compiles patterns into a Database.

    patterns: a list (any iterable) of sequences (str or bytes; the sequence
        is also the name) or of (name, sequence) pairs, in any mix. Duplicate
        patterns are distinct patterns; an empty one is an error.
    alphabet: "dna" (default) or "text" (raw bytes, one strand).
    strands: "both" (default), "+" or "-" (dna).
    mismatches: allow up to k mismatches (Hamming distance), or
    edits: allow up to k edits (Levenshtein distance); not both. k must be
        below every pattern's length (else every window would be a hit).
    pam: dna: a PAM (IUPAC, e.g. "NGG") on every pattern's 3' side that must
        match exactly; errors count in the pattern (the guide) only.
    report: edits: "best" (one hit per run of ends, default) or "ends".
    ignore_case: text: ASCII letters match either case.
    text_iupac: dna: IUPAC codes in the text match by set intersection.
    engine: force an engine ("auto" lets the planner choose; every engine
        gives the same hits).

    Raises ValueError for a bad pattern or option, with the C library's
    message. The GIL is released while the database is built.
    """
    if mismatches and edits:
        raise ValueError("mismatches and edits cannot be combined")
    for what, k in (("mismatches", mismatches), ("edits", edits)):
        if not isinstance(k, int) or isinstance(k, bool) or k < 0 or k > 65535:
            raise ValueError(f"{what} must be an int from 0 to 65535, not {k!r}")
    match, k = (1, mismatches) if mismatches else (2, edits) if edits else (0, 0)
    items = []
    for p in patterns:
        if isinstance(p, tuple):
            if len(p) != 2:
                raise ValueError(f"a (name, sequence) pair has 2 items, not {len(p)}")
            name, seq = _as_bytes(p[0], "a pattern's name"), _as_bytes(p[1], "a pattern")
            if b"\0" in name:
                raise ValueError(f"pattern name {p[0]!r} holds a NUL byte")
        else:
            name, seq = None, _as_bytes(p, "a pattern")
        items.append((name, seq))
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
    if pam is not None:
        pam = _as_bytes(pam, "pam").decode("ascii")
        if not pam:
            raise ValueError("empty PAM")
    raw = _seqmatch._compile(items, _choice(_ALPHABETS, alphabet, "alphabet"),
                             _choice(_STRANDS, strands, "strands"), match, k,
                             _choice(_REPORTS, report, "report"), flags,
                             _choice(_ENGINES, engine, "engine"), pam)
    return Database(raw)


def load(path):
    """Loads a database saved by Database.save or `seqmatch compile -o`."""
    return Database(_seqmatch._load(_os.fspath(path)))


def from_bytes(data):
    """A database from the bytes of Database.to_bytes (checked as a file is)."""
    return Database(_seqmatch._from_bytes(data))


class Database:
    """A compiled, immutable pattern database (seqmatch.compile, seqmatch.load).

    One database may be used by any number of threads at once.
    """

    __slots__ = ("_db",)

    def __init__(self, raw):
        if not isinstance(raw, _seqmatch._Database):
            raise TypeError("use seqmatch.compile, seqmatch.load or seqmatch.from_bytes")
        self._db = raw

    def __len__(self):
        """The number of patterns."""
        return len(self._db)

    def __repr__(self):
        return f"<seqmatch.Database of {len(self)} patterns>"

    @property
    def patterns(self):
        """The patterns' names, in index order."""
        return self._db._names

    @property
    def sequences(self):
        """The patterns as compiled (dna: upper case, U as T; with their PAM)."""
        return self._db._sequences

    @property
    def info(self):
        """What the database holds: alphabet, strands, match kind and errors,
        pattern lengths, size in bytes and engines as (name, patterns, bytes)."""
        i = self._db._info()
        i["alphabet"] = {v: k for k, v in _ALPHABETS.items()}[i["alphabet"]]
        i["strands"] = ("both", "+", "-")[i["strands"]]
        i["match"] = ("exact", "mismatches", "edits")[i["match"]]
        i["report"] = ("best", "ends")[i["report"]]
        return i

    def scan(self, sequence, *, circular=False, cigar=False):
        """Every hit in one sequence, as a list of Hit. The sequence is a str or any
        object with the buffer protocol (bytes, bytearray, a memoryview; a strided
        one is copied first).

        A str is scanned as its UTF-8 bytes (coordinates count bytes; .matched
        holds the bytes as Latin-1 characters, the same for ASCII).

        Each hit has .pattern (name), .strand, .start, .end, .errors,
        .matched, .index (the pattern's index) and .record (None here).
        circular: the sequence is circular; hits over its end are reported
            too (start below its length, end past it).
        cigar: fill .cigar with the alignment: '=' match, 'X' mismatch, 'I'
            a pattern symbol missing from the text, 'D' a text symbol missing
            from the pattern; the pattern 5'->3' against the text, for '-'
            hits against its reverse complement.
        The GIL is released while scanning.
        """
        return self._db._scan(sequence, circular, cigar)

    def search(self, path, *, threads=0, circular=False, cigar=False):
        """The hits in a FASTA/FASTQ file (plain, gzip, BGZF or zstd; text
        files with alphabet="text"), as an iterator of Hit with .record set.

        threads: scanning threads (0: every core). circular and cigar as
        for scan. The file is read as the hits are asked for, with the GIL
        released; a bad file raises ValueError or OSError naming the file,
        record and line.
        """
        return self._db._search(path, threads, circular, cigar)

    def count(self, path, *, threads=0, circular=False):
        """The number of hits of each pattern in a file, as {name: count} in
        pattern order (patterns of the same name add up). The whole scan
        runs with the GIL released."""
        return self._db._count(path, threads, circular)

    def save(self, path):
        """Saves the database (a file `seqmatch search -d` reads too)."""
        self._db._save(_os.fspath(path))

    def to_bytes(self):
        """The database as bytes (the file's bytes); see from_bytes."""
        return self._db._to_bytes()

    def __reduce__(self):
        return (from_bytes, (self.to_bytes(),))
