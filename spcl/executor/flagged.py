"""The filter job's flagged Parquet as the input of the later jobs (mask, generalize): which files,
how to open one, how many rows it declares, and the unique key of every row.

Errors are :class:`spcl.executor.errors.JobError` naming the file, never a value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.executor.errors import JobError
from spcl.executor.units import file_key, list_unit_files
from spcl.io.schema import row_key

__all__ = [
    "batch_row_keys",
    "count_rows",
    "derived_row_key",
    "file_key",
    "list_input_files",
    "open_input",
]


def list_input_files(input_path: str | Path) -> list[Path]:
    """The Parquet files under ``input_path`` (a file or a folder, searched recursively), sorted.

    Names starting with ``.`` or ``_`` (Spark's ``_SUCCESS``, temporary files) are skipped
    (``spcl.executor.units.list_unit_files``).
    """
    return list_unit_files(input_path, lambda p: p.name.endswith(".parquet"), what="Parquet file")


def derived_row_key(doc_id: Any, source: Any, position: Any) -> str:
    """The filter's row key (``spcl.io.schema.row_key``) for input that lacks the ``row_key``
    column."""

    return row_key(
        "" if doc_id is None else str(doc_id),
        "" if source is None else str(source),
        -1 if position is None else int(position),
    )


def batch_row_keys(columns: dict[str, list[Any]], n: int, key: str, first_index: int) -> list[str]:
    """The row key of each of ``n`` rows: the ``row_key`` column where present and non-null, else
    derived from ``(id, source, position)`` where the filter wrote them, else from the file ``key``
    and the row's index."""
    keys: list[str] = []
    for i in range(n):
        given = columns["row_key"][i] if "row_key" in columns else None
        if isinstance(given, str) and given:
            keys.append(given)
        elif "source" in columns and "position" in columns:
            keys.append(
                derived_row_key(columns["id"][i], columns["source"][i], columns["position"][i])
            )
        else:
            keys.append(derived_row_key(None, key, first_index + i))
    return keys


def open_input(path: Path, wanted: tuple[str, ...]) -> tuple[pq.ParquetFile, list[str]]:
    """The input file opened, and which of the ``wanted`` columns it has; :class:`JobError` (naming
    the file, never a value) when it cannot be read or lacks ``id`` and ``text``."""
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise JobError(f"cannot read {path}: {type(err).__name__}") from None
    names = set(pf.schema_arrow.names)
    if not {"id", "text"} <= names:
        raise JobError(
            f"{path} has no 'id' and 'text' columns (is it the filter job's flagged output?)"
        )
    return pf, [c for c in wanted if c in names]


def count_rows(path: Path) -> int:
    """Rows an input file declares in its footer (the reconciliation's input count)."""
    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except (OSError, pa.ArrowInvalid) as err:
        raise JobError(f"cannot read {path}: {type(err).__name__}") from None
