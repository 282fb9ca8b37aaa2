"""One task of the filter job: one input file in, its screened rows written, a small report out.

The plain engine calls :func:`screen_file` in a loop; Spark calls it from ``mapInArrow`` over the
``binaryFile`` rows. The report holds counts and file hashes only — never text or values — and is the
only thing that travels back to the driver.
"""

from __future__ import annotations

import io
import time
from collections import Counter
from collections.abc import Callable
from typing import IO, Any

from spcl.filter.batch import FilterContext, process_batch
from spcl.filter.stats import batch_stats, merge_stats
from spcl.io.readers import count_range_records, count_records, read_jsonl_range, read_records, unopenable_file
from spcl.io.splits import Split
from spcl.io.writers import PartitionWriter, file_key


def screen_file(
    fh: IO[bytes], source: str, output: str, ctx: FilterContext, on_batch: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Read, screen and write every record of one seekable input file; return its report.

    ``on_batch`` (e.g. a progress bar) is told the row count of each batch written.

    Report keys: ``source``; ``split`` (the range index, ``None`` for a whole file); ``input_records``
    (counted by a separate pass that does not parse records, for the reconciliation); ``stats``
    (``spcl.filter.stats`` counters of the rows written); ``files`` (each written file's path, rows, SHA-256 and
    size); ``seconds`` spent in the task. ``source`` must be the canonical source
    (``spcl.io.inputs.canonical_source``) so ids and row keys match across engines.
    """
    return screen_split(fh, Split(source), output, ctx, on_batch)


def screen_split(
    fh: IO[bytes], split: Split, output: str, ctx: FilterContext, on_batch: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """:func:`screen_file` over one unit of work: a whole file, or a byte range of a plain JSONL file
    (``spcl.io.splits``; its outputs are named by the range, so a retried range rewrites the same files)."""
    started = time.perf_counter()
    settings = ctx.settings
    writer = PartitionWriter(output, split.key, settings.output.compression)
    if split.end is None:
        records = read_records(fh, split.source, settings.input, settings.spark.batch_rows)
    else:
        records = read_jsonl_range(fh, split.source, settings.input, split.start, split.end,
                                   settings.spark.batch_rows)
    parts = []
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
        input_records = count_range_records(fh, split.start, split.end)
    return {
        "source": split.source,
        "split": split.index,
        "input_records": input_records,
        "seconds": round(time.perf_counter() - started, 4),
        "stats": {k: dict(v) for k, v in merge_stats(parts).items()},
        "files": [f.as_dict() for f in files],
    }


def screen_bytes(content: bytes, source: str, output: str, ctx: FilterContext) -> dict[str, Any]:
    """:func:`screen_file` over a file's bytes (what Spark's ``binaryFile`` source hands a worker)."""
    return screen_file(io.BytesIO(content), source, output, ctx)


def screen_unopenable(source: str, reason: str, output: str, ctx: FilterContext) -> dict[str, Any]:
    """The report of a file that could not be opened or listed: one quarantine row naming it."""
    started = time.perf_counter()
    writer = PartitionWriter(output, file_key(source), ctx.settings.output.compression)
    screened = process_batch(unopenable_file(source, reason), ctx)
    writer.write(screened)
    files = writer.close()
    return {
        "source": source,
        "split": None,
        "input_records": 1,
        "seconds": round(time.perf_counter() - started, 4),
        "stats": {k: dict(v) for k, v in batch_stats(screened).items()},
        "files": [f.as_dict() for f in files],
    }
