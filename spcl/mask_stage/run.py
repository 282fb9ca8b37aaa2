"""Running the mask job: plan the input files, run them (this process or Spark), reconcile, write metrics
and manifests.

Exit status the CLI derives from the returned metrics: the reconciliation (``input rows == masked + failed``
for every input file, counted from the written Parquet footers) must hold, else 1; documents that failed
*transiently* (server or engine trouble) are listed in ``failed/`` with ``transient = true`` and the run
exits 3 so that a scheduler reruns it: the same command retries exactly those documents.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from spcl.extract.backends import Extractor
from spcl.manifest import sha256_file, write_manifest
from spcl.mask_stage.config import MaskJobConfig
from spcl.mask_stage.inputs import MaskJobError, count_rows, file_key, list_input_files
from spcl.mask_stage.metrics import build_metrics, rate
from spcl.mask_stage.state import load_markers, needs_work, read_marker, write_json_atomic
from spcl.mask_stage.task import MaskRunner
from spcl.progress import Progress

log = logging.getLogger("spcl.mask_stage")


def plan_files(cfg: MaskJobConfig) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]], dict[str, str]]:
    """``(to do, all, SHA-256 by key)`` of the input files, as ``(path, key)``: to do are new or changed files
    and files with failures to retry; the hashes (read once here) let the reconciliation spot a changed file.

    Raises :class:`spcl.io.inputs.UnsafeOutput` (a ``ValueError``) when the output or the vault equals, contains
    or lies inside the input (a rerun would read its own outputs back as input), or lies inside a filter output
    folder (a later ``spcl filter --overwrite`` would reach it).
    """
    from spcl.io.inputs import check_job_output

    check_job_output([cfg.input], cfg.output)
    check_job_output([cfg.input], cfg.vault, "vault")
    keyed = [(p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)]
    for path, key in keyed:  # an output folder belongs to one input: never replace another input's results
        marker = read_marker(cfg.output, key)
        if marker is not None and Path(marker.input).resolve() != path.resolve():
            raise MaskJobError(f"{cfg.output} holds the results of another input file ({marker.input}) under the "
                               f"name of {path}; use a new --output for a different --input")
    hashes = {k: sha256_file(p) for p, k in keyed}
    todo = [(p, k) for p, k in keyed
            if needs_work(read_marker(cfg.output, k), hashes[k], cfg.retry_failed) != "skip"]
    return todo, keyed, hashes


def _footer_rows(path: Path) -> int:
    return int(pq.ParquetFile(path).metadata.num_rows) if path.exists() else 0


def reconcile(cfg: MaskJobConfig, keyed: list[tuple[Path, str]], hashes: dict[str, str]) -> dict[str, Any]:
    """``input_rows == masked + failed`` over the current input files, from the written files' footers."""
    out = Path(cfg.output)
    input_rows = masked = failed = 0
    uncommitted: list[str] = []
    for path, key in keyed:
        input_rows += count_rows(path)
        masked += _footer_rows(out / "masked" / f"part-{key}.parquet")
        failed += _footer_rows(out / "failed" / f"part-{key}.parquet")
        marker = read_marker(out, key)
        if marker is None or marker.input_sha256 != hashes[key]:
            uncommitted.append(path.name)
    ok = input_rows == masked + failed and not uncommitted
    return {"input_rows": input_rows, "masked": masked, "failed": failed, "ok": ok,
            "uncommitted_files": sorted(uncommitted)}


def clean_staging(cfg: MaskJobConfig) -> None:
    """Remove what a killed run left under temporary names (call only when no other run is active)."""
    shutil.rmtree(Path(cfg.output) / "_tmp", ignore_errors=True)
    shutil.rmtree(Path(cfg.vault) / "_staging", ignore_errors=True)


def finish(cfg: MaskJobConfig, keyed: list[tuple[Path, str]], hashes: dict[str, str],
           run: dict[str, Any]) -> dict[str, Any]:
    """Reconcile, write ``metrics.json`` and the output's and vault's ``manifest.json``; returns the metrics."""
    keys = {k for _, k in keyed}
    markers = {k: m for k, m in load_markers(cfg.output).items() if k in keys}
    metrics = build_metrics(cfg, markers, reconcile(cfg, keyed, hashes), run)
    write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
    provenance = {"config_hash": metrics["config_hash"], "backend": cfg.backend, "model": metrics["model"],
                  "prompt_version": metrics["prompt_version"], "run_id": cfg.run_id}
    write_manifest(cfg.output, kind="mask-output", records={"masked": metrics["masked"],
                                                             "failed": metrics["failed"]}, **provenance)
    write_manifest(cfg.vault, kind="mask-vault", **provenance)
    return metrics


def run_mask_job(cfg: MaskJobConfig, extractor: Extractor | None = None) -> dict[str, Any]:
    """Run the job in this process over every input file with work to do; returns ``metrics.json``'s content."""
    started = time.perf_counter()
    todo, keyed, hashes = plan_files(cfg)
    clean_staging(cfg)
    runner = MaskRunner(cfg, extractor)
    try:
        if runner.check is not None and todo:
            runner.check()  # an unreachable endpoint stops the job before any file is touched
        docs = 0
        with Progress("mask", total=sum(count_rows(p) for p, _ in todo)) as bar:
            runner.progress = bar
            for path, key in todo:
                stats = runner.process_file(path, key)
                docs += stats.documents if stats is not None else 0
    finally:
        runner.close()
    elapsed = time.perf_counter() - started
    run = {"run_id": cfg.run_id, "files_processed": len(todo), "files_skipped": len(keyed) - len(todo),
           "documents": docs, "elapsed_seconds": round(elapsed, 3), "docs_per_second": round(rate(docs, elapsed), 3)}
    return finish(cfg, keyed, hashes, run)


_RUNNERS: dict[str, MaskRunner] = {}


def _runner_for(cfg_json: str) -> MaskRunner:
    """The runner of this worker process (the extractor and its model are loaded once per process)."""
    runner = _RUNNERS.get(cfg_json)
    if runner is None:
        runner = MaskRunner(MaskJobConfig.from_json(cfg_json))
        _RUNNERS[cfg_json] = runner
    return runner


def process_partition(cfg_json: str, files: Iterable[tuple[str, str]]) -> Iterator[str]:
    """Spark ``mapPartitions`` body: process each ``(path, key)``; yields one JSON line per file.

    A file this run already committed (a retried or speculative task) is skipped.
    """
    runner = _runner_for(cfg_json)
    for path, key in files:
        marker = read_marker(runner.out, key)
        if marker is not None and marker.last_run == runner.cfg.run_id:
            continue
        stats = runner.process_file(Path(path), key)
        yield json.dumps({"key": key, "documents": stats.documents if stats is not None else 0})


def run_mask_job_spark(cfg: MaskJobConfig, master: str | None = None) -> dict[str, Any]:
    """Run the job with Spark: one task per input file with work to do, the same ``MaskRunner`` on executors.

    Executors read the vault key from their own environment (``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``,
    e.g. ``spark.executorEnv.SPCL_VAULT_KEY_FILE``); it is never shipped inside a task. Paths must be
    visible to every executor (local mode, or a shared filesystem).
    """
    from spcl.mask.vault import open_vault
    from spcl.spark import build_session
    from spcl.spark.files import run_per_file, with_absolute_paths

    started = time.perf_counter()
    cfg = with_absolute_paths(cfg, ("input", "output", "vault"))
    todo, keyed, hashes = plan_files(cfg)
    open_vault(cfg.vault).close()  # fail fast on a missing or wrong key, on the driver
    if todo and cfg.backend == "openai":  # an unreachable endpoint stops the job before any task starts
        from spcl.extract.backends import make_extractor

        with make_extractor("openai", model=cfg.model, endpoint=cfg.endpoint, types=cfg.types,
                            options=cfg.options) as probe:
            probe.check()  # type: ignore[attr-defined]
    clean_staging(cfg)
    (Path(cfg.output) / "_done").mkdir(parents=True, exist_ok=True)
    docs = 0
    if todo:
        spark = build_session(None, master, app_name="spcl-mask")
        try:
            lines = run_per_file(spark, [(str(p), k) for p, k in todo], process_partition, cfg.to_json())
        except Exception as err:  # a task failed for good (backend gone, …): only its type, never its text
            raise MaskJobError(f"the Spark job stopped ({type(err).__name__}); files committed so far are kept, "
                               "rerun the same command to resume (the executors' logs say why)") from None
        docs = sum(json.loads(line)["documents"] for line in lines)
    elapsed = time.perf_counter() - started
    run = {"engine": "spark", "run_id": cfg.run_id, "files_processed": len(todo),
           "files_skipped": len(keyed) - len(todo), "documents": docs, "elapsed_seconds": round(elapsed, 3),
           "docs_per_second": round(rate(docs, elapsed), 3)}
    return finish(cfg, keyed, hashes, run)
