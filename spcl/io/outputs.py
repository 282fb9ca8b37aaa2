"""Reading the filter job's output folder back (the Parquet partitions, not its JSON side files).

An output is complete when its run wrote ``stats.json`` (last, after every Parquet file; then
``manifest.json`` when manifests are on). A killed or failed run leaves an incomplete
folder; readers refuse it unless asked to read it anyway (``--allow-incomplete``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pyarrow.dataset as pads
import pyarrow.fs as pafs

from spcl.io.schema import DECISIONS
from spcl.io.storage import filesystem, join


class IncompleteOutput(ValueError):
    """The output folder was not finished by its run (no or bad ``stats.json``/``manifest.json``)."""


def _read_small(url: str) -> bytes | None:
    fs, path = filesystem(url)
    if fs.get_file_info(path).type != pafs.FileType.File:
        return None
    with fs.open_input_stream(path) as fh:
        return fh.read()


def check_complete(out: str | Path) -> dict:
    """The output's ``stats.json`` document; raises :class:`IncompleteOutput` naming what is missing
    when the run did not finish: no or unreadable ``stats.json``, or no ``manifest.json`` although the
    stats say one was to be written. (A run that finished but did not reconcile is complete: its
    ``stats.json`` says so, and ``spcl report`` shows it.)"""
    root = str(out)
    hint = "; pass --allow-incomplete to read it anyway"
    fs, path = filesystem(root)
    kind = fs.get_file_info(path).type
    if kind == pafs.FileType.NotFound:
        raise FileNotFoundError(f"filter output {root} does not exist")
    if kind != pafs.FileType.Directory:
        raise IncompleteOutput(f"{root} is a file, not a filter output folder")
    raw = _read_small(join(root, "stats.json"))
    if raw is None:
        raise IncompleteOutput(f"output {root} has no stats.json: the run that wrote it did not finish "
                               f"(killed or failed){hint}")
    try:
        stats = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise IncompleteOutput(f"output {root}: stats.json is not readable JSON{hint}") from None
    if not isinstance(stats, dict):
        raise IncompleteOutput(f"output {root}: stats.json does not hold an object{hint}")
    if stats.get("manifest") and _read_small(join(root, "manifest.json")) is None:
        raise IncompleteOutput(f"output {root} has no manifest.json: the run that wrote it did not finish{hint}")
    return stats


def output_files(out: str | Path, decisions: Iterable[str] = DECISIONS) -> list[str]:
    """The Parquet files of the given ``decision=…`` partitions of a local output folder, sorted."""
    root = Path(out)
    files: list[str] = []
    for decision in decisions:
        folder = root / f"decision={decision}"
        files += sorted(str(p) for p in folder.rglob("*.parquet") if not p.name.startswith((".", "_")))
    return files


def output_dataset(out: str | Path, decisions: Iterable[str] = DECISIONS, *,
                   allow_incomplete: bool = False) -> pads.Dataset:
    """A pyarrow dataset over the output partitions, with the ``decision`` column restored.

    ``stats.json`` and ``manifest.json`` sit beside the partitions; this reads only the Parquet files.
    Raises :class:`IncompleteOutput` for an unfinished output (unless ``allow_incomplete``) and
    ``FileNotFoundError`` when there are no Parquet files.
    (Spark: ``spark.read.option("basePath", out).parquet(f"{out}/decision=*")``.)
    """
    if not allow_incomplete:
        check_complete(out)
    files = output_files(out, decisions)
    if not files:
        raise FileNotFoundError(f"no decision=*/*.parquet files under {out}")
    return pads.dataset(files, format="parquet", partitioning="hive", partition_base_dir=str(out))
