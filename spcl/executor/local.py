"""The local executor: every unit of a stage in this process, one worker set up once."""

from __future__ import annotations

import time
from typing import Any, TypeVar

from spcl.executor.lock import stage_lock
from spcl.executor.stage import RunInfo, Stage, UnitReport
from spcl.progress import Progress

C = TypeVar("C")
W = TypeVar("W")
R = TypeVar("R")


def run_local(stage: Stage[C, W, R], cfg: C, clients: dict[str, Any] | None = None) -> R:
    """Plan, set up one worker (``clients`` passed to it), process every unit to do, finish; returns
    the stage's metrics. The worker is torn down even when a unit fails."""
    started = time.perf_counter()
    cfg = stage.prepare(cfg)
    with stage_lock(stage, cfg):
        return _run(stage, cfg, clients, started)


def _run(stage: Stage[C, W, R], cfg: C, clients: dict[str, Any] | None, started: float) -> R:
    """:func:`run_local` once the output's run lock is held."""
    plan = stage.plan(cfg)
    stage.before(cfg, plan, "python")
    reports: list[UnitReport] = []
    worker: W | None = None
    if plan.todo or stage.setup_when_idle:
        worker = stage.setup(cfg, dict(clients or {}))
    try:
        if worker is not None and plan.todo:
            stage.check(worker)  # an unreachable endpoint stops the job before any unit is touched
            with Progress(
                stage.name, total=stage.progress_total(plan), total_work=stage.progress_work(plan)
            ) as bar:
                for unit in plan.todo:
                    reports.append(stage.process(worker, unit, bar))
        run = RunInfo(
            "python",
            len(plan.todo),
            plan.skipped,
            sum(r.records for r in reports),
            round(time.perf_counter() - started, 3),
            reports,
        )
        return stage.finish(cfg, plan, run, worker)
    finally:
        if worker is not None:
            stage.teardown(worker)
