"""Running the mask job: plan the input files, run them (this process or Spark, ``spcl.executor``),
reconcile, write metrics and manifests.

Exit status the CLI derives from the returned metrics: the reconciliation (``input rows == masked +
failed`` for every input file, counted from the written Parquet footers) must hold, else 1;
documents that failed *transiently* (server or engine trouble) are listed in ``failed/`` with
``transient = true`` and the run exits 3 so that a scheduler reruns it: the same command retries
exactly those documents.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from spcl.executor import JobError, Plan, RunInfo, run_local, run_spark
from spcl.executor.state import DoneMarker
from spcl.executor.unitpass import UnitPass
from spcl.executor.vaultjob import VaultJob
from spcl.extract.backends import (
    FALLBACK_BACKENDS,
    Extractor,
    is_model_backend,
    is_server_backend,
    make_extractor,
)
from spcl.extract.names import NamesFinderMissing, check_finder
from spcl.manifest import write_manifest
from spcl.mask.operators import DEFAULT_OPERATOR
from spcl.mask.vault import open_vault
from spcl.mask_stage.config import MaskJobConfig
from spcl.mask_stage.inputs import (
    InputRows,
    MaskJobError,
    count_rows,
    file_key,
    list_input_files,
    read_rows,
)
from spcl.mask_stage.metrics import MaskMetrics, MaskRunFacts, build_metrics, rate
from spcl.mask_stage.outputs import FailedRows, MaskedRows
from spcl.mask_stage.schema import FAILED_SCHEMA, MASKED_SCHEMA
from spcl.mask_stage.state import FileStats, Marker, checked_marker, load_markers, write_json_atomic
from spcl.mask_stage.task import MaskPass, MaskRunner

log = logging.getLogger("spcl.mask_stage")

CARRIED_STATS = (
    "generated_tokens",
    "prompt_tokens",
    "token_documents",
    "extract_seconds",
    "seconds",
    "outputs",
    "parsed",
    "checked_rows",
    "hallucinated_rows",
    "tier_checked",
    "tier_errors",
    "tier_seconds",
)
"""What a retry pass carries over from the file's counters (the rest is counted from the
committed parts)."""


def _count_column(values: list[Any]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def count_outputs(stats: FileStats, input_rows: int, masked: pa.Table, failed: pa.Table) -> None:
    """Counts of the file's committed outputs (not of this pass): what metrics and reconciliation
    read."""
    stats.documents = input_rows
    stats.masked = masked.num_rows
    stats.failed = failed.num_rows
    stats.failed_transient = sum(bool(v) for v in failed.column("transient").to_pylist())
    stats.failed_reasons = _count_column(failed.column("reason").to_pylist())
    stats.fallback = sum(bool(v) for v in masked.column("fallback").to_pylist())
    by_tier = [
        lang or "other"
        for lang, by in zip(
            masked.column("lang").to_pylist(),
            masked.column("extracted_by").to_pylist(),
            strict=True,
        )
        if by == "tier"
    ]
    stats.tier_cleared = _count_column(by_tier)
    spans = [s for row in masked.column("spans").to_pylist() for s in row or []]
    stats.entities = _count_column([s["type"] for s in spans])
    stats.found_by = _count_column([src for s in spans for src in s["found_by"] or []])


def finish(
    cfg: MaskJobConfig, keyed: list[tuple[Path, str]], hashes: dict[str, str], run: MaskRunFacts
) -> MaskMetrics:
    """Reconcile, write ``metrics.json`` and the output's and vault's ``manifest.json``; returns
    the metrics."""
    keys = {k for _, k in keyed}
    markers = {k: m for k, m in load_markers(cfg.output).items() if k in keys}
    metrics = build_metrics(
        cfg, markers, STAGE.reconcile(cfg, keyed, hashes, ("masked", "failed")), run
    )
    write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
    provenance = {
        "config_hash": metrics["config_hash"],
        "backend": cfg.backend,
        "model": metrics["model"],
        "prompt_version": metrics["prompt_version"],
        "run_id": cfg.run_id,
        "operators": {t: cfg.operators.get(t, DEFAULT_OPERATOR) for t in cfg.types},
        "names_finder": metrics["names_finder"],
        "name_lists": metrics["name_lists"],
    }
    tier = metrics["tier"]
    records: dict[str, int | dict[str, int]] = {
        "masked": metrics["masked"],
        "failed": metrics["failed"],
    }
    if tier["enabled"]:  # the masked rows the tier cleared (unchanged, no LLM), per language
        records |= {
            "tier_cleared": tier["cleared"],
            "tier_cleared_per_language": tier["cleared_per_language"],
        }
    write_manifest(cfg.output, kind="mask-output", records=records, **provenance)
    write_manifest(cfg.vault, kind="mask-vault", **provenance)
    return metrics


class MaskStage(VaultJob):
    """The mask job on the job skeleton (``spcl.executor.vaultjob``): a unit is one flagged Parquet
    file, its worker a :class:`MaskRunner` (the extractor and its model loaded once per process).
    The output or the vault inside the input, or inside a filter output folder, is refused
    (``spcl.io.inputs.UnsafeOutput``), and so is an output holding files masked with other release
    settings (``MaskJobConfig.release_hash``)."""

    config_type: ClassVar[type[MaskJobConfig]] = MaskJobConfig
    name: ClassVar[str] = "mask"
    ref: ClassVar[str] = "spcl.mask_stage.run:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output", "vault")
    error: ClassVar[type[JobError]] = MaskJobError
    settings_what: ClassVar[str] = (
        "masked with other mask settings (backend, model, adapter, fallback, types, "
        "chunk size, name finders or operators)"
    )
    parts: ClassVar[tuple[str, str]] = ("failed", "masked")
    schemas: ClassVar[dict[str, pa.Schema]] = {"failed": FAILED_SCHEMA, "masked": MASKED_SCHEMA}
    writer_prefix: ClassVar[str] = "mask"

    def list_units(self, cfg: MaskJobConfig) -> list[tuple[Path, str]]:
        """The flagged Parquet files and their keys."""
        return [(p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)]

    def needs_retry(self, cfg: MaskJobConfig, marker: DoneMarker) -> bool:
        """Transient failures (all failures with ``retry_failed``) to retry."""
        stats = marker.get("stats", {})
        return bool(stats.get("failed_transient") or (cfg.retry_failed and stats.get("failed")))

    def check_marker(self, path: Path, marker: DoneMarker) -> DoneMarker:
        """The marker when its fields have the right kinds (``spcl.mask_stage.state``), else
        ``MarkerError``."""
        return checked_marker(path, marker).to_dict()

    def count_rows(self, path: Path) -> int | None:
        """Rows from the file's footer."""
        return count_rows(path)

    def before_spark(self, cfg: MaskJobConfig, plan: Plan) -> None:
        """Fail fast on the driver on a missing or wrong vault key and an unreachable endpoint."""
        open_vault(cfg.vault).close()
        if plan.todo and is_server_backend(cfg.backend):
            with make_extractor(
                cfg.backend,
                model=cfg.model,
                endpoint=cfg.endpoint,
                types=cfg.types,
                options=cfg.options,
            ) as probe:
                probe.check()  # type: ignore[attr-defined]  # only a server extractor has it

    def before_units(self, cfg: MaskJobConfig, plan: Plan) -> None:
        """The name finder configured must be there (never a silent fallback to another one)."""
        if cfg.names or not is_model_backend(cfg.backend) or cfg.fallback in FALLBACK_BACKENDS:
            try:
                check_finder()
            except NamesFinderMissing as err:
                raise MaskJobError(str(err)) from err

    def setup(self, cfg: MaskJobConfig, clients: dict[str, Any]) -> MaskRunner:
        """The runner (``clients["extractor"]``: a given extractor, e.g. a test's)."""
        return MaskRunner(cfg, clients.get("extractor"))

    def check(self, worker: MaskRunner) -> None:
        """Ask the extractor whether it can serve (when it can tell)."""
        if worker.check is not None:
            worker.check()

    def retry_rows(self, cfg: MaskJobConfig, failed: pa.Table) -> pa.Array:
        """The transient failures; every failure with ``retry_failed``."""
        return (
            pa.array([True] * failed.num_rows, pa.bool_())
            if cfg.retry_failed
            else failed.column("transient")
        )

    def new_run(self, worker: MaskRunner, unit: UnitPass, settled: set[Any] | None) -> MaskPass:
        """A pass with the counters a retry carries over (:data:`CARRIED_STATS`, the latencies)."""
        stats = FileStats(files=1)
        if unit.prior is not None:
            prior = Marker.from_dict(unit.prior).stats
            for name in CARRIED_STATS:
                setattr(stats, name, getattr(prior, name))
            stats.latencies = list(prior.latencies)
        masked, failed = MaskedRows(), FailedRows()
        return MaskPass(
            unit=unit,
            settled=settled,
            stats=stats,
            rows={"failed": failed, "masked": masked},
            who=worker.identity(unit.path.name),
            masked=masked,
            failed=failed,
        )

    def read_unit(
        self, worker: MaskRunner, run: MaskPass
    ) -> Iterator[tuple[Sequence[Any], InputRows]]:
        """The file's rows in batches (``spcl.mask_stage.inputs.read_rows``) and their row keys."""
        for rows in read_rows(run.unit.path, run.unit.key, worker.cfg.batch_size):
            yield rows.row_keys, rows

    def settle(
        self, worker: MaskRunner, run: MaskPass, tables: dict[str, pa.Table]
    ) -> dict[str, object]:
        """The file's counts (:func:`count_outputs`) and its done-marker; the unit reports its
        input rows."""
        stats = run.stats
        count_outputs(stats, count_rows(run.unit.path), tables["masked"], tables["failed"])
        stats.seconds += time.perf_counter() - run.started
        run.records = stats.documents
        ex = worker.extractor
        marker = Marker(
            **run.unit.marker,
            backend=ex.name,
            model=ex.model,
            prompt_version=ex.prompt_version,
            config_hash=worker.config_hash,
            stats=stats,
        )
        return dict(marker.to_dict())

    def log_unit(self, run: MaskPass) -> None:
        """The file's counts."""
        stats = run.stats
        log.info(
            "%s (%s): %d documents, %d masked, %d failed (%d transient)",
            run.unit.path.name,
            run.mode,
            stats.documents,
            stats.masked,
            stats.failed,
            stats.failed_transient,
        )

    def finish(
        self, cfg: MaskJobConfig, plan: Plan, run: RunInfo, worker: MaskRunner | None
    ) -> MaskMetrics:
        """:func:`finish` with this run's counts and speed."""
        keyed, hashes = plan.context
        info: MaskRunFacts = {
            "run_id": cfg.run_id,
            "files_processed": run.files_processed,
            "files_skipped": run.files_skipped,
            "documents": run.records,
            "elapsed_seconds": run.elapsed_seconds,
            "docs_per_second": round(rate(run.records, run.elapsed_seconds), 3),
        }
        if run.engine == "spark":
            info = {"engine": "spark", **info}
        return finish(cfg, keyed, hashes, info)


STAGE = MaskStage()


def run_mask_job(cfg: MaskJobConfig, extractor: Extractor | None = None) -> MaskMetrics:
    """Run the job in this process over every input file with work to do; returns
    ``metrics.json``'s content."""
    return run_local(STAGE, cfg, {"extractor": extractor})


def run_mask_job_spark(
    cfg: MaskJobConfig, master: str | None = None, submitted: bool = False
) -> MaskMetrics:
    """Run the job with Spark: one task per input file with work to do, the same ``MaskRunner`` on
    executors.

    Executors read the vault key from their own environment (``SPCL_VAULT_KEY`` /
    ``SPCL_VAULT_KEY_FILE``, e.g. ``spark.executorEnv.SPCL_VAULT_KEY_FILE``); it is never shipped
    inside a task. Paths must be visible to every executor (local mode, or a shared filesystem).
    ``submitted``: running under spark-submit (``jobs/*.py``), whose master is kept unless
    ``master`` is given.
    """
    return run_spark(STAGE, cfg, master, submitted)
