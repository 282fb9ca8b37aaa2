"""Benchmarks of the filter job: docs/s per core and peak memory, plain Python vs Spark local[2] (and, with
``--cluster``, a real standalone cluster of 1 and 2 single-core workers).

A benchmark is a command (``spcl bench filter``), never a test: this machine has slow episodes, so
runs are compared side by side in one invocation, interleaved, and medians reported, not asserted.

Whole runs start in a fresh process each (a cold JVM and cold Python workers, as a user's run does), on a small and
a large input: the *marginal* rate is ``(large − small docs) / (large − small seconds)``, and the *fixed start-up*
of a run is its wall time minus the marginal cost of its documents. The Spark engine's ``stats.json`` says where
the start-up went (``startup_seconds``: session, worker launch, imports, model load).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from spcl.bench import ANCHOR_SCREEN_DOCS_PER_CORE
from spcl.bench.cluster import standalone_cluster
from spcl.bench.processes import ClusterMemory, tree_cpu_split
from spcl.bench.realtext import real_documents
from spcl.config import load_settings
from spcl.filter.batch import build_context, process_batch
from spcl.filter.job import FilterJob, run_filter
from spcl.filter.spark_tasks import process_started_at
from spcl.io.jsonl import write_jsonl
from spcl.io.readers import read_records
from spcl.synth.corpus import generate_corpus

GOAL_PYTHON_DOCS_PER_CORE = 5000.0
"""Rules-only goal (issue: filtering job)."""
GOAL_SPARK_SCREEN_DOCS_PER_CORE = 4000.0
"""Full screen in Spark on the mixed real-text corpus, marginal."""
GOAL_STARTUP_SECONDS = 8.0
"""Fixed start-up of a Spark run, local mode and standalone cluster."""
GOAL_SCALE_OUT = 1.8
"""Two single-core workers vs one, marginal throughput."""


def make_bench_corpus(workdir: Path, docs: int, seed: int, files: int = 4, corpus: str = "real") -> list[str]:
    """Write ``docs`` ~1.5 KB documents into ``files`` JSONL.gz files: real en/ja/ko text (a third each, one
    language per document, ``spcl.bench.realtext``) or the synthetic mixed templates (``corpus="synthetic"``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    paths = []
    per_file = -(-docs // files)
    stream = real_documents(docs, seed) if corpus == "real" else generate_corpus(docs, seed)
    for i in range(files):
        path = workdir / f"bench-{i:03d}.jsonl.gz"
        chunk = [doc for _, doc in zip(range(per_file), stream, strict=False)]
        if not chunk:
            break
        write_jsonl(path, ({k: v for k, v in d.items() if k != "planted"} for d in chunk))
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

    prof = cProfile.Profile()
    prof.enable()
    for batch in batches:
        process_batch(batch, ctx)
    prof.disable()
    totals: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]  # untyped in typeshed
        where = f"{filename}:{func}"
        group = next((name for key, name in _STAGE_GROUPS if key in where), "other (builtins, regex, ...)")
        totals[group] = totals.get(group, 0.0) + tottime
    whole = sum(totals.values()) or 1.0
    return {k: round(v / whole, 3) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])}


def _python_engine_child(inputs: list[str], output: str, screen: bool) -> dict[str, Any]:
    """Run in a child process: the plain-Python engine end to end; returns timings and peak RSS."""
    import pyarrow as pa
    import pyarrow.compute as pc

    settings = load_settings(overrides={"screen.enabled": screen})
    ctx = build_context(settings)
    batches = []
    for path in inputs:
        with open(path, "rb") as fh:
            batches += list(read_records(fh, path, settings.input))
    docs = sum(b.num_rows for b in batches)
    started, cpu_started = time.perf_counter(), time.process_time()
    for batch in batches:
        process_batch(batch, ctx)
    screen_seconds = time.perf_counter() - started
    screen_cpu_seconds = time.process_time() - cpu_started
    profile = stage_profile(batches[:3], ctx)
    text_mb = sum(len(t.as_py().encode("utf-8")) for b in batches for t in b.column("text") if t.is_valid) / 2**20
    by_lang: dict[str, dict[str, float]] = {}
    table = pa.Table.from_batches(batches)
    for lang in ("en", "ja", "ko"):  # documents are one language each; their ids carry no language, meta does
        mask = pc.match_substring(table.column("meta"), f'"lang": "{lang}"')
        part = table.filter(pc.fill_null(mask, False))
        if not part.num_rows:
            continue
        part_batches = part.to_batches(max_chunksize=2000)
        started = time.perf_counter()
        for batch in part_batches:
            process_batch(batch, ctx)
        seconds = time.perf_counter() - started
        mb = sum(len(t.as_py().encode("utf-8")) for t in part.column("text") if t.is_valid) / 2**20
        by_lang[lang] = {"docs": part.num_rows, "docs_per_s": part.num_rows / seconds, "mb_per_s": mb / seconds}
    started = time.perf_counter()
    run_filter(FilterJob(tuple(inputs), output, settings, engine="python", overwrite=True))
    job_seconds = time.perf_counter() - started
    return {
        "docs": docs,
        "batch_function_docs_per_s": docs / screen_seconds,
        "batch_function_docs_per_cpu_s": docs / screen_cpu_seconds,
        "job_docs_per_s": docs / job_seconds,
        "batch_function_mb_per_s": text_mb / screen_seconds,
        "by_lang": by_lang,
        "stage_profile": profile,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _cold_run_child(inputs: list[str], output: str, screen: bool, engine: str, master: str | None) -> dict[str, Any]:
    """Run in a fresh process: one whole filter run; its wall time counted from this process's start."""
    born = process_started_at() or time.time()
    imported, imported_cpu = time.time(), time.process_time()
    settings = load_settings(overrides={"screen.enabled": screen})
    stats = run_filter(FilterJob(tuple(inputs), output, settings, engine, master, overwrite=True))
    done = time.time()
    cpu = tree_cpu_split()
    return {"docs": stats["reconciliation"]["input_records"], "wall": done - born, "cpu": sum(cpu.values()),
            "cpu_split": cpu, "driver_imports": imported - born, "driver_imports_cpu": imported_cpu,
            "stage_seconds": stats["stage_seconds"],
            "startup_seconds": stats.get("startup_seconds", {}), "task_seconds": stats["task_seconds"]}


def cold_run(inputs: list[str], output: str, screen: bool, engine: str, master: str | None = None) -> dict[str, Any]:
    """:func:`_cold_run_child` in a fresh interpreter (its JVM, Python workers and model loads all cold)."""
    code = ("import json,sys; from spcl.bench.filter import _cold_run_child as f; a=json.loads(sys.argv[1]); "
            "print('RESULT ' + json.dumps(f(*a)))")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run([sys.executable, "-c", code, json.dumps([inputs, output, screen, engine, master])],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark run failed ({engine}, {master}): {proc.stderr[-2000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT "):]))


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def marginal(small: list[dict[str, Any]], large: list[dict[str, Any]], cores: int) -> dict[str, float]:
    """Marginal docs/s per core and fixed start-up (median runs): the cost of documents beyond the small input,
    and the large run's wall time minus its documents at that rate."""
    ts, tl = _median([r["wall"] for r in small]), _median([r["wall"] for r in large])
    ns, nl = small[0]["docs"], large[0]["docs"]
    rate = (nl - ns) / (tl - ts) if tl > ts else float("inf")
    out = {"docs_per_s_per_core": rate / cores, "startup_s": tl - nl / rate, "small_wall_s": ts,
           "large_wall_s": tl, "small_docs": ns, "large_docs": nl}
    if all("cpu" in r for r in (*small, *large)):  # the same in CPU seconds: independent of the machine's load
        cs, cl = _median([r["cpu"] for r in small]), _median([r["cpu"] for r in large])
        per_doc = (cl - cs) / (nl - ns) if nl > ns else float("nan")
        out.update(docs_per_cpu_s=1 / per_doc if per_doc > 0 else float("inf"),
                   startup_cpu_s=cl - nl * per_doc, small_cpu_s=cs, large_cpu_s=cl)
    return out


def _cpu_line(m: dict[str, float]) -> str:
    """The CPU side of :func:`marginal` as one line (empty when the runs carried no CPU times)."""
    if "docs_per_cpu_s" not in m:
        return ""
    return (f"\n  {'':15s}  {m['docs_per_cpu_s']:7.0f} docs per CPU second marginal, fixed start-up "
            f"{m['startup_cpu_s']:5.1f} CPU s (small run {m['small_cpu_s']:.1f} CPU s, large {m['large_cpu_s']:.1f})")


def _startup_split(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Medians of where a cold Spark run's start-up went (driver imports, session, listing, worker launch,
    imports and model load in the workers, the tail after the last task)."""
    keys: dict[str, list[float]] = {}
    for r in runs:
        st, su = r["stage_seconds"], r["startup_seconds"]
        parts = {"driver imports": r["driver_imports"], "JVM + session": su.get("session", 0.0),
                 "listing + output checks": st.get("list_inputs", 0.0) - su.get("session", 0.0),
                 "job submit → first Python worker": su.get("worker_launch", 0.0),
                 "worker imports": su.get("worker_imports", 0.0), "model load (per worker)": su.get("model_load", 0.0),
                 "count ids + reconcile + stats": st.get("count_ids", 0.0) + st.get("reconcile", 0.0)}
        for role, cpu in r.get("cpu_split", {}).items():
            parts[f"CPU seconds of the whole run: {role}"] = cpu
        for k, v in parts.items():
            keys.setdefault(k, []).append(v)
    return {k: _median(v) for k, v in keys.items()}


def _print_split(title: str, split: dict[str, float]) -> None:
    print(f"  {title} (medians, seconds):")
    for name, seconds in split.items():
        print(f"    {seconds:6.2f}  {name}")


def _local_bench(root: Path, inputs: list[str], small_inputs: list[str], screen: bool, spark: bool,
                 repeat: int) -> dict[str, Any]:
    """The batch function in one process, then whole cold runs of the python engine and Spark local[2]."""
    result: dict[str, Any] = {}
    code = ("import json,sys; from spcl.bench.filter import _python_engine_child as f; "
            "print(json.dumps(f(json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == '1')))")
    child = subprocess.run([sys.executable, "-c", code, json.dumps(inputs), str(root / "out-python"),
                            "1" if screen else "0"], check=True, capture_output=True, text=True)
    py = json.loads(child.stdout.strip().splitlines()[-1])
    path_name = "full screen (rules + model)" if screen else "rules-only"
    print(f"\n{path_name} path, 1 core")
    print(f"  plain Python, batch function : {py['batch_function_docs_per_s']:8.0f} docs/s per core")
    print(f"  plain Python, batch function : {py['batch_function_mb_per_s']:8.2f} MB/s of text per core")
    for lang, row in py["by_lang"].items():
        print(f"    {lang}: {row['docs_per_s']:8.0f} docs/s, {row['mb_per_s']:6.2f} MB/s ({row['docs']} docs)")
    print(f"  plain Python, batch function : {py['batch_function_docs_per_cpu_s']:8.0f} docs per CPU second "
          "(independent of other load)")
    print(f"  plain Python, job end to end : {py['job_docs_per_s']:8.0f} docs/s (warm process, peak RSS "
          f"{py['peak_rss_mb']:.0f} MB)")
    print("  where the batch function spends its time (cProfile self time):")
    for stage, share in py["stage_profile"].items():
        print(f"    {share:6.1%}  {stage}")
    result["python"] = py
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    configs: list[tuple[str, str, str | None, int]] = [("python", "python", None, 1)]
    if spark:
        configs.append(("spark local[2]", "spark", "local[2]", 2))
    for _ in range(repeat):  # interleaved: a slow episode of the machine hits every configuration alike
        for name, engine, master, _cores in configs:
            for label, ins in (("small", small_inputs), ("large", inputs)):
                out = str(root / f"out-{engine}-{label}")
                runs.setdefault(name, {}).setdefault(label, []).append(cold_run(ins, out, screen, engine, master))
    print("\nwhole runs, each in a fresh process (marginal = extra documents / extra seconds):")
    for name, _engine, _master, cores in configs:
        m = marginal(runs[name]["small"], runs[name]["large"], cores)
        result[name] = m
        print(f"  {name:15s}: {m['docs_per_s_per_core']:7.0f} docs/s per core marginal, fixed start-up "
              f"{m['startup_s']:5.1f} s (small run {m['small_wall_s']:.1f} s, large {m['large_wall_s']:.1f} s)"
              + _cpu_line(m))
    print(f"  load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if spark:
        ratio = result["spark local[2]"]["docs_per_s_per_core"] / result["python"]["docs_per_s_per_core"]
        print(f"  Spark / python engine, marginal per core: {ratio:.2f} (goal >= 0.9)")
        print(f"  Spark marginal vs goal {GOAL_SPARK_SCREEN_DOCS_PER_CORE:,.0f} docs/s per core: "
              f"{result['spark local[2]']['docs_per_s_per_core'] / GOAL_SPARK_SCREEN_DOCS_PER_CORE:.2f}x; "
              f"start-up vs goal {GOAL_STARTUP_SECONDS:.0f} s: {result['spark local[2]']['startup_s']:.1f} s")
        result["spark_startup_split"] = _startup_split(runs["spark local[2]"]["small"])
        _print_split("where a cold Spark local[2] run's start-up goes (small input)", result["spark_startup_split"])
        if screen:
            print(f"  Spark vs 266 docs/s/core anchor: "
                  f"{result['spark local[2]']['docs_per_s_per_core'] / ANCHOR_SCREEN_DOCS_PER_CORE:.1f}x")
    return result


def run_filter_bench(docs: int, seed: int, workdir: str | None, spark: bool = True,
                     screen: bool = False, corpus: str = "real", repeat: int = 3, cluster: bool = False,
                     local: bool = True) -> dict[str, Any]:
    """Generate the corpus, run both engines (and the cluster), print a side-by-side report; returns the numbers.

    ``docs`` documents in 4 files are the large input, ``docs // 8`` in 4 files the small one; each engine runs
    both ``repeat`` times, interleaved, each run in a fresh process; ``local=False`` runs only the cluster.
    """
    root = Path(workdir or tempfile.mkdtemp(prefix="spcl-bench-"))
    inputs = make_bench_corpus(root / "input", docs, seed, corpus=corpus)
    small_inputs = make_bench_corpus(root / "input-small", max(docs // 8, 4), seed + 1, corpus=corpus)
    size = sum(os.path.getsize(p) for p in inputs)
    print(f"corpus: {docs} {corpus} docs (en/ja/ko, a third each) in {len(inputs)} files under {root} "
          f"({size / 2**20:.1f} MiB compressed); small input {max(docs // 8, 4)} docs; {repeat} cold runs each")
    result: dict[str, Any] = {}
    if local:
        result.update(_local_bench(root, inputs, small_inputs, screen, spark, repeat))
    if cluster:
        result["cluster"] = run_cluster_bench(root, inputs, small_inputs, screen, repeat)
    return result


def _cluster_run(cluster: Any, inputs: list[str], output: str, screen: bool, peaks: dict[str, float]
                 ) -> dict[str, Any]:
    """One cold run on ``cluster``; its CPU seconds include the executors' and their Python workers' (a new
    executor per run), and ``peaks`` keeps the largest worker memory seen."""
    monitor = ClusterMemory(cluster.worker_pids())
    monitor.start()
    try:
        run = cold_run(inputs, output, screen, "spark", cluster.url)
    finally:
        monitor.stop()
    peaks["python"] = max(peaks["python"], monitor.peak_python_mb)
    peaks["executor"] = max(peaks["executor"], monitor.peak_executor_mb)
    return {**run, "cpu": run["cpu"] + monitor.cpu_seconds,
            "cpu_split": {**run.get("cpu_split", {}), "executors (JVM + Python)": round(monitor.cpu_seconds, 2)}}


def run_cluster_bench(root: Path, inputs: list[str], small_inputs: list[str], screen: bool,
                      repeat: int) -> dict[str, Any]:
    """A standalone cluster (``spcl.bench.cluster``) of 1 and then 2 single-core workers: marginal throughput,
    fixed start-up per run, the scale-out ratio and the peak memory of a worker's executor."""
    print("\nstandalone cluster on 127.0.0.1 (Master + N Workers of 1 core, 1 GB; spcl filter --master spark://…):")
    out: dict[str, Any] = {}
    for workers in (1, 2):
        peaks = {"python": 0.0, "executor": 0.0}
        with standalone_cluster(root / f"cluster-{workers}", workers=workers) as c:
            small, large = [], []
            for _ in range(repeat):
                small.append(_cluster_run(c, small_inputs, str(root / f"out-cluster{workers}-small"), screen, peaks))
                large.append(_cluster_run(c, inputs, str(root / f"out-cluster{workers}-large"), screen, peaks))
        m: dict[str, Any] = dict(marginal(small, large, workers))
        m.update(peak_worker_python_mb=peaks["python"], peak_worker_executor_mb=peaks["executor"],
                 startup_split=_startup_split(small))
        out[f"{workers} worker(s)"] = m
        print(f"  {workers} worker(s): {m['docs_per_s_per_core'] * workers:7.0f} docs/s marginal "
              f"({m['docs_per_s_per_core']:.0f} per core), fixed start-up {m['startup_s']:5.1f} s, peak per worker:"
              f" Python {m['peak_worker_python_mb']:.0f} MB, executor JVM + Python "
              f"{m['peak_worker_executor_mb']:.0f} MB" + _cpu_line(m))
        _print_split(f"start-up split, {workers} worker(s)", m["startup_split"])
    one, two = out["1 worker(s)"], out["2 worker(s)"]
    out["scale_out"] = (two["docs_per_s_per_core"] * 2) / one["docs_per_s_per_core"]
    print(f"  scale-out 2 workers / 1 worker: {out['scale_out']:.2f}x (goal >= {GOAL_SCALE_OUT}; wall time, so "
          f"only meaningful on a quiet machine: load average now {os.getloadavg()[0]:.2f})")
    return out
