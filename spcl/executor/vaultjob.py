"""The file jobs whose unit writes a vault file and two Parquet parts, failures first (mask,
generalize).

A :class:`VaultJob` is a :class:`~spcl.executor.filejob.FileJob` that also does the same way what
those jobs share: a retry pass keeps the committed rows its failures to retry do not touch
(:func:`~spcl.executor.unitpass.keep_settled`), every pass writes a new vault file (named by the
job, the unit, the run and 16 random bits: a mapping is never overwritten) staged beside the output,
and the commit moves the vault file, then the failed part, then the released part into place (the
kept rows with the new ones: ``spcl.executor.state.commit_unit``). The job supplies its part schemas
and the hooks :meth:`VaultJob.new_run` (its counters and row buffers), :meth:`VaultJob.settle`
(counts from the committed parts, the done-marker) and the per-batch work of
:meth:`~spcl.executor.filejob.FileJob.take`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

import pyarrow as pa

from spcl.executor.filejob import FileJob
from spcl.executor.state import commit_unit, read_part
from spcl.executor.unitpass import UnitPass, UnitRun, keep_settled, staging_area
from spcl.executor.units import part_path
from spcl.mask.vault import open_vault


class PartBuffer(Protocol):
    """The new rows of one Parquet part in one pass (:class:`PartRows`, or a job's own buffer, whose
    ``add`` takes the job's row)."""

    def add(self, *args: Any, **kwargs: Any) -> None:
        """Append one row."""
        ...

    def table(self) -> pa.Table:
        """The rows as a table of the part's schema."""
        ...


@dataclass(slots=True, kw_only=True)
class VaultRun(UnitRun):
    """One pass of a :class:`VaultJob` (a :class:`~spcl.executor.unitpass.UnitRun`): ``kept``: the
    committed rows a retry pass keeps, by part; ``rows``: the pass's new rows, by part; ``writer``:
    the vault file's name; ``vault``: the vault file open for writing and ``staged``: the staging
    folders (``(tmp, vault stage)``) while the pass runs."""

    rows: dict[str, PartBuffer]
    kept: dict[str, pa.Table] = field(default_factory=dict)
    writer: str = ""
    vault: Any = None
    staged: tuple[Path, Path] = (Path(), Path())


class PartRows:
    """The new rows of one Parquet part in one pass, as column buffers of ``schema``."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.columns: dict[str, list[Any]] = {name: [] for name in schema.names}

    def add(self, *values: Any) -> None:
        """Append one row: one value per column of the schema, in its order."""
        for name, value in zip(self.schema.names, values, strict=True):
            self.columns[name].append(value)

    def table(self) -> pa.Table:
        """The rows as a table of the schema."""
        return pa.table(self.columns, schema=self.schema)


class VaultJob(FileJob):
    """A file job whose unit writes a vault file and the Parquet parts :attr:`parts` (see the
    module)."""

    parts: ClassVar[tuple[str, str]] = ("failed", "released")
    """The folders of the failed part and of the released part under the output (committed in
    this order)."""
    schemas: ClassVar[dict[str, pa.Schema]] = {}
    """The schema of each part."""
    writer_prefix: ClassVar[str] = ""
    """The first word of the vault files' names (``<prefix>-<key>-<run id>-<4 hex>``)."""

    # --- hooks ------------------------------------------------------------------------------------
    def read_part(self, path: Path, part: str) -> pa.Table:
        """A committed part as its schema (empty when absent)."""
        return read_part(path, self.schemas[part])

    def retry_rows(self, cfg: Any, failed: pa.Table) -> pa.Array:
        """Which committed failures a retry pass asks about again: the transient ones unless the
        job says."""
        return failed.column("transient")

    def new_run(self, worker: Any, unit: UnitPass, settled: set[Any] | None) -> VaultRun:
        """The pass's :class:`VaultRun` with the job's counters (those of ``unit.prior`` it carries
        over) and a row buffer for each part."""
        raise NotImplementedError

    def settle(self, worker: Any, run: Any, tables: dict[str, pa.Table]) -> dict[str, object]:
        """Count the committed ``tables`` of each part into the pass's counters; the done-marker."""
        raise NotImplementedError

    # --- the skeleton -----------------------------------------------------------------------------
    def begin(self, worker: Any, unit: UnitPass) -> VaultRun:
        """The job's run, keeping (for a retry pass) the committed rows its retried failures do not
        touch, with a new vault file's name."""
        failed_part, released_part = self.parts
        kept = {name: self.schemas[name].empty_table() for name in self.parts}
        settled = None
        if unit.prior is not None:
            out = self.output(worker.cfg)
            released, failed = (
                self.read_part(part_path(out / name, unit.key), name)
                for name in (released_part, failed_part)
            )
            released, failed, settled = keep_settled(
                released, failed, self.retry_rows(worker.cfg, failed)
            )
            kept = {failed_part: failed, released_part: released}
        run = self.new_run(worker, unit, settled)
        run.kept = kept
        run.writer = f"{self.writer_prefix}-{unit.key}-{worker.run_id}-{secrets.token_hex(2)}"
        return run

    @contextmanager
    def writing(self, worker: Any, run: Any) -> Iterator[Any]:
        """The pass's staging folders and its vault file open for writing (``run.vault``)."""
        cfg = worker.cfg
        with (
            staging_area(self.output(cfg), cfg.vault, run.unit.key) as staged,
            closing(open_vault(staged[1], worker.key, writer=run.writer)) as vault,
        ):
            run.staged, run.vault = staged, vault
            yield vault

    def commit(self, worker: Any, run: Any) -> dict[str, object]:
        """The vault file, then each part (kept rows and new ones) moved into place;
        :meth:`settle`."""
        cfg = worker.cfg
        run.vault.close()
        tables = {
            name: pa.concat_tables([run.kept[name], run.rows[name].table()]) for name in self.parts
        }
        tmp, vault_stage = run.staged
        commit_unit(
            vault_stage / f"{run.writer}.jsonl",
            Path(cfg.vault) / f"{run.writer}.jsonl",
            [
                (part_path(self.output(cfg) / name, run.unit.key), tables[name])
                for name in self.parts
            ],
            tmp,
        )
        return self.settle(worker, run, tables)


__all__ = ["PartBuffer", "PartRows", "VaultJob", "VaultRun"]
