"""The arithmetic over whole benchmark runs: the *marginal* rate ``(large − small docs) / (large −
small seconds)`` of medians, the *fixed start-up* (a run's wall time minus the marginal cost of its
documents), the same in CPU seconds, and where a cold Spark run's start-up went."""

from __future__ import annotations

import statistics
from typing import TypedDict


class ColdRun(TypedDict):
    """One whole filter run in a fresh process (``spcl.bench.filter_runs.cold_run``): its
    documents, wall and CPU seconds (``cpu_split`` by role), and where its time went."""

    docs: int
    wall: float
    cpu: float
    cpu_split: dict[str, float]
    driver_imports: float
    driver_imports_cpu: float
    stage_seconds: dict[str, float]
    startup_seconds: dict[str, float]
    task_seconds: float


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def marginal(small: list[ColdRun], large: list[ColdRun], cores: int) -> dict[str, float]:
    """Marginal docs/s per core and fixed start-up (median runs): the cost of documents beyond the
    small input, and the large run's wall time minus its documents at that rate."""
    ts, tl = median([r["wall"] for r in small]), median([r["wall"] for r in large])
    ns, nl = small[0]["docs"], large[0]["docs"]
    rate = (nl - ns) / (tl - ts) if tl > ts else float("inf")
    out = {
        "docs_per_s_per_core": rate / cores,
        "startup_s": tl - nl / rate,
        "small_wall_s": ts,
        "large_wall_s": tl,
        "small_docs": ns,
        "large_docs": nl,
    }
    # the same in CPU seconds: independent of the machine's load
    if all("cpu" in r for r in (*small, *large)):
        cs, cl = median([r["cpu"] for r in small]), median([r["cpu"] for r in large])
        per_doc = (cl - cs) / (nl - ns) if nl > ns else float("nan")
        out.update(
            docs_per_cpu_s=1 / per_doc if per_doc > 0 else float("inf"),
            startup_cpu_s=cl - nl * per_doc,
            small_cpu_s=cs,
            large_cpu_s=cl,
        )
    return out


def cpu_line(m: dict[str, float]) -> str:
    """The CPU side of :func:`marginal` as one line (empty when the runs carried no CPU times)."""
    if "docs_per_cpu_s" not in m:
        return ""
    return (
        f"\n  {'':15s}  {m['docs_per_cpu_s']:7.0f} docs per CPU second marginal, fixed start-up"
        f" {m['startup_cpu_s']:5.1f} CPU s (small run {m['small_cpu_s']:.1f} CPU s, large"
        f" {m['large_cpu_s']:.1f})"
    )


def startup_split(runs: list[ColdRun]) -> dict[str, float]:
    """Medians of where a cold Spark run's start-up went (driver imports, session, listing, worker
    launch, imports and model load in the workers, the tail after the last task)."""
    keys: dict[str, list[float]] = {}
    for r in runs:
        st, su = r["stage_seconds"], r["startup_seconds"]
        parts = {
            "driver imports": r["driver_imports"],
            "JVM + session": su.get("session", 0.0),
            "listing + output checks": st.get("list_inputs", 0.0) - su.get("session", 0.0),
            "job submit → first Python worker": su.get("worker_launch", 0.0),
            "worker imports": su.get("worker_imports", 0.0),
            "model load (per worker)": su.get("model_load", 0.0),
            "count ids + reconcile + stats": st.get("count_ids", 0.0) + st.get("reconcile", 0.0),
        }
        for role, cpu in r.get("cpu_split", {}).items():
            parts[f"CPU seconds of the whole run: {role}"] = cpu
        for k, v in parts.items():
            keys.setdefault(k, []).append(v)
    return {k: median(v) for k, v in keys.items()}


def print_split(title: str, split: dict[str, float]) -> None:
    print(f"  {title} (medians, seconds):")
    for name, seconds in split.items():
        print(f"    {seconds:6.2f}  {name}")
