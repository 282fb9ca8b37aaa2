"""Running the mask job: plan the input files, run them (this process or Spark, ``spcl.executor``),
reconcile, write metrics and manifests.

Exit status the CLI derives from the returned metrics: the reconciliation (``input rows == masked + failed``
for every input file, counted from the written Parquet footers) must hold, else 1; documents that failed
*transiently* (server or engine trouble) are listed in ``failed/`` with ``transient = true`` and the run
exits 3 so that a scheduler reruns it: the same command retries exactly those documents.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq

from spcl.executor import FileStage, JobError, Plan, RunInfo, Unit, UnitReport, run_local, run_spark
from spcl.executor.state import remove_staging
from spcl.executor.units import foreign_input, other_settings, part_path
from spcl.extract.backends import Extractor
from spcl.manifest import sha256_file, write_manifest
from spcl.mask.operators import DEFAULT_OPERATOR
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

    Raises :class:`MaskJobError` when the output holds files masked with other release settings
    (``MaskJobConfig.release_hash``),
    and :class:`spcl.io.inputs.UnsafeOutput` (a ``ValueError``) when the output or the vault equals, contains
    or lies inside the input (a rerun would read its own outputs back as input), or lies inside a filter output
    folder (a later ``spcl filter --overwrite`` would reach it).
    """
    from spcl.io.inputs import check_job_output

    check_job_output([cfg.input], cfg.output)
    check_job_output([cfg.input], cfg.vault, "vault")
    keyed = [(p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)]
    foreign = foreign_input(keyed, lambda k: m.input if (m := read_marker(cfg.output, k)) else None)
    if foreign:
        raise MaskJobError(f"{cfg.output} holds the results of another input file ({foreign[0]}) under the "
                           f"name of {foreign[1]}; use a new --output for a different --input")
    other = other_settings(keyed, lambda k: None if (m := read_marker(cfg.output, k)) is None else m.release_hash,
                           cfg.release_hash())
    if other:  # skipping them would leave their old output under this run's settings
        raise MaskJobError(f"{cfg.output} holds {len(other)} file(s) masked with other mask settings (backend, "
                           "model, adapter, fallback, types, chunk size, name finders or operators); rerun with "
                           "the same settings or use a new --output")
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
        masked += _footer_rows(part_path(out / "masked", key))
        failed += _footer_rows(part_path(out / "failed", key))
        marker = read_marker(out, key)
        if marker is None or marker.input_sha256 != hashes[key]:
            uncommitted.append(path.name)
    ok = input_rows == masked + failed and not uncommitted
    return {"input_rows": input_rows, "masked": masked, "failed": failed, "ok": ok,
            "uncommitted_files": sorted(uncommitted)}


def clean_staging(cfg: MaskJobConfig) -> None:
    """Remove what a killed run left under temporary names (call only when no other run is active)."""
    remove_staging(Path(cfg.output) / "_tmp", Path(cfg.vault) / "_staging")


def finish(cfg: MaskJobConfig, keyed: list[tuple[Path, str]], hashes: dict[str, str],
           run: dict[str, Any]) -> dict[str, Any]:
    """Reconcile, write ``metrics.json`` and the output's and vault's ``manifest.json``; returns the metrics."""
    keys = {k for _, k in keyed}
    markers = {k: m for k, m in load_markers(cfg.output).items() if k in keys}
    metrics = build_metrics(cfg, markers, reconcile(cfg, keyed, hashes), run)
    write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
    provenance = {"config_hash": metrics["config_hash"], "backend": cfg.backend, "model": metrics["model"],
                  "prompt_version": metrics["prompt_version"], "run_id": cfg.run_id,
                  "operators": {t: cfg.operators.get(t, DEFAULT_OPERATOR) for t in cfg.types},
                  "names_finder": metrics["names_finder"], "name_lists": metrics["name_lists"]}
    tier = metrics["tier"]
    records = {"masked": metrics["masked"], "failed": metrics["failed"]}
    if tier["enabled"]:  # the masked rows the tier cleared (unchanged, no LLM), per language
        records |= {"tier_cleared": tier["cleared"], "tier_cleared_per_language": tier["cleared_per_language"]}
    write_manifest(cfg.output, kind="mask-output", records=records, **provenance)
    write_manifest(cfg.vault, kind="mask-vault", **provenance)
    return metrics


class MaskStage(FileStage):
    """The mask job as a stage of ``spcl.executor``: a unit is one flagged Parquet file, its worker a
    :class:`MaskRunner` (the extractor and its model loaded once per process)."""

    config_type: ClassVar[type[MaskJobConfig]] = MaskJobConfig
    name: ClassVar[str] = "mask"
    ref: ClassVar[str] = "spcl.mask_stage.run:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output", "vault")
    error: ClassVar[type[JobError]] = MaskJobError

    def plan(self, cfg: MaskJobConfig) -> Plan:
        """:func:`plan_files`; the context keeps every file and its hash for :meth:`finish`."""
        todo, keyed, hashes = plan_files(cfg)
        return Plan([Unit(str(p), k) for p, k in todo], len(keyed) - len(todo), (keyed, hashes))

    def before(self, cfg: MaskJobConfig, plan: Plan, engine: str) -> None:
        """Clean a killed run's staging; for Spark, fail fast on the driver on a missing or wrong vault key
        and an unreachable endpoint."""
        if engine == "spark":
            from spcl.mask.vault import open_vault

            open_vault(cfg.vault).close()
            if plan.todo and cfg.backend == "openai":
                from spcl.extract.backends import make_extractor

                with make_extractor("openai", model=cfg.model, endpoint=cfg.endpoint, types=cfg.types,
                                    options=cfg.options) as probe:
                    probe.check()  # type: ignore[attr-defined]  # the openai extractor has check(); Extractor does not
        if cfg.names or cfg.backend == "rules" or cfg.fallback == "rules":
            from spcl.extract.names import NamesFinderMissing, check_finder

            try:
                check_finder()  # never a silent fallback to another finder than the one configured
            except NamesFinderMissing as err:
                raise MaskJobError(str(err)) from err
        clean_staging(cfg)
        if engine == "spark":
            (Path(cfg.output) / "_done").mkdir(parents=True, exist_ok=True)

    def setup(self, cfg: MaskJobConfig, clients: dict[str, Any]) -> MaskRunner:
        """The runner (``clients["extractor"]``: a given extractor, e.g. a test's)."""
        return MaskRunner(cfg, clients.get("extractor"))

    def check(self, worker: MaskRunner) -> None:
        """Ask the extractor whether it can serve (when it can tell)."""
        if worker.check is not None:
            worker.check()

    def committed(self, worker: MaskRunner, unit: Unit) -> bool:
        """This run wrote the file's done-marker already."""
        marker = read_marker(worker.out, unit.key)
        return marker is not None and marker.last_run == worker.cfg.run_id

    def progress_total(self, plan: Plan) -> int | None:
        """The rows of the files to do (from their footers)."""
        return sum(count_rows(Path(u.path)) for u in plan.todo)

    def process(self, worker: MaskRunner, unit: Unit, progress: Progress | None = None) -> UnitReport:
        """Mask one file (or retry its failed rows) and commit it."""
        worker.progress = progress
        stats = worker.process_file(Path(unit.path), unit.key)
        return UnitReport(unit.key, stats.documents if stats is not None else 0)

    def finish(self, cfg: MaskJobConfig, plan: Plan, run: RunInfo, worker: MaskRunner | None) -> dict[str, Any]:
        """:func:`finish` with this run's counts and speed."""
        keyed, hashes = plan.context
        info: dict[str, Any] = {"engine": "spark"} if run.engine == "spark" else {}
        info |= {"run_id": cfg.run_id, "files_processed": run.files_processed, "files_skipped": run.files_skipped,
                 "documents": run.records, "elapsed_seconds": run.elapsed_seconds,
                 "docs_per_second": round(rate(run.records, run.elapsed_seconds), 3)}
        return finish(cfg, keyed, hashes, info)


STAGE = MaskStage()


def run_mask_job(cfg: MaskJobConfig, extractor: Extractor | None = None) -> dict[str, Any]:
    """Run the job in this process over every input file with work to do; returns ``metrics.json``'s content."""
    return run_local(STAGE, cfg, {"extractor": extractor})


def run_mask_job_spark(cfg: MaskJobConfig, master: str | None = None, submitted: bool = False) -> dict[str, Any]:
    """Run the job with Spark: one task per input file with work to do, the same ``MaskRunner`` on executors.

    Executors read the vault key from their own environment (``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``,
    e.g. ``spark.executorEnv.SPCL_VAULT_KEY_FILE``); it is never shipped inside a task. Paths must be
    visible to every executor (local mode, or a shared filesystem).
    ``submitted``: running under spark-submit (``jobs/*.py``), whose master is kept unless ``master`` is given.
    """
    return run_spark(STAGE, cfg, master, submitted)
