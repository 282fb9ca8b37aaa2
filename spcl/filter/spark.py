"""The filter's Spark pieces: listing URLs, the Spark jobs (one task per input file or byte range),
id counts.

The Spark executor (``spcl.executor.spark``) runs them for the filter stage (``spcl.filter.job``).
Spark only distributes: a local file (or one on a shared filesystem) is opened by path on the Python
worker; for a URL, Hadoop lists and reads the file (any scheme it understands) and hands its bytes
to the worker. Either way the worker runs the same task functions as the plain engine
(``spcl.filter.task``) through the bodies in ``spcl.filter.spark_tasks``, and returns a
:class:`~spcl.filter.task.TaskReport` as one JSON line. The bodies are module-level functions bound
with ``functools.partial`` to serialized settings, so workers import them by reference and build
their detectors and models once per Python worker (Spark reuses Python workers,
``spark.python.worker.reuse``; :data:`~spcl.filter.spark_tasks.WORKER_MODULES` are imported once per
executor by the daemon the workers fork from). Each report carries the worker's start-up timings,
from which the driver splits a run's fixed start-up (:func:`startup_split`).

This module imports ``spcl.spark`` (the session builder), never the reverse.
"""

from __future__ import annotations

import logging
import re
from functools import partial
from typing import TYPE_CHECKING

from spcl.config import Settings
from spcl.executor.stage import SparkTasks
from spcl.filter.driver import file_size, local_splits
from spcl.filter.spark_tasks import (
    screen_files_arrow,
    screen_paths_partition,
    screen_splits_partition,
    source_name,
)
from spcl.filter.task import TaskReport
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


def split_tasks(
    spark: SparkSession,
    splits: list[Split],
    settings: Settings,
    output: str,
    rows: Accumulator[int] | None = None,
) -> SparkTasks:
    """Every byte range in its own Spark task (``mapPartitions``; rows counted into ``rows``)."""
    items = [(s.source, s.start, s.end, s.index) for s in splits]
    rdd = spark.sparkContext.parallelize(items, numSlices=len(items))
    return SparkTasks(
        "partitions",
        rdd,
        partial(screen_splits_partition, settings.model_dump_json(), output, rows=rows),
    )


def path_tasks(
    spark: SparkSession,
    files: list[str],
    settings: Settings,
    output: str,
    rows: Accumulator[int] | None = None,
) -> SparkTasks:
    """Every whole local file in its own Spark task (``mapPartitions``; rows counted into ``rows``),
    opened by path on the worker: no ``binaryFile`` scan, and the file's bytes never pass the
    JVM."""
    rdd = spark.sparkContext.parallelize(files, numSlices=len(files))
    return SparkTasks(
        "partitions",
        rdd,
        partial(screen_paths_partition, settings.model_dump_json(), output, rows=rows),
    )


def filter_tasks(
    spark: SparkSession,
    files: list[str],
    settings: Settings,
    output: str,
    rows: Accumulator[int] | None = None,
) -> list[SparkTasks]:
    """The Spark jobs that screen ``files``: one task per byte range of the big local plain JSONL
    files, one task per other local file (opened by the worker, :func:`path_tasks`), and
    ``mapInArrow`` over Spark's ``binaryFile`` source for the URLs (:func:`arrow_tasks`)."""
    splits = local_range_splits(files, settings)
    split_sources = {s.source for s in splits}
    whole = [f for f in files if f not in split_sources]
    paths = [f for f in whole if is_local(f)]
    urls = [f for f in whole if not is_local(f)]
    return (
        ([path_tasks(spark, paths, settings, output, rows)] if paths else [])
        + ([arrow_tasks(spark, urls, settings, output, rows)] if urls else [])
        + ([split_tasks(spark, splits, settings, output, rows)] if splits else [])
    )


def list_files(spark: SparkSession, inputs: list[str]) -> list[str]:
    """Source names of every file under remote ``inputs`` (folders recursive, globs), as Spark lists
    them (only the paths are read); a file reached twice appears twice."""
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

    paths = [
        hadoop_literal(join(output, p)) if is_local(output) else join(output, p)
        for p in sorted(set(relative_paths))
    ]
    row = (
        spark.read.parquet(*paths)
        .agg(F.count("*").alias("n"), F.countDistinct("id").alias("d"))
        .first()
    )
    assert row is not None  # a global aggregate has exactly one row
    return int(row["n"]) - int(row["d"])


def arrow_tasks(
    spark: SparkSession,
    files: list[str],
    settings: Settings,
    output: str,
    rows: Accumulator[int] | None = None,
) -> SparkTasks:
    """Every file of ``files`` read by Spark's ``binaryFile`` source and screened in ``mapInArrow``
    (one task per file; rows counted into ``rows``)."""
    adapter = partial(screen_files_arrow, settings.model_dump_json(), output, rows=rows)
    return SparkTasks("arrow", binary_files(spark, files), adapter)


def local_range_splits(files: list[str], settings: Settings) -> list[Split]:
    """The byte ranges of the local files that are split (big plain JSONL); other files are not
    listed."""
    out: list[Split] = []
    for path in files:
        if (
            not is_local(path)
            or file_size(path) <= settings.input.split_bytes
            or settings.input.split_bytes <= 0
        ):
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
    """Where the Spark job's time before the first document went, from the workers' timings
    (seconds).

    ``first_task_wait``: job submitted → the first task's body began; of that, ``worker_launch``
    (job submitted → the first Python worker process started: executor launch, task scheduling,
    pyspark's daemon start), ``worker_imports`` and ``model_load`` (the slowest worker's own);
    ``preloaded_workers``: the Python workers whose process started after their task modules were
    imported, i.e. forked warm from a preloading daemon (``spcl.spark.daemon``; their imports were
    paid once per executor, before the first worker).
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
