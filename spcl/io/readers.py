"""Readers: turn the bytes of one input file into Arrow batches of ``RECORD_SCHEMA``.

Every input record yields exactly one row. A record that cannot be used (malformed JSON, JSON nested
too deep, invalid UTF-8, a missing or non-string text field, empty text, NUL characters, a text over
the size limit, the unreadable tail of a truncated compressed file, an unreadable Parquet file)
yields a row whose ``error`` names the reason and whose ``raw`` keeps the bytes it stands for, so
that nothing is lost (one record's row: ``spcl.io.record_rows``). Blank JSONL lines are not records;
a UTF-8 byte order mark at the start of a file is not part of a record.

The file name only says which files to read; what a file *is* comes from its first bytes: gzip and
zstd streams are decompressed whatever their name, a Parquet file (``PAR1``) is read as Parquet,
anything else as JSONL text. A ``.json`` file whose content starts with ``[`` is one JSON array of
records (position = element index); read whole, or quarantined whole with its reason.

The functions take a binary file object, so the same code reads a local file (plain-Python engine)
and the ``content`` bytes that Spark's ``binaryFile`` source hands to a worker.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.config import InputSettings
from spcl.errors import UsageError
from spcl.io.jsonl import decode_line
from spcl.io.record_rows import BatchBuilder, add_parquet_row, add_record, unreadable_file
from spcl.io.splits import range_lines
from spcl.io.streams import (
    BOM,
    StreamError,
    decompressed_chunks,
    iter_lines,
    sniff,
)
from spcl.io.streams import (
    PARQUET_MAGIC as PARQUET_MAGIC,  # re-exported: mask inputs sniff Parquet by it
)

JSONL_SUFFIXES: tuple[str, ...] = (
    ".jsonl",
    ".ndjson",
    ".json",
    ".jsonl.gz",
    ".ndjson.gz",
    ".json.gz",
    ".jsonl.zst",
    ".ndjson.zst",
    ".json.zst",
)
PARQUET_SUFFIXES: tuple[str, ...] = (".parquet", ".pq")


class UnsupportedInput(UsageError, ValueError):
    """The file name has no supported extension (.jsonl[.gz|.zst], .ndjson, .json, .parquet)."""


def file_format(path: str, settings: InputSettings) -> str:
    """``jsonl`` or ``parquet`` for ``path``: the configured format, or by extension when
    ``auto``."""
    if settings.format != "auto":
        return settings.format
    name = path.lower().rsplit("/", 1)[-1]
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    raise UnsupportedInput(f"unsupported input file type: {path}")


def is_supported(path: str, settings: InputSettings) -> bool:
    """True when ``path`` is a file this reader understands."""
    try:
        file_format(path, settings)
    except UnsupportedInput:
        return False
    return True


def _base_name(source: str) -> str:
    name = source.lower().rsplit("/", 1)[-1]
    for suffix in (".gz", ".zst"):
        name = name.removesuffix(suffix)
    return name


def _add_json_line(
    builder: BatchBuilder, line: bytes, position: int, settings: InputSettings
) -> None:
    record, problem = decode_line(line)
    if problem:
        builder.add(position, error=problem, raw=line)
        return
    add_record(builder, record, position, settings, line)


def read_jsonl(
    fh: IO[bytes], source: str, settings: InputSettings, batch_rows: int = 2000
) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records of one JSONL file (plain, .gz or .zst)."""
    builder = BatchBuilder(source, batch_rows)
    for position, line, stream_error in iter_lines(fh, source, settings.max_record_bytes):
        if stream_error or line is None:
            builder.add(position, error=stream_error, raw=line)
        else:
            _add_json_line(builder, line, position, settings)
        if builder.full() and (batch := builder.flush()) is not None:
            yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def read_jsonl_range(
    fh: IO[bytes],
    source: str,
    settings: InputSettings,
    start: int,
    end: int,
    batch_rows: int = 2000,
) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records of a plain JSONL file whose lines begin in ``[start, end)``
    (``spcl.io.splits``): positions are file offsets, so ids and row keys equal a whole-file
    read's."""

    builder = BatchBuilder(source, batch_rows)
    for position, line in range_lines(fh, start, end, settings.max_record_bytes):
        if line is None:
            builder.add(position, error="record_too_large")
        else:
            _add_json_line(builder, line, position, settings)
        if builder.full() and (batch := builder.flush()) is not None:
            yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def count_range_records(fh: IO[bytes], start: int, end: int, max_bytes: int | None = None) -> int:
    """Records ``read_jsonl_range`` must emit for ``[start, end)``, counted without parsing them
    (pass the same ``max_bytes``: an oversized line is still one record)."""

    return sum(1 for _ in range_lines(fh, start, end, max_bytes))


def is_splittable(fh: IO[bytes], source: str, settings: InputSettings) -> bool:
    """True for a plain (uncompressed) JSONL file: its lines can be read in byte ranges."""
    return sniff(fh) == "plain" and content_format(fh, source, settings) == "jsonl"


JSON_ARRAY_RECORDS = 16
"""A ``.json`` file holding one array is read whole: it may hold up to this many times
``input.max_record_bytes`` (decompressed); a larger one is quarantined whole as
``json_array_too_large``."""


def _json_array(
    fh: IO[bytes], kind: str, max_record_bytes: int
) -> tuple[list[Any] | None, str | None]:
    """``(elements, None)`` for a file holding one JSON array, else ``(None, reason)``."""
    limit = JSON_ARRAY_RECORDS * max_record_bytes
    parts: list[bytes] = []
    size = 0
    try:
        for chunk in decompressed_chunks(fh, kind):
            size += len(chunk)
            if size > limit:
                return None, "json_array_too_large"
            parts.append(chunk)
    except StreamError:
        return None, "truncated_or_corrupt_stream"
    data = b"".join(parts)
    del parts
    value, error = decode_line(data.removeprefix(BOM))
    if error is not None:
        return None, error
    return (value, None) if isinstance(value, list) else (None, "not_an_array")


def _is_json_array(fh: IO[bytes], source: str, kind: str) -> bool:
    """True for a ``.json`` file whose first non-blank character (after a BOM) is ``[``."""
    if not _base_name(source).endswith(".json"):
        return False
    buf = rest = b""
    try:
        for chunk in decompressed_chunks(fh, kind):
            buf += chunk
            rest = buf.removeprefix(BOM).lstrip()
            if rest:
                break
    except StreamError:
        pass
    fh.seek(0)
    return rest.startswith(b"[")


def read_json_array(
    fh: IO[bytes], source: str, settings: InputSettings, kind: str, batch_rows: int = 2000
) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the elements of a ``.json`` file holding one JSON array (position = index).

    A file that is not one readable array becomes one quarantine row with the file's bytes.
    """
    elements, problem = _json_array(fh, kind, settings.max_record_bytes)
    if elements is None:
        yield from unreadable_file(fh, source, problem or "malformed_json", batch_rows)
        return
    builder = BatchBuilder(source, batch_rows)
    for position, element in enumerate(elements):
        raw = json.dumps(element, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        add_record(builder, element, position, settings, raw)
        if builder.full() and (batch := builder.flush()) is not None:
            yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def read_parquet(
    fh: IO[bytes], source: str, settings: InputSettings, batch_rows: int = 2000
) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the rows of one Parquet file, row group by row group.

    An unreadable file becomes one quarantine row (with the file's bytes); a row group that cannot
    be decoded becomes one quarantine row per row its footer declares
    (``corrupt_parquet_row_group``), so the reconciliation against the footer's row count still
    holds.
    """
    try:
        pfile = pq.ParquetFile(fh)
        names = set(pfile.schema_arrow.names)
    except (pa.ArrowException, OSError, ValueError):
        yield from unreadable_file(fh, source, "unreadable_parquet_file", batch_rows)
        return
    position = 0
    builder = BatchBuilder(source, batch_rows)
    for group in range(pfile.num_row_groups):
        declared = pfile.metadata.row_group(group).num_rows
        try:
            rows = pfile.read_row_group(group).to_pylist()
        except (pa.ArrowException, OSError, ValueError):
            rows = None
        for offset in range(declared):
            if rows is None or offset >= len(rows):
                builder.add(position, error="corrupt_parquet_row_group")
            else:
                add_parquet_row(builder, rows[offset], position, names, settings)
            position += 1
            if builder.full() and (batch := builder.flush()) is not None:
                yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def content_format(fh: IO[bytes], source: str, settings: InputSettings) -> str:
    """How to read one file: ``parquet`` (``PAR1`` content, or a Parquet name/setting: unreadable
    when the content is not Parquet), ``json_array`` or ``jsonl`` — by content first, then name."""
    kind = sniff(fh)
    if kind == "parquet":
        return "parquet"
    if is_supported(source, settings) and file_format(source, settings) == "parquet":
        return "parquet"
    return "json_array" if _is_json_array(fh, source, kind) else "jsonl"


def read_records(
    fh: IO[bytes], source: str, settings: InputSettings, batch_rows: int = 2000
) -> Iterator[pa.RecordBatch]:
    """Arrow batches (``RECORD_SCHEMA``) of every record of one input file, whatever its format."""
    fmt = content_format(fh, source, settings)
    if fmt == "parquet":
        yield from read_parquet(fh, source, settings, batch_rows)
    elif fmt == "json_array":
        yield from read_json_array(fh, source, settings, sniff(fh), batch_rows)
    else:
        yield from read_jsonl(fh, source, settings, batch_rows)


def count_records(fh: IO[bytes], source: str, settings: InputSettings) -> int:
    """How many records ``read_records`` must emit for this file, counted without parsing them (a
    JSON array is parsed: its length is its record count).

    Used to reconcile ``input = clean + flagged + quarantine`` independently of the parse and screen
    path.
    """
    fmt = content_format(fh, source, settings)
    if fmt == "parquet":
        try:
            return pq.ParquetFile(fh).metadata.num_rows
        except (pa.ArrowException, OSError, ValueError):
            return 1
    if fmt == "json_array":
        elements, _ = _json_array(fh, sniff(fh), settings.max_record_bytes)
        return 1 if elements is None else len(elements)
    return sum(1 for _ in iter_lines(fh, source, settings.max_record_bytes))
