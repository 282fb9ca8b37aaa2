"""Readers: turn the bytes of one input file into Arrow batches of ``RECORD_SCHEMA``.

Every input record yields exactly one row. A record that cannot be used (malformed JSON, invalid UTF-8,
a missing or non-string text field, empty text, NUL characters, a text over the size limit, the unreadable
tail of a truncated compressed file, an unreadable Parquet file) yields a row whose ``error`` names the
reason and whose ``raw`` keeps the bytes, so that nothing is lost. Blank JSONL lines are not records.

The functions take a binary file object, so the same code reads a local file (plain-Python engine) and
the ``content`` bytes that Spark's ``binaryFile`` source hands to a worker.
"""

from __future__ import annotations

import hashlib
import io
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from spcl.config import InputSettings
from spcl.io.schema import RECORD_SCHEMA

JSONL_SUFFIXES: tuple[str, ...] = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz",
                                   ".jsonl.zst", ".ndjson.zst", ".json.zst")
PARQUET_SUFFIXES: tuple[str, ...] = (".parquet", ".pq")
_CHUNK = 1 << 20
MAX_RAW_FILE_BYTES = 64 << 20
"""An unreadable Parquet file is kept whole in quarantine up to this size (larger: reason says so)."""


class UnsupportedInput(ValueError):
    """The file name has no supported extension (.jsonl[.gz|.zst], .ndjson, .json, .parquet)."""


def file_format(path: str, settings: InputSettings) -> str:
    """``jsonl`` or ``parquet`` for ``path``: the configured format, or by extension when ``auto``."""
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


def derive_id(source: str, position: int) -> str:
    """A stable document id from the source path and the record's position in it.

    >>> derive_id("crawl/a.jsonl", 0) == derive_id("crawl/a.jsonl", 0)
    True
    """
    return "d" + hashlib.sha256(f"{source}#{position}".encode()).hexdigest()[:23]


@dataclass
class _BatchBuilder:
    """Collects rows column by column and emits ``RECORD_SCHEMA`` batches."""

    source: str
    batch_rows: int
    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in RECORD_SCHEMA.names}
    )

    def add(self, position: int, *, doc_id: str | None = None, text: str | None = None,
            meta: str | None = None, error: str | None = None, raw: bytes | None = None) -> None:
        cols = self.columns
        cols["id"].append(doc_id if doc_id is not None else derive_id(self.source, position))
        cols["text"].append(text)
        cols["source"].append(self.source)
        cols["position"].append(position)
        cols["meta"].append(meta)
        cols["error"].append(error)
        cols["raw"].append(raw)

    def full(self) -> bool:
        return len(self.columns["position"]) >= self.batch_rows

    def flush(self) -> pa.RecordBatch | None:
        if not self.columns["position"]:
            return None
        batch = pa.RecordBatch.from_pydict(self.columns, schema=RECORD_SCHEMA)
        self.columns = {name: [] for name in RECORD_SCHEMA.names}
        return batch


def _doc_id(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _meta_json(record: dict[str, Any], settings: InputSettings) -> str | None:
    if not settings.keep_meta:
        return None
    rest = {k: v for k, v in record.items() if k not in (settings.text_field, settings.id_field)}
    if not rest:
        return None
    dumped = json.dumps(rest, ensure_ascii=False, default=str)
    return dumped if _encodable(dumped) else json.dumps(rest, ensure_ascii=True, default=str)


def text_problem(text: Any, settings: InputSettings) -> str | None:
    """The quarantine reason for a record's text value, or None when the text is usable."""
    if text is None:
        return "missing_text_field"
    if not isinstance(text, str):
        return "text_not_string"
    if not text.strip():
        return "empty_text"
    if len(text) > settings.max_text_chars:
        return "text_too_long"
    if "\x00" in text:
        return "text_contains_nul"
    if not _encodable(text):
        return "invalid_unicode_surrogate"
    return None


def _add_json_line(builder: _BatchBuilder, line: bytes, position: int, settings: InputSettings) -> None:
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError:
        builder.add(position, error="invalid_utf8", raw=line)
        return
    try:
        record = json.loads(decoded)
    except (json.JSONDecodeError, RecursionError):
        builder.add(position, error="malformed_json", raw=line)
        return
    if not isinstance(record, dict):
        builder.add(position, error="not_an_object", raw=line)
        return
    doc_id = _doc_id(record.get(settings.id_field)) if settings.id_field else None
    text = record.get(settings.text_field)
    problem = text_problem(text, settings)
    if problem:
        builder.add(position, doc_id=doc_id, error=problem, raw=line)
        return
    builder.add(position, doc_id=doc_id, text=text, meta=_meta_json(record, settings))


class StreamError(Exception):
    """A compressed stream is truncated or corrupt at the current point."""


def _inflate(fh: IO[bytes], new_decoder: Callable[[], Any]) -> Iterator[bytes]:
    """Decompressed chunks of a (multi-member) gzip or zstd stream, as far as it can be read.

    Incremental decoders return what they could decode before a truncation, so every complete
    record before the break is kept; :class:`StreamError` is raised at the break.
    """
    decoder = new_decoder()
    fed = False
    while chunk := fh.read(_CHUNK):
        while chunk:
            fed = True
            try:
                yield decoder.decompress(chunk)
            except (zlib.error, zstandard.ZstdError, EOFError, OSError) as err:
                raise StreamError(type(err).__name__) from None
            if decoder.eof:
                chunk = decoder.unused_data
                decoder = new_decoder()
                fed = False
            else:
                chunk = b""
    if fed and not decoder.eof:
        raise StreamError("truncated")


def _chunks(fh: IO[bytes], source: str) -> Iterator[bytes]:
    name = source.lower()
    if name.endswith(".gz"):
        return _inflate(fh, lambda: zlib.decompressobj(wbits=31))
    if name.endswith(".zst"):
        return _inflate(fh, lambda: zstandard.ZstdDecompressor().decompressobj())
    return iter(lambda: fh.read(_CHUNK), b"")


def iter_lines(fh: IO[bytes], source: str) -> Iterator[tuple[int, bytes, str | None]]:
    """Yield ``(byte offset, line without newline, None)`` per non-blank line of the decompressed stream.

    When the stream breaks (truncated or corrupt gzip/zstd), yield one final
    ``(offset, partial line before the break, "truncated_or_corrupt_stream")`` so the loss is recorded.
    """
    pending = b""
    offset = 0  # offset of the first byte of `pending` in the decompressed stream
    chunks = _chunks(fh, source)
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            break
        except StreamError:
            yield offset, pending, "truncated_or_corrupt_stream"
            return
        pending += chunk
        start = 0
        while (nl := pending.find(b"\n", start)) >= 0:
            line = pending[start:nl]
            if line.strip():
                yield offset + start, line.rstrip(b"\r"), None
            start = nl + 1
        offset += start
        pending = pending[start:]
    if pending.strip():
        yield offset, pending.rstrip(b"\r"), None


def read_jsonl(fh: IO[bytes], source: str, settings: InputSettings,
               batch_rows: int = 2000) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records of one JSONL file (plain, .gz or .zst)."""
    builder = _BatchBuilder(source, batch_rows)
    for position, line, stream_error in iter_lines(fh, source):
        if stream_error:
            builder.add(position, error=stream_error, raw=line)
        else:
            _add_json_line(builder, line, position, settings)
        if builder.full() and (batch := builder.flush()) is not None:
            yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def _unreadable_file(fh: IO[bytes], source: str, reason: str, batch_rows: int) -> Iterator[pa.RecordBatch]:
    builder = _BatchBuilder(source, batch_rows)
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    fh.seek(0)
    raw = fh.read() if size <= MAX_RAW_FILE_BYTES else None
    builder.add(0, error=reason if raw is not None else reason + "_too_large_to_keep", raw=raw)
    batch = builder.flush()
    assert batch is not None
    yield batch


def read_parquet(fh: IO[bytes], source: str, settings: InputSettings,
                 batch_rows: int = 2000) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the rows of one Parquet file, row group by row group.

    An unreadable file becomes one quarantine row (with the file's bytes); a row group that cannot be
    decoded becomes one quarantine row per row its footer declares (``corrupt_parquet_row_group``), so the
    reconciliation against the footer's row count still holds.
    """
    try:
        pfile = pq.ParquetFile(fh)
        names = set(pfile.schema_arrow.names)
    except (pa.ArrowException, OSError, ValueError):
        yield from _unreadable_file(fh, source, "unreadable_parquet_file", batch_rows)
        return
    position = 0
    builder = _BatchBuilder(source, batch_rows)
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
                _add_parquet_row(builder, rows[offset], position, names, settings)
            position += 1
            if builder.full() and (batch := builder.flush()) is not None:
                yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def _add_parquet_row(builder: _BatchBuilder, row: dict[str, Any], position: int, names: set[str],
                     settings: InputSettings) -> None:
    text = row.get(settings.text_field) if settings.text_field in names else None
    doc_id = _doc_id(row.get(settings.id_field)) if settings.id_field else None
    problem = text_problem(text, settings)
    if problem:
        raw = json.dumps(row, ensure_ascii=True, default=str).encode()
        builder.add(position, doc_id=doc_id, error=problem, raw=raw)
    else:
        builder.add(position, doc_id=doc_id, text=text, meta=_meta_json(row, settings))


def read_records(fh: IO[bytes], source: str, settings: InputSettings,
                 batch_rows: int = 2000) -> Iterator[pa.RecordBatch]:
    """Arrow batches (``RECORD_SCHEMA``) of every record of one input file, whatever its format."""
    if file_format(source, settings) == "parquet":
        yield from read_parquet(fh, source, settings, batch_rows)
    else:
        yield from read_jsonl(fh, source, settings, batch_rows)


def count_records(fh: IO[bytes], source: str, settings: InputSettings) -> int:
    """How many records ``read_records`` must emit for this file, counted without parsing them.

    Used to reconcile ``input = clean + flagged + quarantine`` independently of the parse and screen path.
    """
    if file_format(source, settings) == "parquet":
        try:
            return pq.ParquetFile(fh).metadata.num_rows
        except (pa.ArrowException, OSError, ValueError):
            return 1
    return sum(1 for _ in iter_lines(fh, source))
