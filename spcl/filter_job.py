"""The filtering job: read a crawl, screen every record, write clean / flagged / quarantine, reconcile.

Two engines run the same functions: ``spark`` (default; local[*] or any cluster) and ``python`` (one
process, local files; for tests, notebooks and small corpora). Outputs under ``output``:

- ``decision=clean|flagged|quarantine/*.parquet`` — ``spcl.io.schema.OUTPUT_SCHEMA`` rows
- ``stats.json`` — counts per decision, language, PII type, flag and quarantine reason; the
  reconciliation ``input_records == clean + flagged + quarantine``; version, config hash, timings
- ``manifest.json`` — SHA-256 of every output file (``spcl.manifest``)
"""

from __future__ import annotations

import glob
import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq

from spcl import __version__
from spcl.config import Settings
from spcl.io.outputs import output_dataset
from spcl.io.readers import count_records, is_supported, read_records
from spcl.io.schema import DECISIONS, OUTPUT_SCHEMA
from spcl.manifest import write_manifest
from spcl.pipeline import build_context, process_batch
from spcl.stats import STATS_COLUMNS, batch_stats, merge_stats, summarize

log = logging.getLogger(__name__)


class JobError(RuntimeError):
    """The job cannot start or did not reconcile; the message says why (never with record values)."""


@dataclass(frozen=True)
class FilterJob:
    """One run of the filter: inputs (files, directories, globs or URLs), output folder, settings."""

    inputs: tuple[str, ...]
    output: str
    settings: Settings
    engine: str = "spark"
    master: str | None = None
    overwrite: bool = False


def is_local(path: str) -> bool:
    """True for plain paths and ``file:`` URLs."""
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def local_path(path: str) -> Path:
    """The filesystem path of a plain path or ``file:`` URL."""
    return Path(urlparse(path).path if path.startswith("file:") else path)


def expand_local_inputs(inputs: tuple[str, ...], job_settings: Settings) -> tuple[list[str], list[str]]:
    """(supported files, skipped files) for local files, directories (recursive) and globs, sorted."""
    found: list[str] = []
    for item in inputs:
        path = local_path(item)
        if path.is_dir():
            found += [str(p) for p in sorted(path.rglob("*")) if p.is_file()
                      and not p.name.startswith((".", "_"))]
        elif path.is_file():
            found.append(str(path))
        else:
            matches = sorted(glob.glob(str(path), recursive=True))
            if not matches:
                raise JobError(f"input not found: {item}")
            found += [m for m in matches if os.path.isfile(m)]
    supported = [f for f in found if is_supported(f, job_settings.input)]
    skipped = [f for f in found if f not in set(supported)]
    if not supported:
        raise _no_inputs(inputs)
    return supported, skipped


def _no_inputs(inputs: tuple[str, ...]) -> JobError:
    return JobError(f"no readable input files (.jsonl[.gz|.zst], .ndjson, .json, .parquet) in {list(inputs)}")


def _prepare_local_output(output: str, overwrite: bool) -> Path:
    out = local_path(output)
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise JobError(f"output {output} already exists and is not empty; pass --overwrite to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _iter_outputs(files: list[str], settings: Settings) -> Iterator[pa.RecordBatch]:
    ctx = build_context(settings)
    for path in files:
        with open(path, "rb") as fh:
            for batch in read_records(fh, path, settings.input, settings.spark.batch_rows):
                yield process_batch(batch, ctx)


def _write_local_partitions(batches: Iterator[pa.RecordBatch], out: Path, compression: str) -> None:
    writers: dict[str, pq.ParquetWriter] = {}
    schema = OUTPUT_SCHEMA.remove(OUTPUT_SCHEMA.get_field_index("decision"))
    try:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            for decision in DECISIONS:
                part = table.filter(pa.compute.equal(table["decision"], decision))
                if part.num_rows == 0:
                    continue
                if decision not in writers:
                    folder = out / f"decision={decision}"
                    folder.mkdir(parents=True, exist_ok=True)
                    writers[decision] = pq.ParquetWriter(folder / "part-00000.parquet", schema,
                                                         compression=compression)
                writers[decision].write_table(part.drop_columns(["decision"]))
    finally:
        for writer in writers.values():
            writer.close()


def _local_output_stats(out: Path) -> list[dict[str, Any]]:
    dataset = output_dataset(out)
    return [batch_stats(b) for b in dataset.to_batches(columns=list(STATS_COLUMNS))]


@dataclass
class _RunResult:
    input_records: int
    stat_parts: list[dict[str, Any]]
    files: list[str]
    skipped: list[str]
    stage_seconds: dict[str, float] = field(default_factory=dict)


@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - started, 3)
    log.info("stage %s: %.1f s", name, timings[name])


def _run_python(job: FilterJob) -> _RunResult:
    timings: dict[str, float] = {}
    with _stage(timings, "list_inputs"):
        files, skipped = expand_local_inputs(job.inputs, job.settings)
        out = _prepare_local_output(job.output, job.overwrite)
    with _stage(timings, "screen_and_write"):
        _write_local_partitions(_iter_outputs(files, job.settings), out, job.settings.output.compression)
    with _stage(timings, "count_input"):
        input_records = 0
        for path in files:
            with open(path, "rb") as fh:
                input_records += count_records(fh, path, job.settings.input)
    with _stage(timings, "output_stats"):
        parts = _local_output_stats(out)
    return _RunResult(input_records, parts, files, skipped, timings)


def auto_partitions(settings: Settings, read_tasks: int, parallelism: int) -> int:
    """Partitions to spread parsed records over: the configured number, else 4 × parallelism when the
    input has fewer files (read tasks) than cores, else 0 (each file is read and screened in one task)."""
    if settings.spark.partitions:
        return settings.spark.partitions
    return parallelism * 4 if read_tasks < parallelism else 0


def _run_spark(job: FilterJob) -> _RunResult:
    from spcl import spark as sp

    timings: dict[str, float] = {}
    with _stage(timings, "list_inputs"):
        session = sp.build_session(job.settings, job.master)
        if is_local(job.output):
            _prepare_local_output(job.output, job.overwrite)
        files_df = sp.binary_files(session, list(job.inputs))
        listed = [sp.source_name(r["path"]) for r in files_df.select("path").collect()]
        files = [p for p in listed if is_supported(p, job.settings.input)]
        skipped = [p for p in listed if p not in set(files)]
        if not files:
            raise _no_inputs(job.inputs)
        partitions = auto_partitions(job.settings, files_df.rdd.getNumPartitions(),
                                     session.sparkContext.defaultParallelism)
    with _stage(timings, "screen_and_write"):
        screened = sp.screen_dataframe(files_df, job.settings, partitions)
        mode = "overwrite" if job.overwrite or is_local(job.output) else "errorifexists"
        screened.write.mode(mode).partitionBy("decision").parquet(job.output)
    with _stage(timings, "count_input"):
        input_records = sp.count_input_records(files_df, job.settings)
    with _stage(timings, "output_stats"):
        parts = sp.output_stats(session, job.output)
    return _RunResult(input_records, parts, files, skipped, timings)


def run_filter(job: FilterJob) -> dict[str, Any]:
    """Run the job and write ``stats.json`` and ``manifest.json``; returns the stats.

    Raises :class:`JobError` when the output exists (without ``overwrite``), no input is readable, or
    the reconciliation ``input = clean + flagged + quarantine`` fails (stats are written first).
    """
    started = time.time()
    runner = _run_spark if job.engine == "spark" else _run_python
    result = runner(job)
    elapsed = time.time() - started
    settings = job.settings
    stats = summarize(
        merge_stats(result.stat_parts),
        result.input_records,
        spcl_version=__version__,
        config_hash=settings.config_hash(),
        model=settings.screen.model if settings.screen.enabled else None,
        engine=job.engine,
        master=(job.master or settings.spark.master) if job.engine == "spark" else None,
        input_files=result.files,
        skipped_files=result.skipped,
        elapsed_seconds=round(elapsed, 3),
        docs_per_second=round(result.input_records / elapsed, 1) if elapsed > 0 else None,
        stage_seconds=result.stage_seconds,
    )
    with _stage(result.stage_seconds, "stats_and_manifest"):
        _write_run_files(job, stats)
    if not stats["reconciliation"]["ok"]:
        rec = stats["reconciliation"]
        raise JobError(f"reconciliation failed: {rec['input_records']} input records but "
                       f"{rec['output_records']} output records (see stats.json)")
    return stats


def _write_run_files(job: FilterJob, stats: dict[str, Any]) -> None:
    text = json.dumps(stats, indent=2, ensure_ascii=False) + "\n"
    if is_local(job.output):
        out = local_path(job.output)
        (out / "stats.json").write_text(text, encoding="utf-8")
        if job.settings.output.manifest:
            write_manifest(out, kind="spcl-filter-output", config_hash=stats["config_hash"],
                           records=stats["counts"], input_files=stats["input_files"])
        return
    _write_remote_text(job.output.rstrip("/") + "/stats.json", text)
    log.warning("manifest.json is written for local outputs only; %s is remote", job.output)


def _write_remote_text(url: str, text: str) -> None:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    assert spark is not None
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    path = jvm.org.apache.hadoop.fs.Path(url)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())  # type: ignore[attr-defined]
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()
