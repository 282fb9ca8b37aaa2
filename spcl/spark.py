"""Spark wiring: the session, and ``mapInArrow`` adapters over spcl's plain-Python batch functions.

Spark only distributes; every adapter here is a thin loop that hands Arrow batches to a function from
``spcl.io.readers``, ``spcl.pipeline`` or ``spcl.stats``. Adapters are module-level functions bound with
``functools.partial`` to serialized settings, so workers import them by reference and build their
detectors and models once per Python worker (``spcl.pipeline.context_for`` caches them).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow as pa

from spcl.config import Settings
from spcl.io.readers import count_records, is_supported, read_records
from spcl.io.schema import OUTPUT_SCHEMA, RECORD_SCHEMA
from spcl.pipeline import context_for, process_batch
from spcl.stats import STATS_COLUMNS, batch_stats, merge_stats

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class JavaMissing(RuntimeError):
    """Spark needs Java 17+ on PATH (or JAVA_HOME)."""


def ensure_java() -> None:
    """Raise :class:`JavaMissing` with an install hint when no ``java`` can be found."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise JavaMissing(
            "Spark needs Java 17 or newer, but no 'java' is on PATH and JAVA_HOME is not set. "
            "Install a JDK/JRE (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "
            "or run with --engine python."
        )


def build_session(settings: Settings, master: str | None = None) -> SparkSession:
    """A SparkSession configured for spcl (workers use this interpreter, Arrow batches sized by settings)."""
    ensure_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    sp = settings.spark
    builder = SparkSession.builder.appName(sp.app_name)
    if master or not os.environ.get("SPARK_MASTER_SUBMITTED"):
        builder = builder.master(master or sp.master)
    conf = {
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(sp.batch_rows),
        "spark.sql.execution.arrow.maxBytesPerBatch": str(64 << 20),
        "spark.sql.files.maxPartitionBytes": sp.max_partition_bytes,
        # one input file per read task: shard files are the unit of parallelism and of retry
        "spark.sql.files.openCostInBytes": sp.max_partition_bytes,
        "spark.sql.sources.partitionOverwriteMode": "static",
        # three decision partitions: write them concurrently instead of sorting every task's rows first
        "spark.sql.maxConcurrentOutputFileWriters": "4",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.parquet.compression.codec": settings.output.compression.replace("none", "uncompressed"),
        **sp.conf,
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def source_name(path: str) -> str:
    """The source name recorded for a file: local ``file:`` URLs become plain paths (as in the plain engine).

    >>> source_name("file:/data/crawl.jsonl"), source_name("s3a://bucket/crawl.jsonl")
    ('/data/crawl.jsonl', 's3a://bucket/crawl.jsonl')
    """
    return urlparse(path).path if path.startswith("file:") else path


def _file_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[str, bytes]]:
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, path in enumerate(paths):
            yield source_name(path), contents[i].as_py()


def read_files_arrow(settings_json: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: ``binaryFile`` rows (path, content) → ``RECORD_SCHEMA`` batches."""
    settings = Settings.model_validate_json(settings_json)
    for path, content in _file_rows(batches):
        if is_supported(path, settings.input):
            yield from read_records(io.BytesIO(content), path, settings.input, settings.spark.batch_rows)


def read_and_process_arrow(settings_json: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: ``binaryFile`` rows → ``OUTPUT_SCHEMA`` batches, reading and screening in one
    pass (no round trip of the parsed records through the JVM)."""
    ctx = context_for(settings_json)
    for records in read_files_arrow(settings_json, batches):
        yield process_batch(records, ctx)


def count_files_arrow(settings_json: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: ``binaryFile`` rows → one row ``(records)`` per supported file."""
    settings = Settings.model_validate_json(settings_json)
    counts = [count_records(io.BytesIO(content), path, settings.input)
              for path, content in _file_rows(batches) if is_supported(path, settings.input)]
    yield pa.RecordBatch.from_pydict({"records": counts}, schema=pa.schema([("records", pa.int64())]))


def process_arrow(settings_json: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: ``RECORD_SCHEMA`` batches → ``OUTPUT_SCHEMA`` batches (the screen)."""
    ctx = context_for(settings_json)
    for batch in batches:
        yield process_batch(batch, ctx)


def stats_arrow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: output rows → one JSON row of partial counters per partition."""
    merged = merge_stats(batch_stats(b) for b in batches)
    schema = pa.schema([("stats", pa.string())])
    yield pa.RecordBatch.from_pydict({"stats": [json.dumps(merged)]}, schema=schema)


def spark_schema(schema: pa.Schema) -> Any:
    """The Spark StructType of an Arrow schema."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def hadoop_glob(spark: SparkSession, pattern: str) -> list[str]:
    """Paths matching a glob on any Hadoop filesystem (local, s3a, hdfs, ...), sorted."""
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    path = jvm.org.apache.hadoop.fs.Path(pattern)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())  # type: ignore[attr-defined]
    statuses = fs.globStatus(path) or []
    return sorted(str(status.getPath().toString()) for status in statuses)


def binary_files(spark: SparkSession, inputs: list[str]) -> DataFrame:
    """Spark's ``binaryFile`` source over files, directories (recursive) or globs, any Hadoop scheme."""
    return spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(inputs)


def screen_dataframe(files: DataFrame, settings: Settings, partitions: int) -> DataFrame:
    """Read every record of ``files`` and screen it: a DataFrame of ``OUTPUT_SCHEMA`` rows.

    With ``partitions == 0`` each file is read and screened in one task; otherwise the parsed records are
    first spread over ``partitions`` tasks (for inputs of few, large files).
    """
    settings_json = settings.model_dump_json()
    if partitions == 0:
        return files.mapInArrow(partial(read_and_process_arrow, settings_json), spark_schema(OUTPUT_SCHEMA))
    records = files.mapInArrow(partial(read_files_arrow, settings_json), spark_schema(RECORD_SCHEMA))
    screened = partial(process_arrow, settings_json)
    return records.repartition(partitions).mapInArrow(screened, spark_schema(OUTPUT_SCHEMA))


def count_input_records(files: DataFrame, settings: Settings) -> int:
    """Records in ``files`` counted without parsing (the reconciliation's independent side)."""
    counted = files.mapInArrow(partial(count_files_arrow, settings.model_dump_json()), "records long")
    total = counted.groupBy().sum("records").collect()[0][0]
    return int(total or 0)


def output_stats(spark: SparkSession, output: str) -> list[dict[str, dict[str, int]]]:
    """Partial counters over the written output (one per partition)."""
    base = output.rstrip("/")
    partitions = hadoop_glob(spark, f"{base}/decision=*")
    written = spark.read.option("basePath", base).parquet(*partitions).select(*STATS_COLUMNS)
    return [json.loads(r["stats"]) for r in written.mapInArrow(stats_arrow, "stats string").collect()]
