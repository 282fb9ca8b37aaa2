"""One run of the filter benchmark in a fresh interpreter: the plain-Python engine's batch function
(rates per language, a per-stage profile) and whole cold runs of either engine, timed from the
process's start.

Each runs in its own process so that every run starts cold (a new JVM, new Python workers, models
loaded again), as a user's run does; the parent (:mod:`spcl.bench.filter`) reads the numbers from
its output.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

from spcl.bench.marginal import ColdRun
from spcl.bench.processes import tree_cpu_split
from spcl.config import load_settings
from spcl.filter.batch import build_context, process_batch
from spcl.filter.job import FilterJob, run_filter
from spcl.filter.spark_tasks import process_started_at
from spcl.io.readers import read_records
from spcl.screen.profile_groups import SCREEN_PROFILE_GROUPS

_STAGE_GROUPS: tuple[tuple[str, str], ...] = (
    *SCREEN_PROFILE_GROUPS,
    ("numpy", "NumPy"),
    ("spcl/detect", "rule detectors"),
    ("spcl/text", "normalize + language"),
    ("pyarrow", "Arrow"),
    ("spcl/filter", "batch function (Python)"),
)


def stage_profile(batches: list[Any], ctx: Any) -> dict[str, float]:
    """Share of the batch function's time by stage (cProfile self time, grouped by module),
    largest first."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for batch in batches:
        process_batch(batch, ctx)
    prof.disable()
    totals: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in pstats.Stats(
        prof
    ).stats.items():  # type: ignore[attr-defined]  # untyped in typeshed
        where = f"{filename}:{func}"
        group = next(
            (name for key, name in _STAGE_GROUPS if key in where), "other (builtins, regex, ...)"
        )
        totals[group] = totals.get(group, 0.0) + tottime
    whole = sum(totals.values()) or 1.0
    return {k: round(v / whole, 3) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])}


def python_engine_child(inputs: list[str], output: str, screen: bool) -> dict[str, Any]:
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
    text_mb = (
        sum(len(t.as_py().encode("utf-8")) for b in batches for t in b.column("text") if t.is_valid)
        / 2**20
    )
    by_lang: dict[str, dict[str, float]] = {}
    table = pa.Table.from_batches(batches)
    # documents are one language each; their ids carry no language, meta does
    for lang in ("en", "ja", "ko"):
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
        by_lang[lang] = {
            "docs": part.num_rows,
            "docs_per_s": part.num_rows / seconds,
            "mb_per_s": mb / seconds,
        }
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


def cold_run_child(
    inputs: list[str], output: str, screen: bool, engine: str, master: str | None
) -> ColdRun:
    """Run in a fresh process: one whole filter run; its wall time counted from this process's
    start."""
    born = process_started_at() or time.time()
    imported, imported_cpu = time.time(), time.process_time()
    settings = load_settings(overrides={"screen.enabled": screen})
    stats = run_filter(FilterJob(tuple(inputs), output, settings, engine, master, overwrite=True))
    done = time.time()
    cpu = tree_cpu_split()
    return {
        "docs": stats["reconciliation"]["input_records"],
        "wall": done - born,
        "cpu": sum(cpu.values()),
        "cpu_split": cpu,
        "driver_imports": imported - born,
        "driver_imports_cpu": imported_cpu,
        "stage_seconds": stats["stage_seconds"],
        "startup_seconds": stats.get("startup_seconds", {}),
        "task_seconds": stats["task_seconds"],
    }


def cold_run(
    inputs: list[str], output: str, screen: bool, engine: str, master: str | None = None
) -> ColdRun:
    """:func:`cold_run_child` in a fresh interpreter (its JVM, Python workers and model loads all
    cold)."""
    code = (
        "import json,sys; from spcl.bench.filter_runs import cold_run_child as f;"
        " a=json.loads(sys.argv[1]); print('RESULT ' + json.dumps(f(*a)))"
    )
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps([inputs, output, screen, engine, master])],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark run failed ({engine}, {master}): {proc.stderr[-2000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    run: ColdRun = json.loads(line[len("RESULT ") :])
    return run
