"""A real Spark standalone cluster on 127.0.0.1, started from the installed pyspark (benchmarks and
tests).

One ``org.apache.spark.deploy.master.Master`` and N ``org.apache.spark.deploy.worker.Worker``
processes, each started by pyspark's own ``bin/spark-class`` in a process group of its own, so
:meth:`StandaloneCluster.stop` ends every process the cluster started (the executors and their
Python workers included). Ports are free ones chosen at start; logs and work folders stay under the
given folder.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

JAVA_OPTS = "-XX:TieredStopAtLevel=1"
"""The daemons' JIT setting: the quick C1 compiler only (their start-up on two cores; what jobs
compute is the same)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_class() -> Path:
    """The installed pyspark's ``bin/spark-class``."""
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


@dataclass
class StandaloneCluster:
    """A running master and its workers; ``url`` is what ``--master`` takes."""

    root: Path
    url: str
    ui_port: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def alive_workers(self) -> int:
        """Workers the master lists as ALIVE (0 while its web UI does not answer)."""
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.ui_port}/json/", timeout=2
            ) as resp:
                state = json.loads(resp.read())
        except (OSError, ValueError):
            return 0
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def worker_pids(self) -> list[int]:
        """Process ids of the worker daemons (their executors and Python workers are their
        descendants)."""
        return [p.pid for p in self.processes[1:]]

    def stop(self) -> None:
        """End every process the cluster started: SIGTERM to each process group, SIGKILL after 10
        s."""
        for p in reversed(self.processes):
            _signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for p in reversed(self.processes):
            with suppress(subprocess.TimeoutExpired):
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
            # the group's other members (executors) too, if any remain
            _signal_group(p, signal.SIGKILL)
            p.wait()


def _signal_group(p: subprocess.Popen[bytes], sig: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(p.pid, sig)


def _daemon(root: Path, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    # the log is owned by the process, closed with the file table
    log = open(root / f"{name}.log", "wb")  # noqa: SIM115
    return subprocess.Popen(
        [str(spark_class()), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )


def start_cluster(
    root: Path, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 120.0
) -> StandaloneCluster:
    """Start a master and ``workers`` workers (``cores`` cores and ``memory`` each) and wait until
    all are registered; on failure or timeout everything started is stopped and ``RuntimeError``
    names the log folder."""
    root.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_JAVA_OPTS": JAVA_OPTS,
        "SPARK_LOG_DIR": str(root),
        "SPARK_WORKER_DIR": str(root / "work"),
    }
    env.pop("SPARK_HOME", None)  # spark-class finds the installed pyspark's own
    port, ui = free_port(), free_port()
    cluster = StandaloneCluster(root, f"spark://127.0.0.1:{port}", ui)
    try:
        cluster.processes.append(
            _daemon(
                root,
                "master",
                [
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui),
                ],
                env,
            )
        )
        for i in range(workers):
            cluster.processes.append(
                _daemon(
                    root,
                    f"worker-{i}",
                    [
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        "127.0.0.1",
                        "--webui-port",
                        str(free_port()),
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--work-dir",
                        str(root / f"work-{i}"),
                        cluster.url,
                    ],
                    env,
                )
            )
        deadline = time.monotonic() + timeout
        while cluster.alive_workers() < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in cluster.processes):
                raise RuntimeError(f"the standalone cluster did not start (logs under {root})")
            time.sleep(0.3)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@contextmanager
def standalone_cluster(
    root: Path, workers: int = 2, cores: int = 1, memory: str = "1g"
) -> Iterator[StandaloneCluster]:
    """:func:`start_cluster`, stopped on leaving the block (also on an error)."""
    cluster = start_cluster(root, workers, cores, memory)
    try:
        yield cluster
    finally:
        cluster.stop()
