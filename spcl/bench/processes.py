"""Where a benchmark's CPU time and memory go: the processes of a run by role (driver, JVM, Python
workers), their CPU seconds, and threads that sample the peak memory of the local workers or of a
cluster's workers.
"""

from __future__ import annotations

import threading
from typing import Any


class WorkerMemory(threading.Thread):
    """Samples the RSS and CPU time of pyspark Python workers and the JVM (children of this process
    tree) until stopped. CPU seconds (user + system, counted from the first sample) do not depend on
    what else the machine runs, unlike wall time: ``cpu_seconds`` is what the job cost."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_worker_mb = 0.0
        self.peak_jvm_mb = 0.0
        self._cpu_first: dict[int, float] = {}
        self._cpu_last: dict[int, float] = {}
        self._stop_event = threading.Event()
        self._first_pass = True

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds the Python workers and the JVM used while sampled."""
        return sum(last - self._cpu_first.get(pid, 0.0) for pid, last in self._cpu_last.items())

    def _sample(self, me: Any) -> None:
        import psutil

        for child in me.children(recursive=True):
            try:
                rss = child.memory_info().rss / 2**20
                cmd = " ".join(child.cmdline())
                times = child.cpu_times()
            except psutil.Error:
                continue
            cpu = times.user + times.system
            if self._first_pass:
                self._cpu_first[child.pid] = cpu
            self._cpu_last[child.pid] = cpu
            if "java" in cmd:
                self.peak_jvm_mb = max(self.peak_jvm_mb, rss)
            elif "pyspark" in cmd or "daemon" in cmd or "python" in cmd:
                self.peak_worker_mb = max(self.peak_worker_mb, rss)
        self._first_pass = False

    def run(self) -> None:
        import psutil

        me = psutil.Process()
        self._sample(me)
        while not self._stop_event.wait(0.2):
            self._sample(me)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def process_role(cmdline: str) -> str:
    """Which part of a Spark run a process of the driver's tree is, by its command line: ``jvm`` (a
    Java process), ``python workers`` (pyspark's daemon or one of its workers) or ``driver``
    (anything else).

    >>> process_role("/usr/bin/java -cp ... org.apache.spark.deploy.SparkSubmit pyspark-shell")
    'jvm'
    >>> process_role("/venv/bin/python -m spcl.spark.daemon")
    'python workers'
    """
    if "java" in cmdline.split(" ", 1)[0]:
        return "jvm"
    if "daemon" in cmdline or "pyspark.worker" in cmdline:
        return "python workers"
    return "driver"


def tree_cpu_split() -> dict[str, float]:
    """CPU seconds (user + system) this process and its live descendants used so far, by
    :func:`process_role` (the driver's Python, the driver JVM, pyspark's Python daemon and workers;
    reaped children counted with their parent): unlike wall time, what a run cost whatever else the
    machine runs."""
    import psutil

    split = {"driver": 0.0, "jvm": 0.0, "python workers": 0.0}
    me = psutil.Process()
    for proc in (me, *me.children(recursive=True)):
        try:
            t, cmd = proc.cpu_times(), " ".join(proc.cmdline())
        except psutil.Error:
            continue
        role = "driver" if proc.pid == me.pid else process_role(cmd)
        split[role] += t.user + t.system + t.children_user + t.children_system
    return {k: round(v, 2) for k, v in split.items()}


def tree_cpu_seconds() -> float:
    """The sum of :func:`tree_cpu_split`."""
    return round(sum(tree_cpu_split().values()), 2)


class ClusterMemory(threading.Thread):
    """Peak RSS of what each standalone worker runs (its executor JVM and Python workers, the worker
    daemon itself excluded), sampled until stopped."""

    def __init__(self, worker_pids: list[int]) -> None:
        super().__init__(daemon=True)
        self.worker_pids = worker_pids
        self.peak_python_mb = 0.0
        self.peak_executor_mb = 0.0
        self._cpu_last: dict[int, float] = {}
        self._stop_event = threading.Event()

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds the executors and their Python workers used (each process's last sample)."""
        return sum(self._cpu_last.values())

    def run(self) -> None:
        import psutil

        while not self._stop_event.wait(0.1):
            for pid in self.worker_pids:
                try:
                    kids = psutil.Process(pid).children(recursive=True)
                except psutil.Error:
                    continue
                py = jvm = 0.0
                for kid in kids:
                    try:
                        rss, name, t = (
                            kid.memory_info().rss / 2**20,
                            " ".join(kid.cmdline()),
                            kid.cpu_times(),
                        )
                    except psutil.Error:
                        continue
                    self._cpu_last[kid.pid] = (
                        t.user + t.system + t.children_user + t.children_system
                    )
                    if "java" in name:
                        jvm += rss
                    else:
                        py += rss
                self.peak_python_mb = max(self.peak_python_mb, py)
                self.peak_executor_mb = max(self.peak_executor_mb, py + jvm)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
