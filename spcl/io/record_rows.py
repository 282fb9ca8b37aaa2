"""One input record as one row of ``RECORD_SCHEMA``: a usable record, or a quarantine row with its
reason.

The readers of ``spcl.io.readers`` parse a file; this module turns each parsed record (a JSON value
or a Parquet row) into a row: its id (given, or derived from source and position), its text when
usable, the rest of the record as ``meta`` JSON, else the quarantine reason and the ``raw`` bytes it
stands for, so that nothing is lost. :class:`BatchBuilder` collects the rows into Arrow batches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import pyarrow as pa

from spcl.config import InputSettings
from spcl.io.schema import RECORD_SCHEMA
from spcl.io.streams import kept_bytes


def derive_id(source: str, position: int) -> str:
    """A stable document id from the source path and the record's position in it.

    >>> derive_id("crawl/a.jsonl", 0) == derive_id("crawl/a.jsonl", 0)
    True
    """
    return "d" + hashlib.sha256(f"{source}#{position}".encode()).hexdigest()[:23]


@dataclass
class BatchBuilder:
    """Collects rows column by column and emits ``RECORD_SCHEMA`` batches."""

    source: str
    batch_rows: int
    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in RECORD_SCHEMA.names}
    )

    def add(
        self,
        position: int,
        *,
        doc_id: str | None = None,
        text: str | None = None,
        meta: str | None = None,
        error: str | None = None,
        raw: bytes | None = None,
        id_note: str | None = None,
    ) -> None:
        """One row at ``position``: without ``doc_id`` the id is derived from source and position
        (note ``derived``)."""
        cols = self.columns
        cols["id"].append(doc_id if doc_id is not None else derive_id(self.source, position))
        cols["id_note"].append(id_note if doc_id is not None else "derived")
        cols["text"].append(text)
        cols["source"].append(self.source)
        cols["position"].append(position)
        cols["meta"].append(meta)
        cols["error"].append(error)
        cols["raw"].append(raw)

    def full(self) -> bool:
        """True when the rows collected fill a batch."""
        return len(self.columns["position"]) >= self.batch_rows

    def flush(self) -> pa.RecordBatch | None:
        """The rows collected as one batch (``None`` when there are none); the builder starts
        empty again."""
        if not self.columns["position"]:
            return None
        batch = pa.RecordBatch.from_pydict(self.columns, schema=RECORD_SCHEMA)
        self.columns = {name: [] for name in RECORD_SCHEMA.names}
        return batch


def doc_id_of(value: Any) -> tuple[str | None, str | None]:
    """``(id, note)`` for a record's id value: a non-blank string as is (note None); any other value
    kept as its compact JSON text (``7`` → ``"7"``, note ``non_string``); missing, null or blank →
    ``(None, "derived")`` (the reader derives one from source and position).

    >>> doc_id_of(7), doc_id_of("a"), doc_id_of(None)
    (('7', 'non_string'), ('a', None), (None, 'derived'))
    """
    if isinstance(value, str):
        return (value, None) if value.strip() and _encodable(value) else (None, "derived")
    if value is None:
        return None, "derived"
    try:
        if isinstance(value, bool | int | float | list | dict):
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        else:
            text = str(value)
    except (RecursionError, ValueError, TypeError):
        return None, "derived"
    return (text, "non_string") if _encodable(text) else (None, "derived")


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


def add_record(
    builder: BatchBuilder, record: Any, position: int, settings: InputSettings, raw: bytes
) -> None:
    """One parsed JSON value as one row (a usable record, or quarantine with its reason and
    ``raw``)."""
    if not isinstance(record, dict):
        builder.add(position, error="not_an_object", raw=raw)
        return
    doc_id, note = (
        doc_id_of(record.get(settings.id_field)) if settings.id_field else (None, "derived")
    )
    text = record.get(settings.text_field)
    problem = text_problem(text, settings)
    if problem:
        builder.add(position, doc_id=doc_id, id_note=note, error=problem, raw=raw)
        return
    try:
        meta = _meta_json(record, settings)
    except RecursionError:
        builder.add(position, doc_id=doc_id, id_note=note, error="too_deep", raw=raw)
        return
    # a value that cannot be written back as JSON text (an integer over 4,300 digits)
    except ValueError:
        builder.add(position, doc_id=doc_id, id_note=note, error="undecodable_value", raw=raw)
        return
    builder.add(position, doc_id=doc_id, id_note=note, text=text, meta=meta)


def unreadable_file(
    fh: IO[bytes], source: str, reason: str, batch_rows: int
) -> Iterator[pa.RecordBatch]:
    """The one quarantine row (``reason``, the file's bytes as ``raw``) for a file that opened but
    cannot be read as records."""
    builder = BatchBuilder(source, batch_rows)
    raw, reason = kept_bytes(fh, 0, reason)
    builder.add(0, error=reason, raw=raw)
    batch = builder.flush()
    assert batch is not None
    yield batch


def unopenable_file(source: str, reason: str) -> pa.RecordBatch:
    """The one quarantine row for a file that could not be opened or listed (``raw`` is null:
    ``source`` points to the file)."""
    builder = BatchBuilder(source, 1)
    builder.add(0, error=reason)
    batch = builder.flush()
    assert batch is not None
    return batch


def add_parquet_row(
    builder: BatchBuilder,
    row: dict[str, Any],
    position: int,
    names: set[str],
    settings: InputSettings,
) -> None:
    """One Parquet row (``names``: the file's columns) as one row: usable, or quarantine with the
    row as ASCII JSON in ``raw``."""
    text = row.get(settings.text_field) if settings.text_field in names else None
    doc_id, note = doc_id_of(row.get(settings.id_field)) if settings.id_field else (None, "derived")
    problem = text_problem(text, settings)
    if problem:
        raw = json.dumps(row, ensure_ascii=True, default=str).encode()
        builder.add(position, doc_id=doc_id, id_note=note, error=problem, raw=raw)
    else:
        builder.add(
            position, doc_id=doc_id, id_note=note, text=text, meta=_meta_json(row, settings)
        )
