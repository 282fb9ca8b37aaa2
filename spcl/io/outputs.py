"""Reading the filter job's output folder back (the Parquet partitions, not its JSON side files)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow.dataset as pads

from spcl.io.schema import DECISIONS


def output_files(out: str | Path, decisions: Iterable[str] = DECISIONS) -> list[str]:
    """The Parquet files of the given ``decision=…`` partitions of a local output folder, sorted."""
    root = Path(out)
    files: list[str] = []
    for decision in decisions:
        folder = root / f"decision={decision}"
        files += sorted(str(p) for p in folder.rglob("*.parquet") if not p.name.startswith((".", "_")))
    return files


def output_dataset(out: str | Path, decisions: Iterable[str] = DECISIONS) -> pads.Dataset:
    """A pyarrow dataset over the output partitions, with the ``decision`` column restored.

    ``stats.json`` and ``manifest.json`` sit beside the partitions; this reads only the Parquet files.
    Raises ``FileNotFoundError`` when there are none.
    (Spark: ``spark.read.option("basePath", out).parquet(f"{out}/decision=*")``.)
    """
    files = output_files(out, decisions)
    if not files:
        raise FileNotFoundError(f"no decision=*/*.parquet files under {out}")
    return pads.dataset(files, format="parquet", partitioning="hive", partition_base_dir=str(out))
