"""The filter benchmark on a real standalone cluster (``spcl bench filter --cluster``): 1 and then 2
single-core workers on 127.0.0.1, whole cold runs on each, the scale-out ratio and the peak memory
of a worker."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from spcl.bench.cluster import standalone_cluster
from spcl.bench.filter_runs import cold_run
from spcl.bench.marginal import ColdRun, cpu_line, marginal, print_split, startup_split
from spcl.bench.processes import ClusterMemory

GOAL_SCALE_OUT = 1.8
"""Two single-core workers vs one, marginal throughput."""


def _cluster_run(
    cluster: Any, inputs: list[str], output: str, screen: bool, peaks: dict[str, float]
) -> ColdRun:
    """One cold run on ``cluster``; its CPU seconds include the executors' and their Python workers'
    (a new executor per run), and ``peaks`` keeps the largest worker memory seen."""
    monitor = ClusterMemory(cluster.worker_pids())
    monitor.start()
    try:
        run = cold_run(inputs, output, screen, "spark", cluster.url)
    finally:
        monitor.stop()
    peaks["python"] = max(peaks["python"], monitor.peak_python_mb)
    peaks["executor"] = max(peaks["executor"], monitor.peak_executor_mb)
    return {
        **run,
        "cpu": run["cpu"] + monitor.cpu_seconds,
        "cpu_split": {
            **run.get("cpu_split", {}),
            "executors (JVM + Python)": round(monitor.cpu_seconds, 2),
        },
    }


def run_cluster_bench(
    root: Path, inputs: list[str], small_inputs: list[str], screen: bool, repeat: int
) -> dict[str, Any]:
    """A standalone cluster (``spcl.bench.cluster``) of 1 and then 2 single-core workers: marginal
    throughput, fixed start-up per run, the scale-out ratio and the peak memory of a worker's
    executor."""
    print(
        "\nstandalone cluster on 127.0.0.1 (Master + N Workers of 1 core, 1 GB; spcl filter"
        " --master spark://…):"
    )
    out: dict[str, Any] = {}
    for workers in (1, 2):
        peaks = {"python": 0.0, "executor": 0.0}
        with standalone_cluster(root / f"cluster-{workers}", workers=workers) as c:
            small, large = [], []
            for _ in range(repeat):
                small.append(
                    _cluster_run(
                        c, small_inputs, str(root / f"out-cluster{workers}-small"), screen, peaks
                    )
                )
                large.append(
                    _cluster_run(
                        c, inputs, str(root / f"out-cluster{workers}-large"), screen, peaks
                    )
                )
        m: dict[str, Any] = dict(marginal(small, large, workers))
        m.update(
            peak_worker_python_mb=peaks["python"],
            peak_worker_executor_mb=peaks["executor"],
            startup_split=startup_split(small),
        )
        out[f"{workers} worker(s)"] = m
        print(
            f"  {workers} worker(s): {m['docs_per_s_per_core'] * workers:7.0f} docs/s marginal"
            f" ({m['docs_per_s_per_core']:.0f} per core), fixed start-up {m['startup_s']:5.1f} s,"
            f" peak per worker: Python {m['peak_worker_python_mb']:.0f} MB, executor JVM + Python"
            f" {m['peak_worker_executor_mb']:.0f} MB" + cpu_line(m)
        )
        print_split(f"start-up split, {workers} worker(s)", m["startup_split"])
    one, two = out["1 worker(s)"], out["2 worker(s)"]
    out["scale_out"] = (two["docs_per_s_per_core"] * 2) / one["docs_per_s_per_core"]
    print(
        f"  scale-out 2 workers / 1 worker: {out['scale_out']:.2f}x (goal >= {GOAL_SCALE_OUT}; wall"
        f" time, so only meaningful on a quiet machine: load average now {os.getloadavg()[0]:.2f})"
    )
    return out
