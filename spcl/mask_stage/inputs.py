"""The mask job's input: flagged Parquet files, one unit of work each, and a unique key for every row."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
READ_COLUMNS = ("id", "text", "lang", "hits", "reasons", "row_key", "source", "position")


class MaskJobError(RuntimeError):
    """The job cannot run (bad input folder, unreadable file); messages name paths, never values."""


def list_input_files(input_path: str | Path) -> list[Path]:
    """The Parquet files under ``input_path`` (a file or a folder, searched recursively), sorted.

    Names starting with ``.`` or ``_`` (Spark's ``_SUCCESS``, temporary files) are skipped.
    """
    root = Path(input_path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise MaskJobError(f"input {root} is neither a Parquet file nor a folder")
    files = [
        p for p in root.rglob("*.parquet")
        if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
    ]
    return sorted(files)


def file_key(path: Path, root: str | Path) -> str:
    """A stable, filesystem-safe name for one input file: its stem and a hash of its path under ``root``.

    >>> file_key(Path("/in/decision=flagged/part-0.parquet"), "/in")[:7]
    'part-0-'
    """
    base = Path(root)
    rel = path.relative_to(base).as_posix() if base.is_dir() else path.name
    digest = hashlib.sha256(rel.encode("utf-8")).hexdigest()[:12]
    return f"{_KEY_UNSAFE.sub('_', path.stem)[:80]}-{digest}"


def derived_row_key(doc_id: Any, source: Any, position: Any) -> str:
    """The filter's row key (``spcl.io.schema.row_key``) for input that lacks the ``row_key`` column."""
    from spcl.io.schema import row_key

    return row_key("" if doc_id is None else str(doc_id), "" if source is None else str(source),
                   -1 if position is None else int(position))


def batch_row_keys(columns: dict[str, list[Any]], n: int, key: str, first_index: int) -> list[str]:
    """The row key of each of ``n`` rows: the ``row_key`` column where present and non-null, else derived from
    ``(id, source, position)`` where the filter wrote them, else from the file ``key`` and the row's index."""
    keys: list[str] = []
    for i in range(n):
        given = columns["row_key"][i] if "row_key" in columns else None
        if isinstance(given, str) and given:
            keys.append(given)
        elif "source" in columns and "position" in columns:
            keys.append(derived_row_key(columns["id"][i], columns["source"][i], columns["position"][i]))
        else:
            keys.append(derived_row_key(None, key, first_index + i))
    return keys


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
    """The input file opened, and which of the ``wanted`` columns it has; :class:`MaskJobError` (naming the
    file, never a value) when it cannot be read or lacks ``id`` and ``text``."""
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise MaskJobError(f"cannot read {path}: {type(err).__name__}") from None
    names = set(pf.schema_arrow.names)
    if not {"id", "text"} <= names:
        raise MaskJobError(f"{path} has no 'id' and 'text' columns (is it the filter job's flagged output?)")
    return pf, [c for c in wanted if c in names]


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


def count_rows(path: Path) -> int:
    """Rows an input file declares in its footer (the reconciliation's input count)."""
    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except (OSError, pa.ArrowInvalid) as err:
        raise MaskJobError(f"cannot read {path}: {type(err).__name__}") from None
