"""What a job keeps on disk between runs: atomic JSON writes, done-markers (one JSON file per unit),
and committed part files read back for a retry pass.

Every file is written under a temporary name beside it and moved into place
(:func:`spcl.io.atomic.write_atomic`): a reader sees the old file or the whole new one. A unit is
committed when its done-marker exists; its parts are moved into place before the marker is written.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypedDict, cast

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.executor.errors import JobError
from spcl.io.atomic import write_atomic
from spcl.io.jsonl import read_jsonl_objects


def write_json_atomic(path: Path, data: Mapping[str, object], *, private: bool = False) -> None:
    """Write ``data`` as JSON (indent 1, sorted keys, final newline) to ``path`` under a temporary
    name, then move it into place (``spcl.io.atomic.write_atomic``); ``private`` creates it with
    mode 0600."""
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n", private=private)


class UnitMarker(TypedDict):
    """The common fields of every done-marker a file job writes (:meth:`FileJob.start
    <spcl.executor.filejob.FileJob.start>`): the unit's key, its input path and SHA-256, the runs
    that wrote it (this one last) and the release hash of the settings."""

    key: str
    input: str
    input_sha256: str
    last_run: str
    runs: list[str]
    release_hash: str


class DoneMarker(TypedDict, total=False):
    """A done-marker as read back (any field may be missing from an older or damaged marker; each
    job checks the fields it reads): the common fields :meth:`FileJob.start
    <spcl.executor.filejob.FileJob.start>` writes, the fields of the job's own identity, and its
    counters (``stats``: each job reads them into its own record)."""

    key: str
    input: str
    input_sha256: str
    last_run: str
    runs: list[str]
    release_hash: str
    parts_hash: str  # the annotate job's markers of older versions
    backend: str
    model: str
    prompt_version: str
    config_hash: str
    source_file: str
    pending: int
    stats: dict[str, Any]


def marker_file(folder: str | Path, key: str) -> Path:
    """The done-marker of unit ``key`` in a markers ``folder``."""
    return Path(folder) / f"{key}.json"


class MarkerError(JobError):
    """A done-marker exists but cannot be read (truncated, not JSON, not an object, or a field of
    the wrong kind): the job refuses to run rather than guess whether the unit is done. The message
    names the file."""


def marker_unreadable(path: Path) -> MarkerError:
    """The one-line error for the damaged done-marker ``path``."""
    return MarkerError(
        f"done-marker {path} is damaged (truncated or not a marker); remove it to redo that "
        "input file, or use a new output folder"
    )


def read_json_marker(path: Path) -> DoneMarker | None:
    """A done-marker's content, or ``None`` when the unit was never committed; :class:`MarkerError`
    when the file exists but is not a readable JSON object (never a traceback, never taken as
    done)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, IsADirectoryError):
        raise marker_unreadable(path) from None
    try:
        data = json.loads(text)
    except ValueError:  # JSONDecodeError, and ints past Python's digit limit
        raise marker_unreadable(path) from None
    if not isinstance(data, dict):
        raise marker_unreadable(path)
    return cast(DoneMarker, data)  # a JSON object; its fields are checked where they are read


def load_json_markers(folder: str | Path) -> dict[str, DoneMarker]:
    """``{key: marker}`` of every done-marker in ``folder`` (by file stem, sorted; empty when
    absent); :class:`MarkerError` for a damaged one."""
    root = Path(folder)
    if not root.is_dir():
        return {}
    found = {p.stem: read_json_marker(p) for p in sorted(root.glob("*.json"))}
    return {k: v for k, v in found.items() if v is not None}


def read_part(
    path: Path, schema: pa.Schema, derive: dict[str, Callable[[pa.Table], pa.Array]] | None = None
) -> pa.Table:
    """A committed Parquet part file as ``schema`` (an empty table when absent). A column of
    ``schema`` the file lacks (a part written by an older version) is made by
    ``derive[name](table)`` when given."""
    if not path.exists():
        return schema.empty_table()
    table = pq.read_table(path)
    for name, make in (derive or {}).items():
        if name in schema.names and name not in table.schema.names:
            table = table.append_column(name, make(table))
    return table.select(schema.names).cast(schema)


def commit_unit(
    staged_vault: Path, vault_target: Path, parts: list[tuple[Path, pa.Table]], tmp: Path
) -> None:
    """Commit one unit's outputs in order: every non-empty part table is written (zstd Parquet)
    under ``tmp`` first; then the staged vault file (when there is one) moves to ``vault_target``,
    which must not exist (a writer name is unique per run and attempt: a mapping is never replaced;
    :class:`JobError` naming the file); then each part moves into place in the order given, and a
    part whose table is empty is removed (a killed run's leftovers). Vault first: a released row
    never lacks its mapping."""
    moves: list[tuple[Path | None, Path]] = []
    for i, (target, table) in enumerate(parts):
        staged = None
        if table.num_rows:
            staged = tmp / f"{i}-{target.parent.name}.parquet"
            pq.write_table(table, staged, compression="zstd")
        moves.append((staged, target))
    if staged_vault.exists():
        if vault_target.exists():
            raise JobError(
                f"vault file {vault_target.name} already exists; refusing to overwrite it"
            )
        os.replace(staged_vault, vault_target)
    for src, dst in moves:
        if src is None:
            dst.unlink(missing_ok=True)
        else:
            os.replace(src, dst)


def remove_staging(*folders: Path) -> None:
    """Remove what a killed run left under temporary names in ``folders`` (a job's ``_tmp``, a
    vault's ``_staging``; call only when no other run is active)."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a JSONL file a job wrote (blank lines skipped)."""
    yield from read_jsonl_objects(path)
