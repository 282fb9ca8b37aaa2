"""The filter job in Spark: listing, the ``mapInArrow`` adapter over spcl's plain-Python task function.

Spark only distributes: Hadoop lists and reads the input files (any scheme it understands) and hands
each file's bytes to a Python worker, which runs ``spcl.filter.task.screen_bytes`` — the same function the plain
engine runs — and returns a small JSON report. The adapter is a module-level function bound with
``functools.partial`` to serialized settings, so workers import it by reference and build their
detectors and models once per Python worker (``spcl.filter.batch.context_for`` caches them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from spcl.config import Settings
from spcl.filter.batch import context_for
from spcl.filter.task import screen_bytes, screen_split
from spcl.io.inputs import canonical_source
from spcl.io.readers import is_supported
from spcl.io.splits import Split
from spcl.io.storage import is_local, join

if TYPE_CHECKING:
    from pyspark import Accumulator
    from pyspark.sql import DataFrame, SparkSession


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
    """mapInArrow adapter: ``binaryFile`` rows → one JSON task report per supported input file.

    Each file is read, screened and written by ``spcl.filter.task.screen_bytes`` inside the task; its record
    count is added to ``rows`` (the driver's progress line) when given.
    """
    ctx = context_for(settings_json)
    for path, content in _file_rows(batches):
        if is_supported(path, ctx.settings.input):
            report = screen_bytes(content, path, output, ctx)
            if rows is not None:
                rows.add(report["input_records"])
            yield pa.RecordBatch.from_pydict({"report": [json.dumps(report)]}, schema=REPORT_SCHEMA)


def screen_splits_partition(settings_json: str, output: str, items: Iterator[tuple[str, int, int, int]],
                            rows: Accumulator[int] | None = None) -> Iterator[str]:
    """``mapPartitions`` body for byte ranges: each ``(source, start, end, index)`` opened by path on the worker
    (a local or shared filesystem) and screened by ``spcl.filter.task.screen_split``; one JSON report each."""
    ctx = context_for(settings_json)
    for source, start, end, index in items:
        with open(source, "rb") as fh:
            report = screen_split(fh, Split(source, start, end, index), output, ctx)
        if rows is not None:
            rows.add(report["input_records"])
        yield json.dumps(report)


def run_split_tasks(spark: SparkSession, splits: list[Split], settings: Settings, output: str,
                    rows: Accumulator[int] | None = None) -> list[dict[str, Any]]:
    """Screen every byte range in its own Spark task and collect the reports (rows counted into ``rows``)."""
    if not splits:
        return []
    items = [(s.source, s.start, s.end, s.index) for s in splits]
    rdd = spark.sparkContext.parallelize(items, numSlices=len(items))
    lines = rdd.mapPartitions(partial(screen_splits_partition, settings.model_dump_json(), output, rows=rows)
                              ).collect()
    return [json.loads(line) for line in lines]


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
              rows: Accumulator[int] | None = None) -> list[dict[str, Any]]:
    """Screen every file of ``files`` in Spark tasks (one per file) and collect their reports (rows counted into
    ``rows``)."""
    adapter = partial(screen_files_arrow, settings.model_dump_json(), output, rows=rows)
    return [json.loads(row["report"]) for row in files.mapInArrow(adapter, "report string").collect()]
