"""The filtering job: read a crawl, screen every record, write clean / flagged / quarantine, reconcile.

Two engines run the same task function (``spcl.task.screen_file``, one input file per task): ``spark``
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

import glob
import hashlib
import itertools
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spcl import __version__
from spcl.config import Settings
from spcl.io.readers import is_supported
from spcl.io.storage import clear_dir, is_nonempty_dir, join, local_path, write_text
from spcl.io.writers import footer_rows
from spcl.manifest import MANIFEST_NAME, manifest_document
from spcl.pipeline import build_context
from spcl.progress import Progress
from spcl.stats import merge_stats, summarize
from spcl.task import screen_file

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


@dataclass
class _RunResult:
    reports: list[dict[str, Any]]
    files: list[str]
    skipped: list[str]
    stage_seconds: dict[str, float] = field(default_factory=dict)


@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - started, 3)
    log.info("stage %s: %.1f s", name, timings[name])


def _no_inputs(inputs: tuple[str, ...]) -> JobError:
    return JobError(f"no readable input files (.jsonl[.gz|.zst], .ndjson, .json, .parquet) in {list(inputs)}")


def expand_local_inputs(inputs: tuple[str, ...], settings: Settings) -> tuple[list[str], list[str]]:
    """(supported files, skipped files) for local files, directories (recursive) and globs, sorted."""
    found: list[str] = []
    for item in inputs:
        path = Path(local_path(item))
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
    supported = [f for f in found if is_supported(f, settings.input)]
    skipped = [f for f in found if f not in set(supported)]
    if not supported:
        raise _no_inputs(inputs)
    return supported, skipped


def _prepare_output(output: str, overwrite: bool) -> None:
    if is_nonempty_dir(output) and not overwrite:
        raise JobError(f"output {output} already exists and is not empty; pass --overwrite to replace it")
    clear_dir(output)


def _run_python(job: FilterJob) -> _RunResult:
    timings: dict[str, float] = {}
    with _stage(timings, "list_inputs"):
        files, skipped = expand_local_inputs(job.inputs, job.settings)
        _prepare_output(job.output, job.overwrite)
    with _stage(timings, "screen_and_write"):
        ctx = build_context(job.settings)
        reports = []
        sizes = [os.path.getsize(p) for p in files]
        with Progress("filter", total_work=sum(sizes)) as bar:  # a TTY only; ETA from input bytes read
            for path, before in zip(files, itertools.accumulate([0, *sizes]), strict=False):
                with open(path, "rb") as fh:

                    def on_batch(rows: int, fh: Any = fh, before: int = before) -> None:
                        bar.advance(rows, work=before + fh.tell())

                    reports.append(screen_file(fh, path, job.output, ctx, on_batch))
    return _RunResult(reports, files, skipped, timings)


def _run_spark(job: FilterJob) -> _RunResult:
    from spcl import spark as sp

    timings: dict[str, float] = {}
    with _stage(timings, "list_inputs"):
        session = sp.build_session(job.settings, job.master)
        files_df = sp.binary_files(session, list(job.inputs))
        listed = [sp.source_name(r["path"]) for r in files_df.select("path").collect()]
        files = [p for p in listed if is_supported(p, job.settings.input)]
        skipped = [p for p in listed if p not in set(files)]
        if not files:
            raise _no_inputs(job.inputs)
        _prepare_output(job.output, job.overwrite)
    with _stage(timings, "screen_and_write"):
        reports = sp.run_tasks(files_df, job.settings, job.output)
    return _RunResult(reports, files, skipped, timings)


def _written_counts(output: str, reports: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, Any]]:
    """Rows per decision as recorded in the footers of the files on storage, and the manifest entries."""
    counts: Counter[str] = Counter()
    entries: dict[str, Any] = {}
    for report in reports:
        for f in report["files"]:
            counts[f["path"].split("/", 1)[0].removeprefix("decision=")] += footer_rows(output, f["path"])
            entries[f["path"]] = {"sha256": f["sha256"], "bytes": f["bytes"], "records": f["rows"]}
    return dict(counts), dict(sorted(entries.items()))


def run_filter(job: FilterJob) -> dict[str, Any]:
    """Run the job and write ``stats.json`` and ``manifest.json``; returns the stats.

    Raises :class:`JobError` when the output exists (without ``overwrite``), no input is readable, or
    the reconciliation ``input = clean + flagged + quarantine`` fails (stats are written first).
    """
    started = time.time()
    result = (_run_spark if job.engine == "spark" else _run_python)(job)
    settings = job.settings
    with _stage(result.stage_seconds, "reconcile"):
        written, entries = _written_counts(job.output, result.reports)
        counters = merge_stats(r["stats"] for r in result.reports)
        counters["decision"] = Counter(written)  # what is on storage, not what the tasks meant to write
        input_records = sum(r["input_records"] for r in result.reports)
    elapsed = time.time() - started
    stats = summarize(
        counters,
        input_records,
        spcl_version=__version__,
        config_hash=settings.config_hash(),
        model=settings.screen.model if settings.screen.enabled else None,
        engine=job.engine,
        master=(job.master or settings.spark.master) if job.engine == "spark" else None,
        input_files=result.files,
        skipped_files=result.skipped,
        elapsed_seconds=round(elapsed, 3),
        docs_per_second=round(input_records / elapsed, 1) if elapsed > 0 else None,
        stage_seconds=result.stage_seconds,
        task_seconds=round(sum(r["seconds"] for r in result.reports), 3),
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
    return stats

