"""The mask job's input: the filter's flagged Parquet (``spcl.executor.flagged``) or any file the
filter reads (JSONL, ``.gz``/``.zst``, a JSON array, Parquet of documents: read by the filter's own
reader, ``spcl.io.readers.read_records``), one unit of work each, read in batches with a unique key
for every row.

A record the reader cannot use (bad JSON, no text, NUL, too large…) becomes a failed row with the
reader's reason (``input:<reason>``), never a crash and never a silent drop."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.config import InputSettings
from spcl.executor import flagged
from spcl.executor.errors import JobError
from spcl.executor.flagged import batch_row_keys, derived_row_key, file_key
from spcl.executor.units import list_unit_files
from spcl.io.readers import JSONL_SUFFIXES, PARQUET_MAGIC, count_records, read_records
from spcl.rule_types import HitRow

__all__ = [
    "READ_COLUMNS",
    "InputRows",
    "MaskJobError",
    "batch_row_keys",
    "count_rows",
    "derived_row_key",
    "file_key",
    "list_input_files",
    "open_input",
    "read_rows",
]
READ_COLUMNS = ("id", "text", "lang", "hits", "reasons", "row_key", "source", "position")


MaskJobError = JobError
"""The mask job's name for the shared job error (``spcl.executor.errors.JobError``)."""


@dataclass(slots=True)
class InputRows:
    """One batch of input rows, as plain lists (``hits``/``reasons`` are ``None`` where the input
    has none)."""

    ids: list[str | None]
    texts: list[Any]
    langs: list[str | None]
    hits: list[list[HitRow] | None]
    reasons: list[list[str] | None]
    row_keys: list[str]
    errors: list[str | None] | None = None  # the reader's reason for a record it could not use


def is_parquet(path: Path) -> bool:
    """True when the file starts with Parquet's magic bytes (what a file is comes from its
    bytes)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == PARQUET_MAGIC
    except OSError as err:
        raise MaskJobError(f"cannot read {path}: {type(err).__name__}") from None


def list_input_files(input_path: str | Path) -> list[Path]:
    """The input files: a file as given; under a folder its Parquet files, or, when it holds none,
    the files the filter reads by name (``.jsonl``, ``.ndjson``, ``.json``, each optionally
    ``.gz``/``.zst``)."""
    parquet = list_unit_files(
        input_path, lambda p: p.name.endswith(".parquet"), what="Parquet file", error=MaskJobError
    )
    if parquet or Path(input_path).is_file():
        return parquet
    return list_unit_files(
        input_path,
        lambda p: p.name.lower().endswith(JSONL_SUFFIXES),
        what="input file",
        error=MaskJobError,
    )


def _reader_settings() -> Any:
    return InputSettings()


def count_rows(path: Path) -> int:
    """Rows of an input file: the Parquet footer, or the records the filter's reader counts in
    it."""
    if is_parquet(path):
        return flagged.count_rows(path)
    try:
        with open(path, "rb") as fh:
            return count_records(fh, str(path), _reader_settings())
    except OSError as err:
        raise MaskJobError(f"cannot read {path}: {type(err).__name__}") from None


def _read_records(path: Path, batch_size: int) -> Iterator[InputRows]:
    """The rows of a non-Parquet input file through the filter's reader, row keys as the filter
    derives them."""
    with open(path, "rb") as fh:
        for batch in read_records(fh, str(path), _reader_settings(), batch_size):
            col = {
                c: batch.column(c).to_pylist()
                for c in ("id", "text", "error", "source", "position")
            }
            n = batch.num_rows
            none: list[Any] = [None] * n
            keys = [
                derived_row_key(col["id"][i], col["source"][i], col["position"][i])
                for i in range(n)
            ]
            ids = [None if v is None else str(v) for v in col["id"]]
            yield InputRows(
                ids, col["text"], list(none), list(none), list(none), keys, col["error"]
            )


def open_input(
    path: Path, wanted: tuple[str, ...] = READ_COLUMNS
) -> tuple[pq.ParquetFile, list[str]]:
    """The input file opened, and which of the ``wanted`` columns it has
    (``spcl.executor.flagged.open_input``)."""
    return flagged.open_input(path, wanted)


def read_rows(path: Path, key: str, batch_size: int) -> Iterator[InputRows]:
    """The rows of one input file in batches; raises :class:`MaskJobError` naming the file when
    unreadable.

    A file that is not Parquet is read by the filter's reader (see the module docstring). Row keys:
    the input's ``row_key`` column where present and non-null, else derived from ``(id, source,
    position)`` where the filter wrote them, else from the file key and the row's index in the file.
    """
    if not is_parquet(path):
        try:
            yield from _read_records(path, batch_size)
        except OSError as err:
            raise MaskJobError(f"cannot read {path}: {type(err).__name__}") from None
        return
    pf, columns = open_input(path, READ_COLUMNS)
    index = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_size, columns=columns):
            n = batch.num_rows
            col = {c: batch.column(c).to_pylist() for c in columns}
            none: list[Any] = [None] * n
            ids = [None if v is None else str(v) for v in col["id"]]
            keys = batch_row_keys(col, n, key, index)
            yield InputRows(
                ids,
                col["text"],
                col.get("lang", none),
                col.get("hits", none),
                col.get("reasons", none),
                keys,
            )
            index += n
    except (OSError, pa.ArrowInvalid) as err:
        raise MaskJobError(f"cannot read {path} after row {index}: {type(err).__name__}") from None
