"""Start-up of cold Spark filter runs, two source trees interleaved (before / after a change).

    python tools/bench_startup_ab.py --before /path/to/main --after . --docs 3000 --repeat 3

Each run is a fresh interpreter with ``PYTHONPATH`` set to one tree (no bytecode written there),
screening the same small real-text input (``spcl.bench.filter.make_bench_corpus``; start-up
dominates), on Spark local[2] and then on a 1-worker standalone cluster on 127.0.0.1
(``spcl.bench.cluster``). Per run it prints one JSON line: wall seconds, CPU seconds of the driver's
process tree by role (driver Python, JVM, pyspark's Python workers; on the cluster also the
executor, sampled from the worker's process tree) and the run's ``startup_seconds``. The child uses
only ``spcl.filter.job.run_filter``, so it runs on trees older than the start-up work too; medians
per configuration and tree at the end. Numbers are printed, never asserted (a benchmark, not a
test).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from spcl.bench.cluster import standalone_cluster
from spcl.bench.filter import make_bench_corpus
from spcl.bench.processes import ClusterMemory

CHILD = r"""
import json, sys, time
import psutil
from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter

def tree():
    split = {"driver": 0.0, "jvm": 0.0, "python workers": 0.0}
    me = psutil.Process()
    for p in (me, *me.children(recursive=True)):
        try:
            t, cmd = p.cpu_times(), " ".join(p.cmdline())
        except psutil.Error:
            continue
        role = ("driver" if p.pid == me.pid else "jvm" if "java" in cmd.split(" ", 1)[0] else
                "python workers" if "daemon" in cmd or "pyspark.worker" in cmd else "driver")
        split[role] += t.user + t.system + t.children_user + t.children_system
    return {k: round(v, 2) for k, v in split.items()}

a = json.loads(sys.argv[1])
stats = run_filter(FilterJob(tuple(a[0]), a[1],
                             load_settings(overrides={"screen.enabled": True}), "spark", a[2],
                             overwrite=True))
print("RESULT " + json.dumps({"wall": round(time.time() - psutil.Process().create_time(), 2),
                              "cpu": tree(), "startup": stats.get("startup_seconds", {})}))
"""


def cold_run(
    tree: str, inputs: list[str], output: str, master: str, worker_pids: list[int] | None
) -> dict[str, Any]:
    """One cold run of ``tree``'s filter on ``master``; the executor's CPU sampled when
    ``worker_pids`` are given."""
    env = {
        **os.environ,
        "PYTHONPATH": tree,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYSPARK_PYTHON": sys.executable,
    }
    monitor = ClusterMemory(worker_pids) if worker_pids else None
    if monitor:
        monitor.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps([inputs, output, master])],
            capture_output=True,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
        )
    finally:
        if monitor:
            monitor.stop()
    if proc.returncode:
        raise RuntimeError(f"run failed ({tree}, {master}): {proc.stderr[-1500:]}")
    run = json.loads(
        next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))[len("RESULT ") :]
    )
    if monitor:
        run["cpu"]["executor"] = round(monitor.cpu_seconds, 2)
        run["peak_executor_mb"] = round(monitor.peak_executor_mb)
    run["cpu_total"] = round(sum(run["cpu"].values()), 2)
    return run


def main() -> int:
    """Parse the arguments, run the interleaved pairs, print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", required=True, help="source tree of the 'before' runs (its PYTHONPATH)"
    )
    parser.add_argument("--after", required=True, help="source tree of the 'after' runs")
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument(
        "--repeat", type=int, default=3, help="interleaved pairs per configuration (default 3)"
    )
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="spcl-startup-ab-"))
    inputs = make_bench_corpus(root / "input", args.docs, 1)
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def pairs(name: str, master: str, pids: list[int] | None) -> None:
        for _ in range(args.repeat):
            for version, tree in trees.items():
                run = cold_run(tree, inputs, str(root / f"out-{version}"), master, pids)
                runs.setdefault((name, version), []).append(run)
                print(name, version, json.dumps(run), f"load {os.getloadavg()[0]:.1f}", flush=True)

    pairs("local[2]", "local[2]", None)
    with standalone_cluster(root / "cluster", workers=1) as cluster:
        pairs("cluster1", cluster.url, cluster.worker_pids())
    print("\nmedians:")
    for (name, version), rs in runs.items():
        cpu = {k: statistics.median(r["cpu"].get(k, 0.0) for r in rs) for k in rs[0]["cpu"]}
        parts = ", ".join(f"{k} {v:.1f}" for k, v in cpu.items())
        print(
            f"  {name:9s} {version:6s}: wall {statistics.median(r['wall'] for r in rs):6.1f} s, CPU"
            f" {statistics.median(r['cpu_total'] for r in rs):5.1f} s ({parts})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
