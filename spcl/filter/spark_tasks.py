"""The filter's Spark tasks, as they run in a Python worker: the ``mapInArrow`` / ``mapPartitions``
bodies.

Kept apart from the engine (``spcl.filter.spark``) so that a worker imports only what a task needs
(the task function, the batch function, the readers and writers), not the driver's listing and
output code (which pulls in ``pyarrow.dataset`` and with it pandas). Each body builds its context
once per Python worker (``spcl.filter.batch.context_for``) and reports its worker's start-up
(:class:`~spcl.filter.task.WorkerTiming`).
"""

# ruff: noqa: E402 - the clock below times this module's imports in a Python worker
from __future__ import annotations

import os
import time

_IMPORT_STARTED = time.time()

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from spcl.filter.batch import FilterContext, context_for
from spcl.filter.task import (
    WorkerTiming,
    screen_bytes,
    screen_file,
    screen_split,
    screen_unopenable,
)
from spcl.io.inputs import canonical_source
from spcl.io.readers import is_supported
from spcl.io.splits import Split

if TYPE_CHECKING:
    from pyspark import Accumulator

_IMPORTED = time.time()

WORKER_MODULES: tuple[str, ...] = ("spcl.filter.spark_tasks", "spcl.screen.model")
"""What a filter task imports (this module, then the screen model's stack: LightGBM, fugashi,
SentencePiece, SciPy): the Spark engine's daemon imports them before it forks the Python workers
(``spcl.spark.daemon``)."""


def process_started_at(pid: int | None = None) -> float | None:
    """When process ``pid`` (default: this one) started, in epoch seconds, from ``/proc`` (``None``
    elsewhere).

    Measured back from now on the boot clock (``/proc/uptime``, 10 ms ticks), not from ``btime``,
    which is rounded to whole seconds.
    """
    try:
        with open(f"/proc/{pid or 'self'}/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))


def _worker_context(settings_json: str) -> tuple[FilterContext, WorkerTiming]:
    """The worker's cached context and the timing of this task's start-up (setup 0 when the
    context was cached)."""
    entered = time.time()
    cached = context_for.cache_info().currsize
    ctx = context_for(settings_json)
    setup = time.time() - entered if context_for.cache_info().currsize > cached else 0.0
    started = process_started_at() or _IMPORT_STARTED
    timing = WorkerTiming(
        os.getpid(),
        round(started, 3),
        _IMPORTED,
        round(_IMPORTED - _IMPORT_STARTED, 4),
        round(time.time(), 4),
        round(setup, 4),
    )
    return ctx, timing


def source_name(path: str) -> str:
    """The source name recorded for a file Spark listed: local ``file:`` URLs become resolved plain
    paths (as in the plain engine, ``spcl.io.inputs.canonical_source``); other URLs stay as given.
    Hadoop paths are not percent-encoded, so ``#``, ``?`` and ``%`` are part of the name.

    >>> source_name("file:/data/hash#1.jsonl"), source_name("s3a://bucket/crawl.jsonl")
    ('/data/hash#1.jsonl', 's3a://bucket/crawl.jsonl')
    """
    if path.startswith("file:"):
        rest = path[len("file:") :]
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[rest.index("/") :] if "/" in rest else "/"
        return canonical_source(rest)
    return path


def _file_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[str, bytes]]:
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, path in enumerate(paths):
            yield source_name(path), contents[i].as_py()


REPORT_SCHEMA = pa.schema([("report", pa.string())])


def screen_files_arrow(
    settings_json: str,
    output: str,
    batches: Iterator[pa.RecordBatch],
    rows: Accumulator[int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """mapInArrow adapter: ``binaryFile`` rows → one JSON :class:`TaskReport` per supported input
    file.

    Each file is read, screened and written by ``spcl.filter.task.screen_bytes`` inside the task
    (batches of ``spark.batch_rows`` records); its record count is added to ``rows`` (the driver's
    progress line) when given.
    """
    ctx, timing = _worker_context(settings_json)
    batch_rows = ctx.settings.spark.batch_rows
    for path, content in _file_rows(batches):
        if is_supported(path, ctx.settings.input):
            report = screen_bytes(content, path, output, ctx, batch_rows).with_worker(timing)
            if rows is not None:
                rows.add(report.input_records)
            yield pa.RecordBatch.from_pydict({"report": [report.to_json()]}, schema=REPORT_SCHEMA)


def screen_paths_partition(
    settings_json: str, output: str, paths: Iterator[str], rows: Accumulator[int] | None = None
) -> Iterator[str]:
    """``mapPartitions`` body for whole local files: each path opened on the worker (a local or
    shared filesystem) and screened by ``spcl.filter.task.screen_file``, as the python engine reads
    a file that is not split; a file that cannot be opened becomes one quarantine row naming it. One
    JSON report per file."""
    ctx, timing = _worker_context(settings_json)
    batch_rows = ctx.settings.spark.batch_rows
    for path in paths:
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below; an unopenable file is quarantined
        except OSError as err:
            report = screen_unopenable(path, f"unreadable_file:{type(err).__name__}", output, ctx)
        else:
            with fh:
                report = screen_file(fh, path, output, ctx, batch_rows=batch_rows)
        if rows is not None:
            rows.add(report.input_records)
        yield report.with_worker(timing).to_json()


def screen_splits_partition(
    settings_json: str,
    output: str,
    items: Iterator[tuple[str, int, int, int]],
    rows: Accumulator[int] | None = None,
) -> Iterator[str]:
    """``mapPartitions`` body for byte ranges: each ``(source, start, end, index)`` opened by path
    on the worker (a local or shared filesystem) and screened by ``spcl.filter.task.screen_split``;
    one JSON report each."""
    ctx, timing = _worker_context(settings_json)
    for source, start, end, index in items:
        with open(source, "rb") as fh:
            report = screen_split(
                fh,
                Split(source, start, end, index),
                output,
                ctx,
                batch_rows=ctx.settings.spark.batch_rows,
            )
        if rows is not None:
            rows.add(report.input_records)
        yield report.with_worker(timing).to_json()
