"""Issue 26: ``spcl filter --master spark://…`` on a real standalone cluster (a Master and two
1-core Workers on 127.0.0.1, started from the installed pyspark) writes the in-process engine's
rows, reconciles, and every process the cluster started is gone afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from spcl.bench.cluster import StandaloneCluster, start_cluster
from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter
from spcl.io.outputs import output_dataset
from tests.support.paths import SAMPLE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A master and two workers (1 core, 1 GB each); stopped by the finalizer, also when a test
    fails."""
    started = start_cluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g")
    pids = [p.pid for p in started.processes]
    try:
        yield started
    finally:
        started.stop()
        left = [
            pid
            for pid in pids
            if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"
        ]
        assert not left, f"cluster processes still running: {left}"


def _rows(out: Path) -> list[dict]:
    return sorted(output_dataset(out).to_table().to_pylist(), key=lambda r: r["row_key"])


# the job starts once both executors registered, so both run tasks (the scheduler's default starts
# at once)
CONF = """spark:
  conf:
    spark.scheduler.minRegisteredResourcesRatio: "1.0"
    spark.scheduler.maxRegisteredResourcesWaitingTime: "60s"
"""


def test_filter_on_a_standalone_cluster_equals_the_python_engine(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    assert cluster.alive_workers() == 2
    conf = tmp_path / "cluster.yaml"
    conf.write_text(CONF)
    out = tmp_path / "cluster-out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "filter",
            "--input",
            str(SAMPLE),
            "--output",
            str(out),
            "--master",
            cluster.url,
            "--conf",
            str(conf),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    stats = json.loads((out / "stats.json").read_text())
    rec = stats["reconciliation"]
    assert rec["ok"] and rec["input_records"] == sum(stats["counts"].values()) > 0
    assert stats["master"] == cluster.url and stats["engine"] == "spark"
    assert stats["startup_seconds"]["python_workers"] >= 2, "both workers' executors ran tasks"
    # each executor's Python workers forked warm from spcl's preloading daemon (spcl.spark.daemon)
    assert (
        stats["startup_seconds"]["preloaded_workers"] == stats["startup_seconds"]["python_workers"]
    )

    expected_out = tmp_path / "python-out"
    expected = run_filter(
        FilterJob((str(SAMPLE),), str(expected_out), load_settings(str(conf)), "python")
    )
    assert stats["counts"] == expected["counts"]
    assert _rows(out) == _rows(expected_out)  # every column, row by row
