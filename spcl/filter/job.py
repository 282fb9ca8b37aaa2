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
import itertools
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import IO, Any

import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.fs as pafs

from spcl import __version__
from spcl.config import Settings
from spcl.filter.batch import build_context, model_identity
from spcl.filter.stats import merge_stats, summarize
from spcl.filter.task import screen_split, screen_unopenable
from spcl.io.inputs import Listing, UnsafeOutput, check_output, list_local_inputs
from spcl.io.outputs import clear_filter_output, foreign_entries
from spcl.io.readers import is_splittable, is_supported
from spcl.io.splits import Split, plan_splits
from spcl.io.storage import (
    filesystem,
    is_existing_file,
    is_local,
    is_nonempty_dir,
    join,
    local_path,
    write_text,
)
from spcl.io.writers import footer_rows
from spcl.manifest import MANIFEST_NAME, manifest_document
from spcl.messages import shown
from spcl.progress import Progress

log = logging.getLogger(__name__)


class JobError(RuntimeError):
    """The job cannot start or did not reconcile; the message says why (never with record values)."""


class UsageError(JobError):
    """The command asks for something unsafe or impossible (exit 2): an output that is a file, or one
    that equals, contains or lies inside an input."""


ARROW_ID_COUNT_ROWS = 5_000_000
"""Up to this many output rows (local output) the Spark engine counts duplicate ids on the driver with
pyarrow (one id column in memory) instead of starting a Spark job; above it, or for URLs, Spark counts."""


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
    skipped: dict[str, str]
    stage_seconds: dict[str, float] = field(default_factory=dict)
    duplicate_inputs: int = 0
    duplicate_ids: int = 0


@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - started, 3)
    log.info("stage %s: %.1f s", name, timings[name])


def _no_inputs(inputs: tuple[str, ...]) -> JobError:
    return JobError(f"no readable input files (.jsonl[.gz|.zst], .ndjson, .json, .parquet) in {list(inputs)}")


def _split_supported(listing: Listing, settings: Settings) -> tuple[list[str], dict[str, str]]:
    skipped = dict(listing.skipped)
    files = []
    for f in listing.files:
        if is_supported(f, settings.input):
            files.append(f)
        else:
            skipped[f] = "unsupported_extension"
    return files, skipped


def _check_paths(job: FilterJob, files: list[str]) -> None:
    """Refuse an output that is a file, or that equals, contains or lies inside an input (exit 2)."""
    if is_existing_file(job.output):
        raise UsageError(f"output {job.output} is an existing file, not a folder")
    try:
        check_output(job.inputs, job.output, files)
    except UnsafeOutput as err:
        raise UsageError(str(err)) from None


def _check_output_state(output: str, overwrite: bool) -> None:
    """Refuse (exit 2, nothing touched) an existing non-empty output without ``overwrite``, and with it one that
    holds anything a filter run did not write (``spcl.io.outputs.foreign_entries``)."""
    if not is_nonempty_dir(output):
        return
    if not overwrite:
        raise UsageError(f"output {output} already exists and is not empty; pass --overwrite to replace it")
    foreign = foreign_entries(output)
    if foreign:
        raise UsageError(f"output {output} holds {len(foreign)} path(s) a filter run did not write (e.g. "
                         f"{shown(foreign[0])}): refusing to --overwrite it; move them away or choose another output")


def _prepare_output(output: str, overwrite: bool) -> None:
    """Check the output again (:func:`_check_output_state`) and empty it of a previous filter run's files."""
    _check_output_state(output, overwrite)
    try:
        clear_filter_output(output)
    except ValueError as err:  # something appeared since the check
        raise UsageError(str(err)) from None


def _screen_local(path: str, output: str, ctx: Any, bar: Progress | None = None,
                  before: int = 0) -> list[dict[str, Any]]:
    """Screen one local file (in byte ranges when it is a big plain JSONL file); its reports.

    A file that cannot be opened becomes one quarantine row naming it.
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below; an unopenable file is quarantined
    except OSError as err:
        log.warning("input file %s cannot be opened: %s", path, type(err).__name__)
        return [screen_unopenable(path, f"unreadable_file:{type(err).__name__}", output, ctx)]
    with fh:

        def on_batch(rows: int) -> None:
            if bar is not None:
                bar.advance(rows, work=before + fh.tell())

        return [screen_split(fh, split, output, ctx, on_batch) for split in local_splits(fh, path, ctx.settings)]


def local_splits(fh: IO[bytes], path: str, settings: Settings) -> list[Split]:
    """The units of work of one open local file (``spcl.io.splits.plan_splits``)."""
    size = os.fstat(fh.fileno()).st_size
    split_bytes = settings.input.split_bytes
    splittable = size > split_bytes > 0 and is_splittable(fh, path, settings.input)
    fh.seek(0)
    return plan_splits(path, size, splittable, split_bytes)


def _run_python(job: FilterJob) -> _RunResult:
    timings: dict[str, float] = {}
    with _stage(timings, "list_inputs"):
        if any(not is_local(i) for i in job.inputs):
            raise UsageError("the python engine reads local files only; use --engine spark for URLs")
        listing = list_local_inputs_or_fail(job.inputs)
        files, skipped = _split_supported(listing, job.settings)
        _check_paths(job, listing.files)
        if not files:
            raise _no_inputs(job.inputs)
        _prepare_output(job.output, job.overwrite)
    with _stage(timings, "screen_and_write"):
        ctx = build_context(job.settings)
        reports = []
        sizes = [_size(p) for p in files]
        with Progress("filter", total_work=sum(sizes)) as bar:  # a TTY only; ETA from input bytes read
            for path, before in zip(files, itertools.accumulate([0, *sizes]), strict=False):
                reports += _screen_local(path, job.output, ctx, bar, before)
    with _stage(timings, "count_ids"):
        duplicate_ids = _duplicate_ids_arrow(job.output, reports)
    return _RunResult(reports, files, skipped, timings, listing.duplicates, duplicate_ids)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def list_local_inputs_or_fail(inputs: tuple[str, ...]) -> Listing:
    """``spcl.io.inputs.list_local_inputs``, with a missing input as a :class:`JobError`."""
    try:
        return list_local_inputs(inputs)
    except FileNotFoundError as err:
        raise JobError(str(err)) from None


def _run_spark(job: FilterJob) -> _RunResult:
    from spcl.spark import filter as sp
    from spcl.spark.progress import SparkProgress
    from spcl.spark.session import build_session

    timings: dict[str, float] = {}
    with _stage(timings, "list_inputs"):
        local = tuple(i for i in job.inputs if is_local(i))
        remote = [i for i in job.inputs if not is_local(i)]
        listing = list_local_inputs_or_fail(local) if local else Listing()
        _check_paths(job, listing.files)  # what can be checked without Spark is checked before starting it
        _check_output_state(job.output, job.overwrite)
        if not remote and not _split_supported(listing, job.settings)[0]:
            raise _no_inputs(job.inputs)
        session = build_session(job.settings, job.master, app_name="spcl-filter")
        if remote:
            found = sp.list_files(session, remote)
            listing.duplicates += len(found) - len(set(found))
            listing.files = sorted(set(listing.files) | set(found))
        files, skipped = _split_supported(listing, job.settings)
        _check_paths(job, listing.files)
        if not files:
            raise _no_inputs(job.inputs)
        _prepare_output(job.output, job.overwrite)
    with _stage(timings, "screen_and_write"), SparkProgress(session, "filter") as progress:  # a TTY only
        splits = _local_range_splits(files, job.settings)  # big plain JSONL files: one task per byte range
        whole = [f for f in files if f not in {s.source for s in splits}]
        reports = (sp.run_tasks(sp.binary_files(session, whole), job.settings, job.output, progress.rows)
                   if whole else [])
        reports += sp.run_split_tasks(session, splits, job.settings, job.output, progress.rows)
        reports = list({(r["source"], r.get("split")): r for r in reports}.values())
        missing = sorted(set(files) - {r["source"] for r in reports})
        if missing:  # e.g. a file named explicitly whose name starts with '_' or '.': Spark skips those
            log.warning("%d input file(s) listed but not read by Spark; read on the driver (local) or "
                        "quarantined by name (remote)", len(missing))
            ctx = build_context(job.settings)
            for m in missing:
                reports += (_screen_local(m, job.output, ctx) if is_local(m) else
                            [screen_unopenable(m, "unreadable_file:not_read_by_spark", job.output, ctx)])
    with _stage(timings, "count_ids"):
        rows = sum(f["rows"] for r in reports for f in r["files"])
        if is_local(job.output) and rows <= ARROW_ID_COUNT_ROWS:  # no Spark job for a small local output
            duplicate_ids = _duplicate_ids_arrow(job.output, reports)
        else:
            duplicate_ids = sp.duplicate_ids(session, job.output, [f["path"] for r in reports for f in r["files"]])
    return _RunResult(reports, files, skipped, timings, listing.duplicates, duplicate_ids)


def _local_range_splits(files: list[str], settings: Settings) -> list[Split]:
    """The byte ranges of the local files that are split (big plain JSONL); other files are not listed."""
    out: list[Split] = []
    for path in files:
        if not is_local(path) or _size(path) <= settings.input.split_bytes or settings.input.split_bytes <= 0:
            continue
        try:
            with open(path, "rb") as fh:
                parts = local_splits(fh, path, settings)
        except OSError:
            continue  # read whole (and quarantined by name if still unreadable) like any other file
        if len(parts) > 1:
            out += parts
    return out


def _duplicate_ids_arrow(output: str, reports: list[dict[str, Any]]) -> int:
    """Rows whose id an earlier row already had (rows minus distinct ids), over the written files."""
    paths = sorted({join(output, f["path"]) for r in reports for f in r["files"]})
    if not paths:
        return 0
    fs, _ = filesystem(output)
    ids = pads.dataset([filesystem(p)[1] for p in paths], format="parquet", filesystem=fs).to_table(
        columns=["id"]).column("id")
    return len(ids) - pc.count_distinct(ids).as_py()


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


def _written_counts(output: str, reports: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, Any]]:
    """Rows per decision in the footers of the Parquet files actually on storage (each file once, stray
    files included), and the manifest entries of the files the tasks wrote."""
    entries: dict[str, Any] = {}
    for report in reports:
        for f in report["files"]:
            entries[f["path"]] = {"sha256": f["sha256"], "bytes": f["bytes"], "records": f["rows"]}
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
        **(model_identity(settings.screen.model) if settings.screen.enabled
           else {"model": None, "model_version": None}),
        engine=job.engine,
        master=(job.master or settings.spark.master) if job.engine == "spark" else None,
        input_files=result.files,
        skipped_files=sorted(result.skipped),
        skipped_file_reasons=dict(sorted(Counter(result.skipped.values()).items())),
        duplicate_input_files=result.duplicate_inputs,
        duplicate_ids=result.duplicate_ids,
        manifest=settings.output.manifest,
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

