"""The filter's python engine: every local input file screened in this process, one after another.

For tests, notebooks and small corpora. It reads local files only, builds the detectors and model once, and
reads its batch size from itself, not from the Spark settings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from spcl.filter.driver import (
    FilterJob,
    RunResult,
    UsageError,
    check_paths,
    duplicate_ids_arrow,
    file_size,
    list_local_inputs_or_fail,
    load_context,
    no_inputs,
    prepare_output,
    screen_local,
    split_supported,
    stage,
)
from spcl.filter.task import DEFAULT_BATCH_ROWS
from spcl.io.storage import is_local
from spcl.progress import Progress


@dataclass(frozen=True)
class PythonEngine:
    """Runs every task in this process, ``batch_rows`` records per Arrow batch."""

    batch_rows: int = DEFAULT_BATCH_ROWS
    name: str = "python"

    @property
    def master(self) -> str | None:
        """No Spark master."""
        return None

    def run(self, job: FilterJob) -> RunResult:
        """List, check, prepare, then screen every local file (a progress bar on a TTY)."""
        timings: dict[str, float] = {}
        with stage(timings, "list_inputs"):
            if any(not is_local(i) for i in job.inputs):
                raise UsageError("the python engine reads local files only; use --engine spark for URLs")
            listing = list_local_inputs_or_fail(job.inputs)
            files, skipped = split_supported(listing, job.settings)
            check_paths(job.inputs, job.output, listing.files)
            if not files:
                raise no_inputs(job.inputs)
            prepare_output(job.output, job.overwrite)
        with stage(timings, "screen_and_write"):
            ctx = load_context(job)
            reports = []
            sizes = [file_size(p) for p in files]
            with Progress("filter", total_work=sum(sizes)) as bar:  # a TTY only; ETA from input bytes read
                for path, before in zip(files, itertools.accumulate([0, *sizes]), strict=False):
                    reports += screen_local(path, job.output, ctx, bar, before, self.batch_rows)
        return RunResult(reports, files, skipped, timings, listing.duplicates)

    def duplicate_ids(self, job: FilterJob, relative_paths: list[str]) -> int:
        """Counted with pyarrow (the python engine's output is local)."""
        return duplicate_ids_arrow(job.output, relative_paths)
