"""Splitting a large plain JSONL file into line-aligned byte ranges, so that one big file uses every core.

As Hadoop's text input does, a range ``[start, end)`` owns every line whose first byte lies in it: a reader of
a range that does not start at 0 skips the partial line before its first newline at or after ``start - 1``
(the previous range reads it to its end), and reads on past ``end`` to finish its last line. Every line of the
file is therefore read by exactly one range, whatever the range size. Compressed files (gzip, zstd) and
Parquet are never split: they stay one task each.
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
    """One unit of work of the filter job: a whole file (``end`` is None) or the ``index``-th byte range."""

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
    """The units of one file: ranges of ``split_bytes`` when it is splittable and larger, else the whole file.

    >>> [(s.start, s.end) for s in plan_splits("/a.jsonl", 250, True, 100)]
    [(0, 100), (100, 200), (200, 250)]
    """
    if not splittable or split_bytes <= 0 or size <= split_bytes:
        return [Split(source)]
    return [Split(source, start, min(start + split_bytes, size), i)
            for i, start in enumerate(range(0, size, split_bytes))]


def _first_line_start(fh: IO[bytes], start: int) -> int | None:
    """The offset of the first line that begins at or after ``start`` (``None`` past the end of the file)."""
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


def range_lines(fh: IO[bytes], start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """``(byte offset, line without newline)`` of every non-blank line whose first byte lies in ``[start, end)``
    of a plain (uncompressed) file; a UTF-8 BOM at offset 0 is skipped, ``\\r`` before a newline dropped."""
    first = _first_line_start(fh, start)
    if first is None or first >= end:
        return
    fh.seek(first)
    pending = b""
    offset = first  # file offset of pending[0]
    line_start = first  # where the current line begins (the BOM belongs to the first line): decides ownership
    if first == 0:
        head = fh.read(len(BOM))
        if head == BOM:
            offset = len(BOM)
        else:
            pending = head
    while line_start < end:
        nl = pending.find(b"\n")
        if nl < 0:
            chunk = fh.read(_CHUNK)
            if not chunk:
                if pending.strip():
                    yield offset, pending.rstrip(b"\r")
                return
            pending += chunk
            continue
        line = pending[:nl]
        if line.strip():
            yield offset, line.rstrip(b"\r")
        offset += nl + 1
        line_start = offset
        pending = pending[nl + 1:]
