"""The file-job skeleton: what every job whose unit of work is one input file does the same way.

A :class:`FileJob` is a :class:`~spcl.executor.stage.FileStage` that holds the control flow of a
resumable, fail-closed file job once — the plan (output checks, a foreign input's results refused,
results made under other settings refused, what is done by content, what has failures to retry),
staging cleanup, the done-marker's common fields, the committed check of a retried Spark task, the
per-unit record loop, and the reconciliation of Parquet parts against the input footers. A job
(mask, generalize, annotate) is a small class of hooks, as datatrove's ``PipelineStep`` is:

- :meth:`FileJob.list_units` — its input files and their keys;
- :meth:`FileJob.release_hash` — the hash of the settings that decide what a committed unit holds;
- :meth:`FileJob.needs_retry` — whether a committed, unchanged unit still has records to ask again
  about;
- the per-unit loop (:meth:`FileJob.run_unit`, once for every job): :meth:`FileJob.begin` a
  :class:`~spcl.executor.unitpass.UnitRun` over a :class:`~spcl.executor.unitpass.UnitPass` (what a
  retry pass keeps and settles, the job's counters and row buffers), open what the pass writes
  through (:meth:`FileJob.writing`: a vault writer), then for each batch :meth:`FileJob.read_unit`
  yields, ``UnitRun.pick`` sorts its rows (settled by a retry pass, a duplicate key, or new) and
  :meth:`FileJob.take` routes them; :meth:`FileJob.commit` moves the outputs into place and gives
  the done-marker, which the skeleton writes last (:meth:`FileJob.log_unit` then says what the pass
  did). ``spcl.executor.vaultjob`` adds the commit of the jobs that write Parquet parts and a vault
  file (mask, generalize).

One name for each idea: the output folder is the config's ``output`` field (``lock_field`` names it
where a config still calls it otherwise), the settings hash is the **release hash**. A done-marker
stores it as ``release_hash``; a marker an older version wrote under ``parts_hash`` is still read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, ClassVar, Literal

import pyarrow.parquet as pq

from spcl.executor.errors import JobError
from spcl.executor.stage import FileStage, Plan, UnitReport
from spcl.executor.state import (
    DoneMarker,
    UnitMarker,
    marker_file,
    marker_unreadable,
    read_json_marker,
    remove_staging,
    write_json_atomic,
)
from spcl.executor.unitpass import UnitPass, UnitRun
from spcl.executor.units import Unit, foreign_input, other_settings, part_path
from spcl.io.inputs import check_job_output
from spcl.manifest import sha256_file
from spcl.progress import Progress

Reconciliation = dict[str, int | bool | list[str]]
"""What :meth:`FileJob.reconcile` finds: ``input_rows``, the rows of each part (named by the job),
``ok`` and ``uncommitted_files``."""

MARKER_HASH_FIELDS: tuple[Literal["release_hash", "parts_hash"], ...] = (
    "release_hash",
    "parts_hash",
)
"""Where a done-marker holds its release hash: ``release_hash`` (written), ``parts_hash`` (read
only: the annotate job's markers of older versions)."""


def marker_hash(marker: DoneMarker) -> str:
    """The release hash a done-marker recorded (``""`` when none: never equal to a run's hash).

    >>> marker_hash({"release_hash": "a1"}), marker_hash({"parts_hash": "b2"}), marker_hash({})
    ('a1', 'b2', '')
    """
    for name in MARKER_HASH_FIELDS:
        if marker.get(name):
            return str(marker[name])
    return ""


def footer_rows(path: Path) -> int:
    """Rows a committed Parquet part declares in its footer (0 when the part is absent)."""
    return int(pq.ParquetFile(path).metadata.num_rows) if path.exists() else 0


class FileJob(FileStage):
    """The skeleton of a resumable file job; a subclass sets the class attributes and writes the
    hooks."""

    error: ClassVar[type[JobError]] = JobError
    """The job's error (a :class:`JobError`): every refusal of the plan raises it."""
    done_folder: ClassVar[str] = "_done"
    """The done-markers' folder under the output."""
    staging_folders: ClassVar[tuple[str, ...]] = ("_tmp",)
    """Folders under the output a killed run may leave staged files in (removed before a run)."""
    staging_globs: ClassVar[tuple[str, ...]] = ()
    """Patterns under the output of single staged files a killed run may leave (removed before a
    run)."""
    vault_field: ClassVar[str | None] = "vault"
    """The config field of the vault folder (checked like the output; its ``_staging`` cleaned),
    or ``None``."""
    settings_what: ClassVar[str] = "made with other settings"
    """How the refusal of results made under other settings names them (``<n> file(s)
    <settings_what>``)."""
    results_what: ClassVar[str] = "results"
    """What the output holds per input file (``the <results_what> of another input file``)."""
    check_all_markers: ClassVar[bool] = False
    """Check the release hash of every marker in the output (not only of the current input's
    files)."""
    output_flag: ClassVar[str] = "--output"
    """The flag the refusals tell the user to change."""
    private_markers: ClassVar[bool] = False
    """Done-markers created with mode 0600."""

    # --- hooks ------------------------------------------------------------------------------------
    def list_units(self, cfg: Any) -> list[tuple[Path, str]]:
        """``(path, key)`` of every input file."""
        raise NotImplementedError

    def release_hash(self, cfg: Any) -> str:
        """The hash of the settings that decide what a committed unit holds."""
        return str(cfg.release_hash())

    def needs_retry(self, cfg: Any, marker: DoneMarker) -> bool:
        """True when the committed, unchanged unit of ``marker`` has records to ask about again."""
        raise NotImplementedError

    def check_marker(self, path: Path, marker: DoneMarker) -> DoneMarker:
        """``marker`` when its fields have the kinds the job reads; ``MarkerError`` otherwise
        (fail closed)."""
        if not isinstance(marker.get("stats", {}), dict):
            raise marker_unreadable(path)
        return marker

    def begin(self, worker: Any, unit: UnitPass) -> UnitRun:
        """The pass's :class:`UnitRun` (the job's subclass, which the other hooks get as ``run``):
        for a retry pass (``unit.prior``) the committed rows it keeps and the keys they settle, the
        job's counters and its empty row buffers."""
        raise NotImplementedError

    def writing(self, worker: Any, run: Any) -> AbstractContextManager[Any]:
        """What the pass writes through while it runs (a staged vault file); nothing unless the
        job says."""
        return nullcontext()

    def read_unit(self, worker: Any, run: Any) -> Iterator[tuple[Sequence[Any], Any]]:
        """``(row keys, batch)`` for each batch of the unit's records, read through ``spcl.io``."""
        raise NotImplementedError

    def take(
        self, worker: Any, run: Any, keys: Sequence[Any], batch: Any, picked: list[str]
    ) -> None:
        """Process one batch (``picked``: :meth:`UnitRun.pick` of its keys) and route each row it
        asks about to the pass's buffers (an output, a failure, a vault record), counting it: the
        worker's ``take(run, keys, batch, picked)`` unless the job says."""
        worker.take(run, keys, batch, picked)

    def commit(self, worker: Any, run: Any) -> dict[str, object]:
        """Move the pass's outputs into place (the kept rows with the new ones); the done-marker to
        write: ``run.unit.marker`` with the job's own fields."""
        raise NotImplementedError

    def log_unit(self, run: Any) -> None:
        """Say what the pass did (counts, never values); nothing unless the job says."""

    def run_unit(self, worker: Any, unit: UnitPass) -> int:
        """The per-unit loop: :meth:`begin`, then within :meth:`writing` every batch of
        :meth:`read_unit` picked and given to :meth:`take`, :meth:`commit`, the done-marker written
        last, :meth:`log_unit`. The records the unit reports (``run.records``)."""
        run = self.begin(worker, unit)
        with self.writing(worker, run):
            for keys, batch in self.read_unit(worker, run):
                self.take(worker, run, keys, batch, run.pick(keys))
            marker = self.commit(worker, run)
            write_json_atomic(
                self.marker_path(worker.cfg, unit.key), marker, private=self.private_markers
            )
            self.log_unit(run)
        return run.records

    # --- the skeleton -----------------------------------------------------------------------------
    def output(self, cfg: Any) -> Path:
        """The job's output folder."""
        return Path(getattr(cfg, self.lock_field or "output"))

    def marker_path(self, cfg: Any, key: str) -> Path:
        """The done-marker of unit ``key``."""
        return marker_file(self.output(cfg) / self.done_folder, key)

    def marker(self, cfg: Any, key: str) -> DoneMarker | None:
        """The checked done-marker of ``key``; ``None`` when the unit was never committed."""
        path = self.marker_path(cfg, key)
        data = read_json_marker(path)
        return None if data is None else self.check_marker(path, data)

    def all_markers(self, cfg: Any) -> dict[str, DoneMarker]:
        """``{key: checked marker}`` of every done-marker in the output."""
        folder = self.output(cfg) / self.done_folder
        found = (
            {p.stem: self.marker(cfg, p.stem) for p in sorted(folder.glob("*.json"))}
            if folder.is_dir()
            else {}
        )
        return {k: m for k, m in found.items() if m is not None}

    def check_paths(self, cfg: Any) -> None:
        """``spcl.io.inputs.UnsafeOutput`` for an output (or vault) inside the input or a filter
        output."""
        check_job_output([cfg.input], str(self.output(cfg)))
        if self.vault_field is not None:
            check_job_output([cfg.input], getattr(cfg, self.vault_field), "vault")

    def pending(
        self, cfg: Any
    ) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]], dict[str, str]]:
        """``(to do, all, SHA-256 by key)`` of the input files: to do are new or changed files and
        files with records to retry. Refuses (the job's error) an output holding another input's
        results under a key of this input, or units committed under another release hash (skipping
        them would leave old results under this run's settings; a marker without a hash counts as
        other settings)."""
        self.check_paths(cfg)
        keyed = self.list_units(cfg)
        markers = {k: self.marker(cfg, k) for _, k in keyed}
        current = self.release_hash(cfg)
        out, flag = self.output(cfg), self.output_flag
        if self.check_all_markers:
            stale = [k for k, m in self.all_markers(cfg).items() if marker_hash(m) != current]
            if stale:
                raise self.error(
                    f"{out} holds {len(stale)} file(s) {self.settings_what}; use a new {flag}"
                )
        foreign = foreign_input(
            keyed, lambda k: None if (m := markers[k]) is None else m.get("input")
        )
        if foreign:
            raise self.error(
                f"{out} holds the {self.results_what} of another input file ({foreign[0]}) "
                f"under the name of {foreign[1]}; use a new {flag} for a different --input"
            )
        other = other_settings(
            keyed, lambda k: None if (m := markers[k]) is None else marker_hash(m), current
        )
        if other:
            raise self.error(
                f"{out} holds {len(other)} file(s) {self.settings_what}; rerun with the "
                f"same settings or use a new {flag}"
            )
        hashes = {k: self.content_hash(p) for p, k in keyed}  # by content, not by name
        todo = [
            (p, k)
            for p, k in keyed
            if (m := markers[k]) is None
            or m.get("input_sha256") != hashes[k]
            or self.needs_retry(cfg, m)
        ]
        return todo, keyed, hashes

    def content_hash(self, path: Path) -> str:
        """SHA-256 of an input file's bytes; the job's error (naming the file) when it cannot be
        read."""
        try:
            return sha256_file(path)
        except OSError as err:
            raise self.error(f"cannot read {path}: {type(err).__name__}") from None

    def plan(self, cfg: Any) -> Plan:
        """:meth:`pending` as units; the context keeps every file and its hash for the
        reconciliation."""
        todo, keyed, hashes = self.pending(cfg)
        return Plan([Unit(str(p), k) for p, k in todo], len(keyed) - len(todo), (keyed, hashes))

    def staging(self, cfg: Any) -> list[Path]:
        """The folders a killed run may leave staged files in."""
        found = [self.output(cfg) / name for name in self.staging_folders]
        return found + (
            [Path(getattr(cfg, self.vault_field)) / "_staging"] if self.vault_field else []
        )

    def clean(self, cfg: Any) -> None:
        """Remove what a killed run left under temporary names (call only when no other run is
        active)."""
        remove_staging(*self.staging(cfg))
        for pattern in self.staging_globs:
            for stale in self.output(cfg).glob(pattern):
                stale.unlink(missing_ok=True)

    def before_spark(self, cfg: Any, plan: Plan) -> None:
        """Driver-side checks before a Spark run (fail fast on a wrong vault key or an unreachable
        endpoint: workers load their clients themselves); none unless the job says."""

    def before_units(self, cfg: Any, plan: Plan) -> None:
        """Checks before any unit on every engine (none unless the job says)."""

    def before(self, cfg: Any, plan: Plan, engine: str) -> None:
        """Spark's driver-side checks, the job's own checks, staging cleanup; the markers' folder
        for Spark."""
        if engine == "spark":
            self.before_spark(cfg, plan)
        self.before_units(cfg, plan)
        self.clean(cfg)
        if engine == "spark":
            (self.output(cfg) / self.done_folder).mkdir(parents=True, exist_ok=True)

    def committed(self, worker: Any, unit: Unit) -> bool:
        """The unit is committed for its current content, by this run or with nothing left to retry
        (a retried or speculative Spark task skips it)."""
        cfg = worker.cfg
        marker = self.marker(cfg, unit.key)
        return (
            marker is not None
            and marker.get("input_sha256") == sha256_file(Path(unit.path))
            and (marker.get("last_run") == cfg.run_id or not self.needs_retry(cfg, marker))
        )

    def progress_total(self, plan: Plan) -> int | None:
        """Unknown unless the job says (:meth:`count_rows`)."""
        rows = [self.count_rows(Path(u.path)) for u in plan.todo]
        return None if any(n is None for n in rows) else sum(n for n in rows if n is not None)

    def count_rows(self, path: Path) -> int | None:
        """Rows an input file declares without reading it (``None``: unknown)."""
        return None

    def start(self, cfg: Any, path: Path, key: str) -> UnitPass:
        """One pass over the unit at ``path``: its content hash, the prior done-marker when this
        pass only retries records of the unchanged, committed unit (``None``: from scratch), and the
        common fields of the done-marker the pass writes last (key, input path and SHA-256, the runs
        with this one last, the release hash)."""
        # the marker holds it: a changed file with the same name is redone
        input_sha = self.content_hash(path)
        prior = self.marker(cfg, key)
        if prior is not None and (
            prior.get("input_sha256") != input_sha or not self.needs_retry(cfg, prior)
        ):
            prior = None
        runs = [*(prior or {}).get("runs", []), cfg.run_id]
        marker: UnitMarker = {
            "key": key,
            "input": str(path.resolve()),
            "input_sha256": input_sha,
            "last_run": cfg.run_id,
            "runs": runs,
            "release_hash": self.release_hash(cfg),
        }
        return UnitPass(path, key, input_sha, prior, marker)

    def process(self, worker: Any, unit: Unit, progress: Progress | None = None) -> UnitReport:
        """:meth:`run_unit` over :meth:`start`, advancing ``progress`` by the records asked about
        unless the worker advances it itself."""
        own = getattr(worker, "advances_progress", False)
        if own:
            worker.progress = progress
        records = self.run_unit(worker, self.start(worker.cfg, Path(unit.path), unit.key))
        if progress is not None and not own:
            progress.advance(records)
        return UnitReport(unit.key, records)

    def reconcile(
        self,
        cfg: Any,
        keyed: Iterable[tuple[Path, str]],
        hashes: dict[str, str],
        parts: tuple[str, ...],
    ) -> Reconciliation:
        """``input rows == sum of the parts`` over the current input files (from the Parquet footers
        of ``<output>/<part>/``); a file without a done-marker for its current content is
        uncommitted."""
        out = self.output(cfg)
        counts = dict.fromkeys(parts, 0)
        input_rows = 0
        uncommitted: list[str] = []
        for path, key in keyed:
            input_rows += self.count_rows(path) or 0
            for name in parts:
                counts[name] += footer_rows(part_path(out / name, key))
            marker = self.marker(cfg, key)
            if marker is None or marker.get("input_sha256") != hashes[key]:
                uncommitted.append(path.name)
        ok = input_rows == sum(counts.values()) and not uncommitted
        return {
            "input_rows": input_rows,
            **counts,
            "ok": ok,
            "uncommitted_files": sorted(uncommitted),
        }


__all__ = [
    "MARKER_HASH_FIELDS",
    "FileJob",
    "JobError",
    "Reconciliation",
    "footer_rows",
    "marker_hash",
]
