"""The Spark executor: one Spark task per unit, the stage's own worker code on the executors.

A stage that is a :class:`~spcl.executor.stage.SparkReader` (the filter) has Spark read its input
instead: the same flow, with the reader's own task bodies (``mapInArrow`` over Spark's
``binaryFile`` source).

The driver plans and runs the stage's ``before`` checks, ships ``(path, key)`` pairs (one partition
each) with the config as JSON; a Python worker finds the stage by its ``ref``, sets up one worker
per process (kept for the tasks that follow), skips a unit this run already committed, and yields
one JSON report per unit. Paths must be visible to every executor (local mode or a shared
filesystem). A task that fails for good stops the job with the stage's error, naming only the
exception type.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any, TypeVar

from spcl.executor.lock import stage_lock
from spcl.executor.stage import Plan, RunInfo, SparkReader, Stage, UnitReport
from spcl.executor.units import Unit
from spcl.spark import build_session
from spcl.spark.files import run_per_file, with_absolute_paths
from spcl.spark.progress import SparkProgress

C = TypeVar("C")
W = TypeVar("W")
R = TypeVar("R")

_WORKERS: dict[tuple[str, str], Any] = {}


def resolve_stage(ref: str) -> Stage[Any, Any, Any]:
    """The stage object named ``module:attribute``."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def process_partition(ref: str, cfg_json: str, items: Iterable[tuple[str, str]]) -> Iterator[str]:
    """Spark ``mapPartitions`` body: process each ``(path, key)`` with this process's worker of the
    stage ``ref`` (set up on first use); one JSON report per unit this run had not committed yet."""
    stage = resolve_stage(ref)
    worker = _WORKERS.get((ref, cfg_json))
    if worker is None:
        worker = _WORKERS[(ref, cfg_json)] = stage.setup(stage.config_from_json(cfg_json), {})
    for path, key in items:
        unit = Unit(path, key)
        if stage.committed(worker, unit):
            continue  # a retried or speculative task: this run already committed this unit
        yield json.dumps(stage.process(worker, unit).to_dict())


def run_spark(
    stage: Stage[C, W, R], cfg: C, master: str | None = None, submitted: bool = False
) -> R:
    """Plan on the driver, run the stage's units as Spark tasks, finish on the driver; returns the
    metrics.

    ``master``: the Spark master (default the config's); ``submitted``: running under spark-submit,
    whose master is kept unless ``master`` is given. A :class:`~spcl.executor.stage.SparkReader`
    stage has Spark read its input (its own tasks, e.g. ``mapInArrow``); any other stage gets one
    task per unit.
    """

    started = time.perf_counter()
    reader = stage if isinstance(stage, SparkReader) else None
    cfg = stage.prepare(with_absolute_paths(cfg, stage.path_fields))
    with stage_lock(stage, cfg):  # the driver holds the output's run lock for the whole run
        return _run(stage, reader, cfg, master, submitted, started)


def _run(
    stage: Stage[C, W, R],
    reader: SparkReader[C] | None,
    cfg: C,
    master: str | None,
    submitted: bool,
    started: float,
) -> R:
    """:func:`run_spark` once the output's run lock is held."""
    plan = stage.plan(cfg)
    stage.before(cfg, plan, "spark")
    reports: list[Any] = []
    timings: dict[str, float] = {}
    spark = tasks_started = None
    # a reader's plan may still lack the inputs only Spark lists
    if plan.todo or reader is not None:
        session_started = time.perf_counter()
        spark = build_session(
            reader.spark_settings(cfg) if reader is not None else None,
            master,
            app_name=f"spcl-{stage.name}",
            submitted=submitted,
            preload=reader.spark_preload(cfg) if reader is not None else (),
        )
        timings["session"] = round(time.perf_counter() - session_started, 3)
        if reader is not None:
            plan = reader.spark_plan(spark, cfg, plan)
        tasks_started = time.time()
        reports = (
            _read_with_spark(reader, stage.name, spark, cfg, plan)
            if reader is not None
            else _per_unit(stage, spark, cfg, plan)
        )
    run = RunInfo(
        "spark",
        len(plan.todo),
        plan.skipped,
        sum(r.records for r in reports),
        round(time.perf_counter() - started, 3),
        reports,
        spark,
        timings,
        tasks_started,
    )
    return stage.finish(cfg, plan, run, None)


def _per_unit(stage: Stage[C, W, Any], spark: Any, cfg: C, plan: Plan) -> list[UnitReport]:
    """One Spark task per unit to do (``process_partition``); a task that failed for good is the
    stage's error."""
    if not plan.todo:
        return []
    try:
        lines = run_per_file(
            spark,
            [(u.path, u.key) for u in plan.todo],
            partial(process_partition, stage.ref),
            cfg.to_json(),  # type: ignore[attr-defined]  # C: a job config, all have to_json
        )
    except Exception as err:  # a task failed for good (backend gone): only its type, never its text
        raise stage.error(
            f"the Spark job stopped ({type(err).__name__}); files committed so far are kept, "
            "rerun the same command to resume (the executors' logs say why)"
        ) from None
    return [UnitReport.from_dict(json.loads(line)) for line in lines]


def _read_with_spark(
    reader: SparkReader[C], name: str, spark: Any, cfg: C, plan: Plan
) -> list[Any]:
    """Run the reader's Spark jobs (``mapInArrow`` or ``mapPartitions`` bodies), collect their
    reports, then the units Spark did not read; a progress line on a TTY counts the rows the bodies
    report."""

    reports: list[Any] = []
    with SparkProgress(spark, name) as progress:
        for job in reader.spark_tasks(spark, cfg, plan, progress.rows):
            if job.kind == "arrow":
                lines = [
                    row["report"]
                    for row in job.data.mapInArrow(job.body, "report string").collect()
                ]
            else:
                lines = job.data.mapPartitions(job.body).collect()
            reports += [reader.report_from_json(line) for line in lines]
        reports += reader.spark_leftovers(cfg, plan, reports)
    return reports


__all__ = ["process_partition", "resolve_stage", "run_spark"]
