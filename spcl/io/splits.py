"""Splitting a large plain JSONL file into line-aligned byte ranges, so that one big file uses every
core.

As Hadoop's text input does, a range ``[start, end)`` owns every line whose first byte lies in it: a
reader of a range that does not start at 0 skips the partial line before its first newline at or
after ``start - 1`` (the previous range reads it to its end), and reads on past ``end`` to finish
its last line. Every line of the file is therefore read by exactly one range, whatever the range
size. Compressed files (gzip, zstd) and Parquet are never split: they stay one task each.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from spcl.io.writers import file_key

BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Split:
    """One unit of work of the filter job: a whole file (``end`` is None) or the ``index``-th
    byte range."""

    source: str
    start: int = 0
    end: int | None = None
    index: int | None = None

    @property
    def key(self) -> str:
        """The output name key: the file's key, plus the range index for a range (deterministic)."""
        base = file_key(self.source)
        return base if self.index is None else f"{base}-{self.index:05d}"


def plan_splits(source: str, size: int, splittable: bool, split_bytes: int) -> list[Split]:
    """The units of one file: ranges of ``split_bytes`` when it is splittable and larger, else the
    whole file.

    >>> [(s.start, s.end) for s in plan_splits("/a.jsonl", 250, True, 100)]
    [(0, 100), (100, 200), (200, 250)]
    """
    if not splittable or split_bytes <= 0 or size <= split_bytes:
        return [Split(source)]
    return [
        Split(source, start, min(start + split_bytes, size), i)
        for i, start in enumerate(range(0, size, split_bytes))
    ]


def _first_line_start(fh: IO[bytes], start: int) -> int | None:
    """The offset of the first line that begins at or after ``start`` (``None`` past the end of
    the file)."""
    if start == 0:
        return 0
    fh.seek(start - 1)
    pos = start - 1
    while chunk := fh.read(_CHUNK):
        nl = chunk.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(chunk)
    return None


class LineSplitter:
    """Cuts a stream of byte chunks into lines without ever holding more than ``max_bytes`` of one
    line.

    :meth:`lines` yields ``(offset of the line's first byte, line without newline)`` per non-blank
    line (``\\r`` before the newline dropped), and ``(offset, None)`` once for a line longer than
    ``max_bytes``: the rest of that line is skipped chunk by chunk up to the next newline, never
    joined. The search for a newline looks at each chunk once, so a long line costs linear time.
    ``resume_offset`` is where reading stands after the last complete line (where a broken stream's
    remainder begins).

    >>> list(LineSplitter(max_bytes=4).lines(iter([b"ab\\nabcdef", b"gh\\n\\nxy"])))
    [(0, b'ab'), (3, None), (13, b'xy')]
    """

    def __init__(
        self, offset: int = 0, max_bytes: int | None = None, skip_bom: bool = False
    ) -> None:
        self.offset = offset  # where the current (unfinished) line begins
        self.max_bytes = max_bytes
        self.skip_bom = skip_bom
        self._end = offset  # offset just past the last byte received
        self._skipping = False
        self.bom_skipped = False
        self.newlines = 0  # newlines passed so far: the line being cut is line ``newlines + 1``

    @property
    def resume_offset(self) -> int:
        """The offset of the first byte not yet given out as (part of) a line."""
        return self._end if self._skipping else self.offset

    def lines(self, chunks: Iterator[bytes]) -> Iterator[tuple[int, bytes | None]]:
        """Lines of the concatenated ``chunks`` (see the class)."""
        self._parts: list[bytes] = []
        self._size = 0
        head = b""
        for chunk in chunks:
            if self.skip_bom:
                head += chunk
                if len(head) < len(BOM):
                    continue
                chunk, head = self._without_bom(head), b""
            yield from self._feed(chunk)
        if self.skip_bom and head:
            yield from self._feed(self._without_bom(head))
        if not self._skipping and self._parts:
            line = b"".join(self._parts)
            self._parts = []
            if line.strip():
                yield self.offset, line.rstrip(b"\r")

    def _without_bom(self, head: bytes) -> bytes:
        self.skip_bom = False
        if not head.startswith(BOM):
            return head
        self.bom_skipped = True
        self.offset = self._end = self._end + len(BOM)
        return head[len(BOM) :]

    def _feed(self, chunk: bytes) -> Iterator[tuple[int, bytes | None]]:
        base = self._end
        self._end += len(chunk)
        limit = self.max_bytes
        pos = 0
        while True:
            nl = chunk.find(b"\n", pos)
            piece = chunk[pos:] if nl < 0 else chunk[pos:nl]
            if not self._skipping:
                if limit is not None and self._size + len(piece) > limit:
                    self._skipping = True
                    self._parts, self._size = [], 0
                    yield self.offset, None
                elif nl < 0:
                    self._parts.append(piece)
                    self._size += len(piece)
                else:
                    line = b"".join(self._parts) + piece if self._parts else piece
                    self._parts, self._size = [], 0
                    if line.strip():
                        yield self.offset, line.rstrip(b"\r")
            if nl < 0:
                return
            self.newlines += 1
            self._skipping = False
            self.offset = base + nl + 1
            pos = nl + 1


def range_lines(
    fh: IO[bytes], start: int, end: int, max_bytes: int | None = None
) -> Iterator[tuple[int, bytes | None]]:
    """``(byte offset, line without newline)`` of every non-blank line whose first byte lies in
    ``[start, end)`` of a plain (uncompressed) file; a UTF-8 BOM at offset 0 is skipped, ``\\r``
    before a newline dropped; a line over ``max_bytes`` comes as ``(offset, None)`` and is skipped,
    never held whole (``LineSplitter``)."""
    first = _first_line_start(fh, start)
    if first is None or first >= end:
        return
    fh.seek(first)
    splitter = LineSplitter(first, max_bytes, skip_bom=first == 0)
    for offset, line in splitter.lines(iter(lambda: fh.read(_CHUNK), b"")):
        # the BOM is the 1st line's
        owner = 0 if splitter.bom_skipped and offset == len(BOM) else offset
        if owner >= end:
            return
        yield offset, line
