"""The mask job's input: flagged Parquet files (``spcl.executor.flagged``), one unit of work each, read in batches
with a unique key for every row."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.executor import flagged
from spcl.executor.errors import JobError
from spcl.executor.flagged import batch_row_keys, count_rows, derived_row_key, file_key, list_input_files

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
    """One batch of input rows, as plain lists (``hits``/``reasons`` are ``None`` where the input has none)."""

    ids: list[str | None]
    texts: list[Any]
    langs: list[str | None]
    hits: list[list[dict[str, Any]] | None]
    reasons: list[list[str] | None]
    row_keys: list[str]


def open_input(path: Path, wanted: tuple[str, ...] = READ_COLUMNS) -> tuple[pq.ParquetFile, list[str]]:
    """The input file opened, and which of the ``wanted`` columns it has (``spcl.executor.flagged.open_input``)."""
    return flagged.open_input(path, wanted)


def read_rows(path: Path, key: str, batch_size: int) -> Iterator[InputRows]:
    """The rows of one input file in batches; raises :class:`MaskJobError` naming the file when unreadable.

    Row keys: the input's ``row_key`` column where present and non-null, else derived from ``(id, source,
    position)`` where the filter wrote them, else from the file key and the row's index in the file.
    """
    pf, columns = open_input(path, READ_COLUMNS)
    index = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_size, columns=columns):
            n = batch.num_rows
            col = {c: batch.column(c).to_pylist() for c in columns}
            none: list[Any] = [None] * n
            ids = [None if v is None else str(v) for v in col["id"]]
            keys = batch_row_keys(col, n, key, index)
            yield InputRows(ids, col["text"], col.get("lang", none), col.get("hits", none),
                            col.get("reasons", none), keys)
            index += n
    except (OSError, pa.ArrowInvalid) as err:
        raise MaskJobError(f"cannot read {path} after row {index}: {type(err).__name__}") from None
