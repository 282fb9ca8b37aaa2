"""What the filter stage shares on the driver: the job, its errors, path, output and model checks,
local reading.

The stage (``spcl.filter.job.FilterStage``) lists the inputs, checks the paths and the model card
once, prepares the output, and runs on the executor layer (``spcl.executor``); these are its pieces.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from spcl import errors
from spcl.config import Settings
from spcl.executor.errors import JobError as ExecutorJobError
from spcl.filter.batch import FilterContext, build_context, resolve_model_path
from spcl.filter.task import DEFAULT_BATCH_ROWS, TaskReport, screen_split, screen_unopenable
from spcl.io.inputs import Listing, UnsafeOutput, check_output, list_local_inputs
from spcl.io.outputs import clear_filter_output, foreign_entries
from spcl.io.readers import is_splittable, is_supported
from spcl.io.splits import Split, plan_splits
from spcl.io.storage import filesystem, is_existing_file, is_nonempty_dir, join
from spcl.messages import shown
from spcl.progress import Progress
from spcl.resources import shipped_locations
from spcl.screen.artifact import read_artifact

log = logging.getLogger("spcl.filter.job")


class JobError(ExecutorJobError):
    """The filter cannot start or did not reconcile; the message says why (never with record
    values)."""


class UsageError(errors.UsageError, JobError):
    """The command asks for something unsafe or impossible (exit 2): an output that is a file, or
    one that equals, contains or lies inside an input."""


@dataclass(frozen=True)
class FilterJob:
    """One run of the filter: inputs (files, directories, globs or URLs), output folder, settings.

    ``engine`` names the engine (``spark`` or ``python``); ``master`` is the Spark master (``None``:
    the config's, or under ``spark-submit`` with ``submitted_master`` the one spark-submit was
    given).
    """

    inputs: tuple[str, ...]
    output: str
    settings: Settings
    engine: str = "spark"
    master: str | None = None
    overwrite: bool = False
    submitted_master: bool = False


@contextmanager
def stage(timings: dict[str, float], name: str) -> Iterator[None]:
    """Time the block into ``timings[name]`` (seconds, logged)."""
    started = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - started, 3)
    log.info("stage %s: %.1f s", name, timings[name])


def no_inputs(inputs: tuple[str, ...]) -> JobError:
    """The error of a run that found no readable input file."""
    return JobError(
        f"no readable input files (.jsonl[.gz|.zst], .ndjson, .json, .parquet) in {list(inputs)}"
    )


def split_supported(listing: Listing, settings: Settings) -> tuple[list[str], dict[str, str]]:
    """The listed files spcl reads, and the others with the reason they are skipped."""
    skipped = dict(listing.skipped)
    files = []
    for f in listing.files:
        if is_supported(f, settings.input):
            files.append(f)
        else:
            skipped[f] = "unsupported_extension"
    return files, skipped


def check_paths(inputs: tuple[str, ...], output: str, files: list[str]) -> None:
    """Refuse an output that is a file, or that equals, contains or lies inside an input (exit
    2)."""
    if is_existing_file(output):
        raise UsageError(f"output {output} is an existing file, not a folder")
    try:
        check_output(inputs, output, files)
    except UnsafeOutput as err:
        raise UsageError(str(err)) from None


def check_output_state(output: str, overwrite: bool) -> None:
    """Refuse (exit 2, nothing touched) an existing non-empty output without ``overwrite``, and with
    it one that holds anything a filter run did not write (``spcl.io.outputs.foreign_entries``)."""
    if not is_nonempty_dir(output):
        return
    if not overwrite:
        raise UsageError(
            f"output {output} already exists and is not empty; pass --overwrite to replace it"
        )
    foreign = foreign_entries(output)
    if foreign:
        raise UsageError(
            f"output {output} holds {len(foreign)} path(s) a filter run did not write (e.g."
            f" {shown(foreign[0])}): refusing to --overwrite it; move them away or choose another"
            " output"
        )


def prepare_output(output: str, overwrite: bool) -> None:
    """Check the output again (:func:`check_output_state`) and empty it of a previous filter
    run's files."""
    check_output_state(output, overwrite)
    try:
        clear_filter_output(output)
    except ValueError as err:  # something appeared since the check
        raise UsageError(str(err)) from None


def list_local_inputs_or_fail(inputs: tuple[str, ...]) -> Listing:
    """``spcl.io.inputs.list_local_inputs``, with a missing input as a :class:`JobError`."""
    try:
        return list_local_inputs(inputs)
    except FileNotFoundError as err:
        raise JobError(str(err)) from None


def model_problem(settings: Settings) -> str | None:
    """Why the configured screen model cannot be loaded (one line, on the driver), or ``None`` when
    it can.

    The artifact's card, format and file digests are checked
    (``spcl.screen.artifact.read_artifact``); the model itself is built once, where it runs (the
    python engine's worker, or each Spark Python worker).
    """
    if not settings.screen.enabled:
        return None
    path = resolve_model_path(settings.screen.model)
    if not path.exists():
        tried = ", ".join(str(p) for p in [path, *shipped_locations(settings.screen.model)[:2]])
        return (
            f"screen model {settings.screen.model!r} not found (tried {tried}); pass --model DIR, "
            "set screen.model in the config, or --no-screen"
        )
    try:
        read_artifact(path)
    except Exception as err:  # a broken artifact: say which, never a traceback
        return f"screen model {path} cannot be loaded: {type(err).__name__}: {str(err)[:200]}"
    return None


def load_context(job: FilterJob) -> FilterContext:
    """Detectors and model for ``job``, loaded once; a model that cannot be loaded is a
    :class:`UsageError`."""
    try:
        return build_context(job.settings)
    except Exception as err:  # a broken artifact: say which, never a traceback or a value
        raise UsageError(
            f"the screen model cannot be loaded: {type(err).__name__}: {str(err)[:200]}"
        ) from None


def file_size(path: str) -> int:
    """The size of a local file (0 when it cannot be read)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def local_splits(fh: IO[bytes], path: str, settings: Settings) -> list[Split]:
    """The units of work of one open local file (``spcl.io.splits.plan_splits``)."""
    size = os.fstat(fh.fileno()).st_size
    split_bytes = settings.input.split_bytes
    splittable = size > split_bytes > 0 and is_splittable(fh, path, settings.input)
    fh.seek(0)
    return plan_splits(path, size, splittable, split_bytes)


def screen_local(
    path: str,
    output: str,
    ctx: FilterContext,
    bar: Progress | None = None,
    before: int = 0,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> list[TaskReport]:
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

        return [
            screen_split(fh, split, output, ctx, on_batch, batch_rows=batch_rows)
            for split in local_splits(fh, path, ctx.settings)
        ]


def duplicate_ids_arrow(output: str, relative_paths: list[str]) -> int:
    """Rows whose id an earlier row already had (rows minus distinct ids), over the written files
    (pyarrow)."""
    import pyarrow.compute as pc

    # imports pandas (≈ 1 s): kept off the Spark workers' import path
    import pyarrow.dataset as pads

    paths = sorted({join(output, p) for p in relative_paths})
    if not paths:
        return 0
    fs, _ = filesystem(output)
    ids = (
        pads.dataset([filesystem(p)[1] for p in paths], format="parquet", filesystem=fs)
        .to_table(columns=["id"])
        .column("id")
    )
    return len(ids) - pc.count_distinct(ids).as_py()
