"""One pass of a file job over one unit: what it starts from (:class:`UnitPass`), its state while
the skeleton's loop runs (:class:`UnitRun`, whose :meth:`~UnitRun.pick` sorts a batch's rows), what
a retry pass keeps (:func:`keep_settled`), and where it stages what it writes
(:func:`staging_area`).

The loop itself is :meth:`spcl.executor.filejob.FileJob.run_unit`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from spcl.executor.state import DoneMarker, UnitMarker


@dataclass(frozen=True, slots=True)
class UnitPass:
    """One pass over one unit (:meth:`FileJob.start`): the file, its key and content hash, the prior
    done-marker of a retry pass (``None``: from scratch), and the done-marker's common fields."""

    path: Path
    key: str
    input_sha: str
    prior: DoneMarker | None
    marker: UnitMarker


SETTLED, DUPLICATE, NEW = "settled", "duplicate", "new"
"""What :meth:`UnitRun.pick` says of a row: a retry pass keeps its committed output (skip it), an
earlier row of this pass has its key (a ``duplicate_row_key`` failure where the job keys rows), or
new (to process)."""


@dataclass(slots=True, kw_only=True)
class UnitRun:
    """One pass of the skeleton's loop over one unit (:meth:`FileJob.run_unit`); a job subclasses it
    for its own fields (its row buffers; ``spcl.executor.vaultjob.VaultRun`` for the jobs with a
    vault file). ``settled``: the row keys a retry pass keeps (``None``: from scratch); ``stats``:
    the job's counters; ``seen``: the keys this pass met; ``records``: what the unit reports (the
    records asked about, unless the job says)."""

    unit: UnitPass
    settled: set[Any] | None
    stats: Any
    seen: set[Any] = field(default_factory=set)
    records: int = 0
    started: float = field(default_factory=time.perf_counter)

    @property
    def mode(self) -> str:
        """``retry`` for a pass that only asks again about what the committed unit left open,
        else ``full``."""
        return "full" if self.settled is None else "retry"

    def pick(self, keys: Sequence[Any]) -> list[str]:
        """Per row key: :data:`SETTLED` when a retry pass keeps its row, :data:`DUPLICATE` when an
        earlier row of this pass has the key, else :data:`NEW` (and the key is seen).

        >>> run = UnitRun(unit=UnitPass(Path("f"), "k", "", None, {}), settled={"a"}, stats=None)
        >>> run.pick(["a", "b", "b", "c"])
        ['settled', 'new', 'duplicate', 'new']
        """
        out = []
        for key in keys:
            if self.settled is not None and key in self.settled:
                out.append(SETTLED)
            elif key in self.seen:
                out.append(DUPLICATE)
            else:
                self.seen.add(key)
                out.append(NEW)
        return out


def keep_settled(
    released: pa.Table, failed: pa.Table, retry: pa.Array
) -> tuple[pa.Table, pa.Table, set[str]]:
    """The committed rows a retry pass keeps, and the row keys they settle. ``released`` and
    ``failed`` are a unit's two Parquet parts (each with a ``row_key`` column), ``retry`` flags the
    failed rows to ask about again. Every earlier row of a retried key goes (released or failed), so
    the pass redoes all the rows that share it (the first processed, the rest
    ``duplicate_row_key``): each input row keeps exactly one output. The pass then asks about every
    row the kept parts do not settle: the retried ones, and any a run killed between its part moves
    left in neither part (so a row is never lost nor written twice).

    >>> ok = pa.table({"row_key": ["a", "b"]})
    >>> bad = pa.table({"row_key": ["b", "c", "d"]})
    >>> kept_ok, kept_bad, settled = keep_settled(ok, bad, pa.array([True, False, False]))
    >>> (kept_ok.column("row_key").to_pylist(), kept_bad.column("row_key").to_pylist(),
    ...  sorted(settled))
    (['a'], ['c', 'd'], ['a', 'c', 'd'])
    """
    redo = pa.array(sorted(set(failed.filter(retry).column("row_key").to_pylist())), pa.string())
    released = released.filter(pc.invert(pc.is_in(released.column("row_key"), value_set=redo)))
    failed = failed.filter(pc.invert(pc.is_in(failed.column("row_key"), value_set=redo)))
    settled = set(released.column("row_key").to_pylist()) | set(
        failed.column("row_key").to_pylist()
    )
    return released, failed, settled


@contextmanager
def staging_area(output: str | Path, vault: str | Path, key: str) -> Iterator[tuple[Path, Path]]:
    """``(tmp, vault_stage)``: a new folder under ``<output>/_tmp`` for one pass over unit ``key``
    (named by the key, the process and 32 random bits, so concurrent attempts never share it) and
    its twin under ``<vault>/_staging`` for the vault file being written; both are removed when the
    pass ends, committed or not (what a killed process leaves, the next run's cleanup removes)."""
    tmp = Path(output) / "_tmp" / f"{key}.{os.getpid()}.{secrets.token_hex(4)}"
    tmp.mkdir(parents=True)
    vault_stage = Path(vault) / "_staging" / tmp.name
    try:
        yield tmp, vault_stage
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(vault_stage, ignore_errors=True)


__all__ = ["DUPLICATE", "NEW", "SETTLED", "UnitPass", "UnitRun", "keep_settled", "staging_area"]
