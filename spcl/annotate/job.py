"""The annotate job: a crawl sample → candidates → two or more teacher LLMs → agreement filter →
verifier → balance → labelled training data for ``spcl train``, the disputed texts for people, and a
report.

Layout under ``--output``::

    labelled.jsonl   id, text, lang, label, categories, source (what ``spcl train`` reads) + codes,
                     confidence, votes (each teacher's label, codes, categories, confidence),
                     verifier
    rejected.jsonl   id, text, lang, reason, votes, verifier
                     (for ``spcl review export --what rejected``)
    dropped.jsonl    id, reason, source_file, position — no text: ``unreadable:<reader reason>``,
                     ``too_long``, ``no_person_mention``, ``balanced_out`` (+ label)
    pending.jsonl    id, reason (``backend_error:<teacher>``), error (``http_503``, ``timeout`` …),
                     source_file, position — no text: records a teacher or the verifier could not
                     answer *transiently* (``spcl.extract.backends.transient``) after the client's
                     retries
    report.json      counts per step, reconciliation, Cohen's kappa per teacher pair (overall and
                     per category), parse-failure and backend-error rates, tokens and seconds per
                     document
    agreement.png    per-category kappa of every teacher pair
    manifest.json    SHA-256 of every file, teachers, thresholds, seed, the input's manifest
    _work/           per-input-file parts and done-markers (checkpoints; a nested dataset with its
                     own manifest)

Every input record ends in exactly one of labelled / rejected / dropped / pending (``report.json``
checks it).

**Scale.** Records are read ``batch_size`` at a time; each batch goes to every teacher (``openai``
teachers all at once, each with ``concurrency`` requests in flight; in-process models one after the
other), then the kept texts to the verifier. ``--engine spark`` runs one task per input file.

**Resumable** like ``spcl mask``: each input file is one unit of work whose four part files are
moved into place with ``os.replace`` before its done-marker is written; a rerun skips files with a
marker and no pending records, asks the teachers again for exactly the pending records of the others
(the rest of the file is kept as it is), and redoes a file without a marker, or whose content
changed, from scratch. Pending records make the run exit 3
(:data:`~spcl.extract.backends.transient.EXIT_TRANSIENT`), as ``spcl mask`` does for transient
failures. The final files are rebuilt from the parts at the end of every run, so a rerun with
another ``--positive-share`` or ``--seed`` only re-balances. Parts made with other teachers, prompt
or thresholds are refused (use a new ``--output``). Logs, errors and the report name files, ids,
teachers and counts — never document text or model output.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from spcl.annotate.config import (
    PARTS,
    WORK,
    AnnotateConfig,
    AnnotateError,
    input_key,
    jsonl_text,
    list_input_files,
    read_jsonl,
    write_private_atomic,
)
from spcl.annotate.finalize import AnnotateReport, finalize
from spcl.annotate.runner import AnnotatePass, AnnotateRunner
from spcl.annotate.teachers import make_client
from spcl.config import InputSettings
from spcl.executor import JobError, Plan, RunInfo, run_local, run_spark
from spcl.executor.filejob import FileJob
from spcl.executor.state import DoneMarker
from spcl.executor.unitpass import UnitPass
from spcl.extract.backends.chat import ChatClient
from spcl.extract.backends.registry import is_server_backend
from spcl.io.readers import read_records

__all__ = [
    "STAGE",
    "AnnotateConfig",
    "AnnotateError",
    "AnnotateStage",
    "run_annotate",
    "run_annotate_spark",
]

log = logging.getLogger("spcl.annotate")


class AnnotateStage(FileJob):
    """The annotate job on the job skeleton (``spcl.executor.filejob``): a unit is one input file
    (JSONL or Parquet), its worker an :class:`AnnotateRunner` (the teacher clients, e.g. in-process
    vLLM engines, built once per process, and only when some file has work to do). Its done-markers
    live in ``_work/done``; an output holding any file annotated with other teachers, prompt or
    thresholds is refused."""

    config_type: ClassVar[type[AnnotateConfig]] = AnnotateConfig
    name: ClassVar[str] = "annotate"
    ref: ClassVar[str] = "spcl.annotate.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    lock_field: ClassVar[str | None] = "output"
    error: ClassVar[type[JobError]] = AnnotateError
    # a rerun with nothing to ask only re-balances: no model loaded
    setup_when_idle: ClassVar[bool] = False
    done_folder: ClassVar[str] = f"{WORK}/done"
    staging_folders: ClassVar[tuple[str, ...]] = (f"{WORK}/tmp",)
    staging_globs: ClassVar[tuple[str, ...]] = (f"{WORK}/parts/.*",)
    vault_field: ClassVar[str | None] = None
    check_all_markers: ClassVar[bool] = True
    settings_what: ClassVar[str] = "annotated with other teachers, prompt or thresholds"
    results_what: ClassVar[str] = "labels"
    private_markers: ClassVar[bool] = True

    def list_units(self, cfg: AnnotateConfig) -> list[tuple[Path, str]]:
        """The JSONL / Parquet input files and their keys."""
        return [(p, input_key(p, cfg.input)) for p in list_input_files(cfg.input)]

    def release_hash(self, cfg: AnnotateConfig) -> str:
        """``AnnotateConfig.parts_hash``: teachers, verifier, prompt, thresholds, candidates (not
        balance)."""
        return cfg.parts_hash()

    def needs_retry(self, cfg: AnnotateConfig, marker: DoneMarker) -> bool:
        """Pending records to ask about again."""
        return bool(marker.get("pending"))

    def before_spark(self, cfg: AnnotateConfig, plan: Plan) -> None:
        """Ask every server teacher on the driver first (in-process models load on the
        executors)."""
        for spec in [*cfg.teachers, *([cfg.verifier] if cfg.verifier else [])]:
            if is_server_backend(spec.backend) and plan.todo:
                client = make_client(spec, {"retries": 0})
                try:
                    client.check()
                finally:
                    client.close()

    def setup(self, cfg: AnnotateConfig, clients: dict[str, Any]) -> AnnotateRunner:
        """The runner (``clients``: given chat clients by teacher name, e.g. a test's)."""
        return AnnotateRunner(cfg, clients or None)

    def check(self, worker: AnnotateRunner) -> None:
        """Ask every client whether it can serve."""
        worker.check()

    def begin(self, worker: AnnotateRunner, unit: UnitPass) -> AnnotatePass:
        """A pass over one file; given a prior marker (unchanged, with pending records), it keeps
        the committed parts and asks again for exactly the pending records."""
        root = Path(worker.cfg.input)
        source_file = unit.path.relative_to(root).as_posix() if root.is_dir() else unit.path.name
        parts = [worker.work / "parts" / f"{unit.key}.{part}.jsonl" for part in PARTS]
        rows = {
            part: list(read_jsonl(path)) if unit.prior is not None and path.exists() else []
            for part, path in zip(PARTS, parts, strict=True)
        }
        prior_pending, rows["pending"] = rows["pending"], []
        # a retry pass asks about every record no committed part settles: the pending ones, and any
        # a run killed between its part writes left in none (so a record is never lost nor written
        # twice)
        settled = (
            {int(r["position"]) for part in ("labelled", "rejected", "dropped") for r in rows[part]}
            if unit.prior is not None
            else None
        )
        stats: dict[str, Any] = (
            unit.prior["stats"]
            if unit.prior is not None
            else {
                "files": 1,
                "input_records": 0,
                "candidates": 0,
                "candidates_by_lang": {},
                "dropped_reasons": {},
                "rejected_reasons": {},
                "labelled": 0,
                "teachers": {},
                "verifier": {},
                "seconds": 0.0,
            }
        )
        return AnnotatePass(
            unit=unit,
            settled=settled,
            stats=stats,
            rows=rows,
            source_file=source_file,
            langs=Counter(stats["candidates_by_lang"]),
            prior_pending=prior_pending,
        )

    def read_unit(
        self, worker: AnnotateRunner, run: AnnotatePass
    ) -> Iterator[tuple[list[Any], pa.RecordBatch]]:
        """The file's records in batches (``spcl.io.readers.read_records``) and their positions."""
        with open(run.unit.path, "rb") as fh:
            for batch in read_records(
                fh, str(run.unit.path), InputSettings(), batch_rows=worker.cfg.batch_size
            ):
                yield batch.column("position").to_pylist(), batch

    def commit(self, worker: AnnotateRunner, run: AnnotatePass) -> dict[str, object]:
        """The file's counts, its parts moved into place; its done-marker. The unit reports the
        records a retry asked about, or all the file's records."""
        rows, stats = run.rows, run.stats
        # a pending record this pass did not ask about stays pending (never lost)
        if run.settled is not None:
            rows["pending"] += [
                r for r in run.prior_pending if int(r["position"]) not in run.asked | run.settled
            ]
        stats["candidates"] = sum(run.langs.values())
        stats["candidates_by_lang"] = dict(run.langs)
        for part, name in (
            ("dropped", "dropped_reasons"),
            ("rejected", "rejected_reasons"),
            ("pending", "pending_reasons"),
        ):
            stats[name] = dict(Counter(r["reason"] for r in rows[part]))
        stats["labelled"] = len(rows["labelled"])
        stats["pending"] = len(rows["pending"])
        stats["seconds"] = round(stats.get("seconds", 0.0) + time.perf_counter() - run.started, 6)
        for part in PARTS:  # commit: parts first, the done-marker last
            write_private_atomic(
                worker.work / "parts" / f"{run.unit.key}.{part}.jsonl", jsonl_text(rows[part])
            )
        run.records = len(run.asked) if run.settled is not None else int(stats["input_records"])
        return {
            **run.unit.marker,
            "source_file": run.source_file,
            "pending": stats["pending"],
            "stats": stats,
        }

    def log_unit(self, run: AnnotatePass) -> None:
        """The file's counts."""
        stats = run.stats
        log.info(
            "%s (%s): %d records, %d candidates, %d labelled, %d rejected, %d pending",
            run.source_file,
            run.mode,
            stats["input_records"],
            stats["candidates"],
            stats["labelled"],
            len(run.rows["rejected"]),
            stats["pending"],
        )

    def finish(
        self, cfg: AnnotateConfig, plan: Plan, run: RunInfo, worker: AnnotateRunner | None
    ) -> AnnotateReport:
        """Merge the parts, balance, write the outputs and the report
        (``spcl.annotate.finalize``)."""
        return finalize(
            cfg,
            {
                "engine": run.engine,
                "files_processed": run.files_processed,
                "files_skipped": run.files_skipped,
                "records": run.records,
                "elapsed_seconds": run.elapsed_seconds,
            },
        )


STAGE = AnnotateStage()


def run_annotate(
    cfg: AnnotateConfig, clients: dict[str, ChatClient] | None = None
) -> AnnotateReport:
    """Run the job in this process over every unfinished input file, then finalize; returns
    ``report.json``."""
    return run_local(STAGE, cfg, clients)


def run_annotate_spark(
    cfg: AnnotateConfig, master: str | None = None, submitted: bool = False
) -> AnnotateReport:
    """Run the job with Spark: one task per unfinished input file (the same ``AnnotateRunner`` code
    on executors), then finalize on the driver. Paths must be visible to every executor.
    ``submitted``: running under spark-submit (``jobs/*.py``), whose master is kept unless
    ``master`` is given."""
    return run_spark(STAGE, cfg, master, submitted)
