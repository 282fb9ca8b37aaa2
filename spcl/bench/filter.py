"""Benchmarks of the filter job: docs/s per core and peak memory, plain Python vs Spark local[2]
(and, with ``--cluster``, a real standalone cluster of 1 and 2 single-core workers).

A benchmark is a command (``spcl bench filter``), never a test: this machine has slow episodes, so
runs are compared side by side in one invocation, interleaved, and medians reported, not asserted.

Whole runs start in a fresh process each (a cold JVM and cold Python workers, as a user's run does),
on a small and a large input: the *marginal* rate is ``(large − small docs) / (large − small
seconds)``, and the *fixed start-up* of a run is its wall time minus the marginal cost of its
documents. The Spark engine's ``stats.json`` says where the start-up went (``startup_seconds``:
session, worker launch, imports, model load).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from spcl.bench import ANCHOR_SCREEN_DOCS_PER_CORE
from spcl.bench.filter_cluster import run_cluster_bench
from spcl.bench.filter_runs import cold_run
from spcl.bench.marginal import ColdRun, cpu_line, marginal, print_split, startup_split
from spcl.bench.realtext import real_documents
from spcl.io.jsonl import write_jsonl
from spcl.synth.corpus import generate_corpus

GOAL_PYTHON_DOCS_PER_CORE = 5000.0
"""Rules-only goal (issue: filtering job)."""
GOAL_SPARK_SCREEN_DOCS_PER_CORE = 4000.0
"""Full screen in Spark on the mixed real-text corpus, marginal."""
GOAL_STARTUP_SECONDS = 8.0
"""Fixed start-up of a Spark run, local mode and standalone cluster."""


def make_bench_corpus(
    workdir: Path, docs: int, seed: int, files: int = 4, corpus: str = "real"
) -> list[str]:
    """Write ``docs`` ~1.5 KB documents into ``files`` JSONL.gz files: real en/ja/ko text (a third
    each, one language per document, ``spcl.bench.realtext``) or the synthetic mixed templates
    (``corpus="synthetic"``)."""
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


def _local_bench(
    root: Path, inputs: list[str], small_inputs: list[str], screen: bool, spark: bool, repeat: int
) -> dict[str, Any]:
    """The batch function in one process, then whole cold runs of the python engine and Spark
    local[2]."""
    result: dict[str, Any] = {}
    code = (
        "import json,sys; from spcl.bench.filter_runs import python_engine_child as f; "
        "print(json.dumps(f(json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == '1')))"
    )
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            json.dumps(inputs),
            str(root / "out-python"),
            "1" if screen else "0",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    py = json.loads(child.stdout.strip().splitlines()[-1])
    path_name = "full screen (rules + model)" if screen else "rules-only"
    print(f"\n{path_name} path, 1 core")
    print(
        f"  plain Python, batch function : {py['batch_function_docs_per_s']:8.0f} docs/s per core"
    )
    print(
        f"  plain Python, batch function : {py['batch_function_mb_per_s']:8.2f} MB/s of text per"
        " core"
    )
    for lang, row in py["by_lang"].items():
        print(
            f"    {lang}: {row['docs_per_s']:8.0f} docs/s, {row['mb_per_s']:6.2f} MB/s"
            f" ({row['docs']} docs)"
        )
    print(
        f"  plain Python, batch function : {py['batch_function_docs_per_cpu_s']:8.0f} docs per CPU"
        " second (independent of other load)"
    )
    print(
        f"  plain Python, job end to end : {py['job_docs_per_s']:8.0f} docs/s (warm process, peak"
        f" RSS {py['peak_rss_mb']:.0f} MB)"
    )
    print("  where the batch function spends its time (cProfile self time):")
    for stage, share in py["stage_profile"].items():
        print(f"    {share:6.1%}  {stage}")
    result["python"] = py
    runs: dict[str, dict[str, list[ColdRun]]] = {}
    configs: list[tuple[str, str, str | None, int]] = [("python", "python", None, 1)]
    if spark:
        configs.append(("spark local[2]", "spark", "local[2]", 2))
    # interleaved: a slow episode of the machine hits every configuration alike
    for _ in range(repeat):
        for name, engine, master, _cores in configs:
            for label, ins in (("small", small_inputs), ("large", inputs)):
                out = str(root / f"out-{engine}-{label}")
                runs.setdefault(name, {}).setdefault(label, []).append(
                    cold_run(ins, out, screen, engine, master)
                )
    print("\nwhole runs, each in a fresh process (marginal = extra documents / extra seconds):")
    for name, _engine, _master, cores in configs:
        m = marginal(runs[name]["small"], runs[name]["large"], cores)
        result[name] = m
        print(
            f"  {name:15s}: {m['docs_per_s_per_core']:7.0f} docs/s per core marginal, fixed"
            f" start-up {m['startup_s']:5.1f} s (small run {m['small_wall_s']:.1f} s, large"
            f" {m['large_wall_s']:.1f} s)" + cpu_line(m)
        )
    print(
        "  load average (1, 5, 15 min) at the end:"
        f" {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    if spark:
        ratio = (
            result["spark local[2]"]["docs_per_s_per_core"]
            / result["python"]["docs_per_s_per_core"]
        )
        print(f"  Spark / python engine, marginal per core: {ratio:.2f} (goal >= 0.9)")
        spark_per_core = result["spark local[2]"]["docs_per_s_per_core"]
        print(
            f"  Spark marginal vs goal {GOAL_SPARK_SCREEN_DOCS_PER_CORE:,.0f} docs/s per core: "
            f"{spark_per_core / GOAL_SPARK_SCREEN_DOCS_PER_CORE:.2f}"
            f"x; start-up vs goal {GOAL_STARTUP_SECONDS:.0f} s:"
            f" {result['spark local[2]']['startup_s']:.1f} s"
        )
        result["spark_startup_split"] = startup_split(runs["spark local[2]"]["small"])
        print_split(
            "where a cold Spark local[2] run's start-up goes (small input)",
            result["spark_startup_split"],
        )
        if screen:
            print(
                "  Spark vs 266 docs/s/core anchor: "
                f"{spark_per_core / ANCHOR_SCREEN_DOCS_PER_CORE:.1f}x"
            )
    return result


def run_filter_bench(
    docs: int,
    seed: int,
    workdir: str | None,
    spark: bool = True,
    screen: bool = False,
    corpus: str = "real",
    repeat: int = 3,
    cluster: bool = False,
    local: bool = True,
) -> dict[str, Any]:
    """Generate the corpus, run both engines (and the cluster), print a side-by-side report; returns
    the numbers.

    ``docs`` documents in 4 files are the large input, ``docs // 8`` in 4 files the small one; each
    engine runs both ``repeat`` times, interleaved, each run in a fresh process; ``local=False``
    runs only the cluster.
    """
    root = Path(workdir or tempfile.mkdtemp(prefix="spcl-bench-"))
    inputs = make_bench_corpus(root / "input", docs, seed, corpus=corpus)
    small_inputs = make_bench_corpus(
        root / "input-small", max(docs // 8, 4), seed + 1, corpus=corpus
    )
    size = sum(os.path.getsize(p) for p in inputs)
    print(
        f"corpus: {docs} {corpus} docs (en/ja/ko, a third each) in {len(inputs)} files under {root}"
        f" ({size / 2**20:.1f} MiB compressed); small input {max(docs // 8, 4)} docs; {repeat} cold"
        " runs each"
    )
    result: dict[str, Any] = {}
    if local:
        result.update(_local_bench(root, inputs, small_inputs, screen, spark, repeat))
    if cluster:
        result["cluster"] = run_cluster_bench(root, inputs, small_inputs, screen, repeat)
    return result
