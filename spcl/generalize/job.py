"""The generalize job: flagged Parquet → spans → two-stage generalization → generalized / failed / vault.

Layout under ``--output`` (``<key>`` names one input file, as in ``spcl mask``)::

    generalized/part-<key>.parquet  id, lang, generalized_text, spans (type, start, end in the NFC source,
                                    out_start, out_end in the output, replacement, kind generalized|label,
                                    rank), n_spans, backend, model, prompt_version, source_file
    failed/part-<key>.parquet       id, row_key, reason, transient, backend, model, prompt_version,
                                    source_file (no text)
    _done/<key>.json                the checkpoint of one input file: its content hash, runs and counts
    metrics.json                    totals over every finished file (counts and rates, never values) and the
                                    reconciliation: input rows == generalized + failed, from the footers

The originals go to the vault (``--vault``, ``gen-<key>.jsonl``, encrypted by ``spcl.mask.vault``): per
document ``{span index: original}``, so ``spcl.generalize.engine.restore(text, spans, mapping)`` gives the
source back. Spans come from the extractor of ``--backend`` (``rules``: the rules extractor) ∪ the input's
rule hits (``hits`` column; the detectors run again when it is missing). **Fail closed**: a document whose
extraction, LLM calls or release check fails goes to ``failed/`` with the reason, never to ``generalized/``; a row
whose row key an earlier row of the file has is ``duplicate_row_key`` (one vault record per key and file).
Files are committed vault → failed → generalized → done-marker. A failure of the serving side (an extraction,
candidate or attack request that failed *transiently* after the client's retries: timeouts, resets, HTTP
408/409/425/429/5xx; ``spcl.extract.backends.transient``) is written with ``transient = true``; the run then
exits 3 and a rerun asks again for exactly those rows (and the rows sharing their keys; the file's other rows
are kept), as ``spcl mask`` does.
A rerun skips files that are finished without transient failures, and redoes a changed file from scratch.
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

from spcl.config import GeneralizeSettings
from spcl.executor import JobError, Plan, RunInfo, new_run_id, run_local, run_spark
from spcl.executor.counts import rate
from spcl.executor.filejob import DUPLICATE, NEW, UnitPass, UnitRun
from spcl.executor.flagged import batch_row_keys, count_rows, file_key, list_input_files, open_input
from spcl.executor.state import write_json_atomic
from spcl.executor.vaultjob import PartRows, VaultJob
from spcl.extract.backends import Extractor, make_extractor
from spcl.extract.backends.chat import ChatClient
from spcl.extract.backends.registry import (
    GENERALIZE_BACKENDS,
    RULES_BACKEND,
    is_model_backend,
    make_chat,
    takes_option,
)
from spcl.extract.contract import parse_extraction
from spcl.generalize.config import GeneralizeJobConfig
from spcl.generalize.engine import DocInput, Generalizer
from spcl.generalize.metrics import build_metrics
from spcl.generalize.prompts import PROMPT_VERSION
from spcl.generalize.records import (
    FAILED_SCHEMA,
    GENERALIZED_SCHEMA,
    SPAN_TYPE,
    STAGE_PREFIXES,
    GenStats,
    is_transient_reason,
    read_generalize_part,
)
from spcl.generalize.spans import collect_spans, document_hits
from spcl.mask.ids import release_id
from spcl.mask.vault import open_vault, resolve_key
from spcl.text import guess_lang, normalize

__all__ = ["FAILED_SCHEMA", "GENERALIZED_SCHEMA", "SPAN_TYPE", "STAGE", "STAGE_PREFIXES", "GenStats",
           "GeneralizeJobConfig", "GeneralizeRunner", "GeneralizeStage", "build_clients", "build_metrics",
           "is_transient_reason", "iter_generalized", "run_generalize_job", "run_generalize_job_spark"]

log = logging.getLogger("spcl.generalize")


def build_clients(cfg: GeneralizeJobConfig) -> tuple[Extractor, ChatClient | None]:
    """The extractor and the chat client of ``cfg.backend`` (an in-process model is loaded once, shared)."""
    if not is_model_backend(cfg.backend):
        return make_extractor(cfg.backend, types=cfg.types), None
    if cfg.backend not in GENERALIZE_BACKENDS:
        *first, last = GENERALIZE_BACKENDS
        raise ValueError(f"unknown generalize backend {cfg.backend!r}; choose {', '.join(first)} or {last} "
                         "(serve a vLLM model with `vllm serve` and use --backend openai)")
    if cfg.extract_backend is not None and not is_model_backend(cfg.extract_backend):
        return make_extractor(cfg.extract_backend, types=cfg.types), make_chat(
            cfg.backend, model=cfg.model, endpoint=cfg.endpoint, options=cfg.options)
    if takes_option(cfg.backend, "chat", "loaded"):  # the chat client shares the extractor's weights
        extractor = make_extractor(cfg.backend, model=cfg.model, types=cfg.types, options=cfg.extract_options)
        loaded = (extractor.net, extractor.tokenizer)  # type: ignore[attr-defined]  # a loaded model
        return extractor, make_chat(cfg.backend, model=cfg.model, options={"loaded": loaded, **cfg.options})
    extractor = make_extractor(cfg.backend, model=cfg.model, endpoint=cfg.endpoint, types=cfg.types,
                               options=cfg.extract_options)
    return extractor, make_chat(cfg.backend, model=cfg.model, endpoint=cfg.endpoint, options=cfg.options)


class GeneralizeRunner:
    """Runs the job's unit of work (one input file) with clients built once per process."""

    def __init__(self, cfg: GeneralizeJobConfig, extractor: Extractor | None = None, chat: ChatClient | None = None,
                 vault_key: bytes | None = None):
        self.cfg = cfg
        self.key = vault_key if vault_key is not None else resolve_key()
        self.run_id = new_run_id()  # names this process's vault files (one per input file and run)
        self._ids = open_vault(cfg.vault, self.key)  # creates the header, or checks the key against it
        self._ids.close()  # kept for its keyed id hash only (spcl.mask.ids)
        if extractor is None:
            extractor, chat = build_clients(cfg)
        self.extractor, self.chat = extractor, chat
        self.generalizer = Generalizer(chat, GeneralizeSettings(**cfg.settings))
        self.output = Path(cfg.output)
        for sub in ("generalized", "failed", "_done", "_tmp"):
            (self.output / sub).mkdir(parents=True, exist_ok=True)

    @property
    def identity(self) -> tuple[str, str, str]:
        """``(backend, model, prompt version)`` written on every row."""
        if self.chat is None:
            return RULES_BACKEND, self.extractor.model, "rules-ladders-v1"
        return self.cfg.backend, self.chat.model, PROMPT_VERSION

    def prepare(self, batch: pa.RecordBatch, stats: GenStats
                ) -> tuple[list[str | None], list[DocInput | str], list[str | None], set[int]]:
        """Ids, and per row a :class:`DocInput` or the reason it cannot be generalized; the langs; and the rows
        the extractor reported token counts for (its counts are added to ``stats``)."""
        ids = batch.column("id").to_pylist()
        texts = batch.column("text").to_pylist()
        names = batch.schema.names
        langs = batch.column("lang").to_pylist() if "lang" in names else [None] * len(ids)
        hits = batch.column("hits").to_pylist() if "hits" in names else [None] * len(ids)
        todo = [i for i, t in enumerate(texts) if isinstance(t, str) and ids[i] is not None]
        extractions = self.extractor.run([normalize(texts[i]) for i in todo]) if todo else []
        counted: set[int] = set()
        out: list[DocInput | str] = ["no_text" if ids[i] is not None else "no_id" for i in range(len(ids))]
        for i, ext in zip(todo, extractions, strict=True):
            text = normalize(texts[i])
            stats.extract_tokens += ext.generated_tokens or 0
            stats.extract_prompt_tokens += ext.prompt_tokens or 0
            if ext.generated_tokens is not None or ext.prompt_tokens is not None:
                counted.add(i)
            if not ext.ok:
                out[i] = f"extract:{ext.error or 'no_output'}"
                continue
            parsed = parse_extraction(ext.raw or "", text, self.cfg.types)
            if not parsed.parse_success:
                out[i] = "extract:" + ("hallucinated_near_source" if parsed.near_source_rows else "unparseable_output")
                continue
            try:
                found = document_hits(text, hits[i])  # the hits column (None: none) ∪ the detectors again
                entities = collect_spans(text, parsed.candidates, found, types=self.cfg.types, names=self.cfg.names)
                kept = [(h.type, h.start, h.end) for h in found]
            except Exception as err:
                out[i] = f"spans_error:{type(err).__name__}"
                continue
            out[i] = DocInput(str(ids[i]), text, langs[i] or guess_lang(text), entities, kept)
        return ids, out, langs, counted

    def take(self, run: UnitRun, keys: Sequence[str], batch: pa.RecordBatch, picked: list[str]) -> None:
        """Generalize one batch of rows (``picked``: ``UnitRun.pick`` of their ``keys``) into the pass's
        ``generalized`` / ``failed`` rows (and its vault)."""
        stats, failed_rows, name = run.stats, run.rows["failed"], run.unit.path.name
        backend, model, prompt_version = self.identity
        if DUPLICATE in picked:
            raw_ids = batch.column("id").to_pylist()
            for j, verdict in enumerate(picked):
                if verdict == DUPLICATE:
                    stats.documents += run.settled is None
                    failed_rows.add(raw_ids[j], keys[j], "duplicate_row_key", False, backend, model, prompt_version,
                                    name)
        batch = batch.filter(pa.array([v == NEW for v in picked], pa.bool_()))
        row_keys = [rk for rk, v in zip(keys, picked, strict=True) if v == NEW]
        if not batch.num_rows:
            return
        run.records += batch.num_rows
        ids, prepared, langs, counted = self.prepare(batch, stats)
        docs = [p for p in prepared if isinstance(p, DocInput)]
        results = iter(self.generalizer.run(docs)) if docs else iter(())
        for i, item in enumerate(prepared):
            if run.settled is None:
                stats.documents += 1
            res = next(results) if isinstance(item, DocInput) else None
            if res is not None:
                stats.add(res)
            stats.token_documents += i in counted or (res is not None and res.counted)
            if isinstance(item, str):
                reason: str | None = item
            else:
                assert res is not None  # an item that is not a reason is a document: it has a result
                reason = res.reason
            shown = release_id(ids[i], self._ids)  # an id that holds a value: released as its keyed hash
            if ids[i] is None or reason is not None or res is None or res.text is None:
                reason = "no_id" if ids[i] is None else (reason or "unknown")
                failed_rows.add(shown, row_keys[i], reason, is_transient_reason(reason), backend, model,
                                prompt_version, name)
                continue
            run.vault.put(row_keys[i], res.mapping, row_id=str(shown), source_id=ids[i])
            run.rows["generalized"].add(shown, row_keys[i], langs[i], res.text, res.spans, len(res.spans), backend,
                                        model, prompt_version, name, run.writer)

    def close(self) -> None:
        """Release the clients."""
        self.extractor.close()
        if self.chat is not None and id(self.chat) != id(self.extractor):  # one client may serve both
            self.chat.close()


class GeneralizeStage(VaultJob):
    """The generalize job on the job skeleton (``spcl.executor.vaultjob``): a unit is one flagged Parquet file,
    its worker a :class:`GeneralizeRunner` (extractor and chat client built once per process)."""

    config_type: ClassVar[type[GeneralizeJobConfig]] = GeneralizeJobConfig
    name: ClassVar[str] = "generalize"
    ref: ClassVar[str] = "spcl.generalize.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output", "vault")
    error: ClassVar[type[JobError]] = JobError
    settings_what: ClassVar[str] = ("generalized with other generalize settings (backend, model, types, method "
                                    "settings, span extractor, name finders or adapters)")
    parts: ClassVar[tuple[str, str]] = ("failed", "generalized")
    schemas: ClassVar[dict[str, pa.Schema]] = {"failed": FAILED_SCHEMA, "generalized": GENERALIZED_SCHEMA}
    writer_prefix: ClassVar[str] = "gen"

    def list_units(self, cfg: GeneralizeJobConfig) -> list[tuple[Path, str]]:
        """The flagged Parquet files and their keys."""
        return [(p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)]

    def needs_retry(self, cfg: GeneralizeJobConfig, marker: dict[str, Any]) -> bool:
        """Transient failures to retry."""
        return bool(marker.get("stats", {}).get("failed_transient"))

    def count_rows(self, path: Path) -> int | None:
        """Rows from the file's footer."""
        return count_rows(path)

    def before_spark(self, cfg: GeneralizeJobConfig, plan: Plan) -> None:
        """Check the vault key on the driver first."""
        open_vault(cfg.vault).close()

    def setup(self, cfg: GeneralizeJobConfig, clients: dict[str, Any]) -> GeneralizeRunner:
        """The runner (``clients["extractor"]``, ``clients["chat"]``: given clients, e.g. a test's)."""
        return GeneralizeRunner(cfg, clients.get("extractor"), clients.get("chat"))

    def check(self, worker: GeneralizeRunner) -> None:
        """Ask the chat client whether it can serve (the rules backend has none)."""
        if worker.chat is not None:
            worker.chat.check()

    def read_part(self, path: Path, part: str) -> pa.Table:
        """A committed part (``spcl.generalize.records.read_generalize_part``)."""
        return read_generalize_part(path, self.schemas[part])

    def new_run(self, worker: GeneralizeRunner, unit: UnitPass, settled: set[Any] | None) -> UnitRun:
        """A pass with the file's counters (a retry carries them over)."""
        stats = GenStats(**unit.prior["stats"]) if unit.prior is not None else GenStats(files=1)
        return UnitRun(unit=unit, settled=settled, stats=stats,
                       rows={name: PartRows(schema) for name, schema in self.schemas.items()})

    def read_unit(self, worker: GeneralizeRunner, run: UnitRun) -> Iterator[tuple[Sequence[str], pa.RecordBatch]]:
        """The file's rows in batches and their row keys (``spcl.executor.flagged.batch_row_keys``)."""
        pf, columns = open_input(run.unit.path, ("id", "text", "lang", "hits", "row_key", "source", "position"))
        index = 0
        for batch in pf.iter_batches(batch_size=worker.cfg.batch_size, columns=columns):
            cols = {c: batch.column(c).to_pylist() for c in ("id", "row_key", "source", "position")
                    if c in batch.schema.names}
            keys = batch_row_keys(cols, batch.num_rows, run.unit.key, index)
            index += batch.num_rows
            yield keys, batch

    def take(self, worker: GeneralizeRunner, run: UnitRun, keys: Sequence[str], batch: pa.RecordBatch,
             picked: list[str]) -> None:
        """:meth:`GeneralizeRunner.take`."""
        worker.take(run, keys, batch, picked)

    def settle(self, worker: GeneralizeRunner, run: UnitRun, tables: dict[str, pa.Table]) -> dict[str, Any]:
        """The file's counts from its committed parts, and its done-marker."""
        stats, failed = run.stats, tables["failed"]
        stats.generalized = tables["generalized"].num_rows
        stats.failed = failed.num_rows
        stats.failed_transient = sum(bool(v) for v in failed.column("transient").to_pylist())
        stats.failed_reasons = dict(sorted(Counter(failed.column("reason").to_pylist()).items()))
        stats.seconds += time.perf_counter() - run.started
        backend, model, prompt_version = worker.identity
        return {**run.unit.marker, "backend": backend, "model": model, "prompt_version": prompt_version,
                "stats": asdict(stats)}

    def log_unit(self, run: UnitRun) -> None:
        """The file's counts and the rows asked about."""
        stats = run.stats
        log.info("%s (%s): %d documents, %d asked, %d generalized, %d failed (%d transient)", run.unit.path.name,
                 run.mode, stats.documents, run.records, stats.generalized, stats.failed, stats.failed_transient)

    def finish(self, cfg: GeneralizeJobConfig, plan: Plan, run: RunInfo,
               worker: GeneralizeRunner | None) -> dict[str, Any]:
        """``metrics.json`` with this run's counts and speed, and the reconciliation."""
        keyed, hashes = plan.context
        info: dict[str, Any] = {"engine": "spark"} if run.engine == "spark" else {}
        info |= {"files_processed": run.files_processed, "files_skipped": run.files_skipped,
                 "documents": run.records, "elapsed_seconds": run.elapsed_seconds,
                 "docs_per_second": round(rate(run.records, run.elapsed_seconds), 6)}
        reconciliation = self.reconcile(cfg, keyed, hashes, ("generalized", "failed"))
        metrics = build_metrics(cfg.output, cfg.backend, cfg.settings,
                                worker.identity if worker is not None else None, info, reconciliation)
        write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
        return metrics


STAGE = GeneralizeStage()


def run_generalize_job(cfg: GeneralizeJobConfig, extractor: Extractor | None = None,
                       chat: ChatClient | None = None) -> dict[str, Any]:
    """Run the job in this process over every unfinished input file; returns ``metrics.json``'s content."""
    return run_local(STAGE, cfg, {"extractor": extractor, "chat": chat})


def run_generalize_job_spark(cfg: GeneralizeJobConfig, master: str | None = None,
                             submitted: bool = False) -> dict[str, Any]:
    """Run the job with Spark: one task per unfinished input file, the same runner on executors.

    Executors read the vault key from their own environment (``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``);
    paths must be visible to every executor.
    ``submitted``: running under spark-submit (``jobs/*.py``), whose master is kept unless ``master`` is given.
    """
    return run_spark(STAGE, cfg, master, submitted)


def iter_generalized(output: str | Path) -> Iterable[dict[str, Any]]:
    """Every generalized row of an output folder (for tests and inspection)."""
    for part in sorted((Path(output) / "generalized").glob("*.parquet")):
        yield from pq.read_table(part).to_pylist()
