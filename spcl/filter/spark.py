"""The filter's Spark pieces: listing URLs, the Spark jobs (one task per input file or byte range), id counts.

The Spark executor (``spcl.executor.spark``) runs them for the filter stage (``spcl.filter.job``). Spark only
distributes: Hadoop lists and reads the input files (any scheme it understands) and hands
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
from functools import partial
from typing import TYPE_CHECKING

from spcl.config import Settings
from spcl.executor.stage import SparkTasks
from spcl.filter.driver import file_size, local_splits
from spcl.filter.spark_tasks import screen_files_arrow, screen_splits_partition, source_name
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


def split_tasks(spark: SparkSession, splits: list[Split], settings: Settings, output: str,
                rows: Accumulator[int] | None = None) -> SparkTasks:
    """Every byte range in its own Spark task (``mapPartitions``; rows counted into ``rows``)."""
    items = [(s.source, s.start, s.end, s.index) for s in splits]
    rdd = spark.sparkContext.parallelize(items, numSlices=len(items))
    return SparkTasks("partitions", rdd, partial(screen_splits_partition, settings.model_dump_json(), output,
                                                 rows=rows))


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


def arrow_tasks(spark: SparkSession, files: list[str], settings: Settings, output: str,
                rows: Accumulator[int] | None = None) -> SparkTasks:
    """Every file of ``files`` read by Spark's ``binaryFile`` source and screened in ``mapInArrow`` (one task per
    file; rows counted into ``rows``)."""
    adapter = partial(screen_files_arrow, settings.model_dump_json(), output, rows=rows)
    return SparkTasks("arrow", binary_files(spark, files), adapter)


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
