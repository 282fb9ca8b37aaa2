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

import hashlib
import json
import logging
import os
import secrets
import shutil
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spcl.entity_types import DEFAULT_TYPES
from spcl.executor import FileStage, JobError, Plan, RunInfo, Unit, UnitReport, new_run_id, run_local, run_spark
from spcl.executor.counts import rate, token_block
from spcl.executor.flagged import batch_row_keys, count_rows, file_key, list_input_files, open_input
from spcl.executor.state import (
    commit_unit,
    load_json_markers,
    marker_file,
    marker_unreadable,
    read_json_marker,
    read_part,
    remove_staging,
    write_json_atomic,
)
from spcl.executor.units import foreign_input, other_settings, part_path
from spcl.extract.backends import Extractor, make_extractor
from spcl.extract.backends.chat import ChatClient
from spcl.extract.backends.registry import make_chat
from spcl.extract.backends.transient import is_transient
from spcl.extract.contract import parse_extraction
from spcl.generalize.engine import DocInput, DocResult, Generalizer, GeneralizeSettings
from spcl.generalize.prompts import PROMPT_VERSION
from spcl.generalize.spans import collect_spans, document_hits
from spcl.manifest import sha256_file
from spcl.mask.ids import release_id
from spcl.progress import Progress
from spcl.text import guess_lang, normalize

log = logging.getLogger("spcl.generalize")

SPAN_TYPE = pa.struct([
    pa.field("type", pa.string(), nullable=False),
    pa.field("start", pa.int32(), nullable=False),
    pa.field("end", pa.int32(), nullable=False),
    pa.field("out_start", pa.int32(), nullable=False),
    pa.field("out_end", pa.int32(), nullable=False),
    pa.field("replacement", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("rank", pa.int32()),
])
GENERALIZED_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("row_key", pa.string(), nullable=False),  # unique per input row; the vault's record id
    pa.field("lang", pa.string()),
    pa.field("generalized_text", pa.string(), nullable=False),
    pa.field("spans", pa.list_(SPAN_TYPE)),
    pa.field("n_spans", pa.int32(), nullable=False),
    pa.field("backend", pa.string(), nullable=False),
    pa.field("model", pa.string(), nullable=False),
    pa.field("prompt_version", pa.string(), nullable=False),
    pa.field("source_file", pa.string(), nullable=False),
    pa.field("vault_file", pa.string(), nullable=False),  # the vault writer holding this row's originals
])
FAILED_SCHEMA = pa.schema([
    pa.field("id", pa.string()),  # null when the input row had no id
    pa.field("row_key", pa.string(), nullable=False),
    pa.field("reason", pa.string(), nullable=False),
    pa.field("transient", pa.bool_(), nullable=False),  # a rerun retries it (the server, not the document)
    pa.field("backend", pa.string(), nullable=False),
    pa.field("model", pa.string(), nullable=False),
    pa.field("prompt_version", pa.string(), nullable=False),
    pa.field("source_file", pa.string(), nullable=False),
])
STAGE_PREFIXES: tuple[str, ...] = ("extract:", "candidates:", "attack:")
"""Reasons that wrap a backend reason code: ``extract:http_503`` is transient when ``http_503`` is."""


def is_transient_reason(reason: str) -> bool:
    """True when a failed row's ``reason`` is a transient backend failure a rerun retries.

    >>> [is_transient_reason(r) for r in ("extract:http_503", "attack:timeout", "extract:unparseable_output",
    ...                                   "candidates:http_400", "release:uncovered_hit:PHONE", "no_id")]
    [True, True, False, False, False, False]
    """
    for prefix in STAGE_PREFIXES:
        if reason.startswith(prefix):
            return is_transient(reason[len(prefix):])
    return False


@dataclass(slots=True)
class GeneralizeJobConfig:
    """Everything a generalize run needs; ``options`` go to the chat client and the extractor."""

    input: str
    output: str
    vault: str
    backend: str = "rules"
    model: str | None = None
    endpoint: str | None = None
    batch_size: int = 32
    types: tuple[str, ...] = DEFAULT_TYPES
    options: dict[str, Any] = field(default_factory=dict)
    extract_options: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # GeneralizeSettings fields
    extract_backend: str | None = None  # None: the same backend finds the spans; "rules": the rules extractor
    names: bool = True  # add the CPU person-name finders' rows to the candidates (as spcl mask does)
    run_id: str = ""  # names the run in done-markers (set by run_generalize_job*)

    def to_json(self) -> str:
        """The config as JSON (for Spark workers)."""
        return json.dumps(asdict(self))

    def release_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the settings that decide what a generalized document holds: backend,
        model, types, method settings, span extractor, name finders, adapters (not timeouts or batch sizes)."""
        settings = asdict(GeneralizeSettings(**self.settings))  # defaults filled in: {} and the conf's section agree
        body = {"backend": self.backend, "model": self.model, "types": list(self.types), "settings": settings,
                "extract_backend": self.extract_backend, "names": self.names,
                "adapters": [(self.options or {}).get("adapter"), (self.extract_options or {}).get("adapter")]}
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]

    @classmethod
    def from_json(cls, text: str) -> GeneralizeJobConfig:
        """The config back from :meth:`to_json`."""
        data = json.loads(text)
        data["types"] = tuple(data["types"])
        return cls(**data)


@dataclass(slots=True)
class GenStats:
    """Counts of one input file (the body of its done-marker); sums with ``merge``. No values."""

    files: int = 0
    documents: int = 0
    generalized: int = 0
    failed: int = 0
    failed_transient: int = 0
    failed_reasons: dict[str, int] = field(default_factory=dict)
    entities_by_type: dict[str, int] = field(default_factory=dict)
    spans_by_type: dict[str, int] = field(default_factory=dict)
    entities_by_rank: dict[str, int] = field(default_factory=dict)  # "0".."m-1", "label"
    labels_by_source: dict[str, int] = field(default_factory=dict)  # label_type | fallback
    fallback_by_type: dict[str, int] = field(default_factory=dict)  # generalizable entities that got a label
    generalizable_by_type: dict[str, int] = field(default_factory=dict)
    attacked_entities: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    guesses: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    extract_tokens: int = 0  # what the extractor generated and read (0 for the rules extractor)
    extract_prompt_tokens: int = 0
    token_documents: int = 0  # documents whose extractor reported token counts
    llm_seconds: float = 0.0
    seconds: float = 0.0

    def merge(self, other: GenStats) -> None:
        """Add ``other`` into this one."""
        for name in self.__dataclass_fields__:
            mine = getattr(self, name)
            if isinstance(mine, dict):
                for k, v in getattr(other, name).items():
                    mine[k] = mine.get(k, 0) + v
            else:
                setattr(self, name, mine + getattr(other, name))

    def add(self, res: DocResult) -> None:
        """Count one released document's decisions and costs."""
        self.llm_calls += res.llm_calls
        self.cache_hits += res.cache_hits
        self.guesses += res.guesses
        self.tokens += res.tokens
        self.prompt_tokens += res.prompt_tokens
        self.llm_seconds += res.seconds
        if res.reason is not None:
            return
        for span in res.spans:
            _inc(self.spans_by_type, span["type"])
        for dec in res.decisions:
            _inc(self.entities_by_type, dec.type)
            _inc(self.entities_by_rank, "label" if dec.rank is None else str(dec.rank))
            if dec.kind == "label":
                _inc(self.labels_by_source, dec.source if dec.source == "label_type" else "fallback")
            if dec.source != "label_type":
                _inc(self.generalizable_by_type, dec.type)
                if dec.kind == "label":
                    _inc(self.fallback_by_type, dec.type)
            if dec.guesses:
                self.attacked_entities += 1


def _transient_column(table: pa.Table) -> pa.Array:
    """The ``transient`` flags of a failed/ part written before that column existed, from its reasons."""
    return pa.array([is_transient_reason(r) for r in table.column("reason").to_pylist()], pa.bool_())


def _read_part(path: Path, schema: pa.Schema) -> pa.Table:
    """A committed part file as ``schema`` (empty when absent; ``spcl.executor.state.read_part``)."""
    return read_part(path, schema, {"transient": _transient_column})


def _inc(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1




def build_clients(cfg: GeneralizeJobConfig) -> tuple[Extractor, ChatClient | None]:
    """The extractor and the chat client of ``cfg.backend`` (the transformers model is loaded once, shared)."""
    if cfg.backend == "rules":
        return make_extractor("rules", types=cfg.types), None
    if cfg.backend not in ("openai", "transformers"):
        raise ValueError(f"unknown generalize backend {cfg.backend!r}; choose rules, openai or transformers "
                         "(serve a vLLM model with `vllm serve` and use --backend openai)")
    if cfg.extract_backend == "rules":
        return make_extractor("rules", types=cfg.types), make_chat(cfg.backend, model=cfg.model,
                                                                   endpoint=cfg.endpoint, options=cfg.options)
    if cfg.backend == "transformers":
        extractor = make_extractor("transformers", model=cfg.model, types=cfg.types, options=cfg.extract_options)
        loaded = (extractor.net, extractor.tokenizer)  # type: ignore[attr-defined]  # transformers only
        return extractor, make_chat("transformers", model=cfg.model, options={"loaded": loaded, **cfg.options})
    extractor = make_extractor("openai", model=cfg.model, endpoint=cfg.endpoint, types=cfg.types,
                               options=cfg.extract_options)
    return extractor, make_chat("openai", model=cfg.model, endpoint=cfg.endpoint, options=cfg.options)


class GeneralizeRunner:
    """Runs the job's unit of work (one input file) with clients built once per process."""

    def __init__(self, cfg: GeneralizeJobConfig, extractor: Extractor | None = None, chat: ChatClient | None = None,
                 vault_key: bytes | None = None):
        from spcl.mask.vault import open_vault, resolve_key

        self.cfg = cfg
        self.key = vault_key if vault_key is not None else resolve_key()
        self.run_id = new_run_id()  # names this process's vault files (one per input file and run)
        self._ids = open_vault(cfg.vault, self.key)  # creates the header, or checks the key against it
        self._ids.close()  # kept for its keyed id hash only (spcl.mask.ids)
        if extractor is None:
            extractor, chat = build_clients(cfg)
        self.extractor, self.chat = extractor, chat
        self.generalizer = Generalizer(chat, GeneralizeSettings(**cfg.settings))
        self.asked = 0  # rows the last process_file call asked about (all, or the retried ones)
        self.out = Path(cfg.output)
        for sub in ("generalized", "failed", "_done", "_tmp"):
            (self.out / sub).mkdir(parents=True, exist_ok=True)

    @property
    def identity(self) -> tuple[str, str, str]:
        """``(backend, model, prompt version)`` written on every row."""
        if self.chat is None:
            return "rules", self.extractor.model, "rules-ladders-v1"
        return self.cfg.backend, self.chat.model, PROMPT_VERSION

    def done_marker(self, key: str) -> Path:
        """The checkpoint file of input file ``key``."""
        return marker_file(self.out / "_done", key)

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

    def _prior(self, key: str, input_sha: str) -> tuple[dict[str, Any] | None, pa.Table, pa.Table, set[str] | None]:
        """``(marker, generalized, permanently failed, settled row keys)`` when this pass only retries the
        transient failures of an unchanged, committed file; else ``(None, empty, empty, None)`` (from scratch).

        A retry asks about every row the kept parts do not settle: the transient failures, and any row a run
        killed between its part writes left in neither part (so a row is never lost nor written twice)."""
        marker = read_json_marker(self.done_marker(key))
        if marker is not None and not isinstance(marker.get("stats"), dict):
            raise marker_unreadable(self.done_marker(key))
        empty = (GENERALIZED_SCHEMA.empty_table(), FAILED_SCHEMA.empty_table())
        if marker is None or marker.get("input_sha256") != input_sha or not marker["stats"].get("failed_transient"):
            return None, *empty, None
        gen, failed = (_read_part(part_path(self.out / name, key), schema)
                       for name, schema in (("generalized", GENERALIZED_SCHEMA), ("failed", FAILED_SCHEMA)))
        # every earlier output row of a retried key goes, so the pass redoes all the rows that share it (the first
        # generalized, the rest duplicate_row_key): each input row keeps exactly one output
        redo = pa.array(sorted(set(failed.filter(failed.column("transient")).column("row_key").to_pylist())),
                        pa.string())
        gen = gen.filter(pc.invert(pc.is_in(gen.column("row_key"), value_set=redo)))
        failed = failed.filter(pc.invert(pc.or_(failed.column("transient"),
                                                pc.is_in(failed.column("row_key"), value_set=redo))))
        settled = set(gen.column("row_key").to_pylist()) | set(failed.column("row_key").to_pylist())
        return marker, gen, failed, settled

    def process_file(self, path: Path, key: str) -> GenStats:
        """Generalize one input file end to end and commit it (outputs moved into place, then the marker);
        an unchanged file with transient failures gets exactly those rows asked for again."""
        from spcl.mask.vault import open_vault

        started = time.perf_counter()
        input_sha = sha256_file(path)  # the done-marker holds it: a changed file with the same name is redone
        marker, prior_gen, prior_failed, settled = self._prior(key, input_sha)
        stats = GenStats(**marker["stats"]) if marker is not None else GenStats(files=1)
        backend, model, prompt_version = self.identity
        tmp = self.out / "_tmp" / f"{key}.{os.getpid()}.{secrets.token_hex(4)}"
        tmp.mkdir(parents=True)
        vault_stage = Path(self.cfg.vault) / "_staging" / tmp.name
        writer = f"gen-{key}-{self.run_id}-{secrets.token_hex(2)}"  # new per run and attempt: never overwritten
        vault = open_vault(vault_stage, self.key, writer=writer)
        gen_rows: dict[str, list[Any]] = {n: [] for n in GENERALIZED_SCHEMA.names}
        failed_rows: dict[str, list[Any]] = {n: [] for n in FAILED_SCHEMA.names}
        index = asked = 0
        seen: set[str] = set()  # row keys of this pass: a later row with the same key is a duplicate
        try:
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
                        [(part_path(self.out / name, key), table)
                         for name, table in (("failed", failed), ("generalized", gen))], tmp)
            stats.seconds += time.perf_counter() - started
            runs = [*(marker or {}).get("runs", []), self.cfg.run_id]
            write_json_atomic(self.done_marker(key), {"input": str(path.resolve()), "key": key, "backend": backend,
                                                      "input_sha256": input_sha, "last_run": self.cfg.run_id,
                                                      "runs": runs, "model": model, "prompt_version": prompt_version,
                                                      "release_hash": self.cfg.release_hash(),
                                                      "stats": asdict(stats)})
            log.info("%s (%s): %d documents, %d asked, %d generalized, %d failed (%d transient)", path.name,
                     "retry" if marker is not None else "full", stats.documents, asked, stats.generalized,
                     stats.failed, stats.failed_transient)
            self.asked = asked
            return stats
        finally:
            vault.close()
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(vault_stage, ignore_errors=True)

    def close(self) -> None:
        """Release the clients."""
        self.extractor.close()
        if self.chat is not None and id(self.chat) != id(self.extractor):  # one client may serve both
            self.chat.close()


def _rate(num: float, den: float) -> float:
    return round(rate(num, den), 6)


def build_metrics(cfg: GeneralizeJobConfig, identity: tuple[str, str, str] | None,
                  run: dict[str, Any]) -> dict[str, Any]:
    """metrics.json: totals over every finished file, shares by rank and fallback per type (no values)."""
    total = GenStats()
    models, prompts = set(), set()
    done = Path(cfg.output) / "_done"
    for key, data in load_json_markers(done).items():
        try:
            total.merge(GenStats(**data["stats"]))
        except (TypeError, KeyError, ValueError, AttributeError):
            raise marker_unreadable(marker_file(done, key)) from None
        models.add(str(data.get("model", "")))
        prompts.add(str(data.get("prompt_version", "")))
    n_entities = sum(total.entities_by_rank.values())
    settings = asdict(GeneralizeSettings(**cfg.settings))
    return {
        "backend": cfg.backend,
        "model": identity[1] if identity else (next(iter(models)) if len(models) == 1 else "mixed"),
        "prompt_version": identity[2] if identity else (next(iter(prompts)) if len(prompts) == 1 else "mixed"),
        "models_in_output": sorted(models),
        "settings": {k: settings[k] for k in ("candidates", "guesses", "temperature", "attack_temperature",
                                              "max_tokens", "seed", "rules_rungs")},
        "files": total.files,
        "documents": total.documents,
        "generalized": total.generalized,
        "failed": total.failed,
        "failed_transient": total.failed_transient,
        "failed_reasons": total.failed_reasons,
        "entities": n_entities,
        "entities_by_type": dict(sorted(total.entities_by_type.items())),
        "spans_by_type": dict(sorted(total.spans_by_type.items())),
        "entities_by_rank": dict(sorted(total.entities_by_rank.items())),
        "share_by_rank": {k: _rate(v, n_entities) for k, v in sorted(total.entities_by_rank.items())},
        "labels_by_source": dict(sorted(total.labels_by_source.items())),
        "label_fallback_per_type": {t: {"generalizable": n, "label": total.fallback_by_type.get(t, 0),
                                        "share": _rate(total.fallback_by_type.get(t, 0), n)}
                                    for t, n in sorted(total.generalizable_by_type.items())},
        "attacked_entities": total.attacked_entities,
        "llm_calls": total.llm_calls,
        "llm_calls_per_entity": _rate(total.llm_calls, total.attacked_entities),
        "cache_hits": total.cache_hits,
        "guesses_per_document": _rate(total.guesses, total.documents),
        "tokens_per_document": _rate(total.tokens, total.documents),
        # extractor + candidate/attack chat calls, from the engine's counts or the server's usage
        "tokens": token_block(total.prompt_tokens + total.extract_prompt_tokens, total.tokens + total.extract_tokens,
                              total.documents, total.token_documents),
        "llm_seconds_per_document": _rate(total.llm_seconds, total.documents),
        "seconds_per_document": _rate(total.seconds, total.documents),
        "reconciliation": reconcile(cfg),
        "run": run,
    }


def reconcile(cfg: GeneralizeJobConfig) -> dict[str, Any]:
    """``input_rows == generalized + failed`` over the current input files, from the written files' footers;
    a file without a done-marker for its current content is listed as uncommitted."""
    out = Path(cfg.output)
    input_rows = generalized = failed = 0
    uncommitted: list[str] = []
    for path, key in ((p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)):
        input_rows += count_rows(path)
        for name in ("generalized", "failed"):
            part = part_path(out / name, key)
            n = int(pq.ParquetFile(part).metadata.num_rows) if part.exists() else 0
            generalized, failed = (generalized + n, failed) if name == "generalized" else (generalized, failed + n)
        if _done_sha(cfg, key) != sha256_file(path):
            uncommitted.append(path.name)
    return {"input_rows": input_rows, "generalized": generalized, "failed": failed,
            "ok": input_rows == generalized + failed and not uncommitted, "uncommitted_files": sorted(uncommitted)}


def pending_files(cfg: GeneralizeJobConfig) -> tuple[list[tuple[Path, str]], int]:
    """``(path, key)`` of the input files with work to do — not yet done, changed since, or with transient
    failures to retry — and how many are done already.

    Raises :class:`spcl.io.inputs.UnsafeOutput` (a ``ValueError``) for an output or vault inside the input or
    inside a filter output folder (``spcl.io.inputs.check_job_output``)."""
    from spcl.io.inputs import check_job_output

    check_job_output([cfg.input], cfg.output)
    check_job_output([cfg.input], cfg.vault, "vault")
    keyed = [(p, file_key(p, cfg.input)) for p in list_input_files(cfg.input)]
    foreign = foreign_input(keyed, lambda k: _marker(cfg, k).get("input"))
    if foreign:
        raise JobError(f"{cfg.output} holds the results of another input file ({foreign[0]}) under the "
                       f"name of {foreign[1]}; use a new --output for a different --input")
    other = other_settings(keyed, lambda k: str(m.get("release_hash") or "") if (m := _marker(cfg, k)) else None,
                           cfg.release_hash())
    if other:  # skipping them would leave their old output under this run's settings
        raise JobError(f"{cfg.output} holds {len(other)} file(s) generalized with other generalize settings "
                       "(backend, model, types, method settings, span extractor, name finders or adapters); rerun "
                       "with the same settings or use a new --output")
    done = {k for p, k in keyed if _done_sha(cfg, k) == sha256_file(p)  # by content, not by name
            and not _marker(cfg, k).get("stats", {}).get("failed_transient")}
    return [(p, k) for p, k in keyed if k not in done], len(done)


def _marker(cfg: GeneralizeJobConfig, key: str) -> dict[str, Any]:
    """The done-marker of ``key`` (``{}``: not done; a damaged one raises ``MarkerError``)."""
    path = marker_file(Path(cfg.output) / "_done", key)
    marker = read_json_marker(path) or {}
    if marker and not isinstance(marker.get("stats", {}), dict):
        raise marker_unreadable(path)
    return marker


def _done_sha(cfg: GeneralizeJobConfig, key: str) -> str | None:
    """The input SHA-256 the done-marker of ``key`` recorded (``None``: not done)."""
    return _marker(cfg, key).get("input_sha256")


def _clean_staging(cfg: GeneralizeJobConfig) -> None:
    remove_staging(Path(cfg.output) / "_tmp", Path(cfg.vault) / "_staging")


def _write_metrics(cfg: GeneralizeJobConfig, identity: tuple[str, str, str] | None,
                   run: dict[str, Any]) -> dict[str, Any]:
    metrics = build_metrics(cfg, identity, run)
    write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
    return metrics


class GeneralizeStage(FileStage):
    """The generalize job as a stage of ``spcl.executor``: a unit is one flagged Parquet file, its worker a
    :class:`GeneralizeRunner` (extractor and chat client built once per process)."""

    config_type: ClassVar[type[GeneralizeJobConfig]] = GeneralizeJobConfig
    name: ClassVar[str] = "generalize"
    ref: ClassVar[str] = "spcl.generalize.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output", "vault")
    error: ClassVar[type[JobError]] = JobError

    def plan(self, cfg: GeneralizeJobConfig) -> Plan:
        """:func:`pending_files`."""
        todo, skipped = pending_files(cfg)
        return Plan([Unit(str(p), k) for p, k in todo], skipped)

    def before(self, cfg: GeneralizeJobConfig, plan: Plan, engine: str) -> None:
        """Clean a killed run's staging; for Spark, check the vault key on the driver first."""
        if engine == "spark":
            from spcl.mask.vault import open_vault

            open_vault(cfg.vault).close()
        _clean_staging(cfg)
        if engine == "spark":
            (Path(cfg.output) / "_done").mkdir(parents=True, exist_ok=True)

    def setup(self, cfg: GeneralizeJobConfig, clients: dict[str, Any]) -> GeneralizeRunner:
        """The runner (``clients["extractor"]``, ``clients["chat"]``: given clients, e.g. a test's)."""
        return GeneralizeRunner(cfg, clients.get("extractor"), clients.get("chat"))

    def check(self, worker: GeneralizeRunner) -> None:
        """Ask the chat client whether it can serve (the rules backend has none)."""
        if worker.chat is not None:
            worker.chat.check()

    def committed(self, worker: GeneralizeRunner, unit: Unit) -> bool:
        """This run already committed the file's current content."""
        marker = _marker(worker.cfg, unit.key)
        return marker.get("input_sha256") == sha256_file(Path(unit.path)) and (
            not marker["stats"].get("failed_transient") or marker.get("last_run") == worker.cfg.run_id)

    def progress_total(self, plan: Plan) -> int | None:
        """The rows of the files to do (from their footers)."""
        return sum(count_rows(Path(u.path)) for u in plan.todo)

    def process(self, worker: GeneralizeRunner, unit: Unit, progress: Progress | None = None) -> UnitReport:
        """Generalize one file (or retry its transient failures) and commit it."""
        worker.process_file(Path(unit.path), unit.key)
        if progress is not None:
            progress.advance(worker.asked)
        return UnitReport(unit.key, worker.asked)

    def finish(self, cfg: GeneralizeJobConfig, plan: Plan, run: RunInfo,
               worker: GeneralizeRunner | None) -> dict[str, Any]:
        """``metrics.json`` with this run's counts and speed."""
        info: dict[str, Any] = {"engine": "spark"} if run.engine == "spark" else {}
        info |= {"files_processed": run.files_processed, "files_skipped": run.files_skipped,
                 "documents": run.records, "elapsed_seconds": run.elapsed_seconds,
                 "docs_per_second": _rate(run.records, run.elapsed_seconds)}
        return _write_metrics(cfg, worker.identity if worker is not None else None, info)


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
