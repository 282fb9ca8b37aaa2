"""Benchmark of ``screen_dataframe`` against ``spcl filter``'s Spark engine on the same real
documents.

Both run in one Spark local session (the filter job's own builder), over the same Parquet files (one
task per file), with the full screen, and write Parquet partitioned by decision: the filter job
through its tasks, the DataFrame path through
``screen_dataframe(spark.read.parquet(...)).write.partitionBy("decision")``. Each is warmed up first
(Python workers started, detectors and model loaded) and timed separately; docs per CPU second of
the Python workers and the JVM are printed beside wall-time docs/s per core, because the machine may
be shared. Numbers are reported, never asserted.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NotRequired, TypedDict

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.bench.processes import WorkerMemory
from spcl.bench.realtext import real_documents
from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter
from spcl.filter.stats import StatsJson
from spcl.spark import build_session


def write_parquet_corpus(folder: Path, docs: int, seed: int, files: int = 8) -> list[str]:
    """``docs`` real ~1.5 KB documents (``spcl.bench.realtext``) in ``files`` Parquet files (id,
    text, lang)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = list(real_documents(docs, seed))
    per_file = -(-len(rows) // files)
    paths = []
    for i in range(files):
        part = rows[i * per_file : (i + 1) * per_file]
        if not part:
            break
        path = folder / f"part-{i:03d}.parquet"
        pq.write_table(pa.Table.from_pylist(part), path)
        paths.append(str(path))
    return paths


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (Python workers + JVM) of ``run()``."""
    monitor = WorkerMemory()
    monitor.start()
    time.sleep(0.3)  # the first sample sets every process's CPU time to count from
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    time.sleep(0.3)
    monitor.stop()
    return seconds, monitor.cpu_seconds


class PathSpeed(TypedDict):
    """One path's speed: documents per second per core, and per CPU second."""

    docs_per_s_per_core: float
    docs_per_cpu_s: float


class DataframeBench(TypedDict):
    """What :func:`run_dataframe_bench` measured."""

    docs: int
    cores: int
    load_average: list[float]
    filter: PathSpeed
    dataframe: PathSpeed
    same_counts: bool
    ratio_wall: NotRequired[float]
    ratio_cpu: NotRequired[float]


def run_dataframe_bench(
    docs: int, seed: int, workdir: str | None, cores: int = 2
) -> DataframeBench:
    """Write the corpus, time both paths in one local[cores] session, print the report; returns
    the numbers."""
    # optional heavy dependency: importing spcl.integrations.spark imports pyspark (and sets
    # PYSPARK_PYTHON)
    from spcl.integrations.spark import screen_dataframe

    root = Path(workdir or tempfile.mkdtemp(prefix="spcl-bench-df-"))
    inputs = write_parquet_corpus(root / "input", docs, seed)
    settings = load_settings(None)
    master = f"local[{cores}]"
    spark = build_session(settings, master)

    def filter_job(paths: list[str], out: str) -> StatsJson:
        return run_filter(FilterJob(tuple(paths), out, settings, "spark", master, True))

    def dataframe(paths: list[str], out: str) -> None:
        # spcl adds its own lang
        df = spark.read.parquet(*paths).withColumnRenamed("lang", "crawl_lang")
        screen_dataframe(df, settings=settings).write.mode("overwrite").partitionBy(
            "decision"
        ).parquet(out)

    # one Python worker per core, models loaded
    filter_job(inputs[:cores], str(root / "warm-filter"))
    dataframe(inputs[:cores], str(root / "warm-df"))
    load_before = os.getloadavg()[0]
    runs: list[StatsJson] = []
    f_wall, f_cpu = _timed(lambda: runs.append(filter_job(inputs, str(root / "out-filter"))))
    stats = runs[0]
    d_wall, d_cpu = _timed(lambda: dataframe(inputs, str(root / "out-df")))
    load_after = os.getloadavg()[0]
    counts_df = {
        r["decision"]: r["count"]
        for r in spark.read.parquet(str(root / "out-df")).groupBy("decision").count().collect()
    }
    n = stats["reconciliation"]["input_records"]
    result: DataframeBench = {
        "docs": n,
        "cores": cores,
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "filter": {
            "docs_per_s_per_core": n / f_wall / cores,
            "docs_per_cpu_s": n / max(f_cpu, 1e-9),
        },
        "dataframe": {
            "docs_per_s_per_core": n / d_wall / cores,
            "docs_per_cpu_s": n / max(d_cpu, 1e-9),
        },
        "same_counts": {k: v for k, v in stats["counts"].items() if v} == counts_df,
    }
    print(f"corpus: {n} real ja/ko documents (~1.5 KB) in {len(inputs)} Parquet files under {root}")
    print(
        f"full screen, Spark {master}; load average {load_before:.1f} → {load_after:.1f} "
        "(a shared machine: compare the two lines, and the CPU-second figures)"
    )
    for r, label in (
        (result["filter"], "spcl filter (Spark engine)"),
        (result["dataframe"], "screen_dataframe + write"),
    ):
        print(
            f"  {label:28}: {r['docs_per_s_per_core']:8.0f} docs/s per core,"
            f" {r['docs_per_cpu_s']:8.0f} docs per CPU second (Python workers + JVM)"
        )
    ratio = result["dataframe"]["docs_per_s_per_core"] / result["filter"]["docs_per_s_per_core"]
    cpu_ratio = result["dataframe"]["docs_per_cpu_s"] / result["filter"]["docs_per_cpu_s"]
    result["ratio_wall"], result["ratio_cpu"] = ratio, cpu_ratio
    print(f"  {'DataFrame / filter':28}: {ratio:.2f} (wall), {cpu_ratio:.2f} (CPU)")
    print(f"  {'same decision counts':28}: {result['same_counts']}")
    return result
