"""Progress of a Spark job on the driver's terminal: tasks (input files or ranges) done and rows
screened.

Spark's own console bar is off (``spark.ui.showConsoleProgress``); this draws the same
``spcl.progress.Progress`` line as the python engine — counts only, on stderr, when it is a TTY or
``SPCL_PROGRESS=1`` — from Spark's status tracker (tasks of the jobs in one job group) and an
accumulator the tasks add their rows to (rows of
finished tasks)::

    with SparkProgress(spark, "filter") as progress:
        rdd.mapPartitions(partial(body, rows=progress.rows)).collect()
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from typing import Any

from spcl.progress import Progress


class SparkProgress:
    """Polls the jobs started inside the ``with`` block (their job group) every ``interval``
    seconds and redraws."""

    def __init__(
        self, spark: Any, label: str, *, interval: float = 0.5, enabled: bool | None = None
    ) -> None:
        self.sc = spark.sparkContext
        self.label = label
        self.bar = Progress(label, total_work=1.0, enabled=enabled)
        self.rows = self.sc.accumulator(0) if self.bar.enabled else None
        """An accumulator for the tasks' row counts (``None`` when no bar is drawn: nothing to
        add)."""
        self.interval = interval
        self.group = f"spcl-{label}-{secrets.token_hex(4)}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tasks(self) -> tuple[int, int]:
        """``(completed, total)`` tasks over the stages of this group's jobs so far."""
        tracker = self.sc.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else ():
                stage = tracker.getStageInfo(stage_id)
                if stage:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
        return done, total

    def poll(self) -> None:
        """Redraw the bar from the tracker and the row accumulator."""
        done, total = self.tasks()
        self.bar.label = f"{self.label}  {done}/{total} files"
        self.bar.update(
            int(self.rows.value) if self.rows is not None else 0,
            work=done / total if total else 0.0,
        )

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # the session is stopping: the final poll below or nothing
                return

    def __enter__(self) -> SparkProgress:
        self.sc.setJobGroup(self.group, f"spcl {self.label}")
        if self.bar.enabled:
            self._thread = threading.Thread(
                target=self._run, name=f"{self.group}-progress", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            with contextlib.suppress(Exception):  # the session is stopping
                self.poll()
        self.bar.close()
        self.sc.setLocalProperty("spark.jobGroup.id", None)
