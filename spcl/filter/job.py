"""The filtering job: read a crawl, screen every record, write clean / flagged / quarantine, reconcile.

Two engines run the same task function (``spcl.filter.task.screen_file``, one input file per task): ``spark``
(default; local[*] or any cluster — Spark lists, reads and distributes the files) and ``python`` (one
process, local files; for tests, notebooks and small corpora). Outputs under ``output``:

- ``decision=clean|flagged|quarantine/part-KEY.parquet`` — ``spcl.io.schema.OUTPUT_SCHEMA`` rows, one
  file per input file and decision
- ``stats.json`` — counts per decision (read back from the written files' footers), language, PII type,
  flag and quarantine reason; the reconciliation ``input_records == clean + flagged + quarantine``;
  version, config hash, stage timings
- ``manifest.json`` — SHA-256, size and rows of every output file (``spcl.manifest``)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pyarrow.fs as pafs

from spcl import __version__
from spcl.config import Settings
from spcl.filter.batch import model_identity
from spcl.filter.driver import (
    Engine,
    FilterJob,
    JobError,
    UsageError,
    duplicate_ids_arrow,
    stage,
)
from spcl.filter.local import PythonEngine
from spcl.filter.spark import SparkEngine
from spcl.filter.stats import merge_stats, summarize
from spcl.filter.task import TaskReport
from spcl.io.storage import filesystem, is_local, join, local_path, write_text
from spcl.io.writers import footer_rows
from spcl.manifest import MANIFEST_NAME, manifest_document

__all__ = ["ENGINES", "Engine", "FilterJob", "JobError", "UsageError", "engine_for", "run_filter"]

log = logging.getLogger(__name__)

ARROW_ID_COUNT_ROWS = 5_000_000
"""Up to this many output rows (local output) duplicate ids are counted on the driver with pyarrow (one id
column in memory) instead of by the engine (a Spark job); above it, or for URLs, the engine counts."""

ENGINES: dict[str, Callable[[FilterJob], Engine]] = {
    "python": lambda job: PythonEngine(),
    "spark": lambda job: SparkEngine(job.master, job.submitted_master),
}
"""The engines by name: each builds the engine object for one run."""


def engine_for(job: FilterJob) -> Engine:
    """The engine object ``job.engine`` names (a :class:`UsageError` for an unknown name)."""
    try:
        return ENGINES[job.engine](job)
    except KeyError:
        raise UsageError(f"unknown engine {job.engine!r}; choose one of {', '.join(sorted(ENGINES))}") from None


def _duplicate_ids(engine: Engine, job: FilterJob, reports: list[TaskReport]) -> int:
    paths = [f.path for r in reports for f in r.files]
    rows = sum(f.rows for r in reports for f in r.files)
    if is_local(job.output) and rows <= ARROW_ID_COUNT_ROWS:  # no Spark job for a small local output
        return duplicate_ids_arrow(job.output, paths)
    return engine.duplicate_ids(job, paths)


def _output_parquet_files(output: str) -> list[str]:
    """Every visible ``decision=*/*.parquet`` file now under ``output`` (relative paths)."""
    fs, base = filesystem(output)
    found = []
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        rel = info.path[len(base.rstrip("/")) + 1:]
        parts = rel.split("/")
        if (info.type == pafs.FileType.File and parts[0].startswith("decision=") and rel.endswith(".parquet")
                and not any(p.startswith((".", "_")) for p in parts)):
            found.append(rel)
    return sorted(found)


def _written_counts(output: str, reports: list[TaskReport]) -> tuple[dict[str, int], dict[str, Any]]:
    """Rows per decision in the footers of the Parquet files actually on storage (each file once, stray
    files included), and the manifest entries of the files the tasks wrote."""
    entries: dict[str, Any] = {}
    for report in reports:
        for f in report.files:
            entries[f.path] = {"sha256": f.sha256, "bytes": f.bytes, "records": f.rows}
    counts: Counter[str] = Counter()
    for rel in _output_parquet_files(output):
        counts[rel.split("/", 1)[0].removeprefix("decision=")] += footer_rows(output, rel)
    return dict(counts), dict(sorted(entries.items()))


def with_absolute_output(job: FilterJob) -> FilterJob:
    """``job`` with a local output made absolute here, on the driver: an executor resolves a relative path
    against its own work folder (YARN, standalone, ``local-cluster``) and would write its files there."""
    if is_local(job.output):
        return replace(job, output=os.path.abspath(local_path(job.output)))
    return job


def run_filter(job: FilterJob) -> dict[str, Any]:
    """Run the job and write ``stats.json`` and ``manifest.json``; returns the stats.

    Raises :class:`UsageError` when the output is a file or overlaps an input (nothing is touched);
    :class:`JobError` when the output exists (without ``overwrite``), no input is readable, the
    reconciliation ``input = clean + flagged + quarantine`` fails, or every record was quarantined
    (outputs and stats are written first). ``stats.json`` is written last but for ``manifest.json``:
    an output without them is incomplete (``spcl.io.outputs.check_complete``).
    """
    started = time.time()
    job = with_absolute_output(job)
    engine = engine_for(job)
    result = engine.run(job)
    settings = job.settings
    with stage(result.stage_seconds, "count_ids"):
        duplicate_ids = _duplicate_ids(engine, job, result.reports)
    with stage(result.stage_seconds, "reconcile"):
        written, entries = _written_counts(job.output, result.reports)
        counters = merge_stats(r.stats for r in result.reports)
        counters["decision"] = Counter(written)  # what is on storage, not what the tasks meant to write
        input_records = sum(r.input_records for r in result.reports)
    elapsed = time.time() - started
    stats = summarize(
        counters,
        input_records,
        spcl_version=__version__,
        config_hash=settings.config_hash(),
        **(model_identity(settings.screen.model) if settings.screen.enabled
           else {"model": None, "model_version": None}),
        engine=engine.name,
        master=engine.master,
        input_files=result.files,
        skipped_files=sorted(result.skipped),
        skipped_file_reasons=dict(sorted(Counter(result.skipped.values()).items())),
        duplicate_input_files=result.duplicate_inputs,
        duplicate_ids=duplicate_ids,
        manifest=settings.output.manifest,
        elapsed_seconds=round(elapsed, 3),
        docs_per_second=round(input_records / elapsed, 1) if elapsed > 0 else None,
        stage_seconds=result.stage_seconds,
        **({"startup_seconds": result.startup} if result.startup else {}),
        task_seconds=round(sum(r.seconds for r in result.reports), 3),
    )
    stats_bytes = (json.dumps(stats, indent=2, ensure_ascii=False) + "\n").encode()
    write_text(join(job.output, "stats.json"), stats_bytes.decode())
    if settings.output.manifest:
        entries["stats.json"] = {"sha256": hashlib.sha256(stats_bytes).hexdigest(), "bytes": len(stats_bytes)}
        manifest = manifest_document(entries, kind="spcl-filter-output", config_hash=stats["config_hash"],
                                     records=stats["counts"], input_files=result.files)
        write_text(join(job.output, MANIFEST_NAME), json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    if not stats["reconciliation"]["ok"]:
        rec = stats["reconciliation"]
        raise JobError(f"reconciliation failed: {rec['input_records']} input records but "
                       f"{rec['output_records']} output records (see stats.json)")
    if input_records and stats["counts"]["quarantine"] == input_records:
        raise JobError(_all_quarantined_hint(stats, settings))
    return stats


def _all_quarantined_hint(stats: dict[str, Any], settings: Settings) -> str:
    """The message for a run that quarantined every record: the top reasons and what to check."""
    reasons = sorted(stats["quarantine_reasons"].items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{r}: {n}" for r, n in reasons[:3])
    hint = ""
    if stats["quarantine_reasons"].get("missing_text_field"):
        hint = (f"; the text field is input.text_field={settings.input.text_field!r} — set the field your "
                "records use in the config")
    return f"every one of {stats['reconciliation']['input_records']} records was quarantined ({top}){hint}"

