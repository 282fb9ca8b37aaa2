"""The filter's Spark engine: listing, the ``mapInArrow`` adapter over spcl's plain-Python task function.

Spark only distributes: Hadoop lists and reads the input files (any scheme it understands) and hands
each file's bytes to a Python worker, which runs ``spcl.filter.task.screen_bytes`` — the same function the plain
engine runs — and returns a :class:`~spcl.filter.task.TaskReport` as one JSON line. The adapter is a module-level
function bound with ``functools.partial`` to serialized settings, so workers import it by reference and build their
detectors and models once per Python worker (``spcl.filter.batch.context_for`` caches them; Spark reuses Python
workers, ``spark.python.worker.reuse``). Each report carries the worker's start-up timings
(:class:`~spcl.filter.task.WorkerTiming`), from which the driver splits a run's fixed start-up.

This module imports ``spcl.spark`` (the session builder), never the reverse.
"""

# ruff: noqa: E402 - the clock below times this module's imports in a Python worker
from __future__ import annotations

import os
import re
import time

_IMPORT_STARTED = time.time()

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from spcl.config import Settings
from spcl.filter.batch import FilterContext, context_for
from spcl.filter.driver import (
    FilterJob,
    RunResult,
    check_output_state,
    check_paths,
    file_size,
    list_local_inputs_or_fail,
    load_context,
    local_splits,
    no_inputs,
    prepare_output,
    screen_local,
    split_supported,
    stage,
)
from spcl.filter.task import TaskReport, WorkerTiming, screen_bytes, screen_split, screen_unopenable
from spcl.io.inputs import Listing, canonical_source
from spcl.io.readers import is_supported
from spcl.io.splits import Split
from spcl.io.storage import is_local, join

if TYPE_CHECKING:
    from pyspark import Accumulator
    from pyspark.sql import DataFrame, SparkSession

_IMPORTED = time.time()
log = logging.getLogger("spcl.filter.job")


def process_started_at(pid: int | None = None) -> float | None:
    """When process ``pid`` (default: this one) started, in epoch seconds, from ``/proc`` (``None`` elsewhere)."""
    try:
        with open(f"/proc/{pid or 'self'}/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/stat", "rb") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith(b"btime"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _worker_context(settings_json: str) -> tuple[FilterContext, WorkerTiming]:
    """The worker's cached context and the timing of this task's start-up (setup 0 when the context was cached)."""
    entered = time.time()
    cached = context_for.cache_info().currsize
    ctx = context_for(settings_json)
    setup = time.time() - entered if context_for.cache_info().currsize > cached else 0.0
    started = process_started_at() or _IMPORT_STARTED
    timing = WorkerTiming(os.getpid(), round(started, 3), _IMPORTED, round(_IMPORTED - _IMPORT_STARTED, 4),
                          round(time.time(), 4), round(setup, 4))
    return ctx, timing


def source_name(path: str) -> str:
    """The source name recorded for a file Spark listed: local ``file:`` URLs become resolved plain paths
    (as in the plain engine, ``spcl.io.inputs.canonical_source``); other URLs stay as given. Hadoop
    paths are not percent-encoded, so ``#``, ``?`` and ``%`` are part of the name.

    >>> source_name("file:/data/hash#1.jsonl"), source_name("s3a://bucket/crawl.jsonl")
    ('/data/hash#1.jsonl', 's3a://bucket/crawl.jsonl')
    """
    if path.startswith("file:"):
        rest = path[len("file:"):]
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[rest.index("/"):] if "/" in rest else "/"
        return canonical_source(rest)
    return path


_HADOOP_GLOB = re.compile(r"([\\*?\[\]{}])")


def hadoop_literal(path: str) -> str:
    r"""``path`` with Hadoop glob characters escaped, so Spark reads exactly that file.

    >>> print(hadoop_literal("/d/a[1]*.jsonl"))
    /d/a\[1\]\*.jsonl
    """
    return _HADOOP_GLOB.sub(r"\\\1", path)


def _file_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[str, bytes]]:
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, path in enumerate(paths):
            yield source_name(path), contents[i].as_py()


REPORT_SCHEMA = pa.schema([("report", pa.string())])


def screen_files_arrow(settings_json: str, output: str, batches: Iterator[pa.RecordBatch],
                       rows: Accumulator[int] | None = None) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: ``binaryFile`` rows → one JSON :class:`TaskReport` per supported input file.

    Each file is read, screened and written by ``spcl.filter.task.screen_bytes`` inside the task (batches of
    ``spark.batch_rows`` records); its record count is added to ``rows`` (the driver's progress line) when given.
    """
    ctx, timing = _worker_context(settings_json)
    batch_rows = ctx.settings.spark.batch_rows
    for path, content in _file_rows(batches):
        if is_supported(path, ctx.settings.input):
            report = screen_bytes(content, path, output, ctx, batch_rows).with_worker(timing)
            if rows is not None:
                rows.add(report.input_records)
            yield pa.RecordBatch.from_pydict({"report": [report.to_json()]}, schema=REPORT_SCHEMA)


def screen_splits_partition(settings_json: str, output: str, items: Iterator[tuple[str, int, int, int]],
                            rows: Accumulator[int] | None = None) -> Iterator[str]:
    """``mapPartitions`` body for byte ranges: each ``(source, start, end, index)`` opened by path on the worker
    (a local or shared filesystem) and screened by ``spcl.filter.task.screen_split``; one JSON report each."""
    ctx, timing = _worker_context(settings_json)
    for source, start, end, index in items:
        with open(source, "rb") as fh:
            report = screen_split(fh, Split(source, start, end, index), output, ctx,
                                  batch_rows=ctx.settings.spark.batch_rows)
        if rows is not None:
            rows.add(report.input_records)
        yield report.with_worker(timing).to_json()


def run_split_tasks(spark: SparkSession, splits: list[Split], settings: Settings, output: str,
                    rows: Accumulator[int] | None = None) -> list[TaskReport]:
    """Screen every byte range in its own Spark task and collect the reports (rows counted into ``rows``)."""
    if not splits:
        return []
    items = [(s.source, s.start, s.end, s.index) for s in splits]
    rdd = spark.sparkContext.parallelize(items, numSlices=len(items))
    lines = rdd.mapPartitions(partial(screen_splits_partition, settings.model_dump_json(), output, rows=rows)
                              ).collect()
    return [TaskReport.from_json(line) for line in lines]


def list_files(spark: SparkSession, inputs: list[str]) -> list[str]:
    """Source names of every file under remote ``inputs`` (folders recursive, globs), as Spark lists them
    (only the paths are read); a file reached twice appears twice."""
    listed = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(inputs)
    return [source_name(r["path"]) for r in listed.select("path").collect()]


def binary_files(spark: SparkSession, files: list[str]) -> DataFrame:
    """Spark's ``binaryFile`` source over exactly ``files`` (canonical sources, each read once)."""
    paths = [hadoop_literal(f) if is_local(f) else f for f in files]
    return spark.read.format("binaryFile").load(paths)


def duplicate_ids(spark: SparkSession, output: str, relative_paths: list[str]) -> int:
    """Rows whose id an earlier row already had (rows minus distinct ids) in the written files."""
    if not relative_paths:
        return 0
    from pyspark.sql import functions as F

    paths = [hadoop_literal(join(output, p)) if is_local(output) else join(output, p)
             for p in sorted(set(relative_paths))]
    row = spark.read.parquet(*paths).agg(F.count("*").alias("n"), F.countDistinct("id").alias("d")).first()
    return int(row["n"]) - int(row["d"])


def run_tasks(files: DataFrame, settings: Settings, output: str,
              rows: Accumulator[int] | None = None) -> list[TaskReport]:
    """Screen every file of ``files`` in Spark tasks (one per file) and collect their reports (rows counted into
    ``rows``)."""
    adapter = partial(screen_files_arrow, settings.model_dump_json(), output, rows=rows)
    return [TaskReport.from_json(row["report"]) for row in files.mapInArrow(adapter, "report string").collect()]


def local_range_splits(files: list[str], settings: Settings) -> list[Split]:
    """The byte ranges of the local files that are split (big plain JSONL); other files are not listed."""
    out: list[Split] = []
    for path in files:
        if not is_local(path) or file_size(path) <= settings.input.split_bytes or settings.input.split_bytes <= 0:
            continue
        try:
            with open(path, "rb") as fh:
                parts = local_splits(fh, path, settings)
        except OSError:
            continue  # read whole (and quarantined by name if still unreadable) like any other file
        if len(parts) > 1:
            out += parts
    return out


def startup_split(job_started: float, reports: list[TaskReport]) -> dict[str, float]:
    """Where the Spark job's time before the first document went, from the workers' timings (seconds).

    ``first_task_wait``: job submitted → the first task's body began; of that, ``worker_launch`` (job submitted →
    the first Python worker process started: executor launch, task scheduling, pyspark's daemon start),
    ``worker_imports`` and ``model_load`` (the slowest worker's own).
    """
    timed = [r.worker for r in reports if r.worker is not None]
    if not timed:
        return {}
    first = min(w.entered_at for w in timed)
    by_pid = {w.pid: w for w in timed}
    return {
        "first_task_wait": round(max(first - job_started, 0.0), 3),
        "worker_launch": round(max(min(w.started_at for w in timed) - job_started, 0.0), 3),
        "worker_imports": round(max(w.import_seconds for w in by_pid.values()), 3),
        "model_load": round(max(w.setup_seconds for w in timed), 3),
        "python_workers": float(len(by_pid)),
    }


@dataclass
class SparkEngine:
    """Runs every task in Spark (``master``: given, the config's, or spark-submit's with ``submitted``).

    The session it builds stays on the object for the duplicate-id count after the run.
    """

    job_master: str | None = None
    submitted: bool = False
    name: str = "spark"
    session: Any = field(default=None, repr=False)
    settings_master: str | None = None

    @property
    def master(self) -> str | None:
        """The master this run asked for (the config's when none was given)."""
        return self.job_master or self.settings_master

    def run(self, job: FilterJob) -> RunResult:
        """Check what can be checked without Spark, start the session, list, screen in tasks; the reports."""
        from spcl.spark.progress import SparkProgress
        from spcl.spark.session import build_session

        self.settings_master = job.settings.spark.master
        timings: dict[str, float] = {}
        with stage(timings, "list_inputs"):
            local = tuple(i for i in job.inputs if is_local(i))
            remote = [i for i in job.inputs if not is_local(i)]
            listing = list_local_inputs_or_fail(local) if local else Listing()
            check_paths(local, job.output, listing.files)  # local inputs: checked before Spark starts
            check_output_state(job.output, job.overwrite)
            if not remote and not split_supported(listing, job.settings)[0]:
                raise no_inputs(job.inputs)
            with stage(timings, "session"):
                self.session = build_session(job.settings, self.job_master, app_name="spcl-filter",
                                             submitted=self.submitted)
            if remote:
                found = list_files(self.session, remote)
                check_paths(tuple(remote), job.output, found)  # only what Spark listed is new to check
                listing.duplicates += len(found) - len(set(found))
                listing.files = sorted(set(listing.files) | set(found))
            files, skipped = split_supported(listing, job.settings)
            if not files:
                raise no_inputs(job.inputs)
            prepare_output(job.output, job.overwrite)
        job_started = time.time()
        with stage(timings, "screen_and_write"), SparkProgress(self.session, "filter") as progress:  # a TTY only
            splits = local_range_splits(files, job.settings)  # big plain JSONL files: one task per byte range
            whole = [f for f in files if f not in {s.source for s in splits}]
            reports = (run_tasks(binary_files(self.session, whole), job.settings, job.output, progress.rows)
                       if whole else [])
            reports += run_split_tasks(self.session, splits, job.settings, job.output, progress.rows)
            reports = list({(r.source, r.split): r for r in reports}.values())
            missing = sorted(set(files) - {r.source for r in reports})
            if missing:  # e.g. a file named explicitly whose name starts with '_' or '.': Spark skips those
                log.warning("%d input file(s) listed but not read by Spark; read on the driver (local) or "
                            "quarantined by name (remote)", len(missing))
                ctx = load_context(job)
                for m in missing:
                    reports += (screen_local(m, job.output, ctx, batch_rows=job.settings.spark.batch_rows)
                                if is_local(m) else
                                [screen_unopenable(m, "unreadable_file:not_read_by_spark", job.output, ctx)])
        startup = {"session": timings["session"], **startup_split(job_started, reports)}
        return RunResult(reports, files, skipped, timings, listing.duplicates, startup)

    def duplicate_ids(self, job: FilterJob, relative_paths: list[str]) -> int:
        """Counted by a Spark job over the written files."""
        return duplicate_ids(self.session, job.output, relative_paths)
