"""One task of the filter job: one input file in, its screened rows written, a small report out.

The plain engine calls :func:`screen_file` in a loop; Spark calls it from ``mapInArrow`` over the
``binaryFile`` rows. The report (:class:`TaskReport`) holds counts and file hashes only — never text
or values — and is the only thing that travels back to the driver.
"""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import IO, Any

from spcl.filter.batch import FilterContext, process_batch
from spcl.filter.stats import batch_stats, merge_stats
from spcl.io.readers import count_range_records, count_records, read_jsonl_range, read_records
from spcl.io.record_rows import unopenable_file
from spcl.io.splits import Split
from spcl.io.writers import PartitionWriter, WrittenFile, file_key

DEFAULT_BATCH_ROWS = 2000
"""Records per Arrow batch read from an input file when the engine names no other size."""


@dataclass(frozen=True)
class WorkerTiming:
    """Where a Spark task's Python worker spent its start-up (wall-clock epoch seconds; no values).

    ``started_at``: when the Python worker process started (forked by pyspark's daemon);
    ``import_seconds``: importing the adapter module (and spcl's screen code with it) in this
    worker, once per worker; ``setup_seconds``: building the detectors and model when this task was
    the worker's first (0 when reused); ``entered_at``: when the task's body started, after both.
    """

    pid: int
    started_at: float
    imported_at: float
    import_seconds: float
    entered_at: float
    setup_seconds: float


@dataclass(frozen=True)
class TaskReport:
    """What one task sends back to the driver: counts, the files it wrote and its time; never text
    or values.

    ``split`` is the byte range's index (``None`` for a whole file); ``input_records`` is counted by
    a separate pass that does not parse records (for the reconciliation); ``stats`` holds
    ``spcl.filter.stats`` counters of the rows written; ``worker`` is set by the Spark engine only.
    """

    source: str
    split: int | None
    input_records: int
    seconds: float
    stats: dict[str, dict[str, int]]
    files: tuple[WrittenFile, ...]
    worker: WorkerTiming | None = None

    def with_worker(self, worker: WorkerTiming) -> TaskReport:
        """This report with the worker's start-up timings attached."""
        return replace(self, worker=worker)

    def to_json(self) -> str:
        """One JSON line (what travels from a Spark worker)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, line: str) -> TaskReport:
        """The report :meth:`to_json` wrote."""
        raw = json.loads(line)
        worker = raw.pop("worker")
        return cls(
            **{
                **raw,
                "files": tuple(WrittenFile(**f) for f in raw["files"]),
                "worker": WorkerTiming(**worker) if worker else None,
            }
        )


def screen_file(
    fh: IO[bytes],
    source: str,
    output: str,
    ctx: FilterContext,
    on_batch: Callable[[int], None] | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> TaskReport:
    """Read (``batch_rows`` records per batch), screen and write every record of one seekable input
    file; return its report.

    ``on_batch`` (e.g. a progress bar) is told the row count of each batch written. ``source`` must
    be the canonical source (``spcl.io.inputs.canonical_source``) so ids and row keys match across
    engines.
    """
    return screen_split(fh, Split(source), output, ctx, on_batch, batch_rows)


def screen_split(
    fh: IO[bytes],
    split: Split,
    output: str,
    ctx: FilterContext,
    on_batch: Callable[[int], None] | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> TaskReport:
    """:func:`screen_file` over one unit of work: a whole file, or a byte range of a plain JSONL
    file (``spcl.io.splits``; its outputs are named by the range, so a retried range rewrites the
    same files)."""
    started = time.perf_counter()
    settings = ctx.settings
    writer = PartitionWriter(output, split.key, settings.output.compression)
    if split.end is None:
        records = read_records(fh, split.source, settings.input, batch_rows)
    else:
        records = read_jsonl_range(
            fh, split.source, settings.input, split.start, split.end, batch_rows
        )
    parts: list[Any] = []
    for batch in records:
        parts.append({"id_note": Counter(n for n in batch.column("id_note").to_pylist() if n)})
        screened = process_batch(batch, ctx)
        parts.append(batch_stats(screened))
        writer.write(screened)
        if on_batch is not None:
            on_batch(screened.num_rows)
    files = writer.close()
    fh.seek(0)
    if split.end is None:
        input_records = count_records(fh, split.source, settings.input)
    else:
        input_records = count_range_records(
            fh, split.start, split.end, settings.input.max_record_bytes
        )
    return TaskReport(
        split.source,
        split.index,
        input_records,
        round(time.perf_counter() - started, 4),
        {k: dict(v) for k, v in merge_stats(parts).items()},
        tuple(files),
    )


def screen_bytes(
    content: bytes,
    source: str,
    output: str,
    ctx: FilterContext,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> TaskReport:
    """:func:`screen_file` over a file's bytes (what Spark's ``binaryFile`` source hands a
    worker)."""
    return screen_file(io.BytesIO(content), source, output, ctx, batch_rows=batch_rows)


def screen_unopenable(source: str, reason: str, output: str, ctx: FilterContext) -> TaskReport:
    """The report of a file that could not be opened or listed: one quarantine row naming it."""
    started = time.perf_counter()
    writer = PartitionWriter(output, file_key(source), ctx.settings.output.compression)
    screened = process_batch(unopenable_file(source, reason), ctx)
    writer.write(screened)
    files = writer.close()
    return TaskReport(
        source,
        None,
        1,
        round(time.perf_counter() - started, 4),
        {k: dict(v) for k, v in batch_stats(screened).items()},
        tuple(files),
    )
