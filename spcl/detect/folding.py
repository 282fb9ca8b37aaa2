"""A folded view of NFC text for the detectors, with an offset map back to the text.

Invisible and look-alike characters hide identifiers from regexes ("010\u200b1234-5678",
"kim\u00ad@…", mathematical digits "𝟎𝟏𝟎…"). The detectors therefore run on a *folded* copy of the
text:

- dropped: every format character (category Cf: ZWSP, ZWJ/ZWNJ, word joiner, soft hyphen, BOM, bidi
  controls, tags) and runs of combining marks, variation selectors included, right after a digit (or
  after a dropped character), e.g. the keycap "1\ufe0f\u20e3";
- folded one for one: every non-ASCII decimal digit (full-width, mathematical, Arabic-Indic, …) to
  its ASCII digit, the full-width forms of "+", ".", "@" and of ASCII letters to ASCII, and the
  no-break and fixed-width spaces (not the ideographic space U+3000) to " ".

:meth:`Folded.span` maps a half-open span of the folded text back to the text; the span's end is
pushed over the dropped characters that follow it, so a hit covers the whole written value, the
invisible characters inside and right after it included. A text with nothing to fold gets ``None``
from :func:`fold` and the detectors run on the text itself: an ASCII text costs nothing, any other
text one character-class scan (about 5-10 ns a character, some 15 % of the detectors' time on 1 KB
documents). A text that needs folding pays per run of suspicious characters, not per character.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
from bisect import bisect_right
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from spcl.cache import cache_dir as spcl_cache_dir
from spcl.io.atomic import write_atomic


def _ranges(codepoints: list[int]) -> str:
    """A regex character-class body for ``codepoints`` (sorted), as escaped ranges."""
    out: list[str] = []
    i = 0
    while i < len(codepoints):
        j = i
        while j + 1 < len(codepoints) and codepoints[j + 1] == codepoints[j] + 1:
            j += 1
        a, b = codepoints[i], codepoints[j]
        out.append(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}")
        i = j + 1
    return "".join(out)


def _tables() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(characters always dropped, combining marks, one-for-one replacements), from ``unicodedata``.

    Variation selectors are combining marks (Mn): like the others they are dropped after a digit.
    """
    drop, marks, mapped = set(), set(), {}
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if cat == "Cf":
            drop.add(ch)
        elif cat in ("Mn", "Mc", "Me"):
            marks.add(ch)
        elif cat == "Nd" and cp > 0x7F:
            mapped[ch] = str(unicodedata.decimal(ch))
        elif cat == "Zs" and cp not in (0x20, 0x3000):
            mapped[ch] = " "
    for cp in (0xFF0B, 0xFF0E, 0xFF20, *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B)):
        mapped[chr(cp)] = unicodedata.normalize("NFKC", chr(cp))
    return frozenset(drop), frozenset(marks), mapped


TABLES_VERSION = 1
"""Version of the cached tables' layout (:func:`cached_tables`); a new layout gets a new file."""


def _tables_key() -> str:
    """What the tables depend on: the layout version, Python's Unicode database and this module's
    source."""
    source = Path(__file__).read_bytes()
    return hashlib.sha256(
        b"%d|%s|" % (TABLES_VERSION, unicodedata.unidata_version.encode()) + source
    ).hexdigest()[:16]


def _decode(doc: object, key: str) -> tuple[frozenset[str], frozenset[str], dict[str, str]] | None:
    """The tables of a cache document, or ``None`` unless it is exactly this layout and key
    (JSON, no code)."""
    if not isinstance(doc, dict) or doc.get("version") != TABLES_VERSION or doc.get("key") != key:
        return None
    drop, marks, mapped = doc.get("drop"), doc.get("marks"), doc.get("mapped")
    if not (isinstance(drop, list) and isinstance(marks, list) and isinstance(mapped, dict)):
        return None
    cps = [*drop, *marks]
    if not all(type(c) is int and 0 <= c <= sys.maxunicode for c in cps):
        return None
    if not all(
        k.isdigit() and int(k) <= sys.maxunicode and isinstance(v, str) and len(v) == 1
        for k, v in mapped.items()
    ):
        return None
    tables = (
        frozenset(map(chr, drop)),
        frozenset(map(chr, marks)),
        {chr(int(k)): v for k, v in mapped.items()},
    )
    if not _has_sentinels(*tables):
        return None
    pinned = TABLES_DIGESTS.get(unicodedata.unidata_version)
    if pinned is None or tables_digest(*tables) != pinned:
        return None  # not exactly the tables this source builds: rebuilt, never trusted
    return tables


def tables_digest(drop: frozenset[str], marks: frozenset[str], mapped: dict[str, str]) -> str:
    """SHA-256 of the tables' content (code points sorted, one canonical JSON): what a cache must
    reproduce."""
    doc = [
        sorted(map(ord, drop)),
        sorted(map(ord, marks)),
        sorted((ord(k), v) for k, v in mapped.items()),
    ]
    return hashlib.sha256(json.dumps(doc, separators=(",", ":")).encode()).hexdigest()


TABLES_DIGESTS: dict[str, str] = {
    "14.0.0": "f078f7c56fe6badbec1ba43e0ccbf5b7a1026c5c48bce445df1ce56a9f7c2339",
}
"""The content digest (:func:`tables_digest`) of the tables :func:`_tables` builds, per Unicode
database version.

The cache file is derived data anyone with write access to the cache folder can change; a file whose
content does not hash to the pinned digest is never used (a table missing one invisible character
would let values split by it through). Under a Unicode version not listed here the tables are built
in every process and never read from a file. A test checks the pin against a fresh build, so a
change to :func:`_tables` must update it."""


def _has_sentinels(drop: frozenset[str], marks: frozenset[str], mapped: dict[str, str]) -> bool:
    """A few entries every correct table holds (ZWSP and the soft hyphen dropped, the keycap mark,
    full-width and mathematical digits, the no-break space): a damaged cache file fails here and is
    rebuilt."""
    return (
        {"\u200b", "\u00ad", "\ufeff"} <= drop
        and "\u20e3" in marks
        and mapped.get("\uff11") == "1"
        and mapped.get("\U0001d7ce") == "0"
        and mapped.get("\u00a0") == " "
        and mapped.get("\uff20") == "@"
    )


def cached_tables(
    cache_dir: Path | None = None,
) -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """:func:`_tables`, read from a JSON cache file when one for this Python's Unicode database and
    this module's source exists and its content hashes to the pinned :data:`TABLES_DIGESTS` (≈ 2 ms
    instead of a scan of every code point, 0.2-0.7 s); otherwise built and written there for the
    next process (atomically; a cache that cannot be written is skipped). A file of another layout,
    Unicode version or source is never read; a malformed or tampered one is rebuilt."""
    key = _tables_key()
    path = (cache_dir or spcl_cache_dir()) / f"folding-{key}.json"
    try:
        tables = _decode(json.loads(path.read_bytes()), key)
    except (OSError, ValueError):
        tables = None
    if tables is not None:
        return tables
    drop, marks, mapped = _tables()
    doc = {
        "version": TABLES_VERSION,
        "key": key,
        "unidata_version": unicodedata.unidata_version,
        "drop": sorted(map(ord, drop)),
        "marks": sorted(map(ord, marks)),
        "mapped": {str(ord(k)): v for k, v in sorted(mapped.items())},
    }
    with suppress(OSError):  # a cache that cannot be written is skipped
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, json.dumps(doc, separators=(",", ":")))
    return drop, marks, mapped


_DROP, _MARKS, _MAP = cached_tables()
# One scan tells whether anything may need folding. The class holds the BMP characters (compiled to
# a bitmap) and, as one range, every astral character (emoji too): a class listing the astral marks
# and digits one by one, or a "+", would make the scan several times slower.
_ANY = re.compile(
    "["
    + _ranges(sorted(ord(c) for c in (*_DROP, *_MARKS, *_MAP) if ord(c) < 0x10000))
    + "\U00010000-\U0010ffff]"
)
# A run of BMP look-alikes ("２０２４"), folded in one step once _ANY found its first character.
_MAP_RUN = re.compile("[" + _ranges(sorted(ord(c) for c in _MAP if ord(c) < 0x10000)) + "]+")
_TABLE = str.maketrans(_MAP)


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded ``text`` and where each of its kept runs starts in the original text.

    ``seg_folded[i]`` is the folded offset where run ``i`` starts and ``seg_orig[i]`` its offset in
    the original; a run ends where characters were dropped. ``orig_len`` is the original text's
    length.
    """

    text: str
    seg_folded: tuple[int, ...]
    seg_orig: tuple[int, ...]
    orig_len: int

    def offset(self, pos: int) -> int:
        """The original offset of folded offset ``pos`` (``len(text)`` maps to the original's
        length).

        A position where characters were dropped maps past them: the end of a span covers them.
        """
        if pos >= len(self.text):
            return self.orig_len
        i = bisect_right(self.seg_folded, pos) - 1
        return self.seg_orig[i] + pos - self.seg_folded[i]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original half-open span of the folded span ``[start, end)``.

        >>> f = fold("tel 010\u200b-1234")
        >>> f.text, f.span(4, 12)
        ('tel 010-1234', (4, 13))
        """
        return self.offset(start), self.offset(end)


def needs_fold(text: str) -> bool:
    """True when ``text`` holds a character :func:`fold` may drop or replace (never for ASCII
    text)."""
    return not text.isascii() and _ANY.search(text) is not None


def fold(text: str) -> Folded | None:
    """The folded view of the NFC ``text``, or ``None`` when folding would change nothing.

    >>> fold("plain text") is None, fold("emoji 😀 only") is None
    (True, True)
    >>> fold("𝟎𝟏𝟎-１２３４").text
    '010-1234'
    """
    if text.isascii():
        return None
    first = _ANY.search(text)
    if first is None:
        return None
    pieces: list[str] = []
    seg_folded, seg_orig = [0], [0]
    pos = flen = 0  # text[:pos] is in pieces; flen = folded length so far
    last_drop = -2  # index of the last dropped character
    for m in _ANY.finditer(text, first.start()):  # one class scan; each candidate decided below
        i = m.start()
        if i < pos:  # inside a run of look-alikes already folded
            continue
        ch = text[i]
        if ch in _MAP:
            run = _MAP_RUN.match(text, i)
            # astral look-alikes (mathematical digits) alone
            end = run.end() if run is not None else i + 1
            pieces.append(text[pos:i])
            pieces.append(text[i:end].translate(_TABLE))
            flen += end - pos
            pos = end
        elif ch in _DROP or (
            ch in _MARKS and i and (last_drop == i - 1 or text[i - 1].isdecimal())
        ):
            pieces.append(text[pos:i])
            flen += i - pos
            pos = i + 1
            last_drop = i
            if seg_folded[-1] == flen:  # consecutive drops: one boundary
                seg_orig[-1] = pos
            else:
                seg_folded.append(flen)
                seg_orig.append(pos)
    if not pieces:
        return None
    pieces.append(text[pos:])
    return Folded("".join(pieces), tuple(seg_folded), tuple(seg_orig), len(text))
