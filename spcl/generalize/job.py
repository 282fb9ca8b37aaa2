"""The generalize job: flagged Parquet → spans → two-stage generalization → generalized / failed /
vault.

Layout under ``--output`` (``<key>`` names one input file, as in ``spcl mask``)::

    generalized/part-<key>.parquet
                        id, lang, generalized_text, spans (type, start, end in the NFC source,
                        out_start, out_end in the output, replacement, kind generalized|label,
                        rank), n_spans, backend, model, prompt_version, source_file
    failed/part-<key>.parquet
                        id, row_key, reason, transient, backend, model, prompt_version,
                        source_file (no text)
    _done/<key>.json    the checkpoint of one input file: its content hash, runs and counts
    metrics.json        totals over every finished file (counts and rates, never values) and the
                        reconciliation: input rows == generalized + failed, from the footers

The originals go to the vault (``--vault``, ``gen-<key>.jsonl``, encrypted by ``spcl.mask.vault``):
per document ``{span index: original}``, so ``spcl.generalize.outcome.restore(text, spans,
mapping)`` gives the source back. Spans come from the extractor of ``--backend`` (``rules``: the
rules extractor) ∪ the input's rule hits (``hits`` column; the detectors run again when it is
missing). **Fail closed**: a document whose extraction, LLM calls or release check fails goes to
``failed/`` with the reason, never to ``generalized/``; a row whose row key an earlier row of the
file has is ``duplicate_row_key`` (one vault record per key and file). Files are committed vault →
failed → generalized → done-marker. A failure of the serving side (an extraction, candidate or
attack request that failed *transiently* after the client's retries: timeouts, resets, HTTP
408/409/425/429/5xx; ``spcl.extract.backends.transient``) is written with ``transient = true``; the
run then exits 3 and a rerun asks again for exactly those rows (and the rows sharing their keys; the
file's other rows are kept), as ``spcl mask`` does. A rerun skips files that are finished without
transient failures, and redoes a changed file from scratch.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.executor import JobError, Plan, RunInfo, run_local, run_spark
from spcl.executor.counts import rate
from spcl.executor.flagged import batch_row_keys, count_rows, file_key, list_input_files, open_input
from spcl.executor.state import DoneMarker, write_json_atomic
from spcl.executor.unitpass import UnitPass
from spcl.executor.vaultjob import PartRows, VaultJob, VaultRun
from spcl.extract.backends import Extractor
from spcl.extract.backends.chat import ChatClient
from spcl.generalize.config import GeneralizeJobConfig
from spcl.generalize.metrics import GeneralizeMetrics, GeneralizeRunFacts, build_metrics
from spcl.generalize.records import (
    FAILED_SCHEMA,
    GENERALIZED_SCHEMA,
    SPAN_TYPE,
    STAGE_PREFIXES,
    GenStats,
    is_transient_reason,
    read_generalize_part,
)
from spcl.generalize.runner import GeneralizeRunner
from spcl.mask.vault import open_vault

__all__ = [
    "FAILED_SCHEMA",
    "GENERALIZED_SCHEMA",
    "SPAN_TYPE",
    "STAGE",
    "STAGE_PREFIXES",
    "GenStats",
    "GeneralizeJobConfig",
    "GeneralizeStage",
    "build_metrics",
    "is_transient_reason",
    "iter_generalized",
    "run_generalize_job",
    "run_generalize_job_spark",
]

log = logging.getLogger("spcl.generalize")


class GeneralizeStage(VaultJob):
    """The generalize job on the job skeleton (``spcl.executor.vaultjob``): a unit is one flagged
    Parquet file, its worker a :class:`GeneralizeRunner` (extractor and chat client built once per
    process)."""

    config_type: ClassVar[type[GeneralizeJobConfig]] = GeneralizeJobConfig
    name: ClassVar[str] = "generalize"
    ref: ClassVar[str] = "spcl.generalize.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output", "vault")
    error: ClassVar[type[JobError]] = JobError
    settings_what: ClassVar[str] = (
        "generalized with other generalize settings (backend, model, types, method "
        "settings, span extractor, name finders or adapters)"
    )
    parts: ClassVar[tuple[str, str]] = ("failed", "generalized")
    schemas: ClassVar[dict[str, pa.Schema]] = {
        "failed": FAILED_SCHEMA,
        "generalized": GENERALIZED_SCHEMA,
    }
    writer_prefix: ClassVar[str] = "gen"

    def list_units(self, cfg: GeneralizeJobConfig) -> list[tuple[Path, str]]:
        """The flagged Parquet files and their keys."""
        return [(p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)]

    def needs_retry(self, cfg: GeneralizeJobConfig, marker: DoneMarker) -> bool:
        """Transient failures to retry."""
        return bool(marker.get("stats", {}).get("failed_transient"))

    def count_rows(self, path: Path) -> int | None:
        """Rows from the file's footer."""
        return count_rows(path)

    def before_spark(self, cfg: GeneralizeJobConfig, plan: Plan) -> None:
        """Check the vault key on the driver first."""
        open_vault(cfg.vault).close()

    def setup(self, cfg: GeneralizeJobConfig, clients: dict[str, Any]) -> GeneralizeRunner:
        """The runner (``clients["extractor"]``, ``clients["chat"]``: given clients, e.g. a
        test's)."""
        return GeneralizeRunner(cfg, clients.get("extractor"), clients.get("chat"))

    def check(self, worker: GeneralizeRunner) -> None:
        """Ask the chat client whether it can serve (the rules backend has none)."""
        if worker.chat is not None:
            worker.chat.check()

    def read_part(self, path: Path, part: str) -> pa.Table:
        """A committed part (``spcl.generalize.records.read_generalize_part``)."""
        return read_generalize_part(path, self.schemas[part])

    def new_run(
        self, worker: GeneralizeRunner, unit: UnitPass, settled: set[Any] | None
    ) -> VaultRun:
        """A pass with the file's counters (a retry carries them over)."""
        stats = GenStats(**unit.prior["stats"]) if unit.prior is not None else GenStats(files=1)
        return VaultRun(
            unit=unit,
            settled=settled,
            stats=stats,
            rows={name: PartRows(schema) for name, schema in self.schemas.items()},
        )

    def read_unit(
        self, worker: GeneralizeRunner, run: VaultRun
    ) -> Iterator[tuple[Sequence[str], pa.RecordBatch]]:
        """The file's rows in batches and their row keys
        (``spcl.executor.flagged.batch_row_keys``)."""
        pf, columns = open_input(
            run.unit.path, ("id", "text", "lang", "hits", "row_key", "source", "position")
        )
        index = 0
        for batch in pf.iter_batches(batch_size=worker.cfg.batch_size, columns=columns):
            cols = {
                c: batch.column(c).to_pylist()
                for c in ("id", "row_key", "source", "position")
                if c in batch.schema.names
            }
            keys = batch_row_keys(cols, batch.num_rows, run.unit.key, index)
            index += batch.num_rows
            yield keys, batch

    def settle(
        self, worker: GeneralizeRunner, run: VaultRun, tables: dict[str, pa.Table]
    ) -> dict[str, object]:
        """The file's counts from its committed parts, and its done-marker."""
        stats, failed = run.stats, tables["failed"]
        stats.generalized = tables["generalized"].num_rows
        stats.failed = failed.num_rows
        stats.failed_transient = sum(bool(v) for v in failed.column("transient").to_pylist())
        stats.failed_reasons = dict(sorted(Counter(failed.column("reason").to_pylist()).items()))
        stats.seconds += time.perf_counter() - run.started
        backend, model, prompt_version = worker.identity
        return {
            **run.unit.marker,
            "backend": backend,
            "model": model,
            "prompt_version": prompt_version,
            "stats": asdict(stats),
        }

    def log_unit(self, run: VaultRun) -> None:
        """The file's counts and the rows asked about."""
        stats = run.stats
        log.info(
            "%s (%s): %d documents, %d asked, %d generalized, %d failed (%d transient)",
            run.unit.path.name,
            run.mode,
            stats.documents,
            run.records,
            stats.generalized,
            stats.failed,
            stats.failed_transient,
        )

    def finish(
        self, cfg: GeneralizeJobConfig, plan: Plan, run: RunInfo, worker: GeneralizeRunner | None
    ) -> GeneralizeMetrics:
        """``metrics.json`` with this run's counts and speed, and the reconciliation."""
        keyed, hashes = plan.context
        info: GeneralizeRunFacts = {
            "files_processed": run.files_processed,
            "files_skipped": run.files_skipped,
            "documents": run.records,
            "elapsed_seconds": run.elapsed_seconds,
            "docs_per_second": round(rate(run.records, run.elapsed_seconds), 6),
        }
        if run.engine == "spark":
            info = {"engine": "spark", **info}
        reconciliation = self.reconcile(cfg, keyed, hashes, ("generalized", "failed"))
        metrics = build_metrics(
            cfg.output,
            cfg.backend,
            cfg.settings,
            worker.identity if worker is not None else None,
            info,
            reconciliation,
        )
        write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
        return metrics


STAGE = GeneralizeStage()


def run_generalize_job(
    cfg: GeneralizeJobConfig, extractor: Extractor | None = None, chat: ChatClient | None = None
) -> GeneralizeMetrics:
    """Run the job in this process over every unfinished input file; returns ``metrics.json``'s
    content."""
    return run_local(STAGE, cfg, {"extractor": extractor, "chat": chat})


def run_generalize_job_spark(
    cfg: GeneralizeJobConfig, master: str | None = None, submitted: bool = False
) -> GeneralizeMetrics:
    """Run the job with Spark: one task per unfinished input file, the same runner on executors.

    Executors read the vault key from their own environment (``SPCL_VAULT_KEY`` /
    ``SPCL_VAULT_KEY_FILE``); paths must be visible to every executor. ``submitted``: running under
    spark-submit (``jobs/*.py``), whose master is kept unless ``master`` is given.
    """
    return run_spark(STAGE, cfg, master, submitted)


def iter_generalized(output: str | Path) -> Iterable[dict[str, Any]]:
    """Every generalized row of an output folder (for tests and inspection)."""
    for part in sorted((Path(output) / "generalized").glob("*.parquet")):
        yield from pq.read_table(part).to_pylist()
