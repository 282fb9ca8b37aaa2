"""The filter job's output folder: what a run writes there, and reading it back (the Parquet
partitions, not its JSON side files).

An output is complete when its run wrote ``stats.json`` (last, after every Parquet file; then
``manifest.json`` when manifests are on). A killed or failed run leaves an incomplete
folder; readers refuse it unless asked to read it anyway (``--allow-incomplete``).

What a filter run (and ``spcl report``, its derived view) writes, and so all that ``--overwrite``
may remove: ``decision=clean|flagged|quarantine/part-KEY.parquet`` (``spcl.io.writers``;
``.part-KEY.parquet.inprogress`` while written), ``stats.json`` and ``manifest.json`` (``.NAME.*``
while written, ``spcl.io.storage``), ``report.html`` and ``report/`` (``spcl.report.build``).
Anything else in the folder is not the filter's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.fs as pafs

from spcl.errors import UsageError
from spcl.io.schema import DECISIONS
from spcl.io.storage import filesystem, join

if TYPE_CHECKING:
    import pyarrow.dataset as pads

FILTER_SIDE_FILES: tuple[str, ...] = ("stats.json", "manifest.json")
"""The JSON files a filter run writes at the top of its output folder."""

_PART_FILE = re.compile(r"\.?part-[0-9a-f]{16}(-[0-9]{5})?\.parquet(\.inprogress)?")
_REPORT_FILE = re.compile(
    r"[a-z_]+\.png|facts\.json|manifest\.json|\.(facts|manifest)\.json\.[0-9]+\.[0-9a-f]{8}"
)
_ATOMIC_TEMP = re.compile(
    r"\.(stats\.json|manifest\.json|report\.html)\.[0-9]+\.[0-9a-f]{8}|\.report\.html\.tmp"
)


def _entries(fs: pafs.FileSystem, base: str) -> list[pafs.FileInfo]:
    return fs.get_file_info(pafs.FileSelector(base, recursive=False))


def _written_by_filter(fs: pafs.FileSystem, info: pafs.FileInfo) -> list[str]:
    """The paths under one top-level entry of an output folder that a filter run (or ``spcl
    report``) did not write; empty when the whole entry is the filter's."""
    name = info.base_name
    if info.type == pafs.FileType.Directory:
        if name in {f"decision={d}" for d in DECISIONS}:
            pattern = _PART_FILE
        elif name == "report":
            pattern = _REPORT_FILE
        else:
            return [info.path]
        return [
            e.path
            for e in _entries(fs, info.path)
            if e.type != pafs.FileType.File or not pattern.fullmatch(e.base_name)
        ]
    if info.type == pafs.FileType.File and (
        name in FILTER_SIDE_FILES or name == "report.html" or _ATOMIC_TEMP.fullmatch(name)
    ):
        return []
    return [info.path]


def foreign_entries(output: str) -> list[str]:
    """Paths under the folder ``output`` (a local path or URL) that no filter run wrote, sorted;
    empty when the folder holds only a filter run's files (or is empty or missing)."""
    fs, base = filesystem(output)
    if fs.get_file_info(base).type != pafs.FileType.Directory:
        return []
    return sorted(p for info in _entries(fs, base) for p in _written_by_filter(fs, info))


def clear_filter_output(output: str) -> None:
    """Create ``output`` as a folder, or empty one that holds only what a filter run wrote.

    Raises ``ValueError`` naming the first path a filter run did not write, and deletes nothing then
    (``--overwrite`` never removes what is not the filter's).
    """
    foreign = foreign_entries(output)
    if foreign:
        raise ValueError(
            f"output {output} holds {len(foreign)} path(s) a filter run did not write (e.g."
            f" {foreign[0]}): refusing to --overwrite it; move them away or choose another output"
        )
    fs, base = filesystem(output)
    if fs.get_file_info(base).type != pafs.FileType.Directory:
        fs.create_dir(base, recursive=True)
        return
    for info in _entries(fs, base):
        if info.type == pafs.FileType.Directory:
            fs.delete_dir(info.path)
        else:
            fs.delete_file(info.path)


def is_filter_output(folder: str | Path) -> bool:
    """Whether the local ``folder`` is a filter output folder: it holds a filter ``stats.json`` or
    ``manifest.json`` (kind ``spcl-filter-output``), or ``decision=*`` folders."""
    root = Path(folder)
    if any((root / f"decision={d}").is_dir() for d in DECISIONS):
        return True
    for name, is_filter in (
        ("manifest.json", lambda doc: doc.get("kind") == "spcl-filter-output"),
        ("stats.json", lambda doc: "reconciliation" in doc and "counts" in doc),
    ):
        try:
            doc = json.loads((root / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and is_filter(doc):
            return True
    return False


class IncompleteOutput(UsageError, ValueError):
    """The output folder was not finished by its run (no or bad
    ``stats.json``/``manifest.json``)."""


class NotFilterOutput(UsageError, ValueError):
    """The folder is a finished output of another stage (``spcl mask``/``spcl generalize``), not
    the filter's."""


def _read_small(url: str) -> bytes | None:
    fs, path = filesystem(url)
    if fs.get_file_info(path).type != pafs.FileType.File:
        return None
    with fs.open_input_stream(path) as fh:
        return fh.read()


def check_complete(out: str | Path) -> dict:
    """The output's ``stats.json`` document; raises :class:`IncompleteOutput` naming what is missing
    when the run did not finish: no or unreadable ``stats.json``, or no ``manifest.json`` although
    the stats say one was to be written. (A run that finished but did not reconcile is complete: its
    ``stats.json`` says so, and ``spcl report`` shows it.) A finished output of a later stage
    (``metrics.json`` beside no ``stats.json``) raises :class:`NotFilterOutput` saying so, not that
    a run did not finish."""
    root = str(out)
    hint = "; pass --allow-incomplete to read it anyway"
    fs, path = filesystem(root)
    kind = fs.get_file_info(path).type
    if kind == pafs.FileType.NotFound:
        raise FileNotFoundError(f"filter output {root} does not exist")
    if kind != pafs.FileType.Directory:
        raise IncompleteOutput(f"{root} is a file, not a filter output folder")
    raw = _read_small(join(root, "stats.json"))
    if raw is None and _read_small(join(root, "metrics.json")) is not None:
        raise NotFilterOutput(
            f"{root} is the output of a later stage (metrics.json, no stats.json: spcl mask or "
            "spcl generalize), not a filter output; give the filter's output folder (the one "
            "that stage read its input from)"
        )
    if raw is None:
        raise IncompleteOutput(
            f"output {root} has no stats.json: the run that wrote it did not finish "
            f"(killed or failed){hint}"
        )
    try:
        stats = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise IncompleteOutput(f"output {root}: stats.json is not readable JSON{hint}") from None
    if not isinstance(stats, dict):
        raise IncompleteOutput(f"output {root}: stats.json does not hold an object{hint}")
    if stats.get("manifest") and _read_small(join(root, "manifest.json")) is None:
        raise IncompleteOutput(
            f"output {root} has no manifest.json: the run that wrote it did not finish{hint}"
        )
    return stats


def output_files(out: str | Path, decisions: Iterable[str] = DECISIONS) -> list[str]:
    """The Parquet files of the given ``decision=…`` partitions of a local output folder, sorted."""
    root = Path(out)
    files: list[str] = []
    for decision in decisions:
        folder = root / f"decision={decision}"
        files += sorted(
            str(p) for p in folder.rglob("*.parquet") if not p.name.startswith((".", "_"))
        )
    return files


def output_dataset(
    out: str | Path, decisions: Iterable[str] = DECISIONS, *, allow_incomplete: bool = False
) -> pads.Dataset:
    """A pyarrow dataset over the output partitions, with the ``decision`` column restored.

    ``stats.json`` and ``manifest.json`` sit beside the partitions; this reads only the Parquet
    files. Raises :class:`IncompleteOutput` for an unfinished output (unless ``allow_incomplete``)
    and ``FileNotFoundError`` when there are no Parquet files. (Spark:
    ``spark.read.option("basePath", out).parquet(f"{out}/decision=*")``.)
    """
    if not allow_incomplete:
        check_complete(out)
    files = output_files(out, decisions)
    if not files:
        raise FileNotFoundError(f"no decision=*/*.parquet files under {out}")
    import pyarrow.dataset as pads  # heavy: loads pandas; only where a dataset is read

    return pads.dataset(files, format="parquet", partitioning="hive", partition_base_dir=str(out))
