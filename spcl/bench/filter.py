"""Benchmarks of the filter job: docs/s per core and peak memory, plain Python vs Spark local[2].

A benchmark is a command (``spcl bench filter``), never a test: this machine has slow episodes, so
runs are compared side by side in one invocation and the numbers reported, not asserted.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from spcl.bench import ANCHOR_SCREEN_DOCS_PER_CORE
from spcl.synth.corpus import generate_corpus, write_jsonl

GOAL_PYTHON_DOCS_PER_CORE = 5000.0
"""Rules-only goal (issue: filtering job)."""
GOAL_SPARK_SCREEN_DOCS_PER_CORE = 2000.0
"""Full screen in Spark on real text, end to end (issue 13; compass goal 3,000)."""


def make_bench_corpus(workdir: Path, docs: int, seed: int, files: int = 8, corpus: str = "real") -> list[str]:
    """Write ``docs`` ~1.5 KB documents into ``files`` JSONL.gz files: real ja/ko text (one language per
    document, ``spcl.bench.realtext``) or the synthetic mixed ja/ko/en templates (``corpus="synthetic"``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    paths = []
    per_file = -(-docs // files)
    if corpus == "real":
        from spcl.bench.realtext import real_documents

        stream = real_documents(docs, seed)
    else:
        stream = generate_corpus(docs, seed)
    for i in range(files):
        path = workdir / f"bench-{i:03d}.jsonl.gz"
        chunk = [doc for _, doc in zip(range(per_file), stream, strict=False)]
        if not chunk:
            break
        write_jsonl(iter(chunk), str(path), drop=("planted",))
        paths.append(str(path))
    return paths


_STAGE_GROUPS: tuple[tuple[str, str], ...] = (
    ("fugashi", "MeCab (fugashi)"),
    ("sentencepiece", "SentencePiece"),
    ("lightgbm", "LightGBM predict"),
    ("spcl/screen/features", "features: keys, lexicon, TF-IDF"),
    ("spcl/screen/lexicon", "features: keys, lexicon, TF-IDF"),
    ("spcl/screen/tokenize", "MeCab parse (fugashi's Cython time lands in tokenize.py)"),
    ("scipy", "scipy.sparse"),
    ("sklearn", "scikit-learn"),
    ("numpy", "NumPy"),
    ("spcl/detect", "rule detectors"),
    ("spcl/text", "normalize + language"),
    ("pyarrow", "Arrow"),
    ("spcl/filter", "batch function (Python)"),
    ("spcl/screen/model", "screen model (Python)"),
)


def stage_profile(batches: list[Any], ctx: Any) -> dict[str, float]:
    """Share of the batch function's time by stage (cProfile self time, grouped by module), largest first."""
    import cProfile
    import pstats

    from spcl.filter.batch import process_batch

    prof = cProfile.Profile()
    prof.enable()
    for batch in batches:
        process_batch(batch, ctx)
    prof.disable()
    totals: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        where = f"{filename}:{func}"
        group = next((name for key, name in _STAGE_GROUPS if key in where), "other (builtins, regex, ...)")
        totals[group] = totals.get(group, 0.0) + tottime
    whole = sum(totals.values()) or 1.0
    return {k: round(v / whole, 3) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])}


def _python_engine_child(inputs: list[str], output: str, screen: bool) -> dict[str, Any]:
    """Run in a child process: the plain-Python engine end to end; returns timings and peak RSS."""
    from spcl.config import load_settings
    from spcl.filter.batch import build_context, process_batch
    from spcl.filter.job import FilterJob, run_filter
    from spcl.io.readers import read_records

    settings = load_settings(overrides={"screen.enabled": screen})
    ctx = build_context(settings)
    batches = []
    for path in inputs:
        with open(path, "rb") as fh:
            batches += list(read_records(fh, path, settings.input, settings.spark.batch_rows))
    docs = sum(b.num_rows for b in batches)
    started, cpu_started = time.perf_counter(), time.process_time()
    for batch in batches:
        process_batch(batch, ctx)
    screen_seconds = time.perf_counter() - started
    screen_cpu_seconds = time.process_time() - cpu_started
    profile = stage_profile(batches[:3], ctx)
    text_mb = sum(len(t.as_py().encode("utf-8")) for b in batches for t in b.column("text") if t.is_valid) / 2**20
    started = time.perf_counter()
    run_filter(FilterJob(tuple(inputs), output, settings, engine="python", overwrite=True))
    job_seconds = time.perf_counter() - started
    return {
        "docs": docs,
        "batch_function_docs_per_s": docs / screen_seconds,
        "batch_function_docs_per_cpu_s": docs / screen_cpu_seconds,
        "job_docs_per_s": docs / job_seconds,
        "batch_function_mb_per_s": text_mb / screen_seconds,
        "stage_profile": profile,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


class _WorkerMemory(threading.Thread):
    """Samples the RSS and CPU time of pyspark Python workers and the JVM (children of this process tree)
    until stopped. CPU seconds (user + system, counted from the first sample) do not depend on what else
    the machine runs, unlike wall time: ``cpu_seconds`` is what the job cost."""

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


def _spark_run(inputs: list[str], output: str, screen: bool, cores: int = 2) -> dict[str, Any]:
    from spcl.config import load_settings
    from spcl.filter.job import FilterJob, run_filter
    from spcl.spark import build_session

    settings = load_settings(overrides={"screen.enabled": screen})
    build_session(settings, f"local[{cores}]")
    # warm-up: start one Python worker per core and load detectors/models there, as a long job would
    run_filter(FilterJob(tuple(inputs[:cores]), output + "-warmup", settings, "spark", f"local[{cores}]", True))
    monitor = _WorkerMemory()
    monitor.start()
    time.sleep(0.3)  # the first sample sets every process's CPU time to count from
    started = time.perf_counter()
    stats = run_filter(FilterJob(tuple(inputs), output, settings, "spark", f"local[{cores}]", True))
    seconds = time.perf_counter() - started
    time.sleep(0.3)
    monitor.stop()
    docs = stats["reconciliation"]["input_records"]
    return {"docs": docs, "cores": cores, "job_docs_per_s": docs / seconds,
            "docs_per_s_per_core": docs / seconds / cores,
            "docs_per_cpu_s": docs / max(monitor.cpu_seconds, 1e-9),
            "peak_worker_rss_mb": monitor.peak_worker_mb, "peak_jvm_rss_mb": monitor.peak_jvm_mb}


def run_filter_bench(docs: int, seed: int, workdir: str | None, spark: bool = True,
                     screen: bool = False, corpus: str = "real") -> dict[str, Any]:
    """Generate the corpus, run both engines, print a side-by-side report; returns the numbers."""
    root = Path(workdir or tempfile.mkdtemp(prefix="spcl-bench-"))
    inputs = make_bench_corpus(root / "input", docs, seed, corpus=corpus)
    mean_bytes = sum(os.path.getsize(p) for p in inputs)
    print(f"corpus: {docs} {corpus} docs in {len(inputs)} files under {root} ({mean_bytes / 2**20:.1f} MiB compressed)")
    code = ("import json,sys; from spcl.bench.filter import _python_engine_child as f; "
            "print(json.dumps(f(json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == '1')))")
    child = subprocess.run([sys.executable, "-c", code, json.dumps(inputs), str(root / "out-python"),
                            "1" if screen else "0"], check=True, capture_output=True, text=True)
    py = json.loads(child.stdout.strip().splitlines()[-1])
    path_name = "full screen (rules + model)" if screen else "rules-only"
    print(f"\n{path_name} path, 1 core")
    print(f"  plain Python, batch function : {py['batch_function_docs_per_s']:8.0f} docs/s per core")
    print(f"  plain Python, job end to end : {py['job_docs_per_s']:8.0f} docs/s per core "
          f"(peak RSS {py['peak_rss_mb']:.0f} MB)")
    print(f"  plain Python, batch function : {py['batch_function_mb_per_s']:8.2f} MB/s of text per core")
    print(f"  plain Python, batch function : {py['batch_function_docs_per_cpu_s']:8.0f} docs per CPU second "
          "(independent of other load)")
    print("  where the batch function spends its time (cProfile self time):")
    for stage, share in py["stage_profile"].items():
        print(f"    {share:6.1%}  {stage}")
    if screen:
        ratio = py["job_docs_per_s"] / ANCHOR_SCREEN_DOCS_PER_CORE
        print(f"  vs 266 docs/s/core anchor    : {ratio:.1f}x (plain Python job)")
    else:
        ratio = py["job_docs_per_s"] / GOAL_PYTHON_DOCS_PER_CORE
        print(f"  vs goal 5,000 docs/s per core: {ratio:.2f}x (plain Python job)")
    result: dict[str, Any] = {"python": py}
    if spark:
        sp = _spark_run(inputs, str(root / "out-spark"), screen)
        result["spark"] = sp
        print(f"  Spark local[2], job end to end: {sp['docs_per_s_per_core']:8.0f} docs/s per core "
              f"(peak Python worker RSS {sp['peak_worker_rss_mb']:.0f} MB, JVM {sp['peak_jvm_rss_mb']:.0f} MB)")
        print(f"  Spark local[2], CPU cost     : {sp['docs_per_cpu_s']:8.0f} docs per CPU second of Python workers "
              "+ JVM (independent of other load)")
        print(f"  Spark / plain Python job     : {sp['docs_per_s_per_core'] / py['job_docs_per_s']:.2f}")
        print(f"  Spark / plain batch function : {sp['docs_per_s_per_core'] / py['batch_function_docs_per_s']:.2f}")
        if screen:
            print(f"  Spark vs 266 docs/s/core     : {sp['docs_per_s_per_core'] / ANCHOR_SCREEN_DOCS_PER_CORE:.1f}x")
            print(f"  Spark vs goal 2,000 docs/s/core (real text): "
                  f"{sp['docs_per_s_per_core'] / GOAL_SPARK_SCREEN_DOCS_PER_CORE:.2f}x")
    return result
