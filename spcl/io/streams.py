"""Byte streams of input files: what a file is by its first bytes, decompression of gzip and zstd
streams in bounded steps, and the non-blank lines of a (possibly compressed) file with the
record-size cap.

A truncated or corrupt compressed stream is never read past silently: every complete line before the
break is given out, then the break itself with the bytes it stands for (``StreamError``,
``iter_lines``).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

import zstandard

from spcl.errors import RunFailed
from spcl.io.splits import LineSplitter

_CHUNK = 1 << 20
MAX_RAW_FILE_BYTES = 64 << 20
"""An unreadable file (or broken compressed member) is kept whole in quarantine up to this size
(larger: ``raw`` is null and the reason ends in ``_too_large_to_keep``; ``source`` and ``position``
point to it)."""
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_MAGIC = b"PAR1"
BOM = b"\xef\xbb\xbf"


def sniff(fh: IO[bytes]) -> str:
    """What a file is by its first bytes: ``gzip``, ``zstd``, ``parquet`` or ``plain`` (rewinds
    ``fh``)."""
    fh.seek(0)
    head = fh.read(4)
    fh.seek(0)
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head == ZSTD_MAGIC:
        return "zstd"
    if head == PARQUET_MAGIC:
        return "parquet"
    return "plain"


class StreamError(RunFailed):
    """A compressed stream is truncated or corrupt; ``member_start`` is the compressed offset of the
    member (gzip) or frame (zstd) that broke."""

    def __init__(self, member_start: int) -> None:
        super().__init__(f"compressed stream broken in the member starting at byte {member_start}")
        self.member_start = member_start


def _inflate(
    fh: IO[bytes], new_decoder: Callable[[], Any], step: Callable[[Any, Any], tuple[bytes, Any]]
) -> Iterator[bytes]:
    """Decompressed chunks of a (multi-member) gzip or zstd stream, as far as it can be read.

    ``step(decoder, data)`` decodes a bounded part of ``data`` and returns ``(output, data not yet
    consumed)``, so that no single call expands into more than a few MiB (a small compressed input
    can stand for gigabytes). Incremental decoders return what they could decode before a
    truncation, so every complete record before the break is kept; :class:`StreamError` is raised at
    the break.
    """
    decoder = new_decoder()
    fed = False
    consumed = member_start = 0
    while chunk := fh.read(_CHUNK):
        data: Any = memoryview(chunk)
        while len(data):
            fed = True
            try:
                out, rest = step(decoder, data)
            except (zlib.error, zstandard.ZstdError, EOFError, OSError):
                raise StreamError(member_start) from None
            consumed += len(data) - len(rest)
            if out:
                yield out
            if decoder.eof:
                member_start = consumed
                decoder = new_decoder()
                fed = False
            data = rest
    if fed and not decoder.eof:
        raise StreamError(member_start)


_ZSTD_FEED = 1 << 10
"""Compressed bytes given to the zstd decoder at a time: zstd expands at most ≈ 32,768-fold, so one
call yields at most ≈ 32 MiB (its decoder has no output limit of its own)."""


def _gzip_step(decoder: Any, data: Any) -> tuple[bytes, Any]:
    out = decoder.decompress(data, _CHUNK)
    return out, (decoder.unused_data if decoder.eof else decoder.unconsumed_tail)


def _zstd_step(decoder: Any, data: Any) -> tuple[bytes, Any]:
    out = decoder.decompress(data[:_ZSTD_FEED])
    rest = data[_ZSTD_FEED:]
    return out, (decoder.unused_data + rest if decoder.eof else rest)


def decompressed_chunks(fh: IO[bytes], kind: str) -> Iterator[bytes]:
    """Decompressed chunks of ``fh`` by what it is (``sniff``), not by its name."""
    if kind == "gzip":
        return _inflate(fh, lambda: zlib.decompressobj(wbits=31), _gzip_step)
    if kind == "zstd":
        return _inflate(fh, lambda: zstandard.ZstdDecompressor().decompressobj(), _zstd_step)
    return iter(lambda: fh.read(_CHUNK), b"")


def kept_bytes(fh: IO[bytes], start: int, reason: str) -> tuple[bytes | None, str]:
    """The file's bytes from ``start`` to the end, with ``reason``; ``None`` and
    ``reason_too_large_to_keep`` past ``MAX_RAW_FILE_BYTES``."""
    fh.seek(start)
    data = fh.read(MAX_RAW_FILE_BYTES + 1)
    if len(data) > MAX_RAW_FILE_BYTES:
        return None, reason + "_too_large_to_keep"
    return data, reason


def iter_lines(
    fh: IO[bytes], source: str, max_bytes: int | None = None
) -> Iterator[tuple[int, bytes | None, str | None]]:
    """Yield ``(byte offset, line without newline, None)`` per non-blank line of the decompressed
    stream (compression sniffed from the content; a leading UTF-8 BOM skipped).

    A line longer than ``max_bytes`` yields ``(offset, None, "record_too_large")`` and is skipped
    chunk by chunk to its newline, never held whole. When the stream breaks (truncated or corrupt
    gzip/zstd), yield one final ``(offset, compressed bytes of the broken member to the end of the
    file, "truncated_or_corrupt_stream")`` so the loss is recorded with the bytes it stands for
    (``None`` and ``…_too_large_to_keep`` past ``MAX_RAW_FILE_BYTES``).
    """
    for _, offset, line, error in iter_numbered_lines(fh, max_bytes):
        yield offset, line, error


def iter_numbered_lines(
    fh: IO[bytes], max_bytes: int | None = None
) -> Iterator[tuple[int, int, bytes | None, str | None]]:
    """:func:`iter_lines` with the 1-based line number (blank lines counted) first in each tuple."""
    splitter = LineSplitter(0, max_bytes, skip_bom=True)
    try:
        for offset, line in splitter.lines(decompressed_chunks(fh, sniff(fh))):
            yield (
                splitter.newlines + 1,
                offset,
                line,
                None if line is not None else "record_too_large",
            )
    except StreamError as err:
        raw, reason = kept_bytes(fh, err.member_start, "truncated_or_corrupt_stream")
        yield splitter.newlines + 1, splitter.resume_offset, raw, reason


__all__ = [
    "BOM",
    "GZIP_MAGIC",
    "MAX_RAW_FILE_BYTES",
    "PARQUET_MAGIC",
    "ZSTD_MAGIC",
    "StreamError",
    "decompressed_chunks",
    "iter_lines",
    "iter_numbered_lines",
    "kept_bytes",
    "sniff",
]
