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
import secrets
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.config import GeneralizeSettings
from spcl.executor import JobError, Plan, RunInfo, new_run_id, run_local, run_spark
from spcl.executor.counts import rate
from spcl.executor.filejob import FileJob, UnitPass, keep_settled, staging_area
from spcl.executor.flagged import batch_row_keys, count_rows, file_key, list_input_files, open_input
from spcl.executor.state import commit_unit, marker_file, write_json_atomic
from spcl.executor.units import part_path
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

    def _batches(self, path: Path) -> Iterator[pa.RecordBatch]:
        pf, columns = open_input(path, ("id", "text", "lang", "hits", "row_key", "source", "position"))
        yield from pf.iter_batches(batch_size=self.cfg.batch_size, columns=columns)

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

    def _kept(self, unit: UnitPass) -> tuple[pa.Table, pa.Table, set[str] | None]:
        """``(generalized, permanently failed, settled row keys)`` kept when this pass only retries the
        transient failures of an unchanged, committed file; else ``(empty, empty, None)`` (from scratch).

        A retry asks about every row the kept parts do not settle: the transient failures, and any row a run
        killed between its part writes left in neither part (so a row is never lost nor written twice)."""
        if unit.prior is None:
            return GENERALIZED_SCHEMA.empty_table(), FAILED_SCHEMA.empty_table(), None
        gen, failed = (read_generalize_part(part_path(self.output / name, unit.key), schema)
                       for name, schema in (("generalized", GENERALIZED_SCHEMA), ("failed", FAILED_SCHEMA)))
        return keep_settled(gen, failed, failed.column("transient"))

    def generalize_file(self, unit: UnitPass) -> int:
        """Generalize one input file end to end and commit it (outputs moved into place, then the marker);
        given a prior marker, exactly the transient failures are asked for again. The rows asked about."""
        started = time.perf_counter()
        path, key, marker = unit.path, unit.key, unit.prior
        prior_gen, prior_failed, settled = self._kept(unit)
        stats = GenStats(**marker["stats"]) if marker is not None else GenStats(files=1)
        backend, model, prompt_version = self.identity
        writer = f"gen-{key}-{self.run_id}-{secrets.token_hex(2)}"  # new per run and attempt: never overwritten
        gen_rows: dict[str, list[Any]] = {n: [] for n in GENERALIZED_SCHEMA.names}
        failed_rows: dict[str, list[Any]] = {n: [] for n in FAILED_SCHEMA.names}
        index = asked = 0
        seen: set[str] = set()  # row keys of this pass: a later row with the same key is a duplicate
        with (staging_area(self.output, self.cfg.vault, key) as (tmp, vault_stage),
              closing(open_vault(vault_stage, self.key, writer=writer)) as vault):
            for batch in self._batches(path):
                cols = {c: batch.column(c).to_pylist() for c in ("id", "row_key", "source", "position")
                        if c in batch.schema.names}
                all_keys = batch_row_keys(cols, batch.num_rows, key, index)
                index += batch.num_rows
                keep: list[bool] = []
                for j, rk in enumerate(all_keys):
                    if settled is not None and rk in settled:  # a retry pass: only the unsettled rows
                        keep.append(False)
                    elif rk in seen:
                        keep.append(False)
                        stats.documents += settled is None
                        for n, v in zip(FAILED_SCHEMA.names, (cols["id"][j], rk, "duplicate_row_key", False, backend,
                                                              model, prompt_version, path.name), strict=True):
                            failed_rows[n].append(v)
                    else:
                        seen.add(rk)
                        keep.append(True)
                batch = batch.filter(pa.array(keep, pa.bool_()))
                row_keys = [rk for rk, k in zip(all_keys, keep, strict=True) if k]
                if not batch.num_rows:
                    continue
                asked += batch.num_rows
                ids, prepared, langs, counted = self.prepare(batch, stats)
                docs = [p for p in prepared if isinstance(p, DocInput)]
                results = iter(self.generalizer.run(docs)) if docs else iter(())
                for i, item in enumerate(prepared):
                    if settled is None:
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
                        for n, v in zip(FAILED_SCHEMA.names, (shown, row_keys[i], reason, is_transient_reason(reason),
                                                              backend, model, prompt_version, path.name), strict=True):
                            failed_rows[n].append(v)
                        continue
                    vault.put(row_keys[i], res.mapping, row_id=str(shown), source_id=ids[i])
                    row = (shown, row_keys[i], langs[i], res.text, res.spans, len(res.spans), backend, model,
                           prompt_version, path.name, writer)
                    for n, v in zip(GENERALIZED_SCHEMA.names, row, strict=True):
                        gen_rows[n].append(v)
            vault.close()
            gen = pa.concat_tables([prior_gen, pa.table(gen_rows, schema=GENERALIZED_SCHEMA)])
            failed = pa.concat_tables([prior_failed, pa.table(failed_rows, schema=FAILED_SCHEMA)])
            stats.generalized = gen.num_rows
            stats.failed = failed.num_rows
            stats.failed_transient = sum(bool(v) for v in failed.column("transient").to_pylist())
            stats.failed_reasons = dict(sorted(Counter(failed.column("reason").to_pylist()).items()))
            commit_unit(vault_stage / f"{writer}.jsonl", Path(self.cfg.vault) / f"{writer}.jsonl",
                        [(part_path(self.output / name, key), table)
                         for name, table in (("failed", failed), ("generalized", gen))], tmp)
            stats.seconds += time.perf_counter() - started
            write_json_atomic(marker_file(self.output / "_done", key),
                              {**unit.marker, "backend": backend, "model": model, "prompt_version": prompt_version,
                               "stats": asdict(stats)})
            log.info("%s (%s): %d documents, %d asked, %d generalized, %d failed (%d transient)", path.name,
                     "retry" if marker is not None else "full", stats.documents, asked, stats.generalized,
                     stats.failed, stats.failed_transient)
            return asked

    def close(self) -> None:
        """Release the clients."""
        self.extractor.close()
        if self.chat is not None and id(self.chat) != id(self.extractor):  # one client may serve both
            self.chat.close()


class GeneralizeStage(FileJob):
    """The generalize job on the job skeleton (``spcl.executor.filejob``): a unit is one flagged Parquet file,
    its worker a :class:`GeneralizeRunner` (extractor and chat client built once per process)."""

    config_type: ClassVar[type[GeneralizeJobConfig]] = GeneralizeJobConfig
    name: ClassVar[str] = "generalize"
    ref: ClassVar[str] = "spcl.generalize.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output", "vault")
    error: ClassVar[type[JobError]] = JobError
    settings_what: ClassVar[str] = ("generalized with other generalize settings (backend, model, types, method "
                                    "settings, span extractor, name finders or adapters)")

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

    def run_unit(self, worker: GeneralizeRunner, unit: UnitPass) -> int:
        """Generalize one file (or retry its transient failures) and commit it; the rows asked about."""
        return worker.generalize_file(unit)

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
