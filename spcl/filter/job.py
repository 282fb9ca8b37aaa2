"""The filtering job: read a crawl, screen every record, write clean / flagged / quarantine,
reconcile.

The filter is a stage of the executor layer (:data:`STAGE`, ``spcl.executor``): ``plan`` lists and
checks the paths, ``before`` checks the model card without building the model, each worker loads
detectors and model once, and every unit runs the same task functions (``spcl.filter.task``). Two
engines: ``spark`` (default; local[*] or any cluster — the stage is a
:class:`~spcl.executor.stage.SparkReader`: its tasks open local files by path on the workers, Spark
lists and reads URLs and hands their bytes to ``mapInArrow`` bodies) and ``python``
(``spcl.executor.run_local``: one process, local files; for tests, notebooks and small corpora).
Outputs under ``output``:

- ``decision=clean|flagged|quarantine/part-KEY.parquet`` — ``spcl.io.schema.OUTPUT_SCHEMA`` rows,
  one file per input file and decision
- ``stats.json`` — counts per decision (read back from the written files' footers), language, PII
  type, flag and quarantine reason; the reconciliation ``input_records == clean + flagged +
  quarantine``; version, config hash, stage timings
- ``manifest.json`` — SHA-256, size and rows of every output file (``spcl.manifest``)

``stats.json`` and ``manifest.json`` are written by ``spcl.filter.results``.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from spcl.config import Settings
from spcl.executor import Plan, RunInfo, Unit, run_local, run_spark
from spcl.executor.errors import JobError as ExecutorJobError
from spcl.executor.stage import SparkTasks
from spcl.filter.batch import FilterContext
from spcl.filter.driver import (
    FilterJob,
    JobError,
    UsageError,
    check_output_state,
    check_paths,
    duplicate_ids_arrow,
    file_size,
    list_local_inputs_or_fail,
    load_context,
    model_problem,
    no_inputs,
    prepare_output,
    screen_local,
    split_supported,
    stage,
)
from spcl.filter.plan import FilterPlan
from spcl.filter.results import write_stats, written_counts
from spcl.filter.spark import duplicate_ids, filter_tasks, list_files, startup_split
from spcl.filter.spark_tasks import WORKER_MODULES
from spcl.filter.stats import StatsJson, merge_stats
from spcl.filter.task import DEFAULT_BATCH_ROWS, TaskReport, screen_unopenable
from spcl.io.inputs import Listing
from spcl.io.storage import is_local, local_path
from spcl.progress import Progress

__all__ = ["ENGINES", "STAGE", "FilterJob", "FilterStage", "JobError", "UsageError", "run_filter"]

log = logging.getLogger(__name__)

ARROW_ID_COUNT_ROWS = 5_000_000
"""Up to this many output rows (local output) duplicate ids are counted on the driver with pyarrow
(one id column in memory) instead of by the engine (a Spark job); above it, or for URLs, the engine
counts."""


@dataclass
class FileReports:
    """What one unit (an input file) produced: one :class:`TaskReport` per byte range it was read
    in."""

    key: str
    tasks: list[TaskReport]

    @property
    def records(self) -> int:
        """Input records of the unit."""
        return sum(t.input_records for t in self.tasks)


@dataclass
class FilterWorker:
    """Detectors and model of this process (built once), and the input bytes done so far (the
    bar's ETA)."""

    ctx: FilterContext
    output: str
    batch_rows: int = DEFAULT_BATCH_ROWS
    done_bytes: int = 0


def _units(files: list[str]) -> list[Unit]:
    return [Unit(f, f) for f in files]


def _listed(fp: FilterPlan) -> None:
    fp.timings["list_inputs"] = round(time.time() - fp.started, 3)
    fp.listed_at = time.time()
    log.info("stage %s: %.1f s", "list_inputs", fp.timings["list_inputs"])


class FilterStage:
    """The filter as an executor stage (see the module's docs); the config is a
    :class:`FilterJob`."""

    name: ClassVar[str] = "filter"
    ref: ClassVar[str] = "spcl.filter.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("output",)
    error: ClassVar[type[ExecutorJobError]] = JobError  # the filter's own subclass
    setup_when_idle: ClassVar[bool] = False
    # no executor lock (as before: the executors read it with getattr)
    lock_field: ClassVar[str | None] = None

    def config_from_json(self, text: str) -> FilterJob:
        """Not used: the filter's Spark bodies receive the settings, never the job."""
        raise NotImplementedError(
            "the filter's tasks are built from its settings (spcl.filter.spark_tasks)"
        )

    def prepare(self, cfg: FilterJob) -> FilterJob:
        """``cfg`` with a local output made absolute here, on the driver
        (:func:`with_absolute_output`)."""
        return with_absolute_output(cfg)

    def plan(self, cfg: FilterJob) -> Plan:
        """List the local inputs and check the paths once (nothing touched): an output that is a
        file or overlaps an input is a :class:`UsageError`; the python engine refuses URLs; the
        Spark engine lists URLs later."""
        started = time.time()
        local = tuple(i for i in cfg.inputs if is_local(i))
        remote = [i for i in cfg.inputs if not is_local(i)]
        if remote and cfg.engine == "python":
            raise UsageError(
                "the python engine reads local files only; use --engine spark for URLs"
            )
        listing = list_local_inputs_or_fail(local) if local else Listing()
        files, skipped = split_supported(listing, cfg.settings)
        check_paths(local, cfg.output, listing.files)
        if cfg.engine != "python":
            check_output_state(cfg.output, cfg.overwrite)  # before Spark starts
        if not files and not remote:
            raise no_inputs(cfg.inputs)
        return Plan(_units(files), 0, FilterPlan(listing, files, skipped, remote, started))

    def before(self, cfg: FilterJob, plan: Plan, engine: str) -> None:
        """The model's card, format and digests checked without building it (a :class:`UsageError`);
        on the python engine the output is then emptied of a previous run's files."""
        problem = model_problem(cfg.settings)
        if problem:
            raise UsageError(problem)
        if engine == "python":
            prepare_output(cfg.output, cfg.overwrite)
            _listed(plan.context)

    def setup(self, cfg: FilterJob, clients: dict[str, Any]) -> FilterWorker:
        """Detectors and model, loaded once for this process (the python engine)."""
        return FilterWorker(load_context(cfg), cfg.output)

    def check(self, worker: FilterWorker) -> None:
        """Nothing to ask: the filter has no remote clients."""

    def committed(self, worker: FilterWorker, unit: Unit) -> bool:
        """Never: a filter run starts from an emptied output (no done-markers)."""
        return False

    def progress_total(self, plan: Plan) -> int | None:
        """Unknown before reading."""
        return None

    def progress_work(self, plan: Plan) -> int | None:
        """The input bytes (the bar's ETA)."""
        return sum(file_size(f) for f in plan.context.files)

    def process(
        self, worker: FilterWorker, unit: Unit, progress: Progress | None = None
    ) -> FileReports:
        """Screen one local file (in byte ranges when it is a big plain JSONL file) and write its
        parts."""
        tasks = screen_local(
            unit.path, worker.output, worker.ctx, progress, worker.done_bytes, worker.batch_rows
        )
        worker.done_bytes += file_size(unit.path)
        return FileReports(unit.key, tasks)

    def teardown(self, worker: FilterWorker) -> None:
        """Nothing to release."""

    # SparkReader: Spark reads the input itself

    def spark_settings(self, cfg: FilterJob) -> Settings:
        """The job's settings (Spark conf, Arrow batch size)."""
        return cfg.settings

    def spark_plan(self, spark: Any, cfg: FilterJob, plan: Plan) -> Plan:
        """``plan`` with the URLs Spark lists (checked against the output), and the output
        prepared."""
        fp: FilterPlan = plan.context
        listing = fp.listing
        if fp.remote:
            found = list_files(spark, fp.remote)
            # only what Spark listed is new to check
            check_paths(tuple(fp.remote), cfg.output, found)
            listing.duplicates += len(found) - len(set(found))
            listing.files = sorted(set(listing.files) | set(found))
            fp.files, fp.skipped = split_supported(listing, cfg.settings)
            if not fp.files:
                raise no_inputs(cfg.inputs)
        prepare_output(cfg.output, cfg.overwrite)
        _listed(fp)
        return Plan(_units(fp.files), 0, fp)

    def spark_preload(self, cfg: FilterJob) -> tuple[str, ...]:
        """What the filter's Python workers import (``spcl.filter.spark_tasks.WORKER_MODULES``)."""
        return WORKER_MODULES

    def spark_tasks(self, spark: Any, cfg: FilterJob, plan: Plan, rows: Any) -> list[SparkTasks]:
        """One task per local file (opened by the worker), per byte range of the big local plain
        JSONL files, and ``mapInArrow`` over Spark's ``binaryFile`` source for URLs
        (``spcl.filter.spark.filter_tasks``)."""
        return filter_tasks(spark, plan.context.files, cfg.settings, cfg.output, rows)

    def report_from_json(self, line: str) -> FileReports:
        """One task's report (a whole file or one byte range)."""
        task = TaskReport.from_json(line)
        return FileReports(task.source, [task])

    def spark_leftovers(
        self, cfg: FilterJob, plan: Plan, reports: list[FileReports]
    ) -> list[FileReports]:
        """Files listed but not read by Spark (e.g. a file named explicitly whose name starts with
        ``_`` or ``.``): read on the driver (local) or quarantined by name (remote)."""
        read = {t.source for r in reports for t in r.tasks}
        missing = sorted(set(plan.context.files) - read)
        if not missing:
            return []
        log.warning(
            "%d input file(s) listed but not read by Spark; read on the driver (local) or "
            "quarantined by name (remote)",
            len(missing),
        )
        ctx = load_context(cfg)
        return [
            FileReports(
                m,
                (
                    screen_local(m, cfg.output, ctx, batch_rows=cfg.settings.spark.batch_rows)
                    if is_local(m)
                    else [
                        screen_unopenable(m, "unreadable_file:not_read_by_spark", cfg.output, ctx)
                    ]
                ),
            )
            for m in missing
        ]

    def finish(
        self, cfg: FilterJob, plan: Plan, run: RunInfo, worker: FilterWorker | None
    ) -> StatsJson:
        """Count duplicate ids, reconcile against the files on storage, write ``stats.json`` and
        ``manifest.json``; returns the stats (a :class:`JobError` after writing them when the
        reconciliation fails or every record was quarantined)."""
        fp: FilterPlan = plan.context
        seen: dict[tuple[str, int | None], TaskReport] = {}
        for unit in run.reports:  # a speculative Spark task's second report counts once
            for task in unit.tasks:
                seen[(task.source, task.split)] = task
        reports = list(seen.values())
        timings = {
            **({"session": run.timings["session"]} if "session" in run.timings else {}),
            **fp.timings,
            "screen_and_write": round(time.time() - fp.listed_at, 3),
        }
        log.info("stage %s: %.1f s", "screen_and_write", timings["screen_and_write"])
        startup = (
            {"session": run.timings["session"], **startup_split(run.tasks_started, reports)}
            if run.engine == "spark" and run.tasks_started is not None
            else {}
        )
        master = (cfg.master or cfg.settings.spark.master) if run.engine == "spark" else None
        with stage(timings, "count_ids"):
            duplicates = _duplicate_ids(run, cfg, reports)
        with stage(timings, "reconcile"):
            written, entries = written_counts(cfg.output, reports)
            counters = merge_stats(r.stats for r in reports)
            # what is on storage, not what the tasks meant to write
            counters["decision"] = Counter(written)
            input_records = sum(r.input_records for r in reports)
        return write_stats(
            cfg,
            fp,
            reports,
            engine=run.engine,
            master=master,
            counters=counters,
            input_records=input_records,
            duplicate_ids=duplicates,
            timings=timings,
            startup=startup,
            entries=entries,
        )


STAGE = FilterStage()
"""The filter stage the executors run."""

ENGINES: dict[str, Callable[[FilterJob], StatsJson]] = {
    "python": lambda job: run_local(STAGE, job),
    "spark": lambda job: run_spark(STAGE, job, job.master, job.submitted_master),
}
"""How each engine runs the stage: ``spcl.executor.run_local`` or ``run_spark``."""


def _duplicate_ids(run: RunInfo, job: FilterJob, reports: list[TaskReport]) -> int:
    paths = [f.path for r in reports for f in r.files]
    rows = sum(f.rows for r in reports for f in r.files)
    # no Spark job for small
    if run.session is None or (is_local(job.output) and rows <= ARROW_ID_COUNT_ROWS):
        return duplicate_ids_arrow(job.output, paths)
    return duplicate_ids(run.session, job.output, paths)


def with_absolute_output(job: FilterJob) -> FilterJob:
    """``job`` with a local output made absolute here, on the driver: an executor resolves a
    relative path against its own work folder (YARN, standalone, ``local-cluster``) and would write
    its files there."""
    if is_local(job.output):
        return replace(job, output=os.path.abspath(local_path(job.output)))
    return job


def run_filter(job: FilterJob) -> StatsJson:
    """Run the job on its engine's executor and write ``stats.json`` and ``manifest.json``; returns
    the stats.

    Raises :class:`UsageError` for an unknown engine, a broken or missing screen model, or an output
    that is a file or overlaps an input (nothing is touched); :class:`JobError` when the output
    exists (without ``overwrite``), no input is readable, the reconciliation ``input = clean +
    flagged + quarantine`` fails, or every record was quarantined (outputs and stats are written
    first). ``stats.json`` is written last but for ``manifest.json``: an output without them is
    incomplete (``spcl.io.outputs.check_complete``).
    """
    try:
        execute = ENGINES[job.engine]
    except KeyError:
        raise UsageError(
            f"unknown engine {job.engine!r}; choose one of {', '.join(sorted(ENGINES))}"
        ) from None
    return execute(job)
