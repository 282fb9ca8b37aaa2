"""The filter's Spark engine: listing, one Spark task per input file or byte range, the reports collected.

Spark only distributes: Hadoop lists and reads the input files (any scheme it understands) and hands
each file's bytes to a Python worker, which runs ``spcl.filter.task.screen_bytes`` — the same function the plain
engine runs — through the bodies in ``spcl.filter.spark_tasks``, and returns a
:class:`~spcl.filter.task.TaskReport` as one JSON line. The bodies are module-level functions bound with
``functools.partial`` to serialized settings, so workers import them by reference and build their detectors and
models once per Python worker (Spark reuses Python workers, ``spark.python.worker.reuse``). Each report carries
the worker's start-up timings, from which the driver splits a run's fixed start-up (:func:`startup_split`).

This module imports ``spcl.spark`` (the session builder), never the reverse.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from spcl.config import Settings
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
from spcl.filter.spark_tasks import (
    WORKER_MODULES,
    screen_files_arrow,
    screen_paths_partition,
    screen_splits_partition,
    source_name,
)
from spcl.filter.task import TaskReport, screen_unopenable
from spcl.io.inputs import Listing
from spcl.io.splits import Split
from spcl.io.storage import is_local, join

if TYPE_CHECKING:
    from pyspark import Accumulator
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("spcl.filter.job")


_HADOOP_GLOB = re.compile(r"([\\*?\[\]{}])")


def hadoop_literal(path: str) -> str:
    r"""``path`` with Hadoop glob characters escaped, so Spark reads exactly that file.

    >>> print(hadoop_literal("/d/a[1]*.jsonl"))
    /d/a\[1\]\*.jsonl
    """
    return _HADOOP_GLOB.sub(r"\\\1", path)


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


def run_path_tasks(spark: SparkSession, files: list[str], settings: Settings, output: str,
                   rows: Accumulator[int] | None = None) -> list[TaskReport]:
    """Screen every whole local file in its own Spark task, opened by path on the worker, and collect the
    reports (rows counted into ``rows``): no ``binaryFile`` scan, and the file's bytes never pass the JVM."""
    if not files:
        return []
    rdd = spark.sparkContext.parallelize(files, numSlices=len(files))
    lines = rdd.mapPartitions(partial(screen_paths_partition, settings.model_dump_json(), output, rows=rows)
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
    ``worker_imports`` and ``model_load`` (the slowest worker's own); ``preloaded_workers``: the Python workers
    whose process started after their task modules were imported, i.e. forked warm from a preloading daemon
    (``spcl.spark.daemon``; their imports were paid once per executor, before the first worker).
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
        "preloaded_workers": float(sum(1 for w in by_pid.values() if w.started_at > w.imported_at)),
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
                                             submitted=self.submitted, preload=WORKER_MODULES)
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
            paths = [f for f in whole if is_local(f)]  # opened by the workers; remote files through binaryFile
            urls = [f for f in whole if not is_local(f)]
            reports = run_path_tasks(self.session, paths, job.settings, job.output, progress.rows)
            if urls:
                reports += run_tasks(binary_files(self.session, urls), job.settings, job.output, progress.rows)
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
